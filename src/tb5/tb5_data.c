/* SPDX-License-Identifier: MIT */
/*
 * tb5_data.c: stream data: appending records (whole, in runs, or piece by piece in the
 * chapter 6 style), appending a file of records, and enumerating them chunk by chunk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb5/tb5_items.h"

/* ---- data ------------------------------------------------------------------------------------- */

static size_t chunk_records(uint32_t rec)
{
	size_t n = TB5_CHUNK_TARGET / rec;
	return n ? n : 1;
}

TBRW_U32 tk__tb5_flush_data(struct tb5_handle *h, struct tb5_stream *st, struct tb5_obj *o)
{
	TBRW_U32 rc;
	size_t n = 0;

	if (o->buf_len == 0)
		return VT_SUCCESS;
	n = o->buf_len / st->record_size;
	rc = tk__tb5_write_chunk(h, o, CK_DATA, o->id, o->total, (uint32_t)n, o->buf, o->buf_len);
	if (rc == VT_SUCCESS) {
		o->total += n;
		o->buf_len = 0;
	}
	return rc;
}

/* Appends whole records. */
static TBRW_U32 append_records(struct tb5_handle *h, struct tb5_stream *st, struct tb5_obj *o, const unsigned char *p,
			       size_t len)
{
	size_t chunk_bytes = chunk_records(st->record_size) * st->record_size;
	TBRW_U32 rc;

	if (o->buf_cap < chunk_bytes) {
		unsigned char *nb = realloc(o->buf, chunk_bytes);
		if (nb == NULL)
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
		o->buf = nb;
		o->buf_cap = chunk_bytes;
	}
	while (len > 0) {
		if (o->buf_len == 0 && len >= chunk_bytes) {
			size_t n = chunk_bytes / st->record_size;
			rc = tk__tb5_write_chunk(h, o, CK_DATA, o->id, o->total, (uint32_t)n, p, chunk_bytes);
			if (rc != VT_SUCCESS)
				return rc;
			o->total += n;
			p += chunk_bytes;
			len -= chunk_bytes;
			continue;
		}
		size_t k = chunk_bytes - o->buf_len;
		if (k > len)
			k = len;
		memcpy(o->buf + o->buf_len, p, k);
		o->buf_len += k;
		p += k;
		len -= k;
		if (o->buf_len == chunk_bytes) {
			rc = tk__tb5_flush_data(h, st, o);
			if (rc != VT_SUCCESS)
				return rc;
		}
	}
	return VT_SUCCESS;
}

TBRW_U32 TBRW_add_data(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_data_entry, void *data_entry)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	struct tb5_obj *o = NULL;

	CHECK_HANDLE(h);
	if (data_entry == NULL || size_of_data_entry == 0)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_add_data: no data");
	st = stream < TB5_MAX_STREAMS ? tk__tb5_stream_at(h, stream, 0) : NULL;
	if (st == NULL)
		return tk__tb5_fail(TBRW_INVALID_STREAM, "%s: TBRW_add_data: stream %u does not exist", h->path, stream);
	o = st->data_obj;
	if (o == NULL || o->state != OBJ_WRITING)
		return tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_add_data: the data section of stream %u is not open "
							"for writing",
				h->path, stream);
	if (st->piece_size != NULL) {
		/* chapter 6 style: one descriptor entry per call, in descriptor order */
		if (st->partial_len == 0 && size_of_data_entry % st->record_size == 0)
			goto whole;
		if (size_of_data_entry != st->piece_size[st->piece_next])
			return tk__tb5_fail(TBRW_RECORD_SIZE_MISMATCH, "%s: stream %u: TBRW_add_data of %u bytes, expected "
								   "%u (descriptor entry %u) or whole %u-byte records",
					h->path, stream, size_of_data_entry, st->piece_size[st->piece_next],
					st->piece_next, st->record_size);
		if (st->partial == NULL && (st->partial = malloc(st->record_size)) == NULL)
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
		memcpy(st->partial + st->partial_len, data_entry, size_of_data_entry);
		st->partial_len += size_of_data_entry;
		if (++st->piece_next == st->n_desc) {
			st->piece_next = 0;
			st->partial_len = 0;
			return append_records(h, st, o, st->partial, st->record_size);
		}
		return VT_SUCCESS;
	}
whole:
	if (size_of_data_entry % st->record_size != 0)
		return tk__tb5_fail(TBRW_RECORD_SIZE_MISMATCH, "%s: stream %u: TBRW_add_data of %u bytes; the data "
							   "descriptor makes records of %u bytes",
				h->path, stream, size_of_data_entry, st->record_size);
	return append_records(h, st, o, data_entry, size_of_data_entry);
}

TBRW_U32 TBRW_add_data_from_file(TBRW_PTR ptr, TBRW_U32 stream, TBRW_CHAR *filename)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	unsigned char *buf;
	size_t len, cap;
	uint64_t size = 0, done = 0;
	struct stat sb;
	char *path;
	TBRW_U32 rc = VT_SUCCESS;
	int fd;

	CHECK_HANDLE(h);
	if (filename == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_add_data_from_file: no file name");
	st = stream < TB5_MAX_STREAMS ? tk__tb5_stream_at(h, stream, 0) : NULL;
	if (st == NULL || st->data_obj == NULL || st->data_obj->state != OBJ_WRITING)
		return tk__tb5_fail(st == NULL ? TBRW_INVALID_STREAM : TBRW_CALL_OUT_OF_ORDER,
				"%s: TBRW_add_data_from_file: the data section of stream %u is not open for writing",
				h->path, stream);
	if (st->partial_len != 0)
		return tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_add_data_from_file: stream %u has a record half "
							"written by TBRW_add_data (%u of %u bytes)",
				h->path, stream, st->partial_len, st->record_size);
	path = tk__tb5_wcs_to_utf8_alloc(filename, &len);
	if (path == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_add_data_from_file: invalid file name");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = tk__tb5_fail(tk__tb5_errno_code(errno), "%s: cannot open: %s", path, strerror(errno));
		free(path);
		return rc;
	}
	/* A failed call must append nothing: the size is checked before the first record goes in,
	 * which needs a file whose size is known. */
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		rc = tk__tb5_fail(TBRW_INVALID_PARAMETER, "%s: not a regular file (its size must be known before anything "
						      "is appended)",
			      path);
	} else if ((size = (uint64_t)sb.st_size) % st->record_size != 0) {
		rc = tk__tb5_fail(TBRW_RECORD_SIZE_MISMATCH, "%s: %llu bytes, not a whole number of %u-byte records (%llu "
							 "bytes too many); nothing was appended",
			      path, (unsigned long long)size, st->record_size,
			      (unsigned long long)(size % st->record_size));
	}
	if (rc != VT_SUCCESS) {
		close(fd);
		free(path);
		return rc;
	}
	cap = chunk_records(st->record_size) * st->record_size;
	buf = malloc(cap);
	if (buf == NULL) {
		close(fd);
		free(path);
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	while (done < size && rc == VT_SUCCESS) {
		size_t want = size - done < cap ? (size_t)(size - done) : cap, fill = 0;
		while (fill < want) {
			ssize_t r = pread(fd, buf + fill, want - fill, (off_t)(done + fill));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				rc = tk__tb5_fail(TBRW_IO_ERROR, "%s: read failed at byte offset %llu: %s", path,
					      (unsigned long long)(done + fill),
					      r < 0 ? strerror(errno) : "the file became shorter");
				break;
			}
			fill += (size_t)r;
		}
		if (rc == VT_SUCCESS)
			rc = append_records(h, st, st->data_obj, buf, want);
		done += want;
	}
	free(buf);
	close(fd);
	free(path);
	return rc;
}

/* Enumerates the records of a data-like object (data section or bind results). */
TBRW_U32 tk__tb5_enumerate_records(struct tb5_handle *h, struct tb5_obj *o, uint32_t rec, uint64_t start,
			       TBRW_U32 (*fn)(void *ctx, unsigned char *p, uint64_t first, uint32_t n), void *ctx)
{
	unsigned char *scratch = NULL;
	size_t scratch_cap = 0, lo = 0, hi = o->n_chunks;
	const unsigned char *p;
	TBRW_U32 rc = VT_SUCCESS;

	/* binary search: last data chunk with first <= start */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (o->chunks[mid].kind == CK_DATA && o->chunks[mid].first + o->chunks[mid].count <= start)
			lo = mid + 1;
		else if (o->chunks[mid].kind != CK_DATA && o->chunks[mid].first <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < o->n_chunks; i++) {
		const struct tb5_chunk_ref *c = &o->chunks[i];
		uint64_t skip;
		if (c->kind != CK_DATA || c->first + c->count <= start)
			continue;
		if ((uint64_t)c->count * rec != c->raw_len) {
			rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: data chunk at byte offset %llu holds %u bytes, not %u "
							 "records of %u bytes",
				      h->path, (unsigned long long)c->offset, c->raw_len, c->count, rec);
			break;
		}
		rc = tk__tb5_read_chunk(h, c, &scratch, &scratch_cap, &p);
		if (rc != VT_SUCCESS)
			break;
		skip = start > c->first ? start - c->first : 0;
		rc = fn(ctx, (unsigned char *)p + skip * rec, c->first + skip, (uint32_t)(c->count - skip));
		/* the file shrank while the callback read the records: they were partly zeros */
		if (tk__tb5_map_check(h) != VT_SUCCESS) {
			rc = TBRW_FILE_TRUNCATED;
			break;
		}
		if (rc == FALSE) {
			rc = VT_SUCCESS;
			break;
		}
		if (rc != TRUE)
			break;
		rc = VT_SUCCESS;
	}
	free(scratch);
	return rc;
}

struct data_ctx {
	TBRW_DATA_CALLBACK *cb;
	void *user;
	uint32_t rec;
};

static TBRW_U32 data_fn(void *ctx, unsigned char *p, uint64_t first, uint32_t n)
{
	struct data_ctx *c = ctx;
	TBRW_U32 r = c->cb(p, n * c->rec, n, c->user);
	(void)first;
	return r == TRUE || r == FALSE ? r : tk__tb5_callback_error(r, "TBRW_enumerate_data");
}

TBRW_U32 TBRW_enumerate_data(TBRW_PTR ptr, TBRW_U32 stream, TBRW_DATA_CALLBACK *callback_func, void *user_ptr,
			     TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct data_ctx ctx;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_data: no callback");
	if (stream >= TB5_MAX_STREAMS || tk__tb5_stream_at(h, stream, 0) == NULL)
		return tk__tb5_fail(TBRW_INVALID_STREAM, "%s: TBRW_enumerate_data: stream %u does not exist", h->path, stream);
	pthread_mutex_lock(&h->lock);
	o = tk__tb5_obj_find(h, OBJ_STREAM_SEC(stream, TBRW_DATA_SECTION));
	pthread_mutex_unlock(&h->lock);
	if (o == NULL || o->readers <= 0)
		return tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_enumerate_data: the data section of stream %u is not "
							"open for reading (TBRW_reading_stream_section)",
				h->path, stream);
	rc = tk__tb5_stream_layout(h, stream);
	if (rc != VT_SUCCESS)
		return rc;
	ctx.cb = callback_func;
	ctx.user = user_ptr;
	ctx.rec = h->streams[stream]->record_size;
	return tk__tb5_enumerate_records(h, o, ctx.rec, start_index, data_fn, &ctx);
}
