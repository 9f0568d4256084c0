/* SPDX-License-Identifier: MIT */
/*
 * tracekit/trace.h: recording events from a program: QNX's TraceEvent() control call and
 * its convenience functions (trace_logi(), trace_logf(), ...), emulated in user space on
 * per-thread buffers (tracekit/buffer.h); the inline fast-path emitter; and the in-process
 * logger that drains the buffers into a .kev file.
 *
 *   tk_logger_start("app.kev", NULL);                   // or run with TRACEKIT_LOG=app.kev
 *   TraceEvent(_NTO_TRACE_ADDALLCLASSES);
 *   TraceEvent(_NTO_TRACE_START);
 *   tk_trace_user(12, x, y);                            // ~ a clock read and a 16-byte store
 *   trace_logf(13, "phase %d done", n);
 *   tk_logger_stop();                                   // also done at exit
 *
 * docs/recording.md describes the modes, the filters, the buffers and the logger.
 */
#ifndef TRACEKIT_TRACE_H
#define TRACEKIT_TRACE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "tracekit/buffer.h"
#include "tracekit/kev.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif
#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define TK__HAVE_RSEQ 1
#endif
#endif
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- TraceEvent() modes: (number of arguments << 28) | index ------------------------ */
#define _NTO_TRACE_ADDALLCLASSES     ((0x00000001 << 28) | 1)
#define _NTO_TRACE_DELALLCLASSES     ((0x00000001 << 28) | 2)
#define _NTO_TRACE_ADDCLASS          ((0x00000002 << 28) | 3)
#define _NTO_TRACE_DELCLASS          ((0x00000002 << 28) | 4)
#define _NTO_TRACE_ADDEVENT          ((0x00000003 << 28) | 5)
#define _NTO_TRACE_DELEVENT          ((0x00000003 << 28) | 6)
#define _NTO_TRACE_ADDEVENTHANDLER   ((0x00000005 << 28) | 7)
#define _NTO_TRACE_DELEVENTHANDLER   ((0x00000003 << 28) | 8)
#define _NTO_TRACE_INSERTEVENT       ((0x00000005 << 28) | 9)
#define _NTO_TRACE_START             ((0x00000001 << 28) | 10)
#define _NTO_TRACE_STOP              ((0x00000001 << 28) | 11)
#define _NTO_TRACE_ALLOCBUFFER       ((0x00000003 << 28) | 12)
#define _NTO_TRACE_DEALLOCBUFFER     ((0x00000001 << 28) | 13)
#define _NTO_TRACE_FLUSHBUFFER       ((0x00000001 << 28) | 14)
#define _NTO_TRACE_QUERYEVENTS       ((0x00000001 << 28) | 15)
#define _NTO_TRACE_SETALLCLASSESFAST ((0x00000001 << 28) | 16)
#define _NTO_TRACE_SETALLCLASSESWIDE ((0x00000001 << 28) | 17)
#define _NTO_TRACE_SETCLASSFAST      ((0x00000002 << 28) | 18)
#define _NTO_TRACE_SETCLASSWIDE      ((0x00000002 << 28) | 19)
#define _NTO_TRACE_SETEVENTFAST      ((0x00000003 << 28) | 20)
#define _NTO_TRACE_SETEVENTWIDE      ((0x00000003 << 28) | 21)
#define _NTO_TRACE_SETCLASSPID       ((0x00000003 << 28) | 22)
#define _NTO_TRACE_SETCLASSTID       ((0x00000004 << 28) | 23)
#define _NTO_TRACE_SETEVENTPID       ((0x00000004 << 28) | 24)
#define _NTO_TRACE_SETEVENTTID       ((0x00000005 << 28) | 25)
#define _NTO_TRACE_CLRCLASSPID       ((0x00000002 << 28) | 26)
#define _NTO_TRACE_CLRCLASSTID       ((0x00000002 << 28) | 27)
#define _NTO_TRACE_CLREVENTPID       ((0x00000003 << 28) | 28)
#define _NTO_TRACE_CLREVENTTID       ((0x00000003 << 28) | 29)
#define _NTO_TRACE_INSERTSUSEREVENT  ((0x00000004 << 28) | 30)
#define _NTO_TRACE_INSERTCUSEREVENT  ((0x00000004 << 28) | 31)
#define _NTO_TRACE_INSERTUSRSTREVENT ((0x00000003 << 28) | 32)
#define _NTO_TRACE_STARTNOSTATE      ((0x00000001 << 28) | 33)
#define _NTO_TRACE_SETRINGMODE       ((0x00000001 << 28) | 34)
#define _NTO_TRACE_SETLINEARMODE     ((0x00000001 << 28) | 35)
#define _NTO_TRACE_ADDCLASSEVHANDLER ((0x00000004 << 28) | 36)
#define _NTO_TRACE_DELCLASSEVHANDLER ((0x00000002 << 28) | 37)
#define _NTO_TRACE_SKIPBUFFER        ((0x00000001 << 28) | 38)
#define _NTO_TRACE_OVERWRITEBUFFER   ((0x00000001 << 28) | 39)
#define _NTO_TRACE_QUERYVERSION      ((0x00000001 << 28) | 40)
#define _NTO_TRACE_QUERYSUPPORT      ((0x00000001 << 28) | 41)
#define _NTO_TRACE_INSERTSCLASSEVENT ((0x00000005 << 28) | 42)
#define _NTO_TRACE_INSERTCCLASSEVENT ((0x00000005 << 28) | 43)
/* The SAT guide's name for INSERTCUSEREVENT. */
#define _NTO_TRACE_INSERTUSEREVENT   _NTO_TRACE_INSERTCUSEREVENT

/* QUERYSUPPORT flags */
#define _NTO_TRACE_NOINSTRSUPP (0x00000000)
#define _NTO_TRACE_SUPPINSTR   (0x00000001 << 0)

/* Buffers: 1024 slots of 16 bytes. */
#define _TRACELEMENTS (_TRACEBUFSIZE / sizeof(traceevent_t))

/* ---- dynamic rules filter --------------------------------------------------------------- */
enum { _NTO_TRACE_FIPID, _NTO_TRACE_FITID, _NTO_TRACE_FI_NUM };
#define _NTO_TRACE_FMEMPTY (0x00000000)
#define _NTO_TRACE_FMPID   (1 << _NTO_TRACE_FIPID)
#define _NTO_TRACE_FMTID   (1 << _NTO_TRACE_FITID)

/*
 * What an event handler sees. The handler sets data_array (room for the payload words,
 * 20 is plenty for any event but strings: up to the array's size is copied, el_num says how
 * many words the event has); the library fills header, el_num and the features.
 * An event with both an event handler and a class handler runs the event's handler first;
 * the class handler runs only if the first said yes (either may refuse the event). Handlers
 * run one at a time (serialized by the library), in the thread that emitted the event.
 */
typedef struct {
	__traceentry header;                 /* the event's header word */
	_Uint32t *data_array;                /* set by the user; payload words are copied here */
	_Uint32t el_num;                     /* number of payload words of the event */
	void *area;                          /* user data, untouched */
	_Uint32t feature_mask;               /* _NTO_TRACE_FMPID | _NTO_TRACE_FMTID */
	_Uint32t feature[_NTO_TRACE_FI_NUM]; /* process and thread IDs of the emitter */
} event_data_t;

/* Capacity of data_array tracekit assumes when the handler does not say otherwise. */
#define TK_TRACE_EVENT_DATA_WORDS 20

/*
 * The control call. Modes and arguments are those of QNX's TraceEvent() (SAT guide,
 * chapter 10); docs/recording.md lists each mode's behaviour in tracekit. Returns 0 (the
 * event count for _NTO_TRACE_QUERYEVENTS) or -1 with errno: EINVAL for a bad argument,
 * ENOTSUP for an unknown mode, EFAULT for a NULL pointer or a call out of order, ENOMEM
 * when buffers cannot be allocated, EIO when FLUSHBUFFER could not write.
 * tk_trace_errmsg() tells what was wrong. An insert that a filter refuses (its class or
 * event off, a pid/tid rule, a handler returning 0) or that is dropped for want of a
 * buffer still returns 0, as on QNX, where the filters decide what is stored and the
 * call's result says only whether its arguments were valid. Thread-safe. From an event
 * handler: the insert modes, START, STARTNOSTATE and STOP (what QNX allows), and also the
 * other modes, handler modes included (the handler's own thread already holds the
 * handler lock).
 */
TK_API int TraceEvent(int mode, ...);

/* Text of the last TraceEvent() error of the calling thread ("" if none). */
TK_API const char *tk_trace_errmsg(void);

/*
 * Trace buffers in memory the caller provides, e.g. a MAP_SHARED mapping another process
 * also maps: what TraceEvent(_NTO_TRACE_ALLOCBUFFER, n_buffers) does with memory of its
 * own. tk_trace_pool_size() is the bytes needed for n_buffers 16 KiB buffers (0 if
 * n_buffers is 0 or more than ALLOCBUFFER allows). The region (64-byte aligned, at least
 * that size) is formatted as a tk_pool (tracekit/buffer.h) laid out as docs/recording.md,
 * "Shared pool layout", describes, so another process can tk_pool_attach() it and read
 * every committed event, also after this process died. The region stays the caller's: it
 * must stay mapped while this process may trace into it (until the next ALLOCBUFFER,
 * DEALLOCBUFFER or tk_trace_pool_init() has returned, or the process ends). Returns 0,
 * TK_EINVAL (bad region or count) or TK_ESTATE (tracing runs or a logger uses the
 * buffers, as for ALLOCBUFFER).
 */
TK_API size_t tk_trace_pool_size(unsigned n_buffers);
TK_API int tk_trace_pool_init(void *region, size_t region_size, unsigned n_buffers);

/* QNX's convenience calls: user events with numbers, formatted text, or bytes. */
TK_API int trace_logi(int code, unsigned d1, unsigned d2);
TK_API int trace_logf(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
TK_API int trace_nlogf(int code, int max, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
TK_API int trace_vnlogf(int code, int max, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
TK_API int trace_logb(int code, const void *data, size_t nbytes);
/* An event of any internal class (0-31) with the given payload bytes. */
TK_API int trace_logbc(int _class, int event, const void *data, size_t nbytes);
/* A SYSTEM ADDRESS event holding the caller's address. */
TK_API int trace_here(void);

/*
 * The hooks GCC and Clang call on every function entry and exit of code compiled with
 * -finstrument-functions: SYSTEM FUNC_ENTER / FUNC_EXIT events (this function, call site).
 * Fast form: the low 32 bits of both; wide form (SETEVENTWIDE or SETCLASSWIDE on SYSTEM):
 * both full 64-bit addresses. Link libtracekit and compile the code to trace with
 * -finstrument-functions; the hooks themselves are never instrumented.
 */
TK_API void __cyg_profile_func_enter(void *this_fn, void *call_site) __attribute__((no_instrument_function));
TK_API void __cyg_profile_func_exit(void *this_fn, void *call_site) __attribute__((no_instrument_function));

/* Longest text trace_logf() records (longer text is cut). */
#define TK_TRACE_LOGF_MAX 4096

/* ---- the in-process logger ----------------------------------------------------------- */

typedef struct tk_logger_options {
	unsigned n_buffers;    /* 16 KiB buffers to allocate if none are (default 1024 = 16 MiB) */
	int ring;              /* 1: flight recorder (keep the newest buffers, write on flush/stop/exit),
				* 0: linear (write every buffer); without options the mode set with
				* TraceEvent(_NTO_TRACE_SETRINGMODE / SETLINEARMODE) stays */
	int big_endian;        /* byte order of the file: the host's only (1 on a little-endian
				* host: TK_ENOTSUP) */
	const tk_kev_attr *attrs; /* extra header attributes */
	size_t n_attrs;
} tk_logger_options;

typedef struct tk_logger_stats {
	uint64_t events_written;  /* 16-byte slots written to the file */
	uint64_t buffers_written; /* buffers and partial buffers written */
	uint64_t bytes_written;
	uint64_t events_dropped;  /* records lost for want of a free buffer (also in the file) */
	uint64_t buffers_overwritten; /* ring mode: buffers reused before they were written */
	uint64_t buffers_lost;    /* buffers not (or not wholly) written because of a write error */
	int write_error;          /* first write error (TK_E*), 0 if none */
	uint64_t events_lost;     /* 16-byte slots not written because of a write error; with
				   * events_written, every slot the logger was given */
} tk_logger_stats;

/*
 * Starts the logger thread writing to path ("<path>.part" until tk_logger_stop()
 * completes; "-" for standard output). Allocates buffers if TraceEvent(ALLOCBUFFER) was not
 * called. Does not start tracing: call TraceEvent(_NTO_TRACE_START). With TRACEKIT_LOG=path
 * in the environment, an unmodified program linked with libtracekit starts the logger, adds
 * all classes and starts tracing before main() (TRACEKIT_LOG_BUFFERS=n, TRACEKIT_LOG_RING=1
 * tune it; docs/recording.md). A logger started by TRACEKIT_LOG hands over to this call:
 * its file is completed with what was recorded until then (so do ALLOCBUFFER,
 * DEALLOCBUFFER and tk_trace_pool_init()). Returns 0, TK_EBUSY if a logger started by the
 * program runs, TK_EINVAL with tk_logger_errmsg() saying why for a directory or a name
 * too long, or the error of creating the file.
 */
TK_API int tk_logger_start(const char *path, const tk_logger_options *opts);

/*
 * Stops tracing, writes every buffer (full and partial), closes the file and renames it to
 * its final name, stops the thread. Also done at exit. Returns 0, or the first write error
 * (the data written before it stays in "<path>.part"). TK_ESTATE if no logger runs.
 */
TK_API int tk_logger_stop(void);

/* Writes every buffer now, full and partial (what TraceEvent(_NTO_TRACE_FLUSHBUFFER) does). */
TK_API int tk_logger_flush(void);

TK_API int tk_logger_get_stats(tk_logger_stats *out);
/* Text of the logger's last error, with the file and byte offset ("" if none). */
TK_API const char *tk_logger_errmsg(void);

/* ---- the inline fast path ------------------------------------------------------------- */

/*
 * Per-class emission mode; public only for the inline emitter. tk__trace_modes points to
 * the process's own modes (tk__trace_mode) or, while the process is attached to a session
 * (docs/sessions.md), to its registry slot's in the shared region, which any attached
 * process (or the logger) updates when it changes the session's configuration.
 */
enum { TK__TRACE_OFF = 0, TK__TRACE_FAST = 1, TK__TRACE_FILTERED = 2 };
TK_API extern TK__ATOMIC(unsigned char) tk__trace_mode[32];
TK_API extern TK__ATOMIC(TK__ATOMIC(unsigned char) *) tk__trace_modes;
TK_API extern tk_buffer_id tk__trace_buffer_id;

struct tk__trace_thread {
	uint64_t time_key; /* ~((msb << 32) | cpu) of the last TIME event written */
	uint32_t tid;
	uint32_t in_handler;
	uint32_t announced; /* tracing session in which this thread was announced */
};
extern __thread struct tk__trace_thread tk__trace_tls __attribute__((tls_model("initial-exec")));

TK_API int tk__trace_emit_slow(unsigned cls, unsigned code, uint32_t d0, uint32_t d1);
TK_API unsigned tk__trace_cpu_slow(void);

static inline uint64_t tk__trace_clock(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* The CPU the thread runs on: glibc's rseq area (two loads), else a getcpu call. */
static inline unsigned tk__trace_cpu(void)
{
#if defined(TK__HAVE_RSEQ) && defined(__GNUC__)
	if (__builtin_expect(__rseq_size != 0, 1))
		return *(volatile const uint32_t *)((const char *)__builtin_thread_pointer() + __rseq_offset + 4) & 63u;
#endif
	return tk__trace_cpu_slow();
}

/*
 * Records a simple event of internal class `cls` (0-31, e.g. _TRACE_USER_C >> 10) and
 * code 0-1023 with two payload words. Disabled (tracing stopped or class filtered out):
 * one load and one predictable branch. Enabled with no per-event filter: a clock read,
 * a CPU read, a 16-byte store into the thread's buffer and one release store of the
 * thread's position (into the buffer's descriptor, where a drainer reads it). Returns 0,
 * also when a filter refuses the event or it is dropped for want of a buffer (counted):
 * as with TraceEvent()'s inserts, filters decide what is recorded, not whether the call
 * succeeded. On the fast path cls and code are cut to 5 and 10 bits; on the others a
 * class or code out of range returns -1 with errno EINVAL. Never blocks.
 */
static inline int tk_trace_emit(unsigned cls, unsigned code, uint32_t d0, uint32_t d1)
{
	unsigned mode = atomic_load_explicit(&atomic_load_explicit(&tk__trace_modes, memory_order_relaxed)[cls & 31u],
					     memory_order_relaxed);
	struct tk__buffer_thread *b;
	TK__ATOMIC(uint32_t) *pos;
	uint32_t off;
	uint64_t t;
	unsigned cpu;
	traceevent_t *s;

	if (__builtin_expect(mode != TK__TRACE_FAST, 0))
		return mode == TK__TRACE_OFF ? 0 : tk__trace_emit_slow(cls, code, d0, d1);
	/* tk_buffer_reserve() and tk_buffer_commit() for 16-byte records, each field read once.
	 * A full buffer (or none) takes the slow path, which starts a buffer with its own TIME
	 * event before reading the clock, so the clock is never older than the buffer's TIME. */
	b = &tk__buffer_tls[tk__trace_buffer_id];
	pos = atomic_load_explicit(&b->pos, memory_order_relaxed);
	if (__builtin_expect(pos == NULL, 0))
		return tk__trace_emit_slow(cls, code, d0, d1);
	off = atomic_load_explicit(pos, memory_order_relaxed);
	if (__builtin_expect(off >= atomic_load_explicit(&b->limit, memory_order_relaxed), 0))
		return tk__trace_emit_slow(cls, code, d0, d1);
	t = tk__trace_clock();
	cpu = tk__trace_cpu();
	if (__builtin_expect(~tk__trace_tls.time_key != (((t >> 32) << 32) | cpu), 0))
		return tk__trace_emit_slow(cls, code, d0, d1); /* writes a TIME event first */
	s = (traceevent_t *)(void *)(atomic_load_explicit(&b->base, memory_order_relaxed) + off);
	s->header = (cpu << 24) | ((cls & 31u) << 10) | (code & 0x3ffu);
	s->data[0] = (uint32_t)t;
	s->data[1] = d0;
	s->data[2] = d1;
	atomic_store_explicit(pos, off + (uint32_t)sizeof(traceevent_t), memory_order_release);
	return 0;
}

/* A simple user event (class USER): code 0-1023, two payload words. */
static inline int tk_trace_user(unsigned code, uint32_t d0, uint32_t d1)
{
	return tk_trace_emit(_TRACE_USER_C >> 10, code, d0, d1);
}

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_TRACE_H */
