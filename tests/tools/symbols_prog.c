/* SPDX-License-Identifier: MIT */
/*
 * symbols_prog: records itself with function entry/exit (built with -g
 * -finstrument-functions, not position-independent) for the symbols tests
 * (tests/symbols_traceprinter.sh, symbols_export.sh): a worker thread calls symprog_outer(),
 * which marks its place with trace_here() and calls symprog_inner() three times, so the
 * trace holds FUNC_ENTER/EXIT of both and an ADDRESS in the worker's buffers and the
 * mappings in the START thread's; the main thread then inserts an INT_HANDLER_ENTRY whose
 * handler is symprog_inner when its address has 32 bits (the program linked at 0x400000),
 * and says so with a line "int_handler" on standard output.
 * usage: symbols_prog OUTPUT.kev
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

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
	trace_here();
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
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_INT);
	TraceEvent(_NTO_TRACE_SETCLASSWIDE, _NTO_TRACE_SYSTEM); /* 64-bit function addresses */
	TraceEvent(_NTO_TRACE_START);
	if (pthread_create(&th, NULL, worker, NULL) != 0 || pthread_join(th, &r) != 0)
		return 1;
	if ((uintptr_t)symprog_inner <= UINT32_MAX) {
		/* pid, interrupt 81, handler, area */
		unsigned handler[4] = { (unsigned)getpid(), 81, (unsigned)(uintptr_t)symprog_inner, 0 };
		TraceEvent(_NTO_TRACE_INSERTCCLASSEVENT, 3 /* INT */, _TRACE_INT_HANDLER_ENTRY, handler, 4u);
		printf("int_handler\n");
	}
	TraceEvent(_NTO_TRACE_STOP);
	if (tk_logger_stop() != TK_OK) {
		fprintf(stderr, "%s: %s\n", argv[0], tk_logger_errmsg());
		return 1;
	}
	return r != NULL;
}
