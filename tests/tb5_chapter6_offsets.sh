#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 10 item 6: a file whose two data descriptors are both given offset 0 (as chapter 6 of
# the TBRW guide writes them) is laid out as sample at 0 and time stamp at 32; print_tb5 and
# tbrw_reader must report it so: their output is that of the same file written with explicit
# offsets (the vtune golden), time stamp column 0x1972178d8f5e included.
# usage: tb5_chapter6_offsets.sh PRINT_TB5 TBRW_READER TBRW_WRITER GOLDEN_DIR WORK_PREFIX
set -eu
pt=$1
rd=$2
wr=$3
golden=$4
w=$5
rm -f "$w".*
sed 's/^desc desc_offset=32 /desc desc_offset=0 /' "$golden/vtune.dat" >"$w.dat"
if ! grep -c '^desc desc_offset=0 ' "$w.dat" | grep -qx 2; then
	echo "could not make both descriptor offsets 0 in $w.dat"
	exit 1
fi
"$wr" "$w.dat" "$w.tb5"
"$pt" "$w.tb5" >"$w.txt"
"$rd" "$w.tb5" "$w.out.dat"
fail=0
if ! cmp -s "$golden/print_vtune.txt" "$w.txt"; then
	echo "print_tb5 of the chapter 6 style file differs from print_vtune.txt:"
	diff -u "$golden/print_vtune.txt" "$w.txt" | head -n 40
	fail=1
fi
if ! cmp -s "$golden/vtune.dat" "$w.out.dat"; then
	echo "tbrw_reader of the chapter 6 style file differs from vtune.dat:"
	diff -u "$golden/vtune.dat" "$w.out.dat" | head -n 40
	fail=1
fi
[ $fail = 0 ] && echo "chapter 6 offsets reported as laid out (sample at 0, time stamp at 32)"
exit $fail
