#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 5 benchmark: parses a 1 GiB .byfl file with every callback set and prints the time
# beside read(2) and a per-byte fread() loop (Byfl's parsebfbin.c) run on the same file.
# The file is generated with tracekit's writer in $TMPDIR (default /tmp) and removed at the
# end. BFBIN_BENCH_MIB changes its size; BUILD the build directory (default build-bench).
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-${BUILD:-build-bench}}
SIZE_MIB=${BFBIN_BENCH_MIB:-1024}
TMP=${TMPDIR:-/tmp}
GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"

cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DTK_BUILD_BENCH=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD" --target bfbin_parse >/dev/null

# The file and its .part while it is written: make sure they fit, with 100 MiB to spare.
avail_kib=$(df -Pk "$TMP" | awk 'NR == 2 { print $4 }')
need_kib=$((SIZE_MIB * 1024 + 102400))
if [ "$avail_kib" -lt "$need_kib" ]; then
	echo "run_bfbin.sh: $TMP has $((avail_kib / 1024)) MiB free, the benchmark needs $((need_kib / 1024)) MiB" >&2
	exit 1
fi
file=$(mktemp "$TMP/bfbin_bench.XXXXXX")
trap 'rm -f "$file" "$file.part"' EXIT INT TERM

echo "=== bfbin: parsing a ${SIZE_MIB} MiB .byfl file (bench/bfbin_parse.c)"
"$BUILD/bench/bfbin_parse" --generate "$SIZE_MIB" "$file"
