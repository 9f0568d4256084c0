/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the buffer module: the shared-memory-ready pool (including one region
 * mapped twice at different addresses, and its descriptors' states and counters) and the
 * Pin-style per-thread buffers: full, thread-exit and process-exit callbacks, many threads
 * at once, double buffering, dropping when no buffer is available (a pool running out, a
 * callback returning NULL, a shared drop counter), the committed position published where
 * a position hook says, collecting other threads' partial buffers, and definition errors.
 */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tk_test.h"
#include "tracekit/buffer.h"

struct rec {
	uint32_t tid;
	uint32_t seq;
	uint64_t payload;
};

/* ---- pool ----------------------------------------------------------------------------- */

static void test_pool_basics(void **state)
{
	tk_pool *p;
	uint32_t idx, a, b, i, seen = 0;
	tk_pool_stats st;

	(void)state;
	assert_int_equal(tk_pool_create(&p, 0, 4096), TK_EINVAL);
	assert_int_equal(tk_pool_create(&p, 4, 100), TK_EINVAL); /* not a multiple of 64 */
	assert_int_equal(tk_pool_create(&p, 5, 16384), TK_OK);
	assert_int_equal(tk_pool_n_buffers(p), 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(tk_pool_take(p, &idx), TK_OK);
		assert_true(idx < 5);
		seen |= 1u << idx;
		assert_int_equal(tk_pool_index(p, (char *)tk_pool_buffer(p, idx) + 100), idx);
	}
	assert_int_equal(seen, 0x1f);
	assert_int_equal(tk_pool_take(p, &idx), TK_EBUSY);
	assert_int_equal(tk_pool_index(p, &seen), -1);
	assert_null(tk_pool_buffer(p, 5));
	/* queue order is first in, first out */
	tk_pool_queue(p, 3, 10);
	tk_pool_queue(p, 1, 20);
	assert_int_equal(tk_pool_dequeue(p, &a), TK_OK);
	assert_int_equal(tk_pool_dequeue(p, &b), TK_OK);
	assert_int_equal(a, 3);
	assert_int_equal(b, 1);
	assert_int_equal(atomic_load(&tk_pool_desc_of(p, 3)->records), 10);
	assert_int_equal(tk_pool_dequeue(p, &a), TK_EBUSY);
	tk_pool_give(p, 3);
	tk_pool_count_dropped(p, 7);
	tk_pool_get_stats(p, &st);
	assert_int_equal(st.n_free, 1);
	assert_int_equal(st.records_dropped, 7);
	assert_int_equal(st.buffers_queued, 2);
	assert_int_equal(tk_pool_next_seq(p), 0);
	assert_int_equal(tk_pool_next_seq(p), 1);
	tk_pool_destroy(p);
	tk_pool_destroy(NULL);
}

/*
 * A buffer handed from one thread to another of the same process through a consumer in
 * another process (queue, dequeue + give there, take here): the second thread's writes come
 * after the first's. The happens-before runs through the other process, which
 * ThreadSanitizer cannot see; the pool tells it (a TSan build fails here with a data race
 * otherwise, as a session's writer did and was ended by halt_on_error).
 */
static _Atomic int handover_queued, handover_done; /* relaxed only: no happens-before for TSan */

static void *handover_first(void *arg)
{
	tk_pool *p = arg;
	uint32_t idx;

	if (tk_pool_take(p, &idx) != TK_OK)
		return (void *)1;
	memset(tk_pool_buffer(p, idx), 'a', 4096); /* plain writes, as the recorder's */
	tk_pool_queue(p, idx, 1);
	atomic_store_explicit(&handover_queued, 1, memory_order_relaxed);
	while (!atomic_load_explicit(&handover_done, memory_order_relaxed))
		sched_yield(); /* alive (not joined) while the next owner writes */
	return NULL;
}

static void test_pool_handover_through_another_process(void **state)
{
	size_t size = tk_pool_region_size(1, 4096);
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	tk_pool *p;
	pthread_t th;
	pid_t child;
	uint32_t idx;
	int st, i;
	void *ret;

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_int_equal(tk_pool_init(&p, m, size, 1, 4096), TK_OK);
	child = fork(); /* the consumer, forked before any thread */
	assert_true(child >= 0);
	if (child == 0) {
		for (i = 0; i < 10000; i++) {
			if (tk_pool_dequeue(p, &idx) == TK_OK) {
				_exit(((char *)tk_pool_buffer(p, idx))[4095] == 'a' ? (tk_pool_give(p, idx), 0) : 2);
			}
			usleep(1000);
		}
		_exit(1);
	}
	atomic_store(&handover_done, 0);
	atomic_store(&handover_queued, 0);
	assert_int_equal(pthread_create(&th, NULL, handover_first, p), 0);
	while (!atomic_load_explicit(&handover_queued, memory_order_relaxed))
		sched_yield(); /* the buffer is the first thread's before this one looks for it */
	for (i = 0; i < 10000 && tk_pool_take(p, &idx) != TK_OK; i++)
		usleep(1000);
	assert_true(i < 10000);
	memset(tk_pool_buffer(p, idx), 'b', 4096); /* the next owner's writes */
	atomic_store_explicit(&handover_done, 1, memory_order_relaxed);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	tk_pool_destroy(p);
	munmap(m, size);
}

/* The same region mapped at two addresses (as two processes would) is one pool. */
static void test_pool_two_mappings(void **state)
{
	size_t size = tk_pool_region_size(8, 4096);
	int fd = memfd_create("pool", 0);
	void *m1, *m2;
	tk_pool *p1, *p2;
	uint32_t idx, got;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	m1 = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	m2 = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m1 != MAP_FAILED && m2 != MAP_FAILED && m1 != m2);
	assert_int_equal(tk_pool_init(&p1, m1, size, 8, 4096), TK_OK);
	assert_int_equal(tk_pool_attach(&p2, m2, size), TK_OK);
	assert_int_equal(tk_pool_take(p1, &idx), TK_OK);
	memcpy(tk_pool_buffer(p1, idx), "written through mapping 1", 26);
	tk_pool_queue(p1, idx, 1);
	assert_int_equal(tk_pool_dequeue(p2, &got), TK_OK);
	assert_int_equal(got, idx);
	assert_string_equal(tk_pool_buffer(p2, got), "written through mapping 1");
	tk_pool_give(p2, got);
	{
		tk_pool_stats st;
		tk_pool_get_stats(p1, &st);
		assert_int_equal(st.n_free, 8);
	}
	/* a region that is not a pool is refused */
	memset(m2, 0, 64);
	tk_pool_destroy(p2);
	assert_int_equal(tk_pool_attach(&p2, m2, size), TK_EFORMAT);
	tk_pool_destroy(p1);
	munmap(m1, size);
	munmap(m2, size);
	close(fd);
}

/* Each buffer's descriptor says where it is; the counters a drainer needs live in the pool. */
static void test_pool_states_and_counters(void **state)
{
	tk_pool *p;
	uint32_t idx, got;
	tk_pool_stats st;
	tk_pool_desc *d;

	(void)state;
	assert_int_equal(sizeof(tk_pool_desc), 64); /* one cache line: no two writers share one */
	assert_int_equal(offsetof(tk_pool_desc, committed), 0);
	assert_int_equal(tk_pool_create(&p, 4, 4096), TK_OK);
	for (idx = 0; idx < 4; idx++)
		assert_int_equal(atomic_load(&tk_pool_desc_of(p, idx)->state), TK_POOL_FREE);
	assert_int_equal(tk_pool_take(p, &idx), TK_OK);
	d = tk_pool_desc_of(p, idx);
	assert_int_equal(atomic_load(&d->state), TK_POOL_WRITING);
	assert_int_equal(atomic_load(&d->committed), 0);
	atomic_store(&d->committed, 48);
	tk_pool_queue(p, idx, 3);
	assert_int_equal(atomic_load(&d->state), TK_POOL_QUEUED);
	assert_int_equal(atomic_load(&d->records), 3);
	assert_int_equal(tk_pool_dequeue(p, &got), TK_OK);
	assert_int_equal(got, idx);
	assert_int_equal(atomic_load(&d->state), TK_POOL_DRAINING);
	tk_pool_give(p, got);
	assert_int_equal(atomic_load(&d->state), TK_POOL_FREE);
	/* a buffer taken again starts with nothing committed */
	assert_int_equal(tk_pool_take(p, &idx), TK_OK);
	assert_int_equal(atomic_load(&tk_pool_desc_of(p, idx)->committed), 0);

	/* drops: counted as lost at once, reported once by whoever takes them */
	assert_int_equal(tk_pool_take_dropped(p), 0);
	tk_pool_count_dropped(p, 5);
	tk_pool_count_dropped(p, 2);
	tk_pool_get_stats(p, &st);
	assert_int_equal(st.records_dropped, 7);
	assert_int_equal(st.dropped_pending, 7);
	assert_int_equal(tk_pool_take_dropped(p), 7);
	assert_int_equal(tk_pool_take_dropped(p), 0);
	tk_pool_get_stats(p, &st);
	assert_int_equal(st.records_dropped, 7);
	assert_int_equal(st.dropped_pending, 0);
	/* records stored in queued buffers */
	assert_int_equal(tk_pool_count_stored(p, 100), 100);
	assert_int_equal(tk_pool_count_stored(p, -40), 60);
	tk_pool_get_stats(p, &st);
	assert_int_equal(st.records_stored, 60);
	tk_pool_destroy(p);
}

struct pool_stress {
	tk_pool *p;
	unsigned iterations;
	_Atomic unsigned moved;
};

static void *pool_worker(void *arg)
{
	struct pool_stress *s = arg;
	unsigned i;

	for (i = 0; i < s->iterations; i++) {
		uint32_t idx;
		if (tk_pool_take(s->p, &idx) == TK_OK) {
			tk_pool_queue(s->p, idx, i);
			atomic_fetch_add(&s->moved, 1);
		}
		if (tk_pool_dequeue(s->p, &idx) == TK_OK)
			tk_pool_give(s->p, idx);
	}
	return NULL;
}

static void test_pool_concurrent(void **state)
{
	struct pool_stress s = { 0 };
	pthread_t th[4];
	tk_pool_stats st;
	uint32_t idx;
	unsigned i;

	(void)state;
	assert_int_equal(tk_pool_create(&s.p, 16, 64), TK_OK);
	s.iterations = 100000;
	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, pool_worker, &s);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	while (tk_pool_dequeue(s.p, &idx) == TK_OK)
		tk_pool_give(s.p, idx);
	tk_pool_get_stats(s.p, &st);
	assert_int_equal(st.n_free, 16); /* nothing lost, nothing duplicated */
	assert_int_equal(st.n_queued, 0);
	assert_true(atomic_load(&s.moved) > 0);
	tk_pool_destroy(s.p);
}

/* ---- per-thread buffers --------------------------------------------------------------- */

struct sink {
	pthread_mutex_t lock;
	uint64_t records;
	uint64_t calls;
	uint32_t next_seq[64]; /* per thread slot */
	uint32_t tids[64];
	unsigned n_tids;
	int out_of_order;
	int wrong_tid;
};

static struct sink g_sink = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void check_records(uint32_t tid, const struct rec *r, uint64_t n)
{
	unsigned slot;
	uint64_t i;

	pthread_mutex_lock(&g_sink.lock);
	for (slot = 0; slot < g_sink.n_tids && g_sink.tids[slot] != tid; slot++)
		;
	if (slot == g_sink.n_tids && slot < 64)
		g_sink.tids[g_sink.n_tids++] = tid;
	for (i = 0; i < n; i++) {
		if (r[i].tid != tid)
			g_sink.wrong_tid = 1;
		if (r[i].seq != g_sink.next_seq[slot])
			g_sink.out_of_order = 1;
		g_sink.next_seq[slot] = r[i].seq + 1;
	}
	g_sink.records += n;
	g_sink.calls++;
	pthread_mutex_unlock(&g_sink.lock);
}

static void *consume_and_reuse(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n, void *user)
{
	(void)id;
	(void)user;
	check_records(tid, buf, n);
	return buf;
}

static void reset_sink(void)
{
	pthread_mutex_lock(&g_sink.lock);
	g_sink.records = g_sink.calls = 0;
	memset(g_sink.next_seq, 0, sizeof(g_sink.next_seq));
	g_sink.n_tids = 0;
	g_sink.out_of_order = g_sink.wrong_tid = 0;
	pthread_mutex_unlock(&g_sink.lock);
}

static uint32_t gettid_u32(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

struct writer_arg {
	tk_buffer_id id;
	uint32_t n;
};

static void *writer(void *arg)
{
	struct writer_arg *w = arg;
	uint32_t tid = gettid_u32(), i;

	for (i = 0; i < w->n; i++) {
		struct rec *r = tk_buffer_reserve(w->id);
		if (r == NULL)
			continue;
		r->tid = tid;
		r->seq = i;
		r->payload = (uint64_t)i * 3;
		tk_buffer_commit(w->id, r);
	}
	return NULL;
}

static tk_buffer_id g_id = TK_BUFFER_ID_INVALID;

static void test_single_thread(void **state)
{
	struct writer_arg a;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t per_buffer = (uint64_t)page / sizeof(struct rec);

	(void)state;
	if (g_id == TK_BUFFER_ID_INVALID)
		g_id = tk_buffer_define(sizeof(struct rec), 1, consume_and_reuse, NULL);
	assert_int_not_equal(g_id, TK_BUFFER_ID_INVALID);
	reset_sink();
	a.id = g_id;
	a.n = 1000;
	writer(&a);
	assert_int_equal(g_sink.calls, 1000 / per_buffer);
	assert_int_equal(g_sink.records, (1000 / per_buffer) * per_buffer);
	/* the current position is where the next record goes */
	{
		void *pos = tk_buffer_pointer(g_id);
		struct rec *r = tk_buffer_reserve(g_id);
		assert_ptr_equal(pos, r);
		r->tid = gettid_u32();
		r->seq = 1000;
		tk_buffer_commit(g_id, r);
		assert_ptr_equal(tk_buffer_pointer(g_id), r + 1);
	}
	assert_int_equal(tk_buffer_flush(g_id), TK_OK);
	assert_int_equal(g_sink.records, 1001);
	assert_false(g_sink.out_of_order);
	assert_false(g_sink.wrong_tid);
	assert_int_equal(tk_buffer_flush(99), TK_EINVAL);
}

/* Many threads at once; every record arrives once, in order, through full and exit callbacks. */
static void test_many_threads(void **state)
{
	enum { N_THREADS = 8 };
	pthread_t th[N_THREADS];
	struct writer_arg a = { g_id, 50000 };
	unsigned i;

	(void)state;
	reset_sink();
	for (i = 0; i < N_THREADS; i++)
		pthread_create(&th[i], NULL, writer, &a);
	for (i = 0; i < N_THREADS; i++)
		pthread_join(th[i], NULL);
	/* each thread's last, partial buffer came through the thread-exit callback */
	assert_int_equal(g_sink.records, (uint64_t)N_THREADS * a.n);
	assert_int_equal(g_sink.n_tids, N_THREADS);
	assert_false(g_sink.out_of_order);
	assert_false(g_sink.wrong_tid);
}

/* Double buffering: the callback hands the full buffer to a consumer and continues with a
 * freshly allocated one; the consumer gives buffers back. */
static void *g_handed[4096];
static _Atomic unsigned g_n_handed;

static void *swap_buffers(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n, void *user)
{
	(void)user;
	check_records(tid, buf, n);
	g_handed[atomic_fetch_add(&g_n_handed, 1) % 4096] = buf;
	return tk_buffer_allocate(id);
}

static void test_double_buffering(void **state)
{
	static tk_buffer_id id = TK_BUFFER_ID_INVALID;
	struct writer_arg a;
	pthread_t th;
	unsigned i;

	(void)state;
	if (id == TK_BUFFER_ID_INVALID)
		id = tk_buffer_define(sizeof(struct rec), 2, swap_buffers, NULL);
	reset_sink();
	atomic_store(&g_n_handed, 0);
	a.id = id;
	a.n = 20000;
	pthread_create(&th, NULL, writer, &a);
	pthread_join(th, NULL);
	assert_int_equal(g_sink.records, a.n);
	assert_false(g_sink.out_of_order);
	/* every full buffer was a distinct allocation; give them all back */
	for (i = 0; i < atomic_load(&g_n_handed); i++) {
		unsigned j;
		for (j = i + 1; j < atomic_load(&g_n_handed); j++)
			assert_ptr_not_equal(g_handed[i], g_handed[j]);
		tk_buffer_deallocate(id, g_handed[i]);
	}
}

/* A pool-backed definition that runs out of buffers: records are dropped and counted. */
static tk_pool *g_drop_pool;
static uint64_t g_dropped_seen;
static int g_give_back = 0;

static void *drop_full(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n, void *user)
{
	uint32_t idx;
	(void)id;
	(void)tid;
	(void)n;
	(void)user;
	tk_pool_queue(g_drop_pool, (uint32_t)tk_pool_index(g_drop_pool, buf), (uint32_t)n);
	if (g_give_back && tk_pool_dequeue(g_drop_pool, &idx) == TK_OK)
		tk_pool_give(g_drop_pool, idx);
	return tk_pool_take(g_drop_pool, &idx) == TK_OK ? tk_pool_buffer(g_drop_pool, idx) : NULL;
}

static void *drop_acquire(tk_buffer_id id, void *user)
{
	uint32_t idx;
	(void)id;
	(void)user;
	return tk_pool_take(g_drop_pool, &idx) == TK_OK ? tk_pool_buffer(g_drop_pool, idx) : NULL;
}

static size_t drop_start(tk_buffer_id id, void *buf, uint64_t dropped, void *user)
{
	struct rec *r = buf;
	(void)id;
	(void)user;
	g_dropped_seen += dropped;
	r->tid = 0xffffffffu; /* a leading marker record */
	r->seq = 0;
	r->payload = dropped;
	return 1;
}

struct drop_arg {
	tk_buffer_id id;
	unsigned dropped;
};

static void *drop_some(void *arg)
{
	struct drop_arg *a = arg;
	unsigned i;

	for (i = 0; i < 5; i++)
		if (tk_buffer_reserve(a->id) == NULL)
			a->dropped++;
	return NULL;
}

static void test_dropping(void **state)
{
	tk_buffer_config cfg = { .record_size = sizeof(struct rec), .buffer_size = 4096, .full = drop_full,
				 .acquire = drop_acquire, .start = drop_start };
	static tk_buffer_id id = TK_BUFFER_ID_INVALID;
	unsigned i, written = 0, dropped = 0, per_buffer = 4096 / sizeof(struct rec) - 1;
	uint32_t idx;

	(void)state;
	assert_int_equal(tk_pool_create(&g_drop_pool, 2, 4096), TK_OK);
	if (id == TK_BUFFER_ID_INVALID)
		id = tk_buffer_define_config(&cfg);
	assert_int_not_equal(id, TK_BUFFER_ID_INVALID);
	g_dropped_seen = 0;
	g_give_back = 0;
	for (i = 0; i < per_buffer * 3; i++) {
		struct rec *r = tk_buffer_reserve(id);
		if (r == NULL) {
			dropped++;
			continue;
		}
		r->tid = 1;
		r->seq = i;
		tk_buffer_commit(id, r);
		written++;
	}
	/* two buffers exist: the third buffer's worth was dropped */
	assert_int_equal(written, 2 * per_buffer);
	assert_int_equal(dropped, per_buffer);
	/* not yet told to any start hook: pending, and peeking does not consume */
	assert_int_equal(tk_buffer_pending_dropped(id, 0), dropped);
	assert_int_equal(tk_buffer_pending_dropped(id, 0), dropped);
	/* a thread that drops and exits leaves its count behind */
	{
		pthread_t th;
		struct drop_arg a = { id, 0 };
		assert_int_equal(pthread_create(&th, NULL, drop_some, &a), 0);
		pthread_join(th, NULL);
		assert_int_equal(a.dropped, 5);
		assert_int_equal(tk_buffer_pending_dropped(id, 0), dropped + 5);
		/* taken: reported once, then nothing is pending and no start hook gets it again */
		assert_int_equal(tk_buffer_pending_dropped(id, 1), dropped + 5);
		assert_int_equal(tk_buffer_pending_dropped(id, 0), 0);
		dropped = 0;
	}
	/* a buffer comes back: the next record starts a buffer whose start hook learns the count */
	while (tk_pool_dequeue(g_drop_pool, &idx) == TK_OK)
		tk_pool_give(g_drop_pool, idx);
	assert_non_null(tk_buffer_reserve(id));
	assert_int_equal(g_dropped_seen, dropped);
	tk_buffer_discard_all(id);
	tk_pool_destroy(g_drop_pool);
}

/* Collecting other threads' committed records while they keep writing. */
static _Atomic int g_keep_writing;
static _Atomic uint64_t g_committed;

static void *slow_writer(void *arg)
{
	tk_buffer_id id = *(tk_buffer_id *)arg;
	uint32_t tid = gettid_u32(), i = 0;

	while (atomic_load(&g_keep_writing) && i < 100) {
		struct rec *r = tk_buffer_reserve(id);
		if (r != NULL) {
			r->tid = tid;
			r->seq = i++;
			tk_buffer_commit(id, r);
			atomic_fetch_add(&g_committed, 1);
		}
	}
	while (atomic_load(&g_keep_writing))
		usleep(1000);
	return NULL;
}

static void count_collected(void *buf, uint64_t n, void *ctx)
{
	const struct rec *r = buf;
	uint64_t i;
	for (i = 0; i < n; i++)
		assert_int_equal(r[i].seq, i);
	*(uint64_t *)ctx += n;
}

static void test_for_each_thread(void **state)
{
	static tk_buffer_id id = TK_BUFFER_ID_INVALID;
	pthread_t th[3];
	uint64_t collected = 0;
	unsigned i;

	(void)state;
	if (id == TK_BUFFER_ID_INVALID)
		id = tk_buffer_define(sizeof(struct rec), 4, consume_and_reuse, NULL);
	reset_sink();
	atomic_store(&g_keep_writing, 1);
	atomic_store(&g_committed, 0);
	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, slow_writer, &id);
	while (atomic_load(&g_committed) < 300)
		usleep(1000);
	tk_buffer_for_each_thread(id, count_collected, &collected);
	assert_int_equal(collected, 300);
	atomic_store(&g_keep_writing, 0);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(g_sink.records, 300); /* then delivered at thread exit */
}

/* A plain definition whose callback returns NULL: the thread stops recording (no buffer is
 * allocated behind the callback's back) and every refused record is counted. */
static _Atomic unsigned g_refusals;
static void *g_refused_buf;

static void *refuse(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n, void *user)
{
	(void)id;
	(void)tid;
	(void)n;
	(void)user;
	atomic_fetch_add(&g_refusals, 1);
	g_refused_buf = buf;
	return NULL;
}

struct refuse_arg {
	tk_buffer_id id;
	unsigned per, nulls;
};

static void *refuse_writer(void *arg)
{
	struct refuse_arg *a = arg;
	unsigned i;

	for (i = 0; i < a->per * 3; i++) {
		struct rec *r = tk_buffer_reserve(a->id);
		if (r == NULL) {
			a->nulls++;
			continue;
		}
		r->seq = i;
		tk_buffer_commit(a->id, r);
	}
	return NULL;
}

static void test_callback_returns_null(void **state)
{
	static tk_buffer_id id = TK_BUFFER_ID_INVALID;
	long page = sysconf(_SC_PAGESIZE);
	struct refuse_arg a;
	pthread_t th;

	(void)state;
	if (id == TK_BUFFER_ID_INVALID)
		id = tk_buffer_define(sizeof(struct rec), 1, refuse, NULL);
	assert_int_not_equal(id, TK_BUFFER_ID_INVALID);
	a = (struct refuse_arg){ id, (unsigned)((size_t)page / sizeof(struct rec)), 0 };
	atomic_store(&g_refusals, 0);
	/* on a thread of its own, so that its drops end as an exited thread's */
	assert_int_equal(pthread_create(&th, NULL, refuse_writer, &a), 0);
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&g_refusals), 1); /* no second buffer was made */
	assert_int_equal(a.nulls, 2 * a.per);
	assert_int_equal(tk_buffer_pending_dropped(id, 0), a.nulls);
	assert_int_equal(tk_buffer_pending_dropped(id, 1), a.nulls);
	assert_int_equal(tk_buffer_pending_dropped(id, 0), 0);
	free(g_refused_buf);

	/* the same on this thread, which lives on: the count is pending while it drops */
	a.nulls = 0;
	atomic_store(&g_refusals, 0);
	refuse_writer(&a);
	assert_int_equal(atomic_load(&g_refusals), 1);
	assert_int_equal(tk_buffer_pending_dropped(id, 0), a.nulls);
	assert_int_equal(tk_buffer_flush(id), TK_OK); /* no buffer: nothing to deliver */
	assert_int_equal(atomic_load(&g_refusals), 1);
	assert_null(tk_buffer_reserve(id));
	assert_int_equal(tk_buffer_pending_dropped(id, 1), a.nulls + 1);
	free(g_refused_buf);
}

/* A position hook and a drop hook: the committed position is published where the hook
 * says (a shared pool's descriptor), one release store per record, and drops are counted
 * there instead of per thread. */
static tk_pool *g_pub_pool;
static _Atomic unsigned g_pub_start_dropped;

static void *pub_acquire(tk_buffer_id id, void *user)
{
	uint32_t idx;
	(void)id;
	(void)user;
	return tk_pool_take(g_pub_pool, &idx) == TK_OK ? tk_pool_buffer(g_pub_pool, idx) : NULL;
}

static void *pub_full(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n, void *user)
{
	(void)tid;
	tk_pool_queue(g_pub_pool, (uint32_t)tk_pool_index(g_pub_pool, buf), (uint32_t)n);
	return pub_acquire(id, user);
}

static size_t pub_start(tk_buffer_id id, void *buf, uint64_t dropped, void *user)
{
	(void)id;
	(void)buf;
	(void)user;
	atomic_fetch_add(&g_pub_start_dropped, (unsigned)dropped);
	return 0;
}

static _Atomic uint32_t *pub_position(tk_buffer_id id, void *buf, void *user)
{
	(void)id;
	(void)user;
	return &tk_pool_desc_of(g_pub_pool, (uint32_t)tk_pool_index(g_pub_pool, buf))->committed;
}

static void pub_dropped(tk_buffer_id id, void *user)
{
	(void)id;
	(void)user;
	tk_pool_count_dropped(g_pub_pool, 1);
}

static void test_position_published(void **state)
{
	tk_buffer_config cfg = { .record_size = sizeof(struct rec), .buffer_size = 4096, .full = pub_full,
				 .acquire = pub_acquire, .start = pub_start, .position = pub_position,
				 .dropped = pub_dropped };
	static tk_buffer_id id = TK_BUFFER_ID_INVALID;
	const unsigned per = 4096 / sizeof(struct rec);
	tk_pool_stats st;
	tk_pool_desc *d;
	struct rec *r;
	uint32_t idx, i;

	(void)state;
	assert_int_equal(tk_pool_create(&g_pub_pool, 2, 4096), TK_OK);
	if (id == TK_BUFFER_ID_INVALID)
		id = tk_buffer_define_config(&cfg);
	assert_int_not_equal(id, TK_BUFFER_ID_INVALID);
	atomic_store(&g_pub_start_dropped, 0);
	r = tk_buffer_reserve(id);
	assert_non_null(r);
	idx = (uint32_t)tk_pool_index(g_pub_pool, r);
	d = tk_pool_desc_of(g_pub_pool, idx);
	assert_int_equal(atomic_load(&d->state), TK_POOL_WRITING);
	/* reserved but not committed: nothing published */
	assert_int_equal(atomic_load(&d->committed), 0);
	for (i = 0; i < 10; i++) {
		if (i > 0)
			r = tk_buffer_reserve(id);
		r->seq = i;
		tk_buffer_commit(id, r);
		assert_int_equal(atomic_load(&d->committed), (i + 1) * sizeof(struct rec));
	}
	assert_ptr_equal(tk_buffer_pointer(id), (struct rec *)tk_pool_buffer(g_pub_pool, idx) + 10);
	/* fill both buffers, then drop: counted in the pool, not per thread */
	for (i = 10; i < 3 * per; i++) {
		r = tk_buffer_reserve(id);
		if (r != NULL) {
			r->seq = i;
			tk_buffer_commit(id, r);
		}
	}
	tk_pool_get_stats(g_pub_pool, &st);
	assert_int_equal(st.records_dropped, per);
	assert_int_equal(st.dropped_pending, per);
	assert_int_equal(tk_buffer_pending_dropped(id, 0), 0);
	assert_int_equal(atomic_load(&d->state), TK_POOL_QUEUED);
	assert_int_equal(atomic_load(&d->committed), per * sizeof(struct rec));
	/* a buffer comes back: the start hook is not told (the pool holds the count) */
	assert_int_equal(tk_pool_dequeue(g_pub_pool, &idx), TK_OK);
	tk_pool_give(g_pub_pool, idx);
	assert_non_null(tk_buffer_reserve(id));
	assert_int_equal(atomic_load(&g_pub_start_dropped), 0);
	assert_int_equal(tk_pool_take_dropped(g_pub_pool), per);
	tk_buffer_discard_all(id);
	tk_pool_destroy(g_pub_pool);
}

/* At process exit every thread's partial buffer reaches the callback: a child writes
 * partial buffers on two threads and exits; its callback counts into shared memory. */
struct exit_counts {
	_Atomic uint64_t records, calls;
	_Atomic uint32_t bad;
};
static struct exit_counts *g_exit_counts;

static void *count_at_exit(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n, void *user)
{
	const struct rec *r = buf;
	uint64_t i;
	(void)id;
	(void)tid;
	(void)user;
	for (i = 0; i < n; i++)
		if (r[i].seq != i || r[i].payload != 0xabcdu)
			atomic_fetch_add(&g_exit_counts->bad, 1);
	atomic_fetch_add(&g_exit_counts->records, n);
	atomic_fetch_add(&g_exit_counts->calls, 1);
	return buf;
}

static void write_partial(tk_buffer_id id, uint32_t n)
{
	uint32_t i;
	for (i = 0; i < n; i++) {
		struct rec *r = tk_buffer_reserve(id);
		r->seq = i;
		r->payload = 0xabcdu;
		tk_buffer_commit(id, r);
	}
}

static _Atomic int g_child_ready;

static void *partial_then_wait(void *arg)
{
	write_partial(*(tk_buffer_id *)arg, 7);
	atomic_store(&g_child_ready, 1);
	for (;;)
		pause(); /* still running when the process exits */
	return NULL;
}

static void test_partial_at_process_exit(void **state)
{
	pid_t pid;
	int status;

	(void)state;
	g_exit_counts = mmap(NULL, sizeof(*g_exit_counts), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(g_exit_counts != MAP_FAILED);
	memset(g_exit_counts, 0, sizeof(*g_exit_counts));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		tk_buffer_id id = tk_buffer_define(sizeof(struct rec), 2, count_at_exit, NULL);
		pthread_t th;
		if (id == TK_BUFFER_ID_INVALID)
			_exit(2);
		write_partial(id, 5);
		if (pthread_create(&th, NULL, partial_then_wait, &id) != 0)
			_exit(3);
		while (!atomic_load(&g_child_ready))
			usleep(1000);
		setenv("TK_TEST_KEEP", "1", 1); /* the scratch directory is the parent's */
		exit(0);                        /* atexit: partial buffers delivered */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(atomic_load(&g_exit_counts->records), 5 + 7);
	assert_int_equal(atomic_load(&g_exit_counts->calls), 2);
	assert_int_equal(atomic_load(&g_exit_counts->bad), 0);
	munmap(g_exit_counts, sizeof(*g_exit_counts));
}

static void *noop_callback(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n, void *user)
{
	(void)id;
	(void)tid;
	(void)n;
	(void)user;
	return buf;
}

/* ---- deallocating a buffer in use; exit while a thread writes (issue 10 items 4, 5) ------- */

static uint32_t g_seen_seq;
static int g_seen_bad;

static void *check_seq(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n, void *user)
{
	const struct rec *r = buf;
	uint64_t i;

	(void)id;
	(void)tid;
	(void)user;
	for (i = 0; i < n; i++)
		if (r[i].seq != g_seen_seq++ || r[i].payload != (uint64_t)r[i].seq * 3)
			g_seen_bad++;
	return buf;
}

static void *dealloc_other(void *arg)
{
	struct { tk_buffer_id id; void *buf; } *a = arg;
	tk_buffer_deallocate(a->id, a->buf);
	return NULL;
}

/* Pin documents deallocating a buffer in use as doing nothing (seed 004): the thread goes
 * on writing it, from whichever thread the call comes. Under ASan, a use after free if
 * the call freed it. */
static void test_deallocate_in_use_ignored(void **state)
{
	static tk_buffer_id id = TK_BUFFER_ID_INVALID;
	struct { tk_buffer_id id; void *buf; } a;
	pthread_t th;
	void *cur;
	uint32_t i;

	(void)state;
	if (id == TK_BUFFER_ID_INVALID)
		id = tk_buffer_define(sizeof(struct rec), 1, check_seq, NULL);
	assert_true(id != TK_BUFFER_ID_INVALID);
	g_seen_seq = 0;
	g_seen_bad = 0;
	cur = tk_buffer_pointer(id); /* a fresh buffer: its start */
	assert_non_null(cur);
	tk_buffer_deallocate(id, cur);
	for (i = 0; i < 50; i++) {
		struct rec *r = tk_buffer_reserve(id);
		assert_ptr_equal(r, (struct rec *)cur + i); /* still the same buffer */
		r->seq = i;
		r->payload = (uint64_t)i * 3;
		tk_buffer_commit(id, r);
	}
	a.id = id;
	a.buf = cur;
	pthread_create(&th, NULL, dealloc_other, &a);
	pthread_join(th, NULL);
	for (; i < 100; i++) {
		struct rec *r = tk_buffer_reserve(id);
		assert_ptr_equal(r, (struct rec *)cur + i);
		r->seq = i;
		r->payload = (uint64_t)i * 3;
		tk_buffer_commit(id, r);
	}
	assert_int_equal(tk_buffer_flush(id), TK_OK);
	assert_int_equal(g_seen_seq, 100);
	assert_int_equal(g_seen_bad, 0);
}

/*
 * A thread that has its record's address when the process exits writes it after the exit
 * delivery took its buffer. Deterministic: the writer holds a reserved record until an
 * atexit handler registered before the module's own (so it runs after the delivery) lets
 * it write. Under ASan a freed buffer is a use after free every time.
 */
static tk_buffer_id g_race_id;
static _Atomic int g_race_stage; /* 1: record reserved, 2: write it, 3: written */

static void *race_writer(void *arg)
{
	struct rec *r;
	uint32_t i;

	(void)arg;
	for (i = 0; i < 10; i++) {
		r = tk_buffer_reserve(g_race_id);
		r->seq = i;
		r->payload = (uint64_t)i * 3;
		tk_buffer_commit(g_race_id, r);
	}
	r = tk_buffer_reserve(g_race_id);
	atomic_store(&g_race_stage, 1);
	while (atomic_load(&g_race_stage) != 2)
		usleep(100);
	memset(r, 0xab, sizeof(*r));
	tk_buffer_commit(g_race_id, r);
	atomic_store(&g_race_stage, 3);
	for (;;)
		pause();
	return NULL;
}

static void race_release(void)
{
	atomic_store(&g_race_stage, 2);
	while (atomic_load(&g_race_stage) != 3)
		usleep(100);
}

static int child_exit_race(void)
{
	pthread_t th;

	atexit(race_release); /* before the module registers its own: runs after it */
	g_race_id = tk_buffer_define(sizeof(struct rec), 1, check_seq, NULL);
	if (g_race_id == TK_BUFFER_ID_INVALID || pthread_create(&th, NULL, race_writer, NULL) != 0)
		return 2;
	while (atomic_load(&g_race_stage) != 1)
		usleep(100);
	exit(g_seen_bad == 0 ? 0 : 3);
}

static void test_exit_while_writing(void **state)
{
	int round;

	(void)state;
	for (round = 0; round < 3; round++) {
		pid_t pid = fork();
		int status;
		assert_true(pid >= 0);
		if (pid == 0) {
			execl("/proc/self/exe", "test_buffer", "--exit-race", (char *)NULL);
			_exit(127);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

/* Last: it uses up the definitions. */
static void test_define_errors(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	tk_buffer_config bad = { .record_size = 16, .buffer_size = 8, .full = noop_callback };
	int n = 0;

	(void)state;
	assert_int_equal(tk_buffer_define(0, 1, noop_callback, NULL), TK_BUFFER_ID_INVALID);
	assert_int_equal(tk_buffer_define((size_t)page + 1, 1, noop_callback, NULL), TK_BUFFER_ID_INVALID);
	/* Pin: "This size must be less than the size of an OS page." */
	assert_int_equal(tk_buffer_define((size_t)page, 1, noop_callback, NULL), TK_BUFFER_ID_INVALID);
	assert_int_equal(tk_buffer_define(16, 0, noop_callback, NULL), TK_BUFFER_ID_INVALID);
	assert_int_equal(tk_buffer_define(16, 1, NULL, NULL), TK_BUFFER_ID_INVALID);
	assert_int_equal(tk_buffer_define_config(&bad), TK_BUFFER_ID_INVALID);
	assert_int_equal(tk_buffer_define_config(NULL), TK_BUFFER_ID_INVALID);
	while (tk_buffer_define(16, 1, noop_callback, NULL) != TK_BUFFER_ID_INVALID)
		n++;
	assert_true(n > 0 && n < TK_BUFFER_MAX); /* then "too many buffers" */
	assert_null(tk_buffer_allocate(TK_BUFFER_MAX + 3));
	assert_null(tk_buffer_pointer(-1));
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--exit-race") == 0)
		return child_exit_race();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_basics),    cmocka_unit_test(test_pool_two_mappings),
		cmocka_unit_test(test_pool_handover_through_another_process),
		cmocka_unit_test(test_pool_concurrent), cmocka_unit_test(test_single_thread),
		cmocka_unit_test(test_many_threads),   cmocka_unit_test(test_double_buffering),
		cmocka_unit_test(test_dropping),       cmocka_unit_test(test_for_each_thread),
		cmocka_unit_test(test_pool_states_and_counters),
		cmocka_unit_test(test_callback_returns_null),
		cmocka_unit_test(test_position_published),
		cmocka_unit_test(test_partial_at_process_exit),
		cmocka_unit_test(test_deallocate_in_use_ignored),
		cmocka_unit_test(test_exit_while_writing),
		cmocka_unit_test(test_define_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
