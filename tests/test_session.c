/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of trace sessions (src/session, src/trace/trace_session.c): creating and
 * opening a region, a second logger refused, an orphaned region found and recovered, every
 * field of a damaged region refused with its byte offset, another user's region and an
 * open mode refused, a truncated region, the futex, the configuration calls and the
 * registry. Then the recorder in a session: three processes recording into one session
 * configured by a fourth, the test playing the logger; a writer SIGKILLed at random points
 * while it records (every committed event found, in order, once); a fork()ed child that
 * does not exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "session/session_layout.h"
#include "tk_test.h"
#include "trace/trace_internal.h"
#include "tracekit/session.h"
#include "tracekit/trace.h"

static char *name_of(const char *what)
{
	static char names[8][64];
	static unsigned k;
	char *n = names[k++ % 8];

	snprintf(n, 64, "tkt%d_%s", (int)getpid(), what);
	return n;
}

static void shm_path(const char *name, char *out, size_t cap)
{
	char shm[128];

	assert_int_equal(tk_session_shm_name(name, shm, sizeof(shm)), TK_OK);
	snprintf(out, cap, "/dev/shm%s", shm);
}

static void must_contain(const char *msg, const char *what)
{
	if (strstr(msg, what) == NULL)
		fail_msg("\"%s\" does not say \"%s\"", msg, what);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- names, create, open ------------------------------------------------------------------ */

static void test_names(void **state)
{
	char buf[128];
	char long_name[TK_SESSION_NAME_MAX + 2];

	(void)state;
	assert_true(tk_session_name_valid("default"));
	assert_true(tk_session_name_valid("a.b-c_D9"));
	assert_false(tk_session_name_valid(""));
	assert_false(tk_session_name_valid(".hidden"));
	assert_false(tk_session_name_valid("a/b"));
	assert_false(tk_session_name_valid("a b"));
	assert_false(tk_session_name_valid(NULL));
	memset(long_name, 'x', sizeof(long_name));
	long_name[TK_SESSION_NAME_MAX] = '\0';
	assert_true(tk_session_name_valid(long_name));
	long_name[TK_SESSION_NAME_MAX] = 'x';
	long_name[TK_SESSION_NAME_MAX + 1] = '\0';
	assert_false(tk_session_name_valid(long_name));
	assert_int_equal(tk_session_shm_name("default", buf, sizeof(buf)), TK_OK);
	{
		char want[64];
		snprintf(want, sizeof(want), "/tracekit.%u.default", (unsigned)geteuid());
		assert_string_equal(buf, want);
	}
	assert_int_equal(tk_session_shm_name("default", buf, 8), TK_EOVERFLOW);
	assert_int_equal(tk_session_shm_name("../x", buf, sizeof(buf)), TK_EINVAL);
	assert_int_equal(tk_session_region_size(0), 0);
	assert_true(tk_session_region_size(1) > 0);
	assert_true(tk_session_region_size(2) - tk_session_region_size(1) >= TK_SESSION_BUFFER_SIZE);
}

static void test_create_open_close(void **state)
{
	const char *name = name_of("basic");
	tk_session *lg, *w, *again;
	tk_session_process_info info;
	char path[256];
	struct stat st;
	int found = 0;
	uint32_t i, lpid;
	uint64_t cps, c0, ns0;

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 8), TK_OK);
	shm_path(name, path, sizeof(path));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	assert_int_equal((size_t)st.st_size, tk_session_region_size(8));
	assert_int_equal(tk_pool_n_buffers(tk_session_pool(lg)), 8);
	assert_int_equal(tk_pool_buffer_size(tk_session_pool(lg)), TK_SESSION_BUFFER_SIZE);
	tk_session_logger(lg, &lpid, NULL);
	assert_int_equal(lpid, (uint32_t)getpid());
	tk_session_clock(lg, &cps, &c0, &ns0);
	assert_true(cps > 0 && c0 > 0 && ns0 > 0);
	assert_false(tk_session_started(lg));

	/* a second logger on the name: refused, naming the live one */
	assert_int_equal(tk_session_create(&again, name, 8), TK_EBUSY);
	{
		char want[64];
		snprintf(want, sizeof(want), "pid %d", (int)getpid());
		must_contain(tk_session_errmsg(), want);
	}
	/* recovery while the logger lives: refused too */
	assert_int_equal(tk_session_open(&again, name, TK_SESSION_RECOVER), TK_EBUSY);

	/* a writer registers */
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_OK);
	assert_int_equal(tk_session_wait(lg, 0), 1); /* registering woke the logger */
	for (i = 0; i < tk_session_n_slots(lg); i++) {
		assert_int_equal(tk_session_process(lg, i, &info), TK_OK);
		if (info.state == TK_SESSION_ATTACHED && info.pid == (uint32_t)getpid()) {
			found = 1;
			assert_true(tk_session_process_alive(&info));
			assert_true(info.comm[0] != '\0');
		}
	}
	assert_true(found);
	assert_int_equal(tk_session_process(lg, tk_session_n_slots(lg), &info), TK_ERANGE);
	assert_int_equal(tk_session_reap(lg, (uint32_t)getpid()), TK_OK);
	assert_int_equal(tk_session_reap(lg, (uint32_t)getpid()), TK_ENOENT);
	assert_int_equal(tk_session_close(w), TK_OK);
	assert_int_equal(stat(path, &st), 0); /* a writer's close leaves the region */
	assert_int_equal(tk_session_close(lg), TK_OK);
	assert_int_not_equal(stat(path, &st), 0); /* the logger's removes it */
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_ENOENT);
	must_contain(tk_session_errmsg(), "no such session");
	assert_int_equal(tk_session_create(&lg, "bad/name", 8), TK_EINVAL);
	assert_int_equal(tk_session_create(&lg, name, TK_SESSION_MAX_BUFFERS + 1), TK_EINVAL);
	assert_int_equal(tk_session_open(&w, name, 0), TK_EINVAL);
}

/* A logger that dies leaves an orphan: create refuses it, a writer finds no logger, recovery
 * takes it (once), and then a new session can be created. */
static void test_orphan(void **state)
{
	const char *name = name_of("orphan");
	tk_session *s, *r, *r2;
	pid_t pid = fork();
	int st;

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0) {
		tk_session *c;
		_exit(tk_session_create(&c, name, 4) == TK_OK ? 0 : 1); /* dies holding it */
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(tk_session_create(&s, name, 4), TK_EEXIST);
	must_contain(tk_session_errmsg(), "orphaned");
	assert_int_equal(tk_session_open(&s, name, TK_SESSION_WRITER), TK_ENOENT);
	must_contain(tk_session_errmsg(), "no logger");
	assert_int_equal(tk_session_open(&r, name, TK_SESSION_RECOVER), TK_OK);
	{
		uint32_t lpid;
		tk_session_logger(r, &lpid, NULL);
		assert_int_equal(lpid, (uint32_t)pid);
	}
	assert_int_equal(tk_session_open(&r2, name, TK_SESSION_RECOVER), TK_EBUSY);
	assert_int_equal(tk_session_create(&s, name, 4), TK_EBUSY); /* the recoverer holds the lock */
	assert_int_equal(tk_session_close(r), TK_OK);
	assert_int_equal(tk_session_create(&s, name, 4), TK_OK);
	assert_int_equal(tk_session_close(s), TK_OK);
}

/* ---- the check: every field ------------------------------------------------------------------ */

struct region_copy {
	unsigned char *p;
	size_t size;
};

static struct region_copy copy_of_new_region(const char *name, uint32_t n_buffers)
{
	tk_session *lg;
	char path[256];
	struct region_copy c;
	int fd;
	void *m;

	assert_int_equal(tk_session_create(&lg, name, n_buffers), TK_OK);
	shm_path(name, path, sizeof(path));
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	c.size = tk_session_region_size(n_buffers);
	m = mmap(NULL, c.size, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	c.p = aligned_alloc(4096, c.size);
	assert_non_null(c.p);
	memcpy(c.p, m, c.size);
	munmap(m, c.size);
	close(fd);
	assert_int_equal(tk_session_close(lg), TK_OK);
	return c;
}

struct damage {
	const char *what;
	size_t off;  /* byte to change */
	unsigned width;
	uint64_t value;
	const char *says; /* in the message */
};

static void put(unsigned char *p, size_t off, unsigned width, uint64_t v)
{
	memcpy(p + off, &v, width); /* little-endian */
}

static void test_check_every_field(void **state)
{
	struct region_copy c = copy_of_new_region(name_of("check"), 4);
	unsigned char *orig = malloc(c.size);
	char why[512];
	const struct tk__sess_hdr *h = (const void *)c.p;
	uint64_t cfg = h->config_off, reg = h->registry_off, pool = h->pool_off;
	uint64_t desc = pool + 320, next, cells;
	size_t i;

	(void)state;
	/* pool parts: the pool header's own offsets */
	memcpy(&next, c.p + pool + 32, 8);
	memcpy(&cells, c.p + pool + 40, 8);
	assert_int_equal(tk_session_check(c.p, c.size, why, sizeof(why)), TK_OK);
	assert_string_equal(why, "");
	memcpy(orig, c.p, c.size);
	{
		char b0[32], b8[32], b12[32], b16[32], b28[32], b40[32], b64[32], b72[32], b80[32], b88[32], b92[32],
			b96[32], b104[32], b112[32], b116[32], b120[32], bstarted[48], bring[48], bfilt[48], bslot[48],
			bmode[48], bpmagic[48], bpver[48], bpn[48], bphead[48], bplink[48], bpdesc[48], bpcomm[48],
			bpcell[48], bpqm[48];
		struct damage d[] = {
			{ "magic", 0, 1, 'X', b0 },
			{ "version", 8, 4, 2, b8 },
			{ "hdr_size", 12, 4, 64, b12 },
			{ "region_size", 16, 8, c.size + 4096, b16 },
			{ "logger_pid", 28, 4, 0, b28 },
			{ "cycles_per_sec", 40, 8, 0, b40 },
			{ "config_off", 64, 8, cfg + 64, b64 },
			{ "config_size", 72, 8, 100, b72 },
			{ "registry_off", 80, 8, c.size, b80 },
			{ "n_slots", 88, 4, 0, b88 },
			{ "n_slots", 88, 4, 1u << 30, b88 },
			{ "slot_size", 92, 4, 64, b92 },
			{ "pool_off", 96, 8, pool + 64, b96 },
			{ "pool_size", 104, 8, 1ull << 40, b104 },
			{ "n_buffers", 112, 4, 0, b112 },
			{ "n_buffers", 112, 4, 5, "(n_buffers, byte 112)" },
			{ "buf_size", 116, 4, 4096, b116 },
			{ "name", 120, 1, '/', b120 },
			{ "name", 120, 1, 0, b120 },
			{ "config started", cfg + 8, 4, 7, bstarted },
			{ "config ring", cfg + 16, 4, 0xffffffffu, bring },
			{ "config n_filtered", cfg + 32 + 4 * 3, 4, 1025, bfilt },
			{ "registry slot state", reg + 128 * 5, 4, 9, bslot },
			{ "registry slot modes", reg + 128 * 7 + 64 + 3, 1, 3, bmode },
			{ "pool magic", pool, 4, 0, bpmagic },
			{ "pool version", pool + 4, 4, 1, bpver },
			{ "pool n_bufs", pool + 8, 4, 9, "(pool n_bufs, byte" },
			{ "pool queue_mask", pool + 56, 8, 1, bpqm },
			{ "pool free_head", pool + 64, 8, 77, bphead },
			{ "pool free link", pool + next + 4 * 2, 4, 1000, bplink },
			{ "pool descriptor state", desc + 64 * 1 + 4, 4, 4, bpdesc },
			{ "pool descriptor committed", desc + 64 * 3, 4, 20000, bpcomm },
			{ "pool queue cell", pool + cells + 16 * 2 + 8, 4, 4, bpcell },
		};
		snprintf(b0, sizeof(b0), "byte 0 ");
		snprintf(b8, sizeof(b8), "byte 8 ");
		snprintf(b12, sizeof(b12), "byte 12 ");
		snprintf(b16, sizeof(b16), "byte 16 ");
		snprintf(b28, sizeof(b28), "byte 28 ");
		snprintf(b40, sizeof(b40), "byte 40 ");
		snprintf(b64, sizeof(b64), "byte 64 ");
		snprintf(b72, sizeof(b72), "byte 72 ");
		snprintf(b80, sizeof(b80), "byte 80 ");
		snprintf(b88, sizeof(b88), "byte 88 ");
		snprintf(b92, sizeof(b92), "byte 92 ");
		snprintf(b96, sizeof(b96), "byte 96 ");
		snprintf(b104, sizeof(b104), "byte 104 ");
		snprintf(b112, sizeof(b112), "byte 112 ");
		snprintf(b116, sizeof(b116), "byte 116 ");
		snprintf(b120, sizeof(b120), "byte 120 ");
		snprintf(bstarted, sizeof(bstarted), "byte %llu (config started)", (unsigned long long)(cfg + 8));
		snprintf(bring, sizeof(bring), "byte %llu (config ring)", (unsigned long long)(cfg + 16));
		snprintf(bfilt, sizeof(bfilt), "byte %llu (config n_filtered[3])", (unsigned long long)(cfg + 44));
		snprintf(bslot, sizeof(bslot), "byte %llu (registry slot 5 state)", (unsigned long long)(reg + 640));
		snprintf(bmode, sizeof(bmode), "byte %llu (registry slot 7 modes[3])",
			 (unsigned long long)(reg + 128 * 7 + 67));
		snprintf(bpmagic, sizeof(bpmagic), "byte %llu (pool magic)", (unsigned long long)pool);
		snprintf(bpver, sizeof(bpver), "byte %llu (pool version)", (unsigned long long)(pool + 4));
		snprintf(bpn, sizeof(bpn), "byte %llu (pool n_bufs", (unsigned long long)(pool + 8));
		snprintf(bpqm, sizeof(bpqm), "byte %llu (pool queue_mask)", (unsigned long long)(pool + 56));
		snprintf(bphead, sizeof(bphead), "byte %llu (pool free_head)", (unsigned long long)(pool + 64));
		snprintf(bplink, sizeof(bplink), "byte %llu (pool free link 2)", (unsigned long long)(pool + next + 8));
		snprintf(bpdesc, sizeof(bpdesc), "byte %llu (pool descriptor 1 state)",
			 (unsigned long long)(desc + 64 + 4));
		snprintf(bpcomm, sizeof(bpcomm), "byte %llu (pool descriptor 3 committed)",
			 (unsigned long long)(desc + 64 * 3));
		snprintf(bpcell, sizeof(bpcell), "byte %llu (pool queue cell 2)", (unsigned long long)(pool + cells + 40));
		for (i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
			int rc;
			memcpy(c.p, orig, c.size);
			put(c.p, d[i].off, d[i].width, d[i].value);
			rc = tk_session_check(c.p, c.size, why, sizeof(why));
			if (rc == TK_OK)
				fail_msg("damaged %s (byte %zu) was accepted", d[i].what, d[i].off);
			assert_int_equal(rc, strcmp(d[i].what, "version") == 0 ? TK_EVERSION : TK_EFORMAT);
			if (strstr(why, d[i].says) != NULL)
				continue;
			fail_msg("damaged %s: \"%s\" does not say \"%s\"", d[i].what, why, d[i].says);
		}
	}
	/* truncated: every size short of the header, and short of the whole region */
	memcpy(c.p, orig, c.size);
	for (i = 0; i < 320; i += 7)
		assert_int_equal(tk_session_check(c.p, i, why, sizeof(why)), TK_EFORMAT);
	assert_int_equal(tk_session_check(c.p, c.size - 4096, why, sizeof(why)), TK_EFORMAT);
	must_contain(why, "byte 16 (region_size)");
	assert_int_equal(tk_session_check(NULL, 0, why, sizeof(why)), TK_EFORMAT);
	assert_int_equal(tk_session_check(c.p, c.size, NULL, 0), TK_OK);
	free(orig);
	free(c.p);
}

/* The same through tk_session_open(): a damaged live region, a truncated one, another user's,
 * one open to others. */
static void test_open_refuses(void **state)
{
	const char *name = name_of("refuse");
	tk_session *lg, *w;
	char path[256];
	int fd;
	unsigned char *m;
	size_t size = tk_session_region_size(4);

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 4), TK_OK);
	shm_path(name, path, sizeof(path));
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);

	m[8] = 9; /* version */
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_EVERSION);
	must_contain(tk_session_errmsg(), "byte 8 (version)");
	m[8] = 1;
	{
		uint64_t pool_off;
		memcpy(&pool_off, m + 96, 8);
		put(m, 96, 8, 4096);
		assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_EFORMAT);
		must_contain(tk_session_errmsg(), "byte 96 (pool_off)");
		put(m, 96, 8, pool_off);
	}
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_OK);
	assert_int_equal(tk_session_close(w), TK_OK);

	/* open to others */
	assert_int_equal(fchmod(fd, 0644), 0);
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_EACCES);
	must_contain(tk_session_errmsg(), "mode 644");
	assert_int_equal(fchmod(fd, 0600), 0);

	/* another user's (root can give it away) */
	if (geteuid() == 0) {
		assert_int_equal(fchown(fd, 65534, 65534), 0);
		assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_EACCES);
		must_contain(tk_session_errmsg(), "belongs to uid 65534");
		assert_int_equal(tk_session_open(&w, name, TK_SESSION_RECOVER), TK_EACCES);
		assert_int_equal(fchown(fd, 0, 0), 0);
		/* and a process of that user cannot even open root's region of its name */
		{
			pid_t pid = fork();
			int st;
			if (pid == 0) {
				tk_session *x;
				int rc;
				if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
					_exit(2);
				rc = tk_session_open(&x, name, TK_SESSION_WRITER); /* /tracekit.65534.<name>: none */
				_exit(rc == TK_ENOENT ? 0 : 1);
			}
			assert_int_equal(waitpid(pid, &st, 0), pid);
			assert_int_equal(WEXITSTATUS(st), 0);
		}
	}
	/* the owner uid in the header */
	put(m, 24, 4, geteuid() + 1);
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_EACCES);
	must_contain(tk_session_errmsg(), "byte 24 (owner_uid)");
	put(m, 24, 4, geteuid());

	/* truncated */
	munmap(m, size);
	assert_int_equal(ftruncate(fd, (off_t)(size - 4096)), 0);
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_EFORMAT);
	must_contain(tk_session_errmsg(), "region_size");
	assert_int_equal(ftruncate(fd, 100), 0);
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_EFORMAT);
	must_contain(tk_session_errmsg(), "byte 0");
	close(fd);
	tk_session_abandon(lg); /* its mapping is gone under it: only unlink */
	shm_unlink(strrchr(path, '/'));
}

/* ---- futex, configuration, registry ------------------------------------------------------------ */

struct waker {
	tk_session *s;
	unsigned delay_ms;
};

static void *wake_later(void *arg)
{
	struct waker *w = arg;

	usleep(w->delay_ms * 1000u);
	tk_session_wake(w->s);
	return NULL;
}

static void test_wait_wake(void **state)
{
	const char *name = name_of("futex");
	tk_session *lg, *w;
	pthread_t th;
	struct waker wk;
	uint64_t t0;

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 4), TK_OK);
	assert_int_equal(tk_session_wait(lg, 0), 0);
	t0 = now_ms();
	assert_int_equal(tk_session_wait(lg, 30), 0); /* times out */
	assert_true(now_ms() - t0 >= 25);
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_OK);
	assert_int_equal(tk_session_wait(lg, 1000), 1); /* the registration */
	wk.s = w;
	wk.delay_ms = 50;
	assert_int_equal(pthread_create(&th, NULL, wake_later, &wk), 0);
	t0 = now_ms();
	assert_int_equal(tk_session_wait(lg, 10000), 1); /* woken, not timed out */
	assert_true(now_ms() - t0 < 5000);
	pthread_join(th, NULL);
	tk_session_wake(w);
	tk_session_wake(w);
	assert_int_equal(tk_session_wait(lg, 0), 1);
	assert_int_equal(tk_session_wait(lg, 0), 0);
	tk_session_close(w);
	tk_session_close(lg);
}

static void test_control(void **state)
{
	const char *name = name_of("control");
	tk_session *lg, *w;
	struct tk__trace_config *cfg;
	struct tk__sess_slot *sl;
	uint32_t g0;
	const unsigned user = TRACE_CLS(_TRACE_USER_C);

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 4), TK_OK);
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_OK);
	cfg = tk__session_config(lg);
	sl = tk__session_slot(w);
	assert_non_null(sl);
	g0 = tk_session_generation(lg);
	assert_int_equal(tk_session_set_class(lg, _NTO_TRACE_USER, 1), TK_OK);
	assert_true(tk_session_generation(lg) != g0);
	assert_int_equal(atomic_load(&sl->modes[user]), TK_SESS_MODE_OFF); /* stopped */
	assert_int_equal(tk_session_start(lg), TK_OK);
	assert_true(tk_session_started(lg));
	assert_int_equal(atomic_load(&cfg->start_epoch), 1);
	/* the writer has not announced itself in this epoch: filtered, so that it does */
	assert_int_equal(atomic_load(&sl->modes[user]), TK_SESS_MODE_FILTERED);
	atomic_store(&sl->epoch, 1);
	tk__session_lock(lg);
	tk__session_changed(lg);
	tk__session_unlock(lg);
	assert_int_equal(atomic_load(&sl->modes[user]), TK_SESS_MODE_FAST);
	assert_int_equal(atomic_load(&sl->modes[TRACE_CLS(_TRACE_KER_CALL_C)]), TK_SESS_MODE_OFF);
	assert_int_equal(tk_session_set_all_classes(lg, 1), TK_OK);
	assert_int_equal(atomic_load(&sl->modes[TRACE_CLS(_TRACE_KER_CALL_C)]), TK_SESS_MODE_FAST);
	assert_int_equal(tk_session_set_all_wide(lg, 1), TK_OK);
	assert_true(trace_bit(cfg->wide[user], 5));
	assert_int_equal(tk_session_set_class_wide(lg, _NTO_TRACE_USER, 0), TK_OK);
	assert_false(trace_bit(cfg->wide[user], 5));
	assert_int_equal(tk_session_set_class(lg, 999, 1), TK_EINVAL);
	assert_int_equal(tk_session_set_ring(lg, 1), TK_OK);
	assert_int_equal(atomic_load(&cfg->ring), 1);
	assert_int_equal(tk_session_start(lg), TK_OK); /* already started: the same epoch */
	assert_int_equal(atomic_load(&cfg->start_epoch), 1);
	assert_int_equal(tk_session_stop(lg), TK_OK);
	assert_false(tk_session_started(lg));
	assert_int_equal(atomic_load(&sl->modes[user]), TK_SESS_MODE_OFF);
	assert_int_equal(tk_session_start(lg), TK_OK);
	assert_int_equal(atomic_load(&cfg->start_epoch), 2);

	/* a configuration lock left by a dead process is taken over */
	{
		pid_t pid = fork();
		int st;
		if (pid == 0) {
			tk_session *c;
			if (tk_session_open(&c, name, TK_SESSION_WRITER) != TK_OK)
				_exit(1);
			tk__session_lock(c);
			_exit(0); /* dies holding it */
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_int_equal(WEXITSTATUS(st), 0);
		assert_int_equal(tk_session_stop(lg), TK_OK); /* returns */
	}
	tk_session_close(w);
	tk_session_close(lg);
}

static void test_registry_full(void **state)
{
	const char *name = name_of("full");
	tk_session *lg, *w;
	uint32_t i;
	int rc = 0;

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 4), TK_OK);
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_OK);
	for (i = 1; i < TK_SESSION_SLOTS; i++) {
		rc = tk_session_register(w);
		assert_true(rc >= 0);
	}
	assert_int_equal(tk_session_register(w), TK_EBUSY);
	must_contain(tk_session_errmsg(), "registry");
	{
		tk_session *w2;
		assert_int_equal(tk_session_open(&w2, name, TK_SESSION_WRITER), TK_EBUSY);
	}
	/* a reaped slot is reused */
	assert_int_equal(tk_session_reap(lg, (uint32_t)getpid()), TK_OK);
	assert_true(tk_session_register(w) >= 0);
	assert_int_equal(tk_session_register(w), 1); /* all reaped slots came back */
	(void)rc;
	tk_session_close(w);
	tk_session_close(lg);
}

/* ---- the recorder in a session: the test plays the logger ----------------------------------------- */

struct seen {
	uint32_t pid, tid;
	uint32_t writer, next; /* the next sequence number expected */
	unsigned long long n;
	int proc_named;      /* a PROCCREATE_NAME of this pid */
};

struct drain {
	struct seen v[64];
	unsigned n;
	unsigned long long dropped_reported;
	unsigned long long events;
	int errors;
	char err[512];
};

static struct seen *seen_of(struct drain *d, uint32_t pid, uint32_t tid)
{
	unsigned i;

	for (i = 0; i < d->n; i++)
		if (d->v[i].pid == pid && d->v[i].tid == tid)
			return &d->v[i];
	assert_true(d->n < 64);
	d->v[d->n] = (struct seen){ pid, tid, 0, 0, 0, 0 };
	return &d->v[d->n++];
}

/*
 * One buffer: TIME, BUFFER, [DROPPED], THRUNNING (pid, tid), then events. User event 1 is
 * (sequence, tid as the writer knows it); its sequence must be the next of its thread unless
 * records were dropped (then it may skip ahead, never back).
 */
static void check_buffer(const void *buf, uint32_t n, uint32_t idx, const tk_pool_desc *desc, void *ctx)
{
	struct drain *d = ctx;
	const traceevent_t *s = buf;
	uint32_t i, pid, tid, first = TRACE_SLOT_OWNER;
	struct seen *sn;

	(void)idx;
	if (n == 0)
		return; /* taken, killed before its head was committed */
	if (n < 3 || !TRACE_IS_CONTROL(s[0].header, _TRACE_CONTROL_TIME) ||
	    !TRACE_IS_CONTROL(s[1].header, _TRACE_CONTROL_BUFFER)) {
		d->errors++;
		snprintf(d->err, sizeof(d->err), "buffer of %u records without its head", n);
		return;
	}
	if (TRACE_IS_CONTROL(s[2].header, _TRACE_CONTROL_DROPPED)) {
		d->dropped_reported += (uint64_t)s[2].data[1] | (uint64_t)s[2].data[2] << 32;
		first++;
	}
	pid = s[first].data[1];
	tid = s[first].data[2];
	if (pid != desc->owner_pid || tid != desc->owner_tid) {
		d->errors++;
		snprintf(d->err, sizeof(d->err), "THRUNNING %u/%u, descriptor %u/%u", pid, tid, desc->owner_pid,
			 desc->owner_tid);
	}
	sn = seen_of(d, pid, tid);
	for (i = first + 1; i < n; i++) {
		uint32_t h = s[i].header;
		if ((h & 0x7fffu) == (TRACE_CLASS_BITS(TRACE_CLS(_TRACE_PR_TH_C)) | _TRACE_PR_TH_CREATE_P_NAME) &&
		    ((h >> 30) == 0 || (h >> 30) == 1 /* first slot */) && s[i].data[2] == pid)
			sn->proc_named = 1;
		if ((h & 0x7fffu) != (TRACE_CLASS_BITS(TRACE_CLS(_TRACE_USER_C)) | 1u))
			continue;
		d->events++;
		if (s[i].data[2] != tid) {
			d->errors++;
			snprintf(d->err, sizeof(d->err), "event of thread %u in a buffer of thread %u", s[i].data[2], tid);
		}
		if (s[i].data[1] < sn->next) {
			d->errors++;
			snprintf(d->err, sizeof(d->err), "pid %u tid %u: sequence %u after %u (duplicate or out of order)",
				 pid, tid, s[i].data[1], sn->next);
		}
		sn->n++;
		sn->next = s[i].data[1] + 1;
	}
}

/* Drains every queued buffer (checking it) and gives it back. */
static unsigned drain_queue(tk_pool *pool, struct drain *d)
{
	uint32_t idx;
	unsigned n = 0;

	while (tk_pool_dequeue(pool, &idx) == TK_OK) {
		tk_pool_desc *desc = tk_pool_desc_of(pool, idx);
		check_buffer(tk_pool_buffer(pool, idx), atomic_load(&desc->records), idx, desc, d);
		tk_pool_give(pool, idx);
		n++;
	}
	return n;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

#define PER_THREAD 20000u

static void *record_thread(void *arg)
{
	uint32_t i, tid = (uint32_t)gettid_();

	(void)arg;
	for (i = 0; i < PER_THREAD; i++)
		tk_trace_user(1, i, tid);
	return NULL;
}

/* A writer: attaches through TRACEKIT_SESSION on its first TraceEvent(), records from two
 * threads, exits (its buffers are queued at exit). */
static int writer_main(const char *name)
{
	pthread_t th;

	setenv("TRACEKIT_SESSION", name, 1);
	if (TraceEvent(_NTO_TRACE_QUERYVERSION) < 0 || atomic_load(&tk__trace.sess) == NULL)
		return 3;
	/* the configurer has started the trace: ALLOCBUFFER does nothing while attached */
	if (TraceEvent(_NTO_TRACE_ALLOCBUFFER, 2, NULL) != 0 || TraceEvent(_NTO_TRACE_DEALLOCBUFFER) != 0)
		return 4;
	pthread_create(&th, NULL, record_thread, NULL);
	record_thread(NULL);
	pthread_join(th, NULL);
	return 0;
}

static void test_three_writers_one_configurer(void **state)
{
	const char *name = name_of("multi");
	tk_session *lg;
	struct drain *d = calloc(1, sizeof(*d));
	pid_t conf, w[3];
	int st, alive, i;
	uint64_t t0;
	unsigned k;
	tk_pool_stats ps;

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 256), TK_OK); /* room for everything: no drop */
	/* the fourth process configures the session: user class, START */
	conf = fork();
	if (conf == 0) {
		setenv("TRACEKIT_SESSION", name, 1);
		if (TraceEvent(_NTO_TRACE_DELALLCLASSES) != 0 || TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER) != 0 ||
		    TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_PROCESS) != 0 ||
		    TraceEvent(_NTO_TRACE_SETCLASSFAST, _NTO_TRACE_USER) != 0 || TraceEvent(_NTO_TRACE_START) != 0)
			_exit(1);
		_exit(atomic_load(&tk__trace.sess) != NULL ? 0 : 2);
	}
	t0 = now_ms();
	while (!tk_session_started(lg) && now_ms() - t0 < 60000)
		tk_session_wait(lg, 100); /* woken by the START */
	assert_true(tk_session_started(lg));
	assert_int_equal(waitpid(conf, &st, 0), conf);
	assert_int_equal(WEXITSTATUS(st), 0);
	for (i = 0; i < 3; i++) {
		w[i] = fork();
		if (w[i] == 0)
			_exit(writer_main(name));
	}
	/* the logger: drains while they record, until all have exited and nothing is left */
	alive = 3;
	while (alive > 0) {
		tk_session_wait(lg, 50);
		drain_queue(tk_session_pool(lg), d);
		for (i = 0; i < 3; i++) {
			if (w[i] > 0 && waitpid(w[i], &st, WNOHANG) == w[i]) {
				assert_true(WIFEXITED(st));
				assert_int_equal(WEXITSTATUS(st), 0);
				w[i] = -w[i];
				alive--;
			}
		}
	}
	drain_queue(tk_session_pool(lg), d);
	for (i = 0; i < 3; i++) { /* _exit(): the last buffers of each thread are still WRITING */
		assert_true(tk_session_collect_dead(lg, (uint32_t)-w[i], check_buffer, d) >= 0);
		assert_int_equal(tk_session_reap(lg, (uint32_t)-w[i]), TK_OK);
	}
	if (d->errors)
		fail_msg("%d errors; last: %s", d->errors, d->err);
	tk_pool_get_stats(tk_session_pool(lg), &ps);
	assert_int_equal(ps.records_dropped, d->dropped_reported + ps.dropped_pending);
	/* every thread of every writer: all its events when nothing was dropped */
	for (i = 0; i < 3; i++) {
		unsigned threads = 0, named = 0;
		for (k = 0; k < d->n; k++) {
			if (d->v[k].pid != (uint32_t)-w[i] || d->v[k].n == 0)
				continue;
			threads++;
			named |= (unsigned)d->v[k].proc_named;
			/* every event, or every one not dropped (counted) */
			if (ps.records_dropped == 0)
				assert_int_equal(d->v[k].n, PER_THREAD);
			else
				assert_true(d->v[k].n + ps.records_dropped >= PER_THREAD);
		}
		assert_int_equal(threads, 2);
		assert_true(named); /* announced itself after the START made by another process */
	}
	tk_session_close(lg);
	free(d);
}

/* A writer killed at random points of its commit path: every event it committed is in the
 * region (queued, or WRITING up to `committed`), in order, once. */
static void test_sigkill_loop(void **state)
{
	const char *name = name_of("kill");
	tk_session *lg;
	unsigned round, rounds = 12;
	unsigned seed = (unsigned)getpid();

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 256), TK_OK);
	assert_int_equal(tk_session_set_class(lg, _NTO_TRACE_USER, 1), TK_OK);
	assert_int_equal(tk_session_start(lg), TK_OK);
	for (round = 0; round < rounds; round++) {
		struct drain *d = calloc(1, sizeof(*d));
		tk_pool_stats before, after;
		pid_t pid;
		int st, stuck = 0, ready[2];
		unsigned k;
		uint64_t t0;
		char c;

		tk_pool_get_stats(tk_session_pool(lg), &before);
		assert_int_equal(pipe(ready), 0);
		pid = fork();
		if (pid == 0) {
			uint32_t i, tid = (uint32_t)gettid_();
			setenv("TRACEKIT_SESSION", name, 1);
			TraceEvent(_NTO_TRACE_QUERYVERSION); /* attaches */
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			for (i = 0;; i++)
				tk_trace_user(1, i, tid);
		}
		close(ready[1]);
		assert_int_equal(read(ready[0], &c, 1), 1);
		close(ready[0]);
		t0 = now_ms();
		{
			unsigned delay = 1000u + rand_r(&seed) % 20000u; /* 1-21 ms */
			while (now_ms() - t0 < delay / 1000u + 1) /* drain meanwhile, as a logger does */
				drain_queue(tk_session_pool(lg), d);
		}
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFSIGNALED(st));
		drain_queue(tk_session_pool(lg), d);
		while (tk_pool_skip_stuck(tk_session_pool(lg))) { /* killed between claiming and publishing */
			stuck++;
			drain_queue(tk_session_pool(lg), d);
		}
		tk_session_collect_dead(lg, (uint32_t)pid, check_buffer, d);
		assert_int_equal(tk_session_reap(lg, (uint32_t)pid), TK_OK);
		if (d->errors)
			fail_msg("round %u: %d errors; last: %s", round, d->errors, d->err);
		tk_pool_get_stats(tk_session_pool(lg), &after);
		for (k = 0; k < d->n; k++) {
			if (d->v[k].pid != (uint32_t)pid)
				continue;
			/* every sequence number up to the last committed one, except those dropped */
			assert_true(d->v[k].n + (after.records_dropped - before.records_dropped) >= d->v[k].next);
			if (after.records_dropped == before.records_dropped)
				assert_int_equal(d->v[k].n, d->v[k].next);
			assert_true(d->v[k].n > 0);
		}
		/* all buffers back (none lost to the dead writer beyond one it was taking) */
		assert_true(after.n_free + 1 >= before.n_free);
		(void)stuck;
		free(d);
	}
	tk_session_close(lg);
}

/* A forked child that does not exec records as a process of its own, never into its parent's
 * buffer; the parent goes on in its own. */
static void test_fork_child(void **state)
{
	const char *name = name_of("fork");
	tk_session *lg;
	struct drain *d = calloc(1, sizeof(*d));
	pid_t parent, child;
	int st, i;
	unsigned k, parent_seen = 0, child_seen = 0;

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 64), TK_OK);
	assert_int_equal(tk_session_set_class(lg, _NTO_TRACE_USER, 1), TK_OK);
	assert_int_equal(tk_session_set_class(lg, _NTO_TRACE_PROCESS, 1), TK_OK);
	assert_int_equal(tk_session_start(lg), TK_OK);
	parent = fork();
	if (parent == 0) {
		uint32_t tid = (uint32_t)gettid_(), n = 0;
		setenv("TRACEKIT_SESSION", name, 1);
		TraceEvent(_NTO_TRACE_QUERYVERSION);
		for (i = 0; i < 100; i++)
			tk_trace_user(1, n++, tid);
		child = fork();
		if (child == 0) {
			uint32_t ctid = (uint32_t)gettid_(), j;
			for (j = 0; j < 3000; j++)
				tk_trace_user(1, j, ctid);
			_exit(atomic_load(&tk__trace.sess) != NULL ? 0 : 5);
		}
		for (i = 0; i < 3000; i++)
			tk_trace_user(1, n++, tid);
		if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			_exit(6);
		_exit(0);
	}
	assert_int_equal(waitpid(parent, &st, 0), parent);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	drain_queue(tk_session_pool(lg), d);
	{
		/* both registered, both dead (_exit: their last buffers are WRITING) */
		tk_session_process_info info;
		unsigned attached = 0;
		uint32_t s;
		for (s = 0; s < tk_session_n_slots(lg); s++) {
			if (tk_session_process(lg, s, &info) != TK_OK || info.state != TK_SESSION_ATTACHED)
				continue;
			attached++;
			assert_false(tk_session_process_alive(&info));
			assert_true(tk_session_collect_dead(lg, info.pid, check_buffer, d) >= 1);
			assert_int_equal(tk_session_reap(lg, info.pid), TK_OK);
		}
		assert_int_equal(attached, 2);
	}
	if (d->errors)
		fail_msg("%d errors; last: %s", d->errors, d->err);
	for (k = 0; k < d->n; k++) {
		if (d->v[k].n == 0)
			continue;
		if (d->v[k].pid == (uint32_t)parent) {
			parent_seen = 1;
			assert_int_equal(d->v[k].n, 3100);
		} else {
			child_seen = 1;
			assert_int_equal(d->v[k].n, 3000);
			assert_true(d->v[k].proc_named); /* announced as a process of its own */
		}
	}
	assert_true(parent_seen && child_seen);
	tk_session_close(lg);
	free(d);
}

/* A producer that died between claiming a queue cell and publishing it: the consumer skips
 * the cell, the queue works on, and the region still passes the check (new writers attach). */
static void test_stuck_queue_cell(void **state)
{
	const char *name = name_of("stuck");
	tk_session *lg, *w;
	tk_pool *p;
	uint32_t idx, got;
	_Atomic uint64_t *q_head;
	char path[256];

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 4), TK_OK);
	p = tk_session_pool(lg);
	{
		/* the pool header's q_head is at byte 128 of the pool: reach it from the session layout */
		int fd;
		unsigned char *m;
		size_t size = tk_session_region_size(4);
		uint64_t pool_off;
		shm_path(name, path, sizeof(path));
		fd = open(path, O_RDWR);
		assert_true(fd >= 0);
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		assert_true(m != MAP_FAILED);
		close(fd);
		memcpy(&pool_off, m + 96, 8);
		q_head = (_Atomic uint64_t *)(void *)(m + pool_off + 128);
		assert_int_equal(tk_pool_skip_stuck(p), 0); /* nothing stuck */
		atomic_fetch_add(q_head, 1);                /* a cell claimed, never published */
		assert_int_equal(tk_pool_take(p, &idx), TK_OK);
		tk_pool_queue(p, idx, 3); /* queued behind it */
		assert_int_equal(tk_pool_dequeue(p, &got), TK_EBUSY); /* blocked */
		assert_int_equal(tk_pool_skip_stuck(p), 1);
		assert_int_equal(tk_pool_dequeue(p, &got), TK_OK);
		assert_int_equal(got, idx);
		tk_pool_give(p, got);
		assert_int_equal(tk_pool_dequeue(p, &got), TK_EBUSY);
		assert_int_equal(tk_session_check(m, size, NULL, 0), TK_OK);
		munmap(m, size);
	}
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_OK);
	tk_session_close(w);
	tk_session_close(lg);
}

/* Which session a process attaches to, by environment. The "default" session is made in a
 * private /dev/shm (a mount namespace of our own: root only), so that no other program of the
 * machine attaches to it meanwhile. */
static int attach_as(const char *session_env, const char *log_env)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (session_env != NULL)
			setenv("TRACEKIT_SESSION", session_env, 1);
		else
			unsetenv("TRACEKIT_SESSION");
		if (log_env != NULL)
			setenv("TRACEKIT_LOG", log_env, 1);
		else
			unsetenv("TRACEKIT_LOG");
		TraceEvent(_NTO_TRACE_QUERYVERSION);
		_exit(atomic_load(&tk__trace.sess) != NULL ? 10 : 11);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st) == 10;
}

/* A program that starts its own logger (tk_logger_start) while a default session lives: its
 * logger wins, attached first or not, and no TraceEvent() it makes attaches it again. */
static int own_logger_wins(int attach_first)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char path[64];
		unsetenv("TRACEKIT_SESSION");
		unsetenv("TRACEKIT_LOG");
		if (attach_first) {
			TraceEvent(_NTO_TRACE_QUERYVERSION);
			if (atomic_load(&tk__trace.sess) == NULL)
				_exit(20);
		}
		snprintf(path, sizeof(path), "/tmp/tkt-own-logger-%ld.kev", (long)getpid());
		if (tk_logger_start(path, NULL) != TK_OK)
			_exit(21);
		if (TraceEvent(_NTO_TRACE_ADDALLCLASSES) != 0 || TraceEvent(_NTO_TRACE_START) != 0 ||
		    TraceEvent(_NTO_TRACE_INSERTSUSEREVENT, 7, 1, 2) != 0 || TraceEvent(_NTO_TRACE_STOP) != 0)
			_exit(22);
		if (atomic_load(&tk__trace.sess) != NULL)
			_exit(23);
		if (tk_logger_stop() != TK_OK)
			_exit(24);
		_exit(unlink(path) == 0 ? 0 : 25);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void test_which_session(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	if (geteuid() != 0) {
		skip();
		return;
	}
	pid = fork();
	if (pid == 0) {
		tk_session *def, *named;
		const char *name = name_of("named");
		if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
		    mount("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777") != 0)
			_exit(77); /* no namespaces here */
		if (attach_as(NULL, NULL) != 0) /* no default session: none */
			_exit(1);
		if (tk_session_create(&def, TK_SESSION_DEFAULT, 4) != TK_OK || tk_session_create(&named, name, 4) != TK_OK)
			_exit(2);
		if (attach_as(NULL, NULL) != 1) /* neither variable: the default session */
			_exit(3);
		if (attach_as(NULL, "/tmp/x.kev") != 0) /* TRACEKIT_LOG wins over the default session */
			_exit(4);
		if (attach_as("", NULL) != 0) /* empty: none */
			_exit(5);
		if (attach_as(name, "/tmp/x.kev") != 1) /* a named session wins over TRACEKIT_LOG */
			_exit(6);
		if (attach_as("tkt_no_such_session", NULL) != 0)
			_exit(7);
		if (own_logger_wins(0) != 0 || own_logger_wins(1) != 0) /* the program's own logger wins */
			_exit(9);
		tk_session_close(named);
		if (attach_as(name, NULL) != 0) /* closed: gone */
			_exit(8);
		tk_session_close(def);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77) {
		skip();
		return;
	}
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A program that STARTs the session, records, FLUSHBUFFERs and STOPs while it lives on: its
 * partial buffers reach the queue at once, and the logger is woken each time. */
static void test_flush_and_stop(void **state)
{
	const char *name = name_of("flush");
	tk_session *lg;
	struct drain *d = calloc(1, sizeof(*d));
	pid_t pid;
	int st, go[2], done[2];
	char c;
	unsigned k, found = 0;
	uint32_t idx;

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 16), TK_OK);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	if (pid == 0) {
		uint32_t i, tid = (uint32_t)gettid_();
		setenv("TRACEKIT_SESSION", name, 1);
		if (TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER) != 0 || TraceEvent(_NTO_TRACE_START) != 0)
			_exit(1);
		for (i = 0; i < 10; i++)
			tk_trace_user(1, i, tid);
		if (TraceEvent(_NTO_TRACE_FLUSHBUFFER) != 0 || write(done[1], "f", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		for (; i < 25; i++)
			tk_trace_user(1, i, tid);
		if (TraceEvent(_NTO_TRACE_STOP) != 0 || write(done[1], "s", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		_exit(0);
	}
	assert_int_equal(read(done[0], &c, 1), 1);
	assert_true(tk_session_wait(lg, 0) == 1);
	assert_true(drain_queue(tk_session_pool(lg), d) >= 1); /* the flushed buffer, while the writer lives */
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(done[0], &c, 1), 1);
	assert_false(tk_session_started(lg));
	assert_true(drain_queue(tk_session_pool(lg), d) >= 1); /* STOP queued the rest */
	for (k = 0; k < d->n; k++)
		if (d->v[k].pid == (uint32_t)pid && d->v[k].n > 0) {
			assert_int_equal(d->v[k].n, 25);
			assert_int_equal(d->v[k].next, 25);
			found++;
		}
	assert_int_equal(found, 1);
	assert_int_equal(tk_pool_dequeue(tk_session_pool(lg), &idx), TK_EBUSY);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	if (d->errors)
		fail_msg("%d errors; last: %s", d->errors, d->err);
	tk_session_close(lg);
	free(d);
}

/* Too few buffers for the threads that record: drops are counted, nobody blocks. */
static void *flood_thread(void *arg)
{
	uint32_t i, tid = (uint32_t)gettid_();

	(void)arg;
	for (i = 0; i < 50000; i++)
		tk_trace_user(1, i, tid);
	return NULL;
}

static void test_too_few_buffers(void **state)
{
	const char *name = name_of("small");
	tk_session *lg;
	struct drain *d = calloc(1, sizeof(*d));
	tk_pool_stats ps;
	pid_t pid;
	int st;
	uint64_t t0;

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 2), TK_OK);
	assert_int_equal(tk_session_set_class(lg, _NTO_TRACE_USER, 1), TK_OK);
	assert_int_equal(tk_session_start(lg), TK_OK);
	pid = fork();
	if (pid == 0) {
		pthread_t th[4];
		int i;
		setenv("TRACEKIT_SESSION", name, 1);
		TraceEvent(_NTO_TRACE_QUERYVERSION);
		for (i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, flood_thread, NULL);
		for (i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		_exit(0);
	}
	/* nobody drains: the writer must still finish */
	t0 = now_ms();
	while (waitpid(pid, &st, WNOHANG) == 0) {
		assert_true(now_ms() - t0 < 60000);
		usleep(10000);
	}
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	tk_pool_get_stats(tk_session_pool(lg), &ps);
	assert_true(ps.records_dropped > 0);
	drain_queue(tk_session_pool(lg), d);
	tk_session_collect_dead(lg, (uint32_t)pid, check_buffer, d);
	if (d->errors)
		fail_msg("%d errors; last: %s", d->errors, d->err);
	tk_pool_get_stats(tk_session_pool(lg), &ps);
	assert_true(d->events > 0);
	assert_true(d->events + ps.records_dropped >= 4 * 50000u);
	assert_int_equal(ps.records_dropped, d->dropped_reported + ps.dropped_pending);
	tk_session_close(lg);
	free(d);
}

/* The logger dies (SIGKILL) while a writer records: the next one recovers the region (every
 * event the writer committed is there), then creates the session anew. */
static void test_logger_killed_and_recovered(void **state)
{
	const char *name = name_of("recover");
	tk_session *r, *again;
	struct drain *d = calloc(1, sizeof(*d));
	pid_t logger, writer;
	int st, ready[2];
	char c;
	unsigned k, found = 0;

	(void)state;
	assert_int_equal(pipe(ready), 0);
	logger = fork();
	if (logger == 0) {
		tk_session *lg;
		if (tk_session_create(&lg, name, 64) != TK_OK || tk_session_set_class(lg, _NTO_TRACE_USER, 1) != TK_OK ||
		    tk_session_start(lg) != TK_OK || write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause(); /* never drains */
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	writer = fork();
	if (writer == 0) {
		uint32_t i, tid = (uint32_t)gettid_();
		setenv("TRACEKIT_SESSION", name, 1);
		TraceEvent(_NTO_TRACE_QUERYVERSION);
		for (i = 0; i < 10000; i++)
			tk_trace_user(1, i, tid);
		if (write(ready[1], "w", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	kill(logger, SIGKILL);
	assert_int_equal(waitpid(logger, &st, 0), logger);
	/* orphaned: no new session until recovered; the writer lives on, attached to it */
	assert_int_equal(tk_session_create(&again, name, 64), TK_EEXIST);
	assert_int_equal(tk_session_open(&r, name, TK_SESSION_RECOVER), TK_OK);
	kill(writer, SIGKILL);
	assert_int_equal(waitpid(writer, &st, 0), writer);
	drain_queue(tk_session_pool(r), d);
	while (tk_pool_skip_stuck(tk_session_pool(r)))
		drain_queue(tk_session_pool(r), d);
	{
		tk_session_process_info info;
		uint32_t i;
		for (i = 0; i < tk_session_n_slots(r); i++)
			if (tk_session_process(r, i, &info) == TK_OK && info.state == TK_SESSION_ATTACHED &&
			    !tk_session_process_alive(&info)) {
				tk_session_collect_dead(r, info.pid, check_buffer, d);
				tk_session_reap(r, info.pid);
			}
	}
	if (d->errors)
		fail_msg("%d errors; last: %s", d->errors, d->err);
	for (k = 0; k < d->n; k++)
		if (d->v[k].pid == (uint32_t)writer) {
			assert_int_equal(d->v[k].n, 10000);
			assert_int_equal(d->v[k].next, 10000);
			found = 1;
		}
	assert_true(found);
	assert_int_equal(tk_session_close(r), TK_OK);
	assert_int_equal(tk_session_create(&again, name, 64), TK_OK);
	assert_int_equal(tk_session_close(again), TK_OK);
	close(ready[0]);
	close(ready[1]);
	free(d);
}

/* A hostile process of the same user moves a writer's committed position (in the buffer's
 * descriptor, in the region) to an odd offset just below the buffer's end: the writer's next
 * record must stay inside its buffer (it would write 15 bytes into the next buffer, or past
 * the mapping for the last one), as the trust model says. */
static void test_committed_tampered(void **state)
{
	const char *name = name_of("tamper");
	tk_session *lg;
	tk_pool *pool;
	pid_t writer;
	int st, up[2], down[2];
	char c;
	unsigned char *next;
	uint32_t bsize, i, free_state;

	(void)state;
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	assert_int_equal(tk_session_create(&lg, name, 2), TK_OK);
	assert_int_equal(tk_session_set_class(lg, _NTO_TRACE_USER, 1), TK_OK);
	assert_int_equal(tk_session_start(lg), TK_OK);
	pool = tk_session_pool(lg);
	bsize = tk_pool_buffer_size(pool);
	writer = fork();
	if (writer == 0) {
		setenv("TRACEKIT_SESSION", name, 1);
		TraceEvent(_NTO_TRACE_QUERYVERSION);
		tk_trace_user(1, 0, 0); /* takes buffer 0 (the top of the free stack) */
		if (write(up[1], "a", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(1);
		tk_trace_user(1, 1, 0); /* after the tampering */
		if (write(up[1], "b", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(read(up[0], &c, 1), 1);
	assert_int_equal(tk_pool_desc_of(pool, 0)->state, TK_POOL_WRITING);
	next = tk_pool_buffer(pool, 1); /* free: nobody writes it now */
	memset(next, 0xab, 64);
	atomic_store(&tk_pool_desc_of(pool, 0)->committed, bsize - 1);
	assert_int_equal(write(down[1], "g", 1), 1);
	assert_int_equal(read(up[0], &c, 1), 1);
	for (i = 0; i < 64 && next[i] == 0xab; i++)
		;
	free_state = tk_pool_desc_of(pool, 1)->state;
	assert_int_equal(write(down[1], "g", 1), 1);
	assert_int_equal(waitpid(writer, &st, 0), writer);
	/* either the writer found no room and took buffer 1 (starting it properly), or it is
	 * untouched */
	if (free_state == TK_POOL_FREE && i < 64)
		fail_msg("byte %u of the free buffer 1 written by a record of buffer 0", i);
	assert_true(free_state == TK_POOL_FREE || free_state == TK_POOL_WRITING);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	tk_session_close(lg);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/* The configuration lock left by a holder that died, its pid since reused by a live process
 * (here: our parent, which never takes it): the first change waits for it at most a second,
 * then takes it over; the next changes do not wait again. */
static void test_lock_stale_holder(void **state)
{
	const char *name = name_of("stalelock");
	tk_session *lg;
	struct tk__sess_hdr *h;
	uint64_t t0, t1, t2;

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 4), TK_OK);
	h = (struct tk__sess_hdr *)(void *)((unsigned char *)tk__session_config(lg) - 320);
	atomic_store(&h->cfg_lock, (uint32_t)getppid());
	t0 = now_ms();
	assert_int_equal(tk_session_start(lg), TK_OK);
	t1 = now_ms();
	assert_int_equal(tk_session_stop(lg), TK_OK);
	assert_int_equal(tk_session_start(lg), TK_OK);
	assert_int_equal(tk_session_stop(lg), TK_OK);
	t2 = now_ms();
	assert_true(t1 - t0 <= 3000);
	if (t2 - t1 >= 500)
		fail_msg("three changes after the first took %llu ms: the stale lock is waited for each time",
			 (unsigned long long)(t2 - t1));
	assert_int_equal(atomic_load(&h->cfg_lock), 0);
	tk_session_close(lg);
}

/* Something else than a region at the name (a symbolic link, a directory, a FIFO): refused
 * by writers, recovery and a new logger alike, with the path and what it is named, and never
 * followed, changed or removed. */
static void test_not_a_region(void **state)
{
	static const char *const kinds[] = { "symbolic link", "directory", "FIFO" };
	char path[256], target[] = "/tmp/tkt_target_XXXXXX", buf[16];
	unsigned k;
	int fd;

	(void)state;
	fd = mkstemp(target);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "precious", 8), 8);
	close(fd);
	for (k = 0; k < 3; k++) {
		const char *name = name_of(kinds[k][0] == 's' ? "lnk" : kinds[k][0] == 'd' ? "dir" : "fifo");
		tk_session *x;
		struct stat st;
		shm_path(name, path, sizeof(path));
		if (k == 0)
			assert_int_equal(symlink(target, path), 0);
		else if (k == 1)
			assert_int_equal(mkdir(path, 0700), 0);
		else
			assert_int_equal(mkfifo(path, 0600), 0);
		assert_int_equal(tk_session_open(&x, name, TK_SESSION_WRITER), TK_EACCES);
		must_contain(tk_session_errmsg(), path);
		must_contain(tk_session_errmsg(), kinds[k]);
		assert_int_equal(tk_session_open(&x, name, TK_SESSION_RECOVER), TK_EACCES);
		must_contain(tk_session_errmsg(), kinds[k]);
		assert_int_equal(tk_session_create(&x, name, 4), TK_EEXIST);
		must_contain(tk_session_errmsg(), kinds[k]);
		assert_int_equal(lstat(path, &st), 0);
		assert_true(k == 0 ? S_ISLNK(st.st_mode) : k == 1 ? S_ISDIR(st.st_mode) : S_ISFIFO(st.st_mode));
		if (k == 1)
			rmdir(path);
		else
			unlink(path);
	}
	fd = open(target, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, sizeof(buf)), 8);
	assert_memory_equal(buf, "precious", 8);
	close(fd);
	unlink(target);
}

/* A process killed while it filled its registry slot in leaves it CLAIMING: the logger frees
 * it (tk_session_reap_stuck) once that pid is gone, never a slot a live process is filling
 * in, nor one whose claimer has not yet named itself. */
static void test_reap_stuck_claim(void **state)
{
	const char *name = name_of("stuck");
	tk_session *lg, *w;
	struct tk__sess_slot *slots;
	pid_t dead;
	int st;
	uint32_t n;

	(void)state;
	assert_int_equal(tk_session_create(&lg, name, 4), TK_OK);
	assert_int_equal(tk_session_open(&w, name, TK_SESSION_WRITER), TK_OK); /* slot 0: us */
	slots = tk__session_slot(w);
	n = tk_session_n_slots(lg);
	assert_true(n >= 4);
	dead = fork();
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, &st, 0), dead);
	atomic_store(&slots[1].pid, (uint32_t)dead); /* killed while claiming */
	atomic_store(&slots[1].state, TK_SESS_CLAIMING);
	atomic_store(&slots[2].pid, (uint32_t)getpid()); /* a live claimer */
	atomic_store(&slots[2].state, TK_SESS_CLAIMING);
	atomic_store(&slots[3].pid, 0); /* a claimer that has not stored its pid yet */
	atomic_store(&slots[3].state, TK_SESS_CLAIMING);
	assert_int_equal(tk_session_reap_stuck(lg), 1);
	assert_int_equal(atomic_load(&slots[1].state), TK_SESSION_EXITED);
	assert_int_equal(atomic_load(&slots[1].pid), 0);
	assert_int_equal(atomic_load(&slots[2].state), TK_SESS_CLAIMING);
	assert_int_equal(atomic_load(&slots[3].state), TK_SESS_CLAIMING);
	assert_int_equal(tk_session_reap_stuck(lg), 0);
	/* a reaped slot has no pid left: a claimer that dies at once is told from its predecessor */
	assert_int_equal(tk_session_reap(lg, (uint32_t)getpid()), TK_OK);
	assert_int_equal(atomic_load(&slots[0].state), TK_SESSION_EXITED);
	assert_int_equal(atomic_load(&slots[0].pid), 0);
	atomic_store(&slots[2].state, TK_SESSION_FREE);
	atomic_store(&slots[3].state, TK_SESSION_FREE);
	tk_session_close(w);
	tk_session_close(lg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_create_open_close),
		cmocka_unit_test(test_orphan),
		cmocka_unit_test(test_check_every_field),
		cmocka_unit_test(test_open_refuses),
		cmocka_unit_test(test_wait_wake),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_registry_full),
		cmocka_unit_test(test_three_writers_one_configurer),
		cmocka_unit_test(test_sigkill_loop),
		cmocka_unit_test(test_fork_child),
		cmocka_unit_test(test_stuck_queue_cell),
		cmocka_unit_test(test_flush_and_stop),
		cmocka_unit_test(test_which_session),
		cmocka_unit_test(test_too_few_buffers),
		cmocka_unit_test(test_logger_killed_and_recovered),
		cmocka_unit_test(test_committed_tampered),
		cmocka_unit_test(test_lock_stale_holder),
		cmocka_unit_test(test_not_a_region),
		cmocka_unit_test(test_reap_stuck_claim),
	};

	unsetenv("TRACEKIT_SESSION");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
