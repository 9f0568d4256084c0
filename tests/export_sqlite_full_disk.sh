#!/bin/sh
# SPDX-License-Identifier: MIT
# tracekit convert to SQLite where the database's filesystem fills up (the private directory
# in TMPDIR, where SQLite writes the database): one message naming that directory (not OUT,
# whose disk may have room) with the real reason, exit status 1, no OUT and no private
# directory left behind.
# usage: export_sqlite_full_disk.sh MODE TRACEKIT TRACE.kev WORKDIR
#   MODE tmpfs: TMPDIR on a 64 KiB tmpfs in a private mount namespace (needs root and
#               unshare(1)): ENOSPC;
#   MODE fsize: a 64-block file size limit (ulimit -f, SIGXFSZ ignored): EFBIG.
# Exits 77 (skipped) only when the mechanism is unavailable here.
set -eu
mode=$1 tk=$2 input=$3 work=$4
SKIP=77

run() { # tmpdir expected-reason
	rm -f "$work/out.db"
	status=0
	TMPDIR=$1 "$tk" convert "$input" "$work/out.db" >"$work/full_disk.out" 2>"$work/full_disk.err" || status=$?
	fail=0
	expected="tracekit: $1/tracekit.XXXXXX: writing the database: $2 (the database is built in TMPDIR first and needs room there for all of it)"
	if [ "$status" != 1 ]; then
		echo "--- exit status $status, expected 1"
		fail=1
	fi
	# the private directory's random part
	if [ "$(sed 's|/tracekit\.[A-Za-z0-9]\{6\}:|/tracekit.XXXXXX:|' "$work/full_disk.err")" != "$expected" ]; then
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
	if [ -e "$work/out.db" ]; then
		echo "--- $work/out.db should not exist"
		fail=1
	fi
	if [ -n "$(ls -A "$1")" ]; then
		echo "--- left in $1:"
		ls -la "$1"
		fail=1
	fi
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
	exec unshare --mount sh "$0" tmpfs-mounted "$tk" "$input" "$work"
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
	rm -rf "$dir"
	mkdir -p "$dir"
	# Ignored signals stay ignored across exec: the tool gets EFBIG, not SIGXFSZ.
	trap '' XFSZ
	(ulimit -f 64 && run "$dir" "File too large")
	;;
*)
	echo "export_sqlite_full_disk.sh: unknown mode $mode" >&2
	exit 2
	;;
esac
