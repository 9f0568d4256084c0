/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the VTune CSV reader (src/csv) on arbitrary bytes. Oracles besides the
 * sanitizers: a rejected input has a "<fuzz>:LINE" message; every accepted row is written
 * back with the writer's formatting and must read back to the same values (names, times,
 * pid/tid, counter values).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_time(tk_csv_clock c, uint64_t t)
{
	char buf[48];
	uint64_t back;
	size_t n = tk_csv_format_time(buf, sizeof(buf), c, t);
	if (n == 0 || n >= sizeof(buf) || tk_csv_parse_time(buf, n, c, &back) != 0 || back != t)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tk_csv_reader *r = NULL;
	tk_csv_row row;
	int rc = tk_csv_reader_open_mem(&r, data, size, "<fuzz>");
	if (rc != 0) {
		if (r != NULL && strncmp(tk_csv_reader_errmsg(r), "<fuzz>:", 7) != 0)
			abort();
		tk_csv_reader_close(r);
		return 0;
	}
	tk_csv_clock c = tk_csv_reader_clock(r);
	while ((rc = tk_csv_read_row(r, &row)) == 1) {
		if (tk_csv_reader_kind(r) == TK_CSV_INTERVALS) {
			if (row.end < row.start || row.name_len == 0 || strlen(row.name) != row.name_len)
				abort();
			check_time(c, row.start);
			check_time(c, row.end);
		} else {
			check_time(c, row.time);
			for (size_t i = 0; i < row.n_values; i++) {
				char buf[64];
				tk_csv_value back;
				const tk_csv_value *v = &row.values[i];
				if (!v->present)
					continue;
				size_t n = tk_csv_format_value(buf, sizeof(buf), v);
				/* the writer's text reads back to the same value */
				tk_csv_reader *r2 = NULL;
				char doc[128];
				int m = snprintf(doc, sizeof(doc), "tsc.QPC,x.INST\n1,%.*s\n", (int)n, buf);
				if (tk_csv_reader_open_mem(&r2, doc, (size_t)m, "<back>") != 0)
					abort();
				tk_csv_row row2;
				if (tk_csv_read_row(r2, &row2) != 1)
					abort();
				back = row2.values[0];
				if (back.is_float != v->is_float || (v->is_float ? back.d != v->d : back.i != v->i))
					abort();
				tk_csv_reader_close(r2);
			}
		}
	}
	if (rc < 0 && strncmp(tk_csv_reader_errmsg(r), "<fuzz>:", 7) != 0)
		abort();
	tk_csv_reader_close(r);
	return 0;
}
