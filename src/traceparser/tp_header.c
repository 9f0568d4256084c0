/* SPDX-License-Identifier: MIT */
/*
 * The .kev header and syspage.
 *
 * The header is "TRACE_HEADER_BEGIN::" followed by "TRACE_" KEY "::" VALUE entries with
 * nothing between them (a value runs up to the next "TRACE_", so it may hold any other
 * bytes) and ends with "TRACE_HEADER_END::". Exactly TRACE_SYSPAGE_LEN bytes of syspage
 * follow, then the events. Every key is kept, unknown (user) keys included, in file
 * order; when a key repeats, the last value wins, as in QNX's libtraceparser.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/tk_bytes.h"
#include "traceparser/tp_internal.h"

#define BEGIN_KEY "TRACE_HEADER_BEGIN::"
#define BEGIN_SEARCH 4096u /* how far into the file the header may start */

static const char *const known_keys[] = {
	"HEADER_BEGIN", "FILE_NAME", "DATE", "VER_MAJOR", "VER_MINOR", "LITTLE_ENDIAN",
	"BIG_ENDIAN", "MIDDLE_ENDIAN", "ENCODING", "BOOT_DATE", "CYCLES_PER_SEC", "CPU_NUM",
	"SYSNAME", "NODENAME", "SYS_RELEASE", "SYS_VERSION", "MACHINE", "SYSPAGE_LEN",
	"HEADER_END",
};

const char *tk__tp_known_key(unsigned index)
{
	return index < sizeof(known_keys) / sizeof(known_keys[0]) ? known_keys[index] : NULL;
}

void tk__tp_free_header(struct traceparser_state *st)
{
	unsigned i;

	for (i = 0; i < st->n_attrs; i++) {
		free(st->attrs[i].key);
		free(st->attrs[i].value);
	}
	free(st->attrs);
	st->attrs = NULL;
	st->n_attrs = 0;
	free(st->syspage);
	st->syspage = NULL;
	st->syspage_len = 0;
}

const struct tp_attr *tk__tp_find_attr(const struct traceparser_state *st, const char *key)
{
	unsigned i = st->n_attrs;

	while (i-- > 0) {
		if (strcmp(st->attrs[i].key, key) == 0)
			return &st->attrs[i];
	}
	return NULL;
}

static const unsigned char *find_bytes(const unsigned char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	const unsigned char *p = hay, *end = hay + len;

	while ((size_t)(end - p) >= n) {
		const unsigned char *c = memchr(p, needle[0], (size_t)(end - p) - n + 1);
		if (c == NULL)
			return NULL;
		if (memcmp(c, needle, n) == 0)
			return c;
		p = c + 1;
	}
	return NULL;
}

static int add_attr(struct traceparser_state *st, const unsigned char *key, size_t key_len,
		    const unsigned char *value, size_t value_len, uint64_t offset)
{
	struct tp_attr *a;

	if (st->n_attrs % 16 == 0) {
		struct tp_attr *na = realloc(st->attrs, (st->n_attrs + 16) * sizeof(*na));
		if (na == NULL)
			return -1;
		st->attrs = na;
	}
	a = &st->attrs[st->n_attrs];
	a->key = malloc(key_len + 1);
	a->value = malloc(value_len + 1);
	if (a->key == NULL || a->value == NULL) {
		free(a->key);
		free(a->value);
		return -1;
	}
	memcpy(a->key, key, key_len);
	a->key[key_len] = '\0';
	memcpy(a->value, value, value_len);
	a->value[value_len] = '\0';
	a->value_len = (unsigned)value_len;
	a->offset = offset;
	st->n_attrs++;
	return 0;
}

enum { PARSE_OK, PARSE_MORE, PARSE_ERROR };

/*
 * Parses the header text in buf[0..len), which starts at file offset `base`. Returns
 * PARSE_OK with *end set to the offset after "TRACE_HEADER_END::", PARSE_MORE when more
 * bytes are needed, or PARSE_ERROR.
 */
static int parse_header(struct traceparser_state *st, const unsigned char *buf, size_t len, int at_end,
			uint64_t base, size_t *end)
{
	const unsigned char *p, *lim = buf + len, *begin;

	tk__tp_free_header(st);
	begin = find_bytes(buf, len < BEGIN_SEARCH ? len : BEGIN_SEARCH, BEGIN_KEY);
	if (begin == NULL) {
		if (!at_end && len < BEGIN_SEARCH)
			return PARSE_MORE;
		if (len == 0)
			tk__tp_fail_at(st, _TRACEPARSER_WRONG_H_KEYWORD, EINVAL, base, "the file is empty: no header");
		else
			tk__tp_fail_at(st, _TRACEPARSER_WRONG_H_KEYWORD, EINVAL, base,
				       "not a .kev trace file: no TRACE_HEADER_BEGIN:: in its first %zu bytes",
				       len < BEGIN_SEARCH ? len : (size_t)BEGIN_SEARCH);
		return PARSE_ERROR;
	}
	p = find_bytes(begin + strlen(BEGIN_KEY), (size_t)(lim - begin) - strlen(BEGIN_KEY), "TRACE_");
	for (;;) {
		const unsigned char *key, *colon, *value, *next;

		if (p == NULL)
			goto need_more;
		key = p + 6;
		if ((size_t)(lim - key) >= 12 && memcmp(key, "HEADER_END::", 12) == 0) {
			*end = (size_t)(key + 12 - buf);
			st->header_end_offset = base + (uint64_t)(p - buf);
			return PARSE_OK;
		}
		colon = find_bytes(key, (size_t)(lim - key), "::");
		if (colon == NULL)
			goto need_more;
		if (colon == key || memchr(key, '\0', (size_t)(colon - key)) != NULL || colon - key > 256) {
			tk__tp_fail_at(st, _TRACEPARSER_WRONG_H_KEYWORD, EINVAL, base + (uint64_t)(p - buf),
				       "malformed header key");
			return PARSE_ERROR;
		}
		value = colon + 2;
		next = find_bytes(value, (size_t)(lim - value), "TRACE_");
		if (next == NULL)
			goto need_more;
		if (st->n_attrs >= TP_MAX_HEADER_KEYS) {
			tk__tp_fail_at(st, _TRACEPARSER_WRONG_H_KEYWORD, EINVAL, base + (uint64_t)(p - buf),
				       "more than %u header keys", TP_MAX_HEADER_KEYS);
			return PARSE_ERROR;
		}
		if (add_attr(st, key, (size_t)(colon - key), value, (size_t)(next - value),
			     base + (uint64_t)(p - buf)) != 0) {
			tk__tp_fail_at(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, base + (uint64_t)(p - buf),
				       "no more memory for a header entry");
			return PARSE_ERROR;
		}
		p = next;
	}

need_more:
	if (!at_end && len < TP_MAX_HEADER_BYTES)
		return PARSE_MORE;
	if (len >= TP_MAX_HEADER_BYTES)
		tk__tp_fail_at(st, _TRACEPARSER_WRONG_H_KEYWORD, EINVAL, base,
			       "no TRACE_HEADER_END:: in the first %u bytes of the header", TP_MAX_HEADER_BYTES);
	else
		tk__tp_fail_at(st, _TRACEPARSER_CANNOT_READ_IN_FILE, EINVAL, base + len,
			       "truncated header: the file ends before TRACE_HEADER_END::");
	return PARSE_ERROR;
}

/* A decimal number with white space around it (*ok 0: none, anything else, or more than
 * 2^64 - 1); 0 when there are no digits. */
static uint64_t value_number(const struct tp_attr *a, int *ok)
{
	const char *s = a->value;
	uint64_t v = 0;
	int digits = 0;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') /* the white space of a blank value */
		s++;
	while (*s >= '0' && *s <= '9') {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10) { /* more than 2^64 - 1: not a number of this parser */
			if (ok)
				*ok = 0;
			return UINT64_MAX;
		}
		v = v * 10 + d;
		s++;
		digits++;
	}
	/* white space may follow, nothing else ("2400 MHz" is not a rate in Hz) */
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	if (ok)
		*ok = digits > 0 && *s == '\0';
	return v;
}

/*
 * tracekit's user attributes (docs/kev-format.md): TRACEKIT_OWNER=buffer (every buffer
 * names its owner with a THRUNNING after its CONTROL BUFFER) and the clock reference
 * TRACEKIT_CLOCK_CYCLES / TRACEKIT_CLOCK_RAW_NS (both needed, both decimal numbers; a
 * value that is not one is ignored and times stay cycles since boot).
 */
static void read_tracekit_attrs(struct traceparser_state *st)
{
	const struct tp_attr *owner = tk__tp_find_attr(st, "TRACEKIT_OWNER");
	const struct tp_attr *cyc = tk__tp_find_attr(st, "TRACEKIT_CLOCK_CYCLES");
	const struct tp_attr *raw = tk__tp_find_attr(st, "TRACEKIT_CLOCK_RAW_NS");
	int ok1 = 0, ok2 = 0;

	const struct tp_attr *kc = tk__tp_find_attr(st, "TRACEKIT_KERCALLS");

	st->owner_buffer_mode = owner != NULL && owner->value_len == 6 && memcmp(owner->value, "buffer", 6) == 0;
	/* Linux system calls in KER_CALL/KER_EXIT (tracelogger): decoded by that table. */
	st->kercalls_flags = kc != NULL ? tk_kev_kercalls_flags((const char *)kc->value, kc->value_len) : 0;
	if (cyc != NULL && raw != NULL) {
		st->clock_cycles = value_number(cyc, &ok1);
		st->clock_raw_ns = value_number(raw, &ok2);
		st->have_clock_ref = ok1 && ok2;
	}
}

static void print_header(struct traceparser_state *st)
{
	FILE *out = st->debug_stream;
	unsigned i;

	for (i = 0; i < st->n_attrs; i++) {
		const struct tp_attr *a = &st->attrs[i];
		int key_len = (int)strlen(a->key);
		unsigned j;

		fprintf(out, "%*s%*s:: ", 22 - key_len, "TRACE_", key_len, a->key);
		if ((st->debug_flags & _TRACEPARSER_DEBUG_ALL) == _TRACEPARSER_DEBUG_ALL) {
			fprintf(out, "(len=%u) -> \"%s\" \n", a->value_len, a->value);
			continue;
		}
		for (j = 0; j < a->value_len && a->value[j] != '\0'; j++) {
			unsigned char c = (unsigned char)a->value[j];
			if (c >= 0x20 && c < 0x7f)
				fputc(c, out);
		}
		fputc('\n', out);
	}
}

int tk__tp_read_header(struct traceparser_state *st, struct tp_input *in)
{
	size_t want = 1, avail, end = 0;
	const unsigned char *p;
	const struct tp_attr *le, *be, *me, *vmaj, *vmin, *splen, *cps;
	uint64_t major, minor, sp_len = 0, remaining, base = in->offset, hdr_end;
	int host_be = TK__HOST_BIG_ENDIAN, ok, rc;

	for (;;) {
		p = tk__tp_input_peek(in, want, &avail);
		if (in->err != 0) {
			return tk__tp_fail_at(st, _TRACEPARSER_CANNOT_READ_IN_FILE, EIO, base + avail, "cannot read: %s",
					      strerror(in->err));
		}
		rc = parse_header(st, p, avail, avail < want, base, &end);
		if (rc == PARSE_OK)
			break;
		if (rc == PARSE_ERROR)
			return -1;
		/* One byte more than we have: a pipe delivers what it has, and the header is
		 * parsed as soon as it is complete, not when 4 KiB have arrived (a live trace
		 * shows its first events at once); a file gives a whole read buffer anyway. */
		/* (Beyond 4 KiB the amount doubles, so that a header dribbled byte by byte is
		 * not parsed again for every byte.) */
		want = avail < want ? want : avail < BEGIN_SEARCH ? avail + 1 : avail * 2;
		if (want > TP_MAX_HEADER_BYTES)
			want = TP_MAX_HEADER_BYTES;
	}
	tk__tp_input_skip(in, end);
	st->stats.bytes += end;

	if (st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_HEADER))
		print_header(st);

	/* Errors name the offending entry's offset, or the header's end for a missing key. */
	hdr_end = st->header_end_offset;
	le = tk__tp_find_attr(st, "LITTLE_ENDIAN");
	be = tk__tp_find_attr(st, "BIG_ENDIAN");
	me = tk__tp_find_attr(st, "MIDDLE_ENDIAN");
	if (me != NULL) {
		return tk__tp_fail_at(st, _TRACEPARSER_WRONG_ENDIAN_TYPE, EINVAL, me->offset,
				      "Wrong input trace file endian type: TRACE_MIDDLE_ENDIAN is not supported");
	}
	if (le != NULL && be != NULL) {
		return tk__tp_fail_at(st, _TRACEPARSER_WRONG_ENDIAN_TYPE, EINVAL,
				      le->offset < be->offset ? be->offset : le->offset,
				      "Wrong input trace file endian type: both TRACE_LITTLE_ENDIAN (byte offset %" PRIu64
				      ") and TRACE_BIG_ENDIAN (byte offset %" PRIu64 ") are present",
				      le->offset, be->offset);
	}
	if (le == NULL && be == NULL) {
		return tk__tp_fail_at(st, _TRACEPARSER_WRONG_ENDIAN_TYPE, EINVAL, hdr_end,
				      "Wrong input trace file endian type: neither TRACE_LITTLE_ENDIAN nor "
				      "TRACE_BIG_ENDIAN is in the header, which ends here");
	}
	st->endian_conv = (be != NULL) != host_be;

	vmaj = tk__tp_find_attr(st, "VER_MAJOR");
	vmin = tk__tp_find_attr(st, "VER_MINOR");
	if (vmaj == NULL || vmin == NULL) {
		return tk__tp_fail_at(st, _TRACEPARSER_MISSING_FIELD, EINVAL, hdr_end,
				      "the header has no TRACE_%s (it ends here)", vmaj == NULL ? "VER_MAJOR" : "VER_MINOR");
	}
	major = value_number(vmaj, NULL);
	minor = value_number(vmin, NULL);
	if (major < 1 || (major == 1 && minor < 1)) {
		return tk__tp_fail_at(st, _TRACEPARSER_WRONG_FILE_VERSION, EINVAL, vmaj->offset,
				      "trace file version %s.%s (TRACE_VER_MAJOR) is older than 1.01, the oldest this "
				      "parser reads",
				      vmaj->value, vmin->value);
	}

	cps = tk__tp_find_attr(st, "CYCLES_PER_SEC");
	st->cycles_per_sec = 0; /* absent or blank: the cycle counts are nanoseconds */
	if (cps != NULL && cps->value[strspn(cps->value, " \t\r\n")] != '\0') {
		st->cycles_per_sec = value_number(cps, &ok);
		if (!ok) {
			return tk__tp_fail_at(st, _TRACEPARSER_WRONG_H_KEYWORD, EINVAL, cps->offset,
					      "TRACE_CYCLES_PER_SEC value \"%s\" is not a number from 0 to %" PRIu64,
					      cps->value, UINT64_MAX);
		}
	}
	st->ns_mult = st->cycles_per_sec > 1000000000u
			      ? (uint64_t)(((unsigned __int128)1000000000u << 64) / st->cycles_per_sec)
			      : 0;
	read_tracekit_attrs(st);

	splen = tk__tp_find_attr(st, "SYSPAGE_LEN");
	if (splen != NULL) {
		sp_len = value_number(splen, &ok);
		if (!ok) {
			return tk__tp_fail_at(st, _TRACEPARSER_WRONG_H_KEYWORD, EINVAL, splen->offset,
					      "TRACE_SYSPAGE_LEN value \"%s\" is not a number", splen->value);
		}
		if (sp_len > TP_MAX_SYSPAGE_BYTES) {
			return tk__tp_fail_at(st, _TRACEPARSER_CANNOT_READ_IN_FILE, EINVAL, splen->offset,
					      "TRACE_SYSPAGE_LEN %" PRIu64 " exceeds the %u-byte limit", sp_len,
					      TP_MAX_SYSPAGE_BYTES);
		}
		remaining = tk__tp_input_remaining(in);
		if (remaining != UINT64_MAX && sp_len > remaining) {
			return tk__tp_fail_at(st, _TRACEPARSER_CANNOT_READ_IN_FILE, EINVAL, in->offset,
					      "couldn't read syspage entry from input trace file: TRACE_SYSPAGE_LEN is "
					      "%" PRIu64 " but only %" PRIu64 " bytes follow the header",
					      sp_len, remaining);
		}
		p = tk__tp_input_peek(in, (size_t)sp_len, &avail);
		if (avail < sp_len) {
			return tk__tp_fail_at(st, _TRACEPARSER_CANNOT_READ_IN_FILE, EINVAL, in->offset + avail,
					      "couldn't read syspage entry from input trace file: the file ends inside the "
					      "%" PRIu64 "-byte syspage",
					      sp_len);
		}
		st->syspage = malloc(sp_len ? (size_t)sp_len : 1);
		if (st->syspage == NULL)
			return tk__tp_fail_at(st, _TRACEPARSER_NO_MORE_MEMORY, ENOMEM, in->offset,
					      "no more memory for the syspage");
		memcpy(st->syspage, p, (size_t)sp_len);
		st->syspage_len = (unsigned)sp_len;
		tk__tp_input_skip(in, (size_t)sp_len);
		st->stats.bytes += sp_len;
		if (st->debug_stream != NULL && (st->debug_flags & _TRACEPARSER_DEBUG_SYSPAGE)) {
			fprintf(st->debug_stream, " -- SYSPAGE INFORMATION -- \n");
			tk__tp_print_syspage(st->debug_stream, st->syspage, st->syspage_len, (int)st->endian_conv);
		}
	}
	st->events_offset = in->offset;
	return 0;
}

/* ---- syspage ---------------------------------------------------------------------------- */

static const char *const sp_sections[] = {
	"system_private", "asinfo", "meminfo", "hwinfo", "cpuinfo", "cacheattr", "qtime", "callout",
	"callin", "typed_strings", "strings", "intrinfo", "smp", "pminfo", "mdriver",
};
enum { SP_HWINFO = 3, SP_CPUINFO = 4, SP_QTIME = 6, SP_TYPED_STRINGS = 9, SP_STRINGS = 10 };

struct sp_view {
	const unsigned char *p;
	size_t len;
	int swap;
};

static unsigned sp16(const struct sp_view *v, size_t off)
{
	return off + 2 <= v->len ? tk__cs16(v->swap, tk__load16(v->p + off)) : 0;
}
static uint32_t sp32(const struct sp_view *v, size_t off)
{
	return off + 4 <= v->len ? tk__cs32(v->swap, tk__load32(v->p + off)) : 0;
}
static uint64_t sp64(const struct sp_view *v, size_t off)
{
	return off + 8 <= v->len ? tk__cs64(v->swap, tk__load64(v->p + off)) : 0;
}

/* Offset and size of a section, or 0 when it lies outside the syspage. */
static int sp_section(const struct sp_view *v, unsigned idx, size_t *off, size_t *size)
{
	size_t o = sp16(v, 8 + 4 * (size_t)idx), s = sp16(v, 8 + 4 * (size_t)idx + 2);
	if (s == 0 || o + s > v->len)
		return 0;
	*off = o;
	*size = s;
	return 1;
}

static void print_section_info(FILE *out, const struct sp_view *v, unsigned idx)
{
	fprintf(out, " %s:off/size=%u,%u", sp_sections[idx], sp16(v, 8 + 4 * (size_t)idx),
		sp16(v, 8 + 4 * (size_t)idx + 2));
}

void tk__tp_print_syspage(FILE *out, const unsigned char *sp, size_t len, int swap)
{
	static const char *const cpu_names[] = { "X86", "PPC", "MIPS", "unknown(3)", "ARM", "SH" };
	struct sp_view v = { sp, len, swap };
	size_t off, size, soff = 0, ssize = 0;
	unsigned type, num_cpu, i;

	if (len < 68 || sp16(&v, 2) > len || sp16(&v, 0) > len) {
		fprintf(out, " syspage of %zu bytes: not a QNX 6 syspage layout\n", len);
		return;
	}
	fprintf(out, " size=%u total_size=%u", sp16(&v, 0), sp16(&v, 2));
	print_section_info(out, &v, 0);
	fputc('\n', out);
	for (i = 1; i <= 3; i++)
		print_section_info(out, &v, i);
	fputc('\n', out);
	for (i = 4; i <= 6; i++)
		print_section_info(out, &v, i);
	fputc('\n', out);
	print_section_info(out, &v, 7);
	print_section_info(out, &v, 8);
	print_section_info(out, &v, 11);
	fputc('\n', out);
	print_section_info(out, &v, 9);
	print_section_info(out, &v, 10);
	fputc('\n', out);

	type = sp16(&v, 4);
	num_cpu = sp16(&v, 6);
	fputs(" processor=", out);
	if (type < sizeof(cpu_names) / sizeof(cpu_names[0]))
		fputs(cpu_names[type], out);
	else
		fprintf(out, "Unknown(%u)", type);
	fprintf(out, " num_cpus=%u\n", num_cpu);

	sp_section(&v, SP_STRINGS, &soff, &ssize);
	if (sp_section(&v, SP_CPUINFO, &off, &size)) {
		for (i = 0; i < num_cpu && (size_t)(i + 1) * 32 <= size; i++) {
			size_t c = off + (size_t)i * 32;
			unsigned name = sp16(&v, c + 28);
			uint32_t flags = sp32(&v, c + 8);
			const char *n = "";
			if (ssize > 0 && name < ssize && memchr(sp + soff + name, '\0', ssize - name) != NULL)
				n = (const char *)sp + soff + name;
			fprintf(out, "  cpu %u cpu=%u name=%s speed=%u\n", i + 1, sp32(&v, c), n, sp32(&v, c + 4));
			fprintf(out, "  flags=%#08x", flags);
			if (flags & 0x80000000u)
				fputs(" FPU", out);
			if (flags & 0x40000000u)
				fputs(" MMU", out);
			fputc('\n', out);
		}
	}
	if (sp_section(&v, SP_QTIME, &off, &size) && size >= 64) {
		fprintf(out, " cyc/sec=%" PRIu64 " tod_adj=%" PRIu64 " nsec=%" PRIu64 "  inc=%u\n",
			sp64(&v, off), sp64(&v, off + 8), sp64(&v, off + 16), sp32(&v, off + 24));
		fprintf(out, " boot=%u epoch=%u intr=%d\n", sp32(&v, off + 28), sp32(&v, off + 56),
			(int32_t)sp32(&v, off + 52));
		fprintf(out, " rate=%u scale=%d load=%u\n", sp32(&v, off + 40), (int32_t)sp32(&v, off + 44),
			sp32(&v, off + 48));
	}
	if (sp_section(&v, SP_TYPED_STRINGS, &off, &size)) {
		size_t pos = 0;
		int col = 0;
		while (pos + 4 < size) {
			uint32_t t = sp32(&v, off + pos);
			const char *info = (const char *)sp + off + pos + 4;
			const char *nul = memchr(info, '\0', size - pos - 4);
			if (t == 0 || nul == NULL)
				break;
			if (col == 0)
				fputs("  ", out);
			fprintf(out, " type(%u)=\"%s\"", t & 0x7fffffffu, info);
			col++;
			pos = (pos + 4 + (size_t)(nul - info) + 1 + 3) & ~(size_t)3;
		}
		if (col)
			fputc('\n', out);
	}
}
