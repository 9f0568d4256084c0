/* SPDX-License-Identifier: MIT */
/*
 * tracekit: one command for the trace tools, in the style of git and perf (docs/tracekit.md):
 *   tracekit record ARGS...       tracelogger (run from beside this program)
 *   tracekit print ARGS...        traceprinter (run from beside this program)
 *   tracekit convert IN OUT       Chrome JSON or Perfetto, by OUT's extension or --to
 *   tracekit stats FILE           statistics: text, CSV or JSON
 *   tracekit info FILE            header, time span, event counts, threads
 *   tracekit help [COMMAND]       the manual page
 * The classic tool names stay; this only gathers them.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracekit/export.h>
#include <tracekit/traceparser.h>

#include "tool_cli.h"

#define SPEC_MAX 8192

/* convert: function slices named by symbols (--symbols, the default; --no-symbols) */
static unsigned export_flags = TK_EXPORT_SYMBOLS;

static const char usage_text[] =
	"Usage: tracekit COMMAND [ARGS]\n"
	"One command for tracekit's trace tools.\n"
	"\n"
	"Commands:\n"
	"  record [OPTIONS] [-- COMMAND [ARG]...]\n"
	"                             record a .kev trace of a command, processes or the whole\n"
	"                             system (tracelogger; tracekit record --help: its options)\n"
	"  print [OPTIONS] FILE       print the events of a .kev trace (traceprinter)\n"
	"  convert [OPTIONS] IN OUT   export IN for trace viewers: OUT.json is Chrome trace-event\n"
	"                             JSON, OUT.pftrace Perfetto's protobuf format, OUT.db an\n"
	"                             SQLite database; --to=csv: IN's VTune CSV data into the\n"
	"                             directory OUT; IN.csv to OUT.kev or OUT.tb5 (tracecsv);\n"
	"                             IN.byfl to .csv, .db, .xml, .cgrind or .h5 (bfbin2*)\n"
	"  stats [OPTIONS] FILE       statistics per thread, process, class and event, user\n"
	"                             intervals and kernel calls\n"
	"  info FILE                  header, time span, event counts and threads\n"
	"  help [COMMAND]             the manual page of tracekit or of a command\n"
	"\n"
	"Options of convert and stats:\n"
	"  --pair=BEGIN:END[=NAME]    USER events BEGIN and END open and close a slice NAME\n"
	"  --counter=CODE[=NAME]      USER event CODE carries a counter value (d0 low, d1 high)\n"
	"  -o, --output=FILE          output file of stats ('-': standard output, the default)\n"
	"  --to=json|perfetto|sqlite|csv\n"
	"                             format of convert's OUT whatever its name ('-' needs it);\n"
	"                             an extension of OUT names it too (--to=pftrace, --to=db)\n"
	"  --format=text|csv|json     format of stats (default text)\n"
	"  --symbols, --no-symbols    convert: function slices named by the functions the\n"
	"                             trace's mappings resolve them to (the default), or by\n"
	"                             their addresses\n"
	"\n"
	"  -h, --help                 this help; tracekit help COMMAND shows a command's manual\n"
	"  -V, --version              version\n";

/* The directory this program lives in ("" when it cannot be told). */
static void self_dir(char *dir, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", dir, cap - 1);
	if (n <= 0) {
		dir[0] = '\0';
		return;
	}
	dir[n] = '\0';
	char *slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	else
		dir[0] = '\0';
}

/* tracekit record / print: tracelogger or traceprinter from beside tracekit (the build tree, the
 * install's bin/), else from PATH, with the arguments after the command as they are. */
static int run_tool(const char *tool, char **argv)
{
	char path[PATH_MAX + 32];
	char dir[PATH_MAX];

	self_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir[0] ? dir : ".", tool);
	argv[0] = (char *)tool;
	fflush(NULL);
	if (access(path, X_OK) == 0)
		execv(path, argv);
	execvp(tool, argv); /* not beside us: from PATH */
	tktool_error(NULL, "cannot run %s (%s, or from PATH): %s", tool, path, strerror(errno));
	return 1;
}

/* Appends ",item" to a comma-separated spec. Returns 0, or 2 (usage error) when too long. */
static int spec_add(char *spec, const char *item, const char *what)
{
	size_t n = strlen(spec), items = n > 0;
	for (size_t i = 0; i < n; i++)
		items += spec[i] == ',';
	if (items >= TK_EXPORT_MAX_PAIRS) /* the library's limit, said before any work */
		return tktool_usage_error("more than %d %s options", TK_EXPORT_MAX_PAIRS, what);
	if (n + strlen(item) + 2 > SPEC_MAX)
		return tktool_usage_error("too many %s declarations", what);
	if (n > 0)
		spec[n++] = ',';
	strcpy(spec + n, item);
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Copies the finished database path into the opened output and commits it. Returns the
 * exit status (the output's failure said by tktool_output_commit()). */
static int copy_into(const char *path, struct tktool_output *out)
{
	char buf[1 << 16];
	FILE *f = fopen(path, "rb"), *to = tktool_output_stream(out);
	size_t n;

	if (f == NULL) {
		tktool_error(NULL, "%s: %s", path, strerror(errno));
		tktool_output_abort(out);
		return 1;
	}
	int err = 0;
	while (err == 0 && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (fwrite(buf, 1, n, to) != n)
			err = errno != 0 ? errno : EIO;
	if (err == 0 && fflush(to) != 0)
		err = errno != 0 ? errno : EIO;
	int read_failed = ferror(f) != 0;
	fclose(f);
	if (read_failed || err != 0) {
		if (read_failed)
			tktool_error(NULL, "%s: cannot read", path);
		else
			tktool_error(NULL, "%s: cannot write: %s", tktool_out_name(out->path), strerror(err));
		tktool_output_abort(out);
		return 1;
	}
	return tktool_output_commit(out) == 0 ? 0 : 1; /* says a write error itself */
}

/* Warnings of what an export left out: combine events never completed (as traceprinter
 * warns of them), the VTune CSV data tracecsv export warns of (the statistics also report
 * them), then the first malformed or unnamed event with where it is (what the library puts
 * in err on success). */
static void warn_csv(const char *in, const tk_export_stats *st, const char *err)
{
	const struct {
		uint64_t n;
		const char *what;
	} w[] = {
		{ st->incomplete_events, "combine events never completed (the file ends in one: not exported)" },
		{ st->lost_events, "events lost by the recorder (CONTROL DROPPED): times across the gaps may be wrong" },
		{ st->csv_unmatched_ends, "VTune CSV interval ends without a begin (not exported)" },
		{ st->csv_begun_twice, "VTune CSV intervals begun again while open (the first of each not exported)" },
		{ st->csv_open_at_end, "VTune CSV intervals begin without an end (not exported)" },
		{ st->csv_unnamed, "VTune CSV events name no name defined before them (not exported)" },
		{ st->csv_malformed, "malformed VTune CSV events (not exported)" },
	};
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (w[i].n != 0)
			fprintf(stderr, "%s: warning: %s: %llu %s\n", tktool_name(), tktool_in_name(in),
				(unsigned long long)w[i].n, w[i].what);
	if (err[0] != '\0')
		fprintf(stderr, "%s: warning: %s: %s\n", tktool_name(), tktool_in_name(in), err);
}

/* The SQLite export: the database is built in a private directory and copied to the output
 * (whole, through tk_outfile; "-" is standard output), which is opened first so that an
 * output that cannot be created is said before the export's work. Returns the exit status. */
static int run_sqlite(const char *in, const char *out_path, const char *pairs, const char *counters)
{
	struct tktool_output out = { NULL, NULL, -1 };
	char dir[4096], db[4200], err[512];
	tk_export_stats st;
	int status = 0, to_stdout = strcmp(out_path, "-") == 0;

	if (tktool_refuse_same_file(in, out_path))
		return 1;
	tktool_catch_signals(TKTOOL_SIGNAL_EXIT);
	if (!to_stdout && tktool_output_open(&out, out_path, 0) != 0)
		return 1;
	int slot;
	if (tktool_private_dir_registered(dir, sizeof(dir), &slot) != 0) {
		tktool_error(NULL, "cannot create a temporary directory in %s (TMPDIR): %s", tk_tmpdir(),
			     strerror(errno));
		tktool_output_abort(&out);
		return 1;
	}
	snprintf(db, sizeof(db), "%s/trace.db", dir);
	memset(&st, 0, sizeof(st));
	int rc = tk_export_sqlite_flags(in, db, export_flags, pairs[0] ? pairs : NULL, counters[0] ? counters : NULL,
					&st, err, sizeof(err));
	if (rc == TK_EINVAL && st.events == 0) {
		tktool_output_abort(&out);
		status = tktool_usage_error("%s", err);
	} else if (rc != 0 && (strncmp(err, "writing", 7) == 0 || rc == TK_ENOSPC)) {
		/* the database is only ever written in dir: its file system is what failed, not OUT's */
		tktool_output_abort(&out);
		tktool_error(dir, "%s (the database is built in TMPDIR first and needs room there for all of it)",
			     err[0] ? err : tk_strerror(rc));
		status = 1;
	} else if (rc != 0 && st.events == 0) {
		tktool_output_abort(&out);
		tktool_error(in, "%s", err[0] ? err : tk_strerror(rc));
		status = 1;
	} else {
		if (rc == 0)
			warn_csv(in, &st, err);
		if (rc != 0) { /* damage midway: the database holds the events before it */
			warn_csv(in, &st, "");
			tktool_error(in, "%s (the output holds the %llu events before it)", err[0] ? err : tk_strerror(rc),
				     (unsigned long long)st.events);
			status = 1;
		}
		if (to_stdout) {
			if (tktool_copy_to_stdout(db) != 0) {
				tktool_error(NULL, "%s: cannot write: %s", tktool_out_name(out_path), strerror(errno));
				status = 1;
			}
		} else if (copy_into(db, &out) != 0) {
			status = 1;
		}
	}
	tktool_private_dir_remove(dir);
	tktool_cleanup_forget(slot);
	return status;
}

/* Writes IN to the output path in format fmt. Returns the exit status. */
static int run_export(const char *in, const char *out_path, tk_export_format fmt, const char *pairs,
		      const char *counters)
{
	struct tktool_output out = { NULL, NULL, -1 };
	tk_export_stats st;
	char err[512];

	if (tktool_refuse_same_file(in, out_path))
		return 1;
	tktool_catch_signals(TKTOOL_SIGNAL_EXIT);
	if (tktool_output_open(&out, out_path, 0) != 0)
		return 1;
	FILE *stream = tktool_output_stream(&out);
	memset(&st, 0, sizeof(st));
	unsigned flags = fmt == TK_EXPORT_CHROME_JSON || fmt == TK_EXPORT_PERFETTO ? export_flags : 0; /* not stats */
	int rc = tk_export_file_flags(in, stream, fmt, flags, pairs[0] ? pairs : NULL, counters[0] ? counters : NULL,
				      &st, err, sizeof(err));
	if (rc == 0) {
		warn_csv(in, &st, err);
		return tktool_output_commit(&out) == 0 ? 0 : 1;
	}
	if (rc == TK_EINVAL && st.events == 0) { /* a bad declaration: nothing was read */
		tktool_output_abort(&out);
		return tktool_usage_error("%s", err);
	}
	int write_failed = ferror(stream) != 0 || strncmp(err, "writing", 7) == 0;
	if (write_failed || st.events == 0) {
		/* a write error, or an input unreadable from the start: no output */
		tktool_output_abort(&out);
		if (write_failed)
			tktool_error(NULL, "%s: cannot write: %s", tktool_out_name(out_path),
				     strncmp(err, "writing: ", 9) == 0 ? err + 9 : err[0] ? err : tk_strerror(rc));
		else
			tktool_error(in, "%s", err[0] ? err : tk_strerror(rc));
		return 1;
	}
	/* damage midway: the events before it are exported, the document is complete */
	warn_csv(in, &st, "");
	tktool_error(in, "%s (the output holds the %llu events before it)", err[0] ? err : tk_strerror(rc),
		     (unsigned long long)st.events);
	tktool_output_commit(&out); /* says so itself if that fails too */
	return 1;
}

/*
 * convert's --to value: a format's name or any extension convert knows that format by (from
 * OUT's name), so --to=pftrace and --to=db work as --to=perfetto and --to=sqlite do. Returns the
 * format's name (json, perfetto, sqlite, csv, kev, tb5, xml, callgrind, hdf5), NULL if unknown.
 */
static const char *to_format(const char *to)
{
	static const char *const names[][2] = {
		{ "json", "json" },        { "perfetto", "perfetto" },
		{ "pftrace", "perfetto" }, { "perfetto-trace", "perfetto" },
		{ "sqlite", "sqlite" },    { "db", "sqlite" },
		{ "sqlite3", "sqlite" },   { "csv", "csv" },
		{ "kev", "kev" },          { "tb5", "tb5" },
		{ "xml", "xml" },          { "callgrind", "callgrind" },
		{ "cgrind", "callgrind" }, { "hdf5", "hdf5" },
		{ "h5", "hdf5" },
	};
	if (*to == '.')
		to++;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(to, names[i][0]) == 0)
			return names[i][1];
	return NULL;
}

/*
 * The conversions that exist beside the exports, run as their tools (from beside tracekit,
 * else from PATH): a Byfl .byfl file to CSV, SQLite, XML Spreadsheet, Callgrind or HDF5
 * (bfbin2*), VTune CSV files into a .kev or .tb5 trace (tracecsv import) and a trace's CSV
 * data back out into a directory (--to=csv: tracecsv export). NULL: one of the exports.
 */
static const char *other_conversion(const char *in, const char *out, const char *to)
{
	const char *k = to != NULL ? to : "";
	if (ends_with(in, ".byfl")) {
		if (strcmp(k, "csv") == 0 || (!*k && ends_with(out, ".csv")))
			return "bfbin2csv";
		if (strcmp(k, "sqlite") == 0 ||
		    (!*k && (ends_with(out, ".db") || ends_with(out, ".sqlite") || ends_with(out, ".sqlite3"))))
			return "bfbin2sqlite3";
		if (strcmp(k, "xml") == 0 || (!*k && ends_with(out, ".xml")))
			return "bfbin2xmlss";
		if (strcmp(k, "callgrind") == 0 || (!*k && (ends_with(out, ".cgrind") || strncmp(out, "callgrind.out", 13) == 0 ||
							  strstr(out, "/callgrind.out") != NULL)))
			return "bfbin2cgrind";
		if (strcmp(k, "hdf5") == 0 || (!*k && (ends_with(out, ".h5") || ends_with(out, ".hdf5"))))
			return "bfbin2hdf5";
		return ""; /* no export of a .byfl file */
	}
	if (ends_with(in, ".csv") && (strcmp(k, "kev") == 0 || strcmp(k, "tb5") == 0 ||
				      (!*k && (ends_with(out, ".kev") || ends_with(out, ".tb5")))))
		return "tracecsv import";
	if (strcmp(k, "csv") == 0)
		return "tracecsv export";
	return NULL;
}

/* Runs the tool of other_conversion() on IN and OUT. Returns only on failure (status 1). */
static int run_other(const char *tool, const char *in, const char *out)
{
	char *args[8];
	int n = 0;

	args[n++] = NULL; /* run_tool() sets the program's name */
	if (strcmp(tool, "tracecsv import") == 0 || strcmp(tool, "tracecsv export") == 0) {
		args[n++] = strchr(tool, ' ') + 1;
		args[n++] = "-o";
		args[n++] = (char *)out;
		args[n++] = "--";
		args[n++] = (char *)in;
		tool = "tracecsv";
	} else if (strcmp(tool, "bfbin2csv") == 0 || strcmp(tool, "bfbin2sqlite3") == 0) {
		args[n++] = "-o";
		args[n++] = (char *)out;
		args[n++] = "--";
		args[n++] = (char *)in;
	} else {
		args[n++] = "--";
		args[n++] = (char *)in;
		args[n++] = (char *)out;
	}
	args[n] = NULL;
	return run_tool(tool, args);
}

enum { OPT_PAIR = 256, OPT_COUNTER, OPT_TO, OPT_FORMAT, OPT_SYMBOLS, OPT_NO_SYMBOLS };

/* tracekit convert / stats */
static int cmd_export(int argc, char **argv, int stats)
{
	static const struct option longopts[] = {
		{ "pair", required_argument, NULL, OPT_PAIR },  { "counter", required_argument, NULL, OPT_COUNTER },
		{ "to", required_argument, NULL, OPT_TO },      { "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, 'o' },     { "help", no_argument, NULL, 'h' },
		{ "symbols", no_argument, NULL, OPT_SYMBOLS },  { "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
		{ NULL, 0, NULL, 0 },
	};
	static char pairs[SPEC_MAX], counters[SPEC_MAX];
	const char *to = NULL, *format = "text", *output = "-";
	int opt, rc;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, stats ? ":o:h" : ":h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_PAIR:
			if ((rc = spec_add(pairs, optarg, "--pair")) != 0)
				return rc;
			break;
		case OPT_COUNTER:
			if ((rc = spec_add(counters, optarg, "--counter")) != 0)
				return rc;
			break;
		case OPT_TO:
			if (stats)
				return tktool_usage_error("--to is an option of convert (stats has --format)");
			if ((to = to_format(optarg)) == NULL)
				return tktool_usage_error("unknown --to '%s' (json, perfetto or pftrace, sqlite or db, "
							  "csv, kev, tb5, xml, callgrind or cgrind, hdf5 or h5)",
							  optarg);
			break;
		case OPT_FORMAT:
			if (!stats)
				return tktool_usage_error("--format is an option of stats (convert has --to)");
			format = optarg;
			break;
		case 'o':
			if (!stats)
				return tktool_usage_error("convert takes its output as the second argument");
			output = optarg;
			break;
		case OPT_SYMBOLS:
		case OPT_NO_SYMBOLS:
			if (stats)
				return tktool_usage_error("--symbols and --no-symbols are options of convert");
			export_flags = opt == OPT_SYMBOLS ? TK_EXPORT_SYMBOLS : 0;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case ':':
			return tktool_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return tktool_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (stats) {
		tk_export_format fmt;
		if (argc - optind != 1)
			return tktool_usage_error("stats takes one trace file");
		if (strcmp(format, "text") == 0)
			fmt = TK_EXPORT_STATS_TEXT;
		else if (strcmp(format, "csv") == 0)
			fmt = TK_EXPORT_STATS_CSV;
		else if (strcmp(format, "json") == 0)
			fmt = TK_EXPORT_STATS_JSON;
		else
			return tktool_usage_error("unknown --format '%s' (text, csv or json)", format);
		return run_export(argv[optind], output, fmt, pairs, counters);
	}
	if (argc - optind != 2)
		return tktool_usage_error("convert takes an input trace and an output file");
	const char *in = argv[optind], *out = argv[optind + 1];
	tk_export_format fmt;
	const char *kind = to;
	const char *tool = other_conversion(in, out, to);
	if (tool != NULL && *tool == '\0')
		return tktool_usage_error("a .byfl file converts to .csv, .db, .xml, .cgrind or .h5 (or --to=csv, "
					  "sqlite, xml, callgrind or hdf5), not to '%s'",
					  out);
	if (tool != NULL) {
		if (pairs[0] != '\0' || counters[0] != '\0')
			return tktool_usage_error("--pair and --counter are options of the .kev exports");
		return run_other(tool, in, out);
	}
	if (kind == NULL) {
		if (ends_with(out, ".json"))
			kind = "json";
		else if (ends_with(out, ".pftrace") || ends_with(out, ".perfetto-trace"))
			kind = "perfetto";
		else if (ends_with(out, ".db") || ends_with(out, ".sqlite") || ends_with(out, ".sqlite3"))
			kind = "sqlite";
		else
			return tktool_usage_error("cannot tell the format of '%s' from its name: use --to=json, "
						  "--to=perfetto, --to=sqlite or --to=csv",
						  out);
	}
	if ((strcmp(kind, "perfetto") == 0 || strcmp(kind, "sqlite") == 0) && strcmp(out, "-") == 0 &&
	    isatty(STDOUT_FILENO)) /* as tracelogger -f - */
		return tktool_usage_error("%s to '-': standard output is a terminal; redirect it or name a file", kind);
	if (strcmp(kind, "json") == 0)
		fmt = TK_EXPORT_CHROME_JSON;
	else if (strcmp(kind, "perfetto") == 0)
		fmt = TK_EXPORT_PERFETTO;
	else if (strcmp(kind, "sqlite") == 0)
		return run_sqlite(in, out, pairs, counters);
	else
		return tktool_usage_error("--to=%s is not a format of a trace's export (json, perfetto, sqlite or csv)",
					  kind);
	return run_export(in, out, fmt, pairs, counters);
}

/* ---- info ----------------------------------------------------------------------------------- */

struct info_run {
	tk_export *x;
	int rc;
	tk_kev_decoded dec;
};

static int info_event(struct traceparser_state *st, void *ud, unsigned header, unsigned time, unsigned *buf,
		      unsigned len)
{
	struct info_run *r = ud;
	if (r->rc != 0 || tk_traceparser_decode(st, header, time, buf, len, 0, &r->dec) != 0)
		return 0;
	r->rc = tk_export_event(r->x, &r->dec);
	return 0;
}

/* After the header: print it, declare the trace's own pairs (the statistics use them). */
static int info_header(struct traceparser_state *st, void *ud, unsigned header, unsigned time, unsigned *buf,
		       unsigned len)
{
	struct info_run *r = ud;
	unsigned n = tk_traceparser_header_count(st);
	const char *v;

	(void)header, (void)time, (void)buf, (void)len;
	printf("Header\n");
	for (unsigned i = 0; i < n; i++) {
		const char *key, *value;
		unsigned vlen;
		if (tk_traceparser_header_entry(st, i, &key, &value, &vlen) != 0)
			continue;
		printf("  TRACE_%s:: ", key);
		for (unsigned k = 0; k < vlen; k++) /* header text as it is, control characters shown as '?' */
			putchar((unsigned char)value[k] < 0x20 ? '?' : value[k]);
		putchar('\n');
	}
	putchar('\n');
	fflush(stdout);
	if ((v = tk_traceparser_header_value(st, "TRACEKIT_USER_PAIRS", NULL)) != NULL)
		tk_export_add_spec(r->x, v, 0); /* malformed items: the statistics go without them */
	/* VTune CSV data, as tracekit stats reads it (tk_export_file() does the same) */
	if (tk_traceparser_header_value(st, "TRACEKIT_CSV_CLOCK", NULL) != NULL ||
	    tk_traceparser_header_value(st, "TRACEKIT_CSV_SOURCE_CLOCK", NULL) != NULL)
		tk_export_csv_data(r->x, 1);
	return 0;
}

static int cmd_info(int argc, char **argv)
{
	struct info_run *r;
	struct traceparser_state *st;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc != 2)
		return tktool_usage_error("info takes one trace file");
	if (argv[1][0] == '-' && argv[1][1] != '\0')
		return tktool_usage_error("unknown option '%s'", argv[1]);
	r = calloc(1, sizeof(*r));
	st = traceparser_init(NULL);
	if (r == NULL || st == NULL || tk_export_new(&r->x, TK_EXPORT_STATS_TEXT, stdout) != 0) {
		tktool_error(NULL, "out of memory");
		return 1;
	}
	for (unsigned cls = 0; cls < 32; cls++)
		tk_traceparser_cs_internal(st, r, info_event, cls, cls == 0 ? 1 : 0, 1023);
	traceparser_cs(st, r, info_header, _NTO_TRACE_EMPTY, _NTO_TRACE_EMPTYEVENT);
	int status = 0;
	if (traceparser(st, r, argv[1]) != 0) {
		const char *msg = traceparser_get_info(st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		fflush(stdout);
		tktool_error(argv[1], "%s", msg != NULL && *msg ? msg : strerror(errno));
		status = 1;
	}
	const tk_export_stats *es = tk_export_get_stats(r->x);
	if (r->rc == 0 && (status == 0 || es->events > 0))
		r->rc = tk_export_finish(r->x);
	if (r->rc != 0) {
		tktool_error(NULL, "standard output: %s", tk_export_errmsg(r->x));
		status = 1;
	}
	traceparser_destroy(&st);
	tk_export_free(r->x);
	free(r);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		tktool_error(NULL, "standard output: %s", strerror(errno));
		return 1;
	}
	return status;
}

/* ---- help ----------------------------------------------------------------------------------- */

static int cmd_help(int argc, char **argv)
{
	const char *page = "tracekit";
	char dir[PATH_MAX], path[PATH_MAX + 64];

	if (argc > 2)
		return tktool_usage_error("help takes at most one command");
	if (argc == 2) {
		const char *c = argv[1];
		if (strcmp(c, "print") == 0)
			page = "traceprinter";
		else if (strcmp(c, "record") == 0)
			page = "tracelogger";
		else if (strcmp(c, "convert") != 0 && strcmp(c, "stats") != 0 && strcmp(c, "info") != 0 &&
			 strcmp(c, "help") != 0 && strcmp(c, "tracekit") != 0)
			return tktool_usage_error("no command '%s' (record, print, convert, stats, info, help)", c);
	}
	/* the page rendered beside us (build tree: man/ next to tools/; install: share/man) */
	self_dir(dir, sizeof(dir));
	fflush(NULL);
	int found = 0;
	for (int i = 0; dir[0] != '\0' && i < 2 && !found; i++) {
		if (i == 0)
			snprintf(path, sizeof(path), "%s/../man/man1/%s.1", dir, page);
		else
			snprintf(path, sizeof(path), "%s/../share/man/man1/%s.1", dir, page);
		found = access(path, R_OK) == 0;
	}
	if (found)
		execlp("man", "man", "-l", path, (char *)NULL);
	else
		execlp("man", "man", "1", page, (char *)NULL);
	fprintf(stderr, "tracekit: cannot run man (%s); the usage instead:\n", strerror(errno));
	if (strcmp(page, "tracekit") != 0) { /* record, print: the tool's own usage */
		char *help_argv[] = { NULL, "--help", NULL };
		return run_tool(page, help_argv);
	}
	fputs(usage_text, stdout);
	return 0;
}

int main(int argc, char **argv)
{
	tktool_init("tracekit");
	if (argc < 2)
		return tktool_usage_error("a command is needed (record, print, convert, stats, info, help)");
	const char *cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0)
		return tktool_version(NULL);
	if (strcmp(cmd, "record") == 0)
		return run_tool("tracelogger", argv + 1);
	if (strcmp(cmd, "print") == 0)
		return run_tool("traceprinter", argv + 1);
	if (strcmp(cmd, "convert") == 0)
		return cmd_export(argc - 1, argv + 1, 0);
	if (strcmp(cmd, "stats") == 0)
		return cmd_export(argc - 1, argv + 1, 1);
	if (strcmp(cmd, "info") == 0)
		return cmd_info(argc - 1, argv + 1);
	if (strcmp(cmd, "help") == 0)
		return cmd_help(argc - 1, argv + 1);
	return tktool_usage_error("no command '%s' (record, print, convert, stats, info, help)", cmd);
}
