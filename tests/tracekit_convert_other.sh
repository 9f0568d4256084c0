#!/bin/sh
# SPDX-License-Identifier: MIT
# tracekit convert runs the conversions that exist beside the exports (issue 14, item 4):
# a .byfl file to CSV, SQLite, XML Spreadsheet and Callgrind gives what bfbin2csv,
# bfbin2sqlite3, bfbin2xmlss and bfbin2cgrind give; a VTune CSV file to a .kev what tracecsv
# import gives, and --to=csv what tracecsv export gives; a .byfl to a format it has not is a
# usage error (2) that leaves nothing.
# usage: tracekit_convert_other.sh TOOLS_DIR FILE.byfl
set -u
T=$1 byfl=$2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export SOURCE_DATE_EPOCH=1700000000

same() { # what, expected file, actual file
	cmp -s "$2" "$3" || fail "$1: tracekit convert's output differs from the tool's"
}
"$T/tracekit" convert "$byfl" "$W/a.csv" || fail "convert .byfl to .csv"
"$T/bfbin2csv" -o "$W/b.csv" "$byfl"
same ".byfl to .csv" "$W/b.csv" "$W/a.csv"
"$T/tracekit" convert "$byfl" "$W/a.xml" || fail "convert .byfl to .xml"
"$T/bfbin2xmlss" "$byfl" "$W/b.xml"
same ".byfl to .xml" "$W/b.xml" "$W/a.xml"
"$T/tracekit" convert "$byfl" "$W/a.cgrind" || fail "convert .byfl to .cgrind"
"$T/bfbin2cgrind" "$byfl" "$W/b.cgrind"
same ".byfl to .cgrind" "$W/b.cgrind" "$W/a.cgrind"
"$T/tracekit" convert "$byfl" "$W/a.db" || fail "convert .byfl to .db"
[ -s "$W/a.db" ] || fail ".byfl to .db: no database"
"$T/tracekit" convert "$byfl" "$W/a.json" 2>"$W/err"
rc=$?
[ $rc -eq 2 ] || fail ".byfl to .json: exit status $rc, 2 expected"
grep -q 'a .byfl file converts to' "$W/err" || fail ".byfl to .json: $(cat "$W/err")"
[ ! -e "$W/a.json" ] || fail ".byfl to .json left a file"

printf 'name,start_tsc.QPC,end_tsc,pid,tid\nframe1,2,30,,\ntaskType1,3,43,1,1\n' >"$W/ph-hostname-h.csv"
"$T/tracekit" convert "$W/ph-hostname-h.csv" "$W/a.kev" || fail "convert .csv to .kev"
"$T/tracecsv" import -q -o "$W/b.kev" "$W/ph-hostname-h.csv"
"$T/traceprinter" "$W/a.kev" | grep -v TRACE_FILE_NAME >"$W/a.txt"
"$T/traceprinter" "$W/b.kev" | grep -v TRACE_FILE_NAME >"$W/b.txt"
[ -s "$W/b.txt" ] && same ".csv to .kev" "$W/b.txt" "$W/a.txt"
mkdir "$W/outa" "$W/outb"
"$T/tracekit" convert --to=csv "$W/b.kev" "$W/outa" || fail "convert --to=csv"
"$T/tracecsv" export -q -o "$W/outb" "$W/b.kev"
same "--to=csv" "$W/outb/b-intervals-hostname-h.csv" "$W/outa/b-intervals-hostname-h.csv"
[ $failures -eq 0 ] || exit 1
echo "ok"
