/* SPDX-License-Identifier: MIT */
/*
 * Crash-safe output files: data goes to a temporary "<path>.part" (or "<path>.XXXXXX.part"
 * when that name is taken) and is renamed to "<path>" only after a successful flush and
 * fsync, so no reader ever sees a half-written file under its final name, and a killed
 * writer leaves the flushed part behind for recovery.
 *
 * Safety rules (the files are often written by root into directories others can write):
 * - The temporary is created with O_CREAT|O_EXCL|O_NOFOLLOW: nothing that already exists
 *   under that name (a planted symlink, a crashed run's .part that is the only copy of its
 *   data) is ever followed, truncated or reused. A taken name gets a unique random one.
 * - The temporary gets the final file's mode: an existing output keeps its permission bits
 *   (a 0600 file stays 0600) and, when root replaces it, its owner; a new one gets 0644
 *   minus the umask.
 * - A symlink at the final name is replaced by the new file, never followed, unless it
 *   points to a device or FIFO and belongs to us or to root (/dev/stdout, /proc/self/fd/N):
 *   then the device is written through it, as a shell redirection would.
 * - An existing path that is not a regular file (a device such as /dev/null or /dev/full,
 *   a named pipe) is written in place: renaming onto it would replace the device node.
 * - The directory is pinned at open: an O_PATH descriptor of it is kept, and every later
 *   step (the rename at commit, the removal of the temporary) works on names relative to
 *   it, never on the paths as given. A program that chdir()s between open and commit (a
 *   daemon's chdir("/"), a relative TRACEKIT_LOG) still gets its file where it asked for
 *   it, and nothing of the same names in its new directory is renamed or removed. The
 *   descriptor is checked (st_dev, st_ino) before each use: a program that closed it, or
 *   whose own file got its number, is never acted on; the directory is then reopened by
 *   its absolute path and used only if it is the same directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/common.h"

#define OUTFILE_NEW_MODE 0644
#define OUTFILE_NAME_TRIES 100
/* O_PATH: the descriptor only names the directory (no read permission needed) */
#define OUTFILE_DIR_FLAGS (O_PATH | O_DIRECTORY | O_CLOEXEC)

struct tk_outfile {
	FILE *stream;
	char *final_path; /* NULL for stdout and for paths written in place */
	char *temp_path;  /* as named at open: relative to the working directory of then */
	const char *final_name; /* last component of final_path: relative to dir_fd */
	const char *temp_name;  /* last component of temp_path: relative to dir_fd */
	char *dir_path; /* the directory, absolute if getcwd() allowed: to find it again */
	int dir_fd;     /* the pinned directory (final_path != NULL only), or -1 */
	dev_t dir_dev;  /* identity of the directory dir_fd was opened on */
	ino_t dir_ino;
	dev_t temp_dev; /* identity of the temporary created, so that only it is ever removed */
	ino_t temp_ino;
	unsigned flags;
	int in_place; /* stream opened on an existing non-regular file: close, never rename */
};

/* A random suffix of six letters and digits for a temporary name. */
static void random_suffix(char out[7])
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned counter;
	unsigned char bytes[6];
	size_t i;

	if (getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) != (ssize_t)sizeof(bytes)) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 20) ^ ((uint64_t)++counter << 40);
		for (i = 0; i < sizeof(bytes); i++, x = x * 6364136223846793005u + 1442695040888963407u)
			bytes[i] = (unsigned char)(x >> 56);
	}
	for (i = 0; i < sizeof(bytes); i++)
		out[i] = alphabet[bytes[i] % (sizeof(alphabet) - 1)];
	out[6] = '\0';
}

/*
 * Creates the temporary beside path, in the directory dir (path's last component is name):
 * "<path>.part" if that name is free, else "<path>.XXXXXX.part". Never follows or reuses
 * an existing name. Sets of->temp_path (malloc'd), of->temp_name and the temporary's
 * identity, and returns the descriptor, or a negative TK_E* code.
 */
static int create_temp(tk_outfile *of, int dir, const char *path, const char *name, const struct stat *old)
{
	size_t len = strlen(path);
	char *temp = malloc(len + sizeof(".XXXXXX.part"));
	const char *temp_name;
	struct stat sb;
	int tries, fd = -1;

	if (temp == NULL)
		return TK_ENOMEM;
	memcpy(temp, path, len);
	memcpy(temp + len, ".part", sizeof(".part"));
	temp_name = temp + (name - path);
	for (tries = 0; tries < OUTFILE_NAME_TRIES; tries++) {
		fd = openat(dir, temp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
			    old != NULL ? (old->st_mode & 0600) : OUTFILE_NEW_MODE);
		if (fd >= 0 || errno != EEXIST)
			break;
		{
			char sfx[7];

			random_suffix(sfx);
			snprintf(temp + len, sizeof(".XXXXXX.part"), ".%s.part", sfx);
		}
	}
	if (fd < 0) {
		int err = tk_error_from_errno(errno);

		free(temp);
		return err;
	}
	/*
	 * The owner (root replacing another user's file: best effort, as cp would keep it) and
	 * the mode of the file it replaces, exactly (open() applied the umask).
	 */
	if (old != NULL && geteuid() == 0 && (old->st_uid != 0 || old->st_gid != 0) &&
	    fchown(fd, old->st_uid, old->st_gid) != 0) {
		/* the file stays root's: its mode below still keeps others out as before */
	}
	if ((old != NULL && fchmod(fd, old->st_mode & 0777) != 0) || fstat(fd, &sb) != 0) {
		int err = tk_error_from_errno(errno);

		close(fd);
		unlinkat(dir, temp_name, 0);
		free(temp);
		return err;
	}
	of->temp_path = temp;
	of->temp_name = temp_name;
	of->temp_dev = sb.st_dev;
	of->temp_ino = sb.st_ino;
	return fd;
}

/*
 * Pins the directory of path (whose last component is name): an O_PATH descriptor of it,
 * its identity, and its absolute path to find it again should the program close the
 * descriptor. Returns TK_OK or a negative TK_E* code.
 */
static int pin_dir(tk_outfile *of, const char *path, const char *name)
{
	size_t dir_len = (size_t)(name - path);
	char *dir, *cwd = NULL;
	struct stat sb;

	if (dir_len == 0) {
		dir = strdup(".");
	} else {
		/* "/x" is in "/"; "a/b" and "a//b" in "a/" and "a//" (the slashes are harmless) */
		dir = malloc(dir_len + 1);
		if (dir != NULL) {
			memcpy(dir, path, dir_len);
			dir[dir_len] = '\0';
		}
	}
	if (dir == NULL)
		return TK_ENOMEM;
	of->dir_fd = open(dir, OUTFILE_DIR_FLAGS);
	if (of->dir_fd < 0 || fstat(of->dir_fd, &sb) != 0) {
		int err = tk_error_from_errno(errno);

		if (of->dir_fd >= 0)
			close(of->dir_fd);
		of->dir_fd = -1;
		free(dir);
		return err;
	}
	of->dir_dev = sb.st_dev;
	of->dir_ino = sb.st_ino;
	if (dir[0] != '/')
		cwd = getcwd(NULL, 0); /* NULL (a removed or too deep directory): dir as given */
	if (cwd != NULL) {
		size_t cwd_len = strlen(cwd);
		char *abs = malloc(cwd_len + 1 + strlen(dir) + 1);

		if (abs != NULL) {
			memcpy(abs, cwd, cwd_len);
			abs[cwd_len] = '/';
			strcpy(abs + cwd_len + 1, dir);
			free(dir);
			dir = abs;
		}
		free(cwd);
	}
	of->dir_path = dir;
	return TK_OK;
}

/* Whether fd (-1 for none) is still the directory pinned at open. */
static int is_pinned_dir(const tk_outfile *of, int fd)
{
	struct stat sb;

	return fd >= 0 && fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode) && sb.st_dev == of->dir_dev &&
	       sb.st_ino == of->dir_ino;
}

/*
 * The pinned directory's descriptor for the next step, or -1 (errno set) if the directory
 * cannot be found again. The program may have closed ours (daemons close every
 * descriptor) and reused its number: that one is the program's and is never used or
 * closed; the directory is reopened by its path and taken only if it is the same one.
 */
static int pinned_dir(tk_outfile *of)
{
	int fd;

	if (is_pinned_dir(of, of->dir_fd))
		return of->dir_fd;
	of->dir_fd = -1;
	if (of->dir_path == NULL) {
		errno = ENOENT;
		return -1;
	}
	fd = open(of->dir_path, OUTFILE_DIR_FLAGS);
	if (fd < 0)
		return -1;
	if (!is_pinned_dir(of, fd)) { /* another directory is there now */
		close(fd);
		errno = ENOENT;
		return -1;
	}
	of->dir_fd = fd;
	return fd;
}

/* Removes the temporary, only while it is still the file this handle created. */
static void remove_temp(tk_outfile *of)
{
	struct stat sb;
	int dir;

	if (of->final_path == NULL || of->temp_name == NULL)
		return;
	dir = pinned_dir(of);
	if (dir >= 0 && fstatat(dir, of->temp_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_dev == of->temp_dev && sb.st_ino == of->temp_ino)
		unlinkat(dir, of->temp_name, 0);
}

/*
 * Whether a symlink at the output name may be followed to the device or FIFO it names:
 * only when we or root made it (the kernel's protected_symlinks rule, in spirit), so a
 * link planted by another user never redirects our output.
 */
static int link_trusted(const struct stat *lst)
{
	return lst->st_uid == 0 || lst->st_uid == geteuid();
}

/*
 * The descriptor a path names when it is one of ours: /dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N. Writing there means writing to that descriptor (whatever it is open on:
 * a file the shell redirected to, a pipe): never replacing the link. -1 otherwise.
 */
static int fd_path(const char *path)
{
	const char *num = NULL;
	char *end;
	long fd;

	if (strcmp(path, "/dev/stdout") == 0)
		return STDOUT_FILENO;
	if (strcmp(path, "/dev/stderr") == 0)
		return STDERR_FILENO;
	if (strncmp(path, "/dev/fd/", 8) == 0)
		num = path + 8;
	else if (strncmp(path, "/proc/self/fd/", 14) == 0)
		num = path + 14;
	if (num == NULL || *num < '0' || *num > '9')
		return -1;
	fd = strtol(num, &end, 10);
	return *end == '\0' && fd <= 1 << 20 ? (int)fd : -1;
}

/* Opens an existing non-regular file (name, in dir) for writing in place; checks it is what lstat saw. */
static int open_in_place(int dir, const char *name, int follow, const struct stat *want)
{
	struct stat sb;
	int fd = openat(dir, name, O_WRONLY | O_CLOEXEC | O_NOCTTY | (follow ? 0 : O_NOFOLLOW));

	if (fd < 0)
		return tk_error_from_errno(errno);
	if (fstat(fd, &sb) != 0 || S_ISREG(sb.st_mode) || sb.st_dev != want->st_dev || sb.st_ino != want->st_ino) {
		/* swapped since we looked: write nothing through it */
		close(fd);
		return TK_EBUSY;
	}
	return fd;
}

int tk_outfile_open(tk_outfile **out, const char *path, unsigned flags)
{
	tk_outfile *of;
	struct stat lst, st;
	const char *name;
	int fd, err, keep_mode = 0;

	if (out == NULL || path == NULL || path[0] == '\0')
		return TK_EINVAL;
	*out = NULL;
	of = calloc(1, sizeof(*of));
	if (of == NULL)
		return TK_ENOMEM;
	of->flags = flags;
	of->dir_fd = -1;
	if (strcmp(path, "-") == 0) {
		of->stream = stdout;
		of->temp_path = strdup("-");
		if (of->temp_path == NULL)
			goto fail_alloc;
		*out = of;
		return TK_OK;
	}
	fd = fd_path(path);
	if (fd >= 0) {
		int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);

		if (copy < 0) {
			err = tk_error_from_errno(errno == EBADF ? ENOENT : errno);
			goto fail;
		}
		of->in_place = 1;
		of->temp_path = strdup(path);
		of->stream = of->temp_path ? fdopen(copy, "wb") : NULL;
		if (of->stream == NULL) {
			close(copy);
			goto fail_alloc;
		}
		*out = of;
		return TK_OK;
	}
	name = strrchr(path, '/');
	name = name != NULL ? name + 1 : path;
	if (name[0] == '\0') { /* "dir/" can only name a directory */
		err = stat(path, &st) != 0 ? tk_error_from_errno(errno) : S_ISDIR(st.st_mode) ? TK_EISDIR : TK_ENOTDIR;
		goto fail;
	}
	err = pin_dir(of, path, name);
	if (err != TK_OK)
		goto fail;
	if (fstatat(of->dir_fd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0) {
		int in_place = 0, follow = 0;

		if (S_ISDIR(lst.st_mode)) {
			err = TK_EISDIR;
			goto fail;
		}
		if (S_ISLNK(lst.st_mode)) {
			if (fstatat(of->dir_fd, name, &st, 0) == 0 && S_ISDIR(st.st_mode)) {
				err = TK_EISDIR;
				goto fail;
			}
			if (fstatat(of->dir_fd, name, &st, 0) == 0 && !S_ISREG(st.st_mode) && link_trusted(&lst))
				in_place = follow = 1;
			/* otherwise the link itself is replaced; its target is never touched */
		} else if (!S_ISREG(lst.st_mode)) {
			in_place = 1;
			st = lst;
		} else {
			keep_mode = 1;
		}
		if (in_place) {
			fd = open_in_place(of->dir_fd, name, follow, &st);
			if (fd < 0) {
				err = fd;
				goto fail;
			}
			/* nothing is ever named again: the directory is not kept */
			close(of->dir_fd);
			of->dir_fd = -1;
			free(of->dir_path);
			of->dir_path = NULL;
			of->in_place = 1;
			of->temp_path = strdup(path);
			of->stream = of->temp_path ? fdopen(fd, "wb") : NULL;
			if (of->stream == NULL) {
				close(fd);
				goto fail_alloc;
			}
			*out = of;
			return TK_OK;
		}
	} else if (errno != ENOENT) {
		err = tk_error_from_errno(errno);
		goto fail;
	}
	of->final_path = strdup(path);
	if (of->final_path == NULL)
		goto fail_alloc;
	of->final_name = of->final_path + (name - path);
	fd = create_temp(of, of->dir_fd, path, name, keep_mode ? &lst : NULL);
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	of->stream = fdopen(fd, "wb");
	if (of->stream == NULL) {
		close(fd);
		unlinkat(of->dir_fd, of->temp_name, 0);
		goto fail_alloc;
	}
	*out = of;
	return TK_OK;

fail_alloc:
	err = TK_ENOMEM;
fail:
	if (of->dir_fd >= 0)
		close(of->dir_fd);
	free(of->dir_path);
	free(of->final_path);
	free(of->temp_path);
	free(of);
	return err;
}

FILE *tk_outfile_stream(tk_outfile *of)
{
	return of ? of->stream : NULL;
}

const char *tk_outfile_temp_path(const tk_outfile *of)
{
	return of ? of->temp_path : NULL;
}

/* Frees of and closes the pinned directory's descriptor, unless the program has taken its number. */
static void outfile_free(tk_outfile *of)
{
	if (is_pinned_dir(of, of->dir_fd))
		close(of->dir_fd);
	free(of->dir_path);
	free(of->final_path);
	free(of->temp_path);
	free(of);
}

int tk_outfile_commit(tk_outfile *of)
{
	struct stat lst;
	int err = TK_OK, dir;

	if (of == NULL)
		return TK_EINVAL;
	if (of->final_path == NULL) { /* stdout (flush only) or a device or pipe (close) */
		if (fflush(of->stream) != 0 || ferror(of->stream))
			err = tk_error_from_errno(errno ? errno : EIO);
		if (of->in_place && fclose(of->stream) != 0 && err == TK_OK)
			err = tk_error_from_errno(errno);
		outfile_free(of);
		return err;
	}
	if (fflush(of->stream) != 0 || ferror(of->stream))
		err = tk_error_from_errno(errno ? errno : EIO);
	if (err == TK_OK && fsync(fileno(of->stream)) != 0 && errno != EINVAL)
		err = tk_error_from_errno(errno);
	if (fclose(of->stream) != 0 && err == TK_OK)
		err = tk_error_from_errno(errno);
	/* Both names are taken in the directory of the open, wherever the program is now. */
	dir = pinned_dir(of);
	if (err == TK_OK && dir < 0)
		err = tk_error_from_errno(errno);
	/* A device or FIFO that appeared under the final name meanwhile is never renamed over. */
	if (err == TK_OK && fstatat(dir, of->final_name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(lst.st_mode) &&
	    !S_ISLNK(lst.st_mode))
		err = S_ISDIR(lst.st_mode) ? TK_EISDIR : TK_EEXIST;
	if (err == TK_OK && renameat(dir, of->temp_name, dir, of->final_name) != 0)
		err = tk_error_from_errno(errno);
	if (err != TK_OK && !(of->flags & TK_OUTFILE_KEEP_PARTIAL_ON_ABORT))
		remove_temp(of);
	outfile_free(of);
	return err;
}

void tk_outfile_abort(tk_outfile *of)
{
	if (of == NULL)
		return;
	if (of->final_path != NULL) {
		fclose(of->stream);
		if (!(of->flags & TK_OUTFILE_KEEP_PARTIAL_ON_ABORT))
			remove_temp(of);
	} else if (of->in_place) {
		fclose(of->stream);
	} else {
		fflush(of->stream);
	}
	outfile_free(of);
}

void tk_outfile_remove_temp(tk_outfile *of)
{
	if (of != NULL)
		remove_temp(of);
}

/* Identity of a path ("-" names standard input or output, as fd) for tk_same_file. */
static int file_id(const char *path, int std_fd, struct stat *sb)
{
	if (strcmp(path, "-") == 0)
		return fstat(std_fd, sb);
	return stat(path, sb);
}

int tk_same_file(const char *input, const char *output)
{
	struct stat a, b;

	if (input == NULL || output == NULL)
		return 0;
	if (file_id(input, STDIN_FILENO, &a) != 0 || file_id(output, STDOUT_FILENO, &b) != 0)
		return 0;
	/* Devices and pipes can be both read and written (/dev/null as input and output). */
	if (!S_ISREG(a.st_mode) || !S_ISREG(b.st_mode))
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

const char *tk_tmpdir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir != NULL && dir[0] != '\0' ? dir : "/tmp";
}

/* Not tmpfile(): glibc's always uses /tmp, so a small /tmp failed work that TMPDIR had room
 * for. O_TMPFILE where the file system has it, else a mkstemp() name removed at once. */
FILE *tk_tmpfile(const char *prefix)
{
	const char *dir = tk_tmpdir();
	char path[4200];
	int fd = -1, err;
	FILE *f;

#ifdef O_TMPFILE
	fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno != EISDIR && errno != EOPNOTSUPP && errno != EINVAL)
		return NULL; /* the directory itself (missing, not writable, full) */
#endif
	if (fd < 0) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s.XXXXXX", dir, prefix != NULL ? prefix : "tracekit") >=
		    sizeof(path)) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		fd = mkstemp(path);
		if (fd < 0)
			return NULL;
		unlink(path);
	}
	f = fdopen(fd, "w+b");
	if (f == NULL) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}
