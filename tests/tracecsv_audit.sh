#!/bin/sh
# SPDX-License-Identifier: MIT
# tracecsv audit regressions (issue 10): outputs that are FIFOs, over-long records, times
# that do not fit the export's clock, bad --host values, diagnostics that name the file.
# usage: tracecsv_audit.sh TRACECSV INPUT_DIR
set -eu
tc=$1 in=$2
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
fail() { echo "tracecsv_audit: $*"; exit 1; }
export TZ=UTC SOURCE_DATE_EPOCH=1377651723

# 1. a FIFO output (rows not in start order: the import sorts in memory) gets the whole
#    trace once, and the FIFO is neither blocked on nor removed
cp "$in/phases-hostname-octagon53.csv" "$w/phases-hostname-h1.csv"
mkdir "$w/r"
for ext in kev tb5; do
	# the same output name (the .kev header records it)
	(cd "$w/r" && "$tc" import -q -o "../f.$ext" ../phases-hostname-h1.csv && mv "../f.$ext" "../ref.$ext")
	mkfifo "$w/f.$ext"
	cat "$w/f.$ext" >"$w/got.$ext" &
	cpid=$!
	rc=0
	(cd "$w/r" && timeout 30 "$tc" import -q -o "../f.$ext" ../phases-hostname-h1.csv) || rc=$?
	if [ $rc -ne 0 ]; then
		kill $cpid 2>/dev/null || true
		fail "import into a FIFO ($ext): exit $rc"
	fi
	wait $cpid
	[ -p "$w/f.$ext" ] || fail "the FIFO f.$ext was removed"
	cmp -s "$w/ref.$ext" "$w/got.$ext" || fail "the FIFO got another trace than a file ($ext)"
done
# 2. a record over 1 MiB is refused with FILE:LINE:COLUMN, with or without its newline
for nl in yes no; do
	f="$w/long$nl-hostname-h.csv"
	{ echo 'name,start_tsc.QPC,end_tsc'; head -c 1048600 /dev/zero | tr '\0' a; printf ',1,2'; [ $nl = no ] || echo; } >"$f"
	for ext in kev tb5; do
		rc=0
		"$tc" import -q -o "$w/long.$ext" "$f" 2>"$w/err" || rc=$?
		[ $rc -eq 1 ] || fail "long record ($nl newline, $ext): exit $rc"
		if [ $nl = yes ]; then want="$f:2:1048577: record longer than 1048576 bytes"
		else want="$f:2: record longer than 1048576 bytes (no line end)"; fi
		grep -qF "tracecsv: $want" "$w/err" ||
			fail "long record ($nl newline, $ext): $(cat "$w/err")"
		[ ! -e "$w/long.$ext" ] || fail "long.$ext left behind"
	done
done
# 3. export refuses a time that does not fit in the target clock (no silent wrap)
printf 'name,start_tsc.QPC,end_tsc\na,18446744073709551615,18446744073709551615\n' >"$w/q-hostname-h.csv"
printf 'name,start_tsc.CLOCK_MONOTONIC_RAW,end_tsc\na,18446744073709551615,18446744073709551615\n' >"$w/m-hostname-h.csv"
for ext in kev tb5; do
	"$tc" import -q -o "$w/q.$ext" "$w/q-hostname-h.csv"
	"$tc" import -q -o "$w/m.$ext" "$w/m-hostname-h.csv"
	# (a .tb5 records no boot date: its UTC is the ns line itself, which cannot wrap)
	cases="q:CLOCK_MONOTONIC_RAW q:UTC"; [ $ext = tb5 ] || cases="$cases m:UTC"
	for t in $cases; do
		f=${t%%:*} c=${t#*:}
		src=QPC; [ $f = q ] || src=CLOCK_MONOTONIC_RAW
		rm -rf "$w/x"; mkdir "$w/x"
		rc=0
		"$tc" export -q --clock $c -o "$w/x" "$w/$f.$ext" 2>"$w/err" || rc=$?
		[ $rc -eq 1 ] || fail "export of $f.$ext as $c: exit $rc, wrote $(cat "$w"/x/* 2>/dev/null)"
		grep -qF "timestamp 18446744073709551615 ($src) does not fit in $c" "$w/err" ||
			fail "export of $f.$ext as $c: $(cat "$w/err")"
		[ -z "$(ls "$w/x")" ] || fail "export of $f.$ext as $c left $(ls "$w/x")"
	done
done
# 4. --host that cannot be a host in the file names: a usage error, nothing written
for h in 'a/b' '' 'x-hostname-y'; do
	rm -rf "$w/x"; mkdir "$w/x"
	rc=0
	"$tc" export --host "$h" -o "$w/x" "$w/q.kev" 2>"$w/err" || rc=$?
	[ $rc -eq 2 ] || fail "--host '$h': exit $rc"
	grep -q "no '/'" "$w/err" || fail "--host '$h': $(cat "$w/err")"
	[ -z "$(ls "$w/x")" ] || fail "--host '$h' wrote $(ls "$w/x")"
done
# 5. failed writes and a missing output directory name the file and the cause
#    (a file size limit stands for a full disk: the write fails with EFBIG)
awk 'BEGIN { print "name,start_tsc.QPC,end_tsc"; for (i = 0; i < 200000; i++) printf "n%d,%d,%d\n", i % 50, i * 10, i * 10 + 5 }' >"$w/big-hostname-h.csv"
"$tc" import -q -o "$w/bigok.kev" "$w/big-hostname-h.csv"
rm -rf "$w/x"; mkdir "$w/x"
rc=0
(trap '' XFSZ; ulimit -f 64; "$tc" import -q -o "$w/big.kev" "$w/big-hostname-h.csv") 2>"$w/err" || rc=$?
[ $rc -eq 1 ] || fail "import past the size limit: exit $rc"
grep -q "^tracecsv: $w/big.kev: write failed at byte offset [0-9]*: File too large" "$w/err" ||
	fail "import past the size limit: $(cat "$w/err")"
[ ! -e "$w/big.kev" ] || fail "big.kev left behind"
rc=0
(trap '' XFSZ; ulimit -f 64; "$tc" export -q -o "$w/x" "$w/bigok.kev") 2>"$w/err" || rc=$?
[ $rc -eq 1 ] || fail "export past the size limit: exit $rc"
grep -q "^tracecsv: $w/x/bigok-intervals-hostname-h.csv: write failed: file too large" "$w/err" ||
	fail "export past the size limit: $(cat "$w/err")"
[ -z "$(ls "$w/x")" ] || fail "export past the size limit left $(ls "$w/x")"
rc=0
"$tc" export -q -o "$w/nonexistent" "$w/bigok.kev" 2>"$w/err" || rc=$?
[ $rc -eq 1 ] || fail "export -o a missing directory: exit $rc"
grep -qF "tracecsv: $w/nonexistent: cannot use the output directory: No such file or directory" "$w/err" ||
	fail "export -o a missing directory: $(cat "$w/err")"
# 6. a symlink output, even dangling, is replaced by a regular file; its target is left alone
ln -s "$w/target.kev" "$w/link.kev"
"$tc" import -q -o "$w/link.kev" "$w/q-hostname-h.csv"
[ -f "$w/link.kev" ] && [ ! -L "$w/link.kev" ] || fail "the symlink output was not replaced by a file"
[ ! -e "$w/target.kev" ] || fail "the symlink's target was written"
echo "tracecsv_audit: ok"
