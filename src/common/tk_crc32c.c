/* SPDX-License-Identifier: MIT */
/*
 * tk_crc32c.c: CRC-32C over Intel's ISA-L (crc32_iscsi), which picks the fastest kernel the
 * CPU has (interleaved crc32 streams combined with carry-less multiplies): every .tb5 chunk
 * is checked on write and on read, so the CRC runs at the speed of memory, not at one
 * 8-byte crc32 instruction per three cycles.
 */
#include "common/tk_crc32c.h"

#include <isa-l/crc.h>
#include <limits.h>

uint32_t tk__crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	/* ISA-L's state is the bit-inverted CRC and its length an int. */
	crc = ~crc;
	while (len > 0) {
		int n = len > (size_t)INT_MAX ? INT_MAX : (int)len;
		crc = crc32_iscsi((unsigned char *)p, n, crc);
		p += n;
		len -= (size_t)n;
	}
	return ~crc;
}
