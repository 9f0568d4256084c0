/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the symbols module (tracekit/symbols.h) fed arbitrary SYSTEM MMAP,
 * MUNMAP and MAPNAME events, as a trace would hand them over after decoding, and asked
 * about arbitrary addresses at arbitrary times. Input: records of one byte (what), 8 bytes
 * of time, then for an event a payload length byte and that many bytes of payload (words
 * and a path), for a lookup 4 bytes of pid and 8 of address. Oracles besides the
 * sanitizers: a lookup's text is the address when unresolved, and the counters add up.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/kev.h"
#include "tracekit/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t take(const uint8_t **p, const uint8_t *end, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n && *p < end; i++)
		v |= (uint64_t)*(*p)++ << (8 * i);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static tk_kev_decoded d;
	static uint32_t payload[80];
	const uint8_t *p = data, *end = data + size;
	tk_symbols *s = NULL;

	if (tk_symbols_new(&s) != 0)
		abort();
	while (p < end) {
		unsigned what = *p++;
		uint64_t t = take(&p, end, 8);
		if (what & 0x80) { /* a lookup */
			int32_t pid = (int32_t)take(&p, end, 4);
			uint64_t addr = take(&p, end, 8);
			tk_symbol sym;
			char text[8192], hex[32];
			int rc = tk_symbols_lookup(s, pid, t, addr, &sym);
			size_t n = tk_symbols_format(&sym, text, sizeof(text));
			if (n == 0 || (rc != 0 && rc != TK_ENOENT) || (rc == 0) != (sym.name != NULL))
				abort();
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
			if (rc != 0 && strcmp(text, hex) != 0)
				abort();
			continue;
		}
		unsigned code = _NTO_TRACE_SYS_MMAP + what % 3, len = (unsigned)take(&p, end, 1) % sizeof(payload);
		tk_kev_event ev;
		memset(payload, 0, sizeof(payload));
		for (unsigned i = 0; i < len && p < end; i++)
			((uint8_t *)payload)[i] = *p++;
		memset(&ev, 0, sizeof(ev));
		ev.header = _TRACE_MAKE_CODE(0, len <= 8 ? _TRACE_STRUCT_S : _TRACE_STRUCT_CB, _TRACE_SYSTEM_C, code);
		ev.data = payload;
		ev.len = len <= 8 ? 2 : (len + 7) / 8 * 2;
		ev.swap = (what & 0x40) != 0;
		ev.ns = t;
		if (tk_kev_decode(&ev, 0, &d) != 0)
			abort();
		d.time_ns = t;
		int rc = tk_symbols_event(s, &d);
		if (rc != 0 && rc != 1)
			abort();
	}
	const tk_symbols_stats *st = tk_symbols_get_stats(s);
	if (st->resolved > st->lookups || st->cache_hits > st->lookups || st->files_failed > st->files)
		abort();
	tk_symbols_free(s);
	return 0;
}
