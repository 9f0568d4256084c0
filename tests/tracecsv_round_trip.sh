#!/bin/sh
# SPDX-License-Identifier: MIT
# export -> import -> export gives identical CSV files, through .kev and through .tb5, for
# every example input. usage: tracecsv_round_trip.sh TRACECSV DIR (DIR holds the inputs)
set -eu
tc=$1
dir=$2
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail=0
for f in phases utcexample tscexample power quoting second; do
	in=$(ls "$dir"/$f-hostname-*.csv)
	for ext in kev tb5; do
		d=$w/$f.$ext
		mkdir -p "$d/1" "$d/2"
		"$tc" import -q --tsc-hz 2400000000 -o "$d/a.$ext" "$in"
		"$tc" export -o "$d/1" "$d/a.$ext"
		for csv in "$d"/1/*.csv; do
			"$tc" import -q --tsc-hz 2400000000 -o "$d/b.$ext" "$csv"
			"$tc" export -o "$d/2" "$d/b.$ext"
			name=$(basename "$csv" | sed 's/^a-/b-/')
			# the other kind of file of the second export is empty (header only)
			if ! cmp -s "$csv" "$d/2/$name"; then
				echo "round trip differs: $f ($ext): $(basename "$csv")"
				diff -u "$csv" "$d/2/$name" | head -20 || true
				fail=1
			fi
			rm -f "$d"/2/* "$d/b.$ext"
		done
	done
done
exit $fail
