/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: libtraceparser and the event formatter on arbitrary bytes.
 * The input is handed to traceparser() as a file (a memfd); every event of every class is
 * decoded (every field read) and formatted, and the 64-bit clock and the owner are
 * queried, so out-of-bounds reads anywhere show up. The first byte selects sort mode (bit
 * 0; bit 2: with the smallest memory budget, so that runs are spilled and merged) and
 * the debug output (bit 1, to /dev/null).
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracekit/traceparser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_line[1 << 16];

static int every_event(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	const unsigned *conv = traceparser_get_info(st, _TRACEPARSER_INFO_ENDIAN_CONV, NULL);
	tk_kev_event ev = { h, t, buf, len, conv ? (int)*conv : 0, 0, 0 };
	unsigned *sum = ud;

	if (buf == NULL)
		return 0;
	ev.clk = tk_traceparser_clk(st);
	ev.ns = tk_traceparser_ns(st);
	tk_kev_format_event(g_line, sizeof(g_line), (h >> 24) & 1 ? TK_KEV_PRINT_NO_NEWLINES : 0, &ev);
	tk_kev_format_event(g_line, sizeof(g_line), TK_KEV_PRINT_QNX_STRICT | TK_KEV_PRINT_TIME_NS, &ev);
	tk_kev_format_event(g_line, sizeof(g_line), TK_KEV_PRINT_LINUX_X86_64, &ev); /* tracelogger's system calls */
	*sum += g_line[0];
	traceparser_get_info(st, _TRACEPARSER_INFO_TIME_DELTA, NULL);
	traceparser_get_info(st, TK_TRACEPARSER_INFO_OFFSET, NULL);
	{
		tk_kev_decoded d;
		unsigned i, k;
		if (tk_traceparser_decode(st, h, t, buf, len, (h >> 25) & 1 ? TK_KEV_DECODE_QNX_STRICT : 0, &d) == TK_OK) {
			for (i = 0; i < d.n_fields; i++) {
				const tk_kev_field *f = &d.fields[i];
				*sum += (unsigned)f->v.u + (unsigned char)f->name[0];
				if (f->type == TK_KEV_FIELD_STR || f->type == TK_KEV_FIELD_BYTES)
					for (k = 0; k < f->len; k++)
						*sum += (unsigned char)f->str[k];
				if (f->type == TK_KEV_FIELD_WORDS)
					for (k = 0; k < f->len; k++)
						*sum += tk_kev_field_word(&d, f, k);
			}
			*sum += (unsigned)d.pid + (unsigned)d.event_name[0];
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	static struct traceparser_state *st;
	static unsigned sum;
	char path[64];
	unsigned i;
	int fd;

	if (st == NULL) {
		/* One state for the whole run: traceparser() resets everything but the callbacks. */
		devnull = fopen("/dev/null", "w");
		st = traceparser_init(NULL);
		if (st == NULL || devnull == NULL)
			return 0;
		for (i = 0; i < 32; i++)
			tk_traceparser_cs_internal(st, &sum, every_event, i, 0, 1023);
	}
	fd = memfd_create("fuzz.kev", 0);
	if (fd < 0)
		return 0;
	if (size > 0 && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	traceparser_sort(st, size > 0 && (data[0] & 1) ? _TRACEPARSER_SORT : _TRACEPARSER_NOSORT);
	tk_traceparser_sort_memory(st, size > 0 && (data[0] & 4) ? 64u << 10 : 64u << 20);
	traceparser_debug(st, devnull, size > 0 && (data[0] & 2) ? _TRACEPARSER_DEBUG_ALL : 0);
	traceparser(st, &sum, path);
	for (i = 0; i <= 18; i++)
		traceparser_get_info(st, (info_modes_t)i, NULL);
	traceparser_get_info(st, _TRACEPARSER_INFO_SYSPAGE, NULL);
	close(fd);
	return 0;
}
