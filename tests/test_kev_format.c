/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the event formatter (kev_format.c): one exact line per class and event
 * shape, fast and wide, both byte orders, the -n layout, time columns and strict mode.
 */
#include "tk_test.h"
#include "tracekit/kev.h"

#define H(flag, cpu, cls, code) (_TRACE_MAKE_CODE((cpu), (flag), (cls), (code)))
#define TKT_HOST_BE (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

static char g_out[8192];

static const char *fmt_ex(unsigned flags, unsigned h, unsigned t, const uint32_t *w, unsigned len, int swap)
{
	uint32_t data[64];
	tk_kev_event ev;
	unsigned i;
	size_t n;

	for (i = 0; i < len; i++)
		data[i] = swap ? __builtin_bswap32(w[i]) : w[i];
	ev.header = h;
	ev.time = t;
	ev.data = data;
	ev.len = len;
	ev.swap = swap;
	ev.clk = 0x0000000412345678ull;
	ev.ns = 3123456789ull;
	n = tk_kev_format_event(g_out, sizeof(g_out), flags, &ev);
	assert_int_equal(n, strlen(g_out));
	return g_out;
}

static const char *fmt(unsigned h, unsigned t, const uint32_t *w, unsigned len)
{
	return fmt_ex(0, h, t, w, len, 0);
}

static void test_thread(void **state)
{
	uint32_t w[6] = { 28686, 1, 10, 2, 3, 0x44 };

	(void)state;
	assert_string_equal(fmt(H(0, 1, _TRACE_PR_TH_C, STATE_RUNNING), 0x74a4ddb7, w, 2),
			    "t:0x74a4ddb7 CPU:01 THREAD  :THRUNNING     pid:28686 tid:1 \n");
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 0, _TRACE_PR_TH_C, STATE_READY), 5, w, 4),
			    "t:0x00000005 CPU:00 THREAD  :THREADY       pid:28686 tid:1 priority:10 policy:2\n");
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 0, _TRACE_PR_TH_C, STATE_SIGWAITINFO), 5, w, 6),
			    "t:0x00000005 CPU:00 THREAD  :THSIGWAITINFO pid:28686 tid:1 priority:10 policy:2 "
			    "partition:3 sched_flags:0x00000044\n");
	assert_string_equal(fmt(H(0, 0, _TRACE_PR_TH_C, _TRACE_THREAD_CREATE), 0x3abf50b1, w, 2),
			    "t:0x3abf50b1 CPU:00 THREAD  :THCREATE      pid:28686 tid:1\n");
	assert_string_equal(fmt(H(0, 0, _TRACE_PR_TH_C, _TRACE_THREAD_DESTROY), 1, w, 2),
			    "t:0x00000001 CPU:00 THREAD  :THDESTROY     pid:28686 tid:1\n");
	assert_string_equal(fmt(H(0, 2, _TRACE_PR_TH_C, _TRACE_MAX_TH_STATE_NUM + STATE_SEND), 1, w, 2),
			    "t:0x00000001 CPU:02 VTHREAD :THSEND        pid:28686 tid:1\n");
	assert_string_equal(fmt(H(0, 2, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_VT), 1, w, 2),
			    "t:0x00000001 CPU:02 VTHREAD :VTHCREATE     pid:28686 tid:1\n");
	/* a state QNX 6.4 does not know prints generically */
	assert_string_equal(fmt(H(0, 0, _TRACE_PR_TH_C, 22), 1, w, 2),
			    "t:0x00000001 CPU:00 PR_TH   :EVENT:22, d0:0x0000700e d1:0x00000001\n");
}

static void test_process(void **state)
{
	uint32_t w[8] = { 10, 28686 };

	(void)state;
	memcpy(&w[2], "/bin/sh\0\0\0\0\0", 12);
	assert_string_equal(fmt(H(0, 1, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P), 1, w, 2),
			    "t:0x00000001 CPU:01 PROCESS :PROCCREATE    ppid:10 pid:28686\n");
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 1, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME), 1, w, 4),
			    "t:0x00000001 CPU:01 PROCESS :PROCCREATE_NAME\n"
			    "                      ppid:10\n"
			    "                       pid:28686\n"
			    "                      name:/bin/sh\n");
	assert_string_equal(fmt_ex(TK_KEV_PRINT_NO_NEWLINES,
				   H(_TRACE_STRUCT_CB, 1, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T), 1, w, 4, 0),
			    "t:0x00000001 CPU:01 PROCESS :PROCTHREAD_NAME pid:10 tid:28686 name:/bin/sh\n");
	/* a name with unprintable bytes prints empty, as traceprinter does */
	w[2] = 0x01020304;
	assert_string_equal(fmt_ex(TK_KEV_PRINT_NO_NEWLINES,
				   H(_TRACE_STRUCT_CB, 1, _TRACE_PR_TH_C, _TRACE_PR_TH_DESTROY_P_NAME), 1, w, 4, 0),
			    "t:0x00000001 CPU:01 PROCESS :PROCDESTROY_NAME ppid:10 pid:28686 name:\n");
}

static void test_kercalls(void **state)
{
	uint32_t w[20] = { 0x4000001e, 0x6f };

	(void)state;
	assert_string_equal(fmt(H(0, 1, _TRACE_KER_CALL_C, __KER_TRACE_EVENT), 0x74a4e3a2, w, 2),
			    "t:0x74a4e3a2 CPU:01 KER_CALL:TRACE_EVENT/01 mode:0x4000001e class[header]:0x0000006f\n");
	w[0] = 0;
	w[1] = 0;
	assert_string_equal(fmt(H(0, 1, _TRACE_KER_CALL_C, 128 + __KER_TRACE_EVENT), 0x74a4e0a8, w, 2),
			    "t:0x74a4e0a8 CPU:01 KER_EXIT:TRACE_EVENT/01 ret_val:0x00000000 empty:0x00000000\n");
	w[0] = 0xff82874e;
	assert_string_equal(fmt(H(0, 0, _TRACE_KER_CALL_C, __KER_RING0), 0x31ebec31, w, 2),
			    "t:0x31ebec31 CPU:00 KER_CALL:RING0/02 func_p:ff82874e arg_p:0\n");
	w[0] = 0xffffffffu;
	w[1] = 0xffffffffu;
	assert_string_equal(fmt(H(0, 0, _TRACE_KER_CALL_C, __KER_THREAD_DESTROY), 0xbcb1f03c, w, 2),
			    "t:0xbcb1f03c CPU:00 KER_CALL:THREAD_DESTROY/47 tid:-1 status_p:ffffffff\n");
	w[1] = 3;
	assert_string_equal(fmt(H(0, 0, _TRACE_KER_CALL_C, 128 + __KER_MSG_SENDV), 9, w, 2),
			    "t:0x00000009 CPU:00 KER_EXIT:MSG_SENDV/11 ret_val:-1, errno:3\n");
	w[0] = 0;
	w[1] = 0;
	assert_string_equal(fmt(H(0, 0, _TRACE_KER_CALL_C, 128 + __KER_SYNC_CONDVAR_SIGNAL), 9, w, 2),
			    "t:0x00000009 CPU:00 KER_EXIT:SYNC_CONDVAR_SIG/83 ret_val:0 empty:0x00000000\n");
	assert_string_equal(fmt(H(0, 0, _TRACE_KER_CALL_C, 256 + __KER_MSG_RECEIVEV), 0xbcb2d438, w, 2),
			    "t:0xbcb2d438 CPU:00 INT_CALL:KER_MSG_RECEIVEV/14\n");
	/* fast MSG_SENDV: coid and the first 4 message bytes */
	w[0] = 0x40000003;
	memcpy(&w[1], "abcd", 4);
	assert_string_equal(fmt(H(0, 0, _TRACE_KER_CALL_C, __KER_MSG_SENDV), 9, w, 2),
			    "t:0x00000009 CPU:00 KER_CALL:MSG_SENDV/11 coid:0x40000003 msg:\"abcd\" (0x64636261)\n");
	/* wide MSG_READV exit: the message bytes accumulate into one string */
	w[0] = 47;
	w[1] = 0x6f72500a;
	w[2] = 0x73736563;
	w[3] = 0x34383120;
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 0, _TRACE_KER_CALL_C, 128 + __KER_MSG_READV), 0x3ac0e597, w, 4),
			    "t:0x3ac0e597 CPU:00 KER_EXIT:MSG_READV/16\n"
			    "                    rbytes:47\n"
			    "                      rmsg:\"\nProcess 184\" (0x6f72500a 0x73736563 0x34383120)\n");
	/* a piece with a NUL or an unprintable byte ends the string */
	w[1] = 0x00040116;
	w[2] = 0x2d;
	w[3] = 0;
	assert_string_equal(fmt_ex(TK_KEV_PRINT_NO_NEWLINES,
				   H(_TRACE_STRUCT_CB, 0, _TRACE_KER_CALL_C, 128 + __KER_MSG_READV), 1, w, 4, 0),
			    "t:0x00000001 CPU:00 KER_EXIT:MSG_READV/16 rbytes:47 rmsg:\"\" (0x00040116 0x0000002d "
			    "0x00000000)\n");
	/* unknown kernel call numbers print generically */
	assert_string_equal(fmt(H(0, 0, _TRACE_KER_CALL_C, 120), 1, w, 2),
			    "t:0x00000001 CPU:00 KER_CALL:EVENT:120, d0:0x0000002f d1:0x00040116\n");
}

static void test_wide_string_then_args(void **state)
{
	/* MSG_SENDV enter, wide: coid, sparts, rparts, msg (3 words) */
	uint32_t w[6] = { 0x40000003, 1, 2 };

	(void)state;
	memcpy(&w[3], "Hello world\0", 12);
	assert_string_equal(fmt_ex(TK_KEV_PRINT_NO_NEWLINES, H(_TRACE_STRUCT_CB, 0, _TRACE_KER_CALL_C, __KER_MSG_SENDV),
				   1, w, 6, 0),
			    "t:0x00000001 CPU:00 KER_CALL:MSG_SENDV/11 coid:0x40000003 sparts:1 rparts:2 msg:\"Hello "
			    "world\" (0x6c6c6548 0x6f77206f 0x00646c72)\n");
}

static void test_int(void **state)
{
	uint32_t w[6] = { 0x10, 0x8048000, 0xf0001000, 0x2000, 0, 0 };

	(void)state;
	assert_string_equal(fmt(H(0, 0, _TRACE_INT_C, _TRACE_INT_ENTRY), 1, w, 2),
			    "t:0x00000001 CPU:00 INT_ENTR:0x00000010 (16)       IP:0x08048000\n");
	assert_string_equal(fmt(H(0, 0, _TRACE_INT_C, _TRACE_INT_EXIT), 1, w, 2),
			    "t:0x00000001 CPU:00 INT_EXIT:0x00000010 (16) inkernel:0x08048000\n");
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 0, _TRACE_INT_C, _TRACE_INT_HANDLER_ENTRY), 1, w, 4),
			    "t:0x00000001 CPU:00 INT_HANDLER_ENTR:0x08048000 (134512640)       PID:16 IP:0xf0001000 "
			    "AREA:0x00002000\n");
	/* a sigevent: PULSE coid 0x40000002, priority 21, code -1, value 0x1234 */
	w[0] = 5;
	w[1] = 4;
	w[2] = 0x40000002;
	w[3] = 0x1234;
	w[4] = (21u << 16) | 0xffffu;
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 0, _TRACE_INT_C, _TRACE_INT_HANDLER_EXIT), 1, w, 6),
			    "t:0x00000001 CPU:00 INT_HANDLER_EXIT:0x00000005 (5) SIGEVENT:PULSE 0x40000002:21 "
			    "0xffffffff:0x1234\n");
	w[1] = 6;
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 0, _TRACE_INT_C, _TRACE_INT_HANDLER_EXIT), 1, w, 6),
			    "t:0x00000001 CPU:00 INT_HANDLER_EXIT:0x00000005 (5) SIGEVENT:INTR\n");
	/* handler entry without its 4 words is printed generically, never read past the payload */
	assert_string_equal(fmt(H(0, 0, _TRACE_INT_C, _TRACE_INT_HANDLER_ENTRY), 1, w, 2),
			    "t:0x00000001 CPU:00 INT     :EVENT:3, d0:0x00000005 d1:0x00000006\n");
}

static void test_user(void **state)
{
	uint32_t w[8] = { 1, 11 };

	(void)state;
	assert_string_equal(fmt(H(0, 1, _TRACE_USER_C, 111), 0x74a4e4f1, w, 2),
			    "t:0x74a4e4f1 CPU:01 USREVENT:EVENT:111, d0:0x00000001 d1:0x0000000b\n");
	memcpy(w, "Hello world\0\0\0\0\0", 16);
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 1, _TRACE_USER_C, 555), 0x74a4fa4f, w, 4),
			    "t:0x74a4fa4f CPU:01 USREVENT:EVENT:555 STR:\"Hello world\"\n");
	/* binary combine data prints its words (QNX 1.02 would print STR:"") */
	w[0] = 1;
	w[1] = 2;
	w[2] = 3;
	w[3] = 4;
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 1, _TRACE_USER_C, 7), 1, w, 4),
			    "t:0x00000001 CPU:01 USREVENT:EVENT:7, d0:0x00000001 d1:0x00000002 d2:0x00000003 "
			    "d3:0x00000004\n");
	assert_string_equal(fmt_ex(TK_KEV_PRINT_QNX_STRICT, H(_TRACE_STRUCT_CB, 1, _TRACE_USER_C, 7), 1, w, 4, 0),
			    "t:0x00000001 CPU:01 USREVENT:EVENT:7 STR:\"\"\n");
	/* a string of 8 bytes or less is one simple slot (QNX, tracekit): like QNX's
	 * traceprinter, print it as the two words it cannot be told apart from */
	memset(w, 0, 32);
	memcpy(w, "hi 5", 5);
	assert_string_equal(fmt(H(0, 1, _TRACE_USER_C, 3), 1, w, 2),
			    "t:0x00000001 CPU:01 USREVENT:EVENT:3, d0:0x35206968 d1:0x00000000\n");
	/* older tracekit files and the recorder: a short string fills the two-slot minimum of
	 * a combine event with padding */
	memcpy(w, "hi 5\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 1, _TRACE_USER_C, 3), 1, w, 4),
			    "t:0x00000001 CPU:01 USREVENT:EVENT:3 STR:\"hi 5\"\n");
	memset(w, 0, 32);
	memcpy(w, "hi", 3);
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 1, _TRACE_USER_C, 3), 1, w, 6),
			    "t:0x00000001 CPU:01 USREVENT:EVENT:3, d0:0x00006968 d1:0x00000000 d2:0x00000000 "
			    "d3:0x00000000 d4:0x00000000 d5:0x00000000\n");
}

static void test_control(void **state)
{
	uint32_t w[2] = { 0x427, 0x74a43cb6 };

	(void)state;
	assert_string_equal(fmt(H(0, 1, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), 0x74a43dfa, w, 2),
			    "t:0x74a43dfa CPU:01 CONTROL :TIME msb:0x00000427 lsb(offset):0x74a43cb6\n");
	w[0] = 0x2803;
	w[1] = 715;
	assert_string_equal(fmt(H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER), 1, w, 2),
			    "t:0x00000001 CPU:00 CONTROL: BUFFER sequence = 3, num_events = 715\n");
	w[0] = 12;
	w[1] = 1;
	assert_string_equal(fmt(H(0, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_DROPPED), 1, w, 2),
			    "t:0x00000001 CPU:00 CONTROL :DROPPED events:4294967308\n");
	assert_string_equal(fmt(H(0, 0, _TRACE_CONTROL_C, 99), 1, w, 2),
			    "t:0x00000001 CPU:00 CONTROL :EVENT:99, d0:0x0000000c d1:0x00000001\n");
	assert_int_equal(tk_kev_format_event(g_out, sizeof(g_out), TK_KEV_PRINT_QNX_STRICT,
					     &(tk_kev_event){ H(0, 0, _TRACE_CONTROL_C, 99), 1, w, 2, 0, 0, 0 }),
			 0);
}

static void test_system_and_comm(void **state)
{
	uint32_t w[16] = { 7, 0x40000000, 0, 0x1000, 0 };

	(void)state;
	/* MMAP fast: pid then a 64-bit vaddr that needs bytes 4..11: it does not fit */
	assert_string_equal(fmt(H(0, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_MMAP), 1, w, 2),
			    "t:0x00000001 CPU:00 SYSTEM  :MMAP            pid:7\n");
	assert_string_equal(fmt_ex(TK_KEV_PRINT_NO_NEWLINES, H(_TRACE_STRUCT_CB, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_MUNMAP),
				   1, w, 6, 0),
			    "t:0x00000001 CPU:00 SYSTEM  :MUNMAP          pid:7 vaddr:0x40000000 len:0x1000\n");
	w[0] = 0x80481000;
	w[1] = 0x80482000;
	assert_string_equal(fmt(H(0, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER), 1, w, 2),
			    "t:0x00000001 CPU:00 SYSTEM  :FUNC_ENTER thisfn:0x80481000 call_site:0x80482000\n");
	/* tracekit's wide hooks: two 64-bit addresses; a 64-bit ADDRESS */
	w[0] = 0x2d506789;
	w[1] = 0x562a;
	w[2] = 0x2d50681c;
	w[3] = 0x562a;
	assert_string_equal(fmt(H(_TRACE_STRUCT_CB, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_EXIT), 1, w, 4),
			    "t:0x00000001 CPU:00 SYSTEM  :FUNC_EXIT\n"
			    "                    thisfn:0x562a2d506789\n"
			    "                 call_site:0x562a2d50681c\n");
	assert_string_equal(fmt(H(0, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_ADDRESS), 1, w, 2),
			    "t:0x00000001 CPU:00 SYSTEM  :ADDRESS addr:0x562a2d506789\n");
	assert_string_equal(fmt_ex(TK_KEV_PRINT_QNX_STRICT, H(0, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_ADDRESS), 1, w, 2, 0),
			    "t:0x00000001 CPU:00 SYSTEM  :ADDRESS addr:0x2d506789\n");
	w[0] = 0x80481000;
	w[1] = 0x80482000;
	w[0] = 3;
	memcpy(&w[1], "abc", 4);
	assert_string_equal(fmt(H(0, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_APS_NAME), 1, w, 2),
			    "t:0x00000001 CPU:00 SYSTEM  :APS_NAME       \n"
			    "              partition_id:3\n"
			    "                      name:abc\n");
	w[0] = 0x12;
	w[1] = 4711;
	assert_string_equal(fmt(H(0, 0, _TRACE_COMM_C, _NTO_TRACE_COMM_SMSG), 1, w, 2),
			    "t:0x00000001 CPU:00 COMM    :SND_MESSAGE   rcvid:0x00000012 pid:4711\n");
	assert_string_equal(fmt(H(0, 0, _TRACE_COMM_C, 40), 1, w, 2),
			    "t:0x00000001 CPU:00 COMM    :EVENT:40, d0:0x00000012 d1:0x00001267\n");
	assert_string_equal(fmt(H(0, 0, 20u << 10, 3), 1, w, 2),
			    "t:0x00000001 CPU:00 CLASS20 :EVENT:3, d0:0x00000012 d1:0x00001267\n");
}

/* Message bytes print the same from either byte order; numbers are swapped. */
static void test_message_bytes_both_orders(void **state)
{
	/* MSG_SENDV enter, wide: coid, sparts, rparts (numbers), then 12 message bytes */
	const uint32_t nums[3] = { 0x40000003, 1, 2 };
	unsigned char le[24], be[24];
	tk_kev_event ev = { 0 };
	char out_le[512], out_be[512];
	int i, k;

	(void)state;
	for (i = 0; i < 3; i++) {
		for (k = 0; k < 4; k++) {
			le[4 * i + k] = (unsigned char)(nums[i] >> (8 * k));
			be[4 * i + k] = (unsigned char)(nums[i] >> (8 * (3 - k)));
		}
	}
	memcpy(le + 12, "Hello world", 12);
	memcpy(be + 12, "Hello world", 12);
	ev.header = H(_TRACE_STRUCT_CB, 0, _TRACE_KER_CALL_C, __KER_MSG_SENDV);
	ev.time = 1;
	ev.len = 6;
	ev.data = (const unsigned *)(const void *)le;
	ev.swap = TKT_HOST_BE;
	tk_kev_format_event(out_le, sizeof(out_le), TK_KEV_PRINT_NO_NEWLINES, &ev);
	ev.data = (const unsigned *)(const void *)be;
	ev.swap = !TKT_HOST_BE;
	tk_kev_format_event(out_be, sizeof(out_be), TK_KEV_PRINT_NO_NEWLINES, &ev);
	assert_string_equal(out_le, "t:0x00000001 CPU:00 KER_CALL:MSG_SENDV/11 coid:0x40000003 sparts:1 rparts:2 "
				    "msg:\"Hello world\" (0x6c6c6548 0x6f77206f 0x00646c72)\n");
	assert_string_equal(out_be, out_le);
	/* fast: coid and the first 4 message bytes */
	memcpy(le + 4, "Hell", 4);
	memcpy(be + 4, "Hell", 4);
	ev.header = H(0, 0, _TRACE_KER_CALL_C, __KER_MSG_SENDV);
	ev.len = 2;
	ev.data = (const unsigned *)(const void *)le;
	ev.swap = TKT_HOST_BE;
	tk_kev_format_event(out_le, sizeof(out_le), 0, &ev);
	ev.data = (const unsigned *)(const void *)be;
	ev.swap = !TKT_HOST_BE;
	tk_kev_format_event(out_be, sizeof(out_be), 0, &ev);
	assert_string_equal(out_le, "t:0x00000001 CPU:00 KER_CALL:MSG_SENDV/11 coid:0x40000003 msg:\"Hell\" (0x6c6c6548)\n");
	assert_string_equal(out_be, out_le);
}

static void test_swap_and_time_columns(void **state)
{
	uint32_t w[2] = { 28686, 1 };

	(void)state;
	assert_string_equal(fmt_ex(0, H(0, 1, _TRACE_PR_TH_C, STATE_RUNNING), 0x74a4ddb7, w, 2, 1),
			    "t:0x74a4ddb7 CPU:01 THREAD  :THRUNNING     pid:28686 tid:1 \n");
	assert_string_equal(fmt_ex(TK_KEV_PRINT_TIME_CYCLES, H(0, 1, _TRACE_PR_TH_C, STATE_RUNNING), 7, w, 2, 0),
			    "t:0x0000000412345678 CPU:01 THREAD  :THRUNNING     pid:28686 tid:1 \n");
	assert_string_equal(fmt_ex(TK_KEV_PRINT_TIME_NS, H(0, 1, _TRACE_PR_TH_C, STATE_RUNNING), 7, w, 2, 0),
			    "t:3.123456789 CPU:01 THREAD  :THRUNNING     pid:28686 tid:1 \n");
}

static void test_printer_object(void **state)
{
	FILE *f = tmpfile();
	tk_kev_printer *p;
	uint32_t w[2] = { 1, 2 };
	tk_kev_event ev = { H(0, 0, _TRACE_USER_C, 1), 5, w, 2, 0, 0, 0 };
	char text[256] = { 0 };

	(void)state;
	assert_non_null(f);
	assert_int_equal(tk_kev_printer_new(&p, NULL, 0), TK_EINVAL);
	assert_int_equal(tk_kev_printer_new(&p, f, 0), TK_OK);
	assert_int_equal(tk_kev_print_event(p, &ev), TK_OK);
	assert_int_equal(tk_kev_print_event(p, NULL), TK_EINVAL);
	tk_kev_printer_free(p);
	tk_kev_printer_free(NULL);
	rewind(f);
	assert_true(fread(text, 1, sizeof(text) - 1, f) > 0);
	assert_string_equal(text, "t:0x00000005 CPU:00 USREVENT:EVENT:1, d0:0x00000001 d1:0x00000002\n");
	fclose(f);
	/* truncation reports the full length, like snprintf */
	assert_int_equal(tk_kev_format_event(text, 10, 0, &ev), 66);
	assert_int_equal(strlen(text), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread),          cmocka_unit_test(test_process),
		cmocka_unit_test(test_kercalls),        cmocka_unit_test(test_wide_string_then_args),
		cmocka_unit_test(test_int),             cmocka_unit_test(test_user),
		cmocka_unit_test(test_control),         cmocka_unit_test(test_system_and_comm),
		cmocka_unit_test(test_message_bytes_both_orders),
		cmocka_unit_test(test_swap_and_time_columns), cmocka_unit_test(test_printer_object),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
