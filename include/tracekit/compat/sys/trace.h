/* SPDX-License-Identifier: MIT */
/*
 * Compatibility shim: lets code written for QNX include <sys/trace.h> unchanged when built
 * with -I$(pkg-config --variable=compatdir tracekit).
 */
#ifndef TRACEKIT_COMPAT_SYS_TRACE_H
#define TRACEKIT_COMPAT_SYS_TRACE_H
#include "tracekit/kev.h"
#endif
