#!/bin/sh
# SPDX-License-Identifier: MIT
# HDF5 is loaded only by what writes HDF5: libtracekit-formats does not need it (readelf -d),
# so no tool loads it (nor curl, TLS and Kerberos, which it brings) at start; the HDF5
# converter is a plugin beside the shared library. Without the plugin, bfbin2hdf5 fails with
# a message naming the file it could not load and leaves no output; with it, it converts.
# usage: hdf5_plugin.sh LIBTRACEKIT-FORMATS.so LIBTRACEKIT-CORE.so BFBIN2HDF5 SAMPLE.byfl
set -eu
formats=$1 core=$2 tool=$3 byfl=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
	echo "hdf5_plugin: $*" >&2
	exit 1
}
needed=$(readelf -d "$formats" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
case " $(echo $needed) " in
*hdf5*) fail "$(basename "$formats") needs HDF5: $(echo $needed)" ;;
esac
ldd "$tool" | grep -qi hdf5 && fail "$(basename "$tool") loads HDF5 at start: $(ldd "$tool" | grep -i hdf5)"

# the libraries alone, without the plugin (LD_LIBRARY_PATH comes before the tool's RUNPATH)
cp "$formats" "$tmp/$(readelf -d "$formats" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
cp "$core" "$tmp/$(readelf -d "$core" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
if LD_LIBRARY_PATH=$tmp "$tool" "$byfl" "$tmp/out.h5" 2>"$tmp/err"; then
	fail "bfbin2hdf5 succeeded without the HDF5 plugin"
fi
grep -q "HDF5 output is not available: cannot load $tmp/libtracekit-hdf5-.*\.so" "$tmp/err" ||
	fail "unexpected message without the plugin: $(cat "$tmp/err")"
[ ! -e "$tmp/out.h5" ] && [ ! -e "$tmp/out.h5.part" ] || fail "an output was left without the plugin"

# with it (the build's libraries, the plugin beside them)
"$tool" "$byfl" "$tmp/out.h5" 2>"$tmp/err" || fail "bfbin2hdf5 failed with the plugin: $(cat "$tmp/err")"
[ -s "$tmp/out.h5" ] || fail "bfbin2hdf5 wrote no $tmp/out.h5"
echo "HDF5 loaded only on use; without the plugin: $(cat "$tmp/err" 2>/dev/null || true)"
