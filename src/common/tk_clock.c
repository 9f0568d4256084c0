/* SPDX-License-Identifier: MIT */
/*
 * The cycle clock: the time-stamp counter on x86 (what QNX's ClockCycles() reads), and
 * CLOCK_MONOTONIC_RAW nanoseconds on other machines.
 *
 * Its rate is found without ever blocking the program (a traced process must not pay a
 * calibration at start): the kernel's own TSC conversion where it publishes one (the
 * perf_event_open() mmap page: cap_user_time, time_mult, time_shift), else the machine's
 * stated rate (CPUID's TSC or base frequency, the hypervisor's TSC leaf, /proc/cpuinfo).
 * A .kev writer replaces it when its file is completed by the rate measured against
 * CLOCK_MONOTONIC_RAW between a (cycles, ns) pair read at the start and one at the end
 * (kev_writer.c; docs/kev-format.md, "One time line").
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tk_cycles.h"
#include "tracekit/common.h"

#if TK__CYCLES_ARE_TSC
#include <cpuid.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#endif

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

void tk__clock_pair(uint64_t *cycles, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	int i;

	/* The cycle count read between two clock readings, from the try with the closest
	 * readings (an interrupt between them would shift the pair). */
	for (i = 0; i < 5; i++) {
		uint64_t a = tk_clock_ns(), c = tk__cycles(), b = tk_clock_ns();
		if (b - a < best) {
			best = b - a;
			*cycles = c;
			*ns = a + (b - a) / 2;
		}
	}
}

#if TK__CYCLES_ARE_TSC
/* The kernel's own conversion, where it publishes one: ns = cycles * mult >> shift. */
static uint64_t rate_from_perf(void)
{
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t rate = 0;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	pg = mmap(NULL, (size_t)(page > 0 ? page : 4096), PROT_READ, MAP_SHARED, fd, 0);
	if (pg != MAP_FAILED) {
		uint32_t seq;
		uint16_t shift;
		uint32_t mult;
		int cap;
		do {
			seq = pg->lock;
			atomic_thread_fence(memory_order_acquire);
			cap = pg->cap_user_time;
			mult = pg->time_mult;
			shift = pg->time_shift;
			atomic_thread_fence(memory_order_acquire);
		} while (pg->lock != seq);
		if (cap && mult != 0 && shift < 64)
			rate = (uint64_t)((long double)1e9 * (long double)((uint64_t)1 << shift) / mult + 0.5L);
		munmap(pg, (size_t)(page > 0 ? page : 4096));
	}
	close(fd);
	return rate;
}

/* What the machine says the TSC rate is, without measuring; 0 if it says nothing. */
static uint64_t rate_estimate(void)
{
	unsigned max = __get_cpuid_max(0, NULL), a, b, c, d;
	char buf[4096];
	FILE *f;

	if (max >= 0x15) {
		__cpuid(0x15, a, b, c, d);
		if (a != 0 && b != 0 && c != 0)
			return (uint64_t)c * b / a; /* crystal Hz * TSC/crystal ratio */
	}
	if (max >= 0x16) {
		__cpuid(0x16, a, b, c, d);
		if ((a & 0xffff) != 0)
			return (uint64_t)(a & 0xffff) * 1000000u; /* base frequency, MHz */
	}
	__cpuid(0x40000000, a, b, c, d);
	if (a >= 0x40000010 && a < 0x40010000) {
		__cpuid(0x40000010, a, b, c, d); /* hypervisor timing leaf: TSC kHz */
		if (a != 0)
			return (uint64_t)a * 1000u;
	}
	f = fopen("/proc/cpuinfo", "r");
	if (f != NULL) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		const char *p;
		fclose(f);
		buf[n] = '\0';
		p = strstr(buf, "cpu MHz");
		if (p != NULL && (p = strchr(p, ':')) != NULL) {
			double mhz = strtod(p + 1, NULL);
			if (mhz > 1.0 && mhz < 1e6)
				return (uint64_t)(mhz * 1e6 + 0.5);
		}
	}
	return 0;
}
#endif

static _Atomic uint64_t cached_rate;

static void find_rate(void)
{
	uint64_t rate = 1000000000u;

#if TK__CYCLES_ARE_TSC
	rate = rate_from_perf();
	if (rate == 0) {
		rate = rate_estimate();
		if (rate == 0)
			rate = 1000000000u; /* corrected when a file is completed */
	}
#endif
	atomic_store_explicit(&cached_rate, rate, memory_order_release);
}

uint64_t tk_clock_cycles_per_sec(void)
{
	uint64_t rate = atomic_load_explicit(&cached_rate, memory_order_acquire);

	if (rate == 0) {
		find_rate();
		rate = atomic_load_explicit(&cached_rate, memory_order_acquire);
	}
	return rate;
}
