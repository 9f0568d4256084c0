/* SPDX-License-Identifier: MIT */
/*
 * tbrw_writer: writes a .tb5 file from the text .dat file that tbrw_reader writes (format in
 * docs/tbrw_reader.md), through the TBRW API, as the VTune TBRW package's tbrw_writer
 * example does. The options and the files; the .dat to TBRW calls are tools/lib/tbrw_load.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbrw_fields.h"
#include "tbrw_load.h"
#include "tool_cli.h"
#include "tracekit/common.h"

static const char usage_text[] =
	"Usage: tbrw_writer [OPTION]... INPUT.dat OUTPUT.tb5\n"
	"Write a .tb5 file with the content of a .dat file written by tbrw_reader (or by hand).\n"
	"\n"
	"  INPUT.dat    the text file; \"-\" reads standard input\n"
	"  OUTPUT.tb5   the file to create (replaced if it exists); \"-\" writes standard output\n"
	"\n"
	"  -q, --quiet     no progress line on a terminal for large files\n"
	"  -h, --help      show this help and exit\n"
	"      --version   show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 when the input is malformed (the message names its line) or\n"
	"the output cannot be written (nothing is then left under its name), 2 on a usage error.\n"
	"The .dat format is described in tbrw_reader(1) (docs/tbrw_reader.md).\n";

#define TOOL "tbrw_writer"

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	TBRW_PTR ptr = NULL;
	const char *in_name, *out_name;
	char tmp_dir[4096] = "", tmp_path[4200];
	const char *in_path, *out_path, *tb5_path;
	TBRW_CHAR *wide = NULL;
	FILE *in = NULL;
	TBRW_U32 rc;
	int opt, status = 1, to_stdout, dir_slot = -1;

	tktool_init(TOOL);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'q':
			tktool_quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			return tktool_version(NULL);
		case ':':
			return tktool_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return tktool_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return tktool_usage_error("expected an input .dat file and an output .tb5 file");
	in_path = argv[optind];
	out_path = argv[optind + 1];
	in_name = tktool_in_name(in_path);
	out_name = tktool_out_name(out_path);
	if (tktool_refuse_same_file(in_path, out_path))
		return 1;

	in = strcmp(in_path, "-") == 0 ? stdin : fopen(in_path, "r");
	if (in == NULL) {
		fprintf(stderr, TOOL ": %s: %s\n", in_path, strerror(errno));
		return 1;
	}
	/*
	 * Ctrl-C stops at the next line, and the library removes its temporary (a second
	 * Ctrl-C ends the process at once, removing the private directory of a standard output).
	 */
	tktool_catch_signals(TKTOOL_SIGNAL_STOP);
	/*
	 * A .tb5 file is written with seeks, and TBRW_open would replace a device node with a
	 * file: standard output, a device or a FIFO gets a copy of a file built in a directory
	 * only we can enter.
	 */
	to_stdout = tktool_needs_copy(out_path);
	tb5_path = out_path;
	if (to_stdout) {
		if (tktool_private_dir_registered(tmp_dir, sizeof(tmp_dir), &dir_slot) != 0) {
			tmp_dir[0] = '\0';
			fprintf(stderr, TOOL ": %s: cannot create a temporary directory in %s (TMPDIR): %s\n", out_name,
				tk_tmpdir(), strerror(errno));
			goto done;
		}
		snprintf(tmp_path, sizeof(tmp_path), "%s/out.tb5", tmp_dir);
		tb5_path = tmp_path;
	}
	wide = tbf_wide_path(tb5_path);
	if (wide == NULL) {
		fprintf(stderr, TOOL ": %s: the name is not valid UTF-8\n", out_path);
		goto done;
	}
	rc = TBRW_open(&ptr, wide, TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS);
	if (rc != VT_SUCCESS) {
		tbf_report(TOOL, out_name, NULL, "cannot create", rc);
		goto done;
	}
	if (tbf_load_dat(in, ptr, in_name, out_name, tktool_file_size(in_path)) != 0) {
		TBRW_abort_cleanup_and_close(ptr);
		goto done;
	}
	rc = TBRW_close(ptr);
	if (rc != VT_SUCCESS) {
		tbf_report(TOOL, out_name, NULL, "TBRW_close", rc);
		goto done;
	}
	if (to_stdout && tktool_copy_file(tmp_path, out_path) != 0) {
		if (tktool_stop) /* waiting for a reader of a FIFO */
			fprintf(stderr, TOOL ": %s: interrupted\n", out_name);
		else
			fprintf(stderr, TOOL ": %s: cannot write: %s\n", out_name, strerror(errno));
		goto done;
	}
	status = 0;
done:
	if (tmp_dir[0] != '\0') {
		tktool_private_dir_remove(tmp_dir);
		tktool_cleanup_forget(dir_slot);
	}
	if (in != NULL && in != stdin)
		fclose(in);
	free(wide);
	return status;
}
