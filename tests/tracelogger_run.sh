#!/bin/sh
# SPDX-License-Identifier: MIT
# tracelogger run as a user runs it, on real workloads, with the events asserted against
# what each workload knows (docs/tracelogger.md). traceprinter must read every file made.
# usage: tracelogger_run.sh TRACELOGGER TRACEPRINTER PINGPONG TL_WRITER WORKDIR [CASE...]
# Cases: pingpong user pipeline status missing gone limit_n limit_s limit_s_pid limit_S ring sigterm sighup
#        abort full_disk unpriv syscalls states daemon system forks losses samples stray_usr
#        stdout_cmd epipe class_filter sub_classes other_user size_min session3 daemon_program daemon_user_only sigkill
#        sigkill_unfollowed second_logger orphan recover foreign_session foreign_default few_buffers own_logger
#        not_region (default: all). Every case runs in a session of its own
#        (TRACEKIT_SESSION=tlrun.PID), so a logger elsewhere on "default" does not disturb it. A case that needs what this machine
#        cannot give (perf_event_open refused, no setpriv) is skipped with a printed reason;
#        the script exits 77 only when every case was skipped.
set -u
TL=$1 TP=$2 PP=$3 WR=$4 WORK=$5
shift 5
CASES=${*:-pingpong user pipeline status missing gone limit_n limit_s limit_s_pid limit_S ring sigterm sighup abort full_disk unpriv syscalls states daemon system forks losses samples stray_usr stdout_cmd epipe class_filter sub_classes other_user size_min session3 daemon_program daemon_user_only sigkill sigkill_unfollowed second_logger orphan recover foreign_session foreign_default few_buffers own_logger not_region}
TRACEKIT_SESSION=tlrun.$$
export TRACEKIT_SESSION
REGION=/dev/shm/tracekit.$(id -u).$TRACEKIT_SESSION
mkdir -p "$WORK"
W=$(mktemp -d "$WORK/tl.XXXXXX")
trap 'rm -rf "$W"; rm -f "$REGION"' EXIT
failures=0 ran=0 skipped=0

fail() { echo "FAIL [$case]: $*"; failures=$((failures + 1)); }
skip() { echo "SKIP [$case]: $*"; skipped=$((skipped + 1)); }
# prints the file (one line per event, time order, ns); fails the case if traceprinter cannot read it
readable() {
	if ! "$TP" -n -s -t ns "$1" >"$1.txt" 2>"$1.err"; then
		fail "traceprinter cannot read $1: $(head -n 3 "$1.err")"
		return 1
	fi
	return 0
}
count() { grep -c -- "$1" "$2" || true; }
# waits (at most 20 s) until the traced command has made file $1: recording has begun
started() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt 200 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 0.1
}

# Can this machine record at all (the unprivileged tier suffices)?
probe() {
	"$TL" -f "$W/probe.kev" -c THREAD -- true >"$W/probe.out" 2>&1
}
if ! probe; then
	echo "SKIP: tracelogger cannot record on this machine: $(cat "$W/probe.out")"
	exit 77
fi
privileged=0
if "$TL" -f "$W/probe2.kev" -c KERCALL -- true >"$W/probe2.out" 2>&1; then
	privileged=1
fi

case_pingpong() { # two threads, pinned to CPU 0: create, names, switch-ins, blocked states, death
	"$TL" -f "$W/pp.kev" -c THREAD,PROCESS -- taskset -c 0 "$PP" -n 2000 -e 0 >"$W/pp.out" 2>"$W/pp.err" ||
		{ fail "exit status $? ($(cat "$W/pp.err"))"; return; }
	readable "$W/pp.kev" || return
	t=$W/pp.kev.txt
	ping=$(sed -n 's/.*PROCTHREAD_NAME pid:\([0-9]*\) tid:\([0-9]*\) name:ping$/\2/p' "$t" | head -n 1)
	pong=$(sed -n 's/.*PROCTHREAD_NAME pid:\([0-9]*\) tid:\([0-9]*\) name:pong$/\2/p' "$t" | head -n 1)
	[ -n "$ping" ] && [ -n "$pong" ] || { fail "no PROCTHREAD_NAME for ping and pong"; return; }
	pid=$(sed -n "s/.*PROCTHREAD_NAME pid:\([0-9]*\) tid:$pong name:pong\$/\1/p" "$t" | head -n 1)
	[ "$pid" = "$ping" ] || fail "pong's process $pid is not ping's ($ping)"
	grep -q "THCREATE *pid:$pid tid:$pong\$" "$t" || fail "no THCREATE of pong ($pong)"
	n_ping=$(count "THRUNNING *pid:$pid tid:$ping " "$t")
	n_pong=$(count "THRUNNING *pid:$pid tid:$pong " "$t")
	[ "$n_ping" -ge 2000 ] && [ "$n_pong" -ge 2000 ] ||
		fail "switch-ins: ping $n_ping, pong $n_pong (each blocks 2000 times: at least 2000 expected)"
	# a round trip on one CPU needs a switch: a thread blocks on its pipe read (a blocked
	# state) or is preempted by the one it woke (THREADY); both threads block many times
	b_ping=$(grep -E "TH[A-Z]+ *pid:$pid tid:$ping " "$t" | grep -v -c -E "THRUNNING|THREADY|THCREATE" || true)
	b_pong=$(grep -E "TH[A-Z]+ *pid:$pid tid:$pong " "$t" | grep -v -c -E "THRUNNING|THREADY|THCREATE" || true)
	r_ping=$(count "THREADY *pid:$pid tid:$ping " "$t")
	[ "$b_ping" -ge 200 ] && [ "$b_pong" -ge 200 ] && [ $((b_ping + b_pong)) -ge 1000 ] ||
		fail "blocked states: ping $b_ping, pong $b_pong"
	[ $((b_ping + r_ping)) -ge $((n_ping - 5)) ] ||
		fail "ping ran $n_ping times but left the CPU only $b_ping + $r_ping times"
	grep -q "THDEAD *pid:$pid tid:$pong" "$t" || fail "no THDEAD of pong"
	grep -q "THDESTROY *pid:$pid tid:$pong" "$t" || fail "no THDESTROY of pong"
	grep -q "PROCDESTROY.* pid:$pid" "$t" || fail "no PROCDESTROY of the process"
	# pinned to CPU 0: every one of its switch-ins is on CPU 0
	other=$(grep "THRUNNING *pid:$pid tid:$pong " "$t" | grep -v -c "CPU:00" || true)
	[ "$other" = 0 ] || fail "$other switch-ins of pong off CPU 0 under taskset -c 0"
}

case_user() { # the program's own USER events between the kernel's, in order, with their threads
	"$TL" -f "$W/u.kev" -- taskset -c 0 "$PP" -n 1000 -e 100 >"$W/u.out" 2>"$W/u.err" ||
		{ fail "exit status $? ($(cat "$W/u.err"))"; return; }
	readable "$W/u.kev" || return
	t=$W/u.kev.txt
	n1=$(count "USREVENT:EVENT:1," "$t") n2=$(count "USREVENT:EVENT:2," "$t") n3=$(count "USREVENT:EVENT:3," "$t")
	[ "$n1" = 10 ] && [ "$n2" = 10 ] && [ "$n3" = 1 ] || fail "user events 1/2/3: $n1/$n2/$n3, expected 10/10/1"
	pong=$(sed -n 's/.*PROCTHREAD_NAME pid:[0-9]* tid:\([0-9]*\) name:pong$/\1/p' "$t" | head -n 1)
	ping=$(sed -n 's/.*PROCTHREAD_NAME pid:[0-9]* tid:\([0-9]*\) name:ping$/\1/p' "$t" | head -n 1)
	# times never go back; every EVENT:2 of round k follows EVENT:1 of round k; the thread
	# running on the event's CPU (last THRUNNING there) is the one that logged it
	awk -v ping="$ping" -v pong="$pong" '
		function secs(s) { sub(/^t:/, "", s); return s + 0 }
		/^t:/ { t = secs($1); if (t < last) { print "time goes back at line " NR; bad = 1 } last = t }
		/THRUNNING/ { split($0, a, "tid:"); split(a[2], b, " "); run[$2] = b[1] }
		/USREVENT:EVENT:1,/ { seen1[$NF "" $(NF-1)] = 1; r = $(NF-1); one[r] = 1
			if (run[$2] != ping) { print "EVENT:1 " r " not on ping: " run[$2]; bad = 1 } }
		/USREVENT:EVENT:2,/ { r = $(NF-1)
			if (!(r in one)) { print "EVENT:2 " r " before EVENT:1"; bad = 1 }
			if (run[$2] != pong) { print "EVENT:2 " r " not on pong: " run[$2]; bad = 1 } }
		END { exit bad }' "$t" >"$W/u.awk" || fail "order or owners: $(head -n 3 "$W/u.awk")"
	grep -q "TRACE_TRACEKIT_CLOCK_RAW_NS:: 0" "$t" || fail "no TRACEKIT_CLOCK_RAW_NS in the header"
	# without the THREAD class the kernel writes no THRUNNING: tracelogger writes one for the
	# thread of each user event, so the per-CPU rule still gives every event its thread
	"$TL" -f "$W/u2.kev" -c PROCESS,USER -- taskset -c 0 "$PP" -n 1000 -e 100 >/dev/null 2>"$W/u2.err" ||
		{ fail "-c PROCESS,USER: exit status $? ($(cat "$W/u2.err"))"; return; }
	readable "$W/u2.kev" || return
	t=$W/u2.kev.txt
	pong=$(sed -n 's/.*PROCTHREAD_NAME pid:[0-9]* tid:\([0-9]*\) name:pong$/\1/p' "$t" | head -n 1)
	ping=$(sed -n 's/.*PROCTHREAD_NAME pid:[0-9]* tid:\([0-9]*\) name:ping$/\1/p' "$t" | head -n 1)
	awk -v ping="$ping" -v pong="$pong" '
		/THRUNNING/ { split($0, a, "tid:"); split(a[2], b, " "); run[$2] = b[1]; n++ }
		/USREVENT:EVENT:1,/ && run[$2] != ping { print "EVENT:1 on " run[$2]; bad = 1 }
		/USREVENT:EVENT:2,/ && run[$2] != pong { print "EVENT:2 on " run[$2]; bad = 1 }
		END { if (n < 20) { print n " THRUNNING"; bad = 1 } exit bad }' "$t" >"$W/u2.awk" ||
		fail "-c PROCESS,USER: owners: $(head -n 3 "$W/u2.awk")"
	# -c USER alone: the program's own events, each with its thread, and no kernel events
	"$TL" -f "$W/u3.kev" -c USER -- taskset -c 0 "$PP" -n 1000 -e 100 >/dev/null 2>"$W/u3.err" ||
		{ fail "-c USER: exit status $? ($(cat "$W/u3.err"))"; return; }
	readable "$W/u3.kev" || return
	t=$W/u3.kev.txt
	n1=$(count "USREVENT:EVENT:1," "$t") n2=$(count "USREVENT:EVENT:2," "$t") n3=$(count "USREVENT:EVENT:3," "$t")
	[ "$n1" = 10 ] && [ "$n2" = 10 ] && [ "$n3" = 1 ] ||
		fail "-c USER: user events 1/2/3: $n1/$n2/$n3, expected 10/10/1"
	k=$(grep -c -E "KER_CALL|KER_EXIT|INT_|THREADY|THRECEIVE|THSEM|THMUTEX|THCONDVAR|THNANOSLEEP|THCREATE|THDESTROY|PROCCREATE" "$t" || true)
	[ "$k" = 0 ] || fail "-c USER: $k kernel events: $(grep -m 3 -E "KER_|INT_|THREADY|THCREATE|PROCCREATE" "$t")"
	awk '/THRUNNING/ { split($0, a, "tid:"); split(a[2], b, " "); run[$2] = b[1] }
		/USREVENT:EVENT:[12],/ && run[$2] == "" { print "no thread for " $0; bad = 1 }
		END { exit bad }' "$t" >"$W/u3.awk" || fail "-c USER: owners: $(head -n 3 "$W/u3.awk")"
	[ ! -s "$W/u3.err" ] || fail "-c USER: said $(cat "$W/u3.err")"
	# -c USER alone and no room for the session's region (a file size limit): refused, nothing run
	rm -f "$W/u4.kev"
	(ulimit -f 128 && exec "$TL" -N "$TRACEKIT_SESSION.u4" -f "$W/u4.kev" -c USER -- "$PP" -n 10 -e 5) \
		>"$W/u4.out" 2>"$W/u4.err"
	s=$?
	[ $s = 1 ] || fail "-c USER, no region: exit status $s, 1 expected ($(cat "$W/u4.err"))"
	grep -q "cannot record: .*need session $TRACEKIT_SESSION.u4, which could not be opened" "$W/u4.err" ||
		fail "-c USER, no region: $(cat "$W/u4.err")"
	[ ! -e "$W/u4.kev" ] && [ ! -s "$W/u4.out" ] || fail "-c USER, no region: a file was written or the command ran"
}

case_pipeline() { # a shell pipeline with fork and exec: names after exec
	"$TL" -A run=pipeline -A "note=a b" -f "$W/sh.kev" -c THREAD,PROCESS -- sh -c 'echo hello | tr a-z A-Z | wc -c >/dev/null' \
		>"$W/sh.out" 2>"$W/sh.err" || { fail "exit status $? ($(cat "$W/sh.err"))"; return; }
	readable "$W/sh.kev" || return
	t=$W/sh.kev.txt
	grep -q "^ *TRACE_run:: pipeline\$" "$t" && grep -q "^ *TRACE_note:: a b\$" "$t" ||
		fail "the -A attributes are not in the header"
	shpid=$(sed -n 's/.*PROCCREATE_NAME ppid:[0-9]* pid:\([0-9]*\) name:sh$/\1/p' "$t" | head -n 1)
	[ -n "$shpid" ] || { fail "no PROCCREATE_NAME for sh"; return; }
	for cmd in tr wc; do
		grep -q "PROCCREATE_NAME ppid:$shpid pid:[0-9]* name:$cmd\$" "$t" ||
			fail "no PROCCREATE_NAME of $cmd (child of sh $shpid) after its exec"
	done
	n=$(count "PROCDESTROY" "$t")
	[ "$n" -ge 3 ] || fail "$n PROCDESTROY events (sh and its children: at least 3)"
}

case_status() { # the command's exit status, also when a signal ends it
	"$TL" -f "$W/st.kev" -- sh -c 'exit 7' >/dev/null 2>"$W/st.err"
	s=$?
	[ "$s" = 7 ] || fail "exit status $s, expected 7 ($(cat "$W/st.err"))"
	readable "$W/st.kev"
	"$TL" -f "$W/st2.kev" -- sh -c 'kill -USR1 $$' >/dev/null 2>"$W/st2.err"
	s=$?
	[ "$s" = 138 ] || fail "killed by SIGUSR1: exit status $s, expected 138"
	readable "$W/st2.kev"
}

case_missing() { # a command that does not exist: 127 as a shell, a message, a readable file
	"$TL" -f "$W/m.kev" -- "$W/no-such-command" arg >"$W/m.out" 2>"$W/m.err"
	s=$?
	[ "$s" = 127 ] || fail "exit status $s, expected 127"
	grep -q "no-such-command: command not found" "$W/m.err" || fail "message: $(cat "$W/m.err")"
	readable "$W/m.kev"
	: >"$W/noexec"
	chmod 644 "$W/noexec"
	"$TL" -f "$W/m2.kev" -- "$W/noexec" >/dev/null 2>"$W/m2.err"
	s=$?
	[ "$s" = 126 ] || fail "a file that cannot be executed: exit status $s, expected 126"
}

case_gone() { # a pid that is gone: error, nothing written
	sh -c 'exit 0' &
	gone=$!
	wait $gone
	"$TL" -f "$W/g.kev" -p "$gone" >"$W/g.out" 2>"$W/g.err"
	s=$?
	[ "$s" = 1 ] || fail "exit status $s, expected 1"
	grep -q "pid $gone: no such process" "$W/g.err" || fail "message: $(cat "$W/g.err")"
	[ ! -e "$W/g.kev" ] || fail "a file was written for a gone pid"
	# a pid that ends while traced: recording ends with it
	sleep 0.5 &
	p=$!
	"$TL" -f "$W/g2.kev" -c THREAD,PROCESS -p "$p" >/dev/null 2>"$W/g2.err" ||
		fail "-p of a process that ends: exit status $? ($(cat "$W/g2.err"))"
	wait $p
	readable "$W/g2.kev"
}

events_in() { # events in a printed file (traceprinter -n: one line each)
	grep -c '^t:' "$1" || true
}

case_limit_n() { # -n 3: three buffers of 1024 events, then the command runs on untraced
	"$TL" -n 3 -f "$W/n.kev" -c THREAD,PROCESS -- taskset -c 0 "$PP" -n 20000 -e 0 >/dev/null 2>"$W/n.err" ||
		{ fail "exit status $? ($(cat "$W/n.err"))"; return; }
	readable "$W/n.kev" || return
	slots=$(($(stat -c %s "$W/n.kev") / 16))
	[ "$slots" -le 3300 ] || fail "$slots slots in the file: -n 3 keeps about 3 x 1024 (+ header, TIME events)"
	[ "$slots" -ge 3072 ] || fail "$slots slots: fewer than 3 buffers"
	# (a thread dying before the exec is not the command's: sanitizer runtimes start one there)
	awk '/name:pingpong/ { run = 1 } run && /THDEAD/ { found = 1 } END { exit !found }' "$W/n.kev.txt" &&
		fail "the file holds the end of the command: -n 3 did not stop"
	true
}

case_limit_s() { # -s 0.3 on a command that runs 1.5 s: events span about 0.3 s, exit 0 after it ends
	start=$(date +%s%N)
	"$TL" -s 0.3 -f "$W/s.kev" -c THREAD,PROCESS -- sh -c 'i=0; while [ $i -lt 15 ]; do sleep 0.1; i=$((i+1)); done' \
		>/dev/null 2>"$W/s.err" || { fail "exit status $? ($(cat "$W/s.err"))"; return; }
	elapsed=$((($(date +%s%N) - start) / 1000000))
	readable "$W/s.kev" || return
	span=$(awk '/^t:/ { s = $1; sub(/^t:/, "", s); if (!n++) first = s; last = s } END { printf "%d", (last - first) * 1000 }' "$W/s.kev.txt")
	[ "$span" -le 600 ] || fail "events span $span ms with -s 0.3"
	[ "$elapsed" -ge 1400 ] || fail "tracelogger ended after $elapsed ms: it must wait for the command"
}

case_limit_s_pid() { # -p with -s: the time given is the length (no default -n 32 first); an -n that ends it first is said
	taskset -c 0 "$PP" -n 100000000 -e 0 >/dev/null 2>&1 &
	p=$!
	sleep 0.2
	start=$(date +%s%N)
	"$TL" -p $p -s 1 -c THREAD -f "$W/sp.kev" >/dev/null 2>"$W/sp.err" || fail "-p -s 1: exit status $? ($(cat "$W/sp.err"))"
	elapsed=$((($(date +%s%N) - start) / 1000000))
	[ "$elapsed" -ge 900 ] || fail "-p -s 1 ended after $elapsed ms: a buffer limit stopped it first ($(cat "$W/sp.err"))"
	if readable "$W/sp.kev"; then
		span=$(awk '/^t:/ { s = $1; sub(/^t:/, "", s); if (!n++) first = s; last = s } END { printf "%d", (last - first) * 1000 }' "$W/sp.kev.txt")
		[ "$span" -ge 700 ] || fail "-p -s 1: events span $span ms"
	fi
	"$TL" -p $p -s 5 -n 2 -c THREAD -f "$W/sp2.kev" >/dev/null 2>"$W/sp2.err" || fail "-p -s 5 -n 2: exit status $?"
	grep -q "^tracelogger: note: recording stopped: the -n limit of 2 buffers" "$W/sp2.err" ||
		fail "-p: the -n limit that ended the recording is not said: $(cat "$W/sp2.err")"
	kill $p
	wait $p 2>/dev/null
	readable "$W/sp2.kev"
}
case_limit_S() { # -S 48K: the file stays below 48 KiB; -M -S 48K keeps the newest 48 KiB instead
	"$TL" -S 48K -f "$W/S.kev" -c THREAD,PROCESS -- taskset -c 0 "$PP" -n 20000 -e 0 >/dev/null 2>"$W/S.err" ||
		{ fail "exit status $? ($(cat "$W/S.err"))"; return; }
	readable "$W/S.kev" || return
	size=$(stat -c %s "$W/S.kev")
	[ "$size" -le 49152 ] || fail "-S 48K: $size bytes"
	[ "$size" -ge 40000 ] || fail "-S 48K: only $size bytes"
	# (a thread dying before the exec is not the command's: sanitizer runtimes start one there)
	awk '/name:pingpong/ { run = 1 } run && /THDEAD/ { found = 1 } END { exit !found }' "$W/S.kev.txt" &&
		fail "-S 48K: the file holds the end of the command"
	"$TL" -M -S 48K -f "$W/M.kev" -c THREAD,PROCESS -- taskset -c 0 "$PP" -n 20000 -e 0 >/dev/null 2>"$W/M.err" ||
		{ fail "-M: exit status $? ($(cat "$W/M.err"))"; return; }
	readable "$W/M.kev" || return
	n=$(events_in "$W/M.kev.txt")
	[ "$n" -le 3200 ] || fail "-M -S 48K: $n events (3 buffers of 1024 slots expected)"
	[ "$n" -ge 1024 ] || fail "-M -S 48K: only $n events"
	grep -q "THDEAD" "$W/M.kev.txt" || fail "-M -S 48K: the newest events (the end of the command) are missing"
	grep -q "name:pong" "$W/M.kev.txt" && fail "-M -S 48K: the oldest events (the thread names) were kept"
	true
}

case_ring() { # -r -b 2: only the newest 2 buffers, written at the stop
	"$TL" -r -b 2 -f "$W/r.kev" -c THREAD,PROCESS -- taskset -c 0 "$PP" -n 20000 -e 0 >/dev/null 2>"$W/r.err" ||
		{ fail "exit status $? ($(cat "$W/r.err"))"; return; }
	readable "$W/r.kev" || return
	n=$(events_in "$W/r.kev.txt")
	[ "$n" -le 2200 ] || fail "-r -b 2: $n events (2 x 1024 slots expected)"
	[ "$n" -ge 1024 ] || fail "-r -b 2: only $n events"
	grep -q "THDEAD" "$W/r.kev.txt" || fail "-r: the end of the command is missing"
	grep -q "name:pong" "$W/r.kev.txt" && fail "-r: the start of the command (pong named) was kept"
	true
}

case_sigterm() { # SIGTERM: the file is completed, the command gets it too, its status is returned
	"$TL" -f "$W/t.kev" -c THREAD,PROCESS -- sh -c "touch '$W/t.started'; exec sleep 30" >/dev/null 2>"$W/t.err" &
	p=$!
	started "$W/t.started"
	kill -TERM $p
	wait $p
	s=$?
	[ "$s" = 143 ] || fail "exit status $s, expected 143 (sleep ended by the SIGTERM passed on)"
	[ ! -e "$W/t.kev.part" ] || fail "a .part file is left"
	readable "$W/t.kev" || return
	grep -q "name:sleep" "$W/t.kev.txt" || fail "the command's start is missing"
}

case_sighup() { # SIGHUP (a closed terminal) stops as SIGTERM does: file completed, region removed; ignored under nohup
	if [ $((0x$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status) & 1)) = 1 ]; then
		skip "SIGHUP is ignored in this test's environment (nohup): it cannot be sent to the tool"
		return
	fi
	"$TL" -f "$W/hup.kev" -c THREAD,PROCESS -- sh -c "touch '$W/hup.started'; exec sleep 30" >/dev/null 2>"$W/hup.err" &
	p=$!
	started "$W/hup.started"
	kill -HUP $p
	wait $p
	s=$?
	[ "$s" = 129 ] || fail "exit status $s, expected 129 (sleep ended by the SIGHUP passed on)"
	[ ! -e "$W/hup.kev.part" ] && [ ! -e "$W/hup.kev.programs.part" ] || fail "a .part file is left: $(ls "$W"/hup.kev*)"
	[ ! -e "$REGION" ] || fail "the session region $REGION is left"
	readable "$W/hup.kev" || return
	grep -q "name:sleep" "$W/hup.kev.txt" || fail "the command's start is missing"
	# nohup: a hangup is ignored (by the command too); SIGTERM then stops it
	rm -f "$W/hup.started"
	(trap '' HUP; exec "$TL" -f "$W/hup2.kev" -c THREAD -- sh -c "touch '$W/hup.started'; exec sleep 2") \
		>/dev/null 2>"$W/hup2.err" &
	p=$!
	started "$W/hup.started"
	kill -HUP $p
	sleep 0.3
	kill -0 $p 2>/dev/null || fail "SIGHUP stopped a tracelogger started with SIGHUP ignored"
	wait $p
	s=$?
	[ "$s" = 0 ] || fail "under nohup: exit status $s, expected 0 (sleep ran to its end): $(cat "$W/hup2.err")"
	readable "$W/hup2.kev" || return
}
case_abort() { # a second signal aborts at once, still leaving a readable file
	"$TL" -f "$W/a.kev" -- sh -c "trap '' TERM INT; touch '$W/a.started'; sleep 3" >/dev/null 2>"$W/a.err" &
	p=$!
	started "$W/a.started"
	kill -TERM $p
	sleep 0.2
	kill -TERM $p
	start=$(date +%s%N)
	wait $p
	s=$?
	elapsed=$((($(date +%s%N) - start) / 1000000))
	[ "$s" = 143 ] || fail "exit status $s, expected 143"
	[ "$elapsed" -lt 1500 ] || fail "the abort took $elapsed ms (it must not wait for the command)"
	grep -q "aborted" "$W/a.err" || fail "no message about the abort: $(cat "$W/a.err")"
	readable "$W/a.kev"
}

case_full_disk() { # a file size limit (EFBIG): a clear error, the events until then readable
	(
		trap '' XFSZ
		ulimit -f 64 # 32 KiB
		"$TL" -f "$W/fd.kev" -c THREAD,PROCESS -- taskset -c 0 "$PP" -n 20000 -e 0 >/dev/null 2>"$W/fd.err"
	)
	s=$?
	[ "$s" = 1 ] || fail "exit status $s, expected 1"
	grep -q "cannot write" "$W/fd.err" || fail "message: $(cat "$W/fd.err")"
	[ ! -e "$W/fd.kev" ] || fail "a half-written file under the final name"
	part=$(sed -n 's/.*the events recorded until then are in \(.*\)$/\1/p' "$W/fd.err")
	[ -n "$part" ] && [ -f "$part" ] || { fail "the message names no partial file: $(cat "$W/fd.err")"; return; }
	"$TP" -n "$part" >"$W/fd.txt" 2>"$W/fd.tperr"
	n=$(count "THRUNNING" "$W/fd.txt")
	[ "$n" -ge 100 ] || fail "only $n THRUNNING readable from $part ($(cat "$W/fd.tperr"))"
}

case_unpriv() { # as nobody: the unprivileged tier, a note, a readable file
	command -v setpriv >/dev/null 2>&1 || { skip "no setpriv"; return; }
	[ "$(id -u)" = 0 ] || { skip "not root: cannot switch to nobody"; return; }
	d=$(mktemp -d /tmp/tl-unpriv.XXXXXX)
	chmod 777 "$d"
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$TL" 2>/dev/null; then
		skip "nobody cannot run $TL (its directories are closed)"
		rm -rf "$d"
		return
	fi
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TL" -f "$d/u.kev" -- taskset -c 0 "$PP" -n 500 -e 100 \
		>"$W/np.out" 2>"$W/np.err"
	s=$?
	if [ "$s" != 0 ]; then
		if grep -q "perf_event_paranoid" "$W/np.err"; then
			skip "the machine forbids perf_event_open to users: $(cat "$W/np.err")"
		else
			fail "as nobody: exit status $s ($(cat "$W/np.err"))"
		fi
		rm -rf "$d"
		return
	fi
	grep -q "note:" "$W/np.err" || fail "as nobody: no note about the unprivileged tier: $(cat "$W/np.err")"
	cp "$d/u.kev" "$W/np.kev"
	rm -rf "$d"
	readable "$W/np.kev" || return
	grep -q "unprivileged" "$W/np.kev.txt" || fail "the header does not say the unprivileged tier"
	n=$(count "THRUNNING" "$W/np.kev.txt")
	[ "$n" -ge 500 ] || fail "as nobody: $n switch-ins"
	n=$(count "USREVENT" "$W/np.kev.txt")
	[ "$n" = 11 ] || fail "as nobody: $n user events, 11 expected"
	# the whole system (no command, no pid) as nobody: refused with the reason, nothing written
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TL" -s 1 -f /tmp/tl-never.kev >/dev/null 2>"$W/np4.err"
	s=$?
	[ "$s" = 1 ] || fail "the whole system as nobody: exit status $s, expected 1"
	grep -q "cannot record: " "$W/np4.err" || fail "the whole system as nobody: $(cat "$W/np4.err")"
	[ ! -e /tmp/tl-never.kev ] || fail "the whole system as nobody: a file was written"
	# a process that is not ours: refused with the reason
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TL" -f /tmp/tl-never.kev -p 1 >/dev/null 2>"$W/np3.err"
	s=$?
	[ "$s" = 1 ] || fail "-p 1 as nobody: exit status $s, expected 1"
	[ -s "$W/np3.err" ] || fail "-p 1 as nobody: no message"
	# asking for system calls as nobody is refused with the reason, not silently dropped
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TL" -f /tmp/tl-never.kev -c KERCALL -- true \
		>/dev/null 2>"$W/np2.err"
	s=$?
	[ "$s" = 1 ] || fail "-c KERCALL as nobody: exit status $s, expected 1"
	grep -q "perf_event_paranoid\|CAP_PERFMON\|privileg" "$W/np2.err" || fail "-c KERCALL as nobody: $(cat "$W/np2.err")"
}

case_syscalls() { # privileged: system calls, with their number, fast and wide
	[ "$privileged" = 1 ] || { skip "system calls need privileges: $(cat "$W/probe2.out")"; return; }
	"$TL" -f "$W/k.kev" -c KERCALL,THREAD -- "$PP" --getppid 1000 >/dev/null 2>"$W/k.err" ||
		{ fail "exit status $? ($(cat "$W/k.err"))"; return; }
	readable "$W/k.kev" || return
	# getppid is system call 110 on x86-64: KER_CALL/KER_EXIT codes 110 and 110 | 0x80 (collect.h)
	n=$("$TP" -n -c KERCALL "$W/k.kev" | grep -c '^t:' || true)
	[ "$n" -ge 2000 ] || fail "$n KERCALL events for 1000 getppid() (2000 expected: entry and exit)"
	n=$(count "KER_CALL:getppid/110" "$W/k.kev.txt")
	[ "$n" -ge 1000 ] || fail "$n KER_CALL:getppid/110 for 1000 getppid() (named by the Linux table)"
	n=$(count "KER_EXIT:getppid/110" "$W/k.kev.txt")
	[ "$n" -ge 1000 ] || fail "$n KER_EXIT:getppid/110 for 1000 getppid()"
	"$TL" -w -f "$W/kw.kev" -c KERCALL -- "$PP" --getppid 100 >/dev/null 2>"$W/kw.err" ||
		{ fail "wide: exit status $? ($(cat "$W/kw.err"))"; return; }
	readable "$W/kw.kev" || return
	# -F 1 (QNX's preset: no kernel calls) on the default classes
	"$TL" -F 1 -f "$W/F.kev" -- "$PP" --getppid 1000 >/dev/null 2>"$W/F.err" ||
		{ fail "-F 1: exit status $? ($(cat "$W/F.err"))"; return; }
	readable "$W/F.kev" || return
	n=$(count "KER_CALL" "$W/F.kev.txt")
	[ "$n" = 0 ] || fail "-F 1: $n KER_CALL events"
	grep -q "PROCCREATE_NAME" "$W/F.kev.txt" || fail "-F 1: the other classes are missing"
	# wide: every argument; the pipe write of pingpong shows its fd and length
	"$TL" -w -f "$W/kw2.kev" -c KERCALL -- "$PP" -n 10 -e 0 >/dev/null 2>"$W/kw2.err" ||
		{ fail "wide: exit status $? ($(cat "$W/kw2.err"))"; return; }
	readable "$W/kw2.kev" || return
	grep -q "KER_CALL:write/1 nr:1 a0:0x[0-9a-f]* a1:0x[0-9a-f]* a2:0x1 " "$W/kw2.kev.txt" ||
		fail "wide: no write(fd, buf, 1) with its arguments"
}

case_states() { # privileged, -w: the exact blocked states: pipe reads, mutex and condition variable
	[ "$privileged" = 1 ] || { skip "exact blocked states need privileges: $(cat "$W/probe2.out")"; return; }
	"$TL" -w -f "$W/x.kev" -c THREAD,PROCESS -- taskset -c 0 "$PP" -n 1000 -e 0 >/dev/null 2>"$W/x.err" ||
		{ fail "exit status $? ($(cat "$W/x.err"))"; return; }
	readable "$W/x.kev" || return
	pong=$(sed -n 's/.*PROCTHREAD_NAME pid:[0-9]* tid:\([0-9]*\) name:pong$/\1/p' "$W/x.kev.txt" | head -n 1)
	n=$(count "THRECEIVE *pid:[0-9]* tid:$pong " "$W/x.kev.txt")
	[ "$n" -ge 100 ] || fail "pong blocked in its pipe read (THRECEIVE) $n times"
	"$TL" -w -f "$W/l.kev" -c THREAD,PROCESS -- taskset -c 0 "$PP" --lock 2000 >/dev/null 2>"$W/l.err" ||
		{ fail "--lock: exit status $? ($(cat "$W/l.err"))"; return; }
	readable "$W/l.kev" || return
	n=$(grep -c -E "THCONDVAR|THMUTEX" "$W/l.kev.txt" || true)
	[ "$n" -ge 100 ] || fail "$n THCONDVAR/THMUTEX states for 2000 hand-overs under a condition variable"
}

case_daemon() { # -d1: nothing before START (SIGUSR1), nothing after STOP (SIGUSR2)
	# START and STOP take effect at tracelogger's next wake-up (a few ms): the commands
	# that must (not) be recorded run 0.1 s after the signals
	"$TL" -d1 -c THREAD,PROCESS -f "$W/d.kev" -- sh -c \
		'sleep 0.2; kill -USR1 $TRACELOGGER_PID; sleep 0.1; cat </dev/null; sleep 0.1;
		 kill -USR2 $TRACELOGGER_PID; sleep 0.1; head -c 0 </dev/null' \
		>/dev/null 2>"$W/d.err" || { fail "exit status $? ($(cat "$W/d.err"))"; return; }
	grep -q "waiting for START" "$W/d.err" || fail "no word about waiting for START: $(cat "$W/d.err")"
	readable "$W/d.kev" || return
	n=$(count "PROCCREATE_NAME.*name:cat\$" "$W/d.kev.txt")
	[ "$n" = 1 ] || fail "cat (between START and STOP) recorded $n times"
	n=$(count "PROCCREATE_NAME.*name:head\$" "$W/d.kev.txt")
	[ "$n" = 0 ] || fail "head (after STOP) recorded"
	tl=$(sed -n 's/.*SIGUSR1 to pid \([0-9]*\).*/\1/p' "$W/d.err")
	grep -q "PROCCREATE_NAME ppid:$tl " "$W/d.kev.txt" && fail "the shell's start (before START) was recorded"
	true
}

# Three busy processes for $1 seconds: more than two CPUs' worth, so they take turns (switch-ins) and
# the ticks of busy CPUs raise softirqs. The whole-system cases bring their own activity: an idle
# CI machine may have none to see, and inside a PID namespace every task outside it shows as pid 0.
busy() {
	for _ in 1 2 3; do timeout "$1" sh -c 'while :; do :; done' & done
}

case_system() { # privileged: the whole system (QNX's default), and interrupts with -a
	[ "$privileged" = 1 ] || { skip "the whole system needs privileges: $(cat "$W/probe2.out")"; return; }
	busy 1.5
	"$TL" -s 0.3 -f "$W/sys.kev" >/dev/null 2>"$W/sys.err" || { fail "exit status $? ($(cat "$W/sys.err"))"; return; }
	readable "$W/sys.kev" || return
	n=$(sed -n 's/.*THRUNNING *pid:\([0-9]*\) .*/\1/p' "$W/sys.kev.txt" | sort -u | wc -l)
	[ "$n" -ge 2 ] || fail "switch-ins of $n processes in the whole system"
	wait
	busy 1.5
	"$TL" -a -c INT -s 0.5 -f "$W/int.kev" >/dev/null 2>"$W/int.err" || { fail "-a -c INT: exit status $?"; return; }
	readable "$W/int.kev" || return
	n=$("$TP" -n -c INT "$W/int.kev" | grep -c '^t:' || true)
	[ "$n" -ge 2 ] || fail "$n interrupt events in 0.5 s of the whole system"
	wait
}

case_forks() { # a command that forks a thousand children: every one in the file, or counted lost
	"$TL" -v -f "$W/f.kev" -c THREAD,PROCESS -- sh -c 'i=0; while [ $i -lt 1000 ]; do /bin/true; i=$((i+1)); done' \
		>/dev/null 2>"$W/f.err" || { fail "exit status $? ($(cat "$W/f.err"))"; return; }
	readable "$W/f.kev" || return
	n=$(count "PROCCREATE_NAME.*name:true\$" "$W/f.kev.txt")
	lost=$(sed -n 's/.* \([0-9]*\) lost$/\1/p' "$W/f.err" | tail -n 1)
	[ "$n" = 1000 ] || [ "${lost:-0}" -gt 0 ] || fail "$n execs of true of 1000, and no loss counted"
	n=$(count "PROCDESTROY" "$W/f.kev.txt")
	[ "$n" -ge 1000 ] || [ "${lost:-0}" -gt 0 ] || fail "$n PROCDESTROY of 1001, and no loss counted"
}

case_losses() { # a logger that cannot keep up (stopped 1 s, 1 kernel buffer): losses counted, never silent
	"$TL" -k 1 -f "$W/lo.kev" -c THREAD,PROCESS -- taskset -c 0 "$PP" -n 30000 -e 0 >/dev/null 2>"$W/lo.err" &
	p=$!
	sleep 0.2
	kill -STOP $p
	sleep 1
	kill -CONT $p
	wait $p || { fail "exit status $? ($(cat "$W/lo.err"))"; return; }
	readable "$W/lo.kev" || return
	grep -q "kernel records were lost" "$W/lo.err" || fail "no word about lost records: $(cat "$W/lo.err")"
	n=$(count "DROPPED" "$W/lo.kev.txt")
	[ "$n" -ge 1 ] || fail "no CONTROL DROPPED event in the file"
}

case_samples() { # -g: cpu-clock samples with the user call chain, in ring mode too
	"$TL" -g --freq=1000 -f "$W/g.kev" -c THREAD,SYSTEM -- "$PP" --getppid 3000000 >/dev/null 2>"$W/g.err" ||
		{ fail "exit status $? ($(cat "$W/g.err"))"; return; }
	readable "$W/g.kev" || return
	n=$(count "PCTRACE" "$W/g.kev.txt")
	[ "$n" -ge 20 ] || fail "$n samples at 1000 Hz of a busy command"
	n=$(count "PCTRACE.* caller1:0x" "$W/g.kev.txt")
	[ "$n" -ge 10 ] || fail "$n samples with a call chain"
	"$TL" -r -b 2 -g -f "$W/gr.kev" -c THREAD,SYSTEM -- "$PP" --getppid 3000000 >/dev/null 2>"$W/gr.err" ||
		{ fail "-r -g: exit status $? ($(cat "$W/gr.err"))"; return; }
	readable "$W/gr.kev"
}

case_stray_usr() { # SIGUSR1/SIGUSR2 outside -d1: ignored, the run completes; TRACELOGGER_PID only with -d1
	"$TL" -f "$W/su.kev" -c THREAD -- sh -c 'echo "pid:${TRACELOGGER_PID:-unset}" >'"$W/su.env"'; sleep 1' \
		>/dev/null 2>"$W/su.err" &
	p=$!
	started "$W/su.env"
	kill -USR1 $p
	sleep 0.1
	kill -USR2 $p 2>/dev/null
	wait $p
	s=$?
	[ $s = 0 ] || { fail "exit status $s after SIGUSR1/SIGUSR2 without -d1 ($(cat "$W/su.err"))"; return; }
	[ -e "$W/su.kev.part" ] && fail "su.kev.part left behind"
	ls -d "$W"/.tracelogger.* >/dev/null 2>&1 && fail "a private directory left behind"
	readable "$W/su.kev" || return
	[ "$(cat "$W/su.env")" = "pid:unset" ] || fail "TRACELOGGER_PID set without -d1: $(cat "$W/su.env")"
}

case_stdout_cmd() { # -f - (or /dev/stdout): the command's output goes to standard error, not into the trace
	"$TL" -f - -c THREAD -- sh -c 'seq 2000; echo to-stderr >&2' >"$W/so.kev" 2>"$W/so.err" ||
		{ fail "exit status $? ($(tail -n 2 "$W/so.err"))"; return; }
	readable "$W/so.kev" || return
	head -c 16 "$W/so.kev" | grep -q "^TRACE_HEADER" || fail "the stream does not begin with the header"
	grep -qx 2000 "$W/so.err" && grep -qx to-stderr "$W/so.err" || fail "the command's output is not on standard error"
	"$TL" -f /dev/stdout -c THREAD -- echo hello 2>"$W/so2.err" | cat >"$W/so2.kev"
	readable "$W/so2.kev" || return
	grep -qx hello "$W/so2.err" || fail "-f /dev/stdout (a pipe): the command's output is not on standard error"
	# a file output leaves the command's standard output alone
	"$TL" -f "$W/so3.kev" -c THREAD -- echo hello >"$W/so3.out" 2>/dev/null
	grep -qx hello "$W/so3.out" || fail "-f FILE: the command's output is not on standard output"
}
case_epipe() { # -f - into a reader that goes away: a message, exit 1, no temporaries left
	d=$(mktemp -d "$W/ep.XXXXXX")
	(TMPDIR=$d "$TL" -f - -c THREAD -- taskset -c 0 "$PP" -n 100000 -e 0 2>"$W/ep.err"; echo $? >"$W/ep.rc") |
		head -c 100 >/dev/null
	s=$(cat "$W/ep.rc")
	[ "$s" = 1 ] || fail "exit status $s, not 1 ($(cat "$W/ep.err"))"
	grep -q "^tracelogger: standard output: .*Broken pipe" "$W/ep.err" || fail "no word about the broken pipe: $(cat "$W/ep.err")"
	left=$(find "$d" -mindepth 1 | head -n 3)
	[ -z "$left" ] || fail "temporaries left behind: $left"
	rm -rf "$d"
}

case_class_filter() { # the classes not selected are not written, even those the collector needs inside
	for sel in "-F 3" "-c THREAD" "-c THREAD,SYSTEM"; do
		# shellcheck disable=SC2086
		"$TL" $sel -f "$W/cf.kev" -- sh -c 'ls / >/dev/null' >/dev/null 2>"$W/cf.err" ||
			{ fail "$sel: exit status $? ($(cat "$W/cf.err"))"; continue; }
		readable "$W/cf.kev" || continue
		n=$(grep -c -E "PROCESS *:" "$W/cf.kev.txt" || true)
		[ "$n" = 0 ] || fail "$sel: $n PROCESS events written: $(grep -m 1 -E "PROCESS *:" "$W/cf.kev.txt")"
		n=$(count ":THRUNNING " "$W/cf.kev.txt")
		[ "$n" -ge 1 ] || fail "$sel: no THREAD events"
	done
	if [ $privileged = 1 ]; then
		"$TL" -f "$W/cf.kev" -c THREAD,KERCALL -- sh -c 'ls / >/dev/null' >/dev/null 2>"$W/cf.err" ||
			{ fail "THREAD,KERCALL: exit status $? ($(cat "$W/cf.err"))"; return; }
		readable "$W/cf.kev" || return
		n=$(grep -c -E "PROCESS *:" "$W/cf.kev.txt" || true)
		[ "$n" = 0 ] || fail "THREAD,KERCALL: $n PROCESS events written"
	fi
	"$TL" -f "$W/cf.kev" -c PROCESS -- sh -c 'ls / >/dev/null' >/dev/null 2>"$W/cf.err" ||
		{ fail "PROCESS: exit status $? ($(cat "$W/cf.err"))"; return; }
	readable "$W/cf.kev" || return
	grep -q "PROCTHREAD_NAME" "$W/cf.kev.txt" || fail "-c PROCESS: no PROCTHREAD_NAME"
	# THREAD events but the THRUNNING of each owner marker (right after its CONTROL BUFFER, on
	# its CPU: docs/tracelogger.md, "Owners")
	n=$(awk '/THREAD *:/ && !($2 == bcpu && $3 == "THREAD" && $4 == ":THRUNNING") { n++ }
		{ bcpu = /CONTROL: BUFFER/ ? $2 : "" } END { print n + 0 }' "$W/cf.kev.txt")
	[ "$n" = 0 ] || fail "-c PROCESS: $n THREAD events written"
}

case_sub_classes() { # privileged: -c KERCALLENTER only entries, KERCALLEXIT only exits, INTEXIT only exits
	[ $privileged = 1 ] || { skip "system calls and interrupts need privilege here"; return; }
	for sel in KERCALLENTER:KER_CALL:KER_EXIT KERCALLEXIT:KER_EXIT:KER_CALL; do
		c=${sel%%:*} r=${sel#*:}
		want=${r%%:*} not=${r#*:}
		"$TL" -f "$W/sc.kev" -c "$c" -- sh -c 'ls / >/dev/null' >/dev/null 2>"$W/sc.err" ||
			{ fail "$c: exit status $? ($(cat "$W/sc.err"))"; continue; }
		readable "$W/sc.kev" || continue
		n=$(count "$want:" "$W/sc.kev.txt")
		[ "$n" -ge 10 ] || fail "-c $c: only $n $want"
		n=$(count "$not:" "$W/sc.kev.txt")
		[ "$n" = 0 ] || fail "-c $c: $n $not written"
	done
	# traceprinter selects the same parts of a file of every system call, calls numbered
	# 128 and above included (openat is 257 on x86-64, 56 on aarch64)
	"$TL" -f "$W/sc2.kev" -c KERCALL -- sh -c 'ls / >/dev/null' >/dev/null 2>"$W/sc2.err" ||
		{ fail "KERCALL: exit status $? ($(cat "$W/sc2.err"))"; return; }
	readable "$W/sc2.kev" || return
	calls=$(count "KER_CALL:" "$W/sc2.kev.txt") exits=$(count "KER_EXIT:" "$W/sc2.kev.txt")
	[ "$(count "KER_CALL:openat/" "$W/sc2.kev.txt")" -ge 1 ] || fail "no openat in $W/sc2.kev"
	for sel in KERCALLENTER:$calls:0 KERCALLEXIT:0:$exits KERCALLINT:0:0 KERCALL:$calls:$exits; do
		c=${sel%%:*} r=${sel#*:}
		"$TP" -n -c "$c" "$W/sc2.kev" >"$W/sc2.$c.txt" 2>&1 || fail "traceprinter -c $c: $(head -n 3 "$W/sc2.$c.txt")"
		got="$(count "KER_CALL:" "$W/sc2.$c.txt"):$(count "KER_EXIT:" "$W/sc2.$c.txt")"
		[ "$got" = "$r" ] || fail "traceprinter -c $c: calls:exits $got, $r expected"
	done
	"$TP" -n -x KERCALLEXIT "$W/sc2.kev" >"$W/sc2.x.txt" 2>&1
	got="$(count "KER_CALL:" "$W/sc2.x.txt"):$(count "KER_EXIT:" "$W/sc2.x.txt")"
	[ "$got" = "$calls:0" ] || fail "traceprinter -x KERCALLEXIT: calls:exits $got, $calls:0 expected"
	for sel in INTEXIT:INT_EXIT:INT_ENTR INTENTER:INT_ENTR:INT_EXIT; do
		c=${sel%%:*} r=${sel#*:}
		want=${r%%:*} not=${r#*:}
		"$TL" -a -s 1 -f "$W/sc.kev" -c "$c" >/dev/null 2>"$W/sc.err" ||
			{ fail "$c: exit status $? ($(cat "$W/sc.err"))"; continue; }
		readable "$W/sc.kev" || continue
		n=$(count "$want:" "$W/sc.kev.txt")
		[ "$n" -ge 1 ] || { skip "-c $c: no interrupt in 1 s"; continue; }
		n=$(count "$not:" "$W/sc.kev.txt")
		[ "$n" = 0 ] || fail "-c $c: $n $not written"
	done
}

case_other_user() { # as nobody, -p of another user's process: the cause named, not perf_event_paranoid
	command -v setpriv >/dev/null 2>&1 || { skip "no setpriv"; return; }
	[ "$(id -u)" = 0 ] || { skip "not root: cannot switch to nobody"; return; }
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$TL" 2>/dev/null; then
		skip "nobody cannot run $TL (its directories are closed)"
		return
	fi
	d=$(mktemp -d /tmp/tl-other.XXXXXX)
	chmod 777 "$d"
	sleep 5 &
	victim=$!
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$TL" -f "$d/o.kev" -p $victim -s 0.2 \
		>/dev/null 2>"$W/ou.err"
	s=$?
	kill $victim 2>/dev/null
	wait $victim 2>/dev/null
	[ $s = 1 ] || fail "exit status $s, not 1 ($(cat "$W/ou.err"))"
	grep -q "pid $victim belongs to another user" "$W/ou.err" || fail "the cause not named: $(cat "$W/ou.err")"
	grep -q "paranoid" "$W/ou.err" && fail "blames perf_event_paranoid: $(cat "$W/ou.err")"
	[ -e "$d/o.kev" ] && fail "a file written"
	rm -rf "$d"
}

case_size_min() { # -S smaller than the header: a usage error naming the minimum, nothing written
	"$TL" -S 1 -f "$W/sm.kev" -c THREAD -- true >/dev/null 2>"$W/sm.err"
	s=$?
	[ $s = 2 ] || fail "-S 1: exit status $s, not 2 ($(cat "$W/sm.err"))"
	grep -q "minimum here is [0-9]* bytes" "$W/sm.err" || fail "-S 1: no minimum named: $(cat "$W/sm.err")"
	[ -e "$W/sm.kev" ] || [ -e "$W/sm.kev.part" ] && fail "-S 1: a file left"
	min=$(sed -n 's/.*minimum here is \([0-9]*\) bytes.*/\1/p' "$W/sm.err")
	[ -n "$min" ] || return
	"$TL" -S "$min" -f "$W/sm.kev" -c THREAD -- true >/dev/null 2>"$W/sm.err" ||
		{ fail "-S $min (the minimum named): exit status $? ($(cat "$W/sm.err"))"; return; }
	readable "$W/sm.kev" || return
	sz=$(wc -c <"$W/sm.kev")
	[ "$sz" -le "$min" ] || fail "-S $min: the file has $sz bytes"
}

# ---- sessions: the programs' own events drained from shared memory (docs/tracelogger.md) ----

# per (code, pid): the d0 numbers in file order must be 0 .. N-1, once each; prints what is wrong
numbered() { # FILE CODE N [PID...]: events USREVENT:EVENT:CODE of each pid numbered 0..N-1
	_file=$1 _code=$2 _n=$3
	shift 3
	awk -v code="$_code" -v n="$_n" -v pids="$*" '
		function strtonum(s,  i, v) { sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		BEGIN { np = split(pids, want, " ") }
		$0 ~ "USREVENT:EVENT:" code "," {
			d0 = $(NF-1); d1 = $NF; sub(/d0:/, "", d0); sub(/d1:/, "", d1)
			p = strtonum(d1); i = strtonum(d0)
			if (i != next_i[p] + 0) { print "pid " p ": event " i " after " next_i[p] - 1; bad = 1 }
			next_i[p] = i + 1; seen[p] = 1
		}
		END {
			for (k = 1; k <= np; k++) if (next_i[want[k]] + 0 != n) { print "pid " want[k] ": " next_i[want[k]] + 0 " of " n; bad = 1 }
			exit bad
		}' "$_file"
}
wait_region() { # waits (at most 10 s) until the session's region exists
	i=0
	while [ ! -e "$REGION" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

s3_why() { # what tells a loss from a drop in session3, on one line: DROPPED events, sanitizer reports, the logger's last words
	{
		[ ! -e "$W/s3.kev.txt" ] || awk '/CONTROL *:DROPPED/ { n++; for (i = 1; i <= NF; i++) if ($i ~ /^events:/) { v = $i; sub(/events:/, "", v); s += v } }
			END { print "CONTROL DROPPED: " n + 0 " events, " s + 0 " records" }' "$W/s3.kev.txt"
		grep -m 2 -h "WARNING: ThreadSanitizer\|ERROR: AddressSanitizer\|runtime error\|^SUMMARY:" "$W/s3.err"
		echo "stderr tail:"
		tail -n 4 "$W/s3.err"
	} | tr '\n' ';'
}
case_session3() { # three processes of two threads each record into one session: every event, in order, with its thread
	rm -f "$W/s3.kev.txt"
	# each writer's own exit status (a plain `wait` would hide one a sanitizer ended: exit 66)
	"$TL" -v -f "$W/s3.kev" -c PROCESS,USER -- sh -c "echo \$\$ >'$W/s3.sh'; $WR -n 3000 -t 2 & a=\$!
		$WR -n 3000 -t 2 & b=\$!; $WR -n 3000 -t 2 & c=\$!; s=0
		for p in \$a \$b \$c; do wait \$p || s=\$?; done; exit \$s" >/dev/null 2>"$W/s3.err" ||
		{ fail "exit status $? ($(s3_why))"; return; }
	readable "$W/s3.kev" || return
	t=$W/s3.kev.txt
	# the writers' pids, from their events (a sanitizer's helper process may carry the name too)
	pids=
	for h in $(sed -n 's/.*USREVENT:EVENT:10,.* d1:0x\([0-9a-f]*\)$/\1/p' "$t" | sort -u); do
		pids="$pids $((0x$h))"
	done
	[ "$(echo $pids | wc -w)" = 3 ] || { fail "writers seen: $pids"; return; }
	for p in $pids; do
		grep -q "PROCCREATE_NAME ppid:[0-9]* pid:$p name:tl_writer\$" "$t" || fail "no PROCCREATE_NAME of writer $p"
	done
	for code in 10 11; do
		numbered "$t" $code 3000 $pids >"$W/s3.awk" || fail "thread $code: $(head -n 3 "$W/s3.awk") ($(s3_why))"
	done
	# every event's thread is the one running on its CPU (the per-CPU rule), in its own process
	awk 'function strtonum(s,  i, v) { sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		/THRUNNING/ { split($0, a, "pid:"); split(a[2], b, " "); run[$2] = b[1] }
		/USREVENT:EVENT:1[01],/ { d1 = $NF; sub(/d1:/, "", d1); if (run[$2] != strtonum(d1)) { print "event of " strtonum(d1) " on " run[$2]; bad = 1; exit } }
		END { exit bad }' "$t" >"$W/s3.own" || fail "owners: $(head -n 3 "$W/s3.own")"
	grep -q "3 processes ended" "$W/s3.err" || fail "the session did not see the 3 writers end: $(tail -n 3 "$W/s3.err")"
	[ ! -e "$REGION" ] || fail "the session's region is left in /dev/shm"
}

case_daemon_program() { # -d1 without -c: a program configures (USER only), starts and stops the trace
	"$TL" -d1 -f "$W/dp.kev" -- sh -c "$WR -n 50; $WR -s -n 200 -t 2 -x stop; $WR -n 70" >/dev/null 2>"$W/dp.err" ||
		{ fail "exit status $? ($(cat "$W/dp.err"))"; return; }
	grep -q "waiting for START in session $TRACEKIT_SESSION" "$W/dp.err" || fail "no word about waiting: $(cat "$W/dp.err")"
	readable "$W/dp.kev" || return
	t=$W/dp.kev.txt
	n10=$(count "USREVENT:EVENT:10," "$t") n11=$(count "USREVENT:EVENT:11," "$t")
	[ "$n10" = 200 ] && [ "$n11" = 200 ] || fail "events 10/11: $n10/$n11, 200/200 expected (only between START and STOP)"
	pid=$(grep -m 1 "USREVENT:EVENT:10," "$t" | sed 's/.*d1:0x\([0-9a-f]*\)/\1/')
	numbered "$t" 10 200 "$((0x$pid))" >"$W/dp.awk" || fail "$(head -n 3 "$W/dp.awk")"
	# the program enabled USER only: none of the kernel's PROCESS events
	n=$(grep -c "PROCCREATE_NAME\|PROCDESTROY" "$t" || true)
	[ "$n" = 0 ] || fail "$n PROCESS events written though the program enabled USER only"
	# three processes record what a fourth configured and started, until it stops the trace
	"$TL" -d1 -f "$W/d4.kev" -- sh -c "$WR -w 600 -n 1000 & $WR -w 600 -n 1000 & $WR -w 600 -n 1000 &
		$WR -s -n 0 -z 2500 -x stop; wait" >/dev/null 2>"$W/d4.err" || { fail "four: exit status $? ($(cat "$W/d4.err"))"; return; }
	readable "$W/d4.kev" || return
	pids=
	for h in $(sed -n 's/.*USREVENT:EVENT:10,.* d1:0x\([0-9a-f]*\)$/\1/p' "$W/d4.kev.txt" | sort -u); do
		pids="$pids $((0x$h))"
	done
	[ "$(echo $pids | wc -w)" = 3 ] || { fail "four: writers seen: $pids"; return; }
	numbered "$W/d4.kev.txt" 10 1000 $pids >"$W/d4.awk" || fail "four: $(head -n 3 "$W/d4.awk")"
}

case_daemon_user_only() { # -d1 as nobody, no command: no kernel events (a one-line note), the programs' own
	command -v setpriv >/dev/null 2>&1 || { skip "no setpriv"; return; }
	[ "$(id -u)" = 0 ] || { skip "not root: cannot switch to nobody"; return; }
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$WR" 2>/dev/null; then
		skip "nobody cannot run $WR (its directories are closed)"
		return
	fi
	d=$(mktemp -d /tmp/tl-daemon.XXXXXX)
	chmod 777 "$d"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TL" -d1 -s 20 -f "$d/du.kev" >/dev/null 2>"$W/du.err" &
	tl=$!
	i=0
	while [ ! -e "/dev/shm/tracekit.65534.$TRACEKIT_SESSION" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	setpriv --reuid=65534 --regid=65534 --clear-groups "$WR" -s -n 300 -x stop >/dev/null 2>"$W/du2.err"
	wait $tl
	s=$?
	[ $s = 0 ] || { fail "exit status $s ($(cat "$W/du.err"))"; rm -rf "$d"; return; }
	n=$(grep -c "note: no kernel events" "$W/du.err" || true)
	[ "$n" = 1 ] || fail "no one-line note about the kernel's events: $(cat "$W/du.err")"
	grep -q "error" "$W/du.err" && fail "an error: $(cat "$W/du.err")"
	cp "$d/du.kev" "$W/du.kev"
	rm -rf "$d"
	readable "$W/du.kev" || return
	n=$(count "USREVENT:EVENT:10," "$W/du.kev.txt")
	[ "$n" = 300 ] || fail "$n of the program's 300 events"
}

case_sigkill() { # a writer SIGKILLed after recording: every event it committed is in the file, once
	"$TL" -v -f "$W/k.kev" -c PROCESS,USER -- sh -c "$WR -n 5000 -t 2 -x kill; exit 0" >/dev/null 2>"$W/k.err" ||
		{ fail "exit status $? ($(cat "$W/k.err"))"; return; }
	readable "$W/k.kev" || return
	t=$W/k.kev.txt
	pid=$(grep -m 1 "USREVENT:EVENT:10," "$t" | sed 's/.*d1:0x\([0-9a-f]*\)/\1/')
	pid=$((0x${pid:-0}))
	for code in 10 11; do
		numbered "$t" $code 5000 "$pid" >"$W/k.awk" || fail "thread $code: $(head -n 3 "$W/k.awk")"
	done
	n=$(count "PROCDESTROY.* pid:$pid\$" "$t")
	[ "$n" = 1 ] || fail "$n PROCDESTROY of the killed writer $pid (1 expected: the kernel's, no second)"
	grep -q "1 processes ended" "$W/k.err" || fail "the death was not noticed: $(tail -n 3 "$W/k.err")"
	# _exit: no exit handler runs either
	"$TL" -f "$W/k2.kev" -c PROCESS,USER -- "$WR" -n 3000 -x _exit >/dev/null 2>"$W/k2.err" ||
		{ fail "_exit: exit status $? ($(cat "$W/k2.err"))"; return; }
	readable "$W/k2.kev" || return
	n=$(count "USREVENT:EVENT:10," "$W/k2.kev.txt")
	[ "$n" = 3000 ] || fail "_exit: $n of 3000 events"
}

case_sigkill_unfollowed() { # a writer the kernel does not follow dies: the session's PROCDESTROY stands for the kernel's
	sleep 30 &
	target=$!
	"$TL" -f "$W/ku.kev" -c PROCESS,USER -p $target >/dev/null 2>"$W/ku.err" &
	tl=$!
	wait_region
	("$WR" -n 2500 -x kill; true) 2>/dev/null
	sleep 0.3
	kill $target
	wait $tl || { fail "exit status $? ($(cat "$W/ku.err"))"; wait $target 2>/dev/null; return; }
	wait $target 2>/dev/null
	readable "$W/ku.kev" || return
	t=$W/ku.kev.txt
	wpid=$(grep -m 1 "USREVENT:EVENT:10," "$t" | sed 's/.*d1:0x\([0-9a-f]*\)/\1/')
	[ -n "$wpid" ] || { fail "no event of the writer"; return; }
	wpid=$((0x$wpid))
	numbered "$t" 10 2500 "$wpid" >"$W/ku.awk" || fail "$(head -n 3 "$W/ku.awk")"
	n=$(count "PROCDESTROY.* pid:$wpid\$" "$t")
	[ "$n" = 1 ] || fail "$n PROCDESTROY of the killed writer $wpid (the session's: 1 expected)"
}

case_second_logger() { # a second logger on the same session: refused, naming the live one's pid
	"$TL" -f "$W/l1.kev" -c THREAD -- sleep 2 >/dev/null 2>"$W/l1.err" &
	first=$!
	wait_region
	"$TL" -f "$W/l2.kev" -c THREAD -- true >/dev/null 2>"$W/l2.err"
	s=$?
	wait $first || fail "the first logger: exit status $? ($(cat "$W/l1.err"))"
	[ $s = 1 ] || fail "the second logger: exit status $s, 1 expected"
	grep -q "live logger (pid $first)" "$W/l2.err" || fail "the live logger's pid not named: $(cat "$W/l2.err")"
	[ ! -e "$W/l2.kev" ] || fail "the second logger wrote a file"
	readable "$W/l1.kev"
	# another session name is another session
	"$TL" -f "$W/l1.kev" -c THREAD -- sleep 1 >/dev/null 2>"$W/l1.err" &
	first=$!
	wait_region
	"$TL" -N "$TRACEKIT_SESSION.b" -f "$W/l3.kev" -c THREAD -- true >/dev/null 2>"$W/l3.err" ||
		fail "-N another session: exit status $? ($(cat "$W/l3.err"))"
	wait $first
}

# a logger killed with SIGKILL while a writer sleeps after recording: leaves an orphaned session
orphan_setup() { # $1: the dead logger's output file
	rm -f "$1.part" "$1.programs.part"
	"$TL" -f "$1" -c PROCESS,USER -- "$WR" -n 1500 -t 2 -z 3000 >/dev/null 2>&1 &
	tl=$!
	wait_region
	sleep 0.5
	kill -KILL $tl
	wait $tl 2>/dev/null
	[ -e "$REGION" ] || { fail "no orphaned region after the logger's SIGKILL"; return 1; }
	return 0
}

case_orphan() { # the next tracelogger recovers the orphan into a readable file, says where, then records
	orphan_setup "$W/dead.kev" || return
	"$TL" -f "$W/next.kev" -c THREAD -- true >/dev/null 2>"$W/o.err" || { fail "exit status $? ($(cat "$W/o.err"))"; return; }
	f=$(sed -n 's/.*recovered .* into \(.*\)$/\1/p' "$W/o.err")
	[ -n "$f" ] && [ -f "$f" ] || { fail "no recovered file named: $(cat "$W/o.err")"; return; }
	[ "$(dirname "$f")" = "$W" ] || fail "not recovered beside the output: $f"
	readable "$f" || return
	# what the dead logger had drained is in its part file; the rest was in the region
	readable "$W/dead.kev.programs.part" || return
	cat "$W/dead.kev.programs.part.txt" "$f.txt" >"$W/o.both"
	pid=$(grep -m 1 "USREVENT:EVENT:10," "$W/o.both" | sed 's/.*d1:0x\([0-9a-f]*\)/\1/')
	for code in 10 11; do
		numbered "$W/o.both" $code 1500 "$((0x$pid))" >"$W/o.awk" || fail "thread $code: $(head -n 3 "$W/o.awk")"
	done
	n=$(count "USREVENT:EVENT:1[01]," "$f.txt")
	[ "$n" -gt 0 ] || fail "nothing recovered from the region"
	[ -e "$W/dead.kev.part" ] || fail "the dead logger's kernel events (dead.kev.part) are gone"
	readable "$W/next.kev"
	rm -f "$f" "$f.txt"
}

case_recover() { # --recover only recovers; then there is nothing left to recover; a live logger's session is refused
	orphan_setup "$W/dead2.kev" || return
	"$TL" --recover -f "$W/rec.kev" >/dev/null 2>"$W/r.err" || { fail "exit status $? ($(cat "$W/r.err"))"; return; }
	grep -q "recovered [0-9]* events of 1 processes .* into $W/rec.kev" "$W/r.err" || fail "message: $(cat "$W/r.err")"
	readable "$W/rec.kev" || return
	readable "$W/dead2.kev.programs.part" || return
	n=$(count "USREVENT:EVENT:1[01]," "$W/rec.kev.txt")
	n2=$(count "USREVENT:EVENT:1[01]," "$W/dead2.kev.programs.part.txt")
	[ "$n" -gt 0 ] && [ $((n + n2)) = 3000 ] || fail "$n events recovered + $n2 drained before the SIGKILL, 3000 expected"
	[ ! -e "$REGION" ] || fail "the region is left after --recover"
	"$TL" --recover -f "$W/rec2.kev" >/dev/null 2>"$W/r2.err"
	s=$?
	[ $s = 1 ] || fail "--recover of nothing: exit status $s, 1 expected"
	grep -q "no such session" "$W/r2.err" || fail "--recover of nothing: $(cat "$W/r2.err")"
	[ ! -e "$W/rec2.kev" ] || fail "--recover of nothing wrote a file"
	"$TL" -f "$W/live.kev" -c THREAD -- sleep 1 >/dev/null 2>&1 &
	live=$!
	wait_region
	"$TL" --recover -f "$W/rec3.kev" >/dev/null 2>"$W/r3.err"
	s=$?
	wait $live
	[ $s = 1 ] || fail "--recover of a live session: exit status $s, 1 expected"
	grep -q "live logger (pid $live)" "$W/r3.err" || fail "--recover of a live session: $(cat "$W/r3.err")"
}

case_foreign_session() { # a region of another user (or open to others) is refused, never recovered or attached to
	[ "$(id -u)" = 0 ] || { skip "not root: cannot make a region of another user"; return; }
	evil=/dev/shm/tracekit.0.$TRACEKIT_SESSION.evil
	head -c 65536 /dev/zero >"$evil"
	chown 65534 "$evil"
	chmod 600 "$evil"
	"$TL" -N "$TRACEKIT_SESSION.evil" -f "$W/ev.kev" -c THREAD -- true >/dev/null 2>"$W/ev.err"
	s=$?
	[ $s = 1 ] || fail "another user's region: exit status $s, 1 expected"
	grep -q "uid 65534" "$W/ev.err" || fail "the owner not named: $(cat "$W/ev.err")"
	[ ! -e "$W/ev.kev" ] || fail "a file written"
	# a program told to attach to it records nothing and does not crash
	TRACEKIT_SESSION=$TRACEKIT_SESSION.evil "$WR" -s -n 10 >/dev/null 2>"$W/ev2.err"
	s=$?
	[ $s -lt 128 ] || fail "a writer pointed at another user's region died: status $s"
	[ "$(stat -c %u "$evil")" = 65534 ] && [ "$(stat -c %s "$evil")" = 65536 ] || fail "the foreign region was changed"
	chown 0 "$evil"
	chmod 644 "$evil"
	"$TL" -N "$TRACEKIT_SESSION.evil" -f "$W/ev.kev" -c THREAD -- true >/dev/null 2>"$W/ev.err"
	s=$?
	[ $s = 1 ] || fail "a region open to others: exit status $s, 1 expected"
	grep -q "mode" "$W/ev.err" || fail "the mode not named: $(cat "$W/ev.err")"
	rm -f "$evil"
}

case_few_buffers() { # 4 buffers for 4 threads flat out: drops counted, in the file and on stderr, never blocked
	start=$(date +%s%N)
	"$TL" --session-buffers=4 -f "$W/fb.kev" -c PROCESS,USER -- "$WR" -n 50000 -t 4 >/dev/null 2>"$W/fb.err" ||
		{ fail "exit status $? ($(cat "$W/fb.err"))"; return; }
	elapsed=$((($(date +%s%N) - start) / 1000000))
	readable "$W/fb.kev" || return
	t=$W/fb.kev.txt
	n=$(count "USREVENT:EVENT:1[0-3]," "$t")
	lost=$(awk '/CONTROL *:DROPPED/ { for (i = 1; i <= NF; i++) if ($i ~ /^events:/) { v = $i; sub(/events:/, "", v); s += v } } END { print s + 0 }' "$t")
	[ "$lost" -gt 0 ] || { skip "no drop with 4 buffers (the logger kept up): $n events"; return; }
	grep -q "events of the traced programs were lost" "$W/fb.err" || fail "no word about the drops: $(cat "$W/fb.err")"
	# the drops count records of every class: the writer's own announcements (its process
	# and 4 threads, PROCTHREAD_NAME...) are dropped like any record when no buffer is free
	extra=$((n + lost - 200000))
	[ "$extra" -ge 0 ] || fail "$n events + $lost dropped < 200000 recorded: some lost silently"
	[ "$extra" -le 8 ] || fail "$n events + $lost dropped: $extra more drops than the writer's announcements explain"
	[ "$elapsed" -lt 20000 ] || fail "took $elapsed ms: writers blocked?"
}

case_own_logger() { # a program that starts its own logger (as the examples do) keeps it: its file, not the session
	"$TL" -f "$W/ol.kev" -c PROCESS,USER -- "$WR" -o "$W/ol_prog.kev" -s -n 100 -t 2 >/dev/null 2>"$W/ol.err" ||
		{ fail "exit status $? ($(cat "$W/ol.err"))"; return; }
	readable "$W/ol_prog.kev" || return
	n=$(count "USREVENT:EVENT:1[01]," "$W/ol_prog.kev.txt")
	[ "$n" = 200 ] || fail "the program's own file holds $n of its 200 events"
	readable "$W/ol.kev" || return
	n=$(count "USREVENT:EVENT:1[01]," "$W/ol.kev.txt")
	[ "$n" = 0 ] || fail "$n of the program's events in the session's file too"
}

case_foreign_default() { # another user's region at the implicit default session: a note, the kernel's events; -N default refused
	[ "$(id -u)" = 0 ] || { skip "not root: cannot make a region of another user"; return; }
	if ! command -v unshare >/dev/null 2>&1 || ! unshare --mount true 2>/dev/null; then
		skip "no private mount namespace (unshare --mount): /dev/shm/tracekit.0.default is shared"
		return
	fi
	# a /dev/shm of this case's own: a logger of a user on the real default session is not disturbed
	unshare --mount sh -c '
		mount -t tmpfs -o size=64m tmpfs /dev/shm || exit 77
		: >/dev/shm/tracekit.0.default && chown 65534 /dev/shm/tracekit.0.default &&
			chmod 600 /dev/shm/tracekit.0.default || exit 77
		unset TRACEKIT_SESSION
		"$1" -f "$2/fd.kev" -c THREAD,PROCESS -- sh -c "echo RAN" >"$2/fd.out" 2>"$2/fd.err"
		echo $? >"$2/fd.rc"
		"$1" -N default -f "$2/fd2.kev" -c THREAD -- echo RAN >"$2/fd2.out" 2>"$2/fd2.err"
		echo $? >"$2/fd2.rc"
		[ "$(stat -c %u:%s /dev/shm/tracekit.0.default)" = 65534:0 ] || echo changed >"$2/fd.changed"
	' sh "$TL" "$W"
	[ $? = 77 ] && { skip "cannot mount a tmpfs on /dev/shm in a private namespace"; return; }
	[ "$(cat "$W/fd.rc")" = 0 ] || fail "implicit default session of another user: exit status $(cat "$W/fd.rc"): $(cat "$W/fd.err")"
	grep -qx RAN "$W/fd.out" || fail "the command was not run"
	grep -q "^tracelogger: note: .*uid 65534.*recording without the programs' own events" "$W/fd.err" ||
		fail "no note naming the owner: $(cat "$W/fd.err")"
	readable "$W/fd.kev" && { grep -q "name:sh" "$W/fd.kev.txt" || fail "the kernel's events are missing"; }
	[ "$(cat "$W/fd2.rc")" = 1 ] || fail "-N default of another user: exit status $(cat "$W/fd2.rc"), 1 expected"
	grep -q "uid 65534" "$W/fd2.err" || fail "-N default: the owner not named: $(cat "$W/fd2.err")"
	[ -s "$W/fd2.out" ] && fail "-N default of another user: the command was run"
	[ ! -e "$W/fd.changed" ] || fail "the foreign region was changed"
}
case_not_region() { # a symbolic link or a damaged region at the session's name: refused, the way out said, nothing followed
	bad=$REGION.bad
	echo precious >"$W/target"
	ln -s "$W/target" "$bad"
	"$TL" -N "$TRACEKIT_SESSION.bad" -f "$W/nr.kev" -c THREAD -- true >/dev/null 2>"$W/nr.err"
	s=$?
	[ $s = 1 ] || fail "a symbolic link: exit status $s, 1 expected"
	grep -q "symbolic link" "$W/nr.err" || fail "what it is not said: $(cat "$W/nr.err")"
	grep -q "cannot be used while $bad exists" "$W/nr.err" || fail "the way out not said: $(cat "$W/nr.err")"
	[ -L "$bad" ] && [ "$(cat "$W/target")" = precious ] || fail "the link or its target was changed"
	rm -f "$bad"
	head -c 65536 /dev/zero >"$bad"
	chmod 600 "$bad"
	"$TL" -N "$TRACEKIT_SESSION.bad" -f "$W/nr.kev" -c THREAD -- true >/dev/null 2>"$W/nr.err"
	s=$?
	[ $s = 1 ] || fail "a damaged region: exit status $s, 1 expected"
	grep -q "byte 0 (magic)" "$W/nr.err" || fail "the field not named: $(cat "$W/nr.err")"
	grep -q "cannot be used while $bad exists" "$W/nr.err" || fail "the way out not said: $(cat "$W/nr.err")"
	[ "$(stat -c %s "$bad")" = 65536 ] || fail "the damaged region was changed"
	rm -f "$bad"
}

for case in $CASES; do
	ran=$((ran + 1))
	before=$failures
	t0=$(date +%s%N)
	"case_$case"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$failures" = "$before" ] && echo "ok   [$case] ($ms ms)"
done
echo "tracelogger_run: $ran cases, $failures failures, $skipped skipped"
[ "$failures" = 0 ] || exit 1
[ "$skipped" -lt "$ran" ] || exit 77
exit 0
