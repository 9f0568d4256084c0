/* SPDX-License-Identifier: MIT */
/* Private: what the csv module's files share. */
#ifndef TK_CSV_INTERNAL_H
#define TK_CSV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "tracekit/csv.h"
#include "tracekit/tbrw.h"
#include "tracekit/traceparser.h"

/* The reader's limits on a record beyond TK_CSV_MAX_RECORD: fields of one record. A counter
 * file holds at most TK__CSV_MAX_FIELDS - 3 counters (time, pid, tid), and the writer's
 * records stay below TK__CSV_MAX_LINE bytes, so that whatever tk_csv_export() writes, the
 * reader takes. */
#define TK__CSV_MAX_FIELDS 1024
#define TK__CSV_MAX_COUNTERS (TK__CSV_MAX_FIELDS - 3)
#define TK__CSV_MAX_LINE (TK_CSV_MAX_RECORD - 64)

/* Parses [s, s+len) as a decimal integer without sign into *out: 0, TK_EFORMAT, TK_ERANGE. */
int tk__csv_parse_u64(const char *s, size_t len, uint64_t *out);
/* A counter value: [-]digits[.digits][(e|E)[+-]digits], integer when no '.' or exponent. */
int tk__csv_parse_value(const char *s, size_t len, tk_csv_value *out);

/* ---- the CSV data in traces (docs/vtune-csv.md) ------------------------------------------ */

/* The documented user events ("Intervals and counters in .kev"). */
#define TK__CSV_EV_TASK_BEGIN 1000
#define TK__CSV_EV_TASK_END 1001
#define TK__CSV_EV_FRAME_BEGIN 1002
#define TK__CSV_EV_FRAME_END 1003
#define TK__CSV_EV_COUNTER 1004
#define TK__CSV_EV_NAME 1005
#define TK__CSV_NAME_SHIFT 4 /* word 0: flags | name << TK__CSV_NAME_SHIFT */
#define TK__CSV_MAX_NAMES (1u << (32 - TK__CSV_NAME_SHIFT))
/* flags of word 0 (and of the .tb5 records) */
#define TK__CSV_F_PID 0x1u
#define TK__CSV_F_TID 0x2u
#define TK__CSV_F_INST 0x4u
#define TK__CSV_F_FLOAT 0x8u
#define TK__CSV_QPC_HZ 10000000ull

/* The records of the .tb5 streams ("Intervals and counters in .tb5"). */
struct tk__csv_tb5_interval {
	uint64_t start, end;
	uint32_t name, flags, pid, tid;
};
struct tk__csv_tb5_counter {
	uint64_t time;
	uint32_t name, flags, pid, tid;
	uint64_t value; /* int64, or a double's bits when flags has TK__CSV_F_FLOAT */
};

/* ---- messages of the conversions --------------------------------------------------------- */

/* The first error goes into cv->error with its code (later ones are dropped); cv may be NULL. */
struct tk__csv_msg {
	tk_csv_convert *cv;
	int code; /* 0 until an error */
};
void tk__csv_fail(struct tk__csv_msg *m, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* tk__csv_fail with TK_EFORMAT: bad input */
#define tk__csv_error(m, ...) tk__csv_fail(m, TK_EFORMAT, __VA_ARGS__)
void tk__csv_warn(struct tk__csv_msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Registers (path) or forgets (NULL) temporary slot with cv->temp_cb. */
void tk__csv_temp(struct tk__csv_msg *m, int slot, const char *path);
/* A TBRW failure: "WHAT: detail"; returns -1. */
int tk__csv_tbrw_fail(struct tk__csv_msg *m, const char *what, TBRW_U32 rc);

/* A header value of a .kev without its trailing newline, NUL or blanks (malloc'd; NULL if absent). */
char *tk__csv_header_value(struct traceparser_state *st, const char *key);
/* A header date ("Wed Aug 28 01:02:03 2013") as seconds since 1970; 0 when absent or malformed. */
time_t tk__csv_parse_ctime(const char *s);
/* UTF-8 to a malloc'd wide string (NULL: not UTF-8, or out of memory). */
wchar_t *tk__csv_wide(const char *s);

/* ---- the merge's queue ------------------------------------------------------------------- */

/* An event of the import: a row's begin or end, or one counter value. */
enum { TK__CSV_T_BEGIN, TK__CSV_T_END, TK__CSV_T_COUNTER };

struct tk__csv_ev {
	uint64_t t;        /* on the output's clock */
	uint64_t start;    /* T_END: the interval's start (same clock); T_COUNTER: the value's bits
			    * (int64, or a double with F_FLOAT) */
	uint64_t seq;      /* row number in its file */
	uint32_t src, sub; /* file index; T_BEGIN 0, T_END 1, T_COUNTER: column */
	uint32_t type, name, flags, pid, tid, id;
};

/* The merge order: time, file, row, then begin/end or column (inline: the merge's hot path). */
static inline int tk__csv_ev_before(const struct tk__csv_ev *a, const struct tk__csv_ev *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	if (a->src != b->src)
		return a->src < b->src;
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return a->sub < b->sub;
}

/*
 * A binary min-heap of events, the one queue of the merge: small keys (t, seq, sub) are
 * ordered in the heap over a pool of whole events with a free list, so that reordering moves
 * 24 bytes, not whole events. The key orders events of one file as tk__csv_ev_before() does
 * (their file is the same). Zero-initialised is empty.
 */
struct tk__csv_heap_key {
	uint64_t t, seq;
	uint32_t sub, slot;
};
struct tk__csv_heap {
	struct tk__csv_heap_key *h;
	size_t n, cap;
	struct tk__csv_ev *pool;
	uint32_t *freel;
	size_t nfree, npool, cappool;
};
/* Adds a copy of *v: 0, or TK_ENOMEM (the heap unchanged). */
int tk__csv_heap_push(struct tk__csv_heap *h, const struct tk__csv_ev *v);
/* The first event (valid until the next push or pop), NULL when empty. */
static inline struct tk__csv_ev *tk__csv_heap_top(const struct tk__csv_heap *h)
{
	return h->n > 0 ? &h->pool[h->h[0].slot] : NULL;
}
/* Removes the first event (the heap must not be empty). */
void tk__csv_heap_pop(struct tk__csv_heap *h);
/* The i-th event in heap order (i < n), for draining without order. */
struct tk__csv_ev *tk__csv_heap_at(const struct tk__csv_heap *h, size_t i);
/* Empties the heap, keeping its memory. */
void tk__csv_heap_clear(struct tk__csv_heap *h);
void tk__csv_heap_free(struct tk__csv_heap *h);

#endif
