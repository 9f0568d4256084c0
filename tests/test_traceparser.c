/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of libtraceparser: the API (init, debug, cs, cs_range, get_info, sort,
 * one_event), dispatch to the right callbacks with the right user data, combine-event
 * reassembly (interlaced, unbalanced), both byte orders, 64-bit time across LSB
 * rollovers, standard input through a pipe, and every kind of malformed file.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/syscall.h>

#include "tk_test.h"
#include "tracekit/trace.h"
#include "tracekit/traceparser.h"
#include "traceparser/tp_batch.h"

/* ---- recording callbacks ------------------------------------------------------------- */

struct rec {
	unsigned header, time, len;
	uint32_t words[16];
	uint64_t clk;
	void *ud;
	unsigned now_class, now_event;
};

struct log {
	struct rec r[256];
	unsigned n;
	unsigned null_calls;
	int swap;
};

static struct log g_log;

static uint32_t sw(int swap, uint32_t v)
{
	return swap ? __builtin_bswap32(v) : v;
}

static int rec_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct rec *r;
	const unsigned *conv = traceparser_get_info(st, _TRACEPARSER_INFO_ENDIAN_CONV, NULL);
	unsigned i;

	assert_non_null(conv);
	if (g_log.n >= 256)
		return 0;
	r = &g_log.r[g_log.n++];
	r->header = h;
	r->time = t;
	r->len = len;
	r->ud = ud;
	for (i = 0; i < len && i < 16; i++)
		r->words[i] = sw((int)*conv, buf[i]);
	r->clk = *(const uint64_t *)traceparser_get_info(st, _TRACEPARSER_INFO_CLK, NULL);
	r->now_class = *(const unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_NOW_CALLBACK_CLASS, NULL);
	r->now_event = *(const unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_NOW_CALLBACK_EVENT, NULL);
	return 7;
}

static int null_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	(void)st;
	(void)ud;
	assert_int_equal(h, 0);
	assert_int_equal(t, 0);
	assert_null(buf);
	assert_int_equal(len, 0);
	assert_int_equal(g_log.n, 0); /* before any event */
	g_log.null_calls++;
	return 0;
}

static struct traceparser_state *new_parser(void)
{
	struct traceparser_state *st = traceparser_init(NULL);
	assert_non_null(st);
	memset(&g_log, 0, sizeof(g_log));
	return st;
}

/* Writes a file with the given slots after a minimal header. */
static const char *make_file(const char *name, int be, const uint32_t (*slots)[4], size_t n)
{
	struct tkt_buf b = { 0 };
	const char *path = tkt_path(name);
	size_t i;

	tkt_kev_header(&b, be, 8);
	for (i = 0; i < n; i++)
		tkt_kev_slot(&b, be, slots[i][0], slots[i][1], slots[i][2], slots[i][3]);
	tkt_write_file(path, b.p, b.len);
	tkt_buf_free(&b);
	return path;
}

#define H(flag, cpu, cls, code) (_TRACE_MAKE_CODE((cpu), (flag), (cls), (code)))

/* ---- API basics ---------------------------------------------------------------------- */

static void test_init_destroy(void **state)
{
	struct traceparser_state *st = traceparser_init(NULL), *again;

	(void)state;
	assert_non_null(st);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_USER, 5), 0);
	again = traceparser_init(st);
	assert_ptr_equal(again, st);
	traceparser_destroy(&st);
	assert_null(st);
	traceparser_destroy(&st);
	traceparser_destroy(NULL);
	assert_int_equal(traceparser_debug(NULL, stderr, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(traceparser(NULL, NULL, "x"), -1);
	assert_null(traceparser_get_info(NULL, _TRACEPARSER_INFO_ERROR, NULL));
}

static void test_cs_errors(void **state)
{
	struct traceparser_state *st = new_parser();
	const unsigned *lvl;

	(void)state;
	errno = 0;
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_INT, 0), -1);
	assert_int_equal(errno, EINVAL);
	lvl = traceparser_get_info(st, _TRACEPARSER_INFO_ERROR, NULL);
	assert_int_equal(*lvl, _TRACEPARSER_UNKNOWN_ERROR);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_INTENTER, 0), -1);
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_INTENTER, 0, 5), -1);
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_INTENTER, _NTO_TRACE_INTFIRST,
					      _NTO_TRACE_INTLAST),
			 0);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_USER, 1024), -1);
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 10, 5), -1);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, 99, 0), -1);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_THREAD, 0), -1);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_PROCESS, 1u << 5), -1);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_KERCALL, 200), -1);
	assert_int_equal(traceparser_cs(NULL, NULL, rec_cb, _NTO_TRACE_USER, 1), -1);
	assert_int_equal(tk_traceparser_cs_internal(st, NULL, rec_cb, 32, 0, 0), -1);
	assert_int_equal(traceparser_sort(st, 7), -1);
	traceparser_destroy(&st);
}

/* Every external class reaches the internal (class, code) the kernel emits. */
static void test_class_mapping(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 0, _TRACE_PR_TH_C, STATE_RUNNING), 1, 10, 1 },
		{ H(0, 0, _TRACE_PR_TH_C, _TRACE_THREAD_CREATE), 2, 10, 2 },
		{ H(0, 0, _TRACE_PR_TH_C, _TRACE_MAX_TH_STATE_NUM + STATE_READY), 3, 10, 3 },
		{ H(0, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P), 4, 1, 10 },
		{ H(0, 0, _TRACE_KER_CALL_C, __KER_MSG_SENDV), 5, 1, 2 },
		{ H(0, 0, _TRACE_KER_CALL_C, 128 + __KER_MSG_SENDV), 6, 0, 0 },
		{ H(0, 0, _TRACE_KER_CALL_C, 256 + __KER_MSG_RECEIVEV), 7, 0, 0 },
		{ H(0, 0, _TRACE_INT_C, _TRACE_INT_ENTRY), 8, 5, 0x1000 },
		{ H(0, 0, _TRACE_INT_C, _TRACE_INT_HANDLER_EXIT), 9, 5, 0 },
		{ H(0, 0, _TRACE_USER_C, 1023), 10, 7, 8 },
		{ H(0, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER), 11, 0x400000, 0x400100 },
		{ H(0, 0, _TRACE_COMM_C, _NTO_TRACE_COMM_REPLY), 12, 1, 2 },
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER), 13, 1, 20 },
		{ H(0, 0, _TRACE_USER_C, 5), 14, 0, 0 },
	};
	struct traceparser_state *st = new_parser();
	const char *path = make_file("map.kev", 0, slots, sizeof(slots) / sizeof(slots[0]));
	unsigned i;

	(void)state;
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING), 0);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_THREAD, _NTO_TRACE_THCREATE), 0);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_VTHREAD, _NTO_TRACE_VTHREADY), 0);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_PROCESS, _NTO_TRACE_PROCCREATE), 0);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_KERCALL, __KER_MSG_SENDV), 0);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_KERCALLINT, __KER_MSG_RECEIVEV), 0);
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_INT, _NTO_TRACE_INTFIRST,
					      _NTO_TRACE_INTLAST),
			 0);
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 1000, 1023), 0);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_SYSTEM, _NTO_TRACE_SYS_FUNC_ENTER), 0);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_COMM, _NTO_TRACE_COMM_REPLY), 0);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_CONTROL, _NTO_TRACE_CONTROLBUFFER), 0);
	/* USER 5 has no callback: not delivered */
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(g_log.n, 13);
	for (i = 0; i < 13; i++) {
		assert_int_equal(g_log.r[i].header, slots[i][0]);
		assert_int_equal(g_log.r[i].time, slots[i][1]);
		assert_int_equal(g_log.r[i].len, 2);
		assert_int_equal(g_log.r[i].words[0], slots[i][2]);
		assert_int_equal(g_log.r[i].words[1], slots[i][3]);
		assert_int_equal(g_log.r[i].now_class, TK_KEV_CLASS(slots[i][0]));
		assert_int_equal(g_log.r[i].now_event, TK_KEV_CODE(slots[i][0]));
	}
	traceparser_destroy(&st);
}

static void test_user_data_and_null_callback(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 0, _TRACE_USER_C, 1), 1, 0, 0 },
		{ H(0, 0, _TRACE_USER_C, 2), 2, 0, 0 },
	};
	struct traceparser_state *st = new_parser();
	const char *path = make_file("ud.kev", 0, slots, 2);
	int mine, global, other;
	const int *prev_ret;
	const unsigned *prev_ev;

	(void)state;
	assert_int_equal(traceparser_cs(st, &mine, rec_cb, _NTO_TRACE_USER, 1), 0);
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_USER, 2), 0);
	assert_int_equal(traceparser_cs(st, NULL, null_cb, _NTO_TRACE_EMPTY, _NTO_TRACE_EMPTYEVENT), 0);
	assert_int_equal(traceparser(st, &global, path), 0);
	assert_int_equal(g_log.null_calls, 1);
	assert_int_equal(g_log.n, 2);
	assert_ptr_equal(g_log.r[0].ud, &mine);
	assert_ptr_equal(g_log.r[1].ud, &global);
	prev_ret = traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_RETURN, NULL);
	assert_int_equal(*prev_ret, 7);
	prev_ev = traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_EVENT, NULL);
	assert_int_equal(*prev_ev, 2);
	prev_ev = traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_CLASS, NULL);
	assert_int_equal(*prev_ev, 6);

	/* The same state, another global user data: callbacks without their own follow it. */
	memset(&g_log, 0, sizeof(g_log));
	assert_int_equal(traceparser(st, &other, path), 0);
	assert_int_equal(g_log.n, 2);
	assert_ptr_equal(g_log.r[0].ud, &mine);
	assert_ptr_equal(g_log.r[1].ud, &other);

	/* Re-attached without user data, event 1 takes the global one; with its own, event 2 keeps it. */
	assert_int_equal(traceparser_cs(st, NULL, rec_cb, _NTO_TRACE_USER, 1), 0);
	assert_int_equal(traceparser_cs(st, &mine, rec_cb, _NTO_TRACE_USER, 2), 0);
	memset(&g_log, 0, sizeof(g_log));
	assert_int_equal(traceparser(st, &global, path), 0);
	assert_int_equal(g_log.n, 2);
	assert_ptr_equal(g_log.r[0].ud, &global);
	assert_ptr_equal(g_log.r[1].ud, &mine);
	traceparser_destroy(&st);
}

static void test_header_info(void **state)
{
	struct tkt_buf b = { 0 };
	struct traceparser_state *st = new_parser();
	const char *path = tkt_path("info.kev");
	const struct {
		info_modes_t mode;
		const char *value;
	} keys[] = {
		{ _TRACEPARSER_INFO_FILE_NAME, "/dev/shmem/tracebuffer" },
		{ _TRACEPARSER_INFO_DATE, "Mon Apr 25 05:37:55 1988" },
		{ _TRACEPARSER_INFO_VER_MAJOR, "1" },
		{ _TRACEPARSER_INFO_VER_MINOR, "02" },
		{ _TRACEPARSER_INFO_BIG_ENDIAN, "TRUE" },
		{ _TRACEPARSER_INFO_ENCODING, "16 byte events" },
		{ _TRACEPARSER_INFO_BOOT_DATE, "Mon Apr 25 02:28:06 1988" },
		{ _TRACEPARSER_INFO_CYCLES_PER_SEC, "400013900" },
		{ _TRACEPARSER_INFO_CPU_NUM, "2" },
		{ _TRACEPARSER_INFO_SYSNAME, "QNX" },
		{ _TRACEPARSER_INFO_NODENAME, "localhost" },
		{ _TRACEPARSER_INFO_SYS_RELEASE, "6.2.1" },
		{ _TRACEPARSER_INFO_SYS_VERSION, "2002/12/09-10:13:08est" },
		{ _TRACEPARSER_INFO_MACHINE, "x86pc" },
		{ _TRACEPARSER_INFO_SYSPAGE_LEN, "12" },
	};
	unsigned i, len;
	const char *v;
	const unsigned char *sp;
	const unsigned *u;

	(void)state;
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_FILE_NAME::/dev/shmem/tracebufferTRACE_DATE::Mon Apr 25 05:37:55 "
			"1988TRACE_VER_MAJOR::1TRACE_VER_MINOR::02TRACE_BIG_ENDIAN::TRUETRACE_ENCODING::16 byte "
			"eventsTRACE_BOOT_DATE::Mon Apr 25 02:28:06 1988TRACE_CYCLES_PER_SEC::400013900TRACE_CPU_"
			"NUM::2TRACE_SYSNAME::QNXTRACE_NODENAME::localhostTRACE_SYS_RELEASE::6.2.1TRACE_SYS_"
			"VERSION::2002/12/09-10:13:08estTRACE_MACHINE::x86pcTRACE_SYSPAGE_LEN::12TRACE_TRACELOGGER_"
			"ARGS::tracelogger -n 3TRACE_BINARY::a\001");
	tkt_buf_put(&b, "", 1);
	tkt_buf_str(&b, "bTRACE_HEADER_END::syspage-1234");
	tkt_kev_slot(&b, 1, H(0, 0, _TRACE_USER_C, 1), 1, 2, 3);
	tkt_write_file(path, b.p, b.len);
	tkt_buf_free(&b);

	assert_int_equal(traceparser(st, NULL, path), 0);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = traceparser_get_info(st, keys[i].mode, &len);
		assert_non_null(v);
		assert_int_equal(len, strlen(keys[i].value));
		assert_memory_equal(v, keys[i].value, len);
	}
	v = traceparser_get_info(st, TRACEPARSER_INFO_NODENAME, NULL); /* SAT guide spelling */
	assert_memory_equal(v, "localhost", 9);
	assert_null(traceparser_get_info(st, _TRACEPARSER_INFO_LITTLE_ENDIAN, &len));
	assert_int_equal(*(const unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_ERROR, NULL),
			 _TRACEPARSER_MISSING_FIELD);
	assert_null(traceparser_get_info(st, _TRACEPARSER_INFO_MIDDLE_ENDIAN, NULL));
	assert_null(traceparser_get_info(st, _TRACEPARSER_INFO_HEADER_BEGIN, NULL));
	assert_null(traceparser_get_info(st, _TRACEPARSER_INFO_HEADER_END, NULL));
	assert_null(traceparser_get_info(st, (info_modes_t)50, NULL));
	assert_int_equal(*(const unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_ERROR, NULL),
			 _TRACEPARSER_WRONG_H_KEYWORD);
	sp = traceparser_get_info(st, _TRACEPARSER_INFO_SYSPAGE, &len);
	assert_int_equal(len, 12);
	assert_memory_equal(sp, "syspage-1234", 12);
	u = traceparser_get_info(st, _TRACEPARSER_INFO_ENDIAN_CONV, NULL);
	assert_int_equal(*u, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 0 : 1);
	u = traceparser_get_info(st, _TRACEPARSER_INFO_DEBUG, NULL);
	assert_int_equal(*u, 0);
	/* user attributes, binary values included */
	v = tk_traceparser_header_value(st, "TRACELOGGER_ARGS", &len);
	assert_string_equal(v, "tracelogger -n 3");
	v = tk_traceparser_header_value(st, "BINARY", &len);
	assert_int_equal(len, 4);
	assert_memory_equal(v, "a\001\000b", 4);
	assert_int_equal(tk_traceparser_header_count(st), 17);
	{
		const char *k;
		assert_int_equal(tk_traceparser_header_entry(st, 0, &k, &v, &len), TK_OK);
		assert_string_equal(k, "FILE_NAME");
		assert_int_equal(tk_traceparser_header_entry(st, 17, &k, &v, &len), TK_EINVAL);
	}
	traceparser_destroy(&st);
}

static void test_combine_interlaced(void **state)
{
	const unsigned U = _TRACE_USER_C;
	static const uint32_t slots[][4] = {
		{ H(_TRACE_STRUCT_CB, 0, _TRACE_USER_C, 1), 100, 1, 2 },
		{ H(0, 1, _TRACE_USER_C, 9), 101, 90, 91 },
		{ H(_TRACE_STRUCT_CB, 1, _TRACE_USER_C, 2), 102, 21, 22 },
		{ H(_TRACE_STRUCT_CC, 0, _TRACE_USER_C, 1), 100, 3, 4 },
		{ H(_TRACE_STRUCT_CE, 1, _TRACE_USER_C, 2), 102, 23, 0 },
		{ H(_TRACE_STRUCT_CC, 0, _TRACE_USER_C, 1), 100, 5, 6 },
		{ H(_TRACE_STRUCT_CE, 0, _TRACE_USER_C, 1), 100, 7, 8 },
	};
	struct traceparser_state *st = new_parser();
	const char *path = make_file("interlaced.kev", 0, slots, sizeof(slots) / sizeof(slots[0]));
	const struct tk_traceparser_stats *stats;
	unsigned i;

	(void)state;
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(g_log.n, 3);
	assert_int_equal(g_log.r[0].header, (unsigned)(0x01000000u | U | 9));
	assert_int_equal(g_log.r[1].header, (unsigned)(_TRACE_STRUCT_CB | 0x01000000u | U | 2));
	assert_int_equal(g_log.r[1].time, 102);
	assert_int_equal(g_log.r[1].len, 4);
	assert_int_equal(g_log.r[1].words[0], 21);
	assert_int_equal(g_log.r[1].words[2], 23);
	assert_int_equal(g_log.r[1].words[3], 0);
	assert_int_equal(g_log.r[2].header, (unsigned)(_TRACE_STRUCT_CB | U | 1));
	assert_int_equal(g_log.r[2].len, 8);
	for (i = 0; i < 8; i++)
		assert_int_equal(g_log.r[2].words[i], i + 1);
	stats = traceparser_get_info(st, _TRACEPARSER_INFO_STATS, NULL);
	assert_int_equal(stats->slots, 7);
	assert_int_equal(stats->events, 3);
	assert_int_equal(stats->combine_events, 2);
	assert_int_equal(stats->unbalanced_parts, 0);
	traceparser_destroy(&st);
}

static void test_combine_unbalanced(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(_TRACE_STRUCT_CC, 0, _TRACE_USER_C, 1), 50, 3, 4 },  /* nothing pending */
		{ H(_TRACE_STRUCT_CE, 0, _TRACE_USER_C, 1), 50, 5, 6 },  /* nothing pending */
		{ H(_TRACE_STRUCT_CB, 0, _TRACE_USER_C, 1), 60, 1, 2 },
		{ H(_TRACE_STRUCT_CE, 0, _TRACE_USER_C, 1), 61, 5, 6 },  /* other timestamp */
		{ H(0, 0, _TRACE_USER_C, 3), 62, 0, 0 },
		{ H(_TRACE_STRUCT_CB, 0, _TRACE_USER_C, 2), 63, 1, 2 },  /* never ends */
	};
	struct traceparser_state *st = new_parser();
	const char *path = make_file("unbalanced.kev", 0, slots, sizeof(slots) / sizeof(slots[0]));
	const struct tk_traceparser_stats *stats;
	FILE *dbg = tmpfile();
	char text[16384] = { 0 };

	(void)state;
	assert_non_null(dbg);
	traceparser_debug(st, dbg, _TRACEPARSER_DEBUG_ALL);
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(g_log.n, 1); /* only the simple event */
	assert_int_equal(g_log.r[0].time, 62);
	stats = traceparser_get_info(st, _TRACEPARSER_INFO_STATS, NULL);
	assert_int_equal(stats->unbalanced_parts, 3);
	assert_int_equal(stats->incomplete_events, 2);
	rewind(dbg);
	assert_true(fread(text, 1, sizeof(text) - 1, dbg) > 0);
	assert_non_null(strstr(text, "unbalanced continuation of combine event ignored"));
	assert_non_null(strstr(text, "2 combine event(s) never completed"));
	fclose(dbg);
	traceparser_destroy(&st);
}

/* The same events in both byte orders give the same callbacks once swapped. */
static void test_byte_orders(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 2, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0x10, 0x7, 0x10 },
		{ H(0, 2, _TRACE_USER_C, 12), 0x11, 0xdeadbeef, 0x01020304 },
		{ H(_TRACE_STRUCT_CB, 2, _TRACE_USER_C, 13), 0x12, 1, 2 },
		{ H(_TRACE_STRUCT_CE, 2, _TRACE_USER_C, 13), 0x12, 3, 4 },
	};
	struct log le;
	int be;

	(void)state;
	for (be = 0; be <= 1; be++) {
		struct traceparser_state *st = new_parser();
		const char *path = make_file(be ? "order_be.kev" : "order_le.kev", be, slots, 4);
		assert_int_equal(tk_traceparser_cs_internal(st, NULL, rec_cb, 6, 0, 1023), 0);
		assert_int_equal(tk_traceparser_cs_internal(st, NULL, rec_cb, 1, 0, 1023), 0);
		assert_int_equal(traceparser(st, NULL, path), 0);
		assert_int_equal(g_log.n, 3);
		assert_int_equal(g_log.r[1].words[0], 0xdeadbeef);
		assert_int_equal(g_log.r[2].words[3], 4);
		assert_int_equal(g_log.r[1].clk, 0x700000011ull);
		if (!be)
			le = g_log;
		else
			assert_memory_equal(&le.r, &g_log.r, sizeof(le.r[0]) * 3);
		traceparser_destroy(&st);
	}
}

/* 64-bit time across LSB rollovers, per CPU, with combine events spanning a TIME. */
static void test_time_rollover(void **state)
{
	static const uint64_t times[] = { 0xfffffff0ull,        0x100000005ull,      0x1fffffff0ull,
					  0x200000001ull,       0x20000000full,      0xffffffff00000001ull,
					  0xffffffff00000002ull };
	const char *path = tkt_path("rollover.kev");
	tk_kev_header hdr = { .cycles_per_sec = 2000000000u, .cpu_num = 2 };
	struct traceparser_state *st = new_parser();
	tk_kev_writer *wr;
	uint32_t words[5] = { 1, 2, 3, 4, 5 };
	const uint64_t *v;
	unsigned i;

	(void)state;
	assert_int_equal(tk_kev_writer_open(&wr, path, &hdr, 0), TK_OK);
	for (i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		assert_int_equal(tk_kev_write_event(wr, i % 2, _TRACE_USER_C, i, times[i], words, i % 3 == 2 ? 5 : 2),
				 TK_OK);
	assert_int_equal(tk_kev_writer_close(wr), TK_OK);

	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(g_log.n, sizeof(times) / sizeof(times[0]));
	for (i = 0; i < g_log.n; i++)
		assert_int_equal(g_log.r[i].clk, times[i]);
	v = traceparser_get_info(st, _TRACEPARSER_INFO_CLK_INTIAL, NULL);
	assert_int_equal(*v, times[0]);
	v = traceparser_get_info(st, _TRACEPARSER_INFO_TIME_DELTA, NULL);
	/* last event: (times[6] - times[0]) cycles at 2 GHz */
	assert_int_equal(*v, (uint64_t)((unsigned __int128)(times[6] - times[0]) * 1000000000u / 2000000000u));
	v = traceparser_get_info(st, TK_TRACEPARSER_INFO_NS, NULL);
	assert_int_equal(*v, (uint64_t)((unsigned __int128)times[6] * 1000000000u / 2000000000u));
	traceparser_destroy(&st);
}

/* A combine event whose CB precedes a TIME rollover keeps the MSB of its CB. */
static void test_combine_across_time(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0xfffffff0u, 4, 0xfffffff0u },
		{ H(_TRACE_STRUCT_CB, 0, _TRACE_USER_C, 1), 0xfffffff8u, 1, 2 },
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0x10, 5, 0x10 },
		{ H(0, 0, _TRACE_USER_C, 2), 0x11, 0, 0 },
		{ H(_TRACE_STRUCT_CE, 0, _TRACE_USER_C, 1), 0xfffffff8u, 3, 4 },
		{ H(0, 3, _TRACE_USER_C, 3), 0x20, 0, 0 }, /* CPU without TIME borrows the latest MSB */
	};
	struct traceparser_state *st = new_parser();
	const char *path = make_file("across.kev", 0, slots, sizeof(slots) / sizeof(slots[0]));

	(void)state;
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(g_log.n, 3);
	assert_int_equal(g_log.r[0].clk, 0x500000011ull);
	assert_int_equal(g_log.r[1].clk, 0x4fffffff8ull);
	assert_int_equal(g_log.r[2].clk, 0x500000020ull);
	traceparser_destroy(&st);
}

static void test_sort(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0x100, 1, 0x100 },
		{ H(0, 1, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0x50, 1, 0x50 },
		{ H(0, 0, _TRACE_USER_C, 1), 0x300, 0, 0 },
		{ H(0, 1, _TRACE_USER_C, 2), 0x200, 0, 0 },
		{ H(_TRACE_STRUCT_CB, 1, _TRACE_USER_C, 3), 0x250, 7, 8 },
		{ H(0, 0, _TRACE_USER_C, 4), 0x200, 0, 0 }, /* tie with event 2: file order kept */
		{ H(_TRACE_STRUCT_CE, 1, _TRACE_USER_C, 3), 0x250, 9, 10 },
	};
	static const unsigned expect[] = { 2, 4, 3, 1 };
	struct traceparser_state *st = new_parser();
	const char *path = make_file("sort.kev", 0, slots, sizeof(slots) / sizeof(slots[0]));
	unsigned i;

	(void)state;
	assert_int_equal(traceparser_sort(st, _TRACEPARSER_SORT), 0);
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(g_log.n, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(TK_KEV_CODE(g_log.r[i].header), expect[i]);
	assert_int_equal(g_log.r[2].clk, 0x100000250ull);
	assert_int_equal(g_log.r[2].words[3], 10);
	traceparser_destroy(&st);
}

/* QNX's order in each buffer, BUFFER then TIME: in sort mode the events before a CPU's first
 * TIME event get their upper time bits from it, also across a wrap of the lower 32 bits. */
static void test_sort_events_before_time(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER), 0x1000, 1, 0 },
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0x1010, 5, 0x1010 },
		{ H(0, 1, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER), 0xfffffff0u, 2, 0 },
		{ H(0, 1, _TRACE_USER_C, 7), 0xfffffff8u, 0, 0 },
		{ H(0, 1, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0x8, 5, 0x8 }, /* the low bits wrapped */
		{ H(0, 0, _TRACE_USER_C, 8), 0x1020, 0, 0 },
	};
	static const struct {
		unsigned cls, code;
		uint64_t clk;
	} expect[] = {
		{ 1, _TRACE_CONTROL_BUFFER, 0x4fffffff0ull }, { 6, 7, 0x4fffffff8ull },
		{ 1, _TRACE_CONTROL_TIME, 0x500000008ull },  { 1, _TRACE_CONTROL_BUFFER, 0x500001000ull },
		{ 1, _TRACE_CONTROL_TIME, 0x500001010ull },  { 6, 8, 0x500001020ull },
	};
	struct traceparser_state *st = new_parser();
	const char *path = make_file("sort_qnx.kev", 0, slots, sizeof(slots) / sizeof(slots[0]));

	(void)state;
	assert_int_equal(traceparser_sort(st, _TRACEPARSER_SORT), 0);
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_CONTROL, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(g_log.n, 6);
	for (unsigned i = 0; i < 6; i++) {
		assert_int_equal(TK_KEV_CLASS(g_log.r[i].header), expect[i].cls);
		assert_int_equal(TK_KEV_CODE(g_log.r[i].header), expect[i].code);
		assert_int_equal(g_log.r[i].clk, expect[i].clk);
	}
	traceparser_destroy(&st);
}

/* ---- standard input -------------------------------------------------------------------- */

struct feeder {
	int fd;
	const unsigned char *data;
	size_t len;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;
	size_t off = 0, step = 7;

	while (off < f->len) {
		size_t n = f->len - off < step ? f->len - off : step;
		ssize_t w = write(f->fd, f->data + off, n);
		if (w <= 0)
			break;
		off += (size_t)w;
		step = step * 3 + 1; /* uneven pieces: 7, 22, 67, ... */
	}
	close(f->fd);
	return NULL;
}

static void test_stdin_pipe(void **state)
{
	struct tkt_buf b = { 0 };
	struct traceparser_state *st = new_parser();
	struct feeder f;
	pthread_t th;
	int fds[2], saved;
	unsigned i, n = 100000;
	static unsigned count;

	(void)state;
	tkt_kev_header(&b, 0, 100);
	for (i = 0; i < n; i++)
		tkt_kev_slot(&b, 0, H(0, 0, _TRACE_USER_C, i % 1024), i, i, ~i);
	assert_int_equal(pipe(fds), 0);
	saved = dup(STDIN_FILENO);
	assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	f.fd = fds[1];
	f.data = b.p;
	f.len = b.len;
	assert_int_equal(pthread_create(&th, NULL, feed, &f), 0);
	count = 0;
	assert_int_equal(traceparser_cs_range(st, &count, rec_cb, _NTO_TRACE_USER, 0, 0), 0);
	assert_int_equal(traceparser(st, NULL, "-"), 0);
	pthread_join(th, NULL);
	dup2(saved, STDIN_FILENO);
	close(saved);
	/* every 1024th event is USER 0: the first 256 of them are recorded */
	assert_int_equal(g_log.n, 98);
	assert_int_equal(g_log.r[1].time, 1024);
	assert_int_equal(((const struct tk_traceparser_stats *)traceparser_get_info(st, _TRACEPARSER_INFO_STATS,
										      NULL))->slots,
			 n);
	tkt_buf_free(&b);
	traceparser_destroy(&st);
}

/* ---- malformed files ------------------------------------------------------------------ */

static int parse_buf(const void *data, size_t len, traceparser_error_t *level, char *msg, size_t cap)
{
	struct traceparser_state *st = traceparser_init(NULL);
	const char *path = tkt_path("bad.kev");
	int rc;

	tkt_write_file(path, data, len);
	traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 0, 1023);
	memset(&g_log, 0, sizeof(g_log));
	rc = traceparser(st, NULL, path);
	if (level)
		*level = *(const traceparser_error_t *)traceparser_get_info(st, _TRACEPARSER_INFO_ERROR, NULL);
	if (msg)
		snprintf(msg, cap, "%s", (const char *)traceparser_get_info(st, _TRACEPARSER_INFO_ERROR_STR, NULL));
	traceparser_destroy(&st);
	return rc;
}

static void test_bad_headers(void **state)
{
	traceparser_error_t lvl;
	char msg[512];
	struct tkt_buf b = { 0 };

	(void)state;
	assert_int_equal(parse_buf("", 0, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_WRONG_H_KEYWORD);
	assert_non_null(strstr(msg, "empty"));
	assert_non_null(strstr(msg, "byte offset 0"));

	assert_int_equal(parse_buf("hello world, this is not a trace", 32, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_WRONG_H_KEYWORD);
	assert_non_null(strstr(msg, "TRACE_HEADER_BEGIN"));

	/* missing version keys */
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_LITTLE_ENDIAN::TRUETRACE_HEADER_END::");
	assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_MISSING_FIELD);
	assert_non_null(strstr(msg, "VER_MAJOR"));
	assert_non_null(strstr(msg, "byte offset 45: the header has no TRACE_VER_MAJOR")); /* TRACE_HEADER_END:: */
	tkt_buf_free(&b);
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_LITTLE_ENDIAN::TRUETRACE_HEADER_END::");
	assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_MISSING_FIELD);
	assert_non_null(strstr(msg, "no TRACE_VER_MINOR"));
	assert_non_null(strstr(msg, "byte offset 63: the header has no TRACE_VER_MINOR"));
	tkt_buf_free(&b);

	/* version too old */
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::0TRACE_VER_MINOR::97TRACE_LITTLE_ENDIAN::TRUETRACE_"
			"HEADER_END::");
	assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_WRONG_FILE_VERSION);
	assert_non_null(strstr(msg, "byte offset 20: trace file version 0.97 (TRACE_VER_MAJOR)"));
	tkt_buf_free(&b);

	/* no byte order, both, middle */
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_HEADER_END::");
	assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_WRONG_ENDIAN_TYPE);
	assert_non_null(strstr(msg, "byte offset 57: Wrong input trace file endian type: neither"));
	tkt_buf_free(&b);
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUETRACE_"
			"BIG_ENDIAN::TRUETRACE_HEADER_END::");
	assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_WRONG_ENDIAN_TYPE);
	assert_non_null(strstr(msg, "TRACE_LITTLE_ENDIAN (byte offset 57) and TRACE_BIG_ENDIAN (byte offset 82)"));
	tkt_buf_free(&b);
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_MIDDLE_ENDIAN::TRUETRACE_"
			"HEADER_END::");
	assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_WRONG_ENDIAN_TYPE);
	assert_non_null(strstr(msg, "byte offset 57: Wrong input trace file endian type: TRACE_MIDDLE_ENDIAN"));
	tkt_buf_free(&b);

	/* syspage longer than the file */
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUETRACE_"
			"SYSPAGE_LEN::5000TRACE_HEADER_END::abc");
	assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_CANNOT_READ_IN_FILE);
	assert_non_null(strstr(msg, "5000"));
	assert_non_null(strstr(msg, "byte offset"));
	tkt_buf_free(&b);

	/* syspage length that is not a number */
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUETRACE_"
			"SYSPAGE_LEN::lotsTRACE_HEADER_END::");
	assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_WRONG_H_KEYWORD);
	assert_non_null(strstr(msg, "byte offset 82: TRACE_SYSPAGE_LEN value \"lots\" is not a number"));
	tkt_buf_free(&b);

	/* syspage length above the limit */
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUETRACE_"
			"SYSPAGE_LEN::999999999TRACE_HEADER_END::");
	assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_CANNOT_READ_IN_FILE);
	assert_non_null(strstr(msg, "byte offset 82: TRACE_SYSPAGE_LEN 999999999 exceeds"));
	tkt_buf_free(&b);

	/* a clock rate that is not a number (words after the digits too), or more than 2^64 - 1 */
	static const char *const bad_rates[] = { "12abc", "18446744073709551616", "99999999999999999999999",
						 "2400 MHz", "1000 1000" };
	for (size_t i = 0; i < sizeof(bad_rates) / sizeof(bad_rates[0]); i++) {
		char want[128];
		tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUETRACE_"
				"CYCLES_PER_SEC::");
		tkt_buf_str(&b, bad_rates[i]);
		tkt_buf_str(&b, "TRACE_HEADER_END::");
		assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
		assert_int_equal(lvl, _TRACEPARSER_WRONG_H_KEYWORD);
		snprintf(want, sizeof(want), "byte offset 82: TRACE_CYCLES_PER_SEC value \"%s\" is not a number from 0 to "
			 "18446744073709551615", bad_rates[i]);
		assert_non_null(strstr(msg, want));
		tkt_buf_free(&b);
	}

	/* no header end */
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUE");
	assert_int_equal(parse_buf(b.p, b.len, &lvl, msg, sizeof(msg)), -1);
	assert_int_equal(lvl, _TRACEPARSER_CANNOT_READ_IN_FILE);
	assert_non_null(strstr(msg, "truncated header"));
	tkt_buf_free(&b);

	/* nonexistent file */
	{
		struct traceparser_state *st = traceparser_init(NULL);
		assert_int_equal(traceparser(st, NULL, tkt_path("does-not-exist.kev")), -1);
		assert_int_equal(errno, ENOENT);
		assert_int_equal(*(const traceparser_error_t *)traceparser_get_info(st, _TRACEPARSER_INFO_ERROR, NULL),
				 _TRACEPARSER_CANNOT_READ_IN_FILE);
		traceparser_destroy(&st);
	}
}

static uint64_t g_rate_ns;

static int rate_ns_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	(void)ud, (void)h, (void)t, (void)buf, (void)len;
	g_rate_ns = tk_traceparser_ns(st);
	return 0;
}

/* A clock rate of 20 digits is read whole (it was cut to its first 19), and a blank one means
 * nanoseconds: an event at 2^63 cycles. */
static void test_rate_twenty_digits(void **state)
{
	static const struct {
		const char *rate;
		uint64_t ns;
	} cases[] = {
		{ "10000000000000000000", 922337203u },       /* 2^63 * 10^9 / 10^19 */
		{ "18446744073709551615  ", 500000000u },     /* 2^63 * 10^9 / (2^64 - 1), padded as written */
		{ "  ", 9223372036854775808u },               /* blank: cycles are ns */
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tkt_buf b = { 0 };
		const char *path = tkt_path("rate20.kev");
		tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUE"
				"TRACE_ENCODING::16 byte eventsTRACE_CYCLES_PER_SEC::");
		tkt_buf_str(&b, cases[i].rate);
		tkt_buf_str(&b, "TRACE_CPU_NUM::1TRACE_SYSPAGE_LEN::0TRACE_HEADER_END::");
		tkt_kev_slot(&b, 0, H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0, 0x80000000u, 0);
		tkt_kev_slot(&b, 0, H(0, 0, _TRACE_USER_C, 2), 0, 1, 2);
		tkt_write_file(path, b.p, b.len);
		tkt_buf_free(&b);
		struct traceparser_state *st = traceparser_init(NULL);
		traceparser_cs_range(st, NULL, rate_ns_cb, _NTO_TRACE_USER, 0, 1023);
		g_rate_ns = 1;
		assert_int_equal(traceparser(st, NULL, path), 0);
		traceparser_destroy(&st);
		if (g_rate_ns != cases[i].ns)
			fail_msg("rate \"%s\": %" PRIu64 " ns, not %" PRIu64, cases[i].rate, g_rate_ns, cases[i].ns);
	}
}

/* Cutting a valid file anywhere never crashes and never loses the complete events. */
static void test_truncation_everywhere(void **state)
{
	struct tkt_buf b = { 0 };
	size_t hdr_len, cut;
	unsigned i;

	(void)state;
	tkt_kev_header(&b, 0, 40);
	hdr_len = b.len;
	for (i = 0; i < 4; i++)
		tkt_kev_slot(&b, 0, H(0, 0, _TRACE_USER_C, i), i, i, i);
	for (cut = 0; cut <= b.len; cut++) {
		traceparser_error_t lvl;
		char msg[512];
		int rc = parse_buf(b.p, cut, &lvl, msg, sizeof(msg));
		if (cut < hdr_len) {
			assert_int_equal(rc, -1);
			assert_int_equal(g_log.n, 0);
		} else {
			size_t complete = (cut - hdr_len) / 16;
			assert_int_equal(g_log.n, complete);
			if ((cut - hdr_len) % 16 != 0) {
				char expect[64];
				assert_int_equal(rc, -1);
				assert_int_equal(lvl, _TRACEPARSER_CANNOT_READ_IN_FILE);
				snprintf(expect, sizeof(expect), "byte offset %zu: truncated event", hdr_len + complete * 16);
				assert_non_null(strstr(msg, expect));
			} else {
				assert_int_equal(rc, 0);
			}
		}
	}
	tkt_buf_free(&b);
}

static void test_random_bytes(void **state)
{
	unsigned char buf[4096];
	unsigned seed = 12345, round, i;
	struct tkt_buf b = { 0 };

	(void)state;
	printf("random seed %u\n", seed);
	for (round = 0; round < 50; round++) {
		for (i = 0; i < sizeof(buf); i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = (unsigned char)(seed >> 16);
		}
		parse_buf(buf, sizeof(buf), NULL, NULL, 0);
		/* random slots after a valid header */
		b.len = 0;
		tkt_kev_header(&b, round & 1, 0);
		tkt_buf_put(&b, buf, sizeof(buf));
		assert_int_equal(parse_buf(b.p, b.len, NULL, NULL, 0), 0);
	}
	tkt_buf_free(&b);
}

static void test_one_event(void **state)
{
	struct traceparser_state *st = new_parser();
	traceevent_t ev[3] = {
		{ H(_TRACE_STRUCT_CB, 0, _TRACE_USER_C, 4), { 9, 1, 2 } },
		{ H(0, 0, _TRACE_USER_C, 5), { 10, 3, 4 } },
		{ H(_TRACE_STRUCT_CE, 0, _TRACE_USER_C, 4), { 9, 5, 6 } },
	};

	(void)state;
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(traceparser_one_event(st, &ev[0]), 0);
	assert_int_equal(traceparser_one_event(st, &ev[1]), 0);
	assert_int_equal(traceparser_one_event(st, &ev[2]), 0);
	assert_int_equal(traceparser_one_event(st, NULL), -1);
	assert_int_equal(g_log.n, 2);
	assert_int_equal(g_log.r[0].words[1], 4);
	assert_int_equal(g_log.r[1].len, 4);
	assert_int_equal(g_log.r[1].words[3], 6);
	traceparser_destroy(&st);
}

static void test_debug_output(void **state)
{
	static const uint32_t slots[][4] = { { H(0, 0, _TRACE_USER_C, 1), 0xabc, 1, 2 } };
	struct traceparser_state *st = new_parser();
	const char *path = make_file("debug.kev", 0, slots, 1);
	FILE *dbg = tmpfile();
	char text[4096] = { 0 };

	(void)state;
	assert_non_null(dbg);
	assert_int_equal(traceparser_debug(st, dbg, _TRACEPARSER_DEBUG_HEADER | _TRACEPARSER_DEBUG_EVENTS), 0);
	assert_int_equal(*(const unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_DEBUG, NULL),
			 _TRACEPARSER_DEBUG_HEADER | _TRACEPARSER_DEBUG_EVENTS);
	assert_int_equal(traceparser(st, NULL, path), 0);
	rewind(dbg);
	assert_true(fread(text, 1, sizeof(text) - 1, dbg) > 0);
	assert_non_null(strstr(text, "TRACEPARSER LIBRARY version 1.02\n -- HEADER FILE INFORMATION -- \n"));
	assert_non_null(strstr(text, "       TRACE_FILE_NAME:: test.kev\n"));
	assert_non_null(strstr(text, "  TRACE_CYCLES_PER_SEC:: 1000000000\n"));
	assert_non_null(strstr(text, " -- KERNEL EVENTS -- \n"));
	assert_non_null(strstr(text, "event => h:0x00001801 d0:0x00000abc d1:0x00000001 d2:0x00000002\n"));
	fclose(dbg);
	traceparser_destroy(&st);
}

static void test_event_position(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 0, _TRACE_USER_C, 1), 1, 0, 0 },
		{ H(_TRACE_STRUCT_CB, 0, _TRACE_USER_C, 2), 2, 0, 0 },
		{ H(_TRACE_STRUCT_CE, 0, _TRACE_USER_C, 2), 2, 0, 0 },
	};
	struct traceparser_state *st = new_parser();
	const char *path = make_file("pos.kev", 0, slots, 3);
	struct tkt_buf hb = { 0 };

	(void)state;
	tkt_kev_header(&hb, 0, 8);
	assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(*(const uint64_t *)traceparser_get_info(st, _TRACEPARSER_INFO_EVENT_ID, NULL), 1);
	assert_int_equal(*(const uint64_t *)traceparser_get_info(st, TK_TRACEPARSER_INFO_OFFSET, NULL), hb.len + 16);
	tkt_buf_free(&hb);
	traceparser_destroy(&st);
}

/*
 * Every computed get_info mode has storage of its own: pointers taken for several modes
 * one after another all still hold their own values when read together afterwards.
 */
struct info_snap {
	unsigned n;
	unsigned now_class[4], now_event[4], prev_class[4], prev_event[4], clk_msb[4];
	int prev_return[4];
	uint64_t event_id[4], clk_initial[4], clk[4], clk_delta[4], time_delta[4], offset[4], ns[4];
};

static int info_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct info_snap *s = ud;
	const unsigned *now_class = traceparser_get_info(st, _TRACEPARSER_INFO_NOW_CALLBACK_CLASS, NULL);
	const unsigned *now_event = traceparser_get_info(st, _TRACEPARSER_INFO_NOW_CALLBACK_EVENT, NULL);
	const unsigned *prev_class = traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_CLASS, NULL);
	const unsigned *prev_event = traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_EVENT, NULL);
	const int *prev_return = traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_RETURN, NULL);
	const unsigned *clk_msb = traceparser_get_info(st, _TRACEPARSER_INFO_CLK_MSB, NULL);
	const uint64_t *event_id = traceparser_get_info(st, _TRACEPARSER_INFO_EVENT_ID, NULL);
	const uint64_t *clk_initial = traceparser_get_info(st, _TRACEPARSER_INFO_CLK_INTIAL, NULL);
	const uint64_t *clk = traceparser_get_info(st, _TRACEPARSER_INFO_CLK, NULL);
	const uint64_t *clk_delta = traceparser_get_info(st, _TRACEPARSER_INFO_CLK_DELTA, NULL);
	const uint64_t *time_delta = traceparser_get_info(st, _TRACEPARSER_INFO_TIME_DELTA, NULL);
	const uint64_t *offset = traceparser_get_info(st, TK_TRACEPARSER_INFO_OFFSET, NULL);
	const uint64_t *ns = traceparser_get_info(st, TK_TRACEPARSER_INFO_NS, NULL);
	unsigned i = s->n++;

	(void)h;
	(void)t;
	(void)buf;
	(void)len;
	assert_true(i < 4);
	/* read only now, after every call */
	s->now_class[i] = *now_class;
	s->now_event[i] = *now_event;
	s->prev_class[i] = *prev_class;
	s->prev_event[i] = *prev_event;
	s->prev_return[i] = *prev_return;
	s->clk_msb[i] = *clk_msb;
	s->event_id[i] = *event_id;
	s->clk_initial[i] = *clk_initial;
	s->clk[i] = *clk;
	s->clk_delta[i] = *clk_delta;
	s->time_delta[i] = *time_delta;
	s->offset[i] = *offset;
	s->ns[i] = *ns;
	return 40 + (int)i;
}

static void test_info_pointers_independent(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0x100, 3, 0x100 },
		{ H(0, 0, _TRACE_USER_C, 17), 0x180, 1, 2 },
		{ H(0, 0, _TRACE_SYSTEM_C, 9), 0x1c0, 3, 4 },
	};
	struct traceparser_state *st = new_parser();
	const char *path = make_file("infoptr.kev", 0, slots, 3); /* CYCLES_PER_SEC 1e9 */
	struct tkt_buf hb = { 0 };
	struct info_snap s = { 0 };
	unsigned i;

	(void)state;
	tkt_kev_header(&hb, 0, 8);
	assert_int_equal(tk_traceparser_cs_internal(st, &s, info_cb, 1, 0, 1023), 0);
	assert_int_equal(tk_traceparser_cs_internal(st, &s, info_cb, 6, 0, 1023), 0);
	assert_int_equal(tk_traceparser_cs_internal(st, &s, info_cb, 5, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(s.n, 3);
	for (i = 0; i < 3; i++) {
		uint64_t clk = 0x300000000ull | slots[i][1];
		assert_int_equal(s.now_class[i], TK_KEV_CLASS(slots[i][0]));
		assert_int_equal(s.now_event[i], TK_KEV_CODE(slots[i][0]));
		assert_int_equal(s.prev_class[i], i == 0 ? 0 : TK_KEV_CLASS(slots[i - 1][0]));
		assert_int_equal(s.prev_event[i], i == 0 ? 0 : TK_KEV_CODE(slots[i - 1][0]));
		assert_int_equal(s.prev_return[i], i == 0 ? 0 : 40 + (int)i - 1);
		assert_int_equal(s.clk_msb[i], 3);
		assert_int_equal(s.event_id[i], i);
		assert_int_equal(s.clk_initial[i], 0x300000100ull);
		assert_int_equal(s.clk[i], clk);
		assert_int_equal(s.clk_delta[i], clk - 0x300000100ull);
		assert_int_equal(s.time_delta[i], clk - 0x300000100ull);
		assert_int_equal(s.offset[i], hb.len + 16 * i);
		assert_int_equal(s.ns[i], clk);
	}
	tkt_buf_free(&hb);
	traceparser_destroy(&st);
}

/*
 * CLK_INTIAL is the time of the file's first slot, whatever its class: QNX files begin
 * with BUFFER, then TIME, and the TIME event gives the first slot its upper 32 bits
 * (across a wrap of the lower ones too). Before that TIME event the upper bits are 0, as
 * in CLK; a file without TIME events keeps them 0.
 */
struct clk_seen {
	unsigned n;
	uint64_t clk[4], initial[4], delta[4];
};

static int clk_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct clk_seen *c = ud;

	(void)h;
	(void)t;
	(void)buf;
	(void)len;
	assert_true(c->n < 4);
	c->clk[c->n] = *(const uint64_t *)traceparser_get_info(st, _TRACEPARSER_INFO_CLK, NULL);
	c->initial[c->n] = *(const uint64_t *)traceparser_get_info(st, _TRACEPARSER_INFO_CLK_INTIAL, NULL);
	c->delta[c->n] = *(const uint64_t *)traceparser_get_info(st, _TRACEPARSER_INFO_CLK_DELTA, NULL);
	c->n++;
	return 0;
}

static void test_clk_initial(void **state)
{
	static const uint32_t wrapped[][4] = {
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER), 0xfffffff0u, 1, 3 },
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0x10, 5, 0x10 },
		{ H(0, 1, _TRACE_USER_C, 1), 0x20, 0, 0 },
	};
	static const uint32_t plain[][4] = {
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER), 0x100, 1, 3 },
		{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0x105, 7, 0x105 },
		{ H(0, 0, _TRACE_USER_C, 1), 0x200, 0, 0 },
	};
	static const uint32_t no_time[][4] = {
		{ H(0, 0, _TRACE_USER_C, 1), 0x300, 0, 0 },
		{ H(0, 0, _TRACE_USER_C, 2), 0x340, 0, 0 },
	};
	struct traceparser_state *st;
	struct clk_seen c;
	int be;

	(void)state;
	for (be = 0; be <= 1; be++) {
		memset(&c, 0, sizeof(c));
		st = new_parser();
		assert_int_equal(tk_traceparser_cs_internal(st, &c, clk_cb, 1, 0, 1023), 0);
		assert_int_equal(tk_traceparser_cs_internal(st, &c, clk_cb, 6, 0, 1023), 0);
		assert_int_equal(traceparser(st, NULL, make_file("clkinit_wrap.kev", be, wrapped, 3)), 0);
		assert_int_equal(c.n, 3);
		/* the BUFFER event, before any TIME: upper bits 0 in both */
		assert_int_equal(c.clk[0], 0xfffffff0u);
		assert_int_equal(c.initial[0], 0xfffffff0u);
		assert_int_equal(c.delta[0], 0);
		/* from the TIME event on: the first slot lies 0x20 cycles before it, across the wrap */
		assert_int_equal(c.initial[1], 0x4fffffff0ull);
		assert_int_equal(c.clk[1], 0x500000010ull);
		assert_int_equal(c.delta[1], 0x20);
		assert_int_equal(c.clk[2], 0x500000020ull);
		assert_int_equal(c.delta[2], 0x30);
		assert_int_equal(*(const uint64_t *)traceparser_get_info(st, _TRACEPARSER_INFO_CLK_INTIAL, NULL),
				 0x4fffffff0ull);
		traceparser_destroy(&st);
	}

	memset(&c, 0, sizeof(c));
	st = new_parser();
	assert_int_equal(tk_traceparser_cs_internal(st, &c, clk_cb, 6, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, make_file("clkinit_plain.kev", 0, plain, 3)), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.initial[0], 0x700000100ull);
	assert_int_equal(c.delta[0], 0x100);
	traceparser_destroy(&st);

	memset(&c, 0, sizeof(c));
	st = new_parser();
	assert_int_equal(tk_traceparser_cs_internal(st, &c, clk_cb, 6, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, make_file("clkinit_none.kev", 0, no_time, 2)), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.initial[0], 0x300);
	assert_int_equal(c.initial[1], 0x300);
	assert_int_equal(c.delta[1], 0x40);
	traceparser_destroy(&st);

	/* events fed one by one: the first one fed is the first slot */
	memset(&c, 0, sizeof(c));
	st = new_parser();
	assert_int_equal(tk_traceparser_cs_internal(st, &c, clk_cb, 6, 0, 1023), 0);
	{
		traceevent_t evs[3] = { { H(0, 0, _TRACE_USER_C, 1), { 0x80, 0, 0 } },
					{ H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), { 0x90, 2, 0x90 } },
					{ H(0, 0, _TRACE_USER_C, 2), { 0xa0, 0, 0 } } };
		for (int i = 0; i < 3; i++)
			assert_int_equal(traceparser_one_event(st, &evs[i]), 0);
	}
	assert_int_equal(c.n, 2);
	assert_int_equal(c.initial[0], 0x80);
	assert_int_equal(c.initial[1], 0x200000080ull);
	assert_int_equal(c.delta[1], 0x20);
	traceparser_destroy(&st);
}

/* Files above the reader-thread threshold, with odd header lengths and a partial end. */
static unsigned long g_count;
static uint64_t g_sum;

static int sum_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	(void)st;
	(void)ud;
	(void)h;
	(void)len;
	g_count++;
	g_sum += t + buf[0];
	return 0;
}

static void test_large_files(void **state)
{
	const unsigned n = 400000; /* 6.4 MB of events */
	unsigned pad, i;

	(void)state;
	for (pad = 0; pad < 3; pad++) {
		struct tkt_buf b = { 0 };
		struct traceparser_state *st = traceparser_init(NULL);
		const char *path = tkt_path("large.kev");
		uint64_t expect = 0;
		int rc;

		tkt_kev_header(&b, pad == 1, 5 + pad * 7); /* odd syspage: slots start unaligned */
		for (i = 0; i < n; i++) {
			tkt_kev_slot(&b, pad == 1, H(0, 0, _TRACE_USER_C, i % 1024), i, i * 3, 0);
			expect += i + (pad == 1 ? __builtin_bswap32(i * 3) : i * 3);
		}
		if (pad == 2)
			tkt_buf_put(&b, "partial", 7); /* truncated last slot */
		tkt_write_file(path, b.p, b.len);
		g_count = 0;
		g_sum = 0;
		assert_int_equal(tk_traceparser_cs_internal(st, NULL, sum_cb, 6, 0, 1023), 0);
		rc = traceparser(st, NULL, path);
		assert_int_equal(rc, pad == 2 ? -1 : 0);
		assert_int_equal(g_count, n);
		assert_int_equal(g_sum, expect);
		if (pad == 2) {
			char want[64];
			snprintf(want, sizeof(want), "byte offset %zu", b.len - 7);
			assert_non_null(strstr(traceparser_get_info(st, _TRACEPARSER_INFO_ERROR_STR, NULL), want));
		}
		traceparser_destroy(&st);
		tkt_buf_free(&b);
	}
}

/* ---- owner of every event, one time line (issue 9 items 2 and 3) ---------------------- */

struct owner_check {
	uint64_t events, checked, unknown;
	int32_t buf_owner_tid; /* owner the last BUFFER got, checked at its THRUNNING */
	int failed;
	uint64_t first_fail;
};

/*
 * USER events carry their thread's tid in d0 (and pid = 1000 + tid in d1); control events
 * of a buffer belong to the THRUNNING after its BUFFER; the "orphan" buffers (no
 * THRUNNING) give unknown owners.
 */
static int owner_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct owner_check *c = ud;
	tk_kev_decoded d;
	int32_t pid, tid;
	int known = tk_traceparser_owner(st, &pid, &tid);

	(void)t;
	assert_int_equal(tk_traceparser_decode(st, h, t, buf, len, 0, &d), TK_OK);
	assert_int_equal(d.pid, pid);
	assert_int_equal(d.tid, tid);
	assert_int_equal(!!(d.flags & TK_KEV_DEC_OWNER_KNOWN), known);
	c->events++;
	if (!known) {
		c->unknown++;
		assert_int_equal(pid, 0);
		assert_int_equal(tid, 0);
	}
	if (TK_KEV_CLASS(h) == 6) {
		uint32_t want_tid = d.fields[0].type == TK_KEV_FIELD_WORDS ? tk_kev_field_word(&d, &d.fields[0], 0)
										   : (uint32_t)d.fields[0].v.u;
		c->checked++;
		if (want_tid == 0) { /* written in a buffer without owner */
			if (known && !c->failed)
				c->failed = 1, c->first_fail = c->events;
		} else if (!known || (uint32_t)tid != want_tid || (uint32_t)pid != 1000 + want_tid) {
			if (!c->failed)
				c->failed = 1, c->first_fail = c->events;
		}
	} else if (TK_KEV_CLASS(h) == 1 && TK_KEV_CODE(h) == _TRACE_CONTROL_BUFFER) {
		c->buf_owner_tid = known ? tid : -1;
	} else if (TK_KEV_CLASS(h) == 1 && TK_KEV_CODE(h) == _TRACE_CONTROL_DROPPED) {
		assert_true(known);
		assert_int_equal(tid, c->buf_owner_tid);
	} else if (TK_KEV_CLASS(h) == 4 && TK_KEV_CODE(h) == STATE_RUNNING) {
		/* the THRUNNING that names the buffer's owner belongs to it, and so did the BUFFER */
		assert_true(known);
		assert_int_equal(tid, (int32_t)d.fields[1].v.u);
		assert_int_equal(c->buf_owner_tid, tid);
	}
	return 0;
}

#define OWNER_THREADS 16
#define OWNER_BUFFERS 5000

/*
 * A recording as tracekit's recorder writes it (docs/kev-format.md): 16 threads, 5,000
 * buffers in the order they were flushed (not by thread), each TIME, CONTROL BUFFER,
 * sometimes DROPPED, THRUNNING (pid, tid), then events of the owner, simple and combine;
 * every 97th buffer has no THRUNNING (its events have no known owner).
 */
static const char *write_owner_file(int with_clock)
{
	const char *path = tkt_path(with_clock ? "owner_clock.kev" : "owner.kev");
	tk_kev_attr attrs[3] = { { "TRACEKIT_OWNER", "buffer" },
				 { "TRACEKIT_CLOCK_CYCLES", "1000000000" },
				 { "TRACEKIT_CLOCK_RAW_NS", "5000000000000" } };
	tk_kev_header hdr = { .cycles_per_sec = 2000000000u, .cpu_num = 4, .attrs = attrs,
			      .n_attrs = with_clock ? 3 : 1 };
	tk_kev_writer *wr;
	uint64_t clk = 999000000u; /* before the clock reference at first */
	unsigned b, i, seq = 0;

	assert_int_equal(tk_kev_writer_open(&wr, path, &hdr, TK_KEV_NO_AUTO_TIME), TK_OK);
	for (b = 0; b < OWNER_BUFFERS; b++) {
		uint32_t tid = 1 + (b * 7 + b / 3) % OWNER_THREADS, pid = 1000 + tid;
		unsigned cpu = b % 4;
		int orphan = b % 97 == 50;
		uint32_t w[6];
		traceevent_t ev[4];
		unsigned n = 0;

		ev[n].header = _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME);
		ev[n].data[0] = (uint32_t)clk;
		ev[n].data[1] = (uint32_t)(clk >> 32);
		ev[n++].data[2] = (uint32_t)clk;
		ev[n].header = _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER);
		ev[n].data[0] = (uint32_t)clk;
		ev[n].data[1] = seq++ & 0x7ff;
		ev[n++].data[2] = 8;
		if (b % 5 == 1 && !orphan) {
			ev[n].header = _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, _TRACE_CONTROL_C, _TRACE_CONTROL_DROPPED);
			ev[n].data[0] = (uint32_t)clk;
			ev[n].data[1] = 3;
			ev[n++].data[2] = 0;
		}
		if (!orphan) {
			ev[n].header = _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, _TRACE_PR_TH_C, STATE_RUNNING);
			ev[n].data[0] = (uint32_t)clk;
			ev[n].data[1] = pid;
			ev[n++].data[2] = tid;
		}
		assert_int_equal(tk_kev_write_raw(wr, ev, n), TK_OK);
		for (i = 0; i < 6; i++) {
			w[0] = orphan ? 0 : tid;
			w[1] = orphan ? 0 : pid;
			w[2] = w[3] = w[4] = w[5] = i;
			clk += 1000;
			assert_int_equal(tk_kev_write_event(wr, cpu, _TRACE_USER_C, i, clk, w, i == 3 ? 6 : 2), TK_OK);
		}
		clk += 1000;
	}
	assert_int_equal(tk_kev_writer_close(wr), TK_OK);
	return path;
}

static void check_owner_file(const char *path, int sort)
{
	struct traceparser_state *st = new_parser();
	struct owner_check c = { 0 };

	assert_int_equal(tk_traceparser_cs_internal(st, &c, owner_cb, 1, 0, 1023), 0);
	assert_int_equal(tk_traceparser_cs_internal(st, &c, owner_cb, 4, 0, 1023), 0);
	assert_int_equal(tk_traceparser_cs_internal(st, &c, owner_cb, 6, 0, 1023), 0);
	if (sort)
		traceparser_sort(st, _TRACEPARSER_SORT);
	assert_int_equal(traceparser(st, NULL, path), 0);
	if (c.failed)
		fail_msg("wrong owner at event %" PRIu64, c.first_fail);
	assert_int_equal(c.checked, (uint64_t)OWNER_BUFFERS * 6);
	/* unknown: the orphans' BUFFER and USER events, and the TIME events before the first
	 * BUFFER's owner is known */
	assert_true(c.unknown >= 52u * 7);
	traceparser_destroy(&st);
}

static void test_owner_tracekit_buffers(void **state)
{
	(void)state;
	const char *path = write_owner_file(0);
	check_owner_file(path, 0);
	check_owner_file(path, 1); /* owners survive sorting */
}

/* QNX files: the last THRUNNING of each CPU. */
static struct {
	int32_t pid[16], tid[16];
	int known[16];
	unsigned n;
} g_own;

static int own_rec_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf,
		      unsigned len)
{
	(void)ud, (void)h, (void)t, (void)buf, (void)len;
	if (g_own.n < 16) {
		g_own.known[g_own.n] = tk_traceparser_owner(st, &g_own.pid[g_own.n], &g_own.tid[g_own.n]);
		g_own.n++;
	}
	return 0;
}

static void test_owner_qnx_cpus(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 2, _TRACE_USER_C, 1), 1, 0, 0 }, /* CPU 2: nothing ran yet */
		{ H(0, 0, _TRACE_PR_TH_C, STATE_RUNNING), 2, 10, 1 },
		{ H(0, 1, _TRACE_PR_TH_C, STATE_RUNNING), 3, 20, 2 },
		{ H(0, 0, _TRACE_USER_C, 2), 4, 0, 0 },
		{ H(0, 1, _TRACE_USER_C, 3), 5, 0, 0 },
		{ H(_TRACE_STRUCT_CB, 1, _TRACE_USER_C, 4), 6, 0, 0 },
		{ H(0, 1, _TRACE_PR_TH_C, STATE_RUNNING), 7, 30, 3 },
		{ H(_TRACE_STRUCT_CE, 1, _TRACE_USER_C, 4), 6, 0, 0 }, /* owner of its CB */
		{ H(0, 1, _TRACE_USER_C, 5), 8, 0, 0 },
		{ H(0, 0, _TRACE_USER_C, 6), 9, 0, 0 },
	};
	/* USER events in time order: 1, 2, 3, 4 (combine, time 6), 5, 6 */
	static const int32_t want_pid[] = { 0, 10, 20, 20, 30, 10 }, want_tid[] = { 0, 1, 2, 2, 3, 1 };
	const char *path = make_file("owner_qnx.kev", 0, slots, sizeof(slots) / sizeof(slots[0]));
	int sort;
	unsigned i;

	(void)state;
	for (sort = 0; sort < 2; sort++) {
		struct traceparser_state *st = new_parser();
		memset(&g_own, 0, sizeof(g_own));
		traceparser_sort(st, sort ? _TRACEPARSER_SORT : _TRACEPARSER_NOSORT);
		assert_int_equal(traceparser_cs_range(st, NULL, own_rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
		assert_int_equal(traceparser(st, NULL, path), 0);
		assert_int_equal(g_own.n, 6);
		for (i = 0; i < 6; i++) {
			assert_int_equal(g_own.known[i], i != 0);
			assert_int_equal(g_own.pid[i], want_pid[i]);
			assert_int_equal(g_own.tid[i], want_tid[i]);
		}
		traceparser_destroy(&st);
	}
}

/*
 * Outside a callback there is no event being delivered: tk_traceparser_owner() returns 0
 * with *pid = *tid = 0 (traceparser.h) with a NULL state, before traceparser() ran and after
 * it returned, also when the file's last owner (CPU 0 here) is known; inside, it still
 * names the owner.
 */
static void test_owner_outside_callback(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 0, _TRACE_PR_TH_C, STATE_RUNNING), 2, 10, 1 },
		{ H(0, 0, _TRACE_USER_C, 2), 4, 0, 0 },
	};
	const char *path = make_file("owner_outside.kev", 0, slots, sizeof(slots) / sizeof(slots[0]));
	int32_t pid = 77, tid = 78;
	int sort;

	(void)state;
	assert_int_equal(tk_traceparser_owner(NULL, &pid, &tid), 0);
	assert_int_equal(pid, 0);
	assert_int_equal(tid, 0);
	assert_int_equal(tk_traceparser_owner(NULL, NULL, NULL), 0);
	for (sort = 0; sort < 2; sort++) {
		struct traceparser_state *st = new_parser();
		memset(&g_own, 0, sizeof(g_own));
		pid = 77, tid = 78;
		assert_int_equal(tk_traceparser_owner(st, &pid, &tid), 0);
		assert_int_equal(pid, 0);
		assert_int_equal(tid, 0);
		traceparser_sort(st, sort ? _TRACEPARSER_SORT : _TRACEPARSER_NOSORT);
		assert_int_equal(traceparser_cs_range(st, NULL, own_rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
		assert_int_equal(traceparser(st, NULL, path), 0);
		assert_int_equal(g_own.n, 1);
		assert_int_equal(g_own.known[0], 1);
		assert_int_equal(g_own.pid[0], 10);
		assert_int_equal(g_own.tid[0], 1);
		pid = 77, tid = 78;
		assert_int_equal(tk_traceparser_owner(st, &pid, &tid), 0);
		assert_int_equal(pid, 0);
		assert_int_equal(tid, 0);
		traceparser_destroy(&st);
	}
}

/*
 * THRUNNING events reach the owner tracking through a hook in the dispatch table: a
 * callback attached to them still runs with its own user data (or traceparser()'s), and
 * when none is, the "previous callback" information still names the user's previous one.
 */
static unsigned g_thrun_calls;

static int thrun_user_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf,
			 unsigned len)
{
	int32_t pid, tid;
	(void)h, (void)t, (void)len;
	assert_ptr_equal(ud, &g_thrun_calls);
	assert_true(tk_traceparser_owner(st, &pid, &tid));
	assert_int_equal(pid, (int32_t)buf[0]);
	assert_int_equal(tid, (int32_t)buf[1]);
	g_thrun_calls++;
	return 3;
}

static int prev_check_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf,
			 unsigned len)
{
	(void)ud, (void)t, (void)buf, (void)len;
	if (TK_KEV_CODE(h) == 2 || TK_KEV_CODE(h) == 6) { /* after a THRUNNING without callback */
		assert_int_equal(*(const unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_CLASS, NULL),
				 6);
		assert_int_equal(*(const int *)traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_RETURN, NULL),
				 100 + (int)TK_KEV_CODE(h) - 1);
	}
	return 100 + (int)TK_KEV_CODE(h);
}

static void test_owner_hook_callbacks(void **state)
{
	static const uint32_t slots[][4] = {
		{ H(0, 0, _TRACE_USER_C, 1), 1, 0, 0 },
		{ H(0, 0, _TRACE_PR_TH_C, STATE_RUNNING), 2, 10, 1 },
		{ H(0, 1, _TRACE_PR_TH_C, STATE_RUNNING), 3, 20, 2 },
		{ H(0, 0, _TRACE_USER_C, 2), 4, 0, 0 },
		{ H(0, 0, _TRACE_USER_C, 5), 5, 0, 0 },
		{ H(0, 0, _TRACE_PR_TH_C, STATE_RUNNING), 6, 30, 3 },
		{ H(0, 0, _TRACE_USER_C, 6), 7, 0, 0 },
	};
	const char *path = make_file("owner_hook.kev", 0, slots, sizeof(slots) / sizeof(slots[0]));
	struct traceparser_state *st = new_parser();

	(void)state;
	assert_int_equal(traceparser_cs_range(st, NULL, prev_check_cb, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	/* with a callback on THRUNNING: called with its data, and the owner already set */
	g_thrun_calls = 0;
	assert_int_equal(traceparser_cs_range(st, NULL, NULL, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(traceparser_cs(st, NULL, thrun_user_cb, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING), 0);
	assert_int_equal(traceparser(st, &g_thrun_calls, path), 0);
	assert_int_equal(g_thrun_calls, 3);
	traceparser_destroy(&st);
	st = new_parser();
	g_thrun_calls = 0;
	assert_int_equal(traceparser_cs(st, &g_thrun_calls, thrun_user_cb, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING),
			 0);
	traceparser_sort(st, _TRACEPARSER_SORT);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(g_thrun_calls, 3);
	traceparser_destroy(&st);
}

/* One time line: CLOCK_MONOTONIC_RAW ns from the clock reference of the header. */
static int ns_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	uint64_t *bad = ud;
	uint64_t clk = tk_traceparser_clk(st), ns = tk_traceparser_ns(st);
	int64_t diff = (int64_t)(clk - 1000000000u); /* cycles from the reference, 2 GHz */
	int64_t want = 5000000000000 + (diff >= 0 ? diff / 2 : -((-diff + 1) / 2));
	tk_kev_decoded d;

	assert_int_equal(tk_traceparser_decode(st, h, t, buf, len, 0, &d), TK_OK);
	assert_int_equal(d.time_ns, ns);
	assert_int_equal(d.cycles, clk);
	if ((int64_t)ns != want)
		(*bad)++;
	bad[1]++;
	bad[2] += clk < 1000000000u;
	return 0;
}

static void test_time_line(void **state)
{
	const char *path = write_owner_file(1);
	struct traceparser_state *st = new_parser();
	uint64_t counts[3] = { 0 };

	(void)state;
	assert_int_equal(tk_traceparser_cs_internal(st, counts, ns_cb, 6, 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_int_equal(counts[0], 0);
	assert_int_equal(counts[1], (uint64_t)OWNER_BUFFERS * 6);
	assert_true(counts[2] > 0); /* events before the reference too */
	traceparser_destroy(&st);

	/* without the reference (QNX files): cycles since boot in ns */
	{
		static const uint32_t slots[][4] = { { H(0, 0, _TRACE_USER_C, 1), 3000, 0, 0 } };
		const uint64_t *v;
		path = make_file("no_ref.kev", 0, slots, 1);
		st = new_parser();
		assert_int_equal(traceparser_cs_range(st, NULL, rec_cb, _NTO_TRACE_USER, 0, 1023), 0);
		assert_int_equal(traceparser(st, NULL, path), 0);
		v = traceparser_get_info(st, TK_TRACEPARSER_INFO_NS, NULL);
		assert_non_null(v);
		traceparser_destroy(&st);
	}
}

/* ---- slow paths and live pipes (issue 10 items 9 and 31) ------------------------------ */

static uint64_t g_combined;

static int count_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	(void)st, (void)ud, (void)h, (void)t, (void)buf;
	g_combined += len > 2;
	return 0;
}

/*
 * 4,096 combine events that never finish, then a million that do: each CE used to scan
 * every pending event (28 s for a 64 MB file); now a hash finds it at once.
 */
/* Seconds to parse a file of n finished combine events after `unfinished` that never finish. */
static double time_combine_file(unsigned unfinished, unsigned n)
{
	struct tkt_buf b = { 0 };
	const char *path = tkt_path("hostile_combine.kev");
	struct traceparser_state *st = new_parser();
	struct timespec t0, t1;
	unsigned i;

	tkt_kev_header(&b, 0, 8);
	for (i = 0; i < unfinished; i++)
		tkt_kev_slot(&b, 0, H(_TRACE_STRUCT_CB, 0, _TRACE_USER_C, 1), 0x80000000u + i, 1, 2);
	for (i = 0; i < n; i++) {
		tkt_kev_slot(&b, 0, H(_TRACE_STRUCT_CB, 1, _TRACE_USER_C, 2), i, 1, 2);
		tkt_kev_slot(&b, 0, H(_TRACE_STRUCT_CE, 1, _TRACE_USER_C, 2), i, 3, 4);
	}
	tkt_write_file(path, b.p, b.len);
	tkt_buf_free(&b);
	g_combined = 0;
	assert_int_equal(traceparser_cs_range(st, NULL, count_cb, _NTO_TRACE_USER, 0, 1023), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(g_combined, n);
	traceparser_destroy(&st);
	return (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/*
 * 4,096 combine events that never finish, then 500,000 that do: each CE used to scan
 * every pending event (a 64 MB file took 28 s instead of 0.02 s); now a hash finds its CB
 * at once, so the file parses about as fast as without the unfinished ones (the bound is
 * generous for ASan and busy machines; the quadratic scan was thousands of times slower).
 */
static void test_combine_never_finished_fast(void **state)
{
	unsigned n = 500000;
	double base, hostile;

	(void)state;
	base = time_combine_file(0, n);
	hostile = time_combine_file(4096, n);
	if (hostile > 10 * base + 1.0)
		fail_msg("%u combine events behind 4,096 unfinished ones took %.2f s (%.2f s without them)", n,
			 hostile, base);
}

struct slow_feeder {
	int fd;
	const unsigned char *data;
	size_t first, len;
	atomic_int seen;     /* the callback has run */
	int seen_before_rest; /* ... before the rest of the file was written */
	atomic_int waited_after_seen; /* tk_traceparser_on_wait() ran after the first event */
	int waited_before_rest;
};

static void *slow_feed(void *arg)
{
	struct slow_feeder *f = arg;
	int i;

	assert_true(write(f->fd, f->data, f->first) == (ssize_t)f->first);
	for (i = 0; i < 500 && !atomic_load(&f->waited_after_seen); i++)
		usleep(10000); /* up to 5 s */
	f->seen_before_rest = atomic_load(&f->seen);
	f->waited_before_rest = atomic_load(&f->waited_after_seen);
	assert_true(write(f->fd, f->data + f->first, f->len - f->first) == (ssize_t)(f->len - f->first));
	close(f->fd);
	return NULL;
}

static int seen_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct slow_feeder *f = ud;
	(void)st, (void)h, (void)t, (void)buf, (void)len;
	atomic_store(&f->seen, 1);
	return 0;
}

static void on_wait_cb(void *ud)
{
	struct slow_feeder *f = ud;

	if (atomic_load(&f->seen))
		atomic_store(&f->waited_after_seen, 1);
}

/*
 * A live trace on a pipe: the first event is delivered before more data arrives, and the
 * wait hook (where traceprinter flushes its output) runs then, after that event.
 */
static void test_live_pipe_first_event(void **state)
{
	struct tkt_buf b = { 0 };
	struct traceparser_state *st = new_parser();
	struct slow_feeder f = { 0 };
	pthread_t th;
	int fds[2], saved;
	unsigned i;

	(void)state;
	tkt_kev_header(&b, 0, 8);
	tkt_kev_slot(&b, 0, H(0, 0, _TRACE_USER_C, 1), 1, 2, 3);
	f.first = b.len;
	for (i = 0; i < 1000; i++)
		tkt_kev_slot(&b, 0, H(0, 0, _TRACE_USER_C, 2), i, 2, 3);
	assert_true(f.first < 4096);
	assert_int_equal(pipe(fds), 0);
	saved = dup(STDIN_FILENO);
	assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	f.fd = fds[1];
	f.data = b.p;
	f.len = b.len;
	assert_int_equal(pthread_create(&th, NULL, slow_feed, &f), 0);
	assert_int_equal(traceparser_cs_range(st, &f, seen_cb, _NTO_TRACE_USER, 0, 1023), 0);
	assert_int_equal(tk_traceparser_on_wait(st, on_wait_cb, &f), 0);
	assert_int_equal(traceparser(st, NULL, "-"), 0);
	pthread_join(th, NULL);
	dup2(saved, STDIN_FILENO);
	close(saved);
	assert_true(f.seen_before_rest);
	assert_true(f.waited_before_rest);
	tkt_buf_free(&b);
	traceparser_destroy(&st);
}

/* ---- sort mode in bounded memory (issue 10 item 31) ----------------------------------- */

struct sorted_ev {
	uint32_t header, time, len, sum;
	uint64_t clk, id;
	int32_t pid, tid;
};

struct sorted_log {
	struct sorted_ev *v;
	size_t n, cap;
};

static int sorted_log_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf,
			 unsigned len)
{
	struct sorted_log *l = ud;
	struct sorted_ev *e;
	unsigned i;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4096;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		assert_non_null(l->v);
	}
	e = &l->v[l->n++];
	e->header = h;
	e->time = t;
	e->len = len;
	e->sum = 0;
	for (i = 0; i < len; i++)
		e->sum = e->sum * 31 + buf[i];
	e->clk = tk_traceparser_clk(st);
	e->id = *(const uint64_t *)traceparser_get_info(st, _TRACEPARSER_INFO_EVENT_ID, NULL);
	tk_traceparser_owner(st, &e->pid, &e->tid);
	return 0;
}

static void parse_sorted(const char *path, size_t budget, struct sorted_log *l)
{
	struct traceparser_state *st = traceparser_init(NULL);

	assert_non_null(st);
	memset(l, 0, sizeof(*l));
	if (budget)
		assert_int_equal(tk_traceparser_sort_memory(st, budget), 0);
	traceparser_sort(st, _TRACEPARSER_SORT);
	for (unsigned c = 0; c < 32; c++)
		assert_int_equal(tk_traceparser_cs_internal(st, l, sorted_log_cb, c, c == 0, 1023), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	traceparser_destroy(&st);
}

/*
 * Four CPUs whose events interleave in file order, buffers of several threads out of time
 * order, combine events across them, events before each CPU's first TIME event: sorted in
 * 64 KiB (hundreds of runs, merged in passes) the order is the same as sorted in memory.
 */
static const char *write_sort_file(unsigned n_events)
{
	const char *path = tkt_path("sort_big.kev");
	tk_kev_header hdr = { .cycles_per_sec = 1000000000u, .cpu_num = 4 };
	tk_kev_writer *wr;
	uint64_t clk[4] = { 0xfffff000u, 0xfffff100u, 0xfffff200u, 0xfffff300u };
	unsigned i, x = 12345;
	uint32_t w[12];

	assert_int_equal(tk_kev_writer_open(&wr, path, &hdr, 0), TK_OK);
	for (i = 0; i < n_events; i++) {
		unsigned cpu, n, k;
		x = x * 1103515245u + 12345u;
		cpu = (x >> 16) % 4;
		clk[cpu] += 1 + (x >> 20) % 50;
		if ((x >> 8) % 500 == 0)
			clk[cpu] -= 3000; /* a later buffer with earlier times */
		n = (x >> 4) % 7 == 0 ? 12 : 2;
		for (k = 0; k < n; k++)
			w[k] = i + k;
		assert_int_equal(tk_kev_write_event(wr, cpu, _TRACE_USER_C, i % 1024, clk[cpu], w, n), TK_OK);
		if (i % 97 == 0) {
			uint32_t run[2] = { 100 + cpu, i };
			assert_int_equal(tk_kev_write_event(wr, cpu, _TRACE_PR_TH_C, STATE_RUNNING, clk[cpu], run, 2),
					 TK_OK);
		}
	}
	assert_int_equal(tk_kev_writer_close(wr), TK_OK);
	return path;
}

static void test_sort_bounded_same_order(void **state)
{
	const char *path = write_sort_file(120000);
	struct sorted_log mem, small;
	size_t i;

	(void)state;
	parse_sorted(path, 0, &mem);
	parse_sorted(path, 64u << 10, &small);
	assert_true(mem.n > 120000);
	assert_int_equal(small.n, mem.n);
	for (i = 0; i < mem.n; i++) {
		if (memcmp(&mem.v[i], &small.v[i], sizeof(mem.v[i])) != 0)
			fail_msg("sorted event %zu differs (id %llu vs %llu)", i, (unsigned long long)mem.v[i].id,
				 (unsigned long long)small.v[i].id);
		if (i > 0)
			assert_true(mem.v[i - 1].clk < mem.v[i].clk ||
				    (mem.v[i - 1].clk == mem.v[i].clk && mem.v[i - 1].id < mem.v[i].id));
	}
	free(mem.v);
	free(small.v);
	assert_int_equal(tk_traceparser_sort_memory(NULL, 1u << 20), -1);
}



/*
 * The runs of a sort beyond its budget go to $TMPDIR (the documented place), not to /tmp
 * whatever TMPDIR says (glibc's tmpfile()); a TMPDIR that cannot hold them is named in the
 * error; the runs leave no file behind.
 */
static void test_sort_spill_tmpdir(void **state)
{
	const char *path = write_sort_file(20000);
	const char *old = getenv("TMPDIR");
	char *saved = old != NULL ? strdup(old) : NULL;
	char missing[4200], dir[4200];
	struct traceparser_state *st;
	struct sorted_log l;
	const char *msg;
	DIR *d;
	struct dirent *e;
	int n_left = 0;

	(void)state;
	snprintf(missing, sizeof(missing), "%s/no-such-tmpdir", tkt_dir());
	setenv("TMPDIR", missing, 1);
	st = traceparser_init(NULL);
	assert_non_null(st);
	assert_int_equal(tk_traceparser_sort_memory(st, 64u << 10), 0);
	traceparser_sort(st, _TRACEPARSER_SORT);
	memset(&l, 0, sizeof(l));
	for (unsigned c = 0; c < 32; c++)
		assert_int_equal(tk_traceparser_cs_internal(st, &l, sorted_log_cb, c, c == 0, 1023), 0);
	assert_int_not_equal(traceparser(st, NULL, path), 0);
	free(l.v);
	msg = traceparser_get_info(st, _TRACEPARSER_INFO_ERROR_STR, NULL);
	assert_non_null(msg);
	if (strstr(msg, missing) == NULL)
		fail_msg("the error does not name TMPDIR %s: %s", missing, msg);
	traceparser_destroy(&st);

	snprintf(dir, sizeof(dir), "%s/sort-tmpdir", tkt_dir());
	mkdir(dir, 0700);
	setenv("TMPDIR", dir, 1);
	parse_sorted(path, 64u << 10, &l);
	assert_true(l.n > 20000);
	free(l.v);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n_left++;
	closedir(d);
	assert_int_equal(n_left, 0);
	rmdir(dir);
	if (saved != NULL)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
}

#if !TKT_ASAN
static int count_only_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf,
			 unsigned len)
{
	(void)st, (void)h, (void)t, (void)buf, (void)len;
	(*(uint64_t *)ud)++;
	return 0;
}
#endif

/*
 * Memory: sorting 2.5 M events (a 40 MB file; about 170 MB in memory before) with an
 * 8 MiB budget stays far below the file's size (peak RSS of a child process).
 */
static void test_sort_bounded_memory(void **state)
{
#if TKT_ASAN
	(void)state;
	skip(); /* ASan's shadow and quarantine make RSS meaningless */
#else
	struct tkt_buf b = { 0 };
	const char *path = tkt_path("sort_mem.kev");
	unsigned i, n = 2500000;
	struct rusage ru;
	pid_t pid;
	int status;

	(void)state;
	tkt_kev_header(&b, 0, 8);
	for (i = 0; i < n; i++)
		tkt_kev_slot(&b, 0, H(0, i % 4, _TRACE_USER_C, 1), (i / 4) * 8 + (3 - i % 4), i, ~i);
	tkt_write_file(path, b.p, b.len);
	tkt_buf_free(&b);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct traceparser_state *st = traceparser_init(NULL);
		uint64_t count = 0;
		tk_traceparser_sort_memory(st, 8u << 20);
		traceparser_sort(st, _TRACEPARSER_SORT);
		traceparser_cs_range(st, &count, count_only_cb, _NTO_TRACE_USER, 0, 1023);
		_exit(traceparser(st, NULL, path) == 0 && count == n ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(getrusage(RUSAGE_CHILDREN, &ru), 0);
	print_message("peak RSS %ld KiB\n", ru.ru_maxrss);
	/* ru_maxrss in KiB: the parent's pages count too (the child is a fork of it) */
	if (ru.ru_maxrss > 80 * 1024)
		fail_msg("sorting a %u-event file peaked at %ld KiB", n, ru.ru_maxrss);
#endif
}

/* ---- end to end: a recording of tracekit's recorder (issue 9 item 3) ------------------- */

#define E2E_THREADS 12
#define E2E_EVENTS 250000

struct e2e_worker {
	unsigned index;
	uint32_t tid;
};

static void *e2e_work(void *arg)
{
	struct e2e_worker *w = arg;
	unsigned i;

	w->tid = (uint32_t)syscall(SYS_gettid);
	for (i = 0; i < E2E_EVENTS; i++)
		trace_logi(40 + (int)w->index, w->tid, i);
	return NULL;
}

struct e2e_check {
	uint64_t user, unknown_non_control, wrong;
};

static int e2e_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct e2e_check *c = ud;
	tk_kev_decoded d;

	assert_int_equal(tk_traceparser_decode(st, h, t, buf, len, 0, &d), TK_OK);
	if (!(d.flags & TK_KEV_DEC_OWNER_KNOWN)) {
		if (d.cls != 1)
			c->unknown_non_control++;
		return 0;
	}
	if (d.cls == 6 && d.code >= 40 && d.code < 40 + E2E_THREADS) {
		c->user++;
		if (d.pid != (int32_t)getpid() || (uint32_t)d.tid != (uint32_t)d.fields[0].v.u)
			c->wrong++;
	}
	return 0;
}

/*
 * Twelve threads record 3 M user events through tracekit's logger (thousands of 16 KiB
 * buffers, flushed while they run): the parser names the right pid and tid for every one,
 * sorted or not.
 */
static void test_owner_end_to_end(void **state)
{
	const char *path = tkt_path("e2e_owner.kev");
	/* room for every event (3 M slots are about 2,900 buffers): the logger writes buffers
	 * while the threads run, but a loaded machine that slows it down loses none, so the
	 * number of buffers written does not depend on the machine's load */
	tk_logger_options o = { .n_buffers = 4096 };
	struct e2e_worker w[E2E_THREADS];
	pthread_t th[E2E_THREADS];
	tk_logger_stats stats;
	unsigned i;
	int sort;

	(void)state;
	assert_int_equal(tk_logger_start(path, &o), TK_OK);
	assert_int_equal(TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_STARTNOSTATE), 0);
	for (i = 0; i < E2E_THREADS; i++) {
		w[i].index = i;
		assert_int_equal(pthread_create(&th[i], NULL, e2e_work, &w[i]), 0);
	}
	for (i = 0; i < E2E_THREADS; i++)
		pthread_join(th[i], NULL);
	/* what the logger has not written yet (it lags on a loaded machine) is written now */
	assert_int_equal(tk_logger_flush(), TK_OK);
	assert_int_equal(tk_logger_get_stats(&stats), TK_OK);
	assert_int_equal(tk_logger_stop(), TK_OK);
	print_message("%llu buffers written, %llu events written, %llu events dropped\n",
		      (unsigned long long)stats.buffers_written, (unsigned long long)stats.events_written,
		      (unsigned long long)stats.events_dropped);
	assert_true(stats.buffers_written >= 1000);
	for (sort = 0; sort < 2; sort++) {
		struct traceparser_state *st = new_parser();
		struct e2e_check c = { 0 };
		for (unsigned cls = 0; cls < 32; cls++)
			assert_int_equal(tk_traceparser_cs_internal(st, &c, e2e_cb, cls, cls == 0, 1023), 0);
		traceparser_sort(st, sort ? _TRACEPARSER_SORT : _TRACEPARSER_NOSORT);
		assert_int_equal(traceparser(st, NULL, path), 0);
		assert_int_equal(c.wrong, 0);
		assert_int_equal(c.unknown_non_control, 0);
		assert_int_equal(c.user + stats.events_dropped, (uint64_t)E2E_THREADS * E2E_EVENTS);
		traceparser_destroy(&st);
	}
}

/* ---- nanoseconds ---------------------------------------------------------------------------- */

struct ns_check {
	uint64_t cps, ref_cycles, ref_ns;
	int with_ref;
	unsigned seen;
};

/* The conversion as docs/kev-format.md defines it, by 128-bit division. */
static uint64_t ns_by_division(const struct ns_check *c, uint64_t clk)
{
	__int128 cps = c->cps != 0 ? (__int128)c->cps : 1000000000;
	if (!c->with_ref) {
		if (c->cps == 0 || c->cps == 1000000000u)
			return clk;
		/* below 1 GHz the quotient can pass 2^64: the end of the time line, not a wrap */
		unsigned __int128 q = (unsigned __int128)clk * 1000000000u / c->cps;
		return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
	}
	__int128 diff = (__int128)(int64_t)(clk - c->ref_cycles) * 1000000000;
	__int128 ns = diff >= 0 ? diff / cps : -((-diff + cps - 1) / cps);
	ns += (__int128)c->ref_ns;
	return ns < 0 ? 0 : ns > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

static int ns_exact_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct ns_check *c = ud;
	(void)h, (void)t, (void)buf, (void)len;
	uint64_t clk = tk_traceparser_clk(st);
	if (tk_traceparser_ns(st) != ns_by_division(c, clk))
		fail_msg("cps %" PRIu64 " ref %d: clk %" PRIu64 " gave %" PRIu64 " ns, not %" PRIu64, c->cps, c->with_ref,
			 clk, tk_traceparser_ns(st), ns_by_division(c, clk));
	c->seen++;
	return 0;
}

/* tk_traceparser_ns() (a multiplication and a correction, not a division) equals the
 * division at every clock rate, before and after the reference, near 2^64 cycles. */
static void test_ns_conversion(void **state_)
{
	(void)state_;
	static const uint64_t rates[] = { 2400000000u, 3000000007u, 999999999u, 1000000000u, 1000000001u,
					  9999999999999999967u };
	uint64_t rng = 88172645463325252u;
	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		for (int with_ref = 0; with_ref < 2; with_ref++) {
			struct ns_check c = { rates[r], 123456789012345u, 5000000000000u, with_ref, 0 };
			char cyc[32], raw[32];
			snprintf(cyc, sizeof(cyc), "%" PRIu64, c.ref_cycles);
			snprintf(raw, sizeof(raw), "%" PRIu64, c.ref_ns);
			tk_kev_attr attrs[2] = { { "TRACEKIT_CLOCK_CYCLES", cyc }, { "TRACEKIT_CLOCK_RAW_NS", raw } };
			tk_kev_header hdr = { .cycles_per_sec = rates[r], .cpu_num = 1, .attrs = attrs,
					      .n_attrs = with_ref ? 2 : 0 };
			const char *path = tkt_path("ns.kev");
			tk_kev_writer *wr;
			uint64_t clk = 0;
			unsigned n = 0;
			assert_int_equal(tk_kev_writer_open(&wr, path, &hdr, 0), TK_OK);
			for (unsigned i = 0; i < 3000; i++) {
				rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
				/* steps of every size: a few cycles, seconds, days, and near the end 2^64 */
				unsigned shift = i < 2900 ? (unsigned)(rng % 48) : 60;
				uint64_t step = (rng >> 16) & ((1ull << shift) - 1);
				if (clk + step < clk)
					break;
				clk += step;
				uint32_t w[2] = { i, 0 };
				assert_int_equal(tk_kev_write_event(wr, 0, _TRACE_USER_C, 1, clk, w, 2), TK_OK);
				n++;
			}
			assert_int_equal(tk_kev_writer_close(wr), TK_OK);
			struct traceparser_state *st = new_parser();
			assert_int_equal(tk_traceparser_cs_internal(st, &c, ns_exact_cb, 6, 1, 1), 0);
			assert_int_equal(traceparser(st, NULL, path), 0);
			assert_int_equal(c.seen, n);
			traceparser_destroy(&st);
		}
	}
}

/* tk__tp_clk_to_ns() against the 128-bit division on the extremes: counts near 0, 2^63 and
 * 2^64, rates just above 1 GHz up to 2^64 - 1, references near 2^64 ns, distances of
 * INT64_MIN, and random values (the seed printed). */
static uint64_t ns_reference(uint64_t cps, int with_ref, uint64_t ref_cycles, uint64_t ref_ns, uint64_t clk)
{
	struct ns_check c = { cps, ref_cycles, ref_ns, with_ref, 0 };
	return ns_by_division(&c, clk);
}

static void test_ns_extremes(void **state_)
{
	(void)state_;
	static const uint64_t rates[] = { 0, 1, 3, 999999999u, 1000000000u, 1000000001u, 1000000007u, 2400000000u,
					  4294967295u, 4294967296u, 1ull << 62, (1ull << 63) - 1, 1ull << 63,
					  (1ull << 63) + 1, UINT64_MAX - 1, UINT64_MAX };
	static const uint64_t vals[] = { 0, 1, 2, 999999999u, 1000000000u, 4294967295u, 4294967296u,
					 (1ull << 63) - 1, 1ull << 63, (1ull << 63) + 1, UINT64_MAX - 1, UINT64_MAX };
	uint64_t seed = (uint64_t)time(NULL), rng = seed | 1;
	print_message("ns extremes: seed %" PRIu64 "\n", seed);
	struct traceparser_state *st = new_parser();
	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		for (int with_ref = 0; with_ref < 2; with_ref++) {
			for (size_t a = 0; a < sizeof(vals) / sizeof(vals[0]) + 200; a++) {
				uint64_t ref_cycles, ref_ns;
				if (a < sizeof(vals) / sizeof(vals[0])) {
					ref_cycles = vals[a];
					ref_ns = vals[(a * 7 + r) % (sizeof(vals) / sizeof(vals[0]))];
				} else {
					rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
					ref_cycles = rng;
					rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
					ref_ns = rng >> (rng & 63);
				}
				/* the state as tp_header.c leaves it */
				traceparser_init(st);
				st->cycles_per_sec = rates[r];
				st->ns_mult = rates[r] > 1000000000u
						      ? (uint64_t)(((unsigned __int128)1000000000u << 64) / rates[r])
						      : 0;
				st->have_clock_ref = with_ref;
				st->clock_cycles = ref_cycles;
				st->clock_raw_ns = ref_ns;
				for (size_t b = 0; b < sizeof(vals) / sizeof(vals[0]) + 64; b++) {
					uint64_t clk;
					if (b < sizeof(vals) / sizeof(vals[0])) {
						clk = vals[b];
					} else {
						rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
						clk = b % 2 ? rng >> (rng & 63) : ref_cycles + (uint64_t)(int64_t)((int32_t)rng);
					}
					uint64_t want = ns_reference(rates[r], with_ref, ref_cycles, ref_ns, clk);
					uint64_t got = tk__tp_clk_to_ns(st, clk);
					if (got != want)
						fail_msg("seed %" PRIu64 ": cps %" PRIu64 " ref %d (%" PRIu64 " cycles, %" PRIu64
							 " ns): clk %" PRIu64 " gave %" PRIu64 ", not %" PRIu64,
							 seed, rates[r], with_ref, ref_cycles, ref_ns, clk, got, want);
				}
			}
		}
	}
	traceparser_destroy(&st);
}

/* ---- the batched hand-over (tp_batch.h) ------------------------------------------------------ */

/* What a callback sees of an event, with what the library's functions answer for it. */
struct bseen_ev {
	uint32_t h, t;
	uint32_t w0, w1;
	uint64_t clk, ns;
	int32_t pid, tid;
	int known;
	unsigned now_class, now_event, prev_class, prev_event;
	int prev_return;
	uint64_t slot;
	int explicit_; /* a combine event or one held for its owner: never in a run */
};

struct bseen_log {
	struct bseen_ev *ev;
	size_t n, cap;
	unsigned runs, run_slots;
	int deliver_all; /* the batch callback hands every slot back one by one */
	int stride;      /* else every stride-th slot */
	int zero;        /* the callbacks return 0 (what a run stands for) */
};

static int bseen_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct bseen_log *l = ud;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 4096;
		l->ev = realloc(l->ev, l->cap * sizeof(*l->ev));
		assert_non_null(l->ev);
	}
	struct bseen_ev *e = &l->ev[l->n++];
	memset(e, 0, sizeof(*e));
	const unsigned *conv = traceparser_get_info(st, _TRACEPARSER_INFO_ENDIAN_CONV, NULL);
	e->h = h;
	e->t = t;
	e->w0 = len > 0 ? (*conv ? __builtin_bswap32(buf[0]) : buf[0]) : 0;
	e->w1 = len > 1 ? (*conv ? __builtin_bswap32(buf[1]) : buf[1]) : 0;
	e->clk = tk_traceparser_clk(st);
	e->ns = tk_traceparser_ns(st);
	e->known = tk_traceparser_owner(st, &e->pid, &e->tid);
	e->now_class = *(unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_NOW_CALLBACK_CLASS, NULL);
	e->now_event = *(unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_NOW_CALLBACK_EVENT, NULL);
	e->prev_class = *(unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_CLASS, NULL);
	e->prev_event = *(unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_EVENT, NULL);
	e->prev_return = *(int *)traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_RETURN, NULL);
	e->slot = st->cur_slot;
	e->explicit_ = st->cur_clk_explicit;
	return l->zero ? 0 : (int)(h & 3); /* returns that differ, for PREV_CALLBACK_RETURN */
}

static int bseen_run(struct traceparser_state *st, void *ud, const uint32_t *slots, size_t n, uint64_t first_slot)
{
	struct bseen_log *l = ud;
	int conv = *(const unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_ENDIAN_CONV, NULL) != 0;
	l->runs++;
	l->run_slots += (unsigned)n;
	for (size_t i = 0; i < n; i++) {
		const uint32_t *s = slots + 4 * i;
		uint32_t h = conv ? __builtin_bswap32(s[0]) : s[0], t = conv ? __builtin_bswap32(s[1]) : s[1];
		int32_t pid, tid;
		int known = tk__tp_batch_owner(st, h, &pid, &tid);
		uint64_t clk = tk__tp_batch_clk(st, h, t);
		size_t before = l->n;
		if (l->deliver_all || (first_slot + i) % (uint64_t)l->stride == 0) {
			tk__tp_batch_deliver_one(st, s, first_slot + i);
			assert_int_equal(l->n, before + 1);
			/* what the run reads inline is what the library answers in the callback */
			assert_int_equal(l->ev[before].clk, clk);
			assert_int_equal(l->ev[before].ns, tk__tp_clk_to_ns(st, clk));
			assert_int_equal(l->ev[before].known, known);
			assert_int_equal(l->ev[before].pid, pid);
			assert_int_equal(l->ev[before].tid, tid);
		}
	}
	return 0;
}

/* A file with events before any TIME and owner, 6 CPUs interleaved slot by slot, TIME
 * events that move on a CPU's upper bits, combine events across runs, BUFFER events. */
static const char *batch_file(const char *name, int be, int owner_buffer, const char *clock, unsigned n_slots)
{
	struct tkt_buf b = { 0 };
	const char *path = tkt_path(name);
	char tmp[256];
	tkt_buf_str(&b, "TRACE_HEADER_BEGIN::TRACE_FILE_NAME::test.kevTRACE_VER_MAJOR::1TRACE_VER_MINOR::01");
	tkt_buf_str(&b, be ? "TRACE_BIG_ENDIAN::TRUE" : "TRACE_LITTLE_ENDIAN::TRUE");
	snprintf(tmp, sizeof(tmp), "TRACE_ENCODING::16 byte eventsTRACE_CYCLES_PER_SEC::%sTRACE_CPU_NUM::6", clock);
	tkt_buf_str(&b, tmp);
	if (owner_buffer)
		tkt_buf_str(&b, "TRACEKIT_OWNER::buffer");
	if (strcmp(clock, "1000000000") != 0)
		tkt_buf_str(&b, "TRACEKIT_CLOCK_CYCLES::30000000000TRACEKIT_CLOCK_RAW_NS::77777777777");
	tkt_buf_str(&b, "TRACE_SYSPAGE_LEN::0TRACE_HEADER_END::");
	uint32_t t = 0xffff0000u, msb[6] = { 0 };
	unsigned n = 0;
	for (unsigned i = 0; n < n_slots; i++) {
		unsigned cpu = i % 6;
		if (i == 500 || (i > 500 && i % 4099 == cpu)) {
			msb[cpu] = msb[cpu] ? msb[cpu] + 1 : 3 + cpu;
			tkt_kev_slot(&b, be, H(0, cpu, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), t, msb[cpu], 0), n++;
		}
		if (i % 1500 == 700) {
			if (owner_buffer)
				tkt_kev_slot(&b, be, H(0, cpu, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER), t, i, 64), n++;
			for (unsigned k = 0; owner_buffer && k < i % 5; k++) /* held until the owner */
				tkt_kev_slot(&b, be, H(0, cpu, _TRACE_CONTROL_C, 7), t += 1, k, 0), n++;
			tkt_kev_slot(&b, be, H(0, cpu, _TRACE_PR_TH_C, STATE_RUNNING), t += 1, 10 + cpu, i % 13), n++;
		}
		if (i % 777 == 5 || n % 16384 == 16383) {
			uint32_t h = H(0, cpu, _TRACE_USER_C, 30), tc = t += 2;
			tkt_kev_slot(&b, be, h | _TRACE_STRUCT_CB, tc, 1, 2), n++;
			tkt_kev_slot(&b, be, H(0, (cpu + 1) % 6, _TRACE_USER_C, 2), t += 1, i, 0), n++;
			tkt_kev_slot(&b, be, h | _TRACE_STRUCT_CC, tc, 3, 4), n++;
			tkt_kev_slot(&b, be, H(0, (cpu + 2) % 6, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER), t += 1, i, 0), n++;
			tkt_kev_slot(&b, be, h | _TRACE_STRUCT_CE, tc, 5, 0), n++;
		}
		if (i % 13 == 0)
			tkt_kev_slot(&b, be, H(0, cpu, _TRACE_KER_CALL_C, 4), t += 3, i, 0), n++; /* not batched */
		else
			tkt_kev_slot(&b, be, H(0, cpu, i % 3 ? _TRACE_USER_C : _TRACE_SYSTEM_C, i % 3 ? i % 5 : 0), t += 5, i, cpu),
				n++;
	}
	tkt_write_file(path, b.p, b.len);
	tkt_buf_free(&b);
	return path;
}

static void bseen_parse(const char *path, struct bseen_log *l, int batch, unsigned sort, int dump, int twice)
{
	struct traceparser_state *st = new_parser();
	for (unsigned cls = 0; cls < 8; cls++)
		assert_int_equal(tk_traceparser_cs_internal(st, l, bseen_cb, cls, cls == 0 ? 1 : 0, 1023), 0);
	if (batch) {
		assert_int_equal(tk__tp_batch(st, bseen_run, l, 6, 0, 1023), 0);
		assert_int_equal(tk__tp_batch(st, bseen_run, l, 5, 0, 0), 0);
		assert_int_equal(tk__tp_batch(st, bseen_run, l, 1, 0, 1023), 0); /* TIME, BUFFER left out */
		assert_int_equal(tk__tp_batch(st, bseen_run, l, 4, 0, 1023), 0); /* THRUNNING left out */
	}
	if (sort)
		assert_int_equal(traceparser_sort(st, sort), 0);
	FILE *devnull = NULL;
	if (dump) {
		devnull = fopen("/dev/null", "w");
		assert_int_equal(traceparser_debug(st, devnull, _TRACEPARSER_DEBUG_EVENTS), 0);
	}
	for (int k = 0; k <= twice; k++) {
		l->n = 0;
		assert_int_equal(traceparser(st, NULL, path), 0);
	}
	/* after the parse: the last event's (a run's last slot's) */
	if (l->n == l->cap) {
		l->cap = 2 * l->cap + 1;
		l->ev = realloc(l->ev, l->cap * sizeof(*l->ev));
		assert_non_null(l->ev);
	}
	struct bseen_ev *e = &l->ev[l->n++];
	memset(e, 0, sizeof(*e));
	e->h = 0xffffffffu;
	e->clk = tk_traceparser_clk(st);
	e->slot = st->cur_slot;
	e->now_class = *(unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_NOW_CALLBACK_CLASS, NULL);
	e->now_event = *(unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_NOW_CALLBACK_EVENT, NULL);
	e->prev_class = *(unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_CLASS, NULL);
	e->prev_event = *(unsigned *)traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_EVENT, NULL);
	e->prev_return = *(int *)traceparser_get_info(st, _TRACEPARSER_INFO_PREV_CALLBACK_RETURN, NULL);
	traceparser_destroy(&st);
	if (devnull)
		fclose(devnull);
}

/*
 * The runs of batched slots, each handed back with tk__tp_batch_deliver_one(), give the
 * callbacks what one event at a time gives (times, owners, the previous callback), in every
 * file layout, byte order, clock, sort and debug mode, and a second file on the same state.
 */
static void test_batch_same(void **state_)
{
	(void)state_;
	static const char *clocks[] = { "1000000000", "2400000000", "1000000000" };
	for (int v = 0; v < 6; v++) {
		/* one file large enough for the reader thread (more than 4 MiB), the rest smaller */
		const char *path = batch_file("batch.kev", v & 1, v >= 4, clocks[v % 3], v == 0 ? 340000 : 40000);
		for (int mode = 0; mode < 5; mode += mode == 0 ? 2 : 1) {
			unsigned sort = mode == 2 ? _TRACEPARSER_SORT : 0;
			int dump = mode == 3, twice = mode == 4;
			struct bseen_log ref = { 0 }, got = { 0 };
			got.deliver_all = 1;
			bseen_parse(path, &ref, 0, sort, dump, twice);
			bseen_parse(path, &got, 1, sort, dump, twice);
			if (mode == 0 || mode == 4)
				assert_true(got.runs > 1000);
			else
				assert_int_equal(got.runs, 0);
			assert_int_equal(ref.n, got.n);
			for (size_t i = 0; i < ref.n; i++)
				if (memcmp(&ref.ev[i], &got.ev[i], sizeof(ref.ev[i])) != 0)
					fail_msg("variant %d mode %d: event %zu (h 0x%x) differs: prev %u/%u/%d now %u/%u, "
						 "one by one %u/%u/%d", v, mode, i, ref.ev[i].h, got.ev[i].prev_class,
						 got.ev[i].prev_event, got.ev[i].prev_return, got.ev[i].now_class,
						 got.ev[i].now_event, ref.ev[i].prev_class, ref.ev[i].prev_event,
						 ref.ev[i].prev_return);
			free(ref.ev);
			free(got.ev);
		}
	}
}

/* seen_parse()'s batched events: USER, SYSTEM 0, CONTROL and PROCESS but TIME, BUFFER, THRUNNING */
static int bseen_batched(const struct bseen_ev *e)
{
	unsigned cls = TK_KEV_CLASS(e->h), code = TK_KEV_CODE(e->h);
	if (e->explicit_)
		return 0;
	return cls == 6 || (cls == 5 && code == 0) || (cls == 1 && code != _TRACE_CONTROL_TIME && code != _TRACE_CONTROL_BUFFER) ||
	       (cls == 4 && code != STATE_RUNNING);
}

/* Only some slots of the runs handed back (as the exporters do): those callbacks still see
 * the previous slot as the previous callback (its return taken as 0). */
static void test_batch_some(void **state_)
{
	(void)state_;
	for (int v = 0; v < 2; v++) {
		const char *path = batch_file("batch3.kev", v, v, "2400000000", 60000);
		struct bseen_log ref = { 0 }, got = { 0 };
		ref.zero = got.zero = 1;
		got.stride = 3;
		bseen_parse(path, &ref, 0, 0, 0, 0);
		bseen_parse(path, &got, 1, 0, 0, 0);
		assert_true(got.runs > 1000);
		size_t j = 0;
		for (size_t i = 0; i < ref.n; i++) {
			if (bseen_batched(&ref.ev[i]) && ref.ev[i].slot % 3 != 0)
				continue;
			assert_true(j < got.n);
			if (memcmp(&ref.ev[i], &got.ev[j], sizeof(ref.ev[i])) != 0)
				fail_msg("variant %d: event %zu (h 0x%x slot %" PRIu64 ") differs: prev %u/%u/%d, "
					 "one by one %u/%u/%d", v, i, ref.ev[i].h, ref.ev[i].slot, got.ev[j].prev_class,
					 got.ev[j].prev_event, got.ev[j].prev_return, ref.ev[i].prev_class,
					 ref.ev[i].prev_event, ref.ev[i].prev_return);
			j++;
		}
		assert_int_equal(j, got.n);
		free(ref.ev);
		free(got.ev);
	}
}

/* Taking some events out of the runs again (a NULL callback for part of a range) leaves
 * the others in runs, to the callback they were given. */
static void test_batch_detach_part(void **state_)
{
	(void)state_;
	const char *path = batch_file("batch2.kev", 0, 0, "1000000000", 5000);
	struct bseen_log l = { 0 };
	l.stride = 1;
	struct traceparser_state *st = new_parser();
	for (unsigned cls = 0; cls < 8; cls++)
		assert_int_equal(tk_traceparser_cs_internal(st, &l, bseen_cb, cls, cls == 0 ? 1 : 0, 1023), 0);
	assert_int_equal(tk__tp_batch(st, bseen_run, &l, 6, 0, 1023), 0);
	assert_int_equal(tk__tp_batch(st, NULL, NULL, 6, 1, 1), 0);
	assert_int_equal(traceparser(st, NULL, path), 0);
	assert_true(l.runs > 0);
	traceparser_destroy(&st);
	free(l.ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_destroy),
		cmocka_unit_test(test_cs_errors),
		cmocka_unit_test(test_class_mapping),
		cmocka_unit_test(test_user_data_and_null_callback),
		cmocka_unit_test(test_header_info),
		cmocka_unit_test(test_combine_interlaced),
		cmocka_unit_test(test_combine_unbalanced),
		cmocka_unit_test(test_byte_orders),
		cmocka_unit_test(test_time_rollover),
		cmocka_unit_test(test_combine_across_time),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_sort_events_before_time),
		cmocka_unit_test(test_stdin_pipe),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_truncation_everywhere),
		cmocka_unit_test(test_random_bytes),
		cmocka_unit_test(test_one_event),
		cmocka_unit_test(test_debug_output),
		cmocka_unit_test(test_event_position),
		cmocka_unit_test(test_info_pointers_independent),
		cmocka_unit_test(test_clk_initial),
		cmocka_unit_test(test_large_files),
		cmocka_unit_test(test_owner_tracekit_buffers),
		cmocka_unit_test(test_owner_qnx_cpus),
		cmocka_unit_test(test_owner_outside_callback),
		cmocka_unit_test(test_owner_hook_callbacks),
		cmocka_unit_test(test_time_line),
		cmocka_unit_test(test_combine_never_finished_fast),
		cmocka_unit_test(test_live_pipe_first_event),
		cmocka_unit_test(test_sort_bounded_same_order),
		cmocka_unit_test(test_sort_spill_tmpdir),
		cmocka_unit_test(test_sort_bounded_memory),
		cmocka_unit_test(test_owner_end_to_end),
		cmocka_unit_test(test_ns_conversion),
		cmocka_unit_test(test_ns_extremes),
		cmocka_unit_test(test_rate_twenty_digits),
		cmocka_unit_test(test_batch_same),
		cmocka_unit_test(test_batch_detach_part),
		cmocka_unit_test(test_batch_some),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
