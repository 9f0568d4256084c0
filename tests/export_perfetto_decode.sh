#!/bin/sh
# SPDX-License-Identifier: MIT
# Exports a .kev to Perfetto's protobuf format and prints it decoded by protoc against the
# schema written from Perfetto's field numbers (tests/perfetto_trace.proto); fails when
# protoc cannot decode it.
# usage: export_perfetto_decode.sh TEST_EXPORT PROTOC PROTO_DIR TRACE.kev [PAIRS]
set -eu
exporter=$1 protoc=$2 dir=$3 kev=$4 pairs=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$exporter" --perfetto "$kev" "$pairs" >"$tmp/out.pftrace"
"$protoc" --decode=perfetto.protos.Trace -I "$dir" "$dir/perfetto_trace.proto" <"$tmp/out.pftrace"
