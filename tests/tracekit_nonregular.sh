#!/bin/sh
# SPDX-License-Identifier: MIT
# tracekit convert from inputs that are not regular files (audit of issue 14): a FIFO is read
# once, also with symbols (the default, whose first pass over a regular file reads the
# mappings): every format completes, with the output of the same file read from its name.
# And standard output a pipe closed early leaves no temporary.
# usage: tracekit_nonregular.sh TRACEKIT TRACE.kev
set -u
tkc=$1 kev=$2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for ext in json pftrace db; do
	"$tkc" convert "$kev" "$W/ref.$ext" || { fail "convert $kev to .$ext"; continue; }
	rm -f "$W/fifo"
	mkfifo "$W/fifo" || { echo "SKIP: no mkfifo"; exit 77; }
	cat "$kev" >"$W/fifo" &
	writer=$!
	timeout 10 "$tkc" convert "$W/fifo" "$W/out.$ext" >"$W/err" 2>&1
	rc=$?
	kill "$writer" 2>/dev/null
	wait "$writer" 2>/dev/null
	if [ $rc -eq 124 ]; then
		fail "convert from a FIFO to .$ext hangs (10 s)"
		continue
	fi
	[ $rc -eq 0 ] || { fail "convert from a FIFO to .$ext: exit status $rc: $(cat "$W/err")"; continue; }
	if [ "$ext" = db ]; then
		command -v sqlite3 >/dev/null 2>&1 || continue
		q='SELECT count(*) FROM events'
		[ "$(sqlite3 "$W/out.db" "$q")" = "$(sqlite3 "$W/ref.db" "$q")" ] || fail "the .db from a FIFO differs"
	else
		cmp -s "$W/out.$ext" "$W/ref.$ext" || fail "the .$ext from a FIFO differs from the one from the file"
	fi
done
# standard output a pipe whose reader goes: the SQLite export's private directory (in
# TMPDIR) is removed when SIGPIPE ends tracekit
mkdir "$W/tmp"
TMPDIR=$W/tmp "$tkc" convert --to=sqlite "$kev" - | head -c 10 >/dev/null
left=$(ls -A "$W/tmp")
[ -z "$left" ] || fail "a reader gone (SIGPIPE) left $left in TMPDIR"
[ $failures -eq 0 ] || exit 1
echo "ok"
