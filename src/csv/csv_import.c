/* SPDX-License-Identifier: MIT */
/*
 * csv_import.c: tk_csv_import(), VTune CSV files into a trace. The rows of every file are
 * merged in time order (per file, one heap holds what its rows queue: the ends of open
 * intervals, the values of a counter row; files that are not in time order are read again
 * and sorted in memory) and written as the user events of a .kev (optionally after the
 * events of a base trace, on its clock) or as the interval and counter streams of a .tb5.
 * docs/vtune-csv.md describes both encodings.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "tracekit/csv.h"
#include "tracekit/kev.h"
#include "tracekit/samprec_shared.h"
#include "tracekit/tbrw.h"
#include "tracekit/traceparser.h"

#include "csv_internal.h"

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

static int ev_cmp(const void *pa, const void *pb)
{
	const struct tk__csv_ev *a = pa, *b = pb;
	return tk__csv_ev_before(a, b) ? -1 : tk__csv_ev_before(b, a) ? 1 : 0;
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
	struct tk__csv_heap ends; /* streaming intervals: the ends of open intervals */
	const char *path;
	tk_csv_reader *r;
	tk_csv_kind kind;
	tk_csv_clock clock;
	uint32_t *counter_name; /* per column: interned name */
	int *counter_inst;
	size_t n_counters;
	struct tk__csv_heap pending; /* memory mode: a row's begin and end; counters: the values of the current row */
	int have_row;
	struct tk__csv_ev next; /* the next row's begin (intervals) */
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
	struct tk__csv_ev *all;
	size_t n_all, cap_all, pos_all;
	uint8_t *defined; /* .kev: names written (EV_NAME) */
	size_t n_defined;
	struct tk__csv_msg *msg;
	const char *stdin_path; /* what "-" reads */
	const char *out_shown;  /* the output in messages */
	tk_csv_convert *cv;     /* progress */
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
			tk__csv_error(im->msg, "%s", s->pipe->msg);
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
			tk__csv_error(im->msg, "%s", tk_csv_reader_errmsg(s->r));
			return -1;
		}
	}
	if (rc == 0)
		return 0;
	s->rows++;
	if (s->kind == TK_CSV_INTERVALS) {
		struct tk__csv_ev e;
		memset(&e, 0, sizeof(e));
		e.src = (uint32_t)si;
		e.seq = s->rows;
		e.flags = row.flags & (TK__CSV_F_PID | TK__CSV_F_TID);
		e.pid = row.pid;
		e.tid = row.tid;
		e.name = intern(&im->names, row.name, row.name_len);
		if (e.name == UINT32_MAX) {
			tk__csv_fail(im->msg, TK_ENOMEM, "out of memory");
			return -1;
		}
		e.id = im->next_id++;
		if (to_out(im, row.start, &e.t) || to_out(im, row.end, &e.start)) {
			tk__csv_error(im->msg, "%s:%" PRIu64 ": timestamp outside the base trace's time line", s->path,
				      row.line);
			return -1;
		}
		uint64_t end = e.start;
		e.start = e.t;
		if (!im->memory && s->rows > 1 && row.start < s->last_start) {
			im->unsorted = 1;
			return -1;
		}
		s->last_start = row.start;
		e.type = TK__CSV_T_BEGIN;
		e.sub = 0;
		s->next = e;
		s->have_row = 1;
		struct tk__csv_ev x = e;
		x.type = TK__CSV_T_END;
		x.sub = 1;
		x.t = end;
		if (im->memory) {
			if (tk__csv_heap_push(&s->pending, &e) || tk__csv_heap_push(&s->pending, &x))
				goto nomem;
			s->have_row = 0;
		} else if (tk__csv_heap_push(&s->ends, &x)) {
			goto nomem;
		}
	} else {
		uint64_t t;
		if (to_out(im, row.time, &t)) {
			tk__csv_error(im->msg, "%s:%" PRIu64 ": timestamp outside the base trace's time line", s->path,
				      row.line);
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
			struct tk__csv_ev e;
			memset(&e, 0, sizeof(e));
			e.t = t;
			e.src = (uint32_t)si;
			e.seq = s->rows;
			e.sub = (uint32_t)i;
			e.type = TK__CSV_T_COUNTER;
			e.flags = (row.flags & (TK__CSV_F_PID | TK__CSV_F_TID)) |
				  (s->counter_inst[i] ? TK__CSV_F_INST : 0) |
				  (row.values[i].is_float ? TK__CSV_F_FLOAT : 0);
			e.pid = row.pid;
			e.tid = row.tid;
			e.name = s->counter_name[i];
			if (row.values[i].is_float)
				memcpy(&e.start, &row.values[i].d, 8);
			else
				e.start = (uint64_t)row.values[i].i;
			if (tk__csv_heap_push(&s->pending, &e))
				goto nomem;
		}
	}
	return 1;
nomem:
	tk__csv_fail(im->msg, TK_ENOMEM, "out of memory");
	return -1;
}

/* The next event of source s into *e: 1, 0 when it has none left, -1 on error. */
static int src_peek(struct import *im, struct src *s, size_t si, struct tk__csv_ev **e)
{
	for (;;) {
		struct tk__csv_ev *best = NULL;
		if (s->have_row)
			best = &s->next;
		struct tk__csv_ev *p = tk__csv_heap_top(&s->pending), *q = tk__csv_heap_top(&s->ends);
		if (p != NULL && (best == NULL || tk__csv_ev_before(p, best)))
			best = p;
		if (q != NULL && (best == NULL || tk__csv_ev_before(q, best)))
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

static void src_take(struct src *s, struct tk__csv_ev *e)
{
	if (e == &s->next)
		s->have_row = 0;
	else if (e == tk__csv_heap_top(&s->ends))
		tk__csv_heap_pop(&s->ends);
	else
		tk__csv_heap_pop(&s->pending);
}

/* Next event of all files in time order into *out: 1, 0 at the end, -1 on error. */
static int next_event(struct import *im, struct tk__csv_ev *out)
{
	if (im->memory) {
		if (im->pos_all == im->n_all)
			return 0;
		*out = im->all[im->pos_all++];
		return 1;
	}
	struct tk__csv_ev *best = NULL;
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
		struct tk__csv_ev *e;
		int rc = src_peek(im, &im->srcs[i], i, &e);
		if (rc < 0)
			return -1;
		if (rc > 0 && (best == NULL || tk__csv_ev_before(e, best))) {
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
				struct tk__csv_ev *na = realloc(im->all, nc * sizeof(*na));
				if (na == NULL) {
					tk__csv_fail(im->msg, TK_ENOMEM, "out of memory");
					return -1;
				}
				im->all = na;
				im->cap_all = nc;
			}
			for (size_t k = 0; k < s->pending.n; k++)
				im->all[im->n_all++] = s->pending.pool[s->pending.h[k].slot];
			tk__csv_heap_clear(&s->pending);
		}
	}
	if (im->n_all > 1) /* qsort of NULL, 0 is undefined */
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
		tk__csv_heap_free(&s->pending);
		tk__csv_heap_free(&s->ends);
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
static int import_open_sources(struct import *im, const char *const *paths, size_t n, char *host, size_t host_cap,
			       int report)
{
	im->srcs = im->srcs ? im->srcs : calloc(n, sizeof(*im->srcs));
	if (im->srcs == NULL) {
		tk__csv_fail(im->msg, TK_ENOMEM, "out of memory");
		return -1;
	}
	im->n_srcs = n;
	im->next_id = 0;
	for (size_t i = 0; i < n; i++) {
		struct src *s = &im->srcs[i];
		s->path = paths[i];
		int is_stdin = strcmp(paths[i], "-") == 0;
		int rc = tk_csv_reader_open(&s->r, is_stdin ? im->stdin_path : paths[i],
					    is_stdin ? "standard input" : paths[i]);
		if (rc) {
			if (s->r != NULL && tk_csv_reader_errmsg(s->r)[0])
				tk__csv_error(im->msg, "%s", tk_csv_reader_errmsg(s->r));
			else
				tk__csv_error(im->msg, "%s: %s", paths[i], tk_strerror(rc));
			return -1;
		}
		s->kind = tk_csv_reader_kind(s->r);
		s->clock = tk_csv_reader_clock(s->r);
		tk_csv_clock a = s->clock == TK_CSV_RDTSC ? TK_CSV_TSC : s->clock;
		tk_csv_clock b = im->clock == TK_CSV_RDTSC ? TK_CSV_TSC : im->clock;
		if (i > 0 && a != b) {
			tk__csv_error(im->msg,
				      "%s: timestamps are %s, those of %s are %s: files of one import share one clock",
				      paths[i], tk_csv_clock_name(s->clock), paths[0], tk_csv_clock_name(im->clock));
			return -1;
		}
		if (i == 0)
			im->clock = s->clock;
		s->n_counters = tk_csv_reader_n_counters(s->r);
		if (s->n_counters) {
			s->counter_name = calloc(s->n_counters, sizeof(*s->counter_name));
			s->counter_inst = calloc(s->n_counters, sizeof(*s->counter_inst));
			if (s->counter_name == NULL || s->counter_inst == NULL) {
				tk__csv_fail(im->msg, TK_ENOMEM, "out of memory");
				return -1;
			}
			for (size_t k = 0; k < s->n_counters; k++) {
				const char *nm = tk_csv_reader_counter(s->r, k, &s->counter_inst[k]);
				s->counter_name[k] = intern(&im->names, nm, strlen(nm));
				if (s->counter_name[k] == UINT32_MAX) {
					tk__csv_fail(im->msg, TK_ENOMEM, "out of memory");
					return -1;
				}
			}
		}
		char user[256], h[256];
		rc = tk_csv_parse_file_name(paths[i], user, sizeof(user), h, sizeof(h));
		if (rc <= 0) {
			if (report && !is_stdin)
				tk__csv_warn(im->msg, "%s: the file name has no \"-hostname-<host>\": host unknown",
					     paths[i]);
		} else if (host[0] == 0) {
			snprintf(host, host_cap, "%s", h);
		} else if (strcmp(host, h) != 0 && report) {
			tk__csv_warn(im->msg, "%s: host %s differs from %s (kept)", paths[i], h, host);
		}
	}
	return 0;
}

static uint64_t total_size(const char *const *paths, size_t n)
{
	uint64_t t = 0;
	for (size_t i = 0; i < n; i++)
		{
		struct stat sb;
		if (strcmp(paths[i], "-") != 0 && stat(paths[i], &sb) == 0 && S_ISREG(sb.st_mode))
			t += (uint64_t)sb.st_size;
	}
	return t;
}

static void progress(const struct import *im, uint64_t done, uint64_t total)
{
	if (im->cv != NULL && im->cv->progress_cb != NULL)
		im->cv->progress_cb(im->cv->user_data, done, total);
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
	struct tk__csv_msg *msg;
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
		tk__csv_fail(b->msg, TK_ENOMEM, "out of memory");
		return -1;
	}
	traceparser_cs(b->st, b, base_empty_cb, _NTO_TRACE_EMPTY, _NTO_TRACE_EMPTYEVENT);
	if (traceparser(b->st, b, path) != 0) {
		const char *m = traceparser_get_info(b->st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		tk__csv_error(b->msg, "%s: %s", path, m && *m ? m : strerror(errno));
		return -1;
	}
	if (!b->have) {
		tk__csv_error(b->msg, "%s: not a .kev trace", path);
		return -1;
	}
	struct traceparser_state *st = b->st;
	tk_kev_header *h = &b->hdr;
	memset(h, 0, sizeof(*h));
	h->big_endian = tk_traceparser_header_value(st, "BIG_ENDIAN", NULL) != NULL;
	const char *keys[8] = {"FILE_NAME", "SYSNAME", "NODENAME", "SYS_RELEASE", "SYS_VERSION", "MACHINE",
			       "VER_MAJOR", "VER_MINOR"};
	for (int i = 0; i < 8; i++)
		b->strs[i] = tk__csv_header_value(st, keys[i]);
	h->file_name = b->strs[0];
	h->sysname = b->strs[1];
	h->nodename = b->strs[2];
	h->sys_release = b->strs[3];
	h->sys_version = b->strs[4];
	h->machine = b->strs[5];
	h->ver_major = b->strs[6];
	h->ver_minor = b->strs[7];
	char *v = tk__csv_header_value(st, "DATE");
	h->date = tk__csv_parse_ctime(v);
	free(v);
	v = tk__csv_header_value(st, "BOOT_DATE");
	h->boot_date = tk__csv_parse_ctime(v);
	free(v);
	v = tk__csv_header_value(st, "CYCLES_PER_SEC");
	h->cycles_per_sec = v ? strtoull(v, NULL, 10) : 0;
	free(v);
	if (h->cycles_per_sec == 0)
		h->cycles_per_sec = 1000000000;
	b->hz = h->cycles_per_sec;
	v = tk__csv_header_value(st, "CPU_NUM");
	h->cpu_num = v ? (unsigned)strtoul(v, NULL, 10) : 1;
	free(v);
	if (h->cpu_num == 0)
		h->cpu_num = 1;
	unsigned splen = 0;
	const void *sp = traceparser_get_info(st, _TRACEPARSER_INFO_SYSPAGE, &splen);
	if (sp != NULL && splen > 0) {
		b->syspage = malloc(splen);
		if (b->syspage == NULL) {
			tk__csv_fail(b->msg, TK_ENOMEM, "out of memory");
			return -1;
		}
		memcpy(b->syspage, sp, splen);
		h->syspage = b->syspage;
		h->syspage_len = splen;
	}
	unsigned n = tk_traceparser_header_count(st);
	b->attrs = calloc(n + 2, sizeof(*b->attrs));
	if (b->attrs == NULL) {
		tk__csv_fail(b->msg, TK_ENOMEM, "out of memory");
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
			tk__csv_fail(b->msg, TK_ENOMEM, "out of memory");
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

static int write_ev(struct import *im, tk_kev_writer *w, const struct tk__csv_ev *e)
{
	uint32_t words[5];
	unsigned code;
	size_t nw;
	if (e->name >= TK__CSV_MAX_NAMES) {
		tk__csv_error(im->msg, "more than %u different names", TK__CSV_MAX_NAMES);
		return -1;
	}
	if (e->name >= im->n_defined) {
		size_t nn = im->n_defined ? im->n_defined * 2 : 1024;
		while (nn <= e->name)
			nn *= 2;
		uint8_t *nd = realloc(im->defined, nn);
		if (nd == NULL) {
			tk__csv_fail(im->msg, TK_ENOMEM, "out of memory");
			return -1;
		}
		memset(nd + im->n_defined, 0, nn - im->n_defined);
		im->defined = nd;
		im->n_defined = nn;
	}
	if (!im->defined[e->name]) {
		/* the name, once, before its first use */
		uint32_t nwords[1] = {e->name};
		int rc = tk_kev_write_event_str(w, 0, _TRACE_USER_C, TK__CSV_EV_NAME, e->t, nwords, 1,
						im->names.str[e->name]);
		if (rc) {
			tk__csv_fail(im->msg, TK_EIO, "%s: %s", im->out_shown, tk_kev_writer_errmsg(w));
			return -1;
		}
		im->defined[e->name] = 1;
	}
	words[0] = e->flags | e->name << TK__CSV_NAME_SHIFT;
	if (e->type == TK__CSV_T_COUNTER) {
		code = TK__CSV_EV_COUNTER;
		uint64_t bits = e->start;
		words[1] = e->pid;
		words[2] = e->tid;
		words[3] = (uint32_t)bits;
		words[4] = (uint32_t)(bits >> 32);
		nw = 5;
	} else if (e->type == TK__CSV_T_BEGIN) {
		code = (e->flags & TK__CSV_F_TID) ? TK__CSV_EV_TASK_BEGIN : TK__CSV_EV_FRAME_BEGIN;
		words[1] = e->pid;
		words[2] = e->tid;
		words[3] = e->id;
		nw = 4;
	} else {
		code = (e->flags & TK__CSV_F_TID) ? TK__CSV_EV_TASK_END : TK__CSV_EV_FRAME_END;
		words[1] = e->id;
		nw = 2;
	}
	int rc = tk_kev_write_event(w, 0, _TRACE_USER_C, code, e->t, words, nw);
	if (rc)
		tk__csv_fail(im->msg, TK_EIO, "%s: %s", im->out_shown, tk_kev_writer_errmsg(w));
	return rc ? -1 : 0;
}

static int copy_base_events(struct base *b, tk_kev_writer *w, const char *out_shown)
{
	int fd = open(b->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tk__csv_error(b->msg, "%s: %s", b->path, strerror(errno));
		return -1;
	}
	if (lseek(fd, (off_t)b->events_offset, SEEK_SET) < 0) {
		tk__csv_error(b->msg, "%s: %s", b->path, strerror(errno));
		close(fd);
		return -1;
	}
	enum { BUF_SIZE = 1 << 20 };
	char *buf = malloc(BUF_SIZE);
	if (buf == NULL) {
		tk__csv_fail(b->msg, TK_ENOMEM, "out of memory");
		close(fd);
		return -1;
	}
	size_t have = 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, BUF_SIZE - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tk__csv_fail(b->msg, tk_error_from_errno(errno), "%s: %s", b->path, strerror(errno));
			free(buf);
			close(fd);
			return -1;
		}
		have += (size_t)n;
		size_t whole = have / 16 * 16;
		if (whole > 0 && tk_kev_write_raw_file_order(w, buf, whole / 16) != 0) {
			tk__csv_fail(b->msg, TK_EIO, "%s: %s", out_shown, tk_kev_writer_errmsg(w));
			free(buf);
			close(fd);
			return -1;
		}
		memmove(buf, buf + whole, have - whole);
		have -= whole;
		if (n == 0)
			break;
	}
	free(buf);
	close(fd);
	if (have)
		tk__csv_warn(b->msg, "%s: %zu bytes of a partial event at the end not copied", b->path, have);
	return 0;
}

static uint64_t env_epoch(void)
{
	const char *s = getenv("SOURCE_DATE_EPOCH");
	return s && *s ? strtoull(s, NULL, 10) : 0;
}

static int import_kev(struct import *im, const char *const *paths, size_t n, const char *out, const char *into)
{
	struct base b;
	memset(&b, 0, sizeof(b));
	b.msg = im->msg;
	char host[256] = "";
	int ret = 1;
	tk_kev_writer *w = NULL;

	if (into != NULL && base_load(&b, into) != 0)
		goto done;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (import_open_sources(im, paths, n, host, sizeof(host), attempt == 0) != 0)
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
				tk__csv_error(im->msg, "%s: %s timestamps cannot be placed on the clock of %s (%s)",
					      paths[0], dom, into,
					      b.csv_clock[0] ? b.csv_clock : "cycles of a recorded trace");
				goto done;
			}
			if (host[0] && h.nodename && strcmp(host, h.nodename) != 0)
				tk__csv_warn(im->msg, "%s: host %s differs from the trace's %s", paths[0], host,
					     h.nodename);
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
			h.file_name = im->out_shown;
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
			tk__csv_fail(im->msg, rc, "%s: %s", im->out_shown,
				     w ? tk_kev_writer_errmsg(w) : tk_strerror(rc));
			w = NULL;
			goto done;
		}
		tk__csv_temp(im->msg, 0, tk_kev_writer_temp_path(w));
		uint64_t total = total_size(paths, n);
		if (into != NULL) {
			if (copy_base_events(&b, w, im->out_shown) != 0)
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
		struct tk__csv_ev e;
		int got;
		uint64_t count = 0;
		while ((got = next_event(im, &e)) > 0) {
			if ((++count & 0xffff) == 0)
				progress(im, consumed(im), total);
			if (owner_pending) {
				/* a buffer of its own, owned by nobody (pid 0, tid 0): the CSV rows carry
				 * their pid and tid in the events (contract "owner of every event") */
				uint32_t bw[2] = {0xffffffffu, 0};
				uint32_t tw[2] = {0, 0};
				owner_pending = 0;
				if (tk_kev_write_event(w, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER, e.t, bw, 2) ||
				    tk_kev_write_event(w, 0, _TRACE_PR_TH_C, STATE_RUNNING, e.t, tw, 2)) {
					tk__csv_fail(im->msg, TK_EIO, "%s: %s", im->out_shown, tk_kev_writer_errmsg(w));
					goto done;
				}
			}
			if (write_ev(im, w, &e) != 0)
				goto done;
		}
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
		tk__csv_temp(im->msg, 0, NULL);
		if (rc) {
			tk__csv_fail(im->msg, rc, "%s: write failed: %s", im->out_shown, tk_strerror(rc));
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

static int tb5_begin_stream(struct tk__csv_msg *m, TBRW_PTR p, struct tb5_stream *s, TBRW_U32 num, int counters,
			    const char *domain, const char *host)
{
	TBRW_U32 rc;
	wchar_t comment[256];
	char narrow_comment[256];
	snprintf(narrow_comment, sizeof(narrow_comment), "VTune CSV %s; timestamps %s; host %s",
		 counters ? "counters" : "intervals", domain, host[0] ? host : "unknown");
	wchar_t *wc = tk__csv_wide(narrow_comment); /* UTF-8, whatever the locale */
	if (wc == NULL) {
		tk__csv_error(m, "host \"%s\": not valid UTF-8 (or out of memory)", host);
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
	if ((rc = TBRW_writing_stream(p, num)) ||
	    (rc = TBRW_writing_stream_section(p, num, TBRW_STREAM_INFO_SECTION)) ||
	    (rc = TBRW_set_stream_info(p, num, &si)) ||
	    (rc = TBRW_done_stream_section(p, num, TBRW_STREAM_INFO_SECTION)))
		return tk__csv_tbrw_fail(m, "stream information", rc);
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
		return tk__csv_tbrw_fail(m, "data description", rc);
	for (int i = 0; i < nd; i++)
		if ((rc = TBRW_add_data_descriptor_entry(p, num, &d[i])))
			return tk__csv_tbrw_fail(m, "data description", rc);
	if ((rc = TBRW_done_stream_section(p, num, TBRW_DATA_DESCRIPTION_SECTION)) ||
	    (rc = TBRW_writing_stream_section(p, num, TBRW_DATA_SECTION)))
		return tk__csv_tbrw_fail(m, "data", rc);
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
		return tk__csv_tbrw_fail(im->msg, "event description", rc);
	/* the names: event id = the name's number in the records */
	for (uint32_t i = 0; i < im->names.n && i < s->used_cap; i++) {
		if (!s->used[i])
			continue;
		wchar_t *wn = tk__csv_wide(im->names.str[i]);
		if (wn == NULL) {
			tk__csv_fail(im->msg, TK_ENOMEM, "out of memory");
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
			return tk__csv_tbrw_fail(im->msg, "event description", rc);
	}
	if ((rc = TBRW_done_stream_section(p, s->num, TBRW_EVENT_DESCRIPTION_SECTION)) ||
	    (rc = TBRW_done_stream(p, s->num)))
		return tk__csv_tbrw_fail(im->msg, "stream", rc);
	s->open = 0;
	return 0;
}

static int import_tb5(struct import *im, const char *const *paths, size_t n, const char *out)
{
	char host[256] = "";
	int ret = 1;
	TBRW_PTR p = NULL;
	struct tb5_stream sv[2];
	struct tk__csv_tb5_interval *ib = NULL;
	struct tk__csv_tb5_counter *cb = NULL;
	size_t ni = 0, nc = 0;
	const size_t BATCH = 4096;

	memset(sv, 0, sizeof(sv));
	ib = malloc(BATCH * sizeof(*ib));
	cb = malloc(BATCH * sizeof(*cb));
	if (ib == NULL || cb == NULL) {
		tk__csv_fail(im->msg, TK_ENOMEM, "out of memory");
		goto done;
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		if (import_open_sources(im, paths, n, host, sizeof(host), attempt == 0) != 0)
			goto done;
		wchar_t *wout = tk__csv_wide(out);
		if (wout == NULL) {
			tk__csv_error(im->msg, "%s: not a valid UTF-8 name", out);
			goto done;
		}
		TBRW_U32 rc = TBRW_open(&p, wout, TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS);
		free(wout);
		if (rc) {
			tk__csv_tbrw_fail(im->msg, out, rc);
			p = NULL;
			goto done;
		}
		char part[4200];
		int part_len = snprintf(part, sizeof(part), "%s.part", out);
		if (part_len < 0 || (size_t)part_len >= sizeof(part)) {
			tk__csv_error(im->msg, "%s: name too long", out);
			goto done;
		}
		tk__csv_temp(im->msg, 0, part);
		if (im->unsorted) {
			im->memory = 1;
			if (load_all(im) != 0)
				goto done;
		} else {
			start_pipes(im);
		}
		const char *dom = tk_csv_clock_name(im->clock);
		TBRW_U32 next_stream = 0;
		struct tk__csv_ev e;
		int got;
		while ((got = next_event(im, &e)) > 0) {
			int k = e.type == TK__CSV_T_COUNTER;
			if (e.type == TK__CSV_T_BEGIN)
				continue;
			if (!sv[k].open) {
				if (tb5_begin_stream(im->msg, p, &sv[k], next_stream++, k, dom, host) != 0)
					goto done;
			}
			if (tb5_mark(&sv[k], e.name, (e.flags & TK__CSV_F_INST) ? 2 : 1) != 0) {
				tk__csv_fail(im->msg, TK_ENOMEM, "out of memory");
				goto done;
			}
			if (!k) {
				ib[ni++] = (struct tk__csv_tb5_interval){e.start, e.t, e.name, e.flags, e.pid, e.tid};
				if (ni == BATCH) {
					if ((rc = TBRW_add_data(p, sv[0].num, (TBRW_U32)(ni * sizeof(*ib)), ib)))
						goto tbrw_err;
					ni = 0;
				}
			} else {
				uint64_t bits = e.start;
				cb[nc++] = (struct tk__csv_tb5_counter){e.t, e.name, e.flags, e.pid, e.tid, bits};
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
			if (!sv[k].open && tb5_begin_stream(im->msg, p, &sv[k], next_stream++, k, dom, host) != 0)
				goto done;
		}
		for (int k = 0; k < 2; k++)
			if (sv[k].open && tb5_end_stream(p, &sv[k], im) != 0)
				goto done;
		rc = TBRW_close(p);
		p = NULL;
		tk__csv_temp(im->msg, 0, NULL);
		if (rc) {
			tk__csv_tbrw_fail(im->msg, out, rc);
			goto done;
		}
		ret = 0;
		break;
	tbrw_err:
		tk__csv_tbrw_fail(im->msg, out, rc);
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

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int tk_csv_import(const char *const *paths, size_t n_paths, const char *out_path, const tk_csv_import_options *opt,
		  tk_csv_convert *cv)
{
	struct tk__csv_msg msg = {cv, 0};
	tk_csv_import_options o;
	memset(&o, 0, sizeof(o));
	if (opt != NULL)
		memcpy(&o, opt, opt->struct_size < sizeof(o) ? opt->struct_size : sizeof(o));
	if (cv != NULL)
		cv->error[0] = 0;
	if (paths == NULL || n_paths == 0 || out_path == NULL) {
		tk__csv_fail(&msg, TK_EINVAL, "tk_csv_import: no CSV file or no output given");
		return msg.code;
	}
	int tb5 = o.format == TK_CSV_TRACE_TB5 || (o.format == TK_CSV_TRACE_AUTO && ends_with(out_path, ".tb5"));
	const char *shown = o.output_name ? o.output_name : out_path;
	if (tb5 && o.into != NULL) {
		tk__csv_fail(&msg, TK_EINVAL, "%s: a .tb5 output cannot merge into %s: that is a .kev", shown, o.into);
		return msg.code;
	}
	struct import im;
	memset(&im, 0, sizeof(im));
	im.msg = &msg;
	im.cv = cv;
	im.tsc_hz = o.tsc_hz;
	im.qpc_hz = o.qpc_hz ? o.qpc_hz : TK__CSV_QPC_HZ;
	im.out_shown = shown;
	im.stdin_path = o.stdin_path ? o.stdin_path : "-";
	/* standard input itself cannot be read twice: sorted in memory at once */
	for (size_t i = 0; i < n_paths && o.stdin_path == NULL; i++)
		if (strcmp(paths[i], "-") == 0)
			im.unsorted = 1;
	int rc = tb5 ? import_tb5(&im, paths, n_paths, out_path) : import_kev(&im, paths, n_paths, out_path, o.into);
	free(im.srcs);
	if (rc != 0 && msg.code == 0)
		tk__csv_fail(&msg, TK_EIO, "%s: import failed", shown);
	return rc != 0 ? msg.code : 0;
}
