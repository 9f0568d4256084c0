#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a command the way a user would and compares what it prints with golden files.
# usage: run_golden.sh [--stdout F] [--stderr F] [--status N] [--stdin F] [--workdir D]
#                      [--file WRITTEN=EXPECTED]... [--absent PATH]... -- command args...
# Without --stderr, standard error must be empty. With TK_UPDATE_GOLDEN=1 the expected
# files are rewritten from the actual output instead (scripts/update-golden.sh).
set -eu

exp_out="" exp_err="" exp_status=0 stdin=/dev/null workdir=. files="" absent=""
while [ $# -gt 0 ]; do
	case "$1" in
	--stdout) exp_out=$2; shift 2 ;;
	--stderr) exp_err=$2; shift 2 ;;
	--status) exp_status=$2; shift 2 ;;
	--stdin) stdin=$2; shift 2 ;;
	--workdir) workdir=$2; shift 2 ;;
	--file) files="$files $2"; shift 2 ;;
	--absent) absent="$absent $2"; shift 2 ;;
	--) shift; break ;;
	*) echo "run_golden.sh: bad option $1" >&2; exit 2 ;;
	esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$workdir"
status=0
"$@" <"$stdin" >"$tmp/out" 2>"$tmp/err" || status=$?

fail=0
compare() { # actual expected label
	if [ "${TK_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$1" "$2"
		return 0
	fi
	if ! cmp -s "$1" "$2"; then
		echo "--- $3 differs from $2:"
		diff -u "$2" "$1" | head -n 80 || true
		fail=1
	fi
}

if [ -n "$exp_out" ]; then compare "$tmp/out" "$exp_out" "standard output"; fi
if [ -n "$exp_err" ]; then
	compare "$tmp/err" "$exp_err" "standard error"
elif [ -s "$tmp/err" ]; then
	echo "--- unexpected standard error:"
	head -n 20 "$tmp/err"
	fail=1
fi
if [ "$status" != "$exp_status" ]; then
	echo "--- exit status $status, expected $exp_status"
	fail=1
fi
for pair in $files; do
	compare "${pair%%=*}" "${pair#*=}" "file ${pair%%=*}"
done
for p in $absent; do
	if [ -e "$p" ]; then
		echo "--- $p should not exist"
		fail=1
	fi
done
# Tests run as root: no tool may turn the machine's devices into files (issue 10 item 21).
for dev in /dev/null:1:3 /dev/full:1:7; do
	path=${dev%%:*} num=${dev#*:}
	if [ ! -c "$path" ] || [ "$(stat -c '%t:%T' "$path")" != "$(printf '%x:%x' ${num%:*} ${num#*:})" ]; then
		echo "--- $path is no longer the character device ${num%:*},${num#*:}"
		fail=1
	fi
done
exit $fail
