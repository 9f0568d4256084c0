/* SPDX-License-Identifier: MIT */
/*
 * Input for the trace parser: regular files are mapped whole (the kernel maps page-cache
 * pages in batches, no copy); pipes, terminals and sockets are read through a buffer in
 * 1 MiB reads. Either way the parser sees contiguous bytes and never issues one system
 * call per event.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "traceparser/tp_internal.h"

#define TP_READ_CHUNK (1u << 20)

int tp_input_open(struct tp_input *in, const char *filename)
{
	struct stat sb;

	memset(in, 0, sizeof(*in));
	in->name = filename;
	if (strcmp(filename, "-") == 0) {
		in->fd = STDIN_FILENO;
	} else {
		in->fd = open(filename, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0)
			return -1;
		in->own_fd = 1;
	}
	if (fstat(in->fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    (uint64_t)sb.st_size <= (uint64_t)SIZE_MAX) {
		off_t here = lseek(in->fd, 0, SEEK_CUR);
		void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, in->fd, 0);
		if (m != MAP_FAILED && here >= 0 && here <= sb.st_size) {
			madvise(m, (size_t)sb.st_size, MADV_SEQUENTIAL);
			in->map = m;
			in->map_len = (size_t)sb.st_size;
			in->pos = (size_t)here;
			in->end = in->map_len;
			in->eof = 1;
			in->offset = (uint64_t)here;
			return 0;
		}
		if (m != MAP_FAILED)
			munmap(m, (size_t)sb.st_size);
	}
	in->cap = TP_READ_CHUNK * 2;
	in->buf = malloc(in->cap);
	if (in->buf == NULL) {
		tp_input_close(in);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void tp_input_close(struct tp_input *in)
{
	if (in->map != NULL)
		munmap((void *)in->map, in->map_len);
	free(in->buf);
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}

const unsigned char *tp_input_peek(struct tp_input *in, size_t want, size_t *avail)
{
	if (in->map != NULL) {
		*avail = in->end - in->pos;
		return in->map + in->pos;
	}
	while (in->end - in->pos < want && !in->eof) {
		ssize_t n;
		if (in->pos > 0 && in->end - in->pos + TP_READ_CHUNK > in->cap - in->pos) {
			/* Move what is left to the front; keeps the cursor 16-byte aligned when
			 * it was aligned with the file. */
			memmove(in->buf, in->buf + in->pos, in->end - in->pos);
			in->end -= in->pos;
			in->pos = 0;
		}
		if (in->cap - in->end < TP_READ_CHUNK || in->cap - in->pos < want) {
			size_t cap = in->cap;
			unsigned char *nb;
			while (cap - in->end < TP_READ_CHUNK || cap - in->pos < want)
				cap *= 2;
			nb = realloc(in->buf, cap);
			if (nb == NULL) {
				in->err = ENOMEM;
				break;
			}
			in->buf = nb;
			in->cap = cap;
		}
		n = read(in->fd, in->buf + in->end, in->cap - in->end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			in->err = errno;
			break;
		}
		if (n == 0) {
			in->eof = 1;
			break;
		}
		in->end += (size_t)n;
	}
	*avail = in->end - in->pos;
	return in->buf + in->pos;
}

void tp_input_skip(struct tp_input *in, size_t n)
{
	in->pos += n;
	in->offset += n;
}

uint64_t tp_input_remaining(const struct tp_input *in)
{
	struct stat sb;

	if (in->map != NULL)
		return in->end - in->pos;
	if (fstat(in->fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		off_t here = lseek(in->fd, 0, SEEK_CUR);
		if (here >= 0 && sb.st_size >= here)
			return (uint64_t)(sb.st_size - here) + (in->end - in->pos);
	}
	return UINT64_MAX;
}
