/* SPDX-License-Identifier: MIT */
/*
 * tb5_print.h: the text print_tb5 prints for the items of a .tb5 file (docs/print_tb5.md),
 * fed by the record walker (tbf_walk): every section field by field, the data records
 * decoded through the data descriptors, and the bind result. In the tools library.
 */
#ifndef TRACEKIT_TOOLS_TB5_PRINT_H
#define TRACEKIT_TOOLS_TB5_PRINT_H

#include <stdint.h>
#include <stdio.h>

#include "tbrw_dat.h"
#include "tracekit/tbrw.h"

#define MAX_DESCS 256

struct desc {
	uint32_t offset, size;
	uint16_t type, subtype;
	char *name;
};

struct tbf_printer {
	FILE *out;
	uint64_t max_records; /* UINT64_MAX: all */
	int hex;
	long only_stream; /* -1: all */
	int skipping;     /* in a stream not selected */
	int in_stream_section;
	int printed; /* something before: blocks are separated by an empty line */
	uint64_t n_printed;
	size_t record_size;
	unsigned index[DAT_N_KINDS]; /* per section */
	struct desc descs[MAX_DESCS];
	size_t n_descs;
};

/* A tbf_walk callback: prints the item to p->out (ud is the struct tbf_printer). */
int tbf_print_item(void *ud, const struct dat_item *it);
/*
 * Binds each stream (in memory) and prints each record's module, process and thread.
 * Returns 0, or -1 with the failed TBRW call in *call and *failed_rc.
 */
int tbf_print_bind(struct tbf_printer *p, TBRW_PTR ptr, const char **call, TBRW_U32 *failed_rc);
/* Frees the data descriptors kept for decoding. */
void tbf_printer_clear(struct tbf_printer *p);

#endif /* TRACEKIT_TOOLS_TB5_PRINT_H */
