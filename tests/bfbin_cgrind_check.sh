#!/bin/sh
# SPDX-License-Identifier: MIT
# Converts a .byfl file with bfbin2cgrind and has callgrind_annotate read the result: it
# must exit 0 without a single warning about a malformed line, report the expected program
# totals, and list every expected function (self and, with --inclusive=yes, inclusive).
# usage: bfbin_cgrind_check.sh BFBIN2CGRIND INPUT.byfl WORKDIR TOTALS FUNCTION...
set -eu
tool=$1 input=$2 work=$3 totals=$4
shift 4
out="$work/$(basename "$input" .byfl).cgrind"
"$tool" "$input" "$out"
fail=0
for mode in no yes; do
	if ! callgrind_annotate --inclusive=$mode --threshold=100 "$out" >"$out.annotate" 2>"$out.err"; then
		echo "callgrind_annotate --inclusive=$mode failed:"
		cat "$out.err"
		exit 1
	fi
	if [ -s "$out.err" ]; then
		echo "callgrind_annotate --inclusive=$mode complained:"
		cat "$out.err"
		fail=1
	fi
	if ! grep -q "^$totals .*PROGRAM TOTALS" "$out.annotate"; then
		echo "--inclusive=$mode: no 'PROGRAM TOTALS' line starting with $totals:"
		grep "PROGRAM TOTALS" "$out.annotate" || true
		fail=1
	fi
	for fn in "$@"; do
		if ! grep -qF "$fn" "$out.annotate"; then
			echo "--inclusive=$mode: function $fn is missing"
			fail=1
		fi
	done
done
exit $fail
