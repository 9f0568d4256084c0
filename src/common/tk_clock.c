/* SPDX-License-Identifier: MIT */
/*
 * The cycle clock: the time-stamp counter on x86 (what QNX's ClockCycles() reads), and
 * CLOCK_MONOTONIC_RAW nanoseconds on other machines. The rate is measured once against
 * CLOCK_MONOTONIC_RAW and cached.
 */
#include <stdatomic.h>
#include <time.h>

#include "tk_cycles.h"
#include "tracekit/common.h"

uint64_t tk_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tk_clock_cycles(void)
{
	return tk__cycles();
}

static _Atomic uint64_t cached_rate;

static uint64_t measure_rate(void)
{
	uint64_t ns0, ns1, c0, c1;
	struct timespec pause = { 0, 20 * 1000 * 1000 };

	if (!TK__CYCLES_ARE_TSC)
		return 1000000000u;
	ns0 = tk_clock_ns();
	c0 = tk__cycles();
	nanosleep(&pause, NULL);
	ns1 = tk_clock_ns();
	c1 = tk__cycles();
	if (ns1 <= ns0 || c1 <= c0)
		return 1000000000u;
	/* Round to 10 kHz: the measurement is not more precise than that. */
	return (uint64_t)((double)(c1 - c0) * 1e9 / (double)(ns1 - ns0) / 1e4 + 0.5) * 10000u;
}

uint64_t tk_clock_cycles_per_sec(void)
{
	uint64_t rate = atomic_load_explicit(&cached_rate, memory_order_relaxed);

	if (rate == 0) {
		rate = measure_rate();
		atomic_store_explicit(&cached_rate, rate, memory_order_relaxed);
	}
	return rate;
}
