/* SPDX-License-Identifier: MIT */
/*
 * .byfl to SQLite 3, as Byfl's bfbin2sqlite3 stores it: one table per .byfl table with
 * the same name, uint64 and bool columns INTEGER (bools as their raw byte), strings
 * TEXT, a key:value table as one row, tables without columns skipped. An integer above
 * INT64_MAX (SQLite has no unsigned 64-bit integer) fails the conversion, naming where it
 * is; with TK_BFBIN_REAL_OVERFLOW it is bound as REAL, with one warning per table, as
 * Byfl did.
 *
 * The database is built as "<out>.part" and renamed to <out> after a clean close and an
 * fsync; any failure removes it (and its journal). Without live input it is written with
 * no journal and no syncs until the end: an interrupted conversion leaves nothing worth
 * recovering anyway. With live input it is a WAL database committed whenever the input
 * runs dry, so "<out>.part" can be queried while it grows; it is switched back to a
 * rollback journal before the rename. Identifiers are quoted the standard way ("name",
 * with '"' doubled); Byfl used single quotes, which SQLite accepts only as a quirk.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "bfbin/bfbin_internal.h"

#define SQ_ROWS_PER_TRANSACTION 1000000u

struct sq_state {
	struct tk__bfconv base; /* first: the parser's user_data */
	sqlite3 *db;
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

static int sq_exec(struct sq_state *s, const char *sql, const char *what)
{
	char *err = NULL;

	if (sqlite3_exec(s->db, sql, NULL, NULL, &err) != SQLITE_OK) {
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

static void sq_column_end(void *ud)
{
	struct sq_state *s = ud;

	if (s->base.rc != TK_OK || s->ncols == 0) /* Byfl skips tables without columns */
		return;
	if (sq_append(s, &s->create, &s->create_len, &s->create_cap, ")", 1) != TK_OK ||
	    sq_append(s, &s->insert, &s->insert_len, &s->insert_cap, ")", 1) != TK_OK)
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
	char *tmp = NULL;
	int rc;

	memset(&s, 0, sizeof(s));
	rc = tk__bfconv_init(&s.base, cv, in_path);
	if (rc != TK_OK)
		return rc;
	if ((rc = tk__bfconv_check_db_output(&s.base, db_path)) != TK_OK)
		return rc;
	s.live = cv->live_input != 0;
	tmp = malloc(strlen(db_path) + sizeof(".part"));
	if (tmp == NULL)
		return tk__bfconv_fail(&s.base, TK_ENOMEM, "Out of memory");
	strcpy(tmp, db_path);
	strcat(tmp, ".part");
	if ((rc = tk__bfconv_create_temp(&s.base, tmp)) != TK_OK)
		goto fail_open;
	rc = sqlite3_open_v2(tmp, &s.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		rc = tk__bfconv_fail(&s.base, TK_EIO, "Failed to create %s (%s)", tmp,
				     s.db ? sqlite3_errmsg(s.db) : sqlite3_errstr(rc));
		goto fail_open;
	}
	s.max_cols = sqlite3_limit(s.db, SQLITE_LIMIT_COLUMN, -1);
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
	if (s.live && sqlite3_exec(s.db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = tk__bfconv_fail(&s.base, TK_EIO, "Failed to finish %s (%s)", tmp, sqlite3_errmsg(s.db));
		goto fail_open;
	}
	rc = sqlite3_close(s.db);
	s.db = NULL;
	if (rc != SQLITE_OK) {
		rc = tk__bfconv_fail(&s.base, TK_EIO, "Failed to close %s (%s)", tmp, sqlite3_errstr(rc));
		goto fail_open;
	}
	rc = tk__bf_sync_rename(tmp, db_path);
	if (rc != TK_OK) {
		tk__bfconv_fail(&s.base, rc, "Failed to write %s (%s)", db_path, tk_strerror(rc));
		goto fail_open;
	}
	free(tmp);
	sq_free_col_names(&s);
	free(s.col_names);
	free(s.table);
	free(s.create);
	free(s.insert);
	return TK_OK;

fail_open:
	sqlite3_finalize(s.stmt);
	sqlite3_close_v2(s.db);
	tk__bf_remove_with_siblings(tmp);
	free(tmp);
	sq_free_col_names(&s);
	free(s.col_names);
	free(s.table);
	free(s.create);
	free(s.insert);
	return s.base.rc != TK_OK ? s.base.rc : rc; /* the parser's code when it failed first */
}
