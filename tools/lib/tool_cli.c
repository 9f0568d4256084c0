/* SPDX-License-Identifier: MIT */
/*
 * tool_cli.c: the command-line conventions every tracekit tool shares (see tool_cli.h):
 * messages, signals and temporaries, outputs, standard input as a file, progress.
 */
#include "tool_cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *g_name = "tracekit";

static struct sigaction g_xfsz_old;
static int g_xfsz_saved;

void tktool_init(const char *name)
{
	struct sigaction ign;

	g_name = name;
	/*
	 * Past a file size limit (ulimit -f) a write fails with EFBIG, which the tool reports
	 * ("File too large") before it removes its temporaries, instead of SIGXFSZ ending the
	 * process with a core and leaving them.
	 */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	g_xfsz_saved = sigaction(SIGXFSZ, &ign, &g_xfsz_old) == 0;
}

void tktool_exec_prepare(void)
{
	if (g_xfsz_saved)
		sigaction(SIGXFSZ, &g_xfsz_old, NULL);
}

const char *tktool_name(void)
{
	return g_name;
}

int tktool_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", g_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", g_name);
	return 2;
}

int tktool_version(const char *extra)
{
	printf("%s (tracekit) %s%s%s\n", g_name, tk_version(), extra ? ", " : "", extra ? extra : "");
	return 0;
}

void tktool_error(const char *file, const char *fmt, ...)
{
	va_list ap;

	if (file != NULL)
		fprintf(stderr, "%s: %s: ", g_name, tktool_in_name(file));
	else
		fprintf(stderr, "%s: ", g_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int tktool_parse_seconds(const char *arg, unsigned *ms)
{
	char *end;
	double secs;

	if (strpbrk(arg, "xXpP") != NULL) /* strtod() reads hexadecimal: 0x10 is not 10 seconds */
		return -1;
	errno = 0;
	secs = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !(secs > 0) || secs > 4000000.0)
		return -1;
	*ms = (unsigned)(secs * 1000.0 + 0.5);
	if (*ms == 0)
		*ms = 1;
	return 0;
}

const char *tktool_in_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "standard input" : path;
}

const char *tktool_out_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "standard output" : path;
}

/* ---- interruption ---- */

#define CLEANUP_SLOTS 8
#define CLEANUP_PATH 4200

volatile sig_atomic_t tktool_stop;
static enum tktool_signal_mode g_mode;
/* Paths the handler removes: a slot is used when its first byte is not NUL. */
static char g_cleanup[CLEANUP_SLOTS][CLEANUP_PATH];
static volatile sig_atomic_t g_cleanup_used[CLEANUP_SLOTS];

/* Removes every entry of a directory, then the directory: async-signal-safe calls only. */
static void remove_dir_now(const char *dir)
{
	char buf[4096];
	long n;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
			long off = 0;

			while (off < n) {
				struct dirent64 *e = (struct dirent64 *)(void *)(buf + off);

				if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
					unlinkat(fd, e->d_name, 0);
				off += e->d_reclen;
			}
		}
		close(fd);
	}
	rmdir(dir);
}

static void remove_temporaries(void)
{
	int i;

	for (i = 0; i < CLEANUP_SLOTS; i++)
		if (g_cleanup_used[i] == 1)
			unlink(g_cleanup[i]);
	/* the last registered first: a library's private directory may be inside the tool's */
	for (i = CLEANUP_SLOTS - 1; i >= 0; i--)
		if (g_cleanup_used[i] == 2)
			remove_dir_now(g_cleanup[i]);
}

/* When the first signal of the stop mode came (CLOCK_MONOTONIC, ns). */
static volatile sig_atomic_t g_first_sig;
static uint64_t g_first_ns;

static uint64_t signal_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig)
{
	if (g_mode == TKTOOL_SIGNAL_STOP && !tktool_stop) {
		g_first_ns = signal_now_ns();
		g_first_sig = sig;
		tktool_stop = 1;
		return;
	}
	/*
	 * The same signal again within 200 ms is one request delivered twice: timeout(1)
	 * and kill(0, ...) send it to the process and to its process group. Only a signal
	 * the user sends again ends the process.
	 */
	if (g_mode == TKTOOL_SIGNAL_STOP && g_first_sig == sig && signal_now_ns() - g_first_ns < 200000000u)
		return;
	remove_temporaries();
	signal(sig, SIG_DFL);
	raise(sig);
}

int tktool_signal_ignored(int sig)
{
	struct sigaction old;

	return sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN;
}

void tktool_catch_signals(enum tktool_signal_mode mode)
{
	struct sigaction sa;

	g_mode = mode;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	/* no SA_RESTART: a read blocked on a terminal or a pipe returns and the tool stops */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!tktool_signal_ignored(SIGHUP)) /* under nohup, a hangup is not a request to stop */
		sigaction(SIGHUP, &sa, NULL);
	/* a reader gone (tool ... - | head): the temporaries go too, then the process dies of it
	 * as before (a private directory being copied to standard output was left) */
	if (mode == TKTOOL_SIGNAL_EXIT)
		sigaction(SIGPIPE, &sa, NULL);
}

/* Blocks (or unblocks) SIGINT, SIGTERM and SIGHUP around changes the handler must see whole. */
static void block_signals(int block, sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (block)
		sigprocmask(SIG_BLOCK, &set, old);
	else
		sigprocmask(SIG_SETMASK, old, NULL);
}

static int cleanup_add(const char *path, int kind)
{
	size_t len = strlen(path);
	sigset_t old;
	int i, slot = -1;

	if (len >= CLEANUP_PATH)
		return -1;
	block_signals(1, &old);
	for (i = 0; i < CLEANUP_SLOTS; i++)
		if (!g_cleanup_used[i]) {
			memcpy(g_cleanup[i], path, len + 1);
			g_cleanup_used[i] = kind;
			slot = i;
			break;
		}
	block_signals(0, &old);
	return slot;
}

int tktool_cleanup_add(const char *path)
{
	return cleanup_add(path, 1);
}

int tktool_cleanup_add_dir(const char *dir)
{
	return cleanup_add(dir, 2);
}

void tktool_cleanup_forget(int slot)
{
	if (slot >= 0 && slot < CLEANUP_SLOTS)
		g_cleanup_used[slot] = 0;
}

static int g_temp_slots[2] = { -1, -1 };

void tktool_temp_cb(void *user_data, const char *dir, const char *file)
{
	(void)user_data;
	tktool_cleanup_forget(g_temp_slots[0]);
	tktool_cleanup_forget(g_temp_slots[1]);
	g_temp_slots[0] = dir != NULL ? tktool_cleanup_add_dir(dir) : -1;
	g_temp_slots[1] = file != NULL ? tktool_cleanup_add(file) : -1;
}

/* ---- outputs ---- */

int tktool_refuse_same_file(const char *input, const char *output)
{
	if (!tk_same_file(input, output))
		return 0;
	fprintf(stderr, "%s: %s: is the input file: writing it would destroy the input\n", g_name,
		tktool_out_name(output));
	return 1;
}

/*
 * A FIFO output is opened (for writing, in place) only once a reader has it open, and
 * that open blocks; below it runs with SIGINT, SIGTERM and SIGHUP blocked. So wait for a reader
 * here, interruptibly: a non-blocking open fails with ENXIO until there is one. The
 * descriptor returned keeps the reader from seeing an end of file until the real open;
 * -1 with errno set (EINTR once tktool_stop is set).
 */
static int wait_for_reader(const char *path)
{
	struct timespec pause = { 0, 20000000 };
	int fd;

	for (;;) {
		if (tktool_stop) {
			errno = EINTR;
			return -1;
		}
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd >= 0 || (errno != ENXIO && errno != EINTR))
			return fd;
		nanosleep(&pause, NULL); /* a signal only shortens it */
	}
}

int tktool_output_create(struct tktool_output *out, const char *path, unsigned flags)
{
	struct stat sb;
	sigset_t old;
	int rc, reader = -1;

	memset(out, 0, sizeof(*out));
	out->path = path;
	out->cleanup_slot = -1;
	if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISFIFO(sb.st_mode)) {
		reader = wait_for_reader(path);
		if (reader < 0)
			return errno == EINTR ? TK_ECANCELED : tk_error_from_errno(errno);
	}
	/* the temporary exists only once the handler knows its name */
	block_signals(1, &old);
	rc = tk_outfile_open(&out->of, path, flags);
	if (rc == TK_OK && strcmp(tk_outfile_temp_path(out->of), path) != 0 && strcmp(path, "-") != 0)
		out->cleanup_slot = tktool_cleanup_add(tk_outfile_temp_path(out->of));
	block_signals(0, &old);
	if (reader >= 0)
		close(reader);
	if (rc != TK_OK)
		out->of = NULL;
	return rc;
}

int tktool_output_open(struct tktool_output *out, const char *path, unsigned flags)
{
	int rc = tktool_output_create(out, path, flags);

	if (rc != TK_OK) {
		fprintf(stderr, "%s: %s: cannot create: %s\n", g_name, path, tk_strerror(rc));
		return 1;
	}
	return 0;
}

int tktool_output_finish(struct tktool_output *out)
{
	sigset_t old;
	int rc;

	if (out->of == NULL)
		return TK_EINVAL;
	block_signals(1, &old);
	rc = tk_outfile_commit(out->of);
	out->of = NULL;
	tktool_cleanup_forget(out->cleanup_slot);
	out->cleanup_slot = -1;
	block_signals(0, &old);
	return rc;
}

FILE *tktool_output_stream(const struct tktool_output *out)
{
	return tk_outfile_stream(out->of);
}

int tktool_output_commit(struct tktool_output *out)
{
	FILE *stream = tk_outfile_stream(out->of);
	int rc, err = 0;

	if (out->of == NULL)
		return 1;
	errno = 0;
	if (fflush(stream) != 0 || ferror(stream)) {
		err = errno != 0 ? errno : EIO;
		tktool_output_abort(out);
		fprintf(stderr, "%s: %s: cannot write: %s\n", g_name, tktool_out_name(out->path), strerror(err));
		return 1;
	}
	rc = tktool_output_finish(out);
	if (rc != TK_OK) {
		fprintf(stderr, "%s: %s: cannot write: %s\n", g_name, tktool_out_name(out->path), tk_strerror(rc));
		return 1;
	}
	return 0;
}

void tktool_output_abort(struct tktool_output *out)
{
	sigset_t old;

	if (out->of == NULL)
		return;
	block_signals(1, &old);
	tk_outfile_abort(out->of);
	out->of = NULL;
	tktool_cleanup_forget(out->cleanup_slot);
	out->cleanup_slot = -1;
	block_signals(0, &old);
}

/* The errno value behind a TK_E* code of tk_error_from_errno (EIO for the others). */
static int errno_of(int rc)
{
	switch (rc) {
	case TK_ENOSPC: return ENOSPC;
	case TK_EDQUOT: return EDQUOT;
	case TK_EFBIG: return EFBIG;
	case TK_EACCES: return EACCES;
	case TK_EROFS: return EROFS;
	case TK_ENOENT: return ENOENT;
	case TK_ENOTDIR: return ENOTDIR;
	case TK_EISDIR: return EISDIR;
	case TK_ENAMETOOLONG: return ENAMETOOLONG;
	case TK_EMFILE: return EMFILE;
	case TK_ENOMEM: return ENOMEM;
	case TK_EEXIST: return EEXIST;
	case TK_ECANCELED: return EINTR;
	default: return EIO;
	}
}

int tktool_copy_file(const char *path, const char *dest)
{
	char buf[1 << 16];
	FILE *f = fopen(path, "rb");
	struct tktool_output out;
	FILE *to;
	size_t n;
	int rc, err = 0;

	if (f == NULL)
		return -1;
	rc = tktool_output_create(&out, dest, 0);
	if (rc != TK_OK) {
		fclose(f);
		errno = errno_of(rc);
		return -1;
	}
	to = tktool_output_stream(&out);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (fwrite(buf, 1, n, to) != n) {
			err = errno != 0 ? errno : EIO;
			break;
		}
	if (err == 0 && ferror(f))
		err = EIO;
	fclose(f);
	if (err != 0) {
		tktool_output_abort(&out);
		errno = err;
		return -1;
	}
	if (fflush(to) != 0 || ferror(to)) {
		err = errno != 0 ? errno : EIO;
		tktool_output_abort(&out);
		errno = err;
		return -1;
	}
	rc = tktool_output_finish(&out);
	if (rc != TK_OK) {
		errno = errno_of(rc);
		return -1;
	}
	return 0;
}

int tktool_copy_to_stdout(const char *path)
{
	return tktool_copy_file(path, "-");
}

int tktool_needs_copy(const char *path)
{
	struct stat sb;

	if (strcmp(path, "-") == 0)
		return 1;
	/* a device or FIFO (also through a symlink) is written in place, never replaced */
	return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode);
}

int tktool_stdout_stage_begin(struct tktool_stdout_stage *s, const char *leaf)
{
	int n;

	if (tktool_private_dir_registered(s->dir, sizeof(s->dir), &s->slot) != 0)
		return -1;
	n = snprintf(s->path, sizeof(s->path), "%s/%s", s->dir, leaf);
	if (n < 0 || (size_t)n >= sizeof(s->path)) {
		tktool_private_dir_remove(s->dir);
		tktool_cleanup_forget(s->slot);
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int tktool_stdout_stage_end(struct tktool_stdout_stage *s, int copy)
{
	int rc = copy ? tktool_copy_to_stdout(s->path) : 0;
	int saved = errno;

	tktool_private_dir_remove(s->dir);
	tktool_cleanup_forget(s->slot);
	errno = saved;
	return rc;
}

int tktool_private_dir(char *dir, size_t size)
{
	int n = snprintf(dir, size, "%s/%s.XXXXXX", tk_tmpdir(), g_name);

	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkdtemp(dir) != NULL ? 0 : -1;
}

int tktool_private_dir_registered(char *dir, size_t size, int *slot)
{
	sigset_t old;
	int rc, err;

	/* a signal between mkdtemp() and the registration would leave the directory behind (the
	 * moment a test that waits for it to appear then interrupts the tool hits) */
	block_signals(1, &old);
	rc = tktool_private_dir(dir, size);
	err = errno;
	*slot = rc == 0 ? tktool_cleanup_add_dir(dir) : -1;
	block_signals(0, &old);
	errno = err;
	return rc;
}

int tktool_private_dir_beside(const char *path, char *dir, size_t size)
{
	const char *slash = strrchr(path, '/');
	int n;

	if (slash == NULL)
		n = snprintf(dir, size, ".%s.XXXXXX", g_name);
	else
		n = snprintf(dir, size, "%.*s/.%s.XXXXXX", (int)(slash - path), path, g_name);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkdtemp(dir) != NULL ? 0 : -1;
}

int tktool_install(const char *built, const char *final)
{
	struct stat sb;

	if (lstat(final, &sb) == 0 && S_ISREG(sb.st_mode) && chmod(built, sb.st_mode & 0777) != 0)
		return -1;
	return rename(built, final);
}

void tktool_private_dir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d != NULL) {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

/* ---- standard input that must be a file ---- */

int tktool_fd_file(struct tktool_stdin_file *f, int fd_in, const char *name, const void *magic, size_t magic_len,
		   const void *head, size_t head_len)
{
	char buf[1 << 16];
	size_t pending = head_len < sizeof(buf) ? head_len : 0;
	uint64_t total = 0;
	struct stat sb;
	ssize_t n;
	int fd, err;

	memset(f, 0, sizeof(*f));
	f->cleanup_slot = -1;
	if (fstat(fd_in, &sb) == 0 && S_ISREG(sb.st_mode)) {
		/* a file: read it where it is, no copy */
		snprintf(f->path, sizeof(f->path), "/dev/fd/%d", fd_in);
		return 0;
	}
	if (tktool_private_dir_registered(f->dir, sizeof(f->dir), &f->cleanup_slot) != 0) {
		err = errno;
		f->dir[0] = '\0';
		tktool_error(name, "cannot create a temporary directory in %s (TMPDIR): %s", tk_tmpdir(),
			     strerror(err));
		return 1;
	}
	snprintf(f->path, sizeof(f->path), "%s/stdin", f->dir);
	fd = open(f->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = errno;
		tktool_stdin_file_close(f);
		tktool_error(name, "cannot create a temporary file: %s", strerror(err));
		return 1;
	}
	if (pending > 0)
		memcpy(buf, head, pending);
	for (;;) {
		size_t checked;

		if (tktool_stop)
			break;
		if (pending > 0) {
			n = (ssize_t)pending;
			pending = 0;
		} else if ((n = read(fd_in, buf, sizeof(buf))) == 0) {
			break;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			goto fail_read;
		}
		/* not the format: keep only what shows it, the reader reports it */
		checked = total < magic_len ? magic_len - (size_t)total : 0;
		if (checked > (size_t)n)
			checked = (size_t)n;
		if (checked > 0 && memcmp(buf, (const char *)magic + total, checked) != 0)
			n = (ssize_t)checked;
		if (total + (uint64_t)n > TKTOOL_SPOOL_MAX) {
			close(fd);
			tktool_stdin_file_close(f);
			tktool_error(name, "more than %llu bytes: give the file by name instead",
				     (unsigned long long)TKTOOL_SPOOL_MAX);
			return 1;
		}
		if (write(fd, buf, (size_t)n) != n) {
			err = errno != 0 ? errno : EIO;
			close(fd);
			tktool_stdin_file_close(f);
			tktool_error(name, "cannot copy to a temporary file: %s", strerror(err));
			return 1;
		}
		total += (uint64_t)n;
		if (checked > 0 && memcmp(buf, (const char *)magic + total - (uint64_t)n, checked) != 0)
			break;
	}
	if (tktool_stop) {
		err = EINTR;
		goto fail_read;
	}
	if (close(fd) != 0) {
		err = errno;
		tktool_stdin_file_close(f);
		tktool_error(name, "cannot copy to a temporary file: %s", strerror(err));
		return 1;
	}
	return 0;

fail_read:
	close(fd);
	tktool_stdin_file_close(f);
	tktool_error(name, "%s", err == EINTR ? "interrupted" : strerror(err));
	return 1;
}

int tktool_stdin_file(struct tktool_stdin_file *f, const void *magic, size_t magic_len)
{
	int rc = tktool_fd_file(f, STDIN_FILENO, "-", magic, magic_len, NULL, 0);

	if (rc == 0 && f->dir[0] == '\0')
		snprintf(f->path, sizeof(f->path), "/dev/stdin");
	return rc;
}

void tktool_stdin_file_unlink(struct tktool_stdin_file *f)
{
	if (f->dir[0] == '\0')
		return;
	unlink(f->path);
	rmdir(f->dir);
	tktool_cleanup_forget(f->cleanup_slot);
	f->cleanup_slot = -1;
	f->dir[0] = '\0';
}

void tktool_stdin_file_close(struct tktool_stdin_file *f)
{
	tktool_stdin_file_unlink(f);
}

/* ---- progress ---- */

int tktool_quiet;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tktool_progress_begin(struct tktool_progress *p, const char *what, uint64_t total)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->total = total;
	p->active = !tktool_quiet && total >= TKTOOL_PROGRESS_MIN && isatty(STDERR_FILENO);
	p->next_ns = now_ns() + 250000000u;
}

void tktool_progress_update(struct tktool_progress *p, uint64_t done)
{
	uint64_t t;

	if (!p->active)
		return;
	t = now_ns();
	if (t < p->next_ns)
		return;
	p->next_ns = t + 250000000u;
	if (done > p->total)
		done = p->total;
	fprintf(stderr, "\r%s: %s: %llu of %llu MB (%u%%)\033[K", g_name, p->what,
		(unsigned long long)(done >> 20), (unsigned long long)(p->total >> 20),
		(unsigned)(done * 100 / p->total));
	fflush(stderr);
	p->shown = 1;
}

void tktool_progress_end(struct tktool_progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	p->shown = 0;
	p->active = 0;
}

void tktool_progress_bytes(void *user_data, uint64_t done, uint64_t total)
{
	struct tktool_progress *p = user_data;

	if (!p->begun) {
		tktool_progress_begin(p, "converting", total);
		p->begun = 1;
	}
	tktool_progress_update(p, done);
}

FILE *tktool_stdout_buffer(void)
{
	return tk_tmpfile(g_name);
}

int tktool_stdout_deliver(FILE *buffer)
{
	char buf[1 << 16];
	size_t n;
	int rc = 0, err = 0;

	if (fflush(buffer) != 0 || ferror(buffer) || fseeko(buffer, 0, SEEK_SET) != 0) {
		err = errno != 0 ? errno : EIO;
		fclose(buffer);
		errno = err;
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), buffer)) > 0)
		if (fwrite(buf, 1, n, stdout) != n) {
			err = errno;
			rc = -1;
			break;
		}
	if (rc == 0 && ferror(buffer)) {
		err = EIO;
		rc = -1;
	}
	fclose(buffer);
	if (fflush(stdout) != 0 && rc == 0) {
		err = errno;
		rc = -1;
	}
	errno = err;
	return rc;
}

static struct {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int running, stop;
	char dir[4096];
	struct tktool_progress progress;
} g_watch = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* Bytes of the regular files in a directory (one level). */
static uint64_t dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t sum = 0;
	struct stat sb;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
			sum += (uint64_t)sb.st_size;
	closedir(d);
	return sum;
}

static void *watch_main(void *arg)
{
	struct timespec until;

	(void)arg;
	pthread_mutex_lock(&g_watch.mu);
	while (!g_watch.stop) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 250000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&g_watch.cv, &g_watch.mu, &until);
		if (!g_watch.stop)
			tktool_progress_update(&g_watch.progress, dir_bytes(g_watch.dir));
	}
	pthread_mutex_unlock(&g_watch.mu);
	return NULL;
}

void tktool_progress_watch_dir(const char *dir, const char *what, uint64_t total)
{
	tktool_progress_begin(&g_watch.progress, what, total);
	if (!g_watch.progress.active || g_watch.running || strlen(dir) >= sizeof(g_watch.dir))
		return;
	memcpy(g_watch.dir, dir, strlen(dir) + 1);
	g_watch.stop = 0;
	g_watch.progress.next_ns = 0;
	if (pthread_create(&g_watch.thread, NULL, watch_main, NULL) == 0)
		g_watch.running = 1;
}

void tktool_progress_watch_end(void)
{
	if (g_watch.running) {
		pthread_mutex_lock(&g_watch.mu);
		g_watch.stop = 1;
		pthread_cond_signal(&g_watch.cv);
		pthread_mutex_unlock(&g_watch.mu);
		pthread_join(g_watch.thread, NULL);
		g_watch.running = 0;
	}
	tktool_progress_end(&g_watch.progress);
}

uint64_t tktool_file_size(const char *path)
{
	struct stat sb;

	if (strcmp(path, "-") == 0)
		return fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
}
