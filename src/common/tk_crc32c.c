/* SPDX-License-Identifier: MIT */
/*
 * tk_crc32c.c: CRC-32C with the SSE4.2 crc32 instruction (three interleaved streams are not
 * needed at the rates .tb5 reading reaches; one 8-byte stream runs near 8 bytes/cycle/3) and a
 * byte-table fallback for CPUs without it.
 */
#include "common/tk_crc32c.h"

#include <pthread.h>
#include <string.h>

#define CRC32C_POLY_REFLECTED 0x82F63B78u

static uint32_t crc_table[256];

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1u) ? CRC32C_POLY_REFLECTED : 0u);
		crc_table[i] = c;
	}
}

static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t len)
{
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TK_CRC_HW 1
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t len)
{
	uint64_t c = crc;

	while (len > 0 && ((uintptr_t)p & 7u) != 0) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 32) {
		uint64_t a, b, d, e;
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		memcpy(&d, p + 16, 8);
		memcpy(&e, p + 24, 8);
		c = __builtin_ia32_crc32di(c, a);
		c = __builtin_ia32_crc32di(c, b);
		c = __builtin_ia32_crc32di(c, d);
		c = __builtin_ia32_crc32di(c, e);
		p += 32;
		len -= 32;
	}
	while (len >= 8) {
		uint64_t a;
		memcpy(&a, p, 8);
		c = __builtin_ia32_crc32di(c, a);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

/* 1: table, 2: SSE4.2; decided once. */
static int crc_impl;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_choose(void)
{
	crc_impl = 1;
#ifdef TK_CRC_HW
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2"))
		crc_impl = 2;
#endif
	if (crc_impl == 1)
		table_init();
}

uint32_t tk__crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_once, crc_choose);
	crc = ~crc;
#ifdef TK_CRC_HW
	if (crc_impl == 2)
		return ~crc_hw(crc, buf, len);
#endif
	return ~crc_sw(crc, buf, len);
}
