/* SPDX-License-Identifier: MIT */
/*
 * Recording benchmark: the cost of an event, beside the floor of reading the clock.
 *   rdtsc      a loop of rdtsc, each result consumed (the floor)
 *   emit       the inline tk_trace_user() with the logger draining to DIR/emit.kev
 *   insert     TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, ...) likewise
 *   disabled   tk_trace_user() with tracing stopped
 *   scaling    events/s of two threads together over one thread (ring mode: the logger
 *              does not write meanwhile, so it does not take one of the cores)
 *   sustained  one thread emitting for SECONDS into DIR/sustained.kev, paced at 30 M
 *              events/s, then as fast as it can; each file is read back: events stored +
 *              DROPPED counts must equal events emitted
 * Timed loops are bursts that fit in the allocated buffers, median of several.
 * Prints "key=value" lines for bench/run_trace.sh.
 * usage: bench_trace DIR [SECONDS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracekit/trace.h"
#include "tracekit/traceparser.h"

enum { BURST = 1000000, REPEATS = 7, CODE = 42 };

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

static volatile uint64_t g_sink;

static double rdtsc_ns(void)
{
	double r[REPEATS];
	int k;

	for (k = 0; k < REPEATS; k++) {
		uint64_t acc = 0;
		double t0 = now();
		for (unsigned i = 0; i < BURST; i++)
			acc += tk__trace_clock();
		r[k] = (now() - t0) * 1e9 / BURST;
		g_sink = acc;
	}
	return median(r, REPEATS);
}

static void die(const char *what)
{
	fprintf(stderr, "bench_trace: %s: %s\n", what, tk_logger_errmsg()[0] ? tk_logger_errmsg() : tk_trace_errmsg());
	exit(1);
}

static void start_logger(const char *path, unsigned n_buffers, int ring)
{
	tk_logger_options o = { .n_buffers = n_buffers, .ring = ring };

	if (TraceEvent(_NTO_TRACE_ALLOCBUFFER, n_buffers, NULL) != 0)
		die("ALLOCBUFFER");
	if (tk_logger_start(path, &o) != TK_OK)
		die(path);
	TraceEvent(_NTO_TRACE_DELALLCLASSES);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	if (TraceEvent(_NTO_TRACE_STARTNOSTATE) != 0)
		die("START");
}

static void stop_logger(void)
{
	if (tk_logger_stop() != TK_OK)
		die("stopping the logger");
	TraceEvent(_NTO_TRACE_DEALLOCBUFFER);
}

/* Per-event ns of one burst of inline events or of TraceEvent() inserts. */
static double burst(int use_insert)
{
	double t0 = now();
	unsigned i;

	if (use_insert)
		for (i = 0; i < BURST; i++)
			TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, CODE, i, i);
	else
		for (i = 0; i < BURST; i++)
			tk_trace_user(CODE, i, i);
	return (now() - t0) * 1e9 / BURST;
}

static void recording_costs(const char *dir)
{
	char path[4096];
	double emit[REPEATS], insert[REPEATS], off[REPEATS], empty[REPEATS];
	tk_logger_stats st;
	int k;

	/* 2048 buffers hold a burst twice over: the logger drains meanwhile, none is dropped */
	snprintf(path, sizeof(path), "%s/emit.kev", dir);
	start_logger(path, 2048, 0);
	burst(0); /* warm: every buffer touched once */
	for (k = 0; k < REPEATS; k++) {
		tk_logger_flush();
		emit[k] = burst(0);
	}
	for (k = 0; k < REPEATS; k++) {
		tk_logger_flush();
		insert[k] = burst(1);
	}
	TraceEvent(_NTO_TRACE_STOP);
	for (k = 0; k < REPEATS; k++) {
		double t0 = now();
		for (unsigned i = 0; i < BURST; i++)
			tk_trace_user(CODE, i, i);
		off[k] = (now() - t0) * 1e9 / BURST;
		t0 = now();
		for (unsigned i = 0; i < BURST; i++)
			__asm__ volatile("" ::"r"(i));
		empty[k] = (now() - t0) * 1e9 / BURST;
	}
	tk_logger_get_stats(&st);
	stop_logger();
	printf("emit_ns=%.3f\ninsert_ns=%.3f\ndisabled_ns=%.3f\nempty_loop_ns=%.3f\nburst_dropped=%llu\n",
	       median(emit, REPEATS), median(insert, REPEATS), median(off, REPEATS), median(empty, REPEATS),
	       (unsigned long long)st.events_dropped);
}

/* ---- two threads --------------------------------------------------------------------------- */

static _Atomic int g_go;
static unsigned g_per_thread;

static void *scaling_worker(void *arg)
{
	double *secs = arg, t0;
	unsigned i;

	while (!atomic_load(&g_go))
		;
	t0 = now();
	for (i = 0; i < g_per_thread; i++)
		tk_trace_user(CODE, i, i);
	*secs = now() - t0;
	return NULL;
}

/* Events per second of n threads emitting g_per_thread events each, at once. */
static double run_threads(unsigned n)
{
	pthread_t th[2];
	double secs[2] = { 0, 0 }, t0, wall;
	unsigned i;

	atomic_store(&g_go, 0);
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, scaling_worker, &secs[i]);
	t0 = now();
	atomic_store(&g_go, 1);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	wall = now() - t0;
	(void)secs;
	return (double)n * g_per_thread / wall;
}

static void scaling(const char *dir)
{
	char path[4096];
	double one[REPEATS], two[REPEATS];
	int k;

	snprintf(path, sizeof(path), "%s/ring.kev", dir);
	start_logger(path, 512, 1);
	g_per_thread = 20 * BURST;
	run_threads(2); /* warm */
	for (k = 0; k < REPEATS; k++) {
		one[k] = run_threads(1);
		two[k] = run_threads(2);
	}
	stop_logger();
	printf("one_thread_events_per_sec=%.0f\ntwo_threads_events_per_sec=%.0f\n", median(one, REPEATS),
	       median(two, REPEATS));
}

/* ---- sustained ------------------------------------------------------------------------------- */

struct tally {
	uint64_t user, dropped;
};

static int tally_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct tally *c = ud;

	(void)st;
	(void)t;
	(void)len;
	if (TK_KEV_CLASS(h) == (_TRACE_USER_C >> 10))
		c->user++;
	else if (buf != NULL && TK_KEV_CODE(h) == _TRACE_CONTROL_DROPPED)
		c->dropped += (uint64_t)buf[0] | (uint64_t)buf[1] << 32;
	return 0;
}

/* rate 0: as fast as the thread can; else paced to `rate` events/s. */
static void sustained(const char *dir, const char *tag, double seconds, double rate)
{
	char path[4096];
	struct traceparser_state *ps;
	struct tally c = { 0, 0 };
	tk_logger_stats st;
	uint64_t emitted = 0;
	double t0, t;

	snprintf(path, sizeof(path), "%s/sustained.kev", dir);
	start_logger(path, 16384, 0); /* 256 MiB of buffers: rides out writeback stalls */
	t0 = now();
	do {
		for (unsigned i = 0; i < 65536; i++)
			tk_trace_user(CODE, (uint32_t)emitted + i, i);
		emitted += 65536;
		t = now() - t0;
		while (rate > 0 && (double)emitted > rate * t)
			t = now() - t0;
	} while (t < seconds);
	TraceEvent(_NTO_TRACE_STOP);
	if (tk_logger_stop() != TK_OK)
		die("stopping the logger");
	tk_logger_get_stats(&st);
	TraceEvent(_NTO_TRACE_DEALLOCBUFFER);

	ps = traceparser_init(NULL);
	tk_traceparser_cs_internal(ps, &c, tally_cb, _TRACE_USER_C >> 10, 0, 1023);
	tk_traceparser_cs_internal(ps, &c, tally_cb, _TRACE_CONTROL_C >> 10, _TRACE_CONTROL_DROPPED,
				   _TRACE_CONTROL_DROPPED);
	if (traceparser(ps, NULL, path) != 0) {
		fprintf(stderr, "bench_trace: reading %s back failed\n", path);
		exit(1);
	}
	traceparser_destroy(&ps);
	printf("%s_seconds=%.2f\n%s_emitted=%llu\n%s_stored=%llu\n%s_dropped_in_file=%llu\n"
	       "%s_dropped_stats=%llu\n%s_bytes=%llu\n",
	       tag, t, tag, (unsigned long long)emitted, tag, (unsigned long long)c.user, tag,
	       (unsigned long long)c.dropped, tag, (unsigned long long)st.events_dropped, tag,
	       (unsigned long long)st.bytes_written);
	remove(path);
}

int main(int argc, char **argv)
{
	const char *dir;
	double seconds;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: bench_trace DIR [SECONDS]\n");
		return 2;
	}
	dir = argv[1];
	seconds = argc > 2 ? atof(argv[2]) : 10.0;
	printf("rdtsc_ns=%.3f\n", rdtsc_ns());
	recording_costs(dir);
	scaling(dir);
	sustained(dir, "paced", seconds, 30e6);
	sustained(dir, "flat_out", seconds, 0);
	return 0;
}
