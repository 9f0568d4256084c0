/* SPDX-License-Identifier: MIT */
/*
 * tb5_text.c: the TBRW API's text: error strings, the thread-local error detail that says
 * what failed and where, and UTF-8 <-> wchar_t conversion (strings are stored as UTF-8 in
 * .tb5 files and handed to callers as wchar_t, seed 9.4).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tb5/tb5_internal.h"

static _Thread_local char detail[512];

TBRW_U32 tk__tb5_fail(TBRW_U32 code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	return code;
}

TBRW_U32 tk__tb5_callback_error(TBRW_U32 code, const char *fn)
{
	return tk__tb5_fail(code, "%s: the callback returned %u (neither TRUE nor FALSE): stopped, and %u is returned", fn,
			code, code);
}

void tk__tb5_detail_clear(void)
{
	detail[0] = '\0';
}

const char *tk_tbrw_error_detail(void)
{
	return detail;
}

TBRW_U32 tk__tb5_errno_code(int err)
{
	switch (err) {
	case ENOENT:
	case ENOTDIR:
		return TBRW_FILE_NOT_FOUND;
	case EACCES:
	case EPERM:
	case EROFS:
		return TBRW_ACCESS_DENIED;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return TBRW_DISK_FULL;
	case ENOMEM:
		return TBRW_NO_MEMORY;
	default:
		return TBRW_IO_ERROR;
	}
}

static const TBRW_CHAR *const error_text[] = {
	[VT_SUCCESS] = L"success",
	[TBRW_INVALID_PARAMETER] = L"invalid parameter",
	[TBRW_NO_MEMORY] = L"out of memory",
	[TBRW_BUFFER_TOO_SMALL] = L"buffer too small",
	[TBRW_FILE_NOT_FOUND] = L"file not found",
	[TBRW_ACCESS_DENIED] = L"access denied",
	[TBRW_IO_ERROR] = L"input/output error",
	[TBRW_DISK_FULL] = L"disk full",
	[TBRW_NOT_A_TB5_FILE] = L"not a tb5 file",
	[TBRW_UNSUPPORTED_VERSION] = L"unsupported tb5 format version",
	[TBRW_FILE_TRUNCATED] = L"file is truncated",
	[TBRW_FILE_CORRUPT] = L"file is corrupt",
	[TBRW_SECTION_EXISTS] = L"section already exists",
	[TBRW_SECTION_NOT_FOUND] = L"section not found",
	[TBRW_STREAM_NOT_FOUND] = L"data stream not found",
	[TBRW_INVALID_SECTION] = L"invalid section identifier",
	[TBRW_INVALID_STREAM] = L"stream number out of range",
	[TBRW_CALL_OUT_OF_ORDER] = L"call made out of order",
	[TBRW_SECTION_BUSY] = L"section or stream is already in use",
	[TBRW_READ_ONLY] = L"file is not open for writing",
	[TBRW_RECORD_SIZE_MISMATCH] = L"data entry size disagrees with the data descriptor",
	[TBRW_LEGACY_RECORD_IN_STREAM] = L"legacy sample records are only allowed in stream 0",
	[TBRW_VALIDATION_FAILED] = L"section validation failed",
	[TBRW_INVALID_STRING] = L"invalid string",
	[TBRW_INDEX_OUT_OF_RANGE] = L"index out of range",
	[TBRW_NOT_BOUND] = L"data stream is not bound",
	[TBRW_BIND_FAILED] = L"data stream cannot be bound",
	[TBRW_TOO_BIG] = L"size exceeds the format's limits",
};
_Static_assert(sizeof error_text / sizeof error_text[0] == TBRW_ERROR_LAST + 1, "one text per error code");

TBRW_U32 TBRW_error_string(TBRW_U32 error_code, const TBRW_CHAR **error_string)
{
	if (error_string == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_error_string: error_string is NULL");
	*error_string = error_code <= TBRW_ERROR_LAST ? error_text[error_code] : L"unknown error code";
	return VT_SUCCESS;
}

TBRW_U32 TBRW_get_version(TBRW_U32 *major, TBRW_U32 *minor)
{
	if (major == NULL || minor == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_version: NULL argument");
	*major = 2;
	*minor = 3;
	return VT_SUCCESS;
}

/* ---- UTF-8 ---------------------------------------------------------------------------- */

/* Bytes of one code point's UTF-8 form, 0 if it is not a valid scalar value. */
static size_t utf8_len(uint32_t c)
{
	if (c < 0x80)
		return 1;
	if (c < 0x800)
		return 2;
	if (c >= 0xD800 && c <= 0xDFFF)
		return 0;
	if (c < 0x10000)
		return 3;
	if (c <= 0x10FFFF)
		return 4;
	return 0;
}

static void utf8_put(unsigned char *p, uint32_t c, size_t n)
{
	switch (n) {
	case 1:
		p[0] = (unsigned char)c;
		break;
	case 2:
		p[0] = (unsigned char)(0xC0 | (c >> 6));
		p[1] = (unsigned char)(0x80 | (c & 0x3F));
		break;
	case 3:
		p[0] = (unsigned char)(0xE0 | (c >> 12));
		p[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
		p[2] = (unsigned char)(0x80 | (c & 0x3F));
		break;
	default:
		p[0] = (unsigned char)(0xF0 | (c >> 18));
		p[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
		p[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
		p[3] = (unsigned char)(0x80 | (c & 0x3F));
		break;
	}
}

/* Decodes one code point at p (n bytes left); returns its length, 0 if invalid. */
static size_t utf8_get(const unsigned char *p, size_t n, uint32_t *out)
{
	uint32_t c;
	size_t len, i;

	if (p[0] < 0x80) {
		*out = p[0];
		return 1;
	}
	if ((p[0] & 0xE0) == 0xC0) {
		len = 2;
		c = p[0] & 0x1Fu;
	} else if ((p[0] & 0xF0) == 0xE0) {
		len = 3;
		c = p[0] & 0x0Fu;
	} else if ((p[0] & 0xF8) == 0xF0) {
		len = 4;
		c = p[0] & 0x07u;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3Fu);
	}
	if (utf8_len(c) != len) /* overlong, surrogate or beyond U+10FFFF */
		return 0;
	*out = c;
	return len;
}

char *tk__tb5_wcs_to_utf8_alloc(const wchar_t *wcs, size_t *len)
{
	size_t n = 0, k;
	const wchar_t *w;
	unsigned char *out, *p;

	for (w = wcs; *w != 0; w++) {
		k = utf8_len((uint32_t)*w);
		if (k == 0)
			return NULL;
		n += k;
		if (n > TB5_MAX_STRING)
			return NULL;
	}
	out = malloc(n + 1);
	if (out == NULL)
		return NULL;
	for (p = out, w = wcs; *w != 0; w++) {
		k = utf8_len((uint32_t)*w);
		utf8_put(p, (uint32_t)*w, k);
		p += k;
	}
	*p = '\0';
	*len = n;
	return (char *)out;
}

size_t tk__tb5_utf8_to_wcs_n(const char *utf8, size_t len, wchar_t *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)utf8;
	size_t i = 0, n = 0, k;
	uint32_t c;

	while (i < len) {
		k = utf8_get(p + i, len - i, &c);
		if (k == 0 || c == 0)
			return 0;
		if (out != NULL && n + 1 < cap)
			out[n] = (wchar_t)c;
		n++;
		i += k;
	}
	if (out != NULL && cap > 0)
		out[n < cap ? n : cap - 1] = 0;
	return n + 1;
}

TBRW_U32 TBRW_convert_utf8_to_wcs(const char *utf8, wchar_t *wcs, TBRW_U32 *wcs_size)
{
	size_t need;

	if (utf8 == NULL || wcs_size == NULL || (wcs == NULL && *wcs_size != 0))
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_convert_utf8_to_wcs: NULL argument");
	need = tk__tb5_utf8_to_wcs_n(utf8, strlen(utf8), NULL, 0);
	if (need == 0)
		return tk__tb5_fail(TBRW_INVALID_STRING, "TBRW_convert_utf8_to_wcs: the input is not valid UTF-8");
	if (need > UINT32_MAX)
		return tk__tb5_fail(TBRW_TOO_BIG, "TBRW_convert_utf8_to_wcs: string too long");
	if (*wcs_size < need) {
		TBRW_U32 had = *wcs_size;
		*wcs_size = (TBRW_U32)need;
		return tk__tb5_fail(TBRW_BUFFER_TOO_SMALL, "TBRW_convert_utf8_to_wcs: %zu wide characters needed (with the "
						       "NUL), the buffer holds %u",
				need, had);
	}
	tk__tb5_utf8_to_wcs_n(utf8, strlen(utf8), wcs, *wcs_size);
	*wcs_size = (TBRW_U32)need;
	return VT_SUCCESS;
}

TBRW_U32 TBRW_convert_wcs_to_utf8(const wchar_t *wcs, char *utf8, TBRW_U32 *utf8_size)
{
	size_t len;
	char *s;

	if (wcs == NULL || utf8_size == NULL || (utf8 == NULL && *utf8_size != 0))
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_convert_wcs_to_utf8: NULL argument");
	s = tk__tb5_wcs_to_utf8_alloc(wcs, &len);
	if (s == NULL)
		return tk__tb5_fail(TBRW_INVALID_STRING, "TBRW_convert_wcs_to_utf8: invalid code point or string too long");
	if (*utf8_size < len + 1) {
		TBRW_U32 had = *utf8_size;
		*utf8_size = (TBRW_U32)(len + 1);
		free(s);
		return tk__tb5_fail(TBRW_BUFFER_TOO_SMALL, "TBRW_convert_wcs_to_utf8: %zu bytes needed (with the NUL), the "
						       "buffer holds %u",
				len + 1, had);
	}
	memcpy(utf8, s, len + 1);
	*utf8_size = (TBRW_U32)(len + 1);
	free(s);
	return VT_SUCCESS;
}
