/* SPDX-License-Identifier: MIT */
/*
 * tbrw_load.c: writes the content of a .dat file (docs/tbrw_reader.md) into a .tb5 file
 * being written, through the TBRW API, in the order of the .dat file (the table in
 * docs/tbrw_writer.md). The .dat file is read as a stream: memory does not grow with the
 * data. The body of tbrw_writer, in the tools library.
 */
#include "tbrw_load.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbrw_dat.h"
#include "tbrw_fields.h"
#include "tool_cli.h"
#include "tracekit/common.h"

struct hw_arch {
	TBRW_CPU_ARCH arch;
	int ia64;       /* its cpuid lines: -1 none yet, 0 ia32, 1 ia64 */
	size_t first, n; /* in cpuid32 or cpuid64 */
};

struct hw_cpu {
	TBRW_CPU cpu;
	size_t first, n; /* in archs */
};

struct hw_node {
	TBRW_NODE node;
	size_t first, n; /* in cpus */
	unsigned long line;
};

struct writer {
	TBRW_PTR ptr;
	const char *in_name, *out_name;
	struct tbf_strings strings;
	/* hardware section, assembled at its end */
	struct hw_node *nodes;
	struct hw_cpu *cpus;
	struct hw_arch *archs;
	TBRW_CPUID_IA32 *cpuid32;
	TBRW_CPUID_IA64 *cpuid64;
	int have_system;
	size_t n_nodes, n_cpus, n_archs, n_cpuid32, n_cpuid64;
	size_t c_nodes, c_cpus, c_archs, c_cpuid32, c_cpuid64;
	/* the event waiting for its details */
	int have_event;
	unsigned long event_line;
	TBRW_EVENT event;
	TBRW_EVENT_DETAIL *details;
	size_t n_details, c_details;
	struct tbf_strings event_strings;
	/* the progress line, by the bytes of the .dat file read */
	FILE *in;
	struct tktool_progress progress;
	/* a user-defined section */
	unsigned char *user;
	size_t n_user, c_user;
	/* the process/thread section: opened at its first line, unless that line is "derived":
	 * then TBRW_dobind derives it, and its lines (kept as text) are what it must give */
	int pt_pending, pt_derived;
	unsigned long pt_line;
	char *pt_expect;
	size_t pt_expect_len;
	FILE *pt_text;
	int any_bound;
	/* the stream being written: its data records, and its bind result being checked */
	uint64_t n_records, bind_next;
	DATA_BIND_STRUCT *bind_got;
	uint64_t bind_first, bind_n;
};

/* Bind entries fetched at once when checking a bind section. */
#define BIND_BATCH 65536u

/* Grows *arr (of *cap elements of size elem) to hold n + 1. Returns 0 or -1. */
static int grow(void *arr, size_t *cap, size_t n, size_t elem)
{
	void **p = arr;
	size_t ncap;
	void *np;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	np = realloc(*p, ncap * elem);
	if (np == NULL)
		return -1;
	*p = np;
	*cap = ncap;
	return 0;
}

static int line_error(struct writer *w, unsigned long line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int line_error(struct writer *w, unsigned long line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s: line %lu: ", tktool_name(), w->in_name, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	putc('\n', stderr);
	return 1;
}

/* A failed TBRW call made for the .dat line `line`. */
static int api_error(struct writer *w, unsigned long line, const char *call, TBRW_U32 rc)
{
	char what[160];

	if (line > 0)
		snprintf(what, sizeof(what), "%s (for line %lu of %s)", call, line, w->in_name);
	else
		snprintf(what, sizeof(what), "%s", call);
	tbf_report(tktool_name(), w->out_name, w->ptr, what, rc);
	return 1;
}

static int oom(void)
{
	fprintf(stderr, "%s: out of memory\n", tktool_name());
	return 1;
}

static TBRW_SECTION_IDENTIFIER global_id(enum dat_section s)
{
	static const TBRW_SECTION_IDENTIFIER ids[DAT_N_GLOBAL_SECTIONS] = {
		TBRW_HARDWARE_SECTION, TBRW_SOFTWARE_SECTION, TBRW_PROCESS_THREAD_SECTION,
		TBRW_MODULE_SECTION, TBRW_USER_DEFINED_GLOBAL_SECTION, TBRW_VERSION_INFO_SECTION,
	};
	return ids[s];
}

static TBRW_STREAM_SECTION_IDENTIFIER stream_id(enum dat_section s)
{
	switch (s) {
	case DAT_S_event_description: return TBRW_EVENT_DESCRIPTION_SECTION;
	case DAT_S_data_description: return TBRW_DATA_DESCRIPTION_SECTION;
	case DAT_S_data: return TBRW_DATA_SECTION;
	case DAT_S_user_defined_stream: return TBRW_USER_DEFINED_STREAM_SECTION;
	default: return TBRW_STREAM_INFO_SECTION;
	}
}

/* Hardware lines: kept, with their parents, until the end of the section. */
static int add_hardware(struct writer *w, const struct dat_item *it)
{
	union {
		TBRW_NODE node;
		TBRW_CPU cpu;
		TBRW_CPU_ARCH arch;
		TBRW_CPUID_IA32 c32;
		TBRW_CPUID_IA64 c64;
	} u;
	struct hw_arch *parent;

	if (it->kind == DAT_K_system) {
		w->have_system = 1;
		return 0;
	}
	tbf_from_values(it->kind, it->values, &u, &w->strings); /* no strings: cannot fail */
	switch (it->kind) {
	case DAT_K_node:
		if (grow(&w->nodes, &w->c_nodes, w->n_nodes, sizeof(*w->nodes)) != 0)
			return oom();
		w->nodes[w->n_nodes].node = u.node;
		w->nodes[w->n_nodes].first = w->n_cpus;
		w->nodes[w->n_nodes].line = it->line;
		w->nodes[w->n_nodes++].n = 0;
		return 0;
	case DAT_K_cpu:
		if (grow(&w->cpus, &w->c_cpus, w->n_cpus, sizeof(*w->cpus)) != 0)
			return oom();
		w->cpus[w->n_cpus].cpu = u.cpu;
		w->cpus[w->n_cpus].first = w->n_archs;
		w->cpus[w->n_cpus++].n = 0;
		w->nodes[w->n_nodes - 1].n++;
		return 0;
	case DAT_K_cpu_arch:
		if (grow(&w->archs, &w->c_archs, w->n_archs, sizeof(*w->archs)) != 0)
			return oom();
		w->archs[w->n_archs].arch = u.arch;
		w->archs[w->n_archs].ia64 = -1;
		w->archs[w->n_archs].first = 0;
		w->archs[w->n_archs++].n = 0;
		w->cpus[w->n_cpus - 1].n++;
		return 0;
	default:
		break;
	}
	parent = &w->archs[w->n_archs - 1];
	if (it->kind == DAT_K_cpuid_ia32) {
		if (parent->ia64 == 1)
			return line_error(w, it->line, "a cpuid_ia32 line in an architecture with cpuid_ia64 lines");
		if (grow(&w->cpuid32, &w->c_cpuid32, w->n_cpuid32, sizeof(*w->cpuid32)) != 0)
			return oom();
		if (parent->ia64 < 0)
			parent->first = w->n_cpuid32;
		parent->ia64 = 0;
		w->cpuid32[w->n_cpuid32++] = u.c32;
	} else {
		if (parent->ia64 == 0)
			return line_error(w, it->line, "a cpuid_ia64 line in an architecture with cpuid_ia32 lines");
		if (grow(&w->cpuid64, &w->c_cpuid64, w->n_cpuid64, sizeof(*w->cpuid64)) != 0)
			return oom();
		if (parent->ia64 < 0)
			parent->first = w->n_cpuid64;
		parent->ia64 = 1;
		w->cpuid64[w->n_cpuid64++] = u.c64;
	}
	parent->n++;
	return 0;
}

/* The end of the hardware section: link the arrays and call TBRW_set_system(). */
static int set_system(struct writer *w, unsigned long line)
{
	TBRW_SYSTEM sys;
	TBRW_NODE *nodes;
	TBRW_CPU *cpus;
	TBRW_CPU_ARCH *archs;
	TBRW_U32 rc;
	size_t i;

	/* A node's CPUs are read back as node_num_available entries of its cpu_array. */
	for (i = 0; i < w->n_nodes; i++)
		if (w->nodes[i].n != w->nodes[i].node.node_num_available)
			return line_error(w, w->nodes[i].line, "node_num_available is %u but %zu cpu lines follow",
					  (unsigned)w->nodes[i].node.node_num_available, w->nodes[i].n);
	nodes = calloc(w->n_nodes + 1, sizeof(*nodes));
	cpus = calloc(w->n_cpus + 1, sizeof(*cpus));
	archs = calloc(w->n_archs + 1, sizeof(*archs));
	if (nodes == NULL || cpus == NULL || archs == NULL) {
		free(nodes), free(cpus), free(archs);
		return oom();
	}
	for (i = 0; i < w->n_archs; i++) {
		archs[i] = w->archs[i].arch;
		archs[i].arch_num_cpuid = (TBRW_U16)w->archs[i].n;
		if (w->archs[i].ia64 == 1)
			archs[i].cpuid_ia64_array = w->cpuid64 + w->archs[i].first;
		else if (w->archs[i].ia64 == 0)
			archs[i].cpuid_ia32_array = w->cpuid32 + w->archs[i].first;
	}
	for (i = 0; i < w->n_cpus; i++) {
		cpus[i] = w->cpus[i].cpu;
		cpus[i].num_cpu_arch_array = (TBRW_U32)w->cpus[i].n;
		cpus[i].cpu_arch_array = w->cpus[i].n ? archs + w->cpus[i].first : NULL;
	}
	for (i = 0; i < w->n_nodes; i++) {
		nodes[i] = w->nodes[i].node;
		nodes[i].cpu_array = w->nodes[i].n ? cpus + w->nodes[i].first : NULL;
	}
	memset(&sys, 0, sizeof(sys));
	sys.system_size = sizeof(sys);
	sys.system_num_nodes = (TBRW_U32)w->n_nodes;
	sys.node_array = w->n_nodes ? nodes : NULL;
	rc = TBRW_set_system(w->ptr, &sys);
	free(nodes), free(cpus), free(archs);
	w->n_nodes = w->n_cpus = w->n_archs = w->n_cpuid32 = w->n_cpuid64 = 0;
	return rc == VT_SUCCESS ? 0 : api_error(w, line, "TBRW_set_system", rc);
}

static int flush_event(struct writer *w, uint32_t stream)
{
	TBRW_U32 rc;

	if (!w->have_event)
		return 0;
	w->have_event = 0;
	w->event.event_num_details = (TBRW_U32)w->n_details;
	w->event.event_detail_array = w->n_details ? w->details : NULL;
	rc = TBRW_add_event(w->ptr, stream, &w->event);
	w->n_details = 0;
	tbf_strings_reset(&w->event_strings);
	return rc == VT_SUCCESS ? 0 : api_error(w, w->event_line, "TBRW_add_event", rc);
}

static int check_bind(struct writer *w, const struct dat_item *it);

static int on_record(struct writer *w, const struct dat_item *it)
{
	union {
		TBRW_HOST host;
		TBRW_OS os;
		TBRW_APPLICATION app;
		TBRW_PID pid;
		TBRW_TID tid;
		TBRW_MODULE module;
		TBRW_VERSION_INFO vi;
		TBRW_STREAM_INFO si;
		TBRW_EVENT_DETAIL detail;
		TBRW_SAMPREC_DESC_ENTRY desc;
	} u;
	const char *call = "";
	TBRW_U32 rc;

	switch (it->kind) {
	case DAT_K_system: case DAT_K_node: case DAT_K_cpu: case DAT_K_cpu_arch:
	case DAT_K_cpuid_ia32: case DAT_K_cpuid_ia64:
		return add_hardware(w, it);
	case DAT_K_bytes:
		while (w->c_user - w->n_user < it->n_bytes) {
			size_t ncap = w->c_user ? w->c_user * 2 : 4096;
			unsigned char *nb = realloc(w->user, ncap);

			if (nb == NULL)
				return oom();
			w->user = nb;
			w->c_user = ncap;
		}
		memcpy(w->user + w->n_user, it->bytes, it->n_bytes);
		w->n_user += it->n_bytes;
		return 0;
	case DAT_K_record:
		if (it->n_bytes > UINT32_MAX)
			return line_error(w, it->line, "record too large");
		rc = TBRW_add_data(w->ptr, it->stream, (TBRW_U32)it->n_bytes, (void *)it->bytes);
		w->n_records++;
		return rc == VT_SUCCESS ? 0 : api_error(w, it->line, "TBRW_add_data", rc);
	case DAT_K_bind:
		return check_bind(w, it);
	case DAT_K_event:
		if (flush_event(w, it->stream) != 0)
			return 1;
		rc = tbf_from_values(it->kind, it->values, &w->event, &w->event_strings);
		if (rc != VT_SUCCESS)
			return api_error(w, it->line, "converting a string", rc);
		w->have_event = 1;
		w->event_line = it->line;
		return 0;
	case DAT_K_detail:
		if (grow(&w->details, &w->c_details, w->n_details, sizeof(*w->details)) != 0)
			return oom();
		tbf_from_values(it->kind, it->values, &w->details[w->n_details++], &w->strings);
		return 0;
	default:
		break;
	}
	rc = tbf_from_values(it->kind, it->values, &u, &w->strings);
	if (rc != VT_SUCCESS) {
		tbf_strings_reset(&w->strings);
		return api_error(w, it->line, "converting a string", rc);
	}
	switch (it->kind) {
	case DAT_K_host:
		call = "TBRW_set_host", rc = TBRW_set_host(w->ptr, &u.host);
		break;
	case DAT_K_os:
		call = "TBRW_set_os", rc = TBRW_set_os(w->ptr, &u.os);
		break;
	case DAT_K_application:
		call = "TBRW_set_application", rc = TBRW_set_application(w->ptr, &u.app);
		break;
	case DAT_K_process:
		call = "TBRW_add_process", rc = TBRW_add_process(w->ptr, &u.pid);
		break;
	case DAT_K_thread:
		call = "TBRW_add_thread", rc = TBRW_add_thread(w->ptr, &u.tid);
		break;
	case DAT_K_module:
		call = "TBRW_add_module", rc = TBRW_add_module(w->ptr, &u.module);
		break;
	case DAT_K_version_info:
		call = "TBRW_set_version_info", rc = TBRW_set_version_info(w->ptr, &u.vi);
		break;
	case DAT_K_stream_info:
		call = "TBRW_set_stream_info", rc = TBRW_set_stream_info(w->ptr, it->stream, &u.si);
		break;
	case DAT_K_desc:
		call = "TBRW_add_data_descriptor_entry";
		rc = TBRW_add_data_descriptor_entry(w->ptr, it->stream, &u.desc);
		break;
	default:
		break;
	}
	tbf_strings_reset(&w->strings);
	return rc == VT_SUCCESS ? 0 : api_error(w, it->line, call, rc);
}

/* ---- bind results and derived process/thread sections ---- */

/* Copies up to BIND_BATCH bind entries, then stops the enumeration. */
static TBRW_U32 fetch_bind(const void *data, TBRW_U32 ds, TBRW_U64 n, const DATA_BIND_STRUCT *b, TBRW_U32 bs, void *ud)
{
	struct writer *w = ud;
	TBRW_U64 k = BIND_BATCH - w->bind_n < n ? BIND_BATCH - w->bind_n : n;

	(void)data, (void)ds, (void)bs;
	memcpy(w->bind_got + w->bind_n, b, (size_t)k * sizeof(*b));
	w->bind_n += k;
	return w->bind_n < BIND_BATCH ? 1 : 0;
}

/* A bind line: the entry TBRW_dobind gave the same record must be the same. */
static int check_bind(struct writer *w, const struct dat_item *it)
{
	const DATA_BIND_STRUCT *got;
	TBRW_U32 rc;

	if (w->bind_next >= w->n_records)
		return line_error(w, it->line, "more bind lines than the %llu data records of stream %u",
				  (unsigned long long)w->n_records, (unsigned)it->stream);
	if (w->bind_next < w->bind_first || w->bind_next >= w->bind_first + w->bind_n) {
		if (w->bind_got == NULL && (w->bind_got = malloc(BIND_BATCH * sizeof(*w->bind_got))) == NULL)
			return oom();
		w->bind_first = w->bind_next;
		w->bind_n = 0;
		rc = TBRW_bind_enumerate_data(w->ptr, it->stream, fetch_bind, w, w->bind_next);
		if (rc != VT_SUCCESS)
			return api_error(w, it->line, "TBRW_bind_enumerate_data", rc);
		if (w->bind_n == 0)
			return line_error(w, it->line, "no bind result for record %llu", (unsigned long long)w->bind_next);
	}
	got = &w->bind_got[w->bind_next - w->bind_first];
	if (got->module_index != it->values->num[0] || got->pid_index != it->values->num[1] ||
	    got->tid_index != it->values->num[2])
		return line_error(w, it->line,
				  "record %llu binds to module 0x%llx, process 0x%llx, thread 0x%llx here; TBRW_dobind gives "
				  "0x%llx, 0x%llx, 0x%llx (leave the bind lines out to take its result)",
				  (unsigned long long)w->bind_next, (unsigned long long)it->values->num[0],
				  (unsigned long long)it->values->num[1], (unsigned long long)it->values->num[2],
				  (unsigned long long)got->module_index, (unsigned long long)got->pid_index,
				  (unsigned long long)got->tid_index);
	w->bind_next++;
	return 0;
}

/* The lines of the process/thread section as the library has it now, as .dat text. */
struct pt_print {
	TBRW_PTR ptr;
	FILE *out;
	TBRW_U32 rc;
};

static TBRW_U32 pt_print_one(struct pt_print *pp, enum dat_kind kind, const void *rec)
{
	struct tbf_strings sb = { NULL, 0, 0 };
	struct dat_values v;

	pp->rc = tbf_to_values(pp->ptr, kind, rec, &v, &sb);
	if (pp->rc == VT_SUCCESS)
		dat_print_values(pp->out, kind, &v);
	tbf_strings_reset(&sb);
	return pp->rc == VT_SUCCESS ? 1 : 0;
}

static TBRW_U32 pt_print_pid(TBRW_PID *p, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	for (TBRW_U32 i = 0; i < n; i++)
		if (!pt_print_one(ud, DAT_K_process, (const char *)p + (size_t)i * (size / n)))
			return 0;
	return 1;
}

static TBRW_U32 pt_print_tid(TBRW_TID *t, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	for (TBRW_U32 i = 0; i < n; i++)
		if (!pt_print_one(ud, DAT_K_thread, (const char *)t + (size_t)i * (size / n)))
			return 0;
	return 1;
}

/* At the end: the process/thread section that binding derived must be the .dat's. */
static int check_derived_pt(struct writer *w)
{
	struct pt_print pp = { w->ptr, NULL, VT_SUCCESS };
	char *text = NULL;
	size_t len = 0;
	TBRW_U32 rc;
	int same;

	if (!w->pt_derived)
		return 0;
	fclose(w->pt_text);
	w->pt_text = NULL;
	if (!w->any_bound)
		return line_error(w, w->pt_line, "the process/thread section is marked derived, but no stream has a "
						 "bind section to derive it");
	pp.out = open_memstream(&text, &len);
	if (pp.out == NULL)
		return oom();
	rc = TBRW_enumerate_processes(w->ptr, pt_print_pid, &pp, 0);
	if (rc == VT_SUCCESS && pp.rc == VT_SUCCESS)
		rc = TBRW_enumerate_threads(w->ptr, pt_print_tid, &pp, 0);
	if (pp.rc != VT_SUCCESS)
		rc = pp.rc;
	fclose(pp.out);
	if (rc != VT_SUCCESS) {
		free(text);
		return api_error(w, w->pt_line, "reading the derived process/thread section", rc);
	}
	same = len == w->pt_expect_len && memcmp(text, w->pt_expect, len) == 0;
	free(text);
	if (!same)
		return line_error(w, w->pt_line, "the process/thread section TBRW_dobind derives differs from the "
						 "one given (leave out 'derived' to write it as given)");
	return 0;
}

/* Opens the process/thread section for writing, once its first line shows it is not derived. */
static int open_pt(struct writer *w, unsigned long line)
{
	TBRW_U32 rc;

	w->pt_pending = 0;
	rc = TBRW_writing_section(w->ptr, TBRW_PROCESS_THREAD_SECTION);
	return rc == VT_SUCCESS ? 0 : api_error(w, line, "TBRW_writing_section", rc);
}

static int on_item(void *ud, const struct dat_item *it)
{
	struct writer *w = ud;
	TBRW_U32 rc = VT_SUCCESS;
	const char *call = "";

	if (tktool_stop) {
		fprintf(stderr, "%s: %s: interrupted at line %lu\n", tktool_name(), w->in_name, it->line);
		return 1;
	}
	if (w->progress.active && it->type == DAT_RECORD && (it->line & 1023) == 0) {
		off_t at = ftello(w->in);

		if (at > 0)
			tktool_progress_update(&w->progress, (uint64_t)at);
	}
	if (it->type == DAT_RECORD && it->section == DAT_S_process_thread) {
		if (w->pt_pending && it->kind == DAT_K_derived) {
			w->pt_pending = 0;
			w->pt_derived = 1;
			w->pt_line = it->line;
			w->pt_text = open_memstream(&w->pt_expect, &w->pt_expect_len);
			return w->pt_text == NULL ? oom() : 0;
		}
		if (w->pt_pending && open_pt(w, it->line) != 0)
			return 1;
		if (w->pt_derived) {
			/* kept to be compared with what binding derives */
			dat_print_values(w->pt_text, it->kind, it->values);
			return 0;
		}
	}
	switch (it->type) {
	case DAT_STREAM_BEGIN:
		w->n_records = 0;
		call = "TBRW_writing_stream", rc = TBRW_writing_stream(w->ptr, it->stream);
		break;
	case DAT_STREAM_END:
		call = "TBRW_done_stream", rc = TBRW_done_stream(w->ptr, it->stream);
		break;
	case DAT_SECTION_BEGIN:
		w->n_user = 0;
		if (it->section == DAT_S_process_thread) {
			w->pt_pending = 1; /* opened at its first line: it may be a derived one */
			return 0;
		}
		if (it->section == DAT_S_bind) {
			/* the stream was bound: bind it again, its lines (if any) must agree */
			w->bind_next = w->bind_first = w->bind_n = 0;
			w->any_bound = 1;
			call = "TBRW_dobind", rc = TBRW_dobind(w->ptr, it->stream);
			break;
		}
		if (it->section < DAT_N_GLOBAL_SECTIONS)
			call = "TBRW_writing_section", rc = TBRW_writing_section(w->ptr, global_id(it->section));
		else
			call = "TBRW_writing_stream_section",
			rc = TBRW_writing_stream_section(w->ptr, it->stream, stream_id(it->section));
		break;
	case DAT_SECTION_END:
		if (it->section == DAT_S_process_thread) {
			if (w->pt_derived)
				return 0;
			if (w->pt_pending && open_pt(w, it->line) != 0)
				return 1;
		}
		if (it->section == DAT_S_bind) {
			if (w->bind_next != 0 && w->bind_next != w->n_records)
				return line_error(w, it->line, "%llu bind lines for the %llu data records of stream %u",
						  (unsigned long long)w->bind_next, (unsigned long long)w->n_records,
						  (unsigned)it->stream);
			return 0;
		}
		if (it->section == DAT_S_hardware && w->have_system && set_system(w, it->line) != 0)
			return 1;
		w->have_system = 0;
		if (it->section == DAT_S_event_description && flush_event(w, it->stream) != 0)
			return 1;
		if (it->section == DAT_S_user_defined_global) {
			rc = TBRW_set_user_defined_global(w->ptr, (TBRW_U32)w->n_user, w->user);
			if (rc != VT_SUCCESS)
				return api_error(w, it->line, "TBRW_set_user_defined_global", rc);
		}
		if (it->section == DAT_S_user_defined_stream) {
			rc = TBRW_set_user_defined_stream(w->ptr, it->stream, (TBRW_U32)w->n_user, w->user);
			if (rc != VT_SUCCESS)
				return api_error(w, it->line, "TBRW_set_user_defined_stream", rc);
		}
		if (it->section < DAT_N_GLOBAL_SECTIONS)
			call = "TBRW_done_section", rc = TBRW_done_section(w->ptr, global_id(it->section));
		else
			call = "TBRW_done_stream_section",
			rc = TBRW_done_stream_section(w->ptr, it->stream, stream_id(it->section));
		break;
	case DAT_RECORD:
		return on_record(w, it);
	}
	return rc == VT_SUCCESS ? 0 : api_error(w, it->line, call, rc);
}

static void free_writer(struct writer *w)
{
	tbf_strings_reset(&w->strings);
	tbf_strings_reset(&w->event_strings);
	free(w->nodes), free(w->cpus), free(w->archs), free(w->cpuid32), free(w->cpuid64);
	free(w->details);
	free(w->user);
	if (w->pt_text != NULL)
		fclose(w->pt_text);
	free(w->pt_expect);
	free(w->bind_got);
}

int tbf_load_dat(FILE *in, TBRW_PTR ptr, const char *in_name, const char *out_name, uint64_t in_size)
{
	struct writer w;
	char err[512];
	int parsed;

	memset(&w, 0, sizeof(w));
	w.ptr = ptr;
	w.in = in;
	w.in_name = in_name;
	w.out_name = out_name;
	tktool_progress_begin(&w.progress, "reading", in_size);
	parsed = dat_parse(in, on_item, &w, err, sizeof(err));
	tktool_progress_end(&w.progress);
	if (parsed == -1) {
		if (tktool_stop)
			fprintf(stderr, "%s: %s: interrupted\n", tktool_name(), in_name);
		else
			fprintf(stderr, "%s: %s: %s\n", tktool_name(), in_name, err);
	}
	if (parsed == 0 && tktool_stop) {
		fprintf(stderr, "%s: %s: interrupted\n", tktool_name(), in_name);
		parsed = 1;
	}
	if (parsed == 0)
		parsed = check_derived_pt(&w);
	free_writer(&w);
	return parsed == 0 ? 0 : 1;
}
