/* SPDX-License-Identifier: MIT */
/*
 * Emission: writing events into the calling thread's trace buffer, the record path every
 * source of events uses (the inline emitter's slow path, TraceEvent()'s inserts, QNX's
 * trace_log*() calls, the -finstrument-functions hooks, START's snapshot): filters and
 * handlers, TIME events, combine and string events. Where the buffers come from and where
 * full ones go is trace_pool.c's business.
 *
 * Time: every slot carries the low 32 bits of the cycle counter. A thread writes a CONTROL
 * TIME event (CPU, upper 32 bits) first in each buffer, before CONTROL BUFFER (QNX writes
 * BUFFER first and its readers give that one event the previous buffer's upper bits), and
 * whenever its CPU or the upper 32 bits change, so a reader rebuilds the 64-bit time of
 * every event from its buffer alone, in whatever order the buffers of different threads
 * reach the file.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/trace_internal.h"

uint32_t tk__trace_tid(void)
{
	if (tk__trace_tls.tid == 0)
		tk__trace_tls.tid = (uint32_t)syscall(SYS_gettid);
	return tk__trace_tls.tid;
}

unsigned tk__trace_cpu_slow(void)
{
	int cpu = sched_getcpu();
	return cpu < 0 ? 0u : (unsigned)cpu & 63u;
}

/* One slot in the calling thread's buffer; -1 when it is dropped (and counted). */
static int put(uint32_t h, uint32_t t, uint32_t d1, uint32_t d2)
{
	traceevent_t *s = tk_buffer_reserve(tk__trace_buffer_id);

	if (s == NULL)
		return -1;
	s->header = h;
	s->data[0] = t;
	s->data[1] = d1;
	s->data[2] = d2;
	tk_buffer_commit(tk__trace_buffer_id, s);
	return 0;
}

/*
 * Reserves the slot of an event and then reads its time and CPU (so a buffer started by
 * the reservation never carries a later time than the event), writing a TIME event first
 * when the thread's last TIME does not cover (cpu, upper bits of t). NULL when the event
 * is dropped.
 */
static traceevent_t *reserve_timed(unsigned *cpu, uint64_t *t)
{
	traceevent_t *s = tk_buffer_reserve(tk__trace_buffer_id);
	uint64_t key;

	if (s == NULL)
		return NULL;
	*t = tk__trace_clock();
	*cpu = tk__trace_cpu();
	key = tk__trace_time_key(*t, *cpu);
	while (~tk__trace_tls.time_key != key) {
		*s = (traceevent_t){ _TRACE_MAKE_CODE(*cpu, _TRACE_STRUCT_S, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME),
				     { (uint32_t)*t, (uint32_t)(*t >> 32), (uint32_t)*t } };
		tk_buffer_commit(tk__trace_buffer_id, s);
		tk__trace_tls.time_key = ~key;
		/* a new buffer here writes its own TIME: the loop checks it covers the event */
		s = tk_buffer_reserve(tk__trace_buffer_id);
		if (s == NULL)
			return NULL;
	}
	return s;
}

/* ---- filters -------------------------------------------------------------------------- */

int tk__trace_filter_passes(const struct trace_filter *f, uint32_t tid)
{
	int pid = (int)tk__trace_pid();

	if (atomic_load_explicit(&f->pid_set, memory_order_relaxed) &&
	    atomic_load_explicit(&f->pid, memory_order_relaxed) != pid)
		return 0;
	if (atomic_load_explicit(&f->tid_set, memory_order_relaxed) &&
	    (atomic_load_explicit(&f->tid_pid, memory_order_relaxed) != pid ||
	     (uint32_t)atomic_load_explicit(&f->tid, memory_order_relaxed) != tid))
		return 0;
	return 1;
}

static int call_handler(const struct trace_handler *h, uint32_t header, const uint32_t *words, size_t n,
			uint32_t tid)
{
	event_data_t *d = h->data;
	size_t i;

	d->header = header;
	d->el_num = (_Uint32t)n;
	if (d->data_array != NULL)
		for (i = 0; i < n && i < TK_TRACE_EVENT_DATA_WORDS; i++)
			d->data_array[i] = words[i];
	d->feature_mask = _NTO_TRACE_FMPID | _NTO_TRACE_FMTID;
	d->feature[_NTO_TRACE_FIPID] = (_Uint32t)tk__trace_pid();
	d->feature[_NTO_TRACE_FITID] = tid;
	return h->fn(d);
}

int tk__trace_passes_filters(unsigned cls, unsigned code, const uint32_t *words, size_t n)
{
	struct tk__trace_config *cfg = trace_cfg();
	struct trace_code *all, *c;
	uint32_t tid;
	int keep = 1;

	if (!trace_bit(cfg->enabled[cls], code))
		return 0;
	if (atomic_load_explicit(&cfg->n_filtered[cls], memory_order_relaxed) != 0) {
		const struct trace_filter *pair = cfg->filters[cls * TRACE_N_CODES + code];
		tid = tk__trace_tid();
		if (!tk__trace_filter_passes(&pair[0], tid) || !tk__trace_filter_passes(&pair[1], tid))
			return 0;
	}
	all = atomic_load_explicit(&tk__trace.codes, memory_order_acquire);
	if (all == NULL)
		return 1;
	c = &all[cls * TRACE_N_CODES + code];
	if (!atomic_load_explicit(&c->special, memory_order_relaxed))
		return 1;
	tid = tk__trace_tid();
	if (tk__trace_tls.in_handler)
		return 1; /* events inserted by a handler are not filtered again */
	pthread_mutex_lock(&tk__trace.handler_lock);
	tk__trace_tls.in_handler = 1;
	if (c->event_handler.fn != NULL || c->class_handler.fn != NULL) {
		uint32_t header = _TRACE_MAKE_CODE(tk__trace_cpu(), n > 2 ? _TRACE_STRUCT_CB : _TRACE_STRUCT_S,
						   TRACE_CLASS_BITS(cls), code);
		if (c->event_handler.fn != NULL && call_handler(&c->event_handler, header, words, n, tid) == 0)
			keep = 0;
		if (keep && c->class_handler.fn != NULL && call_handler(&c->class_handler, header, words, n, tid) == 0)
			keep = 0;
	}
	tk__trace_tls.in_handler = 0;
	pthread_mutex_unlock(&tk__trace.handler_lock);
	return keep;
}

/* ---- writing events ------------------------------------------------------------------- */

/* The 8 payload bytes of slot i of an event made of words followed by a string. */
static void payload_chunk(const uint32_t *words, size_t n_words, const char *str, size_t str_bytes, size_t i,
			  uint32_t out[2])
{
	unsigned char b[8];
	size_t k;

	for (k = 0; k < 8; k++) {
		size_t pos = i * 8 + k;
		if (pos < n_words * 4)
			b[k] = ((const unsigned char *)&words[pos / 4])[pos % 4];
		else if (str != NULL && pos - n_words * 4 < str_bytes)
			b[k] = (unsigned char)str[pos - n_words * 4];
		else
			b[k] = 0;
	}
	memcpy(out, b, 8);
}

int tk__trace_write(unsigned cls, unsigned code, const uint32_t *words, size_t n_words, const char *str,
		    size_t str_len, int filtered)
{
	size_t bytes, n_slots, i;
	uint64_t t = 0;
	unsigned cpu = 0, mode;

	tk__trace_session_catch_up(); /* attached: announce after a START made elsewhere; a forked child */
	mode = trace_mode(cls);
	if (mode == TK__TRACE_OFF)
		return 0;
	if (filtered && mode == TK__TRACE_FILTERED && str == NULL &&
	    !tk__trace_passes_filters(cls, code, words, n_words))
		return 0;
	if (filtered && mode == TK__TRACE_FILTERED && str != NULL) {
		/* handlers see the string as payload words */
		size_t nw = n_words + (str_len + 4) / 4;
		uint32_t stackw[64], *w = nw <= 64 ? stackw : malloc(nw * 4);
		int pass;
		if (w == NULL)
			return tk__trace_set_error(ENOMEM, "out of memory");
		memset(w, 0, nw * 4);
		if (n_words > 0)
			memcpy(w, words, n_words * 4);
		memcpy(w + n_words, str, str_len);
		pass = tk__trace_passes_filters(cls, code, w, nw);
		if (w != stackw)
			free(w);
		if (!pass)
			return 0;
	}
	bytes = n_words * 4 + (str != NULL ? str_len + 1 : 0);
	/* as QNX's kernel splits events: up to 8 bytes (a short string too, NUL included) make
	 * one simple slot, more a CB, CC..., CE run (reference 2.3) */
	n_slots = bytes <= 8 ? 1 : (bytes + 7) / 8;
	for (i = 0; i < n_slots; i++) {
		unsigned flag = n_slots == 1 ? _TRACE_STRUCT_S
				: i == 0 ? _TRACE_STRUCT_CB
				: i + 1 == n_slots ? _TRACE_STRUCT_CE
				: _TRACE_STRUCT_CC;
		traceevent_t *s = i == 0 ? reserve_timed(&cpu, &t) : tk_buffer_reserve(tk__trace_buffer_id);
		uint32_t d[2];
		if (s == NULL)
			break; /* no buffer: the rest of the event is dropped (and counted) */
		if (str == NULL) {
			d[0] = 2 * i < n_words ? words[2 * i] : 0;
			d[1] = 2 * i + 1 < n_words ? words[2 * i + 1] : 0;
		} else {
			payload_chunk(words, n_words, str, str_len + 1, i, d);
		}
		*s = (traceevent_t){ _TRACE_MAKE_CODE(cpu, flag, TRACE_CLASS_BITS(cls), code), { (uint32_t)t, d[0], d[1] } };
		tk_buffer_commit(tk__trace_buffer_id, s);
	}
	return 0;
}

int tk__trace_write_raw(uint32_t header, uint32_t time, uint32_t d0, uint32_t d1)
{
	tk__trace_session_catch_up();
	if (atomic_load(&tk__trace.pool) == NULL)
		return tk__trace_set_error(EFAULT, "INSERTEVENT: no trace buffers (ALLOCBUFFER)");
	if (!atomic_load(&trace_cfg()->started))
		return 0; /* the stream is closed: like any event, it is not recorded */
	put(header, time, d0, d1);
	return 0;
}

int tk__trace_emit_slow(unsigned cls, unsigned code, uint32_t d0, uint32_t d1)
{
	uint32_t w[2] = { d0, d1 };

	if (cls >= TRACE_N_CLASSES || code >= TRACE_N_CODES)
		return tk__trace_set_error(EINVAL, "class %u, code %u out of range (0-31, 0-1023)", cls, code);
	return tk__trace_write(cls, code, w, 2, NULL, 0, 1);
}

/* ---- QNX's convenience calls ----------------------------------------------------------- */

int trace_logi(int code, unsigned d1, unsigned d2)
{
	return TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, code, d1, d2);
}

int trace_vnlogf(int code, int max, const char *fmt, va_list ap)
{
	char stackbuf[256], *buf = stackbuf;
	va_list copy;
	size_t want;
	int len, rc;

	if (fmt == NULL)
		return tk__trace_set_error(EFAULT, "trace_logf: NULL format");
	if (code < 0 || code >= (int)TRACE_N_CODES)
		return tk__trace_set_error(EINVAL, "user event code %d out of range (0-1023)", code);
	if (max < 0 || max > TK_TRACE_LOGF_MAX)
		max = TK_TRACE_LOGF_MAX;
	va_copy(copy, ap);
	len = vsnprintf(stackbuf, sizeof(stackbuf), fmt, copy);
	va_end(copy);
	if (len < 0)
		return tk__trace_set_error(EINVAL, "trace_logf: bad format");
	want = (size_t)(len < max ? len : max);
	if (want >= sizeof(stackbuf)) {
		buf = malloc(want + 1);
		if (buf == NULL)
			return tk__trace_set_error(ENOMEM, "out of memory");
		vsnprintf(buf, want + 1, fmt, ap);
	}
	buf[want] = '\0';
	rc = tk__trace_write(TRACE_CLS(_TRACE_USER_C), (unsigned)code, NULL, 0, buf, want, 1);
	if (buf != stackbuf)
		free(buf);
	return rc;
}

int trace_logf(int code, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = trace_vnlogf(code, TK_TRACE_LOGF_MAX, fmt, ap);
	va_end(ap);
	return rc;
}

int trace_nlogf(int code, int max, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = trace_vnlogf(code, max, fmt, ap);
	va_end(ap);
	return rc;
}

int trace_logbc(int cls, int event, const void *data, size_t nbytes)
{
	uint32_t stackw[64] = { 0 }, *w = stackw;
	size_t nw = (nbytes + 3) / 4;
	int rc;

	if (cls < 0 || cls >= (int)TRACE_N_CLASSES || event < 0 || event >= (int)TRACE_N_CODES)
		return tk__trace_set_error(EINVAL, "class %d, event %d out of range (0-31, 0-1023)", cls, event);
	if (data == NULL && nbytes > 0)
		return tk__trace_set_error(EFAULT, "NULL data for %zu bytes", nbytes);
	if (nw > TRACE_MAX_WORDS)
		return tk__trace_set_error(EINVAL, "%zu bytes is more than one event holds", nbytes);
	if (nw > 64) {
		w = malloc(nw * 4);
		if (w == NULL)
			return tk__trace_set_error(ENOMEM, "out of memory");
	}
	if (nw > 0) {
		w[nw - 1] = 0;
		memcpy(w, data, nbytes);
	}
	rc = tk__trace_write((unsigned)cls, (unsigned)event, w, nw, NULL, 0, 1);
	if (w != stackw)
		free(w);
	return rc;
}

int trace_logb(int code, const void *data, size_t nbytes)
{
	return trace_logbc(TRACE_CLS(_TRACE_USER_C), code, data, nbytes);
}

/* A SYSTEM event carrying addresses: 32-bit words in fast mode, 64-bit in wide mode. */
static void emit_addresses(unsigned code, uintptr_t a, uintptr_t b, int two)
{
	const unsigned cls = TRACE_CLS(_TRACE_SYSTEM_C);

	if (trace_bit(trace_cfg()->wide[cls], code) && sizeof(uintptr_t) > 4) {
		uint64_t v[2] = { (uint64_t)a, (uint64_t)b };
		uint32_t w[4];
		memcpy(w, v, sizeof(v)); /* 64-bit values in memory order */
		tk__trace_write(cls, code, w, two ? 4 : 2, NULL, 0, 1);
	} else if (two) {
		tk_trace_emit(cls, code, (uint32_t)a, (uint32_t)b);
	} else {
		tk_trace_emit(cls, code, (uint32_t)a, 0);
	}
}

int trace_here(void)
{
	emit_addresses(_NTO_TRACE_SYS_ADDRESS, (uintptr_t)__builtin_return_address(0), 0, 0);
	return 0;
}

/* ---- -finstrument-functions --------------------------------------------------------------- */

void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
	if (trace_mode(TRACE_CLS(_TRACE_SYSTEM_C)) != TK__TRACE_OFF)
		emit_addresses(_NTO_TRACE_SYS_FUNC_ENTER, (uintptr_t)this_fn, (uintptr_t)call_site, 1);
}

void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
	if (trace_mode(TRACE_CLS(_TRACE_SYSTEM_C)) != TK__TRACE_OFF)
		emit_addresses(_NTO_TRACE_SYS_FUNC_EXIT, (uintptr_t)this_fn, (uintptr_t)call_site, 1);
}
