/* SPDX-License-Identifier: MIT */
/*
 * tracekit/export.h: .kev traces exported for trace viewers, built on the decoded event
 * model (tk_traceparser_decode()). docs/export.md describes every format and mapping.
 *
 *   TK_EXPORT_CHROME_JSON   Chrome trace-event JSON (chrome://tracing, Perfetto UI,
 *                           speedscope): M metadata for names, X slices, i instants,
 *                           C counters, microsecond timestamps with ns decimals.
 *   TK_EXPORT_PERFETTO      Perfetto's protobuf trace (ui.perfetto.dev, trace_processor):
 *                           process and thread tracks with names, slices as TrackEvent
 *                           begin/end on thread tracks, instants, counter tracks, names
 *                           interned.
 *   TK_EXPORT_STATS_*       statistics written at the end: per thread and process events
 *                           and time running / ready / blocked, switches and migrations
 *                           (from THREAD state events), events per class and event, user
 *                           intervals and kernel calls (count, total, mean, max).
 *
 * Slices are built per thread, streaming: only the slices still open are kept (a stack per
 * thread, at most TK_EXPORT_MAX_DEPTH deep), so memory does not grow with the trace.
 * Function entry/exit (SYSTEM FUNC_ENTER/FUNC_EXIT), kernel call entry/exit and user
 * begin/end pairs (tk_export_add_pair()) become slices of the event's thread; an end that
 * matches a slice below the top of its thread's stack first closes the slices above it
 * ("closed by an outer end"), an end that matches nothing is dropped; both are counted
 * (tk_export_stats), so slices never cross. VTune CSV intervals and counters of a trace
 * made by tracecsv import (user events 1000-1005) become slices on their own threads, on
 * lanes that never overlap, and counter tracks (tk_export_csv_data(), docs/vtune-csv.md).
 *
 * Usage: tk_export_new(), optionally tk_export_add_pair() / tk_export_add_counter() /
 * tk_export_add_spec(), tk_export_event() for each decoded event, tk_export_finish(),
 * tk_export_free(); or tk_export_file() for all of it on a .kev file.
 * One tk_export is used by one thread at a time.
 */
#ifndef TRACEKIT_EXPORT_H
#define TRACEKIT_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "tracekit/kev.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tk_export_format {
	TK_EXPORT_CHROME_JSON = 1,
	TK_EXPORT_PERFETTO = 2,
	TK_EXPORT_STATS_TEXT = 3, /* statistics (docs/export.md, "Statistics") as a text report, */
	TK_EXPORT_STATS_CSV = 4,  /* as CSV, */
	TK_EXPORT_STATS_JSON = 5, /* as JSON */
	TK_EXPORT_SQLITE = 6      /* a database file: tk_export_sqlite() only */
} tk_export_format;

/* Open slices kept per thread; deeper entries are counted (depth_overflow), not exported. */
#define TK_EXPORT_MAX_DEPTH 4096
/* Threads tracked; events of further threads are exported without slices (too_many_threads). */
#define TK_EXPORT_MAX_THREADS (1u << 20)
/* User begin/end pairs and counters that can be declared. */
#define TK_EXPORT_MAX_PAIRS 256

typedef struct tk_export tk_export;

/* What an export did: counts of what came in and what became of it. */
typedef struct tk_export_stats {
	uint64_t events;           /* events given to tk_export_event() */
	uint64_t control;          /* CONTROL TIME/BUFFER/BUFFER_END events, not exported */
	uint64_t slices;           /* slices exported (closed ones, whatever closed them) */
	uint64_t instants;         /* instant events exported */
	uint64_t counters;         /* counter values exported */
	uint64_t names;            /* process and thread name metadata exported */
	uint64_t unmatched_ends;   /* ends/exits without an open slice: dropped */
	uint64_t closed_by_outer;  /* slices closed early because an outer slice ended */
	uint64_t open_at_end;      /* slices still open at the end, closed at the last time */
	uint64_t depth_overflow;   /* begins past TK_EXPORT_MAX_DEPTH, not exported */
	uint64_t unknown_owner;    /* events without a known thread (exported on pid 0, tid 0) */
	uint64_t too_many_threads; /* events of threads past TK_EXPORT_MAX_THREADS */
	uint64_t threads;          /* distinct threads seen */
	uint64_t first_ns, last_ns; /* time span of the exported events */
	/* VTune CSV data (USER 1000-1005 of a trace made by tracecsv import, docs/vtune-csv.md):
	 * its intervals are also counted in slices, its samples in counters */
	uint64_t csv_intervals;      /* intervals exported */
	uint64_t csv_unmatched_ends; /* ends without an open begin of that id and name: dropped */
	uint64_t csv_begun_twice;    /* an id begun again while open: the first is dropped */
	uint64_t csv_open_at_end;    /* begins without an end: dropped */
	uint64_t csv_unnamed;        /* events naming a number no name event defined before: dropped */
	uint64_t csv_malformed;      /* payload too short, name event without a name: dropped */
	uint64_t incomplete_events;  /* combine events never completed (their first part without
				      * its last, at the end of the file): not exported */
	uint64_t lost_events;        /* events the recorder lost, as its CONTROL DROPPED events
				      * count them (times across the gaps may be wrong) */
} tk_export_stats;

/*
 * Creates an exporter writing format fmt to stream (which stays the caller's: it is
 * written in blocks and never closed). Returns 0, TK_EINVAL (NULL out or stream, unknown
 * format) or TK_ENOMEM; *out is NULL on failure.
 */
TK_API int tk_export_new(tk_export **out, tk_export_format fmt, FILE *stream);

/*
 * Declares a user begin/end pair: USER event begin_code opens a slice named name (NULL:
 * "USER <begin_code>") on its thread, USER event end_code closes it. The name is copied.
 * Returns 0, TK_EINVAL (codes above 1023, equal, or already declared) or TK_ETOOBIG (more
 * than TK_EXPORT_MAX_PAIRS declarations). Call before the first tk_export_event().
 */
TK_API int tk_export_add_pair(tk_export *x, unsigned begin_code, unsigned end_code, const char *name);

/*
 * Declares a user counter: USER event code carries a value (d0 the low, d1 the high 32
 * bits of a signed 64-bit integer) shown as counter name (NULL: "USER <code>") of the
 * event's process. Returns as tk_export_add_pair().
 */
TK_API int tk_export_add_counter(tk_export *x, unsigned code, const char *name);

/*
 * Declarations in text, as in the header attributes TRACEKIT_USER_PAIRS and
 * TRACEKIT_USER_COUNTERS and the tools' --pair / --counter options: a comma-separated
 * list of "BEGIN:END[=NAME]" (pairs) or "CODE[=NAME]" (counters, when counters is 1),
 * codes in decimal or 0x hex. Returns 0 or TK_EINVAL (tk_export_errmsg() says which item),
 * or the errors of tk_export_add_pair().
 */
TK_API int tk_export_add_spec(tk_export *x, const char *spec, int counters);

/*
 * VTune CSV data (docs/vtune-csv.md, "Intervals and counters in a .kev trace"): with on 1,
 * USER events 1000-1005 are read as tracecsv import writes them (names, task and frame
 * begins and ends, counter samples) and become slices on the pid/tid they carry and
 * counter tracks, unless one of these codes is declared as a pair or counter (the
 * declaration wins). tk_export_file() turns it on by itself for a trace whose header has
 * TRACEKIT_CSV_CLOCK or TRACEKIT_CSV_SOURCE_CLOCK (what tracecsv import writes); other
 * programs may use those codes for anything, so it is off otherwise. Returns 0, TK_EINVAL
 * (x NULL) or TK_ESTATE (events already exported).
 */
TK_API int tk_export_csv_data(tk_export *x, int on);

/*
 * Exports one decoded event (tk_traceparser_decode() inside a traceparser callback).
 * Events of one thread must come in time order (as a .kev file holds them); threads may
 * interleave in any way. Returns 0, TK_ENOMEM, or TK_EIO when writing failed.
 */
TK_API int tk_export_event(tk_export *x, const tk_kev_decoded *d);

/*
 * Closes the slices still open (at the last time seen), writes the end of the document
 * and flushes the stream. Returns 0, or TK_EIO when writing failed (also an earlier
 * failure). No tk_export_event() after it.
 */
TK_API int tk_export_finish(tk_export *x);

/* Counters so far (valid until tk_export_free()). */
TK_API const tk_export_stats *tk_export_get_stats(const tk_export *x);
/* Text of the last error, "" if none. */
TK_API const char *tk_export_errmsg(const tk_export *x);
/* Frees x (NULL accepted); the stream is not closed, nothing more is written. */
TK_API void tk_export_free(tk_export *x);

/*
 * The whole job on a file: parses in_path ("-": standard input) with libtraceparser,
 * decodes every event and exports it to stream in format fmt. Pairs and counters come
 * from the header attributes TRACEKIT_USER_PAIRS / TRACEKIT_USER_COUNTERS and then from
 * pairs / counters (tk_export_add_spec() syntax; NULL for none). On a damaged file the
 * events before the damage are exported and the document is completed, then the parser's
 * error is returned. Returns 0, TK_EINVAL (bad spec), TK_ENOMEM, TK_EIO (writing), or
 * TK_ECORRUPT / TK_ETRUNC / TK_EFORMAT / TK_ENOENT for the input; errmsg (errmsg_cap bytes,
 * may be NULL) receives "byte offset N: what" or the cause. stats may be NULL.
 */
TK_API int tk_export_file(const char *in_path, FILE *stream, tk_export_format fmt, const char *pairs,
			  const char *counters, tk_export_stats *stats, char *errmsg, size_t errmsg_cap);
/* (On success errmsg holds "" or a warning: the first VTune CSV event left out as malformed
 * or naming no name, "byte offset N: ..."; the stats' csv_* fields count them.) */

/*
 * Symbols (tracekit/symbols.h): function entry/exit slices are named by the function when
 * its address resolves (the trace's MMAP/MAPNAME events, the binaries' symbol tables),
 * by the address otherwise. tk_export_set_symbols() gives an exporter a symbolizer (the
 * caller's; it must outlive the exporter; NULL: none): the exporter feeds it every event
 * and asks it the name of each function slice. Returns 0 or TK_EINVAL (x NULL, events
 * already exported).
 */
struct tk_symbols;
TK_API int tk_export_set_symbols(tk_export *x, struct tk_symbols *symbols);

/* flags of tk_export_file_flags() and tk_export_sqlite_flags() */
#define TK_EXPORT_SYMBOLS 0x1 /* slices named by symbols: the file's mappings read first */

/* tk_export_file() and tk_export_sqlite() with flags (TK_EXPORT_*). */
TK_API int tk_export_file_flags(const char *in_path, FILE *stream, tk_export_format fmt, unsigned flags,
				const char *pairs, const char *counters, tk_export_stats *stats, char *errmsg,
				size_t errmsg_cap);
TK_API int tk_export_sqlite_flags(const char *in_path, const char *db_path, unsigned flags, const char *pairs,
				  const char *counters, tk_export_stats *stats, char *errmsg, size_t errmsg_cap);

/*
 * The SQLite export (docs/export.md, "SQLite"): creates the database db_path (a new or
 * empty file; an existing database is refused) with the tables processes and threads and
 * the views events (every event, every decoded field as JSON in args), slices,
 * thread_states and counters over compact tables (event_rows, event_kinds, slice_rows,
 * names, state_rows, counter_rows), and their indexes. Arguments, return values and
 * damaged input as tk_export_file(); on any error the caller removes db_path (it may hold
 * part of the rows).
 */
TK_API int tk_export_sqlite(const char *in_path, const char *db_path, const char *pairs, const char *counters,
			    tk_export_stats *stats, char *errmsg, size_t errmsg_cap);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_EXPORT_H */
