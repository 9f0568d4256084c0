/* SPDX-License-Identifier: MIT */
/*
 * tracekit/buffer.h: the recording engine. Per-thread trace buffers of fixed-size records
 * in the model of Pin's "fast buffering" API: define a buffer shape once, append records
 * from any thread without locks, and get a callback (on that thread, without global locks)
 * when a thread's buffer is full or the thread exits. Also a pool of fixed-size buffers
 * whose bookkeeping lives inside its own memory region (offsets, no pointers), so it can
 * be placed in a shared segment.
 *
 *   tk_buffer_id id = tk_buffer_define(sizeof(struct rec), 4, on_full, ctx);
 *   struct rec *r = tk_buffer_reserve(id);   // inline; NULL only when records are dropped
 *   if (r) { r->a = ...; tk_buffer_commit(id, r); }
 */
#ifndef TRACEKIT_BUFFER_H
#define TRACEKIT_BUFFER_H

#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
/* C++ (Pin tools) has no _Atomic: the same objects as std::atomic, as C++23's <stdatomic.h>. */
#include <atomic>
#define TK__ATOMIC(type) std::atomic<type>
using std::memory_order_relaxed;
using std::memory_order_release;
#else
#include <stdatomic.h>
#define TK__ATOMIC(type) _Atomic(type)
#endif

#include "tracekit/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Pool of buffers ----------------------------------------------------------------- */

/*
 * A pool of n_bufs buffers of buf_size bytes in one region: a header, per-buffer
 * descriptors, a lock-free stack of free buffers and a lock-free queue of full ones
 * (multi-producer, multi-consumer). Everything inside the region is indices and offsets,
 * so two processes mapping it at different addresses see the same pool.
 */
typedef struct tk_pool tk_pool;

/*
 * What the pool keeps about each buffer (inside the region), one cache line each so that
 * the writer of one buffer never shares a line with the writer of another. A buffer is
 * FREE (in the free stack), WRITING (taken: `committed` bytes of it hold finished records),
 * QUEUED (full or partial, in the queue: `records` records) or DRAINING (dequeued by a
 * consumer). docs/recording.md, "Shared pool layout", describes how a separate process
 * reads them.
 */
enum { TK_POOL_FREE = 0, TK_POOL_WRITING = 1, TK_POOL_QUEUED = 2, TK_POOL_DRAINING = 3 };

typedef struct tk_pool_desc {
	TK__ATOMIC(uint32_t) committed; /* bytes of finished records (release-stored after each one) */
	TK__ATOMIC(uint32_t) state;     /* TK_POOL_FREE ... TK_POOL_DRAINING */
	TK__ATOMIC(uint32_t) records;   /* records in the buffer when it was queued */
	uint32_t flushed;           /* records already written out by a flush */
	uint32_t seq;               /* sequence number given when the buffer was taken */
	uint32_t resume_cpu;        /* CPU and time MSB in effect at `flushed` (for .kev) */
	uint32_t resume_msb;
	uint32_t owner_tid;         /* thread that fills it */
	uint32_t owner_pid;         /* and its process */
	uint32_t spare[7];
} tk_pool_desc;

/* Counters kept in the pool (all atomic, in the region). */
typedef struct tk_pool_stats {
	uint64_t buffers_taken;       /* buffers handed to writers */
	uint64_t buffers_queued;      /* buffers queued as full (or partial at thread exit) */
	uint64_t buffers_overwritten; /* queued buffers reused before anyone read them */
	uint64_t records_dropped;     /* records lost because no buffer was free */
	uint32_t n_bufs, buf_size, n_free, n_queued;
	uint64_t dropped_pending;     /* of records_dropped, those not yet reported (tk_pool_take_dropped) */
	int64_t records_stored;       /* records in queued buffers not yet consumed (tk_pool_count_stored) */
} tk_pool_stats;

/* Bytes a region needs for n_bufs buffers of buf_size bytes (buf_size a multiple of 64). */
TK_API size_t tk_pool_region_size(uint32_t n_bufs, uint32_t buf_size);
/*
 * Formats region (at least tk_pool_region_size() bytes, 64-byte aligned) as a pool with
 * every buffer free, and returns a handle for this process. Returns 0, TK_EINVAL or
 * TK_ENOMEM (for the handle).
 */
TK_API int tk_pool_init(tk_pool **out, void *region, size_t region_size, uint32_t n_bufs, uint32_t buf_size);
/*
 * Attaches to a region another process formatted; checks it (tk_pool_check). TK_EFORMAT if
 * not. The handle keeps the layout it checked: a later change of the region's header by
 * another process never makes this one read or write outside the region, and an index read
 * from the region (free stack, queue) that is out of range is ignored.
 */
TK_API int tk_pool_attach(tk_pool **out, void *region, size_t region_size);
/*
 * Pure validation of a pool region of size bytes: magic, version, sizes, every offset, the
 * free-stack links, the queue cells and the descriptors' states and committed counts.
 * Never reads outside [region, region + size). TK_OK, or TK_EFORMAT with why (cap bytes,
 * may be NULL) naming the field and its byte offset plus base_offset (the pool's offset in
 * a larger region, e.g. a session's).
 */
TK_API int tk_pool_check(const void *region, size_t size, uint64_t base_offset, char *why, size_t cap);
/* Creates a pool in private anonymous memory (mmap). */
TK_API int tk_pool_create(tk_pool **out, uint32_t n_bufs, uint32_t buf_size);
/* Releases the handle; unmaps the memory if tk_pool_create() made it. NULL accepted. */
TK_API void tk_pool_destroy(tk_pool *pool);

TK_API uint32_t tk_pool_n_buffers(const tk_pool *pool);
TK_API uint32_t tk_pool_buffer_size(const tk_pool *pool);
/* Address of buffer idx in this process; NULL if idx is out of range. */
TK_API void *tk_pool_buffer(const tk_pool *pool, uint32_t idx);
/* Index of the buffer containing address p, or -1. */
TK_API int64_t tk_pool_index(const tk_pool *pool, const void *p);
TK_API tk_pool_desc *tk_pool_desc_of(const tk_pool *pool, uint32_t idx);

/*
 * Takes a free buffer (lock-free; its descriptor becomes WRITING with nothing committed).
 * Returns 0, or TK_EBUSY when none is free.
 */
TK_API int tk_pool_take(tk_pool *pool, uint32_t *idx);
/* Gives a buffer back to the free stack (FREE). */
TK_API void tk_pool_give(tk_pool *pool, uint32_t idx);
/*
 * Queues a buffer as full (QUEUED, records = how many it holds) / dequeues the oldest full
 * one (DRAINING; TK_EBUSY when the queue is empty).
 */
TK_API void tk_pool_queue(tk_pool *pool, uint32_t idx, uint32_t records);
TK_API int tk_pool_dequeue(tk_pool *pool, uint32_t *idx);
/*
 * For the consumer when a producer died (SIGKILL) between claiming a queue cell and
 * publishing it, which would block the queue for good: if the oldest cell is claimed but
 * unpublished, marks it published and empty (tk_pool_dequeue skips it) and returns 1; else
 * 0. Call it only when the queue looks empty while a producer is known to have died (a live
 * producer publishes its cell nanoseconds after claiming it); the buffer the dead producer
 * was queueing stays QUEUED outside the queue, where its owner's pid finds it.
 */
TK_API int tk_pool_skip_stuck(tk_pool *pool);
/*
 * Counts records lost for want of a buffer (as lost, and as pending a report); returns
 * and zeroes the pending ones, so that each lost record is reported exactly once by
 * whoever takes it (a writer starting a buffer, a drainer at a flush).
 */
TK_API void tk_pool_count_dropped(tk_pool *pool, uint64_t records);
TK_API uint64_t tk_pool_take_dropped(tk_pool *pool);
/*
 * Makes records taken with tk_pool_take_dropped() pending again: their report was lost
 * (the buffer holding it was reused unread, in ring mode), so the next taker reports them.
 */
TK_API void tk_pool_unreport_dropped(tk_pool *pool, uint64_t records);
/* Counts queued buffers reused unread. */
TK_API void tk_pool_count_overwritten(tk_pool *pool, uint64_t buffers);
/*
 * Adds delta to the records stored in queued buffers and not yet consumed (QUERYEVENTS);
 * returns the new count.
 */
TK_API int64_t tk_pool_count_stored(tk_pool *pool, int64_t delta);
/* Next buffer sequence number (shared by every user of the pool). */
TK_API uint32_t tk_pool_next_seq(tk_pool *pool);
TK_API void tk_pool_get_stats(const tk_pool *pool, tk_pool_stats *out);

/* ---- Per-thread buffers (Pin-style) ----------------------------------------------------- */

typedef int tk_buffer_id;
#define TK_BUFFER_ID_INVALID (-1)
#define TK_BUFFER_MAX 16 /* definitions per process */

/*
 * Called with a thread's buffer when it is full (on that thread, holding no global lock;
 * several threads may be in it at once) or when the thread exits with records in it (then
 * possibly on another thread). buf holds n_records records. Returns the buffer the thread
 * continues with: usually buf itself (the records were consumed), or one from
 * tk_buffer_allocate() (double buffering). Returning NULL means no buffer is available:
 * the thread's records are then dropped and counted (tk_buffer_pending_dropped(), or the
 * start hook's `dropped` with its next buffer) until it gets a buffer again, which only an
 * acquire hook (tk_buffer_define_config()) gives: it is asked on each later reserve. A
 * tk_buffer_define() definition has none, so there NULL stops the thread's recording for
 * good. At thread and process exit the return value is given back with
 * tk_buffer_deallocate().
 */
typedef void *(*tk_buffer_callback)(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n_records, void *user);

/*
 * Define a buffer shape: records of record_size bytes (less than one page, as Pin
 * requires), buffers of num_pages pages. Each thread gets its first buffer (malloc) on its
 * first reserve. Returns the id, or TK_BUFFER_ID_INVALID (record_size 0 or not less than a
 * page, num_pages 0, no callback, or TK_BUFFER_MAX definitions already made). Thread-safe.
 */
TK_API tk_buffer_id tk_buffer_define(size_t record_size, uint32_t num_pages, tk_buffer_callback fn, void *user);

/* tracekit extensions for writers that manage their buffers in a pool (the trace module). */
typedef struct tk_buffer_config {
	size_t record_size;          /* less than a page */
	size_t buffer_size;          /* bytes per buffer (>= record_size) */
	tk_buffer_callback full;     /* as for tk_buffer_define() */
	void *user;
	/*
	 * Optional: gives a thread a buffer (its first one, or after records were dropped).
	 * Returns NULL when none is available. Without it, malloc.
	 */
	void *(*acquire)(tk_buffer_id id, void *user);
	/* Optional: gives back a buffer (tk_buffer_deallocate, thread exit). */
	void (*release)(tk_buffer_id id, void *buf, void *user);
	/*
	 * Optional: called on the thread when it starts a buffer, with the number of records
	 * it dropped since its last buffer (0 with a `dropped` hook); may write leading
	 * records into buf and returns how many it wrote.
	 */
	size_t (*start)(tk_buffer_id id, void *buf, uint64_t dropped, void *user);
	/*
	 * Optional: where the thread publishes how far it has committed into buf (bytes from
	 * buf, release-stored after each record), e.g. the buffer's descriptor in a shared
	 * pool, so that another process can read a partial buffer. NULL (or no hook): a word
	 * of the thread's own.
	 */
	TK__ATOMIC(uint32_t) *(*position)(tk_buffer_id id, void *buf, void *user);
	/*
	 * Optional: counts one dropped record somewhere of the caller's (a shared pool);
	 * the record is then not counted per thread (tk_buffer_pending_dropped(), `start`).
	 */
	void (*dropped)(tk_buffer_id id, void *user);
} tk_buffer_config;

TK_API tk_buffer_id tk_buffer_define_config(const tk_buffer_config *cfg);

/* A buffer of the definition's size (malloc, or the acquire hook). NULL if none. */
TK_API void *tk_buffer_allocate(tk_buffer_id id);
/* Gives back a buffer of tk_buffer_allocate(); the thread's implicit buffer is ignored. */
TK_API void tk_buffer_deallocate(tk_buffer_id id, void *buf);

/* The calling thread's current position in its buffer (creating the buffer if needed). */
TK_API void *tk_buffer_pointer(tk_buffer_id id);

/*
 * Delivers the calling thread's records now through the callback (a partial buffer), and
 * continues with the buffer the callback returns. Returns 0 or TK_EINVAL.
 */
TK_API int tk_buffer_flush(tk_buffer_id id);

/*
 * For every thread with a buffer of this id, calls fn with the buffer, the number of
 * records committed in it so far, and ctx, while that thread cannot switch buffers. Used
 * to collect partial buffers of other threads (the thread goes on appending after them).
 */
TK_API void tk_buffer_for_each_thread(tk_buffer_id id, void (*fn)(void *buf, uint64_t n_records, void *ctx),
				      void *ctx);

/*
 * Takes every thread's buffer of this id away without delivering it (its records are lost,
 * the buffer is not given back): used when the memory behind the buffers is replaced.
 * Each thread starts a new buffer on its next reserve.
 */
TK_API void tk_buffer_discard_all(tk_buffer_id id);

/*
 * Records dropped that no start hook has been told about yet: threads that dropped and
 * have not started a buffer since, and threads that exited meanwhile. With take != 0 they
 * are zeroed (the caller reports them), so each dropped record is reported exactly once,
 * either to a start hook or to one tk_buffer_pending_dropped(id, 1) call. (Records counted
 * by a `dropped` hook are not here.)
 */
TK_API uint64_t tk_buffer_pending_dropped(tk_buffer_id id, int take);

/*
 * In a fork()ed child (a pthread_atfork child handler): forgets every buffer of every
 * definition without delivering or giving it back (the parent's threads own them: in a
 * shared pool the parent goes on writing them), forgets the parent's other threads and
 * re-initialises the module's locks. The calling thread starts new buffers on its next
 * reserve.
 */
TK_API void tk_buffer_forget_after_fork(void);

/* Delivers the partial buffers of every thread and definition (done at process exit). */
TK_API void tk_buffer_flush_all_threads(void);

/*
 * 1 inside a callback called for a thread's last buffer (thread exit, process exit): the
 * buffer the callback returns is only given back, so a pool-backed callback need not take
 * one (in ring mode that would reuse, and lose, a queued buffer for nothing).
 */
TK_API int tk_buffer_delivering_at_exit(void);

/* ---- the inline fast path -------------------------------------------------------------- */

/*
 * Per-thread state of one definition; public only for the inline functions below. The
 * committed position lives where `pos` points (the buffer's descriptor in a shared pool,
 * or `own`), so publishing a record is one release store. Other threads only ever detach
 * a buffer (limit 0, pos back to &own), never set pos to NULL once it was set.
 */
struct tk__buffer_thread {
	TK__ATOMIC(TK__ATOMIC(uint32_t) *) pos; /* committed bytes from base; NULL before the first buffer */
	TK__ATOMIC(char *) base;                /* the current buffer, NULL if none */
	TK__ATOMIC(uint32_t) limit;             /* last record's offset + 1 (pos < limit: room for a record);
						 * 0 forces the slow path */
	uint32_t record_size;
	TK__ATOMIC(uint32_t) own;               /* the position when the definition publishes none */
	uint32_t pad;
};

extern __thread struct tk__buffer_thread tk__buffer_tls[TK_BUFFER_MAX]
	__attribute__((tls_model("initial-exec")));

TK_API void *tk__buffer_reserve_slow(tk_buffer_id id);

/*
 * The next record of the calling thread's buffer, or NULL when records are being dropped
 * (no buffer available). Wait-free unless the buffer is full. The record is visible to
 * collectors only after tk_buffer_commit().
 */
static inline void *tk_buffer_reserve(tk_buffer_id id)
{
	struct tk__buffer_thread *t = &tk__buffer_tls[id];
	TK__ATOMIC(uint32_t) *pos = atomic_load_explicit(&t->pos, memory_order_relaxed);

	if (__builtin_expect(pos != NULL, 1)) {
		uint32_t off = atomic_load_explicit(pos, memory_order_relaxed); /* only this thread stores it */
		if (__builtin_expect(off < atomic_load_explicit(&t->limit, memory_order_relaxed), 1))
			return atomic_load_explicit(&t->base, memory_order_relaxed) + off;
	}
	return tk__buffer_reserve_slow(id);
}

/* Publishes the record returned by the last tk_buffer_reserve() of this thread. */
static inline void tk_buffer_commit(tk_buffer_id id, void *record)
{
	struct tk__buffer_thread *t = &tk__buffer_tls[id];
	char *base = atomic_load_explicit(&t->base, memory_order_relaxed);

	atomic_store_explicit(atomic_load_explicit(&t->pos, memory_order_relaxed),
			      (uint32_t)((uintptr_t)record + t->record_size - (uintptr_t)base), memory_order_release);
}

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_BUFFER_H */
