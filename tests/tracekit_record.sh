#!/bin/sh
# SPDX-License-Identifier: MIT
# tracekit record runs tracelogger from beside it with the arguments as given: a traced
# command's trace is readable by tracekit print and tracekit info, the command's exit status is
# tracekit's, and tracelogger's usage errors come through. Skipped (77) with the reason where
# tracelogger cannot record on this machine (perf_event_open refused).
# usage: tracekit_record.sh TRACEKIT WORKDIR
set -u
# tracelogger in a session of this test's own ("default" is for users; a parallel test may hold it)
TRACEKIT_SESSION=ctest.tracekit_record.$$
export TRACEKIT_SESSION
TKC=$1 WORK=$2
mkdir -p "$WORK"
W=$(mktemp -d "$WORK/tkrec.XXXXXX")
trap 'rm -rf "$W"' EXIT
fail=0

if ! "$TKC" record -f "$W/probe.kev" -c THREAD -- true >"$W/probe.out" 2>&1; then
	echo "SKIP: tracelogger cannot record on this machine: $(cat "$W/probe.out")"
	exit 77
fi

# a traced command: two processes (sh and its child), exit status 3 passed through
"$TKC" record -f "$W/t.kev" -c THREAD,PROCESS -- sh -c 'sleep 0.05; exit 3' >"$W/rec.out" 2>"$W/rec.err"
s=$?
if [ "$s" != 3 ]; then
	echo "--- tracekit record: exit status $s, expected the command's 3 ($(cat "$W/rec.err"))"
	fail=1
fi
if ! "$TKC" print -n -t ns "$W/t.kev" >"$W/t.txt" 2>"$W/print.err"; then
	echo "--- tracekit print cannot read the recording: $(head -n 3 "$W/print.err")"
	fail=1
fi
for what in PROCCREATE_NAME THRUNNING; do
	if ! grep -q "$what" "$W/t.txt"; then
		echo "--- the recording has no $what event"
		fail=1
	fi
done
if ! grep -q 'name:sleep' "$W/t.txt"; then
	echo "--- the recording does not name the traced command's child (sleep)"
	fail=1
fi
if ! "$TKC" info "$W/t.kev" >"$W/info.txt" 2>"$W/info.err" || ! grep -q 'TRACE_' "$W/info.txt"; then
	echo "--- tracekit info on the recording: $(head -n 3 "$W/info.err")"
	fail=1
fi
# -f -: the command's output goes to standard error, not into the trace (audit19 item 5)
"$TKC" record -f - -c THREAD -- seq 2000 >"$W/so.kev" 2>"$W/so.err"
s=$?
if [ "$s" != 0 ] || ! "$TKC" print -n "$W/so.kev" >/dev/null 2>"$W/so.perr"; then
	echo "--- tracekit record -f - -- seq 2000: exit status $s, unreadable: $(head -n 2 "$W/so.perr")"
	fail=1
fi
if ! grep -qx 2000 "$W/so.err"; then
	echo "--- tracekit record -f -: the command's output is not on standard error"
	fail=1
fi
# a command that cannot be found: tracelogger's 127
"$TKC" record -f "$W/none.kev" -c THREAD -- "$W/no-such-program" >/dev/null 2>"$W/none.err"
s=$?
if [ "$s" != 127 ]; then
	echo "--- tracekit record of a missing command: exit status $s, expected 127"
	fail=1
fi
[ $fail = 0 ] && echo "tracekit record: ok"
exit $fail
