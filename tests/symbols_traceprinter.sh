#!/bin/sh
# SPDX-License-Identifier: MIT
# Symbols in traceprinter: tests/tools/symbols_prog (built with -g -finstrument-functions)
# records its functions' entries and exits; traceprinter --symbols prints them as
# name+0xOFF (file:line) with the lines of the source, whatever the order of the buffers in
# the file, and so its ADDRESS (trace_here()) and an interrupt handler's address; every
# other line is as without the option; tracekit print passes it through.
# usage: symbols_traceprinter.sh SYMBOLS_PROG TRACEPRINTER TRACEKIT SOURCE
set -eu
unset DEBUGINFOD_URLS # separate debug files from this machine only: no downloads
prog=$1 tp=$2 tk=$3 src=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

"$prog" "$tmp/s.kev" >"$tmp/prog.out"
handlers=$(grep -c '^int_handler$' "$tmp/prog.out" || true)
"$tp" -n --symbols "$tmp/s.kev" >"$tmp/sym.txt"
"$tp" -n "$tmp/s.kev" >"$tmp/plain.txt"

# the line of each function's opening brace in the source (its entry's line in DWARF)
line_of() { echo $(($(grep -n "^__attribute__((noinline)) int $1(int [a-z]*)\$" "$src" | cut -d: -f1) + 1)); }
inner=$(line_of symprog_inner)
outer=$(line_of symprog_outer)
expect() { # count pattern
	n=$(grep -c -- "$2" "$tmp/sym.txt" || true)
	if [ "$n" != "$1" ]; then
		echo "--- traceprinter --symbols: $n lines matching '$2', expected $1"
		fail=1
	fi
}
loc='(/[^ ]*/symbols_prog\.c'
expect 3 "SYSTEM  :FUNC_ENTER thisfn:symprog_inner+0x0 $loc:$inner) call_site:symprog_outer+0x[0-9a-f]* $loc:[0-9]*)\$"
expect 3 "SYSTEM  :FUNC_EXIT thisfn:symprog_inner+0x0 $loc:$inner) call_site:symprog_outer+0x[0-9a-f]* $loc:[0-9]*)\$"
# (a return address may have no line: line 0 after a call, as clang with ThreadSanitizer makes it)
expect 1 "SYSTEM  :FUNC_ENTER thisfn:symprog_outer+0x0 $loc:$outer) call_site:worker+0x[0-9a-f]*\( $loc:[0-9]*)\)\?\$"
expect 1 "SYSTEM  :FUNC_EXIT thisfn:symprog_outer+0x0 $loc:$outer) call_site:worker+0x"
expect 0 "FUNC_.*thisfn:0x"
expect 1 "SYSTEM  :ADDRESS addr:symprog_outer+0x[0-9a-f]* $loc:[0-9]*)\$"
expect "$handlers" "INT_HANDLER_ENTR:0x00000051 (81) *PID:[0-9]* IP:symprog_inner+0x0 $loc:$inner) AREA:0x00000000\$"
# every other line as without --symbols
addr_lines='SYSTEM  :FUNC_\|SYSTEM  :ADDRESS\|INT_HANDLER_ENTR'
grep -v "$addr_lines" "$tmp/sym.txt" >"$tmp/sym_rest.txt" || true
grep -v "$addr_lines" "$tmp/plain.txt" >"$tmp/plain_rest.txt" || true
if ! cmp -s "$tmp/sym_rest.txt" "$tmp/plain_rest.txt"; then
	echo "--- traceprinter --symbols changed lines other than FUNC_ENTER/EXIT, ADDRESS, INT_HANDLER_ENTRY:"
	diff -u "$tmp/plain_rest.txt" "$tmp/sym_rest.txt" | head -n 20
	fail=1
fi
# the wide layout: the address lines of a FUNC_ENTER block
if ! "$tp" --symbols "$tmp/s.kev" | grep -q "^ *thisfn:symprog_inner+0x0 $loc:$inner)\$"; then
	echo "--- traceprinter --symbols (wide layout): no thisfn line for symprog_inner"
	fail=1
fi
# tracekit print passes the option through
"$tk" print -n --symbols "$tmp/s.kev" >"$tmp/tk.txt"
if ! cmp -s "$tmp/tk.txt" "$tmp/sym.txt"; then
	echo "--- tracekit print --symbols differs from traceprinter --symbols"
	fail=1
fi
# standard input is read once: no first pass, no failure
"$tp" -n --symbols - <"$tmp/s.kev" >"$tmp/stdin.txt"
if [ "$(wc -l <"$tmp/stdin.txt")" != "$(wc -l <"$tmp/sym.txt")" ]; then
	echo "--- traceprinter --symbols on standard input printed another number of lines"
	fail=1
fi
# a damaged file: the same message and exit status as without --symbols
head -c 700 "$tmp/s.kev" >"$tmp/cut.kev"
st1=0 st2=0
"$tp" --symbols "$tmp/cut.kev" >"$tmp/cut1.txt" 2>"$tmp/cut1.err" || st1=$?
"$tp" "$tmp/cut.kev" >"$tmp/cut2.txt" 2>"$tmp/cut2.err" || st2=$?
if [ "$st1" != 1 ] || [ "$st2" != 1 ] || ! cmp -s "$tmp/cut1.err" "$tmp/cut2.err" ||
	! cmp -s "$tmp/cut1.txt" "$tmp/cut2.txt"; then
	echo "--- a damaged file: exit $st1 with --symbols, $st2 without; messages:"
	cat "$tmp/cut1.err" "$tmp/cut2.err"
	fail=1
fi
exit $fail
