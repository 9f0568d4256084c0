/* SPDX-License-Identifier: MIT */
/*
 * Compatibility shim: lets code written for Byfl's libbfbin include <byfl/bfbin.h>
 * unchanged when built with -I$(pkg-config --variable=compatdir tracekit); link with
 * $(pkg-config --libs tracekit) instead of -lbfbin.
 */
#ifndef TRACEKIT_COMPAT_BYFL_BFBIN_H
#define TRACEKIT_COMPAT_BYFL_BFBIN_H
#include "tracekit/bfbin.h"
#endif
