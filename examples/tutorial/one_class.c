/* SPDX-License-Identifier: MIT */
/*
 * one_class: the SAT guide's second tutorial program, in tracekit's words. Only the
 * THREAD class (thread creation and every state change) is recorded; the choice of class
 * is arbitrary, the point is filtering by class.
 *
 *   tracelogger -d1 -n 3 -f one_class.results &
 *   ./one_class
 *   traceprinter -f one_class.results
 */
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

	/* The one class. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_THREAD));

	/* Start; the logger records until its limit. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_START));
	return 0;
}
