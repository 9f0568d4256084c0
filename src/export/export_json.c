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

#include "export/export_internal.h"

typedef struct json_state {
	int n_written; /* events written: the separator goes before every one but the first */
} json_state;

static int sep(tk_export *x)
{
	json_state *js = x->fmt_state;
	if (tk__out_room(x, 4) != 0)
		return TK_EIO;
	if (js->n_written++ > 0) {
		x->out[x->out_len++] = ',';
		x->out[x->out_len++] = '\n';
	}
	return 0;
}

/* A JSON string: quotes, backslashes and control characters escaped; bytes of invalid
 * UTF-8 as \u00XX (their Latin-1 reading), so the document is always valid. */
static void out_string(tk_export *x, const char *s, size_t n, int utf8)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0;

	if (tk__out_room(x, 1) != 0)
		return;
	x->out[x->out_len++] = '"';
	while (i < n) {
		size_t run = i;
		while (run < n) {
			unsigned char c = (unsigned char)s[run];
			if (c < 0x20 || c == '"' || c == '\\' || (c >= 0x80 && !utf8))
				break;
			run++;
		}
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

/* ns as microseconds: "<us>.<3 digits>" */
static void out_us(tk_export *x, uint64_t ns)
{
	uint64_t frac = ns % 1000;
	tk__out_u64(x, ns / 1000);
	x->out[x->out_len++] = '.';
	x->out[x->out_len++] = (char)('0' + frac / 100);
	x->out[x->out_len++] = (char)('0' + frac / 10 % 10);
	x->out[x->out_len++] = (char)('0' + frac % 10);
}

static void out_hex_str(tk_export *x, uint64_t v)
{
	x->out[x->out_len++] = '"';
	tk__out_hex(x, v);
	x->out[x->out_len++] = '"';
}

/* ,"ts":T,"pid":P,"tid":T (room reserved by the caller: 96 bytes) */
static void out_ts_pid_tid(tk_export *x, uint64_t ns, int32_t pid, int32_t tid)
{
	TK__OUT_LIT(x, ",\"ts\":");
	out_us(x, ns);
	TK__OUT_LIT(x, ",\"pid\":");
	tk__out_i64(x, pid);
	TK__OUT_LIT(x, ",\"tid\":");
	tk__out_i64(x, tid);
}

/* The fields of an event as the members of an object (without braces). Duplicate names
 * get "_<index>" appended, an unnamed string piece is "text". */
void tk__json_fields(tk_export *x, const tk_kev_decoded *d)
{
	for (unsigned i = 0; i < d->n_fields; i++) {
		const tk_kev_field *f = &d->fields[i];
		const char *name = f->name[0] != '\0' ? f->name : "text";
		int dup = 0;

		for (unsigned j = 0; j < i; j++) {
			const char *other = d->fields[j].name[0] != '\0' ? d->fields[j].name : "text";
			if (strcmp(other, name) == 0)
				dup = 1;
		}
		if (tk__out_room(x, 96) != 0)
			return;
		if (i > 0)
			x->out[x->out_len++] = ',';
		out_cstr(x, name);
		if (dup) {
			x->out_len--; /* reopen the key: name_<i> */
			if (tk__out_room(x, 32) != 0)
				return;
			x->out[x->out_len++] = '_';
			tk__out_u64(x, i);
			x->out[x->out_len++] = '"';
		}
		x->out[x->out_len++] = ':';
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

static int json_start(tk_export *x)
{
	static json_state state0;
	json_state *js = malloc(sizeof(*js));
	if (js == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	*js = state0;
	x->fmt_state = js;
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

static const char *const slice_cat[] = { "SYSTEM", "USER", "KERCALL" };

static int json_slice_end(tk_export *x, const tk__thread *t, const tk__slice *s, uint64_t end_ns,
			  const tk_kev_decoded *end, int reason)
{
	if (sep(x) != 0 || tk__out_room(x, 320) != 0)
		return TK_EIO;
	TK__OUT_LIT(x, "{\"name\":");
	if (s->kind == TK__SLICE_FUNC && s->name == NULL)
		out_hex_str(x, s->arg[0]);
	else
		out_cstr(x, s->name != NULL ? s->name : s->label);
	if (tk__out_room(x, 256) != 0)
		return TK_EIO;
	TK__OUT_LIT(x, ",\"cat\":\"");
	tk__out_mem(x, slice_cat[s->kind], strlen(slice_cat[s->kind]));
	TK__OUT_LIT(x, "\",\"ph\":\"X\",\"ts\":");
	out_us(x, s->begin_ns);
	TK__OUT_LIT(x, ",\"dur\":");
	out_us(x, end_ns - s->begin_ns);
	TK__OUT_LIT(x, ",\"pid\":");
	tk__out_i64(x, t->pid);
	TK__OUT_LIT(x, ",\"tid\":");
	tk__out_i64(x, t->tid);
	TK__OUT_LIT(x, ",\"args\":{");
	switch (s->kind) {
	case TK__SLICE_FUNC:
		TK__OUT_LIT(x, "\"thisfn\":");
		out_hex_str(x, s->arg[0]);
		TK__OUT_LIT(x, ",\"call_site\":");
		out_hex_str(x, s->arg[1]);
		break;
	case TK__SLICE_USER:
		TK__OUT_LIT(x, "\"d0\":");
		out_hex_str(x, s->arg[0]);
		TK__OUT_LIT(x, ",\"d1\":");
		out_hex_str(x, s->arg[1]);
		break;
	default: /* TK__SLICE_KERCALL */
		TK__OUT_LIT(x, "\"number\":");
		tk__out_u64(x, s->arg[0]);
		TK__OUT_LIT(x, ",\"cpu\":");
		tk__out_u64(x, s->arg[1]);
		break;
	}
	if (reason == TK__CLOSE_OUTER)
		TK__OUT_LIT(x, ",\"closed\":\"by an outer end\"");
	else if (reason == TK__CLOSE_TRACE_END)
		TK__OUT_LIT(x, ",\"closed\":\"at the end of the trace\"");
	else if (end != NULL && (s->kind == TK__SLICE_USER || s->kind == TK__SLICE_KERCALL) && end->n_fields > 0) {
		TK__OUT_LIT(x, ",\"end\":{");
		tk__json_fields(x, end);
		if (tk__out_room(x, 1) == 0)
			x->out[x->out_len++] = '}';
	}
	if (tk__out_room(x, 2) == 0)
		TK__OUT_LIT(x, "}}");
	return x->failed ? TK_EIO : 0;
}

static int json_instant(tk_export *x, const tk__thread *t, int32_t pid, int32_t tid, const tk_kev_decoded *d)
{
	char name[48];
	const char *cat = d->cls_desc != NULL ? d->cls_desc->name : "";
	char cat_buf[16];

	if (d->event_name[0] != '\0')
		snprintf(name, sizeof(name), "%s", d->event_name);
	else if (d->number >= 0)
		snprintf(name, sizeof(name), "%s %d", d->cls == 6 ? "USER" : cat, d->number);
	else
		snprintf(name, sizeof(name), "CLASS %u EVENT %u", d->cls, d->code);
	(void)t;
	if (cat[0] == '\0') {
		snprintf(cat_buf, sizeof(cat_buf), "CLASS %u", d->cls);
		cat = cat_buf;
	}
	if (sep(x) != 0 || tk__out_room(x, 256) != 0)
		return TK_EIO;
	TK__OUT_LIT(x, "{\"name\":");
	out_cstr(x, name);
	TK__OUT_LIT(x, ",\"cat\":");
	out_cstr(x, cat);
	if (d->cls == 1) /* DROPPED: the whole trace lost events here */
		TK__OUT_LIT(x, ",\"ph\":\"i\",\"s\":\"g\"");
	else
		TK__OUT_LIT(x, ",\"ph\":\"i\",\"s\":\"t\"");
	out_ts_pid_tid(x, d->time_ns, pid, tid);
	TK__OUT_LIT(x, ",\"args\":{\"cpu\":");
	tk__out_u64(x, d->cpu);
	if (d->n_fields > 0)
		x->out[x->out_len++] = ',';
	tk__json_fields(x, d);
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
	out_cstr(x, c->name);
	TK__OUT_LIT(x, ",\"ph\":\"C\",\"ts\":");
	out_us(x, ns);
	TK__OUT_LIT(x, ",\"pid\":");
	tk__out_i64(x, pid);
	TK__OUT_LIT(x, ",\"args\":{\"value\":");
	tk__out_i64(x, value);
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
	if (tk__out_room(x, 8) == 0)
		TK__OUT_LIT(x, "}}}\n");
	return x->failed ? TK_EIO : 0;
}

static void json_free(tk_export *x)
{
	free(x->fmt_state);
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
};
