#!/bin/sh
# SPDX-License-Identifier: MIT
# What a tool costs to start: `traceprinter --version` and `tracekit --version`, each beside
# /bin/true started the same way in the same run (interleaved, median of RUNS, default 200;
# the shell's fork and exec are in all three). The libraries a tool loads at start are the
# most of it: HDF5 (and curl, TLS, Kerberos through it) is loaded only to write HDF5.
# usage: bench/run_start.sh [BUILD_DIR]   (TK_BENCH_START_RUNS: default 200)
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
RUNS=${TK_BENCH_START_RUNS:-200}

GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"
cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DTK_BUILD_BENCH=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD" --target traceprinter tracekit_cmd >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s%N; }
i=0
while [ "$i" -lt "$RUNS" ]; do
	for p in true traceprinter tracekit; do
		case $p in
		true) exe=/bin/true ;;
		*) exe=$BUILD/tools/$p ;;
		esac
		t0=$(now)
		"$exe" --version >/dev/null
		t1=$(now)
		echo $(((t1 - t0) / 1000)) >>"$tmp/$p"
	done
	i=$((i + 1))
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
t_true=$(median "$tmp/true")
libs() { ldd "$BUILD/tools/$1" | wc -l; }
printf '\n== starting a tool (median of %d, this run, this machine) ==\n' "$RUNS"
printf '%-36s %10s %14s %16s\n' "" "ms" "vs /bin/true" "shared libraries"
for p in traceprinter tracekit; do
	t=$(median "$tmp/$p")
	awk -v t="$t" -v a="$t_true" -v n="$(libs "$p")" -v name="$p --version" \
		'BEGIN { printf "%-36s %10.2f %13.2fx %16d\n", name, t / 1000, t / a, n }'
done
awk -v a="$t_true" 'BEGIN { printf "%-36s %10.2f %14s\n", "anchor: /bin/true --version", a / 1000, "1.00x" }'
