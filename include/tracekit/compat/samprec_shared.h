/* SPDX-License-Identifier: MIT */
/*
 * Compatibility shim: lets programs written for Intel's TBRW package include "samprec_shared.h"
 * unchanged when built with -I$(pkg-config --variable=compatdir tracekit).
 */
#ifndef TRACEKIT_COMPAT_SAMPREC_SHARED_H
#define TRACEKIT_COMPAT_SAMPREC_SHARED_H
#include "tracekit/samprec_shared.h"
#endif
