#!/bin/sh
# SPDX-License-Identifier: MIT
# Test fixture: writes every sample trace of tests/tools/kev_samples.c into a directory.
# usage: gen_samples.sh KEV_SAMPLES_BINARY OUTPUT_DIR
set -eu
gen=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
for s in usr_event_simple five_events ker_calls_all ker_calls_14 all_classes smp truncated incomplete; do
	"$gen" "$s" "$out/$s.kev"
done
"$gen" usr_event_simple "$out/usr_event_simple_be.kev" --be
"$gen" all_classes "$out/all_classes_be.kev" --be
# corrupt files beside the valid ones
printf 'TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUE' >"$out/no_header_end.kev"
printf 'this is not a trace file at all\n' >"$out/not_a_trace.kev"
printf 'TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUETRACE_SYSPAGE_LEN::4096TRACE_HEADER_END::short' >"$out/syspage_too_long.kev"
printf 'TRACE_HEADER_BEGIN::TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUETRACE_HEADER_END::' >"$out/no_version.kev"
printf 'TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_SYSPAGE_LEN::0TRACE_HEADER_END::' >"$out/no_byte_order.kev"
printf 'TRACE_HEADER_BEGIN::TRACE_VER_MAJOR::1TRACE_VER_MINOR::01TRACE_LITTLE_ENDIAN::TRUETRACE_SYSPAGE_LEN::4kTRACE_HEADER_END::' >"$out/bad_syspage_len.kev"
