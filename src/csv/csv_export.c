/* SPDX-License-Identifier: MIT */
/*
 * csv_export.c: tk_csv_export(), the CSV data of a trace back into VTune CSV files. A .kev
 * is parsed once for its intervals (a begin waits in a hash table of open intervals for its
 * end) and the names of its counters, and once more for the counter rows when it has any;
 * a .tb5 is read stream by stream. Timestamps are converted to the requested clock, and a
 * value that does not fit is an error naming the event's byte offset or the record.
 * What the files hold reads back with tk_csv_import(): names that are not UTF-8 are read as
 * Latin-1, counter values that are NaN or infinite are left out (both counted in warnings).
 * Events the convention cannot read, and a .kev damaged midway, leave everything valid
 * exported and make the export return an error with cv->written set (export_kev() and
 * export_tb5() return 2).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "tracekit/csv.h"
#include "tracekit/kev.h"
#include "tracekit/samprec_shared.h"
#include "tracekit/tbrw.h"
#include "tracekit/traceparser.h"

#include "common/tk_utf8.h"
#include "csv_internal.h"

struct open_iv {
	uint32_t id, flags, pid, tid, name_id;
	uint64_t start;
	char *name; /* in knames or grave: not owned */
	int used;
};

struct counter_col {
	char *name;
	int inst;
};

/* A name of the .kev by its number: numbers come from the file and may be sparse, so a
 * hash table (an array indexed by number would let one event ask for 2 GiB). */
struct kname {
	uint32_t id;
	char *name;
};

struct export {
	const char *trace;
	tk_csv_clock clock; /* of the output */
	tk_csv_clock own;   /* the trace's */
	int own_utc_line;   /* the trace's ns time line is UTC */
	uint64_t boot_ns;   /* BOOT_DATE in ns since 1970 */
	int cycles_are_own; /* cycle counts are values of the own domain (TRACEKIT_CSV_CLOCK, .tb5) */
	uint64_t own_hz;    /* the own domain's rate (cycles_are_own): QPC 10 MHz, ns 1 GHz */
	uint64_t bad_value; /* conv_time() -2: the value that does not fit */
	int swap;
	struct traceparser_state *st;
	tk_csv_writer *iw, *cw;
	const char *dir, *host_opt, *name;
	int clock_opt; /* a tk_csv_clock or TK_CSV_CLOCK_OWN */
	char ipath[2048], cpath[2048];
	struct tk__csv_msg *msg;
	int have_counters; /* a counters file was opened */
	/* names of the .kev (TK__CSV_EV_NAME), by id; replaced ones kept until the end */
	struct kname *knames; /* open addressing by id; name NULL: empty */
	size_t knames_mask, n_knames;
	char **grave;
	size_t n_grave;
	uint64_t unnamed;
	/* open intervals, by id (hash) */
	struct open_iv *open;
	size_t open_mask, n_open;
	uint64_t intervals, unmatched_end;
	/* counters */
	struct counter_col *cols;
	size_t n_cols;
	int pass; /* 1: intervals (and counter names), 2: counter rows */
	uint64_t row_t;
	unsigned row_flags;
	uint32_t row_pid, row_tid;
	tk_csv_value *row;
	int row_has;
	size_t row_last; /* the column of the row's last value */
	int failed;
	/* counted in pass 1 (a .kev) or in the one pass over a .tb5 */
	uint64_t latin1_names; /* names that are not UTF-8, exported as read as Latin-1 */
	uint64_t nonfinite;    /* counter samples that are NaN or infinite: not exported */
	uint64_t malformed;    /* events the convention cannot read: not exported */
	uint64_t n_events;     /* events of the convention met in pass 1 */
	uint64_t over_samples; /* samples of counters beyond what a counter file holds */
	uint64_t long_names;   /* intervals whose name makes a record too long to read back */
	uint64_t kind_samples; /* samples of a name whose column is of the other kind */
	size_t header_len;     /* of the counters file, so far (pass 1) */
	char first_bad[256];   /* the first malformed or unnamed event, with where it is */
	char damage[512];      /* the parser's message on a .kev damaged midway ("" if whole) */
};

/* An event of pass 1 that cannot be exported (malformed, or naming no name): counted by the
 * caller, the first kept with its byte offset for the message ("byte offset 928: USER 1005
 * (VTune CSV name): empty name", the words of tracekit's warnings). */
static void bad_event(struct export *x, unsigned code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void bad_event(struct export *x, unsigned code, const char *fmt, ...)
{
	if (x->first_bad[0] != 0)
		return;
	uint64_t *off = traceparser_get_info(x->st, TK_TRACEPARSER_INFO_OFFSET, NULL);
	const char *kind = code == TK__CSV_EV_NAME                                           ? "name"
			   : code == TK__CSV_EV_COUNTER                                      ? "counter"
			   : code == TK__CSV_EV_TASK_BEGIN || code == TK__CSV_EV_FRAME_BEGIN ? "begin"
											     : "end";
	int n = snprintf(x->first_bad, sizeof(x->first_bad),
			 "byte offset %" PRIu64 ": USER %u (VTune CSV %s): ", off ? *off : 0, code, kind);
	if (n < 0 || (size_t)n >= sizeof(x->first_bad))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->first_bad + n, sizeof(x->first_bad) - (size_t)n, fmt, ap);
	va_end(ap);
}

/*
 * A name as the CSV files hold it (malloc'd): valid UTF-8 as it is; any other name read as
 * Latin-1, every byte from 0x80 as U+0080-U+00FF, which is what the Chrome JSON and Perfetto
 * exports show of it. tk_csv_import() refuses names that are not UTF-8, and VTune reads
 * UTF-8; the original bytes are the Latin-1 encoding of the text (docs/vtune-csv.md,
 * "Export"). *latin1 is set when the name was converted.
 */
static char *name_text(const char *s, int *latin1)
{
	size_t n = strlen(s);
	*latin1 = !tk__utf8_valid(s, n);
	if (!*latin1)
		return strdup(s);
	char *t = malloc(tk__latin1_utf8_len(s, n) + 1);
	if (t == NULL)
		return NULL;
	*tk__latin1_to_utf8((unsigned char *)t, s, n) = '\0';
	return t;
}

/* The bytes of s as a CSV field (quoted when it holds a comma, a quote, CR or LF). */
static size_t field_len(const char *s)
{
	size_t n = 0, quotes = 0;
	int quote = 0;
	for (; s[n] != 0; n++) {
		quotes += s[n] == '"';
		quote |= s[n] == ',' || s[n] == '"' || s[n] == '\n' || s[n] == '\r';
	}
	return quote ? n + quotes + 2 : n;
}

/* 1 when a counter value's bits hold a value a CSV field can hold (not NaN, not infinite). */
static int value_finite(uint32_t flags, uint64_t bits)
{
	if (!(flags & TK__CSV_F_FLOAT))
		return 1;
	double d;
	memcpy(&d, &bits, sizeof(d));
	return isfinite(d);
}

static uint32_t word(const struct export *x, const unsigned *b, unsigned i)
{
	uint32_t v = b[i];
	return x->swap ? __builtin_bswap32(v) : v;
}

static int conv_time(struct export *x, uint64_t cycles, uint64_t ns, uint64_t *out)
{
	tk_csv_clock c = x->clock, o = x->own;
	int tsc_c = c == TK_CSV_TSC || c == TK_CSV_RDTSC, tsc_o = o == TK_CSV_TSC || o == TK_CSV_RDTSC;
	/* the cycle counts are the own domain's values in a trace made from CSV (and in .tb5);
	 * in a recorded trace they are TSC cycles, whatever its time line */
	if (tsc_c) {
		if (!x->cycles_are_own || tsc_o) {
			*out = cycles;
			return 0;
		}
		return -1;
	}
	if (x->cycles_are_own && c == o) {
		*out = cycles;
		return 0;
	}
	/* a value whose ns do not fit in 64 bits, or past the end of UTC in ns, is refused (the
	 * ns time line would wrap) */
	if (x->cycles_are_own && !tsc_o && x->own_hz != 0) {
		unsigned __int128 exact = (unsigned __int128)cycles * 1000000000u / x->own_hz;
		if (exact > UINT64_MAX) {
			x->bad_value = cycles;
			return -2;
		}
		ns = (uint64_t)exact; /* the own domain's values: exact, whatever the parser's rounding */
	}
	if (!x->own_utc_line && c == TK_CSV_UTC && ns > UINT64_MAX - x->boot_ns) {
		x->bad_value = cycles;
		return -2;
	}
	uint64_t mono; /* ns on a time line since boot */
	if (x->own_utc_line) {
		if (c == TK_CSV_UTC) {
			*out = ns;
			return 0;
		}
		if (ns < x->boot_ns)
			return -1;
		mono = ns - x->boot_ns;
	} else {
		mono = ns;
	}
	switch (c) {
	case TK_CSV_CLOCK_MONOTONIC_RAW:
		*out = mono;
		return 0;
	case TK_CSV_QPC:
		*out = mono / (1000000000u / TK__CSV_QPC_HZ);
		return 0;
	case TK_CSV_UTC:
		*out = mono + x->boot_ns;
		return 0;
	default:
		return -1;
	}
}

static struct open_iv *open_find(struct export *x, uint32_t id, int add)
{
	if (add && (x->n_open + 1) * 2 > x->open_mask) {
		size_t nm = x->open_mask ? x->open_mask * 2 + 1 : 255;
		struct open_iv *no = calloc(nm + 1, sizeof(*no));
		if (no == NULL)
			return NULL;
		for (size_t i = 0; x->open && i <= x->open_mask; i++) {
			if (!x->open[i].used)
				continue;
			size_t h = (x->open[i].id * 2654435761u) & nm;
			while (no[h].used)
				h = (h + 1) & nm;
			no[h] = x->open[i];
		}
		free(x->open);
		x->open = no;
		x->open_mask = nm;
	}
	if (x->open == NULL)
		return NULL;
	size_t h = (id * 2654435761u) & x->open_mask;
	while (x->open[h].used) {
		if (x->open[h].id == id)
			return add ? NULL : &x->open[h];
		h = (h + 1) & x->open_mask;
	}
	if (!add)
		return NULL;
	x->open[h].used = 1;
	x->open[h].id = id;
	x->n_open++;
	return &x->open[h];
}

static void open_remove(struct export *x, struct open_iv *o)
{
	/* backward-shift deletion for linear probing */
	size_t i = (size_t)(o - x->open);
	x->open[i].used = 0;
	x->n_open--;
	size_t j = i;
	for (;;) {
		j = (j + 1) & x->open_mask;
		if (!x->open[j].used)
			break;
		size_t h = (x->open[j].id * 2654435761u) & x->open_mask;
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			x->open[i] = x->open[j];
			x->open[j].used = 0;
			i = j;
		}
	}
}

/* The event's string: after n words; NULL when it is not NUL-terminated UTF-8. */
static const char *ev_string(const unsigned *buf, unsigned len, unsigned n)
{
	if (len <= n)
		return NULL;
	const char *s = (const char *)(buf + n);
	size_t cap = (size_t)(len - n) * 4;
	const char *z = memchr(s, 0, cap);
	if (z == NULL || z == s)
		return NULL;
	return s;
}

static int flush_row(struct export *x)
{
	if (!x->row_has)
		return 0;
	x->row_has = 0;
	int rc = tk_csv_write_counters(x->cw, x->row_t, x->row, x->row_flags, x->row_pid, x->row_tid);
	if (rc != 0) {
		tk__csv_fail(x->msg, rc, "%s: write failed: %s", x->cpath, tk_strerror(rc));
		return -1;
	}
	memset(x->row, 0, x->n_cols * sizeof(*x->row));
	return 0;
}

/* The slot of name number id: the one holding it, or the empty one where it goes. */
static struct kname *kname_slot(const struct export *x, uint32_t id)
{
	size_t h = (id * 2654435761u) & x->knames_mask;
	while (x->knames[h].name != NULL && x->knames[h].id != id)
		h = (h + 1) & x->knames_mask;
	return &x->knames[h];
}

static const char *kname(struct export *x, uint32_t w0)
{
	return x->knames != NULL ? kname_slot(x, w0 >> TK__CSV_NAME_SHIFT)->name : NULL;
}

static int kev_cb(struct traceparser_state *st, void *ud, unsigned header, unsigned tm, unsigned *buf,
		  unsigned len)
{
	struct export *x = ud;
	unsigned code = _NTO_TRACE_GETEVENT(header);
	(void)tm;
	if (x->failed)
		return 0;
	/* the time on the trace's time line only when a conversion needs it (a 128-bit division) */
	uint64_t cycles = tk_traceparser_clk(st), t;
	int crc = 0;
	uint64_t ns =
		(x->clock == x->own && x->cycles_are_own) || ((x->clock == TK_CSV_TSC || x->clock == TK_CSV_RDTSC))
			? 0
			: tk_traceparser_ns(st);
	if (x->pass == 1)
		x->n_events++;
	if (code == TK__CSV_EV_NAME) {
		if (len < 2) {
			if (x->pass == 1) {
				x->malformed++;
				bad_event(x, code, "%s",
					  len == 1 ? "no name after the name number (truncated)" : "payload too short");
			}
			return 0;
		}
		const char *name = ev_string(buf, len, 1);
		uint32_t id = word(x, buf, 0);
		if (name == NULL || id >= TK__CSV_MAX_NAMES) {
			if (x->pass == 1) {
				x->malformed++;
				bad_event(x, code, "%s",
					  id >= TK__CSV_MAX_NAMES ? "name number above 2^28"
					  : memchr(buf + 1, 0, (size_t)(len - 1) * 4)
						  ? "empty name"
						  : "name not NUL-terminated (truncated)");
			}
			return 0;
		}
		if ((x->n_knames + 1) * 2 > x->knames_mask) {
			size_t nm = x->knames_mask ? x->knames_mask * 2 + 1 : 1023;
			struct kname *nk = calloc(nm + 1, sizeof(*nk));
			if (nk == NULL)
				goto nomem;
			struct kname *old = x->knames;
			size_t old_mask = x->knames_mask;
			x->knames = nk;
			x->knames_mask = nm;
			for (size_t i = 0; old != NULL && i <= old_mask; i++)
				if (old[i].name != NULL)
					*kname_slot(x, old[i].id) = old[i];
			free(old);
		}
		struct kname *k = kname_slot(x, id);
		int latin1;
		char *copy = name_text(name, &latin1);
		if (copy == NULL)
			goto nomem;
		if (x->pass == 1)
			x->latin1_names += latin1;
		if (k->name != NULL) {
			/* redefined (another import merged in): open intervals keep the old text */
			char **ng = realloc(x->grave, (x->n_grave + 1) * sizeof(*ng));
			if (ng == NULL) {
				free(copy);
				goto nomem;
			}
			x->grave = ng;
			x->grave[x->n_grave++] = k->name;
		} else {
			x->n_knames++;
		}
		k->id = id;
		k->name = copy;
		return 0;
	}
	if (code == TK__CSV_EV_COUNTER) {
		if (len < 5) {
			if (x->pass == 1) {
				x->malformed++;
				bad_event(x, code, "payload too short");
			}
			return 0;
		}
		uint32_t flags = word(x, buf, 0);
		const char *name = kname(x, flags);
		if (name == NULL) {
			if (x->pass == 1) {
				x->unnamed++;
				bad_event(x, code, "name number never defined before it");
			}
			return 0;
		}
		uint64_t bits = word(x, buf, 3) | (uint64_t)word(x, buf, 4) << 32;
		/* NaN and infinities: no CSV text for them reads back (nor does VTune read one); the
		 * sample is left out, and its counter has no column unless other samples have values */
		if (!value_finite(flags, bits)) {
			x->nonfinite += x->pass == 1;
			return 0;
		}
		int inst = (flags & TK__CSV_F_INST) != 0;
		size_t c;
		/* a name is one column, of one kind: the reader takes "A.COUNT" and "A.INST" in one
		 * file as a duplicate column; samples of the other kind are left out (counted) */
		for (c = 0; c < x->n_cols; c++)
			if (strcmp(x->cols[c].name, name) == 0)
				break;
		if (c < x->n_cols && x->cols[c].inst != inst) {
			x->kind_samples += x->pass == 1;
			return 0;
		}
		if (x->pass == 1) {
			if (c == x->n_cols) {
				/* a counter file the reader takes: at most TK__CSV_MAX_COUNTERS columns and a
				 * header line below TK__CSV_MAX_LINE; other counters are left out (counted) */
				size_t flen = 1 + field_len(name) + (inst ? 5 : 6);
				if (x->header_len == 0)
					x->header_len = sizeof("tsc.CLOCK_MONOTONIC_RAW,pid,tid\n");
				if (x->n_cols == TK__CSV_MAX_COUNTERS || x->header_len + flen > TK__CSV_MAX_LINE) {
					x->over_samples++;
					return 0;
				}
				x->header_len += flen;
				struct counter_col *nc = realloc(x->cols, (x->n_cols + 1) * sizeof(*nc));
				if (nc == NULL)
					goto nomem;
				x->cols = nc;
				x->cols[x->n_cols].name = strdup(name);
				x->cols[x->n_cols].inst = inst;
				if (x->cols[x->n_cols].name == NULL)
					goto nomem;
				x->n_cols++;
			}
			return 0;
		}
		if (c == x->n_cols)
			return 0;
		if ((crc = conv_time(x, cycles, ns, &t)) != 0)
			goto noconv;
		unsigned rf = flags & (TK__CSV_F_PID | TK__CSV_F_TID);
		/* a pid or tid the flags do not give is not written: it must not part rows either */
		uint32_t pid = rf & TK__CSV_F_PID ? word(x, buf, 1) : 0, tid = rf & TK__CSV_F_TID ? word(x, buf, 2) : 0;
		/* values of one moment and thread share a row while their columns come in order: import
		 * gives a row's values in column order, so the same rows come back (with "while no
		 * column repeats", values of columns 2, 2 then 1 made rows {2} {1, 2}, and after an
		 * import {1, 2} {2}) */
		if (x->row_has &&
		    (x->row_t != t || x->row_flags != rf || x->row_pid != pid || x->row_tid != tid || c <= x->row_last))
			if (flush_row(x) != 0) {
				x->failed = 1;
				return 0;
			}
		x->row_has = 1;
		x->row_last = c;
		x->row_t = t;
		x->row_flags = rf;
		x->row_pid = pid;
		x->row_tid = tid;
		x->row[c].present = 1;
		x->row[c].is_float = (flags & TK__CSV_F_FLOAT) != 0;
		if (x->row[c].is_float)
			memcpy(&x->row[c].d, &bits, 8);
		else
			x->row[c].i = (int64_t)bits;
		return 0;
	}
	if (x->pass != 1)
		return 0;
	int is_begin = code == TK__CSV_EV_TASK_BEGIN || code == TK__CSV_EV_FRAME_BEGIN;
	if (len < (is_begin ? 4u : 2u)) {
		x->malformed++;
		bad_event(x, code, "payload too short");
		return 0;
	}
	uint32_t flags = word(x, buf, 0);
	const char *name = kname(x, flags);
	if (name == NULL) {
		x->unnamed++;
		bad_event(x, code, "name number never defined before it");
		return 0;
	}
	if ((crc = conv_time(x, cycles, ns, &t)) != 0)
		goto noconv;
	if (is_begin) {
		uint32_t id = word(x, buf, 3);
		struct open_iv *o = open_find(x, id, 1);
		if (o == NULL) {
			if (x->open != NULL && open_find(x, id, 0) != NULL) {
				tk__csv_warn(x->msg, "%s: interval %u begins twice; the first is dropped", x->trace,
					     id);
				o = open_find(x, id, 0);
			} else {
				goto nomem;
			}
		}
		o->flags = flags & (TK__CSV_F_PID | TK__CSV_F_TID);
		if (code == TK__CSV_EV_FRAME_BEGIN)
			o->flags &= ~TK__CSV_F_TID;
		o->pid = word(x, buf, 1);
		o->tid = word(x, buf, 2);
		o->start = t;
		o->name = (char *)name;
		o->name_id = flags >> TK__CSV_NAME_SHIFT;
		return 0;
	}
	struct open_iv *o = open_find(x, word(x, buf, 1), 0);
	if (o == NULL || o->name_id != flags >> TK__CSV_NAME_SHIFT) {
		x->unmatched_end++;
		return 0;
	}
	/* a record of the name, two timestamps (UTC: 29 bytes each), pid and tid must stay below
	 * what the reader takes */
	if (field_len(o->name) > TK__CSV_MAX_LINE - 128) {
		x->long_names++;
		open_remove(x, o);
		return 0;
	}
	if ((crc = tk_csv_write_interval(x->iw, o->name, strlen(o->name), o->start, t, o->flags, o->pid, o->tid)) != 0)
		goto werr;
	x->intervals++;
	open_remove(x, o);
	return 0;
nomem:
	tk__csv_fail(x->msg, TK_ENOMEM, "out of memory");
	x->failed = 1;
	return 0;
werr:
	tk__csv_fail(x->msg, crc, "%s: write failed: %s", x->ipath, tk_strerror(crc));
	x->failed = 1;
	return 0;
noconv:
	if (crc == -2) {
		uint64_t *off = traceparser_get_info(st, TK_TRACEPARSER_INFO_OFFSET, NULL);
		tk__csv_error(
			x->msg, "%s: event at byte offset %" PRIu64 ": timestamp %" PRIu64 " (%s) does not fit in %s",
			x->trace, off ? *off : 0, x->bad_value, tk_csv_clock_name(x->own), tk_csv_clock_name(x->clock));
	} else {
		tk__csv_error(x->msg, "%s: the trace's %s timestamps cannot be given as %s", x->trace,
			      tk_csv_clock_name(x->own), tk_csv_clock_name(x->clock));
	}
	x->failed = 1;
	return 0;
}

static int kev_empty_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *b, unsigned n);

/* What did not fit in a CSV file the reader takes (counted, not exported): warnings. */
static void limits_warn(struct export *x)
{
	if (x->over_samples)
		tk__csv_warn(x->msg,
			     "%s: %" PRIu64
			     " counter samples not exported: their counters do not fit in a counter file "
			     "(at most %u counter columns and a header line of %u bytes)",
			     x->trace, x->over_samples, TK__CSV_MAX_COUNTERS, TK__CSV_MAX_LINE);
	if (x->kind_samples)
		tk__csv_warn(x->msg,
			     "%s: %" PRIu64 " counter samples not exported: their name is a counter of the other kind "
			     "(.COUNT, .INST) too, and a counter file holds a name once",
			     x->trace, x->kind_samples);
	if (x->long_names)
		tk__csv_warn(x->msg,
			     "%s: %" PRIu64
			     " intervals not exported: their name is too long for a CSV record of %u bytes",
			     x->trace, x->long_names, TK__CSV_MAX_LINE);
}

/* ... and the export's error when there was any (the files hold everything else). */
static int limits_error(struct export *x)
{
	if (x->over_samples == 0 && x->kind_samples == 0 && x->long_names == 0)
		return 0;
	tk__csv_error(x->msg,
		      "%s: %" PRIu64 " counter samples and %" PRIu64 " intervals do not fit in CSV files that "
		      "tracecsv import reads (not exported; the CSV files hold everything else)",
		      x->trace, x->over_samples + x->kind_samples, x->long_names);
	return 1;
}

static int parse_kev(struct export *x, const char *path)
{
	traceparser_init(x->st);
	tk_traceparser_cs_internal(x->st, x, kev_cb, _TRACE_USER_C >> 10, TK__CSV_EV_TASK_BEGIN, TK__CSV_EV_NAME);
	traceparser_cs(x->st, x, kev_empty_cb, _NTO_TRACE_EMPTY, _NTO_TRACE_EMPTYEVENT);
	if (traceparser(x->st, x, path) != 0) {
		const char *m = traceparser_get_info(x->st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		/* damaged midway after events of the convention: what came before the damage is
		 * exported (as tracekit convert does), the damage said and the export an error; the
		 * second pass meets the same damage */
		if (!x->failed && x->iw != NULL && x->n_events > 0) {
			if (x->pass == 1)
				snprintf(x->damage, sizeof(x->damage), "%s", m && *m ? m : strerror(errno));
			return 0;
		}
		tk__csv_error(x->msg, "%s: %s", path, m && *m ? m : strerror(errno));
		return -1;
	}
	return x->failed ? -1 : 0;
}

static int out_path(char *buf, size_t cap, const char *dir, const char *trace, const char *what, const char *host)
{
	const char *base = strrchr(trace, '/');
	base = base ? base + 1 : trace;
	char user[512];
	snprintf(user, sizeof(user), "%s", base);
	char *dot = strrchr(user, '.');
	if (dot && dot != user)
		*dot = 0;
	char fname[1024];
	char u2[600];
	snprintf(u2, sizeof(u2), "%s-%s", user, what);
	if (tk_csv_file_name(fname, sizeof(fname), u2, host) != 0)
		return -1;
	int n = snprintf(buf, cap, "%s/%s", dir, fname);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* An output that is the trace itself (however it is named) is refused. */
static int refuse_same_file(struct export *x, const char *out)
{
	if (!tk_same_file(x->trace, out))
		return 0;
	tk__csv_fail(x->msg, TK_EINVAL, "%s: is the input file: writing it would destroy the input", out);
	return 1;
}

static int kev_setup(struct export *x)
{
	char host[256];
	char *csvc = tk__csv_header_value(x->st, "TRACEKIT_CSV_CLOCK");
	char *node = tk__csv_header_value(x->st, "NODENAME");
	char *boot = tk__csv_header_value(x->st, "BOOT_DATE");
	x->boot_ns = (uint64_t)tk__csv_parse_ctime(boot) * 1000000000u;
	free(boot);
	if (csvc && tk_csv_clock_parse(csvc, &x->own) == 0) {
		x->own_utc_line = x->own == TK_CSV_UTC;
		x->cycles_are_own = 1;
		char *hz = tk__csv_header_value(x->st, "CYCLES_PER_SEC");
		x->own_hz = hz ? strtoull(hz, NULL, 10) : 0;
		free(hz);
	} else {
		x->own = tk_traceparser_header_value(x->st, "TRACEKIT_CLOCK_RAW_NS", NULL) ? TK_CSV_CLOCK_MONOTONIC_RAW
											    : TK_CSV_TSC;
	}
	free(csvc);
	x->clock = x->own;
	if (x->clock_opt != TK_CSV_CLOCK_OWN)
		x->clock = (tk_csv_clock)x->clock_opt;
	unsigned *ec = traceparser_get_info(x->st, _TRACEPARSER_INFO_ENDIAN_CONV, NULL);
	x->swap = ec ? (int)*ec : 0;
	int hrc = tk_csv_default_host(host, sizeof(host),
				      x->host_opt ? x->host_opt : (node && strcmp(node, "unknown") != 0 ? node : NULL));
	free(node);
	if (hrc != 0 || out_path(x->ipath, sizeof(x->ipath), x->dir, x->name, "intervals", host) ||
	    out_path(x->cpath, sizeof(x->cpath), x->dir, x->name, "counters", host)) {
		tk__csv_error(x->msg, "%s: cannot build the output file names", x->trace);
		return -1;
	}
	if (refuse_same_file(x, x->ipath) || refuse_same_file(x, x->cpath))
		return -1;
	int rc = tk_csv_writer_open(&x->iw, x->ipath, TK_CSV_INTERVALS, x->clock, TK_CSV_HAS_PID | TK_CSV_HAS_TID,
				    NULL, 0);
	if (rc) {
		tk__csv_fail(x->msg, rc, "%s: %s", x->ipath, tk_strerror(rc));
		return -1;
	}
	tk__csv_temp(x->msg, 0, tk_csv_writer_temp_path(x->iw));
	return 0;
}

static int kev_empty_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *b, unsigned n)
{
	struct export *x = ud;
	(void)st, (void)h, (void)t, (void)b, (void)n;
	if (x->pass == 1 && x->iw == NULL && !x->failed && kev_setup(x) != 0)
		x->failed = 1;
	return 0;
}

static int export_kev(struct export *x)
{
	const char *trace = x->trace;
	int ret = 1, rc;

	x->st = traceparser_init(NULL);
	if (x->st == NULL) {
		tk__csv_fail(x->msg, TK_ENOMEM, "out of memory");
		return 1;
	}
	x->pass = 1;
	if (parse_kev(x, trace) != 0 || x->iw == NULL) {
		goto done;
	}
	if (x->n_open)
		tk__csv_warn(x->msg, "%s: %zu intervals begin without an end (not exported)", trace, x->n_open);
	if (x->unmatched_end)
		tk__csv_warn(x->msg, "%s: %" PRIu64 " interval ends without a begin (not exported)", trace,
			     x->unmatched_end);
	if (x->unnamed)
		tk__csv_warn(x->msg, "%s: %" PRIu64 " events name no name defined before them (not exported)", trace,
			     x->unnamed);
	if (x->malformed)
		tk__csv_warn(x->msg, "%s: %" PRIu64 " malformed VTune CSV events (not exported)", trace, x->malformed);
	if (x->damage[0] && x->first_bad[0])
		tk__csv_warn(x->msg, "%s: %s (not exported)", trace, x->first_bad);
	if (x->nonfinite)
		tk__csv_warn(x->msg,
			     "%s: %" PRIu64
			     " counter samples are NaN or infinite, which CSV cannot hold (not exported)",
			     trace, x->nonfinite);
	if (x->latin1_names)
		tk__csv_warn(x->msg, "%s: %" PRIu64 " names are not UTF-8: written as read as Latin-1", trace,
			     x->latin1_names);
	limits_warn(x);
	if (x->n_cols) {
		tk_csv_counter *cc = calloc(x->n_cols, sizeof(*cc));
		x->row = calloc(x->n_cols, sizeof(*x->row));
		if (cc == NULL || x->row == NULL) {
			free(cc);
			tk__csv_fail(x->msg, TK_ENOMEM, "out of memory");
			goto done;
		}
		for (size_t i = 0; i < x->n_cols; i++)
			cc[i] = (tk_csv_counter){x->cols[i].name, x->cols[i].inst};
		rc = tk_csv_writer_open(&x->cw, x->cpath, TK_CSV_COUNTERS, x->clock, TK_CSV_HAS_PID | TK_CSV_HAS_TID,
					cc, x->n_cols);
		free(cc);
		if (rc) {
			tk__csv_fail(x->msg, rc, "%s: %s", x->cpath, tk_strerror(rc));
			goto done;
		}
		tk__csv_temp(x->msg, 1, tk_csv_writer_temp_path(x->cw));
		x->have_counters = 1;
		x->pass = 2;
		if (parse_kev(x, trace) != 0 || flush_row(x) != 0)
			goto done;
	}
	if (x->cw) {
		rc = tk_csv_writer_close(x->cw);
		x->cw = NULL;
		if (rc) {
			tk__csv_fail(x->msg, rc, "%s: write failed: %s", x->cpath, tk_strerror(rc));
			goto done;
		}
	}
	rc = tk_csv_writer_close(x->iw);
	x->iw = NULL;
	if (rc) {
		tk__csv_fail(x->msg, rc, "%s: write failed: %s", x->ipath, tk_strerror(rc));
		if (x->n_cols)
			unlink(x->cpath); /* both files or none */
		goto done;
	}
	ret = 0;
	/* written, every valid interval and counter in them; the input was not all valid */
	if (x->damage[0]) {
		tk__csv_error(x->msg, "%s: %s (the CSV files hold the data before it)", trace, x->damage);
		ret = 2;
	} else if (x->malformed || x->unnamed) {
		tk__csv_error(x->msg,
			      "%s: %s; %" PRIu64 " VTune CSV events malformed or naming no name (not exported; the CSV "
			      "files hold everything else)",
			      trace, x->first_bad, x->malformed + x->unnamed);
		ret = 2;
	} else if (limits_error(x)) {
		ret = 2;
	}
done:
	tk_csv_writer_abort(x->iw);
	tk_csv_writer_abort(x->cw);
	free(x->open);
	for (size_t i = 0; x->knames != NULL && i <= x->knames_mask; i++)
		free(x->knames[i].name);
	free(x->knames);
	for (size_t i = 0; i < x->n_grave; i++)
		free(x->grave[i]);
	free(x->grave);
	for (size_t i = 0; i < x->n_cols; i++)
		free(x->cols[i].name);
	free(x->cols);
	free(x->row);
	traceparser_destroy(&x->st);
	return ret;
}

/* ---- export from .tb5 ------------------------------------------------------------------- */

/* An event of a .tb5 stream: a name by its id (ids come from the file and may be sparse). */
struct tb5_name {
	uint32_t id;
	uint32_t seq; /* order of description: the last description of an id counts */
	int inst;     /* .INST counter (any description of the id said so) */
	char *name;   /* NULL: its text could not be read */
};

struct tb5x {
	TBRW_PTR p;
	struct tb5_name *names; /* by id once sorted, one per id */
	uint32_t n_names, cap_names;
	int dense; /* names[i].id == i for every i: an id is its index */
	int failed;
	tk_csv_writer *w;
	struct export *x;
	int counters;
	/* counter rows */
	struct counter_col *cols;
	size_t n_cols;
	size_t n_records; /* records of the stream before this batch (for messages) */
	/* the column of each name (index in names): -1 beyond what a counter file holds, -2 a
	 * text another name of the other kind has (the reader takes a name once a file) */
	long *col_of;
};

/* FNV-1a of a name, for the columns' table. */
static uint32_t text_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static char *narrow(const TBRW_CHAR *w)
{
	TBRW_U32 n = 0;
	TBRW_convert_wcs_to_utf8(w, NULL, &n);
	if (n == 0)
		return NULL;
	char *s = malloc(n);
	if (s && TBRW_convert_wcs_to_utf8(w, s, &n) != VT_SUCCESS) {
		free(s);
		return NULL;
	}
	return s;
}

static char *id_string(TBRW_PTR p, TBRW_STRING_OR_ID *sid)
{
	TBRW_U32 need = 0;
	if (sid->soi_uniqueid == 0)
		return strdup("");
	TBRW_convert_uniqueid_to_string(p, 0, sid, NULL, &need);
	if (need == 0)
		return NULL;
	TBRW_CHAR *w = malloc(need * sizeof(TBRW_CHAR));
	if (w == NULL || TBRW_convert_uniqueid_to_string(p, need, sid, w, &need) != VT_SUCCESS) {
		free(w);
		return NULL;
	}
	char *s = narrow(w);
	free(w);
	return s;
}

/*
 * The enumeration callbacks return TRUE for the next batch and FALSE to stop (tbrw_types.h):
 * VT_SUCCESS is FALSE, so returning it exported only the first batch (1 MiB of records).
 */
static TBRW_U32 tb5_event_cb(TBRW_EVENT *evs, TBRW_U32 size, TBRW_U32 num, void *ud)
{
	struct tb5x *t = ud;
	(void)size;
	for (TBRW_U32 k = 0; k < num; k++) {
		TBRW_EVENT *ev = &evs[k];
		if (ev->event_id > 100000000u || t->n_names == 100000000u) {
			t->failed = 1;
			return FALSE; /* stop: t->failed says why */
		}
		if (t->n_names == t->cap_names) {
			uint32_t nc = t->cap_names ? t->cap_names * 2 : 64;
			struct tb5_name *nn = realloc(t->names, (size_t)nc * sizeof(*nn));
			if (nn == NULL) {
				t->failed = 1;
				return FALSE; /* stop: t->failed says why */
			}
			t->names = nn;
			t->cap_names = nc;
		}
		struct tb5_name *n = &t->names[t->n_names];
		n->id = ev->event_id;
		n->seq = t->n_names++;
		n->name = id_string(t->p, &ev->event_name);
		if (n->name != NULL && !tk__utf8_valid(n->name, strlen(n->name))) {
			int latin1;
			char *text = name_text(n->name, &latin1);
			free(n->name);
			n->name = text;
			t->x->latin1_names++;
		}
		char *arch = id_string(t->p, &ev->event_arch_name);
		n->inst = arch && strcmp(arch, "INST") == 0;
		free(arch);
		if (n->name == NULL)
			t->failed = 1;
	}
	return TRUE; /* the next batch */
}

static int tb5_name_cmp(const void *pa, const void *pb)
{
	const struct tb5_name *a = pa, *b = pb;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Sorts the names by id and keeps one per id: the last text, .INST if any said so. */
static void tb5_names_index(struct tb5x *t)
{
	if (t->n_names > 1) /* qsort of NULL, 0 is undefined */
		qsort(t->names, t->n_names, sizeof(*t->names), tb5_name_cmp);
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->n_names; i++) {
		if (n > 0 && t->names[n - 1].id == t->names[i].id) {
			free(t->names[n - 1].name);
			t->names[n - 1].name = t->names[i].name;
			t->names[n - 1].inst |= t->names[i].inst;
		} else {
			t->names[n++] = t->names[i];
		}
	}
	t->n_names = n;
	t->dense = n == 0 || t->names[n - 1].id == n - 1;
}

/* The index of event id in the sorted names, -1 when the stream does not describe it. */
static long tb5_name_find(const struct tb5x *t, uint32_t id)
{
	if (t->dense)
		return id < t->n_names && t->names[id].name != NULL ? (long)id : -1;
	size_t lo = 0, hi = t->n_names;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->names[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n_names && t->names[lo].id == id && t->names[lo].name != NULL ? (long)lo : -1;
}

static void tb5_names_free(struct tb5x *t)
{
	for (uint32_t i = 0; i < t->n_names; i++)
		free(t->names[i].name);
	free(t->names);
	t->names = NULL;
	t->n_names = t->cap_names = 0;
}

/* A .tb5 record's time on a ns time line (UTC: since 1970; otherwise since boot). TSC values
 * have none (the rate is not recorded): conv_time() then only gives TSC/RDTSC. */
static uint64_t tb5_ns(const struct export *x, uint64_t v)
{
	if (x->own == TK_CSV_QPC)
		return v * (1000000000u / TK__CSV_QPC_HZ);
	return v;
}

/* A .tb5 record's time converted to the output clock (conv_time()); on failure the message
 * names the record ("interval record 12") and 1 is returned. */
static int tb5_time(struct tb5x *t, const char *kind, size_t rec, uint64_t v, uint64_t *out)
{
	struct export *x = t->x;
	int crc = conv_time(x, v, tb5_ns(x, v), out);

	if (crc == -2)
		tk__csv_error(x->msg, "%s: %s record %zu: timestamp %" PRIu64 " (%s) does not fit in %s", x->trace,
			      kind, rec, x->bad_value, tk_csv_clock_name(x->own), tk_csv_clock_name(x->clock));
	else if (crc)
		tk__csv_error(x->msg, "%s: the trace's %s timestamps cannot be given as %s", x->trace,
			      tk_csv_clock_name(x->own), tk_csv_clock_name(x->clock));
	return crc != 0;
}

/* A record of an event its stream does not describe: not exported, counted, the first named
 * (the export then writes the rest and returns an error, as for malformed .kev events). */
static void tb5_bad_record(struct tb5x *t, const char *kind, size_t rec, uint32_t event)
{
	struct export *x = t->x;
	if (x->malformed++ == 0)
		snprintf(x->first_bad, sizeof(x->first_bad),
			 "%s record %zu: names event %u, which the stream does not describe", kind, rec, event);
}

static TBRW_U32 tb5_data_cb(void *data, TBRW_U32 size, TBRW_U32 num, void *ud)
{
	(void)num;
	struct tb5x *t = ud;
	struct export *x = t->x;
	if (!t->counters) {
		const struct tk__csv_tb5_interval *r = data;
		for (size_t i = 0; i < size / sizeof(*r); i++) {
			struct tk__csv_tb5_interval iv;
			memcpy(&iv, &r[i], sizeof(iv));
			long ni = tb5_name_find(t, iv.name);
			if (ni < 0) {
				tb5_bad_record(t, "interval", t->n_records + i + 1, iv.name);
				continue;
			}
			uint64_t s, e;
			if (tb5_time(t, "interval", t->n_records + i + 1, iv.start, &s) ||
			    tb5_time(t, "interval", t->n_records + i + 1, iv.end, &e)) {
				t->failed = 1;
				return FALSE; /* stop: t->failed says why */
			}
			const char *nm = t->names[ni].name;
			if (field_len(nm) > TK__CSV_MAX_LINE - 128) { /* as in a .kev */
				x->long_names++;
				continue;
			}
			int wrc = tk_csv_write_interval(t->w, nm, strlen(nm), s, e,
							iv.flags & (TK__CSV_F_PID | TK__CSV_F_TID), iv.pid, iv.tid);
			if (wrc) {
				tk__csv_fail(t->x->msg, wrc, "%s: write failed: %s", x->ipath, tk_strerror(wrc));
				t->failed = 1;
				return FALSE; /* stop: t->failed says why */
			}
		}
	} else {
		const struct tk__csv_tb5_counter *r = data;
		for (size_t i = 0; i < size / sizeof(*r); i++) {
			struct tk__csv_tb5_counter cv;
			memcpy(&cv, &r[i], sizeof(cv));
			long ci = tb5_name_find(t, cv.name);
			if (ci < 0) {
				tb5_bad_record(t, "counter", t->n_records + i + 1, cv.name);
				continue;
			}
			if (!value_finite(cv.flags, cv.value)) {
				x->nonfinite++; /* as in a .kev: no CSV text reads back */
				continue;
			}
			long col = t->col_of[ci]; /* columns in order of id, one per text */
			if (col < 0) { /* beyond what a counter file holds, or of the other kind (as in a .kev) */
				if (col == -1)
					x->over_samples++;
				else
					x->kind_samples++;
				continue;
			}
			size_t c = (size_t)col;
			uint64_t tt;
			if (tb5_time(t, "counter", t->n_records + i + 1, cv.time, &tt)) {
				t->failed = 1;
				return FALSE; /* stop: t->failed says why */
			}
			unsigned rf = cv.flags & (TK__CSV_F_PID | TK__CSV_F_TID);
			if (!(rf & TK__CSV_F_PID)) /* not written: must not part rows (as in a .kev) */
				cv.pid = 0;
			if (!(rf & TK__CSV_F_TID))
				cv.tid = 0;
			if (x->row_has && (x->row_t != tt || x->row_flags != rf || x->row_pid != cv.pid ||
					   x->row_tid != cv.tid || c <= x->row_last)) /* as in a .kev */
				if (flush_row(x)) {
					t->failed = 1;
					return FALSE; /* stop: t->failed says why */
				}
			x->row_has = 1;
			x->row_last = c;
			x->row_t = tt;
			x->row_flags = rf;
			x->row_pid = cv.pid;
			x->row_tid = cv.tid;
			x->row[c].present = 1;
			x->row[c].is_float = (cv.flags & TK__CSV_F_FLOAT) != 0;
			if (x->row[c].is_float)
				memcpy(&x->row[c].d, &cv.value, 8);
			else
				x->row[c].i = (int64_t)cv.value;
		}
	}
	t->n_records +=
		t->counters ? size / sizeof(struct tk__csv_tb5_counter) : size / sizeof(struct tk__csv_tb5_interval);
	return TRUE; /* the next batch */
}

static int export_tb5(struct export *x)
{
	const char *trace = x->trace, *name = x->name, *dir = x->dir, *host_opt = x->host_opt;
	struct tb5x t;
	memset(&t, 0, sizeof(t));
	t.x = x;
	int ret = 1, have_own = 0;
	char ipath[2048], cpath[2048], host[256], thost[256] = "";
	TBRW_U32 rc, ns = 0;
	int stream_of[2] = {-1, -1};

	wchar_t *wt = tk__csv_wide(trace);
	if (wt == NULL) {
		tk__csv_error(x->msg, "%s: not a valid UTF-8 name", trace);
		return 1;
	}
	rc = TBRW_open(&t.p, wt, TBRW_FILE_READ);
	free(wt);
	if (rc) {
		tk__csv_tbrw_fail(x->msg, trace, rc);
		return 1;
	}
	if ((rc = TBRW_get_number_data_streams(t.p, &ns))) {
		tk__csv_tbrw_fail(x->msg, trace, rc);
		goto done;
	}
	/* the streams tk_csv_import() wrote: a custom stream whose comment says "VTune CSV" */
	for (TBRW_U32 s = 0; s < ns; s++) {
		TBRW_U32 need = 0;
		if ((rc = TBRW_reading_stream(t.p, s)))
			continue;
		unsigned char sibuf[4096];
		if (TBRW_reading_stream_section(t.p, s, TBRW_STREAM_INFO_SECTION) == VT_SUCCESS) {
			if (TBRW_get_stream_info(t.p, s, sizeof(sibuf), sibuf, &need) == VT_SUCCESS) {
				TBRW_STREAM_INFO *si = (TBRW_STREAM_INFO *)sibuf;
				char *c = id_string(t.p, &si->comment);
				char kind[32], dom[32], h[200];
				if (c && sscanf(c, "VTune CSV %31[a-z]; timestamps %31[A-Z_]; host %199s", kind, dom,
						h) == 3) {
					int k = strcmp(kind, "counters") == 0;
					if (stream_of[k] < 0 && tk_csv_clock_parse(dom, &x->own) == 0) {
						stream_of[k] = (int)s;
						have_own = 1;
						if (strcmp(h, "unknown") != 0)
							snprintf(thost, sizeof(thost), "%s", h);
					}
				}
				free(c);
			}
			TBRW_done_stream_section(t.p, s, TBRW_STREAM_INFO_SECTION);
		}
		TBRW_done_stream(t.p, s);
	}
		if (!have_own) {
		tk__csv_error(x->msg, "%s: no interval or counter stream written by tracecsv import", trace);
		goto done;
	}
	x->own_utc_line = x->own == TK_CSV_UTC;
	x->cycles_are_own = 1;
	x->own_hz = x->own == TK_CSV_QPC ? TK__CSV_QPC_HZ : 1000000000u;
	x->clock = x->clock_opt == TK_CSV_CLOCK_OWN ? x->own : (tk_csv_clock)x->clock_opt;
	if ((x->own == TK_CSV_TSC || x->own == TK_CSV_RDTSC) && x->clock != TK_CSV_TSC && x->clock != TK_CSV_RDTSC) {
		tk__csv_error(x->msg,
			      "%s: the file's %s timestamps cannot be given as %s (the TSC rate is not recorded)",
			      trace, tk_csv_clock_name(x->own), tk_csv_clock_name(x->clock));
		goto done;
	}
	if (tk_csv_default_host(host, sizeof(host), host_opt ? host_opt : thost) != 0 ||
	    out_path(ipath, sizeof(ipath), dir, name, "intervals", host) ||
	    out_path(cpath, sizeof(cpath), dir, name, "counters", host)) {
		tk__csv_error(x->msg, "%s: cannot build the output file names", trace);
		goto done;
	}
	if (refuse_same_file(x, ipath) || refuse_same_file(x, cpath))
		goto done;
	snprintf(x->ipath, sizeof(x->ipath), "%s", ipath);
	snprintf(x->cpath, sizeof(x->cpath), "%s", cpath);
	for (int k = 0; k < 2; k++) {
		if (stream_of[k] < 0 && k == 1)
			continue;
		TBRW_U32 s = stream_of[k] < 0 ? 0 : (TBRW_U32)stream_of[k];
		t.counters = k;
		t.n_records = 0;
		tb5_names_free(&t);
		if (stream_of[k] >= 0) {
			if ((rc = TBRW_reading_stream(t.p, s)) ||
			    (rc = TBRW_reading_stream_section(t.p, s, TBRW_EVENT_DESCRIPTION_SECTION)) ||
			    (rc = TBRW_enumerate_events(t.p, s, tb5_event_cb, &t, 0)) ||
			    (rc = TBRW_done_stream_section(t.p, s, TBRW_EVENT_DESCRIPTION_SECTION))) {
				tk__csv_tbrw_fail(x->msg, trace, rc);
				goto done;
			}
			if (t.failed)
				goto done;
			tb5_names_index(&t);
		}
		if (!k) {
			rc = (TBRW_U32)tk_csv_writer_open(&x->iw, ipath, TK_CSV_INTERVALS, x->clock,
							  TK_CSV_HAS_PID | TK_CSV_HAS_TID, NULL, 0);
			t.w = x->iw;
		} else {
			/* counter columns in order of event id, which is the order names were met */
			tk_csv_counter *cc = calloc(t.n_names + 1, sizeof(*cc));
			x->row = calloc(t.n_names + 1, sizeof(*x->row));
			if (cc == NULL || x->row == NULL) {
				free(cc);
				tk__csv_fail(x->msg, TK_ENOMEM, "out of memory");
				goto done;
			}
			/* a column per text, while they fit in a counter file the reader takes (as in
			 * a .kev); ids of one text share it (of the other kind: left out) */
			free(t.col_of);
			t.col_of = malloc((t.n_names + 1) * sizeof(*t.col_of));
			enum { TSLOTS = 4096 }; /* > 2 * TK__CSV_MAX_COUNTERS */
			long *slot = malloc(TSLOTS * sizeof(*slot));
			if (t.col_of == NULL || slot == NULL) {
				free(cc);
				free(slot);
				tk__csv_fail(x->msg, TK_ENOMEM, "out of memory");
				goto done;
			}
			for (size_t i = 0; i < TSLOTS; i++)
				slot[i] = -1;
			size_t n = 0, hlen = sizeof("tsc.CLOCK_MONOTONIC_RAW,pid,tid\n");
			for (uint32_t i = 0; i < t.n_names; i++) {
				const char *nm = t.names[i].name;
				size_t h = text_hash(nm) & (TSLOTS - 1);
				while (slot[h] >= 0 && strcmp(cc[slot[h]].name, nm) != 0)
					h = (h + 1) & (TSLOTS - 1);
				if (slot[h] >= 0) {
					t.col_of[i] = cc[slot[h]].inst == t.names[i].inst ? slot[h] : -2;
					continue;
				}
				size_t flen = 1 + field_len(nm) + (t.names[i].inst ? 5 : 6);
				if (n == TK__CSV_MAX_COUNTERS || hlen + flen > TK__CSV_MAX_LINE) {
					t.col_of[i] = -1;
					continue;
				}
				hlen += flen;
				cc[n] = (tk_csv_counter){ nm, t.names[i].inst };
				slot[h] = (long)n;
				t.col_of[i] = (long)n++;
			}
			free(slot);
			x->n_cols = n;
			/* .INST or .COUNT: from the records' flags (a first pass over the records) */
			t.cols = NULL;
			rc = n ? (TBRW_U32)tk_csv_writer_open(&x->cw, cpath, TK_CSV_COUNTERS, x->clock,
							       TK_CSV_HAS_PID | TK_CSV_HAS_TID, cc, n)
			       : (TBRW_U32)TK_EFORMAT;
			free(cc);
			t.w = x->cw;
		}
		if (rc) {
			tk__csv_error(x->msg, "%s: %s", k ? cpath : ipath, tk_strerror((int)rc));
			goto done;
		}
		tk__csv_temp(x->msg, k, tk_csv_writer_temp_path(k ? x->cw : x->iw));
		x->have_counters |= k;
		if (stream_of[k] >= 0) {
			if ((rc = TBRW_reading_stream_section(t.p, s, TBRW_DATA_SECTION)) ||
			    (rc = TBRW_enumerate_data(t.p, s, tb5_data_cb, &t, 0)) ||
			    (rc = TBRW_done_stream_section(t.p, s, TBRW_DATA_SECTION)) ||
			    (rc = TBRW_done_stream(t.p, s))) {
				if (!t.failed)
					tk__csv_tbrw_fail(x->msg, trace, rc);
				goto done;
			}
			if (t.failed)
				goto done;
		}
		if (k && flush_row(x))
			goto done;
	}
	if (x->nonfinite)
		tk__csv_warn(x->msg,
			     "%s: %" PRIu64
			     " counter samples are NaN or infinite, which CSV cannot hold (not exported)",
			     trace, x->nonfinite);
	if (x->latin1_names)
		tk__csv_warn(x->msg, "%s: %" PRIu64 " names are not UTF-8: written as read as Latin-1", trace,
			     x->latin1_names);
	limits_warn(x);
	/* both files or none: a failed counters file discards the intervals file (at done) */
	if (x->cw) {
		int r2 = tk_csv_writer_close(x->cw);
		x->cw = NULL;
		if (r2) {
			tk__csv_fail(x->msg, r2, "%s: write failed: %s", cpath, tk_strerror(r2));
			goto done;
		}
	}
	if (x->iw) {
		int r2 = tk_csv_writer_close(x->iw);
		x->iw = NULL;
		if (r2) {
			tk__csv_fail(x->msg, r2, "%s: write failed: %s", ipath, tk_strerror(r2));
			if (x->have_counters)
				unlink(cpath);
			goto done;
		}
	}
	ret = 0;
	if (x->malformed) {
		tk__csv_error(x->msg,
			      "%s: %s; %" PRIu64 " records of undescribed events (not exported; the CSV files hold "
			      "everything else)",
			      trace, x->first_bad, x->malformed);
		ret = 2;
	} else if (limits_error(x)) {
		ret = 2;
	}
done:
	tk_csv_writer_abort(x->iw);
	tk_csv_writer_abort(x->cw);
	free(x->row);
	free(t.col_of);
	tb5_names_free(&t);
	TBRW_close(t.p);
	return ret;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int tk_csv_export(const char *trace, const tk_csv_export_options *opt, tk_csv_convert *cv, char *intervals_path,
		  char *counters_path)
{
	struct tk__csv_msg msg = {cv, 0};
	tk_csv_export_options o = TK_CSV_EXPORT_OPTIONS_INIT;
	if (opt != NULL)
		memcpy(&o, opt, opt->struct_size < sizeof(o) ? opt->struct_size : sizeof(o));
	/* written: a field added later, set only for callers whose structure has it */
	int has_written = cv != NULL && cv->struct_size >= offsetof(tk_csv_convert, written) + sizeof(cv->written);
	if (cv != NULL)
		cv->error[0] = 0;
	if (has_written)
		cv->written = 0;
	if (intervals_path != NULL)
		intervals_path[0] = 0;
	if (counters_path != NULL)
		counters_path[0] = 0;
	if (trace == NULL) {
		tk__csv_fail(&msg, TK_EINVAL, "tk_csv_export: no trace given");
		return msg.code;
	}
	if (o.clock != TK_CSV_CLOCK_OWN && tk_csv_clock_name((tk_csv_clock)o.clock) == NULL) {
		tk__csv_fail(&msg, TK_EINVAL, "%s: unknown clock %d", trace, o.clock);
		return msg.code;
	}
	struct export x;
	memset(&x, 0, sizeof(x));
	x.msg = &msg;
	x.trace = trace;
	x.name = o.name ? o.name : trace;
	x.dir = o.dir ? o.dir : ".";
	x.clock_opt = o.clock;
	x.host_opt = o.host;
	int tb5 = o.format == TK_CSV_TRACE_TB5 || (o.format == TK_CSV_TRACE_AUTO && ends_with(trace, ".tb5"));
	int rc = tb5 ? export_tb5(&x) : export_kev(&x);
	tk__csv_temp(&msg, 0, NULL);
	tk__csv_temp(&msg, 1, NULL);
	if (rc != 0 && rc != 2) {
		if (msg.code == 0)
			tk__csv_fail(&msg, TK_EIO, "%s: export failed", trace);
		return msg.code;
	}
	if (intervals_path != NULL)
		snprintf(intervals_path, 2048, "%s", x.ipath);
	if (counters_path != NULL && x.have_counters)
		snprintf(counters_path, 2048, "%s", x.cpath);
	if (rc == 2) { /* the files are written; the trace was not all valid (msg says where) */
		if (has_written)
			cv->written = 1;
		return msg.code;
	}
	return 0;
}
