/* SPDX-License-Identifier: MIT */
/*
 * The format-independent half of the exporters: which events open and close slices, which
 * are names, counters or instants, per thread, streaming. Each thread has a stack of its
 * open slices (nothing else is kept), so the slices handed to a format always nest: an end
 * that matches a slice below the top closes the ones above it first (closed_by_outer), an
 * end that matches nothing is dropped (unmatched_ends). docs/export.md, "Slices".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"
#include "tracekit/symbols.h"

#define OUT_CAP (1u << 20)

int tk__export_error(tk_export *x, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->errmsg, sizeof(x->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

int tk__export_flush(tk_export *x)
{
	if (x->failed)
		return TK_EIO;
	if (x->stream == NULL) { /* a format that writes no stream uses the buffer as scratch */
		x->failed = 1;
		return tk__export_error(x, TK_ETOOBIG, "an event's fields exceed %u bytes", OUT_CAP);
	}
	if (x->out_len > 0 && fwrite(x->out, 1, x->out_len, x->stream) != x->out_len) {
		x->failed = 1;
		x->out_len = 0;
		return tk__export_error(x, TK_EIO, "writing: %s", strerror(errno));
	}
	x->out_len = 0;
	return 0;
}

int tk__export_create(tk_export **out, const tk__format *format, tk_export_format fmt, FILE *stream)
{
	tk_export *x = calloc(1, sizeof(*x));
	*out = NULL;
	if (x == NULL)
		return TK_ENOMEM;
	x->out = malloc(OUT_CAP);
	x->threads_cap = 64;
	x->threads = calloc(x->threads_cap, sizeof(*x->threads));
	if (x->out == NULL || x->threads == NULL) {
		free(x->out);
		free(x->threads);
		free(x);
		return TK_ENOMEM;
	}
	x->out_cap = OUT_CAP;
	x->stream = stream;
	x->format = fmt;
	x->fmt = format;
	*out = x;
	return 0;
}

int tk_export_new(tk_export **out, tk_export_format fmt, FILE *stream)
{
	if (out == NULL)
		return TK_EINVAL;
	*out = NULL;
	if (stream == NULL || fmt < TK_EXPORT_CHROME_JSON || fmt > TK_EXPORT_STATS_JSON)
		return TK_EINVAL;
	return tk__export_create(out,
				 fmt == TK_EXPORT_PERFETTO      ? &tk__export_perfetto
				 : fmt == TK_EXPORT_CHROME_JSON ? &tk__export_json
								: &tk__export_stats,
				 fmt, stream);
}

void tk_export_free(tk_export *x)
{
	if (x == NULL)
		return;
	if (x->fmt->free != NULL)
		x->fmt->free(x);
	tk__export_free_symbols(x);
	tk__export_csv_free(x);
	for (size_t i = 0; i < x->threads_cap; i++)
		free(x->threads[i].stack);
	free(x->threads);
	free(x->out);
	free(x);
}

const tk_export_stats *tk_export_get_stats(const tk_export *x)
{
	return x != NULL ? &x->stats : NULL;
}

const char *tk_export_errmsg(const tk_export *x)
{
	return x != NULL ? x->errmsg : "";
}

/* ---- declarations ------------------------------------------------------------------------ */

static int code_taken(const tk_export *x, unsigned code)
{
	return x->pair_begin[code] != 0 || x->pair_end[code] != 0 || x->counter_of[code] != 0;
}

static void copy_name(char *dst, size_t cap, const char *name, const char *prefix, unsigned code)
{
	if (name != NULL && name[0] != '\0')
		snprintf(dst, cap, "%s", name);
	else
		snprintf(dst, cap, "%s %u", prefix, code);
}

int tk_export_add_pair(tk_export *x, unsigned begin_code, unsigned end_code, const char *name)
{
	if (x == NULL || begin_code > 1023 || end_code > 1023 || begin_code == end_code)
		return TK_EINVAL;
	if (x->started)
		return tk__export_error(x, TK_ESTATE, "pairs must be declared before the first event");
	unsigned p = x->pair_begin[begin_code];
	if (p != 0 && x->pairs[p - 1].end_code == end_code) { /* the same pair again: new name */
		copy_name(x->pairs[p - 1].name, sizeof(x->pairs[p - 1].name), name, "USER", begin_code);
		return 0;
	}
	if (code_taken(x, begin_code) || code_taken(x, end_code))
		return tk__export_error(x, TK_EINVAL, "user event %u or %u is already declared", begin_code,
					end_code);
	if (x->n_pairs == TK_EXPORT_MAX_PAIRS)
		return tk__export_error(x, TK_ETOOBIG, "more than %d user pairs", TK_EXPORT_MAX_PAIRS);
	tk__pair *pr = &x->pairs[x->n_pairs++];
	pr->begin_code = begin_code;
	pr->end_code = end_code;
	copy_name(pr->name, sizeof(pr->name), name, "USER", begin_code);
	x->pair_begin[begin_code] = (uint16_t)x->n_pairs;
	x->pair_end[end_code] = (uint16_t)x->n_pairs;
	return 0;
}

int tk_export_add_counter(tk_export *x, unsigned code, const char *name)
{
	if (x == NULL || code > 1023)
		return TK_EINVAL;
	if (x->started)
		return tk__export_error(x, TK_ESTATE, "counters must be declared before the first event");
	unsigned c = x->counter_of[code];
	if (c != 0) {
		copy_name(x->counters[c - 1].name, sizeof(x->counters[c - 1].name), name, "USER", code);
		return 0;
	}
	if (code_taken(x, code))
		return tk__export_error(x, TK_EINVAL, "user event %u is already declared", code);
	if (x->n_counters == TK_EXPORT_MAX_PAIRS)
		return tk__export_error(x, TK_ETOOBIG, "more than %d user counters", TK_EXPORT_MAX_PAIRS);
	tk__counter *ct = &x->counters[x->n_counters++];
	ct->code = code;
	copy_name(ct->name, sizeof(ct->name), name, "USER", code);
	x->counter_of[code] = (uint16_t)x->n_counters;
	return 0;
}

int tk_export_csv_data(tk_export *x, int on)
{
	if (x == NULL)
		return TK_EINVAL;
	if (x->started)
		return tk__export_error(x, TK_ESTATE, "the VTune CSV data must be asked for before the first event");
	x->csv_on = on != 0;
	return 0;
}

void tk__export_reset_declarations(tk_export *x)
{
	x->n_pairs = x->n_counters = 0;
	memset(x->pair_begin, 0, sizeof(x->pair_begin));
	memset(x->pair_end, 0, sizeof(x->pair_end));
	memset(x->counter_of, 0, sizeof(x->counter_of));
}

static int parse_code(const char **p, unsigned *code)
{
	char *end;
	errno = 0;
	if (**p < '0' || **p > '9')
		return -1;
	unsigned long v = strtoul(*p, &end, 0);
	if (errno != 0 || end == *p || v > 1023)
		return -1;
	*code = (unsigned)v;
	*p = end;
	return 0;
}

int tk_export_add_spec(tk_export *x, const char *spec, int counters)
{
	return tk__export_add_spec(x, spec, counters, 0);
}

int tk__export_add_spec(tk_export *x, const char *spec, int counters, int lenient)
{
	if (x == NULL || spec == NULL)
		return TK_EINVAL;
	const char *p = spec;
	while (*p != '\0') {
		const char *item = p;
		unsigned a, b = 0;
		char name[48] = "";
		int rc;

		if (parse_code(&p, &a) != 0 || (!counters && (*p++ != ':' || parse_code(&p, &b) != 0)))
			goto bad;
		if (*p == '=') {
			size_t n = strcspn(++p, ",");
			if (n == 0 || n >= sizeof(name))
				goto bad;
			memcpy(name, p, n);
			name[n] = '\0';
			p += n;
		}
		if (*p != ',' && *p != '\0')
			goto bad;
		/* a trace's own items never rename what the caller declared (the options win) */
		if (lenient && (code_taken(x, a) || (!counters && code_taken(x, b)))) {
			if (*p == ',')
				p++;
			continue;
		}
		rc = counters ? tk_export_add_counter(x, a, name) : tk_export_add_pair(x, a, b, name);
		if (rc != 0 && lenient) {
			x->errmsg[0] = '\0';
			rc = 0;
		}
		if (rc != 0) {
			if (rc == TK_EINVAL && x->errmsg[0] == '\0')
				tk__export_error(x, rc, "bad user %s '%.*s'", counters ? "counter" : "pair",
						 (int)strcspn(item, ","), item);
			return rc;
		}
		if (*p == ',')
			p++;
		continue;
bad:
		if (lenient) {
			p += strcspn(p, ",");
			if (*p == ',')
				p++;
			continue;
		}
		return tk__export_error(x, TK_EINVAL, "bad user %s '%.*s' (expected %s)", counters ? "counter" : "pair",
					(int)strcspn(item, ","), item,
					counters ? "CODE[=NAME]" : "BEGIN:END[=NAME], codes 0-1023");
	}
	return 0;
}

/* ---- threads ------------------------------------------------------------------------------ */

static size_t thread_hash(int32_t pid, int32_t tid, size_t mask)
{
	uint64_t k = ((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid;
	k *= 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 32) & mask;
}

static int threads_grow(tk_export *x)
{
	size_t cap = x->threads_cap * 2;
	tk__thread *t = calloc(cap, sizeof(*t));
	if (t == NULL)
		return TK_ENOMEM;
	for (size_t i = 0; i < x->threads_cap; i++) {
		if (!x->threads[i].used)
			continue;
		size_t h = thread_hash(x->threads[i].pid, x->threads[i].tid, cap - 1);
		while (t[h].used)
			h = (h + 1) & (cap - 1);
		t[h] = x->threads[i];
	}
	free(x->threads);
	x->threads = t;
	x->threads_cap = cap;
	x->last_thread = NULL; /* it moved */
	return 0;
}

/* The thread (created on first sight), or NULL past TK_EXPORT_MAX_THREADS / out of memory. */
static tk__thread *thread_get(tk_export *x, int32_t pid, int32_t tid)
{
	size_t mask = x->threads_cap - 1, h = thread_hash(pid, tid, mask);

	while (x->threads[h].used) {
		if (x->threads[h].pid == pid && x->threads[h].tid == tid)
			return &x->threads[h];
		h = (h + 1) & mask;
	}
	if (x->n_threads >= TK_EXPORT_MAX_THREADS)
		return NULL;
	if ((x->n_threads + 1) * 2 > x->threads_cap) {
		if (threads_grow(x) != 0)
			return NULL;
		return thread_get(x, pid, tid);
	}
	x->threads[h].used = 1;
	x->threads[h].pid = pid;
	x->threads[h].tid = tid;
	x->n_threads++;
	x->stats.threads++;
	return &x->threads[h];
}

/* ---- slices ------------------------------------------------------------------------------- */

static int slice_push(tk_export *x, tk__thread *t, const tk__slice *s)
{
	if (t->depth == TK_EXPORT_MAX_DEPTH || t->overflow > 0) {
		t->overflow++;
		x->stats.depth_overflow++;
		return 0;
	}
	if (t->depth == t->cap) {
		uint32_t cap = t->cap == 0 ? 16 : t->cap * 2;
		tk__slice *st = realloc(t->stack, (size_t)cap * sizeof(*st));
		if (st == NULL)
			return tk__export_error(x, TK_ENOMEM, "out of memory for open slices");
		t->stack = st;
		t->cap = cap;
	}
	t->stack[t->depth++] = *s;
	return x->fmt->slice_begin != NULL ? x->fmt->slice_begin(x, t, s) : 0;
}

static int slice_close(tk_export *x, tk__thread *t, uint64_t ns, const tk_kev_decoded *end, int reason)
{
	tk__slice *s = &t->stack[--t->depth];
	x->stats.slices++;
	if (reason == TK__CLOSE_OUTER)
		x->stats.closed_by_outer++;
	else if (reason == TK__CLOSE_TRACE_END)
		x->stats.open_at_end++;
	return x->fmt->slice_end(x, t, s, ns < s->begin_ns ? s->begin_ns : ns, end, reason);
}

static int slice_end(tk_export *x, tk__thread *t, unsigned kind, uint64_t key, uint64_t ns, const tk_kev_decoded *d)
{
	if (t->overflow > 0) { /* ends the innermost of the begins that were not kept */
		t->overflow--;
		return 0;
	}
	for (uint32_t i = t->depth; i-- > 0;) {
		if (t->stack[i].kind != kind || t->stack[i].key != key)
			continue;
		while (t->depth > i + 1) {
			int rc = slice_close(x, t, ns, NULL, TK__CLOSE_OUTER);
			if (rc != 0)
				return rc;
		}
		return slice_close(x, t, ns, d, TK__CLOSE_END);
	}
	x->stats.unmatched_ends++;
	return 0;
}

/* The field called name, looked for first at index i (where the decoder puts it). */
static inline const tk_kev_field *field_at(const tk_kev_decoded *d, unsigned i, const char *name)
{
	if (i < d->n_fields && d->fields[i].name[0] == name[0] && strcmp(d->fields[i].name, name) == 0)
		return &d->fields[i];
	return tk_kev_field_find(d, name);
}

static inline uint64_t field_value(const tk_kev_field *f)
{
	return f != NULL && f->type != TK_KEV_FIELD_NONE && f->type < TK_KEV_FIELD_STR ? f->v.u : 0;
}

static uint64_t field_u(const tk_kev_decoded *d, unsigned i, const char *name)
{
	return field_value(field_at(d, i, name));
}

static int instant(tk_export *x, const tk__thread *t, int32_t pid, int32_t tid, const tk_kev_decoded *d)
{
	x->stats.instants++;
	return x->fmt->instant(x, t, pid, tid, d);
}

/* Process and thread names: the name events become metadata, nothing else. */
static int name_event(tk_export *x, const tk_kev_decoded *d, int thread)
{
	const tk_kev_field *f = tk_kev_field_find(d, "name");
	if (f == NULL || f->type != TK_KEV_FIELD_STR)
		return instant(x, NULL, 0, 0, d);
	int32_t pid = (int32_t)field_u(d, thread ? 0 : 1, "pid");
	x->stats.names++;
	if (thread)
		return x->fmt->thread_name(x, pid, (int32_t)field_u(d, 1, "tid"), f->str, f->len, f->utf8);
	return x->fmt->process_name(x, pid, f->str, f->len, f->utf8);
}

/* Slices of a known thread, or an instant. */
static int thread_event(tk_export *x, tk__thread *t, const tk_kev_decoded *d)
{
	tk__slice s;
	unsigned idx;

	/* s is filled (from zero) only where a slice opens */
	switch (d->cls) {
	case 2: /* kernel calls: entry n, exit 128 + n, interrupted 256 + n (QNX); Linux system
		 * calls: exit by bit 7 whatever n (tk__export_kercall_entry()) */
		if (d->number < 0)
			break;
		if (tk__export_kercall_entry(d)) {
			memset(&s, 0, sizeof(s));
			s.begin_ns = d->time_ns;
			s.kind = TK__SLICE_KERCALL;
			s.key = (uint64_t)d->number;
			s.arg[0] = (uint64_t)d->number;
			s.arg[1] = d->cpu;
			if (d->event_name[0] != '\0') {
				size_t n = strnlen(d->event_name, sizeof(s.label) - 1); /* (snprintf: a tenth of the event) */
				memcpy(s.label, d->event_name, n);
				s.label[n] = '\0';
			} else
				snprintf(s.label, sizeof(s.label), "KERCALL %d", d->number);
			return slice_push(x, t, &s);
		}
		return slice_end(x, t, TK__SLICE_KERCALL, (uint64_t)d->number, d->time_ns, d);
	case 5:
		if (d->code == _NTO_TRACE_SYS_FUNC_ENTER || d->code == _NTO_TRACE_SYS_FUNC_EXIT) {
			const tk_kev_field *fn = field_at(d, 0, "thisfn");
			if (fn == NULL)
				break;
			if (d->code == _NTO_TRACE_SYS_FUNC_EXIT)
				return slice_end(x, t, TK__SLICE_FUNC, field_value(fn), d->time_ns, d);
			memset(&s, 0, sizeof(s));
			s.begin_ns = d->time_ns;
			s.kind = TK__SLICE_FUNC;
			s.key = field_value(fn);
			s.arg[0] = s.key;
			s.arg[1] = field_u(d, 1, "call_site");
			s.name = x->symbols != NULL ? tk__export_func_name(x, d, s.key) : NULL;
			return slice_push(x, t, &s);
		}
		break;
	case 6:
		if (d->code > 1023)
			break;
		if ((idx = x->pair_begin[d->code]) != 0) {
			memset(&s, 0, sizeof(s));
			s.begin_ns = d->time_ns;
			s.kind = TK__SLICE_USER;
			s.pair = (uint16_t)(idx - 1);
			s.key = idx - 1;
			s.arg[0] = field_u(d, 0, "d0");
			s.arg[1] = field_u(d, 1, "d1");
			s.name = x->pairs[idx - 1].name;
			return slice_push(x, t, &s);
		}
		if ((idx = x->pair_end[d->code]) != 0)
			return slice_end(x, t, TK__SLICE_USER, idx - 1, d->time_ns, d);
		if ((idx = x->counter_of[d->code]) != 0) {
			uint64_t v = (field_u(d, 1, "d1") << 32) | (field_u(d, 0, "d0") & 0xffffffffu);
			x->stats.counters++;
			return x->fmt->counter(x, t, &x->counters[idx - 1], d->time_ns, (int64_t)v);
		}
		break;
	default:
		break;
	}
	return instant(x, t, t->pid, t->tid, d);
}

int tk_export_event(tk_export *x, const tk_kev_decoded *d)
{
	int rc;

	if (x == NULL || d == NULL || x->finished)
		return TK_EINVAL;
	if (x->failed)
		return TK_EIO;
	if (!x->started) {
		x->started = 1;
		/* the declarations are final now: USER 1000-1005 declared keep that meaning */
		if (x->csv_on && !tk__export_csv_codes_free(x))
			x->csv_on = 0;
		if ((rc = x->fmt->start(x)) != 0)
			return rc;
	}
	x->stats.events++;
	if (x->symbols != NULL && d->cls == 5 && tk_symbols_event(x->symbols, d) < 0)
		return tk__export_error(x, TK_ENOMEM, "out of memory for symbols");
	if (x->fmt->event != NULL && (rc = x->fmt->event(x, d)) != 0)
		return rc;
	if (d->cls == 1 && d->code != _TRACE_CONTROL_DROPPED) {
		x->stats.control++;
		return 0;
	}
	if (d->cls == 1) { /* DROPPED: how many the recorder lost there */
		const tk_kev_field *f = tk_kev_field_find(d, "events");
		if (f != NULL && f->type < TK_KEV_FIELD_STR)
			x->stats.lost_events += f->v.u;
	}
	if (x->stats.events - x->stats.control == 1 || d->time_ns < x->stats.first_ns)
		x->stats.first_ns = d->time_ns;
	if (d->time_ns > x->stats.last_ns)
		x->stats.last_ns = d->time_ns;
	if (d->cls == 4 && d->code == _TRACE_PR_TH_CREATE_P_NAME)
		return name_event(x, d, 0);
	if (d->cls == 4 && d->code == _TRACE_PR_TH_NAME_T)
		return name_event(x, d, 1);
	/* VTune CSV data: its own pid/tid, whoever wrote it (export_vtune.c) */
	if (tk__export_csv_code(x, d->cls, d->code))
		return tk__export_csv_event(x, d);
	if (!(d->flags & TK_KEV_DEC_OWNER_KNOWN)) {
		x->stats.unknown_owner++;
		return instant(x, NULL, 0, 0, d);
	}
	size_t n_before = x->n_threads;
	tk__thread *t = x->last_thread;
	if (t == NULL || t->pid != d->pid || t->tid != d->tid)
		t = thread_get(x, d->pid, d->tid);
	x->last_thread = t;
	if (t != NULL && x->n_threads != n_before && x->fmt->thread_new != NULL &&
	    (rc = x->fmt->thread_new(x, t)) != 0)
		return rc;
	if (t == NULL) {
		x->stats.too_many_threads++;
		return instant(x, NULL, d->pid, d->tid, d);
	}
	return thread_event(x, t, d);
}

/*
 * The light path: what tk_export_event() does with a decoded FUNC_ENTER/EXIT (two words) or
 * USER event (at most two words), for a format with light_event(), from the raw words. The
 * same counts, slices and owners; only the end event's fields are not handed on (NULL), nor
 * an instant's or a counter's event (NULL): a format whose instant() or counter() needs
 * them declines such events in light_event().
 */
int tk__export_light(tk_export *x, unsigned header, uint32_t w0, uint32_t w1, unsigned len, uint64_t ns,
		     int owner_known, int32_t pid, int32_t tid)
{
	/* a run of one (whose words past len are 0, as the decoder reads them); a function
	 * entry or exit of other than two words is decoded */
	tk__light_ev ev = { ns, header, w0, w1, (uint32_t)owner_known, pid, tid };
	size_t taken;
	int rc;

	if (len > 2 || (TK_KEV_CLASS(header) == 5 && len != 2))
		return 1;
	rc = tk__export_light_run(x, &ev, 1, &taken);
	return rc != 0 ? rc : taken == 1 ? 0 : 1;
}

/* The model's light path (inlined in both entries below: no call more per run for the
 * formats without a run of their own). */
static inline __attribute__((always_inline)) int model_light_run(tk_export *x, const tk__light_ev *ev, size_t n,
							    size_t *taken)
{
	const tk__format *fmt = x->fmt;
	tk__thread *t = x->last_thread;
	size_t i = 0;
	int rc = 0;

	if (fmt->light_event == NULL || !x->started || x->finished || x->failed)
		goto out;
	for (; i < n; i++) {
		const tk__light_ev *e = &ev[i];
		unsigned cls = TK_KEV_CLASS(e->header), code = TK_KEV_CODE(e->header), idx;
		uint64_t ns = e->ns;

		if (cls == 5 ? code - _NTO_TRACE_SYS_FUNC_ENTER > 1u : cls != 6)
			break;
		if (!e->owner_known) /* an instant with every field: decoded */
			break;
		if (tk__export_csv_code(x, cls, code)) /* VTune CSV data: decoded */
			break;
		if (t == NULL || t->pid != e->pid || t->tid != e->tid) {
			size_t n_before = x->n_threads;
			if ((t = thread_get(x, e->pid, e->tid)) == NULL)
				break;
			x->last_thread = t;
			if (x->n_threads != n_before && fmt->thread_new != NULL && (rc = fmt->thread_new(x, t)) != 0)
				break;
		}
		if ((rc = fmt->light_event(x, cls, code, 1, e->pid, e->tid)) != 0) {
			if (rc == 1)
				rc = 0;
			break;
		}
		x->stats.events++;
		if (x->stats.events - x->stats.control == 1 || ns < x->stats.first_ns)
			x->stats.first_ns = ns;
		if (ns > x->stats.last_ns)
			x->stats.last_ns = ns;
		if (cls == 5) {
			if (code == _NTO_TRACE_SYS_FUNC_EXIT) {
				/* the usual end: the innermost slice's */
				if (t->overflow == 0 && t->depth > 0 && t->stack[t->depth - 1].kind == TK__SLICE_FUNC &&
				    t->stack[t->depth - 1].key == e->w0)
					rc = slice_close(x, t, ns, NULL, TK__CLOSE_END);
				else
					rc = slice_end(x, t, TK__SLICE_FUNC, e->w0, ns, NULL);
			} else if (t->depth < t->cap && t->depth < TK_EXPORT_MAX_DEPTH && t->overflow == 0) {
				/* a slice opened in place (slice_push() when the stack has room) */
				tk__slice *s = &t->stack[t->depth++];
				s->kind = TK__SLICE_FUNC;
				s->pair = 0;
				s->key = e->w0;
				s->begin_ns = ns;
				s->arg[0] = e->w0;
				s->arg[1] = e->w1;
				s->name = x->symbols != NULL ? tk__export_func_name_at(x, e->pid, ns, e->w0) : NULL;
				s->label[0] = '\0';
				rc = fmt->slice_begin != NULL ? fmt->slice_begin(x, t, s) : 0;
			} else {
				tk__slice s;
				memset(&s, 0, sizeof(s));
				s.begin_ns = ns;
				s.kind = TK__SLICE_FUNC;
				s.key = e->w0;
				s.arg[0] = e->w0;
				s.arg[1] = e->w1;
				s.name = x->symbols != NULL ? tk__export_func_name_at(x, e->pid, ns, e->w0) : NULL;
				rc = slice_push(x, t, &s);
			}
		} else if ((idx = x->pair_begin[code]) != 0) {
			tk__slice s;
			memset(&s, 0, sizeof(s));
			s.begin_ns = ns;
			s.kind = TK__SLICE_USER;
			s.pair = (uint16_t)(idx - 1);
			s.key = idx - 1;
			s.arg[0] = e->w0;
			s.arg[1] = e->w1;
			s.name = x->pairs[idx - 1].name;
			rc = slice_push(x, t, &s);
		} else if ((idx = x->pair_end[code]) != 0) {
			rc = slice_end(x, t, TK__SLICE_USER, idx - 1, ns, NULL);
		} else if ((idx = x->counter_of[code]) != 0) {
			x->stats.counters++;
			rc = fmt->counter(x, t, &x->counters[idx - 1], ns, (int64_t)(((uint64_t)e->w1 << 32) | e->w0));
		} else {
			x->stats.instants++;
			rc = fmt->instant(x, t, t->pid, t->tid, NULL);
		}
		if (rc != 0) {
			i++;
			break;
		}
	}
out:
	*taken = i;
	return rc;
}

int tk__export_light_run(tk_export *x, const tk__light_ev *ev, size_t n, size_t *taken)
{
	/* a format with a run consumer of its own (the same semantics, fused with its output) */
	if (x->fmt->light_run != NULL)
		return x->fmt->light_run(x, ev, n, taken);
	return model_light_run(x, ev, n, taken);
}

int tk__export_light_run_model(tk_export *x, const tk__light_ev *ev, size_t n, size_t *taken)
{
	return model_light_run(x, ev, n, taken);
}

int tk_export_finish(tk_export *x)
{
	int rc;

	if (x == NULL || x->finished)
		return TK_EINVAL;
	x->finished = 1;
	if (!x->started) {
		x->started = 1;
		if ((rc = x->fmt->start(x)) != 0)
			return rc;
	}
	for (size_t i = 0; i < x->threads_cap; i++) {
		tk__thread *t = &x->threads[i];
		if (!t->used)
			continue;
		while (t->depth > 0)
			if ((rc = slice_close(x, t, x->stats.last_ns, NULL, TK__CLOSE_TRACE_END)) != 0)
				return rc;
		x->stats.open_at_end += t->overflow;
		t->overflow = 0;
	}
	tk__export_csv_finish(x);
	if ((rc = x->fmt->finish(x)) != 0)
		return rc;
	if (x->stream == NULL)
		return 0;
	if ((rc = tk__export_flush(x)) != 0)
		return rc;
	if (fflush(x->stream) != 0 || ferror(x->stream)) {
		x->failed = 1;
		return tk__export_error(x, TK_EIO, "writing: %s", strerror(errno));
	}
	return 0;
}
