/* SPDX-License-Identifier: MIT */
/*
 * bfbin2hdf5: converts a Byfl binary output file (.byfl) to an HDF5 file with one
 * extendible compound dataset per table, as Byfl's bfbin2hdf5 does. A thin shell over
 * tk_bfbin_to_hdf5().
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_cli.h"
#include "tracekit/bfbin_convert.h"

static const char usage_text[] =
	"Usage: bfbin2hdf5 [OPTION]... FILE.byfl [OUTPUT.h5]\n"
	"Convert the tables of a Byfl binary output file (.byfl) to an HDF5 file: one dataset\n"
	"per table in the root group, named as the table, of a compound type with one member\n"
	"per column (uint64, variable-length string, or an enum No/Yes for Booleans).\n"
	"\n"
	"OUTPUT.h5 defaults to FILE.byfl with its extension replaced by .h5. It is built as\n"
	"OUTPUT.h5.part and replaces OUTPUT.h5 only when the conversion succeeds. \"-\" as\n"
	"FILE.byfl reads standard input (OUTPUT.h5 must then be given), as OUTPUT.h5 writes\n"
	"standard output once the file is complete.\n"
	"\n"
	"  -c, --compress=LEVEL  deflate level of the datasets, 0 (none) to 9 (default 1;\n"
	"                        Byfl's bfbin2hdf5 uses 9, several times slower)\n"
	"  -q, --quiet           no progress line on a terminal for large inputs\n"
	"  -h, --help            show this help and exit\n"
	"      --version         show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 when the input cannot be read or is malformed, holds a\n"
	"table name HDF5 cannot hold (with '/', duplicated) or the output cannot be written,\n"
	"2 on a usage error. The layout is described in bfbin2hdf5(1) (docs/bfbin2hdf5.md).\n";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "compress", required_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	tk_bfbin_convert cv = TK_BFBIN_CONVERT_INIT;
	const char *input, *output;
	char *default_output = NULL;
	struct tktool_progress progress = { 0 };
	struct tktool_stdout_stage stage;
	int staged = 0;
	const char *in_open, *out_open;
	int opt, rc;

	tktool_init("bfbin2hdf5");
	/*
	 * From the start to the end: a SIGINT at any moment (before the conversion, while
	 * it commits) stops the tool through tktool_stop and never kills it with the
	 * default action, which would leave the partial database behind.
	 */
	tktool_catch_signals(TKTOOL_SIGNAL_STOP);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (optarg[0] < '0' || optarg[0] > '9' || optarg[1] != '\0')
				return tktool_usage_error("invalid compression level '%s' (0 to 9)", optarg);
			cv.hdf5_level = optarg[0] - '0';
			break;
		case ':':
			return tktool_usage_error("option '%s' requires an argument", argv[optind - 1]);
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
	if (optind + 1 < argc) {
		output = argv[optind + 1];
	} else if (strcmp(input, "-") == 0) {
		return tktool_usage_error("Reading standard input needs an output file name (\"-\" for standard output)");
	} else {
		default_output = tk_bfbin_default_output(input, ".h5");
		if (default_output == NULL) {
			fputs("bfbin2hdf5: out of memory\n", stderr);
			return 1;
		}
		output = default_output;
	}

	in_open = strcmp(input, "-") == 0 ? "/dev/stdin" : input;
	out_open = output;
	if (strcmp(output, "-") == 0) {
		/* written with seeks: built in a directory only we can enter, then copied */
		if (tktool_stdout_stage_begin(&stage, "out.h5") != 0) {
			fprintf(stderr, "bfbin2hdf5: Failed to create a temporary directory (%s)\n", strerror(errno));
			free(default_output);
			return 1;
		}
		staged = 1;
		out_open = stage.path;
	} else if (tk_same_file(input, output)) {
		fprintf(stderr, "bfbin2hdf5: The output file %s is the input file\n", output);
		free(default_output);
		return 1;
	}

	cv.stop = &tktool_stop;
	cv.progress_cb = tktool_progress_bytes;
	cv.user_data = &progress;
	cv.temp_cb = tktool_temp_cb; /* a second signal removes the partial file too */

	rc = tk_bfbin_to_hdf5(in_open, out_open, &cv);
	tktool_progress_end(&progress);
	if (rc != TK_OK)
		fprintf(stderr, "bfbin2hdf5: %s\n", cv.error);
	if (staged && tktool_stdout_stage_end(&stage, rc == TK_OK) != 0) {
		fprintf(stderr, "bfbin2hdf5: Failed to write standard output (%s)\n", strerror(errno));
		rc = TK_EIO;
	}
	free(default_output);
	return rc == TK_OK ? 0 : 1;
}
