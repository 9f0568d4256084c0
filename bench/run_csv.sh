#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 13 benchmark: tracecsv. Imports a 1 GiB VTune interval file into .kev (floor 300 MB/s)
# beside `wc -l` on the same file in the same run (the cost of just reading it), and exports
# 10 M intervals from a .kev (floor 200 MB/s of CSV written). The files come from
# bench/bench_csv.c (rows in order of start, 12 names, tasks and frames, about 46 bytes a
# row). CSV_BENCH_MIB (default 1024) sets the import file's size, CSV_BENCH_EXPORT_M
# (default 10) the millions of intervals exported. Files go to /dev/shm when it has room
# (as the tb5 benchmark does: the figures are then tracecsv's, not the disk's), else to
# $TMPDIR (default /tmp); they are removed at the end. BUILD is the build directory.
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-${BUILD:-build-bench}}
MIB=${CSV_BENCH_MIB:-1024}
EXPORT_M=${CSV_BENCH_EXPORT_M:-10}
TMP=${TMPDIR:-/tmp}
GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"

cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DTK_BUILD_BENCH=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD" --target bench_csv tracecsv >/dev/null

# the CSV, its .kev (about as large) and the export's CSV at once
need_mib=$((MIB * 3 + EXPORT_M * 46 * 3 + 200))
dir=""
shm_mib=$(df -Pm /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
if [ -n "$shm_mib" ] && [ "$shm_mib" -gt "$need_mib" ]; then
	dir=$(mktemp -d /dev/shm/csv_bench.XXXXXX)
else
	avail_mib=$(df -Pm "$TMP" | awk 'NR == 2 { print $4 }')
	if [ "$avail_mib" -lt "$need_mib" ]; then
		echo "run_csv.sh: $TMP has $avail_mib MiB free, the benchmark needs $need_mib MiB" >&2
		exit 1
	fi
	dir=$(mktemp -d "$TMP/csv_bench.XXXXXX")
fi
trap 'rm -rf "$dir"' EXIT INT TERM
echo "files in $dir"

now() { date +%s.%N; }
rate() { # bytes seconds -> MB/s
	awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / s / 1e6 }'
}

# ---- import ---------------------------------------------------------------------------
rows=$((MIB * 1048576 / 46))
csv=$dir/big-hostname-bench.csv
"$BUILD/bench/bench_csv" "$csv" "$rows"
bytes=$(stat -c %s "$csv")
cat "$csv" >/dev/null # in the page cache for both readers
t0=$(now)
lines=$(wc -l <"$csv")
t1=$(now)
"$BUILD/tools/tracecsv" import -q -o "$dir/big.kev" "$csv"
t2=$(now)
wc_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
imp_s=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
echo "import: $bytes bytes, $((lines - 1)) intervals"
echo "  wc -l                    $(rate "$bytes" "$wc_s") MB/s"
echo "  tracecsv import (.kev)   $(rate "$bytes" "$imp_s") MB/s (floor 300), $(stat -c %s "$dir/big.kev") bytes of .kev"
imp_rate=$(rate "$bytes" "$imp_s")
rm -f "$dir/big.kev" "$csv"

# ---- export ---------------------------------------------------------------------------
rows=$((EXPORT_M * 1000000))
csv=$dir/ex-hostname-bench.csv
"$BUILD/bench/bench_csv" "$csv" "$rows"
"$BUILD/tools/tracecsv" import -q -o "$dir/ex.kev" "$csv"
rm -f "$csv"
mkdir "$dir/out"
t0=$(now)
"$BUILD/tools/tracecsv" export -q -o "$dir/out" --host bench "$dir/ex.kev"
t1=$(now)
out=$dir/out/ex-intervals-hostname-bench.csv
obytes=$(stat -c %s "$out")
exp_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
exp_rate=$(rate "$obytes" "$exp_s")
echo "export: $rows intervals, $obytes bytes of CSV"
echo "  tracecsv export (.kev)   $exp_rate MB/s (floor 200)"

status=0
[ "$imp_rate" -ge 300 ] || { echo "run_csv.sh: import below 300 MB/s" >&2; status=1; }
[ "$exp_rate" -ge 200 ] || { echo "run_csv.sh: export below 200 MB/s" >&2; status=1; }
exit $status
