#!/bin/sh
# SPDX-License-Identifier: MIT
# The conventions every tool keeps (issue 10 items 14, 15, 20, 21, 24, 27, 28), checked as a
# user meets them: run the tools on the samples of the golden tests and look at what they
# leave behind.
# usage: tools_conventions.sh TOOLDIR KEVDIR BYFLDIR TB5DIR WORKDIR
#   TOOLDIR holds the built tools; KEVDIR, BYFLDIR, TB5DIR the samples (golden-work, and
#   golden-tb5 from gen_tb5_samples.sh); WORKDIR is emptied and used for everything this test writes.
set -u
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
bin=$(abs "$1") kev=$(abs "$2") byfl=$(abs "$3") tb5=$(abs "$4") work=$(abs "$5")
fail=0

rm -rf "$work"
mkdir -p "$work/tmp"
cd "$work" || exit 1
# the tools' own temporaries (copies of standard input, private directories) go here
TMPDIR=$work/tmp
export TMPDIR

bad() {
	echo "FAIL: $*"
	fail=1
}

# The devices every test run must leave alone (tests run as root).
check_dev() { # path major minor
	if [ ! -c "$1" ] || [ "$(stat -c '%t %T' "$1")" != "$2 $3" ]; then
		bad "$1 is no longer the character device $2,$3: $(ls -l "$1")"
	fi
}
check_dev /dev/null 1 3
check_dev /dev/full 1 7

tmp_empty() { # what
	if [ -n "$(ls -A "$work/tmp")" ]; then
		bad "$1: temporaries left in TMPDIR: $(ls -A "$work/tmp")"
		rm -rf "$work/tmp"/*
	fi
}

K=$kev/usr_event_simple.kev
B=$byfl/call_stack.byfl
T=$tb5/vtune.tb5
D=$work/vtune.dat
"$bin/tbrw_reader" "$T" "$D" || bad "tbrw_reader $T failed"

# ---- item 20: a symlink planted at OUTPUT.part or at OUTPUT is never followed ----
echo precious >victim
for tool in traceprinter print_tb5 tbrw_reader bfbin2csv bfbin2xmlss; do
	rm -f out out.part
	ln -s "$work/victim" out.part
	case $tool in
	traceprinter) "$bin/traceprinter" -f "$K" -o out ;;
	print_tb5) "$bin/print_tb5" -o out "$T" ;;
	tbrw_reader) "$bin/tbrw_reader" "$T" out ;;
	bfbin2csv) "$bin/bfbin2csv" -o out "$B" ;;
	bfbin2xmlss) "$bin/bfbin2xmlss" "$B" out ;;
	esac
	[ $? -eq 0 ] || bad "$tool: failed beside a symlink at out.part"
	[ "$(cat victim)" = precious ] || bad "$tool: wrote through a symlink at out.part"
	[ -f out ] && [ ! -L out ] || bad "$tool: out is not a regular file"
	[ -L out.part ] || bad "$tool: the planted out.part was replaced"
	rm -f out out.part out.*.part
	ln -s "$work/victim" out
	case $tool in
	traceprinter) "$bin/traceprinter" -f "$K" -o out ;;
	print_tb5) "$bin/print_tb5" -o out "$T" ;;
	tbrw_reader) "$bin/tbrw_reader" "$T" out ;;
	bfbin2csv) "$bin/bfbin2csv" -o out "$B" ;;
	bfbin2xmlss) "$bin/bfbin2xmlss" "$B" out ;;
	esac
	[ "$(cat victim)" = precious ] || bad "$tool: wrote through a symlink at out"
	[ -f out ] && [ ! -L out ] || bad "$tool: the symlink at out was not replaced by the output"
	rm -f out
done
# re-writing keeps the mode of the file replaced (item 32)
"$bin/traceprinter" -f "$K" -o private.txt && chmod 600 private.txt &&
	"$bin/traceprinter" -f "$K" -o private.txt
[ "$(stat -c %a private.txt)" = 600 ] || bad "a 0600 output became $(stat -c %a private.txt)"
# tb5_recover builds its output in a private directory beside it: nothing of it stays
"$bin/tb5_recover" -q "$T" private.tb5 && chmod 600 private.tb5 && "$bin/tb5_recover" -q "$T" private.tb5 ||
	bad "tb5_recover failed"
[ "$(stat -c %a private.tb5)" = 600 ] || bad "tb5_recover: a 0600 output became $(stat -c %a private.tb5)"
ls -A | grep -q '^\.tb5_recover\.' && bad "tb5_recover left its private directory"

# ---- item 21: a device node made with mknod, a FIFO: written in place, never replaced ----
if mknod node c 1 3 2>/dev/null; then
	"$bin/traceprinter" -f "$K" -o node || bad "traceprinter -o node failed"
	"$bin/print_tb5" -o node "$T" || bad "print_tb5 -o node failed"
	"$bin/tbrw_reader" "$T" node || bad "tbrw_reader to node failed"
	"$bin/tbrw_writer" "$D" node || bad "tbrw_writer to node failed"
	"$bin/tb5_recover" -q "$T" node || bad "tb5_recover to node failed"
	"$bin/bfbin2csv" -o node "$B" || bad "bfbin2csv -o node failed"
	"$bin/bfbin2cgrind" "$B" node || bad "bfbin2cgrind to node failed"
	check_dev node 1 3
	ls node.* 2>/dev/null && bad "temporaries left beside the device node"
	tmp_empty "device output"
else
	echo "mknod not permitted: the device node part is skipped"
fi
mkfifo fifo
for tool in traceprinter tbrw_writer tb5_recover; do
	timeout 30 cat fifo >fifo.out &
	reader=$!
	case $tool in
	traceprinter) "$bin/traceprinter" -f "$K" -o fifo ;;
	tbrw_writer) "$bin/tbrw_writer" "$D" fifo ;;
	tb5_recover) "$bin/tb5_recover" -q "$T" fifo ;;
	esac
	[ $? -eq 0 ] || bad "$tool: writing to a FIFO failed"
	wait $reader
	[ -p fifo ] || bad "$tool: the FIFO was replaced"
	[ -s fifo.out ] || bad "$tool: nothing came through the FIFO"
	case $tool in
	tbrw_writer | tb5_recover) "$bin/print_tb5" -D fifo.out >/dev/null || bad "$tool: the FIFO got no valid .tb5" ;;
	esac
done
tmp_empty "FIFO output"

# ---- item 24: output == input is refused and the input kept (same inode, any name) ----
cp "$K" in.kev
cp "$T" in.tb5
cp "$D" in.dat
ln in.kev hard.kev
sum_before=$(cat in.kev in.tb5 in.dat | md5sum)
"$bin/traceprinter" -f in.kev -o ./in.kev 2>err && bad "traceprinter: output == input accepted"
grep -q "is the input file" err || bad "traceprinter: no message for output == input: $(cat err)"
"$bin/traceprinter" -f in.kev -o hard.kev 2>/dev/null && bad "traceprinter: output == a hard link of the input accepted"
"$bin/print_tb5" -o in.tb5 in.tb5 2>/dev/null && bad "print_tb5: output == input accepted"
"$bin/tbrw_reader" in.tb5 "$work/in.tb5" 2>/dev/null && bad "tbrw_reader: output == input accepted"
"$bin/tbrw_writer" in.dat ./in.dat 2>/dev/null && bad "tbrw_writer: output == input accepted"
"$bin/tb5_recover" in.tb5 in.tb5 2>/dev/null && bad "tb5_recover: output == input accepted"
[ "$(cat in.kev in.tb5 in.dat | md5sum)" = "$sum_before" ] || bad "an input was changed by writing to it"

# ---- item 27: NUL bytes in a .dat file, and endless input ----
printf 'tbrw-dat 1\n\000section host\nend\n' >nul.dat
"$bin/tbrw_writer" nul.dat nul.tb5 2>err && bad "tbrw_writer accepted a line starting with NUL"
grep -q "nul.dat: line 2: NUL byte" err || bad "tbrw_writer: no line number for the NUL byte: $(cat err)"
[ -e nul.tb5 ] && bad "tbrw_writer left nul.tb5"
timeout 20 "$bin/tbrw_writer" /dev/zero zero.tb5 2>/dev/null
[ $? -eq 1 ] || bad "tbrw_writer on /dev/zero did not fail at once"
# a line without end: the parse stops at the cap (32 MiB) with the line's number
(printf 'tbrw-dat 1\n'; head -c 40000000 /dev/zero | tr '\000' a) | timeout 60 "$bin/tbrw_writer" - long.tb5 2>err
[ $? -eq 1 ] || bad "tbrw_writer accepted an endless line"
grep -q "standard input: line 2: line longer than" err || bad "tbrw_writer on an endless line: $(cat err)"

# ---- item 28: no temporaries after an interruption (SIGHUP: a closed terminal, audit19
# item 15), and no unbounded copy of stdin ----
sigs="INT TERM HUP"
if [ $((0x$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status) & 1)) = 1 ]; then
	echo "note: SIGHUP is ignored in this test's environment (nohup): not sent"
	sigs="INT TERM"
fi
for s in $sigs; do
	rm -f in.fifo
	mkfifo in.fifo
	(head -c 2000 "$K"; exec sleep 30) >in.fifo &
	writer=$!
	"$bin/traceprinter" -f in.fifo -o tp.txt >/dev/null 2>&1 &
	tool=$!
	i=0
	while [ ! -e tp.txt.part ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	kill -s $s $tool
	wait $tool
	kill $writer 2>/dev/null
	wait $writer 2>/dev/null
	ls tp.txt* 2>/dev/null && bad "traceprinter -o after SIG$s left its output behind"

	rm -f in.fifo
	mkfifo in.fifo
	(head -c 2000 "$K"; exec sleep 30) >in.fifo &
	writer=$!
	"$bin/tracekit" convert in.fifo tc.json >/dev/null 2>&1 &
	tool=$!
	i=0
	while [ ! -e tc.json.part ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	kill -s $s $tool
	wait $tool
	kill $writer 2>/dev/null
	wait $writer 2>/dev/null
	ls tc.json* 2>/dev/null && bad "tracekit convert after SIG$s left its output behind"
	tmp_empty "tracekit convert after SIG$s"

	rm -f in.fifo
	mkfifo in.fifo
	(head -n 3 "$D"; exec sleep 30) >in.fifo &
	writer=$!
	"$bin/tbrw_writer" in.fifo tw.tb5 2>err &
	tool=$!
	i=0
	while [ ! -e tw.tb5.part ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	kill -s $s $tool
	wait $tool
	kill $writer 2>/dev/null
	wait $writer 2>/dev/null
	ls tw.tb5* 2>/dev/null && bad "tbrw_writer after SIG$s left its output behind"
	grep -q interrupted err || bad "tbrw_writer after SIG$s: $(cat err)"

	for tool in print_tb5 tbrw_reader; do
		rm -f in.fifo
		mkfifo in.fifo
		(head -c 4096 "$T"; exec sleep 30) >in.fifo &
		writer=$!
		case $tool in
		print_tb5) "$bin/print_tb5" - <in.fifo >/dev/null 2>&1 & ;;
		tbrw_reader) "$bin/tbrw_reader" - rd.dat <in.fifo 2>/dev/null & ;;
		esac
		pid=$!
		i=0
		while [ -z "$(ls -A "$work/tmp")" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
		kill -s $s $pid
		wait $pid
		kill $writer 2>/dev/null
		wait $writer 2>/dev/null
		tmp_empty "$tool - after SIG$s"
	done
done
for tool in print_tb5 tbrw_reader tb5_recover; do
	case $tool in
	print_tb5) timeout 20 "$bin/print_tb5" - </dev/zero >/dev/null 2>err ;;
	tbrw_reader) timeout 20 "$bin/tbrw_reader" - zero.dat </dev/zero 2>err ;;
	tb5_recover) timeout 20 "$bin/tb5_recover" - zero.tb5 </dev/zero 2>err ;;
	esac
	[ $? -eq 1 ] || bad "$tool - </dev/zero did not fail at once"
	grep -q "standard input: not a tb5 file" err || bad "$tool - </dev/zero: $(cat err)"
	tmp_empty "$tool - </dev/zero"
done

# ---- item 14: "-" is standard input and standard output in every tool ----
"$bin/traceprinter" -f "$K" >a.txt
"$bin/traceprinter" -f - -o - <"$K" >b.txt
cmp -s a.txt b.txt || bad "traceprinter -f - -o - differs"
"$bin/print_tb5" "$T" >a.txt
cat "$T" | "$bin/print_tb5" - >b.txt
cmp -s a.txt b.txt || bad "print_tb5 - (a pipe) differs"
"$bin/tbrw_reader" "$T" a.dat
cat "$T" | "$bin/tbrw_reader" - - >b.dat
cmp -s a.dat b.dat || bad "tbrw_reader - - differs"
cat a.dat | "$bin/tbrw_writer" - - >w.tb5 || bad "tbrw_writer - - failed"
"$bin/tbrw_reader" w.tb5 c.dat && cmp -s a.dat c.dat || bad "tbrw_writer - - wrote another file"
cat "$T" | "$bin/tb5_recover" -q - - >r.tb5 || bad "tb5_recover - - failed"
"$bin/tbrw_reader" r.tb5 d.dat && cmp -s a.dat d.dat || bad "tb5_recover - - wrote another file"
for tool in bfbin2csv bfbin2cgrind bfbin2xmlss; do
	"$bin/$tool" "$B" >a.out
	cat "$B" | "$bin/$tool" - >b.out || bad "$tool - failed"
	# bfbin2cgrind's first line names its input file: /dev/stdin
	[ $tool = bfbin2cgrind ] && sed -i 1d a.out b.out
	cmp -s a.out b.out || bad "$tool - (a pipe) differs"
done
"$bin/bfbin2csv" -o - - <"$B" >b.out && "$bin/bfbin2csv" "$B" >a.out && cmp -s a.out b.out || bad "bfbin2csv -o - - differs"
"$bin/bfbin2xmlss" - - <"$B" >b.out && "$bin/bfbin2xmlss" "$B" >a.out && cmp -s a.out b.out || bad "bfbin2xmlss - - differs"
"$bin/bfbin2hdf5" "$B" a.h5
cat "$B" | "$bin/bfbin2hdf5" - - >b.h5 || bad "bfbin2hdf5 - - failed"
cmp -s a.h5 b.h5 || bad "bfbin2hdf5 - - wrote another file"
cat "$B" | "$bin/bfbin2sqlite3" -o - - >b.db || bad "bfbin2sqlite3 -o - - failed"
[ "$(head -c 15 b.db)" = "SQLite format 3" ] || bad "bfbin2sqlite3 -o - - wrote no database"
"$bin/bfbin2hdf5" - <"$B" 2>err
[ $? -eq 2 ] || bad "bfbin2hdf5 - without an output name: $(cat err)"
tmp_empty "standard input and output"

# a named pipe as the .tb5 input: read like standard input; without a writer: no hang (item 32)
rm -f in.fifo
mkfifo in.fifo
"$bin/print_tb5" "$T" >a.txt
cat "$T" >in.fifo &
timeout 20 "$bin/print_tb5" in.fifo >b.txt || bad "print_tb5 on a named pipe failed"
wait
cmp -s a.txt b.txt || bad "print_tb5 on a named pipe differs"
for tool in print_tb5 tbrw_reader; do
	case $tool in
	print_tb5) timeout 20 "$bin/print_tb5" in.fifo >/dev/null 2>&1 ;;
	tbrw_reader) timeout 20 "$bin/tbrw_reader" in.fifo fifo.dat 2>/dev/null ;;
	esac
	[ $? -eq 1 ] || bad "$tool on a named pipe without a writer did not fail at once"
done
tmp_empty "named pipes"

# ---- item 15: a failed conversion shows no half document ----
for tool in bfbin2xmlss bfbin2cgrind; do
	"$bin/$tool" "$byfl/truncated.byfl" >half.out 2>err
	[ $? -eq 1 ] || bad "$tool on a truncated file did not fail"
	[ -s half.out ] && bad "$tool wrote part of a document to standard output"
	[ -s err ] || bad "$tool: no message"
done

# ---- audit19 items 7, 14: temporaries go to TMPDIR, and a TMPDIR that cannot hold them is named ----
# (glibc's tmpfile() ignores TMPDIR: standard output's stand-in was made in /tmp)
for tool in bfbin2cgrind bfbin2xmlss; do
	TMPDIR=$work/no-such-tmp "$bin/$tool" "$B" >out.txt 2>err
	s=$?
	[ $s -eq 1 ] || bad "$tool to standard output with a missing TMPDIR: exit status $s, 1 expected"
	grep -q "$work/no-such-tmp (TMPDIR)" err || bad "$tool: the missing TMPDIR not named: $(cat err)"
	[ -s out.txt ] && bad "$tool wrote to standard output without its temporary"
done
TMPDIR=$work/no-such-tmp "$bin/tracekit" convert "$K" t.db 2>err
s=$?
[ $s -eq 1 ] || bad "tracekit convert to SQLite with a missing TMPDIR: exit status $s, 1 expected"
grep -q "cannot create a temporary directory in $work/no-such-tmp (TMPDIR): No such file or directory" err ||
	bad "tracekit convert: the missing TMPDIR not named: $(cat err)"
[ -e t.db ] && bad "tracekit convert left t.db without a database"
tmp_empty "TMPDIR"

check_dev /dev/null 1 3
check_dev /dev/full 1 7
exit $fail
