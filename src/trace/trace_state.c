/* SPDX-License-Identifier: MIT */
/*
 * The /proc snapshot START writes: the process (PROCCREATE_NAME), each of its threads
 * (THCREATE, PROCTHREAD_NAME) and the states that map onto QNX's without guessing
 * (THRUNNING for the caller, THREADY for runnable threads). Its helpers also describe a
 * thread created later, when it announces itself with its first buffer (trace_pool.c).
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace/trace_internal.h"

/* ---- START: the process and its threads ---------------------------------------------- */

int tk__trace_read_small(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* Linux scheduling policy to QNX numbers (SCHED_FIFO 1, SCHED_RR 2, SCHED_OTHER 3). */
static uint32_t qnx_policy(int policy)
{
	return policy == SCHED_FIFO ? 1u : policy == SCHED_RR ? 2u : 3u;
}

void tk__trace_thread_words(uint32_t pid, uint32_t tid, uint32_t w[4])
{
	char path[64], stat[512];
	long prio = 0;
	int policy;
	const char *p;

	w[0] = pid;
	w[1] = tid;
	snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
	/* priority is field 18 of stat, after the parenthesised command name */
	if (tk__trace_read_small(path, stat, sizeof(stat)) == 0 && (p = strrchr(stat, ')')) != NULL) {
		int field = 2;
		for (; *p != '\0' && field < 18; p++)
			if (*p == ' ')
				field++;
		prio = strtol(p, NULL, 10);
	}
	policy = sched_getscheduler((pid_t)tid);
	w[2] = (uint32_t)prio;
	w[3] = qnx_policy(policy < 0 ? SCHED_OTHER : policy);
}

static void emit_thread(unsigned code, uint32_t pid, uint32_t tid)
{
	uint32_t w[4];
	int wide = trace_bit(trace_cfg()->wide[TRACE_CLS(_TRACE_PR_TH_C)], code);

	tk__trace_thread_words(pid, tid, w);
	tk__trace_write(TRACE_CLS(_TRACE_PR_TH_C), code, w, wide ? 4 : 2, NULL, 0, 1);
}

void tk__trace_emit_state(void)
{
	uint32_t pid = (uint32_t)getpid(), ppid = (uint32_t)getppid(), self = tk__trace_tid();
	uint32_t w[2] = { ppid, pid };
	char exe[4096], path[64], comm[64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	DIR *d;
	struct dirent *e;

	if (n <= 0)
		n = (ssize_t)(tk__trace_read_small("/proc/self/comm", exe, sizeof(exe)) == 0 ? strlen(exe) : 0);
	exe[n] = '\0';
	tk__trace_write(TRACE_CLS(_TRACE_PR_TH_C), _TRACE_PR_TH_CREATE_P_NAME, w, 2, exe, strlen(exe), 1);
	d = opendir("/proc/self/task");
	while (d != NULL && (e = readdir(d)) != NULL) {
		uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10), tw[2] = { pid, tid };
		char stat[512], *paren;
		if (tid == 0)
			continue;
		emit_thread(_TRACE_PR_TH_CREATE_T, pid, tid);
		snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
		if (tk__trace_read_small(path, comm, sizeof(comm)) == 0)
			tk__trace_write(TRACE_CLS(_TRACE_PR_TH_C), _TRACE_PR_TH_NAME_T, tw, 2, comm, strlen(comm), 1);
		if (tid == self) {
			emit_thread(STATE_RUNNING, pid, tid);
			continue;
		}
		/* Another thread: only "runnable" maps onto a QNX state without guessing. */
		snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
		if (tk__trace_read_small(path, stat, sizeof(stat)) == 0 && (paren = strrchr(stat, ')')) != NULL &&
		    paren[1] == ' ' && paren[2] == 'R')
			emit_thread(STATE_READY, pid, tid);
	}
	if (d != NULL)
		closedir(d);
	tk__trace_emit_maps();
}

