/* SPDX-License-Identifier: MIT */
/*
 * LTTng-UST tracepoint provider for the benchmarks' anchors: one event with two integer
 * fields, the shape the benchmarks compare tracekit's events with.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tk_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(TK_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TK_BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
	tk_bench, two_ints,
	LTTNG_UST_TP_ARGS(int, a, int, b),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(int, a, a)
		lttng_ust_field_integer(int, b, b)
	)
)

#endif /* TK_BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
