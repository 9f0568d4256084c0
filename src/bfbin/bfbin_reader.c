/* SPDX-License-Identifier: MIT */
/*
 * The .byfl reader: bf_process_byfl_file() and tk_bfbin_parse*().
 *
 * Byte layout (big-endian; docs/byfl-format.md is the specification):
 *   "BYFLBIN"                                         7-byte magic, nothing else in a header
 *   0x01 u16 len, name  (tag u16 len, colname)* 0x00  basic table: column list ...
 *        (0x01 value(col 1) ... value(col N))* 0x00   ... then rows, 0x00 ends the table
 *   0x02 u16 len, name  (tag u16 len, key value)* 0x00   key:value table (one implicit row)
 *   0x00                                              end of file (bytes after it are ignored)
 * with tag 0x01 uint64 (8 bytes), 0x02 string (u16 length, bytes, no NUL), 0x03 bool (1 byte).
 *
 * The file is read with read(2) in 1 MiB blocks into one buffer that also serves as the
 * string storage: a string handed to a callback is NUL-terminated in place by saving the
 * byte after it and restoring it when the callback returns (the buffer keeps one spare
 * byte past its capacity for a string that ends exactly at the end of the data). A
 * key:value table is scanned completely before its first callback, because its column
 * callbacks must all come before its data callbacks; that is the only case where the
 * buffer grows beyond 1 MiB (up to TK_BFBIN_MAX_KEYVAL_BYTES).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bfbin/bfbin_internal.h"
#include "tracekit/bfbin.h"

#define BF_CHUNK ((size_t)1 << 20)      /* buffer size for files and pipes */
#define BF_MEM_MIN_CAP ((size_t)4096)   /* smallest buffer for in-memory input */
#define BF_HARD_LIMIT ((size_t)TK_BFBIN_MAX_KEYVAL_BYTES + ((size_t)1 << 18))
#define BF_POLL_MIN_MS 1u
#define BF_POLL_MAX_MS 50u
#define BF_NAME_IN_MSG 200 /* a table name longer than this is cut in messages */

struct bf_parser {
	/* buffered input: unread bytes are buf[pos..end), buf[0] is at file offset base */
	unsigned char *buf; /* cap + 1 bytes */
	size_t cap, pos, end;
	uint64_t base;
	int fd;     /* -1 for memory input */
	int is_reg; /* a regular file: in live mode its end is only "no data yet" */
	const unsigned char *mem;
	size_t mem_len, mem_off;
	size_t max_read; /* most bytes per read, 0: no limit (a test hook sets it) */
	const char *name;

	int live;
	unsigned timeout_ms;
	const volatile sig_atomic_t *stop;
	const volatile sig_atomic_t *stop2; /* a converter's own flag */
	void (*idle_cb)(void *user_data);
	void (*progress_cb)(void *user_data, uint64_t done, uint64_t total);
	uint64_t start;       /* file offset where parsing began */
	uint64_t total;       /* bytes to parse from there, 0 when unknown */
	uint64_t last_done;   /* last value given to progress_cb */
	int timed_out;
	int read_errno;
	int in_table;       /* messages name the table being read */
	uint64_t table_off; /* where its tag is */

	const bfbin_callback_t *cb;
	void *ud;

	unsigned char *types; /* column types of the current basic table */
	size_t types_cap;
	char table[BF_NAME_IN_MSG + 4]; /* current table name, for messages */

	char msg[1024 + 2 * BF_NAME_IN_MSG];
};

#define CB0(p, field)                                            \
	do {                                                     \
		void (*cb_fn_)(void *) = (p)->cb->field;         \
		if (cb_fn_ != NULL)                              \
			cb_fn_((p)->ud);                         \
	} while (0)

#define CB_STR(p, field, s)                                                  \
	do {                                                                 \
		void (*cb_fn_)(void *, const char *) = (p)->cb->field;       \
		if (cb_fn_ != NULL)                                          \
			cb_fn_((p)->ud, (s));                                \
	} while (0)

/*
 * The flags may be set by a signal handler or by another thread: read them atomically
 * (a plain volatile read would be a data race with a thread's atomic store).
 */
static int bf_stopped(const struct bf_parser *p)
{
	return (p->stop != NULL && __atomic_load_n(p->stop, __ATOMIC_RELAXED) != 0) ||
	       (p->stop2 != NULL && __atomic_load_n(p->stop2, __ATOMIC_RELAXED) != 0);
}

static uint64_t bf_offset(const struct bf_parser *p, size_t rel)
{
	return p->base + p->pos + rel;
}

static int bf_msg(struct bf_parser *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bf_msg(struct bf_parser *p, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
	va_end(ap);
	return code;
}

static uint64_t bf_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void bf_sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L };

	nanosleep(&ts, NULL); /* an early wake-up (signal) only shortens one poll */
}

static ssize_t bf_read(struct bf_parser *p, unsigned char *dst, size_t room)
{
	if (p->max_read != 0 && room > p->max_read)
		room = p->max_read;
	if (p->fd < 0) {
		size_t n = p->mem_len - p->mem_off;
		if (n > room)
			n = room;
		memcpy(dst, p->mem + p->mem_off, n);
		p->mem_off += n;
		return (ssize_t)n;
	}
	return read(p->fd, dst, room);
}

/* Reports the bytes consumed so far (never fewer than last time, never beyond total). */
static void bf_progress(struct bf_parser *p, uint64_t done)
{
	if (p->progress_cb == NULL)
		return;
	if (p->total != 0 && done > p->total)
		done = p->total; /* a regular file that grew after it was measured */
	if (done < p->last_done)
		done = p->last_done;
	p->last_done = done;
	p->progress_cb(p->ud, done, p->total);
}

/*
 * Makes at least `need` unread bytes available. Returns 0, or TK_ETRUNC (the input
 * ended, or the live timeout expired), TK_EIO (read_errno set), TK_ENOMEM, TK_ETOOBIG,
 * TK_ECANCELED. Never one system call per byte: each read asks for all the free space.
 */
static int bf_fill(struct bf_parser *p, size_t need)
{
	unsigned sleep_ms = BF_POLL_MIN_MS;
	uint64_t stall_start = 0;
	int idle_done = 0;

	if (need > BF_HARD_LIMIT)
		return TK_ETOOBIG;
	while (p->end - p->pos < need) {
		ssize_t n;

		if (p->pos > 0) { /* what is left is shorter than need: cheap to move */
			memmove(p->buf, p->buf + p->pos, p->end - p->pos);
			p->base += p->pos;
			p->end -= p->pos;
			p->pos = 0;
		}
		if (p->cap < need) {
			size_t cap = p->cap;
			unsigned char *nb;
			while (cap < need)
				cap *= 2;
			if (cap > BF_HARD_LIMIT)
				cap = BF_HARD_LIMIT;
			nb = realloc(p->buf, cap + 1);
			if (nb == NULL)
				return TK_ENOMEM;
			p->buf = nb;
			p->cap = cap;
		}
		if (p->live && p->idle_cb != NULL && !idle_done && p->fd >= 0 && !p->is_reg) {
			/* About to block on a pipe that has nothing for us: let the client flush. */
			struct pollfd pfd = { p->fd, POLLIN, 0 };
			if (poll(&pfd, 1, 0) == 0) {
				p->idle_cb(p->ud);
				idle_done = 1;
			}
		}
		if (p->progress_cb != NULL && !stall_start)
			bf_progress(p, p->base + p->pos - p->start);
		n = bf_read(p, p->buf + p->end, p->cap - p->end);
		if (n > 0) {
			p->end += (size_t)n;
			sleep_ms = BF_POLL_MIN_MS;
			stall_start = 0;
			idle_done = 0;
			continue;
		}
		if (n < 0) {
			if (errno == EINTR) {
				if (bf_stopped(p))
					return TK_ECANCELED;
				continue;
			}
			p->read_errno = errno;
			return TK_EIO;
		}
		/* No data now. Without live input that is the end of the file. */
		if (!p->live || p->fd < 0)
			return TK_ETRUNC;
		if (bf_stopped(p))
			return TK_ECANCELED;
		if (p->idle_cb != NULL && !idle_done) {
			p->idle_cb(p->ud);
			idle_done = 1;
		}
		if (stall_start == 0) {
			stall_start = bf_now_ms();
		} else if (p->timeout_ms != 0 && bf_now_ms() - stall_start >= p->timeout_ms) {
			p->timed_out = 1;
			return TK_ETRUNC;
		}
		/* read(2) has no sticky end-of-file, unlike stdio: the next read sees appended data. */
		bf_sleep_ms(sleep_ms);
		if (sleep_ms < BF_POLL_MAX_MS)
			sleep_ms = sleep_ms * 2 > BF_POLL_MAX_MS ? BF_POLL_MAX_MS : sleep_ms * 2;
	}
	return TK_OK;
}

/*
 * Turns a bf_fill() failure while reading `what` (which starts `rel` bytes after pos)
 * into the reader's message.
 */
static int bf_fill_failed(struct bf_parser *p, int rc, size_t rel, const char *what)
{
	unsigned long long off = (unsigned long long)bf_offset(p, rel);
	const char *of = p->in_table ? " of table \"" : "", *table = p->in_table ? p->table : "";
	const char *quote = p->in_table ? "\"" : "";

	switch (rc) {
	case TK_ETRUNC:
		if (p->timed_out)
			return bf_msg(p, rc, "Failed to read %s%s%s%s from %s at byte offset %llu (no new data for %u ms)",
				      what, of, table, quote, p->name, off, p->timeout_ms);
		return bf_msg(p, rc, "Failed to read %s%s%s%s from %s at byte offset %llu (file is truncated)", what,
			      of, table, quote, p->name, off);
	case TK_EIO:
		return bf_msg(p, rc, "Failed to read from %s at byte offset %llu (%s)", p->name,
			      (unsigned long long)(p->base + p->end), strerror(p->read_errno));
	case TK_ENOMEM:
		return bf_msg(p, rc, "Failed to allocate %zu bytes of memory (%s)", p->cap * 2 + 1, strerror(ENOMEM));
	case TK_ETOOBIG:
		return bf_msg(p, rc, "%s: key:value table \"%s\" at byte offset %llu is larger than %u bytes", p->name,
			      p->table, (unsigned long long)p->table_off, TK_BFBIN_MAX_KEYVAL_BYTES);
	default:
		return rc;
	}
}

/* Ensures n bytes at pos + rel; `what` names the item for the message. */
#define BF_NEED(p, rel, n, what)                                                   \
	do {                                                                       \
		if ((p)->end - (p)->pos < (size_t)(rel) + (size_t)(n)) {           \
			int need_rc_ = bf_fill((p), (size_t)(rel) + (size_t)(n));  \
			if (need_rc_ != TK_OK)                                     \
				return bf_fill_failed((p), need_rc_, (rel), (what)); \
		}                                                                  \
	} while (0)

static inline uint16_t bf_be16(const unsigned char *b)
{
	return (uint16_t)((unsigned)b[0] << 8 | b[1]);
}

static inline uint64_t bf_be64(const unsigned char *b)
{
	uint64_t v;

	memcpy(&v, b, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/*
 * Makes a whole u16-length-prefixed string available at pos + rel; returns its length
 * in *len. The string's bytes start at pos + rel + 2. `what` names it without an article
 * ("column name") for the messages.
 */
static int bf_need_string(struct bf_parser *p, size_t rel, size_t *len, const char *what)
{
	char item[64];
	size_t n;

	*len = 0; /* defined on every path, for the compiler's flow analysis */
	if (p->end - p->pos < rel + 2) {
		int rc = bf_fill(p, rel + 2);
		if (rc != TK_OK) {
			snprintf(item, sizeof(item), "the length of a %s", what);
			return bf_fill_failed(p, rc, rel, item);
		}
	}
	n = bf_be16(p->buf + p->pos + rel);
	if (p->end - p->pos < rel + 2 + n) {
		int rc = bf_fill(p, rel + 2 + n);
		if (rc != TK_OK) {
			snprintf(item, sizeof(item), "a %zu-byte %s", n, what);
			return bf_fill_failed(p, rc, rel + 2, item);
		}
	}
	*len = n;
	return TK_OK;
}

/* Calls fn(ud, string) with the len bytes at pos + rel NUL-terminated in place. */
static inline void bf_call_str(struct bf_parser *p, void (*fn)(void *, const char *), size_t rel, size_t len)
{
	char *s = (char *)p->buf + p->pos + rel;
	char saved = s[len]; /* s[len] is at most buf[cap], the spare byte */

	s[len] = '\0';
	fn(p->ud, s);
	s[len] = saved;
}

static void bf_set_table(struct bf_parser *p, const unsigned char *name, size_t len)
{
	size_t n = len > BF_NAME_IN_MSG ? BF_NAME_IN_MSG : len;

	memcpy(p->table, name, n);
	if (len > n)
		memcpy(p->table + n, "...", 4);
	else
		p->table[n] = '\0';
	/* A NUL inside the name ends it, as it would for every callback. */
}

static int bf_column_cb(struct bf_parser *p, unsigned type, size_t rel, size_t len)
{
	void (*fn)(void *, const char *);

	switch (type) {
	case TK_BFBIN_UINT64:
		fn = p->cb->column_uint64_cb;
		break;
	case TK_BFBIN_STRING:
		fn = p->cb->column_string_cb;
		break;
	default:
		fn = p->cb->column_bool_cb;
		break;
	}
	if (fn != NULL)
		bf_call_str(p, fn, rel, len);
	return TK_OK;
}

static int bf_basic_table(struct bf_parser *p)
{
	size_t ncols = 0, i;

	CB0(p, column_begin_cb);
	for (;;) {
		unsigned tag;
		size_t len;
		int rc;

		BF_NEED(p, 0, 1, "a column tag");
		tag = p->buf[p->pos];
		if (tag == TK_BFBIN_TAG_END) {
			p->pos++;
			break;
		}
		if ((ncols & 1023) == 1023 && bf_stopped(p)) /* a million columns take a while */
			return TK_ECANCELED;
		if (tag > TK_BFBIN_BOOL)
			return bf_msg(p, TK_ECORRUPT, "%s is corrupt at byte offset %llu: unknown column tag 0x%02x in table \"%s\"",
				      p->name, (unsigned long long)bf_offset(p, 0), tag, p->table);
		if (ncols == TK_BFBIN_MAX_COLUMNS)
			return bf_msg(p, TK_ETOOBIG, "%s: table \"%s\" at byte offset %llu has more than %u columns", p->name,
				      p->table, (unsigned long long)p->table_off, TK_BFBIN_MAX_COLUMNS);
		if (ncols == p->types_cap) {
			size_t cap = p->types_cap ? p->types_cap * 2 : 64;
			unsigned char *nt = realloc(p->types, cap);
			if (nt == NULL)
				return bf_msg(p, TK_ENOMEM, "Failed to allocate %zu bytes of memory (%s)", cap,
					      strerror(ENOMEM));
			p->types = nt;
			p->types_cap = cap;
		}
		p->types[ncols++] = (unsigned char)tag;
		rc = bf_need_string(p, 1, &len, "column name");
		if (rc != TK_OK)
			return rc;
		bf_column_cb(p, tag, 3, len);
		p->pos += 3 + len;
	}
	CB0(p, column_end_cb);

	for (;;) {
		unsigned tag;

		if (bf_stopped(p))
			return TK_ECANCELED;
		if (p->end == p->pos)
			BF_NEED(p, 0, 1, "a row tag");
		tag = p->buf[p->pos];
		if (tag == TK_BFBIN_TAG_END) {
			p->pos++;
			break;
		}
		if (tag != TK_BFBIN_ROW_DATA)
			return bf_msg(p, TK_ECORRUPT, "%s is corrupt at byte offset %llu: unknown row tag 0x%02x in table \"%s\"",
				      p->name, (unsigned long long)bf_offset(p, 0), tag, p->table);
		p->pos++;
		CB0(p, row_begin_cb);
		for (i = 0; i < ncols; i++) {
			switch (p->types[i]) {
			case TK_BFBIN_UINT64: {
				void (*fn)(void *, uint64_t);
				if (p->end - p->pos < 8)
					BF_NEED(p, 0, 8, "a uint64 value");
				fn = p->cb->data_uint64_cb;
				if (fn != NULL)
					fn(p->ud, bf_be64(p->buf + p->pos));
				p->pos += 8;
				break;
			}
			case TK_BFBIN_STRING: {
				void (*fn)(void *, const char *);
				size_t len;
				if (p->end - p->pos >= 2 && p->end - p->pos - 2 >= bf_be16(p->buf + p->pos)) {
					len = bf_be16(p->buf + p->pos);
				} else {
					int rc = bf_need_string(p, 0, &len, "string value");
					if (rc != TK_OK)
						return rc;
				}
				fn = p->cb->data_string_cb;
				if (fn != NULL)
					bf_call_str(p, fn, 2, len);
				p->pos += 2 + len;
				break;
			}
			default: {
				void (*fn)(void *, uint8_t);
				if (p->end == p->pos)
					BF_NEED(p, 0, 1, "a bool value");
				fn = p->cb->data_bool_cb;
				if (fn != NULL)
					fn(p->ud, p->buf[p->pos]);
				p->pos++;
				break;
			}
			}
		}
		CB0(p, row_end_cb);
	}
	CB0(p, table_end_basic_cb);
	return TK_OK;
}

static int bf_keyval_table(struct bf_parser *p)
{
	size_t rel = 0, n = 0, end_rel, i;

	/* Pass 0: find the end of the table, so every key is at hand before any value. */
	for (;;) {
		unsigned tag;
		size_t len;
		int rc;

		BF_NEED(p, rel, 1, "a column tag");
		tag = p->buf[p->pos + rel];
		if (tag == TK_BFBIN_TAG_END)
			break;
		if (tag > TK_BFBIN_BOOL)
			return bf_msg(p, TK_ECORRUPT,
				      "%s is corrupt at byte offset %llu: unknown column tag 0x%02x in key:value table \"%s\"",
				      p->name, (unsigned long long)bf_offset(p, rel), tag, p->table);
		if (n == TK_BFBIN_MAX_COLUMNS)
			return bf_msg(p, TK_ETOOBIG, "%s: key:value table \"%s\" at byte offset %llu has more than %u keys",
				      p->name, p->table, (unsigned long long)p->table_off, TK_BFBIN_MAX_COLUMNS);
		rc = bf_need_string(p, rel + 1, &len, "key");
		if (rc != TK_OK)
			return rc;
		rel += 3 + len;
		switch (tag) {
		case TK_BFBIN_UINT64:
			BF_NEED(p, rel, 8, "a uint64 value");
			rel += 8;
			break;
		case TK_BFBIN_STRING:
			rc = bf_need_string(p, rel, &len, "string value");
			if (rc != TK_OK)
				return rc;
			rel += 2 + len;
			break;
		default:
			BF_NEED(p, rel, 1, "a bool value");
			rel += 1;
			break;
		}
		n++;
		if (rel > TK_BFBIN_MAX_KEYVAL_BYTES)
			return bf_msg(p, TK_ETOOBIG, "%s: key:value table \"%s\" at byte offset %llu is larger than %u bytes",
				      p->name, p->table, (unsigned long long)p->table_off, TK_BFBIN_MAX_KEYVAL_BYTES);
	}
	end_rel = rel;

	/* Pass 1: the column callbacks. */
	CB0(p, column_begin_cb);
	for (rel = 0, i = 0; i < n; i++) {
		unsigned tag = p->buf[p->pos + rel];
		size_t len = bf_be16(p->buf + p->pos + rel + 1);
		if ((i & 1023) == 1023 && bf_stopped(p))
			return TK_ECANCELED;
		bf_column_cb(p, tag, rel + 3, len);
		rel += 3 + len;
		rel += tag == TK_BFBIN_UINT64 ? 8 : tag == TK_BFBIN_BOOL ? 1 : 2 + (size_t)bf_be16(p->buf + p->pos + rel);
	}
	CB0(p, column_end_cb);
	if (bf_stopped(p))
		return TK_ECANCELED;

	/* Pass 2: the values, as the table's single row. */
	CB0(p, row_begin_cb);
	for (rel = 0, i = 0; i < n; i++) {
		unsigned tag = p->buf[p->pos + rel];
		rel += 3 + (size_t)bf_be16(p->buf + p->pos + rel + 1);
		if (tag == TK_BFBIN_UINT64) {
			void (*fn)(void *, uint64_t) = p->cb->data_uint64_cb;
			if (fn != NULL)
				fn(p->ud, bf_be64(p->buf + p->pos + rel));
			rel += 8;
		} else if (tag == TK_BFBIN_BOOL) {
			void (*fn)(void *, uint8_t) = p->cb->data_bool_cb;
			if (fn != NULL)
				fn(p->ud, p->buf[p->pos + rel]);
			rel += 1;
		} else {
			size_t len = bf_be16(p->buf + p->pos + rel);
			void (*fn)(void *, const char *) = p->cb->data_string_cb;
			if (fn != NULL)
				bf_call_str(p, fn, rel + 2, len);
			rel += 2 + len;
		}
	}
	CB0(p, row_end_cb);
	p->pos += end_rel + 1;
	CB0(p, table_end_keyval_cb);
	return TK_OK;
}

static int bf_run(struct bf_parser *p)
{
	int rc = bf_fill(p, TK_BFBIN_MAGIC_LEN);

	if (rc == TK_ETRUNC && !p->timed_out)
		return bf_msg(p, rc, "Failed to read the file header from %s (file is truncated: %zu of %u bytes)",
			      p->name, p->end - p->pos, (unsigned)TK_BFBIN_MAGIC_LEN);
	if (rc != TK_OK)
		return bf_fill_failed(p, rc, p->end - p->pos, "the file header");
	if (memcmp(p->buf + p->pos, TK_BFBIN_MAGIC, TK_BFBIN_MAGIC_LEN) != 0)
		return bf_msg(p, TK_EFORMAT, "File %s does not appear to be a Byfl binary-output file", p->name);
	p->pos += TK_BFBIN_MAGIC_LEN;

	for (;;) {
		unsigned tag;
		size_t len;

		if (bf_stopped(p))
			return TK_ECANCELED;
		BF_NEED(p, 0, 1, "a table tag");
		tag = p->buf[p->pos];
		if (tag == TK_BFBIN_TAG_END) {
			p->pos++;
			/* What follows the end tag is ignored: the whole input counts as consumed. */
			bf_progress(p, p->total != 0 ? p->total : p->base + p->pos - p->start);
			return TK_OK;
		}
		if (tag != TK_BFBIN_TABLE_BASIC && tag != TK_BFBIN_TABLE_KEYVAL)
			return bf_msg(p, TK_ECORRUPT, "%s is corrupt at byte offset %llu: unknown table tag 0x%02x", p->name,
				      (unsigned long long)bf_offset(p, 0), tag);
		p->table_off = bf_offset(p, 0);
		rc = bf_need_string(p, 1, &len, "table name");
		if (rc != TK_OK)
			return rc;
		bf_set_table(p, p->buf + p->pos + 3, len);
		p->in_table = 1;
		if (tag == TK_BFBIN_TABLE_BASIC) {
			void (*fn)(void *, const char *) = p->cb->table_begin_basic_cb;
			if (fn != NULL)
				bf_call_str(p, fn, 3, len);
			p->pos += 3 + len;
			rc = bf_basic_table(p);
		} else {
			void (*fn)(void *, const char *) = p->cb->table_begin_keyval_cb;
			if (fn != NULL)
				bf_call_str(p, fn, 3, len);
			p->pos += 3 + len;
			rc = bf_keyval_table(p);
		}
		if (rc != TK_OK)
			return rc;
		p->in_table = 0;
	}
}

static void bf_options(struct bf_parser *p, const tk_bfbin_parse_options *opts)
{
	tk_bfbin_parse_options o = TK_BFBIN_PARSE_OPTIONS_INIT;

	if (opts != NULL) {
		size_t n = opts->struct_size < sizeof(o) ? opts->struct_size : sizeof(o);
		memcpy(&o, opts, n);
	}
	p->live = o.live_input != 0;
	p->timeout_ms = o.live_timeout_ms;
	p->stop = o.stop;
	p->idle_cb = o.idle_cb;
	p->progress_cb = o.progress_cb;
}

/* Runs the parser on a prepared input and reports the outcome through error_cb. */
static int bf_parse_input(struct bf_parser *p)
{
	int rc;

	p->buf = malloc(p->cap + 1);
	if (p->buf == NULL)
		rc = bf_msg(p, TK_ENOMEM, "Failed to allocate %zu bytes of memory (%s)", p->cap + 1, strerror(ENOMEM));
	else
		rc = bf_run(p);
	if (rc != TK_OK && rc != TK_ECANCELED && p->cb->error_cb != NULL)
		p->cb->error_cb(p->ud, p->msg);
	free(p->buf);
	free(p->types);
	return rc;
}

static int bf_parse_fd(int fd, const char *name, const bfbin_callback_t *callbacks, void *user_data,
		       const tk_bfbin_parse_options *opts, const volatile sig_atomic_t *stop2, size_t cap,
		       size_t max_read)
{
	struct bf_parser p;
	struct stat sb;

	if (fd < 0 || callbacks == NULL)
		return TK_EINVAL;
	memset(&p, 0, sizeof(p));
	p.fd = fd;
	p.name = name != NULL ? name : "<input>";
	p.cb = callbacks;
	p.ud = user_data;
	p.cap = cap;
	p.max_read = max_read;
	p.stop2 = stop2;
	bf_options(&p, opts);
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		off_t here = lseek(fd, 0, SEEK_CUR);
		p.is_reg = 1;
		if (here > 0)
			p.base = (uint64_t)here;
		p.start = p.base;
		if (!p.live && (uint64_t)sb.st_size > p.start)
			p.total = (uint64_t)sb.st_size - p.start;
		if (!p.live)
			posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	return bf_parse_input(&p);
}

int tk_bfbin_parse_fd(int fd, const char *name, const bfbin_callback_t *callbacks, void *user_data,
		      const tk_bfbin_parse_options *opts)
{
	return bf_parse_fd(fd, name, callbacks, user_data, opts, NULL, BF_CHUNK, 0);
}

int tk__bfbin_parse_fd_small(int fd, const char *name, const bfbin_callback_t *callbacks, void *user_data,
			     size_t cap, size_t max_read)
{
	if (cap == 0 || cap > BF_CHUNK)
		return TK_EINVAL;
	return bf_parse_fd(fd, name, callbacks, user_data, NULL, NULL, cap, max_read);
}

int tk__bfbin_parse_path(const char *path, const bfbin_callback_t *callbacks, void *user_data,
			 const tk_bfbin_parse_options *opts, const volatile sig_atomic_t *stop2)
{
	int fd, rc;

	if (path == NULL || callbacks == NULL)
		return TK_EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		rc = tk_error_from_errno(err);
		if (callbacks->error_cb != NULL) {
			char msg[4200];
			snprintf(msg, sizeof(msg), "Failed to open %s (%s)", path, strerror(err));
			callbacks->error_cb(user_data, msg);
		}
		return rc;
	}
	rc = bf_parse_fd(fd, path, callbacks, user_data, opts, stop2, BF_CHUNK, 0);
	close(fd);
	return rc;
}

int tk_bfbin_parse(const char *path, const bfbin_callback_t *callbacks, void *user_data,
		   const tk_bfbin_parse_options *opts)
{
	return tk__bfbin_parse_path(path, callbacks, user_data, opts, NULL);
}

int tk_bfbin_parse_mem(const void *data, size_t size, const char *name, const bfbin_callback_t *callbacks,
		       void *user_data)
{
	struct bf_parser p;

	if ((data == NULL && size > 0) || callbacks == NULL)
		return TK_EINVAL;
	memset(&p, 0, sizeof(p));
	p.fd = -1;
	p.mem = data;
	p.mem_len = size;
	p.name = name != NULL ? name : "<memory>";
	p.cb = callbacks;
	p.ud = user_data;
	p.cap = size < BF_MEM_MIN_CAP ? BF_MEM_MIN_CAP : size > BF_CHUNK ? BF_CHUNK : size;
	return bf_parse_input(&p);
}

void bf_process_byfl_file(const char *byfl_filename, bfbin_callback_t *callback_list, void *user_data,
			  int live_input)
{
	tk_bfbin_parse_options opts = TK_BFBIN_PARSE_OPTIONS_INIT;

	if (callback_list == NULL)
		return;
	if (byfl_filename == NULL) {
		if (callback_list->error_cb != NULL)
			callback_list->error_cb(user_data, "Failed to open (null) (Invalid argument)");
		return;
	}
	opts.live_input = live_input;
	tk_bfbin_parse(byfl_filename, callback_list, user_data, &opts);
}
