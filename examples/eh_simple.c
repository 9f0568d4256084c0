/* SPDX-License-Identifier: MIT */
/*
 * eh_simple: the SAT guide's dynamic-filter example, ported. Two events from two classes,
 * KER_CALL RING0 and THREAD THRUNNING, each get an event handler; the handlers share one
 * state variable so that the two events pass in turn, whatever their rate.
 *
 * On QNX the kernel emits both events. A Linux process has no RING0 kernel call and no
 * scheduler events in user space, so here two threads play them out for real: the main
 * thread hands work to a worker through "ring0" calls (each recorded as the kernel would
 * record it: KER_CALL RING0 with the function and its argument), twice per round, and the
 * worker records THREAD THRUNNING each time it wakes up to do that work. Unfiltered that is
 * two RING0 per THRUNNING; the handlers let one of each through, alternately.
 *
 * usage: eh_simple [OUTPUT.kev [ROUNDS]]   (default: eh_simple.kev, 20 rounds)
 * then:  traceprinter -s -f eh_simple.kev  (-s: the two threads' events in time order)
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sys/kercalls.h>

#include "instrex.h"

/* Where the handlers find the intercepted events' data (20 words, as in the guide). */
static event_data_t e_d_1, e_d_2;
static _Uint32t data_array_1[20], data_array_2[20];

/* Which of the two events may pass next. The library calls handlers one at a time. */
static int g_state;

/* RING0 passes when the worker has just run, and hands the turn back. */
static int call_ring0_eh(event_data_t *e_d)
{
	(void)e_d;
	if (g_state) {
		g_state = !g_state;
		return 1;
	}
	return 0;
}

/* THRUNNING passes when a RING0 call has just been let through. */
static int thread_run_eh(event_data_t *e_d)
{
	(void)e_d;
	if (!g_state) {
		g_state = !g_state;
		return 1;
	}
	return 0;
}

/* ---- the two actors ----------------------------------------------------------------------- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static unsigned g_posted, g_done, g_rounds;
static uint64_t g_work;

static void add_work(void *arg)
{
	g_work += (uintptr_t)arg;
}

/* The stand-in for a ring0 call: recorded like QNX's kernel call, then run. */
static void ring0(void (*fn)(void *), void *arg)
{
	TraceEvent(_NTO_TRACE_INSERTSCLASSEVENT, (int)(_TRACE_KER_CALL_C >> 10), __KER_RING0,
		   (unsigned)(uintptr_t)fn, (unsigned)(uintptr_t)arg);
	fn(arg);
}

static void *worker(void *arg)
{
	unsigned seen = 0;

	(void)arg;
	pthread_mutex_lock(&g_lock);
	while (seen < g_rounds) {
		while (g_posted == seen)
			pthread_cond_wait(&g_cv, &g_lock);
		seen = g_posted;
		/* woken up: this thread runs */
		TraceEvent(_NTO_TRACE_INSERTSCLASSEVENT, (int)(_TRACE_PR_TH_C >> 10), STATE_RUNNING, (unsigned)getpid(),
			   (unsigned)syscall(SYS_gettid));
		g_done = seen;
		pthread_cond_broadcast(&g_cv);
	}
	pthread_mutex_unlock(&g_lock);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *out = argc > 1 ? argv[1] : "eh_simple.kev";
	pthread_t th;
	unsigned i;

	if (argc > 3 || (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))) {
		fprintf(argc > 3 ? stderr : stdout, "usage: %s [OUTPUT.kev [ROUNDS]]\n", argv[0]);
		return argc > 3 ? 2 : 0;
	}
	g_rounds = 20;
	if (argc > 2) {
		char *end;
		unsigned long n = strtoul(argv[2], &end, 10);
		if (*end != '\0' || n == 0 || n > 1000000) {
			fprintf(stderr, "%s: ROUNDS must be 1..1000000, not '%s'\n", argv[0], argv[2]);
			return 2;
		}
		g_rounds = (unsigned)n;
	}
	e_d_1.data_array = data_array_1;
	e_d_2.data_array = data_array_2;
	if (instrex_start_logger(argv[0], out) != 0)
		return 1;

	/* A known state of the filters. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_DELALLCLASSES));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_KERCALL));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_KERCALL));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_THREAD));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_THREAD));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_SETALLCLASSESFAST));

	/* One event of the KERCALL class, with its handler. (QNX needs I/O privity for
	 * handlers, ThreadCtl(_NTO_TCTL_IO); a user-space tracer does not.) */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_KERCALLENTER, __KER_RING0));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENTHANDLER, _NTO_TRACE_KERCALLENTER, __KER_RING0,
					call_ring0_eh, &e_d_1));
	/* One event of the THREAD class, with its handler. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENTHANDLER, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING,
					thread_run_eh, &e_d_2));

	/* STARTNOSTATE: the guide's example shows only the two events. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_STARTNOSTATE));
	if (pthread_create(&th, NULL, worker, NULL) != 0) {
		fprintf(stderr, "%s: cannot create the worker thread\n", argv[0]);
		return 1;
	}
	for (i = 1; i <= g_rounds; i++) {
		ring0(add_work, (void *)(uintptr_t)i); /* passes if the worker ran last */
		ring0(add_work, (void *)(uintptr_t)i); /* refused: no run in between */
		pthread_mutex_lock(&g_lock);
		g_posted = i;
		pthread_cond_broadcast(&g_cv);
		while (g_done != i)
			pthread_cond_wait(&g_cv, &g_lock);
		pthread_mutex_unlock(&g_lock);
	}
	pthread_join(th, NULL);
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_STOP));

	/* Handlers go before the code they live in could. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_DELEVENTHANDLER, _NTO_TRACE_KERCALLENTER, __KER_RING0));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_DELEVENTHANDLER, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING));
	if (g_work != (uint64_t)g_rounds * (g_rounds + 1)) {
		fprintf(stderr, "%s: work lost: %llu\n", argv[0], (unsigned long long)g_work);
		return 1;
	}
	return instrex_stop_logger(argv[0]);
}
