/* SPDX-License-Identifier: MIT */
/*
 * tbrw_dat.h: the text .dat format that tbrw_reader writes and tbrw_writer reads (specified
 * in docs/tbrw_reader.md): its schema, a streaming line parser that checks every line
 * against the schema, and the printer. Independent of the TBRW API, so it can be fuzzed alone.
 */
#ifndef TRACEKIT_TOOLS_TBRW_DAT_H
#define TRACEKIT_TOOLS_TBRW_DAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DAT_VERSION 1

/*
 * Field types. U<n>: unsigned of n bits; B2: a 2-bit unsigned bit field; S64: signed 64-bit;
 * FT: a FILETIME as one 64-bit number (dwHighDateTime << 32 | dwLowDateTime); STR: a
 * string (UTF-8 in the file, "null" for a string whose unique id is 0).
 */
enum dat_type { DAT_U8, DAT_U16, DAT_U32, DAT_U64, DAT_B2, DAT_S64, DAT_FT, DAT_STR };

/*
 * The fields of every record kind, in file order, named exactly as the structure members of
 * <tracekit/tbrw_types.h>. The *_size versioning members and the array counts
 * (system_num_nodes, num_cpu_arch_array, arch_num_cpuid, event_num_details) are not fields:
 * tbrw_writer derives them from the lines that follow a record.
 */
#define DAT_FIELDS_node(X)                \
	X(U32, node_type_from_shell)      \
	X(U32, node_id)                   \
	X(U32, node_num_available)        \
	X(U32, node_num_used)             \
	X(U64, node_physical_memory)
#define DAT_FIELDS_cpu(X)                  \
	X(U32, cpu_number)                 \
	X(U32, cpu_native_arch_type)       \
	X(U32, cpu_intel_processor_number) \
	X(U32, cpu_speed_mhz)              \
	X(U32, cpu_fsb_mhz)                \
	X(U32, cpu_cache_L2)               \
	X(U32, cpu_cache_L3)               \
	X(S64, cpu_tsc_offset)             \
	X(U16, cpu_package_num)            \
	X(U16, cpu_core_num)               \
	X(U16, cpu_hardware_thread_num)    \
	X(U16, cpu_threads_per_core)
#define DAT_FIELDS_cpu_arch(X) X(U16, arch_type)
#define DAT_FIELDS_cpuid_ia32(X) \
	X(U32, cpuid_eax_input)  \
	X(U32, cpuid_eax)        \
	X(U32, cpuid_ebx)        \
	X(U32, cpuid_ecx)        \
	X(U32, cpuid_edx)        \
	X(U32, reserved)
#define DAT_FIELDS_cpuid_ia64(X) \
	X(U64, cpuid_select)     \
	X(U64, cpuid_val)        \
	X(U64, reserved)
#define DAT_FIELDS_host(X)          \
	X(STR, host_ip_address)     \
	X(STR, host_name)           \
	X(U32, reserved)
#define DAT_FIELDS_os(X)            \
	X(U32, os_platform)         \
	X(U32, os_major)            \
	X(U32, os_minor)            \
	X(U32, os_build)            \
	X(U32, os_extra)            \
	X(STR, os_name)             \
	X(STR, os_name_extra)
#define DAT_FIELDS_application(X)      \
	X(U32, app_reserved)           \
	X(U32, app_page_size)          \
	X(U32, app_alloc_granularity)  \
	X(U64, app_min_app_addr)       \
	X(U64, app_max_app_addr)
#define DAT_FIELDS_process(X)       \
	X(U32, pid_reserved)        \
	X(U32, pid_id)              \
	X(U32, pid_flags)           \
	X(U64, pid_event_when)      \
	X(U32, reserved1)           \
	X(U32, reserved2)           \
	X(STR, pid_path)            \
	X(STR, pid_name)
#define DAT_FIELDS_thread(X)        \
	X(U32, tid_associated_pid)  \
	X(U32, tid_id)              \
	X(U32, tid_flags)           \
	X(U64, tid_event_when)      \
	X(U32, reserved1)           \
	X(U32, reserved2)           \
	X(STR, tid_name)
#define DAT_FIELDS_module(X)                \
	X(U32, module_reserved)             \
	X(U32, module_associated_pid)       \
	X(U32, module_flags)                \
	X(U64, module_event_when)           \
	X(U32, module_segment_number)       \
	X(B2, module_segment_type)          \
	X(U32, module_code_selector)        \
	X(U64, module_length)               \
	X(U64, module_load_address)         \
	X(U32, reserved_for_legacy)         \
	X(U32, reserved_for_legacy2)        \
	X(U32, reserved_for_legacy_flags)   \
	X(U32, reserved1)                   \
	X(U64, module_unload_tsc)           \
	X(STR, module_path)                 \
	X(STR, module_name)                 \
	X(STR, module_segment_name)
#define DAT_FIELDS_version_info(X)          \
	X(U32, sampling_driver_version)     \
	X(U32, bind_version)                \
	X(U32, sample_file_version)
#define DAT_FIELDS_stream_info(X)     \
	X(U32, sampling_duration)     \
	X(U32, stream_type)           \
	X(U32, sampling_interval)     \
	X(FT, sampling_start_time)    \
	X(FT, sampling_end_time)      \
	X(STR, command_line)          \
	X(STR, cpu_mask)              \
	X(STR, comment)
#define DAT_FIELDS_event(X)           \
	X(U32, event_id)              \
	X(U32, event_flags)           \
	X(U64, event_sav)             \
	X(STR, event_name)            \
	X(STR, event_arch_name)
#define DAT_FIELDS_detail(X)          \
	X(U16, detail_access_size)    \
	X(U8, detail_method)          \
	X(U8, detail_access)          \
	X(U64, detail_address)        \
	X(U64, detail_value)          \
	X(U8, legacy_command)         \
	X(U8, reserved1)              \
	X(U16, reserved2)             \
	X(U32, reserved3)
#define DAT_FIELDS_desc(X)            \
	X(U32, desc_offset)           \
	X(U16, desc_type)             \
	X(U16, desc_subtype)          \
	X(U32, desc_data_size)        \
	X(U64, desc_access_offset)    \
	X(U8, desc_access_type)       \
	X(U8, desc_access_method)     \
	X(U8, desc_sample_flag)       \
	X(U8, reserved0)              \
	X(U32, reserved1)             \
	X(STR, desc_name)
#define DAT_FIELDS_system(X) /* no fields: its nodes follow */
/* First line of a process_thread section that TBRW_dobind derived (no fields). */
#define DAT_FIELDS_derived(X)
/* One record's bind result (DATA_BIND_STRUCT), in a stream's bind section. */
#define DAT_FIELDS_bind(X)            \
	X(U64, module_index)          \
	X(U64, pid_index)             \
	X(U64, tid_index)

/* Record kinds with fields (X-list: name), then the two kinds that carry hex bytes. */
#define DAT_KINDS(X) \
	X(system) X(node) X(cpu) X(cpu_arch) X(cpuid_ia32) X(cpuid_ia64) X(host) X(os) \
	X(application) X(process) X(thread) X(module) X(version_info) X(stream_info) X(event) \
	X(detail) X(desc) X(derived) X(bind)

enum dat_kind {
#define DAT__KIND_ENUM(name) DAT_K_##name,
	DAT_KINDS(DAT__KIND_ENUM)
#undef DAT__KIND_ENUM
	DAT_K_record, /* one data entry, hex */
	DAT_K_bytes,  /* part of a user-defined section, hex */
	DAT_N_KINDS
};

/* Sections: the six global ones, then the five of a stream (names as in docs/tbrw_reader.md),
 * then a stream's bind result (not a TBRW stream section: what TBRW_dobind stored). */
enum dat_section {
	DAT_S_hardware, DAT_S_software, DAT_S_process_thread, DAT_S_module,
	DAT_S_user_defined_global, DAT_S_version_info,
	DAT_S_event_description, DAT_S_data_description, DAT_S_data,
	DAT_S_user_defined_stream, DAT_S_stream_info,
	DAT_S_bind,
	DAT_N_SECTIONS
};
#define DAT_N_GLOBAL_SECTIONS 6

#define DAT_MAX_FIELDS 20
#define DAT_MAX_HEX_BYTES (16u << 20)   /* one record or bytes line */
#define DAT_MAX_USER_BYTES (256u << 20) /* a whole user-defined section */

/* A record's field values, in schema order. Signed values are stored two's complement. */
struct dat_values {
	uint64_t num[DAT_MAX_FIELDS];
	const char *str[DAT_MAX_FIELDS]; /* UTF-8, or NULL for a null string */
};

struct dat_field {
	const char *name;
	enum dat_type type;
};

/* The schema: name of a kind or section, and a kind's fields. */
const char *dat_kind_name(enum dat_kind kind);
const char *dat_section_name(enum dat_section section);
size_t dat_kind_fields(enum dat_kind kind, const struct dat_field **fields);

/* ---- parsing ---- */

enum dat_item_type {
	DAT_SECTION_BEGIN, /* section */
	DAT_SECTION_END,   /* section */
	DAT_STREAM_BEGIN,  /* stream */
	DAT_STREAM_END,    /* stream */
	DAT_RECORD,        /* kind, values (kind < DAT_K_record) or bytes/n_bytes */
};

struct dat_item {
	enum dat_item_type type;
	unsigned long line;          /* 1-based line number in the input */
	enum dat_section section;    /* the section the item is in (or begins/ends) */
	uint32_t stream;             /* the stream the item is in, for stream sections */
	enum dat_kind kind;
	const struct dat_values *values;
	const unsigned char *bytes;  /* DAT_K_record, DAT_K_bytes */
	size_t n_bytes;
};

/*
 * Called for each item, in file order. Returns 0 to go on; anything else stops the parse,
 * and dat_parse() returns that value (the callback reports its own error).
 */
typedef int (*dat_item_fn)(void *ud, const struct dat_item *item);

/*
 * Reads a .dat file from in and checks every line: syntax, the order and nesting of sections
 * and records, field names, value ranges, UTF-8. Returns 0 at a complete file, -1 with a
 * message "line N: ..." in err (of err_size bytes) on malformed input or a read error, or a
 * callback's non-zero value. Memory use is bounded by one line (DAT_MAX_HEX_BYTES * 2 + ...).
 */
int dat_parse(FILE *in, dat_item_fn fn, void *ud, char *err, size_t err_size);

/* ---- printing (all return 0, or -1 when the stream reports an error) ---- */

int dat_print_header(FILE *out);
int dat_print_section(FILE *out, enum dat_section section); /* "section NAME" */
int dat_print_stream(FILE *out, uint32_t stream);           /* "stream N" */
int dat_print_end(FILE *out);                               /* "end" */
int dat_print_values(FILE *out, enum dat_kind kind, const struct dat_values *values);
int dat_print_hex(FILE *out, enum dat_kind kind, const void *bytes, size_t n_bytes);
/* Writes s as a quoted .dat string ("null" for NULL); also used by print_tb5. */
int dat_print_string(FILE *out, const char *s);

#endif /* TRACEKIT_TOOLS_TBRW_DAT_H */
