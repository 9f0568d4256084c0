/* SPDX-License-Identifier: MIT */
/*
 * bfbin2csv: converts a Byfl binary output file (.byfl) to comma-separated values, with
 * the options and output of Byfl's bfbin2csv. A thin shell over tk_bfbin_to_csv().
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_cli.h"
#include "tracekit/bfbin_convert.h"

static const char usage_text[] =
	"Usage: bfbin2csv [OPTION]... FILE.byfl\n"
	"Convert the tables of a Byfl binary output file (.byfl) to comma-separated values.\n"
	"FILE.byfl \"-\" reads standard input.\n"
	"\n"
	"  -o, --output=FILE        write to FILE instead of standard output (also \"-\")\n"
	"  -c, --colsep=STRING      separate columns with STRING instead of a comma;\n"
	"                           \\t, \\n, \\r, \\\\, \\' and \\\" are expanded\n"
	"  -i, --include=TABLE      convert only the table named TABLE (repeatable)\n"
	"  -e, --exclude=TABLE      convert every table but TABLE (repeatable)\n"
	"  -T, --no-table-names     omit the line with each table's name\n"
	"  -C, --no-column-names    omit the line with each table's column names\n"
	"  -D, --no-data            omit the data rows\n"
	"  -f, --flat-output        one line per value: \"Table\",row,\"Column\",value\n"
	"  -l, --live-data          follow an input that is still being written (a growing\n"
	"                           file or a named pipe) until its end-of-file tag\n"
	"      --live-timeout=SECS  with -l, fail when no new data arrive for SECS seconds\n"
	"  -q, --quiet              no progress line on a terminal for large inputs\n"
	"  -h, --help               show this help and exit\n"
	"      --version            show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 when the input cannot be read or is malformed or the\n"
	"output cannot be written (with -o nothing is left under that name), 2 on a usage error.\n"
	"The output format is described in bfbin2csv(1) (docs/bfbin2csv.md).\n";

static void on_warning(void *ud, const char *msg)
{
	(void)ud;
	fprintf(stderr, "bfbin2csv: %s\n", msg);
}

/* Expands the escapes Byfl's bfbin2csv accepts in --colsep. Returns 0 or -1. */
static int expand_escapes(const char *in, char *out)
{
	const char *p;

	for (p = in; *p != '\0'; p++) {
		if (*p != '\\') {
			*out++ = *p;
			continue;
		}
		switch (*++p) {
		case '\\':
		case '\'':
		case '"':
			*out++ = *p;
			break;
		case 't':
			*out++ = '\t';
			break;
		case 'n':
			*out++ = '\n';
			break;
		case 'r':
			*out++ = '\r';
			break;
		default:
			if (*p == '\0')
				fprintf(stderr, "bfbin2csv: Incomplete escape sequence at the end of \"%s\"\n", in);
			else
				fprintf(stderr, "bfbin2csv: Unrecognized escape sequence \"\\%c\" in \"%s\"\n", *p, in);
			return -1;
		}
	}
	*out = '\0';
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "colsep", required_argument, NULL, 'c' },
		{ "include", required_argument, NULL, 'i' },
		{ "exclude", required_argument, NULL, 'e' },
		{ "no-table-names", no_argument, NULL, 'T' },
		{ "no-column-names", no_argument, NULL, 'C' },
		{ "no-data", no_argument, NULL, 'D' },
		{ "flat-output", no_argument, NULL, 'f' },
		{ "live-data", no_argument, NULL, 'l' },
		{ "live-timeout", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	tk_bfbin_csv_options csv = TK_BFBIN_CSV_OPTIONS_INIT;
	tk_bfbin_convert cv = TK_BFBIN_CONVERT_INIT;
	const char *output = NULL, *input;
	const char **include, **exclude;
	char *colsep = NULL;
	struct tktool_output outfile = { NULL, NULL, -1 };
	const char *in_open;
	struct tktool_progress progress = { 0 };
	FILE *out = stdout;
	int opt, rc, status = 1;

	include = calloc((size_t)argc, sizeof(*include));
	exclude = calloc((size_t)argc, sizeof(*exclude));
	if (include == NULL || exclude == NULL) {
		fputs("bfbin2csv: out of memory\n", stderr);
		goto done;
	}
	tktool_init("bfbin2csv");
	opterr = 0; /* our own messages: they name the program, not the path it ran from */
	while ((opt = getopt_long(argc, argv, ":o:c:i:e:TCDflqh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case 'c':
			free(colsep);
			colsep = malloc(strlen(optarg) + 1);
			if (colsep == NULL) {
				fputs("bfbin2csv: out of memory\n", stderr);
				goto done;
			}
			if (expand_escapes(optarg, colsep) != 0) {
				status = 2;
				goto done;
			}
			break;
		case 'i':
			include[csv.n_include++] = optarg;
			break;
		case 'e':
			exclude[csv.n_exclude++] = optarg;
			break;
		case 'T':
			csv.flags |= TK_BFBIN_CSV_NO_TABLE_NAMES;
			break;
		case 'C':
			csv.flags |= TK_BFBIN_CSV_NO_COLUMN_NAMES;
			break;
		case 'D':
			csv.flags |= TK_BFBIN_CSV_NO_DATA;
			break;
		case 'f':
			csv.flags |= TK_BFBIN_CSV_FLAT;
			break;
		case 'l':
			cv.live_input = 1;
			break;
		case 't':
			if (tktool_parse_seconds(optarg, &cv.live_timeout_ms) != 0) {
				status = tktool_usage_error("--live-timeout needs a positive number of seconds, not '%s'", optarg);
				goto done;
			}
			break;
		case 'q':
			tktool_quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			status = 0;
			goto done;
		case 'V':
			status = tktool_version(NULL);
			goto done;
		case ':':
			status = tktool_usage_error("option '%s' needs an argument", argv[optind - 1]);
			goto done;
		default:
			status = tktool_usage_error("unknown option '%s'", argv[optind - 1]);
			goto done;
		}
	}
	if (optind == argc) {
		status = tktool_usage_error("The name of a Byfl binary file must be specified");
		goto done;
	}
	if (optind + 1 < argc) {
		status = tktool_usage_error("Only a single input file is allowed to be specified");
		goto done;
	}
	if (csv.n_include > 0 && csv.n_exclude > 0) {
		status = tktool_usage_error("Only one of --include (-i) and --exclude (-e) may be specified");
		goto done;
	}
	input = argv[optind];
	csv.include = include;
	csv.exclude = exclude;
	csv.colsep = colsep;

	in_open = strcmp(input, "-") == 0 ? "/dev/stdin" : input;
	if (output != NULL) {
		if (tk_same_file(input, output)) {
			fprintf(stderr, "bfbin2csv: The output file %s is the input file\n", output);
			goto done;
		}
		rc = tktool_output_create(&outfile, output, 0);
		if (rc != TK_OK) {
			fprintf(stderr, "bfbin2csv: Failed to open %s for writing (%s)\n", output, tk_strerror(rc));
			goto done;
		}
		out = tktool_output_stream(&outfile);
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);

	/* Interrupted: stop cleanly, so no partial file is left behind. */
	tktool_catch_signals(TKTOOL_SIGNAL_STOP);
	cv.stop = &tktool_stop;
	cv.progress_cb = tktool_progress_bytes;
	cv.user_data = &progress;
	cv.output_name = output != NULL ? output : "standard output";
	cv.warning_cb = on_warning;

	rc = tk_bfbin_to_csv(in_open, out, &csv, &cv);
	tktool_progress_end(&progress);
	if (rc != TK_OK) {
		fprintf(stderr, "bfbin2csv: %s\n", cv.error);
		tktool_output_abort(&outfile);
	} else if (output != NULL && (rc = tktool_output_finish(&outfile)) != TK_OK) {
		fprintf(stderr, "bfbin2csv: Failed to write %s (%s)\n", output, tk_strerror(rc));
	} else {
		status = 0;
	}
done:
	free(colsep);
	free(include);
	free(exclude);
	return status;
}
