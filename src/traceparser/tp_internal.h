/* SPDX-License-Identifier: MIT */
/*
 * Private: the traceparser state and the pieces shared by its source files
 * (tp_input.c: reading, tp_header.c: header and syspage, traceparser.c: events).
 */
#ifndef TP_INTERNAL_H
#define TP_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "tracekit/traceparser.h"

#define TP_N_CLASSES 32
#define TP_TABLE_SIZE (TP_N_CLASSES * _TRACE_MAX_EVENT_NUM)

/* Limits that keep hostile files from exhausting memory. */
#define TP_MAX_HEADER_BYTES (1u << 20)     /* header text */
#define TP_MAX_HEADER_KEYS 4096u
#define TP_MAX_SYSPAGE_BYTES (64u << 20)
#define TP_MAX_PENDING 4096u               /* combine events waiting for their end */
#define TP_MAX_COMBINE_WORDS (1u << 18)    /* 1 MiB of payload per combine event */
/* Sort mode: memory for events before they go to runs in a temporary file (default and
 * smallest accepted by tk_traceparser_sort_memory()), runs merged at once, and the read
 * buffer of each run in a merge. */
#define TP_SORT_BUDGET (64u << 20)
#define TP_SORT_MIN_BUDGET (64u << 10)
#define TP_SORT_FANIN 64u
#define TP_SORT_READ_BUF (64u << 10)

/* ---- input ---------------------------------------------------------------------------- */

struct tp_async;

struct tp_input {
	int fd;
	int own_fd;
	const char *name;
	unsigned char *buf;
	size_t cap;
	size_t pos, end; /* valid bytes are buf[pos..end) */
	int eof;
	int err;         /* errno of a failed read */
	struct tp_async *async; /* reader thread, for the events of large regular files */
	uint64_t offset; /* file offset of the byte at the cursor */
	int may_wait;    /* not a regular file: a read can wait for a writer (a pipe) */
	void (*on_wait)(void *ud); /* called before such a wait (tk_traceparser_on_wait()) */
	void *on_wait_ud;
};

int tk__tp_input_open(struct tp_input *in, const char *filename);
void tk__tp_input_close(struct tp_input *in);
/*
 * Makes at least `want` bytes available at the cursor if the file has them. Returns a
 * pointer to the cursor and the number of bytes available in *avail (less than want only
 * at end of file or on a read error, see in->err).
 */
unsigned char *tk__tp_input_peek(struct tp_input *in, size_t want, size_t *avail);
void tk__tp_input_skip(struct tp_input *in, size_t n);
/*
 * Moves the unread bytes to the start of the (malloc-aligned) buffer. Done once after the
 * header: from then on whole 16-byte slots are consumed and a partial slot is moved to the
 * front on refill, so every slot handed out is 16-byte aligned.
 */
void tk__tp_input_align(struct tp_input *in);
/*
 * After tk__tp_input_align(): if the input is a large regular file, start a reader thread
 * that fills chunks while the caller parses. Falls back to synchronous reading silently.
 */
int tk__tp_input_start_async(struct tp_input *in);
/* Bytes left in the file after the cursor, or UINT64_MAX when unknown (a pipe). */
uint64_t tk__tp_input_remaining(const struct tp_input *in);

/* ---- state ---------------------------------------------------------------------------- */

/* A callback and the user data it receives: its own, or traceparser()'s when it was
 * attached with NULL (resolved when attached and at each traceparser() call, so that the
 * event loop passes ud as it is). */
struct tp_cb {
	tracep_callb_func_t fn;
	void *ud;
};

struct tp_attr {
	char *key;   /* NUL-terminated */
	char *value; /* value_len bytes, plus a NUL after them */
	unsigned value_len;
	uint64_t offset; /* file offset of the entry's "TRACE_", for error messages */
};

/*
 * A combine event waiting for its CE. Pending events are on three doubly linked lists:
 * all of them oldest first (next/prev: eviction at the cap, reports), and two hash chains
 * in the same order, one per (timestamp, CPU/class/code) and one per timestamp, so that a
 * CC or CE slot finds its CB in O(1) however many events never finish.
 */
struct tp_pending {
	struct tp_pending *next, *prev;
	struct tp_pending *knext, *kprev; /* chain of the (time, key) bucket */
	struct tp_pending *tnext, *tprev; /* chain of the time bucket */
	uint32_t header, time, msb;
	int32_t pid, tid; /* owner when the CB was read */
	int owner_known;
	uint64_t slot; /* index of the CB slot */
	uint32_t *words;
	size_t n_words, cap_words;
	int overflow;
	uint32_t inline_words[14];
};

struct tp_run {
	uint64_t off, n; /* byte offset in the spool, number of events */
};

struct tp_sorted {
	uint64_t clk;
	uint64_t slot;
	uint32_t header, time, n_words;
	uint32_t provisional; /* 1: clk's upper bits await the CPU's first TIME event */
	int32_t pid, tid;
	uint32_t owner_known;
	uint64_t words_off; /* index into the word arena */
};

#define TP_HASH_SIZE 4096u /* buckets of each pending-event hash (a power of 2) */
#define TP_MAX_HELD 8u     /* buffer-owner mode: events held until the owner is known */

struct tp_chain {
	struct tp_pending *head, *tail;
};

/* An event held back until the THRUNNING after a CONTROL BUFFER names its owner. */
struct tp_held {
	uint32_t header, time, w[2];
	uint64_t slot, clk;
};

struct traceparser_state {
	/* cb[THRUNNING] is the owner hook, which calls thrun_cb (traceparser.c) */
	struct tp_cb cb[TP_TABLE_SIZE];
	struct tp_cb thrun_cb;
	/* bit i: cb[i] was attached with NULL user data, so it gets single_user_data */
	uint64_t cb_default_ud[TP_TABLE_SIZE / 64];
	/* the batched hand-over (tp_batch.h): bit i: cb[i]'s simple slots go to batch_fn in runs */
	uint64_t batch_bits[TP_TABLE_SIZE / 64];
	int (*batch_fn)(struct traceparser_state *st, void *ud, const uint32_t *slots, size_t n, uint64_t first_slot);
	void *batch_ud;
	/* the run being handed over: its first slot, and the slot tk__tp_batch_deliver_one()
	 * delivered last (UINT64_MAX: none), so that the previous callback stays the previous slot */
	uint64_t run_first, run_delivered;
	/* tk__tp_batch_scan(): the reader finds a run's end itself (NULL: the loop does) */
	size_t (*batch_scan)(struct traceparser_state *st, void *ud, const uint32_t *slots, size_t n,
			     uint64_t first_slot);

	FILE *debug_stream;
	unsigned debug_flags;
	unsigned endian_conv;
	void *single_user_data;
	traceparser_error_t error;
	char errstr[512];
	unsigned sort_mode;

	/* the event being delivered, and the previous callback */
	uint32_t cur_header, cur_time;
	uint64_t cur_slot;
	int cur_clk_explicit;
	uint64_t cur_clk;
	uint32_t prev_header;
	int prev_return;
	/* the owner hook ran for a THRUNNING without a callback: the previous callback's */
	int hook_prev_valid;
	uint32_t hook_header, hook_prev_header;
	int hook_prev_return;

	/* header and syspage */
	struct tp_attr *attrs;
	unsigned n_attrs;
	unsigned char *syspage;
	unsigned syspage_len;
	uint64_t cycles_per_sec;
	uint64_t events_offset; /* file offset of the first event slot */
	uint64_t header_end_offset; /* file offset of "TRACE_HEADER_END::" */

	/* 64-bit time */
	uint32_t msb[64];
	uint64_t msb_known;
	/* sort mode: events collected on each CPU before its first TIME event, whose upper
	 * time bits are fixed when that TIME event arrives (QNX buffers begin BUFFER, TIME) */
	uint32_t n_provisional[64];
	uint32_t last_msb;
	int any_msb;
	int have_first;         /* the first slot of the file has been seen */
	uint32_t first_time;    /* its 32-bit timestamp */
	int have_clk_initial;   /* clk_initial is final (a TIME event has been seen) */
	uint64_t clk_initial;   /* CLK of the first slot (_TRACEPARSER_INFO_CLK_INTIAL) */

	/* combine events waiting for their CE */
	struct tp_pending *pending, *pending_tail, *free_pending;
	unsigned n_pending;
	struct tp_chain *kbuckets, *tbuckets; /* TP_HASH_SIZE each, allocated with the first CB */
	uint32_t *combine_buf;
	size_t combine_cap;

	void (*on_wait)(void *ud); /* tk_traceparser_on_wait() */
	void *on_wait_ud;

	/* sort mode */
	size_t sort_budget;  /* 0: TP_SORT_BUDGET */
	FILE *spool;         /* runs written when the budget is exceeded */
	uint64_t spool_end;
	struct tp_run *runs;
	size_t n_runs, cap_runs;
	struct tp_sorted *sorted;
	size_t n_sorted, cap_sorted;
	uint32_t *arena;
	size_t n_arena, cap_arena;

	struct tk_traceparser_stats stats;

	/*
	 * Owner of each event (docs/kev-format.md, "Owner of every event"). QNX files: the
	 * last THRUNNING of the event's CPU. tracekit files (TRACEKIT_OWNER=buffer): the
	 * THRUNNING that follows the last CONTROL BUFFER; the events from that BUFFER up to
	 * the THRUNNING (control events) are held until it arrives.
	 */
	int owner_buffer_mode;
	unsigned kercalls_flags; /* TK_KEV_DECODE_LINUX_* from TRACEKIT_KERCALLS */
	int32_t cpu_pid[64], cpu_tid[64];
	uint64_t cpu_owner_known;
	int32_t buf_pid, buf_tid;
	int buf_owner_known;
	int delivering; /* a callback of the user's is running: there is an event being delivered */
	int cur_owner_explicit; /* the event being delivered carries its own owner */
	int32_t cur_pid, cur_tid;
	int cur_owner_known;
	int holding;
	unsigned n_held;
	struct tp_held held[TP_MAX_HELD];

	/* One time line: TRACEKIT_CLOCK_CYCLES and TRACEKIT_CLOCK_RAW_NS of the header */
	int have_clock_ref;
	uint64_t clock_cycles, clock_raw_ns;
	/* floor(2^64 * 10^9 / cycles_per_sec) when that fits (more than 1 GHz), else 0: the
	 * conversion to ns multiplies by it and corrects the quotient (traceparser.c) */
	uint64_t ns_mult;

	/*
	 * Storage for the values traceparser_get_info() computes: one field per mode, so a
	 * pointer returned for one mode keeps its value when another mode is asked.
	 */
	struct {
		unsigned now_class, now_event, prev_class, prev_event, clk_msb;
		int prev_return;
		uint64_t event_id, clk_initial, clk, clk_delta, time_delta, offset, ns;
	} info;
};

/*
 * Records an error: level, errno, message (also printed with _TRACEPARSER_DEBUG_ERRORS).
 * tk__tp_fail_at() says where: the message becomes "byte offset N: <what>", so that tools
 * print "tool: file: byte offset N: what".
 */
int tk__tp_fail(struct traceparser_state *st, traceparser_error_t level, int err_no, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int tk__tp_fail_at(struct traceparser_state *st, traceparser_error_t level, int err_no, uint64_t offset,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Reads and checks the header and syspage; prints them per the debug flags. */
int tk__tp_read_header(struct traceparser_state *st, struct tp_input *in);
void tk__tp_free_header(struct traceparser_state *st);
const struct tp_attr *tk__tp_find_attr(const struct traceparser_state *st, const char *key);
/* Name of header keyword `index` (info_modes_t 0..18), or NULL. */
const char *tk__tp_known_key(unsigned index);
void tk__tp_print_syspage(FILE *out, const unsigned char *sp, size_t len, int swap);

#endif /* TP_INTERNAL_H */
