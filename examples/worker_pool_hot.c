/* SPDX-License-Identifier: MIT */
/*
 * The hot code of worker_pool, compiled with -finstrument-functions: every call of these
 * functions becomes SYSTEM FUNC_ENTER / FUNC_EXIT events while the SYSTEM class is traced.
 */
#include <stddef.h>
#include <stdint.h>

#include "worker_pool.h"

/* 64-bit FNV-1a over a block. */
static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Fills a block with a xorshift sequence seeded by the item number. */
static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

uint64_t wp_process_item(unsigned item, unsigned char *scratch, size_t size)
{
	fill(scratch, size, item);
	return fnv1a(scratch, size);
}
