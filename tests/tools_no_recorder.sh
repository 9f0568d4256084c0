#!/bin/sh
# SPDX-License-Identifier: MIT
# The tools link the readers, never the recorder: with TRACEKIT_LOG set, no tool starts a
# logger (no trace file, no .part appears), and none of them needs libtracekit.so.
# usage: tools_no_recorder.sh TOOL...
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log=$tmp/log
mkdir "$log"
status=0
for tool in "$@"; do
	name=$(basename "$tool")
	if readelf -d "$tool" | grep -q '(NEEDED).*\[libtracekit\.so'; then
		echo "tools_no_recorder: $name links the recorder library libtracekit.so" >&2
		status=1
	fi
	# --help, and a run on a missing input: the constructor would have run in either.
	missing="$tmp/no-such-input"
	# (tracelogger's input is a command: it traces the missing one into a file of ours, in a
	# session of this test's own: "default" is for users, a parallel test may hold it.)
	[ "$name" = tracelogger ] && missing="-N ctest.no_recorder.$$ -f $tmp/tracelogger-out.kev -- $tmp/no-such-input"
	for args in --help "$missing"; do
		TRACEKIT_LOG="$log/$name.kev" "$tool" $args >/dev/null 2>&1 </dev/null || true
	done
	TRACEKIT_LOG="$log/$name-%p.kev" "$tool" --help >/dev/null 2>&1 </dev/null || true
	left=$(ls "$log")
	if [ -n "$left" ]; then
		echo "tools_no_recorder: $name with TRACEKIT_LOG set wrote: $left" >&2
		rm -f "$log"/*
		status=1
	fi
done
[ $status = 0 ] && echo "$# tools: no recorder, no trace written under TRACEKIT_LOG"
exit $status
