#!/bin/sh
# SPDX-License-Identifier: MIT
# TRACEKIT_LOG records an unmodified program (libtracekit preloaded into gzip), names a
# file per process with %p, and a trace that cannot be created costs the program nothing
# but one line on standard error.
# usage: env_autostart.sh LIBTRACEKIT_SO TRACEPRINTER
set -eu
lib=$1 tp=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "env_autostart.sh: $*" >&2; exit 1; }

echo hello >"$tmp/in"
TRACEKIT_LOG="$tmp/gz.kev" LD_PRELOAD="$lib" gzip -c "$tmp/in" >"$tmp/in.gz" 2>"$tmp/err" || fail "gzip failed"
[ -s "$tmp/err" ] && fail "unexpected standard error: $(cat "$tmp/err")"
[ -e "$tmp/gz.kev.part" ] && fail "the trace was left as .part"
"$tp" -f "$tmp/gz.kev" >"$tmp/out" || fail "traceprinter cannot read the trace"
grep -q 'name:.*gzip' "$tmp/out" || fail "no PROCCREATE_NAME of gzip in the trace"
grep -q 'THRUNNING' "$tmp/out" || fail "no THRUNNING in the trace"
gzip -dc "$tmp/in.gz" | cmp -s - "$tmp/in" || fail "gzip's output changed"

# %p: a file named after the process ID
TRACEKIT_LOG="$tmp/p-%p.kev" LD_PRELOAD="$lib" gzip -c "$tmp/in" >/dev/null || fail "gzip failed"
set -- "$tmp"/p-*.kev
[ $# = 1 ] && [ -s "$1" ] || fail "no p-<pid>.kev: $(ls "$tmp")"
case "$1" in *p-[0-9]*.kev) ;; *) fail "unexpected name $1" ;; esac

# a program that ends with _exit() (dash does) leaves a .part that reads as a valid trace
# (its events were still in memory: the separate tracelogger is what will keep those)
TRACEKIT_LOG="$tmp/dash.kev" LD_PRELOAD="$lib" dash -c 'exit 0' 2>/dev/null || true
if [ -e "$tmp/dash.kev.part" ]; then
	"$tp" -f "$tmp/dash.kev.part" >/dev/null || fail "the .part of an _exit()ed program is unreadable"
fi

# an unwritable trace: the program runs, exits 0, one line says why
TRACEKIT_LOG="$tmp/no/such/dir/x.kev" LD_PRELOAD="$lib" gzip -c "$tmp/in" >/dev/null 2>"$tmp/err" ||
	fail "gzip failed with an unwritable trace"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "expected one line on stderr, got: $(cat "$tmp/err")"
grep -q "^tracekit: TRACEKIT_LOG=$tmp/no/such/dir/x.kev: cannot create .*no such file or directory" "$tmp/err" ||
	fail "unexpected message: $(cat "$tmp/err")"
exit 0
