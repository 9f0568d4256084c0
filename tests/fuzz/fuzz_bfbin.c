/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the .byfl reader on arbitrary bytes, with two oracles besides the
 * sanitizers. The callbacks check the documented order (column headers before data, one
 * value per column of the declared type, begin/end pairs) and abort on any violation;
 * and everything the reader delivers is re-encoded with the writer, which must accept it,
 * and whose output must parse back to exactly the same callback sequence.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
	check(m != NULL && m[0] != '\0');
	(void)ud;
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static unsigned char *copy;
	static size_t copy_cap;
	static struct fz f, g; /* large: kept out of the stack and cleared field by field */
	off_t len;
	int rc;

	if (fd < 0) {
		fd = memfd_create("fuzz.byfl", 0); /* reused: truncated before each input */
		if (fd < 0)
			return 0;
	}
	if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
		abort();
	f.hash = 0;
	f.state = 0;
	f.too_wide = 0;
	check(tk_bfbin_writer_open_fd(&f.w, fd) == TK_OK);
	rc = tk_bfbin_parse_mem(data, size, "fuzz", &cbs, &f);
	free_keys(&f);
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
	g.hash = 0;
	g.state = 0;
	g.too_wide = 0;
	g.w = NULL;
	check(tk_bfbin_parse_mem(copy, (size_t)len, "again", &cbs, &g) == TK_OK);
	check(g.hash == f.hash);
	return 0;
}
