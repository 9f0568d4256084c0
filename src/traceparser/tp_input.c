/* SPDX-License-Identifier: MIT */
/*
 * Input for the trace parser. Bytes come through one buffer filled by reads of 256 KiB, so
 * the parser sees contiguous bytes and never issues one system call per event. Reading
 * into a buffer that stays in the L2 cache measured about 5x faster than walking a memory
 * map of the same cached file (15 vs 2.7 GB/s on the project's machines: the map's page
 * walks dominate), so files are not mapped.
 *
 * For the events of a large regular file, a reader thread fills a ring of chunk buffers
 * while the caller's thread parses: the kernel's copy (a quarter of the time otherwise)
 * then overlaps with the callbacks. Callbacks still all run on the caller's thread; the
 * reader thread exists only inside traceparser(). Pipes stay synchronous so that a live
 * stream is delivered as it arrives.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "traceparser/tp_internal.h"

#define TP_READ_CHUNK (256u << 10)
#define TP_ASYNC_BUFS 8
/* The reader, waiting for room, is woken when this many chunks are free: it then reads them
 * all before it sleeps again. Woken for each chunk, it slept and woke 600 times a 160 MB
 * file, and the wake-ups took 3 % of the parsing thread's time. */
#define TP_ASYNC_WAKE 4
#define TP_ASYNC_MIN_BYTES (4u << 20) /* smaller files are not worth a thread */

struct tp_async {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int fd;
	unsigned char *bufs[TP_ASYNC_BUFS];
	size_t len[TP_ASYNC_BUFS];
	/* Chunks filled / given back, and the reader's end: written under mu, also read without
	 * it by the side that spins before it sleeps (see spin_until). */
	_Atomic unsigned produced, consumed;
	atomic_int done;             /* the reader has stopped: EOF or error */
	int err;                     /* errno of a failed read */
	atomic_int stop;             /* the consumer is closing */
	int reader_waits;            /* the reader sleeps for room (under mu) */
	unsigned cur;                /* chunk the consumer is on (valid when have_cur) */
	int have_cur;
	size_t cur_pos;
};

int tk__tp_input_open(struct tp_input *in, const char *filename)
{
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
	{
		struct stat sb;
		in->may_wait = fstat(in->fd, &sb) != 0 || !S_ISREG(sb.st_mode);
	}
	in->cap = TP_READ_CHUNK * 2;
	in->buf = malloc(in->cap);
	if (in->buf == NULL) {
		tk__tp_input_close(in);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static void async_stop(struct tp_async *a)
{
	unsigned i;

	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->cv);
	pthread_mutex_destroy(&a->mu);
	for (i = 0; i < TP_ASYNC_BUFS; i++)
		free(a->bufs[i]);
	free(a);
}

void tk__tp_input_close(struct tp_input *in)
{
	if (in->async != NULL)
		async_stop(in->async);
	free(in->buf);
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}

/* Reads until the chunk is full, EOF or an error; returns bytes read or -errno. */
static ssize_t read_full(int fd, unsigned char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * Waits up to about 50 microseconds for the other side by polling: the reader and the
 * parser hand a chunk over every few tens of microseconds, and waking a thread that slept
 * on the condition variable costs as much on a virtual machine, and sometimes far more.
 */
static int spin_until(struct tp_async *a, int for_space)
{
	for (unsigned i = 0; i < 4096; i++) {
		unsigned p = atomic_load_explicit(&a->produced, memory_order_acquire);
		unsigned c = atomic_load_explicit(&a->consumed, memory_order_acquire);
		if (atomic_load_explicit(&a->stop, memory_order_relaxed) ||
		    (for_space ? p - c < TP_ASYNC_BUFS : p != c || atomic_load_explicit(&a->done, memory_order_acquire)))
			return 1;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	return 0;
}

static void *async_reader(void *arg)
{
	struct tp_async *a = arg;

	for (;;) {
		unsigned slot;
		ssize_t n;

		/* No spinning for space: with the chunks ahead of the parser the reader can wait
		 * for a wake-up without delaying anyone, and a spin here took a fifth of a CPU
		 * from everything else on the machine while any exporter read a large file. */
		pthread_mutex_lock(&a->mu);
		while (!a->stop && a->produced - a->consumed >= TP_ASYNC_BUFS) {
			a->reader_waits = 1;
			pthread_cond_wait(&a->cv, &a->mu);
			a->reader_waits = 0;
		}
		if (a->stop) {
			pthread_mutex_unlock(&a->mu);
			return NULL;
		}
		slot = a->produced % TP_ASYNC_BUFS;
		pthread_mutex_unlock(&a->mu);

		/* Full chunks are multiples of 16 bytes, so no slot straddles two chunks. */
		n = read_full(a->fd, a->bufs[slot], TP_READ_CHUNK);

		pthread_mutex_lock(&a->mu);
		if (n < 0) {
			a->err = (int)-n;
			a->done = 1;
		} else {
			a->len[slot] = (size_t)n;
			if (n > 0)
				a->produced++;
			if ((size_t)n < TP_READ_CHUNK)
				a->done = 1;
		}
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (a->done)
			return NULL;
	}
}

int tk__tp_input_start_async(struct tp_input *in)
{
	struct tp_async *a;
	struct stat sb;
	off_t here;
	unsigned i;

	if (in->async != NULL || fstat(in->fd, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	here = lseek(in->fd, 0, SEEK_CUR);
	if (here < 0 || sb.st_size - here < (off_t)TP_ASYNC_MIN_BYTES)
		return 0;
	/* Whole slots in the buffer first: read the rest of a partial slot now. */
	if ((in->end - in->pos) % 16 != 0) {
		size_t missing = 16 - (in->end - in->pos) % 16;
		ssize_t n;
		if (in->cap - in->end < missing)
			return 0; /* cannot happen after tk__tp_input_align(); stay synchronous */
		n = read_full(in->fd, in->buf + in->end, missing);
		if (n > 0)
			in->end += (size_t)n;
		if (n != (ssize_t)missing) {
			if (n < 0)
				in->err = (int)-n;
			in->eof = 1;
			return 0; /* the event loop reports the truncated slot */
		}
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return 0;
	for (i = 0; i < TP_ASYNC_BUFS; i++) {
		a->bufs[i] = aligned_alloc(64, TP_READ_CHUNK);
		if (a->bufs[i] == NULL)
			goto fail_alloc;
	}
	a->fd = in->fd;
	if (pthread_mutex_init(&a->mu, NULL) != 0)
		goto fail_alloc;
	if (pthread_cond_init(&a->cv, NULL) != 0)
		goto fail_mutex;
	if (pthread_create(&a->thread, NULL, async_reader, a) != 0)
		goto fail_cond;
	pthread_setname_np(a->thread, "tk-reader");
	in->async = a;
	return 0;

fail_cond:
	pthread_cond_destroy(&a->cv);
fail_mutex:
	pthread_mutex_destroy(&a->mu);
fail_alloc:
	for (i = 0; i < TP_ASYNC_BUFS; i++)
		free(a->bufs[i]);
	free(a);
	return 0; /* synchronous reading still works */
}

/* Async mode: bytes of the read buffer first, then the chunks of the reader thread. */
static unsigned char *async_peek(struct tp_input *in, size_t *avail)
{
	struct tp_async *a = in->async;

	if (in->end > in->pos) {
		*avail = in->end - in->pos;
		return in->buf + in->pos;
	}
	if (a->have_cur && a->cur_pos < a->len[a->cur % TP_ASYNC_BUFS]) {
		*avail = a->len[a->cur % TP_ASYNC_BUFS] - a->cur_pos;
		return a->bufs[a->cur % TP_ASYNC_BUFS] + a->cur_pos;
	}
	pthread_mutex_lock(&a->mu);
	if (a->have_cur) {
		a->consumed++;
		a->have_cur = 0;
		/* (by the time the ring is empty, at the latest: no wait below meets a sleeping reader) */
		if (a->reader_waits && TP_ASYNC_BUFS - (a->produced - a->consumed) >= TP_ASYNC_WAKE)
			pthread_cond_broadcast(&a->cv);
	}
	if (a->produced == a->consumed && !a->done) {
		pthread_mutex_unlock(&a->mu);
		spin_until(a, 0);
		pthread_mutex_lock(&a->mu);
	}
	while (a->produced == a->consumed && !a->done)
		pthread_cond_wait(&a->cv, &a->mu);
	if (a->produced == a->consumed) {
		in->err = a->err;
		in->eof = 1;
		pthread_mutex_unlock(&a->mu);
		*avail = 0;
		return in->buf;
	}
	a->cur = a->consumed;
	a->have_cur = 1;
	a->cur_pos = 0;
	pthread_mutex_unlock(&a->mu);
	*avail = a->len[a->cur % TP_ASYNC_BUFS];
	return a->bufs[a->cur % TP_ASYNC_BUFS];
}

unsigned char *tk__tp_input_peek(struct tp_input *in, size_t want, size_t *avail)
{
	if (in->async != NULL)
		return async_peek(in, avail);
	while (in->end - in->pos < want && !in->eof) {
		ssize_t n;
		if (in->pos > 0 && in->end - in->pos + TP_READ_CHUNK > in->cap - in->pos) {
			/* Move what is left to the front (keeps slots 16-byte aligned, see
			 * tk__tp_input_align()). */
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
		if (in->may_wait && in->on_wait != NULL) {
			/* nothing ready on a pipe: the caller may act before we wait (a printer
			 * flushes, so that a live trace shows up as it comes) */
			struct pollfd pfd = { .fd = in->fd, .events = POLLIN };
			if (poll(&pfd, 1, 0) == 0)
				in->on_wait(in->on_wait_ud);
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

void tk__tp_input_align(struct tp_input *in)
{
	if (in->pos != 0) {
		memmove(in->buf, in->buf + in->pos, in->end - in->pos);
		in->end -= in->pos;
		in->pos = 0;
	}
}

void tk__tp_input_skip(struct tp_input *in, size_t n)
{
	if (in->async != NULL && in->end == in->pos)
		in->async->cur_pos += n;
	else
		in->pos += n;
	in->offset += n;
}

uint64_t tk__tp_input_remaining(const struct tp_input *in)
{
	struct stat sb;

	if (fstat(in->fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		off_t here = lseek(in->fd, 0, SEEK_CUR);
		if (here >= 0 && sb.st_size >= here)
			return (uint64_t)(sb.st_size - here) + (in->end - in->pos);
	}
	return UINT64_MAX;
}
