/* SPDX-License-Identifier: MIT */
/*
 * tracelogger's sink of the kernel's events (tracekit/collect.h, "A sink"): what is written
 * (the classes and parts of KERCALL and INT selected, and in daemon mode the session's static
 * filter), how much (buffers of 1024 slots counted for -n and -v, the -S size), and where:
 * the file at once through a timeline (linear mode), or a ring of the newest buffers written
 * at the stop (ring mode).
 */
#include <stdlib.h>
#include <string.h>

#include "tracekit/collect.h"

#define BUF_SLOTS 1024u /* one "buffer": 1024 slots (16 KiB), as QNX's kernel buffers */


/* A buffer of ring mode: whole events only (an event never spans two buffers), at least
 * BUF_SLOTS slots; the slack takes the event that fills it, up to RING_SLACK slots. */
#define RING_SLACK 1024u
struct ring_buf {
	traceevent_t slots[BUF_SLOTS + RING_SLACK];
	uint64_t times[BUF_SLOTS + RING_SLACK]; /* time of the event each slot belongs to */
	unsigned n;
};

struct tk_collect_sink {
	tk_collect_sink_config cfg;
	/* what is not written: the classes (and parts of KERCALL and INT) not selected, which
	 * the collector may still produce (the names it needs, the exits of calls it watches) */
	tk_kev_range deny[16];
	unsigned n_deny;
	int deny_ker_enter, deny_ker_exit;
	unsigned marker_cpu; /* the last event taken was an owner marker's BUFFER on CPU marker_cpu - 1 */
	tk_collect_timeline *tl; /* CONTROL TIME per CPU */
	uint64_t user_slots;     /* the programs' slots counted in the buffers so far */
	uint64_t hdr_bytes; /* header and syspage: the file's size is hdr_bytes + 16 x slots */
	/* buffers: counted in slots of the output, 1024 each */
	unsigned buf_slots;
	uint64_t buffers;       /* buffers completed */
	uint64_t events;        /* kernel events taken */
	uint64_t events_in_buf; /* events of the current buffer */
	uint64_t reads, reads_at_buf; /* collector reads that brought events (QNX's "interrupts") */
	int read_counted;             /* this read is counted already */
	uint64_t lost, lost_at_buf;
	const char *stop_reason;
	int write_err;
	/* ring mode */
	struct ring_buf **ring;
	unsigned ring_cap, ring_head, ring_count;
	uint64_t ring_dropped_bufs;
	uint64_t first_kernel_ns, last_kernel_ns;
	int have_kernel_ns;
};

/* Writes one event now (a CONTROL TIME first when the upper 32 bits changed on its CPU). */
static int write_now(struct tk_collect_sink *L, const traceevent_t *slots, size_t n, uint64_t t)
{
	return tk_collect_timeline_write(L->tl, L->cfg.w, slots, n, t);
}

static void buffer_done(struct tk_collect_sink *L)
{
	L->buffers++;
	if (L->cfg.on_buffer != NULL)
		L->cfg.on_buffer(L->cfg.ud, L->buffers, L->reads - L->reads_at_buf, L->events_in_buf,
				 L->lost - L->lost_at_buf);
	L->reads_at_buf = L->reads;
	L->lost_at_buf = L->lost;
	L->events_in_buf = 0;
	L->buf_slots = 0;
	if (L->cfg.n_buffers > 0 && L->buffers >= L->cfg.n_buffers && !*L->cfg.stop) {
		L->stop_reason = "the -n number of buffers is full";
		*L->cfg.stop = 1;
	}
}

/* The programs' own events count in the buffers (-n, -v) as the kernel's do. */
void tk_collect_sink_count_user(tk_collect_sink *L, uint64_t total)
{
	uint64_t add = total > L->user_slots ? total - L->user_slots : 0;

	L->user_slots = total;
	while (add > 0) {
		uint64_t room = BUF_SLOTS - L->buf_slots, take = add < room ? add : room;
		L->buf_slots += (unsigned)take;
		L->events_in_buf += take;
		add -= take;
		if (L->buf_slots >= BUF_SLOTS)
			buffer_done(L);
	}
}

static struct ring_buf *ring_current(struct tk_collect_sink *L, size_t n)
{
	struct ring_buf *cur = L->ring_count ? L->ring[(L->ring_head + L->ring_count - 1) % L->ring_cap] : NULL;
	unsigned idx;

	if (cur == NULL || cur->n >= BUF_SLOTS || cur->n + n > BUF_SLOTS + RING_SLACK) {
		if (L->ring_count == L->ring_cap) { /* full: the oldest buffer is reused */
			L->ring_head = (L->ring_head + 1) % L->ring_cap;
			L->ring_count--;
			L->ring_dropped_bufs++;
		}
		idx = (L->ring_head + L->ring_count) % L->ring_cap;
		if (L->ring[idx] == NULL && (L->ring[idx] = malloc(sizeof(struct ring_buf))) == NULL)
			return NULL;
		L->ring[idx]->n = 0;
		L->ring_count++;
		cur = L->ring[idx];
	}
	return cur;
}

static void deny_add(struct tk_collect_sink *L, unsigned ext, int whole_int)
{
	tk_kev_range r[4];
	int n = whole_int ? tk_kev_map_events(ext, _NTO_TRACE_INTFIRST, _NTO_TRACE_INTLAST, 0, r)
			  : tk_kev_map_class(ext, r);
	for (int i = 0; i < n && L->n_deny < sizeof(L->deny) / sizeof(L->deny[0]); i++)
		L->deny[L->n_deny++] = r[i];
}

/* The filter of what is written, from the classes recorded (after -c and -F). */
static void build_filter(struct tk_collect_sink *L, uint32_t classes, uint32_t sub_sel)
{
	static const unsigned ic[] = { _NTO_TRACE_INTENTER, _NTO_TRACE_INTEXIT, _NTO_TRACE_INT_HANDLER_ENTER,
				       _NTO_TRACE_INT_HANDLER_EXIT };

	L->n_deny = 0;
	if (!(classes & TK_COLLECT_CLASS(_NTO_TRACE_PROCESS)))
		deny_add(L, _NTO_TRACE_PROCESS, 0);
	if (!(classes & TK_COLLECT_CLASS(_NTO_TRACE_THREAD))) {
		deny_add(L, _NTO_TRACE_THREAD, 0);
		deny_add(L, _NTO_TRACE_VTHREAD, 0);
	}
	/* the collector's system-call codes mark the exit with bit 7 (TK_COLLECT_KERCALL_CODE) */
	L->deny_ker_enter = !(classes & TK_COLLECT_CLASS(_NTO_TRACE_KERCALL)) || !(sub_sel & (1u << _NTO_TRACE_KERCALLENTER));
	L->deny_ker_exit = !(classes & TK_COLLECT_CLASS(_NTO_TRACE_KERCALL)) || !(sub_sel & (1u << _NTO_TRACE_KERCALLEXIT));
	for (size_t i = 0; i < sizeof(ic) / sizeof(ic[0]); i++)
		if (!(classes & TK_COLLECT_CLASS(_NTO_TRACE_INT)) || !(sub_sel & (1u << ic[i])))
			deny_add(L, ic[i], 1);
}

static int denied(const struct tk_collect_sink *L, uint32_t header)
{
	unsigned cls = _NTO_TRACE_GETEVENT_C(header) >> 10, code = _NTO_TRACE_GETEVENT(header);

	if (cls == (_TRACE_KER_CALL_C >> 10))
		return (code & 0x80u) ? L->deny_ker_exit : L->deny_ker_enter;
	for (unsigned i = 0; i < L->n_deny; i++)
		if (L->deny[i].cls == cls && code >= L->deny[i].first && code <= L->deny[i].last)
			return 1;
	return 0;
}

/* The collector's callback: one kernel event. */
int tk_collect_sink_take(void *ud, const traceevent_t *slots, size_t n, uint64_t t)
{
	struct tk_collect_sink *L = ud;
	int rc;

	if (n == 0)
		return 0;
	if (L->stop_reason != NULL)
		return 1; /* a limit is reached: the read stops, nothing more is taken */
	/* The THRUNNING of an owner marker (CONTROL BUFFER, THRUNNING: docs/tracelogger.md,
	 * "Owners") is written whatever the classes: it gives the CPU's next events their thread
	 * and is no THREAD event. */
	unsigned h0 = slots[0].header, cpu1 = _NTO_TRACE_GETCPU(h0) + 1u;
	int marker = L->marker_cpu == cpu1 && n == 1 && _TRACE_GET_STRUCT(h0) == _TRACE_STRUCT_S &&
		     _NTO_TRACE_GETEVENT_C(h0) == _TRACE_PR_TH_C && _NTO_TRACE_GETEVENT(h0) == STATE_RUNNING;
	L->marker_cpu = _NTO_TRACE_GETEVENT_C(h0) == _TRACE_CONTROL_C && _NTO_TRACE_GETEVENT(h0) == _TRACE_CONTROL_BUFFER
				? cpu1 : 0;
	if (!marker && denied(L, h0))
		return 0; /* a class not selected */
	if (!marker && L->cfg.session != NULL && !tk_collect_session_enabled(L->cfg.session, h0))
		return 0; /* daemon mode: an event the programs did not enable */
	if (!L->read_counted) {
		L->reads++;
		L->read_counted = 1;
	}
	if (_NTO_TRACE_GETEVENT_C(slots[0].header) == _TRACE_CONTROL_C &&
	    _NTO_TRACE_GETEVENT(slots[0].header) == _TRACE_CONTROL_DROPPED)
		L->lost += (uint64_t)slots[0].data[1] | ((uint64_t)slots[0].data[2] << 32);
	if (!L->have_kernel_ns)
		L->first_kernel_ns = t, L->have_kernel_ns = 1;
	L->last_kernel_ns = t;
	if (L->ring != NULL) {
		struct ring_buf *b;
		size_t i;
		if (n > RING_SLACK)
			return 0; /* cannot be: the collector's largest event is far smaller */
		if ((b = ring_current(L, n)) == NULL)
			return TK_ENOMEM;
		for (i = 0; i < n; i++) {
			b->slots[b->n] = slots[i];
			b->times[b->n] = t;
			b->n++;
		}
	} else {
		if (L->cfg.max_size > 0 &&
		    L->hdr_bytes + (tk_kev_writer_slots(L->cfg.w) + n + 1) * sizeof(traceevent_t) > L->cfg.max_size) {
			if (!*L->cfg.stop) {
				L->stop_reason = "the -S size limit is reached";
				*L->cfg.stop = 1;
			}
			return 1; /* the read stops; nothing more is taken */
		}
		if ((rc = write_now(L, slots, n, t)) != TK_OK) {
			L->write_err = rc;
			return rc;
		}
	}
	L->events++;
	L->events_in_buf++;
	L->buf_slots += (unsigned)n;
	if (L->buf_slots >= BUF_SLOTS)
		buffer_done(L);
	return 0;
}

/* Ring mode, at the stop: the kept buffers in order (each holds whole events). */
static int ring_flush(struct tk_collect_sink *L)
{
	unsigned k;

	for (k = 0; k < L->ring_count; k++) {
		struct ring_buf *b = L->ring[(L->ring_head + k) % L->ring_cap];
		unsigned i = 0;
		if (k == 0 && b->n > 0)
			L->first_kernel_ns = b->times[0];
		while (i < b->n) {
			unsigned j = i + 1;
			int rc;
			if (_TRACE_GET_STRUCT(b->slots[i].header) == _TRACE_STRUCT_CB)
				while (j < b->n && _TRACE_GET_STRUCT(b->slots[j - 1].header) != _TRACE_STRUCT_CE)
					j++;
			if ((rc = write_now(L, &b->slots[i], j - i, b->times[i])) != TK_OK)
				return rc;
			i = j;
		}
	}
	return TK_OK;
}


int tk_collect_sink_new(tk_collect_sink **out, const tk_collect_sink_config *cfg)
{
	tk_collect_sink *L;

	if (out == NULL)
		return TK_EINVAL;
	*out = NULL;
	if (cfg == NULL || cfg->size < sizeof(*cfg) || cfg->w == NULL || cfg->stop == NULL)
		return TK_EINVAL;
	if ((L = calloc(1, sizeof(*L))) == NULL)
		return TK_ENOMEM;
	L->cfg = *cfg;
	if (tk_collect_timeline_new(&L->tl) != TK_OK) {
		free(L);
		return TK_ENOMEM;
	}
	L->hdr_bytes = tk_kev_writer_bytes(cfg->w);
	build_filter(L, cfg->classes, cfg->sub_sel);
	if (cfg->ring_buffers > 0) {
		L->ring_cap = cfg->ring_buffers;
		L->ring = calloc(L->ring_cap, sizeof(*L->ring));
		if (L->ring == NULL) {
			tk_collect_timeline_free(L->tl);
			free(L);
			return TK_ENOMEM;
		}
	}
	*out = L;
	return TK_OK;
}

void tk_collect_sink_free(tk_collect_sink *L)
{
	if (L == NULL)
		return;
	if (L->ring != NULL) {
		for (unsigned k = 0; k < L->ring_cap; k++)
			free(L->ring[k]);
		free(L->ring);
	}
	tk_collect_timeline_free(L->tl);
	free(L);
}

void tk_collect_sink_new_read(tk_collect_sink *L)
{
	L->read_counted = 0;
}

void tk_collect_sink_user_base(tk_collect_sink *L, uint64_t total)
{
	L->user_slots = total;
}

void tk_collect_sink_set_stop(tk_collect_sink *L, const char *reason)
{
	L->stop_reason = reason;
}

void tk_collect_sink_end(tk_collect_sink *L)
{
	if (L->buf_slots > 0)
		buffer_done(L);
}

int tk_collect_sink_flush_ring(tk_collect_sink *L)
{
	int rc;

	if (L->ring == NULL || L->write_err != 0)
		return L->write_err;
	rc = ring_flush(L);
	L->write_err = rc;
	return rc;
}

void tk_collect_sink_get_stats(const tk_collect_sink *L, tk_collect_sink_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->buffers = L->buffers;
	st->events = L->events;
	st->lost = L->lost;
	st->ring_dropped_buffers = L->ring_dropped_bufs;
	st->first_ns = L->first_kernel_ns;
	st->stop_reason = L->stop_reason;
	st->write_err = L->write_err;
}
