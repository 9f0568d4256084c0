#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 10 item 18: tb5_recover goes past a damaged chunk. flipped.tb5 is many.tb5 with one
# bit flipped in its second data chunk (records 32768..65535 of stream 0): the salvage names
# that stretch, keeps everything after it (the rest of stream 0, stream 1) and the salvaged
# file reads in full.
# usage: tb5_recover_damage.sh TB5_RECOVER PRINT_TB5 WORK_DIR
set -u
rc=$1
pt=$2
w=$3
cd "$w" || exit 1
rm -f damage_out.tb5 damage_out.tb5.part
"$rc" flipped.tb5 damage_out.tb5 2>damage.err
st=$?
fail=0
if [ $st != 0 ]; then
	echo "tb5_recover exit status $st, expected 0"
	fail=1
fi
if ! grep -q "left out bytes 1049224\.\.2097839: a data chunk of stream 0, object 274 (records 32768\.\.65535)" damage.err; then
	echo "the damaged stretch is not reported:"
	fail=1
fi
"$pt" -n 0 damage_out.tb5 >damage.txt 2>&1 || { echo "print_tb5 cannot read the salvaged file"; fail=1; }
if ! grep -q "67232 records of 32 bytes" damage.txt || ! grep -q "stream 1" damage.txt; then
	echo "the records after the damage were not kept:"
	grep -n 'records of\|^stream' damage.txt
	fail=1
fi
cat damage.err
[ $fail = 0 ] && echo "salvage went past the damaged chunk"
exit $fail
