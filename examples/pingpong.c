/* SPDX-License-Identifier: MIT */
/*
 * pingpong: a small multi-threaded workload for tracelogger (docs/tracelogger.md): two
 * threads, "ping" and "pong", pass one byte back and forth through two pipes, so every
 * round trip is two blocking reads and two switches. With libtracekit recording (run under
 * `tracelogger -- pingpong`, or with TRACEKIT_LOG set) it also records USER events of its
 * own on the same time line:
 *   USER 1 (d0 = round, d1 = 0)  ping writes the byte of round d0 (every EVERY rounds)
 *   USER 2 (d0 = round, d1 = 0)  pong has read it
 *   USER 3 (d0 = rounds)         ping has seen the last reply
 * --getppid N instead calls getppid() N times (a system-call-heavy workload), and
 * --lock N has two threads hand a counter over N times with a mutex and a condition variable.
 *
 * usage: pingpong [-n ROUNDS] [-e EVERY] | --getppid N | --lock N
 *        default: 1000 rounds, a user event pair every 100 rounds (0: none)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracekit/trace.h"

enum { EV_PING = 1, EV_PONG = 2, EV_DONE = 3 };

static unsigned long g_rounds = 1000, g_every = 100;
static int g_ab[2], g_ba[2];

static int read1(int fd)
{
	char b;
	ssize_t r;

	do
		r = read(fd, &b, 1);
	while (r < 0 && errno == EINTR);
	return r == 1 ? 0 : -1;
}

static int write1(int fd)
{
	char b = 'x';
	ssize_t r;

	do
		r = write(fd, &b, 1);
	while (r < 0 && errno == EINTR);
	return r == 1 ? 0 : -1;
}

static void *pong(void *arg)
{
	unsigned long i;

	(void)arg;
	pthread_setname_np(pthread_self(), "pong");
	for (i = 0; i < g_rounds; i++) {
		if (read1(g_ab[0]) != 0)
			return (void *)1;
		if (g_every && i % g_every == 0)
			trace_logi(EV_PONG, (unsigned)i, 0);
		if (write1(g_ba[1]) != 0)
			return (void *)1;
	}
	return NULL;
}

static unsigned long g_lock_n, g_turn_count;
static int g_turn;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;

static void *lock_worker(void *arg)
{
	int me = (int)(long)arg;

	pthread_setname_np(pthread_self(), me ? "lock-b" : "lock-a");
	pthread_mutex_lock(&g_mu);
	while (g_turn_count < g_lock_n) {
		while (g_turn != me && g_turn_count < g_lock_n)
			pthread_cond_wait(&g_cv, &g_mu);
		if (g_turn_count >= g_lock_n)
			break;
		g_turn_count++;
		g_turn = !me;
		pthread_cond_broadcast(&g_cv);
	}
	pthread_mutex_unlock(&g_mu);
	return NULL;
}

static int parse(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return s[0] >= '0' && s[0] <= '9' && *end == '\0' && errno == 0 ? 0 : -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: pingpong [-n ROUNDS] [-e EVERY] | --getppid N | --lock N\n");
	return 2;
}

int main(int argc, char **argv)
{
	pthread_t th;
	unsigned long i;
	void *r;

	if (argc == 3 && strcmp(argv[1], "--getppid") == 0) {
		unsigned long n;
		if (parse(argv[2], &n) != 0)
			return usage();
		for (i = 0; i < n; i++)
			(void)getppid();
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "--lock") == 0) {
		pthread_t a, b;
		if (parse(argv[2], &g_lock_n) != 0)
			return usage();
		pthread_create(&a, NULL, lock_worker, (void *)0L);
		pthread_create(&b, NULL, lock_worker, (void *)1L);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
		printf("%lu hand-overs\n", g_turn_count);
		return 0;
	}
	for (i = 1; i < (unsigned long)argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < (unsigned long)argc) {
			if (parse(argv[++i], &g_rounds) != 0)
				return usage();
		} else if (strcmp(argv[i], "-e") == 0 && i + 1 < (unsigned long)argc) {
			if (parse(argv[++i], &g_every) != 0)
				return usage();
		} else {
			return usage();
		}
	}
	if (pipe(g_ab) != 0 || pipe(g_ba) != 0) {
		perror("pingpong: pipe");
		return 1;
	}
	pthread_setname_np(pthread_self(), "ping");
	if (pthread_create(&th, NULL, pong, NULL) != 0) {
		fprintf(stderr, "pingpong: cannot create a thread\n");
		return 1;
	}
	for (i = 0; i < g_rounds; i++) {
		if (g_every && i % g_every == 0)
			trace_logi(EV_PING, (unsigned)i, 0);
		if (write1(g_ab[1]) != 0 || read1(g_ba[0]) != 0) {
			fprintf(stderr, "pingpong: pipe broken\n");
			return 1;
		}
	}
	if (g_every)
		trace_logi(EV_DONE, (unsigned)g_rounds, 0);
	pthread_join(th, &r);
	printf("%lu round trips\n", g_rounds);
	return r != NULL;
}
