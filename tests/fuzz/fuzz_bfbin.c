/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the .byfl reader on arbitrary bytes, with two oracles besides the
 * sanitizers. The callbacks check the documented order (column headers before data, one
 * value per column of the declared type, begin/end pairs) and abort on any violation;
 * and everything the reader delivers is re-encoded with the writer, which must accept it,
 * and whose output must parse back to exactly the same callback sequence.
 * The same bytes are also parsed through a descriptor (a memfd) in pieces of a few bytes
 * into a buffer that starts a few bytes long, so the refill, compaction and growth code
 * that files and pipes use runs on every input: its callbacks, result and message must
 * equal the in-memory parse's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/bfbin/bfbin_internal.h" /* tk__bfbin_parse_fd_small */
#include "tracekit/bfbin_writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KEYS 4096

struct fz {
	uint64_t hash;
	int state; /* 0 between tables, 1 table begun, 2 in column list, 3 columns done, 4 in row */
	int keyval, n_rows;
	unsigned char types[MAX_KEYS];
	size_t ncols, col;
	int too_wide; /* a table wider than this harness tracks: no checks from then on */
	tk_bfbin_writer *w; /* NULL on the second pass */
	char *keys[MAX_KEYS];
	size_t n_keys;
	int n_errors;
	char error[2048]; /* the error_cb message */
};

static void free_keys(struct fz *f)
{
	while (f->n_keys > 0) {
		f->n_keys--;
		free(f->keys[f->n_keys]);
		f->keys[f->n_keys] = NULL;
	}
}

static void check(int ok)
{
	if (!ok)
		abort();
}

static void mix(struct fz *f, unsigned tag, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	f->hash = (f->hash ^ tag) * 1099511628211ull;
	for (i = 0; i < n; i++)
		f->hash = (f->hash ^ b[i]) * 1099511628211ull;
}

static void on_error(void *ud, const char *m)
{
	struct fz *f = ud;

	check(m != NULL && m[0] != '\0');
	f->n_errors++;
	snprintf(f->error, sizeof(f->error), "%s", m);
}

static void table_begin(struct fz *f, const char *name, int keyval)
{
	check(f->state == 0);
	f->state = 1;
	f->keyval = keyval;
	f->ncols = f->col = 0;
	f->n_rows = 0;
	mix(f, keyval ? 1 : 2, name, strlen(name) + 1);
	if (f->w != NULL)
		check((keyval ? tk_bfbin_begin_keyval(f->w, name) : tk_bfbin_begin_basic(f->w, name)) == TK_OK);
}

static void on_tb(void *ud, const char *n)
{
	table_begin(ud, n, 0);
}

static void on_tk(void *ud, const char *n)
{
	table_begin(ud, n, 1);
}

static void table_end(struct fz *f, int keyval)
{
	check(f->state == 3 && f->keyval == keyval);
	check(!keyval || f->n_rows == 1);
	f->state = 0;
	mix(f, 3, NULL, 0);
	if (f->w != NULL)
		check(tk_bfbin_end_table(f->w) == TK_OK);
	free_keys(f);
}

static void on_te(void *ud)
{
	table_end(ud, 0);
}

static void on_tke(void *ud)
{
	table_end(ud, 1);
}

static void on_cb(void *ud)
{
	struct fz *f = ud;

	check(f->state == 1);
	f->state = 2;
}

static void column(struct fz *f, const char *name, unsigned type)
{
	check(f->state == 2);
	mix(f, 10 + type, name, strlen(name) + 1);
	if (f->ncols == MAX_KEYS) { /* wider than this harness tracks: no more checks */
		f->too_wide = 1;
		tk_bfbin_writer_abort(f->w);
		f->w = NULL;
		return;
	}
	f->types[f->ncols] = (unsigned char)type;
	if (f->w != NULL) {
		if (f->keyval) { /* the writer takes a key with its value: keep it until then */
			f->keys[f->ncols] = strdup(name);
			check(f->keys[f->ncols] != NULL);
			f->n_keys = f->ncols + 1;
		} else {
			check(tk_bfbin_add_column(f->w, (tk_bfbin_type)type, name) == TK_OK);
		}
	}
	f->ncols++;
}

static void on_cu(void *ud, const char *n)
{
	column(ud, n, TK_BFBIN_UINT64);
}

static void on_cs(void *ud, const char *n)
{
	column(ud, n, TK_BFBIN_STRING);
}

static void on_cbo(void *ud, const char *n)
{
	column(ud, n, TK_BFBIN_BOOL);
}

static void on_ce(void *ud)
{
	struct fz *f = ud;

	check(f->state == 2);
	f->state = 3;
}

static void on_rb(void *ud)
{
	struct fz *f = ud;

	check(f->state == 3);
	f->state = 4;
	f->col = 0;
	f->n_rows++;
	mix(f, 20, NULL, 0);
}

/* Checks the next value's type; 1 when the harness also re-encodes it. */
static int value(struct fz *f, unsigned type)
{
	check(f->state == 4);
	if (f->too_wide || f->w == NULL)
		return 0;
	check(f->col < f->ncols && f->types[f->col] == type);
	f->col++;
	return 1;
}

static void on_du(void *ud, uint64_t v)
{
	struct fz *f = ud;

	mix(f, 21, &v, sizeof(v));
	if (value(f, TK_BFBIN_UINT64))
		check((f->keyval ? tk_bfbin_kv_uint64(f->w, f->keys[f->col - 1], v) : tk_bfbin_put_uint64(f->w, v)) ==
		      TK_OK);
}

static void on_ds(void *ud, const char *v)
{
	struct fz *f = ud;

	mix(f, 22, v, strlen(v) + 1);
	if (value(f, TK_BFBIN_STRING))
		check((f->keyval ? tk_bfbin_kv_string(f->w, f->keys[f->col - 1], v) : tk_bfbin_put_string(f->w, v)) ==
		      TK_OK);
}

static void on_db(void *ud, uint8_t v)
{
	struct fz *f = ud;
	uint8_t b = v != 0; /* the writer stores any nonzero bool as 1 */

	mix(f, 23, &b, 1);
	if (value(f, TK_BFBIN_BOOL))
		check((f->keyval ? tk_bfbin_kv_bool(f->w, f->keys[f->col - 1], v) : tk_bfbin_put_bool(f->w, v)) == TK_OK);
}

static void on_re(void *ud)
{
	struct fz *f = ud;

	check(f->state == 4);
	check(f->too_wide || f->w == NULL || f->col == f->ncols);
	f->state = 3;
	mix(f, 24, NULL, 0);
	if (f->w != NULL && !f->keyval && !f->too_wide)
		check(tk_bfbin_end_row(f->w) == TK_OK);
}

static const bfbin_callback_t cbs = { on_error, on_tb, on_te, on_tk, on_tke, on_cb, on_cu, on_cs,
				      on_cbo,   on_ce, on_rb, on_du, on_ds, on_db, on_re };

static void fz_reset(struct fz *f)
{
	f->hash = 0;
	f->state = 0;
	f->too_wide = 0;
	f->n_errors = 0;
	f->error[0] = '\0';
	f->w = NULL;
}

/*
 * Parses data through a memfd, max_read bytes per read(2) into a buffer of cap bytes
 * at first: both from 1 up, chosen from the input's size so that every size of piece
 * comes up; large inputs take bigger pieces to keep the run fast.
 */
static int parse_in_pieces(const uint8_t *data, size_t size, struct fz *h)
{
	static int in_fd = -1;
	size_t max_read = 1 + size % 61, cap = 1 + size % 7, done = 0;

	if (in_fd < 0) {
		in_fd = memfd_create("fuzz-in.byfl", 0); /* reused: truncated before each input */
		check(in_fd >= 0);
	}
	check(ftruncate(in_fd, 0) == 0);
	while (done < size) {
		ssize_t n = pwrite(in_fd, data + done, size - done, (off_t)done);
		check(n > 0);
		done += (size_t)n;
	}
	check(lseek(in_fd, 0, SEEK_SET) == 0);
	if (size > 65536)
		max_read += 4096;
	return tk__bfbin_parse_fd_small(in_fd, "fuzz", &cbs, h, cap, max_read);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static unsigned char *copy;
	static size_t copy_cap;
	static struct fz f, g; /* large: kept out of the stack and cleared field by field */
	off_t len;
	int rc, rc_fd;

	if (fd < 0) {
		fd = memfd_create("fuzz.byfl", 0); /* reused: truncated before each input */
		if (fd < 0)
			return 0;
	}
	if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	fz_reset(&f);
	check(tk_bfbin_writer_open_fd(&f.w, fd) == TK_OK);
	rc = tk_bfbin_parse_mem(data, size, "fuzz", &cbs, &f);
	free_keys(&f);

	/* The descriptor path, in small pieces: the same callbacks, result and message. */
	fz_reset(&g);
	rc_fd = parse_in_pieces(data, size, &g);
	free_keys(&g);
	check(rc_fd == rc && g.hash == f.hash && g.n_errors == f.n_errors && strcmp(g.error, f.error) == 0);

	if (rc != TK_OK || f.too_wide) {
		tk_bfbin_writer_abort(f.w);
		return 0;
	}
	check(f.state == 0);
	check(tk_bfbin_writer_close(f.w) == TK_OK);

	/* The re-encoded file parses back to the same sequence. */
	len = lseek(fd, 0, SEEK_END);
	check(len > 0);
	if ((size_t)len > copy_cap) {
		free(copy);
		copy_cap = (size_t)len;
		copy = malloc(copy_cap);
		check(copy != NULL);
	}
	check(pread(fd, copy, (size_t)len, 0) == len);
	fz_reset(&g);
	check(tk_bfbin_parse_mem(copy, (size_t)len, "again", &cbs, &g) == TK_OK);
	check(g.hash == f.hash);
	return 0;
}
