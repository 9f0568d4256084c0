/* SPDX-License-Identifier: MIT */
/*
 * tracecsv: VTune(TM) external-data CSV files to and from tracekit traces.
 *   tracecsv import [-o OUT.kev|OUT.tb5] [--into BASE.kev] FILE.csv...
 *   tracecsv export [-o DIR] [--clock KIND] [--host NAME] TRACE.kev|TRACE.tb5
 * docs/tracecsv.md is the manual, docs/vtune-csv.md the format and the user events.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "tracekit/csv.h"
#include "tracekit/samprec_shared.h"
#include "tracekit/tbrw.h"
#include "tracekit/traceparser.h"

#include "tool_cli.h"

/* The documented user events (docs/vtune-csv.md, "Intervals and counters in .kev"). */
#define EV_TASK_BEGIN 1000
#define EV_TASK_END 1001
#define EV_FRAME_BEGIN 1002
#define EV_FRAME_END 1003
#define EV_COUNTER 1004
#define EV_NAME 1005
#define NAME_SHIFT 4 /* word 0: flags | name << NAME_SHIFT */
#define MAX_NAMES (1u << (32 - NAME_SHIFT))
#define F_PID 0x1u
#define F_TID 0x2u
#define F_INST 0x4u
#define F_FLOAT 0x8u
#define QPC_HZ 10000000ull

static const char usage_text[] =
	"Usage: tracecsv import [-o OUT.kev|OUT.tb5] [--into BASE.kev] [OPTION]... FILE.csv...\n"
	"       tracecsv export [-o DIR] [--clock KIND] [--host NAME] TRACE.kev|TRACE.tb5\n"
	"Convert VTune external-data CSV files (intervals: frames and tasks; counters) to and\n"
	"from tracekit traces.\n"
	"\n"
	"import: read the CSV files (merged in time order) into a .kev trace (user events) or a\n"
	"        .tb5 file (an interval and a counter stream)\n"
	"  -o, --output=FILE      output file, .kev or .tb5 (default: imported.kev)\n"
	"      --into=BASE.kev    merge the CSV data into a copy of this trace\n"
	"      --tsc-hz=HZ        rate of TSC/RDTSC timestamps (default: this machine's)\n"
	"      --qpc-hz=HZ        rate of QPC timestamps (default 10000000)\n"
	"export: write <name>-intervals-hostname-<host>.csv and, when the trace has counters,\n"
	"        <name>-counters-hostname-<host>.csv\n"
	"  -o, --output=DIR       directory for the CSV files (default: .)\n"
	"      --clock=KIND       timestamps as QPC, CLOCK_MONOTONIC_RAW, RDTSC, TSC or UTC\n"
	"                         (default: the trace's own)\n"
	"      --host=NAME        host in the file names (default: the trace's, else\n"
	"                         $VTUNE_HOSTNAME, else this machine's)\n"
	"  -q, --quiet            no warnings\n"
	"  -h, --help             show this help and exit\n"
	"      --version          show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 on bad input or a failed write (nothing is left under the\n"
	"output's name), 2 on a usage error. The manual is tracecsv(1) (docs/tracecsv.md).\n";

static int quiet;

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	va_list ap;
	if (quiet || tktool_quiet)
		return;
	va_start(ap, fmt);
	fputs("tracecsv: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

#define err(...) tktool_error(NULL, __VA_ARGS__)
#define usage_error(...) tktool_usage_error(__VA_ARGS__)

/* A temporary the signal handler removes (slot for tktool_cleanup_forget). */
static int cleanup_slots[2] = {-1, -1};
static void cleanup_set2(int i, const char *path)
{
	tktool_cleanup_forget(cleanup_slots[i]);
	struct stat sb;
	/* only a regular file of ours: an output written in place (a FIFO, a device) is never
	 * removed */
	cleanup_slots[i] = path && *path && strcmp(path, "-") != 0 && (lstat(path, &sb) != 0 || S_ISREG(sb.st_mode))
				   ? tktool_cleanup_add(path)
				   : -1;
}
#define cleanup_set(path) cleanup_set2(0, path)

static const char *ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0 ? s + n - m : NULL;
}

/* ---- the library's callbacks ---- */

static void on_warning(void *user_data, const char *message)
{
	(void)user_data;
	warn("%s", message);
}

static void on_temp(void *user_data, int slot, const char *path)
{
	(void)user_data;
	cleanup_set2(slot, path);
}

static void on_progress(void *user_data, uint64_t done, uint64_t total)
{
	struct tktool_progress *p = user_data;
	if (!p->begun) {
		tktool_progress_begin(p, "importing", total);
		p->begun = 1;
	}
	tktool_progress_update(p, done);
}

static void convert_init(tk_csv_convert *cv, struct tktool_progress *prog)
{
	memset(cv, 0, sizeof(*cv));
	memset(prog, 0, sizeof(*prog));
	cv->struct_size = sizeof(*cv);
	cv->warning_cb = on_warning;
	cv->progress_cb = on_progress;
	cv->temp_cb = on_temp;
	cv->user_data = prog;
}

/* ---- helpers of the export (moving into the csv module) ---- */

static char *hval(struct traceparser_state *st, const char *key)
{
	unsigned len;
	const char *v = tk_traceparser_header_value(st, key, &len);
	if (v == NULL)
		return NULL;
	while (len > 0 && (v[len - 1] == '\n' || v[len - 1] == 0 || v[len - 1] == ' '))
		len--;
	char *c = malloc(len + 1);
	if (c) {
		memcpy(c, v, len);
		c[len] = 0;
	}
	return c;
}

static time_t parse_ctime(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	if (s == NULL || strptime(s, "%a %b %d %H:%M:%S %Y", &tm) == NULL)
		return 0;
	tm.tm_isdst = -1;
	return mktime(&tm);
}

struct tb5_interval {
	uint64_t start, end;
	uint32_t name, flags, pid, tid;
};

struct tb5_counter {
	uint64_t time;
	uint32_t name, flags, pid, tid;
	uint64_t value; /* int64, or a double's bits when flags has F_FLOAT */
};

static int tbrw_fail(const char *what, TBRW_U32 rc)
{
	const char *d = tk_tbrw_error_detail();
	const TBRW_CHAR *s = NULL;
	TBRW_error_string(rc, &s);
	if (d && *d)
		err("%s: %s", what, d);
	else
		err("%s: %ls", what, s ? s : L"error");
	return -1;
}

static wchar_t *wide(const char *s)
{
	TBRW_U32 n = 0;
	if (TBRW_convert_utf8_to_wcs(s, NULL, &n) != TBRW_BUFFER_TOO_SMALL && n == 0)
		return NULL;
	wchar_t *w = malloc(n * sizeof(wchar_t));
	if (w && TBRW_convert_utf8_to_wcs(s, w, &n) != VT_SUCCESS) {
		free(w);
		return NULL;
	}
	return w;
}

/* ---- export ----------------------------------------------------------------------------- */

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
	const char *dir, *clock_opt, *host_opt, *name;
	char ipath[2048], cpath[2048];
	int usage;
	/* names of the .kev (EV_NAME), by id; replaced ones kept until the end */
	char **knames, **grave;
	size_t n_knames, n_grave;
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
	int failed;
};

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
		*out = mono / (1000000000u / QPC_HZ);
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
		err("%s: write failed: %s", x->cpath, tk_strerror(rc));
		return -1;
	}
	memset(x->row, 0, x->n_cols * sizeof(*x->row));
	return 0;
}

static const char *kname(struct export *x, uint32_t w0)
{
	uint32_t id = w0 >> NAME_SHIFT;
	return id < x->n_knames ? x->knames[id] : NULL;
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
	uint64_t ns = (x->clock == x->own && x->cycles_are_own) || ((x->clock == TK_CSV_TSC || x->clock == TK_CSV_RDTSC))
			      ? 0
			      : tk_traceparser_ns(st);
	if (code == EV_NAME) {
		const char *name = ev_string(buf, len, 1);
		uint32_t id = len >= 1 ? word(x, buf, 0) : MAX_NAMES;
		if (name == NULL || id >= MAX_NAMES)
			return 0;
		if (id >= x->n_knames) {
			size_t nn = x->n_knames ? x->n_knames * 2 : 1024;
			while (nn <= id)
				nn *= 2;
			char **nk = realloc(x->knames, nn * sizeof(*nk));
			if (nk == NULL)
				goto nomem;
			memset(nk + x->n_knames, 0, (nn - x->n_knames) * sizeof(*nk));
			x->knames = nk;
			x->n_knames = nn;
		}
		if (x->knames[id] != NULL) {
			/* redefined (another import merged in): open intervals keep the old text */
			char **ng = realloc(x->grave, (x->n_grave + 1) * sizeof(*ng));
			if (ng == NULL)
				goto nomem;
			x->grave = ng;
			x->grave[x->n_grave++] = x->knames[id];
		}
		x->knames[id] = strdup(name);
		if (x->knames[id] == NULL)
			goto nomem;
		return 0;
	}
	if (code == EV_COUNTER) {
		if (len < 5)
			return 0;
		uint32_t flags = word(x, buf, 0);
		const char *name = kname(x, flags);
		if (name == NULL) {
			x->unnamed++;
			return 0;
		}
		int inst = (flags & F_INST) != 0;
		size_t c;
		for (c = 0; c < x->n_cols; c++)
			if (x->cols[c].inst == inst && strcmp(x->cols[c].name, name) == 0)
				break;
		if (x->pass == 1) {
			if (c == x->n_cols) {
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
		uint32_t pid = word(x, buf, 1), tid = word(x, buf, 2);
		unsigned rf = flags & (F_PID | F_TID);
		uint64_t bits = word(x, buf, 3) | (uint64_t)word(x, buf, 4) << 32;
		/* values of one moment and thread share a row while no column repeats */
		if (x->row_has && (x->row_t != t || x->row_flags != rf || x->row_pid != pid || x->row_tid != tid ||
				   x->row[c].present))
			if (flush_row(x) != 0) {
				x->failed = 1;
				return 0;
			}
		x->row_has = 1;
		x->row_t = t;
		x->row_flags = rf;
		x->row_pid = pid;
		x->row_tid = tid;
		x->row[c].present = 1;
		x->row[c].is_float = (flags & F_FLOAT) != 0;
		if (x->row[c].is_float)
			memcpy(&x->row[c].d, &bits, 8);
		else
			x->row[c].i = (int64_t)bits;
		return 0;
	}
	if (x->pass != 1 || len < 2)
		return 0;
	uint32_t flags = word(x, buf, 0);
	const char *name = kname(x, flags);
	if (name == NULL) {
		x->unnamed++;
		return 0;
	}
	if ((crc = conv_time(x, cycles, ns, &t)) != 0)
		goto noconv;
	if (code == EV_TASK_BEGIN || code == EV_FRAME_BEGIN) {
		if (len < 4)
			return 0;
		uint32_t id = word(x, buf, 3);
		struct open_iv *o = open_find(x, id, 1);
		if (o == NULL) {
			if (x->open != NULL && open_find(x, id, 0) != NULL) {
				warn("%s: interval %u begins twice; the first is dropped", x->trace, id);
				o = open_find(x, id, 0);
			} else {
				goto nomem;
			}
		}
		o->flags = flags & (F_PID | F_TID);
		if (code == EV_FRAME_BEGIN)
			o->flags &= ~F_TID;
		o->pid = word(x, buf, 1);
		o->tid = word(x, buf, 2);
		o->start = t;
		o->name = (char *)name;
		o->name_id = flags >> NAME_SHIFT;
		return 0;
	}
	struct open_iv *o = open_find(x, word(x, buf, 1), 0);
	if (o == NULL || o->name_id != flags >> NAME_SHIFT) {
		x->unmatched_end++;
		return 0;
	}
	if ((crc = tk_csv_write_interval(x->iw, o->name, strlen(o->name), o->start, t, o->flags, o->pid, o->tid)) != 0)
		goto werr;
	x->intervals++;
	open_remove(x, o);
	return 0;
nomem:
	err("out of memory");
	x->failed = 1;
	return 0;
werr:
	err("%s: write failed: %s", x->ipath, tk_strerror(crc));
	x->failed = 1;
	return 0;
noconv:
	if (crc == -2) {
		uint64_t *off = traceparser_get_info(st, TK_TRACEPARSER_INFO_OFFSET, NULL);
		err("%s: event at byte offset %" PRIu64 ": timestamp %" PRIu64 " (%s) does not fit in %s", x->trace,
		    off ? *off : 0, x->bad_value, tk_csv_clock_name(x->own), tk_csv_clock_name(x->clock));
	} else {
		err("%s: the trace's %s timestamps cannot be given as %s", x->trace, tk_csv_clock_name(x->own),
		    tk_csv_clock_name(x->clock));
	}
	x->failed = 1;
	return 0;
}

static int kev_empty_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *b, unsigned n);

static int parse_kev(struct export *x, const char *path)
{
	traceparser_init(x->st);
	tk_traceparser_cs_internal(x->st, x, kev_cb, _TRACE_USER_C >> 10, EV_TASK_BEGIN, EV_NAME);
	traceparser_cs(x->st, x, kev_empty_cb, _NTO_TRACE_EMPTY, _NTO_TRACE_EMPTYEVENT);
	if (traceparser(x->st, x, path) != 0) {
		const char *m = traceparser_get_info(x->st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		err("%s: %s", path, m && *m ? m : strerror(errno));
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

static int kev_setup(struct export *x)
{
	char host[256];
	char *csvc = hval(x->st, "TRACEKIT_CSV_CLOCK");
	char *node = hval(x->st, "NODENAME");
	char *boot = hval(x->st, "BOOT_DATE");
	x->boot_ns = (uint64_t)parse_ctime(boot) * 1000000000u;
	free(boot);
	if (csvc && tk_csv_clock_parse(csvc, &x->own) == 0) {
		x->own_utc_line = x->own == TK_CSV_UTC;
		x->cycles_are_own = 1;
		char *hz = hval(x->st, "CYCLES_PER_SEC");
		x->own_hz = hz ? strtoull(hz, NULL, 10) : 0;
		free(hz);
	} else {
		x->own = tk_traceparser_header_value(x->st, "TRACEKIT_CLOCK_RAW_NS", NULL) ? TK_CSV_CLOCK_MONOTONIC_RAW
											    : TK_CSV_TSC;
	}
	free(csvc);
	x->clock = x->own;
	if (x->clock_opt && tk_csv_clock_parse(x->clock_opt, &x->clock) != 0) {
		free(node);
		x->usage = 1;
		return usage_error("--clock: unknown clock \"%s\" (QPC, CLOCK_MONOTONIC_RAW, RDTSC, TSC or UTC)",
				   x->clock_opt);
	}
	unsigned *ec = traceparser_get_info(x->st, _TRACEPARSER_INFO_ENDIAN_CONV, NULL);
	x->swap = ec ? (int)*ec : 0;
	int hrc = tk_csv_default_host(host, sizeof(host),
				      x->host_opt ? x->host_opt : (node && strcmp(node, "unknown") != 0 ? node : NULL));
	free(node);
	if (hrc != 0 || out_path(x->ipath, sizeof(x->ipath), x->dir, x->name, "intervals", host) ||
	    out_path(x->cpath, sizeof(x->cpath), x->dir, x->name, "counters", host)) {
		err("%s: cannot build the output file names", x->trace);
		return -1;
	}
	if (tktool_refuse_same_file(x->trace, x->ipath) || tktool_refuse_same_file(x->trace, x->cpath))
		return -1;
	int rc = tk_csv_writer_open(&x->iw, x->ipath, TK_CSV_INTERVALS, x->clock, TK_CSV_HAS_PID | TK_CSV_HAS_TID,
				    NULL, 0);
	if (rc) {
		err("%s: %s", x->ipath, tk_strerror(rc));
		return -1;
	}
	cleanup_set2(0, tk_csv_writer_temp_path(x->iw));
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

static int export_kev_named(const char *trace, const char *name, const char *dir, const char *clock_opt,
			    const char *host_opt)
{
	struct export x;
	memset(&x, 0, sizeof(x));
	x.trace = trace;
	x.name = name;
	x.dir = dir;
	x.clock_opt = clock_opt;
	x.host_opt = host_opt;
	int ret = 1, rc;

	x.st = traceparser_init(NULL);
	if (x.st == NULL) {
		err("out of memory");
		return 1;
	}
	x.pass = 1;
	if (parse_kev(&x, trace) != 0 || x.iw == NULL) {
		if (x.usage)
			ret = 2;
		goto done;
	}
	if (x.n_open)
		warn("%s: %zu intervals begin without an end (not exported)", trace, x.n_open);
	if (x.unmatched_end)
		warn("%s: %" PRIu64 " interval ends without a begin (not exported)", trace, x.unmatched_end);
	if (x.unnamed)
		warn("%s: %" PRIu64 " events name no name defined before them (not exported)", trace, x.unnamed);
	if (x.n_cols) {
		tk_csv_counter *cc = calloc(x.n_cols, sizeof(*cc));
		x.row = calloc(x.n_cols, sizeof(*x.row));
		if (cc == NULL || x.row == NULL) {
			free(cc);
			err("out of memory");
			goto done;
		}
		for (size_t i = 0; i < x.n_cols; i++)
			cc[i] = (tk_csv_counter){x.cols[i].name, x.cols[i].inst};
		rc = tk_csv_writer_open(&x.cw, x.cpath, TK_CSV_COUNTERS, x.clock, TK_CSV_HAS_PID | TK_CSV_HAS_TID, cc,
					x.n_cols);
		free(cc);
		if (rc) {
			err("%s: %s", x.cpath, tk_strerror(rc));
			goto done;
		}
		cleanup_set2(1, tk_csv_writer_temp_path(x.cw));
		x.pass = 2;
		if (parse_kev(&x, trace) != 0 || flush_row(&x) != 0)
			goto done;
	}
	if (x.cw) {
		rc = tk_csv_writer_close(x.cw);
		x.cw = NULL;
		if (rc) {
			err("%s: write failed: %s", x.cpath, tk_strerror(rc));
			goto done;
		}
	}
	rc = tk_csv_writer_close(x.iw);
	x.iw = NULL;
	if (rc) {
		err("%s: write failed: %s", x.ipath, tk_strerror(rc));
		if (x.n_cols)
			unlink(x.cpath); /* both files or none */
		goto done;
	}
	ret = 0;
done:
	tk_csv_writer_abort(x.iw);
	tk_csv_writer_abort(x.cw);
	free(x.open);
	for (size_t i = 0; i < x.n_knames; i++)
		free(x.knames[i]);
	free(x.knames);
	for (size_t i = 0; i < x.n_grave; i++)
		free(x.grave[i]);
	free(x.grave);
	for (size_t i = 0; i < x.n_cols; i++)
		free(x.cols[i].name);
	free(x.cols);
	free(x.row);
	traceparser_destroy(&x.st);
	return ret;
}

/* ---- export from .tb5 ------------------------------------------------------------------- */

struct tb5x {
	TBRW_PTR p;
	char **names; /* by event id */
	uint32_t n_names;
	int failed;
	tk_csv_writer *w;
	struct export *x;
	int counters;
	/* counter rows */
	struct counter_col *cols;
	size_t n_cols;
	uint32_t *col_of; /* event id -> column + 1 */
	char *inst;       /* event id -> 1 for .INST */
	size_t n_inst;
	size_t n_records; /* records of the stream before this batch (for messages) */
};

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

static TBRW_U32 tb5_event_cb(TBRW_EVENT *evs, TBRW_U32 size, TBRW_U32 num, void *ud)
{
	struct tb5x *t = ud;
	(void)size;
	for (TBRW_U32 k = 0; k < num; k++) {
		TBRW_EVENT *ev = &evs[k];
		uint32_t id = ev->event_id;
		if (id > 100000000u) {
			t->failed = 1;
			return 1;
		}
		if (id >= t->n_names) {
			char **nn = realloc(t->names, ((size_t)id + 1) * sizeof(*nn));
			if (nn == NULL) {
				t->failed = 1;
				return 1;
			}
			memset(nn + t->n_names, 0, ((size_t)id + 1 - t->n_names) * sizeof(*nn));
			t->names = nn;
			t->n_names = id + 1;
		}
		free(t->names[id]);
		t->names[id] = id_string(t->p, &ev->event_name);
		char *arch = id_string(t->p, &ev->event_arch_name);
		if (arch && strcmp(arch, "INST") == 0) {
			if (id >= t->n_inst) {
				char *ni = realloc(t->inst, (size_t)id + 1);
				if (ni == NULL) {
					free(arch);
					t->failed = 1;
					return 1;
				}
				memset(ni + t->n_inst, 0, (size_t)id + 1 - t->n_inst);
				t->inst = ni;
				t->n_inst = (size_t)id + 1;
			}
			t->inst[id] = 1;
		}
		free(arch);
		if (t->names[id] == NULL)
			t->failed = 1;
	}
	return VT_SUCCESS;
}

/* A .tb5 record's time on a ns time line (UTC: since 1970; otherwise since boot). TSC values
 * have none (the rate is not recorded): conv_time() then only gives TSC/RDTSC. */
static uint64_t tb5_ns(const struct export *x, uint64_t v)
{
	if (x->own == TK_CSV_QPC)
		return v * (1000000000u / QPC_HZ);
	return v;
}

static TBRW_U32 tb5_data_cb(void *data, TBRW_U32 size, TBRW_U32 num, void *ud)
{
	(void)num;
	struct tb5x *t = ud;
	struct export *x = t->x;
	if (!t->counters) {
		const struct tb5_interval *r = data;
		for (size_t i = 0; i < size / sizeof(*r); i++) {
			struct tb5_interval iv;
			memcpy(&iv, &r[i], sizeof(iv));
			if (iv.name >= t->n_names || t->names[iv.name] == NULL) {
				err("%s: interval record names event %u, which the stream does not describe", x->trace,
				    iv.name);
				t->failed = 1;
				return 1;
			}
			uint64_t s, e;
			int crc = conv_time(x, iv.start, tb5_ns(x, iv.start), &s);
			if (crc == 0)
				crc = conv_time(x, iv.end, tb5_ns(x, iv.end), &e);
			if (crc == -2) {
				err("%s: interval record %zu: timestamp %" PRIu64 " (%s) does not fit in %s", x->trace,
				    t->n_records + i + 1, x->bad_value, tk_csv_clock_name(x->own), tk_csv_clock_name(x->clock));
				t->failed = 1;
				return 1;
			}
			if (crc) {
				err("%s: the trace's %s timestamps cannot be given as %s", x->trace,
				    tk_csv_clock_name(x->own), tk_csv_clock_name(x->clock));
				t->failed = 1;
				return 1;
			}
			const char *nm = t->names[iv.name];
			int wrc = tk_csv_write_interval(t->w, nm, strlen(nm), s, e, iv.flags & (F_PID | F_TID), iv.pid, iv.tid);
			if (wrc) {
				err("%s: write failed: %s", x->ipath, tk_strerror(wrc));
				t->failed = 1;
				return 1;
			}
		}
	} else {
		const struct tb5_counter *r = data;
		for (size_t i = 0; i < size / sizeof(*r); i++) {
			struct tb5_counter cv;
			memcpy(&cv, &r[i], sizeof(cv));
			if (cv.name >= t->n_names || t->col_of[cv.name] == 0) {
				err("%s: counter record names event %u, which the stream does not describe", x->trace,
				    cv.name);
				t->failed = 1;
				return 1;
			}
			size_t c = t->col_of[cv.name] - 1;
			uint64_t tt;
			int crc = conv_time(x, cv.time, tb5_ns(x, cv.time), &tt);
			if (crc == -2) {
				err("%s: counter record %zu: timestamp %" PRIu64 " (%s) does not fit in %s", x->trace,
				    t->n_records + i + 1, x->bad_value, tk_csv_clock_name(x->own), tk_csv_clock_name(x->clock));
				t->failed = 1;
				return 1;
			}
			if (crc) {
				err("%s: the trace's %s timestamps cannot be given as %s", x->trace,
				    tk_csv_clock_name(x->own), tk_csv_clock_name(x->clock));
				t->failed = 1;
				return 1;
			}
			unsigned rf = cv.flags & (F_PID | F_TID);
			if (x->row_has && (x->row_t != tt || x->row_flags != rf || x->row_pid != cv.pid ||
					   x->row_tid != cv.tid || x->row[c].present))
				if (flush_row(x)) {
					t->failed = 1;
					return 1;
				}
			x->row_has = 1;
			x->row_t = tt;
			x->row_flags = rf;
			x->row_pid = cv.pid;
			x->row_tid = cv.tid;
			x->row[c].present = 1;
			x->row[c].is_float = (cv.flags & F_FLOAT) != 0;
			if (x->row[c].is_float)
				memcpy(&x->row[c].d, &cv.value, 8);
			else
				x->row[c].i = (int64_t)cv.value;
		}
	}
	t->n_records += t->counters ? size / sizeof(struct tb5_counter) : size / sizeof(struct tb5_interval);
	return VT_SUCCESS;
}

static int export_tb5_named(const char *trace, const char *name, const char *dir, const char *clock_opt,
			    const char *host_opt)
{
	struct export x;
	struct tb5x t;
	memset(&x, 0, sizeof(x));
	memset(&t, 0, sizeof(t));
	x.trace = trace;
	t.x = &x;
	int ret = 1, have_own = 0;
	char ipath[2048], cpath[2048], host[256], thost[256] = "";
	TBRW_U32 rc, ns = 0;
	int stream_of[2] = {-1, -1};
	int stream_inst_any = 0;

	wchar_t *wt = wide(trace);
	if (wt == NULL) {
		err("%s: not a valid UTF-8 name", trace);
		return 1;
	}
	rc = TBRW_open(&t.p, wt, TBRW_FILE_READ);
	free(wt);
	if (rc) {
		tbrw_fail(trace, rc);
		return 1;
	}
	if ((rc = TBRW_get_number_data_streams(t.p, &ns))) {
		tbrw_fail(trace, rc);
		goto done;
	}
	/* the streams tracecsv wrote: a custom stream whose comment says "VTune CSV" */
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
				if (c && sscanf(c, "VTune CSV %31[a-z]; timestamps %31[A-Z_]; host %199s", kind, dom, h) == 3) {
					int k = strcmp(kind, "counters") == 0;
					if (stream_of[k] < 0 && tk_csv_clock_parse(dom, &x.own) == 0) {
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
	(void)stream_inst_any;
	if (!have_own) {
		err("%s: no interval or counter stream written by tracecsv import", trace);
		goto done;
	}
	x.own_utc_line = x.own == TK_CSV_UTC;
	x.cycles_are_own = 1;
	x.own_hz = x.own == TK_CSV_QPC ? QPC_HZ : 1000000000u;
	x.clock = x.own;
	if (clock_opt && tk_csv_clock_parse(clock_opt, &x.clock) != 0) {
		ret = usage_error("--clock: unknown clock \"%s\" (QPC, CLOCK_MONOTONIC_RAW, RDTSC, TSC or UTC)", clock_opt);
		goto done;
	}
	if ((x.own == TK_CSV_TSC || x.own == TK_CSV_RDTSC) && x.clock != TK_CSV_TSC && x.clock != TK_CSV_RDTSC) {
		err("%s: the file's %s timestamps cannot be given as %s (the TSC rate is not recorded)", trace,
		    tk_csv_clock_name(x.own), tk_csv_clock_name(x.clock));
		goto done;
	}
	if (tk_csv_default_host(host, sizeof(host), host_opt ? host_opt : thost) != 0 ||
	    out_path(ipath, sizeof(ipath), dir, name, "intervals", host) ||
	    out_path(cpath, sizeof(cpath), dir, name, "counters", host)) {
		err("%s: cannot build the output file names", trace);
		goto done;
	}
	if (tktool_refuse_same_file(trace, ipath) || tktool_refuse_same_file(trace, cpath))
		goto done;
	snprintf(x.ipath, sizeof(x.ipath), "%s", ipath);
	snprintf(x.cpath, sizeof(x.cpath), "%s", cpath);
	for (int k = 0; k < 2; k++) {
		if (stream_of[k] < 0 && k == 1)
			continue;
		TBRW_U32 s = stream_of[k] < 0 ? 0 : (TBRW_U32)stream_of[k];
		t.counters = k;
		t.n_records = 0;
		for (uint32_t i = 0; i < t.n_names; i++)
			free(t.names[i]);
		free(t.names);
		free(t.inst);
		t.inst = NULL;
		t.n_inst = 0;
		t.names = NULL;
		t.n_names = 0;
		if (stream_of[k] >= 0) {
			if ((rc = TBRW_reading_stream(t.p, s)) ||
			    (rc = TBRW_reading_stream_section(t.p, s, TBRW_EVENT_DESCRIPTION_SECTION)) ||
			    (rc = TBRW_enumerate_events(t.p, s, tb5_event_cb, &t, 0)) ||
			    (rc = TBRW_done_stream_section(t.p, s, TBRW_EVENT_DESCRIPTION_SECTION))) {
				tbrw_fail(trace, rc);
				goto done;
			}
			if (t.failed)
				goto done;
		}
		if (!k) {
			rc = (TBRW_U32)tk_csv_writer_open(&x.iw, ipath, TK_CSV_INTERVALS, x.clock,
							  TK_CSV_HAS_PID | TK_CSV_HAS_TID, NULL, 0);
			t.w = x.iw;
		} else {
			/* counter columns in order of event id, which is the order names were met */
			t.col_of = calloc(t.n_names + 1, sizeof(*t.col_of));
			tk_csv_counter *cc = calloc(t.n_names + 1, sizeof(*cc));
			x.row = calloc(t.n_names + 1, sizeof(*x.row));
			if (t.col_of == NULL || cc == NULL || x.row == NULL) {
				free(cc);
				err("out of memory");
				goto done;
			}
			size_t n = 0;
			for (uint32_t i = 0; i < t.n_names; i++)
				if (t.names[i]) {
					t.col_of[i] = (uint32_t)++n;
					cc[n - 1] = (tk_csv_counter){t.names[i], i < t.n_inst && t.inst[i]};
				}
			x.n_cols = n;
			/* .INST or .COUNT: from the records' flags (a first pass over the records) */
			t.cols = NULL;
			rc = n ? (TBRW_U32)tk_csv_writer_open(&x.cw, cpath, TK_CSV_COUNTERS, x.clock,
							       TK_CSV_HAS_PID | TK_CSV_HAS_TID, cc, n)
			       : (TBRW_U32)TK_EFORMAT;
			free(cc);
			t.w = x.cw;
		}
		if (rc) {
			err("%s: %s", k ? cpath : ipath, tk_strerror((int)rc));
			goto done;
		}
		cleanup_set2(k, tk_csv_writer_temp_path(k ? x.cw : x.iw));
		if (stream_of[k] >= 0) {
			if ((rc = TBRW_reading_stream_section(t.p, s, TBRW_DATA_SECTION)) ||
			    (rc = TBRW_enumerate_data(t.p, s, tb5_data_cb, &t, 0)) ||
			    (rc = TBRW_done_stream_section(t.p, s, TBRW_DATA_SECTION)) || (rc = TBRW_done_stream(t.p, s))) {
				if (!t.failed)
					tbrw_fail(trace, rc);
				goto done;
			}
			if (t.failed)
				goto done;
		}
		if (k && flush_row(&x))
			goto done;
	}
	ret = 0;
	if (x.cw) {
		int r2 = tk_csv_writer_close(x.cw);
		x.cw = NULL;
		if (r2) {
			err("%s: write failed: %s", cpath, tk_strerror(r2));
			ret = 1;
		}
	}
	if (x.iw) {
		int r2 = tk_csv_writer_close(x.iw);
		x.iw = NULL;
		if (r2) {
			err("%s: write failed: %s", ipath, tk_strerror(r2));
			ret = 1;
		}
	}
done:
	tk_csv_writer_abort(x.iw);
	tk_csv_writer_abort(x.cw);
	free(x.row);
	free(t.col_of);
	free(t.inst);
	for (uint32_t i = 0; i < t.n_names; i++)
		free(t.names[i]);
	free(t.names);
	TBRW_close(t.p);
	return ret;
}

/* ---- main ------------------------------------------------------------------------------- */

static int parse_hz(const char *opt, const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || s[0] == '-') {
		usage_error("%s: not a positive integer: \"%s\"", opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	enum { O_INTO = 256, O_CLOCK, O_HOST, O_TSC, O_QPC, O_VERSION };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'}, {"into", required_argument, NULL, O_INTO},
		{"clock", required_argument, NULL, O_CLOCK}, {"host", required_argument, NULL, O_HOST},
		{"tsc-hz", required_argument, NULL, O_TSC},  {"qpc-hz", required_argument, NULL, O_QPC},
		{"quiet", no_argument, NULL, 'q'},           {"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, O_VERSION},   {NULL, 0, NULL, 0}};
	const char *output = NULL, *into = NULL, *clock_opt = NULL, *host_opt = NULL;
	uint64_t tsc_hz = 0, qpc_hz = QPC_HZ;
	int opt;

	tktool_init("tracecsv");

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		return tktool_version(NULL);
	}
	if (argc < 2)
		return usage_error("missing command: import or export");
	const char *cmd = argv[1];
	int is_import = strcmp(cmd, "import") == 0, is_export = strcmp(cmd, "export") == 0;
	if (!is_import && !is_export)
		return usage_error("unknown command \"%s\": import or export", cmd);
	argv++;
	argc--;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case O_INTO:
			into = optarg;
			break;
		case O_CLOCK:
			clock_opt = optarg;
			break;
		case O_HOST:
			host_opt = optarg;
			break;
		case O_TSC:
			if (parse_hz("--tsc-hz", optarg, &tsc_hz))
				return 2;
			break;
		case O_QPC:
			if (parse_hz("--qpc-hz", optarg, &qpc_hz))
				return 2;
			break;
		case 'q':
			quiet = 1;
			tktool_quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case O_VERSION:
			return tktool_version(NULL);
		case ':':
			return usage_error("option %s needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (is_import) {
		if (clock_opt || host_opt)
			return usage_error("--clock and --host are options of export");
		if (optind >= argc)
			return usage_error("import: no CSV file given");
		if (output == NULL)
			output = "imported.kev";
		int tb5 = ends_with(output, ".tb5") != NULL;
		if (!tb5 && !ends_with(output, ".kev"))
			return usage_error("-o %s: the output must end in .kev or .tb5", output);
		if (into && tb5)
			return usage_error("--into merges into a .kev trace: the output must be .kev");
		if (into && strcmp(into, output) == 0)
			return usage_error("--into %s: the output must be another file", into);
		for (int i = optind; i < argc; i++)
			if (tktool_refuse_same_file(argv[i], output))
				return 1;
		if (into && tktool_refuse_same_file(into, output))
			return 1;
		tktool_catch_signals(TKTOOL_SIGNAL_EXIT);
		int n_stdin = 0;
		for (int i = optind; i < argc; i++)
			n_stdin += strcmp(argv[i], "-") == 0;
		if (n_stdin > 1)
			return usage_error("import: standard input (-) given twice");
		struct tktool_stdin_file sf;
		memset(&sf, 0, sizeof(sf));
		if (n_stdin) {
			if (tktool_stdin_file(&sf, NULL, 0) != 0)
				return 1;
		}
		/* an existing FIFO or device is written once, whole: the trace is built in a private
		 * temporary (an import may start again, sorting in memory) and then copied; the
		 * node itself is never removed */
		char pdir[4096] = "", built[4200];
		const char *target = output;
		int pslot = -1;
		if (tktool_needs_copy(output)) {
			const char *base = strrchr(output, '/');
			if (tktool_private_dir(pdir, sizeof(pdir)) != 0) {
				tktool_error(output, "cannot create a temporary directory: %s", strerror(errno));
				pdir[0] = 0;
				if (n_stdin)
					tktool_stdin_file_close(&sf);
				return 1;
			}
			pslot = tktool_cleanup_add_dir(pdir);
			snprintf(built, sizeof(built), "%s/%s", pdir, base ? base + 1 : output);
			target = built;
		}
		tk_csv_import_options io = {sizeof(io), tb5 ? TK_CSV_TRACE_TB5 : TK_CSV_TRACE_KEV, into, output,
					    n_stdin ? sf.path : NULL, tsc_hz, qpc_hz};
		struct tktool_progress prog;
		tk_csv_convert cv;
		convert_init(&cv, &prog);
		int rc = tk_csv_import((const char *const *)(argv + optind), (size_t)(argc - optind), target, &io, &cv);
		if (prog.begun)
			tktool_progress_end(&prog);
		if (rc != 0)
			err("%s", cv.error);
		rc = rc != 0;
		if (rc == 0 && pdir[0] && tktool_copy_file(built, output) != 0) {
			tktool_error(output, "writing failed: %s", strerror(errno));
			rc = 1;
		}
		if (pdir[0]) {
			tktool_private_dir_remove(pdir);
			tktool_cleanup_forget(pslot);
		}
		if (n_stdin)
			tktool_stdin_file_close(&sf);
		return rc;
	}
	if (into || tsc_hz)
		return usage_error("--into and --tsc-hz are options of import");
	if (optind != argc - 1)
		return usage_error("export: give exactly one trace (.kev or .tb5)");
	/* the host ends up in the file names and is read back after the last "-hostname-"
	 * (docs/vtune-csv.md, "File names") */
	if (host_opt && (host_opt[0] == 0 || strchr(host_opt, '/') || strstr(host_opt, "-hostname-") ||
			 strlen(host_opt) > 200))
		return usage_error("--host \"%s\": a host is not empty, holds no '/' and no \"-hostname-\", and has "
				   "at most 200 bytes",
				   host_opt);
	const char *trace = argv[optind];
	const char *dir = output ? output : ".";
	struct stat sb;
	if (stat(dir, &sb) != 0) {
		err("%s: cannot use the output directory: %s", dir, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(sb.st_mode)) {
		err("%s: cannot use the output directory: not a directory", dir);
		return 1;
	}
	tktool_catch_signals(TKTOOL_SIGNAL_EXIT);
	if (strcmp(trace, "-") == 0) {
		/* standard input: copied to a private file (export reads a .kev twice when it has
		 * counters; .tb5 needs a file); a .kev starts with its header */
		struct tktool_stdin_file sf;
		if (tktool_stdin_file(&sf, NULL, 0) != 0)
			return 1;
		char head[20] = "";
		FILE *hf = fopen(sf.path, "rb");
		size_t hn = hf ? fread(head, 1, sizeof(head), hf) : 0;
		if (hf)
			fclose(hf);
		int kev = hn >= 6 && memcmp(head, "TRACE_", 6) == 0;
		/* the output names start with "stdin" */
		char link[4300];
		snprintf(link, sizeof(link), "%s", sf.path);
		int rc = kev ? export_kev_named(link, "stdin", dir, clock_opt, host_opt)
			     : export_tb5_named(link, "stdin", dir, clock_opt, host_opt);
		tktool_stdin_file_close(&sf);
		return rc;
	}
	if (ends_with(trace, ".tb5"))
		return export_tb5_named(trace, trace, dir, clock_opt, host_opt);
	return export_kev_named(trace, trace, dir, clock_opt, host_opt);
}
