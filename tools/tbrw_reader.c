/* SPDX-License-Identifier: MIT */
/*
 * tbrw_reader: writes every section and stream of a .tb5 file to a text .dat file
 * (docs/tbrw_reader.md), from which tbrw_writer recreates a file with the same content.
 * The VTune TBRW package's example of the same name, with a documented output format.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbrw_dat.h"
#include "tbrw_fields.h"
#include "tool_cli.h"
#include "tracekit/common.h"

#define TOOL "tbrw_reader"

static const char usage_text[] =
	"Usage: " TOOL " [OPTION]... FILE.tb5 OUTPUT.dat\n"
	"Write the whole content of a .tb5 file (every section, stream and data record) to a\n"
	"text .dat file, from which tbrw_writer recreates the file.\n"
	"\n"
	"  FILE.tb5     the file to read; \"-\" reads standard input\n"
	"  OUTPUT.dat   the text file to write; \"-\" writes standard output\n"
	"\n"
	"  -q, --quiet     no progress line on a terminal for large files\n"
	"  -h, --help      show this help and exit\n"
	"      --version   show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 when the input cannot be read or is not a valid .tb5 file\n"
	"or the output cannot be written (nothing is then left under its name), 2 on a usage\n"
	"error. The .dat format is described in tbrw_reader(1) (docs/tbrw_reader.md).\n";

/* print_item's value when the output cannot be written: positive, as tbf_walk() keeps -1 for
 * a failed TBRW call; the cause is kept in output_errno (later calls may change errno). */
#define OUTPUT_FAILED 1
static int output_errno;

/* Prints each item as its .dat line. */
static int print_item(void *ud, const struct dat_item *it)
{
	FILE *out = ud;
	int r = 0;

	switch (it->type) {
	case DAT_SECTION_BEGIN:
		r = dat_print_section(out, it->section);
		break;
	case DAT_STREAM_BEGIN:
		r = dat_print_stream(out, it->stream);
		break;
	case DAT_SECTION_END:
	case DAT_STREAM_END:
		r = dat_print_end(out);
		break;
	case DAT_RECORD:
		if (it->kind == DAT_K_record || it->kind == DAT_K_bytes)
			r = dat_print_hex(out, it->kind, it->bytes, it->n_bytes);
		else
			r = dat_print_values(out, it->kind, it->values);
		break;
	}
	if (r == 0)
		return 0;
	output_errno = errno != 0 ? errno : EIO;
	return OUTPUT_FAILED;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in_path, *out_path, *in_name, *call = "";
	struct tktool_output output = { NULL, NULL, -1 };
	struct tktool_progress progress;
	struct tbf_input input;
	TBRW_PTR ptr = NULL;
	TBRW_U32 rc = VT_SUCCESS;
	FILE *out;
	int opt, status = 1, r;

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
		return tktool_usage_error("expected an input .tb5 file and an output .dat file");
	in_path = argv[optind];
	out_path = argv[optind + 1];
	in_name = tktool_in_name(in_path);
	if (tktool_refuse_same_file(in_path, out_path))
		return 1;
	/* Ctrl-C: the temporaries (the output's, a copy of standard input) go with the process. */
	tktool_catch_signals(TKTOOL_SIGNAL_EXIT);

	if (tbf_open_input(TOOL, in_path, &input, &ptr) != 0)
		return 1;
	if (tktool_output_open(&output, out_path, 0) != 0)
		goto done;
	out = tktool_output_stream(&output);
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	errno = 0;
	if (dat_print_header(out) != 0)
		goto write_error;
	tktool_progress_begin(&progress, "reading", tktool_file_size(in_path));
	tbf_walk_progress(&progress);
	r = tbf_walk(ptr, print_item, out, &call, &rc);
	tbf_walk_progress(NULL);
	tktool_progress_end(&progress);
	if (r == -1) {
		tbf_report(TOOL, in_name, ptr, call, rc);
		goto done;
	}
	if (r == OUTPUT_FAILED) {
		errno = output_errno;
		goto write_error;
	}
	errno = 0;
	if (r != 0 || fflush(out) != 0 || ferror(out))
		goto write_error;
	if (tktool_output_commit(&output) != 0)
		goto done;
	status = 0;
	goto done;
write_error:
	fprintf(stderr, TOOL ": error writing %s: %s\n", tktool_out_name(out_path), strerror(errno != 0 ? errno : EIO));
done:
	tktool_output_abort(&output);
	tbf_close_input(&input, ptr);
	return status;
}
