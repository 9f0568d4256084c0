/* SPDX-License-Identifier: MIT */
/*
 * Tests of the perf_event_open collector (src/collect): real workloads, traced, and their
 * events checked against what the workload knows (its threads, names, states, calls).
 * The privileged tests skip with a printed reason when not root; the unprivileged tier
 * runs as user nobody (65534) in a child process.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>

#include "tk_test.h"
#include "collect/collect_internal.h"
#include "tracekit/collect.h"
#include "tracekit/kev.h"
#include "tracekit/session.h"
#include "tracekit/traceparser.h"

/* ---- recording a workload -------------------------------------------------------------- */

struct ev {
	unsigned cpu, cls, code;
	uint32_t w[160];
	size_t n;
	uint64_t t;
};

struct evs {
	struct ev *v;
	size_t n, cap;
	uint64_t last_t[64];
	int order_ok;
};

static tk_kev_writer *g_writer; /* events are also written to this .kev when set */

static int collect_cb(void *ud, const traceevent_t *s, size_t ns, uint64_t t)
{
	struct evs *e = ud;
	struct ev *x;
	size_t i;
	unsigned flag = _TRACE_GET_STRUCT(s[0].header);

	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 1024;
		e->v = realloc(e->v, e->cap * sizeof(*e->v));
		if (e->v == NULL)
			return -1;
	}
	if (g_writer != NULL && tk_kev_write_raw(g_writer, s, ns) != 0)
		return -1;
	x = &e->v[e->n++];
	memset(x, 0, sizeof(*x) - sizeof(x->w));
	x->cpu = _NTO_TRACE_GETCPU(s[0].header);
	x->cls = TK_KEV_CLASS(s[0].header);
	x->code = TK_KEV_CODE(s[0].header);
	x->t = t;
	x->n = 0;
	/* Slot shape: 1 S, or CB CC... CE, every slot the same time low bits. */
	if (ns == 1 && flag != _TRACE_STRUCT_S)
		e->order_ok = 0;
	if (ns > 1 && (flag != _TRACE_STRUCT_CB || _TRACE_GET_STRUCT(s[ns - 1].header) != _TRACE_STRUCT_CE))
		e->order_ok = 0;
	for (i = 0; i < ns && x->n + 2 <= sizeof(x->w) / sizeof(x->w[0]); i++) {
		if (s[i].data[0] != (uint32_t)t)
			e->order_ok = 0;
		x->w[x->n++] = s[i].data[1];
		x->w[x->n++] = s[i].data[2];
	}
	if (x->cpu < 64) {
		if (t < e->last_t[x->cpu])
			e->order_ok = 0;
		e->last_t[x->cpu] = t;
	}
	return 0;
}

typedef void (*workload_fn)(void);

/* Runs fn in a child that waits on a pipe until the collector is enabled; returns the
 * child's pid and fills *e. rc_out: tk_collect_open's result (the test skips or fails). */
static int trace_child(const tk_collect_config *base, workload_fn fn, struct evs *e, int *rc_out,
                       char *why, size_t whycap, tk_collect_stats *st, int read_during)
{
	tk_collect_config cfg = *base;
	tk_collect *c = NULL;
	int go[2], status = 0, rc;
	pid_t pid;
	char b = 'g';
	int done = 0;

	memset(e, 0, sizeof(*e));
	e->order_ok = 1;
	if (pipe(go) != 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(3);
		close(go[0]);
		fn();
		_exit(0);
	}
	close(go[0]);
	cfg.child_pid = pid;
	rc = tk_collect_open(&c, &cfg, why, whycap);
	*rc_out = rc;
	if (rc != 0) {
		close(go[1]);
		waitpid(pid, &status, 0);
		return pid;
	}
	rc = tk_collect_enable(c);
	if (rc != 0) {
		*rc_out = rc;
		tk_collect_close(c);
		close(go[1]);
		waitpid(pid, &status, 0);
		return pid;
	}
	if (write(go[1], &b, 1) != 1)
		abort();
	close(go[1]);
	while (!done) {
		if (read_during && tk_collect_read(c, 20, collect_cb, e) < 0)
			break;
		if (read_during < 0) {
			usleep(20000); /* no reader until the end */
		} else if (!read_during) { /* a slow reader */
			usleep(100000);
			if (tk_collect_read(c, 0, collect_cb, e) < 0)
				break;
		}
		if (waitpid(pid, &status, WNOHANG) == pid)
			done = 1;
	}
	tk_collect_disable(c);
	while (tk_collect_read(c, 0, collect_cb, e) > 0)
		;
	if (st != NULL)
		tk_collect_get_stats(c, st);
	tk_collect_close(c);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		*rc_out = 1000 + status;
	return pid;
}

static size_t count(const struct evs *e, unsigned cls, unsigned code, long w0, long w1)
{
	size_t i, n = 0;

	for (i = 0; i < e->n; i++)
		if (e->v[i].cls == cls >> 10 && e->v[i].code == code && (w0 < 0 || e->v[i].w[0] == (uint32_t)w0) &&
		    (w1 < 0 || e->v[i].w[1] == (uint32_t)w1))
			n++;
	return n;
}

static const char *ev_str(const struct ev *x)
{
	return (const char *)&x->w[2];
}

/* The tid of the thread of process pid named name (PROCTHREAD_NAME), or -1. */
static long tid_named(const struct evs *e, int pid, const char *name)
{
	size_t i;

	for (i = 0; i < e->n; i++)
		if (e->v[i].cls == _TRACE_PR_TH_C >> 10 && e->v[i].code == _TRACE_PR_TH_NAME_T &&
		    e->v[i].w[0] == (uint32_t)pid && strcmp(ev_str(&e->v[i]), name) == 0)
			return e->v[i].w[1];
	return -1;
}

static int is_root(void)
{
	return geteuid() == 0;
}

#define SKIP_UNLESS_ROOT()                                                                 \
	do {                                                                                   \
		if (!is_root()) {                                                                  \
			printf("SKIP: the privileged tier needs root (or CAP_PERFMON); running as uid %d\n", \
			       (int)geteuid());                                                        \
			skip();                                                                        \
		}                                                                                  \
	} while (0)

/* The traceprinter line of a collected event. */
static const char *line_of(const struct ev *x, unsigned flags)
{
	static char buf[2048];
	tk_kev_event ev;
	unsigned h = _TRACE_MAKE_CODE(x->cpu, x->n > 2 ? _TRACE_STRUCT_CB : _TRACE_STRUCT_S, x->cls << 10, x->code);

	memset(&ev, 0, sizeof(ev));
	ev.header = h;
	ev.time = (unsigned)x->t;
	ev.data = x->w;
	ev.len = (unsigned)x->n;
	tk_kev_format_event(buf, sizeof(buf), flags | TK_KEV_PRINT_NO_NEWLINES, &ev);
	return buf;
}

/* Whether some event of e prints a line containing every one of the strings. */
static int printed(const struct evs *e, unsigned flags, const char *a, const char *b)
{
	size_t i;

	for (i = 0; i < e->n; i++) {
		const char *l = line_of(&e->v[i], flags);
		if (strstr(l, a) != NULL && (b == NULL || strstr(l, b) != NULL))
			return 1;
	}
	return 0;
}

/* ---- workloads ------------------------------------------------------------------------- */

#define ROUNDS 200
static int g_ab[2], g_ba[2];

static void *pong_main(void *arg)
{
	char b;
	int i;

	(void)arg;
	pthread_setname_np(pthread_self(), "pong");
	for (i = 0; i < ROUNDS; i++) {
		if (read(g_ab[0], &b, 1) != 1 || write(g_ba[1], &b, 1) != 1)
			_exit(4);
	}
	return NULL;
}

/* Two threads, "ping" and "pong", pass a byte back and forth through two pipes. */
static void pingpong(void)
{
	pthread_t th;
	char b = 'x';
	int i;

	if (pipe(g_ab) != 0 || pipe(g_ba) != 0)
		_exit(5);
	pthread_setname_np(pthread_self(), "ping");
	if (pthread_create(&th, NULL, pong_main, NULL) != 0)
		_exit(6);
	for (i = 0; i < ROUNDS; i++) {
		if (write(g_ab[1], &b, 1) != 1 || read(g_ba[0], &b, 1) != 1)
			_exit(7);
	}
	pthread_join(th, NULL);
}

/* Checks usable in a child process too (no cmocka there): 0, or 1 after a message. */
#define CHECK(cond)                                                                      \
	do {                                                                                 \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			return 1;                                                                    \
		}                                                                                \
	} while (0)

static int check_pingpong(const struct evs *e, int pid, unsigned blocked)
{
	long pong = tid_named(e, pid, "pong"), ping = tid_named(e, pid, "ping");
	size_t run_ping, run_pong, blk_ping, blk_pong;

	CHECK(e->order_ok);
	CHECK(ping == pid);
	CHECK(pong > 0 && pong != pid);
	CHECK(count(e, _TRACE_PR_TH_C, _TRACE_THREAD_CREATE, pid, pong) == 1);
	run_ping = count(e, _TRACE_PR_TH_C, STATE_RUNNING, pid, ping);
	run_pong = count(e, _TRACE_PR_TH_C, STATE_RUNNING, pid, pong);
	blk_ping = count(e, _TRACE_PR_TH_C, blocked, pid, ping);
	blk_pong = count(e, _TRACE_PR_TH_C, blocked, pid, pong);
	printf("# ping: %zu switch-ins, %zu blocked; pong: %zu, %zu (of %d rounds)\n", run_ping, blk_ping,
	       run_pong, blk_pong, ROUNDS);
	if (blk_pong + blk_ping < ROUNDS / 2) {
		unsigned st;
		for (st = 0; st < STATE_MAX; st++)
			if (count(e, _TRACE_PR_TH_C, st, pid, ping) + count(e, _TRACE_PR_TH_C, st, pid, pong) > 0)
				printf("#   state %u: ping %zu, pong %zu\n", st, count(e, _TRACE_PR_TH_C, st, pid, ping),
				       count(e, _TRACE_PR_TH_C, st, pid, pong));
	}
	/* Every round takes each thread off its CPU about once: blocked in read, or ready
	 * (woken before it could block, or preempted by the partner it just woke, as on one
	 * busy CPU). In every round one of them at least waits for the other: blocked. */
	CHECK(run_pong >= ROUNDS / 2);
	CHECK(run_ping >= ROUNDS / 2);
	CHECK(blk_pong + blk_ping >= ROUNDS / 2);
	CHECK(blk_ping + count(e, _TRACE_PR_TH_C, STATE_READY, pid, ping) + 2 >= run_ping);
	CHECK(blk_pong + count(e, _TRACE_PR_TH_C, STATE_READY, pid, pong) + 2 >= run_pong);
	/* Nothing of pong after its death. */
	{
		size_t i, dead_at = e->n;
		for (i = 0; i < e->n; i++) {
			const struct ev *x = &e->v[i];
			if (x->cls != _TRACE_PR_TH_C >> 10 || x->w[1] != (uint32_t)pong || x->code > STATE_MAX)
				continue;
			if (x->code == STATE_DEAD)
				dead_at = i;
			else
				CHECK(i < dead_at);
		}
	}
	/* Deaths: pong's THDEAD and THDESTROY, then the process's. */
	CHECK(count(e, _TRACE_PR_TH_C, STATE_DEAD, pid, pong) == 1);
	CHECK(count(e, _TRACE_PR_TH_C, _TRACE_THREAD_DESTROY, pid, pong) == 1);
	CHECK(count(e, _TRACE_PR_TH_C, STATE_DEAD, pid, pid) == 1);
	CHECK(count(e, _TRACE_PR_TH_C, _TRACE_PR_TH_DESTROY_P, getpid(), pid) == 1);
	return 0;
}

static void test_pingpong_privileged(void **state)
{
	tk_collect_config cfg = { .size = sizeof(cfg), .tier = TK_COLLECT_TIER_PRIV };
	struct evs e;
	char why[512];
	int rc, pid;

	(void)state;
	SKIP_UNLESS_ROOT();
	pid = trace_child(&cfg, pingpong, &e, &rc, why, sizeof(why), NULL, 1);
	if (rc != 0)
		fail_msg("rc %d: %s", rc, why);
	/* Blocked in read on a pipe: THRECEIVE (docs/collect.md). */
	assert_int_equal(check_pingpong(&e, pid, STATE_RECEIVE), 0);
	/* Woken: THREADY from sched_wakeup. */
	assert_true(count(&e, _TRACE_PR_TH_C, STATE_READY, pid, -1) >= ROUNDS);
	/* traceprinter prints them. */
	assert_true(printed(&e, 0, "THREAD  :THRECEIVE", NULL));
	assert_true(printed(&e, 0, "THREAD  :THCREATE", NULL));
	assert_true(printed(&e, 0, "PROCESS :PROCTHREAD_NAME", "pong"));
	free(e.v);
}

/* ---- many threads ---------------------------------------------------------------------- */

#define N_THREADS 700

static void *nop_main(void *arg)
{
	return arg;
}

static void many_threads(void)
{
	int i;

	for (i = 0; i < N_THREADS; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, nop_main, NULL) != 0 || pthread_join(th, NULL) != 0)
			_exit(9);
	}
}

static void test_many_threads(void **state)
{
	tk_collect_config cfg = { .size = sizeof(cfg), .tier = is_root() ? TK_COLLECT_TIER_PRIV : TK_COLLECT_TIER_UNPRIV };
	struct evs e;
	char why[512];
	int rc, pid;
	size_t created;

	(void)state;
	/* Every thread's life, the thread table growing past its first size and forgetting
	 * the dead. */
	pid = trace_child(&cfg, many_threads, &e, &rc, why, sizeof(why), NULL, 1);
	if (rc != 0)
		fail_msg("rc %d: %s", rc, why);
	assert_true(e.order_ok);
	created = count(&e, _TRACE_PR_TH_C, _TRACE_THREAD_CREATE, pid, -1);
	size_t destroyed = count(&e, _TRACE_PR_TH_C, _TRACE_THREAD_DESTROY, pid, -1);
	assert_true(created >= N_THREADS && created <= N_THREADS + 1);
	if (!TKT_TSAN) {
		/* every thread seen created, then the main thread's end */
		assert_int_equal(destroyed, created + 1);
	} else {
		/* ThreadSanitizer's runtime starts a thread of its own in the child, before the
		 * trace begins or during it, and ends it at exit: seen created or not, and seen
		 * ended (make check saw 701 created and 703 ended) */
		assert_true(destroyed >= created + 1 && destroyed <= N_THREADS + 3);
	}
	assert_int_equal(count(&e, _TRACE_PR_TH_C, STATE_DEAD, pid, -1), destroyed);
	free(e.v);
}

/* ---- an existing process (-p) ------------------------------------------------------- */

static int g_rel[2], g_rel2[2];

static void *sleeper_main(void *arg)
{
	char b;

	(void)arg;
	if (read(g_rel2[0], &b, 1) != 1)
		_exit(10);
	prctl(PR_SET_NAME, "renamed", 0, 0, 0);
	return NULL;
}

static void test_existing_pid(void **state)
{
	tk_collect_config cfg = { .size = sizeof(cfg), .tier = TK_COLLECT_TIER_UNPRIV };
	tk_collect *c = NULL;
	struct evs e;
	char why[512], b = 'r';
	int rc, status = 0, ready[2], done = 0;
	pid_t pid;
	long worker;
	size_t i;

	(void)state;
	assert_int_equal(pipe(g_rel), 0);
	assert_int_equal(pipe(g_rel2), 0);
	assert_int_equal(pipe(ready), 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* Two threads already running before the collector opens. */
		pthread_t th;
		pid_t gc;
		if (pthread_create(&th, NULL, sleeper_main, NULL) != 0 || write(ready[1], "y", 1) != 1)
			_exit(11);
		if (read(g_rel[0], &b, 1) != 1 || write(g_rel2[1], &b, 1) != 1)
			_exit(12);
		pthread_join(th, NULL);
		gc = fork(); /* a child created later: followed too */
		if (gc == 0)
			_exit(0);
		waitpid(gc, NULL, 0);
		_exit(0);
	}
	assert_int_equal(read(ready[0], &b, 1), 1);
	memset(&e, 0, sizeof(e));
	e.order_ok = 1;
	cfg.pids = &pid;
	cfg.n_pids = 1;
	rc = tk_collect_open(&c, &cfg, why, sizeof(why));
	if (rc != 0)
		fail_msg("rc %d: %s", rc, why);
	assert_int_equal(tk_collect_enable(c), 0);
	assert_int_equal(write(g_rel[1], &b, 1), 1);
	while (!done) {
		assert_true(tk_collect_read(c, 20, collect_cb, &e) >= 0);
		if (waitpid(pid, &status, WNOHANG) == pid)
			done = 1;
	}
	tk_collect_disable(c);
	while (tk_collect_read(c, 0, collect_cb, &e) > 0)
		;
	tk_collect_close(c);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	worker = tid_named(&e, pid, "renamed");
	assert_true(worker > 0 && worker != pid);
	assert_int_equal(count(&e, _TRACE_PR_TH_C, STATE_DEAD, pid, worker), 1);
	assert_true(count(&e, _TRACE_PR_TH_C, STATE_RUNNING, pid, worker) >= 1);
	assert_true(count(&e, _TRACE_PR_TH_C, STATE_RUNNING, pid, pid) >= 1);
	/* The grandchild: created (PROCCREATE_NAME with its parent) and destroyed. */
	for (i = 0; i < e.n; i++)
		if (e.v[i].cls == _TRACE_PR_TH_C >> 10 && e.v[i].code == _TRACE_PR_TH_CREATE_P_NAME &&
		    e.v[i].w[0] == (uint32_t)pid)
			break;
	assert_true(i < e.n);
	assert_int_equal(count(&e, _TRACE_PR_TH_C, _TRACE_PR_TH_DESTROY_P, pid, e.v[i].w[1]), 1);
	free(e.v);
	close(g_rel[0]), close(g_rel[1]), close(g_rel2[0]), close(g_rel2[1]), close(ready[0]), close(ready[1]);
}

/* ---- fork and exec ------------------------------------------------------------------- */

static void shell_pipeline(void)
{
	execl("/bin/sh", "sh", "-c", "echo hello | cat > /dev/null", (char *)NULL);
	_exit(127);
}

static void test_fork_exec(void **state)
{
	tk_collect_config cfg = { .size = sizeof(cfg), .tier = is_root() ? TK_COLLECT_TIER_PRIV : TK_COLLECT_TIER_UNPRIV };
	struct evs e;
	char why[512];
	int rc, pid, found_sh = 0, cat_pid = -1, libc_mapped = 0;
	size_t i;

	(void)state;
	pid = trace_child(&cfg, shell_pipeline, &e, &rc, why, sizeof(why), NULL, 1);
	if (rc != 0)
		fail_msg("rc %d: %s", rc, why);
	for (i = 0; i < e.n; i++) {
		const struct ev *x = &e.v[i];
		if (x->cls == _TRACE_PR_TH_C >> 10 && x->code == _TRACE_PR_TH_CREATE_P_NAME) {
			/* The child's exec of sh names it "sh", with its parent (this test). */
			if (x->w[1] == (uint32_t)pid && strcmp(ev_str(x), "sh") == 0 && x->w[0] == (uint32_t)getpid())
				found_sh = 1;
			if (x->w[0] == (uint32_t)pid && strcmp(ev_str(x), "cat") == 0)
				cat_pid = (int)x->w[1];
		}
	}
	assert_true(found_sh);
	assert_true(cat_pid > 0);
	/* cat's process was created (fork: the parent's name), then died. */
	assert_true(count(&e, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, pid, cat_pid) >= 2);
	assert_int_equal(count(&e, _TRACE_PR_TH_C, _TRACE_PR_TH_DESTROY_P, pid, cat_pid), 1);
	/* Its file mappings: MMAP with the path, a libc among them. */
	for (i = 0; i < e.n; i++) {
		const struct ev *x = &e.v[i];
		if (x->cls == _TRACE_SYSTEM_C >> 10 && x->code == _NTO_TRACE_SYS_MMAP && x->w[0] == (uint32_t)cat_pid &&
		    x->n > 12 && strstr((const char *)&x->w[12], "libc") != NULL) {
			assert_true(x->w[1] != 0 || x->w[2] != 0); /* its address */
			assert_true(x->w[3] != 0);                 /* its length */
			libc_mapped = 1;
		}
	}
	assert_true(libc_mapped);
	assert_true(printed(&e, 0, "SYSTEM  :MMAP", "libc"));
	assert_true(printed(&e, 0, "PROCESS :PROCCREATE_NAME", "cat"));
	free(e.v);
}

/* ---- mutex and condition variable ---------------------------------------------------- */

static pthread_mutex_t g_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_flag;

static void *waiter_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "waiter");
	usleep(20000);                /* let the holder take the mutex */
	pthread_mutex_lock(&g_mx);    /* blocks: THMUTEX */
	while (!g_flag)
		pthread_cond_wait(&g_cv, &g_mx); /* blocks: THCONDVAR */
	pthread_mutex_unlock(&g_mx);
	return NULL;
}

static void mutex_condvar(void)
{
	pthread_t th;
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	pthread_setname_np(pthread_self(), "holder");
	pthread_mutex_lock(&g_mx);
	if (pthread_create(&th, NULL, waiter_main, NULL) != 0)
		_exit(6);
	nanosleep(&ts, NULL); /* holding the mutex: THNANOSLEEP */
	pthread_mutex_unlock(&g_mx);
	nanosleep(&ts, NULL); /* the waiter now waits on the condvar */
	pthread_mutex_lock(&g_mx);
	g_flag = 1;
	pthread_cond_signal(&g_cv);
	pthread_mutex_unlock(&g_mx);
	pthread_join(th, NULL); /* glibc's join waits on a futex too */
}

static void test_mutex_condvar(void **state)
{
	tk_collect_config cfg = { .size = sizeof(cfg), .tier = TK_COLLECT_TIER_PRIV };
	struct evs e;
	char why[512];
	int rc, pid;
	long waiter;

	(void)state;
	SKIP_UNLESS_ROOT();
	pid = trace_child(&cfg, mutex_condvar, &e, &rc, why, sizeof(why), NULL, 1);
	if (rc != 0)
		fail_msg("rc %d: %s", rc, why);
	waiter = tid_named(&e, pid, "waiter");
	assert_true(waiter > 0);
	assert_true(count(&e, _TRACE_PR_TH_C, STATE_NANOSLEEP, pid, pid) >= 2);
	assert_true(count(&e, _TRACE_PR_TH_C, STATE_MUTEX, pid, waiter) >= 1);
	assert_true(count(&e, _TRACE_PR_TH_C, STATE_CONDVAR, pid, waiter) >= 1);
	free(e.v);
}

/* ---- system calls -------------------------------------------------------------------- */

static void some_calls(void)
{
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0 || write(fd, "1234567", 7) != 7)
		_exit(8);
	close(fd);
	close(-1); /* fails: EBADF */
}

static const struct ev *find_call(const struct evs *e, int pid, unsigned nr, int exit, size_t from)
{
	size_t i;

	(void)pid;
	for (i = from; i < e->n; i++)
		if (e->v[i].cls == _TRACE_KER_CALL_C >> 10 && e->v[i].code == TK_COLLECT_KERCALL_CODE(nr, exit))
			return &e->v[i];
	return NULL;
}

static void test_syscalls(void **state)
{
	struct evs e;
	char why[512];
	int rc, pid, wide;

	(void)state;
	SKIP_UNLESS_ROOT();
	for (wide = 0; wide <= 1; wide++) {
		tk_collect_config cfg = { .size = sizeof(cfg), .tier = TK_COLLECT_TIER_PRIV, .wide = wide,
		                          .classes = TK_COLLECT_CLASS(_NTO_TRACE_KERCALL) |
		                                     TK_COLLECT_CLASS(_NTO_TRACE_THREAD) };
		const struct ev *x;
		size_t i, nw = 0;

		pid = trace_child(&cfg, some_calls, &e, &rc, why, sizeof(why), NULL, 1);
		if (rc != 0)
			fail_msg("rc %d: %s", rc, why);
		(void)pid;
		assert_true(e.order_ok);
		/* write(fd, "1234567", 7) = 7: entry and exit. */
		for (i = 0; i < e.n; i++) {
			x = &e.v[i];
			if (x->cls != _TRACE_KER_CALL_C >> 10 || x->code != TK_COLLECT_KERCALL_CODE(SYS_write, 0))
				continue;
			if (!wide) {
				assert_int_equal(x->n, 2);
				if (x->w[0] >= 3 && x->w[0] < 1024)
					nw++;
			} else {
				assert_true(x->n >= 13);
				assert_int_equal(x->w[0], SYS_write);
				if (x->w[5] == 7 && x->w[6] == 0)
					nw++;
			}
		}
		assert_true(nw >= 1);
		x = find_call(&e, pid, SYS_write, 1, 0);
		assert_non_null(x);
		assert_int_equal(x->w[wide ? 1 : 0], 7);
		/* close(-1) = -EBADF */
		x = NULL;
		for (i = 0; i < e.n; i++) {
			const struct ev *y = &e.v[i];
			if (y->cls == _TRACE_KER_CALL_C >> 10 && y->code == TK_COLLECT_KERCALL_CODE(SYS_close, 1) &&
			    (int32_t)y->w[wide ? 1 : 0] == -EBADF)
				x = y;
		}
		assert_non_null(x);
		assert_int_equal(x->w[wide ? 2 : 1], 0xffffffffu);
		/* Printed with the Linux names (TRACEKIT_KERCALLS=linux-x86_64). */
		printf("# %s\n", line_of(x, TK_KEV_PRINT_LINUX_X86_64));
		assert_true(printed(&e, TK_KEV_PRINT_LINUX_X86_64, "KER_EXIT:close/3", "ret:-9"));
		assert_true(printed(&e, TK_KEV_PRINT_LINUX_X86_64, "KER_CALL:write/1", wide ? "a2:0x7" : "a0:"));
		x = find_call(&e, pid, SYS_write, 0, 0);
		printf("# %s\n", line_of(x, TK_KEV_PRINT_LINUX_X86_64));
		free(e.v);
	}
}

/* A .kev of kernel events with the collector's header attributes, printed by traceprinter:
 * Linux system-call names, thread states, names. */
static void attr_cb(void *ud, const char *key, const char *val)
{
	tk_kev_attr *a = ud;

	while (a->key != NULL)
		a++;
	a->key = strdup(key);
	a->value = strdup(val);
}

/* The decoder names them too (tk_traceparser_decode with the file's TRACEKIT_KERCALLS). */
static int g_decoded_write;

static int decode_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	tk_kev_decoded d;

	(void)ud;
	if (tk_traceparser_decode(st, h, t, buf, len, 0, &d) == 0 && strcmp(d.event_name, "write") == 0 &&
	    d.number == SYS_write)
		g_decoded_write++;
	return 0;
}

static void test_traceprinter_prints(void **state)
{
	tk_collect_config cfg = { .size = sizeof(cfg), .tier = TK_COLLECT_TIER_PRIV,
	                          .classes = TK_COLLECT_CLASS(_NTO_TRACE_KERCALL) | TK_COLLECT_DEFAULT_CLASSES };
	tk_kev_attr attrs[8];
	tk_kev_header hdr;
	tk_collect *probe = NULL;
	struct evs e;
	char why[512], cmd[1024], *out;
	const char *path = tkt_path("collect.kev"), *txt = tkt_path("collect.txt");
	int rc, rc2;
	size_t i, len;

	(void)state;
	SKIP_UNLESS_ROOT();
	memset(attrs, 0, sizeof(attrs));
	cfg.child_pid = getpid();
	rc = tk_collect_open(&probe, &cfg, why, sizeof(why));
	if (rc != 0)
		fail_msg("rc %d: %s", rc, why);
	tk_collect_header_attrs(probe, attr_cb, attrs);
	tk_collect_close(probe);
	assert_string_equal(attrs[0].key, "TRACEKIT_KERCALLS");
	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u;
	hdr.attrs = attrs;
	for (hdr.n_attrs = 0; attrs[hdr.n_attrs].key != NULL; hdr.n_attrs++)
		;
	assert_int_equal(tk_kev_writer_open(&g_writer, path, &hdr, TK_KEV_NO_AUTO_TIME), 0);
	trace_child(&cfg, some_calls, &e, &rc, why, sizeof(why), NULL, 1);
	rc2 = tk_kev_writer_close(g_writer);
	g_writer = NULL;
	if (rc != 0)
		fail_msg("rc %d: %s", rc, why);
	assert_int_equal(rc2, 0);
	snprintf(cmd, sizeof(cmd), "%s %s > %s", TK_TRACEPRINTER, path, txt);
	assert_int_equal(system(cmd), 0);
	out = tkt_read_file(txt, &len);
	assert_non_null(out);
	assert_non_null(strstr(out, "TRACEKIT_KERCALLS:: linux-"));
	assert_non_null(strstr(out, "KER_CALL:write/1 a0:"));
	assert_non_null(strstr(out, "KER_EXIT:close/3 ret:-9"));
	assert_non_null(strstr(out, "THREAD  :THRUNNING"));
	assert_non_null(strstr(out, "THREAD  :THDEAD"));
	{
		struct traceparser_state *st = traceparser_init(NULL);
		assert_non_null(st);
		tk_traceparser_cs_internal(st, NULL, decode_cb, 2, 0, 1023);
		assert_int_equal(traceparser(st, NULL, path), 0);
		traceparser_destroy(&st);
		assert_true(g_decoded_write >= 2); /* entry and exit */
	}
	assert_non_null(strstr(out, "PROCESS :PROCDESTROY"));
	free(out);
	free(e.v);
	for (i = 0; attrs[i].key != NULL; i++) {
		free((void *)attrs[i].key);
		free((void *)attrs[i].value);
	}
}

/* ---- interrupts ---------------------------------------------------------------------- */

static void test_interrupts(void **state)
{
	tk_collect_config cfg = { .size = sizeof(cfg), .tier = TK_COLLECT_TIER_PRIV, .system_wide = 1,
	                          .classes = TK_COLLECT_CLASS(_NTO_TRACE_INT) };
	tk_collect *c = NULL;
	struct evs e;
	char why[512];
	int rc, i, fd;
	size_t entries, exits;
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	(void)state;
	SKIP_UNLESS_ROOT();
	memset(&e, 0, sizeof(e));
	e.order_ok = 1;
	rc = tk_collect_open(&c, &cfg, why, sizeof(why));
	if (rc != 0)
		fail_msg("rc %d: %s", rc, why);
	assert_int_equal(tk_collect_enable(c), 0);
	fd = open(tkt_path("irq.dat"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	for (i = 0; i < 30; i++) {
		char blk[4096] = { 0 };
		/* Disk writes (the device's interrupts), timer and soft interrupts meanwhile. */
		if (write(fd, blk, sizeof(blk)) != (ssize_t)sizeof(blk) || fdatasync(fd) != 0)
			fail_msg("writing %s: %s", tkt_path("irq.dat"), strerror(errno));
		nanosleep(&ts, NULL);
		rc = tk_collect_read(c, 0, collect_cb, &e);
		if (rc < 0)
			fail_msg("read: %d", rc);
	}
	close(fd);
	tk_collect_disable(c);
	while (tk_collect_read(c, 0, collect_cb, &e) > 0)
		;
	tk_collect_close(c);
	entries = count(&e, _TRACE_INT_C, _TRACE_INT_ENTRY, -1, -1);
	exits = count(&e, _TRACE_INT_C, _TRACE_INT_EXIT, -1, -1);
	if (entries == 0) {
		printf("SKIP: no interrupt occurred in 300 ms\n");
		free(e.v);
		skip();
	}
	printf("# %zu interrupt entries, %zu exits\n", entries, exits);
	assert_true(e.order_ok);
	assert_true(exits > 0 && exits + 64 >= entries && entries + 64 >= exits);
	assert_true(printed(&e, 0, "INT_ENTR:", NULL));
	/* A hardware interrupt's handler is named once (SYSTEM IRQ_NAME); soft ones are
	 * 0x10000 + vector. */
	for (i = 0; i < (int)e.n; i++) {
		const struct ev *x = &e.v[i];
		if (x->cls == _TRACE_INT_C >> 10 && x->code == _TRACE_INT_ENTRY && x->w[0] < 0x10000) {
			size_t j, named = 0;
			const char *name = "(no name)";
			for (j = 0; j < e.n; j++)
				if (e.v[j].cls == _TRACE_SYSTEM_C >> 10 && e.v[j].code == 33 && e.v[j].w[0] == x->w[0]) {
					named++;
					name = ev_str(&e.v[j]);
				}
			printf("# IRQ %u: %s\n", x->w[0], name);
			assert_int_equal(named, 1);
			break;
		}
	}
	assert_true(printed(&e, 0, "INT_EXIT:", NULL));
	free(e.v);
}

/* ---- the unprivileged tier, as nobody ------------------------------------------------ */

static volatile unsigned long g_spin;

static __attribute__((noinline)) void spin_inner(void)
{
	g_spin++;
}

/* 100 ms of CPU work, for cpu-clock samples. */
static void spin(void)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		int i;
		for (i = 0; i < 10000; i++)
			spin_inner();
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 100000000L);
}

static int unpriv_checks(void)
{
	tk_collect_config cfg = { .size = sizeof(cfg), .tier = TK_COLLECT_TIER_UNPRIV };
	tk_collect_config sw = { .size = sizeof(cfg), .system_wide = 1 };
	tk_collect_config aut = { .size = sizeof(cfg), .sample_hz = 999, .callchains = 1 };
	tk_collect *c = NULL;
	struct evs e;
	char why[512];
	int rc, pid;
	size_t i, samples = 0, chains = 0;

	/* Asked for everything: refused, with the reason. */
	rc = tk_collect_open(&c, &sw, why, sizeof(why));
	if (rc != TK_EACCES || strstr(why, "perf_event_paranoid is") == NULL ||
	    strstr(why, "CAP_PERFMON") == NULL) {
		fprintf(stderr, "system-wide as nobody: rc %d, why: %s\n", rc, why);
		return 1;
	}
	printf("# refused as nobody: %s\n", why);
	/* The default tier falls back, saying so. */
	pid = trace_child(&aut, spin, &e, &rc, why, sizeof(why), NULL, 1);
	if (rc != 0) {
		fprintf(stderr, "auto tier as nobody: rc %d: %s\n", rc, why);
		return 1;
	}
	if (strstr(why, "unprivileged tier") == NULL) {
		fprintf(stderr, "no fallback note: %s\n", why);
		return 1;
	}
	for (i = 0; i < e.n; i++)
		if (e.v[i].cls == _TRACE_SYSTEM_C >> 10 && e.v[i].code == TK_COLLECT_SYS_PCTRACE &&
		    e.v[i].w[0] == (uint32_t)pid) {
			uint64_t ip = e.v[i].w[2] | (uint64_t)e.v[i].w[3] << 32;
			samples++;
			/* A user address of the spinning code; with call chains its callers too. */
			CHECK(ip != 0 && ip < 0x800000000000ull);
			if (e.v[i].n > 4)
				chains++;
		}
	printf("# %zu cpu-clock samples, %zu with call chains\n", samples, chains);
	CHECK(samples >= 10);
	CHECK(chains >= samples / 2);
	CHECK(printed(&e, 0, "SYSTEM  :PCTRACE", "caller1:"));
	free(e.v);
	pid = trace_child(&cfg, pingpong, &e, &rc, why, sizeof(why), NULL, 1);
	if (rc != 0) {
		fprintf(stderr, "unprivileged tier: rc %d: %s\n", rc, why);
		return 1;
	}
	if (check_pingpong(&e, pid, TK__UNPRIV_BLOCKED) != 0)
		return 1;
	/* Preempted switch-outs only as THREADY: never more than switch-ins. */
	free(e.v);
	return 0;
}

static void test_unprivileged_as_nobody(void **state)
{
	pid_t pid;
	int status = 0, rc;
	long paranoid = 0;
	FILE *f;

	(void)state;
	if (!is_root()) {
		/* Already unprivileged: run the checks here. */
		assert_int_equal(unpriv_checks(), 0);
		return;
	}
	f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f == NULL || fscanf(f, "%ld", &paranoid) != 1) {
		if (f)
			fclose(f);
		printf("SKIP: no /proc/sys/kernel/perf_event_paranoid\n");
		skip();
	}
	fclose(f);
	if (paranoid > 2) {
		printf("SKIP: perf_event_paranoid is %ld: unprivileged users may not use perf at all\n", paranoid);
		skip();
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
		    setresuid(65534, 65534, 65534) != 0)
			_exit(77);
		/* Changing credentials made this process non-dumpable, which would deny perf on
		 * its own children (ptrace access check); exec (as setpriv does) would reset it. */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		rc = unpriv_checks();
		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("SKIP: cannot become user nobody\n");
		skip();
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- lost records -------------------------------------------------------------------- */

static void many_switches(void)
{
	int i;

	struct timespec ts = { 0, 250 * 1000 * 1000 };

	for (i = 0; i < 5; i++)
		pingpong();
	/* A loss is reported by the next record written to the ring: one after the reader
	 * had time to make room. */
	nanosleep(&ts, NULL);
	prctl(PR_SET_NAME, "flush", 0, 0, 0);
}

static void test_lost_records(void **state)
{
	int mode;

	(void)state;
	/* A slow reader (every 100 ms), then none at all until the end: a one-page ring
	 * overflows; every loss is a DROPPED event, whether perf wrote a LOST record for it
	 * (room again) or the collector asked the events when disabled. */
	for (mode = 0; mode >= -1; mode--) {
		tk_collect_config cfg = { .size = sizeof(cfg), .tier = TK_COLLECT_TIER_UNPRIV, .ring_kib = 4 };
		struct evs e;
		tk_collect_stats st;
		char why[512];
		int rc;
		size_t i;
		uint64_t dropped = 0;

		trace_child(&cfg, mode == 0 ? many_switches : pingpong, &e, &rc, why, sizeof(why), &st, mode);
		if (rc != 0)
			fail_msg("rc %d: %s", rc, why);
		for (i = 0; i < e.n; i++)
			if (e.v[i].cls == _TRACE_CONTROL_C >> 10 && e.v[i].code == _TRACE_CONTROL_DROPPED)
				dropped += e.v[i].w[0] | (uint64_t)e.v[i].w[1] << 32;
		printf("# %s: %llu records read, %llu lost, %zu events\n", mode == 0 ? "slow reader" : "no reader",
		       (unsigned long long)st.records, (unsigned long long)st.lost, e.n);
		assert_true(st.lost > 0);
		assert_true(dropped == st.lost);
		/* About 2 * ROUNDS switch-ins, 2 * ROUNDS switch-outs at least: read + lost. */
		assert_true(st.records + st.lost >= 4 * ROUNDS);
		assert_true(printed(&e, 0, "CONTROL :DROPPED events:", NULL));
		free(e.v);
	}
}

/* ---- one time line: the timeline writer and the merge ---------------------------------- */

struct merged {
	uint64_t t[64];
	unsigned cls[64], code[64], cpu[64];
	int32_t pid[64], tid[64];
	uint32_t d1[64];
	size_t n;
};

static int merged_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct merged *m = ud;

	(void)t;
	(void)len;
	if (buf == NULL || m->n >= 64 || _NTO_TRACE_GETEVENT_C(h) == _TRACE_CONTROL_C)
		return 0;
	m->t[m->n] = tk_traceparser_ns(st);
	m->cls[m->n] = _NTO_TRACE_GETEVENT_C(h);
	m->code[m->n] = _NTO_TRACE_GETEVENT(h);
	m->cpu[m->n] = _NTO_TRACE_GETCPU(h);
	m->d1[m->n] = buf[0];
	tk_traceparser_owner(st, &m->pid[m->n], &m->tid[m->n]);
	m->n++;
	return 0;
}

static traceevent_t slot_of(unsigned cpu, unsigned cls, unsigned code, uint32_t d1, uint32_t d2)
{
	traceevent_t s = { _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, cls, code), { 0, d1, d2 } };
	return s;
}

/* Kernel events written through a timeline (times crossing 2^32 on two CPUs), then user
 * events merged: one time order, every user event owned by its thread (a THRUNNING is
 * written only where the file shows another thread running), the window respected. */
static void test_merge_timeline(void **state)
{
	char dir[] = "/tmp/tk-merge.XXXXXX", path[128], why[512];
	const uint64_t T = 0xfffffff0ull; /* 16 ns before the upper bits change */
	tk_kev_attr attrs[] = { { "TRACEKIT_CLOCK_CYCLES", "0" }, { "TRACEKIT_CLOCK_RAW_NS", "0" } };
	tk_kev_header h = { .cycles_per_sec = 1000000000ull, .cpu_num = 2, .attrs = attrs, .n_attrs = 2 };
	tk_collect_timeline *tl;
	tk_collect_merge *m;
	tk_kev_writer *w;
	struct traceparser_state *st;
	struct merged got = { .n = 0 };
	traceevent_t s;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k.kev", dir);
	assert_int_equal(tk_collect_timeline_new(&tl), TK_OK);
	assert_int_equal(tk_kev_writer_open(&w, path, &h, TK_KEV_NO_AUTO_TIME), TK_OK);
	tk_kev_writer_flush(w);
	uint64_t hdr_bytes = tk_kev_writer_bytes(w);
	/* (the collector gives every slot the low 32 bits of its time in data[0]) */
	s = slot_of(0, _TRACE_PR_TH_C, STATE_RUNNING, 10, 11); /* cpu 0: 10/11 runs from T */
	s.data[0] = (uint32_t)T;
	assert_int_equal(tk_collect_timeline_write(tl, w, &s, 1, T), TK_OK);
	s = slot_of(1, _TRACE_PR_TH_C, STATE_RUNNING, 20, 21); /* cpu 1: 20/21 from T + 5 */
	s.data[0] = (uint32_t)(T + 5);
	assert_int_equal(tk_collect_timeline_write(tl, w, &s, 1, T + 5), TK_OK);
	s = slot_of(0, _TRACE_PR_TH_C, STATE_RUNNING, 10, 12); /* cpu 0: 10/12 from T + 40 */
	s.data[0] = (uint32_t)(T + 40);
	assert_int_equal(tk_collect_timeline_write(tl, w, &s, 1, T + 40), TK_OK);
	assert_int_equal(tk_kev_writer_close(w), TK_OK);

	assert_int_equal(tk_collect_merge_new(&m), TK_OK);
	s = slot_of(0, _TRACE_USER_C, 1, 100, 0); /* by 10/11, running: no THRUNNING */
	assert_int_equal(tk_collect_merge_add(m, &s, 1, T + 10, 10, 11), TK_OK);
	s = slot_of(0, _TRACE_USER_C, 2, 200, 0); /* by 30/31 on cpu 0: a THRUNNING first */
	assert_int_equal(tk_collect_merge_add(m, &s, 1, T + 20, 30, 31), TK_OK);
	s = slot_of(1, _TRACE_USER_C, 3, 300, 0); /* after hi: left out */
	assert_int_equal(tk_collect_merge_add(m, &s, 1, T + 100, 20, 21), TK_OK);
	s = slot_of(1, _TRACE_USER_C, 4, 400, 0); /* before lo: left out */
	assert_int_equal(tk_collect_merge_add(m, &s, 1, 5, 20, 21), TK_OK);
	assert_int_equal(tk_collect_merge_count(m), 4);
	assert_int_equal(tk_collect_merge_add(m, &s, 0, 5, 20, 21), TK_EINVAL);
	tk_collect_merge_window(m, 100, T + 50);
	assert_int_equal(tk_collect_merge_write(m, path, hdr_bytes, path, &h, why, sizeof(why)), TK_OK);

	st = traceparser_init(NULL);
	assert_non_null(st);
	for (unsigned ic = 0; ic < 32; ic++)
		tk_traceparser_cs_internal(st, &got, merged_cb, ic, 0, 1023);
	assert_int_equal(traceparser(st, NULL, path), 0);
	traceparser_destroy(&st);
	/* THRUNNING 10/11, THRUNNING 20/21, USER 1, THRUNNING 30/31, USER 2, THRUNNING 10/12 */
	assert_int_equal(got.n, 6);
	for (size_t i = 1; i < got.n; i++)
		assert_true(got.t[i] >= got.t[i - 1]);
	assert_int_equal(got.cls[2], _TRACE_USER_C);
	assert_int_equal(got.code[2], 1);
	assert_int_equal(got.t[2], T + 10);
	assert_int_equal(got.tid[2], 11);
	assert_int_equal(got.cls[3], _TRACE_PR_TH_C);
	assert_int_equal(got.d1[3], 30);
	assert_int_equal(got.code[4], 2);
	assert_int_equal(got.tid[4], 31);
	assert_int_equal(got.t[4], T + 20);
	assert_int_equal(got.t[5], T + 40);
	tk_collect_merge_free(m);
	tk_collect_timeline_free(tl);
	tk_collect_merge_free(NULL);
	tk_collect_timeline_free(NULL);
	/* a program's own .kev: its USER events kept, its THREAD, CONTROL and KERCALL ones left out */
	{
		char upath[128];
		tk_collect_merge *um;
		uint32_t words[2] = { 7, 8 };
		snprintf(upath, sizeof(upath), "%s/u.kev", dir);
		assert_int_equal(tk_kev_writer_open(&w, upath, &h, 0), TK_OK);
		assert_int_equal(tk_kev_write_event(w, 0, _TRACE_PR_TH_C, STATE_RUNNING, 100, words, 2), TK_OK);
		assert_int_equal(tk_kev_write_event(w, 0, _TRACE_USER_C, 9, 200, words, 2), TK_OK);
		assert_int_equal(tk_kev_write_event(w, 0, _TRACE_KER_CALL_C, 1, 300, words, 2), TK_OK);
		assert_int_equal(tk_kev_writer_close(w), TK_OK);
		assert_int_equal(tk_collect_merge_new(&um), TK_OK);
		assert_int_equal(tk_collect_merge_load_kev(um, upath, why, sizeof(why)), TK_OK);
		assert_int_equal(tk_collect_merge_count(um), 1);
		/* a file that is not a .kev: the reason names it, nothing added */
		{
			FILE *f = fopen(upath, "w");
			assert_non_null(f);
			fputs("not a trace\n", f);
			fclose(f);
		}
		assert_int_equal(tk_collect_merge_load_kev(um, upath, why, sizeof(why)), TK_EFORMAT);
		assert_non_null(strstr(why, "u.kev"));
		assert_int_equal(tk_collect_merge_count(um), 1);
		tk_collect_merge_free(um);
		unlink(upath);
	}
	/* a kernel file that is gone: the reason, nothing written */
	assert_int_equal(tk_collect_merge_new(&m), TK_OK);
	unlink(path);
	assert_int_not_equal(tk_collect_merge_write(m, path, hdr_bytes, path, &h, why, sizeof(why)), TK_OK);
	assert_non_null(strstr(why, "k.kev"));
	assert_int_equal(access(path, F_OK), -1);
	tk_collect_merge_free(m);
	rmdir(dir);
}

/* ---- draining a session's pool: queued buffers, a dead writer's buffer up to committed ---- */

struct drained {
	uint64_t t[16];
	unsigned code[16];
	size_t n_slots[16];
	int32_t pid[16], tid[16];
	size_t n;
};

static int drained_cb(void *ud, const traceevent_t *slots, size_t n, uint64_t t_ns, int32_t pid, int32_t tid)
{
	struct drained *d = ud;

	if (d->n >= 16)
		return -1;
	d->t[d->n] = t_ns;
	d->code[d->n] = _NTO_TRACE_GETEVENT(slots[0].header);
	d->n_slots[d->n] = n;
	d->pid[d->n] = pid;
	d->tid[d->n] = tid;
	d->n++;
	return 0;
}

static int count_cb(void *ud, const traceevent_t *slots, size_t n, uint64_t t_ns, int32_t pid, int32_t tid)
{
	(void)slots;
	(void)n;
	(void)t_ns;
	(void)pid;
	(void)tid;
	(*(size_t *)ud)++;
	return 0;
}

/* A buffer as the recorder starts it: TIME (upper bits 1), BUFFER, the owner's THRUNNING. */
static size_t buffer_head(traceevent_t *b, uint32_t pid, uint32_t tid)
{
	b[0] = (traceevent_t){ _TRACE_MAKE_CODE(1, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME), { 5, 1, 5 } };
	b[1] = (traceevent_t){ _TRACE_MAKE_CODE(1, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_BUFFER), { 5, 0, 0 } };
	b[2] = (traceevent_t){ _TRACE_MAKE_CODE(1, _TRACE_STRUCT_S, _TRACE_PR_TH_C, STATE_RUNNING), { 5, pid, tid } };
	return 3;
}

static void test_drain_pool(void **state)
{
	char name[64];
	tk_session *s;
	tk_pool *pool;
	tk_collect_drain *d;
	tk_collect_drain_config cfg = { .size = sizeof(cfg), .cycles_per_sec = 1000000000ull };
	struct drained got = { .n = 0 };
	traceevent_t *b;
	tk_pool_desc *desc;
	uint32_t idx, idx2;
	size_t n;

	(void)state;
	snprintf(name, sizeof(name), "test-collect.%ld", (long)getpid());
	if (tk_session_open(&s, name, TK_SESSION_RECOVER) == TK_OK)
		tk_session_close(s); /* a region a crashed run of the same pid left */
	assert_int_equal(tk_session_create(&s, name, 4), TK_OK);
	pool = tk_session_pool(s);
	assert_int_equal(tk_collect_drain_new(&d, pool, &cfg), TK_OK);
	/* a full buffer, queued: a simple event, a DROPPED report, a combine event */
	assert_int_equal(tk_pool_take(pool, &idx), TK_OK);
	b = tk_pool_buffer(pool, idx);
	n = buffer_head(b, 77, 78);
	b[n++] = (traceevent_t){ _TRACE_MAKE_CODE(1, _TRACE_STRUCT_S, _TRACE_USER_C, 5), { 10, 1, 2 } };
	b[n++] = (traceevent_t){ _TRACE_MAKE_CODE(1, 0, _TRACE_CONTROL_C, _TRACE_CONTROL_DROPPED), { 11, 3, 0 } };
	b[n++] = (traceevent_t){ _TRACE_MAKE_CODE(1, _TRACE_STRUCT_CB, _TRACE_USER_C, 6), { 20, 1, 2 } };
	b[n++] = (traceevent_t){ _TRACE_MAKE_CODE(1, _TRACE_STRUCT_CC, _TRACE_USER_C, 6), { 20, 3, 4 } };
	b[n++] = (traceevent_t){ _TRACE_MAKE_CODE(1, _TRACE_STRUCT_CE, _TRACE_USER_C, 6), { 20, 5, 0 } };
	desc = tk_pool_desc_of(pool, idx);
	desc->owner_pid = 77;
	desc->owner_tid = 78;
	tk_pool_count_stored(pool, (int64_t)n);
	tk_pool_queue(pool, idx, (uint32_t)n);
	/* a dead writer's buffer: one whole event, then a combine event cut short */
	assert_int_equal(tk_pool_take(pool, &idx2), TK_OK);
	b = tk_pool_buffer(pool, idx2);
	n = buffer_head(b, 99, 100);
	b[n++] = (traceevent_t){ _TRACE_MAKE_CODE(0, _TRACE_STRUCT_S, _TRACE_USER_C, 7), { 30, 1, 2 } };
	b[n++] = (traceevent_t){ _TRACE_MAKE_CODE(0, _TRACE_STRUCT_CB, _TRACE_USER_C, 8), { 40, 1, 2 } };
	b[n++] = (traceevent_t){ _TRACE_MAKE_CODE(0, _TRACE_STRUCT_CC, _TRACE_USER_C, 8), { 40, 3, 4 } };
	desc = tk_pool_desc_of(pool, idx2);
	desc->owner_pid = 99;
	desc->owner_tid = 100;
	atomic_store(&desc->committed, (uint32_t)(n * sizeof(traceevent_t)));

	assert_int_equal(tk_collect_drain_queued(d, drained_cb, &got), 3);
	assert_int_equal(got.n, 3);
	assert_int_equal(got.code[0], 5);
	assert_int_equal(got.t[0], (1ull << 32) + 10); /* the buffer's TIME gives the upper bits */
	assert_int_equal(got.pid[0], 77);
	assert_int_equal(got.tid[0], 78);
	assert_int_equal(got.code[1], _TRACE_CONTROL_DROPPED);
	assert_int_equal(got.code[2], 6);
	assert_int_equal(got.n_slots[2], 3);
	/* a living writer's buffer is read and left to it; a dead one's is read and given back */
	assert_int_equal(tk_collect_drain_process(d, 99, 0, drained_cb, &got), 1);
	assert_int_equal(atomic_load(&tk_pool_desc_of(pool, idx2)->state), TK_POOL_WRITING);
	got.n = 0;
	assert_int_equal(tk_collect_drain_process(d, 99, 1, drained_cb, &got), 1);
	assert_int_equal(got.n, 1); /* the combine event cut short is left out */
	assert_int_equal(got.code[0], 7);
	assert_int_equal(got.pid[0], 99);
	assert_int_equal(atomic_load(&tk_pool_desc_of(pool, idx2)->state), TK_POOL_FREE);
	assert_int_equal(tk_collect_drain_process(d, 99, 1, drained_cb, &got), 0); /* nothing twice */
	uint64_t events, buffers, dropped;
	tk_collect_drain_get_stats(d, &events, &buffers, &dropped);
	assert_int_equal(dropped, 3);
	/* a descriptor claiming more than the buffer holds is read no further than the buffer */
	assert_int_equal(tk_pool_take(pool, &idx), TK_OK);
	b = tk_pool_buffer(pool, idx);
	memset(b, 0, 16384);
	buffer_head(b, 5, 6);
	atomic_store(&tk_pool_desc_of(pool, idx)->committed, 1u << 30);
	tk_pool_desc_of(pool, idx)->owner_pid = 5;
	assert_int_equal(tk_collect_drain_process(d, 5, 1, count_cb, &n), 1024 - 3);
	tk_collect_drain_free(d);
	/* the clock: ns = clock_ns + (cycles - clock_cycles) * 1e9 / cycles_per_sec, floored */
	cfg.cycles_per_sec = 2000000000ull;
	cfg.clock_cycles = 100;
	cfg.clock_ns = 1000;
	assert_int_equal(tk_collect_drain_new(&d, pool, &cfg), TK_OK);
	assert_int_equal(tk_collect_drain_ns(d, 300), 1100);
	assert_int_equal(tk_collect_drain_ns(d, 0), 950);
	assert_int_equal(tk_collect_drain_ns(d, 99), 999); /* -0.5 ns floors to -1 */
	tk_collect_drain_free(d);
	cfg.cycles_per_sec = 0;
	assert_int_equal(tk_collect_drain_new(&d, pool, &cfg), TK_EINVAL);
	tk_collect_drain_free(NULL);
	assert_int_equal(tk_session_close(s), TK_OK);
}

/* ---- the sink: classes not selected left out, -n, -S and ring mode -------------------------- */

static void test_sink(void **state)
{
	char dir[] = "/tmp/tk-sink.XXXXXX", path[128];
	tk_kev_attr attrs[] = { { "TRACEKIT_CLOCK_CYCLES", "0" }, { "TRACEKIT_CLOCK_RAW_NS", "0" } };
	tk_kev_header h = { .cycles_per_sec = 1000000000ull, .cpu_num = 1, .attrs = attrs, .n_attrs = 2 };
	volatile sig_atomic_t stop = 0;
	tk_collect_sink_config cfg;
	tk_collect_sink_stats st;
	tk_collect_sink *k;
	tk_kev_writer *w;
	traceevent_t th = slot_of(0, _TRACE_PR_TH_C, STATE_RUNNING, 1, 2);
	traceevent_t pr = slot_of(0, _TRACE_PR_TH_C, _TRACE_PR_TH_DESTROY_P, 1, 2);
	uint64_t t;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.kev", dir);
	assert_int_equal(tk_kev_writer_open(&w, path, &h, TK_KEV_NO_AUTO_TIME), TK_OK);
	tk_kev_writer_flush(w);
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.w = w;
	cfg.classes = TK_COLLECT_CLASS(_NTO_TRACE_THREAD);
	cfg.n_buffers = 1;
	assert_int_equal(tk_collect_sink_new(&k, &cfg), TK_EINVAL); /* no stop flag */
	cfg.stop = &stop;
	assert_int_equal(tk_collect_sink_new(&k, &cfg), TK_OK);
	for (t = 1; t <= 1024; t++) {
		th.data[0] = pr.data[0] = (uint32_t)t;
		assert_int_equal(tk_collect_sink_take(k, &pr, 1, t), 0); /* PROCESS: not selected, not counted */
		assert_int_equal(tk_collect_sink_take(k, &th, 1, t), 0);
	}
	tk_collect_sink_get_stats(k, &st);
	assert_int_equal(st.buffers, 1);
	assert_int_equal(st.events, 1024);
	assert_int_equal(stop, 1);
	assert_non_null(st.stop_reason);
	assert_int_equal(tk_collect_sink_take(k, &th, 1, t), 1); /* the limit: nothing more taken */
	tk_collect_sink_free(k);
	assert_int_equal(tk_kev_writer_slots(w), 1024 + 1); /* one TIME */
	tk_kev_writer_abort(w);
	/* ring mode: the newest buffer of 3000 events */
	assert_int_equal(tk_kev_writer_open(&w, path, &h, TK_KEV_NO_AUTO_TIME), TK_OK);
	cfg.w = w;
	cfg.n_buffers = 0;
	cfg.ring_buffers = 1;
	stop = 0;
	assert_int_equal(tk_collect_sink_new(&k, &cfg), TK_OK);
	for (t = 1; t <= 3000; t++) {
		th.data[0] = (uint32_t)t;
		assert_int_equal(tk_collect_sink_take(k, &th, 1, t), 0);
	}
	assert_int_equal(tk_kev_writer_slots(w), 0); /* nothing written before the stop */
	assert_int_equal(tk_collect_sink_flush_ring(k), TK_OK);
	tk_collect_sink_get_stats(k, &st);
	assert_int_equal(st.ring_dropped_buffers, 2);
	assert_int_equal(st.first_ns, 2049);
	assert_int_equal(tk_kev_writer_slots(w), 3000 - 2048 + 1);
	tk_collect_sink_free(k);
	tk_collect_sink_free(NULL);
	tk_kev_writer_abort(w);
	/* -S: the file stays below the size, the reason said */
	assert_int_equal(tk_kev_writer_open(&w, path, &h, TK_KEV_NO_AUTO_TIME), TK_OK);
	tk_kev_writer_flush(w);
	cfg.w = w;
	cfg.ring_buffers = 0;
	cfg.max_size = tk_kev_writer_bytes(w) + 100 * sizeof(traceevent_t);
	stop = 0;
	assert_int_equal(tk_collect_sink_new(&k, &cfg), TK_OK);
	for (t = 1; t <= 200; t++) {
		th.data[0] = (uint32_t)t;
		if (tk_collect_sink_take(k, &th, 1, t) != 0)
			break;
	}
	tk_collect_sink_get_stats(k, &st);
	assert_true(t < 200 && stop == 1 && st.stop_reason != NULL);
	assert_true(tk_kev_writer_slots(w) < 100);
	tk_collect_sink_free(k);
	tk_kev_writer_abort(w);
	rmdir(dir);
}

/* ---- bad input ----------------------------------------------------------------------- */

static void test_bad_config(void **state)
{
	tk_collect_config cfg = { .size = sizeof(cfg) };
	tk_collect *c = (tk_collect *)1;
	char why[256];
	int gone[1];
	pid_t p;

	(void)state;
	assert_int_equal(tk_collect_open(NULL, &cfg, why, sizeof(why)), TK_EINVAL);
	cfg.size = 4;
	assert_int_equal(tk_collect_open(&c, &cfg, why, sizeof(why)), TK_EINVAL);
	/* Unprivileged tier asked for system calls: a contradiction, said so. */
	cfg.size = sizeof(cfg);
	cfg.tier = TK_COLLECT_TIER_UNPRIV;
	cfg.classes = TK_COLLECT_CLASS(_NTO_TRACE_KERCALL);
	cfg.child_pid = getpid();
	assert_int_equal(tk_collect_open(&c, &cfg, why, sizeof(why)), TK_EINVAL);
	assert_non_null(strstr(why, "privileged"));
	/* A pid that is gone. */
	p = fork();
	if (p == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	gone[0] = p;
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.tier = TK_COLLECT_TIER_UNPRIV;
	cfg.pids = gone;
	cfg.n_pids = 1;
	assert_int_equal(tk_collect_open(&c, &cfg, why, sizeof(why)), TK_ENOENT);
	assert_non_null(strstr(why, "no such process"));
	tk_collect_close(NULL);
}

/* A logger killed while it read a buffer (off the queue, DRAINING, not given back): the
 * recovery reads that buffer too, beside what is still queued. */
static void test_recover_stranded(void **state)
{
	char name[64], path[128];
	tk_session *s;
	tk_pool *pool;
	traceevent_t *b;
	tk_pool_desc *desc;
	uint32_t idx, got;
	size_t n;
	int k;
	tk_kev_header hdr = { 0 };
	tk_collect_recovered res;
	char why[512];

	(void)state;
	snprintf(name, sizeof(name), "test-collect-stranded.%ld", (long)getpid());
	snprintf(path, sizeof(path), "/tmp/tkt_stranded_%ld.kev", (long)getpid());
	if (tk_session_open(&s, name, TK_SESSION_RECOVER) == TK_OK)
		tk_session_close(s);
	assert_int_equal(tk_session_create(&s, name, 4), TK_OK);
	pool = tk_session_pool(s);
	for (k = 0; k < 2; k++) {
		assert_int_equal(tk_pool_take(pool, &idx), TK_OK);
		b = tk_pool_buffer(pool, idx);
		n = buffer_head(b, 77, 78);
		for (int i = 0; i < (k == 0 ? 5 : 2); i++)
			b[n++] = (traceevent_t){ _TRACE_MAKE_CODE(1, _TRACE_STRUCT_S, _TRACE_USER_C, 5 + k), { 10u + (unsigned)i, 1, 2 } };
		desc = tk_pool_desc_of(pool, idx);
		desc->owner_pid = 77;
		desc->owner_tid = 78;
		tk_pool_count_stored(pool, (int64_t)n);
		tk_pool_queue(pool, idx, (uint32_t)n);
	}
	/* the logger takes the first one off the queue, and dies before giving it back */
	assert_int_equal(tk_pool_dequeue(pool, &got), TK_OK);
	assert_int_equal(atomic_load(&tk_pool_desc_of(pool, got)->state), TK_POOL_DRAINING);
	tk_session_abandon(s); /* its lock goes with it: an orphan */
	assert_int_equal(tk_collect_session_recover(name, path, &hdr, &res, why, sizeof(why)), TK_OK);
	if (res.events != 7)
		fail_msg("%llu events recovered, 7 expected (5 of the buffer being read, 2 queued)",
			 (unsigned long long)res.events);
	unlink(path);
}

/* before_give: called once per drained buffer, after its events were handed over and while
 * the buffer is still out of the writers' reach (a logger killed before it wrote them out
 * finds them in the region: tk_collect_drain_stranded). */
struct give_probe {
	tk_pool *pool;
	uint32_t idx;
	unsigned emitted, calls, bad;
};

static int probe_emit(void *ud, const traceevent_t *slots, size_t n, uint64_t t_ns, int32_t pid, int32_t tid)
{
	(void)slots; (void)n; (void)t_ns; (void)pid; (void)tid;
	((struct give_probe *)ud)->emitted++;
	return 0;
}

static int probe_before_give(void *ud)
{
	struct give_probe *p = ud;

	p->calls++;
	if (p->emitted != 4 || atomic_load(&tk_pool_desc_of(p->pool, p->idx)->state) != TK_POOL_DRAINING)
		p->bad++;
	return 0;
}

static void test_before_give(void **state)
{
	char name[64];
	tk_session *s;
	tk_collect_drain *d;
	tk_collect_drain_config cfg = { .size = sizeof(cfg), .cycles_per_sec = 1000000000ull,
					.before_give = probe_before_give };
	struct give_probe p = { 0 };
	traceevent_t *b;
	size_t n;

	(void)state;
	snprintf(name, sizeof(name), "test-collect-give.%ld", (long)getpid());
	if (tk_session_open(&s, name, TK_SESSION_RECOVER) == TK_OK)
		tk_session_close(s);
	assert_int_equal(tk_session_create(&s, name, 4), TK_OK);
	p.pool = tk_session_pool(s);
	assert_int_equal(tk_collect_drain_new(&d, p.pool, &cfg), TK_OK);
	assert_int_equal(tk_pool_take(p.pool, &p.idx), TK_OK);
	b = tk_pool_buffer(p.pool, p.idx);
	n = buffer_head(b, 7, 8);
	for (int i = 0; i < 4; i++)
		b[n++] = (traceevent_t){ _TRACE_MAKE_CODE(1, _TRACE_STRUCT_S, _TRACE_USER_C, 5), { 10u + (unsigned)i, 1, 2 } };
	tk_pool_count_stored(p.pool, (int64_t)n);
	tk_pool_queue(p.pool, p.idx, (uint32_t)n);
	assert_int_equal(tk_collect_drain_queued(d, probe_emit, &p), 4);
	assert_int_equal(p.calls, 1);
	assert_int_equal(p.bad, 0);
	assert_int_equal(atomic_load(&tk_pool_desc_of(p.pool, p.idx)->state), TK_POOL_FREE);
	tk_collect_drain_free(d);
	assert_int_equal(tk_session_close(s), TK_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_merge_timeline),
		cmocka_unit_test(test_drain_pool),
		cmocka_unit_test(test_recover_stranded),
		cmocka_unit_test(test_before_give),
		cmocka_unit_test(test_sink),
		cmocka_unit_test(test_pingpong_privileged),
		cmocka_unit_test(test_fork_exec),
		cmocka_unit_test(test_many_threads),
		cmocka_unit_test(test_existing_pid),
		cmocka_unit_test(test_mutex_condvar),
		cmocka_unit_test(test_syscalls),
		cmocka_unit_test(test_traceprinter_prints),
		cmocka_unit_test(test_interrupts),
		cmocka_unit_test(test_unprivileged_as_nobody),
		cmocka_unit_test(test_lost_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
