/* SPDX-License-Identifier: MIT */
/*
 * A pool of fixed-size buffers whose whole bookkeeping lives in its own memory region, so
 * the region can be a shared segment mapped by several processes at different addresses.
 *
 * Region layout (every position an offset from the region start, no pointers; byte
 * offsets pinned below and documented in docs/recording.md, "Shared pool layout"):
 *   header     magic, version, sizes, offsets, then on their own cache lines: the
 *              free-stack head, the queue's head and tail, counters
 *   descs      one 64-byte tk_pool_desc per buffer: state, committed bytes, ...
 *   next       free-stack links, one u32 per buffer
 *   cells      the full queue: a bounded multi-producer multi-consumer ring of
 *              {sequence, buffer index} cells (Vyukov's algorithm), capacity >= n_bufs
 *   data       n_bufs buffers, page-aligned
 * The free stack is a Treiber stack whose head carries a 32-bit tag against ABA.
 * Nothing in the region belongs to one process: a handle (struct tk_pool) holds the
 * address at which this process maps it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/buffer.h"

#define POOL_MAGIC 0x4c504b54u /* "TKPL" */
#define POOL_VERSION 2u /* 2: 64-byte descriptors with state and committed bytes; pending drops, stored */
#define CACHE_LINE 64

/*
 * ThreadSanitizer sees only what happens in its own process. A buffer goes from a writer
 * thread (queue, release) through the logger, another process (dequeue, give), to the next
 * thread of the writer's process that takes it (take, acquire): a happens-before TSan cannot
 * follow, so it reports the new owner's writes as racing with the old owner's (and, run with
 * halt_on_error, ends the writer: its remaining events are never recorded). Each buffer's
 * descriptor is told to TSan as the synchronisation object the chain really is.
 */
#if defined(__SANITIZE_THREAD__)
#define POOL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define POOL_TSAN 1
#endif
#endif
#ifdef POOL_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define pool_tsan_acquire(d) __tsan_acquire(d)
#define pool_tsan_release(d) __tsan_release(d)
#else
#define pool_tsan_acquire(d) ((void)(d))
#define pool_tsan_release(d) ((void)(d))
#endif

struct pool_cell {
	_Atomic uint64_t seq;
	uint32_t idx;
	uint32_t pad;
};

struct pool_hdr {
	uint32_t magic, version;
	uint32_t n_bufs, buf_size;
	uint64_t region_size;
	uint64_t desc_off, next_off, cells_off, data_off;
	uint64_t queue_mask;
	_Alignas(CACHE_LINE) _Atomic uint64_t free_head; /* (tag << 32) | (index + 1); 0: empty */
	_Atomic uint32_t n_free;
	_Alignas(CACHE_LINE) _Atomic uint64_t q_head;    /* next enqueue position */
	_Alignas(CACHE_LINE) _Atomic uint64_t q_tail;    /* next dequeue position */
	_Alignas(CACHE_LINE) _Atomic uint32_t seq;
	_Atomic uint32_t n_queued;
	_Atomic uint64_t taken, queued, overwritten, dropped;
	_Atomic uint64_t dropped_pending; /* dropped, not yet reported in a DROPPED event */
	_Atomic int64_t stored;           /* records in queued buffers not yet consumed */
};

/* The layout a process of another build reads (docs/recording.md): pinned. */
_Static_assert(sizeof(tk_pool_desc) == 64, "a descriptor is one cache line");
_Static_assert(offsetof(tk_pool_desc, committed) == 0 && offsetof(tk_pool_desc, state) == 4 &&
		       offsetof(tk_pool_desc, records) == 8 && offsetof(tk_pool_desc, flushed) == 12 &&
		       offsetof(tk_pool_desc, seq) == 16 && offsetof(tk_pool_desc, owner_tid) == 28 &&
		       offsetof(tk_pool_desc, owner_pid) == 32,
	       "descriptor layout");
_Static_assert(offsetof(struct pool_hdr, n_bufs) == 8 && offsetof(struct pool_hdr, region_size) == 16 &&
		       offsetof(struct pool_hdr, desc_off) == 24 && offsetof(struct pool_hdr, data_off) == 48 &&
		       offsetof(struct pool_hdr, queue_mask) == 56 && offsetof(struct pool_hdr, free_head) == 64 &&
		       offsetof(struct pool_hdr, q_head) == 128 && offsetof(struct pool_hdr, q_tail) == 192 &&
		       offsetof(struct pool_hdr, seq) == 256 && offsetof(struct pool_hdr, taken) == 264 &&
		       offsetof(struct pool_hdr, dropped) == 288 && offsetof(struct pool_hdr, dropped_pending) == 296 &&
		       offsetof(struct pool_hdr, stored) == 304,
	       "header layout");
_Static_assert(sizeof(struct pool_cell) == 16, "queue cell");

/* A process's handle: the layout as checked when it was made, never re-read from the
 * region (another process could change the header after the check). */
struct tk_pool {
	unsigned char *base;
	size_t size;
	int owns_mapping;
	uint32_t n_bufs, buf_size;
	uint64_t desc_off, next_off, cells_off, data_off, queue_mask;
};

struct pool_layout {
	uint64_t desc_off, next_off, cells_off, data_off, size, queue_cap;
};

static struct pool_hdr *hdr_of(const tk_pool *p)
{
	return (struct pool_hdr *)(void *)p->base;
}

static _Atomic uint32_t *next_of(const tk_pool *p)
{
	return (_Atomic uint32_t *)(void *)(p->base + p->next_off);
}

static struct pool_cell *cells_of(const tk_pool *p)
{
	return (struct pool_cell *)(void *)(p->base + p->cells_off);
}

static void keep_layout(tk_pool *p, uint32_t n_bufs, uint32_t buf_size, const struct pool_layout *l)
{
	p->n_bufs = n_bufs;
	p->buf_size = buf_size;
	p->desc_off = l->desc_off;
	p->next_off = l->next_off;
	p->cells_off = l->cells_off;
	p->data_off = l->data_off;
	p->queue_mask = l->queue_cap - 1;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int layout(uint32_t n_bufs, uint32_t buf_size, struct pool_layout *l)
{
	uint64_t cap = 1;

	if (n_bufs == 0 || n_bufs > (1u << 24) || buf_size == 0 || buf_size % CACHE_LINE != 0)
		return -1;
	while (cap < n_bufs)
		cap <<= 1;
	l->queue_cap = cap;
	l->desc_off = align_up(sizeof(struct pool_hdr), CACHE_LINE);
	l->next_off = align_up(l->desc_off + (uint64_t)n_bufs * sizeof(tk_pool_desc), CACHE_LINE);
	l->cells_off = align_up(l->next_off + (uint64_t)n_bufs * sizeof(uint32_t), CACHE_LINE);
	l->data_off = align_up(l->cells_off + cap * sizeof(struct pool_cell), 4096);
	l->size = l->data_off + (uint64_t)n_bufs * buf_size;
	return 0;
}

size_t tk_pool_region_size(uint32_t n_bufs, uint32_t buf_size)
{
	struct pool_layout l;
	return layout(n_bufs, buf_size, &l) == 0 ? (size_t)l.size : 0;
}

int tk_pool_init(tk_pool **out, void *region, size_t region_size, uint32_t n_bufs, uint32_t buf_size)
{
	struct pool_layout l;
	struct pool_hdr *h;
	struct pool_cell *cells;
	_Atomic uint32_t *next;
	tk_pool *p;
	uint64_t i;

	if (out == NULL || region == NULL || ((uintptr_t)region % CACHE_LINE) != 0 ||
	    layout(n_bufs, buf_size, &l) != 0 || region_size < l.size)
		return TK_EINVAL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return TK_ENOMEM;
	p->base = region;
	p->size = region_size;
	keep_layout(p, n_bufs, buf_size, &l);
	memset(region, 0, (size_t)l.data_off);
	h = region;
	h->magic = POOL_MAGIC;
	h->version = POOL_VERSION;
	h->n_bufs = n_bufs;
	h->buf_size = buf_size;
	h->region_size = l.size;
	h->desc_off = l.desc_off;
	h->next_off = l.next_off;
	h->cells_off = l.cells_off;
	h->data_off = l.data_off;
	h->queue_mask = l.queue_cap - 1;
	cells = cells_of(p);
	for (i = 0; i < l.queue_cap; i++)
		atomic_init(&cells[i].seq, i);
	/* Free stack: buffer 0 on top. */
	next = next_of(p);
	for (i = 0; i < n_bufs; i++)
		atomic_init(&next[i], i + 1 < n_bufs ? (uint32_t)(i + 2) : 0u);
	atomic_init(&h->free_head, 1u);
	atomic_init(&h->n_free, n_bufs);
	*out = p;
	return TK_OK;
}

__attribute__((format(printf, 3, 4))) static int why_set(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && cap > 0) {
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return TK_EFORMAT;
}

#define POFF(field) ((unsigned long long)(base + offsetof(struct pool_hdr, field)))

int tk_pool_check(const void *region, size_t size, uint64_t base, char *why, size_t cap)
{
	const unsigned char *b = region;
	struct pool_hdr h;
	struct pool_layout l;
	uint64_t i;

	if (why != NULL && cap > 0)
		why[0] = '\0';
	if (region == NULL || size < sizeof(h))
		return why_set(why, cap, "byte %llu (pool header): %zu bytes, the header alone needs %zu",
			       (unsigned long long)base, size, sizeof(h));
	memcpy(&h, b, offsetof(struct pool_hdr, free_head));
	if (h.magic != POOL_MAGIC)
		return why_set(why, cap, "byte %llu (pool magic): 0x%08x, expected 0x%08x", POFF(magic), h.magic,
			       POOL_MAGIC);
	if (h.version != POOL_VERSION)
		return why_set(why, cap, "byte %llu (pool version): %u, expected %u", POFF(version), h.version,
			       POOL_VERSION);
	if (layout(h.n_bufs, h.buf_size, &l) != 0)
		return why_set(why, cap, "byte %llu (pool n_bufs, buf_size): %u buffers of %u bytes make no pool",
			       POFF(n_bufs), h.n_bufs, h.buf_size);
	if (h.region_size != l.size || h.region_size > size)
		return why_set(why, cap,
			       "byte %llu (pool region_size): %llu, expected %llu for %u buffers of %u bytes "
			       "(pool n_bufs, byte %llu), and at most %zu",
			       POFF(region_size), (unsigned long long)h.region_size, (unsigned long long)l.size, h.n_bufs,
			       h.buf_size, POFF(n_bufs), size);
	if (h.desc_off != l.desc_off)
		return why_set(why, cap, "byte %llu (pool desc_off): %llu, expected %llu", POFF(desc_off),
			       (unsigned long long)h.desc_off, (unsigned long long)l.desc_off);
	if (h.next_off != l.next_off)
		return why_set(why, cap, "byte %llu (pool next_off): %llu, expected %llu", POFF(next_off),
			       (unsigned long long)h.next_off, (unsigned long long)l.next_off);
	if (h.cells_off != l.cells_off)
		return why_set(why, cap, "byte %llu (pool cells_off): %llu, expected %llu", POFF(cells_off),
			       (unsigned long long)h.cells_off, (unsigned long long)l.cells_off);
	if (h.data_off != l.data_off)
		return why_set(why, cap, "byte %llu (pool data_off): %llu, expected %llu", POFF(data_off),
			       (unsigned long long)h.data_off, (unsigned long long)l.data_off);
	if (h.queue_mask != l.queue_cap - 1)
		return why_set(why, cap, "byte %llu (pool queue_mask): %llu, expected %llu", POFF(queue_mask),
			       (unsigned long long)h.queue_mask, (unsigned long long)(l.queue_cap - 1));
	{
		uint64_t head;
		memcpy(&head, b + offsetof(struct pool_hdr, free_head), sizeof(head));
		if ((uint32_t)head > h.n_bufs)
			return why_set(why, cap, "byte %llu (pool free_head): buffer %u of %u", POFF(free_head),
				       (uint32_t)head, h.n_bufs);
	}
	for (i = 0; i < h.n_bufs; i++) {
		uint32_t next, state, committed;
		uint64_t doff = l.desc_off + i * sizeof(tk_pool_desc);
		memcpy(&next, b + l.next_off + 4 * i, 4);
		if (next > h.n_bufs)
			return why_set(why, cap, "byte %llu (pool free link %llu): buffer %u of %u",
				       (unsigned long long)(base + l.next_off + 4 * i), (unsigned long long)i, next, h.n_bufs);
		memcpy(&committed, b + doff + offsetof(tk_pool_desc, committed), 4);
		memcpy(&state, b + doff + offsetof(tk_pool_desc, state), 4);
		if (state > TK_POOL_DRAINING)
			return why_set(why, cap, "byte %llu (pool descriptor %llu state): %u (0 to 3)",
				       (unsigned long long)(base + doff + offsetof(tk_pool_desc, state)), (unsigned long long)i,
				       state);
		if (committed > h.buf_size || committed % 16 != 0)
			return why_set(why, cap, "byte %llu (pool descriptor %llu committed): %u bytes in a buffer of %u",
				       (unsigned long long)(base + doff), (unsigned long long)i, committed, h.buf_size);
	}
	for (i = 0; i < l.queue_cap; i++) {
		uint32_t idx;
		memcpy(&idx, b + l.cells_off + i * sizeof(struct pool_cell) + offsetof(struct pool_cell, idx), 4);
		if (idx >= h.n_bufs && idx != UINT32_MAX) /* (UINT32_MAX: a cell tk_pool_skip_stuck() emptied) */
			return why_set(why, cap, "byte %llu (pool queue cell %llu): buffer %u of %u",
				       (unsigned long long)(base + l.cells_off + i * sizeof(struct pool_cell) + 8),
				       (unsigned long long)i, idx, h.n_bufs);
	}
	return TK_OK;
}

int tk_pool_attach(tk_pool **out, void *region, size_t region_size)
{
	const struct pool_hdr *h = region;
	struct pool_layout l;
	tk_pool *p;

	if (out == NULL || region == NULL || region_size < sizeof(*h))
		return TK_EINVAL;
	if (tk_pool_check(region, region_size, 0, NULL, 0) != TK_OK || layout(h->n_bufs, h->buf_size, &l) != 0)
		return TK_EFORMAT;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return TK_ENOMEM;
	p->base = region;
	p->size = region_size;
	keep_layout(p, h->n_bufs, h->buf_size, &l);
	*out = p;
	return TK_OK;
}

int tk_pool_create(tk_pool **out, uint32_t n_bufs, uint32_t buf_size)
{
	size_t size = tk_pool_region_size(n_bufs, buf_size);
	void *m;
	int rc;

	if (out == NULL || size == 0)
		return TK_EINVAL;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return TK_ENOMEM;
	rc = tk_pool_init(out, m, size, n_bufs, buf_size);
	if (rc != TK_OK) {
		munmap(m, size);
		return rc;
	}
	(*out)->owns_mapping = 1;
	return TK_OK;
}

void tk_pool_destroy(tk_pool *p)
{
	if (p == NULL)
		return;
	if (p->owns_mapping)
		munmap(p->base, p->size);
	free(p);
}

uint32_t tk_pool_n_buffers(const tk_pool *p)
{
	return p->n_bufs;
}

uint32_t tk_pool_buffer_size(const tk_pool *p)
{
	return p->buf_size;
}

void *tk_pool_buffer(const tk_pool *p, uint32_t idx)
{
	return idx < p->n_bufs ? p->base + p->data_off + (uint64_t)idx * p->buf_size : NULL;
}

int64_t tk_pool_index(const tk_pool *p, const void *ptr)
{
	const unsigned char *c = ptr, *data = p->base + p->data_off;

	if (c < data || c >= data + (uint64_t)p->n_bufs * p->buf_size)
		return -1;
	return (int64_t)((uint64_t)(c - data) / p->buf_size);
}

tk_pool_desc *tk_pool_desc_of(const tk_pool *p, uint32_t idx)
{
	return idx < p->n_bufs ? (tk_pool_desc *)(void *)(p->base + p->desc_off) + idx : NULL;
}

int tk_pool_take(tk_pool *p, uint32_t *idx)
{
	struct pool_hdr *h = hdr_of(p);
	_Atomic uint32_t *next = next_of(p);
	uint64_t head = atomic_load_explicit(&h->free_head, memory_order_acquire);

	for (;;) {
		uint32_t top = (uint32_t)head;
		uint64_t nh;
		if (top == 0 || top > p->n_bufs) /* empty, or a damaged region: none to take */
			return TK_EBUSY;
		nh = ((head >> 32) + 1) << 32 | atomic_load_explicit(&next[top - 1], memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(&h->free_head, &head, nh, memory_order_acquire,
							  memory_order_acquire)) {
			tk_pool_desc *d = tk_pool_desc_of(p, top - 1);
			pool_tsan_acquire(d); /* what its last owner did, whichever process gave it back */
			atomic_fetch_sub_explicit(&h->n_free, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&h->taken, 1, memory_order_relaxed);
			atomic_store_explicit(&d->committed, 0, memory_order_relaxed);
			/* the taker, until it names the owner thread: a consumer finds the buffer of a
			 * process killed right after taking it */
			d->owner_pid = (uint32_t)getpid();
			d->owner_tid = 0;
			atomic_store_explicit(&d->state, TK_POOL_WRITING, memory_order_release);
			*idx = top - 1;
			return TK_OK;
		}
	}
}

void tk_pool_give(tk_pool *p, uint32_t idx)
{
	struct pool_hdr *h = hdr_of(p);
	_Atomic uint32_t *next = next_of(p);
	uint64_t head = atomic_load_explicit(&h->free_head, memory_order_relaxed);

	pool_tsan_release(tk_pool_desc_of(p, idx));
	atomic_store_explicit(&tk_pool_desc_of(p, idx)->state, TK_POOL_FREE, memory_order_relaxed);
	for (;;) {
		uint64_t nh = ((head >> 32) + 1) << 32 | (uint64_t)(idx + 1);
		atomic_store_explicit(&next[idx], (uint32_t)head, memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(&h->free_head, &head, nh, memory_order_release,
							  memory_order_relaxed))
			break;
	}
	atomic_fetch_add_explicit(&h->n_free, 1, memory_order_relaxed);
}

/*
 * A queue operation waits for a peer between its two steps (a consumer that claimed the cell
 * this producer needs, or the reverse). That peer may be preempted for a whole time slice on a
 * busy machine, so the wait yields the CPU and is bounded by time, not by a count of spins: only
 * a queue no live peer will ever finish (a region damaged by another process) makes it give up,
 * after a second.
 */
static int queue_waited_too_long(unsigned long spins, struct timespec *since)
{
	struct timespec now;

	if ((spins & 1023) != 1023)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (spins == 1023)
		*since = now;
	else if (now.tv_sec - since->tv_sec > 1)
		return 1;
	sched_yield();
	return 0;
}

void tk_pool_queue(tk_pool *p, uint32_t idx, uint32_t records)
{
	struct pool_hdr *h = hdr_of(p);
	struct pool_cell *cells = cells_of(p);
	uint64_t pos = atomic_load_explicit(&h->q_head, memory_order_relaxed);
	unsigned long spins = 0;
	struct timespec since = { 0, 0 };

	pool_tsan_release(tk_pool_desc_of(p, idx)); /* the writer's last words in it, for its next taker */
	atomic_store_explicit(&tk_pool_desc_of(p, idx)->records, records, memory_order_relaxed);
	atomic_store_explicit(&tk_pool_desc_of(p, idx)->state, TK_POOL_QUEUED, memory_order_release);
	for (;; spins++) {
		if (queue_waited_too_long(spins, &since))
			return; /* a damaged queue (another process wrote garbage): the buffer stays out of it */
		struct pool_cell *c = &cells[pos & p->queue_mask];
		uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		int64_t dif = (int64_t)(seq - pos);
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&h->q_head, &pos, pos + 1, memory_order_relaxed,
								  memory_order_relaxed)) {
				c->idx = idx;
				atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
				break;
			}
		} else {
			/* dif < 0 cannot happen: the queue holds every buffer at most once */
			pos = atomic_load_explicit(&h->q_head, memory_order_relaxed);
		}
	}
	atomic_fetch_add_explicit(&h->n_queued, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->queued, 1, memory_order_relaxed);
}

int tk_pool_dequeue(tk_pool *p, uint32_t *idx)
{
	struct pool_hdr *h = hdr_of(p);
	struct pool_cell *cells = cells_of(p);
	uint64_t pos = atomic_load_explicit(&h->q_tail, memory_order_relaxed);
	unsigned long spins = 0;
	struct timespec since = { 0, 0 };

	for (;; spins++) {
		struct pool_cell *c = &cells[pos & p->queue_mask];
		uint64_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		int64_t dif = (int64_t)(seq - (pos + 1));
		if (queue_waited_too_long(spins, &since))
			return TK_EBUSY; /* a damaged queue */
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&h->q_tail, &pos, pos + 1, memory_order_relaxed,
								  memory_order_relaxed)) {
				uint32_t i = c->idx;
				if (i < p->n_bufs) {
					pool_tsan_acquire(tk_pool_desc_of(p, i)); /* its writer's records */
					atomic_store_explicit(&tk_pool_desc_of(p, i)->state, TK_POOL_DRAINING,
							      memory_order_relaxed);
				}
				atomic_store_explicit(&c->seq, pos + p->queue_mask + 1, memory_order_release);
				atomic_fetch_sub_explicit(&h->n_queued, 1, memory_order_relaxed);
				if (i >= p->n_bufs) { /* a damaged region: skip the cell */
					pos = atomic_load_explicit(&h->q_tail, memory_order_relaxed);
					continue;
				}
				*idx = i;
				return TK_OK;
			}
		} else if (dif < 0) {
			return TK_EBUSY; /* empty */
		} else {
			pos = atomic_load_explicit(&h->q_tail, memory_order_relaxed);
		}
	}
}

int tk_pool_skip_stuck(tk_pool *p)
{
	struct pool_hdr *h = hdr_of(p);
	struct pool_cell *cells = cells_of(p);
	uint64_t pos = atomic_load_explicit(&h->q_tail, memory_order_acquire);
	struct pool_cell *c = &cells[pos & p->queue_mask];

	/* claimed (q_head moved past it) but never published (seq still pos) */
	if (atomic_load_explicit(&h->q_head, memory_order_acquire) <= pos ||
	    atomic_load_explicit(&c->seq, memory_order_acquire) != pos)
		return 0;
	c->idx = UINT32_MAX; /* tk_pool_dequeue skips it */
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	atomic_fetch_add_explicit(&h->n_queued, 1, memory_order_relaxed); /* dequeue takes it off again */
	return 1;
}

void tk_pool_count_dropped(tk_pool *p, uint64_t records)
{
	atomic_fetch_add_explicit(&hdr_of(p)->dropped, records, memory_order_relaxed);
	atomic_fetch_add_explicit(&hdr_of(p)->dropped_pending, records, memory_order_relaxed);
}

void tk_pool_unreport_dropped(tk_pool *p, uint64_t records)
{
	atomic_fetch_add_explicit(&hdr_of(p)->dropped_pending, records, memory_order_relaxed);
}

uint64_t tk_pool_take_dropped(tk_pool *p)
{
	struct pool_hdr *h = hdr_of(p);

	/* a load first: the common case (nothing pending) does not write the shared line */
	if (atomic_load_explicit(&h->dropped_pending, memory_order_relaxed) == 0)
		return 0;
	return atomic_exchange_explicit(&h->dropped_pending, 0, memory_order_relaxed);
}

int64_t tk_pool_count_stored(tk_pool *p, int64_t delta)
{
	return atomic_fetch_add_explicit(&hdr_of(p)->stored, delta, memory_order_relaxed) + delta;
}

void tk_pool_count_overwritten(tk_pool *p, uint64_t buffers)
{
	atomic_fetch_add_explicit(&hdr_of(p)->overwritten, buffers, memory_order_relaxed);
}

uint32_t tk_pool_next_seq(tk_pool *p)
{
	return atomic_fetch_add_explicit(&hdr_of(p)->seq, 1, memory_order_relaxed);
}

void tk_pool_get_stats(const tk_pool *p, tk_pool_stats *out)
{
	struct pool_hdr *h = hdr_of(p);

	out->buffers_taken = atomic_load_explicit(&h->taken, memory_order_relaxed);
	out->buffers_queued = atomic_load_explicit(&h->queued, memory_order_relaxed);
	out->buffers_overwritten = atomic_load_explicit(&h->overwritten, memory_order_relaxed);
	out->records_dropped = atomic_load_explicit(&h->dropped, memory_order_relaxed);
	out->n_bufs = p->n_bufs;
	out->buf_size = p->buf_size;
	out->n_free = atomic_load_explicit(&h->n_free, memory_order_relaxed);
	out->n_queued = atomic_load_explicit(&h->n_queued, memory_order_relaxed);
	out->dropped_pending = atomic_load_explicit(&h->dropped_pending, memory_order_relaxed);
	out->records_stored = atomic_load_explicit(&h->stored, memory_order_relaxed);
}
