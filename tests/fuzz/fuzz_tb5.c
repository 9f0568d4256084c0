/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the .tb5 reader and the salvage path on arbitrary bytes. The input is
 * opened read-only and everything in it is read (every section, stream section, record and
 * string, a bind result stored in the file before binding anew in memory); it is opened for
 * appending (the directory read without a mapping), then abandoned; then tk_tbrw_recover()
 * salvages it, and whatever it writes must open and verify. Errors are fine; crashes, leaks
 * and hangs are not. A custom mutator repairs the checksums after libFuzzer's mutation, so
 * mutations reach the parsers (the replay checks the repair on every corpus file).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracekit/tbrw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
/* libFuzzer's own mutator: weak, absent in the corpus replay (fuzz_replay.c) */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) __attribute__((weak));
/* CRC-32C of the library (src/common/tk_crc32c.h) */
uint32_t tk__crc32c(uint32_t crc, const void *buf, size_t len);

/* ---- checksums: mutated inputs get past the CRCs ------------------------------------------ */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/*
 * Recomputes every checksum of a .tb5 image in place (docs/tb5-format.md): the header's
 * (bytes 0..59 at 60), each chunk's payload and header checksums (chunks found from byte 64
 * on by their own lengths, or at the next "TBCK" on an 8-byte boundary where the length
 * leads nowhere) and the trailer's. Without it almost every mutation dies at a checksum and
 * the fuzzer never reaches the parsers behind them.
 */
static void fix_checksums(uint8_t *d, size_t size)
{
	size_t off = 64;

	if (size >= 64 && memcmp(d, "TKTB5", 5) == 0)
		put32(d + 60, tk__crc32c(0, d, 60));
	while (off + 40 <= size) {
		if (get32(d + off) != 0x4B434254u) { /* "TBCK" */
			off += 8;
			continue;
		}
		uint32_t stored = get32(d + off + 12);
		if (stored <= size - off - 40)
			put32(d + off + 32, tk__crc32c(0, d + off + 40, stored));
		put32(d + off + 36, tk__crc32c(0, d + off, 36));
		off += stored <= size - off - 40 ? 40 + (((size_t)stored + 7) & ~(size_t)7) : 8;
	}
	if (size >= 64 + 32 && memcmp(d + size - 32, "TB5TRAIL", 8) == 0)
		put32(d + size - 4, tk__crc32c(0, d + size - 32, 28));
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	(void)seed;
	if (LLVMFuzzerMutate != NULL)
		size = LLVMFuzzerMutate(data, size, max_size);
	fix_checksums(data, size);
	return size;
}

/* Replay only (no libFuzzer): the mutator's checksum repair works. A byte of a data chunk's
 * records changed and repaired must give a file that still opens and verifies. */
static void check_repair(const uint8_t *data, size_t size, const char *path);

static TBRW_PTR g_h;
static volatile TBRW_U64 g_sink; /* keeps the reads from being optimised away */

static void touch_string(TBRW_STRING_OR_ID id)
{
	TBRW_CHAR buf[64];
	TBRW_U32 need = 0;

	if (id.soi_uniqueid == 0)
		return;
	(void)TBRW_convert_uniqueid_to_string(g_h, 0, &id, NULL, &need);
	(void)TBRW_convert_uniqueid_to_string(g_h, 64, &id, buf, &need);
}

static TBRW_U32 on_data(void *d, TBRW_U32 size, TBRW_U32 n, void *u)
{
	(void)n;
	(void)u;
	for (TBRW_U32 i = 0; i < size; i += 64)
		g_sink += ((unsigned char *)d)[i];
	return TRUE;
}

static TBRW_U32 on_pid(TBRW_PID *p, TBRW_U32 size, TBRW_U32 n, void *u)
{
	(void)size;
	(void)u;
	for (TBRW_U32 i = 0; i < n; i++) {
		touch_string(p[i].pid_name);
		touch_string(p[i].pid_path);
	}
	return TRUE;
}

static TBRW_U32 on_tid(TBRW_TID *t, TBRW_U32 size, TBRW_U32 n, void *u)
{
	(void)size;
	(void)u;
	for (TBRW_U32 i = 0; i < n; i++)
		touch_string(t[i].tid_name);
	return TRUE;
}

static TBRW_U32 on_module(TBRW_MODULE *m, TBRW_U32 size, TBRW_U32 n, void *u)
{
	(void)size;
	(void)u;
	for (TBRW_U32 i = 0; i < n; i++) {
		touch_string(m[i].module_name);
		touch_string(m[i].module_path);
		touch_string(m[i].module_segment_name);
	}
	return TRUE;
}

static TBRW_U32 on_event(TBRW_EVENT *e, TBRW_U32 size, TBRW_U32 n, void *u)
{
	(void)size;
	(void)u;
	for (TBRW_U32 i = 0; i < n; i++) {
		touch_string(e[i].event_name);
		for (TBRW_U32 k = 0; k < e[i].event_num_details; k++)
			g_sink += e[i].event_detail_array[k].detail_value;
	}
	return TRUE;
}

static TBRW_U32 on_desc(TBRW_SAMPREC_DESC_ENTRY *d, TBRW_U32 size, TBRW_U32 n, void *u)
{
	(void)size;
	(void)u;
	for (TBRW_U32 i = 0; i < n; i++)
		touch_string(d[i].desc_name);
	return TRUE;
}

static TBRW_U32 on_bind(const void *d, TBRW_U32 ds, TBRW_U64 n, const DATA_BIND_STRUCT *b, TBRW_U32 bs, void *u)
{
	(void)d;
	(void)ds;
	(void)bs;
	(void)u;
	for (TBRW_U64 i = 0; i < n; i++)
		g_sink += b[i].module_index;
	return TRUE;
}

static TBRW_U32 on_bind_module(const void *d, TBRW_U32 ds, TBRW_U64 n, const MODULE_BIND_STRUCT *b, TBRW_U32 bs,
			       void *u)
{
	(void)d;
	(void)ds;
	(void)bs;
	(void)u;
	for (TBRW_U64 i = 0; i < n; i++)
		g_sink += b[i].pid_index;
	return TRUE;
}

static TBRW_U32 on_bind_tid(const void *d, TBRW_U32 ds, TBRW_U64 n, const TID_BIND_STRUCT *b, TBRW_U32 bs, void *u)
{
	(void)d;
	(void)ds;
	(void)bs;
	(void)u;
	for (TBRW_U64 i = 0; i < n; i++)
		g_sink += b[i].pid_index;
	return TRUE;
}

static void *get_any(TBRW_U32 (*fn)(TBRW_PTR, TBRW_U32, void *, TBRW_U32 *))
{
	TBRW_U32 need = 0;
	void *buf;

	if (fn(g_h, 0, NULL, &need) != TBRW_BUFFER_TOO_SMALL || need > (1u << 26))
		return NULL;
	buf = malloc(need ? need : 1);
	if (buf != NULL && fn(g_h, need, buf, NULL) != VT_SUCCESS) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

static TBRW_U32 get_system(TBRW_PTR h, TBRW_U32 size, void *buf, TBRW_U32 *used)
{
	return TBRW_get_system(h, size, buf, used);
}

static void read_all(void)
{
	TBRW_U32 n_streams = 0;

	for (int s = 0; s <= (int)TBRW_VERSION_INFO_SECTION; s++) {
		if (TBRW_reading_section(g_h, (TBRW_SECTION_IDENTIFIER)s) != VT_SUCCESS)
			continue;
		TBRW_HOST *host;
		TBRW_OS *os;
		switch (s) {
		case TBRW_HARDWARE_SECTION:
			free(get_any(get_system));
			break;
		case TBRW_SOFTWARE_SECTION:
			host = get_any(TBRW_get_host);
			if (host != NULL)
				touch_string(host->host_name);
			free(host);
			os = get_any(TBRW_get_os);
			if (os != NULL)
				touch_string(os->os_name);
			free(os);
			free(get_any(TBRW_get_application));
			break;
		case TBRW_VERSION_INFO_SECTION:
			free(get_any(TBRW_get_version_info));
			break;
		case TBRW_USER_DEFINED_GLOBAL_SECTION:
			free(get_any(TBRW_get_user_defined_global));
			break;
		default:
			break;
		}
		(void)TBRW_done_section(g_h, (TBRW_SECTION_IDENTIFIER)s);
	}
	(void)TBRW_enumerate_processes(g_h, on_pid, NULL, 0);
	(void)TBRW_enumerate_threads(g_h, on_tid, NULL, 1);
	(void)TBRW_enumerate_modules(g_h, on_module, NULL, 0);
	(void)TBRW_get_number_data_streams(g_h, &n_streams);
	for (TBRW_U32 s = 0; s < n_streams && s < 8; s++) {
		if (TBRW_reading_stream(g_h, s) != VT_SUCCESS)
			continue;
		for (int k = 0; k <= (int)TBRW_STREAM_INFO_SECTION; k++) {
			TBRW_STREAM_SECTION_IDENTIFIER sec = (TBRW_STREAM_SECTION_IDENTIFIER)k;
			if (TBRW_reading_stream_section(g_h, s, sec) != VT_SUCCESS)
				continue;
			if (sec == TBRW_DATA_SECTION) {
				(void)TBRW_enumerate_data(g_h, s, on_data, NULL, 0);
				(void)TBRW_enumerate_data(g_h, s, on_data, NULL, 3);
			} else if (sec == TBRW_EVENT_DESCRIPTION_SECTION) {
				(void)TBRW_enumerate_events(g_h, s, on_event, NULL, 0);
			} else if (sec == TBRW_DATA_DESCRIPTION_SECTION) {
				(void)TBRW_enumerate_data_descriptor_entries(g_h, s, on_desc, NULL);
			} else if (sec == TBRW_STREAM_INFO_SECTION) {
				TBRW_STREAM_INFO si;
				if (TBRW_get_stream_info(g_h, s, sizeof si, &si, NULL) == VT_SUCCESS)
					touch_string(si.comment);
			} else {
				TBRW_U32 need = 0;
				(void)TBRW_get_user_defined_stream(g_h, s, 0, NULL, &need);
			}
			(void)TBRW_done_stream_section(g_h, s, sec);
		}
		(void)TBRW_done_stream(g_h, s);
		/* the bind result stored in the file, as it is, before any TBRW_dobind */
		(void)TBRW_bind_enumerate_data(g_h, s, on_bind, NULL, 0);
		(void)TBRW_bind_enumerate_data(g_h, s, on_bind, NULL, 5);
		if (TBRW_dobind(g_h, s) == VT_SUCCESS)
			(void)TBRW_bind_enumerate_data(g_h, s, on_bind, NULL, 0);
	}
	(void)TBRW_bind_enumerate_modules(g_h, on_bind_module, NULL, 0);
	(void)TBRW_bind_enumerate_threads(g_h, on_bind_tid, NULL, 0);
	(void)TBRW_verify(g_h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[64], out[64];
	wchar_t win[64];
	tk_tbrw_recover_report rep;
	FILE *f;

	snprintf(in, sizeof in, "/tmp/fuzz_tb5_%d.tb5", (int)getpid());
	snprintf(out, sizeof out, "/tmp/fuzz_tb5_%d_r.tb5", (int)getpid());
	swprintf(win, 64, L"%s", in);
	f = fopen(in, "wb");
	if (f == NULL)
		return 0;
	if (size > 0 && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return 0;
	}
	fclose(f);

	if (TBRW_open(&g_h, win, TBRW_FILE_READ) == VT_SUCCESS) {
		int verified = TBRW_verify(g_h) == VT_SUCCESS;
		read_all();
		(void)TBRW_close(g_h);
		if (verified && LLVMFuzzerMutate == NULL)
			check_repair(data, size, in);
	}
	/* opened for appending: read without a mapping, copied to a .part file, abandoned */
	if (TBRW_open(&g_h, win, TBRW_FILE_READ | TBRW_FILE_WRITE) == VT_SUCCESS) {
		(void)TBRW_verify(g_h);
		if (TBRW_writing_section(g_h, TBRW_VERSION_INFO_SECTION) == VT_SUCCESS)
			(void)TBRW_done_section(g_h, TBRW_VERSION_INFO_SECTION);
		(void)TBRW_abort_cleanup_and_close(g_h);
	}
	if (tk_tbrw_recover(in, out, &rep) == VT_SUCCESS) {
		/* what salvage writes must be a valid file */
		swprintf(win, 64, L"%s", out);
		if (TBRW_open(&g_h, win, TBRW_FILE_READ) != VT_SUCCESS || TBRW_verify(g_h) != VT_SUCCESS) {
			fprintf(stderr, "salvaged file does not verify: %s\n", tk_tbrw_error_detail());
			abort();
		}
		read_all();
		(void)TBRW_close(g_h);
		unlink(out);
	}
	unlink(in);
	return 0;
}

static void check_repair(const uint8_t *data, size_t size, const char *path)
{
	uint8_t *copy = malloc(size);
	wchar_t wp[64];
	size_t off = 64;
	FILE *f;
	TBRW_PTR h = NULL;

	if (copy == NULL)
		return;
	memcpy(copy, data, size);
	/* the first data chunk (kind 3) with a payload: one byte of its records changed */
	while (off + 40 <= size && get32(copy + off) == 0x4B434254u) {
		uint32_t stored = get32(copy + off + 12);
		if (copy[off + 4] == 3 && copy[off + 5] == 0 && copy[off + 6] == 0 && stored > 0 && stored <= size - off - 40)
			break;
		off += 40 + (((size_t)stored + 7) & ~(size_t)7);
	}
	if (off + 40 > size || get32(copy + off) != 0x4B434254u) {
		free(copy);
		return;
	}
	copy[off + 40] ^= 0x5a;
	fix_checksums(copy, size);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(copy, 1, size, f) != size) {
		if (f != NULL)
			fclose(f);
		free(copy);
		return;
	}
	fclose(f);
	free(copy);
	swprintf(wp, 64, L"%s", path);
	if (TBRW_open(&h, wp, TBRW_FILE_READ) != VT_SUCCESS || TBRW_verify(h) != VT_SUCCESS) {
		fprintf(stderr, "fuzz_tb5: a record byte changed and the checksums repaired does not verify: %s\n",
			tk_tbrw_error_detail());
		abort();
	}
	(void)TBRW_close(h);
	/* the input file is written again by the caller's next step */
	f = fopen(path, "wb");
	if (f != NULL) {
		if (size > 0)
			(void)fwrite(data, 1, size, f);
		fclose(f);
	}
}
