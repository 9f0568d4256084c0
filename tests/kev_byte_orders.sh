#!/bin/sh
# SPDX-License-Identifier: MIT
# The sample traces of tests/tools/kev_samples.c hold the same events in both byte orders:
# traceprinter must print NAME.kev and NAME_be.kev alike, apart from the header lines that
# name the byte order and TRACE_SYSPAGE_LEN (tracekit's syspage is padded so that events
# start 16-byte aligned, and "BIG_ENDIAN" is 3 bytes shorter than "LITTLE_ENDIAN").
# usage: kev_byte_orders.sh TRACEPRINTER SAMPLE_DIR NAME...
set -eu
tp=$1
dir=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strip() {
	grep -v -E '^ *TRACE_(LITTLE_ENDIAN|BIG_ENDIAN|SYSPAGE_LEN):: ' "$1" >"$2" || true
}
status=0
for name in "$@"; do
	for opts in "" "-t cycles" "-n"; do
		# shellcheck disable=SC2086 # opts is a list of options
		"$tp" $opts -f "$dir/$name.kev" >"$tmp/le.txt"
		# shellcheck disable=SC2086
		"$tp" $opts -f "$dir/${name}_be.kev" >"$tmp/be.txt"
		if ! grep -q '^   TRACE_LITTLE_ENDIAN:: TRUE$' "$tmp/le.txt" ||
		   ! grep -q '^      TRACE_BIG_ENDIAN:: TRUE$' "$tmp/be.txt"; then
			echo "kev_byte_orders: $name.kev and ${name}_be.kev are not little- and big-endian"
			status=1
		fi
		strip "$tmp/le.txt" "$tmp/le.cmp"
		strip "$tmp/be.txt" "$tmp/be.cmp"
		if ! cmp -s "$tmp/le.cmp" "$tmp/be.cmp"; then
			echo "kev_byte_orders: traceprinter $opts prints ${name}_be.kev unlike $name.kev:"
			diff -u "$tmp/le.cmp" "$tmp/be.cmp" | head -n 60 || true
			status=1
		fi
	done
done
exit $status
