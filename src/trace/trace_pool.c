/* SPDX-License-Identifier: MIT */
/*
 * Pool glue: the buffer hooks through which every thread's trace buffer comes from the
 * pool and goes back to it (a full buffer is queued for the drainer, ring mode reuses the
 * oldest), what every buffer starts with (TIME, BUFFER, DROPPED, the owner's THRUNNING, a
 * new thread's announcement), and the drainer registered to empty the queue (sinks: the
 * in-process logger today; docs/recording.md, "Sources and sinks").
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/trace_internal.h"

/* ---- buffer hooks --------------------------------------------------------------------- */

void *tk__trace_buffer_acquire(tk_buffer_id id, void *user)
{
	tk_pool *pool = atomic_load(&tk__trace.pool);
	uint32_t idx;

	(void)id;
	(void)user;
	if (pool == NULL)
		return NULL;
	if (tk_pool_take(pool, &idx) == TK_OK)
		return tk_pool_buffer(pool, idx);
	/* None free. Ring mode and OVERWRITEBUFFER reuse the oldest queued buffer. */
	if ((atomic_load(&trace_cfg()->ring) || atomic_load(&trace_cfg()->overwrite)) && tk_pool_dequeue(pool, &idx) == TK_OK) {
		tk_pool_desc *d = tk_pool_desc_of(pool, idx);
		const traceevent_t *s = tk_pool_buffer(pool, idx);
		uint32_t records = atomic_load_explicit(&d->records, memory_order_relaxed);
		/* A DROPPED event not yet written is lost with the buffer: its count is
		 * reported again by the next buffer started (or the logger's next flush). */
		if (d->flushed <= TRACE_SLOT_DROPPED && records > TRACE_SLOT_DROPPED &&
		    TRACE_IS_CONTROL(s[TRACE_SLOT_DROPPED].header, _TRACE_CONTROL_DROPPED))
			tk_pool_unreport_dropped(pool, (uint64_t)s[TRACE_SLOT_DROPPED].data[1] |
							       (uint64_t)s[TRACE_SLOT_DROPPED].data[2] << 32);
		tk_pool_count_stored(pool, -((int64_t)records - (int64_t)d->flushed));
		tk_pool_count_overwritten(pool, 1);
		atomic_store_explicit(&d->committed, 0, memory_order_relaxed);
		atomic_store_explicit(&d->state, TK_POOL_WRITING, memory_order_release);
		return tk_pool_buffer(pool, idx);
	}
	return NULL;
}

/* The writer publishes its position in the buffer's descriptor, where a drainer in
 * another process reads it (docs/recording.md, "Shared pool layout"). */
_Atomic uint32_t *tk__trace_buffer_position(tk_buffer_id id, void *buf, void *user)
{
	tk_pool *pool = atomic_load(&tk__trace.pool);
	int64_t idx = pool != NULL ? tk_pool_index(pool, buf) : -1;

	(void)id;
	(void)user;
	return idx >= 0 ? &tk_pool_desc_of(pool, (uint32_t)idx)->committed : NULL;
}

/* Drops are counted in the pool, shared by every thread (and process) using it. */
void tk__trace_buffer_dropped(tk_buffer_id id, void *user)
{
	tk_pool *pool = atomic_load(&tk__trace.pool);

	(void)id;
	(void)user;
	if (pool != NULL)
		tk_pool_count_dropped(pool, 1);
}

void tk__trace_buffer_release(tk_buffer_id id, void *buf, void *user)
{
	tk_pool *pool = atomic_load(&tk__trace.pool);
	int64_t idx = pool != NULL ? tk_pool_index(pool, buf) : -1;

	(void)id;
	(void)user;
	if (idx >= 0)
		tk_pool_give(pool, (uint32_t)idx);
}

/* ---- threads created while tracing runs ------------------------------------------------- */

static uint32_t present_hash(uint32_t tid)
{
	return (tid * 2654435761u) & (TRACE_PRESENT_SLOTS - 1);
}

void tk__trace_new_session(void)
{
	uint32_t sess = atomic_load(&tk__trace.session) + 1;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (sess == 0)
		sess = 1; /* 0 is "never announced" in every thread */
	while (d != NULL && (e = readdir(d)) != NULL) {
		uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10), h, i;
		if (tid == 0)
			continue;
		h = present_hash(tid);
		for (i = 0; i < TRACE_PRESENT_SLOTS; i++) {
			_Atomic uint64_t *slot = &tk__trace.present[(h + i) & (TRACE_PRESENT_SLOTS - 1)];
			if ((uint32_t)(atomic_load_explicit(slot, memory_order_relaxed) >> 32) != sess) {
				atomic_store_explicit(slot, (uint64_t)sess << 32 | tid, memory_order_relaxed);
				break;
			}
		}
		/* a full table: the thread counts as new and announces itself (harmless) */
	}
	if (d != NULL)
		closedir(d);
	atomic_store_explicit(&tk__trace.session, sess, memory_order_release);
}

static int thread_present(uint32_t sess, uint32_t tid)
{
	uint32_t h = present_hash(tid), i;

	for (i = 0; i < TRACE_PRESENT_SLOTS; i++) {
		uint64_t v = atomic_load_explicit(&tk__trace.present[(h + i) & (TRACE_PRESENT_SLOTS - 1)],
						  memory_order_relaxed);
		if ((uint32_t)(v >> 32) != sess)
			return 0;
		if ((uint32_t)v == tid)
			return 1;
	}
	return 0;
}

/* The class and event filters and the pid/tid rules, without handlers (no handler may run
 * while a buffer is being switched). */
static int passes_static(unsigned cls, unsigned code, uint32_t tid)
{
	struct tk__trace_config *cfg = trace_cfg();
	const struct trace_filter *pair = cfg->filters[cls * TRACE_N_CODES + code];

	if (trace_mode(cls) == TK__TRACE_OFF || !trace_bit(cfg->enabled[cls], code))
		return 0;
	return tk__trace_filter_passes(&pair[0], tid) && tk__trace_filter_passes(&pair[1], tid);
}

/* Slots of an event made of 8-byte payload chunks, written directly into a new buffer. */
static size_t put_chunks(traceevent_t *s, unsigned cpu, unsigned cls, unsigned code, uint32_t t,
			 const uint32_t *payload, size_t n_slots)
{
	size_t i;

	for (i = 0; i < n_slots; i++) {
		unsigned flag = n_slots == 1 ? _TRACE_STRUCT_S
				: i == 0 ? _TRACE_STRUCT_CB
				: i + 1 == n_slots ? _TRACE_STRUCT_CE
				: _TRACE_STRUCT_CC;
		s[i] = (traceevent_t){ _TRACE_MAKE_CODE(cpu, flag, TRACE_CLASS_BITS(cls), code),
				       { t, payload[2 * i], payload[2 * i + 1] } };
	}
	return n_slots;
}


/*
 * A thread created after tracing started announces itself at the head of its first
 * buffer, as QNX's kernel records a thread's creation: THCREATE, then PROCTHREAD_NAME.
 * At most 2 + 3 slots.
 */
static size_t announce_thread(traceevent_t *s, unsigned cpu, uint32_t t)
{
	const unsigned cls = TRACE_CLS(_TRACE_PR_TH_C);
	uint32_t sess = atomic_load_explicit(&tk__trace.session, memory_order_acquire);
	uint32_t tid, pid, w[6] = { 0 };
	size_t n = 0;

	if (tk__trace_tls.announced == sess)
		return 0;
	tk__trace_tls.announced = sess;
	tid = tk__trace_tid();
	if (!atomic_load_explicit(&trace_cfg()->started, memory_order_relaxed) || thread_present(sess, tid))
		return 0;
	pid = tk__trace_pid();
	if (passes_static(cls, _TRACE_PR_TH_CREATE_T, tid)) {
		if (trace_bit(trace_cfg()->wide[cls], _TRACE_PR_TH_CREATE_T)) {
			tk__trace_thread_words(pid, tid, w);
			n += put_chunks(s + n, cpu, cls, _TRACE_PR_TH_CREATE_T, t, w, 2);
		} else {
			w[0] = pid;
			w[1] = tid;
			n += put_chunks(s + n, cpu, cls, _TRACE_PR_TH_CREATE_T, t, w, 1);
		}
	}
	if (passes_static(cls, _TRACE_PR_TH_NAME_T, tid)) {
		char path[64], comm[64];
		snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
		if (tk__trace_read_small(path, comm, sizeof(comm)) == 0) {
			memset(w, 0, sizeof(w));
			w[0] = pid;
			w[1] = tid;
			memcpy(&w[2], comm, strnlen(comm, 15)); /* Linux names: at most 15 bytes */
			n += put_chunks(s + n, cpu, cls, _TRACE_PR_TH_NAME_T, t, w, 3);
		}
	}
	return n;
}

/*
 * TIME, BUFFER and the owner's THRUNNING: how every buffer starts in the file, and every
 * rest of a buffer written after a flush took its head (docs/kev-format.md, "Owner of
 * every event"). The THRUNNING is laid out as a QNX kernel writes it: an S slot, pid and
 * tid. Returns the slots written (3).
 */
size_t tk__trace_buffer_head(traceevent_t *s, unsigned cpu, uint64_t t, uint32_t idx, uint32_t seq, uint32_t pid,
			     uint32_t tid)
{
	s[0] = (traceevent_t){ _TRACE_MAKE_CODE(cpu, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME),
			       { (uint32_t)t, (uint32_t)(t >> 32), (uint32_t)t } };
	s[TRACE_SLOT_BUFFER] = (traceevent_t){ _TRACE_MAKE_CODE(cpu, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER),
					       { (uint32_t)t, (idx << TRACE_BUFFER_IDX_SHIFT) | (seq & TRACE_BUFFER_SEQ_MASK),
						 0 } };
	s[TRACE_SLOT_OWNER] = (traceevent_t){ _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, _TRACE_PR_TH_C, STATE_RUNNING),
					      { (uint32_t)t, pid, tid } };
	return TRACE_SLOT_OWNER + 1;
}

/*
 * A new buffer starts with TIME (so that every later slot of it, BUFFER included, gets its
 * upper time bits from the buffer itself), BUFFER, then DROPPED if records were lost since
 * the last DROPPED event (of any thread: the count is the pool's), then the owner's
 * THRUNNING, then the thread's announcement if it is new.
 */
size_t tk__trace_buffer_start(tk_buffer_id id, void *buf, uint64_t dropped, void *user)
{
	tk_pool *pool = atomic_load(&tk__trace.pool);
	int64_t idx = pool != NULL ? tk_pool_index(pool, buf) : -1;
	traceevent_t *s = buf;
	uint64_t t = tk__trace_clock();
	unsigned cpu = tk__trace_cpu();
	uint32_t seq = pool != NULL ? tk_pool_next_seq(pool) : 0;
	size_t n;
	uint32_t pid = tk__trace_pid(), tid = tk__trace_tid();

	(void)id;
	(void)user;
	if (pool != NULL)
		dropped += tk_pool_take_dropped(pool); /* (the hook counts no drops per thread) */
	if (idx >= 0) {
		tk_pool_desc *d = tk_pool_desc_of(pool, (uint32_t)idx);
		d->flushed = 0;
		d->seq = seq;
		d->owner_tid = tid;
		d->owner_pid = pid;
		d->resume_cpu = cpu;
		d->resume_msb = (uint32_t)(t >> 32);
	}
	n = tk__trace_buffer_head(s, cpu, t, idx < 0 ? 0 : (uint32_t)idx, seq, pid, tid);
	tk__trace_tls.time_key = ~tk__trace_time_key(t, cpu);
	if (dropped > 0) {
		/* DROPPED before the owner (contracts.md: TIME, BUFFER, DROPPED, THRUNNING) */
		s[TRACE_SLOT_OWNER + 1] = s[TRACE_SLOT_OWNER];
		s[TRACE_SLOT_DROPPED] = (traceevent_t){ _TRACE_MAKE_CODE(cpu, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_DROPPED),
							{ (uint32_t)t, (uint32_t)dropped, (uint32_t)(dropped >> 32) } };
		n++;
	}
	n += announce_thread(s + n, cpu, (uint32_t)t);
	return n;
}

void *tk__trace_buffer_full(tk_buffer_id id, uint32_t tid, void *buf, uint64_t n, void *user)
{
	tk_pool *pool = atomic_load(&tk__trace.pool);
	int64_t idx = pool != NULL ? tk_pool_index(pool, buf) : -1;
	traceevent_t *s = buf;
	tk_pool_desc *d;
	int64_t stored;

	(void)tid;
	if (idx < 0)
		return NULL; /* a buffer of buffers that were deallocated: nothing to keep */
	d = tk_pool_desc_of(pool, (uint32_t)idx);
	if (n > TRACE_SLOT_BUFFER && d->flushed <= TRACE_SLOT_BUFFER &&
	    TRACE_IS_CONTROL(s[TRACE_SLOT_BUFFER].header, _TRACE_CONTROL_BUFFER))
		s[TRACE_SLOT_BUFFER].data[2] = (uint32_t)n; /* events in the buffer, TIME included */
	stored = tk_pool_count_stored(pool, (int64_t)n - (int64_t)d->flushed);
	tk_pool_queue(pool, (uint32_t)idx, (uint32_t)n);
	/* The logger is woken once a few buffers wait (it also wakes every 50 ms by itself),
	 * so writers do not pay a wake-up per buffer; in ring mode it has nothing to do. */
	if (!atomic_load_explicit(&trace_cfg()->ring, memory_order_relaxed)) {
		uint32_t nb = tk_pool_n_buffers(pool), wake = nb / 4 < 8 ? (nb / 4 ? nb / 4 : 1) : 8;
		if (stored >= (int64_t)wake * (TRACE_BUFFER_SLOTS - 2))
			tk__trace_drainer_wake();
	}
	if (tk_buffer_delivering_at_exit() || tk__trace_session_flushing())
		return NULL; /* the thread's last buffer, or a flush into a session: it needs no other now */
	return tk__trace_buffer_acquire(id, user);
}


/* ---- the process ID, once per process ------------------------------------------------ */

/* getpid() is a system call: every buffer names its owner, so the pid is kept (and
 * forgotten in a fork()ed child). */
static _Atomic uint32_t g_pid;
static pthread_once_t g_pid_once = PTHREAD_ONCE_INIT;

static void forget_pid(void)
{
	atomic_store_explicit(&g_pid, 0, memory_order_relaxed);
}

static void pid_once(void)
{
	pthread_atfork(NULL, NULL, forget_pid);
}

uint32_t tk__trace_pid(void)
{
	uint32_t pid = atomic_load_explicit(&g_pid, memory_order_relaxed);

	if (__builtin_expect(pid == 0, 0)) {
		pthread_once(&g_pid_once, pid_once);
		pid = (uint32_t)getpid();
		atomic_store_explicit(&g_pid, pid, memory_order_relaxed);
	}
	return pid;
}

/* ---- the drainer ------------------------------------------------------------------------ */

static _Atomic(const struct tk__trace_drainer *) g_drainer;

int tk__trace_drainer_attach(const struct tk__trace_drainer *d)
{
	const struct tk__trace_drainer *none = NULL;

	return atomic_compare_exchange_strong(&g_drainer, &none, d) ? TK_OK : TK_EBUSY;
}

void tk__trace_drainer_detach(const struct tk__trace_drainer *d)
{
	const struct tk__trace_drainer *mine = d;

	atomic_compare_exchange_strong(&g_drainer, &mine, NULL);
}

const struct tk__trace_drainer *tk__trace_drainer(void)
{
	return atomic_load_explicit(&g_drainer, memory_order_acquire);
}

void tk__trace_drainer_wake(void)
{
	const struct tk__trace_drainer *d = tk__trace_drainer();

	if (d != NULL && d->wake != NULL)
		d->wake(d->ctx);
}

int tk__trace_drainer_yield(void)
{
	const struct tk__trace_drainer *d = tk__trace_drainer();

	return d != NULL && d->yield != NULL ? d->yield(d->ctx) : 0;
}
