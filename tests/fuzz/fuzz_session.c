/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: tk_session_check() (and, behind it, tk_pool_check()) over damaged
 * session regions. A region is over a megabyte (the configuration alone), so an input is
 * not a whole region but a recipe applied to a valid one of 1-3 buffers:
 *   byte 0      bits 0-1: buffers - 1 (0-2); bit 2: the input after the recipe's header is
 *               the region's first bytes (raw mode, the rest stays valid); bit 3: truncate
 *   bytes 1-4   with bit 3: the size to check, modulo the region's size + 1 (little-endian)
 *   then        patches: [u32 offset modulo the size][u8 length][length bytes], to the end
 * Oracles besides the sanitizers: a refused region has a message naming a byte offset
 * inside the region; an accepted one attaches as a pool whose every buffer, descriptor and
 * queue operation stays inside it (ASan checks the bounds: the region is allocated exactly).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *g_valid[3];
static size_t g_size[3];

static void make_valid(unsigned k)
{
	size_t n = tk_session_region_size(k + 1);

	g_valid[k] = aligned_alloc(4096, n);
	if (g_valid[k] == NULL || tk_session_format(g_valid[k], n, "fuzz", k + 1) != TK_OK)
		abort();
	g_size[k] = n;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned k, flags;
	size_t n, pos = 1, check_size;
	unsigned char *r;
	char why[512];
	int rc;

	if (size < 1)
		return 0;
	flags = data[0];
	k = (flags & 3u) % 3u;
	if (g_valid[k] == NULL)
		make_valid(k);
	n = g_size[k];
	check_size = n;
	if (flags & 8u) {
		if (size < 5)
			return 0;
		check_size = le32(data + 1) % (n + 1);
		pos = 5;
	}
	r = aligned_alloc(4096, n);
	if (r == NULL)
		abort();
	memcpy(r, g_valid[k], n);
	if (flags & 4u) {
		size_t len = size - pos < n ? size - pos : n;
		memcpy(r, data + pos, len);
	} else {
		while (pos + 5 <= size) {
			uint32_t off = le32(data + pos) % (uint32_t)n;
			size_t len = data[pos + 4];
			pos += 5;
			if (len > size - pos)
				len = size - pos;
			if (len > n - off)
				len = n - off;
			memcpy(r + off, data + pos, len);
			pos += len;
		}
	}
	/* the region exactly as big as checked: ASan sees any read past it */
	if (check_size < n) {
		unsigned char *t = malloc(check_size ? check_size : 1);
		if (t == NULL)
			abort();
		memcpy(t, r, check_size);
		free(r);
		r = t;
	}
	rc = tk_session_check(r, check_size, why, sizeof(why));
	if (rc != TK_OK) {
		unsigned long long at;
		if ((rc != TK_EFORMAT && rc != TK_EVERSION) || sscanf(why, "byte %llu", &at) != 1 ||
		    (check_size > 0 && at >= check_size && at != 0))
			abort();
	} else {
		/* accepted: the pool part must work within its bounds */
		uint64_t pool_off, pool_size;
		tk_pool *p;
		uint32_t i, idx, nb;
		memcpy(&pool_off, r + 96, 8);
		memcpy(&pool_size, r + 104, 8);
		if (tk_pool_attach(&p, r + pool_off, (size_t)pool_size) != TK_OK)
			abort();
		nb = tk_pool_n_buffers(p);
		for (i = 0; i <= nb; i++) {
			if (tk_pool_take(p, &idx) != TK_OK)
				break;
			if (idx >= nb || tk_pool_buffer(p, idx) == NULL || tk_pool_desc_of(p, idx) == NULL)
				abort();
			memset(tk_pool_buffer(p, idx), 0xab, tk_pool_buffer_size(p));
			tk_pool_queue(p, idx, 3);
		}
		for (i = 0; i <= 2 * nb; i++) {
			if (tk_pool_dequeue(p, &idx) != TK_OK)
				break;
			if (idx >= nb)
				abort();
			tk_pool_give(p, idx);
		}
		tk_pool_destroy(p);
	}
	free(r);
	return 0;
}
