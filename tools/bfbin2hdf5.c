/* SPDX-License-Identifier: MIT */
/*
 * bfbin2hdf5: converts a Byfl binary output file (.byfl) to an HDF5 file with one
 * extendible compound dataset per table, as Byfl's bfbin2hdf5 does. A thin shell over
 * tk_bfbin_to_hdf5().
 */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/bfbin_convert.h"

static const char usage_text[] =
	"Usage: bfbin2hdf5 [OPTION]... FILE.byfl [OUTPUT.h5]\n"
	"Convert the tables of a Byfl binary output file (.byfl) to an HDF5 file: one dataset\n"
	"per table in the root group, named as the table, of a compound type with one member\n"
	"per column (uint64, variable-length string, or an enum No/Yes for Booleans).\n"
	"\n"
	"OUTPUT.h5 defaults to FILE.byfl with its extension replaced by .h5. It is built as\n"
	"OUTPUT.h5.part and replaces OUTPUT.h5 only when the conversion succeeds.\n"
	"\n"
	"  -c, --compress=LEVEL  deflate level of the datasets, 0 (none) to 9 (default 1;\n"
	"                        Byfl's bfbin2hdf5 uses 9, several times slower)\n"
	"  -h, --help            show this help and exit\n"
	"      --version         show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 when the input cannot be read or is malformed, holds a\n"
	"table name HDF5 cannot hold (with '/', duplicated) or the output cannot be written,\n"
	"2 on a usage error. The layout is described in bfbin2hdf5(1) (docs/bfbin2hdf5.md).\n";

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("bfbin2hdf5: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'bfbin2hdf5 --help' for more information.\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "compress", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	tk_bfbin_convert cv = TK_BFBIN_CONVERT_INIT;
	const char *input, *output;
	char *default_output = NULL;
	struct sigaction sa;
	int opt, rc;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			if (optarg[0] < '0' || optarg[0] > '9' || optarg[1] != '\0')
				return usage_error("invalid compression level '%s' (0 to 9)", optarg);
			cv.hdf5_level = optarg[0] - '0';
			break;
		case ':':
			return usage_error("option '%s' requires an argument", argv[optind - 1]);
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("bfbin2hdf5 (tracekit) %s\n", tk_version());
			return 0;
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage_error("The name of a Byfl binary file must be specified");
	if (argc - optind > 2)
		return usage_error("Only a single input file and single output file are allowed to be specified");
	input = argv[optind];
	if (optind + 1 < argc) {
		output = argv[optind + 1];
	} else {
		default_output = tk_bfbin_default_output(input, ".h5");
		if (default_output == NULL) {
			fputs("bfbin2hdf5: out of memory\n", stderr);
			return 1;
		}
		output = default_output;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	cv.stop = &g_stop;

	rc = tk_bfbin_to_hdf5(input, output, &cv);
	if (rc != TK_OK)
		fprintf(stderr, "bfbin2hdf5: %s\n", cv.error);
	free(default_output);
	return rc == TK_OK ? 0 : 1;
}
