/* SPDX-License-Identifier: MIT */
/*
 * tbrw_load.h: a .dat file (docs/tbrw_reader.md) into a .tb5 file through the TBRW API:
 * the body of tbrw_writer, in the tools library.
 */
#ifndef TRACEKIT_TOOLS_TBRW_LOAD_H
#define TRACEKIT_TOOLS_TBRW_LOAD_H

#include <stdint.h>
#include <stdio.h>

#include "tracekit/tbrw.h"

/*
 * Reads the .dat file from in and makes the TBRW calls it stands for on ptr (opened with
 * TBRW_FILE_WRITE; the caller closes or aborts it). in_name and out_name are the files as
 * messages name them; in_size, the input's size for the progress line (0: unknown). Stops
 * at the next line once tktool_stop is set. Returns 0, or 1 after printing
 * "tool: file: line N: what" (or the failed TBRW call) to standard error.
 */
int tbf_load_dat(FILE *in, TBRW_PTR ptr, const char *in_name, const char *out_name, uint64_t in_size);

#endif /* TRACEKIT_TOOLS_TBRW_LOAD_H */
