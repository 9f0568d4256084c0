/* SPDX-License-Identifier: MIT */
/*
 * tracecsv: VTune(TM) external-data CSV files to and from tracekit traces.
 *   tracecsv import [-o OUT.kev|OUT.tb5] [--into BASE.kev] FILE.csv...
 *   tracecsv export [-o DIR] [--clock KIND] [--host NAME] TRACE.kev|TRACE.tb5
 * A thin shell over tk_csv_import() and tk_csv_export() (tracekit/csv.h): options, output
 * staging for FIFOs and devices, standard input, signals, progress and messages.
 * docs/tracecsv.md is the manual, docs/vtune-csv.md the format and the user events.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tracekit/csv.h"

#include "tool_cli.h"

static const char usage_text[] =
	"Usage: tracecsv import [-o OUT.kev|OUT.tb5] [--into BASE.kev] [OPTION]... FILE.csv...\n"
	"       tracecsv export [-o DIR] [--clock KIND] [--host NAME] TRACE.kev|TRACE.tb5\n"
	"Convert VTune external-data CSV files (intervals: frames and tasks; counters) to and\n"
	"from tracekit traces.\n"
	"\n"
	"import: read the CSV files (merged in time order) into a .kev trace (user events) or a\n"
	"        .tb5 file (an interval and a counter stream)\n"
	"  -o, --output=FILE      output file, .kev or .tb5 (default: imported.kev)\n"
	"      --into=BASE.kev    merge the CSV data into a copy of this trace\n"
	"      --tsc-hz=HZ        rate of TSC/RDTSC timestamps (default: this machine's)\n"
	"      --qpc-hz=HZ        rate of QPC timestamps (default 10000000)\n"
	"export: write <name>-intervals-hostname-<host>.csv and, when the trace has counters,\n"
	"        <name>-counters-hostname-<host>.csv\n"
	"  -o, --output=DIR       directory for the CSV files (default: .)\n"
	"      --clock=KIND       timestamps as QPC, CLOCK_MONOTONIC_RAW, RDTSC, TSC or UTC\n"
	"                         (default: the trace's own)\n"
	"      --host=NAME        host in the file names (default: the trace's, else\n"
	"                         $VTUNE_HOSTNAME, else this machine's)\n"
	"  -q, --quiet            no warnings\n"
	"  -h, --help             show this help and exit\n"
	"      --version          show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 on bad input or a failed write (nothing is left under the\n"
	"output's name), 2 on a usage error, 3 when export wrote its files but left out part\n"
	"of the trace (malformed events, damage, what a CSV file cannot hold): the message\n"
	"says what and where.\n"
	"The manual is tracecsv(1) (docs/tracecsv.md).\n";

/* export wrote every valid interval and counter, but the trace is not all valid */
#define EXIT_PARTIAL 3

static int quiet;

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	va_list ap;
	if (quiet || tktool_quiet)
		return;
	va_start(ap, fmt);
	fputs("tracecsv: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

#define err(...) tktool_error(NULL, __VA_ARGS__)
#define usage_error(...) tktool_usage_error(__VA_ARGS__)

/* The temporaries the signal handler removes (slots for tktool_cleanup_forget). */
static int cleanup_slots[2] = {-1, -1};
static void cleanup_set2(int i, const char *path)
{
	tktool_cleanup_forget(cleanup_slots[i]);
	struct stat sb;
	/* only a regular file of ours: an output written in place (a FIFO, a device) is never
	 * removed */
	cleanup_slots[i] = path && *path && strcmp(path, "-") != 0 && (lstat(path, &sb) != 0 || S_ISREG(sb.st_mode))
				   ? tktool_cleanup_add(path)
				   : -1;
}

static const char *ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0 ? s + n - m : NULL;
}

/* ---- the library's callbacks ---- */

static void on_warning(void *user_data, const char *message)
{
	(void)user_data;
	warn("%s", message);
}

static void on_temp(void *user_data, int slot, const char *path)
{
	(void)user_data;
	cleanup_set2(slot, path);
}

static void on_progress(void *user_data, uint64_t done, uint64_t total)
{
	struct tktool_progress *p = user_data;
	if (!p->begun) {
		tktool_progress_begin(p, "importing", total);
		p->begun = 1;
	}
	tktool_progress_update(p, done);
}

static void convert_init(tk_csv_convert *cv, struct tktool_progress *prog)
{
	memset(cv, 0, sizeof(*cv));
	memset(prog, 0, sizeof(*prog));
	cv->struct_size = sizeof(*cv);
	cv->warning_cb = on_warning;
	cv->progress_cb = on_progress;
	cv->temp_cb = on_temp;
	cv->user_data = prog;
}

/* ---- main ------------------------------------------------------------------------------- */

static int parse_hz(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || s[0] == '-') {
		usage_error("%s: not a positive integer: \"%s\"", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* import FILES into OUTPUT (options checked) */
static int run_import(char **files, int n_files, const char *output, int tb5, const char *into, uint64_t tsc_hz,
		      uint64_t qpc_hz)
{
	tktool_catch_signals(TKTOOL_SIGNAL_EXIT);
	int n_stdin = 0;
	for (int i = 0; i < n_files; i++)
		n_stdin += strcmp(files[i], "-") == 0;
	if (n_stdin > 1)
		return usage_error("import: standard input (-) given twice");
	struct tktool_stdin_file sf;
	memset(&sf, 0, sizeof(sf));
	if (n_stdin) {
		if (tktool_stdin_file(&sf, NULL, 0) != 0)
			return 1;
	}
	/* an existing FIFO or device is written once, whole: the trace is built in a private
	 * temporary (an import may start again, sorting in memory) and then copied; the
	 * node itself is never removed */
	char pdir[4096] = "", built[4200];
	const char *target = output;
	int pslot = -1;
	if (tktool_needs_copy(output)) {
		const char *base = strrchr(output, '/');
		if (tktool_private_dir(pdir, sizeof(pdir)) != 0) {
			tktool_error(output, "cannot create a temporary directory: %s", strerror(errno));
			pdir[0] = 0;
			if (n_stdin)
				tktool_stdin_file_close(&sf);
			return 1;
		}
		pslot = tktool_cleanup_add_dir(pdir);
		snprintf(built, sizeof(built), "%s/%s", pdir, base ? base + 1 : output);
		target = built;
	}
	tk_csv_import_options io = {sizeof(io), tb5 ? TK_CSV_TRACE_TB5 : TK_CSV_TRACE_KEV, into, output,
				    n_stdin ? sf.path : NULL, tsc_hz, qpc_hz};
	struct tktool_progress prog;
	tk_csv_convert cv;
	convert_init(&cv, &prog);
	int rc = tk_csv_import((const char *const *)files, (size_t)n_files, target, &io, &cv);
	if (prog.begun)
		tktool_progress_end(&prog);
	if (rc != 0)
		err("%s", cv.error);
	rc = rc != 0;
	if (rc == 0 && pdir[0] && tktool_copy_file(built, output) != 0) {
		tktool_error(output, "writing failed: %s", strerror(errno));
		rc = 1;
	}
	if (pdir[0]) {
		tktool_private_dir_remove(pdir);
		tktool_cleanup_forget(pslot);
	}
	if (n_stdin)
		tktool_stdin_file_close(&sf);
	return rc;
}

/* export TRACE into the directory OUTPUT (options checked; clock: TK_CSV_CLOCK_OWN or a tk_csv_clock) */
static int run_export(const char *trace, const char *output, int clock, const char *host_opt)
{
	tk_csv_export_options eo = TK_CSV_EXPORT_OPTIONS_INIT;
	eo.clock = clock;
	eo.host = host_opt;
	eo.dir = output ? output : ".";
	struct stat sb;
	if (stat(eo.dir, &sb) != 0) {
		err("%s: cannot use the output directory: %s", eo.dir, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		err("%s: cannot use the output directory: not a directory", eo.dir);
		return 1;
	}
	tktool_catch_signals(TKTOOL_SIGNAL_EXIT);
	struct tktool_stdin_file sf;
	int from_stdin = strcmp(trace, "-") == 0;
	if (from_stdin) {
		/* standard input: copied to a private file (export reads a .kev twice when it has
		 * counters; .tb5 needs a file); a .kev starts with its header */
		if (tktool_stdin_file(&sf, NULL, 0) != 0)
			return 1;
		char head[20] = "";
		FILE *hf = fopen(sf.path, "rb");
		size_t hn = hf ? fread(head, 1, sizeof(head), hf) : 0;
		if (hf)
			fclose(hf);
		eo.format = hn >= 6 && memcmp(head, "TRACE_", 6) == 0 ? TK_CSV_TRACE_KEV : TK_CSV_TRACE_TB5;
		eo.name = "stdin"; /* the output names start with "stdin" */
		trace = sf.path;
	}
	struct tktool_progress prog;
	tk_csv_convert cv;
	convert_init(&cv, &prog);
	int rc = tk_csv_export(trace, &eo, &cv, NULL, NULL);
	if (rc != 0)
		err("%s", cv.error);
	if (from_stdin)
		tktool_stdin_file_close(&sf);
	/* bad input whose valid part is exported (the files are there): a status of its own, so
	 * that 1 keeps meaning that nothing was written */
	return rc == 0 ? 0 : cv.written ? EXIT_PARTIAL : 1;
}

int main(int argc, char **argv)
{
	enum { O_INTO = 256, O_CLOCK, O_HOST, O_TSC, O_QPC, O_VERSION };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'}, {"into", required_argument, NULL, O_INTO},
		{"clock", required_argument, NULL, O_CLOCK}, {"host", required_argument, NULL, O_HOST},
		{"tsc-hz", required_argument, NULL, O_TSC},  {"qpc-hz", required_argument, NULL, O_QPC},
		{"quiet", no_argument, NULL, 'q'},           {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, O_VERSION},   {NULL, 0, NULL, 0}};
	const char *output = NULL, *into = NULL, *clock_opt = NULL, *host_opt = NULL;
	uint64_t tsc_hz = 0, qpc_hz = 10000000;
	int opt;

	tktool_init("tracecsv");

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		return tktool_version(NULL);
	}
	if (argc < 2)
		return usage_error("missing command: import or export");
	const char *cmd = argv[1];
	int is_import = strcmp(cmd, "import") == 0, is_export = strcmp(cmd, "export") == 0;
	if (!is_import && !is_export)
		return usage_error("unknown command \"%s\": import or export", cmd);
	argv++;
	argc--;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case O_INTO:
			into = optarg;
			break;
		case O_CLOCK:
			clock_opt = optarg;
			break;
		case O_HOST:
			host_opt = optarg;
			break;
		case O_TSC:
			if (parse_hz("--tsc-hz", optarg, &tsc_hz))
				return 2;
			break;
		case O_QPC:
			if (parse_hz("--qpc-hz", optarg, &qpc_hz))
				return 2;
			break;
		case 'q':
			quiet = 1;
			tktool_quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case O_VERSION:
			return tktool_version(NULL);
		case ':':
			return usage_error("option %s needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (is_import) {
		if (clock_opt || host_opt)
			return usage_error("--clock and --host are options of export");
		if (optind >= argc)
			return usage_error("import: no CSV file given");
		if (output == NULL)
			output = "imported.kev";
		int tb5 = ends_with(output, ".tb5") != NULL;
		if (!tb5 && !ends_with(output, ".kev"))
			return usage_error("-o %s: the output must end in .kev or .tb5", output);
		if (into && tb5)
			return usage_error("--into merges into a .kev trace: the output must be .kev");
		if (into && strcmp(into, output) == 0)
			return usage_error("--into %s: the output must be another file", into);
		for (int i = optind; i < argc; i++)
			if (tktool_refuse_same_file(argv[i], output))
				return 1;
		if (into && tktool_refuse_same_file(into, output))
			return 1;
		return run_import(argv + optind, argc - optind, output, tb5, into, tsc_hz, qpc_hz);
	}
	if (into || tsc_hz)
		return usage_error("--into and --tsc-hz are options of import");
	if (optind != argc - 1)
		return usage_error("export: give exactly one trace (.kev or .tb5)");
	/* the host ends up in the file names and is read back after the last "-hostname-"
	 * (docs/vtune-csv.md, "File names") */
	if (host_opt && (host_opt[0] == 0 || strchr(host_opt, '/') || strstr(host_opt, "-hostname-") ||
			 strlen(host_opt) > 200))
		return usage_error("--host \"%s\": a host is not empty, holds no '/' and no \"-hostname-\", and has "
				   "at most 200 bytes",
				   host_opt);
	tk_csv_clock clock;
	if (clock_opt && tk_csv_clock_parse(clock_opt, &clock) != 0)
		return usage_error("--clock: unknown clock \"%s\" (QPC, CLOCK_MONOTONIC_RAW, RDTSC, TSC or UTC)",
				   clock_opt);
	return run_export(argv[optind], output, clock_opt ? (int)clock : TK_CSV_CLOCK_OWN, host_opt);
}
