/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the tools library (tools/lib/tool_cli.c): the progress line (only on a
 * terminal, only for large work, never with --quiet), standard input as a file (used in
 * place when it is one, a pipe copied but not past a wrong signature), and the
 * temporaries an output leaves on failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tk_test.h"
#include "tool_cli.h"

/* Runs fn with standard error on a new pseudo-terminal; returns what it printed there. */
static char *stderr_on_pty(void (*fn)(void), size_t *len)
{
	static char got[4096];
	int master = posix_openpt(O_RDWR | O_NOCTTY), slave, saved;
	ssize_t n;

	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	slave = open(ptsname(master), O_RDWR | O_NOCTTY);
	assert_true(slave >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(slave, STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(slave);
	/* a pty hands data over asynchronously: collect until it stays quiet for 200 ms */
	*len = 0;
	for (;;) {
		struct pollfd pfd = { master, POLLIN, 0 };

		if (poll(&pfd, 1, 200) <= 0 || !(pfd.revents & POLLIN))
			break;
		n = read(master, got + *len, sizeof(got) - 1 - *len);
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	close(master);
	got[*len] = '\0';
	return got;
}

static void progress_large(void)
{
	struct tktool_progress p;

	tktool_progress_begin(&p, "reading", (uint64_t)400 << 20);
	p.next_ns = 0; /* no waiting for the first update */
	tktool_progress_update(&p, (uint64_t)100 << 20);
	tktool_progress_end(&p);
}

static void progress_small(void)
{
	struct tktool_progress p;

	tktool_progress_begin(&p, "reading", (uint64_t)50 << 20);
	p.next_ns = 0;
	tktool_progress_update(&p, (uint64_t)10 << 20);
	tktool_progress_end(&p);
}

/* tb5_recover's kind: a thread follows the files growing in a directory. */
static char watch_dir[600];

static void watch_large(void)
{
	char path[700];
	int fd;

	snprintf(path, sizeof(path), "%s/out.part", watch_dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)200 << 20), 0); /* sparse: the size is what counts */
	close(fd);
	tktool_progress_watch_dir(watch_dir, "salvaging", (uint64_t)400 << 20);
	usleep(700 * 1000);
	tktool_progress_watch_end();
	unlink(path);
}

static void test_progress_watch(void **state)
{
	size_t len;
	char *got;

	(void)state;
	tktool_init("test_tools_lib");
	snprintf(watch_dir, sizeof(watch_dir), "%s", tkt_path("watch"));
	assert_int_equal(mkdir(watch_dir, 0700), 0);
	got = stderr_on_pty(watch_large, &len);
	assert_non_null(strstr(got, "test_tools_lib: salvaging: 200 of 400 MB (50%)"));
	tktool_quiet = 1;
	got = stderr_on_pty(watch_large, &len);
	assert_int_equal(len, 0);
	tktool_quiet = 0;
	rmdir(watch_dir);
}

static void test_progress(void **state)
{
	size_t len;
	char *got;

	(void)state;
	tktool_init("test_tools_lib");
	got = stderr_on_pty(progress_large, &len);
	assert_non_null(strstr(got, "test_tools_lib: reading: 100 of 400 MB (25%)"));
	assert_non_null(strstr(got, "\r\033[K")); /* erased at the end */
	/* small work: nothing */
	got = stderr_on_pty(progress_small, &len);
	assert_int_equal(len, 0);
	/* --quiet: nothing */
	tktool_quiet = 1;
	got = stderr_on_pty(progress_large, &len);
	assert_int_equal(len, 0);
	tktool_quiet = 0;
	/* not a terminal: nothing */
	{
		const char *path = tkt_path("stderr.txt");
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), saved = dup(STDERR_FILENO);

		fflush(stderr);
		dup2(fd, STDERR_FILENO);
		progress_large();
		fflush(stderr);
		dup2(saved, STDERR_FILENO);
		close(saved);
		close(fd);
		assert_false(tkt_exists(path) && tktool_file_size(path) != 0);
	}
}

/* Runs tktool_stdin_file in a child whose standard input is the pipe fed with data. */
static void stdin_from_pipe(const void *data, size_t n, const char *magic, size_t magic_len, int want_rc,
			    size_t want_size)
{
	int fds[2], status;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tktool_stdin_file f;
		struct stat sb;
		int rc;

		close(fds[1]);
		dup2(fds[0], STDIN_FILENO);
		rc = tktool_stdin_file(&f, magic, magic_len);
		if (rc != want_rc)
			_exit(10);
		if (rc == 0) {
			if (stat(f.path, &sb) != 0 || (size_t)sb.st_size != want_size)
				_exit(11);
			tktool_stdin_file_close(&f);
			if (stat(f.path, &sb) == 0)
				_exit(12); /* the copy is gone */
		}
		_exit(0);
	}
	close(fds[0]);
	assert_int_equal(write(fds[1], data, n), (ssize_t)n);
	close(fds[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_stdin_file(void **state)
{
	static char data[60000]; /* less than a pipe holds: the write never waits for the reader */
	char tmp[600];

	(void)state;
	snprintf(tmp, sizeof(tmp), "%s", tkt_path("spool"));
	assert_int_equal(mkdir(tmp, 0700), 0);
	setenv("TMPDIR", tmp, 1);
	tktool_init("test_tools_lib");
	memset(data, 'x', sizeof(data));
	memcpy(data, "MAGIC", 5);
	/* the right signature: all of it */
	stdin_from_pipe(data, sizeof(data), "MAGIC", 5, 0, sizeof(data));
	/* another one: the copy stops after the signature's length */
	stdin_from_pipe(data, sizeof(data), "MAGIX", 5, 0, 5);
	memset(data, 0, 8);
	stdin_from_pipe(data, sizeof(data), "MAGIC", 5, 0, 5);
	/* nothing left in TMPDIR */
	assert_int_equal(rmdir(tmp), 0);
	unsetenv("TMPDIR");
}

static void test_same_file_message(void **state)
{
	const char *a = tkt_path("a.txt");
	char b[600];

	(void)state;
	tktool_init("test_tools_lib");
	tkt_write_file(a, "a", 1);
	snprintf(b, sizeof(b), "%s/./a.txt", tkt_dir());
	assert_int_equal(tktool_refuse_same_file(a, b), 1);
	assert_int_equal(tktool_refuse_same_file(a, tkt_path("other.txt")), 0);
	unlink(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_progress_watch),
		cmocka_unit_test(test_stdin_file),
		cmocka_unit_test(test_same_file_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
