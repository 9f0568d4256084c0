#!/bin/sh
# SPDX-License-Identifier: MIT
# `make bench`: every benchmark script bench/run_*.sh, in one build directory. Each prints
# its figures beside anchors measured in the same run, and the ratios.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-bench}
status=0
for s in bench/run_*.sh; do
	[ -x "$s" ] || continue
	printf '\n###### %s ######\n' "$s"
	if ! "$s" "$BUILD"; then
		echo "bench: $s failed" >&2
		status=1
	fi
done
exit $status
