#!/bin/sh
# SPDX-License-Identifier: MIT
# Test fixture of the TBRW tools: runs the two TBRW examples (which write deterministic .tb5
# files), writes a larger file through tbrw_writer, and derives broken files from them.
# usage: gen_tb5_samples.sh TBRW_VTUNE_FILE TBRW_USAGE TBRW_WRITER OUTPUT_DIR
set -eu
vtune=$1
usage=$2
writer=$3
out=$4
rm -rf "$out"
mkdir -p "$out"
cd "$out"
"$vtune" vtune.tb5 >/dev/null
"$usage" usage.tb5 >/dev/null

# many.tb5: 100000 records of 32 bytes in stream 0 (several 1 MiB data chunks), plus a second
# stream, from a .dat file.
{
	echo 'tbrw-dat 1'
	echo 'section version_info'
	echo 'version_info sampling_driver_version=4294967295 bind_version=0 sample_file_version=16'
	echo 'end'
	echo 'stream 0'
	echo 'section stream_info'
	echo 'stream_info sampling_duration=5 stream_type=8 sampling_interval=1 sampling_start_time=0x0 sampling_end_time=0x0 command_line="gen" cpu_mask=null comment="many records"'
	echo 'end'
	echo 'section data_description'
	echo 'desc desc_offset=0 desc_type=16384 desc_subtype=0 desc_data_size=8 desc_access_offset=0x0 desc_access_type=0 desc_access_method=0 desc_sample_flag=0 reserved0=0 reserved1=0 desc_name="index"'
	echo 'desc desc_offset=8 desc_type=16385 desc_subtype=0 desc_data_size=24 desc_access_offset=0x0 desc_access_type=0 desc_access_method=0 desc_sample_flag=0 reserved0=0 reserved1=0 desc_name="payload"'
	echo 'end'
	echo 'section data'
	awk 'BEGIN { for (i = 0; i < 100000; i++) printf "record %02x%02x%02x0000000000%048x\n", i % 256, int(i / 256) % 256, int(i / 65536), i * 7919 }'
	echo 'end'
	echo 'end'
	echo 'stream 1'
	echo 'section stream_info'
	echo 'stream_info sampling_duration=0 stream_type=8 sampling_interval=0 sampling_start_time=0x0 sampling_end_time=0x0 command_line=null cpu_mask=null comment="second"'
	echo 'end'
	echo 'section data_description'
	echo 'desc desc_offset=0 desc_type=16384 desc_subtype=0 desc_data_size=4 desc_access_offset=0x0 desc_access_type=0 desc_access_method=0 desc_sample_flag=0 reserved0=0 reserved1=0 desc_name="word"'
	echo 'end'
	echo 'section data'
	echo 'record 01020304'
	echo 'end'
	echo 'end'
} >many.dat
"$writer" many.dat many.tb5

# Broken inputs.
printf 'this is not a tb5 file, just some text that is long enough to have a header\n' >not_a_tb5.tb5
: >empty.tb5
size=$(wc -c <many.tb5)
head -c $((size / 2)) many.tb5 >truncated.tb5
# One bit flipped in the middle of the record data.
cp many.tb5 flipped.tb5
off=$((size / 3))
byte=$(od -An -tu1 -j "$off" -N1 many.tb5 | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 16)))" | dd of=flipped.tb5 bs=1 seek="$off" conv=notrunc 2>/dev/null

# Malformed .dat files, one fault each.
printf 'tbrw-dat 1\nsection software\nhost host_ip_address="1.2.3.4" host_name=null reserved=0 extra=1\nend\n' >bad_field.dat
printf 'tbrw-dat 1\nsection module\nmodule module_reserved=0\nend\n' >missing_field.dat
printf 'tbrw-dat 1\nsection user_defined_global\nbytes 0102x3\nend\n' >bad_hex.dat
printf 'tbrw-dat 1\nsection hardware\nsystem\ncpu_arch arch_type=1\nend\n' >bad_nesting.dat
printf 'tbrw-dat 1\nsection software\nos os_platform=1 os_major=99999999999 os_minor=0 os_build=0 os_extra=0 os_name=null os_name_extra=null\nend\n' >out_of_range.dat
printf 'tbrw-dat 1\nstream 0\nsection stream_info\n' >unterminated.dat
printf 'hello\n' >not_a_dat.dat
printf 'tbrw-dat 1\nstream 1\nend\n' >stream_gap.dat
# Bind sections and derived process/thread sections in the wrong place, or with a bind line
# for a record the stream does not have.
printf 'tbrw-dat 1\nsection process_thread\nthread tid_associated_pid=1 tid_id=2 tid_flags=0 tid_event_when=0x0 reserved1=0 reserved2=0 tid_name=null\nderived\nend\n' >derived_late.dat
printf 'tbrw-dat 1\nstream 0\nsection bind\nend\nend\n' >bind_early.dat
printf 'tbrw-dat 1\nsection module\nmodule module_reserved=0 module_associated_pid=1 module_flags=13 module_event_when=0x0 module_segment_number=0 module_segment_type=1 module_code_selector=0 module_length=0x1000 module_load_address=0x1000 reserved_for_legacy=0 reserved_for_legacy2=0 reserved_for_legacy_flags=0 reserved1=0 module_unload_tsc=0xffffffffffffffff module_path=null module_name="a" module_segment_name=null\nend\nstream 0\nsection stream_info\nstream_info sampling_duration=0 stream_type=1 sampling_interval=0 sampling_start_time=0x0 sampling_end_time=0x0 command_line=null cpu_mask=null comment=null\nend\nsection data_description\ndesc desc_offset=0 desc_type=1 desc_subtype=0 desc_data_size=32 desc_access_offset=0x0 desc_access_type=0 desc_access_method=0 desc_sample_flag=0 reserved0=0 reserved1=0 desc_name=null\nend\nsection data\nrecord 0010000000000000000000000000000000000000000000000100000000000000\nend\nsection bind\nbind module_index=0x0 pid_index=0x0 tid_index=0x0\nbind module_index=0x0 pid_index=0x0 tid_index=0x0\nend\nend\n' >bind_count.dat
# Well-formed, but the library refuses it: a 3-byte record where the descriptor makes 4.
printf 'tbrw-dat 1\nstream 0\nsection stream_info\nstream_info sampling_duration=0 stream_type=8 sampling_interval=0 sampling_start_time=0x0 sampling_end_time=0x0 command_line=null cpu_mask=null comment=null\nend\nsection data_description\ndesc desc_offset=0 desc_type=16384 desc_subtype=0 desc_data_size=4 desc_access_offset=0x0 desc_access_type=0 desc_access_method=0 desc_sample_flag=0 reserved0=0 reserved1=0 desc_name=null\nend\nsection data\nrecord 01020304\nrecord 010203\nend\nend\n' >size_mismatch.dat
