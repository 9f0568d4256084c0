/* SPDX-License-Identifier: MIT */
/*
 * The recorder in a session (docs/sessions.md): a process with TRACEKIT_SESSION=<name>, or
 * with neither TRACEKIT_SESSION nor TRACEKIT_LOG set while a logger of its user holds the
 * "default" session, attaches to the session at load and, failing that, on its first
 * TraceEvent(). While attached:
 *   - its threads' buffers come from the session's pool (the logger drains them);
 *   - TraceEvent() reads and writes the session's configuration, so that a START in one
 *     attached process starts the trace in all of them; the emitter reads the modes kept in
 *     the process's registry slot, which whoever changes the configuration recomputes;
 *   - after a START made elsewhere, the process announces itself (its START snapshot, as
 *     TraceEvent(_NTO_TRACE_START) writes it) when it next records: its modes say
 *     "filtered" until then, so that its first event takes the slow path, which catches up;
 *   - ALLOCBUFFER and DEALLOCBUFFER do nothing (the logger owns the buffers); FLUSHBUFFER and
 *     STOP queue the calling thread's partial buffer and wake the logger;
 *   - a fork()ed child (without exec) forgets the parent's buffers without touching them,
 *     and registers as a process of its own before it records anything.
 * A program that starts its own logger (tk_logger_start) or formats its own pool
 * (tk_trace_pool_init) leaves the session (the session drainer's yield).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "trace/trace_internal.h"

static _Atomic int g_first_call_done; /* TraceEvent() tried to attach */
static _Atomic int g_reported;        /* a failure to attach was said */
static _Atomic int g_need_register;   /* a forked child that has not registered yet */
static tk_session *g_left_session;   /* the session left (sd_yield): its region stays mapped */
static _Atomic unsigned char g_child_modes[TRACE_N_CLASSES]; /* all "filtered": the slow path re-registers */
static pthread_once_t g_hooks_once = PTHREAD_ONCE_INIT;
static __thread int tls_flushing; /* the full hook takes no new buffer for a flush */

/* ---- the session as the pool's drainer ----------------------------------------------------- */

static void sd_wake(void *ctx)
{
	tk_session *ss = atomic_load(&tk__trace.sess);

	(void)ctx;
	if (ss != NULL)
		tk_session_wake(ss);
}

void tk__trace_session_flush(void)
{
	tk_session *ss = atomic_load(&tk__trace.sess);

	if (ss == NULL)
		return;
	tls_flushing = 1;
	tk_buffer_flush(tk__trace_buffer_id); /* queued; the thread starts a new one when it next records */
	tls_flushing = 0;
	tk_session_wake(ss);
}

int tk__trace_session_flushing(void)
{
	return tls_flushing;
}

static int sd_flush(void *ctx)
{
	(void)ctx;
	tk__trace_session_flush();
	return TK_OK;
}

static const char *sd_errmsg(void *ctx)
{
	(void)ctx;
	return tk_session_errmsg();
}

static void sd_stopped(void *ctx)
{
	(void)ctx;
	tk__trace_session_flush();
}

static int sd_yield(void *ctx);

static const struct tk__trace_drainer session_drainer = {
	.name = "session",
	.ctx = NULL,
	.wake = sd_wake,
	.flush = sd_flush,
	.errmsg = sd_errmsg,
	.stopped = sd_stopped,
	.yield = sd_yield,
};

/*
 * The program takes the buffers for itself (tk_logger_start, tk_trace_pool_init): the
 * process leaves the session. The calling thread's partial buffer is queued; the other
 * threads' stay WRITING in the region, where the logger finds them when the process ends.
 * The region stays mapped (a thread may still be writing a record into its old buffer).
 */
static int sd_yield(void *ctx)
{
	tk_session *ss;

	(void)ctx;
	tk__trace_session_decline();
	tk__trace_session_flush();
	pthread_mutex_lock(&tk__trace.lock);
	ss = atomic_load(&tk__trace.sess);
	if (ss == NULL) {
		pthread_mutex_unlock(&tk__trace.lock);
		return 0;
	}
	atomic_store(&tk__trace.sess, NULL);
	g_left_session = ss; /* kept (and reachable: no leak reported) for the rest of the process */
	atomic_store(&tk__trace.pool, NULL);
	atomic_store(&tk__trace.cfg, &tk__trace_local_config);
	tk__trace_recompute_modes();
	atomic_store(&tk__trace_modes, tk__trace_mode);
	tk_buffer_discard_all(tk__trace_buffer_id);
	tk__trace_drainer_detach(&session_drainer);
	pthread_mutex_unlock(&tk__trace.lock);
	tk_session_wake(ss);
	return 1;
}

/* ---- fork and exit -------------------------------------------------------------------------- */

static void session_child(void)
{
	unsigned i;

	if (atomic_load(&tk__trace.sess) == NULL)
		return;
	/* Only this thread exists here; another may have held any lock. */
	pthread_mutex_init(&tk__trace.lock, NULL);
	pthread_mutex_init(&tk__trace.handler_lock, NULL);
	tk__trace_tls.tid = 0;
	tk__trace_tls.in_handler = 0;
	tk_buffer_forget_after_fork();
	for (i = 0; i < TRACE_N_CLASSES; i++)
		atomic_store(&g_child_modes[i], TK__TRACE_FILTERED);
	atomic_store(&g_need_register, 1);
	atomic_store(&tk__trace_modes, g_child_modes);
}

static void session_atexit(void)
{
	tk_session *ss = atomic_load(&tk__trace.sess);

	if (ss != NULL)
		tk_session_wake(ss); /* the buffers were queued at exit (buffer.c): the logger drains them */
}

static void hooks_once(void)
{
	pthread_atfork(NULL, NULL, session_child);
	atexit(session_atexit);
}

/* A forked child registers as a process of its own, or records nothing (registry full). */
static void reregister(void)
{
	tk_session *ss;

	pthread_mutex_lock(&tk__trace.lock);
	ss = atomic_load(&tk__trace.sess);
	if (ss != NULL && atomic_exchange(&g_need_register, 0)) {
		int rc = tk_session_register(ss);
		if (rc < 0) {
			atomic_store(&tk__trace.sess, NULL);
			g_left_session = ss; /* the parent's handle: its region stays mapped */
			atomic_store(&tk__trace.pool, NULL);
			atomic_store(&tk__trace.cfg, &tk__trace_local_config);
			tk__trace_recompute_modes();
			atomic_store(&tk__trace_modes, tk__trace_mode);
			tk__trace_drainer_detach(&session_drainer);
		} else {
			struct tk__sess_slot *sl = tk__session_slot(ss);
			atomic_store(&sl->handler_classes, tk__trace_handler_classes());
			tk__session_lock(ss);
			tk__session_changed(ss);
			tk__session_unlock(ss);
			atomic_store(&tk__trace_modes, sl->modes);
		}
	}
	pthread_mutex_unlock(&tk__trace.lock);
}

/* ---- catching up ------------------------------------------------------------------------------ */

void tk__trace_session_catch_up_slow(void)
{
	tk_session *ss;
	struct tk__sess_slot *sl;
	struct tk__trace_config *cfg;
	uint32_t epoch;
	int emit = 0;

	if (atomic_load_explicit(&g_need_register, memory_order_relaxed))
		reregister();
	ss = atomic_load(&tk__trace.sess);
	if (ss == NULL || (sl = tk__session_slot(ss)) == NULL)
		return;
	cfg = tk__session_config(ss);
	if (!atomic_load_explicit(&cfg->started, memory_order_relaxed))
		return;
	epoch = atomic_load_explicit(&cfg->start_epoch, memory_order_acquire);
	if (atomic_load_explicit(&sl->epoch, memory_order_relaxed) == epoch)
		return;
	pthread_mutex_lock(&tk__trace.lock);
	epoch = atomic_load(&cfg->start_epoch);
	if (atomic_load(&tk__trace.sess) == ss && atomic_load(&cfg->started) && atomic_load(&sl->epoch) != epoch) {
		tk__trace_new_session();
		atomic_store(&sl->epoch, epoch);
		emit = atomic_load(&cfg->start_state);
		tk__session_lock(ss);
		tk__session_changed(ss);
		tk__session_unlock(ss);
	}
	pthread_mutex_unlock(&tk__trace.lock);
	if (emit)
		tk__trace_emit_state(); /* (the epoch is ours now: these events pass straight through) */
}

int tk__trace_session_start(int with_state)
{
	tk_session *ss = atomic_load(&tk__trace.sess);
	struct tk__sess_slot *sl = tk__session_slot(ss);
	struct tk__trace_config *cfg = tk__session_config(ss);
	uint32_t epoch;
	int was;

	tk__session_lock(ss);
	was = atomic_load(&cfg->started);
	tk__session_start_locked(ss, with_state);
	epoch = atomic_load(&cfg->start_epoch);
	tk__session_changed(ss);
	tk__session_unlock(ss);
	if (sl != NULL && atomic_load(&sl->epoch) != epoch) {
		tk__trace_new_session();
		atomic_store(&sl->epoch, epoch);
		tk__session_lock(ss);
		tk__session_changed(ss);
		tk__session_unlock(ss);
	}
	tk_session_wake(ss);
	return !was;
}

/* ---- attaching ---------------------------------------------------------------------------------- */

/* The session to attach to: TRACEKIT_SESSION (empty: none), else "default" unless TRACEKIT_LOG is set. */
static const char *wanted(int *explicit_name)
{
	const char *env = secure_getenv(TK_SESSION_ENV);

	if (env != NULL) {
		*explicit_name = 1;
		return env[0] != '\0' ? env : NULL;
	}
	*explicit_name = 0;
	return getenv("TRACEKIT_LOG") != NULL ? NULL : TK_SESSION_DEFAULT;
}

static void attach(void)
{
	int explicit_name, rc;
	const char *name = wanted(&explicit_name);
	tk_session *ss;
	struct tk__sess_slot *sl;

	if (name == NULL || getauxval(AT_SECURE) != 0)
		return; /* a privileged (setuid) process never records through the environment */
	pthread_mutex_lock(&tk__trace.lock);
	if (atomic_load(&tk__trace.sess) != NULL || atomic_load(&tk__trace.pool) != NULL || tk__trace_drainer() != NULL) {
		pthread_mutex_unlock(&tk__trace.lock);
		return; /* the program has buffers of its own, or a logger */
	}
	if (tk__trace_ensure_buffer_id() != 0) {
		pthread_mutex_unlock(&tk__trace.lock);
		return;
	}
	rc = tk_session_open(&ss, name, TK_SESSION_WRITER);
	if (rc != TK_OK) {
		pthread_mutex_unlock(&tk__trace.lock);
		/* the default session is optional; a damaged one, or a named one, is said once */
		if ((explicit_name || rc != TK_ENOENT) && !atomic_exchange(&g_reported, 1))
			fprintf(stderr, "tracekit: %s%s: %s; not recording into it\n",
				explicit_name ? TK_SESSION_ENV "=" : "session ", name, tk_session_errmsg());
		return;
	}
	if (tk__trace_drainer_attach(&session_drainer) != TK_OK) {
		tk_session_close(ss);
		pthread_mutex_unlock(&tk__trace.lock);
		return;
	}
	pthread_once(&g_hooks_once, hooks_once);
	sl = tk__session_slot(ss);
	atomic_store(&tk__trace.cfg, tk__session_config(ss));
	atomic_store(&tk__trace.pool, tk_session_pool(ss));
	atomic_store(&tk__trace.sess, ss);
	atomic_store(&sl->handler_classes, tk__trace_handler_classes());
	tk__session_lock(ss);
	tk__session_changed(ss);
	tk__session_unlock(ss);
	atomic_store(&tk__trace_modes, sl->modes);
	pthread_mutex_unlock(&tk__trace.lock);
}

/* The program takes buffers of its own (tk_logger_start, tk_trace_pool_init): no session is
 * attached later in this process, by the first TraceEvent() those make or any other. */
void tk__trace_session_decline(void)
{
	atomic_store(&g_first_call_done, 1);
}

void tk__trace_session_attach_once(void)
{
	if (__builtin_expect(atomic_load_explicit(&g_first_call_done, memory_order_relaxed), 1))
		return;
	if (atomic_exchange(&g_first_call_done, 1))
		return;
	attach();
}

__attribute__((constructor)) static void session_autoattach(void)
{
	attach();
}
