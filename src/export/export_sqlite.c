/* SPDX-License-Identifier: MIT */
/*
 * SQLite export: a database of the trace for `sqlite3 trace.db` (docs/export.md, "SQLite").
 * What a user queries are these tables and views:
 *
 *   processes(pid, name)
 *   threads(pid, tid, name)
 *   events(id, ts, cpu, pid, tid, class, event, number, args)     view; args: JSON of every field
 *   slices(id, ts, dur, pid, tid, depth, category, name, args, closed)              view
 *   thread_states(pid, tid, state, bucket, ts, dur, cpu)   view; bucket: running|ready|blocked
 *   counters(pid, name, ts, value)                                                   view
 *
 * Built by the export model (the same slices and owners as the viewers' files); every event
 * is a row of events. The views present compact tables: event_rows (an event's numbers and
 * its kind, the interned class, event name, number and printf() format of its args in
 * event_kinds; the args as JSON text only for events with strings or many fields),
 * slice_rows (names interned in names), state_rows and counter_rows: a row is a few small
 * integers, which is what makes SQLite's work per row (the record, the b-tree insert) and
 * the file small.
 *
 * Rows go in through prepared statements (text bound static, no allocation per row), those
 * of event_rows and slice_rows 32 to a statement, in one transaction without a journal: the
 * database is new and a failed export leaves it to the caller to remove. The indexes are
 * created after the rows (one sort each: made before the rows, updated per row, they took
 * 15-30 % more time in all on 2 M events, measured); events(ts) only when the events are
 * not in time order, otherwise it would be the rowid order again.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/tk_utf8.h"
#include "export/export_internal.h"

#define NV 6 /* the numeric fields an event_rows row carries (v0..v5) */

static const char *const state_names[STATE_MAX] = {
	"DEAD",       "RUNNING",  "READY",      "STOPPED",     "SEND",      "RECEIVE",  "REPLY",    "STACK",
	"WAITTHREAD", "WAITPAGE", "SIGSUSPEND", "SIGWAITINFO", "NANOSLEEP", "MUTEX",    "CONDVAR",  "JOIN",
	"INTR",       "SEM",      "WAITCTX",    "NET_SEND",    "NET_REPLY", "STATE 21", "STATE 22", "STATE 23",
};

/* A thread: its state (for the thread_states intervals) and name. */
typedef struct sq_thread {
	int32_t pid, tid;
	uint8_t used, known; /* known: a row of threads */
	int state;           /* -1: unknown */
	unsigned cpu;
	uint64_t since;
	char *name;
	size_t name_len;
} sq_thread;

typedef struct sq_process {
	int32_t pid;
	int used;
	char *name;
	size_t name_len;
} sq_process;

/* What makes an event's kind: the same class, event name, number and fields' names and types. */
typedef struct kind_key {
	uint32_t cls, code;
	int32_t number;
	uint32_t n_fields; /* numeric fields (templ) */
	uint32_t templ;    /* 1: the args are a printf() format of the numeric fields */
	uint8_t types[NV];
	const char *names[NV];
	char ev[32];
} kind_key; /* compared and hashed whole: zeroed before it is filled */

_Static_assert(sizeof(kind_key) % 8 == 0, "hashed as 64-bit words");

typedef struct sq_kind {
	kind_key key;
	uint32_t id; /* 0: a free slot */
	char *cls, *event, *format;
} sq_kind;

typedef struct sq_name {
	char *s;
	size_t len;
	uint32_t id;
	uint64_t hash;
} sq_name;

enum { Q_EVENT, Q_SLICE, Q_STATE, Q_COUNTER, N_QUERIES };

static const char *const queries[N_QUERIES] = {
	"INSERT INTO event_rows(ts,cpu,pid,tid,kind,v0,v1,v2,v3,v4,v5,args) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
	"INSERT INTO slice_rows(ts, dur, pid, tid, depth, category, name, a0, a1, closed) VALUES (?,?,?,?,?,?,?,?,?,?)",
	"INSERT INTO state_rows(pid, tid, state, ts, dur, cpu) VALUES (?,?,?,?,?,?)",
	"INSERT INTO counter_rows(pid, name, ts, value) VALUES (?,?,?,?)",
};

/* The same rows' first columns (the rest NULL): the statements of batches with nothing past them. */
static const char *const narrow_queries[2] = {
	"INSERT INTO event_rows(ts,cpu,pid,tid,kind,v0,v1) VALUES (?,?,?,?,?,?,?)",
	"INSERT INTO slice_rows(ts, dur, pid, tid, depth, category, name, a0, a1) VALUES (?,?,?,?,?,?,?,?,?)",
};

/* Rows of event_rows and slice_rows go in BATCH at a time, by one INSERT of BATCH rows
 * (SQLite opens the table's cursor and seeks its end once per statement, not per row).
 * A batch whose rows have nothing in the last columns (an event's v2..v5 and args, a
 * slice's closed: most rows) goes in by a statement of the first columns only, which binds
 * and copies fewer values (the others are NULL by default): 7 values an event rather than
 * 12 (measured: 5 % fewer instructions for the whole export). */
#define BATCH  32
#define MAXCOL 12

typedef struct sq_batch {
	sqlite3_stmt *many;   /* BATCH rows of the query */
	sqlite3_stmt *narrow; /* BATCH rows of its first nnarrow columns */
	int qi, ncol, nnarrow, n;
	uint16_t wide; /* a row of the batch has a value past the first nnarrow columns */
	sqlite3_int64 v[BATCH][MAXCOL];
	uint16_t null[BATCH]; /* a bit per column */
} sq_batch;

typedef struct sq_state {
	sqlite3 *db;
	sqlite3_stmt *q[N_QUERIES];
	sq_batch ev, sl;
	/* events(ts) would be the rowid order again: made only when the events are not in time order */
	int events_in_order;
	uint64_t last_ts;

	sq_thread *threads;
	size_t n_threads, cap;
	sq_thread *last;
	struct {
		int32_t pid, tid;
		int valid;
	} running_on[64];
	int after_buffer;

	sq_process *procs;
	size_t n_procs, cap_procs;

	sq_kind *kinds;
	size_t n_kinds, cap_kinds;
	sq_kind **kind_list;           /* by id - 1 */
	uint32_t kind_last[32 * 1024]; /* per class and code: the id of the last kind seen */

	sq_name *names;
	size_t n_names, cap_names;
	sq_name **name_list; /* by id - 1 */
} sq_state;

static const char schema[] =
	"CREATE TABLE event_rows(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, cpu INTEGER NOT NULL, pid INTEGER,"
	" tid INTEGER, kind INTEGER NOT NULL, v0 INTEGER, v1 INTEGER, v2 INTEGER, v3 INTEGER, v4 INTEGER,"
	" v5 INTEGER, args TEXT);"
	"CREATE TABLE slice_rows(id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, dur INTEGER NOT NULL,"
	" pid INTEGER NOT NULL, tid INTEGER NOT NULL, depth INTEGER NOT NULL, category INTEGER NOT NULL,"
	" name INTEGER NOT NULL, a0 INTEGER NOT NULL, a1 INTEGER NOT NULL, closed INTEGER);"
	"CREATE TABLE state_rows(pid INTEGER NOT NULL, tid INTEGER NOT NULL, state INTEGER NOT NULL,"
	" ts INTEGER NOT NULL, dur INTEGER NOT NULL, cpu INTEGER NOT NULL);"
	"CREATE TABLE counter_rows(pid INTEGER NOT NULL, name INTEGER NOT NULL, ts INTEGER NOT NULL,"
	" value INTEGER NOT NULL);"
	"CREATE TABLE processes(pid INTEGER PRIMARY KEY, name TEXT);"
	"CREATE TABLE threads(pid INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT, PRIMARY KEY(pid, tid));"
	"CREATE TABLE event_kinds(id INTEGER PRIMARY KEY, class TEXT NOT NULL, event TEXT NOT NULL,"
	" number INTEGER, args_format TEXT);"
	"CREATE TABLE names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);";

/* Created once the rows are in. */
static const char indexes[] = "CREATE INDEX events_thread ON event_rows(pid, tid, ts);"
			      "CREATE INDEX slices_thread ON slice_rows(pid, tid, ts);"
			      "CREATE INDEX slices_name ON slice_rows(name);"
			      "CREATE INDEX thread_states_thread ON state_rows(pid, tid, ts);"
			      "CREATE INDEX counters_name ON counter_rows(pid, name, ts);";

/* The views; the slices' categories and args of VTune CSV intervals (3 TASK, 4 FRAME) only
 * in a database that has them (the others' are as they were). */
#define VIEW_EVENTS \
	"CREATE VIEW events AS SELECT e.id AS id, e.ts AS ts, e.cpu AS cpu, e.pid AS pid, e.tid AS tid," \
	" k.class AS class, k.event AS event, k.number AS number," \
	" coalesce(e.args, printf(k.args_format, e.v0, e.v1, e.v2, e.v3, e.v4, e.v5)) AS args" \
	" FROM event_rows e JOIN event_kinds k ON k.id = e.kind;"
#define VIEW_SLICES(more_categories, more_args) \
	"CREATE VIEW slices AS SELECT s.id AS id, s.ts AS ts, s.dur AS dur, s.pid AS pid, s.tid AS tid," \
	" s.depth AS depth, CASE s.category WHEN 0 THEN 'SYSTEM' WHEN 1 THEN 'USER'" more_categories \
	" ELSE 'KERCALL' END AS category," \
	" n.name AS name," \
	" CASE s.category WHEN 0 THEN printf('{\"thisfn\":\"0x%x\",\"call_site\":\"0x%x\"}', s.a0, s.a1)" \
	" WHEN 1 THEN printf('{\"d0\":\"0x%x\",\"d1\":\"0x%x\"}', s.a0, s.a1)" more_args \
	" ELSE printf('{\"number\":%u,\"cpu\":%u}', s.a0, s.a1) END AS args," \
	" CASE s.closed WHEN 1 THEN 'by an outer end' WHEN 2 THEN 'at the end of the trace' END AS closed" \
	" FROM slice_rows s JOIN names n ON n.id = s.name;"
#define VIEW_COUNTERS \
	"CREATE VIEW counters AS SELECT c.pid AS pid, n.name AS name, c.ts AS ts, c.value AS value" \
	" FROM counter_rows c JOIN names n ON n.id = c.name;"

static const char views[] = VIEW_EVENTS VIEW_SLICES("", "") VIEW_COUNTERS;
static const char views_csv[] = VIEW_EVENTS VIEW_SLICES(" WHEN 3 THEN 'TASK' WHEN 4 THEN 'FRAME'",
							" WHEN 3 THEN printf('{\"id\":%u}', s.a0)"
							" WHEN 4 THEN printf('{\"id\":%u}', s.a0)") VIEW_COUNTERS;

/* An error of SQLite's as the export's, with the system's reason for a failed write: SQLite
 * reports a full disk as SQLITE_FULL without errno, EFBIG or EDQUOT as an I/O error, whose
 * errno sqlite3_system_errno() has only for some statements (not for the COMMIT that writes
 * the pages, SQLite 3.40): then errno as the failed call left it (read first here). */
static int sq_fail(tk_export *x, sqlite3 *db, char *err)
{
	int e = errno;
	int code = sqlite3_errcode(db) & 0xff, sys = sqlite3_system_errno(db), rc;
	if (sys == 0)
		sys = e;
	if (code == SQLITE_FULL)
		rc = tk__export_error(x, TK_ENOSPC, "writing the database: %s", strerror(ENOSPC));
	else if (code == SQLITE_IOERR && sys != 0)
		rc = tk__export_error(x, sys == ENOSPC || sys == EDQUOT ? TK_ENOSPC : TK_EIO,
				      "writing the database: %s", strerror(sys));
	else
		rc = tk__export_error(x, code == SQLITE_NOMEM ? TK_ENOMEM : TK_EIO, "writing the database: %s",
				      err != NULL ? err : sqlite3_errmsg(db));
	sqlite3_free(err);
	return rc;
}

static int sq_step(tk_export *x, sq_state *sq, int qi)
{
	sqlite3_stmt *s = sq->q[qi];
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : sq_fail(x, sq->db, NULL);
}

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static uint64_t hash_key(const kind_key *k)
{
	uint64_t w[sizeof(kind_key) / 8], h = 0;
	memcpy(w, k, sizeof(w));
	for (size_t i = 0; i < sizeof(w) / 8; i++)
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
	return hash64(h);
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

/* ---- threads, processes, names, kinds ------------------------------------------------------- */

static sq_thread *sq_thread_get(sq_state *sq, int32_t pid, int32_t tid, int create)
{
	if (sq->last != NULL && sq->last->pid == pid && sq->last->tid == tid)
		return sq->last;
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
			size_t h = (size_t)hash64(k) & (cap - 1);
			while (t[h].used)
				h = (h + 1) & (cap - 1);
			t[h] = sq->threads[i];
		}
		free(sq->threads);
		sq->threads = t;
		sq->cap = cap;
		sq->last = NULL;
	}
	if (sq->cap == 0)
		return NULL;
	uint64_t k = ((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid;
	size_t h = (size_t)hash64(k) & (sq->cap - 1);
	while (sq->threads[h].used) {
		if (sq->threads[h].pid == pid && sq->threads[h].tid == tid)
			return sq->last = &sq->threads[h];
		h = (h + 1) & (sq->cap - 1);
	}
	if (!create)
		return NULL;
	sq_thread *t = &sq->threads[h];
	t->used = 1;
	t->pid = pid;
	t->tid = tid;
	t->state = -1;
	sq->n_threads++;
	return sq->last = t;
}

static sq_process *sq_process_get(sq_state *sq, int32_t pid)
{
	if ((sq->n_procs + 1) * 2 > sq->cap_procs) {
		size_t cap = sq->cap_procs == 0 ? 64 : sq->cap_procs * 2;
		sq_process *p = calloc(cap, sizeof(*p));
		if (p == NULL)
			return NULL;
		for (size_t i = 0; i < sq->cap_procs; i++) {
			if (!sq->procs[i].used)
				continue;
			size_t h = (size_t)hash64((uint32_t)sq->procs[i].pid) & (cap - 1);
			while (p[h].used)
				h = (h + 1) & (cap - 1);
			p[h] = sq->procs[i];
		}
		free(sq->procs);
		sq->procs = p;
		sq->cap_procs = cap;
	}
	size_t h = (size_t)hash64((uint32_t)pid) & (sq->cap_procs - 1);
	while (sq->procs[h].used) {
		if (sq->procs[h].pid == pid)
			return &sq->procs[h];
		h = (h + 1) & (sq->cap_procs - 1);
	}
	sq->procs[h].used = 1;
	sq->procs[h].pid = pid;
	sq->n_procs++;
	return &sq->procs[h];
}

/* The process and thread rows of a thread seen (a name already there is kept). */
static int sq_known(tk_export *x, sq_state *sq, int32_t pid, int32_t tid)
{
	sq_thread *t = sq_thread_get(sq, pid, tid, 1);
	if (t == NULL)
		return 0; /* past the threads' cap: as the model, not a row */
	if (!t->known) {
		if (sq_process_get(sq, pid) == NULL)
			return tk__export_error(x, TK_ENOMEM, "out of memory");
		t->known = 1;
	}
	return 0;
}

/* A copy of s (n bytes) as UTF-8 (*len bytes, NUL-terminated): as it is when it is valid
 * UTF-8, else read as Latin-1, as the other exports read such names (Perfetto's strings,
 * the JSON's \u00XX). SQLite's TEXT must be UTF-8: clients refuse to decode other bytes.
 * NULL: out of memory. */
static char *utf8_copy(const char *s, size_t n, int utf8, size_t *len)
{
	const size_t m = utf8 ? n : tk__latin1_utf8_len(s, n);
	char *d = malloc(m + 1);
	if (d == NULL)
		return NULL;
	if (utf8)
		memcpy(d, s, n);
	else
		tk__latin1_to_utf8((unsigned char *)d, s, n);
	d[m] = '\0';
	*len = m;
	return d;
}

static int set_name(char **dst, size_t *dst_len, const char *name, size_t len, int utf8)
{
	char *s = utf8_copy(name, len, utf8, dst_len);
	if (s == NULL)
		return TK_ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* The id of a name in names (interned). 0: out of memory. */
static uint32_t name_id(sq_state *sq, const char *s, size_t len)
{
	uint64_t h = hash_bytes(s, len);
	if ((sq->n_names + 1) * 2 > sq->cap_names) {
		size_t cap = sq->cap_names == 0 ? 256 : sq->cap_names * 2;
		sq_name *t = calloc(cap, sizeof(*t));
		sq_name **list = realloc(sq->name_list, cap / 2 * sizeof(*list));
		if (list != NULL)
			sq->name_list = list;
		if (t == NULL || list == NULL) {
			free(t);
			return 0;
		}
		for (size_t i = 0; i < sq->cap_names; i++) {
			if (sq->names[i].id == 0)
				continue;
			size_t k = (size_t)sq->names[i].hash & (cap - 1);
			while (t[k].id != 0)
				k = (k + 1) & (cap - 1);
			t[k] = sq->names[i];
			sq->name_list[t[k].id - 1] = &t[k];
		}
		free(sq->names);
		sq->names = t;
		sq->cap_names = cap;
	}
	size_t k = (size_t)h & (sq->cap_names - 1);
	while (sq->names[k].id != 0) {
		if (sq->names[k].hash == h && sq->names[k].len == len && memcmp(sq->names[k].s, s, len) == 0)
			return sq->names[k].id;
		k = (k + 1) & (sq->cap_names - 1);
	}
	char *copy = malloc(len + 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, s, len);
	copy[len] = '\0';
	sq->names[k].s = copy;
	sq->names[k].len = len;
	sq->names[k].hash = h;
	sq->names[k].id = (uint32_t)++sq->n_names;
	sq->name_list[sq->n_names - 1] = &sq->names[k];
	return sq->names[k].id;
}

/* A field name usable as it is in a printf() format and JSON text. */
static int plain_name(const char *s)
{
	if (strlen(s) > 40)
		return 0;
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || *s == '%' || (unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static char *dup_str(const char *s, size_t n)
{
	char *c = malloc(n + 1);
	if (c != NULL) {
		memcpy(c, s, n);
		c[n] = '\0';
	}
	return c;
}

/* The kind's strings: class, event name, the args' printf() format (as tk__json_fields()
 * writes the fields: duplicate names get "_<index>", an unnamed piece is "text"). */
static int kind_strings(sq_kind *k, const tk_kev_decoded *d)
{
	char cls_buf[16], name[48];
	const char *cls = d->cls_desc != NULL ? d->cls_desc->name : NULL;

	if (cls == NULL) {
		snprintf(cls_buf, sizeof(cls_buf), "CLASS %u", d->cls);
		cls = cls_buf;
	}
	if (d->event_name[0] != '\0') {
		size_t n = strnlen(d->event_name, sizeof(name) - 1);
		memcpy(name, d->event_name, n);
		name[n] = '\0';
	} else if (d->number >= 0) {
		snprintf(name, sizeof(name), "%s%d", d->cls == 6 ? "USER " : "EVENT ", d->number);
	} else {
		snprintf(name, sizeof(name), "EVENT %u", d->code);
	}
	k->cls = dup_str(cls, strlen(cls));
	k->event = dup_str(name, strlen(name));
	if (k->cls == NULL || k->event == NULL)
		return TK_ENOMEM;
	if (!k->key.templ)
		return 0;
	char fmt[NV * 80 + 8], *p = fmt;
	*p++ = '{';
	for (unsigned i = 0; i < d->n_fields; i++) {
		const tk_kev_field *f = &d->fields[i];
		const char *fname = f->name[0] != '\0' ? f->name : "text";
		int dup = 0;
		for (unsigned j = 0; j < i; j++) {
			const char *other = d->fields[j].name[0] != '\0' ? d->fields[j].name : "text";
			if (strcmp(other, fname) == 0)
				dup = 1;
		}
		if (i > 0)
			*p++ = ',';
		p += snprintf(p, 72, "\"%.40s", fname);
		if (dup)
			p += snprintf(p, 16, "_%u", i);
		*p++ = '"';
		*p++ = ':';
		const char *v = f->type == TK_KEV_FIELD_INT    ? "%d"
				: f->type == TK_KEV_FIELD_UINT ? "%u"
				: f->type == TK_KEV_FIELD_NONE ? "null"
							       : "\"0x%x\"";
		memcpy(p, v, strlen(v));
		p += strlen(v);
	}
	*p++ = '}';
	k->format = dup_str(fmt, (size_t)(p - fmt));
	return k->format == NULL ? TK_ENOMEM : 0;
}

/* The kind of an event (made the first time); its id in *id, whether its numbers go in v0.. */
static int kind_of(tk_export *x, sq_state *sq, const tk_kev_decoded *d, uint32_t *id, int *templ)
{
	/* most often the kind of the last event of this class and code: the same fields (the
	 * names are static strings: the same pointers) */
	uint32_t *last = &sq->kind_last[(d->cls & 31) * 1024 + (d->code & 1023)];
	if (*last != 0) {
		const kind_key *k = &sq->kind_list[*last - 1]->key;
		if (k->templ && k->number == d->number && k->n_fields == d->n_fields &&
		    strncmp(k->ev, d->event_name, sizeof(k->ev) - 1) == 0) {
			unsigned i = 0;
			while (i < d->n_fields && k->names[i] == d->fields[i].name && k->types[i] == d->fields[i].type)
				i++;
			if (i == d->n_fields) {
				*id = *last;
				*templ = 1;
				return 0;
			}
		}
	}
	kind_key key;
	memset(&key, 0, sizeof(key));
	key.cls = d->cls;
	key.code = d->code;
	key.number = d->number;
	if (d->event_name[0] != '\0')
		memcpy(key.ev, d->event_name, strnlen(d->event_name, sizeof(key.ev) - 1));
	key.templ = d->n_fields <= NV;
	for (unsigned i = 0; i < d->n_fields && key.templ; i++) {
		const tk_kev_field *f = &d->fields[i];
		if (f->type > TK_KEV_FIELD_PTR && f->type != TK_KEV_FIELD_NONE)
			key.templ = 0;
		else if (f->name[0] != '\0' && !plain_name(f->name))
			key.templ = 0;
		else {
			key.types[i] = f->type;
			key.names[i] = f->name;
		}
	}
	if (key.templ)
		key.n_fields = d->n_fields;
	else
		memset(key.types, 0, sizeof(key.types)), memset(key.names, 0, sizeof(key.names));
	if (*last != 0 && memcmp(&sq->kind_list[*last - 1]->key, &key, sizeof(key)) == 0) {
		*id = *last;
		*templ = (int)key.templ;
		return 0;
	}
	uint64_t h = hash_key(&key);

	if ((sq->n_kinds + 1) * 2 > sq->cap_kinds) {
		size_t cap = sq->cap_kinds == 0 ? 256 : sq->cap_kinds * 2;
		sq_kind *t = calloc(cap, sizeof(*t));
		sq_kind **list = realloc(sq->kind_list, cap / 2 * sizeof(*list));
		if (list != NULL)
			sq->kind_list = list;
		if (t == NULL || list == NULL) {
			free(t);
			return tk__export_error(x, TK_ENOMEM, "out of memory");
		}
		for (size_t i = 0; i < sq->cap_kinds; i++) {
			if (sq->kinds[i].id == 0)
				continue;
			size_t k = (size_t)hash_key(&sq->kinds[i].key) & (cap - 1);
			while (t[k].id != 0)
				k = (k + 1) & (cap - 1);
			t[k] = sq->kinds[i];
			sq->kind_list[t[k].id - 1] = &t[k];
		}
		free(sq->kinds);
		sq->kinds = t;
		sq->cap_kinds = cap;
	}
	size_t k = (size_t)h & (sq->cap_kinds - 1);
	while (sq->kinds[k].id != 0) {
		if (memcmp(&sq->kinds[k].key, &key, sizeof(key)) == 0) {
			*id = *last = sq->kinds[k].id;
			*templ = (int)key.templ;
			return 0;
		}
		k = (k + 1) & (sq->cap_kinds - 1);
	}
	sq_kind *kd = &sq->kinds[k];
	memcpy(&kd->key, &key, sizeof(key));
	if (kind_strings(kd, d) != 0) {
		free(kd->cls), free(kd->event), free(kd->format);
		memset(kd, 0, sizeof(*kd));
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	}
	kd->id = (uint32_t)++sq->n_kinds;
	sq->kind_list[kd->id - 1] = kd;
	*id = *last = kd->id;
	*templ = (int)key.templ;
	return 0;
}

/* ---- rows --------------------------------------------------------------------------------- */

/* The rows waiting in b, written: BATCH by the statement of BATCH rows, fewer one by one. */
static int batch_flush(tk_export *x, sq_state *sq, sq_batch *b)
{
	sqlite3_stmt *s = b->n < BATCH ? sq->q[b->qi] : b->wide ? b->many : b->narrow;
	int ncol = b->n == BATCH && !b->wide ? b->nnarrow : b->ncol;
	int rc = 0;
	for (int i = 0; i < b->n && rc == 0; i++) {
		int base = b->n == BATCH ? i * ncol : 0;
		for (int c = 0; c < ncol; c++) {
			if (b->null[i] & (1u << c))
				sqlite3_bind_null(s, base + c + 1);
			else
				sqlite3_bind_int64(s, base + c + 1, b->v[i][c]);
		}
		if (b->n < BATCH)
			rc = sq_step(x, sq, b->qi);
	}
	if (b->n == BATCH) {
		int r = sqlite3_step(s);
		sqlite3_reset(s);
		if (r != SQLITE_DONE)
			rc = sq_fail(x, sq->db, NULL);
	}
	b->n = 0;
	b->wide = 0;
	return rc;
}

/* The next row of b, to be filled (no column NULL yet), then counted by batch_add(). */
static sqlite3_int64 *batch_row(sq_batch *b)
{
	b->null[b->n] = 0;
	return b->v[b->n];
}

static int batch_add(tk_export *x, sq_state *sq, sq_batch *b)
{
	b->wide |= (uint16_t)(~b->null[b->n] & (0xffffu << b->nnarrow) & ~(0xffffu << b->ncol));
	return ++b->n == BATCH ? batch_flush(x, sq, b) : 0;
}

/* The interval a thread spent in its state up to ns, as a row. */
static int state_row(tk_export *x, sq_state *sq, sq_thread *t, uint64_t ns)
{
	if (t->state <= STATE_DEAD || ns < t->since)
		return 0;
	sqlite3_stmt *s = sq->q[Q_STATE];
	sqlite3_bind_int(s, 1, t->pid);
	sqlite3_bind_int(s, 2, t->tid);
	sqlite3_bind_int(s, 3, t->state);
	sqlite3_bind_int64(s, 4, (sqlite3_int64)t->since);
	sqlite3_bind_int64(s, 5, (sqlite3_int64)(ns - t->since));
	sqlite3_bind_int(s, 6, (int)t->cpu);
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
		int32_t pid = t->pid, tid = t->tid;
		sq_thread *prev = sq_thread_get(sq, sq->running_on[cpu].pid, sq->running_on[cpu].tid, 0);
		if (prev != NULL && prev->state == STATE_RUNNING && prev->cpu == cpu &&
		    (rc = enter_state(x, sq, prev, STATE_READY, ns, cpu)) != 0)
			return rc;
		t = sq_thread_get(sq, pid, tid, 0); /* (no thread is made above: t stays where it is) */
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

static int sq_event(tk_export *x, const tk_kev_decoded *d)
{
	sq_state *sq = x->fmt_state;
	uint32_t kind = 0;
	int templ = 0, rc;

	if ((rc = kind_of(x, sq, d, &kind, &templ)) != 0)
		return rc;
	if (templ) {
		sqlite3_int64 *v = batch_row(&sq->ev);
		uint16_t *null = &sq->ev.null[sq->ev.n];
		int col = 5;
		v[0] = (sqlite3_int64)d->time_ns;
		v[1] = d->cpu;
		if (d->flags & TK_KEV_DEC_OWNER_KNOWN) {
			v[2] = d->pid;
			v[3] = d->tid;
		} else {
			*null |= 1u << 2 | 1u << 3;
		}
		v[4] = kind;
		for (unsigned i = 0; i < d->n_fields; i++)
			if (d->fields[i].type != TK_KEV_FIELD_NONE)
				v[col++] = d->fields[i].v.i;
		for (; col < 6 + NV; col++)
			*null |= (uint16_t)(1u << col);
		rc = batch_add(x, sq, &sq->ev);
	} else {
		/* the JSON of the fields, built in the (otherwise unused) output buffer (alive
		 * until the step): this row by itself, after those waiting */
		sqlite3_stmt *s = sq->q[Q_EVENT];
		size_t need = 8;
		if ((rc = batch_flush(x, sq, &sq->ev)) != 0)
			return rc;
		sqlite3_bind_int64(s, 1, (sqlite3_int64)d->time_ns);
		sqlite3_bind_int(s, 2, (int)d->cpu);
		if (d->flags & TK_KEV_DEC_OWNER_KNOWN) {
			sqlite3_bind_int(s, 3, d->pid);
			sqlite3_bind_int(s, 4, d->tid);
		} else {
			sqlite3_bind_null(s, 3);
			sqlite3_bind_null(s, 4);
		}
		sqlite3_bind_int(s, 5, (int)kind);
		for (int col = 6; col < 6 + NV; col++)
			sqlite3_bind_null(s, col);
		for (unsigned i = 0; i < d->n_fields; i++)
			need += 96 + (size_t)d->fields[i].len * 16;
		x->out_len = 0;
		if (need > x->out_cap) { /* a long string: the scratch buffer grows to the event's */
			if (need > INT_MAX)
				return tk__export_error(x, TK_ETOOBIG, "an event's args exceed %d bytes", INT_MAX);
			char *o = realloc(x->out, need);
			if (o == NULL)
				return tk__export_error(x, TK_ENOMEM, "out of memory for an event's %zu bytes of args",
							need);
			x->out = o;
			x->out_cap = need;
		}
		x->out[x->out_len++] = '{';
		tk__json_fields(x, d);
		x->out[x->out_len++] = '}';
		sqlite3_bind_text(s, 6 + NV, x->out, (int)x->out_len, SQLITE_STATIC);
		rc = sq_step(x, sq, Q_EVENT);
		x->out_len = 0;
	}
	if (rc != 0)
		return rc;
	if (d->time_ns < sq->last_ts)
		sq->events_in_order = 0;
	sq->last_ts = d->time_ns;

	/* thread state changes (the owners' rows come with thread_new) */
	if (d->cls == 4 && d->code < STATE_MAX && d->number >= 0 &&
	    !(x->owner_markers && sq->after_buffer && d->code == STATE_RUNNING)) {
		const tk_kev_field *fp = tk_kev_field_find(d, "pid"), *ft = tk_kev_field_find(d, "tid");
		if (fp != NULL && ft != NULL && fp->type < TK_KEV_FIELD_STR && ft->type < TK_KEV_FIELD_STR) {
			int32_t pid = (int32_t)fp->v.i, tid = (int32_t)ft->v.i;
			sq_thread *t = sq_thread_get(sq, pid, tid, 1);
			if (t != NULL && !t->known && (rc = sq_known(x, sq, pid, tid)) != 0)
				return rc;
			if (t != NULL && (t = sq_thread_get(sq, pid, tid, 0)) != NULL &&
			    (rc = thread_state(x, sq, t, (int)d->code, d->time_ns, d->cpu)) != 0)
				return rc;
		}
	}
	if (d->cls == 1 && d->code == _TRACE_CONTROL_BUFFER)
		sq->after_buffer = 1;
	else if (!(d->cls == 1 && (d->code == _TRACE_CONTROL_TIME || d->code == _TRACE_CONTROL_DROPPED)))
		sq->after_buffer = 0;
	return 0;
}

static int sq_process_name(tk_export *x, int32_t pid, const char *name, size_t len, int utf8)
{
	sq_state *sq = x->fmt_state;
	sq_process *p = sq_process_get(sq, pid);
	if (p == NULL || set_name(&p->name, &p->name_len, name, len, utf8) != 0)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	return 0;
}

static int sq_thread_name(tk_export *x, int32_t pid, int32_t tid, const char *name, size_t len, int utf8)
{
	sq_state *sq = x->fmt_state;
	int rc = sq_known(x, sq, pid, tid);
	if (rc != 0)
		return rc;
	sq_thread *t = sq_thread_get(sq, pid, tid, 0);
	if (t != NULL && set_name(&t->name, &t->name_len, name, len, utf8) != 0)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	return 0;
}

static int sq_thread_new(tk_export *x, const tk__thread *t)
{
	return sq_known(x, x->fmt_state, t->pid, t->tid);
}

static int sq_slice_end(tk_export *x, const tk__thread *t, const tk__slice *s, uint64_t end_ns,
			const tk_kev_decoded *end, int reason)
{
	sq_state *sq = x->fmt_state;
	char name[40];
	const char *nm = name;
	size_t name_len;

	if (s->kind == TK__SLICE_FUNC) {
		if (s->name != NULL) { /* the function's symbol (tk_export_set_symbols) */
			nm = s->name;
			name_len = strlen(nm);
		} else {
			name_len = (size_t)(tk__fmt_hex(name, s->arg[0]) - name);
		}
	} else if (s->kind == TK__SLICE_USER) {
		nm = s->name;
		name_len = strnlen(nm, sizeof(name) - 1); /* as snprintf into name[40] cut it */
	} else {
		nm = s->label;
		name_len = strnlen(nm, sizeof(name) - 1);
	}
	(void)end;
	uint32_t id = name_id(sq, nm, name_len);
	if (id == 0)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	sqlite3_int64 *v = batch_row(&sq->sl);
	v[0] = (sqlite3_int64)s->begin_ns;
	v[1] = (sqlite3_int64)(end_ns - s->begin_ns);
	v[2] = t->pid;
	v[3] = t->tid;
	v[4] = t->depth; /* the stack without this slice: its depth */
	v[5] = s->kind;
	v[6] = id;
	v[7] = (sqlite3_int64)s->arg[0];
	v[8] = (sqlite3_int64)s->arg[1];
	if (reason == TK__CLOSE_OUTER)
		v[9] = 1;
	else if (reason == TK__CLOSE_TRACE_END)
		v[9] = 2;
	else
		sq->sl.null[sq->sl.n] = 1u << 9;
	return batch_add(x, sq, &sq->sl);
}

static int sq_instant(tk_export *x, const tk__thread *t, int32_t pid, int32_t tid, const tk_kev_decoded *d)
{
	(void)x, (void)t, (void)pid, (void)tid, (void)d; /* every event is already in events */
	return 0;
}

static int sq_counter(tk_export *x, const tk__thread *t, const tk__counter *c, uint64_t ns, int64_t value)
{
	sq_state *sq = x->fmt_state;
	sqlite3_stmt *s = sq->q[Q_COUNTER];
	uint32_t id = name_id(sq, c->name, strlen(c->name));
	if (id == 0)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	sqlite3_bind_int(s, 1, t->pid);
	sqlite3_bind_int(s, 2, (int)id);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)ns);
	sqlite3_bind_int64(s, 4, value);
	return sq_step(x, sq, Q_COUNTER);
}

/* A VTune CSV interval: a row of slice_rows on its thread (tasks; pid and tid 0 where not
 * given), or of its process with tid 0 (frames), category 3 (TASK) or 4 (FRAME), depth its
 * lane, a0 its id. */
static int sq_interval(tk_export *x, const tk__interval *iv)
{
	sq_state *sq = x->fmt_state;
	int rc;

	if (iv->kind == TK__IV_TASK && (rc = sq_known(x, sq, iv->pid, iv->tid)) != 0)
		return rc;
	if (iv->kind == TK__IV_FRAME && iv->has_pid && sq_process_get(sq, iv->pid) == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	uint32_t id = iv->name->fmt_id[0] != 0 ? iv->name->fmt_id[0] : name_id(sq, iv->name->s, iv->name->len);
	if ((iv->name->fmt_id[0] = id) == 0)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	sqlite3_int64 *v = batch_row(&sq->sl);
	v[0] = (sqlite3_int64)iv->begin_ns;
	v[1] = (sqlite3_int64)(iv->end_ns - iv->begin_ns);
	v[2] = iv->pid;
	v[3] = iv->tid;
	v[4] = iv->lane;
	v[5] = iv->kind == TK__IV_TASK ? 3 : 4;
	v[6] = id;
	v[7] = iv->id;
	v[8] = 0;
	sq->sl.null[sq->sl.n] = 1u << 9;
	return batch_add(x, sq, &sq->sl);
}

/* A VTune CSV counter sample: a row of counter_rows (pid 0 where not given), a double as REAL. */
static int sq_csv_sample(tk_export *x, const tk__csv_sample *c)
{
	sq_state *sq = x->fmt_state;
	sqlite3_stmt *s = sq->q[Q_COUNTER];
	if (c->is_double && isnan(c->d))
		return 0; /* SQLite would store NULL, which counter_rows.value refuses */
	uint32_t id = c->name->fmt_id[0] != 0 ? c->name->fmt_id[0] : name_id(sq, c->name->s, c->name->len);
	if ((c->name->fmt_id[0] = id) == 0)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	sqlite3_bind_int(s, 1, c->pid);
	sqlite3_bind_int(s, 2, (int)id);
	sqlite3_bind_int64(s, 3, (sqlite3_int64)c->ns);
	if (c->is_double)
		sqlite3_bind_double(s, 4, c->d);
	else
		sqlite3_bind_int64(s, 4, c->i);
	return sq_step(x, sq, Q_COUNTER);
}

/* ---- the end: the small tables, the views, the indexes ------------------------------------- */

static int step(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : -1;
}

static int sq_finish(tk_export *x)
{
	sq_state *sq = x->fmt_state;
	sqlite3 *db = sq->db;
	sqlite3_stmt *s = NULL;
	char *err = NULL;
	int rc;

	if ((rc = batch_flush(x, sq, &sq->ev)) != 0 || (rc = batch_flush(x, sq, &sq->sl)) != 0)
		return rc;
	/* states still going at the end of the trace */
	for (size_t i = 0; i < sq->cap; i++)
		if (sq->threads[i].used && (rc = state_row(x, sq, &sq->threads[i], x->stats.last_ns)) != 0)
			return rc;
	if (sqlite3_prepare_v2(db, "INSERT INTO processes(pid, name) VALUES (?, ?)", -1, &s, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < sq->cap_procs; i++) {
		sq_process *p = &sq->procs[i];
		if (!p->used)
			continue;
		sqlite3_bind_int(s, 1, p->pid);
		if (p->name != NULL)
			sqlite3_bind_text(s, 2, p->name, (int)p->name_len, SQLITE_STATIC);
		else
			sqlite3_bind_null(s, 2);
		if (step(s) != 0)
			goto fail;
	}
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(db, "INSERT INTO threads(pid, tid, name) VALUES (?, ?, ?)", -1, &s, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < sq->cap; i++) {
		sq_thread *t = &sq->threads[i];
		if (!t->used || !t->known)
			continue;
		sqlite3_bind_int(s, 1, t->pid);
		sqlite3_bind_int(s, 2, t->tid);
		if (t->name != NULL)
			sqlite3_bind_text(s, 3, t->name, (int)t->name_len, SQLITE_STATIC);
		else
			sqlite3_bind_null(s, 3);
		if (step(s) != 0)
			goto fail;
	}
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(db, "INSERT INTO event_kinds(id, class, event, number, args_format) VALUES (?,?,?,?,?)",
			       -1, &s, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < sq->n_kinds; i++) {
		sq_kind *k = sq->kind_list[i];
		sqlite3_bind_int(s, 1, (int)k->id);
		sqlite3_bind_text(s, 2, k->cls, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, k->event, -1, SQLITE_STATIC);
		if (k->key.number >= 0)
			sqlite3_bind_int(s, 4, k->key.number);
		else
			sqlite3_bind_null(s, 4);
		if (k->format != NULL)
			sqlite3_bind_text(s, 5, k->format, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(s, 5);
		if (step(s) != 0)
			goto fail;
	}
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(db, "INSERT INTO names(id, name) VALUES (?, ?)", -1, &s, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < sq->n_names; i++) {
		const char *nm = sq->name_list[i]->s;
		size_t nl = sq->name_list[i]->len;
		char *conv = NULL;
		/* (declared names come from options and headers: any bytes) */
		if (!tk__utf8_valid(nm, nl) && (nm = conv = utf8_copy(nm, nl, 0, &nl)) == NULL) {
			sqlite3_finalize(s);
			return tk__export_error(x, TK_ENOMEM, "out of memory");
		}
		sqlite3_bind_int(s, 1, (int)sq->name_list[i]->id);
		sqlite3_bind_text(s, 2, nm, (int)nl, SQLITE_TRANSIENT);
		free(conv);
		if (step(s) != 0)
			goto fail;
	}
	sqlite3_finalize(s);
	s = NULL;

	/* thread_states: the state's name and bucket from its number */
	char sql[4096];
	size_t n = (size_t)snprintf(sql, sizeof(sql), "CREATE VIEW thread_states AS SELECT pid, tid, CASE state");
	for (int i = 0; i < STATE_MAX; i++)
		n += (size_t)snprintf(sql + n, sizeof(sql) - n, " WHEN %d THEN '%s'", i, state_names[i]);
	snprintf(sql + n, sizeof(sql) - n,
		 " END AS state, CASE state WHEN %d THEN 'running' WHEN %d THEN 'ready' ELSE 'blocked' END AS bucket,"
		 " ts, dur, cpu FROM state_rows",
		 STATE_RUNNING, STATE_READY);
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK ||
	    sqlite3_exec(db, x->csv_on ? views_csv : views, NULL, NULL, &err) != SQLITE_OK ||
	    sqlite3_exec(db, indexes, NULL, NULL, &err) != SQLITE_OK ||
	    (!sq->events_in_order &&
	     sqlite3_exec(db, "CREATE INDEX events_ts ON event_rows(ts)", NULL, NULL, &err) != SQLITE_OK) ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, &err) != SQLITE_OK)
		goto fail;
	for (int i = 0; i < N_QUERIES; i++) {
		sqlite3_finalize(sq->q[i]);
		sq->q[i] = NULL;
	}
	sqlite3_finalize(sq->ev.many);
	sqlite3_finalize(sq->sl.many);
	sqlite3_finalize(sq->ev.narrow);
	sqlite3_finalize(sq->sl.narrow);
	sq->ev.many = sq->sl.many = sq->ev.narrow = sq->sl.narrow = NULL;
	sq->db = NULL;
	if (sqlite3_close(db) != SQLITE_OK) {
		rc = sq_fail(x, db, NULL);
		sqlite3_close_v2(db);
		return rc;
	}
	return 0;
fail:
	sqlite3_finalize(s);
	return sq_fail(x, db, err);
}

static void sq_free(tk_export *x)
{
	sq_state *sq = x->fmt_state;
	if (sq == NULL)
		return;
	for (int i = 0; i < N_QUERIES; i++)
		sqlite3_finalize(sq->q[i]);
	sqlite3_finalize(sq->ev.many);
	sqlite3_finalize(sq->sl.many);
	sqlite3_finalize(sq->ev.narrow);
	sqlite3_finalize(sq->sl.narrow);
	sqlite3_close_v2(sq->db);
	for (size_t i = 0; i < sq->cap; i++)
		if (sq->threads[i].used)
			free(sq->threads[i].name);
	free(sq->threads);
	for (size_t i = 0; i < sq->cap_procs; i++)
		free(sq->procs[i].name);
	free(sq->procs);
	for (size_t i = 0; i < sq->n_kinds; i++) {
		free(sq->kind_list[i]->cls);
		free(sq->kind_list[i]->event);
		free(sq->kind_list[i]->format);
	}
	free(sq->kinds);
	free(sq->kind_list);
	for (size_t i = 0; i < sq->n_names; i++)
		free(sq->name_list[i]->s);
	free(sq->names);
	free(sq->name_list);
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
	.interval = sq_interval,
	.csv_sample = sq_csv_sample,
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
	sq->events_in_order = 1;
	x->fmt_state = sq;
	/* No memory statistics: they cost a global mutex per allocation (refused, harmlessly,
	 * when the process has already initialized SQLite) */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* a new or empty file only: an existing database is refused and left as it is */
	struct stat sb;
	if (stat(db_path, &sb) == 0 && sb.st_size > 0) {
		if (errmsg != NULL && errmsg_cap > 0)
			snprintf(errmsg, errmsg_cap, "%s: the database already exists", db_path);
		tk_export_free(x);
		return TK_EIO;
	}
	/* 64 KiB pages: the fewest pages (and b-tree levels) per row; a 64 MiB cache, which is
	 * also the size of the pieces CREATE INDEX sorts in memory. No PRAGMA threads: on the
	 * 2-core machine its sorter took 26 s for the indexes of 10 M events rather than 15 s,
	 * with twice the memory (measured, docs/export.md). */
	if (sqlite3_open_v2(db_path, &sq->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
		    SQLITE_OK ||
	    sqlite3_exec(sq->db,
			 "PRAGMA page_size=65536; PRAGMA cache_size=-65536; PRAGMA locking_mode=EXCLUSIVE;"
			 " PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN",
			 NULL, NULL, &err) != SQLITE_OK ||
	    sqlite3_exec(sq->db, schema, NULL, NULL, &err) != SQLITE_OK) {
		if (errmsg != NULL && errmsg_cap > 0)
			snprintf(errmsg, errmsg_cap, "%s: %s", db_path,
				 err != NULL      ? err
				 : sq->db != NULL ? sqlite3_errmsg(sq->db)
						  : "out of memory");
		sqlite3_free(err);
		tk_export_free(x);
		return TK_EIO;
	}
	for (int i = 0; i < N_QUERIES; i++) {
		if (sqlite3_prepare_v2(sq->db, queries[i], -1, &sq->q[i], NULL) != SQLITE_OK) {
			if (errmsg != NULL && errmsg_cap > 0)
				snprintf(errmsg, errmsg_cap, "%s: %s", db_path, sqlite3_errmsg(sq->db));
			tk_export_free(x);
			return TK_EIO;
		}
	}
	/* the statements of BATCH rows: the query's VALUES repeated */
	sq->ev.qi = Q_EVENT, sq->ev.ncol = 12, sq->ev.nnarrow = 7;
	sq->sl.qi = Q_SLICE, sq->sl.ncol = 10, sq->sl.nnarrow = 9;
	sq_batch *batches[2] = { &sq->ev, &sq->sl };
	for (int k = 0; k < 4; k++) {
		sq_batch *b = batches[k / 2];
		const char *q = k % 2 == 0 ? queries[b->qi] : narrow_queries[b->qi];
		const char *values = strstr(q, "(?");
		size_t head = (size_t)(values - q), one = strlen(values);
		char *sql = malloc(head + BATCH * (one + 1) + 1), *p = sql;
		if (sql == NULL) {
			tk_export_free(x);
			return TK_ENOMEM;
		}
		memcpy(p, q, head);
		p += head;
		for (int i = 0; i < BATCH; i++) {
			if (i > 0)
				*p++ = ',';
			memcpy(p, values, one);
			p += one;
		}
		*p = '\0';
		rc = sqlite3_prepare_v2(sq->db, sql, -1, k % 2 == 0 ? &b->many : &b->narrow, NULL);
		free(sql);
		if (rc != SQLITE_OK) {
			if (errmsg != NULL && errmsg_cap > 0)
				snprintf(errmsg, errmsg_cap, "%s: %s", db_path, sqlite3_errmsg(sq->db));
			tk_export_free(x);
			return TK_EIO;
		}
	}
	return tk__export_run_file(x, in_path, pairs, counters, stats, errmsg, errmsg_cap);
}
