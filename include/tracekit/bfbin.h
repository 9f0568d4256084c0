/* SPDX-License-Identifier: MIT */
/*
 * tracekit/bfbin.h: the reader of Byfl binary tables (.byfl files), with
 * bf_process_byfl_file() and bfbin_callback_t exactly as Byfl declares them, and the
 * tracekit extensions tk_bfbin_parse*() that add a return code, cancellation and a
 * bounded wait for live input. The writer is in tracekit/bfbin_writer.h, the converters
 * (CSV, SQLite, HDF5, Callgrind, Excel XML) in tracekit/bfbin_convert.h.
 *
 * Byte layout (docs/byfl-format.md has the full specification; integers big-endian):
 *   file   := "BYFLBIN" table* 0x00
 *   table  := 0x01 str(name) (coltag str(colname))* 0x00 (0x01 value...)* 0x00   basic
 *           | 0x02 str(name) (coltag str(key) value)* 0x00                     key:value
 *   coltag := 0x01 uint64 (8 bytes) | 0x02 string (u16 length + bytes) | 0x03 bool (1 byte)
 */
#ifndef TRACEKIT_BFBIN_H
#define TRACEKIT_BFBIN_H

#include <inttypes.h> /* Byfl's bfbin.h includes it; code written for Byfl may rely on it */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "tracekit/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The callbacks, as Byfl declares them. Every one receives the user_data pointer given to
 * the parser first; any of them may be NULL, and the parser then skips that element.
 *
 * Order: per table, table_begin_basic_cb or table_begin_keyval_cb (the table's name),
 * column_begin_cb, one column_<type>_cb per column (its name), column_end_cb, then per
 * row row_begin_cb, one data_<type>_cb per column in column order, row_end_cb, and last
 * table_end_basic_cb or table_end_keyval_cb. A key:value table is presented as a table
 * with exactly one row: all its column callbacks come before its data callbacks, even
 * though the file interleaves them; with zero keys it still gets the four begin/end
 * callbacks and one empty row. A basic table with no rows gets no row callbacks.
 *
 * Strings (names and data) are NUL-terminated and valid only during the callback; a
 * string with an embedded NUL byte is seen up to that byte. data_bool_cb receives the
 * file's byte unchanged (the Byfl writer only writes 0 and 1).
 *
 * error_cb receives an English message naming the file and, for bad content, the byte
 * offset (see the list in docs/byfl-format.md, "Reader messages"); it is called at most
 * once, after which the parser returns without any further callback.
 *
 * The parser reads the callback pointers through callback_list every time, so a callback
 * may change the list while the file is being parsed.
 */
typedef struct {
	void (*error_cb)(void *user_data, const char *message);

	void (*table_begin_basic_cb)(void *user_data, const char *name);
	void (*table_end_basic_cb)(void *user_data);
	void (*table_begin_keyval_cb)(void *user_data, const char *name);
	void (*table_end_keyval_cb)(void *user_data);

	void (*column_begin_cb)(void *user_data);
	void (*column_uint64_cb)(void *user_data, const char *name);
	void (*column_string_cb)(void *user_data, const char *name);
	void (*column_bool_cb)(void *user_data, const char *name);
	void (*column_end_cb)(void *user_data);

	void (*row_begin_cb)(void *user_data);
	void (*data_uint64_cb)(void *user_data, uint64_t data);
	void (*data_string_cb)(void *user_data, const char *data);
	void (*data_bool_cb)(void *user_data, uint8_t data);
	void (*row_end_cb)(void *user_data);
} bfbin_callback_t;

/*
 * Parses the .byfl file byfl_filename (a regular file, a named pipe or any readable path,
 * read strictly sequentially), invoking the callbacks of callback_list in file order.
 *
 * live_input 0: a file that ends early is an error (error_cb, then return).
 * live_input 1: at the end of the available data the parser waits for more (polling a
 * regular file every 1 to 50 ms, re-reading a pipe) and continues; it returns once it has
 * read the file's final end-of-file tag, so it never waits after a writer has finished
 * the file. A writer that dies mid-file leaves it waiting: use tk_bfbin_parse() with a
 * timeout or a stop flag to bound the wait.
 *
 * Errors go to error_cb only (there is no return value, as in Byfl). A NULL
 * callback_list is accepted and does nothing. Reentrant: concurrent calls on different
 * files from different threads are safe.
 */
TK_API void bf_process_byfl_file(const char *byfl_filename, bfbin_callback_t *callback_list,
				 void *user_data, int live_input);

/* ---- tracekit extensions ------------------------------------------------------------ */

#define TK_BFBIN_MAGIC "BYFLBIN"
#define TK_BFBIN_MAGIC_LEN 7

/* Tag bytes. A 0 ends the file (table level), a column list or a table's rows. */
#define TK_BFBIN_TAG_END 0
#define TK_BFBIN_TABLE_BASIC 1
#define TK_BFBIN_TABLE_KEYVAL 2
#define TK_BFBIN_ROW_DATA 1

/* Column types, as their on-disk tag values. */
typedef enum tk_bfbin_type {
	TK_BFBIN_UINT64 = 1,
	TK_BFBIN_STRING = 2,
	TK_BFBIN_BOOL = 3
} tk_bfbin_type;

/* Limits the reader enforces (TK_ETOOBIG beyond them); the format itself caps strings. */
#define TK_BFBIN_MAX_STRING 65535u              /* bytes in any name or string value */
#define TK_BFBIN_MAX_COLUMNS (1u << 20)         /* columns of a table, keys of a key:value table */
#define TK_BFBIN_MAX_KEYVAL_BYTES (64u << 20)   /* encoded size of one key:value table */

typedef struct tk_bfbin_parse_options {
	/* sizeof(tk_bfbin_parse_options): fields are only ever added at the end. */
	size_t struct_size;
	/* As bf_process_byfl_file()'s live_input. */
	int live_input;
	/*
	 * Live input only: give up with TK_ETRUNC when no new byte arrives for this many
	 * milliseconds while the file is incomplete. 0 waits forever.
	 */
	unsigned live_timeout_ms;
	/*
	 * When non-NULL and *stop becomes nonzero, the parser returns TK_ECANCELED at the next
	 * row, table or wait, without calling error_cb. It reads *stop atomically: set it by
	 * plain assignment from a signal handler or a callback, and with an atomic store from
	 * another thread (__atomic_store_n(&flag, 1, __ATOMIC_RELAXED)). A pending read of a
	 * pipe is interrupted by any signal whose handler was installed without SA_RESTART.
	 */
	const volatile sig_atomic_t *stop;
	/*
	 * Live input only: called (with user_data) each time the parser has consumed every
	 * available byte and is about to wait for more, once per wait. Converters use it to
	 * flush their output or commit a transaction. May be NULL.
	 */
	void (*idle_cb)(void *user_data);
	/*
	 * Progress of the reading, for a progress display (may be NULL): called with user_data,
	 * the bytes of input consumed so far (counted from where the parser started) and the
	 * total to consume, 0 when it is unknown (a pipe, or live input, which may still grow).
	 * It is called once before the first read (done 0), before each further read of the
	 * input (so about once per MiB, never once per row) and once after the end-of-file
	 * tag of an input parsed successfully. done never decreases; with a known total it
	 * never exceeds it. Read only when struct_size covers it.
	 */
	void (*progress_cb)(void *user_data, uint64_t done, uint64_t total);
} tk_bfbin_parse_options;

#define TK_BFBIN_PARSE_OPTIONS_INIT { sizeof(tk_bfbin_parse_options), 0, 0, NULL, NULL, NULL }

/*
 * bf_process_byfl_file() with a result: 0 when the whole file was parsed, otherwise a
 * negative code after error_cb received the message:
 *   TK_ENOENT / TK_EACCES / TK_EIO  the file cannot be opened or read
 *   TK_EFORMAT                       it does not start with "BYFLBIN"
 *   TK_ETRUNC                        it ends early (or live_timeout_ms expired)
 *   TK_ECORRUPT                      an unknown table, column or row tag
 *   TK_ETOOBIG                       a table beyond the TK_BFBIN_MAX_* limits
 *   TK_ENOMEM                        out of memory
 *   TK_ECANCELED                     *opts->stop became nonzero (no error_cb)
 *   TK_EINVAL                        path or callbacks is NULL (no error_cb)
 * opts may be NULL (all defaults: not live). Reentrant.
 */
TK_API int tk_bfbin_parse(const char *path, const bfbin_callback_t *callbacks, void *user_data,
			  const tk_bfbin_parse_options *opts);

/*
 * The same on a caller-owned descriptor (standard input, a pipe, a socket), which is
 * read from its current position and not closed. name is used in messages.
 */
TK_API int tk_bfbin_parse_fd(int fd, const char *name, const bfbin_callback_t *callbacks,
			     void *user_data, const tk_bfbin_parse_options *opts);

/*
 * The same on size bytes in memory (never live; the bytes are not modified). name is
 * used in messages and may be NULL ("<memory>").
 */
TK_API int tk_bfbin_parse_mem(const void *data, size_t size, const char *name,
			      const bfbin_callback_t *callbacks, void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_BFBIN_H */
