/* SPDX-License-Identifier: MIT */
/*
 * Crash-safe output files: data goes to "<path>.part" and is renamed to "<path>" only
 * after a successful flush and fsync, so no reader ever sees a half-written file under
 * its final name, and a killed writer leaves the flushed part behind for recovery.
 * An existing path that is not a regular file (a device such as /dev/full or /dev/stdout,
 * a named pipe) is written in place: renaming onto it would replace the device node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracekit/common.h"

struct tk_outfile {
	FILE *stream;
	char *final_path; /* NULL for stdout and for paths written in place */
	char *temp_path;
	unsigned flags;
	int in_place; /* stream opened on an existing non-regular file: close, never rename */
};

int tk_outfile_open(tk_outfile **out, const char *path, unsigned flags)
{
	tk_outfile *of;
	size_t len;
	int fd;

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
	{
		struct stat sb;
		if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
			fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
			if (fd < 0) {
				int err = tk_error_from_errno(errno);
				free(of);
				return err;
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
	}
	len = strlen(path);
	of->final_path = strdup(path);
	of->temp_path = malloc(len + sizeof(".part"));
	if (of->final_path == NULL || of->temp_path == NULL)
		goto fail_alloc;
	memcpy(of->temp_path, path, len);
	memcpy(of->temp_path + len, ".part", sizeof(".part"));

	fd = open(of->temp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		int err = tk_error_from_errno(errno);
		free(of->final_path);
		free(of->temp_path);
		free(of);
		return err;
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
