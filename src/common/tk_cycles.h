/* SPDX-License-Identifier: MIT */
/*
 * Private: the raw cycle-counter read, inlined by the library's own hot paths.
 * One per-platform section, so no other file needs an architecture #ifdef.
 */
#ifndef TK_CYCLES_H
#define TK_CYCLES_H

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TK__CYCLES_ARE_TSC 1
static inline uint64_t tk__cycles(void)
{
	return __rdtsc();
}
#else
#include <time.h>
#define TK__CYCLES_ARE_TSC 0
static inline uint64_t tk__cycles(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

/* tk_clock.c: a (cycles, CLOCK_MONOTONIC_RAW ns) pair read at one instant. */
void tk__clock_pair(uint64_t *cycles, uint64_t *ns);

#endif /* TK_CYCLES_H */
