/* SPDX-License-Identifier: MIT */
/*
 * tbrw_dat.c: the .dat text format of tbrw_reader and tbrw_writer (docs/tbrw_reader.md).
 * One item per line: "tbrw-dat 1", "section NAME" ... "end", "stream N" ... "end", records
 * "KIND field=value ..." and hex lines "record HEX" / "bytes HEX". The parser streams: it
 * holds one line, checks it fully and hands it to a callback.
 */
#include "tbrw_dat.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- schema ---- */

#define DAT__FIELD(type, name) { #name, DAT_##type },
#define DAT__TABLE(kind) static const struct dat_field fields_##kind[] = { DAT_FIELDS_##kind(DAT__FIELD) { NULL, DAT_U8 } };
DAT_KINDS(DAT__TABLE)
#undef DAT__TABLE

static const struct {
	const char *name;
	const struct dat_field *fields;
} kinds[DAT_N_KINDS] = {
#define DAT__KIND(kind) [DAT_K_##kind] = { #kind, fields_##kind },
	DAT_KINDS(DAT__KIND)
#undef DAT__KIND
	[DAT_K_record] = { "record", NULL },
	[DAT_K_bytes] = { "bytes", NULL },
};

static const char *const section_names[DAT_N_SECTIONS] = {
	"hardware", "software", "process_thread", "module", "user_defined_global", "version_info",
	"event_description", "data_description", "data", "user_defined_stream", "stream_info", "bind",
};

const char *dat_kind_name(enum dat_kind kind)
{
	return (unsigned)kind < DAT_N_KINDS ? kinds[kind].name : "?";
}

const char *dat_section_name(enum dat_section section)
{
	return (unsigned)section < DAT_N_SECTIONS ? section_names[section] : "?";
}

size_t dat_kind_fields(enum dat_kind kind, const struct dat_field **fields)
{
	size_t n = 0;

	*fields = NULL;
	if ((unsigned)kind >= DAT_N_KINDS || kinds[kind].fields == NULL)
		return 0;
	*fields = kinds[kind].fields;
	while (kinds[kind].fields[n].name != NULL)
		n++;
	return n;
}

/* The section each record kind belongs in. */
static enum dat_section kind_section(enum dat_kind kind, enum dat_section cur)
{
	switch (kind) {
	case DAT_K_system: case DAT_K_node: case DAT_K_cpu: case DAT_K_cpu_arch:
	case DAT_K_cpuid_ia32: case DAT_K_cpuid_ia64:
		return DAT_S_hardware;
	case DAT_K_host: case DAT_K_os: case DAT_K_application:
		return DAT_S_software;
	case DAT_K_process: case DAT_K_thread: case DAT_K_derived:
		return DAT_S_process_thread;
	case DAT_K_bind:
		return DAT_S_bind;
	case DAT_K_module:
		return DAT_S_module;
	case DAT_K_version_info:
		return DAT_S_version_info;
	case DAT_K_stream_info:
		return DAT_S_stream_info;
	case DAT_K_event: case DAT_K_detail:
		return DAT_S_event_description;
	case DAT_K_desc:
		return DAT_S_data_description;
	case DAT_K_record:
		return DAT_S_data;
	case DAT_K_bytes:
		return cur == DAT_S_user_defined_stream ? DAT_S_user_defined_stream : DAT_S_user_defined_global;
	default:
		return DAT_N_SECTIONS;
	}
}

/* ---- parser ---- */

#define MAX_LINE (2 * (size_t)DAT_MAX_HEX_BYTES + 64)

struct parser {
	FILE *in;
	char *line;
	size_t cap;
	unsigned long lineno;
	char *err;
	size_t err_size;
	unsigned char *bytes;
	size_t bytes_cap;
	/* where we are */
	int have_header, in_stream, section; /* section: -1 outside */
	uint32_t stream, next_stream;
	unsigned char global_done[DAT_N_GLOBAL_SECTIONS];
	unsigned char stream_done[DAT_N_SECTIONS];
	unsigned kinds_seen[DAT_N_KINDS]; /* in the current section */
	uint64_t user_bytes;              /* in the current user-defined section */
};

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (p->err_size == 0)
		return -1;
	if (p->lineno > 0)
		n = snprintf(p->err, p->err_size, "line %lu: ", p->lineno);
	if (n < 0 || (size_t)n >= p->err_size)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->err_size - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * Reads one line without its end; returns 1, 0 at end of input, -1 on error. Byte by byte,
 * so that a NUL byte is seen wherever it is (fgets() cannot tell how much it read past one:
 * a line starting with NUL was dropped, and /dev/zero was read forever), and a line longer
 * than MAX_LINE stops the parse without reading the rest of it.
 */
static int read_line(struct parser *p)
{
	size_t len = 0;
	int c;

	for (;;) {
		if (len + 2 > p->cap) {
			size_t ncap = p->cap ? p->cap * 2 : 65536;
			char *nl;

			if (p->cap >= MAX_LINE + 2)
				return fail(p, "line longer than %zu bytes", MAX_LINE);
			if (ncap > MAX_LINE + 2)
				ncap = MAX_LINE + 2;
			nl = realloc(p->line, ncap);
			if (nl == NULL)
				return fail(p, "out of memory");
			p->line = nl;
			p->cap = ncap;
		}
		c = getc_unlocked(p->in);
		if (c == EOF) {
			if (ferror(p->in))
				return fail(p, "read error: %s", strerror(errno));
			if (len == 0)
				return 0;
			break;
		}
		if (c == '\n')
			break;
		if (c == '\0')
			return fail(p, "NUL byte at column %zu (a .dat file is text)", len + 1);
		p->line[len++] = (char)c;
		if (len > MAX_LINE)
			return fail(p, "line longer than %zu bytes", MAX_LINE);
	}
	p->line[len] = '\0';
	if (len > 0 && p->line[len - 1] == '\r')
		p->line[--len] = '\0';
	return 1;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Splits off the next token (a word, or name="quoted string" kept whole). NULL at the end. */
static char *next_token(struct parser *p, char **cursor, int *bad)
{
	char *s = *cursor, *start;
	int in_quote = 0;

	*bad = 0;
	while (is_space(*s))
		s++;
	if (*s == '\0') {
		*cursor = s;
		return NULL;
	}
	start = s;
	for (; *s != '\0'; s++) {
		if (in_quote) {
			if (*s == '\\' && s[1] != '\0')
				s++;
			else if (*s == '"')
				in_quote = 0;
		} else if (*s == '"') {
			in_quote = 1;
		} else if (is_space(*s)) {
			break;
		}
	}
	if (in_quote) {
		*bad = 1;
		fail(p, "unterminated string");
		return NULL;
	}
	if (*s != '\0')
		*s++ = '\0';
	*cursor = s;
	return start;
}

static int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Length of a valid UTF-8 sequence at s (1..4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))
			return 0; /* overlong, surrogate */
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

/* Unquotes "..." in place (escapes \\ \" \n \t \r \xHH) and checks it is UTF-8 without NUL. */
static int parse_string(struct parser *p, char *v, const char *field, const char **out)
{
	char *r = v + 1, *w = v;
	size_t i, n;

	for (;;) {
		if (*r == '\0')
			return fail(p, "unterminated string for '%s'", field);
		if (*r == '"')
			break;
		if (*r != '\\') {
			*w++ = *r++;
			continue;
		}
		r++;
		switch (*r) {
		case '\\': case '"':
			*w++ = *r++;
			break;
		case 'n':
			*w++ = '\n', r++;
			break;
		case 't':
			*w++ = '\t', r++;
			break;
		case 'r':
			*w++ = '\r', r++;
			break;
		case 'x': {
			int hi = hex_digit((unsigned char)r[1]), lo = hi < 0 ? -1 : hex_digit((unsigned char)r[2]);

			if (lo < 0)
				return fail(p, "bad \\x escape in '%s' (two hex digits expected)", field);
			if (hi == 0 && lo == 0)
				return fail(p, "NUL character (\\x00) in '%s'", field);
			*w++ = (char)(hi * 16 + lo);
			r += 3;
			break;
		}
		default:
			return fail(p, "unknown escape '\\%c' in '%s'", *r ? *r : ' ', field);
		}
	}
	if (r[1] != '\0')
		return fail(p, "text after the closing quote of '%s'", field);
	*w = '\0';
	n = (size_t)(w - v);
	for (i = 0; i < n;) {
		size_t k = utf8_len((const unsigned char *)v + i);

		if (k == 0 || i + k > n)
			return fail(p, "invalid UTF-8 in '%s' (byte %zu of the string)", field, i);
		i += k;
	}
	*out = v;
	return 0;
}

static int parse_number(struct parser *p, const char *v, enum dat_type type, const char *field, uint64_t *out)
{
	const char *s = v;
	int neg = 0;
	uint64_t x = 0, max;

	if (*s == '-') {
		if (type != DAT_S64)
			return fail(p, "negative value '%s' for unsigned '%s'", v, field);
		neg = 1;
		s++;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		if (*s == '\0')
			return fail(p, "bad number '%s' for '%s'", v, field);
		for (; *s; s++) {
			int d = hex_digit((unsigned char)*s);

			if (d < 0)
				return fail(p, "bad number '%s' for '%s'", v, field);
			if (x >> 60)
				return fail(p, "value '%s' of '%s' out of range", v, field);
			x = x * 16 + (unsigned)d;
		}
	} else {
		if (*s == '\0')
			return fail(p, "bad number '%s' for '%s'", v, field);
		for (; *s; s++) {
			if (*s < '0' || *s > '9')
				return fail(p, "bad number '%s' for '%s'", v, field);
			if (x > (UINT64_MAX - (unsigned)(*s - '0')) / 10)
				return fail(p, "value '%s' of '%s' out of range", v, field);
			x = x * 10 + (unsigned)(*s - '0');
		}
	}
	switch (type) {
	case DAT_U8: max = UINT8_MAX; break;
	case DAT_U16: max = UINT16_MAX; break;
	case DAT_U32: max = UINT32_MAX; break;
	case DAT_B2: max = 3; break;
	case DAT_S64: max = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX; break;
	default: max = UINT64_MAX; break;
	}
	if (x > max)
		return fail(p, "value '%s' of '%s' out of range (at most %" PRIu64 "%s)", v, field,
			    neg ? max : max, neg ? " in magnitude" : "");
	*out = neg ? (uint64_t)0 - x : x;
	return 0;
}

static int parse_fields(struct parser *p, enum dat_kind kind, char *cursor, struct dat_values *vals)
{
	const struct dat_field *fields;
	size_t n = dat_kind_fields(kind, &fields), i;
	unsigned char seen[DAT_MAX_FIELDS] = { 0 };
	char *tok;
	int bad;

	memset(vals, 0, sizeof(*vals));
	while ((tok = next_token(p, &cursor, &bad)) != NULL) {
		char *eq = strchr(tok, '=');

		if (eq == NULL)
			return fail(p, "'%s' is not a field=value pair", tok);
		*eq = '\0';
		for (i = 0; i < n; i++)
			if (strcmp(fields[i].name, tok) == 0)
				break;
		if (i == n)
			return fail(p, "unknown field '%s' in '%s'", tok, dat_kind_name(kind));
		if (seen[i])
			return fail(p, "field '%s' given twice", tok);
		seen[i] = 1;
		if (fields[i].type == DAT_STR) {
			if (strcmp(eq + 1, "null") == 0)
				vals->str[i] = NULL;
			else if (eq[1] != '"')
				return fail(p, "field '%s' needs a quoted string or null", tok);
			else if (parse_string(p, eq + 1, fields[i].name, &vals->str[i]) != 0)
				return -1;
		} else if (parse_number(p, eq + 1, fields[i].type, fields[i].name, &vals->num[i]) != 0) {
			return -1;
		}
	}
	if (bad)
		return -1;
	for (i = 0; i < n; i++)
		if (!seen[i])
			return fail(p, "field '%s' missing in '%s'", fields[i].name, dat_kind_name(kind));
	return 0;
}

static int parse_hex(struct parser *p, char *cursor, const char *what, size_t *n_out)
{
	char *tok, *rest;
	size_t len, i;
	int bad;

	tok = next_token(p, &cursor, &bad);
	if (tok == NULL)
		return bad ? -1 : fail(p, "'%s' needs hex bytes", what);
	rest = cursor;
	if (next_token(p, &rest, &bad) != NULL || bad)
		return fail(p, "text after the hex bytes of '%s'", what);
	len = strlen(tok);
	if (len % 2 != 0)
		return fail(p, "odd number of hex digits in '%s'", what);
	if (len / 2 > DAT_MAX_HEX_BYTES)
		return fail(p, "'%s' longer than %u bytes", what, DAT_MAX_HEX_BYTES);
	if (len / 2 > p->bytes_cap) {
		unsigned char *nb = realloc(p->bytes, len / 2);

		if (nb == NULL)
			return fail(p, "out of memory");
		p->bytes = nb;
		p->bytes_cap = len / 2;
	}
	for (i = 0; i < len / 2; i++) {
		int hi = hex_digit((unsigned char)tok[2 * i]), lo = hex_digit((unsigned char)tok[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return fail(p, "bad hex digit in '%s' at column %zu", what, 2 * i + (hi < 0 ? 0 : 1) + 1 + (size_t)(tok - p->line));
		p->bytes[i] = (unsigned char)(hi * 16 + lo);
	}
	*n_out = len / 2;
	return 0;
}

static int parse_u32_arg(struct parser *p, char *cursor, const char *what, uint32_t *out)
{
	char *tok, *rest;
	uint64_t x;
	int bad;

	tok = next_token(p, &cursor, &bad);
	if (tok == NULL)
		return bad ? -1 : fail(p, "'%s' needs a number", what);
	rest = cursor;
	if (next_token(p, &rest, &bad) != NULL || bad)
		return fail(p, "text after '%s %s'", what, tok);
	if (parse_number(p, tok, DAT_U32, what, &x) != 0)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

/* Nesting and count rules of the records in a section, before the record is accepted. */
static int check_nesting(struct parser *p, enum dat_kind kind)
{
	static const struct {
		enum dat_kind kind, parent;
	} parents[] = {
		{ DAT_K_node, DAT_K_system },       { DAT_K_cpu, DAT_K_node },
		{ DAT_K_cpu_arch, DAT_K_cpu },      { DAT_K_cpuid_ia32, DAT_K_cpu_arch },
		{ DAT_K_cpuid_ia64, DAT_K_cpu_arch }, { DAT_K_detail, DAT_K_event },
	};
	size_t i;

	switch (kind) {
	case DAT_K_system: case DAT_K_host: case DAT_K_os: case DAT_K_application:
	case DAT_K_version_info: case DAT_K_stream_info:
		if (p->kinds_seen[kind] > 0)
			return fail(p, "a second '%s' in section %s", dat_kind_name(kind), dat_section_name(p->section));
		break;
	default:
		break;
	}
	if (kind == DAT_K_derived &&
	    (p->kinds_seen[DAT_K_derived] || p->kinds_seen[DAT_K_process] || p->kinds_seen[DAT_K_thread]))
		return fail(p, "'derived' must be the first line of section process_thread");
	for (i = 0; i < sizeof(parents) / sizeof(parents[0]); i++)
		if (parents[i].kind == kind && p->kinds_seen[parents[i].parent] == 0)
			return fail(p, "'%s' before any '%s'", dat_kind_name(kind), dat_kind_name(parents[i].parent));
	return 0;
}

static int dispatch(struct parser *p, dat_item_fn fn, void *ud, struct dat_item *item)
{
	item->line = p->lineno;
	item->stream = p->stream;
	return fn(ud, item);
}

static int parse_section_line(struct parser *p, char *cursor, dat_item_fn fn, void *ud)
{
	struct dat_item item;
	char *name, *rest;
	int bad, s;

	if (p->section >= 0)
		return fail(p, "'section' inside section %s (missing 'end')", dat_section_name(p->section));
	name = next_token(p, &cursor, &bad);
	if (name == NULL)
		return bad ? -1 : fail(p, "'section' needs a name");
	rest = cursor;
	if (next_token(p, &rest, &bad) != NULL || bad)
		return fail(p, "text after 'section %s'", name);
	for (s = 0; s < DAT_N_SECTIONS; s++)
		if (strcmp(name, section_names[s]) == 0)
			break;
	if (s == DAT_N_SECTIONS)
		return fail(p, "unknown section '%s'", name);
	if (s < DAT_N_GLOBAL_SECTIONS) {
		if (p->in_stream)
			return fail(p, "global section %s inside stream %" PRIu32, name, p->stream);
		if (p->global_done[s])
			return fail(p, "section %s given twice", name);
		p->global_done[s] = 1;
	} else {
		if (!p->in_stream)
			return fail(p, "stream section %s outside a stream", name);
		if (p->stream_done[s])
			return fail(p, "section %s given twice in stream %" PRIu32, name, p->stream);
		if (s == DAT_S_bind && !p->stream_done[DAT_S_data])
			return fail(p, "section bind before the data section of stream %" PRIu32, p->stream);
		p->stream_done[s] = 1;
	}
	p->section = s;
	memset(p->kinds_seen, 0, sizeof(p->kinds_seen));
	p->user_bytes = 0;
	memset(&item, 0, sizeof(item));
	item.type = DAT_SECTION_BEGIN;
	item.section = (enum dat_section)s;
	return dispatch(p, fn, ud, &item);
}

static int parse_one(struct parser *p, dat_item_fn fn, void *ud, struct dat_values *vals)
{
	struct dat_item item;
	char *cursor = p->line, *kw, *rest;
	int bad, k;

	kw = next_token(p, &cursor, &bad);
	if (kw == NULL)
		return bad ? -1 : 0; /* blank line */
	if (kw[0] == '#')
		return 0;
	if (!p->have_header) {
		uint32_t version;

		if (strcmp(kw, "tbrw-dat") != 0)
			return fail(p, "not a tbrw .dat file (the first line must be 'tbrw-dat %d')", DAT_VERSION);
		if (parse_u32_arg(p, cursor, "tbrw-dat", &version) != 0)
			return -1;
		if (version != DAT_VERSION)
			return fail(p, ".dat version %" PRIu32 " is not supported (this is version %d)", version, DAT_VERSION);
		p->have_header = 1;
		return 0;
	}
	memset(&item, 0, sizeof(item));
	if (strcmp(kw, "section") == 0)
		return parse_section_line(p, cursor, fn, ud);
	if (strcmp(kw, "stream") == 0) {
		uint32_t n;

		if (p->section >= 0)
			return fail(p, "'stream' inside section %s (missing 'end')", dat_section_name(p->section));
		if (p->in_stream)
			return fail(p, "'stream' inside stream %" PRIu32 " (missing 'end')", p->stream);
		if (parse_u32_arg(p, cursor, "stream", &n) != 0)
			return -1;
		if (n != p->next_stream)
			return fail(p, "stream %" PRIu32 " where stream %" PRIu32 " was expected", n, p->next_stream);
		p->in_stream = 1;
		p->stream = n;
		p->next_stream = n + 1;
		memset(p->stream_done, 0, sizeof(p->stream_done));
		item.type = DAT_STREAM_BEGIN;
		return dispatch(p, fn, ud, &item);
	}
	if (strcmp(kw, "end") == 0) {
		rest = cursor;
		if (next_token(p, &rest, &bad) != NULL || bad)
			return fail(p, "text after 'end'");
		if (p->section >= 0) {
			item.type = DAT_SECTION_END;
			item.section = (enum dat_section)p->section;
			p->section = -1;
			return dispatch(p, fn, ud, &item);
		}
		if (p->in_stream) {
			item.type = DAT_STREAM_END;
			p->in_stream = 0;
			return dispatch(p, fn, ud, &item);
		}
		return fail(p, "'end' outside a section or stream");
	}
	for (k = 0; k < DAT_N_KINDS; k++)
		if (strcmp(kw, kinds[k].name) == 0)
			break;
	if (k == DAT_N_KINDS)
		return fail(p, "unknown keyword '%s'", kw);
	if (p->section < 0)
		return fail(p, "'%s' outside a section", kw);
	if ((int)kind_section((enum dat_kind)k, (enum dat_section)p->section) != p->section)
		return fail(p, "'%s' does not belong in section %s", kw, dat_section_name(p->section));
	if (check_nesting(p, (enum dat_kind)k) != 0)
		return -1;
	item.type = DAT_RECORD;
	item.kind = (enum dat_kind)k;
	item.section = (enum dat_section)p->section;
	if (k == DAT_K_record || k == DAT_K_bytes) {
		if (parse_hex(p, cursor, kw, &item.n_bytes) != 0)
			return -1;
		if (k == DAT_K_bytes) {
			p->user_bytes += item.n_bytes;
			if (p->user_bytes > DAT_MAX_USER_BYTES)
				return fail(p, "user-defined section larger than %u bytes", DAT_MAX_USER_BYTES);
		}
		item.bytes = p->bytes;
	} else {
		if (parse_fields(p, (enum dat_kind)k, cursor, vals) != 0)
			return -1;
		item.values = vals;
	}
	p->kinds_seen[k]++;
	return dispatch(p, fn, ud, &item);
}

int dat_parse(FILE *in, dat_item_fn fn, void *ud, char *err, size_t err_size)
{
	struct parser p;
	struct dat_values vals;
	int rc;

	memset(&p, 0, sizeof(p));
	p.in = in;
	p.err = err;
	p.err_size = err_size;
	p.section = -1;
	if (err_size > 0)
		err[0] = '\0';
	for (;;) {
		p.lineno++;
		rc = read_line(&p);
		if (rc <= 0)
			break;
		rc = parse_one(&p, fn, ud, &vals);
		if (rc != 0)
			goto out;
	}
	if (rc < 0)
		goto out;
	p.lineno = 0;
	if (!p.have_header)
		rc = fail(&p, "empty file: not a tbrw .dat file");
	else if (p.section >= 0)
		rc = fail(&p, "end of file inside section %s (missing 'end')", dat_section_name(p.section));
	else if (p.in_stream)
		rc = fail(&p, "end of file inside stream %" PRIu32 " (missing 'end')", p.stream);
out:
	free(p.line);
	free(p.bytes);
	return rc;
}

/* ---- printer ---- */

static int out_ok(FILE *out)
{
	return ferror(out) ? -1 : 0;
}

int dat_print_header(FILE *out)
{
	fprintf(out, "tbrw-dat %d\n# tbrw_reader output; the format is described in tbrw_reader(1) (docs/tbrw_reader.md)\n",
		DAT_VERSION);
	return out_ok(out);
}

int dat_print_section(FILE *out, enum dat_section section)
{
	fprintf(out, "section %s\n", dat_section_name(section));
	return out_ok(out);
}

int dat_print_stream(FILE *out, uint32_t stream)
{
	fprintf(out, "stream %" PRIu32 "\n", stream);
	return out_ok(out);
}

int dat_print_end(FILE *out)
{
	fputs("end\n", out);
	return out_ok(out);
}

int dat_print_string(FILE *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	if (s == NULL) {
		fputs("null", out);
		return out_ok(out);
	}
	putc('"', out);
	for (; *u; u++) {
		switch (*u) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			if (*u < 0x20 || *u == 0x7f)
				fprintf(out, "\\x%02x", *u);
			else
				putc(*u, out);
		}
	}
	putc('"', out);
	return out_ok(out);
}

int dat_print_values(FILE *out, enum dat_kind kind, const struct dat_values *values)
{
	const struct dat_field *fields;
	size_t n = dat_kind_fields(kind, &fields), i;

	fputs(dat_kind_name(kind), out);
	for (i = 0; i < n; i++) {
		fprintf(out, " %s=", fields[i].name);
		switch (fields[i].type) {
		case DAT_STR:
			dat_print_string(out, values->str[i]);
			break;
		case DAT_S64:
			fprintf(out, "%" PRId64, (int64_t)values->num[i]);
			break;
		case DAT_U8: case DAT_U16: case DAT_B2: case DAT_U32:
			fprintf(out, "%" PRIu64, values->num[i]);
			break;
		default:
			fprintf(out, "0x%" PRIx64, values->num[i]);
			break;
		}
	}
	putc('\n', out);
	return out_ok(out);
}

int dat_print_hex(FILE *out, enum dat_kind kind, const void *bytes, size_t n_bytes)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = bytes;
	char buf[512];
	size_t i, k = 0;

	fputs(dat_kind_name(kind), out);
	putc(' ', out);
	for (i = 0; i < n_bytes; i++) {
		buf[k++] = digits[b[i] >> 4];
		buf[k++] = digits[b[i] & 15];
		if (k == sizeof(buf)) {
			fwrite(buf, 1, k, out);
			k = 0;
		}
	}
	buf[k++] = '\n';
	fwrite(buf, 1, k, out);
	return out_ok(out);
}
