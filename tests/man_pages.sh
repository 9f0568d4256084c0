#!/bin/sh
# SPDX-License-Identifier: MIT
# The manual pages: every tool has one; each renders with `man -l` (80 columns, groff's
# warnings on) without a warning; the example of each library page (docs/man3) compiles
# with -Wall -Wextra -Werror and links against the library its synopsis names (only
# compiles when the libraries are given as "-": sanitizer builds, whose libraries need the
# sanitizer runtime linked into the program).
# usage: man_pages.sh MAN_DIR MAN3_SOURCE_DIR INCLUDE_DIR "TOOL..." LIB_FORMATS LIB_RECORDER LIB_CORE
set -eu
mandir=$1 man3src=$2 inc=$3 tools=$4 lib_formats=$5 lib_recorder=$6 lib_core=$7
command -v man >/dev/null 2>&1 || { echo "man_pages: no man command (Debian man-db): skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for t in $tools; do
	[ -f "$mandir/man1/$t.1" ] || { echo "man_pages: $t has no manual page (docs/$t.md)" >&2; status=1; }
done
n=0
for page in "$mandir"/man1/*.1 "$mandir"/man3/*.3; do
	[ -f "$page" ] || continue
	n=$((n + 1))
	if ! MANWIDTH=80 man --warnings -l "$page" >"$tmp/out" 2>"$tmp/err"; then
		echo "man_pages: man -l $page failed: $(cat "$tmp/err")" >&2
		status=1
	elif [ -s "$tmp/err" ]; then
		echo "man_pages: man -l $page warns:" >&2
		cat "$tmp/err" >&2
		status=1
	elif ! grep -q '^NAME' "$tmp/out" || ! grep -q '^SYNOPSIS' "$tmp/out"; then
		echo "man_pages: $page has no NAME or SYNOPSIS section" >&2
		status=1
	fi
done
[ "$n" -ge 4 ] || { echo "man_pages: only $n pages in $mandir" >&2; exit 1; }
for md in "$man3src"/*.md; do
	name=$(basename "$md" .md)
	awk '/^## Example/ { ex = 1; next } /^## / { ex = 0 }
	     ex && /^```c$/ { code = 1; next } code && /^```$/ { code = 0; exit } code { print }' "$md" >"$tmp/$name.c"
	[ -s "$tmp/$name.c" ] || { echo "man_pages: $md has no C example under ## Example" >&2; status=1; continue; }
	case $name in
	TraceEvent) libs="$lib_recorder $lib_core" ;;
	*) libs="$lib_formats $lib_core" ;;
	esac
	[ "$lib_core" = - ] && libs=-c
	if ! ${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$inc" -o "$tmp/$name" "$tmp/$name.c" $libs 2>"$tmp/err"; then
		echo "man_pages: the example of $name(3) does not build:" >&2
		cat "$tmp/err" >&2
		status=1
	fi
done
[ $status = 0 ] && echo "$n manual pages render without warnings; the man3 examples build"
exit $status
