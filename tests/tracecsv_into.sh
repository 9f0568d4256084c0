#!/bin/sh
# SPDX-License-Identifier: MIT
# tracecsv import --into a trace of tracekit's recorder (TRACEKIT_OWNER=buffer, clock
# attributes): the CSV's CLOCK_MONOTONIC_RAW counters come back unchanged from the export
# in the trace's own domain (CLOCK_MONOTONIC_RAW), the recorded events stay, the CSV events
# have a buffer of their own, and QPC data is refused with nothing written.
# usage: tracecsv_into.sh TRACECSV TRACEPRINTER WORKER_POOL INPUT_DIR
set -eu
tc=$1 tp=$2 wp=$3 in=$4
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
"$wp" -t 2 -n 20 -o "$w/base.kev" >/dev/null
"$tc" import -q -o "$w/m.kev" --into "$w/base.kev" "$in/power-hostname-octagon53.csv"
mkdir "$w/out"
"$tc" export -q -o "$w/out" "$w/m.kev"
f=$(ls "$w"/out/m-counters-hostname-*.csv)
expected='tsc.CLOCK_MONOTONIC_RAW,Distance.COUNT,"Power, W.INST",Temp.INST,pid,tid
100,10,1.5,-3,,
200,20,2.25,,7,8
200,,300.0,40,7,9
300,35,0.1,41,,'
if [ "$(cat "$f")" != "$expected" ]; then
	echo "tracecsv_into: counters after --into and export:"; cat "$f"; exit 1
fi
# every recorded event is still there, then one buffer (BUFFER + THRUNNING 0/0) for the CSV
nb=$("$tp" "$w/base.kev" | grep -c 'CPU:')
nm=$("$tp" "$w/m.kev" | grep -c 'CPU:')
[ "$nm" -gt "$nb" ] || { echo "tracecsv_into: $nm events after the merge, $nb before"; exit 1; }
"$tp" "$w/m.kev" | grep -q 'THRUNNING *pid:0 tid:0' || { echo "tracecsv_into: no buffer of its own"; exit 1; }
grep -q 'TRACEKIT_CSV_SOURCE_CLOCK::CLOCK_MONOTONIC_RAW' "$w/m.kev" || { echo "tracecsv_into: no source clock"; exit 1; }
if "$tc" import -q -o "$w/q.kev" --into "$w/base.kev" "$in/phases-hostname-octagon53.csv" 2>/dev/null; then
	echo "tracecsv_into: QPC data merged into a recorded trace"; exit 1
fi
[ ! -e "$w/q.kev" ] || { echo "tracecsv_into: q.kev left behind"; exit 1; }
echo "tracecsv_into: ok"
