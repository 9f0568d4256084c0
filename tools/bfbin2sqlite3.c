/* SPDX-License-Identifier: MIT */
/*
 * bfbin2sqlite3: converts a Byfl binary output file (.byfl) to an SQLite 3 database, with
 * the options, schema and typing of Byfl's bfbin2sqlite3. A thin shell over
 * tk_bfbin_to_sqlite3().
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/bfbin_convert.h"

static const char usage_text[] =
	"Usage: bfbin2sqlite3 [OPTION]... FILE.byfl\n"
	"Convert the tables of a Byfl binary output file (.byfl) to an SQLite 3 database.\n"
	"\n"
	"  -o, --output=FILE.db     database to create (default: FILE.byfl with its extension\n"
	"                           replaced by .db); it is built as FILE.db.part and replaces\n"
	"                           FILE.db only when the conversion succeeds\n"
	"  -l, --live-data          follow an input that is still being written (a growing\n"
	"                           file or a named pipe) until its end-of-file tag; rows are\n"
	"                           committed whenever the input runs dry, so FILE.db.part can\n"
	"                           be queried meanwhile\n"
	"      --live-timeout=SECS  with -l, fail when no new data arrive for SECS seconds\n"
	"      --real-overflow      store integers above 9223372036854775807 as REAL\n"
	"                           (approximately), with a warning, as Byfl does;\n"
	"                           without it such an integer is an error\n"
	"  -h, --help               show this help and exit\n"
	"      --version            show the version and exit\n"
	"\n"
	"Each table becomes an SQLite table of the same name: integer and Boolean columns are\n"
	"INTEGER, strings TEXT. SQLite integers are signed: an integer above\n"
	"9223372036854775807 fails the conversion unless --real-overflow is given.\n"
	"Exit status: 0 on success, 1 when the input cannot be read or is malformed, holds\n"
	"an integer SQLite cannot hold, or the database cannot be written, 2 on a usage error.\n"
	"The schema is described in bfbin2sqlite3(1) (docs/bfbin2sqlite3.md).\n";

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void on_warning(void *ud, const char *msg)
{
	(void)ud;
	fprintf(stderr, "bfbin2sqlite3: %s\n", msg);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("bfbin2sqlite3: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'bfbin2sqlite3 --help' for more information.\n", stderr);
	return 2;
}

static int parse_seconds(const char *arg, unsigned *ms)
{
	char *end;
	double secs;

	errno = 0;
	secs = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !(secs > 0) || secs > 4000000.0)
		return -1;
	*ms = (unsigned)(secs * 1000.0 + 0.5);
	if (*ms == 0)
		*ms = 1;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "live-data", no_argument, NULL, 'l' },
		{ "live-timeout", required_argument, NULL, 't' },
		{ "real-overflow", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	tk_bfbin_convert cv = TK_BFBIN_CONVERT_INIT;
	const char *output = NULL, *input;
	char *default_output = NULL;
	struct sigaction sa;
	int opt, rc;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:lh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case 'l':
			cv.live_input = 1;
			break;
		case 't':
			if (parse_seconds(optarg, &cv.live_timeout_ms) != 0)
				return usage_error("--live-timeout needs a positive number of seconds, not '%s'", optarg);
			break;
		case 'R':
			cv.flags |= TK_BFBIN_REAL_OVERFLOW;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("bfbin2sqlite3 (tracekit) %s\n", tk_version());
			return 0;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind == argc)
		return usage_error("The name of a Byfl binary file must be specified");
	if (optind + 1 < argc)
		return usage_error("Only a single input file is allowed to be specified");
	input = argv[optind];
	if (output == NULL) {
		default_output = tk_bfbin_default_output(input, ".db");
		if (default_output == NULL) {
			fputs("bfbin2sqlite3: out of memory\n", stderr);
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
	cv.warning_cb = on_warning;

	rc = tk_bfbin_to_sqlite3(input, output, &cv);
	if (rc != TK_OK)
		fprintf(stderr, "bfbin2sqlite3: %s\n", cv.error);
	if (rc == TK_ERANGE)
		fputs("bfbin2sqlite3: --real-overflow stores such integers as REAL, as Byfl does\n", stderr);
	free(default_output);
	return rc == TK_OK ? 0 : 1;
}
