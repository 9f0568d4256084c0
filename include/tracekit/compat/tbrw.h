/* SPDX-License-Identifier: MIT */
/*
 * Compatibility shim: lets programs written for Intel's TBRW package include "tbrw.h"
 * unchanged when built with -I$(pkg-config --variable=compatdir tracekit).
 */
#ifndef TRACEKIT_COMPAT_TBRW_H
#define TRACEKIT_COMPAT_TBRW_H
#include "tracekit/tbrw.h"
#endif
