#!/bin/sh
# SPDX-License-Identifier: MIT
# A tool writing to a FIFO nobody reads yet waits for a reader, and SIGINT or SIGTERM
# ends that wait at once, removing the tool's temporaries (issue 10 audit: tbrw_writer
# blocked in open() with the signals blocked, forever, and left TMPDIR/tbrw_writer.XXXX).
# usage: tools_fifo_output_interrupt.sh TOOLDIR KEVDIR TB5DIR WORKDIR
set -u
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
bin=$(abs "$1") kev=$(abs "$2") tb5=$(abs "$3") work=$(abs "$4")
fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}
rm -rf "$work"
mkdir -p "$work/tmp" && cd "$work" || exit 1
TMPDIR=$work/tmp
export TMPDIR
K=$kev/usr_event_simple.kev T=$tb5/vtune.tb5 D=$work/vtune.dat
"$bin/tbrw_reader" "$T" "$D" || exit 1
mkfifo fifo || exit 1

for sig in INT TERM; do
	for tool in tbrw_writer traceprinter tb5_recover print_tb5 tbrw_reader; do
		case $tool in
		tbrw_writer) set -- "$bin/tbrw_writer" "$D" fifo ;;
		traceprinter) set -- "$bin/traceprinter" -f "$K" -o fifo ;;
		tb5_recover) set -- "$bin/tb5_recover" -q "$T" fifo ;;
		print_tb5) set -- "$bin/print_tb5" -o fifo "$T" ;;
		tbrw_reader) set -- "$bin/tbrw_reader" "$T" fifo ;;
		esac
		start=$(date +%s)
		timeout -k 10 -s $sig 1 "$@" 2>err
		st=$?
		elapsed=$(($(date +%s) - start))
		[ $st -ne 137 ] && [ $elapsed -lt 8 ] || bad "$tool: SIG$sig did not end the wait for a reader (${elapsed} s, status $st)"
		[ -p fifo ] || bad "$tool: the FIFO was replaced"
		[ -z "$(ls -A tmp)" ] || bad "$tool: SIG$sig left in TMPDIR: $(ls -A tmp)"
		left=$(ls -A | grep -v -x -e tmp -e fifo -e err -e vtune.dat)
		[ -z "$left" ] || bad "$tool: SIG$sig left: $left"
		rm -rf tmp/* tmp/.[!.]*
	done
done
# and with a reader it still works
timeout 30 cat fifo >fifo.out &
"$bin/tbrw_writer" "$D" fifo || bad "tbrw_writer to a FIFO with a reader failed"
wait
"$bin/print_tb5" -D fifo.out >/dev/null || bad "the FIFO got no valid .tb5"

[ $fail -eq 0 ] && rm -rf "$work"
exit $fail
