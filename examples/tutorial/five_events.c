/* SPDX-License-Identifier: MIT */
/*
 * five_events: the SAT guide's third tutorial program, in tracekit's words. Five single
 * events from four classes pass the static filter, in wide mode: THREAD THRUNNING and
 * THCREATE, PROCESS PROCCREATE_NAME, the entry of interrupt 0, and the exit of the
 * MSG_READV kernel call.
 *
 *   tracelogger -d1 -n 3 -f five_events.results &
 *   ./five_events
 *   traceprinter -f five_events.results
 */
#include <sys/kercalls.h>
#include <sys/trace.h>

#include "instrex.h"

int main(int argc, char **argv)
{
	(void)argc;

	/* From a clean slate: no class, no process or thread filter. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_DELALLCLASSES));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_KERCALL));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_KERCALL));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_THREAD));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_THREAD));

	/* Wide mode: each event with all of its data. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_SETALLCLASSESWIDE));

	/* Two events of the THREAD class: a thread starts running, a thread is created. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_THREAD, _NTO_TRACE_THCREATE));

	/* One of the PROCESS class: a process is created, with its name. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_PROCESS, _NTO_TRACE_PROCCREATE_NAME));

	/* One of the interrupt-entry class: interrupt 0. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_INTENTER, _NTO_TRACE_INTFIRST));

	/* One of the kernel-call-exit class: MSG_READV returning. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_KERCALLEXIT, __KER_MSG_READV));

	/* Start; the logger records until its limit. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_START));
	return 0;
}
