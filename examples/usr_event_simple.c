/* SPDX-License-Identifier: MIT */
/*
 * usr_event_simple: the SAT guide's first example, ported. It traces every class, inserts
 * four simple user events (codes 111, 222, 333, 444 with the numbers {1,11} .. {4,44}) and
 * one string event (code 555, "Hello world"). On QNX "tracelogger -d1" records the kernel's
 * buffers; here the in-process logger writes them to a file, and TraceEvent() itself shows
 * up as the KER_CALL / KER_EXIT pair the QNX kernel records around each call.
 *
 * usage: usr_event_simple [OUTPUT.kev]     (default: usr_event_simple.kev)
 * then:  traceprinter -f usr_event_simple.kev
 */
#include "instrex.h"

int main(int argc, char **argv)
{
	const char *out = argc > 1 ? argv[1] : "usr_event_simple.kev";

	if (argc > 2 || (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))) {
		fprintf(argc > 2 ? stderr : stdout, "usage: %s [OUTPUT.kev]\n", argv[0]);
		return argc > 2 ? 2 : 0;
	}
	if (instrex_start_logger(argv[0], out) != 0)
		return 1;

	/* A known state: no filters, whatever an earlier user of the buffers left. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_DELALLCLASSES));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_KERCALL));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_KERCALL));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_THREAD));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_THREAD));

	/* Fast (two-word) events, every class. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_SETALLCLASSESFAST));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_ADDALLCLASSES));

	/* START records the process, its threads and their states first. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_START));

	/* Four simple user events and a string event; codes may be 0..1023. */
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 111, 1, 11));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 222, 2, 22));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 333, 3, 33));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 444, 4, 44));
	TRACE_EVENT(argv[0], TraceEvent(_NTO_TRACE_INSERTUSRSTREVENT, 555, "Hello world"));

	/* Stops tracing, writes the partial buffer and renames the file into place. */
	return instrex_stop_logger(argv[0]);
}
