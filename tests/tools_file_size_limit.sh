#!/bin/sh
# SPDX-License-Identifier: MIT
# Under a file size limit (ulimit -f) every tool reports the failed write ("File too
# large"), exits 1 and leaves nothing behind, instead of being killed by SIGXFSZ (exit
# 153) with its OUTPUT.part left (issue 10 audit). tracelogger gives the command it runs
# SIGXFSZ as it found it.
# usage: tools_file_size_limit.sh TOOLDIR KEVDIR BYFLDIR TB5DIR WORKDIR
set -u
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
bin=$(abs "$1") kev=$(abs "$2") byfl=$(abs "$3") tb5=$(abs "$4") work=$(abs "$5")
fail=0
rm -rf "$work"
mkdir -p "$work/tmp" "$work/out"
cd "$work/out" || exit 1
TMPDIR=$work/tmp
export TMPDIR
bad() {
	echo "FAIL: $*"
	fail=1
}
K=$kev/all_classes.kev B=$byfl/call_stack.byfl T=$tb5/vtune.tb5 D=$work/vtune.dat
"$bin/tbrw_reader" "$T" "$D" || exit 1

# Each output is several KiB: 2 blocks (1 KiB in dash, 2 KiB in bash) cannot hold it.
for cmd in "traceprinter -f $K -o out" "print_tb5 -o out $T" "tbrw_reader $T out" "tbrw_writer $D out" \
	"bfbin2csv -o out $B" "bfbin2xmlss $B out" "bfbin2cgrind $B out" "bfbin2sqlite3 -o out $B" \
	"bfbin2hdf5 $B out" "tb5_recover $T out"; do
	# shellcheck disable=SC2086
	(ulimit -f 2 && exec "$bin"/$cmd) 2>"$work/err" >/dev/null
	st=$?
	[ $st -eq 1 ] || bad "$cmd: exit status $st under ulimit -f, expected 1"
	grep -q "File too large" "$work/err" || bad "$cmd: no 'File too large' message: $(cat "$work/err")"
	left=$(ls -A)
	[ -z "$left" ] || bad "$cmd: left behind: $left"
	[ -z "$(ls -A "$work/tmp")" ] || bad "$cmd: left in TMPDIR: $(ls -A "$work/tmp")"
	rm -rf ./* ./.[!.]* "$work/tmp"/*
done

# the traced command gets SIGXFSZ as tracelogger found it (default here: not ignored)
"$bin/tracelogger" -N "ctest.size_limit.$$" -f "$work/t.kev" -- sh -c 'grep SigIgn /proc/self/status' >"$work/sigign" 2>"$work/err"
mask=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$work/sigign")
if [ -z "$mask" ]; then
	echo "note: tracelogger could not run a command here: $(cat "$work/err")"
elif [ $(((0x$mask >> 24) & 1)) -ne 0 ]; then
	bad "tracelogger's command inherits SIGXFSZ ignored (SigIgn $mask)"
fi

[ $fail -eq 0 ] && rm -rf "$work"
exit $fail
