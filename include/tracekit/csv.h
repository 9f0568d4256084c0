/* SPDX-License-Identifier: MIT */
/*
 * tracekit/csv.h: VTune(TM) "external data" CSV files (docs/vtune-csv.md): a streaming
 * reader and a writer for interval files (frames and tasks) and discrete counter files,
 * their typed timestamp columns, and the "[user-defined]-hostname-<host>.csv" file name.
 *
 * Interval file:  name,start_tsc.<CLOCK>,end_tsc[,pid][,tid]
 * Counter file:   tsc.<CLOCK>,Name1.COUNT|.INST[,Name2.COUNT|.INST]...[,pid][,tid]
 * <CLOCK> is QPC, CLOCK_MONOTONIC_RAW, RDTSC, TSC (integers) or UTC
 * ("YYYY-MM-DD hh:mm:ss[.fraction]", any number of decimals; held as ns since 1970).
 * Rows with a tid are tasks, rows without are frames. Fields follow RFC 4180 quoting.
 *
 * Thread-safety: one reader or writer per thread; the functions without a handle are
 * reentrant.
 */
#ifndef TRACEKIT_CSV_H
#define TRACEKIT_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Timestamp domains, by their column suffix. */
typedef enum tk_csv_clock {
	TK_CSV_QPC,
	TK_CSV_CLOCK_MONOTONIC_RAW,
	TK_CSV_RDTSC,
	TK_CSV_TSC,
	TK_CSV_UTC
} tk_csv_clock;

/* "QPC", "CLOCK_MONOTONIC_RAW", ...; NULL for an unknown value. */
TK_API const char *tk_csv_clock_name(tk_csv_clock clock);
/* By suffix (case-sensitive, as VTune writes them). Returns 0, or TK_EINVAL. */
TK_API int tk_csv_clock_parse(const char *name, tk_csv_clock *out);

/* Kinds of file. */
typedef enum tk_csv_kind {
	TK_CSV_INTERVALS = 1,
	TK_CSV_COUNTERS = 2
} tk_csv_kind;

/* Row flags */
#define TK_CSV_HAS_PID 0x1u /* the row has a pid value */
#define TK_CSV_HAS_TID 0x2u /* the row has a tid value: a task (otherwise a frame) */

/* Longest record the reader accepts (bytes, quoted newlines included). */
#define TK_CSV_MAX_RECORD (1u << 20)

/* One counter value of a row. */
typedef struct tk_csv_value {
	uint8_t present;  /* 0: the field was empty (no sample of this counter) */
	uint8_t is_float; /* 1: d holds the value; 0: i does */
	int64_t i;
	double d;
} tk_csv_value;

/*
 * A row. Pointers stay valid until the next tk_csv_read_row() or tk_csv_reader_close().
 * Intervals: name (name_len bytes of valid UTF-8 without NUL, NUL-terminated), start and
 * end (end >= start). Counters: time and values[] (one per counter column,
 * tk_csv_reader_counter() names them). pid/tid are valid when flags say so.
 */
typedef struct tk_csv_row {
	uint64_t line;    /* line of the record's first byte (1-based) */
	unsigned flags;   /* TK_CSV_HAS_* */
	uint32_t pid, tid;
	const char *name;
	size_t name_len;
	uint64_t start, end;
	uint64_t time;
	const tk_csv_value *values;
	size_t n_values;
} tk_csv_row;

typedef struct tk_csv_reader tk_csv_reader;

/*
 * Opens path ("-": standard input) and reads its header line. label names the input in
 * messages (NULL: path). Returns 0 or a TK_E* code; on a bad header *out is still set so
 * that tk_csv_reader_errmsg() says what is wrong: close it.
 */
TK_API int tk_csv_reader_open(tk_csv_reader **out, const char *path, const char *label);
/* The same on bytes in memory (not copied: keep them until close). */
TK_API int tk_csv_reader_open_mem(tk_csv_reader **out, const void *data, size_t len, const char *label);
TK_API void tk_csv_reader_close(tk_csv_reader *r);

TK_API tk_csv_kind tk_csv_reader_kind(const tk_csv_reader *r);
TK_API tk_csv_clock tk_csv_reader_clock(const tk_csv_reader *r);
/* Columns present in the header: TK_CSV_HAS_PID | TK_CSV_HAS_TID. */
TK_API unsigned tk_csv_reader_columns(const tk_csv_reader *r);
TK_API size_t tk_csv_reader_n_counters(const tk_csv_reader *r);
/* Name (without suffix) and kind (1: .INST, 0: .COUNT) of counter column i. */
TK_API const char *tk_csv_reader_counter(const tk_csv_reader *r, size_t i, int *inst);

/*
 * Reads the next row. Returns 1 with *row filled, 0 at the end of the file, or a TK_E*
 * code: tk_csv_reader_errmsg() then reads "FILE:LINE:COLUMN: what" (column in bytes,
 * 1-based). Blank lines are skipped; "\r\n" line ends and a UTF-8 byte order mark are
 * accepted. After an error the reader stays in error.
 */
TK_API int tk_csv_read_row(tk_csv_reader *r, tk_csv_row *row);
TK_API const char *tk_csv_reader_errmsg(const tk_csv_reader *r);
/* Bytes consumed so far. */
TK_API uint64_t tk_csv_reader_offset(const tk_csv_reader *r);

/*
 * Timestamps as text. Integer domains: decimal. UTC: ns since 1970-01-01 00:00:00 as
 * "YYYY-MM-DD hh:mm:ss.nnnnnnnnn". tk_csv_format_time() returns the length (buf gets at
 * most cap bytes, NUL included; 40 is always enough). tk_csv_parse_time() returns 0 or
 * TK_EFORMAT (not a number, a malformed date), TK_ERANGE (too large), TK_EINVAL (negative).
 */
TK_API size_t tk_csv_format_time(char *buf, size_t cap, tk_csv_clock clock, uint64_t t);
TK_API int tk_csv_parse_time(const char *s, size_t len, tk_csv_clock clock, uint64_t *out);

/*
 * File names. tk_csv_parse_file_name() takes a path (directories ignored) and returns 1
 * with the host after "-hostname-" (up to ".csv") and the user-defined part before it, 0
 * when the name has no "-hostname-" (both then ""). tk_csv_file_name() builds
 * "<user>-hostname-<host>.csv". Both return TK_EOVERFLOW when a buffer is too small.
 * tk_csv_default_host(): trace_host when not NULL or empty, else $VTUNE_HOSTNAME, else
 * $AMPLXE_HOSTNAME, else gethostname().
 */
TK_API int tk_csv_parse_file_name(const char *path, char *user, size_t user_cap, char *host,
				  size_t host_cap);
TK_API int tk_csv_file_name(char *buf, size_t cap, const char *user, const char *host);
TK_API int tk_csv_default_host(char *buf, size_t cap, const char *trace_host);

/* ---- writer ---------------------------------------------------------------------------- */

typedef struct tk_csv_writer tk_csv_writer;

/* A counter column for the writer. */
typedef struct tk_csv_counter {
	const char *name; /* without suffix */
	int inst;         /* 1: .INST, 0: .COUNT */
} tk_csv_counter;

/*
 * Creates path through tk_outfile (written as a temporary, renamed on close). columns:
 * TK_CSV_HAS_PID / TK_CSV_HAS_TID say which optional columns the header has. For
 * TK_CSV_COUNTERS, counters[0..n_counters) name the value columns.
 */
TK_API int tk_csv_writer_open(tk_csv_writer **out, const char *path, tk_csv_kind kind, tk_csv_clock clock,
			      unsigned columns, const tk_csv_counter *counters, size_t n_counters);
/* Writes one interval; flags TK_CSV_HAS_* say which of pid/tid have values. */
TK_API int tk_csv_write_interval(tk_csv_writer *w, const char *name, size_t name_len, uint64_t start,
				 uint64_t end, unsigned flags, uint32_t pid, uint32_t tid);
/* Writes one counter row: values[0..n_counters). A double that is NaN or infinite has no CSV
 * text that reads back: TK_EINVAL, and nothing of the row is written. */
TK_API int tk_csv_write_counters(tk_csv_writer *w, uint64_t time, const tk_csv_value *values, unsigned flags,
				 uint32_t pid, uint32_t tid);
/* Formats one counter value as the writer does (shortest text that reads back exactly; a
 * value not present, NaN or infinite as the empty text). */
TK_API size_t tk_csv_format_value(char *buf, size_t cap, const tk_csv_value *v);
/* Commits the file. Returns 0 or the first error. Frees w. */
TK_API int tk_csv_writer_close(tk_csv_writer *w);
/* Discards the file and frees w (NULL accepted). */
TK_API void tk_csv_writer_abort(tk_csv_writer *w);
/* Where the data goes until close (the temporary's path, "-" for standard output). */
TK_API const char *tk_csv_writer_temp_path(const tk_csv_writer *w);
/* Bytes of CSV written so far. */
TK_API uint64_t tk_csv_writer_bytes(const tk_csv_writer *w);

/* ---- conversion: CSV files into a trace, a trace into CSV files --------------------------- */

/*
 * The CSV data in a trace (docs/vtune-csv.md, "Intervals and counters in .kev" and
 * "Intervals and counters in .tb5"): in a .kev, user events 1000-1005 (task and frame
 * begin and end, counter value, name); in a .tb5, an interval stream and a counter stream.
 */
typedef enum tk_csv_trace_format {
	TK_CSV_TRACE_AUTO, /* by the trace's name: ".tb5" is a .tb5 file, anything else a .kev */
	TK_CSV_TRACE_KEV,
	TK_CSV_TRACE_TB5
} tk_csv_trace_format;

/* tk_csv_export_options.clock: the trace's own timestamps (the domain it was imported from). */
#define TK_CSV_CLOCK_OWN (-1)

/*
 * What tk_csv_import() and tk_csv_export() share: messages, progress and temporaries.
 * Zero-initialise, then set what you need (struct_size first: fields are only ever added
 * at the end).
 */
typedef struct tk_csv_convert {
	size_t struct_size; /* sizeof(tk_csv_convert) */
	/* Receives warnings, without a prefix (may be NULL: no warnings). */
	void (*warning_cb)(void *user_data, const char *message);
	/*
	 * Progress (may be NULL), import only: bytes of CSV read so far and their total (0 when
	 * unknown: a pipe), about every 65536 events; done never decreases within one pass (an
	 * import of unsorted files reads them twice).
	 */
	void (*progress_cb)(void *user_data, uint64_t done, uint64_t total);
	/*
	 * Temporaries (may be NULL): called with the path of a temporary output file as soon as
	 * it exists (slot 0: the trace, or the intervals file; slot 1: the counters file), and
	 * with NULL once it is renamed into place or removed. A signal handler that ends the
	 * process removes the registered ones.
	 */
	void (*temp_cb)(void *user_data, int slot, const char *path);
	void *user_data;
	/* Out: the message of a failed conversion ("FILE:LINE:COLUMN: what", ...), "" on success. */
	char error[2048];
	/*
	 * Out, tk_csv_export(): 1 when it returned an error but wrote its files all the same,
	 * with every interval and counter sample the trace holds validly (the trace holds
	 * events the convention cannot read, or is damaged midway: error names the first
	 * problem with its byte offset or record); 0 otherwise. Set only when struct_size
	 * covers it.
	 */
	int written;
} tk_csv_convert;

typedef struct tk_csv_import_options {
	size_t struct_size;             /* sizeof(tk_csv_import_options) */
	tk_csv_trace_format format;     /* of the output */
	const char *into;               /* .kev only: merge into a copy of this trace (NULL: none) */
	const char *output_name;        /* the output in messages and the .kev header (NULL: out_path) */
	const char *stdin_path;         /* a regular file holding standard input, read for "-"
					 * (NULL: standard input itself, read once and sorted in
					 * memory, since it cannot be read twice) */
	uint64_t tsc_hz;                /* TSC/RDTSC rate (0: tk_clock_cycles_per_sec()) */
	uint64_t qpc_hz;                /* QPC rate (0: 10000000) */
} tk_csv_import_options;

#define TK_CSV_IMPORT_OPTIONS_INIT { sizeof(tk_csv_import_options), TK_CSV_TRACE_AUTO, NULL, NULL, NULL, 0, 0 }

/*
 * Converts the CSV files paths[0..n_paths) (interval and counter files of one timestamp
 * domain; "-" is standard input) into the trace out_path, merged in time order: a .kev of
 * user events 1000-1005 (with opt->into, the events of that trace followed by the CSV
 * data, placed on its clock) or a .tb5 file with an interval and a counter stream.
 * Files whose rows are not in time order are read twice (streamed, then sorted in memory);
 * interval files are parsed ahead in a thread each. A new .kev's header dates are
 * $SOURCE_DATE_EPOCH when it is set, else the time of the import. The output is written
 * through tk_outfile: nothing half-written is left under its name. opt and cv may be NULL
 * (defaults; no messages).
 *
 * Returns 0, or a negative TK_E* code with cv->error naming the file and where: the
 * reader's "FILE:LINE:COLUMN: what", "FILE:LINE: timestamp outside the base trace's time
 * line", a write failure with its byte offset. Warnings (a file name without
 * "-hostname-", a host differing between files) go to cv->warning_cb.
 * Thread safety: reentrant.
 */
TK_API int tk_csv_import(const char *const *paths, size_t n_paths, const char *out_path,
			 const tk_csv_import_options *opt, tk_csv_convert *cv);

typedef struct tk_csv_export_options {
	size_t struct_size;         /* sizeof(tk_csv_export_options) */
	tk_csv_trace_format format; /* of the trace */
	const char *dir;            /* directory of the CSV files (NULL: ".") */
	const char *name;           /* names the files: its last component without extension
				     * (NULL: the trace's path) */
	int clock;                  /* a tk_csv_clock, or TK_CSV_CLOCK_OWN */
	const char *host;           /* host in the file names (NULL: the trace's, else
				     * tk_csv_default_host()) */
} tk_csv_export_options;

/* Defaults (note the clock: a zeroed structure would ask for QPC). */
#define TK_CSV_EXPORT_OPTIONS_INIT \
	{ sizeof(tk_csv_export_options), TK_CSV_TRACE_AUTO, NULL, NULL, TK_CSV_CLOCK_OWN, NULL }

/*
 * Writes the CSV data of a trace made by tk_csv_import() (or a .kev with user events
 * 1000-1005) as DIR/NAME-intervals-hostname-HOST.csv and, when it has counters,
 * DIR/NAME-counters-hostname-HOST.csv, with timestamps in opt->clock. Both files are
 * written through tk_outfile and appear together or not at all; an output that is the
 * trace itself is refused. The paths written are put in intervals_path and counters_path
 * (either may be NULL; "" for a file not written), each at least 2048 bytes.
 *
 * Returns 0, or a negative TK_E* code with cv->error naming the trace and where (byte
 * offset of the event, number of the record) or the output that failed. Intervals that
 * begin without an end and ends without a begin are not exported and counted in warnings;
 * so are counter samples that are NaN or infinite (CSV has no text for them), and names
 * that are not UTF-8 are written as read as Latin-1 (warned), so that tk_csv_import()
 * reads back whatever is written. Events the convention cannot read (too short, a name
 * event without a name, a name number never defined), a .kev damaged midway, .tb5
 * records of undescribed events, counters beyond the 1021 columns of a counter file and
 * intervals whose name is too long for a TK_CSV_MAX_RECORD record are not exported
 * either: the files are still written with everything else, and TK_EFORMAT is returned
 * with cv->written set to 1 and cv->error naming the first such event. opt and cv may be
 * NULL. Thread safety: reentrant.
 */
TK_API int tk_csv_export(const char *trace, const tk_csv_export_options *opt, tk_csv_convert *cv,
			 char *intervals_path, char *counters_path);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_CSV_H */
