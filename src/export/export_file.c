/* SPDX-License-Identifier: MIT */
/*
 * tk_export_file(): a whole .kev file through libtraceparser, every event decoded
 * (tk_traceparser_decode()) and handed to an exporter. The pairs and counters the trace
 * declares in its header (TRACEKIT_USER_PAIRS, TRACEKIT_USER_COUNTERS) are read once the
 * header is parsed, before the first event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/tk_bytes.h"
#include "tracekit/traceparser.h"
#include "export/export_internal.h"
#include "traceparser/tp_batch.h"

#define UNLIKELY_CPU(x) __builtin_expect(!!(x), 0)

typedef struct export_run {
	tk_export *x;
	const char *pairs, *counters;
	int rc;            /* first error of the exporter: later events are skipped */
	int light;         /* the format takes FUNC and USER events undecoded (tk__export_light()) */
	int swap;          /* payload words need swapping */
	struct traceparser_state *st;
	/* where the event being exported is (export_where()): a slot of a run decoded here
	 * (dec_slot >= 0), else the parser's current event */
	int64_t dec_slot;
	const uint32_t *scan_slots; /* the scan's slots and the index of the first (scan_slow()) */
	uint64_t scan_first;
	tk_kev_decoded dec; /* large: here rather than on the callback's stack */
} export_run;

/* The byte offset of the event being exported (messages of the VTune CSV data). */
static int64_t export_where(void *ud)
{
	export_run *r = ud;

	if (r->dec_slot >= 0)
		return (int64_t)(r->st->events_offset + (uint64_t)r->dec_slot * 16);
	const uint64_t *off = traceparser_get_info(r->st, TK_TRACEPARSER_INFO_OFFSET, NULL);
	return off != NULL ? (int64_t)*off : -1;
}

static int on_event(struct traceparser_state *st, void *ud, unsigned header, unsigned time, unsigned *buf,
		    unsigned len)
{
	export_run *r = ud;

	if (r->rc != 0)
		return 0;
	if (r->light && len <= 2 &&
	    (TK_KEV_CLASS(header) == 6 ||
	     (TK_KEV_CLASS(header) == 5 && TK_KEV_CODE(header) - _NTO_TRACE_SYS_FUNC_ENTER <= 1u))) {
		int32_t pid, tid;
		int known = tk_traceparser_owner(st, &pid, &tid);
		uint32_t w0 = len > 0 ? tk__cs32(r->swap, buf[0]) : 0, w1 = len > 1 ? tk__cs32(r->swap, buf[1]) : 0;
		int rc = tk__export_light(r->x, header, w0, w1, len, tk_traceparser_ns(st), known, pid, tid);
		if (rc != 1) {
			r->rc = rc;
			return 0;
		}
	}
	if (tk_traceparser_decode(st, header, time, buf, len, 0, &r->dec) != 0)
		return 0;
	r->rc = tk_export_event(r->x, &r->dec);
	return 0;
}

/*
 * A run of light events from the parser's fast loop (tp_batch.h): each slot's owner and
 * time read inline, then the model's light path; a slot it sends back (the first of its
 * kind, an owner not known, ...) goes the ordinary way, decoded. `conv` is a constant in
 * each instance, so that the native one has no byte swaps.
 */
static inline __attribute__((always_inline)) void run_light(struct traceparser_state *st, export_run *r,
								 const uint32_t *s, size_t n, uint64_t first_slot,
								 const int conv)
{
	const int clk_is_ns = tk__tp_clk_is_ns(st);
	tk__light_ev ev[256];
	size_t i = 0;
	/* a CPU's owner and upper time bits stay the same through a run: read at each change of CPU */
	unsigned cpu = ~0u;
	uint64_t msb = 0;
	int32_t pid = 0, tid = 0;
	uint32_t known = 0;

	while (i < n && r->rc == 0) {
		size_t m = n - i < 256 ? n - i : 256, taken;
		const uint32_t *p = s + 4 * i;

		for (size_t j = 0; j < m; j++, p += 4) {
			uint32_t h = tk__cs32(conv, p[0]);
			if (UNLIKELY_CPU(_NTO_TRACE_GETCPU(h) != cpu)) {
				cpu = _NTO_TRACE_GETCPU(h);
				msb = tk__tp_batch_clk(st, h, 0);
				known = (uint32_t)tk__tp_batch_owner(st, h, &pid, &tid);
			}
			uint64_t clk = msb | tk__cs32(conv, p[1]);
			ev[j].header = h;
			ev[j].w0 = tk__cs32(conv, p[2]);
			ev[j].w1 = tk__cs32(conv, p[3]);
			ev[j].ns = clk_is_ns ? clk : tk__tp_clk_to_ns(st, clk);
			ev[j].owner_known = known;
			ev[j].pid = pid;
			ev[j].tid = tid;
		}
		/* the slots the light path sends back are decoded where they are, and the rest
		 * of the block goes on (the owner and time of a slot do not change meanwhile) */
		for (size_t j = 0; j < m && r->rc == 0; j += taken + 1) {
			if ((r->rc = tk__export_light_run(r->x, ev + j, m - j, &taken)) != 0 || j + taken == m)
				break;
			/* decoded here as tk_traceparser_decode() would (the slot's own time and
			 * owner, the file's system call table), without a trip through the parser */
			const tk__light_ev *e = &ev[j + taken];
			const uint32_t *slot = s + 4 * (i + j + taken);
			tk_kev_event kev = { .header = e->header,
					     .time = tk__cs32(conv, slot[1]),
					     .data = slot + 2,
					     .len = 2,
					     .swap = conv,
					     .ns = e->ns };
			kev.clk = tk__tp_batch_clk(st, e->header, kev.time);
			if (tk_kev_decode(&kev, st->kercalls_flags, &r->dec) != 0)
				continue;
			r->dec.pid = e->owner_known ? e->pid : 0;
			r->dec.tid = e->owner_known ? e->tid : 0;
			if (e->owner_known)
				r->dec.flags |= TK_KEV_DEC_OWNER_KNOWN;
			r->dec_slot = (int64_t)(first_slot + i + j + taken);
			r->rc = tk_export_event(r->x, &r->dec);
			r->dec_slot = -1;
		}
		i += m;
	}
}

/*
 * A run for a format that takes the slots themselves (tk__format.slot_run; a clock in ns,
 * the machine's byte order): a segment per change of CPU, with its owner and upper time
 * bits; a slot the format sends back is decoded as run_light() decodes it.
 */
static __attribute__((noinline)) void run_slots(struct traceparser_state *st, export_run *r, const uint32_t *s,
						  size_t n, uint64_t first_slot)
{
	size_t i = 0, taken;

	while (i < n && r->rc == 0) {
		tk__slot_seg seg;
		uint32_t h = s[4 * i];
		seg.slots = s + 4 * i;
		seg.n = n - i;
		seg.cpu = _NTO_TRACE_GETCPU(h);
		seg.msb = tk__tp_batch_clk(st, h, 0);
		seg.known = tk__tp_batch_owner(st, h, &seg.pid, &seg.tid);
		if ((r->rc = r->x->fmt->slot_run(r->x, &seg, &taken)) != 0)
			break;
		i += taken;
		if (i == n || _NTO_TRACE_GETCPU(s[4 * i]) != seg.cpu)
			continue;
		/* sent back: decoded here, with the slot's own time and owner */
		const uint32_t *slot = s + 4 * i++;
		tk_kev_event kev = { .header = slot[0], .time = slot[1], .data = slot + 2, .len = 2, .swap = 0 };
		kev.clk = kev.ns = seg.msb | slot[1];
		if (tk_kev_decode(&kev, st->kercalls_flags, &r->dec) != 0)
			continue;
		r->dec.pid = seg.known ? seg.pid : 0;
		r->dec.tid = seg.known ? seg.tid : 0;
		if (seg.known)
			r->dec.flags |= TK_KEV_DEC_OWNER_KNOWN;
		r->dec_slot = (int64_t)(first_slot + (size_t)(slot - s) / 4);
		r->rc = tk_export_event(r->x, &r->dec);
		r->dec_slot = -1;
	}
}

/* A slot of a format's own scan that it does not take itself: the light path's way. */
static int scan_slow(void *ud, struct traceparser_state *st, const uint32_t *slot)
{
	export_run *r = ud;
	uint64_t first = r->scan_first + (uint64_t)(slot - r->scan_slots) / 4;

	if (r->swap)
		run_light(st, r, slot, 1, first, 1);
	else
		run_light(st, r, slot, 1, first, 0);
	return r->rc;
}

/* A run's slots to the format's own scan (tk__format.scan); after an error, none: the loop's
 * run skips them. */
static size_t on_scan(struct traceparser_state *st, void *ud, const uint32_t *slots, size_t n, uint64_t first_slot)
{
	export_run *r = ud;

	if (r->rc != 0)
		return 0;
	r->scan_slots = slots;
	r->scan_first = first_slot;
	return r->x->fmt->scan(r->x, st, slots, n, r->swap, scan_slow, r);
}

static int on_run(struct traceparser_state *st, void *ud, const uint32_t *slots, size_t n, uint64_t first_slot)
{
	export_run *r = ud;

	if (r->x->fmt->slot_run != NULL && !r->swap && tk__tp_clk_is_ns(st))
		run_slots(st, r, slots, n, first_slot);
	else if (r->swap)
		run_light(st, r, slots, n, first_slot, 1);
	else
		run_light(st, r, slots, n, first_slot, 0);
	return 0;
}

void tk__export_scan_ops(const tk_export *x, const struct traceparser_state *st, uint8_t op[32 * 1024],
			 uint8_t pair[1024])
{
	for (unsigned key = 5 * 1024; key < 7 * 1024; key++) {
		unsigned cls = key >> 10, code = key & 1023u, o = TK__SCAN_MODEL;
		if (!tk__tp_batched(st, key))
			o = 0;
		else if (tk__export_csv_code(x, cls, code))
			o = TK__SCAN_MODEL; /* VTune CSV data: the model's (export_vtune.c) */
		else if (cls == 5)
			o = code == _NTO_TRACE_SYS_FUNC_ENTER  ? TK__SCAN_ENTER
			    : code == _NTO_TRACE_SYS_FUNC_EXIT ? TK__SCAN_EXIT
								: TK__SCAN_MODEL;
		else if (x->pair_begin[code] != 0)
			o = TK__SCAN_BEGIN;
		else if (x->pair_end[code] != 0)
			o = TK__SCAN_END;
		else if (x->counter_of[code] == 0)
			o = TK__SCAN_INSTANT;
		op[key] = (uint8_t)o;
	}
	for (unsigned code = 0; code < 1024; code++)
		pair[code] = (uint8_t)(x->pair_begin[code] != 0 ? x->pair_begin[code] - 1
				       : x->pair_end[code] != 0 ? x->pair_end[code] - 1 : 0);
}

size_t tk__export_scan(tk_export *x, struct traceparser_state *st, const uint32_t *slots, size_t n,
		       int (*slow)(void *, struct traceparser_state *, const uint32_t *), void *slow_ud,
		       tk__scan_stretch stretch)
{
	const uint32_t *p = slots, *const end = slots + 4 * n;

	while (p < end) {
		const uint32_t h = p[0];
		int32_t pid, tid;
		int slow_next = 1;

		if (!tk__tp_batched(st, h))
			break; /* the run ends here */
		const int known = tk__tp_batch_owner(st, h, &pid, &tid);
		tk__thread *t = x->last_thread;
		/* the first event counted sets first_ns whatever it is: the model's */
		if (known && t != NULL && t->pid == pid && t->tid == tid && t->overflow == 0 &&
		    x->stats.events != x->stats.control) {
			p = stretch(x, t, p, end, tk__tp_batch_clk(st, h, 0), &slow_next);
			if (!slow_next || p == end)
				continue; /* *p starts another CPU's stretch, or p is at the end */
			if (!tk__tp_batched(st, p[0]))
				break; /* the run ends here */
		}
		/* the slot the light path's way */
		if (slow(slow_ud, st, p) != 0 || !x->started || x->finished || x->failed)
			return (size_t)(p - slots) / 4 + 1;
		p += 4;
	}
	return (size_t)(p - slots) / 4;
}

/* After the header, before the first event: the trace's own declarations, then the caller's. */
static int on_header(struct traceparser_state *st, void *ud, unsigned header, unsigned time, unsigned *buf,
		     unsigned len)
{
	export_run *r = ud;
	const char *v;

	(void)header, (void)time, (void)buf, (void)len;
	if (r->rc == 0 && r->pairs != NULL)
		r->rc = tk_export_add_spec(r->x, r->pairs, 0);
	if (r->rc == 0 && r->counters != NULL)
		r->rc = tk_export_add_spec(r->x, r->counters, 1);
	const unsigned *conv = traceparser_get_info(st, _TRACEPARSER_INFO_ENDIAN_CONV, NULL);
	r->swap = conv != NULL && *conv != 0;
	r->light = r->x->fmt->light_event != NULL;
	v = tk_traceparser_header_value(st, "TRACEKIT_OWNER", NULL);
	/* buffer: tracekit recordings; cpu: tracelogger files (docs/kev-format.md) */
	r->x->owner_markers = v != NULL && (strcmp(v, "buffer") == 0 || strcmp(v, "cpu") == 0);
	/* the caller's declarations win: header items that conflict or are malformed are skipped */
	if (r->rc == 0 && (v = tk_traceparser_header_value(st, "TRACEKIT_USER_PAIRS", NULL)) != NULL)
		r->rc = tk__export_add_spec(r->x, v, 0, 1);
	if (r->rc == 0 && (v = tk_traceparser_header_value(st, "TRACEKIT_USER_COUNTERS", NULL)) != NULL)
		r->rc = tk__export_add_spec(r->x, v, 1, 1);
	/* VTune CSV data (docs/vtune-csv.md): a trace tracecsv import wrote or merged into says so
	 * in its header; USER 1000-1005 declared otherwise keep that meaning */
	if (tk_traceparser_header_value(st, "TRACEKIT_CSV_CLOCK", NULL) != NULL ||
	    tk_traceparser_header_value(st, "TRACEKIT_CSV_SOURCE_CLOCK", NULL) != NULL)
		r->x->csv_on = tk__export_csv_codes_free(r->x);
	return 0;
}

/* The whole job with an exporter already made (freed here, whatever happens). */
int tk__export_run_file(tk_export *x, const char *in_path, const char *pairs, const char *counters,
			tk_export_stats *stats, char *errmsg, size_t errmsg_cap)
{
	export_run *r;
	struct traceparser_state *st;
	int rc, parse_rc, parse_errno;

	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		tk_export_free(x);
		return TK_ENOMEM;
	}
	r->x = x;
	r->dec_slot = -1;
	x->where = export_where;
	x->where_ud = r;
	/* the declarations are checked before any input is read (added for real in on_header) */
	r->pairs = pairs;
	r->counters = counters;
	if ((pairs != NULL && (rc = tk_export_add_spec(r->x, pairs, 0)) != 0) ||
	    (counters != NULL && (rc = tk_export_add_spec(r->x, counters, 1)) != 0)) {
		if (errmsg != NULL && errmsg_cap > 0)
			snprintf(errmsg, errmsg_cap, "%s", tk_export_errmsg(r->x));
		tk_export_free(r->x);
		free(r);
		return rc;
	}
	tk__export_reset_declarations(r->x);
	st = traceparser_init(NULL);
	if (st == NULL) {
		tk_export_free(r->x);
		free(r);
		return TK_ENOMEM;
	}
	r->st = st;
	for (unsigned cls = 0; cls < 32; cls++)
		tk_traceparser_cs_internal(st, r, on_event, cls, cls == 0 ? 1 : 0, 1023);
	/* the events the light path takes, in runs (they also reach on_event outside runs) */
	if (x->fmt->light_event != NULL && !x->one_by_one) {
		tk__tp_batch(st, on_run, r, 6, 0, 1023);
		tk__tp_batch(st, on_run, r, 5, _NTO_TRACE_SYS_FUNC_ENTER, _NTO_TRACE_SYS_FUNC_EXIT);
		/* the format's own pass over them, if it has one (it names no functions) */
		if (x->fmt->scan != NULL && !x->no_scan && x->symbols == NULL)
			tk__tp_batch_scan(st, on_scan);
	}
	traceparser_cs(st, r, on_header, _NTO_TRACE_EMPTY, _NTO_TRACE_EMPTYEVENT);

	parse_rc = traceparser(st, r, in_path);
	parse_errno = errno;
	if (parse_rc != 0 && errmsg != NULL && errmsg_cap > 0) {
		const char *msg = traceparser_get_info(st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		snprintf(errmsg, errmsg_cap, "%s", msg != NULL && *msg ? msg : strerror(parse_errno));
	}
	{
		const struct tk_traceparser_stats *ps = traceparser_get_info(st, _TRACEPARSER_INFO_STATS, NULL);
		if (ps != NULL)
			x->stats.incomplete_events = ps->incomplete_events;
	}
	x->where = NULL; /* the parser is gone */
	traceparser_destroy(&st);

	/* the document is completed even after damage: what was read stays viewable */
	rc = r->rc;
	if (rc == 0 && (parse_rc == 0 || r->x->started)) /* unreadable from the start: nothing */
		rc = tk_export_finish(r->x);
	if (rc != 0) {
		if (errmsg != NULL && errmsg_cap > 0)
			snprintf(errmsg, errmsg_cap, "%s", tk_export_errmsg(r->x)[0] ? tk_export_errmsg(r->x)
										: tk_strerror(rc));
	} else if (parse_rc != 0) {
		rc = tk_error_from_errno(parse_errno);
		if (rc == 0 || rc == TK_EINVAL)
			rc = TK_ECORRUPT;
	} else if (errmsg != NULL && errmsg_cap > 0) { /* done: a warning, if any */
		snprintf(errmsg, errmsg_cap, "%s", r->x->csv_warning);
	}
	if (stats != NULL)
		*stats = *tk_export_get_stats(r->x);
	tk_export_free(r->x);
	free(r);
	return rc;
}

int tk_export_file(const char *in_path, FILE *stream, tk_export_format fmt, const char *pairs,
		   const char *counters, tk_export_stats *stats, char *errmsg, size_t errmsg_cap)
{
	return tk_export_file_flags(in_path, stream, fmt, 0, pairs, counters, stats, errmsg, errmsg_cap);
}

int tk_export_file_flags(const char *in_path, FILE *stream, tk_export_format fmt, unsigned flags,
			 const char *pairs, const char *counters, tk_export_stats *stats, char *errmsg,
			 size_t errmsg_cap)
{
	tk_export *x;
	int rc;

	if (errmsg != NULL && errmsg_cap > 0)
		errmsg[0] = '\0';
	if (in_path == NULL || stream == NULL)
		return TK_EINVAL;
	rc = tk_export_new(&x, fmt, stream);
	if (rc != 0)
		return rc;
	x->one_by_one = (flags & TK__EXPORT_ONE_BY_ONE) != 0;
	x->no_scan = (flags & TK__EXPORT_NO_SCAN) != 0;
	if ((flags & TK__EXPORT_MODEL_RUNS) && x->fmt == &tk__export_perfetto)
		x->fmt = &tk__export_perfetto_model; /* the same without its own runs */
	else if ((flags & TK__EXPORT_MODEL_RUNS) && x->fmt == &tk__export_json)
		x->fmt = &tk__export_json_model;
	if ((flags & TK_EXPORT_SYMBOLS) && (rc = tk__export_use_symbols(x, in_path)) != 0) {
		tk_export_free(x);
		return rc;
	}
	return tk__export_run_file(x, in_path, pairs, counters, stats, errmsg, errmsg_cap);
}
