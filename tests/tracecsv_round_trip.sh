#!/bin/sh
# SPDX-License-Identifier: MIT
# export -> import -> export gives identical CSV files, through .kev and through .tb5, for
# every example input; with KEV_SAMPLES, also for its csv_odd trace (NaN and infinite counter
# samples, names that are not UTF-8), whose first export import must read.
# usage: tracecsv_round_trip.sh TRACECSV DIR [KEV_SAMPLES] (DIR holds the inputs)
set -eu
tc=$1
dir=$2
samples=${3:-}
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
if [ -n "$samples" ]; then
	d=$w/odd
	mkdir -p "$d/1" "$d/2"
	"$samples" csv_odd "$d/odd.kev"
	"$tc" export -q -o "$d/1" "$d/odd.kev"
	for ext in kev tb5; do
		# both files into one trace, then each alone, as above
		"$tc" import -q -o "$d/odd.$ext" "$d"/1/*.csv
		"$tc" export -q -o "$d/2" "$d/odd.$ext"
		if ! diff -r "$d/1" "$d/2" >/dev/null; then
			echo "round trip differs: csv_odd ($ext)"
			diff -ru "$d/1" "$d/2" | head -20 || true
			fail=1
		fi
		rm -f "$d"/2/*
	done
fi
exit $fail
