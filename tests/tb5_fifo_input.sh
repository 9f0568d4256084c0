#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 10 item 32: a FIFO without a writer given as the input of print_tb5, tbrw_reader or
# tb5_recover is refused at once with exit status 1 and a message naming it (it used to block
# forever in open). Each tool gets 10 seconds.
# usage: tb5_fifo_input.sh PRINT_TB5 TBRW_READER TB5_RECOVER WORK_DIR
set -u
pt=$1
rd=$2
rc=$3
dir=$4/fifo_input
rm -rf "$dir"
mkdir -p "$dir"
mkfifo "$dir/in.tb5" || exit 1
fail=0
check() {
	name=$1
	shift
	timeout 10 "$@" >"$dir/$name.out" 2>"$dir/$name.err"
	st=$?
	if [ $st != 1 ]; then
		echo "$name: exit status $st, expected 1 (124 = still blocked after 10 s)"
		fail=1
	elif ! grep -q "in.tb5: not a regular file (a FIFO)" "$dir/$name.err"; then
		echo "$name: message does not name the FIFO:"
		cat "$dir/$name.err"
		fail=1
	fi
}
check print_tb5 "$pt" "$dir/in.tb5"
check tbrw_reader "$rd" "$dir/in.tb5" "$dir/out.dat"
check tb5_recover "$rc" "$dir/in.tb5" "$dir/out.tb5"
for f in out.dat out.dat.part out.tb5 out.tb5.part; do
	if [ -e "$dir/$f" ]; then
		echo "$f was left behind"
		fail=1
	fi
done
[ $fail = 0 ] && echo "a FIFO without a writer is refused at once by print_tb5, tbrw_reader and tb5_recover"
exit $fail
