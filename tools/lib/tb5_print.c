/* SPDX-License-Identifier: MIT */
/*
 * tb5_print.c: the text of print_tb5 (docs/print_tb5.md) for the items the record walker
 * hands over: sections field by field with the names of their constants, data records
 * decoded through the stream's data descriptors, the bind result. In the tools library.
 */
#include "tb5_print.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tbrw_fields.h"
#include "tracekit/common.h"
#include "tracekit/samprec_shared.h"

/* ---- names of the constants ---- */

struct name {
	uint64_t value;
	const char *name;
};
#define N(x) { x, #x }

static const char *lookup(const struct name *names, size_t n, uint64_t value)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i].value == value)
			return names[i].name;
	return NULL;
}
#define LOOKUP(table, v) lookup(table, sizeof(table) / sizeof(table[0]), v)

#include "print_tb5_names.h"

/* Prints " (NAME)" or " (FLAG|FLAG)" after a value whose field has named constants. */
static void annotate(FILE *out, const char *field, uint64_t v)
{
	const char *name = tb5_value_name(field, v);
	char flags[512];

	if (name != NULL) {
		fprintf(out, " (%s)", name);
		return;
	}
	if (tb5_flag_names(field, v, flags, sizeof(flags)))
		fprintf(out, " (%s)", flags);
}

/* ---- global sections and stream headers ---- */

static int depth_of(enum dat_kind kind)
{
	switch (kind) {
	case DAT_K_node: return 2;
	case DAT_K_cpu: return 3;
	case DAT_K_cpu_arch: return 4;
	case DAT_K_cpuid_ia32: case DAT_K_cpuid_ia64: return 5;
	case DAT_K_detail: return 2;
	default: return 1;
	}
}

static void print_filetime(FILE *out, uint64_t ft)
{
	/* 100 ns intervals since 1601-01-01 UTC */
	const uint64_t unix_epoch = 116444736000000000ULL;
	struct tm tm;
	time_t t;

	fprintf(out, "0x%" PRIx64, ft);
	if (ft < unix_epoch || ft - unix_epoch > 253402300799ULL * 10000000ULL)
		return;
	t = (time_t)((ft - unix_epoch) / 10000000ULL);
	if (gmtime_r(&t, &tm) != NULL)
		fprintf(out, " (%04d-%02d-%02d %02d:%02d:%02d.%07" PRIu64 " UTC)", tm.tm_year + 1900, tm.tm_mon + 1,
			tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (uint64_t)((ft - unix_epoch) % 10000000ULL));
}

static void print_values(struct tbf_printer *p, enum dat_kind kind, const struct dat_values *v)
{
	const struct dat_field *fields;
	size_t n = dat_kind_fields(kind, &fields), i;
	int depth = depth_of(kind) + p->in_stream_section;

	fprintf(p->out, "%*s%s %u\n", 2 * depth, "", dat_kind_name(kind), p->index[kind]++);
	for (i = 0; i < n; i++) {
		fprintf(p->out, "%*s%-28s ", 2 * depth + 2, "", fields[i].name);
		switch (fields[i].type) {
		case DAT_STR:
			dat_print_string(p->out, v->str[i]);
			break;
		case DAT_S64:
			fprintf(p->out, "%" PRId64, (int64_t)v->num[i]);
			break;
		case DAT_FT:
			print_filetime(p->out, v->num[i]);
			break;
		case DAT_U64:
			fprintf(p->out, "0x%" PRIx64, v->num[i]);
			break;
		default:
			fprintf(p->out, "%" PRIu64, v->num[i]);
			if (v->num[i] > 9)
				fprintf(p->out, " (0x%" PRIx64 ")", v->num[i]);
			break;
		}
		if (fields[i].type != DAT_STR)
			annotate(p->out, fields[i].name, v->num[i]);
		putc('\n', p->out);
	}
}

static void keep_desc(struct tbf_printer *p, const struct dat_values *v)
{
	const struct dat_field *fields;
	size_t n = dat_kind_fields(DAT_K_desc, &fields), i;
	struct desc d;

	if (p->n_descs == MAX_DESCS)
		return;
	memset(&d, 0, sizeof(d));
	for (i = 0; i < n; i++) {
		if (strcmp(fields[i].name, "desc_offset") == 0)
			d.offset = (uint32_t)v->num[i];
		else if (strcmp(fields[i].name, "desc_data_size") == 0)
			d.size = (uint32_t)v->num[i];
		else if (strcmp(fields[i].name, "desc_type") == 0)
			d.type = (uint16_t)v->num[i];
		else if (strcmp(fields[i].name, "desc_subtype") == 0)
			d.subtype = (uint16_t)v->num[i];
		else if (strcmp(fields[i].name, "desc_name") == 0 && v->str[i] != NULL)
			d.name = strdup(v->str[i]);
	}
	p->descs[p->n_descs++] = d;
}

void tbf_printer_clear(struct tbf_printer *p)
{
	while (p->n_descs > 0)
		free(p->descs[--p->n_descs].name);
}

/* ---- data records ---- */

static void print_hex(FILE *out, const unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(out, "%02x", b[i]);
}

static uint64_t little_endian(const unsigned char *b, size_t n)
{
	uint64_t x = 0;

	while (n-- > 0)
		x = (x << 8) | b[n];
	return x;
}

static void print_sample_record(FILE *out, const unsigned char *b)
{
	TBRW_SampleRecordPC pc;

	memcpy(&pc, b, sizeof(pc));
	if (pc.IA64PC)
		fprintf(out, "iip=0x%" PRIx64 " ipsr=0x%" PRIx64, (uint64_t)pc.iip, (uint64_t)pc.ipsr);
	else
		fprintf(out, "eip=0x%" PRIx32 " eflags=0x%" PRIx32 " csd=0x%08" PRIx32 ":0x%08" PRIx32, (uint32_t)pc.eip,
			(uint32_t)pc.eflags, (uint32_t)pc.csd.highWord, (uint32_t)pc.csd.lowWord);
	fprintf(out, " cs=0x%x cpuNum=%u codeMode=%u tid=%" PRIu32 " pidRecIndex=%" PRIu32 " mrIndex=%u eventIndex=%u"
		" tidIsRaw=%u IA64PC=%u pidRecIndexRaw=%u mrIndexNone=%u",
		(unsigned)pc.cs, (unsigned)pc.cpuNum, (unsigned)pc.codeMode, (uint32_t)pc.tid, (uint32_t)pc.pidRecIndex,
		(unsigned)pc.mrIndex, (unsigned)pc.eventIndex, (unsigned)pc.tidIsRaw, (unsigned)pc.IA64PC,
		(unsigned)pc.pidRecIndexRaw, (unsigned)pc.mrIndexNone);
}

static void print_record(struct tbf_printer *p, const unsigned char *b, size_t n)
{
	size_t i;

	fprintf(p->out, "    record %" PRIu64 "\n", p->n_printed);
	for (i = 0; i < p->n_descs; i++) {
		const struct desc *d = &p->descs[i];

		fprintf(p->out, "      %-20s ", d->name != NULL ? d->name : "(no name)");
		if ((uint64_t)d->offset + d->size > n || d->size == 0) {
			fprintf(p->out, "(outside the %zu-byte record)\n", n);
			continue;
		}
		if (d->type == ST_LEGACY_SAMPLE_RECORD && d->size >= sizeof(TBRW_SampleRecordPC))
			print_sample_record(p->out, b + d->offset);
		else if (d->size == 1 || d->size == 2 || d->size == 4 || d->size == 8)
			fprintf(p->out, "0x%" PRIx64, little_endian(b + d->offset, d->size));
		else
			print_hex(p->out, b + d->offset, d->size);
		putc('\n', p->out);
	}
	if (p->hex || p->n_descs == 0) {
		fprintf(p->out, "      %-20s ", "bytes");
		print_hex(p->out, b, n);
		putc('\n', p->out);
	}
}

static void print_desc_summary(struct tbf_printer *p)
{
	size_t i;

	if (p->n_descs == 0)
		return;
	fprintf(p->out, "    layout:");
	for (i = 0; i < p->n_descs; i++) {
		const struct desc *d = &p->descs[i];
		const char *t = tb5_value_name("desc_type", d->type);
		const char *st = tb5_value_name("desc_subtype", d->subtype);

		fprintf(p->out, "%s %s@%" PRIu32 "+%" PRIu32, i ? "," : "", d->name ? d->name : "?", d->offset, d->size);
		if (t != NULL)
			fprintf(p->out, " %s", t);
		if (st != NULL && d->subtype != 0)
			fprintf(p->out, "/%s", st);
	}
	putc('\n', p->out);
}

/* ---- --bind ---- */

struct bind_ctx {
	struct tbf_printer *p;
	TBRW_PTR ptr;
	uint64_t index;
	int failed;
	const char *call;
	TBRW_U32 rc;
};

static void print_index(FILE *out, const char *what, TBRW_U64 index)
{
	if (index == TBRW_BIND_NO_INDEX)
		fprintf(out, " %s=none", what);
	else
		fprintf(out, " %s=%" PRIu64, what, (uint64_t)index);
}

static TBRW_U32 bind_data_cb(const void *data, TBRW_U32 size, TBRW_U64 n, const DATA_BIND_STRUCT *bind, TBRW_U32 bsize,
			     void *ud)
{
	struct bind_ctx *b = ud;
	struct tbf_strings sb = { NULL, 0, 0 };
	TBRW_U64 i;

	(void)data, (void)size, (void)bsize;
	for (i = 0; i < n; i++, b->index++) {
		const TBRW_MODULE *m = NULL;
		const char *name = NULL;

		if (b->index >= b->p->max_records)
			return 0; /* FALSE: enough */
		fprintf(b->p->out, "    record %" PRIu64 ":", (uint64_t)b->index);
		print_index(b->p->out, "module", bind[i].module_index);
		if (bind[i].module_index != TBRW_BIND_NO_INDEX &&
		    TBRW_get_one_module(b->ptr, bind[i].module_index, &m) == VT_SUCCESS && m != NULL &&
		    tbf_string(b->ptr, &m->module_name, &sb, &name) == VT_SUCCESS && name != NULL) {
			fputc(' ', b->p->out);
			dat_print_string(b->p->out, name);
		}
		tbf_strings_reset(&sb);
		print_index(b->p->out, "process", bind[i].pid_index);
		print_index(b->p->out, "thread", bind[i].tid_index);
		fputc('\n', b->p->out);
	}
	return 1;
}

static TBRW_U32 bind_array_cb(struct bind_ctx *b, enum dat_kind kind, const void *data, TBRW_U32 size, TBRW_U32 n)
{
	struct tbf_strings sb = { NULL, 0, 0 };
	struct dat_values v;
	TBRW_U32 i, rc;

	for (i = 0; n > 0 && i < n; i++) {
		rc = tbf_to_values(b->ptr, kind, (const char *)data + (size_t)i * (size / n), &v, &sb);
		if (rc != VT_SUCCESS) {
			tbf_strings_reset(&sb);
			b->call = "TBRW_convert_uniqueid_to_string";
			b->rc = rc;
			b->failed = 1;
			return 0x7fff0003;
		}
		print_values(b->p, kind, &v);
		tbf_strings_reset(&sb);
	}
	return 1;
}

static TBRW_U32 bind_pid_cb(TBRW_PID *data, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	return bind_array_cb(ud, DAT_K_process, data, size, n);
}

static TBRW_U32 bind_tid_cb(TBRW_TID *data, TBRW_U32 size, TBRW_U32 n, void *ud)
{
	return bind_array_cb(ud, DAT_K_thread, data, size, n);
}

/*
 * Binds every stream (selected by -s) in memory and prints the result: the process/thread
 * section as binding left it, then each record's module, process and thread indexes.
 */
int tbf_print_bind(struct tbf_printer *p, TBRW_PTR ptr, const char **call, TBRW_U32 *failed_rc)
{
	struct bind_ctx b;
	TBRW_U32 n_streams = 0, s, rc;
	const TBRW_CHAR *text;
	int printed_pt = 0;

	memset(&b, 0, sizeof(b));
	b.p = p;
	b.ptr = ptr;
	rc = TBRW_get_number_data_streams(ptr, &n_streams);
	if (rc != VT_SUCCESS) {
		*call = "TBRW_get_number_data_streams", *failed_rc = rc;
		return -1;
	}
	for (s = 0; s < n_streams; s++) {
		if (p->only_stream >= 0 && (long)s != p->only_stream)
			continue;
		fprintf(p->out, "%sbind stream %" PRIu32 "\n", p->printed ? "\n" : "", s);
		p->printed = 1;
		rc = TBRW_dobind(ptr, s);
		if (rc != VT_SUCCESS) {
			if (TBRW_error_string(rc, &text) != VT_SUCCESS || text == NULL)
				text = L"?";
			fprintf(p->out, "  not bound: %ls\n", text);
			continue;
		}
		if (!printed_pt) {
			/* The process/thread section binding uses (derived if the file had none). */
			printed_pt = 1;
			memset(p->index, 0, sizeof(p->index));
			p->in_stream_section = 1;
			fprintf(p->out, "  process_thread section\n");
			rc = TBRW_enumerate_processes(ptr, bind_pid_cb, &b, 0);
			if (rc == VT_SUCCESS)
				rc = TBRW_enumerate_threads(ptr, bind_tid_cb, &b, 0);
			if (b.failed) {
				*call = b.call, *failed_rc = b.rc;
				return -1;
			}
			if (rc != VT_SUCCESS && !tbf_absent(rc)) {
				*call = "TBRW_enumerate_processes", *failed_rc = rc;
				return -1;
			}
		}
		fprintf(p->out, "  data bind\n");
		b.index = 0;
		rc = TBRW_bind_enumerate_data(ptr, s, bind_data_cb, &b, 0);
		if (rc != VT_SUCCESS) {
			*call = "TBRW_bind_enumerate_data", *failed_rc = rc;
			return -1;
		}
	}
	return ferror(p->out) ? -2 : 0;
}

/* ---- the walk ---- */

int tbf_print_item(void *ud, const struct dat_item *it)
{
	struct tbf_printer *p = ud;

	if (it->type == DAT_STREAM_BEGIN)
		p->skipping = p->only_stream >= 0 && (long)it->stream != p->only_stream;
	if (p->only_stream >= 0 && (p->skipping || (it->type != DAT_STREAM_BEGIN && it->type != DAT_STREAM_END &&
						     it->section < DAT_N_GLOBAL_SECTIONS))) {
		if (it->type == DAT_RECORD && (it->kind == DAT_K_record || it->kind == DAT_K_bind))
			return TBF_SKIP_RECORDS;
		return 0;
	}
	switch (it->type) {
	case DAT_STREAM_BEGIN:
		fprintf(p->out, "%sstream %" PRIu32 "\n", p->printed ? "\n" : "", it->stream);
		p->printed = 1;
		tbf_printer_clear(p);
		break;
	case DAT_STREAM_END:
		break;
	case DAT_SECTION_BEGIN:
		memset(p->index, 0, sizeof(p->index));
		p->in_stream_section = it->section >= DAT_N_GLOBAL_SECTIONS;
		if (it->section < DAT_N_GLOBAL_SECTIONS)
			fprintf(p->out, "%s%s section\n", p->printed ? "\n" : "", dat_section_name(it->section));
		else
			fprintf(p->out, "  %s section\n", dat_section_name(it->section));
		p->printed = 1;
		p->n_printed = 0;
		p->record_size = 0;
		if (it->section == DAT_S_data)
			print_desc_summary(p);
		break;
	case DAT_SECTION_END:
		if (it->section == DAT_S_data || it->section == DAT_S_bind) {
			fprintf(p->out, "    %zu record%s", it->n_bytes, it->n_bytes == 1 ? "" : "s");
			if (p->record_size > 0)
				fprintf(p->out, " of %zu bytes", p->record_size);
			if (it->n_bytes > p->n_printed)
				fprintf(p->out, ", %" PRIu64 " printed", p->n_printed);
			putc('\n', p->out);
		}
		break;
	case DAT_RECORD:
		if (it->kind == DAT_K_bytes) {
			fprintf(p->out, "  %zu bytes: ", it->n_bytes);
			print_hex(p->out, it->bytes, it->n_bytes < 256 ? it->n_bytes : 256);
			fprintf(p->out, "%s\n", it->n_bytes > 256 ? "..." : "");
			break;
		}
		if (it->kind == DAT_K_record) {
			p->record_size = it->n_bytes;
			if (p->n_printed >= p->max_records)
				return TBF_SKIP_RECORDS;
			print_record(p, it->bytes, it->n_bytes);
			p->n_printed++;
			break;
		}
		if (it->kind == DAT_K_system) {
			fprintf(p->out, "  system\n");
			break;
		}
		if (it->kind == DAT_K_derived) {
			fprintf(p->out, "  derived by TBRW_dobind from the modules and samples\n");
			break;
		}
		if (it->kind == DAT_K_bind) {
			/* the bind result stored in the file, as --bind prints it */
			if (p->n_printed >= p->max_records)
				return TBF_SKIP_RECORDS;
			fprintf(p->out, "    record %" PRIu64 ":", p->n_printed);
			print_index(p->out, "module", it->values->num[0]);
			print_index(p->out, "process", it->values->num[1]);
			print_index(p->out, "thread", it->values->num[2]);
			fputc('\n', p->out);
			p->n_printed++;
			break;
		}
		if (it->kind == DAT_K_desc)
			keep_desc(p, it->values);
		print_values(p, it->kind, it->values);
		break;
	}
	return ferror(p->out) ? -2 : 0;
}

