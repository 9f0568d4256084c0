/* SPDX-License-Identifier: MIT */
/*
 * Benchmark: parsing a large .byfl file with every callback set, beside two anchors
 * measured in the same run on the same (cached) file: read(2) in 1 MiB blocks (the I/O
 * floor) and a loop of one-byte fread() calls through a 10 MiB stdio buffer, which is how
 * Byfl's parsebfbin.c reads every tag and integer. Every loop, the anchors included, is
 * timed best of three, interleaved, so that a noisy neighbour cannot favour either side
 * of a ratio (the per-byte loop is the slow one: this triples the longest part of the
 * run). Prints each figure and the ratios.
 * Usage: bfbin_parse [--generate MIB] FILE.byfl
 *   --generate writes FILE first: a Byfl-like Functions table of MIB mebibytes (28 columns:
 *   25 uint64 counters, 3 strings, a bool) and the small key:value tables of a real run.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/bfbin_writer.h"

struct counts {
	uint64_t tables, columns, rows, u64_sum, strings, string_bytes, bools, ends;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Every callback does a little work on what it receives, as a real client would. */
static void c_error(void *ud, const char *m)
{
	(void)ud;
	fprintf(stderr, "bfbin_parse: %s\n", m);
	exit(1);
}
static void c_table(void *ud, const char *n)
{
	((struct counts *)ud)->tables += (unsigned char)n[0] != 0;
}
static void c_end(void *ud)
{
	((struct counts *)ud)->ends++;
}
static void c_column(void *ud, const char *n)
{
	((struct counts *)ud)->columns += (unsigned char)n[0] != 0;
}
static void c_row_begin(void *ud)
{
	((struct counts *)ud)->rows++;
}
static void c_u64(void *ud, uint64_t v)
{
	((struct counts *)ud)->u64_sum += v;
}
static void c_string(void *ud, const char *s)
{
	struct counts *c = ud;
	c->strings++;
	c->string_bytes += (unsigned char)s[0];
}
static void c_bool(void *ud, uint8_t v)
{
	((struct counts *)ud)->bools += v;
}

static const bfbin_callback_t all_callbacks = {
	c_error, c_table, c_end, c_table, c_end, c_end, c_column, c_column,
	c_column, c_end, c_row_begin, c_u64, c_string, c_bool, c_end,
};

static void die_rc(const char *what, int rc)
{
	fprintf(stderr, "bfbin_parse: %s: %s\n", what, tk_strerror(rc));
	exit(1);
}

static void generate(const char *path, uint64_t target)
{
	static const char *const names[] = { "main", "compute(int)", "helper(double)", "std::vector<double>::push_back",
					     "solve_linear_system(Matrix const&, Vector&)", "fib" };
	tk_bfbin_writer *w;
	char stack[256], mangled[256];
	uint64_t row = 0, x = 88172645463325252ull;
	int rc, i;

	if ((rc = tk_bfbin_writer_open(&w, path, 0)) != TK_OK)
		die_rc(path, rc);
	if ((rc = tk_bfbin_begin_basic(w, "Functions")) != TK_OK)
		die_rc("begin", rc);
	for (i = 0; i < 25; i++) {
		char name[32];
		snprintf(name, sizeof(name), "Counter %d", i);
		tk_bfbin_add_column(w, TK_BFBIN_UINT64, name);
	}
	tk_bfbin_add_column(w, TK_BFBIN_STRING, "Mangled call stack");
	tk_bfbin_add_column(w, TK_BFBIN_STRING, "Demangled call stack");
	tk_bfbin_add_column(w, TK_BFBIN_STRING, "Leaf file name");
	tk_bfbin_add_column(w, TK_BFBIN_BOOL, "Inlined");
	while (tk_bfbin_writer_bytes(w) < target) {
		const char *leaf = names[row % 6], *caller = names[(row / 6) % 6];
		snprintf(stack, sizeof(stack), "%s # %s # main", leaf, caller);
		snprintf(mangled, sizeof(mangled), "_Z%zu%s _Z%zu%s main", strlen(leaf), leaf, strlen(caller), caller);
		for (i = 0; i < 25; i++) {
			x ^= x << 13; /* xorshift: values of every size */
			x ^= x >> 7;
			x ^= x << 17;
			rc = tk_bfbin_put_uint64(w, x >> (x & 63));
		}
		rc |= tk_bfbin_put_string(w, mangled);
		rc |= tk_bfbin_put_string(w, stack);
		rc |= tk_bfbin_put_string(w, row & 1 ? "src/solver.cpp" : "src/main.c");
		rc |= tk_bfbin_put_bool(w, (int)(row & 2));
		rc |= tk_bfbin_end_row(w);
		if (rc != TK_OK)
			die_rc("row", rc);
		row++;
	}
	tk_bfbin_end_table(w);
	tk_bfbin_begin_keyval(w, "Program");
	tk_bfbin_kv_uint64(w, "Rows", row);
	tk_bfbin_end_table(w);
	tk_bfbin_begin_keyval(w, "System information");
	tk_bfbin_kv_string(w, "Executable name", "./bench");
	if ((rc = tk_bfbin_writer_close(w)) != TK_OK)
		die_rc("close", rc);
}

/* Anchor 1: the I/O floor, read(2) in 1 MiB blocks. */
static double read_floor(const char *path, uint64_t *sum)
{
	static unsigned char buf[1 << 20];
	int fd = open(path, O_RDONLY);
	double t0 = now();
	ssize_t n;

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		*sum += buf[n - 1];
	close(fd);
	return now() - t0;
}

/* Anchor 2: Byfl's way of reading, one fread() per byte through a 10 MiB buffer. */
static double per_byte_fread(const char *path, uint64_t *sum)
{
	FILE *f = fopen(path, "rb");
	char *vbuf = malloc(10 << 20);
	unsigned char c;
	double t0 = now();

	if (f == NULL || vbuf == NULL) {
		perror(path);
		exit(1);
	}
	setvbuf(f, vbuf, _IOFBF, 10 << 20);
	while (fread(&c, 1, 1, f) == 1)
		*sum += c;
	fclose(f);
	free(vbuf);
	return now() - t0;
}

static double parse_once(const char *path, struct counts *c, int seed_api)
{
	double t0;

	memset(c, 0, sizeof(*c));
	t0 = now();
	if (seed_api) {
		bf_process_byfl_file(path, (bfbin_callback_t *)&all_callbacks, c, 0);
	} else {
		int rc = tk_bfbin_parse(path, &all_callbacks, c, NULL);
		if (rc != TK_OK)
			die_rc(path, rc);
	}
	return now() - t0;
}

int main(int argc, char **argv)
{
	const char *path;
	struct counts c;
	struct stat sb;
	uint64_t sum = 0;
	double t_read = 1e30, t_fread = 1e30, t_parse = 1e30, t_seed = 1e30, gb;
	int i;

	if (argc == 4 && strcmp(argv[1], "--generate") == 0) {
		double t0 = now();
		path = argv[3];
		generate(path, (uint64_t)strtoull(argv[2], NULL, 10) << 20);
		printf("generated %s in %.2f s\n", path, now() - t0);
	} else if (argc == 2) {
		path = argv[1];
	} else {
		fputs("usage: bfbin_parse [--generate MIB] FILE.byfl\n", stderr);
		return 2;
	}
	if (stat(path, &sb) != 0) {
		perror(path);
		return 1;
	}
	gb = (double)sb.st_size / 1e9;

	/*
	 * Warm the page cache, then best of three for every loop (shared, noisy machine). The
	 * anchor gets the same chance as the parser: its best run makes the ratios smaller.
	 */
	read_floor(path, &sum);
	for (i = 0; i < 3; i++) {
		double t = read_floor(path, &sum);
		t_read = t < t_read ? t : t_read;
		t = parse_once(path, &c, 0);
		t_parse = t < t_parse ? t : t_parse;
		t = parse_once(path, &c, 1);
		t_seed = t < t_seed ? t : t_seed;
		t = per_byte_fread(path, &sum);
		t_fread = t < t_fread ? t : t_fread;
	}

	printf("file: %s, %.3f GB, %llu rows, %llu values\n", path, gb, (unsigned long long)c.rows,
	       (unsigned long long)(c.rows * 29));
	printf("anchor read(2) 1 MiB blocks:             %8.3f s  %8.0f MB/s\n", t_read, gb * 1e3 / t_read);
	printf("anchor per-byte fread (Byfl parsebfbin): %8.3f s  %8.0f MB/s\n", t_fread, gb * 1e3 / t_fread);
	printf("tk_bfbin_parse, all callbacks set:       %8.3f s  %8.0f MB/s  (%.0f M callbacks/s)\n", t_parse,
	       gb * 1e3 / t_parse, (double)(c.rows * 31 + c.tables * 2) / t_parse / 1e6);
	printf("bf_process_byfl_file, all callbacks set: %8.3f s  %8.0f MB/s\n", t_seed, gb * 1e3 / t_seed);
	printf("ratio parse / per-byte fread:  %6.1fx  (goal >= 10x)\n", t_fread / t_parse);
	printf("ratio bf_process_byfl_file / per-byte fread: %6.1fx  (goal >= 10x)\n", t_fread / t_seed);
	printf("parse throughput:              %6.2f GB/s (goal >= 1 GB/s)\n", gb / t_parse);
	printf("ratio parse / read(2) floor:   %6.2f  (1.00 = as fast as reading the file)\n", t_read / t_parse);
	if (sum == 42) /* keep the anchors' loops */
		puts("");
	return 0;
}
