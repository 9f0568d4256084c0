/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the export module (tracekit/export.h): slices that nest whatever the input
 * (unmatched exits dropped, inner slices closed by an outer end, open ones closed at the
 * end), user pairs and counters and their declarations, names, JSON escaping, write errors.
 *
 * Also the golden driver:
 *   test_export --json|--perfetto|--stats|--stats-csv|--stats-json TRACE.kev [PAIRS [COUNTERS]]
 * writes the export to standard output (exit 1 and a message on error);
 *   test_export --stats-modes TRACE.kev [PAIRS [COUNTERS]]
 * exits 0 when the statistics are the same one event at a time, through their scan of the
 * parser's runs and through the light path's runs (1 and what differs otherwise).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tk_test.h"

#include <sqlite3.h>

#include <tracekit/export.h>
#include <tracekit/kev.h>
#include <tracekit/traceparser.h>

#include "export/export_internal.h" /* tk__export_create(), tk__export_run_file(): test_json_run_random */

/* ---- building traces ------------------------------------------------------------------ */

static tk_kev_writer *trace_open(const char *path)
{
	tk_kev_header hdr;
	tk_kev_writer *w = NULL;

	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u; /* 1 cycle = 1 ns: times are the cycle counts */
	hdr.cpu_num = 2;
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
	return w;
}

static void ev2(tk_kev_writer *w, unsigned cpu, unsigned cls, unsigned code, uint64_t t, uint32_t a, uint32_t b)
{
	uint32_t words[2] = { a, b };
	assert_int_equal(tk_kev_write_event(w, cpu, cls, code, t, words, 2), 0);
}

static void running(tk_kev_writer *w, uint64_t t, uint32_t pid, uint32_t tid)
{
	ev2(w, 0, _TRACE_PR_TH_C, STATE_RUNNING, t, pid, tid);
}

static void func(tk_kev_writer *w, uint64_t t, int enter, uint32_t fn)
{
	ev2(w, 0, _TRACE_SYSTEM_C, enter ? _NTO_TRACE_SYS_FUNC_ENTER : _NTO_TRACE_SYS_FUNC_EXIT, t, fn, 0x9000);
}

static void user(tk_kev_writer *w, uint64_t t, unsigned code, uint32_t d0, uint32_t d1)
{
	ev2(w, 0, _TRACE_USER_C, code, t, d0, d1);
}

/* Exports path to a string; returns the status, *out the text (free it). */
static int export_to_string(const char *path, const char *pairs, const char *counters, tk_export_stats *st,
			    char **out)
{
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	int rc = tk_export_file(path, f, TK_EXPORT_CHROME_JSON, pairs, counters, st, err, sizeof(err));
	fclose(f);
	*out = buf;
	return rc;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* ---- tests ------------------------------------------------------------------------------ */

/* A then B entered; A exits (B closed by the outer end); an exit of C that was never
 * entered (dropped); a user pair; D left open (closed at the last time). */
static void test_slices_nest(void **state)
{
	(void)state;
	const char *path = tkt_path("nest.kev");
	tk_kev_writer *w = trace_open(path);
	running(w, 1000, 7, 1);
	func(w, 2000, 1, 0xa0);
	func(w, 3000, 1, 0xb0);
	func(w, 4000, 0, 0xa0);
	func(w, 5000, 0, 0xc0);
	user(w, 6000, 10, 1, 2);
	user(w, 7500, 11, 3, 4);
	func(w, 8000, 1, 0xd0);
	user(w, 9000, 20, 5, 6);
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_export_stats st;
	char *json;
	assert_int_equal(export_to_string(path, "10:11=step", NULL, &st, &json), 0);
	assert_int_equal(st.slices, 4);
	assert_int_equal(st.closed_by_outer, 1);
	assert_int_equal(st.unmatched_ends, 1);
	assert_int_equal(st.open_at_end, 1);
	assert_int_equal(st.instants, 2); /* THRUNNING and USER 20 */
	assert_int_equal(st.threads, 1);
	assert_int_equal(st.first_ns, 1000);
	assert_int_equal(st.last_ns, 9000);
	/* B: 3 us to 4 us, closed by A's exit; A: 2 us to 4 us */
	assert_non_null(strstr(json, "{\"name\":\"0xb0\",\"cat\":\"SYSTEM\",\"ph\":\"X\",\"ts\":3.000,\"dur\":1.000,"
				     "\"pid\":7,\"tid\":1,\"args\":{\"thisfn\":\"0xb0\",\"call_site\":\"0x9000\","
				     "\"closed\":\"by an outer end\"}}"));
	assert_non_null(strstr(json, "{\"name\":\"0xa0\",\"cat\":\"SYSTEM\",\"ph\":\"X\",\"ts\":2.000,\"dur\":2.000,"));
	assert_non_null(strstr(json, "{\"name\":\"step\",\"cat\":\"USER\",\"ph\":\"X\",\"ts\":6.000,\"dur\":1.500,"
				     "\"pid\":7,\"tid\":1,\"args\":{\"d0\":\"0x1\",\"d1\":\"0x2\",\"end\":{\"d0\":\"0x3\","
				     "\"d1\":\"0x4\"}}}"));
	assert_non_null(strstr(json, "\"name\":\"0xd0\",\"cat\":\"SYSTEM\",\"ph\":\"X\",\"ts\":8.000,\"dur\":1.000,"));
	assert_non_null(strstr(json, "\"closed\":\"at the end of the trace\""));
	assert_non_null(strstr(json, "{\"name\":\"USER 20\",\"cat\":\"USER\",\"ph\":\"i\",\"s\":\"t\",\"ts\":9.000,"
				     "\"pid\":7,\"tid\":1,\"args\":{\"cpu\":0,\"d0\":\"0x5\",\"d1\":\"0x6\"}}"));
	assert_int_equal(count(json, "0xc0"), 0);
	assert_non_null(strstr(json, "\"unmatched_ends\":1,\"closed_by_outer\":1,\"open_at_end\":1"));
	/* the document ends properly */
	size_t n = strlen(json);
	assert_true(n > 4 && strcmp(json + n - 4, "}}}\n") == 0);
	free(json);
}

/* Slices of different threads never close each other; an end on another thread is unmatched. */
static void test_slices_per_thread(void **state)
{
	(void)state;
	const char *path = tkt_path("threads.kev");
	tk_kev_writer *w = trace_open(path);
	running(w, 100, 7, 1);
	func(w, 200, 1, 0xa0);
	running(w, 300, 7, 2);
	func(w, 400, 1, 0xa0);
	func(w, 500, 0, 0xa0); /* thread 2's */
	func(w, 550, 0, 0xa0); /* thread 2 has nothing open any more */
	running(w, 600, 7, 1);
	func(w, 700, 0, 0xa0); /* thread 1's */
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_export_stats st;
	char *json;
	assert_int_equal(export_to_string(path, NULL, NULL, &st, &json), 0);
	assert_int_equal(st.slices, 2);
	assert_int_equal(st.unmatched_ends, 1);
	assert_int_equal(st.closed_by_outer, 0);
	assert_int_equal(st.threads, 2);
	assert_non_null(strstr(json, "\"ts\":0.200,\"dur\":0.500,\"pid\":7,\"tid\":1,"));
	assert_non_null(strstr(json, "\"ts\":0.400,\"dur\":0.100,\"pid\":7,\"tid\":2,"));
	free(json);
}

/* Deeper than TK_EXPORT_MAX_DEPTH: the extra begins are counted and their ends absorbed. */
static void test_depth_overflow(void **state)
{
	(void)state;
	const char *path = tkt_path("deep.kev");
	tk_kev_writer *w = trace_open(path);
	const unsigned n = TK_EXPORT_MAX_DEPTH + 10;
	running(w, 1, 1, 1);
	for (unsigned i = 0; i < n; i++)
		func(w, 10 + i, 1, 0x1000 + i);
	for (unsigned i = n; i-- > 0;)
		func(w, 10 + 2 * n - i, 0, 0x1000 + i);
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_export_stats st;
	char *json;
	assert_int_equal(export_to_string(path, NULL, NULL, &st, &json), 0);
	assert_int_equal(st.slices, TK_EXPORT_MAX_DEPTH);
	assert_int_equal(st.depth_overflow, 10);
	assert_int_equal(st.unmatched_ends, 0);
	assert_int_equal(st.closed_by_outer, 0);
	free(json);
}

/* Names become metadata, escaped into valid JSON (quotes, control characters, bad UTF-8). */
static void test_names_escaped(void **state)
{
	(void)state;
	const char *path = tkt_path("names.kev");
	tk_kev_writer *w = trace_open(path);
	uint32_t pp[2] = { 1, 42 }, pt[2] = { 42, 3 };
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, 10, pp, 2,
						"/bin/\"quoted\"\\app"),
			 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, 20, pt, 2,
						"tab\there \xff\xfe"),
			 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_export_stats st;
	char *json;
	assert_int_equal(export_to_string(path, NULL, NULL, &st, &json), 0);
	assert_int_equal(st.names, 2);
	assert_non_null(strstr(json, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":42,\"tid\":42,"
				     "\"args\":{\"name\":\"/bin/\\\"quoted\\\"\\\\app\"}}"));
	assert_non_null(strstr(json, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":42,\"tid\":3,"
				     "\"args\":{\"name\":\"tab\\there \\u00ff\\u00fe\"}}"));
	free(json);
}

/* Counters: d0 low and d1 high word of a signed value, on the event's process. */
static void test_counters(void **state)
{
	(void)state;
	const char *path = tkt_path("counters.kev");
	tk_kev_writer *w = trace_open(path);
	running(w, 1, 5, 6);
	user(w, 2000, 40, 7, 0);
	user(w, 3000, 40, 0xfffffffeu, 0xffffffffu);
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_export_stats st;
	char *json;
	assert_int_equal(export_to_string(path, NULL, "40=queue depth", &st, &json), 0);
	assert_int_equal(st.counters, 2);
	assert_non_null(strstr(json, "{\"name\":\"queue depth\",\"ph\":\"C\",\"ts\":2.000,\"pid\":5,"
				     "\"args\":{\"value\":7}}"));
	assert_non_null(strstr(json, "\"ts\":3.000,\"pid\":5,\"args\":{\"value\":-2}}"));
	free(json);
}

/* Declarations: syntax, ranges, conflicts; the header's declarations yield to the caller's. */
static void test_declarations(void **state)
{
	(void)state;
	tk_export *x;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(tk_export_new(&x, TK_EXPORT_CHROME_JSON, f), 0);
	assert_int_equal(tk_export_add_spec(x, "10:11=item,0x20:0x21", 0), 0);
	assert_int_equal(tk_export_add_spec(x, "10:11=renamed", 0), 0); /* the same pair again */
	assert_int_equal(tk_export_add_spec(x, "11:12", 0), TK_EINVAL);  /* 11 is taken */
	assert_non_null(strstr(tk_export_errmsg(x), "already declared"));
	assert_int_equal(tk_export_add_spec(x, "12", 0), TK_EINVAL);
	assert_non_null(strstr(tk_export_errmsg(x), "'12'"));
	assert_int_equal(tk_export_add_spec(x, "1:2=", 0), TK_EINVAL);
	assert_int_equal(tk_export_add_spec(x, "1024:1", 0), TK_EINVAL);
	assert_int_equal(tk_export_add_spec(x, "5:5", 0), TK_EINVAL);
	assert_int_equal(tk_export_add_spec(x, "x:1", 0), TK_EINVAL);
	assert_int_equal(tk_export_add_spec(x, "1:2;", 0), TK_EINVAL);
	assert_int_equal(tk_export_add_spec(x, "40=depth,41", 1), 0);
	assert_int_equal(tk_export_add_spec(x, "10", 1), TK_EINVAL); /* a pair's code */
	assert_int_equal(tk_export_add_pair(x, 3, 3, NULL), TK_EINVAL);
	assert_int_equal(tk_export_add_counter(x, 2000, NULL), TK_EINVAL);
	assert_int_equal(tk_export_finish(x), 0);
	assert_int_equal(tk_export_add_pair(x, 50, 51, NULL), TK_ESTATE); /* too late */
	tk_export_free(x);
	fclose(f);
	free(buf);

	/* a bad spec given to tk_export_file() is refused before the input is read */
	char err[256];
	f = open_memstream(&buf, &len);
	assert_int_equal(tk_export_file("no-such-file.kev", f, TK_EXPORT_CHROME_JSON, "1:", NULL, NULL, err,
					sizeof(err)),
			 TK_EINVAL);
	fclose(f);
	assert_int_equal(len, 0);
	assert_non_null(strstr(err, "bad user pair '1:'"));
	free(buf);

	/* the header declares 10:11 and 20:21, the caller 20:22: the header's 20:21 is skipped */
	const char *path = tkt_path("declared.kev");
	tk_kev_header hdr;
	tk_kev_attr attrs[1] = { { "TRACEKIT_USER_PAIRS", "10:11=from header,20:21,junk" } };
	tk_kev_writer *w = NULL;
	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u;
	hdr.attrs = attrs;
	hdr.n_attrs = 1;
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
	running(w, 1, 1, 1);
	user(w, 10, 10, 0, 0);
	user(w, 20, 11, 0, 0);
	user(w, 30, 20, 0, 0);
	user(w, 40, 22, 0, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);
	tk_export_stats st;
	char *json;
	assert_int_equal(export_to_string(path, "20:22=mine", NULL, &st, &json), 0);
	assert_int_equal(st.slices, 2);
	assert_non_null(strstr(json, "{\"name\":\"from header\",\"cat\":\"USER\",\"ph\":\"X\",\"ts\":0.010,\"dur\":0.010"));
	assert_non_null(strstr(json, "{\"name\":\"mine\",\"cat\":\"USER\",\"ph\":\"X\",\"ts\":0.030,\"dur\":0.010"));
	free(json);
	/* the caller's same pair under another name: the caller's name, not the header's */
	assert_int_equal(export_to_string(path, "10:11=opt", NULL, &st, &json), 0);
	assert_int_equal(st.slices, 2);
	assert_non_null(strstr(json, "{\"name\":\"opt\",\"cat\":\"USER\",\"ph\":\"X\",\"ts\":0.010,\"dur\":0.010"));
	assert_null(strstr(json, "from header"));
	free(json);
}

/* CONTROL DROPPED events' counts add up in lost_events, whatever the format and path. */
static void test_lost_events(void **state)
{
	(void)state;
	const char *path = tkt_path("lost.kev");
	tk_kev_writer *w = trace_open(path);
	running(w, 1, 1, 1);
	func(w, 10, 1, 0xa0);
	ev2(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_DROPPED, 20, 40, 0);
	func(w, 30, 0, 0xa0);
	ev2(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_DROPPED, 40, 2, 1); /* 2 + 2^32 */
	assert_int_equal(tk_kev_writer_close(w), 0);
	static const tk_export_format fmts[] = { TK_EXPORT_CHROME_JSON, TK_EXPORT_PERFETTO, TK_EXPORT_STATS_TEXT };
	for (unsigned i = 0; i < 3; i++) {
		char *buf = NULL, err[256];
		size_t len = 0;
		tk_export_stats st;
		FILE *f = open_memstream(&buf, &len);
		assert_int_equal(tk_export_file(path, f, fmts[i], NULL, NULL, &st, err, sizeof(err)), 0);
		fclose(f);
		assert_true(st.lost_events == 42 + (1ull << 32));
		if (fmts[i] == TK_EXPORT_STATS_TEXT)
			assert_non_null(strstr(buf, "4294967338 events lost by the recorder (CONTROL DROPPED)"));
		free(buf);
	}
}

/* A combine event whose last part never came (the file ends after its first slots) is
 * counted as such (convert says so, as traceprinter does). */
static void test_incomplete_combine(void **state)
{
	(void)state;
	const char *path = tkt_path("incomplete.kev");
	tk_kev_writer *w = trace_open(path);
	running(w, 1, 1, 1);
	user(w, 5, 10, 0, 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_USER_C, 31, 10, NULL, 0,
						"a string long enough for a combine event of several slots"),
			 0);
	assert_int_equal(tk_kev_writer_close(w), 0);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(truncate(path, sb.st_size - 16), 0); /* its last part */

	tk_export_stats st;
	char *json;
	assert_int_equal(export_to_string(path, NULL, NULL, &st, &json), 0);
	assert_int_equal(st.incomplete_events, 1);
	free(json);
}

/* Damage midway: what came before is exported in a complete document, the error says where. */
static void test_damaged_input(void **state)
{
	(void)state;
	const char *path = tkt_path("damaged.kev");
	tk_kev_writer *w = trace_open(path);
	running(w, 1, 1, 1);
	func(w, 10, 1, 0xa0);
	assert_int_equal(tk_kev_writer_close(w), 0);
	/* a partial slot at the end */
	FILE *f = fopen(path, "ab");
	assert_non_null(f);
	fwrite("\x01\x02\x03", 1, 3, f);
	fclose(f);

	char *buf = NULL, err[256];
	size_t len = 0;
	tk_export_stats st;
	f = open_memstream(&buf, &len);
	int rc = tk_export_file(path, f, TK_EXPORT_CHROME_JSON, NULL, NULL, &st, err, sizeof(err));
	fclose(f);
	if (rc != 0) { /* the parser reports the partial slot */
		assert_true(rc == TK_ETRUNC || rc == TK_ECORRUPT || rc == TK_EIO);
		assert_non_null(strstr(err, "byte offset"));
	}
	assert_int_equal(st.slices, 1);
	assert_int_equal(st.open_at_end, 1);
	assert_true(len > 4 && strcmp(buf + len - 4, "}}}\n") == 0);
	free(buf);

	/* a missing file: nothing written */
	f = open_memstream(&buf, &len);
	rc = tk_export_file(tkt_path("missing.kev"), f, TK_EXPORT_CHROME_JSON, NULL, NULL, NULL, err, sizeof(err));
	fclose(f);
	assert_int_equal(rc, TK_ENOENT);
	assert_int_equal(len, 0);
	free(buf);
}

/* A full disk: TK_EIO with the cause. */
static void test_write_error(void **state)
{
	(void)state;
	const char *path = tkt_path("big.kev");
	tk_kev_writer *w = trace_open(path);
	running(w, 1, 1, 1);
	for (unsigned i = 0; i < 20000; i++)
		user(w, 10 + i, 30, i, i);
	assert_int_equal(tk_kev_writer_close(w), 0);
	FILE *f = fopen("/dev/full", "w");
	if (f == NULL)
		skip();
	char err[256];
	int rc = tk_export_file(path, f, TK_EXPORT_CHROME_JSON, NULL, NULL, NULL, err, sizeof(err));
	fclose(f);
	assert_int_equal(rc, TK_EIO);
	assert_non_null(strstr(err, "No space left on device"));
}

static void test_api_errors(void **state)
{
	(void)state;
	tk_export *x = (tk_export *)1;
	assert_int_equal(tk_export_new(&x, TK_EXPORT_CHROME_JSON, NULL), TK_EINVAL);
	assert_null(x);
	assert_int_equal(tk_export_new(&x, (tk_export_format)99, stdout), TK_EINVAL);
	assert_int_equal(tk_export_new(NULL, TK_EXPORT_CHROME_JSON, stdout), TK_EINVAL);
	assert_int_equal(tk_export_event(NULL, NULL), TK_EINVAL);
	assert_int_equal(tk_export_finish(NULL), TK_EINVAL);
	assert_null(tk_export_get_stats(NULL));
	assert_string_equal(tk_export_errmsg(NULL), "");
	tk_export_free(NULL);
}

/* ---- Perfetto: a protobuf walker for the structural checks -------------------------------- */

struct pbr {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t pbr_varint(struct pbr *b)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end) {
			b->bad = 1;
			return 0;
		}
		unsigned char c = *b->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	b->bad = 1;
	return 0;
}

/* Next field: 1 with *field, and *v (varint) or *sub (length-delimited); 0 at the end. */
static int pbr_next(struct pbr *b, unsigned *field, uint64_t *v, struct pbr *sub)
{
	if (b->p >= b->end || b->bad)
		return 0;
	uint64_t key = pbr_varint(b);
	*field = (unsigned)(key >> 3);
	switch (key & 7) {
	case 0:
		*v = pbr_varint(b);
		sub->p = sub->end = NULL;
		return !b->bad;
	case 2: {
		uint64_t n = pbr_varint(b);
		if (b->bad || n > (uint64_t)(b->end - b->p)) {
			b->bad = 1;
			return 0;
		}
		sub->p = b->p;
		sub->end = b->p + n;
		sub->bad = 0;
		b->p += n;
		*v = n;
		return 1;
	}
	case 1: /* fixed64 (double_counter_value) */
		if (b->end - b->p < 8) {
			b->bad = 1;
			return 0;
		}
		*v = 0;
		for (int i = 7; i >= 0; i--)
			*v = *v << 8 | b->p[i];
		b->p += 8;
		sub->p = sub->end = NULL;
		return 1;
	default:
		b->bad = 1; /* the exporter writes no other wire types */
		return 0;
	}
}

#define PF_MAX_TRACKS 64
#define PF_MAX_SCHED 64

/* A scheduling record of the ftrace bundles: sched_switch (kind 1) or sched_waking (kind 2). */
struct pf_sched {
	int kind;
	unsigned cpu;
	uint64_t ts, pid;
	int64_t prev_pid, prev_prio, prev_state, next_pid, next_prio; /* waking: next_* = pid, prio */
	int64_t target_cpu, success;
	char prev_comm[32], next_comm[32]; /* waking: next_comm = comm */
};

struct pf_check {
	uint64_t tracks[PF_MAX_TRACKS];
	int depth[PF_MAX_TRACKS];
	unsigned n_tracks;
	uint64_t max_name, max_cat, max_arg; /* interned so far */
	unsigned begins, ends, instants, counters, packets, descriptors, named_threads, named_processes;
	unsigned switches, wakings, bundles;
	struct pf_sched sched[PF_MAX_SCHED]; /* the first ones, in file order */
	unsigned n_sched;
	int64_t thread_tid[PF_MAX_TRACKS]; /* ThreadDescriptor pid << 32 | tid, in order */
	unsigned n_thread_tid;
};

static int pf_track(struct pf_check *c, uint64_t uuid)
{
	for (unsigned i = 0; i < c->n_tracks; i++)
		if (c->tracks[i] == uuid)
			return (int)i;
	return -1;
}

static void pf_interned(struct pf_check *c, struct pbr *b)
{
	unsigned f;
	uint64_t v;
	struct pbr sub;
	while (pbr_next(b, &f, &v, &sub)) {
		unsigned g;
		uint64_t iid = 0, w;
		struct pbr s2;
		int named = 0;
		while (pbr_next(&sub, &g, &w, &s2)) {
			if (g == 1)
				iid = w;
			if (g == 2)
				named = 1;
		}
		assert_true(named);
		/* iids of each kind are given in order 1, 2, 3 ... */
		uint64_t *max = f == 1 ? &c->max_cat : f == 2 ? &c->max_name : &c->max_arg;
		assert_true(f >= 1 && f <= 3);
		assert_int_equal(iid, *max + 1);
		*max = iid;
	}
	assert_false(b->bad);
}

static void pf_event(struct pf_check *c, struct pbr *b, int has_ts, unsigned flags)
{
	unsigned f, type = 0;
	uint64_t v, track = 0;
	struct pbr sub;
	int named = 0;
	assert_true(has_ts);
	while (pbr_next(b, &f, &v, &sub)) {
		switch (f) {
		case 9:
			type = (unsigned)v;
			break;
		case 11:
			track = v;
			break;
		case 10:
			assert_true(v >= 1 && v <= c->max_name);
			named = 1;
			break;
		case 23:
			named = 1;
			break;
		case 3:
			assert_true(v >= 1 && v <= c->max_cat);
			break;
		case 4: { /* a debug annotation: an interned or inline name and one value */
			unsigned g, n_values = 0;
			uint64_t w;
			struct pbr s2;
			while (pbr_next(&sub, &g, &w, &s2)) {
				if (g == 1)
					assert_true(w >= 1 && w <= c->max_arg);
				else if (g != 10)
					n_values++;
			}
			assert_int_equal(n_values, 1);
			break;
		}
		default:
			break;
		}
	}
	assert_false(b->bad);
	int t = pf_track(c, track);
	assert_true(t >= 0); /* described before use */
	switch (type) {
	case 1:
		assert_true(named);
		assert_int_equal(flags, 2);
		c->depth[t]++;
		c->begins++;
		break;
	case 2:
		assert_true(c->depth[t] > 0); /* ends never outnumber begins */
		c->depth[t]--;
		c->ends++;
		break;
	case 3:
		assert_true(named);
		assert_int_equal(flags, 2);
		c->instants++;
		break;
	case 4:
		c->counters++;
		break;
	default:
		fail_msg("TrackEvent of type %u", type);
	}
}

static void pf_descriptor(struct pf_check *c, struct pbr *b)
{
	unsigned f;
	uint64_t v, uuid = 0, parent = 0;
	struct pbr sub;
	while (pbr_next(b, &f, &v, &sub)) {
		if (f == 1)
			uuid = v;
		else if (f == 5)
			parent = v;
		else if (f == 3 || f == 4) {
			unsigned g;
			uint64_t w, tpid = 0, ttid = 0;
			struct pbr s2;
			while (pbr_next(&sub, &g, &w, &s2)) {
				if (f == 4 && g == 5)
					c->named_threads++;
				if (f == 3 && g == 6)
					c->named_processes++;
				if (f == 4 && g == 1)
					tpid = w;
				if (f == 4 && g == 2)
					ttid = w;
			}
			if (f == 4 && c->n_thread_tid < PF_MAX_TRACKS)
				c->thread_tid[c->n_thread_tid++] = (int64_t)(tpid << 32 | (ttid & 0xffffffffu));
		}
	}
	assert_true(uuid != 0);
	if (parent != 0)
		assert_true(pf_track(c, parent) >= 0);
	if (pf_track(c, uuid) < 0) {
		assert_true(c->n_tracks < PF_MAX_TRACKS);
		c->tracks[c->n_tracks++] = uuid;
	}
	c->descriptors++;
}

static void pf_copy(char *dst, size_t cap, const struct pbr *s)
{
	size_t n = (size_t)(s->end - s->p);
	assert_true(n < cap);
	memcpy(dst, s->p, n);
	dst[n] = '\0';
}

/* An FtraceEventBundle: its CPU, then events in time order, each with a timestamp and one
 * sched_switch (every field) or sched_waking. */
static void pf_ftrace(struct pf_check *c, struct pbr *b)
{
	unsigned f, cpu = 0;
	uint64_t v, last_ts = 0;
	struct pbr sub;
	int has_cpu = 0, n_events = 0;
	while (pbr_next(b, &f, &v, &sub)) {
		if (f == 1) {
			cpu = (unsigned)v;
			has_cpu = 1;
			continue;
		}
		assert_int_equal(f, 2);
		assert_true(has_cpu); /* the CPU comes first */
		struct pf_sched r;
		unsigned g, h, n_rec = 0, fields = 0;
		uint64_t w, x;
		struct pbr s2, s3;
		int has_ts = 0;
		memset(&r, 0, sizeof(r));
		r.cpu = cpu;
		while (pbr_next(&sub, &g, &w, &s2)) {
			if (g == 1) {
				r.ts = w;
				has_ts = 1;
			} else if (g == 2) {
				r.pid = w;
			} else if (g == 4 || g == 20) {
				r.kind = g == 4 ? 1 : 2;
				n_rec++;
				while (pbr_next(&s2, &h, &x, &s3)) {
					fields |= 1u << h;
					if (g == 4) {
						if (h == 1)
							pf_copy(r.prev_comm, sizeof(r.prev_comm), &s3);
						else if (h == 2)
							r.prev_pid = (int32_t)x;
						else if (h == 3)
							r.prev_prio = (int32_t)x;
						else if (h == 4)
							r.prev_state = (int64_t)x;
						else if (h == 5)
							pf_copy(r.next_comm, sizeof(r.next_comm), &s3);
						else if (h == 6)
							r.next_pid = (int32_t)x;
						else if (h == 7)
							r.next_prio = (int32_t)x;
					} else {
						if (h == 1)
							pf_copy(r.next_comm, sizeof(r.next_comm), &s3);
						else if (h == 2)
							r.next_pid = (int32_t)x;
						else if (h == 3)
							r.next_prio = (int32_t)x;
						else if (h == 4)
							r.success = (int32_t)x;
						else if (h == 5)
							r.target_cpu = (int32_t)x;
					}
				}
				assert_false(s2.bad);
			} else {
				fail_msg("unexpected FtraceEvent field %u", g);
			}
		}
		assert_false(sub.bad);
		assert_true(has_ts);
		assert_int_equal(n_rec, 1);
		assert_int_equal(fields, r.kind == 1 ? 0xfeu : 0x3eu); /* every field written */
		assert_true(r.ts >= last_ts);
		last_ts = r.ts;
		if (r.kind == 1)
			c->switches++;
		else
			c->wakings++;
		if (c->n_sched < PF_MAX_SCHED)
			c->sched[c->n_sched++] = r;
		n_events++;
	}
	assert_false(b->bad);
	assert_true(n_events > 0);
	c->bundles++;
}

/* Walks a whole Perfetto export: packets, sequence, interning, tracks, slice balance. */
static void pf_walk(const void *data, size_t len, struct pf_check *c)
{
	struct pbr top = { data, (const unsigned char *)data + len, 0 }, pkt;
	unsigned f;
	uint64_t v;

	memset(c, 0, sizeof(*c));
	while (pbr_next(&top, &f, &v, &pkt)) {
		assert_int_equal(f, 1); /* Trace.packet */
		unsigned g, flags = 0;
		uint64_t w, seq = 0;
		int has_ts = 0;
		struct pbr sub, ev = { NULL, NULL, 0 }, desc = { NULL, NULL, 0 }, interned = { NULL, NULL, 0 },
				ftrace = { NULL, NULL, 0 };
		while (pbr_next(&pkt, &g, &w, &sub)) {
			if (g == 1)
				ftrace = sub;
			else if (g == 10)
				seq = w;
			else if (g == 13)
				flags = (unsigned)w;
			else if (g == 8)
				has_ts = 1;
			else if (g == 11)
				ev = sub;
			else if (g == 12)
				interned = sub;
			else if (g == 60)
				desc = sub;
			else
				fail_msg("unexpected TracePacket field %u", g);
		}
		assert_false(pkt.bad);
		assert_int_equal(seq, 1);
		if (c->packets == 0)
			assert_int_equal(flags, 1); /* the first packet clears the incremental state */
		else
			assert_true(flags == 0 || flags == 2);
		if (interned.p != NULL)
			pf_interned(c, &interned);
		if (desc.p != NULL)
			pf_descriptor(c, &desc);
		if (ev.p != NULL)
			pf_event(c, &ev, has_ts, flags);
		if (ftrace.p != NULL) {
			assert_true(ev.p == NULL && desc.p == NULL && interned.p == NULL);
			pf_ftrace(c, &ftrace);
		}
		c->packets++;
	}
	assert_false(top.bad);
	for (unsigned i = 0; i < c->n_tracks; i++)
		assert_int_equal(c->depth[i], 0); /* every slice ended */
}

static int export_perfetto(const char *path, const char *pairs, const char *counters, tk_export_stats *st,
			   char **out, size_t *len)
{
	char err[256];
	FILE *f = open_memstream(out, len);
	assert_non_null(f);
	int rc = tk_export_file(path, f, TK_EXPORT_PERFETTO, pairs, counters, st, err, sizeof(err));
	fclose(f);
	return rc;
}

/* The nesting trace plus names and a counter, as Perfetto packets. */
static void test_perfetto_structure(void **state)
{
	(void)state;
	const char *path = tkt_path("perfetto.kev");
	tk_kev_writer *w = trace_open(path);
	uint32_t pp[2] = { 1, 7 }, pt[2] = { 7, 1 };
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, 500, pp, 2, "app"),
			 0);
	running(w, 1000, 7, 1);
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, 1100, pt, 2, "main"), 0);
	func(w, 2000, 1, 0xa0);
	func(w, 3000, 1, 0xb0);
	func(w, 4000, 0, 0xa0);
	func(w, 5000, 0, 0xc0);
	user(w, 6000, 10, 1, 2);
	user(w, 6500, 40, 9, 0);
	user(w, 7500, 11, 3, 4);
	func(w, 8000, 1, 0xd0);
	user(w, 9000, 20, 5, 6);
	running(w, 9500, 7, 2);
	func(w, 9600, 1, 0xa0); /* interned name used again, on another thread */
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_export_stats st;
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(export_perfetto(path, "10:11=step", "40=depth", &st, &buf, &len), 0);
	struct pf_check c;
	pf_walk(buf, len, &c);
	assert_int_equal(c.begins, st.slices);
	assert_int_equal(c.ends, st.slices);
	assert_int_equal(st.slices, 5);
	assert_int_equal(c.instants, st.instants);
	assert_int_equal(c.counters, 1);
	assert_int_equal(c.named_processes, 1);
	assert_int_equal(c.named_threads, 1);
	/* tracks: no-thread, process 7, threads 7/1 and 7/2, the counter */
	assert_int_equal(c.n_tracks, 5);
	assert_int_equal(c.max_name, 6); /* THRUNNING 0xa0 0xb0 step 0xd0 "USER 20", each once */
	/* the two THRUNNING on CPU 0: idle -> 7/1 (not named yet: its process's name), then
	 * 7/1 "main" (preempted, R) -> 7/2 */
	assert_int_equal(c.switches, 2);
	assert_int_equal(c.bundles, 1);
	assert_int_equal(c.sched[0].next_pid, 1);
	assert_int_equal(c.sched[0].prev_pid, 0);
	assert_string_equal(c.sched[0].next_comm, "app");
	assert_int_equal(c.sched[1].prev_pid, 1);
	assert_string_equal(c.sched[1].prev_comm, "main");
	assert_int_equal(c.sched[1].prev_state, 0);
	assert_int_equal(c.sched[1].next_pid, 2);
	free(buf);
}

/* Pids that differ only in their top bits (above 2^30, and above 2^31: negative as the
 * trace's int32) are threads of their own, on tracks of their own. */
static void test_perfetto_high_pids(void **state)
{
	(void)state;
	const char *path = tkt_path("perfetto_pids.kev");
	tk_kev_writer *w = trace_open(path);
	const uint32_t pids[4] = { 5, 5u | 1u << 30, 5u | 1u << 31, 5u | 3u << 30 };
	for (unsigned i = 0; i < 4; i++) {
		running(w, 1000 + 100 * i, pids[i], 1);
		func(w, 1010 + 100 * i, 1, 0xa0);
		func(w, 1020 + 100 * i, 0, 0xa0);
	}
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_export_stats st;
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(export_perfetto(path, NULL, NULL, &st, &buf, &len), 0);
	struct pf_check c;
	pf_walk(buf, len, &c);
	assert_int_equal(st.slices, 4);
	assert_int_equal(c.begins, 4);
	/* the no-thread track, four processes and four threads */
	assert_int_equal(c.n_tracks, 9);
	assert_int_equal(c.n_thread_tid, 4);
	for (unsigned i = 0; i < 4; i++)
		for (unsigned j = i + 1; j < 4; j++)
			assert_true(c.thread_tid[i] != c.thread_tid[j]);
	free(buf);
}

/* Names declared with bytes that are not UTF-8 (a pair's, a counter's: from the options or
 * the trace's header) are read as Latin-1 in both exports, as event strings are: \u00XX in
 * the JSON, the same characters as UTF-8 in Perfetto's strings, which must be valid UTF-8. */
static void test_names_invalid_utf8(void **state)
{
	(void)state;
	const char *path = tkt_path("latin1.kev");
	tk_kev_writer *w = trace_open(path);
	running(w, 1, 5, 6);
	user(w, 1000, 10, 0, 0);
	user(w, 2000, 40, 7, 0);
	user(w, 3000, 11, 0, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_export_stats st;
	char *json, *pf;
	size_t pf_len;
	assert_int_equal(export_to_string(path, "10:11=A\xe9" "B", "40=C\xff\xfe" "D", &st, &json), 0);
	assert_int_equal(st.counters, 1);
	assert_non_null(strstr(json, "{\"name\":\"A\\u00e9B\",\"cat\":\"USER\""));
	assert_non_null(strstr(json, "{\"name\":\"C\\u00ff\\u00feD\",\"ph\":\"C\""));
	for (const char *c = json; *c != '\0'; c++)
		assert_true((unsigned char)*c < 0x80); /* nothing but ASCII and escapes here */
	free(json);

	assert_int_equal(export_perfetto(path, "10:11=A\xe9" "B", "40=C\xff\xfe" "D", &st, &pf, &pf_len), 0);
	assert_non_null(memmem(pf, pf_len, "A\xc3\xa9" "B", 4));
	assert_non_null(memmem(pf, pf_len, "C\xc3\xbf\xc3\xbe" "D", 6));
	assert_null(memmem(pf, pf_len, "A\xe9" "B", 3));
	assert_null(memmem(pf, pf_len, "C\xff\xfe" "D", 4));
	struct pf_check c;
	memset(&c, 0, sizeof(c));
	pf_walk(pf, pf_len, &c);
	free(pf);
}

static void state(tk_kev_writer *w, unsigned cpu, uint64_t t, unsigned st, uint32_t pid, uint32_t tid);

static void sched_is(const struct pf_sched *r, unsigned cpu, uint64_t ts, int64_t prev_pid, int64_t prev_state,
		     int64_t next_pid);

/* Damage midway in the Perfetto export: the scheduling records and slices before it are
 * written (bundles flushed, open slices ended), the error says where, a non-zero status. */
static void test_perfetto_damaged(void **state_)
{
	(void)state_;
	const char *path = tkt_path("pfdamaged.kev");
	tk_kev_writer *w = trace_open(path);
	state(w, 0, 1000, STATE_RUNNING, 1, 1);
	state(w, 1, 1500, STATE_RUNNING, 1, 2);
	func(w, 2000, 1, 0xa0);
	state(w, 0, 3000, STATE_RECEIVE, 1, 1);
	assert_int_equal(tk_kev_writer_close(w), 0);
	FILE *f = fopen(path, "ab"); /* a partial slot at the end */
	assert_non_null(f);
	fwrite("\x01\x02\x03\x04\x05", 1, 5, f);
	fclose(f);

	char *buf = NULL, err[256];
	size_t len = 0;
	tk_export_stats st;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	int rc = tk_export_file(path, f, TK_EXPORT_PERFETTO, NULL, NULL, &st, err, sizeof(err));
	fclose(f);
	assert_true(rc == TK_ETRUNC || rc == TK_ECORRUPT);
	assert_non_null(strstr(err, "byte offset"));
	struct pf_check c;
	pf_walk(buf, len, &c); /* every slice ended */
	assert_int_equal(c.begins, 1);
	assert_int_equal(c.ends, 1);
	assert_int_equal(c.switches, 3);
	assert_int_equal(c.bundles, 2);
	sched_is(&c.sched[1], 0, 3000, 1, 1, 0); /* the last record before the damage */
	free(buf);
}

/* An event whose packet is larger than the output buffer (200000 payload words of no known
 * layout, written as text: 2.2 MB) is exported whole. */
static void test_perfetto_long_payload(void **state_)
{
	(void)state_;
	const char *path = tkt_path("pflong.kev");
	tk_kev_writer *w = trace_open(path);
	size_t n = 200000;
	uint32_t *words = malloc(n * sizeof(*words));
	assert_non_null(words);
	for (size_t i = 0; i < n; i++)
		words[i] = 0x10000000u + (uint32_t)i;
	running(w, 1000, 7, 1);
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_QVM_C, 1000, 2000, words, n), 0);
	user(w, 3000, 20, 1, 2);
	assert_int_equal(tk_kev_writer_close(w), 0);
	free(words);

	tk_export_stats st;
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(export_perfetto(path, NULL, NULL, &st, &buf, &len), 0);
	struct pf_check c;
	pf_walk(buf, len, &c);
	assert_int_equal(c.instants, st.instants);
	assert_int_equal(st.instants, 3);
	assert_true(len > n * 11);
	/* the last word's text, then the next packet */
	const char *last = "0x10030d3f";
	assert_non_null(memmem(buf, len, last, strlen(last)));
	free(buf);
}

static void sched_is(const struct pf_sched *r, unsigned cpu, uint64_t ts, int64_t prev_pid, int64_t prev_state,
		     int64_t next_pid)
{
	assert_int_equal(r->kind, 1);
	assert_int_equal(r->cpu, cpu);
	assert_int_equal(r->ts, ts);
	assert_int_equal(r->pid, prev_pid);
	assert_int_equal(r->prev_pid, prev_pid);
	assert_int_equal(r->prev_state, prev_state);
	assert_int_equal(r->next_pid, next_pid);
}

/* THREAD states as Perfetto's scheduling records: switch-ins, preemption (R), blocked states
 * (S, D, X), wakeups, a migration, priorities of wide events, thread names as comm, a tid
 * two processes have, and in a tracekit recording the owner markers left out. */
static void test_perfetto_sched(void **state_)
{
	(void)state_;
	const char *path = tkt_path("pfsched.kev");
	tk_kev_writer *w = trace_open(path);
	uint32_t pt[2] = { 1, 2 }, wide[4] = { 1, 2, 10, 2 };
	state(w, 0, 1000, STATE_RUNNING, 1, 1);
	state(w, 0, 2000, STATE_RUNNING, 1, 2);  /* 1/1 preempted */
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, 2500, pt, 2, "worker"), 0);
	state(w, 0, 4000, STATE_RECEIVE, 1, 2);  /* blocked: S */
	state(w, 1, 4000, STATE_RUNNING, 1, 1);  /* on CPU 1 */
	state(w, 0, 5000, STATE_READY, 1, 2);    /* woken */
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_PR_TH_C, STATE_RUNNING, 7000, wide, 4), 0); /* priority 10 */
	state(w, 1, 8000, STATE_WAITPAGE, 1, 1); /* D */
	state(w, 1, 8500, STATE_RUNNING, 1, 2);  /* migrates from CPU 0 */
	state(w, 1, 9000, STATE_DEAD, 1, 2);     /* X */
	uint32_t p3[2] = { 3, 1 }; /* a name longer than a comm, a 2-byte character across byte 32 */
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, 9400, p3, 2,
						"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9" "bbbb"),
			 0);
	state(w, 0, 9500, STATE_RUNNING, 3, 1);  /* another process's thread 1 */
	state(w, 0, 9600, STATE_REPLY, 1, 1);    /* blocked, not running: nothing */
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_export_stats st;
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(export_perfetto(path, NULL, NULL, &st, &buf, &len), 0);
	struct pf_check c;
	pf_walk(buf, len, &c);
	assert_int_equal(c.switches, 10);
	assert_int_equal(c.wakings, 1);
	assert_int_equal(c.bundles, 2); /* one per CPU */
	/* bundles in CPU order at the end: CPU 0's records, then CPU 1's */
	sched_is(&c.sched[0], 0, 1000, 0, 0, 1);
	assert_string_equal(c.sched[0].prev_comm, "swapper/0");
	assert_int_equal(c.sched[0].next_prio, 120);
	sched_is(&c.sched[1], 0, 2000, 1, 0, 2); /* preempted: R */
	sched_is(&c.sched[2], 0, 4000, 2, 1, 0); /* RECEIVE: S */
	assert_string_equal(c.sched[2].prev_comm, "worker");
	assert_int_equal(c.sched[3].kind, 2); /* sched_waking of 2, where it ran last */
	assert_int_equal(c.sched[3].ts, 5000);
	assert_int_equal(c.sched[3].next_pid, 2);
	assert_string_equal(c.sched[3].next_comm, "worker");
	assert_int_equal(c.sched[3].target_cpu, 0);
	assert_int_equal(c.sched[3].success, 1);
	assert_int_equal(c.sched[3].pid, 0); /* the waker: CPU 0 is idle */
	sched_is(&c.sched[4], 0, 7000, 0, 0, 2);
	assert_int_equal(c.sched[4].next_prio, 10);
	sched_is(&c.sched[5], 0, 8500, 2, 0, 0); /* left CPU 0 when it came to CPU 1 */
	sched_is(&c.sched[6], 0, 9500, 0, 0, 1000000000); /* 3/1: a tid of its own */
	assert_string_equal(c.sched[6].next_comm, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"); /* not cut inside the character */
	sched_is(&c.sched[7], 1, 4000, 0, 0, 1);
	sched_is(&c.sched[8], 1, 8000, 1, 2, 0); /* WAITPAGE: D */
	sched_is(&c.sched[9], 1, 8500, 0, 0, 2);
	sched_is(&c.sched[10], 1, 9000, 2, 0x10, 0); /* DEAD: X */
	assert_int_equal(c.sched[10].prev_prio, 10);
	/* the thread descriptors say the same tids: 1/1, 1/2, 3/1000000000 */
	int found = 0;
	for (unsigned i = 0; i < c.n_thread_tid; i++)
		found |= c.thread_tid[i] == ((int64_t)3 << 32 | 1000000000) ? 1
			 : c.thread_tid[i] == ((int64_t)1 << 32 | 2)       ? 2
			 : c.thread_tid[i] == ((int64_t)3 << 32 | 1)       ? 4
									   : 0;
	assert_int_equal(found, 3);
	free(buf);

	/* a tracekit recording: the THRUNNING after each BUFFER only names the owner */
	path = tkt_path("pfmarkers.kev");
	tk_kev_header hdr;
	tk_kev_attr attrs[1] = { { "TRACEKIT_OWNER", "buffer" } };
	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u;
	hdr.attrs = attrs;
	hdr.n_attrs = 1;
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
	ev2(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, 100, 1, 16);
	state(w, 0, 100, STATE_RUNNING, 5, 6); /* the owner marker */
	state(w, 0, 200, STATE_READY, 5, 7);   /* a wakeup */
	ev2(w, 0, _TRACE_USER_C, 1, 300, 0, 0);
	ev2(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, 400, 2, 16);
	state(w, 0, 400, STATE_RUNNING, 5, 7); /* the owner marker */
	state(w, 0, 450, STATE_RUNNING, 5, 6); /* a switch */
	assert_int_equal(tk_kev_writer_close(w), 0);
	buf = NULL;
	assert_int_equal(export_perfetto(path, NULL, NULL, &st, &buf, &len), 0);
	pf_walk(buf, len, &c);
	assert_int_equal(c.wakings, 1);
	assert_int_equal(c.switches, 1);
	assert_int_equal(c.sched[0].next_pid, 7);
	sched_is(&c.sched[1], 0, 450, 0, 0, 6);
	free(buf);
}

/* ---- statistics ----------------------------------------------------------------------------- */

static void state(tk_kev_writer *w, unsigned cpu, uint64_t t, unsigned st, uint32_t pid, uint32_t tid)
{
	ev2(w, cpu, _TRACE_PR_TH_C, st, t, pid, tid);
}

static int export_stats(const char *path, tk_export_format fmt, const char *pairs, char **out)
{
	char err[256];
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	assert_non_null(f);
	int rc = tk_export_file(path, f, fmt, pairs, NULL, NULL, err, sizeof(err));
	fclose(f);
	return rc;
}

/* Linux system calls (TRACEKIT_KERCALLS, docs/kev-format.md 4.4): call n is coded
 * (n & 0x7f) | (n >> 7) << 8, plus 0x80 on exit, so that the entry of openat (257) has a code
 * of 128 and above. Its entry opens a slice and its exit closes it, as for write (1): a
 * kernel-call slice each in the exports and a line each in the statistics, no unmatched end. */
static void test_linux_kercalls(void **state_)
{
	(void)state_;
	const char *path = tkt_path("linux_kercalls.kev");
	tk_kev_header hdr;
	tk_kev_attr abi = { "TRACEKIT_KERCALLS", "linux-x86_64" };
	tk_kev_writer *w = NULL;
	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u;
	hdr.cpu_num = 1;
	hdr.attrs = &abi;
	hdr.n_attrs = 1;
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
	running(w, 1000, 100, 7);
	ev2(w, 0, _TRACE_KER_CALL_C, (257 & 0x7f) | (257 >> 7) << 8, 2000, 3, 4);        /* openat */
	ev2(w, 0, _TRACE_KER_CALL_C, (257 & 0x7f) | (257 >> 7) << 8 | 0x80, 3500, 3, 0); /* its exit */
	ev2(w, 0, _TRACE_KER_CALL_C, 1, 4000, 3, 4);                                     /* write */
	ev2(w, 0, _TRACE_KER_CALL_C, 1 | 0x80, 5000, 3, 0);
	ev2(w, 0, _TRACE_KER_CALL_C, (511 & 0x7f) | (511 >> 7) << 8, 6000, 0, 0);       /* 511: the last */
	ev2(w, 0, _TRACE_KER_CALL_C, (511 & 0x7f) | (511 >> 7) << 8 | 0x80, 6250, 0, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	char *out = NULL;
	tk_export_stats st;
	memset(&st, 0, sizeof(st));
	assert_int_equal(export_to_string(path, NULL, NULL, &st, &out), 0);
	assert_int_equal(st.slices, 3);
	assert_int_equal(st.unmatched_ends, 0);
	assert_non_null(strstr(out, "\"name\":\"openat\",\"cat\":\"KERCALL\",\"ph\":\"X\",\"ts\":2.000,\"dur\":1.500"));
	free(out);

	out = NULL;
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_CSV, NULL, &out), 0);
	assert_non_null(strstr(out, "kercall,,,,,openat,1,1500,1500,1500,"));
	assert_non_null(strstr(out, "kercall,,,,,write,1,1000,1000,1000,"));
	assert_non_null(strstr(out, ",1,250,250,250,")); /* call 511, named or not */
	free(out);
	out = NULL;
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_TEXT, NULL, &out), 0);
	assert_non_null(strstr(out, "Unmatched ends 0,"));
	free(out);
}

/* Thread states of a QNX-style trace (the owner is the last THRUNNING of the CPU): time
 * running, ready, blocked; a preempted thread counts as ready; switches and migrations;
 * user intervals and kernel calls with a real end. */
static void test_stats_states(void **state_)
{
	(void)state_;
	const char *path = tkt_path("states.kev");
	tk_kev_writer *w = trace_open(path);
	state(w, 0, 1000, STATE_RUNNING, 1, 1);
	state(w, 0, 2000, STATE_RUNNING, 1, 2);  /* 1/1 preempted: ready */
	state(w, 0, 4000, STATE_RECEIVE, 1, 2);  /* blocked */
	state(w, 1, 4000, STATE_RUNNING, 1, 1);  /* on another CPU: a migration */
	state(w, 0, 5000, STATE_READY, 1, 2);
	state(w, 0, 7000, STATE_RUNNING, 1, 2);
	ev2(w, 1, _TRACE_USER_C, 10, 8000, 0, 0);  /* 1/1: an interval of 1.5 us */
	ev2(w, 1, _TRACE_USER_C, 11, 9500, 0, 0);
	ev2(w, 1, _TRACE_USER_C, 10, 9600, 0, 0);  /* never ends: not counted */
	ev2(w, 1, _TRACE_KER_CALL_C, __KER_MSG_SENDV, 9700, 3, 4);
	ev2(w, 1, _TRACE_KER_CALL_C, _TRACE_MAX_KER_CALL_NUM + __KER_MSG_SENDV, 9900, 0, 0);
	ev2(w, 0, _TRACE_USER_C, 30, 10000, 0, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	char *txt;
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_TEXT, "10:11=req", &txt), 0);
	/* 1/1: running 1-2 and 4-10 us, ready 2-4 us; 1/2: running 2-4 and 7-10, blocked 4-5, ready 5-7 */
	assert_non_null(strstr(txt, "         1          1          7            7.000            2.000            0.000         2          1"));
	assert_non_null(strstr(txt, "         1          2          5            5.000            2.000            1.000         2          0"));
	assert_non_null(strstr(txt, "req                               1            1.500            1.500            1.500"));
	assert_non_null(strstr(txt, "MSG_SENDV                         1            0.200            0.200            0.200"));
	assert_non_null(strstr(txt, "KERCALLENTER       MSG_SENDV                           1\n"));
	assert_non_null(strstr(txt, "(time from THREAD state events: 6 followed)"));
	assert_non_null(strstr(txt, "open at the end 1,"));
	free(txt);

	char *csv;
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_CSV, "10:11=req", &csv), 0);
	assert_true(strncmp(csv, "table,pid,tid,class,event,name,count,total_ns,mean_ns,max_ns,running_ns,ready_ns,"
				 "blocked_ns,switches,migrations,p50_ns,p90_ns,p99_ns\n", 133) == 0);
	assert_non_null(strstr(csv, "\nthread,1,1,,,,7,,,,7000,2000,0,2,1,,,\n"));
	assert_non_null(strstr(csv, "\nthread,1,2,,,,5,,,,5000,2000,1000,2,0,,,\n"));
	assert_non_null(strstr(csv, "\ninterval,,,,,req,1,1500,1500,1500,,,,,,1500,1500,1500\n"));
	assert_non_null(strstr(csv, "\nkercall,,,,,MSG_SENDV,1,200,200,200,,,,,,200,200,200\n"));
	assert_non_null(strstr(csv, "\nprocess,1,,,,,12,,,,12000,,,,,,,\n"));
	free(csv);

	char *json;
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_JSON, "10:11=req", &json), 0);
	assert_non_null(strstr(json, "{\"pid\":1,\"tid\":1,\"name\":\"\",\"events\":7,\"running_ns\":7000,"
				     "\"ready_ns\":2000,\"blocked_ns\":0,\"switches\":2,\"migrations\":1}"));
	assert_non_null(strstr(json, "\"user_intervals\":[\n{\"name\":\"req\",\"count\":1,\"total_ns\":1500,"));
	free(json);
}

/* Percentiles of intervals: 100 intervals of 1, 2 ... 100 us; each percentile is the upper
 * end of its histogram bucket (8 per power of two), at most the maximum. */
static void test_stats_percentiles(void **state_)
{
	(void)state_;
	const char *path = tkt_path("pct.kev");
	tk_kev_writer *w = trace_open(path);
	uint64_t t = 1000;
	state(w, 0, t, STATE_RUNNING, 1, 1);
	for (unsigned i = 1; i <= 100; i++) {
		ev2(w, 0, _TRACE_USER_C, 10, t += 10, i, 0);
		ev2(w, 0, _TRACE_USER_C, 11, t += 1000u * i, i, 0);
	}
	assert_int_equal(tk_kev_writer_close(w), 0);
	char *json;
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_JSON, "10:11=op", &json), 0);
	/* p50 = 50 us: bucket [49152, 53247]; p90 = 90 us: [86016, 90111]; p99 = 99 us: [98304,
	 * 106495], capped at the maximum, 100 us */
	assert_non_null(strstr(json, "{\"name\":\"op\",\"count\":100,\"total_ns\":5050000,\"mean_ns\":50500,"
				     "\"max_ns\":100000,\"p50_ns\":53247,\"p90_ns\":90111,\"p99_ns\":100000}"));
	free(json);
}

/* Declared pair names from a trace's own header (or --pair) go out as every other name: no
 * control character in the text report (a terminal escape shows as '?'), RFC 4180 quoting
 * in CSV. */
static void test_stats_pair_names_safe(void **state_)
{
	(void)state_;
	const char *path = tkt_path("stats_pair_names.kev");
	tk_kev_header hdr;
	tk_kev_attr attrs[1] = { { "TRACEKIT_USER_PAIRS", "10:11=a\"b\033[31mRED" } };
	tk_kev_writer *w = NULL;
	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u;
	hdr.attrs = attrs;
	hdr.n_attrs = 1;
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
	state(w, 0, 100, STATE_RUNNING, 1, 1);
	ev2(w, 0, _TRACE_USER_C, 10, 200, 0, 0);
	ev2(w, 0, _TRACE_USER_C, 11, 1200, 0, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	char *txt;
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_TEXT, NULL, &txt), 0);
	assert_null(strchr(txt, '\033'));
	assert_non_null(strstr(txt, "\na\"b?[31mRED                       1            1.000"));
	free(txt);
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_CSV, NULL, &txt), 0);
	assert_non_null(strstr(txt, "\ninterval,,,,,\"a\"\"b\033[31mRED\",1,1000,"));
	free(txt);
}

/* Names in the statistics: UTF-8 kept as it is in JSON (not read as Latin-1), cut between
 * characters when too long; a name that is not UTF-8 escaped so that the JSON stays valid. */
static void test_stats_names_utf8(void **state_)
{
	(void)state_;
	const char *path = tkt_path("stats_names.kev");
	tk_kev_writer *w = trace_open(path);
	uint32_t pp[2] = { 1, 42 }, pt[2] = { 42, 3 }, pt2[2] = { 42, 4 };
	/* 62 ASCII bytes, then é (2 bytes): the thread name (63 bytes at most) ends before the é */
	char long_name[80];
	memset(long_name, 'x', 62);
	strcpy(long_name + 62, "\xc3\xa9tail");
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, 10, pp, 2,
						"caf\xc3\xa9-\xe2\x82\xac"),
			 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, 20, pt, 2, long_name), 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, 30, pt2, 2, "bad\xff"), 0);
	state(w, 0, 40, STATE_RUNNING, 42, 3);
	state(w, 0, 50, STATE_RUNNING, 42, 4);
	assert_int_equal(tk_kev_writer_close(w), 0);

	char *json;
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_JSON, NULL, &json), 0);
	assert_non_null(strstr(json, "\"name\":\"caf\xc3\xa9-\xe2\x82\xac\""));
	char want[100];
	snprintf(want, sizeof(want), "\"name\":\"%.62s\"", long_name);
	assert_non_null(strstr(json, want));
	assert_non_null(strstr(json, "\"name\":\"bad\\u00ff\""));
	free(json);
}

/* In a tracekit recording (TRACEKIT_OWNER=buffer) the THRUNNING after a BUFFER only names
 * the buffer's owner: it is no state change. */
static void test_stats_owner_markers(void **state_)
{
	(void)state_;
	const char *path = tkt_path("markers.kev");
	tk_kev_header hdr;
	tk_kev_attr attrs[1] = { { "TRACEKIT_OWNER", "buffer" } };
	tk_kev_writer *w = NULL;
	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u;
	hdr.attrs = attrs;
	hdr.n_attrs = 1;
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
	ev2(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, 100, 1, 16);
	state(w, 0, 100, STATE_RUNNING, 5, 6); /* the owner marker */
	state(w, 0, 200, STATE_READY, 5, 7);   /* a real state change */
	ev2(w, 0, _TRACE_USER_C, 1, 300, 0, 0);
	ev2(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, 400, 2, 16);
	state(w, 0, 400, STATE_RUNNING, 5, 7);
	ev2(w, 0, _TRACE_USER_C, 1, 500, 0, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	char *txt;
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_TEXT, NULL, &txt), 0);
	assert_non_null(strstr(txt, "(time from THREAD state events: 1 followed)"));
	/* 5/6 owns THRUNNING, THREADY and USER 1; 5/7 owns THRUNNING and USER 1; 5/7 ready 0.2-0.5 us */
	assert_non_null(strstr(txt, "         5          6          3            0.000            0.000            0.000         0          0"));
	assert_non_null(strstr(txt, "         5          7          2            0.000            0.300            0.000         0          0"));
	free(txt);
}

/* ---- SQLite --------------------------------------------------------------------------------- */

static int64_t sql_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = -1;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* tracelogger's files (TRACEKIT_OWNER=cpu): owners by QNX's per-CPU rule; the THRUNNING
 * right after a CONTROL BUFFER of its CPU is an owner marker, no switch, in the statistics,
 * SQLite's thread_states and Perfetto's sched records alike. */
static void test_owner_markers_cpu(void **state_)
{
	(void)state_;
	const char *path = tkt_path("markers_cpu.kev");
	tk_kev_header hdr;
	tk_kev_attr attrs[1] = { { "TRACEKIT_OWNER", "cpu" } };
	tk_kev_writer *w = NULL;
	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u;
	hdr.attrs = attrs;
	hdr.n_attrs = 1;
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
	ev2(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, 100, 0, 0);
	state(w, 0, 100, STATE_RUNNING, 5, 6); /* marker: CPU 0 is 5/6's */
	ev2(w, 0, _TRACE_USER_C, 1, 150, 0, 0);
	ev2(w, 1, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, 200, 0, 0);
	state(w, 1, 200, STATE_RUNNING, 5, 7); /* marker: CPU 1 is 5/7's */
	ev2(w, 0, _TRACE_USER_C, 1, 250, 0, 0); /* still 5/6's: its own CPU */
	ev2(w, 1, _TRACE_USER_C, 1, 300, 0, 0);
	ev2(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, 400, 0, 0);
	state(w, 0, 400, STATE_RUNNING, 5, 7); /* marker: 5/7 on CPU 0 now */
	ev2(w, 0, _TRACE_USER_C, 1, 500, 0, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	char *txt;
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_TEXT, NULL, &txt), 0);
	assert_non_null(strstr(txt, "(time from THREAD state events: 0 followed)"));
	/* 5/6: its marker and 2 USER 1; 5/7: 2 markers and 2 USER 1; no time, no switch */
	assert_non_null(strstr(txt, "         5          6          3            0.000            0.000            0.000         0          0"));
	assert_non_null(strstr(txt, "         5          7          4            0.000            0.000            0.000         0          0"));
	free(txt);

	const char *db_path = tkt_path("markers_cpu.db");
	char err[256];
	sqlite3 *db;
	assert_int_equal(tk_export_sqlite(path, db_path, NULL, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM thread_states"), 0);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events WHERE tid=7 AND event='USER 1'"), 2);
	sqlite3_close(db);

	/* Perfetto: no sched records */
	char *pf = NULL;
	size_t pf_len = 0;
	struct pf_check c;
	assert_int_equal(export_perfetto(path, NULL, NULL, NULL, &pf, &pf_len), 0);
	pf_walk(pf, pf_len, &c);
	assert_int_equal(c.switches, 0);
	assert_int_equal(c.wakings, 0);
	free(pf);

	/* the same file without the attribute: the markers are switches (QNX's reading) */
	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u;
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
	ev2(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, 100, 0, 0);
	state(w, 0, 100, STATE_RUNNING, 5, 6);
	ev2(w, 0, _TRACE_USER_C, 1, 150, 0, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);
	assert_int_equal(export_stats(path, TK_EXPORT_STATS_TEXT, NULL, &txt), 0);
	assert_non_null(strstr(txt, "(time from THREAD state events: 1 followed)"));
	free(txt);
}

/* The states trace as a database: thread-state intervals add up to the statistics' times,
 * slices, events with their fields as JSON, names. */
/* An event with a string of 70000 bytes keeps all of it in events.args (it was replaced by
 * {"truncated":true} past the scratch buffer's 1 MiB at 16 bytes a byte). */
static void test_sqlite_long_string(void **state_)
{
	(void)state_;
	const char *path = tkt_path("sq_long.kev");
	tk_kev_writer *w = trace_open(path);
	const size_t n = 70000;
	char *str = malloc(n + 1);
	assert_non_null(str);
	for (size_t i = 0; i < n; i++)
		str[i] = (char)('a' + i % 26);
	str[n] = '\0';
	state(w, 0, 1000, STATE_RUNNING, 1, 1);
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_USER_C, 5, 2000, NULL, 0, str), 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	const char *db_path = tkt_path("sq_long.db");
	char err[256];
	remove(db_path);
	assert_int_equal(tk_export_sqlite(path, db_path, NULL, NULL, NULL, err, sizeof(err)), 0);
	sqlite3 *db;
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT args FROM events WHERE event='USER 5'", -1, &q, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	const char *args = (const char *)sqlite3_column_text(q, 0);
	assert_non_null(args);
	assert_non_null(strstr(args, str));
	assert_null(strstr(args, "truncated"));
	sqlite3_finalize(q);
	sqlite3_close(db);
	free(str);
}

/* Names that are not UTF-8 (a Linux comm may hold any bytes; declared names come from
 * options and headers) are stored as UTF-8, read as Latin-1 as the other exports do: SQLite
 * clients refuse to decode anything else. */
static void test_sqlite_names_latin1(void **state_)
{
	(void)state_;
	const char *path = tkt_path("sq_latin1.kev");
	tk_kev_writer *w = trace_open(path);
	uint32_t pp[2] = { 0, 1 }, pt[2] = { 1, 2 };
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, 500, pp, 2,
						"p\xff\xfe"),
			 0);
	state(w, 0, 1000, STATE_RUNNING, 1, 2);
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, 1100, pt, 2,
						"bad\xff\xfe\x01x"),
			 0);
	ev2(w, 0, _TRACE_USER_C, 10, 2000, 0, 0);
	ev2(w, 0, _TRACE_USER_C, 11, 3000, 0, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	const char *db_path = tkt_path("sq_latin1.db");
	char err[256];
	remove(db_path);
	assert_int_equal(tk_export_sqlite(path, db_path, "10:11=r\xe9q", NULL, NULL, err, sizeof(err)), 0);
	sqlite3 *db;
	sqlite3_stmt *q;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	static const char *const sql[3][2] = {
		{ "SELECT name FROM processes WHERE pid=1", "p\xc3\xbf\xc3\xbe" },
		{ "SELECT name FROM threads WHERE pid=1 AND tid=2", "bad\xc3\xbf\xc3\xbe\x01x" },
		{ "SELECT name FROM slices WHERE category='USER'", "r\xc3\xa9q" },
	};
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(sqlite3_prepare_v2(db, sql[i][0], -1, &q, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(q), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(q, 0), sql[i][1]);
		sqlite3_finalize(q);
	}
	sqlite3_close(db);
}

static void test_sqlite(void **state_)
{
	(void)state_;
	const char *path = tkt_path("sq.kev");
	tk_kev_writer *w = trace_open(path);
	uint32_t pp[2] = { 0, 1 }, pt[2] = { 1, 2 };
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, 500, pp, 2, "srv"), 0);
	state(w, 0, 1000, STATE_RUNNING, 1, 1);
	state(w, 0, 2000, STATE_RUNNING, 1, 2);
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, 2500, pt, 2, "worker"), 0);
	state(w, 0, 4000, STATE_RECEIVE, 1, 2);
	state(w, 1, 4000, STATE_RUNNING, 1, 1);
	state(w, 0, 5000, STATE_READY, 1, 2);
	state(w, 0, 7000, STATE_RUNNING, 1, 2);
	ev2(w, 1, _TRACE_USER_C, 10, 8000, 0x77, 0);
	ev2(w, 1, _TRACE_USER_C, 11, 9500, 0, 0);
	ev2(w, 1, _TRACE_USER_C, 40, 9600, 5, 0);
	ev2(w, 1, _TRACE_KER_CALL_C, __KER_MSG_SENDV, 9700, 3, 4);
	ev2(w, 1, _TRACE_KER_CALL_C, _TRACE_MAX_KER_CALL_NUM + __KER_MSG_SENDV, 9900, 0, 0);
	ev2(w, 0, _TRACE_USER_C, 30, 10000, 0, 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_USER_C, 31, 10000, NULL, 0, "hello \"you\""), 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	const char *db_path = tkt_path("sq.db");
	char err[256];
	tk_export_stats st;
	assert_int_equal(tk_export_sqlite(path, db_path, "10:11=req", "40=depth", &st, err, sizeof(err)), 0);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events"), (int64_t)st.events);
	assert_int_equal(sql_int(db, "SELECT sum(dur) FROM thread_states WHERE pid=1 AND tid=1 AND bucket='running'"), 7000);
	assert_int_equal(sql_int(db, "SELECT sum(dur) FROM thread_states WHERE pid=1 AND tid=1 AND bucket='ready'"), 2000);
	assert_int_equal(sql_int(db, "SELECT sum(dur) FROM thread_states WHERE pid=1 AND tid=2 AND bucket='running'"), 5000);
	assert_int_equal(sql_int(db, "SELECT sum(dur) FROM thread_states WHERE pid=1 AND tid=2 AND bucket='blocked'"), 1000);
	assert_int_equal(sql_int(db, "SELECT dur FROM thread_states WHERE pid=1 AND tid=2 AND state='RECEIVE'"), 1000);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slices"), (int64_t)st.slices);
	assert_int_equal(sql_int(db, "SELECT dur FROM slices WHERE name='req' AND closed IS NULL"), 1500);
	assert_int_equal(sql_int(db, "SELECT dur FROM slices WHERE name='MSG_SENDV' AND category='KERCALL'"), 200);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slices WHERE closed='at the end of the trace'"), 0);
	assert_int_equal(sql_int(db, "SELECT value FROM counters WHERE name='depth' AND pid=1"), 5);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events WHERE event='USER 10' AND "
				     "json_extract(args, '$.d0')='0x77' AND pid=1 AND tid=1"),
			 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM threads WHERE pid=1 AND tid=2 AND name='worker'"), 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM processes WHERE pid=1 AND name='srv'"), 1);
	/* a string field: the args as JSON text; many fields: from v0.. and the kind's format */
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events WHERE event='USER 31' AND "
				     "json_extract(args, '$.str')='hello \"you\"'"),
			 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events WHERE event='MSG_SENDV' AND "
				     "json_valid(args) AND json_extract(args, '$.coid')='0x3'"),
			 1);
	/* the indexes: the events are in time order here, id order is time order and
	 * events(ts) is not made */
	assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE type='index' AND name IN "
				     "('events_thread', 'slices_thread', 'slices_name', 'thread_states_thread', "
				     "'counters_name')"),
			 5);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name='events_ts'"), 0);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check='ok'"), 1);
	sqlite3_close(db);

	/* an existing database is refused: its tables are there */
	assert_int_equal(tk_export_sqlite(path, db_path, NULL, NULL, NULL, err, sizeof(err)), TK_EIO);
	assert_non_null(strstr(err, "already exists"));
}

/* Events not in time order, as a recording's per-CPU or per-thread buffers give them: the
 * events(ts) index is made; the answers are those of the rows. */
static void test_sqlite_unordered(void **state_)
{
	(void)state_;
	const char *path = tkt_path("squn.kev");
	tk_kev_writer *w = trace_open(path);
	state(w, 0, 1000, STATE_RUNNING, 1, 1);
	ev2(w, 0, _TRACE_USER_C, 10, 1100, 1, 0);
	ev2(w, 0, _TRACE_USER_C, 11, 1300, 0, 0);
	state(w, 1, 1050, STATE_RUNNING, 1, 2);
	ev2(w, 1, _TRACE_USER_C, 10, 1150, 2, 0);
	ev2(w, 1, _TRACE_USER_C, 11, 1250, 0, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	const char *db_path = tkt_path("squn.db");
	char err[256];
	tk_export_stats st;
	assert_int_equal(tk_export_sqlite(path, db_path, "10:11=req", NULL, &st, err, sizeof(err)), 0);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events"), (int64_t)st.events);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name='events_ts'"), 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check='ok'"), 1);
	/* the index's order is the time order (each CPU's events start with a TIME event) */
	sqlite3_stmt *s;
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT group_concat(ts, ' ') FROM (SELECT ts FROM event_rows "
						"INDEXED BY events_ts WHERE ts >= 1000 ORDER BY ts)",
					    -1, &s, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(s, 0), "1000 1000 1050 1050 1100 1150 1250 1300");
	sqlite3_finalize(s);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slices WHERE name='req' AND pid=1 AND tid=2 AND ts=1150 "
				     "AND dur=100"),
			 1);
	sqlite3_close(db);

	/* a thread whose own events go back in time (it ran on two CPUs): the same indexes */
	path = tkt_path("squn2.kev");
	w = trace_open(path);
	state(w, 0, 1000, STATE_RUNNING, 1, 1);
	ev2(w, 0, _TRACE_USER_C, 20, 1100, 1, 0);
	ev2(w, 0, _TRACE_USER_C, 20, 1300, 0, 0);
	state(w, 1, 1050, STATE_RUNNING, 1, 1);
	ev2(w, 1, _TRACE_USER_C, 20, 1150, 2, 0);
	assert_int_equal(tk_kev_writer_close(w), 0);
	db_path = tkt_path("squn2.db");
	assert_int_equal(tk_export_sqlite(path, db_path, NULL, NULL, &st, err, sizeof(err)), 0);
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events"), (int64_t)st.events);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('events_ts', 'events_thread')"),
			 2);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check='ok'"), 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM event_rows INDEXED BY events_thread WHERE pid=1 AND tid=1 "
				     "AND ts BETWEEN 1100 AND 1200"),
			 2);
	sqlite3_close(db);
}

/* Events whose JSON args do not fit in a page (a payload of raw words): the rest of the row
 * in a chain of overflow pages; rows before and after them, enough for more than one page
 * in every table and index. */
static void test_sqlite_long_args(void **state_)
{
	(void)state_;
	const char *path = tkt_path("sqlong.kev");
	tk_kev_writer *w = trace_open(path);
	size_t n = 20000;
	uint32_t *words = malloc(n * sizeof(*words));
	assert_non_null(words);
	for (size_t i = 0; i < n; i++)
		words[i] = 0x10000000u + (uint32_t)i;
	running(w, 1000, 7, 1);
	for (unsigned k = 0; k < 900; k++)
		ev2(w, 0, _TRACE_USER_C, 20, 1001 + k, k, 0);
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_QVM_C, 1000, 2000, words, n), 0);
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_QVM_C, 1000, 2001, words, 5100), 0);
	for (unsigned k = 0; k < 12000; k++) { /* user pairs 10:11 too: slices */
		ev2(w, 0, _TRACE_USER_C, 20, 3000 + 3 * k, k, 0);
		ev2(w, 0, _TRACE_USER_C, 10, 3001 + 3 * k, k, 0);
		ev2(w, 0, _TRACE_USER_C, 11, 3002 + 3 * k, k, 0);
	}
	assert_int_equal(tk_kev_writer_close(w), 0);
	free(words);

	const char *db_path = tkt_path("sqlong.db");
	char err[256];
	tk_export_stats st;
	assert_int_equal(tk_export_sqlite(path, db_path, "10:11=req", NULL, &st, err, sizeof(err)), 0);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check='ok'"), 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events"), (int64_t)st.events);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slices WHERE name='req'"), 12000);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slice_rows INDEXED BY slices_thread WHERE pid=7 AND tid=1 AND "
				     "ts > 3000"),
			 12000);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM event_rows INDEXED BY events_thread WHERE pid=7 AND tid=1 AND "
				     "ts BETWEEN 3000 AND 3299"),
			 300);
	assert_int_equal(sql_int(db, "SELECT json_array_length(args, '$.d') FROM events WHERE ts=2000"), 20000);
	assert_int_equal(sql_int(db, "SELECT json_array_length(args, '$.d') FROM events WHERE ts=2001"), 5100);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events WHERE ts=2000 AND "
				     "json_extract(args, '$.d[19999]')='0x10004e1f'"),
			 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events WHERE event='USER 20' AND "
				     "json_extract(args, '$.d0')='0x12b'"),
			 2);
	sqlite3_close(db);
}

/* Full batches of 32 rows, most of them with nothing past an event's v1 or a slice's a1
 * (inserted by the narrow statements), some with more (a state event's priority and policy,
 * a slice closed by an outer end): every row in file order with every column it has. */
static void test_sqlite_batches(void **state_)
{
	(void)state_;
	const char *path = tkt_path("sqbatch.kev");
	tk_kev_writer *w = trace_open(path);
	uint64_t t = 1000, wide_sum = 0, d0_sum = 0;
	int n_wide = 0, n_outer = 0, n_func = 0;
	running(w, t, 7, 1);
	for (unsigned k = 0; k < 300; k++) {
		if (k % 45 == 17) { /* pid, tid, priority, policy: v0..v3 */
			uint32_t words[4] = { 7, 2, k, 2 };
			assert_int_equal(tk_kev_write_event(w, 0, _TRACE_PR_TH_C, STATE_READY, t += 10, words, 4), 0);
			wide_sum += k;
			n_wide++;
			continue;
		}
		user(w, t += 10, 20, k, k + 1);
		d0_sum += k;
		if (k % 3 == 0) { /* a pair around a function call, the call left open every 7th time */
			user(w, t += 10, 10, k, 0);
			func(w, t += 10, 1, 0x401000);
			n_func++;
			if (k % 7 != 3)
				func(w, t += 10, 0, 0x401000);
			else
				n_outer++;
			user(w, t += 10, 11, k, 0);
		}
	}
	assert_int_equal(tk_kev_writer_close(w), 0);

	const char *db_path = tkt_path("sqbatch.db");
	char err[256];
	tk_export_stats st;
	assert_int_equal(tk_export_sqlite(path, db_path, "10:11=req", NULL, &st, err, sizeof(err)), 0);
	assert_true(st.events > 4 * 32);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check='ok'"), 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM event_rows"), (int64_t)st.events);
	/* file order: the times rise with the ids */
	assert_int_equal(sql_int(db, "SELECT count(*) FROM (SELECT ts, lag(ts) OVER (ORDER BY id) AS p FROM event_rows)"
				     " WHERE ts < p"),
			 0);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM event_rows WHERE v2 IS NOT NULL"), n_wide);
	assert_int_equal(sql_int(db, "SELECT sum(v2) FROM event_rows WHERE v3 = 2 AND pid = 7"), (int64_t)wide_sum);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM event_rows WHERE v2 IS NULL AND v3 IS NULL AND v4 IS NULL"
				     " AND v5 IS NULL AND args IS NULL AND v1 IS NOT NULL"),
			 (int64_t)st.events - n_wide);
	assert_int_equal(sql_int(db, "SELECT sum(e.v0) FROM event_rows e JOIN event_kinds k ON k.id = e.kind"
				     " WHERE k.event = 'USER 20'"),
			 (int64_t)d0_sum);
	assert_int_equal(sql_int(db, "SELECT sum(v1 - v0) FROM event_rows e JOIN event_kinds k ON k.id = e.kind"
				     " WHERE k.event = 'USER 20'"),
			 300 - n_wide);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events WHERE event = 'THREADY'"
				     " AND args = '{\"pid\":7,\"tid\":2,\"priority\":62,\"policy\":2}'"),
			 1);
	/* the slices: the pairs and the calls, those left open closed by the pair's end */
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slices WHERE name = 'req' AND closed IS NULL"), n_func);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slices WHERE name = '0x401000'"), n_func);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slices WHERE closed = 'by an outer end'"), n_outer);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slice_rows WHERE closed IS NULL"), 2 * n_func - n_outer);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slices WHERE depth = 1 AND category = 'SYSTEM'"
				     " AND args = '{\"thisfn\":\"0x401000\",\"call_site\":\"0x9000\"}'"),
			 n_func);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM (SELECT ts, lag(ts) OVER (ORDER BY id) AS p FROM slice_rows"
				     " WHERE category = 1) WHERE ts < p"),
			 0);
	sqlite3_close(db);
}

/* ---- the golden driver -------------------------------------------------------------------- */

/* ---- the light path ------------------------------------------------------------------- */

/* Every event decoded and handed to tk_export_event(): the reference for tk_export_file(),
 * which hands FUNC_ENTER/EXIT and short USER events to some formats undecoded. */
struct decoded_run {
	tk_export *x;
	tk_kev_decoded dec;
	int rc;
};

static int decoded_event(struct traceparser_state *st, void *ud, unsigned header, unsigned time, unsigned *buf,
			 unsigned len)
{
	struct decoded_run *r = ud;
	if (r->rc == 0 && tk_traceparser_decode(st, header, time, buf, len, 0, &r->dec) == 0)
		r->rc = tk_export_event(r->x, &r->dec);
	return 0;
}

static char *export_decoded(const char *path, tk_export_format fmt, const char *pairs, const char *counters,
			    size_t *out_len)
{
	static struct decoded_run r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	memset(&r, 0, sizeof(r));
	assert_int_equal(tk_export_new(&r.x, fmt, f), 0);
	assert_int_equal(tk_export_add_spec(r.x, pairs, 0), 0);
	assert_int_equal(tk_export_add_spec(r.x, counters, 1), 0);
	struct traceparser_state *st = traceparser_init(NULL);
	assert_non_null(st);
	for (unsigned cls = 0; cls < 32; cls++)
		tk_traceparser_cs_internal(st, &r, decoded_event, cls, cls == 0 ? 1 : 0, 1023);
	assert_int_equal(traceparser(st, &r, path), 0);
	assert_int_equal(r.rc, 0);
	assert_int_equal(tk_export_finish(r.x), 0);
	traceparser_destroy(&st);
	tk_export_free(r.x);
	fclose(f);
	*out_len = len;
	return buf;
}

/* tk_export_file() (light path) writes what decoding every event writes: JSON, Perfetto and
 * the statistics of a trace with events before any owner, two threads on two CPUs, nested,
 * crossing and unmatched function exits, pairs, a counter, user instants and a user string. */
static void test_light_path_same(void **state_)
{
	(void)state_;
	const char *path = tkt_path("light.kev");
	tk_kev_writer *w = trace_open(path);
	func(w, 900, 1, 0x100);    /* no owner yet */
	user(w, 950, 30, 1, 2);    /* no owner yet */
	running(w, 1000, 10, 11);
	ev2(w, 1, _TRACE_PR_TH_C, STATE_RUNNING, 1001, 10, 12);
	for (unsigned i = 0; i < 50; i++) {
		uint64_t t = 1100 + i * 100;
		unsigned cpu = i & 1;
		ev2(w, cpu, _TRACE_USER_C, 10, t, i, 0x200);
		ev2(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t + 1, 0x401000, 0x9000);
		ev2(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t + 2, 0x402000 + (i % 3), 0x9004);
		if (i % 5 != 0)
			ev2(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t + 3, 0x402000 + (i % 3), 0x9004);
		ev2(w, cpu, _TRACE_USER_C, 11, t + 4, i, 0xabc); /* may close the functions: outer end */
		ev2(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t + 5, 0x401000, 0x9000);
		ev2(w, cpu, _TRACE_USER_C, 40, t + 6, (uint32_t)-i, 0xffffffffu);
		ev2(w, cpu, _TRACE_USER_C, 20, t + 7, i, 7);
		if (i % 7 == 0)
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_USER_C, 30, t + 8, (const uint32_t *)"worker done!", 3), 0);
	}
	func(w, 9000, 1, 0x500); /* left open */
	assert_int_equal(tk_kev_writer_close(w), 0);

	static const tk_export_format fmts[] = { TK_EXPORT_CHROME_JSON, TK_EXPORT_PERFETTO, TK_EXPORT_STATS_TEXT,
						 TK_EXPORT_STATS_JSON };
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		size_t ref_len = 0;
		char *ref = export_decoded(path, fmts[i], "10:11=item", "40=level", &ref_len);
		char *got = NULL, err[256];
		size_t len = 0;
		FILE *f = open_memstream(&got, &len);
		assert_non_null(f);
		assert_int_equal(tk_export_file(path, f, fmts[i], "10:11=item", "40=level", NULL, err, sizeof(err)), 0);
		fclose(f);
		/* byte for byte (Perfetto's protobuf has NULs) */
		assert_int_equal(len, ref_len);
		assert_memory_equal(got, ref, len);
		assert_non_null(memmem(got, len, "item", 4));
		if (fmts[i] == TK_EXPORT_PERFETTO) {
			struct pf_check c;
			pf_walk(got, len, &c);
			assert_true(c.begins > 100);
		}
		free(ref);
		free(got);
	}
}

/* tk_export_file_flags(): every event through the parser's callback, no runs (the
 * library's TK__EXPORT_ONE_BY_ONE, src/export/export_internal.h). */
#define ONE_BY_ONE 0x40000000u
/* tk_export_file_flags(): the runs through the light path rather than the format's own scan
 * (statistics, Perfetto; the library's TK__EXPORT_NO_SCAN). */
#define NO_SCAN 0x10000000u

static char *export_flags(const char *path, tk_export_format fmt, unsigned flags, size_t *lenp)
{
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	int rc = tk_export_file_flags(path, f, fmt, flags, "10:11=item", "40=level", NULL, err, sizeof(err));
	if (rc != 0)
		fail_msg("%s: %s", path, err);
	fclose(f);
	*lenp = len;
	return buf;
}

/*
 * The parser's runs of light events (tp_batch.h) give what one event at a time gives, on
 * files that take every way through them: QNX files of two CPUs in either byte order,
 * tracekit recordings whose owner comes from BUFFER and THRUNNING (events held until then),
 * clocks of other rates and with a reference (times converted per event), times past 2^32
 * (TIME events), combine events amid the runs, files large enough for the reader thread
 * (more than 4 MiB) and runs cut at its chunks.
 */
static void test_runs_same(void **state_)
{
	(void)state_;
	static const tk_export_format fmts[] = { TK_EXPORT_CHROME_JSON, TK_EXPORT_PERFETTO, TK_EXPORT_STATS_TEXT,
						 TK_EXPORT_STATS_JSON };
	for (int variant = 0; variant < 3; variant++) {
		const char *path = tkt_path("runs.kev");
		tk_kev_header hdr;
		tk_kev_attr attrs[3] = { { "TRACEKIT_OWNER", "buffer" },
					 { "TRACEKIT_CLOCK_CYCLES", "4294000000" },
					 { "TRACEKIT_CLOCK_RAW_NS", "123456789012" } };
		tk_kev_writer *w = NULL;
		memset(&hdr, 0, sizeof(hdr));
		hdr.cpu_num = 2;
		hdr.cycles_per_sec = variant == 0 ? 1000000000u : variant == 1 ? 2400000000u : 3000000000u;
		hdr.big_endian = variant == 0;
		if (variant == 1) {
			hdr.attrs = attrs;
			hdr.n_attrs = 3;
		}
		assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
		uint64_t t = 4294000000u - 1000; /* TIME events once past 2^32 */
		unsigned n = 0;
		/* the recorder's file large enough for the reader thread (more than 4 MiB; the raw
		 * QNX files of test_runs_same_raw are too), the others across the synchronous
		 * reader's blocks only (the sanitizer builds' time) */
		for (unsigned seg = 0; n < (variant == 1 ? 330000u : 70000u); seg++) {
			unsigned cpu = variant == 1 ? 0 : seg & 1;
			uint32_t tid = 1 + seg % 5;
			if (variant == 1) /* a recorder buffer: BUFFER, events held, then its owner */
				ev2(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, t += 3, seg, 64);
			if (seg % 4 != 3 || variant == 1)
				ev2(w, cpu, _TRACE_PR_TH_C, STATE_RUNNING, t += 5, 77, tid);
			for (unsigned i = 0; i < 700; i++, n++) {
				uint32_t fn = 0x401000 + (i % 3) * 16;
				switch (i % 9) {
				case 0: ev2(w, cpu, _TRACE_USER_C, 10, t += 7, i, seg); break;
				case 1: ev2(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t += 11, fn, 0x9000); break;
				case 2: ev2(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t += 5, fn + 1, 0x9004); break;
				case 3:
					if (i % 5 != 0) /* else the exit is missing: closed by the outer one */
						ev2(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t += 13, fn + 1, 0x9004);
					break;
				case 4: ev2(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t += 2, fn, 0x9000); break;
				case 5: ev2(w, cpu, _TRACE_USER_C, 11, t += 17, i, seg); break;
				case 6: ev2(w, cpu, _TRACE_USER_C, 40, t += 1, i * 3, 0); break;
				case 7:
					if (i % 378 == 7) { /* a combine event amid the runs */
						/* 7 whole words (the literal alone has 26 bytes, and no alignment) */
						uint32_t text[7] = { 0 };
						memcpy(text, "a string of user event 30", 26);
						assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_USER_C, 30, t += 3, text, 7),
								 0);
					}
					else
						ev2(w, cpu, _TRACE_USER_C, 20 + i % 4, t += 3, i, 1);
					break;
				default: ev2(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t += 4, 0xdead, 0); break;
				}
			}
		}
		assert_int_equal(tk_kev_writer_close(w), 0);
		for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
			size_t ref_len, got_len;
			char *ref = export_flags(path, fmts[i], ONE_BY_ONE, &ref_len);
			assert_true(ref_len > 1000);
			for (int k = 0; k < (fmts[i] >= TK_EXPORT_STATS_TEXT ? 2 : 1); k++) {
				char *got = export_flags(path, fmts[i], k == 0 ? 0 : NO_SCAN, &got_len);
				if (ref_len != got_len || memcmp(ref, got, ref_len) != 0)
					fail_msg("variant %d, format %d: the runs' export%s differs from one event at a time",
						 variant, (int)fmts[i], k == 0 ? "" : " without the scan");
				free(got);
			}
			free(ref);
		}
	}
}

/* An event its decoder refuses (an interrupt handler's entry in two words: its layout needs
 * four) has neither event name nor number, so it is named "CLASS c EVENT e". Both exports
 * name instants from caches by class, code and number: the entries decoded before and after
 * a refused one of the same code keep their name, and the refused one gets its own. */
/* ---- VTune CSV data (docs/vtune-csv.md, "Intervals and counters in a .kev trace") ------------ */

#define CSV_PID 0x1u
#define CSV_TID 0x2u
#define CSV_FLOAT 0x8u

/* A trace as tracecsv import makes it (the header says so with TRACEKIT_CSV_CLOCK), or
 * without that attribute (attr 0): the same events from any other program. */
static tk_kev_writer *csv_open(const char *path, int attr)
{
	tk_kev_header hdr;
	tk_kev_attr attrs[1] = { { "TRACEKIT_CSV_CLOCK", "CLOCK_MONOTONIC_RAW" } };
	tk_kev_writer *w = NULL;

	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u;
	hdr.cpu_num = 1;
	if (attr) {
		hdr.attrs = attrs;
		hdr.n_attrs = 1;
	}
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
	return w;
}

static void csv_name_ev(tk_kev_writer *w, uint64_t t, uint32_t id, const char *name)
{
	assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_USER_C, 1005, t, &id, 1, name), 0);
}

/* A task (1000) or frame (1002) begin of name number name, flags besides the name. */
static void csv_begin(tk_kev_writer *w, uint64_t t, int frame, uint32_t name, uint32_t flags, uint32_t pid,
		      uint32_t tid, uint32_t id)
{
	uint32_t words[4] = { name << 4 | flags, pid, tid, id };
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_USER_C, frame ? 1002 : 1000, t, words, 4), 0);
}

static void csv_end(tk_kev_writer *w, uint64_t t, int frame, uint32_t name, uint32_t id)
{
	ev2(w, 0, _TRACE_USER_C, frame ? 1003 : 1001, t, name << 4 | CSV_PID | CSV_TID, id);
}

static void csv_counter(tk_kev_writer *w, uint64_t t, uint32_t name, uint32_t flags, uint32_t pid, uint64_t bits)
{
	uint32_t words[5] = { name << 4 | flags, pid, 0, (uint32_t)bits, (uint32_t)(bits >> 32) };
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_USER_C, 1004, t, words, 5), 0);
}

/* Every pairing rule of tracecsv export (src/csv/csv_export.c) in one trace. */
static void csv_rules_trace(const char *path, int attr)
{
	tk_kev_writer *w = csv_open(path, attr);
	const uint32_t pt = CSV_PID | CSV_TID;
	double d = 2.5;
	uint64_t bits;
	memcpy(&bits, &d, 8);

	csv_name_ev(w, 100, 1, "A");
	csv_name_ev(w, 100, 2, "B");
	csv_name_ev(w, 100, 3, "ctr");
	csv_begin(w, 100, 0, 1, pt, 5, 6, 1);
	csv_begin(w, 150, 0, 2, pt, 5, 6, 2); /* B overlaps A without nesting: another lane */
	csv_end(w, 200, 0, 1, 1);             /* A [100, 200] */
	csv_begin(w, 250, 0, 1, pt, 5, 6, 7); /* lane 0 again (free), inside B */
	csv_end(w, 280, 0, 1, 7);             /* A [250, 280] */
	csv_end(w, 300, 0, 2, 2);             /* B [150, 300] */
	csv_end(w, 310, 0, 1, 9);             /* never begun: unmatched */
	csv_begin(w, 320, 0, 1, pt, 5, 6, 3);
	csv_end(w, 330, 0, 2, 3);             /* id 3 under another name: unmatched; 3 stays open */
	csv_begin(w, 400, 0, 1, pt, 5, 6, 4);
	csv_begin(w, 410, 0, 1, pt, 5, 6, 4); /* begins twice: the first is dropped */
	csv_end(w, 420, 0, 1, 4);             /* A [410, 420] */
	csv_begin(w, 500, 1, 1, CSV_PID, 5, 0, 5);
	csv_name_ev(w, 510, 1, "C");          /* redefined while 5 is open: 5 keeps "A" */
	csv_end(w, 520, 1, 1, 5);             /* frame A [500, 520] */
	csv_begin(w, 530, 0, 1, pt, 5, 6, 6);
	csv_end(w, 540, 0, 1, 6);             /* C [530, 540] */
	csv_counter(w, 600, 3, CSV_PID, 5, (uint64_t)(int64_t)-7);
	csv_counter(w, 610, 3, CSV_PID | CSV_FLOAT, 5, bits);
	csv_counter(w, 620, 9, CSV_PID, 5, 1); /* name 9 never defined */
	assert_int_equal(tk_kev_writer_close(w), 0);
}

static void csv_check_counts(const tk_export_stats *st)
{
	assert_int_equal(st->csv_intervals, 6);
	assert_int_equal(st->csv_unmatched_ends, 2);
	assert_int_equal(st->csv_begun_twice, 1);
	assert_int_equal(st->csv_open_at_end, 1);
	assert_int_equal(st->csv_unnamed, 1);
	assert_int_equal(st->csv_malformed, 0);
	assert_int_equal(st->slices, 6);
	assert_int_equal(st->counters, 2);
	assert_int_equal(st->instants, 0);
	assert_int_equal(st->unknown_owner, 0); /* the events carry their own pid/tid */
}

static char *csv_export_fmt(const char *path, tk_export_format fmt, unsigned flags, tk_export_stats *st, char *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	int rc = tk_export_file_flags(path, f, fmt, flags, NULL, NULL, st, err, 256);
	if (rc != 0)
		fail_msg("%s: %s", path, err);
	fclose(f);
	return buf;
}

/* Bad input: counted, left out, the first named with its byte offset (the event's, as the
 * parser gives it), whichever way the event reached the model. */
struct first_offset {
	unsigned code;
	uint32_t time;
	uint64_t off;
	int found;
};

static int find_offset_cb(struct traceparser_state *st, void *ud, unsigned header, unsigned time, unsigned *buf,
			  unsigned len)
{
	struct first_offset *fo = ud;
	(void)buf, (void)len;
	if (!fo->found && _NTO_TRACE_GETEVENT(header) == fo->code && time == fo->time) {
		const uint64_t *off = traceparser_get_info(st, TK_TRACEPARSER_INFO_OFFSET, NULL);
		assert_non_null(off);
		fo->off = *off;
		fo->found = 1;
	}
	return 0;
}

/* The byte offset of USER event code at time t (in ns: the trace's clock is 1 GHz). */
static uint64_t event_offset(const char *path, unsigned code, uint32_t t)
{
	struct first_offset fo = { code, t, 0, 0 };
	struct traceparser_state *st = traceparser_init(NULL);
	assert_non_null(st);
	tk_traceparser_cs_internal(st, &fo, find_offset_cb, _TRACE_USER_C >> 10, 1000, 1005);
	assert_int_equal(traceparser(st, &fo, path), 0);
	traceparser_destroy(&st);
	assert_true(fo.found);
	return fo.off;
}

static void test_csv_pairing(void **state_)
{
	(void)state_;
	const char *path = tkt_path("csv_rules.kev");
	tk_export_stats st;
	char err[256];
	csv_rules_trace(path, 1);

	char *js = csv_export_fmt(path, TK_EXPORT_CHROME_JSON, 0, &st, err);
	csv_check_counts(&st);
	char want[256];
	snprintf(want, sizeof(want), "byte offset %llu: USER 1004 (VTune CSV counter) at 620 ns: name number never "
		 "defined before it", (unsigned long long)event_offset(path, 1004, 620));
	assert_string_equal(err, want);
	/* async begin/end pairs by lane: A and B cross, so B is on lane 1 ("id" 0x1), the later
	 * A back on lane 0; the frame keeps the name it began with, the task after it the new one */
	assert_non_null(strstr(js, "{\"name\":\"A\",\"cat\":\"task\",\"ph\":\"b\",\"id\":\"0x0\",\"ts\":0.100,\"pid\":5,"
				   "\"tid\":6,\"args\":{\"id\":1}}"));
	assert_non_null(strstr(js, "{\"name\":\"A\",\"cat\":\"task\",\"ph\":\"e\",\"id\":\"0x0\",\"ts\":0.200,\"pid\":5,"
				   "\"tid\":6}"));
	assert_non_null(strstr(js, "{\"name\":\"B\",\"cat\":\"task\",\"ph\":\"b\",\"id\":\"0x1\",\"ts\":0.150,"));
	assert_non_null(strstr(js, "{\"name\":\"B\",\"cat\":\"task\",\"ph\":\"e\",\"id\":\"0x1\",\"ts\":0.300,"));
	assert_non_null(strstr(js, "{\"name\":\"A\",\"cat\":\"task\",\"ph\":\"b\",\"id\":\"0x0\",\"ts\":0.250,"));
	/* id 3, never ended, holds lane 0 from 320 on */
	assert_non_null(strstr(js, "{\"name\":\"A\",\"cat\":\"task\",\"ph\":\"b\",\"id\":\"0x1\",\"ts\":0.410,"));
	assert_null(strstr(js, "\"ts\":0.400")); /* the begin of id 4 that began again */
	assert_null(strstr(js, "\"ts\":0.320")); /* id 3: no end */
	assert_non_null(strstr(js, "{\"name\":\"A\",\"cat\":\"frame\",\"ph\":\"b\",\"id\":\"0x100000\",\"ts\":0.500,"
				   "\"pid\":5,\"tid\":0,\"args\":{\"id\":5}}"));
	assert_non_null(strstr(js, "{\"name\":\"C\",\"cat\":\"task\",\"ph\":\"b\",\"id\":\"0x1\",\"ts\":0.530,"));
	assert_non_null(strstr(js, "{\"name\":\"ctr\",\"ph\":\"C\",\"ts\":0.600,\"pid\":5,\"args\":{\"value\":-7}}"));
	assert_non_null(strstr(js, "{\"name\":\"ctr\",\"ph\":\"C\",\"ts\":0.610,\"pid\":5,\"args\":{\"value\":2.5}}"));
	assert_int_equal(count(js, "\"ph\":\"b\""), 6);
	assert_int_equal(count(js, "\"ph\":\"e\""), 6);
	assert_non_null(strstr(js, "\"csv_intervals\":6,\"csv_unmatched_ends\":2,\"csv_begun_twice\":1,"
				   "\"csv_open_at_end\":1,\"csv_unnamed\":1,\"csv_malformed\":0}"));
	free(js);

	/* the statistics: per kind and name, in order of first end */
	char *sj = csv_export_fmt(path, TK_EXPORT_STATS_JSON, 0, &st, err);
	csv_check_counts(&st);
	assert_non_null(strstr(sj, "\"user_intervals\":[\n{\"name\":\"A\",\"count\":3,\"total_ns\":140,\"mean_ns\":46,"
				   "\"max_ns\":100,"));
	assert_non_null(strstr(sj, "\n{\"name\":\"B\",\"count\":1,\"total_ns\":150,"));
	assert_non_null(strstr(sj, "\n{\"name\":\"A (frame)\",\"count\":1,\"total_ns\":20,"));
	assert_non_null(strstr(sj, "\n{\"name\":\"C\",\"count\":1,\"total_ns\":10,"));
	assert_non_null(strstr(sj, "\"csv_unmatched_ends\":2,\"csv_begun_twice\":1,\"csv_open_at_end\":1,"
				   "\"csv_unnamed\":1,\"csv_malformed\":0}\n"));
	free(sj);

	/* Perfetto: every track described before use, begins and ends balanced per track */
	char *pf = NULL;
	size_t pf_len = 0;
	FILE *f = open_memstream(&pf, &pf_len);
	assert_int_equal(tk_export_file(path, f, TK_EXPORT_PERFETTO, NULL, NULL, &st, err, sizeof(err)), 0);
	fclose(f);
	struct pf_check c;
	pf_walk(pf, pf_len, &c);
	assert_int_equal(c.begins, 6);
	assert_int_equal(c.ends, 6);
	assert_int_equal(c.counters, 2);
	/* no-thread, process 5, thread 5/6, its lanes 0 and 1, the frames of 5, the counter */
	assert_int_equal(c.n_tracks, 7);
	free(pf);

	/* SQLite: rows of the thread, depth the lane */
	const char *db_path = tkt_path("csv_rules.db");
	unlink(db_path);
	assert_int_equal(tk_export_sqlite(path, db_path, NULL, NULL, &st, err, sizeof(err)), 0);
	csv_check_counts(&st);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slices WHERE category = 'TASK' AND pid = 5 AND tid = 6"), 5);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slices WHERE category = 'FRAME' AND name = 'A' AND pid = 5 "
				     "AND dur = 20 AND args = '{\"id\":5}'"),
			 1);
	assert_int_equal(sql_int(db, "SELECT depth FROM slices WHERE name = 'B'"), 1);
	assert_int_equal(sql_int(db, "SELECT dur FROM slices WHERE name = 'C'"), 10);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM threads WHERE pid = 5 AND tid = 6"), 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM counters WHERE name = 'ctr' AND pid = 5 AND "
				     "((ts = 600 AND typeof(value) = 'integer' AND value = -7) OR "
				     "(ts = 610 AND typeof(value) = 'real' AND value = 2.5))"),
			 2);
	/* every USER event is still a row of events */
	assert_int_equal(sql_int(db, "SELECT count(*) FROM events WHERE class = 'USER'"), 23);
	sqlite3_close(db);

	/* the same one event at a time, through the runs, through the light path */
	static const tk_export_format fmts[] = { TK_EXPORT_CHROME_JSON, TK_EXPORT_PERFETTO, TK_EXPORT_STATS_TEXT,
						 TK_EXPORT_STATS_CSV };
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		tk_export_stats s1, s2;
		char e1[256], e2[256];
		char *ref = csv_export_fmt(path, fmts[i], ONE_BY_ONE, &s1, e1);
		for (unsigned k = 0; k < 2; k++) {
			char *got = csv_export_fmt(path, fmts[i], k == 0 ? 0 : NO_SCAN, &s2, e2);
			assert_string_equal(ref, got);
			assert_string_equal(e1, e2);
			assert_memory_equal(&s1, &s2, sizeof(s1));
			free(got);
		}
		free(ref);
	}
}

/* The convention only where the trace says so, and not over declarations of its codes. */
static void test_csv_not_assumed(void **state_)
{
	(void)state_;
	const char *path = tkt_path("csv_plain.kev");
	tk_export_stats st;
	char err[256], *out;
	csv_rules_trace(path, 0);
	char *js = csv_export_fmt(path, TK_EXPORT_CHROME_JSON, 0, &st, err);
	assert_int_equal(st.csv_intervals, 0);
	assert_int_equal(st.slices, 0);
	assert_int_equal(st.instants, 23); /* user instants, as before */
	assert_null(strstr(js, "csv_intervals"));
	assert_null(strstr(js, "\"ph\":\"b\""));
	free(js);

	path = tkt_path("csv_rules.kev");
	csv_rules_trace(path, 1);
	/* declared as a pair: its events keep that meaning (here instants: no owner is known) */
	assert_int_equal(export_to_string(path, "1000:1001=mine", NULL, &st, &out), 0);
	assert_int_equal(st.csv_intervals, 0);
	assert_int_equal(st.unknown_owner, 23);
	assert_null(strstr(out, "\"ph\":\"b\""));
	assert_null(strstr(out, "csv_intervals"));
	free(out);
}

static void test_csv_bad_input(void **state_)
{
	(void)state_;
	const char *path = tkt_path("csv_bad.kev");
	static const tk_export_format fmts[] = { TK_EXPORT_CHROME_JSON, TK_EXPORT_PERFETTO, TK_EXPORT_STATS_TEXT };
	static const unsigned flags[] = { 0, ONE_BY_ONE, NO_SCAN };
	static const struct {
		unsigned code;
		uint32_t t;
		const char *what;
		uint64_t malformed, unnamed;
	} cases[] = {
		/* a name event cut short (no NUL in its two words), then the two below */
		{ 1005, 200, "USER 1005 (VTune CSV name) at 200 ns: name not NUL-terminated (truncated)", 2, 1 },
		/* a begin of name number 7, which no name event defines, then the one below */
		{ 1000, 300, "USER 1000 (VTune CSV begin) at 300 ns: name number never defined before it", 1, 1 },
		/* a counter sample of two words (it needs five) */
		{ 1004, 400, "USER 1004 (VTune CSV counter) at 400 ns: payload too short", 1, 0 },
	};
	for (unsigned c = 0; c < 3; c++) {
		tk_kev_writer *w = csv_open(path, 1);
		csv_name_ev(w, 100, 1, "ok");
		if (c == 0)
			ev2(w, 0, _TRACE_USER_C, 1005, 200, 2, 0x41414141);
		if (c <= 1)
			csv_begin(w, 300, 0, 7, CSV_PID | CSV_TID, 1, 2, 1);
		ev2(w, 0, _TRACE_USER_C, 1004, 400, 1 << 4, 0);
		csv_begin(w, 500, 0, 1, CSV_PID | CSV_TID, 1, 2, 2);
		csv_end(w, 600, 0, 1, 2);
		assert_int_equal(tk_kev_writer_close(w), 0);
		char want[256];
		snprintf(want, sizeof(want), "byte offset %llu: %s",
			 (unsigned long long)event_offset(path, cases[c].code, cases[c].t), cases[c].what);
		for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
			for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
				tk_export_stats st;
				char err[256];
				char *out = csv_export_fmt(path, fmts[i], flags[k], &st, err);
				assert_string_equal(err, want);
				assert_int_equal(st.csv_intervals, 1); /* what is well-formed still is exported */
				assert_int_equal(st.csv_malformed, cases[c].malformed);
				assert_int_equal(st.csv_unnamed, cases[c].unnamed);
				free(out);
			}
		}
	}
}

/* Millions of intervals open at once on one thread (a hostile or runaway trace): each takes
 * the lowest free lane, which must not cost a scan of every lane taken (that made 2^20 + 2^17
 * begins take a minute: quadratic), past 2^20 they share the last lane, and all are paired. */
static void test_csv_many_open(void **state_)
{
	(void)state_;
	const char *path = tkt_path("csv_many_open.kev");
	const uint32_t n = (1u << 20) + (1u << 17);
	tk_kev_writer *w = csv_open(path, 1);
	tk_export_stats st;
	char err[256];

	csv_name_ev(w, 1, 1, "x");
	for (uint32_t i = 0; i < n; i++)
		csv_begin(w, 10 + (uint64_t)i, 0, 1, CSV_PID | CSV_TID, 1, 2, i);
	for (uint32_t i = 0; i < n; i += 2) /* every other one ends, and begins again */
		csv_end(w, 10 + (uint64_t)n + i, 0, 1, i);
	for (uint32_t i = 0; i < n; i += 2)
		csv_begin(w, 10 + 2 * (uint64_t)n + i, 0, 1, CSV_PID | CSV_TID, 1, 2, i);
	for (uint32_t i = 0; i < n; i++)
		csv_end(w, 10 + 3 * (uint64_t)n + i, 0, 1, i);
	assert_int_equal(tk_kev_writer_close(w), 0);
	clock_t t0 = clock();
	free(csv_export_fmt(path, TK_EXPORT_STATS_JSON, 0, &st, err));
	double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	assert_int_equal(st.csv_intervals, n + n / 2);
	assert_int_equal(st.csv_open_at_end, 0);
	assert_int_equal(st.csv_unmatched_ends, 0);
	/* about 1 s in a Debug build, 14 s under ASan (its allocator: 1.2 M intervals of about
	 * 160 bytes); the scan of the lanes took 60 s in a Debug build */
	const double limit = TKT_SANITIZER ? 60 : 15;
	if (secs > limit)
		fail_msg("%u intervals open at once took %.1f s of CPU (limit %.0f)", n, secs, limit);
	unlink(path);
}

/* Double counter samples that are not finite (a program's own TraceEvent() may write them;
 * tracecsv import refuses them): SQLite stores a NaN as NULL, which counter_rows.value
 * refuses, and the whole database was lost ("NOT NULL constraint failed"). A NaN sample has
 * no row; infinities are REAL values. */
static void test_csv_sqlite_nan(void **state_)
{
	(void)state_;
	const char *path = tkt_path("csv_nan.kev"), *db_path = tkt_path("csv_nan.db");
	const double vals[] = { 1.5, NAN, INFINITY, -INFINITY, -NAN };
	tk_kev_writer *w = csv_open(path, 1);
	tk_export_stats st;
	char err[256];
	sqlite3 *db;

	csv_name_ev(w, 1, 1, "d");
	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint64_t bits;
		memcpy(&bits, &vals[i], sizeof(bits));
		csv_counter(w, 10 + i, 1, CSV_PID | 0x8u, 3, bits);
	}
	assert_int_equal(tk_kev_writer_close(w), 0);
	unlink(db_path);
	if (tk_export_sqlite(path, db_path, NULL, NULL, &st, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_int_equal(st.counters, 5);
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM counters WHERE name = 'd' AND pid = 3"), 3);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM counters WHERE ts = 10 AND value = 1.5"), 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM counters WHERE ts = 12 AND value > 1e308"), 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM counters WHERE ts = 13 AND value < -1e308"), 1);
	sqlite3_close(db);
	unlink(db_path);
	unlink(path);
}

/* A long name (a CSV record may hold 1 MiB) used by many intervals and counter samples: the
 * formats looked it up by its text at every event (hashed byte by byte), so a 10 MB trace
 * with one name of 60 KB took 70 s for its statistics and 80 s for Perfetto (0.6 s with a
 * short name). Each name is looked up once. */
static void test_csv_long_name(void **state_)
{
	(void)state_;
	const char *path = tkt_path("csv_long_name.kev"), *db_path = tkt_path("csv_long_name.db");
	static const tk_export_format fmts[] = { TK_EXPORT_STATS_TEXT, TK_EXPORT_PERFETTO };
	const size_t len = 60000;
	const uint32_t n = 30000;
	char *name = malloc(len + 1);
	tk_kev_writer *w = csv_open(path, 1);
	tk_export_stats st;
	char err[256];

	assert_non_null(name);
	memset(name, 'x', len);
	name[len] = '\0';
	csv_name_ev(w, 1, 1, name);
	for (uint32_t i = 0; i < n; i++) {
		csv_begin(w, 10 + 2 * (uint64_t)i, i & 1, 1, CSV_PID | CSV_TID, 1, 2, 7);
		csv_counter(w, 10 + 2 * (uint64_t)i, 1, CSV_PID, 1, i);
		csv_end(w, 11 + 2 * (uint64_t)i, i & 1, 1, 7);
	}
	assert_int_equal(tk_kev_writer_close(w), 0);
	clock_t t0 = clock();
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		free(csv_export_fmt(path, fmts[i], 0, &st, err));
		assert_int_equal(st.csv_intervals, n);
		assert_int_equal(st.counters, n);
	}
	unlink(db_path);
	if (tk_export_sqlite(path, db_path, NULL, NULL, &st, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM names WHERE length(name) = 60000"), 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM names"), 1);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM slice_rows WHERE name = (SELECT id FROM names)"), n);
	assert_int_equal(sql_int(db, "SELECT count(*) FROM counter_rows WHERE name = (SELECT id FROM names)"), n);
	sqlite3_close(db);
	double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	/* about 1 s in a Debug build; a minute and more per format before */
	if (secs > 15)
		fail_msg("%u intervals and samples of a name of %zu bytes took %.1f s of CPU", n, len, secs);
	free(name);
	unlink(db_path);
	unlink(path);
}

/* tk_export_csv_data(): the same pairing event by event, for a caller of tk_export_new(). */
struct csv_feed {
	tk_export *x;
	tk_kev_decoded dec;
};

static int csv_feed_cb(struct traceparser_state *st, void *ud, unsigned header, unsigned time, unsigned *buf,
		       unsigned len)
{
	struct csv_feed *r = ud;
	if (tk_traceparser_decode(st, header, time, buf, len, 0, &r->dec) == 0)
		assert_int_equal(tk_export_event(r->x, &r->dec), 0);
	return 0;
}

static void csv_feed(const char *path, int on, unsigned declare, tk_export_stats *st)
{
	struct csv_feed *r = calloc(1, sizeof(*r));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(r);
	assert_int_equal(tk_export_new(&r->x, TK_EXPORT_STATS_JSON, f), 0);
	assert_int_equal(tk_export_csv_data(r->x, on), 0);
	if (declare != 0)
		assert_int_equal(tk_export_add_counter(r->x, declare, "mine"), 0);
	struct traceparser_state *ps = traceparser_init(NULL);
	assert_non_null(ps);
	for (unsigned cls = 0; cls < 32; cls++)
		tk_traceparser_cs_internal(ps, r, csv_feed_cb, cls, cls == 0 ? 1 : 0, 1023);
	assert_int_equal(traceparser(ps, r, path), 0);
	traceparser_destroy(&ps);
	assert_int_equal(tk_export_finish(r->x), 0);
	*st = *tk_export_get_stats(r->x);
	assert_int_equal(tk_export_csv_data(r->x, 1), TK_ESTATE); /* too late */
	tk_export_free(r->x);
	fclose(f);
	free(buf);
	free(r);
}

static void test_csv_api(void **state_)
{
	(void)state_;
	const char *path = tkt_path("csv_rules.kev");
	tk_export_stats st;
	csv_rules_trace(path, 0); /* the caller says so, not the header */
	csv_feed(path, 1, 0, &st);
	csv_check_counts(&st);
	csv_feed(path, 0, 0, &st);
	assert_int_equal(st.csv_intervals, 0);
	assert_int_equal(st.unknown_owner, 23);
	csv_feed(path, 1, 1004, &st); /* a declaration of one of the codes wins */
	assert_int_equal(st.csv_intervals, 0);
	assert_int_equal(tk_export_csv_data(NULL, 1), TK_EINVAL);
}

static void test_instant_names_cached(void **state_)
{
	(void)state_;
	const char *path = tkt_path("shortint.kev");
	tk_kev_writer *w = trace_open(path);
	uint32_t words[4] = { 3, 0x21, 0x4000, 0x10 };
	running(w, 1000, 3, 4);
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_INT_C, _TRACE_INT_HANDLER_ENTRY, 2000, words, 4), 0);
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_INT_C, _TRACE_INT_HANDLER_ENTRY, 3000, words, 2), 0);
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_INT_C, _TRACE_INT_HANDLER_ENTRY, 4000, words, 4), 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_export_stats st;
	char *json;
	assert_int_equal(export_to_string(path, NULL, NULL, &st, &json), 0);
	assert_int_equal(count(json, "{\"name\":\"INT_HANDLER_ENTRY\",\"cat\":\"INT_HANDLER_ENTER\""), 2);
	assert_int_equal(count(json, "{\"name\":\"CLASS 3 EVENT 3\",\"cat\":\"INT_HANDLER_ENTER\""), 1);
	free(json);

	char *pf;
	size_t pf_len;
	assert_int_equal(export_perfetto(path, NULL, NULL, &st, &pf, &pf_len), 0);
	struct pf_check c;
	pf_walk(pf, pf_len, &c);
	assert_int_equal(c.instants, 4);  /* THRUNNING and the three */
	assert_int_equal(c.max_name, 3); /* THRUNNING, INT_HANDLER_ENTRY, CLASS 3 EVENT 3 */
	assert_non_null(memmem(pf, pf_len, "CLASS 3 EVENT 3", 15));
	free(pf);
}

/* ---- raw files for the runs: slots written one by one ----------------------------------- */

struct raw_file {
	FILE *f;
	uint64_t n;
};

/* path: a header of cpu_num CPUs at cps Hz (written by tk_kev_writer), then raw slots. */
static void raw_open(struct raw_file *rf, const char *path, unsigned cpu_num, uint64_t cps)
{
	tk_kev_header hdr;
	tk_kev_writer *w = NULL;
	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = cps;
	hdr.cpu_num = cpu_num;
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);
	assert_int_equal(tk_kev_writer_close(w), 0);
	rf->f = fopen(path, "ab");
	assert_non_null(rf->f);
	rf->n = 0;
}

static void raw_slot(struct raw_file *rf, uint32_t h, uint32_t t, uint32_t a, uint32_t b)
{
	uint32_t s[4] = { h, t, a, b };
	assert_int_equal(fwrite(s, 16, 1, rf->f), 1);
	rf->n++;
}

static void raw_s(struct raw_file *rf, unsigned cpu, unsigned cls, unsigned code, uint32_t t, uint32_t a, uint32_t b)
{
	raw_slot(rf, _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, cls, code), t, a, b);
}

/*
 * The runs and one event at a time: the same bytes, status, message and counts, to any
 * stream. For the statistics, three ways: one by one, their own scan of the runs
 * (tk_export_file()'s), and the runs through the light path. min_len: the least output
 * expected of each.
 */
static void modes_compare(const char *path, const char *what, unsigned flags, const char *out_path,
			  const tk_export_format *fmts, size_t n_fmts, const char *pairs, const char *counters,
			  size_t min_len)
{
	static const unsigned modes[3] = { ONE_BY_ONE, 0, NO_SCAN };
	static const char *const names[3] = { "one by one", "runs", "runs without the scan" };
	for (size_t i = 0; i < n_fmts; i++) {
		char *out[3] = { NULL, NULL, NULL }, err[3][256];
		size_t len[3] = { 0, 0, 0 };
		int rc[3];
		tk_export_stats st[3];
		int n_modes = fmts[i] == TK_EXPORT_CHROME_JSON || fmts[i] == TK_EXPORT_PERFETTO ? 2 : 3;
		for (int k = 0; k < n_modes; k++) {
			FILE *f = out_path != NULL ? fopen(out_path, "w") : open_memstream(&out[k], &len[k]);
			assert_non_null(f);
			memset(&st[k], 0, sizeof(st[k]));
			rc[k] = tk_export_file_flags(path, f, fmts[i], flags | modes[k], pairs, counters, &st[k], err[k],
						     sizeof(err[k]));
			fclose(f);
		}
		for (int k = 1; k < n_modes; k++) {
			if (rc[0] != rc[k] || strcmp(err[0], err[k]) != 0)
				fail_msg("%s, format %d: one by one %d \"%s\", %s %d \"%s\"", what, (int)fmts[i], rc[0],
					 err[0], names[k], rc[k], err[k]);
			if (memcmp(&st[0], &st[k], sizeof(st[0])) != 0)
				fail_msg("%s, format %d: the statistics of %s differ", what, (int)fmts[i], names[k]);
			if (out_path == NULL &&
			    (len[0] < min_len || len[0] != len[k] || memcmp(out[0], out[k], len[0]) != 0))
				fail_msg("%s, format %d: the export of %s differs from one event at a time (%zu, %zu bytes)",
					 what, (int)fmts[i], names[k], len[0], len[k]);
		}
		for (int k = 0; k < n_modes; k++)
			free(out[k]);
	}
}

/* the runs and one event at a time, every format */
static void runs_compare(const char *path, const char *what, unsigned flags, const char *out_path)
{
	static const tk_export_format fmts[] = { TK_EXPORT_CHROME_JSON, TK_EXPORT_PERFETTO, TK_EXPORT_STATS_TEXT,
						 TK_EXPORT_STATS_JSON, TK_EXPORT_STATS_CSV };
	modes_compare(path, what, flags, out_path, fmts, sizeof(fmts) / sizeof(fmts[0]), "10:11=item", "40=level", 100);
}

/*
 * More ways through the runs: a QNX file of 5 CPUs whose events interleave slot by slot
 * (each CPU with its own owner and upper time bits), events before any TIME and before any
 * owner, TIME events that move a CPU's upper bits mid-stream, BUFFER events, combine events
 * whose pieces straddle runs, the chunks of the reader thread (256 KiB) and its slots,
 * a clock of 2.4 GHz and of 1 GHz, a file cut mid-slot and one damaged midway, symbols on,
 * and a full disk (the same error either way).
 */
static void test_runs_same_raw(void **state_)
{
	(void)state_;
	for (int variant = 0; variant < 4; variant++) {
		const char *path = tkt_path("runs_raw.kev");
		struct raw_file rf;
		const unsigned ncpu = 5;
		raw_open(&rf, path, ncpu, variant == 1 ? 1000000000u : 2400000000u);
		uint32_t t = 0xfffff000u;
		uint32_t msb[8] = { 0 };
		/* before any TIME and any owner: light events of every CPU */
		for (unsigned i = 0; i < 300; i++)
			raw_s(&rf, i % ncpu, _TRACE_USER_C, 10 + i % 3, t += 3, i, 7);
		for (unsigned c = 0; c < ncpu; c++) {
			msb[c] = 5 + c;
			raw_s(&rf, c, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME, t, msb[c], 0);
		}
		/* an owner for CPUs 0..3 only: CPU 4 stays unknown */
		for (unsigned c = 0; c < 4; c++)
			raw_s(&rf, c, _TRACE_PR_TH_C, STATE_RUNNING, t += 1, 100 + c, 1 + c);
		for (unsigned i = 0; rf.n < 330000; i++) {
			unsigned cpu = i % ncpu;
			uint32_t fn = 0x401000 + (i % 7) * 16;
			if (i % 5003 == 0) {
				/* a TIME per CPU: the upper bits move on while other CPUs' runs go on */
				msb[cpu]++;
				raw_s(&rf, cpu, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME, t, msb[cpu], 0);
			}
			if (i % 7919 == 11)
				raw_s(&rf, cpu, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, t, i, 64);
			if (i % 3001 == 5) /* a new owner */
				raw_s(&rf, cpu, _TRACE_PR_TH_C, STATE_RUNNING, t += 1, 100 + cpu, 1 + (i % 11));
			if (i % 997 == 3 || (rf.n + 1) % 16384 == 0) {
				/* a combine event whose pieces have runs of other CPUs between them,
				 * some across the reader's chunks */
				uint32_t h = _TRACE_MAKE_CODE(cpu, 0, _TRACE_USER_C, 30), tc = t += 2;
				raw_slot(&rf, h | _TRACE_STRUCT_CB, tc, 0x41414141, 0x42424242);
				raw_s(&rf, (cpu + 1) % ncpu, _TRACE_USER_C, 10, t += 1, i, 1);
				raw_s(&rf, (cpu + 2) % ncpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t += 1, fn, 3);
				raw_slot(&rf, h | _TRACE_STRUCT_CC, tc, 0x43434343, 0x44444444);
				raw_s(&rf, (cpu + 2) % ncpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t += 1, fn, 3);
				raw_slot(&rf, h | _TRACE_STRUCT_CE, tc, 0x00454545, 0);
			}
			switch (i % 11) {
			case 0: raw_s(&rf, cpu, _TRACE_USER_C, 10, t += 7, i, cpu); break;
			case 1: raw_s(&rf, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t += 11, fn, 0x9000); break;
			case 2: raw_s(&rf, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t += 5, fn + 1, 0x9004); break;
			case 3: raw_s(&rf, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t += 13, fn + 1, 0x9004); break;
			case 4: raw_s(&rf, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t += 2, fn, 0x9000); break;
			case 5: raw_s(&rf, cpu, _TRACE_USER_C, 11, t += 17, i, cpu); break;
			case 6: raw_s(&rf, cpu, _TRACE_USER_C, 40, t += 1, i * 3, 0); break;
			case 7: raw_s(&rf, cpu, _TRACE_KER_CALL_C, 2 * 6, t += 1, 1, 2); break; /* not light */
			case 8: raw_s(&rf, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t += 4, 0xdead, 0); break;
			default: raw_s(&rf, cpu, _TRACE_USER_C, 20 + i % 4, t += 3, i, 1); break;
			}
		}
		if (variant == 2) { /* damaged midway: a continuation of nothing, a bad struct */
			raw_slot(&rf, _TRACE_MAKE_CODE(0, _TRACE_STRUCT_CE, _TRACE_USER_C, 31), 1, 2, 3);
			for (unsigned i = 0; i < 1000; i++)
				raw_s(&rf, i % ncpu, _TRACE_USER_C, 10, t += 3, i, 7);
		}
		if (variant == 3) /* a partial slot at the end */
			assert_int_equal(fwrite("\x01\x02\x03\x04\x05", 1, 5, rf.f), 5);
		fclose(rf.f);
		char what[64];
		snprintf(what, sizeof(what), "raw variant %d", variant);
		runs_compare(path, what, 0, NULL);
		if (variant == 0) {
			runs_compare(path, "raw, symbols", TK_EXPORT_SYMBOLS, NULL);
			FILE *f = fopen("/dev/full", "w");
			if (f != NULL) {
				fclose(f);
				runs_compare(path, "raw, full disk", 0, "/dev/full");
			}
		}
	}
}

/* ---- the statistics' scan against the model: random traces ------------------------------- */

static uint64_t g_rnd;

static uint32_t rnd(unsigned n) /* 0..n-1 (xorshift64*) */
{
	g_rnd ^= g_rnd >> 12;
	g_rnd ^= g_rnd << 25;
	g_rnd ^= g_rnd >> 27;
	return (uint32_t)((g_rnd * 0x2545f4914f6cdd1dull) >> 32) % n;
}

/*
 * A trace of random events over several CPUs and threads, as bad as a trace gets without
 * being unreadable: function entries and exits mostly nested (some exits of functions never
 * entered, some entries never left), two user pairs that mostly nest and sometimes cross,
 * ends without begins, instants, counters, events of more than two words, kernel calls
 * (slices of their own on the same stacks), THREAD states of other threads, owners changing
 * (THRUNNING) among many threads, events before any owner, times that sometimes go back and
 * cross 2^32 (TIME events), bursts of entries past TK_EXPORT_MAX_DEPTH. flags: 1 big-endian,
 * 2 TRACEKIT_OWNER=buffer (BUFFER events, slots held until their owner), 4 a 2.4 GHz clock
 * with a reference (times converted per event), 8 many threads (hundreds).
 */
static void random_trace(const char *path, unsigned flags, unsigned n_events)
{
	tk_kev_header hdr;
	tk_kev_attr attrs[3] = { { "TRACEKIT_OWNER", "buffer" },
				 { "TRACEKIT_CLOCK_CYCLES", "4294000000" },
				 { "TRACEKIT_CLOCK_RAW_NS", "123456789012" } };
	tk_kev_attr used[3];
	size_t n_attrs = 0;
	tk_kev_writer *w = NULL;
	static const uint32_t fns[5] = { 0x401000, 0x401040, 0x402000, 0x5, 0x0 };
	uint32_t shadow[8][64]; /* per CPU: the functions entered (to exit them mostly in order) */
	unsigned depth[8] = { 0 }, open_pair[8] = { 0 };
	unsigned n_threads = flags & 8 ? 300 : 3;

	memset(&hdr, 0, sizeof(hdr));
	hdr.big_endian = (flags & 1) != 0;
	hdr.cpu_num = 1 + rnd(4);
	hdr.cycles_per_sec = flags & 4 ? 2400000000u : 1000000000u;
	if (flags & 2)
		used[n_attrs++] = attrs[0];
	if (flags & 4) {
		used[n_attrs++] = attrs[1];
		used[n_attrs++] = attrs[2];
	}
	hdr.attrs = used;
	hdr.n_attrs = n_attrs;
	assert_int_equal(tk_kev_writer_open(&w, path, &hdr, 0), 0);

	uint64_t t = rnd(2) ? 100000 : 0xffff0000u - rnd(100000);
	unsigned cpu = 0, back = rnd(2); /* back: times before the first ones early, after the last ones late */
	for (unsigned i = 0; i < n_events; i++) {
		uint32_t words[5] = { rnd(1000), rnd(3), 7, 8, 9 };
		unsigned r = rnd(1000);
		if (rnd(30) == 0)
			cpu = rnd(hdr.cpu_num); /* mostly runs of one CPU */
		t += rnd(60);
		if (rnd(200) == 0)
			t -= rnd(400); /* back in time (a damaged or merged trace) */
		if (back && (i == 300 || i == n_events - 10))
			t -= 20000; /* the least time amid the trace, and the greatest just before the end */
		if (rnd(5000) == 0)
			t += 0xfff00000u; /* across 2^32 soon */
		if (r < 250) { /* FUNC_ENTER */
			uint32_t fn = fns[rnd(5)];
			if (depth[cpu] < 64)
				shadow[cpu][depth[cpu]++] = fn;
			words[0] = fn;
			words[1] = 0x9000 + rnd(4);
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t, words, 2), 0);
		} else if (r < 500) { /* FUNC_EXIT: the innermost mostly */
			words[0] = depth[cpu] > 0 && rnd(10) < 8 ? shadow[cpu][--depth[cpu]] : fns[rnd(5)];
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t, words,
							    rnd(50) ? 2 : 1 + rnd(4)), 0);
		} else if (r < 600) { /* pairs 10:11 and 12:13 */
			unsigned code = open_pair[cpu] && rnd(3) ? (open_pair[cpu] == 10 ? 11 : 13) : 10 + rnd(4);
			open_pair[cpu] = code == 10 || code == 12 ? code : 0;
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_USER_C, code, t, words, rnd(20) ? 2 : 3), 0);
		} else if (r < 700) { /* instants and counters */
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_USER_C, 20 + rnd(3) * 10 + rnd(2), t, words,
							    rnd(10) ? 2 : rnd(6)), 0);
		} else if (r < 760) { /* kernel calls: entry n, exit 128 + n */
			unsigned n = rnd(4) + 6;
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_KER_CALL_C, rnd(2) ? n : 128 + n, t, words, 2), 0);
		} else if (r < 790) { /* a new owner */
			words[0] = 100 + rnd(3);
			words[1] = 1 + rnd(n_threads);
			if ((flags & 2) && rnd(2))
				ev2(w, cpu, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, t, i, 64);
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_PR_TH_C, STATE_RUNNING, t, words, 2), 0);
		} else if (r < 800) { /* another thread's state */
			words[0] = 100 + rnd(3);
			words[1] = 1 + rnd(n_threads);
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_PR_TH_C, rnd(STATE_MAX), t, words, 2), 0);
		} else if (r < 802 && (flags & 2)) { /* a buffer whose owner comes later, or never */
			ev2(w, cpu, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, t, i, 64);
		} else if (r == 803) { /* past the depth limit */
			for (unsigned k = 0; k < TK_EXPORT_MAX_DEPTH + 10; k++) {
				words[0] = fns[rnd(3)];
				assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t++,
								    words, 2), 0);
			}
		} else { /* the usual: an entry, a pair, an exit */
			words[0] = fns[rnd(3)];
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t, words, 2), 0);
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_USER_C, 10, t + 1, words, 2), 0);
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_USER_C, 11, t + 2 + rnd(3), words, 2), 0);
			assert_int_equal(tk_kev_write_event(w, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t + 5, words, 2), 0);
			t += 5;
		}
	}
	assert_int_equal(tk_kev_writer_close(w), 0);
}

/* Damage: slots' words overwritten past the first quarter of the events, or the end cut. */
static void random_damage(const char *path)
{
	FILE *f = fopen(path, "r+b");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	long size = ftell(f);
	for (unsigned k = 1 + rnd(4); k-- > 0;) {
		long at = size / 4 + (long)rnd((unsigned)(size - size / 4 - 16));
		uint32_t v = rnd(4) == 0 ? rnd(0x7fffffff) : (rnd(4) << 30) | (rnd(64) << 24) | rnd(0x8000);
		assert_int_equal(fseek(f, at & ~3L, SEEK_SET), 0);
		assert_int_equal(fwrite(&v, 4, 1, f), 1);
	}
	fclose(f);
	if (rnd(3) == 0)
		assert_int_equal(truncate(path, size - 1 - rnd(40)), 0);
}

/*
 * The statistics of random traces (random_trace(), some of them damaged): their own scan of
 * the parser's runs, the runs through the light path and one event at a time give the same
 * report (text, CSV, JSON), status, message and counts. TK_TEST_SEED=N replays one seed.
 */
static void test_scan_random(void **state_)
{
	(void)state_;
	static const tk_export_format fmts[] = { TK_EXPORT_STATS_TEXT, TK_EXPORT_STATS_CSV, TK_EXPORT_STATS_JSON };
	const char *env = getenv("TK_TEST_SEED");
	uint64_t first = env != NULL ? strtoull(env, NULL, 0) : 1, n_seeds = env != NULL ? 1 : 48;
	const char *path = tkt_path("scan_random.kev");
	for (uint64_t seed = first; seed < first + n_seeds; seed++) {
		char what[96];
		g_rnd = seed * 0x9e3779b97f4a7c15ull + 1;
		unsigned flags = rnd(16), damaged = rnd(3) == 0;
		random_trace(path, flags, seed % 8 == 0 ? 60000 : 6000);
		if (damaged)
			random_damage(path);
		snprintf(what, sizeof(what), "seed %llu (TK_TEST_SEED=%llu), flags %u%s", (unsigned long long)seed,
			 (unsigned long long)seed, flags, damaged ? ", damaged" : "");
		modes_compare(path, what, 0, NULL, fmts, 3, "10:11=item,12:13=other", "40=level,41", 200);
	}
}

/* --stats-modes: the statistics of a trace (text, CSV, JSON) one event at a time, through
 * their scan and through the light path's runs: 0 when all agree (bytes, status, message,
 * counts), else 1 and what differs. */
static int driver_stats_modes(const char *path, const char *pairs, const char *counters)
{
	static const tk_export_format fmts[] = { TK_EXPORT_STATS_TEXT, TK_EXPORT_STATS_CSV, TK_EXPORT_STATS_JSON };
	static const unsigned modes[3] = { ONE_BY_ONE, 0, NO_SCAN };
	int bad = 0;
	for (size_t i = 0; i < 3; i++) {
		char *out[3] = { NULL, NULL, NULL }, err[3][256];
		size_t len[3] = { 0, 0, 0 };
		int rc[3];
		tk_export_stats st[3];
		for (int k = 0; k < 3; k++) {
			FILE *f = open_memstream(&out[k], &len[k]);
			if (f == NULL)
				return 1;
			memset(&st[k], 0, sizeof(st[k]));
			rc[k] = tk_export_file_flags(path, f, fmts[i], modes[k], pairs, counters, &st[k], err[k],
						     sizeof(err[k]));
			fclose(f);
		}
		for (int k = 1; k < 3; k++)
			if (rc[k] != rc[0] || strcmp(err[k], err[0]) != 0 || memcmp(&st[k], &st[0], sizeof(st[0])) != 0 ||
			    len[k] != len[0] || memcmp(out[k], out[0], len[0]) != 0) {
				fprintf(stderr, "test_export: %s, format %d: mode %d differs from one event at a time\n", path,
					(int)fmts[i], k);
				bad = 1;
			}
		if (len[0] == 0) {
			fprintf(stderr, "test_export: %s: no statistics\n", path);
			bad = 1;
		}
		for (int k = 0; k < 3; k++)
			free(out[k]);
	}
	return bad;
}

/* A pseudo-random number (xorshift64*), the same on every machine. */
static uint64_t rnd_next(uint64_t *st)
{
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return *st * 0x2545f4914f6cdd1dull;
}

/* path exported to a string with flags, the status, message and statistics kept */
struct flagged_export {
	char *out;
	size_t len;
	int rc;
	char err[256];
	tk_export_stats st;
};

static void export_flagged(const char *path, tk_export_format fmt, unsigned flags, struct flagged_export *e)
{
	FILE *f = open_memstream(&e->out, &e->len);
	assert_non_null(f);
	memset(&e->st, 0, sizeof(e->st));
	e->err[0] = '\0';
	e->rc = tk_export_file_flags(path, f, fmt, flags, "10:11=item,12:13=two", "40=level", &e->st, e->err,
				     sizeof(e->err));
	fclose(f);
}

/*
 * Perfetto's own run consumers (export_perfetto.c: pf_scan() over the parser's blocks, and
 * pf_slot_run(), pf_light_run() over its runs without the scan (NO_SCAN): the model's light
 * path fused with the packets) against the model's light path (TK__EXPORT_MODEL_RUNS) and
 * against every event decoded, on generated traces: random interleavings over 3 CPUs of
 * function entries and exits (most matching the innermost open one, some an outer one, some
 * nothing), two pairs (ends that match, cross or match nothing), a counter, instants, user
 * strings (combine events), kernel calls, owners changing by THRUNNING, events before any
 * owner, times that step back, a few threads or many (the model's table grows), a depth past
 * TK_EXPORT_MAX_DEPTH, symbols on, one event at a time, and damage (the same status,
 * message, statistics and bytes).
 */
#define TK__EXPORT_MODEL_RUNS_FLAG 0x20000000u /* src/export/export_internal.h */

static void test_light_run_same(void **state_)
{
	(void)state_;
	for (int variant = 0; variant < 6; variant++) {
		const char *path = tkt_path("fused.kev");
		struct raw_file rf;
		uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(variant + 1);
		const unsigned ncpu = 3;
		const unsigned n_threads = variant == 2 ? 300 : 4;
		uint32_t t = 1000;
		uint32_t stack[3][64]; /* a guess at each CPU's open functions, to make exits match */
		unsigned depth[3] = { 0, 0, 0 }, cpu = 0;

		raw_open(&rf, path, ncpu, variant == 3 ? 2400000000u : 1000000000u);
		for (unsigned i = 0; i < 40; i++) /* before any owner */
			raw_s(&rf, i % ncpu, i % 2 ? _TRACE_USER_C : _TRACE_SYSTEM_C,
			      i % 2 ? 10 + i % 4 : _NTO_TRACE_SYS_FUNC_ENTER + i % 4 / 2, t += 3, 0x401000, i);
		for (unsigned c = 0; c < ncpu; c++)
			raw_s(&rf, c, _TRACE_PR_TH_C, STATE_RUNNING, t += 1, 100, 1 + c);
		if (variant == 4) { /* deeper than TK_EXPORT_MAX_DEPTH on one thread, then back out */
			for (unsigned i = 0; i < 4200; i++)
				raw_s(&rf, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t += 1, 0x500000 + (i % 5) * 4, i);
			for (unsigned i = 4200; i-- > 0;)
				raw_s(&rf, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t += 1, 0x500000 + (i % 5) * 4, i);
		}
		for (unsigned i = 0; i < 40000; i++) {
			uint64_t r = rnd_next(&rng);
			/* variant 0: any CPU's event next; else runs of one CPU's (one thread's) events */
			if (variant == 0 || r % 16 == 0)
				cpu = (unsigned)(r >> 4) % ncpu;
			unsigned what = (unsigned)(r >> 8) % 100;
			uint32_t fn = 0x401000 + (uint32_t)((r >> 16) % 8) * 16, site = 0x9000 + (uint32_t)((r >> 24) % 3);
			uint32_t d0 = (uint32_t)(r >> 30), d1 = (uint32_t)(r >> 40) % 5 == 0 ? 0xffffffffu : (uint32_t)(r >> 44);
			t += (uint32_t)(r >> 50) % 40;
			if ((r >> 56) % 50 == 0 && t > 100) /* a time before the last one */
				t -= 30;
			if (what < 3) { /* another owner */
				raw_s(&rf, cpu, _TRACE_PR_TH_C, STATE_RUNNING, t,
				      100 + (uint32_t)(r >> 20) % (n_threads > 4 ? 7 : 2), 1 + (uint32_t)(r >> 28) % n_threads);
				depth[cpu] = 0;
			} else if (what < 30) {
				raw_s(&rf, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t, fn, site);
				if (depth[cpu] < 64)
					stack[cpu][depth[cpu]++] = fn;
			} else if (what < 55) {
				unsigned k = (unsigned)(r >> 36) % 10;
				uint32_t x = depth[cpu] == 0 || k == 0 ? fn
					     : k == 1 && depth[cpu] > 1 ? stack[cpu][depth[cpu] - 2]
									: stack[cpu][depth[cpu] - 1];
				raw_s(&rf, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, t, x, site);
				if (depth[cpu] > 0)
					depth[cpu]--;
			} else if (what < 85) {
				static const unsigned user_codes[] = { 10, 11, 10, 11, 12, 13, 40, 20, 21, 20, 22, 11 };
				raw_s(&rf, cpu, _TRACE_USER_C, user_codes[(r >> 36) % 12], t, d0, d1);
			} else if (what < 88) { /* a user string: a combine event */
				uint32_t h = _TRACE_MAKE_CODE(cpu, 0, _TRACE_USER_C, 20 + (uint32_t)(r >> 36) % 3);
				raw_slot(&rf, h | _TRACE_STRUCT_CB, t, 0x41414141, 0x42424242);
				raw_slot(&rf, h | _TRACE_STRUCT_CE, t, 0x00434343, 0);
			} else if (what < 92) {
				raw_s(&rf, cpu, _TRACE_KER_CALL_C, 2 * 6 + (r >> 36) % 2, t, 1, 2);
			} else if (what < 95) { /* a short user event or one of another code */
				raw_s(&rf, cpu, _TRACE_USER_C, 100 + (uint32_t)(r >> 36) % 900, t, d0, d1);
			} else {
				raw_s(&rf, cpu, _TRACE_USER_C, 20, t, d0, d1);
			}
		}
		if (variant == 5) { /* damage: a continuation of nothing, then more events */
			raw_slot(&rf, _TRACE_MAKE_CODE(0, _TRACE_STRUCT_CE, _TRACE_USER_C, 31), 1, 2, 3);
			for (unsigned i = 0; i < 300; i++)
				raw_s(&rf, i % ncpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, t += 3, 0x401000, i);
			assert_int_equal(fwrite("\x01\x02\x03", 1, 3, rf.f), 3);
		}
		fclose(rf.f);

		static const tk_export_format fmts[] = { TK_EXPORT_PERFETTO, TK_EXPORT_CHROME_JSON };
		static const unsigned flag_sets[] = { 0, ONE_BY_ONE, TK_EXPORT_SYMBOLS, NO_SCAN };
		for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
			for (size_t k = 0; k < sizeof(flag_sets) / sizeof(flag_sets[0]); k++) {
				struct flagged_export a, b;
				export_flagged(path, fmts[i], flag_sets[k], &a);
				export_flagged(path, fmts[i], flag_sets[k] | TK__EXPORT_MODEL_RUNS_FLAG, &b);
				if (a.rc != b.rc || strcmp(a.err, b.err) != 0 || memcmp(&a.st, &b.st, sizeof(a.st)) != 0 ||
				    a.len != b.len || memcmp(a.out, b.out, a.len) != 0)
					fail_msg("variant %d, format %d, flags %#x: the fused run differs from the model's "
						 "(%d/%d, %zu/%zu bytes)",
						 variant, (int)fmts[i], flag_sets[k], a.rc, b.rc, a.len, b.len);
				assert_true(a.len > 1000);
				if (variant == 5)
					assert_int_not_equal(a.rc, 0);
				if (k == 0 && variant != 5) { /* and every event decoded */
					size_t ref_len = 0;
					char *ref = export_decoded(path, fmts[i], "10:11=item,12:13=two", "40=level", &ref_len);
					if (ref_len != a.len || memcmp(ref, a.out, a.len) != 0)
						fail_msg("variant %d, format %d: the fused run differs from every event decoded",
							 variant, (int)fmts[i]);
					free(ref);
				}
				/* (times step back: no pf_walk(), whose scheduling records must go forward) */
				assert_true(a.st.slices > 1000 && a.st.instants > 1000);
				assert_true(a.st.unmatched_ends > 100 && a.st.closed_by_outer > 100);
				if (variant == 4)
					assert_true(a.st.depth_overflow > 0);
				free(a.out);
				free(b.out);
			}
		}
	}
}

/* Chrome JSON without its run (export_json.c): every USER instant and pair end decoded. */
extern const tk__format tk__export_json_model;

/* tk_export_file_flags() of Chrome JSON with the format's run (json) or without it. */
static void export_json_way(const char *path, unsigned flags, int json_run, struct flagged_export *e)
{
	FILE *f = open_memstream(&e->out, &e->len);
	tk_export *x = NULL;
	assert_non_null(f);
	memset(&e->st, 0, sizeof(e->st));
	e->err[0] = '\0';
	if (json_run) {
		e->rc = tk_export_file_flags(path, f, TK_EXPORT_CHROME_JSON, flags, "10:11=item,12:13=other", "40=level,41",
					     &e->st, e->err, sizeof(e->err));
	} else {
		/* tk_export_file_flags()'s steps with the other format */
		assert_int_equal(tk__export_create(&x, &tk__export_json_model, TK_EXPORT_CHROME_JSON, f), 0);
		x->one_by_one = (flags & ONE_BY_ONE) != 0;
		x->no_scan = (flags & NO_SCAN) != 0;
		e->rc = (flags & TK_EXPORT_SYMBOLS) ? tk__export_use_symbols(x, path) : 0;
		if (e->rc == 0)
			e->rc = tk__export_run_file(x, path, "10:11=item,12:13=other", "40=level,41", &e->st, e->err,
						    sizeof(e->err));
		else
			tk_export_free(x);
	}
	fclose(f);
}

/*
 * Chrome JSON's scan and run (export_json.c: json_scan() over the parser's blocks, and
 * json_run() over its runs without the scan (NO_SCAN): USER instants and pair ends written
 * from their words, fused with the model's light path) against the same format without
 * them (every instant and pair end decoded, tk__export_json_model) on random traces
 * (random_trace(), some damaged: swapped bytes and other clocks, where json_light_run()
 * takes the runs), one event at a time and with symbols: the same bytes, status, message
 * and counts. TK_TEST_SEED=N replays one seed.
 */
static void test_json_run_random(void **state_)
{
	(void)state_;
	static const unsigned flag_sets[] = { 0, NO_SCAN, ONE_BY_ONE, TK_EXPORT_SYMBOLS };
	const char *env = getenv("TK_TEST_SEED");
	uint64_t first = env != NULL ? strtoull(env, NULL, 0) : 1, n_seeds = env != NULL ? 1 : 32;
	const char *path = tkt_path("json_random.kev");
	uint64_t instants = 0, slices = 0;
	for (uint64_t seed = first; seed < first + n_seeds; seed++) {
		g_rnd = seed * 0x9e3779b97f4a7c15ull + 7;
		unsigned flags = rnd(16), damaged = rnd(3) == 0;
		random_trace(path, flags, seed % 8 == 0 ? 60000 : 6000);
		if (damaged)
			random_damage(path);
		for (size_t k = 0; k < sizeof(flag_sets) / sizeof(flag_sets[0]); k++) {
			struct flagged_export a, b;
			export_json_way(path, flag_sets[k], 1, &a);
			export_json_way(path, flag_sets[k], 0, &b);
			if (a.rc != b.rc || strcmp(a.err, b.err) != 0 || memcmp(&a.st, &b.st, sizeof(a.st)) != 0 ||
			    a.len != b.len || memcmp(a.out, b.out, a.len) != 0)
				fail_msg("seed %llu (TK_TEST_SEED=%llu), flags %u%s, export flags %#x: JSON's run differs "
					 "from every instant and pair end decoded (%d/%d, %zu/%zu bytes)",
					 (unsigned long long)seed, (unsigned long long)seed, flags, damaged ? ", damaged" : "",
					 flag_sets[k], a.rc, b.rc, a.len, b.len);
			instants += a.st.instants;
			slices += a.st.slices;
			free(a.out);
			free(b.out);
		}
	}
	if (env == NULL)
		assert_true(instants > 10000 && slices > 10000);
}

static int driver(int argc, char **argv)
{
	char err[256];
	if (strcmp(argv[1], "--stats-modes") == 0)
		return driver_stats_modes(argv[2], argc > 3 && argv[3][0] ? argv[3] : NULL,
					  argc > 4 && argv[4][0] ? argv[4] : NULL);
	tk_export_format fmt = strcmp(argv[1], "--perfetto") == 0    ? TK_EXPORT_PERFETTO
			       : strcmp(argv[1], "--stats") == 0     ? TK_EXPORT_STATS_TEXT
			       : strcmp(argv[1], "--stats-csv") == 0 ? TK_EXPORT_STATS_CSV
			       : strcmp(argv[1], "--stats-json") == 0 ? TK_EXPORT_STATS_JSON
								     : TK_EXPORT_CHROME_JSON;
	int rc = tk_export_file(argv[2], stdout, fmt, argc > 3 && argv[3][0] ? argv[3] : NULL,
				argc > 4 && argv[4][0] ? argv[4] : NULL, NULL, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "test_export: %s: %s\n", argv[2], err[0] ? err : tk_strerror(rc));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const int part = argc == 4 && strcmp(argv[1], "--part") == 0;
	const int only = argc == 3 && strcmp(argv[1], "--only") == 0;
	if (!part && !only && argc >= 3 && strncmp(argv[1], "--", 2) == 0)
		return driver(argc, argv);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slices_nest),
		cmocka_unit_test(test_slices_per_thread),
		cmocka_unit_test(test_depth_overflow),
		cmocka_unit_test(test_names_escaped),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_declarations),
		cmocka_unit_test(test_damaged_input),
		cmocka_unit_test(test_incomplete_combine),
		cmocka_unit_test(test_lost_events),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_api_errors),
		cmocka_unit_test(test_perfetto_structure),
		cmocka_unit_test(test_perfetto_sched),
		cmocka_unit_test(test_perfetto_high_pids),
		cmocka_unit_test(test_perfetto_long_payload),
		cmocka_unit_test(test_perfetto_damaged),
		cmocka_unit_test(test_names_invalid_utf8),
		cmocka_unit_test(test_stats_states),
		cmocka_unit_test(test_linux_kercalls),
		cmocka_unit_test(test_stats_percentiles),
		cmocka_unit_test(test_stats_owner_markers),
		cmocka_unit_test(test_owner_markers_cpu),
		cmocka_unit_test(test_stats_pair_names_safe),
		cmocka_unit_test(test_sqlite),
		cmocka_unit_test(test_sqlite_names_latin1),
		cmocka_unit_test(test_sqlite_long_string),
		cmocka_unit_test(test_sqlite_unordered),
		cmocka_unit_test(test_sqlite_long_args),
		cmocka_unit_test(test_sqlite_batches),
		cmocka_unit_test(test_light_path_same),
		cmocka_unit_test(test_runs_same),
		cmocka_unit_test(test_runs_same_raw),
		cmocka_unit_test(test_light_run_same),
		cmocka_unit_test(test_json_run_random),
		cmocka_unit_test(test_stats_names_utf8),
		cmocka_unit_test(test_instant_names_cached),
		cmocka_unit_test(test_scan_random),
		cmocka_unit_test(test_csv_pairing),
		cmocka_unit_test(test_csv_not_assumed),
		cmocka_unit_test(test_csv_bad_input),
		cmocka_unit_test(test_csv_api),
		cmocka_unit_test(test_csv_many_open),
		cmocka_unit_test(test_csv_sqlite_nan),
		cmocka_unit_test(test_csv_long_name),
	};
	/* --only NAME: that test alone */
	for (size_t i = 0; only && i < sizeof(tests) / sizeof(tests[0]); i++)
		if (strcmp(tests[i].name, argv[2]) == 0)
			return _cmocka_run_group_tests("test_export", &tests[i], 1, NULL, NULL);
	if (only) {
		fprintf(stderr, "test_export: no test %s\n", argv[2]);
		return 2;
	}
	/* --part K N: the tests whose index is K modulo N, so that ctest runs the long ones
	 * (the comparisons on random traces) side by side (tests/CMakeLists.txt) */
	if (part) {
		size_t k = strtoul(argv[2], NULL, 10), n = strtoul(argv[3], NULL, 10), m = 0;
		struct CMUnitTest some[sizeof(tests) / sizeof(tests[0])];
		if (n == 0 || k >= n) {
			fprintf(stderr, "test_export: --part K N with K < N\n");
			return 2;
		}
		for (size_t i = k; i < sizeof(tests) / sizeof(tests[0]); i += n)
			some[m++] = tests[i];
		return _cmocka_run_group_tests("test_export", some, m, NULL, NULL);
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
