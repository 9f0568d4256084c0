/* SPDX-License-Identifier: MIT */
/*
 * tl_writer: a traced program for tracelogger's session tests (tests/tracelogger_run.sh). It
 * attaches to the session in TRACEKIT_SESSION (the recorder does it), optionally configures
 * and starts the trace itself (as the SAT tutorial's programs do), records numbered USER
 * events from one or more threads, and ends the way asked: exit, _exit, SIGKILL, or STOP then
 * exit.
 *
 *   USER 10+k (d0 = i, d1 = pid)  event i (0 .. N-1) of thread k
 *
 * usage: tl_writer [-o FILE] [-s] [-w MS] [-n N] [-t THREADS] [-z MS] [-x exit|_exit|kill|stop]
 *   -o FILE record into FILE with a logger of its own (tk_logger_start), as the examples do
 *   -s      DELALLCLASSES, ADDCLASS USER, START before recording
 *   -w MS   sleep before recording;  -z MS  sleep after it
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/trace.h"

static unsigned long g_n = 100;

static void sleep_ms(unsigned long ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *writer(void *arg)
{
	unsigned k = (unsigned)(unsigned long)arg;

	for (unsigned long i = 0; i < g_n; i++)
		trace_logi(10 + (int)k, (unsigned)i, (unsigned)getpid());
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long threads = 1, wait_ms = 0, after_ms = 0;
	const char *end = "exit", *own = NULL;
	int start = 0, opt;
	pthread_t th[64];

	while ((opt = getopt(argc, argv, "o:sw:n:t:z:x:")) != -1) {
		switch (opt) {
		case 'o': own = optarg; break;
		case 's': start = 1; break;
		case 'w': wait_ms = strtoul(optarg, NULL, 10); break;
		case 'n': g_n = strtoul(optarg, NULL, 10); break;
		case 't': threads = strtoul(optarg, NULL, 10); break;
		case 'z': after_ms = strtoul(optarg, NULL, 10); break;
		case 'x': end = optarg; break;
		default:
			fprintf(stderr, "usage: tl_writer [-o FILE] [-s] [-w MS] [-n N] [-t THREADS] [-z MS] [-x exit|_exit|kill|stop]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 64)
		threads = 1;
	if (own != NULL && tk_logger_start(own, NULL) != TK_OK) {
		fprintf(stderr, "tl_writer: %s: %s\n", own, tk_logger_errmsg());
		return 1;
	}
	if (start) {
		if (TraceEvent(_NTO_TRACE_DELALLCLASSES) == -1 || TraceEvent(_NTO_TRACE_ADDCLASS, _NTO_TRACE_USER) == -1 ||
		    TraceEvent(_NTO_TRACE_START) == -1) {
			perror("tl_writer: TraceEvent");
			return 1;
		}
	}
	sleep_ms(wait_ms);
	for (unsigned long k = 1; k < threads; k++)
		pthread_create(&th[k], NULL, writer, (void *)k);
	writer((void *)0);
	for (unsigned long k = 1; k < threads; k++)
		pthread_join(th[k], NULL);
	sleep_ms(after_ms);
	if (strcmp(end, "_exit") == 0)
		_exit(0);
	if (strcmp(end, "kill") == 0)
		raise(SIGKILL);
	if (strcmp(end, "stop") == 0 && TraceEvent(_NTO_TRACE_STOP) == -1) {
		perror("tl_writer: TraceEvent(STOP)");
		return 1;
	}
	if (own != NULL && tk_logger_stop() != TK_OK) {
		fprintf(stderr, "tl_writer: %s: %s\n", own, tk_logger_errmsg());
		return 1;
	}
	return 0;
}
