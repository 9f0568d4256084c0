/* SPDX-License-Identifier: MIT */
/* Unit tests of the csv module (issue 13): VTune external-data CSV reading and writing. */
#include "tk_test.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "tracekit/csv.h"
#include "tracekit/kev.h"
#include "tracekit/samprec_shared.h"
#include "tracekit/tbrw.h"
#include "tracekit/traceparser.h"

static tk_csv_reader *open_text(const char *text)
{
	tk_csv_reader *r = NULL;
	int rc = tk_csv_reader_open_mem(&r, text, strlen(text), "t.csv");
	if (rc != 0)
		print_message("open: %s\n", r ? tk_csv_reader_errmsg(r) : tk_strerror(rc));
	assert_int_equal(rc, 0);
	return r;
}

/* The error message of the first failing row (or header) of text. */
static void expect_error(const char *text, const char *msg)
{
	tk_csv_reader *r = NULL;
	tk_csv_row row;
	int rc = tk_csv_reader_open_mem(&r, text, strlen(text), "t.csv");
	if (rc == 0) {
		while ((rc = tk_csv_read_row(r, &row)) == 1)
			;
	}
	assert_true(rc < 0);
	assert_non_null(r);
	assert_string_equal(tk_csv_reader_errmsg(r), msg);
	tk_csv_reader_close(r);
}

/* Intel's first published example: frames without pid/tid, tasks with them. */
static void test_intel_qpc(void **state)
{
	(void)state;
	tk_csv_reader *r = open_text("name,start_tsc.QPC,end_tsc,pid,tid\n"
				     "frame1,2,30,,\n"
				     "frame1,33,59,,\n"
				     "taskType1,3,43,1,1\n");
	tk_csv_row row;
	assert_int_equal(tk_csv_reader_kind(r), TK_CSV_INTERVALS);
	assert_int_equal(tk_csv_reader_clock(r), TK_CSV_QPC);
	assert_int_equal(tk_csv_reader_columns(r), TK_CSV_HAS_PID | TK_CSV_HAS_TID);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_string_equal(row.name, "frame1");
	assert_int_equal(row.start, 2);
	assert_int_equal(row.end, 30);
	assert_int_equal(row.flags, 0); /* a frame */
	assert_int_equal(row.line, 2);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_int_equal(row.start, 33);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_string_equal(row.name, "taskType1");
	assert_int_equal(row.flags, TK_CSV_HAS_PID | TK_CSV_HAS_TID); /* a task */
	assert_int_equal(row.pid, 1);
	assert_int_equal(row.tid, 1);
	assert_int_equal(tk_csv_read_row(r, &row), 0);
	tk_csv_reader_close(r);
}

static void test_intel_utc_tsc(void **state)
{
	(void)state;
	tk_csv_reader *r = open_text("name,start_tsc.UTC,end_tsc,pid,tid\r\n"
				     "Frame1,2013-08-28 01:02:03.0004,2013-08-28 01:02:03.0005,,\r\n"
				     "Task,2013-08-28 01:02:03.0004,2013-08-28 01:02:03.0005,1234,1235\r\n");
	tk_csv_row row;
	assert_int_equal(tk_csv_reader_clock(r), TK_CSV_UTC);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	/* 2013-08-28 01:02:03 UTC is 1377651723 */
	assert_int_equal(row.start, 1377651723000400000ull);
	assert_int_equal(row.end, 1377651723000500000ull);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_int_equal(row.pid, 1234);
	assert_int_equal(row.tid, 1235);
	tk_csv_reader_close(r);

	r = open_text("name,start_tsc.TSC,end_tsc,pid,tid\n"
		      "function1_task_type,419280823342846,419280876920231,12832,11644\n");
	assert_int_equal(tk_csv_reader_clock(r), TK_CSV_TSC);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_int_equal(row.start, 419280823342846ull);
	tk_csv_reader_close(r);
}

/* pid and tid left out of the header entirely; tid without pid. */
static void test_optional_columns(void **state)
{
	(void)state;
	tk_csv_row row;
	tk_csv_reader *r = open_text("name,start_tsc.CLOCK_MONOTONIC_RAW,end_tsc\nf,1,2\n");
	assert_int_equal(tk_csv_reader_columns(r), 0);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_int_equal(row.flags, 0);
	tk_csv_reader_close(r);
	r = open_text("name,start_tsc.RDTSC,end_tsc,tid\nt,1,2,9\n\nf,3,4,\n");
	assert_int_equal(tk_csv_reader_columns(r), TK_CSV_HAS_TID);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_int_equal(row.flags, TK_CSV_HAS_TID);
	assert_int_equal(row.tid, 9);
	assert_int_equal(tk_csv_read_row(r, &row), 1); /* the blank line is skipped */
	assert_int_equal(row.line, 4);
	assert_int_equal(row.flags, 0);
	tk_csv_reader_close(r);
}

static void test_counters(void **state)
{
	(void)state;
	tk_csv_row row;
	tk_csv_reader *r = open_text("tsc.QPC,Distance.COUNT,\"Power, W.INST\",Temp.INST,pid,tid\n"
				     "100,10,1.5,-3,,\n"
				     "200,,3e2,40,7,8\n");
	int inst;
	assert_int_equal(tk_csv_reader_kind(r), TK_CSV_COUNTERS);
	assert_int_equal(tk_csv_reader_n_counters(r), 3);
	assert_string_equal(tk_csv_reader_counter(r, 0, &inst), "Distance");
	assert_int_equal(inst, 0);
	assert_string_equal(tk_csv_reader_counter(r, 1, &inst), "Power, W");
	assert_int_equal(inst, 1);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_int_equal(row.time, 100);
	assert_int_equal(row.n_values, 3);
	assert_true(row.values[0].present && !row.values[0].is_float && row.values[0].i == 10);
	assert_true(row.values[1].present && row.values[1].is_float && row.values[1].d == 1.5);
	assert_true(row.values[2].present && row.values[2].i == -3);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_false(row.values[0].present);
	assert_true(row.values[1].d == 300.0);
	assert_int_equal(row.flags, TK_CSV_HAS_PID | TK_CSV_HAS_TID);
	tk_csv_reader_close(r);
}

static void test_quoting(void **state)
{
	(void)state;
	tk_csv_row row;
	tk_csv_reader *r = open_text("name,start_tsc.QPC,end_tsc\n"
				     "\"a, \"\"b\"\"\",1,2\n"
				     "\"two\nlines\",3,4\n"
				     "next,5,6\n");
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_string_equal(row.name, "a, \"b\"");
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_string_equal(row.name, "two\nlines");
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_int_equal(row.line, 5); /* the quoted newline counts */
	tk_csv_reader_close(r);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("nam,start_tsc.QPC,end_tsc\n",
		     "t.csv:1:1: wrong header: expected \"name,start_tsc.<CLOCK>,end_tsc...\" (intervals) or "
		     "\"tsc.<CLOCK>,Name.COUNT|.INST...\" (counters)");
	expect_error("name,start_tsc.QPX,end_tsc\n",
		     "t.csv:1:16: unknown timestamp suffix \"QPX\" (QPC, CLOCK_MONOTONIC_RAW, RDTSC, TSC or UTC)");
	expect_error("name,start_tsc.QPC,end_tsc,pid,tid\nx,1,2\n", "t.csv:2:6: 3 fields, the header has 5");
	expect_error("name,start_tsc.QPC,end_tsc\nx,1,2,3\n", "t.csv:2:7: 4 fields, the header has 3");
	expect_error("name,start_tsc.QPC,end_tsc\nx,abc,2\n", "t.csv:2:3: start timestamp \"abc\" is not a number");
	expect_error("name,start_tsc.QPC,end_tsc\nx,1,-2\n", "t.csv:2:5: end timestamp \"-2\" is negative");
	expect_error("name,start_tsc.QPC,end_tsc\nx,1,99999999999999999999\n",
		     "t.csv:2:5: end timestamp \"99999999999999999999\" is out of range");
	expect_error("name,start_tsc.UTC,end_tsc\nx,2013-13-01 00:00:00,2013-13-01 00:00:01\n",
		     "t.csv:2:3: start timestamp \"2013-13-01 00:00:00\" is not a date \"YYYY-MM-DD hh:mm:ss[.fraction]\"");
	expect_error("name,start_tsc.UTC,end_tsc\nx,2013-01-01 00:00:00.,2013-01-01 00:00:01\n",
		     "t.csv:2:3: start timestamp \"2013-01-01 00:00:00.\" is not a date \"YYYY-MM-DD hh:mm:ss[.fraction]\"");
	expect_error("name,start_tsc.QPC,end_tsc\nx,9,3\n", "t.csv:2:5: end before start");
	expect_error("name,start_tsc.QPC,end_tsc,tid,tid\n", "t.csv:1:32: duplicate column \"tid\"");
	expect_error("tsc.QPC,A.COUNT,A.COUNT\n", "t.csv:1:17: duplicate column \"A.COUNT\"");
	expect_error("tsc.QPC,A.COUNT,B\n", "t.csv:1:17: counter column \"B\" has neither .COUNT nor .INST");
	expect_error("tsc.QPC,A.COUNT\n1,x\n", "t.csv:2:3: counter value \"x\" is not a number");
	expect_error("name,start_tsc.QPC,end_tsc\n\xc3\x28,1,2\n", "t.csv:2:1: name is not valid UTF-8");
	expect_error("name,start_tsc.QPC,end_tsc\n,1,2\n", "t.csv:2:1: empty name");
	expect_error("name,start_tsc.QPC,end_tsc\n\"x,1,2\n", "t.csv:2:1: quoted field without its closing quote");
	expect_error("name,start_tsc.QPC,end_tsc\nx\"y,1,2\n", "t.csv:2:2: quote inside an unquoted field");
	expect_error("name,start_tsc.QPC,end_tsc\nx,1,2,pid\n", "t.csv:2:7: 4 fields, the header has 3");
	expect_error("", "t.csv:1: empty file: no header line");
	expect_error("name,start_tsc.QPC,end_tsc,pid\nx,1,2,4294967296\n",
		     "t.csv:2:7: pid \"4294967296\" is not a number from 0 to 4294967295");
}

/* A line without newline longer than the cap: an error once the cap is read, not the file. */
static void test_long_line(void **state)
{
	(void)state;
	size_t n = 3u * TK_CSV_MAX_RECORD;
	char *text = malloc(n + 64);
	assert_non_null(text);
	strcpy(text, "name,start_tsc.QPC,end_tsc\n");
	size_t h = strlen(text);
	memset(text + h, 'a', n);
	text[h + n] = 0;
	tk_csv_reader *r = NULL;
	tk_csv_row row;
	assert_int_equal(tk_csv_reader_open_mem(&r, text, h + n, "t.csv"), 0);
	assert_int_equal(tk_csv_read_row(r, &row), TK_ETOOBIG);
	assert_string_equal(tk_csv_reader_errmsg(r), "t.csv:2: record longer than 1048576 bytes (no line end)");
	assert_true(tk_csv_reader_offset(r) < 2u * TK_CSV_MAX_RECORD + (8u << 20));
	/* the reader stays in error */
	assert_int_equal(tk_csv_read_row(r, &row), TK_ETOOBIG);
	tk_csv_reader_close(r);
	free(text);
}

static void test_times(void **state)
{
	(void)state;
	char buf[48];
	uint64_t t;
	assert_int_equal(tk_csv_parse_time("2013-08-28 01:02:03.123456789123", 32, TK_CSV_UTC, &t), 0);
	assert_int_equal(t, 1377651723123456789ull);
	tk_csv_format_time(buf, sizeof(buf), TK_CSV_UTC, t);
	assert_string_equal(buf, "2013-08-28 01:02:03.123456789");
	assert_int_equal(tk_csv_parse_time("2000-02-29 23:59:59", 19, TK_CSV_UTC, &t), 0);
	assert_int_equal(t, 951868799000000000ull);
	assert_int_equal(tk_csv_parse_time("1900-02-29 00:00:00", 19, TK_CSV_UTC, &t), TK_EFORMAT);
	assert_int_equal(tk_csv_parse_time("2001-02-29 00:00:00", 19, TK_CSV_UTC, &t), TK_EFORMAT);
	assert_int_equal(tk_csv_parse_time("18446744073709551615", 20, TK_CSV_QPC, &t), 0);
	assert_int_equal(t, UINT64_MAX);
	tk_csv_format_time(buf, sizeof(buf), TK_CSV_TSC, t);
	assert_string_equal(buf, "18446744073709551615");
	tk_csv_clock c;
	assert_int_equal(tk_csv_clock_parse("CLOCK_MONOTONIC_RAW", &c), 0);
	assert_int_equal(c, TK_CSV_CLOCK_MONOTONIC_RAW);
	assert_int_equal(tk_csv_clock_parse("qpc", &c), TK_EINVAL);
}

static void test_file_names(void **state)
{
	(void)state;
	char user[64], host[64], buf[64];
	assert_int_equal(tk_csv_parse_file_name("/x/y/phases-hostname-octagon53.csv", user, 64, host, 64), 1);
	assert_string_equal(user, "phases");
	assert_string_equal(host, "octagon53");
	assert_int_equal(tk_csv_parse_file_name("-hostname-h.csv", user, 64, host, 64), 1);
	assert_string_equal(user, "");
	assert_string_equal(host, "h");
	assert_int_equal(tk_csv_parse_file_name("phases.csv", user, 64, host, 64), 0);
	assert_string_equal(host, "");
	assert_int_equal(tk_csv_parse_file_name("a-hostname-.csv", user, 64, host, 64), 0);
	assert_int_equal(tk_csv_parse_file_name("a-hostname-h.csv", user, 64, host, 1), TK_EOVERFLOW);
	assert_int_equal(tk_csv_file_name(buf, sizeof(buf), "trace-intervals", "octagon53"), 0);
	assert_string_equal(buf, "trace-intervals-hostname-octagon53.csv");
	assert_int_equal(tk_csv_file_name(buf, 8, "trace", "h"), TK_EOVERFLOW);
	/* the trace's host first, then VTUNE_HOSTNAME, then the machine */
	setenv("VTUNE_HOSTNAME", "vt", 1);
	assert_int_equal(tk_csv_default_host(buf, sizeof(buf), "tracehost"), 0);
	assert_string_equal(buf, "tracehost");
	assert_int_equal(tk_csv_default_host(buf, sizeof(buf), NULL), 0);
	assert_string_equal(buf, "vt");
	unsetenv("VTUNE_HOSTNAME");
	assert_int_equal(tk_csv_default_host(buf, sizeof(buf), ""), 0);
	assert_true(buf[0] != 0);
}

/* What the writer writes reads back the same (quoting, empty pid/tid, values). */
static void test_writer_round_trip(void **state)
{
	(void)state;
	const char *path = tkt_path("w-hostname-h.csv");
	tk_csv_writer *w = NULL;
	assert_int_equal(tk_csv_writer_open(&w, path, TK_CSV_INTERVALS, TK_CSV_UTC, TK_CSV_HAS_PID | TK_CSV_HAS_TID,
					    NULL, 0),
			 0);
	assert_int_equal(tk_csv_write_interval(w, "a,\"b\"\nc", 7, 1377651723000400000ull, 1377651723000500000ull, 0, 0,
					       0),
			 0);
	assert_int_equal(tk_csv_write_interval(w, "t", 1, 5, 6, TK_CSV_HAS_PID | TK_CSV_HAS_TID, 1, 2), 0);
	assert_int_equal(tk_csv_writer_close(w), 0);
	FILE *f = fopen(path, "r");
	char text[512];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	assert_string_equal(text, "name,start_tsc.UTC,end_tsc,pid,tid\n"
				  "\"a,\"\"b\"\"\nc\",2013-08-28 01:02:03.000400000,2013-08-28 01:02:03.000500000,,\n"
				  "t,1970-01-01 00:00:00.000000005,1970-01-01 00:00:00.000000006,1,2\n");
	tk_csv_reader *r = NULL;
	tk_csv_row row;
	assert_int_equal(tk_csv_reader_open(&r, path, NULL), 0);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_string_equal(row.name, "a,\"b\"\nc");
	assert_int_equal(row.start, 1377651723000400000ull);
	assert_int_equal(tk_csv_read_row(r, &row), 1);
	assert_int_equal(row.flags, TK_CSV_HAS_PID | TK_CSV_HAS_TID);
	tk_csv_reader_close(r);

	tk_csv_counter cols[2] = {{"Distance", 0}, {"Power", 1}};
	assert_int_equal(tk_csv_writer_open(&w, path, TK_CSV_COUNTERS, TK_CSV_QPC, 0, cols, 2), 0);
	tk_csv_value v[2] = {{1, 0, 7, 0}, {1, 1, 0, 0.1}};
	assert_int_equal(tk_csv_write_counters(w, 100, v, 0, 0, 0), 0);
	v[0].present = 0;
	v[1].d = 300;
	assert_int_equal(tk_csv_write_counters(w, 200, v, 0, 0, 0), 0);
	assert_int_equal(tk_csv_writer_close(w), 0);
	f = fopen(path, "r");
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	assert_string_equal(text, "tsc.QPC,Distance.COUNT,Power.INST\n100,7,0.1\n200,,300.0\n");
}

/* An aborted writer leaves nothing. */
static void test_writer_abort(void **state)
{
	(void)state;
	const char *path = tkt_path("abort-hostname-h.csv");
	tk_csv_writer *w = NULL;
	assert_int_equal(tk_csv_writer_open(&w, path, TK_CSV_INTERVALS, TK_CSV_QPC, 0, NULL, 0), 0);
	assert_int_equal(tk_csv_write_interval(w, "x", 1, 1, 2, 0, 0, 0), 0);
	tk_csv_writer_abort(w);
	assert_int_equal(access(path, F_OK), -1);
}

/* ---- tk_csv_import() and tk_csv_export() ------------------------------------------------ */

/* The user events of a .kev as the decoder gives them. */
struct kev_seen {
	unsigned n;
	int code[32];
	uint64_t cycles[32];
	uint32_t w0[32];
	char names[8][16];
	tk_kev_decoded dec;
};

static int seen_cb(struct traceparser_state *st, void *ud, unsigned header, unsigned time, unsigned *buf,
		   unsigned len)
{
	struct kev_seen *k = ud;
	if (tk_traceparser_decode(st, header, time, buf, len, 0, &k->dec) != 0 || k->n == 32)
		return 0;
	k->code[k->n] = k->dec.number;
	k->cycles[k->n] = k->dec.cycles;
	k->w0[k->n] = len > 0 ? buf[0] : 0;
	if (k->dec.number == 1005 && len >= 2 && buf[0] < 8)
		snprintf(k->names[buf[0]], sizeof(k->names[0]), "%s", (const char *)(buf + 1));
	k->n++;
	return 0;
}

static void read_kev(const char *path, struct kev_seen *k)
{
	memset(k, 0, sizeof(*k));
	struct traceparser_state *st = traceparser_init(NULL);
	assert_non_null(st);
	tk_traceparser_cs_internal(st, k, seen_cb, _TRACE_USER_C >> 10, 1000, 1005);
	assert_int_equal(traceparser(st, k, path), 0);
	traceparser_destroy(&st);
}

static void warning_count(void *user_data, const char *message)
{
	(void)message;
	(*(int *)user_data)++;
}

/* Two files, an interval file and a counter file, merged in time order into a .kev. */
static void test_import_merge_kev(void **state)
{
	(void)state;
	const char *a = tkt_path("frames-hostname-h.csv"), *b = tkt_path("power-hostname-h.csv");
	const char *out = tkt_path("merged.kev");
	const char *ta = "name,start_tsc.QPC,end_tsc\nf,10,30\ng,20,25\n";
	const char *tb = "tsc.QPC,c.COUNT\n15,7\n";
	tkt_write_file(a, ta, strlen(ta));
	tkt_write_file(b, tb, strlen(tb));
	const char *paths[2] = {a, b};
	tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
	int warnings = 0;
	cv.warning_cb = warning_count;
	cv.user_data = &warnings;
	tk_csv_import_options o = TK_CSV_IMPORT_OPTIONS_INIT;
	assert_int_equal(tk_csv_import(paths, 2, out, &o, &cv), 0);
	assert_string_equal(cv.error, "");
	assert_int_equal(warnings, 0);
	assert_false(tkt_exists(tkt_path("merged.kev.part")));

	struct kev_seen k;
	read_kev(out, &k);
	/* counter names are numbered when the files open, interval names as rows are read;
	 * each name is defined (1005) just before its first use */
	static const int codes[] = {1005, 1002, 1005, 1004, 1005, 1002, 1003, 1003};
	static const uint64_t times[] = {10, 10, 15, 15, 20, 20, 25, 30};
	assert_int_equal(k.n, 8);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(k.code[i], codes[i]);
		assert_int_equal(k.cycles[i], times[i]); /* QPC values are the cycles */
	}
	assert_string_equal(k.names[0], "c");
	assert_string_equal(k.names[1], "f");
	assert_string_equal(k.names[2], "g");
	assert_int_equal(k.w0[3], 0u << 4);  /* the counter: name 0, a .COUNT integer */
	assert_int_equal(k.w0[1], 1u << 4);  /* frame f: no pid, no tid */
	assert_int_equal(k.w0[7], 1u << 4);  /* its end, last */

	/* the same rows out of order in one file: read again and sorted, same events */
	const char *u = tkt_path("unsorted-hostname-h.csv");
	const char *tu = "name,start_tsc.QPC,end_tsc\ng,20,25\nf,10,30\n";
	tkt_write_file(u, tu, strlen(tu));
	const char *one[1] = {u};
	assert_int_equal(tk_csv_import(one, 1, tkt_path("sorted.kev"), NULL, &cv), 0);
	read_kev(tkt_path("sorted.kev"), &k);
	static const int codes2[] = {1005, 1002, 1005, 1002, 1003, 1003};
	static const uint64_t times2[] = {10, 10, 20, 20, 25, 30};
	assert_int_equal(k.n, 6);
	for (unsigned i = 0; i < 6; i++) {
		assert_int_equal(k.code[i], codes2[i]);
		assert_int_equal(k.cycles[i], times2[i]);
	}
}

/* A small .kev written event by event, exported to CSV text. */
static void test_export_kev(void **state)
{
	(void)state;
	const char *path = tkt_path("small.kev");
	tk_kev_attr attr = {"TRACEKIT_CSV_CLOCK", "QPC"};
	tk_kev_header h;
	memset(&h, 0, sizeof(h));
	h.date = h.boot_date = 1377651723;
	h.cycles_per_sec = 10000000;
	h.cpu_num = 1;
	h.nodename = "node";
	h.attrs = &attr;
	h.n_attrs = 1;
	tk_kev_writer *w = NULL;
	assert_int_equal(tk_kev_writer_open(&w, path, &h, 0), 0);
	const unsigned U = _TRACE_USER_C;
	uint32_t n0[1] = {0}, n1[1] = {1}, n2[1] = {2};
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 5, n0, 1, "task \"A\""), 0);
	uint32_t tb[4] = {0x3u | 0u << 4, 11, 12, 7}; /* pid and tid, name 0, id 7 */
	assert_int_equal(tk_kev_write_event(w, 0, U, 1000, 5, tb, 4), 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 6, n1, 1, "frame"), 0);
	uint32_t fb[4] = {1u << 4, 0, 0, 8};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1002, 6, fb, 4), 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 7, n2, 1, "Power"), 0);
	double d = 2.5;
	uint64_t bits;
	memcpy(&bits, &d, 8);
	uint32_t cw[5] = {0x4u | 0x8u | 2u << 4, 0, 0, (uint32_t)bits, (uint32_t)(bits >> 32)}; /* .INST, float */
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 7, cw, 5), 0);
	uint32_t fe[2] = {1u << 4, 8};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1003, 9, fe, 2), 0);
	uint32_t te[2] = {0x3u | 0u << 4, 7};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1001, 12, te, 2), 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	o.dir = tkt_dir();
	tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
	char ipath[2048], cpath[2048];
	assert_int_equal(tk_csv_export(path, &o, &cv, ipath, cpath), 0);
	assert_string_equal(cv.error, "");
	/* named after the trace and the host of its header */
	char want[4096];
	snprintf(want, sizeof(want), "%s/small-intervals-hostname-node.csv", tkt_dir());
	assert_string_equal(ipath, want);
	size_t len;
	char *text = tkt_read_file(ipath, &len);
	assert_non_null(text);
	/* in order of the ends; a frame has no pid and tid */
	assert_string_equal(text, "name,start_tsc.QPC,end_tsc,pid,tid\nframe,6,9,,\n\"task \"\"A\"\"\",5,12,11,12\n");
	free(text);
	text = tkt_read_file(cpath, &len);
	assert_non_null(text);
	assert_string_equal(text, "tsc.QPC,Power.INST,pid,tid\n7,2.5,,\n");
	free(text);

	/* another clock and host */
	o.clock = TK_CSV_CLOCK_MONOTONIC_RAW;
	o.host = "other";
	o.name = "renamed.kev";
	assert_int_equal(tk_csv_export(path, &o, &cv, ipath, NULL), 0);
	text = tkt_read_file(ipath, &len);
	assert_non_null(text);
	assert_string_equal(text, "name,start_tsc.CLOCK_MONOTONIC_RAW,end_tsc,pid,tid\nframe,600,900,,\n"
				  "\"task \"\"A\"\"\",500,1200,11,12\n");
	free(text);
	/* an output that is the trace itself is refused */
	o.dir = tkt_dir();
	o.clock = TK_CSV_CLOCK_OWN;
	o.host = NULL;
	o.name = NULL;
	assert_int_equal(tk_csv_export(ipath, &o, &cv, NULL, NULL) < 0, 1);
}

/* CSV -> .tb5 -> CSV through the library: the rows come back (frames in order of their ends). */
static void test_tb5_round_trip(void **state)
{
	(void)state;
	const char *a = tkt_path("rt1-hostname-h.csv"), *b = tkt_path("rt2-hostname-h.csv");
	const char *ta = "name,start_tsc.QPC,end_tsc\nf,10,30\ng,20,25\n";
	const char *tb = "tsc.QPC,c.COUNT\n15,7\n";
	tkt_write_file(a, ta, strlen(ta));
	tkt_write_file(b, tb, strlen(tb));
	const char *paths[2] = {a, b};
	tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
	tk_csv_import_options io = TK_CSV_IMPORT_OPTIONS_INIT;
	io.format = TK_CSV_TRACE_TB5; /* whatever the name says */
	const char *trace = tkt_path("rt.data");
	assert_int_equal(tk_csv_import(paths, 2, trace, &io, &cv), 0);
	/* a .kev base cannot be merged into a .tb5 */
	io.into = trace;
	assert_int_equal(tk_csv_import(paths, 2, tkt_path("x.tb5"), &io, &cv), TK_EINVAL);
	assert_false(tkt_exists(tkt_path("x.tb5")));

	tk_csv_export_options eo = TK_CSV_EXPORT_OPTIONS_INIT;
	eo.format = TK_CSV_TRACE_TB5;
	eo.dir = tkt_dir();
	char ipath[2048], cpath[2048];
	assert_int_equal(tk_csv_export(trace, &eo, &cv, ipath, cpath), 0);
	size_t len;
	char *text = tkt_read_file(ipath, &len);
	assert_non_null(text);
	assert_non_null(strstr(ipath, "/rt-intervals-hostname-h.csv"));
	assert_string_equal(text, "name,start_tsc.QPC,end_tsc,pid,tid\ng,20,25,,\nf,10,30,,\n");
	free(text);
	text = tkt_read_file(cpath, &len);
	assert_non_null(text);
	assert_string_equal(text, "tsc.QPC,c.COUNT,pid,tid\n15,7,,\n");
	free(text);
	/* an unknown clock number is refused */
	eo.clock = 99;
	assert_int_equal(tk_csv_export(trace, &eo, &cv, NULL, NULL), TK_EINVAL);
}

/* What temp_cb was told: each slot's last path ("" after NULL) and how often. */
struct temps {
	char last[2][4096];
	int calls[2], forgot[2], existed[2];
};

static void temp_seen(void *user_data, int slot, const char *path)
{
	struct temps *t = user_data;
	assert_true(slot == 0 || slot == 1);
	t->calls[slot]++;
	if (path == NULL) {
		t->forgot[slot]++;
		t->last[slot][0] = 0;
		return;
	}
	t->existed[slot] += tkt_exists(path); /* registered once it exists */
	snprintf(t->last[slot], sizeof(t->last[slot]), "%s", path);
}

/* The temporaries are announced while they exist and forgotten at the end. */
static void test_temp_cb(void **state)
{
	(void)state;
	const char *a = tkt_path("tmp-hostname-h.csv");
	const char *ta = "name,start_tsc.QPC,end_tsc\nf,10,30\n";
	const char *tb = "tsc.QPC,c.COUNT\n15,7\n";
	const char *b = tkt_path("tmpc-hostname-h.csv");
	tkt_write_file(a, ta, strlen(ta));
	tkt_write_file(b, tb, strlen(tb));
	const char *paths[2] = {a, b};
	struct temps t;
	memset(&t, 0, sizeof(t));
	tk_csv_convert cv = {sizeof(cv), NULL, NULL, temp_seen, &t, {0}, 0};
	assert_int_equal(tk_csv_import(paths, 2, tkt_path("tmp.kev"), NULL, &cv), 0);
	assert_int_equal(t.existed[0], 1);
	assert_true(t.forgot[0] >= 1);
	assert_string_equal(t.last[0], "");
	assert_int_equal(t.calls[1], 0);

	memset(&t, 0, sizeof(t));
	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	o.dir = tkt_dir();
	assert_int_equal(tk_csv_export(tkt_path("tmp.kev"), &o, &cv, NULL, NULL), 0);
	assert_int_equal(t.existed[0], 1); /* intervals */
	assert_int_equal(t.existed[1], 1); /* counters */
	assert_string_equal(t.last[0], "");
	assert_string_equal(t.last[1], "");
}

/* Name numbers come from the file: one far apart costs no memory in proportion to it. */
static void test_export_sparse_name(void **state)
{
	(void)state;
	const char *path = tkt_path("sparse.kev");
	tk_kev_attr attr = {"TRACEKIT_CSV_CLOCK", "QPC"};
	tk_kev_header h;
	memset(&h, 0, sizeof(h));
	h.date = h.boot_date = 1377651723;
	h.cycles_per_sec = 10000000;
	h.cpu_num = 1;
	h.nodename = "node";
	h.attrs = &attr;
	h.n_attrs = 1;
	tk_kev_writer *w = NULL;
	assert_int_equal(tk_kev_writer_open(&w, path, &h, 0), 0);
	const unsigned U = _TRACE_USER_C;
	const uint32_t big = (1u << 28) - 1; /* the largest number (docs/vtune-csv.md) */
	uint32_t n0[1] = {big}, n1[1] = {3};
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 5, n0, 1, "far"), 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 5, n1, 1, "near"), 0);
	uint32_t b0[4] = {big << 4, 0, 0, 1}, b1[4] = {3u << 4, 0, 0, 2};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1002, 5, b0, 4), 0);
	assert_int_equal(tk_kev_write_event(w, 0, U, 1002, 6, b1, 4), 0);
	uint32_t e1[2] = {3u << 4, 2}, e0[2] = {big << 4, 1};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1003, 7, e1, 2), 0);
	assert_int_equal(tk_kev_write_event(w, 0, U, 1003, 8, e0, 2), 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	o.dir = tkt_dir();
	tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
	char ipath[2048];
	assert_int_equal(tk_csv_export(path, &o, &cv, ipath, NULL), 0);
	getrusage(RUSAGE_SELF, &after);
	/* an array indexed by the number took 2 GiB here */
	assert_true(after.ru_maxrss - before.ru_maxrss < 256 * 1024);
	size_t len;
	char *text = tkt_read_file(ipath, &len);
	assert_non_null(text);
	assert_string_equal(text, "name,start_tsc.QPC,end_tsc,pid,tid\nnear,6,7,,\nfar,5,8,,\n");
	free(text);
}

/* Warnings of a conversion, one per line. */
static void collect_warning(void *ud, const char *message)
{
	char *buf = ud;
	size_t n = strlen(buf);
	snprintf(buf + n, 4096 - n, "%s\n", message);
}

static void tb5_desc(TBRW_SAMPREC_DESC_ENTRY *d, unsigned off, unsigned size, unsigned type, const wchar_t *name)
{
	memset(d, 0, sizeof(*d));
	d->desc_size = sizeof(*d);
	d->desc_offset = off;
	d->desc_type = (TBRW_U16)type;
	d->desc_data_size = size;
	d->desc_name.soi_ptr = (TBRW_CHAR *)name;
}

/* The same for a .tb5: counter event ids far apart, columns still in order of id. */
static void test_export_tb5_sparse_ids(void **state)
{
	(void)state;
	const char *path = tkt_path("sparse.tb5");
	wchar_t wpath[4096];
	assert_true(mbstowcs(wpath, path, 4096) < 4096);
	TBRW_PTR p = NULL;
	assert_int_equal(TBRW_open(&p, wpath, TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS), 0);
	TBRW_STREAM_INFO si;
	memset(&si, 0, sizeof(si));
	si.stream_info_size = sizeof(si);
	si.stream_type = TBRW_CUSTOM_STREAM;
	si.command_line.soi_ptr = (TBRW_CHAR *)L"test_csv";
	si.cpu_mask.soi_ptr = (TBRW_CHAR *)L"";
	si.comment.soi_ptr = (TBRW_CHAR *)L"VTune CSV counters; timestamps QPC; host h";
	assert_int_equal(TBRW_writing_stream(p, 0), 0);
	assert_int_equal(TBRW_writing_stream_section(p, 0, TBRW_STREAM_INFO_SECTION), 0);
	assert_int_equal(TBRW_set_stream_info(p, 0, &si), 0);
	assert_int_equal(TBRW_done_stream_section(p, 0, TBRW_STREAM_INFO_SECTION), 0);
	TBRW_SAMPREC_DESC_ENTRY d[6];
	tb5_desc(&d[0], 0, 8, ST_TIME_STAMP, L"time");
	tb5_desc(&d[1], 8, 4, ST_EVENT_ID, L"counter");
	tb5_desc(&d[2], 12, 4, ST_NONE, L"flags");
	tb5_desc(&d[3], 16, 4, ST_PID, L"pid");
	tb5_desc(&d[4], 20, 4, ST_TID, L"tid");
	tb5_desc(&d[5], 24, 8, ST_EVENT_COUNTS, L"value");
	assert_int_equal(TBRW_writing_stream_section(p, 0, TBRW_DATA_DESCRIPTION_SECTION), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(TBRW_add_data_descriptor_entry(p, 0, &d[i]), 0);
	assert_int_equal(TBRW_done_stream_section(p, 0, TBRW_DATA_DESCRIPTION_SECTION), 0);
	assert_int_equal(TBRW_writing_stream_section(p, 0, TBRW_DATA_SECTION), 0);
	const uint32_t far = 99999999; /* the largest id the export accepts */
	struct {
		uint64_t time;
		uint32_t name, flags, pid, tid;
		uint64_t value;
	} rec[3] = {{5, far, 0, 0, 0, 3}, {5, 7, 0, 0, 0, 4}, {6, 7, 0, 0, 0, 1}};
	assert_int_equal(TBRW_add_data(p, 0, sizeof(rec), rec), 0);
	assert_int_equal(TBRW_done_stream_section(p, 0, TBRW_DATA_SECTION), 0);
	assert_int_equal(TBRW_writing_stream_section(p, 0, TBRW_EVENT_DESCRIPTION_SECTION), 0);
	TBRW_EVENT ev;
	memset(&ev, 0, sizeof(ev));
	ev.event_size = sizeof(ev);
	ev.event_id = far;
	ev.event_name.soi_ptr = (TBRW_CHAR *)L"far";
	ev.event_arch_name.soi_ptr = (TBRW_CHAR *)L"INST";
	assert_int_equal(TBRW_add_event(p, 0, &ev), 0);
	ev.event_id = 7;
	ev.event_name.soi_ptr = (TBRW_CHAR *)L"near";
	ev.event_arch_name.soi_ptr = (TBRW_CHAR *)L"COUNT";
	assert_int_equal(TBRW_add_event(p, 0, &ev), 0);
	assert_int_equal(TBRW_done_stream_section(p, 0, TBRW_EVENT_DESCRIPTION_SECTION), 0);
	assert_int_equal(TBRW_done_stream(p, 0), 0);
	assert_int_equal(TBRW_close(p), 0);

	struct rusage before, after;
	getrusage(RUSAGE_SELF, &before);
	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	o.dir = tkt_dir();
	tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
	char ipath[2048], cpath[2048];
	int rc = tk_csv_export(path, &o, &cv, ipath, cpath);
	if (rc != 0)
		print_message("%s\n", cv.error);
	assert_int_equal(rc, 0);
	getrusage(RUSAGE_SELF, &after);
	/* arrays indexed by the id took gigabytes here */
	assert_true(after.ru_maxrss - before.ru_maxrss < 256 * 1024);
	size_t len;
	char *text = tkt_read_file(cpath, &len);
	assert_non_null(text);
	/* columns in order of id; far's value comes first at 5, so near's starts a row of its own
	 * (a row's values are in column order, so that import gives back the same rows) */
	assert_string_equal(text, "tsc.QPC,near.COUNT,far.INST,pid,tid\n5,,3,,\n5,4,,,\n6,1,,,\n");
	free(text);
}

/*
 * A .tb5 counter stream with a NaN sample and a record of an event the stream does not
 * describe: the NaN is left out (a warning), the record too, and the export writes the rest
 * and returns TK_EFORMAT with cv->written set, naming the record.
 */
static void test_export_tb5_bad_record(void **state)
{
	(void)state;
	const char *path = tkt_path("badrec.tb5");
	wchar_t wpath[4096];
	assert_true(mbstowcs(wpath, path, 4096) < 4096);
	TBRW_PTR p = NULL;
	assert_int_equal(TBRW_open(&p, wpath, TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS), 0);
	TBRW_STREAM_INFO si;
	memset(&si, 0, sizeof(si));
	si.stream_info_size = sizeof(si);
	si.stream_type = TBRW_CUSTOM_STREAM;
	si.command_line.soi_ptr = (TBRW_CHAR *)L"test_csv";
	si.cpu_mask.soi_ptr = (TBRW_CHAR *)L"";
	si.comment.soi_ptr = (TBRW_CHAR *)L"VTune CSV counters; timestamps QPC; host h";
	assert_int_equal(TBRW_writing_stream(p, 0), 0);
	assert_int_equal(TBRW_writing_stream_section(p, 0, TBRW_STREAM_INFO_SECTION), 0);
	assert_int_equal(TBRW_set_stream_info(p, 0, &si), 0);
	assert_int_equal(TBRW_done_stream_section(p, 0, TBRW_STREAM_INFO_SECTION), 0);
	TBRW_SAMPREC_DESC_ENTRY d[6];
	tb5_desc(&d[0], 0, 8, ST_TIME_STAMP, L"time");
	tb5_desc(&d[1], 8, 4, ST_EVENT_ID, L"counter");
	tb5_desc(&d[2], 12, 4, ST_NONE, L"flags");
	tb5_desc(&d[3], 16, 4, ST_PID, L"pid");
	tb5_desc(&d[4], 20, 4, ST_TID, L"tid");
	tb5_desc(&d[5], 24, 8, ST_EVENT_COUNTS, L"value");
	assert_int_equal(TBRW_writing_stream_section(p, 0, TBRW_DATA_DESCRIPTION_SECTION), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(TBRW_add_data_descriptor_entry(p, 0, &d[i]), 0);
	assert_int_equal(TBRW_done_stream_section(p, 0, TBRW_DATA_DESCRIPTION_SECTION), 0);
	assert_int_equal(TBRW_writing_stream_section(p, 0, TBRW_DATA_SECTION), 0);
	double nan = __builtin_nan(""), half = 2.5;
	uint64_t nan_bits, half_bits;
	memcpy(&nan_bits, &nan, 8);
	memcpy(&half_bits, &half, 8);
	struct {
		uint64_t time;
		uint32_t name, flags, pid, tid;
		uint64_t value;
	} rec[4] = {{5, 7, 8, 0, 0, nan_bits}, {5, 8, 0, 0, 0, 1}, {6, 7, 0, 0, 0, 4}, {7, 7, 8, 0, 0, half_bits}};
	assert_int_equal(TBRW_add_data(p, 0, sizeof(rec), rec), 0);
	assert_int_equal(TBRW_done_stream_section(p, 0, TBRW_DATA_SECTION), 0);
	assert_int_equal(TBRW_writing_stream_section(p, 0, TBRW_EVENT_DESCRIPTION_SECTION), 0);
	TBRW_EVENT ev;
	memset(&ev, 0, sizeof(ev));
	ev.event_size = sizeof(ev);
	ev.event_id = 7;
	ev.event_name.soi_ptr = (TBRW_CHAR *)L"near";
	ev.event_arch_name.soi_ptr = (TBRW_CHAR *)L"COUNT";
	assert_int_equal(TBRW_add_event(p, 0, &ev), 0);
	assert_int_equal(TBRW_done_stream_section(p, 0, TBRW_EVENT_DESCRIPTION_SECTION), 0);
	assert_int_equal(TBRW_done_stream(p, 0), 0);
	assert_int_equal(TBRW_close(p), 0);

	char warnings[4096] = "";
	tk_csv_convert cv = {sizeof(cv), collect_warning, NULL, NULL, warnings, {0}, 0};
	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	o.dir = tkt_dir();
	char ipath[2048], cpath[2048];
	assert_int_equal(tk_csv_export(path, &o, &cv, ipath, cpath), TK_EFORMAT);
	assert_int_equal(cv.written, 1);
	char want[4096];
	snprintf(want, sizeof(want),
		 "%s: counter record 2: names event 8, which the stream does not describe; 1 records of undescribed "
		 "events (not exported; the CSV files hold everything else)",
		 path);
	assert_string_equal(cv.error, want);
	snprintf(want, sizeof(want), "%s: 1 counter samples are NaN or infinite, which CSV cannot hold (not exported)\n",
		 path);
	assert_string_equal(warnings, want);
	size_t len;
	char *text = tkt_read_file(cpath, &len);
	assert_non_null(text);
	assert_string_equal(text, "tsc.QPC,near.COUNT,pid,tid\n6,4,,\n7,2.5,,\n");
	free(text);
	assert_true(tkt_exists(ipath));
}

/* A .tb5 export reads every batch of records and event descriptions, not only the first. */
static void test_export_tb5_large(void **state)
{
	(void)state;
	enum { ROWS = 40000, NAMES = 5000 }; /* 1.28 MB of interval records */
	const char *a = tkt_path("large-hostname-h.csv");
	FILE *f = fopen(a, "w");
	assert_non_null(f);
	fputs("name,start_tsc.QPC,end_tsc\n", f);
	for (int i = 0; i < ROWS; i++)
		fprintf(f, "n%d,%d,%d\n", i % NAMES, i * 10, i * 10 + 5);
	assert_int_equal(fclose(f), 0);
	const char *paths[1] = {a};
	tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
	assert_int_equal(tk_csv_import(paths, 1, tkt_path("large.tb5"), NULL, &cv), 0);
	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	o.dir = tkt_dir();
	char ipath[2048];
	int rc = tk_csv_export(tkt_path("large.tb5"), &o, &cv, ipath, NULL);
	if (rc != 0)
		print_message("%s\n", cv.error);
	assert_int_equal(rc, 0);
	size_t len;
	char *text = tkt_read_file(ipath, &len);
	assert_non_null(text);
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	assert_int_equal(lines, ROWS + 1);
	char last[64];
	snprintf(last, sizeof(last), "\nn%d,%d,%d,,\n", (ROWS - 1) % NAMES, (ROWS - 1) * 10, (ROWS - 1) * 10 + 5);
	assert_non_null(strstr(text, last));
	free(text);
}

/* A malformed row: the error names the file, line and column; no output is left. */
static void test_import_error(void **state)
{
	(void)state;
	const char *a = tkt_path("bad-hostname-h.csv");
	const char *ta = "name,start_tsc.QPC,end_tsc\nf,10,30\ng,2x,25\n";
	tkt_write_file(a, ta, strlen(ta));
	const char *paths[1] = {a};
	tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
	char want[4096];
	for (int tb5 = 0; tb5 < 2; tb5++) {
		const char *out = tkt_path(tb5 ? "bad.tb5" : "bad.kev");
		int rc = tk_csv_import(paths, 1, out, NULL, &cv);
		assert_int_equal(rc, TK_EFORMAT);
		snprintf(want, sizeof(want), "%s:3:3: start timestamp \"2x\" is not a number", a);
		assert_string_equal(cv.error, want);
		assert_false(tkt_exists(out));
	}
	/* a file that does not exist */
	const char *missing[1] = {tkt_path("missing-hostname-h.csv")};
	assert_true(tk_csv_import(missing, 1, tkt_path("m.kev"), NULL, &cv) < 0);
	assert_non_null(strstr(cv.error, "missing-hostname-h.csv"));
	assert_false(tkt_exists(tkt_path("m.kev")));
	/* files of different clocks */
	const char *q = tkt_path("utc-hostname-h.csv");
	const char *tq = "tsc.UTC,c.COUNT\n2013-08-28 01:02:03,1\n";
	tkt_write_file(q, tq, strlen(tq));
	const char *two[2] = {tkt_path("frames-hostname-h.csv"), q};
	const char *ta2 = "name,start_tsc.QPC,end_tsc\nf,10,30\n";
	tkt_write_file(two[0], ta2, strlen(ta2));
	assert_int_equal(tk_csv_import(two, 2, tkt_path("mixed.kev"), NULL, &cv), TK_EFORMAT);
	snprintf(want, sizeof(want), "%s: timestamps are UTC, those of %s are QPC: files of one import share one clock",
		 q, two[0]);
	assert_string_equal(cv.error, want);
}

/* A .kev of VTune CSV data on the QPC clock, written event by event (test_export_kev's header). */
static tk_kev_writer *csv_kev_open(const char *path)
{
	static const tk_kev_attr attr = {"TRACEKIT_CSV_CLOCK", "QPC"};
	tk_kev_header h;
	memset(&h, 0, sizeof(h));
	h.date = h.boot_date = 1377651723;
	h.cycles_per_sec = 10000000;
	h.cpu_num = 1;
	h.nodename = "node";
	h.attrs = &attr;
	h.n_attrs = 1;
	tk_kev_writer *w = NULL;
	assert_int_equal(tk_kev_writer_open(&w, path, &h, 0), 0);
	return w;
}

static void csv_kev_counter(tk_kev_writer *w, uint32_t t, uint32_t name, double d)
{
	uint64_t bits;
	memcpy(&bits, &d, 8);
	uint32_t cw[5] = {0x4u | 0x8u | name << 4, 0, 0, (uint32_t)bits, (uint32_t)(bits >> 32)};
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_USER_C, 1004, t, cw, 5), 0);
}

/*
 * Whatever export writes, import reads back (and export, import, export gives the same
 * files): NaN and infinite samples are left out (a counter of NaN only has no column), names
 * that are not UTF-8 are read as Latin-1 (two names that read alike share their column).
 */
static void test_export_round_trip_odd(void **state)
{
	(void)state;
	const char *path = tkt_path("odd.kev");
	tk_kev_writer *w = csv_kev_open(path);
	const unsigned U = _TRACE_USER_C;
	uint32_t n0[1] = {0}, n1[1] = {1}, n2[1] = {2}, n3[1] = {3};
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 1, n0, 1, "caf\xe9"), 0);
	uint32_t tb[4] = {0x3u, 11, 12, 7};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1000, 2, tb, 4), 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 3, n1, 1, "W"), 0);
	csv_kev_counter(w, 4, 1, 1.5);
	csv_kev_counter(w, 5, 1, __builtin_nan(""));
	csv_kev_counter(w, 6, 1, __builtin_inf());
	csv_kev_counter(w, 7, 1, -__builtin_inf());
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 8, n2, 1, "nan only"), 0);
	csv_kev_counter(w, 8, 2, -__builtin_nan(""));
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 9, n2, 1, "\xe9"), 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 9, n3, 1, "\xc3\xa9"), 0); /* the same text */
	csv_kev_counter(w, 10, 2, 2.0);
	csv_kev_counter(w, 10, 3, 3.0);
	uint32_t te[2] = {0x3u, 7};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1001, 11, te, 2), 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	char warnings[4096] = "";
	tk_csv_convert cv = {sizeof(cv), collect_warning, NULL, NULL, warnings, {0}, 1};
	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	o.dir = tkt_dir();
	char ipath[2048], cpath[2048];
	assert_int_equal(tk_csv_export(path, &o, &cv, ipath, cpath), 0);
	assert_string_equal(cv.error, "");
	assert_int_equal(cv.written, 0);
	char want[4096];
	snprintf(want, sizeof(want),
		 "%s: 4 counter samples are NaN or infinite, which CSV cannot hold (not exported)\n"
		 "%s: 2 names are not UTF-8: written as read as Latin-1\n",
		 path, path);
	assert_string_equal(warnings, want);
	size_t len;
	char *text = tkt_read_file(ipath, &len);
	assert_non_null(text);
	assert_string_equal(text, "name,start_tsc.QPC,end_tsc,pid,tid\ncaf\xc3\xa9,2,11,11,12\n");
	free(text);
	text = tkt_read_file(cpath, &len);
	assert_non_null(text);
	assert_string_equal(text, "tsc.QPC,W.INST,\xc3\xa9.INST,pid,tid\n4,1.5,,,\n10,,2.0,,\n10,,3.0,,\n");

	/* import reads both files; exported again they are the same */
	const char *paths[2] = {ipath, cpath};
	const char *back = tkt_path("odd2.kev");
	assert_int_equal(tk_csv_import(paths, 2, back, NULL, &cv), 0);
	char ipath2[2048], cpath2[2048];
	o.dir = tkt_dir();
	o.name = "odd3";
	assert_int_equal(tk_csv_export(back, &o, &cv, ipath2, cpath2), 0);
	char *text2 = tkt_read_file(cpath2, &len);
	assert_non_null(text2);
	assert_string_equal(text2, text);
	free(text2);
	free(text);
	text = tkt_read_file(ipath2, &len);
	assert_non_null(text);
	assert_string_equal(text, "name,start_tsc.QPC,end_tsc,pid,tid\ncaf\xc3\xa9,2,11,11,12\n");
	free(text);

	/* the writer never writes what the reader refuses */
	tk_csv_writer *cw = NULL;
	tk_csv_counter col = {"c", 1};
	assert_int_equal(tk_csv_writer_open(&cw, tkt_path("nan-hostname-h.csv"), TK_CSV_COUNTERS, TK_CSV_QPC, 0, &col, 1), 0);
	tk_csv_value v = {1, 1, 0, __builtin_nan("")};
	assert_int_equal(tk_csv_write_counters(cw, 1, &v, 0, 0, 0), TK_EINVAL);
	v.d = -__builtin_inf();
	assert_int_equal(tk_csv_write_counters(cw, 1, &v, 0, 0, 0), TK_EINVAL);
	char buf[48];
	assert_int_equal(tk_csv_format_value(buf, sizeof(buf), &v), 0);
	v.d = 0.5;
	assert_int_equal(tk_csv_write_counters(cw, 2, &v, 0, 0, 0), 0);
	assert_int_equal(tk_csv_writer_close(cw), 0);
	text = tkt_read_file(tkt_path("nan-hostname-h.csv"), &len);
	assert_non_null(text);
	assert_string_equal(text, "tsc.QPC,c.INST\n2,0.5\n");
	free(text);
}

/*
 * Events the convention cannot read among valid ones: everything valid is written, the
 * export returns TK_EFORMAT with the first bad event and its byte offset, and says that the
 * files are written (cv->written; not for a caller whose structure ends before it).
 */
static void test_export_malformed(void **state)
{
	(void)state;
	const char *path = tkt_path("malformed.kev");
	tk_kev_writer *w = csv_kev_open(path);
	const unsigned U = _TRACE_USER_C;
	uint32_t n0[1] = {0}, n1[1] = {1}, far[1] = {1u << 28};
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 1, n0, 1, "good"), 0);
	uint32_t tb[4] = {0x3u, 11, 12, 7};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1000, 2, tb, 4), 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 3, far, 1, "far"), 0); /* malformed */
	uint32_t shortc[3] = {0, 0, 0};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 4, shortc, 3), 0); /* malformed */
	uint32_t unnamed[4] = {0x3u | 9u << 4, 11, 12, 8};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1000, 5, unnamed, 4), 0); /* name 9 undefined */
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 6, n1, 1, "q"), 0);
	uint32_t cw[5] = {1u << 4, 0, 0, 42, 0};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 7, cw, 5), 0);
	uint32_t te[2] = {0x3u, 7};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1001, 8, te, 2), 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	o.dir = tkt_dir();
	char ipath[2048], cpath[2048];
	assert_int_equal(tk_csv_export(path, &o, &cv, ipath, cpath), TK_EFORMAT);
	assert_int_equal(cv.written, 1);
	char want[4096];
	snprintf(want, sizeof(want), "%s: byte offset ", path);
	assert_memory_equal(cv.error, want, strlen(want));
	assert_non_null(strstr(cv.error, ": USER 1005 (VTune CSV name): name number above 2^28; 3 VTune CSV events "
					 "malformed or naming no name (not exported; the CSV files hold everything else)"));
	size_t len;
	char *text = tkt_read_file(ipath, &len);
	assert_non_null(text);
	assert_string_equal(text, "name,start_tsc.QPC,end_tsc,pid,tid\ngood,2,8,11,12\n");
	free(text);
	text = tkt_read_file(cpath, &len);
	assert_non_null(text);
	assert_string_equal(text, "tsc.QPC,q.COUNT,pid,tid\n7,42,,\n");
	free(text);

	/* a caller of an older structure (without written): the same, and nothing written past it */
	struct {
		tk_csv_convert cv;
	} old;
	memset(&old, 0, sizeof(old));
	old.cv.struct_size = offsetof(tk_csv_convert, written);
	old.cv.written = 42;
	assert_int_equal(tk_csv_export(path, &o, &old.cv, NULL, NULL), TK_EFORMAT);
	assert_int_equal(old.cv.written, 42);
	assert_true(tkt_exists(ipath));

	/* cut midway: the intervals that ended before the damage, and the damage's offset */
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *all = malloc(1 << 16);
	assert_non_null(all);
	size_t n = fread(all, 1, 1 << 16, f);
	fclose(f);
	const char *cut = tkt_path("cut.kev");
	tkt_write_file(cut, all, n - 4); /* inside the last event (the task's end) */
	free(all);
	assert_int_equal(tk_csv_export(cut, &o, &cv, ipath, cpath), TK_EFORMAT);
	assert_int_equal(cv.written, 1);
	assert_non_null(strstr(cv.error, "(the CSV files hold the data before it)"));
	assert_non_null(strstr(cv.error, "byte offset"));
	text = tkt_read_file(ipath, &len);
	assert_non_null(text);
	assert_string_equal(text, "name,start_tsc.QPC,end_tsc,pid,tid\n");
	free(text);
	text = tkt_read_file(cpath, &len);
	assert_non_null(text);
	assert_string_equal(text, "tsc.QPC,q.COUNT,pid,tid\n7,42,,\n");
	free(text);
}

/*
 * What does not fit in a CSV file the reader takes is left out, not written unreadable: a
 * name whose record would pass TK_CSV_MAX_RECORD (Latin-1 bytes take two bytes each), and
 * counters beyond the 1021 columns of a counter file. The rest is written and reads back.
 */
static void test_export_limits(void **state)
{
	(void)state;
	const char *path = tkt_path("limits.kev");
	tk_kev_writer *w = csv_kev_open(path);
	const unsigned U = _TRACE_USER_C;
	size_t big = 600000; /* 1.2 MB once read as Latin-1 */
	char *name = malloc(big + 1);
	assert_non_null(name);
	memset(name, 0xe9, big);
	name[big] = 0;
	uint32_t n0[1] = {0}, n1[1] = {1};
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 1, n0, 1, name), 0);
	free(name);
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 1, n1, 1, "short"), 0);
	uint32_t b0[4] = {0x3u, 1, 2, 1}, b1[4] = {0x3u | 1u << 4, 1, 2, 2};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1000, 2, b0, 4), 0);
	assert_int_equal(tk_kev_write_event(w, 0, U, 1000, 2, b1, 4), 0);
	uint32_t e0[2] = {0x3u, 1}, e1[2] = {0x3u | 1u << 4, 2};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1001, 3, e0, 2), 0);
	assert_int_equal(tk_kev_write_event(w, 0, U, 1001, 3, e1, 2), 0);
	for (uint32_t i = 0; i < 1030; i++) {
		char cname[16];
		snprintf(cname, sizeof(cname), "c%u", (unsigned)i);
		uint32_t id[1] = {10 + i};
		assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 4, id, 1, cname), 0);
		uint32_t cw[5] = {(10 + i) << 4, 0, 0, i, 0};
		assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 5, cw, 5), 0);
	}
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	o.dir = tkt_dir();
	char ipath[2048], cpath[2048];
	assert_int_equal(tk_csv_export(path, &o, &cv, ipath, cpath), TK_EFORMAT);
	assert_int_equal(cv.written, 1);
	char want[4096];
	snprintf(want, sizeof(want),
		 "%s: 9 counter samples and 1 intervals do not fit in CSV files that tracecsv import reads (not "
		 "exported; the CSV files hold everything else)",
		 path);
	assert_string_equal(cv.error, want);
	size_t len;
	char *text = tkt_read_file(ipath, &len);
	assert_non_null(text);
	assert_string_equal(text, "name,start_tsc.QPC,end_tsc,pid,tid\nshort,2,3,1,2\n");
	free(text);
	/* both files read back; exported again, the same */
	const char *paths[2] = {ipath, cpath};
	assert_int_equal(tk_csv_import(paths, 2, tkt_path("limits2.kev"), NULL, &cv), 0);
	char ipath2[2048], cpath2[2048];
	o.name = "limits3";
	assert_int_equal(tk_csv_export(tkt_path("limits2.kev"), &o, &cv, ipath2, cpath2), 0);
	text = tkt_read_file(cpath, &len);
	assert_non_null(text);
	assert_non_null(strstr(text, ",c1020.COUNT,pid,tid\n"));
	size_t len2;
	char *text2 = tkt_read_file(cpath2, &len2);
	assert_non_null(text2);
	assert_int_equal(len2, len);
	assert_memory_equal(text2, text, len);
	free(text);
	free(text2);
}

/*
 * Rows and columns that come back through an import: values of one time share a row while
 * their columns come in order (a row's values come back in column order); a pid the flags
 * do not give parts no rows; a name that is both .COUNT and .INST has one column (the reader
 * takes a name once a file), the other kind's samples left out with an error.
 */
static void test_export_rows(void **state)
{
	(void)state;
	const char *path = tkt_path("rows.kev");
	tk_kev_writer *w = csv_kev_open(path);
	const unsigned U = _TRACE_USER_C;
	uint32_t y[1] = {0}, x[1] = {1};
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 1, y, 1, "Y"), 0);
	assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, 1, x, 1, "X"), 0);
	uint32_t s1[5] = {0u << 4, 0, 0, 1, 0}, s2[5] = {1u << 4, 0, 0, 2, 0};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 1, s1, 5), 0); /* columns Y, X */
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 1, s2, 5), 0);
	uint32_t x3[5] = {1u << 4, 9, 9, 3, 0}; /* no pid/tid flags: 9 is not written */
	uint32_t x4[5] = {1u << 4, 0, 0, 4, 0}, y5[5] = {0u << 4, 0, 0, 5, 0};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 5, x3, 5), 0);
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 5, x4, 5), 0);
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 5, y5, 5), 0);
	uint32_t xi[5] = {0x4u | 1u << 4, 0, 0, 6, 0}; /* X as .INST: left out */
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 6, xi, 5), 0);
	uint32_t y7[5] = {0u << 4, 9, 9, 7, 0};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 7, y7, 5), 0);
	uint32_t x7[5] = {1u << 4, 0, 0, 8, 0};
	assert_int_equal(tk_kev_write_event(w, 0, U, 1004, 7, x7, 5), 0);
	assert_int_equal(tk_kev_writer_close(w), 0);

	tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	o.dir = tkt_dir();
	char ipath[2048], cpath[2048];
	assert_int_equal(tk_csv_export(path, &o, &cv, ipath, cpath), TK_EFORMAT);
	assert_int_equal(cv.written, 1);
	char want[4096];
	snprintf(want, sizeof(want),
		 "%s: 1 counter samples and 0 intervals do not fit in CSV files that tracecsv import reads (not "
		 "exported; the CSV files hold everything else)",
		 path);
	assert_string_equal(cv.error, want);
	size_t len;
	char *text = tkt_read_file(cpath, &len);
	assert_non_null(text);
	/* at 5: X, X, Y are three rows (with "while no column repeats": {X} {X, Y}, which import
	 * gave back as {Y, X} {X}); at 7 the hidden pid 9 of Y does not part it from X */
	assert_string_equal(text, "tsc.QPC,Y.COUNT,X.COUNT,pid,tid\n1,1,2,,\n5,,3,,\n5,,4,,\n5,5,,,\n7,7,8,,\n");
	const char *paths[1] = {cpath};
	assert_int_equal(tk_csv_import(paths, 1, tkt_path("rows2.kev"), NULL, &cv), 0);
	o.name = "rows3";
	char cpath2[2048];
	assert_int_equal(tk_csv_export(tkt_path("rows2.kev"), &o, &cv, NULL, cpath2), 0);
	size_t len2;
	char *text2 = tkt_read_file(cpath2, &len2);
	assert_non_null(text2);
	assert_string_equal(text2, text);
	free(text);
	free(text2);
}

/* xorshift64: the random round trip's numbers (its seed is printed) */
static uint64_t rt_state;
static uint32_t rt_next(void)
{
	rt_state ^= rt_state << 13;
	rt_state ^= rt_state >> 7;
	rt_state ^= rt_state << 17;
	return (uint32_t)rt_state;
}

/* A name of 1-12 bytes that needs quoting, holds suffixes, Latin-1 and UTF-8 bytes, a BOM. */
static void rt_name(char *buf)
{
	static const char pool[] = "ab,\"\n\r x.COUNTINST\xe9\xc3\xa9\xef\xbb\xbf\x01-";
	size_t n = 1 + rt_next() % 12;
	for (size_t i = 0; i < n; i++)
		buf[i] = pool[rt_next() % (sizeof(pool) - 1)];
	buf[n] = 0;
}

static int rt_same_file(const char *a, const char *b)
{
	size_t na, nb;
	char *ta = tkt_read_file(a, &na), *tb = tkt_read_file(b, &nb);
	int same = ta != NULL && tb != NULL && na == nb && memcmp(ta, tb, na) == 0;
	free(ta);
	free(tb);
	return same;
}

/*
 * Random traces of VTune CSV data (names needing quotes, Latin-1 and UTF-8, one name as
 * .COUNT and .INST, NaN, infinities, -0.0, subnormals, integers, pid/tid flags with hidden
 * values, unpaired intervals, values of one time in any column order), exported, imported
 * into a .kev or a .tb5 and exported again: the import never refuses the export's files, and
 * the second export is the first.
 */
static void test_export_round_trip_random(void **state)
{
	(void)state;
	/* TK_TEST_SEED=N replays a run */
	const char *env = getenv("TK_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 10) : 0x9e3779b97f4a7c15ull ^ (uint64_t)time(NULL);
	rt_state = seed ? seed : 1;
	print_message("seed %llu (TK_TEST_SEED)\n", (unsigned long long)seed);
	const unsigned U = _TRACE_USER_C;
	for (int it = 0; it < 500; it++) {
		tk_kev_attr attr = {"TRACEKIT_CSV_CLOCK", (rt_next() & 1) ? "QPC" : "UTC"};
		tk_kev_header h;
		memset(&h, 0, sizeof(h));
		h.date = h.boot_date = 1377651723;
		h.cycles_per_sec = attr.value[0] == 'Q' ? 10000000 : 1000000000;
		h.cpu_num = 1;
		h.nodename = "n";
		h.attrs = &attr;
		h.n_attrs = 1;
		const char *path = tkt_path("rt.kev");
		tk_kev_writer *w = NULL;
		assert_int_equal(tk_kev_writer_open(&w, path, &h, 0), 0);
		uint32_t n_names = 1 + rt_next() % 6, t = 1;
		for (uint32_t i = 0; i < n_names; i++) {
			char name[16];
			rt_name(name);
			assert_int_equal(tk_kev_write_event_str(w, 0, U, 1005, t, &i, 1, name), 0);
		}
		for (int e = 0; e < 40; e++) {
			t += rt_next() % 3;
			uint32_t kind = rt_next() % 4, name = rt_next() % n_names, flags = rt_next() & 3;
			if (kind == 0) {
				uint32_t b[4] = {flags | name << 4, rt_next() % 5, rt_next() % 5, rt_next() % 4};
				assert_int_equal(tk_kev_write_event(w, 0, U, (rt_next() & 1) ? 1000 : 1002, t, b, 4), 0);
			} else if (kind == 1) {
				uint32_t b[2] = {flags | name << 4, rt_next() % 4};
				assert_int_equal(tk_kev_write_event(w, 0, U, (rt_next() & 1) ? 1001 : 1003, t, b, 2), 0);
			} else {
				static const double odd[] = {__builtin_nan(""), __builtin_inf(), -__builtin_inf(), -0.0, 5e-324,
							     1e308, 0.1, 3.0};
				double d = odd[rt_next() % 8];
				uint64_t bits = (uint64_t)rt_next() << 32 | rt_next();
				flags |= rt_next() & 4; /* .INST */
				if (rt_next() & 1) {
					flags |= 8;
					memcpy(&bits, &d, 8);
				}
				uint32_t b[5] = {flags | name << 4, rt_next() % 3, rt_next() % 3, (uint32_t)bits,
						 (uint32_t)(bits >> 32)};
				assert_int_equal(tk_kev_write_event(w, 0, U, 1004, t, b, 5), 0);
			}
		}
		assert_int_equal(tk_kev_writer_close(w), 0);

		tk_csv_convert cv = {sizeof(cv), NULL, NULL, NULL, NULL, {0}, 0};
		tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
		o.dir = tkt_dir();
		o.name = "rt1";
		char i1[2048], c1[2048], i2[2048], c2[2048];
		int rc = tk_csv_export(path, &o, &cv, i1, c1);
		if (rc != 0 && !cv.written)
			print_message("iteration %d: %s\n", it, cv.error);
		assert_true(rc == 0 || cv.written);
		const char *paths[2] = {i1, c1};
		const char *mid = tkt_path((it & 1) ? "rt.tb5" : "rt2.kev");
		rc = tk_csv_import(paths, c1[0] ? 2 : 1, mid, NULL, &cv);
		if (rc != 0)
			print_message("iteration %d: %s\n", it, cv.error);
		assert_int_equal(rc, 0);
		o.name = "rt1"; /* the same file names, in another directory */
		char dir2[4096];
		snprintf(dir2, sizeof(dir2), "%s/rt2", tkt_dir());
		mkdir(dir2, 0777);
		o.dir = dir2;
		rc = tk_csv_export(mid, &o, &cv, i2, c2);
		if (rc != 0)
			print_message("iteration %d: %s\n", it, cv.error);
		assert_int_equal(rc, 0);
		if (!rt_same_file(i1, i2) || (c1[0] && !rt_same_file(c1, c2)))
			print_message("iteration %d: the second export differs (%s)\n", it, mid);
		assert_true(rt_same_file(i1, i2));
		if (c1[0])
			assert_true(rt_same_file(c1, c2));
		unlink(i1);
		unlink(i2);
		if (c1[0]) {
			unlink(c1);
			unlink(c2);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intel_qpc),
		cmocka_unit_test(test_intel_utc_tsc),
		cmocka_unit_test(test_optional_columns),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_quoting),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_file_names),
		cmocka_unit_test(test_writer_round_trip),
		cmocka_unit_test(test_writer_abort),
		cmocka_unit_test(test_import_merge_kev),
		cmocka_unit_test(test_export_kev),
		cmocka_unit_test(test_import_error),
		cmocka_unit_test(test_tb5_round_trip),
		cmocka_unit_test(test_temp_cb),
		cmocka_unit_test(test_export_sparse_name),
		cmocka_unit_test(test_export_tb5_sparse_ids),
		cmocka_unit_test(test_export_tb5_large),
		cmocka_unit_test(test_export_round_trip_odd),
		cmocka_unit_test(test_export_malformed),
		cmocka_unit_test(test_export_tb5_bad_record),
		cmocka_unit_test(test_export_limits),
		cmocka_unit_test(test_export_rows),
		cmocka_unit_test(test_export_round_trip_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
