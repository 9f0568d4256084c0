#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages tracekit needs for a purpose (build, check, bench), using
# apt-get when run as root; otherwise prints the exact command to run and fails.
# For check it also installs the browser test's npm packages (speedscope, puppeteer-core) into
# ${TK_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tracekit/node} (tests/browser_speedscope.sh).
# Usage: scripts/setup-deps.sh build|check|bench
set -eu

purpose=${1:-build}
build_pkgs="build-essential cmake ninja-build pkg-config lowdown libzstd-dev libisal-dev libsqlite3-dev sqlite3 libhdf5-dev libdw-dev libelf-dev libiberty-dev libcmocka-dev libtracefs-dev libtraceevent-dev libaudit-dev"
check_pkgs="$build_pkgs clang libclang-rt-14-dev llvm libcmocka-dev valgrind libxml2-utils g++ man-db protobuf-compiler python3 chromium"
bench_pkgs="$check_pkgs liblttng-ust-dev lttng-tools babeltrace2 hyperfine"

case "$purpose" in
build) want=$build_pkgs ;;
check) want=$check_pkgs ;;
bench) want=$bench_pkgs ;;
*) echo "usage: $0 build|check|bench" >&2; exit 2 ;;
esac

# The browser test's npm packages, pinned (puppeteer-core drives Debian's chromium; it never
# downloads a browser). Node and npm come from Debian unless a node is installed already.
NPM_PKGS="speedscope@1.25.0 puppeteer-core@24.9.0"
node_dir=${TK_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tracekit/node}
npm_packages() {
	for spec in $NPM_PKGS; do
		name=${spec%@*} version=${spec##*@}
		have=$(node -p "require('$node_dir/node_modules/$name/package.json').version" 2>/dev/null || true)
		if [ "$have" != "$version" ]; then
			echo "tracekit: installing npm packages $NPM_PKGS into $node_dir"
			mkdir -p "$node_dir"
			# without them the browser test is skipped, saying so: not a reason to stop here
			npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error --save-exact $NPM_PKGS ||
				echo "tracekit: npm install failed: the browser test will be skipped" >&2
			return
		fi
	done
}
if [ "$purpose" != build ]; then
	command -v node >/dev/null 2>&1 || want="$want nodejs"
	command -v npm >/dev/null 2>&1 || want="$want npm"
fi

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	[ "$purpose" = build ] || npm_packages
	exit 0
fi

if [ "$(id -u)" = 0 ]; then
	echo "tracekit: installing Debian packages:$missing"
	export DEBIAN_FRONTEND=noninteractive
	# Refresh the package lists once if an install fails because they are stale.
	if ! apt-get install -y --no-install-recommends $missing; then
		apt-get update
		apt-get install -y --no-install-recommends $missing
	fi
else
	echo "tracekit: missing Debian packages:$missing" >&2
	echo "Install them with:  sudo apt-get install --no-install-recommends$missing" >&2
	exit 1
fi
[ "$purpose" = build ] || npm_packages
