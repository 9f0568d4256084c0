/* SPDX-License-Identifier: MIT */
/*
 * csv: the streaming reader. The input is read in large blocks; a record (a line, or
 * several when a quoted field holds newlines) is parsed in place in the block, so memory
 * stays at about twice TK_CSV_MAX_RECORD whatever the file's size, and a record longer than
 * that (a 10 GB "line" without newline) is an error once that many bytes have been read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/tk_utf8.h"
#include "csv/csv_internal.h"

#define BLOCK (4u << 20)
#define BUF_CAP (BLOCK + TK_CSV_MAX_RECORD + 16)
#define MAX_FIELDS TK__CSV_MAX_FIELDS

struct field {
	char *p;
	size_t len;
	size_t off; /* byte offset in the record (for the column in messages) */
	int quoted;
};

struct tk_csv_reader {
	int fd;
	int own_fd;
	const unsigned char *mem;
	size_t mem_len, mem_pos;
	char *label;
	char *buf;
	size_t pos, end; /* unparsed bytes: buf[pos, end) */
	int eof;
	uint64_t consumed; /* bytes before buf[pos] */
	uint64_t line;     /* line of buf[pos] */
	int failed;
	char err[512];

	tk_csv_kind kind;
	tk_csv_clock clock;
	unsigned columns;
	int pid_col, tid_col, n_cols;
	size_t n_counters;
	char **counter_names;
	int *counter_inst;
	tk_csv_value *values;

	struct field fields[MAX_FIELDS];
	int n_fields;
	int rec_quoted; /* the record has a quote */
	char *rec; /* the current record */
	size_t rec_len;
	uint64_t rec_line;
};

static int fail(tk_csv_reader *r, int code, size_t rec_off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Error at byte rec_off of the current record (SIZE_MAX: no column). */
static int fail(tk_csv_reader *r, int code, size_t rec_off, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rec_off == SIZE_MAX || r->rec == NULL) {
		snprintf(r->err, sizeof(r->err), "%s:%llu: %s", r->label, (unsigned long long)r->rec_line, msg);
	} else {
		uint64_t line = r->rec_line;
		size_t col_start = 0;
		for (size_t i = 0; i < rec_off && i < r->rec_len; i++)
			if (r->rec[i] == '\n' || r->rec[i] == 0 /* a NUL put where a newline was */) {
				if (r->rec[i] == '\n') {
					line++;
					col_start = i + 1;
				}
			}
		snprintf(r->err, sizeof(r->err), "%s:%llu:%zu: %s", r->label, (unsigned long long)line,
			 rec_off - col_start + 1, msg);
	}
	r->failed = code;
	return code;
}

static int fill(tk_csv_reader *r)
{
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->end - r->pos);
		r->end -= r->pos;
		r->consumed += r->pos;
		r->pos = 0;
	}
	size_t room = BUF_CAP - 1 - r->end;
	if (room > BLOCK)
		room = BLOCK;
	if (room == 0)
		return 0;
	if (r->mem != NULL) {
		size_t n = r->mem_len - r->mem_pos;
		if (n > room)
			n = room;
		memcpy(r->buf + r->end, r->mem + r->mem_pos, n);
		r->mem_pos += n;
		r->end += n;
		if (n == 0)
			r->eof = 1;
		return 0;
	}
	for (;;) {
		ssize_t n = read(r->fd, r->buf + r->end, room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			snprintf(r->err, sizeof(r->err), "%s: read error: %s", r->label, strerror(e));
			r->failed = tk_error_from_errno(e);
			return r->failed;
		}
		if (n == 0)
			r->eof = 1;
		r->end += (size_t)n;
		return 0;
	}
}

/* A record over TK_CSV_MAX_RECORD whose line end was found: FILE:LINE:COLUMN, the column
 * that of the first byte too many. */
static int too_long(tk_csv_reader *r)
{
	r->rec = NULL;
	r->rec_line = r->line;
	snprintf(r->err, sizeof(r->err), "%s:%llu:%u: record longer than %u bytes", r->label,
		 (unsigned long long)r->line, TK_CSV_MAX_RECORD + 1, TK_CSV_MAX_RECORD);
	r->failed = TK_ETOOBIG;
	return TK_ETOOBIG;
}

/*
 * Finds the end of the record at buf[pos]: *len is its length without the line end, *next
 * the offset after the line end. Returns 1, 0 at the end of input, or an error.
 */
static int next_record(tk_csv_reader *r, size_t *len, size_t *next)
{
	size_t scanned = 0; /* bytes of the record already known to hold no record end */
	int in_quotes = 0;

	r->rec_quoted = 0;
	for (;;) {
		char *s = r->buf + r->pos, *e = r->buf + r->end;
		char *p = s + scanned;
		while (p < e) {
			if (!in_quotes) {
				char *nl = memchr(p, '\n', (size_t)(e - p));
				char *q = memchr(p, '"', (size_t)((nl ? nl : e) - p));
				if (q == NULL) {
					if (nl != NULL) {
						*len = (size_t)(nl - s);
						*next = *len + 1;
						/* found in the same block: still at most TK_CSV_MAX_RECORD */
						if (*len > TK_CSV_MAX_RECORD)
							return too_long(r);
						return 1;
					}
					p = e;
					break;
				}
				in_quotes = 1;
				r->rec_quoted = 1;
				p = q + 1;
			} else {
				char *q = memchr(p, '"', (size_t)(e - p));
				if (q == NULL) {
					p = e;
					break;
				}
				in_quotes = 0; /* "" inside quotes: closes and reopens, same result */
				p = q + 1;
			}
		}
		scanned = (size_t)(p - s);
		if (scanned >= TK_CSV_MAX_RECORD) {
			r->rec = NULL;
			r->rec_line = r->line;
			return fail(r, TK_ETOOBIG, SIZE_MAX, "record longer than %u bytes (no line end)",
				    TK_CSV_MAX_RECORD);
		}
		if (r->eof) {
			if (scanned == 0)
				return 0;
			*len = scanned;
			*next = scanned;
			return 1;
		}
		int rc = fill(r);
		if (rc)
			return rc;
	}
}

/* Splits the record rec[0, len) into fields, unquoting quoted ones in place. */
static int split(tk_csv_reader *r, char *rec, size_t len)
{
	size_t i = 0;

	r->n_fields = 0;
	if (len > 0 && rec[len - 1] == '\r')
		len--;
	for (;;) {
		if (r->n_fields == MAX_FIELDS)
			return fail(r, TK_EFORMAT, i, "more than %d fields", MAX_FIELDS);
		struct field *f = &r->fields[r->n_fields++];
		f->off = i;
		f->quoted = 0;
		if (i < len && rec[i] == '"') {
			size_t out = i;
			f->quoted = 1;
			i++;
			f->p = rec + out;
			for (;;) {
				if (i >= len)
					return fail(r, TK_EFORMAT, f->off, "quoted field without its closing quote");
				if (rec[i] == '"') {
					if (i + 1 < len && rec[i + 1] == '"') {
						rec[out++] = '"';
						i += 2;
						continue;
					}
					i++;
					break;
				}
				rec[out++] = rec[i++];
			}
			f->len = out - f->off;
			if (i < len && rec[i] != ',')
				return fail(r, TK_EFORMAT, i, "text after a quoted field's closing quote");
		} else {
			/* fields are short: a plain loop beats memchr's setup */
			size_t stop = i;
			while (stop < len && rec[stop] != ',') {
				if (rec[stop] == '"')
					return fail(r, TK_EFORMAT, stop, "quote inside an unquoted field");
				stop++;
			}
			f->p = rec + i;
			f->len = stop - i;
			i = stop;
		}
		if (i >= len)
			break;
		i++; /* the comma */
		if (i == len) { /* a trailing comma: one more, empty field */
			f = &r->fields[r->n_fields < MAX_FIELDS ? r->n_fields++ : MAX_FIELDS - 1];
			f->off = i;
			f->p = rec + i;
			f->len = 0;
			f->quoted = 0;
			break;
		}
	}
	return 0;
}

/* Reads the next non-blank record and splits it. 1, 0 at the end, or an error. */
static int read_record(tk_csv_reader *r)
{
	for (;;) {
		size_t len = 0, next = 0;
		int rc = next_record(r, &len, &next);
		if (rc <= 0)
			return rc;
		char *rec = r->buf + r->pos;
		r->rec = rec;
		r->rec_len = len;
		r->rec_line = r->line;
		if (next > len)
			r->line++;
		if (r->rec_quoted) /* quoted newlines */
			for (size_t i = 0; i < len; i++)
				if (rec[i] == '\n')
					r->line++;
		r->pos += next;
		if (len == 0 || (len == 1 && rec[0] == '\r'))
			continue; /* blank line */
		rc = split(r, rec, len);
		if (rc)
			return rc;
		return 1;
	}
}

static int field_is(const struct field *f, const char *s)
{
	size_t n = strlen(s);
	return f->len == n && memcmp(f->p, s, n) == 0;
}

static int clock_suffix(tk_csv_reader *r, const struct field *f, size_t prefix)
{
	char tmp[32];
	size_t n = f->len - prefix;

	if (n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	memcpy(tmp, f->p + prefix, n);
	tmp[n] = 0;
	if (tk_csv_clock_parse(tmp, &r->clock) != 0)
		return fail(r, TK_EFORMAT, f->off + prefix,
			    "unknown timestamp suffix \"%s\" (QPC, CLOCK_MONOTONIC_RAW, RDTSC, TSC or UTC)", tmp);
	return 0;
}

/* pid and tid columns from index i on. */
static int optional_columns(tk_csv_reader *r, int i)
{
	for (; i < r->n_fields; i++) {
		struct field *f = &r->fields[i];
		if (field_is(f, "pid")) {
			if (r->pid_col >= 0)
				return fail(r, TK_EFORMAT, f->off, "duplicate column \"pid\"");
			if (r->tid_col >= 0)
				return fail(r, TK_EFORMAT, f->off, "column \"pid\" after \"tid\"");
			r->pid_col = i;
			r->columns |= TK_CSV_HAS_PID;
		} else if (field_is(f, "tid")) {
			if (r->tid_col >= 0)
				return fail(r, TK_EFORMAT, f->off, "duplicate column \"tid\"");
			r->tid_col = i;
			r->columns |= TK_CSV_HAS_TID;
		} else {
			return fail(r, TK_EFORMAT, f->off, "unexpected column \"%.*s\" (only pid and tid may follow)",
				    (int)(f->len > 64 ? 64 : f->len), f->p);
		}
	}
	return 0;
}

static int parse_header(tk_csv_reader *r)
{
	int rc = read_record(r);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		r->rec = NULL;
		r->rec_line = 1;
		return fail(r, TK_EFORMAT, SIZE_MAX, "empty file: no header line");
	}
	/* a UTF-8 byte order mark */
	if (r->fields[0].len >= 3 && memcmp(r->fields[0].p, "\xef\xbb\xbf", 3) == 0) {
		r->fields[0].p += 3;
		r->fields[0].len -= 3;
		r->fields[0].off += 3;
	}
	r->pid_col = r->tid_col = -1;
	struct field *f0 = &r->fields[0];
	if (field_is(f0, "name")) {
		r->kind = TK_CSV_INTERVALS;
		if (r->n_fields < 3)
			return fail(r, TK_EFORMAT, SIZE_MAX,
				    "wrong header: an interval file has name,start_tsc.<CLOCK>,end_tsc[,pid][,tid]");
		struct field *f1 = &r->fields[1], *f2 = &r->fields[2];
		if (f1->len < 10 || memcmp(f1->p, "start_tsc.", 10) != 0)
			return fail(r, TK_EFORMAT, f1->off, "wrong header: expected start_tsc.<CLOCK>, found \"%.*s\"",
				    (int)(f1->len > 64 ? 64 : f1->len), f1->p);
		if ((rc = clock_suffix(r, f1, 10)) != 0)
			return rc;
		if (!field_is(f2, "end_tsc")) {
			/* end_tsc.<same clock> is accepted too */
			const char *cn = tk_csv_clock_name(r->clock);
			if (!(f2->len == 8 + strlen(cn) && memcmp(f2->p, "end_tsc.", 8) == 0 &&
			      memcmp(f2->p + 8, cn, strlen(cn)) == 0))
				return fail(r, TK_EFORMAT, f2->off, "wrong header: expected end_tsc, found \"%.*s\"",
					    (int)(f2->len > 64 ? 64 : f2->len), f2->p);
		}
		if ((rc = optional_columns(r, 3)) != 0)
			return rc;
	} else if (f0->len >= 4 && memcmp(f0->p, "tsc.", 4) == 0) {
		r->kind = TK_CSV_COUNTERS;
		if ((rc = clock_suffix(r, f0, 4)) != 0)
			return rc;
		int i = 1;
		for (; i < r->n_fields; i++) {
			struct field *f = &r->fields[i];
			if (field_is(f, "pid") || field_is(f, "tid"))
				break;
			int inst;
			size_t nlen;
			if (f->len > 6 && memcmp(f->p + f->len - 6, ".COUNT", 6) == 0) {
				inst = 0;
				nlen = f->len - 6;
			} else if (f->len > 5 && memcmp(f->p + f->len - 5, ".INST", 5) == 0) {
				inst = 1;
				nlen = f->len - 5;
			} else {
				return fail(r, TK_EFORMAT, f->off, "counter column \"%.*s\" has neither .COUNT nor .INST",
					    (int)(f->len > 64 ? 64 : f->len), f->p);
			}
			if (!tk__utf8_valid((const unsigned char *)f->p, nlen) || memchr(f->p, 0, nlen))
				return fail(r, TK_EFORMAT, f->off, "counter name is not valid UTF-8");
			for (size_t k = 0; k < r->n_counters; k++)
				if (strlen(r->counter_names[k]) == nlen && memcmp(r->counter_names[k], f->p, nlen) == 0)
					return fail(r, TK_EFORMAT, f->off, "duplicate column \"%.*s\"",
						    (int)(f->len > 64 ? 64 : f->len), f->p);
			char **nn = realloc(r->counter_names, (r->n_counters + 1) * sizeof(*nn));
			if (nn == NULL)
				return fail(r, TK_ENOMEM, SIZE_MAX, "out of memory");
			r->counter_names = nn;
			int *ni = realloc(r->counter_inst, (r->n_counters + 1) * sizeof(*ni));
			if (ni == NULL)
				return fail(r, TK_ENOMEM, SIZE_MAX, "out of memory");
			r->counter_inst = ni;
			char *name = malloc(nlen + 1);
			if (name == NULL)
				return fail(r, TK_ENOMEM, SIZE_MAX, "out of memory");
			memcpy(name, f->p, nlen);
			name[nlen] = 0;
			r->counter_names[r->n_counters] = name;
			r->counter_inst[r->n_counters] = inst;
			r->n_counters++;
		}
		if (r->n_counters == 0)
			return fail(r, TK_EFORMAT, SIZE_MAX, "wrong header: a counter file needs at least one "
							     "Name.COUNT or Name.INST column");
		if ((rc = optional_columns(r, i)) != 0)
			return rc;
		r->values = calloc(r->n_counters, sizeof(*r->values));
		if (r->values == NULL)
			return fail(r, TK_ENOMEM, SIZE_MAX, "out of memory");
	} else {
		return fail(r, TK_EFORMAT, f0->off,
			    "wrong header: expected \"name,start_tsc.<CLOCK>,end_tsc...\" (intervals) or "
			    "\"tsc.<CLOCK>,Name.COUNT|.INST...\" (counters)");
	}
	r->n_cols = r->n_fields;
	return 0;
}

static int open_common(tk_csv_reader **out, const char *label, tk_csv_reader *r)
{
	r->label = strdup(label ? label : "-");
	r->buf = malloc(BUF_CAP);
	r->line = 1;
	if (r->label == NULL || r->buf == NULL) {
		tk_csv_reader_close(r);
		return TK_ENOMEM;
	}
	*out = r;
	return parse_header(r);
}

int tk_csv_reader_open(tk_csv_reader **out, const char *path, const char *label)
{
	if (out == NULL || path == NULL)
		return TK_EINVAL;
	*out = NULL;
	tk_csv_reader *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return TK_ENOMEM;
	if (strcmp(path, "-") == 0) {
		r->fd = 0;
	} else {
		r->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			int e = errno;
			free(r);
			return tk_error_from_errno(e);
		}
		r->own_fd = 1;
#ifdef POSIX_FADV_SEQUENTIAL
		(void)posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	}
	return open_common(out, label ? label : path, r);
}

int tk_csv_reader_open_mem(tk_csv_reader **out, const void *data, size_t len, const char *label)
{
	if (out == NULL || (data == NULL && len > 0))
		return TK_EINVAL;
	*out = NULL;
	tk_csv_reader *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return TK_ENOMEM;
	r->fd = -1;
	r->mem = data ? data : (const void *)"";
	r->mem_len = len;
	return open_common(out, label ? label : "<memory>", r);
}

void tk_csv_reader_close(tk_csv_reader *r)
{
	if (r == NULL)
		return;
	if (r->own_fd)
		close(r->fd);
	for (size_t i = 0; i < r->n_counters; i++)
		free(r->counter_names[i]);
	free(r->counter_names);
	free(r->counter_inst);
	free(r->values);
	free(r->buf);
	free(r->label);
	free(r);
}

tk_csv_kind tk_csv_reader_kind(const tk_csv_reader *r) { return r->kind; }
tk_csv_clock tk_csv_reader_clock(const tk_csv_reader *r) { return r->clock; }
unsigned tk_csv_reader_columns(const tk_csv_reader *r) { return r->columns; }
size_t tk_csv_reader_n_counters(const tk_csv_reader *r) { return r->n_counters; }
const char *tk_csv_reader_errmsg(const tk_csv_reader *r) { return r ? r->err : ""; }
uint64_t tk_csv_reader_offset(const tk_csv_reader *r) { return r->consumed + r->pos; }

const char *tk_csv_reader_counter(const tk_csv_reader *r, size_t i, int *inst)
{
	if (i >= r->n_counters)
		return NULL;
	if (inst)
		*inst = r->counter_inst[i];
	return r->counter_names[i];
}

static int parse_id(tk_csv_reader *r, const struct field *f, const char *what, uint32_t *out, unsigned bit,
		    unsigned *flags)
{
	uint64_t v;
	if (f->len == 0)
		return 0;
	int rc = tk__csv_parse_u64(f->p, f->len, &v);
	if (rc == 0 && v > UINT32_MAX)
		rc = TK_ERANGE;
	if (rc)
		return fail(r, TK_EFORMAT, f->off, "%s \"%.*s\" is not a number from 0 to 4294967295", what,
			    (int)(f->len > 32 ? 32 : f->len), f->p);
	*out = (uint32_t)v;
	*flags |= bit;
	return 0;
}

static int parse_ts(tk_csv_reader *r, const struct field *f, const char *what, uint64_t *out)
{
	/* the common case inline: up to 19 digits cannot overflow */
	if (r->clock != TK_CSV_UTC && f->len > 0 && f->len <= 19) {
		uint64_t v = 0;
		size_t i = 0;
		for (; i < f->len; i++) {
			unsigned d = (unsigned char)f->p[i] - '0';
			if (d > 9)
				break;
			v = v * 10 + d;
		}
		if (i == f->len) {
			*out = v;
			return 0;
		}
	}
	int rc = tk_csv_parse_time(f->p, f->len, r->clock, out);
	if (rc == 0)
		return 0;
	const char *why = rc == TK_ERANGE ? "out of range"
			  : rc == TK_EINVAL ? "negative"
			  : r->clock == TK_CSV_UTC ? "not a date \"YYYY-MM-DD hh:mm:ss[.fraction]\""
						   : "not a number";
	return fail(r, TK_EFORMAT, f->off, "%s timestamp \"%.*s\" is %s", what, (int)(f->len > 40 ? 40 : f->len),
		    f->p, why);
}

int tk_csv_read_row(tk_csv_reader *r, tk_csv_row *row)
{
	if (r == NULL || row == NULL)
		return TK_EINVAL;
	if (r->failed)
		return r->failed;
	int rc = read_record(r);
	if (rc <= 0)
		return rc;
	if (r->n_fields != r->n_cols) {
		size_t off = r->n_fields > r->n_cols ? r->fields[r->n_cols].off : r->rec_len;
		return fail(r, TK_EFORMAT, off, "%d fields, the header has %d", r->n_fields, r->n_cols);
	}
	memset(row, 0, sizeof(*row));
	row->line = r->rec_line;
	if (r->pid_col >= 0 && (rc = parse_id(r, &r->fields[r->pid_col], "pid", &row->pid, TK_CSV_HAS_PID, &row->flags)))
		return rc;
	if (r->tid_col >= 0 && (rc = parse_id(r, &r->fields[r->tid_col], "tid", &row->tid, TK_CSV_HAS_TID, &row->flags)))
		return rc;
	if (r->kind == TK_CSV_INTERVALS) {
		struct field *n = &r->fields[0];
		if (n->len == 0)
			return fail(r, TK_EFORMAT, n->off, "empty name");
		if (memchr(n->p, 0, n->len) != NULL || !tk__utf8_valid((const unsigned char *)n->p, n->len))
			return fail(r, TK_EFORMAT, n->off, "name is not valid UTF-8");
		if ((rc = parse_ts(r, &r->fields[1], "start", &row->start)) ||
		    (rc = parse_ts(r, &r->fields[2], "end", &row->end)))
			return rc;
		if (row->end < row->start)
			return fail(r, TK_EFORMAT, r->fields[2].off, "end before start");
		n->p[n->len] = 0; /* the comma after it, or the quote */
		row->name = n->p;
		row->name_len = n->len;
	} else {
		if ((rc = parse_ts(r, &r->fields[0], "", &row->time)))
			return rc;
		for (size_t i = 0; i < r->n_counters; i++) {
			struct field *f = &r->fields[1 + i];
			if ((rc = tk__csv_parse_value(f->p, f->len, &r->values[i])) != 0)
				return fail(r, TK_EFORMAT, f->off, "counter value \"%.*s\" is not a number",
					    (int)(f->len > 40 ? 40 : f->len), f->p);
		}
		row->values = r->values;
		row->n_values = r->n_counters;
	}
	return 1;
}
