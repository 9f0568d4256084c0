#!/bin/sh
# SPDX-License-Identifier: MIT
# The SQLite export answers "time each thread spent running, ready and blocked" with one
# query (docs/export.md), and the answer is the one of tracekit stats.
# usage: export_sqlite_stats.sh TRACEKIT SQLITE3 TRACE.kev...
set -eu
tk=$1 sq=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for kev in "$@"; do
	rm -f "$tmp/t.db"
	"$tk" stats --format=csv "$kev" | awk -F, '$1 == "thread" { print $2 "," $3 "," $11 "," $12 "," $13 }' >"$tmp/stats"
	"$tk" convert "$kev" "$tmp/t.db"
	"$sq" -csv "$tmp/t.db" "SELECT t.pid, t.tid,
	        coalesce(sum(CASE WHEN s.bucket = 'running' THEN s.dur END), 0),
	        coalesce(sum(CASE WHEN s.bucket = 'ready' THEN s.dur END), 0),
	        coalesce(sum(CASE WHEN s.bucket = 'blocked' THEN s.dur END), 0)
	    FROM threads t LEFT JOIN thread_states s ON s.pid = t.pid AND s.tid = t.tid
	    GROUP BY t.pid, t.tid ORDER BY t.pid, t.tid" >"$tmp/sql"
	if ! cmp -s "$tmp/stats" "$tmp/sql"; then
		echo "--- $kev: per-thread times of tracekit stats (-) and of the database (+) differ:"
		diff -u "$tmp/stats" "$tmp/sql" | head -20
		fail=1
	elif [ ! -s "$tmp/stats" ]; then
		echo "--- $kev: no threads"
		fail=1
	fi
done
exit $fail
