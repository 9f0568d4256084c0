/* SPDX-License-Identifier: MIT */
/*
 * External (API) classes and events to internal header classes and codes: the mapping
 * QNX's libtraceparser and kernel apply, shared by the parser (traceparser_cs) and the
 * recorder (TraceEvent's filters).
 */
#include "tracekit/kev.h"

/*
 * The event a THREAD/VTHREAD/PROCESS mask names: its one bit set, or -1 when none or
 * several are set (a mask of several events is several ranges: callers split it bit by
 * bit, as TraceEvent() does; keeping only the lowest bit would silently drop the others).
 */
static int mask_bit(unsigned mask)
{
	return mask != 0 && (mask & (mask - 1)) == 0 ? __builtin_ctz(mask) : -1;
}

static int int_code(unsigned ext)
{
	switch (ext) {
	case _NTO_TRACE_INTENTER:
		return _TRACE_INT_ENTRY;
	case _NTO_TRACE_INTEXIT:
		return _TRACE_INT_EXIT;
	case _NTO_TRACE_INT_HANDLER_ENTER:
		return _TRACE_INT_HANDLER_ENTRY;
	case _NTO_TRACE_INT_HANDLER_EXIT:
		return _TRACE_INT_HANDLER_EXIT;
	default:
		return -1;
	}
}

static int set(tk_kev_range *r, unsigned cls, unsigned first, unsigned last)
{
	r->cls = cls;
	r->first = first;
	r->last = last;
	return 1;
}

static int valid(const tk_kev_range *r, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		if (r[i].cls > 31 || r[i].first > r[i].last || r[i].last > 1023)
			return -1;
	}
	return n;
}

int tk_kev_map_events(unsigned ext, unsigned e1, unsigned e2, unsigned flags, tk_kev_range out[4])
{
	int whole_int = e1 == _NTO_TRACE_INTFIRST && e2 == _NTO_TRACE_INTLAST;
	int b1, b2, i;

	if (out == NULL || e1 > e2)
		return -1;
	switch (ext) {
	case _NTO_TRACE_EMPTY:
		return valid(out, set(out, 0, e1, e2));
	case _NTO_TRACE_CONTROL:
		return valid(out, set(out, 1, e1, e2));
	case _NTO_TRACE_KERCALL:
		if (e2 >= _TRACE_MAX_KER_CALL_NUM)
			return -1;
		set(&out[0], 2, e1, e2);
		set(&out[1], 2, e1 + _TRACE_MAX_KER_CALL_NUM, e2 + _TRACE_MAX_KER_CALL_NUM);
		return valid(out, 2);
	case _NTO_TRACE_KERCALLENTER:
		return valid(out, set(out, 2, e1, e2));
	case _NTO_TRACE_KERCALLEXIT:
	case _NTO_TRACE_KERCALLINT: {
		unsigned base = ext == _NTO_TRACE_KERCALLEXIT ? _TRACE_MAX_KER_CALL_NUM : 2 * _TRACE_MAX_KER_CALL_NUM;
		if (e2 > 1023 - base)
			return -1;
		return valid(out, set(out, 2, e1 + base, e2 + base));
	}
	case _NTO_TRACE_INT:
		if ((flags & TK_KEV_MAP_SINGLE) || (!whole_int && !(flags & TK_KEV_MAP_INT_VECTORS)))
			return -1;
		for (i = 0; i < 4; i++)
			set(&out[i], 3, (unsigned)i + 1, (unsigned)i + 1);
		return 4;
	case _NTO_TRACE_INTENTER:
	case _NTO_TRACE_INTEXIT:
	case _NTO_TRACE_INT_HANDLER_ENTER:
	case _NTO_TRACE_INT_HANDLER_EXIT:
		if ((flags & TK_KEV_MAP_SINGLE) || (!whole_int && !(flags & TK_KEV_MAP_INT_VECTORS)))
			return -1;
		return set(out, 3, (unsigned)int_code(ext), (unsigned)int_code(ext));
	case _NTO_TRACE_PROCESS:
		b1 = mask_bit(e1);
		b2 = mask_bit(e2);
		if (b1 < 0 || b2 < 0 || b1 > 4 || b2 > 4)
			return -1;
		return valid(out, set(out, 4, (unsigned)(b1 + 1) << 6, (unsigned)(b2 + 1) << 6));
	case _NTO_TRACE_THREAD:
	case _NTO_TRACE_VTHREAD: {
		unsigned base = ext == _NTO_TRACE_VTHREAD ? _TRACE_MAX_TH_STATE_NUM : 0;
		b1 = mask_bit(e1);
		b2 = mask_bit(e2);
		if (b1 < 0 || b2 < 0 || b1 >= _TRACE_MAX_TH_STATE_NUM || b2 >= _TRACE_MAX_TH_STATE_NUM)
			return -1;
		return valid(out, set(out, 4, base + (unsigned)b1, base + (unsigned)b2));
	}
	case _NTO_TRACE_USER:
		return valid(out, set(out, 6, e1, e2));
	case _NTO_TRACE_SYSTEM:
		return valid(out, set(out, 5, e1, e2));
	case _NTO_TRACE_COMM:
		return valid(out, set(out, 7, e1, e2));
	case _NTO_TRACE_QUIP:
	case _NTO_TRACE_SEC:
	case _NTO_TRACE_QVM:
		return valid(out, set(out, 8 + (ext - _NTO_TRACE_QUIP), e1, e2));
	default:
		return -1;
	}
}

int tk_kev_map_class(unsigned ext, tk_kev_range out[4])
{
	if (out == NULL)
		return -1;
	switch (ext) {
	case _NTO_TRACE_KERCALL:
		return set(out, 2, 0, 3 * _TRACE_MAX_KER_CALL_NUM - 1);
	case _NTO_TRACE_KERCALLENTER:
		return set(out, 2, 0, _TRACE_MAX_KER_CALL_NUM - 1);
	case _NTO_TRACE_KERCALLEXIT:
		return set(out, 2, _TRACE_MAX_KER_CALL_NUM, 2 * _TRACE_MAX_KER_CALL_NUM - 1);
	case _NTO_TRACE_KERCALLINT:
		return set(out, 2, 2 * _TRACE_MAX_KER_CALL_NUM, 3 * _TRACE_MAX_KER_CALL_NUM - 1);
	case _NTO_TRACE_INT:
		return set(out, 3, 0, 1023);
	case _NTO_TRACE_THREAD:
		return set(out, 4, 0, _TRACE_MAX_TH_STATE_NUM - 1);
	case _NTO_TRACE_VTHREAD:
		return set(out, 4, _TRACE_MAX_TH_STATE_NUM, 2 * _TRACE_MAX_TH_STATE_NUM - 1);
	case _NTO_TRACE_PROCESS:
		return set(out, 4, _TRACE_PR_TH_CREATE_P, _TRACE_PR_TH_NAME_T);
	default:
		return tk_kev_map_events(ext, 0, 1023, TK_KEV_MAP_INT_VECTORS, out);
	}
}
