/* SPDX-License-Identifier: MIT */
/* collect: the collector's state (collect.c). */
#ifndef TK_COLLECT_INTERNAL_H
#define TK_COLLECT_INTERNAL_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "tracekit/collect.h"

/* The largest event emitted, in slots (a sample with a 64-deep call chain). */
#define TK__COLLECT_MAX_SLOTS 72
/* Soft interrupts are INT numbers TK__SOFTIRQ_BASE + vector (docs/collect.md). */
#define TK__SOFTIRQ_BASE 0x10000u
/* SYSTEM code naming an interrupt handler: irq, 0, then the name. */
#define TK__SYS_IRQNAME 33
/* Thread state of a blocking switch-out in the unprivileged tier (reason unknown). */
#define TK__UNPRIV_BLOCKED STATE_INTR

#if defined(__x86_64__)
#define TK__KERCALLS_ABI "linux-x86_64"
#elif defined(__aarch64__)
#define TK__KERCALLS_ABI "linux-aarch64"
#elif defined(__i386__)
#define TK__KERCALLS_ABI "linux-i386"
#else
#define TK__KERCALLS_ABI "linux"
#endif

struct tk__collect_thread {
	int tid;        /* 0 = free slot */
	int pid;        /* thread group */
	int ppid;       /* of a group leader */
	int sc_nr;      /* system call in progress, -1 = none (privileged tier) */
	uint64_t sc_arg1;
	int dead;
	int resolved; /* pid, ppid and comm known (fork record or /proc) */
	int prio, policy; /* -w: the kernel's prio (0-99 real-time, 100-139 normal), SCHED_*; */
	int sched_known;  /* 0: not yet asked (sched_switch/sched_wakeup update prio) */
	char comm[16];
};

/* A task that existed when recording began, to be named (PROCCREATE_NAME for a process,
 * PROCTHREAD_NAME for each thread), as perf synthesises COMM records. */
struct tk__collect_name {
	int pid, tid, ppid; /* pid == tid: a process (its main thread) */
	char comm[16];
};

struct tk__collect_ring {
	int cpu, fd;
	void *base;
	size_t len;
	uint64_t head, tail;      /* during a read: head snapshot, read cursor */
	const unsigned char *rec; /* next record (in the ring or in tmp), NULL = none */
	size_t rec_size;
	uint64_t rec_time;
	unsigned char *tmp;       /* a record that wraps around the ring's end */
	uint64_t lost_seen;       /* sum of its PERF_RECORD_LOST counts */
	uint64_t lost_reported;   /* emitted as CONTROL DROPPED */
	uint64_t lost_total;      /* PERF_FORMAT_LOST sum of its events (disabled) */
};

struct tk__collect_id {
	uint64_t id;
	int kind;
};

struct tep_handle;
struct tep_format_field;

struct tk_collect {
	int tier;
	uint32_t classes;
	int wide, callchains, system_wide;
	unsigned sample_hz;
	int page;
	size_t ring_pages;
	int ncpu, n_rings;
	struct tk__collect_ring *rings;
	struct pollfd *pfd;
	uint64_t *last_time;
	int *fds;
	int *fd_ring; /* ring index of each fd */
	size_t n_fds, cap_fds;
	size_t fds_needed; /* what open_all() will hold (for the message when they run out) */
	int fmt_lost; /* events carry PERF_FORMAT_LOST (Linux 6.0+) */
	int disabled;
	struct tk__collect_ring *cur_ring;
	struct tk__collect_id *ids;
	size_t n_ids;
	struct tep_handle *tep;
	int tp_id[16];
	struct tep_format_field *tpf[16][5];
	char sys_filter[1024];
	unsigned char irq_named[256];
	struct tk__collect_thread *thr;
	size_t thr_n, thr_cap;
	int thr_oom; /* the thread table could not grow */
	traceevent_t slots[TK__COLLECT_MAX_SLOTS];
	tk_collect_emit_fn emit;
	void *emit_ud;
	uint64_t emitted, records, lost, bytes;
	/* Owners (docs/tracelogger.md, "Owners"): the task of the record being turned into
	 * events (0: none known) and, per CPU (& 63), the thread of the last THRUNNING written
	 * there, a switch or an owner marker. */
	int32_t rec_pid, rec_tid;
	int32_t own_pid[64], own_tid[64];
	uint64_t own_valid;
	/* -p's pids (a copy), and the names of the tasks found at the first enable, written at
	 * the next read at the time of that enable */
	int *pids;
	size_t n_pids;
	int named; /* the tasks were looked for */
	struct tk__collect_name *names;
	size_t n_names, cap_names;
	uint64_t names_ns;
};

/* An owner marker: CONTROL BUFFER, then THRUNNING of (pid, tid) at t on cpu, in out[0..1]
 * (collect_merge.c). Returns 2. */
int tk__collect_owner_marker(traceevent_t out[2], unsigned cpu, uint64_t t, int32_t pid, int32_t tid);

#endif
