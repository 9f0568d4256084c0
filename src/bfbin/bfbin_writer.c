/* SPDX-License-Identifier: MIT */
/*
 * The .byfl writer: produces exactly the bytes of the Byfl run-time library
 * (lib/byfl/binaryoutput.h: tags as single bytes, integers big-endian, strings as a u16
 * length and their bytes), so Byfl's parser and converters read its files.
 *
 * Layout it produces (see tracekit/bfbin.h):
 *   "BYFLBIN"
 *   0x01 str(name) (type str(column))* 0x00 (0x01 value*)* 0x00      per basic table
 *   0x02 str(name) (type str(key) value)* 0x00                       per key:value table
 *   0x00                                                             at close
 *
 * Every check (state, type, string length, reader limits) happens before a byte is
 * buffered, so a refused call leaves the file well-formed. Bytes are collected in a
 * 64 KiB buffer and written with write(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/tk_bytes.h"
#include "tracekit/bfbin_writer.h"

#define BW_BUF_SIZE ((size_t)64 << 10)
#define BW_NAME_IN_MSG 64

enum bw_state {
	BW_TOP,         /* between tables */
	BW_BASIC_COLS,  /* basic table, column list still open */
	BW_BASIC_ROWS,  /* basic table, rows */
	BW_KEYVAL,      /* key:value table */
	BW_CLOSED
};

struct tk_bfbin_writer {
	int fd;
	tk_outfile *outfile; /* "<path>.part" being written, or NULL */
	int own_fd;          /* fd opened here without tk_outfile (live or non-regular path) */
	unsigned flags;
	int err;             /* sticky I/O error */
	enum bw_state state;
	unsigned char *types; /* column types of the current basic table */
	size_t ncols, types_cap;
	size_t col;           /* values given in the current row */
	uint64_t row;         /* rows finished in the current table */
	uint64_t kv_bytes;    /* encoded size of the current key:value table */
	uint64_t bytes;       /* bytes produced, buffered ones included */
	size_t n;             /* bytes in buf */
	char path[512];       /* for messages */
	char table[BW_NAME_IN_MSG + 4];
	char errmsg[512];
	unsigned char *buf; /* BW_BUF_SIZE bytes, not zeroed: a writer is cheap to open */
};

static int bw_fail(tk_bfbin_writer *w, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bw_fail(tk_bfbin_writer *w, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

/* Writes the buffer out. I/O errors are sticky. */
static int bw_flush_buf(tk_bfbin_writer *w)
{
	const unsigned char *p = w->buf;
	size_t left = w->n;

	if (w->err != TK_OK)
		return w->err;
	while (left > 0) {
		ssize_t k = write(w->fd, p, left);
		if (k < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			w->err = tk_error_from_errno(e);
			return bw_fail(w, w->err, "cannot write %s at byte offset %llu: %s", w->path,
				       (unsigned long long)(w->bytes - left), strerror(e));
		}
		p += k;
		left -= (size_t)k;
	}
	w->n = 0;
	return TK_OK;
}

static int bw_put(tk_bfbin_writer *w, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len > 0) {
		size_t room = BW_BUF_SIZE - w->n, k = len < room ? len : room;
		memcpy(w->buf + w->n, p, k);
		w->n += k;
		w->bytes += k;
		p += k;
		len -= k;
		if (w->n == BW_BUF_SIZE && bw_flush_buf(w) != TK_OK)
			return w->err;
	}
	return TK_OK;
}

static int bw_byte(tk_bfbin_writer *w, unsigned v)
{
	unsigned char b = (unsigned char)v;

	if (w->n < BW_BUF_SIZE) { /* fast path: the buffer is flushed as soon as it fills */
		w->buf[w->n++] = b;
		w->bytes++;
		return TK_OK;
	}
	return bw_put(w, &b, 1);
}

static int bw_u64(tk_bfbin_writer *w, uint64_t v)
{
	unsigned char b[8];

	tk__store64(b, tk__cs64(!TK__HOST_BIG_ENDIAN, v)); /* big-endian */
	return bw_put(w, b, 8);
}

/* A string of known valid length (<= TK_BFBIN_MAX_STRING): u16 length, then the bytes. */
static int bw_str(tk_bfbin_writer *w, const char *s, size_t len)
{
	unsigned char b[2];
	int rc;

	tk__store16(b, tk__cs16(!TK__HOST_BIG_ENDIAN, (uint16_t)len)); /* big-endian */
	rc = bw_put(w, b, 2);

	return rc == TK_OK ? bw_put(w, s, len) : rc;
}

static int bw_check_str(tk_bfbin_writer *w, const char *s, const char *what, size_t *len)
{
	*len = 0; /* defined on every path, for the compiler's flow analysis */
	if (s == NULL)
		return bw_fail(w, TK_EINVAL, "%s is NULL", what);
	*len = strlen(s);
	if (*len > TK_BFBIN_MAX_STRING)
		return bw_fail(w, TK_ETOOBIG, "%s of %zu bytes exceeds the format's limit of %u bytes (table \"%s\")",
			       what, *len, TK_BFBIN_MAX_STRING, w->table);
	return TK_OK;
}

/* Common entry checks: a usable writer without a sticky error. */
static int bw_usable(tk_bfbin_writer *w)
{
	if (w == NULL)
		return TK_EINVAL;
	if (w->err != TK_OK)
		return w->err;
	if (w->state == BW_CLOSED)
		return bw_fail(w, TK_ESTATE, "the writer is closed");
	return TK_OK;
}

static void bw_set_table(tk_bfbin_writer *w, const char *name, size_t len)
{
	size_t n = len > BW_NAME_IN_MSG ? BW_NAME_IN_MSG : len;

	memcpy(w->table, name, n);
	if (len > n)
		memcpy(w->table + n, "...", 4);
	else
		w->table[n] = '\0';
}

static int bw_new(tk_bfbin_writer **out, tk_bfbin_writer **w, const char *path)
{
	if (out == NULL)
		return TK_EINVAL;
	*out = NULL;
	*w = calloc(1, sizeof(**w));
	if (*w == NULL)
		return TK_ENOMEM;
	(*w)->buf = malloc(BW_BUF_SIZE);
	if ((*w)->buf == NULL) {
		free(*w);
		*w = NULL;
		return TK_ENOMEM;
	}
	(*w)->fd = -1;
	snprintf((*w)->path, sizeof((*w)->path), "%s", path);
	return TK_OK;
}

static int bw_start(tk_bfbin_writer **out, tk_bfbin_writer *w)
{
	int rc = bw_put(w, TK_BFBIN_MAGIC, TK_BFBIN_MAGIC_LEN);

	if (rc != TK_OK) {
		tk_bfbin_writer_abort(w);
		return rc;
	}
	*out = w;
	return TK_OK;
}

int tk_bfbin_writer_open_fd(tk_bfbin_writer **out, int fd)
{
	tk_bfbin_writer *w;
	char name[32];
	int rc;

	if (fd < 0)
		return TK_EINVAL;
	snprintf(name, sizeof(name), "descriptor %d", fd);
	rc = bw_new(out, &w, name);
	if (rc != TK_OK)
		return rc;
	w->fd = fd;
	return bw_start(out, w);
}

int tk_bfbin_writer_open(tk_bfbin_writer **out, const char *path, unsigned flags)
{
	tk_bfbin_writer *w;
	struct stat sb;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (path == NULL || path[0] == '\0' || (flags & ~TK_BFBIN_WRITER_LIVE) != 0)
		return TK_EINVAL;
	rc = bw_new(out, &w, path);
	if (rc != TK_OK)
		return rc;
	w->flags = flags;
	if (strcmp(path, "-") != 0 && ((flags & TK_BFBIN_WRITER_LIVE) || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)))) {
		/* Live readers follow the final name; a pipe or device cannot be renamed onto. */
		int oflags = O_WRONLY | O_CLOEXEC | ((flags & TK_BFBIN_WRITER_LIVE) ? O_CREAT | O_TRUNC : 0);
		w->fd = open(path, oflags, 0644);
		if (w->fd < 0) {
			rc = tk_error_from_errno(errno);
			free(w->buf);
			free(w);
			return rc;
		}
		w->own_fd = 1;
	} else {
		rc = tk_outfile_open(&w->outfile, path, 0);
		if (rc != TK_OK) {
			free(w->buf);
			free(w);
			return rc;
		}
		/* Bytes go out with write(2); nothing is ever buffered in the stdio stream. */
		w->fd = fileno(tk_outfile_stream(w->outfile));
	}
	return bw_start(out, w);
}

int tk_bfbin_begin_basic(tk_bfbin_writer *w, const char *name)
{
	size_t len;
	int rc = bw_usable(w);

	if (rc != TK_OK)
		return rc;
	if (w->state != BW_TOP)
		return bw_fail(w, TK_ESTATE, "tk_bfbin_begin_basic: table \"%s\" is still open", w->table);
	if ((rc = bw_check_str(w, name, "a table name", &len)) != TK_OK)
		return rc;
	bw_set_table(w, name, len);
	if ((rc = bw_byte(w, TK_BFBIN_TABLE_BASIC)) != TK_OK || (rc = bw_str(w, name, len)) != TK_OK)
		return rc;
	w->state = BW_BASIC_COLS;
	w->ncols = 0;
	w->col = 0;
	w->row = 0;
	return TK_OK;
}

int tk_bfbin_add_column(tk_bfbin_writer *w, tk_bfbin_type type, const char *name)
{
	size_t len;
	int rc = bw_usable(w);

	if (rc != TK_OK)
		return rc;
	if (w->state != BW_BASIC_COLS)
		return bw_fail(w, TK_ESTATE, "tk_bfbin_add_column: columns must be added to a basic table before its first row");
	if (type != TK_BFBIN_UINT64 && type != TK_BFBIN_STRING && type != TK_BFBIN_BOOL)
		return bw_fail(w, TK_EINVAL, "tk_bfbin_add_column: unknown column type %d", (int)type);
	if ((rc = bw_check_str(w, name, "a column name", &len)) != TK_OK)
		return rc;
	if (w->ncols == TK_BFBIN_MAX_COLUMNS)
		return bw_fail(w, TK_ETOOBIG, "table \"%s\" would have more than %u columns", w->table,
			       TK_BFBIN_MAX_COLUMNS);
	if (w->ncols == w->types_cap) {
		size_t cap = w->types_cap ? w->types_cap * 2 : 64;
		unsigned char *nt = realloc(w->types, cap);
		if (nt == NULL)
			return bw_fail(w, TK_ENOMEM, "out of memory");
		w->types = nt;
		w->types_cap = cap;
	}
	if ((rc = bw_byte(w, (unsigned)type)) != TK_OK || (rc = bw_str(w, name, len)) != TK_OK)
		return rc;
	w->types[w->ncols++] = (unsigned char)type;
	return TK_OK;
}

/* Checks that a value of `type` may come next and starts the row if needed. */
static int bw_value(tk_bfbin_writer *w, tk_bfbin_type type, const char *fn)
{
	static const char *const type_names[] = { "?", "uint64", "string", "bool" };
	int rc = bw_usable(w);

	if (rc != TK_OK)
		return rc;
	if (w->state != BW_BASIC_COLS && w->state != BW_BASIC_ROWS)
		return bw_fail(w, TK_ESTATE, "%s: no basic table is open", fn);
	if (w->col == w->ncols)
		return bw_fail(w, TK_ESTATE, "%s: row %llu of table \"%s\" already has all %zu values (call tk_bfbin_end_row)",
			       fn, (unsigned long long)w->row + 1, w->table, w->ncols);
	if (w->types[w->col] != type)
		return bw_fail(w, TK_EINVAL, "%s: column %zu of table \"%s\" holds %s values", fn, w->col + 1, w->table,
			       type_names[w->types[w->col]]);
	return TK_OK;
}

/* Writes what must precede the first value of a row. Called after every check passed. */
static int bw_row_prefix(tk_bfbin_writer *w)
{
	int rc;

	if (w->state == BW_BASIC_COLS) {
		if ((rc = bw_byte(w, TK_BFBIN_TAG_END)) != TK_OK)
			return rc;
		w->state = BW_BASIC_ROWS;
	}
	return w->col == 0 ? bw_byte(w, TK_BFBIN_ROW_DATA) : TK_OK;
}

int tk_bfbin_put_uint64(tk_bfbin_writer *w, uint64_t value)
{
	int rc = bw_value(w, TK_BFBIN_UINT64, "tk_bfbin_put_uint64");

	if (rc != TK_OK || (rc = bw_row_prefix(w)) != TK_OK || (rc = bw_u64(w, value)) != TK_OK)
		return rc;
	w->col++;
	return TK_OK;
}

int tk_bfbin_put_string(tk_bfbin_writer *w, const char *value)
{
	size_t len;
	int rc = bw_value(w, TK_BFBIN_STRING, "tk_bfbin_put_string");

	if (rc != TK_OK || (rc = bw_check_str(w, value, "a string value", &len)) != TK_OK)
		return rc;
	if ((rc = bw_row_prefix(w)) != TK_OK || (rc = bw_str(w, value, len)) != TK_OK)
		return rc;
	w->col++;
	return TK_OK;
}

int tk_bfbin_put_bool(tk_bfbin_writer *w, int value)
{
	int rc = bw_value(w, TK_BFBIN_BOOL, "tk_bfbin_put_bool");

	if (rc != TK_OK || (rc = bw_row_prefix(w)) != TK_OK || (rc = bw_byte(w, value != 0)) != TK_OK)
		return rc;
	w->col++;
	return TK_OK;
}

int tk_bfbin_end_row(tk_bfbin_writer *w)
{
	int rc = bw_usable(w);

	if (rc != TK_OK)
		return rc;
	if (w->state != BW_BASIC_COLS && w->state != BW_BASIC_ROWS)
		return bw_fail(w, TK_ESTATE, "tk_bfbin_end_row: no basic table is open");
	if (w->col != w->ncols)
		return bw_fail(w, TK_ESTATE, "tk_bfbin_end_row: row %llu of table \"%s\" has %zu of its %zu values",
			       (unsigned long long)w->row + 1, w->table, w->col, w->ncols);
	if (w->ncols == 0 && (rc = bw_row_prefix(w)) != TK_OK) /* a row of a table without columns */
		return rc;
	w->col = 0;
	w->row++;
	return TK_OK;
}

int tk_bfbin_begin_keyval(tk_bfbin_writer *w, const char *name)
{
	size_t len;
	int rc = bw_usable(w);

	if (rc != TK_OK)
		return rc;
	if (w->state != BW_TOP)
		return bw_fail(w, TK_ESTATE, "tk_bfbin_begin_keyval: table \"%s\" is still open", w->table);
	if ((rc = bw_check_str(w, name, "a table name", &len)) != TK_OK)
		return rc;
	bw_set_table(w, name, len);
	if ((rc = bw_byte(w, TK_BFBIN_TABLE_KEYVAL)) != TK_OK || (rc = bw_str(w, name, len)) != TK_OK)
		return rc;
	w->state = BW_KEYVAL;
	w->ncols = 0;
	w->kv_bytes = 0;
	return TK_OK;
}

/* Checks a key:value entry of `value_bytes` encoded value bytes against the reader's limits. */
static int bw_kv_check(tk_bfbin_writer *w, const char *key, size_t *key_len, size_t value_bytes, const char *fn)
{
	int rc = bw_usable(w);

	*key_len = 0;
	if (rc != TK_OK)
		return rc;
	if (w->state != BW_KEYVAL)
		return bw_fail(w, TK_ESTATE, "%s: no key:value table is open", fn);
	if ((rc = bw_check_str(w, key, "a key", key_len)) != TK_OK)
		return rc;
	if (w->ncols == TK_BFBIN_MAX_COLUMNS ||
	    w->kv_bytes + 3 + *key_len + value_bytes > TK_BFBIN_MAX_KEYVAL_BYTES)
		return bw_fail(w, TK_ETOOBIG, "%s: key:value table \"%s\" would exceed the reader's limits (%u keys, %u bytes)",
			       fn, w->table, TK_BFBIN_MAX_COLUMNS, TK_BFBIN_MAX_KEYVAL_BYTES);
	return TK_OK;
}

static int bw_kv_head(tk_bfbin_writer *w, tk_bfbin_type type, const char *key, size_t key_len, size_t value_bytes)
{
	int rc;

	if ((rc = bw_byte(w, (unsigned)type)) != TK_OK || (rc = bw_str(w, key, key_len)) != TK_OK)
		return rc;
	w->ncols++;
	w->kv_bytes += 3 + key_len + value_bytes;
	return TK_OK;
}

int tk_bfbin_kv_uint64(tk_bfbin_writer *w, const char *key, uint64_t value)
{
	size_t key_len;
	int rc = bw_kv_check(w, key, &key_len, 8, "tk_bfbin_kv_uint64");

	if (rc != TK_OK || (rc = bw_kv_head(w, TK_BFBIN_UINT64, key, key_len, 8)) != TK_OK)
		return rc;
	return bw_u64(w, value);
}

int tk_bfbin_kv_string(tk_bfbin_writer *w, const char *key, const char *value)
{
	size_t key_len, len;
	int rc = bw_usable(w);

	if (rc != TK_OK)
		return rc;
	if (w->state != BW_KEYVAL)
		return bw_fail(w, TK_ESTATE, "tk_bfbin_kv_string: no key:value table is open");
	if ((rc = bw_check_str(w, value, "a string value", &len)) != TK_OK ||
	    (rc = bw_kv_check(w, key, &key_len, 2 + len, "tk_bfbin_kv_string")) != TK_OK)
		return rc;
	if ((rc = bw_kv_head(w, TK_BFBIN_STRING, key, key_len, 2 + len)) != TK_OK)
		return rc;
	return bw_str(w, value, len);
}

int tk_bfbin_kv_bool(tk_bfbin_writer *w, const char *key, int value)
{
	size_t key_len;
	int rc = bw_kv_check(w, key, &key_len, 1, "tk_bfbin_kv_bool");

	if (rc != TK_OK || (rc = bw_kv_head(w, TK_BFBIN_BOOL, key, key_len, 1)) != TK_OK)
		return rc;
	return bw_byte(w, value != 0);
}

int tk_bfbin_end_table(tk_bfbin_writer *w)
{
	int rc = bw_usable(w);

	if (rc != TK_OK)
		return rc;
	switch (w->state) {
	case BW_BASIC_COLS: /* no row at all: end the column list, then the (empty) rows */
		if ((rc = bw_byte(w, TK_BFBIN_TAG_END)) != TK_OK || (rc = bw_byte(w, TK_BFBIN_TAG_END)) != TK_OK)
			return rc;
		break;
	case BW_BASIC_ROWS:
		if (w->col != 0)
			return bw_fail(w, TK_ESTATE, "tk_bfbin_end_table: row %llu of table \"%s\" has %zu of its %zu values",
				       (unsigned long long)w->row + 1, w->table, w->col, w->ncols);
		if ((rc = bw_byte(w, TK_BFBIN_TAG_END)) != TK_OK)
			return rc;
		break;
	case BW_KEYVAL:
		if ((rc = bw_byte(w, TK_BFBIN_TAG_END)) != TK_OK)
			return rc;
		break;
	default:
		return bw_fail(w, TK_ESTATE, "tk_bfbin_end_table: no table is open");
	}
	w->state = BW_TOP;
	if (w->flags & TK_BFBIN_WRITER_LIVE)
		return bw_flush_buf(w);
	return TK_OK;
}

int tk_bfbin_writer_flush(tk_bfbin_writer *w)
{
	int rc = bw_usable(w);

	return rc != TK_OK ? rc : bw_flush_buf(w);
}

uint64_t tk_bfbin_writer_bytes(const tk_bfbin_writer *w)
{
	return w != NULL ? w->bytes : 0;
}

const char *tk_bfbin_writer_errmsg(const tk_bfbin_writer *w)
{
	return w != NULL ? w->errmsg : "";
}

int tk_bfbin_writer_close(tk_bfbin_writer *w)
{
	int rc;

	if (w == NULL)
		return TK_OK;
	rc = bw_usable(w);
	if (rc == TK_OK && w->state != BW_TOP)
		rc = tk_bfbin_end_table(w);
	if (rc == TK_OK)
		rc = bw_byte(w, TK_BFBIN_TAG_END);
	if (rc == TK_OK)
		rc = bw_flush_buf(w);
	if (rc != TK_OK) {
		tk_bfbin_writer_abort(w);
		return rc;
	}
	if (w->outfile != NULL) {
		rc = tk_outfile_commit(w->outfile);
	} else if (w->own_fd) {
		if (fsync(w->fd) != 0 && errno != EINVAL && errno != EROFS)
			rc = tk_error_from_errno(errno);
		if (close(w->fd) != 0 && rc == TK_OK)
			rc = tk_error_from_errno(errno);
	}
	free(w->types);
	free(w->buf);
	free(w);
	return rc;
}

void tk_bfbin_writer_abort(tk_bfbin_writer *w)
{
	if (w == NULL)
		return;
	if (w->outfile != NULL)
		tk_outfile_abort(w->outfile);
	else if (w->own_fd)
		close(w->fd);
	free(w->types);
	free(w->buf);
	free(w);
}
