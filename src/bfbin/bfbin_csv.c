/* SPDX-License-Identifier: MIT */
/*
 * .byfl to CSV, as Byfl's bfbin2csv writes it.
 *
 * Normal layout, per table: the quoted table name, a line of quoted column names, one line
 * per row; a blank line before every table but the first when more than one of {names,
 * columns, data} is shown. Flat layout: one line per value, "Table",row,"Column",value,
 * rows counted from 1 in each table. Strings are always quoted ("" for a quote), with '='
 * before a leading '-' so spreadsheets do not take "-x" for a formula.
 */
#include <stdlib.h>
#include <string.h>

#include "bfbin/bfbin_internal.h"

struct csv_state {
	struct tk__bfconv base; /* first: the parser's user_data */
	FILE *out;
	tk_bfbin_csv_options o;
	const char *sep;
	size_t sep_len;
	int show_tables, show_columns, show_data, n_shown, flat;
	int suppress;    /* the current table is filtered out */
	size_t tablenum; /* tables shown so far (normal layout) */
	uint64_t rownum;
	size_t colnum;
	char *tname; /* quoted name of the current table */
	size_t tname_len, tname_cap;
	char *names; /* quoted column names, back to back */
	size_t names_len, names_cap;
	size_t *name_end; /* end offset of each name in names */
	size_t ncols, name_end_cap;
};

static int csv_grow(struct csv_state *s, char **buf, size_t *cap, size_t need)
{
	size_t ncap = *cap ? *cap : 256;
	char *nb;

	while (ncap < need)
		ncap *= 2;
	nb = realloc(*buf, ncap);
	if (nb == NULL)
		return tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
	*buf = nb;
	*cap = ncap;
	return TK_OK;
}

/* Appends the CSV-quoted form of str to *buf (at most 2 * len + 3 bytes). */
static int csv_quote_into(struct csv_state *s, char **buf, size_t *len, size_t *cap, const char *str)
{
	size_t n = strlen(str), i;
	char *p;

	if (*cap - *len < 2 * n + 4 && csv_grow(s, buf, cap, *len + 2 * n + 4) != TK_OK)
		return s->base.rc;
	p = *buf + *len;
	if (str[0] == '-')
		*p++ = '=';
	*p++ = '"';
	for (i = 0; i < n; i++) {
		if (str[i] == '"')
			*p++ = '"';
		*p++ = str[i];
	}
	*p++ = '"';
	*len = (size_t)(p - *buf);
	return TK_OK;
}

static void csv_put_quoted(FILE *out, const char *str)
{
	const char *q;

	if (str[0] == '-')
		putc_unlocked('=', out);
	putc_unlocked('"', out);
	while ((q = strchr(str, '"')) != NULL) {
		fwrite_unlocked(str, 1, (size_t)(q - str) + 1, out);
		putc_unlocked('"', out);
		str = q + 1;
	}
	fputs_unlocked(str, out);
	putc_unlocked('"', out);
}

static int csv_included(const struct csv_state *s, const char *name)
{
	size_t i;

	if (s->o.n_include > 0) {
		for (i = 0; i < s->o.n_include; i++)
			if (strcmp(s->o.include[i], name) == 0)
				return 1;
		return 0;
	}
	for (i = 0; i < s->o.n_exclude; i++)
		if (strcmp(s->o.exclude[i], name) == 0)
			return 0;
	return 1;
}

static void csv_table_begin(void *ud, const char *name)
{
	struct csv_state *s = ud;

	s->suppress = !csv_included(s, name);
	if (s->suppress)
		return;
	s->rownum = 0;
	s->tname_len = 0;
	if (csv_quote_into(s, &s->tname, &s->tname_len, &s->tname_cap, name) != TK_OK)
		return;
	if (s->flat)
		return;
	if (s->n_shown > 1 && s->tablenum > 0)
		putc_unlocked('\n', s->out);
	s->tablenum++;
	if (s->show_tables) {
		fwrite_unlocked(s->tname, 1, s->tname_len, s->out);
		putc_unlocked('\n', s->out);
	}
}

static void csv_column_begin(void *ud)
{
	struct csv_state *s = ud;

	if (s->suppress)
		return;
	s->colnum = 0;
	s->ncols = 0;
	s->names_len = 0;
}

static void csv_column(void *ud, const char *name)
{
	struct csv_state *s = ud;
	size_t start;

	if (s->suppress || !s->show_columns)
		return;
	start = s->names_len;
	if (csv_quote_into(s, &s->names, &s->names_len, &s->names_cap, name) != TK_OK)
		return;
	if (s->ncols == s->name_end_cap) {
		size_t cap = s->name_end_cap ? s->name_end_cap * 2 : 64;
		size_t *ne = realloc(s->name_end, cap * sizeof(*ne));
		if (ne == NULL) {
			tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
			return;
		}
		s->name_end = ne;
		s->name_end_cap = cap;
	}
	s->name_end[s->ncols++] = s->names_len;
	if (!s->flat) {
		if (s->colnum > 0)
			fwrite_unlocked(s->sep, 1, s->sep_len, s->out);
		fwrite_unlocked(s->names + start, 1, s->names_len - start, s->out);
	}
	s->colnum++;
}

static void csv_column_end(void *ud)
{
	struct csv_state *s = ud;

	if (s->suppress || !s->show_columns || s->flat)
		return;
	putc_unlocked('\n', s->out);
}

static void csv_row_begin(void *ud)
{
	struct csv_state *s = ud;

	if (s->suppress)
		return;
	s->colnum = 0;
	s->rownum++;
}

/* Starts one value: the flat prefix or the separator. 0 when the value is not shown. */
static int csv_value_prefix(struct csv_state *s)
{
	if (s->suppress || !s->show_data)
		return 0;
	if (s->flat && s->colnum >= s->ncols) /* only after a failure, which stops the parser */
		return 0;
	if (s->flat) {
		char num[24];
		size_t start = s->colnum ? s->name_end[s->colnum - 1] : 0;
		fwrite_unlocked(s->tname, 1, s->tname_len, s->out);
		fwrite_unlocked(s->sep, 1, s->sep_len, s->out);
		fwrite_unlocked(num, 1, tk__bf_u64_to_dec(num, s->rownum), s->out);
		fwrite_unlocked(s->sep, 1, s->sep_len, s->out);
		fwrite_unlocked(s->names + start, 1, s->name_end[s->colnum] - start, s->out);
		fwrite_unlocked(s->sep, 1, s->sep_len, s->out);
	} else if (s->colnum > 0) {
		fwrite_unlocked(s->sep, 1, s->sep_len, s->out);
	}
	s->colnum++;
	return 1;
}

static void csv_data_uint64(void *ud, uint64_t v)
{
	struct csv_state *s = ud;
	char num[24];

	if (!csv_value_prefix(s))
		return;
	fwrite_unlocked(num, 1, tk__bf_u64_to_dec(num, v), s->out);
	if (s->flat)
		putc_unlocked('\n', s->out);
}

static void csv_data_string(void *ud, const char *v)
{
	struct csv_state *s = ud;

	if (!csv_value_prefix(s))
		return;
	csv_put_quoted(s->out, v);
	if (s->flat)
		putc_unlocked('\n', s->out);
}

static void csv_data_bool(void *ud, uint8_t v)
{
	struct csv_state *s = ud;

	if (!csv_value_prefix(s))
		return;
	fputs_unlocked(v != 0 ? "TRUE" : "FALSE", s->out);
	if (s->flat)
		putc_unlocked('\n', s->out);
}

static void csv_row_end(void *ud)
{
	struct csv_state *s = ud;

	if (s->suppress || !s->show_data || s->flat)
		return;
	putc_unlocked('\n', s->out);
}

static void csv_table_end(void *ud)
{
	struct csv_state *s = ud;

	if (ferror(s->out)) /* a full disk ends the conversion now, not at the end of the input */
		tk__bfconv_check_output(&s->base, s->out);
}

static void csv_idle(void *ud)
{
	struct csv_state *s = ud;

	fflush(s->out); /* live input: whoever reads our output sees every row read so far */
}

int tk_bfbin_to_csv(const char *in_path, FILE *out, const tk_bfbin_csv_options *csv, tk_bfbin_convert *cv)
{
	static const tk_bfbin_csv_options defaults = TK_BFBIN_CSV_OPTIONS_INIT;
	bfbin_callback_t cbs;
	struct csv_state s;
	int rc;

	memset(&s, 0, sizeof(s));
	rc = tk__bfconv_init(&s.base, cv, in_path);
	if (rc != TK_OK)
		return rc;
	if (out == NULL)
		return tk__bfconv_fail(&s.base, TK_EINVAL, "no output stream was given");
	s.o = defaults;
	if (csv != NULL)
		memcpy(&s.o, csv, csv->struct_size < sizeof(s.o) ? csv->struct_size : sizeof(s.o));
	if (s.o.n_include > 0 && s.o.n_exclude > 0)
		return tk__bfconv_fail(&s.base, TK_EINVAL, "Only one of the include and exclude lists may be given");
	if ((s.o.n_include > 0 && s.o.include == NULL) || (s.o.n_exclude > 0 && s.o.exclude == NULL))
		return tk__bfconv_fail(&s.base, TK_EINVAL, "An include or exclude list is NULL");
	s.out = out;
	s.sep = s.o.colsep != NULL ? s.o.colsep : ",";
	s.sep_len = strlen(s.sep);
	s.flat = (s.o.flags & TK_BFBIN_CSV_FLAT) != 0;
	s.show_tables = s.flat || !(s.o.flags & TK_BFBIN_CSV_NO_TABLE_NAMES);
	s.show_columns = s.flat || !(s.o.flags & TK_BFBIN_CSV_NO_COLUMN_NAMES);
	s.show_data = s.flat || !(s.o.flags & TK_BFBIN_CSV_NO_DATA);
	s.n_shown = s.show_tables + s.show_columns + s.show_data;

	memset(&cbs, 0, sizeof(cbs));
	cbs.error_cb = tk__bfconv_parse_error;
	cbs.table_begin_basic_cb = csv_table_begin;
	cbs.table_begin_keyval_cb = csv_table_begin;
	cbs.table_end_basic_cb = csv_table_end;
	cbs.table_end_keyval_cb = csv_table_end;
	cbs.column_begin_cb = csv_column_begin;
	cbs.column_uint64_cb = csv_column;
	cbs.column_string_cb = csv_column;
	cbs.column_bool_cb = csv_column;
	cbs.column_end_cb = csv_column_end;
	cbs.row_begin_cb = csv_row_begin;
	cbs.data_uint64_cb = csv_data_uint64;
	cbs.data_string_cb = csv_data_string;
	cbs.data_bool_cb = csv_data_bool;
	cbs.row_end_cb = csv_row_end;

	rc = tk__bfconv_run(&s.base, &cbs, cv->live_input, cv->live_input ? csv_idle : NULL);
	if (rc == TK_OK)
		rc = tk__bfconv_check_output(&s.base, out);
	else
		fflush(out); /* what was converted before the error stays, as with Byfl */
	free(s.tname);
	free(s.names);
	free(s.name_end);
	return rc;
}
