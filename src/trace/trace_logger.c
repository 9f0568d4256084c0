/* SPDX-License-Identifier: MIT */
/*
 * The in-process logger, the pool's drainer (trace_internal.h, struct tk__trace_drainer):
 * a thread that drains full trace buffers from the pool's queue into a .kev file (linear
 * mode), or leaves them queued as a flight recorder (ring mode: writers reuse the oldest
 * when no buffer is free) until a flush. A flush (FLUSHBUFFER, STOP, tk_logger_stop(),
 * exit) writes every queued buffer and then the committed part of every thread's current
 * buffer, without stopping the threads: the part is copied under that thread's buffer lock
 * and the rest of that buffer is written later, after the same TIME, BUFFER and owner
 * THRUNNING the buffer started with (the CPU's upper time bits and the owner, for readers).
 * Also the TRACEKIT_LOG constructor (at the end).
 *
 * Producers never wait for the logger: they wake it with an atomic increment (and a futex
 * wake if it sleeps); when it falls behind they drop events, counted in the pool and in
 * the file. A write error (full disk) stops writing but not recording: buffers are then
 * given back unwritten and counted as lost; what was written stays in the temporary file
 * ("<path>.part").
 *
 * Statistics count what is in the file: every write (a batch of buffers, or one piece) is
 * complete in the file when it returns; when one fails, the size of the file says how far
 * it got: the buffers before that point count as written, the one cut there as lost with
 * its first slots in events_written and the rest in events_lost, the others as lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/tk_bytes.h"
#include "trace/trace_internal.h"

struct piece {
	size_t stage_off, count;
	uint32_t cpu, msb; /* time state in effect before the piece; valid when continued */
	int continued;     /* 1 if the piece starts inside a buffer */
	uint32_t buf_idx;  /* the buffer it was copied from */
	uint32_t seq, owner_pid, owner_tid; /* that buffer's, when the piece was copied */
	int written;
};

/* Who a continued piece belongs to (its buffer's head was written before). */
struct owner {
	uint32_t idx, seq, pid, tid;
};

static struct owner owner_of(tk_pool *pool, uint32_t idx)
{
	tk_pool_desc *d = tk_pool_desc_of(pool, idx);

	return (struct owner){ idx, d->seq, d->owner_pid, d->owner_tid };
}

static struct logger {
	pthread_mutex_t mu;
	pthread_cond_t done_cv;
	pthread_t thread;
	int running, stopping, stop_req;
	uint64_t flush_req, flush_done;
	_Atomic uint32_t wake_seq;
	_Atomic int sleeping;
	tk_kev_writer *w;
	int write_error;
	char errmsg[4096 * 2 + 256];
	char path[4096];
	int atexit_registered;
	int from_env;          /* started by TRACEKIT_LOG: a failure is said on stderr, once */
	int reported;          /* the failure was said */
	/* written by the logger thread, read under mu */
	uint64_t events_written, buffers_written, bytes_written, buffers_lost, events_lost;
	/* logger thread only: where the events start in the file, and slots known to be there */
	int64_t data_start;
	uint64_t file_slots;
	/* logger-thread staging for flushed partial buffers */
	traceevent_t *stage;
	size_t stage_len, stage_cap;
	struct piece *pieces;
	size_t n_pieces, cap_pieces;
	int stage_oom;
} g_log = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.done_cv = PTHREAD_COND_INITIALIZER,
};

/*
 * Where the environment logger's messages go: the program's standard error as it was when
 * recording started, and never whatever file has its number later (docs/recording.md: a
 * daemon closes 0, 1, 2 and every other descriptor, then opens files of its own, which get
 * those numbers). At start fd 2 is duplicated to a high close-on-exec number and its
 * identity (device, inode, rdev) is kept; a message is written to the duplicate if it still
 * is that file, else to fd 2 if that still is, else nowhere. A fork child records nothing
 * and lets the duplicate go (a daemon(3) child must not keep its parent's stderr pipe open).
 */
static struct {
	int fd;    /* the close-on-exec duplicate of fd 2, or -1 */
	int known; /* fd 2 was open at start: dev, ino and rdev are its identity */
	dev_t dev, rdev;
	ino_t ino;
} g_err = { .fd = -1 };

static int err_is_ours(int fd)
{
	struct stat sb;

	return fd >= 0 && fstat(fd, &sb) == 0 && sb.st_dev == g_err.dev && sb.st_ino == g_err.ino &&
	       sb.st_rdev == g_err.rdev;
}

static void err_hold(void)
{
	struct rlimit rl;
	struct stat sb;
	long floor = 1000;

	if (g_err.known || fstat(STDERR_FILENO, &sb) != 0)
		return; /* already held, or stderr is closed: nothing is ever said */
	g_err.dev = sb.st_dev;
	g_err.ino = sb.st_ino;
	g_err.rdev = sb.st_rdev;
	g_err.known = 1;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur <= floor + 24)
		floor = (long)rl.rlim_cur * 3 / 4; /* a small limit: still above the usual numbers */
	g_err.fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, floor > 3 ? floor : 3);
	if (g_err.fd < 0)
		g_err.fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
}

/* Nothing more will be said: the duplicate is closed (if it still is ours). */
static void err_release(void)
{
	if (err_is_ours(g_err.fd))
		close(g_err.fd);
	g_err.fd = -1;
	g_err.known = 0;
}

/* One message ("tracekit: ...\n") to the standard error of the start, or nowhere. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char msg[sizeof(g_log.errmsg) + sizeof(g_log.path) * 2 + 256];
	const char *p = msg;
	va_list ap;
	int n, fd;

	if (!g_err.known)
		return;
	fd = err_is_ours(g_err.fd) ? g_err.fd : err_is_ours(STDERR_FILENO) ? STDERR_FILENO : -1;
	if (fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(msg)) {
		n = (int)sizeof(msg) - 1;
		msg[n - 1] = '\n';
	}
	while (n > 0) {
		ssize_t w = write(fd, p, (size_t)n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (int)w;
	}
}

static void logger_wake(void *ctx)
{
	(void)ctx;
	atomic_fetch_add_explicit(&g_log.wake_seq, 1, memory_order_release);
	if (atomic_load_explicit(&g_log.sleeping, memory_order_acquire))
		syscall(SYS_futex, (uint32_t *)&g_log.wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void logger_sleep(uint32_t seq)
{
	struct timespec timeout = { 0, 50 * 1000 * 1000 };

	atomic_store_explicit(&g_log.sleeping, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&g_log.wake_seq, memory_order_seq_cst) == seq)
		syscall(SYS_futex, (uint32_t *)&g_log.wake_seq, FUTEX_WAIT_PRIVATE, seq, &timeout, NULL, 0);
	atomic_store_explicit(&g_log.sleeping, 0, memory_order_relaxed);
}

/* ---- writing ------------------------------------------------------------------------- */

static void note_write_error(void)
{
	pthread_mutex_lock(&g_log.mu);
	if (g_log.write_error == 0) {
		g_log.write_error = tk_kev_writer_flush(g_log.w);
		if (g_log.write_error == 0)
			g_log.write_error = TK_EIO;
		if (strcmp(g_log.path, "-") == 0)
			snprintf(g_log.errmsg, sizeof(g_log.errmsg), "standard output: %s",
				 tk_kev_writer_errmsg(g_log.w));
		else /* (the temporary: "<path>.part", or a unique name if a crashed run's is there) */
			snprintf(g_log.errmsg, sizeof(g_log.errmsg), "%s: %s (what was written before stays in %s)",
				 tk_kev_writer_temp_path(g_log.w), tk_kev_writer_errmsg(g_log.w),
				 tk_kev_writer_temp_path(g_log.w));
		/* Recording through the environment: said now, once (a daemon may never exit). */
		if (g_log.from_env && !g_log.reported) {
			g_log.reported = 1;
			say("tracekit: TRACEKIT_LOG=%s: %s\n", g_log.path, g_log.errmsg);
		}
	}
	pthread_mutex_unlock(&g_log.mu);
}

/* Bytes the output has received (a failed write got there and no further). */
static int64_t file_size(void)
{
	return (int64_t)tk_kev_writer_bytes(g_log.w);
}

/*
 * Counts one write of n pieces of counts[i] slots each (buffers, or `buffers` 0 for slots
 * that are no buffer's) after it returned rc. A failed write reached the file up to its
 * size: whole pieces before that count as written, the piece cut there as lost (its head
 * in events_written, its tail in events_lost), the rest as lost.
 */
static void account(const size_t *counts, size_t n, int buffers, int rc)
{
	uint64_t total = 0, reached;
	size_t i;

	for (i = 0; i < n; i++)
		total += counts[i];
	reached = total;
	if (rc != TK_OK) {
		int64_t size = file_size();
		uint64_t in_file = size >= g_log.data_start ? (uint64_t)(size - g_log.data_start) / sizeof(traceevent_t) : 0;
		reached = in_file > g_log.file_slots ? in_file - g_log.file_slots : 0;
		if (reached > total)
			reached = total;
	}
	g_log.file_slots += reached;
	pthread_mutex_lock(&g_log.mu);
	g_log.events_written += reached;
	g_log.bytes_written += reached * sizeof(traceevent_t);
	g_log.events_lost += total - reached;
	for (i = 0; i < n && buffers; i++) {
		if (reached >= counts[i]) {
			g_log.buffers_written++;
			reached -= counts[i];
		} else {
			g_log.buffers_lost++;
			reached = 0;
		}
	}
	pthread_mutex_unlock(&g_log.mu);
}

/* Counts slots not written at all, after a write error. */
static void account_lost(size_t slots, int buffers)
{
	pthread_mutex_lock(&g_log.mu);
	g_log.events_lost += slots;
	g_log.buffers_lost += (uint64_t)buffers;
	pthread_mutex_unlock(&g_log.mu);
}

/* The head of a continued piece: TIME (the time state in effect where it resumes), BUFFER
 * and the owner's THRUNNING, as at the start of the buffer. Returns the slots (3). */
static size_t continued_head(traceevent_t head[TRACE_SLOT_OWNER + 1], const traceevent_t *first, uint32_t cpu,
			     uint32_t msb, const struct owner *o)
{
	return tk__trace_buffer_head(head, cpu, (uint64_t)msb << 32 | first->data[0], o->idx, o->seq, o->pid, o->tid);
}

/*
 * Writes slots [0, n) of a buffer piece; a continued piece gets its buffer's head first
 * (continued_head). The writer is flushed, so the piece is in the file when this returns
 * without error.
 */
static void write_piece(const traceevent_t *slots, size_t n, int continued, uint32_t cpu, uint32_t msb,
			const struct owner *o)
{
	traceevent_t head[TRACE_SLOT_OWNER + 1];
	size_t n_head = continued ? continued_head(head, slots, cpu, msb, o) : 0, total = n + n_head;
	int rc = TK_OK;

	if (n == 0)
		return;
	if (g_log.write_error != 0) {
		account_lost(total, 1);
		return;
	}
	if (n_head > 0)
		rc = tk_kev_write_raw_file_order(g_log.w, head, n_head);
	if (rc == TK_OK)
		rc = tk_kev_write_raw_file_order(g_log.w, slots, n);
	if (rc == TK_OK)
		rc = tk_kev_writer_flush(g_log.w);
	account(&total, 1, 1, rc);
	if (rc != TK_OK)
		note_write_error();
}

/* The CPU and MSB of the last TIME event in slots (kept when there is none). */
static void scan_time(const traceevent_t *slots, size_t n, uint32_t *cpu, uint32_t *msb)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (TRACE_IS_CONTROL(slots[i].header, _TRACE_CONTROL_TIME)) {
			*cpu = _NTO_TRACE_GETCPU(slots[i].header);
			*msb = slots[i].data[1];
		}
	}
}

static void write_staged_piece_of(uint32_t idx);

static void write_queued(tk_pool *pool, uint32_t idx)
{
	tk_pool_desc *d = tk_pool_desc_of(pool, idx);
	const traceevent_t *slots = tk_pool_buffer(pool, idx);
	uint32_t from = d->flushed, to = atomic_load_explicit(&d->records, memory_order_acquire);

	/* A flush copied this buffer's head and has not written it yet: it goes first. */
	if (g_log.n_pieces > 0)
		write_staged_piece_of(idx);
	if (to > from) {
		struct owner o = owner_of(pool, idx);
		write_piece(slots + from, to - from, from > 0, d->resume_cpu, d->resume_msb, &o);
	}
	tk_pool_count_stored(pool, -((int64_t)to - (int64_t)from));
	d->flushed = 0;
	tk_pool_give(pool, idx);
}

/*
 * Full buffers written in batches: up to 64 buffers (1 MiB) per writev(), straight from the
 * pool. The per-buffer path serves flushes (staged heads must interleave) and a logger that
 * has already failed to write.
 */
enum { DRAIN_BATCH = 64 };

static void write_batch(tk_pool *pool, const uint32_t *ids, size_t n)
{
	struct iovec iov[2 * DRAIN_BATCH];
	traceevent_t heads[DRAIN_BATCH][TRACE_SLOT_OWNER + 1];
	uint32_t from[DRAIN_BATCH], to[DRAIN_BATCH];
	size_t counts[DRAIN_BATCH] = { 0 }; /* gcc -O2 cannot see that only counts[0..pieces) is read */
	size_t i, n_iov = 0, n_times = 0, pieces = 0;
	int rc;

	for (i = 0; i < n; i++) {
		tk_pool_desc *d = tk_pool_desc_of(pool, ids[i]);
		const traceevent_t *buf = tk_pool_buffer(pool, ids[i]);
		from[i] = d->flushed;
		to[i] = atomic_load_explicit(&d->records, memory_order_acquire);
		if (to[i] <= from[i])
			continue;
		counts[pieces] = 0;
		if (from[i] > 0) { /* the rest of a flushed buffer: its head first */
			struct owner o = owner_of(pool, ids[i]);
			size_t nh = continued_head(heads[n_times], &buf[from[i]], d->resume_cpu, d->resume_msb, &o);
			iov[n_iov++] = (struct iovec){ heads[n_times++], nh * sizeof(traceevent_t) };
			counts[pieces] += nh;
		}
		iov[n_iov++] = (struct iovec){ (void *)(buf + from[i]), (size_t)(to[i] - from[i]) * sizeof(traceevent_t) };
		counts[pieces] += to[i] - from[i];
		pieces++;
	}
	rc = n_iov > 0 ? tk_kev_write_raw_file_order_v(g_log.w, iov, (int)n_iov) : TK_OK;
	account(counts, pieces, 1, rc);
	if (rc != TK_OK)
		note_write_error();
	for (i = 0; i < n; i++) {
		tk_pool_count_stored(pool, -((int64_t)to[i] - (int64_t)from[i]));
		tk_pool_desc_of(pool, ids[i])->flushed = 0;
		tk_pool_give(pool, ids[i]);
	}
}

static void drain_queue(tk_pool *pool)
{
	uint32_t ids[DRAIN_BATCH];
	size_t n;

	if (g_log.n_pieces > 0 || g_log.write_error != 0) {
		while (tk_pool_dequeue(pool, &ids[0]) == TK_OK)
			write_queued(pool, ids[0]);
		return;
	}
	do {
		for (n = 0; n < DRAIN_BATCH && tk_pool_dequeue(pool, &ids[n]) == TK_OK; n++)
			;
		if (n > 0)
			write_batch(pool, ids, n);
	} while (n == DRAIN_BATCH);
}

/* Under a writer thread's buffer lock: copy its committed, unwritten slots. */
static void collect_one(void *buf, uint64_t n, void *ctx)
{
	tk_pool *pool = ctx;
	int64_t idx = tk_pool_index(pool, buf);
	tk_pool_desc *d;
	struct piece *p;
	size_t count;

	if (idx < 0)
		return;
	d = tk_pool_desc_of(pool, (uint32_t)idx);
	if (n <= d->flushed)
		return;
	count = (size_t)n - d->flushed;
	if (g_log.stage_len + count > g_log.stage_cap) {
		size_t cap = g_log.stage_cap ? g_log.stage_cap : TRACE_BUFFER_SLOTS * 4;
		traceevent_t *ns;
		while (cap < g_log.stage_len + count)
			cap *= 2;
		ns = realloc(g_log.stage, cap * sizeof(*ns));
		if (ns == NULL) {
			g_log.stage_oom = 1;
			return; /* left in the buffer: written with it later */
		}
		g_log.stage = ns;
		g_log.stage_cap = cap;
	}
	if (g_log.n_pieces == g_log.cap_pieces) {
		size_t cap = g_log.cap_pieces ? g_log.cap_pieces * 2 : 64;
		struct piece *np = realloc(g_log.pieces, cap * sizeof(*np));
		if (np == NULL) {
			g_log.stage_oom = 1;
			return;
		}
		g_log.pieces = np;
		g_log.cap_pieces = cap;
	}
	memcpy(g_log.stage + g_log.stage_len, (const traceevent_t *)buf + d->flushed, count * sizeof(traceevent_t));
	if (d->flushed <= TRACE_SLOT_BUFFER && d->flushed + count > TRACE_SLOT_BUFFER &&
	    TRACE_IS_CONTROL(g_log.stage[g_log.stage_len + TRACE_SLOT_BUFFER - d->flushed].header, _TRACE_CONTROL_BUFFER))
		g_log.stage[g_log.stage_len + TRACE_SLOT_BUFFER - d->flushed].data[2] =
			(uint32_t)n; /* events in the buffer so far, TIME included */
	p = &g_log.pieces[g_log.n_pieces++];
	p->buf_idx = (uint32_t)idx;
	p->seq = d->seq;
	p->owner_pid = d->owner_pid;
	p->owner_tid = d->owner_tid;
	p->written = 0;
	p->stage_off = g_log.stage_len;
	p->count = count;
	p->continued = d->flushed > 0;
	p->cpu = d->resume_cpu;
	p->msb = d->resume_msb;
	scan_time(g_log.stage + g_log.stage_len, count, &d->resume_cpu, &d->resume_msb);
	g_log.stage_len += count;
	d->flushed = (uint32_t)n;
}

/*
 * Records dropped by threads that have not started a buffer since (so no buffer of theirs
 * carries the count): reported here, after their partial buffers, so that the file's
 * DROPPED events always add up to every record lost.
 */
static void write_pending_drops(tk_pool *pool)
{
	uint64_t lost = tk_pool_take_dropped(pool), t;
	size_t two = 2;
	unsigned cpu;
	traceevent_t e[2];
	int rc;

	if (lost == 0 || g_log.write_error != 0)
		return; /* (after a write error they stay counted in the statistics only) */
	t = tk__trace_clock();
	cpu = tk__trace_cpu();
	e[0] = (traceevent_t){ _TRACE_MAKE_CODE(cpu, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME),
			       { (uint32_t)t, (uint32_t)(t >> 32), (uint32_t)t } };
	e[1] = (traceevent_t){ _TRACE_MAKE_CODE(cpu, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_DROPPED),
			       { (uint32_t)t, (uint32_t)lost, (uint32_t)(lost >> 32) } };
	rc = tk_kev_write_raw(g_log.w, e, 2);
	if (rc == TK_OK)
		rc = tk_kev_writer_flush(g_log.w);
	account(&two, 1, 0, rc);
	if (rc != TK_OK)
		note_write_error();
}

static void write_staged(struct piece *p)
{
	if (!p->written) {
		struct owner o = { p->buf_idx, p->seq, p->owner_pid, p->owner_tid };
		p->written = 1;
		write_piece(g_log.stage + p->stage_off, p->count, p->continued, p->cpu, p->msb, &o);
	}
}

static void write_staged_piece_of(uint32_t idx)
{
	size_t i;

	for (i = 0; i < g_log.n_pieces; i++)
		if (g_log.pieces[i].buf_idx == idx)
			write_staged(&g_log.pieces[i]);
}

/*
 * Writes every thread's committed records. Per thread, records must reach the file in the
 * order they were written: a buffer queued before its successor's head was copied is
 * written before that head, and a buffer that fills up after its head was copied gets the
 * head written before its tail (write_queued). Hence: copy the heads, drain the queue
 * (piece-aware), then write the heads left.
 */
static void flush_partials(tk_pool *pool)
{
	size_t i;

	g_log.stage_len = 0;
	g_log.n_pieces = 0;
	tk_buffer_for_each_thread(tk__trace_buffer_id, collect_one, pool);
	drain_queue(pool);
	for (i = 0; i < g_log.n_pieces; i++)
		write_staged(&g_log.pieces[i]);
	g_log.n_pieces = 0;
	write_pending_drops(pool);
}

static void *logger_main(void *arg)
{
	tk_pool *pool = arg;

	for (;;) {
		uint32_t seq = atomic_load_explicit(&g_log.wake_seq, memory_order_acquire);
		int ring = atomic_load(&trace_cfg()->ring), stop, flush;
		uint64_t req;

		pthread_mutex_lock(&g_log.mu);
		stop = g_log.stop_req;
		req = g_log.flush_req;
		flush = stop || req != g_log.flush_done;
		pthread_mutex_unlock(&g_log.mu);

		if (!ring || flush)
			drain_queue(pool);
		if (flush) {
			flush_partials(pool);
			if (g_log.write_error == 0 && tk_kev_writer_flush(g_log.w) != TK_OK)
				note_write_error();
			pthread_mutex_lock(&g_log.mu);
			g_log.flush_done = req;
			pthread_cond_broadcast(&g_log.done_cv);
			pthread_mutex_unlock(&g_log.mu);
		}
		if (stop)
			break;
		logger_sleep(seq);
	}
	return NULL;
}

/* ---- control ---------------------------------------------------------------------------- */

static int logger_flush_sync(void)
{
	uint64_t mine;
	int err;

	pthread_mutex_lock(&g_log.mu);
	if (!g_log.running) {
		pthread_mutex_unlock(&g_log.mu);
		return TK_ESTATE;
	}
	mine = ++g_log.flush_req;
	pthread_mutex_unlock(&g_log.mu);
	logger_wake(NULL);
	pthread_mutex_lock(&g_log.mu);
	while (g_log.flush_done < mine && g_log.running)
		pthread_cond_wait(&g_log.done_cv, &g_log.mu);
	err = g_log.write_error;
	pthread_mutex_unlock(&g_log.mu);
	return err;
}

int tk_logger_flush(void)
{
	return logger_flush_sync();
}

/* STOP: what was recorded goes to the file now (unless the logger itself is stopping). */
static void logger_stopped(void *ctx)
{
	int stopping;

	(void)ctx;
	pthread_mutex_lock(&g_log.mu);
	stopping = g_log.stopping;
	pthread_mutex_unlock(&g_log.mu);
	if (!stopping)
		logger_flush_sync();
}

static int logger_flush(void *ctx)
{
	(void)ctx;
	return logger_flush_sync();
}

static const char *logger_errmsg(void *ctx)
{
	(void)ctx;
	return g_log.errmsg;
}

static int logger_yield(void *ctx);

/* The in-process logger as the pool's drainer (trace_internal.h). */
static const struct tk__trace_drainer logger_drainer = {
	.name = "logger",
	.ctx = NULL,
	.wake = logger_wake,
	.flush = logger_flush,
	.errmsg = logger_errmsg,
	.stopped = logger_stopped,
	.yield = logger_yield,
};

static void logger_atexit(void)
{
	int running, from_env, rc;
	char path[sizeof(g_log.path)];

	pthread_mutex_lock(&g_log.mu);
	running = g_log.running;
	from_env = g_log.from_env;
	snprintf(path, sizeof(path), "%s", g_log.path);
	pthread_mutex_unlock(&g_log.mu);
	if (!running)
		return;
	rc = tk_logger_stop();
	/* The user asked for the trace through the environment and nobody else will hear of
	 * the failure: one line, as when the file cannot be created. */
	if (rc != TK_OK && from_env && !g_log.reported)
		say("tracekit: TRACEKIT_LOG=%s: %s\n", path, g_log.errmsg[0] ? g_log.errmsg : tk_strerror(rc));
	if (from_env)
		err_release();
}

static void child_after_fork(void)
{
	unsigned i;

	/* The logger thread does not exist in the child and its file belongs to the parent:
	 * the child records nothing (its writer is abandoned, not flushed twice). */
	for (i = 0; i < TRACE_N_CLASSES; i++)
		atomic_store(&tk__trace_mode[i], TK__TRACE_OFF);
	atomic_store(&tk__trace_local_config.started, 0);
	tk__trace_drainer_detach(&logger_drainer);
	pthread_mutex_init(&g_log.mu, NULL);
	pthread_cond_init(&g_log.done_cv, NULL);
	pthread_mutex_init(&tk__trace.lock, NULL);
	pthread_mutex_init(&tk__trace.handler_lock, NULL);
	g_log.running = 0;
	g_log.w = NULL;
	err_release();
}

/*
 * Paths that cannot become a trace file, each with its own message (the generic error of
 * creating the file would read "input/output error"): a directory, a name too long for
 * "<path>.part". mu held.
 */
/*
 * The trace's writes must not kill the program: a file size limit raises SIGXFSZ and a
 * closed pipe SIGPIPE in the writing thread, whose default action ends the process. The
 * logger thread runs with both blocked (its writes then fail with EFBIG or EPIPE, which
 * stop the trace with a message); the caller's thread blocks them around its last writes
 * and takes back only the ones its writes raised.
 */
static void write_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGXFSZ);
	sigaddset(set, SIGPIPE);
}

struct quiet_writes {
	sigset_t old, pending;
};

static void quiet_writes_begin(struct quiet_writes *q)
{
	sigset_t set;
	write_signals(&set);
	sigpending(&q->pending);
	pthread_sigmask(SIG_BLOCK, &set, &q->old);
}

static void quiet_writes_end(struct quiet_writes *q)
{
	static const int sigs[2] = { SIGXFSZ, SIGPIPE };
	sigset_t now;
	sigpending(&now);
	for (int i = 0; i < 2; i++) {
		if (sigismember(&now, sigs[i]) && !sigismember(&q->pending, sigs[i])) { /* raised by our writes */
			sigset_t one;
			const struct timespec zero = { 0, 0 };
			sigemptyset(&one);
			sigaddset(&one, sigs[i]);
			while (sigtimedwait(&one, NULL, &zero) < 0 && errno == EINTR) {
			}
		}
	}
	pthread_sigmask(SIG_SETMASK, &q->old, NULL);
}

static int check_path(const char *path)
{
	struct stat st;
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (strcmp(path, "-") == 0) {
		if (fcntl(STDOUT_FILENO, F_GETFD) < 0 && errno == EBADF) { /* `>&-` */
			snprintf(g_log.errmsg, sizeof(g_log.errmsg),
				 "cannot write the trace to standard output: standard output is not open");
			return TK_EINVAL;
		}
		return TK_OK;
	}
	if (path[0] == '\0' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) || base[0] == '\0') {
		snprintf(g_log.errmsg, sizeof(g_log.errmsg), "cannot create %s: %s", path,
			 path[0] == '\0' ? "empty file name" : strerror(EISDIR));
		return TK_EINVAL;
	}
	if (strlen(path) + sizeof(".XXXXXX.part") > sizeof(g_log.path) ||
	    strlen(base) + sizeof(".XXXXXX.part") - 1 > NAME_MAX) {
		snprintf(g_log.errmsg, sizeof(g_log.errmsg), "cannot create %.200s...: %s", path, strerror(ENAMETOOLONG));
		return TK_EINVAL;
	}
	return TK_OK;
}

int tk_logger_start(const char *path, const tk_logger_options *opts_in)
{
	static const tk_logger_options defaults = { .n_buffers = TRACE_DEFAULT_BUFFERS };
	const tk_logger_options *opts = opts_in ? opts_in : &defaults;
	tk_kev_attr attrs[18];
	tk_kev_header hdr = { 0 };
	char exe[PATH_MAX];
	ssize_t n;
	size_t i, n_attrs = 0;
	tk_pool *pool;
	int rc;

	if (path == NULL || (opts->n_attrs > 0 && opts->attrs == NULL) || opts->n_attrs > 16)
		return TK_EINVAL;
	tk__trace_session_decline(); /* the program's own logger: its ALLOCBUFFER below attaches nothing */
	tk__trace_drainer_yield();   /* and it replaces TRACEKIT_LOG's, or the session's */
	pthread_mutex_lock(&g_log.mu);
	if (g_log.running) {
		snprintf(g_log.errmsg, sizeof(g_log.errmsg), "a logger is already running (into %s)", g_log.path);
		pthread_mutex_unlock(&g_log.mu);
		return TK_EBUSY;
	}
	rc = check_path(path);
	/* The buffers hold events in the host's order, strings and 64-bit fields as the program
	 * laid them out: another order would need each event's layout, and swapping every word
	 * reversed strings by 4 bytes and mixed up 64-bit fields. tk_kev_writer writes either. */
	if (rc == TK_OK && opts->big_endian && !TK__HOST_BIG_ENDIAN) {
		snprintf(g_log.errmsg, sizeof(g_log.errmsg),
			 "big_endian: the logger writes its host's byte order (little-endian) only");
		rc = TK_ENOTSUP;
	}
	pthread_mutex_unlock(&g_log.mu);
	if (rc != TK_OK)
		return rc;

	if (atomic_load(&tk__trace.pool) == NULL &&
	    TraceEvent(_NTO_TRACE_ALLOCBUFFER, opts->n_buffers ? opts->n_buffers : defaults.n_buffers, NULL) != 0)
		return errno == EINVAL ? TK_EINVAL : TK_ENOMEM;
	if (opts_in != NULL) /* otherwise the mode TraceEvent() set stays */
		TraceEvent(opts->ring ? _NTO_TRACE_SETRINGMODE : _NTO_TRACE_SETLINEARMODE);

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (n > 0 && strstr(exe, "TRACE_") == NULL && strstr(exe, "::") == NULL) {
		attrs[n_attrs].key = "TRACEKIT_PROGRAM";
		attrs[n_attrs++].value = exe;
	}
	/* every buffer names its owner (docs/kev-format.md, "Owner of every event") */
	attrs[n_attrs].key = "TRACEKIT_OWNER";
	attrs[n_attrs++].value = "buffer";
	for (i = 0; i < opts->n_attrs; i++)
		attrs[n_attrs++] = opts->attrs[i];
	hdr.big_endian = TK__HOST_BIG_ENDIAN;
	hdr.attrs = attrs;
	hdr.n_attrs = n_attrs;

	pthread_mutex_lock(&g_log.mu);
	struct quiet_writes q;
	quiet_writes_begin(&q); /* the header may be written here */
	rc = tk_kev_writer_open(&g_log.w, path, &hdr, TK_KEV_NO_AUTO_TIME);
	quiet_writes_end(&q);
	if (rc != TK_OK) {
		snprintf(g_log.errmsg, sizeof(g_log.errmsg), "cannot create %s: %s", path, tk_strerror(rc));
		pthread_mutex_unlock(&g_log.mu);
		return rc;
	}
	snprintf(g_log.path, sizeof(g_log.path), "%s", path);
	g_log.stop_req = 0;
	g_log.stopping = 0;
	g_log.write_error = 0;
	g_log.errmsg[0] = '\0';
	g_log.flush_req = g_log.flush_done = 0;
	g_log.events_written = g_log.buffers_written = g_log.bytes_written = g_log.buffers_lost = 0;
	g_log.events_lost = 0;
	g_log.from_env = 0;
	g_log.reported = 0;
	g_log.file_slots = 0;
	g_log.data_start = file_size(); /* the header is written: events start here */
	if (g_log.data_start < 0)
		g_log.data_start = 0;
	pool = atomic_load(&tk__trace.pool);
	if (tk__trace_drainer_attach(&logger_drainer) != TK_OK) { /* another drainer has the pool */
		const struct tk__trace_drainer *other = tk__trace_drainer();
		snprintf(g_log.errmsg, sizeof(g_log.errmsg), "cannot create %s: the trace buffers are drained by %s", path,
			 other != NULL && other->name != NULL ? other->name : "another drainer");
		tk_kev_writer_abort(g_log.w);
		g_log.w = NULL;
		pthread_mutex_unlock(&g_log.mu);
		return TK_EBUSY;
	}
	sigset_t wsig, old_mask;
	write_signals(&wsig);
	pthread_sigmask(SIG_BLOCK, &wsig, &old_mask); /* the logger thread inherits the mask */
	rc = pthread_create(&g_log.thread, NULL, logger_main, pool);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	if (rc != 0) {
		tk__trace_drainer_detach(&logger_drainer);
		tk_kev_writer_abort(g_log.w);
		g_log.w = NULL;
		pthread_mutex_unlock(&g_log.mu);
		return TK_ENOMEM;
	}
	pthread_setname_np(g_log.thread, "tk-logger"); /* how it shows in START state and top */
	g_log.running = 1;
	if (!g_log.atexit_registered) {
		g_log.atexit_registered = 1;
		atexit(logger_atexit);
		pthread_atfork(NULL, NULL, child_after_fork);
	}
	pthread_mutex_unlock(&g_log.mu);
	return TK_OK;
}

int tk_logger_stop(void)
{
	int rc;

	pthread_mutex_lock(&g_log.mu);
	if (!g_log.running || g_log.stopping) {
		pthread_mutex_unlock(&g_log.mu);
		return TK_ESTATE;
	}
	g_log.stopping = 1;
	pthread_mutex_unlock(&g_log.mu);

	TraceEvent(_NTO_TRACE_STOP);
	pthread_mutex_lock(&g_log.mu);
	g_log.stop_req = 1;
	pthread_mutex_unlock(&g_log.mu);
	logger_wake(NULL);
	pthread_join(g_log.thread, NULL);

	pthread_mutex_lock(&g_log.mu);
	struct quiet_writes q;
	quiet_writes_begin(&q);
	rc = tk_kev_writer_close(g_log.w);
	quiet_writes_end(&q);
	g_log.w = NULL;
	if (g_log.write_error != 0)
		rc = g_log.write_error;
	else if (rc != TK_OK)
		snprintf(g_log.errmsg, sizeof(g_log.errmsg), "closing the trace file failed: %s", tk_strerror(rc));
	g_log.running = 0;
	g_log.stopping = 0;
	tk__trace_drainer_detach(&logger_drainer);
	pthread_cond_broadcast(&g_log.done_cv);
	pthread_mutex_unlock(&g_log.mu);
	return rc;
}

int tk_logger_get_stats(tk_logger_stats *out)
{
	tk_pool *pool = atomic_load(&tk__trace.pool);
	tk_pool_stats ps;

	if (out == NULL)
		return TK_EINVAL;
	memset(out, 0, sizeof(*out));
	if (pool != NULL) {
		tk_pool_get_stats(pool, &ps);
		/* every record lost (reported in the file, or to be at the next flush) */
		out->events_dropped = ps.records_dropped;
		out->buffers_overwritten = ps.buffers_overwritten;
	}
	pthread_mutex_lock(&g_log.mu);
	out->events_written = g_log.events_written;
	out->buffers_written = g_log.buffers_written;
	out->bytes_written = g_log.bytes_written;
	out->buffers_lost = g_log.buffers_lost;
	out->events_lost = g_log.events_lost;
	out->write_error = g_log.write_error;
	pthread_mutex_unlock(&g_log.mu);
	return TK_OK;
}

const char *tk_logger_errmsg(void)
{
	return g_log.errmsg;
}

/* ---- TRACEKIT_LOG: recording an unmodified program ---------------------------------------- */

/*
 * A program that starts a logger of its own, or replaces the buffers, while TRACEKIT_LOG
 * records it: the environment's logger hands over. Its file is completed with what was
 * recorded until then and the program's calls then work as they do without TRACEKIT_LOG
 * (the seed's examples call tk_logger_start() / ALLOCBUFFER themselves). The drainer's
 * yield: returns 1 if the logger was stopped (and detached). Called with none of
 * trace_internal.h's locks held.
 */
static int logger_yield(void *ctx)
{
	int from_env, rc;

	(void)ctx;
	char path[sizeof(g_log.path)];

	pthread_mutex_lock(&g_log.mu);
	from_env = g_log.running && !g_log.stopping && g_log.from_env;
	snprintf(path, sizeof(path), "%s", g_log.path);
	pthread_mutex_unlock(&g_log.mu);
	if (!from_env)
		return 0;
	rc = tk_logger_stop();
	if (rc != TK_OK && rc != TK_ESTATE && !g_log.reported)
		say("tracekit: TRACEKIT_LOG=%s: %s\n", path, g_log.errmsg[0] ? g_log.errmsg : tk_strerror(rc));
	if (rc != TK_ESTATE)
		err_release(); /* the environment's recording is over */
	return rc != TK_ESTATE;
}

/* Removes every NAME=... entry from env, in place. */
static void env_drop(char **env, const char *name)
{
	size_t len = strlen(name), i, j;

	if (env == NULL)
		return;
	for (i = j = 0; env[i] != NULL; i++)
		if (!(strncmp(env[i], name, len) == 0 && env[i][len] == '='))
			env[j++] = env[i];
	env[j] = NULL;
}

/* A decimal number from 1 to max, nothing else; 0 when s is not one. */
static unsigned parse_count(const char *s, unsigned max)
{
	unsigned long long v = 0;

	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (unsigned)(*s - '0');
		if (v > max)
			return 0;
	}
	return (unsigned)v;
}

/*
 * spec with every "%p" replaced by the process ID and every "%%" by one "%" (any other "%"
 * stays as it is); -1 if it does not fit in cap. With out NULL, only says whether spec has
 * a "%p" (1 or 0).
 */
static int expand_path(const char *spec, char *out, size_t cap)
{
	size_t n = 0;
	char pid[24];
	int pid_len = snprintf(pid, sizeof(pid), "%d", (int)getpid());

	for (; *spec != '\0'; spec++) {
		if (spec[0] == '%' && spec[1] == 'p') {
			if (out == NULL)
				return 1;
			if (n + (size_t)pid_len >= cap)
				return -1;
			memcpy(out + n, pid, (size_t)pid_len);
			n += (size_t)pid_len;
			spec++;
			continue;
		}
		if (spec[0] == '%' && spec[1] == '%')
			spec++; /* a literal "%" */
		if (out == NULL)
			continue;
		if (n + 1 >= cap)
			return -1;
		out[n++] = *spec;
	}
	if (out == NULL)
		return 0;
	out[n] = '\0';
	return 0;
}

/*
 * A crashed (or _exit()ed, or exec()ed) run's "<path>.part" is kept, never reused: this run's temporary
 * then has a unique name (tk_outfile). Said once, with both names, so that the old one is
 * not taken for this run's.
 */
static void say_kept_part(const char *path)
{
	char part[sizeof(g_log.path) + 8], temp[sizeof(g_log.path) + 16];

	if (strcmp(path, "-") == 0)
		return;
	pthread_mutex_lock(&g_log.mu);
	snprintf(temp, sizeof(temp), "%s", g_log.w != NULL ? tk_kev_writer_temp_path(g_log.w) : "");
	pthread_mutex_unlock(&g_log.mu);
	snprintf(part, sizeof(part), "%s.part", path);
	if (temp[0] == '\0' || strcmp(temp, part) == 0 || strcmp(temp, path) == 0)
		return; /* the usual temporary, or an output written in place (a device) */
	struct stat sb;
	if (lstat(part, &sb) == 0 && !S_ISREG(sb.st_mode)) /* not a trace: never followed, left alone */
		say("tracekit: TRACEKIT_LOG=%s: %s is %s, left alone (never followed); this run writes to %s until it "
		    "completes\n",
		    path, part, S_ISLNK(sb.st_mode) ? "a symbolic link" : S_ISDIR(sb.st_mode) ? "a directory" : "not a file",
		    temp);
	else
		say("tracekit: TRACEKIT_LOG=%s: kept %s (a trace never completed: a crash, _exit() or exec); "
		    "this run writes to %s until it completes\n",
		    path, part, temp);
}

/*
 * Before main(). The variables are read with secure_getenv(), and a privileged process
 * (setuid, setgid, capabilities: AT_SECURE) never records: TRACEKIT_LOG would otherwise let
 * any user make it create or replace a file of the owner's.
 *
 * Without "%p" only this process records: TRACEKIT_LOG is taken out of the environment
 * (the array itself, also the one main() gets, not through unsetenv(): bash brings its own
 * getenv/unsetenv, and its children would otherwise record into the same file).
 *
 * Returns 1 if recording started.
 */
static int autostart(char **envp)
{
	extern char **environ;
	const char *spec = secure_getenv("TRACEKIT_LOG"), *env;
	tk_logger_options opts = { .n_buffers = TRACE_DEFAULT_BUFFERS };
	char path[4096];
	int rc;

	if (getauxval(AT_SECURE) != 0) {
		say("tracekit: TRACEKIT_LOG ignored: a privileged (setuid, setgid) process never records through the "
		    "environment\n");
		return 0;
	}
	if (spec == NULL || spec[0] == '\0')
		return 0;
	env = secure_getenv(TK_SESSION_ENV);
	if (env != NULL && env[0] != '\0') {
		/* the session named there records this process (trace_session.c) */
		say("tracekit: TRACEKIT_LOG ignored: %s=%s names the session this process records into\n",
		    TK_SESSION_ENV, env);
		return 0;
	}
	if (expand_path(spec, NULL, 0) == 0) {
		/* the string stays valid: only the pointer arrays change */
		env_drop(environ, "TRACEKIT_LOG");
		if (envp != environ)
			env_drop(envp, "TRACEKIT_LOG");
	}
	if (expand_path(spec, path, sizeof(path)) != 0) {
		say("tracekit: TRACEKIT_LOG=%s: %s\n", spec, strerror(ENAMETOOLONG));
		return 0;
	}
	env = secure_getenv("TRACEKIT_LOG_BUFFERS");
	if (env != NULL && (opts.n_buffers = parse_count(env, TRACE_MAX_BUFFERS)) == 0) {
		say("tracekit: TRACEKIT_LOG_BUFFERS=%s: not a number of buffers from 1 to %u; not recording\n", env,
		    TRACE_MAX_BUFFERS);
		return 0;
	}
	env = secure_getenv("TRACEKIT_LOG_RING");
	if (env != NULL && strcmp(env, "0") != 0 && strcmp(env, "1") != 0) { /* "" too: a typo, not a choice */
		say("tracekit: TRACEKIT_LOG_RING=%s: 1 (ring mode) or 0 (linear); not recording\n", env);
		return 0;
	}
	opts.ring = env != NULL && strcmp(env, "1") == 0;
	rc = tk_logger_start(path, &opts);
	if (rc != TK_OK) {
		/* The user asked for a trace through the environment: this is the only place
		 * to say it cannot be made. */
		say("tracekit: TRACEKIT_LOG=%s: %s\n", path, g_log.errmsg[0] ? g_log.errmsg : tk_strerror(rc));
		return 0;
	}
	pthread_mutex_lock(&g_log.mu);
	g_log.from_env = 1;
	pthread_mutex_unlock(&g_log.mu);
	say_kept_part(path);
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	TraceEvent(_NTO_TRACE_START);
	return 1;
}

__attribute__((constructor)) static void trace_autostart(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	if (getenv("TRACEKIT_LOG") == NULL)
		return;
	err_hold(); /* before anything can be said */
	if (!autostart(envp))
		err_release();
}
