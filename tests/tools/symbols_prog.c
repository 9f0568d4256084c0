/* SPDX-License-Identifier: MIT */
/*
 * symbols_prog: records itself with function entry/exit (built with -g
 * -finstrument-functions) for the symbols tests (tests/symbols_traceprinter.sh): a worker
 * thread calls symprog_outer(), which calls symprog_inner() three times, so the trace
 * holds FUNC_ENTER/EXIT of both in the worker's buffers and the mappings in the START
 * thread's. usage: symbols_prog OUTPUT.kev
 */
#include <pthread.h>
#include <stdio.h>

#include "tracekit/trace.h"

__attribute__((noinline)) int symprog_inner(int x);
__attribute__((noinline)) int symprog_outer(int n);

__attribute__((noinline)) int symprog_inner(int x)
{
	return x * 7 + 3;
}

__attribute__((noinline)) int symprog_outer(int n)
{
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += symprog_inner(i);
	return sum;
}

static void *worker(void *arg)
{
	(void)arg;
	return symprog_outer(3) == 30 ? NULL : arg;
}

int main(int argc, char **argv)
{
	tk_logger_options lo = { .n_buffers = 64 };
	pthread_t th;
	void *r = NULL;

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTPUT.kev\n", argv[0]);
		return 2;
	}
	if (tk_logger_start(argv[1], &lo) != TK_OK) {
		fprintf(stderr, "%s: %s\n", argv[0], tk_logger_errmsg());
		return 1;
	}
	TraceEvent(_NTO_TRACE_DELALLCLASSES);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_SYSTEM);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_PROCESS);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_THREAD);
	TraceEvent(_NTO_TRACE_SETCLASSWIDE, _NTO_TRACE_SYSTEM); /* 64-bit function addresses */
	TraceEvent(_NTO_TRACE_START);
	if (pthread_create(&th, NULL, worker, NULL) != 0 || pthread_join(th, &r) != 0)
		return 1;
	TraceEvent(_NTO_TRACE_STOP);
	if (tk_logger_stop() != TK_OK) {
		fprintf(stderr, "%s: %s\n", argv[0], tk_logger_errmsg());
		return 1;
	}
	return r != NULL;
}
