/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the exports on arbitrary bytes, handed to tk_export_file_flags() as a
 * file (a memfd), with two user pairs and a counter declared; the target aborts where two
 * ways that must agree do not (the same status, message, statistics and bytes):
 * - Perfetto's fused run (export_perfetto.c, pf_scan() over the parser's blocks, and
 *   pf_light_run() and pf_slot_run() over its runs without the scan (TK__EXPORT_NO_SCAN):
 *   the model's light path and the packets in one loop) and the model's own light path
 *   (TK__EXPORT_MODEL_RUNS). The input's size picks one event at a time (odd) and symbols
 *   (bit 1).
 * - Chrome JSON's run (export_json.c, json_run(): USER instants and pair ends written from
 *   their words) and the same format without it (tk__export_json_model: every instant and
 *   pair end decoded).
 * - The statistics one event at a time (every event decoded), through their own scan of the
 *   parser's runs (export_stats.c, st_scan()) and through the light path's runs
 *   (TK__EXPORT_NO_SCAN).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracekit/export.h"
#include "export/export_internal.h" /* tk__export_create(), tk__export_run_file() */

#define ONE_BY_ONE 0x40000000u  /* TK__EXPORT_ONE_BY_ONE (src/export/export_internal.h) */
#define MODEL_RUNS 0x20000000u  /* TK__EXPORT_MODEL_RUNS */
#define NO_SCAN 0x10000000u     /* TK__EXPORT_NO_SCAN */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Chrome JSON without its run (export_json.c). */
extern const tk__format tk__export_json_model;

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

/* export() of Chrome JSON through tk__export_json_model: tk_export_file_flags()'s steps */
static void export_json_model(const char *path, unsigned flags, struct out *o)
{
	tk_export *x = NULL;
	FILE *f = open_memstream(&o->buf, &o->len);
	memset(&o->st, 0, sizeof(o->st));
	o->err[0] = '\0';
	o->rc = -1;
	if (f == NULL)
		return;
	if (tk__export_create(&x, &tk__export_json_model, TK_EXPORT_CHROME_JSON, f) != 0) {
		fclose(f);
		return;
	}
	x->one_by_one = (flags & ONE_BY_ONE) != 0;
	o->rc = (flags & TK_EXPORT_SYMBOLS) ? tk__export_use_symbols(x, path) : 0;
	if (o->rc == 0)
		o->rc = tk__export_run_file(x, path, "10:11=item,12:13", "40=level", &o->st, o->err, sizeof(o->err));
	else
		tk_export_free(x);
	fclose(f);
}

static void same(const struct out *a, const struct out *b, const char *what)
{
	if (a->rc != b->rc || strcmp(a->err, b->err) != 0 || memcmp(&a->st, &b->st, sizeof(a->st)) != 0 ||
	    a->len != b->len || (a->len > 0 && memcmp(a->buf, b->buf, a->len) != 0)) {
		fprintf(stderr, "fuzz_export: %s (%d/%d, %zu/%zu bytes)\n", what, a->rc, b->rc, a->len, b->len);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	unsigned flags = ((size & 1) ? ONE_BY_ONE : 0) | ((size & 2) ? TK_EXPORT_SYMBOLS : 0);
	struct out a = { 0 }, b = { 0 }, j = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
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
	same(&a, &b, "Perfetto's fused run differs from the model's");
	free(b.buf);
	b = (struct out){ 0 };
	export(path, TK_EXPORT_PERFETTO, flags | NO_SCAN, &b);
	same(&a, &b, "Perfetto's scan differs from its runs without it");
	export(path, TK_EXPORT_CHROME_JSON, flags, &j);
	free(b.buf);
	b = (struct out){ 0 };
	export_json_model(path, flags, &b);
	same(&j, &b, "Chrome JSON's run differs from every instant and pair end decoded");
	export(path, TK_EXPORT_STATS_TEXT, ONE_BY_ONE, &s1);
	export(path, TK_EXPORT_STATS_TEXT, 0, &s2);
	export(path, TK_EXPORT_STATS_TEXT, NO_SCAN, &s3);
	same(&s1, &s2, "the statistics through their scan differ from one event at a time");
	same(&s1, &s3, "the statistics through the light path's runs differ from one event at a time");
	free(a.buf);
	free(b.buf);
	free(j.buf);
	free(s1.buf);
	free(s2.buf);
	free(s3.buf);
	close(fd);
	return 0;
}
