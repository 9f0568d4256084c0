/* SPDX-License-Identifier: MIT */
/*
 * csv_convert.c: what tk_csv_import() and tk_csv_export() share: their messages (the first
 * error into tk_csv_convert.error, warnings to its callback), temporaries, TBRW failures and
 * the .kev header values they read.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "csv_internal.h"

void tk__csv_fail(struct tk__csv_msg *m, int code, const char *fmt, ...)
{
	va_list ap;
	if (m->code != 0)
		return; /* the first error is the one that says what went wrong */
	m->code = code < 0 ? code : TK_EIO;
	if (m->cv == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(m->cv->error, sizeof(m->cv->error), fmt, ap);
	va_end(ap);
}

void tk__csv_warn(struct tk__csv_msg *m, const char *fmt, ...)
{
	va_list ap;
	char buf[2048];
	if (m->cv == NULL || m->cv->warning_cb == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	m->cv->warning_cb(m->cv->user_data, buf);
}

void tk__csv_temp(struct tk__csv_msg *m, int slot, const char *path)
{
	if (m->cv != NULL && m->cv->temp_cb != NULL)
		m->cv->temp_cb(m->cv->user_data, slot, path);
}

int tk__csv_tbrw_fail(struct tk__csv_msg *m, const char *what, TBRW_U32 rc)
{
	const char *d = tk_tbrw_error_detail();
	const TBRW_CHAR *s = NULL;
	TBRW_error_string(rc, &s);
	int code = rc == TBRW_FILE_NOT_FOUND ? TK_ENOENT : TK_EIO;
	if (d && *d)
		tk__csv_fail(m, code, "%s: %s", what, d);
	else
		tk__csv_fail(m, code, "%s: %ls", what, s ? s : L"error");
	return -1;
}

char *tk__csv_header_value(struct traceparser_state *st, const char *key)
{
	unsigned len;
	const char *v = tk_traceparser_header_value(st, key, &len);
	if (v == NULL)
		return NULL;
	while (len > 0 && (v[len - 1] == '\n' || v[len - 1] == 0 || v[len - 1] == ' '))
		len--;
	char *c = malloc(len + 1);
	if (c) {
		memcpy(c, v, len);
		c[len] = 0;
	}
	return c;
}

time_t tk__csv_parse_ctime(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	if (s == NULL || strptime(s, "%a %b %d %H:%M:%S %Y", &tm) == NULL)
		return 0;
	tm.tm_isdst = -1;
	return mktime(&tm);
}

wchar_t *tk__csv_wide(const char *s)
{
	TBRW_U32 n = 0;
	if (TBRW_convert_utf8_to_wcs(s, NULL, &n) != TBRW_BUFFER_TOO_SMALL && n == 0)
		return NULL;
	wchar_t *w = malloc(n * sizeof(wchar_t));
	if (w && TBRW_convert_utf8_to_wcs(s, w, &n) != VT_SUCCESS) {
		free(w);
		return NULL;
	}
	return w;
}
