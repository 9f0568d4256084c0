/* SPDX-License-Identifier: MIT */
/*
 * Writing events into the per-thread trace buffers: the slow path of the inline emitter
 * (filters, handlers, TIME events), combine and string events, the buffer hooks (each
 * buffer starts with CONTROL BUFFER and TIME events; a full one is queued for the logger),
 * the process and thread state emitted at START, QNX's trace_log*() calls, and the
 * -finstrument-functions hooks.
 *
 * Time: every slot carries the low 32 bits of the cycle counter. A thread writes a CONTROL
 * TIME event (CPU, upper 32 bits) first in each buffer, before CONTROL BUFFER (QNX writes
 * BUFFER first and its readers give that one event the previous buffer's upper bits), and
 * whenever its CPU or the upper 32 bits change, so a reader rebuilds the 64-bit time of
 * every event from its buffer alone, in whatever order the buffers of different threads
 * reach the file.
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

uint32_t tk__trace_tid(void)
{
	if (tk__trace_tls.tid == 0)
		tk__trace_tls.tid = (uint32_t)syscall(SYS_gettid);
	return tk__trace_tls.tid;
}

unsigned tk__trace_cpu_slow(void)
{
	int cpu = sched_getcpu();
	return cpu < 0 ? 0u : (unsigned)cpu & 63u;
}

static uint64_t time_key(uint64_t t, unsigned cpu)
{
	return ((t >> 32) << 32) | cpu;
}

/* One slot in the calling thread's buffer; -1 when it is dropped (and counted). */
static int put(uint32_t h, uint32_t t, uint32_t d1, uint32_t d2)
{
	traceevent_t *s = tk_buffer_reserve(tk__trace_buffer_id);

	if (s == NULL)
		return -1;
	s->header = h;
	s->data[0] = t;
	s->data[1] = d1;
	s->data[2] = d2;
	tk_buffer_commit(tk__trace_buffer_id, s);
	return 0;
}

/*
 * Reserves the slot of an event and then reads its time and CPU (so a buffer started by
 * the reservation never carries a later time than the event), writing a TIME event first
 * when the thread's last TIME does not cover (cpu, upper bits of t). NULL when the event
 * is dropped.
 */
static traceevent_t *reserve_timed(unsigned *cpu, uint64_t *t)
{
	traceevent_t *s = tk_buffer_reserve(tk__trace_buffer_id);
	uint64_t key;

	if (s == NULL)
		return NULL;
	*t = tk__trace_clock();
	*cpu = tk__trace_cpu();
	key = time_key(*t, *cpu);
	while (~tk__trace_tls.time_key != key) {
		*s = (traceevent_t){ _TRACE_MAKE_CODE(*cpu, _TRACE_STRUCT_S, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME),
				     { (uint32_t)*t, (uint32_t)(*t >> 32), (uint32_t)*t } };
		tk_buffer_commit(tk__trace_buffer_id, s);
		tk__trace_tls.time_key = ~key;
		/* a new buffer here writes its own TIME: the loop checks it covers the event */
		s = tk_buffer_reserve(tk__trace_buffer_id);
		if (s == NULL)
			return NULL;
	}
	return s;
}

/* ---- filters -------------------------------------------------------------------------- */

static int filter_passes(const struct trace_filter *f, uint32_t tid)
{
	int pid = (int)getpid();

	if (atomic_load_explicit(&f->pid_set, memory_order_relaxed) &&
	    atomic_load_explicit(&f->pid, memory_order_relaxed) != pid)
		return 0;
	if (atomic_load_explicit(&f->tid_set, memory_order_relaxed) &&
	    (atomic_load_explicit(&f->tid_pid, memory_order_relaxed) != pid ||
	     (uint32_t)atomic_load_explicit(&f->tid, memory_order_relaxed) != tid))
		return 0;
	return 1;
}

static int call_handler(const struct trace_handler *h, uint32_t header, const uint32_t *words, size_t n,
			uint32_t tid)
{
	event_data_t *d = h->data;
	size_t i;

	d->header = header;
	d->el_num = (_Uint32t)n;
	if (d->data_array != NULL)
		for (i = 0; i < n && i < TK_TRACE_EVENT_DATA_WORDS; i++)
			d->data_array[i] = words[i];
	d->feature_mask = _NTO_TRACE_FMPID | _NTO_TRACE_FMTID;
	d->feature[_NTO_TRACE_FIPID] = (_Uint32t)getpid();
	d->feature[_NTO_TRACE_FITID] = tid;
	return h->fn(d);
}

int tk__trace_passes_filters(unsigned cls, unsigned code, const uint32_t *words, size_t n)
{
	struct trace_code *all, *c;
	uint32_t tid;
	int keep = 1;

	if (!trace_bit(tk__trace.enabled[cls], code))
		return 0;
	all = atomic_load_explicit(&tk__trace.codes, memory_order_acquire);
	if (all == NULL)
		return 1;
	c = &all[cls * 1024u + code];
	if (!atomic_load_explicit(&c->special, memory_order_relaxed))
		return 1;
	tid = tk__trace_tid();
	if (!filter_passes(&c->class_filter, tid) || !filter_passes(&c->event_filter, tid))
		return 0;
	if (tk__trace_tls.in_handler)
		return 1; /* events inserted by a handler are not filtered again */
	pthread_mutex_lock(&tk__trace.handler_lock);
	tk__trace_tls.in_handler = 1;
	if (c->event_handler.fn != NULL || c->class_handler.fn != NULL) {
		uint32_t header = _TRACE_MAKE_CODE(tk__trace_cpu(), n > 2 ? _TRACE_STRUCT_CB : _TRACE_STRUCT_S,
						   cls << 10, code);
		if (c->event_handler.fn != NULL && call_handler(&c->event_handler, header, words, n, tid) == 0)
			keep = 0;
		if (keep && c->class_handler.fn != NULL && call_handler(&c->class_handler, header, words, n, tid) == 0)
			keep = 0;
	}
	tk__trace_tls.in_handler = 0;
	pthread_mutex_unlock(&tk__trace.handler_lock);
	return keep;
}

/* ---- writing events ------------------------------------------------------------------- */

/* The 8 payload bytes of slot i of an event made of words followed by a string. */
static void payload_chunk(const uint32_t *words, size_t n_words, const char *str, size_t str_bytes, size_t i,
			  uint32_t out[2])
{
	unsigned char b[8];
	size_t k;

	for (k = 0; k < 8; k++) {
		size_t pos = i * 8 + k;
		if (pos < n_words * 4)
			b[k] = ((const unsigned char *)&words[pos / 4])[pos % 4];
		else if (str != NULL && pos - n_words * 4 < str_bytes)
			b[k] = (unsigned char)str[pos - n_words * 4];
		else
			b[k] = 0;
	}
	memcpy(out, b, 8);
}

int tk__trace_write(unsigned cls, unsigned code, const uint32_t *words, size_t n_words, const char *str,
		    size_t str_len, int filtered)
{
	size_t bytes, n_slots, i;
	uint64_t t = 0;
	unsigned cpu = 0, mode = atomic_load_explicit(&tk__trace_mode[cls & 31u], memory_order_relaxed);

	if (mode == TK__TRACE_OFF)
		return 0;
	if (filtered && mode == TK__TRACE_FILTERED && str == NULL &&
	    !tk__trace_passes_filters(cls, code, words, n_words))
		return 0;
	if (filtered && mode == TK__TRACE_FILTERED && str != NULL) {
		/* handlers see the string as payload words */
		size_t nw = n_words + (str_len + 4) / 4;
		uint32_t stackw[64], *w = nw <= 64 ? stackw : malloc(nw * 4);
		int pass;
		if (w == NULL)
			return tk__trace_set_error(ENOMEM, "out of memory");
		memset(w, 0, nw * 4);
		if (n_words > 0)
			memcpy(w, words, n_words * 4);
		memcpy(w + n_words, str, str_len);
		pass = tk__trace_passes_filters(cls, code, w, nw);
		if (w != stackw)
			free(w);
		if (!pass)
			return 0;
	}
	bytes = n_words * 4 + (str != NULL ? str_len + 1 : 0);
	/* as QNX's kernel splits events: up to 8 bytes (a short string too, NUL included) make
	 * one simple slot, more a CB, CC..., CE run (reference 2.3) */
	n_slots = bytes <= 8 ? 1 : (bytes + 7) / 8;
	for (i = 0; i < n_slots; i++) {
		unsigned flag = n_slots == 1 ? _TRACE_STRUCT_S
				: i == 0 ? _TRACE_STRUCT_CB
				: i + 1 == n_slots ? _TRACE_STRUCT_CE
				: _TRACE_STRUCT_CC;
		traceevent_t *s = i == 0 ? reserve_timed(&cpu, &t) : tk_buffer_reserve(tk__trace_buffer_id);
		uint32_t d[2];
		if (s == NULL)
			break; /* no buffer: the rest of the event is dropped (and counted) */
		if (str == NULL) {
			d[0] = 2 * i < n_words ? words[2 * i] : 0;
			d[1] = 2 * i + 1 < n_words ? words[2 * i + 1] : 0;
		} else {
			payload_chunk(words, n_words, str, str_len + 1, i, d);
		}
		*s = (traceevent_t){ _TRACE_MAKE_CODE(cpu, flag, cls << 10, code), { (uint32_t)t, d[0], d[1] } };
		tk_buffer_commit(tk__trace_buffer_id, s);
	}
	return 0;
}

int tk__trace_write_raw(uint32_t header, uint32_t time, uint32_t d0, uint32_t d1)
{
	if (atomic_load(&tk__trace.pool) == NULL)
		return tk__trace_set_error(EFAULT, "INSERTEVENT: no trace buffers (ALLOCBUFFER)");
	if (!atomic_load(&tk__trace.started))
		return 0; /* the stream is closed: like any event, it is not recorded */
	put(header, time, d0, d1);
	return 0;
}

int tk__trace_emit_slow(unsigned cls, unsigned code, uint32_t d0, uint32_t d1)
{
	uint32_t w[2] = { d0, d1 };

	if (cls > 31 || code > 1023)
		return tk__trace_set_error(EINVAL, "class %u, code %u out of range (0-31, 0-1023)", cls, code);
	return tk__trace_write(cls, code, w, 2, NULL, 0, 1);
}

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
	if ((atomic_load(&tk__trace.ring) || atomic_load(&tk__trace.overwrite)) && tk_pool_dequeue(pool, &idx) == TK_OK) {
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
	struct trace_code *all;

	if (atomic_load_explicit(&tk__trace_mode[cls], memory_order_relaxed) == TK__TRACE_OFF ||
	    !trace_bit(tk__trace.enabled[cls], code))
		return 0;
	all = atomic_load_explicit(&tk__trace.codes, memory_order_acquire);
	if (all == NULL)
		return 1;
	return filter_passes(&all[cls * 1024u + code].class_filter, tid) &&
	       filter_passes(&all[cls * 1024u + code].event_filter, tid);
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
		s[i] = (traceevent_t){ _TRACE_MAKE_CODE(cpu, flag, cls << 10, code),
				       { t, payload[2 * i], payload[2 * i + 1] } };
	}
	return n_slots;
}

static void thread_words(uint32_t pid, uint32_t tid, uint32_t w[4]);
static int read_small(const char *path, char *buf, size_t cap);

/*
 * A thread created after tracing started announces itself at the head of its first
 * buffer, as QNX's kernel records a thread's creation: THCREATE, then PROCTHREAD_NAME.
 * At most 2 + 3 slots.
 */
static size_t announce_thread(traceevent_t *s, unsigned cpu, uint32_t t)
{
	const unsigned cls = _TRACE_PR_TH_C >> 10;
	uint32_t sess = atomic_load_explicit(&tk__trace.session, memory_order_acquire);
	uint32_t tid, pid, w[6] = { 0 };
	size_t n = 0;

	if (tk__trace_tls.announced == sess)
		return 0;
	tk__trace_tls.announced = sess;
	tid = tk__trace_tid();
	if (!atomic_load_explicit(&tk__trace.started, memory_order_relaxed) || thread_present(sess, tid))
		return 0;
	pid = (uint32_t)getpid();
	if (passes_static(cls, _TRACE_PR_TH_CREATE_T, tid)) {
		if (trace_bit(tk__trace.wide[cls], _TRACE_PR_TH_CREATE_T)) {
			thread_words(pid, tid, w);
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
		if (read_small(path, comm, sizeof(comm)) == 0) {
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
	uint32_t pid = (uint32_t)getpid(), tid = tk__trace_tid();

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
	tk__trace_tls.time_key = ~time_key(t, cpu);
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
	    (s[TRACE_SLOT_BUFFER].header & 0xc0007fffu) == (_TRACE_CONTROL_C | _TRACE_CONTROL_BUFFER))
		s[TRACE_SLOT_BUFFER].data[2] = (uint32_t)n; /* events in the buffer, TIME included */
	stored = tk_pool_count_stored(pool, (int64_t)n - (int64_t)d->flushed);
	tk_pool_queue(pool, (uint32_t)idx, (uint32_t)n);
	/* The logger is woken once a few buffers wait (it also wakes every 50 ms by itself),
	 * so writers do not pay a wake-up per buffer; in ring mode it has nothing to do. */
	if (!atomic_load_explicit(&tk__trace.ring, memory_order_relaxed)) {
		uint32_t nb = tk_pool_n_buffers(pool), wake = nb / 4 < 8 ? (nb / 4 ? nb / 4 : 1) : 8;
		if (stored >= (int64_t)wake * (TRACE_BUFFER_SLOTS - 2))
			tk__logger_wake();
	}
	return tk__trace_buffer_acquire(id, user);
}

/* ---- START: the process and its threads ---------------------------------------------- */

static int read_small(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* Linux scheduling policy to QNX numbers (SCHED_FIFO 1, SCHED_RR 2, SCHED_OTHER 3). */
static uint32_t qnx_policy(int policy)
{
	return policy == SCHED_FIFO ? 1u : policy == SCHED_RR ? 2u : 3u;
}

static void thread_words(uint32_t pid, uint32_t tid, uint32_t w[4])
{
	char path[64], stat[512];
	long prio = 0;
	int policy;
	const char *p;

	w[0] = pid;
	w[1] = tid;
	snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
	/* priority is field 18 of stat, after the parenthesised command name */
	if (read_small(path, stat, sizeof(stat)) == 0 && (p = strrchr(stat, ')')) != NULL) {
		int field = 2;
		for (; *p != '\0' && field < 18; p++)
			if (*p == ' ')
				field++;
		prio = strtol(p, NULL, 10);
	}
	policy = sched_getscheduler((pid_t)tid);
	w[2] = (uint32_t)prio;
	w[3] = qnx_policy(policy < 0 ? SCHED_OTHER : policy);
}

static void emit_thread(unsigned code, uint32_t pid, uint32_t tid)
{
	uint32_t w[4];
	int wide = trace_bit(tk__trace.wide[_TRACE_PR_TH_C >> 10], code);

	thread_words(pid, tid, w);
	tk__trace_write(_TRACE_PR_TH_C >> 10, code, w, wide ? 4 : 2, NULL, 0, 1);
}

void tk__trace_emit_state(void)
{
	uint32_t pid = (uint32_t)getpid(), ppid = (uint32_t)getppid(), self = tk__trace_tid();
	uint32_t w[2] = { ppid, pid };
	char exe[4096], path[64], comm[64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	DIR *d;
	struct dirent *e;

	if (n <= 0)
		n = (ssize_t)(read_small("/proc/self/comm", exe, sizeof(exe)) == 0 ? strlen(exe) : 0);
	exe[n] = '\0';
	tk__trace_write(_TRACE_PR_TH_C >> 10, _TRACE_PR_TH_CREATE_P_NAME, w, 2, exe, strlen(exe), 1);
	d = opendir("/proc/self/task");
	while (d != NULL && (e = readdir(d)) != NULL) {
		uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10), tw[2] = { pid, tid };
		char stat[512], *paren;
		if (tid == 0)
			continue;
		emit_thread(_TRACE_PR_TH_CREATE_T, pid, tid);
		snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
		if (read_small(path, comm, sizeof(comm)) == 0)
			tk__trace_write(_TRACE_PR_TH_C >> 10, _TRACE_PR_TH_NAME_T, tw, 2, comm, strlen(comm), 1);
		if (tid == self) {
			emit_thread(STATE_RUNNING, pid, tid);
			continue;
		}
		/* Another thread: only "runnable" maps onto a QNX state without guessing. */
		snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
		if (read_small(path, stat, sizeof(stat)) == 0 && (paren = strrchr(stat, ')')) != NULL &&
		    paren[1] == ' ' && paren[2] == 'R')
			emit_thread(STATE_READY, pid, tid);
	}
	if (d != NULL)
		closedir(d);
}

/* ---- QNX's convenience calls ----------------------------------------------------------- */

int trace_logi(int code, unsigned d1, unsigned d2)
{
	return TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, code, d1, d2);
}

int trace_vnlogf(int code, int max, const char *fmt, va_list ap)
{
	char stackbuf[256], *buf = stackbuf;
	va_list copy;
	size_t want;
	int len, rc;

	if (fmt == NULL)
		return tk__trace_set_error(EFAULT, "trace_logf: NULL format");
	if (code < 0 || code > 1023)
		return tk__trace_set_error(EINVAL, "user event code %d out of range (0-1023)", code);
	if (max < 0 || max > TK_TRACE_LOGF_MAX)
		max = TK_TRACE_LOGF_MAX;
	va_copy(copy, ap);
	len = vsnprintf(stackbuf, sizeof(stackbuf), fmt, copy);
	va_end(copy);
	if (len < 0)
		return tk__trace_set_error(EINVAL, "trace_logf: bad format");
	want = (size_t)(len < max ? len : max);
	if (want >= sizeof(stackbuf)) {
		buf = malloc(want + 1);
		if (buf == NULL)
			return tk__trace_set_error(ENOMEM, "out of memory");
		vsnprintf(buf, want + 1, fmt, ap);
	}
	buf[want] = '\0';
	rc = tk__trace_write(_TRACE_USER_C >> 10, (unsigned)code, NULL, 0, buf, want, 1);
	if (buf != stackbuf)
		free(buf);
	return rc;
}

int trace_logf(int code, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = trace_vnlogf(code, TK_TRACE_LOGF_MAX, fmt, ap);
	va_end(ap);
	return rc;
}

int trace_nlogf(int code, int max, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = trace_vnlogf(code, max, fmt, ap);
	va_end(ap);
	return rc;
}

int trace_logbc(int cls, int event, const void *data, size_t nbytes)
{
	uint32_t stackw[64] = { 0 }, *w = stackw;
	size_t nw = (nbytes + 3) / 4;
	int rc;

	if (cls < 0 || cls > 31 || event < 0 || event > 1023)
		return tk__trace_set_error(EINVAL, "class %d, event %d out of range (0-31, 0-1023)", cls, event);
	if (data == NULL && nbytes > 0)
		return tk__trace_set_error(EFAULT, "NULL data for %zu bytes", nbytes);
	if (nw > TRACE_MAX_WORDS)
		return tk__trace_set_error(EINVAL, "%zu bytes is more than one event holds", nbytes);
	if (nw > 64) {
		w = malloc(nw * 4);
		if (w == NULL)
			return tk__trace_set_error(ENOMEM, "out of memory");
	}
	if (nw > 0) {
		w[nw - 1] = 0;
		memcpy(w, data, nbytes);
	}
	rc = tk__trace_write((unsigned)cls, (unsigned)event, w, nw, NULL, 0, 1);
	if (w != stackw)
		free(w);
	return rc;
}

int trace_logb(int code, const void *data, size_t nbytes)
{
	return trace_logbc(_TRACE_USER_C >> 10, code, data, nbytes);
}

/* A SYSTEM event carrying addresses: 32-bit words in fast mode, 64-bit in wide mode. */
static void emit_addresses(unsigned code, uintptr_t a, uintptr_t b, int two)
{
	const unsigned cls = _TRACE_SYSTEM_C >> 10;

	if (trace_bit(tk__trace.wide[cls], code) && sizeof(uintptr_t) > 4) {
		uint64_t v[2] = { (uint64_t)a, (uint64_t)b };
		uint32_t w[4];
		memcpy(w, v, sizeof(v)); /* 64-bit values in memory order */
		tk__trace_write(cls, code, w, two ? 4 : 2, NULL, 0, 1);
	} else if (two) {
		tk_trace_emit(cls, code, (uint32_t)a, (uint32_t)b);
	} else {
		tk_trace_emit(cls, code, (uint32_t)a, 0);
	}
}

int trace_here(void)
{
	emit_addresses(_NTO_TRACE_SYS_ADDRESS, (uintptr_t)__builtin_return_address(0), 0, 0);
	return 0;
}

/* ---- -finstrument-functions --------------------------------------------------------------- */

void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
	if (atomic_load_explicit(&tk__trace_mode[_TRACE_SYSTEM_C >> 10], memory_order_relaxed) != TK__TRACE_OFF)
		emit_addresses(_NTO_TRACE_SYS_FUNC_ENTER, (uintptr_t)this_fn, (uintptr_t)call_site, 1);
}

void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
	if (atomic_load_explicit(&tk__trace_mode[_TRACE_SYSTEM_C >> 10], memory_order_relaxed) != TK__TRACE_OFF)
		emit_addresses(_NTO_TRACE_SYS_FUNC_EXIT, (uintptr_t)this_fn, (uintptr_t)call_site, 1);
}
