/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of src/common: CRC-32C (check value, chaining, every alignment and length
 * against a bitwise reference), the error list and errno mapping, crash-safe output files
 * and the clocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/tk_crc32c.h"
#include "tk_test.h"
#include "tracekit/common.h"

/* The definition, one bit at a time: what every faster implementation must equal. */
static uint32_t crc_reference(uint32_t crc, const unsigned char *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
	}
	return ~crc;
}

static void test_crc32c(void **state)
{
	static unsigned char buf[70000];
	uint32_t seed = 12345;

	(void)state;
	assert_int_equal(tk__crc32c(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(tk__crc32c(0, "", 0), 0);
	assert_int_equal(tk__crc32c(0x1234, NULL, 0), 0x1234);
	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (unsigned char)(seed >> 16);
	}
	/* every start alignment and short length, then lengths around the wide kernels' blocks */
	for (size_t off = 0; off < 16; off++)
		for (size_t len = 0; len < 300; len++)
			assert_int_equal(tk__crc32c(0, buf + off, len), crc_reference(0, buf + off, len));
	for (size_t len = 1000; len < sizeof(buf); len = len * 3 + 7)
		assert_int_equal(tk__crc32c(0, buf + 3, len), crc_reference(0, buf + 3, len));
	/* chaining: the CRC of a followed by b */
	for (size_t cut = 0; cut <= 4096; cut += 511)
		assert_int_equal(tk__crc32c(tk__crc32c(0, buf, cut), buf + cut, 4096 - cut), tk__crc32c(0, buf, 4096));
}

static void test_errors(void **state)
{
	(void)state;
	assert_string_equal(tk_strerror(TK_OK), "success");
	assert_string_equal(tk_strerror(TK_EROFS), "read-only file system");
	assert_string_equal(tk_strerror(-9999), "unknown error");
	assert_int_equal(tk_error_from_errno(ENOSPC), TK_ENOSPC);
	assert_int_equal(tk_error_from_errno(EROFS), TK_EROFS);
	assert_int_equal(tk_error_from_errno(ENOMEM), TK_ENOMEM);
	assert_int_equal(tk_error_from_errno(ENOENT), TK_ENOENT);
	/* issue 10 item 17: each cause reads as itself, not as a neighbour or as EIO */
	assert_int_equal(tk_error_from_errno(EDQUOT), TK_EDQUOT);
	assert_string_equal(tk_strerror(TK_EDQUOT), "disk quota exceeded");
	assert_int_equal(tk_error_from_errno(EFBIG), TK_EFBIG);
	assert_string_equal(tk_strerror(TK_EFBIG), "file too large");
	assert_int_equal(tk_error_from_errno(ENOTDIR), TK_ENOTDIR);
	assert_string_equal(tk_strerror(TK_ENOTDIR), "not a directory");
	assert_int_equal(tk_error_from_errno(EMFILE), TK_EMFILE);
	assert_string_equal(tk_strerror(TK_EMFILE), "too many open files");
	assert_int_equal(tk_error_from_errno(EISDIR), TK_EISDIR);
	assert_string_equal(tk_strerror(TK_EISDIR), "is a directory");
	assert_int_equal(tk_error_from_errno(ENAMETOOLONG), TK_ENAMETOOLONG);
	assert_string_equal(tk_strerror(TK_ENAMETOOLONG), "file name too long");
	/* the numbers are ABI: appended after EROFS, never renumbered */
	assert_int_equal(TK_EROFS, -19);
	assert_int_equal(TK_ENOTDIR, -20);
	assert_int_equal(TK_EFBIG, -25);
	/* every code has its own text */
#define CODE(name, value, text) value,
	static const int codes[] = { TK_ERRNO_MAP(CODE) };
#undef CODE
	for (size_t a = 0; a < sizeof(codes) / sizeof(codes[0]); a++)
		for (size_t b = a + 1; b < sizeof(codes) / sizeof(codes[0]); b++)
			assert_string_not_equal(tk_strerror(codes[a]), tk_strerror(codes[b]));
}

static void test_outfile(void **state)
{
	const char *path = tkt_path("out.txt");
	char part[4096];
	tk_outfile *of;
	size_t len;
	char *text;

	(void)state;
	snprintf(part, sizeof(part), "%s.part", path);
	/* nothing under the final name until commit */
	assert_int_equal(tk_outfile_open(&of, path, 0), TK_OK);
	fputs("hello\n", tk_outfile_stream(of));
	assert_false(tkt_exists(path));
	assert_string_equal(tk_outfile_temp_path(of), part);
	assert_int_equal(tk_outfile_commit(of), TK_OK);
	text = tkt_read_file(path, &len);
	assert_non_null(text);
	assert_string_equal(text, "hello\n");
	free(text);
	assert_false(tkt_exists(part));
	/* abort leaves the old file and no part */
	assert_int_equal(tk_outfile_open(&of, path, 0), TK_OK);
	fputs("other\n", tk_outfile_stream(of));
	tk_outfile_abort(of);
	text = tkt_read_file(path, &len);
	assert_string_equal(text, "hello\n");
	free(text);
	assert_false(tkt_exists(part));
	tk_outfile_abort(NULL);
	/* a device is written in place, never replaced */
	assert_int_equal(tk_outfile_open(&of, "/dev/null", 0), TK_OK);
	fputs("x", tk_outfile_stream(of));
	assert_int_equal(tk_outfile_commit(of), TK_OK);
	/* a full device: the commit says so */
	if (access("/dev/full", W_OK) == 0) {
		assert_int_equal(tk_outfile_open(&of, "/dev/full", 0), TK_OK);
		for (int i = 0; i < 10000; i++)
			fputs("0123456789abcdef", tk_outfile_stream(of));
		assert_int_equal(tk_outfile_commit(of), TK_ENOSPC);
	}
	/* a directory that does not exist */
	assert_int_not_equal(tk_outfile_open(&of, tkt_path("no/such/dir/x"), 0), TK_OK);
	assert_int_equal(tk_outfile_open(&of, "", 0), TK_EINVAL);
}

/* Writes "new\n" to path through tk_outfile and commits it. */
static int write_through(const char *path, unsigned flags)
{
	tk_outfile *of;
	int rc = tk_outfile_open(&of, path, flags);

	if (rc != TK_OK)
		return rc;
	fputs("new\n", tk_outfile_stream(of));
	return tk_outfile_commit(of);
}

static void assert_content(const char *path, const char *want)
{
	size_t len;
	char *text = tkt_read_file(path, &len);

	assert_non_null(text);
	assert_string_equal(text, want);
	free(text);
}

/* Issue 10 item 20, as exploited: a symlink planted at OUTPUT.part and at OUTPUT. */
static void test_outfile_symlinks(void **state)
{
	const char *victim = tkt_path("victim");
	const char *out = tkt_path("sym.out");
	char part[600], *victim_copy = strdup(victim), *out_copy = strdup(out);
	struct stat sb;

	(void)state;
	snprintf(part, sizeof(part), "%s.part", out_copy);
	tkt_write_file(victim_copy, "precious\n", 9);
	assert_int_equal(symlink(victim_copy, part), 0);
	assert_int_equal(write_through(out_copy, 0), TK_OK);
	assert_content(victim_copy, "precious\n");   /* the target is untouched */
	assert_int_equal(lstat(part, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));             /* the link is left alone */
	assert_int_equal(lstat(out_copy, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_content(out_copy, "new\n");
	unlink(part);
	unlink(out_copy);
	/* a symlink at the final name is replaced, not followed */
	assert_int_equal(symlink(victim_copy, out_copy), 0);
	assert_int_equal(write_through(out_copy, 0), TK_OK);
	assert_content(victim_copy, "precious\n");
	assert_int_equal(lstat(out_copy, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_content(out_copy, "new\n");
	/* a dangling symlink at .part: nothing is created at its target */
	unlink(out_copy);
	assert_int_equal(symlink(tkt_path("nowhere"), part), 0);
	assert_int_equal(write_through(out_copy, 0), TK_OK);
	assert_false(tkt_exists(tkt_path("nowhere")));
	unlink(part);
	unlink(victim_copy);
	free(victim_copy);
	free(out_copy);
}

/* Issue 10 item 29: a crashed run's .part is the only copy of its data: never truncated. */
static void test_outfile_keeps_old_part(void **state)
{
	char *out = strdup(tkt_path("crash.kev")), part[600], *temp;
	tk_outfile *of;

	(void)state;
	snprintf(part, sizeof(part), "%s.part", out);
	tkt_write_file(part, "crashed run\n", 12);
	assert_int_equal(tk_outfile_open(&of, out, TK_OUTFILE_KEEP_PARTIAL_ON_ABORT), TK_OK);
	temp = strdup(tk_outfile_temp_path(of));
	assert_string_not_equal(temp, part);
	assert_int_equal(strncmp(temp, out, strlen(out)), 0); /* beside the output */
	assert_int_equal(strcmp(temp + strlen(temp) - 5, ".part"), 0);
	fputs("second run\n", tk_outfile_stream(of));
	tk_outfile_abort(of); /* crashed again: both runs' data are there */
	assert_content(part, "crashed run\n");
	assert_content(temp, "second run\n");
	unlink(temp);
	free(temp);
	assert_int_equal(write_through(out, 0), TK_OK);
	assert_content(part, "crashed run\n");
	assert_content(out, "new\n");
	unlink(part);
	unlink(out);
	free(out);
}

/* Issue 10 item 32: re-writing an output keeps its mode (a 0600 file stays 0600). */
static void test_outfile_mode(void **state)
{
	const char *out = tkt_path("private.txt");
	struct stat sb;
	mode_t old_mask = umask(022);

	(void)state;
	tkt_write_file(out, "old\n", 4);
	assert_int_equal(chmod(out, 0600), 0);
	assert_int_equal(write_through(out, 0), TK_OK);
	assert_int_equal(stat(out, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(chmod(out, 0664), 0); /* a mode the umask would not give */
	assert_int_equal(write_through(out, 0), TK_OK);
	assert_int_equal(stat(out, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0664);
	/* root replacing another user's file keeps its owner too (as cp would) */
	if (geteuid() == 0) {
		assert_int_equal(chown(out, 65534, 65534), 0);
		assert_int_equal(chmod(out, 0640), 0);
		assert_int_equal(write_through(out, 0), TK_OK);
		assert_int_equal(stat(out, &sb), 0);
		assert_int_equal(sb.st_uid, 65534);
		assert_int_equal(sb.st_gid, 65534);
		assert_int_equal(sb.st_mode & 07777, 0640);
	}
	unlink(out);
	assert_int_equal(write_through(out, 0), TK_OK); /* a new file: 0644 minus the umask */
	assert_int_equal(stat(out, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0644);
	unlink(out);
	umask(old_mask);
}

/* Identity of /dev/null and /dev/full, to prove the suite leaves them devices. */
static void assert_char_device(const char *path, unsigned maj, unsigned min)
{
	struct stat sb;

	assert_int_equal(lstat(path, &sb), 0);
	assert_true(S_ISCHR(sb.st_mode));
	assert_int_equal(major(sb.st_rdev), maj);
	assert_int_equal(minor(sb.st_rdev), min);
}

/* Issue 10 item 21, as exploited: a device node made with mknod, and a FIFO, as outputs. */
static void test_outfile_devices(void **state)
{
	char *node = strdup(tkt_path("null.node")), *fifo = strdup(tkt_path("out.fifo")), part[600];
	struct stat sb;

	(void)state;
	assert_char_device("/dev/null", 1, 3);
	/* a device node of our own (root only: mknod) */
	if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) == 0) {
		assert_int_equal(write_through(node, 0), TK_OK);
		assert_char_device(node, 1, 3);
		snprintf(part, sizeof(part), "%s.part", node);
		assert_false(tkt_exists(part));
		unlink(node);
	} else {
		assert_true(errno == EPERM || errno == EACCES);
	}
	/* a FIFO with a reader stays a FIFO and gets the data */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	{
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			_exit(write_through(fifo, 0) == TK_OK ? 0 : 1);
		} else {
			int fd = open(fifo, O_RDONLY), status;
			char got[16] = { 0 };

			assert_true(fd >= 0);
			assert_int_equal(read(fd, got, sizeof(got) - 1), 4);
			close(fd);
			assert_int_equal(waitpid(pid, &status, 0), pid);
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
			assert_string_equal(got, "new\n");
		}
	}
	assert_int_equal(lstat(fifo, &sb), 0);
	assert_true(S_ISFIFO(sb.st_mode));
	unlink(fifo);
	/* a directory is refused, with its own message */
	assert_int_equal(write_through(tkt_dir(), 0), TK_EISDIR);
	assert_int_equal(write_through(tkt_path("nodir/x"), 0), TK_ENOENT);
	assert_char_device("/dev/null", 1, 3);
	assert_char_device("/dev/full", 1, 7);
	free(node);
	free(fifo);
}

/*
 * /dev/stdout when standard output is a regular file (cmd -o /dev/stdout > file): the file
 * gets the data, /dev/stdout stays the system's symlink (renaming onto it would replace
 * it for everyone, as root).
 */
static void test_outfile_dev_stdout(void **state)
{
	char *file = strdup(tkt_path("redirected.txt"));
	struct stat before, after;
	int status;
	pid_t pid;

	(void)state;
	assert_int_equal(lstat("/dev/stdout", &before), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(2);
		_exit(write_through("/dev/stdout", 0) == TK_OK ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_content(file, "new\n");
	assert_int_equal(lstat("/dev/stdout", &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_true(S_ISLNK(after.st_mode));
	assert_false(tkt_exists("/dev/stdout.part"));
	unlink(file);
	free(file);
}

/*
 * The file whose names are content: what a decoy in the directory a program moved to must
 * still hold after the commit or abort (audit19 item 2).
 */
static void assert_decoys(const char *dir, const char *name)
{
	char path[700], want[700];

	snprintf(path, sizeof(path), "%s/%s.part", dir, name);
	snprintf(want, sizeof(want), "decoy %s.part\n", name);
	assert_content(path, want);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(want, sizeof(want), "decoy %s\n", name);
	assert_content(path, want);
}

static void plant_decoys(const char *dir, const char *name)
{
	char path[700], text[700];

	snprintf(path, sizeof(path), "%s/%s.part", dir, name);
	snprintf(text, sizeof(text), "decoy %s.part\n", name);
	tkt_write_file(path, text, strlen(text));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(text, sizeof(text), "decoy %s\n", name);
	tkt_write_file(path, text, strlen(text));
}

/* The descriptor a directory is open on in this process (tk_outfile's pinned one), or -1. */
static int find_dir_fd(const char *dir)
{
	char link[64], target[700], *real = realpath(dir, NULL);
	int found = -1;

	assert_non_null(real);
	for (int fd = 3; fd < 1024 && found < 0; fd++) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, real) == 0)
			found = fd;
	}
	free(real);
	return found;
}

/*
 * Audit19 item 2: a program that chdir()s between open and commit (a relative
 * TRACEKIT_LOG, a daemon's chdir("/")). The file is completed, or its temporary removed,
 * in the directory of the open; the new directory holds NAME.part and NAME of its own,
 * which are neither renamed nor removed.
 */
/* tk_tmpfile() goes to TMPDIR (tmpfile() would use /tmp), leaves no name there, and a
 * TMPDIR that does not exist is an error, not a fall-back. */
static void test_tmpfile_tmpdir(void **state)
{
	(void)state;
	char dir[] = "/tmp/tk_tmpdir_test.XXXXXX";
	assert_non_null(mkdtemp(dir));
	const char *old = getenv("TMPDIR");
	char *saved = old != NULL ? strdup(old) : NULL;
	setenv("TMPDIR", dir, 1);
	assert_string_equal(tk_tmpdir(), dir);
	FILE *f = tk_tmpfile("t");
	assert_non_null(f);
	char buf[8] = "";
	assert_int_equal(fputs("spill", f) >= 0, 1);
	assert_int_equal(fseek(f, 0, SEEK_SET), 0);
	assert_non_null(fgets(buf, sizeof(buf), f));
	assert_string_equal(buf, "spill");
	fclose(f);
	assert_int_equal(rmdir(dir), 0); /* no name was left behind */
	setenv("TMPDIR", "/nonexistent-tk-dir", 1);
	assert_null(tk_tmpfile("t"));
	assert_int_equal(errno, ENOENT);
	setenv("TMPDIR", "", 1);
	assert_string_equal(tk_tmpdir(), "/tmp");
	if (saved != NULL)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
}

static void test_outfile_chdir(void **state)
{
	char *a = strdup(tkt_path("cd-a")), *b = strdup(tkt_path("cd-b")), path[700];
	int home = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;
	tk_outfile *of;

	(void)state;
	assert_true(home >= 0);
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	assert_int_equal(mkdir(tkt_path("cd-b/sub"), 0755), 0);
	plant_decoys(b, "rel.out");
	plant_decoys(b, "abort.out");
	plant_decoys(b, "fail.out");
	plant_decoys(b, "removed.out");
	plant_decoys(b, "closed.out");
	plant_decoys(b, "reused.out");

	/* commit: the data is in a/rel.out */
	assert_int_equal(chdir(a), 0);
	assert_int_equal(tk_outfile_open(&of, "rel.out", 0), TK_OK);
	assert_string_equal(tk_outfile_temp_path(of), "rel.out.part");
	fputs("data\n", tk_outfile_stream(of));
	assert_int_equal(chdir(b), 0);
	assert_int_equal(tk_outfile_commit(of), TK_OK);
	snprintf(path, sizeof(path), "%s/rel.out", a);
	assert_content(path, "data\n");
	snprintf(path, sizeof(path), "%s/rel.out.part", a);
	assert_false(tkt_exists(path));
	assert_decoys(b, "rel.out");

	/* a relative directory in the path: "sub/x" is a/sub/x, not b/sub/x */
	assert_int_equal(chdir(a), 0);
	assert_int_equal(mkdir("sub", 0755), 0);
	assert_int_equal(tk_outfile_open(&of, "sub/rel.out", 0), TK_OK);
	fputs("in sub\n", tk_outfile_stream(of));
	assert_int_equal(chdir(b), 0);
	assert_int_equal(tk_outfile_commit(of), TK_OK);
	snprintf(path, sizeof(path), "%s/sub/rel.out", a);
	assert_content(path, "in sub\n");
	assert_false(tkt_exists(tkt_path("cd-b/sub/rel.out")));

	/* abort: a/abort.out.part is removed, b's is not */
	assert_int_equal(chdir(a), 0);
	assert_int_equal(tk_outfile_open(&of, "abort.out", 0), TK_OK);
	fputs("aborted\n", tk_outfile_stream(of));
	assert_int_equal(chdir(b), 0);
	tk_outfile_abort(of);
	snprintf(path, sizeof(path), "%s/abort.out.part", a);
	assert_false(tkt_exists(path));
	snprintf(path, sizeof(path), "%s/abort.out", a);
	assert_false(tkt_exists(path));
	assert_decoys(b, "abort.out");

	/* a failed commit (a directory appeared under the final name) removes a's temporary only */
	assert_int_equal(chdir(a), 0);
	assert_int_equal(tk_outfile_open(&of, "fail.out", 0), TK_OK);
	fputs("failed\n", tk_outfile_stream(of));
	assert_int_equal(mkdir("fail.out", 0755), 0);
	assert_int_equal(chdir(b), 0);
	assert_int_equal(tk_outfile_commit(of), TK_EISDIR);
	snprintf(path, sizeof(path), "%s/fail.out.part", a);
	assert_false(tkt_exists(path));
	assert_decoys(b, "fail.out");

	/* tk_outfile_remove_temp (kept on abort otherwise) acts in a too */
	assert_int_equal(chdir(a), 0);
	assert_int_equal(tk_outfile_open(&of, "removed.out", TK_OUTFILE_KEEP_PARTIAL_ON_ABORT), TK_OK);
	assert_int_equal(chdir(b), 0);
	tk_outfile_remove_temp(of);
	tk_outfile_abort(of);
	snprintf(path, sizeof(path), "%s/removed.out.part", a);
	assert_false(tkt_exists(path));
	assert_decoys(b, "removed.out");

	/* the program closed the pinned descriptor: the directory is found again by its path */
	assert_int_equal(chdir(a), 0);
	assert_int_equal(tk_outfile_open(&of, "closed.out", 0), TK_OK);
	fputs("closed\n", tk_outfile_stream(of));
	fd = find_dir_fd(a);
	assert_true(fd >= 0);
	assert_int_equal(close(fd), 0);
	assert_int_equal(chdir(b), 0);
	assert_int_equal(tk_outfile_commit(of), TK_OK);
	snprintf(path, sizeof(path), "%s/closed.out", a);
	assert_content(path, "closed\n");
	assert_decoys(b, "closed.out");

	/* ... and when its number now holds a directory of the program's (b), that one is
	 * neither used nor closed */
	assert_int_equal(chdir(a), 0);
	assert_int_equal(tk_outfile_open(&of, "reused.out", 0), TK_OK);
	fputs("reused\n", tk_outfile_stream(of));
	fd = find_dir_fd(a);
	assert_true(fd >= 0);
	{
		int other = open(b, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		assert_true(other >= 0);
		assert_int_equal(dup2(other, fd), fd);
		close(other);
	}
	assert_int_equal(chdir(b), 0);
	assert_int_equal(tk_outfile_commit(of), TK_OK);
	assert_true(fcntl(fd, F_GETFD) >= 0); /* still the program's */
	close(fd);
	snprintf(path, sizeof(path), "%s/reused.out", a);
	assert_content(path, "reused\n");
	assert_decoys(b, "reused.out");

	/* no descriptor of a directory is left behind */
	assert_int_equal(find_dir_fd(a), -1);
	assert_int_equal(fchdir(home), 0);
	close(home);
	free(a);
	free(b);
}

static void test_same_file(void **state)
{
	char *a = strdup(tkt_path("same.a")), *b = strdup(tkt_path("same.b"));
	char *dotted = strdup(tkt_path("./same.a")), *hard = strdup(tkt_path("same.hard"));

	(void)state;
	tkt_write_file(a, "a", 1);
	tkt_write_file(b, "b", 1);
	assert_int_equal(link(a, hard), 0);
	assert_int_equal(tk_same_file(a, a), 1);
	assert_int_equal(tk_same_file(a, dotted), 1); /* not the same string */
	assert_int_equal(tk_same_file(a, hard), 1);
	assert_int_equal(tk_same_file(a, b), 0);
	assert_int_equal(tk_same_file(a, tkt_path("missing")), 0);
	assert_int_equal(tk_same_file("/dev/null", "/dev/null"), 0); /* devices may be both */
	assert_int_equal(tk_same_file(NULL, a), 0);
	unlink(a);
	unlink(b);
	unlink(hard);
	free(a);
	free(b);
	free(dotted);
	free(hard);
}

static void test_clocks(void **state)
{
	uint64_t a, b, n0, n1;

	(void)state;
	a = tk_clock_cycles();
	n0 = tk_clock_ns();
	usleep(2000);
	b = tk_clock_cycles();
	n1 = tk_clock_ns();
	assert_true(b > a);
	assert_true(n1 - n0 >= 2000000u);
	assert_true(tk_clock_cycles_per_sec() > 0);
	assert_int_equal(tk_clock_cycles_per_sec(), tk_clock_cycles_per_sec());
	assert_non_null(tk_version());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_outfile),
		cmocka_unit_test(test_outfile_symlinks),
		cmocka_unit_test(test_outfile_keeps_old_part),
		cmocka_unit_test(test_outfile_mode),
		cmocka_unit_test(test_outfile_devices),
		cmocka_unit_test(test_outfile_dev_stdout),
		cmocka_unit_test(test_outfile_chdir),
		cmocka_unit_test(test_tmpfile_tmpdir),
		cmocka_unit_test(test_same_file),
		cmocka_unit_test(test_clocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
