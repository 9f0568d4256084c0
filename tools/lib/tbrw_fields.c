/* SPDX-License-Identifier: MIT */
/*
 * tbrw_fields.c: TBRW structures to and from .dat field values, generated from the field
 * lists of tbrw_dat.h (so the .dat schema, print_tb5 and tbrw_writer cannot drift apart),
 * and the string and error helpers the TBRW tools share.
 */
#include "tbrw_fields.h"
#include "tool_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

/* The structure behind each record kind. */
#define TBF_TYPES(X)                                                                           \
	X(system, TBRW_SYSTEM) X(node, TBRW_NODE) X(cpu, TBRW_CPU) X(cpu_arch, TBRW_CPU_ARCH) \
	X(cpuid_ia32, TBRW_CPUID_IA32) X(cpuid_ia64, TBRW_CPUID_IA64) X(host, TBRW_HOST)      \
	X(os, TBRW_OS) X(application, TBRW_APPLICATION) X(process, TBRW_PID)                 \
	X(thread, TBRW_TID) X(module, TBRW_MODULE) X(version_info, TBRW_VERSION_INFO)        \
	X(stream_info, TBRW_STREAM_INFO) X(event, TBRW_EVENT) X(detail, TBRW_EVENT_DETAIL)   \
	X(desc, TBRW_SAMPREC_DESC_ENTRY)

/* The versioning member of each structure. */
#define TBF_SIZE_system system_size
#define TBF_SIZE_node node_size
#define TBF_SIZE_cpu cpu_size
#define TBF_SIZE_cpu_arch arch_size
#define TBF_SIZE_host host_size
#define TBF_SIZE_os os_size
#define TBF_SIZE_application app_size
#define TBF_SIZE_process pid_size
#define TBF_SIZE_thread tid_size
#define TBF_SIZE_module module_size
#define TBF_SIZE_version_info version_info_size
#define TBF_SIZE_stream_info stream_info_size
#define TBF_SIZE_event event_size
#define TBF_SIZE_detail detail_size
#define TBF_SIZE_desc desc_size

void tbf_strings_reset(struct tbf_strings *sb)
{
	while (sb->n > 0)
		free(sb->items[--sb->n]);
	free(sb->items);
	sb->items = NULL;
	sb->cap = 0;
}

static void *keep(struct tbf_strings *sb, void *p)
{
	if (p == NULL)
		return NULL;
	if (sb->n == sb->cap) {
		size_t ncap = sb->cap ? sb->cap * 2 : 16;
		void **ni = realloc(sb->items, ncap * sizeof(*ni));

		if (ni == NULL) {
			free(p);
			return NULL;
		}
		sb->items = ni;
		sb->cap = ncap;
	}
	sb->items[sb->n++] = p;
	return p;
}

TBRW_U32 tbf_string(TBRW_PTR ptr, const TBRW_STRING_OR_ID *id, struct tbf_strings *sb, const char **out)
{
	TBRW_STRING_OR_ID copy = *id;
	TBRW_U32 need = 0, rc, n8 = 0;
	TBRW_CHAR *wide;
	char *utf8;

	*out = NULL;
	if (id->soi_uniqueid == 0)
		return VT_SUCCESS;
	rc = TBRW_convert_uniqueid_to_string(ptr, 0, &copy, NULL, &need);
	if (rc != VT_SUCCESS && rc != TBRW_BUFFER_TOO_SMALL)
		return rc;
	wide = keep(sb, calloc((size_t)need + 1, sizeof(TBRW_CHAR)));
	if (wide == NULL)
		return TBRW_NO_MEMORY;
	copy = *id;
	rc = TBRW_convert_uniqueid_to_string(ptr, need + 1, &copy, wide, NULL);
	if (rc != VT_SUCCESS)
		return rc;
	rc = TBRW_convert_wcs_to_utf8(wide, NULL, &n8);
	if (rc != VT_SUCCESS && rc != TBRW_BUFFER_TOO_SMALL)
		return rc;
	utf8 = keep(sb, calloc((size_t)n8 + 1, 1));
	if (utf8 == NULL)
		return TBRW_NO_MEMORY;
	n8 += 1;
	rc = TBRW_convert_wcs_to_utf8(wide, utf8, &n8);
	if (rc != VT_SUCCESS)
		return rc;
	*out = utf8;
	return VT_SUCCESS;
}

/* UTF-8 to a wide string kept in sb; NULL stays NULL. */
static TBRW_U32 widen(const char *s, struct tbf_strings *sb, TBRW_CHAR **out)
{
	TBRW_U32 n = 0, rc;
	TBRW_CHAR *w;

	*out = NULL;
	if (s == NULL)
		return VT_SUCCESS;
	rc = TBRW_convert_utf8_to_wcs(s, NULL, &n);
	if (rc != VT_SUCCESS && rc != TBRW_BUFFER_TOO_SMALL)
		return rc;
	w = keep(sb, calloc((size_t)n + 1, sizeof(*w)));
	if (w == NULL)
		return TBRW_NO_MEMORY;
	n += 1;
	rc = TBRW_convert_utf8_to_wcs(s, w, &n);
	if (rc != VT_SUCCESS)
		return rc;
	*out = w;
	return VT_SUCCESS;
}

TBRW_CHAR *tbf_wide_path(const char *path)
{
	struct tbf_strings sb = { NULL, 0, 0 };
	TBRW_CHAR *w = NULL, *copy = NULL;

	if (widen(path, &sb, &w) == VT_SUCCESS && w != NULL) {
		size_t n = wcslen(w);

		copy = malloc((n + 1) * sizeof(*copy));
		if (copy != NULL)
			memcpy(copy, w, (n + 1) * sizeof(*copy));
	}
	tbf_strings_reset(&sb);
	return copy;
}

/* ---- structure -> values ---- */

#define TO_U8(m) v->num[i++] = s->m;
#define TO_U16(m) v->num[i++] = s->m;
#define TO_U32(m) v->num[i++] = s->m;
#define TO_U64(m) v->num[i++] = s->m;
#define TO_B2(m) v->num[i++] = s->m;
#define TO_S64(m) v->num[i++] = (uint64_t)s->m;
#define TO_FT(m) v->num[i++] = ((uint64_t)s->m.dwHighDateTime << 32) | s->m.dwLowDateTime;
#define TO_STR(m)                                              \
	rc = tbf_string(ptr, &s->m, sb, &v->str[i++]);         \
	if (rc != VT_SUCCESS)                                  \
		return rc;
#define TO_FIELD(type, m) TO_##type(m)

#define DEF_TO(kind, T)                                                                          \
	static TBRW_U32 to_##kind(TBRW_PTR ptr, const T *s, struct dat_values *v, struct tbf_strings *sb) \
	{                                                                                        \
		TBRW_U32 rc = VT_SUCCESS;                                                        \
		size_t i = 0;                                                                    \
		(void)ptr, (void)s, (void)v, (void)sb, (void)i;                                  \
		DAT_FIELDS_##kind(TO_FIELD) return rc;                                           \
	}
TBF_TYPES(DEF_TO)

TBRW_U32 tbf_to_values(TBRW_PTR ptr, enum dat_kind kind, const void *in, struct dat_values *v,
		       struct tbf_strings *sb)
{
	memset(v, 0, sizeof(*v));
	switch (kind) {
#define CASE_TO(kind, T) \
	case DAT_K_##kind: return to_##kind(ptr, (const T *)in, v, sb);
		TBF_TYPES(CASE_TO)
#undef CASE_TO
	default:
		return TBRW_INVALID_PARAMETER;
	}
}

/* ---- values -> structure ---- */

#define FROM_U8(m) s->m = (TBRW_U8)v->num[i++];
#define FROM_U16(m) s->m = (TBRW_U16)v->num[i++];
#define FROM_U32(m) s->m = (TBRW_U32)v->num[i++];
#define FROM_U64(m) s->m = (TBRW_U64)v->num[i++];
#define FROM_B2(m) s->m = (TBRW_U32)(v->num[i++] & 3);
#define FROM_S64(m) s->m = (TBRW_S64)v->num[i++];
#define FROM_FT(m)                                              \
	s->m.dwLowDateTime = (TBRW_U32)v->num[i];             \
	s->m.dwHighDateTime = (TBRW_U32)(v->num[i++] >> 32);
#define FROM_STR(m)                                             \
	rc = widen(v->str[i++], sb, &s->m.soi_ptr);             \
	if (rc != VT_SUCCESS)                                   \
		return rc;
#define FROM_FIELD(type, m) FROM_##type(m)

#define DEF_FROM(kind, T)                                                                    \
	static TBRW_U32 from_##kind(const struct dat_values *v, T *s, struct tbf_strings *sb) \
	{                                                                                    \
		TBRW_U32 rc = VT_SUCCESS;                                                    \
		size_t i = 0;                                                                \
		(void)v, (void)sb, (void)i;                                                  \
		memset(s, 0, sizeof(*s));                                                    \
		s->TBF_SIZE_##kind = sizeof(*s);                                             \
		DAT_FIELDS_##kind(FROM_FIELD) return rc;                                     \
	}
#define TBF_SIZE_cpuid_ia32 reserved /* no size member: overwritten by the field list */
#define TBF_SIZE_cpuid_ia64 reserved
TBF_TYPES(DEF_FROM)

TBRW_U32 tbf_from_values(enum dat_kind kind, const struct dat_values *v, void *out, struct tbf_strings *sb)
{
	switch (kind) {
#define CASE_FROM(kind, T) \
	case DAT_K_##kind: return from_##kind(v, (T *)out, sb);
		TBF_TYPES(CASE_FROM)
#undef CASE_FROM
	default:
		return TBRW_INVALID_PARAMETER;
	}
}

/* ---- errors ---- */

/* The temporary copy of standard input being read, if any (for messages). */
static char tbf_input_tmp_path[4200];

void tbf_name_input(const char *open_path)
{
	snprintf(tbf_input_tmp_path, sizeof(tbf_input_tmp_path), "%s", open_path);
}

void tbf_report(const char *tool, const char *file, TBRW_PTR ptr, const char *what, TBRW_U32 rc)
{
	const TBRW_CHAR *text = NULL;
	const char *detail = tk_tbrw_error_detail();

	(void)ptr;
	if (TBRW_error_string(rc, &text) != VT_SUCCESS || text == NULL)
		text = L"unknown error";
	/* The library's detail names the file it opened: a temporary copy of standard input
	 * is named as the user knows it. */
	if (detail != NULL && tbf_input_tmp_path[0] != '\0' &&
	    strncmp(detail, tbf_input_tmp_path, strlen(tbf_input_tmp_path)) == 0) {
		fprintf(stderr, "%s: %s%s (%s: %ls)\n", tool, file, detail + strlen(tbf_input_tmp_path), what, text);
		return;
	}
	if (detail != NULL && detail[0] != '\0')
		fprintf(stderr, "%s: %s (%s: %ls)\n", tool, detail, what, text);
	else
		fprintf(stderr, "%s: %s: %s: %ls\n", tool, file, what, text);
}

/* ---- walking a whole file ---- */

struct walk {
	TBRW_PTR ptr;
	dat_item_fn fn;
	void *ud;
	struct tbf_strings sb;
	struct dat_item item;
	int cb_rc;           /* a callback's non-zero value */
	int skip;            /* data records: skip the rest */
	uint64_t n_records;
	TBRW_U32 rc;         /* failing TBRW call */
	const char *call;
};

#define WALK_STOP 0x7fff0002 /* returned through the enumerate functions on a callback stop */

/* The progress line tbf_walk updates with the bytes of data records read (or NULL). */
static struct tktool_progress *walk_progress;
static uint64_t walk_bytes;

void tbf_walk_progress(struct tktool_progress *progress)
{
	walk_progress = progress;
	walk_bytes = 0;
}

static int emit_values(struct walk *w, enum dat_kind kind, const void *s)
{
	struct dat_values v;
	TBRW_U32 rc = tbf_to_values(w->ptr, kind, s, &v, &w->sb);
	int cb;

	if (rc != VT_SUCCESS) {
		tbf_strings_reset(&w->sb);
		w->call = "TBRW_convert_uniqueid_to_string";
		w->rc = rc;
		return -1;
	}
	w->item.type = DAT_RECORD;
	w->item.kind = kind;
	w->item.values = &v;
	w->item.bytes = NULL;
	w->item.n_bytes = 0;
	cb = w->fn(w->ud, &w->item);
	w->item.values = NULL;
	tbf_strings_reset(&w->sb);
	if (cb != 0)
		w->cb_rc = cb;
	return cb != 0 ? -1 : 0;
}

static int emit(struct walk *w, enum dat_item_type type)
{
	int cb;

	w->item.type = type;
	cb = w->fn(w->ud, &w->item);
	if (cb != 0)
		w->cb_rc = cb;
	return cb != 0 ? -1 : 0;
}

static int failed(struct walk *w, const char *call, TBRW_U32 rc)
{
	if (w->cb_rc == 0 && w->call == NULL) {
		w->call = call;
		w->rc = rc;
	}
	return -1;
}

/* An enumerate function's result: a stop requested by our callback is not a failure. */
static int enum_result(struct walk *w, const char *call, TBRW_U32 rc)
{
	if (rc == VT_SUCCESS)
		return 0;
	if (w->cb_rc != 0 || w->call != NULL)
		return -1;
	return failed(w, call, rc);
}

/* A get_ function with the size-query protocol of the guide's 5.8: a malloc'd buffer. */
#define GET_BUFFER(w, call, out, n_out, ...)                                                  \
	do {                                                                                  \
		TBRW_U32 need_ = 0, rc_;                                                      \
		rc_ = call(__VA_ARGS__, 0, NULL, &need_);                                     \
		if (tbf_absent(rc_))                                                          \
			need_ = 0;                                                            \
		else if (rc_ != VT_SUCCESS && rc_ != TBRW_BUFFER_TOO_SMALL)                   \
			return failed(w, #call, rc_);                                         \
		*(out) = malloc(need_ ? need_ : 1);                                           \
		if (*(out) == NULL)                                                           \
			return failed(w, #call, TBRW_NO_MEMORY);                              \
		rc_ = need_ ? call(__VA_ARGS__, need_, *(out), &need_) : VT_SUCCESS;          \
		if (rc_ != VT_SUCCESS) {                                                      \
			free(*(out));                                                         \
			*(out) = NULL;                                                        \
			return failed(w, #call, rc_);                                         \
		}                                                                             \
		*(n_out) = need_;                                                             \
	} while (0)

static int walk_hardware(struct walk *w)
{
	TBRW_SYSTEM *sys = NULL;
	TBRW_U32 n, i, j, k, m;
	int rc = -1;

	GET_BUFFER(w, TBRW_get_system, &sys, &n, w->ptr);
	if (n < sizeof(*sys)) { /* a hardware section without a system */
		free(sys);
		return 0;
	}
	if (emit_values(w, DAT_K_system, sys) != 0)
		goto out;
	for (i = 0; i < sys->system_num_nodes; i++) {
		const TBRW_NODE *node = &sys->node_array[i];

		if (emit_values(w, DAT_K_node, node) != 0)
			goto out;
		for (j = 0; j < node->node_num_available; j++) {
			const TBRW_CPU *cpu = &node->cpu_array[j];

			if (emit_values(w, DAT_K_cpu, cpu) != 0)
				goto out;
			for (k = 0; k < cpu->num_cpu_arch_array; k++) {
				const TBRW_CPU_ARCH *arch = &cpu->cpu_arch_array[k];

				if (emit_values(w, DAT_K_cpu_arch, arch) != 0)
					goto out;
				for (m = 0; m < arch->arch_num_cpuid; m++) {
					if (arch->arch_type == TBRW_GST_IA64) {
						if (emit_values(w, DAT_K_cpuid_ia64, &arch->cpuid_ia64_array[m]) != 0)
							goto out;
					} else if (emit_values(w, DAT_K_cpuid_ia32, &arch->cpuid_ia32_array[m]) != 0) {
						goto out;
					}
				}
			}
		}
	}
	rc = 0;
out:
	free(sys);
	return rc;
}

/* Emits the record of a get_ function of the software or version section, if set. */
#define WALK_GET(w, kind, call, ...)                                                 \
	do {                                                                         \
		void *buf_ = NULL;                                                   \
		TBRW_U32 n_;                                                         \
		int e_;                                                              \
		GET_BUFFER(w, call, &buf_, &n_, __VA_ARGS__);                        \
		e_ = n_ > 0 ? emit_values(w, kind, buf_) : 0;                        \
		free(buf_);                                                          \
		if (e_ != 0)                                                         \
			return -1;                                                   \
	} while (0)

static TBRW_U32 array_cb(struct walk *w, enum dat_kind kind, const void *data, TBRW_U32 size, TBRW_U32 n)
{
	size_t stride, i;

	if (n == 0)
		return 1;
	if (walk_progress != NULL) {
		walk_bytes += size;
		tktool_progress_update(walk_progress, walk_bytes);
	}
	stride = size / n;
	for (i = 0; i < n; i++)
		if (emit_values(w, kind, (const char *)data + i * stride) != 0)
			return WALK_STOP;
	return 1; /* TRUE: more */
}

static TBRW_U32 pid_cb(TBRW_PID *data, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	return array_cb(ud, DAT_K_process, data, size, n);
}

static TBRW_U32 tid_cb(TBRW_TID *data, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	return array_cb(ud, DAT_K_thread, data, size, n);
}

static TBRW_U32 module_cb(TBRW_MODULE *data, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	return array_cb(ud, DAT_K_module, data, size, n);
}

static TBRW_U32 desc_cb(TBRW_SAMPREC_DESC_ENTRY *data, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	return array_cb(ud, DAT_K_desc, data, size, n);
}

static TBRW_U32 event_cb(TBRW_EVENT *data, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	struct walk *w = ud;
	size_t stride, i, d;

	if (n == 0)
		return 1;
	stride = size / n;
	for (i = 0; i < n; i++) {
		const TBRW_EVENT *ev = (const TBRW_EVENT *)((const char *)data + i * stride);

		if (emit_values(w, DAT_K_event, ev) != 0)
			return WALK_STOP;
		for (d = 0; d < ev->event_num_details; d++)
			if (emit_values(w, DAT_K_detail, &ev->event_detail_array[d]) != 0)
				return WALK_STOP;
	}
	return 1;
}

static TBRW_U32 data_cb(void *data, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	struct walk *w = ud;
	size_t stride, i;
	int cb;

	if (n == 0)
		return 1;
	stride = size / n;
	for (i = 0; i < n; i++) {
		w->n_records++;
		if (w->skip)
			continue;
		w->item.type = DAT_RECORD;
		w->item.kind = DAT_K_record;
		w->item.values = NULL;
		w->item.bytes = (const unsigned char *)data + i * stride;
		w->item.n_bytes = stride;
		cb = w->fn(w->ud, &w->item);
		if (cb == TBF_SKIP_RECORDS) {
			w->skip = 1;
		} else if (cb != 0) {
			w->cb_rc = cb;
			return WALK_STOP;
		}
	}
	return 1;
}

/* Emits a record whose values need no conversion (derived, bind). */
static int emit_plain(struct walk *w, enum dat_kind kind, const struct dat_values *v)
{
	int cb;

	w->item.type = DAT_RECORD;
	w->item.kind = kind;
	w->item.values = v;
	w->item.bytes = NULL;
	w->item.n_bytes = 0;
	cb = w->fn(w->ud, &w->item);
	w->item.values = NULL;
	if (cb == TBF_SKIP_RECORDS)
		return TBF_SKIP_RECORDS;
	if (cb != 0)
		w->cb_rc = cb;
	return cb != 0 ? -1 : 0;
}

/* Bind results: one record per data record, skipped like data records when asked. */
static TBRW_U32 bind_cb(const void *data, TBRW_U32 ds, TBRW_U64 n, const DATA_BIND_STRUCT *b, TBRW_U32 bs, void *ud)
{
	struct walk *w = ud;
	struct dat_values v;
	TBRW_U64 i;
	int r;

	(void)data, (void)ds, (void)bs;
	memset(&v, 0, sizeof(v));
	for (i = 0; i < n; i++) {
		w->n_records++;
		if (w->skip)
			continue;
		v.num[0] = b[i].module_index;
		v.num[1] = b[i].pid_index;
		v.num[2] = b[i].tid_index;
		r = emit_plain(w, DAT_K_bind, &v);
		if (r == TBF_SKIP_RECORDS)
			w->skip = 1;
		else if (r != 0)
			return WALK_STOP;
	}
	return 1;
}

/* Whether any stream of the file holds a stored bind result. */
static int any_stream_bound(TBRW_PTR ptr)
{
	TBRW_U32 n = 0, s, bound;

	if (TBRW_get_number_data_streams(ptr, &n) != VT_SUCCESS)
		return 0;
	for (s = 0; s < n; s++)
		if (TBRW_is_bound(ptr, s, &bound) == VT_SUCCESS && bound)
			return 1;
	return 0;
}

struct derived_check {
	size_t n;
	int all; /* every entry so far has the DERIVED flag */
};

static TBRW_U32 derived_pid(TBRW_PID *p, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	struct derived_check *c = ud;
	TBRW_U32 i;

	for (i = 0; i < n; i++, c->n++)
		if (!(((const TBRW_PID *)(const void *)((const char *)p + (size_t)i * (size / n)))->pid_flags &
		      TBRW_PID_DERIVED))
			c->all = 0;
	return c->all ? 1 : 0; /* TRUE: go on; FALSE: the answer is known */
}

static TBRW_U32 derived_tid(TBRW_TID *t, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	struct derived_check *c = ud;
	TBRW_U32 i;

	for (i = 0; i < n; i++, c->n++)
		if (!(((const TBRW_TID *)(const void *)((const char *)t + (size_t)i * (size / n)))->tid_flags &
		      TBRW_TID_DERIVED))
			c->all = 0;
	return c->all ? 1 : 0;
}

/*
 * Whether the process/thread section was derived by TBRW_dobind rather than written: a stream
 * is bound, and every process and thread carries the binder's DERIVED flag (the API has no
 * other way to tell).
 */
static int pt_derived(TBRW_PTR ptr)
{
	struct derived_check c = { 0, 1 };

	if (!any_stream_bound(ptr))
		return 0;
	if (TBRW_enumerate_processes(ptr, derived_pid, &c, 0) != VT_SUCCESS || !c.all || c.n == 0)
		return 0;
	if (TBRW_enumerate_threads(ptr, derived_tid, &c, 0) != VT_SUCCESS)
		return 0;
	return c.all;
}

static int begin_section(struct walk *w, enum dat_section s)
{
	w->item.section = s;
	return emit(w, DAT_SECTION_BEGIN);
}

static int end_section(struct walk *w, enum dat_section s)
{
	w->item.section = s;
	w->item.bytes = NULL;
	w->item.n_bytes = s == DAT_S_data || s == DAT_S_bind ? (size_t)w->n_records : 0;
	return emit(w, DAT_SECTION_END);
}

static int walk_global(struct walk *w, enum dat_section s, TBRW_SECTION_IDENTIFIER id)
{
	TBRW_U32 rc = TBRW_reading_section(w->ptr, id);
	int r = -1;

	if (tbf_absent(rc))
		return 0;
	if (rc != VT_SUCCESS)
		return failed(w, "TBRW_reading_section", rc);
	if (begin_section(w, s) != 0)
		goto done;
	switch (s) {
	case DAT_S_hardware:
		if (walk_hardware(w) != 0)
			goto done;
		break;
	case DAT_S_software:
		WALK_GET(w, DAT_K_host, TBRW_get_host, w->ptr);
		WALK_GET(w, DAT_K_os, TBRW_get_os, w->ptr);
		WALK_GET(w, DAT_K_application, TBRW_get_application, w->ptr);
		break;
	case DAT_S_process_thread:
		if (pt_derived(w->ptr)) {
			struct dat_values none;

			memset(&none, 0, sizeof(none));
			if (emit_plain(w, DAT_K_derived, &none) != 0)
				goto done;
		}
		if (enum_result(w, "TBRW_enumerate_processes", TBRW_enumerate_processes(w->ptr, pid_cb, w, 0)) != 0 ||
		    enum_result(w, "TBRW_enumerate_threads", TBRW_enumerate_threads(w->ptr, tid_cb, w, 0)) != 0)
			goto done;
		break;
	case DAT_S_module:
		if (enum_result(w, "TBRW_enumerate_modules", TBRW_enumerate_modules(w->ptr, module_cb, w, 0)) != 0)
			goto done;
		break;
	case DAT_S_version_info:
		WALK_GET(w, DAT_K_version_info, TBRW_get_version_info, w->ptr);
		break;
	case DAT_S_user_defined_global: {
		unsigned char *buf = NULL;
		TBRW_U32 n;

		GET_BUFFER(w, TBRW_get_user_defined_global, &buf, &n, w->ptr);
		w->item.type = DAT_RECORD;
		w->item.kind = DAT_K_bytes;
		w->item.values = NULL;
		w->item.bytes = buf;
		w->item.n_bytes = n;
		r = n > 0 ? w->fn(w->ud, &w->item) : 0;
		free(buf);
		if (r != 0) {
			w->cb_rc = r;
			r = -1;
			goto done;
		}
		break;
	}
	default:
		break;
	}
	r = end_section(w, s);
done:
	rc = TBRW_done_section(w->ptr, id);
	if (r == 0 && rc != VT_SUCCESS)
		return failed(w, "TBRW_done_section", rc);
	return r;
}

static int walk_stream_section(struct walk *w, uint32_t stream, enum dat_section s, TBRW_STREAM_SECTION_IDENTIFIER id)
{
	TBRW_U32 rc = TBRW_reading_stream_section(w->ptr, stream, id);
	int r = -1;

	if (tbf_absent(rc))
		return 0;
	if (rc != VT_SUCCESS)
		return failed(w, "TBRW_reading_stream_section", rc);
	if (begin_section(w, s) != 0)
		goto done;
	switch (s) {
	case DAT_S_stream_info:
		WALK_GET(w, DAT_K_stream_info, TBRW_get_stream_info, w->ptr, stream);
		break;
	case DAT_S_event_description:
		if (enum_result(w, "TBRW_enumerate_events", TBRW_enumerate_events(w->ptr, stream, event_cb, w, 0)) != 0)
			goto done;
		break;
	case DAT_S_data_description:
		if (enum_result(w, "TBRW_enumerate_data_descriptor_entries",
				TBRW_enumerate_data_descriptor_entries(w->ptr, stream, desc_cb, w)) != 0)
			goto done;
		break;
	case DAT_S_data:
		w->n_records = 0;
		w->skip = 0;
		if (enum_result(w, "TBRW_enumerate_data", TBRW_enumerate_data(w->ptr, stream, data_cb, w, 0)) != 0)
			goto done;
		break;
	case DAT_S_user_defined_stream: {
		unsigned char *buf = NULL;
		TBRW_U32 n;

		GET_BUFFER(w, TBRW_get_user_defined_stream, &buf, &n, w->ptr, stream);
		w->item.type = DAT_RECORD;
		w->item.kind = DAT_K_bytes;
		w->item.values = NULL;
		w->item.bytes = buf;
		w->item.n_bytes = n;
		r = n > 0 ? w->fn(w->ud, &w->item) : 0;
		free(buf);
		if (r != 0) {
			w->cb_rc = r;
			r = -1;
			goto done;
		}
		break;
	}
	default:
		break;
	}
	r = end_section(w, s);
done:
	rc = TBRW_done_stream_section(w->ptr, stream, id);
	if (r == 0 && rc != VT_SUCCESS)
		return failed(w, "TBRW_done_stream_section", rc);
	return r;
}

/* A stream's stored bind result, if it has one, as a bind section. */
static int walk_bind(struct walk *w, uint32_t stream)
{
	TBRW_U32 bound = 0;
	int r;

	if (TBRW_is_bound(w->ptr, stream, &bound) != VT_SUCCESS || !bound)
		return 0;
	if (begin_section(w, DAT_S_bind) != 0)
		return -1;
	w->n_records = 0;
	w->skip = 0;
	r = enum_result(w, "TBRW_bind_enumerate_data", TBRW_bind_enumerate_data(w->ptr, stream, bind_cb, w, 0));
	if (r != 0)
		return r;
	return end_section(w, DAT_S_bind);
}

int tbf_walk(TBRW_PTR ptr, dat_item_fn fn, void *ud, const char **failed_call, TBRW_U32 *failed_rc)
{
	static const struct {
		enum dat_section s;
		TBRW_SECTION_IDENTIFIER id;
	} globals[] = {
		{ DAT_S_hardware, TBRW_HARDWARE_SECTION },
		{ DAT_S_software, TBRW_SOFTWARE_SECTION },
		{ DAT_S_version_info, TBRW_VERSION_INFO_SECTION },
		{ DAT_S_module, TBRW_MODULE_SECTION },
		{ DAT_S_process_thread, TBRW_PROCESS_THREAD_SECTION },
		{ DAT_S_user_defined_global, TBRW_USER_DEFINED_GLOBAL_SECTION },
	};
	static const struct {
		enum dat_section s;
		TBRW_STREAM_SECTION_IDENTIFIER id;
	} locals[] = {
		{ DAT_S_stream_info, TBRW_STREAM_INFO_SECTION },
		{ DAT_S_event_description, TBRW_EVENT_DESCRIPTION_SECTION },
		{ DAT_S_data_description, TBRW_DATA_DESCRIPTION_SECTION },
		{ DAT_S_data, TBRW_DATA_SECTION },
		{ DAT_S_user_defined_stream, TBRW_USER_DEFINED_STREAM_SECTION },
	};
	struct walk w;
	TBRW_U32 n_streams = 0, s, rc;
	size_t i;
	int r = 0;

	memset(&w, 0, sizeof(w));
	w.ptr = ptr;
	w.fn = fn;
	w.ud = ud;
	for (i = 0; i < sizeof(globals) / sizeof(globals[0]) && r == 0; i++)
		r = walk_global(&w, globals[i].s, globals[i].id);
	if (r == 0) {
		rc = TBRW_get_number_data_streams(ptr, &n_streams);
		if (rc != VT_SUCCESS)
			r = failed(&w, "TBRW_get_number_data_streams", rc);
	}
	for (s = 0; s < n_streams && r == 0; s++) {
		rc = TBRW_reading_stream(ptr, s);
		if (rc != VT_SUCCESS) {
			r = failed(&w, "TBRW_reading_stream", rc);
			break;
		}
		w.item.stream = s;
		r = emit(&w, DAT_STREAM_BEGIN);
		for (i = 0; i < sizeof(locals) / sizeof(locals[0]) && r == 0; i++)
			r = walk_stream_section(&w, s, locals[i].s, locals[i].id);
		if (r == 0)
			r = walk_bind(&w, s);
		if (r == 0)
			r = emit(&w, DAT_STREAM_END);
		rc = TBRW_done_stream(ptr, s);
		if (r == 0 && rc != VT_SUCCESS)
			r = failed(&w, "TBRW_done_stream", rc);
	}
	tbf_strings_reset(&w.sb);
	if (r == 0)
		return 0;
	if (w.cb_rc != 0)
		return w.cb_rc;
	*failed_call = w.call;
	*failed_rc = w.rc;
	return -1;
}

/* ---- input files ---- */

/* The signature a .tb5 file starts with (docs/tb5-format.md): a copy of standard input
 * stops at once when it is not there. */
static const unsigned char tb5_signature[8] = { 'T', 'K', 'T', 'B', '5', 0, '\r', '\n' };

int tbf_open_input(const char *tool, const char *path, struct tbf_input *in, TBRW_PTR *ptr)
{
	const char *name = path, *open_path = path;
	TBRW_CHAR *wide;
	TBRW_U32 rc;
	int probe;

	memset(in, 0, sizeof(*in));
	in->stdin_file.cleanup_slot = -1;
	*ptr = NULL;
	if (strcmp(path, "-") == 0) {
		name = "standard input";
		if (tktool_stdin_file(&in->stdin_file, tb5_signature, sizeof(tb5_signature)) != 0)
			return -1;
		in->is_stdin = 1;
		open_path = in->stdin_file.path;
		snprintf(tbf_input_tmp_path, sizeof(tbf_input_tmp_path), "%s", open_path);
	} else {
		struct stat sb;

		/*
		 * A named pipe with its writer ("print_tb5 <(zcat x.tb5.gz)"): read like standard
		 * input. Opened without blocking, and one byte read without blocking: 0 means no
		 * writer, and the library refuses the FIFO at once (it used to hang in open).
		 */
		if (stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode)) {
			int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), r;
			unsigned char first;
			ssize_t got;

			if (fd < 0) {
				fprintf(stderr, "%s: %s: %s\n", tool, name, strerror(errno));
				return -1;
			}
			got = read(fd, &first, 1);
			if (got == 1 || (got < 0 && errno == EAGAIN)) {
				fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
				r = tktool_fd_file(&in->stdin_file, fd, path, tb5_signature, sizeof(tb5_signature), &first,
						   got == 1 ? 1 : 0);
				close(fd);
				if (r != 0)
					return -1;
				in->is_stdin = 1;
				open_path = in->stdin_file.path;
				snprintf(tbf_input_tmp_path, sizeof(tbf_input_tmp_path), "%s", open_path);
			} else {
				close(fd);
			}
		}
	}
	/* The system's words for a file that cannot be opened at all (O_NONBLOCK: a FIFO
	 * without a writer must not block here; the library refuses it). */
	probe = open(open_path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (probe < 0) {
		fprintf(stderr, "%s: %s: %s\n", tool, name, strerror(errno));
		tbf_close_input(in, NULL);
		return -1;
	}
	close(probe);
	wide = tbf_wide_path(open_path);
	if (wide == NULL) {
		fprintf(stderr, "%s: %s: the name is not valid UTF-8\n", tool, name);
		tbf_close_input(in, NULL);
		return -1;
	}
	rc = TBRW_open(ptr, wide, TBRW_FILE_READ);
	free(wide);
	if (rc != VT_SUCCESS) {
		*ptr = NULL;
		tbf_report(tool, name, NULL, "cannot open", rc);
		tbf_close_input(in, NULL);
		return -1;
	}
	/* The library holds the file open: the copy needs no name any more. */
	if (in->is_stdin)
		tktool_stdin_file_unlink(&in->stdin_file);
	return 0;
}

void tbf_close_input(struct tbf_input *in, TBRW_PTR ptr)
{
	if (ptr != NULL)
		TBRW_close(ptr);
	if (in->is_stdin)
		tktool_stdin_file_close(&in->stdin_file);
	in->is_stdin = 0;
}
