/* SPDX-License-Identifier: MIT */
/*
 * The batched hand-over (inside libtracekit-formats): a reader that wants many events of a
 * few kinds cheaply (the exporters) has the parser's fast loop hand it runs of consecutive
 * event slots instead of calling it once per event. A callback per event costs more than
 * what the statistics do with the event (the call, the owner and time lookups through the
 * library's interface); a run costs one call, and the owner and time of each slot are read
 * here inline from the parser's state.
 *
 * What goes into a run: simple (S-struct) slots whose (class, event) was marked with
 * tk__tp_batch(), while the fast loop runs (no sort mode, no event dump). Anything else
 * ends the run before it is dispatched as usual: TIME and THRUNNING (they change the time
 * and owner the run's slots are read with), combine slots, the slots of a buffer held until
 * its owner is known, and events of other kinds. The same events reach the ordinary
 * per-event callback whenever they do not go through a run (sort mode, held slots,
 * reassembled combine events), so the reader must attach one for them too.
 */
#ifndef TP_BATCH_H
#define TP_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "traceparser/tp_internal.h"

/*
 * slots: n slots of 16 bytes (header, time, two data words) in the file's byte order
 * (st->endian_conv says whether to swap them); first_slot: the index of slots[0] in the
 * file. The return value is ignored: a reader that fails keeps its error and skips the rest.
 */
typedef int (*tk__tp_batch_fn)(struct traceparser_state *st, void *ud, const uint32_t *slots, size_t n,
			       uint64_t first_slot);

/* Events first..last of internal class cls go to fn in runs (fn NULL: these back to one by
 * one, the others staying with the callback they have). One fn and ud for all runs. */
int tk__tp_batch(struct traceparser_state *st, tk__tp_batch_fn fn, void *ud, unsigned cls, unsigned first,
		 unsigned last);

/*
 * Optional, beside tk__tp_batch(): a reader that tests every slot of a run anyway (its kind)
 * can find the run's end itself, so that the fast loop does not test the run's slots first.
 * At a run's first slot, fn gets every slot left in the parser's block (n of them, at
 * least 1) and returns how many it took as a run, as batch_fn would have taken them: from 1
 * up to the first slot that is not batched (never past it; it stops earlier if it wants
 * to), or 0 to have the loop make the run as usual. The rest of the block goes on after
 * the slots it took. fn NULL: back to the loop's runs. ud is tk__tp_batch()'s.
 */
typedef size_t (*tk__tp_scan_fn)(struct traceparser_state *st, void *ud, const uint32_t *slots, size_t n,
				 uint64_t first_slot);
void tk__tp_batch_scan(struct traceparser_state *st, tk__tp_scan_fn fn);

/* In a scan or a run: 1 when the slot with header h (host order) is batched. */
static inline int tk__tp_batched(const struct traceparser_state *st, uint32_t h)
{
	uint32_t k = h & (_TRACE_GET_STRUCT(~0u) | (TP_TABLE_SIZE - 1));
	return k < TP_TABLE_SIZE && ((st->batch_bits[k / 64] >> (k % 64)) & 1);
}

/* In a run: the slot at slots + 4 * i dispatched as the parser would dispatch it alone (its
 * per-event callback, with the time and owner functions answering for it; the previous
 * callback is the slot before it, with the return 0 when that slot was not handed back). */
void tk__tp_batch_deliver_one(struct traceparser_state *st, const uint32_t *slot, uint64_t slot_index);

/* In a run: the owner of a slot with header h (tk_traceparser_owner()). */
static inline int tk__tp_batch_owner(const struct traceparser_state *st, uint32_t h, int32_t *pid, int32_t *tid)
{
	if (st->owner_buffer_mode) {
		*pid = st->buf_pid;
		*tid = st->buf_tid;
		return st->buf_owner_known;
	}
	unsigned cpu = _NTO_TRACE_GETCPU(h);
	int known = (int)((st->cpu_owner_known >> cpu) & 1);
	*pid = known ? st->cpu_pid[cpu] : 0;
	*tid = known ? st->cpu_tid[cpu] : 0;
	return known;
}

/* A 64-bit cycle count on the file's time line, in ns (tk_traceparser_ns()). */
uint64_t tk__tp_clk_to_ns(const struct traceparser_state *st, uint64_t clk);

/* 1 when the file's cycle counts are nanoseconds already (no reference, 1 GHz or unset). */
static inline int tk__tp_clk_is_ns(const struct traceparser_state *st)
{
	return !st->have_clock_ref && (st->cycles_per_sec == 0 || st->cycles_per_sec == 1000000000u);
}

/* In a run: the 64-bit cycle count of a slot with header h and time word t. */
static inline uint64_t tk__tp_batch_clk(const struct traceparser_state *st, uint32_t h, uint32_t t)
{
	unsigned cpu = _NTO_TRACE_GETCPU(h);
	uint32_t msb = (st->msb_known >> cpu) & 1 ? st->msb[cpu] : st->last_msb;
	return ((uint64_t)msb << 32) | t;
}

#endif
