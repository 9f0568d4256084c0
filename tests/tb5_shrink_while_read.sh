#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 10 item 26: print_tb5 reads a .tb5 through a mapping; when the file shrinks while it
# is being read it must report the truncation (exit status 1, a message naming the new size)
# instead of dying of SIGBUS. print_tb5 writes into a FIFO that this script reads: once part
# of the records has come out, the file is cut to 200000 bytes, then the rest is drained.
# usage: tb5_shrink_while_read.sh PRINT_TB5 MANY.tb5 WORK_DIR
set -u
pt=$1
src=$2
dir=$3/shrink_while_read
rm -rf "$dir"
mkdir -p "$dir"
cp "$src" "$dir/shrink.tb5"
mkfifo "$dir/out.fifo"
"$pt" "$dir/shrink.tb5" >"$dir/out.fifo" 2>"$dir/err" &
pid=$!
exec 3<"$dir/out.fifo"
# the header and sections are a few KiB: after 300000 bytes it is inside the first data chunk
head -c 300000 <&3 >/dev/null
truncate -s 200000 "$dir/shrink.tb5"
cat <&3 >/dev/null
exec 3<&-
wait $pid
st=$?
if [ $st != 1 ]; then
	echo "print_tb5 exit status $st, expected 1 (135 = killed by SIGBUS)"
	cat "$dir/err"
	exit 1
fi
if ! grep -q "shrink.tb5: the file shrank to 200000 bytes while it was read" "$dir/err"; then
	echo "print_tb5 does not report the truncation:"
	cat "$dir/err"
	exit 1
fi
echo "print_tb5 reports a file cut short while it reads it: $(cat "$dir/err")"
