/* SPDX-License-Identifier: MIT */
/*
 * bfbin2xmlss: converts a Byfl binary output file (.byfl) to an Excel 2003 XML spreadsheet
 * with one worksheet per table, as Byfl's bfbin2xmlss does. A thin shell over
 * tk_bfbin_to_xmlss().
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_cli.h"
#include "tracekit/bfbin_convert.h"

static const char usage_text[] =
	"Usage: bfbin2xmlss [OPTION] FILE.byfl [OUTPUT.xml]\n"
	"Convert the tables of a Byfl binary output file (.byfl) to an Excel 2003 XML\n"
	"spreadsheet, one worksheet per table, that Excel and LibreOffice Calc open.\n"
	"\n"
	"OUTPUT.xml defaults to standard output (also \"-\"), which gets the document only once\n"
	"it is complete; a file is written as OUTPUT.xml.part and renamed to OUTPUT.xml when\n"
	"complete. FILE.byfl \"-\" reads standard input.\n"
	"\n"
	"  -q, --quiet    no progress line on a terminal for large inputs\n"
	"  -h, --help     show this help and exit\n"
	"      --version  show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 when the input cannot be read or is malformed or the\n"
	"output cannot be written, 2 on a usage error.\n"
	"The output is described in bfbin2xmlss(1) (docs/bfbin2xmlss.md).\n";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	tk_bfbin_convert cv = TK_BFBIN_CONVERT_INIT;
	struct tktool_output outfile = { NULL, NULL, -1 };
	struct tktool_progress progress = { 0 };
	const char *input, *in_open, *output = NULL;
	FILE *out;
	int opt, rc;

	tktool_init("bfbin2xmlss");
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
		default:
			return tktool_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return tktool_usage_error("The name of a Byfl binary file must be specified");
	if (argc - optind > 2)
		return tktool_usage_error("Only a single input file and single output file are allowed to be specified");
	input = argv[optind];
	in_open = strcmp(input, "-") == 0 ? "/dev/stdin" : input;
	if (optind + 1 < argc && strcmp(argv[optind + 1], "-") != 0)
		output = argv[optind + 1];

	if (output != NULL) {
		if (tk_same_file(input, output)) {
			fprintf(stderr, "bfbin2xmlss: The output file %s is the input file\n", output);
			return 1;
		}
		rc = tktool_output_create(&outfile, output, 0);
		if (rc != TK_OK) {
			fprintf(stderr, "bfbin2xmlss: Failed to open %s for writing (%s)\n", output, tk_strerror(rc));
			return 1;
		}
		out = tktool_output_stream(&outfile);
	} else {
		/* Standard output shows the document only once it is complete (nothing half-written). */
		out = tktool_stdout_buffer();
		if (out == NULL) {
			fprintf(stderr, "bfbin2xmlss: Failed to create a temporary file in %s (TMPDIR): %s\n", tk_tmpdir(),
				strerror(errno));
			return 1;
		}
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);

	tktool_catch_signals(TKTOOL_SIGNAL_STOP);
	cv.stop = &tktool_stop;
	cv.progress_cb = tktool_progress_bytes;
	cv.user_data = &progress;
	cv.output_name = output != NULL ? output : "standard output";

	rc = tk_bfbin_to_xmlss(in_open, out, &cv);
	tktool_progress_end(&progress);
	if (rc != TK_OK) {
		fprintf(stderr, "bfbin2xmlss: %s\n", cv.error);
		if (output != NULL)
			tktool_output_abort(&outfile);
		else
			fclose(out);
	} else if (output != NULL) {
		if ((rc = tktool_output_finish(&outfile)) != TK_OK)
			fprintf(stderr, "bfbin2xmlss: Failed to write %s (%s)\n", output, tk_strerror(rc));
	} else if (tktool_stdout_deliver(out) != 0) {
		rc = tk_error_from_errno(errno);
		fprintf(stderr, "bfbin2xmlss: Failed to write standard output (%s)\n", strerror(errno));
	}
	return rc == TK_OK ? 0 : 1;
}
