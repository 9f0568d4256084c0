#!/bin/sh
# SPDX-License-Identifier: MIT
# Export benchmark (issue 14): a 10 M-event .kev exported to Chrome JSON, Perfetto and the
# statistics, each to /dev/null, and to an SQLite database, beside traceprinter printing the same file to /dev/null in
# this run. Goals: Perfetto >= 100 M events/s, JSON >= 20 M/s, SQLite >= 2 M/s, stats >= 200 M/s.
# The SQLite export's own anchor: SQLite inserting and indexing one minimal row per event.
# usage: bench/run_export.sh [BUILD_DIR]   (TK_BENCH_DIR: scratch space, default /tmp/tracekit-bench;
#                                           TK_BENCH_EVENTS: default 10000000)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
DIR=${TK_BENCH_DIR:-/tmp/tracekit-bench}
N=${TK_BENCH_EVENTS:-10000000}
mkdir -p "$DIR"

need_mb=$((N * 16 / 1000000 * 8 + 100)) # the trace and a database of it
avail_mb=$(df -Pm "$DIR" | awk 'NR == 2 { print $4 }')
if [ "$avail_mb" -lt "$need_mb" ]; then
	echo "run_export.sh: $DIR has $avail_mb MB free, the benchmark needs $need_mb MB" >&2
	exit 1
fi

GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"
cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DTK_BUILD_BENCH=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD" --target bench_export traceprinter >/dev/null

KEV="$DIR/export-$N.kev"
out=$("$BUILD/bench/bench_export" "$KEV" "$N" 3)
get() { echo "$out" | sed -n "s/^$1=//p"; }

now() { date +%s%N; }
best=""
for i in 1 2 3 4 5 6 7 8 9; do
	t0=$(now)
	"$BUILD/tools/traceprinter" -q -f "$KEV" >/dev/null
	t1=$(now)
	t=$(((t1 - t0) / 1000))
	if [ -z "$best" ] || [ "$t" -lt "$best" ]; then best=$t; fi
done

awk -v ev="$(get json_events)" -v json="$(get json_events_per_sec)" -v pf="$(get perfetto_events_per_sec)" \
	-v st="$(get stats_events_per_sec)" -v sq="$(get sqlite_events_per_sec)" -v sqf="$(get sqlite_floor_rows_per_sec)" \
	-v slices="$(get json_slices)" -v tpus="$best" -v fr="$(get json_runs)" 'BEGIN {
	tp = ev / (tpus / 1e6)
	printf "\n== exporting a trace of %d events, %d slices (this run, this machine) ==\n", ev, slices
	printf "%-48s %12s %12s %8s\n", "", "M events/s", "vs print", "goal"
	printf "%-48s %12.1f %11.2fx %8s %s\n", "Perfetto protobuf > /dev/null (best of " fr ")", pf / 1e6, pf / tp, ">= 100", (pf >= 100e6 ? "met" : "NOT met")
	printf "%-48s %12.1f %11.2fx %8s %s\n", "Chrome JSON > /dev/null (best of " fr ")", json / 1e6, json / tp, ">= 20", (json >= 20e6 ? "met" : "NOT met")
	printf "%-48s %12.1f %11.2fx %8s %s\n", "SQLite database (best of 3)", sq / 1e6, sq / tp, ">= 2", (sq >= 2e6 ? "met" : "NOT met")
	printf "%-48s %12.1f %11.2fx %8s %s\n", "statistics (text) (best of " fr ")", st / 1e6, st / tp, ">= 200", (st >= 200e6 ? "met" : "NOT met")
	printf "%-48s %12.1f %11s\n", "anchor: traceprinter > /dev/null (best of 9)", tp / 1e6, "1.00x"
	printf "%-48s %12.1f %11s   (one row of 4 integers per event, indexed once)\n", "anchor: SQLite itself, as many rows", sqf / 1e6, ""
}'
