/* SPDX-License-Identifier: MIT */
/*
 * Process start cost: runs PROGRAM RUNS times in each of three environments, interleaved
 * (plain; LD_PRELOAD of LIB with tracing off; LD_PRELOAD with TRACEKIT_LOG set), timing
 * each run from posix_spawn() to the end of wait4(), and prints "key=value" lines for
 * bench/run_preload.sh: the median, 10th and 90th percentile in ms and the median peak RSS
 * in KiB of each. Interleaving puts any drift of the machine into all three alike.
 * usage: spawn_time RUNS LIB LOG_DIR PROGRAM [ARG...]
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { PLAIN, PRELOAD, PRELOAD_LOG, N_VARIANTS };
static const char *const variant_names[N_VARIANTS] = { "plain", "preload", "preload_log" };

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The environment without any LD_PRELOAD or TRACEKIT_ variable, plus extra (NULL-ended). */
static char **make_env(char *const *extra)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	env = calloc(n + 4, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && strncmp(environ[i], "TRACEKIT_", 9) != 0)
			env[k++] = environ[i];
	for (size_t i = 0; extra != NULL && extra[i] != NULL; i++)
		env[k++] = extra[i];
	env[k] = NULL;
	return env;
}

int main(int argc, char **argv)
{
	char preload[4096], log[4096];
	char *extra_preload[] = { preload, NULL };
	char *extra_log[] = { preload, log, NULL };
	char **envs[N_VARIANTS];
	double *ms[N_VARIANTS], *rss[N_VARIANTS];
	long runs;

	if (argc < 5 || (runs = strtol(argv[1], NULL, 10)) < 1 || runs > 100000) {
		fprintf(stderr, "usage: spawn_time RUNS LIB LOG_DIR PROGRAM [ARG...]\n");
		return 2;
	}
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", argv[2]);
	snprintf(log, sizeof(log), "TRACEKIT_LOG=%s/preload-%%p.kev", argv[3]);
	envs[PLAIN] = make_env(NULL);
	envs[PRELOAD] = make_env(extra_preload);
	envs[PRELOAD_LOG] = make_env(extra_log);
	for (int v = 0; v < N_VARIANTS; v++) {
		ms[v] = calloc((size_t)runs, sizeof(double));
		rss[v] = calloc((size_t)runs, sizeof(double));
		if (envs[v] == NULL || ms[v] == NULL || rss[v] == NULL) {
			fprintf(stderr, "spawn_time: out of memory\n");
			return 1;
		}
	}
	for (long r = 0; r < runs; r++) {
		for (int v = 0; v < N_VARIANTS; v++) {
			struct rusage ru;
			int status, err;
			pid_t pid;
			double t0 = now_ms();

			err = posix_spawn(&pid, argv[4], NULL, NULL, argv + 4, envs[v]);
			if (err != 0) {
				fprintf(stderr, "spawn_time: %s: %s\n", argv[4], strerror(err));
				return 1;
			}
			while (wait4(pid, &status, 0, &ru) < 0)
				if (errno != EINTR) {
					perror("spawn_time: wait4");
					return 1;
				}
			ms[v][r] = now_ms() - t0;
			rss[v][r] = (double)ru.ru_maxrss;
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
				fprintf(stderr, "spawn_time: %s (%s) failed with status 0x%x\n", argv[4],
					variant_names[v], (unsigned)status);
				return 1;
			}
		}
	}
	for (int v = 0; v < N_VARIANTS; v++) {
		qsort(ms[v], (size_t)runs, sizeof(double), cmp_double);
		qsort(rss[v], (size_t)runs, sizeof(double), cmp_double);
		printf("%s_median_ms=%.3f\n", variant_names[v], ms[v][runs / 2]);
		printf("%s_p10_ms=%.3f\n", variant_names[v], ms[v][runs / 10]);
		printf("%s_p90_ms=%.3f\n", variant_names[v], ms[v][runs * 9 / 10]);
		printf("%s_rss_kib=%.0f\n", variant_names[v], rss[v][runs / 2]);
	}
	return 0;
}
