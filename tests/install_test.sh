#!/bin/sh
# SPDX-License-Identifier: MIT
# Installs the build into a scratch prefix, with LD_LIBRARY_PATH unset throughout, and checks
# what a user of the installed package meets:
#  - every installed tool starts (RUNPATH $ORIGIN/../lib; the libraries: $ORIGIN), has its
#    manual page, and no installed file points back into the build tree;
#  - consumers build as users would: pkg-config shared and static, CMake shared and static,
#    for all libraries together (tracekit.pc, Tracekit::tracekit) and one at a time. pkg-config
#    sees only the installed .pc files: no third-party .pc file (hdf5.pc...) is needed;
#  - a consumer of the recorder alone loads no reader and no third-party library.
# The static consumers link our static libraries and the system libraries as shared ones
# (Debian ships ISA-L, which the CRC uses, only as a shared library).
#  - the tools do not load HDF5 (nor what it brings) until asked for HDF5 output, and then
#    find the converter's plugin beside the installed libraries.
# usage: install_test.sh BUILD_DIR SOURCE_DIR SAMPLE.kev EXPECTED_LINE SAMPLE.byfl
set -eu
build=$1 src=$2 sample=$3 expect=$4 byfl=$5
unset LD_LIBRARY_PATH LD_PRELOAD TRACEKIT_LOG
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "install_test: $*" >&2
	exit 1
}
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$prefix/lib
[ -d "$libdir" ] || fail "no $libdir after install"

# The installed programs start from any prefix, and nothing installed names the build tree.
n=0
for exe in "$prefix"/bin/*; do
	[ -x "$exe" ] || continue
	n=$((n + 1))
	"$exe" --help >/dev/null 2>"$tmp/err" || fail "installed $(basename "$exe") --help failed: $(cat "$tmp/err")"
done
[ "$n" -gt 0 ] || fail "no program installed in $prefix/bin"
# Their manual pages (when the build renders them), and the library pages.
if [ -d "$build/man" ]; then
	for exe in "$prefix"/bin/*; do
		[ -f "$prefix/share/man/man1/$(basename "$exe").1" ] || fail "no manual page share/man/man1/$(basename "$exe").1"
	done
	for page in traceparser TraceEvent TBRW bf_process_byfl_file; do
		[ -f "$prefix/share/man/man3/$page.3" ] || fail "no manual page share/man/man3/$page.3"
	done
fi
out=$("$prefix/bin/traceprinter" -c USER "$sample" | grep -c '^.*USREVENT') || true
[ "$out" -gt 0 ] || fail "installed traceprinter printed no user event of $sample"
for f in "$prefix"/bin/* "$libdir"/lib*.so.*; do
	[ -L "$f" ] && continue
	if readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
		fail "$f has a run path into the build tree: $(readelf -d "$f" | grep -E 'R(UN)?PATH')"
	fi
done

# HDF5 only when asked for: a tool's start loads no HDF5; bfbin2hdf5 and tracekit convert
# load the plugin from the installed library directory.
for exe in "$prefix"/bin/*; do
	if ldd "$exe" | grep -qi 'hdf5'; then
		fail "installed $(basename "$exe") loads HDF5 at start: $(ldd "$exe" | grep -i hdf5)"
	fi
done
[ -f "$libdir/libtracekit-hdf5-$("$prefix/bin/tracekit" --version | awk '{print $NF}').so" ] ||
	fail "no HDF5 plugin installed in $libdir: $(ls "$libdir")"
"$prefix/bin/bfbin2hdf5" "$byfl" "$tmp/installed.h5" 2>"$tmp/err" ||
	fail "installed bfbin2hdf5 failed: $(cat "$tmp/err")"
[ -s "$tmp/installed.h5" ] || fail "installed bfbin2hdf5 wrote no $tmp/installed.h5"
"$prefix/bin/tracekit" convert "$byfl" "$tmp/installed2.h5" 2>"$tmp/err" ||
	fail "installed tracekit convert to .h5 failed: $(cat "$tmp/err")"
[ -s "$tmp/installed2.h5" ] || fail "installed tracekit convert wrote no $tmp/installed2.h5"

run_expect() { # exe expected-line
	got=$("$1" "$sample") || fail "$1 failed"
	[ "$got" = "$2" ] || fail "$1 printed '$got', expected '$2'"
}
loads() { # exe: the shared libraries it loads, one per line
	ldd "$1" | awk '{print $1}'
}
all_expect="$(echo "$expect" | sed 's/ user events$//') user events, TBRW 2"
# pkg-config sees our files only: the shared consumers must not need any other .pc file, the
# static ones find the third-party libraries in Libs.private.
export PKG_CONFIG_LIBDIR="$libdir/pkgconfig"
unset PKG_CONFIG_PATH
CC=${CC:-cc}
rpath="-Wl,-rpath,$libdir" # a consumer of an uninstalled prefix says where its libraries are
cflags="$(pkg-config --cflags tracekit) -I$(pkg-config --variable=compatdir tracekit)"

# pkg-config, shared
$CC -o "$tmp/pc_shared" "$src/consumer.c" $cflags $(pkg-config --libs tracekit) $rpath
run_expect "$tmp/pc_shared" "$expect"
$CC -o "$tmp/pc_all_shared" "$src/consumer_all.c" $cflags $(pkg-config --libs tracekit) $rpath
run_expect "$tmp/pc_all_shared" "$all_expect"
$CC -o "$tmp/pc_recorder" "$src/recorder_only.c" $(pkg-config --cflags --libs tracekit-recorder) $rpath
# pkg-config, static: our libraries as archives
static_libs() {
	for w in $(pkg-config --static --libs "$@"); do
		case $w in
		-ltracekit | -ltracekit-core | -ltracekit-formats) printf ' -l:lib%s.a' "${w#-l}" ;;
		*) printf ' %s' "$w" ;;
		esac
	done
}
$CC -o "$tmp/pc_static" "$src/consumer.c" $cflags $(static_libs tracekit)
run_expect "$tmp/pc_static" "$expect"
$CC -o "$tmp/pc_all_static" "$src/consumer_all.c" $cflags $(static_libs tracekit)
run_expect "$tmp/pc_all_static" "$all_expect"
$CC -o "$tmp/pc_recorder_static" "$src/recorder_only.c" $cflags $(static_libs tracekit-recorder)

# CMake, shared and static
unset PKG_CONFIG_LIBDIR
cmake -S "$src" -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null || fail "find_package(Tracekit) failed"
cmake --build "$tmp/cmake" >/dev/null || fail "the CMake consumers do not build"
run_expect "$tmp/cmake/consumer_cmake" "$expect"
run_expect "$tmp/cmake/consumer_all_shared" "$all_expect"
run_expect "$tmp/cmake/consumer_all_static" "$all_expect"
run_expect "$tmp/cmake/formats_cmake_static" "$expect"

# What each consumer loads.
for exe in pc_static pc_all_static pc_recorder_static cmake/consumer_all_static cmake/formats_cmake_static \
	cmake/recorder_cmake_static; do
	if loads "$tmp/$exe" | grep -q '^libtracekit'; then
		fail "the static consumer $exe loads $(loads "$tmp/$exe" | grep '^libtracekit' | tr '\n' ' ')"
	fi
done
for exe in pc_recorder cmake/recorder_cmake; do
	out=$("$tmp/$exe") || fail "$exe failed"
	[ "$out" = "recorder linked" ] || fail "$exe printed '$out'"
	extra=$(loads "$tmp/$exe" | grep -Ev '^(linux-vdso\.so|libc\.so|/lib6?4?/ld-linux|libtracekit\.so\.|libtracekit-core\.so\.)' || true)
	[ -z "$extra" ] || fail "$exe, a recorder-only consumer, loads $(echo $extra)"
done
for exe in pc_all_shared cmake/consumer_all_shared; do
	for lib in libtracekit.so libtracekit-formats.so libtracekit-core.so; do
		loads "$tmp/$exe" | grep -q "^$lib" || fail "$exe does not load $lib"
	done
done
echo "installed: $n programs start without LD_LIBRARY_PATH; consumers work through pkg-config and find_package, shared and static"
