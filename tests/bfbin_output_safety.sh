#!/bin/sh
# SPDX-License-Identifier: MIT
# bfbin2hdf5 / bfbin2sqlite3 build their database where nothing can redirect it, keep an
# existing output's mode, and an interrupt never leaves a partial file (issue 10 audit).
#  1. Symlinks planted at every name the tool or SQLite/HDF5 might open (OUT.part and its
#     journals, OUT's journals, OUT itself) are never written through: the victim stays
#     untouched and OUT ends up a regular file. Then the race of the audit: a loop
#     re-planting OUT.part -> victim while the tool runs again and again. The file is
#     built in a private directory (mkdtemp, 0700) beside OUT, so the race is impossible
#     by construction; the loop shows it on this machine.
#  2. An existing OUT of mode 0600 stays 0600; a new one gets 0644 minus the umask.
#  3. SIGINT at different moments of a long conversion (20,000 tables): the tool exits 0
#     (it had finished) or 1 (interrupted), never dies of the signal, and leaves neither
#     OUT (when interrupted) nor OUT.part nor its private directory.
# usage: bfbin_output_safety.sh TOOL BFBIN_SAMPLES WORKDIR
set -u
tool=$1 samples=$2 work=$3
name=$(basename "$tool")
case $name in
bfbin2hdf5) ext=h5 ;;
bfbin2sqlite3) ext=db ;;
*) echo "bfbin_output_safety.sh: unknown tool $name" >&2; exit 2 ;;
esac
rm -rf "$work"
mkdir -p "$work" || exit 2
cd "$work" || exit 2
fail=0
bad() {
	echo "--- $*"
	fail=1
}
run() { # run INPUT OUTPUT [OPTIONS...]
	in=$1 out=$2
	shift 2
	case $name in
	bfbin2hdf5) "$tool" "$@" "$in" "$out" ;;
	*) "$tool" "$@" -o "$out" "$in" ;;
	esac
}
leftovers() { # anything of OUT's but OUT itself
	ls -A | grep -E "^(\.)?$1\.part|^$1-(journal|wal|shm)$" | grep -v -x -F -e "$2"
}
"$samples" call_stack cs.byfl || exit 2

# ---- 1: planted symlinks ----
echo precious >victim
out=o.$ext
for n in "$out.part" "$out.part-journal" "$out.part-wal" "$out.part-shm" "$out-journal" "$out-wal" "$out-shm" "$out"; do
	ln -s "$work/victim" "$n"
done
for opts in "" "-l"; do
	[ "$opts" = -l ] && [ "$name" = bfbin2hdf5 ] && continue
	# shellcheck disable=SC2086
	run cs.byfl "$out" $opts 2>err.txt || bad "failed beside planted symlinks ($opts): $(cat err.txt)"
	[ "$(cat victim)" = precious ] || bad "wrote through a planted symlink ($opts)"
	[ -f "$out" ] && [ ! -L "$out" ] || bad "$out is not a regular file ($opts)"
	ls -A | grep -q "^\.$out\.part\." && bad "the private directory was left ($opts)"
	ln -sf "$work/victim" "$out.part"
done
rm -f "$out"*

# the audit's race: OUT.part re-planted as fast as possible while the tool runs
( while :; do ln -s "$work/victim" "$out.part" 2>/dev/null; done ) &
planter=$!
i=0
while [ $i -lt 100 ] && [ "$(cat victim)" = precious ]; do
	run cs.byfl "$out" 2>/dev/null
	i=$((i + 1))
done
kill $planter
wait $planter 2>/dev/null
[ "$(cat victim)" = precious ] || bad "the race wrote through OUT.part: victim now $(wc -c <victim) bytes"
[ -f "$out" ] && [ ! -L "$out" ] || bad "after the race $out is not a regular file"
rm -rf "$out"* ".$out.part."*

# ---- 2: modes ----
echo old >"$out"
chmod 600 "$out"
run cs.byfl "$out" || bad "conversion onto a 0600 file failed"
[ "$(stat -c %a "$out")" = 600 ] || bad "an existing 0600 output became $(stat -c %a "$out")"
rm -f "$out"
(umask 022 && run cs.byfl "$out") || bad "conversion to a new file failed"
[ "$(stat -c %a "$out")" = 644 ] || bad "a new output is $(stat -c %a "$out") under umask 022"
rm -f "$out"
(umask 077 && run cs.byfl "$out") || bad "conversion to a new file failed"
[ "$(stat -c %a "$out")" = 600 ] || bad "a new output is $(stat -c %a "$out") under umask 077"
rm -f "$out"

# ---- 3: SIGINT at different moments ----
"$samples" many_tables many.byfl || exit 2
out=m.$ext
for d in 0.05 0.2 0.4 0.6 0.8 1.0 1.2 1.5 2 3; do
	rm -f "$out"
	# shellcheck disable=SC2016
	case $name in
	bfbin2hdf5) timeout --preserve-status -s INT "$d" "$tool" many.byfl "$out" 2>err.txt ;;
	*) timeout --preserve-status -s INT "$d" "$tool" -o "$out" many.byfl 2>err.txt ;;
	esac
	st=$?
	case $st in
	0) [ -f "$out" ] || bad "exit 0 after SIGINT at $d s without $out" ;;
	1) [ -e "$out" ] && bad "exit 1 after SIGINT at $d s, $out exists: $(cat err.txt)" ;;
	# killed by the signal: only before main() installed the handler (a sanitizer's start on a
	# loaded machine can take longer than 0.05 s), so nothing may have been written
	130) [ "$d" = 0.05 ] || bad "SIGINT at $d s: killed by the signal"
	     [ -e "$out" ] && bad "killed by SIGINT at $d s, $out exists" ;;
	*) bad "SIGINT at $d s: exit status $st (killed by the signal?)" ;;
	esac
	left=$(leftovers "$out" "")
	[ -z "$left" ] || bad "SIGINT at $d s left: $left"
done
rm -rf "$work"
exit $fail
