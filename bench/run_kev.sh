#!/bin/sh
# SPDX-License-Identifier: MIT
# Reading benchmarks of the foundation issue, each beside its anchor measured in this run:
#   parse: libtraceparser, 10 M events, one counting callback per event
#          vs babeltrace2 decoding an LTTng-UST trace of 10 M events (no output)
#          vs the I/O pattern of QNX 6.4's libtraceparser (one read() per event)
#   print: traceprinter to /dev/null vs babeltrace2's text output to /dev/null
# usage: bench/run_kev.sh [BUILD_DIR]   (TK_BENCH_DIR: scratch space, default /tmp/tracekit-bench;
#                                        TK_BENCH_EVENTS: default 10000000)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
DIR=${TK_BENCH_DIR:-/tmp/tracekit-bench}
N=${TK_BENCH_EVENTS:-10000000}
mkdir -p "$DIR"

need_mb=$((N * 16 / 1000000 * 3 + 100))
avail_mb=$(df -Pm "$DIR" | awk 'NR == 2 { print $4 }')
if [ "$avail_mb" -lt "$need_mb" ]; then
	echo "run_kev.sh: $DIR has $avail_mb MB free, the benchmark needs $need_mb MB" >&2
	exit 1
fi

GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"
cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DTK_BUILD_BENCH=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD" --target bench_kev traceprinter lttng_emit >/dev/null

now() { date +%s%N; }
# best of N runs of a command, in seconds
best_of() {
	runs=$1
	shift
	best=""
	i=0
	while [ $i -lt "$runs" ]; do
		t0=$(now)
		"$@" >/dev/null 2>&1
		t1=$(now)
		t=$(((t1 - t0) / 1000))
		if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
		i=$((i + 1))
	done
	echo "$best" # microseconds
}

# --- the LTTng-UST trace (kept between runs) ---
LT="$DIR/lttng-$N"
if [ ! -f "$LT/.complete" ]; then
	rm -rf "$LT"
	if ! lttng list >/dev/null 2>&1; then
		if [ "$(id -u)" = 0 ]; then lttng-sessiond --daemonize >/dev/null 2>&1 || true; fi
	fi
	lttng destroy tkbench >/dev/null 2>&1 || true
	lttng create tkbench --output="$LT" >/dev/null
	# blocking channel: the trace holds every event, none discarded
	lttng enable-channel --userspace --subbuf-size=4M --num-subbuf=8 --blocking-timeout=inf ch >/dev/null
	lttng enable-event --userspace --channel=ch 'tk_bench:two_ints' >/dev/null
	lttng start >/dev/null
	LTTNG_UST_ALLOW_BLOCKING=1 "$BUILD/bench/lttng_emit" "$N"
	lttng stop >/dev/null
	lttng destroy >/dev/null
	touch "$LT/.complete"
fi
lt_events=$(babeltrace2 --output-format=dummy "$LT" 2>&1 | grep -c "discarded" || true)
if [ "$lt_events" != 0 ]; then
	echo "run_kev.sh: the LTTng trace reports discarded events; delete $LT and rerun" >&2
	exit 1
fi

# --- our side ---
KEV="$DIR/events-$N.kev"
out=$("$BUILD/bench/bench_kev" "$KEV" "$N" 9)
parse_best=$(echo "$out" | sed -n 's/^parse_events_per_sec_best=//p')
parse_median=$(echo "$out" | sed -n 's/^parse_events_per_sec_median=//p')
readloop=$(echo "$out" | sed -n 's/^read_per_event_events_per_sec=//p')
events=$(echo "$out" | sed -n 's/^events=//p')

bt_decode_us=$(best_of 3 babeltrace2 --output-format=dummy "$LT")
bt_text_us=$(best_of 2 sh -c "babeltrace2 '$LT' > /dev/null")
tp_print_us=$(best_of 3 sh -c "'$BUILD/tools/traceprinter' -f '$KEV' > /dev/null")
lines=$("$BUILD/tools/traceprinter" -f "$KEV" | wc -l)

awk -v n="$N" -v events="$events" -v pb="$parse_best" -v pm="$parse_median" -v rl="$readloop" \
	-v btd="$bt_decode_us" -v btt="$bt_text_us" -v tpp="$tp_print_us" -v lines="$lines" 'BEGIN {
	bt_rate = n / (btd / 1e6); bt_lines = n / (btt / 1e6); tp_lines = lines / (tpp / 1e6)
	printf "\n== reading a trace of %d events (this run, this machine) ==\n", n
	printf "%-52s %12s %10s\n", "", "M events/s", "ratio"
	printf "%-52s %12.1f %9.0fx\n", "libtraceparser, counting callback (best of 9)", pb / 1e6, pb / bt_rate
	printf "%-52s %12.1f %9.0fx\n", "  the same, median of 9", pm / 1e6, pm / bt_rate
	printf "%-52s %12.1f %10s\n", "anchor: babeltrace2 decode, no output (best of 3)", bt_rate / 1e6, ""
	printf "%-52s %12.2f %9.0fx\n", "anchor: one read() per event (QNX 6.4 parser I/O)", rl / 1e6, pb / rl
	printf "goal: >= 300 M events/s and >= 100x babeltrace2 (best against best): %s\n", (pb >= 300e6 && pb >= 100 * bt_rate) ? "met" : "NOT met"
	printf "\n%-52s %12s %10s\n", "", "M lines/s", "ratio"
	printf "%-52s %12.1f %10s\n", "traceprinter > /dev/null (best of 3)", tp_lines / 1e6, ""
	printf "%-52s %12.2f %9.0fx\n", "anchor: babeltrace2 text > /dev/null (best of 2)", bt_lines / 1e6, tp_lines / bt_lines
	printf "goal: >= 20 M lines/s and >= 30x babeltrace2: %s\n", (tp_lines >= 20e6 && tp_lines >= 30 * bt_lines) ? "met" : "NOT met"
}'
