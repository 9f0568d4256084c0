/* SPDX-License-Identifier: MIT */
/*
 * The VTune CSV data of a .kev (docs/vtune-csv.md, "Intervals and counters in a .kev trace")
 * for the exporters: USER 1005 name events define names by number, 1000/1001 and 1002/1003
 * begin and end tasks and frames by id, 1004 carries a counter sample. Begins wait in a hash
 * table of open intervals for their end (memory: the open intervals, the names and a lane set
 * per track); a format gets an interval whole at its end, with the lane it holds on its track
 * (the lowest free at its begin, so intervals of one lane never overlap, whatever the
 * tasks of a thread do). The pairing rules are tracecsv export's (src/csv/csv_export.c), and
 * the same cases are counted (tk_export_stats.csv_*).
 */
#include <stdlib.h>
#include <string.h>

#include "common/tk_utf8.h"
#include "export/export_internal.h"

/* The payload's first word (docs/vtune-csv.md): flags in bits 0-3, the name number above. */
#define NAME_SHIFT     4
#define MAX_NAMES      (1u << (32 - NAME_SHIFT))
#define F_PID          0x1u
#define F_TID          0x2u
#define F_INST         0x4u
#define F_FLOAT        0x8u
#define EV_TASK_BEGIN  1000u
#define EV_TASK_END    1001u
#define EV_FRAME_BEGIN 1002u
#define EV_FRAME_END   1003u
#define EV_COUNTER     1004u
#define EV_NAME        1005u
/* Lanes of one track: past this many intervals open at once on one thread, the last lane is
 * shared (and its slices may cross). */
#define MAX_LANES (1u << 20)

/* A name number and its current name. */
struct kname {
	uint32_t id;
	tk__csv_name *name; /* NULL: free slot */
};

struct open_iv {
	uint32_t id, name_id;
	uint8_t used, kind, has_pid, has_tid;
	int32_t pid, tid;
	uint32_t lane;
	struct lane_set *lanes;
	uint64_t begin_ns;
	tk__csv_name *name;
};

/* A track of intervals (kind, pid, tid) or of a counter (pid, name, inst), found by key. */
struct lane_set {
	uint64_t key_hash;
	uint8_t kind; /* 0 task, 1 frame, 2 counter */
	uint8_t has_pid, inst, used;
	int32_t pid, tid;
	char *cname; /* counters: the name */
	uint32_t cname_len;
	uint64_t track;
	/* intervals: lanes 0 .. n_lanes - 1 have been given out; the free ones among them wait
	 * in a min-heap (freed, room for n_lanes), so that the lowest free lane is found in
	 * O(log n) however many are open (a scan of a bit set was quadratic in them) */
	uint32_t n_lanes, n_freed, cap_freed;
	uint32_t *freed;
	struct lane_set *next; /* hash chain */
};

struct tk__csv_model {
	struct kname *names;
	size_t names_mask, n_names;
	struct open_iv *open;
	size_t open_mask, n_open;
	struct lane_set **sets; /* chains by hash */
	size_t sets_mask, n_sets;
	uint64_t n_iv_tracks, n_counter_tracks;
};

int tk__export_csv_codes_free(const tk_export *x)
{
	for (unsigned c = TK__CSV_FIRST_CODE; c < TK__CSV_FIRST_CODE + TK__CSV_N_CODES; c++)
		if (x->pair_begin[c] != 0 || x->pair_end[c] != 0 || x->counter_of[c] != 0)
			return 0;
	return 1;
}

static void name_unref(tk__csv_name *n)
{
	if (n != NULL && --n->refs == 0)
		free(n);
}

void tk__export_csv_free(tk_export *x)
{
	struct tk__csv_model *m = x->csv;
	if (m == NULL)
		return;
	for (size_t i = 0; m->names != NULL && i <= m->names_mask; i++)
		name_unref(m->names[i].name);
	for (size_t i = 0; m->open != NULL && i <= m->open_mask; i++)
		if (m->open[i].used)
			name_unref(m->open[i].name);
	for (size_t i = 0; m->sets != NULL && i <= m->sets_mask; i++) {
		for (struct lane_set *s = m->sets[i], *next; s != NULL; s = next) {
			next = s->next;
			free(s->freed);
			free(s->cname);
			free(s);
		}
	}
	free(m->names);
	free(m->open);
	free(m->sets);
	free(m);
	x->csv = NULL;
}

/* ---- messages ------------------------------------------------------------------------------- */

/* Keeps the first problem's text, with where it is. */
static void csv_warn(tk_export *x, const tk_kev_decoded *d, const char *what)
{
	char at[48];

	if (x->csv_warning[0] != '\0')
		return;
	int64_t off = x->where != NULL ? x->where(x->where_ud) : -1;
	if (off >= 0)
		snprintf(at, sizeof(at), "byte offset %lld", (long long)off);
	else
		snprintf(at, sizeof(at), "event %llu", (unsigned long long)x->stats.events);
	const char *kind = d->code == EV_NAME                                      ? "name"
			   : d->code == EV_COUNTER                                 ? "counter"
			   : d->code == EV_TASK_BEGIN || d->code == EV_FRAME_BEGIN ? "begin"
										   : "end";
	snprintf(x->csv_warning, sizeof(x->csv_warning), "%s: USER %u (VTune CSV %s) at %llu ns: %s", at, d->code, kind,
		 (unsigned long long)d->time_ns, what);
}

static int malformed(tk_export *x, const tk_kev_decoded *d, const char *what)
{
	x->stats.csv_malformed++;
	csv_warn(x, d, what);
	return 0;
}

/* ---- names ---------------------------------------------------------------------------------- */

static struct kname *kname_slot(const struct tk__csv_model *m, uint32_t id)
{
	size_t h = (id * 2654435761u) & m->names_mask;
	while (m->names[h].name != NULL && m->names[h].id != id)
		h = (h + 1) & m->names_mask;
	return &m->names[h];
}

static tk__csv_name *kname(const struct tk__csv_model *m, uint32_t id)
{
	return m->names != NULL ? kname_slot(m, id)->name : NULL;
}

static int name_define(tk_export *x, struct tk__csv_model *m, uint32_t id, const char *s, size_t len)
{
	if ((m->n_names + 1) * 2 > m->names_mask) {
		size_t nm = m->names_mask ? m->names_mask * 2 + 1 : 255;
		struct kname *nk = calloc(nm + 1, sizeof(*nk)), *old = m->names;
		size_t old_mask = m->names_mask;
		if (nk == NULL)
			return tk__export_error(x, TK_ENOMEM, "out of memory for VTune CSV names");
		m->names = nk;
		m->names_mask = nm;
		for (size_t i = 0; old != NULL && i <= old_mask; i++)
			if (old[i].name != NULL)
				*kname_slot(m, old[i].id) = old[i];
		free(old);
	}
	tk__csv_name *n = malloc(sizeof(*n) + len + 1);
	if (n == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory for VTune CSV names");
	n->refs = 1;
	n->len = (uint32_t)len;
	n->utf8 = tk__utf8_valid(s, len);
	n->hash = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		n->hash = (n->hash ^ (unsigned char)s[i]) * 0x100000001b3ull;
	n->fmt_id[0] = n->fmt_id[1] = 0;
	memcpy(n->s, s, len);
	n->s[len] = '\0';
	struct kname *k = kname_slot(m, id);
	if (k->name != NULL)
		name_unref(k->name); /* redefined: intervals open under the old text keep it */
	else
		m->n_names++;
	k->id = id;
	k->name = n;
	return 0;
}

/* ---- tracks and lanes ----------------------------------------------------------------------- */

/* cname's hash made once (tk__csv_name.hash), not at every sample */
static uint64_t set_hash(unsigned kind, unsigned has_pid, int32_t pid, int32_t tid, const tk__csv_name *cname,
			 unsigned inst)
{
	uint64_t h = (((uint64_t)kind << 40 | (uint64_t)has_pid << 36 | (uint64_t)inst << 34) ^
		      ((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid)) *
		     0x9e3779b97f4a7c15ull;
	if (cname != NULL)
		h = (h ^ cname->hash) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* The track of (kind, pid, tid) or of counter cname (made on first use); *is_new set when
 * made now. NULL: out of memory (error set). */
static struct lane_set *set_get(tk_export *x, struct tk__csv_model *m, unsigned kind, unsigned has_pid, int32_t pid,
				int32_t tid, const tk__csv_name *cname, unsigned inst, int *is_new)
{
	uint64_t h = set_hash(kind, has_pid, pid, tid, cname, inst);
	*is_new = 0;
	if (m->sets != NULL) {
		for (struct lane_set *s = m->sets[h & m->sets_mask]; s != NULL; s = s->next)
			if (s->key_hash == h && s->kind == kind && s->has_pid == has_pid && s->pid == pid &&
			    s->tid == tid && s->inst == inst &&
			    (cname == NULL ||
			     (s->cname_len == cname->len && memcmp(s->cname, cname->s, cname->len) == 0)))
				return s;
	}
	if ((m->n_sets + 1) > m->sets_mask) {
		size_t nm = m->sets_mask ? m->sets_mask * 2 + 1 : 63;
		struct lane_set **ns = calloc(nm + 1, sizeof(*ns));
		if (ns == NULL)
			goto nomem;
		for (size_t i = 0; m->sets != NULL && i <= m->sets_mask; i++) {
			for (struct lane_set *s = m->sets[i], *next; s != NULL; s = next) {
				next = s->next;
				s->next = ns[s->key_hash & nm];
				ns[s->key_hash & nm] = s;
			}
		}
		free(m->sets);
		m->sets = ns;
		m->sets_mask = nm;
	}
	struct lane_set *s = calloc(1, sizeof(*s));
	if (s == NULL)
		goto nomem;
	if (cname != NULL && (s->cname = strdup(cname->s)) == NULL) {
		free(s);
		goto nomem;
	}
	s->key_hash = h;
	s->cname_len = cname != NULL ? cname->len : 0;
	s->kind = (uint8_t)kind;
	s->has_pid = (uint8_t)has_pid;
	s->inst = (uint8_t)inst;
	s->pid = pid;
	s->tid = tid;
	s->track = kind == 2 ? m->n_counter_tracks++ : m->n_iv_tracks++;
	s->next = m->sets[h & m->sets_mask];
	m->sets[h & m->sets_mask] = s;
	m->n_sets++;
	*is_new = 1;
	return s;
nomem:
	tk__export_error(x, TK_ENOMEM, "out of memory for VTune CSV tracks");
	return NULL;
}

/* Takes the lowest free lane of s; UINT32_MAX: out of memory. */
static uint32_t lane_take(struct lane_set *s)
{
	if (s->n_freed > 0) { /* the heap's top, then the last element sifted down from the top */
		uint32_t lane = s->freed[0], last = s->freed[--s->n_freed], i = 0;
		for (;;) {
			uint32_t c = 2 * i + 1;
			if (c >= s->n_freed)
				break;
			if (c + 1 < s->n_freed && s->freed[c + 1] < s->freed[c])
				c++;
			if (last <= s->freed[c])
				break;
			s->freed[i] = s->freed[c];
			i = c;
		}
		if (s->n_freed > 0)
			s->freed[i] = last;
		return lane;
	}
	if (s->n_lanes >= MAX_LANES - 1)
		return MAX_LANES - 1; /* shared (see MAX_LANES) */
	if (s->n_lanes == s->cap_freed) { /* room for every lane given out to be freed */
		uint32_t nc = s->cap_freed ? s->cap_freed * 2 : 16;
		uint32_t *f = realloc(s->freed, (size_t)nc * sizeof(*f));
		if (f == NULL)
			return UINT32_MAX;
		s->freed = f;
		s->cap_freed = nc;
	}
	return s->n_lanes++;
}

static void lane_free(struct lane_set *s, uint32_t lane)
{
	if (lane >= s->n_lanes) /* the shared lane stays taken */
		return;
	uint32_t i = s->n_freed++;
	while (i > 0 && s->freed[(i - 1) / 2] > lane) {
		s->freed[i] = s->freed[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->freed[i] = lane;
}

/* ---- open intervals ------------------------------------------------------------------------- */

static size_t open_hash(uint32_t id, size_t mask)
{
	return (id * 2654435761u) & mask;
}

/* The open interval of id, or NULL. */
static struct open_iv *open_find(struct tk__csv_model *m, uint32_t id)
{
	if (m->open == NULL)
		return NULL;
	for (size_t h = open_hash(id, m->open_mask); m->open[h].used; h = (h + 1) & m->open_mask)
		if (m->open[h].id == id)
			return &m->open[h];
	return NULL;
}

/* A free slot for id (not open); NULL: out of memory. */
static struct open_iv *open_add(struct tk__csv_model *m, uint32_t id)
{
	if ((m->n_open + 1) * 2 > m->open_mask) {
		size_t nm = m->open_mask ? m->open_mask * 2 + 1 : 255;
		struct open_iv *no = calloc(nm + 1, sizeof(*no));
		if (no == NULL)
			return NULL;
		for (size_t i = 0; m->open != NULL && i <= m->open_mask; i++) {
			if (!m->open[i].used)
				continue;
			size_t h = open_hash(m->open[i].id, nm);
			while (no[h].used)
				h = (h + 1) & nm;
			no[h] = m->open[i];
		}
		free(m->open);
		m->open = no;
		m->open_mask = nm;
	}
	size_t h = open_hash(id, m->open_mask);
	while (m->open[h].used)
		h = (h + 1) & m->open_mask;
	memset(&m->open[h], 0, sizeof(m->open[h]));
	m->open[h].used = 1;
	m->open[h].id = id;
	m->n_open++;
	return &m->open[h];
}

/* Removes o (backward-shift deletion of linear probing), its name and lane released. */
static void open_remove(struct tk__csv_model *m, struct open_iv *o)
{
	size_t i = (size_t)(o - m->open), j = i;

	name_unref(o->name);
	lane_free(o->lanes, o->lane);
	m->open[i].used = 0;
	m->n_open--;
	for (;;) {
		j = (j + 1) & m->open_mask;
		if (!m->open[j].used)
			break;
		size_t h = open_hash(m->open[j].id, m->open_mask);
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			m->open[i] = m->open[j];
			m->open[j].used = 0;
			i = j;
		}
	}
}

/* ---- events ----------------------------------------------------------------------------------- */

static uint32_t word(const tk_kev_decoded *d, unsigned i)
{
	uint32_t v = d->data[i];
	return d->swap ? __builtin_bswap32(v) : v;
}

static int begin(tk_export *x, struct tk__csv_model *m, const tk_kev_decoded *d, tk__csv_name *name, uint32_t flags)
{
	uint32_t id = word(d, 3);
	struct open_iv *o = open_find(m, id);
	int is_new;

	if (o != NULL) { /* as tracecsv export: the first is dropped */
		x->stats.csv_begun_twice++;
		open_remove(m, o);
	}
	unsigned kind = d->code == EV_FRAME_BEGIN ? TK__IV_FRAME : TK__IV_TASK;
	unsigned has_pid = (flags & F_PID) != 0, has_tid = kind == TK__IV_TASK && (flags & F_TID) != 0;
	int32_t pid = has_pid ? (int32_t)word(d, 1) : 0, tid = has_tid ? (int32_t)word(d, 2) : 0;
	struct lane_set *s = set_get(x, m, kind, has_pid, pid, tid, NULL, 0, &is_new);
	if (s == NULL)
		return TK_ENOMEM;
	uint32_t lane = lane_take(s);
	if (lane == UINT32_MAX || (o = open_add(m, id)) == NULL) {
		if (lane != UINT32_MAX)
			lane_free(s, lane);
		return tk__export_error(x, TK_ENOMEM, "out of memory for open VTune CSV intervals");
	}
	o->name_id = flags >> NAME_SHIFT;
	o->kind = (uint8_t)kind;
	o->has_pid = (uint8_t)has_pid;
	o->has_tid = (uint8_t)has_tid;
	o->pid = pid;
	o->tid = tid;
	o->lanes = s;
	o->lane = lane;
	o->begin_ns = d->time_ns;
	o->name = name;
	name->refs++;
	return 0;
}

static int end(tk_export *x, struct tk__csv_model *m, const tk_kev_decoded *d, uint32_t flags)
{
	struct open_iv *o = open_find(m, word(d, 1));
	if (o == NULL || o->name_id != flags >> NAME_SHIFT) {
		x->stats.csv_unmatched_ends++;
		return 0;
	}
	tk__interval iv = { .kind = o->kind,
			    .has_pid = o->has_pid,
			    .has_tid = o->has_tid,
			    .pid = o->pid,
			    .tid = o->tid,
			    .id = o->id,
			    .lane = o->lane,
			    .track = o->lanes->track,
			    .begin_ns = o->begin_ns,
			    .end_ns = d->time_ns < o->begin_ns ? o->begin_ns : d->time_ns,
			    .name = o->name };
	x->stats.csv_intervals++;
	x->stats.slices++;
	int rc = x->fmt->interval != NULL ? x->fmt->interval(x, &iv) : 0;
	open_remove(m, o);
	return rc;
}

static int sample(tk_export *x, struct tk__csv_model *m, const tk_kev_decoded *d, tk__csv_name *name, uint32_t flags)
{
	tk__csv_sample c;
	uint64_t bits = word(d, 3) | (uint64_t)word(d, 4) << 32;

	memset(&c, 0, sizeof(c));
	c.has_pid = (flags & F_PID) != 0;
	c.pid = c.has_pid ? (int32_t)word(d, 1) : 0;
	c.tid = (flags & F_TID) ? (int32_t)word(d, 2) : 0;
	c.inst = (flags & F_INST) != 0;
	c.is_double = (flags & F_FLOAT) != 0;
	if (c.is_double)
		memcpy(&c.d, &bits, sizeof(c.d));
	else
		c.i = (int64_t)bits;
	c.ns = d->time_ns;
	c.name = name;
	struct lane_set *s = set_get(x, m, 2, c.has_pid, c.pid, 0, name, c.inst, &c.is_new);
	if (s == NULL)
		return TK_ENOMEM;
	c.track = s->track;
	x->stats.counters++;
	return x->fmt->csv_sample != NULL ? x->fmt->csv_sample(x, &c) : 0;
}

int tk__export_csv_event(tk_export *x, const tk_kev_decoded *d)
{
	struct tk__csv_model *m = x->csv;
	unsigned need;

	if (m == NULL && (m = x->csv = calloc(1, sizeof(*m))) == NULL)
		return tk__export_error(x, TK_ENOMEM, "out of memory");
	/* words each event needs (docs/vtune-csv.md): a name event one and its text */
	switch (d->code) {
	case EV_NAME:
		need = 2;
		break;
	case EV_TASK_BEGIN:
	case EV_FRAME_BEGIN:
		need = 4;
		break;
	case EV_COUNTER:
		need = 5;
		break;
	default:
		need = 2;
		break;
	}
	if (d->data == NULL || d->len < need)
		return malformed(x, d,
				 d->code == EV_NAME && d->len == 1 ? "no name after the name number (truncated)"
								   : "payload too short");
	if (d->code == EV_NAME) {
		uint32_t id = word(d, 0);
		const char *s = (const char *)(d->data + 1);
		size_t cap = (size_t)(d->len - 1) * 4, len = strnlen(s, cap);
		if (id >= MAX_NAMES)
			return malformed(x, d, "name number above 2^28");
		if (len == cap)
			return malformed(x, d, "name not NUL-terminated (truncated)");
		if (len == 0)
			return malformed(x, d, "empty name");
		return name_define(x, m, id, s, len);
	}
	uint32_t flags = word(d, 0);
	tk__csv_name *name = kname(m, flags >> NAME_SHIFT);
	if (name == NULL) {
		x->stats.csv_unnamed++;
		csv_warn(x, d, "name number never defined before it");
		return 0;
	}
	switch (d->code) {
	case EV_TASK_BEGIN:
	case EV_FRAME_BEGIN:
		return begin(x, m, d, name, flags);
	case EV_COUNTER:
		return sample(x, m, d, name, flags);
	default:
		return end(x, m, d, flags);
	}
}

void tk__export_csv_finish(tk_export *x)
{
	if (x->csv != NULL)
		x->stats.csv_open_at_end += x->csv->n_open;
}
