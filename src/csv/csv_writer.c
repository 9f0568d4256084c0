/* SPDX-License-Identifier: MIT */
/*
 * csv: the writer. Rows are formatted into a block of our own and handed to the output file
 * (tk_outfile: a temporary renamed on commit) a block at a time.
 */
#include <inttypes.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv/csv_internal.h"

#define WBLOCK (1u << 20)

struct tk_csv_writer {
	tk_outfile *of;
	FILE *f;
	tk_csv_kind kind;
	tk_csv_clock clock;
	unsigned columns;
	size_t n_counters;
	char *buf;
	size_t len;
	uint64_t bytes;
	int err;
};

static int flush_block(tk_csv_writer *w)
{
	if (w->len > 0 && !w->err && fwrite(w->buf, 1, w->len, w->f) != w->len)
		w->err = errno != 0 ? tk_error_from_errno(errno) : TK_EIO; /* ENOSPC, EFBIG, ... kept */
	w->bytes += w->len;
	w->len = 0;
	return w->err;
}

/* Makes room for n bytes (n <= WBLOCK / 2 unless the block is empty). */
static char *room(tk_csv_writer *w, size_t n)
{
	if (w->len + n > WBLOCK) {
		flush_block(w);
		if (n > WBLOCK) {
			char *nb = realloc(w->buf, n);
			if (nb == NULL)
				return NULL;
			w->buf = nb;
		}
	}
	return w->buf + w->len;
}

/* A field, quoted when it holds a comma, a quote, a CR or LF (RFC 4180). */
static int put_text(tk_csv_writer *w, const char *s, size_t n)
{
	int quote = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r') {
			quote = 1;
			break;
		}
	char *p = room(w, 2 * n + 2);
	if (p == NULL)
		return w->err = TK_ENOMEM;
	if (!quote) {
		memcpy(p, s, n);
		w->len += n;
		return 0;
	}
	char *o = p;
	if (quote)
		*o++ = '"';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' && quote)
			*o++ = '"';
		*o++ = s[i];
	}
	if (quote)
		*o++ = '"';
	w->len += (size_t)(o - p);
	return 0;
}

static void put_raw(tk_csv_writer *w, const char *s)
{
	put_text(w, s, strlen(s));
}

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				      "8081828384858687888990919293949596979899";

/* Decimal digits, two at a time from the end (timestamps have 10-20 digits). */
static char *put_u64(char *o, uint64_t v)
{
	int n = 1;
	for (uint64_t x = v; x >= 10; x /= 10)
		n++;
	char *e = o + n, *p = e;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		p -= 2;
		p[0] = digit_pairs[2 * r];
		p[1] = digit_pairs[2 * r + 1];
	}
	if (v >= 10) {
		p -= 2;
		p[0] = digit_pairs[2 * v];
		p[1] = digit_pairs[2 * v + 1];
	} else {
		*--p = (char)('0' + v);
	}
	return e;
}

static char *put_time(tk_csv_writer *w, char *o, uint64_t t)
{
	if (w->clock != TK_CSV_UTC)
		return put_u64(o, t);
	return o + tk_csv_format_time(o, 40, TK_CSV_UTC, t);
}

static char *put_ids(tk_csv_writer *w, char *o, unsigned flags, uint32_t pid, uint32_t tid)
{
	if (w->columns & TK_CSV_HAS_PID) {
		*o++ = ',';
		if (flags & TK_CSV_HAS_PID)
			o = put_u64(o, pid);
	}
	if (w->columns & TK_CSV_HAS_TID) {
		*o++ = ',';
		if (flags & TK_CSV_HAS_TID)
			o = put_u64(o, tid);
	}
	*o++ = '\n';
	return o;
}

int tk_csv_writer_open(tk_csv_writer **out, const char *path, tk_csv_kind kind, tk_csv_clock clock,
		       unsigned columns, const tk_csv_counter *counters, size_t n_counters)
{
	if (out == NULL || path == NULL || tk_csv_clock_name(clock) == NULL ||
	    (kind != TK_CSV_INTERVALS && kind != TK_CSV_COUNTERS) || (kind == TK_CSV_COUNTERS && n_counters == 0))
		return TK_EINVAL;
	*out = NULL;
	tk_csv_writer *w = calloc(1, sizeof(*w));
	if (w == NULL || (w->buf = malloc(WBLOCK)) == NULL) {
		free(w);
		return TK_ENOMEM;
	}
	w->kind = kind;
	w->clock = clock;
	w->columns = columns & (TK_CSV_HAS_PID | TK_CSV_HAS_TID);
	w->n_counters = n_counters;
	int rc = tk_outfile_open(&w->of, path, 0);
	if (rc) {
		free(w->buf);
		free(w);
		return rc;
	}
	w->f = tk_outfile_stream(w->of);
	char head[64];
	if (kind == TK_CSV_INTERVALS) {
		snprintf(head, sizeof(head), "name,start_tsc.%s,end_tsc", tk_csv_clock_name(clock));
		memcpy(room(w, strlen(head)), head, strlen(head));
		w->len += strlen(head);
	} else {
		snprintf(head, sizeof(head), "tsc.%s", tk_csv_clock_name(clock));
		memcpy(room(w, strlen(head)), head, strlen(head));
		w->len += strlen(head);
		for (size_t i = 0; i < n_counters; i++) {
			size_t n = strlen(counters[i].name);
			char *col = malloc(n + 8);
			if (col == NULL) {
				tk_csv_writer_abort(w);
				return TK_ENOMEM;
			}
			sprintf(col, "%s%s", counters[i].name, counters[i].inst ? ".INST" : ".COUNT");
			*room(w, 1) = ',';
			w->len++;
			put_raw(w, col);
			free(col);
		}
	}
	if (w->columns & TK_CSV_HAS_PID)
		memcpy(room(w, 4), ",pid", 4), w->len += 4;
	if (w->columns & TK_CSV_HAS_TID)
		memcpy(room(w, 4), ",tid", 4), w->len += 4;
	*room(w, 1) = '\n';
	w->len++;
	*out = w;
	return 0;
}

int tk_csv_write_interval(tk_csv_writer *w, const char *name, size_t name_len, uint64_t start, uint64_t end,
			  unsigned flags, uint32_t pid, uint32_t tid)
{
	if (w == NULL || name == NULL || w->kind != TK_CSV_INTERVALS)
		return TK_EINVAL;
	if (w->err)
		return w->err;
	if (put_text(w, name, name_len))
		return w->err;
	char *o = room(w, 160);
	if (o == NULL)
		return w->err = TK_ENOMEM;
	char *p = o;
	*p++ = ',';
	p = put_time(w, p, start);
	*p++ = ',';
	p = put_time(w, p, end);
	p = put_ids(w, p, flags, pid, tid);
	w->len += (size_t)(p - o);
	return w->err;
}

int tk_csv_write_counters(tk_csv_writer *w, uint64_t time, const tk_csv_value *values, unsigned flags,
			  uint32_t pid, uint32_t tid)
{
	if (w == NULL || values == NULL || w->kind != TK_CSV_COUNTERS)
		return TK_EINVAL;
	if (w->err)
		return w->err;
	/* whatever is written reads back: NaN and infinities have no CSV text */
	for (size_t i = 0; i < w->n_counters; i++)
		if (values[i].present && values[i].is_float && !isfinite(values[i].d))
			return TK_EINVAL;
	char *o = room(w, 120 + 48 * w->n_counters);
	if (o == NULL)
		return w->err = TK_ENOMEM;
	char *p = put_time(w, o, time);
	for (size_t i = 0; i < w->n_counters; i++) {
		*p++ = ',';
		p += tk_csv_format_value(p, 48, &values[i]);
	}
	p = put_ids(w, p, flags, pid, tid);
	w->len += (size_t)(p - o);
	return w->err;
}

const char *tk_csv_writer_temp_path(const tk_csv_writer *w)
{
	return w ? tk_outfile_temp_path(w->of) : "";
}

uint64_t tk_csv_writer_bytes(const tk_csv_writer *w)
{
	return w->bytes + w->len;
}

int tk_csv_writer_close(tk_csv_writer *w)
{
	if (w == NULL)
		return TK_EINVAL;
	int rc = flush_block(w);
	if (rc) {
		tk_outfile_abort(w->of);
	} else {
		rc = tk_outfile_commit(w->of);
	}
	free(w->buf);
	free(w);
	return rc;
}

void tk_csv_writer_abort(tk_csv_writer *w)
{
	if (w == NULL)
		return;
	tk_outfile_abort(w->of);
	free(w->buf);
	free(w);
}
