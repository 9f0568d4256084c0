/* SPDX-License-Identifier: MIT */
/*
 * Per-thread trace buffers in the model of Pin's fast buffering API.
 *
 * Each thread has, per definition, its buffer `base`, a `limit` in bytes and a pointer `pos`
 * to the word holding how many bytes it has committed: its own TLS word, or (position hook)
 * the buffer's descriptor in a shared pool, where another process can read it. The inline
 * tk_buffer_reserve() hands out base + *pos while *pos < limit, and tk_buffer_commit()
 * release-stores the advanced position, so a reader that loads it (acquire) sees every
 * record before it complete. Everything else is the slow path here: the first buffer of a
 * thread, a full buffer (delivered to the definition's callback with this thread's lock
 * released), dropping records while no buffer is available, thread exit (a pthread key
 * destructor delivers partial buffers) and process exit (atexit).
 *
 * A thread has a buffer while its limit is non-zero. Other threads (collectors, discard,
 * exit delivery) may take it away: they set limit to 0 and pos back to the thread's own
 * word, and leave base alone, so that an owner racing with them still writes into memory
 * that exists.
 *
 * Locks: one mutex per thread guards its buffer switches against collectors
 * (tk_buffer_for_each_thread, discard, exit delivery); the registry mutex guards the list
 * of threads. Order: registry, then thread. No callback runs under either.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracekit/buffer.h"

struct buffer_def {
	int used;
	tk_buffer_config cfg;
	size_t records_per_buffer;
	_Atomic uint64_t orphan_dropped; /* pending drops of threads that exited */
};

struct thread_state {
	struct thread_state *next, *prev;
	pthread_mutex_t lock;
	uint32_t tid;
	int registered;
	struct tk__buffer_thread *bufs; /* this thread's tk__buffer_tls */
	uint64_t dropped[TK_BUFFER_MAX];
	unsigned char refused[TK_BUFFER_MAX]; /* the callback returned NULL: no buffer until acquire gives one */
};

TK_API __thread struct tk__buffer_thread tk__buffer_tls[TK_BUFFER_MAX]
	__attribute__((tls_model("initial-exec")));
static __thread struct thread_state tls_state;

static struct buffer_def g_defs[TK_BUFFER_MAX];
static pthread_mutex_t g_defs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_state *g_threads;
static pthread_key_t g_exit_key;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static _Atomic int g_exiting;

static void thread_exit(void *arg);
static void process_exit(void);

static void init_once(void)
{
	pthread_key_create(&g_exit_key, thread_exit);
	atexit(process_exit);
}

static struct buffer_def *def_of(tk_buffer_id id)
{
	if (id < 0 || id >= TK_BUFFER_MAX || !g_defs[id].used)
		return NULL;
	return &g_defs[id];
}

tk_buffer_id tk_buffer_define_config(const tk_buffer_config *cfg)
{
	long page = sysconf(_SC_PAGESIZE);
	tk_buffer_id id;

	/* Pin: "This size must be less than the size of an OS page." Positions are 32-bit. */
	if (cfg == NULL || cfg->full == NULL || cfg->record_size == 0 ||
	    cfg->record_size >= (size_t)(page > 0 ? page : 4096) || cfg->buffer_size < cfg->record_size ||
	    cfg->buffer_size > UINT32_MAX)
		return TK_BUFFER_ID_INVALID;
	pthread_once(&g_once, init_once);
	pthread_mutex_lock(&g_defs_lock);
	for (id = 0; id < TK_BUFFER_MAX && g_defs[id].used; id++)
		;
	if (id == TK_BUFFER_MAX) {
		pthread_mutex_unlock(&g_defs_lock);
		return TK_BUFFER_ID_INVALID;
	}
	memset(&g_defs[id], 0, sizeof(g_defs[id]));
	g_defs[id].cfg = *cfg;
	g_defs[id].records_per_buffer = cfg->buffer_size / cfg->record_size;
	g_defs[id].used = 1;
	pthread_mutex_unlock(&g_defs_lock);
	return id;
}

tk_buffer_id tk_buffer_define(size_t record_size, uint32_t num_pages, tk_buffer_callback fn, void *user)
{
	long page = sysconf(_SC_PAGESIZE);
	tk_buffer_config cfg = { 0 };

	if (num_pages == 0)
		return TK_BUFFER_ID_INVALID;
	cfg.record_size = record_size;
	cfg.buffer_size = (size_t)num_pages * (size_t)(page > 0 ? page : 4096);
	cfg.full = fn;
	cfg.user = user;
	return tk_buffer_define_config(&cfg);
}

void *tk_buffer_allocate(tk_buffer_id id)
{
	struct buffer_def *d = def_of(id);

	if (d == NULL)
		return NULL;
	if (d->cfg.acquire != NULL)
		return d->cfg.acquire(id, d->cfg.user);
	return malloc(d->cfg.buffer_size);
}

/* 1 if buf is the current buffer of a thread (for definition id). */
static int in_use(tk_buffer_id id, const void *buf)
{
	const struct tk__buffer_thread *me = &tk__buffer_tls[id];
	struct thread_state *ts;
	int used;

	if (atomic_load_explicit(&me->limit, memory_order_relaxed) != 0 &&
	    atomic_load_explicit(&me->base, memory_order_relaxed) == buf)
		return 1;
	pthread_mutex_lock(&g_registry_lock);
	for (used = 0, ts = g_threads; ts != NULL && !used; ts = ts->next) {
		pthread_mutex_lock(&ts->lock);
		used = atomic_load_explicit(&ts->bufs[id].limit, memory_order_relaxed) != 0 &&
		       atomic_load_explicit(&ts->bufs[id].base, memory_order_relaxed) == buf;
		pthread_mutex_unlock(&ts->lock);
	}
	pthread_mutex_unlock(&g_registry_lock);
	return used;
}

void tk_buffer_deallocate(tk_buffer_id id, void *buf)
{
	struct buffer_def *d = def_of(id);

	if (d == NULL || buf == NULL)
		return;
	/* Pin: a buffer a thread is using is not deallocated (the thread goes on writing it). */
	if (in_use(id, buf))
		return;
	if (d->cfg.release != NULL)
		d->cfg.release(id, buf, d->cfg.user);
	else
		free(buf);
}

static uint32_t current_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

static void register_thread(struct thread_state *ts)
{
	pthread_once(&g_once, init_once);
	pthread_mutex_init(&ts->lock, NULL);
	ts->tid = current_tid();
	ts->bufs = tk__buffer_tls;
	pthread_mutex_lock(&g_registry_lock);
	ts->next = g_threads;
	ts->prev = NULL;
	if (g_threads != NULL)
		g_threads->prev = ts;
	g_threads = ts;
	ts->registered = 1;
	pthread_mutex_unlock(&g_registry_lock);
	pthread_setspecific(g_exit_key, ts);
}

static int has_buffer(const struct tk__buffer_thread *t)
{
	return atomic_load_explicit(&t->limit, memory_order_relaxed) != 0;
}

/* Records committed in the thread's buffer (thread lock held, or on the thread itself). */
static uint64_t committed_records(const struct buffer_def *d, struct tk__buffer_thread *t)
{
	_Atomic uint32_t *pos = atomic_load_explicit(&t->pos, memory_order_relaxed);

	uint64_t n = pos != NULL ? atomic_load_explicit(pos, memory_order_acquire) / d->cfg.record_size : 0;

	/* pos may be in a region another process writes: never more than the buffer holds */
	return n < d->records_per_buffer ? n : d->records_per_buffer;
}

/* Makes buf the thread's buffer (thread lock held, on the thread itself). */
static void install(struct buffer_def *d, tk_buffer_id id, struct thread_state *ts, char *buf)
{
	struct tk__buffer_thread *t = &tk__buffer_tls[id];
	_Atomic uint32_t *pos = NULL;
	size_t lead = 0;

	t->record_size = (uint32_t)d->cfg.record_size;
	if (d->cfg.start != NULL) {
		lead = d->cfg.start(id, buf, ts->dropped[id], d->cfg.user);
		if (lead > d->records_per_buffer)
			lead = d->records_per_buffer;
		ts->dropped[id] = 0; /* told: each drop is reported once */
	}
	if (d->cfg.position != NULL)
		pos = d->cfg.position(id, buf, d->cfg.user);
	if (pos == NULL)
		pos = &t->own;
	ts->refused[id] = 0;
	atomic_store_explicit(pos, (uint32_t)(lead * d->cfg.record_size), memory_order_release);
	atomic_store_explicit(&t->base, buf, memory_order_relaxed);
	atomic_store_explicit(&t->pos, pos, memory_order_relaxed);
	/* one past the last offset a whole record starts at: a position below it leaves room
	 * for a record even when another process (a shared pool) moved it to an odd value */
	atomic_store_explicit(&t->limit, (uint32_t)((d->records_per_buffer - 1) * d->cfg.record_size + 1),
			      memory_order_relaxed);
}

/* Takes the thread's buffer away (thread lock held); returns it and its record count. */
static char *detach(struct buffer_def *d, struct tk__buffer_thread *t, uint64_t *n)
{
	char *buf = atomic_load_explicit(&t->base, memory_order_relaxed);

	*n = committed_records(d, t);
	atomic_store_explicit(&t->limit, 0, memory_order_relaxed);
	atomic_store_explicit(&t->pos, &t->own, memory_order_relaxed);
	return buf;
}

static void note_drop(struct buffer_def *d, struct thread_state *ts, tk_buffer_id id)
{
	if (d->cfg.dropped != NULL)
		d->cfg.dropped(id, d->cfg.user);
	else
		ts->dropped[id]++;
}

void *tk__buffer_reserve_slow(tk_buffer_id id)
{
	struct buffer_def *d = def_of(id);
	struct thread_state *ts = &tls_state;
	struct tk__buffer_thread *t;
	uint32_t off;

	if (d == NULL)
		return NULL;
	if (!ts->registered)
		register_thread(ts);
	t = &tk__buffer_tls[id];
	pthread_mutex_lock(&ts->lock);
	if (atomic_load_explicit(&g_exiting, memory_order_relaxed)) {
		pthread_mutex_unlock(&ts->lock);
		return NULL;
	}
	if (has_buffer(t)) {
		/* Full: hand it to the callback without holding our lock. */
		uint64_t n;
		char *full = detach(d, t, &n), *next;
		pthread_mutex_unlock(&ts->lock);
		next = d->cfg.full(id, ts->tid, full, n, d->cfg.user);
		pthread_mutex_lock(&ts->lock);
		if (next != NULL)
			install(d, id, ts, next);
		else
			ts->refused[id] = 1;
	} else if (!ts->refused[id] || d->cfg.acquire != NULL) {
		/* The first buffer, or one after drops: only an acquire hook ends a refusal. */
		char *buf = d->cfg.acquire != NULL ? d->cfg.acquire(id, d->cfg.user) : malloc(d->cfg.buffer_size);
		if (buf != NULL)
			install(d, id, ts, buf);
	}
	off = has_buffer(t) ? atomic_load_explicit(atomic_load_explicit(&t->pos, memory_order_relaxed),
						   memory_order_relaxed)
			    : 0;
	if (!has_buffer(t) || off >= atomic_load_explicit(&t->limit, memory_order_relaxed)) {
		note_drop(d, ts, id);
		pthread_mutex_unlock(&ts->lock);
		return NULL;
	}
	pthread_mutex_unlock(&ts->lock);
	return atomic_load_explicit(&t->base, memory_order_relaxed) + off;
}

void *tk_buffer_pointer(tk_buffer_id id)
{
	struct tk__buffer_thread *t;

	if (def_of(id) == NULL)
		return NULL;
	t = &tk__buffer_tls[id];
	if (!has_buffer(t))
		return tk__buffer_reserve_slow(id); /* creates the first buffer */
	return atomic_load_explicit(&t->base, memory_order_relaxed) +
	       atomic_load_explicit(atomic_load_explicit(&t->pos, memory_order_relaxed), memory_order_relaxed);
}

int tk_buffer_flush(tk_buffer_id id)
{
	struct buffer_def *d = def_of(id);
	struct thread_state *ts = &tls_state;
	struct tk__buffer_thread *t;
	uint64_t n;
	char *buf, *next;

	if (d == NULL)
		return TK_EINVAL;
	if (!ts->registered)
		return TK_OK;
	t = &tk__buffer_tls[id];
	pthread_mutex_lock(&ts->lock);
	if (!has_buffer(t)) {
		pthread_mutex_unlock(&ts->lock);
		return TK_OK;
	}
	buf = detach(d, t, &n);
	pthread_mutex_unlock(&ts->lock);
	next = d->cfg.full(id, ts->tid, buf, n, d->cfg.user);
	pthread_mutex_lock(&ts->lock);
	if (next != NULL && !atomic_load_explicit(&g_exiting, memory_order_relaxed)) {
		install(d, id, ts, next);
		next = NULL;
	} else if (next == NULL) {
		ts->refused[id] = 1;
	}
	pthread_mutex_unlock(&ts->lock);
	if (next != NULL) /* (not under the lock: deallocating looks at every thread) */
		tk_buffer_deallocate(id, next);
	return TK_OK;
}

void tk_buffer_for_each_thread(tk_buffer_id id, void (*fn)(void *buf, uint64_t n_records, void *ctx), void *ctx)
{
	struct buffer_def *d = def_of(id);
	struct thread_state *ts;

	if (d == NULL || fn == NULL)
		return;
	pthread_mutex_lock(&g_registry_lock);
	for (ts = g_threads; ts != NULL; ts = ts->next) {
		struct tk__buffer_thread *t = &ts->bufs[id];
		pthread_mutex_lock(&ts->lock);
		if (has_buffer(t))
			fn(atomic_load_explicit(&t->base, memory_order_relaxed), committed_records(d, t), ctx);
		pthread_mutex_unlock(&ts->lock);
	}
	pthread_mutex_unlock(&g_registry_lock);
}

void tk_buffer_discard_all(tk_buffer_id id)
{
	struct buffer_def *d = def_of(id);
	struct thread_state *ts;

	if (d == NULL)
		return;
	pthread_mutex_lock(&g_registry_lock);
	for (ts = g_threads; ts != NULL; ts = ts->next) {
		uint64_t n;
		pthread_mutex_lock(&ts->lock);
		detach(d, &ts->bufs[id], &n);
		pthread_mutex_unlock(&ts->lock);
	}
	pthread_mutex_unlock(&g_registry_lock);
}

void tk_buffer_forget_after_fork(void)
{
	struct thread_state *ts = &tls_state;
	tk_buffer_id id;

	/* Only this thread exists in the child; any lock may have been held by another. */
	pthread_mutex_init(&g_defs_lock, NULL);
	pthread_mutex_init(&g_registry_lock, NULL);
	g_threads = NULL;
	if (!ts->registered)
		return;
	pthread_mutex_init(&ts->lock, NULL);
	ts->tid = current_tid();
	for (id = 0; id < TK_BUFFER_MAX; id++) {
		struct tk__buffer_thread *t = &tk__buffer_tls[id];
		/* the parent's buffer is the parent's: taken away, neither delivered nor given back */
		atomic_store_explicit(&t->limit, 0, memory_order_relaxed);
		if (atomic_load_explicit(&t->pos, memory_order_relaxed) != NULL)
			atomic_store_explicit(&t->pos, &t->own, memory_order_relaxed);
		atomic_store_explicit(&t->base, NULL, memory_order_relaxed);
		ts->refused[id] = 0;
	}
	ts->next = ts->prev = NULL;
	g_threads = ts;
}

/* Delivers a thread's partial buffers; used at thread and process exit. */
struct pending_delivery {
	tk_buffer_id id;
	uint32_t tid;
	char *buf;
	uint64_t n;
};

/*
 * Buffers delivered at process exit are never given back: the thread that owned one may
 * still be running and write a record into it (it read its buffer's address before the
 * buffer was taken away), so the memory must stay valid until the process is gone. They
 * are kept here (reachable, so leak checkers stay quiet).
 */
static void **g_kept;
static size_t g_n_kept, g_cap_kept;
static pthread_mutex_t g_kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep_until_exit(void *buf)
{
	pthread_mutex_lock(&g_kept_lock);
	if (g_n_kept == g_cap_kept) {
		size_t cap = g_cap_kept ? g_cap_kept * 2 : 64;
		void **k = realloc(g_kept, cap * sizeof(*k));
		if (k != NULL) {
			g_kept = k;
			g_cap_kept = cap;
		}
	}
	if (g_n_kept < g_cap_kept)
		g_kept[g_n_kept++] = buf;
	pthread_mutex_unlock(&g_kept_lock);
}

static __thread int tls_delivering_at_exit;

int tk_buffer_delivering_at_exit(void)
{
	return tls_delivering_at_exit || atomic_load_explicit(&g_exiting, memory_order_relaxed);
}

static void deliver(const struct pending_delivery *p)
{
	struct buffer_def *d = def_of(p->id);
	void *ret;

	if (d == NULL)
		return;
	tls_delivering_at_exit = 1;
	ret = d->cfg.full(p->id, p->tid, p->buf, p->n, d->cfg.user);
	tls_delivering_at_exit = 0;
	if (ret == NULL)
		return;
	if (atomic_load_explicit(&g_exiting, memory_order_relaxed))
		keep_until_exit(ret);
	else
		tk_buffer_deallocate(p->id, ret);
}

static unsigned take_all(struct thread_state *ts, struct pending_delivery *out)
{
	unsigned n = 0;
	tk_buffer_id id;

	pthread_mutex_lock(&ts->lock);
	for (id = 0; id < TK_BUFFER_MAX; id++) {
		struct buffer_def *d = def_of(id);
		if (d != NULL && has_buffer(&ts->bufs[id])) {
			out[n].id = id;
			out[n].tid = ts->tid;
			out[n].buf = detach(d, &ts->bufs[id], &out[n].n);
			n++;
		}
	}
	pthread_mutex_unlock(&ts->lock);
	return n;
}

static void thread_exit(void *arg)
{
	struct thread_state *ts = arg;
	struct pending_delivery p[TK_BUFFER_MAX];
	unsigned n, i;

	pthread_mutex_lock(&g_registry_lock);
	if (ts->prev != NULL)
		ts->prev->next = ts->next;
	else if (g_threads == ts)
		g_threads = ts->next;
	if (ts->next != NULL)
		ts->next->prev = ts->prev;
	ts->registered = 0;
	n = take_all(ts, p);
	for (i = 0; i < TK_BUFFER_MAX; i++)
		if (ts->dropped[i] > 0 && def_of((tk_buffer_id)i) != NULL)
			atomic_fetch_add(&g_defs[i].orphan_dropped, ts->dropped[i]);
	pthread_mutex_unlock(&g_registry_lock);
	for (i = 0; i < n; i++)
		deliver(&p[i]);
	pthread_mutex_destroy(&ts->lock);
}

uint64_t tk_buffer_pending_dropped(tk_buffer_id id, int take)
{
	struct buffer_def *d = def_of(id);
	struct thread_state *ts;
	uint64_t sum;

	if (d == NULL)
		return 0;
	pthread_mutex_lock(&g_registry_lock);
	sum = take ? atomic_exchange(&d->orphan_dropped, 0) : atomic_load(&d->orphan_dropped);
	for (ts = g_threads; ts != NULL; ts = ts->next) {
		pthread_mutex_lock(&ts->lock);
		sum += ts->dropped[id];
		if (take)
			ts->dropped[id] = 0;
		pthread_mutex_unlock(&ts->lock);
	}
	pthread_mutex_unlock(&g_registry_lock);
	return sum;
}

void tk_buffer_flush_all_threads(void)
{
	struct pending_delivery *all = NULL;
	struct thread_state *ts;
	size_t n = 0, cap = 0, i;

	/* Detach every thread's buffers under the registry lock (so no thread state goes away
	 * meanwhile), then deliver them with no lock held. */
	pthread_mutex_lock(&g_registry_lock);
	for (ts = g_threads; ts != NULL; ts = ts->next) {
		if (n + TK_BUFFER_MAX > cap) {
			size_t ncap = cap ? cap * 2 : 4 * TK_BUFFER_MAX;
			struct pending_delivery *na = realloc(all, ncap * sizeof(*na));
			if (na == NULL)
				break; /* out of memory at exit: the rest stays undelivered */
			all = na;
			cap = ncap;
		}
		n += take_all(ts, all + n);
	}
	pthread_mutex_unlock(&g_registry_lock);
	for (i = 0; i < n; i++)
		deliver(&all[i]);
	free(all);
}

static void process_exit(void)
{
	atomic_store_explicit(&g_exiting, 1, memory_order_relaxed);
	tk_buffer_flush_all_threads();
}
