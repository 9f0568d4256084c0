/* SPDX-License-Identifier: MIT */
/*
 * tb5_bind.c: binding (seed 000 3.3, 5.10, 6.1): associates each raw sample with the module
 * that held its instruction pointer in its process at its time, with its process (a pid
 * whose executable loads again is a new process) and its thread; derives the process/thread
 * section when the file has none; stores the result as bind streams (objects 32..34 of the
 * stream) on writable handles, in memory otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "common/tk_hash.h"
#include "tb5/tb5_internal.h"


/* A loaded module interval. */
struct mod_iv {
	uint64_t start, end; /* [start, end) addresses */
	uint64_t t_load, t_unload; /* [t_load, t_unload) */
	uint64_t index; /* into the module section */
	int tsc; /* times are TSC (else sample numbers) */
};

/* Modules of one process (or the global ones), sorted by start. */
struct mod_list {
	uint32_t pid;
	struct mod_iv *iv;
	uint64_t *starts; /* iv[i].start, packed for the search */
	uint32_t *bucket; /* bucket b: intervals with start below min + (b << shift) */
	uint64_t min;
	unsigned shift;
	size_t nb;
	const struct mod_iv *last; /* the interval that matched last */
	size_t n, cap;
	uint64_t max_len;
};

/* A process generation: pid with the time its executable loaded. */
struct gen {
	uint32_t pid;
	uint64_t start;
	uint64_t name, path;
	uint64_t when;
};

/* What the binder knows of one pid: its modules and its generations (a slot of a hash table). */
struct pid_slot {
	uint32_t pid;
	uint32_t used;
	struct mod_list *list; /* NULL: no module of its own */
	size_t gen_first, gen_n; /* its generations: gens[gen_first .. gen_first + gen_n) */
};

/* What the last sample of one CPU bound to (most samples repeat it). */
#define BIND_CPU_CACHES 64
struct bind_cpu_cache {
	const struct pid_slot *ps;
	const struct mod_iv *iv;
	const struct mod_list *iv_list;
	uint64_t tid_pidx, tid_idx;
	uint32_t tid;
	int tid_valid;
};

struct binder {
	struct tb5_handle *h;
	struct tb5_stream *st;
	struct mod_list *lists; /* one per pid, sorted by pid */
	size_t n_lists;
	struct mod_list global;
	struct gen *gens; /* sorted by pid, then start */
	size_t n_gens;
	int derive; /* derive processes and threads */
	/* threads: hash (pid_index, tid) -> tid index */
	struct tk__u64map tmap;
	size_t n_tids;
	TBRW_TID *tids;
	size_t tids_cap;
	/* output */
	DATA_BIND_STRUCT *out;
	size_t out_len, out_cap;
	struct tb5_obj *out_obj;
	uint64_t n_samples;
	TBRW_U32 rc;
	/* pid -> slot, open addressing; samples look their pid up here, never by search */
	struct pid_slot *pids;
	size_t pid_mask;
	struct bind_cpu_cache cpu[BIND_CPU_CACHES];
};

static int cmp_iv(const void *a, const void *b)
{
	const struct mod_iv *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->t_load < y->t_load ? -1 : x->t_load > y->t_load;
}

static int cmp_list(const void *a, const void *b)
{
	const struct mod_list *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_gen(const void *a, const void *b)
{
	const struct gen *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int push_iv(struct mod_list *l, const struct mod_iv *iv)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 8;
		struct mod_iv *n = realloc(l->iv, ncap * sizeof *n);
		if (n == NULL)
			return -1;
		l->iv = n;
		l->cap = ncap;
	}
	l->iv[l->n++] = *iv;
	if (iv->end - iv->start > l->max_len)
		l->max_len = iv->end - iv->start;
	return 0;
}

/* The slot of pid, created when create is set; NULL when absent. */
static struct pid_slot *pid_slot_get(struct binder *b, uint32_t pid, int create)
{
	size_t k = tk__hash_u32(pid, b->pid_mask);

	while (b->pids[k].used) {
		if (b->pids[k].pid == pid)
			return &b->pids[k];
		k = tk__hash_next(k, b->pid_mask);
	}
	if (!create)
		return NULL;
	b->pids[k] = (struct pid_slot){.pid = pid, .used = 1};
	return &b->pids[k];
}

/* Builds the pid table from the sorted module lists and generations. */
static TBRW_U32 pid_table_build(struct binder *b)
{
	size_t cap = tk__hash_cap(b->n_lists + b->n_gens, 16);

	b->pids = calloc(cap, sizeof *b->pids);
	if (b->pids == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
	b->pid_mask = cap - 1;
	for (size_t k = 0; k < b->n_lists; k++)
		pid_slot_get(b, b->lists[k].pid, 1)->list = &b->lists[k];
	for (size_t g = 0; g < b->n_gens; g++) {
		struct pid_slot *ps = pid_slot_get(b, b->gens[g].pid, 1);
		if (ps->gen_n++ == 0)
			ps->gen_first = g; /* gens are sorted by pid: a pid's generations are adjacent */
	}
	return VT_SUCCESS;
}

static int iv_holds(const struct mod_iv *v, uint64_t ip, uint64_t t_tsc, uint64_t t_idx)
{
	/* branch-free: the time base differs per module */
	uint64_t mask = (uint64_t)0 - (uint64_t)v->tsc;
	uint64_t t = (t_tsc & mask) | (t_idx & ~mask);
	return (ip - v->start < v->end - v->start) & (t - v->t_load < v->t_unload - v->t_load);
}

static const struct mod_iv *find_iv(struct mod_list *l, uint64_t ip, uint64_t t_tsc, uint64_t t_idx)
{
	const uint64_t *s = l->starts;
	size_t n = l->n, base = 0, lo;

	if (n == 0)
		return NULL;
	/* samples come in runs from the same module */
	if (l->last != NULL && iv_holds(l->last, ip, t_tsc, t_idx))
		return l->last;
	/* the bucket of ip bounds the candidates to a few intervals */
	if (ip < l->min)
		return NULL;
	size_t b = (size_t)((ip - l->min) >> l->shift);
	if (b >= l->nb)
		b = l->nb - 1;
	base = l->bucket[b];
	size_t hi = l->bucket[b + 1];
	if (hi - base > 8) {
		/* a crowded bucket: branch-free binary search for the last start <= ip */
		n = hi - base;
		while (n > 1) {
			size_t half = n / 2;
			base = s[base + half] <= ip ? base + half : base;
			n -= half;
		}
		lo = s[base] <= ip ? base + 1 : base;
	} else {
		lo = base;
		while (lo < hi && s[lo] <= ip)
			lo++;
	}
	while (lo-- > 0) {
		const struct mod_iv *v = &l->iv[lo];
		if (iv_holds(v, ip, t_tsc, t_idx)) {
			l->last = v;
			return v;
		}
		if (ip - v->start >= l->max_len)
			break;
	}
	return NULL;
}

static int gen_index(const struct binder *b, uint32_t pid, uint64_t t, uint64_t *out)
{
	size_t lo = 0, hi = b->n_gens;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->gens[mid].pid < pid || (b->gens[mid].pid == pid && b->gens[mid].start <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo-1: last generation of pid with start <= t; else the first generation of pid */
	if (lo > 0 && b->gens[lo - 1].pid == pid) {
		*out = lo - 1;
		return 1;
	}
	if (lo < b->n_gens && b->gens[lo].pid == pid) {
		*out = lo;
		return 1;
	}
	return 0;
}

/* The generation of ps's pid at time t: the last one started by t, else the first. */
static size_t slot_gen(const struct binder *b, const struct pid_slot *ps, uint64_t t)
{
	size_t lo = ps->gen_first, n = ps->gen_n;

	if (n == 1 || t < b->gens[lo].start)
		return lo;
	/* pid reuse: branch-free search for the last start <= t (gens[lo].start <= t holds) */
	while (n > 1) {
		size_t half = n / 2;
		lo = b->gens[lo + half].start <= t ? lo + half : lo;
		n -= half;
	}
	return lo;
}

static TBRW_U32 add_gen(struct binder *b, uint32_t pid, uint64_t start, uint64_t name, uint64_t path, size_t *cap)
{
	if (b->n_gens == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct gen *n = realloc(b->gens, ncap * sizeof *n);
		if (n == NULL)
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
		b->gens = n;
		*cap = ncap;
	}
	b->gens[b->n_gens++] = (struct gen){.pid = pid, .start = start, .name = name, .path = path, .when = start};
	return VT_SUCCESS;
}

static TBRW_U32 tid_map_from_section(struct binder *b);

/* Builds the module intervals and the process generations. */
static TBRW_U32 prepare(struct binder *b)
{
	struct tb5_handle *h = b->h;
	size_t gcap = 0;
	TBRW_U32 rc;

	for (size_t i = 0; i < h->n_modules; i++) {
		const TBRW_MODULE *m = &h->modules[i];
		struct mod_iv iv;
		struct mod_list *l;
		if (m->module_flags & TBRW_MODULE_UNLOADED)
			continue;
		iv.start = m->module_load_address;
		iv.end = m->module_load_address + m->module_length;
		if (iv.end < iv.start)
			iv.end = UINT64_MAX;
		iv.t_load = m->module_event_when;
		iv.t_unload = (m->module_unload_tsc != 0 && m->module_unload_tsc != UINT64_MAX) ? m->module_unload_tsc
												  : UINT64_MAX;
		if (iv.t_unload < iv.t_load)
			iv.t_unload = iv.t_load; /* unloaded before it loaded: never matches */
		iv.tsc = (m->module_flags & TBRW_MODULE_TSC_USED) != 0;
		iv.index = i;
		/* an unload record for the same process and address ends the interval */
		for (size_t j = i + 1; j < h->n_modules && iv.t_unload == UINT64_MAX; j++) {
			const TBRW_MODULE *u = &h->modules[j];
			if ((u->module_flags & TBRW_MODULE_UNLOADED) && u->module_associated_pid == m->module_associated_pid &&
			    u->module_load_address == m->module_load_address && u->module_event_when >= iv.t_load)
				iv.t_unload = u->module_event_when;
			else if (!(u->module_flags & TBRW_MODULE_UNLOADED) &&
				 u->module_associated_pid == m->module_associated_pid &&
				 u->module_load_address == m->module_load_address && u->module_event_when > iv.t_load)
				break;
		}
		if (m->module_flags & TBRW_MODULE_GLOBAL_LOAD) {
			l = &b->global;
		} else {
			l = NULL;
			for (size_t k = 0; k < b->n_lists; k++)
				if (b->lists[k].pid == m->module_associated_pid) {
					l = &b->lists[k];
					break;
				}
			if (l == NULL) {
				struct mod_list *nl = realloc(b->lists, (b->n_lists + 1) * sizeof *nl);
				if (nl == NULL)
					return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
				b->lists = nl;
				l = &b->lists[b->n_lists++];
				memset(l, 0, sizeof *l);
				l->pid = m->module_associated_pid;
			}
		}
		if (push_iv(l, &iv) != 0)
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
		/* a process starts when its executable loads; a second executable load of the same pid
		 * is a new process (pid reuse) */
		if (b->derive && !(m->module_flags & TBRW_MODULE_GLOBAL_LOAD) && (m->module_flags & TBRW_MODULE_IS_EXE)) {
			rc = add_gen(b, m->module_associated_pid, iv.t_load, m->module_name.soi_uniqueid,
				     m->module_path.soi_uniqueid, &gcap);
			if (rc != VT_SUCCESS)
				return rc;
		}
	}
	if (b->n_lists > 1)
		qsort(b->lists, b->n_lists, sizeof *b->lists, cmp_list);
	for (size_t k = 0; k <= b->n_lists; k++) {
		struct mod_list *l = k < b->n_lists ? &b->lists[k] : &b->global;
		if (l->n > 1)
			qsort(l->iv, l->n, sizeof(struct mod_iv), cmp_iv);
		l->starts = malloc((l->n ? l->n : 1) * sizeof *l->starts);
		if (l->starts == NULL)
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
		for (size_t i = 0; i < l->n; i++)
			l->starts[i] = l->iv[i].start;
		/* about four buckets per interval over the span of the start addresses */
		l->nb = 16;
		while (l->nb < 4 * l->n)
			l->nb *= 2;
		l->min = l->n ? l->starts[0] : 0;
		uint64_t span = l->n ? l->starts[l->n - 1] - l->min : 0;
		l->shift = 0;
		while (l->shift < 63 && (span >> l->shift) >= l->nb)
			l->shift++;
		l->bucket = malloc((l->nb + 1) * sizeof *l->bucket);
		if (l->bucket == NULL)
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
		size_t idx = 0;
		for (size_t bk = 0; bk < l->nb; bk++) {
			uint64_t low = l->min + ((uint64_t)bk << l->shift);
			while (idx < l->n && l->starts[idx] < low)
				idx++;
			l->bucket[bk] = (uint32_t)idx;
		}
		l->bucket[l->nb] = (uint32_t)l->n;
	}
	if (b->derive) {
		/* processes that load modules but no executable, at time 0 */
		for (size_t k = 0; k < b->n_lists; k++) {
			int found = 0;
			for (size_t g = 0; g < b->n_gens && !found; g++)
				found = b->gens[g].pid == b->lists[k].pid;
			if (!found && (rc = add_gen(b, b->lists[k].pid, 0, 0, 0, &gcap)) != VT_SUCCESS)
				return rc;
		}
		if (b->n_gens > 1)
			qsort(b->gens, b->n_gens, sizeof *b->gens, cmp_gen);
	} else {
		/* the written process section: generations in file order of pid_event_when */
		for (size_t i = 0; i < h->pt.n_pids; i++) {
			rc = add_gen(b, h->pt.pids[i].pid_id, h->pt.pids[i].pid_event_when, 0, 0, &gcap);
			if (rc != VT_SUCCESS)
				return rc;
			b->gens[b->n_gens - 1].when = i; /* original index */
		}
		if (b->n_gens > 1)
			qsort(b->gens, b->n_gens, sizeof *b->gens, cmp_gen);
		if ((rc = tid_map_from_section(b)) != VT_SUCCESS)
			return rc;
	}
	if (b->n_gens >= UINT32_MAX) /* thread keys hold a process index in 32 bits */
		return tk__tb5_fail(TBRW_TOO_BIG, "%s: too many processes to bind", h->path);
	return pid_table_build(b);
}

/* Index of a process generation in the output process array. */
static uint64_t pid_out(const struct binder *b, uint64_t g)
{
	return b->derive ? g : b->gens[g].when;
}

/* The written thread section, keyed by (pid, tid); the first entry of a pair wins. */
static TBRW_U32 tid_map_from_section(struct binder *b)
{
	const struct tb5_pt *pt = &b->h->pt;

	if (tk__u64map_reserve(&b->tmap, pt->n_tids, 1024) != 0)
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
	for (size_t i = 0; i < pt->n_tids; i++) {
		uint64_t key = (uint64_t)pt->tids[i].tid_associated_pid << 32 | pt->tids[i].tid_id;
		size_t k;
		if (tk__u64map_find(&b->tmap, key, &k) == UINT64_MAX)
			tk__u64map_put(&b->tmap, k, key, i);
	}
	return VT_SUCCESS;
}

/*
 * The thread index of a sample: from the written thread section by pid and tid, or, when
 * deriving, the thread (tid within process generation pidx) created on its first sample.
 */
static uint64_t tid_index(struct binder *b, uint64_t pidx, uint32_t pid, uint32_t tid, uint64_t when)
{
	uint64_t key = (b->derive ? pidx : pid) << 32 | tid, v;
	size_t k;

	v = tk__u64map_find(&b->tmap, key, &k);
	if (v != UINT64_MAX || !b->derive)
		return v; /* TBRW_BIND_NO_INDEX when the section lacks the thread */
	if (tk__u64map_reserve(&b->tmap, b->n_tids + 1, 1024) != 0) {
		b->rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
		return TBRW_BIND_NO_INDEX;
	}
	(void)tk__u64map_find(&b->tmap, key, &k); /* the map may have grown */
	if (b->n_tids == b->tids_cap) {
		size_t ncap = b->tids_cap ? b->tids_cap * 2 : 64;
		TBRW_TID *nt = realloc(b->tids, ncap * sizeof *nt);
		if (nt == NULL) {
			b->rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
			return TBRW_BIND_NO_INDEX;
		}
		b->tids = nt;
		b->tids_cap = ncap;
	}
	b->tids[b->n_tids] = (TBRW_TID){.tid_size = sizeof(TBRW_TID), .tid_associated_pid = pid, .tid_id = tid,
					.tid_flags = TBRW_TID_DERIVED, .tid_event_when = when,
					.reserved1 = (uint32_t)pidx};
	tk__u64map_put(&b->tmap, k, key, b->n_tids);
	return b->n_tids++;
}

static TBRW_U32 flush_out(struct binder *b)
{
	TBRW_U32 rc = VT_SUCCESS;

	if (b->out_obj != NULL && b->out_len > 0) {
		unsigned char *p = (unsigned char *)b->out;
		for (size_t i = 0; i < b->out_len; i++) {
			DATA_BIND_STRUCT v = b->out[i];
			tb5_put64(p + i * 24, v.module_index);
			tb5_put64(p + i * 24 + 8, v.pid_index);
			tb5_put64(p + i * 24 + 16, v.tid_index);
		}
		rc = tk__tb5_write_chunk(b->h, b->out_obj, CK_DATA, b->out_obj->id, b->out_obj->total, (uint32_t)b->out_len,
				     b->out, b->out_len * sizeof *b->out);
		b->out_obj->total += b->out_len;
		b->out_len = 0;
	}
	return rc;
}

static TBRW_U32 bind_fn(void *ctx, unsigned char *p, uint64_t first, uint32_t n)
{
	struct binder *b = ctx;
	const uint32_t rec = b->st->record_size, pc = b->st->pc_offset, ts = b->st->ts_offset;

	for (uint32_t i = 0; i < n; i++, p += rec) {
		TBRW_SampleRecordPC s;
		uint64_t t_tsc, t_idx = first + i, ip, pidx = TBRW_BIND_NO_INDEX;
		const struct mod_iv *v = NULL;
		const struct pid_slot *ps;
		struct bind_cpu_cache *cc;
		DATA_BIND_STRUCT *o;

		memcpy(&s, p + pc, sizeof s);
		t_tsc = t_idx;
		if (ts != UINT32_MAX)
			memcpy(&t_tsc, p + ts, 8);
		ip = s.IA64PC ? s.iip : s.eip;
		/* Samples of several CPUs interleave, each CPU's in runs of one thread in one
		 * module: the caches are per CPU. */
		cc = &b->cpu[s.cpuNum & (BIND_CPU_CACHES - 1)];
		ps = cc->ps;
		if (ps == NULL || ps->pid != s.pidRecIndex)
			ps = cc->ps = pid_slot_get(b, s.pidRecIndex, 0);
		if (ps != NULL && ps->list != NULL) {
			if (cc->iv != NULL && cc->iv_list == ps->list && iv_holds(cc->iv, ip, t_tsc, t_idx))
				v = cc->iv;
			else if ((v = find_iv(ps->list, ip, t_tsc, t_idx)) != NULL) {
				cc->iv = v;
				cc->iv_list = ps->list;
			}
		}
		if (v == NULL)
			v = find_iv(&b->global, ip, t_tsc, t_idx);
		if (ps != NULL && ps->gen_n > 0)
			pidx = pid_out(b, slot_gen(b, ps, t_tsc));
		if (b->out_len == b->out_cap) {
			if (b->out_obj != NULL) {
				b->rc = flush_out(b);
			} else {
				size_t ncap = b->out_cap ? b->out_cap * 2 : 65536;
				DATA_BIND_STRUCT *no = realloc(b->out, ncap * sizeof *no);
				if (no == NULL)
					b->rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
				else {
					b->out = no;
					b->out_cap = ncap;
				}
			}
			if (b->rc != VT_SUCCESS)
				return b->rc;
		}
		o = &b->out[b->out_len++];
		o->module_index = v != NULL ? v->index : TBRW_BIND_NO_INDEX;
		o->pid_index = pidx;
		if (pidx == TBRW_BIND_NO_INDEX) {
			o->tid_index = TBRW_BIND_NO_INDEX;
		} else if (cc->tid_valid && cc->tid_pidx == pidx && cc->tid == s.tid) {
			o->tid_index = cc->tid_idx;
		} else {
			o->tid_index = tid_index(b, pidx, s.pidRecIndex, s.tid, t_tsc);
			cc->tid_valid = b->rc == VT_SUCCESS;
			cc->tid_pidx = pidx;
			cc->tid = s.tid;
			cc->tid_idx = o->tid_index;
		}
		if (b->rc != VT_SUCCESS)
			return b->rc;
	}
	b->n_samples += n;
	return TRUE;
}

void tk__tb5_bind_free(struct tb5_handle *h)
{
	free(h->bind_module);
	free(h->bind_tid);
	h->bind_module = NULL;
	h->bind_tid = NULL;
	h->n_bind_module = h->n_bind_tid = 0;
}

static void binder_free(struct binder *b)
{
	for (size_t k = 0; k < b->n_lists; k++) {
		free(b->lists[k].iv);
		free(b->lists[k].starts);
		free(b->lists[k].bucket);
	}
	free(b->lists);
	free(b->global.iv);
	free(b->global.starts);
	free(b->global.bucket);
	free(b->gens);
	free(b->pids);
	tk__u64map_free(&b->tmap);
	free(b->tids);
	free(b->out);
}

static int obj_done(struct tb5_handle *h, uint32_t id)
{
	struct tb5_obj *o = tk__tb5_obj_find(h, id);
	return o != NULL && o->state == OBJ_DONE;
}

static TBRW_U32 check_stream(struct tb5_handle *h, TBRW_U32 s, struct tb5_stream **out)
{
	struct tb5_stream *st = s < TB5_MAX_STREAMS ? tk__tb5_stream_at(h, s, 0) : NULL;
	if (st == NULL || !obj_done(h, OBJ_STREAM_SEC(s, TBRW_DATA_DESCRIPTION_SECTION)))
		return tk__tb5_fail(TBRW_INVALID_STREAM, "%s: stream %u does not exist", h->path, s);
	*out = st;
	return VT_SUCCESS;
}

TBRW_U32 TBRW_is_bound(TBRW_PTR ptr, TBRW_U32 data_stream, TBRW_U32 *is_bound)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	TBRW_U32 rc;

	if (h == NULL || is_bound == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_is_bound: NULL argument");
	rc = check_stream(h, data_stream, &st);
	if (rc != VT_SUCCESS)
		return rc;
	*is_bound = st->bound_in_memory || obj_done(h, OBJ_STREAM(data_stream, OBJ_BIND_DATA));
	return VT_SUCCESS;
}

static TBRW_U32 entry_size(TBRW_PTR ptr, TBRW_U32 s, TBRW_U32 *out, TBRW_U32 size)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	TBRW_U32 rc;

	if (h == NULL || out == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_size_of_*_bind_entry: NULL argument");
	rc = check_stream(h, s, &st);
	if (rc == VT_SUCCESS)
		*out = size;
	return rc;
}

TBRW_U32 TBRW_get_size_of_data_bind_entry(TBRW_PTR ptr, TBRW_U32 data_stream, TBRW_U32 *sizeof_data_bind_entry)
{
	return entry_size(ptr, data_stream, sizeof_data_bind_entry, sizeof(DATA_BIND_STRUCT));
}
TBRW_U32 TBRW_get_size_of_module_bind_entry(TBRW_PTR ptr, TBRW_U32 data_stream, TBRW_U32 *sizeof_module_bind_entry)
{
	return entry_size(ptr, data_stream, sizeof_module_bind_entry, sizeof(MODULE_BIND_STRUCT));
}
TBRW_U32 TBRW_get_size_of_tid_bind_entry(TBRW_PTR ptr, TBRW_U32 data_stream, TBRW_U32 *sizeof_tid_bind_entry)
{
	return entry_size(ptr, data_stream, sizeof_tid_bind_entry, sizeof(TID_BIND_STRUCT));
}

/* Writes an array of u64 as a data-like object of 8-byte records. */
static TBRW_U32 write_u64_obj(struct tb5_handle *h, uint32_t id, const uint64_t *v, size_t n)
{
	struct tb5_obj *o;
	TBRW_U32 rc = VT_SUCCESS;
	size_t per = TB5_CHUNK_TARGET / 8;
	unsigned char *le;

	pthread_mutex_lock(&h->lock);
	o = tk__tb5_obj_get(h, id);
	pthread_mutex_unlock(&h->lock);
	if (o == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	le = malloc((n < per ? (n ? n : 1) : per) * 8);
	if (le == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	for (size_t i = 0; i < n && rc == VT_SUCCESS; i += per) {
		size_t k = n - i < per ? n - i : per;
		for (size_t j = 0; j < k; j++) /* the file is little-endian whatever the host */
			tb5_put64(le + j * 8, v[i + j]);
		rc = tk__tb5_write_chunk(h, o, CK_DATA, id, i, (uint32_t)k, le, k * 8);
	}
	free(le);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_write_chunk(h, o, CK_END, id, n, 0, NULL, 0);
	if (rc == VT_SUCCESS) {
		o->total = n;
		o->state = OBJ_DONE;
	}
	return rc;
}

static TBRW_U32 drop_if(struct tb5_handle *h, uint32_t id)
{
	struct tb5_obj *o = tk__tb5_obj_find(h, id);
	if (o == NULL || o->state == OBJ_ABSENT)
		return VT_SUCCESS;
	return tk__tb5_obj_drop(h, o);
}

TBRW_U32 TBRW_unbind(TBRW_PTR ptr, TBRW_U32 data_stream)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	TBRW_U32 rc, bound;

	if (h == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_unbind: NULL handle");
	rc = TBRW_is_bound(ptr, data_stream, &bound);
	if (rc != VT_SUCCESS)
		return rc;
	if (!bound)
		return tk__tb5_fail(TBRW_NOT_BOUND, "%s: stream %u is not bound", h->path, data_stream);
	st = h->streams[data_stream];
	free(st->bind_data);
	st->bind_data = NULL;
	st->n_bind_data = 0;
	st->bound_in_memory = 0;
	if (h->writable) {
		if ((rc = drop_if(h, OBJ_STREAM(data_stream, OBJ_BIND_DATA))) != VT_SUCCESS ||
		    (rc = drop_if(h, OBJ_STREAM(data_stream, OBJ_BIND_MODULE))) != VT_SUCCESS ||
		    (rc = drop_if(h, OBJ_STREAM(data_stream, OBJ_BIND_TID))) != VT_SUCCESS)
			return rc;
		if (obj_done(h, OBJ_DERIVED_PT)) {
			int other = 0;
			for (uint32_t s = 0; s < h->n_streams; s++)
				other |= s != data_stream && obj_done(h, OBJ_STREAM(s, OBJ_BIND_DATA));
			if (!other) {
				if ((rc = drop_if(h, OBJ_GLOBAL(TBRW_PROCESS_THREAD_SECTION))) != VT_SUCCESS ||
				    (rc = drop_if(h, OBJ_DERIVED_PT)) != VT_SUCCESS)
					return rc;
				h->pt.loaded = 0;
			}
		}
	}
	if (h->bound_stream == (int)data_stream) {
		h->bound_stream = -1;
		tk__tb5_bind_free(h);
	}
	return VT_SUCCESS;
}

TBRW_U32 TBRW_dobind(TBRW_PTR ptr, TBRW_U32 data_stream)
{
	struct tb5_handle *h = ptr;
	struct binder b;
	struct tb5_stream *st = NULL;
	struct tb5_obj *data;
	uint64_t *mb = NULL, *tb = NULL;
	TBRW_U32 rc, bound;

	if (h == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_dobind: NULL handle");
	rc = check_stream(h, data_stream, &st);
	if (rc != VT_SUCCESS)
		return rc;
	data = tk__tb5_obj_find(h, OBJ_STREAM_SEC(data_stream, TBRW_DATA_SECTION));
	if (data == NULL || data->state != OBJ_DONE)
		return tk__tb5_fail(TBRW_BIND_FAILED, "%s: stream %u has no complete data section", h->path, data_stream);
	rc = tk__tb5_stream_layout(h, data_stream);
	if (rc != VT_SUCCESS)
		return rc;
	if (st->pc_offset == UINT32_MAX)
		return tk__tb5_fail(TBRW_BIND_FAILED, "%s: stream %u has no ST_LEGACY_SAMPLE_RECORD (TBRW_SampleRecordPC) "
						  "in its records",
				h->path, data_stream);
	rc = tk__tb5_load_modules(h);
	if (rc != VT_SUCCESS)
		return tk__tb5_fail(TBRW_BIND_FAILED, "%s: binding needs the module section", h->path);
	if (TBRW_is_bound(ptr, data_stream, &bound) == VT_SUCCESS && bound) {
		rc = TBRW_unbind(ptr, data_stream);
		if (rc != VT_SUCCESS)
			return rc;
	}
	memset(&b, 0, sizeof b);
	b.h = h;
	b.st = st;
	b.derive = !obj_done(h, OBJ_GLOBAL(TBRW_PROCESS_THREAD_SECTION)) || obj_done(h, OBJ_DERIVED_PT);
	if (!b.derive && (rc = tk__tb5_load_pt(h)) != VT_SUCCESS)
		return rc;
	if (b.derive && obj_done(h, OBJ_DERIVED_PT) && h->writable) {
		/* re-derive: another stream's derivation is replaced by this one */
		if ((rc = drop_if(h, OBJ_GLOBAL(TBRW_PROCESS_THREAD_SECTION))) != VT_SUCCESS ||
		    (rc = drop_if(h, OBJ_DERIVED_PT)) != VT_SUCCESS)
			return rc;
	}
	rc = prepare(&b);
	if (rc == VT_SUCCESS && h->writable) {
		pthread_mutex_lock(&h->lock);
		b.out_obj = tk__tb5_obj_get(h, OBJ_STREAM(data_stream, OBJ_BIND_DATA));
		pthread_mutex_unlock(&h->lock);
		if (b.out_obj == NULL)
			rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
		else {
			b.out_cap = TB5_CHUNK_TARGET / sizeof(DATA_BIND_STRUCT);
			b.out = malloc(b.out_cap * sizeof *b.out);
			if (b.out == NULL)
				rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
		}
	}
	if (rc == VT_SUCCESS && !h->writable && data->total > 0) {
		/* the in-memory result: the record count comes from the file, so it only sizes the
		 * first allocation up to a cap; bind_fn grows the array as records are really read */
		b.out_cap = data->total < ((size_t)1 << 22) ? (size_t)data->total : (size_t)1 << 22;
		b.out = malloc(b.out_cap * sizeof *b.out);
		if (b.out == NULL)
			rc = tk__tb5_fail(TBRW_NO_MEMORY, "%s: out of memory for the bind result of %llu samples", h->path,
				      (unsigned long long)data->total);
	}
	if (rc == VT_SUCCESS)
		rc = tk__tb5_enumerate_records(h, data, st->record_size, 0, bind_fn, &b);
	if (rc == VT_SUCCESS)
		rc = b.rc;
	if (rc == VT_SUCCESS && b.out_obj != NULL) {
		rc = flush_out(&b);
		if (rc == VT_SUCCESS)
			rc = tk__tb5_write_chunk(h, b.out_obj, CK_END, b.out_obj->id, b.out_obj->total, 0, NULL, 0);
		if (rc == VT_SUCCESS)
			b.out_obj->state = OBJ_DONE;
	}
	/* module -> process and thread -> process */
	if (rc == VT_SUCCESS) {
		mb = malloc((h->n_modules ? h->n_modules : 1) * sizeof *mb);
		tb = malloc(((b.derive ? b.n_tids : h->pt.n_tids) + 1) * sizeof *tb);
		if (mb == NULL || tb == NULL)
			rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
	}
	if (rc == VT_SUCCESS) {
		for (size_t i = 0; i < h->n_modules; i++) {
			uint64_t g;
			const TBRW_MODULE *m = &h->modules[i];
			mb[i] = (!(m->module_flags & TBRW_MODULE_GLOBAL_LOAD) &&
				 gen_index(&b, m->module_associated_pid, m->module_event_when, &g))
					? pid_out(&b, g)
					: TBRW_BIND_NO_INDEX;
		}
		size_t nt = b.derive ? b.n_tids : h->pt.n_tids;
		for (size_t i = 0; i < nt; i++) {
			uint64_t g;
			if (b.derive)
				tb[i] = b.tids[i].reserved1;
			else
				tb[i] = gen_index(&b, h->pt.tids[i].tid_associated_pid, h->pt.tids[i].tid_event_when, &g)
						? pid_out(&b, g)
						: TBRW_BIND_NO_INDEX;
		}
		if (h->writable) {
			rc = write_u64_obj(h, OBJ_STREAM(data_stream, OBJ_BIND_MODULE), mb, h->n_modules);
			if (rc == VT_SUCCESS)
				rc = write_u64_obj(h, OBJ_STREAM(data_stream, OBJ_BIND_TID), tb, nt);
		}
		tk__tb5_bind_free(h);
		h->bind_module = (MODULE_BIND_STRUCT *)mb;
		h->n_bind_module = h->n_modules;
		h->bind_tid = (TID_BIND_STRUCT *)tb;
		h->n_bind_tid = nt;
		mb = tb = NULL;
		h->bound_stream = (int)data_stream;
	}
	/* the derived process/thread section */
	if (rc == VT_SUCCESS && b.derive) {
		TBRW_PID *pids = calloc(b.n_gens + 1, sizeof *pids);
		TBRW_TID *tids = b.tids;
		if (pids == NULL)
			rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory binding");
		for (size_t i = 0; i < b.n_gens && rc == VT_SUCCESS; i++) {
			pids[i].pid_size = sizeof *pids;
			pids[i].pid_id = b.gens[i].pid;
			pids[i].pid_flags = TBRW_PID_CREATED | TBRW_PID_DERIVED;
			pids[i].pid_event_when = b.gens[i].start;
			pids[i].pid_name.soi_uniqueid = b.gens[i].name;
			pids[i].pid_path.soi_uniqueid = b.gens[i].path;
		}
		for (size_t i = 0; i < b.n_tids; i++)
			tids[i].reserved1 = 0;
		if (rc == VT_SUCCESS && h->writable) {
			struct tb5_obj *o, *mark;
			pthread_mutex_lock(&h->lock);
			o = tk__tb5_obj_get(h, OBJ_GLOBAL(TBRW_PROCESS_THREAD_SECTION));
			mark = tk__tb5_obj_get(h, OBJ_DERIVED_PT);
			pthread_mutex_unlock(&h->lock);
			if (o == NULL || mark == NULL)
				rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
			for (size_t i = 0; i < b.n_gens && rc == VT_SUCCESS; i++)
				rc = tk__tb5_put_pid(h, o, &pids[i]);
			for (size_t i = 0; i < b.n_tids && rc == VT_SUCCESS; i++)
				rc = tk__tb5_put_tid(h, o, &tids[i]);
			if (rc == VT_SUCCESS)
				rc = tk__tb5_obj_finish(h, o);
			if (rc == VT_SUCCESS)
				rc = tk__tb5_obj_finish(h, mark);
		}
		if (rc == VT_SUCCESS) {
			tk__tb5_pt_free(&h->pt);
			h->pt.pids = pids;
			h->pt.n_pids = b.n_gens;
			h->pt.tids = tids;
			h->pt.n_tids = b.n_tids;
			h->pt.loaded = 1;
			b.tids = NULL;
		} else {
			free(pids);
		}
	}
	if (rc == VT_SUCCESS && !h->writable) {
		st->bind_data = b.out;
		st->n_bind_data = b.out_len;
		st->bound_in_memory = 1;
		b.out = NULL;
	}
	free(mb);
	free(tb);
	binder_free(&b);
	return rc;
}

/* ---- bind enumeration ------------------------------------------------------------------------- */

struct bind_ctx {
	struct tb5_handle *h;
	struct tb5_obj *data, *bind; /* the data section; the persisted bind stream or NULL */
	uint32_t rec;
	BIND_DATA_CALLBACK *cb;
	void *user;
	DATA_BIND_STRUCT *tmp; /* BIND_BATCH entries */
	const DATA_BIND_STRUCT *mem;
	uint64_t n_mem;
	/* the persisted bind chunk read last */
	unsigned char *scratch;
	size_t scratch_cap;
	const unsigned char *chunk;
	size_t chunk_index;
	TBRW_U32 rc;
};

/* Bind entries handed to one callback: the callback gets a data chunk's records in batches of
 * at most this many, so the buffer never depends on a count read from the file. */
#define BIND_BATCH 65536u

/* The persisted bind chunk holding entry index, read (and checked) once. */
static TBRW_U32 bind_chunk_for(struct bind_ctx *c, uint64_t index, const struct tb5_chunk_ref **out)
{
	struct tb5_obj *o = c->bind;
	size_t lo = 0, hi = o->n_chunks;

	if (c->chunk != NULL) {
		const struct tb5_chunk_ref *ck = &o->chunks[c->chunk_index];
		if (index >= ck->first && index - ck->first < ck->count) {
			*out = ck;
			return VT_SUCCESS;
		}
	}
	/* chunks are in record order (take_chunk checks it); the END chunk sorts last */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tb5_chunk_ref *ck = &o->chunks[mid];
		if (ck->kind == CK_DATA && ck->first + ck->count <= index)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == o->n_chunks || o->chunks[lo].kind != CK_DATA || o->chunks[lo].first > index)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: the bind information of stream %u has no entry for record %llu",
				c->h->path, OBJ_STREAM_OF(o->id), (unsigned long long)index);
	c->chunk = NULL;
	TBRW_U32 rc = tk__tb5_read_chunk(c->h, &o->chunks[lo], &c->scratch, &c->scratch_cap, &c->chunk);
	if (rc != VT_SUCCESS) {
		c->chunk = NULL;
		return rc;
	}
	c->chunk_index = lo;
	*out = &o->chunks[lo];
	return VT_SUCCESS;
}

/* Called per data chunk: hands the records and their bind entries to the callback in batches. */
static TBRW_U32 bind_data_fn(void *ctx, unsigned char *p, uint64_t first, uint32_t n)
{
	struct bind_ctx *c = ctx;

	for (uint32_t done = 0; done < n;) {
		uint32_t k = n - done < BIND_BATCH ? n - done : BIND_BATCH;
		const DATA_BIND_STRUCT *tab;
		uint64_t at = first + done;
		TBRW_U32 r;

		if (c->mem != NULL) {
			if (at + k > c->n_mem)
				return c->rc = tk__tb5_fail(TBRW_NOT_BOUND, "%s: the bind result covers %llu records, the data "
									"more",
							c->h->path, (unsigned long long)c->n_mem);
			tab = c->mem + at;
		} else {
			for (uint32_t got = 0; got < k;) {
				const struct tb5_chunk_ref *ck = NULL;
				c->rc = bind_chunk_for(c, at + got, &ck);
				if (c->rc != VT_SUCCESS)
					return c->rc;
				uint64_t from = at + got - ck->first;
				uint64_t avail = ck->count - from;
				uint32_t take = avail < k - got ? (uint32_t)avail : k - got;
				const unsigned char *q = c->chunk + from * 24;
				for (uint32_t i = 0; i < take; i++, q += 24) {
					c->tmp[got + i].module_index = tb5_get64(q);
					c->tmp[got + i].pid_index = tb5_get64(q + 8);
					c->tmp[got + i].tid_index = tb5_get64(q + 16);
				}
				got += take;
			}
			tab = c->tmp;
		}
		r = c->cb(p + (size_t)done * c->rec, k * c->rec, k, tab, (TBRW_U32)(k * sizeof(DATA_BIND_STRUCT)), c->user);
		if (r == FALSE)
			return FALSE;
		if (r != TRUE)
			return tk__tb5_callback_error(r, "TBRW_bind_enumerate_data");
		done += k;
	}
	return TRUE;
}

TBRW_U32 TBRW_bind_enumerate_data(TBRW_PTR ptr, TBRW_U32 data_stream, BIND_DATA_CALLBACK *callback_func, void *user_ptr,
				  TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	struct bind_ctx c;
	TBRW_U32 rc, bound;

	if (h == NULL || callback_func == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_bind_enumerate_data: NULL argument");
	rc = TBRW_is_bound(ptr, data_stream, &bound);
	if (rc != VT_SUCCESS)
		return rc;
	if (!bound)
		return tk__tb5_fail(TBRW_NOT_BOUND, "%s: stream %u is not bound (call TBRW_dobind)", h->path, data_stream);
	st = h->streams[data_stream];
	rc = tk__tb5_stream_layout(h, data_stream);
	if (rc != VT_SUCCESS)
		return rc;
	memset(&c, 0, sizeof c);
	c.h = h;
	c.data = tk__tb5_obj_find(h, OBJ_STREAM_SEC(data_stream, TBRW_DATA_SECTION));
	if (c.data == NULL || c.data->state != OBJ_DONE)
		return tk__tb5_fail(TBRW_NOT_BOUND, "%s: stream %u has no complete data section", h->path, data_stream);
	c.rec = st->record_size;
	c.cb = callback_func;
	c.user = user_ptr;
	c.mem = st->bound_in_memory ? st->bind_data : NULL;
	c.n_mem = st->n_bind_data;
	if (c.mem == NULL) {
		c.bind = tk__tb5_obj_find(h, OBJ_STREAM(data_stream, OBJ_BIND_DATA));
		if (c.bind == NULL || c.bind->state != OBJ_DONE)
			return tk__tb5_fail(TBRW_NOT_BOUND, "%s: stream %u is not bound (call TBRW_dobind)", h->path,
					data_stream);
		if (c.bind->total != c.data->total)
			return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: the bind information of stream %u covers %llu records, "
							   "its data %llu",
					h->path, data_stream, (unsigned long long)c.bind->total,
					(unsigned long long)c.data->total);
		c.tmp = malloc(BIND_BATCH * sizeof *c.tmp);
		if (c.tmp == NULL)
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	rc = tk__tb5_enumerate_records(h, c.data, c.rec, start_index, bind_data_fn, &c);
	free(c.tmp);
	free(c.scratch);
	return rc;
}

/* Module and thread bind tables: from memory, or loaded from the persisted objects. */
static TBRW_U32 load_u64_obj(struct tb5_handle *h, uint32_t id, uint64_t **out, size_t *n)
{
	struct tb5_obj *o = tk__tb5_obj_find(h, id);
	unsigned char *scratch = NULL;
	size_t scratch_cap = 0;
	const unsigned char *q;
	uint64_t *v;
	TBRW_U32 rc = VT_SUCCESS;

	if (o == NULL || o->state != OBJ_DONE)
		return tk__tb5_fail(TBRW_NOT_BOUND, "%s: no bind information", h->path);
	/* o->total is the sum of the chunks' counts, each checked against its bytes at open */
	if (o->total > (uint64_t)64 << 20)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: bind table of %llu entries", h->path,
				(unsigned long long)o->total);
	v = malloc((size_t)(o->total ? o->total : 1) * sizeof *v);
	if (v == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	for (size_t i = 0; i < o->n_chunks && rc == VT_SUCCESS; i++) {
		const struct tb5_chunk_ref *c = &o->chunks[i];
		if (c->kind != CK_DATA)
			continue;
		if (c->raw_len != (uint64_t)c->count * 8 || c->first + c->count > o->total) {
			rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: bind chunk at byte offset %llu is malformed", h->path,
				      (unsigned long long)c->offset);
			break;
		}
		rc = tk__tb5_read_chunk(h, c, &scratch, &scratch_cap, &q);
		for (uint32_t k = 0; k < c->count && rc == VT_SUCCESS; k++)
			v[c->first + k] = tb5_get64(q + (size_t)k * 8);
	}
	free(scratch);
	if (rc != VT_SUCCESS) {
		free(v);
		return rc;
	}
	*out = v;
	*n = (size_t)o->total;
	return VT_SUCCESS;
}

/* Finds a bound stream for the module/thread bind enumerations (which name none). */
static TBRW_U32 ensure_bind_tables(struct tb5_handle *h)
{
	uint64_t *mb, *tb;
	size_t nm, nt;
	TBRW_U32 rc;

	if (h->bound_stream >= 0)
		return VT_SUCCESS;
	for (uint32_t s = 0; s < h->n_streams; s++) {
		if (!obj_done(h, OBJ_STREAM(s, OBJ_BIND_DATA)))
			continue;
		rc = load_u64_obj(h, OBJ_STREAM(s, OBJ_BIND_MODULE), &mb, &nm);
		if (rc != VT_SUCCESS)
			return rc;
		rc = load_u64_obj(h, OBJ_STREAM(s, OBJ_BIND_TID), &tb, &nt);
		if (rc != VT_SUCCESS) {
			free(mb);
			return rc;
		}
		tk__tb5_bind_free(h);
		h->bind_module = (MODULE_BIND_STRUCT *)mb;
		h->n_bind_module = nm;
		h->bind_tid = (TID_BIND_STRUCT *)tb;
		h->n_bind_tid = nt;
		h->bound_stream = (int)s;
		return VT_SUCCESS;
	}
	return tk__tb5_fail(TBRW_NOT_BOUND, "%s: no stream is bound (call TBRW_dobind)", h->path);
}

TBRW_U32 TBRW_bind_enumerate_modules(TBRW_PTR ptr, BIND_MODULE_CALLBACK *callback_func, void *user_ptr,
				     TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	if (h == NULL || callback_func == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_bind_enumerate_modules: NULL argument");
	if ((rc = ensure_bind_tables(h)) != VT_SUCCESS || (rc = tk__tb5_load_modules(h)) != VT_SUCCESS)
		return rc;
	if (h->n_bind_module != h->n_modules)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: module bind table has %zu entries for %zu modules", h->path,
				h->n_bind_module, h->n_modules);
	for (size_t i = (size_t)(start_index < h->n_modules ? start_index : h->n_modules); i < h->n_modules;) {
		size_t k = h->n_modules - i < 4096 ? h->n_modules - i : 4096;
		rc = callback_func(h->modules + i, (TBRW_U32)(k * sizeof(TBRW_MODULE)), k, h->bind_module + i,
				   (TBRW_U32)(k * sizeof(MODULE_BIND_STRUCT)), user_ptr);
		if (rc == FALSE)
			return VT_SUCCESS;
		if (rc != TRUE)
			return tk__tb5_callback_error(rc, "TBRW_bind_enumerate_modules");
		i += k;
	}
	return VT_SUCCESS;
}

TBRW_U32 TBRW_bind_enumerate_threads(TBRW_PTR ptr, BIND_TID_CALLBACK *callback_func, void *user_ptr,
				     TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	if (h == NULL || callback_func == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_bind_enumerate_threads: NULL argument");
	if ((rc = ensure_bind_tables(h)) != VT_SUCCESS || (rc = tk__tb5_load_pt(h)) != VT_SUCCESS)
		return rc;
	if (h->n_bind_tid != h->pt.n_tids)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: thread bind table has %zu entries for %zu threads", h->path,
				h->n_bind_tid, h->pt.n_tids);
	for (size_t i = (size_t)(start_index < h->pt.n_tids ? start_index : h->pt.n_tids); i < h->pt.n_tids;) {
		size_t k = h->pt.n_tids - i < 4096 ? h->pt.n_tids - i : 4096;
		rc = callback_func(h->pt.tids + i, (TBRW_U32)(k * sizeof(TBRW_TID)), k, h->bind_tid + i,
				   (TBRW_U32)(k * sizeof(TID_BIND_STRUCT)), user_ptr);
		if (rc == FALSE)
			return VT_SUCCESS;
		if (rc != TRUE)
			return tk__tb5_callback_error(rc, "TBRW_bind_enumerate_threads");
		i += k;
	}
	return VT_SUCCESS;
}

TBRW_U32 tk__tb5_load_bind(struct tb5_handle *h, uint32_t stream)
{
	(void)stream;
	return ensure_bind_tables(h);
}
