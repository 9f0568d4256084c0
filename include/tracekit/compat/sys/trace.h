/* SPDX-License-Identifier: MIT */
/*
 * Compatibility shim: lets code written for QNX include <sys/trace.h> unchanged when built
 * with -I$(pkg-config --variable=compatdir tracekit): TraceEvent(), its modes, the
 * trace_log*() calls and every event number.
 */
#ifndef TRACEKIT_COMPAT_SYS_TRACE_H
#define TRACEKIT_COMPAT_SYS_TRACE_H
#include "tracekit/kev.h"
#include "tracekit/trace.h"
#endif
