/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's native trace format: a protobuf `Trace` (field 1: repeated TracePacket), written
 * with a small encoder of our own. The field numbers are those of Perfetto's published
 * .proto definitions (protos/perfetto/trace/...); tests/perfetto_trace.proto lists every one
 * used here, and docs/export.md the mapping.
 *
 *   TracePacket   ftrace_events 1, timestamp 8, trusted_packet_sequence_id 10, track_event 11,
 *                 interned_data 12, sequence_flags 13, track_descriptor 60
 *   TrackDescriptor  uuid 1, name 2, process 3, thread 4, parent_uuid 5, counter 8
 *   ProcessDescriptor pid 1, process_name 6;  ThreadDescriptor pid 1, tid 2, thread_name 5
 *   TrackEvent    category_iids 3, debug_annotations 4, type 9, name_iid 10, track_uuid 11,
 *                 categories 22, name 23, counter_value 30, double_counter_value 44
 *   DebugAnnotation  name_iid 1, uint_value 3, int_value 4, string_value 6,
 *                 pointer_value 7, name 10
 *   InternedData  event_categories 1, event_names 2, debug_annotation_names 3
 *                 (EventCategory / EventName / DebugAnnotationName: iid 1, name 2)
 *   FtraceEventBundle  cpu 1, event 2
 *   FtraceEvent   timestamp 1, pid 2, sched_switch 4, sched_waking 20
 *   SchedSwitchFtraceEvent  prev_comm 1, prev_pid 2, prev_prio 3, prev_state 4, next_comm 5,
 *                 next_pid 6, next_prio 7
 *   SchedWakingFtraceEvent  comm 1, pid 2, prio 3, success 4, target_cpu 5
 *
 * Everything is one packet sequence (id 1). The first packet clears the incremental state;
 * packets that use interned names say they need it, and carry the names they intern first.
 *
 * CPU scheduling: the THREAD state events (whose pid/tid fields name the thread that changes
 * state) become the ftrace records Perfetto draws as CPU tracks and thread-state tracks, kept
 * per CPU and written as one FtraceEventBundle per CPU every 32 KiB and at the end (comm:
 * the thread's name, else its process's; prio: the event's priority, else 120):
 * THRUNNING of a thread on CPU c is a sched_switch on c from what ran there (or the idle
 * task, pid 0) to it; any other state of a thread that runs is its switch-out (prev_state R
 * for READY, S for the blocked states, D for WAITPAGE and STACK, T for STOPPED, X for DEAD)
 * to the idle task; THREADY of a thread that does not run is a sched_waking.
 *
 * Encoding: every packet is built in place in the exporter's output buffer, after room for
 * its largest possible size is made once, by inline writers that check nothing. A nested
 * message's length gets one byte and is widened (the message moved up) in the rare case it
 * reaches 128 bytes. Names that recur (function addresses, event names, annotation names)
 * are found through small caches before the interning hash.
 */
#include <stdlib.h>
#include <string.h>

#include "common/tk_utf8.h"
#include "export/export_internal.h"
#include "traceparser/tp_batch.h"

#define SEQ_ID 1
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2
#define TYPE_SLICE_BEGIN 1
#define TYPE_SLICE_END 2
#define TYPE_INSTANT 3
#define TYPE_COUNTER 4

#define WIRE_VARINT 0
#define WIRE_LEN 2
#define TAG(field, wire) ((uint64_t)(field) << 3 | (wire))
#define HOT static inline __attribute__((always_inline)) /* the per-packet steps */

/* prev_state values (Linux's TASK_* bits, which Perfetto reads whatever the kernel version) */
#define PREV_R 0x00
#define PREV_S 0x01
#define PREV_D 0x02
#define PREV_T 0x04
#define PREV_X 0x10

#define DEFAULT_PRIO 120  /* Linux's priority of a nice-0 task, when the trace gives none */
#define BUNDLE_FLUSH 32768 /* bytes of ftrace events per CPU before a bundle is written */
#define N_CPUS 64
#define SYNTH_TID 1000000000 /* first tid given to a thread whose tid another process has */

/* Track uuids: the "no known thread" track, processes, threads, counters. Each kind has a
 * top bit of its own (CSV intervals 60, CSV counters 59); a thread's uuid keeps all 64 bits
 * of its pid and tid: the pid's top two bits go to bits 60 and 61, which only a thread's
 * uuid (bit 62) has beside the others' bits. */
#define UUID_NO_THREAD 1u
static uint64_t uuid_process(int32_t pid)
{
	return 0x8000000000000000ull | (uint32_t)pid;
}
static uint64_t uuid_thread(int32_t pid, int32_t tid)
{
	return 0x4000000000000000ull | (uint64_t)((uint32_t)pid >> 30) << 60 |
	       ((uint64_t)((uint32_t)pid & 0x3fffffffu) << 32) | (uint32_t)tid;
}
static uint64_t uuid_counter(int32_t pid, uint32_t code)
{
	return 0x2000000000000000ull | ((uint64_t)(uint32_t)pid << 10) | code;
}

/* ---- the writers: a cursor into room made beforehand ----------------------------------------- */

static inline unsigned char *w_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static inline unsigned char *w_uint(unsigned char *p, unsigned field, uint64_t v)
{
	p = w_varint(p, TAG(field, WIRE_VARINT));
	return w_varint(p, v);
}

/* int32/int64: two's complement, 10 bytes if negative */
static inline unsigned char *w_int(unsigned char *p, unsigned field, int64_t v)
{
	return w_uint(p, field, (uint64_t)v);
}

static inline unsigned char *w_bytes(unsigned char *p, unsigned field, const void *s, size_t n)
{
	p = w_varint(p, TAG(field, WIRE_LEN));
	p = w_varint(p, n);
	memcpy(p, s, n);
	return p + n;
}

/* Text as a protobuf string: valid UTF-8 as is, other bytes read as Latin-1 (room: 2n + 11),
 * the text the Chrome JSON export writes (its \u00XX escapes). Perfetto's strings must be
 * valid UTF-8. */
static unsigned char *w_text(unsigned char *p, unsigned field, const char *s, size_t n, int utf8)
{
	if (utf8)
		return w_bytes(p, field, s, n);
	p = w_varint(p, TAG(field, WIRE_LEN));
	p = w_varint(p, tk__latin1_utf8_len(s, n));
	return tk__latin1_to_utf8(p, s, n);
}

static unsigned char *w_cstr(unsigned char *p, unsigned field, const char *s)
{
	return w_bytes(p, field, s, strlen(s));
}

/* Text of unknown encoding (names declared by the user or the trace's header, symbols'
 * names): as w_text(), checked first (room: 2n + 11). */
static unsigned char *w_name(unsigned char *p, unsigned field, const char *s, size_t n)
{
	return w_text(p, field, s, n, tk__utf8_valid(s, n));
}

/* Opens a nested message: its tag and one byte for the length; returns that byte's address. */
static inline unsigned char *w_begin(unsigned char **pp, unsigned field)
{
	unsigned char *p = w_varint(*pp, TAG(field, WIRE_LEN));
	*pp = p + 1;
	return p;
}

/* Closes the message whose length byte is at: returns the cursor after it. Messages of 128
 * bytes or more move up to make room for a longer length (room: 4 bytes per message). */
static inline unsigned char *w_end(unsigned char *p, unsigned char *at)
{
	size_t n = (size_t)(p - at - 1);
	if (n < 0x80) {
		*at = (unsigned char)n;
		return p;
	}
	unsigned char tmp[10];
	size_t k = (size_t)(w_varint(tmp, n) - tmp);
	memmove(at + k, at + 1, n);
	memcpy(at, tmp, k);
	return p + k - 1;
}

/* ---- interning ---------------------------------------------------------------------------- */

#define INTERN_MAX (1u << 20) /* names interned per kind; later ones are written inline */

typedef struct intern_tab {
	uint64_t *hash; /* 0: free slot */
	uint32_t *iid, *off, *len;
	size_t cap, n;
	char *arena;
	size_t arena_len, arena_cap;
} intern_tab;

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h | 1; /* never 0 */
}

static void intern_free(intern_tab *t)
{
	free(t->hash);
	free(t->iid);
	free(t->off);
	free(t->len);
	free(t->arena);
	memset(t, 0, sizeof(*t));
}

static int intern_grow(intern_tab *t)
{
	size_t cap = t->cap == 0 ? 256 : t->cap * 2;
	uint64_t *hash = calloc(cap, sizeof(*hash));
	uint32_t *iid = malloc(cap * sizeof(*iid)), *off = malloc(cap * sizeof(*off)), *len = malloc(cap * sizeof(*len));
	if (hash == NULL || iid == NULL || off == NULL || len == NULL) {
		free(hash), free(iid), free(off), free(len);
		return TK_ENOMEM;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (t->hash[i] == 0)
			continue;
		size_t j = t->hash[i] & (cap - 1);
		while (hash[j] != 0)
			j = (j + 1) & (cap - 1);
		hash[j] = t->hash[i], iid[j] = t->iid[i], off[j] = t->off[i], len[j] = t->len[i];
	}
	free(t->hash), free(t->iid), free(t->off), free(t->len);
	t->hash = hash, t->iid = iid, t->off = off, t->len = len;
	t->cap = cap;
	return 0;
}

/* iid of s (1, 2, ...); *is_new when it was added now; 0 when the table is full or memory
 * ran out (the caller writes the name inline). */
static uint32_t intern(intern_tab *t, const char *s, size_t n, int *is_new)
{
	*is_new = 0;
	if ((t->n + 1) * 2 > t->cap && (t->n >= INTERN_MAX || intern_grow(t) != 0))
		return 0;
	uint64_t h = str_hash(s, n);
	size_t j = h & (t->cap - 1);
	while (t->hash[j] != 0) {
		if (t->hash[j] == h && t->len[j] == n && memcmp(t->arena + t->off[j], s, n) == 0)
			return t->iid[j];
		j = (j + 1) & (t->cap - 1);
	}
	if (t->arena_len + n > t->arena_cap) {
		size_t cap = t->arena_cap == 0 ? 4096 : t->arena_cap;
		while (cap < t->arena_len + n)
			cap *= 2;
		char *a = realloc(t->arena, cap);
		if (a == NULL || t->arena_len + n > UINT32_MAX)
			return a != NULL ? (t->arena = a, 0u) : 0u;
		t->arena = a;
		t->arena_cap = cap;
	}
	memcpy(t->arena + t->arena_len, s, n);
	t->hash[j] = h;
	t->off[j] = (uint32_t)t->arena_len;
	t->len[j] = (uint32_t)n;
	t->iid[j] = (uint32_t)++t->n;
	t->arena_len += n;
	*is_new = 1;
	return t->iid[j];
}

/* ---- a set of 64-bit keys (tracks described, tids taken) ------------------------------------ */

typedef struct uuid_set {
	uint64_t *v; /* 0: free */
	size_t cap, n;
} uuid_set;

/* 1 if u was already there, 0 if added now, negative on error */
static int uuid_add(uuid_set *s, uint64_t u)
{
	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = s->cap == 0 ? 256 : s->cap * 2;
		uint64_t *v = calloc(cap, sizeof(*v));
		if (v == NULL)
			return TK_ENOMEM;
		for (size_t i = 0; i < s->cap; i++) {
			if (s->v[i] == 0)
				continue;
			size_t j = (s->v[i] * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
			while (v[j] != 0)
				j = (j + 1) & (cap - 1);
			v[j] = s->v[i];
		}
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	size_t j = (u * 0x9e3779b97f4a7c15ull >> 20) & (s->cap - 1);
	while (s->v[j] != 0) {
		if (s->v[j] == u)
			return 1;
		j = (j + 1) & (s->cap - 1);
	}
	s->v[j] = u;
	s->n++;
	return 0;
}

/* ---- state ------------------------------------------------------------------------------------ */

/* A thread as the scheduling records see it. */
typedef struct pf_thr {
	int32_t pid, tid;
	int32_t ptid;    /* the tid written to Perfetto (unique over the trace) */
	int32_t prio;
	int16_t running; /* the CPU it runs on, -1 */
	int16_t last_cpu;
	uint8_t comm_len, comm_utf8;
	char comm[32];
} pf_thr;

typedef struct pf_cpu {
	int32_t cur;       /* index of the thread running there, -1: idle (as far as the trace says) */
	unsigned char *ev; /* encoded FtraceEvents not yet written */
	size_t len, cap;
} pf_cpu;

/* a name cache entry: key -> iid */
typedef struct name_slot {
	uint64_t key;
	uint32_t iid;
	uint32_t aux;
} name_slot;

#define ADDR_CACHE 4096
#define PTR_CACHE 512
#define EV_CACHE (32 * 1024)
#define ARG_CACHE 256

typedef struct pf_state {
	intern_tab names, cats, args;
	uuid_set tracks;
	/* interned entries the current packet introduces */
	struct newent {
		uint8_t kind; /* 1 category, 2 name, 3 annotation name */
		uint32_t iid;
		const intern_tab *tab; /* the text: tab->arena + off (the arena may move meanwhile) */
		uint32_t off, len;
	} fresh[TK_KEV_MAX_FIELDS + 8];
	unsigned n_fresh;
	uint32_t arg_iid[TK_KEV_MAX_FIELDS + 4];
	/* iids of strings that stay at their address for the whole export (field and category
	 * names, literals, pair names), by address and kind */
	struct {
		const char *p;
		uint32_t iid;
		uint8_t kind;
	} ptr_cache[PTR_CACHE];
	name_slot addr_cache[ADDR_CACHE]; /* function addresses: name iid (aux 1: taken) */
	name_slot *ev_cache;              /* instants by class, code: name and category iids (key: ev_key()) */
	uint32_t kercall_iid[1024];       /* kernel-call slice names by number (0: not yet) */
	uint32_t kind_iid[3][3];          /* by slice kind: category, arg 0, arg 1 (0: not yet) */
	/* by slice kind, once its iids are known: the bytes of a begin after the name,
	 * category_iids and the two annotations up to their values (lengths patched) */
	struct kind_tmpl {
		unsigned char cat[8], a0[16], a1[16];
		uint8_t n_cat, n_a0, n_a1, ready;
	} kt[3];
	uint32_t pair_iid[TK_EXPORT_MAX_PAIRS]; /* slice names of the pairs (0: not yet) */
	/* function begins by address and call site (hashed): the bytes after the track (name,
	 * category, both annotations); len 0: none */
	struct func_enc {
		uint64_t fn, site;
		unsigned char b[32]; /* one copy of 32 bytes (the usual: 20 to 26 used) */
		uint64_t len;
	} *func_enc;
	/* the timestamp the fast packets wrote last and its varint: one that differs from it
	 * only in its low 14 bits differs in the first two bytes only */
	uint64_t ts_last;
	unsigned ts_len; /* 0: none yet */
	unsigned char ts_enc[16];
	/* annotation name iids by the field name's address: a field's own name (0), "end.<name>"
	 * (1); one way, the iid 0 when the slot holds another name */
	struct arg_slot {
		const char *p;
		uint32_t iid;
	} arg_cache[2][ARG_CACHE];
	uint32_t cpu_iid;                 /* "cpu" (0: not yet) */
	/* the annotation name iids of a USER event's decoded fields d0 and d1 (two words, as
	 * the decoder gives them: pointers), as an instant's fields and as "end.d0", "end.d1"
	 * of a pair's end; learned from the first such event decoded (0: not yet), so that
	 * pf_light_run() writes the later ones undecoded with the same iids */
	uint32_t user_iid[2], user_end_iid[2];
	/* USER instants of the fused run by code: the bytes after the track up to the value of
	 * the cpu annotation, for the name and category iids they were made with (0: none) */
	struct inst_pre {
		uint32_t name_iid, cat_iid;
		uint8_t len;
		unsigned char b[32]; /* at most 2 + 5 + 2 + 5 + 3 + 5 + 1 bytes used */
	} inst_pre[1024];
	uint64_t track_uuid;              /* the last track_uuid written, and its encoding */
	unsigned char track_enc[12];
	unsigned track_enc_len;
	char kercall_label[1024][32];
	/* pf_scan(): what a slot does by class and event (SCAN_*; 0: not batched), and the
	 * pair a USER code begins or ends; made at the first scan (the declarations are final) */
	int scan_ready;
	uint8_t scan_op[32 * 1024];
	uint8_t scan_pair[1024];

	/* scheduling */
	pf_thr *thr;
	size_t n_thr, thr_cap;
	uint32_t *thr_idx; /* open addressing on (pid, tid): index + 1, 0 free */
	size_t idx_cap;
	uuid_set tids;     /* tids given out */
	struct pf_proc {   /* process names: the comm of their threads that have none */
		int32_t pid;
		uint8_t used, len, utf8;
		char name[32];
	} *procs;          /* open addressing on pid */
	size_t n_procs, procs_cap;
	int32_t next_synth;
	pf_cpu cpu[N_CPUS];
	int after_buffer;  /* the last event was a CONTROL BUFFER (TIME, DROPPED between) */

	/* a packet larger than the output buffer is built here (a long payload) */
	unsigned char *big;
	size_t big_cap;
	int in_big;
} pf_state;

/* ---- the packet ------------------------------------------------------------------------------- */

/* packet_room() when the output buffer is full, or the packet larger than it. */
static __attribute__((noinline)) unsigned char *packet_room_slow(tk_export *x, size_t n)
{
	pf_state *ps = x->fmt_state;
	if (n + 16 > x->out_cap) {
		if (n + 16 > ps->big_cap) {
			unsigned char *b = realloc(ps->big, n + 16);
			if (b == NULL) {
				tk__export_error(x, TK_ENOMEM, "out of memory for a Perfetto packet of %zu bytes", n);
				return NULL;
			}
			ps->big = b;
			ps->big_cap = n + 16;
		}
		ps->in_big = 1;
		return ps->big;
	}
	if (tk__out_room(x, n + 16) != 0)
		return NULL;
	return (unsigned char *)x->out + x->out_len;
}

/* Makes room for a packet of at most n bytes: in the output buffer, or for a packet larger
 * than that buffer in a buffer of its own. The cursor, or NULL (error set). */
HOT unsigned char *packet_room(tk_export *x, size_t n)
{
	if (x->out_len + n + 16 <= x->out_cap)
		return (unsigned char *)x->out + x->out_len;
	return packet_room_slow(x, n);
}

/* Trace.packet (field 1) opened at p, with the sequence fields. *at: its length byte. */
static inline unsigned char *packet_open(unsigned char *p, unsigned char **at, unsigned flags)
{
	*at = w_begin(&p, 1);
	p[0] = (unsigned char)TAG(10, WIRE_VARINT); /* one-byte tags and values */
	p[1] = SEQ_ID;
	if (flags == 0)
		return p + 2;
	p[2] = (unsigned char)TAG(13, WIRE_VARINT);
	p[3] = (unsigned char)flags;
	return p + 4;
}

HOT int packet_close(tk_export *x, unsigned char *p, unsigned char *at)
{
	pf_state *ps = x->fmt_state;
	p = w_end(p, at);
	if (ps->in_big) {
		ps->in_big = 0;
		tk__out_mem(x, ps->big, (size_t)(p - ps->big));
		return x->failed ? TK_EIO : 0;
	}
	x->out_len = (size_t)((char *)p - x->out);
	return 0;
}

/* ---- interned names in the packet ----------------------------------------------------------- */

static uint32_t use_name(pf_state *ps, intern_tab *t, uint8_t kind, const char *s, size_t n)
{
	int is_new;
	uint32_t iid = intern(t, s, n, &is_new);
	if (is_new && ps->n_fresh < sizeof(ps->fresh) / sizeof(ps->fresh[0])) {
		struct newent *e = &ps->fresh[ps->n_fresh++];
		e->kind = kind;
		e->iid = iid;
		e->tab = t;
		e->off = (uint32_t)(t->arena_len - n); /* the copy just made */
		e->len = (uint32_t)n;
	}
	return iid;
}

/* Room the fresh entries need in the packet. */
static size_t fresh_room(const pf_state *ps)
{
	size_t n = 8;
	for (unsigned i = 0; i < ps->n_fresh; i++)
		n += 24 + 2 * (size_t)ps->fresh[i].len;
	return n;
}

/* InternedData with the entries this packet introduces (before the event using them). */
static unsigned char *put_interned(pf_state *ps, unsigned char *p)
{
	if (ps->n_fresh == 0)
		return p;
	unsigned char *idata = w_begin(&p, 12);
	for (unsigned i = 0; i < ps->n_fresh; i++) {
		const struct newent *e = &ps->fresh[i];
		unsigned char *m = w_begin(&p, e->kind); /* event_categories 1, event_names 2, debug_annotation_names 3 */
		p = w_uint(p, 1, e->iid);
		p = w_name(p, 2, e->tab->arena + e->off, e->len);
		p = w_end(p, m);
	}
	ps->n_fresh = 0;
	return w_end(p, idata);
}

/* The cache slot of a string's address and kind (literals lie a few bytes apart: hashed).
 * Two-way: an entry is at its slot or the one beside it (h ^ 1). */
static inline size_t ptr_slot(const char *s, unsigned kind)
{
	uint64_t k = ((uint64_t)(uintptr_t)s << 3 | (kind & 7)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 40) & (PTR_CACHE - 1);
}

/* The cached iid of (s, kind), or 0. */
static inline uint32_t ptr_cached(const pf_state *ps, const char *s, unsigned kind)
{
	size_t h = ptr_slot(s, kind);
	if (ps->ptr_cache[h].p == s && ps->ptr_cache[h].kind == kind)
		return ps->ptr_cache[h].iid;
	if (ps->ptr_cache[h ^ 1].p == s && ps->ptr_cache[h ^ 1].kind == kind)
		return ps->ptr_cache[h ^ 1].iid;
	return 0;
}

static void ptr_cache_put(pf_state *ps, const char *s, unsigned kind, uint32_t iid)
{
	size_t h = ptr_slot(s, kind);
	if (ps->ptr_cache[h].p != NULL)
		h ^= 1; /* the one beside it (it may be taken too: the older entry goes) */
	ps->ptr_cache[h].p = s;
	ps->ptr_cache[h].iid = iid;
	ps->ptr_cache[h].kind = (uint8_t)kind;
}

/* The iid of a string that stays at its address for the whole export: cached by address. */
static uint32_t static_name(pf_state *ps, intern_tab *t, uint8_t kind, const char *s)
{
	uint32_t iid = ptr_cached(ps, s, kind);
	if (iid != 0)
		return iid;
	iid = use_name(ps, t, kind, s, strlen(s));
	if (iid != 0)
		ptr_cache_put(ps, s, kind, iid);
	return iid;
}

/* The arg_cache slot of a field name's address. */
static inline size_t arg_slot(const char *s)
{
	return (size_t)(((uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull) >> 40) & (ARG_CACHE - 1);
}

/* The iid of annotation name `which` (0: the field's name, 1: "end.<name>") of field name s
 * when the cache has it, else 0. */
static inline uint32_t arg_cached(const pf_state *ps, unsigned which, const char *s)
{
	const struct arg_slot *e = &ps->arg_cache[which][arg_slot(s)];
	return e->p == s ? e->iid : 0;
}

static void arg_cache_put(pf_state *ps, unsigned which, const char *s, uint32_t iid)
{
	struct arg_slot *e = &ps->arg_cache[which][arg_slot(s)];
	e->p = s;
	e->iid = iid;
}

/* The iid of a field name (static) as an annotation name (0: written inline). */
static uint32_t field_iid(pf_state *ps, const char *fname)
{
	uint32_t iid = arg_cached(ps, 0, fname);
	if (iid == 0 && (iid = static_name(ps, &ps->args, 3, fname)) != 0)
		arg_cache_put(ps, 0, fname, iid);
	return iid;
}

/* ---- scheduling: threads ---------------------------------------------------------------------- */

static size_t thr_hash(int32_t pid, int32_t tid, size_t mask)
{
	uint64_t k = ((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid;
	k *= 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 32) & mask;
}

static int thr_index_grow(pf_state *ps)
{
	size_t cap = ps->idx_cap == 0 ? 256 : ps->idx_cap * 2;
	uint32_t *idx = calloc(cap, sizeof(*idx));
	if (idx == NULL)
		return TK_ENOMEM;
	for (size_t i = 0; i < ps->n_thr; i++) {
		size_t h = thr_hash(ps->thr[i].pid, ps->thr[i].tid, cap - 1);
		while (idx[h] != 0)
			h = (h + 1) & (cap - 1);
		idx[h] = (uint32_t)i + 1;
	}
	free(ps->thr_idx);
	ps->thr_idx = idx;
	ps->idx_cap = cap;
	return 0;
}

/* The thread's index (made on first sight: its Perfetto tid is its own unless another
 * process's thread has it already), or -1 (memory, or more than TK_EXPORT_MAX_THREADS). */
static int32_t thr_get(pf_state *ps, int32_t pid, int32_t tid)
{
	if (ps->idx_cap != 0) {
		size_t mask = ps->idx_cap - 1, h = thr_hash(pid, tid, mask);
		for (; ps->thr_idx[h] != 0; h = (h + 1) & mask) {
			const pf_thr *t = &ps->thr[ps->thr_idx[h] - 1];
			if (t->pid == pid && t->tid == tid)
				return (int32_t)ps->thr_idx[h] - 1;
		}
	}
	if (ps->n_thr >= TK_EXPORT_MAX_THREADS)
		return -1;
	if ((ps->n_thr + 1) * 2 > ps->idx_cap && thr_index_grow(ps) != 0)
		return -1;
	if (ps->n_thr == ps->thr_cap) {
		size_t cap = ps->thr_cap == 0 ? 64 : ps->thr_cap * 2;
		pf_thr *t = realloc(ps->thr, cap * sizeof(*t));
		if (t == NULL)
			return -1;
		ps->thr = t;
		ps->thr_cap = cap;
	}
	int taken = uuid_add(&ps->tids, 0x100000000ull | (uint32_t)tid);
	if (taken < 0)
		return -1;
	pf_thr *t = &ps->thr[ps->n_thr];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->ptid = tid;
	if (taken) { /* another process's thread has this tid: a tid nobody has */
		do
			t->ptid = ps->next_synth++;
		while (uuid_add(&ps->tids, 0x100000000ull | (uint32_t)t->ptid) == 1);
	}
	t->prio = DEFAULT_PRIO;
	t->running = -1;
	t->last_cpu = -1;
	t->comm_utf8 = 1;
	size_t h = thr_hash(pid, tid, ps->idx_cap - 1);
	while (ps->thr_idx[h] != 0)
		h = (h + 1) & (ps->idx_cap - 1);
	ps->thr_idx[h] = (uint32_t)ps->n_thr + 1;
	return (int32_t)ps->n_thr++;
}

/* The bytes of a name kept as a comm: at most cap, UTF-8 not cut inside a character. */
static size_t comm_len(const char *name, size_t len, int utf8, size_t cap)
{
	if (len <= cap)
		return len;
	len = cap;
	while (utf8 && len > 0 && ((unsigned char)name[len] & 0xc0) == 0x80)
		len--;
	return len;
}

static struct pf_proc *proc_find(pf_state *ps, int32_t pid)
{
	if (ps->procs_cap == 0)
		return NULL;
	size_t mask = ps->procs_cap - 1;
	for (size_t h = thr_hash(pid, 0, mask); ps->procs[h].used; h = (h + 1) & mask)
		if (ps->procs[h].pid == pid)
			return &ps->procs[h];
	return NULL;
}

/* Keeps a process's name (at most 32 bytes; nothing on lack of memory). */
static void proc_name(pf_state *ps, int32_t pid, const char *name, size_t len, int utf8)
{
	struct pf_proc *p = proc_find(ps, pid);
	if (p == NULL) {
		if ((ps->n_procs + 1) * 2 > ps->procs_cap) {
			size_t cap = ps->procs_cap == 0 ? 64 : ps->procs_cap * 2;
			struct pf_proc *v = calloc(cap, sizeof(*v));
			if (v == NULL)
				return;
			for (size_t i = 0; i < ps->procs_cap; i++) {
				if (!ps->procs[i].used)
					continue;
				size_t h = thr_hash(ps->procs[i].pid, 0, cap - 1);
				while (v[h].used)
					h = (h + 1) & (cap - 1);
				v[h] = ps->procs[i];
			}
			free(ps->procs);
			ps->procs = v;
			ps->procs_cap = cap;
		}
		size_t h = thr_hash(pid, 0, ps->procs_cap - 1);
		while (ps->procs[h].used)
			h = (h + 1) & (ps->procs_cap - 1);
		p = &ps->procs[h];
		p->used = 1;
		p->pid = pid;
		ps->n_procs++;
	}
	len = comm_len(name, len, utf8, sizeof(p->name));
	memcpy(p->name, name, len);
	p->len = (uint8_t)len;
	p->utf8 = (uint8_t)(utf8 != 0);
}

static int32_t ptid_of(pf_state *ps, int32_t pid, int32_t tid)
{
	int32_t i = thr_get(ps, pid, tid);
	return i >= 0 ? ps->thr[i].ptid : tid;
}

/* ---- tracks ------------------------------------------------------------------------------------ */

static int describe_process(tk_export *x, int32_t pid, const char *name, size_t len, int utf8)
{
	pf_state *ps = x->fmt_state;
	int seen = uuid_add(&ps->tracks, uuid_process(pid));
	if (seen < 0)
		return tk__export_error(x, seen, "out of memory");
	if (seen && name == NULL)
		return 0;
	unsigned char *p = packet_room(x, 64 + 2 * len), *pkt;
	if (p == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, 0);
	unsigned char *td = w_begin(&p, 60);
	p = w_uint(p, 1, uuid_process(pid));
	unsigned char *pd = w_begin(&p, 3);
	p = w_int(p, 1, pid);
	if (name != NULL)
		p = w_text(p, 6, name, len, utf8);
	p = w_end(p, pd);
	p = w_end(p, td);
	return packet_close(x, p, pkt);
}

static int describe_thread(tk_export *x, int32_t pid, int32_t tid, const char *name, size_t len, int utf8)
{
	pf_state *ps = x->fmt_state;
	int rc = describe_process(x, pid, NULL, 0, 1);
	if (rc != 0)
		return rc;
	int seen = uuid_add(&ps->tracks, uuid_thread(pid, tid));
	if (seen < 0)
		return tk__export_error(x, seen, "out of memory");
	if (seen && name == NULL)
		return 0;
	unsigned char *p = packet_room(x, 80 + 2 * len), *pkt;
	if (p == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, 0);
	unsigned char *td = w_begin(&p, 60);
	p = w_uint(p, 1, uuid_thread(pid, tid));
	p = w_uint(p, 5, uuid_process(pid));
	unsigned char *th = w_begin(&p, 4);
	p = w_int(p, 1, pid);
	p = w_int(p, 2, ptid_of(ps, pid, tid));
	if (name != NULL)
		p = w_text(p, 5, name, len, utf8);
	p = w_end(p, th);
	p = w_end(p, td);
	return packet_close(x, p, pkt);
}

static int pf_start(tk_export *x)
{
	pf_state *ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	x->fmt_state = ps;
	ps->ev_cache = calloc(EV_CACHE, sizeof(*ps->ev_cache));
	ps->func_enc = calloc(ADDR_CACHE, sizeof(*ps->func_enc));
	if (ps->ev_cache == NULL || ps->func_enc == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	ps->next_synth = SYNTH_TID;
	for (unsigned c = 0; c < N_CPUS; c++)
		ps->cpu[c].cur = -1;
	/* the first packet clears the sequence's incremental state and names the track of
	 * events without a known thread */
	unsigned char *p = packet_room(x, 96), *pkt;
	if (p == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, SEQ_INCREMENTAL_STATE_CLEARED);
	unsigned char *td = w_begin(&p, 60);
	p = w_uint(p, 1, UUID_NO_THREAD);
	p = w_cstr(p, 2, "events without a known thread");
	p = w_end(p, td);
	return packet_close(x, p, pkt);
}

static void set_comm(pf_state *ps, int32_t pid, int32_t tid, const char *name, size_t len, int utf8)
{
	int32_t i = thr_get(ps, pid, tid);
	if (i < 0)
		return;
	pf_thr *t = &ps->thr[i];
	len = comm_len(name, len, utf8, sizeof(t->comm));
	memcpy(t->comm, name, len);
	t->comm_len = (uint8_t)len;
	t->comm_utf8 = (uint8_t)(utf8 != 0);
}

static int pf_process_name(tk_export *x, int32_t pid, const char *name, size_t len, int utf8)
{
	proc_name(x->fmt_state, pid, name, len, utf8);
	return describe_process(x, pid, name, len, utf8);
}

static int pf_thread_name(tk_export *x, int32_t pid, int32_t tid, const char *name, size_t len, int utf8)
{
	set_comm(x->fmt_state, pid, tid, name, len, utf8);
	return describe_thread(x, pid, tid, name, len, utf8);
}

static int pf_thread_new(tk_export *x, const tk__thread *t)
{
	return describe_thread(x, t->pid, t->tid, NULL, 0, 1);
}

/* ---- scheduling: the ftrace records --------------------------------------------------------- */

/* Writes CPU c's events as one FtraceEventBundle packet. */
static int bundle_flush(tk_export *x, unsigned c)
{
	pf_state *ps = x->fmt_state;
	pf_cpu *cp = &ps->cpu[c];
	if (cp->len == 0)
		return 0;
	/* header: packet tag and length, sequence id, bundle tag and length, cpu */
	unsigned char hdr[40], *p = hdr;
	size_t bundle = 2 + cp->len; /* cpu 1 (c < 64: two bytes), events */
	size_t pkt = 2 + 1 + (size_t)(w_varint(hdr, bundle) - hdr) + bundle;
	p = w_varint(p, TAG(1, WIRE_LEN));
	p = w_varint(p, pkt);
	p = w_uint(p, 10, SEQ_ID);
	p = w_varint(p, TAG(1, WIRE_LEN));
	p = w_varint(p, bundle);
	p = w_uint(p, 1, c);
	if (tk__out_room(x, (size_t)(p - hdr)) != 0)
		return TK_EIO;
	tk__out_mem(x, hdr, (size_t)(p - hdr));
	tk__out_mem(x, cp->ev, cp->len);
	cp->len = 0;
	return x->failed ? TK_EIO : 0;
}

/* Room for one more FtraceEvent in CPU c's list: the cursor, or NULL. */
static unsigned char *cpu_room(tk_export *x, unsigned c, size_t n)
{
	pf_state *ps = x->fmt_state;
	pf_cpu *cp = &ps->cpu[c];
	if (cp->len + n > cp->cap) {
		size_t cap = cp->cap == 0 ? BUNDLE_FLUSH + 1024 : cp->cap;
		while (cap < cp->len + n)
			cap *= 2;
		unsigned char *e = realloc(cp->ev, cap);
		if (e == NULL) {
			tk__export_error(x, TK_ENOMEM, "out of memory for scheduling records");
			return NULL;
		}
		cp->ev = e;
		cp->cap = cap;
	}
	return cp->ev + cp->len;
}

static int cpu_done(tk_export *x, unsigned c, unsigned char *p)
{
	pf_state *ps = x->fmt_state;
	pf_cpu *cp = &ps->cpu[c];
	cp->len = (size_t)(p - cp->ev);
	return cp->len >= BUNDLE_FLUSH ? bundle_flush(x, c) : 0;
}

/* comm, pid, prio of a thread (i >= 0) or of CPU c's idle task (i < 0). The comm is the
 * thread's name, or its process's (as a Linux thread inherits it), or empty. */
static unsigned char *w_task(pf_state *ps, unsigned char *p, int32_t i, unsigned c, unsigned f_comm,
			     unsigned f_pid, unsigned f_prio)
{
	if (i >= 0) {
		const pf_thr *t = &ps->thr[i];
		const struct pf_proc *pr;
		if (t->comm_len == 0 && (pr = proc_find(ps, t->pid)) != NULL)
			p = w_text(p, f_comm, pr->name, pr->len, pr->utf8);
		else
			p = w_text(p, f_comm, t->comm, t->comm_len, t->comm_utf8);
		p = w_int(p, f_pid, t->ptid);
		return w_int(p, f_prio, t->prio);
	}
	char name[16] = "swapper/";
	size_t n = 8;
	if (c >= 10)
		name[n++] = (char)('0' + c / 10);
	name[n++] = (char)('0' + c % 10);
	p = w_bytes(p, f_comm, name, n);
	p = w_int(p, f_pid, 0);
	return w_int(p, f_prio, DEFAULT_PRIO);
}

/* sched_switch on CPU c at ns: prev (index, -1 idle) leaves in prev_state, next comes in. */
static int sched_switch(tk_export *x, unsigned c, uint64_t ns, int32_t prev, int64_t prev_state, int32_t next)
{
	pf_state *ps = x->fmt_state;
	unsigned char *p = cpu_room(x, c, 256);
	if (p == NULL)
		return TK_ENOMEM;
	unsigned char *ev = w_begin(&p, 2);
	p = w_uint(p, 1, ns);
	p = w_uint(p, 2, prev >= 0 ? (uint32_t)ps->thr[prev].ptid : 0u);
	unsigned char *sw = w_begin(&p, 4);
	p = w_task(ps, p, prev, c, 1, 2, 3);
	p = w_int(p, 4, prev_state);
	p = w_task(ps, p, next, c, 5, 6, 7);
	p = w_end(p, sw);
	p = w_end(p, ev);
	ps->cpu[c].cur = next;
	if (prev >= 0)
		ps->thr[prev].running = -1;
	if (next >= 0) {
		ps->thr[next].running = (int16_t)c;
		ps->thr[next].last_cpu = (int16_t)c;
	}
	return cpu_done(x, c, p);
}

static int sched_waking(tk_export *x, unsigned c, uint64_t ns, int32_t i)
{
	pf_state *ps = x->fmt_state;
	const pf_thr *t = &ps->thr[i];
	int32_t waker = ps->cpu[c].cur;
	unsigned char *p = cpu_room(x, c, 160);
	if (p == NULL)
		return TK_ENOMEM;
	unsigned char *ev = w_begin(&p, 2);
	p = w_uint(p, 1, ns);
	p = w_uint(p, 2, waker >= 0 ? (uint32_t)ps->thr[waker].ptid : 0u);
	unsigned char *wk = w_begin(&p, 20);
	p = w_task(ps, p, i, c, 1, 2, 3);
	p = w_int(p, 4, 1);
	p = w_int(p, 5, t->last_cpu >= 0 ? t->last_cpu : (int32_t)c);
	p = w_end(p, wk);
	p = w_end(p, ev);
	return cpu_done(x, c, p);
}

static int64_t prev_state_of(unsigned state)
{
	switch (state) {
	case STATE_READY:
		return PREV_R;
	case STATE_DEAD:
		return PREV_X;
	case STATE_STOPPED:
		return PREV_T;
	case STATE_WAITPAGE: /* Linux's D (uninterruptible) is recorded as WAITPAGE */
	case STATE_STACK:
		return PREV_D;
	default:
		return PREV_S;
	}
}

/* A THREAD state event: the thread it names changes state. */
static int thread_state(tk_export *x, const tk_kev_decoded *d)
{
	pf_state *ps = x->fmt_state;
	const tk_kev_field *fp = tk_kev_field_find(d, "pid"), *ft = tk_kev_field_find(d, "tid");
	if (fp == NULL || ft == NULL || fp->type != TK_KEV_FIELD_INT || ft->type != TK_KEV_FIELD_INT)
		return 0;
	int32_t pid = (int32_t)fp->v.i, tid = (int32_t)ft->v.i;
	int rc = describe_thread(x, pid, tid, NULL, 0, 1); /* its track, and its process */
	if (rc != 0)
		return rc;
	int32_t i = thr_get(ps, pid, tid);
	if (i < 0)
		return 0;
	const tk_kev_field *fprio = tk_kev_field_find(d, "priority");
	if (fprio != NULL && fprio->type == TK_KEV_FIELD_INT)
		ps->thr[i].prio = (int32_t)fprio->v.i;
	unsigned c = d->cpu % N_CPUS;
	int16_t on = ps->thr[i].running;

	if (d->code == STATE_RUNNING) {
		if (on == (int16_t)c)
			return 0; /* runs there already */
		if (on >= 0 && (rc = sched_switch(x, (unsigned)on, d->time_ns, i, PREV_R, -1)) != 0)
			return rc; /* it left the other CPU without the trace saying so */
		/* what ran on c and did not say it left was preempted */
		return sched_switch(x, c, d->time_ns, ps->cpu[c].cur, PREV_R, i);
	}
	if (on >= 0)
		return sched_switch(x, (unsigned)on, d->time_ns, i, prev_state_of(d->code), -1);
	if (d->code == STATE_READY)
		return sched_waking(x, c, d->time_ns, i);
	return 0; /* a thread that does not run moves between blocked states: nothing to draw */
}

/* CONTROL and THREAD events (out of line: pf_event stays short for the others). */
static __attribute__((noinline)) int pf_event_sched(tk_export *x, const tk_kev_decoded *d)
{
	pf_state *ps = x->fmt_state;
	if (d->cls == 1) {
		if (d->code == _TRACE_CONTROL_BUFFER)
			ps->after_buffer = 1;
		else if (d->code != _TRACE_CONTROL_TIME && d->code != _TRACE_CONTROL_DROPPED)
			ps->after_buffer = 0;
		return 0;
	}
	int owner_marker = x->owner_markers && ps->after_buffer && d->code == STATE_RUNNING;
	ps->after_buffer = 0;
	/* THREAD codes 0..STATE_MAX-1 are states (in tracekit's recordings, the THRUNNING after
	 * each CONTROL BUFFER only names the buffer's owner) */
	if (d->code >= STATE_MAX || d->number < 0 || owner_marker)
		return 0;
	return thread_state(x, d);
}

/* Every event first: THREAD states become scheduling records. */
static int pf_event(tk_export *x, const tk_kev_decoded *d)
{
	if (d->cls == 4 || d->cls == 1)
		return pf_event_sched(x, d);
	((pf_state *)x->fmt_state)->after_buffer = 0;
	return 0;
}

/* The light path (tk__format.light_event): function entries and exits, the begins of
 * declared user pairs (the slice carries the words) and counters (their value is the
 * words) need no decoded field; ends of pairs (their fields are written) and other user
 * events (instants) are decoded. */
static int pf_light_event(tk_export *x, unsigned cls, unsigned code, int owner_known, int32_t pid, int32_t tid)
{
	(void)owner_known, (void)pid, (void)tid;
	if (cls == 6 && (code > 1023 || (x->pair_begin[code] == 0 && x->counter_of[code] == 0)))
		return 1;
	((pf_state *)x->fmt_state)->after_buffer = 0; /* what pf_event() does for them */
	return 0;
}

/* ---- events ------------------------------------------------------------------------------------ */

/* Annotation of decoded field i (room: field_room()): name interned as iid, or inline_name. */
static unsigned char *put_field(unsigned char *p, const tk_kev_decoded *d, unsigned i, uint32_t iid,
				const char *inline_name)
{
	const tk_kev_field *f = &d->fields[i];
	unsigned char *a = w_begin(&p, 4);

	if (iid != 0)
		p = w_uint(p, 1, iid);
	else
		p = w_cstr(p, 10, inline_name);
	switch (f->type) {
	case TK_KEV_FIELD_INT:
		p = w_int(p, 4, f->v.i);
		break;
	case TK_KEV_FIELD_UINT:
		p = w_uint(p, 3, f->v.u);
		break;
	case TK_KEV_FIELD_HEX:
	case TK_KEV_FIELD_PTR:
		p = w_uint(p, 7, f->v.u);
		break;
	case TK_KEV_FIELD_STR:
	case TK_KEV_FIELD_BYTES:
		p = w_text(p, 6, f->str, f->len, f->utf8);
		break;
	case TK_KEV_FIELD_WORDS: {
		/* the words as text: "0x1 0x2 ..." */
		static const char digits[] = "0123456789abcdef";
		unsigned char *s = w_begin(&p, 6);
		for (uint32_t w = 0; w < f->len; w++) {
			uint32_t v = tk_kev_field_word(d, f, w);
			char tmp[8];
			int n = 0;
			if (w > 0)
				*p++ = ' ';
			*p++ = '0';
			*p++ = 'x';
			do {
				tmp[n++] = digits[v & 0xf];
				v >>= 4;
			} while (v != 0);
			while (n > 0)
				*p++ = (unsigned char)tmp[--n];
		}
		p = w_end(p, s);
		break;
	}
	default:
		p = w_cstr(p, 6, "");
		break;
	}
	return w_end(p, a);
}

/* Room an annotation of field f needs, its name included. */
static size_t field_room(const tk_kev_field *f, size_t name_len)
{
	size_t n = 40 + name_len;
	if (f->type == TK_KEV_FIELD_STR || f->type == TK_KEV_FIELD_BYTES)
		n += 2 * (size_t)f->len;
	else if (f->type == TK_KEV_FIELD_WORDS)
		n += 11 * (size_t)f->len;
	return n;
}

/* An annotation with an unsigned or pointer value and an interned (or inline) name. */
static inline unsigned char *put_num(unsigned char *p, uint32_t iid, const char *name, unsigned value_field,
				     uint64_t v)
{
	unsigned char *a = w_begin(&p, 4);
	if (iid != 0)
		p = w_uint(p, 1, iid);
	else
		p = w_cstr(p, 10, name);
	p = w_uint(p, value_field, v);
	return w_end(p, a);
}

static unsigned char *put_str(unsigned char *p, uint32_t iid, const char *name, const char *v)
{
	unsigned char *a = w_begin(&p, 4);
	if (iid != 0)
		p = w_uint(p, 1, iid);
	else
		p = w_cstr(p, 10, name);
	p = w_cstr(p, 6, v);
	return w_end(p, a);
}

/* The encoded track_uuid field of a track into ps->track_enc (kept for the last track:
 * runs of one thread's events are common). */
HOT void track_encode(pf_state *ps, uint64_t track)
{
	if (track != ps->track_uuid || ps->track_enc_len == 0) {
		ps->track_uuid = track;
		ps->track_enc_len = (unsigned)(w_uint(ps->track_enc, 11, track) - ps->track_enc);
	}
}

/* The event's header: packet fields, interned data, the TrackEvent opened (*te: its length). */
HOT unsigned char *track_event_open(pf_state *ps, unsigned char *p, unsigned char **te, uint64_t ns,
					      uint64_t track, unsigned type, uint32_t name_iid, const char *name,
					      size_t name_len, uint32_t cat_iid, const char *cat)
{
	p = put_interned(ps, p);
	p = w_uint(p, 8, ns);
	*te = w_begin(&p, 11);
	p = w_uint(p, 9, type);
	track_encode(ps, track);
	memcpy(p, ps->track_enc, sizeof(ps->track_enc));
	p += ps->track_enc_len;
	if (name != NULL) {
		if (name_iid != 0)
			p = w_uint(p, 10, name_iid);
		else
			p = w_name(p, 23, name, name_len);
	}
	if (cat != NULL) {
		if (cat_iid != 0)
			p = w_uint(p, 3, cat_iid);
		else
			p = w_cstr(p, 22, cat);
	}
	return p;
}

static const char *const slice_cat[] = { "SYSTEM", "USER", "KERCALL" };
static const char *const slice_arg0[] = { "thisfn", "d0", "number" };
static const char *const slice_arg1[] = { "call_site", "d1", "cpu" };

/* "0x<hex>" of v into buf (at least 19 bytes); its length */
static size_t hex_name(char *buf, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[16];
	int n = 0;
	do {
		tmp[n++] = digits[v & 0xf];
		v >>= 4;
	} while (v != 0);
	char *p = buf;
	*p++ = '0';
	*p++ = 'x';
	while (n > 0)
		*p++ = tmp[--n];
	*p = '\0';
	return (size_t)(p - buf);
}

/* The interned name of a slice (0: inline, name and *len set then). */
static uint32_t slice_name_iid(tk_export *x, pf_state *ps, const tk__slice *s, char buf[32], const char **name,
			       size_t *len)
{
	if (s->kind == TK__SLICE_FUNC && s->name != NULL) { /* a symbol's name (tk_export_set_symbols) */
		*name = s->name;
		*len = strlen(s->name);
		return use_name(ps, &ps->names, 2, s->name, *len);
	}
	if (s->kind == TK__SLICE_FUNC) {
		uint64_t a = s->arg[0];
		name_slot *e = &ps->addr_cache[((a >> 2) ^ (a >> 14)) & (ADDR_CACHE - 1)];
		if (e->aux && e->key == a)
			return e->iid;
		*len = hex_name(buf, a);
		*name = buf;
		uint32_t iid = use_name(ps, &ps->names, 2, buf, *len);
		if (iid != 0)
			e->key = a, e->iid = iid, e->aux = 1;
		return iid;
	}
	if (s->kind == TK__SLICE_USER) { /* the pair's name stays where it is during the export */
		uint32_t iid = static_name(ps, &ps->names, 2, x->pairs[s->pair].name);
		if (iid == 0) {
			*name = x->pairs[s->pair].name;
			*len = strlen(*name);
		}
		return iid;
	}
	unsigned k = (unsigned)s->arg[0] & 1023;
	*name = s->label;
	*len = strlen(s->label);
	if (ps->kercall_iid[k] != 0 && strcmp(ps->kercall_label[k], s->label) == 0)
		return ps->kercall_iid[k];
	uint32_t iid = use_name(ps, &ps->names, 2, s->label, *len);
	if (iid != 0) {
		ps->kercall_iid[k] = iid;
		memcpy(ps->kercall_label[k], s->label, sizeof(s->label));
	}
	return iid;
}

/* The common slice packets, when every name is known by iid and nothing is to be interned,
 * in one pass: such a packet stays under 128 bytes (its largest: 4 + 11 + 2 + a TrackEvent
 * of at most 62), so every length is one byte. The same fields as the general path. */
HOT unsigned char *w_ts(pf_state *ps, unsigned char *p, uint64_t ns)
{
	if (((ns ^ ps->ts_last) >> 14) == 0 && ps->ts_len > 2) { /* same length, same high bytes */
		memcpy(p, ps->ts_enc, sizeof(ps->ts_enc));
		p[0] = (unsigned char)(ns | 0x80);
		p[1] = (unsigned char)(ns >> 7 | 0x80);
		return p + ps->ts_len;
	}
	unsigned char *end = w_varint(p, ns);
	ps->ts_last = ns;
	ps->ts_len = (unsigned)(end - p);
	memcpy(ps->ts_enc, p, ps->ts_len);
	return end;
}

HOT unsigned char *fast_open(pf_state *ps, unsigned char *p, unsigned char **pkt, unsigned char **te, uint64_t ns)
{
	p[0] = (unsigned char)TAG(1, WIRE_LEN); /* Trace.packet */
	*pkt = p + 1;
	p[2] = (unsigned char)TAG(10, WIRE_VARINT);
	p[3] = SEQ_ID;
	p[4] = (unsigned char)TAG(13, WIRE_VARINT);
	p[5] = SEQ_NEEDS_INCREMENTAL_STATE;
	p[6] = (unsigned char)TAG(8, WIRE_VARINT);
	p = w_ts(ps, p + 7, ns);
	*p = (unsigned char)TAG(11, WIRE_LEN);
	*te = p + 1;
	return p + 2;
}

HOT unsigned char *fast_annotation(unsigned char *p, uint32_t iid, unsigned value_field, uint64_t v)
{
	unsigned char *a = p + 1;
	p[0] = (unsigned char)TAG(4, WIRE_LEN);
	p[2] = (unsigned char)TAG(1, WIRE_VARINT);
	p = w_varint(p + 3, iid);
	*p++ = (unsigned char)TAG(value_field, WIRE_VARINT);
	p = w_varint(p, v);
	*a = (unsigned char)(p - a - 1);
	return p;
}

/* The value field of a number's annotation by field type (put_field()'s): int 4, uint 3,
 * pointer 7; 0 for the types that are not numbers. */
static const unsigned char num_field[8] = { 4, 3, 7, 7, 0, 0, 0, 0 };

/* The iids of the annotation names (which: arg_cached()) of d's fields when every field is a
 * number and at most max of them, each name cached: 1, else 0. */
HOT int fast_fields(const pf_state *ps, const tk_kev_decoded *d, unsigned which, unsigned max, uint32_t *iids)
{
	if (d->n_fields > max)
		return 0;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const tk_kev_field *f = &d->fields[i];
		if (num_field[f->type & 7] == 0)
			return 0;
		if ((iids[i] = arg_cached(ps, which, f->name[0] != '\0' ? f->name : "text")) == 0)
			return 0;
	}
	return 1;
}

/* The annotations of fast_fields(): what put_field() writes for numbers. */
HOT unsigned char *fast_put_fields(unsigned char *p, const tk_kev_decoded *d, const uint32_t *iids)
{
	for (unsigned i = 0; i < d->n_fields; i++)
		p = fast_annotation(p, iids[i], num_field[d->fields[i].type & 7], d->fields[i].v.u);
	return p;
}

/* 1 when d is a USER event of at most two words as the decoder gives it: fields d0 and d1,
 * pointers (their annotations are then what pf_light_run() writes from the words). */
static int user_words(const tk_kev_decoded *d)
{
	return d->cls == 6 && !(d->flags & TK_KEV_DEC_WIDE) && d->n_fields == 2 &&
	       d->fields[0].type == TK_KEV_FIELD_HEX && d->fields[1].type == TK_KEV_FIELD_HEX &&
	       strcmp(d->fields[0].name, "d0") == 0 && strcmp(d->fields[1].name, "d1") == 0;
}

/* The bytes of a begin of slice kind k after its name (pf_state.kt), once its iids are known. */
static void kind_tmpl_make(pf_state *ps, unsigned k)
{
	const uint32_t *kid = ps->kind_iid[k];
	struct kind_tmpl *kt = &ps->kt[k];
	unsigned vf = k == TK__SLICE_KERCALL ? 3 : 7; /* uint or pointer (hex) */
	unsigned char *p = kt->cat;
	*p++ = (unsigned char)TAG(3, WIRE_VARINT);
	kt->n_cat = (uint8_t)(w_varint(p, kid[0]) - kt->cat);
	p = kt->a0;
	p[0] = (unsigned char)TAG(4, WIRE_LEN);
	p[1] = 0; /* the annotation's length, patched */
	p[2] = (unsigned char)TAG(1, WIRE_VARINT);
	p = w_varint(p + 3, kid[1]);
	*p++ = (unsigned char)TAG(vf, WIRE_VARINT);
	kt->n_a0 = (uint8_t)(p - kt->a0);
	p = kt->a1;
	p[0] = (unsigned char)TAG(4, WIRE_LEN);
	p[1] = 0;
	p[2] = (unsigned char)TAG(1, WIRE_VARINT);
	p = w_varint(p + 3, kid[2]);
	*p++ = (unsigned char)TAG(vf, WIRE_VARINT);
	kt->n_a1 = (uint8_t)(p - kt->a1);
	kt->ready = 1;
}

HOT int slice_begin_fast(tk_export *x, pf_state *ps, uint64_t track, const tk__slice *s, uint32_t name_iid,
			 const struct kind_tmpl *kt)
{
	unsigned char *p = packet_room(x, 128), *pkt, *te, *a;
	if (p == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = fast_open(ps, p, &pkt, &te, s->begin_ns);
	p[0] = (unsigned char)TAG(9, WIRE_VARINT);
	p[1] = TYPE_SLICE_BEGIN;
	track_encode(ps, track);
	memcpy(p + 2, ps->track_enc, sizeof(ps->track_enc));
	p += 2 + ps->track_enc_len;
	unsigned char *body = p;
	struct func_enc *fe = NULL;
	if (s->kind == TK__SLICE_FUNC && s->name == NULL) { /* named by its address: cached */
		uint64_t fn = s->arg[0], h = (fn ^ s->arg[1] * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
		fe = &ps->func_enc[(h >> 40) & (ADDR_CACHE - 1)];
		if (fe->len != 0 && fe->fn == fn && fe->site == s->arg[1]) {
			memcpy(p, fe->b, sizeof(fe->b));
			p += fe->len;
			goto done;
		}
	}
	*p++ = (unsigned char)TAG(10, WIRE_VARINT);
	p = w_varint(p, name_iid);
	memcpy(p, kt->cat, sizeof(kt->cat)); /* category_iids */
	p += kt->n_cat;
	memcpy(p, kt->a0, sizeof(kt->a0)); /* the annotations: the template, the value, the length */
	a = p + 1;
	p = w_varint(p + kt->n_a0, s->arg[0]);
	*a = (unsigned char)(p - a - 1);
	memcpy(p, kt->a1, sizeof(kt->a1));
	a = p + 1;
	p = w_varint(p + kt->n_a1, s->arg[1]);
	*a = (unsigned char)(p - a - 1);
	if (fe != NULL && (size_t)(p - body) <= sizeof(fe->b)) {
		fe->fn = s->arg[0];
		fe->site = s->arg[1];
		fe->len = (uint8_t)(p - body);
		memcpy(fe->b, body, fe->len);
	}
done:
	*te = (unsigned char)(p - te - 1);
	*pkt = (unsigned char)(p - pkt - 1);
	x->out_len = (size_t)((char *)p - x->out);
	return 0;
}

/* pf_slice_begin() of a slice whose name or kind is not cached yet, or that interns. */
static __attribute__((noinline)) int slice_begin_slow(tk_export *x, const tk__thread *t, const tk__slice *s,
						      unsigned k)
{
	pf_state *ps = x->fmt_state;
	char buf[32];
	const char *name = NULL;
	size_t name_len = 0;

	uint32_t name_iid = slice_name_iid(x, ps, s, buf, &name, &name_len);
	if (s->kind == TK__SLICE_USER)
		ps->pair_iid[s->pair] = name_iid;
	uint32_t *kid = ps->kind_iid[k];
	if (kid[0] == 0 || kid[1] == 0 || kid[2] == 0) {
		kid[0] = static_name(ps, &ps->cats, 1, slice_cat[k]);
		kid[1] = static_name(ps, &ps->args, 3, slice_arg0[k]);
		kid[2] = static_name(ps, &ps->args, 3, slice_arg1[k]);
	}
	uint32_t cat_iid = kid[0], a0 = kid[1], a1 = kid[2];
	if (cat_iid != 0 && a0 != 0 && a1 != 0 && !ps->kt[k].ready)
		kind_tmpl_make(ps, k);
	if (name_iid != 0 && ps->kt[k].ready && ps->n_fresh == 0)
		return slice_begin_fast(x, ps, uuid_thread(t->pid, t->tid), s, name_iid, &ps->kt[k]);
	if (name == NULL) { /* cached: written by iid */
		name = "";
		name_len = 0;
	}
	unsigned char *p = packet_room(x, 160 + 2 * name_len + fresh_room(ps)), *pkt, *te;
	if (p == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, SEQ_NEEDS_INCREMENTAL_STATE);
	p = track_event_open(ps, p, &te, s->begin_ns, uuid_thread(t->pid, t->tid), TYPE_SLICE_BEGIN, name_iid, name,
			     name_len, cat_iid, slice_cat[k]);
	unsigned vf = s->kind == TK__SLICE_KERCALL ? 3 : 7; /* uint or pointer (hex) */
	p = put_num(p, a0, slice_arg0[k], vf, s->arg[0]);
	p = put_num(p, a1, slice_arg1[k], vf, s->arg[1]);
	p = w_end(p, te);
	return packet_close(x, p, pkt);
}

/* A slice begins: a function's (its address's name from the cache) or a pair's whose names
 * are known goes the fast way. */
static int pf_slice_begin(tk_export *x, const tk__thread *t, const tk__slice *s)
{
	pf_state *ps = x->fmt_state;
	unsigned k = s->kind < 3 ? s->kind : 2;
	uint32_t name_iid = 0;

	if (s->kind == TK__SLICE_FUNC && s->name == NULL) {
		uint64_t a = s->arg[0];
		const name_slot *e = &ps->addr_cache[((a >> 2) ^ (a >> 14)) & (ADDR_CACHE - 1)];
		if (e->aux && e->key == a)
			name_iid = e->iid;
	} else if (s->kind == TK__SLICE_USER) {
		name_iid = ps->pair_iid[s->pair];
	}
	if (name_iid != 0 && ps->kt[k].ready && ps->n_fresh == 0)
		return slice_begin_fast(x, ps, uuid_thread(t->pid, t->tid), s, name_iid, &ps->kt[k]);
	return slice_begin_slow(x, t, s, k);
}

/* iid of "end.<name>" for a field name (static), cached by the name's address; key is the
 * text when the iid is not known from the cache */
static uint32_t end_key(pf_state *ps, const char *fname, char key[40])
{
	uint32_t iid = arg_cached(ps, 1, fname);
	if (iid == 0)
		iid = ptr_cached(ps, fname, 4);
	if (iid != 0) {
		arg_cache_put(ps, 1, fname, iid);
		return iid;
	}
	snprintf(key, 40, "end.%.34s", fname);
	iid = use_name(ps, &ps->args, 3, key, strlen(key));
	if (iid != 0) {
		ptr_cache_put(ps, fname, 4, iid);
		arg_cache_put(ps, 1, fname, iid);
	}
	return iid;
}

static int slice_end_slow(tk_export *x, const tk__thread *t, const tk__slice *s, uint64_t end_ns,
			  const tk_kev_decoded *end, int reason);

static int pf_slice_end(tk_export *x, const tk__thread *t, const tk__slice *s, uint64_t end_ns,
			const tk_kev_decoded *end, int reason)
{
	pf_state *ps = x->fmt_state;

	/* The usual ends in one pass: a function's, or a slice's whose end event is not given
	 * (no annotation, under 64 bytes), or a pair's or kernel call's with up to three
	 * numbers, their names cached (under 128 bytes: 4 + 11 + 2 + 2 + 11 + 3 * 19). */
	uint32_t iids[3];
	int plain = end == NULL || s->kind == TK__SLICE_FUNC;
	if (reason == TK__CLOSE_END && ps->n_fresh == 0 && (plain || fast_fields(ps, end, 1, 3, iids))) {
		unsigned char *p = packet_room(x, plain ? 64 : 128), *pkt, *te;
		if (p == NULL)
			return x->failed ? TK_EIO : TK_ENOMEM;
		p = fast_open(ps, p, &pkt, &te, end_ns);
		p[0] = (unsigned char)TAG(9, WIRE_VARINT);
		p[1] = TYPE_SLICE_END;
		track_encode(ps, uuid_thread(t->pid, t->tid));
		memcpy(p + 2, ps->track_enc, sizeof(ps->track_enc));
		p += 2 + ps->track_enc_len;
		if (!plain) {
			p = fast_put_fields(p, end, iids);
			if (ps->user_end_iid[0] == 0 && user_words(end))
				ps->user_end_iid[0] = iids[0], ps->user_end_iid[1] = iids[1];
		}
		*te = (unsigned char)(p - te - 1);
		*pkt = (unsigned char)(p - pkt - 1);
		x->out_len = (size_t)((char *)p - x->out);
		return 0;
	}
	return slice_end_slow(x, t, s, end_ns, end, reason);
}

/* pf_slice_end() the general way: closed early, names to intern, fields of any kind. */
static __attribute__((noinline)) int slice_end_slow(tk_export *x, const tk__thread *t, const tk__slice *s,
						    uint64_t end_ns, const tk_kev_decoded *end, int reason)
{
	pf_state *ps = x->fmt_state;
	unsigned n_args = 0;
	uint32_t closed_iid = 0;
	char keys[TK_KEV_MAX_FIELDS][40];
	size_t room = 64;

	if (reason != TK__CLOSE_END) {
		closed_iid = static_name(ps, &ps->args, 3, "closed");
		room += 80;
	} else if (end != NULL && s->kind != TK__SLICE_FUNC) {
		/* the end's fields, as "end.<name>" like the JSON's "end" object */
		n_args = end->n_fields;
		for (unsigned i = 0; i < n_args; i++) {
			const char *fname = end->fields[i].name[0] != '\0' ? end->fields[i].name : "text";
			ps->arg_iid[i] = end_key(ps, fname, keys[i]);
			room += field_room(&end->fields[i], 40);
		}
	}
	unsigned char *p = packet_room(x, room + fresh_room(ps)), *pkt, *te;
	if (p == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, SEQ_NEEDS_INCREMENTAL_STATE);
	p = track_event_open(ps, p, &te, end_ns, uuid_thread(t->pid, t->tid), TYPE_SLICE_END, 0, NULL, 0, 0, NULL);
	if (reason == TK__CLOSE_OUTER)
		p = put_str(p, closed_iid, "closed", "by an outer end");
	else if (reason == TK__CLOSE_TRACE_END)
		p = put_str(p, closed_iid, "closed", "at the end of the trace");
	for (unsigned i = 0; i < n_args; i++)
		p = put_field(p, end, i, ps->arg_iid[i], keys[i]);
	p = w_end(p, te);
	return packet_close(x, p, pkt);
}

/* The instant's name (as the JSON export names it) into name[48]; its length. */
static size_t instant_name(char name[48], const tk_kev_decoded *d, const char *cat)
{
	if (d->event_name[0] != '\0') {
		size_t n = strlen(d->event_name); /* NUL-terminated within its 32 bytes */
		memcpy(name, d->event_name, n);
		name[n] = '\0';
		return n;
	}
	if (d->number >= 0)
		return (size_t)snprintf(name, 48, "%s %d", d->cls == 6 ? "USER" : cat != NULL ? cat : "EVENT", d->number);
	return (size_t)snprintf(name, 48, "CLASS %u EVENT %u", d->cls, d->code);
}

static int instant_slow(tk_export *x, const tk__thread *t, const tk_kev_decoded *d);

/* An instant's key in ev_cache beside its class and code: its number, and whether the
 * decoder named it (an event its decoder refused, e.g. too short, has neither name nor
 * number: "CLASS c EVENT e", whereas the same code decoded is named). Never 0. */
static inline uint64_t ev_key(const tk_kev_decoded *d)
{
	return ((uint64_t)(uint32_t)d->number + 1) | (uint64_t)(d->event_name[0] != '\0') << 40;
}

static int pf_instant(tk_export *x, const tk__thread *t, int32_t pid, int32_t tid, const tk_kev_decoded *d)
{
	pf_state *ps = x->fmt_state;
	const name_slot *e = &ps->ev_cache[((d->cls & 31) << 10) | (d->code & 1023)];
	uint32_t iids[3];

	(void)pid, (void)tid;
	if (e->key == ev_key(d) && ps->cpu_iid != 0 && ps->n_fresh == 0 &&
	    fast_fields(ps, d, 0, 3, iids)) {
		/* names cached, up to three numbers: under 128 bytes (4 + 11 + 2 + 2 + 11 + 12 +
		 * 11 + 3 * 19), written in one pass as the general way below writes them */
		unsigned char *p = packet_room(x, 128), *pkt, *te;
		if (p == NULL)
			return x->failed ? TK_EIO : TK_ENOMEM;
		p = fast_open(ps, p, &pkt, &te, d->time_ns);
		p[0] = (unsigned char)TAG(9, WIRE_VARINT);
		p[1] = TYPE_INSTANT;
		track_encode(ps, t != NULL ? uuid_thread(t->pid, t->tid) : UUID_NO_THREAD);
		memcpy(p + 2, ps->track_enc, sizeof(ps->track_enc));
		p += 2 + ps->track_enc_len;
		*p++ = (unsigned char)TAG(10, WIRE_VARINT);
		p = w_varint(p, e->iid);
		*p++ = (unsigned char)TAG(3, WIRE_VARINT);
		p = w_varint(p, e->aux);
		p = fast_annotation(p, ps->cpu_iid, 3, d->cpu);
		p = fast_put_fields(p, d, iids);
		if (ps->user_iid[0] == 0 && user_words(d))
			ps->user_iid[0] = iids[0], ps->user_iid[1] = iids[1];
		*te = (unsigned char)(p - te - 1);
		*pkt = (unsigned char)(p - pkt - 1);
		x->out_len = (size_t)((char *)p - x->out);
		return 0;
	}
	return instant_slow(x, t, d);
}

/* pf_instant() the general way: names interned or written inline, any fields. */
static __attribute__((noinline)) int instant_slow(tk_export *x, const tk__thread *t, const tk_kev_decoded *d)
{
	pf_state *ps = x->fmt_state;
	char name[48];
	const char *cat = d->cls_desc != NULL ? d->cls_desc->name : NULL;
	char cat_buf[16];
	size_t name_len = 0;
	uint32_t name_iid = 0, cat_iid, cpu_iid;
	size_t room = 128;

	/* the name is a function of class, code and number: cached by them */
	name_slot *e = &ps->ev_cache[((d->cls & 31) << 10) | (d->code & 1023)];
	uint64_t key = ev_key(d); /* never 0: 0 is a free slot */
	if (e->key == key) { /* written by iid */
		name_iid = e->iid;
		cat_iid = e->aux;
		name[0] = '\0';
		cat = "";
	} else {
		name_len = instant_name(name, d, cat);
		name_iid = use_name(ps, &ps->names, 2, name, name_len);
		room += 2 * name_len;
		if (cat == NULL) {
			snprintf(cat_buf, sizeof(cat_buf), "CLASS %u", d->cls);
			cat = cat_buf;
			cat_iid = use_name(ps, &ps->cats, 1, cat, strlen(cat));
		} else {
			cat_iid = static_name(ps, &ps->cats, 1, cat);
		}
		if (name_iid != 0 && cat_iid != 0)
			e->key = key, e->iid = name_iid, e->aux = cat_iid;
	}
	if ((cpu_iid = ps->cpu_iid) == 0)
		ps->cpu_iid = cpu_iid = static_name(ps, &ps->args, 3, "cpu");
	for (unsigned i = 0; i < d->n_fields; i++) {
		const char *fname = d->fields[i].name[0] != '\0' ? d->fields[i].name : "text";
		ps->arg_iid[i] = field_iid(ps, fname);
		room += field_room(&d->fields[i], ps->arg_iid[i] != 0 ? 0 : strlen(fname)); /* inline when 0 */
	}
	unsigned char *p = packet_room(x, room + fresh_room(ps)), *pkt, *te;
	if (p == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, SEQ_NEEDS_INCREMENTAL_STATE);
	p = track_event_open(ps, p, &te, d->time_ns, t != NULL ? uuid_thread(t->pid, t->tid) : UUID_NO_THREAD,
			     TYPE_INSTANT, name_iid, name, name_len, cat_iid, cat);
	p = put_num(p, cpu_iid, "cpu", 3, d->cpu);
	for (unsigned i = 0; i < d->n_fields; i++)
		p = put_field(p, d, i, ps->arg_iid[i], d->fields[i].name[0] != '\0' ? d->fields[i].name : "text");
	p = w_end(p, te);
	return packet_close(x, p, pkt);
}

static int pf_counter(tk_export *x, const tk__thread *t, const tk__counter *c, uint64_t ns, int64_t value)
{
	pf_state *ps = x->fmt_state;
	uint64_t uuid = uuid_counter(t->pid, c->code);
	int seen = uuid_add(&ps->tracks, uuid);
	unsigned char *p, *pkt;

	if (seen < 0)
		return tk__export_error(x, seen, "out of memory");
	if (!seen) { /* a counter track of the process */
		if ((p = packet_room(x, 128 + 2 * sizeof(c->name))) == NULL)
			return x->failed ? TK_EIO : TK_ENOMEM;
		p = packet_open(p, &pkt, 0);
		unsigned char *td = w_begin(&p, 60);
		p = w_uint(p, 1, uuid);
		p = w_name(p, 2, c->name, strlen(c->name));
		p = w_uint(p, 5, uuid_process(t->pid));
		unsigned char *cd = w_begin(&p, 8);
		p = w_end(p, cd);
		p = w_end(p, td);
		packet_close(x, p, pkt);
	}
	if ((p = packet_room(x, 64)) == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, 0);
	p = w_uint(p, 8, ns);
	unsigned char *te = w_begin(&p, 11);
	p = w_uint(p, 9, TYPE_COUNTER);
	p = w_uint(p, 11, uuid);
	p = w_int(p, 30, value);
	p = w_end(p, te);
	return packet_close(x, p, pkt);
}

/* ---- VTune CSV data (tk__format.interval, csv_sample) ----------------------------------------- */

/* Tracks of VTune CSV intervals (a lane of a thread's tasks or of frames) and counters. */
static uint64_t uuid_interval(const tk__interval *iv)
{
	return 0x1000000000000000ull | (iv->track & 0xffffffffffull) << 20 | (iv->lane & 0xfffffu);
}
static uint64_t uuid_csv_counter(uint64_t track)
{
	return 0x0800000000000000ull | (track & 0x07ffffffffffffffull);
}

/* An interval's track, described at its first use: a child of its thread's track (tasks),
 * of its process's (frames with a pid) or of none, named "tasks" or "frames" (Perfetto
 * shows the lanes of one parent and name as one track). */
static int describe_interval_track(tk_export *x, const tk__interval *iv, uint64_t uuid)
{
	pf_state *ps = x->fmt_state;
	int rc, seen = uuid_add(&ps->tracks, uuid);
	uint64_t parent = 0;

	if (seen < 0)
		return tk__export_error(x, seen, "out of memory");
	if (seen)
		return 0;
	if (iv->kind == TK__IV_TASK) {
		if ((rc = describe_thread(x, iv->pid, iv->tid, NULL, 0, 1)) != 0)
			return rc;
		parent = uuid_thread(iv->pid, iv->tid);
	} else if (iv->has_pid) {
		if ((rc = describe_process(x, iv->pid, NULL, 0, 1)) != 0)
			return rc;
		parent = uuid_process(iv->pid);
	}
	unsigned char *p = packet_room(x, 64), *pkt;
	if (p == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, 0);
	unsigned char *td = w_begin(&p, 60);
	p = w_uint(p, 1, uuid);
	p = w_cstr(p, 2, iv->kind == TK__IV_TASK ? "tasks" : "frames");
	if (parent != 0)
		p = w_uint(p, 5, parent);
	p = w_end(p, td);
	return packet_close(x, p, pkt);
}

/* A VTune CSV interval, whole at its end: SLICE_BEGIN (name, category "task" or "frame",
 * annotation "id") and SLICE_END on its lane's track. The begin is written after events
 * of later times (trace processor sorts the packets). */
static int pf_interval(tk_export *x, const tk__interval *iv)
{
	pf_state *ps = x->fmt_state;
	uint64_t uuid = uuid_interval(iv);
	const char *cat = iv->kind == TK__IV_TASK ? "task" : "frame";
	int rc;

	if ((rc = describe_interval_track(x, iv, uuid)) != 0)
		return rc;
	uint32_t name_iid = iv->name->fmt_id[0]; /* interned names keep their iid */
	if (name_iid == 0)
		name_iid = iv->name->fmt_id[0] = use_name(ps, &ps->names, 2, iv->name->s, iv->name->len);
	uint32_t cat_iid = static_name(ps, &ps->cats, 1, cat);
	uint32_t id_iid = static_name(ps, &ps->args, 3, "id");
	unsigned char *p = packet_room(x, 160 + 2 * (size_t)iv->name->len + fresh_room(ps)), *pkt, *te;
	if (p == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, SEQ_NEEDS_INCREMENTAL_STATE);
	p = track_event_open(ps, p, &te, iv->begin_ns, uuid, TYPE_SLICE_BEGIN, name_iid, iv->name->s, iv->name->len,
			     cat_iid, cat);
	p = put_num(p, id_iid, "id", 3, iv->id);
	p = w_end(p, te);
	if ((rc = packet_close(x, p, pkt)) != 0)
		return rc;
	if ((p = packet_room(x, 64)) == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, SEQ_NEEDS_INCREMENTAL_STATE);
	p = track_event_open(ps, p, &te, iv->end_ns, uuid, TYPE_SLICE_END, 0, NULL, 0, 0, NULL);
	p = w_end(p, te);
	return packet_close(x, p, pkt);
}

/* A VTune CSV counter sample on its counter's track (a child of its process's, or of none):
 * counter_value 30 for integers, double_counter_value 44 for doubles. */
static int pf_csv_sample(tk_export *x, const tk__csv_sample *c)
{
	pf_state *ps = x->fmt_state;
	uint64_t uuid = uuid_csv_counter(c->track);
	int seen = uuid_add(&ps->tracks, uuid), rc;
	unsigned char *p, *pkt;

	if (seen < 0)
		return tk__export_error(x, seen, "out of memory");
	if (!seen) {
		if (c->has_pid && (rc = describe_process(x, c->pid, NULL, 0, 1)) != 0)
			return rc;
		if ((p = packet_room(x, 64 + 2 * (size_t)c->name->len)) == NULL)
			return x->failed ? TK_EIO : TK_ENOMEM;
		p = packet_open(p, &pkt, 0);
		unsigned char *td = w_begin(&p, 60);
		p = w_uint(p, 1, uuid);
		p = w_text(p, 2, c->name->s, c->name->len, c->name->utf8);
		if (c->has_pid)
			p = w_uint(p, 5, uuid_process(c->pid));
		unsigned char *cd = w_begin(&p, 8);
		p = w_end(p, cd);
		p = w_end(p, td);
		if ((rc = packet_close(x, p, pkt)) != 0)
			return rc;
	}
	if ((p = packet_room(x, 64)) == NULL)
		return x->failed ? TK_EIO : TK_ENOMEM;
	p = packet_open(p, &pkt, 0);
	p = w_uint(p, 8, c->ns);
	unsigned char *te = w_begin(&p, 11);
	p = w_uint(p, 9, TYPE_COUNTER);
	p = w_uint(p, 11, uuid);
	if (c->is_double) {
		uint64_t bits;
		memcpy(&bits, &c->d, sizeof(bits));
		p = w_varint(p, TAG(44, 1)); /* fixed64, little-endian */
		for (int i = 0; i < 8; i++)
			*p++ = (unsigned char)(bits >> (8 * i));
	} else {
		p = w_int(p, 30, c->i);
	}
	p = w_end(p, te);
	return packet_close(x, p, pkt);
}

/* ---- the fused run (tk__format.light_run) ------------------------------------------------- */

/*
 * The packets of the fused run: a head (packet tag, its length, sequence id, needs-state
 * flags, the timestamp: w_ts()), then the TrackEvent's tag, length, type and track_uuid,
 * made once per thread (fused_thread()), then a begin's name, category and annotations (a
 * function's cached whole by address and call site: func_enc; a pair's from its kind's
 * template), nothing for a function's end, the two words of a pair's end, or an instant's
 * name, category and annotations. The same bytes as slice_begin_fast(), pf_slice_end() and
 * pf_instant() write for the same events (test_light_run_same).
 */
struct fused {
	unsigned char te[3][16]; /* by type - 1 (begin, end, instant): 0x5a, length, 0x48, type, track */
	size_t te_len;           /* of each */
};

/* The TrackEvent prefixes of thread t, whose track_uuid becomes the last one written. */
static void fused_thread(pf_state *ps, struct fused *f, const tk__thread *t)
{
	track_encode(ps, uuid_thread(t->pid, t->tid));
	for (unsigned k = 0; k < 3; k++) {
		unsigned char *p = f->te[k];
		p[0] = (unsigned char)TAG(11, WIRE_LEN);
		p[1] = 0;
		p[2] = (unsigned char)TAG(9, WIRE_VARINT);
		p[3] = (unsigned char)(k + 1); /* TYPE_SLICE_BEGIN, TYPE_SLICE_END, TYPE_INSTANT */
		memcpy(p + 4, ps->track_enc, 12);
	}
	f->te_len = 4 + ps->track_enc_len;
}

/* A packet's head at p and the TrackEvent's prefix of type k + 1; the cursor after them
 * (*te: the TrackEvent's length byte; the packet's is p + 1). */
HOT unsigned char *fused_open(pf_state *ps, const struct fused *f, unsigned char *p, uint64_t ns, unsigned k,
			      unsigned char **te)
{
	static const unsigned char head[8] = { (unsigned char)TAG(1, WIRE_LEN),     0,
					       (unsigned char)TAG(10, WIRE_VARINT), SEQ_ID,
					       (unsigned char)TAG(13, WIRE_VARINT), SEQ_NEEDS_INCREMENTAL_STATE,
					       (unsigned char)TAG(8, WIRE_VARINT),  0 };
	memcpy(p, head, 8);
	p = w_ts(ps, p + 7, ns);
	memcpy(p, f->te[k], 16);
	*te = p + 1;
	return p + f->te_len;
}

/* Closes the packet that starts at pkt and ends at p (both lengths under 128). */
HOT void fused_close(tk_export *x, unsigned char *pkt, unsigned char *te, unsigned char *p)
{
	*te = (unsigned char)(p - te - 1);
	pkt[1] = (unsigned char)(p - pkt - 2);
	x->out_len = (size_t)((char *)p - x->out);
}

/* The thread of the run as the model left it (x->last_thread) when it can take events in
 * place (1: f, *key, *lo and *hi set), else 0. */
static int fused_load(tk_export *x, pf_state *ps, struct fused *f, tk__thread **t, uint64_t *key, uint64_t *lo,
		      uint64_t *hi)
{
	*t = x->last_thread;
	/* the first event counted sets first_ns whatever it is: the model's */
	if (*t == NULL || (*t)->overflow != 0 || x->stats.events == x->stats.control)
		return 0;
	memcpy(key, &(*t)->pid, sizeof(*key));
	fused_thread(ps, f, *t);
	*lo = x->stats.first_ns;
	*hi = x->stats.last_ns;
	return 1;
}

/* An instant's bytes after the track up to its cpu's value, by name and category iid
 * (pf_state.inst_pre, by USER code). */
static void inst_pre_make(pf_state *ps, struct inst_pre *ip, uint32_t name_iid, uint32_t cat_iid)
{
	unsigned char *p = ip->b;
	*p++ = (unsigned char)TAG(10, WIRE_VARINT);
	p = w_varint(p, name_iid);
	*p++ = (unsigned char)TAG(3, WIRE_VARINT);
	p = w_varint(p, cat_iid);
	/* fast_annotation(cpu_iid, 3, cpu): its length counts the one byte of the value */
	unsigned char *a = p + 1;
	p[0] = (unsigned char)TAG(4, WIRE_LEN);
	p[2] = (unsigned char)TAG(1, WIRE_VARINT);
	p = w_varint(p + 3, ps->cpu_iid);
	*p++ = (unsigned char)TAG(3, WIRE_VARINT);
	*a = (unsigned char)(p + 1 - a - 1);
	ip->len = (uint8_t)(p - ip->b);
	ip->name_iid = name_iid;
	ip->cat_iid = cat_iid;
}

/* The two words of a USER event as its decoded fields' annotations (pointers). */
HOT unsigned char *fused_words(unsigned char *p, const uint32_t *iids, uint32_t w0, uint32_t w1)
{
	p = fast_annotation(p, iids[0], 7, w0);
	return fast_annotation(p, iids[1], 7, w1);
}

/*
 * tk__format.light_run: the model's tk__export_light_run_model() and this format's packets
 * in one loop, for the events of a run in their usual shapes: a function's entry (the
 * stack has room) and its exit (the innermost slice's), a pair's begin and its end (the
 * innermost slice's), a USER instant, each of the thread of the event before and with its
 * names interned already. Anything else (another thread, an end below the top or
 * unmatched, depth overflow, a counter, the first of a kind to intern, the first event
 * counted) goes to the model one event at a time, which sends back what must be decoded.
 * The model's counts, slices and stack; the bytes of the format's hooks.
 */
static inline __attribute__((always_inline)) int pf_run(tk_export *x, const tk__light_ev *ev,
							     const tk__slot_seg *seg, size_t n, size_t *taken,
							     const int raw)
{
	pf_state *ps = x->fmt_state;
	tk__thread *t = NULL;
	struct fused f;
	uint64_t key = 0;           /* the thread's pid and tid as the events carry them */
	int ok = 0;                 /* t can take events in place */
	uint64_t lo = 0, hi = 0;    /* first_ns, last_ns */
	uint64_t n_ev = 0, n_sl = 0, n_in = 0; /* events, slices and instants not yet counted */
	size_t i = 0;
	int rc = 0;
	uint64_t seg_key = 0;       /* raw: the segment's owner, which every slot has */
	uint64_t ns = 0;
	tk__light_ev one;           /* raw: a slot as the model takes it */
	const uint32_t *slots = NULL; /* raw: the segment's, in locals (the stores below may alias seg) */
	uint64_t msb = 0;
	unsigned cpu = 0;

	if (raw) {
		slots = seg->slots;
		msb = seg->msb;
		cpu = seg->cpu;
		memcpy(&seg_key, &seg->pid, sizeof(seg_key));
		one.owner_known = (uint32_t)seg->known;
		one.pid = seg->pid;
		one.tid = seg->tid;
	}
	if (!x->started || x->finished || x->failed || n == 0) {
		if (!raw)
			return tk__export_light_run_model(x, ev, n, taken);
		*taken = 0; /* as the model: every slot is decoded */
		return 0;
	}
	/* every event of a run clears it (pf_light_event(), or pf_event() when decoded) */
	ps->after_buffer = 0;
	ok = fused_load(x, ps, &f, &t, &key, &lo, &hi) && (!raw || (seg->known && key == seg_key));
	for (; i < n; i++) {
		const tk__light_ev *e;
		uint32_t header, w0, w1;
		unsigned cls, code, idx;
		unsigned char *p, *te, *pkt;
		tk__slice *s;

		if (raw) {
			const uint32_t *slot = slots + 4 * i;
			header = slot[0];
			if (_NTO_TRACE_GETCPU(header) != cpu) /* the next segment's */
				break;
			ns = msb | slot[1];
			w0 = slot[2];
			w1 = slot[3];
			e = NULL;
		} else {
			uint64_t ekey;
			e = &ev[i];
			header = e->header;
			ns = e->ns;
			w0 = e->w0;
			w1 = e->w1;
			memcpy(&ekey, &e->pid, sizeof(ekey));
			if (ekey != key || !e->owner_known)
				goto model;
		}
		cls = TK_KEV_CLASS(header);
		code = TK_KEV_CODE(header);
		/* near the output buffer's end, the model's way (the format's hooks flush it) */
		if (!ok || x->out_len + 144 > x->out_cap)
			goto model;
		p = (unsigned char *)x->out + x->out_len; /* room for a packet of 128 bytes */
		if (cls == 5 && code == _NTO_TRACE_SYS_FUNC_ENTER) {
			if (t->depth >= t->cap || t->depth >= TK_EXPORT_MAX_DEPTH)
				goto model;
			const char *name = x->symbols != NULL ? tk__export_func_name_at(x, t->pid, ns, w0) : NULL;
			s = &t->stack[t->depth++];
			s->kind = TK__SLICE_FUNC;
			s->pair = 0;
			s->key = w0;
			s->begin_ns = ns;
			s->arg[0] = w0;
			s->arg[1] = w1;
			s->name = name;
			s->label[0] = '\0';
			uint64_t fn = w0, site = w1, h = (fn ^ site * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
			const struct func_enc *fe = &ps->func_enc[(h >> 40) & (ADDR_CACHE - 1)];
			if (name == NULL && fe->len != 0 && fe->fn == fn && fe->site == site && ps->n_fresh == 0) {
				/* the bytes after the track as the first such begin wrote them */
				pkt = p;
				p = fused_open(ps, &f, p, ns, 0, &te);
				memcpy(p, fe->b, sizeof(fe->b));
				fused_close(x, pkt, te, p + fe->len);
			} else if ((rc = pf_slice_begin(x, t, s)) != 0) {
				goto fail;
			}
		} else if (cls == 5 && code == _NTO_TRACE_SYS_FUNC_EXIT) {
			if (t->depth == 0 || (s = &t->stack[t->depth - 1])->kind != TK__SLICE_FUNC || s->key != w0 ||
			    ps->n_fresh != 0)
				goto model;
			t->depth--;
			n_sl++;
			pkt = p;
			p = fused_open(ps, &f, p, ns < s->begin_ns ? s->begin_ns : ns, 1, &te);
			fused_close(x, pkt, te, p);
		} else if (cls != 6) {
			goto model;
		} else if ((idx = x->pair_begin[code]) != 0) {
			if (t->depth >= t->cap || t->depth >= TK_EXPORT_MAX_DEPTH)
				goto model;
			s = &t->stack[t->depth++];
			s->kind = TK__SLICE_USER;
			s->pair = (uint16_t)(idx - 1);
			s->key = idx - 1;
			s->begin_ns = ns;
			s->arg[0] = w0;
			s->arg[1] = w1;
			s->name = x->pairs[idx - 1].name;
			s->label[0] = '\0';
			uint32_t name_iid = ps->pair_iid[idx - 1];
			const struct kind_tmpl *kt = &ps->kt[TK__SLICE_USER];
			if (name_iid != 0 && kt->ready && ps->n_fresh == 0) {
				/* slice_begin_fast() of a pair */
				unsigned char *a;
				pkt = p;
				p = fused_open(ps, &f, p, ns, 0, &te);
				*p++ = (unsigned char)TAG(10, WIRE_VARINT);
				p = w_varint(p, name_iid);
				memcpy(p, kt->cat, sizeof(kt->cat));
				p += kt->n_cat;
				memcpy(p, kt->a0, sizeof(kt->a0));
				a = p + 1;
				p = w_varint(p + kt->n_a0, w0);
				*a = (unsigned char)(p - a - 1);
				memcpy(p, kt->a1, sizeof(kt->a1));
				a = p + 1;
				p = w_varint(p + kt->n_a1, w1);
				*a = (unsigned char)(p - a - 1);
				fused_close(x, pkt, te, p);
			} else if ((rc = pf_slice_begin(x, t, s)) != 0) {
				goto fail;
			}
		} else if ((idx = x->pair_end[code]) != 0) {
			if (t->depth == 0 || (s = &t->stack[t->depth - 1])->kind != TK__SLICE_USER || s->key != idx - 1 ||
			    ps->user_end_iid[0] == 0 || ps->n_fresh != 0)
				goto model;
			t->depth--;
			n_sl++;
			pkt = p;
			p = fused_open(ps, &f, p, ns < s->begin_ns ? s->begin_ns : ns, 1, &te);
			fused_close(x, pkt, te, fused_words(p, ps->user_end_iid, w0, w1));
		} else if (x->counter_of[code] == 0) {
			const name_slot *ec = &ps->ev_cache[(6u << 10) | code];
			if (ec->key != (uint64_t)code + 1 || ps->user_iid[0] == 0 || ps->cpu_iid == 0 || ps->n_fresh != 0)
				goto model;
			n_in++;
			pkt = p;
			p = fused_open(ps, &f, p, ns, 2, &te);
			struct inst_pre *ip = &ps->inst_pre[code];
			if (ip->name_iid != ec->iid || ip->cat_iid != ec->aux)
				inst_pre_make(ps, ip, ec->iid, ec->aux);
			/* name, category, the cpu annotation up to its value (one byte: cpu < 64) */
			memcpy(p, ip->b, sizeof(ip->b));
			p += ip->len;
			*p++ = (unsigned char)_NTO_TRACE_GETCPU(header);
			fused_close(x, pkt, te, fused_words(p, ps->user_iid, w0, w1));
		} else {
			goto model;
		}
		/* the model's counts of an event taken */
		n_ev++;
		if (ns > hi) /* (times mostly go forward: branches, not conditional moves) */
			hi = ns;
		else if (ns < lo)
			lo = ns;
		continue;
model:
		/* the model's own way, one event (sent back when k == 0) */
		{
			size_t k;
			x->stats.events += n_ev, x->stats.slices += n_sl, x->stats.instants += n_in;
			n_ev = n_sl = n_in = 0;
			if (ok)
				x->stats.first_ns = lo, x->stats.last_ns = hi;
			if (raw) {
				one.ns = ns;
				one.header = header;
				one.w0 = w0;
				one.w1 = w1;
				e = &one;
			}
			rc = tk__export_light_run_model(x, e, 1, &k);
			if (rc != 0 || k == 0) {
				i += k;
				ok = 0;
				goto out;
			}
		}
		ok = fused_load(x, ps, &f, &t, &key, &lo, &hi) && (!raw || (seg->known && key == seg_key));
	}
	goto out;
fail:
	/* the format failed on an event it counts first (the model's order): taken */
	n_ev++;
	lo = ns < lo ? ns : lo;
	hi = ns > hi ? ns : hi;
	i++;
out:
	x->stats.events += n_ev, x->stats.slices += n_sl, x->stats.instants += n_in;
	if (ok)
		x->stats.first_ns = lo, x->stats.last_ns = hi;
	*taken = i;
	return rc;
}

static int pf_light_run(tk_export *x, const tk__light_ev *ev, size_t n, size_t *taken)
{
	return pf_run(x, ev, NULL, n, taken, 0);
}

/* tk__format.slot_run: the same on the parser's slots (no block of tk__light_ev between). */
static int pf_slot_run(tk_export *x, const tk__slot_seg *seg, size_t *taken)
{
	return pf_run(x, NULL, seg, seg->n, taken, 1);
}

/* ---- the scan (tk__format.scan) ----------------------------------------------------------------- */

/*
 * pf_scan(): the parser's block itself, from the first slot of a run on, without the parser's
 * loop testing each slot first and without a call per run: the same events in the same
 * shapes as pf_run() takes in place (a clock in ns, the machine's byte order, no symbolizer),
 * through one CPU's stretch at a time with everything the packets need in registers.
 * A slot that is not of those shapes goes to the light path alone (slow(): pf_light_run()
 * with one event, or the model, which may flush the output, intern, switch threads), after
 * which the stretch starts again. The same bytes, counts and stacks as pf_run() (tests:
 * test_light_run_same, fuzz_export).
 */

/* What the packets of a stretch share, in registers: w_ts()'s state and the thread's
 * TrackEvent prefix (tag, length, type, track_uuid). */
typedef struct pf_regs {
	/* the last timestamp written in full and its varint, which has more than 2 bytes (one of
	 * 1 or 2 bytes is replaced by 2^63, which no time below 2^14 is taken for) */
	uint64_t ts_last, e0, e1;
	unsigned ts_len;
	unsigned te_len;
	uint64_t te0, te1;        /* the prefix, its type byte 0 */
} pf_regs;

/* w_ts()'s state for a stretch: the one given, or 2^63 for a varint of 1 or 2 bytes (none). */
static void scan_ts_reset(pf_regs *r, uint64_t last, unsigned len, const unsigned char *enc)
{
	unsigned char b[16] = { 0 };
	if (len <= 2) {
		last = 1ull << 63;
		len = (unsigned)(w_varint(b, last) - b);
	} else {
		memcpy(b, enc, len);
	}
	r->ts_last = last;
	r->ts_len = len;
	memcpy(&r->e0, b, 8);
	memcpy(&r->e1, b + 8, 8);
}

/* A packet's head, its timestamp and the TrackEvent's prefix of the given type at o; the
 * cursor after them (*te: the TrackEvent's length byte). */
HOT unsigned char *scan_open(pf_regs *r, unsigned char *o, uint64_t when, unsigned type, unsigned char **te)
{
	static const unsigned char head[8] = { (unsigned char)TAG(1, WIRE_LEN),     0,
					       (unsigned char)TAG(10, WIRE_VARINT), SEQ_ID,
					       (unsigned char)TAG(13, WIRE_VARINT), SEQ_NEEDS_INCREMENTAL_STATE,
					       (unsigned char)TAG(8, WIRE_VARINT),  0 };
	unsigned char *q = o + 7;
	memcpy(o, head, 8);
	if (((when ^ r->ts_last) >> 14) == 0) { /* same length, same high bytes */
		memcpy(q, &r->e0, 8);
		memcpy(q + 8, &r->e1, 8);
		q[0] = (unsigned char)(when | 0x80);
		q[1] = (unsigned char)(when >> 7 | 0x80);
		q += r->ts_len;
	} else {
		unsigned char *z = w_varint(q, when);
		scan_ts_reset(r, when, (unsigned)(z - q), q);
		q = z;
	}
	*te = q + 1;
	memcpy(q, &r->te0, 8);
	memcpy(q + 8, &r->te1, 8);
	q[3] = (unsigned char)type;
	return q + r->te_len;
}

/* Closes the packet that starts at o and ends at q (both lengths under 128). */
HOT unsigned char *scan_close(unsigned char *o, unsigned char *te, unsigned char *q)
{
	*te = (unsigned char)(q - te - 1);
	o[1] = (unsigned char)(q - o - 2);
	return q;
}

/* A pointer annotation's bytes up to its value (fast_annotation(iid, 7, ...)), by name iid:
 * 8 bytes, of which *n used. */
static uint64_t scan_ann(uint32_t iid, unsigned *n)
{
	unsigned char b[16] = { (unsigned char)TAG(4, WIRE_LEN), 0, (unsigned char)TAG(1, WIRE_VARINT) }, *p;
	uint64_t v;
	p = w_varint(b + 3, iid);
	*p++ = (unsigned char)TAG(7, WIRE_VARINT);
	*n = (unsigned)(p - b);
	memcpy(&v, b, 8);
	return v;
}

/* A value after its annotation's bytes a (n of them) at q; the cursor after it. */
HOT unsigned char *scan_word(unsigned char *q, uint64_t a, unsigned n, uint32_t w)
{
	memcpy(q, &a, 8);
	unsigned char *z = w_varint(q + n, w);
	q[1] = (unsigned char)(z - q - 2);
	return z;
}

/*
 * One stretch of thread t's slots from p (all of one CPU: their header's top byte), msb their
 * upper time bits. Returns where it stopped: end, a slot of another CPU (*slow_next 0), or
 * one it does not take (*slow_next 1: the light path's, or not batched: the run's end).
 * Everything a packet needs is in locals, which the byte stores cannot alias, and goes back
 * to x, ps and t at the end.
 */
static inline __attribute__((always_inline)) const uint32_t *pf_stretch(tk_export *x, pf_state *ps, tk__thread *t,
									 const uint32_t *p, const uint32_t *end,
									 uint64_t msb, int *slow_next)
{
	const uint32_t *const start = p;
	const uint8_t top = (uint8_t)(p[0] >> 24);
	unsigned char *const out = (unsigned char *)x->out;
	unsigned char *o = out + x->out_len;
	unsigned char *const o_lim = out + x->out_cap - 144; /* room for a packet of 128 bytes */
	pf_regs r;
	scan_ts_reset(&r, ps->ts_last, ps->ts_len, ps->ts_enc);
	/* fused_thread()'s prefix */
	unsigned char teb[16] = { (unsigned char)TAG(11, WIRE_LEN), 0, (unsigned char)TAG(9, WIRE_VARINT), 0 };
	track_encode(ps, uuid_thread(t->pid, t->tid));
	memcpy(teb + 4, ps->track_enc, 12);
	memcpy(&r.te0, teb, 8);
	memcpy(&r.te1, teb + 8, 8);
	r.te_len = 4 + ps->track_enc_len;
	/* the thread's stack */
	tk__slice *const stack = t->stack;
	uint32_t depth = t->depth;
	const uint32_t lim = stack == NULL ? 0 : t->cap < TK_EXPORT_MAX_DEPTH ? t->cap : TK_EXPORT_MAX_DEPTH;
	/* the annotations of a USER event's words, as an instant's and as a pair's end (only
	 * the light path learns them: 0 until it has) */
	unsigned n_u0 = 0, n_u1 = 0, n_e0 = 0, n_e1 = 0;
	const int inst_ok = ps->user_iid[0] != 0 && ps->cpu_iid != 0, end_ok = ps->user_end_iid[0] != 0;
	const uint64_t a_u0 = inst_ok ? scan_ann(ps->user_iid[0], &n_u0) : 0;
	const uint64_t a_u1 = inst_ok ? scan_ann(ps->user_iid[1], &n_u1) : 0;
	const uint64_t a_e0 = end_ok ? scan_ann(ps->user_end_iid[0], &n_e0) : 0;
	const uint64_t a_e1 = end_ok ? scan_ann(ps->user_end_iid[1], &n_e1) : 0;
	const struct kind_tmpl *const kt = &ps->kt[TK__SLICE_USER];
	const struct func_enc *const fenc = ps->func_enc;
	const uint8_t *const op = ps->scan_op;
	uint64_t lo = x->stats.first_ns, hi = x->stats.last_ns;
	uint64_t n_ends = 0, n_inst = 0; /* slices ended, instants (the model's counts; in locals:
					   * an array indexed by the kind made a memory increment an
					   * event, back to back for two entries in a row) */

	*slow_next = 0;
	for (; p < end; p += 4) {
		const uint32_t h = p[0];
		if ((uint8_t)(h >> 24) != top) /* another CPU's */
			break;
		const uint64_t ns = msb | p[1];
		const uint32_t w0 = p[2], w1 = p[3], code = h & 1023u;
		const unsigned k = op[h & 0x7fffu];
		unsigned char *q, *te;
		tk__slice *s;

		if (o > o_lim)
			goto slow;
		switch (k) {
		case TK__SCAN_ENTER: {
			uint64_t fh = ((uint64_t)w0 ^ (uint64_t)w1 * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
			const struct func_enc *fe = &fenc[(fh >> 40) & (ADDR_CACHE - 1)];
			if (depth >= lim || fe->len == 0 || fe->fn != w0 || fe->site != w1)
				goto slow;
			s = &stack[depth++];
			s->kind = TK__SLICE_FUNC;
			s->pair = 0;
			s->key = w0;
			s->begin_ns = ns;
			s->arg[0] = w0;
			s->arg[1] = w1;
			s->name = NULL;
			s->label[0] = '\0';
			/* the bytes after the track as the first such begin wrote them */
			q = scan_open(&r, o, ns, TYPE_SLICE_BEGIN, &te);
			memcpy(q, fe->b, sizeof(fe->b));
			o = scan_close(o, te, q + fe->len);
			break;
		}
		case TK__SCAN_EXIT:
			if (depth == 0 || (s = &stack[depth - 1])->kind != TK__SLICE_FUNC || s->key != w0)
				goto slow;
			depth--;
			q = scan_open(&r, o, ns < s->begin_ns ? s->begin_ns : ns, TYPE_SLICE_END, &te);
			o = scan_close(o, te, q);
			n_ends++;
			break;
		case TK__SCAN_BEGIN: { /* slice_begin_fast() of a pair */
			const unsigned pair = ps->scan_pair[code];
			const uint32_t name_iid = ps->pair_iid[pair];
			unsigned char *a;
			if (depth >= lim || name_iid == 0 || !kt->ready)
				goto slow;
			s = &stack[depth++];
			s->kind = TK__SLICE_USER;
			s->pair = (uint16_t)pair;
			s->key = pair;
			s->begin_ns = ns;
			s->arg[0] = w0;
			s->arg[1] = w1;
			s->name = x->pairs[pair].name;
			s->label[0] = '\0';
			q = scan_open(&r, o, ns, TYPE_SLICE_BEGIN, &te);
			*q++ = (unsigned char)TAG(10, WIRE_VARINT);
			q = w_varint(q, name_iid);
			memcpy(q, kt->cat, sizeof(kt->cat));
			q += kt->n_cat;
			memcpy(q, kt->a0, sizeof(kt->a0));
			a = q + 1;
			q = w_varint(q + kt->n_a0, w0);
			*a = (unsigned char)(q - a - 1);
			memcpy(q, kt->a1, sizeof(kt->a1));
			a = q + 1;
			q = w_varint(q + kt->n_a1, w1);
			*a = (unsigned char)(q - a - 1);
			o = scan_close(o, te, q);
			break;
		}
		case TK__SCAN_END:
			if (depth == 0 || (s = &stack[depth - 1])->kind != TK__SLICE_USER ||
			    s->key != ps->scan_pair[code] || !end_ok)
				goto slow;
			depth--;
			q = scan_open(&r, o, ns < s->begin_ns ? s->begin_ns : ns, TYPE_SLICE_END, &te);
			q = scan_word(q, a_e0, n_e0, w0);
			o = scan_close(o, te, scan_word(q, a_e1, n_e1, w1));
			n_ends++;
			break;
		case TK__SCAN_INSTANT: {
			const name_slot *ec = &ps->ev_cache[(6u << 10) | code];
			if (ec->key != (uint64_t)code + 1 || !inst_ok)
				goto slow;
			struct inst_pre *ip = &ps->inst_pre[code];
			if (ip->name_iid != ec->iid || ip->cat_iid != ec->aux)
				inst_pre_make(ps, ip, ec->iid, ec->aux);
			q = scan_open(&r, o, ns, TYPE_INSTANT, &te);
			/* name, category, the cpu annotation up to its value (one byte: cpu < 64) */
			memcpy(q, ip->b, sizeof(ip->b));
			q += ip->len;
			*q++ = (unsigned char)_NTO_TRACE_GETCPU(h);
			q = scan_word(q, a_u0, n_u0, w0);
			o = scan_close(o, te, scan_word(q, a_u1, n_u1, w1));
			n_inst++;
			break;
		}
		default: /* not batched, or the model's */
			goto slow;
		}
		if (ns > hi) /* (times mostly go forward: branches, not conditional moves) */
			hi = ns;
		else if (ns < lo)
			lo = ns;
		continue;
slow:
		*slow_next = 1;
		break;
	}
	x->out_len = (size_t)(o - out);
	ps->ts_last = r.ts_last;
	ps->ts_len = r.ts_len;
	memcpy(ps->ts_enc, &r.e0, 8);
	memcpy(ps->ts_enc + 8, &r.e1, 8);
	t->depth = depth;
	if (p != start) {
		x->stats.events += (uint64_t)(p - start) / 4;
		x->stats.slices += n_ends;
		x->stats.instants += n_inst;
		x->stats.first_ns = lo, x->stats.last_ns = hi;
		ps->after_buffer = 0; /* what every event does */
	}
	return p;
}

/* pf_stretch() as tk__export_scan() calls it (a stretch waits while names are to be interned). */
static const uint32_t *pf_scan_stretch(tk_export *x, tk__thread *t, const uint32_t *p, const uint32_t *end,
				       uint64_t msb, int *slow_next)
{
	pf_state *ps = x->fmt_state;
	if (ps->n_fresh != 0) { /* names to intern first: the light path's */
		*slow_next = 1;
		return p;
	}
	return pf_stretch(x, ps, t, p, end, msb, slow_next);
}

static size_t pf_scan(tk_export *x, struct traceparser_state *st, const uint32_t *slots, size_t n, int conv,
		      int (*slow)(void *, struct traceparser_state *, const uint32_t *), void *slow_ud)
{
	pf_state *ps = x->fmt_state;

	if (ps == NULL || conv || !tk__tp_clk_is_ns(st) || !x->started || x->finished || x->failed ||
	    x->symbols != NULL)
		return 0; /* the loop's runs (pf_slot_run(), pf_light_run()) */
	if (!ps->scan_ready) {
		tk__export_scan_ops(x, st, ps->scan_op, ps->scan_pair);
		ps->scan_ready = 1;
	}
	return tk__export_scan(x, st, slots, n, slow, slow_ud, pf_scan_stretch);
}

static int pf_finish(tk_export *x)
{
	for (unsigned c = 0; c < N_CPUS; c++) {
		int rc = bundle_flush(x, c);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static void pf_free(tk_export *x)
{
	pf_state *ps = x->fmt_state;
	if (ps == NULL)
		return;
	intern_free(&ps->names);
	intern_free(&ps->cats);
	intern_free(&ps->args);
	free(ps->tracks.v);
	free(ps->tids.v);
	free(ps->thr);
	free(ps->thr_idx);
	free(ps->procs);
	free(ps->ev_cache);
	free(ps->func_enc);
	free(ps->big);
	for (unsigned c = 0; c < N_CPUS; c++)
		free(ps->cpu[c].ev);
	free(ps);
	x->fmt_state = NULL;
}

const tk__format tk__export_perfetto = {
	.start = pf_start,
	.event = pf_event,
	.process_name = pf_process_name,
	.thread_name = pf_thread_name,
	.slice_begin = pf_slice_begin,
	.slice_end = pf_slice_end,
	.instant = pf_instant,
	.counter = pf_counter,
	.thread_new = pf_thread_new,
	.finish = pf_finish,
	.free = pf_free,
	.light_event = pf_light_event,
	.light_run = pf_light_run,
	.slot_run = pf_slot_run,
	.scan = pf_scan,
	.interval = pf_interval,
	.csv_sample = pf_csv_sample,
};

/* TK__EXPORT_MODEL_RUNS: the same format on the model's light path, to compare the two. */
const tk__format tk__export_perfetto_model = {
	.start = pf_start,
	.event = pf_event,
	.process_name = pf_process_name,
	.thread_name = pf_thread_name,
	.slice_begin = pf_slice_begin,
	.slice_end = pf_slice_end,
	.instant = pf_instant,
	.counter = pf_counter,
	.thread_new = pf_thread_new,
	.finish = pf_finish,
	.free = pf_free,
	.light_event = pf_light_event,
	.interval = pf_interval,
	.csv_sample = pf_csv_sample,
};
