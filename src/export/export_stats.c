/* SPDX-License-Identifier: MIT */
/*
 * Statistics of a trace, as a "format" of the exporter: the model hands it every event
 * (counted per class and event, per owning thread, and followed through THREAD state
 * changes) and every slice it closes (user intervals and kernel calls: count, total, mean,
 * max). Nothing is written until the end, when the report goes out as text, CSV or JSON
 * (docs/export.md, "Statistics"). Memory: a table per thread and per (class, event) seen.
 */
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "common/tk_bytes.h"
#include "common/tk_utf8.h"
#include "export/export_internal.h"
#include "traceparser/tp_batch.h"

enum { BUCKET_RUNNING, BUCKET_READY, BUCKET_BLOCKED, N_BUCKETS };

typedef struct st_thread {
	int32_t pid, tid;
	uint32_t used;
	int state;            /* -1: unknown yet; otherwise the last STATE_* */
	int last_cpu;         /* CPU of the last THRUNNING, -1 */
	uint64_t since_ns;    /* when the state was entered */
	uint64_t events;      /* events owned */
	uint64_t ns[N_BUCKETS];
	uint64_t switches, migrations;
	char name[64];
} st_thread;

typedef struct st_process {
	int32_t pid;
	uint32_t used;
	char name[128];
} st_process;

/* Durations: count, total, maximum, and a log-linear histogram for percentiles (8 buckets
 * per power of two: a percentile is the upper end of its bucket, within 12.5%, at most the
 * maximum). */
#define HIST_BUCKETS 512
typedef struct st_interval {
	uint64_t count, total_ns, max_ns;
	uint32_t *hist; /* HIST_BUCKETS counts, allocated at the first duration */
} st_interval;

static inline __attribute__((always_inline)) unsigned hist_bucket(uint64_t ns)
{
	if (ns < 8)
		return (unsigned)ns;
	unsigned e = 63u - (unsigned)__builtin_clzll(ns); /* 3..63 */
	return 8 * (e - 2) + (unsigned)((ns >> (e - 3)) & 7);
}

static uint64_t hist_upper(unsigned b)
{
	if (b < 8)
		return b;
	unsigned e = b / 8 + 2, sub = b % 8;
	return e >= 63 ? UINT64_MAX : ((uint64_t)(8 + sub + 1) << (e - 3)) - 1;
}

/* The p-th percentile (0 < p <= 100) of an interval's durations; 0 without any. */
static uint64_t percentile(const st_interval *iv, unsigned p)
{
	if (iv->count == 0 || iv->hist == NULL)
		return 0;
	uint64_t rank = (iv->count * p + 99) / 100, seen = 0;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		seen += iv->hist[b];
		if (seen >= rank) {
			uint64_t v = hist_upper(b);
			return v < iv->max_ns ? v : iv->max_ns;
		}
	}
	return iv->max_ns;
}

typedef struct st_state {
	char **names;          /* "CLASS\tEVENT" of each (class, code) seen */
	st_thread *threads;
	size_t n_threads, threads_cap;
	st_process *procs;
	size_t n_procs, procs_cap;
	st_interval pairs[TK_EXPORT_MAX_PAIRS];
	/* VTune CSV intervals by kind and name, in order of their first end (csv_idx: open
	 * addressing, index + 1) */
	struct st_csv_iv {
		uint8_t kind;
		uint64_t hash;
		char *name;
		st_interval iv;
	} *csv_ivs;
	size_t n_csv_ivs, cap_csv_ivs;
	uint32_t *csv_idx;
	size_t csv_idx_cap;
	st_interval kercalls[TK__MAX_KERCALLS]; /* by number */
	char kercall_names[TK__MAX_KERCALLS][32];
	struct { int32_t pid, tid; int valid; } running_on[64]; /* by CPU */
	st_thread *last;       /* the owner of the last light event (NULL after the table grew) */
	int after_buffer;      /* the last event was a CONTROL BUFFER (or TIME/DROPPED after it) */
	uint64_t state_events; /* THREAD state changes followed */
	uint64_t tables_full;  /* threads or processes past the cap: not counted separately */
	int scan_ready;        /* act[] is made (st_scan()) */
	uint8_t act[32 * 1024]; /* st_scan(): what a slot of (class, event) does (SCAN_*), 0: not here */
	uint8_t scan_pair[1024]; /* st_scan(): the pair a USER code begins or ends (TK_EXPORT_MAX_PAIRS 256) */
	uint64_t counts[32 * 1024]; /* by (class, code); here, beside act[], for st_scan()'s loop */
} st_state;

#define ST_MAX_THREADS (1u << 20)

static size_t hash2(int32_t a, int32_t b, size_t mask)
{
	uint64_t k = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static st_thread *st_thread_get(st_state *ss, int32_t pid, int32_t tid)
{
	if ((ss->n_threads + 1) * 2 > ss->threads_cap) {
		if (ss->n_threads >= ST_MAX_THREADS)
			goto find_only;
		size_t cap = ss->threads_cap == 0 ? 64 : ss->threads_cap * 2;
		st_thread *t = calloc(cap, sizeof(*t));
		if (t == NULL)
			goto find_only;
		for (size_t i = 0; i < ss->threads_cap; i++) {
			if (!ss->threads[i].used)
				continue;
			size_t h = hash2(ss->threads[i].pid, ss->threads[i].tid, cap - 1);
			while (t[h].used)
				h = (h + 1) & (cap - 1);
			t[h] = ss->threads[i];
		}
		free(ss->threads);
		ss->threads = t;
		ss->threads_cap = cap;
		ss->last = NULL; /* it moved */
	}
find_only:
	if (ss->threads_cap == 0)
		return NULL;
	size_t mask = ss->threads_cap - 1, h = hash2(pid, tid, mask);
	while (ss->threads[h].used) {
		if (ss->threads[h].pid == pid && ss->threads[h].tid == tid)
			return &ss->threads[h];
		h = (h + 1) & mask;
	}
	if ((ss->n_threads + 1) * 2 > ss->threads_cap) {
		ss->tables_full++;
		return NULL;
	}
	st_thread *t = &ss->threads[h];
	t->used = 1;
	t->pid = pid;
	t->tid = tid;
	t->state = -1;
	t->last_cpu = -1;
	ss->n_threads++;
	return t;
}

/* Lookup only: never grows the table (pointers held by the caller stay valid). */
static st_thread *st_thread_find(st_state *ss, int32_t pid, int32_t tid)
{
	if (ss->threads_cap == 0)
		return NULL;
	size_t mask = ss->threads_cap - 1, h = hash2(pid, tid, mask);
	while (ss->threads[h].used) {
		if (ss->threads[h].pid == pid && ss->threads[h].tid == tid)
			return &ss->threads[h];
		h = (h + 1) & mask;
	}
	return NULL;
}

static st_process *st_proc_get(st_state *ss, int32_t pid)
{
	if ((ss->n_procs + 1) * 2 > ss->procs_cap && ss->n_procs < ST_MAX_THREADS) {
		size_t cap = ss->procs_cap == 0 ? 32 : ss->procs_cap * 2;
		st_process *p = calloc(cap, sizeof(*p));
		if (p != NULL) {
			for (size_t i = 0; i < ss->procs_cap; i++) {
				if (!ss->procs[i].used)
					continue;
				size_t h = hash2(ss->procs[i].pid, 0, cap - 1);
				while (p[h].used)
					h = (h + 1) & (cap - 1);
				p[h] = ss->procs[i];
			}
			free(ss->procs);
			ss->procs = p;
			ss->procs_cap = cap;
		}
	}
	if (ss->procs_cap == 0)
		return NULL;
	size_t mask = ss->procs_cap - 1, h = hash2(pid, 0, mask);
	while (ss->procs[h].used) {
		if (ss->procs[h].pid == pid)
			return &ss->procs[h];
		h = (h + 1) & mask;
	}
	if ((ss->n_procs + 1) * 2 > ss->procs_cap) {
		ss->tables_full++;
		return NULL;
	}
	ss->procs[h].used = 1;
	ss->procs[h].pid = pid;
	ss->n_procs++;
	return &ss->procs[h];
}

static void copy_text(char *dst, size_t cap, const char *s, size_t n)
{
	size_t k = n < cap - 1 ? n : cap - 1;
	/* a name of UTF-8 cut short is cut between characters, so that it stays UTF-8 */
	if (k < n && tk__utf8_valid(s, n))
		while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
			k--;
	for (size_t i = 0; i < k; i++) /* control characters would break the text and CSV layouts */
		dst[i] = (unsigned char)s[i] < 0x20 || s[i] == ',' || s[i] == '"' ? '_' : s[i];
	dst[k] = '\0';
}

static int st_start(tk_export *x)
{
	st_state *ss = calloc(1, sizeof(*ss));
	if (ss == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	ss->names = calloc(32 * 1024, sizeof(*ss->names));
	x->fmt_state = ss;
	if (ss->names == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	return 0;
}

static int bucket_of(int state)
{
	if (state == STATE_RUNNING)
		return BUCKET_RUNNING;
	if (state == STATE_READY)
		return BUCKET_READY;
	return BUCKET_BLOCKED;
}

static void enter_state(st_thread *t, int state, uint64_t ns)
{
	if (t->state > STATE_DEAD && ns >= t->since_ns)
		t->ns[bucket_of(t->state)] += ns - t->since_ns;
	t->state = state;
	t->since_ns = ns;
}

/* A thread enters state at ns on cpu: the time in its previous state is counted. A thread
 * that starts running on a CPU where another one still ran has preempted it: that one is
 * READY from then on, even if the trace does not say so. */
static void thread_state(st_state *ss, st_thread *t, int state, uint64_t ns, unsigned cpu)
{
	cpu &= 63;
	if (state == STATE_RUNNING && ss->running_on[cpu].valid &&
	    (ss->running_on[cpu].pid != t->pid || ss->running_on[cpu].tid != t->tid)) {
		st_thread *prev = st_thread_find(ss, ss->running_on[cpu].pid, ss->running_on[cpu].tid);
		if (prev != NULL && prev->state == STATE_RUNNING && prev->last_cpu == (int)cpu)
			enter_state(prev, STATE_READY, ns);
	}
	if (t->state == STATE_RUNNING && state != STATE_RUNNING && t->last_cpu >= 0 &&
	    ss->running_on[t->last_cpu].valid && ss->running_on[t->last_cpu].pid == t->pid &&
	    ss->running_on[t->last_cpu].tid == t->tid)
		ss->running_on[t->last_cpu].valid = 0;
	if (state == STATE_RUNNING) {
		ss->running_on[cpu].pid = t->pid;
		ss->running_on[cpu].tid = t->tid;
		ss->running_on[cpu].valid = 1;
		if (t->state != STATE_RUNNING)
			t->switches++;
		if (t->last_cpu >= 0 && (unsigned)t->last_cpu != cpu)
			t->migrations++;
		t->last_cpu = (int)cpu;
	}
	enter_state(t, state, ns);
	ss->state_events++;
}

static uint64_t field_value(const tk_kev_decoded *d, const char *name, int *found)
{
	const tk_kev_field *f = tk_kev_field_find(d, name);
	*found = f != NULL && f->type < TK_KEV_FIELD_STR;
	return *found ? f->v.u : 0;
}

static int st_event(tk_export *x, const tk_kev_decoded *d)
{
	st_state *ss = x->fmt_state;
	unsigned key = (d->cls & 31) * 1024 + (d->code & 1023);

	ss->counts[key]++;
	if (ss->names[key] == NULL) {
		char buf[80];
		const char *cls = d->cls_desc != NULL ? d->cls_desc->name : NULL;
		char cls_buf[16];
		if (cls == NULL) {
			snprintf(cls_buf, sizeof(cls_buf), "CLASS %u", d->cls);
			cls = cls_buf;
		}
		if (d->event_name[0] != '\0')
			snprintf(buf, sizeof(buf), "%s\t%s", cls, d->event_name);
		else if (d->number >= 0)
			snprintf(buf, sizeof(buf), "%s\t%s %d", cls, d->cls == 6 ? "USER" : "EVENT", d->number);
		else
			snprintf(buf, sizeof(buf), "%s\tEVENT %u", cls, d->code);
		ss->names[key] = strdup(buf);
		if (ss->names[key] == NULL)
			return tk__export_error(x, TK_ENOMEM, "out of memory");
	}
	if (d->cls == 2 && d->number >= 0 && d->number < TK__MAX_KERCALLS && tk__export_kercall_entry(d) &&
	    ss->kercall_names[d->number][0] == '\0' && d->event_name[0] != '\0')
		snprintf(ss->kercall_names[d->number], sizeof(ss->kercall_names[0]), "%s", d->event_name);

	/* the owner's events */
	if (d->cls != 1 && (d->flags & TK_KEV_DEC_OWNER_KNOWN)) {
		st_thread *t = ss->last; /* runs of one owner's events are the rule */
		if (t == NULL || t->pid != d->pid || t->tid != d->tid) {
			t = st_thread_get(ss, d->pid, d->tid);
			ss->last = t;
		}
		if (t != NULL)
			t->events++;
	}

	/* names */
	if (d->cls == 4 && (d->code == _TRACE_PR_TH_CREATE_P_NAME || d->code == _TRACE_PR_TH_NAME_T)) {
		const tk_kev_field *f = tk_kev_field_find(d, "name");
		int has_pid, has_tid;
		int32_t pid = (int32_t)field_value(d, "pid", &has_pid);
		int32_t tid = (int32_t)field_value(d, "tid", &has_tid);
		if (f != NULL && f->type == TK_KEV_FIELD_STR && has_pid) {
			if (d->code == _TRACE_PR_TH_CREATE_P_NAME) {
				st_process *p = st_proc_get(ss, pid);
				if (p != NULL)
					copy_text(p->name, sizeof(p->name), f->str, f->len);
			} else if (has_tid) {
				st_thread *t = st_thread_get(ss, pid, tid);
				if (t != NULL)
					copy_text(t->name, sizeof(t->name), f->str, f->len);
			}
		}
	}

	/* thread states: THREAD codes 0..STATE_MAX-1 name the thread that changes state */
	if (d->cls == 4 && d->code < STATE_MAX && d->number >= 0) {
		int owner_marker = x->owner_markers && ss->after_buffer && d->code == STATE_RUNNING;
		int has_pid, has_tid;
		int32_t pid = (int32_t)field_value(d, "pid", &has_pid);
		int32_t tid = (int32_t)field_value(d, "tid", &has_tid);
		if (!owner_marker && has_pid && has_tid) {
			st_thread *t = st_thread_get(ss, pid, tid);
			if (t != NULL)
				thread_state(ss, t, (int)d->code, d->time_ns, d->cpu);
		}
	}
	if (d->cls == 1 && d->code == _TRACE_CONTROL_BUFFER)
		ss->after_buffer = 1;
	else if (!(d->cls == 1 && (d->code == _TRACE_CONTROL_TIME || d->code == _TRACE_CONTROL_DROPPED)))
		ss->after_buffer = 0;
	return 0;
}

/* st_event() for an event of the light path (FUNC_ENTER/EXIT, USER): the count and the
 * owner's events; the first event of each (class, event) is decoded, for its name. */
static int st_light_event(tk_export *x, unsigned cls, unsigned code, int owner_known, int32_t pid, int32_t tid)
{
	st_state *ss = x->fmt_state;
	unsigned key = (cls & 31) * 1024 + (code & 1023);

	if (ss->names[key] == NULL)
		return 1;
	ss->counts[key]++;
	if (owner_known) {
		st_thread *t = ss->last;
		if (t == NULL || t->pid != pid || t->tid != tid) {
			t = st_thread_get(ss, pid, tid);
			ss->last = t;
		}
		if (t != NULL)
			t->events++;
	}
	ss->after_buffer = 0;
	return 0;
}

/* ---- the statistics' own pass over the parser's runs ------------------------------------------- */

/*
 * st_scan() takes the slots of the parser's runs (FUNC_ENTER/EXIT and USER events of two
 * words) as the light path would, without the light path's block and calls: per slot the
 * count of its (class, event), the owner's events, the export's counts and time span, and
 * the slices the model would open and close, on the model's own stacks. It does inline
 * only what has one outcome that is simple to state (a function entry or pair begin with
 * room on the stack, a function exit or pair end that closes the innermost slice, an
 * instant, a counter), within a stretch of one CPU's slots, whose owner and upper time bits
 * stay the same (TIME, BUFFER and THRUNNING end the parser's runs). Every other slot (the
 * first of its kind, an owner not known or not the last event's, a thread with begins past
 * the depth limit, an end that is not the innermost slice's, a stack to grow, a pair's first
 * duration) goes through the light path, slow(), one slot at a time: what the report says
 * is what the model says, byte for byte (test_export: test_scan_same, test_scan_random).
 *
 * What a slice opened here holds: its kind and key (what the model matches ends with),
 * begin_ns, and a pair's index: all that st_slice_end() and the model read of a slice of
 * the statistics (they have no slice_begin(), no function names).
 */
/* act[]: what a slot of (class, event) does in st_scan(), a bit each (tested in the order of
 * how often they come); 0 for a slot that is not batched (the run ends), and while the
 * (class, event) has no count yet (its first one is decoded, for its name). */
enum { SCAN_ENTER = 1, SCAN_EXIT = 2, SCAN_INSTANT = 4, SCAN_BEGIN = 8, SCAN_END = 16, SCAN_COUNTER = 32 };

static unsigned scan_kind(const tk_export *x, const st_state *ss, const struct traceparser_state *st,
			  unsigned key)
{
	unsigned cls = key >> 10, code = key & 1023u;

	if ((cls != 5 && cls != 6) || ss->counts[key] == 0 || !tk__tp_batched(st, key))
		return 0;
	if (cls == 5)
		return code == _NTO_TRACE_SYS_FUNC_ENTER ? SCAN_ENTER : code == _NTO_TRACE_SYS_FUNC_EXIT ? SCAN_EXIT : 0;
	if (tk__export_csv_code(x, cls, code))
		return 0; /* VTune CSV data: decoded, the model's way */
	if (x->pair_begin[code] != 0)
		return SCAN_BEGIN;
	if (x->pair_end[code] != 0)
		return SCAN_END;
	return x->counter_of[code] != 0 ? SCAN_COUNTER : SCAN_INSTANT;
}

static void scan_prepare(tk_export *x, st_state *ss, const struct traceparser_state *st)
{
	/* the declarations are final once the export has started */
	for (unsigned key = 5 * 1024; key < 7 * 1024; key++)
		ss->act[key] = (uint8_t)scan_kind(x, ss, st, key);
	for (unsigned code = 0; code < 1024; code++)
		ss->scan_pair[code] = (uint8_t)(x->pair_begin[code] != 0 ? x->pair_begin[code] - 1
					       : x->pair_end[code] != 0 ? x->pair_end[code] - 1 : 0);
	ss->scan_ready = 1;
}

/* A stretch of one CPU's slots being scanned: what the slots change, kept in registers. */
typedef struct scan_stretch {
	uint8_t top;        /* the struct and CPU bits of the slots' headers */
	uint64_t msb;       /* the upper time bits */
	tk__slice *sp;      /* the thread's next free place on its stack */
	tk__slice *base, *lim;
	uint64_t slices, instants, counters;
	uint64_t lo, hi;    /* the least and greatest time taken */
} scan_stretch;

/* One slot of a stretch: 1 when taken, 0 when it is not of the stretch or must go the light
 * path's way. *ns: its time where not is_ns (where it is, msb | the time word). conv
 * (swapped bytes) and is_ns (cycles are ns) are constants in each instance. */
static inline __attribute__((always_inline)) int scan_one(st_state *ss, struct traceparser_state *st,
							   scan_stretch *k, const uint32_t *p, uint64_t *ns,
							   const int conv, const int is_ns)
{
	/* the header's top byte (struct and CPU) and low half (class and event) where they are
	 * in memory: one byte compared, two bytes loaded */
	const int top_at = (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) != !!conv ? 3 : 0, low_at = 2 - top_at * 2 / 3;
	if (((const uint8_t *)p)[top_at] != k->top) /* another CPU (or not simple) */
		return 0;
	uint16_t low;
	memcpy(&low, (const uint8_t *)p + low_at, 2);
	const unsigned key = (conv ? __builtin_bswap16(low) : low) & 0x7fffu, a = ss->act[key];
	if (!is_ns)
		*ns = tk__tp_clk_to_ns(st, k->msb | tk__cs32(conv, p[1]));
#define SCAN_NS (is_ns ? k->msb | tk__cs32(conv, p[1]) : *ns)
	if (a & SCAN_ENTER) {
		if (k->sp >= k->lim)
			goto not_here;
		k->sp->kind = TK__SLICE_FUNC;
		k->sp->key = tk__cs32(conv, p[2]);
		k->sp->begin_ns = SCAN_NS; /* read (not used) where the model closes it */
		k->sp++;
	} else if (a & SCAN_EXIT) {
		if (k->sp == k->base || k->sp[-1].key != tk__cs32(conv, p[2]) || k->sp[-1].kind != TK__SLICE_FUNC)
			goto not_here;
		k->sp--;
		k->slices++;
	} else if (a & SCAN_INSTANT) {
		k->instants++;
	} else if (a & SCAN_BEGIN) {
		unsigned idx = ss->scan_pair[key & 1023u];
		if (k->sp >= k->lim)
			goto not_here;
		k->sp->kind = TK__SLICE_USER;
		k->sp->pair = (uint16_t)idx;
		k->sp->key = idx;
		k->sp->begin_ns = SCAN_NS;
		k->sp++;
	} else if (a & SCAN_END) {
		unsigned idx = ss->scan_pair[key & 1023u];
		st_interval *iv = &ss->pairs[idx];
		if (k->sp == k->base)
			goto not_here;
		tk__slice *s = k->sp - 1;
		if (s->key != idx || s->kind != TK__SLICE_USER || iv->hist == NULL)
			goto not_here;
		k->sp = s;
		/* st_slice_end() of a pair closed by its end */
		uint64_t end_ns = SCAN_NS, dur = end_ns > s->begin_ns ? end_ns - s->begin_ns : 0;
		iv->count++;
		iv->total_ns += dur;
		if (dur > iv->max_ns)
			iv->max_ns = dur;
		iv->hist[hist_bucket(dur)]++;
		k->slices++;
	} else if (a & SCAN_COUNTER) {
		k->counters++;
	} else { /* not batched, or the first of its kind */
		return 0;
	}
#undef SCAN_NS
	ss->counts[key]++;
	return 1;
not_here:
	return 0;
}

static inline __attribute__((always_inline)) size_t
scan_slots(tk_export *x, st_state *ss, struct traceparser_state *st, const uint32_t *slots, size_t n,
	   int (*slow)(void *, struct traceparser_state *, const uint32_t *), void *slow_ud, const int conv,
	   const int is_ns)
{
	const uint32_t *p = slots, *const end = slots + 4 * n;

	while (p < end) {
		uint32_t h = tk__cs32(conv, p[0]);
		int32_t pid, tid;

		if (!tk__tp_batched(st, h))
			break; /* the run ends here */
		/* a stretch of one CPU's slots: its owner and upper time bits */
		int known = tk__tp_batch_owner(st, h, &pid, &tid);
		tk__thread *t = x->last_thread;
		st_thread *tt = ss->last;
		if (!known || t == NULL || t->pid != pid || t->tid != tid || t->overflow != 0 || tt == NULL ||
		    tt->pid != pid || tt->tid != tid)
			goto slow_slot; /* the light path finds the threads, or decodes the slot */

		/* a thread without a stack yet: no room, nothing to close (no arithmetic on NULL) */
		static tk__slice no_stack[1];
		scan_stretch k = { .top = (uint8_t)(h >> 24),
				   .msb = tk__tp_batch_clk(st, h, 0),
				   .base = t->stack != NULL ? t->stack : no_stack };
		k.lim = k.base + (t->stack == NULL ? 0 : t->cap < TK_EXPORT_MAX_DEPTH ? t->cap : TK_EXPORT_MAX_DEPTH);
		k.sp = k.base + t->depth;
		const uint32_t *const start = p;
		uint64_t ns = 0;

		/* the first slot here: the loop compares each later one's time with the one before */
		if (!scan_one(ss, st, &k, p, &ns, conv, is_ns))
			goto slow_slot;
		if (is_ns)
			ns = k.msb | tk__cs32(conv, p[1]);
		k.lo = ns < x->stats.first_ns ? ns : x->stats.first_ns;
		k.hi = ns > x->stats.last_ns ? ns : x->stats.last_ns;
		/* the time span: a stretch's times go up but where a file is damaged; the least
		 * and the greatest are at the ends of where they go up (is_ns: the time words tell) */
		for (p += 4; p < end && scan_one(ss, st, &k, p, &ns, conv, is_ns); p += 4) {
			if (!is_ns) {
				k.lo = ns < k.lo ? ns : k.lo;
				k.hi = ns > k.hi ? ns : k.hi;
			} else if (__builtin_expect(tk__cs32(conv, p[1]) < tk__cs32(conv, p[-3]), 0)) {
				uint64_t now = k.msb | tk__cs32(conv, p[1]), before = k.msb | tk__cs32(conv, p[-3]);
				k.lo = now < k.lo ? now : k.lo;
				k.hi = before > k.hi ? before : k.hi;
			}
		}
		if (is_ns) { /* the last one taken */
			uint64_t last = k.msb | tk__cs32(conv, p[-3]);
			k.hi = last > k.hi ? last : k.hi;
		}
		uint64_t taken = (uint64_t)(p - start) / 4;
		t->depth = (uint32_t)(k.sp - k.base);
		tt->events += taken;
		x->stats.events += taken;
		x->stats.slices += k.slices;
		x->stats.instants += k.instants;
		x->stats.counters += k.counters;
		x->stats.first_ns = k.lo;
		x->stats.last_ns = k.hi;
		ss->after_buffer = 0;
		continue; /* *p starts the next stretch, or is not taken here */
slow_slot:
		/* the slot the light path's way (its threads and stacks may move: read again after) */
		if (slow(slow_ud, st, p) != 0 || !x->started || x->finished || x->failed)
			return (size_t)(p - slots) / 4 + 1;
		h = tk__cs32(conv, p[0]) & 0x7fffu;
		if (ss->act[h] == 0) /* the first of its kind has a count now */
			ss->act[h] = (uint8_t)scan_kind(x, ss, st, h);
		p += 4;
	}
	return (size_t)(p - slots) / 4;
}

static size_t st_scan(tk_export *x, struct traceparser_state *st, const uint32_t *slots, size_t n, int conv,
		      int (*slow)(void *, struct traceparser_state *, const uint32_t *), void *slow_ud)
{
	st_state *ss = x->fmt_state;

	if (ss == NULL || !x->started || x->finished || x->failed)
		return 0;
	if (!ss->scan_ready)
		scan_prepare(x, ss, st);
	if (tk__tp_clk_is_ns(st))
		return conv ? scan_slots(x, ss, st, slots, n, slow, slow_ud, 1, 1)
			    : scan_slots(x, ss, st, slots, n, slow, slow_ud, 0, 1);
	return conv ? scan_slots(x, ss, st, slots, n, slow, slow_ud, 1, 0)
		    : scan_slots(x, ss, st, slots, n, slow, slow_ud, 0, 0);
}

static int st_ignore_name(tk_export *x, int32_t pid, const char *name, size_t len, int utf8)
{
	(void)x, (void)pid, (void)name, (void)len, (void)utf8;
	return 0;
}

static int st_ignore_thread_name(tk_export *x, int32_t pid, int32_t tid, const char *name, size_t len, int utf8)
{
	(void)x, (void)pid, (void)tid, (void)name, (void)len, (void)utf8;
	return 0;
}

/* One interval of dur ns into iv: its count, total, maximum and histogram bucket. */
static int iv_add(tk_export *x, st_interval *iv, uint64_t dur)
{
	if (iv->hist == NULL && (iv->hist = calloc(HIST_BUCKETS, sizeof(*iv->hist))) == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	iv->count++;
	iv->total_ns += dur;
	if (dur > iv->max_ns)
		iv->max_ns = dur;
	iv->hist[hist_bucket(dur)]++;
	return 0;
}

static int st_slice_end(tk_export *x, const tk__thread *t, const tk__slice *s, uint64_t end_ns,
			const tk_kev_decoded *end, int reason)
{
	st_state *ss = x->fmt_state;
	st_interval *iv = NULL;

	(void)t, (void)end;
	if (reason != TK__CLOSE_END) /* no real end: its length would mislead */
		return 0;
	if (s->kind == TK__SLICE_USER)
		iv = &ss->pairs[s->pair];
	else if (s->kind == TK__SLICE_KERCALL && s->arg[0] < TK__MAX_KERCALLS)
		iv = &ss->kercalls[s->arg[0]];
	return iv != NULL ? iv_add(x, iv, end_ns - s->begin_ns) : 0;
}

/* A VTune CSV interval: into the durations of its kind and name. */
static int st_interval_end(tk_export *x, const tk__interval *iv)
{
	st_state *ss = x->fmt_state;
	uint32_t *known = &iv->name->fmt_id[iv->kind == TK__IV_FRAME];
	if (*known != 0) /* looked up by its text before */
		return iv_add(x, &ss->csv_ivs[*known - 1].iv, iv->end_ns - iv->begin_ns);
	uint64_t h = 0xcbf29ce484222325ull ^ iv->kind;
	for (uint32_t i = 0; i < iv->name->len; i++)
		h = (h ^ (unsigned char)iv->name->s[i]) * 0x100000001b3ull;
	if ((ss->n_csv_ivs + 1) * 2 > ss->csv_idx_cap) {
		size_t cap = ss->csv_idx_cap ? ss->csv_idx_cap * 2 : 64;
		uint32_t *idx = calloc(cap, sizeof(*idx));
		if (idx == NULL)
			return tk__export_error(x, TK_ENOMEM, "out of memory");
		for (size_t i = 0; i < ss->n_csv_ivs; i++) {
			size_t k = (size_t)ss->csv_ivs[i].hash & (cap - 1);
			while (idx[k] != 0)
				k = (k + 1) & (cap - 1);
			idx[k] = (uint32_t)i + 1;
		}
		free(ss->csv_idx);
		ss->csv_idx = idx;
		ss->csv_idx_cap = cap;
	}
	size_t k = (size_t)h & (ss->csv_idx_cap - 1);
	for (; ss->csv_idx[k] != 0; k = (k + 1) & (ss->csv_idx_cap - 1)) {
		struct st_csv_iv *e = &ss->csv_ivs[ss->csv_idx[k] - 1];
		if (e->hash == h && e->kind == iv->kind && strcmp(e->name, iv->name->s) == 0) {
			*known = ss->csv_idx[k];
			return iv_add(x, &e->iv, iv->end_ns - iv->begin_ns);
		}
	}
	if (ss->n_csv_ivs == ss->cap_csv_ivs) {
		size_t cap = ss->cap_csv_ivs ? ss->cap_csv_ivs * 2 : 16;
		struct st_csv_iv *v = realloc(ss->csv_ivs, cap * sizeof(*v));
		if (v == NULL)
			return tk__export_error(x, TK_ENOMEM, "out of memory");
		ss->csv_ivs = v;
		ss->cap_csv_ivs = cap;
	}
	struct st_csv_iv *e = &ss->csv_ivs[ss->n_csv_ivs];
	memset(e, 0, sizeof(*e));
	e->kind = iv->kind;
	e->hash = h;
	if ((e->name = strdup(iv->name->s)) == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	ss->csv_idx[k] = (uint32_t)++ss->n_csv_ivs;
	*known = ss->csv_idx[k];
	return iv_add(x, &e->iv, iv->end_ns - iv->begin_ns);
}

static int st_csv_sample(tk_export *x, const tk__csv_sample *c)
{
	(void)x, (void)c;
	return 0;
}

static int st_instant(tk_export *x, const tk__thread *t, int32_t pid, int32_t tid, const tk_kev_decoded *d)
{
	(void)x, (void)t, (void)pid, (void)tid, (void)d;
	return 0;
}

static int st_counter(tk_export *x, const tk__thread *t, const tk__counter *c, uint64_t ns, int64_t value)
{
	(void)x, (void)t, (void)c, (void)ns, (void)value;
	return 0;
}

/* ---- the report ------------------------------------------------------------------------------- */

static int cmp_thread(const void *a, const void *b)
{
	const st_thread *p = *(st_thread *const *)a, *q = *(st_thread *const *)b;
	if (p->pid != q->pid)
		return p->pid < q->pid ? -1 : 1;
	return p->tid < q->tid ? -1 : p->tid > q->tid;
}

/* ns as "<us>.<3 digits>" */
static const char *us(char buf[32], uint64_t ns)
{
	snprintf(buf, 32, "%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
	return buf;
}

static const char *proc_name(st_state *ss, int32_t pid)
{
	if (ss->procs_cap == 0)
		return "";
	size_t mask = ss->procs_cap - 1, h = hash2(pid, 0, mask);
	while (ss->procs[h].used) {
		if (ss->procs[h].pid == pid)
			return ss->procs[h].name;
		h = (h + 1) & mask;
	}
	return "";
}

/* A JSON string: UTF-8 as it is; a name that is not UTF-8 read as Latin-1 (every byte from
 * 0x80 as \u00XX), as the Chrome JSON export does, so that the document stays valid. */
static void json_str(FILE *f, const char *s)
{
	int utf8 = tk__utf8_valid(s, strlen(s));
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || (c >= 0x80 && !utf8))
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A name in the text report: control characters as '?' (a line per row). */
static void text_name(FILE *f, const char *s, int width)
{
	int n = 0;
	for (; *s != '\0'; s++, n++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, f);
	for (; n < width; n++)
		fputc(' ', f);
}

/* A name as a CSV field (RFC 4180: quoted when it holds a comma, a quote, CR or LF). */
static void csv_name(FILE *f, const char *s)
{
	if (strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* One row of durations (user intervals, kernel calls); the name made safe for the text and
 * CSV reports: declared pair names come from the command line or the trace's own header,
 * VTune CSV names from any text. */
static void iv_row(FILE *f, int fmt, const char *table, const char *name, const st_interval *iv, int first)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	uint64_t mean = iv->count ? iv->total_ns / iv->count : 0;
	uint64_t p50 = percentile(iv, 50), p90 = percentile(iv, 90), p99 = percentile(iv, 99);

	if (fmt == TK_EXPORT_STATS_TEXT) {
		text_name(f, name, 24);
		fprintf(f, " %10llu %16s %16s %16s %14s %14s %14s\n", (unsigned long long)iv->count, us(b1, iv->total_ns),
			us(b2, mean), us(b4, iv->max_ns), us(b3, p50), us(b5, p90), us(b6, p99));
	} else if (fmt == TK_EXPORT_STATS_CSV) {
		fprintf(f, "%s,,,,,", table);
		csv_name(f, name);
		fprintf(f, ",%llu,%llu,%llu,%llu,,,,,,%llu,%llu,%llu\n", (unsigned long long)iv->count,
			(unsigned long long)iv->total_ns, (unsigned long long)mean, (unsigned long long)iv->max_ns,
			(unsigned long long)p50, (unsigned long long)p90, (unsigned long long)p99);
	} else {
		fprintf(f, "%s\n{\"name\":", first ? "" : ",");
		json_str(f, name);
		fprintf(f, ",\"count\":%llu,\"total_ns\":%llu,\"mean_ns\":%llu,\"max_ns\":%llu,"
			   "\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu}",
			(unsigned long long)iv->count, (unsigned long long)iv->total_ns, (unsigned long long)mean,
			(unsigned long long)iv->max_ns, (unsigned long long)p50, (unsigned long long)p90,
			(unsigned long long)p99);
	}
}

static int st_finish(tk_export *x)
{
	st_state *ss = x->fmt_state;
	const tk_export_stats *es = &x->stats;
	FILE *f = x->stream;
	int fmt = x->format;
	char b1[32], b2[32], b3[32];
	size_t n = 0;

	/* threads still in a state: counted up to the end of the trace */
	st_thread **order = malloc((ss->n_threads + 1) * sizeof(*order));
	if (order == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	for (size_t i = 0; i < ss->threads_cap; i++) {
		st_thread *t = &ss->threads[i];
		if (!t->used)
			continue;
		if (t->state > STATE_DEAD && es->last_ns >= t->since_ns)
			t->ns[bucket_of(t->state)] += es->last_ns - t->since_ns;
		t->since_ns = es->last_ns;
		order[n++] = t;
	}
	qsort(order, n, sizeof(*order), cmp_thread);
	uint64_t span = es->last_ns >= es->first_ns ? es->last_ns - es->first_ns : 0;

	if (tk__export_flush(x) != 0) {
		free(order);
		return TK_EIO;
	}
	if (fmt == TK_EXPORT_STATS_TEXT) {
		fprintf(f, "%llu events, %zu threads, %s us from %s to %s us\n", (unsigned long long)es->events, n,
			us(b1, span), us(b2, es->first_ns), us(b3, es->last_ns));
		if (es->lost_events > 0)
			fprintf(f, "%llu events lost by the recorder (CONTROL DROPPED): the times across the gaps "
				   "may be wrong\n",
				(unsigned long long)es->lost_events);
		fprintf(f, "\nThreads (time from THREAD state events: %llu followed)\n",
			(unsigned long long)ss->state_events);
		fprintf(f, "%10s %10s %10s %16s %16s %16s %9s %10s  %s\n", "pid", "tid", "events", "running (us)",
			"ready (us)", "blocked (us)", "switches", "migrations", "name");
		for (size_t i = 0; i < n; i++) {
			const st_thread *t = order[i];
			fprintf(f, "%10d %10d %10llu %16s %16s %16s %9llu %10llu  ", t->pid, t->tid,
				(unsigned long long)t->events, us(b1, t->ns[0]), us(b2, t->ns[1]), us(b3, t->ns[2]),
				(unsigned long long)t->switches, (unsigned long long)t->migrations);
			text_name(f, t->name, 0);
			fputc('\n', f);
		}
		fprintf(f, "\nProcesses\n%10s %10s %8s %16s  %s\n", "pid", "events", "threads", "running (us)", "name");
	} else if (fmt == TK_EXPORT_STATS_CSV) {
		fprintf(f, "table,pid,tid,class,event,name,count,total_ns,mean_ns,max_ns,running_ns,ready_ns,blocked_ns,"
			   "switches,migrations,p50_ns,p90_ns,p99_ns\n");
		fprintf(f, "trace,,,,,,%llu,%llu,,,,,,,,,,\n", (unsigned long long)es->events, (unsigned long long)span);
		for (size_t i = 0; i < n; i++) {
			const st_thread *t = order[i];
			fprintf(f, "thread,%d,%d,,,", t->pid, t->tid);
			csv_name(f, t->name);
			fprintf(f, ",%llu,,,,%llu,%llu,%llu,%llu,%llu,,,\n", (unsigned long long)t->events, (unsigned long long)t->ns[0], (unsigned long long)t->ns[1],
				(unsigned long long)t->ns[2], (unsigned long long)t->switches,
				(unsigned long long)t->migrations);
		}
	} else {
		fprintf(f, "{\"events\":%llu,\"first_ns\":%llu,\"last_ns\":%llu,\"threads\":[",
			(unsigned long long)es->events, (unsigned long long)es->first_ns, (unsigned long long)es->last_ns);
		for (size_t i = 0; i < n; i++) {
			const st_thread *t = order[i];
			fprintf(f, "%s\n{\"pid\":%d,\"tid\":%d,\"name\":", i ? "," : "", t->pid, t->tid);
			json_str(f, t->name);
			fprintf(f, ",\"events\":%llu,\"running_ns\":%llu,\"ready_ns\":%llu,\"blocked_ns\":%llu,"
				   "\"switches\":%llu,\"migrations\":%llu}",
				(unsigned long long)t->events, (unsigned long long)t->ns[0], (unsigned long long)t->ns[1],
				(unsigned long long)t->ns[2], (unsigned long long)t->switches,
				(unsigned long long)t->migrations);
		}
		fprintf(f, "],\n\"processes\":[");
	}

	/* processes: the sums of their threads (the list is sorted by pid) */
	for (size_t i = 0, k = 0; i < n; i = k) {
		uint64_t events = 0, running = 0;
		for (k = i; k < n && order[k]->pid == order[i]->pid; k++)
			events += order[k]->events, running += order[k]->ns[0];
		const char *name = proc_name(ss, order[i]->pid);
		if (fmt == TK_EXPORT_STATS_TEXT) {
			fprintf(f, "%10d %10llu %8zu %16s  ", order[i]->pid, (unsigned long long)events, k - i,
				us(b1, running));
			text_name(f, name, 0);
			fputc('\n', f);
		} else if (fmt == TK_EXPORT_STATS_CSV) {
			fprintf(f, "process,%d,,,,", order[i]->pid);
			csv_name(f, name);
			fprintf(f, ",%llu,,,,%llu,,,,,,,\n", (unsigned long long)events, (unsigned long long)running);
		} else {
			fprintf(f, "%s\n{\"pid\":%d,\"name\":", i ? "," : "", order[i]->pid);
			json_str(f, name);
			fprintf(f, ",\"events\":%llu,\"threads\":%zu,\"running_ns\":%llu}", (unsigned long long)events,
				k - i, (unsigned long long)running);
		}
	}
	free(order);

	/* events per class and event */
	if (fmt == TK_EXPORT_STATS_TEXT)
		fprintf(f, "\nEvents by class and event\n%-18s %-24s %12s\n", "class", "event", "count");
	else if (fmt == TK_EXPORT_STATS_JSON)
		fprintf(f, "],\n\"events_by_class\":[");
	int first = 1;
	for (unsigned key = 0; key < 32 * 1024; key++) {
		if (ss->counts[key] == 0)
			continue;
		char cls[40];
		const char *tab = strchr(ss->names[key], '\t');
		snprintf(cls, sizeof(cls), "%.*s", (int)(tab - ss->names[key]), ss->names[key]);
		const char *ev = tab + 1;
		if (fmt == TK_EXPORT_STATS_TEXT) {
			text_name(f, cls, 18);
			fputc(' ', f);
			text_name(f, ev, 24);
			fprintf(f, " %12llu\n", (unsigned long long)ss->counts[key]);
		} else if (fmt == TK_EXPORT_STATS_CSV) {
			fputs("event,,,", f);
			csv_name(f, cls);
			fputc(',', f);
			csv_name(f, ev);
			fprintf(f, ",,%llu,,,,,,,,,,,\n", (unsigned long long)ss->counts[key]);
		} else {
			fprintf(f, "%s\n{\"class\":", first ? "" : ",");
			json_str(f, cls);
			fprintf(f, ",\"event\":");
			json_str(f, ev);
			fprintf(f, ",\"count\":%llu}", (unsigned long long)ss->counts[key]);
		}
		first = 0;
	}

	/* intervals: user pairs, then kernel calls */
	for (int kind = 0; kind < 2; kind++) {
		unsigned n_iv = kind == 0 ? x->n_pairs : TK__MAX_KERCALLS;
		const char *title = kind == 0 ? "User intervals" : "Kernel calls";
		const char *table = kind == 0 ? "interval" : "kercall";
		if (fmt == TK_EXPORT_STATS_TEXT)
			fprintf(f, "\n%s\n%-24s %10s %16s %16s %16s %14s %14s %14s\n", title, "name", "count", "total (us)",
				"mean (us)", "max (us)", "p50 (us)", "p90 (us)", "p99 (us)");
		else if (fmt == TK_EXPORT_STATS_JSON)
			fprintf(f, "],\n\"%s\":[", kind == 0 ? "user_intervals" : "kernel_calls");
		first = 1;
		for (unsigned i = 0; i < n_iv; i++) {
			const st_interval *iv = kind == 0 ? &ss->pairs[i] : &ss->kercalls[i];
			char kname[64];
			if (kind == 0)
				snprintf(kname, sizeof(kname), "%s", x->pairs[i].name);
			else if (iv->count == 0)
				continue;
			else if (ss->kercall_names[i][0] != '\0')
				snprintf(kname, sizeof(kname), "%s", ss->kercall_names[i]);
			else
				snprintf(kname, sizeof(kname), "KERCALL %u", i);
			iv_row(f, fmt, table, kname, iv, first);
			first = 0;
		}
		/* VTune CSV intervals after the pairs: tasks by their name, frames as "NAME (frame)" */
		for (size_t i = 0; kind == 0 && i < ss->n_csv_ivs; i++) {
			const struct st_csv_iv *e = &ss->csv_ivs[i];
			char *name = e->name, *buf = NULL;
			if (e->kind == TK__IV_FRAME && (buf = malloc(strlen(e->name) + 9)) != NULL) {
				sprintf(buf, "%s (frame)", e->name);
				name = buf;
			}
			iv_row(f, fmt, table, name, &e->iv, first);
			free(buf);
			first = 0;
		}
	}

	/* what could not be paired */
	if (fmt == TK_EXPORT_STATS_TEXT)
		fprintf(f, "\nUnmatched ends %llu, closed by an outer end %llu, open at the end %llu, "
			   "without a known thread %llu\n",
			(unsigned long long)es->unmatched_ends, (unsigned long long)es->closed_by_outer,
			(unsigned long long)es->open_at_end, (unsigned long long)es->unknown_owner);
	else if (fmt == TK_EXPORT_STATS_CSV) {
		fprintf(f, "unmatched,,,,,,%llu,,,,,,,,,,,\nunknown_owner,,,,,,%llu,,,,,,,,,,,\n",
			(unsigned long long)es->unmatched_ends, (unsigned long long)es->unknown_owner);
		if (es->lost_events > 0)
			fprintf(f, "lost,,,,,,%llu,,,,,,,,,,,\n", (unsigned long long)es->lost_events);
	} else {
		fprintf(f, "],\n\"unmatched_ends\":%llu,\"closed_by_outer\":%llu,\"open_at_end\":%llu,"
			   "\"unknown_owner\":%llu",
			(unsigned long long)es->unmatched_ends, (unsigned long long)es->closed_by_outer,
			(unsigned long long)es->open_at_end, (unsigned long long)es->unknown_owner);
		if (es->lost_events > 0)
			fprintf(f, ",\"lost_events\":%llu", (unsigned long long)es->lost_events);
		fprintf(f, "%s\n", x->csv_on ? "," : "}");
	}
	/* VTune CSV data: what tracecsv export would warn of (only for a trace that has it) */
	if (x->csv_on) {
		unsigned long long v[5] = { es->csv_unmatched_ends, es->csv_begun_twice, es->csv_open_at_end,
					    es->csv_unnamed, es->csv_malformed };
		if (fmt == TK_EXPORT_STATS_TEXT)
			fprintf(f, "VTune CSV data: %llu intervals; ends without a begin %llu, begun twice %llu, "
				   "without an end %llu, unnamed %llu, malformed %llu (not counted above)\n",
				(unsigned long long)es->csv_intervals, v[0], v[1], v[2], v[3], v[4]);
		else if (fmt == TK_EXPORT_STATS_CSV)
			fprintf(f, "csv_unmatched_ends,,,,,,%llu,,,,,,,,,,,\ncsv_begun_twice,,,,,,%llu,,,,,,,,,,,\n"
				   "csv_open_at_end,,,,,,%llu,,,,,,,,,,,\ncsv_unnamed,,,,,,%llu,,,,,,,,,,,\n"
				   "csv_malformed,,,,,,%llu,,,,,,,,,,,\n",
				v[0], v[1], v[2], v[3], v[4]);
		else
			fprintf(f, "\"csv_unmatched_ends\":%llu,\"csv_begun_twice\":%llu,\"csv_open_at_end\":%llu,"
				   "\"csv_unnamed\":%llu,\"csv_malformed\":%llu}\n",
				v[0], v[1], v[2], v[3], v[4]);
	}
	return ferror(f) ? tk__export_error(x, TK_EIO, "writing the statistics failed: %s", strerror(errno)) : 0;
}

static void st_free(tk_export *x)
{
	st_state *ss = x->fmt_state;
	if (ss == NULL)
		return;
	if (ss->names != NULL)
		for (unsigned i = 0; i < 32 * 1024; i++)
			free(ss->names[i]);
	free(ss->names);
	for (unsigned i = 0; i < TK_EXPORT_MAX_PAIRS; i++)
		free(ss->pairs[i].hist);
	for (unsigned i = 0; i < TK__MAX_KERCALLS; i++)
		free(ss->kercalls[i].hist);
	for (size_t i = 0; i < ss->n_csv_ivs; i++) {
		free(ss->csv_ivs[i].name);
		free(ss->csv_ivs[i].iv.hist);
	}
	free(ss->csv_ivs);
	free(ss->csv_idx);
	free(ss->threads);
	free(ss->procs);
	free(ss);
	x->fmt_state = NULL;
}

const tk__format tk__export_stats = {
	.start = st_start,
	.event = st_event,
	.process_name = st_ignore_name,
	.thread_name = st_ignore_thread_name,
	.slice_begin = NULL,
	.slice_end = st_slice_end,
	.instant = st_instant,
	.counter = st_counter,
	.finish = st_finish,
	.free = st_free,
	.light_event = st_light_event,
	.scan = st_scan,
	.interval = st_interval_end,
	.csv_sample = st_csv_sample,
};
