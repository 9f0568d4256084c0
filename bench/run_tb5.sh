#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 4 benchmark: the .tb5 container behind the TBRW API (bench/bench_tb5.c). Prints
# TBRW_add_data, TBRW_enumerate_data, TBRW_dobind and the time to open a large file, each
# beside its anchor (write(2), read(2), enumeration, open(2)) measured in the same run.
# Files go to $TMPDIR (default /tmp) and are removed at the end. TB5_BENCH_MIB (default 512)
# sets the data size, TB5_BENCH_OPEN_GIB (default 10) the size of the file opened,
# TB5_BENCH_BIND_M (default 20) the millions of samples bound; BUILD the build directory.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-${BUILD:-build-bench}}
MIB=${TB5_BENCH_MIB:-512}
OPEN_GIB=${TB5_BENCH_OPEN_GIB:-10}
BIND_M=${TB5_BENCH_BIND_M:-20}
TMP=${TMPDIR:-/tmp}
GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"

cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DTK_BUILD_BENCH=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD" --target bench_tb5 >/dev/null

# At most two data files and the anchor at once, or the big file: make sure they fit.
avail_mib=$(df -Pm "$TMP" | awk 'NR == 2 { print $4 }')
need_mib=$((MIB * 3 + 200))
[ $((OPEN_GIB * 1024 + 200)) -gt "$need_mib" ] && need_mib=$((OPEN_GIB * 1024 + 200))
if [ "$avail_mib" -lt "$need_mib" ]; then
	echo "run_tb5.sh: $TMP has $avail_mib MiB free, the benchmark needs $need_mib MiB" >&2
	exit 1
fi
dir=$(mktemp -d "$TMP/tb5_bench.XXXXXX")
# add_data, enumerate and dobind run in memory (see bench/bench_tb5.c) when /dev/shm has room
memdir=$dir
shm_mib=$(df -Pm /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
if [ -n "$shm_mib" ] && [ "$shm_mib" -gt $((MIB * 7 / 2 + 100)) ]; then
	memdir=$(mktemp -d /dev/shm/tb5_bench.XXXXXX)
fi
trap 'rm -rf "$dir" "$memdir"' EXIT INT TERM
export TB5_BENCH_MEMDIR="$memdir"
"$BUILD/bench/bench_tb5" "$dir" "$MIB" "$OPEN_GIB" "$BIND_M"
