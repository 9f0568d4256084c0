/* SPDX-License-Identifier: MIT */
/*
 * Benchmark of the .tb5 container behind the TBRW API (issue 4), each figure beside an anchor
 * measured in the same run on the same data:
 *   add_data   TBRW_add_data of 40-byte sample records (PC + TSC), in 1 MiB batches and one
 *              record per call (the chapter 6 style), vs write(2) of the same bytes
 *   enumerate  TBRW_enumerate_data over the cached file, touching every record, vs read(2) of
 *              the file in 1 MiB blocks touching the same bytes
 *   dobind     TBRW_dobind of samples over 1,000 modules in 10 processes, vs enumerating the
 *              same samples (the cost of visiting each sample once)
 *   open       TBRW_open + TBRW_close of a large file (default 10 GiB), cached and with the
 *              file's pages dropped from the page cache, vs open(2) + fstat(2) + close(2)
 * Usage: bench_tb5 DIR [DATA_MIB [OPEN_GIB [BIND_MSAMPLES]]]  (defaults 512, 10, 20)
 * add_data, enumerate and dobind run on files in MEMDIR ($TB5_BENCH_MEMDIR, default
 * /dev/shm when it has room): on a disk, writes of gigabytes run at whatever speed the
 * kernel's dirty-page throttling grants (on these shared machines from 0.6 to 3 GB/s, run to
 * run), which measures the disk, not the library. The big file for the open test is in DIR.
 * TB5_BENCH_ONLY=add|enumerate|bind|open runs one part (add and enumerate run together).
 * Every file is created in DIR and removed at the end.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "tracekit/samprec_shared.h"
#include "tracekit/tbrw.h"

typedef struct {
	TBRW_SampleRecordPC pc;
	TBRW_SampleRecordTSC tsc;
} sample;

#define BATCH_RECORDS 26214 /* 1 MiB of 40-byte records, rounded down */
#define N_PROCS 10
#define MODS_PER_PROC 100
#define MOD_SPAN 0x100000ull /* each module is 1 MiB long */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die_tbrw(TBRW_U32 rc, const char *what)
{
	const TBRW_CHAR *text = NULL;

	TBRW_error_string(rc, &text);
	fprintf(stderr, "bench_tb5: %s: %ls (%s)\n", what, text ? text : L"?", tk_tbrw_error_detail());
	exit(1);
}

#define CK(call)                                                                                               \
	do {                                                                                                   \
		TBRW_U32 rc_ = (call);                                                                         \
		if (rc_ != VT_SUCCESS)                                                                         \
			die_tbrw(rc_, #call);                                                                  \
	} while (0)

static wchar_t *wpath(const char *path)
{
	static wchar_t buf[4096];

	if (mbstowcs(buf, path, 4096) >= 4096) {
		fprintf(stderr, "bench_tb5: path too long: %s\n", path);
		exit(1);
	}
	return buf;
}

/*
 * Sample streams. Uniform: every sample an independent pseudo-random thread, module and
 * address (the worst case for every cache). Typical: what a sampling driver records: 4 CPUs
 * interleaved in time order, each running a thread for 32 samples before switching to
 * another, and 9 samples in 10 landing in the module its thread was last seen in (hot code).
 */
#define N_CPUS 4
#define RUN 32
static int typical_stream;
static struct {
	unsigned proc, thread, mod, left;
} cpu_state[N_CPUS];

static uint64_t mix(uint64_t i)
{
	uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull;

	x ^= x >> 29;
	x *= 0xBF58476D1CE4E5B9ull;
	return x ^ (x >> 32);
}

static void make_sample(sample *s, uint64_t i)
{
	uint64_t x = mix(i);
	unsigned proc, mod, thread;

	if (typical_stream) {
		unsigned c = (unsigned)(i % N_CPUS);
		if (cpu_state[c].left == 0) {
			cpu_state[c].proc = (unsigned)(x % N_PROCS);
			cpu_state[c].thread = (unsigned)(x >> 40) % 4;
			cpu_state[c].mod = (unsigned)((x >> 8) % MODS_PER_PROC);
			cpu_state[c].left = RUN;
		}
		cpu_state[c].left--;
		if ((x >> 50) % 10 == 0)
			cpu_state[c].mod = (unsigned)((x >> 8) % MODS_PER_PROC);
		proc = cpu_state[c].proc;
		mod = cpu_state[c].mod;
		thread = cpu_state[c].thread;
	} else {
		proc = (unsigned)(x % N_PROCS);
		mod = (unsigned)((x >> 8) % MODS_PER_PROC);
		thread = (unsigned)(x >> 40) % 4;
	}
	memset(s, 0, sizeof(*s));
	s->pc.eip = (TBRW_U32)(0x10000000u + mod * MOD_SPAN + ((x >> 20) & 0xfffff));
	s->pc.codeMode = TBRW_MODE_32BIT;
	s->pc.cs = 0x1B;
	s->pc.pidRecIndexRaw = 1;
	s->pc.pidRecIndex = 1000 + proc;
	s->pc.tidIsRaw = 1;
	s->pc.tid = 1000 + proc * 4 + thread;
	s->pc.cpuNum = (TBRW_U16)(i % N_CPUS);
	s->tsc.tsc = 1000000 + i * 100;
}

/* Opens a new file with stream 0 described as PC + TSC records, its data section open. */
static TBRW_PTR open_stream(const char *path, TBRW_U32 extra_flags, int with_modules)
{
	TBRW_PTR h = NULL;
	TBRW_STREAM_INFO si;
	TBRW_SAMPREC_DESC_ENTRY d;

	CK(TBRW_open(&h, wpath(path), TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS | extra_flags));
	if (with_modules) {
		TBRW_MODULE m;

		CK(TBRW_writing_section(h, TBRW_MODULE_SECTION));
		for (unsigned p = 0; p < N_PROCS; p++) {
			for (unsigned k = 0; k < MODS_PER_PROC; k++) {
				memset(&m, 0, sizeof(m));
				m.module_size = sizeof(m);
				m.module_associated_pid = 1000 + p;
				m.module_load_address = 0x10000000u + k * MOD_SPAN;
				m.module_length = MOD_SPAN;
				m.module_unload_tsc = ~(TBRW_U64)0;
				m.module_segment_type = TBRW_MODE_32BIT;
				m.module_flags = TBRW_MODULE_TSC_USED | TBRW_MODULE_LOADED |
						 (k == 0 ? TBRW_MODULE_IS_EXE | TBRW_MODULE_1ST_MODULE_REC_IN_PROCESS : 0);
				m.module_name.soi_ptr = (TBRW_CHAR *)(k == 0 ? L"app" : L"lib.so");
				m.module_path.soi_ptr = (TBRW_CHAR *)(k == 0 ? L"/usr/bin/app" : L"/usr/lib/lib.so");
				CK(TBRW_add_module(h, &m));
			}
		}
		CK(TBRW_done_section(h, TBRW_MODULE_SECTION));
	}
	CK(TBRW_writing_stream(h, 0));
	memset(&si, 0, sizeof(si));
	si.stream_info_size = sizeof(si);
	si.stream_type = TBRW_SAMPLING_STREAM;
	si.command_line.soi_ptr = (TBRW_CHAR *)L"bench_tb5";
	CK(TBRW_writing_stream_section(h, 0, TBRW_STREAM_INFO_SECTION));
	CK(TBRW_set_stream_info(h, 0, &si));
	CK(TBRW_done_stream_section(h, 0, TBRW_STREAM_INFO_SECTION));
	CK(TBRW_writing_stream_section(h, 0, TBRW_DATA_DESCRIPTION_SECTION));
	memset(&d, 0, sizeof(d));
	d.desc_size = sizeof(d);
	d.desc_data_size = sizeof(TBRW_SampleRecordPC);
	d.desc_type = ST_LEGACY_SAMPLE_RECORD;
	d.desc_name.soi_ptr = (TBRW_CHAR *)L"SampleRecord";
	CK(TBRW_add_data_descriptor_entry(h, 0, &d));
	d.desc_offset = sizeof(TBRW_SampleRecordPC);
	d.desc_data_size = sizeof(TBRW_SampleRecordTSC);
	d.desc_type = ST_TIME_STAMP;
	d.desc_subtype = SST_TSC;
	d.desc_name.soi_ptr = (TBRW_CHAR *)L"TimeStamp";
	CK(TBRW_add_data_descriptor_entry(h, 0, &d));
	CK(TBRW_done_stream_section(h, 0, TBRW_DATA_DESCRIPTION_SECTION));
	CK(TBRW_writing_stream_section(h, 0, TBRW_DATA_SECTION));
	return h;
}

static void close_stream(TBRW_PTR h)
{
	CK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	CK(TBRW_done_stream(h, 0));
	CK(TBRW_close(h));
}

/* Writes n_records through TBRW_add_data in 1 MiB batches; returns the seconds add_data took. */
static double write_batched(const char *path, uint64_t n_records, TBRW_U32 flags, int with_modules, double *t_close)
{
	sample *batch = malloc(sizeof(sample) * BATCH_RECORDS);
	TBRW_PTR h;
	double t0, t_add = 0;

	if (batch == NULL)
		exit(1);
	h = open_stream(path, flags, with_modules);
	for (uint64_t i = 0; i < n_records;) {
		uint64_t n = n_records - i < BATCH_RECORDS ? n_records - i : BATCH_RECORDS;
		for (uint64_t k = 0; k < n; k++)
			make_sample(&batch[k], i + k);
		t0 = now();
		CK(TBRW_add_data(h, 0, (TBRW_U32)(n * sizeof(sample)), batch));
		t_add += now() - t0;
		i += n;
	}
	t0 = now();
	close_stream(h);
	if (t_close != NULL)
		*t_close = now() - t0;
	free(batch);
	return t_add;
}

/* Writes n_records one TBRW_add_data call per record (chapter 6 style). */
static double write_per_record(const char *path, uint64_t n_records)
{
	sample *batch = malloc(sizeof(sample) * BATCH_RECORDS);
	TBRW_PTR h;
	double t0, t_add = 0;

	if (batch == NULL)
		exit(1);
	h = open_stream(path, 0, 0);
	for (uint64_t i = 0; i < n_records;) {
		uint64_t n = n_records - i < BATCH_RECORDS ? n_records - i : BATCH_RECORDS;
		for (uint64_t k = 0; k < n; k++)
			make_sample(&batch[k], i + k);
		t0 = now();
		for (uint64_t k = 0; k < n; k++)
			CK(TBRW_add_data(h, 0, sizeof(sample), &batch[k]));
		t_add += now() - t0;
		i += n;
	}
	close_stream(h);
	free(batch);
	return t_add;
}

/* The anchor: the same bytes through write(2) in the same 1 MiB batches. */
static double write_anchor(const char *path, uint64_t n_records)
{
	sample *batch = malloc(sizeof(sample) * BATCH_RECORDS);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	double t0, t = 0;

	if (batch == NULL || fd < 0)
		exit(1);
	for (uint64_t i = 0; i < n_records;) {
		uint64_t n = n_records - i < BATCH_RECORDS ? n_records - i : BATCH_RECORDS;
		for (uint64_t k = 0; k < n; k++)
			make_sample(&batch[k], i + k);
		t0 = now();
		if (write(fd, batch, n * sizeof(sample)) != (ssize_t)(n * sizeof(sample))) {
			perror("bench_tb5: write");
			exit(1);
		}
		t += now() - t0;
		i += n;
	}
	close(fd);
	free(batch);
	return t;
}

struct visit {
	uint64_t records, sum;
};

static TBRW_U32 on_data(void *data, TBRW_U32 data_size, TBRW_U32 num_entries, void *user_ptr)
{
	struct visit *v = user_ptr;
	const sample *s = data;

	(void)data_size;
	for (TBRW_U32 i = 0; i < num_entries; i++)
		v->sum += s[i].pc.eip;
	v->records += num_entries;
	return 1;
}

static double enumerate_once(const char *path, struct visit *v)
{
	TBRW_PTR h = NULL;
	double t0 = now();

	memset(v, 0, sizeof(*v));
	CK(TBRW_open(&h, wpath(path), TBRW_FILE_READ));
	CK(TBRW_reading_stream(h, 0));
	CK(TBRW_reading_stream_section(h, 0, TBRW_DATA_SECTION));
	CK(TBRW_enumerate_data(h, 0, on_data, v, 0));
	CK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	CK(TBRW_done_stream(h, 0));
	CK(TBRW_close(h));
	return now() - t0;
}

/* The anchor: read(2) of the whole file in 1 MiB blocks, summing the same field. */
static double read_anchor(const char *path, uint64_t *sum)
{
	static unsigned char buf[BATCH_RECORDS * sizeof(sample)];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	double t0 = now();
	ssize_t n;

	if (fd < 0)
		exit(1);
	*sum = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		const sample *s = (const sample *)buf;
		for (size_t i = 0; i < (size_t)n / sizeof(sample); i++)
			*sum += s[i].pc.eip;
	}
	close(fd);
	return now() - t0;
}

static TBRW_U32 on_bind(const void *data, TBRW_U32 size, TBRW_U64 n, const DATA_BIND_STRUCT *b,
		       TBRW_U32 bind_size, void *user_ptr)
{
	uint64_t *unbound = user_ptr;

	(void)data;
	(void)size;
	(void)bind_size;
	for (TBRW_U64 i = 0; i < n; i++)
		*unbound += b[i].module_index == TBRW_BIND_NO_INDEX;
	return 1;
}

static double best(double a, double b)
{
	return a < b ? a : b;
}

int main(int argc, char **argv)
{
	const char *dir, *memdir, *only;
	char p_data[4096], p_rec[4096], p_anchor[4096], p_zstd[4096], p_bind[4096], p_big[4096];
	uint64_t data_mib = 512, open_gib = 10, bind_m = 20, n, n_rec, n_bind, n_big, sum;
	double t_add, t_rec, t_write, t_zstd, t_close = 0, t_enum = 1e9, t_read = 1e9, t_bind, t_bind_enum = 1e9;
	double t_bind_typical = 1, t_open = 1e9, t_open_cold = 1e9, t_sys = 1e9, gb;
	struct visit v;
	struct stat sb;

	if (argc < 2 || argc > 5) {
		fprintf(stderr, "usage: bench_tb5 DIR [DATA_MIB [OPEN_GIB [BIND_MSAMPLES]]]\n");
		return 2;
	}
	dir = argv[1];
	if (argc > 2)
		data_mib = strtoull(argv[2], NULL, 10);
	if (argc > 3)
		open_gib = strtoull(argv[3], NULL, 10);
	if (argc > 4)
		bind_m = strtoull(argv[4], NULL, 10);
	memdir = getenv("TB5_BENCH_MEMDIR");
	if (memdir == NULL) {
		struct statvfs vfs;
		memdir = statvfs("/dev/shm", &vfs) == 0 &&
				 (double)vfs.f_bavail * (double)vfs.f_frsize > 3.5 * (double)(data_mib << 20)
			 ? "/dev/shm"
			 : dir;
	}
	snprintf(p_data, sizeof(p_data), "%s/tb5bench-data.tb5", memdir);
	snprintf(p_rec, sizeof(p_rec), "%s/tb5bench-per_record.tb5", memdir);
	snprintf(p_anchor, sizeof(p_anchor), "%s/tb5bench-anchor.bin", memdir);
	snprintf(p_zstd, sizeof(p_zstd), "%s/tb5bench-zstd.tb5", memdir);
	snprintf(p_bind, sizeof(p_bind), "%s/tb5bench-bind.tb5", memdir);
	snprintf(p_big, sizeof(p_big), "%s/big.tb5", dir);

	only = getenv("TB5_BENCH_ONLY");
	if (only != NULL && strcmp(only, "bind") == 0)
		goto bind;
	if (only != NULL && strcmp(only, "open") == 0)
		goto big;
	n = data_mib * 1048576 / sizeof(sample);
	n_rec = n / 4; /* per-record calls: a quarter of the data is enough for a steady figure */
	gb = (double)(n * sizeof(sample)) / 1e9;

	/* ---- add_data ----
	 * Best of 3 rounds, the anchor and each way of writing alternating, every file removed
	 * after its run so that the next run reuses its memory. Each run starts with no dirty
	 * pages (sync). Writing gigabytes of new pages measures the machine instead: the kernel
	 * throttles a writer that is ahead of the disk, and on these VMs memory the guest has
	 * not touched before costs the hypervisor a fault per page (write(2) itself drops from
	 * 3 to 0.4 GB/s once the page cache grows past 2 GB). */
	t_write = t_add = t_rec = t_zstd = 1e9;
	for (int r = 0; r < 3; r++) {
		double t_c = 0;
		sync();
		t_write = best(t_write, write_anchor(p_anchor, n));
		if (r < 2)
			unlink(p_anchor);
		sync();
		t_add = best(t_add, write_batched(p_data, n, 0, 0, &t_c));
		t_close = r == 0 ? t_c : best(t_close, t_c);
		if (r < 2)
			unlink(p_data);
		sync();
		t_rec = best(t_rec, write_per_record(p_rec, n_rec));
		unlink(p_rec);
		sync();
		t_zstd = best(t_zstd, write_batched(p_zstd, n, TBRW_FILE_COMPRESS, 0, NULL));
		if (r < 2)
			unlink(p_zstd);
	}
	if (stat(p_zstd, &sb) != 0)
		return 1;
	printf("== TBRW_add_data: %.2f GB of 40-byte sample records (%llu records) in %s, best of 3\n", gb,
	       (unsigned long long)n, memdir);
	printf("                                                      GB/s      ratio\n");
	printf("anchor: write(2), 1 MiB blocks                       %6.2f\n", gb / t_write);
	printf("TBRW_add_data, 1 MiB batches                         %6.2f      %.2fx write(2)\n", gb / t_add,
	       t_write / t_add);
	printf("TBRW_add_data, one record per call                   %6.2f      %.2fx write(2)  (%.0f M records/s)\n",
	       gb / 4 / t_rec, t_write / 4 / t_rec, (double)n_rec / t_rec / 1e6);
	printf("TBRW_add_data, 1 MiB batches, zstd                   %6.2f      %.2fx write(2)  (file %.0f%% of raw)\n",
	       gb / t_zstd, t_write / t_zstd, 100.0 * (double)sb.st_size / (double)(n * sizeof(sample)));
	printf("TBRW_close (directory, fsync, rename)                %6.3f s\n", t_close);
	printf("goal: TBRW_add_data >= 1 GB/s: %s\n\n", gb / t_add >= 1.0 ? "met" : "NOT met");
	unlink(p_zstd);

	/* ---- enumerate_data, cached ---- */
	for (int r = 0; r < 3; r++) {
		t_read = best(t_read, read_anchor(p_anchor, &sum));
		t_enum = best(t_enum, enumerate_once(p_data, &v));
	}
	if (v.records != n || v.sum != sum) {
		fprintf(stderr, "bench_tb5: enumerate saw %llu records (sum %llu), expected %llu (sum %llu)\n",
			(unsigned long long)v.records, (unsigned long long)v.sum, (unsigned long long)n,
			(unsigned long long)sum);
		return 1;
	}
	unlink(p_anchor);
	unlink(p_data);
	printf("== TBRW_enumerate_data: the same %.2f GB, cached (best of 3)\n", gb);
	printf("                                                      GB/s      ratio\n");
	printf("anchor: read(2), 1 MiB blocks, same field summed     %6.2f\n", gb / t_read);
	printf("TBRW_enumerate_data (open to close)                  %6.2f      %.2fx read(2)\n", gb / t_enum,
	       t_read / t_enum);
	printf("goal: TBRW_enumerate_data >= 5 GB/s: %s\n\n", gb / t_enum >= 5.0 ? "met" : "NOT met");

	if (only != NULL)
		return 0;
bind:
	/* ---- dobind ---- */
	n_bind = bind_m * 1000000;
	printf("== TBRW_dobind: %llu samples, %d modules in %d processes of 4 threads\n", (unsigned long long)n_bind,
	       N_PROCS * MODS_PER_PROC, N_PROCS);
	printf("                                                 M samples/s      ratio\n");
	for (typical_stream = 1; typical_stream >= 0; typical_stream--) {
		TBRW_PTR h = NULL;
		uint64_t unbound = 0;
		double t0;

		memset(cpu_state, 0, sizeof(cpu_state));
		write_batched(p_bind, n_bind, 0, 1, NULL);
		t_bind_enum = 1e9;
		for (int r = 0; r < 3; r++)
			t_bind_enum = best(t_bind_enum, enumerate_once(p_bind, &v));
		t_bind = 1e9;
		for (int r = 0; r < 3; r++) {
			CK(TBRW_open(&h, wpath(p_bind), TBRW_FILE_READ));
			t0 = now();
			CK(TBRW_dobind(h, 0));
			t_bind = best(t_bind, now() - t0);
			unbound = 0;
			CK(TBRW_bind_enumerate_data(h, 0, on_bind, &unbound, 0));
			CK(TBRW_close(h));
			if (unbound != 0) {
				fprintf(stderr, "bench_tb5: %llu samples were not bound to a module\n",
					(unsigned long long)unbound);
				return 1;
			}
		}
		unlink(p_bind);
		printf("%s\n", typical_stream ? "typical stream: 4 CPUs, runs of 32 samples per thread, hot modules"
					      : "worst case: every sample an independent random thread and module");
		printf("  anchor: TBRW_enumerate_data of the samples        %7.1f\n", (double)n_bind / t_bind_enum / 1e6);
		printf("  TBRW_dobind (read-only handle, best of 3)         %7.1f      %.2fx enumerate\n",
		       (double)n_bind / t_bind / 1e6, t_bind_enum / t_bind);
		if (typical_stream)
			t_bind_typical = t_bind;
	}
	printf("goal: TBRW_dobind >= 50 M samples/s (typical stream): %s\n\n",
	       (double)n_bind / t_bind_typical >= 50e6 ? "met" : "NOT met");

	if (only != NULL)
		return 0;
big:
	/* ---- open a big file ---- */
	n_big = open_gib * 1073741824ull / sizeof(sample);
	sync();
	{
		double t_big = write_batched(p_big, n_big, 0, 0, NULL);
		printf("== opening a %llu GiB file (written by TBRW_add_data at %.2f GB/s)\n",
		       (unsigned long long)open_gib, (double)(n_big * sizeof(sample)) / 1e9 / t_big);
	}
	for (int r = 0; r < 5; r++) {
		TBRW_PTR h = NULL;
		TBRW_U32 n_streams = 0;
		double t0 = now();
		int fd;

		CK(TBRW_open(&h, wpath(p_big), TBRW_FILE_READ));
		CK(TBRW_get_number_data_streams(h, &n_streams));
		CK(TBRW_close(h));
		t_open = best(t_open, now() - t0);

		t0 = now();
		fd = open(p_big, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &sb) != 0)
			return 1;
		close(fd);
		t_sys = best(t_sys, now() - t0);

		/* the same with the file's pages dropped: what a first open after a reboot costs */
		fd = open(p_big, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 1;
		fdatasync(fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
		t0 = now();
		CK(TBRW_open(&h, wpath(p_big), TBRW_FILE_READ));
		CK(TBRW_get_number_data_streams(h, &n_streams));
		CK(TBRW_close(h));
		t_open_cold = best(t_open_cold, now() - t0);
	}
	unlink(p_big);
	printf("                                                        ms      ratio\n");
	printf("anchor: open(2) + fstat(2) + close(2)               %8.3f\n", t_sys * 1e3);
	printf("TBRW_open + TBRW_close, cached (best of 5)          %8.3f      %.0fx the system calls\n", t_open * 1e3,
	       t_open / t_sys);
	printf("TBRW_open + TBRW_close, pages dropped (best of 5)   %8.3f\n", t_open_cold * 1e3);
	printf("goal: opening a 10 GB file in under 50 ms: %s\n",
	       open_gib >= 10 && t_open_cold < 0.050 && t_open < 0.050 ? "met" : open_gib < 10 ? "not measured (file < 10 GiB)" : "NOT met");
	return 0;
}
