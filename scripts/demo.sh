#!/bin/sh
# SPDX-License-Identifier: MIT
# `make demo`: record real programs, print their traces and convert them.
# usage: scripts/demo.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=demo-out
mkdir -p "$OUT"
TP="$BUILD/tools/traceprinter"

banner() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

banner "1. Record: worker_pool (4 threads hashing 2000 generated blocks) traces itself with TraceEvent() and the inline emitter"
"$BUILD/examples/worker_pool" -t 4 -n 2000 -o "$OUT/worker_pool.kev"
ls -l "$OUT/worker_pool.kev"

banner "2. Print it as QNX traceprinter would (the first events)"
"$TP" -f "$OUT/worker_pool.kev" | sed -n '/KERNEL EVENTS/,$p' | head -n 30

banner "3. Threads and user events only, in time order across threads, in ns since the trace began"
"$TP" --sort --time=ns --class=THREAD,PROCESS,USER -n -f "$OUT/worker_pool.kev" | sed -n '/KERNEL EVENTS/,$p' | sed -n '1,12p;/EVENT:30/p'

banner "4. Every event with its thread: the decoded event model (examples/kev_threads.c), per thread and class"
"$BUILD/examples/kev_threads" "$OUT/worker_pool.kev" USER 3

banner "5. The SAT guide's usr_event_simple, ported: TraceEvent() calls show up as KER_CALL / KER_EXIT"
"$BUILD/examples/usr_event_simple" "$OUT/usr_event_simple.kev"
"$TP" -f "$OUT/usr_event_simple.kev" | sed -n '/KER_EXIT/,$p'

banner "6. An unmodified program: gzip, with libtracekit preloaded and TRACEKIT_LOG naming the trace"
TRACEKIT_LOG="$OUT/gzip.kev" LD_PRELOAD="$PWD/$BUILD/src/libtracekit.so" gzip -9 -c "$OUT/worker_pool.kev" >/dev/null
"$TP" -f "$OUT/gzip.kev" | sed -n '/KERNEL EVENTS/,$p' | grep -v CONTROL

banner "7. Flight recorder: 20000 items in ring mode with 64 buffers (1 MiB) keep only the newest events"
"$BUILD/examples/worker_pool" -t 4 -n 20000 -s 256 -b 64 --ring -o "$OUT/ring.kev"
first=$("$TP" -c USER -f "$OUT/ring.kev" | sed -n 's/.*EVENT:10, d0:0x\([0-9a-f]*\).*/\1/p' | sort | head -n 1)
printf '  oldest item left in the ring trace: %d (of 0..19999)\n' "0x$first"

banner "8. Convert: the full printout to a text file (written whole or not at all)"
"$TP" -f "$OUT/worker_pool.kev" -o "$OUT/worker_pool.txt"
wc -l "$OUT/worker_pool.txt"

banner "9. Byfl tables: a .byfl file to CSV, SQLite and Callgrind"
"$BUILD/tests/bfbin_samples" call_stack "$OUT/call_stack.byfl"
"$BUILD/tools/bfbin2csv" --include=Functions "$OUT/call_stack.byfl" | head -n 6
rm -f "$OUT/call_stack.db"
"$BUILD/tools/bfbin2sqlite3" -o "$OUT/call_stack.db" "$OUT/call_stack.byfl"
if command -v sqlite3 >/dev/null 2>&1; then
	sqlite3 -header "$OUT/call_stack.db" 'SELECT "Demangled call stack", Invocations FROM Functions ORDER BY Invocations DESC LIMIT 3'
fi
"$BUILD/tools/bfbin2cgrind" "$OUT/call_stack.byfl" "$OUT/call_stack.cgrind"
ls -l "$OUT/call_stack.db" "$OUT/call_stack.cgrind"

banner "10. TBRW: the VTune guide's chapter 6 file, printed, then through tbrw_reader / tbrw_writer and back"
rm -f "$OUT/vtune.tb5" "$OUT/vtune.dat" "$OUT/vtune_copy.tb5"
"$BUILD/examples/tbrw_vtune_file" "$OUT/vtune.tb5"
"$BUILD/tools/print_tb5" -n 2 "$OUT/vtune.tb5" | sed -n '/module_name/p;/^  data section/,$p'
"$BUILD/tools/tbrw_reader" "$OUT/vtune.tb5" "$OUT/vtune.dat"
"$BUILD/tools/tbrw_writer" "$OUT/vtune.dat" "$OUT/vtune_copy.tb5"
"$BUILD/tools/print_tb5" "$OUT/vtune.tb5" >"$OUT/vtune.txt"
"$BUILD/tools/print_tb5" "$OUT/vtune_copy.tb5" >"$OUT/vtune_copy.txt"
if cmp -s "$OUT/vtune.txt" "$OUT/vtune_copy.txt"; then
	printf '  vtune.tb5 -> vtune.dat (%s lines) -> vtune_copy.tb5: print_tb5 prints both the same\n' "$(wc -l <"$OUT/vtune.dat")"
else
	echo "  print_tb5 output differs between vtune.tb5 and vtune_copy.tb5" >&2
	exit 1
fi

banner "11. TBRW binding: each sample of the chapter 6 file tied to its module, process and thread"
"$BUILD/tools/print_tb5" --bind "$OUT/vtune.tb5" | sed -n '/^  data bind/,$p'

banner "12. tracelogger: the kernel's side of a real multi-threaded program, with its own events on the same time line"
# pingpong: threads ping and pong pass a byte through two pipes; it logs USER 1 (ping sends
# round d0) and USER 2 (pong got it) every 50 rounds. tracelogger starts it, follows it, merges
# its events with the kernel's (-w: exact blocked states and every system call argument when
# privileged; otherwise a note says what is left out).
"$BUILD/tools/tracelogger" -w -f "$OUT/pingpong.kev" -- taskset -c 0 "$BUILD/examples/pingpong" -n 200 -e 50
"$TP" -s -t ns -n -c THREAD,PROCESS,KERCALL,USER -f "$OUT/pingpong.kev" >"$OUT/pingpong.txt"
printf '  %s events; the threads, as the kernel named them:\n' "$(grep -c '^t:' "$OUT/pingpong.txt")"
grep 'PROCTHREAD_NAME' "$OUT/pingpong.txt" | sed 's/^/  /' | head -n 6
echo "  round 50 in time order: ping's USER 1; its write wakes pong (THREADY); ping is preempted (THREADY)"
echo "  or blocks in its next read (THRECEIVE); pong runs, its read returns, USER 2:"
sed -n '/USREVENT:EVENT:1, d0:0x00000032/,/USREVENT:EVENT:2, d0:0x00000032/p' "$OUT/pingpong.txt" | head -n 24 | sed 's/^/  /'

banner "13. VTune CSV: Intel's interval example into a .kev trace and a .tb5 file, back to VTune's CSV, and to the viewers"
CSV_IN=tests/golden/tracecsv/input/phases-hostname-octagon53.csv
rm -rf "$OUT/csv" && mkdir -p "$OUT/csv"
"$BUILD/tools/tracecsv" import -o "$OUT/csv/phases.kev" "$CSV_IN"
"$TP" -f "$OUT/csv/phases.kev" | sed -n '/KERNEL EVENTS/,$p' | head -n 8
"$BUILD/tools/tracecsv" import -o "$OUT/csv/phases.tb5" "$CSV_IN"
"$BUILD/tools/print_tb5" "$OUT/csv/phases.tb5" | grep -E 'comment|event_name'
"$BUILD/tools/tracecsv" export -o "$OUT/csv" "$OUT/csv/phases.kev"
"$BUILD/tools/tracecsv" import -o "$OUT/csv/again.kev" "$OUT/csv/phases-intervals-hostname-octagon53.csv"
mkdir -p "$OUT/csv/again" && "$BUILD/tools/tracecsv" export -o "$OUT/csv/again" "$OUT/csv/again.kev"
cat "$OUT/csv/phases-intervals-hostname-octagon53.csv"
if cmp -s "$OUT/csv/phases-intervals-hostname-octagon53.csv" "$OUT/csv/again/again-intervals-hostname-octagon53.csv"; then
	echo "  export -> import -> export: identical"
else
	echo "  export -> import -> export differs" >&2
	exit 1
fi
echo "  tracekit stats and convert pair the tasks and frames into intervals (slices in the viewers):"
"$BUILD/tools/tracekit" stats "$OUT/csv/phases.kev" | sed -n "/^User intervals/,/^$/p" | cut -c1-90 | sed "s/^/  /"
"$BUILD/tools/tracekit" convert "$OUT/csv/phases.kev" "$OUT/csv/phases.pftrace"
"$BUILD/tools/tracekit" convert "$OUT/csv/phases.kev" "$OUT/csv/phases.json"
ls -l "$OUT/csv/phases.pftrace" "$OUT/csv/phases.json" | sed 's/^/  /'

banner "14. Symbols: worker_pool's function entries by name and source line (traceprinter --symbols, libdw)"
"$TP" --symbols -f "$OUT/worker_pool.kev" | grep -m 2 -A 2 'FUNC_ENTER' | sed 's/^/  /'

banner "15. A session: tracelogger -d1 waits; the SAT tutorial's usr_event_simple, another process, configures and starts it"
# As the guide's chapter runs it: tracelogger in daemon mode (here in the background, in a
# session of its own name), then the program, which only calls TraceEvent(); the events of
# both sides land in one file. Without privileges tracelogger records the program's events only.
rm -f "$OUT/usr_event_simple.results"
"$BUILD/tools/tracelogger" -d1 -n 3 -s 5 -N "demo.$$" -f "$OUT/usr_event_simple.results" 2>"$OUT/session.err" &
tl=$!
i=0
while ! grep -q "waiting for START" "$OUT/session.err" && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
TRACEKIT_SESSION="demo.$$" "$BUILD/examples/tutorial/usr_event_simple"
wait $tl || { cat "$OUT/session.err" >&2; exit 1; }
sed 's/^/  /' "$OUT/session.err"
"$TP" -f "$OUT/usr_event_simple.results" | grep -E 'USREVENT|USRSTREVENT' | sed 's/^/  /'

banner "16. Looking at a trace: tracekit stats, and exports for trace viewers (Chrome JSON, Perfetto, SQLite)"
TK="$BUILD/tools/tracekit"
"$TK" stats "$OUT/pingpong.kev" | sed -n '1,8p'
"$TK" convert --pair=10:11=item "$OUT/worker_pool.kev" "$OUT/worker_pool.json"
"$TK" convert "$OUT/pingpong.kev" "$OUT/pingpong.pftrace"
"$TK" convert "$OUT/pingpong.kev" "$OUT/pingpong.db"
ls -l "$OUT/worker_pool.json" "$OUT/pingpong.pftrace" "$OUT/pingpong.db" | sed 's/^/  /'
echo "  Open the .pftrace or .json in ui.perfetto.dev (it runs in the browser: the file is not"
echo "  uploaded) or the .json in chrome://tracing or speedscope; query the .db with sqlite3"
echo "  (docs/export.md has example queries)."

printf '\nThe traces and their conversions are in %s/.\n' "$OUT"
