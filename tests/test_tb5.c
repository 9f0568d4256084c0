/* SPDX-License-Identifier: MIT */
/*
 * test_tb5.c: the TBRW library over the .tb5 container (src/tb5/): round trips of every
 * section and stream, the chapter 6 style of writing records, binding on hand-made modules
 * and samples, enumeration from start_index with early stops and callback errors, concurrent
 * stream writers, salvage after a crash at every chunk boundary, files larger than a memory
 * limit, and every kind of bad input (calls out of order, bad ids, short buffers, damaged
 * and truncated files, a full disk), each checked for its code and its detail message.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#include "tk_test.h"
#include "tracekit/samprec_shared.h"
#include "tracekit/tbrw.h"

#include "common/tk_crc32c.h"
#include "tb5/tb5_internal.h"


/* ---- helpers ------------------------------------------------------------------------------ */

static const wchar_t *wpath(const char *name)
{
	static wchar_t bufs[8][600];
	static unsigned next;
	wchar_t *w = bufs[next++ % 8];

	swprintf(w, 600, L"%s", tkt_path(name));
	return w;
}

static void check_rc(TBRW_U32 got, TBRW_U32 want, const char *expr, const char *file, int line)
{
	if (got == want)
		return;
	print_error("%s returned %u, expected %u (detail: \"%s\")\n", expr, got, want, tk_tbrw_error_detail());
	_fail(file, line);
}

static void check_detail(const char *want, const char *file, int line)
{
	if (strstr(tk_tbrw_error_detail(), want) != NULL)
		return;
	print_error("detail \"%s\" does not contain \"%s\"\n", tk_tbrw_error_detail(), want);
	_fail(file, line);
}

#define OK(call) check_rc((call), VT_SUCCESS, #call, __FILE__, __LINE__)
#define RC(call, want) check_rc((call), (want), #call, __FILE__, __LINE__)
/* The call fails with code want and the detail mentions what. */
#define FAILS(call, want, what)                                                                    \
	do {                                                                                       \
		check_rc((call), (want), #call, __FILE__, __LINE__);                               \
		check_detail((what), __FILE__, __LINE__);                                          \
	} while (0)
#define DETAIL_HAS(what) check_detail((what), __FILE__, __LINE__)

static void same_string(TBRW_PTR h, TBRW_STRING_OR_ID id, const wchar_t *want)
{
	TBRW_CHAR *buf;
	TBRW_U32 need = 0;

	if (want == NULL) {
		assert_int_equal(id.soi_uniqueid, 0);
		return;
	}
	RC(TBRW_convert_uniqueid_to_string(h, 0, &id, NULL, &need), TBRW_BUFFER_TOO_SMALL);
	assert_int_equal(need, wcslen(want) + 1);
	buf = calloc(need, sizeof *buf);
	assert_non_null(buf);
	OK(TBRW_convert_uniqueid_to_string(h, need, &id, buf, &need));
	if (wcscmp(buf, want) != 0) {
		print_error("string %llu is \"%ls\", expected \"%ls\"\n", (unsigned long long)id.soi_uniqueid, buf, want);
		free(buf);
		fail();
	}
	free(buf);
}

static uint64_t file_size(const char *name)
{
	struct stat sb;

	assert_int_equal(stat(tkt_path(name), &sb), 0);
	return (uint64_t)sb.st_size;
}

static void copy_prefix(const char *from, const char *to, uint64_t len)
{
	size_t n;
	char *data = tkt_read_file(tkt_path(from), &n);

	assert_non_null(data);
	assert_true(len <= n);
	tkt_write_file(tkt_path(to), data, (size_t)len);
	free(data);
}

static void flip_bit(const char *name, uint64_t off, int bit)
{
	int fd = open(tkt_path(name), O_RDWR);
	unsigned char b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
	b ^= (unsigned char)(1u << bit);
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

/* The chunks of a complete file in file order, as its directory and the salvage scan see them:
 * every chunk between the header and the end, from their own headers. */
struct chunk_info {
	uint64_t offset, size; /* size: header + padded payload */
	uint16_t kind;
	uint32_t id, count, stored;
};

static size_t scan_chunks(const char *name, struct chunk_info *out, size_t cap)
{
	size_t len, n = 0;
	unsigned char *d = (unsigned char *)tkt_read_file(tkt_path(name), &len);
	uint64_t off = TB5_HEADER_SIZE;

	assert_non_null(d);
	while (off + TB5_CHUNK_HEADER_SIZE <= len && tb5_get32(d + off) == 0x4B434254u) {
		struct chunk_info c;
		c.offset = off;
		c.kind = tb5_get16(d + off + 4);
		c.id = tb5_get32(d + off + 8);
		c.stored = tb5_get32(d + off + 12);
		c.count = tb5_get32(d + off + 20);
		c.size = TB5_CHUNK_HEADER_SIZE + ((c.stored + 7u) & ~7u);
		assert_true(n < cap);
		out[n++] = c;
		off += c.size;
	}
	free(d);
	return n;
}

static TBRW_PTR open_read(const char *name)
{
	TBRW_PTR h = NULL;

	OK(TBRW_open(&h, wpath(name), TBRW_FILE_READ));
	assert_non_null(h);
	return h;
}

static TBRW_PTR open_create(const char *name, TBRW_U32 extra)
{
	TBRW_PTR h = NULL;

	OK(TBRW_open(&h, wpath(name), TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS | extra));
	assert_non_null(h);
	return h;
}

/* ---- the content of a full file ---------------------------------------------------------- */

/* Stream 0: a sample record and its time stamp, as in chapter 6. */
struct rec0 {
	TBRW_SampleRecordPC pc;
	TBRW_SampleRecordTSC tsc;
};

/* Stream 1: user-defined 12-byte records. */
struct rec1 {
	unsigned char b[12];
};

static struct rec0 rec0_at(uint64_t i)
{
	struct rec0 r;

	memset(&r, 0, sizeof r);
	r.pc.eip = (TBRW_U32)(0x400000u + (i * 0x10u) % 0x10000u);
	r.pc.eflags = 0x246;
	r.pc.cs = 0x1b;
	r.pc.cpuNum = (TBRW_U16)(i % 4);
	r.pc.codeMode = TBRW_MODE_32BIT;
	r.pc.tid = (TBRW_U32)(1 + i % 3);
	r.pc.pidRecIndex = 100;
	r.pc.pidRecIndexRaw = 1;
	r.pc.eventIndex = (TBRW_U32)(i % 2);
	r.tsc.tsc = 1000 + i * 7;
	return r;
}

static struct rec1 rec1_at(uint64_t i)
{
	struct rec1 r;

	for (int k = 0; k < 12; k++)
		r.b[k] = (unsigned char)(i * 31 + (uint64_t)k * 7);
	return r;
}

struct full_opts {
	uint32_t n0, n1; /* records of streams 0 and 1 */
	TBRW_U32 mode; /* extra open flags (TBRW_FILE_COMPRESS) */
	int write_pt; /* write a process/thread section */
};

static TBRW_CPUID_IA32 g_ia32[2] = {{0, 0xa, 0x756e6547, 0x6c65746e, 0x49656e69, 0}, {1, 0x6fb, 0x800, 0xe3bd, 0xbfebfbff, 7}};
static TBRW_CPUID_IA64 g_ia64[1] = {{3, 0x1f0000000ULL, 0}};

static TBRW_SYSTEM g_system(TBRW_NODE *node, TBRW_CPU *cpus, TBRW_CPU_ARCH *archs)
{
	TBRW_SYSTEM sys;

	memset(archs, 0, 3 * sizeof *archs);
	archs[0].arch_size = sizeof *archs;
	archs[0].arch_type = TBRW_GST_X86;
	archs[0].arch_num_cpuid = 2;
	archs[0].cpuid_ia32_array = g_ia32;
	archs[1].arch_size = sizeof *archs;
	archs[1].arch_type = TBRW_GST_IA64;
	archs[1].arch_num_cpuid = 1;
	archs[1].cpuid_ia64_array = g_ia64;
	archs[2].arch_size = sizeof *archs;
	archs[2].arch_type = TBRW_GST_X86;
	memset(cpus, 0, 2 * sizeof *cpus);
	for (int i = 0; i < 2; i++) {
		cpus[i].cpu_size = sizeof *cpus;
		cpus[i].cpu_number = (TBRW_U32)i;
		cpus[i].cpu_native_arch_type = CPU_ARCHITECTURE_IA32;
		cpus[i].cpu_intel_processor_number = 8086 + (TBRW_U32)i;
		cpus[i].cpu_speed_mhz = 3000;
		cpus[i].cpu_fsb_mhz = 1333;
		cpus[i].cpu_cache_L2 = 4096;
		cpus[i].cpu_cache_L3 = 8192;
		cpus[i].cpu_tsc_offset = -12345 * (i + 1);
		cpus[i].cpu_package_num = 0;
		cpus[i].cpu_core_num = (TBRW_U16)i;
		cpus[i].cpu_hardware_thread_num = (TBRW_U16)(2 * i);
		cpus[i].cpu_threads_per_core = 2;
	}
	cpus[0].num_cpu_arch_array = 1;
	cpus[0].cpu_arch_array = &archs[0];
	cpus[1].num_cpu_arch_array = 2;
	cpus[1].cpu_arch_array = &archs[1];
	memset(node, 0, sizeof *node);
	node->node_size = sizeof *node;
	node->node_type_from_shell = 3;
	node->node_id = 1;
	node->node_num_available = 2;
	node->node_num_used = 2;
	node->node_physical_memory = 0x400000000ULL;
	node->cpu_array = cpus;
	memset(&sys, 0, sizeof sys);
	sys.system_size = sizeof sys;
	sys.system_num_nodes = 1;
	sys.node_array = node;
	return sys;
}

static TBRW_HOST g_host(void)
{
	TBRW_HOST v;
	memset(&v, 0, sizeof v);
	v.host_size = sizeof v;
	v.host_ip_address.soi_ptr = (TBRW_CHAR *)L"10.1.2.3";
	v.host_name.soi_ptr = (TBRW_CHAR *)L"h\u00f4te.example";
	v.reserved = 9;
	return v;
}

static TBRW_OS g_os(void)
{
	TBRW_OS v;
	memset(&v, 0, sizeof v);
	v.os_size = sizeof v;
	v.os_platform = TBRW_OSFAMILY_LINUX32;
	v.os_major = 6;
	v.os_minor = 1;
	v.os_build = 42;
	v.os_extra = 7;
	v.os_name.soi_ptr = (TBRW_CHAR *)L"Linux";
	v.os_name_extra.soi_ptr = NULL;
	return v;
}

static TBRW_APPLICATION g_app(void)
{
	TBRW_APPLICATION v;
	memset(&v, 0, sizeof v);
	v.app_size = sizeof v;
	v.app_reserved = 1;
	v.app_page_size = 4096;
	v.app_alloc_granularity = 65536;
	v.app_min_app_addr = 0x10000;
	v.app_max_app_addr = 0x7fffffffffffULL;
	return v;
}

static TBRW_VERSION_INFO g_version(void)
{
	TBRW_VERSION_INFO v;
	memset(&v, 0, sizeof v);
	v.version_info_size = sizeof v;
	v.sampling_driver_version = 0xffffffffu;
	v.bind_version = 3;
	v.sample_file_version = 16;
	return v;
}

/* The modules of the bind tests (see test_bind_derived for what each one is for). */
struct mod_spec {
	TBRW_U32 pid, flags;
	TBRW_U64 addr, len, when, unload;
	const wchar_t *name;
};

#define F_LD (TBRW_MODULE_LOADED | TBRW_MODULE_TSC_USED)
static const struct mod_spec g_mods[] = {
	{100, F_LD | TBRW_MODULE_IS_EXE, 0x400000, 0x10000, 0, ~0ULL, L"a.out"}, /* 0 */
	{100, F_LD, 0x7000000, 0x10000, 100, ~0ULL, L"lib1.so"}, /* 1: ended by 2 */
	{100, TBRW_MODULE_UNLOADED | TBRW_MODULE_TSC_USED, 0x7000000, 0x10000, 200, 0, L"lib1.so"}, /* 2 */
	{100, F_LD, 0x7000000, 0x8000, 300, ~0ULL, L"lib2.so"}, /* 3: reload at the same address */
	{0, F_LD | TBRW_MODULE_GLOBAL_LOAD, 0xffff0000, 0x10000, 0, ~0ULL, L"vmlinux"}, /* 4: global */
	{200, F_LD | TBRW_MODULE_IS_EXE, 0x400000, 0x10000, 50, ~0ULL, L"b.out"}, /* 5 */
	{100, F_LD | TBRW_MODULE_IS_EXE, 0x400000, 0x10000, 1000, ~0ULL, L"c.out"}, /* 6: pid 100 reused */
	{300, F_LD, 0x8000000, 0x1000, 0, ~0ULL, L"libonly.so"}, /* 7: a process without executable */
	{200, TBRW_MODULE_LOADED, 0x9000000, 0x1000, 2, 5, L"libsample.so"}, /* 8: sample-number times */
};
#define N_MODS (sizeof g_mods / sizeof g_mods[0])

static TBRW_MODULE module_at(size_t i)
{
	TBRW_MODULE m;

	memset(&m, 0, sizeof m);
	m.module_size = sizeof m;
	m.module_associated_pid = g_mods[i].pid;
	m.module_flags = g_mods[i].flags;
	m.module_event_when = g_mods[i].when;
	m.module_segment_number = (TBRW_U32)i;
	m.module_segment_type = TBRW_MODE_64BIT;
	m.module_code_selector = 0x33;
	m.module_length = g_mods[i].len;
	m.module_load_address = g_mods[i].addr;
	m.reserved_for_legacy = 1;
	m.reserved_for_legacy2 = 2;
	m.reserved_for_legacy_flags = 3;
	m.reserved1 = 4;
	m.module_unload_tsc = g_mods[i].unload;
	m.module_path.soi_ptr = (TBRW_CHAR *)g_mods[i].name;
	m.module_name.soi_ptr = (TBRW_CHAR *)g_mods[i].name;
	m.module_segment_name.soi_ptr = i % 2 ? (TBRW_CHAR *)L".text" : NULL;
	return m;
}

/* The written process/thread section of the bind tests. */
static const struct {
	TBRW_U32 pid;
	TBRW_U64 when;
} g_procs[] = {{100, 0}, {200, 50}, {100, 1000}};
static const struct {
	TBRW_U32 pid, tid;
	TBRW_U64 when;
} g_threads[] = {{100, 1, 0}, {200, 2, 50}, {100, 5, 400}, {100, 1, 1200}, {300, 3, 0}};
#define N_PROCS (sizeof g_procs / sizeof g_procs[0])
#define N_THREADS (sizeof g_threads / sizeof g_threads[0])

static TBRW_PID process_at(size_t i)
{
	TBRW_PID p;

	memset(&p, 0, sizeof p);
	p.pid_size = sizeof p;
	p.pid_reserved = 5;
	p.pid_id = g_procs[i].pid;
	p.pid_flags = TBRW_PID_CREATED | TBRW_PID_TSC_USED;
	p.pid_event_when = g_procs[i].when;
	p.reserved1 = 6;
	p.reserved2 = 7;
	p.pid_path.soi_ptr = (TBRW_CHAR *)(i == 1 ? L"/bin/b.out" : L"/bin/a.out");
	p.pid_name.soi_ptr = (TBRW_CHAR *)(i == 1 ? L"b.out" : L"a.out");
	return p;
}

static TBRW_TID thread_at(size_t i)
{
	TBRW_TID t;

	memset(&t, 0, sizeof t);
	t.tid_size = sizeof t;
	t.tid_associated_pid = g_threads[i].pid;
	t.tid_id = g_threads[i].tid;
	t.tid_flags = TBRW_TID_CREATED;
	t.tid_event_when = g_threads[i].when;
	t.reserved1 = 8;
	t.reserved2 = 9;
	t.tid_name.soi_ptr = i == 2 ? NULL : (TBRW_CHAR *)L"worker";
	return t;
}

static TBRW_EVENT_DETAIL g_details[2] = {
	{sizeof(TBRW_EVENT_DETAIL), 32, TBRW_MSR, 1, 0x186, 0x41003c, 0, 1, 2, 3},
	{sizeof(TBRW_EVENT_DETAIL), 64, TBRW_PCI, 0, 0xcf8, 0x80000000ULL, 5, 0, 0, 0},
};

static TBRW_EVENT event_at(int i)
{
	TBRW_EVENT e;

	memset(&e, 0, sizeof e);
	e.event_size = sizeof e;
	e.event_id = (TBRW_U32)i;
	e.event_flags = i == 0 ? TBRW_EVENT_EBS : TBRW_EVENT_TBS;
	e.event_sav = 2000000 + (TBRW_U64)i;
	e.event_name.soi_ptr = (TBRW_CHAR *)(i == 0 ? L"CPU_CLK_UNHALTED.CORE" : L"INST_RETIRED.ANY");
	e.event_arch_name.soi_ptr = (TBRW_CHAR *)L"Core 2";
	e.event_num_details = i == 0 ? 2 : 0;
	e.event_detail_array = i == 0 ? g_details : NULL;
	return e;
}

static TBRW_STREAM_INFO stream_info_at(TBRW_U32 s)
{
	TBRW_STREAM_INFO si;

	memset(&si, 0, sizeof si);
	si.stream_info_size = sizeof si;
	si.sampling_duration = 20000 + s;
	si.stream_type = s == 0 ? TBRW_SAMPLING_STREAM : TBRW_CUSTOM_STREAM;
	si.sampling_interval = 1000;
	si.sampling_start_time.dwLowDateTime = 1526932352;
	si.sampling_start_time.dwHighDateTime = 29849313;
	si.sampling_end_time.dwLowDateTime = 1566932352 + s;
	si.sampling_end_time.dwHighDateTime = 29849313;
	si.command_line.soi_ptr = (TBRW_CHAR *)L"./a.out --run";
	si.cpu_mask.soi_ptr = s == 0 ? (TBRW_CHAR *)L"0-3" : NULL;
	si.comment.soi_ptr = (TBRW_CHAR *)(s == 0 ? L"stream zero" : L"stream one");
	return si;
}

static TBRW_SAMPREC_DESC_ENTRY desc_entry(TBRW_U32 offset, TBRW_U32 size, TBRW_U16 type, TBRW_U16 subtype,
					  const wchar_t *name)
{
	TBRW_SAMPREC_DESC_ENTRY d;

	memset(&d, 0, sizeof d);
	d.desc_size = sizeof d;
	d.desc_offset = offset;
	d.desc_data_size = size;
	d.desc_type = type;
	d.desc_subtype = subtype;
	d.desc_access_offset = 0x100 + offset;
	d.desc_access_type = 1;
	d.desc_access_method = 2;
	d.desc_sample_flag = 3;
	d.reserved0 = 4;
	d.reserved1 = 5;
	d.desc_name.soi_ptr = (TBRW_CHAR *)name;
	return d;
}

static TBRW_SAMPREC_DESC_ENTRY g_desc0[2], g_desc1[2];

static void init_descs(void)
{
	g_desc0[0] = desc_entry(0, sizeof(TBRW_SampleRecordPC), ST_LEGACY_SAMPLE_RECORD, SST_NONE, L"SampleRecord");
	g_desc0[1] = desc_entry(32, 8, ST_TIME_STAMP, SST_TSC, L"TimeStamp");
	g_desc1[0] = desc_entry(0, 4, ST_START_USER_DEFINED, 0, L"word");
	g_desc1[1] = desc_entry(4, 8, ST_START_USER_DEFINED + 1, 0, NULL);
}

static unsigned char g_user_global[300], g_user_stream[77];

static void write_module_section(TBRW_PTR h)
{
	OK(TBRW_writing_section(h, TBRW_MODULE_SECTION));
	for (size_t i = 0; i < N_MODS; i++) {
		TBRW_MODULE m = module_at(i);
		OK(TBRW_add_module(h, &m));
	}
	OK(TBRW_done_section(h, TBRW_MODULE_SECTION));
}

static void write_pt_section(TBRW_PTR h)
{
	OK(TBRW_writing_section(h, TBRW_PROCESS_THREAD_SECTION));
	for (size_t i = 0; i < N_PROCS; i++) {
		TBRW_PID p = process_at(i);
		OK(TBRW_add_process(h, &p));
	}
	for (size_t i = 0; i < N_THREADS; i++) {
		TBRW_TID t = thread_at(i);
		OK(TBRW_add_thread(h, &t));
	}
	OK(TBRW_done_section(h, TBRW_PROCESS_THREAD_SECTION));
}

static void write_globals(TBRW_PTR h, const struct full_opts *o)
{
	TBRW_NODE node;
	TBRW_CPU cpus[2];
	TBRW_CPU_ARCH archs[3];
	TBRW_SYSTEM sys = g_system(&node, cpus, archs);
	TBRW_HOST host = g_host();
	TBRW_OS os = g_os();
	TBRW_APPLICATION app = g_app();
	TBRW_VERSION_INFO vi = g_version();

	for (size_t i = 0; i < sizeof g_user_global; i++)
		g_user_global[i] = (unsigned char)(i * 13);
	OK(TBRW_writing_section(h, TBRW_HARDWARE_SECTION));
	OK(TBRW_set_system(h, &sys));
	OK(TBRW_done_section(h, TBRW_HARDWARE_SECTION));
	OK(TBRW_writing_section(h, TBRW_SOFTWARE_SECTION));
	OK(TBRW_set_host(h, &host));
	OK(TBRW_set_os(h, &os));
	OK(TBRW_set_application(h, &app));
	OK(TBRW_done_section(h, TBRW_SOFTWARE_SECTION));
	OK(TBRW_writing_section(h, TBRW_VERSION_INFO_SECTION));
	OK(TBRW_set_version_info(h, &vi));
	OK(TBRW_done_section(h, TBRW_VERSION_INFO_SECTION));
	OK(TBRW_writing_section(h, TBRW_USER_DEFINED_GLOBAL_SECTION));
	OK(TBRW_set_user_defined_global(h, sizeof g_user_global, g_user_global));
	OK(TBRW_done_section(h, TBRW_USER_DEFINED_GLOBAL_SECTION));
	write_module_section(h);
	if (o->write_pt)
		write_pt_section(h);
}

static void write_stream_header(TBRW_PTR h, TBRW_U32 s, const TBRW_SAMPREC_DESC_ENTRY *descs, size_t n_descs,
				int events)
{
	TBRW_STREAM_INFO si = stream_info_at(s);

	if (events) {
		OK(TBRW_writing_stream_section(h, s, TBRW_EVENT_DESCRIPTION_SECTION));
		for (int i = 0; i < 2; i++) {
			TBRW_EVENT e = event_at(i);
			OK(TBRW_add_event(h, s, &e));
		}
		OK(TBRW_done_stream_section(h, s, TBRW_EVENT_DESCRIPTION_SECTION));
	}
	OK(TBRW_writing_stream_section(h, s, TBRW_STREAM_INFO_SECTION));
	OK(TBRW_set_stream_info(h, s, &si));
	OK(TBRW_done_stream_section(h, s, TBRW_STREAM_INFO_SECTION));
	OK(TBRW_writing_stream_section(h, s, TBRW_DATA_DESCRIPTION_SECTION));
	for (size_t i = 0; i < n_descs; i++) {
		TBRW_SAMPREC_DESC_ENTRY d = descs[i];
		OK(TBRW_add_data_descriptor_entry(h, s, &d));
	}
	OK(TBRW_done_stream_section(h, s, TBRW_DATA_DESCRIPTION_SECTION));
}

static void write_full_streams(TBRW_PTR h, const struct full_opts *o)
{
	init_descs();
	for (size_t i = 0; i < sizeof g_user_stream; i++)
		g_user_stream[i] = (unsigned char)(200 - i);
	OK(TBRW_writing_stream(h, 0));
	write_stream_header(h, 0, g_desc0, 2, 1);
	OK(TBRW_writing_stream_section(h, 0, TBRW_DATA_SECTION));
	for (uint32_t i = 0; i < o->n0;) {
		/* records one at a time and in runs, as callers do */
		struct rec0 run[100];
		uint32_t k = i % 3 == 0 ? 1 : (o->n0 - i < 100 ? o->n0 - i : 100);
		for (uint32_t j = 0; j < k; j++)
			run[j] = rec0_at(i + j);
		OK(TBRW_add_data(h, 0, k * (TBRW_U32)sizeof run[0], run));
		i += k;
	}
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_writing_stream_section(h, 0, TBRW_USER_DEFINED_STREAM_SECTION));
	OK(TBRW_set_user_defined_stream(h, 0, sizeof g_user_stream, g_user_stream));
	OK(TBRW_done_stream_section(h, 0, TBRW_USER_DEFINED_STREAM_SECTION));
	OK(TBRW_done_stream(h, 0));

	OK(TBRW_writing_stream(h, 1));
	write_stream_header(h, 1, g_desc1, 2, 0);
	OK(TBRW_writing_stream_section(h, 1, TBRW_DATA_SECTION));
	for (uint32_t i = 0; i < o->n1; i++) {
		struct rec1 r = rec1_at(i);
		OK(TBRW_add_data(h, 1, sizeof r, &r));
	}
	OK(TBRW_done_stream_section(h, 1, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 1));
}

static void write_full(const char *name, const struct full_opts *o)
{
	TBRW_PTR h = open_create(name, o->mode);

	write_globals(h, o);
	write_full_streams(h, o);
	OK(TBRW_verify(h));
	OK(TBRW_close(h));
	assert_true(tkt_exists(tkt_path(name)));
	{
		char part[600];
		snprintf(part, sizeof part, "%s.part", tkt_path(name));
		assert_false(tkt_exists(part));
	}
}

/* ---- reading it back ------------------------------------------------------------------------ */

static void *get_sized(TBRW_PTR h, TBRW_U32 (*fn)(TBRW_PTR, TBRW_U32, void *, TBRW_U32 *), TBRW_U32 want)
{
	TBRW_U32 need = 0;
	void *buf;

	RC(fn(h, 0, NULL, &need), TBRW_BUFFER_TOO_SMALL);
	assert_int_equal(need, want);
	buf = calloc(1, need);
	assert_non_null(buf);
	RC(fn(h, need - 1, buf, &need), TBRW_BUFFER_TOO_SMALL);
	OK(fn(h, need, buf, &need));
	assert_int_equal(need, want);
	return buf;
}

#define SAME_EXCEPT_STRINGS(a, b) assert_memory_equal(&(a), &(b), sizeof(a))

static void check_hardware(TBRW_PTR h)
{
	TBRW_NODE node;
	TBRW_CPU cpus[2];
	TBRW_CPU_ARCH archs[3];
	TBRW_SYSTEM want = g_system(&node, cpus, archs), *got;
	TBRW_U32 need = 0;

	(void)want; /* fills node, cpus and archs */
	OK(TBRW_reading_section(h, TBRW_HARDWARE_SECTION));
	RC(TBRW_get_system(h, 0, NULL, &need), TBRW_BUFFER_TOO_SMALL);
	DETAIL_HAS("TBRW_get_system");
	got = aligned_alloc(8, (need + 7u) & ~7u);
	assert_non_null(got);
	OK(TBRW_get_system(h, need, got, &need));
	assert_int_equal(got->system_size, sizeof *got);
	assert_int_equal(got->system_num_nodes, 1);
	{
		TBRW_NODE a = node, b = got->node_array[0];
		a.cpu_array = b.cpu_array = NULL;
		SAME_EXCEPT_STRINGS(a, b);
	}
	for (int c = 0; c < 2; c++) {
		TBRW_CPU a = cpus[c], b = got->node_array[0].cpu_array[c];
		TBRW_CPU_ARCH *ga = b.cpu_arch_array;
		a.cpu_arch_array = b.cpu_arch_array = NULL;
		SAME_EXCEPT_STRINGS(a, b);
		for (TBRW_U32 k = 0; k < cpus[c].num_cpu_arch_array; k++) {
			TBRW_CPU_ARCH x = cpus[c].cpu_arch_array[k], y = ga[k];
			if (x.arch_type == TBRW_GST_IA64) {
				for (int j = 0; j < x.arch_num_cpuid; j++)
					assert_memory_equal(&x.cpuid_ia64_array[j], &y.cpuid_ia64_array[j],
							    sizeof(TBRW_CPUID_IA64));
				x.cpuid_ia64_array = y.cpuid_ia64_array = NULL;
			} else {
				for (int j = 0; j < x.arch_num_cpuid; j++)
					assert_memory_equal(&x.cpuid_ia32_array[j], &y.cpuid_ia32_array[j],
							    sizeof(TBRW_CPUID_IA32));
				if (x.arch_num_cpuid == 0)
					assert_null(y.cpuid_ia32_array);
				x.cpuid_ia32_array = y.cpuid_ia32_array = NULL;
			}
			SAME_EXCEPT_STRINGS(x, y);
		}
	}
	free(got);
	OK(TBRW_done_section(h, TBRW_HARDWARE_SECTION));
}

static void check_software(TBRW_PTR h)
{
	TBRW_HOST host = g_host(), *gh;
	TBRW_OS os = g_os(), *go;
	TBRW_APPLICATION app = g_app(), *ga;
	TBRW_VERSION_INFO vi = g_version(), *gv;
	unsigned char *user;

	OK(TBRW_reading_section(h, TBRW_SOFTWARE_SECTION));
	gh = get_sized(h, TBRW_get_host, sizeof(TBRW_HOST));
	same_string(h, gh->host_ip_address, host.host_ip_address.soi_ptr);
	same_string(h, gh->host_name, host.host_name.soi_ptr);
	host.host_ip_address.soi_uniqueid = gh->host_ip_address.soi_uniqueid;
	host.host_name.soi_uniqueid = gh->host_name.soi_uniqueid;
	SAME_EXCEPT_STRINGS(host, *gh);
	go = get_sized(h, TBRW_get_os, sizeof(TBRW_OS));
	same_string(h, go->os_name, L"Linux");
	same_string(h, go->os_name_extra, NULL);
	os.os_name.soi_uniqueid = go->os_name.soi_uniqueid;
	SAME_EXCEPT_STRINGS(os, *go);
	ga = get_sized(h, TBRW_get_application, sizeof(TBRW_APPLICATION));
	SAME_EXCEPT_STRINGS(app, *ga);
	OK(TBRW_done_section(h, TBRW_SOFTWARE_SECTION));
	free(gh);
	free(go);
	free(ga);

	OK(TBRW_reading_section(h, TBRW_VERSION_INFO_SECTION));
	gv = get_sized(h, TBRW_get_version_info, sizeof(TBRW_VERSION_INFO));
	SAME_EXCEPT_STRINGS(vi, *gv);
	free(gv);
	OK(TBRW_done_section(h, TBRW_VERSION_INFO_SECTION));

	OK(TBRW_reading_section(h, TBRW_USER_DEFINED_GLOBAL_SECTION));
	user = get_sized(h, TBRW_get_user_defined_global, sizeof g_user_global);
	assert_memory_equal(user, g_user_global, sizeof g_user_global);
	free(user);
	OK(TBRW_done_section(h, TBRW_USER_DEFINED_GLOBAL_SECTION));
}

struct collect {
	TBRW_PTR h;
	unsigned char *buf;
	size_t len, cap;
	uint64_t calls, n;
	uint64_t stop_after; /* return FALSE once n reaches it (0: never) */
	TBRW_U32 fail_with; /* return this from the first call (0: no) */
};

static void collect_put(struct collect *c, const void *data, size_t size, uint64_t n)
{
	if (c->len + size > c->cap) {
		c->cap = (c->len + size) * 2;
		c->buf = realloc(c->buf, c->cap);
		assert_non_null(c->buf);
	}
	memcpy(c->buf + c->len, data, size);
	c->len += size;
	c->n += n;
	c->calls++;
}

static TBRW_U32 collect_answer(struct collect *c)
{
	if (c->fail_with != 0)
		return c->fail_with;
	return c->stop_after != 0 && c->n >= c->stop_after ? FALSE : TRUE;
}

static TBRW_U32 on_module(TBRW_MODULE *m, TBRW_U32 size, TBRW_U32 n, void *u)
{
	assert_int_equal(size, n * sizeof *m);
	collect_put(u, m, size, n);
	return collect_answer(u);
}

static TBRW_U32 on_pid(TBRW_PID *p, TBRW_U32 size, TBRW_U32 n, void *u)
{
	assert_int_equal(size, n * sizeof *p);
	collect_put(u, p, size, n);
	return collect_answer(u);
}

static TBRW_U32 on_tid(TBRW_TID *t, TBRW_U32 size, TBRW_U32 n, void *u)
{
	assert_int_equal(size, n * sizeof *t);
	collect_put(u, t, size, n);
	return collect_answer(u);
}

static TBRW_U32 on_data(void *d, TBRW_U32 size, TBRW_U32 n, void *u)
{
	assert_true(n > 0);
	assert_int_equal(size % n, 0);
	collect_put(u, d, size, n);
	return collect_answer(u);
}

static TBRW_U32 on_desc(TBRW_SAMPREC_DESC_ENTRY *d, TBRW_U32 size, TBRW_U32 n, void *u)
{
	assert_int_equal(size, n * sizeof *d);
	collect_put(u, d, size, n);
	return collect_answer(u);
}

static TBRW_U32 on_event(TBRW_EVENT *e, TBRW_U32 size, TBRW_U32 n, void *u)
{
	struct collect *c = u;
	assert_int_equal(size, n * sizeof *e);
	for (TBRW_U32 i = 0; i < n; i++) {
		TBRW_EVENT want = event_at((int)(c->n + i)), got = e[i];
		same_string(c->h, got.event_name, want.event_name.soi_ptr);
		same_string(c->h, got.event_arch_name, want.event_arch_name.soi_ptr);
		for (TBRW_U32 k = 0; k < want.event_num_details; k++)
			assert_memory_equal(&want.event_detail_array[k], &got.event_detail_array[k], sizeof(TBRW_EVENT_DETAIL));
		if (want.event_num_details == 0)
			assert_null(got.event_detail_array);
		want.event_name.soi_uniqueid = got.event_name.soi_uniqueid;
		want.event_arch_name.soi_uniqueid = got.event_arch_name.soi_uniqueid;
		want.event_detail_array = got.event_detail_array = NULL;
		SAME_EXCEPT_STRINGS(want, got);
	}
	c->n += n;
	c->calls++;
	return collect_answer(c);
}

static void check_modules(TBRW_PTR h)
{
	struct collect c = {.h = h};
	const TBRW_MODULE *one = NULL;

	OK(TBRW_reading_section(h, TBRW_MODULE_SECTION));
	OK(TBRW_enumerate_modules(h, on_module, &c, 0));
	assert_int_equal(c.n, N_MODS);
	for (size_t i = 0; i < N_MODS; i++) {
		TBRW_MODULE want = module_at(i), got;
		memcpy(&got, c.buf + i * sizeof got, sizeof got);
		same_string(h, got.module_path, want.module_path.soi_ptr);
		same_string(h, got.module_name, want.module_name.soi_ptr);
		same_string(h, got.module_segment_name, want.module_segment_name.soi_ptr);
		want.module_path.soi_uniqueid = got.module_path.soi_uniqueid;
		want.module_name.soi_uniqueid = got.module_name.soi_uniqueid;
		want.module_segment_name.soi_uniqueid = got.module_segment_name.soi_uniqueid;
		SAME_EXCEPT_STRINGS(want, got);
		OK(TBRW_get_one_module(h, i, &one));
		assert_memory_equal(one, &got, sizeof got);
	}
	FAILS(TBRW_get_one_module(h, N_MODS, &one), TBRW_INDEX_OUT_OF_RANGE, "module index 9");
	OK(TBRW_done_section(h, TBRW_MODULE_SECTION));
	free(c.buf);
}

static void check_written_pt(TBRW_PTR h)
{
	struct collect c = {.h = h}, t = {.h = h};
	const TBRW_PID *p1 = NULL;

	OK(TBRW_reading_section(h, TBRW_PROCESS_THREAD_SECTION));
	OK(TBRW_enumerate_processes(h, on_pid, &c, 0));
	OK(TBRW_enumerate_threads(h, on_tid, &t, 0));
	assert_int_equal(c.n, N_PROCS);
	assert_int_equal(t.n, N_THREADS);
	for (size_t i = 0; i < N_PROCS; i++) {
		TBRW_PID want = process_at(i), got;
		memcpy(&got, c.buf + i * sizeof got, sizeof got);
		same_string(h, got.pid_path, want.pid_path.soi_ptr);
		same_string(h, got.pid_name, want.pid_name.soi_ptr);
		want.pid_path.soi_uniqueid = got.pid_path.soi_uniqueid;
		want.pid_name.soi_uniqueid = got.pid_name.soi_uniqueid;
		SAME_EXCEPT_STRINGS(want, got);
		OK(TBRW_get_one_pid(h, i, &p1));
		assert_memory_equal(p1, &got, sizeof got);
	}
	for (size_t i = 0; i < N_THREADS; i++) {
		TBRW_TID want = thread_at(i), got;
		memcpy(&got, t.buf + i * sizeof got, sizeof got);
		same_string(h, got.tid_name, want.tid_name.soi_ptr);
		want.tid_name.soi_uniqueid = got.tid_name.soi_uniqueid;
		SAME_EXCEPT_STRINGS(want, got);
	}
	OK(TBRW_done_section(h, TBRW_PROCESS_THREAD_SECTION));
	free(c.buf);
	free(t.buf);
}

static void check_stream_info(TBRW_PTR h, TBRW_U32 s)
{
	TBRW_STREAM_INFO want = stream_info_at(s), got;
	TBRW_U32 used = 0;

	OK(TBRW_reading_stream_section(h, s, TBRW_STREAM_INFO_SECTION));
	FAILS(TBRW_get_stream_info(h, s, sizeof got - 1, &got, &used), TBRW_BUFFER_TOO_SMALL, "TBRW_get_stream_info");
	assert_int_equal(used, sizeof got);
	OK(TBRW_get_stream_info(h, s, sizeof got, &got, &used));
	same_string(h, got.command_line, want.command_line.soi_ptr);
	same_string(h, got.cpu_mask, want.cpu_mask.soi_ptr);
	same_string(h, got.comment, want.comment.soi_ptr);
	want.command_line.soi_uniqueid = got.command_line.soi_uniqueid;
	want.cpu_mask.soi_uniqueid = got.cpu_mask.soi_uniqueid;
	want.comment.soi_uniqueid = got.comment.soi_uniqueid;
	SAME_EXCEPT_STRINGS(want, got);
	OK(TBRW_done_stream_section(h, s, TBRW_STREAM_INFO_SECTION));
}

static void check_descs(TBRW_PTR h, TBRW_U32 s, const TBRW_SAMPREC_DESC_ENTRY *want, size_t n)
{
	struct collect c = {.h = h};

	OK(TBRW_reading_stream_section(h, s, TBRW_DATA_DESCRIPTION_SECTION));
	OK(TBRW_enumerate_data_descriptor_entries(h, s, on_desc, &c));
	assert_int_equal(c.n, n);
	for (size_t i = 0; i < n; i++) {
		TBRW_SAMPREC_DESC_ENTRY w = want[i], got;
		memcpy(&got, c.buf + i * sizeof got, sizeof got);
		same_string(h, got.desc_name, w.desc_name.soi_ptr);
		w.desc_name.soi_uniqueid = got.desc_name.soi_uniqueid;
		SAME_EXCEPT_STRINGS(w, got);
	}
	OK(TBRW_done_stream_section(h, s, TBRW_DATA_DESCRIPTION_SECTION));
	free(c.buf);
}

static void *get_sized_stream(TBRW_PTR h, TBRW_U32 s, TBRW_U32 want)
{
	TBRW_U32 need = 0;
	void *buf;

	FAILS(TBRW_get_user_defined_stream(h, s, 0, NULL, &need), TBRW_BUFFER_TOO_SMALL, "TBRW_get_user_defined_stream");
	assert_int_equal(need, want);
	buf = malloc(need);
	assert_non_null(buf);
	OK(TBRW_get_user_defined_stream(h, s, need, buf, &need));
	return buf;
}

static void check_full(const char *name, const struct full_opts *o)
{
	TBRW_PTR h = open_read(name);
	TBRW_U32 n_streams = 0;
	struct collect c = {.h = NULL};
	unsigned char *user;

	OK(TBRW_verify(h));
	check_hardware(h);
	check_software(h);
	check_modules(h);
	if (o->write_pt)
		check_written_pt(h);
	else
		FAILS(TBRW_reading_section(h, TBRW_PROCESS_THREAD_SECTION), TBRW_SECTION_NOT_FOUND, "process/thread");
	OK(TBRW_get_number_data_streams(h, &n_streams));
	assert_int_equal(n_streams, 2);

	OK(TBRW_reading_stream(h, 0));
	c.h = h;
	OK(TBRW_reading_stream_section(h, 0, TBRW_EVENT_DESCRIPTION_SECTION));
	OK(TBRW_enumerate_events(h, 0, on_event, &c, 0));
	assert_int_equal(c.n, 2);
	c.n = 0;
	OK(TBRW_enumerate_events(h, 0, on_event, &c, 2)); /* start beyond the end: no call */
	assert_int_equal(c.n, 0);
	OK(TBRW_done_stream_section(h, 0, TBRW_EVENT_DESCRIPTION_SECTION));
	check_stream_info(h, 0);
	check_descs(h, 0, g_desc0, 2);
	OK(TBRW_reading_stream_section(h, 0, TBRW_DATA_SECTION));
	memset(&c, 0, sizeof c);
	OK(TBRW_enumerate_data(h, 0, on_data, &c, 0));
	assert_int_equal(c.n, o->n0);
	for (uint32_t i = 0; i < o->n0; i++) {
		struct rec0 want = rec0_at(i);
		assert_memory_equal(c.buf + (size_t)i * sizeof want, &want, sizeof want);
	}
	free(c.buf);
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_reading_stream_section(h, 0, TBRW_USER_DEFINED_STREAM_SECTION));
	user = get_sized_stream(h, 0, sizeof g_user_stream);
	assert_memory_equal(user, g_user_stream, sizeof g_user_stream);
	free(user);
	OK(TBRW_done_stream_section(h, 0, TBRW_USER_DEFINED_STREAM_SECTION));
	OK(TBRW_done_stream(h, 0));

	OK(TBRW_reading_stream(h, 1));
	FAILS(TBRW_reading_stream_section(h, 1, TBRW_EVENT_DESCRIPTION_SECTION), TBRW_SECTION_NOT_FOUND,
	      "event description");
	check_stream_info(h, 1);
	check_descs(h, 1, g_desc1, 2);
	OK(TBRW_reading_stream_section(h, 1, TBRW_DATA_SECTION));
	memset(&c, 0, sizeof c);
	OK(TBRW_enumerate_data(h, 1, on_data, &c, 0));
	assert_int_equal(c.n, o->n1);
	for (uint32_t i = 0; i < o->n1; i++) {
		struct rec1 want = rec1_at(i);
		assert_memory_equal(c.buf + (size_t)i * sizeof want, &want, sizeof want);
	}
	free(c.buf);
	OK(TBRW_done_stream_section(h, 1, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 1));
	OK(TBRW_close(h));
}

/* ---- round trips ------------------------------------------------------------------------------ */

static void test_round_trip(void **state)
{
	struct full_opts plain = {.n0 = 70000, .n1 = 1000, .mode = 0, .write_pt = 1};
	struct full_opts packed = {.n0 = 70000, .n1 = 3, .mode = TBRW_FILE_COMPRESS, .write_pt = 0};

	(void)state;
	write_full("rt_plain.tb5", &plain);
	check_full("rt_plain.tb5", &plain);
	write_full("rt_packed.tb5", &packed);
	check_full("rt_packed.tb5", &packed);
	/* compression worked: the data chunks of stream 0 are far smaller than its 2.8 MB */
	assert_true(file_size("rt_packed.tb5") < file_size("rt_plain.tb5") / 4);
}

/* Chapter 6 of the seed, verbatim: both descriptors at offset 0, one TBRW_add_data per
 * descriptor entry, so each record takes two calls. */
static void test_chapter6_style(void **state)
{
	TBRW_SAMPREC_DESC_ENTRY d[2];
	TBRW_PTR h;
	struct collect c = {.h = NULL};
	const uint32_t n = 30000; /* more than one data chunk */

	(void)state;
	d[0] = desc_entry(0, sizeof(TBRW_SampleRecordPC), ST_LEGACY_SAMPLE_RECORD, SST_NONE, L"SampleRecord");
	d[1] = desc_entry(0, sizeof(TBRW_SampleRecordTSC), ST_TIME_STAMP, SST_TSC, L"TimeStamp");
	h = open_create("ch6.tb5", 0);
	OK(TBRW_writing_stream(h, 0));
	write_stream_header(h, 0, d, 2, 1);
	OK(TBRW_writing_stream_section(h, 0, TBRW_DATA_SECTION));
	for (uint32_t i = 0; i < n; i++) {
		struct rec0 r = rec0_at(i);
		if (i % 1000 == 999) {
			/* a whole record at once is fine between records */
			OK(TBRW_add_data(h, 0, sizeof r, &r));
			continue;
		}
		OK(TBRW_add_data(h, 0, sizeof r.pc, &r.pc));
		if (i == 5) {
			/* mid-record, only the next entry's size fits */
			FAILS(TBRW_add_data(h, 0, sizeof r.pc, &r.pc), TBRW_RECORD_SIZE_MISMATCH, "descriptor entry 1");
			FAILS(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION), TBRW_VALIDATION_FAILED, "incomplete");
		}
		OK(TBRW_add_data(h, 0, sizeof r.tsc, &r.tsc));
	}
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 0));
	OK(TBRW_close(h));

	h = open_read("ch6.tb5");
	OK(TBRW_verify(h));
	OK(TBRW_reading_stream(h, 0));
	check_stream_info(h, 0);
	/* issue 10 item 6: reported where the records hold them (written both at 0) */
	d[1].desc_offset = sizeof(TBRW_SampleRecordPC);
	check_descs(h, 0, d, 2);
	OK(TBRW_reading_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_enumerate_data(h, 0, on_data, &c, 0));
	assert_int_equal(c.n, n);
	assert_int_equal(c.len, (size_t)n * 40);
	for (uint32_t i = 0; i < n; i++) {
		struct rec0 want = rec0_at(i), got;
		memcpy(&got, c.buf + (size_t)i * 40, 40);
		assert_int_equal(got.pc.eip, want.pc.eip);
		assert_int_equal(got.pc.tid, want.pc.tid);
		assert_int_equal(got.pc.cpuNum, want.pc.cpuNum);
		assert_int_equal(got.pc.eventIndex, want.pc.eventIndex);
		assert_int_equal(got.tsc.tsc, want.tsc.tsc);
		assert_memory_equal(&got, &want, sizeof got);
	}
	free(c.buf);
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 0));
	OK(TBRW_close(h));
}

/* Opening for writing (append) reads the directory without a mapping: a first chunk full of
 * strings once made the directory's buffer move under the reader. */
static void test_append_open(void **state)
{
	static wchar_t big[20001];
	TBRW_PTR h;
	TBRW_MODULE m;
	TBRW_HOST host = g_host(), *gh;
	const TBRW_MODULE *one = NULL;
	char *before, *after;
	size_t n_before, n_after;

	(void)state;
	for (int i = 0; i < 20000; i++)
		big[i] = (wchar_t)(L'a' + i % 26);
	h = open_create("append.tb5", 0);
	memset(&m, 0, sizeof m);
	m.module_size = sizeof m;
	m.module_name.soi_ptr = big;
	m.module_length = 10;
	m.module_flags = TBRW_MODULE_LOADED;
	OK(TBRW_writing_section(h, TBRW_MODULE_SECTION));
	OK(TBRW_add_module(h, &m));
	OK(TBRW_done_section(h, TBRW_MODULE_SECTION));
	OK(TBRW_close(h));

	/* opened for writing then abandoned: the file is untouched */
	before = tkt_read_file(tkt_path("append.tb5"), &n_before);
	OK(TBRW_open(&h, wpath("append.tb5"), TBRW_FILE_READ | TBRW_FILE_WRITE));
	OK(TBRW_verify(h));
	FAILS(TBRW_writing_section(h, TBRW_MODULE_SECTION), TBRW_SECTION_EXISTS, "module section already exists");
	OK(TBRW_writing_section(h, TBRW_SOFTWARE_SECTION));
	OK(TBRW_set_host(h, &host));
	OK(TBRW_done_section(h, TBRW_SOFTWARE_SECTION));
	OK(TBRW_abort_cleanup_and_close(h));
	after = tkt_read_file(tkt_path("append.tb5"), &n_after);
	assert_int_equal(n_before, n_after);
	assert_memory_equal(before, after, n_before);
	free(after);
	assert_false(tkt_exists(tkt_path("append.tb5.part")));

	/* appended for real */
	OK(TBRW_open(&h, wpath("append.tb5"), TBRW_FILE_READ | TBRW_FILE_WRITE));
	OK(TBRW_writing_section(h, TBRW_SOFTWARE_SECTION));
	OK(TBRW_set_host(h, &host));
	OK(TBRW_done_section(h, TBRW_SOFTWARE_SECTION));
	OK(TBRW_close(h));
	free(before);

	h = open_read("append.tb5");
	OK(TBRW_verify(h));
	OK(TBRW_get_one_module(h, 0, &one));
	same_string(h, one->module_name, big);
	OK(TBRW_reading_section(h, TBRW_SOFTWARE_SECTION));
	gh = get_sized(h, TBRW_get_host, sizeof *gh);
	same_string(h, gh->host_name, host.host_name.soi_ptr);
	free(gh);
	OK(TBRW_done_section(h, TBRW_SOFTWARE_SECTION));
	OK(TBRW_close(h));

	/* the full file, appended with a third stream */
	{
		struct full_opts o = {.n0 = 100, .n1 = 10, .mode = 0, .write_pt = 1};
		TBRW_SAMPREC_DESC_ENTRY d = desc_entry(0, 8, ST_START_USER_DEFINED, 0, L"a new string");
		TBRW_U64 v = 42;
		write_full("append_full.tb5", &o);
		OK(TBRW_open(&h, wpath("append_full.tb5"), TBRW_FILE_READ | TBRW_FILE_WRITE));
		FAILS(TBRW_writing_stream(h, 1), TBRW_SECTION_EXISTS, "stream 1 already exists");
		OK(TBRW_writing_stream(h, 2));
		write_stream_header(h, 2, &d, 1, 0);
		OK(TBRW_writing_stream_section(h, 2, TBRW_DATA_SECTION));
		OK(TBRW_add_data(h, 2, 8, &v));
		OK(TBRW_done_stream_section(h, 2, TBRW_DATA_SECTION));
		OK(TBRW_done_stream(h, 2));
		OK(TBRW_close(h));
		h = open_read("append_full.tb5");
		OK(TBRW_verify(h));
		check_software(h);
		check_modules(h);
		check_written_pt(h);
		OK(TBRW_reading_stream(h, 2));
		check_descs(h, 2, &d, 1);
		OK(TBRW_done_stream(h, 2));
		OK(TBRW_close(h));
	}
}

/* ---- enumeration: start_index, early stop, callback errors -------------------------------- */

static void enumerate_from(TBRW_PTR h, uint64_t start, uint64_t n)
{
	struct collect c = {.h = h};

	OK(TBRW_enumerate_data(h, 0, on_data, &c, start));
	assert_int_equal(c.n, start < n ? n - start : 0);
	if (start >= n)
		assert_int_equal(c.calls, 0);
	for (uint64_t i = 0; i < c.n; i++) {
		struct rec0 want = rec0_at(start + i);
		assert_memory_equal(c.buf + i * sizeof want, &want, sizeof want);
	}
	free(c.buf);
}

static void test_enumerate(void **state)
{
	struct full_opts o = {.n0 = 70000, .n1 = 10, .mode = 0, .write_pt = 1};
	const uint64_t per_chunk = TB5_CHUNK_TARGET / sizeof(struct rec0);
	const uint64_t starts[] = {0, 1, 100, per_chunk - 1, per_chunk, per_chunk + 5, 2 * per_chunk, o.n0 - 1, o.n0,
				   o.n0 + 100, ~0ULL};
	struct collect c = {.h = NULL};
	TBRW_PTR h;

	(void)state;
	write_full("enum.tb5", &o);
	h = open_read("enum.tb5");
	FAILS(TBRW_enumerate_data(h, 0, on_data, &c, 0), TBRW_CALL_OUT_OF_ORDER, "not open for reading");
	OK(TBRW_reading_stream(h, 0));
	OK(TBRW_reading_stream_section(h, 0, TBRW_DATA_SECTION));
	for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
		enumerate_from(h, starts[i], o.n0);

	/* FALSE stops after that call, and is a success */
	memset(&c, 0, sizeof c);
	c.stop_after = 1;
	OK(TBRW_enumerate_data(h, 0, on_data, &c, 100));
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.n, per_chunk - 100); /* the rest of the first chunk */
	free(c.buf);
	memset(&c, 0, sizeof c);
	c.stop_after = per_chunk + 1;
	OK(TBRW_enumerate_data(h, 0, on_data, &c, 0));
	assert_int_equal(c.calls, 2);
	free(c.buf);
	/* any other value is the caller's error code, returned as is, and the detail says so */
	memset(&c, 0, sizeof c);
	c.fail_with = 0x4321;
	FAILS(TBRW_enumerate_data(h, 0, on_data, &c, 5), 0x4321, "callback returned 17185");
	assert_int_equal(c.calls, 1);
	free(c.buf);
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));

	/* events, descriptors */
	OK(TBRW_reading_stream_section(h, 0, TBRW_EVENT_DESCRIPTION_SECTION));
	memset(&c, 0, sizeof c);
	c.h = h;
	c.n = 1; /* on_event compares with event_at(n) */
	OK(TBRW_enumerate_events(h, 0, on_event, &c, 1));
	assert_int_equal(c.n, 2);
	c.n = 0;
	c.fail_with = 77;
	FAILS(TBRW_enumerate_events(h, 0, on_event, &c, 0), 77, "TBRW_enumerate_events");
	OK(TBRW_done_stream_section(h, 0, TBRW_EVENT_DESCRIPTION_SECTION));
	OK(TBRW_reading_stream_section(h, 0, TBRW_DATA_DESCRIPTION_SECTION));
	memset(&c, 0, sizeof c);
	c.fail_with = 99;
	FAILS(TBRW_enumerate_data_descriptor_entries(h, 0, on_desc, &c), 99, "TBRW_enumerate_data_descriptor_entries");
	free(c.buf);
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_DESCRIPTION_SECTION));
	OK(TBRW_done_stream(h, 0));

	/* modules, processes and threads */
	memset(&c, 0, sizeof c);
	OK(TBRW_enumerate_modules(h, on_module, &c, 3));
	assert_int_equal(c.n, N_MODS - 3);
	{
		TBRW_MODULE m;
		memcpy(&m, c.buf, sizeof m);
		assert_int_equal(m.module_load_address, g_mods[3].addr);
	}
	free(c.buf);
	memset(&c, 0, sizeof c);
	OK(TBRW_enumerate_modules(h, on_module, &c, N_MODS));
	assert_int_equal(c.calls, 0);
	memset(&c, 0, sizeof c);
	OK(TBRW_enumerate_processes(h, on_pid, &c, N_PROCS - 1));
	assert_int_equal(c.n, 1);
	free(c.buf);
	memset(&c, 0, sizeof c);
	c.stop_after = 1;
	OK(TBRW_enumerate_threads(h, on_tid, &c, 0));
	assert_int_equal(c.calls, 1);
	free(c.buf);
	memset(&c, 0, sizeof c);
	c.fail_with = 1234;
	FAILS(TBRW_enumerate_threads(h, on_tid, &c, 2), 1234, "TBRW_enumerate_threads");
	free(c.buf);
	OK(TBRW_close(h));
}

/* ---- binding ------------------------------------------------------------------------------------ */

#define NONE TBRW_BIND_NO_INDEX
/* Hand-made samples and what binding must make of them: the module, and the process and
 * thread indexes with a derived process/thread section (d*) and with the written one (w*). */
static const struct sample {
	TBRW_U32 pid, tid;
	TBRW_U64 ip, tsc;
	TBRW_U64 mod, dpid, dtid, wpid, wtid;
} g_samples[] = {
	{100, 1, 0x400100, 10, 0, 0, 0, 0, 0}, /* 0: the executable */
	{100, 1, 0x7000010, 150, 1, 0, 0, 0, 0}, /* 1: lib1 while loaded */
	{200, 2, 0x9000010, 60, 8, 2, 1, 1, 1}, /* 2: sample 2 in [2, 5): times in sample numbers */
	{100, 1, 0x7000010, 250, NONE, 0, 0, 0, 0}, /* 3: lib1 unloaded at 200, lib2 loads at 300 */
	{100, 1, 0x7000010, 350, 3, 0, 0, 0, 0}, /* 4: lib2, reloaded at the same address */
	{100, 5, 0xffff0100, 400, 4, 0, 2, 0, 2}, /* 5: a global (kernel) module */
	{999, 9, 0xffff0200, 410, 4, NONE, NONE, NONE, NONE}, /* 6: unknown pid, global module */
	{999, 9, 0x400100, 420, NONE, NONE, NONE, NONE, NONE}, /* 7: unknown pid, no module */
	{100, 1, 0x400100, 1500, 6, 1, 3, 2, 0}, /* 8: pid 100 reused by c.out at 1000 */
	{100, 1, 0x7000010, 1600, 3, 1, 3, 2, 0}, /* 9 */
	{200, 2, 0x9000010, 70, NONE, 2, 1, 1, 1}, /* 10: sample 10 is after libsample's unload at 5 */
	{300, 3, 0x8000100, 80, 7, 3, 4, NONE, NONE}, /* 11: a process with no executable */
	{200, 2, 0x400200, 90, 5, 2, 1, 1, 1}, /* 12 */
	{100, 7, 0x400100, 20, 0, 0, 5, 0, NONE}, /* 13: a thread the written section lacks */
};
#define N_SAMPLES (sizeof g_samples / sizeof g_samples[0])
/* module -> process and thread -> process, derived and written */
static const TBRW_U64 g_mb_derived[N_MODS] = {0, 0, 0, 0, NONE, 2, 1, 3, 2};
static const TBRW_U64 g_mb_written[N_MODS] = {0, 0, 0, 0, NONE, 1, 2, NONE, 1};
static const TBRW_U64 g_tb_written[N_THREADS] = {0, 1, 0, 2, NONE};
/* the derived threads, in the order their first sample made them */
static const struct {
	TBRW_U32 pid, tid;
	TBRW_U64 when, process;
} g_dthreads[] = {{100, 1, 10, 0}, {200, 2, 60, 2}, {100, 5, 400, 0}, {100, 1, 1500, 1}, {300, 3, 80, 3}, {100, 7, 20, 0}};
/* the derived processes: pid generations */
static const struct {
	TBRW_U32 pid;
	TBRW_U64 start;
	const wchar_t *name;
} g_dprocs[] = {{100, 0, L"a.out"}, {100, 1000, L"c.out"}, {200, 50, L"b.out"}, {300, 0, NULL}};

static struct rec0 sample_rec(size_t i)
{
	struct rec0 r;

	memset(&r, 0, sizeof r);
	r.pc.eip = (TBRW_U32)g_samples[i].ip;
	r.pc.codeMode = TBRW_MODE_32BIT;
	r.pc.tid = g_samples[i].tid;
	r.pc.pidRecIndex = g_samples[i].pid;
	r.pc.pidRecIndexRaw = 1;
	r.pc.cpuNum = (TBRW_U16)(i % 3); /* the binder caches per CPU: results must not depend on it */
	r.tsc.tsc = g_samples[i].tsc;
	return r;
}

static void write_bind_file(const char *name, int write_pt)
{
	TBRW_PTR h = open_create(name, 0);

	init_descs();
	write_module_section(h);
	if (write_pt)
		write_pt_section(h);
	OK(TBRW_writing_stream(h, 0));
	write_stream_header(h, 0, g_desc0, 2, 0);
	OK(TBRW_writing_stream_section(h, 0, TBRW_DATA_SECTION));
	for (size_t i = 0; i < N_SAMPLES; i++) {
		struct rec0 r = sample_rec(i);
		OK(TBRW_add_data(h, 0, sizeof r, &r));
	}
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 0));
	/* stream 1 holds no sample records: it cannot be bound */
	OK(TBRW_writing_stream(h, 1));
	write_stream_header(h, 1, g_desc1, 2, 0);
	OK(TBRW_writing_stream_section(h, 1, TBRW_DATA_SECTION));
	for (int i = 0; i < 3; i++) {
		struct rec1 r = rec1_at((uint64_t)i);
		OK(TBRW_add_data(h, 1, sizeof r, &r));
	}
	OK(TBRW_done_stream_section(h, 1, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 1));
	OK(TBRW_close(h));
}

struct bind_collect {
	DATA_BIND_STRUCT b[4 * N_SAMPLES];
	struct rec0 r[4 * N_SAMPLES];
	uint64_t n, calls;
	TBRW_U32 answer;
};

static TBRW_U32 on_bind(const void *data, TBRW_U32 ds, TBRW_U64 n, const DATA_BIND_STRUCT *b, TBRW_U32 bs, void *u)
{
	struct bind_collect *c = u;

	assert_int_equal(ds, n * sizeof(struct rec0));
	assert_int_equal(bs, n * sizeof *b);
	assert_true(c->n + n <= 4 * N_SAMPLES);
	memcpy(c->b + c->n, b, bs);
	memcpy(c->r + c->n, data, ds);
	c->n += n;
	c->calls++;
	return c->answer ? c->answer : TRUE;
}

struct u64_collect {
	TBRW_U64 v[64];
	unsigned char items[64 * sizeof(TBRW_MODULE)];
	size_t n;
};

static TBRW_U32 on_bind_module(const void *data, TBRW_U32 ds, TBRW_U64 n, const MODULE_BIND_STRUCT *b, TBRW_U32 bs,
			       void *u)
{
	struct u64_collect *c = u;

	assert_int_equal(ds, n * sizeof(TBRW_MODULE));
	assert_int_equal(bs, n * sizeof *b);
	for (TBRW_U64 i = 0; i < n; i++)
		c->v[c->n + i] = b[i].pid_index;
	memcpy(c->items + c->n * sizeof(TBRW_MODULE), data, ds);
	c->n += n;
	return TRUE;
}

static TBRW_U32 on_bind_tid(const void *data, TBRW_U32 ds, TBRW_U64 n, const TID_BIND_STRUCT *b, TBRW_U32 bs, void *u)
{
	struct u64_collect *c = u;

	assert_int_equal(ds, n * sizeof(TBRW_TID));
	assert_int_equal(bs, n * sizeof *b);
	for (TBRW_U64 i = 0; i < n; i++)
		c->v[c->n + i] = b[i].pid_index;
	memcpy(c->items + c->n * sizeof(TBRW_TID), data, ds);
	c->n += n;
	return TRUE;
}

/* The bind result of stream 0 of a bind file: written is 1 for a written process/thread section. */
static void check_bind(TBRW_PTR h, int written)
{
	struct bind_collect c;
	struct u64_collect m, t;
	struct collect p = {.h = h};
	TBRW_U32 bound = 0, size = 0;

	OK(TBRW_is_bound(h, 0, &bound));
	assert_int_equal(bound, 1);
	OK(TBRW_get_size_of_data_bind_entry(h, 0, &size));
	assert_int_equal(size, sizeof(DATA_BIND_STRUCT));
	OK(TBRW_get_size_of_module_bind_entry(h, 0, &size));
	assert_int_equal(size, sizeof(MODULE_BIND_STRUCT));
	OK(TBRW_get_size_of_tid_bind_entry(h, 0, &size));
	assert_int_equal(size, sizeof(TID_BIND_STRUCT));
	memset(&c, 0, sizeof c);
	OK(TBRW_bind_enumerate_data(h, 0, on_bind, &c, 0));
	assert_int_equal(c.n, N_SAMPLES);
	for (size_t i = 0; i < N_SAMPLES; i++) {
		struct rec0 r = sample_rec(i);
		const struct sample *s = &g_samples[i];
		if (c.b[i].module_index != s->mod || c.b[i].pid_index != (written ? s->wpid : s->dpid) ||
		    c.b[i].tid_index != (written ? s->wtid : s->dtid)) {
			print_error("sample %zu bound to module %lld, process %lld, thread %lld; expected %lld, %lld, %lld\n",
				    i, (long long)c.b[i].module_index, (long long)c.b[i].pid_index,
				    (long long)c.b[i].tid_index, (long long)s->mod, (long long)(written ? s->wpid : s->dpid),
				    (long long)(written ? s->wtid : s->dtid));
			fail();
		}
		assert_memory_equal(&c.r[i], &r, sizeof r);
	}
	/* from a start index, and stopped early */
	memset(&c, 0, sizeof c);
	OK(TBRW_bind_enumerate_data(h, 0, on_bind, &c, 8));
	assert_int_equal(c.n, N_SAMPLES - 8);
	assert_int_equal(c.b[0].module_index, g_samples[8].mod);
	memset(&c, 0, sizeof c);
	OK(TBRW_bind_enumerate_data(h, 0, on_bind, &c, N_SAMPLES));
	assert_int_equal(c.calls, 0);
	memset(&c, 0, sizeof c);
	c.answer = FALSE;
	OK(TBRW_bind_enumerate_data(h, 0, on_bind, &c, 0));
	assert_int_equal(c.calls, 1);
	memset(&c, 0, sizeof c);
	c.answer = 4242;
	FAILS(TBRW_bind_enumerate_data(h, 0, on_bind, &c, 3), 4242, "TBRW_bind_enumerate_data");

	memset(&m, 0, sizeof m);
	OK(TBRW_bind_enumerate_modules(h, on_bind_module, &m, 0));
	assert_int_equal(m.n, N_MODS);
	for (size_t i = 0; i < N_MODS; i++)
		assert_int_equal(m.v[i], written ? g_mb_written[i] : g_mb_derived[i]);
	memset(&t, 0, sizeof t);
	OK(TBRW_bind_enumerate_threads(h, on_bind_tid, &t, 0));
	if (written) {
		assert_int_equal(t.n, N_THREADS);
		for (size_t i = 0; i < N_THREADS; i++)
			assert_int_equal(t.v[i], g_tb_written[i]);
	} else {
		assert_int_equal(t.n, sizeof g_dthreads / sizeof g_dthreads[0]);
		for (size_t i = 0; i < t.n; i++) {
			TBRW_TID tid;
			memcpy(&tid, t.items + i * sizeof tid, sizeof tid);
			assert_int_equal(t.v[i], g_dthreads[i].process);
			assert_int_equal(tid.tid_associated_pid, g_dthreads[i].pid);
			assert_int_equal(tid.tid_id, g_dthreads[i].tid);
			assert_int_equal(tid.tid_event_when, g_dthreads[i].when);
			assert_int_equal(tid.tid_flags, TBRW_TID_DERIVED);
		}
		/* the derived processes */
		OK(TBRW_enumerate_processes(h, on_pid, &p, 0));
		assert_int_equal(p.n, sizeof g_dprocs / sizeof g_dprocs[0]);
		for (size_t i = 0; i < p.n; i++) {
			TBRW_PID pid;
			memcpy(&pid, p.buf + i * sizeof pid, sizeof pid);
			assert_int_equal(pid.pid_id, g_dprocs[i].pid);
			assert_int_equal(pid.pid_event_when, g_dprocs[i].start);
			assert_int_equal(pid.pid_flags, TBRW_PID_CREATED | TBRW_PID_DERIVED);
			same_string(h, pid.pid_name, g_dprocs[i].name);
		}
		free(p.buf);
	}
}

static void test_bind_in_memory(void **state)
{
	TBRW_PTR h;
	TBRW_U32 bound = 1;
	struct bind_collect c;

	(void)state;
	write_bind_file("bind_d.tb5", 0);
	write_bind_file("bind_w.tb5", 1);

	/* read-only handles bind in memory; the file is not changed */
	h = open_read("bind_d.tb5");
	OK(TBRW_is_bound(h, 0, &bound));
	assert_int_equal(bound, 0);
	memset(&c, 0, sizeof c);
	FAILS(TBRW_bind_enumerate_data(h, 0, on_bind, &c, 0), TBRW_NOT_BOUND, "stream 0 is not bound");
	FAILS(TBRW_dobind(h, 1), TBRW_BIND_FAILED, "ST_LEGACY_SAMPLE_RECORD");
	FAILS(TBRW_dobind(h, 2), TBRW_INVALID_STREAM, "stream 2 does not exist");
	OK(TBRW_dobind(h, 0));
	check_bind(h, 0);
	OK(TBRW_dobind(h, 0)); /* again: the same result */
	check_bind(h, 0);
	OK(TBRW_unbind(h, 0));
	OK(TBRW_is_bound(h, 0, &bound));
	assert_int_equal(bound, 0);
	FAILS(TBRW_unbind(h, 0), TBRW_NOT_BOUND, "not bound");
	OK(TBRW_close(h));
	h = open_read("bind_d.tb5");
	OK(TBRW_is_bound(h, 0, &bound));
	assert_int_equal(bound, 0);
	OK(TBRW_close(h));

	h = open_read("bind_w.tb5");
	OK(TBRW_dobind(h, 0));
	check_bind(h, 1);
	check_written_pt(h); /* the written section is left as it was */
	OK(TBRW_close(h));
}

static void test_bind_persisted(void **state)
{
	TBRW_PTR h;
	TBRW_U32 bound = 0;

	(void)state;
	for (int written = 0; written <= 1; written++) {
		const char *name = written ? "bindp_w.tb5" : "bindp_d.tb5";
		write_bind_file(name, written);
		OK(TBRW_open(&h, wpath(name), TBRW_FILE_READ | TBRW_FILE_WRITE));
		OK(TBRW_dobind(h, 0));
		check_bind(h, written);
		OK(TBRW_dobind(h, 0)); /* binding again replaces the result (a drop chunk, then anew) */
		check_bind(h, written);
		OK(TBRW_verify(h));
		OK(TBRW_close(h));

		/* stored in the file: no TBRW_dobind needed to read it */
		h = open_read(name);
		OK(TBRW_verify(h));
		check_bind(h, written);
		if (written)
			check_written_pt(h);
		OK(TBRW_close(h));

		/* unbinding removes the result and the process/thread section it derived */
		OK(TBRW_open(&h, wpath(name), TBRW_FILE_READ | TBRW_FILE_WRITE));
		OK(TBRW_unbind(h, 0));
		OK(TBRW_is_bound(h, 0, &bound));
		assert_int_equal(bound, 0);
		OK(TBRW_close(h));
		h = open_read(name);
		OK(TBRW_verify(h));
		OK(TBRW_is_bound(h, 0, &bound));
		assert_int_equal(bound, 0);
		if (written)
			check_written_pt(h);
		else
			FAILS(TBRW_reading_section(h, TBRW_PROCESS_THREAD_SECTION), TBRW_SECTION_NOT_FOUND,
			      "no process/thread section");
		OK(TBRW_close(h));
	}
}

/* A data chunk may hold up to 64 MiB of records: far more records than fit the 1 MiB chunks
 * this library writes. Binding and enumerating its persisted result must size their buffers
 * from what they check, never from a count in the file. */
struct big_check {
	uint64_t n, calls;
	int bad;
};

static TBRW_U32 on_big_bind(const void *data, TBRW_U32 ds, TBRW_U64 n, const DATA_BIND_STRUCT *b, TBRW_U32 bs, void *u)
{
	struct big_check *c = u;
	const unsigned char *p = data;

	if (ds != n * 40 || bs != n * sizeof *b)
		c->bad = 1;
	for (TBRW_U64 i = 0; i < n; i++) {
		TBRW_U32 eip;
		memcpy(&eip, p + i * 40, 4);
		if (b[i].module_index != (eip >= 0x400000 && eip < 0x410000 ? 0 : NONE) || b[i].pid_index != 0)
			c->bad = 1;
	}
	c->n += n;
	c->calls++;
	return TRUE;
}

static void test_bind_big_chunk(void **state)
{
	const uint32_t n = 1600000; /* 64000000 bytes of 40-byte records in one chunk */
	struct rec0 *recs = malloc((size_t)n * sizeof *recs);
	struct tb5_handle *hh;
	struct tb5_stream *st;
	struct big_check c = {0, 0, 0};
	TBRW_PTR h;

	(void)state;
	assert_non_null(recs);
	for (uint32_t i = 0; i < n; i++) {
		recs[i] = sample_rec(0);
		recs[i].pc.eip = i % 2 ? 0x400100 : 0x500000;
		recs[i].tsc.tsc = 5; /* a.out's time, before c.out reuses pid 100 */
	}
	init_descs();
	h = open_create("big_chunk.tb5", TBRW_FILE_COMPRESS);
	write_module_section(h);
	OK(TBRW_writing_stream(h, 0));
	write_stream_header(h, 0, g_desc0, 2, 0);
	OK(TBRW_writing_stream_section(h, 0, TBRW_DATA_SECTION));
	/* one chunk as another writer may make it, through the container directly */
	hh = h;
	st = hh->streams[0];
	OK(tk__tb5_write_chunk(hh, st->data_obj, CK_DATA, st->data_obj->id, 0, n, recs, (size_t)n * sizeof *recs));
	st->data_obj->total = n;
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 0));
	OK(TBRW_dobind(h, 0));
	OK(TBRW_close(h));
	free(recs);

	h = open_read("big_chunk.tb5");
	OK(TBRW_verify(h));
	OK(TBRW_bind_enumerate_data(h, 0, on_big_bind, &c, 0));
	assert_int_equal(c.n, n);
	assert_false(c.bad);
	assert_true(c.calls > 1); /* handed over in batches */
	memset(&c, 0, sizeof c);
	OK(TBRW_bind_enumerate_data(h, 0, on_big_bind, &c, n - 70000));
	assert_int_equal(c.n, 70000);
	assert_false(c.bad);
	/* bound again in memory */
	memset(&c, 0, sizeof c);
	OK(TBRW_dobind(h, 0));
	OK(TBRW_bind_enumerate_data(h, 0, on_big_bind, &c, 1));
	assert_int_equal(c.n, n - 1);
	assert_false(c.bad);
	OK(TBRW_close(h));
}

/* ---- damaged files ------------------------------------------------------------------------------ */

/* A small file with every chunk kind: strings, meta, data (plain), end, a drop chunk and the
 * chunks of a dropped object (bound twice), the directory. */
static void write_small_all_kinds(const char *name)
{
	struct full_opts o = {.n0 = 40, .n1 = 5, .mode = 0, .write_pt = 0};
	TBRW_PTR h;

	write_full(name, &o);
	OK(TBRW_open(&h, wpath(name), TBRW_FILE_READ | TBRW_FILE_WRITE));
	OK(TBRW_dobind(h, 0));
	OK(TBRW_dobind(h, 0));
	OK(TBRW_close(h));
}

/* Opens, verifies and reads everything; returns the first failure. */
static TBRW_U32 open_verify(const char *name)
{
	TBRW_PTR h = NULL;
	TBRW_U32 rc = TBRW_open(&h, wpath(name), TBRW_FILE_READ);

	if (rc != VT_SUCCESS)
		return rc;
	rc = TBRW_verify(h);
	TBRW_close(h);
	return rc;
}

/* Every single-bit flip anywhere in a file is caught by opening and verifying it, with a
 * message that says where. */
static void test_every_bit_flip(void **state)
{
	size_t len;
	unsigned char *orig;
	struct chunk_info chunks[256];
	size_t n;
	int kinds[8] = {0};

	(void)state;
	write_small_all_kinds("flip.tb5");
	OK(open_verify("flip.tb5"));
	orig = (unsigned char *)tkt_read_file(tkt_path("flip.tb5"), &len);
	assert_non_null(orig);
	n = scan_chunks("flip.tb5", chunks, 256);
	for (size_t i = 0; i < n; i++)
		kinds[chunks[i].kind < 8 ? chunks[i].kind : 0]++;
	for (int k = CK_STRINGS; k <= CK_DROP; k++)
		if (kinds[k] == 0) {
			print_error("the test file has no chunk of kind %d\n", k);
			fail();
		}
	for (size_t off = 0; off < len; off++) {
		unsigned char *copy = malloc(len);
		TBRW_U32 rc;
		assert_non_null(copy);
		memcpy(copy, orig, len);
		copy[off] ^= (unsigned char)(1u << (off % 8));
		tkt_write_file(tkt_path("flipped.tb5"), copy, len);
		free(copy);
		rc = open_verify("flipped.tb5");
		if (rc == VT_SUCCESS) {
			print_error("a flipped bit at byte offset %zu went unnoticed\n", off);
			fail();
		}
		if (rc != TBRW_FILE_CORRUPT && rc != TBRW_FILE_TRUNCATED && rc != TBRW_NOT_A_TB5_FILE) {
			print_error("a flipped bit at byte offset %zu: code %u (%s)\n", off, rc, tk_tbrw_error_detail());
			fail();
		}
		if (strstr(tk_tbrw_error_detail(), "byte offset") == NULL) {
			print_error("a flipped bit at byte offset %zu: \"%s\" does not say where\n", off,
				    tk_tbrw_error_detail());
			fail();
		}
	}
	free(orig);
}

/* 1 if the file's directory lists a chunk at offset (0 for chunks of dropped objects). */
static int listed(const char *name, uint64_t offset)
{
	struct tb5_handle *h = open_read(name);
	int found = 0;

	for (size_t i = 0; i < h->n_chunks; i++)
		found |= h->chunks[i].offset == offset;
	OK(TBRW_close(h));
	return found;
}

/* The examples of the issue, with the exact place named. */
static void test_damage_named(void **state)
{
	struct chunk_info chunks[256];
	size_t n;
	char where[64];
	TBRW_PTR h;
	struct collect c = {.h = NULL};
	uint64_t size;

	(void)state;
	write_small_all_kinds("dmg.tb5");
	n = scan_chunks("dmg.tb5", chunks, 256);
	size = file_size("dmg.tb5");
	for (size_t i = 0; i < n; i++) {
		const struct chunk_info *k = &chunks[i];
		snprintf(where, sizeof where, "byte offset %llu", (unsigned long long)k->offset);
		copy_prefix("dmg.tb5", "dmg_x.tb5", size);
		if (k->kind == CK_END && listed("dmg.tb5", k->offset)) {
			/* an end chunk: caught when the file is opened */
			flip_bit("dmg_x.tb5", k->offset + 20, 3);
			h = NULL;
			FAILS(TBRW_open(&h, wpath("dmg_x.tb5"), TBRW_FILE_READ), TBRW_FILE_CORRUPT, where);
			assert_null(h);
		} else if (k->kind == CK_DATA && k->id == OBJ_STREAM_SEC(0, TBRW_DATA_SECTION)) {
			/* a data chunk: caught when read, and by verify */
			flip_bit("dmg_x.tb5", k->offset + TB5_CHUNK_HEADER_SIZE + 17, 0);
			h = open_read("dmg_x.tb5");
			FAILS(TBRW_verify(h), TBRW_FILE_CORRUPT, where);
			DETAIL_HAS("checksum mismatch");
			OK(TBRW_reading_stream(h, 0));
			OK(TBRW_reading_stream_section(h, 0, TBRW_DATA_SECTION));
			FAILS(TBRW_enumerate_data(h, 0, on_data, &c, 0), TBRW_FILE_CORRUPT, where);
			free(c.buf);
			memset(&c, 0, sizeof c);
			OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
			OK(TBRW_done_stream(h, 0));
			OK(TBRW_close(h));
		} else if (k->stored % 8 != 0) {
			/* padding is not covered by the checksum: it must be zero */
			flip_bit("dmg_x.tb5", k->offset + TB5_CHUNK_HEADER_SIZE + k->stored, 6);
			RC(open_verify("dmg_x.tb5"), TBRW_FILE_CORRUPT);
			DETAIL_HAS("padding byte at byte offset");
			DETAIL_HAS(where);
		} else if (k->kind == CK_DROP || k->kind == CK_META || k->kind == CK_END) {
			/* a chunk the directory leaves out, or a section: verify walks every chunk */
			flip_bit("dmg_x.tb5", k->offset + 2, 1);
			RC(open_verify("dmg_x.tb5"), TBRW_FILE_CORRUPT);
			DETAIL_HAS(where);
		}
	}
	/* the header, the trailer */
	copy_prefix("dmg.tb5", "dmg_x.tb5", size);
	flip_bit("dmg_x.tb5", 9, 0);
	FAILS(open_verify("dmg_x.tb5"), TBRW_FILE_CORRUPT, "byte offset 60");
	copy_prefix("dmg.tb5", "dmg_x.tb5", size);
	flip_bit("dmg_x.tb5", size - 20, 0);
	FAILS(open_verify("dmg_x.tb5"), TBRW_FILE_TRUNCATED, "no valid trailer at byte offset");
	/* not a tb5 file, truncated */
	tkt_write_file(tkt_path("text.tb5"), "hello, this is text\n", 20);
	FAILS(open_verify("text.tb5"), TBRW_NOT_A_TB5_FILE, "no tb5 signature at byte offset 0");
	tkt_write_file(tkt_path("empty.tb5"), "", 0);
	FAILS(open_verify("empty.tb5"), TBRW_NOT_A_TB5_FILE, "byte offset 0");
	copy_prefix("dmg.tb5", "dmg_x.tb5", 30);
	FAILS(open_verify("dmg_x.tb5"), TBRW_FILE_TRUNCATED, "file ends at byte offset 30");
	copy_prefix("dmg.tb5", "dmg_x.tb5", size - 1);
	FAILS(open_verify("dmg_x.tb5"), TBRW_FILE_TRUNCATED, "byte offset");
	FAILS(open_verify("no-such-file.tb5"), TBRW_FILE_NOT_FOUND, "no-such-file.tb5");
}

/* ---- salvage ------------------------------------------------------------------------------------- */

/* Cuts name at len, salvages it and checks what was kept against the chunk list. */
static void recover_cut(const char *name, const struct chunk_info *chunks, size_t n, uint64_t len, uint64_t full)
{
	tk_tbrw_recover_report rep;
	uint64_t kept = 0, records[2] = {0, 0}, chunks_kept = 0;
	int desc_done[2] = {0, 0}, complete = 0;
	uint32_t data_id[2] = {OBJ_STREAM_SEC(0, TBRW_DATA_SECTION), OBJ_STREAM_SEC(1, TBRW_DATA_SECTION)};
	uint32_t desc_id[2] = {OBJ_STREAM_SEC(0, TBRW_DATA_DESCRIPTION_SECTION),
			       OBJ_STREAM_SEC(1, TBRW_DATA_DESCRIPTION_SECTION)};
	TBRW_PTR h;
	TBRW_U32 rc;
	char msg[96];

	copy_prefix(name, "cut.tb5", len);
	unlink(tkt_path("cut_rec.tb5"));
	memset(&rep, 0, sizeof rep);
	rc = tk_tbrw_recover(tkt_path("cut.tb5"), tkt_path("cut_rec.tb5"), &rep);
	snprintf(msg, sizeof msg, "%s cut at %llu of %llu", name, (unsigned long long)len, (unsigned long long)full);
	if (len < TB5_HEADER_SIZE) {
		if (rc != TBRW_NOT_A_TB5_FILE || tkt_exists(tkt_path("cut_rec.tb5"))) {
			print_error("%s: salvage returned %u\n", msg, rc);
			fail();
		}
		return;
	}
	if (rc != VT_SUCCESS) {
		print_error("%s: salvage returned %u (%s)\n", msg, rc, tk_tbrw_error_detail());
		fail();
	}
	/* what the scan keeps: every whole chunk before the cut */
	for (size_t i = 0; i < n; i++) {
		if (chunks[i].offset + chunks[i].size > len)
			break;
		if (chunks[i].kind == CK_DIRECTORY) {
			complete = 1;
			break;
		}
		chunks_kept++;
		kept = chunks[i].offset + chunks[i].size;
		for (int s = 0; s < 2; s++) {
			if (chunks[i].id == desc_id[s] && chunks[i].kind == CK_END)
				desc_done[s] = 1;
			if (chunks[i].id == data_id[s] && chunks[i].kind == CK_DATA)
				records[s] += chunks[i].count;
		}
	}
	(void)kept;
	for (int s = 0; s < 2; s++)
		if (!desc_done[s])
			records[s] = 0;
	if (rep.chunks_kept != chunks_kept || rep.records_kept != records[0] + records[1] ||
	    rep.was_complete != (TBRW_U32)complete) {
		print_error("%s: kept %llu chunks and %llu records (complete %u), expected %llu, %llu (%d)\n", msg,
			    (unsigned long long)rep.chunks_kept, (unsigned long long)rep.records_kept, rep.was_complete,
			    (unsigned long long)chunks_kept, (unsigned long long)(records[0] + records[1]), complete);
		fail();
	}
	h = NULL;
	rc = TBRW_open(&h, wpath("cut_rec.tb5"), TBRW_FILE_READ);
	if (rc == VT_SUCCESS)
		rc = TBRW_verify(h);
	if (rc != VT_SUCCESS) {
		print_error("%s: the salvaged file does not verify: %u (%s)\n", msg, rc, tk_tbrw_error_detail());
		fail();
	}
	for (TBRW_U32 s = 0; s < 2; s++) {
		struct collect c = {.h = NULL};
		if (!desc_done[s])
			continue;
		OK(TBRW_reading_stream(h, s));
		rc = TBRW_reading_stream_section(h, s, TBRW_DATA_SECTION);
		if (rc == TBRW_SECTION_NOT_FOUND && records[s] == 0) {
			OK(TBRW_done_stream(h, s));
			continue;
		}
		OK(rc);
		OK(TBRW_enumerate_data(h, s, on_data, &c, 0));
		assert_int_equal(c.n, records[s]);
		for (uint64_t i = 0; i < c.n; i++) {
			if (s == 0) {
				struct rec0 want = rec0_at(i);
				assert_memory_equal(c.buf + i * sizeof want, &want, sizeof want);
			} else {
				struct rec1 want = rec1_at(i);
				assert_memory_equal(c.buf + i * sizeof want, &want, sizeof want);
			}
		}
		free(c.buf);
		OK(TBRW_done_stream_section(h, s, TBRW_DATA_SECTION));
		OK(TBRW_done_stream(h, s));
	}
	if (complete) {
		/* nothing lost: the whole content is there */
		check_software(h);
		check_modules(h);
	}
	OK(TBRW_close(h));
}

static void recover_every_cut(const char *name)
{
	struct chunk_info chunks[512];
	size_t n = scan_chunks(name, chunks, 512);
	uint64_t full = file_size(name);

	recover_cut(name, chunks, n, 0, full);
	recover_cut(name, chunks, n, 40, full);
	for (size_t i = 0; i < n; i++) {
		const struct chunk_info *k = &chunks[i];
		recover_cut(name, chunks, n, k->offset, full); /* at the boundary */
		recover_cut(name, chunks, n, k->offset + 1, full);
		recover_cut(name, chunks, n, k->offset + TB5_CHUNK_HEADER_SIZE, full); /* header only */
		if (k->stored > 1)
			recover_cut(name, chunks, n, k->offset + TB5_CHUNK_HEADER_SIZE + k->stored / 2, full);
		recover_cut(name, chunks, n, k->offset + k->size - 1, full);
	}
	recover_cut(name, chunks, n, full - 1, full);
	recover_cut(name, chunks, n, full, full);
}

static void test_recover_every_chunk(void **state)
{
	struct full_opts plain = {.n0 = 60000, .n1 = 200, .mode = 0, .write_pt = 1};
	struct full_opts packed = {.n0 = 60000, .n1 = 200, .mode = TBRW_FILE_COMPRESS, .write_pt = 0};

	(void)state;
	write_full("rec_plain.tb5", &plain);
	recover_every_cut("rec_plain.tb5");
	write_full("rec_packed.tb5", &packed);
	recover_every_cut("rec_packed.tb5");
	/* bound twice: bind streams, a derived process/thread section, a drop chunk */
	write_small_all_kinds("rec_bound.tb5");
	recover_every_cut("rec_bound.tb5");
	{
		/* a bound file salvaged whole stays bound */
		TBRW_PTR h;
		tk_tbrw_recover_report rep;
		TBRW_U32 bound = 0;
		OK(tk_tbrw_recover(tkt_path("rec_bound.tb5"), tkt_path("rec_bound_r.tb5"), &rep));
		assert_int_equal(rep.was_complete, 1);
		h = open_read("rec_bound_r.tb5");
		OK(TBRW_is_bound(h, 0, &bound));
		assert_int_equal(bound, 1);
		OK(TBRW_close(h));
	}
}

/* ---- concurrent stream writers ----------------------------------------------------------------- */

#define CONC_THREADS 8
#define CONC_EVENTS 40

struct conc_arg {
	TBRW_PTR h;
	TBRW_U32 stream;
	uint64_t n_records;
	int failed;
	char why[256];
};

#define CONC_OK(a, call)                                                                              \
	do {                                                                                          \
		TBRW_U32 r_ = (call);                                                                 \
		if (r_ != VT_SUCCESS) {                                                               \
			snprintf((a)->why, sizeof (a)->why, "%s: %u (%s)", #call, r_, tk_tbrw_error_detail()); \
			(a)->failed = 1;                                                              \
			return NULL;                                                                  \
		}                                                                                     \
	} while (0)

/* One stream, written by its own thread: every section with strings of its own, records in
 * runs of every size. */
static void *conc_writer(void *p)
{
	struct conc_arg *a = p;
	TBRW_U32 s = a->stream;
	wchar_t name[96], comment[64];
	TBRW_STREAM_INFO si;
	TBRW_SAMPREC_DESC_ENTRY d;
	TBRW_U64 run[2 * 64];

	CONC_OK(a, TBRW_writing_stream_section(a->h, s, TBRW_EVENT_DESCRIPTION_SECTION));
	for (int k = 0; k < CONC_EVENTS; k++) {
		TBRW_EVENT e;
		memset(&e, 0, sizeof e);
		e.event_size = sizeof e;
		e.event_id = (TBRW_U32)k;
		swprintf(name, 96, L"event %u.%d, with a name long enough to fill string chunks", s, k);
		e.event_name.soi_ptr = name;
		e.event_arch_name.soi_ptr = (TBRW_CHAR *)L"shared architecture name";
		CONC_OK(a, TBRW_add_event(a->h, s, &e));
	}
	CONC_OK(a, TBRW_done_stream_section(a->h, s, TBRW_EVENT_DESCRIPTION_SECTION));
	memset(&si, 0, sizeof si);
	si.stream_info_size = sizeof si;
	si.stream_type = TBRW_CUSTOM_STREAM;
	swprintf(comment, 64, L"stream %u comment", s);
	si.comment.soi_ptr = comment;
	CONC_OK(a, TBRW_writing_stream_section(a->h, s, TBRW_STREAM_INFO_SECTION));
	CONC_OK(a, TBRW_set_stream_info(a->h, s, &si));
	CONC_OK(a, TBRW_done_stream_section(a->h, s, TBRW_STREAM_INFO_SECTION));
	swprintf(name, 96, L"descriptor of stream %u", s);
	d = desc_entry(0, 16, ST_START_USER_DEFINED, 0, name);
	CONC_OK(a, TBRW_writing_stream_section(a->h, s, TBRW_DATA_DESCRIPTION_SECTION));
	CONC_OK(a, TBRW_add_data_descriptor_entry(a->h, s, &d));
	CONC_OK(a, TBRW_done_stream_section(a->h, s, TBRW_DATA_DESCRIPTION_SECTION));
	CONC_OK(a, TBRW_writing_stream_section(a->h, s, TBRW_DATA_SECTION));
	for (uint64_t i = 0; i < a->n_records;) {
		uint64_t k = 1 + i % 64;
		if (k > a->n_records - i)
			k = a->n_records - i;
		for (uint64_t j = 0; j < k; j++) {
			run[2 * j] = s;
			run[2 * j + 1] = i + j;
		}
		CONC_OK(a, TBRW_add_data(a->h, s, (TBRW_U32)(k * 16), run));
		i += k;
	}
	CONC_OK(a, TBRW_done_stream_section(a->h, s, TBRW_DATA_SECTION));
	CONC_OK(a, TBRW_done_stream(a->h, s));
	return NULL;
}

struct conc_check {
	TBRW_U64 stream, next, bad;
};

static TBRW_U32 on_conc_data(void *d, TBRW_U32 size, TBRW_U32 n, void *u)
{
	struct conc_check *c = u;
	TBRW_U64 v[2];

	(void)size;
	for (TBRW_U32 i = 0; i < n; i++) {
		memcpy(v, (unsigned char *)d + (size_t)i * 16, 16);
		if (v[0] != c->stream || v[1] != c->next + i)
			c->bad++;
	}
	c->next += n;
	return TRUE;
}

static TBRW_U32 on_conc_events(TBRW_EVENT *e, TBRW_U32 size, TBRW_U32 n, void *u)
{
	struct collect *c = u;
	wchar_t want[96];

	(void)size;
	for (TBRW_U32 i = 0; i < n; i++) {
		swprintf(want, 96, L"event %u.%u, with a name long enough to fill string chunks", (unsigned)c->stop_after,
			 e[i].event_id);
		same_string(c->h, e[i].event_name, want);
		same_string(c->h, e[i].event_arch_name, L"shared architecture name");
	}
	c->n += n;
	return TRUE;
}

static void test_concurrent_streams(void **state)
{
	const int iterations = TKT_SANITIZER ? 6 : 25;
	const uint64_t n_records = TKT_SANITIZER ? 20000 : 60000;

	(void)state;
	for (int it = 0; it < iterations; it++) {
		struct conc_arg args[CONC_THREADS];
		pthread_t threads[CONC_THREADS];
		TBRW_PTR h = open_create("conc.tb5", it % 2 ? TBRW_FILE_COMPRESS : 0);

		for (TBRW_U32 s = 0; s < CONC_THREADS; s++)
			OK(TBRW_writing_stream(h, s));
		for (TBRW_U32 s = 0; s < CONC_THREADS; s++) {
			args[s] = (struct conc_arg){.h = h, .stream = s, .n_records = n_records + s, .failed = 0};
			assert_int_equal(pthread_create(&threads[s], NULL, conc_writer, &args[s]), 0);
		}
		for (TBRW_U32 s = 0; s < CONC_THREADS; s++)
			assert_int_equal(pthread_join(threads[s], NULL), 0);
		for (TBRW_U32 s = 0; s < CONC_THREADS; s++)
			if (args[s].failed) {
				print_error("iteration %d, stream %u: %s\n", it, s, args[s].why);
				fail();
			}
		OK(TBRW_close(h));

		h = open_read("conc.tb5");
		OK(TBRW_verify(h));
		for (TBRW_U32 s = 0; s < CONC_THREADS; s++) {
			struct conc_check c = {s, 0, 0};
			struct collect ev = {.h = h, .stop_after = s}; /* stop_after: the stream, for the names */
			TBRW_STREAM_INFO si;
			wchar_t want[64];
			OK(TBRW_reading_stream(h, s));
			OK(TBRW_reading_stream_section(h, s, TBRW_DATA_SECTION));
			OK(TBRW_enumerate_data(h, s, on_conc_data, &c, 0));
			assert_int_equal(c.next, n_records + s);
			assert_int_equal(c.bad, 0);
			OK(TBRW_done_stream_section(h, s, TBRW_DATA_SECTION));
			OK(TBRW_reading_stream_section(h, s, TBRW_STREAM_INFO_SECTION));
			OK(TBRW_get_stream_info(h, s, sizeof si, &si, NULL));
			swprintf(want, 64, L"stream %u comment", s);
			same_string(h, si.comment, want);
			OK(TBRW_done_stream_section(h, s, TBRW_STREAM_INFO_SECTION));
			OK(TBRW_reading_stream_section(h, s, TBRW_EVENT_DESCRIPTION_SECTION));
			OK(TBRW_enumerate_events(h, s, on_conc_events, &ev, 0));
			assert_int_equal(ev.n, CONC_EVENTS);
			OK(TBRW_done_stream_section(h, s, TBRW_EVENT_DESCRIPTION_SECTION));
			OK(TBRW_done_stream(h, s));
		}
		OK(TBRW_close(h));
	}
}

/* ---- limits: memory, disk ---------------------------------------------------------------------- */

/* Runs fn in a child process (so that its resource limits stay there); fails on its status. */
static void in_child(int (*fn)(void), const char *what)
{
	pid_t pid;
	int status = 0;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		print_error("%s: child status 0x%x\n", what, status);
		fail();
	}
}

#define CHILD_CHECK(cond, ...)                                                                         \
	do {                                                                                           \
		if (!(cond)) {                                                                         \
			fprintf(stderr, "%s:%d: %s failed: ", __FILE__, __LINE__, #cond);              \
			fprintf(stderr, __VA_ARGS__);                                                  \
			fprintf(stderr, " (detail: %s)\n", tk_tbrw_error_detail());                    \
			return 1;                                                                      \
		}                                                                                      \
	} while (0)

/* In a child (no cmocka): stream 0's information and descriptor sections, then its data
 * section opened for writing. Returns the first failure. */
static TBRW_U32 child_open_data_section(TBRW_PTR h)
{
	TBRW_STREAM_INFO si = stream_info_at(0);
	TBRW_U32 rc = TBRW_writing_stream_section(h, 0, TBRW_STREAM_INFO_SECTION);

	if (rc == VT_SUCCESS)
		rc = TBRW_set_stream_info(h, 0, &si);
	if (rc == VT_SUCCESS)
		rc = TBRW_done_stream_section(h, 0, TBRW_STREAM_INFO_SECTION);
	if (rc == VT_SUCCESS)
		rc = TBRW_writing_stream_section(h, 0, TBRW_DATA_DESCRIPTION_SECTION);
	for (int i = 0; i < 2 && rc == VT_SUCCESS; i++)
		rc = TBRW_add_data_descriptor_entry(h, 0, &g_desc0[i]);
	if (rc == VT_SUCCESS)
		rc = TBRW_done_stream_section(h, 0, TBRW_DATA_DESCRIPTION_SECTION);
	if (rc == VT_SUCCESS)
		rc = TBRW_writing_stream_section(h, 0, TBRW_DATA_SECTION);
	return rc;
}

static uint64_t g_big_records;

static TBRW_U32 on_big_data(void *d, TBRW_U32 size, TBRW_U32 n, void *u)
{
	uint64_t *next = u;
	struct rec0 r;

	(void)size;
	for (TBRW_U32 i = 0; i < n; i++) {
		memcpy(&r, (unsigned char *)d + (size_t)i * sizeof r, sizeof r);
		if (r.tsc.tsc != *next + i)
			return 1234;
	}
	*next += n;
	return TRUE;
}

/* A file of a few hundred MB written and read back with an address space limit well below
 * its size: nothing may hold it whole (reading it falls back from mmap to pread). */
static int big_file_child(void)
{
	const uint64_t batch = 65536, limit_extra = (uint64_t)96 << 20;
	struct rec0 *buf = malloc(batch * sizeof *buf);
	struct rlimit rl;
	unsigned long pages = 0;
	FILE *statm = fopen("/proc/self/statm", "r");
	TBRW_PTR h = NULL;
	TBRW_U32 rc;
	uint64_t next, n = g_big_records;
	const wchar_t *path = wpath("big.tb5");

	CHILD_CHECK(buf != NULL && statm != NULL, "setup");
	CHILD_CHECK(fscanf(statm, "%lu", &pages) == 1, "statm");
	fclose(statm);
	rl.rlim_cur = rl.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + limit_extra;
	CHILD_CHECK(setrlimit(RLIMIT_AS, &rl) == 0, "setrlimit");
	CHILD_CHECK(n * sizeof *buf > 2 * limit_extra, "the file must be larger than the limit");

	rc = TBRW_open(&h, path, TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS);
	CHILD_CHECK(rc == VT_SUCCESS, "open for writing: %u", rc);
	init_descs();
	rc = TBRW_writing_stream(h, 0);
	if (rc == VT_SUCCESS)
		rc = child_open_data_section(h);
	for (uint64_t i = 0; i < n && rc == VT_SUCCESS;) {
		uint64_t k = n - i < batch ? n - i : batch;
		for (uint64_t j = 0; j < k; j++) {
			buf[j] = rec0_at(0);
			buf[j].tsc.tsc = i + j;
		}
		rc = TBRW_add_data(h, 0, (TBRW_U32)(k * sizeof *buf), buf);
		i += k;
	}
	if (rc == VT_SUCCESS)
		rc = TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION);
	if (rc == VT_SUCCESS)
		rc = TBRW_done_stream(h, 0);
	CHILD_CHECK(rc == VT_SUCCESS, "writing: %u", rc);
	rc = TBRW_close(h);
	CHILD_CHECK(rc == VT_SUCCESS, "close: %u", rc);

	rc = TBRW_open(&h, path, TBRW_FILE_READ);
	CHILD_CHECK(rc == VT_SUCCESS, "open for reading: %u", rc);
	CHILD_CHECK(((struct tb5_handle *)h)->map == NULL, "the file was mapped despite the limit");
	rc = TBRW_verify(h);
	CHILD_CHECK(rc == VT_SUCCESS, "verify: %u", rc);
	rc = TBRW_reading_stream(h, 0);
	if (rc == VT_SUCCESS)
		rc = TBRW_reading_stream_section(h, 0, TBRW_DATA_SECTION);
	next = 0;
	if (rc == VT_SUCCESS)
		rc = TBRW_enumerate_data(h, 0, on_big_data, &next, 0);
	CHILD_CHECK(rc == VT_SUCCESS && next == n, "enumerate: %u, %llu records", rc, (unsigned long long)next);
	next = n - n / 3;
	rc = TBRW_enumerate_data(h, 0, on_big_data, &next, next);
	CHILD_CHECK(rc == VT_SUCCESS && next == n, "enumerate from %llu: %u", (unsigned long long)(n - n / 3), rc);
	TBRW_close(h);

	/* appending to it works under the limit too */
	rc = TBRW_open(&h, path, TBRW_FILE_READ | TBRW_FILE_WRITE);
	CHILD_CHECK(rc == VT_SUCCESS, "open for appending: %u", rc);
	rc = TBRW_writing_section(h, TBRW_VERSION_INFO_SECTION);
	if (rc == VT_SUCCESS) {
		TBRW_VERSION_INFO vi = g_version();
		rc = TBRW_set_version_info(h, &vi);
	}
	if (rc == VT_SUCCESS)
		rc = TBRW_done_section(h, TBRW_VERSION_INFO_SECTION);
	if (rc == VT_SUCCESS)
		rc = TBRW_close(h);
	CHILD_CHECK(rc == VT_SUCCESS, "append: %u", rc);
	free(buf);
	return 0;
}

static void test_larger_than_memory_limit(void **state)
{
	(void)state;
	if (TKT_SANITIZER) {
		/* sanitizer runtimes reserve terabytes of address space: RLIMIT_AS cannot apply */
		skip();
	}
	g_big_records = (uint64_t)8 << 20; /* 320 MiB of 40-byte records */
	in_child(big_file_child, "a file larger than the address space limit");
	unlink(tkt_path("big.tb5"));
}

/* A full disk: the file size limit makes writes fail with EFBIG. The failure is reported
 * (with the file and the byte offset), sticks until TBRW_close, and leaves nothing behind. */
static int disk_full_child(void)
{
	struct rlimit rl = {256 << 10, 256 << 10};
	TBRW_PTR h = NULL;
	TBRW_U32 rc = VT_SUCCESS, first = VT_SUCCESS;
	char part[600];

	signal(SIGXFSZ, SIG_IGN);
	CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit");
	rc = TBRW_open(&h, wpath("full.tb5"), TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS);
	CHILD_CHECK(rc == VT_SUCCESS, "open: %u", rc);
	init_descs();
	rc = TBRW_writing_stream(h, 0);
	CHILD_CHECK(rc == VT_SUCCESS, "writing_stream");
	rc = child_open_data_section(h);
	CHILD_CHECK(rc == VT_SUCCESS, "sections: %u", rc);
	for (uint64_t i = 0; i < 100000; i++) {
		struct rec0 r = rec0_at(i);
		rc = TBRW_add_data(h, 0, sizeof r, &r);
		if (rc != VT_SUCCESS) {
			first = rc;
			break;
		}
	}
	CHILD_CHECK(first == TBRW_DISK_FULL, "add_data: %u", first);
	CHILD_CHECK(strstr(tk_tbrw_error_detail(), "full.tb5.part: write failed at byte offset") != NULL, "detail");
	rc = TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION);
	CHILD_CHECK(rc == TBRW_DISK_FULL, "done after a failed write: %u", rc);
	CHILD_CHECK(strstr(tk_tbrw_error_detail(), "an earlier write failed") != NULL, "detail");
	rc = TBRW_close(h);
	CHILD_CHECK(rc == TBRW_DISK_FULL, "close: %u", rc);
	snprintf(part, sizeof part, "%s.part", tkt_path("full.tb5"));
	CHILD_CHECK(!tkt_exists(tkt_path("full.tb5")) && !tkt_exists(part), "a file was left behind");
	return 0;
}

static void test_disk_full(void **state)
{
	(void)state;
	in_child(disk_full_child, "a full disk");
}

/* ---- calls out of order, bad arguments ----------------------------------------------------------- */

static void test_bad_calls(void **state)
{
	TBRW_PTR h = NULL, r;
	TBRW_HOST host = g_host();
	TBRW_SAMPREC_DESC_ENTRY legacy = desc_entry(0, 32, ST_LEGACY_SAMPLE_RECORD, 0, NULL);
	TBRW_SAMPREC_DESC_ENTRY d8 = desc_entry(0, 8, ST_START_USER_DEFINED, 0, NULL);
	TBRW_U64 v[2] = {1, 2};
	TBRW_U32 n = 0;
	char part[600];

	(void)state;
	FAILS(TBRW_open(NULL, wpath("x.tb5"), TBRW_FILE_READ), TBRW_INVALID_PARAMETER, "ptr is NULL");
	FAILS(TBRW_open(&h, wpath("x.tb5"), 0x1000), TBRW_INVALID_PARAMETER, "invalid access mode");
	FAILS(TBRW_open(&h, L"", TBRW_FILE_READ), TBRW_INVALID_PARAMETER, "no file name");
	FAILS(TBRW_open(&h, L"/no/such/dir/x.tb5", TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS), TBRW_FILE_NOT_FOUND,
	      "cannot create");
	FAILS(TBRW_writing_section(NULL, TBRW_HARDWARE_SECTION), TBRW_INVALID_PARAMETER, "NULL TBRW handle");

	h = open_create("bad.tb5", 0);
	/* unknown section ids */
	FAILS(TBRW_writing_section(h, (TBRW_SECTION_IDENTIFIER)6), TBRW_INVALID_SECTION, "not a global section");
	FAILS(TBRW_reading_section(h, (TBRW_SECTION_IDENTIFIER)-1), TBRW_INVALID_SECTION, "not a global section");
	FAILS(TBRW_done_section(h, (TBRW_SECTION_IDENTIFIER)42), TBRW_INVALID_SECTION, "not a global section");
	/* out of order */
	FAILS(TBRW_set_host(h, &host), TBRW_CALL_OUT_OF_ORDER, "TBRW_set_host before its section was opened");
	FAILS(TBRW_done_section(h, TBRW_SOFTWARE_SECTION), TBRW_CALL_OUT_OF_ORDER, "without TBRW_writing_section");
	FAILS(TBRW_reading_section(h, TBRW_SOFTWARE_SECTION), TBRW_SECTION_NOT_FOUND, "no software section");
	OK(TBRW_writing_section(h, TBRW_SOFTWARE_SECTION));
	FAILS(TBRW_writing_section(h, TBRW_SOFTWARE_SECTION), TBRW_SECTION_BUSY, "already open");
	FAILS(TBRW_reading_section(h, TBRW_SOFTWARE_SECTION), TBRW_SECTION_BUSY, "being written");
	FAILS(TBRW_done_section(h, TBRW_SOFTWARE_SECTION), TBRW_VALIDATION_FAILED, "needs a host");
	host.host_size = 3;
	FAILS(TBRW_set_host(h, &host), TBRW_INVALID_PARAMETER, "size field is 3");
	host = g_host();
	OK(TBRW_set_host(h, &host));
	FAILS(TBRW_set_host(h, &host), TBRW_SECTION_EXISTS, "called twice");
	OK(TBRW_done_section(h, TBRW_SOFTWARE_SECTION));
	FAILS(TBRW_writing_section(h, TBRW_SOFTWARE_SECTION), TBRW_SECTION_EXISTS, "already exists");
	OK(TBRW_writing_section(h, TBRW_HARDWARE_SECTION));
	FAILS(TBRW_done_section(h, TBRW_HARDWARE_SECTION), TBRW_VALIDATION_FAILED, "TBRW_set_system");
	/* streams out of range, out of order */
	FAILS(TBRW_writing_stream(h, 1), TBRW_INVALID_STREAM, "the next one is 0");
	FAILS(TBRW_writing_stream(h, TB5_MAX_STREAMS), TBRW_INVALID_STREAM, "TBRW_writing_stream(4096)");
	FAILS(TBRW_writing_stream_section(h, 0, TBRW_STREAM_INFO_SECTION), TBRW_INVALID_STREAM, "stream 0 does not exist");
	FAILS(TBRW_add_data(h, 7, 16, v), TBRW_INVALID_STREAM, "stream 7 does not exist");
	FAILS(TBRW_add_data(h, 0xffffffffu, 16, v), TBRW_INVALID_STREAM, "does not exist");
	OK(TBRW_writing_stream(h, 0));
	FAILS(TBRW_writing_stream(h, 0), TBRW_SECTION_BUSY, "stream 0 is already open");
	FAILS(TBRW_writing_stream_section(h, 0, (TBRW_STREAM_SECTION_IDENTIFIER)5), TBRW_INVALID_SECTION,
	      "not a stream section identifier");
	FAILS(TBRW_writing_stream_section(h, 0, TBRW_DATA_SECTION), TBRW_CALL_OUT_OF_ORDER,
	      "data description section before the data section");
	FAILS(TBRW_add_data(h, 0, 16, v), TBRW_CALL_OUT_OF_ORDER, "not open for writing");
	FAILS(TBRW_done_stream(h, 0), TBRW_VALIDATION_FAILED, "has no stream information section");
	OK(TBRW_writing_stream_section(h, 0, TBRW_DATA_DESCRIPTION_SECTION));
	FAILS(TBRW_done_stream_section(h, 0, TBRW_DATA_DESCRIPTION_SECTION), TBRW_VALIDATION_FAILED, "at least one entry");
	d8.desc_data_size = 0;
	FAILS(TBRW_add_data_descriptor_entry(h, 0, &d8), TBRW_RECORD_SIZE_MISMATCH, "descriptor entry of 0 bytes");
	d8.desc_data_size = 8;
	OK(TBRW_add_data_descriptor_entry(h, 0, &d8));
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_DESCRIPTION_SECTION));
	OK(TBRW_writing_stream_section(h, 0, TBRW_DATA_SECTION));
	FAILS(TBRW_add_data(h, 0, 12, v), TBRW_RECORD_SIZE_MISMATCH, "records of 8 bytes");
	FAILS(TBRW_add_data(h, 0, 0, v), TBRW_INVALID_PARAMETER, "no data");
	OK(TBRW_add_data(h, 0, 16, v));
	FAILS(TBRW_done_stream(h, 0), TBRW_CALL_OUT_OF_ORDER, "the data section is still open");
	/* legacy records belong in stream 0 only */
	OK(TBRW_writing_stream(h, 1));
	OK(TBRW_writing_stream_section(h, 1, TBRW_DATA_DESCRIPTION_SECTION));
	FAILS(TBRW_add_data_descriptor_entry(h, 1, &legacy), TBRW_LEGACY_RECORD_IN_STREAM, "stream 0 only");
	/* reading what is being written */
	FAILS(TBRW_reading_stream(h, 0), TBRW_STREAM_NOT_FOUND, "stream 0 is not complete");
	FAILS(TBRW_get_number_data_streams(h, NULL), TBRW_INVALID_PARAMETER, "numStreams is NULL");
	OK(TBRW_get_number_data_streams(h, &n));
	assert_int_equal(n, 2);
	/* closing with sections open saves nothing */
	FAILS(TBRW_close(h), TBRW_CALL_OUT_OF_ORDER, "still open");
	snprintf(part, sizeof part, "%s.part", tkt_path("bad.tb5"));
	assert_false(tkt_exists(tkt_path("bad.tb5")));
	assert_false(tkt_exists(part));

	/* read-only handles */
	write_bind_file("bad_r.tb5", 0);
	r = open_read("bad_r.tb5");
	FAILS(TBRW_writing_section(r, TBRW_SOFTWARE_SECTION), TBRW_READ_ONLY, "opened for reading only");
	FAILS(TBRW_writing_stream(r, 2), TBRW_READ_ONLY, "opened for reading only");
	FAILS(TBRW_reading_stream(r, 2), TBRW_INVALID_STREAM, "stream 2 does not exist");
	FAILS(TBRW_reading_stream_section(r, 0, TBRW_DATA_SECTION), TBRW_CALL_OUT_OF_ORDER, "call TBRW_reading_stream");
	FAILS(TBRW_done_stream(r, 0), TBRW_CALL_OUT_OF_ORDER, "without TBRW_writing_stream");
	FAILS(TBRW_get_host(r, 0, NULL, &n), TBRW_CALL_OUT_OF_ORDER, "before its section was opened");
	{
		TBRW_STRING_OR_ID id = {{0}};
		TBRW_CHAR buf[8];
		FAILS(TBRW_convert_uniqueid_to_string(r, 8, &id, buf, &n), TBRW_INVALID_STRING, "no string has unique id 0");
		id.soi_uniqueid = 100000;
		FAILS(TBRW_convert_uniqueid_to_string(r, 8, &id, buf, &n), TBRW_INVALID_STRING, "unique id 100000");
	}
	OK(TBRW_close(r));
	OK(TBRW_close(NULL));
	OK(TBRW_abort_cleanup_and_close(NULL));
}

/* Every failing call sets the detail, TBRW_BUFFER_TOO_SMALL included: it never shows the text
 * of an earlier failure. */
static void test_buffer_too_small(void **state)
{
	TBRW_PTR h;
	TBRW_CHAR wbuf[4];
	char buf[4];
	TBRW_U32 n;
	const TBRW_MODULE *m = NULL;
	TBRW_HOST host;
	TBRW_STRING_OR_ID id;

	(void)state;
	write_bind_file("small.tb5", 1);
	h = open_read("small.tb5");
	OK(TBRW_get_one_module(h, 1, &m));
	id = m->module_name;
	FAILS(TBRW_get_one_module(h, 99, &m), TBRW_INDEX_OUT_OF_RANGE, "module index 99");
	n = 0;
	FAILS(TBRW_convert_uniqueid_to_string(h, 4, &id, wbuf, &n), TBRW_BUFFER_TOO_SMALL, "needs 8 wide characters");
	assert_int_equal(n, 8); /* "lib1.so" and its NUL */
	FAILS(TBRW_get_one_module(h, 99, &m), TBRW_INDEX_OUT_OF_RANGE, "module index 99");
	n = 4;
	FAILS(TBRW_convert_wcs_to_utf8(L"h\u00e9llo", buf, &n), TBRW_BUFFER_TOO_SMALL, "7 bytes needed");
	assert_int_equal(n, 7);
	FAILS(TBRW_get_one_module(h, 99, &m), TBRW_INDEX_OUT_OF_RANGE, "module index 99");
	n = 0;
	FAILS(TBRW_convert_utf8_to_wcs("h\xc3\xa9llo", NULL, &n), TBRW_BUFFER_TOO_SMALL, "6 wide characters needed");
	assert_int_equal(n, 6);
	n = 0;
	FAILS(TBRW_convert_utf8_to_wcs("bad \xc3", NULL, &n), TBRW_INVALID_STRING, "not valid UTF-8");
	OK(TBRW_close(h));

	write_full("small_full.tb5", &(struct full_opts){.n0 = 1, .n1 = 1, .mode = 0, .write_pt = 0});
	h = open_read("small_full.tb5");
	OK(TBRW_reading_section(h, TBRW_SOFTWARE_SECTION));
	FAILS(TBRW_get_one_module(h, 99, &m), TBRW_INDEX_OUT_OF_RANGE, "module index 99");
	FAILS(TBRW_get_host(h, sizeof host - 1, &host, &n), TBRW_BUFFER_TOO_SMALL, "TBRW_get_host: the buffer holds");
	FAILS(TBRW_get_one_module(h, 99, &m), TBRW_INDEX_OUT_OF_RANGE, "module index 99");
	FAILS(TBRW_get_os(h, 0, NULL, &n), TBRW_BUFFER_TOO_SMALL, "TBRW_get_os");
	OK(TBRW_done_section(h, TBRW_SOFTWARE_SECTION));
	OK(TBRW_reading_section(h, TBRW_USER_DEFINED_GLOBAL_SECTION));
	FAILS(TBRW_get_user_defined_global(h, 10, buf, &n), TBRW_BUFFER_TOO_SMALL, "300 are needed");
	OK(TBRW_done_section(h, TBRW_USER_DEFINED_GLOBAL_SECTION));
	OK(TBRW_reading_section(h, TBRW_HARDWARE_SECTION));
	FAILS(TBRW_get_system(h, 8, (TBRW_SYSTEM *)(void *)wbuf, &n), TBRW_BUFFER_TOO_SMALL, "TBRW_get_system");
	OK(TBRW_done_section(h, TBRW_HARDWARE_SECTION));
	FAILS(TBRW_error_string(3, NULL), TBRW_INVALID_PARAMETER, "error_string is NULL");
	OK(TBRW_close(h));
}

/* TBRW_add_data_from_file: a file that ends with part of a record is refused before anything
 * is appended. */
static void test_add_data_from_file(void **state)
{
	struct rec0 recs[1000];
	TBRW_PTR h;
	struct collect c = {.h = NULL};
	wchar_t wdir[600];

	(void)state;
	for (int i = 0; i < 1000; i++)
		recs[i] = rec0_at((uint64_t)i);
	tkt_write_file(tkt_path("recs.bin"), recs, sizeof recs);
	tkt_write_file(tkt_path("recs_partial.bin"), recs, sizeof recs - 7);
	init_descs();
	h = open_create("from_file.tb5", 0);
	OK(TBRW_writing_stream(h, 0));
	write_stream_header(h, 0, g_desc0, 2, 0);
	OK(TBRW_writing_stream_section(h, 0, TBRW_DATA_SECTION));
	FAILS(TBRW_add_data_from_file(h, 0, (TBRW_CHAR *)wpath("recs_partial.bin")), TBRW_RECORD_SIZE_MISMATCH,
	      "not a whole number of 40-byte records");
	FAILS(TBRW_add_data_from_file(h, 0, (TBRW_CHAR *)wpath("no-such.bin")), TBRW_FILE_NOT_FOUND, "no-such.bin");
	swprintf(wdir, 600, L"%s", tkt_dir());
	FAILS(TBRW_add_data_from_file(h, 0, wdir), TBRW_INVALID_PARAMETER, "not a regular file");
	OK(TBRW_add_data(h, 0, sizeof recs[0], &recs[0]));
	OK(TBRW_add_data_from_file(h, 0, (TBRW_CHAR *)wpath("recs.bin")));
	FAILS(TBRW_add_data_from_file(h, 1, (TBRW_CHAR *)wpath("recs.bin")), TBRW_INVALID_STREAM, "stream 1");
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 0));
	OK(TBRW_close(h));

	h = open_read("from_file.tb5");
	OK(TBRW_reading_stream(h, 0));
	OK(TBRW_reading_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_enumerate_data(h, 0, on_data, &c, 0));
	assert_int_equal(c.n, 1001); /* the failed calls appended nothing */
	assert_memory_equal(c.buf, &recs[0], sizeof recs[0]);
	assert_memory_equal(c.buf + sizeof recs[0], recs, sizeof recs);
	free(c.buf);
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 0));
	OK(TBRW_close(h));
}

/* ---- issue 10 ---------------------------------------------------------------------------- */

/* Item 7: binding leaves the records as written (mrIndex/mrIndexNone included, the guide
 * writes them 0); the module of a sample is its DATA_BIND_STRUCT.module_index. */
static void test_bind_keeps_mr_index(void **state)
{
	static struct bind_collect c;
	TBRW_PTR h;
	int none_seen = 0;

	(void)state;
	write_bind_file("bind_mr.tb5", 0);
	h = open_read("bind_mr.tb5");
	OK(TBRW_dobind(h, 0));
	memset(&c, 0, sizeof c);
	OK(TBRW_bind_enumerate_data(h, 0, on_bind, &c, 0));
	assert_int_equal(c.n, N_SAMPLES);
	for (size_t i = 0; i < N_SAMPLES; i++) {
		assert_int_equal(c.b[i].module_index, g_samples[i].mod);
		assert_int_equal(c.r[i].pc.mrIndex, 0);
		assert_int_equal(c.r[i].pc.mrIndexNone, 0);
		none_seen |= c.b[i].module_index == TBRW_BIND_NO_INDEX;
	}
	assert_true(none_seen);
	OK(TBRW_close(h));
}

/* Item 8: the guide's usage, the string through soi_ptr: no buffer, no size pointer. */
struct soi_thread {
	TBRW_PTR h;
	TBRW_STRING_OR_ID id;
	const wchar_t *want;
	int ok;
};

static void *soi_thread_run(void *p)
{
	struct soi_thread *t = p;

	for (int i = 0; i < 200; i++) {
		TBRW_STRING_OR_ID id = t->id;
		if (TBRW_convert_uniqueid_to_string(t->h, 0, &id, NULL, NULL) != VT_SUCCESS || id.soi_ptr == NULL ||
		    wcscmp(id.soi_ptr, t->want) != 0)
			return NULL;
	}
	t->ok = 1;
	return NULL;
}

static void test_convert_through_soi_ptr(void **state)
{
	TBRW_PTR h;
	const TBRW_MODULE *m = NULL;
	TBRW_STRING_OR_ID id, id2, none = {{0}};
	TBRW_CHAR buf[32];
	TBRW_U32 need = 0;
	struct soi_thread t[2];
	pthread_t th[2];

	(void)state;
	write_bind_file("soi.tb5", 1);
	h = open_read("soi.tb5");
	OK(TBRW_get_one_module(h, 1, &m));
	id = m->module_name;
	OK(TBRW_get_one_module(h, 0, &m));
	id2 = m->module_name;
	/* as chapter 9.1 writes it: convert, then use soi_ptr */
	{
		TBRW_STRING_OR_ID x = id, y = id2;
		OK(TBRW_convert_uniqueid_to_string(h, 0, &x, NULL, NULL));
		assert_non_null(x.soi_ptr);
		assert_true(wcscmp(x.soi_ptr, L"lib1.so") == 0);
		OK(TBRW_convert_uniqueid_to_string(h, 0, &y, NULL, NULL));
		assert_true(wcscmp(y.soi_ptr, L"a.out") == 0);
	}
	/* with a buffer: the text is there and soi_ptr points to it */
	{
		TBRW_STRING_OR_ID x = id;
		OK(TBRW_convert_uniqueid_to_string(h, 32, &x, buf, &need));
		assert_ptr_equal(x.soi_ptr, buf);
		assert_true(wcscmp(buf, L"lib1.so") == 0);
		assert_int_equal(need, 8);
	}
	/* the size query and a short buffer leave the id as it was */
	{
		TBRW_STRING_OR_ID x = id;
		RC(TBRW_convert_uniqueid_to_string(h, 0, &x, NULL, &need), TBRW_BUFFER_TOO_SMALL);
		assert_int_equal(x.soi_uniqueid, id.soi_uniqueid);
		RC(TBRW_convert_uniqueid_to_string(h, 3, &x, buf, &need), TBRW_BUFFER_TOO_SMALL);
		assert_int_equal(x.soi_uniqueid, id.soi_uniqueid);
	}
	/* id 0 is no string (FAQ 7.6), without touching soi_ptr */
	FAILS(TBRW_convert_uniqueid_to_string(h, 0, &none, NULL, NULL), TBRW_INVALID_STRING, "unique id 0");
	assert_int_equal(none.soi_uniqueid, 0);
	/* one buffer per thread: two threads converting different strings do not mix them */
	t[0] = (struct soi_thread){.h = h, .id = id, .want = L"lib1.so"};
	t[1] = (struct soi_thread){.h = h, .id = id2, .want = L"a.out"};
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, soi_thread_run, &t[i]), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	assert_true(t[0].ok && t[1].ok);
	OK(TBRW_close(h));
}

/* Sets the flags of the chunk at off in its header and in the directory entry listing it,
 * every checksum recomputed: damage that only a reader's own checks can catch. */
static void set_chunk_flags(const char *name, uint64_t off, uint16_t flags)
{
	size_t len;
	unsigned char *d = (unsigned char *)tkt_read_file(tkt_path(name), &len);
	uint64_t dir_off, n;
	unsigned char *dir;

	assert_non_null(d);
	tb5_put16(d + off + 6, flags);
	tb5_put32(d + off + 36, tk__crc32c(0, d + off, 36));
	dir_off = tb5_get64(d + len - TB5_TRAILER_SIZE + 8);
	dir = d + dir_off + TB5_CHUNK_HEADER_SIZE;
	n = tb5_get64(dir);
	for (uint64_t i = 0; i < n; i++)
		if (tb5_get64(dir + 8 + i * 40) == off)
			tb5_put16(dir + 8 + i * 40 + 30, flags);
	tb5_put32(d + dir_off + 32, tk__crc32c(0, dir, tb5_get32(d + dir_off + 12)));
	tb5_put32(d + dir_off + 36, tk__crc32c(0, d + dir_off, 36));
	tkt_write_file(tkt_path(name), d, len);
	free(d);
}

/* Item 32: an end chunk flagged as compressed is damage named as such (it made the reader
 * add 0 to a NULL buffer: UBSan), when opening and when salvaging. */
static void test_zstd_flag_on_end_chunk(void **state)
{
	struct chunk_info ch[64];
	size_t n, i;
	TBRW_PTR h = NULL;
	tk_tbrw_recover_report rep;

	(void)state;
	write_bind_file("zend.tb5", 1);
	n = scan_chunks("zend.tb5", ch, 64);
	for (i = 0; i < n && ch[i].kind != CK_END; i++)
		;
	assert_true(i < n);
	set_chunk_flags("zend.tb5", ch[i].offset, CK_FLAG_ZSTD);
	FAILS(TBRW_open(&h, wpath("zend.tb5"), TBRW_FILE_READ), TBRW_FILE_CORRUPT, "cannot be compressed");
	assert_null(h);
	/* salvage skips the damaged chunk: its section is left out, the rest is kept */
	memset(&rep, 0, sizeof rep);
	OK(tk_tbrw_recover(tkt_path("zend.tb5"), tkt_path("zend_rec.tb5"), &rep));
	assert_int_equal(rep.was_complete, 0);
	assert_true(rep.sections_dropped >= 1);
	h = open_read("zend_rec.tb5");
	OK(TBRW_verify(h));
	OK(TBRW_close(h));
}

static void on_alarm(int sig)
{
	(void)sig;
	_exit(3);
}

/* Item 32: a FIFO without a writer is refused at once (it blocked in open). */
static void test_fifo_refused(void **state)
{
	TBRW_PTR h = NULL;
	tk_tbrw_recover_report rep;

	(void)state;
	unlink(tkt_path("fifo.tb5"));
	assert_int_equal(mkfifo(tkt_path("fifo.tb5"), 0600), 0);
	signal(SIGALRM, on_alarm);
	alarm(20);
	FAILS(TBRW_open(&h, wpath("fifo.tb5"), TBRW_FILE_READ), TBRW_NOT_A_TB5_FILE, "not a regular file (a FIFO)");
	FAILS(TBRW_open(&h, wpath("fifo.tb5"), TBRW_FILE_WRITE), TBRW_NOT_A_TB5_FILE, "not a regular file (a FIFO)");
	FAILS(tk_tbrw_recover(tkt_path("fifo.tb5"), tkt_path("fifo_rec.tb5"), &rep), TBRW_NOT_A_TB5_FILE, "a FIFO");
	alarm(0);
	signal(SIGALRM, SIG_DFL);
	assert_false(tkt_exists(tkt_path("fifo_rec.tb5")));
	assert_false(tkt_exists(tkt_path("fifo_rec.tb5.part")));
	unlink(tkt_path("fifo.tb5"));
}

/* Item 26: the file shrinks while it is read through the mapping: the reader reports the
 * truncation instead of dying of SIGBUS. */
struct shrink_ctx {
	const char *path;
	uint64_t calls, records;
	off_t to;
};

static TBRW_U32 on_data_shrink(void *d, TBRW_U32 size, TBRW_U32 n, void *u)
{
	struct shrink_ctx *c = u;
	volatile const unsigned char *p = d;
	unsigned sum = 0;

	if (c->calls++ == 0)
		assert_int_equal(truncate(c->path, c->to), 0);
	for (TBRW_U32 i = 0; i < size; i += 64)
		sum += p[i]; /* touches every page: past the new end they fault */
	(void)sum;
	c->records += n;
	return TRUE;
}

static void test_file_shrinks_while_read(void **state)
{
	TBRW_PTR h;
	const uint32_t n = 200000; /* 8 MB of 40-byte records: several chunks */
	struct shrink_ctx c = {.path = NULL};

	(void)state;
	init_descs();
	h = open_create("shrink.tb5", 0);
	OK(TBRW_writing_stream(h, 0));
	write_stream_header(h, 0, g_desc0, 2, 0);
	OK(TBRW_writing_stream_section(h, 0, TBRW_DATA_SECTION));
	for (uint32_t i = 0; i < n; i++) {
		struct rec0 r = rec0_at(i);
		OK(TBRW_add_data(h, 0, sizeof r, &r));
	}
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 0));
	OK(TBRW_close(h));

	h = open_read("shrink.tb5");
	OK(TBRW_reading_stream(h, 0));
	OK(TBRW_reading_stream_section(h, 0, TBRW_DATA_SECTION));
	c.path = tkt_path("shrink.tb5");
	c.to = 100000;
	FAILS(TBRW_enumerate_data(h, 0, on_data_shrink, &c, 0), TBRW_FILE_TRUNCATED,
	      "shrank to 100000 bytes while it was read");
	assert_true(c.records < n);
	/* and again: still an error, not data of zeros */
	c.calls = 1;
	FAILS(TBRW_enumerate_data(h, 0, on_data_shrink, &c, 0), TBRW_FILE_TRUNCATED, "shrank");
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 0));
	OK(TBRW_close(h));
	/* a fault outside any mapping of the library still kills as SIGBUS does */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGBUS, SIG_DFL); /* the program's own disposition: the default */
		TBRW_PTR h2 = open_read("bind_mr.tb5"); /* the library's handler is in place from here */
		(void)h2;
		int fd = open(tkt_path("shrink.tb5"), O_RDONLY);
		volatile unsigned char *m = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			_exit(2);
		_exit(m[(1 << 20) - 1]); /* past the end of the 100000-byte file */
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS);
}

/* Item 18: salvage goes past damage. */
struct lost_seen {
	uint64_t from[16], to[16];
	char what[16][200];
	size_t n;
};

static void on_lost(TBRW_U64 from, TBRW_U64 to, const char *what, void *u)
{
	struct lost_seen *l = u;

	if (l->n < 16) {
		l->from[l->n] = from;
		l->to[l->n] = to;
		snprintf(l->what[l->n], sizeof l->what[0], "%s", what);
	}
	l->n++;
}

/* Stream 0 of the salvaged file holds the records of the original but those of lost_first ..
 * lost_first + lost_n - 1, the others following on. */
static void check_stream0_gap(const char *name, uint32_t n0, uint64_t lost_first, uint64_t lost_n)
{
	struct collect c = {.h = NULL};
	TBRW_PTR h = open_read(name);

	OK(TBRW_verify(h));
	OK(TBRW_reading_stream(h, 0));
	OK(TBRW_reading_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_enumerate_data(h, 0, on_data, &c, 0));
	assert_int_equal(c.n, n0 - lost_n);
	for (uint64_t k = 0; k < c.n; k++) {
		struct rec0 want = rec0_at(k < lost_first ? k : k + lost_n);
		assert_memory_equal(c.buf + k * sizeof want, &want, sizeof want);
	}
	free(c.buf);
	OK(TBRW_done_stream_section(h, 0, TBRW_DATA_SECTION));
	OK(TBRW_done_stream(h, 0));
	/* what came after the damage is there: stream 1 and its records */
	{
		struct collect c1 = {.h = NULL};
		OK(TBRW_reading_stream(h, 1));
		OK(TBRW_reading_stream_section(h, 1, TBRW_DATA_SECTION));
		OK(TBRW_enumerate_data(h, 1, on_data, &c1, 0));
		assert_int_equal(c1.n, 200);
		free(c1.buf);
		OK(TBRW_done_stream_section(h, 1, TBRW_DATA_SECTION));
		OK(TBRW_done_stream(h, 1));
	}
	OK(TBRW_close(h));
}

static void test_recover_past_damage(void **state)
{
	struct full_opts o = {.n0 = 100000, .n1 = 200, .mode = 0, .write_pt = 1};
	struct chunk_info ch[256];
	const struct chunk_info *mid = NULL;
	size_t n, seen = 0;
	tk_tbrw_recover_report rep;
	struct lost_seen l;
	uint64_t lost_first;

	(void)state;
	write_full("dmgmid.tb5", &o);
	n = scan_chunks("dmgmid.tb5", ch, 256);
	/* the second data chunk of stream 0 */
	for (size_t i = 0; i < n && mid == NULL; i++)
		if (ch[i].kind == CK_DATA && ch[i].id == OBJ_STREAM_SEC(0, TBRW_DATA_SECTION) && seen++ == 1)
			mid = &ch[i];
	assert_non_null(mid);
	lost_first = 0;
	for (size_t i = 0; &ch[i] != mid; i++)
		if (ch[i].kind == CK_DATA && ch[i].id == mid->id)
			lost_first += ch[i].count;

	/* 1. its payload is damaged: skipped by its own length */
	copy_prefix("dmgmid.tb5", "dmg_pay.tb5", file_size("dmgmid.tb5"));
	flip_bit("dmg_pay.tb5", mid->offset + TB5_CHUNK_HEADER_SIZE + 1000, 3);
	memset(&l, 0, sizeof l);
	memset(&rep, 0, sizeof rep);
	OK(tk_tbrw_recover_ranges(tkt_path("dmg_pay.tb5"), tkt_path("dmg_pay_r.tb5"), &rep, on_lost, &l));
	assert_int_equal(l.n, 1);
	assert_int_equal(l.from[0], mid->offset);
	assert_int_equal(l.to[0], mid->offset + mid->size);
	assert_non_null(strstr(l.what[0], "a data chunk of stream 0"));
	assert_non_null(strstr(l.what[0], "checksum mismatch"));
	assert_int_equal(rep.ranges_lost, 1);
	assert_int_equal(rep.first_bad_offset, mid->offset);
	assert_int_equal(rep.bytes_dropped, mid->size);
	assert_int_equal(rep.records_lost, mid->count);
	assert_int_equal(rep.records_kept, o.n0 - mid->count + o.n1);
	assert_int_equal(rep.was_complete, 0);
	assert_int_equal(rep.chunks_kept, n - 2); /* all but the damaged one and the directory */
	check_stream0_gap("dmg_pay_r.tb5", o.n0, lost_first, mid->count);

	/* 2. its header is damaged: the scan finds the next chunk header */
	copy_prefix("dmgmid.tb5", "dmg_head.tb5", file_size("dmgmid.tb5"));
	flip_bit("dmg_head.tb5", mid->offset + 1, 0);
	memset(&l, 0, sizeof l);
	OK(tk_tbrw_recover_ranges(tkt_path("dmg_head.tb5"), tkt_path("dmg_head_r.tb5"), &rep, on_lost, &l));
	assert_int_equal(l.n, 1);
	assert_int_equal(l.from[0], mid->offset);
	assert_int_equal(l.to[0], mid->offset + mid->size);
	assert_non_null(strstr(l.what[0], "bytes that hold no chunk"));
	assert_int_equal(rep.records_lost, mid->count);
	check_stream0_gap("dmg_head_r.tb5", o.n0, lost_first, mid->count);

	/* 3. two damaged stretches and a cut end: all reported, in file order */
	copy_prefix("dmgmid.tb5", "dmg_two.tb5", file_size("dmgmid.tb5") - 100);
	flip_bit("dmg_two.tb5", mid->offset + TB5_CHUNK_HEADER_SIZE + 5, 1);
	flip_bit("dmg_two.tb5", ch[1].offset + 2, 1);
	memset(&l, 0, sizeof l);
	OK(tk_tbrw_recover_ranges(tkt_path("dmg_two.tb5"), tkt_path("dmg_two_r.tb5"), &rep, on_lost, &l));
	assert_true(l.n >= 2);
	assert_int_equal(l.from[0], ch[1].offset);
	for (size_t k = 1; k < l.n && k < 16; k++)
		assert_true(l.from[k] >= l.to[k - 1]);
	assert_int_equal(rep.ranges_lost, l.n);
	{
		TBRW_PTR h = open_read("dmg_two_r.tb5");
		OK(TBRW_verify(h));
		OK(TBRW_close(h));
	}
}

/* Item 32: a finished section whose items do not decode (checksums intact) is left out of
 * the salvage and counted; what is written reads back. */
static void test_recover_unreadable_section(void **state)
{
	struct full_opts o = {.n0 = 100, .n1 = 5, .mode = 0, .write_pt = 0};
	struct chunk_info ch[128];
	size_t n, i, len;
	unsigned char *d;
	tk_tbrw_recover_report rep;
	struct lost_seen l;
	TBRW_PTR h;
	const TBRW_MODULE *m = NULL;

	(void)state;
	write_full("unread.tb5", &o);
	n = scan_chunks("unread.tb5", ch, 128);
	for (i = 0; i < n && !(ch[i].kind == CK_META && ch[i].id == OBJ_GLOBAL(TBRW_MODULE_SECTION)); i++)
		;
	assert_true(i < n);
	/* the first module's path: a string id no string has, every checksum recomputed */
	d = (unsigned char *)tkt_read_file(tkt_path("unread.tb5"), &len);
	assert_non_null(d);
	tb5_put64(d + ch[i].offset + TB5_CHUNK_HEADER_SIZE + 80, 0x7fffffffffffull);
	tb5_put32(d + ch[i].offset + 32, tk__crc32c(0, d + ch[i].offset + TB5_CHUNK_HEADER_SIZE, ch[i].stored));
	tb5_put32(d + ch[i].offset + 36, tk__crc32c(0, d + ch[i].offset, 36));
	tkt_write_file(tkt_path("unread.tb5"), d, len);
	free(d);
	h = open_read("unread.tb5");
	RC(TBRW_get_one_module(h, 0, &m), TBRW_FILE_CORRUPT);
	OK(TBRW_close(h));

	memset(&l, 0, sizeof l);
	memset(&rep, 0, sizeof rep);
	OK(tk_tbrw_recover_ranges(tkt_path("unread.tb5"), tkt_path("unread_r.tb5"), &rep, on_lost, &l));
	assert_int_equal(rep.sections_unreadable, 1);
	assert_int_equal(l.n, 1);
	assert_non_null(strstr(l.what[0], "do not decode"));
	h = open_read("unread_r.tb5");
	OK(TBRW_verify(h));
	RC(TBRW_get_one_module(h, 0, &m), TBRW_SECTION_NOT_FOUND);
	check_software(h);
	OK(TBRW_close(h));
}

/* Items 20, 21: outputs are created through tk_outfile: a symlink planted at the temporary's
 * name or at the output is never followed (its target is untouched), a device node or a
 * FIFO at the output is refused and stays what it was. */
static void write_tiny(const char *name)
{
	TBRW_PTR h = open_create(name, 0);

	OK(TBRW_writing_section(h, TBRW_VERSION_INFO_SECTION));
	{
		TBRW_VERSION_INFO v;
		memset(&v, 0, sizeof v);
		v.version_info_size = sizeof v;
		v.sample_file_version = 16;
		OK(TBRW_set_version_info(h, &v));
	}
	OK(TBRW_done_section(h, TBRW_VERSION_INFO_SECTION));
	OK(TBRW_close(h));
}

static void same_content(const char *path, const char *want)
{
	size_t n;
	char *d = tkt_read_file(path, &n);

	assert_non_null(d);
	assert_int_equal(n, strlen(want));
	assert_memory_equal(d, want, n);
	free(d);
}

static void no_temporaries(const char *prefix)
{
	char cmd[1200];

	/* nothing named prefix*.part in the test directory */
	snprintf(cmd, sizeof cmd, "ls '%s' | grep -q '^%s.*\\.part$'", tkt_dir(), prefix);
	assert_int_not_equal(system(cmd), 0);
}

static void test_output_not_followed(void **state)
{
	char victim[600], part[600], link_target[600];
	struct stat st;
	TBRW_PTR h = NULL;
	tk_tbrw_recover_report rep;
	ssize_t n;

	(void)state;
	/* 1. a symlink at "<output>.part": left alone, its target untouched */
	snprintf(victim, sizeof victim, "%s", tkt_path("victim1"));
	tkt_write_file(victim, "keep me", 7);
	snprintf(part, sizeof part, "%s.part", tkt_path("sym1.tb5"));
	unlink(part);
	assert_int_equal(symlink(victim, part), 0);
	write_tiny("sym1.tb5");
	same_content(victim, "keep me");
	assert_int_equal(lstat(part, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	n = readlink(part, link_target, sizeof link_target - 1);
	assert_true(n > 0);
	link_target[n] = 0;
	assert_string_equal(link_target, victim);
	assert_int_equal(lstat(tkt_path("sym1.tb5"), &st), 0);
	assert_true(S_ISREG(st.st_mode));
	h = open_read("sym1.tb5");
	OK(TBRW_close(h));

	/* 2. a symlink at the output: replaced by the file, its target untouched */
	snprintf(victim, sizeof victim, "%s", tkt_path("victim2"));
	tkt_write_file(victim, "keep me too", 11);
	unlink(tkt_path("sym2.tb5"));
	assert_int_equal(symlink(victim, tkt_path("sym2.tb5")), 0);
	write_tiny("sym2.tb5");
	same_content(victim, "keep me too");
	assert_int_equal(lstat(tkt_path("sym2.tb5"), &st), 0);
	assert_true(S_ISREG(st.st_mode));

	/* 3. the salvage writer: a symlink at its temporary's name */
	snprintf(victim, sizeof victim, "%s", tkt_path("victim3"));
	tkt_write_file(victim, "salvage", 7);
	snprintf(part, sizeof part, "%s.part", tkt_path("sym3.tb5"));
	unlink(part);
	assert_int_equal(symlink(victim, part), 0);
	OK(tk_tbrw_recover(tkt_path("sym1.tb5"), tkt_path("sym3.tb5"), &rep));
	same_content(victim, "salvage");
	assert_int_equal(lstat(part, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	h = open_read("sym3.tb5");
	OK(TBRW_close(h));

	/* 4. an existing output keeps its mode */
	assert_int_equal(chmod(tkt_path("sym1.tb5"), 0600), 0);
	write_tiny("sym1.tb5");
	assert_int_equal(stat(tkt_path("sym1.tb5"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

static void test_output_device_or_fifo(void **state)
{
	struct stat st;
	TBRW_PTR h = NULL;
	tk_tbrw_recover_report rep;

	(void)state;
	/* a FIFO (no reader: refused at once, not waited on) */
	unlink(tkt_path("fifo_out.tb5"));
	assert_int_equal(mkfifo(tkt_path("fifo_out.tb5"), 0600), 0);
	signal(SIGALRM, on_alarm);
	alarm(20);
	FAILS(TBRW_open(&h, wpath("fifo_out.tb5"), TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS), TBRW_ACCESS_DENIED,
	      "a FIFO: a .tb5 file is written at offsets");
	assert_null(h);
	write_tiny("dev_src.tb5");
	FAILS(tk_tbrw_recover(tkt_path("dev_src.tb5"), tkt_path("fifo_out.tb5"), &rep), TBRW_ACCESS_DENIED, "a FIFO");
	alarm(0);
	signal(SIGALRM, SIG_DFL);
	assert_int_equal(lstat(tkt_path("fifo_out.tb5"), &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	no_temporaries("fifo_out.tb5");

	/* a device node made here (as /dev/null is: char 1,3); root only */
	unlink(tkt_path("dev_out.tb5"));
	if (mknod(tkt_path("dev_out.tb5"), S_IFCHR | 0666, makedev(1, 3)) != 0) {
		print_message("mknod: %s: device part skipped\n", strerror(errno));
		return;
	}
	FAILS(TBRW_open(&h, wpath("dev_out.tb5"), TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS), TBRW_ACCESS_DENIED,
	      "a character device");
	FAILS(tk_tbrw_recover(tkt_path("dev_src.tb5"), tkt_path("dev_out.tb5"), &rep), TBRW_ACCESS_DENIED,
	      "a character device");
	/* a symlink to it: refused too, the link and the device stay */
	unlink(tkt_path("dev_link.tb5"));
	assert_int_equal(symlink(tkt_path("dev_out.tb5"), tkt_path("dev_link.tb5")), 0);
	FAILS(TBRW_open(&h, wpath("dev_link.tb5"), TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS), TBRW_ACCESS_DENIED,
	      "a character device");
	assert_int_equal(lstat(tkt_path("dev_out.tb5"), &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_rdev, makedev(1, 3));
	assert_int_equal(lstat(tkt_path("dev_link.tb5"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	no_temporaries("dev_");
	/* and the machine's own /dev/null is what it was */
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

/*
 * Audit19 item 2: TBRW_open(L"rel.tb5"), chdir(), TBRW_close(). The file is completed (or,
 * aborted, removed) in the directory of the open; the directory moved to holds rel.tb5.part
 * and rel.tb5 of its own, which stay as they were (before, TBRW_close() renamed its
 * rel.tb5.part over its rel.tb5 and returned VT_SUCCESS). Created, appended and aborted.
 */
static void test_output_after_chdir(void **state)
{
	char *start = strdup(tkt_path("cd-start")), *moved = strdup(tkt_path("cd-moved")), path[700], *text;
	int home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	TBRW_HOST host = g_host();
	TBRW_PTR h;
	size_t len;

	(void)state;
	assert_true(home >= 0);
	assert_int_equal(mkdir(start, 0755), 0);
	assert_int_equal(mkdir(moved, 0755), 0);
	snprintf(path, sizeof(path), "%s/rel.tb5.part", moved);
	tkt_write_file(path, "IMPORTANT PART\n", 15);
	snprintf(path, sizeof(path), "%s/rel.tb5", moved);
	tkt_write_file(path, "IMPORTANT\n", 10);

	/* created */
	assert_int_equal(chdir(start), 0);
	OK(TBRW_open(&h, L"rel.tb5", TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS));
	assert_int_equal(chdir(moved), 0);
	OK(TBRW_close(h));
	/* appended: the copy and the rename both in start */
	assert_int_equal(chdir(start), 0);
	OK(TBRW_open(&h, L"rel.tb5", TBRW_FILE_READ | TBRW_FILE_WRITE));
	assert_int_equal(chdir(moved), 0);
	OK(TBRW_writing_section(h, TBRW_SOFTWARE_SECTION));
	OK(TBRW_set_host(h, &host));
	OK(TBRW_done_section(h, TBRW_SOFTWARE_SECTION));
	OK(TBRW_close(h));
	/* aborted: start's temporary is removed, moved's is not */
	assert_int_equal(chdir(start), 0);
	OK(TBRW_open(&h, L"rel.tb5", TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS));
	assert_int_equal(chdir(moved), 0);
	OK(TBRW_abort_cleanup_and_close(h));
	assert_int_equal(fchdir(home), 0);
	close(home);

	snprintf(path, sizeof(path), "%s/rel.tb5", start);
	{
		TBRW_HOST *got;

		h = open_read("cd-start/rel.tb5");
		OK(TBRW_verify(h));
		OK(TBRW_reading_section(h, TBRW_SOFTWARE_SECTION)); /* the appended section is there */
		got = get_sized(h, TBRW_get_host, sizeof *got);
		same_string(h, got->host_name, host.host_name.soi_ptr);
		free(got);
		OK(TBRW_done_section(h, TBRW_SOFTWARE_SECTION));
		OK(TBRW_close(h));
	}
	snprintf(path, sizeof(path), "%s/rel.tb5.part", start);
	assert_false(tkt_exists(path));
	snprintf(path, sizeof(path), "%s/rel.tb5.part", moved);
	text = tkt_read_file(path, &len);
	assert_non_null(text);
	assert_string_equal(text, "IMPORTANT PART\n");
	free(text);
	snprintf(path, sizeof(path), "%s/rel.tb5", moved);
	text = tkt_read_file(path, &len);
	assert_non_null(text);
	assert_string_equal(text, "IMPORTANT\n");
	free(text);
	free(start);
	free(moved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_chapter6_style),
		cmocka_unit_test(test_append_open),
		cmocka_unit_test(test_enumerate),
		cmocka_unit_test(test_bind_in_memory),
		cmocka_unit_test(test_bind_persisted),
		cmocka_unit_test(test_bind_big_chunk),
		cmocka_unit_test(test_every_bit_flip),
		cmocka_unit_test(test_damage_named),
		cmocka_unit_test(test_recover_every_chunk),
		cmocka_unit_test(test_concurrent_streams),
		cmocka_unit_test(test_larger_than_memory_limit),
		cmocka_unit_test(test_disk_full),
		cmocka_unit_test(test_bad_calls),
		cmocka_unit_test(test_buffer_too_small),
		cmocka_unit_test(test_add_data_from_file),
		cmocka_unit_test(test_bind_keeps_mr_index),
		cmocka_unit_test(test_convert_through_soi_ptr),
		cmocka_unit_test(test_zstd_flag_on_end_chunk),
		cmocka_unit_test(test_fifo_refused),
		cmocka_unit_test(test_file_shrinks_while_read),
		cmocka_unit_test(test_recover_past_damage),
		cmocka_unit_test(test_recover_unreadable_section),
		cmocka_unit_test(test_output_not_followed),
		cmocka_unit_test(test_output_device_or_fifo),
		cmocka_unit_test(test_output_after_chdir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
