/* SPDX-License-Identifier: MIT */
/*
 * tracekit/bfbin_writer.h: writes Byfl binary tables (.byfl files) that Byfl's own
 * parser, bf_process_byfl_file() and every bfbin2* converter accept: basic tables (a
 * column list, then any number of rows) and key:value tables (one implicit row), with
 * uint64, string and bool columns. The byte layout is in tracekit/bfbin.h and
 * docs/byfl-format.md.
 *
 * Usage:
 *   tk_bfbin_writer_open(&w, "report.byfl", 0);
 *   tk_bfbin_begin_basic(w, "Functions");
 *   tk_bfbin_add_column(w, TK_BFBIN_STRING, "Function name");
 *   tk_bfbin_add_column(w, TK_BFBIN_UINT64, "Invocations");
 *   tk_bfbin_put_string(w, "main"); tk_bfbin_put_uint64(w, 1); tk_bfbin_end_row(w);
 *   tk_bfbin_end_table(w);
 *   tk_bfbin_begin_keyval(w, "Program");
 *   tk_bfbin_kv_uint64(w, "Integer operations", 123456);
 *   tk_bfbin_end_table(w);
 *   tk_bfbin_writer_close(w);
 *
 * Errors: every function returns 0 or a negative TK_E* code. A call that is out of order
 * (TK_ESTATE), has a value of the wrong type for its column (TK_EINVAL) or a string
 * longer than TK_BFBIN_MAX_STRING bytes (TK_ETOOBIG) is refused before anything is
 * written, so the file stays well-formed and the caller may go on (e.g. with a shorter
 * string). An I/O error is sticky: every later call returns it and close discards the
 * file. tk_bfbin_writer_errmsg() says what happened.
 *
 * Not thread-safe: one writer per thread, or external locking.
 */
#ifndef TRACEKIT_BFBIN_WRITER_H
#define TRACEKIT_BFBIN_WRITER_H

#include <stdint.h>

#include "tracekit/bfbin.h"
#include "tracekit/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_bfbin_writer tk_bfbin_writer;

/*
 * Flags for tk_bfbin_writer_open().
 * TK_BFBIN_WRITER_LIVE: write straight to path (created or truncated) instead of
 * "<path>.part", so a reader with live input can follow the file while it grows, as
 * with the Byfl run-time library; the writer then pushes its buffer to the file at every
 * table end. A crash leaves a truncated file under the final name.
 */
#define TK_BFBIN_WRITER_LIVE 0x1u

/*
 * Opens path for writing ("-" is standard output) and writes the magic. The data goes to
 * "<path>.part", renamed to path by a successful tk_bfbin_writer_close(), so a file under
 * the final name is always complete. An existing path that is not a regular file (a named
 * pipe, /dev/null) is written directly. *out is NULL on failure.
 */
TK_API int tk_bfbin_writer_open(tk_bfbin_writer **out, const char *path, unsigned flags);

/* Writes to a caller-owned descriptor (pipe, socket, open file); close does not close it. */
TK_API int tk_bfbin_writer_open_fd(tk_bfbin_writer **out, int fd);

/*
 * Starts a basic table. Columns are declared with tk_bfbin_add_column() before the first
 * value; then each row is its values in column order followed by tk_bfbin_end_row().
 * Names are NUL-terminated, at most TK_BFBIN_MAX_STRING bytes, and need not be unique
 * (Byfl allows duplicate table and column names; some converters refuse them).
 */
TK_API int tk_bfbin_begin_basic(tk_bfbin_writer *w, const char *name);
TK_API int tk_bfbin_add_column(tk_bfbin_writer *w, tk_bfbin_type type, const char *name);
TK_API int tk_bfbin_put_uint64(tk_bfbin_writer *w, uint64_t value);
TK_API int tk_bfbin_put_string(tk_bfbin_writer *w, const char *value);
TK_API int tk_bfbin_put_bool(tk_bfbin_writer *w, int value); /* written as 1 if nonzero, else 0 */
/* Ends the row; TK_ESTATE (and the row stays open) when values are missing. */
TK_API int tk_bfbin_end_row(tk_bfbin_writer *w);

/* Starts a key:value table: one row whose columns are declared with their values. */
TK_API int tk_bfbin_begin_keyval(tk_bfbin_writer *w, const char *name);
TK_API int tk_bfbin_kv_uint64(tk_bfbin_writer *w, const char *key, uint64_t value);
TK_API int tk_bfbin_kv_string(tk_bfbin_writer *w, const char *key, const char *value);
TK_API int tk_bfbin_kv_bool(tk_bfbin_writer *w, const char *key, int value);

/* Ends the current table of either kind (TK_ESTATE inside an unfinished row). */
TK_API int tk_bfbin_end_table(tk_bfbin_writer *w);

/* Pushes buffered bytes to the file or pipe, so a live reader sees them. */
TK_API int tk_bfbin_writer_flush(tk_bfbin_writer *w);

/*
 * Ends an open table (TK_ESTATE if a row is unfinished: the file is then discarded),
 * writes the end-of-file tag, flushes, syncs and renames the file to its final name, and
 * frees w (NULL is accepted). Returns 0 or the first error of this writer.
 */
TK_API int tk_bfbin_writer_close(tk_bfbin_writer *w);

/* Discards the file being written (removes "<path>.part") and frees w. NULL is accepted. */
TK_API void tk_bfbin_writer_abort(tk_bfbin_writer *w);

/* Bytes written so far (magic included), whether or not they were flushed yet. */
TK_API uint64_t tk_bfbin_writer_bytes(const tk_bfbin_writer *w);

/* Text of the last error of this writer (what and where), "" if none. */
TK_API const char *tk_bfbin_writer_errmsg(const tk_bfbin_writer *w);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_BFBIN_WRITER_H */
