/* SPDX-License-Identifier: MIT */
/*
 * Compatibility shim: lets code written for QNX include <sys/traceparser.h> unchanged when
 * built with -I$(pkg-config --variable=compatdir tracekit).
 */
#ifndef TRACEKIT_COMPAT_SYS_TRACEPARSER_H
#define TRACEKIT_COMPAT_SYS_TRACEPARSER_H
#include "tracekit/traceparser.h"
#endif
