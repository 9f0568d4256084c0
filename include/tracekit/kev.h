/* SPDX-License-Identifier: MIT */
/*
 * tracekit/kev.h: the QNX Neutrino trace event format (.kev): the 16-byte event slot,
 * the QNX 6.4 class, event and kernel-call numbers under their <sys/trace.h>,
 * <sys/states.h> and <sys/kercalls.h> names, and tracekit's .kev file writer.
 *
 * Byte layout (docs/kev-format.md has the full specification):
 *   "TRACE_" KEY "::" VALUE ...  ASCII header, HEADER_BEGIN first and HEADER_END last
 *   syspage                      exactly TRACE_SYSPAGE_LEN bytes
 *   traceevent_t[]               16 bytes each, in the byte order the header declares
 */
#ifndef TRACEKIT_KEV_H
#define TRACEKIT_KEV_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "tracekit/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The event slot ------------------------------------------------------------------ */

#ifndef TK_QNX_TYPES_DEFINED
#define TK_QNX_TYPES_DEFINED
typedef uint32_t _Uint32t; /* QNX's name for a 32-bit unsigned integer */
typedef uint64_t _Uint64t;
#endif

typedef _Uint32t __traceentry;

typedef struct traceevent {
	__traceentry header;  /* struct flag, CPU, class, event */
	__traceentry data[3]; /* data[0]: timestamp LSB; data[1..2]: payload */
} traceevent_t;

TK_STATIC_ASSERT(sizeof(traceevent_t) == 16, "a .kev event slot is 16 bytes");

/*
 * Header word: bits 31-30 struct flag (S, CB, CC, CE), 29-24 CPU, 14-10 internal class,
 * 9-0 event code.
 */
#define _TRACE_STRUCT_S  (0x00000000u)
#define _TRACE_STRUCT_CB (0x00000001u << 30)
#define _TRACE_STRUCT_CC (0x00000002u << 30)
#define _TRACE_STRUCT_CE (0x00000003u << 30)
#define _TRACE_GET_STRUCT(c) ((c) & (0x3u << 30))

#define _NTO_TRACE_GETEVENT_C(c) ((c) & (0x1fu << 10))
#define _NTO_TRACE_GETEVENT(c)   ((c) & 0x3ffu)
#define _NTO_TRACE_GETCPU(h)     (((h) & 0x3f000000u) >> 24)
#define _NTO_TRACE_SETEVENT_C(c, cl) ((c) &= ~(0x1fu << 10), (c) |= (cl))
#define _NTO_TRACE_SETEVENT(c, e)    ((c) &= ~(0x3ffu), (c) |= (e))
#define _TRACE_MAKE_CODE(cpu, flag, cl, ev) \
	((((unsigned)(cpu) & 0x3fu) << 24) | (unsigned)(flag) | (unsigned)(cl) | (unsigned)(ev))

#define _NTO_TRACE_MAX_CLASS (0x0000001f)
#define _NTO_TRACE_MAX_CODES (0x000003ff)
#define _TRACE_MAX_EVENT_NUM (0x00000400)

/* Internal classes (header bits 14-10), already shifted. */
#define _TRACE_EMPTY_C     (0x00000000u << 10)
#define _TRACE_CONTROL_C   (0x00000001u << 10)
#define _TRACE_KER_CALL_C  (0x00000002u << 10)
#define _TRACE_INT_C       (0x00000003u << 10)
#define _TRACE_PR_TH_C     (0x00000004u << 10)
#define _TRACE_SYSTEM_C    (0x00000005u << 10)
#define _TRACE_CONTAINER_C _TRACE_SYSTEM_C
#define _TRACE_USER_C      (0x00000006u << 10)
#define _TRACE_COMM_C      (0x00000007u << 10)
#define _TRACE_QUIP_C      (0x00000008u << 10) /* QNX 7 */
#define _TRACE_SEC_C       (0x00000009u << 10) /* QNX 7 */
#define _TRACE_QVM_C       (0x0000000au << 10) /* QNX 7 */
#define _TRACE_PMU_C       (0x0000000bu << 10) /* QNX 8 */
#define _TRACE_TOT_CLASS_NUM (8) /* classes of QNX 6.4 */

/* External classes: the TraceEvent() and traceparser_cs() class argument. */
enum {
	_NTO_TRACE_EMPTY,
	_NTO_TRACE_CONTROL,
	_NTO_TRACE_KERCALL,
	_NTO_TRACE_KERCALLENTER,
	_NTO_TRACE_KERCALLEXIT,
	_NTO_TRACE_KERCALLINT,
	_NTO_TRACE_INT,
	_NTO_TRACE_INTENTER,
	_NTO_TRACE_INTEXIT,
	_NTO_TRACE_PROCESS,
	_NTO_TRACE_THREAD,
	_NTO_TRACE_VTHREAD,
	_NTO_TRACE_USER,
	_NTO_TRACE_SYSTEM,
	_NTO_TRACE_COMM,
	_NTO_TRACE_INT_HANDLER_ENTER,
	_NTO_TRACE_INT_HANDLER_EXIT,
	_NTO_TRACE_QUIP, /* QNX 7 */
	_NTO_TRACE_SEC,  /* QNX 7 */
	_NTO_TRACE_QVM   /* QNX 7 */
};
/* Spellings found in the SAT guide's examples. */
#define _NTO_TRACE_KERNEL      _NTO_TRACE_KERCALL
#define _NTO_TRACE_KERCALEXIT  _NTO_TRACE_KERCALLEXIT
#define _NTO_TRACE_INTEXT      _NTO_TRACE_INTEXIT

/* Control events. External event masks and internal codes. */
#define _NTO_TRACE_EMPTYEVENT    (0x00000000)
#define _NTO_TRACE_CONTROLTIME   (0x00000001 << 0)
#define _NTO_TRACE_CONTROLBUFFER (0x00000001 << 1)
#define _TRACE_CONTROL_TIME       (0x00000001) /* data: msb, lsb */
#define _TRACE_CONTROL_BUFFER     (0x00000002) /* data: sequence, number of events */
#define _TRACE_CONTROL_BUFFER_END (0x00000004) /* QNX 8: data: _TRACECOOKIE twice */
#define _TRACE_CONTROL_DROPPED    (0x00000008) /* QNX 8 / tracekit: data: count lo, hi */
#define _TRACECOOKIE              (0xe6e6e6e6u)

/* Kernel calls: codes 0..127 entry, 128 + n exit, 256 + n interrupted. */
#define _TRACE_MAX_KER_CALL_NUM (128)
#define _NTO_TRACE_KERCALL64    (0x200) /* QNX 7: OR-ed into codes of 64-bit variants */
#define _NTO_TRACE_KERCALLFIRST (0x00000000)
#define _NTO_TRACE_KERCALLLAST  (__KER_BAD)

/* Interrupts: pseudo-event codes of the INT class. */
#define _NTO_TRACE_INTFIRST        (0x00000000u)
#define _NTO_TRACE_INTLAST         (0xffffffffu)
#define _TRACE_MAX_INT_NUM         (256)
#define _TRACE_INT_ENTRY           (1)
#define _TRACE_INT_EXIT            (2)
#define _TRACE_INT_HANDLER_ENTRY   (3)
#define _TRACE_INT_HANDLER_EXIT    (4)

/* Thread states (<sys/states.h>, QNX 6.4). */
enum {
	STATE_DEAD,
	STATE_RUNNING,
	STATE_READY,
	STATE_STOPPED,
	STATE_SEND,
	STATE_RECEIVE,
	STATE_REPLY,
	STATE_STACK,
	STATE_WAITTHREAD,
	STATE_WAITPAGE,
	STATE_SIGSUSPEND,
	STATE_SIGWAITINFO,
	STATE_NANOSLEEP,
	STATE_MUTEX,
	STATE_CONDVAR,
	STATE_JOIN,
	STATE_INTR,
	STATE_SEM,
	STATE_WAITCTX,
	STATE_NET_SEND,
	STATE_NET_REPLY,
	STATE_MAX = 24
};

/* Two extra thread "states" for create and destroy; VTHREAD codes are offset by MAX. */
enum {
	_TRACE_THREAD_CREATE = STATE_MAX,
	_TRACE_THREAD_DESTROY,
	_TRACE_MAX_TH_STATE_NUM
};

/* Process-class event masks (external) and PR_TH codes (internal). */
#define _NTO_TRACE_PROCCREATE       (0x00000001 << 0)
#define _NTO_TRACE_PROCDESTROY      (0x00000001 << 1)
#define _NTO_TRACE_PROCCREATE_NAME  (0x00000001 << 2)
#define _NTO_TRACE_PROCDESTROY_NAME (0x00000001 << 3)
#define _NTO_TRACE_PROCTHREAD_NAME  (0x00000001 << 4)

#define _TRACE_PR_TH_CREATE_T       (_TRACE_THREAD_CREATE)
#define _TRACE_PR_TH_DESTROY_T      (_TRACE_THREAD_DESTROY)
#define _TRACE_PR_TH_CREATE_VT      (_TRACE_PR_TH_CREATE_T + _TRACE_MAX_TH_STATE_NUM)
#define _TRACE_PR_TH_DESTROY_VT     (_TRACE_PR_TH_DESTROY_T + _TRACE_MAX_TH_STATE_NUM)
#define _TRACE_PR_TH_CREATE_P       (0x00000001 << 6)
#define _TRACE_PR_TH_DESTROY_P      (0x00000002 << 6)
#define _TRACE_PR_TH_CREATE_P_NAME  (0x00000003 << 6)
#define _TRACE_PR_TH_DESTROY_P_NAME (0x00000004 << 6)
#define _TRACE_PR_TH_NAME_T         (0x00000005 << 6)

/* Thread-class event masks (external API of QNX 6.4: bit masks of the state number). */
#define _NTO_TRACE_THDEAD        (0x00000001u << STATE_DEAD)
#define _NTO_TRACE_THRUNNING     (0x00000001u << STATE_RUNNING)
#define _NTO_TRACE_THREADY       (0x00000001u << STATE_READY)
#define _NTO_TRACE_THSTOPPED     (0x00000001u << STATE_STOPPED)
#define _NTO_TRACE_THSEND        (0x00000001u << STATE_SEND)
#define _NTO_TRACE_THRECEIVE     (0x00000001u << STATE_RECEIVE)
#define _NTO_TRACE_THREPLY       (0x00000001u << STATE_REPLY)
#define _NTO_TRACE_THSTACK       (0x00000001u << STATE_STACK)
#define _NTO_TRACE_THWAITTHREAD  (0x00000001u << STATE_WAITTHREAD)
#define _NTO_TRACE_THWAITPAGE    (0x00000001u << STATE_WAITPAGE)
#define _NTO_TRACE_THSIGSUSPEND  (0x00000001u << STATE_SIGSUSPEND)
#define _NTO_TRACE_THSIGWAITINFO (0x00000001u << STATE_SIGWAITINFO)
#define _NTO_TRACE_THNANOSLEEP   (0x00000001u << STATE_NANOSLEEP)
#define _NTO_TRACE_THMUTEX       (0x00000001u << STATE_MUTEX)
#define _NTO_TRACE_THCONDVAR     (0x00000001u << STATE_CONDVAR)
#define _NTO_TRACE_THJOIN        (0x00000001u << STATE_JOIN)
#define _NTO_TRACE_THINTR        (0x00000001u << STATE_INTR)
#define _NTO_TRACE_THSEM         (0x00000001u << STATE_SEM)
#define _NTO_TRACE_THWAITCTX     (0x00000001u << STATE_WAITCTX)
#define _NTO_TRACE_THNET_SEND    (0x00000001u << STATE_NET_SEND)
#define _NTO_TRACE_THNET_REPLY   (0x00000001u << STATE_NET_REPLY)
#define _NTO_TRACE_THCREATE      (0x00000001u << _TRACE_THREAD_CREATE)
#define _NTO_TRACE_THDESTROY     (0x00000001u << _TRACE_THREAD_DESTROY)
#define _NTO_TRACE_THSIGSPEND    _NTO_TRACE_THSIGSUSPEND /* SAT guide spelling */

#define _NTO_TRACE_VTHDEAD        _NTO_TRACE_THDEAD
#define _NTO_TRACE_VTHRUNNING     _NTO_TRACE_THRUNNING
#define _NTO_TRACE_VTHREADY       _NTO_TRACE_THREADY
#define _NTO_TRACE_VTHSTOPPED     _NTO_TRACE_THSTOPPED
#define _NTO_TRACE_VTHSEND        _NTO_TRACE_THSEND
#define _NTO_TRACE_VTHRECEIVE     _NTO_TRACE_THRECEIVE
#define _NTO_TRACE_VTHREPLY       _NTO_TRACE_THREPLY
#define _NTO_TRACE_VTHSTACK       _NTO_TRACE_THSTACK
#define _NTO_TRACE_VTHWAITTHREAD  _NTO_TRACE_THWAITTHREAD
#define _NTO_TRACE_VTHWAITPAGE    _NTO_TRACE_THWAITPAGE
#define _NTO_TRACE_VTHSIGSUSPEND  _NTO_TRACE_THSIGSUSPEND
#define _NTO_TRACE_VTHSIGWAITINFO _NTO_TRACE_THSIGWAITINFO
#define _NTO_TRACE_VTHNANOSLEEP   _NTO_TRACE_THNANOSLEEP
#define _NTO_TRACE_VTHMUTEX       _NTO_TRACE_THMUTEX
#define _NTO_TRACE_VTHCONDVAR     _NTO_TRACE_THCONDVAR
#define _NTO_TRACE_VTHJOIN        _NTO_TRACE_THJOIN
#define _NTO_TRACE_VTHINTR        _NTO_TRACE_THINTR
#define _NTO_TRACE_VTHSEM         _NTO_TRACE_THSEM
#define _NTO_TRACE_VTHWAITCTX     _NTO_TRACE_THWAITCTX
#define _NTO_TRACE_VTHNET_SEND    _NTO_TRACE_THNET_SEND
#define _NTO_TRACE_VTHNET_REPLY   _NTO_TRACE_THNET_REPLY
#define _NTO_TRACE_VTHCREATE      _NTO_TRACE_THCREATE
#define _NTO_TRACE_VTHDESTROY     _NTO_TRACE_THDESTROY

/* User events. */
#define _NTO_TRACE_USERFIRST (0x00000000)
#define _NTO_TRACE_USERLAST  (0x000003ff)
#define _TRACE_MAX_USER_NUM  (_NTO_TRACE_USERLAST + 1)

/* System events. */
#define _NTO_TRACE_SYS_RESERVED    (0x00000001)
#define _NTO_TRACE_SYS_PATHMGR     (0x00000002)
#define _NTO_TRACE_SYS_APS_NAME    (0x00000003)
#define _NTO_TRACE_SYS_APS_BUDGETS (0x00000004)
#define _NTO_TRACE_SYS_APS_BNKR    (0x00000005)
#define _NTO_TRACE_SYS_MMAP        (0x00000006)
#define _NTO_TRACE_SYS_MUNMAP      (0x00000007)
#define _NTO_TRACE_SYS_MAPNAME     (0x00000008)
#define _NTO_TRACE_SYS_ADDRESS     (0x00000009)
#define _NTO_TRACE_SYS_FUNC_ENTER  (0x0000000a)
#define _NTO_TRACE_SYS_FUNC_EXIT   (0x0000000b)
#define _NTO_TRACE_SYS_SLOG        (0x0000000c)
#define _NTO_TRACE_SYS_LAST        _NTO_TRACE_SYS_SLOG
#define _TRACE_MAX_SYSTEM_NUM      (_NTO_TRACE_SYS_LAST + 1)

/* Communication events. */
#define _NTO_TRACE_COMM_SMSG       (0x00000000)
#define _NTO_TRACE_COMM_SPULSE     (0x00000001)
#define _NTO_TRACE_COMM_RMSG       (0x00000002)
#define _NTO_TRACE_COMM_RPULSE     (0x00000003)
#define _NTO_TRACE_COMM_SPULSE_EXE (0x00000004)
#define _NTO_TRACE_COMM_SPULSE_DIS (0x00000005)
#define _NTO_TRACE_COMM_SPULSE_DEA (0x00000006)
#define _NTO_TRACE_COMM_SPULSE_UN  (0x00000007)
#define _NTO_TRACE_COMM_SPULSE_QUN (0x00000008)
#define _NTO_TRACE_COMM_SIGNAL     (0x00000009)
#define _NTO_TRACE_COMM_REPLY      (0x0000000a)
#define _NTO_TRACE_COMM_ERROR      (0x0000000b)
#define _NTO_TRACE_COMM_LAST       _NTO_TRACE_COMM_ERROR
#define _TRACE_MAX_COMM_NUM        (_NTO_TRACE_COMM_LAST + 1)

/* Kernel call numbers (<sys/kercalls.h>, QNX 6.4). */
enum {
	__KER_NOP,
	__KER_TRACE_EVENT,
	__KER_RING0,
	__KER_SPARE1,
	__KER_SPARE2,
	__KER_SPARE3,
	__KER_SPARE4,
	__KER_SYS_CPUPAGE_GET,
	__KER_SYS_CPUPAGE_SET,
	__KER_SYS_SPARE1,
	__KER_MSG_CURRENT,
	__KER_MSG_SENDV,
	__KER_MSG_SENDVNC,
	__KER_MSG_ERROR,
	__KER_MSG_RECEIVEV,
	__KER_MSG_REPLYV,
	__KER_MSG_READV,
	__KER_MSG_WRITEV,
	__KER_MSG_READWRITEV,
	__KER_MSG_INFO,
	__KER_MSG_SEND_PULSE,
	__KER_MSG_DELIVER_EVENT,
	__KER_MSG_KEYDATA,
	__KER_MSG_READIOV,
	__KER_MSG_RECEIVEPULSEV,
	__KER_MSG_VERIFY_EVENT,
	__KER_SIGNAL_KILL,
	__KER_SIGNAL_RETURN,
	__KER_SIGNAL_FAULT,
	__KER_SIGNAL_ACTION,
	__KER_SIGNAL_PROCMASK,
	__KER_SIGNAL_SUSPEND,
	__KER_SIGNAL_WAITINFO,
	__KER_SIGNAL_SPARE1,
	__KER_SIGNAL_SPARE2,
	__KER_CHANNEL_CREATE,
	__KER_CHANNEL_DESTROY,
	__KER_CHANCON_ATTR,
	__KER_CHANNEL_SPARE1,
	__KER_CONNECT_ATTACH,
	__KER_CONNECT_DETACH,
	__KER_CONNECT_SERVER_INFO,
	__KER_CONNECT_CLIENT_INFO,
	__KER_CONNECT_FLAGS,
	__KER_CONNECT_SPARE1,
	__KER_CONNECT_SPARE2,
	__KER_THREAD_CREATE,
	__KER_THREAD_DESTROY,
	__KER_THREAD_DESTROYALL,
	__KER_THREAD_DETACH,
	__KER_THREAD_JOIN,
	__KER_THREAD_CANCEL,
	__KER_THREAD_CTL,
	__KER_THREAD_SPARE1,
	__KER_THREAD_SPARE2,
	__KER_INTERRUPT_ATTACH,
	__KER_INTERRUPT_DETACH_FUNC,
	__KER_INTERRUPT_DETACH,
	__KER_INTERRUPT_WAIT,
	__KER_INTERRUPT_MASK,
	__KER_INTERRUPT_UNMASK,
	__KER_INTERRUPT_SPARE1,
	__KER_INTERRUPT_SPARE2,
	__KER_INTERRUPT_SPARE3,
	__KER_INTERRUPT_SPARE4,
	__KER_CLOCK_TIME,
	__KER_CLOCK_ADJUST,
	__KER_CLOCK_PERIOD,
	__KER_CLOCK_ID,
	__KER_CLOCK_SPARE2,
	__KER_TIMER_CREATE,
	__KER_TIMER_DESTROY,
	__KER_TIMER_SETTIME,
	__KER_TIMER_INFO,
	__KER_TIMER_ALARM,
	__KER_TIMER_TIMEOUT,
	__KER_TIMER_SPARE1,
	__KER_TIMER_SPARE2,
	__KER_SYNC_CREATE,
	__KER_SYNC_DESTROY,
	__KER_SYNC_MUTEX_LOCK,
	__KER_SYNC_MUTEX_UNLOCK,
	__KER_SYNC_CONDVAR_WAIT,
	__KER_SYNC_CONDVAR_SIGNAL,
	__KER_SYNC_SEM_POST,
	__KER_SYNC_SEM_WAIT,
	__KER_SYNC_CTL,
	__KER_SYNC_MUTEX_REVIVE,
	__KER_SCHED_GET,
	__KER_SCHED_SET,
	__KER_SCHED_YIELD,
	__KER_SCHED_INFO,
	__KER_SCHED_CTL,
	__KER_NET_CRED,
	__KER_NET_VTID,
	__KER_NET_UNBLOCK,
	__KER_NET_INFOSCOID,
	__KER_NET_SIGNAL_KILL,
	__KER_NET_SPARE1,
	__KER_NET_SPARE2,
	__KER_BAD
};
TK_STATIC_ASSERT(__KER_MSG_RECEIVEV == 14 && __KER_SYNC_CONDVAR_SIGNAL == 83 && __KER_BAD == 100,
	       "kernel call numbers of QNX 6.4");

/* Header keywords, in the order of their info_modes_t index. */
#define _TRACE_MAX_HEADER_LEN  (512)
#define _TRACE_HEADER_PREFIX   "TRACE_"
#define _TRACE_HEADER_POSTFIX  "::"
#define _TRACE_MK_HK(k)        _TRACE_HEADER_PREFIX #k _TRACE_HEADER_POSTFIX
#define _TRACE_HEADER_KEYWORDS()                                                       \
	_TRACE_MK_HK(HEADER_BEGIN), _TRACE_MK_HK(FILE_NAME), _TRACE_MK_HK(DATE),       \
	_TRACE_MK_HK(VER_MAJOR), _TRACE_MK_HK(VER_MINOR), _TRACE_MK_HK(LITTLE_ENDIAN), \
	_TRACE_MK_HK(BIG_ENDIAN), _TRACE_MK_HK(MIDDLE_ENDIAN), _TRACE_MK_HK(ENCODING), \
	_TRACE_MK_HK(BOOT_DATE), _TRACE_MK_HK(CYCLES_PER_SEC), _TRACE_MK_HK(CPU_NUM),  \
	_TRACE_MK_HK(SYSNAME), _TRACE_MK_HK(NODENAME), _TRACE_MK_HK(SYS_RELEASE),      \
	_TRACE_MK_HK(SYS_VERSION), _TRACE_MK_HK(MACHINE), _TRACE_MK_HK(SYSPAGE_LEN),   \
	_TRACE_MK_HK(HEADER_END)

/* Buffer sequence word of CONTROL BUFFER events. */
#define _TRACE_GET_BUFFNUM(b) ((b) >> 13)
#define _TRACE_GET_BUFFSEQ(b) ((b) & 0x000007FF)

/* QNX kernel buffers: 16 KiB, high-water mark at 70%. */
#define _TRACEBUFSIZE  (16 * 1024)
#define _TRACEBUFEMPTY (300)

/* ---- tracekit helpers ---------------------------------------------------------------- */

/* Internal class index (0..31) and code (0..1023) of a header word. */
#define TK_KEV_CLASS(h) (((h) >> 10) & 0x1fu)
#define TK_KEV_CODE(h)  ((h) & 0x3ffu)

/* Number of 16-byte slots needed for a payload of n_bytes (words and packed strings). */
static inline unsigned tk_kev_slots_for_bytes(size_t n_bytes)
{
	return n_bytes <= 8 ? 1u : (unsigned)((n_bytes + 7) / 8);
}

/*
 * From the API's external (class, event) numbers to the (internal class, code ranges) of
 * event headers, as QNX maps them: THREAD/VTHREAD/PROCESS events are bit masks
 * (_NTO_TRACE_THRUNNING, ...); KERCALL covers entry and exit; INT classes have the
 * pseudo-codes 1-4. tk_kev_map_events() maps the events first..last of one class;
 * tk_kev_map_class() every event of a class. Both return the number of ranges written to
 * out (at most 4), or -1 for an unknown class or events out of range.
 */
typedef struct tk_kev_range {
	unsigned cls, first, last; /* internal class 0-31, codes first..last (0-1023) */
} tk_kev_range;

#define TK_KEV_MAP_SINGLE 0x1      /* traceparser_cs(): INT classes need the whole range */
#define TK_KEV_MAP_INT_VECTORS 0x2 /* TraceEvent(): INT classes take any vector number */

TK_API int tk_kev_map_events(unsigned ext_class, unsigned first, unsigned last, unsigned flags,
			     tk_kev_range out[4]);
TK_API int tk_kev_map_class(unsigned ext_class, tk_kev_range out[4]);

/* ---- The .kev writer ----------------------------------------------------------------- */

/*
 * What goes into the header. Zero-initialise and set what you know; every NULL/0 field
 * gets a sensible default (uname() for the system keys, now for DATE, the boot time from
 * /proc/stat for BOOT_DATE, the measured cycle rate for CYCLES_PER_SEC, the number of
 * online CPUs for CPU_NUM, a minimal syspage that records CPU_NUM and CYCLES_PER_SEC).
 * User attributes are written as TRACE_<key>::<value> after SYSPAGE_LEN in the order
 * given. An empty key, a key or value containing "TRACE_" or "::", a key longer than
 * TK_KEV_ATTR_KEY_MAX bytes or ending in ':', and a key that is one of the standard
 * keywords (HEADER_BEGIN ... HEADER_END of _TRACE_HEADER_KEYWORDS(), and QNX 8's
 * NORMALIZEDN) are rejected with TK_EINVAL (tk_kev_attr_check() says which, before a file
 * is opened).
 */
typedef struct tk_kev_attr {
	const char *key;
	const char *value;
} tk_kev_attr;

/* The longest user attribute key readers take (traceparser refuses a longer one). */
#define TK_KEV_ATTR_KEY_MAX 256

typedef struct tk_kev_header {
	int big_endian;          /* 1: write big-endian events and header keys; 0: little */
	const char *file_name;   /* TRACE_FILE_NAME (default: the output path) */
	time_t date;             /* TRACE_DATE (0: now) */
	time_t boot_date;        /* TRACE_BOOT_DATE (0: system boot time) */
	uint64_t cycles_per_sec; /* TRACE_CYCLES_PER_SEC (0: tk_clock_cycles_per_sec()) */
	unsigned cpu_num;        /* TRACE_CPU_NUM (0: online CPUs) */
	const char *sysname, *nodename, *sys_release, *sys_version, *machine;
	const void *syspage;     /* raw syspage bytes (NULL: tracekit's minimal syspage) */
	size_t syspage_len;
	const tk_kev_attr *attrs; /* user attributes */
	size_t n_attrs;
	const char *ver_major, *ver_minor; /* default "1" and "01", what QNX 6.4 writes */
} tk_kev_header;

typedef struct tk_kev_writer tk_kev_writer;

/*
 * Whether the writer accepts attr as a user attribute (the rules above): TK_OK, or
 * TK_EINVAL with the reason in msg (cap bytes, NUL-terminated; msg may be NULL when cap
 * is 0). For tools that check their options before any file exists. Thread-safe.
 */
TK_API int tk_kev_attr_check(const tk_kev_attr *attr, char *msg, size_t cap);

/* flags for tk_kev_writer_open() */
#define TK_KEV_NO_AUTO_TIME 0x1 /* do not insert CONTROL TIME events on LSB rollover */

/*
 * Opens a .kev file for writing at path ("-" writes to standard output). The file is
 * written as "<path>.part" and renamed on a successful tk_kev_writer_close(), so a
 * crashed writer leaves a readable "<path>.part" and never a half-written "<path>".
 * Returns 0 or a TK_E* code; *out is NULL on failure. Not thread-safe: one writer, one
 * thread (or external locking).
 */
TK_API int tk_kev_writer_open(tk_kev_writer **out, const char *path, const tk_kev_header *hdr,
			      unsigned flags);

/*
 * Writes to a caller-owned file descriptor (a pipe, a socket, a file already open). The
 * descriptor is not closed by tk_kev_writer_close().
 */
TK_API int tk_kev_writer_open_fd(tk_kev_writer **out, int fd, const tk_kev_header *hdr,
				 unsigned flags);

/*
 * Events. `cpu` is 0..63, `cls` an internal class (_TRACE_*_C, already shifted),
 * `code` 0..1023, `t` the full 64-bit cycle count of the event. Unless the writer was
 * opened with TK_KEV_NO_AUTO_TIME, a CONTROL TIME event is written first whenever the
 * upper 32 bits of t differ from the last ones written for that CPU, so readers can
 * rebuild t from the 32-bit slot timestamp.
 *
 * tk_kev_write_event(): `words` payload words (n_words of them); up to 2 words make a
 * simple event, more make a combine event CB, CC..., CE with the same timestamp, the last
 * slot padded with a 0 word.
 * tk_kev_write_event_str(): payload words followed by a NUL-terminated string packed 8
 * bytes per slot (NUL included, zero-filled), as QNX writes names and user strings: a
 * payload of 8 bytes or less (a user string of up to 7 characters) is a single S slot,
 * more is CB, CC..., CE. Readers cannot tell such a simple event from two words;
 * traceprinter, like QNX's, prints a simple USER event as d0/d1. (tracekit before this
 * rule, and the in-process recorder, wrote short strings as CB + an all-zero CE; readers
 * accept both.)
 * A payload may not exceed TK_KEV_MAX_PAYLOAD bytes (TK_ETOOBIG).
 */
#define TK_KEV_MAX_PAYLOAD (1u << 20)
TK_API int tk_kev_write_event(tk_kev_writer *w, unsigned cpu, unsigned cls, unsigned code,
			      uint64_t t, const uint32_t *words, size_t n_words);
TK_API int tk_kev_write_event_str(tk_kev_writer *w, unsigned cpu, unsigned cls, unsigned code,
				  uint64_t t, const uint32_t *words, size_t n_words,
				  const char *str);

/*
 * Writes raw slots exactly as given (header words, timestamps and payload are in host
 * byte order and converted to the file's byte order). No TIME events are inserted.
 */
TK_API int tk_kev_write_raw(tk_kev_writer *w, const traceevent_t *events, size_t n);

/* Writes raw slots that are already in the file's byte order (a buffer dump). */
TK_API int tk_kev_write_raw_file_order(tk_kev_writer *w, const void *slots, size_t n);

/*
 * Like tk_kev_write_raw_file_order() for several runs of slots at once, in one writev()
 * where possible: iov[i] points at whole 16-byte slots (iov_len a multiple of 16).
 * Needs <sys/uio.h> for struct iovec.
 */
struct iovec;
TK_API int tk_kev_write_raw_file_order_v(tk_kev_writer *w, const struct iovec *iov, int n_iov);

/* Number of 16-byte slots written so far (TIME events included). */
TK_API uint64_t tk_kev_writer_slots(const tk_kev_writer *w);
/* Bytes the file has received so far, header included (buffered slots not yet). */
TK_API uint64_t tk_kev_writer_bytes(const tk_kev_writer *w);
/* Where the data goes until close: the temporary file's path ("<path>.part", or a unique
 * name if that was taken), "-" for standard output; "" for a writer on a caller's fd. */
TK_API const char *tk_kev_writer_temp_path(const tk_kev_writer *w);

/* Flushes buffered slots to the file (they survive a crash after this returns 0). */
TK_API int tk_kev_writer_flush(tk_kev_writer *w);

/*
 * Flushes, syncs and renames the file to its final name; frees w (NULL is accepted).
 * Returns 0 or the first error met by any call on this writer.
 */
TK_API int tk_kev_writer_close(tk_kev_writer *w);

/* Discards the file being written (removes "<path>.part") and frees w. */
TK_API void tk_kev_writer_abort(tk_kev_writer *w);

/* Text of the last error on this writer, with what and where; "" if none. */
TK_API const char *tk_kev_writer_errmsg(const tk_kev_writer *w);

/*
 * Size of tracekit's minimal syspage for a given CPU count, and the function that builds
 * it (x86 layout of QNX 6.x struct syspage_entry with a qtime section carrying
 * cycles_per_sec and boot_time). Returns bytes written, or 0 if cap is too small.
 */
TK_API size_t tk_kev_syspage_size(unsigned cpu_num);
TK_API size_t tk_kev_syspage_build(void *buf, size_t cap, unsigned cpu_num, uint64_t cycles_per_sec,
				   uint32_t boot_time, int big_endian);

/* ---- The class table ------------------------------------------------------------------ */

/*
 * Every event class by name: the external (API) classes of <sys/trace.h>, each with the
 * internal class and the event codes it covers in event headers. One table serves the
 * library, traceprinter's -c/-x and any other tool. Entries are static and immutable
 * (thread-safe). A class that QNX 6.4's API has no number for has ext_class -1.
 */
typedef struct tk_kev_class_desc {
	const char *name;     /* "KERCALLENTER": the _NTO_TRACE_ name without its prefix */
	int ext_class;        /* _NTO_TRACE_KERCALLENTER, ... (QUIP 17, SEC 18, QVM 19, PMU 20) */
	unsigned cls;         /* internal class 0..31 */
	unsigned first, last; /* event codes first..last of that class */
} tk_kev_class_desc;

/* The whole table (*n entries), most specific classes first (KERCALLENTER before KERCALL). */
TK_API const tk_kev_class_desc *tk_kev_class_table(size_t *n);
/* By name, case-insensitive, with or without "_NTO_TRACE_"; NULL when unknown. */
TK_API const tk_kev_class_desc *tk_kev_class_find(const char *name);
/* By external class number (_NTO_TRACE_*); NULL when unknown. */
TK_API const tk_kev_class_desc *tk_kev_class_by_number(int ext_class);
/* The most specific class an event header belongs to (THREAD, not PROCESS, for code 1
 * of internal class 4); NULL for internal classes 12-31 and unnamed codes. */
TK_API const tk_kev_class_desc *tk_kev_class_of(unsigned header);

/* ---- Decoded events --------------------------------------------------------------------- */

/*
 * What an event means, independently of any output format: class, event, time, CPU,
 * owner and the named, typed argument fields. traceprinter prints from it and exporters
 * build on it.
 *
 * Fields follow the QNX 6.4 argument lists (the SAT "Kernel call arguments" appendix): a
 * simple event (2 payload words) has the fast-mode fields, a combine event the wide-mode
 * ones, exactly those traceprinter prints, in its order and under its names
 * ("coid", "info->pid", ...). Numbers are converted to host order; 32-bit values are
 * sign-extended in v.i (INT) or zero-extended in v.u (the others).
 *
 * Ownership: a decoded event points into the payload it was decoded from (field str,
 * data) and into static tables (names): it is valid as long as that payload is, which
 * for a traceparser callback is the duration of the call. Copy what you keep. The
 * structure itself belongs to the caller (a stack variable is fine, no allocation).
 * Thread-safety: tk_kev_decode() is reentrant; it reads only its arguments and the
 * static tables.
 */
typedef enum tk_kev_field_type {
	TK_KEV_FIELD_INT,   /* signed integer (traceprinter "%d"/"%lld") */
	TK_KEV_FIELD_UINT,  /* unsigned integer shown in decimal */
	TK_KEV_FIELD_HEX,   /* unsigned integer shown in hex (flags, addresses, ids) */
	TK_KEV_FIELD_PTR,   /* a pointer of the traced program (v.u) */
	TK_KEV_FIELD_STR,   /* NUL-terminated text: str/len, len without the NUL */
	TK_KEV_FIELD_BYTES, /* message or string bytes in 4-byte pieces: str/len */
	TK_KEV_FIELD_WORDS, /* len raw payload words (events without a known layout):
			     * tk_kev_field_word() reads them */
	TK_KEV_FIELD_NONE   /* named argument the payload ends before (no value) */
} tk_kev_field_type;

typedef struct tk_kev_field {
	const char *name;  /* static; "" for a string piece that has no name of its own */
	uint8_t type;      /* tk_kev_field_type */
	uint8_t bits;      /* 32 or 64 for numbers */
	char fmt;          /* traceprinter's argument type: D H P E X S s N, 0 for others */
	uint8_t utf8;      /* STR/BYTES: 1 if the bytes are valid UTF-8 */
	uint32_t offset;   /* byte offset of the value in the payload */
	uint32_t len;      /* STR/BYTES: bytes (STR: NUL excluded); WORDS: words */
	union {
		uint64_t u;
		int64_t i;
	} v;
	const char *str;   /* STR/BYTES/WORDS: the bytes in the payload (not NUL-terminated) */
} tk_kev_field;

#define TK_KEV_MAX_FIELDS 32

/* tk_kev_decoded.flags */
#define TK_KEV_DEC_OWNER_KNOWN 0x01 /* pid/tid name the event's thread */
#define TK_KEV_DEC_WIDE        0x02 /* a combine event (wide-mode fields) */
#define TK_KEV_DEC_UNKNOWN     0x04 /* no known layout: one WORDS field "d" */
#define TK_KEV_DEC_TRUNCATED   0x08 /* the payload ended before the argument list */
#define TK_KEV_DEC_FAILED      0x10 /* a kernel call exit with ret_val -1: fields ret_val, errno */
#define TK_KEV_DEC_TK_FORM     0x20 /* a tracekit 64-bit form (SYSTEM FUNC_ENTER/EXIT, ADDRESS) */

typedef struct tk_kev_decoded {
	unsigned header;        /* header word, host order */
	unsigned cls;           /* internal class 0..31 */
	unsigned code;          /* event code 0..1023 */
	unsigned cpu;           /* 0..63 */
	const tk_kev_class_desc *cls_desc; /* tk_kev_class_of(header), or NULL */
	char event_name[32];    /* "MSG_SENDV", "THRUNNING", "PROCCREATE_NAME", "TIME", "" */
	int number;             /* kernel call number, thread state, user event code, ...; -1 */
	uint32_t time;          /* the slot's 32-bit timestamp */
	uint64_t cycles;        /* 64-bit cycle count (tk_kev_event.clk) */
	uint64_t time_ns;       /* tk_kev_event.ns: nanoseconds on the file's time line */
	int32_t pid, tid;       /* owner; 0 when unknown (see flags) */
	unsigned flags;         /* TK_KEV_DEC_* */
	const unsigned *data;   /* payload words in file byte order, as given */
	unsigned len;           /* number of payload words */
	int swap;               /* 1 when payload words need swapping */
	unsigned n_fields;
	tk_kev_field fields[TK_KEV_MAX_FIELDS];
} tk_kev_decoded;

struct tk_kev_event;

/* tk_kev_decode() flags */
#define TK_KEV_DECODE_QNX_STRICT 0x1 /* QNX 6.4 layouts only (no tracekit 64-bit forms) */
/* KER_CALL/KER_EXIT codes are Linux system calls (tracelogger's files, header attribute
 * TRACEKIT_KERCALLS=linux-<arch>; docs/collect.md has the code layout): named by the table
 * of that architecture. The same bits are printer flags. */
#define TK_KEV_DECODE_LINUX_X86_64  0x10
#define TK_KEV_DECODE_LINUX_AARCH64 0x20
#define TK_KEV_DECODE_LINUX_I386    0x40
#define TK_KEV_DECODE_LINUX_MASK    0x70
/* The TK_KEV_DECODE_LINUX_* (= TK_KEV_PRINT_LINUX_*) flag for a TRACEKIT_KERCALLS value
 * ("linux-x86_64", "linux-aarch64", "linux-i386"), or 0 for any other (QNX kernel calls). */
TK_API unsigned tk_kev_kercalls_flags(const char *abi, size_t len);

/*
 * Decodes ev into *out (every field set; pid/tid 0 and OWNER_KNOWN clear: the parser's
 * tk_traceparser_decode() fills them). Returns 0, or TK_EINVAL for NULL arguments or a
 * payload pointer missing.
 */
TK_API int tk_kev_decode(const struct tk_kev_event *ev, unsigned flags, tk_kev_decoded *out);

/* Field by name (first match), or NULL. */
TK_API const tk_kev_field *tk_kev_field_find(const tk_kev_decoded *d, const char *name);
/* Word i (host order) of a WORDS field; 0 past its end. */
TK_API uint32_t tk_kev_field_word(const tk_kev_decoded *d, const tk_kev_field *f, unsigned i);

/* ---- Events as text (the traceprinter format) ----------------------------------------- */

/*
 * One reassembled event, as a traceparser callback receives it, plus what the printer
 * needs to know about the file.
 */
typedef struct tk_kev_event {
	unsigned header;        /* header word, host order */
	unsigned time;          /* 32-bit timestamp, host order */
	const unsigned *data;   /* payload words in FILE byte order */
	unsigned len;           /* number of payload words (2 for a simple event) */
	int swap;               /* 1 when payload words must be byte-swapped */
	uint64_t clk;           /* full 64-bit cycle count (for TK_KEV_PRINT_TIME_CYCLES) */
	uint64_t ns;            /* nanoseconds on the file's time line (TK_KEV_PRINT_TIME_NS):
				 * tk_traceparser_ns() */
} tk_kev_event;

/* Printer flags. */
#define TK_KEV_PRINT_NO_NEWLINES  0x1 /* traceprinter -n: argument lines joined by spaces */
#define TK_KEV_PRINT_TIME_CYCLES  0x2 /* "t:0x%016llx" 64-bit cycles instead of the LSB */
#define TK_KEV_PRINT_TIME_NS      0x4 /* "t:<sec>.<nsec>" since boot instead of the LSB */
#define TK_KEV_PRINT_QNX_STRICT   0x8 /* omit tracekit's additions (generic lines for
				       * events QNX traceprinter 1.02 does not print) */
#define TK_KEV_PRINT_LINUX_X86_64  TK_KEV_DECODE_LINUX_X86_64 /* Linux system calls */
#define TK_KEV_PRINT_LINUX_AARCH64 TK_KEV_DECODE_LINUX_AARCH64
#define TK_KEV_PRINT_LINUX_I386    TK_KEV_DECODE_LINUX_I386

typedef struct tk_kev_printer tk_kev_printer;
/* Replaces the printer's flags (e.g. TK_KEV_PRINT_LINUX_* once the header is read). */
TK_API int tk_kev_printer_set_flags(tk_kev_printer *p, unsigned flags);
TK_API unsigned tk_kev_printer_flags(const tk_kev_printer *p);

/*
 * Creates a printer writing to stream. Lines are collected in the printer and written to
 * the stream in blocks of 256 KiB: call tk_kev_printer_flush() before writing anything
 * else to the same stream. Returns 0, TK_EINVAL or TK_ENOMEM. One printer per thread.
 */
TK_API int tk_kev_printer_new(tk_kev_printer **out, FILE *stream, unsigned flags);
/* Writes the collected lines to the stream. Returns 0, or TK_EIO if the stream fails. */
TK_API int tk_kev_printer_flush(tk_kev_printer *p);
/* Flushes and frees the printer (NULL accepted); the stream is not closed. */
TK_API void tk_kev_printer_free(tk_kev_printer *p);

/*
 * Prints one event as QNX traceprinter 1.02 prints it: "t:0x<lsb> CPU:<nn> " and the
 * class/event text with its arguments (docs/traceprinter.md lists every format). Events
 * it has no format for get a generic line with every payload word. Returns 0, TK_ENOMEM,
 * or TK_EIO when writing a block to the stream failed.
 */
TK_API int tk_kev_print_event(tk_kev_printer *p, const tk_kev_event *ev);

/*
 * Formats one event into buf (NUL-terminated, truncated to cap). Returns the length the
 * full text needs, like snprintf.
 */
TK_API size_t tk_kev_format_event(char *buf, size_t cap, unsigned flags, const tk_kev_event *ev);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_KEV_H */
