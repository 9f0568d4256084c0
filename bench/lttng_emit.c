/* SPDX-License-Identifier: MIT */
/*
 * Emits N LTTng-UST events (two integer fields) as fast as it can and prints the cost per
 * event. With a recording session active this makes the LTTng trace the reading
 * benchmarks decode with babeltrace2, and measures LTTng-UST's recording cost.
 * usage: lttng_emit N
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lttng_tp.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;
	double t0, t1;

	t0 = now();
	for (i = 0; i < n; i++)
		lttng_ust_tracepoint(tk_bench, two_ints, (int)i, (int)(i ^ 0x5555));
	t1 = now();
	printf("lttng_emit: %ld events, %.1f ns/event\n", n, (t1 - t0) * 1e9 / (double)n);
	return 0;
}
