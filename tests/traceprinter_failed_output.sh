#!/bin/sh
# SPDX-License-Identifier: MIT
# traceprinter -o FILE is the whole printout or nothing (issue 10 audit): an input that
# cannot be opened, is not a trace or is truncated leaves an existing FILE as it was and
# no temporary; without -o an unopenable input prints no banner; a failed write is
# reported as "traceprinter: FILE: cannot write: REASON" like the other tools.
# usage: traceprinter_failed_output.sh TRACEPRINTER KEVDIR WORKDIR
set -u
tp=$1 kev=$2 work=$3
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
rm -rf "$work"
mkdir -p "$work" && cd "$work" || exit 1

for in in nonexist.kev "$kev/not_a_trace.kev" "$kev/truncated.kev" "$kev/no_header_end.kev"; do
	echo important >prev.txt
	chmod 640 prev.txt
	"$tp" -o prev.txt "$in" >out 2>err
	st=$?
	[ $st -eq 1 ] || bad "$in: exit status $st, expected 1"
	[ "$(cat prev.txt)" = important ] || bad "$in: prev.txt was replaced by: $(head -3 prev.txt)"
	[ "$(stat -c %a prev.txt)" = 640 ] || bad "$in: prev.txt's mode changed"
	[ -s err ] || bad "$in: no message"
	[ -s out ] && bad "$in: printed on standard output with -o: $(head -2 out)"
	left=$(ls -A | grep -v -x -e prev.txt -e out -e err)
	[ -z "$left" ] || bad "$in: left behind: $left"
	rm -f prev.txt
	"$tp" -o new.txt "$in" >/dev/null 2>&1
	[ -e new.txt ] && bad "$in: created new.txt"
	rm -f new.txt
done

# without -o: nothing at all on standard output when the input cannot be opened
"$tp" nonexist.kev >out 2>err
[ $? -eq 1 ] || bad "nonexist.kev without -o: wrong exit status"
[ -s out ] && bad "nonexist.kev without -o printed: $(cat out)"
grep -qx "traceprinter: nonexist.kev: couldn't open input trace file: No such file or directory" err ||
	bad "nonexist.kev: message: $(cat err)"
# ... but a truncated trace still prints every event before the problem
"$tp" "$kev/truncated.kev" >out 2>/dev/null
[ $? -eq 1 ] && [ "$(head -1 out)" = "TRACEPRINTER version 1.02" ] || bad "truncated.kev without -o: no printout"

# write errors, in the style of the other tools
if [ -w /dev/full ]; then
	"$tp" -f "$kev/all_classes.kev" -o /dev/full 2>err
	[ $? -eq 1 ] || bad "-o /dev/full: wrong exit status"
	grep -qx "traceprinter: /dev/full: cannot write: No space left on device" err || bad "-o /dev/full: $(cat err)"
	"$tp" -f "$kev/all_classes.kev" >/dev/full 2>err
	[ $? -eq 1 ] || bad ">/dev/full: wrong exit status"
	grep -qx "traceprinter: standard output: cannot write: No space left on device" err || bad ">/dev/full: $(cat err)"
fi

[ $fail -eq 0 ] && rm -rf "$work"
exit $fail
