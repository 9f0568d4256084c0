/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace-event JSON (the "JSON Object Format" of the Trace Event Format document):
 *
 *   {"traceEvents":[
 *   {"name":"process_name","ph":"M","pid":P,"tid":P,"args":{"name":"..."}},
 *   {"name":"0x401136","cat":"SYSTEM","ph":"X","ts":12.345,"dur":0.678,"pid":P,"tid":T,"args":{...}},
 *   {"name":"THRUNNING","cat":"THREAD","ph":"i","s":"t","ts":...,"pid":P,"tid":T,"args":{...}},
 *   {"name":"queue","ph":"C","ts":...,"pid":P,"args":{"value":V}}
 *   ],"displayTimeUnit":"ns","otherData":{...the export's counts...}}
 *
 * One event per line. Times are microseconds with three decimals (the nanoseconds of the
 * decoded model, written exactly, without floating point). X slices are written when they
 * close, so the file is not sorted by time: viewers sort. docs/export.md has the mapping.
 */
#include <stdlib.h>
#include <string.h>

#include "common/tk_utf8.h"
#include "export/export_internal.h"
#include "traceparser/tp_batch.h"

/* Bytes written once and copied after: a field name as a key ("name":), by the name's
 * address (the decoder's names are static); a pair's name as a string; an instant's
 * beginning ({"name":...,"cat":...,"ph":"i","s":"t","ts":) by class, code and number. */
#define KEY_CACHE 64
#define INSTANT_CACHE 1024
#define FUNC_CACHE 1024

struct key_slot {
	const char *name; /* NULL: free */
	uint32_t len;
	char enc[36];
};

struct instant_slot {
	uint32_t key;     /* class << 10 | code, + 1 (0: free) */
	int32_t number;
	uint8_t named;    /* the decoder named the event (one it refused has neither name nor number) */
	uint32_t len;
	char enc[116];
};

/* A function slice's name ("0x...") and its args up to the closing quote of call_site, by
 * address and call site. */
struct func_slot {
	uint64_t fn, site;
	uint32_t name_len, tail_len; /* tail_len 0: free */
	char name[24];
	char tail[72];
};

/* A time's microseconds but the last four digits, as written last (times advance slowly:
 * most share them with the time before). */
struct ts_cache {
	uint64_t hi;
	uint32_t len; /* 0: none */
	char enc[24];
};

/* ,"pid":P,"tid":T as written last */
struct pt_cache {
	int32_t pid, tid;
	uint32_t len; /* 0: none */
	char enc[40];
};

/* What the writers change as they write: in the state, or copied into a loop's locals
 * (json_stretch(): the byte stores cannot alias them there). */
struct json_wr {
	uint64_t n_written; /* events written: the separator goes before every one but the first */
	struct ts_cache ts;
	struct pt_cache pt;
};

typedef struct json_state {
	struct json_wr wr;
	struct key_slot keys[KEY_CACHE];
	char *pair_enc[TK_EXPORT_MAX_PAIRS]; /* a pair's name as a JSON string (NULL: not yet) */
	uint32_t pair_enc_len[TK_EXPORT_MAX_PAIRS];
	struct instant_slot *instants;       /* INSTANT_CACHE of them */
	struct func_slot *funcs;             /* FUNC_CACHE of them */
	/* the scan (json_scan()): what each USER and SYSTEM event is, by class and code, and
	 * the pair of each USER code */
	int scan_ready;
	uint8_t scan_op[32 * 1024];
	uint8_t scan_pair[1024];
} json_state;

static int sep(tk_export *x)
{
	json_state *js = x->fmt_state;
	if (tk__out_room(x, 4) != 0)
		return TK_EIO;
	if (js->wr.n_written++ > 0) {
		x->out[x->out_len++] = ',';
		x->out[x->out_len++] = '\n';
	}
	return 0;
}

/* A JSON string: quotes, backslashes and control characters escaped; bytes of invalid
 * UTF-8 as \u00XX (their Latin-1 reading), so the document is always valid. */
/* Per byte: 1 always escaped (control characters, quote, backslash), 2 escaped unless the
 * string is valid UTF-8 (bytes from 0x80). */
static const unsigned char escape_class[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

static void out_string(tk_export *x, const char *s, size_t n, int utf8)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char mask = utf8 ? 1 : 3;
	size_t i = 0;

	/* short and nothing to escape (names, most strings): copied while checked */
	if (n <= 64 && x->out_cap - x->out_len >= n + 2) {
		char *p = x->out + x->out_len;
		p[0] = '"';
		for (i = 0; i < n; i++) {
			unsigned char c = (unsigned char)s[i];
			if (escape_class[c] & mask)
				break;
			p[1 + i] = (char)c;
		}
		if (i == n) {
			p[1 + n] = '"';
			x->out_len += n + 2;
			return;
		}
		i = 0; /* something to escape: the general way below */
	}
	if (tk__out_room(x, 1) != 0)
		return;
	x->out[x->out_len++] = '"';
	while (i < n) {
		size_t run = i;
		while (run < n && !(escape_class[(unsigned char)s[run]] & mask))
			run++;
		if (run > i)
			tk__out_mem(x, s + i, run - i);
		if (run == n)
			break;
		unsigned char c = (unsigned char)s[run];
		if (tk__out_room(x, 6) != 0)
			return;
		x->out[x->out_len++] = '\\';
		if (c == '"' || c == '\\') {
			x->out[x->out_len++] = (char)c;
		} else if (c == '\n') {
			x->out[x->out_len++] = 'n';
		} else if (c == '\t') {
			x->out[x->out_len++] = 't';
		} else {
			x->out[x->out_len++] = 'u';
			x->out[x->out_len++] = '0';
			x->out[x->out_len++] = '0';
			x->out[x->out_len++] = hex[c >> 4];
			x->out[x->out_len++] = hex[c & 0xf];
		}
		i = run + 1;
	}
	if (tk__out_room(x, 1) == 0)
		x->out[x->out_len++] = '"';
}

static void out_cstr(tk_export *x, const char *s)
{
	out_string(x, s, strlen(s), 1);
}

/* A name of unknown encoding (declared by the user or the trace's header, a symbol's):
 * checked, so that invalid UTF-8 is read as Latin-1 as in the other strings. */
static void out_name(tk_export *x, const char *s)
{
	size_t n = strlen(s);
	out_string(x, s, n, tk__utf8_valid(s, n));
}

static const char dec_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				   "8081828384858687888990919293949596979899";

/* ns as microseconds: "<us>.<3 digits>" */
static inline void out_us(tk_export *x, uint64_t ns)
{
	unsigned frac = (unsigned)(ns % 1000);
	char *p = tk__fmt_u64(x->out + x->out_len, ns / 1000);
	p[0] = '.';
	p[1] = (char)('0' + frac / 100);
	p[2] = (char)('0' + frac / 10 % 10);
	p[3] = (char)('0' + frac % 10);
	x->out_len = (size_t)(p + 4 - x->out);
}

static inline void out_hex_str(tk_export *x, uint64_t v)
{
	char *p = x->out + x->out_len;
	*p = '"';
	p = tk__fmt_hex(p + 1, v);
	*p = '"';
	x->out_len = (size_t)(p + 1 - x->out);
}

/* The key cache's slot of a name's address. */
static inline size_t key_slot_of(const char *name)
{
	return (size_t)(((uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull) >> 40) & (KEY_CACHE - 1);
}

/* Writes the key of name ("name":) as out_cstr() and ':' write it, from the cache when it
 * has it (keys: NULL for none), else written and kept. Room for 96 bytes is reserved. */
static inline void out_key(tk_export *x, struct key_slot *keys, const char *name)
{
	struct key_slot *k = keys != NULL ? &keys[key_slot_of(name)] : NULL;
	if (k != NULL && k->name == name) {
		memcpy(x->out + x->out_len, k->enc, sizeof(k->enc));
		x->out_len += k->len;
		return;
	}
	size_t at = x->out_len;
	out_cstr(x, name);
	if (tk__out_room(x, 1) != 0)
		return;
	x->out[x->out_len++] = ':';
	/* kept when nothing was escaped (then nothing was flushed meanwhile either) */
	if (k != NULL && x->out_len > at && x->out_len - at <= sizeof(k->enc) && x->out_len - at == strlen(name) + 3) {
		k->name = name;
		k->len = (uint32_t)(x->out_len - at);
		memcpy(k->enc, x->out + at, k->len);
	}
}

/* The same as the loop below for up to four numbers whose keys are cached and not
 * duplicated, through a cursor of its own (the loop's stores through x->out may alias x's
 * fields, so every one reloads them): 1, or 0 with nothing written. */
static inline int json_fields_fast(tk_export *x, const struct key_slot *keys, const tk_kev_decoded *d)
{
	const struct key_slot *key[4];
	unsigned n = d->n_fields;

	if (n > 4 || keys == NULL || x->out_cap - x->out_len < 64 * 4)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		const tk_kev_field *f = &d->fields[i];
		const char *name = f->name[0] != '\0' ? f->name : "text";
		if (f->type > TK_KEV_FIELD_PTR)
			return 0;
		key[i] = &keys[key_slot_of(name)];
		if (key[i]->name != name)
			return 0;
		for (unsigned j = 0; j < i; j++) {
			const char *other = key[j]->name;
			if (other == name || (other[0] == name[0] && other[1] == name[1] && strcmp(other, name) == 0))
				return 0;
		}
	}
	char *p = x->out + x->out_len;
	for (unsigned i = 0; i < n; i++) { /* at most 1 + 36 + 24 bytes each */
		const tk_kev_field *f = &d->fields[i];
		if (i > 0)
			*p++ = ',';
		memcpy(p, key[i]->enc, sizeof(key[i]->enc));
		p += key[i]->len;
		if (f->type == TK_KEV_FIELD_INT && f->v.i < 0) {
			*p++ = '-';
			p = tk__fmt_u64(p, (uint64_t)0 - (uint64_t)f->v.i);
		} else if (f->type <= TK_KEV_FIELD_UINT) {
			p = tk__fmt_u64(p, f->v.u);
		} else {
			*p = '"';
			p = tk__fmt_hex(p + 1, f->v.u);
			*p++ = '"';
		}
	}
	x->out_len = (size_t)(p - x->out);
	return 1;
}

/* tk__json_fields() with a key cache (NULL: none). */
static void json_fields(tk_export *x, struct key_slot *keys, const tk_kev_decoded *d)
{
	if (json_fields_fast(x, keys, d))
		return;
	for (unsigned i = 0; i < d->n_fields; i++) {
		const tk_kev_field *f = &d->fields[i];
		const char *name = f->name[0] != '\0' ? f->name : "text";
		int dup = 0;

		for (unsigned j = 0; j < i; j++) {
			const char *other = d->fields[j].name[0] != '\0' ? d->fields[j].name : "text";
			if (other == name || (other[0] == name[0] && other[1] == name[1] && strcmp(other, name) == 0))
				dup = 1;
		}
		if (tk__out_room(x, 96) != 0)
			return;
		if (i > 0)
			x->out[x->out_len++] = ',';
		if (dup) {
			out_cstr(x, name);
			x->out_len--; /* reopen the key: name_<i> */
			if (tk__out_room(x, 32) != 0)
				return;
			x->out[x->out_len++] = '_';
			tk__out_u64(x, i);
			x->out[x->out_len++] = '"';
			x->out[x->out_len++] = ':';
		} else {
			out_key(x, keys, name);
			if (tk__out_room(x, 64) != 0)
				return;
		}
		switch (f->type) {
		case TK_KEV_FIELD_INT:
			tk__out_i64(x, f->v.i);
			break;
		case TK_KEV_FIELD_UINT:
			tk__out_u64(x, f->v.u);
			break;
		case TK_KEV_FIELD_HEX:
		case TK_KEV_FIELD_PTR:
			out_hex_str(x, f->v.u);
			break;
		case TK_KEV_FIELD_STR:
		case TK_KEV_FIELD_BYTES:
			out_string(x, f->str, f->len, f->utf8);
			break;
		case TK_KEV_FIELD_WORDS:
			x->out[x->out_len++] = '[';
			for (uint32_t w = 0; w < f->len; w++) {
				if (tk__out_room(x, 32) != 0)
					return;
				if (w > 0)
					x->out[x->out_len++] = ',';
				out_hex_str(x, tk_kev_field_word(d, f, w));
			}
			x->out[x->out_len++] = ']';
			break;
		default:
			TK__OUT_LIT(x, "null");
			break;
		}
	}
}

/* The fields of an event as the members of an object (without braces). Duplicate names
 * get "_<index>" appended, an unnamed string piece is "text". */
void tk__json_fields(tk_export *x, const tk_kev_decoded *d)
{
	json_fields(x, NULL, d);
}

static int json_start(tk_export *x)
{
	json_state *js = calloc(1, sizeof(*js));
	if (js == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	x->fmt_state = js;
	js->instants = calloc(INSTANT_CACHE, sizeof(*js->instants));
	js->funcs = calloc(FUNC_CACHE, sizeof(*js->funcs));
	if (js->instants == NULL || js->funcs == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	TK__OUT_LIT(x, "{\"traceEvents\":[\n");
	return x->failed ? TK_EIO : 0;
}

static int json_name(tk_export *x, const char *what, int32_t pid, int32_t tid, const char *name, size_t len,
		     int utf8)
{
	if (sep(x) != 0 || tk__out_room(x, 128) != 0)
		return TK_EIO;
	TK__OUT_LIT(x, "{\"name\":\"");
	tk__out_mem(x, what, strlen(what));
	TK__OUT_LIT(x, "\",\"ph\":\"M\",\"pid\":");
	tk__out_i64(x, pid);
	TK__OUT_LIT(x, ",\"tid\":");
	tk__out_i64(x, tid);
	TK__OUT_LIT(x, ",\"args\":{\"name\":");
	out_string(x, name, len, utf8);
	TK__OUT_LIT(x, "}}");
	return x->failed ? TK_EIO : 0;
}

static int json_process_name(tk_export *x, int32_t pid, const char *name, size_t len, int utf8)
{
	return json_name(x, "process_name", pid, pid, name, len, utf8);
}

static int json_thread_name(tk_export *x, int32_t pid, int32_t tid, const char *name, size_t len, int utf8)
{
	return json_name(x, "thread_name", pid, tid, name, len, utf8);
}

/* Writing at a pointer into room reserved before: literals, numbers. HOT: the steps of
 * every event (inlined, so that a loop's copy of the writers' state stays in registers). */
#define HOT static inline __attribute__((always_inline))
#define PUT_LIT(p, lit) (memcpy((p), (lit), sizeof(lit) - 1), (p) += sizeof(lit) - 1)

HOT char *put_us(char *p, uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned frac = (unsigned)(ns - us * 1000);
	p = tk__fmt_u64(p, us);
	p[0] = '.';
	p[1] = (char)('0' + frac / 100);
	memcpy(p + 2, dec_pairs + 2 * (frac % 100), 2);
	return p + 4;
}

/* put_us() of a duration: most are under a microsecond (no division then). */
HOT char *put_dur(char *p, uint64_t ns)
{
	if (ns >= 1000)
		return put_us(p, ns);
	unsigned frac = (unsigned)ns;
	p[0] = '0';
	p[1] = '.';
	p[2] = (char)('0' + frac / 100);
	memcpy(p + 3, dec_pairs + 2 * (frac % 100), 2);
	return p + 5;
}

static inline char *put_i32(char *p, int32_t v)
{
	if (v < 0) {
		*p++ = '-';
		return tk__fmt_u64(p, (uint64_t)0 - (uint64_t)(int64_t)v);
	}
	return tk__fmt_u64(p, (uint64_t)v);
}

/* put_us() of a point in time: the digits above the last four microsecond digits are
 * those of the last time when they are the same (room: 32 bytes). tc: the state's, or a
 * copy of it in a loop's locals (which the byte stores cannot alias). */
HOT char *put_ts(struct ts_cache *tc, char *p, uint64_t ns)
{
	uint64_t us = ns / 1000, hi = us / 10000;
	if (hi != tc->hi || tc->len == 0) {
		if (hi == 0)
			return put_us(p, ns);
		tc->hi = hi;
		tc->len = (uint32_t)(tk__fmt_u64(tc->enc, hi) - tc->enc);
	}
	unsigned lo = (unsigned)(us - hi * 10000), frac = (unsigned)(ns - us * 1000);
	memcpy(p, tc->enc, sizeof(tc->enc));
	p += tc->len;
	memcpy(p, dec_pairs + 2 * (lo / 100), 2);
	memcpy(p + 2, dec_pairs + 2 * (lo % 100), 2);
	p[4] = '.';
	p[5] = (char)('0' + frac / 100);
	memcpy(p + 6, dec_pairs + 2 * (frac % 100), 2);
	return p + 8;
}

/* ,"pid":P,"tid":T (room: 40 bytes), kept for the next event of the same thread. */
HOT char *put_pid_tid(struct pt_cache *pc, char *p, int32_t pid, int32_t tid)
{
	if (pid != pc->pid || tid != pc->tid || pc->len == 0) {
		char *q = pc->enc;
		PUT_LIT(q, ",\"pid\":");
		q = put_i32(q, pid);
		PUT_LIT(q, ",\"tid\":");
		q = put_i32(q, tid);
		pc->pid = pid;
		pc->tid = tid;
		pc->len = (uint32_t)(q - pc->enc);
	}
	memcpy(p, pc->enc, sizeof(pc->enc));
	return p + pc->len;
}

/* The name of a slice that is not a function's address: a pair's is kept (written once). */
static void out_pair_name(tk_export *x, json_state *js, const tk__slice *s)
{
	size_t at = x->out_len;
	out_name(x, s->name != NULL ? s->name : s->label);
	if (s->kind != TK__SLICE_USER || x->out_len <= at || x->failed)
		return;
	size_t n = x->out_len - at;
	char *enc = malloc(n);
	if (enc == NULL) /* written each time then */
		return;
	memcpy(enc, x->out + at, n);
	js->pair_enc[s->pair] = enc;
	js->pair_enc_len[s->pair] = (uint32_t)n;
}

/* The cached name and args of a function slice (made on a miss). */
HOT const struct func_slot *func_slot_get(json_state *js, uint64_t fn, uint64_t site)
{
	uint64_t h = (fn ^ site * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
	struct func_slot *e = &js->funcs[(h >> 40) & (FUNC_CACHE - 1)];
	if (e->tail_len == 0 || e->fn != fn || e->site != site) {
		char *p = e->name;
		*p = '"';
		p = tk__fmt_hex(p + 1, fn);
		*p++ = '"';
		e->name_len = (uint32_t)(p - e->name);
		p = e->tail;
		PUT_LIT(p, ",\"args\":{\"thisfn\":\"");
		p = tk__fmt_hex(p, fn);
		PUT_LIT(p, "\",\"call_site\":\"");
		p = tk__fmt_hex(p, site);
		*p++ = '"';
		e->tail_len = (uint32_t)(p - e->tail);
		e->fn = fn;
		e->site = site;
	}
	return e;
}

/* A slice's X event after its name, up to the end event's fields (room: 256 bytes): the
 * bytes of json_slice_end() and of the run's slices (json_run()); kind: s->kind (a
 * constant in the run), fe: a function's slot. */
static inline __attribute__((always_inline)) char *put_slice_rest(struct json_wr *w, char *p, const tk__thread *t,
								    const tk__slice *s, unsigned kind,
								    const struct func_slot *fe, uint64_t end_ns,
								    int reason)
{
	if (kind == TK__SLICE_FUNC)
		PUT_LIT(p, ",\"cat\":\"SYSTEM\",\"ph\":\"X\",\"ts\":");
	else if (kind == TK__SLICE_USER)
		PUT_LIT(p, ",\"cat\":\"USER\",\"ph\":\"X\",\"ts\":");
	else
		PUT_LIT(p, ",\"cat\":\"KERCALL\",\"ph\":\"X\",\"ts\":");
	p = put_ts(&w->ts, p, s->begin_ns);
	PUT_LIT(p, ",\"dur\":");
	p = put_dur(p, end_ns - s->begin_ns);
	p = put_pid_tid(&w->pt, p, t->pid, t->tid);
	switch (kind) {
	case TK__SLICE_FUNC:
		memcpy(p, fe->tail, sizeof(fe->tail));
		p += fe->tail_len;
		break;
	case TK__SLICE_USER:
		PUT_LIT(p, ",\"args\":{\"d0\":\"");
		p = tk__fmt_hex(p, s->arg[0]);
		PUT_LIT(p, "\",\"d1\":\"");
		p = tk__fmt_hex(p, s->arg[1]);
		*p++ = '"';
		break;
	default: /* TK__SLICE_KERCALL */
		PUT_LIT(p, ",\"args\":{\"number\":");
		p = tk__fmt_u64(p, s->arg[0]);
		PUT_LIT(p, ",\"cpu\":");
		p = tk__fmt_u64(p, s->arg[1]);
		break;
	}
	if (reason == TK__CLOSE_OUTER)
		PUT_LIT(p, ",\"closed\":\"by an outer end\"");
	else if (reason == TK__CLOSE_TRACE_END)
		PUT_LIT(p, ",\"closed\":\"at the end of the trace\"");
	return p;
}

/* The fields of a USER event of at most two words (d0, d1: the decoder's, json_fields()'s
 * bytes for them), from its words. */
HOT char *put_user_words(char *p, uint32_t w0, uint32_t w1)
{
	PUT_LIT(p, "\"d0\":\"");
	p = tk__fmt_hex(p, w0);
	PUT_LIT(p, "\",\"d1\":\"");
	p = tk__fmt_hex(p, w1);
	*p++ = '"';
	return p;
}

static int json_slice_end(tk_export *x, const tk__thread *t, const tk__slice *s, uint64_t end_ns,
			  const tk_kev_decoded *end, int reason)
{
	json_state *js = x->fmt_state;

	if (sep(x) != 0 || tk__out_room(x, 320) != 0)
		return TK_EIO;
	const struct func_slot *fe = NULL; /* a function's: name (its address) and args */
	TK__OUT_LIT(x, "{\"name\":");
	if (s->kind == TK__SLICE_FUNC) {
		fe = func_slot_get(js, s->arg[0], s->arg[1]);
		if (s->name == NULL) {
			memcpy(x->out + x->out_len, fe->name, sizeof(fe->name));
			x->out_len += fe->name_len;
		} else {
			out_pair_name(x, js, s);
		}
	} else if (s->kind == TK__SLICE_USER && js->pair_enc[s->pair] != NULL)
		tk__out_mem(x, js->pair_enc[s->pair], js->pair_enc_len[s->pair]);
	else
		out_pair_name(x, js, s);
	/* the rest up to the end event's fields: at most about 240 bytes */
	if (tk__out_room(x, 256) != 0)
		return TK_EIO;
	x->out_len = (size_t)(put_slice_rest(&js->wr, x->out + x->out_len, t, s, s->kind, fe, end_ns, reason) - x->out);
	if (reason == TK__CLOSE_END && end != NULL && (s->kind == TK__SLICE_USER || s->kind == TK__SLICE_KERCALL) &&
	    end->n_fields > 0) {
		TK__OUT_LIT(x, ",\"end\":{");
		json_fields(x, js->keys, end);
		if (tk__out_room(x, 1) == 0)
			x->out[x->out_len++] = '}';
	}
	if (tk__out_room(x, 2) == 0)
		TK__OUT_LIT(x, "}}");
	return x->failed ? TK_EIO : 0;
}

/* Keeps an instant's beginning in e when name and category need no escape (the usual:
 * the decoder's names): 1 then, else 0. */
static int instant_keep(struct instant_slot *e, uint32_t key, unsigned cls, int32_t number, int named,
			const char *name, const char *cat)
{
	size_t n = strlen(name), c = strlen(cat);
	if (42 + n + c > sizeof(e->enc))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (escape_class[(unsigned char)name[i]])
			return 0;
	for (size_t i = 0; i < c; i++)
		if (escape_class[(unsigned char)cat[i]])
			return 0;
	char *p = e->enc;
	PUT_LIT(p, "{\"name\":\"");
	memcpy(p, name, n);
	p += n;
	PUT_LIT(p, "\",\"cat\":\"");
	memcpy(p, cat, c);
	p += c;
	if (cls == 1) /* DROPPED: the whole trace lost events here */
		PUT_LIT(p, "\",\"ph\":\"i\",\"s\":\"g\",\"ts\":");
	else
		PUT_LIT(p, "\",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
	e->key = key;
	e->number = number;
	e->named = (uint8_t)named;
	e->len = (uint32_t)(p - e->enc);
	return 1;
}

static int json_instant(tk_export *x, const tk__thread *t, int32_t pid, int32_t tid, const tk_kev_decoded *d)
{
	json_state *js = x->fmt_state;
	uint32_t key = ((d->cls & 31) << 10 | (d->code & 1023)) + 1;
	struct instant_slot *e = &js->instants[(key * 0x9e3779b1u >> 20) & (INSTANT_CACHE - 1)];
	char *p;

	(void)t;
	if (e->key == key && e->number == d->number && e->named == (d->event_name[0] != '\0')) {
		/* its name and category as last time */
		if (sep(x) != 0 || tk__out_room(x, 160 + sizeof(e->enc)) != 0)
			return TK_EIO;
		memcpy(x->out + x->out_len, e->enc, sizeof(e->enc));
		p = x->out + x->out_len + e->len;
		goto rest;
	}
	char name[48];
	const char *cat = d->cls_desc != NULL ? d->cls_desc->name : "";
	char cat_buf[16];

	if (d->event_name[0] != '\0') {
		size_t n = strnlen(d->event_name, sizeof(d->event_name) - 1);
		memcpy(name, d->event_name, n);
		name[n] = '\0';
	} else if (d->number >= 0 && d->cls == 6) {
		memcpy(name, "USER ", 5);
		*tk__fmt_u64(name + 5, (uint64_t)d->number) = '\0';
	} else if (d->number >= 0)
		snprintf(name, sizeof(name), "%s %d", cat, d->number);
	else
		snprintf(name, sizeof(name), "CLASS %u EVENT %u", d->cls, d->code);
	if (cat[0] == '\0') {
		snprintf(cat_buf, sizeof(cat_buf), "CLASS %u", d->cls);
		cat = cat_buf;
	}
	if (instant_keep(e, key, d->cls, d->number, d->event_name[0] != '\0', name, cat)) {
		if (sep(x) != 0 || tk__out_room(x, 160 + sizeof(e->enc)) != 0)
			return TK_EIO;
		memcpy(x->out + x->out_len, e->enc, sizeof(e->enc));
		p = x->out + x->out_len + e->len;
		goto rest;
	}
	if (sep(x) != 0 || tk__out_room(x, 256) != 0)
		return TK_EIO;
	TK__OUT_LIT(x, "{\"name\":");
	out_cstr(x, name);
	TK__OUT_LIT(x, ",\"cat\":");
	out_cstr(x, cat);
	/* the rest up to the fields: at most about 130 bytes */
	if (tk__out_room(x, 160) != 0)
		return TK_EIO;
	p = x->out + x->out_len;
	if (d->cls == 1) /* DROPPED: the whole trace lost events here */
		PUT_LIT(p, ",\"ph\":\"i\",\"s\":\"g\",\"ts\":");
	else
		PUT_LIT(p, ",\"ph\":\"i\",\"s\":\"t\",\"ts\":");
rest:
	p = put_ts(&js->wr.ts, p, d->time_ns);
	p = put_pid_tid(&js->wr.pt, p, pid, tid);
	PUT_LIT(p, ",\"args\":{\"cpu\":");
	p = tk__fmt_u64(p, d->cpu);
	if (d->n_fields > 0)
		*p++ = ',';
	x->out_len = (size_t)(p - x->out);
	json_fields(x, js->keys, d);
	if (tk__out_room(x, 2) == 0)
		TK__OUT_LIT(x, "}}");
	return x->failed ? TK_EIO : 0;
}

static int json_counter(tk_export *x, const tk__thread *t, const tk__counter *c, uint64_t ns, int64_t value)
{
	int32_t pid = t->pid;

	if (sep(x) != 0 || tk__out_room(x, 160) != 0)
		return TK_EIO;
	TK__OUT_LIT(x, "{\"name\":");
	out_name(x, c->name);
	TK__OUT_LIT(x, ",\"ph\":\"C\",\"ts\":");
	out_us(x, ns);
	TK__OUT_LIT(x, ",\"pid\":");
	tk__out_i64(x, pid);
	TK__OUT_LIT(x, ",\"args\":{\"value\":");
	tk__out_i64(x, value);
	TK__OUT_LIT(x, "}}");
	return x->failed ? TK_EIO : 0;
}

/* A VTune CSV interval: a pair of nestable async events ("b", "e") written at its end, with
 * the id of its lane on its track (a thread's tasks, a process's frames): intervals of one
 * lane never overlap, so tasks that overlap without nesting show each in a row of their
 * own, and viewers never see events of one id cross. */
static int json_interval(tk_export *x, const tk__interval *iv)
{
	json_state *js = x->fmt_state;
	uint64_t id = iv->track << 20 | iv->lane;

	for (int e = 0; e < 2; e++) {
		if (sep(x) != 0 || tk__out_room(x, 64) != 0)
			return TK_EIO;
		TK__OUT_LIT(x, "{\"name\":");
		out_string(x, iv->name->s, iv->name->len, iv->name->utf8);
		if (tk__out_room(x, 200) != 0)
			return TK_EIO;
		char *p = x->out + x->out_len;
		if (iv->kind == TK__IV_TASK)
			PUT_LIT(p, ",\"cat\":\"task\",\"ph\":\"");
		else
			PUT_LIT(p, ",\"cat\":\"frame\",\"ph\":\"");
		*p++ = e == 0 ? 'b' : 'e';
		PUT_LIT(p, "\",\"id\":\"");
		p = tk__fmt_hex(p, id);
		PUT_LIT(p, "\",\"ts\":");
		p = put_us(p, e == 0 ? iv->begin_ns : iv->end_ns);
		p = put_pid_tid(&js->wr.pt, p, iv->pid, iv->tid);
		if (e == 0) {
			PUT_LIT(p, ",\"args\":{\"id\":");
			p = tk__fmt_u64(p, iv->id);
			*p++ = '}';
		}
		*p++ = '}';
		x->out_len = (size_t)(p - x->out);
	}
	return x->failed ? TK_EIO : 0;
}

/* A double as the shortest text that reads back the same (JSON has no NaN or infinity:
 * null then). */
static void out_double(tk_export *x, double v)
{
	char buf[40];
	if (v != v || v - v != 0) {
		TK__OUT_LIT(x, "null");
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	tk__out_mem(x, buf, strlen(buf));
}

/* A VTune CSV counter sample: a counter ("C") of its process (pid 0 when none is given). */
static int json_csv_sample(tk_export *x, const tk__csv_sample *c)
{
	if (sep(x) != 0 || tk__out_room(x, 64) != 0)
		return TK_EIO;
	TK__OUT_LIT(x, "{\"name\":");
	out_string(x, c->name->s, c->name->len, c->name->utf8);
	if (tk__out_room(x, 128) != 0)
		return TK_EIO;
	TK__OUT_LIT(x, ",\"ph\":\"C\",\"ts\":");
	out_us(x, c->ns);
	TK__OUT_LIT(x, ",\"pid\":");
	tk__out_i64(x, c->pid);
	TK__OUT_LIT(x, ",\"args\":{\"value\":");
	if (c->is_double)
		out_double(x, c->d);
	else
		tk__out_i64(x, c->i);
	TK__OUT_LIT(x, "}}");
	return x->failed ? TK_EIO : 0;
}

static void out_stat(tk_export *x, const char *name, uint64_t v, int first)
{
	if (tk__out_room(x, 64) != 0)
		return;
	if (!first)
		x->out[x->out_len++] = ',';
	out_cstr(x, name);
	x->out[x->out_len++] = ':';
	tk__out_u64(x, v);
}

static int json_finish(tk_export *x)
{
	const tk_export_stats *st = &x->stats;

	if (tk__out_room(x, 64) != 0)
		return TK_EIO;
	TK__OUT_LIT(x, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"tracekit\",\"stats\":{");
	out_stat(x, "events", st->events, 1);
	out_stat(x, "slices", st->slices, 0);
	out_stat(x, "instants", st->instants, 0);
	out_stat(x, "counters", st->counters, 0);
	out_stat(x, "names", st->names, 0);
	out_stat(x, "control", st->control, 0);
	out_stat(x, "unmatched_ends", st->unmatched_ends, 0);
	out_stat(x, "closed_by_outer", st->closed_by_outer, 0);
	out_stat(x, "open_at_end", st->open_at_end, 0);
	out_stat(x, "depth_overflow", st->depth_overflow, 0);
	out_stat(x, "unknown_owner", st->unknown_owner, 0);
	out_stat(x, "too_many_threads", st->too_many_threads, 0);
	out_stat(x, "threads", st->threads, 0);
	if (x->csv_on) { /* only then: the exports of other traces stay as they were */
		out_stat(x, "csv_intervals", st->csv_intervals, 0);
		out_stat(x, "csv_unmatched_ends", st->csv_unmatched_ends, 0);
		out_stat(x, "csv_begun_twice", st->csv_begun_twice, 0);
		out_stat(x, "csv_open_at_end", st->csv_open_at_end, 0);
		out_stat(x, "csv_unnamed", st->csv_unnamed, 0);
		out_stat(x, "csv_malformed", st->csv_malformed, 0);
	}
	if (tk__out_room(x, 8) == 0)
		TK__OUT_LIT(x, "}}}\n");
	return x->failed ? TK_EIO : 0;
}

/* Light path: function entries and exits need no decoding here (their slices are written
 * from the entry's words; an exit's fields are not written), nor do the begins of declared
 * pairs (the slice carries their words; the end's fields are written, so ends are decoded)
 * and counters (their value is the words); other user events (instants) are decoded. */
static int json_light_event(tk_export *x, unsigned cls, unsigned code, int owner_known, int32_t pid, int32_t tid)
{
	(void)owner_known, (void)pid, (void)tid;
	if (cls == 5)
		return 0;
	return code <= 1023 && (x->pair_begin[code] != 0 || x->counter_of[code] != 0) ? 0 : 1;
}

/* ---- the run (tk__format.light_run, slot_run) ------------------------------------------------ */

/*
 * USER events of at most two words are written here from their words, as their decoded
 * fields would be (d0 and d1, json_fields()'s bytes for them): instants, and the ends of
 * pairs, whose fields the slice's X event carries. The decoder names a USER instant
 * "USER <code>" in category "USER" (json_instant()). So the light path declines them
 * (json_light_event()) only to have them taken here, undecoded, where their shapes are
 * the usual ones; test_json_run_random compares the two ways on random traces.
 */

/* Room the run reserves for one event: a pair's name escaped (at most 6 bytes of 47
 * characters, quoted) and the rest of a slice (put_slice_rest()) and its end fields. */
#define RUN_ROOM 1024

/* The cached beginning of the instant of USER event code (json_instant()'s, made here). */
HOT const struct instant_slot *user_instant_slot(json_state *js, unsigned code)
{
	uint32_t key = (6u << 10 | code) + 1;
	struct instant_slot *e = &js->instants[(key * 0x9e3779b1u >> 20) & (INSTANT_CACHE - 1)];
	if (e->key != key || e->number != (int32_t)code || e->named) {
		char name[16];
		memcpy(name, "USER ", 5);
		*tk__fmt_u64(name + 5, code) = '\0';
		instant_keep(e, key, 6, (int32_t)code, 0, name, "USER"); /* (nothing to escape: kept) */
	}
	return e;
}

HOT char *put_sep(struct json_wr *w, char *p)
{
	if (w->n_written++ > 0) {
		p[0] = ',';
		p[1] = '\n';
		p += 2;
	}
	return p;
}

/* json_instant() of a USER event of at most two words (room: RUN_ROOM). w: js->wr or a
 * copy of it (json_stretch()). */
static inline __attribute__((always_inline)) char *put_user_instant(json_state *js, struct json_wr *w, char *p,
								     unsigned code, uint64_t ns, int32_t pid,
								     int32_t tid, unsigned cpu, uint32_t w0, uint32_t w1)
{
	const struct instant_slot *e = user_instant_slot(js, code);
	p = put_sep(w, p);
	memcpy(p, e->enc, sizeof(e->enc));
	p += e->len;
	p = put_ts(&w->ts, p, ns);
	p = put_pid_tid(&w->pt, p, pid, tid);
	PUT_LIT(p, ",\"args\":{\"cpu\":");
	p = tk__fmt_u64(p, cpu);
	*p++ = ',';
	p = put_user_words(p, w0, w1);
	PUT_LIT(p, "}}");
	return p;
}

/* json_slice_end() of a pair's slice s closed by its end event (words w0, w1), the pair's
 * name written before (room: RUN_ROOM). */
static inline __attribute__((always_inline)) char *put_pair_end(json_state *js, struct json_wr *w, char *p,
								 const tk__thread *t, const tk__slice *s,
								 uint64_t end_ns, uint32_t w0, uint32_t w1)
{
	p = put_sep(w, p);
	PUT_LIT(p, "{\"name\":");
	memcpy(p, js->pair_enc[s->pair], js->pair_enc_len[s->pair]);
	p += js->pair_enc_len[s->pair];
	p = put_slice_rest(w, p, t, s, TK__SLICE_USER, NULL, end_ns, TK__CLOSE_END);
	PUT_LIT(p, ",\"end\":{");
	p = put_user_words(p, w0, w1);
	PUT_LIT(p, "}}}");
	return p;
}

/* json_slice_end() of a function's slice s (named by its address) closed by its exit
 * (room: RUN_ROOM). */
static inline __attribute__((always_inline)) char *put_func_end(json_state *js, struct json_wr *w, char *p,
								 const tk__thread *t, const tk__slice *s,
								 uint64_t end_ns)
{
	const struct func_slot *fe = func_slot_get(js, s->arg[0], s->arg[1]);
	p = put_sep(w, p);
	PUT_LIT(p, "{\"name\":");
	memcpy(p, fe->name, sizeof(fe->name));
	p += fe->name_len;
	p = put_slice_rest(w, p, t, s, TK__SLICE_FUNC, fe, end_ns, TK__CLOSE_END);
	PUT_LIT(p, "}}");
	return p;
}

/*
 * An event the model's light path sent back to be decoded (json_light_event() declined it):
 * a USER instant or the end of the innermost slice's pair is taken here after all, with the
 * model's counts, stack and order (events, times, then slices or instants, then the bytes).
 * 1: taken (*rc: 0 or the error of writing, as the format's hook would return it); 0: to
 * be decoded (nothing done).
 */
static int json_take_back(tk_export *x, uint32_t header, uint64_t ns, uint32_t w0, uint32_t w1, uint32_t known,
			  int32_t pid, int32_t tid, int *rc)
{
	json_state *js = x->fmt_state;
	unsigned cls = TK_KEV_CLASS(header), code = TK_KEV_CODE(header), idx;
	tk__thread *t = x->last_thread; /* the model made the event's thread before declining it */
	tk__slice *s = NULL;

	if (cls != 6 || !known || !x->started || x->finished || x->failed || tk__export_csv_code(x, cls, code) ||
	    t == NULL || t->pid != pid || t->tid != tid || x->pair_begin[code] != 0 || x->counter_of[code] != 0)
		return 0;
	if ((idx = x->pair_end[code]) != 0 &&
	    (t->overflow != 0 || t->depth == 0 || (s = &t->stack[t->depth - 1])->kind != TK__SLICE_USER ||
	     s->key != idx - 1 || js->pair_enc[idx - 1] == NULL))
		return 0;
	x->stats.events++;
	if (x->stats.events - x->stats.control == 1 || ns < x->stats.first_ns)
		x->stats.first_ns = ns;
	if (ns > x->stats.last_ns)
		x->stats.last_ns = ns;
	if (s != NULL)
		x->stats.slices++;
	else
		x->stats.instants++;
	if (tk__out_room(x, RUN_ROOM) != 0) {
		*rc = TK_EIO;
		return 1;
	}
	char *p = x->out + x->out_len;
	if (s != NULL) {
		t->depth--;
		p = put_pair_end(js, &js->wr, p, t, s, ns < s->begin_ns ? s->begin_ns : ns, w0, w1);
	} else {
		p = put_user_instant(js, &js->wr, p, code, ns, t->pid, t->tid, _NTO_TRACE_GETCPU(header), w0, w1);
	}
	x->out_len = (size_t)(p - x->out);
	*rc = 0;
	return 1;
}

/* The thread of the run as the model left it (x->last_thread) when it can take events in
 * place (1: *t, *key, *lo and *hi set), else 0 (pf_run()'s rule). */
static int run_load(tk_export *x, tk__thread **t, uint64_t *key, uint64_t *lo, uint64_t *hi)
{
	*t = x->last_thread;
	/* the first event counted sets first_ns whatever it is: the model's */
	if (*t == NULL || (*t)->overflow != 0 || x->stats.events == x->stats.control)
		return 0;
	memcpy(key, &(*t)->pid, sizeof(*key));
	*lo = x->stats.first_ns;
	*hi = x->stats.last_ns;
	return 1;
}

/*
 * tk__format.light_run and slot_run: the model's tk__export_light_run_model() and this
 * format's bytes in one loop (export_perfetto.c's pf_run(), which this follows), for the
 * events of a run in their usual shapes: a function's entry (the stack has room) and its
 * exit (the innermost slice's, named by its address), a pair's begin and its end (the
 * innermost slice's, the pair's name written before), a USER instant, each of the thread
 * of the event before. Anything else goes to the model one event at a time; what it sends
 * back to be decoded, json_take_back() may take. The model's counts, slices and stack; the
 * bytes of json_slice_end() and json_instant().
 */
static inline __attribute__((always_inline)) int json_run(tk_export *x, const tk__light_ev *ev,
							       const tk__slot_seg *seg, size_t n, size_t *taken,
							       const int raw)
{
	json_state *js = x->fmt_state;
	tk__thread *t = NULL;
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

	memset(&one, 0, sizeof(one));
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
	ok = run_load(x, &t, &key, &lo, &hi) && (!raw || (seg->known && key == seg_key));
	for (; i < n; i++) {
		const tk__light_ev *e;
		uint32_t header, w0, w1;
		unsigned cls, code, idx;
		tk__slice *s;
		char *p;

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
		if (!ok || x->out_len + RUN_ROOM > x->out_cap)
			goto model;
		p = x->out + x->out_len;
		if (cls == 5 && code == _NTO_TRACE_SYS_FUNC_ENTER) {
			if (t->depth >= t->cap || t->depth >= TK_EXPORT_MAX_DEPTH)
				goto model;
			s = &t->stack[t->depth++];
			s->kind = TK__SLICE_FUNC;
			s->pair = 0;
			s->key = w0;
			s->begin_ns = ns;
			s->arg[0] = w0;
			s->arg[1] = w1;
			s->name = x->symbols != NULL ? tk__export_func_name_at(x, t->pid, ns, w0) : NULL;
			s->label[0] = '\0';
		} else if (cls == 5 && code == _NTO_TRACE_SYS_FUNC_EXIT) {
			if (t->depth == 0 || (s = &t->stack[t->depth - 1])->kind != TK__SLICE_FUNC || s->key != w0 ||
			    s->name != NULL)
				goto model;
			t->depth--;
			n_sl++;
			p = put_func_end(js, &js->wr, p, t, s, ns < s->begin_ns ? s->begin_ns : ns);
			x->out_len = (size_t)(p - x->out);
		} else if (cls != 6 || tk__export_csv_code(x, cls, code)) {
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
		} else if ((idx = x->pair_end[code]) != 0) {
			if (t->depth == 0 || (s = &t->stack[t->depth - 1])->kind != TK__SLICE_USER || s->key != idx - 1 ||
			    js->pair_enc[idx - 1] == NULL)
				goto model;
			t->depth--;
			n_sl++;
			p = put_pair_end(js, &js->wr, p, t, s, ns < s->begin_ns ? s->begin_ns : ns, w0, w1);
			x->out_len = (size_t)(p - x->out);
		} else if (x->counter_of[code] == 0) {
			n_in++;
			p = put_user_instant(js, &js->wr, p, code, ns, t->pid, t->tid, _NTO_TRACE_GETCPU(header), w0, w1);
			x->out_len = (size_t)(p - x->out);
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
		/* the model's own way, one event; one it sends back may be taken here after all */
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
			if (rc == 0 && k == 0 &&
			    json_take_back(x, e->header, e->ns, e->w0, e->w1, e->owner_known, e->pid, e->tid, &rc))
				k = 1;
			if (rc != 0 || k == 0) {
				i += k;
				ok = 0;
				goto out;
			}
		}
		ok = run_load(x, &t, &key, &lo, &hi) && (!raw || (seg->known && key == seg_key));
	}
out:
	x->stats.events += n_ev, x->stats.slices += n_sl, x->stats.instants += n_in;
	if (ok)
		x->stats.first_ns = lo, x->stats.last_ns = hi;
	*taken = i;
	return rc;
}

static int json_light_run(tk_export *x, const tk__light_ev *ev, size_t n, size_t *taken)
{
	return json_run(x, ev, NULL, n, taken, 0);
}

static int json_slot_run(tk_export *x, const tk__slot_seg *seg, size_t *taken)
{
	return json_run(x, NULL, seg, seg->n, taken, 1);
}

/* ---- the scan (tk__format.scan) ----------------------------------------------------------------- */

/*
 * json_scan(): the parser's block itself from the first slot of a run on (export_perfetto.c's
 * pf_scan(), which this follows), without the parser's loop testing each slot first and
 * without a call per run: the events json_run() takes in place, in the same shapes (a clock
 * in ns, the machine's byte order, no symbolizer), one CPU's stretch at a time with the
 * writers' state (json_wr), the cursor and the thread's stack depth in locals. A slot not
 * of those shapes goes to the light path alone (slow(): json_light_run() with one event),
 * after which the stretch starts again. The same bytes, counts and stacks as json_run()
 * (test_json_run_random, fuzz_export).
 */

/*
 * One stretch of thread t's slots from p (all of one CPU: their header's top byte), msb their
 * upper time bits. Returns where it stopped: end, a slot of another CPU (*slow_next 0), or
 * one it does not take (*slow_next 1: the light path's, or not batched: the run's end).
 */
static inline __attribute__((always_inline)) const uint32_t *json_stretch(tk_export *x, json_state *js,
									   tk__thread *t, const uint32_t *p,
									   const uint32_t *end, uint64_t msb,
									   int *slow_next)
{
	const uint32_t *const start = p;
	const uint8_t top = (uint8_t)(p[0] >> 24);
	char *const out = x->out;
	char *o = out + x->out_len;
	char *const o_lim = out + x->out_cap - RUN_ROOM;
	struct json_wr w = js->wr;
	tk__slice *const stack = t->stack;
	uint32_t depth = t->depth;
	const uint32_t lim = stack == NULL ? 0 : t->cap < TK_EXPORT_MAX_DEPTH ? t->cap : TK_EXPORT_MAX_DEPTH;
	const uint8_t *const op = js->scan_op;
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
		tk__slice *s;

		if (o > o_lim)
			goto slow;
		switch (k) {
		case TK__SCAN_ENTER:
			if (depth >= lim)
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
			break;
		case TK__SCAN_EXIT:
			if (depth == 0 || (s = &stack[depth - 1])->kind != TK__SLICE_FUNC || s->key != w0)
				goto slow;
			depth--;
			o = put_func_end(js, &w, o, t, s, ns < s->begin_ns ? s->begin_ns : ns);
			n_ends++;
			break;
		case TK__SCAN_BEGIN: {
			const unsigned pair = js->scan_pair[code];
			if (depth >= lim)
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
			break;
		}
		case TK__SCAN_END:
			if (depth == 0 || (s = &stack[depth - 1])->kind != TK__SLICE_USER ||
			    s->key != js->scan_pair[code] || js->pair_enc[s->pair] == NULL)
				goto slow;
			depth--;
			o = put_pair_end(js, &w, o, t, s, ns < s->begin_ns ? s->begin_ns : ns, w0, w1);
			n_ends++;
			break;
		case TK__SCAN_INSTANT:
			o = put_user_instant(js, &w, o, code, ns, t->pid, t->tid, _NTO_TRACE_GETCPU(h), w0, w1);
			n_inst++;
			break;
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
	js->wr = w;
	t->depth = depth;
	if (p != start) {
		x->stats.events += (uint64_t)(p - start) / 4;
		x->stats.slices += n_ends;
		x->stats.instants += n_inst;
		x->stats.first_ns = lo, x->stats.last_ns = hi;
	}
	return p;
}

/* json_stretch() as tk__export_scan() calls it. */
static const uint32_t *json_scan_stretch(tk_export *x, tk__thread *t, const uint32_t *p, const uint32_t *end,
					 uint64_t msb, int *slow_next)
{
	json_state *js = x->fmt_state;
	return json_stretch(x, js, t, p, end, msb, slow_next);
}

static size_t json_scan(tk_export *x, struct traceparser_state *st, const uint32_t *slots, size_t n, int conv,
			int (*slow)(void *, struct traceparser_state *, const uint32_t *), void *slow_ud)
{
	json_state *js = x->fmt_state;

	if (js == NULL || conv || !tk__tp_clk_is_ns(st) || !x->started || x->finished || x->failed ||
	    x->symbols != NULL)
		return 0; /* the loop's runs (json_slot_run(), json_light_run()) */
	if (!js->scan_ready) {
		tk__export_scan_ops(x, st, js->scan_op, js->scan_pair);
		js->scan_ready = 1;
	}
	return tk__export_scan(x, st, slots, n, slow, slow_ud, json_scan_stretch);
}

static void json_free(tk_export *x)
{
	json_state *js = x->fmt_state;
	if (js == NULL)
		return;
	for (unsigned i = 0; i < TK_EXPORT_MAX_PAIRS; i++)
		free(js->pair_enc[i]);
	free(js->instants);
	free(js->funcs);
	free(js);
	x->fmt_state = NULL;
}

const tk__format tk__export_json = {
	.start = json_start,
	.process_name = json_process_name,
	.thread_name = json_thread_name,
	.slice_begin = NULL,
	.slice_end = json_slice_end,
	.instant = json_instant,
	.counter = json_counter,
	.finish = json_finish,
	.free = json_free,
	.light_event = json_light_event,
	.light_run = json_light_run,
	.slot_run = json_slot_run,
	.scan = json_scan,
	.interval = json_interval,
	.csv_sample = json_csv_sample,
};

/* The same without its run (json_run()): every USER instant and pair end decoded, the
 * reference its run is compared with (tests). */
const tk__format tk__export_json_model = {
	.start = json_start,
	.process_name = json_process_name,
	.thread_name = json_thread_name,
	.slice_begin = NULL,
	.slice_end = json_slice_end,
	.instant = json_instant,
	.counter = json_counter,
	.finish = json_finish,
	.free = json_free,
	.light_event = json_light_event,
	.interval = json_interval,
	.csv_sample = json_csv_sample,
};
