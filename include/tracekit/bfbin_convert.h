/* SPDX-License-Identifier: MIT */
/*
 * tracekit/bfbin_convert.h: converters of Byfl binary tables (.byfl) to the formats of
 * Byfl's bfbin2* tools: CSV, SQLite 3, HDF5, Callgrind (KCachegrind) and the Excel 2003
 * XML spreadsheet. The tools bfbin2csv, bfbin2sqlite3, bfbin2hdf5, bfbin2cgrind and
 * bfbin2xmlss are thin shells over these functions; docs/bfbin2*.md describe each output
 * and every place where it deliberately differs from the Byfl tool of the same name.
 *
 * Every converter returns 0 or a negative TK_E* code and then has put an English message
 * naming the file (and byte offset, for bad input) in cv->error. Warnings (for example an
 * integer that SQLite cannot hold) go to cv->warning_cb. Converters that write a FILE *
 * leave creating and committing it to the caller (use tk_outfile for crash safety); the
 * SQLite and HDF5 converters build "<output>.part" and rename it to <output> only when
 * the conversion succeeded, so no partial database ever appears under its final name.
 *
 * Thread safety: the converters are reentrant, except that the HDF5 one must not run
 * while another thread uses the HDF5 library (Debian's libhdf5 is not thread-safe).
 */
#ifndef TRACEKIT_BFBIN_CONVERT_H
#define TRACEKIT_BFBIN_CONVERT_H

#include <signal.h>
#include <stdio.h>

#include "tracekit/bfbin.h"
#include "tracekit/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options and result shared by all converters. */
typedef struct tk_bfbin_convert {
	/* sizeof(tk_bfbin_convert): fields are only ever added at the end. */
	size_t struct_size;
	/* CSV and SQLite: follow a growing input (see tk_bfbin_parse_options). */
	int live_input;
	unsigned live_timeout_ms;
	/*
	 * When *stop becomes nonzero the conversion ends with TK_ECANCELED (output discarded);
	 * see tk_bfbin_parse_options.stop for how to set it.
	 */
	const volatile sig_atomic_t *stop;
	/* Receives warnings (may be NULL: no warnings). */
	void (*warning_cb)(void *user_data, const char *message);
	void *user_data;
	/* Name of the FILE * output in messages (NULL: "the output"). */
	const char *output_name;
	/* Out: the message of a failed conversion, "" on success. */
	char error[2048];
	/* TK_BFBIN_REAL_OVERFLOW; 0 by default. Read only when struct_size covers it. */
	unsigned flags;
	/*
	 * Progress of reading the input (may be NULL), called with user_data: bytes of input
	 * consumed so far and the total, 0 when unknown (a pipe, live input). As
	 * tk_bfbin_parse_options.progress_cb: about once per MiB read, done never decreases,
	 * and a last call with done == total once the whole input was parsed (the HDF5 and
	 * SQLite converters may still be closing their file after it). Read only when
	 * struct_size covers it.
	 */
	void (*progress_cb)(void *user_data, uint64_t done, uint64_t total);
	/*
	 * HDF5: the deflate level of the datasets, 0 (no compression filter) to 9, or
	 * TK_BFBIN_HDF5_LEVEL_DEFAULT. Read only when struct_size covers it (else the default).
	 */
	int hdf5_level;
	/*
	 * With TK_BFBIN_INPUT_FD in flags: the input is this descriptor (standard input, a
	 * pipe, a socket), read sequentially from its current position, never seeked, and
	 * not closed; the in_path argument then only names it in messages (NULL: "standard
	 * input"). Read only when struct_size covers it.
	 */
	int input_fd;
	/*
	 * SQLite and HDF5: called (with user_data) once the private directory the file is
	 * built in exists, with its path and that of the "<out>.part" symlink to the file
	 * (NULL when it could not be made), and again with (NULL, NULL) once both are gone
	 * (renamed into place or discarded). A tool's signal handler that ends the process
	 * removes them (everything in dir, then dir; link). Read only when struct_size
	 * covers it; NULL: not called.
	 */
	void (*temp_cb)(void *user_data, const char *dir, const char *link);
} tk_bfbin_convert;

/*
 * The default deflate level of tk_bfbin_to_hdf5(): the highest level that still converts
 * a large file at 50 MB/s or more (docs/bfbin2hdf5.md gives the measurements). Byfl's
 * bfbin2hdf5 always uses 9, which spends nearly all its time in zlib.
 */
#define TK_BFBIN_HDF5_LEVEL_DEFAULT (-1)

#define TK_BFBIN_CONVERT_INIT \
	{ sizeof(tk_bfbin_convert), 0, 0, NULL, NULL, NULL, NULL, { 0 }, 0, NULL, TK_BFBIN_HDF5_LEVEL_DEFAULT, -1, NULL }

/*
 * SQLite: store an integer above INT64_MAX as a REAL (approximately), with one warning
 * per table, as Byfl's bfbin2sqlite3 did; without it such a value fails the conversion.
 */
#define TK_BFBIN_REAL_OVERFLOW 0x1u

/*
 * All converters: read the input from cv->input_fd instead of opening in_path. The FILE *
 * converters (CSV, Callgrind, XML) never seek their output either, so both ends may be
 * pipes; the SQLite and HDF5 converters need a regular output file (they seek in it and
 * rename it into place) and refuse a device or a pipe.
 */
#define TK_BFBIN_INPUT_FD 0x2u

/* ---- CSV (bfbin2csv) -------------------------------------------------------------- */

#define TK_BFBIN_CSV_NO_TABLE_NAMES 0x1u  /* no line with the table name */
#define TK_BFBIN_CSV_NO_COLUMN_NAMES 0x2u /* no line with the column names */
#define TK_BFBIN_CSV_NO_DATA 0x4u         /* no data rows */
#define TK_BFBIN_CSV_FLAT 0x8u            /* one line per value: "Table",row,"Column",value */

typedef struct tk_bfbin_csv_options {
	size_t struct_size; /* sizeof(tk_bfbin_csv_options) */
	unsigned flags;     /* TK_BFBIN_CSV_*; FLAT ignores the NO_* flags */
	const char *colsep; /* column separator, used as is; NULL is "," */
	/* Tables to convert (exact names) or to skip; at most one of the lists may be given. */
	const char *const *include;
	size_t n_include;
	const char *const *exclude;
	size_t n_exclude;
} tk_bfbin_csv_options;

#define TK_BFBIN_CSV_OPTIONS_INIT { sizeof(tk_bfbin_csv_options), 0, NULL, NULL, 0, NULL, 0 }

/*
 * Writes the tables of in_path to out as CSV: strings in double quotes with quotes doubled
 * and a leading '-' protected as ="-x", integers in decimal, bools TRUE/FALSE. csv may be
 * NULL (defaults). Output written before an input error stays in out.
 */
TK_API int tk_bfbin_to_csv(const char *in_path, FILE *out, const tk_bfbin_csv_options *csv, tk_bfbin_convert *cv);

/* ---- SQLite 3 (bfbin2sqlite3) ------------------------------------------------------- */

/*
 * Creates the SQLite database db_path with one table per .byfl table (same names, uint64
 * and bool columns INTEGER, strings TEXT; a key:value table becomes one row; tables
 * without columns are skipped). An integer above INT64_MAX, which an SQLite INTEGER
 * cannot hold, fails the conversion with TK_ERANGE and a message naming the table, the
 * row (from 1), the column and the value; with TK_BFBIN_REAL_OVERFLOW in cv->flags it
 * is stored as REAL instead, with one warning per table. Tables are committed every
 * 1,000,000 rows and, with live input,
 * whenever the input runs dry, so "<db_path>.part" can be queried while it grows.
 * A duplicate table name, or any name SQLite refuses, fails the conversion.
 */
TK_API int tk_bfbin_to_sqlite3(const char *in_path, const char *db_path, tk_bfbin_convert *cv);

/* ---- HDF5 (bfbin2hdf5) ---------------------------------------------------------------- */

/*
 * Creates the HDF5 file h5_path with one dataset per .byfl table (tables without columns
 * are skipped), named as the table in the root group: a 1-D extendible (unlimited)
 * dataset, chunks of 1024 rows, compressed with deflate at cv->hdf5_level (no filter
 * at level 0; TK_EINVAL for a level outside 0-9), of a packed compound type with one
 * member per column: native uint64; variable-length NUL-terminated C string; an enum of
 * uint8 with No=0, Yes=1. Never live. A table name with '/', ".", "", a duplicate table
 * name or two columns of one table with the same name fail the conversion. A failed
 * write (full disk, quota, file size limit) fails it with "Failed to write <h5_path>
 * (<strerror>)" and TK_ENOSPC (or the code of the errno); HDF5 is left with no file
 * open or half-closed. In the shared library the converter is a plugin,
 * libtracekit-hdf5-VERSION.so in the directory libtracekit-formats was loaded from, loaded
 * on the first call (so that programs that never write HDF5 do not load HDF5): when it
 * cannot be loaded, TK_ENOTSUP and cv->error names it and why.
 */
TK_API int tk_bfbin_to_hdf5(const char *in_path, const char *h5_path, tk_bfbin_convert *cv);

/* ---- Callgrind (bfbin2cgrind) ---------------------------------------------------------- */

/*
 * Writes the "Functions" table of in_path (from a program built with -bf-by-func or
 * -bf-call-stack) as a Callgrind profile that callgrind_annotate and KCachegrind read;
 * the "System information" and "Command line" tables supply the ob= and cmd: lines.
 */
TK_API int tk_bfbin_to_callgrind(const char *in_path, FILE *out, tk_bfbin_convert *cv);

/* ---- Excel 2003 XML spreadsheet (bfbin2xmlss) ----------------------------------------- */

/* Writes the tables of in_path as worksheets of one Excel 2003 XML workbook. */
TK_API int tk_bfbin_to_xmlss(const char *in_path, FILE *out, tk_bfbin_convert *cv);

/* ---- helpers for the tools -------------------------------------------------------------- */

/*
 * The default output name of bfbin2sqlite3 and bfbin2hdf5: in_path with the extension of
 * its last component (from its last '.') replaced by ext (".db"), or ext appended when
 * that component has no '.'. Returns a malloc'd string (the caller frees it) or NULL when
 * out of memory.
 */
TK_API char *tk_bfbin_default_output(const char *in_path, const char *ext);

/* 1 when both paths exist and name the same file, else 0. */
TK_API int tk_bfbin_same_file(const char *a, const char *b);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_BFBIN_CONVERT_H */
