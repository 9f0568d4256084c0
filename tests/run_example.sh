#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs an example program that records a trace, prints the trace with traceprinter and
# compares the text with a golden file after masking what differs from run to run.
# usage: run_example.sh TRACEPRINTER GOLDEN ordered|counted "PRINTER FLAGS" PROGRAM [ARGS...]
# The trace file's path is appended to the program's arguments. "ordered" compares line by
# line; "counted" compares how many times each masked line occurs (for threads whose
# events interleave differently every run). TK_UPDATE_GOLDEN=1 rewrites the golden file.
set -eu

tp=$1 golden=$2 mode=$3 flags=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$@" "$tmp/trace.kev" >"$tmp/stdout" 2>"$tmp/stderr"; then
	echo "--- $1 failed:"
	cat "$tmp/stderr"
	exit 1
fi
if [ -s "$tmp/stderr" ]; then
	echo "--- unexpected standard error from $1:"
	cat "$tmp/stderr"
	exit 1
fi
if [ -e "$tmp/trace.kev.part" ] || [ ! -s "$tmp/trace.kev" ]; then
	echo "--- $1 left no complete trace"
	exit 1
fi
# shellcheck disable=SC2086 # flags are words
"$tp" $flags "$tmp/trace.kev" >"$tmp/printed" 2>"$tmp/printer_err" || {
	echo "--- traceprinter failed:"
	cat "$tmp/printer_err"
	exit 1
}

# Masks: the machine and the run in the header; times, CPUs, process and thread IDs,
# code addresses (ASLR); CONTROL events (buffer and time bookkeeping depend on CPU
# migrations); THREADY at START (whether the logger thread is runnable at that instant);
# the executable mappings START writes (SYSTEM MMAP: the machine's libraries, the build's paths).
sed -E \
	-e '/SYSTEM  :MMAP.* path:/d' -e '/SYSTEM  :MMAP *$/,/^ +path:/d' \
	-e 's/^( *TRACE_(FILE_NAME|DATE|BOOT_DATE|CYCLES_PER_SEC|CPU_NUM|NODENAME|SYS_RELEASE|SYS_VERSION|MACHINE|SYSPAGE_LEN|TRACEKIT_PROGRAM|TRACEKIT_CLOCK_CYCLES|TRACEKIT_CLOCK_RAW_NS)::).*/\1 */' \
	-e '/CONTROL/d' -e '/THREADY/d' \
	-e 's/t:0x[0-9a-f]{8}/t:0x........./' -e 's/CPU:[0-9]+/CPU:../' \
	-e 's/(ppid|pid|tid):[0-9]+/\1:N/g' \
	-e 's/(func_p|thisfn|call_site|addr):(0x)?[0-9a-f]+/\1:0x..../g' \
	-e 's|name:/.*/|name:|' \
	"$tmp/printed" >"$tmp/masked"
if [ "$mode" = counted ]; then
	# which worker did what varies too: payload numbers are masked, lines counted
	sed -E -e 's/(d[0-9]+):0x[0-9a-f]+/\1:0x..../g' -e 's/[0-9]+ items/N items/' "$tmp/masked" |
		LC_ALL=C sort | uniq -c >"$tmp/actual"
else
	cp "$tmp/masked" "$tmp/actual"
fi

if [ "${TK_UPDATE_GOLDEN:-0}" = 1 ]; then
	mkdir -p "$(dirname "$golden")"
	cp "$tmp/actual" "$golden"
	exit 0
fi
if ! cmp -s "$tmp/actual" "$golden"; then
	echo "--- traceprinter output of $1 differs from $golden:"
	diff -u "$golden" "$tmp/actual" | head -n 80 || true
	exit 1
fi
