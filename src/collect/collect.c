/* SPDX-License-Identifier: MIT */
/*
 * collect: the kernel side of a trace from perf_event_open (docs/collect.md). One ring
 * buffer per CPU (every event of that CPU is redirected into it with SET_OUTPUT, so its
 * records are in time order), read with poll; records stamped CLOCK_MONOTONIC_RAW; each
 * record becomes one or more .kev events of the QNX classes.
 */
#include "tracekit/collect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <tracefs.h>

#include "collect_internal.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif
#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif
#define IS_RT(pol) ((pol) == SCHED_FIFO || (pol) == SCHED_RR)

/* What produced a record: the perf event it came from. */
enum kind {
	K_BASE,      /* dummy: switch, fork/exit, comm, mmap2 records */
	K_CLOCK,     /* cpu-clock samples */
	K_SWITCH,    /* tracepoints from here on */
	K_WAKEUP,
	K_IRQ_ENTRY,
	K_IRQ_EXIT,
	K_SOFTIRQ_ENTRY,
	K_SOFTIRQ_EXIT,
	K_SYS_ENTER,
	K_SYS_EXIT,
	K_N
};

static const struct {
	const char *sys, *name;
} tracepoints[K_N] = {
	[K_SWITCH] = { "sched", "sched_switch" },
	[K_WAKEUP] = { "sched", "sched_wakeup" },
	[K_IRQ_ENTRY] = { "irq", "irq_handler_entry" },
	[K_IRQ_EXIT] = { "irq", "irq_handler_exit" },
	[K_SOFTIRQ_ENTRY] = { "irq", "softirq_entry" },
	[K_SOFTIRQ_EXIT] = { "irq", "softirq_exit" },
	[K_SYS_ENTER] = { "raw_syscalls", "sys_enter" },
	[K_SYS_EXIT] = { "raw_syscalls", "sys_exit" },
};

/* Fields read from tracepoint records, per kind. */
enum { F_A, F_B, F_C, F_D, F_E, F_N };
static const char *const tp_fields[K_N][F_N] = {
	[K_SWITCH] = { "prev_pid", "prev_state", "next_pid", "prev_prio", "next_prio" },
	[K_WAKEUP] = { "pid", "prio", NULL, NULL, NULL },
	[K_IRQ_ENTRY] = { "irq", "name", NULL, NULL, NULL },
	[K_IRQ_EXIT] = { "irq", "ret", NULL, NULL, NULL },
	[K_SOFTIRQ_ENTRY] = { "vec", NULL, NULL, NULL, NULL },
	[K_SOFTIRQ_EXIT] = { "vec", NULL, NULL, NULL, NULL },
	[K_SYS_ENTER] = { "id", "args", NULL, NULL, NULL },
	[K_SYS_EXIT] = { "id", "ret", NULL, NULL, NULL },
};

#define BASE_SAMPLE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/* System calls during which a blocked thread's state says more than "interruptible"
 * (x86-64 numbers): recorded even when KER_CALL is not, to name blocked states. */
static const int blocking_calls[] = {
	0 /* read */,       1 /* write */,     7 /* poll */,        19 /* readv */,
	20 /* writev */,    23 /* select */,   34 /* pause */,      35 /* nanosleep */,
	42 /* connect */,   43 /* accept */,   44 /* sendto */,     45 /* recvfrom */,
	46 /* sendmsg */,    47 /* recvmsg */,  61 /* wait4 */,      128 /* rt_sigtimedwait */,
	130 /* rt_sigsuspend */, 202 /* futex */, 230 /* clock_nanosleep */, 232 /* epoll_wait */,
	247 /* waitid */,   270 /* pselect6 */, 271 /* ppoll */,    281 /* epoll_pwait */,
	288 /* accept4 */,  299 /* recvmmsg */, 441 /* epoll_pwait2 */, 449 /* futex_waitv */,
};

static void set_why(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_why(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || cap == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
}

static int read_int_file(const char *path, long *v)
{
	char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	*v = strtol(buf, NULL, 10);
	return 0;
}

/* Whether this process has capability bit `cap` in its effective set. */
static int has_cap(int cap)
{
	char line[256];
	int yes = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "CapEff:", 7) == 0) {
			unsigned long long v = strtoull(line + 7, NULL, 16);
			yes = (v >> cap) & 1;
			break;
		}
	}
	fclose(f);
	return yes;
}

#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT   38

/* A sentence on why perf_event_open failed with errno `err` and what would allow it. */
static void explain_refusal(const tk_collect *c, char *why, size_t cap, int err, const char *what)
{
	long paranoid = 99;

	if (err == EMFILE || err == ENFILE) {
		/* not the kernel's refusal: the descriptors ran out (the paranoid file could
		 * not even be opened then) */
		struct rlimit rl;
		char need[128] = "";
		if (c->fds_needed > 0)
			snprintf(need, sizeof(need), "%zu needed (%zu open when they ran out), ", c->fds_needed,
			         c->n_fds);
		else
			snprintf(need, sizeof(need), "%zu open when they ran out, ", c->n_fds);
		if (err == ENFILE) {
			set_why(why, cap, "%s: out of file descriptors (%s): %sthe system's table of open files is "
			        "full (sysctl fs.file-max)", what, strerror(err), need);
		} else if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
			set_why(why, cap, "%s: out of file descriptors (%s): %sthe limit is %llu (ulimit -n; raised to "
			        "the hard limit already); recording needs one per followed thread, CPU and kind "
			        "of record: follow fewer threads or raise the hard limit (ulimit -Hn, "
			        "limits.conf, the container's nofile)", what, strerror(err), need,
			        (unsigned long long)rl.rlim_cur);
		} else {
			set_why(why, cap, "%s: out of file descriptors (%s): %s(ulimit -n)", what, strerror(err), need);
		}
		return;
	}
	errno = 0;
	int unread = read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid) != 0, e = errno;
	if (unread && e != ENOENT) {
		set_why(why, cap, "%s: perf_event_open failed (%s), and /proc/sys/kernel/perf_event_paranoid "
		        "cannot be read (%s)", what, strerror(err), e != 0 ? strerror(e) : "it is empty");
		return;
	}
	if (unread) {
		set_why(why, cap, "%s: perf_event_open is not available (%s) and "
		        "/proc/sys/kernel/perf_event_paranoid does not exist: the kernel was built "
		        "without perf events (CONFIG_PERF_EVENTS)", what, strerror(err));
		return;
	}
	if ((err == EACCES || err == EPERM) && (has_cap(CAP_PERFMON_BIT) || has_cap(CAP_SYS_ADMIN_BIT))) {
		set_why(why, cap, "%s: perf_event_open refused (%s) although this process has "
		        "CAP_PERFMON or CAP_SYS_ADMIN (perf_event_paranoid is %ld): a security module "
		        "(SELinux, AppArmor, lockdown) or a container forbids it", what, strerror(err),
		        paranoid);
		return;
	}
	if (err == EACCES || err == EPERM) {
		set_why(why, cap,
		        "%s: perf_event_open refused (%s): perf_event_paranoid is %ld and this process "
		        "has neither CAP_PERFMON nor CAP_SYS_ADMIN; run as root, grant CAP_PERFMON "
		        "(setcap cap_perfmon+ep), or set kernel.perf_event_paranoid to -1 "
		        "(sysctl -w kernel.perf_event_paranoid=-1)",
		        what, strerror(err), paranoid);
		return;
	}
	if (err == ESRCH) {
		set_why(why, cap, "%s: no such process (it has exited)", what);
		return;
	}
	set_why(why, cap, "%s: perf_event_open failed: %s (perf_event_paranoid is %ld)", what,
	        strerror(err), paranoid);
}

/* Kernels before 6.0 refuse PERF_FORMAT_LOST (EINVAL): then it is left out from there on. */
/* The TK_E* code of a perf_event_open errno. */
static int refusal_code(int e)
{
	return e == ESRCH ? TK_ENOENT : (e == EACCES || e == EPERM) ? TK_EACCES
	       : (e == EMFILE || e == ENFILE) ? TK_EMFILE : TK_ENOTSUP;
}

static int perf_open(tk_collect *c, struct perf_event_attr *a, int pid, int cpu)
{
	int fd;

	if (c->fmt_lost)
		a->read_format |= PERF_FORMAT_LOST;
	fd = (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL && c->fmt_lost) {
		c->fmt_lost = 0;
		a->read_format &= ~(uint64_t)PERF_FORMAT_LOST;
		fd = (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return fd;
}

/* ---- thread table ------------------------------------------------------------------- */

static struct tk__collect_thread *thr_find(tk_collect *c, int tid, int add)
{
	size_t i, mask;

	if (tid <= 0)
		return NULL;
	if (add && (c->thr_n + 1) * 2 > c->thr_cap) {
		size_t ncap = c->thr_cap ? c->thr_cap * 2 : 1024, j;
		struct tk__collect_thread *nt = calloc(ncap, sizeof(*nt));
		if (nt == NULL) {
			c->thr_oom = 1;
			return NULL;
		}
		for (j = 0; j < c->thr_cap; j++) {
			if (c->thr[j].tid == 0)
				continue;
			for (i = (size_t)c->thr[j].tid * 2654435761u & (ncap - 1); nt[i].tid != 0;
			     i = (i + 1) & (ncap - 1))
				;
			nt[i] = c->thr[j];
		}
		free(c->thr);
		c->thr = nt;
		c->thr_cap = ncap;
	}
	if (c->thr_cap == 0)
		return NULL;
	mask = c->thr_cap - 1;
	for (i = (size_t)tid * 2654435761u & mask; c->thr[i].tid != 0; i = (i + 1) & mask)
		if (c->thr[i].tid == tid)
			return &c->thr[i];
	if (!add)
		return NULL;
	memset(&c->thr[i], 0, sizeof(c->thr[i]));
	c->thr[i].tid = tid;
	c->thr[i].sc_nr = -1;
	c->thr_n++;
	return &c->thr[i];
}

/* Forgets tid (linear probing: the entries after it move back into the hole). */
static void thr_del(tk_collect *c, int tid)
{
	size_t i, j, mask = c->thr_cap - 1;

	if (c->thr_cap == 0 || tid <= 0)
		return;
	for (i = (size_t)tid * 2654435761u & mask; c->thr[i].tid != tid; i = (i + 1) & mask)
		if (c->thr[i].tid == 0)
			return;
	for (j = (i + 1) & mask; c->thr[j].tid != 0; j = (j + 1) & mask) {
		size_t home = (size_t)c->thr[j].tid * 2654435761u & mask;
		/* Moves j to the hole i unless its home lies cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			c->thr[i] = c->thr[j];
			i = j;
		}
	}
	memset(&c->thr[i], 0, sizeof(c->thr[i]));
	c->thr_n--;
}

/* The process (thread group) of tid: from the table, else /proc, else tid itself. */
static struct tk__collect_thread *thr_get(tk_collect *c, int tid)
{
	struct tk__collect_thread *t = thr_find(c, tid, 1);
	char path[64], line[128];
	FILE *f;

	if (t == NULL || t->resolved)
		return t;
	t->resolved = 1;
	if (t->pid == 0)
		t->pid = tid;
	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "Tgid:", 5) == 0)
				t->pid = atoi(line + 5);
			else if (strncmp(line, "PPid:", 5) == 0)
				t->ppid = atoi(line + 5);
			else if (strncmp(line, "Name:", 5) == 0) {
				char *s = line + 5;
				size_t n;
				while (*s == ' ' || *s == '\t')
					s++;
				n = strcspn(s, "\n");
				if (n >= sizeof(t->comm))
					n = sizeof(t->comm) - 1;
				memcpy(t->comm, s, n);
				t->comm[n] = '\0';
			}
		}
		fclose(f);
	}
	return t;
}

/* ---- emission ----------------------------------------------------------------------- */

/*
 * Before an event of the record's task (c->rec_tid): an owner marker of that task when the
 * CPU's last THRUNNING names another, so that by the per-CPU rule the event has its thread
 * even when THREAD is not recorded (docs/tracelogger.md, "Owners"). A THRUNNING written
 * makes its thread the CPU's owner.
 */
static int note_owner(tk_collect *c, unsigned cpu, unsigned cls, unsigned code, const uint32_t *w, size_t n,
		      uint64_t t)
{
	unsigned k = cpu & 63u;
	traceevent_t m[2];
	int rc;

	if (cls == _TRACE_CONTROL_C)
		return 0;
	if (cls == _TRACE_PR_TH_C && code == STATE_RUNNING && n >= 2) { /* -w: 4 words */
		c->own_pid[k] = (int32_t)w[0];
		c->own_tid[k] = (int32_t)w[1];
		c->own_valid |= 1ull << k;
		return 0;
	}
	if (c->rec_tid <= 0 ||
	    ((c->own_valid >> k) & 1 && c->own_pid[k] == c->rec_pid && c->own_tid[k] == c->rec_tid))
		return 0;
	tk__collect_owner_marker(m, cpu, t, c->rec_pid, c->rec_tid);
	c->own_pid[k] = c->rec_pid;
	c->own_tid[k] = c->rec_tid;
	c->own_valid |= 1ull << k;
	c->emitted += 2;
	if ((rc = c->emit(c->emit_ud, &m[0], 1, t)) != 0)
		return rc;
	return c->emit(c->emit_ud, &m[1], 1, t);
}

/* One event of n words (combine when n > 2) on cpu at time t. */
static int emit_words(tk_collect *c, unsigned cpu, unsigned cls, unsigned code, const uint32_t *w,
                      size_t n, uint64_t t)
{
	traceevent_t *s = c->slots;
	size_t ns, i;
	uint32_t lo = (uint32_t)t;
	int rc;

	if ((rc = note_owner(c, cpu, cls, code, w, n, t)) != 0)
		return rc;
	if (n <= 2) {
		s[0].header = _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, cls, code);
		s[0].data[0] = lo;
		s[0].data[1] = n > 0 ? w[0] : 0;
		s[0].data[2] = n > 1 ? w[1] : 0;
		ns = 1;
	} else {
		ns = (n + 1) / 2;
		if (ns > TK__COLLECT_MAX_SLOTS)
			ns = TK__COLLECT_MAX_SLOTS, n = 2 * ns;
		for (i = 0; i < ns; i++) {
			unsigned flag = i == 0 ? _TRACE_STRUCT_CB
			                : i + 1 == ns ? _TRACE_STRUCT_CE : _TRACE_STRUCT_CC;
			s[i].header = _TRACE_MAKE_CODE(cpu, flag, cls, code);
			s[i].data[0] = lo;
			s[i].data[1] = w[2 * i];
			s[i].data[2] = 2 * i + 1 < n ? w[2 * i + 1] : 0;
		}
	}
	c->emitted++;
	return c->emit(c->emit_ud, s, ns, t);
}

/* n words, then a NUL-terminated string packed 4 bytes a word: a combine event. */
static int emit_wn(tk_collect *c, unsigned cpu, unsigned cls, unsigned code, const uint32_t *pre,
                   size_t n, const char *name, uint64_t t)
{
	uint32_t w[16 + 66];
	size_t len = strnlen(name, 255), nw = (len + 1 + 3) / 4;

	if (n > 16)
		return TK_EINVAL;
	memcpy(w, pre, n * 4);
	memset(&w[n], 0, nw * 4);
	memcpy(&w[n], name, len);
	if (n + nw < 3) /* at least CB and CE */
		w[n + nw++] = 0;
	return emit_words(c, cpu, cls, code, w, n + nw, t);
}

static int emit_named(tk_collect *c, unsigned cpu, unsigned cls, unsigned code, uint32_t a,
                      uint32_t b, const char *name, uint64_t t)
{
	uint32_t w[2] = { a, b };

	return emit_wn(c, cpu, cls, code, w, 2, name, t);
}

/* CONTROL DROPPED: records perf lost (count low, high). */
static int emit_dropped(tk_collect *c, unsigned cpu, uint64_t lost, uint64_t t)
{
	uint32_t w[2] = { (uint32_t)lost, (uint32_t)(lost >> 32) };

	c->lost += lost;
	return emit_words(c, cpu, _TRACE_CONTROL_C, _TRACE_CONTROL_DROPPED, w, 2, t);
}

/*
 * -w: the priority and policy of tid as QNX's wide THREAD events carry them. prio is the
 * kernel's (as sched_switch gives it: 0-99 real-time, 100-139 normal, 120 + nice): what the
 * tracepoints last said, else asked (sched_getscheduler, sched_getparam, getpriority; the
 * unprivileged tier has nothing else) and kept. A thread gone before it could be asked has
 * those of the task that brought the record (a new thread inherits its creator's), else 120
 * and SCHED_OTHER, until a tracepoint says otherwise.
 */
static void sched_of(tk_collect *c, int tid, uint32_t *prio, uint32_t *policy)
{
	struct tk__collect_thread *th = thr_find(c, tid, 0), *from;
	int pol, pr = -1, asked = 0;

	if (th != NULL && th->sched_known == 2) {
		*prio = (uint32_t)th->prio, *policy = (uint32_t)th->policy;
		return;
	}
	pol = sched_getscheduler(tid);
	if (pol >= 0) {
		asked = 1;
		pol &= ~SCHED_RESET_ON_FORK;
		if (pol == SCHED_FIFO || pol == SCHED_RR) {
			struct sched_param sp;
			if (sched_getparam(tid, &sp) == 0)
				pr = 99 - sp.sched_priority;
		} else if (pol != SCHED_DEADLINE) {
			errno = 0;
			int nice = getpriority(PRIO_PROCESS, (id_t)tid);
			if (errno == 0)
				pr = 120 + nice;
		}
	} else if (c->rec_tid != tid && (from = thr_find(c, c->rec_tid, 0)) != NULL && from->sched_known != 0) {
		pol = from->policy, pr = from->prio;
	} else {
		pol = SCHED_OTHER;
	}
	if (th != NULL && th->sched_known == 1) {
		/* a tracepoint's is the kernel's own, of that time: the policy asked now may
		 * have changed since (chrt), its class follows the prio */
		pr = th->prio;
		if (pr >= 100 && IS_RT(pol))
			pol = SCHED_OTHER;
		else if (pr >= 0 && pr < 100 && !IS_RT(pol) && pol != SCHED_DEADLINE)
			pol = SCHED_FIFO;
	}
	if (pr < 0)
		pr = pol == SCHED_DEADLINE ? -1 : 120; /* -1: the kernel's prio of a deadline task */
	*prio = (uint32_t)pr, *policy = (uint32_t)pol;
	if (th != NULL) {
		th->prio = pr, th->policy = pol;
		th->sched_known = asked ? 2 : 1;
	}
}

/* A tracepoint's prio of tid (the policy is asked when first needed). */
static void note_prio(tk_collect *c, int tid, int prio)
{
	struct tk__collect_thread *th = thr_find(c, tid, 0);

	if (th == NULL || !c->wide)
		return;
	th->prio = prio;
	/* first known, or the policy kept is of the other class (changed since: ask again) */
	if (th->sched_known == 0 || (prio >= 0 && (prio < 100) != IS_RT(th->policy)))
		th->sched_known = 1;
}

/* A THREAD event of (pid, tid); -w: a wide one with priority and policy (QNX's wide mode). */
static int emit_state(tk_collect *c, unsigned cpu, unsigned state, int pid, int tid, uint64_t t)
{
	uint32_t w[4] = { (uint32_t)pid, (uint32_t)tid, 0, 0 };

	if (!(c->classes & TK_COLLECT_CLASS(_NTO_TRACE_THREAD)))
		return 0;
	if (!c->wide)
		return emit_words(c, cpu, _TRACE_PR_TH_C, state, w, 2, t);
	sched_of(c, tid, &w[2], &w[3]);
	return emit_words(c, cpu, _TRACE_PR_TH_C, state, w, 4, t);
}

static int want(const tk_collect *c, int ext)
{
	return (c->classes & TK_COLLECT_CLASS(ext)) != 0;
}

/* QNX state closest to a Linux thread blocked in system call nr (docs/collect.md). */
static unsigned state_of_call(int nr, uint64_t arg1)
{
	switch (nr) {
	case 202: /* futex */
		switch (arg1 & 0x7f) {
		case 0:  /* FUTEX_WAIT: glibc's mutex lock */
		case 6:  /* FUTEX_LOCK_PI */
		case 13: /* FUTEX_LOCK_PI2 */
			return STATE_MUTEX;
		default: /* FUTEX_WAIT_BITSET, WAIT_REQUEUE_PI: condvars, semaphores, join */
			return STATE_CONDVAR;
		}
	case 449:
		return STATE_CONDVAR;
	case 35:
	case 230:
		return STATE_NANOSLEEP;
	case 0: case 7: case 19: case 23: case 43: case 45: case 47: case 232: case 270:
	case 271: case 281: case 288: case 299: case 441:
		return STATE_RECEIVE;
	case 1: case 20: case 42: case 44: case 46:
		return STATE_SEND;
	case 61:
	case 247:
		return STATE_WAITTHREAD;
	case 34:
	case 130:
		return STATE_SIGSUSPEND;
	case 128:
		return STATE_SIGWAITINFO;
	default:
		return STATE_INTR;
	}
}

/* sched_switch's prev_state (TASK_REPORT bits) onto a QNX state. */
static unsigned state_of_prev(const struct tk__collect_thread *t, uint64_t prev_state)
{
	if (prev_state == 0 || (prev_state & 0x100)) /* runnable, or preempted */
		return STATE_READY;
	if (prev_state & 0x1) /* S: interruptible */
		return t != NULL && t->sc_nr >= 0 ? state_of_call(t->sc_nr, t->sc_arg1) : STATE_INTR;
	if (prev_state & 0x2) /* D: uninterruptible (I/O, page in) */
		return STATE_WAITPAGE;
	if (prev_state & 0xc) /* T, t: stopped, traced */
		return STATE_STOPPED;
	if (prev_state & 0x30) /* X, Z */
		return STATE_DEAD;
	return STATE_INTR; /* P, I: parked, idle kernel threads */
}


/* ---- record decoding ---------------------------------------------------------------- */

struct sid {
	uint32_t pid, tid, cpu;
	uint64_t time, id;
};

/* The sample_id trailer of a non-sample record (BASE_SAMPLE fields). */
static int parse_trailer(const unsigned char *rec, size_t size, struct sid *s)
{
	const unsigned char *p;

	if (size < sizeof(struct perf_event_header) + 32)
		return -1;
	p = rec + size - 32;
	memcpy(&s->pid, p, 4);
	memcpy(&s->tid, p + 4, 4);
	memcpy(&s->time, p + 8, 8);
	memcpy(&s->cpu, p + 16, 4);
	memcpy(&s->id, p + 24, 8);
	return 0;
}

static int kind_of(const tk_collect *c, uint64_t id)
{
	size_t i;

	for (i = 0; i < c->n_ids; i++)
		if (c->ids[i].id == id)
			return c->ids[i].kind;
	return -1;
}

static uint64_t tp_num(const tk_collect *c, int kind, int f, const void *raw, size_t rawlen)
{
	unsigned long long v = 0;
	struct tep_format_field *fld = c->tpf[kind][f];

	if (fld == NULL || (size_t)fld->offset + (size_t)fld->size > rawlen)
		return 0;
	if (tep_read_number_field(fld, raw, &v) != 0)
		return 0;
	return v;
}

/* Per CPU, times never go back (perf may write an NMI-time sample slightly out of order). */
static uint64_t mono(tk_collect *c, unsigned cpu, uint64_t t)
{
	if (cpu < (unsigned)c->ncpu) {
		if (t < c->last_time[cpu])
			t = c->last_time[cpu];
		c->last_time[cpu] = t;
	}
	return t;
}

static int do_tracepoint(tk_collect *c, int kind, unsigned cpu, const struct sid *s,
                         const unsigned char *raw, size_t rawlen)
{
	uint64_t t = mono(c, cpu, s->time);
	struct tk__collect_thread *th;
	uint32_t w[16];

	switch (kind) {
	case K_SWITCH: {
		int prev = (int)tp_num(c, kind, F_A, raw, rawlen);
		uint64_t st = tp_num(c, kind, F_B, raw, rawlen);
		if (c->wide && c->tpf[kind][F_E] != NULL) /* for its switch-in, written next */
			note_prio(c, (int)tp_num(c, kind, F_C, raw, rawlen), (int)(int32_t)tp_num(c, kind, F_E, raw, rawlen));
		if (prev == 0)
			return 0; /* the idle task */
		if (c->wide && c->tpf[kind][F_D] != NULL)
			note_prio(c, prev, (int)(int32_t)tp_num(c, kind, F_D, raw, rawlen));
		th = thr_get(c, prev);
		if (th == NULL)
			return c->thr_oom ? TK_ENOMEM : 0; /* tid 0: the idle task */
		if (th->dead)
			return 0; /* its THDEAD was emitted at exit */
		return emit_state(c, cpu, state_of_prev(th, st), th->pid, prev, t);
	}
	case K_WAKEUP: {
		int tid = (int)tp_num(c, kind, F_A, raw, rawlen);
		th = c->system_wide ? thr_get(c, tid) : thr_find(c, tid, 0);
		if (th == NULL || th->dead)
			return 0; /* not a followed thread */
		if (c->wide && c->tpf[kind][F_B] != NULL)
			note_prio(c, tid, (int)(int32_t)tp_num(c, kind, F_B, raw, rawlen));
		return emit_state(c, cpu, STATE_READY, th->pid, tid, t);
	}
	case K_IRQ_ENTRY:
	case K_SOFTIRQ_ENTRY:
	case K_IRQ_EXIT:
	case K_SOFTIRQ_EXIT: {
		int entry = kind == K_IRQ_ENTRY || kind == K_SOFTIRQ_ENTRY;
		int soft = kind == K_SOFTIRQ_ENTRY || kind == K_SOFTIRQ_EXIT;
		uint32_t irq = (uint32_t)tp_num(c, kind, F_A, raw, rawlen) + (soft ? TK__SOFTIRQ_BASE : 0);
		if (!want(c, _NTO_TRACE_INT))
			return 0;
		w[0] = irq;
		w[1] = kind == K_IRQ_EXIT ? (uint32_t)tp_num(c, kind, F_B, raw, rawlen) : 0;
		if (entry && kind == K_IRQ_ENTRY && c->tpf[kind][F_B] != NULL) {
			/* The handler's name, once per IRQ number, as SYSTEM ADDRESS-free MAPNAME-like
			 * INT_HANDLER_ENTRY: pid 0, irq, 0, 0 then the name (docs/collect.md). */
			struct tep_format_field *f = c->tpf[kind][F_B];
			if (irq < 256 && !c->irq_named[irq] && (size_t)f->offset + 4 <= rawlen) {
				uint32_t dl;
				char name[64];
				size_t off, len;
				memcpy(&dl, raw + f->offset, 4);
				off = dl & 0xffff, len = dl >> 16;
				if (off + len <= rawlen) {
					if (len >= sizeof(name))
						len = sizeof(name) - 1;
					memcpy(name, raw + off, len);
					name[len] = '\0';
					c->irq_named[irq] = 1;
					int rc = emit_named(c, cpu, _TRACE_SYSTEM_C, TK__SYS_IRQNAME, irq, 0, name, t);
					if (rc != 0)
						return rc;
				}
			}
		}
		return emit_words(c, cpu, _TRACE_INT_C, entry ? _TRACE_INT_ENTRY : _TRACE_INT_EXIT, w, 2, t);
	}
	case K_SYS_ENTER:
	case K_SYS_EXIT: {
		int64_t nr = (int64_t)tp_num(c, kind, F_A, raw, rawlen);
		unsigned code;
		uint64_t args[6] = { 0 };
		size_t i, n;
		th = thr_find(c, (int)s->tid, 1);
		if (th == NULL)
			return c->thr_oom ? TK_ENOMEM : 0; /* tid 0: the idle task */
		if (th->pid == 0)
			th->pid = (int)s->pid;
		if (kind == K_SYS_ENTER) {
			struct tep_format_field *f = c->tpf[kind][F_B];
			if (f != NULL && (size_t)f->offset + 48 <= rawlen)
				memcpy(args, raw + f->offset, 48);
			th->sc_nr = (int)nr;
			th->sc_arg1 = args[1];
		} else {
			th->sc_nr = -1;
		}
		if (!want(c, _NTO_TRACE_KERCALL) || nr < 0)
			return 0;
		code = TK_COLLECT_KERCALL_CODE(nr < 512 ? nr : 511, kind == K_SYS_EXIT);
		if (kind == K_SYS_EXIT) {
			uint64_t ret = tp_num(c, kind, F_B, raw, rawlen);
			n = 0;
			if (c->wide)
				w[n++] = (uint32_t)nr;
			w[n++] = (uint32_t)ret;
			w[n++] = (uint32_t)(ret >> 32);
		} else if (c->wide) {
			w[0] = (uint32_t)nr;
			for (i = 0; i < 6; i++) {
				w[1 + 2 * i] = (uint32_t)args[i];
				w[2 + 2 * i] = (uint32_t)(args[i] >> 32);
			}
			n = 13;
		} else {
			w[0] = (uint32_t)args[0];
			w[1] = (uint32_t)args[1];
			n = 2;
		}
		return emit_words(c, cpu, _TRACE_KER_CALL_C, code, w, n, t);
	}
	default:
		return 0;
	}
}

static int do_sample(tk_collect *c, unsigned cpu, const unsigned char *rec, size_t size)
{
	const unsigned char *p = rec + sizeof(struct perf_event_header), *end = rec + size;
	struct sid s;
	uint64_t ip = 0, nr = 0;
	const unsigned char *chain = NULL, *raw = NULL;
	uint32_t rawlen = 0;
	int kind;

	if (p + 8 > end)
		return 0;
	memcpy(&s.id, p, 8);
	p += 8;
	kind = kind_of(c, s.id);
	if (kind < 0)
		return 0;
	if (kind == K_CLOCK) {
		if (p + 8 > end)
			return 0;
		memcpy(&ip, p, 8);
		p += 8;
	}
	if (p + 24 > end)
		return 0;
	memcpy(&s.pid, p, 4);
	memcpy(&s.tid, p + 4, 4);
	memcpy(&s.time, p + 8, 8);
	memcpy(&s.cpu, p + 16, 4);
	p += 24;
	c->rec_pid = (int32_t)s.pid; /* the task running: the owner of what it brings */
	c->rec_tid = (int32_t)s.tid;
	if (kind == K_CLOCK) {
		uint32_t w[4 + 2 * 64];
		size_t n = 4, i;
		uint64_t t;
		if (c->callchains) {
			if (p + 8 > end)
				return 0;
			memcpy(&nr, p, 8);
			p += 8;
			if (nr > (uint64_t)(end - p) / 8)
				return 0;
			chain = p;
		}
		t = mono(c, cpu, s.time);
		if (!want(c, _NTO_TRACE_SYSTEM))
			return 0;
		w[0] = s.pid, w[1] = s.tid, w[2] = (uint32_t)ip, w[3] = (uint32_t)(ip >> 32);
		for (i = 0; i < nr && n + 2 <= sizeof(w) / sizeof(w[0]); i++) {
			uint64_t a;
			memcpy(&a, chain + 8 * i, 8);
			if (a >= (uint64_t)-4095 || (i < 2 && a == ip))
				continue; /* a PERF_CONTEXT_* marker, or the sampled address again */
			w[n++] = (uint32_t)a;
			w[n++] = (uint32_t)(a >> 32);
		}
		return emit_words(c, cpu, _TRACE_SYSTEM_C, TK_COLLECT_SYS_PCTRACE, w, n, t);
	}
	if (p + 4 > end)
		return 0;
	memcpy(&rawlen, p, 4);
	p += 4;
	if (rawlen > (size_t)(end - p))
		return 0;
	raw = p;
	return do_tracepoint(c, kind, cpu, &s, raw, rawlen);
}

static int do_record(tk_collect *c, unsigned cpu, const unsigned char *rec, size_t size)
{
	struct perf_event_header h;
	struct sid s;
	struct tk__collect_thread *th;
	uint64_t t;
	int rc;

	memcpy(&h, rec, sizeof(h));
	c->records++;
	c->rec_pid = c->rec_tid = 0;
	if (h.type == PERF_RECORD_SAMPLE)
		return do_sample(c, cpu, rec, size);
	if (parse_trailer(rec, size, &s) != 0)
		return 0;
	c->rec_pid = (int32_t)s.pid;
	c->rec_tid = (int32_t)s.tid;
	t = mono(c, cpu, s.time);
	switch (h.type) {
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE: {
		int out = (h.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
		if (s.tid == 0)
			return 0; /* idle */
		if (!out) {
			th = thr_find(c, (int)s.tid, 1);
			if (th == NULL)
				return c->thr_oom ? TK_ENOMEM : 0;
			th->pid = (int)s.pid;
			return emit_state(c, cpu, STATE_RUNNING, (int)s.pid, (int)s.tid, t);
		}
		th = thr_find(c, (int)s.tid, 0);
		if (th != NULL && th->dead) {
			thr_del(c, (int)s.tid); /* its last switch-out */
			return 0;
		}
		if (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
			return c->tier == TK_COLLECT_TIER_PRIV ? 0 : emit_state(c, cpu, STATE_READY, (int)s.pid, (int)s.tid, t);
		/* Blocked: the privileged tier names the state from sched_switch, written just
		 * before; the unprivileged one knows only "blocked". */
		if (c->tier == TK_COLLECT_TIER_PRIV)
			return 0;
		return emit_state(c, cpu, TK__UNPRIV_BLOCKED, (int)s.pid, (int)s.tid, t);
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		uint32_t pid, ppid, tid, ptid;
		uint32_t w[2];
		if (size < sizeof(h) + 16)
			return 0;
		memcpy(&pid, rec + 8, 4);
		memcpy(&ppid, rec + 12, 4);
		memcpy(&tid, rec + 16, 4);
		memcpy(&ptid, rec + 20, 4);
		if (h.type == PERF_RECORD_FORK) {
			struct tk__collect_thread *parent = thr_get(c, (int)ptid);
			th = thr_find(c, (int)tid, 1);
			if (th == NULL)
				return c->thr_oom ? TK_ENOMEM : 0; /* tid 0: the idle task */
			th->pid = (int)pid;
			th->dead = 0;
			th->sc_nr = -1;
			th->resolved = 1;
			if (parent != NULL)
				memcpy(th->comm, parent->comm, sizeof(th->comm));
			if (pid == tid) {
				th->ppid = (int)ppid;
				if (want(c, _NTO_TRACE_PROCESS)) {
					rc = emit_named(c, cpu, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, ppid, pid,
					                th->comm, t);
					if (rc != 0)
						return rc;
				}
			}
			return emit_state(c, cpu, _TRACE_THREAD_CREATE, (int)pid, (int)tid, t);
		}
		th = thr_find(c, (int)tid, 1);
		if (th == NULL)
			return c->thr_oom ? TK_ENOMEM : 0; /* tid 0: the idle task */
		if (th->dead)
			return 0;
		th->dead = 1;
		rc = emit_state(c, cpu, STATE_DEAD, (int)pid, (int)tid, t);
		if (rc == 0)
			rc = emit_state(c, cpu, _TRACE_THREAD_DESTROY, (int)pid, (int)tid, t);
		if (rc == 0 && pid == tid && want(c, _NTO_TRACE_PROCESS)) {
			w[0] = th->ppid ? (uint32_t)th->ppid : ppid;
			w[1] = pid;
			rc = emit_words(c, cpu, _TRACE_PR_TH_C, _TRACE_PR_TH_DESTROY_P, w, 2, t);
		}
		/* Per task, the thread's events went with it: nothing more will name it.
		 * System-wide, its last switch-out comes still (and forgets it). */
		if (!c->system_wide)
			thr_del(c, (int)tid);
		return rc;
	}
	case PERF_RECORD_COMM: {
		uint32_t pid, tid;
		char name[17];
		size_t max;
		if (size < sizeof(h) + 8 + 32)
			return 0;
		memcpy(&pid, rec + 8, 4);
		memcpy(&tid, rec + 12, 4);
		max = size - sizeof(h) - 8 - 32;
		if (max > 16)
			max = 16;
		memcpy(name, rec + 16, max);
		name[max] = '\0';
		th = thr_get(c, (int)tid);
		if (th == NULL)
			return c->thr_oom ? TK_ENOMEM : 0; /* tid 0: the idle task */
		th->pid = (int)pid;
		memcpy(th->comm, name, sizeof(th->comm) - 1);
		th->comm[sizeof(th->comm) - 1] = '\0';
		if ((h.misc & PERF_RECORD_MISC_COMM_EXEC) && want(c, _NTO_TRACE_PROCESS)) {
			struct tk__collect_thread *leader = thr_get(c, (int)pid);
			rc = emit_named(c, cpu, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME,
			                leader ? (uint32_t)leader->ppid : 0, pid, name, t);
			if (rc != 0)
				return rc;
		}
		if (!want(c, _NTO_TRACE_PROCESS) && !want(c, _NTO_TRACE_THREAD))
			return 0;
		return emit_named(c, cpu, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, pid, tid, name, t);
	}
	case PERF_RECORD_MMAP2: {
		uint32_t pid, prot, flags, w[12];
		uint64_t addr, len, pgoff;
		const char *fn = (const char *)rec + 72;
		char name[256];
		size_t max;
		if (size < 72 + 32 + 1 || !want(c, _NTO_TRACE_SYSTEM))
			return 0;
		memcpy(&pid, rec + 8, 4);
		memcpy(&addr, rec + 16, 8);
		memcpy(&len, rec + 24, 8);
		memcpy(&pgoff, rec + 32, 8);
		memcpy(&prot, rec + 64, 4);
		memcpy(&flags, rec + 68, 4);
		max = size - 72 - 32;
		if (max >= sizeof(name))
			max = sizeof(name) - 1;
		memcpy(name, fn, max);
		name[max] = '\0';
		if (name[0] != '/')
			return 0; /* anonymous, [stack], [vdso]...: not a file */
		/* MMAP as QNX lays it out (pid, vaddr, len, flags, prot, fd, align, offset, path),
		 * 64-bit values as low, high words; fd -1 and align 0: perf does not give them. */
		w[0] = pid;
		w[1] = (uint32_t)addr, w[2] = (uint32_t)(addr >> 32);
		w[3] = (uint32_t)len, w[4] = (uint32_t)(len >> 32);
		w[5] = flags;
		w[6] = prot;
		w[7] = 0xffffffffu;
		w[8] = 0, w[9] = 0;
		w[10] = (uint32_t)pgoff, w[11] = (uint32_t)(pgoff >> 32);
		return emit_wn(c, cpu, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_MMAP, w, 12, name, t);
	}
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		uint64_t lost;
		memcpy(&lost, rec + (h.type == PERF_RECORD_LOST ? 16 : 8), 8);
		if (h.type == PERF_RECORD_LOST && c->cur_ring != NULL) {
			/* Counted once: a disabled collector may have reported them already. */
			struct tk__collect_ring *r = c->cur_ring;
			r->lost_seen += lost;
			if (r->lost_seen <= r->lost_reported)
				return 0;
			lost = r->lost_seen - r->lost_reported;
			r->lost_reported = r->lost_seen;
		}
		return emit_dropped(c, cpu, lost, t);
	}
	default:
		return 0;
	}
}

/* Loads the next complete record of ring r (below its head snapshot) into r->rec. */
static void ring_next(tk_collect *c, struct tk__collect_ring *r)
{
	struct perf_event_mmap_page *m = r->base;
	unsigned char *data = (unsigned char *)r->base + m->data_offset;
	uint64_t size = m->data_size;
	struct perf_event_header h;
	size_t off, first;

	r->rec = NULL;
	if (r->tail >= r->head)
		return;
	off = (size_t)(r->tail % size);
	first = (size_t)size - off;
	if (first >= sizeof(h)) {
		memcpy(&h, data + off, sizeof(h));
	} else {
		memcpy(&h, data + off, first);
		memcpy((unsigned char *)&h + first, data, sizeof(h) - first);
	}
	if (h.size < sizeof(h) || r->tail + h.size > r->head) {
		r->tail = r->head; /* cannot happen with a sane kernel: skip the rest */
		return;
	}
	if (first >= h.size) {
		r->rec = data + off;
	} else {
		memcpy(r->tmp, data + off, first);
		memcpy(r->tmp + first, data, h.size - first);
		r->rec = r->tmp;
	}
	r->rec_size = h.size;
	/* Its time: a sample's after IDENTIFIER (IP) TID; any other's in the trailer. */
	r->rec_time = 0;
	if (h.type == PERF_RECORD_SAMPLE) {
		uint64_t id;
		size_t at;
		if (h.size >= 16) {
			memcpy(&id, r->rec + 8, 8);
			at = 8 + 8 + (kind_of(c, id) == K_CLOCK ? 8 : 0) + 8;
			if (at + 8 <= h.size)
				memcpy(&r->rec_time, r->rec + at, 8);
		}
	} else if (h.size >= sizeof(h) + 32) {
		memcpy(&r->rec_time, r->rec + h.size - 32 + 8, 8);
	}
}

/*
 * Once disabled, nothing more is written to the rings, so losses the kernel had not yet
 * reported with a PERF_RECORD_LOST never would be: ask each event (PERF_FORMAT_LOST).
 */
static int report_pending_losses(tk_collect *c)
{
	size_t j;
	int i, rc;

	if (!c->fmt_lost)
		return 0;
	for (i = 0; i < c->n_rings; i++)
		c->rings[i].lost_total = 0;
	for (j = 0; j < c->n_fds; j++) {
		uint64_t v[2];
		if (read(c->fds[j], v, sizeof(v)) == (ssize_t)sizeof(v))
			c->rings[c->fd_ring[j]].lost_total += v[1];
	}
	for (i = 0; i < c->n_rings; i++) {
		struct tk__collect_ring *r = &c->rings[i];
		if (r->lost_total > r->lost_reported) {
			uint64_t n = r->lost_total - r->lost_reported;
			r->lost_reported = r->lost_total;
			struct timespec now;
			clock_gettime(CLOCK_MONOTONIC_RAW, &now);
			rc = emit_dropped(c, (unsigned)r->cpu, n,
			                  mono(c, (unsigned)r->cpu, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec));
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

/* ---- the tasks there at the start ------------------------------------------------------- */

/* /proc/PID/task/TID/comm (or /proc/PID/comm): the name without its newline; "" if gone. */
static void read_comm(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "re");
	size_t n = 0;

	out[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(out, (int)cap, f) != NULL)
		n = strcspn(out, "\n");
	out[n] = '\0';
	fclose(f);
}

static int name_add(tk_collect *c, int pid, int tid, int ppid, const char *comm)
{
	if (c->n_names == c->cap_names) {
		size_t cap = c->cap_names ? c->cap_names * 2 : 64;
		struct tk__collect_name *g = realloc(c->names, cap * sizeof(*g));
		if (g == NULL)
			return TK_ENOMEM;
		c->names = g;
		c->cap_names = cap;
	}
	struct tk__collect_name *e = &c->names[c->n_names++];
	e->pid = pid, e->tid = tid, e->ppid = ppid;
	snprintf(e->comm, sizeof(e->comm), "%s", comm);
	return TK_OK;
}

/* The process pid and each of its threads, as /proc shows them now (gone: skipped). */
static int names_of_process(tk_collect *c, int pid)
{
	char path[96], line[128], comm[32];
	int ppid = 0, rc;
	FILE *f;
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if ((f = fopen(path, "re")) == NULL)
		return TK_OK;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "PPid:", 5) == 0)
			ppid = atoi(line + 5);
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	read_comm(path, comm, sizeof(comm));
	if ((rc = name_add(c, pid, pid, ppid, comm)) != TK_OK)
		return rc;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if ((d = opendir(path)) == NULL)
		return TK_OK;
	while ((de = readdir(d)) != NULL) {
		int tid = atoi(de->d_name);
		if (tid <= 0 || tid == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		read_comm(path, comm, sizeof(comm));
		if (comm[0] != '\0' && (rc = name_add(c, pid, tid, ppid, comm)) != TK_OK)
			break;
	}
	closedir(d);
	return rc;
}

/*
 * At the first enable: the tasks -p follows, or every task of a whole-system recording,
 * named from /proc as perf synthesises COMM for them (a command started by tracelogger is
 * named by its exec). Only FORK, COMM and exec records name tasks otherwise: those there
 * before would stay nameless.
 */
static int find_names(tk_collect *c)
{
	struct timespec now;
	int rc = TK_OK;

	c->named = 1;
	if (!want(c, _NTO_TRACE_PROCESS) && !want(c, _NTO_TRACE_THREAD))
		return TK_OK;
	clock_gettime(CLOCK_MONOTONIC_RAW, &now);
	c->names_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	if (c->system_wide) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		if (d == NULL)
			return TK_OK;
		while (rc == TK_OK && (de = readdir(d)) != NULL) {
			int pid = atoi(de->d_name);
			if (pid > 0)
				rc = names_of_process(c, pid);
		}
		closedir(d);
	} else {
		for (size_t i = 0; rc == TK_OK && i < c->n_pids; i++)
			rc = names_of_process(c, c->pids[i]);
	}
	return rc;
}

/* Writes the names found at the start (on CPU 0, at the time of the enable), then forgets them. */
static int emit_names(tk_collect *c)
{
	int rc = 0;
	size_t i;
	uint64_t t = mono(c, 0, c->names_ns);

	for (i = 0; rc == 0 && i < c->n_names; i++) {
		const struct tk__collect_name *e = &c->names[i];
		if (e->pid == e->tid && want(c, _NTO_TRACE_PROCESS))
			rc = emit_named(c, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_CREATE_P_NAME, (uint32_t)e->ppid,
			                (uint32_t)e->pid, e->comm, t);
		if (rc == 0)
			rc = emit_named(c, 0, _TRACE_PR_TH_C, _TRACE_PR_TH_NAME_T, (uint32_t)e->pid, (uint32_t)e->tid,
			                e->comm, t);
	}
	free(c->names);
	c->names = NULL;
	c->n_names = c->cap_names = 0;
	return rc;
}

int tk_collect_read(tk_collect *c, int timeout_ms, tk_collect_emit_fn emit, void *ud)
{
	int i, rc = 0;

	if (c == NULL || emit == NULL)
		return TK_EINVAL;
	if (timeout_ms != 0) {
		int n = poll(c->pfd, (nfds_t)c->n_rings, timeout_ms);
		if (n < 0 && errno != EINTR)
			return tk_error_from_errno(errno);
	}
	c->emit = emit;
	c->emit_ud = ud;
	c->emitted = 0;
	c->rec_pid = c->rec_tid = 0;
	if (c->n_names > 0 && (rc = emit_names(c)) != 0)
		return rc;
	for (i = 0; i < c->n_rings; i++) {
		struct tk__collect_ring *r = &c->rings[i];
		struct perf_event_mmap_page *m = r->base;
		r->head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
		r->tail = m->data_tail;
		ring_next(c, r);
	}
	/* Merged in time order over the rings, so that a thread's records on different CPUs
	 * (a system call entered on one, a switch on another) are seen in order. */
	for (;;) {
		struct tk__collect_ring *best = NULL;
		for (i = 0; i < c->n_rings; i++) {
			struct tk__collect_ring *r = &c->rings[i];
			if (r->rec != NULL && (best == NULL || r->rec_time < best->rec_time))
				best = r;
		}
		if (best == NULL)
			break;
		c->bytes += best->rec_size;
		c->cur_ring = best;
		rc = do_record(c, (unsigned)best->cpu, best->rec, best->rec_size);
		c->cur_ring = NULL;
		best->tail += best->rec_size;
		if (rc != 0)
			break;
		ring_next(c, best);
	}
	for (i = 0; i < c->n_rings; i++) {
		struct perf_event_mmap_page *m = c->rings[i].base;
		__atomic_store_n(&m->data_tail, c->rings[i].tail, __ATOMIC_RELEASE);
	}
	if (rc == 0 && c->disabled)
		rc = report_pending_losses(c);
	if (rc != 0)
		return rc;
	return c->emitted > INT32_MAX ? INT32_MAX : (int)c->emitted;
}

/* ---- opening -------------------------------------------------------------------------- */

static int add_fd(tk_collect *c, int fd, int kind, int cpu_index, char *why, size_t whycap)
{
	uint64_t id;
	struct tk__collect_ring *r = &c->rings[cpu_index];

	if (c->n_fds == c->cap_fds) {
		size_t ncap = c->cap_fds ? c->cap_fds * 2 : 64;
		int *nf = realloc(c->fds, ncap * sizeof(*nf));
		struct tk__collect_id *ni = realloc(c->ids, ncap * sizeof(*ni));
		int *nr = realloc(c->fd_ring, ncap * sizeof(*nr));
		if (nf != NULL)
			c->fds = nf;
		if (ni != NULL)
			c->ids = ni;
		if (nr != NULL)
			c->fd_ring = nr;
		if (nf == NULL || ni == NULL || nr == NULL) {
			close(fd);
			return TK_ENOMEM;
		}
		c->cap_fds = ncap;
	}
	c->fd_ring[c->n_fds] = cpu_index;
	c->fds[c->n_fds++] = fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
		set_why(why, whycap, "perf event id: %s", strerror(errno));
		return TK_EIO;
	}
	c->ids[c->n_ids].id = id;
	c->ids[c->n_ids].kind = kind;
	c->n_ids++;
	if (r->fd < 0) {
		size_t len = (c->ring_pages + 1) * (size_t)c->page;
		void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (base == MAP_FAILED) {
			int e = errno;
			set_why(why, whycap, "mmap of the perf ring of CPU %d (%zu KiB) failed: %s%s", r->cpu,
			        len >> 10, strerror(e),
			        e == EPERM ? " (the per-user locked memory limit kernel.perf_event_mlock_kb; "
			                     "use a smaller -k)" : "");
			return TK_ENOMEM;
		}
		r->tmp = malloc(65536);
		if (r->tmp == NULL) {
			munmap(base, len);
			return TK_ENOMEM;
		}
		r->fd = fd;
		r->base = base;
		r->len = len;
		return TK_OK;
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) != 0) {
		set_why(why, whycap, "perf SET_OUTPUT on CPU %d: %s", r->cpu, strerror(errno));
		return TK_EIO;
	}
	return TK_OK;
}

static void base_attr(const tk_collect *c, struct perf_event_attr *a, int inherit)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->sample_type = BASE_SAMPLE;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC_RAW;
	a->inherit = (unsigned)inherit;
	a->disabled = 1;
	a->exclude_kernel = c->tier != TK_COLLECT_TIER_PRIV;
	a->exclude_hv = 1;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(c->ring_pages * (size_t)c->page / 4);
}

/* Opens the events of one task (tid, or -1 = every task) on CPU index ci. */
static int open_target(tk_collect *c, int tid, int ci, char *why, size_t whycap)
{
	struct perf_event_attr a;
	int cpu = c->rings[ci].cpu, fd, k, rc, inherit = tid != -1;
	char what[64];

	if (tid == -1)
		snprintf(what, sizeof(what), "recording CPU %d system-wide", cpu);
	else
		snprintf(what, sizeof(what), "following task %d", tid);
	base_attr(c, &a, inherit);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.context_switch = 1;
	a.task = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.mmap = 1;
	a.mmap2 = 1;
	fd = perf_open(c, &a, tid, cpu);
	if (fd < 0) {
		int e = errno;
		explain_refusal(c, why, whycap, e, what);
		return refusal_code(e);
	}
	rc = add_fd(c, fd, K_BASE, ci, why, whycap);
	if (rc != 0)
		return rc;
	if (c->sample_hz > 0 && want(c, _NTO_TRACE_SYSTEM)) {
		base_attr(c, &a, inherit);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.freq = 1;
		a.sample_freq = c->sample_hz;
		a.sample_type |= PERF_SAMPLE_IP | (c->callchains ? PERF_SAMPLE_CALLCHAIN : 0);
		a.exclude_callchain_kernel = 1;
		fd = perf_open(c, &a, tid, cpu);
		if (fd < 0) {
			int e = errno;
			explain_refusal(c, why, whycap, e, what);
			return refusal_code(e);
		}
		rc = add_fd(c, fd, K_CLOCK, ci, why, whycap);
		if (rc != 0)
			return rc;
	}
	if (c->tier != TK_COLLECT_TIER_PRIV)
		return TK_OK;
	for (k = K_SWITCH; k < K_N; k++) {
		if (c->tp_id[k] < 0)
			continue;
		base_attr(c, &a, inherit);
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = (uint64_t)c->tp_id[k];
		a.sample_type |= PERF_SAMPLE_RAW;
		a.sample_period = 1;
		fd = perf_open(c, &a, tid, cpu);
		if (fd < 0) {
			int e = errno;
			char w2[192];
			snprintf(w2, sizeof(w2), "%s (tracepoint %s:%s)", what, tracepoints[k].sys,
			         tracepoints[k].name);
			explain_refusal(c, why, whycap, e, w2);
			return refusal_code(e);
		}
		if ((k == K_SYS_ENTER || k == K_SYS_EXIT) && !want(c, _NTO_TRACE_KERCALL) &&
		    c->sys_filter[0] != '\0' && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, c->sys_filter) != 0) {
			set_why(why, whycap, "filter on raw_syscalls: %s", strerror(errno));
			close(fd);
			return TK_EIO;
		}
		rc = add_fd(c, fd, k, ci, why, whycap);
		if (rc != 0)
			return rc;
	}
	return TK_OK;
}

/* The format file of tracepoint sys:name under tracefs dir, NUL-terminated, in *size bytes;
 * NULL with errno set when it cannot be read. (libtracefs' tracefs_event_file_read() leaks
 * the directory's name when the file is refused, as it is to users.) */
static char *read_format(const char *dir, const char *sys, const char *name, int *size)
{
	char path[512];
	size_t len = 0, cap = 4096;
	char *buf = NULL;
	int fd, e;

	if ((size_t)snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, sys, name) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n;
		if (buf == NULL || len + 1 >= cap) {
			char *nb;
			if (buf != NULL)
				cap *= 2;
			if (cap > (1u << 20) || (nb = realloc(buf, cap)) == NULL) { /* formats are a few KiB */
				e = cap > (1u << 20) ? EFBIG : ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*size = (int)len;
	return buf;
fail:
	close(fd);
	free(buf);
	errno = e;
	return NULL;
}

/* Tracepoint ids and fields through libtracefs/libtraceevent (tracefs mounted if needed).
 * Only the format files of the tracepoints used are parsed: tracefs_local_events_system()
 * would also parse every other event of those systems and load /proc/kallsyms, the printk
 * formats and the saved command lines, none of which is used here (half a second of every
 * start, and seconds under AddressSanitizer, whose realloc copies kallsyms' growing buffer). */
static int load_tracepoints(tk_collect *c, char *why, size_t whycap)
{
	const char *dir;
	int k, f;
	size_t i, n;

	dir = tracefs_tracing_dir(); /* finds tracefs, mounting it when permitted */
	if (dir == NULL) {
		set_why(why, whycap,
		        "tracefs is not mounted and could not be mounted (mount -t tracefs nodev "
		        "/sys/kernel/tracing needs root): the privileged tier needs its tracepoints");
		return TK_EACCES;
	}
	c->tep = tep_alloc();
	if (c->tep == NULL) {
		set_why(why, whycap, "out of memory");
		return TK_ENOMEM;
	}
	for (k = K_SWITCH; k < K_N; k++) {
		struct tep_event *ev;
		char *fmt;
		int size = 0, e;
		int need = k == K_SWITCH || k == K_WAKEUP || k == K_SYS_ENTER || k == K_SYS_EXIT ||
		           want(c, _NTO_TRACE_INT);
		c->tp_id[k] = -1;
		if ((k == K_SWITCH || k == K_WAKEUP) && !want(c, _NTO_TRACE_THREAD))
			need = 0;
		if ((k == K_SYS_ENTER || k == K_SYS_EXIT) && !want(c, _NTO_TRACE_THREAD) &&
		    !want(c, _NTO_TRACE_KERCALL))
			need = 0;
		if (!need)
			continue;
		errno = 0;
		fmt = read_format(dir, tracepoints[k].sys, tracepoints[k].name, &size);
		e = errno;
		if (fmt != NULL && size <= 0) {
			free(fmt);
			set_why(why, whycap, "the format of tracepoint %s:%s under %s/events is empty",
			        tracepoints[k].sys, tracepoints[k].name, dir);
			return TK_ENOTSUP;
		}
		if (fmt == NULL) {
			long paranoid = 99;
			if (e == ENOENT) {
				set_why(why, whycap, "tracepoint %s:%s not found under %s/events: the kernel lacks it",
				        tracepoints[k].sys, tracepoints[k].name, dir);
				return TK_ENOTSUP;
			}
			if (e == 0)
				e = EIO;
			read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid);
			set_why(why, whycap, "cannot read %s/events/%s/%s/format (%s): the privileged tier needs "
			        "tracefs, readable by root only, and perf tracepoints, which need CAP_PERFMON or "
			        "perf_event_paranoid -1 (perf_event_paranoid is %ld); run as root", dir,
			        tracepoints[k].sys, tracepoints[k].name, strerror(e), paranoid);
			return e == EACCES || e == EPERM ? TK_EACCES : TK_ENOTSUP;
		}
		e = (int)tep_parse_event(c->tep, fmt, (unsigned long)size, tracepoints[k].sys);
		free(fmt);
		ev = e == 0 ? tep_find_event_by_name(c->tep, tracepoints[k].sys, tracepoints[k].name) : NULL;
		if (ev == NULL) {
			set_why(why, whycap, "cannot parse the format of tracepoint %s:%s under %s/events",
			        tracepoints[k].sys, tracepoints[k].name, dir);
			return TK_ENOTSUP;
		}
		c->tp_id[k] = ev->id;
		for (f = 0; f < F_N; f++)
			c->tpf[k][f] = tp_fields[k][f] ? tep_find_field(ev, tp_fields[k][f]) : NULL;
	}
	/* Only the blocking calls, to name blocked states, unless KER_CALL is recorded. */
	n = 0;
	for (i = 0; i < sizeof(blocking_calls) / sizeof(blocking_calls[0]); i++)
		n += (size_t)snprintf(c->sys_filter + n, sizeof(c->sys_filter) - n, "%sid == %d",
		                      i ? " || " : "", blocking_calls[i]);
	return TK_OK;
}

/* How many descriptors open_all() will hold, for the message when they run out: per CPU and
 * task, the switch/task records, the samples, each tracepoint. */
static void fds_needed(tk_collect *c, const tk_collect_config *cfg)
{
	size_t per = 1, tasks = 0, i;
	int k;

	if (c->sample_hz > 0 && want(c, _NTO_TRACE_SYSTEM))
		per++;
	if (c->tier == TK_COLLECT_TIER_PRIV)
		for (k = K_SWITCH; k < K_N; k++)
			per += c->tp_id[k] >= 0;
	if (c->system_wide) {
		tasks = 1;
	} else {
		tasks = cfg->child_pid > 0;
		for (i = 0; i < c->n_pids; i++) {
			char path[64];
			DIR *d;
			struct dirent *de;
			snprintf(path, sizeof(path), "/proc/%d/task", c->pids[i]);
			if ((d = opendir(path)) == NULL)
				continue;
			while ((de = readdir(d)) != NULL)
				tasks += atoi(de->d_name) > 0;
			closedir(d);
		}
	}
	c->fds_needed = per * tasks * (size_t)c->n_rings;
}

/* The soft limit of open files raised to the hard one: a process of many threads needs
 * several descriptors per thread and CPU (the traced command was started before: it keeps
 * its own limit). */
static void raise_nofile(void)
{
	struct rlimit rl;
	long nr_open = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == rl.rlim_max)
		return;
	if (rl.rlim_max == RLIM_INFINITY) {
		if (read_int_file("/proc/sys/fs/nr_open", &nr_open) != 0 || nr_open <= 0)
			return;
		rl.rlim_max = (rlim_t)nr_open; /* the kernel's ceiling */
		if (rl.rlim_cur >= rl.rlim_max)
			return;
	}
	rl.rlim_cur = rl.rlim_max;
	(void)setrlimit(RLIMIT_NOFILE, &rl); /* a failure leaves the limit as it was */
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return x < y ? -1 : x > y;
}

static int open_all(tk_collect *c, const tk_collect_config *cfg, char *why, size_t whycap)
{
	int ci, rc;
	size_t i;

	if (c->tier == TK_COLLECT_TIER_PRIV) {
		rc = load_tracepoints(c, why, whycap);
		if (rc != 0)
			return rc;
	}
	fds_needed(c, cfg);
	for (ci = 0; ci < c->n_rings; ci++) {
		if (c->system_wide) {
			rc = open_target(c, -1, ci, why, whycap);
			if (rc != 0)
				return rc;
			continue;
		}
		if (cfg->child_pid > 0) {
			rc = open_target(c, cfg->child_pid, ci, why, whycap);
			if (rc != 0)
				return rc;
		}
		for (i = 0; i < c->n_pids; i++) {
			/* Every existing thread of the process (inherit covers later ones). */
			char path[64];
			DIR *d;
			struct dirent *de;
			int n = 0;
			snprintf(path, sizeof(path), "/proc/%d/task", c->pids[i]);
			d = opendir(path);
			if (d == NULL) {
				set_why(why, whycap, "process %d: %s", c->pids[i],
				        errno == ENOENT ? "no such process" : strerror(errno));
				return TK_ENOENT;
			}
			while ((de = readdir(d)) != NULL) {
				int tid = atoi(de->d_name);
				if (tid <= 0)
					continue;
				rc = open_target(c, tid, ci, why, whycap);
				if (rc == TK_ENOENT)
					continue; /* the thread exited meanwhile */
				if (rc != 0) {
					closedir(d);
					return rc;
				}
				n++;
			}
			closedir(d);
			if (n == 0) {
				set_why(why, whycap, "process %d: no such process (it has exited)", c->pids[i]);
				return TK_ENOENT;
			}
		}
	}
	return TK_OK;
}

static void release(tk_collect *c)
{
	int i;
	size_t j;

	for (i = 0; i < c->n_rings; i++) {
		if (c->rings[i].base != NULL)
			munmap(c->rings[i].base, c->rings[i].len);
		free(c->rings[i].tmp);
	}
	for (j = 0; j < c->n_fds; j++)
		close(c->fds[j]);
	if (c->tep != NULL)
		tep_free(c->tep);
	c->tep = NULL;
	free(c->fds);
	free(c->fd_ring);
	free(c->ids);
	free(c->rings);
	free(c->pfd);
	free(c->last_time);
	c->fds = NULL, c->fd_ring = NULL, c->ids = NULL, c->rings = NULL, c->pfd = NULL, c->last_time = NULL;
	c->n_fds = c->cap_fds = c->n_ids = 0;
}

static int setup_rings(tk_collect *c)
{
	int i, n = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	cpu_set_t online;

	if (ncpu < 1)
		ncpu = 1;
	c->rings = calloc((size_t)ncpu, sizeof(*c->rings));
	c->pfd = calloc((size_t)ncpu, sizeof(*c->pfd));
	c->last_time = calloc((size_t)ncpu, sizeof(*c->last_time));
	if (c->rings == NULL || c->pfd == NULL || c->last_time == NULL)
		return TK_ENOMEM;
	/* Online CPUs only (sched_getaffinity is not the set: a CPU may be excluded for us). */
	CPU_ZERO(&online);
	for (i = 0; i < ncpu; i++) {
		char path[64];
		long on = 1;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", i);
		if (read_int_file(path, &on) == 0 && on == 0)
			continue;
		c->rings[n].cpu = i;
		c->rings[n].fd = -1;
		n++;
	}
	c->n_rings = n;
	c->ncpu = (int)ncpu;
	return TK_OK;
}

int tk_collect_open(tk_collect **out, const tk_collect_config *cfg, char *why, size_t whycap)
{
	tk_collect *c;
	int rc, i, needs_priv;
	size_t pages = 128;

	if (why != NULL && whycap > 0)
		why[0] = '\0';
	if (out == NULL || cfg == NULL || cfg->size < sizeof(tk_collect_config) ||
	    (cfg->n_pids > 0 && cfg->pids == NULL) || cfg->tier < 0 || cfg->tier > TK_COLLECT_TIER_PRIV) {
		set_why(why, whycap, "invalid collector configuration");
		return TK_EINVAL;
	}
	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return TK_ENOMEM;
	c->classes = cfg->classes ? cfg->classes : TK_COLLECT_DEFAULT_CLASSES;
	if (cfg->n_pids > 0) { /* for their names at the start */
		c->pids = malloc(cfg->n_pids * sizeof(*c->pids));
		if (c->pids == NULL) {
			free(c);
			return TK_ENOMEM;
		}
		memcpy(c->pids, cfg->pids, cfg->n_pids * sizeof(*c->pids));
		/* a pid given twice is followed once (its descriptors twice would be wasted, and
		 * its events written twice) */
		qsort(c->pids, cfg->n_pids, sizeof(*c->pids), cmp_int);
		for (size_t j = 0; j < cfg->n_pids; j++)
			if (c->n_pids == 0 || c->pids[c->n_pids - 1] != c->pids[j])
				c->pids[c->n_pids++] = c->pids[j];
	}
	c->wide = cfg->wide;
	c->callchains = cfg->callchains;
	c->sample_hz = cfg->sample_hz;
	c->system_wide = cfg->system_wide || (cfg->n_pids == 0 && cfg->child_pid <= 0);
	c->page = (int)sysconf(_SC_PAGESIZE);
	c->fmt_lost = 1;
	if (cfg->ring_kib > 0) {
		size_t want_pages = (cfg->ring_kib * 1024 + (size_t)c->page - 1) / (size_t)c->page;
		for (pages = 1; pages < want_pages; pages *= 2)
			;
	}
	c->ring_pages = pages;
	for (i = 0; i < K_N; i++)
		c->tp_id[i] = -1;
	needs_priv = c->system_wide || want(c, _NTO_TRACE_KERCALL) || want(c, _NTO_TRACE_INT);
	if (cfg->tier == TK_COLLECT_TIER_UNPRIV && needs_priv) {
		set_why(why, whycap, "%s needs the privileged tier (tracepoints), but the unprivileged "
		        "one was asked for", c->system_wide ? "recording every task (-a)"
		        : "recording system calls or interrupts");
		free(c->pids);
		free(c);
		return TK_EINVAL;
	}
	raise_nofile();
	rc = setup_rings(c);
	if (rc == 0) {
		c->tier = cfg->tier == TK_COLLECT_TIER_UNPRIV ? TK_COLLECT_TIER_UNPRIV : TK_COLLECT_TIER_PRIV;
		rc = open_all(c, cfg, why, whycap);
		/* Refused, or a kernel without the tracepoints (no tracefs, no ftrace). */
		if ((rc == TK_EACCES || rc == TK_ENOTSUP) && cfg->tier == TK_COLLECT_TIER_AUTO && !needs_priv) {
			char first[512];
			snprintf(first, sizeof(first), "%s", why ? why : "");
			release(c);
			rc = setup_rings(c);
			c->tier = TK_COLLECT_TIER_UNPRIV;
			if (rc == 0)
				rc = open_all(c, cfg, why, whycap);
			if (rc == 0)
				set_why(why, whycap, "note: using the unprivileged tier (switches without the exact "
				        "blocked state, no wake-ups): %s", first);
		}
	}
	for (i = 0; rc == 0 && i < c->n_rings; i++) {
		c->pfd[i].fd = c->rings[i].fd;
		c->pfd[i].events = POLLIN;
	}
	if (rc != 0) {
		release(c);
		free(c->pids);
		free(c);
		return rc;
	}
	*out = c;
	return TK_OK;
}

int tk_collect_tier(const tk_collect *c)
{
	return c != NULL ? c->tier : TK_COLLECT_TIER_AUTO;
}

static int ioctl_all(tk_collect *c, unsigned long req)
{
	size_t i;

	if (c == NULL)
		return TK_EINVAL;
	for (i = 0; i < c->n_fds; i++)
		if (ioctl(c->fds[i], req, 0) != 0)
			return tk_error_from_errno(errno);
	return TK_OK;
}

int tk_collect_enable(tk_collect *c)
{
	int rc;

	/* looked for before the enable: a task born after it is named by its own records */
	if (c != NULL && !c->named && (rc = find_names(c)) != TK_OK)
		return rc;
	rc = ioctl_all(c, PERF_EVENT_IOC_ENABLE);

	if (rc == 0)
		c->disabled = 0;
	return rc;
}

int tk_collect_disable(tk_collect *c)
{
	int rc = ioctl_all(c, PERF_EVENT_IOC_DISABLE);

	if (rc == 0)
		c->disabled = 1;
	return rc;
}

void tk_collect_close(tk_collect *c)
{
	if (c == NULL)
		return;
	release(c);
	free(c->thr);
	free(c->pids);
	free(c->names);
	free(c);
}

void tk_collect_get_stats(const tk_collect *c, tk_collect_stats *st)
{
	if (st == NULL)
		return;
	memset(st, 0, sizeof(*st));
	if (c == NULL)
		return;
	st->records = c->records;
	st->lost = c->lost;
	st->bytes = c->bytes;
}

void tk_collect_header_attrs(const tk_collect *c,
                             void (*cb)(void *ud, const char *key, const char *val), void *ud)
{
	if (c == NULL || cb == NULL)
		return;
	cb(ud, "TRACEKIT_KERCALLS", TK__KERCALLS_ABI);
	cb(ud, "TRACEKIT_COLLECT_TIER", c->tier == TK_COLLECT_TIER_PRIV ? "privileged" : "unprivileged");
	/* a THRUNNING right after a CONTROL BUFFER only names its CPU's owner (docs/kev-format.md) */
	cb(ud, "TRACEKIT_OWNER", "cpu");
}
