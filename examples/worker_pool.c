/* SPDX-License-Identifier: MIT */
/*
 * worker_pool: a multi-threaded program that records itself with tracekit. Worker threads
 * take items from a shared counter, generate and hash each item's data, and add the hashes
 * up under a lock. The trace shows:
 *   - the process and its threads (START),
 *   - USER 10 / 11 around every item (inline tk_trace_user(): item number, size / hash),
 *   - USER 20 when a worker waits for the results lock longer than a threshold (10 us),
 *   - SYSTEM FUNC_ENTER / FUNC_EXIT of the hot code (compiled with -finstrument-functions),
 *   - a closing text event per worker (trace_logf()).
 *
 * usage: worker_pool [-o OUTPUT.kev] [-t THREADS] [-n ITEMS] [-s ITEM_BYTES] [-w USEC]
 *                    [-b BUFFERS] [--ring]
 *        default: worker_pool.kev, 4 threads, 1000 items of 4096 bytes, 10 us, 1024 buffers
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracekit/trace.h"
#include "worker_pool.h"

enum { EV_ITEM_BEGIN = 10, EV_ITEM_END = 11, EV_LOCK_WAIT = 20, EV_WORKER_DONE = 30 };

static _Atomic unsigned g_next_item;
static unsigned g_items;
static size_t g_item_bytes;
static pthread_mutex_t g_results_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_sum;
static uint64_t g_wait_ns = 10000; /* 0: lock waits are not recorded */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
	unsigned char *scratch = malloc(g_item_bytes);
	unsigned done = 0, item;

	(void)arg;
	if (scratch == NULL)
		return (void *)1;
	while ((item = atomic_fetch_add(&g_next_item, 1)) < g_items) {
		uint64_t h, t0;

		tk_trace_user(EV_ITEM_BEGIN, item, (uint32_t)g_item_bytes);
		h = wp_process_item(item, scratch, g_item_bytes);
		tk_trace_user(EV_ITEM_END, item, (uint32_t)h);
		t0 = now_ns();
		pthread_mutex_lock(&g_results_lock);
		if (g_wait_ns != 0 && now_ns() - t0 > g_wait_ns)
			tk_trace_user(EV_LOCK_WAIT, item, (uint32_t)(now_ns() - t0));
		g_sum += h;
		pthread_mutex_unlock(&g_results_lock);
		done++;
	}
	trace_logf(EV_WORKER_DONE, "worker done: %u items", done);
	free(scratch);
	return NULL;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [-o OUTPUT.kev] [-t THREADS] [-n ITEMS] [-s ITEM_BYTES] [-w USEC] [-b BUFFERS] [--ring]\n"
		"Hashes ITEMS generated blocks on THREADS threads and records a trace of it.\n"
		"  -o, --output FILE   trace file (default worker_pool.kev)\n"
		"  -t, --threads N     worker threads, 1..256 (default 4)\n"
		"  -n, --items N       items to process (default 1000)\n"
		"  -s, --size BYTES    bytes per item, 1..16777216 (default 4096)\n"
		"  -w, --wait USEC     record lock waits longer than USEC, 0 for none (default 10)\n"
		"  -b, --buffers N     16 KiB trace buffers, 4..1048576 (default 1024)\n"
		"      --ring          flight recorder: keep only the newest buffers\n",
		prog);
}

static int parse_uint(const char *prog, const char *what, const char *s, unsigned long lo, unsigned long hi,
		      unsigned long *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "%s: %s must be %lu..%lu, not '%s'\n", prog, what, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { "output", required_argument, NULL, 'o' },
						  { "threads", required_argument, NULL, 't' },
						  { "items", required_argument, NULL, 'n' },
						  { "size", required_argument, NULL, 's' },
						  { "wait", required_argument, NULL, 'w' },
						  { "buffers", required_argument, NULL, 'b' },
						  { "ring", no_argument, NULL, 'r' },
						  { "help", no_argument, NULL, 'h' },
						  { NULL, 0, NULL, 0 } };
	const char *out = "worker_pool.kev";
	unsigned long threads = 4, items = 1000, size = 4096, wait_us = 10, buffers = 1024, i;
	tk_logger_options lo = { .n_buffers = 1024 };
	tk_logger_stats st;
	pthread_t th[256];
	int c, rc, failed = 0;

	while ((c = getopt_long(argc, argv, "o:t:n:s:w:b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 't': if (parse_uint(argv[0], "THREADS", optarg, 1, 256, &threads)) return 2; break;
		case 'n': if (parse_uint(argv[0], "ITEMS", optarg, 0, 100000000, &items)) return 2; break;
		case 's': if (parse_uint(argv[0], "ITEM_BYTES", optarg, 1, 1u << 24, &size)) return 2; break;
		case 'w': if (parse_uint(argv[0], "USEC", optarg, 0, 10000000, &wait_us)) return 2; break;
		case 'b': if (parse_uint(argv[0], "BUFFERS", optarg, 4, 1u << 20, &buffers)) return 2; break;
		case 'r': lo.ring = 1; break;
		case 'h': usage(stdout, argv[0]); return 0;
		default: usage(stderr, argv[0]); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr, argv[0]);
		return 2;
	}
	g_items = (unsigned)items;
	g_item_bytes = size;
	g_wait_ns = (uint64_t)wait_us * 1000;
	lo.n_buffers = (unsigned)buffers;

	rc = tk_logger_start(out, &lo);
	if (rc != TK_OK) {
		fprintf(stderr, "%s: %s\n", argv[0], tk_logger_errmsg());
		return 1;
	}
	TraceEvent(_NTO_TRACE_DELALLCLASSES);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_SYSTEM);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_PROCESS);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_THREAD);
	TraceEvent(_NTO_TRACE_SETCLASSWIDE, _NTO_TRACE_SYSTEM); /* 64-bit function addresses */
	TraceEvent(_NTO_TRACE_START);

	for (i = 0; i < threads; i++) {
		if (pthread_create(&th[i], NULL, worker, NULL) != 0) {
			fprintf(stderr, "%s: cannot create thread %lu\n", argv[0], i + 1);
			threads = i;
			failed = 1;
			break;
		}
	}
	for (i = 0; i < threads; i++) {
		void *r;
		pthread_join(th[i], &r);
		failed |= r != NULL;
	}
	TraceEvent(_NTO_TRACE_STOP);
	rc = tk_logger_stop();
	tk_logger_get_stats(&st);
	printf("%lu items on %lu threads, checksum %016llx\n", items, threads, (unsigned long long)g_sum);
	printf("trace %s: %llu events, %llu bytes, %llu dropped\n", out, (unsigned long long)st.events_written,
	       (unsigned long long)st.bytes_written, (unsigned long long)st.events_dropped);
	if (rc != TK_OK) {
		fprintf(stderr, "%s: %s\n", argv[0], tk_logger_errmsg());
		return 1;
	}
	return failed;
}
