/* SPDX-License-Identifier: MIT */
/*
 * One time line (tracekit/collect.h): writing events with 64-bit ns times into a .kev file
 * with CONTROL TIME events per CPU (a timeline), and merging the traced programs' own events
 * (a session's buffers, or a program's .kev file) with the kernel's events of a file already
 * written, in time order across CPUs, with an owner marker (CONTROL BUFFER, THRUNNING) before
 * any event whose thread the file does not show running on its CPU. tracelogger's writing
 * side (docs/tracelogger.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracekit/collect.h"
#include "tracekit/traceparser.h"

#include "collect_internal.h"

#define TL_MAX_CPUS 64u
#define MERGE_MAX_SLOTS 1024u /* the largest event kept (16 KiB, one buffer) */

struct tk_collect_timeline {
	uint32_t msb[TL_MAX_CPUS];
	uint64_t msb_valid;
	int32_t cur_pid[TL_MAX_CPUS], cur_tid[TL_MAX_CPUS];
	uint64_t cur_valid;
};

static unsigned slot_cpu(const traceevent_t *s)
{
	return _NTO_TRACE_GETCPU(s->header) & (TL_MAX_CPUS - 1);
}

int tk_collect_timeline_new(tk_collect_timeline **out)
{
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? TK_OK : TK_ENOMEM;
}

void tk_collect_timeline_free(tk_collect_timeline *tl)
{
	free(tl);
}

void tk_collect_timeline_reset(tk_collect_timeline *tl)
{
	memset(tl, 0, sizeof(*tl));
}

int tk_collect_timeline_write(tk_collect_timeline *tl, tk_kev_writer *w, const traceevent_t *slots, size_t n,
			      uint64_t t_ns)
{
	unsigned cpu, cls, code;
	uint32_t msb = (uint32_t)(t_ns >> 32);
	int rc;

	if (n == 0)
		return TK_OK;
	cpu = slot_cpu(&slots[0]);
	if (!(tl->msb_valid & (1ull << cpu)) || tl->msb[cpu] != msb) {
		traceevent_t te;
		te.header = _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME);
		te.data[0] = (uint32_t)t_ns;
		te.data[1] = msb;
		te.data[2] = (uint32_t)t_ns;
		if ((rc = tk_kev_write_raw(w, &te, 1)) != TK_OK)
			return rc;
		tl->msb[cpu] = msb;
		tl->msb_valid |= 1ull << cpu;
	}
	cls = _NTO_TRACE_GETEVENT_C(slots[0].header);
	code = _NTO_TRACE_GETEVENT(slots[0].header);
	if (cls == _TRACE_PR_TH_C && code == STATE_RUNNING) {
		tl->cur_pid[cpu] = (int32_t)slots[0].data[1];
		tl->cur_tid[cpu] = (int32_t)slots[0].data[2];
		tl->cur_valid |= 1ull << cpu;
	}
	return tk_kev_write_raw(w, slots, n);
}

/* An owner marker (docs/tracelogger.md, "Owners"; header TRACEKIT_OWNER=cpu): a CONTROL
 * BUFFER, then a THRUNNING of the thread at time t on cpu. By QNX's per-CPU rule the
 * THRUNNING makes the thread the owner of the CPU's next events; the BUFFER before it tells
 * readers that it is no context switch (no running or ready time, no switch). */
int tk__collect_owner_marker(traceevent_t out[2], unsigned cpu, uint64_t t, int32_t pid, int32_t tid)
{
	cpu &= TL_MAX_CPUS - 1;
	out[0].header = _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER);
	out[0].data[0] = (uint32_t)t;
	out[0].data[1] = 0; /* sequence and count: none, it starts no buffer */
	out[0].data[2] = 0;
	out[1].header = _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, _TRACE_PR_TH_C, STATE_RUNNING);
	out[1].data[0] = (uint32_t)t;
	out[1].data[1] = (uint32_t)pid;
	out[1].data[2] = (uint32_t)tid;
	return 2;
}

/* An event of a known thread: an owner marker of it first when the file shows another thread
 * running on its CPU. */
static int write_owned(tk_collect_timeline *tl, tk_kev_writer *w, const traceevent_t *s, size_t n, uint64_t t,
		       int32_t pid, int32_t tid)
{
	int rc;

	if (tid != 0) {
		unsigned cpu = slot_cpu(s);
		if (!(tl->cur_valid & (1ull << cpu)) || tl->cur_pid[cpu] != pid || tl->cur_tid[cpu] != tid) {
			traceevent_t r[2];
			tk__collect_owner_marker(r, cpu, t, pid, tid);
			/* two events: the timeline notes the owner from the THRUNNING */
			if ((rc = tk_collect_timeline_write(tl, w, &r[0], 1, t)) != TK_OK ||
			    (rc = tk_collect_timeline_write(tl, w, &r[1], 1, t)) != TK_OK)
				return rc;
		}
	}
	return tk_collect_timeline_write(tl, w, s, n, t);
}

/* ---- the merge ----------------------------------------------------------------------- */

struct mev { /* one event of the merge: its time and where its slots are */
	uint64_t t;
	uint64_t seq;     /* order of arrival, to keep the sort stable */
	uint64_t off;     /* index of its first slot (kernel: in the mapped file; added: in uslots) */
	uint16_t n;
	uint8_t user;
	uint8_t weak;     /* a PROCDESTROY written only if the kernel's file has none for its pid */
	int32_t pid, tid; /* added events: the owner (tid 0: unknown) */
};

struct tk_collect_merge {
	tk_kev_writer *spool;           /* the added events, also written as they come */
	tk_collect_timeline spool_tl;
	int spool_err;
	struct mev *ev;
	size_t n, cap, n_user;
	traceevent_t *uslots;
	size_t nu, capu;
	uint64_t seq;
	uint64_t lo_ns, hi_ns;
	uint64_t max_slots; /* 0: no limit */
};

int tk_collect_merge_new(tk_collect_merge **out)
{
	tk_collect_merge *m = calloc(1, sizeof(*m));

	*out = m;
	if (m == NULL)
		return TK_ENOMEM;
	m->hi_ns = UINT64_MAX;
	return TK_OK;
}

void tk_collect_merge_free(tk_collect_merge *m)
{
	if (m == NULL)
		return;
	tk_kev_writer_abort(m->spool); /* its events are in the merged file: the copy goes */
	free(m->ev);
	free(m->uslots);
	free(m);
}

void tk_collect_merge_window(tk_collect_merge *m, uint64_t lo_ns, uint64_t hi_ns)
{
	m->lo_ns = lo_ns;
	m->hi_ns = hi_ns;
}

void tk_collect_merge_limit(tk_collect_merge *m, uint64_t max_slots)
{
	m->max_slots = max_slots;
}

size_t tk_collect_merge_count(const tk_collect_merge *m)
{
	return m->n_user;
}

static int mev_push(tk_collect_merge *m, const struct mev *e)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 4096;
		struct mev *g = realloc(m->ev, cap * sizeof(*g));
		if (g == NULL)
			return TK_ENOMEM;
		m->ev = g;
		m->cap = cap;
	}
	m->ev[m->n++] = *e;
	return TK_OK;
}

int tk_collect_merge_add(tk_collect_merge *m, const traceevent_t *slots, size_t n, uint64_t t_ns, int32_t pid,
			 int32_t tid)
{
	struct mev e;
	size_t i;

	if (n == 0 || n > MERGE_MAX_SLOTS)
		return TK_EINVAL;
	if (m->nu + n > m->capu) {
		size_t cap = m->capu ? m->capu * 2 : 4096;
		traceevent_t *g;
		while (cap < m->nu + n)
			cap *= 2;
		g = realloc(m->uslots, cap * sizeof(*g));
		if (g == NULL)
			return TK_ENOMEM;
		m->uslots = g;
		m->capu = cap;
	}
	for (i = 0; i < n; i++) {
		m->uslots[m->nu + i] = slots[i];
		m->uslots[m->nu + i].data[0] = (uint32_t)t_ns;
	}
	memset(&e, 0, sizeof(e));
	e.t = t_ns;
	e.seq = m->seq++;
	e.off = m->nu;
	e.n = (uint16_t)n;
	e.user = 1;
	e.pid = pid;
	e.tid = tid;
	if (mev_push(m, &e) != TK_OK)
		return TK_ENOMEM;
	if (m->spool != NULL && m->spool_err == TK_OK)
		m->spool_err = write_owned(&m->spool_tl, m->spool, &m->uslots[m->nu], n, t_ns, pid, tid);
	m->nu += n;
	m->n_user++;
	return TK_OK;
}

/*
 * The header of a file the merge writes: hdr with TRACEKIT_OWNER=cpu added when it has no
 * TRACEKIT_OWNER (the owner markers are the merge's, whoever made the header: a file of the
 * programs' events alone has no collector to declare them). *attrs: to free.
 */
static int owner_header(const tk_kev_header *hdr, tk_kev_header *out, tk_kev_attr **attrs)
{
	size_t i;

	*out = *hdr;
	*attrs = NULL;
	for (i = 0; i < hdr->n_attrs; i++)
		if (hdr->attrs[i].key != NULL && strcmp(hdr->attrs[i].key, "TRACEKIT_OWNER") == 0)
			return TK_OK;
	*attrs = malloc((hdr->n_attrs + 1) * sizeof(**attrs));
	if (*attrs == NULL)
		return TK_ENOMEM;
	if (hdr->n_attrs > 0)
		memcpy(*attrs, hdr->attrs, hdr->n_attrs * sizeof(**attrs));
	(*attrs)[hdr->n_attrs].key = "TRACEKIT_OWNER";
	(*attrs)[hdr->n_attrs].value = "cpu";
	out->attrs = *attrs;
	out->n_attrs = hdr->n_attrs + 1;
	return TK_OK;
}

int tk_collect_merge_spool(tk_collect_merge *m, const char *path, const tk_kev_header *hdr)
{
	tk_kev_header h;
	tk_kev_attr *attrs;
	int rc;

	if (m->spool != NULL)
		return TK_ESTATE;
	if ((rc = owner_header(hdr, &h, &attrs)) != TK_OK)
		return rc;
	rc = tk_kev_writer_open(&m->spool, path, &h, TK_KEV_NO_AUTO_TIME);
	free(attrs);
	if (rc == TK_OK)
		rc = tk_kev_writer_flush(m->spool);
	return rc;
}

int tk_collect_merge_flush(tk_collect_merge *m)
{
	if (m->spool == NULL)
		return TK_OK;
	if (m->spool_err == TK_OK)
		m->spool_err = tk_kev_writer_flush(m->spool);
	return m->spool_err;
}

const char *tk_collect_merge_spool_path(const tk_collect_merge *m)
{
	return m->spool != NULL ? tk_kev_writer_temp_path(m->spool) : NULL;
}

int tk_collect_merge_add_procdestroy(tk_collect_merge *m, unsigned cpu, uint64_t t_ns, int32_t pid)
{
	traceevent_t s = { _TRACE_MAKE_CODE(cpu & (TL_MAX_CPUS - 1), _TRACE_STRUCT_S, _TRACE_PR_TH_C,
					    _TRACE_PR_TH_DESTROY_P),
			   { 0, 0, (uint32_t)pid } };
	int rc = tk_collect_merge_add(m, &s, 1, t_ns, 0, 0);

	if (rc == TK_OK)
		m->ev[m->n - 1].weak = 1;
	return rc;
}

/* ---- a program's own .kev file ---------------------------------------------------------- */

struct load {
	tk_collect_merge *m;
	int err;
};

static int load_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct load *ld = ud;
	unsigned cls = _NTO_TRACE_GETEVENT_C(h);
	const unsigned *conv = traceparser_get_info(st, _TRACEPARSER_INFO_ENDIAN_CONV, NULL);
	traceevent_t slots[MERGE_MAX_SLOTS];
	unsigned nslots, i;
	int32_t pid, tid;

	(void)t;
	/* The program's own CONTROL events, its buffers' owner THRUNNING, its snapshot of
	 * threads and processes and its TraceEvent() KER_CALL pairs stay out: the kernel's
	 * record of them is in the file. */
	if (ld->err || buf == NULL || cls == _TRACE_CONTROL_C || cls == _TRACE_PR_TH_C || cls == _TRACE_KER_CALL_C)
		return 0;
	nslots = len <= 2 ? 1 : (len + 1) / 2;
	if (nslots > MERGE_MAX_SLOTS)
		return 0;
	for (i = 0; i < nslots; i++) {
		unsigned flag = nslots == 1 ? _TRACE_STRUCT_S
				: i == 0 ? _TRACE_STRUCT_CB : i + 1 == nslots ? _TRACE_STRUCT_CE : _TRACE_STRUCT_CC;
		uint32_t w0 = 2 * i < len ? buf[2 * i] : 0, w1 = 2 * i + 1 < len ? buf[2 * i + 1] : 0;
		if (conv != NULL && *conv) {
			w0 = __builtin_bswap32(w0);
			w1 = __builtin_bswap32(w1);
		}
		slots[i].header = (h & ~(0x3u << 30)) | flag;
		slots[i].data[1] = w0;
		slots[i].data[2] = w1;
	}
	if (!tk_traceparser_owner(st, &pid, &tid))
		pid = tid = 0;
	ld->err = tk_collect_merge_add(ld->m, slots, nslots, tk_traceparser_ns(st), pid, tid);
	return 0;
}

int tk_collect_merge_load_kev(tk_collect_merge *m, const char *path, char *why, size_t whycap)
{
	struct load ld = { m, 0 };
	struct traceparser_state *st = traceparser_init(NULL);
	int rc = TK_OK;

	if (whycap > 0)
		why[0] = '\0';
	if (st == NULL) {
		snprintf(why, whycap, "%s: out of memory", path);
		return TK_ENOMEM;
	}
	for (unsigned ic = 0; ic < 32; ic++)
		tk_traceparser_cs_internal(st, &ld, load_cb, ic, 0, 1023);
	if (traceparser(st, NULL, path) != 0) {
		const char *msg = traceparser_get_info(st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		snprintf(why, whycap, "%s: %s", path, msg != NULL ? msg : "cannot read");
		rc = TK_EFORMAT;
	}
	traceparser_destroy(&st);
	if (ld.err != 0) {
		snprintf(why, whycap, "%s: %s", path, tk_strerror(ld.err));
		rc = ld.err;
	}
	return rc;
}

/* ---- writing the merge --------------------------------------------------------------------- */

static int cmp_mev(const void *a, const void *b)
{
	const struct mev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Indexes the kernel events of a file written with a timeline (events from slot 0 of `slot`). */
static int index_kernel(tk_collect_merge *m, const traceevent_t *slot, size_t nslots)
{
	uint32_t msb[TL_MAX_CPUS] = { 0 };
	size_t i = 0;

	while (i < nslots) {
		unsigned h = slot[i].header, cpu = _NTO_TRACE_GETCPU(h) & (TL_MAX_CPUS - 1);
		size_t j = i + 1;
		struct mev e;
		if (_NTO_TRACE_GETEVENT_C(h) == _TRACE_CONTROL_C && _NTO_TRACE_GETEVENT(h) == _TRACE_CONTROL_TIME &&
		    _TRACE_GET_STRUCT(h) == _TRACE_STRUCT_S) {
			msb[cpu] = slot[i].data[1];
			i++;
			continue;
		}
		if (_TRACE_GET_STRUCT(h) == _TRACE_STRUCT_CB) {
			while (j < nslots && j - i < MERGE_MAX_SLOTS &&
			       _TRACE_GET_STRUCT(slot[j - 1].header) != _TRACE_STRUCT_CE)
				j++;
		} else if (_TRACE_GET_STRUCT(h) != _TRACE_STRUCT_S) {
			i++; /* a stray part: cannot be in a file written with a timeline */
			continue;
		}
		memset(&e, 0, sizeof(e));
		e.t = ((uint64_t)msb[cpu] << 32) | slot[i].data[0];
		e.seq = m->seq++;
		e.off = i;
		e.n = (uint16_t)(j - i);
		if (mev_push(m, &e) != TK_OK)
			return TK_ENOMEM;
		i = j;
	}
	return TK_OK;
}

static int is_procdestroy(const traceevent_t *s)
{
	return _NTO_TRACE_GETEVENT_C(s->header) == _TRACE_PR_TH_C &&
	       _NTO_TRACE_GETEVENT(s->header) == _TRACE_PR_TH_DESTROY_P;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int write_merged(tk_collect_merge *m, tk_kev_writer *w, const traceevent_t *kslots)
{
	tk_collect_timeline tl;
	uint32_t *gone = NULL; /* pids the kernel's file says ended */
	size_t i, n_gone = 0, cap_gone = 0;
	uint64_t slots = 0, kvalid = 0;
	int32_t kpid[TL_MAX_CPUS], ktid[TL_MAX_CPUS];
	int rc = TK_OK;

	memset(&tl, 0, sizeof(tl));
	for (i = 0; i < m->n; i++) {
		const struct mev *e = &m->ev[i];
		if (e->user || !is_procdestroy(&kslots[e->off]))
			continue;
		if (n_gone == cap_gone) {
			uint32_t *g = realloc(gone, (cap_gone = cap_gone ? cap_gone * 2 : 64) * sizeof(*g));
			if (g == NULL) {
				free(gone);
				return TK_ENOMEM;
			}
			gone = g;
		}
		gone[n_gone++] = kslots[e->off].data[2];
	}
	if (n_gone > 1)
		qsort(gone, n_gone, sizeof(*gone), cmp_u32);
	if (m->n > 1)
		qsort(m->ev, m->n, sizeof(m->ev[0]), cmp_mev);
	for (i = 0; i < m->n; i++) {
		const struct mev *e = &m->ev[i];
		const traceevent_t *s = e->user ? &m->uslots[e->off] : &kslots[e->off];
		if (e->user && (e->t < m->lo_ns || e->t > m->hi_ns))
			continue;
		if (e->weak && n_gone > 0 && bsearch(&s->data[2], gone, n_gone, sizeof(*gone), cmp_u32) != NULL)
			continue; /* the kernel recorded this end already */
		if (m->max_slots > 0 && slots + e->n > m->max_slots)
			break; /* the -n limit: the first buffers' worth of events, in time order */
		slots += e->n;
		if (e->user) {
			rc = write_owned(&tl, w, s, e->n, e->t, e->pid, e->tid);
		} else {
			/* A kernel event belongs to the last THRUNNING (a switch or a marker) of its
			 * CPU in the kernel's file: a program's event merged in between, of another
			 * thread, must not take it over. */
			unsigned cpu = slot_cpu(s), cls = _NTO_TRACE_GETEVENT_C(s->header);
			if (cls == _TRACE_PR_TH_C && _NTO_TRACE_GETEVENT(s->header) == STATE_RUNNING &&
			    (_TRACE_GET_STRUCT(s->header) == _TRACE_STRUCT_S ||
			     _TRACE_GET_STRUCT(s->header) == _TRACE_STRUCT_CB)) { /* -w: a combine event */
				kpid[cpu] = (int32_t)s->data[1];
				ktid[cpu] = (int32_t)s->data[2];
				kvalid |= 1ull << cpu;
			}
			if (cls != _TRACE_CONTROL_C && cls != _TRACE_PR_TH_C && (kvalid & (1ull << cpu)))
				rc = write_owned(&tl, w, s, e->n, e->t, kpid[cpu], ktid[cpu]);
			else
				rc = tk_collect_timeline_write(&tl, w, s, e->n, e->t);
		}
		if (rc != TK_OK)
			break;
	}
	free(gone);
	return rc;
}

int tk_collect_merge_write(tk_collect_merge *m, const char *kernel_path, uint64_t hdr_bytes, const char *out_path,
			   const tk_kev_header *hdr, char *why, size_t whycap)
{
	int fd = kernel_path != NULL ? open(kernel_path, O_RDONLY | O_CLOEXEC) : -1;
	struct stat sb;
	void *map = NULL;
	size_t nk = 0;
	tk_kev_writer *w = NULL;
	int rc;

	if (whycap > 0)
		why[0] = '\0';
	memset(&sb, 0, sizeof(sb));
	if (kernel_path != NULL && (fd < 0 || fstat(fd, &sb) != 0)) {
		snprintf(why, whycap, "%s: cannot re-read it: %s", kernel_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return TK_EIO;
	}
	if ((uint64_t)sb.st_size > hdr_bytes) {
		map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			snprintf(why, whycap, "%s: cannot map it: %s", kernel_path, strerror(errno));
			close(fd);
			return TK_EIO;
		}
		nk = ((uint64_t)sb.st_size - hdr_bytes) / sizeof(traceevent_t);
	}
	if (fd >= 0)
		close(fd);
	const traceevent_t *ks = map != NULL ? (const traceevent_t *)((const char *)map + hdr_bytes) : NULL;
	rc = index_kernel(m, ks, nk);
	if (rc == TK_OK) {
		tk_kev_header h;
		tk_kev_attr *attrs;
		if ((rc = owner_header(hdr, &h, &attrs)) == TK_OK)
			rc = tk_kev_writer_open(&w, out_path, &h, TK_KEV_NO_AUTO_TIME);
		free(attrs);
	}
	if (rc == TK_OK) {
		rc = write_merged(m, w, ks);
		if (rc == TK_OK) {
			rc = tk_kev_writer_close(w);
			if (rc != TK_OK)
				snprintf(why, whycap, "%s: %s", out_path, tk_strerror(rc));
		} else {
			snprintf(why, whycap, "%s: %s", out_path, tk_kev_writer_errmsg(w)[0] ? tk_kev_writer_errmsg(w)
											  : tk_strerror(rc));
			tk_kev_writer_abort(w);
		}
	} else if (why[0] == '\0') {
		snprintf(why, whycap, "%s: %s", out_path, tk_strerror(rc));
	}
	/* the kernel's events leave the index: the merge can be written again */
	{
		size_t k = 0;
		for (size_t i = 0; i < m->n; i++)
			if (m->ev[i].user)
				m->ev[k++] = m->ev[i];
		m->n = k;
	}
	if (map != NULL)
		munmap(map, (size_t)sb.st_size);
	return rc;
}
