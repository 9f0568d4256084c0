/* SPDX-License-Identifier: MIT */
/*
 * Issue 13 benchmark helper: writes a VTune interval CSV file for bench/run_csv.sh.
 *   bench_csv FILE.csv ROWS   rows in order of start time, tasks on 8 threads and frames,
 *                             12 names, CLOCK_MONOTONIC_RAW timestamps (about 45 bytes a row)
 * The timing itself is done by run_csv.sh around tracecsv, beside wc -l on the same file.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	static const char *const names[] = {"frame", "parse_input", "render", "taskType1", "taskType2",
					    "compress", "io_wait", "\"quoted, name\"", "decode", "schedule",
					    "gc", "flush"};
	if (argc != 3) {
		fprintf(stderr, "usage: bench_csv FILE.csv ROWS\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "w");
	if (f == NULL) {
		perror(argv[1]);
		return 1;
	}
	static char buf[1 << 20];
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	uint64_t rows = strtoull(argv[2], NULL, 10);
	uint64_t t = 1000000000000ull, x = 88172645463325252ull;
	fputs("name,start_tsc.CLOCK_MONOTONIC_RAW,end_tsc,pid,tid\n", f);
	for (uint64_t i = 0; i < rows; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t += x % 1000;
		unsigned n = (unsigned)(x >> 20) % 12;
		uint64_t len = (x >> 32) % 100000;
		if (n == 0)
			fprintf(f, "%s,%" PRIu64 ",%" PRIu64 ",,\n", names[n], t, t + len);
		else
			fprintf(f, "%s,%" PRIu64 ",%" PRIu64 ",4242,%u\n", names[n], t, t + len, 4243 + (unsigned)(x >> 40) % 8);
	}
	if (fclose(f) != 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
