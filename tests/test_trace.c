/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the recorder: every TraceEvent() mode and its errors, the static and
 * dynamic filters deciding exactly which events reach the file, fast/wide forms, START's
 * process and thread state, the convenience calls and function hooks, ring and linear
 * mode, drop accounting under overload, flushes while threads write, many threads through
 * the inline emitter, and a full disk. Each test records with the in-process logger and
 * reads the file back with libtraceparser. Also: handlers that START and STOP while other
 * threads change handlers, the time of each buffer's first events, a pool in shared memory
 * read by another process after the writer was killed, and exact statistics after a
 * write error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tk_test.h"
#include "tracekit/trace.h"
#include "tracekit/traceparser.h"

/* ---- reading the trace back ----------------------------------------------------------- */

struct ev {
	unsigned cls, code, cpu, len;
	uint32_t w[8];
	char str[512];
	uint64_t clk;
};

struct evlist {
	struct ev *v;
	size_t n, cap;
	uint64_t dropped; /* sum of CONTROL DROPPED counts */
	uint64_t buffers; /* CONTROL BUFFER events */
};

static int collect_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct evlist *l = ud;
	struct ev *e;
	unsigned i;

	(void)t;
	if (buf == NULL)
		return 0;
	if (TK_KEV_CLASS(h) == 1 && TK_KEV_CODE(h) == _TRACE_CONTROL_DROPPED)
		l->dropped += (uint64_t)buf[0] | (uint64_t)buf[1] << 32;
	if (TK_KEV_CLASS(h) == 1 && TK_KEV_CODE(h) == _TRACE_CONTROL_BUFFER)
		l->buffers++;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		assert_non_null(l->v);
	}
	e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->cls = TK_KEV_CLASS(h);
	e->code = TK_KEV_CODE(h);
	e->cpu = _NTO_TRACE_GETCPU(h);
	e->len = len;
	e->clk = tk_traceparser_clk(st);
	for (i = 0; i < len && i < 8; i++)
		e->w[i] = buf[i];
	memcpy(e->str, buf, len * 4 < sizeof(e->str) ? len * 4 : sizeof(e->str) - 1);
	return 0;
}

static void read_trace(const char *path, struct evlist *l)
{
	struct traceparser_state *st = traceparser_init(NULL);
	unsigned cls;

	memset(l, 0, sizeof(*l));
	for (cls = 0; cls < 32; cls++)
		tk_traceparser_cs_internal(st, l, collect_cb, cls, cls == 0 ? 1 : 0, 1023);
	assert_int_equal(traceparser(st, l, path), 0);
	traceparser_destroy(&st);
}

static size_t count(const struct evlist *l, unsigned cls, unsigned code)
{
	size_t i, n = 0;
	for (i = 0; i < l->n; i++)
		if (l->v[i].cls == cls && l->v[i].code == code)
			n++;
	return n;
}

static const struct ev *find(const struct evlist *l, unsigned cls, unsigned code)
{
	size_t i;
	for (i = 0; i < l->n; i++)
		if (l->v[i].cls == cls && l->v[i].code == code)
			return &l->v[i];
	return NULL;
}

#define USER (_TRACE_USER_C >> 10)
#define PR_TH (_TRACE_PR_TH_C >> 10)
#define SYS (_TRACE_SYSTEM_C >> 10)

/* A clean slate: no logger, no buffers, every filter and handler cleared. */
static void reset_trace(void)
{
	static const int classes[] = { _NTO_TRACE_CONTROL, _NTO_TRACE_KERCALL, _NTO_TRACE_INT, _NTO_TRACE_PROCESS,
				       _NTO_TRACE_THREAD, _NTO_TRACE_VTHREAD, _NTO_TRACE_USER, _NTO_TRACE_SYSTEM,
				       _NTO_TRACE_COMM };
	size_t i;

	tk_logger_stop();
	TraceEvent(_NTO_TRACE_STOP);
	TraceEvent(_NTO_TRACE_DELALLCLASSES);
	TraceEvent(_NTO_TRACE_SETALLCLASSESFAST);
	TraceEvent(_NTO_TRACE_SETLINEARMODE);
	TraceEvent(_NTO_TRACE_SKIPBUFFER);
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		TraceEvent(_NTO_TRACE_CLRCLASSPID, classes[i]);
		TraceEvent(_NTO_TRACE_CLRCLASSTID, classes[i]);
		TraceEvent(_NTO_TRACE_DELCLASSEVHANDLER, classes[i]);
	}
	TraceEvent(_NTO_TRACE_DEALLOCBUFFER);
}

static void start_logging(const char *path, unsigned n_buffers, int ring)
{
	tk_logger_options o = { .n_buffers = n_buffers, .ring = ring };

	reset_trace();
	assert_int_equal(TraceEvent(_NTO_TRACE_ALLOCBUFFER, n_buffers, NULL), 0);
	assert_int_equal(tk_logger_start(path, &o), TK_OK);
}

static uint32_t my_tid(void)
{
	return (uint32_t)syscall(SYS_gettid);
}

/* ---- errors --------------------------------------------------------------------------- */

#define EXPECT_FAIL(call, err)                              \
	do {                                                \
		errno = 0;                                  \
		assert_int_equal((call), -1);               \
		assert_int_equal(errno, (err));             \
		assert_true(strlen(tk_trace_errmsg()) > 0); \
	} while (0)

static int accept_all(event_data_t *d)
{
	(void)d;
	return 1;
}

static void test_errors(void **state)
{
	event_data_t ed = { 0 };
	unsigned w[2] = { 1, 2 };

	(void)state;
	reset_trace();
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_START), EFAULT);          /* before ALLOCBUFFER */
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_DEALLOCBUFFER), EFAULT);  /* nothing to free */
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_QUERYEVENTS), EFAULT);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_FLUSHBUFFER), EFAULT);
	EXPECT_FAIL(TraceEvent(0x7fffffff), ENOTSUP);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_ALLOCBUFFER, 0u, NULL), EINVAL);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_ADDCLASS, 99), EINVAL);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_THREAD, 0), EINVAL); /* no bit set */
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_USER, 1024), EINVAL);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 1024, 1, 2), EINVAL);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, -1, 1, 2), EINVAL);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_INSERTCUSEREVENT, 5, NULL, 3u), EFAULT);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_INSERTUSRSTREVENT, 5, NULL), EFAULT);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_INSERTSCLASSEVENT, 32, 1, 1, 2), EINVAL);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_INSERTCCLASSEVENT, 6, 2000, w, 2u), EINVAL);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_ADDEVENTHANDLER, _NTO_TRACE_USER, 3, NULL, &ed), EFAULT);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_ADDCLASSEVHANDLER, _NTO_TRACE_USER, accept_all, NULL), EFAULT);
	assert_int_equal(TraceEvent(_NTO_TRACE_ADDEVENTHANDLER, _NTO_TRACE_USER, 3, accept_all, &ed), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_DELEVENTHANDLER, _NTO_TRACE_USER, 3), 0);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_DELEVENTHANDLER, _NTO_TRACE_USER, 3), EFAULT); /* deleted twice */
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_DELCLASSEVHANDLER, _NTO_TRACE_COMM), EFAULT);
	EXPECT_FAIL(trace_logf(2000, "x"), EINVAL);
	EXPECT_FAIL(trace_logbc(40, 1, "x", 1), EINVAL);
	EXPECT_FAIL(trace_logb(1, NULL, 4), EFAULT);
	/* with buffers but running: these are out of order */
	assert_int_equal(TraceEvent(_NTO_TRACE_ALLOCBUFFER, 4u, NULL), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_START), 0);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_ALLOCBUFFER, 4u, NULL), EFAULT);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_DEALLOCBUFFER), EFAULT);
	assert_int_equal(TraceEvent(_NTO_TRACE_STOP), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_QUERYVERSION), 0x0102);
	assert_int_equal(TraceEvent(_NTO_TRACE_QUERYSUPPORT), _NTO_TRACE_SUPPINSTR);
	assert_int_equal(TraceEvent(_NTO_TRACE_DEALLOCBUFFER), 0);
	/* logger errors */
	assert_int_equal(tk_logger_stop(), TK_ESTATE);
	assert_int_equal(tk_logger_start("/nonexistent-dir/x.kev", NULL), TK_ENOENT);
	assert_non_null(strstr(tk_logger_errmsg(), "/nonexistent-dir/x.kev"));
	/* another byte order than the host's is refused, and nothing is written (it wrote
	 * strings reversed by 4 bytes and 64-bit fields mixed up) */
	if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
		const char *be = tkt_path("be.kev");
		char part[4200];
		tk_logger_options o = { .n_buffers = 4, .big_endian = 1 };
		remove(be);
		snprintf(part, sizeof(part), "%s.part", be);
		assert_int_equal(tk_logger_start(be, &o), TK_ENOTSUP);
		assert_non_null(strstr(tk_logger_errmsg(), "big_endian"));
		assert_int_equal(access(be, F_OK), -1);
		assert_int_equal(access(part, F_OK), -1);
		assert_int_equal(tk_logger_stop(), TK_ESTATE);
	}
	reset_trace();
}

/* ---- what reaches the file -------------------------------------------------------------- */

static void test_inserts_and_log_calls(void **state)
{
	const char *path = tkt_path("inserts.kev");
	unsigned words[5] = { 10, 20, 30, 40, 50 };
	struct evlist l;
	const struct ev *e;
	char big[5000];

	(void)state;
	start_logging(path, 16, 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_ADDALLCLASSES), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_STARTNOSTATE), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 111, 1, 11), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTCUSEREVENT, 112, words, 5u), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTUSRSTREVENT, 555, "Hello world"), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTUSRSTREVENT, 556, "1234567"), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTUSRSTREVENT, 557, "12345678"), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTSCLASSEVENT, SYS, _NTO_TRACE_SYS_SLOG, 7, 8), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTCCLASSEVENT, _TRACE_COMM_C >> 10, 9, words, 3u), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTEVENT, (int)(_TRACE_USER_C | 900), 0x1234, 5, 6), 0);
	assert_int_equal(trace_logi(120, 3, 4), 0);
	assert_int_equal(trace_logf(121, "n=%d", 42), 0);
	assert_int_equal(trace_nlogf(122, 5, "%s", "truncated text"), 0);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(trace_logf(123, "%s", big), 0); /* cut at TK_TRACE_LOGF_MAX */
	assert_int_equal(trace_logb(124, "abcdef", 6), 0);
	assert_int_equal(trace_logbc(SYS, 13, words, 8), 0);
	assert_int_equal(trace_here(), 0);
	assert_int_equal(tk_logger_stop(), TK_OK);
	assert_false(tkt_exists(tkt_path("inserts.kev.part")));

	read_trace(path, &l);
	e = find(&l, USER, 111);
	assert_non_null(e);
	assert_int_equal(e->len, 2);
	assert_int_equal(e->w[0], 1);
	assert_int_equal(e->w[1], 11);
	e = find(&l, USER, 112);
	assert_non_null(e);
	assert_int_equal(e->len, 6);
	assert_int_equal(e->w[4], 50);
	assert_string_equal(find(&l, USER, 555)->str, "Hello world");
	assert_int_equal(find(&l, USER, 555)->len, 4); /* 12 bytes: CB + CE */
	/* 8 bytes with the NUL are one simple slot, as QNX's kernel writes them; 9 are two */
	assert_int_equal(find(&l, USER, 556)->len, 2);
	assert_string_equal(find(&l, USER, 556)->str, "1234567");
	assert_int_equal(find(&l, USER, 557)->len, 4);
	assert_string_equal(find(&l, USER, 557)->str, "12345678");
	assert_int_equal(find(&l, SYS, _NTO_TRACE_SYS_SLOG)->w[1], 8);
	assert_int_equal(find(&l, _TRACE_COMM_C >> 10, 9)->len, 4);
	e = find(&l, USER, 900);
	assert_non_null(e);
	assert_int_equal(e->w[0], 5);
	assert_int_equal(find(&l, USER, 120)->w[1], 4);
	assert_string_equal(find(&l, USER, 121)->str, "n=42");
	assert_int_equal(find(&l, USER, 121)->len, 2);
	assert_string_equal(find(&l, USER, 122)->str, "trunc");
	assert_int_equal(find(&l, USER, 123)->len, (TK_TRACE_LOGF_MAX + 1 + 7) / 8 * 2);
	assert_memory_equal(find(&l, USER, 124)->str, "abcdef\0\0", 8);
	assert_int_equal(find(&l, SYS, 13)->w[0], 10);
	assert_non_null(find(&l, SYS, _NTO_TRACE_SYS_ADDRESS));
	assert_int_equal(count(&l, PR_TH, _TRACE_PR_TH_CREATE_P_NAME), 0); /* STARTNOSTATE */
	free(l.v);
}

/* TraceEvent() traces itself as the kernel call it is on QNX: KER_CALL / KER_EXIT. */
static void test_traceevent_kercalls(void **state)
{
	const char *path = tkt_path("kercalls.kev");
	const unsigned KC = _TRACE_KER_CALL_C >> 10;
	struct evlist l;
	size_t k, enters = 0, ok_exits = 0, failed = 0;

	(void)state;
	start_logging(path, 16, 0);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_KERCALLENTER, __KER_TRACE_EVENT);
	TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_KERCALLEXIT, __KER_TRACE_EVENT);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 111, 1, 11), 0);
	errno = 0;
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 2000, 1, 11), -1);
	assert_int_equal(errno, EINVAL); /* kept across the KER_EXIT event */
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	for (k = 0; k < l.n; k++) {
		const struct ev *e = &l.v[k];
		if (e->cls == KC && e->code == __KER_TRACE_EVENT && e->w[0] == (uint32_t)_NTO_TRACE_INSERTSUSEREVENT) {
			assert_true(e->w[1] == 111 || e->w[1] == 2000); /* the first argument */
			enters++;
		}
		if (e->cls == KC && e->code == _TRACE_MAX_KER_CALL_NUM + __KER_TRACE_EVENT) {
			if (e->w[0] == 0xffffffffu) {
				assert_int_equal(e->w[1], EINVAL);
				failed++;
			} else {
				ok_exits++;
			}
		}
	}
	assert_int_equal(enters, 2);
	assert_int_equal(failed, 1);
	assert_true(ok_exits >= 2); /* STARTNOSTATE's and the good insert's */
	/* the user event sits between its call and its exit */
	for (k = 0; k < l.n && !(l.v[k].cls == USER && l.v[k].code == 111); k++)
		;
	assert_true(k > 0 && k + 1 < l.n);
	assert_int_equal(l.v[k - 1].code, __KER_TRACE_EVENT);
	assert_int_equal(l.v[k + 1].code, _TRACE_MAX_KER_CALL_NUM + __KER_TRACE_EVENT);
	free(l.v);
}

static void *idle_thread(void *arg)
{
	while (atomic_load((_Atomic int *)arg))
		usleep(1000);
	return NULL;
}

static size_t count_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_start_state(void **state)
{
	const char *path = tkt_path("state.kev");
	static _Atomic int keep;
	pthread_t th;
	struct evlist l;
	const struct ev *e;
	size_t i, names = 0, logger = 0, n_tasks;

	(void)state;
	atomic_store(&keep, 1);
	pthread_create(&th, NULL, idle_thread, &keep);
	start_logging(path, 16, 0);
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	TraceEvent(_NTO_TRACE_SETCLASSWIDE, _NTO_TRACE_THREAD);
	n_tasks = count_tasks();
	assert_int_equal(TraceEvent(_NTO_TRACE_START), 0);
	assert_int_equal(tk_logger_stop(), TK_OK);
	atomic_store(&keep, 0);
	pthread_join(th, NULL);

	read_trace(path, &l);
	e = find(&l, PR_TH, _TRACE_PR_TH_CREATE_P_NAME);
	assert_non_null(e);
	assert_int_equal(e->w[1], (uint32_t)getpid());
	assert_non_null(strstr(e->str + 8, "test_trace")); /* ppid, pid, then the path */
	/* main, the idle thread, the logger's own thread (and a sanitizer's, if any) */
	assert_true(n_tasks >= 3);
	assert_int_equal(count(&l, PR_TH, _TRACE_THREAD_CREATE), n_tasks);
	for (i = 0; i < l.n; i++) {
		if (l.v[i].cls == PR_TH && l.v[i].code == _TRACE_THREAD_CREATE)
			assert_int_equal(l.v[i].len, 4); /* wide: pid, tid, priority, policy */
		if (l.v[i].cls == PR_TH && l.v[i].code == _TRACE_PR_TH_NAME_T) {
			names++;
			logger += strcmp(l.v[i].str + 8, "tk-logger") == 0;
		}
	}
	assert_int_equal(names, n_tasks);
	assert_int_equal(logger, 1);
	e = find(&l, PR_TH, STATE_RUNNING);
	assert_non_null(e);
	assert_int_equal(e->w[1], my_tid());
	free(l.v);
}

/* Threads created while tracing runs announce themselves once, with their first buffer. */
static _Atomic uint32_t g_new_tid;

static void *named_emitter(void *arg)
{
	unsigned i;

	(void)arg;
	pthread_setname_np(pthread_self(), "tk-test-new");
	atomic_store(&g_new_tid, my_tid());
	for (i = 0; i < 3000; i++) /* three buffers' worth */
		tk_trace_user(90, i, 0);
	return NULL;
}

static void test_new_threads_announced(void **state)
{
	const char *path = tkt_path("newthreads.kev");
	struct evlist l;
	pthread_t th;
	size_t k, creates = 0, names = 0, main_creates = 0;

	(void)state;
	start_logging(path, 64, 0);
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	TraceEvent(_NTO_TRACE_START);
	tk_trace_user(91, 0, 0);
	pthread_create(&th, NULL, named_emitter, NULL);
	pthread_join(th, NULL);
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	for (k = 0; k < l.n; k++) {
		const struct ev *e = &l.v[k];
		if (e->cls != PR_TH)
			continue;
		if (e->code == _TRACE_PR_TH_CREATE_T && e->w[1] == atomic_load(&g_new_tid))
			creates++;
		if (e->code == _TRACE_PR_TH_CREATE_T && e->w[1] == my_tid())
			main_creates++;
		if (e->code == _TRACE_PR_TH_NAME_T && e->w[1] == atomic_load(&g_new_tid)) {
			assert_string_equal(e->str + 8, "tk-test-new");
			names++;
		}
	}
	assert_int_equal(creates, 1);
	assert_int_equal(names, 1);
	assert_int_equal(main_creates, 1); /* from START's state only */
	assert_int_equal(count(&l, USER, 90), 3000);
	free(l.v);
}

/* Static rules: classes, events, process and thread IDs. */
static _Atomic int g_go;

static void *emit_user_5(void *arg)
{
	unsigned i;
	(void)arg;
	for (i = 0; i < 100; i++)
		tk_trace_user(5, my_tid(), i);
	return NULL;
}

static void test_static_filters(void **state)
{
	const char *path = tkt_path("static.kev");
	struct evlist l;
	pthread_t th;
	unsigned i;
	size_t k;

	(void)state;
	start_logging(path, 32, 0);
	TraceEvent(_NTO_TRACE_DELALLCLASSES);
	TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_USER, 5);
	TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_USER, 6);
	TraceEvent(_NTO_TRACE_START);
	for (i = 0; i < 10; i++) {
		tk_trace_user(5, 0, i);
		tk_trace_user(6, 0, i);
		tk_trace_user(7, 0, i); /* not added */
	}
	TraceEvent(_NTO_TRACE_DELEVENT, _NTO_TRACE_USER, 6);
	tk_trace_user(6, 1, 1); /* deleted */
	/* only one thread of this process */
	TraceEvent(_NTO_TRACE_SETCLASSTID, _NTO_TRACE_USER, (int)getpid(), (int)my_tid());
	pthread_create(&th, NULL, emit_user_5, NULL);
	pthread_join(th, NULL);
	tk_trace_user(5, my_tid(), 99);
	TraceEvent(_NTO_TRACE_CLRCLASSTID, _NTO_TRACE_USER);
	/* another process's ID: nothing of ours */
	TraceEvent(_NTO_TRACE_SETCLASSPID, _NTO_TRACE_USER, (int)getpid() + 1);
	tk_trace_user(5, 2, 2);
	TraceEvent(_NTO_TRACE_CLRCLASSPID, _NTO_TRACE_USER);
	/* an event-level thread filter */
	TraceEvent(_NTO_TRACE_SETEVENTTID, _NTO_TRACE_USER, 5, (int)getpid(), 1);
	tk_trace_user(5, 3, 3);
	TraceEvent(_NTO_TRACE_CLREVENTTID, _NTO_TRACE_USER, 5);
	tk_trace_user(5, 4, 4);
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	assert_int_equal(count(&l, USER, 5), 10 + 1 + 1);
	assert_int_equal(count(&l, USER, 6), 10);
	assert_int_equal(count(&l, USER, 7), 0);
	for (k = 0; k < l.n; k++) {
		if (l.v[k].cls == USER && l.v[k].code == 5 && l.v[k].w[1] == 99)
			assert_int_equal(l.v[k].w[0], my_tid()); /* the other thread's were filtered */
		assert_false(l.v[k].cls == USER && (l.v[k].w[0] == 2 || l.v[k].w[0] == 3));
	}
	free(l.v);
}

/* Dynamic rules: an event is stored only if every applicable handler says yes. */
static _Uint32t g_data1[TK_TRACE_EVENT_DATA_WORDS], g_data2[TK_TRACE_EVENT_DATA_WORDS];
static event_data_t g_ed1 = { .data_array = g_data1 }, g_ed2 = { .data_array = g_data2 };
static unsigned g_calls1, g_calls2;
static uint32_t g_seen_tid, g_seen_word;

static int every_other(event_data_t *d)
{
	g_seen_tid = d->feature[_NTO_TRACE_FITID];
	g_seen_word = d->data_array[1];
	assert_true(d->feature_mask & _NTO_TRACE_FMPID);
	return g_calls1++ % 2 == 0;
}

static int not_seven(event_data_t *d)
{
	g_calls2++;
	/* a handler may insert events; they are not filtered again */
	if (d->data_array[1] == 3)
		TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 77, 0, 0);
	return d->data_array[1] != 7;
}

static void test_dynamic_filters(void **state)
{
	const char *path = tkt_path("dynamic.kev");
	struct evlist l;
	unsigned i;
	size_t k;

	(void)state;
	start_logging(path, 32, 0);
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	assert_int_equal(TraceEvent(_NTO_TRACE_ADDEVENTHANDLER, _NTO_TRACE_USER, 10, every_other, &g_ed1), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_ADDCLASSEVHANDLER, _NTO_TRACE_USER, not_seven, &g_ed2), 0);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	g_calls1 = g_calls2 = 0;
	for (i = 0; i < 10; i++)
		tk_trace_user(10, 0, i); /* both handlers apply */
	for (i = 0; i < 10; i++)
		tk_trace_user(11, 0, i); /* only the class handler */
	assert_int_equal(TraceEvent(_NTO_TRACE_DELEVENTHANDLER, _NTO_TRACE_USER, 10), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_DELCLASSEVHANDLER, _NTO_TRACE_USER), 0);
	tk_trace_user(10, 0, 7); /* no handlers any more */
	assert_int_equal(tk_logger_stop(), TK_OK);
	assert_int_equal(g_seen_tid, my_tid());
	assert_int_equal(g_seen_word, 9);

	read_trace(path, &l);
	/* USER 10: kept when every_other says yes (i even) and not_seven says yes (i != 7) */
	for (k = 0, i = 0; k < l.n; k++) {
		if (l.v[k].cls == USER && l.v[k].code == 10) {
			assert_true(l.v[k].w[1] % 2 == 0 || l.v[k].w[1] == 7);
			i++;
		}
	}
	assert_int_equal(i, 5 + 1);
	assert_int_equal(count(&l, USER, 11), 9);
	/* the handler inserts for i == 3: code 11 reaches it; code 10's event handler refused
	 * i == 3 first, so the class handler never saw that one */
	assert_int_equal(count(&l, USER, 77), 1);
	free(l.v);
}

/* -finstrument-functions hooks, fast (32-bit) and wide (64-bit) forms. */
__attribute__((noinline)) static int hooked(int x)
{
	__cyg_profile_func_enter((void *)hooked, __builtin_return_address(0));
	x = x * 3 + 1;
	__cyg_profile_func_exit((void *)hooked, __builtin_return_address(0));
	return x;
}

static void test_function_hooks(void **state)
{
	const char *path = tkt_path("hooks.kev");
	struct evlist l;
	const struct ev *e;
	uint64_t addr = (uint64_t)(uintptr_t)hooked, got;

	(void)state;
	start_logging(path, 16, 0);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_SYSTEM);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	assert_int_equal(hooked(2), 7);
	TraceEvent(_NTO_TRACE_SETEVENTWIDE, _NTO_TRACE_SYSTEM, _NTO_TRACE_SYS_FUNC_ENTER);
	assert_int_equal(hooked(3), 10);
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	assert_int_equal(count(&l, SYS, _NTO_TRACE_SYS_FUNC_ENTER), 2);
	assert_int_equal(count(&l, SYS, _NTO_TRACE_SYS_FUNC_EXIT), 2);
	e = find(&l, SYS, _NTO_TRACE_SYS_FUNC_ENTER);
	assert_int_equal(e->len, 2);
	assert_int_equal(e->w[0], (uint32_t)addr);
	e = &l.v[l.n - 1];
	while (!(e->cls == SYS && e->code == _NTO_TRACE_SYS_FUNC_ENTER))
		e--;
	assert_int_equal(e->len, 4);
	memcpy(&got, e->w, 8);
	assert_int_equal(got, addr);
	free(l.v);
}

/* ---- buffers: ring, linear, overload, flushes ------------------------------------------ */

static void emit_numbered(unsigned code, unsigned n)
{
	unsigned i;
	for (i = 0; i < n; i++)
		tk_trace_user(code, i, 0);
}

static void test_ring_mode(void **state)
{
	const char *path = tkt_path("ring.kev");
	const unsigned n = 20 * 1024;
	struct evlist l;
	tk_logger_stats st;
	size_t k, first = SIZE_MAX, kept = 0, last = 0;

	(void)state;
	start_logging(path, 8, 1); /* 8 buffers, flight recorder */
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	emit_numbered(30, n);
	assert_int_equal(TraceEvent(_NTO_TRACE_FLUSHBUFFER), 0);
	assert_int_equal(tk_logger_get_stats(&st), TK_OK);
	assert_true(st.buffers_overwritten > 0);
	assert_int_equal(st.events_dropped, 0); /* in ring mode old data goes, not new */
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	for (k = 0; k < l.n; k++) {
		if (l.v[k].cls == USER && l.v[k].code == 30) {
			if (first == SIZE_MAX)
				first = l.v[k].w[0];
			kept++;
			last = l.v[k].w[0];
		}
	}
	/* the newest events, contiguous up to the last one; the oldest were overwritten */
	assert_int_equal(last, n - 1);
	assert_true(first > 0);
	assert_int_equal(kept, n - first);
	assert_true(kept <= 8 * 1024);
	free(l.v);
}

/* Many threads through the inline emitter in linear mode: every event arrives exactly once,
 * each thread's events in the order it wrote them, with non-decreasing times. */
enum { N_THREADS = 4, PER_THREAD = 200000 };

struct worker {
	unsigned idx, n, flushes;
};

static void *numbered_worker(void *arg)
{
	struct worker *w = arg;
	unsigned i;

	while (!atomic_load(&g_go))
		;
	for (i = 0; i < w->n; i++)
		tk_trace_user(40 + w->idx, i, my_tid());
	return NULL;
}

/* Checks code 40+t for t < n_threads: sequence numbers 0..per-1, each once, in order. */
static void check_numbered(const struct evlist *l, unsigned n_threads, unsigned per)
{
	uint32_t next[N_THREADS] = { 0 };
	uint64_t last_clk[N_THREADS] = { 0 };
	size_t k;

	for (k = 0; k < l->n; k++) {
		const struct ev *e = &l->v[k];
		unsigned t;

		if (e->cls != USER || e->code < 40 || e->code >= 40 + n_threads)
			continue;
		t = e->code - 40;
		if (e->w[0] != next[t])
			fail_msg("thread %u: event %u where %u was expected", t, e->w[0], next[t]);
		next[t]++;
		if (e->clk < last_clk[t])
			fail_msg("thread %u event %u (slot %zu, cpu %u): time %llx before %llx", t, e->w[0], k, e->cpu,
				 (unsigned long long)e->clk, (unsigned long long)last_clk[t]);
		last_clk[t] = e->clk;
	}
	for (k = 0; k < n_threads; k++)
		assert_int_equal(next[k], per);
}

static void run_workers(unsigned n_threads, unsigned per, int flush_meanwhile)
{
	pthread_t th[N_THREADS];
	struct worker w[N_THREADS];
	unsigned i, done;

	atomic_store(&g_go, 0);
	for (i = 0; i < n_threads; i++) {
		w[i] = (struct worker){ .idx = i, .n = per };
		assert_int_equal(pthread_create(&th[i], NULL, numbered_worker, &w[i]), 0);
	}
	atomic_store(&g_go, 1);
	for (done = 0; flush_meanwhile && done < 50; done++) {
		assert_int_equal(TraceEvent(_NTO_TRACE_FLUSHBUFFER), 0);
		usleep(200);
	}
	for (i = 0; i < n_threads; i++)
		pthread_join(th[i], NULL);
}

static void test_linear_mode_many_threads(void **state)
{
	const char *path = tkt_path("linear.kev");
	struct evlist l;
	tk_logger_stats st;

	(void)state;
	/* enough buffers that the logger never falls behind far enough to drop */
	start_logging(path, 4096, 0);
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	run_workers(N_THREADS, PER_THREAD, 0);
	assert_int_equal(tk_logger_stop(), TK_OK);
	assert_int_equal(tk_logger_get_stats(&st), TK_OK);
	assert_int_equal(st.events_dropped, 0);

	read_trace(path, &l);
	assert_int_equal(l.dropped, 0);
	check_numbered(&l, N_THREADS, PER_THREAD);
	free(l.v);
}

/* FLUSHBUFFER while threads write: partial buffers are written and then continued, and no
 * event is lost or written twice. */
static void test_flush_while_writing(void **state)
{
	const char *path = tkt_path("flush.kev");
	struct evlist l;

	(void)state;
	start_logging(path, 4096, 0);
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	run_workers(2, 300000, 1);
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	check_numbered(&l, 2, 300000);
	free(l.v);
}

/* Overload: with 4 buffers and no logger the thread runs out; what cannot be stored is
 * counted, reported in the file by DROPPED events once a buffer is free again, and in the
 * statistics. Stored + dropped == emitted. QUERYEVENTS counts what is stored. */
static void test_drop_accounting(void **state)
{
	const char *path = tkt_path("drops.kev");
	const unsigned first = 10000, second = 3000;
	tk_logger_stats st;
	struct evlist l;
	size_t stored;
	int q;

	(void)state;
	reset_trace();
	assert_int_equal(TraceEvent(_NTO_TRACE_ALLOCBUFFER, 4u, NULL), 0);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER); /* counts below are of USER events */
	assert_int_equal(TraceEvent(_NTO_TRACE_STARTNOSTATE), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_QUERYEVENTS), 0);
	emit_numbered(50, first);
	q = TraceEvent(_NTO_TRACE_QUERYEVENTS);
	assert_true(q > 3 * 1000 && q <= 4 * 1024); /* 4 buffers' worth, less their headers */
	/* the logger takes what is queued; events written after it starts find buffers again */
	assert_int_equal(tk_logger_start(path, NULL), TK_OK);
	assert_int_equal(tk_logger_flush(), TK_OK); /* buffers written and free again */
	emit_numbered(51, second);
	assert_int_equal(tk_logger_stop(), TK_OK);
	assert_int_equal(tk_logger_get_stats(&st), TK_OK);

	read_trace(path, &l);
	stored = count(&l, USER, 50);
	assert_true(stored < first);
	assert_int_equal(stored + l.dropped, first);
	assert_int_equal(st.events_dropped, l.dropped);
	assert_int_equal(count(&l, USER, 51), second);
	free(l.v);
}

/* Buffers can be freed and allocated again between sessions. */
static void test_realloc_buffers(void **state)
{
	const char *path = tkt_path("realloc.kev");
	struct evlist l;

	(void)state;
	start_logging(path, 16, 0);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER); /* counts below are of USER events */
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	emit_numbered(60, 100);
	assert_int_equal(tk_logger_stop(), TK_OK);
	assert_int_equal(TraceEvent(_NTO_TRACE_DEALLOCBUFFER), 0);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_START), EFAULT);
	emit_numbered(61, 100); /* stopped: not recorded, no crash */
	assert_int_equal(TraceEvent(_NTO_TRACE_ALLOCBUFFER, 8u, NULL), 0);
	assert_int_equal(tk_logger_start(path, NULL), TK_OK);
	assert_int_equal(TraceEvent(_NTO_TRACE_STARTNOSTATE), 0);
	emit_numbered(62, 20000); /* more than 8 buffers hold: the logger must recycle them */
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	assert_int_equal(count(&l, USER, 60), 0); /* the file was replaced */
	assert_int_equal(count(&l, USER, 61), 0);
	assert_int_equal(count(&l, USER, 62) + l.dropped, 20000);
	free(l.v);
	reset_trace();
}

/* A full disk (here: a file size limit, TK_EFBIG) stops the trace; what was written
 * stays readable in "<path>.part" and no file appears under the final name. */
static void test_full_disk(void **state)
{
	const char *path = tkt_path("full.kev");
	char part[4096];
	pid_t pid;
	int status;
	struct evlist l;

	(void)state;
	snprintf(part, sizeof(part), "%s.part", path);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 256 * 1024, 256 * 1024 };
		tk_logger_stats st;
		int rc;

		/* SIGXFSZ's default action ends the process: the logger's writes must not raise it
		 * in the program (audit 19: "File size limit exceeded", exit 153) */
		signal(SIGXFSZ, SIG_DFL);
		setrlimit(RLIMIT_FSIZE, &rl);
		start_logging(path, 64, 0);
		TraceEvent(_NTO_TRACE_ADDALLCLASSES);
		TraceEvent(_NTO_TRACE_STARTNOSTATE);
		emit_numbered(70, 100000);
		rc = tk_logger_stop();
		tk_logger_get_stats(&st);
		if (rc != TK_EFBIG || st.write_error != TK_EFBIG || st.buffers_lost == 0)
			_exit(3);
		if (strstr(tk_logger_errmsg(), ".part") == NULL) {
			fprintf(stderr, "logger error message: %s\n", tk_logger_errmsg());
			_exit(4);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_false(tkt_exists(path));
	assert_true(tkt_exists(part));

	/* one thread, buffers written in order: what survives is a prefix of what was sent */
	read_trace(part, &l);
	{
		size_t k, n = 0;
		for (k = 0; k < l.n; k++)
			if (l.v[k].cls == USER && l.v[k].code == 70)
				assert_int_equal(l.v[k].w[0], n++);
		assert_true(n > 1000);
	}
	free(l.v);
}

/* A trace to a pipe whose reader has gone: the writes fail (TK_EPIPE or an I/O error), the
 * program lives on with SIGPIPE at its default action. */
static void test_closed_pipe(void **state)
{
	pid_t pid;
	int status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fds[2];
		signal(SIGPIPE, SIG_DFL);
		if (pipe(fds) != 0 || dup2(fds[1], STDOUT_FILENO) < 0)
			_exit(5);
		close(fds[1]);
		start_logging("-", 8, 0); /* the header fits in the pipe */
		close(fds[0]);            /* then the reader goes */
		TraceEvent(_NTO_TRACE_ADDALLCLASSES);
		TraceEvent(_NTO_TRACE_STARTNOSTATE);
		emit_numbered(71, 20000);
		if (tk_logger_stop() == TK_OK)
			_exit(3);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* TRACEKIT_LOG records an unmodified program: this binary re-executed with it set. */
static int child_autostart(void)
{
	unsigned i;
	for (i = 0; i < 1000; i++)
		tk_trace_user(80, i, 0);
	return 0;
}

static void test_env_autostart(void **state)
{
	const char *path = tkt_path("auto-%p.kev");
	char final[4096];
	pid_t pid;
	int status;
	struct evlist l;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setenv("TRACEKIT_LOG", path, 1);
		execl("/proc/self/exe", "test_trace", "--autostart-child", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	snprintf(final, sizeof(final), "%s/auto-%d.kev", tkt_dir(), (int)pid);
	assert_true(tkt_exists(final));

	read_trace(final, &l);
	assert_int_equal(count(&l, USER, 80), 1000);
	assert_non_null(find(&l, PR_TH, _TRACE_PR_TH_CREATE_P_NAME)); /* START with state */
	free(l.v);
}

/* ---- locks, time, masks, results, the shared pool, statistics, modes ---------------------- */

/* Slots an event takes in the file: the parser gives 2 words per slot. */
static uint64_t slots_in(const struct evlist *l)
{
	uint64_t n = 0;
	size_t k;
	for (k = 0; k < l->n; k++)
		n += l->v[k].len / 2;
	return n;
}

/* A handler may START, STARTNOSTATE and STOP (QNX allows it) while other threads add and
 * delete handlers: no lock order between them can deadlock (an alarm fails the test if
 * one does). */
static _Uint32t g_race_data[TK_TRACE_EVENT_DATA_WORDS], g_race_data2[TK_TRACE_EVENT_DATA_WORDS];
static event_data_t g_race_ed = { .data_array = g_race_data }, g_race_ed2 = { .data_array = g_race_data2 };
static _Atomic unsigned g_race_calls, g_race_churns;
static _Atomic int g_race_run;

static int restart_handler(event_data_t *d)
{
	unsigned n = atomic_fetch_add(&g_race_calls, 1);

	(void)d;
	if (n % 2 == 0) {
		TraceEvent(_NTO_TRACE_STOP);
		TraceEvent(_NTO_TRACE_STARTNOSTATE);
	} else {
		TraceEvent(n % 4 == 1 ? _NTO_TRACE_START : _NTO_TRACE_STARTNOSTATE);
	}
	return 1;
}

static void *handler_churn(void *arg)
{
	(void)arg;
	while (atomic_load(&g_race_run)) {
		TraceEvent(_NTO_TRACE_ADDEVENTHANDLER, _NTO_TRACE_SYSTEM, 1, accept_all, &g_race_ed2);
		TraceEvent(_NTO_TRACE_DELEVENTHANDLER, _NTO_TRACE_SYSTEM, 1);
		TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_COMM);
		atomic_fetch_add(&g_race_churns, 1);
	}
	return NULL;
}

static void test_handler_start_stop_race(void **state)
{
	const char *path = tkt_path("handler_race.kev");
	const unsigned n = 2000;
	struct evlist l;
	pthread_t th;
	unsigned i;

	(void)state;
	start_logging(path, 64, 0);
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	assert_int_equal(TraceEvent(_NTO_TRACE_ADDCLASSEVHANDLER, _NTO_TRACE_USER, restart_handler, &g_race_ed), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_STARTNOSTATE), 0);
	atomic_store(&g_race_calls, 0);
	atomic_store(&g_race_churns, 0);
	atomic_store(&g_race_run, 1);
	alarm(300); /* a deadlock kills the test instead of hanging it */
	assert_int_equal(pthread_create(&th, NULL, handler_churn, NULL), 0);
	for (i = 0; i < n; i++) {
		tk_trace_user(3, i, 0);
		if (i == n / 2)
			while (atomic_load(&g_race_churns) < 10)
				usleep(100); /* both sides really overlap */
	}
	atomic_store(&g_race_run, 0);
	pthread_join(th, NULL);
	alarm(0);
	assert_int_equal(atomic_load(&g_race_calls), n);
	assert_int_equal(TraceEvent(_NTO_TRACE_DELCLASSEVHANDLER, _NTO_TRACE_USER), 0);
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	assert_int_equal(count(&l, USER, 3), n); /* the handler said yes to each */
	assert_true(count(&l, PR_TH, _TRACE_PR_TH_CREATE_P_NAME) > 0); /* START's state, from the handler */
	free(l.v);
}

/* What QNX returns when a filter refuses an insert: 0, the call was valid; only what is
 * stored changes. The inline emitter and the convenience calls agree. */
static int refuse_all(event_data_t *d)
{
	(void)d;
	return 0;
}

static void test_filtered_inserts_return_0(void **state)
{
	const char *path = tkt_path("refused.kev");
	static _Uint32t data[TK_TRACE_EVENT_DATA_WORDS];
	static event_data_t ed = { .data_array = data };
	unsigned words[3] = { 1, 2, 3 };
	struct evlist l;

	(void)state;
	start_logging(path, 16, 0);
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	TraceEvent(_NTO_TRACE_DELEVENT, _NTO_TRACE_USER, 8);                                  /* off */
	TraceEvent(_NTO_TRACE_ADDEVENTHANDLER, _NTO_TRACE_USER, 9, refuse_all, &ed);          /* handler says no */
	TraceEvent(_NTO_TRACE_SETEVENTPID, _NTO_TRACE_USER, 10, (int)getpid() + 1);           /* another process */
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	errno = 1234;
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 8, 1, 2), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 9, 1, 2), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 10, 1, 2), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTCUSEREVENT, 9, words, 3u), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTUSRSTREVENT, 9, "refused"), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTSCLASSEVENT, USER, 10, 1, 2), 0);
	assert_int_equal(trace_logi(9, 1, 2), 0);
	assert_int_equal(trace_logf(8, "%s", "off"), 0);
	assert_int_equal(tk_trace_user(9, 1, 2), 0);
	assert_int_equal(tk_trace_emit(USER, 10, 1, 2), 0);
	assert_int_equal(errno, 1234); /* untouched: nothing failed */
	assert_int_equal(TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 11, 1, 2), 0); /* stored */
	/* the emitter's one error: a class out of range on the slow path */
	errno = 0;
	assert_int_equal(tk_trace_emit(40, 1, 0, 0) == 0 || errno == EINVAL, 1);
	assert_int_equal(TraceEvent(_NTO_TRACE_DELEVENTHANDLER, _NTO_TRACE_USER, 9), 0);
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	assert_int_equal(count(&l, USER, 8), 0);
	assert_int_equal(count(&l, USER, 9), 0);
	assert_int_equal(count(&l, USER, 10), 0);
	assert_int_equal(count(&l, USER, 11), 1);
	free(l.v);
}

/* ADDEVENT / DELEVENT take THREAD, VTHREAD and PROCESS events as masks: every bit is one
 * event, and a bit the class does not have makes the call fail without changing anything. */
static void insert_pr_th_codes(unsigned tag)
{
	static const unsigned codes[] = { STATE_RUNNING,
					  STATE_READY,
					  STATE_DEAD,
					  STATE_SEND,
					  _TRACE_MAX_TH_STATE_NUM + STATE_RUNNING,
					  _TRACE_MAX_TH_STATE_NUM + STATE_READY,
					  _TRACE_MAX_TH_STATE_NUM + STATE_DEAD,
					  _TRACE_PR_TH_CREATE_P,
					  _TRACE_PR_TH_DESTROY_P_NAME,
					  _TRACE_PR_TH_CREATE_P_NAME };
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		assert_int_equal(TraceEvent(_NTO_TRACE_INSERTSCLASSEVENT, PR_TH, (int)codes[i], tag, 0), 0);
}

static size_t count_tagged(const struct evlist *l, unsigned cls, unsigned code, uint32_t tag)
{
	size_t k, n = 0;
	for (k = 0; k < l->n; k++)
		n += l->v[k].cls == cls && l->v[k].code == code && l->v[k].w[0] == tag;
	return n;
}

static void test_event_masks(void **state)
{
	const char *path = tkt_path("masks.kev");
	const unsigned V = _TRACE_MAX_TH_STATE_NUM;
	struct evlist l;

	(void)state;
	start_logging(path, 16, 0);
	TraceEvent(_NTO_TRACE_DELALLCLASSES);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_PROCESS, 12345), EINVAL); /* bits 5.. are none */
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING | (1u << 30)), EINVAL);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_DELEVENT, _NTO_TRACE_VTHREAD, _NTO_TRACE_VTHREADY | (1u << 31)), EINVAL);
	EXPECT_FAIL(TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_PROCESS, _NTO_TRACE_PROCCREATE | (1u << 5)), EINVAL);
	{
		/* the kev mapping names one event per mask: several bits are not silently one */
		tk_kev_range r[4];
		unsigned two = _NTO_TRACE_THRUNNING | _NTO_TRACE_THREADY;
		assert_int_equal(tk_kev_map_events(_NTO_TRACE_THREAD, two, two, 0, r), -1);
		assert_int_equal(tk_kev_map_events(_NTO_TRACE_PROCESS, 12345, 12345, 0, r), -1);
		assert_int_equal(tk_kev_map_events(_NTO_TRACE_THREAD, _NTO_TRACE_THREADY, _NTO_TRACE_THREADY, 0, r), 1);
	}
	assert_int_equal(TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_THREAD,
				    _NTO_TRACE_THRUNNING | _NTO_TRACE_THREADY | _NTO_TRACE_THDEAD),
			 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_VTHREAD, _NTO_TRACE_VTHRUNNING | _NTO_TRACE_VTHREADY),
			 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_ADDEVENT, _NTO_TRACE_PROCESS,
				    _NTO_TRACE_PROCCREATE | _NTO_TRACE_PROCDESTROY_NAME),
			 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_STARTNOSTATE), 0);
	insert_pr_th_codes(1);
	assert_int_equal(TraceEvent(_NTO_TRACE_DELEVENT, _NTO_TRACE_THREAD, _NTO_TRACE_THRUNNING | _NTO_TRACE_THDEAD), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_DELEVENT, _NTO_TRACE_VTHREAD, _NTO_TRACE_VTHRUNNING | _NTO_TRACE_VTHREADY),
			 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_DELEVENT, _NTO_TRACE_PROCESS,
				    _NTO_TRACE_PROCCREATE | _NTO_TRACE_PROCDESTROY_NAME),
			 0);
	insert_pr_th_codes(2);
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	/* added as masks: each event of each mask, and only those */
	assert_int_equal(count_tagged(&l, PR_TH, STATE_RUNNING, 1), 1);
	assert_int_equal(count_tagged(&l, PR_TH, STATE_READY, 1), 1);
	assert_int_equal(count_tagged(&l, PR_TH, STATE_DEAD, 1), 1);
	assert_int_equal(count_tagged(&l, PR_TH, STATE_SEND, 1), 0);
	assert_int_equal(count_tagged(&l, PR_TH, V + STATE_RUNNING, 1), 1);
	assert_int_equal(count_tagged(&l, PR_TH, V + STATE_READY, 1), 1);
	assert_int_equal(count_tagged(&l, PR_TH, V + STATE_DEAD, 1), 0);
	assert_int_equal(count_tagged(&l, PR_TH, _TRACE_PR_TH_CREATE_P, 1), 1);
	assert_int_equal(count_tagged(&l, PR_TH, _TRACE_PR_TH_DESTROY_P_NAME, 1), 1);
	assert_int_equal(count_tagged(&l, PR_TH, _TRACE_PR_TH_CREATE_P_NAME, 1), 0);
	/* deleted as masks: only THREADY was left out of them */
	assert_int_equal(count_tagged(&l, PR_TH, STATE_READY, 2), 1);
	assert_int_equal(count_tagged(&l, PR_TH, STATE_RUNNING, 2) + count_tagged(&l, PR_TH, STATE_DEAD, 2) +
				 count_tagged(&l, PR_TH, V + STATE_RUNNING, 2) + count_tagged(&l, PR_TH, V + STATE_READY, 2) +
				 count_tagged(&l, PR_TH, _TRACE_PR_TH_CREATE_P, 2) +
				 count_tagged(&l, PR_TH, _TRACE_PR_TH_DESTROY_P_NAME, 2),
			 0);
	free(l.v);
}

/* Every buffer starts with TIME, then BUFFER: the BUFFER event, and every event after it,
 * gets its upper time bits from its own buffer, whatever was read before it. */
static void *emit_user_33(void *arg)
{
	unsigned i;
	(void)arg;
	for (i = 0; i < 5000; i++)
		tk_trace_user(33, i, 0);
	return NULL;
}

static void test_buffer_starts_with_time(void **state)
{
	const char *path = tkt_path("time_first.kev");
	struct evlist l;
	pthread_t th[2];
	size_t k, buffers = 0;
	unsigned i;

	(void)state;
	start_logging(path, 64, 0);
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, emit_user_33, NULL), 0);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(TraceEvent(_NTO_TRACE_FLUSHBUFFER), 0); /* partial buffers too */
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	assert_true(l.n > 0);
	assert_int_equal(l.v[0].cls, 1);
	assert_int_equal(l.v[0].code, _TRACE_CONTROL_TIME); /* the file's first event */
	for (k = 0; k < l.n; k++) {
		const struct ev *e = &l.v[k], *prev;
		if (!(e->cls == 1 && e->code == _TRACE_CONTROL_BUFFER))
			continue;
		buffers++;
		assert_true(k > 0);
		prev = &l.v[k - 1];
		assert_int_equal(prev->cls, 1);
		assert_int_equal(prev->code, _TRACE_CONTROL_TIME);
		assert_int_equal(prev->cpu, e->cpu);
		assert_int_equal(e->clk >> 32, prev->w[0]); /* the TIME's MSB */
		assert_int_equal(e->clk, prev->clk);
		assert_true(e->clk >> 32 != 0); /* not the "no upper bits yet" of a first event */
		/* the buffer's next event is not older than its BUFFER event */
		if (k + 1 < l.n && l.v[k + 1].cpu == e->cpu)
			assert_true(l.v[k + 1].clk >= e->clk);
	}
	assert_true(buffers >= 10);
	free(l.v);
}

/* The trace pool in MAP_SHARED memory: another process (here the parent) reads every
 * committed event through the region's offsets alone, while the writer runs and after it
 * was killed mid-buffer. */
struct recovered {
	uint32_t next[2]; /* next sequence number expected of codes 95, 96 */
	size_t events, partial_buffers, queued_buffers;
	char error[256]; /* the first thing wrong, "" if none */
};

/* Decodes without failing the test (the writer is still to be killed): errors go to out. */
static void decode_pool(void *region, size_t size, struct recovered *out)
{
	tk_pool *p;
	uint32_t idx, order[64], n_order = 0, i, j;

	memset(out, 0, sizeof(*out));
	if (tk_pool_attach(&p, region, size) != TK_OK || tk_pool_n_buffers(p) > 64) {
		snprintf(out->error, sizeof(out->error), "not a pool of at most 64 buffers");
		return;
	}
	/* the buffers holding records, oldest first */
	for (idx = 0; idx < tk_pool_n_buffers(p); idx++) {
		uint32_t st = atomic_load_explicit(&tk_pool_desc_of(p, idx)->state, memory_order_acquire);
		if (st == TK_POOL_WRITING || st == TK_POOL_QUEUED)
			order[n_order++] = idx;
	}
	for (i = 1; i < n_order; i++)
		for (j = i; j > 0 && tk_pool_desc_of(p, order[j])->seq < tk_pool_desc_of(p, order[j - 1])->seq; j--) {
			uint32_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (i = 0; i < n_order; i++) {
		tk_pool_desc *d = tk_pool_desc_of(p, order[i]);
		const traceevent_t *slots = tk_pool_buffer(p, order[i]);
		uint32_t st = atomic_load_explicit(&d->state, memory_order_acquire), n, k;
		n = st == TK_POOL_QUEUED ? atomic_load_explicit(&d->records, memory_order_acquire)
					 : atomic_load_explicit(&d->committed, memory_order_acquire) / 16u;
		out->partial_buffers += st == TK_POOL_WRITING;
		out->queued_buffers += st == TK_POOL_QUEUED;
		if (n < 2 || n > 1024 || TK_KEV_CODE(slots[0].header) != _TRACE_CONTROL_TIME ||
		    TK_KEV_CODE(slots[1].header) != _TRACE_CONTROL_BUFFER) {
			snprintf(out->error, sizeof(out->error), "buffer %u: %u records, not TIME then BUFFER", order[i], n);
			break;
		}
		for (k = 0; k < n; k++) {
			unsigned cls = TK_KEV_CLASS(slots[k].header), code = TK_KEV_CODE(slots[k].header);
			if (cls != USER || (code != 95 && code != 96))
				continue;
			if (slots[k].data[1] != out->next[code - 95] && out->error[0] == '\0')
				snprintf(out->error, sizeof(out->error),
					 "code %u: event %u where %u was expected (buffer %u, slot %u)", code,
					 slots[k].data[1], out->next[code - 95], order[i], k);
			out->next[code - 95] = slots[k].data[1] + 1;
			out->events++;
		}
	}
	tk_pool_destroy(p);
}

static void *emit_96_then_wait(void *arg)
{
	unsigned i;
	for (i = 0; i < 300; i++)
		tk_trace_user(96, i, 0);
	atomic_store((_Atomic int *)arg, 1);
	for (;;)
		pause();
	return NULL;
}

static void test_shared_pool_read_from_outside(void **state)
{
	const unsigned n_buffers = 8, main_events = 2500;
	size_t size = tk_trace_pool_size(n_buffers);
	void *region;
	struct recovered r;
	int fds[2], status;
	char c;
	pid_t pid;

	(void)state;
	assert_int_equal(tk_trace_pool_size(0), 0);
	assert_true(size > n_buffers * 16384u);
	region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(region != MAP_FAILED);
	/* refused: bad arguments; while tracing runs */
	reset_trace();
	assert_int_equal(tk_trace_pool_init(NULL, size, n_buffers), TK_EINVAL);
	assert_int_equal(tk_trace_pool_init(region, size - 1, n_buffers), TK_EINVAL);
	assert_int_equal(TraceEvent(_NTO_TRACE_ALLOCBUFFER, 2u, NULL), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_STARTNOSTATE), 0);
	assert_int_equal(tk_trace_pool_init(region, size, n_buffers), TK_ESTATE);
	reset_trace();

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static _Atomic int ready;
		pthread_t th;
		unsigned i;
		close(fds[0]);
		alarm(120); /* never outlives a parent that failed before killing it */
		if (tk_trace_pool_init(region, size, n_buffers) != TK_OK)
			_exit(2);
		TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
		if (TraceEvent(_NTO_TRACE_STARTNOSTATE) != 0)
			_exit(3);
		/* two full buffers queued (no logger takes them), a third partly written */
		for (i = 0; i < main_events; i++)
			tk_trace_user(95, i, 0);
		if (pthread_create(&th, NULL, emit_96_then_wait, (void *)&ready) != 0)
			_exit(4);
		while (!atomic_load(&ready))
			usleep(1000);
		if (write(fds[1], "x", 1) != 1)
			_exit(5);
		for (;;)
			pause(); /* killed here, mid-buffer */
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1)
		c = 0;
	close(fds[0]);
	/* while the writer lives */
	decode_pool(region, size, &r);
	/* and after it died without a chance to write anything out */
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(c, 'x');
	assert_true(WIFSIGNALED(status));
	assert_string_equal(r.error, "");
	assert_int_equal(r.next[0], main_events);
	assert_int_equal(r.next[1], 300);
	decode_pool(region, size, &r);
	assert_string_equal(r.error, "");
	assert_int_equal(r.next[0], main_events);
	assert_int_equal(r.next[1], 300);
	assert_int_equal(r.events, main_events + 300);
	assert_int_equal(r.queued_buffers, 2);
	assert_int_equal(r.partial_buffers, 2); /* the main thread's third, the other thread's first */
	munmap(region, size);
}

/* TRACEKIT_LOG with a file size limit: the program runs and exits normally, one line on
 * standard error says what failed, where and why, the .part keeps what was written, and
 * nothing appears under the final name. */
static int child_autostart_big(void)
{
	unsigned i;
	for (i = 0; i < 200000; i++)
		tk_trace_user(81, i, 0);
	return 0;
}

static void test_env_full_disk(void **state)
{
	const char *path = tkt_path("env-full.kev"), *errpath = tkt_path("env-full.err");
	char part[4096], want[4096], *err;
	size_t len;
	pid_t pid;
	int status;
	struct evlist l;

	(void)state;
	snprintf(part, sizeof(part), "%s.part", path);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 128 * 1024, 128 * 1024 };
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
		signal(SIGXFSZ, SIG_IGN); /* writes fail with EFBIG instead */
		setrlimit(RLIMIT_FSIZE, &rl);
		setenv("TRACEKIT_LOG", path, 1);
		execl("/proc/self/exe", "test_trace", "--autostart-big", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	err = tkt_read_file(errpath, &len);
	assert_non_null(err);
	assert_true(len > 0 && err[len - 1] == '\n' && strchr(err, '\n') == err + len - 1); /* one line */
	snprintf(want, sizeof(want), "tracekit: TRACEKIT_LOG=%s: %s.part: write failed at byte offset ", path, path);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("unexpected message: %s", err);
	assert_non_null(strstr(err, "File too large"));
	assert_non_null(strstr(err, "stays in"));
	free(err);
	assert_false(tkt_exists(path));
	assert_true(tkt_exists(part));
	read_trace(part, &l);
	assert_true(count(&l, USER, 81) > 1000);
	free(l.v);
}

/* After a write error the statistics count exactly what is in the file: events_written is
 * what the .part holds, events_lost the rest, together every slot the logger was given
 * (QUERYEVENTS before the logger started). Linear mode writes queued buffers in batches,
 * ring mode one piece at a time: both are cut by a file size limit. */
struct acct_result {
	int rc, q;
	tk_logger_stats st;
};

static void run_cut_child(const char *path, int ring, struct acct_result *res)
{
	struct rlimit rl = { 256 * 1024, 256 * 1024 };

	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &rl);
	reset_trace();
	if (TraceEvent(_NTO_TRACE_ALLOCBUFFER, 64u, NULL) != 0)
		_exit(2);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	TraceEvent(ring ? _NTO_TRACE_SETRINGMODE : _NTO_TRACE_SETLINEARMODE);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	emit_numbered(34, 50000); /* ~49 buffers, 800 KB: no drop, more than the limit */
	res->q = TraceEvent(_NTO_TRACE_QUERYEVENTS);
	if (tk_logger_start(path, NULL) != TK_OK)
		_exit(3);
	res->rc = tk_logger_stop();
	tk_logger_get_stats(&res->st);
	_exit(0);
}

static void test_write_error_statistics(void **state)
{
	int ring;

	(void)state;
	for (ring = 0; ring < 2; ring++) {
		const char *path = tkt_path(ring ? "cut_ring.kev" : "cut_linear.kev");
		struct acct_result *res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		char part[4096];
		struct evlist l;
		pid_t pid;
		int status;

		assert_true(res != MAP_FAILED);
		memset(res, 0, sizeof(*res));
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			run_cut_child(path, ring, res);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		assert_int_equal(res->rc, TK_EFBIG);
		assert_int_equal(res->st.write_error, TK_EFBIG);
		assert_int_equal(res->st.events_dropped, 0);
		assert_true(res->q > 49 * 1000);
		/* every slot is either in the file or lost */
		assert_int_equal(res->st.events_written + res->st.events_lost, (uint64_t)res->q);
		assert_true(res->st.events_lost > 0);
		assert_true(res->st.buffers_lost > 0);
		assert_int_equal(res->st.bytes_written, res->st.events_written * 16);
		snprintf(part, sizeof(part), "%s.part", path);
		assert_false(tkt_exists(path));
		read_trace(part, &l);
		/* what the statistics say is in the file is what is in it */
		assert_int_equal(slots_in(&l), res->st.events_written);
		/* whole buffers written, then the one cut (its BUFFER event may be in the file) */
		assert_true(l.buffers == res->st.buffers_written || l.buffers == res->st.buffers_written + 1);
		assert_true(res->st.buffers_written + res->st.buffers_lost >= 49);
		free(l.v);
		munmap(res, sizeof(*res));
	}
}

/* DELCLASS, SETEVENTPID / CLREVENTPID, SETALLCLASSESWIDE, SETCLASSFAST, SETEVENTFAST: what
 * each leaves in the file. */
static void test_class_and_event_modes(void **state)
{
	const char *path = tkt_path("modes.kev");
	const uint32_t lens[3][2] = { { 4, 4 }, { 2, 2 }, { 4, 2 } };
	struct evlist l;
	size_t k, enter = 0, exits = 0;

	(void)state;
	start_logging(path, 16, 0);
	TraceEvent(_NTO_TRACE_ADDALLCLASSES);
	assert_int_equal(TraceEvent(_NTO_TRACE_DELCLASS, _NTO_TRACE_USER), 0);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	tk_trace_user(20, 1, 0);                            /* class deleted */
	assert_int_equal(trace_here(), 0);                  /* SYSTEM still on */
	assert_int_equal(TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER), 0);
	tk_trace_user(20, 2, 0);
	/* event-level process rules */
	assert_int_equal(TraceEvent(_NTO_TRACE_SETEVENTPID, _NTO_TRACE_USER, 21, (int)getpid() + 1), 0);
	tk_trace_user(21, 2, 0);                            /* another process's only */
	tk_trace_user(22, 2, 0);                            /* not this event's rule */
	assert_int_equal(TraceEvent(_NTO_TRACE_SETEVENTPID, _NTO_TRACE_USER, 21, (int)getpid()), 0);
	tk_trace_user(21, 3, 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_SETEVENTPID, _NTO_TRACE_USER, 21, (int)getpid() + 1), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_CLREVENTPID, _NTO_TRACE_USER, 21), 0);
	tk_trace_user(21, 4, 0);
	/* fast / wide */
	assert_int_equal(TraceEvent(_NTO_TRACE_SETALLCLASSESWIDE), 0);
	hooked(1);
	assert_int_equal(TraceEvent(_NTO_TRACE_SETCLASSFAST, _NTO_TRACE_SYSTEM), 0);
	hooked(2);
	assert_int_equal(TraceEvent(_NTO_TRACE_SETALLCLASSESWIDE), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_SETEVENTFAST, _NTO_TRACE_SYSTEM, _NTO_TRACE_SYS_FUNC_EXIT), 0);
	hooked(3);
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	assert_int_equal(count_tagged(&l, USER, 20, 1), 0);
	assert_int_equal(count_tagged(&l, USER, 20, 2), 1);
	assert_non_null(find(&l, SYS, _NTO_TRACE_SYS_ADDRESS));
	assert_int_equal(count_tagged(&l, USER, 21, 2), 0);
	assert_int_equal(count_tagged(&l, USER, 22, 2), 1);
	assert_int_equal(count_tagged(&l, USER, 21, 3), 1);
	assert_int_equal(count_tagged(&l, USER, 21, 4), 1);
	for (k = 0; k < l.n; k++) {
		if (l.v[k].cls != SYS)
			continue;
		if (l.v[k].code == _NTO_TRACE_SYS_FUNC_ENTER) {
			assert_true(enter < 3);
			assert_int_equal(l.v[k].len, lens[enter++][0]);
		} else if (l.v[k].code == _NTO_TRACE_SYS_FUNC_EXIT) {
			assert_true(exits < 3);
			assert_int_equal(l.v[k].len, lens[exits++][1]);
		}
	}
	assert_int_equal(enter, 3);
	assert_int_equal(exits, 3);
	free(l.v);
}

/* OVERWRITEBUFFER in linear mode: with no free buffer the oldest full one is reused, so
 * nothing is dropped and the file ends with the newest events, contiguous. */
static void check_newest(const struct evlist *l, unsigned code, unsigned n, size_t max_kept)
{
	size_t k, first = SIZE_MAX, kept = 0, last = 0;

	for (k = 0; k < l->n; k++) {
		if (l->v[k].cls == USER && l->v[k].code == code) {
			if (first == SIZE_MAX)
				first = l->v[k].w[0];
			else if (l->v[k].w[0] != last + 1)
				fail_msg("event %u after %zu", l->v[k].w[0], last);
			kept++;
			last = l->v[k].w[0];
		}
	}
	assert_int_equal(last, n - 1);
	assert_true(first > 0);
	assert_int_equal(kept, n - first);
	assert_true(kept <= max_kept);
}

static void test_overwritebuffer(void **state)
{
	const char *path = tkt_path("overwrite.kev");
	const unsigned n = 10000;
	tk_logger_stats st;
	struct evlist l;

	(void)state;
	reset_trace();
	assert_int_equal(TraceEvent(_NTO_TRACE_ALLOCBUFFER, 4u, NULL), 0);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	assert_int_equal(TraceEvent(_NTO_TRACE_OVERWRITEBUFFER), 0);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	emit_numbered(31, n); /* about 10 buffers' worth into 4, nobody writing them */
	assert_int_equal(tk_logger_get_stats(&st), TK_OK);
	assert_int_equal(st.events_dropped, 0);
	assert_true(st.buffers_overwritten >= 5);
	assert_int_equal(tk_logger_start(path, NULL), TK_OK);
	assert_int_equal(tk_logger_stop(), TK_OK);

	read_trace(path, &l);
	assert_int_equal(l.dropped, 0);
	check_newest(&l, 31, n, 4 * 1024);
	free(l.v);
	reset_trace();
}

/* Ring mode (set with SETRINGMODE) is written on STOP, not only on FLUSHBUFFER, and at exit. */
static void test_ring_written_on_stop_and_exit(void **state)
{
	const char *path = tkt_path("ring_stop.kev"), *exit_path = tkt_path("ring_exit.kev");
	const unsigned n = 20 * 1024;
	tk_logger_stats st;
	struct evlist l;
	pid_t pid;
	int status;

	(void)state;
	reset_trace();
	assert_int_equal(TraceEvent(_NTO_TRACE_ALLOCBUFFER, 8u, NULL), 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_SETRINGMODE), 0);
	assert_int_equal(tk_logger_start(path, NULL), TK_OK); /* no options: the mode set stays */
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	emit_numbered(32, n);
	assert_int_equal(tk_logger_get_stats(&st), TK_OK);
	assert_int_equal(st.events_written, 0); /* a flight recorder keeps them */
	assert_true(st.buffers_overwritten > 0);
	assert_int_equal(TraceEvent(_NTO_TRACE_STOP), 0);
	assert_int_equal(tk_logger_get_stats(&st), TK_OK);
	assert_true(st.events_written > 7 * 1000); /* STOP wrote them */
	assert_int_equal(tk_logger_stop(), TK_OK);
	read_trace(path, &l);
	check_newest(&l, 32, n, 8 * 1024);
	free(l.v);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		tk_logger_options o = { .n_buffers = 8, .ring = 1 };
		reset_trace();
		if (TraceEvent(_NTO_TRACE_ALLOCBUFFER, 8u, NULL) != 0 || tk_logger_start(exit_path, &o) != TK_OK)
			_exit(2);
		TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
		TraceEvent(_NTO_TRACE_STARTNOSTATE);
		emit_numbered(32, n);
		setenv("TK_TEST_KEEP", "1", 1); /* the scratch directory is the parent's */
		exit(0);                        /* the logger writes the ring at exit */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	read_trace(exit_path, &l);
	check_newest(&l, 32, n, 8 * 1024);
	free(l.v);
}

/* Drops under overload with several threads and the logger writing meanwhile: every event
 * is stored or counted in a DROPPED event, and the statistics agree with the file. */
static void test_drops_many_threads(void **state)
{
	const char *path = tkt_path("drops_threads.kev");
	const unsigned per = 100000;
	uint32_t next[N_THREADS] = { 0 };
	tk_logger_stats st;
	struct evlist l;
	size_t k, stored = 0;

	(void)state;
	start_logging(path, 8, 0); /* 8 buffers for 4 threads: the logger cannot keep up */
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	run_workers(N_THREADS, per, 0);
	assert_int_equal(tk_logger_stop(), TK_OK);
	assert_int_equal(tk_logger_get_stats(&st), TK_OK);

	read_trace(path, &l);
	for (k = 0; k < l.n; k++) {
		const struct ev *e = &l.v[k];
		if (e->cls != USER || e->code < 40 || e->code >= 40 + N_THREADS)
			continue;
		if (e->w[0] < next[e->code - 40])
			fail_msg("thread %u: event %u after %u", e->code - 40, e->w[0], next[e->code - 40]);
		next[e->code - 40] = e->w[0] + 1;
		stored++;
	}
	print_message("%zu stored, %llu dropped\n", stored, (unsigned long long)l.dropped);
	assert_int_equal(stored + l.dropped, (uint64_t)N_THREADS * per);
	assert_int_equal(st.events_dropped, l.dropped);
	assert_int_equal(st.events_lost, 0);
	free(l.v);
}

/* ---- the environment logger against hostile or unusual programs (issue 10) ----------------- */

/* Runs this binary with `mode`, TRACEKIT_LOG=log (and extra NAME=VALUE, or NULL), stdout to
 * out_path (or inherited), stderr to err_path. Returns the exit status. */
static int run_env_child(const char *mode, const char *log, const char *extra, const char *out_path,
			 const char *err_path)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
		close(fd);
		if (out_path != NULL) {
			fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
				_exit(126);
			close(fd);
		}
		setenv("TRACEKIT_LOG", log, 1);
		setenv("TK_TEST_KEEP", "1", 1); /* the scratch directory is the parent's */
		if (extra != NULL)
			putenv((char *)extra);
		execl("/proc/self/exe", "test_trace", mode, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* Item 22: a daemon closes every descriptor above stderr, then opens a file of its own,
 * which gets the trace's old number. */
static int child_close_fds(void)
{
	const char *user = getenv("TK_TEST_USER_FILE");
	unsigned i;
	int fd;

	for (i = 0; i < 3000; i++)
		tk_trace_user(82, i, 0);
	if (TraceEvent(_NTO_TRACE_FLUSHBUFFER) != 0)
		return 3;
	for (fd = 3; fd < 65536; fd++)
		close(fd);
	fd = open(user, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "mine\n", 5) != 5)
		return 4;
	for (i = 0; i < 200000; i++) /* many buffers for the logger to write */
		tk_trace_user(83, i, 0);
	TraceEvent(_NTO_TRACE_FLUSHBUFFER); /* fails: the trace's descriptor is gone */
	return close(fd) == 0 ? 0 : 5;
}

static void test_env_program_closes_fds(void **state)
{
	const char *path = tkt_path("closefds.kev"), *user = tkt_path("closefds.user");
	const char *errpath = tkt_path("closefds.err");
	static char extra[4200];
	char part[4096], *data, *err;
	size_t len;
	struct evlist l;

	(void)state;
	snprintf(extra, sizeof(extra), "TK_TEST_USER_FILE=%s", user);
	assert_int_equal(run_env_child("--autostart-closefds", path, extra, NULL, errpath), 0);
	data = tkt_read_file(user, &len);
	assert_non_null(data);
	assert_int_equal(len, 5); /* the program's own file got nothing of the trace */
	assert_memory_equal(data, "mine\n", 5);
	free(data);
	err = tkt_read_file(errpath, &len);
	assert_non_null(err);
	assert_true(len > 0 && strchr(err, '\n') == err + len - 1); /* one line */
	if (strstr(err, "closed or replaced by the program") == NULL)
		fail_msg("unexpected message: %s", err);
	free(err);
	snprintf(part, sizeof(part), "%s.part", path);
	assert_false(tkt_exists(path));
	read_trace(part, &l); /* what was written before stays readable */
	assert_int_equal(count(&l, USER, 82), 3000);
	free(l.v);
}

/* Audit item 1: a daemon closes every descriptor, 0, 1 and 2 included, then opens files of
 * its own (the third gets number 2), then records: the logger's message that it cannot
 * write (its descriptor is gone) must not land in the program's files. */
static int child_close_all(void)
{
	const char *user = getenv("TK_TEST_USER_FILE");
	char name[4200];
	unsigned i;
	int fd, fds[3];

	for (i = 0; i < 3000; i++)
		tk_trace_user(82, i, 0);
	if (TraceEvent(_NTO_TRACE_FLUSHBUFFER) != 0)
		return 3;
	for (fd = 0; fd < 65536; fd++)
		close(fd);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s.%u", user, i);
		fds[i] = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fds[i] != (int)i || write(fds[i], "mine\n", 5) != 5)
			return 4;
	}
	for (i = 0; i < 200000; i++) /* many buffers for the logger to write */
		tk_trace_user(83, i, 0);
	TraceEvent(_NTO_TRACE_FLUSHBUFFER); /* fails: the trace's descriptor is gone */
	return 0;                           /* exit: the logger stops (and fails) once more */
}

static void test_env_program_closes_all_fds(void **state)
{
	const char *path = tkt_path("closeall.kev"), *user = tkt_path("closeall.user");
	const char *errpath = tkt_path("closeall.err");
	static char extra[4200];
	char part[4096], name[4200], *data;
	size_t len;
	unsigned i;
	struct evlist l;

	(void)state;
	snprintf(extra, sizeof(extra), "TK_TEST_USER_FILE=%s", user);
	assert_int_equal(run_env_child("--autostart-close-all", path, extra, NULL, errpath), 0);
	for (i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s.%u", user, i);
		data = tkt_read_file(name, &len);
		assert_non_null(data);
		if (len != 5 || memcmp(data, "mine\n", 5) != 0)
			fail_msg("%s got something of the trace: %.*s", name, (int)len, data);
		free(data);
	}
	/* the original stderr got nothing either: the program closed every descriptor of it */
	data = tkt_read_file(errpath, &len);
	assert_non_null(data);
	if (len != 0)
		fail_msg("unexpected message: %.*s", (int)len, data);
	free(data);
	snprintf(part, sizeof(part), "%s.part", path);
	assert_false(tkt_exists(path));
	read_trace(part, &l); /* what was written before stays readable */
	assert_int_equal(count(&l, USER, 82), 3000);
	free(l.v);
}

/* Item 13: TRACEKIT_LOG=- and a program that closes stdout before it exits. */
static int child_close_stdout(void)
{
	unsigned i;

	for (i = 0; i < 100; i++)
		tk_trace_user(84, i, 0);
	fclose(stdout);
	for (i = 0; i < 5000; i++)
		tk_trace_user(85, i, 0);
	return 0;
}

static void test_env_stdout_closed(void **state)
{
	const char *out = tkt_path("stdout.kev"), *errpath = tkt_path("stdout.err");
	struct evlist l;
	size_t len;
	char *err;

	(void)state;
	assert_int_equal(run_env_child("--autostart-close-stdout", "-", NULL, out, errpath), 0);
	err = tkt_read_file(errpath, &len);
	assert_non_null(err);
	if (len != 0)
		fail_msg("unexpected message: %s", err);
	free(err);
	read_trace(out, &l);
	assert_int_equal(count(&l, USER, 84), 100);
	assert_int_equal(count(&l, USER, 85), 5000);
	free(l.v);
}

/* Item 19: a setuid program (owned by another user, run by a third) never records through
 * TRACEKIT_LOG: nothing is created at the path, although the owner could write there. */
static void test_env_setuid_refused(void **state)
{
	char dir[] = "/tmp/tk_setuid_XXXXXX", bin[256], logdir[256], log[300], part[320], cmd[600];
	struct stat sb;
	pid_t pid;
	int status;

	(void)state;
	if (geteuid() != 0) {
		print_message("not root: the setuid test is skipped\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(bin, sizeof(bin), "%s/test_trace", dir);
	snprintf(logdir, sizeof(logdir), "%s/logs", dir);
	snprintf(log, sizeof(log), "%s/owned.kev", logdir);
	snprintf(part, sizeof(part), "%s.part", log);
	snprintf(cmd, sizeof(cmd), "cp /proc/%d/exe %s", (int)getpid(), bin);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(mkdir(logdir, 0777), 0);
	assert_int_equal(chmod(logdir, 0777), 0);
	assert_int_equal(chown(bin, 65534, 65534), 0);
	assert_int_equal(chmod(bin, 04755), 0);
	assert_int_equal(stat(bin, &sb), 0);
	assert_true(sb.st_mode & S_ISUID);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, STDERR_FILENO);
		setenv("TRACEKIT_LOG", log, 1);
		setenv("TK_TEST_KEEP", "1", 1);
		if (setgroups(0, NULL) != 0 || setresgid(1000, 1000, 1000) != 0 || setresuid(1000, 1000, 1000) != 0)
			_exit(126);
		execl(bin, "test_trace", "--autostart-child", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
#if !TKT_ASAN /* (LeakSanitizer cannot run in a setuid process: exit 1) */
	assert_int_equal(WEXITSTATUS(status), 0); /* the program ran */
#endif
	assert_false(tkt_exists(log));
	assert_false(tkt_exists(part));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Item 30: ring mode with more threads than buffers. Threads without a buffer drop; a
 * buffer carrying a DROPPED event may be reused before it is written: every drop the
 * statistics count is still in the file. */
static void test_ring_drops_in_file(void **state)
{
	const char *path = tkt_path("ring_drops.kev");
	tk_logger_stats st;
	struct evlist l;
	int round;

	(void)state;
	for (round = 0; round < 3; round++) {
		start_logging(path, 2, 1);
		TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
		TraceEvent(_NTO_TRACE_STARTNOSTATE);
		run_workers(N_THREADS, 50000, 0);
		assert_int_equal(tk_logger_stop(), TK_OK);
		assert_int_equal(tk_logger_get_stats(&st), TK_OK);
		read_trace(path, &l);
		print_message("stats: %llu dropped; file: %llu\n", (unsigned long long)st.events_dropped,
			      (unsigned long long)l.dropped);
		assert_true(st.events_dropped > 0);
		assert_int_equal(st.events_dropped, l.dropped);
		free(l.v);
	}
}

/* ---- one time line (issue 9 item 2) ------------------------------------------------------ */

static uint64_t header_u64(const char *path, const char *key)
{
	struct traceparser_state *st = traceparser_init(NULL);
	const char *v;
	uint64_t x = 0;

	assert_non_null(st);
	assert_int_equal(traceparser(st, NULL, path), 0);
	v = tk_traceparser_header_value(st, key, NULL);
	if (v == NULL)
		fail_msg("%s: no header key %s", path, key);
	while (*v == ' ')
		v++;
	x = strtoull(v, NULL, 10);
	traceparser_destroy(&st);
	return x;
}

static uint64_t raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Event times convert to CLOCK_MONOTONIC_RAW nanoseconds with the header's pair and rate
 * (contracts: time_ns = RAW_NS + (cycles - CLOCK_CYCLES) * 1e9 / CYCLES_PER_SEC), within
 * a tolerance of clock_gettime() readings taken around each event. */
static void test_time_line(void **state)
{
	const char *path = tkt_path("timeline.kev");
	enum { N = 6 };
	uint64_t before[N], after[N], c0, ns0, cps;
	const int64_t tol = 50000; /* 50 us */
	struct evlist l;
	size_t k;
	unsigned i, seen = 0;

	(void)state;
	start_logging(path, 64, 0);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	for (i = 0; i < N; i++) {
		usleep(15000);
		before[i] = raw_ns();
		tk_trace_user(90, i, 0);
		after[i] = raw_ns();
	}
	assert_int_equal(tk_logger_stop(), TK_OK);
	c0 = header_u64(path, "TRACEKIT_CLOCK_CYCLES");
	ns0 = header_u64(path, "TRACEKIT_CLOCK_RAW_NS");
	cps = header_u64(path, "CYCLES_PER_SEC");
	assert_true(cps > 0);
	read_trace(path, &l);
	for (k = 0; k < l.n; k++) {
		const struct ev *e = &l.v[k];
		int64_t ns;
		if (e->cls != USER || e->code != 90)
			continue;
		i = e->w[0];
		assert_true(i < N);
		ns = (int64_t)ns0 + (int64_t)((long double)(int64_t)(e->clk - c0) * 1e9L / (long double)cps);
		if (ns < (int64_t)before[i] - tol || ns > (int64_t)after[i] + tol)
			fail_msg("event %u: %lld ns, taken between %llu and %llu", i, (long long)ns,
				 (unsigned long long)before[i], (unsigned long long)after[i]);
		seen++;
	}
	assert_int_equal(seen, N);
	free(l.v);
}

/* No calibration sleep: finding the rate in a fresh process takes well under the 20 ms
 * the old nanosleep() cost. */
static int child_rate_time(void)
{
	uint64_t t0 = raw_ns(), rate = tk_clock_cycles_per_sec(), t1 = raw_ns();

	printf("%llu %llu\n", (unsigned long long)rate, (unsigned long long)(t1 - t0));
	return rate > 0 ? 0 : 1;
}

static void test_rate_without_sleep(void **state)
{
	const char *out = tkt_path("rate.txt"), *errpath = tkt_path("rate.err");
	unsigned long long rate = 0, ns = 0, best = ~0ull;
	size_t len;
	char *text;
	int i;

	(void)state;
	for (i = 0; i < 7; i++) { /* the fastest of a few fresh processes (a busy machine preempts) */
		assert_int_equal(run_env_child("--rate-time", "", NULL, out, errpath), 0);
		text = tkt_read_file(out, &len);
		assert_non_null(text);
		assert_int_equal(sscanf(text, "%llu %llu", &rate, &ns), 2);
		free(text);
		assert_true(rate > 0);
		if (ns < best)
			best = ns;
	}
	print_message("rate %llu Hz found in %llu ns\n", rate, best);
	assert_true(best < 5000000u);
}

/* ---- owner of every event (issue 9 item 3) ------------------------------------------------ */

/*
 * Every CONTROL BUFFER in the file (also the rest of a buffer written after a flush took
 * its head) is followed, after an optional DROPPED, by a THRUNNING naming this process and
 * the thread whose events follow: each worker's events always carry the same tid, no two
 * workers share one, and the header says TRACEKIT_OWNER=buffer.
 */
static void test_owner_of_every_buffer(void **state)
{
	const char *path = tkt_path("owner.kev");
	uint32_t tid_of[N_THREADS] = { 0 }, cur_tid = 0;
	int want_owner = 0;
	struct evlist l;
	size_t k, buffers = 0, checked = 0;
	unsigned i, j;
	struct traceparser_state *st;
	const char *v;

	(void)state;
	start_logging(path, 1024, 0);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	run_workers(N_THREADS, 100000, 1); /* flushes meanwhile: continued pieces */
	assert_int_equal(tk_logger_stop(), TK_OK);
	st = traceparser_init(NULL);
	assert_int_equal(traceparser(st, NULL, path), 0);
	v = tk_traceparser_header_value(st, "TRACEKIT_OWNER", NULL);
	assert_non_null(v);
	assert_string_equal(v, "buffer");
	traceparser_destroy(&st);

	read_trace(path, &l);
	for (k = 0; k < l.n; k++) {
		const struct ev *e = &l.v[k];
		if (e->cls == 1 && e->code == _TRACE_CONTROL_BUFFER) {
			want_owner = 1;
			buffers++;
			continue;
		}
		if (want_owner) {
			if (e->cls == 1 && (e->code == _TRACE_CONTROL_DROPPED || e->code == _TRACE_CONTROL_TIME))
				continue;
			if (e->cls != PR_TH || e->code != STATE_RUNNING)
				fail_msg("event %zu: a BUFFER not followed by its owner's THRUNNING", k);
			assert_int_equal(e->w[0], (uint32_t)getpid());
			assert_true(e->w[1] != 0);
			cur_tid = e->w[1];
			want_owner = 0;
			continue;
		}
		if (e->cls == USER && e->code >= 40 && e->code < 40 + N_THREADS) {
			i = e->code - 40;
			if (tid_of[i] == 0)
				tid_of[i] = cur_tid;
			if (tid_of[i] != cur_tid)
				fail_msg("worker %u: event after the owner %u, earlier %u", i, cur_tid, tid_of[i]);
			checked++;
		}
	}
	print_message("%zu buffers, %zu events checked\n", buffers, checked);
	assert_true(buffers > 100);
	assert_int_equal(checked + l.dropped, (size_t)N_THREADS * 100000);
	for (i = 0; i < N_THREADS; i++)
		for (j = i + 1; j < N_THREADS; j++)
			assert_true(tid_of[i] != tid_of[j]);
	free(l.v);
}

/* Ring mode: a thread's exit queues its last buffer and takes no other, so it does not
 * reuse (and lose) a queued buffer of another thread for nothing. */
static void *one_event_thread(void *arg)
{
	(void)arg;
	tk_trace_user(92, 0, 0);
	return NULL;
}

static void test_ring_thread_exit_takes_no_buffer(void **state)
{
	const char *path = tkt_path("ring_exit.kev");
	tk_logger_stats st0, st1;
	pthread_t th;

	(void)state;
	start_logging(path, 4, 1);
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	emit_numbered(93, 8 * 1024); /* the ring is full of this thread's buffers */
	assert_int_equal(tk_logger_get_stats(&st0), TK_OK);
	assert_int_equal(pthread_create(&th, NULL, one_event_thread, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(tk_logger_get_stats(&st1), TK_OK);
	/* its first buffer reused the oldest queued one; its exit reused none */
	assert_int_equal(st1.buffers_overwritten - st0.buffers_overwritten, 1);
	assert_int_equal(tk_logger_stop(), TK_OK);
}

/* A fork()ed child that records names itself, not its parent, as the owner of its buffers. */
static void test_owner_after_fork(void **state)
{
	const char *path = tkt_path("owner_fork.kev");
	struct evlist l;
	size_t k, owners = 0;
	pid_t pid;
	int status;

	(void)state;
	start_logging(path, 8, 0); /* the parent records first: its pid is known */
	TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
	TraceEvent(_NTO_TRACE_STARTNOSTATE);
	tk_trace_user(91, 1, 0);
	assert_int_equal(tk_logger_stop(), TK_OK);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		tk_logger_options o = { .n_buffers = 8 };
		reset_trace();
		if (TraceEvent(_NTO_TRACE_ALLOCBUFFER, 8u, NULL) != 0 || tk_logger_start(path, &o) != TK_OK)
			_exit(2);
		TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER);
		TraceEvent(_NTO_TRACE_STARTNOSTATE);
		tk_trace_user(91, 2, 0);
		setenv("TK_TEST_KEEP", "1", 1);
		_exit(tk_logger_stop() == TK_OK ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	read_trace(path, &l);
	for (k = 0; k < l.n; k++) {
		if (l.v[k].cls == PR_TH && l.v[k].code == STATE_RUNNING) {
			assert_int_equal(l.v[k].w[0], (uint32_t)pid);
			owners++;
		}
	}
	assert_true(owners > 0);
	assert_int_equal(count(&l, USER, 91), 1);
	free(l.v);
}

/* Item 12: under TRACEKIT_LOG, a program that allocates its own buffers and starts its own
 * logger (the SAT guide's pattern) runs as without the variable: the environment's logger
 * hands over, both files are complete. */
static int child_own_logger(void)
{
	const char *own = getenv("TK_TEST_OWN_FILE");

	if (TraceEvent(_NTO_TRACE_ALLOCBUFFER, 8u, NULL) != 0)
		return 3;
	if (tk_logger_start(own, NULL) != TK_OK)
		return 4;
	if (TraceEvent(_NTO_TRACE_DELALLCLASSES) != 0 || TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER) != 0 ||
	    TraceEvent(_NTO_TRACE_STARTNOSTATE) != 0)
		return 5;
	if (TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 111, 1, 11) != 0)
		return 6;
	return tk_logger_stop() == TK_OK ? 0 : 7;
}

static void test_env_program_own_logger(void **state)
{
	const char *path = tkt_path("env-own.kev"), *own = tkt_path("own.kev"), *errpath = tkt_path("own.err");
	static char extra[4200];
	struct evlist l;
	size_t len;
	char *err;

	(void)state;
	snprintf(extra, sizeof(extra), "TK_TEST_OWN_FILE=%s", own);
	assert_int_equal(run_env_child("--own-logger", path, extra, NULL, errpath), 0);
	err = tkt_read_file(errpath, &len);
	assert_non_null(err);
	if (len != 0)
		fail_msg("unexpected message: %s", err);
	free(err);
	read_trace(own, &l);
	assert_int_equal(count(&l, USER, 111), 1);
	free(l.v);
	read_trace(path, &l); /* completed, readable */
	free(l.v);
}

/* Audit19 item 2: TRACEKIT_LOG=rel.kev and a program that chdir()s before it exits. */
static int child_chdir(void)
{
	unsigned i;

	for (i = 0; i < 100; i++)
		tk_trace_user(5, i, 0);
	if (chdir(getenv("TK_TEST_CHDIR")) != 0)
		return 3;
	for (i = 0; i < 100; i++)
		tk_trace_user(6, i, 0);
	return 0;
}

/*
 * The trace is completed where the program started (the relative name is resolved at the
 * open), whole; the directory it moved to holds rel.kev.part and rel.kev of its own, which
 * stay as they were (before, its rel.kev.part was renamed over its rel.kev and the run
 * reported nothing).
 */
static void test_env_program_chdir(void **state)
{
	char *start = strdup(tkt_path("cd-start")), *moved = strdup(tkt_path("cd-moved"));
	char *errpath = strdup(tkt_path("cd.err")), path[700], *text;
	static char extra[4200];
	int home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;
	struct evlist l;
	size_t len;

	(void)state;
	assert_true(home >= 0);
	assert_int_equal(mkdir(start, 0755), 0);
	assert_int_equal(mkdir(moved, 0755), 0);
	snprintf(path, sizeof(path), "%s/rel.kev.part", moved);
	tkt_write_file(path, "NOT A TRACE\n", 12);
	snprintf(path, sizeof(path), "%s/rel.kev", moved);
	tkt_write_file(path, "IMPORTANT\n", 10);
	snprintf(extra, sizeof(extra), "TK_TEST_CHDIR=%s", moved);
	assert_int_equal(chdir(start), 0);
	rc = run_env_child("--autostart-chdir", "rel.kev", extra, NULL, errpath);
	assert_int_equal(fchdir(home), 0);
	close(home);
	assert_int_equal(rc, 0);
	text = tkt_read_file(errpath, &len);
	assert_non_null(text);
	if (len != 0)
		fail_msg("unexpected message: %s", text);
	free(text);
	snprintf(path, sizeof(path), "%s/rel.kev", start);
	read_trace(path, &l);
	assert_int_equal(count(&l, USER, 5), 100);
	assert_int_equal(count(&l, USER, 6), 100);
	free(l.v);
	snprintf(path, sizeof(path), "%s/rel.kev.part", start);
	assert_false(tkt_exists(path));
	snprintf(path, sizeof(path), "%s/rel.kev.part", moved);
	text = tkt_read_file(path, &len);
	assert_non_null(text);
	assert_string_equal(text, "NOT A TRACE\n");
	free(text);
	snprintf(path, sizeof(path), "%s/rel.kev", moved);
	text = tkt_read_file(path, &len);
	assert_non_null(text);
	assert_string_equal(text, "IMPORTANT\n");
	free(text);
	free(start);
	free(moved);
	free(errpath);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--autostart-child") == 0)
		return child_autostart();
	if (argc > 1 && strcmp(argv[1], "--autostart-big") == 0)
		return child_autostart_big();
	if (argc > 1 && strcmp(argv[1], "--own-logger") == 0)
		return child_own_logger();
	if (argc > 1 && strcmp(argv[1], "--rate-time") == 0)
		return child_rate_time();
	if (argc > 1 && strcmp(argv[1], "--autostart-closefds") == 0)
		return child_close_fds();
	if (argc > 1 && strcmp(argv[1], "--autostart-close-stdout") == 0)
		return child_close_stdout();
	if (argc > 1 && strcmp(argv[1], "--autostart-close-all") == 0)
		return child_close_all();
	if (argc > 1 && strcmp(argv[1], "--autostart-chdir") == 0)
		return child_chdir();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_inserts_and_log_calls),
		cmocka_unit_test(test_traceevent_kercalls),
		cmocka_unit_test(test_start_state),
		cmocka_unit_test(test_new_threads_announced),
		cmocka_unit_test(test_static_filters),
		cmocka_unit_test(test_dynamic_filters),
		cmocka_unit_test(test_function_hooks),
		cmocka_unit_test(test_ring_mode),
		cmocka_unit_test(test_linear_mode_many_threads),
		cmocka_unit_test(test_flush_while_writing),
		cmocka_unit_test(test_drop_accounting),
		cmocka_unit_test(test_realloc_buffers),
		cmocka_unit_test(test_full_disk),
		cmocka_unit_test(test_closed_pipe),
		cmocka_unit_test(test_env_autostart),
		cmocka_unit_test(test_handler_start_stop_race),
		cmocka_unit_test(test_filtered_inserts_return_0),
		cmocka_unit_test(test_event_masks),
		cmocka_unit_test(test_buffer_starts_with_time),
		cmocka_unit_test(test_shared_pool_read_from_outside),
		cmocka_unit_test(test_env_full_disk),
		cmocka_unit_test(test_write_error_statistics),
		cmocka_unit_test(test_class_and_event_modes),
		cmocka_unit_test(test_overwritebuffer),
		cmocka_unit_test(test_ring_written_on_stop_and_exit),
		cmocka_unit_test(test_drops_many_threads),
		cmocka_unit_test(test_env_program_closes_fds),
		cmocka_unit_test(test_env_program_closes_all_fds),
		cmocka_unit_test(test_env_stdout_closed),
		cmocka_unit_test(test_env_setuid_refused),
		cmocka_unit_test(test_ring_drops_in_file),
		cmocka_unit_test(test_time_line),
		cmocka_unit_test(test_rate_without_sleep),
		cmocka_unit_test(test_owner_of_every_buffer),
		cmocka_unit_test(test_owner_after_fork),
		cmocka_unit_test(test_ring_thread_exit_takes_no_buffer),
		cmocka_unit_test(test_env_program_own_logger),
		cmocka_unit_test(test_env_program_chdir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
