/* SPDX-License-Identifier: MIT */
/*
 * Private: UTF-8 helpers shared by the modules (decoding event strings, converting names).
 * Strict RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF.
 */
#ifndef TK_UTF8_H
#define TK_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the code point at s[0..n). Returns the bytes it takes (1-4) and stores it in
 * *cp, or 0 for an invalid or incomplete sequence (n == 0 included).
 */
static inline size_t tk__utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c, min;
	size_t len, i;

	if (n == 0)
		return 0;
	c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0) {
		len = 2;
		c &= 0x1f;
		min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3;
		c &= 0x0f;
		min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3fu);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* 1 if s[0..n) is entirely valid UTF-8 (ASCII fast path). */
static inline int tk__utf8_valid(const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i = 0;

	while (i < n) {
		uint32_t cp;
		size_t k;
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		k = tk__utf8_decode(s + i, n - i, &cp);
		if (k == 0)
			return 0;
		i += k;
	}
	return 1;
}

/* The bytes s[0..n) read as Latin-1, as UTF-8: how many bytes (n plus one a byte from 0x80). */
static inline size_t tk__latin1_utf8_len(const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t m = n;
	for (size_t i = 0; i < n; i++)
		m += s[i] >= 0x80;
	return m;
}

/* Writes s[0..n) read as Latin-1 as UTF-8 into out (room: tk__latin1_utf8_len(), at most
 * 2n): how the exports show names that are not UTF-8. Returns the end of what it wrote. */
static inline unsigned char *tk__latin1_to_utf8(unsigned char *out, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < 0x80) {
			*out++ = s[i];
		} else {
			*out++ = (unsigned char)(0xc0 | s[i] >> 6);
			*out++ = (unsigned char)(0x80 | (s[i] & 0x3f));
		}
	}
	return out;
}

/* Writes cp as UTF-8 into out (room for 4 bytes); returns the bytes written, 0 if invalid. */
static inline size_t tk__utf8_encode(uint32_t cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp >= 0xd800 && cp <= 0xdfff)
		return 0;
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp > 0x10ffff)
		return 0;
	out[0] = (unsigned char)(0xf0 | (cp >> 18));
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

#endif /* TK_UTF8_H */
