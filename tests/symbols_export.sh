#!/bin/sh
# SPDX-License-Identifier: MIT
# Symbols in the exports: tests/tools/symbols_prog records its functions' entries and exits;
# tracekit convert names their slices symprog_outer (once) and symprog_inner (3 times) in
# Chrome JSON, Perfetto (decoded by protoc, when given) and SQLite (queried by sqlite3,
# when given); with --no-symbols the names are the addresses, as before.
# usage: symbols_export.sh SYMBOLS_PROG TRACEKIT PROTOC|"" PROTO_DIR SQLITE3|""
set -eu
unset DEBUGINFOD_URLS # separate debug files from this machine only: no downloads
prog=$1 tk=$2 protoc=$3 protodir=$4 sq=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # what got expected
	if [ "$2" != "$3" ]; then
		echo "--- $1: $2, expected $3"
		fail=1
	fi
}

"$prog" "$tmp/s.kev" >/dev/null
"$tk" convert "$tmp/s.kev" "$tmp/s.json"
check "JSON slices symprog_inner" "$(grep -c '"name":"symprog_inner","cat":"SYSTEM","ph":"X"' "$tmp/s.json" || true)" 3
check "JSON slices symprog_outer" "$(grep -c '"name":"symprog_outer","cat":"SYSTEM","ph":"X"' "$tmp/s.json" || true)" 1
# the addresses stay in the arguments
check "JSON slices with thisfn" "$(grep -c '"cat":"SYSTEM","ph":"X".*"args":{"thisfn":"0x' "$tmp/s.json" || true)" 5

"$tk" convert --no-symbols "$tmp/s.kev" "$tmp/n.json"
check "JSON --no-symbols slices named by a function" "$(grep -c '"name":"symprog_' "$tmp/n.json" || true)" 0
check "JSON --no-symbols slices named by an address" \
	"$(grep -c '"name":"0x[0-9a-f]*","cat":"SYSTEM","ph":"X"' "$tmp/n.json" || true)" 5

if [ -n "$protoc" ]; then
	"$tk" convert "$tmp/s.kev" "$tmp/s.pftrace"
	"$protoc" --decode=perfetto.protos.Trace -I "$protodir" "$protodir/perfetto_trace.proto" \
		<"$tmp/s.pftrace" >"$tmp/decoded.txt"
	check "Perfetto interned name symprog_inner" "$(grep -c 'name: "symprog_inner"' "$tmp/decoded.txt" || true)" 1
	check "Perfetto interned name symprog_outer" "$(grep -c 'name: "symprog_outer"' "$tmp/decoded.txt" || true)" 1
fi
if [ -n "$sq" ]; then
	"$tk" convert "$tmp/s.kev" "$tmp/s.db"
	check "SQLite slices by name" "$("$sq" "$tmp/s.db" "SELECT group_concat(name || '=' || n) FROM
		(SELECT name, count(*) AS n FROM slices WHERE name LIKE 'symprog%' GROUP BY name ORDER BY name)")" \
		"symprog_inner=3,symprog_outer=1"
fi
exit $fail
