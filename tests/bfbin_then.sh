#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs a converter, then, if it succeeded, a command that reads what it wrote (sqlite3,
# the HDF5 dumper, xmllint...), so a golden test compares what a user would query.
# usage: bfbin_then.sh CHECK_COMMAND CONVERTER [ARG]...   (CHECK_COMMAND runs under sh -c)
set -u
check=$1
shift
status=0
"$@" || status=$?
[ "$status" -eq 0 ] || exit "$status"
exec sh -c "$check"
