/* SPDX-License-Identifier: MIT */
/*
 * The traced programs' side of a trace (tracekit/collect.h, "Draining a pool"): reads the
 * trace buffers the recorder fills in a pool shared with the logger (a session's), and
 * hands over each event with its owner and its time converted from the writers' cycles to
 * CLOCK_MONOTONIC_RAW nanoseconds, the collector's time line. A queued buffer is read whole
 * and given back; the WRITING buffers of a process that died are read up to `committed`
 * (every finished record, nothing half-written) and given back.
 *
 * A buffer, as the recorder writes it (src/trace/trace_pool.c): CONTROL TIME (slot 0, the
 * upper 32 bits of the time), CONTROL BUFFER, CONTROL DROPPED when records were lost since
 * the last one, the owner's THRUNNING, then events, with a CONTROL TIME before any event
 * whose (CPU, upper time bits) differ from the one before. A combine event (CB, CC..., CE)
 * cut short by the end of what is committed is left out.
 */
#include <stdlib.h>
#include <string.h>

#include "tracekit/collect.h"

struct tk_collect_drain {
	tk_pool *pool;
	tk_collect_drain_config cfg;
	/* counters another thread may read (tk_collect_session_get_stats) */
	_Atomic uint64_t events, buffers, dropped;
};

int tk_collect_drain_new(tk_collect_drain **out, tk_pool *pool, const tk_collect_drain_config *cfg)
{
	tk_collect_drain *d;

	if (out == NULL)
		return TK_EINVAL;
	*out = NULL;
	if (pool == NULL || cfg == NULL || cfg->size < sizeof(*cfg) || cfg->cycles_per_sec == 0)
		return TK_EINVAL;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return TK_ENOMEM;
	d->pool = pool;
	d->cfg = *cfg;
	*out = d;
	return TK_OK;
}

void tk_collect_drain_free(tk_collect_drain *d)
{
	free(d);
}

uint64_t tk_collect_drain_ns(const tk_collect_drain *d, uint64_t cycles)
{
	/* ns = clock_ns + (cycles - clock_cycles) * 10^9 / cycles_per_sec, signed, floored */
	__int128 diff = (__int128)(int64_t)(cycles - d->cfg.clock_cycles) * 1000000000;
	__int128 q = diff / (__int128)d->cfg.cycles_per_sec;

	if (diff < 0 && q * (__int128)d->cfg.cycles_per_sec != diff)
		q--;
	q += (__int128)d->cfg.clock_ns;
	return q < 0 ? 0 : (uint64_t)q;
}

void tk_collect_drain_get_stats(const tk_collect_drain *d, uint64_t *events, uint64_t *buffers, uint64_t *dropped)
{
	if (events != NULL)
		*events = atomic_load_explicit(&d->events, memory_order_relaxed);
	if (buffers != NULL)
		*buffers = atomic_load_explicit(&d->buffers, memory_order_relaxed);
	if (dropped != NULL)
		*dropped = atomic_load_explicit(&d->dropped, memory_order_relaxed);
}

/* The events of slots [from, n) of one buffer (msb: the upper time bits in effect at from). Returns the events handed over, or emit's error. */
static int read_buffer(tk_collect_drain *d, const traceevent_t *s, size_t from, size_t n, uint32_t msb,
		       int32_t pid, int32_t tid, tk_collect_user_fn emit, void *ud)
{
	size_t i = from;
	int count = 0, rc, head = from == 0;

	while (i < n) {
		uint32_t h = s[i].header;
		unsigned cls = _NTO_TRACE_GETEVENT_C(h), code = _NTO_TRACE_GETEVENT(h);
		unsigned flag = _TRACE_GET_STRUCT(h);
		size_t j = i + 1;
		if (cls == _TRACE_CONTROL_C && code == _TRACE_CONTROL_TIME) {
			msb = s[i].data[1];
			i++;
			continue;
		}
		if (flag == _TRACE_STRUCT_CB) {
			while (j < n && _TRACE_GET_STRUCT(s[j - 1].header) != _TRACE_STRUCT_CE)
				j++;
			if (_TRACE_GET_STRUCT(s[j - 1].header) != _TRACE_STRUCT_CE)
				break; /* cut short: its writer died before it was whole */
		} else if (flag != _TRACE_STRUCT_S) {
			i++; /* a stray part: cannot be in a buffer of the recorder */
			continue;
		}
		if (cls == _TRACE_CONTROL_C) {
			if (code == _TRACE_CONTROL_DROPPED) {
				atomic_fetch_add_explicit(&d->dropped, (uint64_t)s[i].data[1] | (uint64_t)s[i].data[2] << 32,
							  memory_order_relaxed);
				goto keep;
			}
			i = j; /* BUFFER and the other markers of the recorder's own */
			continue;
		}
		if (head && cls == _TRACE_PR_TH_C && code == STATE_RUNNING) {
			head = 0; /* the buffer's owner marker: the owner is handed with every event */
			i = j;
			continue;
		}
		head = 0;
		if (d->cfg.skip_classes & (1u << (cls >> 10))) {
			i = j;
			continue;
		}
	keep:
		rc = emit(ud, &s[i], j - i, tk_collect_drain_ns(d, (uint64_t)msb << 32 | s[i].data[0]), pid, tid);
		if (rc != 0)
			return rc < 0 ? rc : TK_ECANCELED;
		count++;
		i = j;
	}
	atomic_fetch_add_explicit(&d->events, (uint64_t)count, memory_order_relaxed);
	return count;
}

int tk_collect_drain_records(tk_collect_drain *d, const void *buf, uint32_t n_records, const tk_pool_desc *desc,
			     tk_collect_user_fn emit, void *ud)
{
	uint32_t bsize = tk_pool_buffer_size(d->pool) / (uint32_t)sizeof(traceevent_t);
	uint32_t from = desc->flushed;

	if (n_records > bsize)
		n_records = bsize;
	if (from > n_records)
		from = n_records;
	atomic_fetch_add_explicit(&d->buffers, 1, memory_order_relaxed);
	return read_buffer(d, buf, from, n_records, from ? desc->resume_msb : 0, (int32_t)desc->owner_pid,
			   (int32_t)desc->owner_tid, emit, ud);
}

/*
 * What every drained buffer ends with: the sink's before_give (its events safe first), the
 * records consumed taken off the pool's count of queued ones (0 for a WRITING buffer, which was
 * never counted), the buffer back in the free stack. Returns rc, or the sink's refusal.
 */
static int give_back(tk_collect_drain *d, uint32_t idx, tk_pool_desc *desc, int rc, int64_t consumed, void *ud)
{
	int sync;

	if (rc >= 0 && d->cfg.before_give != NULL && (sync = d->cfg.before_give(ud)) != 0)
		rc = sync < 0 ? sync : TK_ECANCELED;
	if (consumed != 0)
		tk_pool_count_stored(d->pool, -consumed);
	desc->flushed = 0;
	tk_pool_give(d->pool, idx);
	return rc;
}

int tk_collect_drain_queued(tk_collect_drain *d, tk_collect_user_fn emit, void *ud)
{
	uint32_t idx, bsize = tk_pool_buffer_size(d->pool) / (uint32_t)sizeof(traceevent_t);
	int total = 0;

	while (tk_pool_dequeue(d->pool, &idx) == TK_OK) {
		tk_pool_desc *desc = tk_pool_desc_of(d->pool, idx);
		uint32_t records = atomic_load_explicit(&desc->records, memory_order_acquire);
		uint32_t from = desc->flushed; /* a part already written out by a flush */
		int rc;
		if (records > bsize)
			records = bsize; /* never read beyond the buffer, whatever the region says */
		if (from > records)
			from = records;
		rc = read_buffer(d, tk_pool_buffer(d->pool, idx), from, records, from ? desc->resume_msb : 0,
				 (int32_t)desc->owner_pid, (int32_t)desc->owner_tid, emit, ud);
		rc = give_back(d, idx, desc, rc, (int64_t)records - (int64_t)from, ud);
		atomic_fetch_add_explicit(&d->buffers, 1, memory_order_relaxed);
		if (rc < 0)
			return rc;
		total += rc;
	}
	return total;
}

int tk_collect_drain_process(tk_collect_drain *d, int32_t pid, int dead, tk_collect_user_fn emit, void *ud)
{
	uint32_t idx, n = tk_pool_n_buffers(d->pool), bsize = tk_pool_buffer_size(d->pool);
	int total = 0;

	for (idx = 0; idx < n; idx++) {
		tk_pool_desc *desc = tk_pool_desc_of(d->pool, idx);
		uint32_t committed, from;
		int rc;
		if (atomic_load_explicit(&desc->state, memory_order_acquire) != TK_POOL_WRITING ||
		    (int32_t)desc->owner_pid != pid)
			continue;
		committed = atomic_load_explicit(&desc->committed, memory_order_acquire);
		if (committed > bsize)
			committed = bsize;
		committed /= (uint32_t)sizeof(traceevent_t);
		from = desc->flushed < committed ? desc->flushed : committed;
		rc = read_buffer(d, tk_pool_buffer(d->pool, idx), from, committed, from ? desc->resume_msb : 0, pid,
				 (int32_t)desc->owner_tid, emit, ud);
		if (dead) /* a living writer keeps its buffer (read once, at the end) */
			rc = give_back(d, idx, desc, rc, 0, ud);
		atomic_fetch_add_explicit(&d->buffers, 1, memory_order_relaxed);
		if (rc < 0)
			return rc;
		total += rc;
	}
	return total;
}

int tk_collect_drain_stranded(tk_collect_drain *d, tk_collect_user_fn emit, void *ud)
{
	uint32_t idx, n = tk_pool_n_buffers(d->pool), bsize = tk_pool_buffer_size(d->pool) / (uint32_t)sizeof(traceevent_t);
	int total = 0;

	for (idx = 0; idx < n; idx++) {
		tk_pool_desc *desc = tk_pool_desc_of(d->pool, idx);
		uint32_t records, from;
		int rc;
		if (atomic_load_explicit(&desc->state, memory_order_acquire) != TK_POOL_DRAINING)
			continue;
		records = atomic_load_explicit(&desc->records, memory_order_acquire);
		if (records > bsize)
			records = bsize; /* never read beyond the buffer, whatever the region says */
		from = desc->flushed < records ? desc->flushed : records;
		rc = read_buffer(d, tk_pool_buffer(d->pool, idx), from, records, from ? desc->resume_msb : 0,
				 (int32_t)desc->owner_pid, (int32_t)desc->owner_tid, emit, ud);
		rc = give_back(d, idx, desc, rc, (int64_t)records - (int64_t)from, ud);
		atomic_fetch_add_explicit(&d->buffers, 1, memory_order_relaxed);
		if (rc < 0)
			return rc;
		total += rc;
	}
	return total;
}

uint64_t tk_collect_drain_take_dropped(tk_collect_drain *d)
{
	uint64_t n = tk_pool_take_dropped(d->pool);

	atomic_fetch_add_explicit(&d->dropped, n, memory_order_relaxed);
	return n;
}
