/* SPDX-License-Identifier: MIT */
/*
 * tb5_chunk.c: chunks, the unit of the .tb5 container: building one (compressed when asked),
 * reserving its place and writing it with pwrite() outside the lock, reading one back and
 * checking its header, checksum, padding and zstd frame (docs/tb5-format.md, "Chunks").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/uio.h>
#include <zstd.h>

#include "common/tk_crc32c.h"
#include "tb5/tb5_internal.h"

/* ---- chunks ---------------------------------------------------------------------------- */

void tk__tb5_chunk_header(unsigned char *hd, uint16_t kind, uint16_t flags, uint32_t id, uint32_t stored,
			 uint32_t raw, uint32_t count, uint64_t first, uint32_t payload_crc)
{
	tb5_put32(hd, CHUNK_MAGIC);
	tb5_put16(hd + 4, kind);
	tb5_put16(hd + 6, flags);
	tb5_put32(hd + 8, id);
	tb5_put32(hd + 12, stored);
	tb5_put32(hd + 16, raw);
	tb5_put32(hd + 20, count);
	tb5_put64(hd + 24, first);
	tb5_put32(hd + 32, payload_crc);
	tb5_put32(hd + 36, tk__crc32c(0, hd, 36));
}

TBRW_U32 tk__tb5_pwrite_all(struct tb5_handle *h, const struct iovec *iov, int n_iov, uint64_t off)
{
	struct iovec v[4];
	ssize_t w;
	int i;

	memcpy(v, iov, (size_t)n_iov * sizeof *v);
	i = 0;
	while (i < n_iov) {
		w = pwritev(h->fd, v + i, n_iov - i, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return tk__tb5_fail(tk__tb5_errno_code(errno), "%s: write failed at byte offset %llu: %s", h->part_path,
					(unsigned long long)off, strerror(errno));
		}
		if (w == 0)
			return tk__tb5_fail(TBRW_DISK_FULL, "%s: write failed at byte offset %llu: no space", h->part_path,
					(unsigned long long)off);
		off += (uint64_t)w;
		while (i < n_iov && (size_t)w >= v[i].iov_len) {
			w -= (ssize_t)v[i].iov_len;
			i++;
		}
		if (i < n_iov) {
			v[i].iov_base = (char *)v[i].iov_base + w;
			v[i].iov_len -= (size_t)w;
		}
	}
	return VT_SUCCESS;
}

/* Builds the chunk (compressing data chunks when asked); no shared state is touched. */
TBRW_U32 tk__tb5_chunk_prepare(struct tb5_handle *h, uint16_t kind, uint32_t id, uint64_t first, uint32_t count,
			      const void *payload, size_t len, struct chunk_out *c)
{
	size_t stored_len = len;
	uint16_t flags = 0;

	c->stored = payload;
	c->zbuf = NULL;
	if (len > TB5_MAX_CHUNK_RAW)
		return tk__tb5_fail(TBRW_TOO_BIG, "%s: chunk of %zu bytes exceeds the format's limit", h->path, len);
	if (h->compress && kind == CK_DATA && len > 64) {
		size_t bound = ZSTD_compressBound(len);
		c->zbuf = malloc(bound);
		if (c->zbuf == NULL)
			return tk__tb5_fail(TBRW_NO_MEMORY, "%s: out of memory compressing a chunk", h->path);
		size_t z = ZSTD_compress(c->zbuf, bound, payload, len, 1);
		if (!ZSTD_isError(z) && z < len) {
			c->stored = c->zbuf;
			stored_len = z;
			flags = CK_FLAG_ZSTD;
		}
	}
	tk__tb5_chunk_header(c->hd, kind, flags, id, (uint32_t)stored_len, (uint32_t)len, count, first,
		     tk__crc32c(0, c->stored, stored_len));
	c->ref = (struct tb5_chunk_ref){.offset = 0, .first = first, .count = count, .raw_len = (uint32_t)len,
					.stored_len = (uint32_t)stored_len, .kind = kind, .flags = flags, .id = id};
	return VT_SUCCESS;
}

/* Takes the chunk's place at the end of the file and records it (h->lock held). */
TBRW_U32 tk__tb5_chunk_place_locked(struct tb5_handle *h, struct tb5_obj *obj, struct chunk_out *c)
{
	if (h->write_error != VT_SUCCESS)
		return tk__tb5_fail(h->write_error, "%s: an earlier write failed", h->part_path);
	c->ref.offset = h->end;
	if (c->ref.kind != CK_DROP && tk__tb5_push_ref(&h->chunks, &h->n_chunks, &h->cap_chunks, &c->ref) != 0)
		return tk__tb5_fail(TBRW_NO_MEMORY, "%s: out of memory", h->path);
	if (obj != NULL && c->ref.kind != CK_DROP && tk__tb5_push_ref(&obj->chunks, &obj->n_chunks, &obj->cap_chunks, &c->ref) != 0) {
		h->n_chunks--;
		return tk__tb5_fail(TBRW_NO_MEMORY, "%s: out of memory", h->path);
	}
	h->end += TB5_CHUNK_HEADER_SIZE + tb5_pad8(c->ref.stored_len);
	return VT_SUCCESS;
}

/* Writes a placed chunk (without the lock); a failure is sticky: the file cannot be completed. */
TBRW_U32 tk__tb5_chunk_store(struct tb5_handle *h, struct chunk_out *c)
{
	static const unsigned char zeros[8];
	struct iovec iov[3];
	TBRW_U32 rc;

	iov[0].iov_base = c->hd;
	iov[0].iov_len = sizeof c->hd;
	iov[1].iov_base = (void *)c->stored;
	iov[1].iov_len = c->ref.stored_len;
	iov[2].iov_base = (void *)zeros;
	iov[2].iov_len = tb5_pad8(c->ref.stored_len) - c->ref.stored_len;
	rc = tk__tb5_pwrite_all(h, iov, iov[2].iov_len ? 3 : 2, c->ref.offset);
	free(c->zbuf);
	c->zbuf = NULL;
	if (rc != VT_SUCCESS) {
		pthread_mutex_lock(&h->lock);
		if (h->write_error == VT_SUCCESS)
			h->write_error = rc;
		pthread_mutex_unlock(&h->lock);
	}
	return rc;
}

TBRW_U32 tk__tb5_write_chunk(struct tb5_handle *h, struct tb5_obj *obj, uint16_t kind, uint32_t id, uint64_t first,
			 uint32_t count, const void *payload, size_t len)
{
	struct chunk_out c;
	TBRW_U32 rc;

	rc = tk__tb5_chunk_prepare(h, kind, id, first, count, payload, len, &c);
	if (rc == VT_SUCCESS) {
		pthread_mutex_lock(&h->lock);
		rc = tk__tb5_chunk_place_locked(h, obj, &c);
		pthread_mutex_unlock(&h->lock);
	}
	if (rc != VT_SUCCESS) {
		free(c.zbuf);
		return rc;
	}
	return tk__tb5_chunk_store(h, &c);
}

TBRW_U32 tk__tb5_pread_all(struct tb5_handle *h, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(h->fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return tk__tb5_fail(TBRW_IO_ERROR, "%s: read failed at byte offset %llu: %s", h->path,
					(unsigned long long)(off + done), strerror(errno));
		}
		if (r == 0)
			return tk__tb5_fail(TBRW_FILE_TRUNCATED, "%s: file ends at byte offset %llu, inside a chunk",
					h->path, (unsigned long long)(off + done));
		done += (size_t)r;
	}
	return VT_SUCCESS;
}

/* Only data chunks with a payload are ever compressed (chunk_prepare): the zstd flag on any
 * other chunk (an end mark, say) is damage, and would have the reader decompress nothing
 * into no buffer. */
static int zstd_flag_ok(const struct tb5_chunk_ref *c)
{
	return !(c->flags & CK_FLAG_ZSTD) || (c->kind == CK_DATA && c->stored_len > 0 && c->raw_len > 0);
}

/* Checks a chunk header at hd (from offset off) against what the directory says. */
static TBRW_U32 check_header(struct tb5_handle *h, const unsigned char *hd, const struct tb5_chunk_ref *c)
{
	if (tb5_get32(hd) != CHUNK_MAGIC || tb5_get32(hd + 36) != tk__crc32c(0, hd, 36))
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: bad chunk header", h->path,
				(unsigned long long)c->offset);
	if (tb5_get16(hd + 4) != c->kind || tb5_get32(hd + 8) != c->id || tb5_get32(hd + 12) != c->stored_len ||
	    tb5_get32(hd + 16) != c->raw_len || tb5_get32(hd + 20) != c->count || tb5_get64(hd + 24) != c->first ||
	    tb5_get16(hd + 6) != c->flags)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu disagrees with the directory",
				h->path, (unsigned long long)c->offset);
	return VT_SUCCESS;
}

/* Damage found in mapped bytes may be the file shrinking under the mapping: say so then. */
static TBRW_U32 shrunk_or(struct tb5_handle *h, TBRW_U32 rc)
{
	TBRW_U32 t = tk__tb5_map_check(h);

	return t != VT_SUCCESS ? t : rc;
}

TBRW_U32 tk__tb5_read_chunk(struct tb5_handle *h, const struct tb5_chunk_ref *c, unsigned char **scratch,
			size_t *scratch_cap, const unsigned char **out)
{
	const unsigned char *hd, *payload, *pad_bytes;
	unsigned char hbuf[TB5_CHUNK_HEADER_SIZE];
	/* the payload and the zero bytes that pad it to 8: the CRC does not cover the padding */
	size_t span = tb5_pad8(c->stored_len), pad = span - c->stored_len;
	size_t need = span + (c->flags & CK_FLAG_ZSTD ? c->raw_len : 0);
	uint32_t crc;
	TBRW_U32 rc;

	if (c->offset + TB5_CHUNK_HEADER_SIZE + span > h->file_size && h->map != NULL)
		return tk__tb5_fail(TBRW_FILE_TRUNCATED, "%s: chunk at byte offset %llu runs past the end of the file",
				h->path, (unsigned long long)c->offset);
	if (h->map != NULL && c->offset + TB5_CHUNK_HEADER_SIZE + span <= h->map_len) {
		hd = h->map + c->offset;
		payload = hd + TB5_CHUNK_HEADER_SIZE;
		need -= span;
	} else {
		rc = tk__tb5_pread_all(h, hbuf, sizeof hbuf, c->offset);
		if (rc != VT_SUCCESS)
			return rc;
		hd = hbuf;
		payload = NULL;
	}
	rc = check_header(h, hd, c);
	if (rc != VT_SUCCESS)
		return shrunk_or(h, rc);
	if (!zstd_flag_ok(c))
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: a %s chunk of %u bytes cannot be "
						   "compressed",
				h->path, (unsigned long long)c->offset, c->kind == CK_DATA ? "data" : "non-data",
				c->raw_len);
	if (need > *scratch_cap) {
		unsigned char *ns = realloc(*scratch, need);
		if (ns == NULL)
			return tk__tb5_fail(TBRW_NO_MEMORY, "%s: out of memory reading a chunk", h->path);
		*scratch = ns;
		*scratch_cap = need;
	}
	if (payload == NULL && span == 0) {
		/* an empty payload (an end mark): never a NULL pointer, callers add 0 to it */
		static const unsigned char none[8];
		payload = none;
	} else if (payload == NULL) {
		rc = tk__tb5_pread_all(h, *scratch, span, c->offset + TB5_CHUNK_HEADER_SIZE);
		if (rc != VT_SUCCESS)
			return rc;
		payload = *scratch;
	}
	crc = tk__crc32c(0, payload, c->stored_len);
	if (crc != tb5_get32(hd + 32))
		return shrunk_or(h, tk__tb5_fail(TBRW_FILE_CORRUPT,
				"%s: chunk at byte offset %llu: checksum mismatch in its %u-byte payload (stored 0x%08x, "
				"computed 0x%08x)",
				h->path, (unsigned long long)c->offset, c->stored_len, tb5_get32(hd + 32), crc));
	pad_bytes = pad > 0 ? payload + c->stored_len : NULL;
	for (size_t i = 0; i < pad; i++)
		if (pad_bytes[i] != 0)
			return shrunk_or(h, tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: padding byte at byte offset %llu "
							   "is not zero",
					h->path, (unsigned long long)c->offset,
					(unsigned long long)(c->offset + TB5_CHUNK_HEADER_SIZE + c->stored_len + i)));
	if (c->flags & CK_FLAG_ZSTD) {
		unsigned char *dst = *scratch + (payload == *scratch ? span : 0);
		size_t z = ZSTD_decompress(dst, c->raw_len, payload, c->stored_len);
		if (ZSTD_isError(z) || z != c->raw_len)
			return shrunk_or(h, tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: compressed payload does not "
							   "decompress to %u bytes",
					h->path, (unsigned long long)c->offset, c->raw_len));
		payload = dst;
	}
	/* a payload read as zeros from a file that shrank must not pass for data */
	rc = tk__tb5_map_check(h);
	if (rc != VT_SUCCESS)
		return rc;
	*out = payload;
	return VT_SUCCESS;
}

/* Validates a chunk header read at off; fills c. */
TBRW_U32 tk__tb5_parse_chunk_header(struct tb5_handle *h, const unsigned char *hd, uint64_t off,
				   struct tb5_chunk_ref *c)
{
	if (tb5_get32(hd) != CHUNK_MAGIC)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: no chunk at byte offset %llu (bad magic)", h->path,
				(unsigned long long)off);
	if (tb5_get32(hd + 36) != tk__crc32c(0, hd, 36))
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk header at byte offset %llu: checksum mismatch", h->path,
				(unsigned long long)off);
	c->offset = off;
	c->kind = tb5_get16(hd + 4);
	c->flags = tb5_get16(hd + 6);
	c->id = tb5_get32(hd + 8);
	c->stored_len = tb5_get32(hd + 12);
	c->raw_len = tb5_get32(hd + 16);
	c->count = tb5_get32(hd + 20);
	c->first = tb5_get64(hd + 24);
	if (c->raw_len > TB5_MAX_CHUNK_RAW || c->stored_len > TB5_MAX_CHUNK_RAW || (c->flags & ~CK_FLAG_ZSTD) != 0 ||
	    (!(c->flags & CK_FLAG_ZSTD) && c->stored_len != c->raw_len))
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu has impossible sizes", h->path,
				(unsigned long long)off);
	if (!zstd_flag_ok(c))
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: a %s chunk of %u bytes cannot be "
						   "compressed",
				h->path, (unsigned long long)off, c->kind == CK_DATA ? "data" : "non-data", c->raw_len);
	return VT_SUCCESS;
}
