#!/bin/sh
# SPDX-License-Identifier: MIT
# A tutorial program run with no tracelogger holding its session: it says which TraceEvent()
# call failed and asks whether "tracelogger -d1 -N NAME" runs, exits 1, and leaves no file.
# usage: tutorial_no_logger.sh PROGRAM
set -u
prog=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/run" && cd "$tmp/run" || exit 1
sess="tut-none-$$"
TRACEKIT_SESSION=$sess "$prog" >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" = 1 ] || { echo "FAIL: exit status $st, not 1"; cat "$tmp/err"; exit 1; }
grep -q "TraceEvent() failed" "$tmp/err" || { echo "FAIL: no word of the failed call:"; cat "$tmp/err"; exit 1; }
grep -q "is \"tracelogger -d1 -N $sess\" running?" "$tmp/err" || { echo "FAIL: no hint about the logger:"; cat "$tmp/err"; exit 1; }
[ -z "$(ls -A)" ] || { echo "FAIL: files left behind: $(ls -A)"; exit 1; }
[ ! -e "/dev/shm/tracekit.$(id -u).$sess" ] || { echo "FAIL: a session region was made"; exit 1; }
echo "without a logger: $(head -n 1 "$tmp/err" | sed 's/^[^:]*: //')"
