#!/bin/sh
# SPDX-License-Identifier: MIT
# An interrupted bfbin2hdf5 / bfbin2sqlite3 ends at once and leaves no output (issue 10
# item 25): the tool converts from a named pipe whose writer holds it open after part of
# a file, then gets SIGNAL; it must exit 1 within a few seconds with one message saying
# the conversion was interrupted, leaving neither OUTPUT nor OUTPUT.part (nor journals).
# usage: bfbin_interrupt.sh TOOL INPUT.byfl WORKDIR SIGNAL [TOOL OPTIONS...]
#   the output is WORKDIR/out.<tool's extension>; TOOL OPTIONS come before the input
set -eu
tool=$1 input=$2 work=$3 sig=$4
shift 4
name=$(basename "$tool")
case $name in
bfbin2hdf5) out="$work/out.h5" ;;
bfbin2sqlite3) out="$work/out.db" ;;
*) echo "bfbin_interrupt.sh: unknown tool $name" >&2; exit 2 ;;
esac
if [ "$sig" = HUP ] && [ $((0x$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status) & 1)) = 1 ]; then
	echo "skipped: SIGHUP is ignored in this test's environment (nohup): it cannot be sent to the tool"
	exit 77
fi
mkdir -p "$work"
fifo="$work/in.fifo"
rm -f "$fifo" "$out" "$out.part" "$out.part-journal" "$out.part-wal" "$out.part-shm"
mkfifo "$fifo"

# The writer: half of the input, then it keeps the pipe open until killed.
size=$(wc -c <"$input")
(head -c $((size / 2)) "$input"; exec sleep 60) >"$fifo" &
writer=$!
case $name in
bfbin2hdf5) "$tool" "$@" "$fifo" "$out" 2>"$work/interrupt.err" & ;;
*) "$tool" "$@" -o "$out" "$fifo" 2>"$work/interrupt.err" & ;;
esac
pid=$!

# Wait (at most 20 s) until the tool has started its output, then interrupt it.
i=0
while [ ! -e "$out.part" ] && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -s "$sig" "$pid"
start=$(date +%s)
status=0
wait "$pid" || status=$?
elapsed=$(($(date +%s) - start))
kill "$writer" 2>/dev/null || true
wait "$writer" 2>/dev/null || true
rm -f "$fifo"

fail=0
if [ "$status" != 1 ]; then
	echo "--- exit status $status, expected 1"
	fail=1
fi
if [ "$elapsed" -gt 10 ]; then
	echo "--- the tool took $elapsed s to stop"
	fail=1
fi
if [ "$(cat "$work/interrupt.err")" != "$name: Conversion of $fifo interrupted" ]; then
	echo "--- standard error:"
	cat "$work/interrupt.err"
	fail=1
fi
for f in "$out" "$out.part" "$out.part-journal" "$out.part-wal" "$out.part-shm"; do
	if [ -e "$f" ]; then
		echo "--- $f should not exist"
		fail=1
	fi
done
# nor the private directory the database was built in
if ls -A "$work" | grep -q "^\.$(basename "$out")\.part\."; then
	echo "--- the private directory of $out was left: $(ls -A "$work")"
	fail=1
fi
exit $fail
