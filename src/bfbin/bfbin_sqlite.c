/* SPDX-License-Identifier: MIT */
/*
 * .byfl to SQLite 3, as Byfl's bfbin2sqlite3 stores it: one table per .byfl table with
 * the same name, uint64 and bool columns INTEGER (bools as their raw byte), strings
 * TEXT, a key:value table as one row, tables without columns skipped. An integer above
 * INT64_MAX (SQLite has no unsigned 64-bit integer) fails the conversion, naming where it
 * is; with TK_BFBIN_REAL_OVERFLOW it is bound as REAL, with one warning per table, as
 * Byfl did.
 *
 * The database is built in a private directory beside <out> (see struct tk__bf_temp;
 * "<out>.part" links to it) and renamed to <out> after a clean close and an fsync; any
 * failure removes it (and its journal). Without live input it is written with
 * no journal and no syncs until the end: an interrupted conversion leaves nothing worth
 * recovering anyway. With live input it is a WAL database committed whenever the input
 * runs dry, so it can be queried (through "<out>.part") while it grows; it is switched back to a
 * rollback journal before the rename. Identifiers are quoted the standard way ("name",
 * with '"' doubled); Byfl used single quotes, which SQLite accepts only as a quirk.
 *
 * SQLite's CREATE TABLE costs time proportional to the tables already in the schema (it
 * scans sqlite_schema to parse the new entry and walks every table to clear foreign-key
 * caches): 20,000 tables took 15 s. Without live input, every SQ_SCHEMA_BATCH tables the
 * rows of sqlite_schema are moved into memory (PRAGMA writable_schema; the tables' b-trees
 * are untouched) and the connection's schema is reset, so that it never holds more than
 * a batch; the rows are put back, in their order, before the database is closed. The
 * file is the one a plain run writes (same sqlite_schema rows and rowids). Duplicate
 * names, which SQLite can then no longer see, are found with a hash set (ASCII case
 * folded, as SQLite compares identifiers). Live conversions keep every table visible to
 * their readers and are not batched.
 *
 * The database is opened through a thin VFS over SQLite's default one that records the
 * errno of a failed write, truncate or sync: SQLite reports a full disk as "database or
 * disk is full" and a file size limit as "disk I/O error" (sqlite3_system_errno() stays
 * 0 for IOERR_WRITE), where the user needs "No space left on device" or "File too large".
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "bfbin/bfbin_internal.h"

#define SQ_ROWS_PER_TRANSACTION 1000000u
#define SQ_SCHEMA_BATCH 256u

/* A row of sqlite_schema moved out of the database while tables are created. */
struct sq_schema_row {
	char *type, *name, *tbl_name, *sql;
	sqlite3_int64 rootpage;
};

/* ---- the errno-recording VFS ---------------------------------------------------------- */

#define SQ_VFS_NAME "tracekit-errno"

struct sq_file {
	sqlite3_file base;           /* first: what SQLite sees */
	sqlite3_io_methods methods;  /* ours, of the real file's iVersion */
	int last_errno;              /* errno of the last failed write, truncate or sync */
	sqlite3_file *real;          /* the default VFS's file, just after this struct */
};

static sqlite3_vfs sq_vfs;
static pthread_once_t sq_vfs_once = PTHREAD_ONCE_INIT;
static int sq_vfs_ok;

#define SQ_REAL(f) (((struct sq_file *)(f))->real)

static int sq_note(sqlite3_file *f, int rc)
{
	if (rc != SQLITE_OK && errno != 0)
		((struct sq_file *)f)->last_errno = errno;
	return rc;
}

static int sq_close(sqlite3_file *f)
{
	int rc = SQ_REAL(f)->pMethods->xClose(SQ_REAL(f));
	f->pMethods = NULL;
	return rc;
}
static int sq_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	return SQ_REAL(f)->pMethods->xRead(SQ_REAL(f), buf, n, off);
}
static int sq_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
	errno = 0;
	return sq_note(f, SQ_REAL(f)->pMethods->xWrite(SQ_REAL(f), buf, n, off));
}
static int sq_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	errno = 0;
	return sq_note(f, SQ_REAL(f)->pMethods->xTruncate(SQ_REAL(f), size));
}
static int sq_sync(sqlite3_file *f, int flags)
{
	errno = 0;
	return sq_note(f, SQ_REAL(f)->pMethods->xSync(SQ_REAL(f), flags));
}
static int sq_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return SQ_REAL(f)->pMethods->xFileSize(SQ_REAL(f), size);
}
static int sq_lock(sqlite3_file *f, int level)
{
	return SQ_REAL(f)->pMethods->xLock(SQ_REAL(f), level);
}
static int sq_unlock(sqlite3_file *f, int level)
{
	return SQ_REAL(f)->pMethods->xUnlock(SQ_REAL(f), level);
}
static int sq_check_lock(sqlite3_file *f, int *out)
{
	return SQ_REAL(f)->pMethods->xCheckReservedLock(SQ_REAL(f), out);
}
static int sq_file_control(sqlite3_file *f, int op, void *arg)
{
	/* Growing the file in advance (chunk size, SQLITE_FCNTL_SIZE_HINT) may fail too. */
	errno = 0;
	return sq_note(f, SQ_REAL(f)->pMethods->xFileControl(SQ_REAL(f), op, arg));
}
static int sq_sector_size(sqlite3_file *f)
{
	return SQ_REAL(f)->pMethods->xSectorSize(SQ_REAL(f));
}
static int sq_device_chars(sqlite3_file *f)
{
	return SQ_REAL(f)->pMethods->xDeviceCharacteristics(SQ_REAL(f));
}
static int sq_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	errno = 0;
	return sq_note(f, SQ_REAL(f)->pMethods->xShmMap(SQ_REAL(f), pg, pgsz, extend, pp));
}
static int sq_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	return SQ_REAL(f)->pMethods->xShmLock(SQ_REAL(f), offset, n, flags);
}
static void sq_shm_barrier(sqlite3_file *f)
{
	SQ_REAL(f)->pMethods->xShmBarrier(SQ_REAL(f));
}
static int sq_shm_unmap(sqlite3_file *f, int del)
{
	return SQ_REAL(f)->pMethods->xShmUnmap(SQ_REAL(f), del);
}
static int sq_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
	return SQ_REAL(f)->pMethods->xFetch(SQ_REAL(f), off, n, pp);
}
static int sq_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return SQ_REAL(f)->pMethods->xUnfetch(SQ_REAL(f), off, p);
}

static const sqlite3_io_methods sq_methods = {
	3, sq_close, sq_read, sq_write, sq_truncate, sq_sync, sq_file_size, sq_lock, sq_unlock, sq_check_lock,
	sq_file_control, sq_sector_size, sq_device_chars, sq_shm_map, sq_shm_lock, sq_shm_barrier, sq_shm_unmap,
	sq_fetch, sq_unfetch,
};

static int sq_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags)
{
	sqlite3_vfs *root = vfs->pAppData;
	struct sq_file *f = (struct sq_file *)file;
	int rc;

	memset(f, 0, sizeof(*f));
	f->real = (sqlite3_file *)(f + 1);
	rc = root->xOpen(root, name, f->real, flags, out_flags);
	if (f->real->pMethods != NULL) {
		/* Offer only the methods the real file has (a missing one is NULL there). */
		f->methods = sq_methods;
		if (f->real->pMethods->iVersion < f->methods.iVersion)
			f->methods.iVersion = f->real->pMethods->iVersion;
		file->pMethods = &f->methods;
	}
	return rc;
}

static int sq_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xDelete(root, name, sync_dir);
}
static int sq_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xAccess(root, name, flags, out);
}
static int sq_full_path(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xFullPathname(root, name, n, out);
}
static void *sq_dl_open(sqlite3_vfs *vfs, const char *name)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xDlOpen(root, name);
}
static void sq_dl_error(sqlite3_vfs *vfs, int n, char *msg)
{
	sqlite3_vfs *root = vfs->pAppData;
	root->xDlError(root, n, msg);
}
static void (*sq_dl_sym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xDlSym(root, h, sym);
}
static void sq_dl_close(sqlite3_vfs *vfs, void *h)
{
	sqlite3_vfs *root = vfs->pAppData;
	root->xDlClose(root, h);
}
static int sq_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xRandomness(root, n, out);
}
static int sq_sleep(sqlite3_vfs *vfs, int us)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xSleep(root, us);
}
static int sq_current_time(sqlite3_vfs *vfs, double *t)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xCurrentTime(root, t);
}
static int sq_last_error(sqlite3_vfs *vfs, int n, char *msg)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xGetLastError(root, n, msg);
}
static int sq_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *t)
{
	sqlite3_vfs *root = vfs->pAppData;
	return root->xCurrentTimeInt64(root, t);
}

static void sq_vfs_register(void)
{
	sqlite3_vfs *root = sqlite3_vfs_find(NULL);

	/* Version 2 is all a database file needs (no xSetSystemCall: no syscall overrides). */
	if (root == NULL || root->iVersion < 2)
		return;
	sq_vfs.iVersion = 2;
	sq_vfs.szOsFile = (int)sizeof(struct sq_file) + root->szOsFile;
	sq_vfs.mxPathname = root->mxPathname;
	sq_vfs.zName = SQ_VFS_NAME;
	sq_vfs.pAppData = root;
	sq_vfs.xOpen = sq_open;
	sq_vfs.xDelete = sq_delete;
	sq_vfs.xAccess = sq_access;
	sq_vfs.xFullPathname = sq_full_path;
	sq_vfs.xDlOpen = sq_dl_open;
	sq_vfs.xDlError = sq_dl_error;
	sq_vfs.xDlSym = sq_dl_sym;
	sq_vfs.xDlClose = sq_dl_close;
	sq_vfs.xRandomness = sq_randomness;
	sq_vfs.xSleep = sq_sleep;
	sq_vfs.xCurrentTime = sq_current_time;
	sq_vfs.xGetLastError = sq_last_error;
	sq_vfs.xCurrentTimeInt64 = sq_current_time64;
	sq_vfs_ok = sqlite3_vfs_register(&sq_vfs, 0) == SQLITE_OK;
}

/* The errno of the last failed write of the database or its journal, 0 if none. */
static int sq_write_errno(sqlite3 *db)
{
	sqlite3_file *f = NULL;
	int err = 0;

	if (db == NULL || !sq_vfs_ok)
		return 0;
	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) == SQLITE_OK && f != NULL &&
	    f->pMethods != NULL)
		err = ((struct sq_file *)f)->last_errno;
	f = NULL;
	if (err == 0 && sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &f) == SQLITE_OK &&
	    f != NULL && f->pMethods != NULL)
		err = ((struct sq_file *)f)->last_errno;
	return err;
}

struct sq_state {
	struct tk__bfconv base; /* first: the parser's user_data */
	sqlite3 *db;
	const char *out_path; /* the final name, for messages */
	int live;
	char *table; /* current table name */
	char *create, *insert; /* statements being built */
	size_t create_len, create_cap, insert_len, insert_cap;
	size_t ncols;
	char **col_names; /* of the current table, for messages */
	size_t col_names_cap;
	uint64_t row;     /* current row of the table, from 1 */
	int max_cols;
	int active; /* the current table has columns: rows are inserted */
	sqlite3_stmt *stmt;
	int col;
	uint64_t rows_since_commit;
	int in_txn;
	int warned;
	/* batched schema (see the head comment) */
	int batch_schema;
	unsigned tables_in_batch;
	struct tk__bf_nameset table_names;
	struct sq_schema_row *stash;
	size_t n_stash, stash_cap;
};

static int sq_append(struct sq_state *s, char **buf, size_t *len, size_t *cap, const char *str, size_t n)
{
	if (*cap - *len < n + 1) {
		size_t ncap = *cap ? *cap : 256;
		char *nb;
		while (ncap - *len < n + 1)
			ncap *= 2;
		nb = realloc(*buf, ncap);
		if (nb == NULL)
			return tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
		*buf = nb;
		*cap = ncap;
	}
	memcpy(*buf + *len, str, n);
	*len += n;
	(*buf)[*len] = '\0';
	return TK_OK;
}

/* Appends "name" with every '"' doubled: any byte sequence is a valid identifier then. */
static int sq_append_ident(struct sq_state *s, char **buf, size_t *len, size_t *cap, const char *name)
{
	const char *q;

	if (sq_append(s, buf, len, cap, "\"", 1) != TK_OK)
		return s->base.rc;
	while ((q = strchr(name, '"')) != NULL) {
		if (sq_append(s, buf, len, cap, name, (size_t)(q - name) + 1) != TK_OK ||
		    sq_append(s, buf, len, cap, "\"", 1) != TK_OK)
			return s->base.rc;
		name = q + 1;
	}
	if (sq_append(s, buf, len, cap, name, strlen(name)) != TK_OK)
		return s->base.rc;
	return sq_append(s, buf, len, cap, "\"", 1);
}

/*
 * A failed write of the file is reported with its errno, as every other converter does;
 * returns 0 when no write failed (the SQLite error is then the cause).
 */
static int sq_fail_write(struct sq_state *s)
{
	int err = sq_write_errno(s->db);

	if (err == 0)
		return 0;
	tk__bfconv_fail(&s->base, tk_error_from_errno(err), "Failed to write %s (%s)", s->out_path, strerror(err));
	return 1;
}

static int sq_exec(struct sq_state *s, const char *sql, const char *what)
{
	char *err = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		if (!sq_fail_write(s))
			tk__bfconv_fail(&s->base, TK_EIO, "%s table \"%s\" (%s)", what, s->table,
					err ? err : sqlite3_errmsg(s->db));
		sqlite3_free(err);
		return s->base.rc;
	}
	return TK_OK;
}

static int sq_check(struct sq_state *s, int rc, int want, const char *what)
{
	if (rc == want)
		return TK_OK;
	if (sq_fail_write(s))
		return s->base.rc;
	return tk__bfconv_fail(&s->base, TK_EIO, "%s table \"%s\" (%s)", what, s->table, sqlite3_errmsg(s->db));
}

static int sq_commit(struct sq_state *s, int begin_again)
{
	if (sq_exec(s, "COMMIT", "Failed to commit a transaction for") != TK_OK)
		return s->base.rc;
	s->in_txn = 0;
	s->rows_since_commit = 0;
	if (!begin_again)
		return TK_OK;
	if (sq_exec(s, "BEGIN IMMEDIATE", "Failed to begin a transaction for") != TK_OK)
		return s->base.rc;
	s->in_txn = 1;
	return TK_OK;
}

static void sq_free_col_names(struct sq_state *s)
{
	size_t i;

	for (i = 0; i < s->ncols; i++)
		free(s->col_names[i]);
	s->ncols = 0;
}

static void sq_table_begin(void *ud, const char *name)
{
	struct sq_state *s = ud;
	char *copy = strdup(name);

	if (copy == NULL) {
		tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
		return;
	}
	free(s->table);
	s->table = copy;
	sq_free_col_names(s);
	s->row = 0;
	s->active = 0;
	s->warned = 0;
	s->create_len = s->insert_len = 0;
	if (sq_append(s, &s->create, &s->create_len, &s->create_cap, "CREATE TABLE ", 13) != TK_OK ||
	    sq_append_ident(s, &s->create, &s->create_len, &s->create_cap, name) != TK_OK ||
	    sq_append(s, &s->create, &s->create_len, &s->create_cap, " (", 2) != TK_OK ||
	    sq_append(s, &s->insert, &s->insert_len, &s->insert_cap, "INSERT INTO ", 12) != TK_OK ||
	    sq_append_ident(s, &s->insert, &s->insert_len, &s->insert_cap, name) != TK_OK)
		return;
	sq_append(s, &s->insert, &s->insert_len, &s->insert_cap, " VALUES (", 9);
}

static void sq_column(struct sq_state *s, const char *name, const char *type)
{
	if (s->base.rc != TK_OK)
		return;
	if (s->ncols == (size_t)s->max_cols) {
		/* Refuse now: the statement for a million columns would be built for nothing. */
		tk__bfconv_fail(&s->base, TK_ETOOBIG, "Failed to create table \"%s\" (more than %d columns)", s->table,
				s->max_cols);
		return;
	}
	if (s->ncols > 0 && (sq_append(s, &s->create, &s->create_len, &s->create_cap, ", ", 2) != TK_OK ||
			     sq_append(s, &s->insert, &s->insert_len, &s->insert_cap, ", ", 2) != TK_OK))
		return;
	if (sq_append_ident(s, &s->create, &s->create_len, &s->create_cap, name) != TK_OK ||
	    sq_append(s, &s->create, &s->create_len, &s->create_cap, type, strlen(type)) != TK_OK ||
	    sq_append(s, &s->insert, &s->insert_len, &s->insert_cap, "?", 1) != TK_OK)
		return;
	if (s->ncols == s->col_names_cap) {
		size_t cap = s->col_names_cap ? s->col_names_cap * 2 : 32;
		char **nn = realloc(s->col_names, cap * sizeof(*nn));
		if (nn == NULL) {
			tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
			return;
		}
		s->col_names = nn;
		s->col_names_cap = cap;
	}
	s->col_names[s->ncols] = strdup(name);
	if (s->col_names[s->ncols] == NULL) {
		tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
		return;
	}
	s->ncols++;
}

static void sq_column_int(void *ud, const char *name)
{
	sq_column(ud, name, " INTEGER");
}

static void sq_column_text(void *ud, const char *name)
{
	sq_column(ud, name, " TEXT");
}

/*
 * With a batched schema SQLite no longer sees the tables of earlier batches: refuse a
 * duplicate name here, with SQLite's own message ("table <token> already exists").
 */
static int sq_check_duplicate(struct sq_state *s)
{
	char *token = NULL;
	size_t len = 0, cap = 0;
	int added = tk__bf_nameset_add(&s->table_names, s->table);

	if (added < 0)
		return tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
	if (added > 0)
		return TK_OK;
	if (sq_append_ident(s, &token, &len, &cap, s->table) == TK_OK)
		tk__bfconv_fail(&s->base, TK_EIO, "Failed to create table \"%s\" (table %s already exists)", s->table,
				token);
	free(token);
	return s->base.rc;
}

static char *sq_dup_column(sqlite3_stmt *st, int col)
{
	const unsigned char *text = sqlite3_column_text(st, col);

	return text != NULL ? strdup((const char *)text) : NULL;
}

/* Moves the rows of sqlite_schema into s->stash and empties the connection's schema. */
static int sq_schema_out(struct sq_state *s)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sq_check(s, sqlite3_prepare_v2(s->db, "SELECT type, name, tbl_name, rootpage, sql FROM main.sqlite_schema "
						 "ORDER BY rowid", -1, &st, NULL),
		     SQLITE_OK, "Failed to read the schema after") != TK_OK)
		return s->base.rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct sq_schema_row *row;
		if (s->n_stash == s->stash_cap) {
			size_t cap = s->stash_cap ? s->stash_cap * 2 : 1024;
			struct sq_schema_row *ns = realloc(s->stash, cap * sizeof(*ns));
			if (ns == NULL) {
				sqlite3_finalize(st);
				return tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s",
						       s->base.in_path);
			}
			s->stash = ns;
			s->stash_cap = cap;
		}
		row = &s->stash[s->n_stash];
		row->type = sq_dup_column(st, 0);
		row->name = sq_dup_column(st, 1);
		row->tbl_name = sq_dup_column(st, 2);
		row->rootpage = sqlite3_column_int64(st, 3);
		row->sql = sq_dup_column(st, 4);
		s->n_stash++;
		if (row->type == NULL || row->name == NULL || row->tbl_name == NULL || row->sql == NULL) {
			sqlite3_finalize(st);
			return tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
		}
	}
	sqlite3_finalize(st);
	if (sq_check(s, rc, SQLITE_DONE, "Failed to read the schema after") != TK_OK)
		return s->base.rc;
	if (sq_exec(s, "PRAGMA writable_schema=ON; DELETE FROM main.sqlite_schema; PRAGMA writable_schema=RESET",
		    "Failed to set aside the schema after") != TK_OK)
		return s->base.rc;
	s->tables_in_batch = 0;
	return TK_OK;
}

/* Puts every row of s->stash back into sqlite_schema, in order, and reloads the schema. */
static int sq_schema_in(struct sq_state *s)
{
	sqlite3_stmt *st = NULL;
	size_t i;

	if (s->n_stash == 0)
		return TK_OK; /* never batched: the database is as SQLite built it */
	if (sq_schema_out(s) != TK_OK)
		return s->base.rc;
	if (sq_exec(s, "PRAGMA writable_schema=ON; BEGIN", "Failed to restore the schema after") != TK_OK)
		return s->base.rc;
	if (sq_check(s, sqlite3_prepare_v2(s->db, "INSERT INTO main.sqlite_schema VALUES (?, ?, ?, ?, ?)", -1, &st, NULL),
		     SQLITE_OK, "Failed to restore the schema after") != TK_OK)
		return s->base.rc;
	for (i = 0; i < s->n_stash; i++) {
		const struct sq_schema_row *row = &s->stash[i];
		sqlite3_bind_text(st, 1, row->type, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, row->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, row->tbl_name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, row->rootpage);
		sqlite3_bind_text(st, 5, row->sql, -1, SQLITE_STATIC);
		if (sq_check(s, sqlite3_step(st), SQLITE_DONE, "Failed to restore the schema after") != TK_OK ||
		    sq_check(s, sqlite3_reset(st), SQLITE_OK, "Failed to restore the schema after") != TK_OK) {
			sqlite3_finalize(st);
			return s->base.rc;
		}
	}
	sqlite3_finalize(st);
	return sq_exec(s, "COMMIT; PRAGMA writable_schema=RESET; PRAGMA writable_schema=OFF",
		       "Failed to restore the schema after");
}

static void sq_free_stash(struct sq_state *s)
{
	size_t i;

	for (i = 0; i < s->n_stash; i++) {
		free(s->stash[i].type);
		free(s->stash[i].name);
		free(s->stash[i].tbl_name);
		free(s->stash[i].sql);
	}
	free(s->stash);
	s->stash = NULL;
	s->n_stash = s->stash_cap = 0;
}

static void sq_column_end(void *ud)
{
	struct sq_state *s = ud;

	if (s->base.rc != TK_OK || s->ncols == 0) /* Byfl skips tables without columns */
		return;
	if (sq_append(s, &s->create, &s->create_len, &s->create_cap, ")", 1) != TK_OK ||
	    sq_append(s, &s->insert, &s->insert_len, &s->insert_cap, ")", 1) != TK_OK)
		return;
	if (s->batch_schema && sq_check_duplicate(s) != TK_OK)
		return;
	if (sq_exec(s, s->create, "Failed to create") != TK_OK)
		return;
	if (sq_check(s, sqlite3_prepare_v2(s->db, s->insert, (int)s->insert_len + 1, &s->stmt, NULL), SQLITE_OK,
		     "Failed to compile an insertion template for") != TK_OK)
		return;
	if (sq_exec(s, "BEGIN IMMEDIATE", "Failed to begin a transaction for") != TK_OK)
		return;
	s->in_txn = 1;
	s->active = 1;
}

static void sq_row_begin(void *ud)
{
	struct sq_state *s = ud;

	s->col = 0;
	s->row++;
}

static void sq_data_uint64(void *ud, uint64_t v)
{
	struct sq_state *s = ud;
	int rc;

	if (!s->active || s->base.rc != TK_OK)
		return;
	if (v > (uint64_t)INT64_MAX) {
		if (!(s->base.flags & TK_BFBIN_REAL_OVERFLOW)) {
			char dec[24];
			tk__bf_u64_to_dec(dec, v);
			tk__bfconv_fail(&s->base, TK_ERANGE,
					"Value %s in table \"%s\", row %llu, column \"%s\" does not fit in an SQLite "
					"INTEGER (at most 9223372036854775807)",
					dec, s->table, (unsigned long long)s->row,
					(size_t)s->col < s->ncols ? s->col_names[s->col] : "?");
			return;
		}
		if (!s->warned) {
			tk__bfconv_warn(&s->base, "WARNING -- an integral value in table \"%s\" doesn't fit within a signed "
						  "64-bit integer; using floating-point instead",
					s->table);
			s->warned = 1;
		}
		rc = sqlite3_bind_double(s->stmt, ++s->col, (double)v);
	} else {
		rc = sqlite3_bind_int64(s->stmt, ++s->col, (sqlite3_int64)v);
	}
	sq_check(s, rc, SQLITE_OK, "Failed to insert an integer into");
}

static void sq_data_string(void *ud, const char *v)
{
	struct sq_state *s = ud;

	if (!s->active)
		return;
	/* The string lives only during this call: SQLite copies it (SQLITE_TRANSIENT). */
	sq_check(s, sqlite3_bind_text(s->stmt, ++s->col, v, -1, SQLITE_TRANSIENT), SQLITE_OK,
		 "Failed to insert a string into");
}

static void sq_data_bool(void *ud, uint8_t v)
{
	struct sq_state *s = ud;

	if (!s->active)
		return;
	sq_check(s, sqlite3_bind_int(s->stmt, ++s->col, v), SQLITE_OK, "Failed to insert a Boolean into");
}

static void sq_row_end(void *ud)
{
	struct sq_state *s = ud;

	if (!s->active || s->base.rc != TK_OK)
		return;
	if (sq_check(s, sqlite3_step(s->stmt), SQLITE_DONE, "Failed to write a row to") != TK_OK)
		return;
	if (sq_check(s, sqlite3_reset(s->stmt), SQLITE_OK, "Failed to reset the insertion template for") != TK_OK)
		return;
	if (++s->rows_since_commit == SQ_ROWS_PER_TRANSACTION)
		sq_commit(s, 1);
}

static void sq_table_end(void *ud)
{
	struct sq_state *s = ud;

	if (!s->active || s->base.rc != TK_OK)
		return;
	if (sq_commit(s, 0) != TK_OK)
		return;
	sqlite3_finalize(s->stmt);
	s->stmt = NULL;
	s->active = 0;
	if (s->batch_schema && ++s->tables_in_batch == SQ_SCHEMA_BATCH)
		sq_schema_out(s);
}

/* Live input ran dry: make every row read so far visible to readers of the database. */
static void sq_idle(void *ud)
{
	struct sq_state *s = ud;

	if (s->in_txn && s->rows_since_commit > 0 && s->base.rc == TK_OK)
		sq_commit(s, 1);
}

static int sq_pragmas(struct sq_state *s)
{
	static const char batch[] = "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;";
	static const char live[] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;";
	char *err = NULL;

	if (sqlite3_exec(s->db, s->live ? live : batch, NULL, NULL, &err) != SQLITE_OK) {
		if (!sq_fail_write(s))
			tk__bfconv_fail(&s->base, TK_EIO, "Failed to configure the database (%s)",
					err ? err : sqlite3_errmsg(s->db));
		sqlite3_free(err);
		return s->base.rc;
	}
	return TK_OK;
}

int tk_bfbin_to_sqlite3(const char *in_path, const char *db_path, tk_bfbin_convert *cv)
{
	bfbin_callback_t cbs;
	struct sq_state s;
	struct tk__bf_temp temp = { NULL, NULL, NULL, NULL, 0, NULL };
	const char *tmp;
	int rc;

	memset(&s, 0, sizeof(s));
	rc = tk__bfconv_init(&s.base, cv, in_path);
	if (rc != TK_OK)
		return rc;
	if ((rc = tk__bfconv_check_db_output(&s.base, db_path)) != TK_OK)
		return rc;
	s.live = cv->live_input != 0;
	s.out_path = db_path;
	pthread_once(&sq_vfs_once, sq_vfs_register);
	if ((rc = tk__bfconv_temp_create(&s.base, db_path, &temp)) != TK_OK)
		return rc;
	tmp = temp.link; /* the name messages give */
	rc = sqlite3_open_v2(temp.file, &s.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			     sq_vfs_ok ? SQ_VFS_NAME : NULL);
	if (rc != SQLITE_OK) {
		rc = tk__bfconv_fail(&s.base, TK_EIO, "Failed to create %s (%s)", tmp,
				     s.db ? sqlite3_errmsg(s.db) : sqlite3_errstr(rc));
		goto fail_open;
	}
	s.max_cols = sqlite3_limit(s.db, SQLITE_LIMIT_COLUMN, -1);
	s.table_names.fold_ascii = 1;
	/*
	 * Batching needs writable_schema=RESET (verified with SQLite 3.40, the oldest release
	 * used here) and defensive mode off (which 3.44 and later make forbid writable_schema).
	 * Older libraries are served unbatched.
	 */
	s.batch_schema = !s.live && sqlite3_libversion_number() >= 3040000 &&
			 sqlite3_db_config(s.db, SQLITE_DBCONFIG_DEFENSIVE, 0, (int *)NULL) == SQLITE_OK;
	if (sq_pragmas(&s) != TK_OK)
		goto fail_open;

	memset(&cbs, 0, sizeof(cbs));
	cbs.error_cb = tk__bfconv_parse_error;
	cbs.table_begin_basic_cb = sq_table_begin;
	cbs.table_begin_keyval_cb = sq_table_begin;
	cbs.column_uint64_cb = sq_column_int;
	cbs.column_string_cb = sq_column_text;
	cbs.column_bool_cb = sq_column_int;
	cbs.column_end_cb = sq_column_end;
	cbs.row_begin_cb = sq_row_begin;
	cbs.data_uint64_cb = sq_data_uint64;
	cbs.data_string_cb = sq_data_string;
	cbs.data_bool_cb = sq_data_bool;
	cbs.row_end_cb = sq_row_end;
	cbs.table_end_basic_cb = sq_table_end;
	cbs.table_end_keyval_cb = sq_table_end;
	rc = tk__bfconv_run(&s.base, &cbs, s.live, s.live ? sq_idle : NULL);
	if (rc != TK_OK)
		goto fail_open;
	if (s.batch_schema && sq_schema_in(&s) != TK_OK) {
		rc = s.base.rc;
		goto fail_open;
	}
	if (s.live && sqlite3_exec(s.db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK) {
		if (!sq_fail_write(&s))
			tk__bfconv_fail(&s.base, TK_EIO, "Failed to finish %s (%s)", tmp, sqlite3_errmsg(s.db));
		goto fail_open;
	}
	rc = sqlite3_close(s.db);
	if (rc != SQLITE_OK && sq_fail_write(&s))
		goto fail_open; /* s.db stays open: closed again below */
	s.db = NULL;
	if (rc != SQLITE_OK) {
		rc = tk__bfconv_fail(&s.base, TK_EIO, "Failed to close %s (%s)", tmp, sqlite3_errstr(rc));
		goto fail_open;
	}
	rc = tk__bfconv_temp_commit(&temp, db_path);
	if (rc != TK_OK) {
		tk__bfconv_fail(&s.base, rc, "Failed to write %s (%s)", db_path, tk_strerror(rc));
		goto fail_open;
	}
	sq_free_col_names(&s);
	free(s.col_names);
	free(s.table);
	free(s.create);
	free(s.insert);
	sq_free_stash(&s);
	tk__bf_nameset_free(&s.table_names);
	return TK_OK;

fail_open:
	sqlite3_finalize(s.stmt);
	sqlite3_close_v2(s.db);
	tk__bfconv_temp_discard(&temp);
	sq_free_col_names(&s);
	free(s.col_names);
	free(s.table);
	free(s.create);
	free(s.insert);
	sq_free_stash(&s);
	tk__bf_nameset_free(&s.table_names);
	return s.base.rc != TK_OK ? s.base.rc : rc; /* the parser's code when it failed first */
}
