#!/bin/sh
# SPDX-License-Identifier: MIT
# The recorder's cost at process start (issue 9): /bin/true with libtracekit.so preloaded,
# tracing off and with TRACEKIT_LOG set, each beside plain /bin/true measured in the same
# run (interleaved, median of RUNS, default 100), with the goals: at most 1 ms more with
# tracing off, at most 3 ms more with TRACEKIT_LOG. Also the peak RSS of each.
# usage: bench/run_preload.sh [BUILD_DIR]   (TK_BENCH_DIR: scratch space, default /tmp/tracekit-bench;
#                                            TK_BENCH_PRELOAD_RUNS: default 100)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
DIR=${TK_BENCH_DIR:-/tmp/tracekit-bench}
RUNS=${TK_BENCH_PRELOAD_RUNS:-100}
PROG=${TK_BENCH_PRELOAD_PROGRAM:-/bin/true}
mkdir -p "$DIR"

GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"
cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DTK_BUILD_BENCH=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD" --target tracekit spawn_time >/dev/null
lib=$(cd "$BUILD/src" && pwd)/libtracekit.so
logs="$DIR/preload-logs"
rm -rf "$logs"
mkdir -p "$logs"

out=$("$BUILD/bench/spawn_time" "$RUNS" "$lib" "$logs" "$PROG")
n_logs=$(find "$logs" -name 'preload-*.kev' | wc -l)
part=$(find "$logs" -name '*.part' | wc -l)
rm -rf "$logs"
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
objects() { ldd "$PROG" 2>/dev/null | awk '$1 !~ /vdso/ { n++ } END { print n + 0 }'; }
loaded=$(LD_PRELOAD="$lib" objects)
loaded_plain=$(objects)

get() { echo "$out" | sed -n "s/^$1=//p"; }
awk -v runs="$RUNS" -v prog="$PROG" -v n_logs="$n_logs" -v part="$part" -v needed="$needed" \
	-v loaded="$loaded" -v loaded_plain="$loaded_plain" \
	-v p="$(get plain_median_ms)" -v p10="$(get plain_p10_ms)" -v p90="$(get plain_p90_ms)" \
	-v o="$(get preload_median_ms)" -v o10="$(get preload_p10_ms)" -v o90="$(get preload_p90_ms)" \
	-v l="$(get preload_log_median_ms)" -v l10="$(get preload_log_p10_ms)" -v l90="$(get preload_log_p90_ms)" \
	-v prss="$(get plain_rss_kib)" -v orss="$(get preload_rss_kib)" -v lrss="$(get preload_log_rss_kib)" 'BEGIN {
	printf "\n== process start with the recorder preloaded: %s, %d runs each, interleaved ==\n", prog, runs
	printf "libtracekit.so needs: %s\nshared objects %s loads: %d with it preloaded, %d without\n", needed, prog, loaded, loaded_plain
	printf "%-44s %10s %10s %10s %11s %9s\n", "", "median ms", "p10 ms", "p90 ms", "+ vs plain", "RSS KiB"
	printf "%-44s %10.3f %10.3f %10.3f %11s %9d\n", "anchor: plain", p, p10, p90, "", prss
	printf "%-44s %10.3f %10.3f %10.3f %+10.3f %9d\n", "LD_PRELOAD=libtracekit.so, tracing off", o, o10, o90, o - p, orss
	printf "%-44s %10.3f %10.3f %10.3f %+10.3f %9d\n", "  and TRACEKIT_LOG set (a .kev per run)", l, l10, l90, l - p, lrss
	printf "goal: <= 1 ms more with tracing off: %s (%+.3f ms)\n", (o - p <= 1) ? "met" : "NOT met", o - p
	printf "goal: <= 3 ms more with TRACEKIT_LOG: %s (%+.3f ms)\n", (l - p <= 3) ? "met" : "NOT met", l - p
	if (n_logs != runs || part != 0)
		printf "warning: TRACEKIT_LOG runs left %d trace files (expected %d) and %d .part files\n", n_logs, runs, part
}'
