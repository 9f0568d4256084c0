/* SPDX-License-Identifier: MIT */
/*
 * tbrw_usage: the usage example of the VTune TBRW guide (chapter 10, "Writing a Stream
 * Section"), kept as close to the guide's code as compiles: opens a new .tb5 file and writes
 * stream 0 with its stream information section. usage: tbrw_usage [OUTPUT.tb5]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tracekit/tbrw.h"

/* What the guide leaves to the reader: the file and how it is opened. */
static const TBRW_CHAR *file_name = L"tbrw_usage.tb5";
static const TBRW_U32 access_mode = TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS;

int main(int argc, char *argv[])
{
	TBRW_U32 ret_val;
	void *tbrw_ptr;
	int stream = 0;
	const wchar_t *err_text = NULL; /* the guide has wchar_t *: TBRW_error_string gives const */
	TBRW_STREAM_INFO stream_info;
	TBRW_SAMPREC_DESC_ENTRY desc_entry;
	wchar_t name_buf[4096];

	//fill in stream_info
	memset(&stream_info, 0, sizeof(stream_info));
	stream_info.stream_info_size = sizeof(TBRW_STREAM_INFO);
	stream_info.stream_type = TBRW_CUSTOM_STREAM;
	stream_info.sampling_duration = 20000;
	stream_info.sampling_interval = 1000;
	stream_info.command_line.soi_ptr = (TBRW_CHAR *)L"tbrw_usage";
	stream_info.cpu_mask.soi_ptr = (TBRW_CHAR *)L"none";
	stream_info.comment.soi_ptr = (TBRW_CHAR *)L"chapter 10 usage example";

	memset(&desc_entry, 0, sizeof(desc_entry));
	desc_entry.desc_size = sizeof(TBRW_SAMPREC_DESC_ENTRY);
	desc_entry.desc_offset = 0;
	desc_entry.desc_data_size = 8;
	desc_entry.desc_type = ST_START_USER_DEFINED;
	desc_entry.desc_subtype = SST_NONE;
	desc_entry.desc_name.soi_ptr = (TBRW_CHAR *)L"custom value";

	if (argc > 1) {
		if (mbstowcs(name_buf, argv[1], sizeof(name_buf) / sizeof(name_buf[0])) >= sizeof(name_buf) / sizeof(name_buf[0])) {
			printf("bad file name\n");
			return 1;
		}
		file_name = name_buf;
	}

	ret_val = TBRW_open(&tbrw_ptr, file_name, access_mode);
	if (ret_val != VT_SUCCESS) {
		printf("TBRW_open failed\n");
		return 1;
	}

	ret_val = TBRW_writing_stream(tbrw_ptr, stream);
	if (ret_val != VT_SUCCESS) {
		ret_val = TBRW_error_string(ret_val, &err_text);
		printf("TBRW_writing_stream number %d returned error \"%ls\"\n", stream, err_text);
		ret_val = TBRW_abort_cleanup_and_close(tbrw_ptr);
		return 1;
	}

	ret_val = TBRW_writing_stream_section(tbrw_ptr, stream, TBRW_STREAM_INFO_SECTION);
	//if error, handle as above
	if (ret_val != VT_SUCCESS) {
		ret_val = TBRW_error_string(ret_val, &err_text);
		printf("TBRW_writing_stream_section returned error \"%ls\"\n", err_text);
		ret_val = TBRW_abort_cleanup_and_close(tbrw_ptr);
		return 1;
	}
	ret_val = TBRW_set_stream_info(tbrw_ptr, stream, &stream_info);
	//if error, handle as above
	if (ret_val != VT_SUCCESS) {
		ret_val = TBRW_error_string(ret_val, &err_text);
		printf("TBRW_set_stream_info returned error \"%ls\"\n", err_text);
		ret_val = TBRW_abort_cleanup_and_close(tbrw_ptr);
		return 1;
	}
	ret_val = TBRW_done_stream_section(tbrw_ptr, stream, TBRW_STREAM_INFO_SECTION);
	//if error, handle as above
	if (ret_val != VT_SUCCESS) {
		ret_val = TBRW_error_string(ret_val, &err_text);
		printf("TBRW_done_stream_section returned error \"%ls\"\n", err_text);
		ret_val = TBRW_abort_cleanup_and_close(tbrw_ptr);
		return 1;
	}

	/* Not in the chapter 10 code, but required by 5.2 step 3 (and checked by done_stream):
	 * a stream needs its data description section too. This stream's records would be
	 * 8-byte values of a type of our own. */
	ret_val = TBRW_writing_stream_section(tbrw_ptr, stream, TBRW_DATA_DESCRIPTION_SECTION);
	if (ret_val == VT_SUCCESS)
		ret_val = TBRW_add_data_descriptor_entry(tbrw_ptr, stream, &desc_entry);
	if (ret_val == VT_SUCCESS)
		ret_val = TBRW_done_stream_section(tbrw_ptr, stream, TBRW_DATA_DESCRIPTION_SECTION);
	if (ret_val != VT_SUCCESS) {
		ret_val = TBRW_error_string(ret_val, &err_text);
		printf("writing the data description section returned error \"%ls\"\n", err_text);
		ret_val = TBRW_abort_cleanup_and_close(tbrw_ptr);
		return 1;
	}

	ret_val = TBRW_done_stream(tbrw_ptr, stream);
	//if error, handle as above
	if (ret_val != VT_SUCCESS) {
		ret_val = TBRW_error_string(ret_val, &err_text);
		printf("TBRW_done_stream number %d returned error \"%ls\"\n", stream, err_text);
		ret_val = TBRW_abort_cleanup_and_close(tbrw_ptr);
		return 1;
	}

	ret_val = TBRW_close(tbrw_ptr);
	if (ret_val != VT_SUCCESS)
	{
		printf("TBRW_close failed\n");
	}
	return 0;
} //end main
