/* SPDX-License-Identifier: MIT */
/*
 * Private: the state of the user-space TraceEvent() implementation, shared by
 * trace_event.c (the control call and filters), trace_emit.c (emission: the record path
 * into the calling thread's buffer), trace_pool.c (the buffers' hooks into the pool, and
 * the drainer registered to empty it), trace_state.c (START's /proc snapshot) and
 * trace_logger.c (the in-process logger: one drainer, writing a .kev file).
 */
#ifndef TRACE_INTERNAL_H
#define TRACE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "session/session_layout.h"
#include "tracekit/trace.h"

#define TRACE_N_CLASSES 32u  /* internal classes: 5 bits of the header */
#define TRACE_N_CODES 1024u  /* event codes of a class: 10 bits */
#define TRACE_CLASS_SHIFT 10 /* where the class sits in a header (_TRACE_USER_C, ...) */
/* The internal class number of a header class constant, and back. */
#define TRACE_CLS(hdr_class) ((unsigned)(hdr_class) >> TRACE_CLASS_SHIFT)
#define TRACE_CLASS_BITS(cls) ((unsigned)(cls) << TRACE_CLASS_SHIFT)
#define TRACE_BITMAP_WORDS (TRACE_N_CODES / 64u) /* one bit per code */
#define TRACE_DEFAULT_BUFFERS 1024u /* tk_logger_start() and TRACEKIT_LOG: 16 MiB */
#define TRACE_BUFFER_SLOTS 1024u /* 16 KiB buffers of 16-byte slots, as QNX */
#define TRACE_BUFFER_BYTES (TRACE_BUFFER_SLOTS * 16u)
#define TRACE_MAX_BUFFERS (1u << 20)
#define TRACE_MAX_WORDS (TK_KEV_MAX_PAYLOAD / 4u)
#define TRACE_PRESENT_SLOTS 8192u /* power of two */
#define TRACE_MAX_RANGES 32u      /* code ranges of one (class, event mask): one per mask bit */
/* Every buffer starts with CONTROL TIME (slot 0, so that the next slot, CONTROL BUFFER, and
 * every later one have their 64-bit time from the buffer alone) and CONTROL BUFFER. */
#define TRACE_SLOT_BUFFER 1u
/* ... then CONTROL DROPPED, if records were lost since the last one was written, then the
 * owner's THREAD THRUNNING (at TRACE_SLOT_OWNER, or one later after a DROPPED). */
#define TRACE_SLOT_DROPPED 2u
#define TRACE_SLOT_OWNER 2u
/* CONTROL BUFFER's first word: the buffer's index in the pool and its sequence number. */
#define TRACE_BUFFER_IDX_SHIFT 13u
#define TRACE_BUFFER_SEQ_MASK 0x7ffu
/* The class and code bits of a header (what identifies an event, without CPU and
 * structure flags). */
#define TRACE_HDR_EVENT_MASK 0xc0007fffu
#define TRACE_IS_CONTROL(header, code) (((header) & TRACE_HDR_EVENT_MASK) == (_TRACE_CONTROL_C | (code)))

/* Filters (struct trace_filter) live in the configuration (session_layout.h): in a
 * session's region, read by every attached process. Handlers stay per process. */

struct trace_handler { /* written under handler_lock; read by emitters holding it */
	int (*fn)(event_data_t *);
	event_data_t *data;
};

/* The handlers of one (internal class, code): this process's only (the dynamic rules
 * filter is per process, also in a session). */
struct trace_code {
	struct trace_handler class_handler, event_handler;
	_Atomic int special; /* a handler set */
};

/*
 * Locks, always taken in this order (a thread holding one never waits for an earlier one):
 *   1. handler_lock: held while a handler runs (handlers run one at a time, as in the
 *      kernel) and, before `lock`, while a handler mode changes handlers. A handler may call
 *      START, STARTNOSTATE, STOP and the inserts (QNX allows these), and any other mode:
 *      its thread already holds handler_lock, so the handler modes do not take it again.
 *   2. lock: configuration changes (never held while events are emitted or handlers run).
 *   3. the buffer module's registry lock, then one thread's buffer lock (buffer.c).
 * The logger's own mutex (trace_logger.c) is taken alone, never while waiting for another;
 * STOP and FLUSHBUFFER wait for the logger thread with none of 2-3 held, and the logger
 * thread takes only 3.
 */
struct trace_state {
	pthread_mutex_t lock;         /* 2: configuration changes */
	pthread_mutex_t handler_lock; /* 1: handlers run one at a time; handler changes */
	_Atomic(tk_pool *) pool;   /* the buffers, NULL until ALLOCBUFFER (a session's while attached) */
	tk_pool *retired;          /* previous pool, kept mapped: see DEALLOCBUFFER */
	/*
	 * The configuration: started, ring, overwrite, the enabled and wide bitmaps, the pid/tid
	 * rules (session_layout.h). The process's own (local_config) or, while attached, the
	 * session's in the shared region, changed there under the session's lock too (lock
	 * order: 2, then the session's lock).
	 */
	_Atomic(struct tk__trace_config *) cfg;
	_Atomic(tk_session *) sess;     /* the session attached to, NULL if none */
	_Atomic(struct trace_code *) codes; /* [TRACE_N_CLASSES * TRACE_N_CODES], allocated on first handler */
	unsigned n_handlers[TRACE_N_CLASSES]; /* codes of a class with a handler */
	/* Threads that existed when tracing started (announced by START, if at all): an
	 * open-addressing table of (session << 32 | tid); entries of older sessions are free. */
	_Atomic uint32_t session;
	_Atomic uint64_t present[TRACE_PRESENT_SLOTS];
};

extern struct trace_state tk__trace;
extern struct tk__trace_config tk__trace_local_config;

static inline struct tk__trace_config *trace_cfg(void)
{
	return atomic_load_explicit(&tk__trace.cfg, memory_order_acquire);
}

/* The modes this process's emitter reads: tk__trace_mode, or its registry slot's. */
static inline _Atomic unsigned char *trace_modes(void)
{
	return atomic_load_explicit(&tk__trace_modes, memory_order_relaxed);
}

static inline unsigned trace_mode(unsigned cls)
{
	return atomic_load_explicit(&trace_modes()[cls & (TRACE_N_CLASSES - 1)], memory_order_relaxed);
}

static inline int trace_bit(_Atomic uint64_t *bits, unsigned code)
{
	return (int)((atomic_load_explicit(&bits[code >> 6], memory_order_relaxed) >> (code & 63)) & 1);
}

/* What a thread's last TIME event covers: the upper 32 bits of the time and the CPU. */
static inline uint64_t tk__trace_time_key(uint64_t t, unsigned cpu)
{
	return ((t >> 32) << 32) | cpu;
}

/* trace_event.c */
void tk__trace_recompute_modes(void); /* lock held (and, attached, not the session's: taken here) */
uint32_t tk__trace_handler_classes(void); /* classes with a handler of this process (lock held) */
int tk__trace_set_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tk__trace_ensure_buffer_id(void);

/* trace_emit.c: emission */
/* Writes an event (payload words, then an optional NUL-terminated string) through the
 * filters. Returns 0, or -1 with errno on a bad argument. */
int tk__trace_write(unsigned cls, unsigned code, const uint32_t *words, size_t n_words, const char *str,
		    size_t str_len, int filtered);
/* Writes a raw slot (INSERTEVENT): header and timestamp as given. */
int tk__trace_write_raw(uint32_t header, uint32_t time, uint32_t d0, uint32_t d1);
/* Emits the process and its threads (START). */
void tk__trace_emit_state(void);
void tk__trace_emit_maps(void); /* trace_maps.c: SYSTEM MMAP of each executable mapping */
/* Notes the threads that exist now and opens a new session (START, STARTNOSTATE): threads
 * created later announce themselves (THCREATE, PROCTHREAD_NAME) with their first buffer. */
void tk__trace_new_session(void);
int tk__trace_passes_filters(unsigned cls, unsigned code, const uint32_t *words, size_t n_words);
int tk__trace_filter_passes(const struct trace_filter *f, uint32_t tid); /* pid/tid rule only */
uint32_t tk__trace_tid(void);
uint32_t tk__trace_pid(void); /* trace_pool.c: getpid(), kept */

/* trace_state.c: START's snapshot and its helpers */
int tk__trace_read_small(const char *path, char *buf, size_t cap); /* 0, or -1 */
void tk__trace_thread_words(uint32_t pid, uint32_t tid, uint32_t w[4]); /* pid, tid, prio, policy */

/*
 * trace_pool.c: sinks. A drainer empties the pool's queue of full buffers (and, on flush,
 * the threads' partial buffers) somewhere: the in-process logger into a .kev file; later a
 * shared-memory session. One is attached at a time. Its struct and ctx stay valid for the
 * life of the process (writers may still call wake after it detached). Callbacks:
 *   wake     buffers wait (called by writers, on their own thread: must never block)
 *   flush    FLUSHBUFFER: everything committed so far written before it returns; TK_OK or
 *            TK_E*, errmsg(ctx) then says why
 *   stopped  tracing was stopped (STOP); called with no trace lock held
 *   yield    optional: the program takes the buffers for itself (ALLOCBUFFER,
 *            DEALLOCBUFFER, tk_trace_pool_init, tk_logger_start); a drainer the program
 *            did not ask for (TRACEKIT_LOG) lets go, detached when it returns 1
 * Sources (the emitters, and later a kernel collector) write through trace_emit.c's record
 * path into the calling thread's buffer; trace_pool.c's hooks give and take the buffers.
 */
struct tk__trace_drainer {
	const char *name;
	void *ctx;
	void (*wake)(void *ctx);
	int (*flush)(void *ctx);
	const char *(*errmsg)(void *ctx);
	void (*stopped)(void *ctx);
	int (*yield)(void *ctx);
};
int tk__trace_drainer_attach(const struct tk__trace_drainer *d); /* TK_OK, TK_EBUSY */
void tk__trace_drainer_detach(const struct tk__trace_drainer *d);
const struct tk__trace_drainer *tk__trace_drainer(void);        /* NULL if none */
void tk__trace_drainer_wake(void);
int tk__trace_drainer_yield(void);

/*
 * trace_session.c: attaching to a session (TRACEKIT_SESSION, or a live "default" one):
 * at load, and on the first TraceEvent() (tk__trace_session_attach_once). While attached,
 * the pool is the session's, the configuration the region's, the modes the process's
 * registry slot's. The slow paths call tk__trace_session_catch_up() first: a process
 * announces itself after a START made elsewhere, and a fork()ed child re-registers.
 */
void tk__trace_session_attach_once(void);
void tk__trace_session_decline(void); /* the program's own buffers: never attach later */
void tk__trace_session_catch_up_slow(void);
static inline void tk__trace_session_catch_up(void)
{
	if (__builtin_expect(atomic_load_explicit(&tk__trace.sess, memory_order_relaxed) != NULL, 0))
		tk__trace_session_catch_up_slow();
}
/* Attached: START/STARTNOSTATE (lock held, the session's not): starts the session's trace and
 * announces this process. Returns 1 if the trace was stopped before. */
int tk__trace_session_start(int with_state);
/* Attached: FLUSHBUFFER and STOP queue the caller's partial buffer and wake the logger. */
void tk__trace_session_flush(void);
int tk__trace_session_flushing(void); /* 1 on a thread inside tk__trace_session_flush() */

/* trace_pool.c: TIME, BUFFER, THRUNNING of a buffer's head; returns the slots (3) */
size_t tk__trace_buffer_head(traceevent_t *s, unsigned cpu, uint64_t t, uint32_t idx, uint32_t seq, uint32_t pid,
			     uint32_t tid);

/* buffer hooks (trace_pool.c), used when defining the trace buffer */
void *tk__trace_buffer_full(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n, void *user);
void *tk__trace_buffer_acquire(tk_buffer_id id, void *user);
void tk__trace_buffer_release(tk_buffer_id id, void *buf, void *user);
size_t tk__trace_buffer_start(tk_buffer_id id, void *buf, uint64_t dropped, void *user);
_Atomic uint32_t *tk__trace_buffer_position(tk_buffer_id id, void *buf, void *user);
void tk__trace_buffer_dropped(tk_buffer_id id, void *user);

#endif /* TRACE_INTERNAL_H */
