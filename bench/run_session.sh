#!/bin/sh
# SPDX-License-Identifier: MIT
# Session benchmarks of issue 12, each beside its anchor measured in this run:
#   the inline emitter tk_trace_user() in a program attached to a shared-memory session
#   (drained by a logger process through the session API) beside the same emitter with the
#   in-process logger (the recording issue's figure), median of 7 bursts of 1 M events each;
#   4 processes x 2 threads recording flat out for SECONDS into one session drained by one
#   logger: events stored per second, and drops, with stored + dropped == emitted checked.
# usage: bench/run_session.sh [BUILD_DIR]   (TK_BENCH_DIR: scratch space, default /tmp/tracekit-bench;
#                                            TK_BENCH_SECONDS: the flood, default 10;
#                                            TK_BENCH_PROCS / TK_BENCH_THREADS: default 4 / 2)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
DIR=${TK_BENCH_DIR:-/tmp/tracekit-bench}
SECS=${TK_BENCH_SECONDS:-10}
NP=${TK_BENCH_PROCS:-4}
NT=${TK_BENCH_THREADS:-2}
mkdir -p "$DIR"

# the flood writes what it stores: up to ~1 GB/s for SECS seconds (the file is unlinked
# while written, so only the space must be there)
need_mb=$((SECS * 1000 + 300))
avail_mb=$(df -Pm "$DIR" | awk 'NR == 2 { print $4 }')
if [ "$avail_mb" -lt "$need_mb" ]; then
	echo "run_session.sh: $DIR has $avail_mb MB free, the benchmark needs $need_mb MB" >&2
	exit 1
fi

GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"
cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DTK_BUILD_BENCH=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD" --target bench_session >/dev/null
B="$BUILD/bench/bench_session"

# the two emit figures back to back, each the median of 7 bursts
inproc=$(env -u TRACEKIT_SESSION -u TRACEKIT_LOG "$B" inproc "$DIR")
session=$(env -u TRACEKIT_SESSION -u TRACEKIT_LOG "$B" session "$DIR")
sync
flood=$(env -u TRACEKIT_SESSION -u TRACEKIT_LOG "$B" flood "$DIR" "$SECS" "$NP" "$NT")

get() { printf '%s\n%s\n%s\n' "$inproc" "$session" "$flood" | sed -n "s/^$1=//p" | head -n 1; }

awk -v ip="$(get emit_inproc_ns)" -v ss="$(get emit_session_ns)" -v ipd="$(get inproc_dropped)" \
	-v se="$(get session_emitted)" -v sst="$(get session_user_stored)" -v sds="$(get session_dropped_in_stream)" \
	-v sdp="$(get session_dropped_pool)" \
	-v fs="$(get flood_seconds)" -v np="$(get flood_processes)" -v nt="$(get flood_threads)" \
	-v fe="$(get flood_emitted)" -v fst="$(get flood_stored)" -v fds="$(get flood_dropped_in_stream)" \
	-v fdp="$(get flood_dropped_pending)" -v fdpool="$(get flood_dropped_pool)" -v fb="$(get flood_buffers)" \
	-v fwe="$(get flood_write_errors)" 'BEGIN {
	printf "\n== recording into a shared-memory session (this run, this machine) ==\n"
	printf "%-66s %10s %10s\n", "", "ns/event", "ratio"
	printf "%-66s %10.2f %10s\n", "anchor: tk_trace_user(), in-process logger (median of 7 x 1 M)", ip, "1.00x"
	printf "%-66s %10.2f %9.2fx\n", "tk_trace_user(), attached to a session, logger process draining", ss, ss / ip
	printf "session run: %d emitted, %d stored, %d dropped (in the stream %d, counted by the pool %d); in-process drops %d\n",
		se, sst, sds, sds, sdp, ipd
	printf "goal: session emit within 1.2x of the in-process figure: %s\n", (ss <= 1.2 * ip) ? "met" : "NOT met"
	printf "\n== %d processes x %d threads flat out into one session, one logger draining ==\n", np, nt
	printf "%-10s %14s %14s %12s %12s %10s %s\n", "seconds", "emitted", "stored", "dropped", "pending", "M ev/s", "stored+dropped==emitted"
	printf "%-10.2f %14d %14d %12d %12d %10.1f %s\n", fs, fe, fst, fds, fdp, fst / fs / 1e6,
		(fst + fds + fdp == fe) ? "yes" : "NO"
	printf "(%d buffers drained, %.0f MB/s written by the logger; the pool counted %d records dropped in all; write errors %d)\n",
		fb, fb * 16384 / fs / 1e6, fdpool, fwe
	printf "goal: >= 50 M events/s stored in total: %s; no silent drop: %s\n",
		(fst / fs >= 50e6) ? "met" : "NOT met", (fst + fds + fdp == fe && fdpool == fds + fdp) ? "met" : "NOT met"
}'
