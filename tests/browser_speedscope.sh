#!/bin/sh
# SPDX-License-Identifier: MIT
# The browser test (issue 14): examples/worker_pool records itself on 3 threads, tracekit
# converts the trace to Chrome JSON (10:11 declared as the pair "item"), and speedscope in
# headless Chromium must show its threads and their slices (tests/browser_speedscope.mjs).
# Screenshots stay in OUTDIR. Skipped (77, saying why) without node, the npm packages
# (scripts/setup-deps.sh check installs them into TK_NODE_DIR, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/tracekit/node) or Chromium (TK_CHROMIUM, else Debian's).
# usage: browser_speedscope.sh WORKER_POOL TRACEKIT OUTDIR
set -u
wp=$1 tkc=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
node_dir=${TK_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tracekit/node}

skip() {
	echo "SKIP: $*"
	exit 77
}
command -v node >/dev/null 2>&1 || skip "no node (Debian package nodejs; scripts/setup-deps.sh check)"
for p in speedscope puppeteer-core; do
	[ -f "$node_dir/node_modules/$p/package.json" ] ||
		skip "npm package $p is not in $node_dir (scripts/setup-deps.sh check installs it)"
done
[ -f "$node_dir/node_modules/speedscope/dist/release/index.html" ] || skip "speedscope in $node_dir has no built page"
chromium=${TK_CHROMIUM:-}
if [ -z "$chromium" ]; then
	for c in /usr/bin/chromium /usr/bin/chromium-headless-shell; do
		if [ -x "$c" ]; then
			chromium=$c
			break
		fi
	done
fi
[ -n "$chromium" ] && [ -x "$chromium" ] || skip "no Chromium (Debian package chromium; scripts/setup-deps.sh check)"

mkdir -p "$out"
rm -f "$out/worker_pool.kev" "$out/worker_pool.json" "$out"/*.png
# On a loaded machine the first worker may take every item before the others start: the
# recording is made again (at most 3 times) until at least two threads have slices.
for attempt in 1 2 3; do
	"$wp" -t 3 -n 2000 -s 8192 -w 0 -o "$out/worker_pool.kev" >"$out/worker_pool.out" ||
		{ echo "--- worker_pool failed: $(cat "$out/worker_pool.out")"; exit 1; }
	rm -f "$out/worker_pool.json"
	"$tkc" convert --pair=10:11=item "$out/worker_pool.kev" "$out/worker_pool.json" ||
		{ echo "--- tracekit convert failed"; exit 1; }
	threads=$(grep '"ph":"X"' "$out/worker_pool.json" | sed 's/.*"tid":\([0-9]*\).*/\1/' | sort -u | wc -l)
	[ "$threads" -ge 2 ] && break
	echo "(recording $attempt: slices on $threads thread(s); recording again)"
done
# What the page must show is read from the JSON: so that a JSON without the declared pair or
# with functions named by addresses (symbols lost) cannot pass, every thread with slices must
# have the pair "item" and worker_pool's functions by name.
for name in item wp_process_item fill fnv1a; do
	with=$(grep '"ph":"X"' "$out/worker_pool.json" | grep "\"name\":\"$name\"" |
		sed 's/.*"tid":\([0-9]*\).*/\1/' | sort -u | wc -l)
	[ "$with" -eq "$threads" ] ||
		{ echo "--- the JSON has slices \"$name\" on $with of the $threads threads with slices"; exit 1; }
done
node "$here/browser_speedscope.mjs" "$node_dir/node_modules" "$chromium" "$out/worker_pool.json" "$out" || exit 1
echo "screenshots: $out/speedscope-time-order.png $out/speedscope-sandwich.png"
