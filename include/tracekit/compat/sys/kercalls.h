/* SPDX-License-Identifier: MIT */
/*
 * Compatibility shim: lets code written for QNX include <sys/kercalls.h> unchanged when built
 * with -I$(pkg-config --variable=compatdir tracekit).
 */
#ifndef TRACEKIT_COMPAT_SYS_KERCALLS_H
#define TRACEKIT_COMPAT_SYS_KERCALLS_H
#include "tracekit/kev.h"
#endif
