/* SPDX-License-Identifier: MIT */
/*
 * Trace sessions: a named shared-memory region holding the trace configuration, a registry
 * of attached processes and a buffer pool (session_layout.h; docs/sessions.md). Created by a
 * logger, which holds an exclusive flock() on it for its life; opened by writers (traced
 * programs) while a logger lives, or for recovery when its logger died. Every region is
 * checked (owner, mode, size, every field) before anything in it is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/tk_cycles.h"
#include "session/session_layout.h"
#include "tracekit/kev.h"

_Static_assert(sizeof(struct tk__sess_hdr) == 320, "session header size");
_Static_assert(offsetof(struct tk__sess_hdr, version) == 8 && offsetof(struct tk__sess_hdr, hdr_size) == 12 &&
		       offsetof(struct tk__sess_hdr, region_size) == 16 && offsetof(struct tk__sess_hdr, owner_uid) == 24 &&
		       offsetof(struct tk__sess_hdr, logger_pid) == 28 &&
		       offsetof(struct tk__sess_hdr, logger_start) == 32 &&
		       offsetof(struct tk__sess_hdr, cycles_per_sec) == 40 &&
		       offsetof(struct tk__sess_hdr, clock_cycles) == 48 && offsetof(struct tk__sess_hdr, clock_ns) == 56 &&
		       offsetof(struct tk__sess_hdr, config_off) == 64 && offsetof(struct tk__sess_hdr, config_size) == 72 &&
		       offsetof(struct tk__sess_hdr, registry_off) == 80 && offsetof(struct tk__sess_hdr, n_slots) == 88 &&
		       offsetof(struct tk__sess_hdr, slot_size) == 92 && offsetof(struct tk__sess_hdr, pool_off) == 96 &&
		       offsetof(struct tk__sess_hdr, pool_size) == 104 && offsetof(struct tk__sess_hdr, n_buffers) == 112 &&
		       offsetof(struct tk__sess_hdr, buf_size) == 116 && offsetof(struct tk__sess_hdr, name) == 120 &&
		       offsetof(struct tk__sess_hdr, wake) == 192 && offsetof(struct tk__sess_hdr, waiting) == 196 &&
		       offsetof(struct tk__sess_hdr, cfg_lock) == 256,
	       "session header layout");
_Static_assert(sizeof(struct tk__sess_slot) == 128 && offsetof(struct tk__sess_slot, pid) == 4 &&
		       offsetof(struct tk__sess_slot, start_time) == 8 && offsetof(struct tk__sess_slot, comm) == 16 &&
		       offsetof(struct tk__sess_slot, epoch) == 32 &&
		       offsetof(struct tk__sess_slot, handler_classes) == 36 &&
		       offsetof(struct tk__sess_slot, modes) == 64,
	       "registry slot layout");
_Static_assert(sizeof(struct trace_filter) == 20, "filter");
_Static_assert(offsetof(struct tk__trace_config, generation) == 0 && offsetof(struct tk__trace_config, start_epoch) == 4 &&
		       offsetof(struct tk__trace_config, started) == 8 && offsetof(struct tk__trace_config, start_state) == 12 &&
		       offsetof(struct tk__trace_config, ring) == 16 && offsetof(struct tk__trace_config, overwrite) == 20 &&
		       offsetof(struct tk__trace_config, n_filtered) == 32 &&
		       offsetof(struct tk__trace_config, enabled) == 160 &&
		       offsetof(struct tk__trace_config, wide) == 160 + 4096 &&
		       offsetof(struct tk__trace_config, filters) == 160 + 8192,
	       "configuration layout");

#define CONFIG_OFF 320u
#define PAGE 4096u

enum role { ROLE_LOGGER, ROLE_RECOVER, ROLE_WRITER };

struct tk_session {
	int fd;
	enum role role;
	unsigned char *base;
	size_t size;
	struct tk__sess_hdr *h;
	struct tk__trace_config *cfg;
	struct tk__sess_slot *slots;
	uint32_t n_slots;   /* copied when checked: never re-read from the region */
	tk_pool *pool;
	_Atomic int slot;   /* this process's slot (writers), -1 */
	uint32_t seen_wake; /* logger: the futex word at the last tk_session_wait() */
	char shm_name[TK_SESSION_NAME_MAX + 32];
};

static __thread char tls_errmsg[512];

__attribute__((format(printf, 2, 3))) static int fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tls_errmsg, sizeof(tls_errmsg), fmt, ap);
	va_end(ap);
	return err;
}

const char *tk_session_errmsg(void)
{
	return tls_errmsg;
}

/* ---- names and sizes ------------------------------------------------------------------- */

int tk_session_name_valid(const char *name)
{
	size_t i, n;

	if (name == NULL || name[0] == '\0' || name[0] == '.')
		return 0;
	n = strlen(name);
	if (n > TK_SESSION_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
		      c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

int tk_session_shm_name(const char *name, char *buf, size_t cap)
{
	int n;

	if (!tk_session_name_valid(name) || buf == NULL)
		return TK_EINVAL;
	n = snprintf(buf, cap, "/tracekit.%u.%s", (unsigned)geteuid(), name);
	return n < 0 || (size_t)n >= cap ? TK_EOVERFLOW : TK_OK;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

struct layout {
	uint64_t config_off, registry_off, pool_off, pool_size, size;
};

static int layout(uint32_t n_buffers, uint32_t n_slots, struct layout *l)
{
	size_t pool;

	if (n_buffers == 0 || n_buffers > TK_SESSION_MAX_BUFFERS || n_slots == 0 || n_slots > TK_SESS_MAX_SLOTS)
		return -1;
	pool = tk_pool_region_size(n_buffers, TK_SESSION_BUFFER_SIZE);
	if (pool == 0)
		return -1;
	l->config_off = CONFIG_OFF;
	l->registry_off = align_up(CONFIG_OFF + sizeof(struct tk__trace_config), 64);
	l->pool_off = align_up(l->registry_off + (uint64_t)n_slots * sizeof(struct tk__sess_slot), PAGE);
	l->pool_size = pool;
	l->size = l->pool_off + pool;
	return 0;
}

size_t tk_session_region_size(uint32_t n_buffers)
{
	struct layout l;

	return layout(n_buffers, TK_SESSION_SLOTS, &l) == 0 ? (size_t)l.size : 0;
}

/* ---- the check --------------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static int why_set(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && cap > 0) {
		va_start(ap, fmt);
		vsnprintf(why, cap, fmt, ap);
		va_end(ap);
	}
	return TK_EFORMAT;
}

#define HOFF(field) ((unsigned)offsetof(struct tk__sess_hdr, field))

int tk_session_check(const void *region, size_t size, char *why, size_t cap)
{
	const unsigned char *b = region;
	struct tk__sess_hdr h; /* a copy: the region may change under us */
	struct layout l;
	uint64_t i;
	size_t nlen;

	if (why != NULL && cap > 0)
		why[0] = '\0';
	if (region == NULL)
		return why_set(why, cap, "no region");
	if (size < sizeof(h))
		return why_set(why, cap, "byte 0: a region of %zu bytes is smaller than the header (%zu bytes)", size,
			       sizeof(h));
	memcpy(&h, b, offsetof(struct tk__sess_hdr, wake));
	if (memcmp(h.magic, TK_SESS_MAGIC, 8) != 0)
		return why_set(why, cap, "byte 0 (magic): not a tracekit session region");
	if (h.version != TK_SESS_VERSION) {
		why_set(why, cap, "byte %u (version): version %u, this build reads version %u", HOFF(version), h.version,
			TK_SESS_VERSION);
		return TK_EVERSION;
	}
	if (h.hdr_size != sizeof(h))
		return why_set(why, cap, "byte %u (hdr_size): %u, expected %zu", HOFF(hdr_size), h.hdr_size, sizeof(h));
	if (h.region_size != size)
		return why_set(why, cap, "byte %u (region_size): %llu is not the region's size %zu", HOFF(region_size),
			       (unsigned long long)h.region_size, size);
	if (h.logger_pid == 0 || h.logger_pid > 4194304u)
		return why_set(why, cap, "byte %u (logger_pid): %u is not a process ID", HOFF(logger_pid), h.logger_pid);
	if (h.cycles_per_sec == 0)
		return why_set(why, cap, "byte %u (cycles_per_sec): 0", HOFF(cycles_per_sec));
	if (h.buf_size != TK_SESSION_BUFFER_SIZE)
		return why_set(why, cap, "byte %u (buf_size): %u, expected %u", HOFF(buf_size), h.buf_size,
			       TK_SESSION_BUFFER_SIZE);
	if (h.n_buffers == 0 || h.n_buffers > TK_SESSION_MAX_BUFFERS)
		return why_set(why, cap, "byte %u (n_buffers): %u (1 to %u)", HOFF(n_buffers), h.n_buffers,
			       TK_SESSION_MAX_BUFFERS);
	if (h.n_slots == 0 || h.n_slots > TK_SESS_MAX_SLOTS)
		return why_set(why, cap, "byte %u (n_slots): %u registry slots (1 to %u)", HOFF(n_slots), h.n_slots,
			       TK_SESS_MAX_SLOTS);
	if (h.slot_size != sizeof(struct tk__sess_slot))
		return why_set(why, cap, "byte %u (slot_size): %u, expected %zu", HOFF(slot_size), h.slot_size,
			       sizeof(struct tk__sess_slot));
	if (layout(h.n_buffers, h.n_slots, &l) != 0)
		return why_set(why, cap, "byte %u (n_buffers): %u buffers make no region", HOFF(n_buffers), h.n_buffers);
	if (h.config_off != l.config_off)
		return why_set(why, cap, "byte %u (config_off): %llu, expected %llu", HOFF(config_off),
			       (unsigned long long)h.config_off, (unsigned long long)l.config_off);
	if (h.config_size != sizeof(struct tk__trace_config))
		return why_set(why, cap, "byte %u (config_size): %llu, expected %zu", HOFF(config_size),
			       (unsigned long long)h.config_size, sizeof(struct tk__trace_config));
	if (h.registry_off != l.registry_off)
		return why_set(why, cap, "byte %u (registry_off): %llu, expected %llu", HOFF(registry_off),
			       (unsigned long long)h.registry_off, (unsigned long long)l.registry_off);
	if (h.pool_off != l.pool_off)
		return why_set(why, cap, "byte %u (pool_off): %llu, expected %llu (page-aligned, after the registry)",
			       HOFF(pool_off), (unsigned long long)h.pool_off, (unsigned long long)l.pool_off);
	if (h.pool_size != l.pool_size)
		return why_set(why, cap, "byte %u (pool_size): %llu, expected %llu for %u buffers (n_buffers, byte %u)",
			       HOFF(pool_size), (unsigned long long)h.pool_size, (unsigned long long)l.pool_size, h.n_buffers,
			       HOFF(n_buffers));
	if (l.size != size)
		return why_set(why, cap, "byte %u (region_size): %zu bytes, %u buffers and %u slots need %llu",
			       HOFF(region_size), size, h.n_buffers, h.n_slots, (unsigned long long)l.size);
	nlen = strnlen(h.name, sizeof(h.name));
	if (nlen == sizeof(h.name) || !tk_session_name_valid(h.name))
		return why_set(why, cap, "byte %u (name): not a session name", HOFF(name));
	/* the configuration: flags are 0 or 1, counts in range */
	{
		const struct tk__trace_config *c = (const void *)(b + l.config_off);
		static const struct {
			size_t off;
			const char *name;
		} flags[] = {
			{ offsetof(struct tk__trace_config, started), "started" },
			{ offsetof(struct tk__trace_config, start_state), "start_state" },
			{ offsetof(struct tk__trace_config, ring), "ring" },
			{ offsetof(struct tk__trace_config, overwrite), "overwrite" },
		};
		for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
			int v;
			memcpy(&v, b + l.config_off + flags[i].off, sizeof(v));
			if (v != 0 && v != 1)
				return why_set(why, cap, "byte %llu (config %s): %d, not 0 or 1",
					       (unsigned long long)(l.config_off + flags[i].off), flags[i].name, v);
		}
		for (i = 0; i < TK_SESS_N_CLASSES; i++) {
			uint32_t n = atomic_load_explicit(&((struct tk__trace_config *)(uintptr_t)c)->n_filtered[i],
							  memory_order_relaxed);
			if (n > TK_SESS_N_CODES)
				return why_set(why, cap, "byte %llu (config n_filtered[%llu]): %u codes (0 to %u)",
					       (unsigned long long)(l.config_off + offsetof(struct tk__trace_config, n_filtered) +
								    4 * i),
					       (unsigned long long)i, n, TK_SESS_N_CODES);
		}
	}
	/* the registry: slot states */
	for (i = 0; i < h.n_slots; i++) {
		uint64_t off = l.registry_off + i * sizeof(struct tk__sess_slot);
		uint32_t st;
		unsigned k;
		memcpy(&st, b + off, sizeof(st));
		if (st > TK_SESS_CLAIMING)
			return why_set(why, cap, "byte %llu (registry slot %llu state): %u (0 to 3)",
				       (unsigned long long)off, (unsigned long long)i, st);
		for (k = 0; k < TK_SESS_N_CLASSES; k++) {
			unsigned char m = b[off + offsetof(struct tk__sess_slot, modes) + k];
			if (m > TK_SESS_MODE_FILTERED)
				return why_set(why, cap, "byte %llu (registry slot %llu modes[%u]): %u (0 to 2)",
					       (unsigned long long)(off + offsetof(struct tk__sess_slot, modes) + k),
					       (unsigned long long)i, k, m);
		}
	}
	return tk_pool_check(b + l.pool_off, (size_t)l.pool_size, l.pool_off, why, cap);
}

/* ---- /proc ------------------------------------------------------------------------------- */

static int read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

uint64_t tk_session_proc_start_time(uint32_t pid)
{
	char path[64], stat[1024], *p;
	int field;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (pid == 0 || read_small(path, stat, sizeof(stat)) != 0 || (p = strrchr(stat, ')')) == NULL)
		return 0;
	/* field 2 ends at the last ')'; field 22 is starttime */
	for (field = 2; *p != '\0' && field < 22; p++)
		if (*p == ' ')
			field++;
	return strtoull(p, NULL, 10);
}

int tk_session_process_alive(const tk_session_process_info *info)
{
	uint64_t st;

	if (info == NULL || info->pid == 0)
		return 0;
	st = tk_session_proc_start_time(info->pid);
	return st != 0 && st == info->start_time;
}

/* ---- futex and lock ------------------------------------------------------------------------ */

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

void tk_session_wake(tk_session *s)
{
	if (s == NULL)
		return;
	atomic_fetch_add(&s->h->wake, 1);
	if (atomic_load(&s->h->waiting) != 0)
		futex(&s->h->wake, FUTEX_WAKE, INT_MAX, NULL);
}

int tk_session_wait(tk_session *s, unsigned timeout_ms)
{
	struct timespec ts = { (time_t)(timeout_ms / 1000), (long)(timeout_ms % 1000) * 1000000L };
	uint32_t now;

	if (s == NULL)
		return 0;
	now = atomic_load(&s->h->wake);
	if (now != s->seen_wake) {
		s->seen_wake = now;
		return 1;
	}
	if (timeout_ms == 0)
		return 0;
	atomic_store(&s->h->waiting, 1);
	/* a writer bumps `wake` then reads `waiting`; we wrote `waiting` then read `wake`
	 * (inside the kernel's compare): one of us sees the other */
	futex(&s->h->wake, FUTEX_WAIT, now, &ts);
	atomic_store(&s->h->waiting, 0);
	now = atomic_load(&s->h->wake);
	if (now != s->seen_wake) {
		s->seen_wake = now;
		return 1;
	}
	return 0;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * The configuration lock: held for microseconds. A holder that died is taken over; a live
 * one that keeps it (only a process of the same user, misbehaving, could, or an unrelated
 * process that reused a dead holder's pid) is waited for at most a second, then the lock is
 * taken over from it (docs/sessions.md, "Trust model").
 */
void tk__session_lock(tk_session *s)
{
	uint32_t me = (uint32_t)getpid(), cur;
	unsigned spins = 0;
	uint64_t t0 = 0;

	for (;;) {
		cur = 0;
		if (atomic_compare_exchange_weak(&s->h->cfg_lock, &cur, me))
			return;
		if (cur == 0)
			continue;
		if (++spins < 100) {
			sched_yield();
			continue;
		}
		/* a holder that died with it: take it over */
		if (kill((pid_t)cur, 0) != 0 && errno == ESRCH) {
			if (atomic_compare_exchange_strong(&s->h->cfg_lock, &cur, me))
				return;
			continue;
		}
		if (t0 == 0) {
			t0 = mono_ms();
		} else if (mono_ms() - t0 > 1000) {
			/* taken over: returning without it would leave it held (a dead holder's
			 * reused pid) and make every later change wait a second again */
			if (atomic_compare_exchange_strong(&s->h->cfg_lock, &cur, me))
				return;
			t0 = 0; /* another holder since: wait for that one */
			continue;
		}
		{
			struct timespec ts = { 0, 2000000L };
			atomic_fetch_add(&s->h->cfg_waiters, 1);
			futex(&s->h->cfg_lock, FUTEX_WAIT, cur, &ts);
			atomic_fetch_sub(&s->h->cfg_waiters, 1);
		}
	}
}

void tk__session_unlock(tk_session *s)
{
	uint32_t me = (uint32_t)getpid();

	atomic_compare_exchange_strong(&s->h->cfg_lock, &me, 0); /* (not ours after a timeout: left alone) */
	if (atomic_load(&s->h->cfg_waiters) != 0)
		futex(&s->h->cfg_lock, FUTEX_WAKE, 1, NULL);
}

/* ---- configuration ------------------------------------------------------------------------- */

struct tk__trace_config *tk__session_config(tk_session *s)
{
	return s->cfg;
}

struct tk__sess_slot *tk__session_slot(tk_session *s)
{
	int i = atomic_load(&s->slot);

	return i >= 0 ? &s->slots[i] : NULL;
}

void tk__session_changed(tk_session *s)
{
	uint32_t i, epoch = atomic_load(&s->cfg->start_epoch);

	for (i = 0; i < s->n_slots; i++) {
		struct tk__sess_slot *sl = &s->slots[i];
		uint32_t st = atomic_load(&sl->state);
		if (st != TK_SESSION_ATTACHED && st != TK_SESS_CLAIMING)
			continue;
		tk__trace_modes_compute(s->cfg, 1, atomic_load(&sl->handler_classes), atomic_load(&sl->epoch) == epoch,
					sl->modes);
	}
	atomic_fetch_add(&s->cfg->generation, 1);
}

void tk__session_start_locked(tk_session *s, int with_state)
{
	if (!atomic_load(&s->cfg->started)) {
		uint32_t e = atomic_load(&s->cfg->start_epoch) + 1;
		atomic_store(&s->cfg->start_epoch, e == 0 ? 1 : e);
		atomic_store(&s->cfg->start_state, with_state ? 1 : 0);
		atomic_store(&s->cfg->started, 1);
	}
}

int tk_session_start(tk_session *s)
{
	if (s == NULL)
		return fail(TK_EINVAL, "no session");
	tk__session_lock(s);
	tk__session_start_locked(s, 1);
	tk__session_changed(s);
	tk__session_unlock(s);
	tk_session_wake(s);
	return TK_OK;
}

int tk_session_stop(tk_session *s)
{
	if (s == NULL)
		return fail(TK_EINVAL, "no session");
	tk__session_lock(s);
	atomic_store(&s->cfg->started, 0);
	tk__session_changed(s);
	tk__session_unlock(s);
	tk_session_wake(s);
	return TK_OK;
}

int tk_session_started(const tk_session *s)
{
	return s != NULL && atomic_load(&s->cfg->started) != 0;
}

uint32_t tk_session_generation(const tk_session *s)
{
	return s != NULL ? atomic_load(&s->cfg->generation) : 0;
}

static void set_all(_Atomic uint64_t bits[TK_SESS_N_CLASSES][TK_SESS_BITMAP_WORDS], int on)
{
	unsigned c, w;

	for (c = 0; c < TK_SESS_N_CLASSES; c++)
		for (w = 0; w < TK_SESS_BITMAP_WORDS; w++)
			atomic_store(&bits[c][w], on ? ~0ull : 0ull);
}

static int set_class(tk_session *s, _Atomic uint64_t bits[TK_SESS_N_CLASSES][TK_SESS_BITMAP_WORDS],
		     unsigned qnx_class, int on)
{
	tk_kev_range r[4];
	int n = tk_kev_map_class(qnx_class, r), i;
	unsigned code;

	if (n < 0)
		return fail(TK_EINVAL, "unknown class %u", qnx_class);
	tk__session_lock(s);
	for (i = 0; i < n; i++)
		for (code = r[i].first; code <= r[i].last; code++) {
			uint64_t bit = 1ull << (code & 63);
			if (on)
				atomic_fetch_or(&bits[r[i].cls][code >> 6], bit);
			else
				atomic_fetch_and(&bits[r[i].cls][code >> 6], ~bit);
		}
	tk__session_changed(s);
	tk__session_unlock(s);
	return TK_OK;
}

int tk_session_set_all_classes(tk_session *s, int on)
{
	if (s == NULL)
		return fail(TK_EINVAL, "no session");
	tk__session_lock(s);
	set_all(s->cfg->enabled, on);
	tk__session_changed(s);
	tk__session_unlock(s);
	return TK_OK;
}

int tk_session_set_all_wide(tk_session *s, int wide)
{
	if (s == NULL)
		return fail(TK_EINVAL, "no session");
	tk__session_lock(s);
	set_all(s->cfg->wide, wide);
	tk__session_changed(s);
	tk__session_unlock(s);
	return TK_OK;
}

int tk_session_set_class(tk_session *s, unsigned qnx_class, int on)
{
	if (s == NULL)
		return fail(TK_EINVAL, "no session");
	return set_class(s, s->cfg->enabled, qnx_class, on);
}

int tk_session_set_class_wide(tk_session *s, unsigned qnx_class, int wide)
{
	if (s == NULL)
		return fail(TK_EINVAL, "no session");
	return set_class(s, s->cfg->wide, qnx_class, wide);
}

int tk_session_set_ring(tk_session *s, int ring)
{
	if (s == NULL)
		return fail(TK_EINVAL, "no session");
	tk__session_lock(s);
	atomic_store(&s->cfg->ring, ring ? 1 : 0);
	tk__session_changed(s);
	tk__session_unlock(s);
	return TK_OK;
}

void tk_session_clock(const tk_session *s, uint64_t *cycles_per_sec, uint64_t *c0, uint64_t *raw_ns0)
{
	if (cycles_per_sec != NULL)
		*cycles_per_sec = s->h->cycles_per_sec;
	if (c0 != NULL)
		*c0 = s->h->clock_cycles;
	if (raw_ns0 != NULL)
		*raw_ns0 = s->h->clock_ns;
}

void tk_session_logger(const tk_session *s, uint32_t *pid, uint64_t *start_time)
{
	if (pid != NULL)
		*pid = s->h->logger_pid;
	if (start_time != NULL)
		*start_time = s->h->logger_start;
}

tk_pool *tk_session_pool(tk_session *s)
{
	return s != NULL ? s->pool : NULL;
}

/* ---- registry ------------------------------------------------------------------------------ */

uint32_t tk_session_n_slots(const tk_session *s)
{
	return s != NULL ? s->n_slots : 0;
}

int tk_session_process(const tk_session *s, uint32_t i, tk_session_process_info *info)
{
	const struct tk__sess_slot *sl;
	uint32_t st;

	if (s == NULL || info == NULL || i >= s->n_slots)
		return TK_ERANGE;
	sl = &s->slots[i];
	memset(info, 0, sizeof(*info));
	st = atomic_load_explicit(&((struct tk__sess_slot *)(uintptr_t)sl)->state, memory_order_acquire);
	info->state = st == TK_SESS_CLAIMING ? TK_SESSION_FREE : st;
	if (info->state == TK_SESSION_FREE)
		return TK_OK;
	info->pid = atomic_load(&((struct tk__sess_slot *)(uintptr_t)sl)->pid);
	info->start_time = atomic_load(&((struct tk__sess_slot *)(uintptr_t)sl)->start_time);
	memcpy(info->comm, sl->comm, sizeof(sl->comm));
	info->comm[16] = '\0';
	return TK_OK;
}

int tk_session_reap(tk_session *s, uint32_t pid)
{
	uint32_t i;
	int found = 0;

	if (s == NULL)
		return TK_EINVAL;
	for (i = 0; i < s->n_slots; i++) {
		uint32_t st = TK_SESSION_ATTACHED;
		/* through CLAIMING: nobody claims the slot before its pid is cleared */
		if (atomic_load(&s->slots[i].pid) == pid &&
		    atomic_compare_exchange_strong(&s->slots[i].state, &st, TK_SESS_CLAIMING)) {
			atomic_store(&s->slots[i].pid, 0);
			atomic_store(&s->slots[i].state, TK_SESSION_EXITED);
			found = 1;
		}
	}
	return found ? TK_OK : fail(TK_ENOENT, "no attached process %u in session %s", pid, s->h->name);
}

int tk_session_reap_stuck(tk_session *s)
{
	uint32_t i;
	int n = 0;

	if (s == NULL)
		return TK_EINVAL;
	for (i = 0; i < s->n_slots; i++) {
		uint32_t st = TK_SESS_CLAIMING, pid = atomic_load(&s->slots[i].pid);
		/* a claimer stores its own pid first (a free slot's is 0): a non-zero pid that no
		 * process has any more is a claimer that died */
		if (atomic_load(&s->slots[i].state) != TK_SESS_CLAIMING || pid == 0 || pid > (uint32_t)INT_MAX ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (atomic_load(&s->slots[i].pid) == pid &&
		    atomic_compare_exchange_strong(&s->slots[i].state, &st, TK_SESS_CLAIMING)) {
			atomic_store(&s->slots[i].pid, 0);
			atomic_store(&s->slots[i].state, TK_SESSION_EXITED);
			n++;
		}
	}
	return n;
}

int tk_session_register(tk_session *s)
{
	uint32_t pid = (uint32_t)getpid(), i, pass;
	char comm[64];

	if (s == NULL || s->role != ROLE_WRITER)
		return fail(TK_EINVAL, "only a writer registers");
	uint64_t start_time = tk_session_proc_start_time(pid);
	size_t comm_len = 0;

	/* what /proc says first: a slot is CLAIMING for as short a time as can be */
	if (read_small("/proc/self/comm", comm, sizeof(comm)) == 0)
		comm_len = strcspn(comm, "\n");
	/* free slots first, then those of reaped processes */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < s->n_slots; i++) {
			struct tk__sess_slot *sl = &s->slots[i];
			uint32_t st = pass == 0 ? TK_SESSION_FREE : TK_SESSION_EXITED;
			if (!atomic_compare_exchange_strong(&sl->state, &st, TK_SESS_CLAIMING))
				continue;
			atomic_store(&sl->pid, pid); /* first: tk_session_reap_stuck() goes by it */
			atomic_store(&sl->start_time, start_time);
			memset(sl->comm, 0, sizeof(sl->comm));
			memcpy(sl->comm, comm, comm_len < sizeof(sl->comm) ? comm_len : sizeof(sl->comm));
			atomic_store(&sl->epoch, 0);
			atomic_store(&sl->handler_classes, 0);
			tk__session_lock(s);
			atomic_store_explicit(&sl->state, TK_SESSION_ATTACHED, memory_order_release);
			tk__trace_modes_compute(s->cfg, 1, 0, 0, sl->modes);
			tk__session_unlock(s);
			atomic_store(&s->slot, (int)i);
			tk_session_wake(s);
			return (int)i;
		}
	}
	return fail(TK_EBUSY, "session %s: the registry's %u slots are all taken", s->h->name, s->n_slots);
}

struct dead_buf {
	uint32_t idx, seq, n;
};

static int by_seq(const void *a, const void *b)
{
	const struct dead_buf *x = a, *y = b;
	int32_t d = (int32_t)(x->seq - y->seq); /* sequence numbers wrap */

	return d < 0 ? -1 : d > 0;
}

int tk_session_collect_dead(tk_session *s, uint32_t pid, tk_session_buffer_fn fn, void *ctx)
{
	uint32_t n_bufs, i, n = 0, buf_size;
	struct dead_buf *v;

	if (s == NULL || fn == NULL || pid == 0)
		return TK_EINVAL;
	n_bufs = tk_pool_n_buffers(s->pool);
	buf_size = tk_pool_buffer_size(s->pool);
	v = malloc((size_t)n_bufs * sizeof(*v));
	if (v == NULL)
		return fail(TK_ENOMEM, "out of memory");
	for (i = 0; i < n_bufs; i++) {
		tk_pool_desc *d = tk_pool_desc_of(s->pool, i);
		uint32_t st = atomic_load_explicit(&d->state, memory_order_acquire), recs;
		if (d->owner_pid != pid || (st != TK_POOL_WRITING && st != TK_POOL_QUEUED))
			continue;
		recs = st == TK_POOL_WRITING ? atomic_load_explicit(&d->committed, memory_order_acquire) / 16u
					     : atomic_load_explicit(&d->records, memory_order_relaxed);
		if (recs > buf_size / 16u)
			recs = buf_size / 16u; /* never past the buffer, whatever the region says */
		v[n++] = (struct dead_buf){ i, d->seq, recs };
	}
	qsort(v, n, sizeof(*v), by_seq);
	for (i = 0; i < n; i++) {
		fn(tk_pool_buffer(s->pool, v[i].idx), v[i].n, v[i].idx, tk_pool_desc_of(s->pool, v[i].idx), ctx);
		tk_pool_give(s->pool, v[i].idx);
	}
	free(v);
	return (int)n;
}

/* ---- create, open, close ------------------------------------------------------------------- */

static int errno_code(int e)
{
	return tk_error_from_errno(e);
}

static void close_handle(tk_session *s)
{
	if (s == NULL)
		return;
	tk_pool_destroy(s->pool);
	if (s->base != NULL)
		munmap(s->base, s->size);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

/* Sets the handle's views of a region that passed tk_session_check(). */
static int bind_region(tk_session *s)
{
	int rc;

	s->h = (struct tk__sess_hdr *)(void *)s->base;
	s->cfg = (struct tk__trace_config *)(void *)(s->base + s->h->config_off);
	s->slots = (struct tk__sess_slot *)(void *)(s->base + s->h->registry_off);
	s->n_slots = s->h->n_slots;
	rc = tk_pool_attach(&s->pool, s->base + s->h->pool_off, (size_t)s->h->pool_size);
	if (rc != TK_OK)
		return fail(rc, "session %s: pool: %s", s->shm_name, tk_strerror(rc));
	s->seen_wake = atomic_load(&s->h->wake);
	return TK_OK;
}

static uint32_t read_logger_pid(const tk_session *s)
{
	return s->size >= sizeof(struct tk__sess_hdr) ? ((const struct tk__sess_hdr *)(const void *)s->base)->logger_pid
						       : 0;
}

int tk_session_format(void *region, size_t size, const char *name, uint32_t n_buffers)
{
	struct layout l;
	struct tk__sess_hdr *h = region;
	tk_pool *p;
	int rc;

	if (region == NULL || ((uintptr_t)region % PAGE) != 0 || !tk_session_name_valid(name) ||
	    layout(n_buffers, TK_SESSION_SLOTS, &l) != 0 || size != l.size)
		return TK_EINVAL;
	memset(region, 0, (size_t)l.pool_off); /* (a new shared-memory file is zero already) */
	h->version = TK_SESS_VERSION;
	h->hdr_size = sizeof(*h);
	h->region_size = l.size;
	h->owner_uid = (uint32_t)geteuid();
	h->logger_pid = (uint32_t)getpid();
	h->logger_start = tk_session_proc_start_time(h->logger_pid);
	h->cycles_per_sec = tk_clock_cycles_per_sec();
	tk__clock_pair(&h->clock_cycles, &h->clock_ns);
	h->config_off = l.config_off;
	h->config_size = sizeof(struct tk__trace_config);
	h->registry_off = l.registry_off;
	h->n_slots = TK_SESSION_SLOTS;
	h->slot_size = sizeof(struct tk__sess_slot);
	h->pool_off = l.pool_off;
	h->pool_size = l.pool_size;
	h->n_buffers = n_buffers;
	h->buf_size = TK_SESSION_BUFFER_SIZE;
	snprintf(h->name, sizeof(h->name), "%s", name);
	rc = tk_pool_init(&p, (unsigned char *)region + l.pool_off, (size_t)l.pool_size, n_buffers,
			  TK_SESSION_BUFFER_SIZE);
	if (rc != TK_OK)
		return rc;
	tk_pool_destroy(p);
	atomic_thread_fence(memory_order_release);
	memcpy(h->magic, TK_SESS_MAGIC, 8); /* last: before it, nobody takes this for a session */
	return TK_OK;
}

int tk_session_create(tk_session **out, const char *name, uint32_t n_buffers)
{
	struct layout l;
	tk_session *s;
	int rc, err;

	if (out == NULL)
		return fail(TK_EINVAL, "no handle");
	*out = NULL;
	if (!tk_session_name_valid(name))
		return fail(TK_EINVAL, "\"%s\" is not a session name (1-%d of [A-Za-z0-9_.-], not starting with '.')",
			    name != NULL ? name : "(null)", TK_SESSION_NAME_MAX);
	if (n_buffers == 0)
		n_buffers = TK_SESSION_DEFAULT_BUFFERS;
	if (layout(n_buffers, TK_SESSION_SLOTS, &l) != 0)
		return fail(TK_EINVAL, "%u buffers: 1 to %u", n_buffers, TK_SESSION_MAX_BUFFERS);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return fail(TK_ENOMEM, "out of memory");
	s->fd = -1;
	atomic_init(&s->slot, -1);
	s->role = ROLE_LOGGER;
	tk_session_shm_name(name, s->shm_name, sizeof(s->shm_name));
	s->fd = shm_open(s->shm_name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->fd < 0 && errno == EEXIST) {
		/* a live logger (its lock is held), or an orphan */
		tk_session *o;
		int orc;
		free(s);
		orc = tk_session_open(&o, name, TK_SESSION_RECOVER);
		if (orc == TK_EBUSY)
			return orc; /* the message names the live logger */
		if (orc == TK_OK) {
			uint32_t pid = o->h->logger_pid;
			tk_session_abandon(o);
			return fail(TK_EEXIST,
				    "session %s: an orphaned region (its logger, pid %u, died): recover it first "
				    "(tracelogger --recover)",
				    name, pid);
		}
		{
			char msg[sizeof(tls_errmsg)];
			snprintf(msg, sizeof(msg), "%s", tk_session_errmsg());
			return fail(TK_EEXIST, "session %s: a region exists and cannot be used (%s)", name, msg);
		}
	}
	if (s->fd < 0) {
		err = errno;
		free(s);
		return fail(errno_code(err), "session %s: cannot create the region: %s", name, strerror(err));
	}
	if (flock(s->fd, LOCK_EX | LOCK_NB) != 0) {
		err = errno;
		shm_unlink(s->shm_name);
		close_handle(s);
		return fail(errno_code(err), "session %s: cannot lock the region: %s", name, strerror(err));
	}
	err = posix_fallocate(s->fd, 0, (off_t)l.size);
	if (err != 0) {
		shm_unlink(s->shm_name);
		close_handle(s);
		return fail(errno_code(err), "session %s: cannot size the region to %llu bytes: %s", name,
			    (unsigned long long)l.size, strerror(err));
	}
	s->size = (size_t)l.size;
	s->base = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->base == MAP_FAILED) {
		err = errno;
		s->base = NULL;
		shm_unlink(s->shm_name);
		close_handle(s);
		return fail(errno_code(err), "session %s: cannot map the region: %s", name, strerror(err));
	}
	rc = tk_session_format(s->base, s->size, name, n_buffers);
	if (rc != TK_OK) {
		shm_unlink(s->shm_name);
		close_handle(s);
		return fail(rc, "session %s: cannot format the region: %s", name, tk_strerror(rc));
	}
	rc = bind_region(s);
	if (rc != TK_OK) {
		shm_unlink(s->shm_name);
		close_handle(s);
		return rc;
	}
	*out = s;
	return TK_OK;
}

/* What a file that is not a regular file is, for a message. */
static const char *kind_of(mode_t m)
{
	return S_ISLNK(m)    ? "a symbolic link (never followed)"
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m) || S_ISBLK(m) ? "a device"
	       : S_ISREG(m)  ? "a regular file"
			     : "not a regular file";
}

/* The kind of what sits at path when it is not a regular file (shm_open failed on it). */
static const char *not_a_region(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0 || S_ISREG(st.st_mode))
		return NULL;
	return kind_of(st.st_mode);
}

int tk_session_open(tk_session **out, const char *name, unsigned flags)
{
	tk_session *s;
	struct stat st;
	char why[256];
	int rc, err;

	if (out == NULL)
		return fail(TK_EINVAL, "no handle");
	*out = NULL;
	if (!tk_session_name_valid(name))
		return fail(TK_EINVAL, "\"%s\" is not a session name (1-%d of [A-Za-z0-9_.-], not starting with '.')",
			    name != NULL ? name : "(null)", TK_SESSION_NAME_MAX);
	if (flags != TK_SESSION_WRITER && flags != TK_SESSION_RECOVER)
		return fail(TK_EINVAL, "flags: TK_SESSION_WRITER or TK_SESSION_RECOVER");
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return fail(TK_ENOMEM, "out of memory");
	atomic_init(&s->slot, -1);
	s->role = flags == TK_SESSION_WRITER ? ROLE_WRITER : ROLE_RECOVER;
	tk_session_shm_name(name, s->shm_name, sizeof(s->shm_name));
	s->fd = shm_open(s->shm_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
	if (s->fd < 0) {
		char shm[sizeof(s->shm_name)], path[sizeof(s->shm_name) + 16];
		const char *kind;
		err = errno;
		memcpy(shm, s->shm_name, sizeof(shm));
		close_handle(s);
		if (err == ENOENT)
			return fail(TK_ENOENT, "session %s: no such session (no logger created /dev/shm%s)", name, shm);
		snprintf(path, sizeof(path), "/dev/shm%s", shm);
		if ((kind = not_a_region(path)) != NULL)
			return fail(TK_EACCES, "session %s: %s is %s, not a session region: refused", name, path, kind);
		return fail(errno_code(err), "session %s: cannot open the region %s: %s", name, path, strerror(err));
	}
	if (fstat(s->fd, &st) != 0) {
		err = errno;
		close_handle(s);
		return fail(errno_code(err), "session %s: fstat: %s", name, strerror(err));
	}
	if (!S_ISREG(st.st_mode)) {
		char shm[sizeof(s->shm_name)];
		memcpy(shm, s->shm_name, sizeof(shm));
		close_handle(s);
		return fail(TK_EACCES, "session %s: /dev/shm%s is %s, not a session region: refused", name, shm,
			    kind_of(st.st_mode));
	}
	if (st.st_uid != geteuid()) {
		close_handle(s);
		return fail(TK_EACCES, "session %s: the region belongs to uid %u, not to us (uid %u): refused", name,
			    (unsigned)st.st_uid, (unsigned)geteuid());
	}
	if ((st.st_mode & 077) != 0) {
		close_handle(s);
		return fail(TK_EACCES, "session %s: the region's mode %03o lets others in (0600 expected): refused", name,
			    (unsigned)(st.st_mode & 0777));
	}
	if (st.st_size < (off_t)sizeof(struct tk__sess_hdr) || (uint64_t)st.st_size > ((uint64_t)1 << 40)) {
		close_handle(s);
		return fail(TK_EFORMAT, "session %s: byte 0: a region of %lld bytes is not a session", name,
			    (long long)st.st_size);
	}
	s->size = (size_t)st.st_size;
	s->base = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->base == MAP_FAILED) {
		err = errno;
		s->base = NULL;
		close_handle(s);
		return fail(errno_code(err), "session %s: cannot map the region: %s", name, strerror(err));
	}
	/* the logger lock: a writer wants it held, recovery wants it free (and takes it) */
	if (flags == TK_SESSION_WRITER) {
		if (flock(s->fd, LOCK_SH | LOCK_NB) == 0) {
			flock(s->fd, LOCK_UN);
			close_handle(s);
			return fail(TK_ENOENT, "session %s: no logger (the region is orphaned)", name);
		}
	} else if (flock(s->fd, LOCK_EX | LOCK_NB) != 0) {
		uint32_t pid = read_logger_pid(s);
		close_handle(s);
		return fail(TK_EBUSY, "session %s: a live logger (pid %u) holds it", name, pid);
	}
	rc = tk_session_check(s->base, s->size, why, sizeof(why));
	if (rc != TK_OK) {
		char shm[sizeof(s->shm_name)];
		memcpy(shm, s->shm_name, sizeof(shm));
		close_handle(s);
		return fail(rc, "session %s (/dev/shm%s): %s", name, shm, why);
	}
	if (((struct tk__sess_hdr *)(void *)s->base)->owner_uid != (uint32_t)geteuid()) {
		uint32_t owner = ((struct tk__sess_hdr *)(void *)s->base)->owner_uid;
		close_handle(s);
		return fail(TK_EACCES, "session %s: byte 24 (owner_uid): uid %u, not ours (%u): refused", name, owner,
			    (unsigned)geteuid());
	}
	rc = bind_region(s);
	if (rc != TK_OK) {
		close_handle(s);
		return rc;
	}
	if (flags == TK_SESSION_WRITER) {
		rc = tk_session_register(s);
		if (rc < 0) {
			close_handle(s);
			return rc;
		}
	}
	*out = s;
	return TK_OK;
}

void tk_session_abandon(tk_session *s)
{
	close_handle(s);
}

int tk_session_close(tk_session *s)
{
	int rc = TK_OK;

	if (s == NULL)
		return TK_OK;
	if (s->role != ROLE_WRITER && shm_unlink(s->shm_name) != 0 && errno != ENOENT)
		rc = fail(errno_code(errno), "session %s: cannot remove the region: %s", s->shm_name, strerror(errno));
	close_handle(s);
	return rc;
}
