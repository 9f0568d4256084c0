#!/bin/sh
# SPDX-License-Identifier: MIT
# bfbin2hdf5 or bfbin2sqlite3 writing into a filesystem that fills up must fail cleanly:
# one message naming the file and the real reason (SQLite itself says "database or disk is
# full" or "disk I/O error"), exit status 1, neither OUTPUT nor OUTPUT.part (nor a journal)
# left behind, and no crash when HDF5 shuts down at exit (HDF5 1.10 crashed there after a
# failed close).
# usage: bfbin_full_disk.sh MODE TOOL INPUT.byfl WORKDIR [VALGRIND]
#   MODE tmpfs: a 64 KiB tmpfs mounted in a private mount namespace (needs root and
#               unshare(1)): the writes fail with ENOSPC;
#   MODE fsize: a 64-block file size limit (ulimit -f, SIGXFSZ ignored): EFBIG.
#   VALGRIND, if given, runs the tool under it: any memory error fails the test.
# Exits 77 (skipped) only when the mechanism is unavailable here.
set -eu
mode=$1 tool=$2 input=$3 work=$4 valgrind=${5:-}
SKIP=77
name=$(basename "$tool")
case $name in
bfbin2hdf5) ext=h5 ;;
bfbin2sqlite3) ext=db ;;
*) echo "bfbin_full_disk.sh: unknown tool $name" >&2; exit 2 ;;
esac

tool_args() { # output: the tool's arguments to convert $input into it
	if [ "$ext" = db ]; then
		echo "-o $1 $input"
	else
		echo "$input $1"
	fi
}

run() { # dir expected-reason: runs the tool into dir/x.EXT and checks the outcome
	status=0
	# shellcheck disable=SC2046 # the paths hold no blanks
	if [ -n "$valgrind" ]; then
		"$valgrind" -q --error-exitcode=99 "$tool" $(tool_args "$1/x.$ext") >"$work/full_disk.out" \
			2>"$work/full_disk.err" || status=$?
	else
		"$tool" $(tool_args "$1/x.$ext") >"$work/full_disk.out" 2>"$work/full_disk.err" || status=$?
	fi
	fail=0
	expected="$name: Failed to write $1/x.$ext ($2)"
	if [ "$status" != 1 ]; then
		echo "--- exit status $status, expected 1"
		fail=1
	fi
	if [ "$(cat "$work/full_disk.err")" != "$expected" ]; then
		echo "--- standard error:"
		cat "$work/full_disk.err"
		echo "--- expected:"
		echo "$expected"
		fail=1
	fi
	if [ -s "$work/full_disk.out" ]; then
		echo "--- unexpected standard output:"
		head -n 20 "$work/full_disk.out"
		fail=1
	fi
	for f in "$1/x.$ext" "$1/x.$ext.part" "$1/x.$ext.part-journal" "$1/x.$ext.part-wal"; do
		if [ -e "$f" ]; then
			echo "--- $f should not exist"
			fail=1
		fi
	done
	return $fail
}

mkdir -p "$work"
case $mode in
tmpfs)
	if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null 2>&1 || ! unshare --mount true 2>/dev/null; then
		echo "skipped: mounting a tmpfs needs root and a private mount namespace (unshare --mount)"
		exit $SKIP
	fi
	# The mount exists only in the namespace: nothing is left mounted if the test dies.
	exec unshare --mount sh "$0" tmpfs-mounted "$tool" "$input" "$work" "$valgrind"
	;;
tmpfs-mounted)
	mnt="$work/full_disk_mnt"
	mkdir -p "$mnt"
	if ! mount -t tmpfs -o size=64k tmpfs "$mnt"; then
		echo "skipped: cannot mount a tmpfs here"
		exit $SKIP
	fi
	run "$mnt" "No space left on device"
	;;
fsize)
	if ! (ulimit -f 64) 2>/dev/null; then
		echo "skipped: no file size limit (ulimit -f) here"
		exit $SKIP
	fi
	dir="$work/full_disk_fsize"
	mkdir -p "$dir"
	rm -f "$dir/x.$ext" "$dir/x.$ext.part"
	# Ignored signals stay ignored across exec: the tool gets EFBIG, not SIGXFSZ.
	trap '' XFSZ
	(ulimit -f 64 && run "$dir" "File too large")
	;;
*)
	echo "bfbin_full_disk.sh: unknown mode $mode" >&2
	exit 2
	;;
esac
