/* SPDX-License-Identifier: MIT */
/*
 * A real multi-threaded program (workers sort random arrays and merge their results under a
 * shared lock) that records its own activity in a QNX .kev file with tracekit's writer:
 * its process and thread names, thread creation, mutex waits (THMUTEX) and runs
 * (THRUNNING) as they really happen, one user event per work item, and a closing string
 * event. `traceprinter` reads the result like any QNX trace.
 * usage: kev_writer_demo OUTPUT.kev [THREADS] [ITEMS]
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracekit/kev.h"

enum { EV_ITEM_BEGIN = 10, EV_ITEM_END = 11, EV_SUMMARY = 100 };

static tk_kev_writer *g_writer;
static pthread_mutex_t g_writer_lock = PTHREAD_MUTEX_INITIALIZER; /* the writer is single-threaded */
static pthread_mutex_t g_results_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_checksum;
static int g_items;
static int g_failed;

static unsigned cpu_now(void)
{
	int c = sched_getcpu();
	return c < 0 ? 0u : (unsigned)c & 63u;
}

static void record(unsigned cls, unsigned code, const uint32_t *w, size_t n)
{
	pthread_mutex_lock(&g_writer_lock);
	if (tk_kev_write_event(g_writer, cpu_now(), cls, code, tk_clock_cycles(), w, n) != TK_OK)
		g_failed = 1;
	pthread_mutex_unlock(&g_writer_lock);
}

static void record_str(unsigned cls, unsigned code, const uint32_t *w, size_t n, const char *s)
{
	pthread_mutex_lock(&g_writer_lock);
	if (tk_kev_write_event_str(g_writer, cpu_now(), cls, code, tk_clock_cycles(), w, n, s) != TK_OK)
		g_failed = 1;
	pthread_mutex_unlock(&g_writer_lock);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void *worker(void *arg)
{
	uint32_t ids[2] = { (uint32_t)getpid(), (uint32_t)syscall(SYS_gettid) };
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u;
	char name[32];
	int item;

	snprintf(name, sizeof(name), "worker-%u", (unsigned)(uintptr_t)arg);
	record(_TRACE_PR_TH_C, _TRACE_THREAD_CREATE, ids, 2);
	record_str(_TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, ids, 2, name);
	record(_TRACE_PR_TH_C, STATE_RUNNING, ids, 2);
	for (item = 0; item < g_items; item++) {
		size_t n = 2000 + (size_t)(rand_r(&seed) % 30000), i;
		uint32_t *v = malloc(n * sizeof(*v));
		uint32_t begin[2] = { (uint32_t)item, (uint32_t)n }, end[2];
		uint64_t sum = 0;

		if (v == NULL)
			break;
		record(_TRACE_USER_C, EV_ITEM_BEGIN, begin, 2);
		for (i = 0; i < n; i++)
			v[i] = (uint32_t)rand_r(&seed);
		qsort(v, n, sizeof(*v), cmp_u32);
		for (i = 0; i < n; i += 97)
			sum = sum * 31 + v[i];
		free(v);
		end[0] = (uint32_t)item;
		end[1] = (uint32_t)sum;
		record(_TRACE_USER_C, EV_ITEM_END, end, 2);

		/* Merge the result under the shared lock; a contended lock is a real wait. */
		if (pthread_mutex_trylock(&g_results_lock) != 0) {
			record(_TRACE_PR_TH_C, STATE_MUTEX, ids, 2);
			pthread_mutex_lock(&g_results_lock);
			record(_TRACE_PR_TH_C, STATE_RUNNING, ids, 2);
		}
		g_checksum ^= sum;
		pthread_mutex_unlock(&g_results_lock);
	}
	record(_TRACE_PR_TH_C, _TRACE_THREAD_DESTROY, ids, 2);
	return NULL;
}

int main(int argc, char **argv)
{
	tk_kev_attr attrs[1] = { { "PROGRAM", "kev_writer_demo" } };
	tk_kev_header hdr = { 0 };
	pthread_t threads[64];
	unsigned n_threads = argc > 2 ? (unsigned)atoi(argv[2]) : 4, i;
	uint32_t proc[2] = { (uint32_t)getppid(), (uint32_t)getpid() };
	char summary[128];
	int rc;

	if (argc < 2 || n_threads == 0 || n_threads > 64) {
		fprintf(stderr, "usage: kev_writer_demo OUTPUT.kev [THREADS 1-64] [ITEMS]\n");
		return 2;
	}
	g_items = argc > 3 ? atoi(argv[3]) : 200;
	hdr.attrs = attrs;
	hdr.n_attrs = 1;
	rc = tk_kev_writer_open(&g_writer, argv[1], &hdr, 0);
	if (rc != TK_OK) {
		fprintf(stderr, "kev_writer_demo: cannot create %s: %s\n", argv[1], tk_strerror(rc));
		return 1;
	}
	record_str(_TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, proc, 2, argv[0]);
	for (i = 0; i < n_threads; i++)
		pthread_create(&threads[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < n_threads; i++)
		pthread_join(threads[i], NULL);
	snprintf(summary, sizeof(summary), "%u threads, %d items each, checksum %016llx", n_threads, g_items,
		 (unsigned long long)g_checksum);
	record_str(_TRACE_USER_C, EV_SUMMARY, NULL, 0, summary);
	rc = tk_kev_writer_close(g_writer);
	if (rc != TK_OK || g_failed) {
		fprintf(stderr, "kev_writer_demo: writing %s failed: %s\n", argv[1], tk_strerror(rc));
		return 1;
	}
	printf("kev_writer_demo: %s (%u threads x %d items)\n", summary, n_threads, g_items);
	return 0;
}
