#!/bin/sh
# SPDX-License-Identifier: MIT
# Test fixture: writes the .byfl samples of tests/tools/bfbin_samples.c into a directory
# (the golden tests' work directory), next to hand-built valid and broken byte sequences.
# usage: gen_bfbin_samples.sh BFBIN_SAMPLES_BINARY OUTPUT_DIR
set -eu
gen=$1
out=$2
mkdir -p "$out"
for s in call_stack by_func tricky dup_tables slash_name big_uint dup_columns empty_key large; do
	"$gen" "$s" "$out/$s.byfl"
done
# The two examples of the format reference, byte for byte.
printf 'BYFLBIN\001\000\014Command line\002\000\010Argument\000\001\000\002-x\000\000' >"$out/ref_cmdline.byfl"
printf 'BYFLBIN\002\000\001K\001\000\006Answer\000\000\000\000\000\000\000\052\000\000' >"$out/ref_keyval.byfl"
# Bool bytes other than 0 and 1 (Byfl's reader passes them on; its writer never makes them).
printf 'BYFLBIN\001\000\001B\003\000\004Flag\000\001\007\001\000\000\002\000\002KV\003\000\001k\007\000\000' >"$out/bool7.byfl"
# Broken files.
printf 'BYFLBIX\000' >"$out/bad_magic.byfl"
: >"$out/empty.byfl"
head -c 1000 "$out/call_stack.byfl" >"$out/truncated.byfl"
printf 'BYFLBIN\001\000\001T\001\000\001C\000\005' >"$out/bad_row_tag.byfl"
printf 'BYFLBIN\004\000\001T\000\000\000' >"$out/bad_table_tag.byfl"
# A "Program" key:value table with a bool key and a string key between its uint64 keys.
printf 'BYFLBIN\002\000\007Program\003\000\007Flagged\001\001\000\005Loads\000\000\000\000\000\000\000\052\002\000\004Name\000\001x\001\000\006Stores\000\000\000\000\000\000\000\007\000\000' >"$out/program_bool.byfl"
