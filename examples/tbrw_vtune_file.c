/* SPDX-License-Identifier: MIT */
/*
 * tbrw_vtune_file: chapter 6 of the VTune TBRW guide as a program. Writes a VTune-compatible
 * .tb5 file with every required section (hardware, software, version info, modules; stream 0
 * with events, stream info, data descriptors and raw samples), using the guide's example
 * values. Deterministic: the same file on every run. usage: tbrw_vtune_file OUTPUT.tb5
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tracekit/samprec_shared.h"
#include "tracekit/tbrw.h"

/* One data entry: the guide's two descriptors, the sample record, then its time stamp. */
typedef struct {
	TBRW_SampleRecordPC pc;
	TBRW_SampleRecordTSC tsc;
} sample_entry;

static TBRW_PTR tbrw_ptr;

/* Reports a failed call and abandons the file (nothing is left under its name). */
static int check(TBRW_U32 ret, const char *call)
{
	const TBRW_CHAR *text = NULL;

	if (ret == VT_SUCCESS)
		return 0;
	if (TBRW_error_string(ret, &text) != VT_SUCCESS || text == NULL)
		text = L"unknown error";
	fprintf(stderr, "tbrw_vtune_file: %s returned error \"%ls\"\n", call, text);
	TBRW_abort_cleanup_and_close(tbrw_ptr);
	exit(1);
}

#define CHECK(call) check((call), #call)

/* 6.3 Hardware section. */
static void write_hardware(void)
{
	TBRW_CPUID_IA32 ia32_cpuid;
	TBRW_CPU_ARCH cpu_arch;
	TBRW_CPU cpu_info;
	TBRW_NODE node_info;
	TBRW_SYSTEM sys_info;

	memset(&ia32_cpuid, 0, sizeof(ia32_cpuid));
	ia32_cpuid.cpuid_eax_input = 0x0;
	ia32_cpuid.cpuid_eax = 0xa;
	ia32_cpuid.cpuid_ebx = 0x756e6547;
	ia32_cpuid.cpuid_ecx = 0x6c65746e;
	ia32_cpuid.cpuid_edx = 0x49656e69;

	memset(&cpu_arch, 0, sizeof(cpu_arch));
	cpu_arch.arch_size = sizeof(TBRW_CPU_ARCH);
	cpu_arch.arch_type = TBRW_GST_X86;
	cpu_arch.arch_num_cpuid = 1;
	cpu_arch.cpuid_ia32_array = &ia32_cpuid;

	memset(&cpu_info, 0, sizeof(cpu_info));
	cpu_info.cpu_size = sizeof(TBRW_CPU);
	cpu_info.cpu_number = 0;
	cpu_info.cpu_native_arch_type = CPU_ARCHITECTURE_IA32;
	cpu_info.cpu_intel_processor_number = 8086;
	cpu_info.cpu_speed_mhz = 3000;
	cpu_info.cpu_fsb_mhz = 1333;
	cpu_info.cpu_cache_L2 = 4096;
	cpu_info.cpu_cache_L3 = 128;
	cpu_info.cpu_tsc_offset = 0;
	cpu_info.cpu_package_num = 0;
	cpu_info.cpu_core_num = 0;
	cpu_info.cpu_hardware_thread_num = 0;
	cpu_info.cpu_threads_per_core = 1;
	cpu_info.num_cpu_arch_array = 1;
	cpu_info.cpu_arch_array = &cpu_arch;

	memset(&node_info, 0, sizeof(node_info));
	node_info.node_size = sizeof(TBRW_NODE);
	node_info.node_type_from_shell = 0;
	node_info.node_id = 1;
	node_info.node_num_available = 1;
	node_info.node_num_used = 1;
	node_info.node_physical_memory = 1024;
	node_info.cpu_array = &cpu_info;

	memset(&sys_info, 0, sizeof(sys_info));
	sys_info.system_size = sizeof(TBRW_SYSTEM);
	sys_info.system_num_nodes = 1;
	sys_info.node_array = &node_info;

	CHECK(TBRW_writing_section(tbrw_ptr, TBRW_HARDWARE_SECTION));
	CHECK(TBRW_set_system(tbrw_ptr, &sys_info));
	CHECK(TBRW_done_section(tbrw_ptr, TBRW_HARDWARE_SECTION));
}

/* 6.4 Software section. */
static void write_software(void)
{
	TBRW_HOST host_info;
	TBRW_OS os_info;
	TBRW_APPLICATION app_info;

	CHECK(TBRW_writing_section(tbrw_ptr, TBRW_SOFTWARE_SECTION));

	memset(&host_info, 0, sizeof(host_info));
	host_info.host_size = sizeof(TBRW_HOST);
	host_info.host_ip_address.soi_ptr = (TBRW_CHAR *)L"10.10.10.10";
	host_info.host_name.soi_ptr = (TBRW_CHAR *)L"testhost.intel.com";
	CHECK(TBRW_set_host(tbrw_ptr, &host_info));

	memset(&os_info, 0, sizeof(os_info));
	os_info.os_size = sizeof(TBRW_OS);
	os_info.os_platform = TBRW_OSFAMILY_WIN32;
	os_info.os_major = 0x5;
	os_info.os_minor = 0x1;
	os_info.os_build = 0xa28;
	os_info.os_extra = 0;
	os_info.os_name.soi_ptr = (TBRW_CHAR *)L"Windows XP";
	os_info.os_name_extra.soi_ptr = (TBRW_CHAR *)L"32-bit";
	CHECK(TBRW_set_os(tbrw_ptr, &os_info));

	memset(&app_info, 0, sizeof(app_info));
	app_info.app_size = sizeof(TBRW_APPLICATION);
	app_info.app_page_size = 1024;
	app_info.app_alloc_granularity = 2048;
	app_info.app_min_app_addr = 0xffff;
	app_info.app_max_app_addr = 0xffffffff;
	CHECK(TBRW_set_application(tbrw_ptr, &app_info));

	CHECK(TBRW_done_section(tbrw_ptr, TBRW_SOFTWARE_SECTION));
}

/* 6.5 Version info section. */
static void write_version_info(void)
{
	TBRW_VERSION_INFO version_info;

	memset(&version_info, 0, sizeof(version_info));
	version_info.version_info_size = sizeof(TBRW_VERSION_INFO);
	version_info.sampling_driver_version = 0xffffffff;
	version_info.bind_version = 0;
	version_info.sample_file_version = 0x10;
	CHECK(TBRW_writing_section(tbrw_ptr, TBRW_VERSION_INFO_SECTION));
	CHECK(TBRW_set_version_info(tbrw_ptr, &version_info));
	CHECK(TBRW_done_section(tbrw_ptr, TBRW_VERSION_INFO_SECTION));
}

/* 6.6 Module section: the guide's module, and a library in the same process. */
static void write_modules(void)
{
	TBRW_MODULE module_info;

	CHECK(TBRW_writing_section(tbrw_ptr, TBRW_MODULE_SECTION));
	memset(&module_info, 0, sizeof(module_info));
	module_info.module_size = sizeof(TBRW_MODULE);
	module_info.module_load_address = 0x400000;
	module_info.module_length = 0x2000;
	module_info.module_associated_pid = 0x1000;
	module_info.module_code_selector = 0x8;
	module_info.module_event_when = (TBRW_U64)0x0000;
	module_info.module_unload_tsc = (TBRW_U64)-1;
	module_info.module_segment_type = TBRW_MODE_32BIT;
	module_info.module_segment_number = 0;
	module_info.module_flags = TBRW_MODULE_TSC_USED | TBRW_MODULE_LOADED | TBRW_MODULE_IS_EXE |
				   TBRW_MODULE_1ST_MODULE_REC_IN_PROCESS;
	module_info.module_path.soi_ptr = (TBRW_CHAR *)L"C:\\sample\\sample.exe";
	module_info.module_name.soi_ptr = (TBRW_CHAR *)L"sample.exe";
	module_info.module_segment_name.soi_ptr = (TBRW_CHAR *)L"";
	module_info.reserved_for_legacy = 0;
	module_info.reserved_for_legacy2 = 0;
	module_info.reserved_for_legacy_flags = 0;
	CHECK(TBRW_add_module(tbrw_ptr, &module_info));

	/* Not in the guide: a second module, so that samples bind to two modules. */
	module_info.module_load_address = 0x600000;
	module_info.module_length = 0x20000;
	module_info.module_code_selector = 0x1B;
	module_info.module_flags = TBRW_MODULE_TSC_USED | TBRW_MODULE_LOADED;
	module_info.module_path.soi_ptr = (TBRW_CHAR *)L"C:\\sample\\helper.dll";
	module_info.module_name.soi_ptr = (TBRW_CHAR *)L"helper.dll";
	CHECK(TBRW_add_module(tbrw_ptr, &module_info));
	CHECK(TBRW_done_section(tbrw_ptr, TBRW_MODULE_SECTION));
}

/* 6.7 Events section. */
static void write_events(void)
{
	TBRW_EVENT_DETAIL event_det;
	TBRW_EVENT event_info;

	memset(&event_det, 0, sizeof(event_det));
	event_det.detail_size = sizeof(TBRW_EVENT_DETAIL);
	event_det.detail_access = 1;
	event_det.detail_access_size = 32;
	event_det.detail_method = TBRW_MSR;
	event_det.detail_address = 0x21;
	event_det.detail_value = 0xffe17b80;
	event_det.legacy_command = 0;

	memset(&event_info, 0, sizeof(event_info));
	event_info.event_size = sizeof(TBRW_EVENT);
	event_info.event_id = 0;
	event_info.event_num_details = 1;
	event_info.event_flags = TBRW_EVENT_EBS;
	event_info.event_sav = 20000000;
	event_info.event_name.soi_ptr = (TBRW_CHAR *)L"SampleEvent";
	event_info.event_arch_name.soi_ptr = (TBRW_CHAR *)L"Core 2";
	event_info.event_detail_array = &event_det;

	CHECK(TBRW_writing_stream_section(tbrw_ptr, 0, TBRW_EVENT_DESCRIPTION_SECTION));
	CHECK(TBRW_add_event(tbrw_ptr, 0, &event_info));
	CHECK(TBRW_done_stream_section(tbrw_ptr, 0, TBRW_EVENT_DESCRIPTION_SECTION));
}

/* 6.8 Stream info section. */
static void write_stream_info(void)
{
	TBRW_STREAM_INFO stream_info;

	memset(&stream_info, 0, sizeof(stream_info));
	stream_info.stream_info_size = sizeof(TBRW_STREAM_INFO);
	stream_info.sampling_duration = 20000;
	stream_info.stream_type = TBRW_SAMPLING_STREAM;
	stream_info.command_line.soi_ptr = (TBRW_CHAR *)L"unknown";
	stream_info.comment.soi_ptr = (TBRW_CHAR *)L"sample_comment";
	stream_info.cpu_mask.soi_ptr = (TBRW_CHAR *)L"none";
	stream_info.sampling_interval = 1000;
	stream_info.sampling_start_time.dwLowDateTime = 1526932352;
	stream_info.sampling_start_time.dwHighDateTime = 29849313;
	stream_info.sampling_end_time.dwLowDateTime = 1566932352;
	stream_info.sampling_end_time.dwHighDateTime = 29849313;

	CHECK(TBRW_writing_stream_section(tbrw_ptr, 0, TBRW_STREAM_INFO_SECTION));
	CHECK(TBRW_set_stream_info(tbrw_ptr, 0, &stream_info));
	CHECK(TBRW_done_stream_section(tbrw_ptr, 0, TBRW_STREAM_INFO_SECTION));
}

/* 6.9 Sampling data descriptors: the sample record, then its time stamp. */
static void write_descriptors(void)
{
	TBRW_SAMPREC_DESC_ENTRY desc_entry1, desc_entry2;

	memset(&desc_entry1, 0, sizeof(desc_entry1));
	desc_entry1.desc_size = sizeof(TBRW_SAMPREC_DESC_ENTRY);
	desc_entry1.desc_data_size = sizeof(TBRW_SampleRecordPC);
	desc_entry1.desc_offset = 0;
	desc_entry1.desc_type = ST_LEGACY_SAMPLE_RECORD;
	desc_entry1.desc_subtype = SST_NONE;
	desc_entry1.desc_sample_flag = 0;
	desc_entry1.desc_name.soi_ptr = (TBRW_CHAR *)L"SampleRecord";

	memset(&desc_entry2, 0, sizeof(desc_entry2));
	desc_entry2.desc_size = sizeof(TBRW_SAMPREC_DESC_ENTRY);
	desc_entry2.desc_data_size = sizeof(TBRW_SampleRecordTSC);
	/* The guide gives offset 0 here too; in one fixed-size entry the time stamp follows. */
	desc_entry2.desc_offset = sizeof(TBRW_SampleRecordPC);
	desc_entry2.desc_type = ST_TIME_STAMP;
	desc_entry2.desc_subtype = SST_TSC;
	desc_entry2.desc_sample_flag = 0;
	desc_entry2.desc_name.soi_ptr = (TBRW_CHAR *)L"TimeStamp";

	CHECK(TBRW_writing_stream_section(tbrw_ptr, 0, TBRW_DATA_DESCRIPTION_SECTION));
	CHECK(TBRW_add_data_descriptor_entry(tbrw_ptr, 0, &desc_entry1));
	CHECK(TBRW_add_data_descriptor_entry(tbrw_ptr, 0, &desc_entry2));
	CHECK(TBRW_done_stream_section(tbrw_ptr, 0, TBRW_DATA_DESCRIPTION_SECTION));
}

/* 6.10 Sample records: the guide's sample first, then samples in both modules. */
static void write_samples(void)
{
	static const TBRW_U32 eips[] = { 0x617000, 0x400010, 0x401ff0, 0x61a000, 0x400800, 0x700000 };
	sample_entry entry;
	size_t i;

	CHECK(TBRW_writing_stream_section(tbrw_ptr, 0, TBRW_DATA_SECTION));
	for (i = 0; i < sizeof(eips) / sizeof(eips[0]); i++) {
		memset(&entry, 0, sizeof(entry));
		entry.pc.codeMode = TBRW_MODE_32BIT;
		entry.pc.eip = eips[i];
		entry.pc.eflags = 0x246;
		entry.pc.csd.lowWord = 0xffff;
		entry.pc.csd.highWord = 0xcf9b00;
		entry.pc.cs = 0x1B;
		entry.pc.mrIndex = 0;
		entry.pc.eventIndex = 0;
		entry.pc.tidIsRaw = 1;
		entry.pc.IA64PC = 0;
		entry.pc.pidRecIndexRaw = 1;
		entry.pc.pidRecIndex = 0x1000;
		entry.pc.cpuNum = (TBRW_U16)(i % 2);
		entry.pc.tid = (TBRW_U32)(i < 3 ? 0 : 7);
		entry.pc.mrIndexNone = 0;
		entry.tsc.tsc = 0x00001972178D8F5EULL + 1000 * i;
		CHECK(TBRW_add_data(tbrw_ptr, 0, sizeof(entry), (void *)&entry));
	}
	CHECK(TBRW_done_stream_section(tbrw_ptr, 0, TBRW_DATA_SECTION));
}

int main(int argc, char **argv)
{
	TBRW_CHAR *file_name;
	size_t len;

	if (argc != 2) {
		fprintf(stderr, "usage: tbrw_vtune_file OUTPUT.tb5\n");
		return 2;
	}
	len = strlen(argv[1]);
	file_name = calloc(len + 1, sizeof(TBRW_CHAR));
	if (file_name == NULL || mbstowcs(file_name, argv[1], len + 1) == (size_t)-1) {
		fprintf(stderr, "tbrw_vtune_file: bad file name\n");
		return 1;
	}
	if (TBRW_open(&tbrw_ptr, file_name, TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS) !=
	    VT_SUCCESS) {
		fprintf(stderr, "tbrw_vtune_file: TBRW_open failed for %s\n", argv[1]);
		free(file_name);
		return 1;
	}
	free(file_name);

	write_hardware();
	write_software();
	write_version_info();
	write_modules();

	CHECK(TBRW_writing_stream(tbrw_ptr, 0));
	write_events();
	write_stream_info();
	write_descriptors();
	write_samples();
	CHECK(TBRW_done_stream(tbrw_ptr, 0));

	CHECK(TBRW_verify(tbrw_ptr));
	if (TBRW_close(tbrw_ptr) != VT_SUCCESS) {
		fprintf(stderr, "tbrw_vtune_file: TBRW_close failed\n");
		return 1;
	}
	printf("wrote %s\n", argv[1]);
	return 0;
}
