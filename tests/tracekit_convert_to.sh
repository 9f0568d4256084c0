#!/bin/sh
# SPDX-License-Identifier: MIT
# tracekit convert --to takes a format's name or any extension convert knows it by from OUT's
# name: --to=pftrace and --to=perfetto-trace give what --to=perfetto gives, --to=db and
# --to=sqlite3 an SQLite database as --to=sqlite does, --to=.json what --to=json gives; for a
# .byfl IN, --to=db and --to=cgrind run bfbin2sqlite3 and bfbin2cgrind. An unknown --to is a
# usage error (2) that leaves nothing.
# usage: tracekit_convert_to.sh TOOLS_DIR TRACE.kev FILE.byfl
set -u
T=$1 kev=$2 byfl=$3
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export SOURCE_DATE_EPOCH=1700000000

"$T/tracekit" convert --to=perfetto "$kev" "$W/ref.out" || fail "--to=perfetto"
for to in pftrace perfetto-trace .pftrace; do
	"$T/tracekit" convert --to=$to "$kev" "$W/$to.out" || fail "--to=$to: exit status $?"
	cmp -s "$W/ref.out" "$W/$to.out" || fail "--to=$to differs from --to=perfetto"
done
"$T/tracekit" convert --to=json "$kev" "$W/ref.json.out" || fail "--to=json"
"$T/tracekit" convert --to=.json "$kev" "$W/dot.json.out" || fail "--to=.json"
cmp -s "$W/ref.json.out" "$W/dot.json.out" || fail "--to=.json differs from --to=json"
for to in sqlite db sqlite3; do
	"$T/tracekit" convert --to=$to "$kev" "$W/$to.out" || fail "--to=$to: exit status $?"
	head -c 15 "$W/$to.out" 2>/dev/null | grep -q 'SQLite format 3' || fail "--to=$to: no SQLite database"
done
if command -v sqlite3 >/dev/null 2>&1; then
	sqlite3 -batch "$W/sqlite.out" .dump >"$W/sqlite.dump"
	sqlite3 -batch "$W/db.out" .dump >"$W/db.dump"
	[ -s "$W/sqlite.dump" ] && cmp -s "$W/sqlite.dump" "$W/db.dump" || fail "--to=db differs from --to=sqlite"
fi

"$T/tracekit" convert --to=db "$byfl" "$W/byfl.out" || fail ".byfl --to=db"
"$T/bfbin2sqlite3" -o "$W/byfl.db" "$byfl"
head -c 15 "$W/byfl.out" 2>/dev/null | grep -q 'SQLite format 3' || fail ".byfl --to=db: no SQLite database"
"$T/tracekit" convert --to=cgrind "$byfl" "$W/byfl.cg" || fail ".byfl --to=cgrind"
"$T/bfbin2cgrind" "$byfl" "$W/ref.cg"
cmp -s "$W/ref.cg" "$W/byfl.cg" || fail ".byfl --to=cgrind differs from bfbin2cgrind"

"$T/tracekit" convert --to=txt "$kev" "$W/bad.out" 2>"$W/err"
rc=$?
[ $rc -eq 2 ] || fail "--to=txt: exit status $rc, 2 expected"
grep -q "unknown --to 'txt'" "$W/err" || fail "--to=txt: $(cat "$W/err")"
[ ! -e "$W/bad.out" ] && [ ! -e "$W/bad.out.part" ] || fail "--to=txt left a file"
"$T/tracekit" convert --to=xml "$kev" "$W/bad.out" 2>"$W/err"
rc=$?
[ $rc -eq 2 ] || fail ".kev --to=xml: exit status $rc, 2 expected"
[ ! -e "$W/bad.out" ] || fail ".kev --to=xml left a file"
[ $failures -eq 0 ] || exit 1
echo "ok"
