#!/bin/sh
# SPDX-License-Identifier: MIT
# A recorded two-thread program (examples/pingpong under tracelogger, pinned to CPU 0)
# exported to Perfetto: the ftrace sched_switch records name both threads as they come in and
# as they leave, with a prev_state for each leave (S when it blocked on its pipe, R when
# preempted), and carry the threads' names; every record checked by protoc against the schema
# written from Perfetto's field numbers. Exits 77 when this machine cannot record.
# usage: export_perfetto_sched.sh TRACELOGGER TRACEPRINTER PINGPONG TEST_EXPORT PROTOC PROTO_DIR
set -u
# tracelogger in a session of this test's own ("default" is for users; a parallel test may hold it)
TRACEKIT_SESSION=ctest.export_perfetto_sched.$$
export TRACEKIT_SESSION
TL=$1 TP=$2 PP=$3 EXPORTER=$4 PROTOC=$5 DIR=$6
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

if ! "$TL" -f "$W/probe.kev" -c THREAD -- true >"$W/probe.out" 2>&1; then
	echo "SKIP: tracelogger cannot record on this machine: $(cat "$W/probe.out")"
	exit 77
fi
"$TL" -f "$W/pp.kev" -c THREAD,PROCESS -- taskset -c 0 "$PP" -n 500 -e 0 >"$W/pp.out" 2>&1 ||
	{ echo "FAIL: recording: $(cat "$W/pp.out")"; exit 1; }
"$TP" -n -s -t ns "$W/pp.kev" >"$W/pp.txt" || { echo "FAIL: traceprinter cannot read the recording"; exit 1; }
ping=$(sed -n 's/.*PROCTHREAD_NAME pid:\([0-9]*\) tid:\([0-9]*\) name:ping$/\2/p' "$W/pp.txt" | head -n 1)
pong=$(sed -n 's/.*PROCTHREAD_NAME pid:\([0-9]*\) tid:\([0-9]*\) name:pong$/\2/p' "$W/pp.txt" | head -n 1)
[ -n "$ping" ] && [ -n "$pong" ] || { echo "FAIL: no PROCTHREAD_NAME for ping and pong"; exit 1; }

"$EXPORTER" --perfetto "$W/pp.kev" >"$W/pp.pftrace" || { echo "FAIL: the export failed"; exit 1; }
"$PROTOC" --decode=perfetto.protos.Trace -I "$DIR" "$DIR/perfetto_trace.proto" <"$W/pp.pftrace" >"$W/pp.pf.txt" ||
	{ echo "FAIL: protoc cannot decode the export"; exit 1; }

# one line per sched_switch: prev_comm prev_pid prev_state next_comm next_pid (the cpu before)
awk '
/^ *cpu: / { cpu = $2 }
/sched_switch \{/ { in_sw = 1; pc = pp = ps = nc = np = ""; next }
in_sw && /prev_comm:/ { pc = $2 }
in_sw && /prev_pid:/ { pp = $2 }
in_sw && /prev_state:/ { ps = $2 }
in_sw && /next_comm:/ { nc = $2 }
in_sw && /next_pid:/ { np = $2 }
in_sw && /^ *\}/ { print cpu, pc, pp, ps, nc, np; in_sw = 0 }
' "$W/pp.pf.txt" >"$W/switches.txt"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
n() { awk "$1" "$W/switches.txt" | wc -l; }

total=$(wc -l <"$W/switches.txt")
in_ping=$(n "\$6 == $ping")
in_pong=$(n "\$6 == $pong")
out_ping_s=$(n "\$3 == $ping && \$4 == 1")
out_pong_s=$(n "\$3 == $pong && \$4 == 1")
out_r=$(n "(\$3 == $ping || \$3 == $pong) && \$4 == 0")
named=$(n "(\$6 == $ping && \$5 == \"\\\"ping\\\"\") || (\$6 == $pong && \$5 == \"\\\"pong\\\"\")")
echo "sched_switch records: $total; in: ping $in_ping, pong $in_pong; out blocked (S): ping $out_ping_s," \
	"pong $out_pong_s; out preempted (R): $out_r; named: $named"
# each thread blocks on its pipe 500 times: it comes in and leaves asleep about as often
[ "$in_ping" -ge 500 ] || fail "ping came in $in_ping times (at least 500 expected)"
[ "$in_pong" -ge 500 ] || fail "pong came in $in_pong times (at least 500 expected)"
[ "$out_ping_s" -ge 50 ] && [ "$out_pong_s" -ge 50 ] && [ $((out_ping_s + out_pong_s)) -ge 500 ] ||
	fail "blocked switch-outs: ping $out_ping_s, pong $out_pong_s"
[ $((out_ping_s + out_pong_s + out_r)) -ge $((in_ping + in_pong - 10)) ] ||
	fail "ping and pong came in $((in_ping + in_pong)) times but left $((out_ping_s + out_pong_s + out_r)) times"
# A thread is named from its PROCTHREAD_NAME on; it may come in a few times before (as
# taskset before its exec, as the process before its prctl), how many depending on the
# machine's load. So the check is that on each CPU (whose records are in time order; the
# file holds each CPU's buffers in turn) every switch-in after the thread's first named one
# carries the name, and that most do.
unnamed_late=$(awk -v ping="$ping" -v pong="$pong" '
$6 == ping { if ($5 == "\"ping\"") seen[$1, "ping"] = 1; else if (seen[$1, "ping"]) late++ }
$6 == pong { if ($5 == "\"pong\"") seen[$1, "pong"] = 1; else if (seen[$1, "pong"]) late++ }
END { print late + 0 }' "$W/switches.txt")
[ "$unnamed_late" -eq 0 ] || fail "$unnamed_late switch-ins after the thread was named do not carry its name"
[ "$named" -ge $(((in_ping + in_pong) * 9 / 10)) ] || fail "only $named switch-ins carry the thread's name"
# the thread descriptors put both threads in one process, with the same tids
pid=$(sed -n "s/.*PROCTHREAD_NAME pid:\([0-9]*\) tid:$pong name:pong\$/\1/p" "$W/pp.txt" | head -n 1)
for tid in "$ping" "$pong"; do
	grep -B1 "tid: $tid\$" "$W/pp.pf.txt" | grep -q "pid: $pid\$" || fail "no thread descriptor of $pid/$tid"
done
# pinned to CPU 0 (taskset, the same thread before its exec, may run elsewhere): once named,
# every switch of the two is there
others=$(n "(\$2 == \"\\\"ping\\\"\" || \$5 == \"\\\"ping\\\"\" || \$2 == \"\\\"pong\\\"\" || \$5 == \"\\\"pong\\\"\") && \$1 != 0")
[ "$others" -eq 0 ] || fail "$others switches of ping or pong on other CPUs than 0"
[ $failures -eq 0 ] || exit 1
echo "ok"
