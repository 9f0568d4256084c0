/* SPDX-License-Identifier: MIT */
/*
 * Reading benchmark of libtraceparser: a .kev file of N simple events (two payload words,
 * like an LTTng event with two integers), parsed with one counting callback per event.
 * Also measures the I/O pattern of QNX 6.4's libtraceparser (one read() per 16-byte event)
 * on the same file, in the same run. Prints "key=value" lines for bench/run_kev.sh.
 * usage: bench_kev FILE N_EVENTS [RUNS]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/traceparser.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int make_file(const char *path, long n)
{
	tk_kev_header hdr = { .cycles_per_sec = 3000000000u, .cpu_num = 2 };
	tk_kev_writer *w;
	uint64_t t = 0x1fffff000ull;
	long i;
	int rc = tk_kev_writer_open(&w, path, &hdr, 0);

	if (rc != TK_OK)
		return rc;
	for (i = 0; i < n && rc == TK_OK; i++) {
		uint32_t words[2] = { (uint32_t)i, (uint32_t)(i ^ 0x5555) };
		t += 97 + (uint64_t)(i & 15);
		rc = tk_kev_write_event(w, (unsigned)(i & 1), _TRACE_USER_C, (unsigned)(i & 7), t, words, 2);
	}
	if (rc != TK_OK) {
		tk_kev_writer_abort(w);
		return rc;
	}
	return tk_kev_writer_close(w);
}

static int count_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	(void)st;
	(void)h;
	(void)t;
	(void)buf;
	(void)len;
	++*(unsigned long *)ud;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Offset of the first event: after TRACE_HEADER_END:: and SYSPAGE_LEN bytes. */
static long events_offset(const char *path)
{
	char buf[65536];
	FILE *f = fopen(path, "rb");
	size_t n;
	char *end, *sp;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	end = memmem(buf, n, "TRACE_HEADER_END::", 18);
	sp = memmem(buf, n, "TRACE_SYSPAGE_LEN::", 19);
	if (end == NULL || sp == NULL)
		return -1;
	return (long)(end - buf) + 18 + atol(sp + 19);
}

int main(int argc, char **argv)
{
	const char *path;
	long n, runs, r, off;
	struct stat sb;
	double times[32], t0;
	unsigned long count = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_kev FILE N_EVENTS [RUNS]\n");
		return 2;
	}
	path = argv[1];
	n = atol(argv[2]);
	runs = argc > 3 ? atol(argv[3]) : 5;
	if (runs < 1 || runs > 32)
		runs = 5;
	if (stat(path, &sb) != 0 || sb.st_size < n * 16) {
		int rc;
		t0 = now();
		rc = make_file(path, n);
		if (rc != TK_OK) {
			fprintf(stderr, "bench_kev: cannot write %s: %s\n", path, tk_strerror(rc));
			return 1;
		}
		printf("write_events_per_sec=%.0f\n", (double)n / (now() - t0));
	}

	for (r = 0; r < runs; r++) {
		struct traceparser_state *st = traceparser_init(NULL);
		unsigned cls;
		count = 0;
		for (cls = 0; cls < 32; cls++)
			tk_traceparser_cs_internal(st, &count, count_cb, cls, 0, 1023);
		t0 = now();
		if (traceparser(st, &count, path) != 0) {
			fprintf(stderr, "bench_kev: %s\n", (const char *)traceparser_get_info(st, _TRACEPARSER_INFO_ERROR_STR, NULL));
			return 1;
		}
		times[r] = now() - t0;
		traceparser_destroy(&st);
	}
	qsort(times, (size_t)runs, sizeof(times[0]), cmp_double);
	printf("events=%lu\n", count);
	printf("parse_events_per_sec_best=%.0f\n", (double)count / times[0]);
	printf("parse_events_per_sec_median=%.0f\n", (double)count / times[runs / 2]);

	/* QNX 6.4's libtraceparser: while (read(fd, &ev, 16) == 16) */
	off = getenv("BENCH_SKIP_READ") ? -1 : events_offset(path);
	if (off > 0) {
		int fd = open(path, O_RDONLY);
		traceevent_t ev;
		unsigned long k = 0;
		if (fd >= 0 && lseek(fd, off, SEEK_SET) == off) {
			t0 = now();
			while (read(fd, &ev, sizeof(ev)) == (ssize_t)sizeof(ev))
				k += ev.header >> 31;
			printf("read_per_event_events_per_sec=%.0f\n", (double)((unsigned long)(lseek(fd, 0, SEEK_CUR) - off) / 16) / (now() - t0));
			if (k == 0xffffffff)
				puts("");
		}
		if (fd >= 0)
			close(fd);
	}
	return 0;
}
