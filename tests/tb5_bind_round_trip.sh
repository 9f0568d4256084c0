#!/bin/sh
# SPDX-License-Identifier: MIT
# Round trips of bound files: the bind result of a stream and a process/thread section that
# binding derived survive tbrw_reader then tbrw_writer (which binds again and checks the
# result). Makes two bound files from the chapter 6 example's .dat: one whose process/thread
# section is derived, one with a written section; runs tb5_round_trip.sh on each; checks
# that a bind line binding does not reproduce is refused.
# usage: tb5_bind_round_trip.sh PRINT_TB5 TBRW_READER TBRW_WRITER VTUNE.tb5 WORK_PREFIX ROUND_TRIP.sh
set -eu
pt=$1
rd=$2
wr=$3
in=$4
w=$5
rt=$6
rm -f "$w".*
"$rd" "$in" "$w.v.dat"
# An empty bind section after stream 0's data: tbrw_writer binds it, unchecked.
awk '{ print } /^section data$/ { d = 1 } d && /^end$/ { print "section bind"; print "end"; d = 0 }' \
	"$w.v.dat" >"$w.derived.dat"
# The same with a process/thread section of its own (the samples' pid is 4096, tids 0 and 7).
awk '/^stream 0$/ {
	print "section process_thread"
	print "process pid_reserved=0 pid_id=4096 pid_flags=1 pid_event_when=0x0 reserved1=0 reserved2=0 pid_path=\"C:\\\\sample\\\\sample.exe\" pid_name=\"sample.exe\""
	print "thread tid_associated_pid=4096 tid_id=7 tid_flags=1 tid_event_when=0x0 reserved1=0 reserved2=0 tid_name=\"worker\""
	print "end"
} { print }' "$w.derived.dat" >"$w.written.dat"
"$wr" "$w.derived.dat" "$w.derived.tb5"
"$wr" "$w.written.dat" "$w.written.tb5"
for f in derived written; do
	sh "$rt" "$pt" "$rd" "$wr" "$w.$f.tb5" "$w.rt_$f"
	# the copy is bound too: tbrw_reader and print_tb5 show its bind result
	n=$(grep -c '^bind ' "$w.rt_$f.b.dat")
	if [ "$n" != 6 ]; then
		echo "$f: the copy has $n bind lines, not 6"
		exit 1
	fi
	grep -q '^  bind section$' "$w.rt_$f.b.txt"
done
grep -q '^derived$' "$w.rt_derived.b.dat"
if grep -q '^derived$' "$w.rt_written.b.dat"; then
	echo "a written process/thread section came back as a derived one"
	exit 1
fi
# Record 0 binds to module 1 (helper.dll): a .dat that says module 0 is refused.
awk '!done && /^bind module_index=0x1 / { sub(/module_index=0x1 /, "module_index=0x0 "); done = 1 } { print }' \
	"$w.rt_derived.a.dat" >"$w.bad.dat"
if "$wr" "$w.bad.dat" "$w.bad.tb5" 2>"$w.bad.err"; then
	echo "a bind line that binding does not reproduce was accepted"
	exit 1
fi
grep -q 'record 0 binds to module 0x0, process 0x0, thread 0x0 here; TBRW_dobind gives 0x1' "$w.bad.err"
if [ -e "$w.bad.tb5" ]; then
	echo "a refused .dat left $w.bad.tb5 behind"
	exit 1
fi
echo "bound round trips: bind results and the derived process/thread section kept"
