/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the exporters on arbitrary bytes (handed to tk_export_file_flags() as a
 * file, a memfd), with two user pairs and two counters declared. The statistics are made
 * three ways, which must agree byte for byte with the same status, message and counts (it
 * aborts otherwise): one event at a time (every event decoded), through their own scan of
 * the parser's runs (export_stats.c, st_scan()), and through the light path's runs. The
 * Chrome JSON export runs too (the light path with slices written), to /dev/null.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracekit/export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the library's test flags (src/export/export_internal.h) */
#define ONE_BY_ONE 0x40000000u
#define NO_SCAN 0x20000000u

#define PAIRS "10:11=item,12:13=other"
#define COUNTERS "40=level,41"

struct result {
	char *out;
	size_t len;
	int rc;
	char err[256];
	tk_export_stats st;
};

static void run(const char *path, tk_export_format fmt, unsigned flags, struct result *r)
{
	FILE *f = open_memstream(&r->out, &r->len);

	memset(&r->st, 0, sizeof(r->st));
	r->err[0] = '\0';
	if (f == NULL)
		abort();
	r->rc = tk_export_file_flags(path, f, fmt, flags, PAIRS, COUNTERS, &r->st, r->err, sizeof(r->err));
	fclose(f);
}

static void same(const struct result *a, const struct result *b, const char *what)
{
	if (a->rc != b->rc || strcmp(a->err, b->err) != 0 || memcmp(&a->st, &b->st, sizeof(a->st)) != 0 ||
	    a->len != b->len || memcmp(a->out, b->out, a->len) != 0) {
		fprintf(stderr, "fuzz_export: the statistics %s differ from one event at a time: %d \"%s\" vs %d \"%s\"\n",
			what, a->rc, a->err, b->rc, b->err);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	char path[64];
	int fd;

	if (devnull == NULL && (devnull = fopen("/dev/null", "w")) == NULL)
		return 0;
	fd = memfd_create("fuzz.kev", 0);
	if (fd < 0)
		return 0;
	if (size > 0 && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	struct result ref, scan, runs;
	run(path, TK_EXPORT_STATS_TEXT, ONE_BY_ONE, &ref);
	run(path, TK_EXPORT_STATS_TEXT, 0, &scan);
	run(path, TK_EXPORT_STATS_TEXT, NO_SCAN, &runs);
	same(&ref, &scan, "through their scan");
	same(&ref, &runs, "through the light path's runs");
	free(ref.out);
	free(scan.out);
	free(runs.out);
	tk_export_file(path, devnull, TK_EXPORT_CHROME_JSON, PAIRS, COUNTERS, NULL, NULL, 0);
	close(fd);
	return 0;
}
