#!/bin/sh
# SPDX-License-Identifier: MIT
# Records examples/worker_pool (3 threads, function entry/exit, user events 10/11 around
# every item), exports the trace to Chrome JSON with 10:11 declared as a pair, and checks
# the export event by event against traceprinter -t ns (tests/export_json_check.py).
# usage: export_worker_pool.sh WORKER_POOL TRACEPRINTER TEST_EXPORT PYTHON3 CHECKER
set -eu
wp=$1 tp=$2 exporter=$3 py=$4 check=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$wp" -t 3 -n 200 -s 512 -w 0 -o "$tmp/wp.kev" >/dev/null
"$tp" -t ns "$tmp/wp.kev" >"$tmp/printed.txt"
"$exporter" --json "$tmp/wp.kev" 10:11=item >"$tmp/wp.json"
# 200 items: 200 item slices and 3 function slices each (wp_process_item and its two callees)
"$py" "$check" "$tmp/wp.json" --printed "$tmp/printed.txt" --pairs 10:11=item --expect-slices 800
