/* SPDX-License-Identifier: MIT */
/*
 * Private: byte-order conversion and unaligned loads/stores for the file-format modules.
 * memcpy-based accessors compile to single moves and are free of alignment UB.
 */
#ifndef TK_BYTES_H
#define TK_BYTES_H

#include <stdint.h>
#include <string.h>

#define TK__HOST_BIG_ENDIAN (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

static inline uint16_t tk__bswap16(uint16_t v)
{
	return __builtin_bswap16(v);
}
static inline uint32_t tk__bswap32(uint32_t v)
{
	return __builtin_bswap32(v);
}
static inline uint64_t tk__bswap64(uint64_t v)
{
	return __builtin_bswap64(v);
}

static inline uint16_t tk__load16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}
static inline uint32_t tk__load32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}
static inline uint64_t tk__load64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}
static inline void tk__store16(void *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}
static inline void tk__store32(void *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}
static inline void tk__store64(void *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* Little-endian accessors. */
static inline uint16_t tk__le16(const void *p)
{
	uint16_t v = tk__load16(p);
	return TK__HOST_BIG_ENDIAN ? tk__bswap16(v) : v;
}
static inline uint32_t tk__le32(const void *p)
{
	uint32_t v = tk__load32(p);
	return TK__HOST_BIG_ENDIAN ? tk__bswap32(v) : v;
}
static inline uint64_t tk__le64(const void *p)
{
	uint64_t v = tk__load64(p);
	return TK__HOST_BIG_ENDIAN ? tk__bswap64(v) : v;
}
static inline void tk__put_le16(void *p, uint16_t v)
{
	tk__store16(p, TK__HOST_BIG_ENDIAN ? tk__bswap16(v) : v);
}
static inline void tk__put_le32(void *p, uint32_t v)
{
	tk__store32(p, TK__HOST_BIG_ENDIAN ? tk__bswap32(v) : v);
}
static inline void tk__put_le64(void *p, uint64_t v)
{
	tk__store64(p, TK__HOST_BIG_ENDIAN ? tk__bswap64(v) : v);
}

/* Conditional swaps: `swap` is 1 when the data's byte order differs from the host's. */
static inline uint16_t tk__cs16(int swap, uint16_t v)
{
	return swap ? tk__bswap16(v) : v;
}
static inline uint32_t tk__cs32(int swap, uint32_t v)
{
	return swap ? tk__bswap32(v) : v;
}
static inline uint64_t tk__cs64(int swap, uint64_t v)
{
	return swap ? tk__bswap64(v) : v;
}

#endif /* TK_BYTES_H */
