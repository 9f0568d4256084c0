#!/bin/sh
# SPDX-License-Identifier: MIT
# `make check`: every test, in four builds.
#   1. gcc, -Werror, RelWithDebInfo: unit, golden and fuzz-corpus tests (with the public
#      headers as C++ under g++ and clang++, the manual pages, the install test)
#   2. clang, -Werror, AddressSanitizer + UndefinedBehaviorSanitizer: the same tests
#   3. clang, ThreadSanitizer: the multi-threaded tests (label "threads")
#   4. clang, libFuzzer: a short run of every fuzz target from its seed corpus, JOBS at a time
# FUZZ_SECONDS (default 20) sets the length of each fuzz run; CHECK_STEPS limits the steps
# (e.g. CHECK_STEPS="1 2").
set -eu
cd "$(dirname "$0")/.."

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
STEPS=${CHECK_STEPS:-"1 2 3 4"}
GEN=""
command -v ninja >/dev/null 2>&1 && GEN="-G Ninja"

# each step says when it starts, from the start of make check (the budget is 15 minutes)
step() { printf '\n=== %s (at %d s) ===\n' "$*" $(($(date +%s) - start)); }

configure_build() { # dir, cmake args...
	dir=$1
	shift
	cmake -S . -B "$dir" $GEN "$@" >/dev/null
	cmake --build "$dir" -j "$JOBS"
}

# A fuzz target's smoke run from its seed corpus; build-fuzz/NAME.failed marks a crash.
fuzz_one() { # path of the target
	name=$(basename "$1")
	work=$(mktemp -d)
	rm -f "build-fuzz/$name.failed"
	if ! "$1" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
		-artifact_prefix="build-fuzz/$name-" "$work" "tests/fuzz/corpus/${name#fuzz_}" \
		>"build-fuzz/$name.log" 2>&1; then
		: >"build-fuzz/$name.failed"
		rm -rf "$work"
		return 1
	fi
	rm -rf "$work"
}

start=$(date +%s)
for s in $STEPS; do
	case $s in
	1)
		step "1/4 gcc build, all tests"
		CC=gcc configure_build build-check -DCMAKE_BUILD_TYPE=RelWithDebInfo
		(cd build-check && ctest --output-on-failure -j "$JOBS" --timeout 600)
		;;
	2)
		step "2/4 clang AddressSanitizer + UndefinedBehaviorSanitizer, all tests"
		CC=clang configure_build build-asan -DCMAKE_BUILD_TYPE=Debug -DTK_SANITIZE=address,undefined \
			-DTK_BUILD_EXAMPLES=ON
		(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
			UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			ctest --output-on-failure -j "$JOBS" --timeout 900)
		;;
	3)
		step "3/4 clang ThreadSanitizer, multi-threaded tests"
		CC=clang configure_build build-tsan -DCMAKE_BUILD_TYPE=Debug -DTK_SANITIZE=thread
		(cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
			ctest --output-on-failure -j "$JOBS" -L threads --no-tests=ignore --timeout 900)
		;;
	4)
		step "4/4 libFuzzer smoke runs (${FUZZ_SECONDS}s each)"
		CC=clang configure_build build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTK_FUZZ=ON \
			-DTK_BUILD_TOOLS=OFF -DTK_BUILD_EXAMPLES=OFF -DTK_BUILD_MAN=OFF
		# JOBS targets at a time (each fuzzer uses one core), each for FUZZ_SECONDS
		crashed=0
		set --
		for f in build-fuzz/tests/fuzz/fuzz_*; do
			[ -x "$f" ] && set -- "$@" "$f"
		done
		while [ $# -gt 0 ]; do
			pids="" names=""
			i=0
			while [ $# -gt 0 ] && [ $i -lt "$JOBS" ]; do
				fuzz_one "$1" &
				pids="$pids $!" names="$names $(basename "$1")"
				shift
				i=$((i + 1))
			done
			for p in $pids; do
				wait "$p" || crashed=$((crashed + 1))
			done
			for name in $names; do
				if [ -e "build-fuzz/$name.failed" ]; then
					tail -n 60 "build-fuzz/$name.log"
					echo "FAILED: $name found a crash; the input is in build-fuzz/$name-*" >&2
				else
					echo "--- $name (seed corpus tests/fuzz/corpus/${name#fuzz_})"
					grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|Done )" "build-fuzz/$name.log" |
						tail -n 2
				fi
			done
		done
		# every target runs, so that one run shows every crash
		if [ "$crashed" -gt 0 ]; then
			echo "FAILED: $crashed fuzz target(s) found a crash" >&2
			exit 1
		fi
		;;
	*)
		echo "unknown check step $s" >&2
		exit 2
		;;
	esac
done
echo
echo "make check: all steps passed in $(($(date +%s) - start)) s"
