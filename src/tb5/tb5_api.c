/* SPDX-License-Identifier: MIT */
/*
 * tb5_api.c: the TBRW section and stream API (seed 000 chapters 5 and 9) over the .tb5
 * container: the reading/writing/done state machine, the set/get/add functions with the
 * size-query protocol, enumeration with start_index, and the encoding of every structure as
 * tagged little-endian items (docs/tb5-format.md, "Items").
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

#include "tb5/tb5_internal.h"

enum item_type {
	IT_SYSTEM = 1, IT_NODE, IT_CPU, IT_ARCH, IT_CPUID32, IT_CPUID64, IT_HOST, IT_OS, IT_APP, IT_PID, IT_TID,
	IT_MODULE, IT_VERSION, IT_USER, IT_STREAM_INFO, IT_EVENT, IT_DETAIL, IT_DESC
};

static const char *const global_names[] = {"hardware", "software", "process/thread", "module", "user-defined global",
					   "version information"};
static const char *const stream_names[] = {"event description", "data description", "data", "user-defined stream",
					   "stream information"};

/* ---- item encoding ---------------------------------------------------------------------- */

struct enc {
	unsigned char buf[256];
	size_t len;
};

static void e16(struct enc *e, uint32_t v)
{
	tb5_put16(e->buf + e->len, (uint16_t)v);
	e->len += 2;
}
static void e32(struct enc *e, uint32_t v)
{
	tb5_put32(e->buf + e->len, v);
	e->len += 4;
}
static void e64(struct enc *e, uint64_t v)
{
	tb5_put64(e->buf + e->len, v);
	e->len += 8;
}

/* Appends the item (type, payload e) to obj. */
static TBRW_U32 put_item(struct tb5_obj *obj, uint16_t type, const void *payload, size_t len)
{
	unsigned char hd[8];
	TBRW_U32 rc;

	if (len > UINT32_MAX)
		return tb5_fail(TBRW_TOO_BIG, "item too large");
	tb5_put16(hd, type);
	tb5_put16(hd + 2, 0);
	tb5_put32(hd + 4, (uint32_t)len);
	rc = tb5_obj_append(obj, hd, sizeof hd);
	if (rc == VT_SUCCESS && len > 0)
		rc = tb5_obj_append(obj, payload, len);
	return rc;
}

struct dec {
	const unsigned char *p;
	size_t len, at;
	int bad;
};
static uint32_t d16(struct dec *d)
{
	if (d->at + 2 > d->len) {
		d->bad = 1;
		return 0;
	}
	d->at += 2;
	return tb5_get16(d->p + d->at - 2);
}
static uint32_t d32(struct dec *d)
{
	if (d->at + 4 > d->len) {
		d->bad = 1;
		return 0;
	}
	d->at += 4;
	return tb5_get32(d->p + d->at - 4);
}
static uint64_t d64(struct dec *d)
{
	if (d->at + 8 > d->len) {
		d->bad = 1;
		return 0;
	}
	d->at += 8;
	return tb5_get64(d->p + d->at - 8);
}

/* Walks the items of a loaded object. */
struct items {
	const unsigned char *p;
	size_t len, at;
};
static int next_item(struct items *it, uint16_t *type, struct dec *d)
{
	uint32_t n;

	if (it->at + 8 > it->len)
		return 0;
	n = tb5_get32(it->p + it->at + 4);
	if (n > it->len - it->at - 8)
		return -1;
	*type = tb5_get16(it->p + it->at);
	d->p = it->p + it->at + 8;
	d->len = n;
	d->at = 0;
	d->bad = 0;
	it->at += 8u + n;
	return 1;
}

static TBRW_U32 bad_item(struct tb5_handle *h, struct tb5_obj *o, const char *what)
{
	return tb5_fail(TBRW_FILE_CORRUPT, "%s: section %u (from byte offset %llu): malformed %s item", h->path, o->id,
			tb5_obj_offset(o), what);
}

TBRW_U32 tb5_check_items(struct tb5_handle *h, struct tb5_obj *o)
{
	struct items it;
	struct dec d;
	uint16_t t;
	int r;
	TBRW_U32 rc = tb5_obj_load(h, o);

	if (rc != VT_SUCCESS)
		return rc;
	it = (struct items){o->meta, o->meta_len, 0};
	while ((r = next_item(&it, &t, &d)) == 1)
		;
	if (r < 0 || it.at != it.len)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: section %u (from byte offset %llu): the item at byte %zu of the "
						   "section overruns it",
				h->path, o->id, tb5_obj_offset(o), it.at);
	return VT_SUCCESS;
}

/* Strings: on write intern the wide text, on read the id must exist. */
static TBRW_U32 sid(struct tb5_handle *h, const TBRW_STRING_OR_ID *s, struct enc *e)
{
	uint64_t id;
	TBRW_U32 rc = tb5_string_id(h, s->soi_ptr, &id);
	if (rc == VT_SUCCESS)
		e64(e, id);
	return rc;
}
static void rid(struct tb5_handle *h, struct dec *d, TBRW_STRING_OR_ID *s)
{
	s->soi_uniqueid = d64(d);
	/* atomic: other threads may be adding strings */
	if (s->soi_uniqueid > atomic_load_explicit(&h->n_strings, memory_order_relaxed))
		d->bad = 1;
}

/* ---- section state ------------------------------------------------------------------------ */

static int global_ok(TBRW_SECTION_IDENTIFIER s)
{
	return (unsigned)s <= (unsigned)TBRW_VERSION_INFO_SECTION;
}
static int stream_sec_ok(TBRW_STREAM_SECTION_IDENTIFIER s)
{
	return (unsigned)s <= (unsigned)TBRW_STREAM_INFO_SECTION;
}

static int stream_exists(struct tb5_handle *h, uint32_t s)
{
	struct tb5_stream *st = tb5_stream_at(h, s, 0);
	if (st == NULL)
		return 0;
	if (st->exists)
		return 1;
	for (int k = 0; k <= (int)TBRW_STREAM_INFO_SECTION; k++) {
		struct tb5_obj *o = tb5_obj_find(h, OBJ_STREAM_SEC(s, k));
		if (o != NULL && o->state == OBJ_DONE && o->from_file) {
			st->exists = 1;
			return 1;
		}
	}
	return 0;
}

#define CHECK_HANDLE(h)                                                                        \
	do {                                                                                   \
		if ((h) == NULL)                                                               \
			return tb5_fail(TBRW_INVALID_PARAMETER, "%s: NULL TBRW handle", __func__); \
	} while (0)

TBRW_U32 TBRW_writing_section(TBRW_PTR ptr, TBRW_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	if (!global_ok(section))
		return tb5_fail(TBRW_INVALID_SECTION, "TBRW_writing_section: %d is not a global section identifier",
				(int)section);
	if (!h->writable)
		return tb5_fail(TBRW_READ_ONLY, "%s: opened for reading only", h->path);
	pthread_mutex_lock(&h->lock);
	o = tb5_obj_get(h, OBJ_GLOBAL(section));
	if (o == NULL)
		rc = tb5_fail(TBRW_NO_MEMORY, "out of memory");
	else if (o->state == OBJ_DONE)
		rc = tb5_fail(TBRW_SECTION_EXISTS, "%s: the %s section already exists", h->path, global_names[section]);
	else if (o->state == OBJ_WRITING || o->readers > 0)
		rc = tb5_fail(TBRW_SECTION_BUSY, "%s: the %s section is already open", h->path, global_names[section]);
	else
		o->state = OBJ_WRITING;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

TBRW_U32 TBRW_reading_section(TBRW_PTR ptr, TBRW_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	if (!global_ok(section))
		return tb5_fail(TBRW_INVALID_SECTION, "TBRW_reading_section: %d is not a global section identifier",
				(int)section);
	pthread_mutex_lock(&h->lock);
	o = tb5_obj_find(h, OBJ_GLOBAL(section));
	if (o == NULL || o->state == OBJ_ABSENT)
		rc = tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: the file has no %s section", h->path, global_names[section]);
	else if (o->state == OBJ_WRITING)
		rc = tb5_fail(TBRW_SECTION_BUSY, "%s: the %s section is being written", h->path, global_names[section]);
	else
		o->readers++;
	pthread_mutex_unlock(&h->lock);
	if (rc == VT_SUCCESS) {
		rc = tb5_obj_load(h, o);
		if (rc != VT_SUCCESS) {
			pthread_mutex_lock(&h->lock);
			o->readers--;
			pthread_mutex_unlock(&h->lock);
		}
	}
	return rc;
}

/* Items a section needs before its done_ succeeds. */
static int has_item(struct tb5_obj *o, uint16_t want)
{
	struct items it = {o->buf, o->buf_len, 0};
	struct dec d;
	uint16_t t;
	while (next_item(&it, &t, &d) == 1)
		if (t == want)
			return 1;
	return 0;
}

TBRW_U32 TBRW_done_section(TBRW_PTR ptr, TBRW_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;

	CHECK_HANDLE(h);
	if (!global_ok(section))
		return tb5_fail(TBRW_INVALID_SECTION, "TBRW_done_section: %d is not a global section identifier",
				(int)section);
	pthread_mutex_lock(&h->lock);
	o = tb5_obj_find(h, OBJ_GLOBAL(section));
	if (o != NULL && o->readers > 0) {
		o->readers--;
		pthread_mutex_unlock(&h->lock);
		return VT_SUCCESS;
	}
	pthread_mutex_unlock(&h->lock);
	if (o == NULL || o->state != OBJ_WRITING)
		return tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_done_section(%s) without TBRW_writing_section or "
							"TBRW_reading_section",
				h->path, global_names[section]);
	if (section == TBRW_HARDWARE_SECTION && !has_item(o, IT_SYSTEM))
		return tb5_fail(TBRW_VALIDATION_FAILED, "%s: the hardware section needs TBRW_set_system", h->path);
	if (section == TBRW_VERSION_INFO_SECTION && !has_item(o, IT_VERSION))
		return tb5_fail(TBRW_VALIDATION_FAILED, "%s: the version information section needs TBRW_set_version_info",
				h->path);
	if (section == TBRW_SOFTWARE_SECTION && o->buf_len == 0)
		return tb5_fail(TBRW_VALIDATION_FAILED, "%s: the software section needs a host, OS or application",
				h->path);
	if (section == TBRW_USER_DEFINED_GLOBAL_SECTION && o->buf_len == 0)
		return tb5_fail(TBRW_VALIDATION_FAILED, "%s: the user-defined section needs TBRW_set_user_defined_global",
				h->path);
	if (section == TBRW_MODULE_SECTION || section == TBRW_PROCESS_THREAD_SECTION) {
		h->modules_loaded = 0;
		h->pt.loaded = 0;
	}
	return tb5_obj_finish(h, o);
}

/* The object a set_/add_ call writes to: open for writing, or an error. */
static TBRW_U32 writing_obj(struct tb5_handle *h, uint32_t id, const char *what, struct tb5_obj **out)
{
	struct tb5_obj *o = NULL;

	pthread_mutex_lock(&h->lock);
	o = tb5_obj_find(h, id);
	pthread_mutex_unlock(&h->lock);
	if (o == NULL || o->state != OBJ_WRITING)
		return tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: %s before its section was opened with TBRW_writing_*",
				h->path, what);
	*out = o;
	return VT_SUCCESS;
}

static TBRW_U32 reading_obj(struct tb5_handle *h, uint32_t id, const char *what, struct tb5_obj **out)
{
	struct tb5_obj *o = NULL;

	pthread_mutex_lock(&h->lock);
	o = tb5_obj_find(h, id);
	pthread_mutex_unlock(&h->lock);
	if (o == NULL || o->readers <= 0 || !o->meta_loaded)
		return tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: %s before its section was opened with TBRW_reading_*",
				h->path, what);
	*out = o;
	return VT_SUCCESS;
}

/* Copies one fixed-size decoded structure out with the size-query protocol. */
static TBRW_U32 give(struct tb5_handle *h, const char *what, const void *src, size_t size, TBRW_U32 size_of_buffer,
		     void *buf, TBRW_U32 *used)
{
	if (used != NULL)
		*used = (TBRW_U32)size;
	if (buf == NULL || size_of_buffer < size)
		return tb5_fail(TBRW_BUFFER_TOO_SMALL, "%s: %s: the buffer holds %u bytes, %zu are needed", h->path, what,
				buf == NULL ? 0u : size_of_buffer, size);
	if (size > 0)
		memcpy(buf, src, size);
	return VT_SUCCESS;
}

/* Finds the first item of a type in a loaded object. */
static int find_item(struct tb5_obj *o, uint16_t want, struct dec *d)
{
	struct items it = {o->meta, o->meta_len, 0};
	uint16_t t;
	int r;
	while ((r = next_item(&it, &t, d)) == 1)
		if (t == want)
			return 1;
	return 0;
}

#define NEED_SIZE(field, type, what)                                                                   \
	do {                                                                                           \
		if ((field) != sizeof(type))                                                           \
			return tb5_fail(TBRW_INVALID_PARAMETER, "%s: %s: size field is %u, expected %zu", \
					h->path, what, (unsigned)(field), sizeof(type));               \
	} while (0)

/* ---- hardware ------------------------------------------------------------------------------ */

TBRW_U32 TBRW_set_system(TBRW_PTR ptr, TBRW_SYSTEM *system)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct enc e;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (system == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_set_system: system is NULL");
	rc = writing_obj(h, OBJ_GLOBAL(TBRW_HARDWARE_SECTION), "TBRW_set_system", &o);
	if (rc != VT_SUCCESS)
		return rc;
	if (has_item(o, IT_SYSTEM))
		return tb5_fail(TBRW_SECTION_EXISTS, "%s: TBRW_set_system called twice", h->path);
	NEED_SIZE(system->system_size, TBRW_SYSTEM, "TBRW_SYSTEM");
	if (system->system_num_nodes > 0 && system->node_array == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "%s: TBRW_SYSTEM has nodes but no node_array", h->path);
	e.len = 0;
	e32(&e, system->system_num_nodes);
	rc = put_item(o, IT_SYSTEM, e.buf, e.len);
	for (TBRW_U32 n = 0; n < system->system_num_nodes && rc == VT_SUCCESS; n++) {
		const TBRW_NODE *node = &system->node_array[n];
		NEED_SIZE(node->node_size, TBRW_NODE, "TBRW_NODE");
		if (node->node_num_available > 0 && node->cpu_array == NULL)
			return tb5_fail(TBRW_INVALID_PARAMETER, "%s: node %u has cpus but no cpu_array", h->path, n);
		e.len = 0;
		e32(&e, node->node_type_from_shell);
		e32(&e, node->node_id);
		e32(&e, node->node_num_available);
		e32(&e, node->node_num_used);
		e64(&e, node->node_physical_memory);
		rc = put_item(o, IT_NODE, e.buf, e.len);
		for (TBRW_U32 c = 0; c < node->node_num_available && rc == VT_SUCCESS; c++) {
			const TBRW_CPU *cpu = &node->cpu_array[c];
			NEED_SIZE(cpu->cpu_size, TBRW_CPU, "TBRW_CPU");
			if (cpu->num_cpu_arch_array > 0 && cpu->cpu_arch_array == NULL)
				return tb5_fail(TBRW_INVALID_PARAMETER, "%s: cpu %u has architectures but no array",
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
			rc = put_item(o, IT_CPU, e.buf, e.len);
			for (TBRW_U32 a = 0; a < cpu->num_cpu_arch_array && rc == VT_SUCCESS; a++) {
				const TBRW_CPU_ARCH *arch = &cpu->cpu_arch_array[a];
				NEED_SIZE(arch->arch_size, TBRW_CPU_ARCH, "TBRW_CPU_ARCH");
				int ia64 = arch->arch_type == TBRW_GST_IA64;
				if (arch->arch_num_cpuid > 0 &&
				    (ia64 ? (void *)arch->cpuid_ia64_array : (void *)arch->cpuid_ia32_array) == NULL)
					return tb5_fail(TBRW_INVALID_PARAMETER, "%s: architecture %u has no cpuid array",
							h->path, a);
				e.len = 0;
				e16(&e, arch->arch_type);
				e16(&e, arch->arch_num_cpuid);
				rc = put_item(o, IT_ARCH, e.buf, e.len);
				for (TBRW_U32 k = 0; k < arch->arch_num_cpuid && rc == VT_SUCCESS; k++) {
					e.len = 0;
					if (ia64) {
						const TBRW_CPUID_IA64 *x = &arch->cpuid_ia64_array[k];
						e64(&e, x->cpuid_select);
						e64(&e, x->cpuid_val);
						e64(&e, x->reserved);
						rc = put_item(o, IT_CPUID64, e.buf, e.len);
					} else {
						const TBRW_CPUID_IA32 *x = &arch->cpuid_ia32_array[k];
						e32(&e, x->cpuid_eax_input);
						e32(&e, x->cpuid_eax);
						e32(&e, x->cpuid_ebx);
						e32(&e, x->cpuid_ecx);
						e32(&e, x->cpuid_edx);
						e32(&e, x->reserved);
						rc = put_item(o, IT_CPUID32, e.buf, e.len);
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
			return bad_item(h, o, "system");                                \
		at = (at + 7u) & ~(size_t)7u;                                           \
		(ptr) = buf ? (type *)(void *)(buf + at) : NULL;                        \
		at += need;                                                             \
	} while (0)

	while ((r = next_item(&it, &t, &d)) == 1) {
		if (t == IT_SYSTEM) {
			if (seen++)
				return bad_item(h, o, "system");
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
				return bad_item(h, o, "node");
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
				return bad_item(h, o, "cpu");
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
				return bad_item(h, o, "architecture");
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
				return bad_item(h, o, "cpuid");
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
			return bad_item(h, o, "hardware");
		}
		if (d.bad)
			return bad_item(h, o, "hardware");
		if (at > UINT32_MAX)
			return tb5_fail(TBRW_TOO_BIG, "%s: the hardware section is too large", h->path);
	}
#undef TAKE
	if (r < 0 || !seen || nodes_left || cpus_left || archs_left || ids_left)
		return bad_item(h, o, "system");
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
	rc = reading_obj(h, OBJ_GLOBAL(TBRW_HARDWARE_SECTION), "TBRW_get_system", &o);
	if (rc == VT_SUCCESS)
		rc = decode_system(h, o, NULL, &size);
	if (rc != VT_SUCCESS)
		return rc;
	if (size_buffer_used != NULL)
		*size_buffer_used = (TBRW_U32)size;
	if (buf_ptr == NULL || size_of_buffer < size)
		return tb5_fail(TBRW_BUFFER_TOO_SMALL, "%s: TBRW_get_system: the buffer holds %u bytes, %zu are needed",
				h->path, buf_ptr == NULL ? 0u : size_of_buffer, size);
	if (((uintptr_t)buf_ptr & 7u) != 0)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_system: buffer must be 8-byte aligned");
	memset(buf_ptr, 0, size);
	return decode_system(h, o, (unsigned char *)buf_ptr, &size);
}

/* ---- software -------------------------------------------------------------------------------- */

#define SET_PROLOGUE(section, fname, item, arg)                                                    \
	struct tb5_handle *h = ptr;                                                                \
	struct tb5_obj *o = NULL;                                                                  \
	struct enc e;                                                                              \
	TBRW_U32 rc;                                                                               \
	CHECK_HANDLE(h);                                                                           \
	if ((arg) == NULL)                                                                         \
		return tb5_fail(TBRW_INVALID_PARAMETER, fname ": argument is NULL");               \
	rc = writing_obj(h, OBJ_GLOBAL(section), fname, &o);                                       \
	if (rc != VT_SUCCESS)                                                                      \
		return rc;                                                                         \
	if (item != 0 && has_item(o, item))                                                        \
		return tb5_fail(TBRW_SECTION_EXISTS, "%s: " fname " called twice", h->path);       \
	e.len = 0

TBRW_U32 TBRW_set_host(TBRW_PTR ptr, TBRW_HOST *host)
{
	SET_PROLOGUE(TBRW_SOFTWARE_SECTION, "TBRW_set_host", IT_HOST, host);
	NEED_SIZE(host->host_size, TBRW_HOST, "TBRW_HOST");
	if ((rc = sid(h, &host->host_ip_address, &e)) != VT_SUCCESS || (rc = sid(h, &host->host_name, &e)) != VT_SUCCESS)
		return rc;
	e32(&e, host->reserved);
	return put_item(o, IT_HOST, e.buf, e.len);
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
	if ((rc = sid(h, &os->os_name, &e)) != VT_SUCCESS || (rc = sid(h, &os->os_name_extra, &e)) != VT_SUCCESS)
		return rc;
	return put_item(o, IT_OS, e.buf, e.len);
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
	return put_item(o, IT_APP, e.buf, e.len);
}

TBRW_U32 TBRW_set_version_info(TBRW_PTR ptr, TBRW_VERSION_INFO *version_info)
{
	SET_PROLOGUE(TBRW_VERSION_INFO_SECTION, "TBRW_set_version_info", IT_VERSION, version_info);
	NEED_SIZE(version_info->version_info_size, TBRW_VERSION_INFO, "TBRW_VERSION_INFO");
	e32(&e, version_info->sampling_driver_version);
	e32(&e, version_info->bind_version);
	e32(&e, version_info->sample_file_version);
	return put_item(o, IT_VERSION, e.buf, e.len);
}

TBRW_U32 TBRW_set_user_defined_global(TBRW_PTR ptr, TBRW_U32 size_of_data, void *data_ptr)
{
	SET_PROLOGUE(TBRW_USER_DEFINED_GLOBAL_SECTION, "TBRW_set_user_defined_global", IT_USER, data_ptr);
	(void)e;
	return put_item(o, IT_USER, data_ptr, size_of_data);
}

#define GET_PROLOGUE(section, fname, item)                                                         \
	struct tb5_handle *h = ptr;                                                                \
	struct tb5_obj *o = NULL;                                                                  \
	struct dec d;                                                                              \
	TBRW_U32 rc;                                                                               \
	CHECK_HANDLE(h);                                                                           \
	rc = reading_obj(h, OBJ_GLOBAL(section), fname, &o);                                       \
	if (rc != VT_SUCCESS)                                                                      \
		return rc;                                                                         \
	if (!find_item(o, item, &d))                                                               \
		return tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: " fname ": the section holds no such data", \
				h->path)

TBRW_U32 TBRW_get_host(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr, TBRW_U32 *size_buffer_used)
{
	TBRW_HOST v;
	GET_PROLOGUE(TBRW_SOFTWARE_SECTION, "TBRW_get_host", IT_HOST);
	memset(&v, 0, sizeof v);
	v.host_size = sizeof v;
	rid(h, &d, &v.host_ip_address);
	rid(h, &d, &v.host_name);
	v.reserved = d32(&d);
	if (d.bad)
		return bad_item(h, o, "host");
	return give(h, "TBRW_get_host", &v, sizeof v, size_of_buffer, buf_ptr, size_buffer_used);
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
	rid(h, &d, &v.os_name);
	rid(h, &d, &v.os_name_extra);
	if (d.bad)
		return bad_item(h, o, "os");
	return give(h, "TBRW_get_os", &v, sizeof v, size_of_buffer, buf_ptr, size_buffer_used);
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
		return bad_item(h, o, "application");
	return give(h, "TBRW_get_application", &v, sizeof v, size_of_buffer, buf_ptr, size_buffer_used);
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
		return bad_item(h, o, "version");
	return give(h, "TBRW_get_version_info", &v, sizeof v, size_of_buffer, buf_ptr, size_buffer_used);
}

TBRW_U32 TBRW_get_user_defined_global(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr,
				      TBRW_U32 *size_buffer_used)
{
	GET_PROLOGUE(TBRW_USER_DEFINED_GLOBAL_SECTION, "TBRW_get_user_defined_global", IT_USER);
	return give(h, "TBRW_get_user_defined_global", d.p, d.len, size_of_buffer, buf_ptr, size_buffer_used);
}

/* ---- processes, threads, modules --------------------------------------------------------- */

static void enc_pid(struct enc *e, const TBRW_PID *p, uint64_t path, uint64_t name)
{
	e32(e, p->pid_reserved);
	e32(e, p->pid_id);
	e32(e, p->pid_flags);
	e64(e, p->pid_event_when);
	e32(e, p->reserved1);
	e32(e, p->reserved2);
	e64(e, path);
	e64(e, name);
}

TBRW_U32 tb5_put_pid(struct tb5_handle *h, struct tb5_obj *obj, const TBRW_PID *p)
{
	struct enc e = {.len = 0};
	(void)h;
	/* derived records carry ids already */
	enc_pid(&e, p, p->pid_path.soi_uniqueid, p->pid_name.soi_uniqueid);
	return put_item(obj, IT_PID, e.buf, e.len);
}

static void enc_tid(struct enc *e, const TBRW_TID *t, uint64_t name)
{
	e32(e, t->tid_associated_pid);
	e32(e, t->tid_id);
	e32(e, t->tid_flags);
	e64(e, t->tid_event_when);
	e32(e, t->reserved1);
	e32(e, t->reserved2);
	e64(e, name);
}

TBRW_U32 tb5_put_tid(struct tb5_handle *h, struct tb5_obj *obj, const TBRW_TID *t)
{
	struct enc e = {.len = 0};
	(void)h;
	enc_tid(&e, t, t->tid_name.soi_uniqueid);
	return put_item(obj, IT_TID, e.buf, e.len);
}

TBRW_U32 TBRW_add_process(TBRW_PTR ptr, TBRW_PID *process)
{
	uint64_t path, name;
	SET_PROLOGUE(TBRW_PROCESS_THREAD_SECTION, "TBRW_add_process", 0, process);
	NEED_SIZE(process->pid_size, TBRW_PID, "TBRW_PID");
	if ((rc = tb5_string_id(h, process->pid_path.soi_ptr, &path)) != VT_SUCCESS ||
	    (rc = tb5_string_id(h, process->pid_name.soi_ptr, &name)) != VT_SUCCESS)
		return rc;
	enc_pid(&e, process, path, name);
	return put_item(o, IT_PID, e.buf, e.len);
}

TBRW_U32 TBRW_add_thread(TBRW_PTR ptr, TBRW_TID *thread)
{
	uint64_t name;
	SET_PROLOGUE(TBRW_PROCESS_THREAD_SECTION, "TBRW_add_thread", 0, thread);
	NEED_SIZE(thread->tid_size, TBRW_TID, "TBRW_TID");
	if ((rc = tb5_string_id(h, thread->tid_name.soi_ptr, &name)) != VT_SUCCESS)
		return rc;
	enc_tid(&e, thread, name);
	return put_item(o, IT_TID, e.buf, e.len);
}

TBRW_U32 TBRW_add_module(TBRW_PTR ptr, TBRW_MODULE *m)
{
	SET_PROLOGUE(TBRW_MODULE_SECTION, "TBRW_add_module", 0, m);
	NEED_SIZE(m->module_size, TBRW_MODULE, "TBRW_MODULE");
	e32(&e, m->module_reserved);
	e32(&e, m->module_associated_pid);
	e32(&e, m->module_flags);
	e64(&e, m->module_event_when);
	e32(&e, m->module_segment_number);
	e32(&e, m->module_segment_type);
	e32(&e, m->module_code_selector);
	e64(&e, m->module_length);
	e64(&e, m->module_load_address);
	e32(&e, m->reserved_for_legacy);
	e32(&e, m->reserved_for_legacy2);
	e32(&e, m->reserved_for_legacy_flags);
	e32(&e, m->reserved1);
	e64(&e, m->module_unload_tsc);
	if ((rc = sid(h, &m->module_path, &e)) != VT_SUCCESS || (rc = sid(h, &m->module_name, &e)) != VT_SUCCESS ||
	    (rc = sid(h, &m->module_segment_name, &e)) != VT_SUCCESS)
		return rc;
	return put_item(o, IT_MODULE, e.buf, e.len);
}

/* Decodes every item of type want into an array of size elem via fn. */
typedef int decode_fn(struct tb5_handle *h, struct dec *d, void *out);

static TBRW_U32 decode_all(struct tb5_handle *h, struct tb5_obj *o, uint16_t want, size_t elem, decode_fn *fn,
			   void **out, size_t *n_out)
{
	struct items it = {o->meta, o->meta_len, 0};
	struct dec d;
	uint16_t t;
	size_t n = 0, cap = 0;
	unsigned char *arr = NULL;
	int r;

	while ((r = next_item(&it, &t, &d)) == 1) {
		if (t != want)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			unsigned char *na = realloc(arr, cap * elem);
			if (na == NULL) {
				free(arr);
				return tb5_fail(TBRW_NO_MEMORY, "out of memory");
			}
			arr = na;
		}
		memset(arr + n * elem, 0, elem);
		if (!fn(h, &d, arr + n * elem) || d.bad) {
			free(arr);
			return bad_item(h, o, "record");
		}
		n++;
	}
	if (r < 0) {
		free(arr);
		return bad_item(h, o, "record");
	}
	*out = arr;
	*n_out = n;
	return VT_SUCCESS;
}

static int dec_pid(struct tb5_handle *h, struct dec *d, void *out);
static int dec_tid(struct tb5_handle *h, struct dec *d, void *out);
static int dec_module(struct tb5_handle *h, struct dec *d, void *out);
static int dec_desc(struct tb5_handle *h, struct dec *d, void *out);

/* Whether a finished metadata section reads: framing, and the records the API decodes into
 * arrays (processes, threads, modules, data descriptors) with their string ids. */
TBRW_U32 tb5_check_section(struct tb5_handle *h, struct tb5_obj *o)
{
	static const struct {
		uint16_t type;
		size_t size;
		decode_fn *fn;
	} lists[] = {{IT_PID, sizeof(TBRW_PID), dec_pid},
		     {IT_TID, sizeof(TBRW_TID), dec_tid},
		     {IT_MODULE, sizeof(TBRW_MODULE), dec_module},
		     {IT_DESC, sizeof(TBRW_SAMPREC_DESC_ENTRY), dec_desc}};
	TBRW_U32 rc = tb5_check_items(h, o);

	for (size_t i = 0; i < sizeof lists / sizeof lists[0] && rc == VT_SUCCESS; i++) {
		void *arr = NULL;
		size_t n = 0;
		rc = decode_all(h, o, lists[i].type, lists[i].size, lists[i].fn, &arr, &n);
		free(arr);
	}
	return rc;
}

static int dec_pid(struct tb5_handle *h, struct dec *d, void *out)
{
	TBRW_PID *p = out;
	p->pid_size = sizeof *p;
	p->pid_reserved = d32(d);
	p->pid_id = d32(d);
	p->pid_flags = d32(d);
	p->pid_event_when = d64(d);
	p->reserved1 = d32(d);
	p->reserved2 = d32(d);
	rid(h, d, &p->pid_path);
	rid(h, d, &p->pid_name);
	return 1;
}

static int dec_tid(struct tb5_handle *h, struct dec *d, void *out)
{
	TBRW_TID *t = out;
	t->tid_size = sizeof *t;
	t->tid_associated_pid = d32(d);
	t->tid_id = d32(d);
	t->tid_flags = d32(d);
	t->tid_event_when = d64(d);
	t->reserved1 = d32(d);
	t->reserved2 = d32(d);
	rid(h, d, &t->tid_name);
	return 1;
}

static int dec_module(struct tb5_handle *h, struct dec *d, void *out)
{
	TBRW_MODULE *m = out;
	m->module_size = sizeof *m;
	m->module_reserved = d32(d);
	m->module_associated_pid = d32(d);
	m->module_flags = d32(d);
	m->module_event_when = d64(d);
	m->module_segment_number = d32(d);
	m->module_segment_type = d32(d) & 3u;
	m->module_code_selector = d32(d);
	m->module_length = d64(d);
	m->module_load_address = d64(d);
	m->reserved_for_legacy = d32(d);
	m->reserved_for_legacy2 = d32(d);
	m->reserved_for_legacy_flags = d32(d);
	m->reserved1 = d32(d);
	m->module_unload_tsc = d64(d);
	rid(h, d, &m->module_path);
	rid(h, d, &m->module_name);
	rid(h, d, &m->module_segment_name);
	return 1;
}

TBRW_U32 tb5_load_modules(struct tb5_handle *h)
{
	struct tb5_obj *o = NULL;
	void *arr = NULL;
	size_t n = 0;
	TBRW_U32 rc;

	if (h->modules_loaded)
		return VT_SUCCESS;
	o = tb5_obj_find(h, OBJ_GLOBAL(TBRW_MODULE_SECTION));
	if (o == NULL || o->state != OBJ_DONE)
		return tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: the file has no module section", h->path);
	rc = tb5_obj_load(h, o);
	if (rc == VT_SUCCESS)
		rc = decode_all(h, o, IT_MODULE, sizeof(TBRW_MODULE), dec_module, &arr, &n);
	if (rc != VT_SUCCESS)
		return rc;
	free(h->modules);
	h->modules = arr;
	h->n_modules = n;
	h->modules_loaded = 1;
	return VT_SUCCESS;
}

void tb5_pt_free(struct tb5_pt *pt)
{
	free(pt->pids);
	free(pt->tids);
	memset(pt, 0, sizeof *pt);
}

TBRW_U32 tb5_load_pt(struct tb5_handle *h)
{
	struct tb5_obj *o = NULL;
	void *pids = NULL, *tids = NULL;
	size_t np = 0, nt = 0;
	TBRW_U32 rc;

	if (h->pt.loaded)
		return VT_SUCCESS;
	o = tb5_obj_find(h, OBJ_GLOBAL(TBRW_PROCESS_THREAD_SECTION));
	if (o == NULL || o->state != OBJ_DONE)
		return tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: the file has no process/thread section (TBRW_dobind "
							"derives one)",
				h->path);
	rc = tb5_obj_load(h, o);
	if (rc == VT_SUCCESS)
		rc = decode_all(h, o, IT_PID, sizeof(TBRW_PID), dec_pid, &pids, &np);
	if (rc != VT_SUCCESS)
		return rc;
	rc = decode_all(h, o, IT_TID, sizeof(TBRW_TID), dec_tid, &tids, &nt);
	if (rc != VT_SUCCESS) {
		free(pids);
		return rc;
	}
	tb5_pt_free(&h->pt);
	h->pt.pids = pids;
	h->pt.n_pids = np;
	h->pt.tids = tids;
	h->pt.n_tids = nt;
	h->pt.loaded = 1;
	return VT_SUCCESS;
}

/* Enumerates an array in batches with the 5.9 protocol. */
typedef TBRW_U32 array_cb(void *fn, void *data, TBRW_U32 size, TBRW_U32 n, void *user);
static TBRW_U32 enumerate_array(void *base, size_t elem, size_t n, TBRW_U64 start, array_cb *call, void *fn,
				void *user, const char *what)
{
	const size_t batch = 4096;

	for (size_t i = (size_t)(start < n ? start : n); i < n;) {
		size_t k = n - i < batch ? n - i : batch;
		TBRW_U32 r = call(fn, (unsigned char *)base + i * elem, (TBRW_U32)(k * elem), (TBRW_U32)k, user);
		if (r == FALSE)
			return VT_SUCCESS;
		if (r != TRUE)
			return tb5_callback_error(r, what);
		i += k;
	}
	return VT_SUCCESS;
}

static TBRW_U32 call_pid(void *fn, void *data, TBRW_U32 size, TBRW_U32 n, void *user)
{
	return ((TBRW_PID_CALLBACK *)fn)(data, size, n, user);
}
static TBRW_U32 call_tid(void *fn, void *data, TBRW_U32 size, TBRW_U32 n, void *user)
{
	return ((TBRW_TID_CALLBACK *)fn)(data, size, n, user);
}
static TBRW_U32 call_module(void *fn, void *data, TBRW_U32 size, TBRW_U32 n, void *user)
{
	return ((TBRW_MODULE_CALLBACK *)fn)(data, size, n, user);
}

TBRW_U32 TBRW_enumerate_processes(TBRW_PTR ptr, TBRW_PID_CALLBACK *callback_func, void *user_ptr,
				  TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_processes: no callback");
	rc = tb5_load_pt(h);
	if (rc != VT_SUCCESS)
		return rc;
	return enumerate_array(h->pt.pids, sizeof(TBRW_PID), h->pt.n_pids, start_index, call_pid,
			       (void *)callback_func, user_ptr, "TBRW_enumerate_processes");
}

TBRW_U32 TBRW_enumerate_threads(TBRW_PTR ptr, TBRW_TID_CALLBACK *callback_func, void *user_ptr, TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_threads: no callback");
	rc = tb5_load_pt(h);
	if (rc != VT_SUCCESS)
		return rc;
	return enumerate_array(h->pt.tids, sizeof(TBRW_TID), h->pt.n_tids, start_index, call_tid,
			       (void *)callback_func, user_ptr, "TBRW_enumerate_threads");
}

TBRW_U32 TBRW_enumerate_modules(TBRW_PTR ptr, TBRW_MODULE_CALLBACK *callback_func, void *user_ptr,
				TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_modules: no callback");
	rc = tb5_load_modules(h);
	if (rc != VT_SUCCESS)
		return rc;
	return enumerate_array(h->modules, sizeof(TBRW_MODULE), h->n_modules, start_index, call_module,
			       (void *)callback_func, user_ptr, "TBRW_enumerate_modules");
}

TBRW_U32 TBRW_get_one_module(TBRW_PTR ptr, TBRW_U64 module_index, const TBRW_MODULE **p_module)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (p_module == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_one_module: p_module is NULL");
	rc = tb5_load_modules(h);
	if (rc != VT_SUCCESS)
		return rc;
	if (module_index >= h->n_modules)
		return tb5_fail(TBRW_INDEX_OUT_OF_RANGE, "%s: module index %llu, the file has %zu modules", h->path,
				(unsigned long long)module_index, h->n_modules);
	h->one_module = h->modules[module_index];
	*p_module = &h->one_module;
	return VT_SUCCESS;
}

TBRW_U32 TBRW_get_one_pid(TBRW_PTR ptr, TBRW_U64 pid_index, const TBRW_PID **p_pid)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (p_pid == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_one_pid: p_pid is NULL");
	rc = tb5_load_pt(h);
	if (rc != VT_SUCCESS)
		return rc;
	if (pid_index >= h->pt.n_pids)
		return tb5_fail(TBRW_INDEX_OUT_OF_RANGE, "%s: process index %llu, the file has %zu processes", h->path,
				(unsigned long long)pid_index, h->pt.n_pids);
	h->one_pid = h->pt.pids[pid_index];
	*p_pid = &h->one_pid;
	return VT_SUCCESS;
}

TBRW_U32 TBRW_get_one_tid(TBRW_PTR ptr, TBRW_U64 tid_index, const TBRW_TID **p_tid)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (p_tid == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_one_tid: p_tid is NULL");
	rc = tb5_load_pt(h);
	if (rc != VT_SUCCESS)
		return rc;
	if (tid_index >= h->pt.n_tids)
		return tb5_fail(TBRW_INDEX_OUT_OF_RANGE, "%s: thread index %llu, the file has %zu threads", h->path,
				(unsigned long long)tid_index, h->pt.n_tids);
	h->one_tid = h->pt.tids[tid_index];
	*p_tid = &h->one_tid;
	return VT_SUCCESS;
}

/* ---- streams ------------------------------------------------------------------------------- */

TBRW_U32 TBRW_get_number_data_streams(TBRW_PTR ptr, TBRW_U32 *numStreams)
{
	struct tb5_handle *h = ptr;

	CHECK_HANDLE(h);
	if (numStreams == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_number_data_streams: numStreams is NULL");
	pthread_mutex_lock(&h->lock);
	*numStreams = h->n_streams;
	pthread_mutex_unlock(&h->lock);
	return VT_SUCCESS;
}

TBRW_U32 TBRW_writing_stream(TBRW_PTR ptr, TBRW_U32 stream)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	if (!h->writable)
		return tb5_fail(TBRW_READ_ONLY, "%s: opened for reading only", h->path);
	pthread_mutex_lock(&h->lock);
	if (stream > h->n_streams || stream >= TB5_MAX_STREAMS) {
		rc = tb5_fail(TBRW_INVALID_STREAM, "%s: TBRW_writing_stream(%u): the file has %u streams; the next one "
						   "is %u",
			      h->path, stream, h->n_streams, h->n_streams);
	} else if ((st = tb5_stream_at(h, stream, 1)) == NULL) {
		rc = tb5_fail(TBRW_NO_MEMORY, "out of memory");
	} else if (stream_exists(h, stream)) {
		rc = tb5_fail(TBRW_SECTION_EXISTS, "%s: stream %u already exists", h->path, stream);
	} else if (st->writing || st->readers) {
		rc = tb5_fail(TBRW_SECTION_BUSY, "%s: stream %u is already open", h->path, stream);
	} else {
		st->writing = 1;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

TBRW_U32 TBRW_reading_stream(TBRW_PTR ptr, TBRW_U32 stream)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	pthread_mutex_lock(&h->lock);
	st = tb5_stream_at(h, stream, 0);
	if (stream >= h->n_streams)
		rc = tb5_fail(TBRW_INVALID_STREAM, "%s: stream %u does not exist (the file has %u)", h->path, stream,
			      h->n_streams);
	else if (st == NULL || !stream_exists(h, stream))
		rc = tb5_fail(TBRW_STREAM_NOT_FOUND, "%s: stream %u is not complete", h->path, stream);
	else if (st->writing)
		rc = tb5_fail(TBRW_SECTION_BUSY, "%s: stream %u is being written", h->path, stream);
	else
		st->readers++;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

TBRW_U32 TBRW_done_stream(TBRW_PTR ptr, TBRW_U32 stream)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	pthread_mutex_lock(&h->lock);
	st = tb5_stream_at(h, stream, 0);
	if (st == NULL || (!st->writing && st->readers == 0)) {
		rc = tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_done_stream(%u) without TBRW_writing_stream or "
						      "TBRW_reading_stream",
			      h->path, stream);
	} else if (st->readers > 0 && !st->writing) {
		st->readers--;
	} else {
		for (int k = 0; k <= (int)TBRW_STREAM_INFO_SECTION && rc == VT_SUCCESS; k++) {
			struct tb5_obj *o = tb5_obj_find(h, OBJ_STREAM_SEC(stream, k));
			if (o != NULL && (o->state == OBJ_WRITING || o->readers > 0))
				rc = tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: stream %u: the %s section is still open",
					      h->path, stream, stream_names[k]);
		}
		static const TBRW_STREAM_SECTION_IDENTIFIER required[] = {TBRW_STREAM_INFO_SECTION,
									   TBRW_DATA_DESCRIPTION_SECTION};
		for (size_t k = 0; k < 2 && rc == VT_SUCCESS; k++) {
			struct tb5_obj *o = tb5_obj_find(h, OBJ_STREAM_SEC(stream, required[k]));
			if (o == NULL || o->state != OBJ_DONE)
				rc = tb5_fail(TBRW_VALIDATION_FAILED, "%s: stream %u has no %s section", h->path, stream,
					      stream_names[required[k]]);
		}
		if (rc == VT_SUCCESS) {
			st->writing = 0;
			st->exists = 1;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

static const char *sec_name(TBRW_STREAM_SECTION_IDENTIFIER s)
{
	return stream_names[s];
}

TBRW_U32 TBRW_writing_stream_section(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	if (!stream_sec_ok(section))
		return tb5_fail(TBRW_INVALID_SECTION, "TBRW_writing_stream_section: %d is not a stream section identifier",
				(int)section);
	if (!h->writable)
		return tb5_fail(TBRW_READ_ONLY, "%s: opened for reading only", h->path);
	pthread_mutex_lock(&h->lock);
	st = tb5_stream_at(h, stream, 0);
	if (stream >= h->n_streams || st == NULL)
		rc = tb5_fail(TBRW_INVALID_STREAM, "%s: stream %u does not exist (call TBRW_writing_stream first)",
			      h->path, stream);
	else if (!st->writing)
		rc = tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: stream %u is not open for writing", h->path, stream);
	else if ((o = tb5_obj_get(h, OBJ_STREAM_SEC(stream, section))) == NULL)
		rc = tb5_fail(TBRW_NO_MEMORY, "out of memory");
	else if (o->state == OBJ_DONE)
		rc = tb5_fail(TBRW_SECTION_EXISTS, "%s: stream %u already has a %s section", h->path, stream,
			      sec_name(section));
	else if (o->state == OBJ_WRITING)
		rc = tb5_fail(TBRW_SECTION_BUSY, "%s: stream %u: the %s section is already open", h->path, stream,
			      sec_name(section));
	else if (section == TBRW_DATA_SECTION && !st->desc_known)
		rc = tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: stream %u: write the data description section before the "
						      "data section",
			      h->path, stream);
	else {
		o->state = OBJ_WRITING;
		if (section == TBRW_DATA_SECTION)
			st->data_obj = o;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

TBRW_U32 TBRW_reading_stream_section(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	if (!stream_sec_ok(section))
		return tb5_fail(TBRW_INVALID_SECTION, "TBRW_reading_stream_section: %d is not a stream section identifier",
				(int)section);
	pthread_mutex_lock(&h->lock);
	st = tb5_stream_at(h, stream, 0);
	if (stream >= h->n_streams || st == NULL)
		rc = tb5_fail(TBRW_INVALID_STREAM, "%s: stream %u does not exist (the file has %u)", h->path, stream,
			      h->n_streams);
	else if (st->readers == 0)
		rc = tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: stream %u is not open for reading (call "
						      "TBRW_reading_stream first)",
			      h->path, stream);
	else if ((o = tb5_obj_find(h, OBJ_STREAM_SEC(stream, section))) == NULL || o->state == OBJ_ABSENT)
		rc = tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: stream %u has no %s section", h->path, stream,
			      sec_name(section));
	else if (o->state == OBJ_WRITING)
		rc = tb5_fail(TBRW_SECTION_BUSY, "%s: stream %u: the %s section is being written", h->path, stream,
			      sec_name(section));
	else
		o->readers++;
	pthread_mutex_unlock(&h->lock);
	if (rc == VT_SUCCESS && section != TBRW_DATA_SECTION)
		rc = tb5_obj_load(h, o);
	if (rc == VT_SUCCESS)
		rc = tb5_stream_layout(h, stream);
	if (rc != VT_SUCCESS && o != NULL && o->readers > 0 && tb5_obj_find(h, OBJ_STREAM_SEC(stream, section)) == o) {
		pthread_mutex_lock(&h->lock);
		o->readers--;
		pthread_mutex_unlock(&h->lock);
	}
	return rc;
}

static TBRW_U32 flush_data(struct tb5_handle *h, struct tb5_stream *st, struct tb5_obj *o);

TBRW_U32 TBRW_done_stream_section(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (!stream_sec_ok(section))
		return tb5_fail(TBRW_INVALID_SECTION, "TBRW_done_stream_section: %d is not a stream section identifier",
				(int)section);
	pthread_mutex_lock(&h->lock);
	st = tb5_stream_at(h, stream, 0);
	o = st != NULL ? tb5_obj_find(h, OBJ_STREAM_SEC(stream, section)) : NULL;
	if (o != NULL && o->readers > 0) {
		o->readers--;
		pthread_mutex_unlock(&h->lock);
		return VT_SUCCESS;
	}
	pthread_mutex_unlock(&h->lock);
	if (o == NULL || o->state != OBJ_WRITING)
		return tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_done_stream_section(%u, %s) without its "
							"TBRW_writing_stream_section or TBRW_reading_stream_section",
				h->path, stream, sec_name(section));
	switch (section) {
	case TBRW_STREAM_INFO_SECTION:
		if (!has_item(o, IT_STREAM_INFO))
			return tb5_fail(TBRW_VALIDATION_FAILED, "%s: stream %u: the stream information section needs "
								"TBRW_set_stream_info",
					h->path, stream);
		break;
	case TBRW_DATA_DESCRIPTION_SECTION:
		if (!has_item(o, IT_DESC))
			return tb5_fail(TBRW_VALIDATION_FAILED, "%s: stream %u: the data description needs at least one "
								"entry",
					h->path, stream);
		break;
	case TBRW_USER_DEFINED_STREAM_SECTION:
		if (!has_item(o, IT_USER))
			return tb5_fail(TBRW_VALIDATION_FAILED, "%s: stream %u: the user-defined section needs "
								"TBRW_set_user_defined_stream",
					h->path, stream);
		break;
	case TBRW_DATA_SECTION:
		if (st->partial_len != 0)
			return tb5_fail(TBRW_VALIDATION_FAILED, "%s: stream %u: the last record is incomplete (%u of %u "
								"bytes)",
					h->path, stream, st->partial_len, st->record_size);
		rc = flush_data(h, st, o);
		if (rc != VT_SUCCESS)
			return rc;
		rc = tb5_write_chunk(h, o, CK_END, o->id, o->total, 0, NULL, 0);
		if (rc == VT_SUCCESS) {
			free(o->buf);
			o->buf = NULL;
			o->buf_len = o->buf_cap = 0;
			o->state = OBJ_DONE;
			st->data_obj = NULL;
		}
		return rc;
	default:
		break;
	}
	rc = tb5_obj_finish(h, o);
	if (rc == VT_SUCCESS && section == TBRW_DATA_DESCRIPTION_SECTION) {
		st->desc_known = 0;
		rc = tb5_stream_layout(h, stream);
		if (rc != VT_SUCCESS) {
			/* the section stays, but the layout error is the caller's */
			return rc;
		}
	}
	return rc;
}

/* Stream section object open for writing. */
static TBRW_U32 stream_writing_obj(struct tb5_handle *h, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section,
				   const char *what, struct tb5_obj **out)
{
	if (stream >= TB5_MAX_STREAMS || tb5_stream_at(h, stream, 0) == NULL)
		return tb5_fail(TBRW_INVALID_STREAM, "%s: %s: stream %u does not exist", h->path, what, stream);
	return writing_obj(h, OBJ_STREAM_SEC(stream, section), what, out);
}

static TBRW_U32 stream_reading_obj(struct tb5_handle *h, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section,
				   const char *what, struct tb5_obj **out)
{
	if (stream >= TB5_MAX_STREAMS || tb5_stream_at(h, stream, 0) == NULL)
		return tb5_fail(TBRW_INVALID_STREAM, "%s: %s: stream %u does not exist", h->path, what, stream);
	return reading_obj(h, OBJ_STREAM_SEC(stream, section), what, out);
}

TBRW_U32 TBRW_set_stream_info(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_INFO *si)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct enc e = {.len = 0};
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (si == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_set_stream_info: stream_info is NULL");
	rc = stream_writing_obj(h, stream, TBRW_STREAM_INFO_SECTION, "TBRW_set_stream_info", &o);
	if (rc != VT_SUCCESS)
		return rc;
	if (has_item(o, IT_STREAM_INFO))
		return tb5_fail(TBRW_SECTION_EXISTS, "%s: TBRW_set_stream_info called twice for stream %u", h->path,
				stream);
	NEED_SIZE(si->stream_info_size, TBRW_STREAM_INFO, "TBRW_STREAM_INFO");
	e32(&e, si->sampling_duration);
	e32(&e, si->stream_type);
	e32(&e, si->sampling_interval);
	e32(&e, si->sampling_start_time.dwLowDateTime);
	e32(&e, si->sampling_start_time.dwHighDateTime);
	e32(&e, si->sampling_end_time.dwLowDateTime);
	e32(&e, si->sampling_end_time.dwHighDateTime);
	if ((rc = sid(h, &si->command_line, &e)) != VT_SUCCESS || (rc = sid(h, &si->cpu_mask, &e)) != VT_SUCCESS ||
	    (rc = sid(h, &si->comment, &e)) != VT_SUCCESS)
		return rc;
	return put_item(o, IT_STREAM_INFO, e.buf, e.len);
}

TBRW_U32 TBRW_get_stream_info(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_buffer, void *buf_ptr,
			      TBRW_U32 *size_buffer_used)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct dec d;
	TBRW_STREAM_INFO v;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	rc = stream_reading_obj(h, stream, TBRW_STREAM_INFO_SECTION, "TBRW_get_stream_info", &o);
	if (rc != VT_SUCCESS)
		return rc;
	if (!find_item(o, IT_STREAM_INFO, &d))
		return bad_item(h, o, "stream information");
	memset(&v, 0, sizeof v);
	v.stream_info_size = sizeof v;
	v.sampling_duration = d32(&d);
	v.stream_type = d32(&d);
	v.sampling_interval = d32(&d);
	v.sampling_start_time.dwLowDateTime = d32(&d);
	v.sampling_start_time.dwHighDateTime = d32(&d);
	v.sampling_end_time.dwLowDateTime = d32(&d);
	v.sampling_end_time.dwHighDateTime = d32(&d);
	rid(h, &d, &v.command_line);
	rid(h, &d, &v.cpu_mask);
	rid(h, &d, &v.comment);
	if (d.bad)
		return bad_item(h, o, "stream information");
	return give(h, "TBRW_get_stream_info", &v, sizeof v, size_of_buffer, buf_ptr, size_buffer_used);
}

TBRW_U32 TBRW_set_user_defined_stream(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_data, void *data_ptr)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (data_ptr == NULL && size_of_data != 0)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_set_user_defined_stream: data is NULL");
	rc = stream_writing_obj(h, stream, TBRW_USER_DEFINED_STREAM_SECTION, "TBRW_set_user_defined_stream", &o);
	if (rc != VT_SUCCESS)
		return rc;
	if (has_item(o, IT_USER))
		return tb5_fail(TBRW_SECTION_EXISTS, "%s: TBRW_set_user_defined_stream called twice for stream %u",
				h->path, stream);
	return put_item(o, IT_USER, data_ptr, size_of_data);
}

TBRW_U32 TBRW_get_user_defined_stream(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_buffer, void *buf_ptr,
				      TBRW_U32 *size_buffer_used)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct dec d;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	rc = stream_reading_obj(h, stream, TBRW_USER_DEFINED_STREAM_SECTION, "TBRW_get_user_defined_stream", &o);
	if (rc != VT_SUCCESS)
		return rc;
	if (!find_item(o, IT_USER, &d))
		return bad_item(h, o, "user-defined");
	return give(h, "TBRW_get_user_defined_stream", d.p, d.len, size_of_buffer, buf_ptr, size_buffer_used);
}

/* ---- events ---------------------------------------------------------------------------------- */

TBRW_U32 TBRW_add_event(TBRW_PTR ptr, TBRW_U32 stream, TBRW_EVENT *ev)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct enc e = {.len = 0};
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (ev == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_add_event: event is NULL");
	rc = stream_writing_obj(h, stream, TBRW_EVENT_DESCRIPTION_SECTION, "TBRW_add_event", &o);
	if (rc != VT_SUCCESS)
		return rc;
	NEED_SIZE(ev->event_size, TBRW_EVENT, "TBRW_EVENT");
	if (ev->event_num_details > 0 && ev->event_detail_array == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "%s: event %u has details but no event_detail_array", h->path,
				ev->event_id);
	if (ev->event_num_details > 65536)
		return tb5_fail(TBRW_TOO_BIG, "%s: event %u has %u details", h->path, ev->event_id, ev->event_num_details);
	e32(&e, ev->event_id);
	e32(&e, ev->event_num_details);
	e32(&e, ev->event_flags);
	e64(&e, ev->event_sav);
	if ((rc = sid(h, &ev->event_name, &e)) != VT_SUCCESS || (rc = sid(h, &ev->event_arch_name, &e)) != VT_SUCCESS)
		return rc;
	rc = put_item(o, IT_EVENT, e.buf, e.len);
	for (TBRW_U32 i = 0; i < ev->event_num_details && rc == VT_SUCCESS; i++) {
		const TBRW_EVENT_DETAIL *x = &ev->event_detail_array[i];
		NEED_SIZE(x->detail_size, TBRW_EVENT_DETAIL, "TBRW_EVENT_DETAIL");
		e.len = 0;
		e16(&e, x->detail_access_size);
		e16(&e, (uint32_t)x->detail_method | ((uint32_t)x->detail_access << 8));
		e64(&e, x->detail_address);
		e64(&e, x->detail_value);
		e16(&e, (uint32_t)x->legacy_command | ((uint32_t)x->reserved1 << 8));
		e16(&e, x->reserved2);
		e32(&e, x->reserved3);
		rc = put_item(o, IT_DETAIL, e.buf, e.len);
	}
	return rc;
}

TBRW_U32 TBRW_enumerate_events(TBRW_PTR ptr, TBRW_U32 stream, TBRW_EVENT_CALLBACK *callback_func, void *user_ptr,
			       TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct items it;
	struct dec d;
	uint16_t t;
	size_t n_ev = 0, n_det = 0, ei = 0, di = 0;
	TBRW_EVENT *evs;
	TBRW_EVENT_DETAIL *dets;
	uint64_t det_left = 0;
	TBRW_U32 rc;
	int r;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_events: no callback");
	rc = stream_reading_obj(h, stream, TBRW_EVENT_DESCRIPTION_SECTION, "TBRW_enumerate_events", &o);
	if (rc != VT_SUCCESS)
		return rc;
	it = (struct items){o->meta, o->meta_len, 0};
	while ((r = next_item(&it, &t, &d)) == 1) {
		if (t == IT_EVENT)
			n_ev++;
		else if (t == IT_DETAIL)
			n_det++;
		else
			return bad_item(h, o, "event");
	}
	if (r < 0)
		return bad_item(h, o, "event");
	evs = calloc(n_ev * sizeof *evs + n_det * sizeof *dets + 1, 1);
	if (evs == NULL)
		return tb5_fail(TBRW_NO_MEMORY, "out of memory");
	dets = (TBRW_EVENT_DETAIL *)(void *)(evs + n_ev);
	it.at = 0;
	while (next_item(&it, &t, &d) == 1) {
		if (t == IT_EVENT) {
			if (det_left != 0)
				break;
			TBRW_EVENT *ev = &evs[ei++];
			ev->event_size = sizeof *ev;
			ev->event_id = d32(&d);
			ev->event_num_details = d32(&d);
			ev->event_flags = d32(&d);
			ev->event_sav = d64(&d);
			rid(h, &d, &ev->event_name);
			rid(h, &d, &ev->event_arch_name);
			ev->event_detail_array = ev->event_num_details ? &dets[di] : NULL;
			det_left = ev->event_num_details;
			if (det_left > n_det - di)
				d.bad = 1;
		} else {
			if (det_left == 0)
				d.bad = 1;
			else {
				TBRW_EVENT_DETAIL *x = &dets[di++];
				uint32_t v;
				det_left--;
				x->detail_size = sizeof *x;
				x->detail_access_size = (TBRW_U16)d16(&d);
				v = d16(&d);
				x->detail_method = (TBRW_U8)v;
				x->detail_access = (TBRW_U8)(v >> 8);
				x->detail_address = d64(&d);
				x->detail_value = d64(&d);
				v = d16(&d);
				x->legacy_command = (TBRW_U8)v;
				x->reserved1 = (TBRW_U8)(v >> 8);
				x->reserved2 = (TBRW_U16)d16(&d);
				x->reserved3 = d32(&d);
			}
		}
		if (d.bad) {
			free(evs);
			return bad_item(h, o, "event");
		}
	}
	if (det_left != 0 || ei != n_ev) {
		free(evs);
		return bad_item(h, o, "event");
	}
	rc = VT_SUCCESS;
	if (start_index < n_ev) {
		r = (int)callback_func(evs + start_index, (TBRW_U32)((n_ev - start_index) * sizeof *evs),
				       (TBRW_U32)(n_ev - start_index), user_ptr);
		if ((TBRW_U32)r != TRUE && (TBRW_U32)r != FALSE)
			rc = tb5_callback_error((TBRW_U32)r, "TBRW_enumerate_events");
	}
	free(evs);
	return rc;
}

/* ---- data descriptors -------------------------------------------------------------------- */

TBRW_U32 TBRW_add_data_descriptor_entry(TBRW_PTR ptr, TBRW_U32 stream, TBRW_SAMPREC_DESC_ENTRY *x)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct enc e = {.len = 0};
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (x == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_add_data_descriptor_entry: entry is NULL");
	rc = stream_writing_obj(h, stream, TBRW_DATA_DESCRIPTION_SECTION, "TBRW_add_data_descriptor_entry", &o);
	if (rc != VT_SUCCESS)
		return rc;
	NEED_SIZE(x->desc_size, TBRW_SAMPREC_DESC_ENTRY, "TBRW_SAMPREC_DESC_ENTRY");
	if (x->desc_type == ST_LEGACY_SAMPLE_RECORD && stream != 0)
		return tb5_fail(TBRW_LEGACY_RECORD_IN_STREAM, "%s: stream %u: legacy sample records "
							      "(ST_LEGACY_SAMPLE_RECORD) belong in stream 0 only",
				h->path, stream);
	if (x->desc_type >= ST_RESERVED_START)
		return tb5_fail(TBRW_INVALID_PARAMETER, "%s: stream %u: descriptor type 0x%x is reserved", h->path,
				stream, x->desc_type);
	if (x->desc_data_size == 0 || x->desc_data_size > TB5_MAX_RECORD ||
	    (uint64_t)x->desc_offset + x->desc_data_size > TB5_MAX_RECORD)
		return tb5_fail(TBRW_RECORD_SIZE_MISMATCH, "%s: stream %u: descriptor entry of %u bytes at offset %u "
							   "(records are 1 byte to 16 MiB)",
				h->path, stream, x->desc_data_size, x->desc_offset);
	e32(&e, x->desc_offset);
	e16(&e, x->desc_type);
	e16(&e, x->desc_subtype);
	e32(&e, x->desc_data_size);
	e64(&e, x->desc_access_offset);
	e16(&e, (uint32_t)x->desc_access_type | ((uint32_t)x->desc_access_method << 8));
	e16(&e, (uint32_t)x->desc_sample_flag | ((uint32_t)x->reserved0 << 8));
	e32(&e, x->reserved1);
	if ((rc = sid(h, &x->desc_name, &e)) != VT_SUCCESS)
		return rc;
	return put_item(o, IT_DESC, e.buf, e.len);
}

static int dec_desc(struct tb5_handle *h, struct dec *d, void *out)
{
	TBRW_SAMPREC_DESC_ENTRY *x = out;
	uint32_t v;
	x->desc_size = sizeof *x;
	x->desc_offset = d32(d);
	x->desc_type = (TBRW_U16)d16(d);
	x->desc_subtype = (TBRW_U16)d16(d);
	x->desc_data_size = d32(d);
	x->desc_access_offset = d64(d);
	v = d16(d);
	x->desc_access_type = (TBRW_U8)v;
	x->desc_access_method = (TBRW_U8)(v >> 8);
	v = d16(d);
	x->desc_sample_flag = (TBRW_U8)v;
	x->reserved0 = (TBRW_U8)(v >> 8);
	x->reserved1 = d32(d);
	rid(h, d, &x->desc_name);
	return 1;
}

/*
 * The offsets records are laid out with. Chapter 6 of the TBRW guide gives every entry offset
 * 0 and adds each piece with its own TBRW_add_data call: such entries (more than one, all at
 * 0) lie one after another, in the order they were added. Returns whether it rewrote them.
 */
static int desc_effective_offsets(TBRW_SAMPREC_DESC_ENTRY *x, size_t n)
{
	uint64_t at = 0;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (x[i].desc_offset != 0)
			return 0;
	for (size_t i = 0; i < n; i++) {
		x[i].desc_offset = at > UINT32_MAX ? UINT32_MAX : (TBRW_U32)at;
		at += x[i].desc_data_size;
	}
	return 1;
}

static TBRW_U32 call_desc(void *fn, void *data, TBRW_U32 size, TBRW_U32 n, void *user)
{
	return ((TBRW_DATA_DESC_CALLBACK *)fn)(data, size, n, user);
}

TBRW_U32 TBRW_enumerate_data_descriptor_entries(TBRW_PTR ptr, TBRW_U32 stream, TBRW_DATA_DESC_CALLBACK *callback_func,
						void *user_ptr)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	void *arr = NULL;
	size_t n = 0;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_data_descriptor_entries: no callback");
	rc = stream_reading_obj(h, stream, TBRW_DATA_DESCRIPTION_SECTION, "TBRW_enumerate_data_descriptor_entries", &o);
	if (rc == VT_SUCCESS)
		rc = decode_all(h, o, IT_DESC, sizeof(TBRW_SAMPREC_DESC_ENTRY), dec_desc, &arr, &n);
	if (rc != VT_SUCCESS)
		return rc;
	/* the offsets the records really have, as the data enumeration lays them out */
	desc_effective_offsets(arr, n);
	rc = enumerate_array(arr, sizeof(TBRW_SAMPREC_DESC_ENTRY), n, 0, call_desc, (void *)callback_func, user_ptr,
			     "TBRW_enumerate_data_descriptor_entries");
	free(arr);
	return rc;
}

/* Works out a stream's record layout from its data description. */
TBRW_U32 tb5_stream_layout(struct tb5_handle *h, uint32_t stream)
{
	struct tb5_stream *st = tb5_stream_at(h, stream, 0);
	struct tb5_obj *o = NULL;
	TBRW_SAMPREC_DESC_ENTRY *x = NULL;
	size_t n = 0;
	uint64_t size = 0, sum = 0;
	TBRW_U32 rc;

	if (st == NULL)
		return tb5_fail(TBRW_INVALID_STREAM, "%s: stream %u does not exist", h->path, stream);
	if (st->desc_known)
		return VT_SUCCESS;
	o = tb5_obj_find(h, OBJ_STREAM_SEC(stream, TBRW_DATA_DESCRIPTION_SECTION));
	if (o == NULL || o->state != OBJ_DONE)
		return tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: stream %u has no data description section", h->path, stream);
	rc = tb5_obj_load(h, o);
	if (rc == VT_SUCCESS)
		rc = decode_all(h, o, IT_DESC, sizeof *x, dec_desc, (void **)&x, &n);
	if (rc != VT_SUCCESS)
		return rc;
	if (n == 0) {
		free(x);
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: stream %u: empty data description (at byte offset %llu)", h->path,
				stream, tb5_obj_offset(o));
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t end = (uint64_t)x[i].desc_offset + x[i].desc_data_size;
		if (x[i].desc_data_size == 0 || end > TB5_MAX_RECORD) {
			free(x);
			return tb5_fail(TBRW_FILE_CORRUPT, "%s: stream %u: data descriptor entry %zu (section at byte "
							   "offset %llu) is out of range",
					h->path, stream, i, tb5_obj_offset(o));
		}
		if (end > size)
			size = end;
		sum += x[i].desc_data_size;
	}
	free(st->piece_size);
	st->piece_size = NULL;
	st->pc_offset = st->ts_offset = UINT32_MAX;
	if (desc_effective_offsets(x, n)) {
		/* chapter 6 style: each entry is its own piece, laid out one after another */
		if (sum > TB5_MAX_RECORD) {
			free(x);
			return tb5_fail(TBRW_FILE_CORRUPT, "%s: stream %u: records exceed 16 MiB (data description at "
							   "byte offset %llu)",
					h->path, stream, tb5_obj_offset(o));
		}
		st->piece_size = malloc(n * sizeof *st->piece_size);
		if (st->piece_size == NULL) {
			free(x);
			return tb5_fail(TBRW_NO_MEMORY, "out of memory");
		}
		for (size_t i = 0; i < n; i++)
			st->piece_size[i] = x[i].desc_data_size;
		size = sum;
	}
	for (size_t i = 0; i < n; i++) {
		if (x[i].desc_type == ST_LEGACY_SAMPLE_RECORD && x[i].desc_data_size >= sizeof(TBRW_SampleRecordPC) &&
		    st->pc_offset == UINT32_MAX)
			st->pc_offset = x[i].desc_offset;
		if (x[i].desc_type == ST_TIME_STAMP && x[i].desc_data_size == 8 && st->ts_offset == UINT32_MAX)
			st->ts_offset = x[i].desc_offset;
	}
	st->n_desc = (uint32_t)n;
	st->record_size = (uint32_t)size;
	st->desc_known = 1;
	free(x);
	return VT_SUCCESS;
}

/* ---- data ------------------------------------------------------------------------------------- */

static size_t chunk_records(uint32_t rec)
{
	size_t n = TB5_CHUNK_TARGET / rec;
	return n ? n : 1;
}

static TBRW_U32 flush_data(struct tb5_handle *h, struct tb5_stream *st, struct tb5_obj *o)
{
	TBRW_U32 rc;
	size_t n = 0;

	if (o->buf_len == 0)
		return VT_SUCCESS;
	n = o->buf_len / st->record_size;
	rc = tb5_write_chunk(h, o, CK_DATA, o->id, o->total, (uint32_t)n, o->buf, o->buf_len);
	if (rc == VT_SUCCESS) {
		o->total += n;
		o->buf_len = 0;
	}
	return rc;
}

/* Appends whole records. */
static TBRW_U32 append_records(struct tb5_handle *h, struct tb5_stream *st, struct tb5_obj *o, const unsigned char *p,
			       size_t len)
{
	size_t chunk_bytes = chunk_records(st->record_size) * st->record_size;
	TBRW_U32 rc;

	if (o->buf_cap < chunk_bytes) {
		unsigned char *nb = realloc(o->buf, chunk_bytes);
		if (nb == NULL)
			return tb5_fail(TBRW_NO_MEMORY, "out of memory");
		o->buf = nb;
		o->buf_cap = chunk_bytes;
	}
	while (len > 0) {
		if (o->buf_len == 0 && len >= chunk_bytes) {
			size_t n = chunk_bytes / st->record_size;
			rc = tb5_write_chunk(h, o, CK_DATA, o->id, o->total, (uint32_t)n, p, chunk_bytes);
			if (rc != VT_SUCCESS)
				return rc;
			o->total += n;
			p += chunk_bytes;
			len -= chunk_bytes;
			continue;
		}
		size_t k = chunk_bytes - o->buf_len;
		if (k > len)
			k = len;
		memcpy(o->buf + o->buf_len, p, k);
		o->buf_len += k;
		p += k;
		len -= k;
		if (o->buf_len == chunk_bytes) {
			rc = flush_data(h, st, o);
			if (rc != VT_SUCCESS)
				return rc;
		}
	}
	return VT_SUCCESS;
}

TBRW_U32 TBRW_add_data(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_data_entry, void *data_entry)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	struct tb5_obj *o = NULL;

	CHECK_HANDLE(h);
	if (data_entry == NULL || size_of_data_entry == 0)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_add_data: no data");
	st = stream < TB5_MAX_STREAMS ? tb5_stream_at(h, stream, 0) : NULL;
	if (st == NULL)
		return tb5_fail(TBRW_INVALID_STREAM, "%s: TBRW_add_data: stream %u does not exist", h->path, stream);
	o = st->data_obj;
	if (o == NULL || o->state != OBJ_WRITING)
		return tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_add_data: the data section of stream %u is not open "
							"for writing",
				h->path, stream);
	if (st->piece_size != NULL) {
		/* chapter 6 style: one descriptor entry per call, in descriptor order */
		if (st->partial_len == 0 && size_of_data_entry % st->record_size == 0)
			goto whole;
		if (size_of_data_entry != st->piece_size[st->piece_next])
			return tb5_fail(TBRW_RECORD_SIZE_MISMATCH, "%s: stream %u: TBRW_add_data of %u bytes, expected "
								   "%u (descriptor entry %u) or whole %u-byte records",
					h->path, stream, size_of_data_entry, st->piece_size[st->piece_next],
					st->piece_next, st->record_size);
		if (st->partial == NULL && (st->partial = malloc(st->record_size)) == NULL)
			return tb5_fail(TBRW_NO_MEMORY, "out of memory");
		memcpy(st->partial + st->partial_len, data_entry, size_of_data_entry);
		st->partial_len += size_of_data_entry;
		if (++st->piece_next == st->n_desc) {
			st->piece_next = 0;
			st->partial_len = 0;
			return append_records(h, st, o, st->partial, st->record_size);
		}
		return VT_SUCCESS;
	}
whole:
	if (size_of_data_entry % st->record_size != 0)
		return tb5_fail(TBRW_RECORD_SIZE_MISMATCH, "%s: stream %u: TBRW_add_data of %u bytes; the data "
							   "descriptor makes records of %u bytes",
				h->path, stream, size_of_data_entry, st->record_size);
	return append_records(h, st, o, data_entry, size_of_data_entry);
}

TBRW_U32 TBRW_add_data_from_file(TBRW_PTR ptr, TBRW_U32 stream, TBRW_CHAR *filename)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	unsigned char *buf;
	size_t len, cap;
	uint64_t size = 0, done = 0;
	struct stat sb;
	char *path;
	TBRW_U32 rc = VT_SUCCESS;
	int fd;

	CHECK_HANDLE(h);
	if (filename == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_add_data_from_file: no file name");
	st = stream < TB5_MAX_STREAMS ? tb5_stream_at(h, stream, 0) : NULL;
	if (st == NULL || st->data_obj == NULL || st->data_obj->state != OBJ_WRITING)
		return tb5_fail(st == NULL ? TBRW_INVALID_STREAM : TBRW_CALL_OUT_OF_ORDER,
				"%s: TBRW_add_data_from_file: the data section of stream %u is not open for writing",
				h->path, stream);
	if (st->partial_len != 0)
		return tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_add_data_from_file: stream %u has a record half "
							"written by TBRW_add_data (%u of %u bytes)",
				h->path, stream, st->partial_len, st->record_size);
	path = tb5_wcs_to_utf8_alloc(filename, &len);
	if (path == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_add_data_from_file: invalid file name");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = tb5_fail(tb5_errno_code(errno), "%s: cannot open: %s", path, strerror(errno));
		free(path);
		return rc;
	}
	/* A failed call must append nothing: the size is checked before the first record goes in,
	 * which needs a file whose size is known. */
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		rc = tb5_fail(TBRW_INVALID_PARAMETER, "%s: not a regular file (its size must be known before anything "
						      "is appended)",
			      path);
	} else if ((size = (uint64_t)sb.st_size) % st->record_size != 0) {
		rc = tb5_fail(TBRW_RECORD_SIZE_MISMATCH, "%s: %llu bytes, not a whole number of %u-byte records (%llu "
							 "bytes too many); nothing was appended",
			      path, (unsigned long long)size, st->record_size,
			      (unsigned long long)(size % st->record_size));
	}
	if (rc != VT_SUCCESS) {
		close(fd);
		free(path);
		return rc;
	}
	cap = chunk_records(st->record_size) * st->record_size;
	buf = malloc(cap);
	if (buf == NULL) {
		close(fd);
		free(path);
		return tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	while (done < size && rc == VT_SUCCESS) {
		size_t want = size - done < cap ? (size_t)(size - done) : cap, fill = 0;
		while (fill < want) {
			ssize_t r = pread(fd, buf + fill, want - fill, (off_t)(done + fill));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				rc = tb5_fail(TBRW_IO_ERROR, "%s: read failed at byte offset %llu: %s", path,
					      (unsigned long long)(done + fill),
					      r < 0 ? strerror(errno) : "the file became shorter");
				break;
			}
			fill += (size_t)r;
		}
		if (rc == VT_SUCCESS)
			rc = append_records(h, st, st->data_obj, buf, want);
		done += want;
	}
	free(buf);
	close(fd);
	free(path);
	return rc;
}

/* Enumerates the records of a data-like object (data section or bind results). */
TBRW_U32 tb5_enumerate_records(struct tb5_handle *h, struct tb5_obj *o, uint32_t rec, uint64_t start,
			       TBRW_U32 (*fn)(void *ctx, unsigned char *p, uint64_t first, uint32_t n), void *ctx);
TBRW_U32 tb5_enumerate_records(struct tb5_handle *h, struct tb5_obj *o, uint32_t rec, uint64_t start,
			       TBRW_U32 (*fn)(void *ctx, unsigned char *p, uint64_t first, uint32_t n), void *ctx)
{
	unsigned char *scratch = NULL;
	size_t scratch_cap = 0, lo = 0, hi = o->n_chunks;
	const unsigned char *p;
	TBRW_U32 rc = VT_SUCCESS;

	/* binary search: last data chunk with first <= start */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->chunks[mid].kind == CK_DATA && o->chunks[mid].first + o->chunks[mid].count <= start)
			lo = mid + 1;
		else if (o->chunks[mid].kind != CK_DATA && o->chunks[mid].first <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < o->n_chunks; i++) {
		const struct tb5_chunk_ref *c = &o->chunks[i];
		uint64_t skip;
		if (c->kind != CK_DATA || c->first + c->count <= start)
			continue;
		if ((uint64_t)c->count * rec != c->raw_len) {
			rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: data chunk at byte offset %llu holds %u bytes, not %u "
							 "records of %u bytes",
				      h->path, (unsigned long long)c->offset, c->raw_len, c->count, rec);
			break;
		}
		rc = tb5_read_chunk(h, c, &scratch, &scratch_cap, &p);
		if (rc != VT_SUCCESS)
			break;
		skip = start > c->first ? start - c->first : 0;
		rc = fn(ctx, (unsigned char *)p + skip * rec, c->first + skip, (uint32_t)(c->count - skip));
		/* the file shrank while the callback read the records: they were partly zeros */
		if (tk__tb5_map_check(h) != VT_SUCCESS) {
			rc = TBRW_FILE_TRUNCATED;
			break;
		}
		if (rc == FALSE) {
			rc = VT_SUCCESS;
			break;
		}
		if (rc != TRUE)
			break;
		rc = VT_SUCCESS;
	}
	free(scratch);
	return rc;
}

struct data_ctx {
	TBRW_DATA_CALLBACK *cb;
	void *user;
	uint32_t rec;
};

static TBRW_U32 data_fn(void *ctx, unsigned char *p, uint64_t first, uint32_t n)
{
	struct data_ctx *c = ctx;
	TBRW_U32 r = c->cb(p, n * c->rec, n, c->user);
	(void)first;
	return r == TRUE || r == FALSE ? r : tb5_callback_error(r, "TBRW_enumerate_data");
}

TBRW_U32 TBRW_enumerate_data(TBRW_PTR ptr, TBRW_U32 stream, TBRW_DATA_CALLBACK *callback_func, void *user_ptr,
			     TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct data_ctx ctx;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_data: no callback");
	if (stream >= TB5_MAX_STREAMS || tb5_stream_at(h, stream, 0) == NULL)
		return tb5_fail(TBRW_INVALID_STREAM, "%s: TBRW_enumerate_data: stream %u does not exist", h->path, stream);
	pthread_mutex_lock(&h->lock);
	o = tb5_obj_find(h, OBJ_STREAM_SEC(stream, TBRW_DATA_SECTION));
	pthread_mutex_unlock(&h->lock);
	if (o == NULL || o->readers <= 0)
		return tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_enumerate_data: the data section of stream %u is not "
							"open for reading (TBRW_reading_stream_section)",
				h->path, stream);
	rc = tb5_stream_layout(h, stream);
	if (rc != VT_SUCCESS)
		return rc;
	ctx.cb = callback_func;
	ctx.user = user_ptr;
	ctx.rec = h->streams[stream]->record_size;
	return tb5_enumerate_records(h, o, ctx.rec, start_index, data_fn, &ctx);
}
