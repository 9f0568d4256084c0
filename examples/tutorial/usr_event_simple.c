/* SPDX-License-Identifier: MIT */
/*
 * usr_event_simple: the SAT guide's user-event tutorial program, in tracekit's words. Every
 * class is recorded, in fast mode, and the program puts events of its own into the stream:
 * four simple user events, codes 111 to 444, each with two numbers ({1, 11} ... {4, 44}),
 * and one string event, code 555, "Hello world". Such events mark places in the stream or
 * bracket what one wants to study.
 *
 *   tracelogger -d1 -n 3 -f usr_event_simple.results &
 *   ./usr_event_simple
 *   traceprinter -f usr_event_simple.results
 *
 * (examples/usr_event_simple.c is the same program with a logger of its own, for use
 * without tracelogger.)
 */
#include <sys/trace.h>
#include <unistd.h>

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

	/* Every class, fast. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_SETALLCLASSESFAST));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDALLCLASSES));

	/* Start. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_START));

	/* Our own events: codes may be 0 to 1023. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 111, 1, 11));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 222, 2, 22));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 333, 3, 33));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 444, 4, 44));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_INSERTUSRSTREVENT, 555, "Hello world"));

	/* The logger keeps recording until its limit; this program is done. */
	return 0;
}
