#!/bin/sh
# SPDX-License-Identifier: MIT
# Session benchmarks of issue 12, each beside its anchor measured in this run:
#   the inline emitter tk_trace_user() in a program attached to a shared-memory session
#   (drained by a logger process through the session API) beside the same emitter with the
#   in-process logger (the recording issue's figure), median of 7 bursts of 1 M events each,
#   with a logger that blocks on the session's futex and with a batching one;
#   4 processes x 2 threads recording flat out for SECONDS into one session drained by one
#   logger, into a file and (the session's own rate) only counted: events stored per
#   second, and drops, with stored + dropped == emitted checked; dd's write rate to the
#   same directory as the anchor of the file run.
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

# the emit figures back to back, each the median of 7 bursts; three rounds, in turn, and
# the best round of each kept (a shared machine's noise only ever adds time)
run() { env -u TRACEKIT_SESSION -u TRACEKIT_LOG "$B" "$@"; }
rounds=""
for r in 1 2 3; do
	rounds="$rounds
$(run inproc "$DIR")
$(run session "$DIR")
$(run session-batch "$DIR")"
done
best() { echo "$rounds" | sed -n "s/^$1=//p" | sort -g | head -n 1; }
last() { echo "$rounds" | sed -n "s/^$1=//p" | tail -n 1; }
out="emit_inproc_ns=$(best emit_inproc_ns)
emit_session_futex_ns=$(best emit_session_futex_ns)
emit_session_batch_ns=$(best emit_session_batch_ns)"
for k in inproc_dropped session_futex_emitted session_futex_stored session_futex_dropped_pool \
	session_batch_emitted session_batch_stored session_batch_dropped_pool; do
	out="$out
$k=$(last $k)"
done
sync
out="$out
$(run flood "$DIR" "$SECS" "$NP" "$NT")"
sync
out="$out
$(run flood-count "$DIR" "$SECS" "$NP" "$NT")"
# --- the file system's own write rate: dd in 1 MiB blocks ---
dd_mb=$((SECS * 300))
t0=$(date +%s%N)
dd if=/dev/zero of="$DIR/dd.bin" bs=1M count="$dd_mb" conv=fsync 2>/dev/null
t1=$(date +%s%N)
dd_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
rm -f "$DIR/dd.bin"

get() { echo "$out" | sed -n "s/^$1=//p" | head -n 1; }

awk -v ip="$(get emit_inproc_ns)" -v ipd="$(get inproc_dropped)" \
	-v sf="$(get emit_session_futex_ns)" -v sb="$(get emit_session_batch_ns)" \
	-v sfe="$(get session_futex_emitted)" -v sfs="$(get session_futex_stored)" -v sfd="$(get session_futex_dropped_pool)" \
	-v sbe="$(get session_batch_emitted)" -v sbs="$(get session_batch_stored)" -v sbd="$(get session_batch_dropped_pool)" \
	-v np="$NP" -v nt="$NT" \
	-v fs="$(get file_seconds)" -v fe="$(get file_emitted)" -v fst="$(get file_stored)" \
	-v fds="$(get file_dropped_in_stream)" -v fdp="$(get file_dropped_pending)" -v fdpool="$(get file_dropped_pool)" \
	-v fb="$(get file_buffers)" -v fwe="$(get file_write_errors)" \
	-v cs="$(get count_seconds)" -v ce="$(get count_emitted)" -v cst="$(get count_stored)" \
	-v cds="$(get count_dropped_in_stream)" -v cdp="$(get count_dropped_pending)" -v cdpool="$(get count_dropped_pool)" \
	-v ddmb="$dd_mb" -v dds="$dd_s" 'BEGIN {
	printf "\n== recording into a shared-memory session (this run, this machine) ==\n"
	printf "%-70s %10s %10s\n", "", "ns/event", "ratio"
	printf "%-70s %10.2f %10s\n", "anchor: tk_trace_user(), in-process logger (median of 7 x 1 M)", ip, "1.00x"
	printf "(each: the best of 3 rounds run in turn)\n"
	printf "%-70s %10.2f %9.2fx\n", "tk_trace_user() in a session, logger waiting on the futex", sf, sf / ip
	printf "%-70s %10.2f %9.2fx\n", "tk_trace_user() in a session, logger draining in 1 ms batches", sb, sb / ip
	printf "stored / emitted: futex logger %d / %d, batching logger %d / %d; dropped %d, %d (in-process %d)\n",
		sfs, sfe, sbs, sbe, sfd, sbd, ipd
	printf "goal: session emit within 1.2x of the in-process figure: %s (futex logger), %s (batching logger)\n",
		(sf <= 1.2 * ip) ? "met" : "NOT met", (sb <= 1.2 * ip) ? "met" : "NOT met"
	printf "\n== %d processes x %d threads flat out into one session, one logger draining ==\n", np, nt
	printf "%-26s %8s %12s %12s %12s %10s %10s %s\n", "", "seconds", "emitted", "stored", "dropped", "pending", "M ev/s", "stored+dropped==emitted"
	printf "%-26s %8.2f %12d %12d %12d %10d %10.1f %s\n", "into a file", fs, fe, fst, fds, fdp, fst / fs / 1e6,
		(fst + fds + fdp == fe && fdpool == fds + fdp) ? "yes" : "NO"
	printf "%-26s %8.2f %12d %12d %12d %10d %10.1f %s\n", "drained, counted only", cs, ce, cst, cds, cdp, cst / cs / 1e6,
		(cst + cds + cdp == ce && cdpool == cds + cdp) ? "yes" : "NO"
	printf "%-26s %8.2f %12s %12s %12s %10s %10.1f  (%.0f MB/s; the logger wrote %.0f MB/s)\n", "anchor: dd bs=1M, fsync",
		dds, "", "", "", "", ddmb * 1048576 / 16 / dds / 1e6, ddmb * 1.048576 / dds, fb * 16384 / fs / 1e6
	printf "write errors: %d\n", fwe
	printf "goal: >= 50 M events/s stored in total: %s into the file, %s drained; no silent drop: %s\n",
		(fst / fs >= 50e6) ? "met" : "NOT met", (cst / cs >= 50e6) ? "met" : "NOT met",
		(fst + fds + fdp == fe && cst + cds + cdp == ce) ? "met" : "NOT met"
}'
