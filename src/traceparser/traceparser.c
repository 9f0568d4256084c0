/* SPDX-License-Identifier: MIT */
/*
 * libtraceparser: reads a .kev file (header, syspage, 16-byte events), reassembles combine
 * events and calls the callbacks attached to each (class, event).
 *
 * Dispatch: one table of 32 x 1024 {callback, user data} entries indexed by the low 15
 * bits of the header word (internal class and code), so delivering a simple event is a
 * load, a test and an indirect call. Events are copied one by one out of the read buffer
 * into an aligned slot, so callbacks always get an aligned, writable buffer whatever the
 * alignment of the events in the file.
 *
 * Combine events: a CB slot opens a pending event; CC slots append to the first pending
 * event with the same timestamp (preferring one with the same CPU, class and code, then
 * any, as QNX's parser matches on the timestamp alone); the CE slot completes it and it is
 * delivered with the CB's header. CC/CE slots with nothing to match are ignored, as QNX
 * does; pending and per-event sizes are capped (tp_internal.h).
 *
 * Time: CONTROL TIME events carry the upper 32 bits of the cycle counter per CPU; the
 * full 64-bit time of an event is computed on request from the latest TIME of its CPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/tk_bytes.h"
#include "traceparser/tp_batch.h"
#include "traceparser/tp_internal.h"

#define TIME_INDEX ((1u << 10) | _TRACE_CONTROL_TIME)
#define BUFFER_INDEX ((1u << 10) | _TRACE_CONTROL_BUFFER) /* TIME_INDEX + 1 */
#define THRUN_INDEX ((4u << 10) | STATE_RUNNING)
#define KEY_MASK 0x3f007fffu /* CPU, class and code of a header */
#define NO_RUN SIZE_MAX /* the fast loops: no run of batched slots begun */
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

__attribute__((format(printf, 6, 0)))
static int fail_v(struct traceparser_state *st, traceparser_error_t level, int err_no, int has_offset,
		  uint64_t offset, const char *fmt, va_list ap)
{
	int n = 0;

	st->error = level;
	if (has_offset)
		n = snprintf(st->errstr, sizeof(st->errstr), "byte offset %" PRIu64 ": ", offset);
	vsnprintf(st->errstr + n, sizeof(st->errstr) - (size_t)n, fmt, ap);
	if (st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_ERRORS))
		fprintf(st->debug_stream, "TRACEPARSER: %s\n", st->errstr);
	errno = err_no;
	return -1;
}

int tk__tp_fail(struct traceparser_state *st, traceparser_error_t level, int err_no, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fail_v(st, level, err_no, 0, 0, fmt, ap);
	va_end(ap);
	return rc;
}

int tk__tp_fail_at(struct traceparser_state *st, traceparser_error_t level, int err_no, uint64_t offset,
		   const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fail_v(st, level, err_no, 1, offset, fmt, ap);
	va_end(ap);
	return rc;
}

/* ---- state ---------------------------------------------------------------------------- */

static void sort_free(struct traceparser_state *st);

static void free_pending_list(struct tp_pending *p)
{
	while (p != NULL) {
		struct tp_pending *next = p->next;
		if (p->words != p->inline_words)
			free(p->words);
		free(p);
		p = next;
	}
}

static void reset_file_state(struct traceparser_state *st)
{
	tk__tp_free_header(st);
	free_pending_list(st->pending);
	st->pending = st->pending_tail = NULL;
	st->n_pending = 0;
	if (st->kbuckets != NULL) {
		memset(st->kbuckets, 0, TP_HASH_SIZE * sizeof(*st->kbuckets));
		memset(st->tbuckets, 0, TP_HASH_SIZE * sizeof(*st->tbuckets));
	}
	free(st->sorted);
	st->sorted = NULL;
	st->n_sorted = st->cap_sorted = 0;
	free(st->arena);
	st->arena = NULL;
	st->n_arena = st->cap_arena = 0;
	sort_free(st);
	memset(st->msb, 0, sizeof(st->msb));
	memset(st->n_provisional, 0, sizeof(st->n_provisional));
	st->msb_known = 0;
	st->last_msb = 0;
	st->any_msb = 0;
	st->have_first = 0;
	st->first_time = 0;
	st->have_clk_initial = 0;
	st->clk_initial = 0;
	st->cur_header = st->cur_time = 0;
	st->cur_slot = 0;
	st->cur_clk_explicit = 0;
	st->endian_conv = 0;
	st->cycles_per_sec = 0;
	st->ns_mult = 0;
	st->events_offset = 0;
	st->owner_buffer_mode = 0;
	st->kercalls_flags = 0;
	st->hook_prev_valid = 0;
	st->cpu_owner_known = 0;
	st->buf_owner_known = 0;
	st->buf_pid = st->buf_tid = 0;
	st->cur_owner_explicit = 0;
	st->holding = 0;
	st->n_held = 0;
	st->have_clock_ref = 0;
	st->clock_cycles = st->clock_raw_ns = 0;
	st->error = 0;
	st->errstr[0] = '\0';
	memset(&st->stats, 0, sizeof(st->stats));
}

/*
 * THRUNNING events pass through a hook in the dispatch table, which notes the CPU's owner
 * and then calls the user's callback (kept in st->thrun_cb): the fast loop needs no test
 * of its own for them.
 */
static inline void note_running(struct traceparser_state *st, uint32_t h, uint32_t d1, uint32_t d2);

static int thrun_hook(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	(void)ud;
	if (len >= 2)
		note_running(st, h, tk__cs32((int)st->endian_conv, buf[0]), tk__cs32((int)st->endian_conv, buf[1]));
	if (st->thrun_cb.fn == NULL) {
		/* no callback of the user's ran: the "previous callback" stays the one before
		 * (traceparser_get_info() reads these while prev_header is this event's) */
		if (!st->hook_prev_valid || st->prev_header != st->hook_header) {
			st->hook_prev_header = st->prev_header;
			st->hook_prev_return = st->prev_return;
		}
		st->hook_prev_valid = 1;
		st->hook_header = h;
		return st->prev_return;
	}
	st->hook_prev_valid = 0;
	{
		int was = st->delivering, rc;

		st->delivering = 1;
		rc = st->thrun_cb.fn(st, st->thrun_cb.ud, h, t, buf, len);
		st->delivering = was;
		return rc;
	}
}

/* The previous callback of the user's (not the owner hook's call of no callback). */
static uint32_t prev_header_of(const struct traceparser_state *st)
{
	return st->hook_prev_valid && st->prev_header == st->hook_header ? st->hook_prev_header : st->prev_header;
}

static int prev_return_of(const struct traceparser_state *st)
{
	return st->hook_prev_valid && st->prev_header == st->hook_header ? st->hook_prev_return : st->prev_return;
}

static void install_hooks(struct traceparser_state *st)
{
	st->cb[THRUN_INDEX].fn = thrun_hook;
	st->cb[THRUN_INDEX].ud = NULL;
}

struct traceparser_state *traceparser_init(struct traceparser_state *st)
{
	if (st != NULL) {
		reset_file_state(st);
		free_pending_list(st->free_pending);
		free(st->combine_buf);
		free(st->kbuckets);
		free(st->tbuckets);
		memset(st, 0, sizeof(*st));
		install_hooks(st);
		return st;
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	install_hooks(st);
	return st;
}

void traceparser_destroy(struct traceparser_state **stp)
{
	struct traceparser_state *st;

	if (stp == NULL || *stp == NULL)
		return;
	st = *stp;
	reset_file_state(st);
	free_pending_list(st->free_pending);
	free(st->combine_buf);
	free(st->kbuckets);
	free(st->tbuckets);
	free(st);
	*stp = NULL;
}

int traceparser_debug(struct traceparser_state *st, FILE *stream, unsigned flags)
{
	if (st == NULL || stream == NULL) {
		errno = EINVAL;
		return -1;
	}
	st->debug_stream = stream;
	st->debug_flags = flags;
	return 0;
}

int traceparser_sort(struct traceparser_state *st, unsigned mode)
{
	if (st == NULL || mode > _TRACEPARSER_SORT) {
		errno = EINVAL;
		return -1;
	}
	st->sort_mode = mode;
	return 0;
}

/* ---- callback registration ------------------------------------------------------------ */

/* The user data of callbacks attached without their own. */
static void set_single_user_data(struct traceparser_state *st, void *ud)
{
	if (ud == st->single_user_data)
		return;
	st->single_user_data = ud;
	for (unsigned w = 0; w < TP_TABLE_SIZE / 64; w++) {
		uint64_t bits = st->cb_default_ud[w];
		while (bits != 0) {
			unsigned b = (unsigned)__builtin_ctzll(bits);
			if (w * 64 + b == THRUN_INDEX)
				st->thrun_cb.ud = ud;
			else
				st->cb[w * 64 + b].ud = ud;
			bits &= bits - 1;
		}
	}
}

static int bad_arg(struct traceparser_state *st)
{
	st->error = _TRACEPARSER_UNKNOWN_ERROR;
	errno = EINVAL;
	return -1;
}

static int set_range(struct traceparser_state *st, void *ud, tracep_callb_func_t fn, unsigned cls,
		     unsigned first, unsigned last)
{
	unsigned e;

	if (cls >= TP_N_CLASSES || first > last || last >= _TRACE_MAX_EVENT_NUM)
		return bad_arg(st);
	for (e = first; e <= last; e++) {
		unsigned i = cls * _TRACE_MAX_EVENT_NUM + e;
		uint64_t bit = 1ull << (i % 64);
		struct tp_cb *cb = i == THRUN_INDEX ? &st->thrun_cb : &st->cb[i];
		cb->fn = fn;
		cb->ud = ud != NULL ? ud : st->single_user_data;
		st->cb_default_ud[i / 64] = ud != NULL ? st->cb_default_ud[i / 64] & ~bit : st->cb_default_ud[i / 64] | bit;
	}
	return 0;
}

static int attach(struct traceparser_state *st, void *ud, tracep_callb_func_t fn, unsigned ext,
		  unsigned e1, unsigned e2, int single)
{
	tk_kev_range r[4];
	int n, i;

	if (st == NULL) {
		errno = EINVAL;
		return -1;
	}
	n = tk_kev_map_events(ext, e1, e2, single ? TK_KEV_MAP_SINGLE : 0, r);
	if (n < 0)
		return bad_arg(st);
	for (i = 0; i < n; i++)
		set_range(st, ud, fn, r[i].cls, r[i].first, r[i].last);
	return 0;
}

int traceparser_cs(struct traceparser_state *st, void *ud, tracep_callb_func_t fn, unsigned cls, unsigned ev)
{
	return attach(st, ud, fn, cls, ev, ev, 1);
}

int traceparser_cs_range(struct traceparser_state *st, void *ud, tracep_callb_func_t fn, unsigned cls,
			 unsigned first, unsigned last)
{
	return attach(st, ud, fn, cls, first, last, 0);
}

int tk_traceparser_cs_internal(struct traceparser_state *st, void *ud, tracep_callb_func_t fn, unsigned cls,
			       unsigned first, unsigned last)
{
	if (st == NULL) {
		errno = EINVAL;
		return -1;
	}
	return set_range(st, ud, fn, cls, first, last);
}

int tk__tp_batch(struct traceparser_state *st, tk__tp_batch_fn fn, void *ud, unsigned cls, unsigned first,
		 unsigned last)
{
	if (st == NULL || cls >= TP_N_CLASSES || first > last || last >= _TRACE_MAX_EVENT_NUM) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned e = first; e <= last; e++) {
		unsigned i = cls * _TRACE_MAX_EVENT_NUM + e;
		/* TIME, BUFFER and THRUNNING change what a run's slots are read with (BUFFER:
		 * the owner, in a TRACEKIT_OWNER=buffer file): never in a run */
		if (i == TIME_INDEX || i == BUFFER_INDEX || i == THRUN_INDEX)
			continue;
		if (fn != NULL)
			st->batch_bits[i / 64] |= 1ull << (i % 64);
		else
			st->batch_bits[i / 64] &= ~(1ull << (i % 64));
	}
	if (fn != NULL) {
		st->batch_fn = fn;
		st->batch_ud = ud;
	} else {
		/* a part taken out: the rest still goes to the callback it was given (a NULL one
		 * with bits left would be called) */
		uint64_t any = 0;
		for (unsigned w = 0; w < TP_TABLE_SIZE / 64; w++)
			any |= st->batch_bits[w];
		if (any == 0) {
			st->batch_fn = NULL;
			st->batch_scan = NULL;
			st->batch_ud = NULL;
		}
	}
	return 0;
}

/* ---- time ----------------------------------------------------------------------------- */

static inline uint32_t msb_for_cpu(const struct traceparser_state *st, unsigned cpu)
{
	return (st->msb_known >> cpu) & 1 ? st->msb[cpu] : st->last_msb;
}

/*
 * _TRACEPARSER_INFO_CLK_INTIAL is the CLK of the file's first slot. A file normally begins
 * with events that precede its first TIME event (QNX: BUFFER, then TIME), so until that
 * TIME event the value has the upper bits of CLK for such events (0); the TIME event then
 * fixes it, the first slot taken to lie within 2^31 cycles of it (a wrap in between is
 * handled). Called once per file, before the first slot is dispatched.
 */
static void note_first(struct traceparser_state *st, uint32_t t)
{
	st->have_first = 1;
	st->first_time = t;
	st->clk_initial = t;
}

/*
 * Sort mode, the first TIME event of a CPU: the events of that CPU collected before it
 * (QNX's BUFFER event comes first in each buffer) had no upper time bits. Each lies within
 * 2^31 cycles before the TIME event, as _TRACEPARSER_INFO_CLK_INTIAL assumes too.
 */
static void fix_provisional(struct traceparser_state *st, unsigned cpu, uint64_t time_clk, uint32_t t)
{
	for (size_t i = 0; i < st->n_sorted && st->n_provisional[cpu] > 0; i++) {
		struct tp_sorted *s = &st->sorted[i];
		if (!s->provisional || _NTO_TRACE_GETCPU(s->header) != cpu)
			continue;
		s->clk = time_clk - (uint64_t)(int64_t)(int32_t)(t - s->time);
		s->provisional = 0;
		st->n_provisional[cpu]--;
	}
}

static void note_time(struct traceparser_state *st, uint32_t h, uint32_t t, uint32_t msb)
{
	unsigned cpu = _NTO_TRACE_GETCPU(h);

	if (st->n_provisional[cpu] > 0 && !((st->msb_known >> cpu) & 1))
		fix_provisional(st, cpu, ((uint64_t)msb << 32) | t, t);

	st->msb[cpu] = msb;
	st->msb_known |= 1ull << cpu;
	st->last_msb = msb;
	st->any_msb = 1;
	st->stats.time_events++;
	if (!st->have_clk_initial) {
		uint64_t clk = ((uint64_t)msb << 32) | t;
		/* cycles from the first slot to this TIME event, modulo 2^32 */
		int32_t ahead = st->have_first ? (int32_t)(t - st->first_time) : 0;
		st->have_clk_initial = 1;
		st->clk_initial = clk - (uint64_t)(int64_t)ahead;
	}
}

uint64_t tk_traceparser_clk(const struct traceparser_state *st)
{
	if (st == NULL)
		return 0;
	if (st->cur_clk_explicit)
		return st->cur_clk;
	return ((uint64_t)msb_for_cpu(st, _NTO_TRACE_GETCPU(st->cur_header)) << 32) | st->cur_time;
}

/*
 * floor(c * 10^9 / cycles_per_sec), and in *exact whether it divides evenly. The division of
 * 128 bits is a library call that costs more than the rest of an event's export; with
 * ns_mult (tp_internal.h) a multiplication gives the quotient or one or two less, and the
 * remainder, computed exactly, says which.
 */
static inline unsigned __int128 scale_ns(const struct traceparser_state *st, uint64_t c, int *exact)
{
	uint64_t cps = st->cycles_per_sec;
	unsigned __int128 num = (unsigned __int128)c * 1000000000u;

	if (st->ns_mult != 0) {
		uint64_t q = (uint64_t)(((unsigned __int128)c * st->ns_mult) >> 64);
		unsigned __int128 r = num - (unsigned __int128)q * cps;
		while (r >= cps) {
			q++;
			r -= cps;
		}
		*exact = r == 0;
		return q;
	}
	/* a clock slower than 1 GHz: the quotient may exceed 64 bits (kept, for the caller
	 * to saturate) */
	*exact = num % cps == 0;
	return num / cps;
}

static uint64_t cycles_to_ns(const struct traceparser_state *st, uint64_t cycles)
{
	int exact;
	unsigned __int128 q;

	if (st->cycles_per_sec == 0 || st->cycles_per_sec == 1000000000u)
		return cycles;
	q = scale_ns(st, cycles, &exact);
	/* below 1 GHz a count near 2^64 is more than 2^64 ns: the end of the time line, not a wrap
	 * to its beginning */
	return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/*
 * A 64-bit cycle count on the file's time line (docs/kev-format.md, "One time line"):
 * CLOCK_MONOTONIC_RAW nanoseconds when the header carries TRACEKIT_CLOCK_CYCLES and
 * TRACEKIT_CLOCK_RAW_NS (the signed distance to the reference, so a trace of days neither
 * overflows nor loses precision), otherwise the count in nanoseconds (since boot on QNX).
 */
uint64_t tk__tp_clk_to_ns(const struct traceparser_state *st, uint64_t clk)
{
	int64_t diff;
	uint64_t mag;
	unsigned __int128 q;
	int exact;
	__int128 ns;

	if (!st->have_clock_ref)
		return cycles_to_ns(st, clk);
	diff = (int64_t)(clk - st->clock_cycles);
	mag = diff >= 0 ? (uint64_t)diff : 0 - (uint64_t)diff;
	if (st->cycles_per_sec == 0 || st->cycles_per_sec == 1000000000u) {
		/* cycles are ns (tracelogger's files): the distance added, saturating */
		if (diff >= 0)
			return st->clock_raw_ns + mag < mag ? UINT64_MAX : st->clock_raw_ns + mag;
		return mag > st->clock_raw_ns ? 0 : st->clock_raw_ns - mag;
	}
	q = scale_ns(st, mag, &exact);
	/* floor division, so that times stay monotonic across the reference */
	ns = diff >= 0 ? (__int128)q : -(__int128)q - (exact ? 0 : 1);
	ns += (__int128)st->clock_raw_ns;
	if (ns < 0)
		return 0;
	return ns > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

uint64_t tk_traceparser_ns(const struct traceparser_state *st)
{
	return st ? tk__tp_clk_to_ns(st, tk_traceparser_clk(st)) : 0;
}

/* ---- owner ---------------------------------------------------------------------------- */

static inline void owner_now(const struct traceparser_state *st, unsigned cpu, int32_t *pid, int32_t *tid,
			     int *known)
{
	if (st->owner_buffer_mode) {
		*known = st->buf_owner_known;
		*pid = st->buf_pid;
		*tid = st->buf_tid;
	} else {
		*known = (int)((st->cpu_owner_known >> cpu) & 1);
		*pid = *known ? st->cpu_pid[cpu] : 0;
		*tid = *known ? st->cpu_tid[cpu] : 0;
	}
}

int tk_traceparser_owner(const struct traceparser_state *st, int32_t *pid, int32_t *tid)
{
	int32_t p = 0, t = 0;
	int known = 0;

	/* Outside a callback (before traceparser(), after it returned, in the NULL callback at
	 * the end) no event is being delivered: not known. */
	if (st != NULL && st->delivering) {
		if (st->cur_owner_explicit) {
			known = st->cur_owner_known;
			p = st->cur_pid;
			t = st->cur_tid;
		} else {
			owner_now(st, _NTO_TRACE_GETCPU(st->cur_header), &p, &t, &known);
		}
	}
	if (pid != NULL)
		*pid = known ? p : 0;
	if (tid != NULL)
		*tid = known ? t : 0;
	return known;
}

/* A THRUNNING slot (QNX mode: the CPU's owner from now on). */
static inline void note_running(struct traceparser_state *st, uint32_t h, uint32_t d1, uint32_t d2)
{
	unsigned cpu = _NTO_TRACE_GETCPU(h);

	if (st->owner_buffer_mode)
		return;
	st->cpu_pid[cpu] = (int32_t)d1;
	st->cpu_tid[cpu] = (int32_t)d2;
	st->cpu_owner_known |= 1ull << cpu;
}

int tk_traceparser_decode(struct traceparser_state *st, unsigned header, unsigned time, const unsigned *buffer,
			  unsigned buffer_len, unsigned flags, tk_kev_decoded *out)
{
	tk_kev_event ev;
	int rc;

	if (st == NULL || out == NULL || (buffer_len > 0 && buffer == NULL))
		return TK_EINVAL;
	ev.header = header;
	ev.time = time;
	ev.data = buffer;
	ev.len = buffer_len;
	ev.swap = (int)st->endian_conv;
	ev.clk = tk_traceparser_clk(st);
	ev.ns = tk__tp_clk_to_ns(st, ev.clk);
	rc = tk_kev_decode(&ev, flags | st->kercalls_flags, out);
	if (rc != TK_OK)
		return rc;
	if (tk_traceparser_owner(st, &out->pid, &out->tid))
		out->flags |= TK_KEV_DEC_OWNER_KNOWN;
	return TK_OK;
}

/* ---- dispatch ------------------------------------------------------------------------- */

static inline void deliver_at(struct traceparser_state *st, uint32_t index, uint32_t h, uint32_t t,
			      unsigned *buf, unsigned len, uint64_t slot)
{
	const struct tp_cb *cb = &st->cb[index];
	int was;

	if (cb->fn != NULL) {
		st->cur_header = h;
		st->cur_time = t;
		st->cur_slot = slot;
		was = st->delivering;
		st->delivering = 1;
		st->prev_return = cb->fn(st, cb->ud, h, t, buf, len);
		st->delivering = was;
		st->prev_header = h;
	}
}

static inline void deliver(struct traceparser_state *st, uint32_t h, uint32_t t, unsigned *buf,
			   unsigned len, uint64_t slot)
{
	deliver_at(st, h & (TP_TABLE_SIZE - 1), h, t, buf, len, slot);
}

/* After a run or a scan ending at slot b - 1 of a block: the current and previous callback
 * are the run's last slot's: its own return when it was handed back last
 * (tk__tp_batch_deliver_one()), else 0, the run's stand-in for the ignored returns
 * (traceparser_get_info() and tk_traceparser_clk() after the parse). */
static void run_done(struct traceparser_state *st, const unsigned char *p, size_t b, uint64_t first_slot)
{
	const uint32_t *last = (const uint32_t *)(const void *)(p + (b - 1) * 16);

	if (st->run_delivered != first_slot + b - 1) {
		st->cur_header = st->prev_header = tk__cs32((int)st->endian_conv, last[0]);
		st->cur_time = tk__cs32((int)st->endian_conv, last[1]);
		st->cur_slot = first_slot + b - 1;
		st->prev_return = 0;
	}
}

/* The slots [a, b) of a block, a run of batched events, to the batch callback. */
static void deliver_run(struct traceparser_state *st, const unsigned char *p, size_t a, size_t b,
			uint64_t first_slot)
{
	int was = st->delivering;

	st->run_first = first_slot + a;
	st->run_delivered = UINT64_MAX;
	st->delivering = 1;
	st->batch_fn(st, st->batch_ud, (const uint32_t *)(const void *)(p + a * 16), b - a, first_slot + a);
	st->delivering = was;
	run_done(st, p, b, first_slot);
}

/* The slots of a block from a (batched) on to the reader's scan; how many it took as a run. */
static size_t deliver_scan(struct traceparser_state *st, const unsigned char *p, size_t a, size_t n,
			   uint64_t first_slot)
{
	int was = st->delivering;
	size_t m;

	st->run_first = first_slot + a;
	st->run_delivered = UINT64_MAX;
	st->delivering = 1;
	m = st->batch_scan(st, st->batch_ud, (const uint32_t *)(const void *)(p + a * 16), n - a, first_slot + a);
	st->delivering = was;
	if (m > n - a)
		m = n - a;
	if (m > 0)
		run_done(st, p, a + m, first_slot);
	return m;
}

void tk__tp_batch_scan(struct traceparser_state *st, tk__tp_scan_fn fn)
{
	if (st != NULL)
		st->batch_scan = fn;
}

void tk__tp_batch_deliver_one(struct traceparser_state *st, const uint32_t *slot, uint64_t slot_index)
{
	int conv = (int)st->endian_conv;
	uint32_t h = tk__cs32(conv, slot[0]);

	/* the slot before, in the same run and not handed back, counts as the previous
	 * callback, as it would one event at a time */
	if (slot_index > st->run_first && st->run_delivered != slot_index - 1) {
		st->prev_header = tk__cs32(conv, slot[-4]);
		st->prev_return = 0;
	}
	deliver(st, h, tk__cs32(conv, slot[1]), (unsigned *)(uintptr_t)(slot + 2), 2, slot_index);
	st->run_delivered = slot_index;
}

static inline int batched(const struct traceparser_state *st, uint32_t k)
{
	return (int)((st->batch_bits[k / 64] >> (k % 64)) & 1);
}

/* The fast loops' runs: 1 when slot *i (table index k) joins the run being made, or a scan
 * took it and the slots after it (*i is then the last one taken); otherwise the run before
 * it, if any, is handed over first and the slot goes the usual way. n: the block's slots. */
static inline __attribute__((always_inline)) int in_run(struct traceparser_state *st, const unsigned char *p,
							 uint64_t first_slot, size_t *i, size_t n, uint32_t k,
							 size_t *run)
{
	if (LIKELY(k < TP_TABLE_SIZE && batched(st, k))) {
		if (*run == NO_RUN) {
			size_t m;
			if (st->batch_scan != NULL && (m = deliver_scan(st, p, *i, n, first_slot)) > 0) {
				*i += m - 1;
				return 1;
			}
			*run = *i;
		}
		return 1;
	}
	if (*run != NO_RUN) {
		deliver_run(st, p, *run, *i, first_slot);
		*run = NO_RUN;
	}
	return 0;
}

static int sort_spill(struct traceparser_state *st, int final);
static int dispatch_spilled(struct traceparser_state *st);

/* Sort mode: keep the event for later (in memory up to the budget, then in runs). */
static int collect(struct traceparser_state *st, uint32_t h, uint32_t t, uint64_t clk, const uint32_t *words,
		   unsigned n, uint64_t slot, int32_t pid, int32_t tid, int known)
{
	struct tp_sorted *s;

	if (st->n_sorted == st->cap_sorted) {
		size_t cap = st->cap_sorted ? st->cap_sorted * 2 : 4096;
		struct tp_sorted *ns = realloc(st->sorted, cap * sizeof(*ns));
		if (ns == NULL)
			return tk__tp_fail_at(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, st->events_offset + slot * 16,
				       "no more memory sorting the event");
		st->sorted = ns;
		st->cap_sorted = cap;
	}
	if (st->n_arena + n > st->cap_arena) {
		size_t cap = st->cap_arena ? st->cap_arena : 8192;
		uint32_t *na;
		while (cap < st->n_arena + n)
			cap *= 2;
		na = realloc(st->arena, cap * sizeof(*na));
		if (na == NULL)
			return tk__tp_fail_at(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, st->events_offset + slot * 16,
				       "no more memory sorting the event");
		st->arena = na;
		st->cap_arena = cap;
	}
	s = &st->sorted[st->n_sorted++];
	s->clk = clk;
	s->slot = slot;
	s->header = h;
	s->time = t;
	s->n_words = n;
	s->provisional = !((st->msb_known >> _NTO_TRACE_GETCPU(h)) & 1);
	st->n_provisional[_NTO_TRACE_GETCPU(h)] += s->provisional;
	s->pid = pid;
	s->tid = tid;
	s->owner_known = (uint32_t)known;
	s->words_off = st->n_arena;
	memcpy(st->arena + st->n_arena, words, (size_t)n * sizeof(uint32_t));
	st->n_arena += n;
	if (st->n_sorted * sizeof(*st->sorted) + st->n_arena * sizeof(*st->arena) >
	    (st->sort_budget ? st->sort_budget : TP_SORT_BUDGET)) {
		if (st->sort_budget == 0)
			st->sort_budget = TP_SORT_BUDGET;
		return sort_spill(st, 0);
	}
	return 0;
}

static int cmp_sorted(const void *a, const void *b)
{
	const struct tp_sorted *x = a, *y = b;

	if (x->clk != y->clk)
		return x->clk < y->clk ? -1 : 1;
	return x->slot < y->slot ? -1 : (x->slot > y->slot);
}

static int dispatch_sorted(struct traceparser_state *st)
{
	size_t i;

	if (st->spool != NULL)
		return dispatch_spilled(st);
	qsort(st->sorted, st->n_sorted, sizeof(*st->sorted), cmp_sorted);
	st->cur_clk_explicit = 1;
	st->cur_owner_explicit = 1;
	for (i = 0; i < st->n_sorted; i++) {
		const struct tp_sorted *s = &st->sorted[i];
		st->cur_clk = s->clk;
		st->cur_pid = s->pid;
		st->cur_tid = s->tid;
		st->cur_owner_known = (int)s->owner_known;
		deliver(st, s->header, s->time, st->arena + s->words_off, s->n_words, s->slot);
	}
	st->cur_clk_explicit = 0;
	st->cur_owner_explicit = 0;
	return 0;
}

/* ---- sorting in bounded memory --------------------------------------------------------- */

/*
 * Sort mode keeps events in memory up to a budget (tk_traceparser_sort_memory()); beyond
 * it, the events collected so far are sorted and written as one run to an unlinked
 * temporary file, and the runs are merged at the end (k-way, a heap of run readers with
 * a small buffer each; more than TP_SORT_FANIN runs are first merged in passes). Keys
 * (64-bit time, slot index) are unique, so the order is exactly that of one sort in
 * memory. Events of a CPU before its first TIME event ("provisional" times) stay in
 * memory until that event fixes them, unless they fill half the budget: they are then
 * written with the upper time bits known at that point (a file without TIME events).
 */
struct tp_disk_rec {
	uint64_t clk, slot;
	uint32_t header, time, n_words;
	int32_t pid, tid;
	uint32_t owner_known;
};

struct tp_run_reader {
	uint64_t file_off, left;
	unsigned char *buf;
	size_t cap, pos, len;
	struct tp_disk_rec rec;
	uint32_t *words;
};

/* Where the runs go: $TMPDIR, /tmp when it is unset or empty (the documented place). */
static int sort_io_fail(struct traceparser_state *st, int err)
{
	return tk__tp_fail(st, _TRACEPARSER_CANNOT_READ_IN_FILE, err,
			   "cannot use the temporary file of the sort in %s (TMPDIR): %s", tk_tmpdir(), strerror(err));
}

static int cmp_spill(const void *a, const void *b)
{
	const struct tp_sorted *x = a, *y = b;

	if (x->provisional != y->provisional)
		return x->provisional ? 1 : -1;
	return cmp_sorted(a, b);
}

static int spool_write(struct traceparser_state *st, FILE *f, const struct tp_disk_rec *r, const uint32_t *words)
{
	if (fwrite(r, sizeof(*r), 1, f) != 1 ||
	    (r->n_words > 0 && fwrite(words, 4, r->n_words, f) != r->n_words))
		return sort_io_fail(st, errno ? errno : EIO);
	return 0;
}

static int add_run(struct traceparser_state *st, struct tp_run **runs, size_t *n, size_t *cap, uint64_t off,
		   uint64_t count)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct tp_run *nr = realloc(*runs, nc * sizeof(*nr));
		if (nr == NULL)
			return tk__tp_fail(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, "no more memory sorting events");
		*runs = nr;
		*cap = nc;
	}
	(*runs)[*n].off = off;
	(*runs)[(*n)++].n = count;
	return 0;
}

/* Writes the collected events (all of them when final) as one sorted run. */
static int sort_spill(struct traceparser_state *st, int final)
{
	size_t i, n_prov = 0, prov_words = 0, k;
	struct tp_run run;
	uint32_t *na = NULL;

	if (st->spool == NULL) {
		st->spool = tk_tmpfile("traceparser");
		if (st->spool == NULL)
			return sort_io_fail(st, errno);
		st->spool_end = 0;
	}
	for (i = 0; i < st->n_sorted; i++) {
		if (st->sorted[i].provisional) {
			n_prov++;
			prov_words += st->sorted[i].n_words;
		}
	}
	if (final || n_prov * sizeof(struct tp_sorted) + prov_words * 4 > st->sort_budget / 2) {
		for (i = 0; i < st->n_sorted; i++)
			st->sorted[i].provisional = 0;
		memset(st->n_provisional, 0, sizeof(st->n_provisional));
		n_prov = prov_words = 0;
	}
	qsort(st->sorted, st->n_sorted, sizeof(*st->sorted), cmp_spill);
	run.off = st->spool_end;
	run.n = st->n_sorted - n_prov;
	for (i = 0; i < run.n; i++) {
		const struct tp_sorted *s = &st->sorted[i];
		struct tp_disk_rec r = { s->clk, s->slot, s->header, s->time, s->n_words, s->pid, s->tid, s->owner_known };
		if (spool_write(st, st->spool, &r, st->arena + s->words_off) != 0)
			return -1;
		st->spool_end += sizeof(r) + (uint64_t)s->n_words * 4;
	}
	if (run.n > 0 && add_run(st, &st->runs, &st->n_runs, &st->cap_runs, run.off, run.n) != 0)
		return -1;
	/* the provisional events stay, their words copied to the front of the arena */
	if (n_prov > 0) {
		na = malloc((prov_words ? prov_words : 1) * sizeof(*na));
		if (na == NULL)
			return tk__tp_fail(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, "no more memory sorting events");
	}
	for (i = run.n, k = 0; i < st->n_sorted; i++) {
		struct tp_sorted *s = &st->sorted[i];
		memcpy(na + k, st->arena + s->words_off, (size_t)s->n_words * 4);
		s->words_off = k;
		k += s->n_words;
	}
	if (n_prov > 0) {
		memmove(st->sorted, st->sorted + run.n, n_prov * sizeof(*st->sorted));
		memcpy(st->arena, na, k * sizeof(*na));
		free(na);
	}
	st->n_sorted = n_prov;
	st->n_arena = k;
	return 0;
}

/* Makes the next record of run reader r current; 0 at the end of its run, -1 on error. */
static int reader_next(struct traceparser_state *st, int fd, struct tp_run_reader *r)
{
	size_t need = sizeof(struct tp_disk_rec);
	int have_hdr = 0;

	if (r->left == 0)
		return 0;
	for (;;) {
		if (r->len - r->pos >= need) {
			if (!have_hdr) {
				memcpy(&r->rec, r->buf + r->pos, sizeof(r->rec));
				have_hdr = 1;
				need += (size_t)r->rec.n_words * 4;
				continue;
			}
			r->words = (uint32_t *)(void *)(r->buf + r->pos + sizeof(r->rec));
			r->pos += need;
			r->left--;
			return 1;
		}
		/* refill: what is left to the front, then read (a large record grows the buffer) */
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
		if (need > r->cap) {
			unsigned char *nb = realloc(r->buf, need);
			if (nb == NULL)
				return tk__tp_fail(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, "no more memory sorting events");
			r->buf = nb;
			r->cap = need;
		}
		{
			ssize_t got = pread(fd, r->buf + r->len, r->cap - r->len, (off_t)r->file_off);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				return sort_io_fail(st, got < 0 ? errno : EIO);
			r->len += (size_t)got;
			r->file_off += (uint64_t)got;
		}
	}
}

static int rec_less(const struct tp_run_reader *a, const struct tp_run_reader *b)
{
	return a->rec.clk != b->rec.clk ? a->rec.clk < b->rec.clk : a->rec.slot < b->rec.slot;
}

static void heap_down(struct tp_run_reader **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct tp_run_reader *t;
		if (l < n && rec_less(h[l], h[m]))
			m = l;
		if (l + 1 < n && rec_less(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i], h[i] = h[m], h[m] = t;
		i = m;
	}
}

/*
 * Merges runs[0..n) of the spool: into `out` (a new run of it) or, when out is NULL, to
 * the callbacks.
 */
static int merge_runs(struct traceparser_state *st, const struct tp_run *runs, size_t n, FILE *out)
{
	int fd = fileno(st->spool), rc = 0;
	struct tp_run_reader *rd, **heap;
	size_t i, nh = 0;

	if (n == 0)
		return 0;
	rd = calloc(n, sizeof(*rd));
	heap = calloc(n, sizeof(*heap));

	if (rd == NULL || heap == NULL) {
		rc = tk__tp_fail(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, "no more memory sorting events");
		goto out;
	}
	for (i = 0; i < n; i++) {
		int got;
		rd[i].file_off = runs[i].off;
		rd[i].left = runs[i].n;
		rd[i].cap = TP_SORT_READ_BUF;
		rd[i].buf = malloc(rd[i].cap);
		if (rd[i].buf == NULL) {
			rc = tk__tp_fail(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, "no more memory sorting events");
			goto out;
		}
		got = reader_next(st, fd, &rd[i]);
		if (got < 0) {
			rc = -1;
			goto out;
		}
		if (got > 0)
			heap[nh++] = &rd[i];
	}
	for (i = nh / 2; i-- > 0;)
		heap_down(heap, nh, i);
	if (out == NULL) {
		st->cur_clk_explicit = 1;
		st->cur_owner_explicit = 1;
	}
	while (nh > 0) {
		struct tp_run_reader *r = heap[0];
		int got;
		if (out != NULL) {
			if (spool_write(st, out, &r->rec, r->words) != 0) {
				rc = -1;
				break;
			}
		} else {
			st->cur_clk = r->rec.clk;
			st->cur_pid = r->rec.pid;
			st->cur_tid = r->rec.tid;
			st->cur_owner_known = (int)r->rec.owner_known;
			deliver(st, r->rec.header, r->rec.time, r->words, r->rec.n_words, r->rec.slot);
		}
		got = reader_next(st, fd, r);
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0)
			heap[0] = heap[--nh];
		heap_down(heap, nh, 0);
	}
	st->cur_clk_explicit = 0;
	st->cur_owner_explicit = 0;
out:
	if (rd != NULL)
		for (i = 0; i < n; i++)
			free(rd[i].buf);
	free(rd);
	free(heap);
	return rc;
}

/* Spilled runs: merged in passes of TP_SORT_FANIN until one pass delivers them all. */
static int dispatch_spilled(struct traceparser_state *st)
{
	if (sort_spill(st, 1) != 0)
		return -1;
	if (fflush(st->spool) != 0)
		return sort_io_fail(st, errno);
	while (st->n_runs > TP_SORT_FANIN) {
		FILE *next = tk_tmpfile("traceparser");
		struct tp_run *nr = NULL;
		size_t n_nr = 0, cap_nr = 0, i;
		uint64_t end = 0;

		if (next == NULL)
			return sort_io_fail(st, errno);
		for (i = 0; i < st->n_runs; i += TP_SORT_FANIN) {
			size_t k = st->n_runs - i < TP_SORT_FANIN ? st->n_runs - i : TP_SORT_FANIN, j;
			uint64_t count = 0;
			for (j = 0; j < k; j++)
				count += st->runs[i + j].n;
			if (merge_runs(st, st->runs + i, k, next) != 0 ||
			    add_run(st, &nr, &n_nr, &cap_nr, end, count) != 0) {
				fclose(next);
				free(nr);
				return -1;
			}
			if (fflush(next) != 0) {
				int e = errno;
				fclose(next);
				free(nr);
				return sort_io_fail(st, e);
			}
			end = (uint64_t)ftello(next);
		}
		fclose(st->spool);
		st->spool = next;
		free(st->runs);
		st->runs = nr;
		st->n_runs = n_nr;
		st->cap_runs = cap_nr;
	}
	if (fflush(st->spool) != 0)
		return sort_io_fail(st, errno);
	return merge_runs(st, st->runs, st->n_runs, NULL);
}

static void sort_free(struct traceparser_state *st)
{
	if (st->spool != NULL)
		fclose(st->spool);
	st->spool = NULL;
	st->spool_end = 0;
	free(st->runs);
	st->runs = NULL;
	st->n_runs = st->cap_runs = 0;
}

int tk_traceparser_on_wait(struct traceparser_state *st, void (*fn)(void *ud), void *ud)
{
	if (st == NULL) {
		errno = EINVAL;
		return -1;
	}
	st->on_wait = fn;
	st->on_wait_ud = ud;
	return 0;
}

int tk_traceparser_sort_memory(struct traceparser_state *st, size_t bytes)
{
	if (st == NULL || bytes < TP_SORT_MIN_BUDGET) {
		errno = EINVAL;
		return -1;
	}
	st->sort_budget = bytes;
	return 0;
}

/* Delivers (or, sort mode, collects) an event whose time and owner were fixed earlier. */
static int emit_explicit(struct traceparser_state *st, uint32_t h, uint32_t t, uint64_t clk, unsigned *words,
			 unsigned n, uint64_t slot, int32_t pid, int32_t tid, int known)
{
	if (st->sort_mode)
		return collect(st, h, t, clk, words, n, slot, pid, tid, known);
	st->cur_clk_explicit = 1;
	st->cur_clk = clk;
	st->cur_owner_explicit = 1;
	st->cur_pid = pid;
	st->cur_tid = tid;
	st->cur_owner_known = known;
	deliver(st, h, t, words, n, slot);
	st->cur_clk_explicit = 0;
	st->cur_owner_explicit = 0;
	return 0;
}

/* ---- combine events ------------------------------------------------------------------- */

static struct tp_pending *pending_alloc(struct traceparser_state *st)
{
	struct tp_pending *p = st->free_pending;

	if (p != NULL) {
		st->free_pending = p->next;
	} else {
		p = malloc(sizeof(*p));
		if (p == NULL)
			return NULL;
		p->words = p->inline_words;
		p->cap_words = sizeof(p->inline_words) / sizeof(p->inline_words[0]);
	}
	p->next = p->prev = NULL;
	p->knext = p->kprev = p->tnext = p->tprev = NULL;
	p->n_words = 0;
	p->overflow = 0;
	return p;
}

static void pending_release(struct traceparser_state *st, struct tp_pending *p)
{
	if (p->words != p->inline_words) {
		free(p->words);
		p->words = p->inline_words;
		p->cap_words = sizeof(p->inline_words) / sizeof(p->inline_words[0]);
	}
	p->next = st->free_pending;
	st->free_pending = p;
}

static inline unsigned hash_time(uint32_t t)
{
	return (t * 0x9e3779b1u) >> 20; /* TP_HASH_SIZE = 2^12 */
}

static inline unsigned hash_key(uint32_t t, uint32_t key)
{
	return ((t ^ (key * 0x85ebca6bu)) * 0x9e3779b1u) >> 20;
}

_Static_assert(TP_HASH_SIZE == 1u << 12, "hash_time() and hash_key() give 12 bits");

#define CHAIN_APPEND(ch, p, nx, pv)            \
	do {                                   \
		(p)->pv = (ch)->tail;          \
		(p)->nx = NULL;                \
		if ((ch)->tail != NULL)        \
			(ch)->tail->nx = (p);  \
		else                           \
			(ch)->head = (p);      \
		(ch)->tail = (p);              \
	} while (0)

#define CHAIN_REMOVE(ch, p, nx, pv)               \
	do {                                      \
		if ((p)->pv != NULL)              \
			(p)->pv->nx = (p)->nx;    \
		else                              \
			(ch)->head = (p)->nx;     \
		if ((p)->nx != NULL)              \
			(p)->nx->pv = (p)->pv;    \
		else                              \
			(ch)->tail = (p)->pv;     \
	} while (0)

static void pending_link(struct traceparser_state *st, struct tp_pending *p)
{
	struct tp_chain all = { st->pending, st->pending_tail };

	CHAIN_APPEND(&all, p, next, prev);
	st->pending = all.head;
	st->pending_tail = all.tail;
	CHAIN_APPEND(&st->kbuckets[hash_key(p->time, p->header & KEY_MASK)], p, knext, kprev);
	CHAIN_APPEND(&st->tbuckets[hash_time(p->time)], p, tnext, tprev);
	st->n_pending++;
}

static void pending_unlink(struct traceparser_state *st, struct tp_pending *p)
{
	struct tp_chain all = { st->pending, st->pending_tail };

	CHAIN_REMOVE(&all, p, next, prev);
	st->pending = all.head;
	st->pending_tail = all.tail;
	CHAIN_REMOVE(&st->kbuckets[hash_key(p->time, p->header & KEY_MASK)], p, knext, kprev);
	CHAIN_REMOVE(&st->tbuckets[hash_time(p->time)], p, tnext, tprev);
	st->n_pending--;
}

static void pending_clear(struct traceparser_state *st)
{
	free_pending_list(st->pending);
	st->pending = st->pending_tail = NULL;
	st->n_pending = 0;
	if (st->kbuckets != NULL) {
		memset(st->kbuckets, 0, TP_HASH_SIZE * sizeof(*st->kbuckets));
		memset(st->tbuckets, 0, TP_HASH_SIZE * sizeof(*st->tbuckets));
	}
}

static int pending_append(struct tp_pending *p, uint32_t d1, uint32_t d2)
{
	if (p->overflow)
		return 0;
	if (p->n_words + 2 > TP_MAX_COMBINE_WORDS) {
		p->overflow = 1;
		return 0;
	}
	if (p->n_words + 2 > p->cap_words) {
		size_t cap = p->cap_words * 2;
		uint32_t *nw = malloc(cap * sizeof(*nw));
		if (nw == NULL)
			return -1;
		memcpy(nw, p->words, p->n_words * sizeof(*nw));
		if (p->words != p->inline_words)
			free(p->words);
		p->words = nw;
		p->cap_words = cap;
	}
	p->words[p->n_words++] = d1;
	p->words[p->n_words++] = d2;
	return 0;
}

/*
 * The oldest pending event with timestamp t and the same CPU/class/code, else the oldest
 * with timestamp t (QNX matches on the timestamp alone). Each hash chain keeps the order
 * of the events it holds, so the first match in a chain is the oldest: O(1) per slot
 * whatever the number of events that never finish.
 */
static struct tp_pending *pending_find(struct traceparser_state *st, uint32_t h, uint32_t t)
{
	struct tp_pending *p;
	uint32_t key = h & KEY_MASK;

	if (st->n_pending == 0)
		return NULL;
	for (p = st->kbuckets[hash_key(t, key)].head; p != NULL; p = p->knext) {
		if (p->time == t && (p->header & KEY_MASK) == key)
			return p;
	}
	for (p = st->tbuckets[hash_time(t)].head; p != NULL; p = p->tnext) {
		if (p->time == t)
			return p;
	}
	return NULL;
}

static void unbalanced(struct traceparser_state *st, const char *what, uint64_t slot)
{
	st->stats.unbalanced_parts++;
	if (st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_ALL) == _TRACEPARSER_DEBUG_ALL)
		fprintf(st->debug_stream,
			"TRACEPARSER: byte offset %" PRIu64 ": unbalanced %s of combine event ignored\n",
			st->events_offset + slot * 16, what);
}

static int combine(struct traceparser_state *st, uint32_t h, uint32_t t, traceevent_t *ev, uint64_t slot)
{
	struct tp_pending *p;

	switch (_TRACE_GET_STRUCT(h)) {
	case _TRACE_STRUCT_CB:
		if (st->kbuckets == NULL) {
			st->kbuckets = calloc(TP_HASH_SIZE, sizeof(*st->kbuckets));
			st->tbuckets = calloc(TP_HASH_SIZE, sizeof(*st->tbuckets));
			if (st->kbuckets == NULL || st->tbuckets == NULL) {
				free(st->kbuckets);
				free(st->tbuckets);
				st->kbuckets = st->tbuckets = NULL;
				return tk__tp_fail_at(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, st->events_offset + slot * 16,
					       "no more memory for the combine event");
			}
		}
		if (st->n_pending >= TP_MAX_PENDING) {
			p = st->pending;
			pending_unlink(st, p);
			pending_release(st, p);
			st->stats.incomplete_events++;
		}
		p = pending_alloc(st);
		if (p == NULL)
			return tk__tp_fail_at(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, st->events_offset + slot * 16,
				       "no more memory for the combine event");
		p->header = h;
		p->time = t;
		p->msb = msb_for_cpu(st, _NTO_TRACE_GETCPU(h));
		owner_now(st, _NTO_TRACE_GETCPU(h), &p->pid, &p->tid, &p->owner_known);
		p->slot = slot;
		p->words[0] = ev->data[1];
		p->words[1] = ev->data[2];
		p->n_words = 2;
		pending_link(st, p);
		return 0;
	case _TRACE_STRUCT_CC:
		p = pending_find(st, h, t);
		if (p == NULL) {
			unbalanced(st, "continuation", slot);
			return 0;
		}
		if (pending_append(p, ev->data[1], ev->data[2]) != 0)
			return tk__tp_fail_at(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, st->events_offset + slot * 16,
				       "no more memory for the combine event");
		return 0;
	default: /* CE */
		p = pending_find(st, h, t);
		if (p == NULL) {
			unbalanced(st, "end", slot);
			return 0;
		}
		pending_unlink(st, p);
		if (pending_append(p, ev->data[1], ev->data[2]) != 0) {
			pending_release(st, p);
			return tk__tp_fail_at(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, st->events_offset + slot * 16,
				       "no more memory for the combine event");
		}
		if (p->overflow) {
			st->stats.incomplete_events++;
			if (st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_ERRORS))
				fprintf(st->debug_stream,
					"TRACEPARSER: byte offset %" PRIu64
					": combine event of more than %u payload words ignored\n",
					st->events_offset + p->slot * 16, TP_MAX_COMBINE_WORDS);
			pending_release(st, p);
			return 0;
		}
		st->stats.events++;
		st->stats.combine_events++;
		{
			int rc = emit_explicit(st, p->header, p->time, ((uint64_t)p->msb << 32) | p->time, p->words,
					       (unsigned)p->n_words, p->slot, p->pid, p->tid, p->owner_known);
			pending_release(st, p);
			return rc;
		}
	}
}

/* ---- owner of buffers (TRACEKIT_OWNER=buffer) ----------------------------------------- */

static int hold(struct traceparser_state *st, uint32_t h, uint32_t t, const unsigned *w, uint64_t slot)
{
	struct tp_held *e = &st->held[st->n_held++];

	e->header = h;
	e->time = t;
	e->w[0] = w[0];
	e->w[1] = w[1];
	e->slot = slot;
	e->clk = ((uint64_t)msb_for_cpu(st, _NTO_TRACE_GETCPU(h)) << 32) | t;
	return 0;
}

/* Delivers the held events: the buffer's owner is now known (or known to be unknown). */
static int hold_release(struct traceparser_state *st)
{
	unsigned i, n = st->n_held;

	st->holding = 0;
	st->n_held = 0;
	for (i = 0; i < n; i++) {
		struct tp_held e = st->held[i];
		if (emit_explicit(st, e.header, e.time, e.clk, e.w, 2, e.slot, st->buf_pid, st->buf_tid,
				  st->buf_owner_known) != 0)
			return -1;
	}
	return 0;
}

/*
 * A simple slot off the fast path: TIME, BUFFER and THRUNNING events, every slot while
 * events are held, and every slot in sort or debug mode. w: the two payload words, in
 * file order.
 */
static int s_slot(struct traceparser_state *st, uint32_t h, uint32_t t, unsigned *w, int conv, uint64_t slot)
{
	uint32_t k = h & (TP_TABLE_SIZE - 1);

	if (k == TIME_INDEX)
		note_time(st, h, t, tk__cs32(conv, w[0]));
	else if (k == THRUN_INDEX)
		note_running(st, h, tk__cs32(conv, w[0]), tk__cs32(conv, w[1]));
	if (st->owner_buffer_mode) {
		if (k == BUFFER_INDEX) {
			/* a new buffer: its events wait for the THRUNNING that names its owner */
			if (st->holding && hold_release(st) != 0)
				return -1;
			st->buf_owner_known = 0;
			st->buf_pid = st->buf_tid = 0;
			st->holding = 1;
			return hold(st, h, t, w, slot);
		}
		if (st->holding) {
			if (k == THRUN_INDEX) {
				st->buf_pid = (int32_t)tk__cs32(conv, w[0]);
				st->buf_tid = (int32_t)tk__cs32(conv, w[1]);
				st->buf_owner_known = 1;
				if (hold_release(st) != 0)
					return -1;
			} else if (TK_KEV_CLASS(h) == 1 && st->n_held < TP_MAX_HELD) {
				return hold(st, h, t, w, slot);
			} else if (hold_release(st) != 0) { /* no owner event: unknown */
				return -1;
			}
		}
	}
	if (st->sort_mode) {
		int32_t pid, tid;
		int known;
		owner_now(st, _NTO_TRACE_GETCPU(h), &pid, &tid, &known);
		return collect(st, h, t, ((uint64_t)msb_for_cpu(st, _NTO_TRACE_GETCPU(h)) << 32) | t, w, 2, slot, pid,
			       tid, known);
	}
	deliver(st, h, t, w, 2, slot);
	return 0;
}

/* Any slot, off the fast path; counts the combine slots in *combine_slots. */
static int one_slot(struct traceparser_state *st, traceevent_t *ev, int conv, uint64_t slot, size_t *combine_slots)
{
	uint32_t h = tk__cs32(conv, ev->header);
	uint32_t t = tk__cs32(conv, ev->data[0]);

	if (_TRACE_GET_STRUCT(h) == _TRACE_STRUCT_S)
		return s_slot(st, h, t, &ev->data[1], conv, slot);
	(*combine_slots)++;
	if (st->holding && hold_release(st) != 0)
		return -1;
	return combine(st, h, t, ev, slot);
}

/* ---- the event loop ------------------------------------------------------------------- */

/*
 * Fast path: no per-event debug output, no sorting. `conv` is a compile-time constant in
 * each of the two instances, so the byte swaps vanish when they are not needed.
 */
static inline __attribute__((always_inline)) int run_fast_owned(struct traceparser_state *st,
								unsigned char *p, size_t n,
								uint64_t first_slot, const int conv,
								const int runs);

static inline __attribute__((always_inline)) int run_fast(struct traceparser_state *st,
							  unsigned char *p, size_t n,
							  uint64_t first_slot, const int conv, const int runs)
{
	size_t i, combine_slots = 0, run = NO_RUN;

	/* QNX files: THRUNNING events go through their hook, only TIME needs a test */
	if (!st->owner_buffer_mode) {
		for (i = 0; i < n; i++) {
			/* p is 16-byte aligned (tk__tp_input_align): the slot is used in place. */
			traceevent_t *ev = (traceevent_t *)(void *)(p + i * 16);
			uint32_t h = conv ? tk__bswap32(ev->header) : ev->header;
			uint32_t t = conv ? tk__bswap32(ev->data[0]) : ev->data[0];
			uint32_t k = h & (_TRACE_GET_STRUCT(~0u) | (TP_TABLE_SIZE - 1));

			if (runs && in_run(st, p, first_slot, &i, n, k, &run))
				continue;
			if (LIKELY(k < TP_TABLE_SIZE && k != TIME_INDEX)) {
				deliver_at(st, k, h, t, &ev->data[1], 2, first_slot + i);
			} else if (k == TIME_INDEX) {
				note_time(st, h, t, conv ? tk__bswap32(ev->data[1]) : ev->data[1]);
				deliver_at(st, k, h, t, &ev->data[1], 2, first_slot + i);
			} else {
				combine_slots++;
				if (combine(st, h, t, ev, first_slot + i) != 0)
					return -1;
			}
		}
		if (run != NO_RUN)
			deliver_run(st, p, run, n, first_slot);
		st->stats.events += n - combine_slots;
		return 0;
	}
	return run_fast_owned(st, p, n, first_slot, conv, runs);
}

/*
 * TRACEKIT_OWNER=buffer files: TIME, BUFFER (and THRUNNING) leave the fast path, and from a
 * BUFFER to its THRUNNING every slot goes through s_slot(), which holds the events.
 */
static inline __attribute__((always_inline)) int run_fast_owned(struct traceparser_state *st,
								unsigned char *p, size_t n,
								uint64_t first_slot, const int conv,
								const int runs)
{
	size_t i = 0, combine_slots = 0, run = NO_RUN;

	/* events held from the previous block (a buffer's start, before its owner) */
	for (; UNLIKELY(st->holding) && i < n; i++) {
		if (one_slot(st, (traceevent_t *)(void *)(p + i * 16), conv, first_slot + i, &combine_slots) != 0)
			return -1;
	}
	for (; i < n; i++) {
		/* p is 16-byte aligned (tk__tp_input_align): the slot is used in place. */
		traceevent_t *ev = (traceevent_t *)(void *)(p + i * 16);
		uint32_t h = conv ? tk__bswap32(ev->header) : ev->header;
		uint32_t t = conv ? tk__bswap32(ev->data[0]) : ev->data[0];
		/* One test sends the rare cases (a combine slot, TIME, BUFFER, THRUNNING) off the
		 * path: the struct bits keep k outside the table for combine slots. */
		uint32_t k = h & (_TRACE_GET_STRUCT(~0u) | (TP_TABLE_SIZE - 1));

		if (runs && in_run(st, p, first_slot, &i, n, k, &run))
			continue;
		if (LIKELY(k < TP_TABLE_SIZE && k - TIME_INDEX > 1u && k != THRUN_INDEX)) {
			deliver_at(st, k, h, t, &ev->data[1], 2, first_slot + i);
		} else if (k < TP_TABLE_SIZE) {
			if (s_slot(st, h, t, &ev->data[1], conv, first_slot + i) != 0)
				return -1;
			/* a BUFFER of a TRACEKIT_OWNER=buffer file: up to its THRUNNING */
			while (UNLIKELY(st->holding) && i + 1 < n) {
				i++;
				if (one_slot(st, (traceevent_t *)(void *)(p + i * 16), conv, first_slot + i,
					     &combine_slots) != 0)
					return -1;
			}
		} else {
			combine_slots++;
			if (combine(st, h, t, ev, first_slot + i) != 0)
				return -1;
		}
	}
	if (run != NO_RUN)
		deliver_run(st, p, run, n, first_slot);
	st->stats.events += n - combine_slots;
	return 0;
}

/* Four instances: native or swapped bytes, with runs or without (a reader that asked for
 * none, as traceprinter, keeps the loop without the test of every slot for them). */
static int run_fast_native(struct traceparser_state *st, unsigned char *p, size_t n, uint64_t first)
{
	return st->batch_fn != NULL ? run_fast(st, p, n, first, 0, 1) : run_fast(st, p, n, first, 0, 0);
}

static int run_fast_swapped(struct traceparser_state *st, unsigned char *p, size_t n, uint64_t first)
{
	return st->batch_fn != NULL ? run_fast(st, p, n, first, 1, 1) : run_fast(st, p, n, first, 1, 0);
}

/* Slow path: debug output of every slot and/or sort mode. */
static int run_slow(struct traceparser_state *st, unsigned char *p, size_t n, uint64_t first_slot)
{
	int conv = (int)st->endian_conv;
	int dump = st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_EVENTS);
	size_t i, combine_slots = 0;

	for (i = 0; i < n; i++) {
		traceevent_t ev;

		memcpy(&ev, p + i * 16, 16);
		if (dump)
			fprintf(st->debug_stream, "event => h:0x%8.8lx d0:0x%8.8lx d1:0x%8.8lx d2:0x%8.8lx\n",
				(unsigned long)tk__cs32(conv, ev.header), (unsigned long)tk__cs32(conv, ev.data[0]),
				(unsigned long)ev.data[1], (unsigned long)ev.data[2]);
		if (one_slot(st, &ev, conv, first_slot + i, &combine_slots) != 0)
			return -1;
	}
	st->stats.events += n - combine_slots;
	return 0;
}

static void report_incomplete(struct traceparser_state *st)
{
	if (st->n_pending == 0)
		return;
	st->stats.incomplete_events += st->n_pending;
	if (st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_ERRORS))
		fprintf(st->debug_stream,
			"TRACEPARSER: byte offset %" PRIu64 ": %u combine event(s) never completed, the first here\n",
			st->events_offset + st->pending->slot * 16, st->n_pending);
	pending_clear(st);
}

static void call_null_callback(struct traceparser_state *st)
{
	const struct tp_cb *cb = &st->cb[0];

	if (cb->fn != NULL) {
		st->cur_header = 0;
		st->cur_time = 0;
		st->prev_return = cb->fn(st, cb->ud, 0u, 0u, NULL, 0u);
		st->prev_header = 0;
	}
}

int traceparser(struct traceparser_state *st, void *ud, const char *filename)
{
	struct tp_input in;
	uint64_t slot = 0;
	int rc = 0;

	if (st == NULL || filename == NULL) {
		errno = EINVAL;
		if (st != NULL)
			st->error = _TRACEPARSER_NULL_STATE_PTR;
		return -1;
	}
	reset_file_state(st);
	set_single_user_data(st, ud);
	if (st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_HEADER)) {
		fprintf(st->debug_stream, "TRACEPARSER LIBRARY version %d.%02d\n", _TRACEPARSER_VER_MAJOR,
			_TRACEPARSER_VER_MINOR);
		fflush(st->debug_stream);
	}
	if (tk__tp_input_open(&in, filename) != 0) {
		int e = errno;
		tk__tp_fail(st, _TRACEPARSER_CANNOT_READ_IN_FILE, e, "couldn't open input trace file: %s", strerror(e));
		return -1;
	}
	in.on_wait = st->on_wait;
	in.on_wait_ud = st->on_wait_ud;
	if (st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_HEADER))
		fprintf(st->debug_stream, " -- HEADER FILE INFORMATION -- \n");
	if (tk__tp_read_header(st, &in) != 0) {
		tk__tp_input_close(&in);
		return -1;
	}
	call_null_callback(st);
	if (st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_HEADER))
		fprintf(st->debug_stream, " -- KERNEL EVENTS -- \n");
	tk__tp_input_align(&in);
	tk__tp_input_start_async(&in);

	for (;;) {
		size_t avail, n;
		unsigned char *p = tk__tp_input_peek(&in, 16, &avail);
		int slow = st->sort_mode || (st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_EVENTS));

		if (in.err != 0) {
			rc = tk__tp_fail_at(st, _TRACEPARSER_CANNOT_READ_IN_FILE, EIO, in.offset, "cannot read: %s",
					    strerror(in.err));
			break;
		}
		n = avail / 16;
		if (n == 0) {
			if (avail > 0) {
				st->stats.trailing_bytes = avail;
				st->stats.bytes += avail;
				tk__tp_input_skip(&in, avail);
				rc = tk__tp_fail_at(st, _TRACEPARSER_CANNOT_READ_IN_FILE, EINVAL, in.offset - avail,
						    "truncated event: the file ends after %zu of its 16 bytes", avail);
			}
			break;
		}
		if (slot == 0 && !st->have_first)
			note_first(st, tk__cs32((int)st->endian_conv, tk__load32(p + 4)));
		if (slow)
			rc = run_slow(st, p, n, slot);
		else if (st->endian_conv)
			rc = run_fast_swapped(st, p, n, slot);
		else
			rc = run_fast_native(st, p, n, slot);
		slot += n;
		st->stats.slots += n;
		st->stats.bytes += n * 16;
		tk__tp_input_skip(&in, n * 16);
		if (rc != 0)
			break;
	}
	tk__tp_input_close(&in);
	if (st->holding && hold_release(st) != 0 && rc == 0)
		rc = -1;
	report_incomplete(st);
	if (st->sort_mode && (st->n_sorted > 0 || st->spool != NULL) && st->error != _TRACEPARSER_NO_MORE_MEMORY &&
	    dispatch_sorted(st) != 0 && rc == 0)
		rc = -1;
	sort_free(st);
	if (st->debug_stream != NULL)
		fflush(st->debug_stream);
	return rc;
}

int traceparser_one_event(struct traceparser_state *st, traceevent_t *event)
{
	traceevent_t ev;
	uint64_t slot;

	if (st == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	ev = *event;
	slot = st->stats.slots++;
	st->stats.bytes += 16;
	if (!st->have_first)
		note_first(st, ev.data[0]);
	if (_TRACE_GET_STRUCT(ev.header) == _TRACE_STRUCT_S) {
		if ((ev.header & (TP_TABLE_SIZE - 1)) == TIME_INDEX)
			note_time(st, ev.header, ev.data[0], ev.data[1]);
		else if ((ev.header & (TP_TABLE_SIZE - 1)) == THRUN_INDEX)
			note_running(st, ev.header, ev.data[1], ev.data[2]);
		st->stats.events++;
		deliver(st, ev.header, ev.data[0], &ev.data[1], 2, slot);
		return 0;
	}
	return combine(st, ev.header, ev.data[0], &ev, slot);
}

/* ---- information ---------------------------------------------------------------------- */

void *traceparser_get_info(struct traceparser_state *st, info_modes_t mode, unsigned *len)
{
	if (st == NULL) {
		errno = EINVAL;
		return NULL;
	}
	/* Each computed value has its own field: earlier pointers keep their values. */
#define RET_INFO(field, v)                                   \
	do {                                                 \
		st->info.field = (v);                        \
		if (len)                                     \
			*len = sizeof(st->info.field);       \
		return &st->info.field;                      \
	} while (0)

	switch ((int)mode) {
	case _TRACEPARSER_INFO_SYSPAGE:
		if (st->syspage == NULL)
			break;
		if (len)
			*len = st->syspage_len;
		return st->syspage;
	case _TRACEPARSER_INFO_ENDIAN_CONV:
		if (len)
			*len = sizeof(st->endian_conv);
		return &st->endian_conv;
	case _TRACEPARSER_INFO_NOW_CALLBACK_CLASS:
		RET_INFO(now_class, TK_KEV_CLASS(st->cur_header));
	case _TRACEPARSER_INFO_NOW_CALLBACK_EVENT:
		RET_INFO(now_event, TK_KEV_CODE(st->cur_header));
	case _TRACEPARSER_INFO_PREV_CALLBACK_CLASS:
		RET_INFO(prev_class, TK_KEV_CLASS(prev_header_of(st)));
	case _TRACEPARSER_INFO_PREV_CALLBACK_EVENT:
		RET_INFO(prev_event, TK_KEV_CODE(prev_header_of(st)));
	case _TRACEPARSER_INFO_PREV_CALLBACK_RETURN:
		RET_INFO(prev_return, prev_return_of(st));
	case _TRACEPARSER_INFO_DEBUG:
		if (len)
			*len = sizeof(st->debug_flags);
		return &st->debug_flags;
	case _TRACEPARSER_INFO_ERROR:
		if (len)
			*len = sizeof(st->error);
		return &st->error;
	case _TRACEPARSER_INFO_ERROR_STR:
		if (len)
			*len = (unsigned)strlen(st->errstr);
		return st->errstr;
	case _TRACEPARSER_INFO_STATS:
		if (len)
			*len = sizeof(st->stats);
		return &st->stats;
	case _TRACEPARSER_INFO_EVENT_ID:
		RET_INFO(event_id, st->cur_slot);
	case _TRACEPARSER_INFO_CLK_MSB:
		RET_INFO(clk_msb, (uint32_t)(tk_traceparser_clk(st) >> 32));
	case _TRACEPARSER_INFO_CLK_INTIAL:
		RET_INFO(clk_initial, st->clk_initial);
	case _TRACEPARSER_INFO_CLK:
		RET_INFO(clk, tk_traceparser_clk(st));
	case _TRACEPARSER_INFO_CLK_DELTA: {
		uint64_t clk = tk_traceparser_clk(st);
		RET_INFO(clk_delta, clk > st->clk_initial ? clk - st->clk_initial : 0);
	}
	case _TRACEPARSER_INFO_TIME_DELTA: {
		uint64_t clk = tk_traceparser_clk(st);
		RET_INFO(time_delta, cycles_to_ns(st, clk > st->clk_initial ? clk - st->clk_initial : 0));
	}
	case TK_TRACEPARSER_INFO_OFFSET:
		RET_INFO(offset, st->events_offset + st->cur_slot * 16);
	case TK_TRACEPARSER_INFO_NS:
		RET_INFO(ns, tk_traceparser_ns(st));
	default:
		if ((int)mode >= _TRACEPARSER_INFO_HEADER_BEGIN && (int)mode <= _TRACEPARSER_INFO_HEADER_END) {
			const struct tp_attr *a = tk__tp_find_attr(st, tk__tp_known_key((unsigned)mode));
			if (a != NULL) {
				if (len)
					*len = a->value_len;
				return a->value;
			}
			st->error = _TRACEPARSER_MISSING_FIELD;
			errno = EINVAL;
			return NULL;
		}
		st->error = _TRACEPARSER_WRONG_H_KEYWORD;
		errno = EINVAL;
		return NULL;
	}
#undef RET_INFO
	st->error = _TRACEPARSER_MISSING_FIELD;
	errno = EINVAL;
	return NULL;
}

unsigned tk_traceparser_header_count(const struct traceparser_state *st)
{
	return st ? st->n_attrs : 0;
}

int tk_traceparser_header_entry(const struct traceparser_state *st, unsigned index, const char **key,
				const char **value, unsigned *value_len)
{
	if (st == NULL || index >= st->n_attrs)
		return TK_EINVAL;
	if (key)
		*key = st->attrs[index].key;
	if (value)
		*value = st->attrs[index].value;
	if (value_len)
		*value_len = st->attrs[index].value_len;
	return TK_OK;
}

const char *tk_traceparser_header_value(const struct traceparser_state *st, const char *key,
					unsigned *value_len)
{
	const struct tp_attr *a;

	if (st == NULL || key == NULL)
		return NULL;
	a = tk__tp_find_attr(st, key);
	if (a == NULL)
		return NULL;
	if (value_len)
		*value_len = a->value_len;
	return a->value;
}
