/* SPDX-License-Identifier: MIT */
/*
 * Writes the deterministic sample traces the golden tests print:
 *   usr_event_simple, five_events, ker_calls_all, ker_calls_14: the events of the SAT
 *     guide's sample result files, with the header values shown there;
 *   all_classes: one event of every format traceprinter knows, fast and wide;
 *   smp: two CPUs whose events are out of time order in the file, across a rollover;
 *   truncated: a file that ends inside an event;
 *   incomplete: a file that ends inside a combine event, between its slots;
 *   csv_odd, csv_bad: VTune CSV data (user events 1000-1005, docs/vtune-csv.md) that tracecsv
 *     export must still write so that its import reads it back (names that are not UTF-8,
 *     NaN and infinite counter values), and malformed such events among valid ones.
 * Usage: kev_samples NAME OUTPUT [--be]
 * --be writes the same events big-endian: traceprinter prints both files alike
 * (tests/kev_byte_orders.sh checks it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/kev.h"

#define W(...) ((const uint32_t[]){ __VA_ARGS__ }), (sizeof((const uint32_t[]){ __VA_ARGS__ }) / 4)
#define NOW NULL, 0

static tk_kev_writer *g_w;
static int g_be; /* the file is big-endian */

/*
 * Payload words are numbers: the writer stores them in the file's byte order. Message and
 * string bytes and 64-bit values are memory, not 32-bit numbers, so the words that carry
 * them depend on the file's byte order; these helpers give the words that put the same
 * bytes (or the same 64-bit value) into the file in either order.
 */
/* The word whose bytes in the file are those of v stored little-endian ("Hell" = 0x6c6c6548). */
static uint32_t mem_word(uint32_t v)
{
	return g_be ? __builtin_bswap32(v) : v;
}

/* The word holding 4 bytes of text (a NUL may end it early; the rest is then 0). */
static uint32_t text_word(const char *s)
{
	uint32_t v = 0;
	unsigned i;

	for (i = 0; i < 4 && s[i] != '\0'; i++)
		v |= (uint32_t)(unsigned char)s[i] << (8 * i);
	return mem_word(v);
}

/* Word i (0, 1) of a 64-bit value stored in the file's byte order. */
static uint32_t half64(uint64_t v, unsigned i)
{
	return (uint32_t)(v >> ((g_be ? 1 - i : i) * 32));
}
#define U64(v) half64((v), 0), half64((v), 1)

static void fail(const char *what, int rc)
{
	fprintf(stderr, "kev_samples: %s: %s (%s)\n", what, tk_strerror(rc), tk_kev_writer_errmsg(g_w));
	exit(1);
}

static void ev(unsigned cpu, unsigned cls, unsigned code, uint32_t t, const uint32_t *w, size_t n)
{
	int rc = tk_kev_write_event(g_w, cpu, cls, code, t, w, n);
	if (rc != TK_OK)
		fail("write", rc);
}

static void evs(unsigned cpu, unsigned cls, unsigned code, uint32_t t, const uint32_t *w, size_t n, const char *s)
{
	int rc = tk_kev_write_event_str(g_w, cpu, cls, code, t, w, n, s);
	if (rc != TK_OK)
		fail("write", rc);
}

static void time_ev(unsigned cpu, uint32_t t, uint32_t msb, uint32_t lsb)
{
	traceevent_t e = { _TRACE_MAKE_CODE(cpu, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), { t, msb, lsb } };
	int rc = tk_kev_write_raw(g_w, &e, 1);
	if (rc != TK_OK)
		fail("write", rc);
}

static time_t utc(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm = { 0 };
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	return timegm(&tm);
}

#define TH(state) _TRACE_PR_TH_C, (state)
#define KC(n) _TRACE_KER_CALL_C, (n)
#define KX(n) _TRACE_KER_CALL_C, (128 + (n))
#define USR(n) _TRACE_USER_C, (n)

static void usr_event_simple(void)
{
	const unsigned c = 1;
	time_ev(c, 0x74a43dfa, 0x427, 0x74a43cb6);
	evs(c, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, 0x74a4d699, W(10, 28686),
	    "/cvs/utills/t/tracprinter/examples/usr_event_simple/nto/x86/o/examples-usr_event_simple");
	ev(c, TH(_TRACE_THREAD_CREATE), 0x74a4dcb2, W(28686, 1));
	ev(c, TH(STATE_RUNNING), 0x74a4ddb7, W(28686, 1));
	ev(c, KX(__KER_TRACE_EVENT), 0x74a4e0a8, W(0, 0));
	ev(c, KC(__KER_TRACE_EVENT), 0x74a4e3a2, W(0x4000001e, 0x6f));
	ev(c, USR(111), 0x74a4e4f1, W(1, 11));
	ev(c, KX(__KER_TRACE_EVENT), 0x74a4e650, W(0, 0));
	ev(c, KC(__KER_TRACE_EVENT), 0x74a4e8e5, W(0x4000001e, 0xde));
	ev(c, USR(222), 0x74a4e9dc, W(2, 22));
	ev(c, KX(__KER_TRACE_EVENT), 0x74a4eb51, W(0, 0));
	ev(c, KC(__KER_TRACE_EVENT), 0x74a4ee23, W(0x4000001e, 0x14d));
	ev(c, USR(333), 0x74a4ef07, W(3, 33));
	ev(c, KX(__KER_TRACE_EVENT), 0x74a4f07c, W(0, 0));
	ev(c, KC(__KER_TRACE_EVENT), 0x74a4f300, W(0x4000001e, 0x1bc));
	ev(c, USR(444), 0x74a4f41e, W(4, 44));
	ev(c, KX(__KER_TRACE_EVENT), 0x74a4f58a, W(0, 0));
	ev(c, KC(__KER_TRACE_EVENT), 0x74a4f826, W(0x30000020, 0x22b));
	evs(c, USR(555), 0x74a4fa4f, NOW, "Hello world");
	ev(c, KX(__KER_TRACE_EVENT), 0x74a4fc63, W(0, 0));
}

static void five_events(void)
{
	static const uint32_t thcreate[] = { 0x3abf50b1, 0x3abf5208, 0x3abf5326, 0x3abf546a,
					     0x3abf5554, 0x3abf5654, 0x3abf57d8, 0x3abf58d8 };
	unsigned i;

	evs(0, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, 0x3abf47cf, W(0, 1),
	    "/home/mmacies/instrumentation/x86/procnto-instr");
	for (i = 0; i < 8; i++)
		ev(0, TH(_TRACE_THREAD_CREATE), thcreate[i], W(1, i + 1));
	ev(0, TH(STATE_RUNNING), 0x3abfd7da, W(184335, 1));
	ev(0, TH(STATE_RUNNING), 0x3abff400, W(7, 11));
	ev(0, TH(STATE_RUNNING), 0x3ac02c55, W(1, 5));
	ev(0, TH(_TRACE_THREAD_CREATE), 0x3ac051d8, W(184335, 1));
	ev(0, TH(STATE_RUNNING), 0x3ac0535b, W(184335, 1));
	ev(0, TH(STATE_RUNNING), 0x3ac0a687, W(4, 1));
	ev(0, KX(__KER_MSG_READV), 0x3ac0e597, W(47, text_word("\nPro"), text_word("cess"), text_word(" 184")));
	ev(0, _TRACE_INT_C, _TRACE_INT_ENTRY, 0x3ac1ad22, W(0, 1));
	ev(0, _TRACE_INT_C, _TRACE_INT_ENTRY, 0x3ac3b3fc, W(0, 1));
	ev(0, _TRACE_INT_C, _TRACE_INT_ENTRY, 0x3ac5baba, W(0, 1));
	ev(0, TH(STATE_RUNNING), 0x3ac5bf32, W(1, 5));
	ev(0, TH(STATE_RUNNING), 0x3ac5c9f8, W(4, 1));
	ev(0, TH(STATE_RUNNING), 0x3b8a6de3, W(7, 11));
	ev(0, _TRACE_INT_C, _TRACE_INT_ENTRY, 0x3b8a7d4e, W(0, 1));
	ev(0, TH(STATE_RUNNING), 0x3b8a984c, W(7, 8));
}

static void ker_calls_all(void)
{
	static const uint32_t boot[][3] = {
		{ 0x35b45a23, _TRACE_THREAD_CREATE, 1 }, { 0x35b45b6e, STATE_READY, 1 },
		{ 0x35b45c86, _TRACE_THREAD_CREATE, 2 }, { 0x35b45d54, STATE_RECEIVE, 2 },
		{ 0x35b45e8c, _TRACE_THREAD_CREATE, 3 }, { 0x35b45f50, STATE_RECEIVE, 3 },
		{ 0x35b4608e, _TRACE_THREAD_CREATE, 4 }, { 0x35b4614c, STATE_RECEIVE, 4 },
		{ 0x35b4622e, _TRACE_THREAD_CREATE, 5 }, { 0x35b462ec, STATE_RECEIVE, 5 },
		{ 0x35b463e6, _TRACE_THREAD_CREATE, 6 }, { 0x35b464a4, STATE_RECEIVE, 6 },
		{ 0x35b4663a, _TRACE_THREAD_CREATE, 7 }, { 0x35b466f8, STATE_RECEIVE, 7 },
		{ 0x35b467f2, _TRACE_THREAD_CREATE, 8 }, { 0x35b468b0, STATE_RECEIVE, 8 },
	};
	unsigned i;

	for (i = 0; i < sizeof(boot) / sizeof(boot[0]); i++)
		ev(0, TH(boot[i][1]), boot[i][0], W(1, boot[i][2]));
	ev(0, TH(_TRACE_THREAD_CREATE), 0x35b46b20, W(2, 1));
	ev(0, TH(STATE_READY), 0x35bbdee9, W(4, 1));
	ev(0, TH(STATE_RUNNING), 0x35bbe032, W(1, 5));
	ev(0, KC(__KER_MSG_RECEIVEV), 0x35bbe97a, W(1, 2080));
	ev(0, TH(STATE_RECEIVE), 0x35bbec68, W(1, 5));
	ev(0, TH(STATE_RUNNING), 0x35bbee10, W(4, 1));
	ev(0, TH(STATE_READY), 0x35c2f825, W(208911, 1));
	ev(0, KC(__KER_MSG_RECEIVEV), 0x35c2ff68, W(1, 2077));
	ev(0, TH(STATE_RECEIVE), 0x35c30190, W(4, 1));
	ev(0, TH(STATE_RUNNING), 0x35c302c6, W(208911, 1));
	ev(0, TH(STATE_REPLY), 0x35c32979, W(208911, 1));
	ev(0, TH(STATE_RUNNING), 0x35c32c6f, W(4, 1));
	ev(0, KX(__KER_MSG_RECEIVEV), 0x35c33487,
	   W(0x12, mem_word(0x00040116), mem_word(0x2d), 0, 0, 0, 208911, 1, 1, 1073741842, 0, 4, 4, 2147483647,
	     15, 0, 0, 0));
	ev(0, TH(STATE_READY), 0x35c35919, W(208911, 1));
	ev(0, KC(__KER_MSG_RECEIVEV), 0x35c36032, W(1, 2077));
	ev(0, TH(STATE_RUNNING), 0x35da1b25, W(7, 5));
	ev(0, TH(STATE_READY), 0x35da1c4e, W(1, 1));
}

static void ker_calls_14(void)
{
	ev(0, TH(_TRACE_THREAD_CREATE), 0x4c091677, W(1, 1));
	ev(0, TH(STATE_READY), 0x4c0917ec, W(1, 1));
	ev(0, TH(STATE_DEAD), 0x4c098b66, W(12302, 1));
	ev(0, TH(STATE_READY), 0x4c099ed2, W(1, 1));
	ev(0, _TRACE_KER_CALL_C, 256 + __KER_MSG_RECEIVEV, 0x4c09a422, W(0, 0));
	ev(0, TH(_TRACE_THREAD_CREATE), 0x4c09c872, W(12302, 1));
	ev(0, TH(STATE_WAITTHREAD), 0x4c09c97c, W(1, 2));
	ev(0, TH(STATE_RUNNING), 0x4c09cabf, W(12302, 1));
	ev(0, TH(STATE_READY), 0x4c09d17c, W(1, 2));
	ev(0, TH(STATE_REPLY), 0x4c0a13db, W(12302, 1));
	ev(0, TH(STATE_READY), 0x4c0a1618, W(4, 1));
	ev(0, TH(STATE_RUNNING), 0x4c0a1786, W(4, 1));
	ev(0, KX(__KER_MSG_RECEIVEV), 0x4c0a205f,
	   W(0x11, mem_word(0x00100102), mem_word(0x2c), 0, 0, 0, 12302, 1, 1, 1073741841, 2, 60, 60, 2147483647,
	     15, 0, 0, 0));
	ev(0, TH(STATE_READY), 0x4c0b89e9, W(4, 1));
	ev(0, TH(STATE_RUNNING), 0x4c0b8b2e, W(1, 2));
	ev(0, TH(STATE_RUNNING), 0x5a0dc58d, W(7, 6));
	ev(0, TH(STATE_READY), 0x5a0dc6d0, W(1, 1));
	ev(0, KX(__KER_MSG_RECEIVEV), 0x5a0dcb88,
	   W(0, 0, 0, mem_word(0x30), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	ev(0, KC(__KER_MSG_RECEIVEV), 0x5a0dd3f8, W(9, 16));
	ev(0, TH(STATE_RECEIVE), 0x5a0dd58a, W(7, 6));
	ev(0, TH(STATE_RUNNING), 0x5a0dd6f6, W(1, 1));
}

/* One event of every format, fast and wide, on four CPUs. */
static void all_classes(void)
{
	time_ev(0, 0x1000, 0x0b, 0x1000);
	ev(0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, 0x1001, W(0x2805, 715));
	ev(0, _TRACE_CONTROL_C, _TRACE_CONTROL_DROPPED, 0x1002, W(42, 0));
	ev(1, TH(STATE_MUTEX), 0x1010, W(100, 2, 10, 2));
	ev(1, TH(STATE_NET_REPLY), 0x1011, W(100, 3, 10, 2, 1, 0x20));
	ev(1, TH(_TRACE_THREAD_DESTROY), 0x1012, W(100, 3));
	ev(1, TH(_TRACE_MAX_TH_STATE_NUM + STATE_SEND), 0x1013, W(100, 4));
	ev(1, TH(_TRACE_PR_TH_CREATE_VT), 0x1014, W(100, 4));
	ev(1, TH(_TRACE_PR_TH_DESTROY_VT), 0x1015, W(100, 4));
	ev(1, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P, 0x1016, W(1, 100));
	ev(1, _TRACE_PR_TH_C, _TRACE_PR_TH_DESTROY_P, 0x1017, W(1, 100));
	evs(1, _TRACE_PR_TH_C, _TRACE_PR_TH_DESTROY_P_NAME, 0x1018, W(1, 100), "/usr/bin/worker");
	evs(1, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, 0x1019, W(100, 2), "io-thread");
	ev(2, _TRACE_INT_C, _TRACE_INT_EXIT, 0x1020, W(0x51, 1));
	ev(2, _TRACE_INT_C, _TRACE_INT_HANDLER_ENTRY, 0x1021, W(100, 0x51, 0x8048120, 0x7ffe0000));
	ev(2, _TRACE_INT_C, _TRACE_INT_HANDLER_EXIT, 0x1022, W(0x51, 1, 14, 0, 0));
	ev(2, KC(__KER_MSG_SENDV), 0x1030,
	   W(0x40000003, 0x12, 4711, text_word("Hell"), text_word("o wo"), text_word("rld"), 1, 1));
	ev(2, KX(__KER_MSG_SENDV), 0x1031, W(0, text_word("OK\n"), 0, 0));
	ev(2, KX(__KER_MSG_ERROR), 0x1032, W(0xffffffffu, 3));
	ev(2, KC(__KER_SYNC_MUTEX_LOCK), 0x1033, W(0x8049f00, 0x80000002));
	ev(2, KC(__KER_THREAD_CREATE), 0x1034,
	   W(100, 0x8048500, 0, 0, 65536, 0, 0x8048600, 2, 10, 10, 0, 0, 0, 0, 0, 0, 0, 0, 4096, 0, 0, 0));
	ev(2, KX(__KER_THREAD_CREATE), 0x1035, W(5, 0));
	ev(2, KC(__KER_CLOCK_TIME), 0x1036, W(0, 1700000000, 500));
	ev(2, KX(__KER_TIMER_TIMEOUT), 0x1037, W(0, 12, 3456));
	ev(2, _TRACE_KER_CALL_C, 256 + __KER_SCHED_YIELD, 0x1038, W(0, 0));
	ev(3, USR(7), 0x1040, W(1, 2, 3));
	evs(3, USR(8), 0x1041, NOW, "multi-slot user string of forty characters");
	ev(3, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_MUNMAP, 0x1042, W(100, U64(0x40001000), U64(0x2000)));
	ev(3, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT, 0x1043, W(0x8048700, 0x8048520));
	evs(3, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_SLOG, 0x1044, W(12, 2), "disk full on /dev/hd0");
	evs(3, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_PATHMGR, 0x1045, W(100, 1), "/etc/passwd");
	ev(3, _TRACE_COMM_C, _NTO_TRACE_COMM_RPULSE, 0x1050, W(0x40000001, 4711));
	ev(3, _TRACE_COMM_C, _NTO_TRACE_COMM_SIGNAL, 0x1051, W(11, 1, 0, 0, 0, 0, 0, 0, 0));
	ev(3, _TRACE_COMM_C, 60, 0x1052, W(1, 2));
	ev(3, 9u << 10, 2, 0x1053, W(5, 6));
}

/* Two CPUs, interleaved out of order, with an LSB rollover: for --sort and --time. */
/* VTune CSV data: word 0 of an interval or counter event (flags | name number << 4) */
#define CSV_W0(flags, name) ((flags) | (uint32_t)(name) << 4)
#define CSV_VALUE(bits) (uint32_t)(bits), (uint32_t)((uint64_t)(bits) >> 32) /* low, high: numbers */

static uint64_t double_bits(double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof(b));
	return b;
}

/* Names that are not UTF-8 (Latin-1 bytes), a Latin-1 name equal to a UTF-8 one once read as
 * Latin-1, NaN and infinite counter samples (a counter with nothing else). */
static void csv_odd(void)
{
	const double nan = __builtin_nan(""), inf = __builtin_inf();
	evs(0, USR(1005), 1, W(0), "caf\xe9 \xab" "cr\xe8me\xbb"); /* "café «crème»" in Latin-1 */
	ev(0, USR(1000), 2, W(CSV_W0(3, 0), 7, 8, 1));
	evs(0, USR(1005), 3, W(1), "load");
	ev(0, USR(1004), 4, W(CSV_W0(4 | 8, 1), 0, 0, CSV_VALUE(double_bits(2.5))));
	ev(0, USR(1004), 5, W(CSV_W0(4 | 8, 1), 0, 0, CSV_VALUE(double_bits(nan))));
	ev(0, USR(1004), 6, W(CSV_W0(4 | 8, 1), 0, 0, CSV_VALUE(double_bits(inf))));
	ev(0, USR(1004), 7, W(CSV_W0(4 | 8, 1), 0, 0, CSV_VALUE(double_bits(-inf))));
	evs(0, USR(1005), 8, W(2), "only NaN");
	ev(0, USR(1004), 9, W(CSV_W0(4 | 8, 2), 0, 0, CSV_VALUE(double_bits(-nan))));
	evs(0, USR(1005), 10, W(3), "\xe9t\xe9"); /* Latin-1 */
	evs(0, USR(1005), 10, W(4), "\xc3\xa9t\xc3\xa9"); /* the same text in UTF-8 */
	ev(0, USR(1004), 11, W(CSV_W0(1, 3), 7, 0, CSV_VALUE(7)));
	ev(0, USR(1004), 12, W(CSV_W0(1, 4), 7, 0, CSV_VALUE(-8)));
	ev(0, USR(1004), 13, W(CSV_W0(4 | 8, 1), 0, 0, CSV_VALUE(double_bits(3.25))));
	ev(0, USR(1001), 14, W(CSV_W0(3, 0), 1));
}

/* Valid intervals and counters with malformed events between them: an empty name, a name
 * number above 2^28, events too short, one naming a number never defined. */
static void csv_bad(void)
{
	evs(0, USR(1005), 1, W(0), "good");
	ev(0, USR(1000), 2, W(CSV_W0(3, 0), 7, 8, 1));
	evs(0, USR(1005), 3, W(1), "");
	evs(0, USR(1005), 4, W(1u << 28), "far");
	ev(0, USR(1004), 5, W(CSV_W0(0, 0), 0, 0));
	ev(0, USR(1000), 6, W(CSV_W0(3, 9), 7, 8, 2));
	ev(0, USR(1000), 7, W(CSV_W0(3, 0), 7)); /* a begin of 2 words (4 needed) */
	ev(0, USR(1001), 8, W(CSV_W0(3, 0), 1));
	evs(0, USR(1005), 9, W(1), "queue");
	ev(0, USR(1004), 10, W(CSV_W0(0, 1), 0, 0, CSV_VALUE(42)));
	ev(0, USR(1002), 11, W(CSV_W0(0, 0), 0, 0, 3));
	ev(0, USR(1003), 12, W(CSV_W0(0, 0), 3));
}

static int write_smp(const char *path, const tk_kev_header *hdr)
{
	const uint64_t base = 0x2fffff000ull;
	int rc = tk_kev_writer_open(&g_w, path, hdr, 0); /* automatic TIME events */
	if (rc != TK_OK)
		return rc;
	tk_kev_write_event(g_w, 0, USR(1), base + 0x000, W(1, 0));
	tk_kev_write_event(g_w, 1, USR(2), base + 0x900, W(2, 0));
	tk_kev_write_event(g_w, 0, USR(3), base + 0x400, W(3, 0));
	tk_kev_write_event(g_w, 1, USR(4), base + 0x1800, W(4, 0)); /* past the rollover */
	tk_kev_write_event(g_w, 0, USR(5), base + 0x1000, W(5, 0)); /* exactly at it */
	tk_kev_write_event(g_w, 0, USR(6), base + 0x1700, W(6, 7, 8));
	tk_kev_write_event(g_w, 1, USR(7), base + 0x0800, W(7, 0));
	return tk_kev_writer_close(g_w);
}

int main(int argc, char **argv)
{
	static unsigned char syspage[4096];
	tk_kev_header hdr = { 0 };
	const char *name, *path;
	size_t syspage_len;
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: kev_samples NAME OUTPUT [--be]\n");
		return 2;
	}
	name = argv[1];
	path = argv[2];
	setenv("TZ", "UTC", 1);
	tzset();
	g_be = argc > 3 && strcmp(argv[3], "--be") == 0;
	hdr.big_endian = g_be;
	hdr.file_name = "/dev/shmem/tracebuffer";
	hdr.sysname = "QNX";
	hdr.nodename = "localhost";
	hdr.machine = "x86pc";
	hdr.ver_major = "1";
	hdr.ver_minor = "01";
	/* the header values of the guide's sample result files */
	hdr.date = utc(2001, 8, 17, 9, 15, 51);
	hdr.boot_date = utc(2001, 8, 17, 9, 2, 16);
	hdr.cycles_per_sec = 132980400;
	hdr.cpu_num = 1;
	hdr.sys_release = "6.1.0";
	hdr.sys_version = "2001/08/15-08:15:15";
	syspage_len = 2248;
	if (strcmp(name, "usr_event_simple") == 0 || strcmp(name, "truncated") == 0 ||
	    strcmp(name, "incomplete") == 0) {
		hdr.date = utc(1988, 4, 25, 5, 37, 55);
		hdr.boot_date = utc(1988, 4, 25, 2, 28, 6);
		hdr.ver_minor = "02";
		hdr.cycles_per_sec = 400013900;
		hdr.cpu_num = 2;
		hdr.sys_release = "6.2.1";
		hdr.sys_version = "2002/12/09-10:13:08est";
		syspage_len = 2400;
	} else if (strcmp(name, "ker_calls_all") == 0) {
		hdr.date = utc(2001, 8, 17, 9, 17, 0);
	} else if (strcmp(name, "ker_calls_14") == 0) {
		hdr.date = utc(2001, 8, 22, 9, 52, 49);
		hdr.boot_date = utc(2001, 8, 21, 14, 3, 25);
		hdr.cycles_per_sec = 132961600;
		hdr.sys_version = "2001/08/21-14:05:41";
	} else if (strcmp(name, "all_classes") == 0 || strcmp(name, "smp") == 0) {
		hdr.cpu_num = 4;
		syspage_len = 0; /* tracekit's own syspage */
	} else if (strncmp(name, "csv_", 4) == 0) {
		/* a trace of VTune CSV data on the QPC clock, as tracecsv import writes one */
		static const tk_kev_attr csv_clock = { "TRACEKIT_CSV_CLOCK", "QPC" };
		hdr.attrs = &csv_clock;
		hdr.n_attrs = 1;
		hdr.cycles_per_sec = 10000000;
		hdr.nodename = "octagon53";
		syspage_len = 0;
	}
	if (syspage_len > 0) {
		memset(syspage, 0, sizeof(syspage));
		tk_kev_syspage_build(syspage, syspage_len, hdr.cpu_num, hdr.cycles_per_sec, (uint32_t)hdr.boot_date,
				     hdr.big_endian);
		hdr.syspage = syspage;
		hdr.syspage_len = syspage_len;
	}
	if (strcmp(name, "smp") == 0) {
		rc = write_smp(path, &hdr);
		if (rc != TK_OK)
			fail(path, rc);
		return 0;
	}
	rc = tk_kev_writer_open(&g_w, path, &hdr, TK_KEV_NO_AUTO_TIME);
	if (rc != TK_OK)
		fail(path, rc);
	if (strcmp(name, "usr_event_simple") == 0)
		usr_event_simple();
	else if (strcmp(name, "five_events") == 0)
		five_events();
	else if (strcmp(name, "ker_calls_all") == 0)
		ker_calls_all();
	else if (strcmp(name, "ker_calls_14") == 0)
		ker_calls_14();
	else if (strcmp(name, "all_classes") == 0)
		all_classes();
	else if (strcmp(name, "truncated") == 0)
		usr_event_simple();
	else if (strcmp(name, "incomplete") == 0) {
		usr_event_simple();
		evs(1, _TRACE_USER_C, 31, 0x74a5f000, NOW, "a user string long enough for several slots");
	}
	else if (strcmp(name, "csv_odd") == 0)
		csv_odd();
	else if (strcmp(name, "csv_bad") == 0)
		csv_bad();
	else {
		fprintf(stderr, "kev_samples: unknown sample '%s'\n", name);
		tk_kev_writer_abort(g_w);
		return 2;
	}
	rc = tk_kev_writer_close(g_w);
	if (rc != TK_OK)
		fail(path, rc);
	if (strcmp(name, "truncated") == 0 || strcmp(name, "incomplete") == 0) {
		/* cut the last event in half (truncated), or the combine event's last slot */
		const long cut = strcmp(name, "truncated") == 0 ? 8 : 16;
		FILE *f = fopen(path, "r+b");
		long len;
		if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < cut ||
		    ftruncate(fileno(f), len - cut) != 0) {
			fprintf(stderr, "kev_samples: cannot truncate %s\n", path);
			return 1;
		}
		fclose(f);
	}
	return 0;
}
