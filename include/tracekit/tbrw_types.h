/* SPDX-License-Identifier: MIT */
/*
 * tracekit/tbrw_types.h: the data types of the VTune(TM) Reader/Writer API (TBRW 2.3, seed
 * 000 chapter 8): basic types, section identifiers, the hardware, software, process, module,
 * version, stream, event, data descriptor and bind structures, the sample record layouts of
 * chapter 6, the flag constants and the enumeration callback types.
 *
 * Structures that start with a *_size member must have it set to sizeof(structure) on write;
 * the library fills it on read. Strings are TBRW_STRING_OR_ID: a wchar_t pointer on writes,
 * a unique id on reads (TBRW_convert_uniqueid_to_string() turns it back into text; id 0 is
 * "no string").
 */
#ifndef TRACEKIT_TBRW_TYPES_H
#define TRACEKIT_TBRW_TYPES_H

#include <stddef.h>
#include <wchar.h>

#include "tracekit/samprec_shared.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- 8.1 basic types ------------------------------------------------------------------ */
typedef wchar_t TBRW_CHAR;
typedef unsigned char TBRW_U8;
typedef unsigned short TBRW_U16;
typedef unsigned int TBRW_U32;
typedef signed int TBRW_S32;
typedef signed long long TBRW_S64;
typedef unsigned long long TBRW_U64;

/* The handle TBRW_open() returns: opaque to the caller. */
typedef void *TBRW_PTR;

/* On writes, soi_ptr points to a NUL-terminated wide string (NULL = no string); on reads,
 * soi_uniqueid identifies the string within the file (0 = no string). */
typedef struct tbrw_string_or_id {
	union {
		TBRW_U64 soi_uniqueid;
		TBRW_CHAR *soi_ptr;
	};
} TBRW_STRING_OR_ID;

/* ---- 8.2 section identifiers ----------------------------------------------------------- */
typedef enum {
	TBRW_HARDWARE_SECTION,
	TBRW_SOFTWARE_SECTION,
	TBRW_PROCESS_THREAD_SECTION,
	TBRW_MODULE_SECTION,
	TBRW_USER_DEFINED_GLOBAL_SECTION,
	TBRW_VERSION_INFO_SECTION
} TBRW_SECTION_IDENTIFIER;

typedef enum {
	TBRW_EVENT_DESCRIPTION_SECTION,
	TBRW_DATA_DESCRIPTION_SECTION,
	TBRW_DATA_SECTION,
	TBRW_USER_DEFINED_STREAM_SECTION,
	TBRW_STREAM_INFO_SECTION
} TBRW_STREAM_SECTION_IDENTIFIER;

/* ---- TBRW_open() access modes ------------------------------------------------------- */
#define TBRW_FILE_READ 0x1u
#define TBRW_FILE_WRITE 0x2u
/* Create a new file (replacing an existing one when the new one is closed successfully). */
#define TBRW_FILE_CREATE_ALWAYS 0x4u
/* tracekit extension: compress data chunks with zstd (readers decompress transparently). */
#define TBRW_FILE_COMPRESS 0x100u

/* ---- 8.3 hardware structures ----------------------------------------------------------- */
typedef struct tbrw_cpuid_ia32 {
	TBRW_U32 cpuid_eax_input;
	TBRW_U32 cpuid_eax;
	TBRW_U32 cpuid_ebx;
	TBRW_U32 cpuid_ecx;
	TBRW_U32 cpuid_edx;
	TBRW_U32 reserved;
} TBRW_CPUID_IA32;
/* The seed's 8.3 listing spells the typedef this way once. */
typedef TBRW_CPUID_IA32 TBRW_CPUD_IA32;

typedef struct tbrw_cpuid_ia64 {
	TBRW_U64 cpuid_select;
	TBRW_U64 cpuid_val;
	TBRW_U64 reserved;
} TBRW_CPUID_IA64;

/* arch_type: a TBRW_GST_* value. Which union member is used follows arch_type:
 * TBRW_GST_IA64 uses cpuid_ia64_array, every other type cpuid_ia32_array. */
typedef struct tbrw_cpu_arch {
	TBRW_U32 arch_size;
	TBRW_U16 arch_type;
	TBRW_U16 arch_num_cpuid;
	union {
		TBRW_CPUID_IA32 *cpuid_ia32_array;
		TBRW_CPUID_IA64 *cpuid_ia64_array;
	};
} TBRW_CPU_ARCH;

typedef struct tbrw_cpu {
	TBRW_U32 cpu_size;
	TBRW_U32 cpu_number;
	TBRW_U32 cpu_native_arch_type; /* CPU_ARCHITECTURE_* */
	TBRW_U32 cpu_intel_processor_number;
	TBRW_U32 cpu_speed_mhz;
	TBRW_U32 cpu_fsb_mhz;
	TBRW_U32 cpu_cache_L2; /* KiB */
	TBRW_U32 cpu_cache_L3; /* KiB */
	TBRW_S64 cpu_tsc_offset; /* TSC of this cpu minus TSC of cpu 0 */
	TBRW_U16 cpu_package_num;
	TBRW_U16 cpu_core_num;
	TBRW_U16 cpu_hardware_thread_num;
	TBRW_U16 cpu_threads_per_core;
	TBRW_U32 num_cpu_arch_array;
	TBRW_CPU_ARCH *cpu_arch_array;
} TBRW_CPU;

/* cpu_array holds node_num_available entries. */
typedef struct tbrw_node {
	TBRW_U32 node_size;
	TBRW_U32 node_type_from_shell;
	TBRW_U32 node_id;
	TBRW_U32 node_num_available;
	TBRW_U32 node_num_used;
	TBRW_U64 node_physical_memory;
	TBRW_CPU *cpu_array;
} TBRW_NODE;

typedef struct tbrw_system {
	TBRW_U32 system_size;
	TBRW_U32 system_num_nodes;
	TBRW_NODE *node_array;
} TBRW_SYSTEM;

/* TBRW_CPU_ARCH.arch_type (the seed's GEN_ENTRY_SUBTYPES). */
typedef enum {
	TBRW_GST_UNKNOWN = 0,
	TBRW_GST_X86 = 1,
	TBRW_GST_ITANIUM = 2,
	TBRW_GST_IA64 = TBRW_GST_ITANIUM,
	TBRW_GST_SA = 3,
	TBRW_GST_XSC = 4,
	TBRW_GST_EM64T = 5,
	TBRW_GST_CS860 = 6
} TBRW_GEN_ENTRY_SUBTYPES;

/* TBRW_CPU.cpu_native_arch_type. */
#define CPU_ARCHITECTURE_UNKNOWN 0u
#define CPU_ARCHITECTURE_IA32 1u
#define CPU_ARCHITECTURE_IA64 2u
#define CPU_ARCHITECTURE_INTEL64 3u

/* ---- 8.4 software structures ----------------------------------------------------------- */
typedef struct tbrw_host {
	TBRW_U32 host_size;
	TBRW_STRING_OR_ID host_ip_address;
	TBRW_STRING_OR_ID host_name;
	TBRW_U32 reserved;
} TBRW_HOST;

typedef struct tbrw_os {
	TBRW_U32 os_size;
	TBRW_U32 os_platform; /* TBRW_OSFAMILY_*, or 0x100..0x1FF for other systems */
	TBRW_U32 os_major;
	TBRW_U32 os_minor;
	TBRW_U32 os_build;
	TBRW_U32 os_extra;
	TBRW_STRING_OR_ID os_name;
	TBRW_STRING_OR_ID os_name_extra;
} TBRW_OS;

#define TBRW_OSFAMILY_WIN32 0x00000001u
#define TBRW_OSFAMILY_WIN64 0x00000002u
#define TBRW_OSFAMILY_Wince 0x00000003u
#define TBRW_OSFAMILY_XOS 0x00000004u
#define TBRW_OSFAMILY_LINUX32 0x00000005u
#define TBRW_OSFAMILY_LINUX64 0x00000006u
#define TBRW_OSFAMILY_USER_FIRST 0x00000100u
#define TBRW_OSFAMILY_USER_LAST 0x000001FFu

typedef struct tbrw_application {
	TBRW_U32 app_size;
	TBRW_U32 app_reserved;
	TBRW_U32 app_page_size;
	TBRW_U32 app_alloc_granularity;
	TBRW_U64 app_min_app_addr;
	TBRW_U64 app_max_app_addr;
} TBRW_APPLICATION;

/* ---- 8.5 process/thread structures ------------------------------------------------------ */
typedef struct tbrw_pid {
	TBRW_U32 pid_size;
	TBRW_U32 pid_reserved;
	TBRW_U32 pid_id;
	TBRW_U32 pid_flags; /* TBRW_PID_* */
	TBRW_U64 pid_event_when;
	TBRW_U32 reserved1;
	TBRW_U32 reserved2;
	TBRW_STRING_OR_ID pid_path;
	TBRW_STRING_OR_ID pid_name;
} TBRW_PID;

typedef struct tbrw_tid {
	TBRW_U32 tid_size;
	TBRW_U32 tid_associated_pid;
	TBRW_U32 tid_id;
	TBRW_U32 tid_flags; /* TBRW_TID_* */
	TBRW_U64 tid_event_when;
	TBRW_U32 reserved1;
	TBRW_U32 reserved2;
	TBRW_STRING_OR_ID tid_name;
} TBRW_TID;

#define TBRW_PID_CREATED 0x1u
#define TBRW_PID_TERMINATED 0x2u
#define TBRW_PID_TSC_USED 0x4u
/* Set on process entries the binder derived from samples and modules. */
#define TBRW_PID_DERIVED 0x100u
#define TBRW_TID_CREATED 0x1u
#define TBRW_TID_TERMINATED 0x2u
#define TBRW_TID_TSC_USED 0x4u
#define TBRW_TID_DERIVED 0x100u

/* ---- 8.6 module structure --------------------------------------------------------------- */
typedef struct tbrw_module {
	TBRW_U32 module_size;
	TBRW_U32 module_reserved;
	TBRW_U32 module_associated_pid;
	TBRW_U32 module_flags; /* TBRW_MODULE_* */
	TBRW_U64 module_event_when; /* load time (TSC with TBRW_MODULE_TSC_USED, else sample number) */
	TBRW_U32 module_segment_number;
	TBRW_U32 module_segment_type : 2; /* TBRW_MODE_* */
	TBRW_U32 : 30;
	TBRW_U32 module_code_selector;
	TBRW_U64 module_length;
	TBRW_U64 module_load_address;
	TBRW_U32 reserved_for_legacy;
	TBRW_U32 reserved_for_legacy2;
	TBRW_U32 reserved_for_legacy_flags;
	TBRW_U32 reserved1;
	TBRW_U64 module_unload_tsc; /* unload time; 0 or ~0 = stays loaded */
	TBRW_STRING_OR_ID module_path;
	TBRW_STRING_OR_ID module_name;
	TBRW_STRING_OR_ID module_segment_name;
} TBRW_MODULE;

#define TBRW_MODULE_LOADED 0x01u
#define TBRW_MODULE_UNLOADED 0x02u
#define TBRW_MODULE_TSC_USED 0x04u
#define TBRW_MODULE_IS_EXE 0x08u
#define TBRW_MODULE_GLOBAL_LOAD 0x10u
#define TBRW_MODULE_1ST_MODULE_REC_IN_PROCESS 0x20u

/* Module segment type and TBRW_SampleRecordPC.codeMode. */
#define TBRW_MODE_UNKNOWN 0u
#define TBRW_MODE_32BIT 1u
#define TBRW_MODE_64BIT 2u
#define TBRW_MODE_64_BIT TBRW_MODE_64BIT

/* ---- 8.7 version information -------------------------------------------------------- */
typedef struct tbrw_version_info {
	TBRW_U32 version_info_size;
	TBRW_U32 sampling_driver_version; /* 0xFFFFFFFF = unknown */
	TBRW_U32 bind_version;
	TBRW_U32 sample_file_version;
} TBRW_VERSION_INFO;

/* ---- 8.8 stream information ------------------------------------------------------------- */
typedef struct vtune_filetime {
	TBRW_U32 dwLowDateTime;
	TBRW_U32 dwHighDateTime;
} VTUNE_ANALYZER_FILETIME;
typedef VTUNE_ANALYZER_FILETIME VTUNE_FILETIME;

typedef struct tbrw_stream_info {
	TBRW_U32 stream_info_size;
	TBRW_U32 sampling_duration; /* milliseconds */
	TBRW_U32 stream_type; /* TBRW_STREAM_TYPE */
	TBRW_U32 sampling_interval;
	VTUNE_ANALYZER_FILETIME sampling_start_time;
	VTUNE_ANALYZER_FILETIME sampling_end_time;
	TBRW_STRING_OR_ID command_line;
	TBRW_STRING_OR_ID cpu_mask;
	TBRW_STRING_OR_ID comment;
} TBRW_STREAM_INFO;

/* ---- 8.9 stream types ------------------------------------------------------------------- */
typedef enum {
	TBRW_SAMPLING_STREAM = 1,
	TBRW_AGGREGATED_STREAM,
	TBRW_BOOKMARK_STREAM,
	TBRW_BIND_DATA_INFORMATION_STREAM,
	TBRW_BIND_MODULE_INFORMATION_STREAM,
	TBRW_BIND_PID_INFORMATION_STREAM,
	TBRW_BIND_TID_INFORMATION_STREAM,
	TBRW_CUSTOM_STREAM
} TBRW_STREAM_TYPE;

/* ---- 8.10 event descriptor -------------------------------------------------------------- */
typedef struct tbrw_event_detail {
	TBRW_U32 detail_size;
	TBRW_U16 detail_access_size; /* bits: 8, 16, 32, 64 */
	TBRW_U8 detail_method; /* TBRW_ACCESS_METHOD */
	TBRW_U8 detail_access; /* read = 0, write = 1 */
	TBRW_U64 detail_address;
	TBRW_U64 detail_value;
	TBRW_U8 legacy_command;
	TBRW_U8 reserved1;
	TBRW_U16 reserved2;
	TBRW_U32 reserved3;
} TBRW_EVENT_DETAIL;

/* On write, event_detail_array holds event_num_details entries. On read (enumeration) each
 * event's event_detail_array points to its details inside the callback's buffer, so the events
 * form a plain array; the pointers are valid during the callback only. */
typedef struct tbrw_event {
	TBRW_U32 event_size;
	TBRW_U32 event_id;
	TBRW_U32 event_num_details;
	TBRW_U32 event_flags; /* TBRW_EVENT_* */
	TBRW_U64 event_sav;
	TBRW_STRING_OR_ID event_name;
	TBRW_STRING_OR_ID event_arch_name;
	TBRW_EVENT_DETAIL *event_detail_array;
} TBRW_EVENT;

#define TBRW_EVENT_EBS 0x1u /* event-based sampling */
#define TBRW_EVENT_TBS 0x2u /* time-based sampling */

typedef enum {
	TBRW_MSR = 0,
	TBRW_PCI = 1,
	TBRW_MEMORY = 2,
	TBRW_OTHER_ACCESS = 3
} TBRW_ACCESS_METHOD;

/* ---- 8.11 data descriptor --------------------------------------------------------------- */
typedef struct tbrw_samprec_desc_entry {
	union {
		TBRW_U64 force_8_byte_aligned;
		struct {
			TBRW_U32 desc_size;
			TBRW_U32 desc_offset; /* bytes from the start of the record */
			TBRW_U16 desc_type; /* TBRW_DESC_TYPE (ST_*) */
			TBRW_U16 desc_subtype; /* TBRW_DESC_SUBTYPE (SST_*) */
			TBRW_U32 desc_data_size; /* bytes */
			TBRW_U64 desc_access_offset;
			TBRW_U8 desc_access_type;
			TBRW_U8 desc_access_method;
			TBRW_U8 desc_sample_flag;
			TBRW_U8 reserved0;
			TBRW_U32 reserved1;
			TBRW_STRING_OR_ID desc_name;
		};
	};
} TBRW_SAMPREC_DESC_ENTRY;
/* Chapter 6 spells the subtype member desc_sub_type. */
#define desc_sub_type desc_subtype

/* ---- 6.10 sample records ---------------------------------------------------------------- */
typedef struct tbrw_code_descriptor {
	TBRW_U32 lowWord;
	TBRW_U32 highWord;
} TBRW_CodeDescriptor;

typedef struct TBRW_SampleRecordPC_s {
	union {
		struct {
			TBRW_U64 iip; /* IA-64 interrupt instruction pointer */
			TBRW_U64 ipsr; /* IA-64 interrupt processor status register */
		};
		struct {
			TBRW_U32 eip; /* IA-32 instruction pointer */
			TBRW_U32 eflags;
			TBRW_CodeDescriptor csd; /* IA-32 code segment descriptor */
		};
	};
	TBRW_U16 cs; /* code selector; 0 for IA-64 */
	union {
		TBRW_U16 cpuAndOS;
		struct {
			TBRW_U16 cpuNum : 12;
			TBRW_U16 notVmid0 : 1;
			TBRW_U16 codeMode : 2; /* TBRW_MODE_* */
			TBRW_U16 : 1;
		};
	};
	TBRW_U32 tid;
	TBRW_U32 pidRecIndex; /* the OS pid when pidRecIndexRaw is set */
	union {
		TBRW_U32 bitFields2;
		struct {
			TBRW_U32 mrIndex : 20; /* write 0: see below */
			TBRW_U32 eventIndex : 8; /* TBRW_EVENT.event_id of the triggering event */
			TBRW_U32 tidIsRaw : 1;
			TBRW_U32 IA64PC : 1; /* 1: iip/ipsr are valid, 0: eip/eflags/csd */
			TBRW_U32 pidRecIndexRaw : 1;
			TBRW_U32 mrIndexNone : 1; /* write 0: see below */
		};
	};
} TBRW_SampleRecordPC, *TBRW_PSampleRecordPC;
/* mrIndex and mrIndexNone: chapter 6 of the guide writes both as 0 ("this will be filled-in
 * later") and defines the result of binding as a separate mapping, one DATA_BIND_STRUCT per
 * sample record (6.1, 8.12); nothing in the guide reads the two fields back. So this library
 * never changes a record: TBRW_enumerate_data and TBRW_bind_enumerate_data hand the records
 * out as written, and a sample's module is DATA_BIND_STRUCT.module_index (TBRW_BIND_NO_INDEX
 * for a sample in no known module). */

typedef struct TBRW_SampleRecordTSC_s {
	TBRW_U64 tsc;
} TBRW_SampleRecordTSC, *TBRW_PSampleRecordTSC;

/* ---- 8.12 bind structures --------------------------------------------------------------- */
/* One per sample record. An index is TBRW_BIND_NO_INDEX when no module (or process, thread)
 * matches the sample. */
typedef struct data_bind_struct {
	TBRW_U64 module_index;
	TBRW_U64 pid_index;
	TBRW_U64 tid_index;
} DATA_BIND_STRUCT;

/* One per module record. */
typedef struct module_bind_struct {
	TBRW_U64 pid_index;
} MODULE_BIND_STRUCT;

/* One per thread record. */
typedef struct tid_bind_struct {
	TBRW_U64 pid_index;
} TID_BIND_STRUCT;

#define TBRW_BIND_NO_INDEX (~(TBRW_U64)0)

/* ---- 9.5 callbacks (5.9) ------------------------------------------------------------------
 * The enumerate functions call these with consecutive entries, starting at start_index, in
 * batches. The buffer is read-only and valid during the call only. Return TRUE (1) for more,
 * FALSE (0) to stop early (the enumeration then returns VT_SUCCESS), or any other value to
 * fail it: the enumeration returns that value. These are function types: parameters are
 * pointers to them, as the seed's prototypes write.
 */
typedef TBRW_U32 TBRW_DATA_CALLBACK(void *data, TBRW_U32 data_size, TBRW_U32 num_entries, void *user_ptr);
typedef TBRW_U32 TBRW_PID_CALLBACK(TBRW_PID *pid, TBRW_U32 pid_data_size, TBRW_U32 num_entries, void *user_ptr);
typedef TBRW_U32 TBRW_TID_CALLBACK(TBRW_TID *tid, TBRW_U32 tid_data_size, TBRW_U32 num_entries, void *user_ptr);
typedef TBRW_U32 TBRW_MODULE_CALLBACK(TBRW_MODULE *module, TBRW_U32 module_data_size, TBRW_U32 num_entries,
				      void *user_ptr);
typedef TBRW_U32 TBRW_EVENT_CALLBACK(TBRW_EVENT *event, TBRW_U32 event_data_size, TBRW_U32 num_entries,
				     void *user_ptr);
typedef TBRW_U32 TBRW_DATA_DESC_CALLBACK(TBRW_SAMPREC_DESC_ENTRY *data_desc, TBRW_U32 data_desc_size,
					 TBRW_U32 num_entries, void *user_ptr);
/* Bind enumeration: num_entries raw entries in data (sizeof_data_buffer bytes) and as many
 * bind entries in bind_table (sizeof_bind_buffer bytes). For module and thread bind
 * enumeration, data holds TBRW_MODULE / TBRW_TID records and bind_table MODULE_BIND_STRUCT /
 * TID_BIND_STRUCT entries (cast bind_table accordingly). */
typedef TBRW_U32 BIND_DATA_CALLBACK(const void *data, TBRW_U32 sizeof_data_buffer, TBRW_U64 num_entries,
				    const DATA_BIND_STRUCT *bind_table, TBRW_U32 sizeof_bind_buffer,
				    void *user_ptr);
typedef TBRW_U32 BIND_MODULE_CALLBACK(const void *data, TBRW_U32 sizeof_data_buffer, TBRW_U64 num_entries,
				      const MODULE_BIND_STRUCT *bind_table, TBRW_U32 sizeof_bind_buffer,
				      void *user_ptr);
typedef TBRW_U32 BIND_TID_CALLBACK(const void *data, TBRW_U32 sizeof_data_buffer, TBRW_U64 num_entries,
				   const TID_BIND_STRUCT *bind_table, TBRW_U32 sizeof_bind_buffer, void *user_ptr);
typedef BIND_DATA_CALLBACK TBRW_BIND_DATA_CALLBACK;
typedef BIND_MODULE_CALLBACK TBRW_BIND_MODULE_CALLBACK;
typedef BIND_TID_CALLBACK TBRW_BIND_TID_CALLBACK;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

/* ---- layout pins (x86-64 / LP64) ---------------------------------------------------------- */
/* _Static_assert is C11; C++ (the seed's examples are C++) spells it static_assert. */
#ifdef __cplusplus
#define TK_TBRW_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define TK_TBRW_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
TK_TBRW_STATIC_ASSERT(sizeof(TBRW_STRING_OR_ID) == 8, "TBRW_STRING_OR_ID is 8 bytes");
TK_TBRW_STATIC_ASSERT(sizeof(TBRW_SampleRecordPC) == 32, "TBRW_SampleRecordPC is 32 bytes");
TK_TBRW_STATIC_ASSERT(offsetof(TBRW_SampleRecordPC, cs) == 16, "cs follows the 16-byte PC union");
TK_TBRW_STATIC_ASSERT(offsetof(TBRW_SampleRecordPC, tid) == 20, "tid at 20");
TK_TBRW_STATIC_ASSERT(offsetof(TBRW_SampleRecordPC, bitFields2) == 28, "bitFields2 at 28");
TK_TBRW_STATIC_ASSERT(sizeof(TBRW_SampleRecordTSC) == 8, "TBRW_SampleRecordTSC is 8 bytes");
TK_TBRW_STATIC_ASSERT(sizeof(TBRW_SAMPREC_DESC_ENTRY) == 40, "TBRW_SAMPREC_DESC_ENTRY is 40 bytes");
TK_TBRW_STATIC_ASSERT(sizeof(TBRW_MODULE) == 104, "TBRW_MODULE is 104 bytes");
TK_TBRW_STATIC_ASSERT(sizeof(TBRW_PID) == 48, "TBRW_PID is 48 bytes");
TK_TBRW_STATIC_ASSERT(sizeof(TBRW_TID) == 40, "TBRW_TID is 40 bytes");
TK_TBRW_STATIC_ASSERT(sizeof(TBRW_EVENT) == 48, "TBRW_EVENT is 48 bytes");
TK_TBRW_STATIC_ASSERT(sizeof(TBRW_EVENT_DETAIL) == 32, "TBRW_EVENT_DETAIL is 32 bytes");
TK_TBRW_STATIC_ASSERT(sizeof(TBRW_STREAM_INFO) == 56, "TBRW_STREAM_INFO is 56 bytes");
TK_TBRW_STATIC_ASSERT(sizeof(DATA_BIND_STRUCT) == 24, "DATA_BIND_STRUCT is 24 bytes");

#ifdef __cplusplus
}
#endif
#endif
