#!/bin/sh
# SPDX-License-Identifier: MIT
# Symbols of tracelogger's cpu-clock samples: examples/pingpong --getppid, recorded with
# tracelogger -g, printed by traceprinter --symbols: the samples' instruction pointers and
# callers resolve through the MMAP events tracelogger wrote (pingpong's main, libc's
# getppid), at least half of the instruction pointers.
# Exits 77 (skipped) when perf_event_open is refused here.
# usage: symbols_samples.sh TRACELOGGER TRACEPRINTER PINGPONG
set -eu
# tracelogger in a session of this test's own ("default" is for users; a parallel test may hold it)
TRACEKIT_SESSION=ctest.symbols_samples.$$
export TRACEKIT_SESSION
unset DEBUGINFOD_URLS # separate debug files from this machine only: no downloads
tl=$1 tp=$2 pp=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$tl" -g -c SYSTEM,PROCESS,THREAD -f "$tmp/s.kev" -- "$pp" --getppid 2000000 >"$tmp/out" 2>"$tmp/err"; then
	echo "SKIP: tracelogger -g cannot record here: $(head -n 3 "$tmp/err")"
	exit 77
fi
"$tp" -n --symbols "$tmp/s.kev" >"$tmp/sym.txt"
n=$(grep -c 'SYSTEM  :PCTRACE' "$tmp/sym.txt" || true)
if [ "$n" -lt 5 ]; then
	echo "SKIP: only $n samples recorded (no cpu-clock samples here?)"
	exit 77
fi
fail=0
main=$(grep -c 'SYSTEM  :PCTRACE .* \(ip\|caller[0-9]*\):main+0x[0-9a-f]* (/[^ ]*/pingpong\.c:[0-9]*)' "$tmp/sym.txt" || true)
if [ "$main" -lt 1 ]; then
	echo "--- no sample names pingpong's main with its source line among $n:"
	grep 'SYSTEM  :PCTRACE' "$tmp/sym.txt" | head -n 5
	fail=1
fi
resolved=$(grep -c 'SYSTEM  :PCTRACE .* ip:[a-zA-Z_]' "$tmp/sym.txt" || true)
if [ $((resolved * 2)) -lt "$n" ]; then
	echo "--- only $resolved of $n samples have a resolved ip:"
	grep 'SYSTEM  :PCTRACE .* ip:0x' "$tmp/sym.txt" | head -n 5
	fail=1
fi
exit $fail
