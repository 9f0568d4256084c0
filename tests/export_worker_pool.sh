#!/bin/sh
# SPDX-License-Identifier: MIT
# Records examples/worker_pool (3 threads, function entry/exit, user events 10/11 around
# every item) and exports the trace with 10:11 declared as a pair:
# - Chrome JSON, checked event by event against traceprinter -t ns
#   (tests/export_json_check.py);
# - Perfetto, decoded by protoc (tests/perfetto_trace.proto): as many slice begins and ends
#   as the JSON has slices, and an instant for each of the JSON's instants.
# usage: export_worker_pool.sh WORKER_POOL TRACEPRINTER TEST_EXPORT PYTHON3 CHECKER PROTOC PROTO_DIR
set -eu
wp=$1 tp=$2 exporter=$3 py=$4 check=$5 protoc=$6 protodir=$7
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$wp" -t 3 -n 200 -s 512 -w 0 -o "$tmp/wp.kev" >/dev/null
"$tp" -t ns "$tmp/wp.kev" >"$tmp/printed.txt"
"$exporter" --json "$tmp/wp.kev" 10:11=item >"$tmp/wp.json"
# 200 items: 200 item slices and 3 function slices each (wp_process_item and its two callees)
"$py" "$check" "$tmp/wp.json" --printed "$tmp/printed.txt" --pairs 10:11=item --expect-slices 800

"$exporter" --perfetto "$tmp/wp.kev" 10:11=item >"$tmp/wp.pftrace"
"$protoc" --decode=perfetto.protos.Trace -I "$protodir" "$protodir/perfetto_trace.proto" \
	<"$tmp/wp.pftrace" >"$tmp/decoded.txt"
fail=0
expect() { # what count
	n=$(grep -c "$1" "$tmp/decoded.txt" || true)
	if [ "$n" != "$2" ]; then
		echo "--- Perfetto export: $n lines '$1', expected $2"
		fail=1
	fi
}
instants=$(grep -c '"ph":"i"' "$tmp/wp.json" || true)
expect 'type: TYPE_SLICE_BEGIN' 800
expect 'type: TYPE_SLICE_END' 800
expect 'type: TYPE_INSTANT' "$instants"
# The main thread and 3 workers, plus any thread a sanitizer runtime started before START
# (the snapshot records every thread of the process): as many as the JSON names, at least 4.
named=$(grep -o '"name":"thread_name","ph":"M",[^}]*"args":{"name":"worker_pool"}' "$tmp/wp.json" | wc -l)
if [ "$named" -lt 4 ]; then
	echo "--- JSON export: $named threads named worker_pool, expected at least 4"
	fail=1
fi
expect 'thread_name: "worker_pool"' "$named"
expect 'process_name: ' 1
exit $fail
