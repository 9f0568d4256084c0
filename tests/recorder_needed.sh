#!/bin/sh
# SPDX-License-Identifier: MIT
# The recorder library, which users LD_PRELOAD into any program, needs nothing beyond libc
# (and its loader) and libtracekit-core: readelf -d lists its NEEDED entries. Sanitizer
# runtimes are allowed in sanitizer builds.
# usage: recorder_needed.sh LIBTRACEKIT.so
set -eu
lib=$1
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || { echo "recorder_needed: readelf -d $lib lists no NEEDED entry" >&2; exit 1; }
status=0
for n in $needed; do
	case $n in
	libc.so.* | ld-linux*.so.* | libtracekit-core.so.*) ;;
	libasan.so.* | libubsan.so.* | libtsan.so.* | libclang_rt.*) ;;
	*)
		echo "recorder_needed: $lib needs $n (only libc and libtracekit-core are allowed)" >&2
		status=1
		;;
	esac
done
[ $status = 0 ] && echo "$(basename "$lib") needs: $(echo $needed)"
exit $status
