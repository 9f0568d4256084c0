/* SPDX-License-Identifier: MIT */
/*
 * bfbin2sqlite3: converts a Byfl binary output file (.byfl) to an SQLite 3 database, with
 * the options, schema and typing of Byfl's bfbin2sqlite3. A thin shell over
 * tk_bfbin_to_sqlite3().
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_cli.h"
#include "tracekit/bfbin_convert.h"

static const char usage_text[] =
	"Usage: bfbin2sqlite3 [OPTION]... FILE.byfl\n"
	"Convert the tables of a Byfl binary output file (.byfl) to an SQLite 3 database.\n"
	"FILE.byfl \"-\" reads standard input (then --output is needed).\n"
	"\n"
	"  -o, --output=FILE.db     database to create (default: FILE.byfl with its extension\n"
	"                           replaced by .db); it is built as FILE.db.part and replaces\n"
	"                           FILE.db only when the conversion succeeds; \"-\" writes\n"
	"                           standard output once the database is complete\n"
	"  -l, --live-data          follow an input that is still being written (a growing\n"
	"                           file or a named pipe) until its end-of-file tag; rows are\n"
	"                           committed whenever the input runs dry, so FILE.db.part can\n"
	"                           be queried meanwhile\n"
	"      --live-timeout=SECS  with -l, fail when no new data arrive for SECS seconds\n"
	"      --real-overflow      store integers above 9223372036854775807 as REAL\n"
	"                           (approximately), with a warning, as Byfl does;\n"
	"                           without it such an integer is an error\n"
	"  -q, --quiet              no progress line on a terminal for large inputs\n"
	"  -h, --help               show this help and exit\n"
	"      --version            show the version and exit\n"
	"\n"
	"Each table becomes an SQLite table of the same name: integer and Boolean columns are\n"
	"INTEGER, strings TEXT. SQLite integers are signed: an integer above\n"
	"9223372036854775807 fails the conversion unless --real-overflow is given.\n"
	"Exit status: 0 on success, 1 when the input cannot be read or is malformed, holds\n"
	"an integer SQLite cannot hold, or the database cannot be written, 2 on a usage error.\n"
	"The schema is described in bfbin2sqlite3(1) (docs/bfbin2sqlite3.md).\n";

static void on_warning(void *ud, const char *msg)
{
	(void)ud;
	fprintf(stderr, "bfbin2sqlite3: %s\n", msg);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "live-data", no_argument, NULL, 'l' },
		{ "live-timeout", required_argument, NULL, 't' },
		{ "real-overflow", no_argument, NULL, 'R' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	tk_bfbin_convert cv = TK_BFBIN_CONVERT_INIT;
	const char *output = NULL, *input;
	char *default_output = NULL;
	struct tktool_progress progress = { 0 };
	struct tktool_stdout_stage stage;
	int staged = 0;
	const char *in_open, *out_open;
	int opt, rc;

	tktool_init("bfbin2sqlite3");
	/*
	 * From the start to the end: a SIGINT at any moment (before the conversion, while
	 * it commits) stops the tool through tktool_stop and never kills it with the
	 * default action, which would leave the partial database behind.
	 */
	tktool_catch_signals(TKTOOL_SIGNAL_STOP);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:lqh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case 'l':
			cv.live_input = 1;
			break;
		case 't':
			if (tktool_parse_seconds(optarg, &cv.live_timeout_ms) != 0)
				return tktool_usage_error("--live-timeout needs a positive number of seconds, not '%s'", optarg);
			break;
		case 'R':
			cv.flags |= TK_BFBIN_REAL_OVERFLOW;
			break;
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
	if (optind == argc)
		return tktool_usage_error("The name of a Byfl binary file must be specified");
	if (optind + 1 < argc)
		return tktool_usage_error("Only a single input file is allowed to be specified");
	input = argv[optind];
	if (output == NULL && strcmp(input, "-") == 0)
		return tktool_usage_error("Reading standard input needs --output (\"-\" for standard output)");
	if (output == NULL) {
		default_output = tk_bfbin_default_output(input, ".db");
		if (default_output == NULL) {
			fputs("bfbin2sqlite3: out of memory\n", stderr);
			return 1;
		}
		output = default_output;
	}

	in_open = strcmp(input, "-") == 0 ? "/dev/stdin" : input;
	out_open = output;
	if (strcmp(output, "-") == 0) {
		/* written with seeks: built in a directory only we can enter, then copied */
		if (tktool_stdout_stage_begin(&stage, "out.db") != 0) {
			fprintf(stderr, "bfbin2sqlite3: Failed to create a temporary directory (%s)\n", strerror(errno));
			free(default_output);
			return 1;
		}
		staged = 1;
		out_open = stage.path;
	} else if (tk_same_file(input, output)) {
		fprintf(stderr, "bfbin2sqlite3: The output file %s is the input file\n", output);
		free(default_output);
		return 1;
	}

	cv.stop = &tktool_stop;
	cv.progress_cb = tktool_progress_bytes;
	cv.user_data = &progress;
	cv.temp_cb = tktool_temp_cb; /* a second signal removes the partial file too */
	cv.warning_cb = on_warning;

	rc = tk_bfbin_to_sqlite3(in_open, out_open, &cv);
	tktool_progress_end(&progress);
	if (rc != TK_OK)
		fprintf(stderr, "bfbin2sqlite3: %s\n", cv.error);
	if (rc == TK_ERANGE)
		fputs("bfbin2sqlite3: --real-overflow stores such integers as REAL, as Byfl does\n", stderr);
	if (staged && tktool_stdout_stage_end(&stage, rc == TK_OK) != 0) {
		fprintf(stderr, "bfbin2sqlite3: Failed to write standard output (%s)\n", strerror(errno));
		rc = TK_EIO;
	}
	free(default_output);
	return rc == TK_OK ? 0 : 1;
}
