/* SPDX-License-Identifier: MIT */
/*
 * Shared by the examples ported from the QNX SAT guide: a checked TraceEvent() call that
 * reports a failure with the program name, line, errno and tracekit's own message, and the
 * in-process logger that stands in for "tracelogger -d1" on QNX.
 */
#ifndef TRACEKIT_EXAMPLES_INSTREX_H
#define TRACEKIT_EXAMPLES_INSTREX_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/trace.h>

/* TRACE_EVENT(argv[0], TraceEvent(...)): on -1, say what failed and leave main() with 1. */
#define TRACE_EVENT(prog, call)                                                                \
	do {                                                                                   \
		if ((call) == -1) {                                                            \
			int err_ = errno;                                                      \
			fprintf(stderr, "%s: line %d: TraceEvent() failed: %s (%s)\n", (prog), \
				__LINE__, strerror(err_), tk_trace_errmsg());                  \
			return 1;                                                              \
		}                                                                              \
	} while (0)

/*
 * QNX runs "tracelogger -d1" beside the example; here the logger is a thread of the
 * example itself, writing `path`. Returns 0, or 1 after saying why it could not start.
 */
static inline int instrex_start_logger(const char *prog, const char *path)
{
	int rc = tk_logger_start(path, NULL);

	if (rc != TK_OK) {
		fprintf(stderr, "%s: %s\n", prog, tk_logger_errmsg()[0] ? tk_logger_errmsg() : tk_strerror(rc));
		return 1;
	}
	return 0;
}

/* Writes everything and closes the file; 0, or 1 after saying what went wrong. */
static inline int instrex_stop_logger(const char *prog)
{
	int rc = tk_logger_stop();

	if (rc != TK_OK) {
		fprintf(stderr, "%s: %s\n", prog, tk_logger_errmsg()[0] ? tk_logger_errmsg() : tk_strerror(rc));
		return 1;
	}
	return 0;
}

#endif /* TRACEKIT_EXAMPLES_INSTREX_H */
