/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's native trace format: a protobuf `Trace` (field 1: repeated TracePacket), written
 * with a small encoder of our own. The field numbers are those of Perfetto's published
 * .proto definitions (protos/perfetto/trace/...); tests/perfetto_trace.proto lists every one
 * used here, and docs/export.md the mapping.
 *
 *   TracePacket   timestamp 8, trusted_packet_sequence_id 10, track_event 11,
 *                 interned_data 12, sequence_flags 13, track_descriptor 60
 *   TrackDescriptor  uuid 1, name 2, process 3, thread 4, parent_uuid 5, counter 8
 *   ProcessDescriptor pid 1, process_name 6;  ThreadDescriptor pid 1, tid 2, thread_name 5
 *   TrackEvent    category_iids 3, debug_annotations 4, type 9, name_iid 10, track_uuid 11,
 *                 categories 22, name 23, counter_value 30
 *   DebugAnnotation  name_iid 1, uint_value 3, int_value 4, string_value 6,
 *                 pointer_value 7, name 10
 *   InternedData  event_categories 1, event_names 2, debug_annotation_names 3
 *                 (EventCategory / EventName / DebugAnnotationName: iid 1, name 2)
 *
 * Everything is one packet sequence (id 1). The first packet clears the incremental state;
 * packets that use interned names say they need it, and carry the names they intern first.
 * Nested message lengths are written as 4-byte varints (redundant encodings are valid
 * protobuf) and patched when the message ends, so each packet is built in one pass.
 */
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"

#define SEQ_ID 1
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2
#define TYPE_SLICE_BEGIN 1
#define TYPE_SLICE_END 2
#define TYPE_INSTANT 3
#define TYPE_COUNTER 4

#define WIRE_VARINT 0
#define WIRE_LEN 2

/* Track uuids: the "no known thread" track, processes, threads, counters. */
#define UUID_NO_THREAD 1u
static uint64_t uuid_process(int32_t pid)
{
	return 0x8000000000000000ull | (uint32_t)pid;
}
static uint64_t uuid_thread(int32_t pid, int32_t tid)
{
	return 0x4000000000000000ull | ((uint64_t)((uint32_t)pid & 0x3fffffffu) << 32) | (uint32_t)tid;
}
static uint64_t uuid_counter(int32_t pid, uint32_t code)
{
	return 0x2000000000000000ull | ((uint64_t)(uint32_t)pid << 10) | code;
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

/* ---- a set of uuids (tracks described) ------------------------------------------------------ */

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

/* ---- the packet being built ----------------------------------------------------------------- */

typedef struct pf_state {
	unsigned char *p; /* the packet */
	size_t len, cap;
	int oom;
	intern_tab names, cats, args;
	uuid_set tracks;
	/* interned entries the current packet introduces */
	struct newent {
		uint8_t kind; /* 1 category, 2 name, 3 annotation name */
		uint32_t iid;
		const intern_tab *tab; /* the text: tab->arena + off (the arena may move meanwhile) */
		uint32_t off, len;
	} fresh[TK_KEV_MAX_FIELDS + 4];
	unsigned n_fresh;
	uint32_t arg_iid[TK_KEV_MAX_FIELDS + 4];
	/* iids of static strings (field and category names) by address: no hashing of the text */
	struct {
		const char *p;
		uint32_t iid;
		uint8_t kind;
	} ptr_cache[512];
	char scratch[64];
} pf_state;

static void pb_reserve(pf_state *ps, size_t n)
{
	if (ps->len + n <= ps->cap || ps->oom)
		return;
	size_t cap = ps->cap == 0 ? 4096 : ps->cap;
	while (cap < ps->len + n)
		cap *= 2;
	unsigned char *p = realloc(ps->p, cap);
	if (p == NULL) {
		ps->oom = 1;
		return;
	}
	ps->p = p;
	ps->cap = cap;
}

static inline void pb_varint(pf_state *ps, uint64_t v)
{
	if (ps->cap - ps->len < 10) {
		pb_reserve(ps, 10);
		if (ps->oom)
			return;
	}
	unsigned char *p = ps->p + ps->len;
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	ps->len = (size_t)(p - ps->p);
}

static inline void pb_uint(pf_state *ps, unsigned field, uint64_t v)
{
	pb_varint(ps, (uint64_t)field << 3 | WIRE_VARINT);
	pb_varint(ps, v);
}

static void pb_int(pf_state *ps, unsigned field, int64_t v)
{
	pb_uint(ps, field, (uint64_t)v); /* int32/int64: two's complement, 10 bytes if negative */
}

static void pb_bytes(pf_state *ps, unsigned field, const void *s, size_t n)
{
	pb_varint(ps, (uint64_t)field << 3 | WIRE_LEN);
	pb_varint(ps, n);
	pb_reserve(ps, n);
	if (ps->oom)
		return;
	memcpy(ps->p + ps->len, s, n);
	ps->len += n;
}

/* Text as a protobuf string: valid UTF-8 as is, other bytes read as Latin-1. */
static void pb_text(pf_state *ps, unsigned field, const char *s, size_t n, int utf8)
{
	if (utf8) {
		pb_bytes(ps, field, s, n);
		return;
	}
	size_t extra = 0;
	for (size_t i = 0; i < n; i++)
		extra += (unsigned char)s[i] >= 0x80;
	pb_varint(ps, (uint64_t)field << 3 | WIRE_LEN);
	pb_varint(ps, n + extra);
	pb_reserve(ps, n + extra);
	if (ps->oom)
		return;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80) {
			ps->p[ps->len++] = c;
		} else {
			ps->p[ps->len++] = (unsigned char)(0xc0 | c >> 6);
			ps->p[ps->len++] = (unsigned char)(0x80 | (c & 0x3f));
		}
	}
}

static void pb_cstr(pf_state *ps, unsigned field, const char *s)
{
	pb_bytes(ps, field, s, strlen(s));
}

/* Opens a nested message: tag and a 4-byte length patched by pb_end(). */
static size_t pb_begin(pf_state *ps, unsigned field)
{
	pb_varint(ps, (uint64_t)field << 3 | WIRE_LEN);
	pb_reserve(ps, 4);
	if (ps->oom)
		return 0;
	size_t at = ps->len;
	ps->len += 4;
	return at;
}

static void pb_end(pf_state *ps, size_t at)
{
	if (ps->oom)
		return;
	size_t n = ps->len - at - 4;
	ps->p[at] = (unsigned char)(0x80 | (n & 0x7f));
	ps->p[at + 1] = (unsigned char)(0x80 | ((n >> 7) & 0x7f));
	ps->p[at + 2] = (unsigned char)(0x80 | ((n >> 14) & 0x7f));
	ps->p[at + 3] = (unsigned char)((n >> 21) & 0x7f);
}

static void packet_begin(pf_state *ps, unsigned flags)
{
	ps->len = 0;
	ps->n_fresh = 0;
	pb_uint(ps, 10, SEQ_ID);
	if (flags != 0)
		pb_uint(ps, 13, flags);
}

/* Trace.packet (field 1) around the packet, into the output. */
static int packet_end(tk_export *x, pf_state *ps)
{
	if (ps->oom || ps->len >= (1u << 28))
		return tk__export_error(x, TK_ENOMEM, "out of memory building a Perfetto packet");
	if (tk__out_room(x, 16) != 0)
		return TK_EIO;
	x->out[x->out_len++] = 0x0a;
	uint64_t n = ps->len;
	while (n >= 0x80) {
		x->out[x->out_len++] = (char)(n | 0x80);
		n >>= 7;
	}
	x->out[x->out_len++] = (char)n;
	tk__out_mem(x, ps->p, ps->len);
	return x->failed ? TK_EIO : 0;
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

/* InternedData with the entries this packet introduces (before the event using them). */
static void put_interned(pf_state *ps)
{
	if (ps->n_fresh == 0)
		return;
	size_t idata = pb_begin(ps, 12);
	for (unsigned i = 0; i < ps->n_fresh; i++) {
		const struct newent *e = &ps->fresh[i];
		size_t m = pb_begin(ps, e->kind); /* event_categories 1, event_names 2, debug_annotation_names 3 */
		pb_uint(ps, 1, e->iid);
		pb_bytes(ps, 2, e->tab->arena + e->off, e->len);
		pb_end(ps, m);
	}
	pb_end(ps, idata);
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
	packet_begin(ps, 0);
	size_t td = pb_begin(ps, 60);
	pb_uint(ps, 1, uuid_process(pid));
	size_t pd = pb_begin(ps, 3);
	pb_int(ps, 1, pid);
	if (name != NULL)
		pb_text(ps, 6, name, len, utf8);
	pb_end(ps, pd);
	pb_end(ps, td);
	return packet_end(x, ps);
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
	packet_begin(ps, 0);
	size_t td = pb_begin(ps, 60);
	pb_uint(ps, 1, uuid_thread(pid, tid));
	pb_uint(ps, 5, uuid_process(pid));
	size_t th = pb_begin(ps, 4);
	pb_int(ps, 1, pid);
	pb_int(ps, 2, tid);
	if (name != NULL)
		pb_text(ps, 5, name, len, utf8);
	pb_end(ps, th);
	pb_end(ps, td);
	return packet_end(x, ps);
}

static int pf_start(tk_export *x)
{
	pf_state *ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	x->fmt_state = ps;
	/* the first packet clears the sequence's incremental state and names the track of
	 * events without a known thread */
	packet_begin(ps, SEQ_INCREMENTAL_STATE_CLEARED);
	size_t td = pb_begin(ps, 60);
	pb_uint(ps, 1, UUID_NO_THREAD);
	pb_cstr(ps, 2, "events without a known thread");
	pb_end(ps, td);
	return packet_end(x, ps);
}

static int pf_process_name(tk_export *x, int32_t pid, const char *name, size_t len, int utf8)
{
	return describe_process(x, pid, name, len, utf8);
}

static int pf_thread_name(tk_export *x, int32_t pid, int32_t tid, const char *name, size_t len, int utf8)
{
	return describe_thread(x, pid, tid, name, len, utf8);
}

static int pf_thread_new(tk_export *x, const tk__thread *t)
{
	return describe_thread(x, t->pid, t->tid, NULL, 0, 1);
}

/* ---- events ------------------------------------------------------------------------------------ */

/* The iid of a string that stays at its address for the whole export (field names of the
 * decoder's tables, class names, literals): cached by address. */
static uint32_t static_name(pf_state *ps, intern_tab *t, uint8_t kind, const char *s)
{
	size_t h = (((uintptr_t)s >> 3) ^ kind) & 511;
	if (ps->ptr_cache[h].p == s && ps->ptr_cache[h].kind == kind)
		return ps->ptr_cache[h].iid;
	uint32_t iid = use_name(ps, t, kind, s, strlen(s));
	if (iid != 0) {
		ps->ptr_cache[h].p = s;
		ps->ptr_cache[h].iid = iid;
		ps->ptr_cache[h].kind = kind;
	}
	return iid;
}

/* The interned ids of an event's name and category (0: write them inline). */
static void intern_event(pf_state *ps, const char *name, size_t name_len, const char *cat, int cat_static,
			 uint32_t *name_iid, uint32_t *cat_iid)
{
	*name_iid = use_name(ps, &ps->names, 2, name, name_len);
	*cat_iid = cat_static ? static_name(ps, &ps->cats, 1, cat) : use_name(ps, &ps->cats, 1, cat, strlen(cat));
}

/* Annotation of decoded field i: name interned as iid, or inline_name when iid is 0. */
static void put_field(pf_state *ps, const tk_kev_decoded *d, unsigned i, uint32_t iid, const char *inline_name)
{
	const tk_kev_field *f = &d->fields[i];
	size_t a = pb_begin(ps, 4);

	if (iid != 0)
		pb_uint(ps, 1, iid);
	else
		pb_cstr(ps, 10, inline_name);
	switch (f->type) {
	case TK_KEV_FIELD_INT:
		pb_int(ps, 4, f->v.i);
		break;
	case TK_KEV_FIELD_UINT:
		pb_uint(ps, 3, f->v.u);
		break;
	case TK_KEV_FIELD_HEX:
	case TK_KEV_FIELD_PTR:
		pb_uint(ps, 7, f->v.u);
		break;
	case TK_KEV_FIELD_STR:
	case TK_KEV_FIELD_BYTES:
		pb_text(ps, 6, f->str, f->len, f->utf8);
		break;
	case TK_KEV_FIELD_WORDS: {
		/* the words as text: "0x1 0x2 ..." */
		size_t at = pb_begin(ps, 6);
		for (uint32_t w = 0; w < f->len && !ps->oom; w++) {
			int n = snprintf(ps->scratch, sizeof(ps->scratch), w > 0 ? " 0x%x" : "0x%x",
					 (unsigned)tk_kev_field_word(d, f, w));
			pb_reserve(ps, (size_t)n);
			if (ps->oom)
				break;
			memcpy(ps->p + ps->len, ps->scratch, (size_t)n);
			ps->len += (size_t)n;
		}
		pb_end(ps, at);
		break;
	}
	default:
		pb_cstr(ps, 6, "");
		break;
	}
	pb_end(ps, a);
}

/* An annotation with an unsigned or pointer value and an interned name. */
static void put_num(pf_state *ps, uint32_t iid, const char *name, unsigned value_field, uint64_t v)
{
	size_t a = pb_begin(ps, 4);
	if (iid != 0)
		pb_uint(ps, 1, iid);
	else
		pb_cstr(ps, 10, name);
	pb_uint(ps, value_field, v);
	pb_end(ps, a);
}

static void put_str(pf_state *ps, uint32_t iid, const char *name, const char *v)
{
	size_t a = pb_begin(ps, 4);
	if (iid != 0)
		pb_uint(ps, 1, iid);
	else
		pb_cstr(ps, 10, name);
	pb_cstr(ps, 6, v);
	pb_end(ps, a);
}

static uint32_t arg_name(pf_state *ps, const char *s)
{
	return use_name(ps, &ps->args, 3, s, strlen(s));
}


/* The event's header: packet fields, interned data, the TrackEvent opened. */
static size_t track_event_open(pf_state *ps, uint64_t ns, uint64_t track, unsigned type, uint32_t name_iid,
			       const char *name, size_t name_len, uint32_t cat_iid, const char *cat)
{
	put_interned(ps);
	pb_uint(ps, 8, ns);
	size_t te = pb_begin(ps, 11);
	pb_uint(ps, 9, type);
	pb_uint(ps, 11, track);
	if (name != NULL) {
		if (name_iid != 0)
			pb_uint(ps, 10, name_iid);
		else
			pb_bytes(ps, 23, name, name_len);
	}
	if (cat != NULL) {
		if (cat_iid != 0)
			pb_uint(ps, 3, cat_iid);
		else
			pb_cstr(ps, 22, cat);
	}
	return te;
}

static const char *const slice_cat[] = { "SYSTEM", "USER", "KERCALL" };

/* "0x<hex>" of v into buf (at least 19 bytes) */
static const char *hex_name(char *buf, uint64_t v)
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
	return buf;
}

static const char *slice_name(char buf[32], const tk__slice *s)
{
	if (s->kind == TK__SLICE_FUNC && s->name == NULL)
		return hex_name(buf, s->arg[0]);
	return s->name != NULL ? s->name : s->label;
}

static int pf_slice_begin(tk_export *x, const tk__thread *t, const tk__slice *s)
{
	pf_state *ps = x->fmt_state;
	uint32_t name_iid, cat_iid, a0, a1;
	char buf[32];
	const char *name = slice_name(buf, s);
	size_t name_len = strlen(name);

	packet_begin(ps, SEQ_NEEDS_INCREMENTAL_STATE);
	intern_event(ps, name, name_len, slice_cat[s->kind], 1, &name_iid, &cat_iid);
	const char *n0 = s->kind == TK__SLICE_FUNC ? "thisfn" : s->kind == TK__SLICE_USER ? "d0" : "number";
	const char *n1 = s->kind == TK__SLICE_FUNC ? "call_site" : s->kind == TK__SLICE_USER ? "d1" : "cpu";
	a0 = static_name(ps, &ps->args, 3, n0);
	a1 = static_name(ps, &ps->args, 3, n1);
	size_t te = track_event_open(ps, s->begin_ns, uuid_thread(t->pid, t->tid), TYPE_SLICE_BEGIN, name_iid, name,
				     name_len, cat_iid, slice_cat[s->kind]);
	unsigned vf = s->kind == TK__SLICE_KERCALL ? 3 : 7; /* uint or pointer (hex) */
	put_num(ps, a0, n0, vf, s->arg[0]);
	put_num(ps, a1, n1, vf, s->arg[1]);
	pb_end(ps, te);
	return packet_end(x, ps);
}

static int pf_slice_end(tk_export *x, const tk__thread *t, const tk__slice *s, uint64_t end_ns,
			const tk_kev_decoded *end, int reason)
{
	pf_state *ps = x->fmt_state;
	unsigned n_args = 0;
	uint32_t closed_iid = 0;
	char keys[TK_KEV_MAX_FIELDS][40];

	packet_begin(ps, SEQ_NEEDS_INCREMENTAL_STATE);
	if (reason != TK__CLOSE_END) {
		closed_iid = static_name(ps, &ps->args, 3, "closed");
	} else if (end != NULL && s->kind != TK__SLICE_FUNC) {
		/* the end's fields, as "end.<name>" like the JSON's "end" object */
		n_args = end->n_fields;
		for (unsigned i = 0; i < n_args; i++) {
			const char *fname = end->fields[i].name[0] != '\0' ? end->fields[i].name : "text";
			snprintf(keys[i], sizeof(keys[i]), "end.%.34s", fname);
			ps->arg_iid[i] = arg_name(ps, keys[i]);
		}
	}
	size_t te = track_event_open(ps, end_ns, uuid_thread(t->pid, t->tid), TYPE_SLICE_END, 0, NULL, 0, 0, NULL);
	if (reason == TK__CLOSE_OUTER)
		put_str(ps, closed_iid, "closed", "by an outer end");
	else if (reason == TK__CLOSE_TRACE_END)
		put_str(ps, closed_iid, "closed", "at the end of the trace");
	for (unsigned i = 0; i < n_args; i++)
		put_field(ps, end, i, ps->arg_iid[i], keys[i]);
	pb_end(ps, te);
	return packet_end(x, ps);
}

static int pf_instant(tk_export *x, const tk__thread *t, int32_t pid, int32_t tid, const tk_kev_decoded *d)
{
	pf_state *ps = x->fmt_state;
	char name[48];
	const char *cat = d->cls_desc != NULL ? d->cls_desc->name : NULL;
	char cat_buf[16];
	uint32_t name_iid, cat_iid, cpu_iid;

	(void)pid, (void)tid;
	if (d->event_name[0] != '\0')
		memcpy(name, d->event_name, sizeof(d->event_name)); /* NUL-terminated, 32 bytes */
	else if (d->cls == 6 && d->number >= 0 && d->number < 1024) {
		char *p = name + 5, tmp[8];
		int n = 0, v = d->number;
		memcpy(name, "USER ", 5);
		do {
			tmp[n++] = (char)('0' + v % 10);
			v /= 10;
		} while (v != 0);
		while (n > 0)
			*p++ = tmp[--n];
		*p = '\0';
	} else if (d->number >= 0)
		snprintf(name, sizeof(name), "%s %d", d->cls == 6 ? "USER" : cat != NULL ? cat : "EVENT", d->number);
	else
		snprintf(name, sizeof(name), "CLASS %u EVENT %u", d->cls, d->code);
	if (cat == NULL) {
		snprintf(cat_buf, sizeof(cat_buf), "CLASS %u", d->cls);
		cat = cat_buf;
	}
	packet_begin(ps, SEQ_NEEDS_INCREMENTAL_STATE);
	intern_event(ps, name, strlen(name), cat, cat != cat_buf, &name_iid, &cat_iid);
	cpu_iid = static_name(ps, &ps->args, 3, "cpu");
	for (unsigned i = 0; i < d->n_fields; i++)
		ps->arg_iid[i] = static_name(ps, &ps->args, 3, d->fields[i].name[0] != '\0' ? d->fields[i].name : "text");
	size_t te = track_event_open(ps, d->time_ns, t != NULL ? uuid_thread(t->pid, t->tid) : UUID_NO_THREAD,
				     TYPE_INSTANT, name_iid, name, strlen(name), cat_iid, cat);
	put_num(ps, cpu_iid, "cpu", 3, d->cpu);
	for (unsigned i = 0; i < d->n_fields; i++)
		put_field(ps, d, i, ps->arg_iid[i], d->fields[i].name[0] != '\0' ? d->fields[i].name : "text");
	pb_end(ps, te);
	return packet_end(x, ps);
}

static int pf_counter(tk_export *x, const tk__thread *t, const tk__counter *c, uint64_t ns, int64_t value)
{
	pf_state *ps = x->fmt_state;
	uint64_t uuid = uuid_counter(t->pid, c->code);
	int seen = uuid_add(&ps->tracks, uuid);

	if (seen < 0)
		return tk__export_error(x, seen, "out of memory");
	if (!seen) { /* a counter track of the process */
		packet_begin(ps, 0);
		size_t td = pb_begin(ps, 60);
		pb_uint(ps, 1, uuid);
		pb_cstr(ps, 2, c->name);
		pb_uint(ps, 5, uuid_process(t->pid));
		size_t cd = pb_begin(ps, 8);
		pb_end(ps, cd);
		pb_end(ps, td);
		int rc = packet_end(x, ps);
		if (rc != 0)
			return rc;
	}
	packet_begin(ps, 0);
	pb_uint(ps, 8, ns);
	size_t te = pb_begin(ps, 11);
	pb_uint(ps, 9, TYPE_COUNTER);
	pb_uint(ps, 11, uuid);
	pb_int(ps, 30, value);
	pb_end(ps, te);
	return packet_end(x, ps);
}

static int pf_finish(tk_export *x)
{
	(void)x;
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
	free(ps->p);
	free(ps);
	x->fmt_state = NULL;
}

const tk__format tk__export_perfetto = {
	.start = pf_start,
	.process_name = pf_process_name,
	.thread_name = pf_thread_name,
	.slice_begin = pf_slice_begin,
	.slice_end = pf_slice_end,
	.instant = pf_instant,
	.counter = pf_counter,
	.thread_new = pf_thread_new,
	.finish = pf_finish,
	.free = pf_free,
};
