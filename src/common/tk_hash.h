/* SPDX-License-Identifier: MIT */
/*
 * tk_hash.h: private, header only: the open-addressing hash tables of tracekit, in one place.
 * Every table probes linearly in a power-of-two array kept at most half full, so a lookup
 * touches one or two cache lines. What they share: the hash functions (FNV-1a for bytes,
 * Fibonacci multiplication for integers), the first slot and the next one, the capacity for
 * a number of entries, and one ready-made table, a u64 -> u64 map.
 */
#ifndef TK_HASH_H
#define TK_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a, 64 bits, of n bytes. */
static inline uint64_t tk__hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t x = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		x = (x ^ s[i]) * 1099511628211ull;
	return x;
}

/* The first slot of a 32-bit key (Fibonacci hashing; mask = capacity - 1). */
static inline size_t tk__hash_u32(uint32_t key, size_t mask)
{
	return (size_t)((key * 0x9E3779B1u) >> 7) & mask;
}

/* The first slot of a 64-bit key. */
static inline size_t tk__hash_u64(uint64_t key, size_t mask)
{
	return (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & mask;
}

/* The slot probed after k. */
static inline size_t tk__hash_next(size_t k, size_t mask)
{
	return (k + 1) & mask;
}

/* The capacity (a power of two, at least min) that holds n entries at most half full. */
static inline size_t tk__hash_cap(size_t n, size_t min)
{
	size_t cap = min;

	while (cap / 2 < n)
		cap *= 2;
	return cap;
}

/* A map from u64 keys to u64 values; UINT64_MAX is no value. Zero-initialise it. */
struct tk__u64map {
	uint64_t *keys;
	uint64_t *vals;
	size_t cap;
};

/* The value of key, or UINT64_MAX; *slot is where key is or would go. */
static inline uint64_t tk__u64map_find(const struct tk__u64map *m, uint64_t key, size_t *slot)
{
	size_t k;

	if (m->cap == 0) {
		*slot = 0;
		return UINT64_MAX;
	}
	k = tk__hash_u64(key, m->cap - 1);
	while (m->vals[k] != UINT64_MAX && m->keys[k] != key)
		k = tk__hash_next(k, m->cap - 1);
	*slot = k;
	return m->vals[k];
}

/* Puts key -> val at the slot tk__u64map_find gave (no reserve in between). */
static inline void tk__u64map_put(struct tk__u64map *m, size_t slot, uint64_t key, uint64_t val)
{
	m->keys[slot] = key;
	m->vals[slot] = val;
}

/* Makes room for n entries (slots found before are then stale); 0, or -1 out of memory. */
static inline int tk__u64map_reserve(struct tk__u64map *m, size_t n, size_t min_cap)
{
	size_t ncap = tk__hash_cap(n + 1, m->cap ? m->cap : min_cap);
	uint64_t *nk, *nv;

	if (ncap == m->cap)
		return 0;
	nk = malloc(ncap * sizeof *nk);
	nv = malloc(ncap * sizeof *nv);
	if (nk == NULL || nv == NULL) {
		free(nk);
		free(nv);
		return -1;
	}
	memset(nv, 0xFF, ncap * sizeof *nv);
	for (size_t i = 0; i < m->cap; i++) {
		if (m->vals[i] == UINT64_MAX)
			continue;
		size_t j = tk__hash_u64(m->keys[i], ncap - 1);
		while (nv[j] != UINT64_MAX)
			j = tk__hash_next(j, ncap - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

static inline void tk__u64map_free(struct tk__u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = 0;
}

#endif
