#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the build into a scratch prefix and builds consumers of the installed library
# as users would: pkg-config (shared and static) and CMake's find_package(Tracekit).
# The static consumer links libtracekit.a and the system libraries it needs as shared
# libraries (Debian ships ISA-L, which the CRC uses, only as a shared library).
# usage: install_test.sh BUILD_DIR SOURCE_DIR SAMPLE.kev EXPECTED_LINE
set -eu
build=$1 src=$2 sample=$3 expect=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
cflags="$(pkg-config --cflags tracekit) -I$(pkg-config --variable=compatdir tracekit)"
${CC:-cc} -o "$tmp/shared" "$src/consumer.c" $cflags $(pkg-config --libs tracekit) -Wl,-rpath,"$tmp/prefix/lib"
static_libs=$(pkg-config --static --libs tracekit | sed 's/-ltracekit\b/-l:libtracekit.a/')
${CC:-cc} -o "$tmp/static" "$src/consumer.c" $cflags $static_libs
if ldd "$tmp/static" | grep -q 'libtracekit\.so'; then
	echo "the static consumer loads libtracekit.so" >&2
	exit 1
fi
cmake -S "$src" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmake" >/dev/null
for exe in "$tmp/shared" "$tmp/static" "$tmp/cmake/consumer_cmake"; do
	out=$("$exe" "$sample")
	if [ "$out" != "$expect" ]; then
		echo "$exe printed '$out', expected '$expect'" >&2
		exit 1
	fi
done
echo "installed library works through pkg-config (shared, static) and find_package"
