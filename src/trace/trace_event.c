/* SPDX-License-Identifier: MIT */
/*
 * TraceEvent(): QNX's trace control call, in user space. Buffer and execution control,
 * the fast/wide mask, the static rules filter (classes, events, process and thread IDs),
 * the dynamic rules filter (event and class handlers) and the insert modes. Configuration
 * runs under one mutex and then recomputes, per class, the mode the inline emitter reads:
 * off, fast (every event passes), or filtered (the slow path checks each event). The lock
 * order (handler lock, configuration lock, buffer locks) is in trace_internal.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace_internal.h"

struct tk__trace_config tk__trace_local_config; /* outside a session (1.3 MB of zero pages until used) */

struct trace_state tk__trace = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.handler_lock = PTHREAD_MUTEX_INITIALIZER,
	.cfg = &tk__trace_local_config,
};

TK_API _Atomic unsigned char tk__trace_mode[TRACE_N_CLASSES];
TK_API _Atomic(_Atomic unsigned char *) tk__trace_modes = tk__trace_mode;
TK_API tk_buffer_id tk__trace_buffer_id = TK_BUFFER_ID_INVALID;
TK_API __thread struct tk__trace_thread tk__trace_tls __attribute__((tls_model("initial-exec")));

static __thread char tls_errmsg[256];

int tk__trace_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tls_errmsg, sizeof(tls_errmsg), fmt, ap);
	va_end(ap);
	errno = err;
	return -1;
}

const char *tk_trace_errmsg(void)
{
	return tls_errmsg;
}

int tk__trace_ensure_buffer_id(void)
{
	if (tk__trace_buffer_id == TK_BUFFER_ID_INVALID) {
		tk_buffer_config cfg = {
			.record_size = sizeof(traceevent_t),
			.buffer_size = TRACE_BUFFER_BYTES,
			.full = tk__trace_buffer_full,
			.acquire = tk__trace_buffer_acquire,
			.release = tk__trace_buffer_release,
			.start = tk__trace_buffer_start,
			.position = tk__trace_buffer_position,
			.dropped = tk__trace_buffer_dropped,
		};
		tk_buffer_id id = tk_buffer_define_config(&cfg);
		if (id == TK_BUFFER_ID_INVALID)
			return -1;
		tk__trace_buffer_id = id;
	}
	return 0;
}

/* ---- the per-class mode the inline emitter reads ---------------------------------------- */

uint32_t tk__trace_handler_classes(void)
{
	uint32_t mask = 0;
	unsigned cls;

	for (cls = 0; cls < TRACE_N_CLASSES; cls++)
		if (tk__trace.n_handlers[cls] != 0)
			mask |= 1u << cls;
	return mask;
}

void tk__trace_recompute_modes(void)
{
	struct trace_state *s = &tk__trace;
	tk_session *ss = atomic_load(&s->sess);

	if (ss != NULL) {
		/* the modes of every attached process: any of them may have changed the session */
		struct tk__sess_slot *sl = tk__session_slot(ss);
		if (sl != NULL)
			atomic_store(&sl->handler_classes, tk__trace_handler_classes());
		tk__session_lock(ss);
		tk__session_changed(ss);
		tk__session_unlock(ss);
		return;
	}
	tk__trace_modes_compute(trace_cfg(), atomic_load(&s->pool) != NULL && tk__trace_buffer_id != TK_BUFFER_ID_INVALID,
				tk__trace_handler_classes(), 1, tk__trace_mode);
	atomic_fetch_add(&trace_cfg()->generation, 1);
}

/* ---- configuration helpers (lock held) ----------------------------------------------- */

static void set_bits(_Atomic uint64_t bits[TRACE_N_CLASSES][TRACE_BITMAP_WORDS], const tk_kev_range *r, int n, int on)
{
	int i;
	unsigned code;

	for (i = 0; i < n; i++) {
		for (code = r[i].first; code <= r[i].last; code++) {
			uint64_t bit = 1ull << (code & 63);
			if (on)
				atomic_fetch_or(&bits[r[i].cls][code >> 6], bit);
			else
				atomic_fetch_and(&bits[r[i].cls][code >> 6], ~bit);
		}
	}
}

static void set_all_bits(_Atomic uint64_t bits[TRACE_N_CLASSES][TRACE_BITMAP_WORDS], int on)
{
	unsigned cls, w;

	for (cls = 0; cls < TRACE_N_CLASSES; cls++)
		for (w = 0; w < TRACE_BITMAP_WORDS; w++)
			atomic_store(&bits[cls][w], on ? ~0ull : 0ull);
}

static struct trace_code *codes(void)
{
	struct trace_code *c = atomic_load(&tk__trace.codes);

	if (c == NULL) {
		c = calloc(TRACE_N_CLASSES * TRACE_N_CODES, sizeof(*c));
		if (c != NULL)
			atomic_store(&tk__trace.codes, c); /* published once, never freed */
	}
	return c;
}

/* Updates the handler flag of a code and the per-class counts. */
static void update_special(struct trace_code *c, unsigned cls)
{
	int special = c->class_handler.fn != NULL || c->event_handler.fn != NULL;
	int was = atomic_exchange(&c->special, special);

	if (special && !was)
		tk__trace.n_handlers[cls]++;
	else if (!special && was)
		tk__trace.n_handlers[cls]--;
}

/* 1 if the class or event rule of a code is set. */
static int has_rule(struct trace_filter f[2])
{
	return atomic_load(&f[0].pid_set) || atomic_load(&f[0].tid_set) || atomic_load(&f[1].pid_set) ||
	       atomic_load(&f[1].tid_set);
}

/*
 * The code ranges of (class, event). For THREAD, VTHREAD and PROCESS the event is a mask
 * (_NTO_TRACE_THRUNNING | _NTO_TRACE_THREADY, ...): every bit set is one event, and each
 * must be one of the class's.
 */
static int map_events(unsigned ext, unsigned event, tk_kev_range r[TRACE_MAX_RANGES])
{
	int n = 0, k;

	if ((ext == _NTO_TRACE_THREAD || ext == _NTO_TRACE_VTHREAD || ext == _NTO_TRACE_PROCESS) &&
	    (event & (event - 1)) != 0) {
		unsigned bits = event;
		while (bits != 0) {
			unsigned bit = bits & -bits;
			k = tk_kev_map_events(ext, bit, bit, TK_KEV_MAP_INT_VECTORS, r + n);
			if (k < 0 || n + k > (int)TRACE_MAX_RANGES)
				return tk__trace_set_error(EINVAL, "class %u has no event 0x%x (in mask 0x%x)", ext, bit,
							   event);
			n += k;
			bits &= bits - 1;
		}
		return n;
	}
	{
		tk_kev_range four[4];
		n = tk_kev_map_events(ext, event, event, TK_KEV_MAP_INT_VECTORS, four);
		if (n < 0)
			return tk__trace_set_error(EINVAL, "class %u has no event %u", ext, event);
		memcpy(r, four, (size_t)n * sizeof(*r));
	}
	return n;
}

static int map_class(unsigned ext, tk_kev_range r[TRACE_MAX_RANGES])
{
	int n = tk_kev_map_class(ext, r);
	if (n < 0)
		return tk__trace_set_error(EINVAL, "unknown class %u", ext);
	return n;
}

enum filter_op { SET_PID, SET_TID, CLEAR_PID, CLEAR_TID };

static int apply_filter(const tk_kev_range *r, int n, int event_level, enum filter_op op, int pid, int tid)
{
	struct tk__trace_config *cfg = trace_cfg();
	int i;
	unsigned code;

	for (i = 0; i < n; i++) {
		for (code = r[i].first; code <= r[i].last; code++) {
			struct trace_filter *pair = cfg->filters[r[i].cls * TRACE_N_CODES + code];
			struct trace_filter *f = &pair[event_level ? 1 : 0];
			int was = has_rule(pair), now;
			switch (op) {
			case SET_PID:
				atomic_store(&f->pid, pid);
				atomic_store(&f->pid_set, 1);
				break;
			case SET_TID:
				atomic_store(&f->tid_pid, pid);
				atomic_store(&f->tid, tid);
				atomic_store(&f->tid_set, 1);
				break;
			case CLEAR_PID:
				atomic_store(&f->pid_set, 0);
				break;
			case CLEAR_TID:
				atomic_store(&f->tid_set, 0);
				break;
			}
			now = has_rule(pair);
			if (now && !was)
				atomic_fetch_add(&cfg->n_filtered[r[i].cls], 1);
			else if (!now && was)
				atomic_fetch_sub(&cfg->n_filtered[r[i].cls], 1);
		}
	}
	return 0;
}

static int set_handler(const tk_kev_range *r, int n, int event_level, int (*fn)(event_data_t *),
		       event_data_t *data)
{
	struct trace_code *all = codes();
	int i, found = 0;
	unsigned code;

	/* handler_lock is held (trace_event()): no handler runs meanwhile, so once this
	 * returns, a deleted handler and its event_data_t are no longer used */
	if (all == NULL)
		return tk__trace_set_error(ENOMEM, "out of memory for handlers");
	for (i = 0; i < n; i++) {
		for (code = r[i].first; code <= r[i].last; code++) {
			struct trace_code *c = &all[r[i].cls * TRACE_N_CODES + code];
			struct trace_handler *h = event_level ? &c->event_handler : &c->class_handler;
			if (h->fn != NULL)
				found = 1;
			h->fn = fn;
			h->data = data;
		}
	}
	for (i = 0; i < n; i++)
		for (code = r[i].first; code <= r[i].last; code++)
			update_special(&all[r[i].cls * TRACE_N_CODES + code], r[i].cls);
	if (fn == NULL && !found)
		return tk__trace_set_error(EFAULT, "no %s handler to delete (already deleted?)",
					   event_level ? "event" : "class");
	return 0;
}

/* ---- buffers ---------------------------------------------------------------------------- */

/* Why the buffers cannot be replaced now (lock held), or NULL. */
static const char *buffers_busy(void)
{
	if (atomic_load(&trace_cfg()->started))
		return "while tracing runs: STOP first";
	if (tk__trace_drainer() != NULL)
		return "while a logger uses the buffers: stop it first";
	return NULL;
}

/* Makes pool the trace buffers (lock held, buffers not busy). */
static void install_pool(tk_pool *pool)
{
	struct trace_state *s = &tk__trace;
	tk_pool *old = atomic_load(&s->pool);

	if (old != NULL) {
		/* Threads still point into the old buffers: detach them (their events are lost,
		 * as QNX documents), and keep the old memory mapped one more round so a writer
		 * that raced with us never writes into unmapped memory. */
		tk_buffer_discard_all(tk__trace_buffer_id);
		tk_pool_destroy(s->retired);
		s->retired = old;
	}
	atomic_store(&s->pool, pool);
}

static int alloc_buffers(unsigned n, void **start)
{
	const char *busy;
	tk_pool *pool;
	int rc;

	if (atomic_load(&tk__trace.sess) != NULL) {
		/* attached: the session's logger owns the buffers (docs/sessions.md) */
		if (start != NULL)
			*start = tk_pool_buffer(atomic_load(&tk__trace.pool), 0);
		return 0;
	}
	busy = buffers_busy();
	if (busy != NULL)
		return tk__trace_set_error(EFAULT, "ALLOCBUFFER %s", busy);
	if (n == 0 || n > TRACE_MAX_BUFFERS)
		return tk__trace_set_error(EINVAL, "ALLOCBUFFER: %u buffers (1 to %u)", n, TRACE_MAX_BUFFERS);
	if (tk__trace_ensure_buffer_id() != 0)
		return tk__trace_set_error(ENOMEM, "no buffer definition left for tracing");
	rc = tk_pool_create(&pool, n, TRACE_BUFFER_BYTES);
	if (rc != TK_OK)
		return tk__trace_set_error(ENOMEM, "cannot allocate %u trace buffers of %u bytes: %s", n,
					   TRACE_BUFFER_BYTES, tk_strerror(rc));
	install_pool(pool);
	if (start != NULL)
		*start = tk_pool_buffer(pool, 0);
	return 0;
}

size_t tk_trace_pool_size(unsigned n_buffers)
{
	if (n_buffers == 0 || n_buffers > TRACE_MAX_BUFFERS)
		return 0;
	return tk_pool_region_size(n_buffers, TRACE_BUFFER_BYTES);
}

int tk_trace_pool_init(void *region, size_t region_size, unsigned n_buffers)
{
	struct trace_state *s = &tk__trace;
	tk_pool *pool;
	int rc;

	if (region == NULL || tk_trace_pool_size(n_buffers) == 0 || region_size < tk_trace_pool_size(n_buffers))
		return TK_EINVAL;
	tk__trace_session_decline();
	tk__trace_drainer_yield();
	pthread_mutex_lock(&s->lock);
	if (buffers_busy() != NULL) {
		pthread_mutex_unlock(&s->lock);
		return TK_ESTATE;
	}
	if (tk__trace_ensure_buffer_id() != 0) {
		pthread_mutex_unlock(&s->lock);
		return TK_ENOMEM;
	}
	rc = tk_pool_init(&pool, region, region_size, n_buffers, TRACE_BUFFER_BYTES);
	if (rc == TK_OK) {
		install_pool(pool);
		tk__trace_recompute_modes();
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static int dealloc_buffers(void)
{
	struct trace_state *s = &tk__trace;
	tk_pool *old = atomic_load(&s->pool);
	const char *busy;

	if (atomic_load(&s->sess) != NULL)
		return 0; /* attached: the session's logger owns the buffers */
	busy = buffers_busy();

	if (old == NULL)
		return tk__trace_set_error(EFAULT, "DEALLOCBUFFER: no buffers allocated");
	if (busy != NULL)
		return tk__trace_set_error(EFAULT, "DEALLOCBUFFER %s", busy);
	atomic_store(&s->pool, NULL);
	tk_buffer_discard_all(tk__trace_buffer_id);
	tk_pool_destroy(s->retired);
	s->retired = old;
	return 0;
}

struct count_ctx {
	tk_pool *pool;
	int64_t n;
};

static void count_partial(void *buf, uint64_t n, void *ctx)
{
	struct count_ctx *c = ctx;
	int64_t idx = tk_pool_index(c->pool, buf);

	if (idx >= 0)
		c->n += (int64_t)n - (int64_t)tk_pool_desc_of(c->pool, (uint32_t)idx)->flushed;
}

static int query_events(void)
{
	struct count_ctx c = { atomic_load(&tk__trace.pool), 0 };
	tk_pool_stats st;

	if (c.pool == NULL)
		return tk__trace_set_error(EFAULT, "QUERYEVENTS: no buffers allocated");
	tk_buffer_for_each_thread(tk__trace_buffer_id, count_partial, &c);
	tk_pool_get_stats(c.pool, &st);
	c.n += st.records_stored;
	return c.n > INT32_MAX ? INT32_MAX : (int)c.n;
}

/* ---- inserts ---------------------------------------------------------------------------- */

static int check_class_code(int cls, int code)
{
	if (cls < 0 || cls >= (int)TRACE_N_CLASSES)
		return tk__trace_set_error(EINVAL, "internal class %d out of range (0-31)", cls);
	if (code < 0 || code >= (int)TRACE_N_CODES)
		return tk__trace_set_error(EINVAL, "event code %d out of range (0-1023)", code);
	return 0;
}

static int insert_words(int cls, int code, const unsigned *buf, unsigned len)
{
	if (check_class_code(cls, code) != 0)
		return -1;
	if (buf == NULL && len > 0)
		return tk__trace_set_error(EFAULT, "NULL buffer for %u words", len);
	if (len > TRACE_MAX_WORDS)
		return tk__trace_set_error(EINVAL, "%u words is more than one event holds (%u)", len,
					   TRACE_MAX_WORDS);
	return tk__trace_write((unsigned)cls, (unsigned)code, buf, len, NULL, 0, 1);
}

/* ---- the control call ------------------------------------------------------------------ */

static int config(int mode, va_list ap)
{
	struct tk__trace_config *s = trace_cfg();
	tk_kev_range r[TRACE_MAX_RANGES];
	int n, a, b, c;

	switch (mode) {
	case _NTO_TRACE_ADDALLCLASSES:
	case _NTO_TRACE_DELALLCLASSES:
		set_all_bits(s->enabled, mode == _NTO_TRACE_ADDALLCLASSES);
		return 0;
	case _NTO_TRACE_SETALLCLASSESFAST:
	case _NTO_TRACE_SETALLCLASSESWIDE:
		set_all_bits(s->wide, mode == _NTO_TRACE_SETALLCLASSESWIDE);
		return 0;
	case _NTO_TRACE_ADDCLASS:
	case _NTO_TRACE_DELCLASS:
	case _NTO_TRACE_SETCLASSFAST:
	case _NTO_TRACE_SETCLASSWIDE:
		n = map_class((unsigned)va_arg(ap, int), r);
		if (n < 0)
			return -1;
		if (mode == _NTO_TRACE_ADDCLASS || mode == _NTO_TRACE_DELCLASS)
			set_bits(s->enabled, r, n, mode == _NTO_TRACE_ADDCLASS);
		else
			set_bits(s->wide, r, n, mode == _NTO_TRACE_SETCLASSWIDE);
		return 0;
	case _NTO_TRACE_ADDEVENT:
	case _NTO_TRACE_DELEVENT:
	case _NTO_TRACE_SETEVENTFAST:
	case _NTO_TRACE_SETEVENTWIDE:
		a = va_arg(ap, int);
		n = map_events((unsigned)a, (unsigned)va_arg(ap, int), r);
		if (n < 0)
			return -1;
		if (mode == _NTO_TRACE_ADDEVENT || mode == _NTO_TRACE_DELEVENT)
			set_bits(s->enabled, r, n, mode == _NTO_TRACE_ADDEVENT);
		else
			set_bits(s->wide, r, n, mode == _NTO_TRACE_SETEVENTWIDE);
		return 0;
	case _NTO_TRACE_SETCLASSPID:
	case _NTO_TRACE_CLRCLASSPID:
	case _NTO_TRACE_CLRCLASSTID:
		n = map_class((unsigned)va_arg(ap, int), r);
		if (n < 0)
			return -1;
		if (mode == _NTO_TRACE_SETCLASSPID)
			return apply_filter(r, n, 0, SET_PID, va_arg(ap, int), 0);
		return apply_filter(r, n, 0, mode == _NTO_TRACE_CLRCLASSPID ? CLEAR_PID : CLEAR_TID, 0, 0);
	case _NTO_TRACE_SETCLASSTID:
		n = map_class((unsigned)va_arg(ap, int), r);
		if (n < 0)
			return -1;
		a = va_arg(ap, int);
		b = va_arg(ap, int);
		return apply_filter(r, n, 0, SET_TID, a, b);
	case _NTO_TRACE_SETEVENTPID:
	case _NTO_TRACE_SETEVENTTID:
	case _NTO_TRACE_CLREVENTPID:
	case _NTO_TRACE_CLREVENTTID:
		a = va_arg(ap, int);
		n = map_events((unsigned)a, (unsigned)va_arg(ap, int), r);
		if (n < 0)
			return -1;
		if (mode == _NTO_TRACE_SETEVENTPID)
			return apply_filter(r, n, 1, SET_PID, va_arg(ap, int), 0);
		if (mode == _NTO_TRACE_SETEVENTTID) {
			b = va_arg(ap, int);
			c = va_arg(ap, int);
			return apply_filter(r, n, 1, SET_TID, b, c);
		}
		return apply_filter(r, n, 1, mode == _NTO_TRACE_CLREVENTPID ? CLEAR_PID : CLEAR_TID, 0, 0);
	case _NTO_TRACE_ADDEVENTHANDLER: {
		int (*fn)(event_data_t *);
		event_data_t *data;
		a = va_arg(ap, int);
		n = map_events((unsigned)a, (unsigned)va_arg(ap, int), r);
		if (n < 0)
			return -1;
		fn = va_arg(ap, int (*)(event_data_t *));
		data = va_arg(ap, event_data_t *);
		if (fn == NULL || data == NULL)
			return tk__trace_set_error(EFAULT, "ADDEVENTHANDLER: NULL %s", fn == NULL ? "handler" : "event_data_t");
		return set_handler(r, n, 1, fn, data);
	}
	case _NTO_TRACE_DELEVENTHANDLER:
		a = va_arg(ap, int);
		n = map_events((unsigned)a, (unsigned)va_arg(ap, int), r);
		if (n < 0)
			return -1;
		return set_handler(r, n, 1, NULL, NULL);
	case _NTO_TRACE_ADDCLASSEVHANDLER: {
		int (*fn)(event_data_t *);
		event_data_t *data;
		n = map_class((unsigned)va_arg(ap, int), r);
		if (n < 0)
			return -1;
		fn = va_arg(ap, int (*)(event_data_t *));
		data = va_arg(ap, event_data_t *);
		if (fn == NULL || data == NULL)
			return tk__trace_set_error(EFAULT, "ADDCLASSEVHANDLER: NULL %s",
						   fn == NULL ? "handler" : "event_data_t");
		return set_handler(r, n, 0, fn, data);
	}
	case _NTO_TRACE_DELCLASSEVHANDLER:
		n = map_class((unsigned)va_arg(ap, int), r);
		if (n < 0)
			return -1;
		return set_handler(r, n, 0, NULL, NULL);
	case _NTO_TRACE_ALLOCBUFFER: {
		unsigned count = va_arg(ap, unsigned);
		void **start = va_arg(ap, void **);
		return alloc_buffers(count, start);
	}
	case _NTO_TRACE_DEALLOCBUFFER:
		return dealloc_buffers();
	case _NTO_TRACE_SETRINGMODE:
	case _NTO_TRACE_SETLINEARMODE:
		atomic_store(&s->ring, mode == _NTO_TRACE_SETRINGMODE);
		tk__trace_drainer_wake();
		return 0;
	case _NTO_TRACE_SKIPBUFFER:
	case _NTO_TRACE_OVERWRITEBUFFER:
		atomic_store(&s->overwrite, mode == _NTO_TRACE_OVERWRITEBUFFER);
		return 0;
	default:
		return tk__trace_set_error(ENOTSUP, "unknown TraceEvent() mode 0x%08x", (unsigned)mode);
	}
}

/*
 * TraceEvent() is this user-space kernel's call: with the KERCALL class on, it is traced
 * like QNX traces its kernel calls, as KER_CALL TRACE_EVENT (mode, first argument) and
 * KER_EXIT TRACE_EVENT (return value, or -1 and errno). QNX encodes the number of
 * arguments, the mode included, in the mode's top 4 bits.
 */
static void trace_kercall(int mode, va_list ap)
{
	uint32_t w[2] = { (uint32_t)mode, 0 };

	if (((unsigned)mode >> 28) >= 2) {
		va_list cp;
		va_copy(cp, ap);
		w[1] = (uint32_t)va_arg(cp, int);
		va_end(cp);
	}
	tk__trace_write(TRACE_CLS(_TRACE_KER_CALL_C), __KER_TRACE_EVENT, w, 2, NULL, 0, 1);
}

static void trace_kerexit(int rc, int err)
{
	uint32_t w[2] = { (uint32_t)rc, rc == -1 ? (uint32_t)err : 0 };

	tk__trace_write(TRACE_CLS(_TRACE_KER_CALL_C), _TRACE_MAX_KER_CALL_NUM + __KER_TRACE_EVENT, w, 2, NULL, 0, 1);
	errno = err;
}

static int trace_event(int mode, va_list ap);

int TraceEvent(int mode, ...)
{
	va_list ap;
	int rc;

	va_start(ap, mode);
	tk__trace_session_attach_once(); /* TRACEKIT_SESSION, or a live default session */
	tk__trace_session_catch_up();
	if (__builtin_expect(trace_mode(TRACE_CLS(_TRACE_KER_CALL_C)) != TK__TRACE_OFF, 0))
		trace_kercall(mode, ap);
	rc = trace_event(mode, ap);
	if (__builtin_expect(trace_mode(TRACE_CLS(_TRACE_KER_CALL_C)) != TK__TRACE_OFF, 0))
		trace_kerexit(rc, errno);
	va_end(ap);
	return rc;
}

static int trace_event(int mode, va_list ap)
{
	struct trace_state *s = &tk__trace;
	int rc, a, b, c, d;

	switch (mode) {
	/* inserts: no configuration lock (they may come from handlers) */
	case _NTO_TRACE_INSERTSUSEREVENT: {
		unsigned w[2];
		a = va_arg(ap, int);
		w[0] = va_arg(ap, unsigned);
		w[1] = va_arg(ap, unsigned);
		rc = insert_words(TRACE_CLS(_TRACE_USER_C), a, w, 2);
		break;
	}
	case _NTO_TRACE_INSERTCUSEREVENT: {
		const unsigned *buf;
		unsigned len;
		a = va_arg(ap, int);
		buf = va_arg(ap, const unsigned *);
		len = va_arg(ap, unsigned);
		rc = insert_words(TRACE_CLS(_TRACE_USER_C), a, buf, len);
		break;
	}
	case _NTO_TRACE_INSERTUSRSTREVENT: {
		const char *str;
		a = va_arg(ap, int);
		str = va_arg(ap, const char *);
		if (check_class_code(TRACE_CLS(_TRACE_USER_C), a) != 0) {
			rc = -1;
		} else if (str == NULL) {
			rc = tk__trace_set_error(EFAULT, "INSERTUSRSTREVENT: NULL string");
		} else {
			size_t len = strlen(str);
			rc = len >= TK_KEV_MAX_PAYLOAD
				     ? tk__trace_set_error(EINVAL, "string of %zu bytes is longer than an event holds", len)
				     : tk__trace_write(TRACE_CLS(_TRACE_USER_C), (unsigned)a, NULL, 0, str, len, 1);
		}
		break;
	}
	case _NTO_TRACE_INSERTSCLASSEVENT: {
		unsigned w[2];
		a = va_arg(ap, int);
		b = va_arg(ap, int);
		w[0] = va_arg(ap, unsigned);
		w[1] = va_arg(ap, unsigned);
		rc = insert_words(a, b, w, 2);
		break;
	}
	case _NTO_TRACE_INSERTCCLASSEVENT: {
		const unsigned *buf;
		unsigned len;
		a = va_arg(ap, int);
		b = va_arg(ap, int);
		buf = va_arg(ap, const unsigned *);
		len = va_arg(ap, unsigned);
		rc = insert_words(a, b, buf, len);
		break;
	}
	case _NTO_TRACE_INSERTEVENT:
		a = va_arg(ap, int);
		b = va_arg(ap, int);
		c = va_arg(ap, int);
		d = va_arg(ap, int);
		rc = tk__trace_write_raw((uint32_t)a, (uint32_t)b, (uint32_t)c, (uint32_t)d);
		break;
	case _NTO_TRACE_QUERYEVENTS:
		rc = query_events();
		break;
	case _NTO_TRACE_QUERYVERSION:
		rc = 0x0102; /* the 1.02 interface of QNX 6.4 */
		break;
	case _NTO_TRACE_QUERYSUPPORT:
		rc = _NTO_TRACE_SUPPINSTR;
		break;
	case _NTO_TRACE_FLUSHBUFFER: {
		const struct tk__trace_drainer *dr = tk__trace_drainer();
		if (atomic_load(&s->pool) == NULL)
			rc = tk__trace_set_error(EFAULT, "FLUSHBUFFER: no buffers allocated");
		else if (dr == NULL)
			rc = tk__trace_set_error(EFAULT, "FLUSHBUFFER: no logger to flush to (tk_logger_start)");
		else
			rc = dr->flush(dr->ctx) == TK_OK ? 0 : tk__trace_set_error(EIO, "%s", dr->errmsg(dr->ctx));
		break;
	}
	case _NTO_TRACE_START:
	case _NTO_TRACE_STARTNOSTATE:
		pthread_mutex_lock(&s->lock);
		if (atomic_load(&s->pool) == NULL) {
			rc = tk__trace_set_error(EFAULT, "START before ALLOCBUFFER: no trace buffers");
		} else if (atomic_load(&s->sess) != NULL) {
			tk__trace_session_start(mode == _NTO_TRACE_START); /* every attached process */
			rc = 0;
		} else {
			if (!atomic_load(&trace_cfg()->started))
				tk__trace_new_session();
			atomic_store(&trace_cfg()->started, 1);
			tk__trace_recompute_modes();
			rc = 0;
		}
		pthread_mutex_unlock(&s->lock);
		if (rc == 0 && mode == _NTO_TRACE_START)
			tk__trace_emit_state(); /* outside the lock: handlers may call TraceEvent() */
		break;
	case _NTO_TRACE_STOP:
		pthread_mutex_lock(&s->lock);
		{
			tk_session *ss = atomic_load(&s->sess);
			if (ss != NULL)
				tk__session_lock(ss);
			atomic_store(&trace_cfg()->started, 0);
			if (ss != NULL)
				tk__session_unlock(ss);
		}
		tk__trace_recompute_modes();
		pthread_mutex_unlock(&s->lock);
		rc = 0;
		{
			const struct tk__trace_drainer *dr = tk__trace_drainer();
			if (dr != NULL && dr->stopped != NULL)
				dr->stopped(dr->ctx);
		}
		break;
	default: {
		/* Handler changes wait until no handler runs (see the lock order in
		 * trace_internal.h), except from a handler, whose thread holds the lock already. */
		int handlers = (mode == _NTO_TRACE_ADDEVENTHANDLER || mode == _NTO_TRACE_DELEVENTHANDLER ||
				mode == _NTO_TRACE_ADDCLASSEVHANDLER || mode == _NTO_TRACE_DELCLASSEVHANDLER) &&
			       !tk__trace_tls.in_handler;
		tk_session *ss;
		if ((mode == _NTO_TRACE_ALLOCBUFFER || mode == _NTO_TRACE_DEALLOCBUFFER) && atomic_load(&s->sess) == NULL)
			tk__trace_drainer_yield(); /* the program's own buffers replace TRACEKIT_LOG's */
		if (handlers)
			pthread_mutex_lock(&s->handler_lock);
		pthread_mutex_lock(&s->lock);
		ss = atomic_load(&s->sess);
		if (ss != NULL) /* the session's configuration: one writer at a time, in any process */
			tk__session_lock(ss);
		rc = config(mode, ap);
		if (ss != NULL)
			tk__session_unlock(ss);
		tk__trace_recompute_modes();
		pthread_mutex_unlock(&s->lock);
		if (handlers)
			pthread_mutex_unlock(&s->handler_lock);
		break;
	}
	}
	return rc;
}
