#!/bin/sh
# SPDX-License-Identifier: MIT
# TRACEKIT_LOG records an unmodified program (libtracekit preloaded into gzip), names a
# file per process with %p, and a trace that cannot be created costs the program nothing
# but one line on standard error.
# Also (issue 10): bash's children do not re-record into the parent's file; the seed's
# usr_event_simple runs unchanged beside TRACEKIT_LOG; bad values of the variables each
# give their own message. Audit: an empty TRACEKIT_LOG_RING, TRACEKIT_LOG=- with stdout
# closed, %% as a literal %, a kept older .part said once.
# usage: env_autostart.sh LIBTRACEKIT_SO TRACEPRINTER [USR_EVENT_SIMPLE]
set -eu
lib=$1 tp=$2 ues=${3:-}
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

# item 23: without %p only the first process records, also when it is bash (which brings its
# own getenv/unsetenv): its children run with the library loaded but record nothing, and
# the file is bash's own trace, complete.
TRACEKIT_LOG="$tmp/bash.kev" LD_PRELOAD="$lib" bash -c \
	'gzip -c "$1" >/dev/null; /bin/true; (gzip -c "$1" | gzip -dc >/dev/null); sh -c "true"; exit 0' \
	bash "$tmp/in" 2>"$tmp/err" || fail "bash failed"
[ -s "$tmp/err" ] && fail "unexpected standard error from bash: $(cat "$tmp/err")"
[ -e "$tmp/bash.kev.part" ] && fail "bash's trace was left as .part"
"$tp" -f "$tmp/bash.kev" >"$tmp/out" || fail "traceprinter cannot read bash's trace"
grep -q 'name:.*bash' "$tmp/out" || fail "bash.kev is not bash's trace"
grep -q 'name:.*gzip' "$tmp/out" && fail "a child of bash recorded into bash's file"
# ... and with %p each process has its own file
TRACEKIT_LOG="$tmp/each-%p.kev" LD_PRELOAD="$lib" bash -c 'gzip -c "$1" >/dev/null; /bin/true; exit 0' \
	bash "$tmp/in" 2>"$tmp/err" || fail "bash failed"
set -- "$tmp"/each-*.kev
[ $# = 3 ] || fail "expected 3 files with %p (bash, gzip, true), got: $*"

# item 32: every %p is replaced
TRACEKIT_LOG="$tmp/two-%p-%p.kev" LD_PRELOAD="$lib" gzip -c "$tmp/in" >/dev/null || fail "gzip failed"
set -- "$tmp"/two-*.kev
[ $# = 1 ] || fail "no two-<pid>-<pid>.kev: $(ls "$tmp")"
case "$1" in *two-[0-9]*-[0-9]*.kev) ;; *) fail "%p left in $1" ;; esac
case "$1" in *%*) fail "%p left in $1" ;; esac

# item 32: each bad value has its own message; the program runs and exits 0
bad() { # VAR=VALUE... -- expected text
	want=$1
	shift
	env "$@" LD_PRELOAD="$lib" gzip -c "$tmp/in" >/dev/null 2>"$tmp/err" || fail "gzip failed with $*"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "$*: expected one line on stderr, got: $(cat "$tmp/err")"
	grep -q "$want" "$tmp/err" || fail "$*: unexpected message: $(cat "$tmp/err")"
	grep -qi "input/output error" "$tmp/err" && fail "$*: generic message: $(cat "$tmp/err")"
	return 0
}
mkdir "$tmp/adir"
bad "Is a directory" TRACEKIT_LOG="$tmp/adir"
long=$(printf '%0300d' 0)
bad "File name too long" TRACEKIT_LOG="$tmp/$long.kev"
bad "File name too long" TRACEKIT_LOG="$tmp/$(printf '%04100d' 0)"
for v in 4294967297 0 -1 12x "" 1048577; do
	bad "TRACEKIT_LOG_BUFFERS=$v: not a number of buffers" TRACEKIT_LOG="$tmp/bufs.kev" TRACEKIT_LOG_BUFFERS="$v"
	[ -e "$tmp/bufs.kev" ] || [ -e "$tmp/bufs.kev.part" ] && fail "TRACEKIT_LOG_BUFFERS=$v recorded anyway"
done
bad "TRACEKIT_LOG_RING=yes: 1 (ring mode) or 0" TRACEKIT_LOG="$tmp/ring.kev" TRACEKIT_LOG_RING=yes
# audit: an empty TRACEKIT_LOG_RING is a bad value too (it was accepted silently)
bad "TRACEKIT_LOG_RING=: 1 (ring mode) or 0" TRACEKIT_LOG="$tmp/ring.kev" TRACEKIT_LOG_RING=
[ -e "$tmp/ring.kev" ] || [ -e "$tmp/ring.kev.part" ] && fail "TRACEKIT_LOG_RING= recorded anyway"
# audit: TRACEKIT_LOG=- with standard output closed says so (not "input/output error")
TRACEKIT_LOG=- LD_PRELOAD="$lib" /bin/true >&- 2>"$tmp/err" || fail "true failed with stdout closed"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "stdout closed: expected one line on stderr, got: $(cat "$tmp/err")"
grep -q "^tracekit: TRACEKIT_LOG=-: .*standard output is not open" "$tmp/err" ||
	fail "stdout closed: unexpected message: $(cat "$tmp/err")"
# audit: %% is a literal %; "%%p" is no process ID (so only the first process records)
TRACEKIT_LOG="$tmp/pct-%%p-%p-%%.kev" LD_PRELOAD="$lib" gzip -c "$tmp/in" >/dev/null 2>"$tmp/err" ||
	fail "gzip failed"
[ -s "$tmp/err" ] && fail "%%: unexpected standard error: $(cat "$tmp/err")"
set -- "$tmp"/pct-*.kev
[ $# = 1 ] || fail "no pct-%p-<pid>-%.kev: $(ls "$tmp")"
case "$1" in "$tmp"/pct-%p-[0-9]*-%.kev) ;; *) fail "%% not a literal %: $1" ;; esac
TRACEKIT_LOG="$tmp/lit-%%p.kev" LD_PRELOAD="$lib" bash -c 'gzip -c "$1" >/dev/null; exit 0' bash "$tmp/in" \
	2>"$tmp/err" || fail "bash failed"
[ -s "$tmp/err" ] && fail "%%p: unexpected standard error: $(cat "$tmp/err")"
[ -s "$tmp/lit-%p.kev" ] || fail "no lit-%p.kev: $(ls "$tmp")"
"$tp" -f "$tmp/lit-%p.kev" >"$tmp/out" || fail "traceprinter cannot read lit-%p.kev"
grep -q 'name:.*gzip' "$tmp/out" && fail "%%p: a child of bash recorded into bash's file"
# audit: a crashed run's .part is kept, and the run that finds it says so once, with the
# name of its own temporary
printf 'old' >"$tmp/kp.kev.part"
TRACEKIT_LOG="$tmp/kp.kev" LD_PRELOAD="$lib" gzip -c "$tmp/in" >/dev/null 2>"$tmp/err" || fail "gzip failed"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "kept .part: expected one line on stderr, got: $(cat "$tmp/err")"
grep -q "^tracekit: TRACEKIT_LOG=$tmp/kp.kev: kept $tmp/kp.kev.part .*writes to $tmp/kp.kev\.[A-Za-z0-9]*\.part" \
	"$tmp/err" || fail "kept .part: unexpected message: $(cat "$tmp/err")"
[ "$(cat "$tmp/kp.kev.part")" = old ] || fail "the older .part was changed"
"$tp" -f "$tmp/kp.kev" >/dev/null || fail "the run beside an older .part left no readable trace"
set -- "$tmp"/kp.kev.*.part
[ -e "$1" ] && fail "this run's temporary was left: $*"
# audit 19: a symbolic link at the .part is said as such, not as a trace never completed
echo victim >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/sl.kev.part"
TRACEKIT_LOG="$tmp/sl.kev" LD_PRELOAD="$lib" gzip -c "$tmp/in" >/dev/null 2>"$tmp/err" || fail "gzip failed"
grep -q "^tracekit: TRACEKIT_LOG=$tmp/sl.kev: $tmp/sl.kev.part is a symbolic link, left alone (never followed)" \
	"$tmp/err" || fail "symbolic link at .part: unexpected message: $(cat "$tmp/err")"
[ "$(cat "$tmp/victim")" = victim ] || fail "the link's target was changed"
"$tp" -f "$tmp/sl.kev" >/dev/null || fail "the run beside a linked .part left no readable trace"

TRACEKIT_LOG="$tmp/b16.kev" TRACEKIT_LOG_BUFFERS=16 LD_PRELOAD="$lib" gzip -c "$tmp/in" >/dev/null 2>"$tmp/err" ||
	fail "gzip failed"
[ -s "$tmp/err" ] && fail "TRACEKIT_LOG_BUFFERS=16: $(cat "$tmp/err")"
[ -s "$tmp/b16.kev" ] || fail "TRACEKIT_LOG_BUFFERS=16 recorded nothing"

# a device as TRACEKIT_LOG is written in place and never removed, also when the header
# cannot be written (a full device: made with mknod in the scratch directory, as root)
if [ "$(id -u)" = 0 ] && mknod "$tmp/full" c 1 7 2>/dev/null; then
	TRACEKIT_LOG="$tmp/full" LD_PRELOAD="$lib" gzip -c "$tmp/in" >/dev/null 2>"$tmp/err" || fail "gzip failed"
	[ -c "$tmp/full" ] || fail "the device given as TRACEKIT_LOG was removed or replaced"
	grep -q "no space left on device" "$tmp/err" || fail "unexpected message: $(cat "$tmp/err")"
	mknod "$tmp/null" c 1 3
	TRACEKIT_LOG="$tmp/null" LD_PRELOAD="$lib" gzip -c "$tmp/in" >/dev/null 2>"$tmp/err" || fail "gzip failed"
	[ -s "$tmp/err" ] && fail "unexpected standard error: $(cat "$tmp/err")"
	[ -c "$tmp/null" ] || fail "the null device given as TRACEKIT_LOG was removed or replaced"
fi

# item 12: the seed's example starts a logger of its own; under TRACEKIT_LOG it runs
# unchanged (the environment's logger hands over), both files are complete
if [ -n "$ues" ]; then
	TRACEKIT_LOG="$tmp/env-ues.kev" LD_PRELOAD="$lib" "$ues" "$tmp/ues.kev" >"$tmp/out" 2>"$tmp/err" ||
		fail "usr_event_simple failed under TRACEKIT_LOG: $(cat "$tmp/err")"
	[ -s "$tmp/err" ] && fail "unexpected standard error from usr_event_simple: $(cat "$tmp/err")"
	"$tp" -f "$tmp/ues.kev" >"$tmp/out" || fail "traceprinter cannot read usr_event_simple's own trace"
	[ "$(grep -c 'USREVENT' "$tmp/out")" = 5 ] || fail "usr_event_simple's trace lacks its 5 user events"
	"$tp" -f "$tmp/env-ues.kev" >/dev/null || fail "the TRACEKIT_LOG file is unreadable"
	[ -e "$tmp/env-ues.kev.part" ] && fail "the TRACEKIT_LOG file was left as .part"
fi
exit 0
