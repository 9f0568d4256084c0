#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the Debian packages tracekit needs for a purpose (build, check, bench), using
# apt-get when run as root; otherwise prints the exact command to run and fails.
# Usage: scripts/setup-deps.sh build|check|bench
set -eu

purpose=${1:-build}
build_pkgs="build-essential cmake ninja-build pkg-config lowdown libzstd-dev libisal-dev libsqlite3-dev sqlite3 libhdf5-dev libdw-dev libelf-dev libcmocka-dev libtracefs-dev libtraceevent-dev libaudit-dev"
check_pkgs="$build_pkgs clang libclang-rt-14-dev llvm libcmocka-dev valgrind libxml2-utils g++ man-db protobuf-compiler python3"
bench_pkgs="$check_pkgs liblttng-ust-dev lttng-tools babeltrace2 hyperfine"

case "$purpose" in
build) want=$build_pkgs ;;
check) want=$check_pkgs ;;
bench) want=$bench_pkgs ;;
*) echo "usage: $0 build|check|bench" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

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
