/* SPDX-License-Identifier: MIT */
/*
 * A session's logger side (tracekit/collect.h, "A session's logger side"): a thread that
 * waits on the session's futex (with a timeout: no polling), drains the buffers the
 * attached processes queue into a merge (tk_collect_merge) on the collector's time line,
 * and notices the death of an attached process (its pid gone, reused, or a zombie): its
 * WRITING buffers are read up to `committed`, a PROCESS PROCDESTROY is added for it and its
 * registry slot is marked EXITED. Also what the kernel collector needs from the session's
 * configuration in daemon mode (the classes a program enabled, the static filter), and the
 * recovery of a region whose logger died.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "session/session_layout.h"
#include "tracekit/collect.h"
#include "tracekit/session.h"

struct tk_collect_session {
	tk_session *s;
	tk_collect_drain *drain;
	tk_collect_merge *merge; /* NULL: events are read and dropped */
	pthread_t thread;
	int running;
	_Atomic int quit;
	_Atomic uint32_t change; /* bumped when the session's started state changes: a futex word */
	int last_started;
	uint32_t epoch0; /* the start epoch when opened: a START since moves it */
	unsigned wait_ms;
	int procdestroy, obey_config;
	/* read by the caller's thread while the drain thread counts; the merge itself is the
	 * drain thread's alone until tk_collect_session_finish() */
	_Atomic uint64_t user_slots; /* slots handed to the merge */
	_Atomic uint64_t deaths_n;
	_Atomic int err_n;
	uint64_t last_reap_ns;
};

/* ---- one round -------------------------------------------------------------------------- */

static int add_event(void *ud, const traceevent_t *slots, size_t n, uint64_t t_ns, int32_t pid, int32_t tid)
{
	tk_collect_session *cs = ud;
	int rc = TK_OK;

	if (cs->merge == NULL)
		return 0;
	rc = tk_collect_merge_add(cs->merge, slots, n, t_ns, pid, tid);
	if (rc == TK_OK)
		atomic_fetch_add_explicit(&cs->user_slots, n, memory_order_relaxed);
	return rc == TK_OK ? 0 : rc;
}

/* Before a drained buffer goes back to the writers: what it held is written out (a logger
 * killed now loses none of it; the region no longer has it once given back). */
static int sync_spool(void *ud)
{
	tk_collect_session *cs = ud;

	return cs->merge != NULL ? tk_collect_merge_flush(cs->merge) : TK_OK;
}

/* A process the registry says is attached has ended: gone, its pid reused (another start
 * time), or a zombie (it can write nothing more). */
static int process_dead(const tk_session_process_info *info)
{
	char path[64], stat[512];
	FILE *f;
	const char *p;
	size_t n;

	if (!tk_session_process_alive(info))
		return 1;
	snprintf(path, sizeof(path), "/proc/%u/stat", info->pid);
	if ((f = fopen(path, "re")) == NULL)
		return 1;
	n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	p = strrchr(stat, ')');
	return p != NULL && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

struct dead_ctx {
	tk_collect_session *cs;
	int err;
};

/* A buffer a dead process left (WRITING up to committed, or QUEUED outside the queue), in the
 * order it took them; given back by tk_session_collect_dead(). */
static void dead_buffer(const void *buf, uint32_t n_records, uint32_t idx, const tk_pool_desc *d, void *ctx)
{
	struct dead_ctx *dc = ctx;
	int rc;

	(void)idx;
	if (dc->err != TK_OK)
		return;
	rc = tk_collect_drain_records(dc->cs->drain, buf, n_records, d, add_event, dc->cs);
	if (rc >= 0)
		rc = sync_spool(dc->cs); /* tk_session_collect_dead() gives it back next */
	if (rc < 0)
		dc->err = rc;
}

static int reap_dead(tk_collect_session *cs)
{
	uint32_t i, n = tk_session_n_slots(cs->s);
	int rc;

	tk_session_reap_stuck(cs->s); /* slots of processes killed while they registered */
	for (i = 0; i < n; i++) {
		tk_session_process_info info;
		if (tk_session_process(cs->s, i, &info) != TK_OK || info.state != TK_SESSION_ATTACHED)
			continue;
		if (!process_dead(&info))
			continue;
		/* its queued buffers first (they are older than what it was writing); a cell it
		 * claimed but never published (killed while queueing) would hide the rest of the
		 * queue: skipped, its buffer stays QUEUED outside the queue, found below */
		do {
			if ((rc = tk_collect_drain_queued(cs->drain, add_event, cs)) < 0)
				return rc;
		} while (tk_pool_skip_stuck(tk_session_pool(cs->s)) == 1);
		struct dead_ctx dc = { cs, TK_OK };
		if ((rc = tk_session_collect_dead(cs->s, info.pid, dead_buffer, &dc)) < 0)
			return rc;
		if (dc.err != TK_OK)
			return dc.err;
		if (cs->merge != NULL && cs->procdestroy &&
		    (!cs->obey_config ||
		     tk_collect_session_enabled(cs->s, _TRACE_MAKE_CODE(0, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_DESTROY_P)))) {
			uint64_t t = tk_clock_ns();
			rc = tk_collect_merge_add_procdestroy(cs->merge, 0, t, (int32_t)info.pid);
			if (rc == TK_OK)
				atomic_fetch_add_explicit(&cs->user_slots, 1, memory_order_relaxed);
			if (rc != TK_OK)
				return rc;
		}
		tk_session_reap(cs->s, info.pid);
		atomic_fetch_add_explicit(&cs->deaths_n, 1, memory_order_relaxed);
	}
	return TK_OK;
}

static void note_started(tk_collect_session *cs)
{
	int started = tk_session_started(cs->s);

	if (started != cs->last_started) {
		cs->last_started = started;
		atomic_fetch_add(&cs->change, 1);
		syscall(SYS_futex, (uint32_t *)&cs->change, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	}
}

static int round_once(tk_collect_session *cs, int force_reap)
{
	int rc = tk_collect_drain_queued(cs->drain, add_event, cs);
	uint64_t now = tk_clock_ns();

	note_started(cs);
	/* deaths are looked for at most every 20 ms (a /proc read per attached process): a
	 * busy session wakes the drain far more often than that */
	if (rc >= 0 && (force_reap || now - cs->last_reap_ns >= 20000000ull)) {
		cs->last_reap_ns = now;
		rc = reap_dead(cs);
	}
	if (rc >= 0 && cs->merge != NULL) {
		/* what was drained is on disk before the next wait: a logger killed now keeps it */
		tk_collect_merge_flush(cs->merge);
	}
	return rc < 0 ? rc : TK_OK;
}

static void *drain_thread(void *arg)
{
	tk_collect_session *cs = arg;

	while (!atomic_load(&cs->quit)) {
		int rc;
		tk_session_wait(cs->s, cs->wait_ms);
		if (atomic_load(&cs->quit))
			break;
		if ((rc = round_once(cs, 0)) != TK_OK) {
			atomic_store(&cs->err_n, rc);
			break;
		}
	}
	return NULL;
}

/* ---- the handle --------------------------------------------------------------------------- */

int tk_collect_session_open(tk_collect_session **out, tk_session *s, const tk_collect_session_config *cfg)
{
	tk_collect_session *cs;
	tk_collect_drain_config dc;
	sigset_t all, old;
	int rc;

	if (out == NULL)
		return TK_EINVAL;
	*out = NULL;
	if (s == NULL || cfg == NULL || cfg->size < sizeof(*cfg))
		return TK_EINVAL;
	if ((cs = calloc(1, sizeof(*cs))) == NULL)
		return TK_ENOMEM;
	cs->s = s;
	cs->merge = cfg->merge;
	cs->wait_ms = cfg->wait_ms ? cfg->wait_ms : 100;
	cs->procdestroy = !cfg->no_procdestroy;
	cs->obey_config = cfg->obey_config;
	memset(&dc, 0, sizeof(dc));
	dc.size = sizeof(dc);
	tk_session_clock(s, &dc.cycles_per_sec, &dc.clock_cycles, &dc.clock_ns);
	dc.skip_classes = cfg->skip_classes;
	dc.before_give = sync_spool;
	if ((rc = tk_collect_drain_new(&cs->drain, tk_session_pool(s), &dc)) != TK_OK) {
		free(cs);
		return rc;
	}
	cs->last_started = tk_session_started(s);
	cs->epoch0 = atomic_load(&tk__session_config(s)->start_epoch);
	if (cfg->thread) {
		/* the thread takes no signal: they stay the caller's */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&cs->thread, NULL, drain_thread, cs);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc != 0) {
			tk_collect_drain_free(cs->drain);
				free(cs);
			return TK_ENOMEM;
		}
		cs->running = 1;
	}
	*out = cs;
	return TK_OK;
}

int tk_collect_session_drain(tk_collect_session *cs)
{
	if (cs->running)
		return TK_ESTATE;
	return round_once(cs, 1);
}

/* Started (want 1): now, or a START came and went since the handle was opened (a program
 * that starts and stops the trace at once is not missed); stopped (want 0): now. */
static int started_as(tk_collect_session *cs, int want)
{
	if (want)
		return tk_session_started(cs->s) ||
		       atomic_load(&tk__session_config(cs->s)->start_epoch) != cs->epoch0;
	return !tk_session_started(cs->s);
}

int tk_collect_session_wait_started(tk_collect_session *cs, int want, unsigned timeout_ms)
{
	struct timespec ts = { (time_t)(timeout_ms / 1000), (long)(timeout_ms % 1000) * 1000000L };
	uint32_t seen = atomic_load(&cs->change);

	if (started_as(cs, want))
		return 1;
	if (cs->running) /* the drain thread bumps `change` when it sees START or STOP */
		syscall(SYS_futex, (uint32_t *)&cs->change, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
	else
		tk_session_wait(cs->s, timeout_ms);
	return started_as(cs, want);
}

void tk_collect_session_get_stats(tk_collect_session *cs, tk_collect_session_stats *st)
{
	uint64_t dropped = 0;

	memset(st, 0, sizeof(*st));
	st->user_slots = atomic_load_explicit(&cs->user_slots, memory_order_relaxed);
	st->deaths = atomic_load_explicit(&cs->deaths_n, memory_order_relaxed);
	st->error = atomic_load(&cs->err_n);
	tk_collect_drain_get_stats(cs->drain, &st->events, &st->buffers, &dropped);
	st->dropped = dropped;
}

/* Every WRITING buffer of a process that lives on (the end of the recording): read up to
 * `committed` and left to it. */
static int peek_living(tk_collect_session *cs)
{
	uint32_t i, n = tk_session_n_slots(cs->s);
	int rc;

	for (i = 0; i < n; i++) {
		tk_session_process_info info;
		if (tk_session_process(cs->s, i, &info) != TK_OK || info.state != TK_SESSION_ATTACHED)
			continue;
		if ((rc = tk_collect_drain_process(cs->drain, (int32_t)info.pid, 0, add_event, cs)) < 0)
			return rc;
	}
	return TK_OK;
}

int tk_collect_session_finish(tk_collect_session *cs)
{
	int rc;
	uint64_t dropped;

	if (cs->running) {
		atomic_store(&cs->quit, 1);
		tk_session_wake(cs->s);
		pthread_join(cs->thread, NULL);
		cs->running = 0;
	}
	if (atomic_load(&cs->err_n) != TK_OK)
		return atomic_load(&cs->err_n);
	rc = round_once(cs, 1);
	if (rc == TK_OK)
		rc = peek_living(cs);
	/* records the writers lost that no buffer reported yet: one DROPPED event */
	dropped = tk_collect_drain_take_dropped(cs->drain);
	if (rc == TK_OK && dropped > 0 && cs->merge != NULL) {
		traceevent_t ev = { _TRACE_MAKE_CODE(0, _TRACE_STRUCT_S, _TRACE_CONTROL_C, _TRACE_CONTROL_DROPPED),
				    { 0, (uint32_t)dropped, (uint32_t)(dropped >> 32) } };
		rc = add_event(cs, &ev, 1, tk_clock_ns(), 0, 0);
	}
	atomic_store(&cs->err_n, rc);
	return rc;
}

void tk_collect_session_close(tk_collect_session *cs)
{
	if (cs == NULL)
		return;
	if (cs->running) {
		atomic_store(&cs->quit, 1);
		tk_session_wake(cs->s);
		pthread_join(cs->thread, NULL);
	}
	tk_collect_drain_free(cs->drain);
	free(cs);
}

/* ---- the configuration, for the kernel's side ------------------------------------------------ */

static int range_any(const struct tk__trace_config *c, const tk_kev_range *r, int wide)
{
	for (unsigned code = r->first; code <= r->last && code < TK_SESS_N_CODES; code++) {
		const _Atomic uint64_t *bits = wide ? c->wide[r->cls] : c->enabled[r->cls];
		if (r->cls < TK_SESS_N_CLASSES &&
		    (atomic_load_explicit(&bits[code >> 6], memory_order_relaxed) >> (code & 63) & 1) &&
		    (!wide || (atomic_load_explicit(&c->enabled[r->cls][code >> 6], memory_order_relaxed) >> (code & 63) & 1)))
			return 1;
	}
	return 0;
}

uint32_t tk_collect_session_classes(tk_session *s, int *wide)
{
	static const unsigned ext[] = { _NTO_TRACE_THREAD, _NTO_TRACE_PROCESS, _NTO_TRACE_SYSTEM, _NTO_TRACE_KERCALL,
					_NTO_TRACE_INT };
	const struct tk__trace_config *c = tk__session_config(s);
	uint32_t classes = 0;
	int any_wide = 0;

	for (size_t k = 0; k < sizeof(ext) / sizeof(ext[0]); k++) {
		tk_kev_range r[4];
		int n = tk_kev_map_class(ext[k], r);
		for (int i = 0; i < n; i++) {
			if (range_any(c, &r[i], 0))
				classes |= TK_COLLECT_CLASS(ext[k]);
			if (range_any(c, &r[i], 1))
				any_wide = 1;
		}
	}
	if (wide != NULL)
		*wide = any_wide;
	return classes;
}

int tk_collect_session_enabled(tk_session *s, uint32_t header)
{
	const struct tk__trace_config *c = tk__session_config(s);
	unsigned cls = _NTO_TRACE_GETEVENT_C(header) >> 10, code = _NTO_TRACE_GETEVENT(header);

	if (cls == (_TRACE_CONTROL_C >> 10))
		return 1; /* DROPPED, TIME: the file's own */
	if (cls == (_TRACE_KER_CALL_C >> 10)) {
		/* Linux system calls have no QNX kernel-call number: the class decides */
		tk_kev_range r[4];
		int n = tk_kev_map_class(_NTO_TRACE_KERCALL, r);
		for (int i = 0; i < n; i++)
			if (range_any(c, &r[i], 0))
				return 1;
		return 0;
	}
	return (int)(atomic_load_explicit(&c->enabled[cls][code >> 6], memory_order_relaxed) >> (code & 63) & 1);
}

/* ---- recovery of an orphaned region ---------------------------------------------------------- */

int tk_collect_session_recover(const char *name, const char *out_path, const tk_kev_header *hdr,
			       tk_collect_recovered *res, char *why, size_t whycap)
{
	tk_session *s = NULL;
	tk_collect_merge *m = NULL;
	tk_collect_session *cs = NULL;
	tk_collect_session_config cfg;
	tk_collect_session_stats st;
	uint32_t i, n;
	int rc;

	if (whycap > 0)
		why[0] = '\0';
	memset(res, 0, sizeof(*res));
	rc = tk_session_open(&s, name, TK_SESSION_RECOVER);
	if (rc != TK_OK) {
		snprintf(why, whycap, "%s", tk_session_errmsg());
		return rc;
	}
	tk_session_logger(s, &res->logger_pid, NULL);
	n = tk_session_n_slots(s);
	for (i = 0; i < n; i++) {
		tk_session_process_info info;
		if (tk_session_process(s, i, &info) == TK_OK && info.state != TK_SESSION_FREE)
			res->processes++;
	}
	if ((rc = tk_collect_merge_new(&m)) != TK_OK)
		goto fail;
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.merge = m;
	if ((rc = tk_collect_session_open(&cs, s, &cfg)) != TK_OK)
		goto fail;
	/* first the buffers the dead logger was reading (off the queue, not given back): the
	 * oldest of what is left */
	if ((rc = tk_collect_drain_stranded(cs->drain, add_event, cs)) < 0)
		goto fail;
	if ((rc = tk_collect_session_finish(cs)) != TK_OK)
		goto fail;
	tk_collect_session_get_stats(cs, &st);
	res->events = tk_collect_merge_count(m);
	res->dropped = st.dropped;
	res->deaths = st.deaths;
	if ((rc = tk_collect_merge_write(m, NULL, 0, out_path, hdr, why, whycap)) != TK_OK)
		goto fail;
	tk_collect_session_close(cs);
	tk_collect_merge_free(m);
	if (tk_session_close(s) != TK_OK) {
		snprintf(why, whycap, "%s", tk_session_errmsg());
		return TK_EIO;
	}
	return TK_OK;
fail:
	if (why[0] == '\0')
		snprintf(why, whycap, "%s", tk_strerror(rc));
	tk_collect_session_close(cs);
	tk_collect_merge_free(m);
	tk_session_abandon(s); /* kept for another try */
	return rc;
}
