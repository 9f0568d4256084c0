#!/bin/sh
# SPDX-License-Identifier: MIT
# Round trip of the TBRW tools: tbrw_reader a.tb5 a.dat, tbrw_writer a.dat b.tb5, and
# print_tb5 of both files must be identical, as must tbrw_reader's output of both.
# usage: tb5_round_trip.sh PRINT_TB5 TBRW_READER TBRW_WRITER FILE.tb5 WORK_PREFIX
set -eu
pt=$1
rd=$2
wr=$3
in=$4
w=$5
rm -f "$w".*
"$rd" "$in" "$w.a.dat"
"$wr" "$w.a.dat" "$w.b.tb5"
"$rd" "$w.b.tb5" "$w.b.dat"
"$pt" "$in" >"$w.a.txt"
"$pt" "$w.b.tb5" >"$w.b.txt"
fail=0
if ! cmp -s "$w.a.txt" "$w.b.txt"; then
	echo "print_tb5 output differs between $in and its copy $w.b.tb5:"
	diff -u "$w.a.txt" "$w.b.txt" | head -n 60
	fail=1
fi
if ! cmp -s "$w.a.dat" "$w.b.dat"; then
	echo "tbrw_reader output differs between $in and its copy $w.b.tb5:"
	diff -u "$w.a.dat" "$w.b.dat" | head -n 60
	fail=1
fi
[ $fail = 0 ] && echo "round trip of $in: print_tb5 and tbrw_reader outputs identical ($(wc -l <"$w.a.txt") lines)"
exit $fail
