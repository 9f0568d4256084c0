/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the exports on arbitrary bytes, handed to tk_export_file_flags() as a
 * file (a memfd). Perfetto's fused run (export_perfetto.c, pf_light_run() and
 * pf_slot_run(): the model's light path and the packets in one loop) is compared with the
 * model's own light path (TK__EXPORT_MODEL_RUNS): the same status, message, statistics and
 * bytes, or the target aborts. The input's size picks one event at a time (odd) and
 * symbols (bit 1); Chrome JSON is exported too, for what the model shares with it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracekit/export.h"

#define ONE_BY_ONE 0x40000000u  /* TK__EXPORT_ONE_BY_ONE (src/export/export_internal.h) */
#define MODEL_RUNS 0x20000000u  /* TK__EXPORT_MODEL_RUNS */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	char *buf;
	size_t len;
	int rc;
	char err[256];
	tk_export_stats st;
};

static void export(const char *path, tk_export_format fmt, unsigned flags, struct out *o)
{
	FILE *f = open_memstream(&o->buf, &o->len);
	memset(&o->st, 0, sizeof(o->st));
	o->err[0] = '\0';
	o->rc = -1;
	if (f == NULL)
		return;
	o->rc = tk_export_file_flags(path, f, fmt, flags, "10:11=item,12:13", "40=level", &o->st, o->err,
				     sizeof(o->err));
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	unsigned flags = ((size & 1) ? ONE_BY_ONE : 0) | ((size & 2) ? TK_EXPORT_SYMBOLS : 0);
	struct out a = { 0 }, b = { 0 }, j = { 0 };
	int fd = memfd_create("fuzz.kev", 0);

	if (fd < 0)
		return 0;
	if (size > 0 && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	export(path, TK_EXPORT_PERFETTO, flags, &a);
	export(path, TK_EXPORT_PERFETTO, flags | MODEL_RUNS, &b);
	if (a.rc != b.rc || strcmp(a.err, b.err) != 0 || memcmp(&a.st, &b.st, sizeof(a.st)) != 0 ||
	    a.len != b.len || (a.len > 0 && memcmp(a.buf, b.buf, a.len) != 0)) {
		fprintf(stderr, "fuzz_export: Perfetto's fused run differs from the model's (%d/%d, %zu/%zu bytes)\n",
			a.rc, b.rc, a.len, b.len);
		abort();
	}
	export(path, TK_EXPORT_CHROME_JSON, flags, &j);
	free(a.buf);
	free(b.buf);
	free(j.buf);
	close(fd);
	return 0;
}
