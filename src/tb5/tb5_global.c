/* SPDX-License-Identifier: MIT */
/*
 * tb5_global.c: the hardware, software, version and user-defined global sections: set/get
 * with the size-query protocol (seed 9.2).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb5/tb5_items.h"

/* ---- hardware ------------------------------------------------------------------------------ */

TBRW_U32 TBRW_set_system(TBRW_PTR ptr, TBRW_SYSTEM *system)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct enc e;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (system == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_set_system: system is NULL");
	rc = tk__tb5_writing_obj(h, OBJ_GLOBAL(TBRW_HARDWARE_SECTION), "TBRW_set_system", &o);
	if (rc != VT_SUCCESS)
		return rc;
	if (tk__tb5_has_item(o, IT_SYSTEM))
		return tk__tb5_fail(TBRW_SECTION_EXISTS, "%s: TBRW_set_system called twice", h->path);
	NEED_SIZE(system->system_size, TBRW_SYSTEM, "TBRW_SYSTEM");
	if (system->system_num_nodes > 0 && system->node_array == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "%s: TBRW_SYSTEM has nodes but no node_array", h->path);
	e.len = 0;
	e32(&e, system->system_num_nodes);
	rc = tk__tb5_put_item(o, IT_SYSTEM, e.buf, e.len);
	for (TBRW_U32 n = 0; n < system->system_num_nodes && rc == VT_SUCCESS; n++) {
		const TBRW_NODE *node = &system->node_array[n];
		NEED_SIZE(node->node_size, TBRW_NODE, "TBRW_NODE");
		if (node->node_num_available > 0 && node->cpu_array == NULL)
			return tk__tb5_fail(TBRW_INVALID_PARAMETER, "%s: node %u has cpus but no cpu_array", h->path, n);
		e.len = 0;
		e32(&e, node->node_type_from_shell);
		e32(&e, node->node_id);
		e32(&e, node->node_num_available);
		e32(&e, node->node_num_used);
		e64(&e, node->node_physical_memory);
		rc = tk__tb5_put_item(o, IT_NODE, e.buf, e.len);
		for (TBRW_U32 c = 0; c < node->node_num_available && rc == VT_SUCCESS; c++) {
			const TBRW_CPU *cpu = &node->cpu_array[c];
			NEED_SIZE(cpu->cpu_size, TBRW_CPU, "TBRW_CPU");
			if (cpu->num_cpu_arch_array > 0 && cpu->cpu_arch_array == NULL)
				return tk__tb5_fail(TBRW_INVALID_PARAMETER, "%s: cpu %u has architectures but no array",
						h->path, c);
			e.len = 0;
			e32(&e, cpu->cpu_number);
			e32(&e, cpu->cpu_native_arch_type);
			e32(&e, cpu->cpu_intel_processor_number);
			e32(&e, cpu->cpu_speed_mhz);
			e32(&e, cpu->cpu_fsb_mhz);
			e32(&e, cpu->cpu_cache_L2);
			e32(&e, cpu->cpu_cache_L3);
			e64(&e, (uint64_t)cpu->cpu_tsc_offset);
			e16(&e, cpu->cpu_package_num);
			e16(&e, cpu->cpu_core_num);
			e16(&e, cpu->cpu_hardware_thread_num);
			e16(&e, cpu->cpu_threads_per_core);
			e32(&e, cpu->num_cpu_arch_array);
			rc = tk__tb5_put_item(o, IT_CPU, e.buf, e.len);
			for (TBRW_U32 a = 0; a < cpu->num_cpu_arch_array && rc == VT_SUCCESS; a++) {
				const TBRW_CPU_ARCH *arch = &cpu->cpu_arch_array[a];
				NEED_SIZE(arch->arch_size, TBRW_CPU_ARCH, "TBRW_CPU_ARCH");
				int ia64 = arch->arch_type == TBRW_GST_IA64;
				if (arch->arch_num_cpuid > 0 &&
				    (ia64 ? (void *)arch->cpuid_ia64_array : (void *)arch->cpuid_ia32_array) == NULL)
					return tk__tb5_fail(TBRW_INVALID_PARAMETER, "%s: architecture %u has no cpuid array",
							h->path, a);
				e.len = 0;
				e16(&e, arch->arch_type);
				e16(&e, arch->arch_num_cpuid);
				rc = tk__tb5_put_item(o, IT_ARCH, e.buf, e.len);
				for (TBRW_U32 k = 0; k < arch->arch_num_cpuid && rc == VT_SUCCESS; k++) {
					e.len = 0;
					if (ia64) {
						const TBRW_CPUID_IA64 *x = &arch->cpuid_ia64_array[k];
						e64(&e, x->cpuid_select);
						e64(&e, x->cpuid_val);
						e64(&e, x->reserved);
						rc = tk__tb5_put_item(o, IT_CPUID64, e.buf, e.len);
					} else {
						const TBRW_CPUID_IA32 *x = &arch->cpuid_ia32_array[k];
						e32(&e, x->cpuid_eax_input);
						e32(&e, x->cpuid_eax);
						e32(&e, x->cpuid_ebx);
						e32(&e, x->cpuid_ecx);
						e32(&e, x->cpuid_edx);
						e32(&e, x->reserved);
						rc = tk__tb5_put_item(o, IT_CPUID32, e.buf, e.len);
					}
				}
			}
		}
	}
	return rc;
}

/* Decodes the system tree into buf (or measures it when buf is NULL). */
static TBRW_U32 decode_system(struct tb5_handle *h, struct tb5_obj *o, unsigned char *buf, size_t *size)
{
	struct items it = {o->meta, o->meta_len, 0};
	struct dec d;
	uint16_t t;
	size_t at = 0, need;
	TBRW_SYSTEM *sys = NULL;
	TBRW_NODE *node = NULL;
	TBRW_CPU *cpu = NULL;
	TBRW_CPU_ARCH *arch = NULL;
	uint64_t nodes_left = 0, cpus_left = 0, archs_left = 0, ids_left = 0;
	int r, seen = 0;

#define TAKE(ptr, type, count)                                                          \
	do {                                                                            \
		need = (size_t)(count) * sizeof(type);                                  \
		if ((count) > TB5_MAX_CHUNK_RAW)                                        \
			return tk__tb5_bad_item(h, o, "system");                                \
		at = (at + 7u) & ~(size_t)7u;                                           \
		(ptr) = buf ? (type *)(void *)(buf + at) : NULL;                        \
		at += need;                                                             \
	} while (0)

	while ((r = tk__tb5_next_item(&it, &t, &d)) == 1) {
		if (t == IT_SYSTEM) {
			if (seen++)
				return tk__tb5_bad_item(h, o, "system");
			TAKE(sys, TBRW_SYSTEM, 1);
			uint32_t nn = d32(&d);
			if (sys) {
				sys->system_size = sizeof *sys;
				sys->system_num_nodes = nn;
			}
			nodes_left = nn;
			TAKE(node, TBRW_NODE, nn);
			if (sys)
				sys->node_array = nn ? node : NULL;
			if (node)
				node--; /* advanced before each use */
		} else if (t == IT_NODE) {
			if (!seen || nodes_left == 0 || cpus_left || archs_left || ids_left)
				return tk__tb5_bad_item(h, o, "node");
			nodes_left--;
			if (buf)
				node++;
			TBRW_NODE n;
			memset(&n, 0, sizeof n);
			n.node_size = sizeof n;
			n.node_type_from_shell = d32(&d);
			n.node_id = d32(&d);
			n.node_num_available = d32(&d);
			n.node_num_used = d32(&d);
			n.node_physical_memory = d64(&d);
			cpus_left = n.node_num_available;
			TAKE(cpu, TBRW_CPU, cpus_left);
			n.cpu_array = cpus_left ? cpu : NULL;
			if (cpu)
				cpu--;
			if (node)
				*node = n;
		} else if (t == IT_CPU) {
			if (cpus_left == 0 || archs_left || ids_left)
				return tk__tb5_bad_item(h, o, "cpu");
			cpus_left--;
			if (buf)
				cpu++;
			TBRW_CPU c;
			memset(&c, 0, sizeof c);
			c.cpu_size = sizeof c;
			c.cpu_number = d32(&d);
			c.cpu_native_arch_type = d32(&d);
			c.cpu_intel_processor_number = d32(&d);
			c.cpu_speed_mhz = d32(&d);
			c.cpu_fsb_mhz = d32(&d);
			c.cpu_cache_L2 = d32(&d);
			c.cpu_cache_L3 = d32(&d);
			c.cpu_tsc_offset = (TBRW_S64)d64(&d);
			c.cpu_package_num = (TBRW_U16)d16(&d);
			c.cpu_core_num = (TBRW_U16)d16(&d);
			c.cpu_hardware_thread_num = (TBRW_U16)d16(&d);
			c.cpu_threads_per_core = (TBRW_U16)d16(&d);
			c.num_cpu_arch_array = d32(&d);
			archs_left = c.num_cpu_arch_array;
			TAKE(arch, TBRW_CPU_ARCH, archs_left);
			c.cpu_arch_array = archs_left ? arch : NULL;
			if (arch)
				arch--;
			if (cpu)
				*cpu = c;
		} else if (t == IT_ARCH) {
			if (archs_left == 0 || ids_left)
				return tk__tb5_bad_item(h, o, "architecture");
			archs_left--;
			if (buf)
				arch++;
			TBRW_CPU_ARCH a;
			memset(&a, 0, sizeof a);
			a.arch_size = sizeof a;
			a.arch_type = (TBRW_U16)d16(&d);
			a.arch_num_cpuid = (TBRW_U16)d16(&d);
			ids_left = a.arch_num_cpuid;
			if (a.arch_type == TBRW_GST_IA64) {
				TBRW_CPUID_IA64 *x;
				TAKE(x, TBRW_CPUID_IA64, ids_left);
				a.cpuid_ia64_array = ids_left ? x : NULL;
			} else {
				TBRW_CPUID_IA32 *x;
				TAKE(x, TBRW_CPUID_IA32, ids_left);
				a.cpuid_ia32_array = ids_left ? x : NULL;
			}
			if (arch)
				*arch = a;
		} else if (t == IT_CPUID32 || t == IT_CPUID64) {
			int want64 = arch != NULL ? arch->arch_type == TBRW_GST_IA64 : t == IT_CPUID64;
			if (ids_left == 0 || want64 != (t == IT_CPUID64))
				return tk__tb5_bad_item(h, o, "cpuid");
			if (buf) {
				size_t k = (size_t)(arch->arch_num_cpuid - ids_left);
				if (t == IT_CPUID64) {
					TBRW_CPUID_IA64 *x = &arch->cpuid_ia64_array[k];
					x->cpuid_select = d64(&d);
					x->cpuid_val = d64(&d);
					x->reserved = d64(&d);
				} else {
					TBRW_CPUID_IA32 *x = &arch->cpuid_ia32_array[k];
					x->cpuid_eax_input = d32(&d);
					x->cpuid_eax = d32(&d);
					x->cpuid_ebx = d32(&d);
					x->cpuid_ecx = d32(&d);
					x->cpuid_edx = d32(&d);
					x->reserved = d32(&d);
				}
			}
			ids_left--;
		} else {
			return tk__tb5_bad_item(h, o, "hardware");
		}
		if (d.bad)
			return tk__tb5_bad_item(h, o, "hardware");
		if (at > UINT32_MAX)
			return tk__tb5_fail(TBRW_TOO_BIG, "%s: the hardware section is too large", h->path);
	}
#undef TAKE
	if (r < 0 || !seen || nodes_left || cpus_left || archs_left || ids_left)
		return tk__tb5_bad_item(h, o, "system");
	*size = at;
	return VT_SUCCESS;
}

TBRW_U32 TBRW_get_system(TBRW_PTR ptr, TBRW_U32 size_of_buffer, TBRW_SYSTEM *buf_ptr, TBRW_U32 *size_buffer_used)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	size_t size;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	rc = tk__tb5_reading_obj(h, OBJ_GLOBAL(TBRW_HARDWARE_SECTION), "TBRW_get_system", &o);
	if (rc == VT_SUCCESS)
		rc = decode_system(h, o, NULL, &size);
	if (rc != VT_SUCCESS)
		return rc;
	if (size_buffer_used != NULL)
		*size_buffer_used = (TBRW_U32)size;
	if (buf_ptr == NULL || size_of_buffer < size)
		return tk__tb5_fail(TBRW_BUFFER_TOO_SMALL, "%s: TBRW_get_system: the buffer holds %u bytes, %zu are needed",
				h->path, buf_ptr == NULL ? 0u : size_of_buffer, size);
	if (((uintptr_t)buf_ptr & 7u) != 0)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_system: buffer must be 8-byte aligned");
	memset(buf_ptr, 0, size);
	return decode_system(h, o, (unsigned char *)buf_ptr, &size);
}

/* ---- software -------------------------------------------------------------------------------- */


TBRW_U32 TBRW_set_host(TBRW_PTR ptr, TBRW_HOST *host)
{
	SET_PROLOGUE(TBRW_SOFTWARE_SECTION, "TBRW_set_host", IT_HOST, host);
	NEED_SIZE(host->host_size, TBRW_HOST, "TBRW_HOST");
	if ((rc = tk__tb5_sid(h, &host->host_ip_address, &e)) != VT_SUCCESS || (rc = tk__tb5_sid(h, &host->host_name, &e)) != VT_SUCCESS)
		return rc;
	e32(&e, host->reserved);
	return tk__tb5_put_item(o, IT_HOST, e.buf, e.len);
}

TBRW_U32 TBRW_set_os(TBRW_PTR ptr, TBRW_OS *os)
{
	SET_PROLOGUE(TBRW_SOFTWARE_SECTION, "TBRW_set_os", IT_OS, os);
	NEED_SIZE(os->os_size, TBRW_OS, "TBRW_OS");
	e32(&e, os->os_platform);
	e32(&e, os->os_major);
	e32(&e, os->os_minor);
	e32(&e, os->os_build);
	e32(&e, os->os_extra);
	if ((rc = tk__tb5_sid(h, &os->os_name, &e)) != VT_SUCCESS || (rc = tk__tb5_sid(h, &os->os_name_extra, &e)) != VT_SUCCESS)
		return rc;
	return tk__tb5_put_item(o, IT_OS, e.buf, e.len);
}

TBRW_U32 TBRW_set_application(TBRW_PTR ptr, TBRW_APPLICATION *application)
{
	SET_PROLOGUE(TBRW_SOFTWARE_SECTION, "TBRW_set_application", IT_APP, application);
	NEED_SIZE(application->app_size, TBRW_APPLICATION, "TBRW_APPLICATION");
	e32(&e, application->app_reserved);
	e32(&e, application->app_page_size);
	e32(&e, application->app_alloc_granularity);
	e64(&e, application->app_min_app_addr);
	e64(&e, application->app_max_app_addr);
	return tk__tb5_put_item(o, IT_APP, e.buf, e.len);
}

TBRW_U32 TBRW_set_version_info(TBRW_PTR ptr, TBRW_VERSION_INFO *version_info)
{
	SET_PROLOGUE(TBRW_VERSION_INFO_SECTION, "TBRW_set_version_info", IT_VERSION, version_info);
	NEED_SIZE(version_info->version_info_size, TBRW_VERSION_INFO, "TBRW_VERSION_INFO");
	e32(&e, version_info->sampling_driver_version);
	e32(&e, version_info->bind_version);
	e32(&e, version_info->sample_file_version);
	return tk__tb5_put_item(o, IT_VERSION, e.buf, e.len);
}

TBRW_U32 TBRW_set_user_defined_global(TBRW_PTR ptr, TBRW_U32 size_of_data, void *data_ptr)
{
	SET_PROLOGUE(TBRW_USER_DEFINED_GLOBAL_SECTION, "TBRW_set_user_defined_global", IT_USER, data_ptr);
	(void)e;
	return tk__tb5_put_item(o, IT_USER, data_ptr, size_of_data);
}


TBRW_U32 TBRW_get_host(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr, TBRW_U32 *size_buffer_used)
{
	TBRW_HOST v;
	GET_PROLOGUE(TBRW_SOFTWARE_SECTION, "TBRW_get_host", IT_HOST);
	memset(&v, 0, sizeof v);
	v.host_size = sizeof v;
	tk__tb5_rid(h, &d, &v.host_ip_address);
	tk__tb5_rid(h, &d, &v.host_name);
	v.reserved = d32(&d);
	if (d.bad)
		return tk__tb5_bad_item(h, o, "host");
	return tk__tb5_give(h, "TBRW_get_host", &v, sizeof v, size_of_buffer, buf_ptr, size_buffer_used);
}

TBRW_U32 TBRW_get_os(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr, TBRW_U32 *size_buffer_used)
{
	TBRW_OS v;
	GET_PROLOGUE(TBRW_SOFTWARE_SECTION, "TBRW_get_os", IT_OS);
	memset(&v, 0, sizeof v);
	v.os_size = sizeof v;
	v.os_platform = d32(&d);
	v.os_major = d32(&d);
	v.os_minor = d32(&d);
	v.os_build = d32(&d);
	v.os_extra = d32(&d);
	tk__tb5_rid(h, &d, &v.os_name);
	tk__tb5_rid(h, &d, &v.os_name_extra);
	if (d.bad)
		return tk__tb5_bad_item(h, o, "os");
	return tk__tb5_give(h, "TBRW_get_os", &v, sizeof v, size_of_buffer, buf_ptr, size_buffer_used);
}

TBRW_U32 TBRW_get_application(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr, TBRW_U32 *size_buffer_used)
{
	TBRW_APPLICATION v;
	GET_PROLOGUE(TBRW_SOFTWARE_SECTION, "TBRW_get_application", IT_APP);
	memset(&v, 0, sizeof v);
	v.app_size = sizeof v;
	v.app_reserved = d32(&d);
	v.app_page_size = d32(&d);
	v.app_alloc_granularity = d32(&d);
	v.app_min_app_addr = d64(&d);
	v.app_max_app_addr = d64(&d);
	if (d.bad)
		return tk__tb5_bad_item(h, o, "application");
	return tk__tb5_give(h, "TBRW_get_application", &v, sizeof v, size_of_buffer, buf_ptr, size_buffer_used);
}

TBRW_U32 TBRW_get_version_info(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr, TBRW_U32 *size_buffer_used)
{
	TBRW_VERSION_INFO v;
	GET_PROLOGUE(TBRW_VERSION_INFO_SECTION, "TBRW_get_version_info", IT_VERSION);
	v.version_info_size = sizeof v;
	v.sampling_driver_version = d32(&d);
	v.bind_version = d32(&d);
	v.sample_file_version = d32(&d);
	if (d.bad)
		return tk__tb5_bad_item(h, o, "version");
	return tk__tb5_give(h, "TBRW_get_version_info", &v, sizeof v, size_of_buffer, buf_ptr, size_buffer_used);
}

TBRW_U32 TBRW_get_user_defined_global(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr,
				      TBRW_U32 *size_buffer_used)
{
	GET_PROLOGUE(TBRW_USER_DEFINED_GLOBAL_SECTION, "TBRW_get_user_defined_global", IT_USER);
	return tk__tb5_give(h, "TBRW_get_user_defined_global", d.p, d.len, size_of_buffer, buf_ptr, size_buffer_used);
}
