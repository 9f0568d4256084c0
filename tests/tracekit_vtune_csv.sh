#!/bin/sh
# SPDX-License-Identifier: MIT
# VTune CSV data as a user meets it (docs/vtune-csv.md): Intel's published example
# (phases-hostname-octagon53.csv: two frames, four tasks of thread 1/1 of which two cross)
# and counters of both kinds, each imported with tracecsv and opened with tracekit convert
# and stats. The Chrome JSON has every interval as an async begin/end pair whose ids never
# cross (export_json_check.py) on pid/tid 1/1, not the writer's; Perfetto's has them as
# slices of "tasks" and "frames" tracks, thread 1/1's among them, and the counters with
# their values; SQLite's slices and the statistics give each interval the duration tracecsv
# export gives it (the two pairings agree), and tracekit info's statistics list them; a
# trace without the header's attribute keeps instants.
# usage: tracekit_vtune_csv.sh TOOLS_DIR CSV_INPUT_DIR PYTHON3 JSON_CHECK [PROTOC PROTO_DIR] [SQLITE3]
set -u
T=$1 IN=$2 PY=$3 CHECK=$4 PROTOC=${5:-} PROTO_DIR=${6:-} SQLITE3=${7:-}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export SOURCE_DATE_EPOCH=1700000000 TZ=UTC

"$T/tracecsv" import -o "$W/p.kev" "$IN/phases-hostname-octagon53.csv" || fail "import phases"
"$T/tracecsv" import -o "$W/c.kev" "$IN/power-hostname-octagon53.csv" || fail "import power"

# Chrome JSON: 6 intervals, async pairs that never cross, on thread 1/1 (tasks)
"$T/tracekit" convert "$W/p.kev" "$W/p.json" 2>"$W/err" || fail "convert to JSON"
[ -s "$W/err" ] && fail "convert to JSON warned: $(cat "$W/err")"
"$PY" "$CHECK" "$W/p.json" >/dev/null || fail "the JSON does not check"
n=$(grep -c '"ph":"b"' "$W/p.json")
[ "$n" = 6 ] || fail "JSON: $n interval begins, expected 6"
n=$(grep -c '"cat":"task","ph":"b",.*"pid":1,"tid":1,' "$W/p.json")
[ "$n" = 4 ] || fail "JSON: $n task begins on 1/1, expected 4"
grep -q '"ph":"i"' "$W/p.json" && fail "JSON: user instants left"
# taskType2 [45, 54] begins before taskType1 [46, 59] ends: they cross, so they are on two
# lanes (ids) of the thread's tasks
ids=$(grep '"cat":"task","ph":"b"' "$W/p.json" | sed 's/.*"id":"\([^"]*\)".*/\1/' | sort -u | wc -l)
[ "$ids" -ge 2 ] || fail "JSON: crossing tasks share one lane"

# the durations, as tracecsv export gives them (QPC ticks of 100 ns)
mkdir -p "$W/csv"
"$T/tracekit" convert --to=csv "$W/p.kev" "$W/csv" || fail "convert --to=csv"
tail -n +2 "$W"/csv/p-intervals-hostname-*.csv | awk -F, '{ print $1, ($3 - $2) * 100 }' | sort >"$W/want"
[ "$(wc -l <"$W/want")" = 6 ] || fail "tracecsv export: not 6 intervals"

# statistics: the same intervals per name
"$T/tracekit" stats --format=csv "$W/p.kev" >"$W/stats.csv" || fail "stats"
awk '{ n[$1]++; t[$1] += $2 } END { for (k in n) print k, n[k], t[k] }' "$W/want" | sort >"$W/want_sum"
grep '^interval,' "$W/stats.csv" | awk -F, '{ sub(/ \(frame\)$/, "", $6); print $6, $7, $8 }' | sort >"$W/got_sum"
cmp -s "$W/want_sum" "$W/got_sum" || fail "stats: intervals per name differ from tracecsv export's: $(cat "$W/got_sum")"

# tracekit info's statistics too (tk_export_csv_data())
"$T/tracekit" info "$W/p.kev" | grep -q '^taskType1  *2 ' || fail "info: no intervals of taskType1"

if [ -n "$PROTOC" ]; then
	"$T/tracekit" convert "$W/p.kev" "$W/p.pftrace" || fail "convert to Perfetto"
	"$PROTOC" --decode=perfetto.protos.Trace -I "$PROTO_DIR" "$PROTO_DIR/perfetto_trace.proto" <"$W/p.pftrace" \
		>"$W/p.txt" || fail "protoc cannot decode the Perfetto export"
	n=$(grep -c 'TYPE_SLICE_BEGIN' "$W/p.txt")
	[ "$n" = 6 ] || fail "Perfetto: $n slice begins, expected 6"
	n=$(grep -c 'TYPE_SLICE_END' "$W/p.txt")
	[ "$n" = 6 ] || fail "Perfetto: $n slice ends, expected 6"
	grep -q 'name: "tasks"' "$W/p.txt" || fail "Perfetto: no tasks track"
	grep -q 'name: "frames"' "$W/p.txt" || fail "Perfetto: no frames track"
	grep -A3 'thread {' "$W/p.txt" | grep -q 'tid: 1' || fail "Perfetto: no thread 1/1"
	"$T/tracekit" convert "$W/c.kev" "$W/c.pftrace" || fail "convert counters to Perfetto"
	"$PROTOC" --decode=perfetto.protos.Trace -I "$PROTO_DIR" "$PROTO_DIR/perfetto_trace.proto" <"$W/c.pftrace" \
		>"$W/c.txt" || fail "protoc cannot decode the counters"
	grep -q 'double_counter_value: 1.5' "$W/c.txt" || fail "Perfetto: no double counter value 1.5"
	grep -q 'counter_value: -3' "$W/c.txt" || fail "Perfetto: no integer counter value -3"
	grep -q 'name: "Power, W"' "$W/c.txt" || fail "Perfetto: no counter track Power, W"
fi

if [ -n "$SQLITE3" ]; then
	"$T/tracekit" convert "$W/p.kev" "$W/p.db" || fail "convert to SQLite"
	"$SQLITE3" "$W/p.db" "SELECT name, dur FROM slices WHERE category IN ('TASK', 'FRAME')" | tr '|' ' ' |
		sort >"$W/got"
	cmp -s "$W/want" "$W/got" || fail "SQLite: slices differ from tracecsv export's intervals: $(cat "$W/got")"
	n=$("$SQLITE3" "$W/p.db" "SELECT count(*) FROM slices WHERE category = 'TASK' AND pid = 1 AND tid = 1")
	[ "$n" = 4 ] || fail "SQLite: $n tasks of 1/1, expected 4"
	"$T/tracekit" convert "$W/c.kev" "$W/c.db" || fail "convert counters to SQLite"
	# doubles as REAL, but for 3e2: a whole number in an INTEGER column is stored as an integer
	n=$("$SQLITE3" "$W/c.db" "SELECT group_concat(typeof(value) || ' ' || value, ', ') FROM counters WHERE name = 'Power, W'")
	[ "$n" = "real 1.5, real 2.25, integer 300, real 0.1" ] || fail "SQLite: Power, W is $n"
fi

# the same events without the header's TRACEKIT_CSV_CLOCK: another program's user events
"$PY" -c "
import sys
b = open(sys.argv[1], 'rb').read()
i = b.index(b'TRACEKIT_CSV_CLOCK')
open(sys.argv[2], 'wb').write(b[:i] + b'TRACEKIT_XSV_CLOCK' + b[i + 18:])
" "$W/p.kev" "$W/q.kev" || fail "rename the attribute"
"$T/tracekit" convert "$W/q.kev" "$W/q.json" || fail "convert without the attribute"
grep -q '"ph":"b"' "$W/q.json" && fail "intervals paired without the header saying so"
grep -q '"name":"USER 1000"' "$W/q.json" || fail "no user instants without the attribute"

[ "$failures" = 0 ] || exit 1
echo "ok"
