/* SPDX-License-Identifier: MIT */
/*
 * .byfl to an Excel 2003 XML spreadsheet (XML Spreadsheet 2003, "xmlss"), as Byfl's
 * bfbin2xmlss writes it: one worksheet per table; a basic table gets one styled <Column>
 * per column, a bold centred header row and one <Row> per row (cells typed Number,
 * String or Boolean); a key:value table becomes two columns, Key and Value, with one row
 * per key.
 *
 * Byfl escaped only < > & " and wrote names and strings as they came, which makes the
 * file unreadable (not well-formed XML) as soon as a string holds a control character or
 * invalid UTF-8, and makes Excel refuse it when a sheet name is longer than 31
 * characters, contains one of []:*?/\ or repeats. Here every text is valid XML 1.0
 * (invalid bytes and control characters become U+FFFD, line breaks and tabs character
 * references) and worksheet names are made valid and unique (see docs/bfbin2xmlss.md).
 * Bool cells are written 1 for any nonzero byte.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bfbin/bfbin_internal.h"

#define XS_SHEET_MAX 31 /* UTF-16 units in an Excel sheet name */

struct xs_state {
	struct tk__bfconv base; /* first: the parser's user_data */
	FILE *out;
	int keyval;
	char *names; /* column names of the current table, NUL-separated */
	size_t names_len, names_cap;
	size_t *name_off;
	size_t ncols, name_off_cap, colnum;
	/* worksheet names used so far, ASCII-lowercased, each with the next " (k)" to try */
	struct xs_used *used;
	size_t n_used, used_cap;
};

struct xs_used {
	char *key; /* NULL: free slot */
	size_t next_suffix;
};

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/*
 * Length of the valid UTF-8 sequence at p (1 to 4), or 0 when the bytes there are not
 * one (bad lead or continuation byte, overlong form, surrogate, above U+10FFFF).
 */
static size_t xs_utf8_len(const unsigned char *p)
{
	unsigned c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return (p[1] & 0xC0) == 0x80 ? 2 : 0;
	if (c >= 0xE0 && c <= 0xEF) {
		unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
		return p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 ? 3 : 0;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
		return p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 && (p[3] & 0xC0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* Writes str as XML character data (also valid inside a "quoted" attribute). */
static void xs_put_text(FILE *out, const char *str)
{
	const unsigned char *p = (const unsigned char *)str;

	while (*p != '\0') {
		const unsigned char *run = p;
		size_t n;
		/* Copy plain ASCII in one go. */
		while (*p >= 0x20 && *p < 0x80 && *p != '<' && *p != '>' && *p != '&' && *p != '"')
			p++;
		if (p > run)
			fwrite_unlocked(run, 1, (size_t)(p - run), out);
		if (*p == '\0')
			break;
		switch (*p) {
		case '<':
			fputs_unlocked("&lt;", out);
			p++;
			continue;
		case '>':
			fputs_unlocked("&gt;", out);
			p++;
			continue;
		case '&':
			fputs_unlocked("&amp;", out);
			p++;
			continue;
		case '"':
			fputs_unlocked("&quot;", out);
			p++;
			continue;
		case '\t':
			fputs_unlocked("&#9;", out);
			p++;
			continue;
		case '\n':
			fputs_unlocked("&#10;", out);
			p++;
			continue;
		case '\r':
			fputs_unlocked("&#13;", out);
			p++;
			continue;
		default:
			break;
		}
		n = *p < 0x20 ? 0 : xs_utf8_len(p);
		/* U+FFFE and U+FFFF are not XML characters either. */
		if (n == 3 && p[0] == 0xEF && p[1] == 0xBF && p[2] >= 0xBE)
			n = 0;
		if (n == 0) {
			fputs_unlocked(replacement, out);
			p++;
		} else {
			fwrite_unlocked(p, 1, n, out);
			p += n;
		}
	}
}

/* Excel compares sheet names without regard to case; ASCII folding covers the usual. */
static void xs_fold(char *dst, const char *src)
{
	for (; *src; src++, dst++)
		*dst = *src >= 'A' && *src <= 'Z' ? (char)(*src + ('a' - 'A')) : *src;
	*dst = '\0';
}

static uint64_t xs_hash(const char *key)
{
	uint64_t h = 1469598103934665603ull;

	for (; *key; key++) {
		h ^= (unsigned char)*key;
		h *= 1099511628211ull;
	}
	return h;
}

/* The slot of a folded name: its entry, or the free slot where it belongs. */
static struct xs_used *xs_slot(struct xs_used *tab, size_t cap, const char *folded)
{
	size_t i = (size_t)xs_hash(folded) & (cap - 1);

	while (tab[i].key != NULL && strcmp(tab[i].key, folded) != 0)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static struct xs_used *xs_lookup(struct xs_state *s, const char *name)
{
	char folded[4 * XS_SHEET_MAX + 24];

	if (s->used_cap == 0)
		return NULL;
	xs_fold(folded, name);
	return xs_slot(s->used, s->used_cap, folded);
}

static int xs_name_used(struct xs_state *s, const char *name)
{
	char folded[4 * XS_SHEET_MAX + 24];
	struct xs_used *u;

	xs_fold(folded, name);
	if (strcmp(folded, "history") == 0)
		return 1; /* reserved by Excel */
	u = xs_lookup(s, name);
	return u != NULL && u->key != NULL;
}

/* Records a name as used. */
static int xs_use(struct xs_state *s, const char *name)
{
	char folded[4 * XS_SHEET_MAX + 24];
	struct xs_used *u;

	if ((s->n_used + 1) * 2 > s->used_cap) {
		size_t cap = s->used_cap ? s->used_cap * 2 : 64, i;
		struct xs_used *nt = calloc(cap, sizeof(*nt));
		if (nt == NULL)
			return TK_ENOMEM;
		for (i = 0; i < s->used_cap; i++)
			if (s->used[i].key != NULL)
				*xs_slot(nt, cap, s->used[i].key) = s->used[i];
		free(s->used);
		s->used = nt;
		s->used_cap = cap;
	}
	xs_fold(folded, name);
	u = xs_slot(s->used, s->used_cap, folded);
	u->key = strdup(folded);
	if (u->key == NULL)
		return TK_ENOMEM;
	u->next_suffix = 2;
	s->n_used++;
	return TK_OK;
}

/*
 * Copies into out (at least 4 * XS_SHEET_MAX + 1 bytes) the longest prefix of the valid
 * name `src` that fits in `units` UTF-16 units. Returns its length in bytes.
 */
static size_t xs_cut(char *out, const char *src, size_t units)
{
	size_t len = 0, used = 0;

	while (src[len] != '\0') {
		size_t n = xs_utf8_len((const unsigned char *)src + len);
		size_t u = n == 4 ? 2 : 1;
		if (used + u > units)
			break;
		memcpy(out + len, src + len, n);
		len += n;
		used += u;
	}
	out[len] = '\0';
	return len;
}

/* A worksheet name Excel accepts, derived from the table name, unique in this workbook. */
static char *xs_sheet_name(struct xs_state *s, const char *table)
{
	char clean[4 * XS_SHEET_MAX + 1], cut[4 * XS_SHEET_MAX + 1], *name;
	const unsigned char *p = (const unsigned char *)table;
	size_t len = 0, used = 0;

	/* Valid UTF-8, no control characters nor []:*?/\, at most 31 UTF-16 units. */
	while (*p != '\0' && used < XS_SHEET_MAX) {
		size_t n = *p < 0x20 ? 0 : xs_utf8_len(p);
		if (n == 3 && p[0] == 0xEF && p[1] == 0xBF && p[2] >= 0xBE)
			n = 0;
		if (n == 0 || strchr("[]:*?/\\", *p) != NULL) {
			clean[len++] = '_';
			used++;
			p += n ? n : 1;
			continue;
		}
		if (n == 4 && used + 2 > XS_SHEET_MAX)
			break;
		memcpy(clean + len, p, n);
		len += n;
		used += n == 4 ? 2 : 1;
		p += n;
	}
	clean[len] = '\0';
	/* No apostrophe at either end. */
	if (len > 0 && clean[0] == '\'')
		clean[0] = '_';
	if (len > 0 && clean[len - 1] == '\'')
		clean[len - 1] = '_';
	if (len == 0)
		strcpy(clean, "Sheet");

	name = malloc(sizeof(clean) + 24);
	if (name == NULL)
		return NULL;
	strcpy(name, clean);
	if (xs_name_used(s, name)) {
		/* "Name (k)": k continues from the last one taken for this name, so a file of
		 * many tables with one name stays linear. */
		struct xs_used *base = xs_lookup(s, clean);
		size_t k = base != NULL && base->key != NULL ? base->next_suffix : 2;
		do {
			char suffix[24];
			size_t slen = (size_t)snprintf(suffix, sizeof(suffix), " (%zu)", k++);
			xs_cut(cut, clean, XS_SHEET_MAX - slen);
			snprintf(name, sizeof(clean) + 24, "%s%s", cut, suffix);
		} while (xs_name_used(s, name));
		if (base != NULL && base->key != NULL)
			base->next_suffix = k;
	}
	if (xs_use(s, name) != TK_OK) {
		free(name);
		return NULL;
	}
	return name;
}

static void xs_table_begin(struct xs_state *s, const char *table, int keyval)
{
	char *name = xs_sheet_name(s, table);

	if (name == NULL) {
		tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
		return;
	}
	s->keyval = keyval;
	fputs_unlocked("  <Worksheet ss:Name=\"", s->out);
	xs_put_text(s->out, name);
	fputs_unlocked("\">\n    <Table>\n", s->out);
	free(name);
}

static void xs_table_basic(void *ud, const char *name)
{
	xs_table_begin(ud, name, 0);
}

static void xs_table_keyval(void *ud, const char *name)
{
	xs_table_begin(ud, name, 1);
}

static void xs_column_begin(void *ud)
{
	struct xs_state *s = ud;

	s->ncols = 0;
	s->names_len = 0;
	if (s->keyval) /* two columns: the keys (strings) and the values (any type) */
		fputs_unlocked("      <Column ss:AutoFitWidth=\"1\" ss:StyleID=\"sty-string\" />\n"
			       "      <Column ss:AutoFitWidth=\"1\" />\n",
			       s->out);
}

static void xs_column(struct xs_state *s, const char *name, const char *style)
{
	size_t n = strlen(name) + 1;

	if (s->names_cap - s->names_len < n) {
		size_t cap = s->names_cap ? s->names_cap : 1024;
		char *nn;
		while (cap - s->names_len < n)
			cap *= 2;
		nn = realloc(s->names, cap);
		if (nn == NULL) {
			tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
			return;
		}
		s->names = nn;
		s->names_cap = cap;
	}
	if (s->ncols == s->name_off_cap) {
		size_t cap = s->name_off_cap ? s->name_off_cap * 2 : 64;
		size_t *no = realloc(s->name_off, cap * sizeof(*no));
		if (no == NULL) {
			tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
			return;
		}
		s->name_off = no;
		s->name_off_cap = cap;
	}
	memcpy(s->names + s->names_len, name, n);
	s->name_off[s->ncols++] = s->names_len;
	s->names_len += n;
	if (!s->keyval)
		fprintf(s->out, "      <Column ss:AutoFitWidth=\"1\" ss:StyleID=\"%s\" />\n", style);
}

static void xs_column_uint64(void *ud, const char *name)
{
	xs_column(ud, name, "sty-uint64");
}

static void xs_column_string(void *ud, const char *name)
{
	xs_column(ud, name, "sty-string");
}

static void xs_column_bool(void *ud, const char *name)
{
	xs_column(ud, name, "sty-bool");
}

static void xs_column_end(void *ud)
{
	struct xs_state *s = ud;
	size_t i;

	fputs_unlocked("      <Row ss:StyleID=\"sty-col-header\">\n", s->out);
	if (s->keyval) {
		fputs_unlocked("        <Cell><Data ss:Type=\"String\">Key</Data></Cell>\n"
			       "        <Cell><Data ss:Type=\"String\">Value</Data></Cell>\n",
			       s->out);
	} else {
		for (i = 0; i < s->ncols; i++) {
			fputs_unlocked("        <Cell><Data ss:Type=\"String\">", s->out);
			xs_put_text(s->out, s->names + s->name_off[i]);
			fputs_unlocked("</Data></Cell>\n", s->out);
		}
	}
	fputs_unlocked("      </Row>\n", s->out);
}

static void xs_row_begin(void *ud)
{
	struct xs_state *s = ud;

	s->colnum = 0;
	if (!s->keyval)
		fputs_unlocked("      <Row>\n", s->out);
}

/* Key:value tables: a whole row per value, starting with the key. */
static void xs_keyval_head(struct xs_state *s, const char *style, const char *type)
{
	fputs_unlocked("      <Row>\n        <Cell><Data ss:Type=\"String\">", s->out);
	if (s->colnum < s->ncols) /* always, unless storing a name failed (the parser stops) */
		xs_put_text(s->out, s->names + s->name_off[s->colnum]);
	s->colnum++;
	fprintf(s->out, "</Data></Cell>\n        <Cell ss:StyleID=\"%s\"><Data ss:Type=\"%s\">", style, type);
}

static void xs_data_uint64(void *ud, uint64_t v)
{
	struct xs_state *s = ud;
	char num[24];

	if (s->keyval)
		xs_keyval_head(s, "sty-uint64", "Number");
	else
		fputs_unlocked("        <Cell><Data ss:Type=\"Number\">", s->out);
	fwrite_unlocked(num, 1, tk__bf_u64_to_dec(num, v), s->out);
	fputs_unlocked(s->keyval ? "</Data></Cell>\n      </Row>\n" : "</Data></Cell>\n", s->out);
}

static void xs_data_string(void *ud, const char *v)
{
	struct xs_state *s = ud;

	if (s->keyval)
		xs_keyval_head(s, "sty-string", "String");
	else
		fputs_unlocked("        <Cell><Data ss:Type=\"String\">", s->out);
	xs_put_text(s->out, v);
	fputs_unlocked(s->keyval ? "</Data></Cell>\n      </Row>\n" : "</Data></Cell>\n", s->out);
}

static void xs_data_bool(void *ud, uint8_t v)
{
	struct xs_state *s = ud;

	/* Byfl types a key:value bool Number and a basic one Boolean; kept as is. */
	if (s->keyval)
		xs_keyval_head(s, "sty-bool", "Number");
	else
		fputs_unlocked("        <Cell><Data ss:Type=\"Boolean\">", s->out);
	putc_unlocked(v != 0 ? '1' : '0', s->out);
	fputs_unlocked(s->keyval ? "</Data></Cell>\n      </Row>\n" : "</Data></Cell>\n", s->out);
}

static void xs_row_end(void *ud)
{
	struct xs_state *s = ud;

	if (!s->keyval)
		fputs_unlocked("      </Row>\n", s->out);
}

static void xs_table_end(void *ud)
{
	struct xs_state *s = ud;

	fputs_unlocked("    </Table>\n  </Worksheet>\n", s->out);
	if (ferror(s->out))
		tk__bfconv_check_output(&s->base, s->out);
}

static const char xs_prologue[] =
	"<?xml version=\"1.0\"?>\n"
	"<?mso-application progid=\"Excel.Sheet\"?>\n"
	"<Workbook xmlns=\"urn:schemas-microsoft-com:office:spreadsheet\"\n"
	"          xmlns:o=\"urn:schemas-microsoft-com:office:office\"\n"
	"          xmlns:x=\"urn:schemas-microsoft-com:office:excel\"\n"
	"          xmlns:ss=\"urn:schemas-microsoft-com:office:spreadsheet\"\n"
	"          xmlns:html=\"http://www.w3.org/TR/REC-html40\">\n"
	"  <Styles>\n"
	"    <Style ss:ID=\"sty-col-header\">\n"
	"      <Alignment ss:Horizontal=\"Center\" />\n"
	"      <Font ss:Bold=\"1\" />\n"
	"    </Style>\n"
	"    <Style ss:ID=\"sty-uint64\">\n"
	"      <NumberFormat ss:Format=\"#,##0\" />\n"
	"    </Style>\n"
	"    <Style ss:ID=\"sty-string\">\n"
	"    </Style>\n"
	"    <Style ss:ID=\"sty-bool\">\n"
	"    </Style>\n"
	"  </Styles>\n";

int tk_bfbin_to_xmlss(const char *in_path, FILE *out, tk_bfbin_convert *cv)
{
	bfbin_callback_t cbs;
	struct xs_state s;
	size_t i;
	int rc;

	memset(&s, 0, sizeof(s));
	rc = tk__bfconv_init(&s.base, cv, in_path);
	if (rc != TK_OK)
		return rc;
	if (out == NULL)
		return tk__bfconv_fail(&s.base, TK_EINVAL, "no output stream was given");
	s.out = out;
	memset(&cbs, 0, sizeof(cbs));
	cbs.error_cb = tk__bfconv_parse_error;
	cbs.table_begin_basic_cb = xs_table_basic;
	cbs.table_begin_keyval_cb = xs_table_keyval;
	cbs.table_end_basic_cb = xs_table_end;
	cbs.table_end_keyval_cb = xs_table_end;
	cbs.column_begin_cb = xs_column_begin;
	cbs.column_uint64_cb = xs_column_uint64;
	cbs.column_string_cb = xs_column_string;
	cbs.column_bool_cb = xs_column_bool;
	cbs.column_end_cb = xs_column_end;
	cbs.row_begin_cb = xs_row_begin;
	cbs.data_uint64_cb = xs_data_uint64;
	cbs.data_string_cb = xs_data_string;
	cbs.data_bool_cb = xs_data_bool;
	cbs.row_end_cb = xs_row_end;

	fputs_unlocked(xs_prologue, out);
	rc = tk__bfconv_run(&s.base, &cbs, 0, NULL);
	if (rc == TK_OK) {
		fputs_unlocked("</Workbook>\n", out);
		rc = tk__bfconv_check_output(&s.base, out);
	}
	for (i = 0; i < s.used_cap; i++)
		free(s.used[i].key);
	free(s.used);
	free(s.names);
	free(s.name_off);
	return rc;
}
