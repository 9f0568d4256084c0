/* SPDX-License-Identifier: MIT */
/*
 * tbrw_reader: writes every section and stream of a .tb5 file to a text .dat file
 * (docs/tbrw_reader.md), from which tbrw_writer recreates a file with the same content.
 * The VTune TBRW package's example of the same name, with a documented output format.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbrw_dat.h"
#include "tbrw_fields.h"
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
	"  -h, --help      show this help and exit\n"
	"      --version   show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 when the input cannot be read or is not a valid .tb5 file\n"
	"or the output cannot be written (nothing is then left under its name), 2 on a usage\n"
	"error. The .dat format is described in tbrw_reader(1) (docs/tbrw_reader.md).\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(TOOL ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry '" TOOL " --help' for more information.\n", stderr);
	return 2;
}

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
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in_path, *out_path, *in_name, *call = "";
	struct tbf_input input;
	tk_outfile *of = NULL;
	TBRW_PTR ptr = NULL;
	TBRW_U32 rc = VT_SUCCESS;
	FILE *out;
	int opt, status = 1, r;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf(TOOL " (tracekit) %s\n", tk_version());
			return 0;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return usage_error("expected an input .tb5 file and an output .dat file");
	in_path = argv[optind];
	out_path = argv[optind + 1];
	in_name = strcmp(in_path, "-") == 0 ? "standard input" : in_path;

	if (tbf_open_input(TOOL, in_path, &input, &ptr) != 0)
		return 1;
	r = tk_outfile_open(&of, out_path, 0);
	if (r != TK_OK) {
		fprintf(stderr, TOOL ": cannot create %s: %s\n", out_path, tk_strerror(r));
		goto done;
	}
	out = tk_outfile_stream(of);
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	errno = 0;
	if (dat_print_header(out) != 0)
		goto write_error;
	r = tbf_walk(ptr, print_item, out, &call, &rc);
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
	r = tk_outfile_commit(of);
	of = NULL;
	if (r != TK_OK) {
		fprintf(stderr, TOOL ": cannot write %s: %s\n", out_path, tk_strerror(r));
		goto done;
	}
	status = 0;
	goto done;
write_error:
	fprintf(stderr, TOOL ": error writing %s: %s\n", strcmp(out_path, "-") == 0 ? "standard output" : out_path,
		strerror(errno != 0 ? errno : EIO));
done:
	tk_outfile_abort(of);
	tbf_close_input(&input, ptr);
	return status;
}
