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
/* import: standard input, copied once to a private file (an import may read it twice) */
static const char *stdin_spool = "-";
/* import: the output's name as the user gave it (the trace may be built in a temporary) */
static const char *out_shown;

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

/* ---- names ------------------------------------------------------------------------------ */

struct names {
	char **str;
	uint32_t *len;
	uint32_t n, cap;
	uint32_t *slots; /* open addressing: id + 1, 0 empty */
	uint32_t mask;
};

static uint64_t hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* Id of a name, added if new; UINT32_MAX when out of memory. */
static uint32_t intern(struct names *t, const char *s, size_t n)
{
	if (t->n * 2 >= t->mask) {
		uint32_t nm = t->mask ? t->mask * 2 + 1 : 1023;
		uint32_t *ns = calloc((size_t)nm + 1, sizeof(*ns));
		if (ns == NULL)
			return UINT32_MAX;
		for (uint32_t i = 0; i < t->n; i++) {
			uint64_t h = hash(t->str[i], t->len[i]) & nm;
			while (ns[h])
				h = (h + 1) & nm;
			ns[h] = i + 1;
		}
		free(t->slots);
		t->slots = ns;
		t->mask = nm;
	}
	uint64_t h = hash(s, n) & t->mask;
	while (t->slots[h]) {
		uint32_t id = t->slots[h] - 1;
		if (t->len[id] == n && memcmp(t->str[id], s, n) == 0)
			return id;
		h = (h + 1) & t->mask;
	}
	if (t->n == t->cap) {
		uint32_t nc = t->cap ? t->cap * 2 : 64;
		char **a = realloc(t->str, nc * sizeof(*a));
		if (a == NULL)
			return UINT32_MAX;
		t->str = a;
		uint32_t *l = realloc(t->len, nc * sizeof(*l));
		if (l == NULL)
			return UINT32_MAX;
		t->len = l;
		t->cap = nc;
	}
	char *c = malloc(n + 1);
	if (c == NULL)
		return UINT32_MAX;
	memcpy(c, s, n);
	c[n] = 0;
	t->str[t->n] = c;
	t->len[t->n] = (uint32_t)n;
	t->slots[h] = t->n + 1;
	return t->n++;
}

static void names_free(struct names *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->str[i]);
	free(t->str);
	free(t->len);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* ---- import: events from the CSV files in time order ----------------------------------- */

enum { T_BEGIN, T_END, T_COUNTER };

struct ev {
	uint64_t t;     /* on the output's clock */
	uint64_t start; /* T_END: the interval's start (same clock); T_COUNTER: the value's bits
			 * (int64, or a double with F_FLOAT) */
	uint64_t seq;   /* row number in its file */
	uint32_t src, sub; /* file index; T_BEGIN 0, T_END 1, T_COUNTER: column */
	uint32_t type, name, flags, pid, tid, id;
};

static int ev_before(const struct ev *a, const struct ev *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	if (a->src != b->src)
		return a->src < b->src;
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return a->sub < b->sub;
}

static int ev_cmp(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;
	return ev_before(a, b) ? -1 : ev_before(b, a) ? 1 : 0;
}

/*
 * One binary min-heap for every queue of the merge: small keys (t, seq, sub) ordered in the
 * heap over a pool of whole events with a free list, so that reordering moves 24 bytes, not
 * whole events. Within one source the keys order events as ev_before() does (the source is
 * the same): the ends of open intervals and the values of one counter row alike.
 */
struct hkey {
	uint64_t t, seq;
	uint32_t sub, slot;
};

struct heap {
	struct hkey *h;
	size_t n, cap;
	struct ev *pool;
	uint32_t *freel;
	size_t nfree, npool, cappool;
};

static int hkey_before(const struct hkey *a, const struct hkey *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return a->sub < b->sub;
}

static int heap_push(struct heap *e, const struct ev *v)
{
	uint32_t slot;
	if (e->nfree) {
		slot = e->freel[--e->nfree];
	} else {
		if (e->npool == e->cappool) {
			size_t nc = e->cappool ? e->cappool * 2 : 256;
			struct ev *np = realloc(e->pool, nc * sizeof(*np));
			uint32_t *nf = realloc(e->freel, nc * sizeof(*nf));
			if (np)
				e->pool = np;
			if (nf)
				e->freel = nf;
			if (np == NULL || nf == NULL)
				return -1;
			e->cappool = nc;
		}
		slot = (uint32_t)e->npool++;
	}
	if (e->n == e->cap) {
		size_t nc = e->cap ? e->cap * 2 : 256;
		struct hkey *nh = realloc(e->h, nc * sizeof(*nh));
		if (nh == NULL) {
			e->freel[e->nfree++] = slot;
			return -1;
		}
		e->h = nh;
		e->cap = nc;
	}
	e->pool[slot] = *v;
	struct hkey k = {v->t, v->seq, v->sub, slot};
	size_t i = e->n++;
	while (i > 0 && hkey_before(&k, &e->h[(i - 1) / 2])) {
		e->h[i] = e->h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	e->h[i] = k;
	return 0;
}

/* The first event, NULL when the heap is empty. */
static struct ev *heap_top(const struct heap *e)
{
	return e->n > 0 ? &e->pool[e->h[0].slot] : NULL;
}

static void heap_pop(struct heap *e)
{
	e->freel[e->nfree++] = e->h[0].slot;
	struct hkey last = e->h[--e->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= e->n)
			break;
		if (c + 1 < e->n && hkey_before(&e->h[c + 1], &e->h[c]))
			c++;
		if (!hkey_before(&e->h[c], &last))
			break;
		e->h[i] = e->h[c];
		i = c;
	}
	if (e->n > 0)
		e->h[i] = last;
}

/* Empties the heap (its memory is kept). */
static void heap_clear(struct heap *e)
{
	e->n = e->nfree = e->npool = 0;
}

static void heap_free(struct heap *e)
{
	free(e->h);
	free(e->pool);
	free(e->freel);
	memset(e, 0, sizeof(*e));
}

/*
 * Read-ahead: a thread per interval file parses rows into batches while the main thread
 * merges and writes (on a machine with two cores or more, parsing and writing overlap).
 * Rows are copied (names into the batch's own text), so the reader's buffer may move on.
 */
#define PIPE_ROWS 8192
#define PIPE_SLOTS 4

struct prow {
	uint64_t start, end, line;
	uint32_t pid, tid, flags, name_off, name_len;
};

struct batch {
	struct prow rows[PIPE_ROWS];
	size_t n;
	char *text;
	size_t text_len, text_cap;
	int end; /* 0: more follow; 1: end of file; < 0: error (the pipe's message) */
	uint64_t offset; /* bytes of the file read up to the batch's end (for progress) */
};

struct pipe {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch *slot[PIPE_SLOTS];
	size_t written, consumed; /* batches */
	int stop, started;
	tk_csv_reader *r;
	char msg[600];
	struct batch *cur;
	size_t cur_i;
};

static void *pipe_main(void *arg)
{
	struct pipe *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (p->written - p->consumed == PIPE_SLOTS && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		int stop = p->stop;
		struct batch *b = p->slot[p->written % PIPE_SLOTS];
		pthread_mutex_unlock(&p->mu);
		if (stop)
			return NULL;
		b->n = 0;
		b->text_len = 0;
		b->end = 0;
		while (b->n < PIPE_ROWS) {
			tk_csv_row row;
			int rc = tk_csv_read_row(p->r, &row);
			if (rc <= 0) {
				b->end = rc == 0 ? 1 : rc;
				if (rc < 0)
					snprintf(p->msg, sizeof(p->msg), "%s", tk_csv_reader_errmsg(p->r));
				break;
			}
			if (b->text_len + row.name_len > b->text_cap) {
				size_t nc = b->text_cap ? b->text_cap * 2 : 1 << 16;
				while (nc < b->text_len + row.name_len)
					nc *= 2;
				char *nt = realloc(b->text, nc);
				if (nt == NULL) {
					b->end = TK_ENOMEM;
					snprintf(p->msg, sizeof(p->msg), "out of memory");
					break;
				}
				b->text = nt;
				b->text_cap = nc;
			}
			memcpy(b->text + b->text_len, row.name, row.name_len);
			b->rows[b->n++] = (struct prow){row.start, row.end, row.line, row.pid, row.tid, row.flags,
							(uint32_t)b->text_len, (uint32_t)row.name_len};
			b->text_len += row.name_len;
		}
		b->offset = tk_csv_reader_offset(p->r);
		pthread_mutex_lock(&p->mu);
		p->written++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (b->end)
			return NULL;
	}
}

static int pipe_start(struct pipe *p, tk_csv_reader *r)
{
	memset(p, 0, sizeof(*p));
	p->r = r;
	for (int i = 0; i < PIPE_SLOTS; i++)
		if ((p->slot[i] = calloc(1, sizeof(struct batch))) == NULL)
			return -1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->th, NULL, pipe_main, p) != 0) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		return -1;
	}
	p->started = 1;
	return 0;
}

/* The next row: 1, 0 at the end, or the error code (the message in p->msg). */
static int pipe_next(struct pipe *p, const struct prow **row, const char **text)
{
	for (;;) {
		if (p->cur != NULL && p->cur_i < p->cur->n) {
			*row = &p->cur->rows[p->cur_i++];
			*text = p->cur->text;
			return 1;
		}
		if (p->cur != NULL) {
			if (p->cur->end)
				return p->cur->end == 1 ? 0 : p->cur->end;
			pthread_mutex_lock(&p->mu);
			p->consumed++;
			pthread_cond_broadcast(&p->cv);
			pthread_mutex_unlock(&p->mu);
			p->cur = NULL;
		}
		pthread_mutex_lock(&p->mu);
		while (p->written == p->consumed)
			pthread_cond_wait(&p->cv, &p->mu);
		p->cur = p->slot[p->consumed % PIPE_SLOTS];
		pthread_mutex_unlock(&p->mu);
		p->cur_i = 0;
	}
}

static void pipe_stop(struct pipe *p)
{
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->stop = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->th, NULL);
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
	}
	for (int i = 0; i < PIPE_SLOTS; i++) {
		if (p->slot[i])
			free(p->slot[i]->text);
		free(p->slot[i]);
	}
	memset(p, 0, sizeof(*p));
}

struct src {
	struct pipe *pipe; /* interval files, streaming: the read-ahead thread */
	struct heap ends; /* streaming intervals: the ends of open intervals */
	const char *path;
	tk_csv_reader *r;
	tk_csv_kind kind;
	tk_csv_clock clock;
	uint32_t *counter_name; /* per column: interned name */
	int *counter_inst;
	size_t n_counters;
	struct heap pending; /* memory mode: a row's begin and end; counters: the values of the current row */
	int have_row;
	struct ev next; /* the next row's begin (intervals) */
	uint64_t rows, last_start;
	int done;
};

struct import {
	struct src *srcs;
	size_t n_srcs;
	struct names names;
	uint64_t tsc_hz, qpc_hz;
	tk_csv_clock clock; /* domain of the files */
	/* the output's clock: t_out = (t_csv * mul + add) for the base trace, t_csv otherwise */
	int convert;
	uint64_t base_cycles, base_ns, base_hz;
	int ns_based; /* the CSV value is converted to ns first (CLOCK_MONOTONIC_RAW into a base) */
	uint32_t next_id;
	int unsorted; /* a file's rows are not in time order: sort in memory */
	int memory;   /* memory mode */
	struct ev *all;
	size_t n_all, cap_all, pos_all;
	uint8_t *defined; /* .kev: names written (EV_NAME) */
	size_t n_defined;
};

static int to_out(struct import *im, uint64_t v, uint64_t *out)
{
	if (!im->convert) {
		*out = v;
		return 0;
	}
	/* CLOCK_MONOTONIC_RAW ns onto the base's cycles */
	/* rounded up: the decoder's floor division then gives v back exactly when the base counts
	 * at least 1 GHz (docs/kev-format.md, "One time line") */
	__int128 num = ((__int128)v - (__int128)im->base_ns) * (__int128)im->base_hz;
	__int128 off = num >= 0 ? (num + 999999999) / 1000000000 : -((-num) / 1000000000);
	__int128 c = (__int128)im->base_cycles + off;
	if (c < 0 || c > (__int128)UINT64_MAX)
		return -1;
	*out = (uint64_t)c;
	return 0;
}

/* Reads the next row of s into its queue. 1, 0 at the end, -1 on error (message printed). */
static int src_read(struct import *im, struct src *s, size_t si)
{
	tk_csv_row row;
	int rc;
	if (s->pipe != NULL) {
		const struct prow *pr = NULL;
		const char *text = NULL;
		rc = pipe_next(s->pipe, &pr, &text);
		if (rc < 0) {
			err("%s", s->pipe->msg);
			return -1;
		}
		if (rc == 0)
			return 0;
		memset(&row, 0, sizeof(row));
		row.start = pr->start;
		row.end = pr->end;
		row.line = pr->line;
		row.pid = pr->pid;
		row.tid = pr->tid;
		row.flags = pr->flags;
		row.name = text + pr->name_off;
		row.name_len = pr->name_len;
	} else {
		rc = tk_csv_read_row(s->r, &row);
		if (rc < 0) {
			err("%s", tk_csv_reader_errmsg(s->r));
			return -1;
		}
	}
	if (rc == 0)
		return 0;
	s->rows++;
	if (s->kind == TK_CSV_INTERVALS) {
		struct ev e;
		memset(&e, 0, sizeof(e));
		e.src = (uint32_t)si;
		e.seq = s->rows;
		e.flags = row.flags & (F_PID | F_TID);
		e.pid = row.pid;
		e.tid = row.tid;
		e.name = intern(&im->names, row.name, row.name_len);
		if (e.name == UINT32_MAX) {
			err("out of memory");
			return -1;
		}
		e.id = im->next_id++;
		if (to_out(im, row.start, &e.t) || to_out(im, row.end, &e.start)) {
			err("%s:%" PRIu64 ": timestamp outside the base trace's time line", s->path, row.line);
			return -1;
		}
		uint64_t end = e.start;
		e.start = e.t;
		if (!im->memory && s->rows > 1 && row.start < s->last_start) {
			im->unsorted = 1;
			return -1;
		}
		s->last_start = row.start;
		e.type = T_BEGIN;
		e.sub = 0;
		s->next = e;
		s->have_row = 1;
		struct ev x = e;
		x.type = T_END;
		x.sub = 1;
		x.t = end;
		if (im->memory) {
			if (heap_push(&s->pending, &e) || heap_push(&s->pending, &x))
				goto nomem;
			s->have_row = 0;
		} else if (heap_push(&s->ends, &x)) {
			goto nomem;
		}
	} else {
		uint64_t t;
		if (to_out(im, row.time, &t)) {
			err("%s:%" PRIu64 ": timestamp outside the base trace's time line", s->path, row.line);
			return -1;
		}
		if (!im->memory && s->rows > 1 && row.time < s->last_start) {
			im->unsorted = 1;
			return -1;
		}
		s->last_start = row.time;
		for (size_t i = 0; i < row.n_values; i++) {
			if (!row.values[i].present)
				continue;
			struct ev e;
			memset(&e, 0, sizeof(e));
			e.t = t;
			e.src = (uint32_t)si;
			e.seq = s->rows;
			e.sub = (uint32_t)i;
			e.type = T_COUNTER;
			e.flags = (row.flags & (F_PID | F_TID)) | (s->counter_inst[i] ? F_INST : 0) |
				  (row.values[i].is_float ? F_FLOAT : 0);
			e.pid = row.pid;
			e.tid = row.tid;
			e.name = s->counter_name[i];
			if (row.values[i].is_float)
				memcpy(&e.start, &row.values[i].d, 8);
			else
				e.start = (uint64_t)row.values[i].i;
			if (heap_push(&s->pending, &e))
				goto nomem;
		}
	}
	return 1;
nomem:
	err("out of memory");
	return -1;
}

/* The next event of source s into *e: 1, 0 when it has none left, -1 on error. */
static int src_peek(struct import *im, struct src *s, size_t si, struct ev **e)
{
	for (;;) {
		struct ev *best = NULL;
		if (s->have_row)
			best = &s->next;
		struct ev *p = heap_top(&s->pending), *q = heap_top(&s->ends);
		if (p != NULL && (best == NULL || ev_before(p, best)))
			best = p;
		if (q != NULL && (best == NULL || ev_before(q, best)))
			best = q;
		/* a counter row's values are all queued at once; an interval's end may wait for
		 * rows that begin before it */
		if (best != NULL && (s->kind == TK_CSV_COUNTERS ? 1 : s->have_row || s->done)) {
			*e = best;
			return 1;
		}
		if (s->done) {
			if (best) {
				*e = best;
				return 1;
			}
			return 0;
		}
		if (s->kind == TK_CSV_COUNTERS && s->pending.n == 0) {
			int rc = src_read(im, s, si);
			if (rc < 0)
				return -1;
			if (rc == 0)
				s->done = 1;
			continue;
		}
		if (s->kind == TK_CSV_INTERVALS && !s->have_row) {
			int rc = src_read(im, s, si);
			if (rc < 0)
				return -1;
			if (rc == 0)
				s->done = 1;
			continue;
		}
		*e = best;
		return best ? 1 : 0;
	}
}

static void src_take(struct src *s, struct ev *e)
{
	if (e == &s->next)
		s->have_row = 0;
	else if (e == heap_top(&s->ends))
		heap_pop(&s->ends);
	else
		heap_pop(&s->pending);
}

/* Next event of all files in time order into *out: 1, 0 at the end, -1 on error. */
static int next_event(struct import *im, struct ev *out)
{
	if (im->memory) {
		if (im->pos_all == im->n_all)
			return 0;
		*out = im->all[im->pos_all++];
		return 1;
	}
	struct ev *best = NULL;
	size_t bi = 0;
	if (im->n_srcs == 1) {
		int rc = src_peek(im, &im->srcs[0], 0, &best);
		if (rc <= 0)
			return rc;
		*out = *best;
		src_take(&im->srcs[0], best);
		return 1;
	}
	for (size_t i = 0; i < im->n_srcs; i++) {
		struct ev *e;
		int rc = src_peek(im, &im->srcs[i], i, &e);
		if (rc < 0)
			return -1;
		if (rc > 0 && (best == NULL || ev_before(e, best))) {
			best = e;
			bi = i;
		}
	}
	if (best == NULL)
		return 0;
	*out = *best;
	src_take(&im->srcs[bi], best);
	return 1;
}

/* Streaming: a read-ahead thread for each interval file (without one, rows are read inline). */
static void start_pipes(struct import *im)
{
	for (size_t i = 0; i < im->n_srcs; i++) {
		struct src *s = &im->srcs[i];
		if (s->kind != TK_CSV_INTERVALS || s->pipe != NULL)
			continue;
		s->pipe = malloc(sizeof(*s->pipe));
		if (s->pipe != NULL && pipe_start(s->pipe, s->r) != 0) {
			pipe_stop(s->pipe);
			free(s->pipe);
			s->pipe = NULL;
		}
	}
}

/* Memory mode: every event of every file, sorted. */
static int load_all(struct import *im)
{
	for (size_t i = 0; i < im->n_srcs; i++) {
		struct src *s = &im->srcs[i];
		for (;;) {
			int rc = src_read(im, s, i);
			if (rc < 0)
				return -1;
			if (rc == 0)
				break;
			if (im->n_all + s->pending.n > im->cap_all) {
				size_t nc = im->cap_all ? im->cap_all * 2 : 1024;
				while (nc < im->n_all + s->pending.n)
					nc *= 2;
				struct ev *na = realloc(im->all, nc * sizeof(*na));
				if (na == NULL) {
					err("out of memory");
					return -1;
				}
				im->all = na;
				im->cap_all = nc;
			}
			for (size_t k = 0; k < s->pending.n; k++)
				im->all[im->n_all++] = s->pending.pool[s->pending.h[k].slot];
			heap_clear(&s->pending);
		}
	}
	qsort(im->all, im->n_all, sizeof(*im->all), ev_cmp);
	return 0;
}

static void import_close_sources(struct import *im)
{
	for (size_t i = 0; i < im->n_srcs; i++) {
		struct src *s = &im->srcs[i];
		if (s->pipe) {
			pipe_stop(s->pipe);
			free(s->pipe);
		}
		tk_csv_reader_close(s->r);
		free(s->counter_name);
		free(s->counter_inst);
		heap_free(&s->pending);
		heap_free(&s->ends);
		memset(s, 0, sizeof(*s));
	}
	free(im->all);
	im->all = NULL;
	free(im->defined);
	im->defined = NULL;
	im->n_defined = 0;
	im->n_all = im->cap_all = im->pos_all = 0;
	names_free(&im->names);
}

/* Opens every file (header checked). host receives the first host named; -1 on error. */
static int import_open_sources(struct import *im, char **paths, size_t n, char *host, size_t host_cap,
			       int report)
{
	im->srcs = im->srcs ? im->srcs : calloc(n, sizeof(*im->srcs));
	if (im->srcs == NULL) {
		err("out of memory");
		return -1;
	}
	im->n_srcs = n;
	im->next_id = 0;
	for (size_t i = 0; i < n; i++) {
		struct src *s = &im->srcs[i];
		s->path = paths[i];
		int is_stdin = strcmp(paths[i], "-") == 0;
		int rc = tk_csv_reader_open(&s->r, is_stdin ? stdin_spool : paths[i], tktool_in_name(paths[i]));
		if (rc) {
			if (s->r != NULL && tk_csv_reader_errmsg(s->r)[0])
				err("%s", tk_csv_reader_errmsg(s->r));
			else
				err("%s: %s", paths[i], tk_strerror(rc));
			return -1;
		}
		s->kind = tk_csv_reader_kind(s->r);
		s->clock = tk_csv_reader_clock(s->r);
		tk_csv_clock a = s->clock == TK_CSV_RDTSC ? TK_CSV_TSC : s->clock;
		tk_csv_clock b = im->clock == TK_CSV_RDTSC ? TK_CSV_TSC : im->clock;
		if (i > 0 && a != b) {
			err("%s: timestamps are %s, those of %s are %s: files of one import share one clock", paths[i],
			    tk_csv_clock_name(s->clock), paths[0], tk_csv_clock_name(im->clock));
			return -1;
		}
		if (i == 0)
			im->clock = s->clock;
		s->n_counters = tk_csv_reader_n_counters(s->r);
		if (s->n_counters) {
			s->counter_name = calloc(s->n_counters, sizeof(*s->counter_name));
			s->counter_inst = calloc(s->n_counters, sizeof(*s->counter_inst));
			if (s->counter_name == NULL || s->counter_inst == NULL) {
				err("out of memory");
				return -1;
			}
			for (size_t k = 0; k < s->n_counters; k++) {
				const char *nm = tk_csv_reader_counter(s->r, k, &s->counter_inst[k]);
				s->counter_name[k] = intern(&im->names, nm, strlen(nm));
				if (s->counter_name[k] == UINT32_MAX) {
					err("out of memory");
					return -1;
				}
			}
		}
		char user[256], h[256];
		rc = tk_csv_parse_file_name(paths[i], user, sizeof(user), h, sizeof(h));
		if (rc <= 0) {
			if (report && !is_stdin)
				warn("%s: the file name has no \"-hostname-<host>\": host unknown", paths[i]);
		} else if (host[0] == 0) {
			snprintf(host, host_cap, "%s", h);
		} else if (strcmp(host, h) != 0 && report) {
			warn("%s: host %s differs from %s (kept)", paths[i], h, host);
		}
	}
	return 0;
}

static uint64_t total_size(char **paths, size_t n)
{
	uint64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += tktool_file_size(paths[i]);
	return t;
}

static uint64_t consumed(const struct import *im)
{
	uint64_t t = 0;
	for (size_t i = 0; i < im->n_srcs; i++)
		if (im->srcs[i].pipe) /* the reader belongs to its thread */
			t += im->srcs[i].pipe->cur ? im->srcs[i].pipe->cur->offset : 0;
		else if (im->srcs[i].r)
			t += tk_csv_reader_offset(im->srcs[i].r);
	return t;
}

/* ---- import into .kev ------------------------------------------------------------------- */

struct base {
	const char *path;
	struct traceparser_state *st;
	uint64_t events_offset;
	int have;
	tk_kev_header hdr;
	tk_kev_attr *attrs;
	size_t n_attrs;
	char *strs[8];
	void *syspage;
	int owner_buffer;
	char csv_clock[32];
	int has_clock_attrs;
	uint64_t clock_cycles, clock_ns, hz;
};

static int base_empty_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *b, unsigned n)
{
	struct base *bs = ud;
	(void)h, (void)t, (void)b, (void)n;
	uint64_t *off = traceparser_get_info(st, TK_TRACEPARSER_INFO_OFFSET, NULL);
	if (off)
		bs->events_offset = *off;
	bs->have = 1;
	return 0;
}

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

static const char *const std_keys[] = {
	"HEADER_BEGIN", "FILE_NAME",   "DATE",        "VER_MAJOR",   "VER_MINOR", "LITTLE_ENDIAN",
	"BIG_ENDIAN",   "MIDDLE_ENDIAN", "ENCODING",  "BOOT_DATE",   "CYCLES_PER_SEC", "CPU_NUM",
	"SYSNAME",      "NODENAME",    "SYS_RELEASE", "SYS_VERSION", "MACHINE",   "SYSPAGE_LEN",
	"HEADER_END",   "NORMALIZEDN"};

static int is_std_key(const char *k)
{
	if (strncmp(k, "TRACE_", 6) == 0)
		k += 6;
	for (size_t i = 0; i < sizeof(std_keys) / sizeof(std_keys[0]); i++)
		if (strcmp(k, std_keys[i]) == 0)
			return 1;
	return 0;
}

static void base_free(struct base *b)
{
	for (size_t i = 0; i < b->n_attrs; i++) {
		free((char *)b->attrs[i].key);
		free((char *)b->attrs[i].value);
	}
	free(b->attrs);
	for (size_t i = 0; i < 8; i++)
		free(b->strs[i]);
	free(b->syspage);
	traceparser_destroy(&b->st);
}

static int base_load(struct base *b, const char *path)
{
	b->path = path;
	b->st = traceparser_init(NULL);
	if (b->st == NULL) {
		err("out of memory");
		return -1;
	}
	traceparser_cs(b->st, b, base_empty_cb, _NTO_TRACE_EMPTY, _NTO_TRACE_EMPTYEVENT);
	if (traceparser(b->st, b, path) != 0) {
		const char *m = traceparser_get_info(b->st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		err("%s: %s", path, m && *m ? m : strerror(errno));
		return -1;
	}
	if (!b->have) {
		err("%s: not a .kev trace", path);
		return -1;
	}
	struct traceparser_state *st = b->st;
	tk_kev_header *h = &b->hdr;
	memset(h, 0, sizeof(*h));
	h->big_endian = tk_traceparser_header_value(st, "BIG_ENDIAN", NULL) != NULL;
	const char *keys[8] = {"FILE_NAME", "SYSNAME", "NODENAME", "SYS_RELEASE", "SYS_VERSION", "MACHINE",
			       "VER_MAJOR", "VER_MINOR"};
	for (int i = 0; i < 8; i++)
		b->strs[i] = hval(st, keys[i]);
	h->file_name = b->strs[0];
	h->sysname = b->strs[1];
	h->nodename = b->strs[2];
	h->sys_release = b->strs[3];
	h->sys_version = b->strs[4];
	h->machine = b->strs[5];
	h->ver_major = b->strs[6];
	h->ver_minor = b->strs[7];
	char *v = hval(st, "DATE");
	h->date = parse_ctime(v);
	free(v);
	v = hval(st, "BOOT_DATE");
	h->boot_date = parse_ctime(v);
	free(v);
	v = hval(st, "CYCLES_PER_SEC");
	h->cycles_per_sec = v ? strtoull(v, NULL, 10) : 0;
	free(v);
	if (h->cycles_per_sec == 0)
		h->cycles_per_sec = 1000000000;
	b->hz = h->cycles_per_sec;
	v = hval(st, "CPU_NUM");
	h->cpu_num = v ? (unsigned)strtoul(v, NULL, 10) : 1;
	free(v);
	if (h->cpu_num == 0)
		h->cpu_num = 1;
	unsigned splen = 0;
	const void *sp = traceparser_get_info(st, _TRACEPARSER_INFO_SYSPAGE, &splen);
	if (sp != NULL && splen > 0) {
		b->syspage = malloc(splen);
		if (b->syspage == NULL) {
			err("out of memory");
			return -1;
		}
		memcpy(b->syspage, sp, splen);
		h->syspage = b->syspage;
		h->syspage_len = splen;
	}
	unsigned n = tk_traceparser_header_count(st);
	b->attrs = calloc(n + 2, sizeof(*b->attrs));
	if (b->attrs == NULL) {
		err("out of memory");
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		const char *k, *val;
		unsigned vl;
		if (tk_traceparser_header_entry(st, i, &k, &val, &vl) != 0 || is_std_key(k))
			continue;
		if (strcmp(k, "TRACEKIT_CSV_SOURCE_CLOCK") == 0)
			continue; /* written again below */
		if (strcmp(k, "TRACEKIT_CSV_CLOCK") == 0 || strcmp(k, "TRACE_TRACEKIT_CSV_CLOCK") == 0) {
			snprintf(b->csv_clock, sizeof(b->csv_clock), "%.*s", (int)vl, val);
			continue; /* written again below */
		}
		char *kc = strdup(strncmp(k, "TRACE_", 6) == 0 ? k + 6 : k);
		char *vc = malloc(vl + 1);
		if (kc == NULL || vc == NULL) {
			free(kc);
			free(vc);
			err("out of memory");
			return -1;
		}
		memcpy(vc, val, vl);
		vc[vl] = 0;
		b->attrs[b->n_attrs].key = kc;
		b->attrs[b->n_attrs].value = vc;
		b->n_attrs++;
		if (strcmp(kc, "TRACEKIT_OWNER") == 0 && strcmp(vc, "buffer") == 0)
			b->owner_buffer = 1;
		if (strcmp(kc, "TRACEKIT_CLOCK_CYCLES") == 0) {
			b->clock_cycles = strtoull(vc, NULL, 10);
			b->has_clock_attrs |= 1;
		}
		if (strcmp(kc, "TRACEKIT_CLOCK_RAW_NS") == 0) {
			b->clock_ns = strtoull(vc, NULL, 10);
			b->has_clock_attrs |= 2;
		}
	}
	return 0;
}

struct kevout {
	tk_kev_writer *w;
	const char *path;
};

static int write_ev(struct import *im, tk_kev_writer *w, const struct ev *e)
{
	uint32_t words[5];
	unsigned code;
	size_t nw;
	if (e->name >= MAX_NAMES) {
		err("more than %u different names", MAX_NAMES);
		return -1;
	}
	if (e->name >= im->n_defined) {
		size_t nn = im->n_defined ? im->n_defined * 2 : 1024;
		while (nn <= e->name)
			nn *= 2;
		uint8_t *nd = realloc(im->defined, nn);
		if (nd == NULL) {
			err("out of memory");
			return -1;
		}
		memset(nd + im->n_defined, 0, nn - im->n_defined);
		im->defined = nd;
		im->n_defined = nn;
	}
	if (!im->defined[e->name]) {
		/* the name, once, before its first use */
		uint32_t nwords[1] = {e->name};
		int rc = tk_kev_write_event_str(w, 0, _TRACE_USER_C, EV_NAME, e->t, nwords, 1, im->names.str[e->name]);
		if (rc) {
			err("%s: %s", out_shown, tk_kev_writer_errmsg(w));
			return -1;
		}
		im->defined[e->name] = 1;
	}
	words[0] = e->flags | e->name << NAME_SHIFT;
	if (e->type == T_COUNTER) {
		code = EV_COUNTER;
		uint64_t bits = e->start;
		words[1] = e->pid;
		words[2] = e->tid;
		words[3] = (uint32_t)bits;
		words[4] = (uint32_t)(bits >> 32);
		nw = 5;
	} else if (e->type == T_BEGIN) {
		code = (e->flags & F_TID) ? EV_TASK_BEGIN : EV_FRAME_BEGIN;
		words[1] = e->pid;
		words[2] = e->tid;
		words[3] = e->id;
		nw = 4;
	} else {
		code = (e->flags & F_TID) ? EV_TASK_END : EV_FRAME_END;
		words[1] = e->id;
		nw = 2;
	}
	int rc = tk_kev_write_event(w, 0, _TRACE_USER_C, code, e->t, words, nw);
	if (rc)
		err("%s: %s", out_shown, tk_kev_writer_errmsg(w));
	return rc ? -1 : 0;
}

static int copy_base_events(struct base *b, tk_kev_writer *w)
{
	int fd = open(b->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err("%s: %s", b->path, strerror(errno));
		return -1;
	}
	if (lseek(fd, (off_t)b->events_offset, SEEK_SET) < 0) {
		err("%s: %s", b->path, strerror(errno));
		close(fd);
		return -1;
	}
	static char buf[1 << 20];
	size_t have = 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err("%s: %s", b->path, strerror(errno));
			close(fd);
			return -1;
		}
		have += (size_t)n;
		size_t whole = have / 16 * 16;
		if (whole > 0 && tk_kev_write_raw_file_order(w, buf, whole / 16) != 0) {
			err("%s: %s", out_shown, tk_kev_writer_errmsg(w));
			close(fd);
			return -1;
		}
		memmove(buf, buf + whole, have - whole);
		have -= whole;
		if (n == 0)
			break;
	}
	close(fd);
	if (have)
		warn("%s: %zu bytes of a partial event at the end not copied", b->path, have);
	return 0;
}

static uint64_t env_epoch(void)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	return s && *s ? strtoull(s, NULL, 10) : 0;
}

static int import_kev(struct import *im, char **paths, size_t n, const char *out, const char *into)
{
	struct base b;
	memset(&b, 0, sizeof(b));
	char host[256] = "";
	int ret = 1;
	tk_kev_writer *w = NULL;

	if (into != NULL && base_load(&b, into) != 0)
		goto done;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (import_open_sources(im, paths, n, host, sizeof(host), attempt == 0) != 0 && !im->unsorted)
			goto done;
		tk_kev_header h;
		tk_kev_attr attrs[4];
		char cps[32] = "";
		memset(&h, 0, sizeof(h));
		const char *dom = tk_csv_clock_name(im->clock);
		im->convert = 0;
		if (into != NULL) {
			h = b.hdr;
			/* the CSV's clock onto the base's */
			tk_csv_clock bc;
			int same = b.csv_clock[0] && tk_csv_clock_parse(b.csv_clock, &bc) == 0 &&
				   (bc == im->clock || ((bc == TK_CSV_TSC || bc == TK_CSV_RDTSC) &&
							(im->clock == TK_CSV_TSC || im->clock == TK_CSV_RDTSC)));
			if (same || (!b.csv_clock[0] && (im->clock == TK_CSV_TSC || im->clock == TK_CSV_RDTSC))) {
				im->convert = 0;
			} else if (!b.csv_clock[0] && im->clock == TK_CSV_CLOCK_MONOTONIC_RAW) {
				im->convert = 1;
				im->base_hz = b.hz;
				im->base_cycles = b.has_clock_attrs == 3 ? b.clock_cycles : 0;
				im->base_ns = b.has_clock_attrs == 3 ? b.clock_ns : 0;
			} else {
				err("%s: %s timestamps cannot be placed on the clock of %s (%s)", paths[0], dom, into,
				    b.csv_clock[0] ? b.csv_clock : "cycles of a recorded trace");
				goto done;
			}
			if (host[0] && h.nodename && strcmp(host, h.nodename) != 0)
				warn("%s: host %s differs from the trace's %s", paths[0], host, h.nodename);
			/* TRACEKIT_CSV_CLOCK says the trace's cycles are that domain's values; a recorded
			 * base keeps its clock and the CSV's domain is recorded as where the data came from */
			attrs[0] = b.csv_clock[0] ? (tk_kev_attr){"TRACEKIT_CSV_CLOCK", b.csv_clock}
						  : (tk_kev_attr){"TRACEKIT_CSV_SOURCE_CLOCK", dom};
			b.attrs[b.n_attrs] = attrs[0];
			h.attrs = b.attrs;
			h.n_attrs = b.n_attrs + 1;
		} else {
			uint64_t hz = im->clock == TK_CSV_QPC ? im->qpc_hz
				      : (im->clock == TK_CSV_TSC || im->clock == TK_CSV_RDTSC)
					      ? (im->tsc_hz ? im->tsc_hz : tk_clock_cycles_per_sec())
					      : 1000000000u;
			h.cycles_per_sec = hz;
			h.cpu_num = 1;
			h.file_name = out_shown ? out_shown : out;
			time_t date = (time_t)env_epoch();
			if (date == 0)
				date = time(NULL);
			h.date = date;
			h.boot_date = date;
			h.sysname = "unknown";
			h.nodename = host[0] ? host : "unknown";
			h.sys_release = "unknown";
			h.sys_version = "unknown";
			h.machine = "unknown";
			size_t na = 0;
			attrs[na++] = (tk_kev_attr){"TRACEKIT_CSV_CLOCK", dom};
			if (im->clock == TK_CSV_CLOCK_MONOTONIC_RAW) {
				/* the time line is CLOCK_MONOTONIC_RAW itself (docs/kev-format.md) */
				attrs[na++] = (tk_kev_attr){"TRACEKIT_CLOCK_CYCLES", "0"};
				attrs[na++] = (tk_kev_attr){"TRACEKIT_CLOCK_RAW_NS", "0"};
			}
			h.attrs = attrs;
			h.n_attrs = na;
			(void)cps;
		}
		int rc = tk_kev_writer_open(&w, out, &h, 0);
		if (rc) {
			err("%s: %s", out_shown, w ? tk_kev_writer_errmsg(w) : tk_strerror(rc));
			w = NULL;
			goto done;
		}
		cleanup_set(tk_kev_writer_temp_path(w));
		struct tktool_progress prog;
		memset(&prog, 0, sizeof(prog));
		tktool_progress_begin(&prog, "importing", total_size(paths, n));
		if (into != NULL) {
			if (copy_base_events(&b, w) != 0)
				goto done;
		}
		int owner_pending = into != NULL && b.owner_buffer;
		if (im->unsorted) {
			im->memory = 1;
			if (load_all(im) != 0)
				goto done;
		} else {
			start_pipes(im);
		}
		struct ev e;
		int got;
		uint64_t count = 0;
		while ((got = next_event(im, &e)) > 0) {
			if ((++count & 0xffff) == 0)
				tktool_progress_update(&prog, consumed(im));
			if (owner_pending) {
				/* a buffer of its own, owned by nobody (pid 0, tid 0): the CSV rows carry
				 * their pid and tid in the events (contract "owner of every event") */
				uint32_t bw[2] = {0xffffffffu, 0};
				uint32_t tw[2] = {0, 0};
				owner_pending = 0;
				if (tk_kev_write_event(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, e.t, bw, 2) ||
				    tk_kev_write_event(w, 0, _TRACE_PR_TH_C, STATE_RUNNING, e.t, tw, 2)) {
					err("%s: %s", out_shown, tk_kev_writer_errmsg(w));
					goto done;
				}
			}
			if (write_ev(im, w, &e) != 0)
				goto done;
		}
		tktool_progress_end(&prog);
		if (got < 0 && im->unsorted && !im->memory) {
			/* a file is not in time order: again, sorting in memory */
			tk_kev_writer_abort(w);
			w = NULL;
			import_close_sources(im);
			continue;
		}
		if (got < 0)
			goto done;
		rc = tk_kev_writer_close(w);
		w = NULL;
		cleanup_set(NULL);
		if (rc) {
			err("%s: write failed: %s", out_shown, tk_strerror(rc));
			goto done;
		}
		ret = 0;
		break;
	}
done:
	if (w)
		tk_kev_writer_abort(w);
	import_close_sources(im);
	base_free(&b);
	return ret;
}

/* ---- import into .tb5 ------------------------------------------------------------------- */

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

static void add_desc(TBRW_SAMPREC_DESC_ENTRY *d, unsigned off, unsigned size, unsigned type, const wchar_t *name)
{
	memset(d, 0, sizeof(*d));
	d->desc_size = sizeof(*d);
	d->desc_offset = off;
	d->desc_type = (TBRW_U16)type;
	d->desc_data_size = size;
	d->desc_name.soi_ptr = (TBRW_CHAR *)name;
}

struct tb5_stream {
	int open, counters;
	TBRW_U32 num;
	char *used; /* names used in this stream */
	size_t used_cap;
};

static int tb5_begin_stream(TBRW_PTR p, struct tb5_stream *s, TBRW_U32 num, int counters, const char *domain,
			    const char *host)
{
	TBRW_U32 rc;
	wchar_t comment[256];
	char narrow_comment[256];
	snprintf(narrow_comment, sizeof(narrow_comment), "VTune CSV %s; timestamps %s; host %s",
		 counters ? "counters" : "intervals", domain, host[0] ? host : "unknown");
	wchar_t *wc = wide(narrow_comment); /* UTF-8, whatever the locale */
	if (wc == NULL) {
		err("host \"%s\": not valid UTF-8 (or out of memory)", host);
		return -1;
	}
	wcsncpy(comment, wc, 255);
	comment[255] = 0;
	free(wc);
	TBRW_STREAM_INFO si;
	memset(&si, 0, sizeof(si));
	si.stream_info_size = sizeof(si);
	si.stream_type = TBRW_CUSTOM_STREAM;
	si.command_line.soi_ptr = (TBRW_CHAR *)L"tracecsv import";
	si.cpu_mask.soi_ptr = (TBRW_CHAR *)L"";
	si.comment.soi_ptr = comment;
	if ((rc = TBRW_writing_stream(p, num)) || (rc = TBRW_writing_stream_section(p, num, TBRW_STREAM_INFO_SECTION)) ||
	    (rc = TBRW_set_stream_info(p, num, &si)) || (rc = TBRW_done_stream_section(p, num, TBRW_STREAM_INFO_SECTION)))
		return tbrw_fail("stream information", rc);
	TBRW_SAMPREC_DESC_ENTRY d[6];
	int nd;
	if (!counters) {
		add_desc(&d[0], 0, 8, ST_TIME_STAMP, L"start");
		add_desc(&d[1], 8, 8, ST_TIME_STAMP, L"end");
		add_desc(&d[2], 16, 4, ST_EVENT_ID, L"name");
		add_desc(&d[3], 20, 4, ST_NONE, L"flags");
		add_desc(&d[4], 24, 4, ST_PID, L"pid");
		add_desc(&d[5], 28, 4, ST_TID, L"tid");
		nd = 6;
	} else {
		add_desc(&d[0], 0, 8, ST_TIME_STAMP, L"time");
		add_desc(&d[1], 8, 4, ST_EVENT_ID, L"counter");
		add_desc(&d[2], 12, 4, ST_NONE, L"flags");
		add_desc(&d[3], 16, 4, ST_PID, L"pid");
		add_desc(&d[4], 20, 4, ST_TID, L"tid");
		add_desc(&d[5], 24, 8, ST_EVENT_COUNTS, L"value");
		nd = 6;
	}
	if ((rc = TBRW_writing_stream_section(p, num, TBRW_DATA_DESCRIPTION_SECTION)))
		return tbrw_fail("data description", rc);
	for (int i = 0; i < nd; i++)
		if ((rc = TBRW_add_data_descriptor_entry(p, num, &d[i])))
			return tbrw_fail("data description", rc);
	if ((rc = TBRW_done_stream_section(p, num, TBRW_DATA_DESCRIPTION_SECTION)) ||
	    (rc = TBRW_writing_stream_section(p, num, TBRW_DATA_SECTION)))
		return tbrw_fail("data", rc);
	s->open = 1;
	s->num = num;
	s->counters = counters;
	return 0;
}

static int tb5_mark(struct tb5_stream *s, uint32_t name, char kind)
{
	if (name >= s->used_cap) {
		size_t nc = s->used_cap ? s->used_cap * 2 : 256;
		while (nc <= name)
			nc *= 2;
		char *nu = realloc(s->used, nc);
		if (nu == NULL)
			return -1;
		memset(nu + s->used_cap, 0, nc - s->used_cap);
		s->used = nu;
		s->used_cap = nc;
	}
	s->used[name] = kind;
	return 0;
}

static int tb5_end_stream(TBRW_PTR p, struct tb5_stream *s, struct import *im)
{
	TBRW_U32 rc;
	if ((rc = TBRW_done_stream_section(p, s->num, TBRW_DATA_SECTION)) ||
	    (rc = TBRW_writing_stream_section(p, s->num, TBRW_EVENT_DESCRIPTION_SECTION)))
		return tbrw_fail("event description", rc);
	/* the names: event id = the name's number in the records */
	for (uint32_t i = 0; i < im->names.n && i < s->used_cap; i++) {
		if (!s->used[i])
			continue;
		wchar_t *wn = wide(im->names.str[i]);
		if (wn == NULL) {
			err("out of memory");
			return -1;
		}
		TBRW_EVENT ev;
		memset(&ev, 0, sizeof(ev));
		ev.event_size = sizeof(ev);
		ev.event_id = i;
		ev.event_name.soi_ptr = wn;
		/* counters: the kind in the architecture name */
		ev.event_arch_name.soi_ptr = (TBRW_CHAR *)(!s->counters ? L""
							   : s->used[i] == 2 ? L"INST" : L"COUNT");
		rc = TBRW_add_event(p, s->num, &ev);
		free(wn);
		if (rc)
			return tbrw_fail("event description", rc);
	}
	if ((rc = TBRW_done_stream_section(p, s->num, TBRW_EVENT_DESCRIPTION_SECTION)) ||
	    (rc = TBRW_done_stream(p, s->num)))
		return tbrw_fail("stream", rc);
	s->open = 0;
	return 0;
}

static int import_tb5(struct import *im, char **paths, size_t n, const char *out)
{
	char host[256] = "";
	int ret = 1;
	TBRW_PTR p = NULL;
	struct tb5_stream sv[2];
	struct tb5_interval *ib = NULL;
	struct tb5_counter *cb = NULL;
	size_t ni = 0, nc = 0;
	const size_t BATCH = 4096;

	memset(sv, 0, sizeof(sv));
	ib = malloc(BATCH * sizeof(*ib));
	cb = malloc(BATCH * sizeof(*cb));
	if (ib == NULL || cb == NULL) {
		err("out of memory");
		goto done;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		if (import_open_sources(im, paths, n, host, sizeof(host), attempt == 0) != 0 && !im->unsorted)
			goto done;
		wchar_t *wout = wide(out);
		if (wout == NULL) {
			err("%s: not a valid UTF-8 name", out);
			goto done;
		}
		TBRW_U32 rc = TBRW_open(&p, wout, TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS);
		free(wout);
		if (rc) {
			tbrw_fail(out, rc);
			p = NULL;
			goto done;
		}
		char part[4200];
		int part_len = snprintf(part, sizeof(part), "%s.part", out);
		if (part_len < 0 || (size_t)part_len >= sizeof(part)) {
			err("%s: name too long", out);
			goto done;
		}
		cleanup_set(part);
		if (im->unsorted) {
			im->memory = 1;
			if (load_all(im) != 0)
				goto done;
		} else {
			start_pipes(im);
		}
		const char *dom = tk_csv_clock_name(im->clock);
		TBRW_U32 next_stream = 0;
		struct ev e;
		int got;
		while ((got = next_event(im, &e)) > 0) {
			int k = e.type == T_COUNTER;
			if (e.type == T_BEGIN)
				continue;
			if (!sv[k].open) {
				if (tb5_begin_stream(p, &sv[k], next_stream++, k, dom, host) != 0)
					goto done;
			}
			if (tb5_mark(&sv[k], e.name, (e.flags & F_INST) ? 2 : 1) != 0) {
				err("out of memory");
				goto done;
			}
			if (!k) {
				ib[ni++] = (struct tb5_interval){e.start, e.t, e.name, e.flags, e.pid, e.tid};
				if (ni == BATCH) {
					if ((rc = TBRW_add_data(p, sv[0].num, (TBRW_U32)(ni * sizeof(*ib)), ib)))
						goto tbrw_err;
					ni = 0;
				}
			} else {
				uint64_t bits = e.start;
				cb[nc++] = (struct tb5_counter){e.t, e.name, e.flags, e.pid, e.tid, bits};
				if (nc == BATCH) {
					if ((rc = TBRW_add_data(p, sv[1].num, (TBRW_U32)(nc * sizeof(*cb)), cb)))
						goto tbrw_err;
					nc = 0;
				}
			}
		}
		if (got < 0 && im->unsorted && !im->memory) {
			TBRW_abort_cleanup_and_close(p);
			p = NULL;
			import_close_sources(im);
			for (int k = 0; k < 2; k++)
				free(sv[k].used);
			memset(sv, 0, sizeof(sv));
			ni = nc = 0;
			continue;
		}
		if (got < 0)
			goto done;
		if (ni && (rc = TBRW_add_data(p, sv[0].num, (TBRW_U32)(ni * sizeof(*ib)), ib)))
			goto tbrw_err;
		if (nc && (rc = TBRW_add_data(p, sv[1].num, (TBRW_U32)(nc * sizeof(*cb)), cb)))
			goto tbrw_err;
		/* a file without rows still gives its (empty) stream */
		for (size_t i = 0; i < im->n_srcs; i++) {
			int k = im->srcs[i].kind == TK_CSV_COUNTERS;
			if (!sv[k].open && tb5_begin_stream(p, &sv[k], next_stream++, k, dom, host) != 0)
				goto done;
		}
		for (int k = 0; k < 2; k++)
			if (sv[k].open && tb5_end_stream(p, &sv[k], im) != 0)
				goto done;
		rc = TBRW_close(p);
		p = NULL;
		cleanup_set(NULL);
		if (rc) {
			tbrw_fail(out, rc);
			goto done;
		}
		ret = 0;
		break;
	tbrw_err:
		tbrw_fail(out, rc);
		goto done;
	}
done:
	if (p)
		TBRW_abort_cleanup_and_close(p);
	for (int k = 0; k < 2; k++)
		free(sv[k].used);
	free(ib);
	free(cb);
	import_close_sources(im);
	return ret;
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
			stdin_spool = sf.path;
		}
		struct import im;
		memset(&im, 0, sizeof(im));
		im.tsc_hz = tsc_hz;
		im.qpc_hz = qpc_hz;
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
		out_shown = output;
		int rc = tb5 ? import_tb5(&im, argv + optind, (size_t)(argc - optind), target)
			     : import_kev(&im, argv + optind, (size_t)(argc - optind), target, into);
		if (rc == 0 && pdir[0] && tktool_copy_file(built, output) != 0) {
			tktool_error(output, "writing failed: %s", strerror(errno));
			rc = 1;
		}
		if (pdir[0]) {
			tktool_private_dir_remove(pdir);
			tktool_cleanup_forget(pslot);
		}
		free(im.srcs);
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
