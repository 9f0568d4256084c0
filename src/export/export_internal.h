/* SPDX-License-Identifier: MIT */
/*
 * Inside the export module: the format-independent model (threads, their stacks of open
 * slices, names, pairs and counters: export_model.c), the output buffer every format
 * writes through, and the interface a format implements (export_json.c).
 */
#ifndef EXPORT_INTERNAL_H
#define EXPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tracekit/export.h"

/* What opened a slice. */
enum tk__slice_kind { TK__SLICE_FUNC, TK__SLICE_USER, TK__SLICE_KERCALL };

/* Why a slice was closed. */
enum tk__close_reason { TK__CLOSE_END, TK__CLOSE_OUTER, TK__CLOSE_TRACE_END };

/* An open slice: what the format needs at its end (the begin event is gone by then). */
typedef struct tk__slice {
	uint8_t kind;     /* tk__slice_kind */
	uint16_t pair;    /* TK__SLICE_USER: index of the pair */
	uint64_t key;     /* what the end must match: thisfn, pair index, call number */
	uint64_t begin_ns;
	uint64_t arg[2];  /* FUNC: thisfn, call_site; USER: d0, d1; KERCALL: number, cpu */
	const char *name; /* the pair's name (USER); NULL: label, or the address (FUNC) */
	char label[32];   /* KERCALL: the call's name */
} tk__slice;

typedef struct tk__thread {
	int32_t pid, tid;
	uint32_t used;      /* 1 for a taken hash slot */
	uint32_t depth;     /* open slices on the stack */
	uint32_t cap;
	uint32_t overflow;  /* begins past TK_EXPORT_MAX_DEPTH still open */
	tk__slice *stack;
} tk__thread;

typedef struct tk__pair {
	uint32_t begin_code, end_code;
	char name[48];
} tk__pair;

typedef struct tk__counter {
	uint32_t code;
	char name[48];
} tk__counter;

/* Kernel calls by number: QNX's are under _TRACE_MAX_KER_CALL_NUM (128), Linux system calls
 * (TRACEKIT_KERCALLS, docs/kev-format.md 4.4) under 512. */
#define TK__MAX_KERCALLS 512

/* 1 when kernel-call event d (class 2) enters its call: the decoder's class, which goes by
 * bit 7 for Linux system calls (any number) and by QNX's code ranges otherwise (entry
 * 0-127); the code range when d has no class (an event made by hand). */
static inline int tk__export_kercall_entry(const tk_kev_decoded *d)
{
	if (d->cls_desc != NULL)
		return d->cls_desc->ext_class == _NTO_TRACE_KERCALLENTER;
	return d->code < _TRACE_MAX_KER_CALL_NUM;
}

/*
 * VTune CSV data in a .kev (docs/vtune-csv.md, "Intervals and counters in a .kev trace"):
 * USER events 1000-1005 that tracecsv import writes, paired by the model
 * (export_vtune.c) when the trace says it holds them (tk__export_csv_wanted()). A format
 * gets each interval whole at its end (begins without an end are dropped, as tracecsv
 * export drops them) and each counter sample.
 */
#define TK__CSV_FIRST_CODE 1000u /* task begin; 1001 task end, 1002/1003 frame, 1004 counter, 1005 name */
#define TK__CSV_N_CODES 6u

enum tk__interval_kind { TK__IV_TASK, TK__IV_FRAME };

/* A name of the trace's name events: shared by the intervals open under it (refs). */
typedef struct tk__csv_name {
	uint32_t refs;
	uint32_t len;  /* bytes, NUL excluded */
	int utf8;      /* valid UTF-8 */
	uint64_t hash; /* of s (FNV-1a), made once */
	/* the format's own numbers for this name (0: not known yet): formats look a name up by
	 * its text once, not at every event, which made a long name (a CSV record may hold
	 * 1 MiB) cost its length at every interval and sample */
	uint32_t fmt_id[2];
	char s[]; /* NUL-terminated */
} tk__csv_name;

typedef struct tk__interval {
	uint8_t kind;      /* tk__interval_kind */
	uint8_t has_pid;   /* the pid is given (flag bit 0); else pid is 0 */
	uint8_t has_tid;   /* tasks: the tid is given (flag bit 1); else tid is 0 (frames: always 0) */
	int32_t pid, tid;
	uint32_t id;       /* the trace's id of the interval */
	uint32_t lane;     /* the lowest lane of its track free at its begin: intervals of one
			    * (track, lane) never overlap */
	uint64_t track;    /* the track: (task, pid, tid) or (frame, pid or none), numbered from 0
			    * in order of first use */
	uint64_t begin_ns, end_ns;
	tk__csv_name *name; /* formats may set name->fmt_id */
} tk__interval;

typedef struct tk__csv_sample {
	uint64_t track;    /* the counter: (pid or none, name, .INST or not), numbered from 0 */
	int is_new;        /* the first sample of its track */
	uint8_t has_pid, inst, is_double;
	int32_t pid, tid;  /* pid 0 when not given */
	uint64_t ns;
	int64_t i;         /* !is_double */
	double d;          /* is_double */
	tk__csv_name *name; /* formats may set name->fmt_id */
} tk__csv_sample;

struct tk__csv_model;

struct tk__format;
struct tk__light_ev;
struct tk__slot_seg;
struct traceparser_state;

struct tk_export {
	const struct tk__format *fmt;
	tk_export_format format;
	int owner_markers; /* TRACEKIT_OWNER=buffer: the THRUNNING after a BUFFER names the owner */
	int one_by_one;    /* TK__EXPORT_ONE_BY_ONE */
	int no_scan;       /* TK__EXPORT_NO_SCAN */
	FILE *stream;
	int failed;        /* a write failed: TK_EIO from now on */
	int started;       /* the format's header is written */
	int finished;
	char errmsg[256];
	tk_export_stats stats;

	/* output buffer, written to the stream when full */
	char *out;
	size_t out_len, out_cap;

	/* threads: open addressing on (pid, tid) */
	tk__thread *threads;
	size_t n_threads, threads_cap;
	tk__thread *last_thread; /* the thread of the last event (runs of one thread are common) */

	/* user pairs and counters: code -> index + 1 (0: none) */
	tk__pair pairs[TK_EXPORT_MAX_PAIRS];
	tk__counter counters[TK_EXPORT_MAX_PAIRS];
	unsigned n_pairs, n_counters;
	uint16_t pair_begin[1024], pair_end[1024], counter_of[1024];

	void *fmt_state; /* the format's own state */

	struct tk_symbols *symbols; /* function slice names (export_symbols.c); NULL: addresses */
	int owns_symbols;           /* made by tk__export_use_symbols(): freed with x */

	/* VTune CSV data (export_vtune.c): on when csv_on, before the first event */
	int csv_on;
	struct tk__csv_model *csv;
	char csv_warning[256]; /* the first malformed or unnamed event, with where it is; "" if none */
	/* the byte offset of the event being exported, for messages (tk_export_file() sets it;
	 * NULL: not known) */
	int64_t (*where)(void *where_ud);
	void *where_ud;
};

/* 1 when events (cls, code) are VTune CSV data in this export: the model takes them decoded
 * (export_vtune.c), never a format's light path or scan. */
static inline int tk__export_csv_code(const tk_export *x, unsigned cls, unsigned code)
{
	return x->csv_on && cls == 6 && code - TK__CSV_FIRST_CODE < TK__CSV_N_CODES;
}

/* What a format implements. Every function returns 0 or a TK_E* code. */
typedef struct tk__format {
	int (*start)(tk_export *x);
	int (*event)(tk_export *x, const tk_kev_decoded *d); /* every event first; may be NULL */
	int (*process_name)(tk_export *x, int32_t pid, const char *name, size_t len, int utf8);
	int (*thread_name)(tk_export *x, int32_t pid, int32_t tid, const char *name, size_t len, int utf8);
	int (*slice_begin)(tk_export *x, const tk__thread *t, const tk__slice *s); /* may be NULL */
	int (*slice_end)(tk_export *x, const tk__thread *t, const tk__slice *s, uint64_t end_ns,
			 const tk_kev_decoded *end, int reason);
	/* t: the event's thread, NULL when it is not tracked (pid/tid then say what is known) */
	int (*instant)(tk_export *x, const tk__thread *t, int32_t pid, int32_t tid, const tk_kev_decoded *d);
	int (*counter)(tk_export *x, const tk__thread *t, const tk__counter *c, uint64_t ns, int64_t value);
	int (*thread_new)(tk_export *x, const tk__thread *t); /* first event of a thread; may be NULL */
	int (*finish)(tk_export *x);
	void (*free)(tk_export *x);
	/* Optional (NULL: every event is decoded). A format that needs no event's fields but
	 * for names and states sets it: then SYSTEM FUNC_ENTER/EXIT and USER events of at most
	 * two words reach the model undecoded (tk__export_light()), and this takes the place of
	 * event() for them; it returns 0, or 1 to have the event decoded after all (nothing
	 * done but the owner's thread made). slice_end(), instant() and counter() then get
	 * NULL for the end event / d. */
	int (*light_event)(tk_export *x, unsigned cls, unsigned code, int owner_known, int32_t pid, int32_t tid);
	/* Optional (NULL: tk__export_light_run_model()): tk__export_light_run() done by the
	 * format itself, its output fused with the model's work; it must keep the model's
	 * semantics exactly, and hands what it does not do itself to
	 * tk__export_light_run_model() one event at a time. */
	int (*light_run)(tk_export *x, const struct tk__light_ev *ev, size_t n, size_t *taken);
	/* Optional: light_run() on the parser's slots themselves (export_file.c gives them when
	 * the file's clock counts ns and its bytes are the machine's), one segment of a CPU
	 * at a time. It takes seg->slots[0..*taken) and stops at a slot of another CPU (the
	 * next segment) or at one to be decoded (the model's send-back); 0 or a TK_E* code. */
	int (*slot_run)(tk_export *x, const struct tk__slot_seg *seg, size_t *taken);
	/* Optional, with light_event (NULL: the parser's runs go through the light path). The
	 * format's own pass over the slots of a file (export_file.c; tk__tp_batch_scan() in
	 * src/traceparser/tp_batch.h): slots, n of them, from the first slot of a run on, in
	 * the file's byte order (conv: swapped). It takes them in order up to the first slot
	 * that is not batched (or earlier) and returns how many it took; a slot it does not
	 * handle itself goes to slow(slow_ud, st, slot), the light path's way, which returns
	 * 0 or the export's error (the scan then stops after that slot). 0: none taken. */
	size_t (*scan)(tk_export *x, struct traceparser_state *st, const uint32_t *slots, size_t n, int conv,
		       int (*slow)(void *slow_ud, struct traceparser_state *st, const uint32_t *slot), void *slow_ud);
	/* VTune CSV data (x->csv_on): an interval at its end, a counter sample. */
	int (*interval)(tk_export *x, const tk__interval *iv);
	int (*csv_sample)(tk_export *x, const tk__csv_sample *c);
} tk__format;

extern const tk__format tk__export_json;
extern const tk__format tk__export_perfetto;
/*
 * The formats' scans of the parser's blocks (tk__format.scan: json_scan(), pf_scan()). Each
 * (class, event) of the USER and SYSTEM classes gets what the format's stretch does with it:
 * 0 not batched (the run ends there), TK__SCAN_MODEL the model's (the light path), or one of
 * the shapes the stretch writes in place; pair[code] is the index of the pair USER code
 * begins or ends.
 */
enum { TK__SCAN_MODEL = 1, TK__SCAN_ENTER, TK__SCAN_EXIT, TK__SCAN_BEGIN, TK__SCAN_END, TK__SCAN_INSTANT };
void tk__export_scan_ops(const tk_export *x, const struct traceparser_state *st, uint8_t op[32 * 1024],
			 uint8_t pair[1024]);
/*
 * The scans' common loop over slots[0..n): one CPU's stretch of the model's current thread
 * at a time through stretch() (which returns where it stopped: the end, a slot of another
 * CPU with *slow_next 0, or one it does not take with *slow_next 1), any other slot through
 * slow() alone. Returns the slots taken, as tk__format.scan does.
 */
typedef const uint32_t *(*tk__scan_stretch)(tk_export *x, tk__thread *t, const uint32_t *p, const uint32_t *end,
					     uint64_t msb, int *slow_next);
size_t tk__export_scan(tk_export *x, struct traceparser_state *st, const uint32_t *slots, size_t n,
		       int (*slow)(void *, struct traceparser_state *, const uint32_t *), void *slow_ud,
		       tk__scan_stretch stretch);

extern const tk__format tk__export_perfetto_model; /* without light_run, slot_run: for tests */
extern const tk__format tk__export_json_model;     /* every USER instant and pair end decoded: for tests */
extern const tk__format tk__export_stats;
extern const tk__format tk__export_sqlite;

/* tk_export_file_flags(), for tests only: every event through the parser's callback one by
 * one, no runs (tp_batch.h), to compare the two paths (SQLite takes no runs anyway). */
#define TK__EXPORT_ONE_BY_ONE 0x40000000u
/* tk_export_file_flags(), for tests only: the model's own light path even where the format
 * has a fused one (tk__format.light_run), to compare the two. */
#define TK__EXPORT_MODEL_RUNS 0x20000000u
/* tk_export_file_flags(), for tests only: the parser's runs through the light path even for a
 * format with its own scan (tk__format.scan), to compare the two. */
#define TK__EXPORT_NO_SCAN 0x10000000u

/* An exporter of a given format; stream may be NULL for a format that writes no stream. */
int tk__export_create(tk_export **out, const tk__format *format, tk_export_format fmt, FILE *stream);

/* tk_export_file() with the exporter made by the caller; x is freed. */
int tk__export_run_file(tk_export *x, const char *in_path, const char *pairs, const char *counters,
			tk_export_stats *stats, char *errmsg, size_t errmsg_cap);

/* ---- the output buffer ------------------------------------------------------------------ */

int tk__export_flush(tk_export *x);

/* Makes room for n more bytes (flushing); 0 or TK_EIO. */
static inline int tk__out_room(tk_export *x, size_t n)
{
	if (x->out_len + n <= x->out_cap)
		return 0;
	return tk__export_flush(x) == 0 && n <= x->out_cap ? 0 : -1;
}

static inline void tk__out_mem(tk_export *x, const void *p, size_t n)
{
	/* callers reserve room first for short pieces; long ones go through in chunks */
	const char *s = p;
	if (n <= x->out_cap - x->out_len) { /* the usual case: one copy (inlined for a literal) */
		memcpy(x->out + x->out_len, s, n);
		x->out_len += n;
		return;
	}
	while (n > 0) {
		size_t room = x->out_cap - x->out_len, k = n < room ? n : room;
		if (k == 0) {
			if (tk__export_flush(x) != 0)
				return;
			continue;
		}
		memcpy(x->out + x->out_len, s, k);
		x->out_len += k;
		s += k;
		n -= k;
	}
}

#define TK__OUT_LIT(x, lit) tk__out_mem((x), (lit), sizeof(lit) - 1)

/* Decimal and hexadecimal numbers (room for 24 bytes must be reserved). */

/* The number of decimal digits of v (1 for 0). */
static inline unsigned tk__dec_digits(uint64_t v)
{
	static const uint64_t pow10[20] = { 1ull,
					    10ull,
					    100ull,
					    1000ull,
					    10000ull,
					    100000ull,
					    1000000ull,
					    10000000ull,
					    100000000ull,
					    1000000000ull,
					    10000000000ull,
					    100000000000ull,
					    1000000000000ull,
					    10000000000000ull,
					    100000000000000ull,
					    1000000000000000ull,
					    10000000000000000ull,
					    100000000000000000ull,
					    1000000000000000000ull,
					    10000000000000000000ull };
	/* log10 from the bit length, corrected by one comparison */
	unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1);
	unsigned d = (bits * 1233u) >> 12;
	return d + ((v | 1) >= pow10[d]);
}

/* v in decimal at p (the digits, two at a time from the end); returns the end. */
static inline char *tk__fmt_u64(char *p, uint64_t v)
{
	static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				       "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				       "8081828384858687888990919293949596979899";
	unsigned n = tk__dec_digits(v);
	char *end = p + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		end -= 2;
		memcpy(end, pairs + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(end - 2, pairs + 2 * v, 2);
	else
		end[-1] = (char)('0' + v);
	return p + n;
}

/* "0x" and v in lowercase hexadecimal at p (two digits at a time); returns the end. */
static inline char *tk__fmt_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	static const char pairs[513] =
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
		"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
		"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
		"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
		"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
		"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
		"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
		"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
	unsigned n = (67u - (unsigned)__builtin_clzll(v | 1)) / 4;
	char *end;
	p[0] = '0';
	p[1] = 'x';
	p += 2;
	end = p + n;
	for (unsigned i = n; i >= 2; i -= 2, v >>= 8)
		memcpy(p + i - 2, pairs + 2 * (v & 0xff), 2);
	if (n & 1)
		p[0] = digits[v & 0xf];
	return end;
}

static inline void tk__out_u64(tk_export *x, uint64_t v)
{
	x->out_len = (size_t)(tk__fmt_u64(x->out + x->out_len, v) - x->out);
}

static inline void tk__out_i64(tk_export *x, int64_t v)
{
	if (v < 0) {
		x->out[x->out_len++] = '-';
		tk__out_u64(x, (uint64_t)0 - (uint64_t)v);
	} else {
		tk__out_u64(x, (uint64_t)v);
	}
}

static inline void tk__out_hex(tk_export *x, uint64_t v)
{
	x->out_len = (size_t)(tk__fmt_hex(x->out + x->out_len, v) - x->out);
}

/* An event of the light path (tk__format.light_event): header in host order, the payload's
 * first two words in host order (0 past len), its time and owner. Returns 0, a TK_E* code,
 * or 1 when the event must go through tk_export_event() decoded instead (nothing done). */
int tk__export_light(tk_export *x, unsigned header, uint32_t w0, uint32_t w1, unsigned len, uint64_t ns,
		     int owner_known, int32_t pid, int32_t tid);

/* One event of a run for tk__export_light_run(): a simple slot as the parser read it. */
typedef struct tk__light_ev {
	uint64_t ns;
	uint32_t header, w0, w1; /* host order */
	uint32_t owner_known;
	int32_t pid, tid;
} tk__light_ev;

/*
 * Events ev[0..n) through the light path, one after the other, as tk__export_light() would
 * take each with len 2, without a call per event. *taken: how many it took; when less than
 * n, ev[*taken] must go through tk_export_event() decoded (the first of its kind, an owner
 * not known, a format that asks for it), after which the caller goes on with the next one.
 * Returns 0 or a TK_E* code (the export has failed: the caller stops).
 */
int tk__export_light_run(tk_export *x, const tk__light_ev *ev, size_t n, size_t *taken);

/* Slots for tk__format.slot_run: 16 bytes each (header, time, two payload words) in the
 * machine's byte order, from a CPU whose owner and upper time bits stay the same through
 * the parser's run; slots of other CPUs may follow (the format stops there). */
typedef struct tk__slot_seg {
	const uint32_t *slots;
	size_t n;
	uint64_t msb;  /* the upper time bits (ns = msb | time word) */
	unsigned cpu;  /* the CPU of the segment's slots */
	int known;     /* the owner is known: pid, tid */
	int32_t pid, tid;
} tk__slot_seg;

/* tk__export_light_run() by the model alone, whatever the format's light_run. */
int tk__export_light_run_model(tk_export *x, const tk__light_ev *ev, size_t n, size_t *taken);

/* tk_export_add_spec(); lenient: items that are malformed or conflict are skipped. */
int tk__export_add_spec(tk_export *x, const char *spec, int counters, int lenient);

/* Forgets every pair and counter declared. */
void tk__export_reset_declarations(tk_export *x);

/* The fields of an event as JSON object members (no braces) into the output buffer
 * (export_json.c; also the args column of the SQLite export). */
void tk__json_fields(tk_export *x, const tk_kev_decoded *d);

/* export_symbols.c: a symbolizer of x's own, the mappings of in_path read first (a file;
 * "-" only as they come); the name of a function slice (NULL: none, the address is the
 * name); freeing what x owns. */
int tk__export_use_symbols(tk_export *x, const char *in_path);
const char *tk__export_func_name(tk_export *x, const tk_kev_decoded *d, uint64_t addr);
/* The same for an event known by its owner's pid and time (the light path). */
const char *tk__export_func_name_at(tk_export *x, int32_t pid, uint64_t ns, uint64_t addr);
void tk__export_free_symbols(tk_export *x);

/* ---- VTune CSV data (export_vtune.c) ------------------------------------------------------ */

/* 1 when the codes are free for the convention: none of USER 1000-1005 declared as a pair
 * or counter (declarations win). */
int tk__export_csv_codes_free(const tk_export *x);
/* A USER 1000-1005 event of a trace with x->csv_on: paired, counted, handed to the format. */
int tk__export_csv_event(tk_export *x, const tk_kev_decoded *d);
/* At the end: intervals still open are dropped (counted). */
void tk__export_csv_finish(tk_export *x);
void tk__export_csv_free(tk_export *x);

/* Sets the error message (printf-like) and returns err. */
int tk__export_error(tk_export *x, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* EXPORT_INTERNAL_H */
