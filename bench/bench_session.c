/* SPDX-License-Identifier: MIT */
/*
 * Session benchmark (issue 12): recording into a shared-memory session drained by a logger
 * process, beside the in-process logger of the recording issue.
 *
 *   bench_session inproc DIR
 *       the inline emitter tk_trace_user() with the in-process logger draining to
 *       DIR/inproc.kev (as bench_trace measures it): median of 7 bursts of 1 M events
 *   bench_session session DIR
 *       the same bursts in a program attached to a session (TRACEKIT_SESSION) that this
 *       process created and drains, as tracelogger would, into DIR/session.raw; the logger
 *       blocks on the session's futex whenever the queue is empty, so writers wake it
 *       (FUTEX_WAKE) for almost every buffer they queue
 *   bench_session session-batch DIR
 *       the same with a batching logger: while buffers flow it sleeps 1 ms between drains
 *       (writers then find no waiter and make no system call); the futex wait when idle
 *   bench_session flood DIR SECONDS NPROC NTHREADS
 *       NPROC processes of NTHREADS threads each record flat out for SECONDS into one
 *       session this process drains (batching) into DIR/flood.raw; every drained buffer is
 *       parsed: user events stored, drops reported in the stream (CONTROL DROPPED) and still
 *       pending in the pool; the writers say how many events they emitted, so that
 *       stored + dropped == emitted shows that no drop is silent
 *   bench_session flood-count DIR SECONDS NPROC NTHREADS
 *       the same, the buffers drained and parsed but not written (the session's own rate,
 *       without the file system's)
 *
 * The logger side uses the session API only (tracekit/session.h, tracekit/buffer.h): it
 * never records. The writers are this program again (argv[1] "writer-emit" or
 * "writer-flood"), started with TRACEKIT_SESSION naming the session, so that the recorder
 * attaches to it when it loads. Prints "key=value" lines for bench/run_session.sh.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/buffer.h"
#include "tracekit/session.h"
#include "tracekit/trace.h"

enum { BURST = 1000000, REPEATS = 7, CODE = 42, MAX_PROCS = 64 };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static tk_session *g_logger_session; /* the session this process created, removed on failure */

static void die(const char *what, const char *why)
{
	fprintf(stderr, "bench_session: %s: %s\n", what, why);
	if (g_logger_session != NULL) /* no orphaned region left behind */
		tk_session_close(g_logger_session);
	exit(1);
}

/* Per-event ns of one burst of inline user events. */
static double burst(void)
{
	double t0 = now();

	for (unsigned i = 0; i < BURST; i++)
		tk_trace_user(CODE, i, i);
	return (now() - t0) * 1e9 / BURST;
}

/* ---- in-process logger ------------------------------------------------------------------ */

static int run_inproc(const char *dir)
{
	char path[4096];
	tk_logger_options o = { .n_buffers = 2048, .ring = 0 };
	double emit[REPEATS];
	tk_logger_stats st;

	snprintf(path, sizeof(path), "%s/inproc.kev", dir);
	if (TraceEvent(_NTO_TRACE_ALLOCBUFFER, 2048, NULL) != 0)
		die("ALLOCBUFFER", tk_trace_errmsg());
	if (tk_logger_start(path, &o) != TK_OK)
		die(path, tk_logger_errmsg());
	TraceEvent(_NTO_TRACE_DELALLCLASSES);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	if (TraceEvent(_NTO_TRACE_STARTNOSTATE) != 0)
		die("START", tk_trace_errmsg());
	burst(); /* warm: every buffer touched once */
	for (int k = 0; k < REPEATS; k++) {
		tk_logger_flush();
		emit[k] = burst();
	}
	TraceEvent(_NTO_TRACE_STOP);
	tk_logger_get_stats(&st);
	if (tk_logger_stop() != TK_OK)
		die("stopping the logger", tk_logger_errmsg());
	remove(path);
	printf("emit_inproc_ns=%.3f\ninproc_dropped=%llu\n", median(emit, REPEATS),
	       (unsigned long long)st.events_dropped);
	return 0;
}

/* ---- the logger side: a session drained by this process ------------------------------ */

struct drain {
	tk_session *s;
	tk_pool *pool;
	int fd;            /* where the buffers go (-1: nowhere) */
	uint64_t buffers;  /* drained */
	uint64_t user;     /* user events in them */
	uint64_t dropped;  /* CONTROL DROPPED counts in them */
	uint64_t slots;    /* 16-byte slots in them */
	uint64_t write_errors;
	int batch;         /* 1: sleep 1 ms between drains while buffers flow; 0: futex wait always */
};

static void count_slots(struct drain *d, const uint32_t *w, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++, w += 4) {
		uint32_t h = w[0];
		if (_TRACE_GET_STRUCT(h) == _TRACE_STRUCT_CC || _TRACE_GET_STRUCT(h) == _TRACE_STRUCT_CE)
			continue; /* the rest of a combine event */
		if (TK_KEV_CLASS(h) == (_TRACE_USER_C >> 10))
			d->user++;
		else if (TK_KEV_CLASS(h) == (_TRACE_CONTROL_C >> 10) && TK_KEV_CODE(h) == _TRACE_CONTROL_DROPPED)
			d->dropped += (uint64_t)w[2] | (uint64_t)w[3] << 32;
	}
	d->slots += n;
}

static void drain_buffer(struct drain *d, uint32_t idx, uint32_t bytes)
{
	const uint32_t *buf = tk_pool_buffer(d->pool, idx);

	if (bytes > tk_pool_buffer_size(d->pool))
		bytes = tk_pool_buffer_size(d->pool);
	bytes -= bytes % 16u;
	count_slots(d, buf, bytes / 16u);
	if (d->fd >= 0 && bytes > 0 && write(d->fd, buf, bytes) != (ssize_t)bytes)
		d->write_errors++;
	d->buffers++;
}

/* Every queued buffer, now. */
static void drain_queue(struct drain *d)
{
	uint32_t idx;

	while (tk_pool_dequeue(d->pool, &idx) == 0) {
		tk_pool_desc *desc = tk_pool_desc_of(d->pool, idx);
		uint32_t records = atomic_load_explicit(&desc->records, memory_order_acquire);
		drain_buffer(d, idx, records * 16u);
		tk_pool_count_stored(d->pool, -(int64_t)records);
		tk_pool_give(d->pool, idx);
	}
}

/* After every writer has ended: what they left in WRITING buffers, up to `committed`. */
static void drain_leftovers(struct drain *d)
{
	uint32_t n = tk_pool_n_buffers(d->pool);

	drain_queue(d);
	for (uint32_t i = 0; i < n; i++) {
		tk_pool_desc *desc = tk_pool_desc_of(d->pool, i);
		if (atomic_load_explicit(&desc->state, memory_order_acquire) != TK_POOL_WRITING)
			continue;
		drain_buffer(d, i, atomic_load_explicit(&desc->committed, memory_order_acquire));
	}
}

/* file NULL: the buffers are drained and counted, not written. */
static void session_open(struct drain *d, const char *dir, const char *file, const char *name, uint32_t n_buffers,
			 int batch)
{
	char path[4096];

	memset(d, 0, sizeof(*d));
	d->batch = batch;
	if (tk_session_create(&d->s, name, n_buffers) != TK_OK)
		die(name, tk_session_errmsg());
	g_logger_session = d->s;
	d->pool = tk_session_pool(d->s);
	/* Every buffer touched once, as the in-process run's warm-up burst touches its pool: the
	 * first write to a page of a fresh tmpfs region is a page fault (about a microsecond per
	 * 4 KiB, ~4 ns per event of a 16 KiB buffer), a cost of the region's first use, not of
	 * the emitter. */
	for (uint32_t i = 0; i < tk_pool_n_buffers(d->pool); i++)
		memset(tk_pool_buffer(d->pool, i), 0, tk_pool_buffer_size(d->pool));
	if (tk_session_set_all_classes(d->s, 0) != TK_OK || tk_session_set_class(d->s, _NTO_TRACE_USER, 1) != TK_OK ||
	    tk_session_set_all_wide(d->s, 0) != TK_OK || tk_session_start(d->s) != TK_OK)
		die("configuring the session", tk_session_errmsg());
	d->fd = -1;
	if (file == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	d->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (d->fd < 0)
		die(path, strerror(errno));
	unlink(path); /* only the writing matters, not the file */
}

static void session_close(struct drain *d)
{
	tk_session_stop(d->s);
	if (d->fd >= 0)
		close(d->fd);
	g_logger_session = NULL;
	if (tk_session_close(d->s) != TK_OK)
		die("closing the session", tk_session_errmsg());
}

/* Starts this program as a writer of session `name`; its standard output comes to *out_fd. */
static pid_t spawn_writer(const char *self, const char *name, char *const args[], int *out_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		die("pipe", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork", strerror(errno));
	if (pid == 0) {
		dup2(p[1], 1);
		setenv(TK_SESSION_ENV, name, 1);
		unsetenv("TRACEKIT_LOG");
		execv(self, args);
		fprintf(stderr, "bench_session: %s: %s\n", self, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	*out_fd = p[0];
	return pid;
}

/* Drains until every writer has ended; returns when the last one did (their outputs appended to out). */
static double drain_until_done(struct drain *d, pid_t *pids, int *fds, int n, char *out, size_t cap)
{
	int alive = n, status, busy = 0;
	size_t len = 0;
	double t_end = 0;

	while (alive > 0) {
		uint64_t before = d->buffers;
		if (d->batch && busy)
			usleep(1000); /* buffers flow: take them in batches, writers need not wake us */
		else
			tk_session_wait(d->s, 10);
		drain_queue(d);
		busy = d->buffers != before;
		for (int i = 0; i < n; i++) {
			if (pids[i] <= 0)
				continue;
			pid_t r = waitpid(pids[i], &status, WNOHANG);
			if (r == 0)
				continue;
			if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
				die("a writer", "failed (its message is above)");
			t_end = now();
			pids[i] = 0;
			alive--;
			for (;;) {
				ssize_t k = read(fds[i], out + len, cap - 1 - len);
				if (k <= 0)
					break;
				len += (size_t)k;
			}
			close(fds[i]);
		}
	}
	out[len] = '\0';
	drain_leftovers(d);
	return t_end;
}

static uint64_t sum_key(const char *text, const char *key)
{
	uint64_t sum = 0;
	size_t kl = strlen(key);

	for (const char *p = text; (p = strstr(p, key)) != NULL; p += kl)
		if ((p == text || p[-1] == '\n') && p[kl] == '=')
			sum += strtoull(p + kl + 1, NULL, 10);
	return sum;
}

static int run_session(const char *self, const char *dir, int batch)
{
	char name[64], out[4096];
	struct drain d;
	pid_t pid;
	int fd;
	char *args[] = { (char *)self, (char *)"writer-emit", NULL };
	tk_pool_stats ps;

	snprintf(name, sizeof(name), "bench-emit-%d", (int)getpid());
	session_open(&d, dir, "session.raw", name, 4096, batch); /* 64 MiB: a burst four times over */
	pid = spawn_writer(self, name, args, &fd);
	drain_until_done(&d, &pid, &fd, 1, out, sizeof(out));
	tk_pool_get_stats(d.pool, &ps);
	{
		const char *tag = batch ? "batch" : "futex";
		char *v = strstr(out, "emit_session_ns=");
		printf("emit_session_%s_ns=%.3f\n", tag, v != NULL ? strtod(v + strlen("emit_session_ns="), NULL) : 0.0);
		printf("session_%s_emitted=%llu\nsession_%s_stored=%llu\nsession_%s_dropped_in_stream=%llu\n"
		       "session_%s_dropped_pool=%llu\n",
		       tag, (unsigned long long)sum_key(out, "session_emitted"), tag, (unsigned long long)d.user, tag,
		       (unsigned long long)d.dropped, tag, (unsigned long long)ps.records_dropped);
	}
	session_close(&d);
	return 0;
}

/* The attached program of run_session(): the same bursts as run_inproc(). */
static int writer_emit(void)
{
	double emit[REPEATS];

	/* The logger started the session with USER enabled; this announces the process. */
	if (TraceEvent(_NTO_TRACE_START) != 0)
		die("START in the session", tk_trace_errmsg());
	burst(); /* warm */
	for (int k = 0; k < REPEATS; k++) {
		TraceEvent(_NTO_TRACE_FLUSHBUFFER);
		usleep(300000); /* the logger drains the previous burst meanwhile */
		emit[k] = burst();
	}
	printf("emit_session_ns=%.3f\nsession_emitted=%llu\n", median(emit, REPEATS),
	       (unsigned long long)(REPEATS + 1) * BURST);
	return 0;
}

/* ---- many processes at once ------------------------------------------------------------ */

static double g_seconds;
static _Atomic int g_go;

static void *flood_thread(void *arg)
{
	uint64_t *emitted = arg, n = 0;
	double t0;

	while (!atomic_load(&g_go))
		;
	t0 = now();
	do {
		for (uint32_t i = 0; i < 4096; i++)
			tk_trace_user(CODE, (uint32_t)n + i, i);
		n += 4096;
	} while (now() - t0 < g_seconds);
	*emitted = n;
	return NULL;
}

static int writer_flood(double seconds, int n_threads)
{
	pthread_t th[64];
	uint64_t emitted[64] = { 0 }, total = 0;

	if (n_threads < 1 || n_threads > 64)
		die("NTHREADS", "must be 1..64");
	g_seconds = seconds;
	if (TraceEvent(_NTO_TRACE_START) != 0)
		die("START in the session", tk_trace_errmsg());
	for (int i = 0; i < n_threads; i++)
		if (pthread_create(&th[i], NULL, flood_thread, &emitted[i]) != 0)
			die("pthread_create", "failed");
	atomic_store(&g_go, 1);
	for (int i = 0; i < n_threads; i++) {
		pthread_join(th[i], NULL);
		total += emitted[i];
	}
	/* every thread's partial buffer to the logger (the threads have ended: done at their exit) */
	TraceEvent(_NTO_TRACE_FLUSHBUFFER);
	printf("flood_emitted=%llu\n", (unsigned long long)total);
	return 0;
}

static int run_flood(const char *self, const char *dir, const char *secs, int n_procs, const char *threads,
		     int to_file)
{
	char name[64], out[16384];
	struct drain d;
	pid_t pids[MAX_PROCS];
	int fds[MAX_PROCS];
	char *args[] = { (char *)self, (char *)"writer-flood", (char *)secs, (char *)threads, NULL };
	tk_pool_stats ps;
	double t0, t1;
	uint64_t emitted;

	if (n_procs < 1 || n_procs > MAX_PROCS)
		die("NPROC", "must be 1..64");
	snprintf(name, sizeof(name), "bench-flood-%d", (int)getpid());
	session_open(&d, dir, to_file ? "flood.raw" : NULL, name, 16384, 1); /* 256 MiB of buffers */
	/* The logger is the one process that must keep up: ahead of the writers when it may. */
	if (setpriority(PRIO_PROCESS, 0, -20) != 0)
		fprintf(stderr, "bench_session: note: the logger runs at the writers' priority (%s)\n", strerror(errno));
	t0 = now();
	for (int i = 0; i < n_procs; i++)
		pids[i] = spawn_writer(self, name, args, &fds[i]);
	t1 = drain_until_done(&d, pids, fds, n_procs, out, sizeof(out));
	tk_pool_get_stats(d.pool, &ps);
	emitted = sum_key(out, "flood_emitted");
	{
		const char *k = to_file ? "file" : "count";
		printf("%s_seconds=%.3f\n%s_processes=%d\n%s_threads=%s\n%s_emitted=%llu\n%s_stored=%llu\n"
		       "%s_dropped_in_stream=%llu\n%s_dropped_pending=%llu\n%s_dropped_pool=%llu\n"
		       "%s_buffers=%llu\n%s_write_errors=%llu\n",
		       k, t1 - t0, k, n_procs, k, threads, k, (unsigned long long)emitted, k,
		       (unsigned long long)d.user, k, (unsigned long long)d.dropped, k,
		       (unsigned long long)ps.dropped_pending, k, (unsigned long long)ps.records_dropped, k,
		       (unsigned long long)d.buffers, k, (unsigned long long)d.write_errors);
	}
	session_close(&d);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "inproc") == 0)
		return run_inproc(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "session") == 0)
		return run_session("/proc/self/exe", argv[2], 0);
	if (argc >= 3 && strcmp(argv[1], "session-batch") == 0)
		return run_session("/proc/self/exe", argv[2], 1);
	if (argc >= 6 && strcmp(argv[1], "flood") == 0)
		return run_flood("/proc/self/exe", argv[2], argv[3], atoi(argv[4]), argv[5], 1);
	if (argc >= 6 && strcmp(argv[1], "flood-count") == 0)
		return run_flood("/proc/self/exe", argv[2], argv[3], atoi(argv[4]), argv[5], 0);
	if (argc >= 2 && strcmp(argv[1], "writer-emit") == 0)
		return writer_emit();
	if (argc >= 4 && strcmp(argv[1], "writer-flood") == 0)
		return writer_flood(atof(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: bench_session inproc DIR | session DIR | session-batch DIR | flood[-count] DIR SECONDS NPROC NTHREADS\n");
	return 2;
}
