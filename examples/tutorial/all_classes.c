/* SPDX-License-Identifier: MIT */
/*
 * all_classes: the SAT guide's first tutorial program, in tracekit's words. It asks for
 * every event of every class, in fast mode, and starts the trace that `tracelogger -d1`
 * is waiting for; then it simply ends. The logger records until its limit.
 *
 *   tracelogger -d1 -n 3 -f all_classes.results &
 *   ./all_classes
 *   traceprinter -f all_classes.results
 *
 * Fast mode could be wide instead: TraceEvent(_NTO_TRACE_SETALLCLASSESWIDE).
 */
#include <sys/trace.h>

#include "instrex.h"

int main(int argc, char **argv)
{
	(void)argc;

	/* Whatever an earlier program left configured, begin from nothing: no class, and no
	 * process or thread restriction on the two classes that can have one. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_DELALLCLASSES));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_KERCALL));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_KERCALL));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_THREAD));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_THREAD));

	/* Every class in fast mode (the short form of each event)... */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_SETALLCLASSESFAST));
	/* ...and every class recorded. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDALLCLASSES));

	/* Go: from here every attached process, and the kernel's side, is recorded. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_START));

	/* Nothing more to do here: the logger decides when the recording ends. */
	return 0;
}
