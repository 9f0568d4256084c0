/* SPDX-License-Identifier: MIT */
/*
 * eh_simple: the SAT guide's event-handler tutorial program, in tracekit's words. Two events
 * of two classes pass the filter, the entry of the RING0 kernel call and THREAD THRUNNING,
 * and each gets an event handler (the dynamic filter). The two handlers share one state
 * variable, so that the two events are let through in turn: a RING0 only after a
 * THRUNNING, a THRUNNING only after a RING0.
 *
 *   tracelogger -d1 -n 3 -f eh_simple.results &
 *   ./eh_simple
 *   traceprinter -f eh_simple.results
 *
 * Event handlers run in the process that attached them, on the events that process records
 * (on QNX: the kernel's events, in the kernel's context, hence the request for I/O
 * privileges first). Under tracekit the kernel's events come from tracelogger, which runs no
 * handler of ours: the handlers here decide on the events this program records itself, and
 * Linux has no RING0 call (see tests/golden/tutorial/eh_simple.txt).
 */
#include <sys/kercalls.h>
#include <sys/neutrino.h>
#include <sys/trace.h>
#include <unistd.h>

#include "instrex.h"

/* Where the library copies an intercepted event's data for a handler (20 words each). */
static event_data_t e_d_1;
static _Uint32t data_array_1[20];
static event_data_t e_d_2;
static _Uint32t data_array_2[20];

/* 0: a THRUNNING may pass next; 1: a RING0 may. Handlers are called one at a time. */
static int g_state;

/* RING0 entry: passes when a THRUNNING went last, and gives the turn back. */
static int call_ring0_eh(event_data_t *e_d)
{
	(void)e_d;
	if (g_state) {
		g_state = !g_state;
		return 1;
	}
	return 0;
}

/* THRUNNING: passes when a RING0 went last (or first of all), and gives the turn on. */
static int thread_run_eh(event_data_t *e_d)
{
	(void)e_d;
	if (!g_state) {
		g_state = !g_state;
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	(void)argc;

	/* The handlers find an event's words in these arrays. */
	e_d_1.data_array = data_array_1;
	e_d_2.data_array = data_array_2;

	/* From a clean slate: no class, no process or thread filter. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_DELALLCLASSES));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_KERCALL));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_KERCALL));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_THREAD));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_THREAD));

	/* Fast mode. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_SETALLCLASSESFAST));

	/* QNX wants I/O privileges before handlers are attached; tracekit grants the request
	 * (a no-op: a handler here is a plain call in this process). */
	if (ThreadCtl(_NTO_TCTL_IO, 0) != EOK) {
		TRACE_ERROR_MSG(argv[0], "cannot obtain I/O privileges");
		return 1;
	}

	/* The RING0 kernel call's entry, with its handler. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_KERCALLENTER, __KER_RING0));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENTHANDLER, _NTO_TRACE_KERCALLENTER, __KER_RING0,
					call_ring0_eh, &e_d_1));

	/* THREAD THRUNNING, with its handler. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENTHANDLER, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING,
					thread_run_eh, &e_d_2));

	/* Start, and let a second of events go by. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_START));
	(void)sleep(1);

	/* Stop, and hand the logger what sits in partly filled buffers (fewer events than a
	 * buffer holds); a logger run with a limit of one buffer ends here. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_STOP));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_FLUSHBUFFER));

	/* Detach the handlers while their code is still there. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_DELEVENTHANDLER, _NTO_TRACE_KERCALLENTER, __KER_RING0));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_DELEVENTHANDLER, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING));

	/* One more second before the process (and the handlers' code) goes away. */
	(void)sleep(1);
	return 0;
}
