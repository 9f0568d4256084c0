/* SPDX-License-Identifier: MIT */
/*
 * instrex.h: what the SAT guide's tutorial programs share, in tracekit's words.
 *
 * The tutorial programs start no logger of their own: `tracelogger -d1` runs beside them,
 * owns the trace session, and records what they configure and start (see README.md,
 * "The SAT tutorials under tracelogger -d1"). Each TraceEvent() call goes through
 * TRACE_EVENT(), which says which call failed, where and why.
 */
#ifndef TRACEKIT_TUTORIAL_INSTREX_H
#define TRACEKIT_TUTORIAL_INSTREX_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/trace.h>

/* No buffers to record into: most likely no logger holds the session this program looked for. */
static inline void instrex_no_logger_hint(const char *prog_name)
{
	const char *sess = getenv("TRACEKIT_SESSION");

	(void)fprintf(stderr, "%s: is \"tracelogger -d1%s%s\" running? (the program records into the session it "
			      "holds: %s)\n",
		      prog_name, sess != NULL ? " -N " : "", sess != NULL ? sess : "",
		      sess != NULL ? "TRACEKIT_SESSION names it" : "the \"default\" session of this user");
}

/*
 * TRACE_EVENT(argv[0], TraceEvent(...)): a call that returns -1 is reported on standard
 * error with the program's name, the source line, errno and tracekit's own explanation
 * (with a hint when there are no buffers: no tracelogger holds the session), then main()
 * returns 1:
 * the steps after a failed one would only add confusing errors of their own.
 */
#define TRACE_EVENT(prog_name, trace_event)                                                                  \
	do {                                                                                                 \
		if ((int)(trace_event) == -1) {                                                              \
			int instrex_errno_ = errno;                                                          \
			(void)fprintf(stderr, "%s: line %d: TraceEvent() failed, errno %d: %s (%s)\n",       \
				      (prog_name), __LINE__, instrex_errno_, strerror(instrex_errno_),       \
				      tk_trace_errmsg());                                                    \
			if (instrex_errno_ == EFAULT)                                                        \
				instrex_no_logger_hint(prog_name);                                           \
			return 1;                                                                            \
		}                                                                                            \
	} while (0)

/* A message of the program's own, after its name. */
#define TRACE_ERROR_MSG(prog_name, msg) (void)fprintf(stderr, "%s: %s\n", (prog_name), (msg))

#endif /* TRACEKIT_TUTORIAL_INSTREX_H */
