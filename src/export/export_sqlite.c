/* SPDX-License-Identifier: MIT */
/*
 * SQLite export: a database of the trace for `sqlite3 trace.db` (docs/export.md, "SQLite"):
 *
 *   processes(pid, name)
 *   threads(pid, tid, name)
 *   events(id, ts, cpu, pid, tid, class, event, number, args)     args: JSON of every field
 *   slices(id, ts, dur, pid, tid, depth, category, name, args, closed)
 *   thread_states(pid, tid, state, bucket, ts, dur, cpu)          bucket: running|ready|blocked
 *   counters(pid, name, ts, value)
 *
 * Built by the export model (the same slices and owners as the viewers' files); every event
 * is a row of events. Rows go in through prepared statements in one transaction, without a
 * journal: the database is new and a failed export leaves it to be removed by the caller.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_internal.h"

enum { Q_EVENT, Q_SLICE, Q_STATE, Q_COUNTER, Q_PROCESS, Q_THREAD, Q_PROCESS_NEW, Q_THREAD_NEW, N_QUERIES };

static const char *const queries[N_QUERIES] = {
	"INSERT INTO events(ts, cpu, pid, tid, class, event, number, args) VALUES (?,?,?,?,?,?,?,?)",
	"INSERT INTO slices(ts, dur, pid, tid, depth, category, name, args, closed) VALUES (?,?,?,?,?,?,?,?,?)",
	"INSERT INTO thread_states(pid, tid, state, bucket, ts, dur, cpu) VALUES (?,?,?,?,?,?,?)",
	"INSERT INTO counters(pid, name, ts, value) VALUES (?,?,?,?)",
	"INSERT INTO processes(pid, name) VALUES (?1, ?2) ON CONFLICT(pid) DO UPDATE SET name = ?2",
	"INSERT INTO threads(pid, tid, name) VALUES (?1, ?2, ?3) ON CONFLICT(pid, tid) DO UPDATE SET name = ?3",
	"INSERT OR IGNORE INTO processes(pid) VALUES (?)",
	"INSERT OR IGNORE INTO threads(pid, tid) VALUES (?, ?)",
};

static const char schema[] =
	"CREATE TABLE processes(pid INTEGER PRIMARY KEY, name TEXT);"
	"CREATE TABLE threads(pid INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT, PRIMARY KEY(pid, tid));"
	"CREATE TABLE events(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, cpu INTEGER NOT NULL, pid INTEGER,"
	" tid INTEGER, class TEXT NOT NULL, event TEXT NOT NULL, number INTEGER, args TEXT NOT NULL);"
	"CREATE TABLE slices(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, dur INTEGER NOT NULL,"
	" pid INTEGER NOT NULL, tid INTEGER NOT NULL, depth INTEGER NOT NULL, category TEXT NOT NULL,"
	" name TEXT NOT NULL, args TEXT NOT NULL, closed TEXT);"
	"CREATE TABLE thread_states(pid INTEGER NOT NULL, tid INTEGER NOT NULL, state TEXT NOT NULL,"
	" bucket TEXT NOT NULL, ts INTEGER NOT NULL, dur INTEGER NOT NULL, cpu INTEGER NOT NULL);"
	"CREATE TABLE counters(pid INTEGER NOT NULL, name TEXT NOT NULL, ts INTEGER NOT NULL,"
	" value INTEGER NOT NULL);";

static const char indexes[] =
	"CREATE INDEX events_ts ON events(ts);"
	"CREATE INDEX events_thread ON events(pid, tid, ts);"
	"CREATE INDEX slices_thread ON slices(pid, tid, ts);"
	"CREATE INDEX slices_name ON slices(name);"
	"CREATE INDEX thread_states_thread ON thread_states(pid, tid, ts);"
	"CREATE INDEX counters_name ON counters(pid, name, ts);";

static const char *const state_names[STATE_MAX] = {
	"DEAD",       "RUNNING",  "READY",     "STOPPED",    "SEND",        "RECEIVE",   "REPLY",   "STACK",
	"WAITTHREAD", "WAITPAGE", "SIGSUSPEND", "SIGWAITINFO", "NANOSLEEP", "MUTEX",     "CONDVAR", "JOIN",
	"INTR",       "SEM",      "WAITCTX",   "NET_SEND",   "NET_REPLY",   "STATE 21",  "STATE 22", "STATE 23",
};

/* A thread's current state, for the thread_states intervals. */
typedef struct sq_thread {
	int32_t pid, tid;
	uint32_t used;
	int state; /* -1: unknown */
	unsigned cpu;
	uint64_t since;
} sq_thread;

typedef struct sq_state {
	sqlite3 *db;
	sqlite3_stmt *q[N_QUERIES];
	sq_thread *threads;
	size_t n_threads, cap;
	struct {
		int32_t pid, tid;
		int valid;
	} running_on[64];
	int after_buffer;
} sq_state;

static int sq_fail(tk_export *x, sq_state *sq, const char *what)
{
	return tk__export_error(x, sqlite3_errcode(sq->db) == SQLITE_FULL ? TK_ENOSPC : TK_EIO, "%s: %s", what,
				sqlite3_errmsg(sq->db));
}

/* Runs an insert. Every parameter is bound before each step (NULL explicitly), so the
 * bindings need no clearing; text is bound SQLITE_STATIC when it outlives the step. */
static int sq_step(tk_export *x, sq_state *sq, int qi)
{
	sqlite3_stmt *s = sq->q[qi];
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : sq_fail(x, sq, "writing the database");
}

/* "0x<hex>" at p; returns the end */
static char *put_hex(char *p, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	int n = v == 0 ? 1 : (67 - __builtin_clzll(v)) / 4;
	*p++ = '0';
	*p++ = 'x';
	for (int i = n - 1; i >= 0; i--)
		p[i] = digits[v & 0xf], v >>= 4;
	return p + n;
}

static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

static char *put_lit(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

static sq_thread *sq_thread_get(sq_state *sq, int32_t pid, int32_t tid, int create)
{
	if (create && (sq->n_threads + 1) * 2 > sq->cap) {
		size_t cap = sq->cap == 0 ? 64 : sq->cap * 2;
		sq_thread *t = calloc(cap, sizeof(*t));
		if (t == NULL || sq->n_threads >= TK_EXPORT_MAX_THREADS) {
			free(t);
			return NULL;
		}
		for (size_t i = 0; i < sq->cap; i++) {
			if (!sq->threads[i].used)
				continue;
			uint64_t k = ((uint64_t)(uint32_t)sq->threads[i].pid << 32) | (uint32_t)sq->threads[i].tid;
			size_t h = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
			while (t[h].used)
				h = (h + 1) & (cap - 1);
			t[h] = sq->threads[i];
		}
		free(sq->threads);
		sq->threads = t;
		sq->cap = cap;
	}
	if (sq->cap == 0)
		return NULL;
	uint64_t k = ((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid;
	size_t h = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 32) & (sq->cap - 1);
	while (sq->threads[h].used) {
		if (sq->threads[h].pid == pid && sq->threads[h].tid == tid)
			return &sq->threads[h];
		h = (h + 1) & (sq->cap - 1);
	}
	if (!create)
		return NULL;
	sq->threads[h].used = 1;
	sq->threads[h].pid = pid;
	sq->threads[h].tid = tid;
	sq->threads[h].state = -1;
	sq->n_threads++;
	return &sq->threads[h];
}

/* The process and thread rows of a thread seen (a name already there is kept). */
static int sq_known(tk_export *x, sq_state *sq, int32_t pid, int32_t tid)
{
	int rc;
	sqlite3_bind_int(sq->q[Q_PROCESS_NEW], 1, pid);
	if ((rc = sq_step(x, sq, Q_PROCESS_NEW)) != 0)
		return rc;
	sqlite3_bind_int(sq->q[Q_THREAD_NEW], 1, pid);
	sqlite3_bind_int(sq->q[Q_THREAD_NEW], 2, tid);
	return sq_step(x, sq, Q_THREAD_NEW);
}

/* The interval a thread spent in its state up to ns, as a row. */
static int state_row(tk_export *x, sq_state *sq, sq_thread *t, uint64_t ns)
{
	if (t->state <= STATE_DEAD || ns < t->since)
		return 0;
	sqlite3_stmt *s = sq->q[Q_STATE];
	const char *bucket = t->state == STATE_RUNNING ? "running" : t->state == STATE_READY ? "ready" : "blocked";
	sqlite3_bind_int(s, 1, t->pid);
	sqlite3_bind_int(s, 2, t->tid);
	sqlite3_bind_text(s, 3, state_names[t->state], -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, bucket, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)t->since);
	sqlite3_bind_int64(s, 6, (sqlite3_int64)(ns - t->since));
	sqlite3_bind_int(s, 7, (int)t->cpu);
	return sq_step(x, sq, Q_STATE);
}

static int enter_state(tk_export *x, sq_state *sq, sq_thread *t, int state, uint64_t ns, unsigned cpu)
{
	int rc = state_row(x, sq, t, ns);
	t->state = state;
	t->since = ns;
	t->cpu = cpu;
	return rc;
}

/* The same rules as the statistics (export_stats.c): a thread that starts running where
 * another still ran has preempted it (READY from then on). */
static int thread_state(tk_export *x, sq_state *sq, sq_thread *t, int state, uint64_t ns, unsigned cpu)
{
	int rc;
	cpu &= 63;
	if (state == STATE_RUNNING && sq->running_on[cpu].valid &&
	    (sq->running_on[cpu].pid != t->pid || sq->running_on[cpu].tid != t->tid)) {
		sq_thread *prev = sq_thread_get(sq, sq->running_on[cpu].pid, sq->running_on[cpu].tid, 0);
		if (prev != NULL && prev->state == STATE_RUNNING && prev->cpu == cpu &&
		    (rc = enter_state(x, sq, prev, STATE_READY, ns, cpu)) != 0)
			return rc;
	}
	if (t->state == STATE_RUNNING && state != STATE_RUNNING && sq->running_on[t->cpu].valid &&
	    sq->running_on[t->cpu].pid == t->pid && sq->running_on[t->cpu].tid == t->tid)
		sq->running_on[t->cpu].valid = 0;
	if (state == STATE_RUNNING) {
		sq->running_on[cpu].pid = t->pid;
		sq->running_on[cpu].tid = t->tid;
		sq->running_on[cpu].valid = 1;
	}
	return enter_state(x, sq, t, state, ns, state == STATE_RUNNING ? cpu : t->cpu);
}

static int sq_start(tk_export *x)
{
	(void)x;
	return 0; /* the database is opened by tk_export_sqlite() */
}

static int bind_args(tk_export *x, sqlite3_stmt *s, int col, const tk_kev_decoded *d)
{
	/* the JSON of the fields, built in the (otherwise unused) output buffer */
	size_t need = 8;
	for (unsigned i = 0; i < d->n_fields; i++)
		need += 96 + (size_t)d->fields[i].len * 16;
	x->out_len = 0;
	if (need > x->out_cap) {
		sqlite3_bind_text(s, col, "{\"truncated\":true}", -1, SQLITE_STATIC);
		return 0;
	}
	x->out[x->out_len++] = '{';
	tk__json_fields(x, d);
	x->out[x->out_len++] = '}';
	/* static: the buffer is not written again before the caller's step */
	sqlite3_bind_text(s, col, x->out, (int)x->out_len, SQLITE_STATIC);
	x->out_len = 0;
	return 0;
}

static int sq_event(tk_export *x, const tk_kev_decoded *d)
{
	sq_state *sq = x->fmt_state;
	sqlite3_stmt *s = sq->q[Q_EVENT];
	char name[48], cls_buf[16];
	const char *cls = d->cls_desc != NULL ? d->cls_desc->name : NULL;
	int rc;

	if (cls == NULL) {
		snprintf(cls_buf, sizeof(cls_buf), "CLASS %u", d->cls);
		cls = cls_buf;
	}
	if (d->event_name[0] != '\0') {
		size_t n = strnlen(d->event_name, sizeof(name) - 1);
		memcpy(name, d->event_name, n);
		name[n] = '\0';
	} else if (d->number >= 0) {
		*put_u64(put_lit(name, d->cls == 6 ? "USER " : "EVENT "), (uint64_t)d->number) = '\0';
	} else {
		*put_u64(put_lit(name, "EVENT "), d->code) = '\0';
	}
	sqlite3_bind_int64(s, 1, (sqlite3_int64)d->time_ns);
	sqlite3_bind_int(s, 2, (int)d->cpu);
	if (d->flags & TK_KEV_DEC_OWNER_KNOWN) {
		sqlite3_bind_int(s, 3, d->pid);
		sqlite3_bind_int(s, 4, d->tid);
	} else {
		sqlite3_bind_null(s, 3);
		sqlite3_bind_null(s, 4);
	}
	/* name, cls_buf and the args in x->out live until the step below */
	sqlite3_bind_text(s, 5, cls, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, name, -1, SQLITE_STATIC);
	if (d->number >= 0)
		sqlite3_bind_int(s, 7, d->number);
	else
		sqlite3_bind_null(s, 7);
	bind_args(x, s, 8, d);
	if ((rc = sq_step(x, sq, Q_EVENT)) != 0)
		return rc;

	/* thread state changes (the owners' rows come with thread_new) */
	if (d->cls == 4 && d->code < STATE_MAX && d->number >= 0 &&
	    !(x->owner_markers && sq->after_buffer && d->code == STATE_RUNNING)) {
		const tk_kev_field *fp = tk_kev_field_find(d, "pid"), *ft = tk_kev_field_find(d, "tid");
		if (fp != NULL && ft != NULL && fp->type < TK_KEV_FIELD_STR && ft->type < TK_KEV_FIELD_STR) {
			int32_t pid = (int32_t)fp->v.i, tid = (int32_t)ft->v.i;
			sq_thread *t = sq_thread_get(sq, pid, tid, 0);
			if (t == NULL && (t = sq_thread_get(sq, pid, tid, 1)) != NULL && (rc = sq_known(x, sq, pid, tid)) != 0)
				return rc;
			if (t != NULL && (rc = thread_state(x, sq, t, (int)d->code, d->time_ns, d->cpu)) != 0)
				return rc;
		}
	}
	if (d->cls == 1 && d->code == _TRACE_CONTROL_BUFFER)
		sq->after_buffer = 1;
	else if (!(d->cls == 1 && (d->code == _TRACE_CONTROL_TIME || d->code == _TRACE_CONTROL_DROPPED)))
		sq->after_buffer = 0;
	return 0;
}

static int sq_name(tk_export *x, int qi, int32_t pid, int32_t tid, const char *name, size_t len)
{
	sq_state *sq = x->fmt_state;
	sqlite3_stmt *s = sq->q[qi];
	sqlite3_bind_int(s, 1, pid);
	if (qi == Q_THREAD) {
		sqlite3_bind_int(s, 2, tid);
		sqlite3_bind_text(s, 3, name, (int)len, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_text(s, 2, name, (int)len, SQLITE_TRANSIENT);
	}
	return sq_step(x, sq, qi);
}

static int sq_process_name(tk_export *x, int32_t pid, const char *name, size_t len, int utf8)
{
	(void)utf8;
	return sq_name(x, Q_PROCESS, pid, 0, name, len);
}

static int sq_thread_name(tk_export *x, int32_t pid, int32_t tid, const char *name, size_t len, int utf8)
{
	(void)utf8;
	int rc = sq_known(x, x->fmt_state, pid, tid);
	if (rc != 0)
		return rc;
	return sq_name(x, Q_THREAD, pid, tid, name, len);
}

static int sq_thread_new(tk_export *x, const tk__thread *t)
{
	return sq_known(x, x->fmt_state, t->pid, t->tid);
}

static const char *const slice_cat[] = { "SYSTEM", "USER", "KERCALL" };

static int sq_slice_end(tk_export *x, const tk__thread *t, const tk__slice *s, uint64_t end_ns,
			const tk_kev_decoded *end, int reason)
{
	sq_state *sq = x->fmt_state;
	sqlite3_stmt *q = sq->q[Q_SLICE];
	char name[40], args[160], *a = args;
	const char *nm = name;
	int name_len;

	if (s->kind == TK__SLICE_FUNC) {
		if (s->name != NULL) { /* the function's symbol (tk_export_set_symbols) */
			nm = s->name;
			name_len = (int)strlen(nm);
		} else {
			name_len = (int)(put_hex(name, s->arg[0]) - name);
		}
		a = put_hex(put_lit(a, "{\"thisfn\":\""), s->arg[0]);
		a = put_hex(put_lit(a, "\",\"call_site\":\""), s->arg[1]);
		a = put_lit(a, "\"}");
	} else if (s->kind == TK__SLICE_USER) {
		nm = s->name;
		name_len = (int)strnlen(nm, sizeof(name) - 1); /* as snprintf into name[40] cut it */
		a = put_hex(put_lit(a, "{\"d0\":\""), s->arg[0]);
		a = put_hex(put_lit(a, "\",\"d1\":\""), s->arg[1]);
		a = put_lit(a, "\"}");
	} else {
		nm = s->label;
		name_len = (int)strnlen(nm, sizeof(name) - 1);
		a = put_u64(put_lit(a, "{\"number\":"), s->arg[0]);
		a = put_u64(put_lit(a, ",\"cpu\":"), s->arg[1]);
		a = put_lit(a, "}");
	}
	(void)end;
	sqlite3_bind_int64(q, 1, (sqlite3_int64)s->begin_ns);
	sqlite3_bind_int64(q, 2, (sqlite3_int64)(end_ns - s->begin_ns));
	sqlite3_bind_int(q, 3, t->pid);
	sqlite3_bind_int(q, 4, t->tid);
	sqlite3_bind_int(q, 5, (int)t->depth); /* the stack without this slice: its depth */
	sqlite3_bind_text(q, 6, slice_cat[s->kind], -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 7, nm, name_len, SQLITE_STATIC); /* name, args, the slice: alive until the step */
	sqlite3_bind_text(q, 8, args, (int)(a - args), SQLITE_STATIC);
	if (reason == TK__CLOSE_OUTER)
		sqlite3_bind_text(q, 9, "by an outer end", -1, SQLITE_STATIC);
	else if (reason == TK__CLOSE_TRACE_END)
		sqlite3_bind_text(q, 9, "at the end of the trace", -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(q, 9);
	return sq_step(x, sq, Q_SLICE);
}

static int sq_instant(tk_export *x, const tk__thread *t, int32_t pid, int32_t tid, const tk_kev_decoded *d)
{
	(void)x, (void)t, (void)pid, (void)tid, (void)d; /* every event is already in events */
	return 0;
}

static int sq_counter(tk_export *x, const tk__thread *t, const tk__counter *c, uint64_t ns, int64_t value)
{
	sq_state *sq = x->fmt_state;
	sqlite3_stmt *q = sq->q[Q_COUNTER];
	sqlite3_bind_int(q, 1, t->pid);
	sqlite3_bind_text(q, 2, c->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(q, 3, (sqlite3_int64)ns);
	sqlite3_bind_int64(q, 4, (sqlite3_int64)value);
	return sq_step(x, sq, Q_COUNTER);
}

static int sq_finish(tk_export *x)
{
	sq_state *sq = x->fmt_state;
	int rc;
	/* states still going at the end of the trace */
	for (size_t i = 0; i < sq->cap; i++)
		if (sq->threads[i].used && (rc = state_row(x, sq, &sq->threads[i], x->stats.last_ns)) != 0)
			return rc;
	char *err = NULL;
	if (sqlite3_exec(sq->db, indexes, NULL, NULL, &err) != SQLITE_OK ||
	    sqlite3_exec(sq->db, "COMMIT", NULL, NULL, &err) != SQLITE_OK) {
		rc = tk__export_error(x, sqlite3_errcode(sq->db) == SQLITE_FULL ? TK_ENOSPC : TK_EIO,
				      "finishing the database: %s", err != NULL ? err : sqlite3_errmsg(sq->db));
		sqlite3_free(err);
		return rc;
	}
	return 0;
}

static void sq_free(tk_export *x)
{
	sq_state *sq = x->fmt_state;
	if (sq == NULL)
		return;
	for (int i = 0; i < N_QUERIES; i++)
		sqlite3_finalize(sq->q[i]);
	if (sq->db != NULL)
		sqlite3_close(sq->db);
	free(sq->threads);
	free(sq);
	x->fmt_state = NULL;
}

const tk__format tk__export_sqlite = {
	.start = sq_start,
	.event = sq_event,
	.process_name = sq_process_name,
	.thread_name = sq_thread_name,
	.slice_begin = NULL,
	.slice_end = sq_slice_end,
	.instant = sq_instant,
	.counter = sq_counter,
	.thread_new = sq_thread_new,
	.finish = sq_finish,
	.free = sq_free,
};

int tk_export_sqlite(const char *in_path, const char *db_path, const char *pairs, const char *counters,
		     tk_export_stats *stats, char *errmsg, size_t errmsg_cap)
{
	return tk_export_sqlite_flags(in_path, db_path, 0, pairs, counters, stats, errmsg, errmsg_cap);
}

int tk_export_sqlite_flags(const char *in_path, const char *db_path, unsigned flags, const char *pairs,
			   const char *counters, tk_export_stats *stats, char *errmsg, size_t errmsg_cap)
{
	tk_export *x;
	sq_state *sq;
	char *err = NULL;
	int rc;

	if (errmsg != NULL && errmsg_cap > 0)
		errmsg[0] = '\0';
	if (in_path == NULL || db_path == NULL)
		return TK_EINVAL;
	if ((rc = tk__export_create(&x, &tk__export_sqlite, TK_EXPORT_SQLITE, NULL)) != 0)
		return rc;
	if ((flags & TK_EXPORT_SYMBOLS) && (rc = tk__export_use_symbols(x, in_path)) != 0) {
		tk_export_free(x);
		return rc;
	}
	sq = calloc(1, sizeof(*sq));
	if (sq == NULL) {
		tk_export_free(x);
		return TK_ENOMEM;
	}
	x->fmt_state = sq;
	/* No memory statistics: they cost a global mutex per allocation (refused, harmlessly,
	 * when the process has already initialized SQLite) */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* one thread uses the connection: no mutexes; large pages and a 64 MiB cache */
	if (sqlite3_open_v2(db_path, &sq->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK ||
	    sqlite3_exec(sq->db,
			 "PRAGMA page_size=65536; PRAGMA cache_size=-65536; PRAGMA locking_mode=EXCLUSIVE;"
			 " PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN",
			 NULL, NULL, &err) != SQLITE_OK ||
	    sqlite3_exec(sq->db, schema, NULL, NULL, &err) != SQLITE_OK) {
		if (errmsg != NULL && errmsg_cap > 0)
			snprintf(errmsg, errmsg_cap, "%s: %s", db_path,
				 err != NULL ? err : sq->db != NULL ? sqlite3_errmsg(sq->db) : "cannot open");
		sqlite3_free(err);
		tk_export_free(x);
		return TK_EIO;
	}
	/* (an existing database fails above: its tables exist) */
	for (int i = 0; i < N_QUERIES; i++) {
		if (sqlite3_prepare_v2(sq->db, queries[i], -1, &sq->q[i], NULL) != SQLITE_OK) {
			if (errmsg != NULL && errmsg_cap > 0)
				snprintf(errmsg, errmsg_cap, "%s: %s", db_path, sqlite3_errmsg(sq->db));
			tk_export_free(x);
			return TK_EIO;
		}
	}
	return tk__export_run_file(x, in_path, pairs, counters, stats, errmsg, errmsg_cap);
}
