#!/bin/sh
# SPDX-License-Identifier: MIT
# Recording benchmarks of issue 3, each beside its anchor measured in this run:
#   the rdtsc floor, tracekit's inline emitter (logger draining to a file),
#   TraceEvent(_NTO_TRACE_INSERTSUSEREVENT), the disabled emitter, two threads against
#   one, sustained recording into a file for SECONDS (paced at 30 M events/s, then flat
#   out), and an LTTng-UST tracepoint with two integer fields in a live session whose
#   consumer drains every event (blocking channel, none lost).
# usage: bench/run_trace.sh [BUILD_DIR]   (TK_BENCH_DIR: scratch space, default /tmp/tracekit-bench;
#                                          TK_BENCH_SECONDS: sustained runs, default 10;
#                                          TK_BENCH_LTTNG_EVENTS: default 10000000)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
DIR=${TK_BENCH_DIR:-/tmp/tracekit-bench}
SECS=${TK_BENCH_SECONDS:-10}
LN=${TK_BENCH_LTTNG_EVENTS:-10000000}
mkdir -p "$DIR"

# the flat-out run writes up to ~700 MB/s for SECS seconds
need_mb=$((SECS * 800 + 200))
avail_mb=$(df -Pm "$DIR" | awk 'NR == 2 { print $4 }')
if [ "$avail_mb" -lt "$need_mb" ]; then
	echo "run_trace.sh: $DIR has $avail_mb MB free, the benchmark needs $need_mb MB" >&2
	exit 1
fi

GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"
cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DTK_BUILD_BENCH=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD" --target bench_trace lttng_emit >/dev/null

# --- LTTng-UST, live session, consumer draining, nothing discarded ---
LT="$DIR/lttng-rec"
rm -rf "$LT"
if ! lttng list >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ]; then lttng-sessiond --daemonize >/dev/null 2>&1 || true; fi
fi
lttng destroy tkrec >/dev/null 2>&1 || true
lttng create tkrec --output="$LT" >/dev/null
lttng enable-channel --userspace --subbuf-size=4M --num-subbuf=8 --blocking-timeout=inf ch >/dev/null
lttng enable-event --userspace --channel=ch 'tk_bench:two_ints' >/dev/null
lttng start >/dev/null
lt_out=$(LTTNG_UST_ALLOW_BLOCKING=1 "$BUILD/bench/lttng_emit" "$LN")
lttng stop >/dev/null
lttng destroy >/dev/null
lt_ns=$(echo "$lt_out" | sed -n 's/.*events, \([0-9.]*\) ns\/event/\1/p')
lt_lost=$(babeltrace2 --output-format=dummy "$LT" 2>&1 | grep -c "discarded" || true)
rm -rf "$LT"
# the same tracepoint with no session: LTTng's disabled cost
lt_off_ns=$("$BUILD/bench/lttng_emit" 100000000 | sed -n 's/.*events, \([0-9.]*\) ns\/event/\1/p')

# --- tracekit ---
sync
out=$("$BUILD/bench/bench_trace" "$DIR" "$SECS")
sync
# --- the file system's own write rate: dd in 1 MiB blocks, as much as the flat-out run writes ---
dd_mb=$((SECS * 600))
t0=$(date +%s%N)
dd if=/dev/zero of="$DIR/dd.bin" bs=1M count="$dd_mb" conv=fsync 2>/dev/null
t1=$(date +%s%N)
dd_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
rm -f "$DIR/dd.bin"

get() { echo "$out" | sed -n "s/^$1=//p"; }

awk -v rd="$(get rdtsc_ns)" -v em="$(get emit_ns)" -v ins="$(get insert_ns)" -v off="$(get disabled_ns)" \
	-v empty="$(get empty_loop_ns)" -v bd="$(get burst_dropped)" \
	-v one="$(get one_thread_events_per_sec)" -v two="$(get two_threads_events_per_sec)" \
	-v ps="$(get paced_seconds)" -v pe="$(get paced_emitted)" -v pst="$(get paced_stored)" \
	-v pdf="$(get paced_dropped_in_file)" -v pds="$(get paced_dropped_stats)" \
	-v fs="$(get flat_out_seconds)" -v fe="$(get flat_out_emitted)" -v fst="$(get flat_out_stored)" \
	-v fdf="$(get flat_out_dropped_in_file)" -v fds="$(get flat_out_dropped_stats)" \
	-v lt="$lt_ns" -v ltoff="$lt_off_ns" -v ltlost="$lt_lost" -v ln="$LN" -v ddmb="$dd_mb" -v dds="$dd_s" 'BEGIN {
	printf "\n== recording an event (this run, this machine) ==\n"
	printf "%-62s %10s %10s\n", "", "ns/event", "ratio"
	printf "%-62s %10.2f %10s\n", "floor: rdtsc in a loop (median of 7 x 1 M)", rd, "1.00x"
	printf "%-62s %10.2f %9.2fx\n", "tk_trace_user(), inline, logger draining (median of 7 x 1 M)", em, em / rd
	printf "%-62s %10.2f %9.2fx\n", "TraceEvent(_NTO_TRACE_INSERTSUSEREVENT) (median of 7 x 1 M)", ins, ins / rd
	printf "%-62s %10.2f %9.2fx\n", "anchor: LTTng-UST tracepoint, live session, " ln / 1e6 " M events", lt, lt / rd
	printf "%-62s %10.2f\n", "tk_trace_user(), tracing stopped", off
	printf "%-62s %10.2f\n", "  (an empty loop, for reference)", empty
	printf "%-62s %10.2f\n", "anchor: LTTng-UST tracepoint, no session", ltoff
	printf "events dropped during the timed bursts: %d; LTTng discarded-event reports: %d\n", bd, ltlost
	printf "inline emitter vs LTTng-UST: %.1fx faster\n", lt / em
	printf "goal: emitter <= 1.5x rdtsc: %s; >= 10x faster than LTTng-UST: %s; disabled <= 1 ns: %s\n",
		(em <= 1.5 * rd) ? "met" : "NOT met", (lt >= 10 * em) ? "met" : "NOT met", (off <= 1) ? "met" : "NOT met"
	if (lt < 10 * rd)
		printf "  (10x LTTng-UST here would be %.1f ns, below the rdtsc floor of %.1f ns every timestamped event pays)\n", lt / 10, rd
	printf "\n%-62s %10s %10s\n", "", "M ev/s", "ratio"
	printf "%-62s %10.1f %10s\n", "one thread (ring mode, median of 7 x 20 M)", one / 1e6, "1.00x"
	printf "%-62s %10.1f %9.2fx\n", "two threads together", two / 1e6, two / one
	printf "goal: two threads >= 1.8x one: %s\n", (two >= 1.8 * one) ? "met" : "NOT met"
	printf "\n== sustained recording into a file ==\n"
	printf "%-24s %8s %12s %12s %12s %10s %s\n", "", "seconds", "emitted", "in file", "dropped", "M ev/s", "stored+dropped==emitted"
	printf "%-24s %8.1f %12d %12d %12d %10.1f %s\n", "paced at 30 M events/s", ps, pe, pst, pdf, pst / ps / 1e6, (pst + pdf == pe && pdf == pds) ? "yes" : "NO"
	printf "%-24s %8.1f %12d %12d %12d %10.1f %s\n", "flat out", fs, fe, fst, fdf, fst / fs / 1e6, (fst + fdf == fe && fdf == fds) ? "yes" : "NO"
	printf "%-24s %8.1f %12s %12s %12s %10.1f  (%.0f MB/s; the recorder wrote %.0f MB/s flat out)\n", "anchor: dd bs=1M, fsync", dds, "", "", "", ddmb * 1048576 / 16 / dds / 1e6, ddmb * 1.048576 / dds, fst * 16 / fs / 1e6
	printf "goal: >= 30 M events/s into the file, no drop or every drop counted: %s\n",
		(pst / ps >= 29.5e6 && pdf == 0 && pst == pe && fst + fdf == fe && fdf == fds) ? "met" : "NOT met"
}'
