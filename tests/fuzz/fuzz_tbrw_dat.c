/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the .dat parser of tbrw_writer (tools/lib/tbrw_dat.c, from the tools
 * library this target links) on arbitrary text. Oracles besides the sanitizers:
 * a rejected input has a "line N: " or "empty file" message; an accepted one is printed
 * back with the .dat printer, and that text must parse again and print identically.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tbrw_dat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct echo {
	FILE *out;
	int depth; /* 0 top, 1 stream or section, 2 section in a stream */
};

static int echo_item(void *ud, const struct dat_item *item)
{
	struct echo *e = ud;

	if (item->line == 0)
		abort();
	switch (item->type) {
	case DAT_SECTION_BEGIN:
		if ((item->section < DAT_N_GLOBAL_SECTIONS) != (e->depth == 0))
			abort(); /* global sections at the top, stream sections in a stream */
		e->depth++;
		return dat_print_section(e->out, item->section);
	case DAT_STREAM_BEGIN:
		if (e->depth != 0)
			abort();
		e->depth++;
		return dat_print_stream(e->out, item->stream);
	case DAT_SECTION_END:
	case DAT_STREAM_END:
		if (e->depth == 0)
			abort();
		e->depth--;
		return dat_print_end(e->out);
	case DAT_RECORD:
		if (item->kind == DAT_K_record || item->kind == DAT_K_bytes) {
			if (item->n_bytes == 0 || item->bytes == NULL)
				abort();
			return dat_print_hex(e->out, item->kind, item->bytes, item->n_bytes);
		}
		return dat_print_values(e->out, item->kind, item->values);
	}
	abort();
}

/* Parses text; on success returns the printed form (malloc'd), else NULL. */
static char *reprint(const char *text, size_t len, size_t *out_len, char *err, size_t err_size)
{
	FILE *in = fmemopen((void *)text, len, "r");
	struct echo e = { NULL, 0 };
	char *buf = NULL;
	size_t blen = 0;
	int rc;

	if (in == NULL)
		return NULL;
	e.out = open_memstream(&buf, &blen);
	if (e.out == NULL) {
		fclose(in);
		return NULL;
	}
	dat_print_header(e.out);
	rc = dat_parse(in, echo_item, &e, err, err_size);
	fclose(in);
	fclose(e.out);
	if (rc != 0) {
		if (rc != -1 || (strncmp(err, "line ", 5) != 0 && strncmp(err, "empty file", 10) != 0 &&
				 strncmp(err, "end of file", 11) != 0))
			abort();
		free(buf);
		return NULL;
	}
	if (e.depth != 0)
		abort();
	*out_len = blen;
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], *first, *second;
	size_t n1 = 0, n2 = 0;

	if (size == 0)
		return 0;
	first = reprint((const char *)data, size, &n1, err, sizeof(err));
	if (first == NULL)
		return 0;
	second = reprint(first, n1, &n2, err, sizeof(err));
	if (second == NULL) {
		fprintf(stderr, "printed .dat does not parse: %s\n%s", err, first);
		abort();
	}
	if (n1 != n2 || memcmp(first, second, n1) != 0)
		abort();
	free(first);
	free(second);
	return 0;
}
