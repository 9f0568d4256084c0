/* SPDX-License-Identifier: MIT */
/*
 * tk_crc32c.h: CRC-32C (Castagnoli, the iSCSI/ext4 polynomial 0x1EDC6F41, reflected), used
 * to check every chunk of a .tb5 file; computed by ISA-L (check value of "123456789":
 * 0xE3069283).
 */
#ifndef TK_CRC32C_H
#define TK_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: start with crc = 0; tk_crc32c(tk_crc32c(0, a, n), b, m) equals the CRC of
 * a followed by b. */
uint32_t tk__crc32c(uint32_t crc, const void *buf, size_t len);

#endif
