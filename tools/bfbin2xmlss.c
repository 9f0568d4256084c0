/* SPDX-License-Identifier: MIT */
/*
 * bfbin2xmlss: converts a Byfl binary output file (.byfl) to an Excel 2003 XML spreadsheet
 * with one worksheet per table, as Byfl's bfbin2xmlss does. A thin shell over
 * tk_bfbin_to_xmlss().
 */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/bfbin_convert.h"

static const char usage_text[] =
	"Usage: bfbin2xmlss [OPTION] FILE.byfl [OUTPUT.xml]\n"
	"Convert the tables of a Byfl binary output file (.byfl) to an Excel 2003 XML\n"
	"spreadsheet, one worksheet per table, that Excel and LibreOffice Calc open.\n"
	"\n"
	"OUTPUT.xml defaults to standard output; a file is written as OUTPUT.xml.part and\n"
	"renamed to OUTPUT.xml when complete.\n"
	"\n"
	"  -h, --help     show this help and exit\n"
	"      --version  show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 when the input cannot be read or is malformed or the\n"
	"output cannot be written, 2 on a usage error.\n"
	"The output is described in bfbin2xmlss(1) (docs/bfbin2xmlss.md).\n";

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

	fputs("bfbin2xmlss: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'bfbin2xmlss --help' for more information.\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	tk_bfbin_convert cv = TK_BFBIN_CONVERT_INIT;
	const char *input, *output = NULL;
	tk_outfile *outfile = NULL;
	struct sigaction sa;
	FILE *out = stdout;
	int opt, rc;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("bfbin2xmlss (tracekit) %s\n", tk_version());
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
	if (optind + 1 < argc)
		output = argv[optind + 1];

	if (output != NULL) {
		if (tk_bfbin_same_file(input, output)) {
			fprintf(stderr, "bfbin2xmlss: The output file %s is the input file\n", output);
			return 1;
		}
		rc = tk_outfile_open(&outfile, output, 0);
		if (rc != TK_OK) {
			fprintf(stderr, "bfbin2xmlss: Failed to open %s for writing (%s)\n", output, tk_strerror(rc));
			return 1;
		}
		out = tk_outfile_stream(outfile);
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	cv.stop = &g_stop;
	cv.output_name = output != NULL ? output : "standard output";

	rc = tk_bfbin_to_xmlss(input, out, &cv);
	if (rc != TK_OK) {
		fprintf(stderr, "bfbin2xmlss: %s\n", cv.error);
		tk_outfile_abort(outfile);
	} else if (outfile != NULL && (rc = tk_outfile_commit(outfile)) != TK_OK) {
		fprintf(stderr, "bfbin2xmlss: Failed to write %s (%s)\n", output, tk_strerror(rc));
	}
	return rc == TK_OK ? 0 : 1;
}
