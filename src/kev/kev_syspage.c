/* SPDX-License-Identifier: MIT */
/*
 * tracekit's minimal syspage: enough of the QNX 6.x `struct syspage_entry` (32-bit
 * layout) for readers that look into it: the section table, one cpuinfo entry per CPU,
 * a strings section with the CPU name, and a qtime section with cycles_per_sec and
 * boot_time. Everything else is zero.
 *
 *   0    syspage_entry   156 bytes: u16 size, total_size, type, num_cpu; 15 x {u16 off,
 *                        u16 size} (system_private, asinfo, meminfo, hwinfo, cpuinfo,
 *                        cacheattr, qtime, callout, callin, typed_strings, strings,
 *                        intrinfo, smp, pminfo, mdriver); 2 spare words; 80-byte union
 *   156  cpuinfo_entry   32 bytes per CPU: u32 cpu, speed (MHz), flags; u32 spare[4];
 *                        u16 name (offset in strings); u8 ins_cache, data_cache
 *   ...  qtime_entry     96 bytes, 8-aligned: u64 cycles_per_sec, nsec_tod_adjust, nsec;
 *                        u32 nsec_inc, boot_time; ...
 *   ...  strings         NUL-terminated names, padded to 4 bytes
 */
#include <string.h>
#include <sys/utsname.h>

#include "common/tk_bytes.h"
#include "tracekit/kev.h"

#define SP_HEADER_SIZE 156u
#define SP_CPUINFO_SIZE 32u
#define SP_QTIME_SIZE 96u
#define SP_STRINGS_SIZE 32u

/* Section indexes in the table that follows the first four u16 fields. */
enum { SP_CPUINFO = 4, SP_QTIME = 6, SP_STRINGS = 10 };

enum { SYSPAGE_X86 = 0, SYSPAGE_PPC = 1, SYSPAGE_MIPS = 2, SYSPAGE_ARM = 4 };

static unsigned host_syspage_type(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return SYSPAGE_X86;
#elif defined(__aarch64__) || defined(__arm__)
	return SYSPAGE_ARM;
#elif defined(__powerpc__) || defined(__powerpc64__)
	return SYSPAGE_PPC;
#elif defined(__mips__)
	return SYSPAGE_MIPS;
#else
	return SYSPAGE_X86;
#endif
}

static size_t cpuinfo_end(unsigned cpu_num)
{
	return SP_HEADER_SIZE + (size_t)cpu_num * SP_CPUINFO_SIZE;
}

static size_t qtime_off(unsigned cpu_num)
{
	return (cpuinfo_end(cpu_num) + 7) & ~(size_t)7;
}

size_t tk_kev_syspage_size(unsigned cpu_num)
{
	if (cpu_num == 0)
		cpu_num = 1;
	if (cpu_num > 64)
		cpu_num = 64;
	return qtime_off(cpu_num) + SP_QTIME_SIZE + SP_STRINGS_SIZE;
}

static void put16(unsigned char *p, uint16_t v, int be)
{
	tk__store16(p, tk__cs16(be != TK__HOST_BIG_ENDIAN, v));
}

static void put32(unsigned char *p, uint32_t v, int be)
{
	tk__store32(p, tk__cs32(be != TK__HOST_BIG_ENDIAN, v));
}

static void put64(unsigned char *p, uint64_t v, int be)
{
	tk__store64(p, tk__cs64(be != TK__HOST_BIG_ENDIAN, v));
}

size_t tk_kev_syspage_build(void *buf, size_t cap, unsigned cpu_num, uint64_t cycles_per_sec,
			    uint32_t boot_time, int big_endian)
{
	unsigned char *p = buf;
	size_t size, qoff, soff, i;
	struct utsname uts;
	const char *name = "unknown";

	if (cpu_num == 0)
		cpu_num = 1;
	if (cpu_num > 64)
		cpu_num = 64;
	size = tk_kev_syspage_size(cpu_num);
	if (buf == NULL || cap < size)
		return 0;
	memset(p, 0, size);
	qoff = qtime_off(cpu_num);
	soff = qoff + SP_QTIME_SIZE;

	put16(p + 0, SP_HEADER_SIZE, big_endian);
	put16(p + 2, (uint16_t)size, big_endian);
	put16(p + 4, (uint16_t)host_syspage_type(), big_endian);
	put16(p + 6, (uint16_t)cpu_num, big_endian);
	put16(p + 8 + 4 * SP_CPUINFO, SP_HEADER_SIZE, big_endian);
	put16(p + 8 + 4 * SP_CPUINFO + 2, (uint16_t)(cpu_num * SP_CPUINFO_SIZE), big_endian);
	put16(p + 8 + 4 * SP_QTIME, (uint16_t)qoff, big_endian);
	put16(p + 8 + 4 * SP_QTIME + 2, SP_QTIME_SIZE, big_endian);
	put16(p + 8 + 4 * SP_STRINGS, (uint16_t)soff, big_endian);
	put16(p + 8 + 4 * SP_STRINGS + 2, SP_STRINGS_SIZE, big_endian);

	for (i = 0; i < cpu_num; i++) {
		unsigned char *c = p + SP_HEADER_SIZE + i * SP_CPUINFO_SIZE;
		put32(c + 0, 0, big_endian);
		put32(c + 4, (uint32_t)(cycles_per_sec / 1000000u), big_endian);
		put32(c + 8, 0xC0000000u, big_endian); /* CPU_FLAG_FPU | CPU_FLAG_MMU */
		put16(c + 28, 0, big_endian);          /* name: offset 0 in strings */
		c[30] = 0xff;                          /* no cache description */
		c[31] = 0xff;
	}
	put64(p + qoff, cycles_per_sec, big_endian);
	put32(p + qoff + 28, boot_time, big_endian);

	if (uname(&uts) == 0 && uts.machine[0] != '\0')
		name = uts.machine;
	{
		size_t n = strnlen(name, SP_STRINGS_SIZE - 1);
		memcpy(p + soff, name, n); /* NUL already there: the buffer is zeroed */
	}
	return size;
}
