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

struct tk_outfile {
	FILE *stream;
	char *final_path; /* NULL for stdout and for paths written in place */
	char *temp_path;
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
 * Creates the temporary beside path: "<path>.part" if that name is free, else
 * "<path>.XXXXXX.part". Never follows or reuses an existing name. Sets *temp_out
 * (malloc'd) and returns the descriptor, or a negative TK_E* code.
 */
static int create_temp(const char *path, const struct stat *old, char **temp_out)
{
	size_t len = strlen(path);
	char *temp = malloc(len + sizeof(".XXXXXX.part"));
	int tries, fd = -1;

	if (temp == NULL)
		return TK_ENOMEM;
	memcpy(temp, path, len);
	memcpy(temp + len, ".part", sizeof(".part"));
	for (tries = 0; tries < OUTFILE_NAME_TRIES; tries++) {
		fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
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
	if (old != NULL && fchmod(fd, old->st_mode & 0777) != 0) {
		int err = tk_error_from_errno(errno);

		close(fd);
		unlink(temp);
		free(temp);
		return err;
	}
	*temp_out = temp;
	return fd;
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

/* Opens an existing non-regular file for writing in place; checks it is what lstat saw. */
static int open_in_place(const char *path, int follow, const struct stat *want)
{
	struct stat sb;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | (follow ? 0 : O_NOFOLLOW));

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
	int fd, keep_mode = 0;

	if (out == NULL || path == NULL || path[0] == '\0')
		return TK_EINVAL;
	*out = NULL;
	of = calloc(1, sizeof(*of));
	if (of == NULL)
		return TK_ENOMEM;
	of->flags = flags;
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
			int err = tk_error_from_errno(errno == EBADF ? ENOENT : errno);

			free(of);
			return err;
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
	if (lstat(path, &lst) == 0) {
		int in_place = 0, follow = 0;

		if (S_ISDIR(lst.st_mode)) {
			free(of);
			return TK_EISDIR;
		}
		if (S_ISLNK(lst.st_mode)) {
			if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
				free(of);
				return TK_EISDIR;
			}
			if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && link_trusted(&lst))
				in_place = follow = 1;
			/* otherwise the link itself is replaced; its target is never touched */
		} else if (!S_ISREG(lst.st_mode)) {
			in_place = 1;
			st = lst;
		} else {
			keep_mode = 1;
		}
		if (in_place) {
			fd = open_in_place(path, follow, &st);
			if (fd < 0) {
				free(of);
				return fd;
			}
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
		int err = tk_error_from_errno(errno);

		free(of);
		return err;
	}
	of->final_path = strdup(path);
	if (of->final_path == NULL)
		goto fail_alloc;
	fd = create_temp(path, keep_mode ? &lst : NULL, &of->temp_path);
	if (fd < 0) {
		free(of->final_path);
		free(of);
		return fd;
	}
	of->stream = fdopen(fd, "wb");
	if (of->stream == NULL) {
		close(fd);
		unlink(of->temp_path);
		goto fail_alloc;
	}
	*out = of;
	return TK_OK;

fail_alloc:
	free(of->final_path);
	free(of->temp_path);
	free(of);
	return TK_ENOMEM;
}

FILE *tk_outfile_stream(tk_outfile *of)
{
	return of ? of->stream : NULL;
}

const char *tk_outfile_temp_path(const tk_outfile *of)
{
	return of ? of->temp_path : NULL;
}

static void outfile_free(tk_outfile *of)
{
	free(of->final_path);
	free(of->temp_path);
	free(of);
}

int tk_outfile_commit(tk_outfile *of)
{
	struct stat lst;
	int err = TK_OK;

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
	/* A device or FIFO that appeared under the final name meanwhile is never renamed over. */
	if (err == TK_OK && lstat(of->final_path, &lst) == 0 && !S_ISREG(lst.st_mode) && !S_ISLNK(lst.st_mode))
		err = S_ISDIR(lst.st_mode) ? TK_EISDIR : TK_EEXIST;
	if (err == TK_OK && rename(of->temp_path, of->final_path) != 0)
		err = tk_error_from_errno(errno);
	if (err != TK_OK && !(of->flags & TK_OUTFILE_KEEP_PARTIAL_ON_ABORT))
		unlink(of->temp_path);
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
			unlink(of->temp_path);
	} else if (of->in_place) {
		fclose(of->stream);
	} else {
		fflush(of->stream);
	}
	outfile_free(of);
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
