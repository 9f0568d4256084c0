#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo`: record a real program, print its trace and convert it.
# usage: scripts/demo.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=demo-out
mkdir -p "$OUT"
TP="$BUILD/tools/traceprinter"

banner() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

banner "1. Record: a multi-threaded program (4 threads sorting arrays, sharing a lock) writes its own .kev trace"
"$BUILD/examples/kev_writer_demo" "$OUT/demo.kev" 4 200
ls -l "$OUT/demo.kev"

banner "2. Print it as QNX traceprinter would (first 40 lines)"
"$TP" -f "$OUT/demo.kev" | head -n 40

banner "3. Only thread and process events, in time order across CPUs, in seconds of the cycle counter"
"$TP" --sort --time=ns --class=THREAD,PROCESS -f "$OUT/demo.kev" | sed -n '/KERNEL EVENTS/,$p' | head -n 25

banner "4. Read it from a pipe, one line per event (-n), and count events per class"
cat "$OUT/demo.kev" | "$TP" -n -f - | sed -n '/KERNEL EVENTS/,$p' | awk 'NR > 1 { split($3, a, ":"); n[a[1]]++ } END { for (c in n) printf "  %-10s %d\n", c, n[c] }'

banner "5. Convert: the full printout to a text file (written whole or not at all)"
"$TP" -f "$OUT/demo.kev" -o "$OUT/demo.txt"
wc -l "$OUT/demo.txt"

printf '\nThe trace and its conversions are in %s/.\n' "$OUT"
