/* SPDX-License-Identifier: MIT */
/*
 * .byfl to HDF5, in the layout of Byfl's bfbin2hdf5: each table with at least one column
 * becomes a dataset of the root group named exactly as the table, 1-D, extent 0 to
 * unlimited, chunks of 1024 rows, deflate at the caller's level (Byfl: always 9; here
 * H5_DEFAULT_LEVEL unless asked, none at 0), whose element is a packed compound
 * with one member per column, named as the column, in column order:
 *   uint64  H5T_NATIVE_UINT64 (H5T_STD_U64LE on x86)
 *   string  variable-length H5T_C_S1, NUL-terminated, ASCII (a char * in memory)
 *   bool    enum of H5T_NATIVE_UINT8 with "No" = 0 and "Yes" = 1
 * A key:value table is one row.
 *
 * Byfl extends the dataset and writes one row at a time; rows are collected here and
 * written 1024 at a time (one chunk), strings in a per-batch arena whose offsets become
 * pointers just before H5Dwrite. Names HDF5 cannot hold (with '/', ".", "", duplicates)
 * and empty or repeated column names are reported as errors where Byfl died with an
 * uncaught H5::Exception. The file is built in a private directory beside <out> (see
 * struct tk__bf_temp; "<out>.part" links to it) and renamed after a successful close
 * and fsync.
 *
 * The file is written through the driver of bfbin_hdf5_vfd.c, which never lets HDF5 see
 * a failed write: a full disk or a file size limit is reported as "Failed to write
 * <out> (<strerror>)" and the conversion stops, but every HDF5 close still succeeds, so
 * HDF5 is left with nothing half-closed that would crash it when it shuts down at exit.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "bfbin/bfbin_hdf5_vfd.h"
#include "bfbin/bfbin_internal.h"

#define H5_CHUNK_ROWS 1024u
/*
 * Measured on a 512 MiB Byfl-like file (bench/bfbin_parse.c --generate; docs/bfbin2hdf5.md):
 * level 9 spends about 95% of the run in zlib; this level keeps the conversion above 50 MB/s.
 */
#define H5_DEFAULT_LEVEL 1
#define H5_BATCH_BYTES ((size_t)16 << 20) /* flush a batch early when its data reach this */

struct h5_col {
	char *name;
	unsigned type;
	size_t off; /* of the member in the packed row */
};

struct h5_state {
	struct tk__bfconv base; /* first: the parser's user_data */
	const char *out_path;   /* the final name, for messages */
	struct tk__h5vfd_status io;
	hid_t driver, file, str_type, bool_type;
	char *table;
	struct h5_col *cols;
	size_t ncols, cols_cap;
	struct tk__bf_nameset col_set; /* names of the current table's columns */
	size_t type_bytes;             /* lower bound of its datatype message's size */
	size_t row_size;
	size_t batch_rows; /* rows per write: one chunk, fewer for very wide rows */
	hid_t dtype, dset;
	hid_t dxpl; /* transfer properties: a conversion buffer sized to the batch */
	int active;           /* the current table has a dataset */
	unsigned char *rows;  /* packed rows of the batch */
	size_t nrows, rows_bytes; /* rows in the batch, bytes allocated */
	char *arena;          /* string bytes of the batch */
	size_t arena_len, arena_cap;
	hsize_t written;      /* rows already in the dataset */
	size_t col;
	int level; /* deflate level, 0: no filter */
};

#define H5_WHY_MAX 200 /* longest HDF5 text quoted in a message */

/*
 * An HDF5 object header message holds at most 64 KiB, the datatype message of a
 * dataset included. The most compact encoding of a compound member (version 3) takes
 * its NUL-terminated name, at least one byte of offset and at least 12 bytes of member
 * type (an integer's: 8 of header, 4 of properties); a table whose sum exceeds the limit
 * cannot become a dataset, and is refused as its columns arrive, before HDF5 would spend
 * time quadratic in the column count on H5Tinsert()'s duplicate and overlap checks.
 */
#define H5_MESSAGE_MAX ((size_t)65536)
#define H5_DTYPE_HEADER 8u
#define H5_MEMBER_MIN_BYTES 14u

/*
 * The reason of the innermost HDF5 error (where it was detected), as one clean line for
 * our messages (HDF5's own printing is off): strerror() when HDF5 quotes an errno (its
 * system call messages span lines and carry timestamps and buffer addresses), else its
 * description when that is one short line, else the text of its minor error number.
 */
static herr_t h5_walk(unsigned n, const H5E_error2_t *e, void *data)
{
	char *why = data;
	const char *errno_at;
	size_t len;

	if (n != 0)
		return 0;
	errno_at = e->desc != NULL ? strstr(e->desc, "errno = ") : NULL;
	if (errno_at != NULL) {
		int err = atoi(errno_at + 8);
		if (err > 0) {
			snprintf(why, H5_WHY_MAX + 1, "%s", strerror(err));
			return 0;
		}
	}
	len = e->desc != NULL ? strlen(e->desc) : 0;
	if (len > 0 && len <= H5_WHY_MAX && strpbrk(e->desc, "\r\n") == NULL) {
		memcpy(why, e->desc, len + 1);
		return 0;
	}
	if (H5Eget_msg(e->min_num, NULL, why, H5_WHY_MAX + 1) <= 0 || strlen(why) >= H5_WHY_MAX)
		strcpy(why, "HDF5 error");
	return 0;
}

static int h5_fail(struct h5_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records "<what> (<HDF5's reason>)" as the conversion's error. */
static int h5_fail(struct h5_state *s, const char *fmt, ...)
{
	char what[512], why[H5_WHY_MAX + 1] = "HDF5 error";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5_walk, why);
	H5Eclear2(H5E_DEFAULT);
	return tk__bfconv_fail(&s->base, TK_EIO, "%s (%s)", what, why);
}

/* The driver's report of a failed write: the first one ends the conversion. */
static void h5_io_error(void *user_data, int err)
{
	struct h5_state *s = user_data;

	tk__bfconv_fail(&s->base, tk_error_from_errno(err), "Failed to write %s (%s)", s->out_path, strerror(err));
}

static int h5_nomem(struct h5_state *s)
{
	return tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
}

static void h5_close_table(struct h5_state *s)
{
	if (s->dset >= 0)
		H5Dclose(s->dset);
	if (s->dtype >= 0)
		H5Tclose(s->dtype);
	s->dset = s->dtype = -1;
	s->active = 0;
}

static void h5_free_cols(struct h5_state *s)
{
	size_t i;

	for (i = 0; i < s->ncols; i++)
		free(s->cols[i].name);
	s->ncols = 0;
	tk__bf_nameset_clear(&s->col_set);
	s->type_bytes = H5_DTYPE_HEADER;
}

static void h5_table_begin(void *ud, const char *name)
{
	struct h5_state *s = ud;
	char *copy = strdup(name);

	if (copy == NULL) {
		h5_nomem(s);
		return;
	}
	free(s->table);
	s->table = copy;
	h5_free_cols(s);
	s->row_size = 0;
	s->written = 0;
	s->nrows = 0;
	s->arena_len = 0;
}

static void h5_column(struct h5_state *s, const char *name, unsigned type, size_t size)
{
	int added;

	if (s->base.rc != TK_OK)
		return;
	if (name[0] == '\0') {
		tk__bfconv_fail(&s->base, TK_EINVAL,
				"Table \"%s\" has a column with an empty name, which an HDF5 compound type cannot hold",
				s->table);
		return;
	}
	s->type_bytes += strlen(name) + H5_MEMBER_MIN_BYTES;
	if (s->type_bytes > H5_MESSAGE_MAX) {
		tk__bfconv_fail(&s->base, TK_ETOOBIG,
				"Table \"%s\" has too many columns for an HDF5 dataset (more than %zu): the description "
				"of its compound type would exceed the 64 KiB of an HDF5 object header message",
				s->table, s->ncols);
		return;
	}
	added = tk__bf_nameset_add(&s->col_set, name);
	if (added < 0) {
		h5_nomem(s);
		return;
	}
	if (added == 0) {
		tk__bfconv_fail(&s->base, TK_EINVAL,
				"Table \"%s\" has two columns named \"%s\", which an HDF5 compound type cannot hold",
				s->table, name);
		return;
	}
	if (s->ncols == s->cols_cap) {
		size_t cap = s->cols_cap ? s->cols_cap * 2 : 32;
		struct h5_col *nc = realloc(s->cols, cap * sizeof(*nc));
		if (nc == NULL) {
			h5_nomem(s);
			return;
		}
		s->cols = nc;
		s->cols_cap = cap;
	}
	s->cols[s->ncols].name = strdup(name);
	if (s->cols[s->ncols].name == NULL) {
		h5_nomem(s);
		return;
	}
	s->cols[s->ncols].type = type;
	s->cols[s->ncols].off = s->row_size;
	s->row_size += size;
	s->ncols++;
}

static void h5_column_uint64(void *ud, const char *name)
{
	h5_column(ud, name, TK_BFBIN_UINT64, sizeof(uint64_t));
}

static void h5_column_string(void *ud, const char *name)
{
	h5_column(ud, name, TK_BFBIN_STRING, sizeof(char *));
}

static void h5_column_bool(void *ud, const char *name)
{
	h5_column(ud, name, TK_BFBIN_BOOL, sizeof(uint8_t));
}

static void h5_column_end(void *ud)
{
	struct h5_state *s = ud;
	hsize_t dims = 0, maxdims = H5S_UNLIMITED, chunk = H5_CHUNK_ROWS;
	hid_t space = -1, dcpl = -1;
	size_t i;

	if (s->base.rc != TK_OK || s->ncols == 0) /* Byfl skips tables without columns */
		return;
	if (strchr(s->table, '/') != NULL || strcmp(s->table, ".") == 0 || s->table[0] == '\0') {
		tk__bfconv_fail(&s->base, TK_EINVAL,
				"Table name \"%s\" cannot name an HDF5 dataset (it is empty, \".\" or contains '/')",
				s->table);
		return;
	}
	if (H5Lexists(s->file, s->table, H5P_DEFAULT) > 0) {
		tk__bfconv_fail(&s->base, TK_EEXIST,
				"Duplicate table name \"%s\": an HDF5 group cannot hold two datasets of that name", s->table);
		return;
	}
	s->dtype = H5Tcreate(H5T_COMPOUND, s->row_size);
	if (s->dtype < 0) {
		h5_fail(s, "Failed to create a datatype for table \"%s\"", s->table);
		return;
	}
	for (i = 0; i < s->ncols; i++) {
		hid_t mtype = s->cols[i].type == TK_BFBIN_UINT64 ? H5T_NATIVE_UINT64
			      : s->cols[i].type == TK_BFBIN_STRING ? s->str_type
								   : s->bool_type;
		if (H5Tinsert(s->dtype, s->cols[i].name, s->cols[i].off, mtype) < 0) {
			h5_fail(s, "Failed to add column \"%s\" to an HDF5 datatype", s->cols[i].name);
			return;
		}
	}
	space = H5Screate_simple(1, &dims, &maxdims);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	/* no creation and modification times in the object header: the same input gives the
	 * same file, byte for byte (a file is compared, checksummed, kept in version control) */
	if (space < 0 || dcpl < 0 || H5Pset_chunk(dcpl, 1, &chunk) < 0 || H5Pset_obj_track_times(dcpl, 0) < 0 ||
	    (s->level > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 && H5Pset_deflate(dcpl, (unsigned)s->level) < 0)) {
		h5_fail(s, "Failed to prepare the dataset of table \"%s\"", s->table);
		goto done;
	}
	s->dset = H5Dcreate2(s->file, s->table, s->dtype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	if (s->dset < 0) {
		h5_fail(s, "Failed to create the dataset of table \"%s\"", s->table);
		goto done;
	}
	s->batch_rows = H5_BATCH_BYTES / s->row_size;
	if (s->batch_rows > H5_CHUNK_ROWS)
		s->batch_rows = H5_CHUNK_ROWS;
	if (s->batch_rows == 0)
		s->batch_rows = 1;
	s->active = 1;
done:
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (space >= 0)
		H5Sclose(space);
}

/* Writes the collected rows at the end of the dataset. */
static int h5_flush(struct h5_state *s)
{
	hsize_t start = s->written, count = s->nrows, size;
	hid_t fspace = -1, mspace = -1;
	size_t r, i;
	int rc = TK_OK;

	if (s->nrows == 0)
		return TK_OK;
	/* String slots hold arena offsets until now: the arena may have moved while growing. */
	for (r = 0; r < s->nrows; r++) {
		unsigned char *row = s->rows + r * s->row_size;
		for (i = 0; i < s->ncols; i++) {
			if (s->cols[i].type == TK_BFBIN_STRING) {
				uintptr_t off;
				char *p;
				memcpy(&off, row + s->cols[i].off, sizeof(off));
				p = s->arena + off;
				memcpy(row + s->cols[i].off, &p, sizeof(p));
			}
		}
	}
	size = start + count;
	/*
	 * HDF5 allocates (and zeroes) its type conversion buffers at the transfer's buffer
	 * size, 1 MiB by default, on every H5Dwrite that converts (a compound with strings
	 * does): 20,000 one-row tables zeroed 20 GB. Ask for what the batch needs: a disk
	 * row is at most twice the memory row (a string's 16-byte heap ID for an 8-byte
	 * pointer); a power of two keeps HDF5's free lists few.
	 */
	{
		size_t need = s->nrows * s->row_size * 2, buf = 4096;
		while (buf < need && buf < ((size_t)1 << 20))
			buf *= 2;
		if (H5Pset_buffer(s->dxpl, buf, NULL, NULL) < 0)
			return h5_fail(s, "Failed to prepare the writing of table \"%s\"", s->table);
	}
	if (H5Dset_extent(s->dset, &size) < 0 || (fspace = H5Dget_space(s->dset)) < 0 ||
	    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
	    (mspace = H5Screate_simple(1, &count, NULL)) < 0 ||
	    H5Dwrite(s->dset, s->dtype, mspace, fspace, s->dxpl, s->rows) < 0)
		rc = h5_fail(s, "Failed to write rows of table \"%s\"", s->table);
	if (mspace >= 0)
		H5Sclose(mspace);
	if (fspace >= 0)
		H5Sclose(fspace);
	s->written = size;
	s->nrows = 0;
	s->arena_len = 0;
	return rc;
}

static void h5_row_begin(void *ud)
{
	struct h5_state *s = ud;

	s->col = 0;
	if (!s->active)
		return;
	if ((s->nrows + 1) * s->row_size > s->rows_bytes) {
		/* Grow by doubling up to one batch (the row size differs from table to table). */
		size_t rows = s->nrows ? s->nrows * 2 : 16, bytes;
		unsigned char *nr;
		if (rows > s->batch_rows)
			rows = s->batch_rows;
		bytes = rows * s->row_size;
		nr = realloc(s->rows, bytes);
		if (nr == NULL) {
			h5_nomem(s);
			s->active = 0;
			return;
		}
		s->rows = nr;
		s->rows_bytes = bytes;
	}
}

static unsigned char *h5_slot(struct h5_state *s)
{
	return s->rows + s->nrows * s->row_size + s->cols[s->col++].off;
}

static void h5_data_uint64(void *ud, uint64_t v)
{
	struct h5_state *s = ud;

	if (s->active)
		memcpy(h5_slot(s), &v, sizeof(v));
}

static void h5_data_string(void *ud, const char *v)
{
	struct h5_state *s = ud;
	size_t n = strlen(v) + 1;
	uintptr_t off;

	if (!s->active)
		return;
	if (s->arena_cap - s->arena_len < n) {
		size_t cap = s->arena_cap ? s->arena_cap : 65536;
		char *na;
		while (cap - s->arena_len < n)
			cap *= 2;
		na = realloc(s->arena, cap);
		if (na == NULL) {
			h5_nomem(s);
			s->active = 0;
			return;
		}
		s->arena = na;
		s->arena_cap = cap;
	}
	memcpy(s->arena + s->arena_len, v, n);
	off = s->arena_len;
	s->arena_len += n;
	memcpy(h5_slot(s), &off, sizeof(off));
}

static void h5_data_bool(void *ud, uint8_t v)
{
	struct h5_state *s = ud;
	uint8_t b = v != 0; /* the enum has only No = 0 and Yes = 1 */

	if (s->active)
		memcpy(h5_slot(s), &b, 1);
}

static void h5_row_end(void *ud)
{
	struct h5_state *s = ud;

	if (!s->active || s->base.rc != TK_OK) /* e.g. the disk is full: write no more */
		return;
	s->nrows++;
	if (s->nrows == s->batch_rows || s->arena_len >= H5_BATCH_BYTES)
		h5_flush(s);
}

static void h5_table_end(void *ud)
{
	struct h5_state *s = ud;

	if (s->active && s->base.rc == TK_OK)
		h5_flush(s);
	h5_close_table(s);
}

static int h5_make_types(struct h5_state *s)
{
	uint8_t no = 0, yes = 1;

	s->str_type = H5Tcopy(H5T_C_S1);
	if (s->str_type < 0 || H5Tset_size(s->str_type, H5T_VARIABLE) < 0 ||
	    H5Tset_strpad(s->str_type, H5T_STR_NULLTERM) < 0 || H5Tset_cset(s->str_type, H5T_CSET_ASCII) < 0)
		return h5_fail(s, "Failed to create the HDF5 string type");
	s->bool_type = H5Tenum_create(H5T_NATIVE_UINT8);
	if (s->bool_type < 0 || H5Tenum_insert(s->bool_type, "No", &no) < 0 ||
	    H5Tenum_insert(s->bool_type, "Yes", &yes) < 0)
		return h5_fail(s, "Failed to create the HDF5 bool type");
	return TK_OK;
}

int tk__bfbin_to_hdf5_impl(const char *in_path, const char *h5_path, tk_bfbin_convert *cv)
{
	H5E_auto2_t old_func = NULL;
	void *old_data = NULL;
	bfbin_callback_t cbs;
	struct h5_state s;
	hid_t fapl;
	struct tk__bf_temp temp = { NULL, NULL, NULL, NULL, 0, NULL };
	const char *tmp = NULL;
	int rc;

	memset(&s, 0, sizeof(s));
	s.driver = s.file = s.str_type = s.bool_type = s.dtype = s.dset = s.dxpl = -1;
	rc = tk__bfconv_init(&s.base, cv, in_path);
	if (rc != TK_OK)
		return rc;
	s.level = TK__BFCONV_HAS(cv, hdf5_level) ? cv->hdf5_level : TK_BFBIN_HDF5_LEVEL_DEFAULT;
	if (s.level == TK_BFBIN_HDF5_LEVEL_DEFAULT)
		s.level = H5_DEFAULT_LEVEL;
	if (s.level < 0 || s.level > 9)
		return tk__bfconv_fail(&s.base, TK_EINVAL, "Invalid HDF5 compression level %d (0 to 9)", cv->hdf5_level);
	if ((rc = tk__bfconv_check_db_output(&s.base, h5_path)) != TK_OK)
		return rc;
	s.out_path = h5_path;
	s.io.on_error = h5_io_error;
	s.io.user_data = &s;

	/* Errors become messages of ours; HDF5 must not print its stack on our stderr. */
	H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if ((rc = tk__bfconv_temp_create(&s.base, h5_path, &temp)) != TK_OK)
		goto fail;
	tmp = temp.link; /* the name messages give */
	s.driver = tk__h5vfd_register();
	fapl = s.driver >= 0 ? tk__h5vfd_fapl(s.driver, &s.io) : H5I_INVALID_HID;
	if (fapl < 0) {
		rc = h5_fail(&s, "Failed to set up HDF5 output to %s", tmp);
		goto fail;
	}
	s.file = H5Fcreate(temp.file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	H5Pclose(fapl);
	if (s.file < 0) {
		rc = h5_fail(&s, "Failed to create %s", tmp);
		goto fail;
	}
	if ((rc = h5_make_types(&s)) != TK_OK)
		goto fail;
	s.dxpl = H5Pcreate(H5P_DATASET_XFER);
	if (s.dxpl < 0) {
		rc = h5_fail(&s, "Failed to set up HDF5 output to %s", tmp);
		goto fail;
	}

	memset(&cbs, 0, sizeof(cbs));
	cbs.error_cb = tk__bfconv_parse_error;
	cbs.table_begin_basic_cb = h5_table_begin;
	cbs.table_begin_keyval_cb = h5_table_begin;
	cbs.column_uint64_cb = h5_column_uint64;
	cbs.column_string_cb = h5_column_string;
	cbs.column_bool_cb = h5_column_bool;
	cbs.column_end_cb = h5_column_end;
	cbs.row_begin_cb = h5_row_begin;
	cbs.data_uint64_cb = h5_data_uint64;
	cbs.data_string_cb = h5_data_string;
	cbs.data_bool_cb = h5_data_bool;
	cbs.row_end_cb = h5_row_end;
	cbs.table_end_basic_cb = h5_table_end;
	cbs.table_end_keyval_cb = h5_table_end;
	rc = tk__bfconv_run(&s.base, &cbs, 0, NULL);
	if (rc != TK_OK)
		goto fail;
	H5Tclose(s.str_type);
	H5Tclose(s.bool_type);
	s.str_type = s.bool_type = -1;
	/* The last writes happen here: a failure among them is in s.base (h5_io_error). */
	rc = H5Fclose(s.file) < 0 ? h5_fail(&s, "Failed to close %s", tmp) : s.base.rc;
	s.file = -1;
	if (rc != TK_OK)
		goto fail;
	rc = tk__bfconv_temp_commit(&temp, h5_path);
	if (rc != TK_OK) {
		tk__bfconv_fail(&s.base, rc, "Failed to write %s (%s)", h5_path, tk_strerror(rc));
		goto fail;
	}
	goto done;

fail:
	h5_close_table(&s);
	if (s.str_type >= 0)
		H5Tclose(s.str_type);
	if (s.bool_type >= 0)
		H5Tclose(s.bool_type);
	if (s.file >= 0)
		H5Fclose(s.file); /* succeeds: the driver keeps what it cannot write (H5F_CLOSE_STRONG) */
	tk__bfconv_temp_discard(&temp);
	if (s.base.rc != TK_OK)
		rc = s.base.rc;
done:
	if (s.dxpl >= 0)
		H5Pclose(s.dxpl);
	if (s.driver >= 0)
		H5FDunregister(s.driver);
	H5Eclear2(H5E_DEFAULT);
	H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
	h5_free_cols(&s);
	tk__bf_nameset_free(&s.col_set);
	free(s.cols);
	free(s.table);
	free(s.rows);
	free(s.arena);
	return rc;
}
