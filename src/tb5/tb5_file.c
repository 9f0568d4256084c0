/* SPDX-License-Identifier: MIT */
/*
 * tb5_file.c: the .tb5 container: header, CRC32C-checked chunks, the directory and trailer,
 * strings, open/close/abort/verify and the salvage of files whose writer died.
 *
 * Layout (little-endian; docs/tb5-format.md is the full specification):
 *   header  64 bytes: "TKTB5\0\r\n", u32 version (16), u32 header size (64),
 *           u32 chunk target, u32 flags, zeros, u32 CRC32C of bytes 0..59 at 60
 *   chunks  40-byte header: u32 "TBCK", u16 kind, u16 flags (1 = zstd), u32 object id,
 *           u32 stored length, u32 raw length, u32 record count, u64 first (record index,
 *           byte offset in the object, string index or total), u32 payload CRC32C,
 *           u32 CRC32C of header bytes 0..35; then the payload, padded to 8 bytes
 *   directory  a chunk (kind 5) listing every live chunk: u64 count, then 40 bytes each
 *   trailer 32 bytes: "TB5TRAIL", u64 directory offset, u64 file size, u32 0,
 *           u32 CRC32C of bytes 0..27
 * A file without a valid trailer is one whose writer died: tk_tbrw_recover() rebuilds the
 * directory from the chunks in order, up to the first one that fails its checks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#include "common/tk_crc32c.h"
#include "tracekit/common.h"
#include "tb5/tb5_internal.h"

static const unsigned char header_magic[8] = {'T', 'K', 'T', 'B', '5', 0, '\r', '\n'};
static const unsigned char trailer_magic[8] = {'T', 'B', '5', 'T', 'R', 'A', 'I', 'L'};
#define CHUNK_MAGIC 0x4B434254u /* "TBCK" */
#define DIR_ENTRY_SIZE 40u

static size_t pad8(size_t n)
{
	return (n + 7u) & ~(size_t)7u;
}

/* ---- objects --------------------------------------------------------------------------- */

struct tb5_obj *tb5_obj_find(struct tb5_handle *h, uint32_t id)
{
	for (struct tb5_obj *o = h->objs; o != NULL; o = o->next)
		if (o->id == id)
			return o;
	return NULL;
}

struct tb5_obj *tb5_obj_get(struct tb5_handle *h, uint32_t id)
{
	struct tb5_obj *o = tb5_obj_find(h, id);

	if (o != NULL)
		return o;
	o = calloc(1, sizeof *o);
	if (o == NULL)
		return NULL;
	o->id = id;
	o->next = h->objs;
	h->objs = o;
	return o;
}

static void obj_reset(struct tb5_obj *o)
{
	free(o->chunks);
	free(o->buf);
	free(o->meta);
	o->chunks = NULL;
	o->n_chunks = o->cap_chunks = 0;
	o->buf = NULL;
	o->buf_len = o->buf_cap = 0;
	o->meta = NULL;
	o->meta_len = 0;
	o->meta_loaded = 0;
	o->total = 0;
	o->state = OBJ_ABSENT;
}

static int push_ref(struct tb5_chunk_ref **arr, size_t *n, size_t *cap, const struct tb5_chunk_ref *r)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct tb5_chunk_ref *na = realloc(*arr, ncap * sizeof *na);
		if (na == NULL)
			return -1;
		*arr = na;
		*cap = ncap;
	}
	(*arr)[(*n)++] = *r;
	return 0;
}

struct tb5_stream *tb5_stream_at(struct tb5_handle *h, uint32_t stream, int create)
{
	struct tb5_stream *st;

	if (stream >= TB5_MAX_STREAMS)
		return NULL;
	st = h->streams[stream];
	if (st != NULL || !create)
		return st;
	st = calloc(1, sizeof *st);
	if (st == NULL)
		return NULL;
	st->pc_offset = UINT32_MAX;
	st->ts_offset = UINT32_MAX;
	h->streams[stream] = st;
	if (stream >= h->n_streams)
		h->n_streams = stream + 1;
	return st;
}

/* ---- chunks ---------------------------------------------------------------------------- */

static void chunk_header(unsigned char *hd, uint16_t kind, uint16_t flags, uint32_t id, uint32_t stored,
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

static TBRW_U32 pwrite_all(struct tb5_handle *h, const struct iovec *iov, int n_iov, uint64_t off)
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
			return tb5_fail(tb5_errno_code(errno), "%s: write failed at byte offset %llu: %s", h->part_path,
					(unsigned long long)off, strerror(errno));
		}
		if (w == 0)
			return tb5_fail(TBRW_DISK_FULL, "%s: write failed at byte offset %llu: no space", h->part_path,
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

/* A chunk on its way to the file: header and stored payload ready, place not yet taken. */
struct chunk_out {
	unsigned char hd[TB5_CHUNK_HEADER_SIZE];
	const void *stored;
	void *zbuf; /* owned: the compressed payload */
	struct tb5_chunk_ref ref; /* offset set when placed */
};

/* Builds the chunk (compressing data chunks when asked); no shared state is touched. */
static TBRW_U32 chunk_prepare(struct tb5_handle *h, uint16_t kind, uint32_t id, uint64_t first, uint32_t count,
			      const void *payload, size_t len, struct chunk_out *c)
{
	size_t stored_len = len;
	uint16_t flags = 0;

	c->stored = payload;
	c->zbuf = NULL;
	if (len > TB5_MAX_CHUNK_RAW)
		return tb5_fail(TBRW_TOO_BIG, "%s: chunk of %zu bytes exceeds the format's limit", h->path, len);
	if (h->compress && kind == CK_DATA && len > 64) {
		size_t bound = ZSTD_compressBound(len);
		c->zbuf = malloc(bound);
		if (c->zbuf == NULL)
			return tb5_fail(TBRW_NO_MEMORY, "%s: out of memory compressing a chunk", h->path);
		size_t z = ZSTD_compress(c->zbuf, bound, payload, len, 1);
		if (!ZSTD_isError(z) && z < len) {
			c->stored = c->zbuf;
			stored_len = z;
			flags = CK_FLAG_ZSTD;
		}
	}
	chunk_header(c->hd, kind, flags, id, (uint32_t)stored_len, (uint32_t)len, count, first,
		     tk__crc32c(0, c->stored, stored_len));
	c->ref = (struct tb5_chunk_ref){.offset = 0, .first = first, .count = count, .raw_len = (uint32_t)len,
					.stored_len = (uint32_t)stored_len, .kind = kind, .flags = flags, .id = id};
	return VT_SUCCESS;
}

/* Takes the chunk's place at the end of the file and records it (h->lock held). */
static TBRW_U32 chunk_place_locked(struct tb5_handle *h, struct tb5_obj *obj, struct chunk_out *c)
{
	if (h->write_error != VT_SUCCESS)
		return tb5_fail(h->write_error, "%s: an earlier write failed", h->part_path);
	c->ref.offset = h->end;
	if (c->ref.kind != CK_DROP && push_ref(&h->chunks, &h->n_chunks, &h->cap_chunks, &c->ref) != 0)
		return tb5_fail(TBRW_NO_MEMORY, "%s: out of memory", h->path);
	if (obj != NULL && c->ref.kind != CK_DROP && push_ref(&obj->chunks, &obj->n_chunks, &obj->cap_chunks, &c->ref) != 0) {
		h->n_chunks--;
		return tb5_fail(TBRW_NO_MEMORY, "%s: out of memory", h->path);
	}
	h->end += TB5_CHUNK_HEADER_SIZE + pad8(c->ref.stored_len);
	return VT_SUCCESS;
}

/* Writes a placed chunk (without the lock); a failure is sticky: the file cannot be completed. */
static TBRW_U32 chunk_store(struct tb5_handle *h, struct chunk_out *c)
{
	static const unsigned char zeros[8];
	struct iovec iov[3];
	TBRW_U32 rc;

	iov[0].iov_base = c->hd;
	iov[0].iov_len = sizeof c->hd;
	iov[1].iov_base = (void *)c->stored;
	iov[1].iov_len = c->ref.stored_len;
	iov[2].iov_base = (void *)zeros;
	iov[2].iov_len = pad8(c->ref.stored_len) - c->ref.stored_len;
	rc = pwrite_all(h, iov, iov[2].iov_len ? 3 : 2, c->ref.offset);
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

TBRW_U32 tb5_write_chunk(struct tb5_handle *h, struct tb5_obj *obj, uint16_t kind, uint32_t id, uint64_t first,
			 uint32_t count, const void *payload, size_t len)
{
	struct chunk_out c;
	TBRW_U32 rc;

	rc = chunk_prepare(h, kind, id, first, count, payload, len, &c);
	if (rc == VT_SUCCESS) {
		pthread_mutex_lock(&h->lock);
		rc = chunk_place_locked(h, obj, &c);
		pthread_mutex_unlock(&h->lock);
	}
	if (rc != VT_SUCCESS) {
		free(c.zbuf);
		return rc;
	}
	return chunk_store(h, &c);
}

static TBRW_U32 pread_all(struct tb5_handle *h, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(h->fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return tb5_fail(TBRW_IO_ERROR, "%s: read failed at byte offset %llu: %s", h->path,
					(unsigned long long)(off + done), strerror(errno));
		}
		if (r == 0)
			return tb5_fail(TBRW_FILE_TRUNCATED, "%s: file ends at byte offset %llu, inside a chunk",
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
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: bad chunk header", h->path,
				(unsigned long long)c->offset);
	if (tb5_get16(hd + 4) != c->kind || tb5_get32(hd + 8) != c->id || tb5_get32(hd + 12) != c->stored_len ||
	    tb5_get32(hd + 16) != c->raw_len || tb5_get32(hd + 20) != c->count || tb5_get64(hd + 24) != c->first ||
	    tb5_get16(hd + 6) != c->flags)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu disagrees with the directory",
				h->path, (unsigned long long)c->offset);
	return VT_SUCCESS;
}

/* Damage found in mapped bytes may be the file shrinking under the mapping: say so then. */
static TBRW_U32 shrunk_or(struct tb5_handle *h, TBRW_U32 rc)
{
	TBRW_U32 t = tk__tb5_map_check(h);

	return t != VT_SUCCESS ? t : rc;
}

TBRW_U32 tb5_read_chunk(struct tb5_handle *h, const struct tb5_chunk_ref *c, unsigned char **scratch,
			size_t *scratch_cap, const unsigned char **out)
{
	const unsigned char *hd, *payload, *pad_bytes;
	unsigned char hbuf[TB5_CHUNK_HEADER_SIZE];
	/* the payload and the zero bytes that pad it to 8: the CRC does not cover the padding */
	size_t span = pad8(c->stored_len), pad = span - c->stored_len;
	size_t need = span + (c->flags & CK_FLAG_ZSTD ? c->raw_len : 0);
	uint32_t crc;
	TBRW_U32 rc;

	if (c->offset + TB5_CHUNK_HEADER_SIZE + span > h->file_size && h->map != NULL)
		return tb5_fail(TBRW_FILE_TRUNCATED, "%s: chunk at byte offset %llu runs past the end of the file",
				h->path, (unsigned long long)c->offset);
	if (h->map != NULL && c->offset + TB5_CHUNK_HEADER_SIZE + span <= h->map_len) {
		hd = h->map + c->offset;
		payload = hd + TB5_CHUNK_HEADER_SIZE;
		need -= span;
	} else {
		rc = pread_all(h, hbuf, sizeof hbuf, c->offset);
		if (rc != VT_SUCCESS)
			return rc;
		hd = hbuf;
		payload = NULL;
	}
	rc = check_header(h, hd, c);
	if (rc != VT_SUCCESS)
		return shrunk_or(h, rc);
	if (!zstd_flag_ok(c))
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: a %s chunk of %u bytes cannot be "
						   "compressed",
				h->path, (unsigned long long)c->offset, c->kind == CK_DATA ? "data" : "non-data",
				c->raw_len);
	if (need > *scratch_cap) {
		unsigned char *ns = realloc(*scratch, need);
		if (ns == NULL)
			return tb5_fail(TBRW_NO_MEMORY, "%s: out of memory reading a chunk", h->path);
		*scratch = ns;
		*scratch_cap = need;
	}
	if (payload == NULL) {
		rc = pread_all(h, *scratch, span, c->offset + TB5_CHUNK_HEADER_SIZE);
		if (rc != VT_SUCCESS)
			return rc;
		payload = *scratch;
	}
	crc = tk__crc32c(0, payload, c->stored_len);
	if (crc != tb5_get32(hd + 32))
		return shrunk_or(h, tb5_fail(TBRW_FILE_CORRUPT,
				"%s: chunk at byte offset %llu: checksum mismatch in its %u-byte payload (stored 0x%08x, "
				"computed 0x%08x)",
				h->path, (unsigned long long)c->offset, c->stored_len, tb5_get32(hd + 32), crc));
	pad_bytes = pad > 0 ? payload + c->stored_len : NULL;
	for (size_t i = 0; i < pad; i++)
		if (pad_bytes[i] != 0)
			return shrunk_or(h, tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: padding byte at byte offset %llu "
							   "is not zero",
					h->path, (unsigned long long)c->offset,
					(unsigned long long)(c->offset + TB5_CHUNK_HEADER_SIZE + c->stored_len + i)));
	if (c->flags & CK_FLAG_ZSTD) {
		unsigned char *dst = *scratch + (payload == *scratch ? span : 0);
		size_t z = ZSTD_decompress(dst, c->raw_len, payload, c->stored_len);
		if (ZSTD_isError(z) || z != c->raw_len)
			return shrunk_or(h, tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: compressed payload does not "
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

/* ---- metadata objects ------------------------------------------------------------------- */

TBRW_U32 tb5_obj_append(struct tb5_obj *obj, const void *p, size_t n)
{
	if (obj->buf_len + n > TB5_MAX_META)
		return tb5_fail(TBRW_TOO_BIG, "a metadata section may hold at most %llu bytes",
				(unsigned long long)TB5_MAX_META);
	if (obj->buf_len + n > obj->buf_cap) {
		size_t ncap = obj->buf_cap ? obj->buf_cap : 256;
		while (ncap < obj->buf_len + n)
			ncap *= 2;
		unsigned char *nb = realloc(obj->buf, ncap);
		if (nb == NULL)
			return tb5_fail(TBRW_NO_MEMORY, "out of memory");
		obj->buf = nb;
		obj->buf_cap = ncap;
	}
	memcpy(obj->buf + obj->buf_len, p, n);
	obj->buf_len += n;
	return VT_SUCCESS;
}

TBRW_U32 tb5_obj_finish(struct tb5_handle *h, struct tb5_obj *obj)
{
	TBRW_U32 rc;
	size_t off = 0;

	/* Strings go first so that a salvaged file never holds an id without its text. */
	rc = tb5_flush_strings(h);
	while (rc == VT_SUCCESS && off < obj->buf_len) {
		size_t n = obj->buf_len - off;
		if (n > TB5_CHUNK_TARGET * 4)
			n = TB5_CHUNK_TARGET * 4;
		rc = tb5_write_chunk(h, obj, CK_META, obj->id, obj->total + off, 0, obj->buf + off, n);
		off += n;
	}
	if (rc != VT_SUCCESS)
		return rc;
	obj->total += obj->buf_len;
	rc = tb5_write_chunk(h, obj, CK_END, obj->id, obj->total, 0, NULL, 0);
	if (rc != VT_SUCCESS)
		return rc;
	/* Keep the bytes: a writable handle may read the section back. */
	free(obj->meta);
	obj->meta = obj->buf;
	obj->meta_len = obj->buf_len;
	obj->meta_loaded = 1;
	obj->buf = NULL;
	obj->buf_len = obj->buf_cap = 0;
	obj->state = OBJ_DONE;
	return VT_SUCCESS;
}

TBRW_U32 tb5_obj_drop(struct tb5_handle *h, struct tb5_obj *obj)
{
	unsigned char id_le[4];
	TBRW_U32 rc;
	size_t i, j;

	tb5_put32(id_le, obj->id);
	rc = tb5_write_chunk(h, NULL, CK_DROP, obj->id, 0, 0, id_le, sizeof id_le);
	if (rc != VT_SUCCESS)
		return rc;
	pthread_mutex_lock(&h->lock);
	for (i = j = 0; i < h->n_chunks; i++)
		if (h->chunks[i].id != obj->id)
			h->chunks[j++] = h->chunks[i];
	h->n_chunks = j;
	pthread_mutex_unlock(&h->lock);
	obj_reset(obj);
	return VT_SUCCESS;
}

TBRW_U32 tb5_obj_load(struct tb5_handle *h, struct tb5_obj *obj)
{
	unsigned char *scratch = NULL, *all;
	size_t scratch_cap = 0, at = 0;
	const unsigned char *p;
	TBRW_U32 rc = VT_SUCCESS;

	if (obj->meta_loaded)
		return VT_SUCCESS;
	if (obj->total > TB5_MAX_META)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: section %u (from byte offset %llu) claims %llu bytes", h->path,
				obj->id, tb5_obj_offset(obj), (unsigned long long)obj->total);
	all = malloc(obj->total ? obj->total : 1);
	if (all == NULL)
		return tb5_fail(TBRW_NO_MEMORY, "%s: out of memory loading a section", h->path);
	for (size_t i = 0; i < obj->n_chunks && rc == VT_SUCCESS; i++) {
		const struct tb5_chunk_ref *c = &obj->chunks[i];
		if (c->kind != CK_META)
			continue;
		if (c->first != at || at + c->raw_len > obj->total) {
			rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu is out of place in its section",
				      h->path, (unsigned long long)c->offset);
			break;
		}
		rc = tb5_read_chunk(h, c, &scratch, &scratch_cap, &p);
		if (rc == VT_SUCCESS) {
			memcpy(all + at, p, c->raw_len);
			at += c->raw_len;
		}
	}
	free(scratch);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_map_check(h);
	if (rc == VT_SUCCESS && at != obj->total)
		rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: section %u (from byte offset %llu) holds %zu of its %llu bytes",
			      h->path, obj->id, tb5_obj_offset(obj), at, (unsigned long long)obj->total);
	if (rc != VT_SUCCESS) {
		free(all);
		return rc;
	}
	obj->meta = all;
	obj->meta_len = at;
	obj->meta_loaded = 1;
	return VT_SUCCESS;
}

/* ---- strings ----------------------------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t x = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		x = (x ^ (unsigned char)s[i]) * 1099511628211ull;
	return x;
}

static int string_add(struct tb5_handle *h, char *s, uint32_t len)
{
	if (h->n_strings == h->cap_strings) {
		uint64_t ncap = h->cap_strings ? h->cap_strings * 2 : 64;
		char **ns = realloc(h->strings, ncap * sizeof *ns);
		if (ns == NULL)
			return -1;
		h->strings = ns;
		uint32_t *nl = realloc(h->string_len, ncap * sizeof *nl);
		if (nl == NULL)
			return -1;
		h->string_len = nl;
		h->cap_strings = ncap;
	}
	h->strings[h->n_strings] = s;
	h->string_len[h->n_strings] = len;
	h->n_strings++;
	return 0;
}

static int hash_insert(struct tb5_handle *h, uint64_t idx)
{
	if ((h->n_strings + 1) * 2 > h->hash_cap) {
		size_t ncap = h->hash_cap ? h->hash_cap * 2 : 256;
		uint64_t *nt = calloc(ncap, sizeof *nt);
		if (nt == NULL)
			return -1;
		for (size_t i = 0; i < h->hash_cap; i++) {
			uint64_t v = h->hash_ids[i];
			if (v == 0)
				continue;
			size_t k = hash_bytes(h->strings[v - 1], h->string_len[v - 1]) & (ncap - 1);
			while (nt[k] != 0)
				k = (k + 1) & (ncap - 1);
			nt[k] = v;
		}
		free(h->hash_ids);
		h->hash_ids = nt;
		h->hash_cap = ncap;
	}
	size_t k = hash_bytes(h->strings[idx], h->string_len[idx]) & (h->hash_cap - 1);
	while (h->hash_ids[k] != 0)
		k = (k + 1) & (h->hash_cap - 1);
	h->hash_ids[k] = idx + 1;
	return 0;
}

TBRW_U32 tb5_string_id(struct tb5_handle *h, const TBRW_CHAR *s, uint64_t *id)
{
	size_t len;
	char *u;

	*id = 0;
	if (s == NULL)
		return VT_SUCCESS;
	u = tb5_wcs_to_utf8_alloc(s, &len);
	if (u == NULL)
		return tb5_fail(TBRW_INVALID_STRING, "%s: a string holds an invalid character or exceeds %u bytes",
				h->path, TB5_MAX_STRING);
	pthread_mutex_lock(&h->lock);
	if (h->hash_cap > 0) {
		size_t k = hash_bytes(u, len) & (h->hash_cap - 1);
		while (h->hash_ids[k] != 0) {
			uint64_t v = h->hash_ids[k];
			if (h->string_len[v - 1] == len && memcmp(h->strings[v - 1], u, len) == 0) {
				pthread_mutex_unlock(&h->lock);
				free(u);
				*id = v;
				return VT_SUCCESS;
			}
			k = (k + 1) & (h->hash_cap - 1);
		}
	}
	if (string_add(h, u, (uint32_t)len) != 0 || hash_insert(h, h->n_strings - 1) != 0) {
		pthread_mutex_unlock(&h->lock);
		return tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	*id = h->n_strings;
	pthread_mutex_unlock(&h->lock);
	return VT_SUCCESS;
}

TBRW_U32 tb5_flush_strings(struct tb5_handle *h)
{
	struct chunk_out c;
	unsigned char *buf;
	size_t len = 0, at = 0;
	uint64_t first, n, i;
	TBRW_U32 rc;

	/* The strings chunk is built, placed and marked written in one hold of the lock: another
	 * thread's flush can then neither write the same strings nor place its chunk first. */
	pthread_mutex_lock(&h->lock);
	first = h->n_strings_flushed;
	n = h->n_strings - first;
	if (n == 0) {
		pthread_mutex_unlock(&h->lock);
		return VT_SUCCESS;
	}
	for (i = first; i < first + n; i++)
		len += 4 + (size_t)h->string_len[i];
	buf = malloc(len);
	if (buf == NULL) {
		pthread_mutex_unlock(&h->lock);
		return tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	for (i = first; i < first + n; i++) {
		tb5_put32(buf + at, h->string_len[i]);
		memcpy(buf + at + 4, h->strings[i], h->string_len[i]);
		at += 4 + (size_t)h->string_len[i];
	}
	rc = chunk_prepare(h, CK_STRINGS, 0, first, (uint32_t)n, buf, len, &c);
	if (rc == VT_SUCCESS)
		rc = chunk_place_locked(h, NULL, &c);
	if (rc == VT_SUCCESS)
		h->n_strings_flushed = first + n;
	pthread_mutex_unlock(&h->lock);
	if (rc == VT_SUCCESS)
		rc = chunk_store(h, &c);
	free(buf);
	return rc;
}

static TBRW_U32 load_strings_chunk(struct tb5_handle *h, const struct tb5_chunk_ref *c, const unsigned char *p)
{
	size_t at = 0;

	if (c->first != h->n_strings)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: string chunk at byte offset %llu starts at string %llu, "
						   "expected %llu",
				h->path, (unsigned long long)c->offset, (unsigned long long)c->first,
				(unsigned long long)h->n_strings);
	for (uint32_t i = 0; i < c->count; i++) {
		uint32_t len;
		char *s;
		if (at + 4 > c->raw_len || (len = tb5_get32(p + at)) > c->raw_len - at - 4 || len > TB5_MAX_STRING)
			return tb5_fail(TBRW_FILE_CORRUPT, "%s: string chunk at byte offset %llu: string %u overruns it",
					h->path, (unsigned long long)c->offset, i);
		s = malloc(len + 1u);
		if (s == NULL)
			return tb5_fail(TBRW_NO_MEMORY, "out of memory");
		memcpy(s, p + at + 4, len);
		s[len] = '\0';
		if (string_add(h, s, len) != 0) {
			free(s);
			return tb5_fail(TBRW_NO_MEMORY, "out of memory");
		}
		at += 4u + len;
	}
	h->n_strings_flushed = h->n_strings;
	return VT_SUCCESS;
}

/*
 * Where TBRW_convert_uniqueid_to_string() leaves a string asked for without a buffer: one
 * buffer per thread, valid until that thread's next call (the guide's 9.1 prose: "valid only
 * until the next TBRW_convert_uniqueid_to_string() is called"), freed when the thread ends.
 */
struct soi_buf {
	size_t cap; /* wide characters */
	TBRW_CHAR *text;
};
static pthread_key_t soi_key;
static pthread_once_t soi_once = PTHREAD_ONCE_INIT;
static int soi_key_ok;

static void soi_buf_free(void *p)
{
	struct soi_buf *b = p;

	if (b != NULL)
		free(b->text);
	free(b);
}

static void soi_key_make(void)
{
	soi_key_ok = pthread_key_create(&soi_key, soi_buf_free) == 0;
}

static TBRW_CHAR *soi_buf_get(size_t need)
{
	struct soi_buf *b;

	pthread_once(&soi_once, soi_key_make);
	if (!soi_key_ok)
		return NULL;
	b = pthread_getspecific(soi_key);
	if (b == NULL) {
		b = calloc(1, sizeof *b);
		if (b == NULL || pthread_setspecific(soi_key, b) != 0) {
			free(b);
			return NULL;
		}
	}
	if (b->cap < need) {
		TBRW_CHAR *t = realloc(b->text, need * sizeof *t);
		if (t == NULL)
			return NULL;
		b->text = t;
		b->cap = need;
	}
	return b->text;
}

TBRW_U32 TBRW_convert_uniqueid_to_string(TBRW_PTR ptr, TBRW_U32 size_of_buffer, TBRW_STRING_OR_ID *string_id,
					 TBRW_CHAR *buffer, TBRW_U32 *size_buffer_needed)
{
	struct tb5_handle *h = ptr;
	uint64_t id;
	size_t need;
	TBRW_CHAR *dst = buffer;
	/* the guide's usage: no buffer, no size wanted: the string comes back through soi_ptr */
	int via_ptr = buffer == NULL && size_of_buffer == 0 && size_buffer_needed == NULL;
	TBRW_U32 rc = VT_SUCCESS;

	if (h == NULL || string_id == NULL || (buffer == NULL && size_of_buffer != 0))
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_convert_uniqueid_to_string: NULL argument");
	id = string_id->soi_uniqueid;
	pthread_mutex_lock(&h->lock);
	if (id == 0 || id > h->n_strings) {
		pthread_mutex_unlock(&h->lock);
		return tb5_fail(TBRW_INVALID_STRING, "%s: no string has unique id %llu", h->path,
				(unsigned long long)id);
	}
	need = tb5_utf8_to_wcs_n(h->strings[id - 1], h->string_len[id - 1], NULL, 0);
	if (need != 0 && via_ptr) {
		dst = soi_buf_get(need);
		size_of_buffer = need;
		if (dst == NULL)
			rc = tb5_fail(TBRW_NO_MEMORY, "out of memory converting string %llu", (unsigned long long)id);
	}
	if (rc != VT_SUCCESS) {
		/* reported above */
	} else if (need == 0) {
		rc = tb5_fail(TBRW_INVALID_STRING, "%s: string %llu is not valid UTF-8", h->path,
			      (unsigned long long)id);
	} else if (need > size_of_buffer) {
		rc = tb5_fail(TBRW_BUFFER_TOO_SMALL, "%s: string %llu needs %zu wide characters (with its NUL), the "
						     "buffer holds %u",
			      h->path, (unsigned long long)id, need, size_of_buffer);
	} else {
		tb5_utf8_to_wcs_n(h->strings[id - 1], h->string_len[id - 1], dst, size_of_buffer);
	}
	pthread_mutex_unlock(&h->lock);
	if (size_buffer_needed != NULL && need != 0)
		*size_buffer_needed = (TBRW_U32)need;
	if (rc == VT_SUCCESS)
		string_id->soi_ptr = dst;
	return rc;
}

/* ---- directory -------------------------------------------------------------------------- */

static TBRW_U32 write_directory(struct tb5_handle *h)
{
	unsigned char *dir, tr[TB5_TRAILER_SIZE];
	size_t len = 8 + h->n_chunks * DIR_ENTRY_SIZE;
	uint64_t dir_off;
	struct iovec iov;
	TBRW_U32 rc;

	dir = calloc(1, len);
	if (dir == NULL)
		return tb5_fail(TBRW_NO_MEMORY, "out of memory writing the directory");
	tb5_put64(dir, h->n_chunks);
	for (size_t i = 0; i < h->n_chunks; i++) {
		unsigned char *e = dir + 8 + i * DIR_ENTRY_SIZE;
		const struct tb5_chunk_ref *c = &h->chunks[i];
		tb5_put64(e, c->offset);
		tb5_put64(e + 8, c->first);
		tb5_put32(e + 16, c->count);
		tb5_put32(e + 20, c->raw_len);
		tb5_put32(e + 24, c->stored_len);
		tb5_put16(e + 28, c->kind);
		tb5_put16(e + 30, c->flags);
		tb5_put32(e + 32, c->id);
	}
	dir_off = h->end;
	if (len > TB5_MAX_CHUNK_RAW) {
		free(dir);
		return tb5_fail(TBRW_TOO_BIG, "%s: too many chunks for one directory", h->path);
	}
	rc = tb5_write_chunk(h, NULL, CK_DIRECTORY, 0, 0, 0, dir, len);
	free(dir);
	if (rc != VT_SUCCESS)
		return rc;
	h->n_chunks--; /* the directory does not list itself */
	memcpy(tr, trailer_magic, 8);
	tb5_put64(tr + 8, dir_off);
	tb5_put64(tr + 16, h->end + TB5_TRAILER_SIZE);
	tb5_put32(tr + 24, 0);
	tb5_put32(tr + 28, tk__crc32c(0, tr, 28));
	iov.iov_base = tr;
	iov.iov_len = sizeof tr;
	rc = pwrite_all(h, &iov, 1, h->end);
	h->end += TB5_TRAILER_SIZE;
	return rc;
}

/* Registers one chunk listed by a directory or found by a scan. */
static TBRW_U32 take_chunk(struct tb5_handle *h, const struct tb5_chunk_ref *c, int from_dir)
{
	struct tb5_obj *o;

	if (c->kind == CK_STRINGS || c->kind == CK_DIRECTORY)
		return push_ref(&h->chunks, &h->n_chunks, &h->cap_chunks, c) ? tb5_fail(TBRW_NO_MEMORY, "out of memory")
										 : VT_SUCCESS;
	if (c->kind == CK_DROP) {
		o = tb5_obj_find(h, c->id);
		if (o != NULL) {
			size_t i, j;
			for (i = j = 0; i < h->n_chunks; i++)
				if (h->chunks[i].id != c->id || h->chunks[i].kind == CK_STRINGS)
					h->chunks[j++] = h->chunks[i];
			h->n_chunks = j;
			obj_reset(o);
		}
		return VT_SUCCESS;
	}
	if (c->kind != CK_META && c->kind != CK_DATA && c->kind != CK_END)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu has unknown kind %u", h->path,
				(unsigned long long)c->offset, c->kind);
	if (c->id == 0 || (!OBJ_IS_STREAM(c->id) && c->id != OBJ_DERIVED_PT &&
			   (c->id < OBJ_GLOBAL(TBRW_HARDWARE_SECTION) || c->id > OBJ_GLOBAL(TBRW_VERSION_INFO_SECTION))))
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu belongs to unknown object %u",
				h->path, (unsigned long long)c->offset, c->id);
	if (OBJ_IS_STREAM(c->id)) {
		uint32_t code = OBJ_CODE(c->id);
		if (OBJ_STREAM_OF(c->id) >= TB5_MAX_STREAMS || !((code >= 16 && code <= 20) || (code >= 32 && code <= 34)))
			return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu belongs to unknown object %u",
					h->path, (unsigned long long)c->offset, c->id);
	}
	/* Record objects (data sections, bind results) hold data chunks, the others meta chunks;
	 * a data chunk's count must fit its bytes: counts are only trusted once checked here. */
	int records = OBJ_IS_STREAM(c->id) && (OBJ_CODE(c->id) == 16u + TBRW_DATA_SECTION || OBJ_CODE(c->id) >= 32u);
	uint32_t entry = !OBJ_IS_STREAM(c->id) ? 0 : OBJ_CODE(c->id) == OBJ_BIND_DATA ? 24u
						   : OBJ_CODE(c->id) >= OBJ_BIND_MODULE ? 8u : 0;
	if ((c->kind == CK_DATA && !records) || (c->kind == CK_META && records))
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: a %s chunk in object %u", h->path,
				(unsigned long long)c->offset, c->kind == CK_DATA ? "data" : "meta", c->id);
	if (c->kind == CK_DATA && (entry != 0 ? (uint64_t)c->count * entry != c->raw_len
					      : c->count > c->raw_len || (c->count == 0) != (c->raw_len == 0)))
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: data chunk at byte offset %llu claims %u records in %u bytes",
				h->path, (unsigned long long)c->offset, c->count, c->raw_len);
	o = tb5_obj_get(h, c->id);
	if (o == NULL)
		return tb5_fail(TBRW_NO_MEMORY, "out of memory");
	if (o->state == OBJ_DONE)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu follows the end of its section",
				h->path, (unsigned long long)c->offset);
	if (c->kind == CK_DATA && c->first != o->total)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: data chunk at byte offset %llu starts at record %llu, expected %llu",
				h->path, (unsigned long long)c->offset, (unsigned long long)c->first,
				(unsigned long long)o->total);
	if (c->kind == CK_META && c->first != o->total)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu is out of place in its section",
				h->path, (unsigned long long)c->offset);
	if (c->kind == CK_END && c->first != o->total)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: section end at byte offset %llu counts %llu, its chunks %llu",
				h->path, (unsigned long long)c->offset, (unsigned long long)c->first,
				(unsigned long long)o->total);
	if (push_ref(&o->chunks, &o->n_chunks, &o->cap_chunks, c) ||
	    push_ref(&h->chunks, &h->n_chunks, &h->cap_chunks, c))
		return tb5_fail(TBRW_NO_MEMORY, "out of memory");
	if (c->kind == CK_DATA)
		o->total += c->count;
	else if (c->kind == CK_META)
		o->total += c->raw_len;
	else
		o->state = OBJ_DONE;
	o->from_file = 1;
	if (!from_dir && o->state != OBJ_DONE)
		o->state = OBJ_WRITING;
	if (OBJ_IS_STREAM(c->id) && OBJ_CODE(c->id) < 32 && tb5_stream_at(h, OBJ_STREAM_OF(c->id), 1) == NULL)
		return tb5_fail(TBRW_NO_MEMORY, "out of memory");
	return VT_SUCCESS;
}

/* Validates a chunk header read at off; fills c. */
static TBRW_U32 parse_chunk_header(struct tb5_handle *h, const unsigned char *hd, uint64_t off,
				   struct tb5_chunk_ref *c)
{
	if (tb5_get32(hd) != CHUNK_MAGIC)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: no chunk at byte offset %llu (bad magic)", h->path,
				(unsigned long long)off);
	if (tb5_get32(hd + 36) != tk__crc32c(0, hd, 36))
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk header at byte offset %llu: checksum mismatch", h->path,
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
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu has impossible sizes", h->path,
				(unsigned long long)off);
	if (!zstd_flag_ok(c))
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: a %s chunk of %u bytes cannot be "
						   "compressed",
				h->path, (unsigned long long)off, c->kind == CK_DATA ? "data" : "non-data", c->raw_len);
	return VT_SUCCESS;
}

static TBRW_U32 check_header_block(struct tb5_handle *h, const unsigned char *hd, uint64_t size)
{
	if (size < 8 || memcmp(hd, header_magic, size < 8 ? size : 8) != 0)
		return tb5_fail(TBRW_NOT_A_TB5_FILE, "%s: not a tb5 file (no tb5 signature at byte offset 0)", h->path);
	if (size < TB5_HEADER_SIZE)
		return tb5_fail(TBRW_FILE_TRUNCATED, "%s: file ends at byte offset %llu, inside its 64-byte header",
				h->path, (unsigned long long)size);
	if (tb5_get32(hd + 60) != tk__crc32c(0, hd, 60))
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: header checksum mismatch (bytes 0..59, checksum at byte offset 60)",
				h->path);
	if (tb5_get32(hd + 8) != TB5_FORMAT_VERSION || tb5_get32(hd + 12) != TB5_HEADER_SIZE)
		return tb5_fail(TBRW_UNSUPPORTED_VERSION, "%s: tb5 format version %u at byte offset 8; this library reads %u",
				h->path, tb5_get32(hd + 8), TB5_FORMAT_VERSION);
	return VT_SUCCESS;
}

static TBRW_U32 read_directory(struct tb5_handle *h)
{
	unsigned char tr[TB5_TRAILER_SIZE], hd[TB5_CHUNK_HEADER_SIZE];
	unsigned char *scratch = NULL, *dir_scratch = NULL;
	size_t scratch_cap = 0, dir_scratch_cap = 0;
	const unsigned char *dir, *p;
	struct tb5_chunk_ref dc;
	uint64_t dir_off, n, next_free = TB5_HEADER_SIZE;
	TBRW_U32 rc;

	if (h->file_size < TB5_HEADER_SIZE + TB5_TRAILER_SIZE)
		return tb5_fail(TBRW_FILE_TRUNCATED, "%s: file of %llu bytes has no trailer: its writer did not finish "
						     "(tb5_recover can salvage it)",
				h->path, (unsigned long long)h->file_size);
	rc = pread_all(h, tr, sizeof tr, h->file_size - TB5_TRAILER_SIZE);
	if (rc != VT_SUCCESS)
		return rc;
	if (memcmp(tr, trailer_magic, 8) != 0 || tb5_get32(tr + 28) != tk__crc32c(0, tr, 28))
		return tb5_fail(TBRW_FILE_TRUNCATED, "%s: no valid trailer at byte offset %llu: the file was cut short "
						     "or its writer did not finish (tb5_recover can salvage it)",
				h->path, (unsigned long long)(h->file_size - TB5_TRAILER_SIZE));
	dir_off = tb5_get64(tr + 8);
	if (tb5_get64(tr + 16) != h->file_size || dir_off < TB5_HEADER_SIZE ||
	    dir_off + TB5_CHUNK_HEADER_SIZE > h->file_size - TB5_TRAILER_SIZE)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: trailer at byte offset %llu points outside the file", h->path,
				(unsigned long long)(h->file_size - TB5_TRAILER_SIZE));
	rc = pread_all(h, hd, sizeof hd, dir_off);
	if (rc == VT_SUCCESS)
		rc = parse_chunk_header(h, hd, dir_off, &dc);
	if (rc != VT_SUCCESS)
		return rc;
	if (dc.kind != CK_DIRECTORY || dir_off + TB5_CHUNK_HEADER_SIZE + pad8(dc.stored_len) + TB5_TRAILER_SIZE !=
					       h->file_size)
		return tb5_fail(TBRW_FILE_CORRUPT, "%s: no directory at byte offset %llu", h->path,
				(unsigned long long)dir_off);
	/* The directory stays in its own buffer while string chunks are read into another. */
	rc = tb5_read_chunk(h, &dc, &dir_scratch, &dir_scratch_cap, &dir);
	if (rc != VT_SUCCESS)
		goto out;
	h->dir_off = dir_off;
	n = dc.raw_len >= 8 ? tb5_get64(dir) : UINT64_MAX;
	if (n > (dc.raw_len - 8) / DIR_ENTRY_SIZE || 8 + n * DIR_ENTRY_SIZE != dc.raw_len) {
		rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: directory at byte offset %llu is malformed", h->path,
			      (unsigned long long)dir_off);
		goto out;
	}
	for (uint64_t i = 0; i < n && rc == VT_SUCCESS; i++) {
		const unsigned char *e = dir + 8 + i * DIR_ENTRY_SIZE;
		struct tb5_chunk_ref c = {.offset = tb5_get64(e), .first = tb5_get64(e + 8), .count = tb5_get32(e + 16),
					  .raw_len = tb5_get32(e + 20), .stored_len = tb5_get32(e + 24),
					  .kind = tb5_get16(e + 28), .flags = tb5_get16(e + 30), .id = tb5_get32(e + 32)};
		/* in file order, without overlaps, wholly before the directory */
		if (c.offset < next_free || c.offset + TB5_CHUNK_HEADER_SIZE > dir_off ||
		    pad8(c.stored_len) > dir_off - c.offset - TB5_CHUNK_HEADER_SIZE || c.raw_len > TB5_MAX_CHUNK_RAW ||
		    c.kind == CK_DROP || c.kind == CK_DIRECTORY || tb5_get32(e + 36) != 0 ||
		    (!(c.flags & CK_FLAG_ZSTD) && c.stored_len != c.raw_len)) {
			rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: directory entry %llu (at byte offset %llu) is invalid",
				      h->path, (unsigned long long)i,
				      (unsigned long long)(dir_off + TB5_CHUNK_HEADER_SIZE + 8 + i * DIR_ENTRY_SIZE));
			break;
		}
		next_free = c.offset + TB5_CHUNK_HEADER_SIZE + pad8(c.stored_len);
		if (c.kind == CK_STRINGS) {
			rc = tb5_read_chunk(h, &c, &scratch, &scratch_cap, &p);
			if (rc == VT_SUCCESS)
				rc = load_strings_chunk(h, &c, p);
			if (rc == VT_SUCCESS && push_ref(&h->chunks, &h->n_chunks, &h->cap_chunks, &c))
				rc = tb5_fail(TBRW_NO_MEMORY, "out of memory");
			continue;
		}
		/* An end chunk is only a header: reading it now is cheap, and a damaged one would
		 * otherwise never be read at all. */
		if (c.kind == CK_END && (rc = tb5_read_chunk(h, &c, &scratch, &scratch_cap, &p)) != VT_SUCCESS)
			break;
		rc = take_chunk(h, &c, 1);
	}
	/* Every listed object must have been finished. */
	for (struct tb5_obj *o = h->objs; o != NULL && rc == VT_SUCCESS; o = o->next)
		if (o->state != OBJ_DONE)
			rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: section %u (from byte offset %llu) has no end mark", h->path,
				      o->id, tb5_obj_offset(o));
out:
	free(scratch);
	free(dir_scratch);
	return rc;
}

static void out_abort(struct tb5_handle *h);

/* ---- open / close ------------------------------------------------------------------------- */

static void handle_free(struct tb5_handle *h)
{
	struct tb5_obj *o, *next;

	if (h == NULL)
		return;
	tk__tb5_map_close(h);
	out_abort(h);
	if (h->fd >= 0)
		close(h->fd);
	for (o = h->objs; o != NULL; o = next) {
		next = o->next;
		obj_reset(o);
		free(o);
	}
	for (uint64_t i = 0; i < h->n_strings; i++)
		free(h->strings[i]);
	free(h->strings);
	free(h->string_len);
	free(h->hash_ids);
	for (uint32_t s = 0; s < h->n_streams; s++) {
		if (h->streams[s] == NULL)
			continue;
		free(h->streams[s]->piece_size);
		free(h->streams[s]->partial);
		free(h->streams[s]->bind_data);
		free(h->streams[s]);
	}
	free(h->streams);
	free(h->chunks);
	free(h->modules);
	tb5_pt_free(&h->pt);
	tb5_bind_free(h);
	free(h->path);
	free(h->part_path);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* A handle with its lock and stream slots (allocated up front: threads read the slot array
 * without the lock). NULL when out of memory. */
static struct tb5_handle *handle_new(void)
{
	struct tb5_handle *h = calloc(1, sizeof *h);

	if (h == NULL)
		return NULL;
	h->streams = calloc(TB5_MAX_STREAMS, sizeof *h->streams);
	if (h->streams == NULL) {
		free(h);
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->fd = -1;
	h->map_slot = -1;
	h->bound_stream = -1;
	return h;
}

static TBRW_U32 write_header(struct tb5_handle *h)
{
	unsigned char hd[TB5_HEADER_SIZE] = {0};
	struct iovec iov = {hd, sizeof hd};

	memcpy(hd, header_magic, 8);
	tb5_put32(hd + 8, TB5_FORMAT_VERSION);
	tb5_put32(hd + 12, TB5_HEADER_SIZE);
	tb5_put32(hd + 16, TB5_CHUNK_TARGET);
	tb5_put32(hd + 20, h->compress ? 1u : 0u);
	tb5_put32(hd + 60, tk__crc32c(0, hd, 60));
	h->end = TB5_HEADER_SIZE;
	return pwrite_all(h, &iov, 1, 0);
}

/* Copies the existing file into the .part file so that appending never touches it. */
static TBRW_U32 copy_file(struct tb5_handle *h, int src, uint64_t len)
{
	uint64_t done = 0;
	char buf[1 << 16];

	while (done < len) {
		ssize_t n = copy_file_range(src, NULL, h->fd, NULL, (size_t)(len - done), 0);
		if (n > 0) {
			done += (uint64_t)n;
			continue;
		}
		if (n < 0 && errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
			return tb5_fail(tb5_errno_code(errno), "%s: copying into %s failed: %s", h->path, h->part_path,
					strerror(errno));
		/* fall back to read/write */
		ssize_t r = pread(src, buf, sizeof buf, (off_t)done);
		if (r <= 0)
			return tb5_fail(TBRW_IO_ERROR, "%s: read failed at byte offset %llu", h->path,
					(unsigned long long)done);
		struct iovec iov = {buf, (size_t)r};
		TBRW_U32 rc = pwrite_all(h, &iov, 1, done);
		if (rc != VT_SUCCESS)
			return rc;
		done += (uint64_t)r;
	}
	return VT_SUCCESS;
}

static TBRW_U32 open_existing(struct tb5_handle *h, int fd)
{
	unsigned char hd[TB5_HEADER_SIZE];
	struct stat st;
	ssize_t r;
	TBRW_U32 rc;

	if (fstat(fd, &st) != 0)
		return tb5_fail(TBRW_IO_ERROR, "%s: %s", h->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return tb5_fail(TBRW_NOT_A_TB5_FILE, "%s: not a regular file", h->path);
	h->file_size = (uint64_t)st.st_size;
	r = pread(fd, hd, sizeof hd, 0);
	if (r < 0)
		return tb5_fail(TBRW_IO_ERROR, "%s: read failed at byte offset 0: %s", h->path, strerror(errno));
	rc = check_header_block(h, hd, (uint64_t)r);
	if (rc != VT_SUCCESS)
		return rc;
	h->compress = h->compress || (tb5_get32(hd + 20) & 1u);
	h->fd = fd;
	if (!h->writable)
		tk__tb5_map_open(h, fd);
	rc = read_directory(h);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_map_check(h);
	return rc;
}

/*
 * Opens an existing .tb5 for reading. O_NONBLOCK keeps a FIFO without a writer from blocking
 * the open; anything but a regular file is refused (a .tb5 is read at offsets and mapped),
 * naming what it is. Returns the descriptor, or -1 with the failure recorded.
 */
static int open_input(const char *path, TBRW_U32 *rc)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), fl;

	if (fd < 0) {
		*rc = tb5_fail(tb5_errno_code(errno), "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		*rc = tb5_fail(TBRW_IO_ERROR, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		const char *what = S_ISFIFO(st.st_mode)  ? "a FIFO"
				   : S_ISCHR(st.st_mode) ? "a character device"
				   : S_ISBLK(st.st_mode) ? "a block device"
				   : S_ISDIR(st.st_mode) ? "a directory"
				   : S_ISSOCK(st.st_mode) ? "a socket"
							  : "not a file";
		*rc = tb5_fail(TBRW_NOT_A_TB5_FILE, "%s: not a regular file (%s): a .tb5 file is read at offsets", path,
			       what);
		close(fd);
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		*rc = tb5_fail(TBRW_IO_ERROR, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* ---- the output file ------------------------------------------------------------------------- */

static TBRW_U32 tk_error_code(int err)
{
	switch (err) {
	case TK_ENOENT:
		return TBRW_FILE_NOT_FOUND;
	case TK_EACCES:
	case TK_EROFS:
		return TBRW_ACCESS_DENIED;
	case TK_ENOSPC:
		return TBRW_DISK_FULL;
	case TK_ENOMEM:
		return TBRW_NO_MEMORY;
	default:
		return TBRW_IO_ERROR;
	}
}

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m)  ? "a FIFO"
	       : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device"
	       : S_ISDIR(m) ? "a directory"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

/*
 * Creates the file a writable handle builds, through tk_outfile (include/tracekit/common.h):
 * a temporary next to h->path made with O_EXCL|O_NOFOLLOW (a symlink planted at its name is
 * never followed, a crashed run's ".part" is kept), renamed over h->path by out_commit() (a
 * symlink there is replaced, not followed; the old file's mode is kept). A .tb5 file is
 * written at offsets and read back, so an output that is not a regular file (a device, a
 * FIFO, written in place by tk_outfile) is refused, untouched. h->fd gets a read-write
 * descriptor of the temporary (tk_outfile's is write-only: it is reopened through
 * /proc/self/fd and checked to be the same file), h->part_path its name.
 */
static TBRW_U32 out_create(struct tb5_handle *h)
{
	char self[64];
	struct stat ws, rs;
	const char *name = strcmp(h->path, "-") == 0 ? "./-" : h->path; /* a file named "-", not stdout */
	int err, wfd, fd;

	/* refused before tk_outfile_open, which would wait for a reader to open a FIFO */
	if (stat(name, &ws) == 0 && !S_ISREG(ws.st_mode))
		return tb5_fail(TBRW_ACCESS_DENIED, "%s: %s: a .tb5 file is written at offsets, only as a regular file", h->path,
				file_kind(ws.st_mode));
	err = tk_outfile_open(&h->out, name, 0);
	if (err != TK_OK) {
		h->out = NULL;
		return tb5_fail(tk_error_code(err), "%s: cannot create: %s", h->path, tk_strerror(err));
	}
	free(h->part_path);
	h->part_path = strdup(tk_outfile_temp_path(h->out));
	wfd = fileno(tk_outfile_stream(h->out));
	if (h->part_path == NULL || wfd < 0 || fstat(wfd, &ws) != 0) {
		tk_outfile_abort(h->out);
		h->out = NULL;
		return tb5_fail(TBRW_NO_MEMORY, "%s: cannot create: out of memory", h->path);
	}
	if (!S_ISREG(ws.st_mode)) {
		tk_outfile_abort(h->out); /* closes it: nothing was written, nothing is renamed */
		h->out = NULL;
		return tb5_fail(TBRW_ACCESS_DENIED, "%s: %s: a .tb5 file is written at offsets, only as a regular file",
				h->path, file_kind(ws.st_mode));
	}
	snprintf(self, sizeof self, "/proc/self/fd/%d", wfd);
	fd = open(self, O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &rs) != 0 || rs.st_dev != ws.st_dev || rs.st_ino != ws.st_ino) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		tk_outfile_abort(h->out);
		h->out = NULL;
		return tb5_fail(TBRW_IO_ERROR, "%s: cannot reopen %s for reading and writing: %s", h->path, h->part_path,
				fd < 0 ? strerror(e) : "another file");
	}
	h->fd = fd;
	return VT_SUCCESS;
}

/* Gives the finished temporary its name (tk_outfile_commit: fsync, rename). */
static TBRW_U32 out_commit(struct tb5_handle *h)
{
	int err;

	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	err = tk_outfile_commit(h->out);
	h->out = NULL;
	if (err != TK_OK)
		return tb5_fail(tk_error_code(err), "%s: cannot complete %s: %s", h->part_path, h->path,
				tk_strerror(err));
	return VT_SUCCESS;
}

/* Removes the temporary (when there is one). */
static void out_abort(struct tb5_handle *h)
{
	if (h->out == NULL)
		return;
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	tk_outfile_abort(h->out);
	h->out = NULL;
}

static char *path_from_wide(const TBRW_CHAR *w)
{
	size_t len;
	return tb5_wcs_to_utf8_alloc(w, &len);
}

TBRW_U32 TBRW_open(TBRW_PTR *ptr, const TBRW_CHAR *filename, TBRW_U32 access_mode)
{
	struct tb5_handle *h;
	TBRW_U32 rc;
	int fd;

	tb5_detail_clear();
	if (ptr == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_open: ptr is NULL");
	*ptr = NULL;
	if (filename == NULL || filename[0] == 0)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_open: no file name");
	if ((access_mode & ~(TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS | TBRW_FILE_COMPRESS)) != 0 ||
	    (access_mode & (TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS)) == 0)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_open: invalid access mode 0x%x", access_mode);
	h = handle_new();
	if (h == NULL)
		return tb5_fail(TBRW_NO_MEMORY, "TBRW_open: out of memory");
	h->writable = (access_mode & (TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS)) != 0;
	h->compress = (access_mode & TBRW_FILE_COMPRESS) != 0;
	h->path = path_from_wide(filename);
	if (h->path == NULL) {
		handle_free(h);
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_open: the file name is not a valid string");
	}
	if (access_mode & TBRW_FILE_CREATE_ALWAYS) {
		rc = out_create(h);
		if (rc != VT_SUCCESS) {
			handle_free(h);
			return rc;
		}
		rc = write_header(h);
	} else {
		fd = open_input(h->path, &rc);
		if (fd < 0) {
			handle_free(h);
			return rc;
		}
		if (!h->writable) {
			rc = open_existing(h, fd);
		} else {
			/* Append: work on a copy, drop its directory and trailer, keep its chunks. */
			int src = fd;
			h->fd = -1;
			rc = open_existing(h, src);
			h->fd = -1;
			if (rc == VT_SUCCESS) {
				rc = out_create(h);
				if (rc == VT_SUCCESS) {
					uint64_t keep = h->file_size;
					/* the directory chunk starts where the trailer points */
					unsigned char tr[TB5_TRAILER_SIZE];
					if (pread(src, tr, sizeof tr, (off_t)(h->file_size - TB5_TRAILER_SIZE)) ==
					    (ssize_t)sizeof tr)
						keep = tb5_get64(tr + 8);
					rc = copy_file(h, src, keep);
					h->end = keep;
				}
			}
			close(src);
		}
	}
	if (rc != VT_SUCCESS) {
		out_abort(h);
		handle_free(h);
		return rc;
	}
	*ptr = h;
	return VT_SUCCESS;
}

TBRW_U32 TBRW_abort_cleanup_and_close(TBRW_PTR ptr)
{
	struct tb5_handle *h = ptr;

	if (h == NULL)
		return VT_SUCCESS;
	out_abort(h);
	handle_free(h);
	return VT_SUCCESS;
}

TBRW_U32 TBRW_close(TBRW_PTR ptr)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc = VT_SUCCESS;

	if (h == NULL)
		return VT_SUCCESS;
	/* a failed write is the cause of whatever else is left unfinished */
	if (h->writable && h->write_error != VT_SUCCESS)
		rc = tb5_fail(h->write_error, "%s: an earlier write failed; nothing was saved", h->part_path);
	for (struct tb5_obj *o = h->objs; o != NULL && rc == VT_SUCCESS; o = o->next)
		if (o->state == OBJ_WRITING || o->readers > 0)
			rc = tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_close with section %u still open (call its "
							      "TBRW_done_* first); nothing was saved",
				      h->path, o->id);
	for (uint32_t s = 0; s < h->n_streams && rc == VT_SUCCESS; s++)
		if (h->streams[s] != NULL && (h->streams[s]->writing || h->streams[s]->readers > 0))
			rc = tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_close with stream %u still open (call "
							      "TBRW_done_stream first); nothing was saved",
				      h->path, s);
	if (h->writable) {
		if (rc == VT_SUCCESS)
			rc = tb5_flush_strings(h);
		if (rc == VT_SUCCESS)
			rc = write_directory(h);
		if (rc == VT_SUCCESS && ftruncate(h->fd, (off_t)h->end) != 0)
			rc = tb5_fail(tb5_errno_code(errno), "%s: %s", h->part_path, strerror(errno));
		if (rc == VT_SUCCESS && fsync(h->fd) != 0)
			rc = tb5_fail(tb5_errno_code(errno), "%s: sync failed: %s", h->part_path, strerror(errno));
		if (rc == VT_SUCCESS)
			rc = out_commit(h);
		out_abort(h);
	}
	handle_free(h);
	return rc;
}

/* ---- verify ---------------------------------------------------------------------------------- */

/*
 * Every byte between the header and the directory belongs to a chunk: walks them in order by
 * their own headers, checks each one (header and payload checksums, zero padding, the zstd
 * frame) and that the directory's entries are exactly the chunks it meets there. Chunks the
 * directory leaves out (drop marks, dropped objects) are checked too: salvage reads them.
 */
static TBRW_U32 verify_chunks(struct tb5_handle *h, const struct tb5_chunk_ref *dir, size_t n, uint64_t end)
{
	unsigned char *scratch = NULL, hd[TB5_CHUNK_HEADER_SIZE];
	size_t scratch_cap = 0, k = 0;
	const unsigned char *p;
	uint64_t off = TB5_HEADER_SIZE;
	TBRW_U32 rc = VT_SUCCESS;

	while (off < end && rc == VT_SUCCESS) {
		struct tb5_chunk_ref c;
		if (end - off < TB5_CHUNK_HEADER_SIZE) {
			rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: %llu stray bytes at byte offset %llu, where a chunk "
							 "should start",
				      h->path, (unsigned long long)(end - off), (unsigned long long)off);
			break;
		}
		if (h->map != NULL && off + TB5_CHUNK_HEADER_SIZE <= h->map_len)
			memcpy(hd, h->map + off, sizeof hd);
		else if ((rc = pread_all(h, hd, sizeof hd, off)) != VT_SUCCESS)
			break;
		if ((rc = parse_chunk_header(h, hd, off, &c)) != VT_SUCCESS)
			break;
		if (c.kind < CK_STRINGS || c.kind > CK_DROP || c.kind == CK_DIRECTORY ||
		    pad8(c.stored_len) > end - off - TB5_CHUNK_HEADER_SIZE) {
			rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu is impossible here (kind %u, "
							 "%u bytes)",
				      h->path, (unsigned long long)off, c.kind, c.stored_len);
			break;
		}
		if (k < n && dir[k].offset < off) {
			rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: the directory lists a chunk at byte offset %llu, inside "
							 "another chunk",
				      h->path, (unsigned long long)dir[k].offset);
			break;
		}
		/* a listed chunk must match its entry (tb5_read_chunk compares the two) */
		rc = tb5_read_chunk(h, k < n && dir[k].offset == off ? &dir[k] : &c, &scratch, &scratch_cap, &p);
		if (k < n && dir[k].offset == off)
			k++;
		off += TB5_CHUNK_HEADER_SIZE + pad8(c.stored_len);
	}
	if (rc == VT_SUCCESS && k < n)
		rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: the directory lists a chunk at byte offset %llu, past the last "
						 "chunk",
			      h->path, (unsigned long long)dir[k].offset);
	free(scratch);
	return rc;
}

TBRW_U32 TBRW_verify(TBRW_PTR ptr)
{
	struct tb5_handle *h = ptr;
	size_t n;
	struct tb5_chunk_ref *copy;
	uint64_t end;
	TBRW_U32 rc = VT_SUCCESS;

	if (h == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_verify: NULL handle");
	pthread_mutex_lock(&h->lock);
	n = h->n_chunks;
	end = h->writable ? h->end : h->dir_off;
	copy = malloc((n ? n : 1) * sizeof *copy);
	if (copy != NULL && n > 0)
		memcpy(copy, h->chunks, n * sizeof *copy);
	pthread_mutex_unlock(&h->lock);
	if (copy == NULL)
		return tb5_fail(TBRW_NO_MEMORY, "out of memory");
	rc = verify_chunks(h, copy, n, end);
	free(copy);
	/* every finished section's items are well formed */
	for (struct tb5_obj *o = h->objs; o != NULL && rc == VT_SUCCESS; o = o->next)
		if (o->state == OBJ_DONE && o->id != OBJ_DERIVED_PT &&
		    !(OBJ_IS_STREAM(o->id) && (OBJ_CODE(o->id) == 16u + TBRW_DATA_SECTION || OBJ_CODE(o->id) >= 32u)))
			rc = tb5_check_items(h, o);
	for (uint32_t s = 0; s < h->n_streams && rc == VT_SUCCESS; s++) {
		struct tb5_obj *d = tb5_obj_find(h, OBJ_STREAM_SEC(s, TBRW_DATA_SECTION));
		if (d == NULL || d->state != OBJ_DONE)
			continue;
		rc = tb5_stream_layout(h, s);
		for (size_t i = 0; i < d->n_chunks && rc == VT_SUCCESS; i++)
			if (d->chunks[i].kind == CK_DATA &&
			    (uint64_t)d->chunks[i].count * h->streams[s]->record_size != d->chunks[i].raw_len)
				rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: data chunk at byte offset %llu holds %u bytes, not %u "
								 "records of %u bytes",
					      h->path, (unsigned long long)d->chunks[i].offset, d->chunks[i].raw_len,
					      d->chunks[i].count, h->streams[s]->record_size);
	}
	return rc;
}

/* ---- salvage ------------------------------------------------------------------------------- */

/* A salvage in progress: the damaged file, the file being written and what is reported. */
struct salvage {
	struct tb5_handle *src, *dst;
	tk_tbrw_recover_report rep;
	tk_tbrw_lost_fn *on_lost;
	void *user;
	uint64_t strings_padded; /* placeholder strings written for lost string chunks */
};

static void lost(struct salvage *sv, uint64_t from, uint64_t to, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void lost(struct salvage *sv, uint64_t from, uint64_t to, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	if (to <= from)
		return;
	if (sv->rep.ranges_lost == 0)
		sv->rep.first_bad_offset = from;
	sv->rep.ranges_lost++;
	sv->rep.bytes_dropped += to - from;
	if (sv->on_lost == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	sv->on_lost(from, to, what, sv->user);
}

/* What a chunk header says it holds, for a report. */
static void chunk_what(const struct tb5_chunk_ref *c, char *buf, size_t cap)
{
	static const char *const kinds[] = {"?", "strings", "metadata", "data", "end", "directory", "drop"};
	const char *k = c->kind <= CK_DROP ? kinds[c->kind] : "?";

	if (c->kind == CK_STRINGS)
		snprintf(buf, cap, "a strings chunk (strings %llu..%llu)", (unsigned long long)c->first + 1,
			 (unsigned long long)(c->first + c->count));
	else if (c->kind == CK_DATA && OBJ_IS_STREAM(c->id))
		snprintf(buf, cap, "a data chunk of stream %u, object %u (records %llu..%llu)", OBJ_STREAM_OF(c->id),
			 c->id, (unsigned long long)c->first, (unsigned long long)(c->first + c->count - 1));
	else
		snprintf(buf, cap, "a %s chunk of object %u", k, c->id);
}

/* The next offset at or after from (a multiple of 8, where chunks start) holding a chunk
 * header that checks out and a chunk that fits in the file; the file size when none. */
static uint64_t resync(struct tb5_handle *src, uint64_t from)
{
	enum { BLOCK = 1 << 20 };
	unsigned char *buf = malloc(BLOCK + TB5_CHUNK_HEADER_SIZE);
	uint64_t off = (from + 7u) & ~(uint64_t)7u;

	if (buf == NULL)
		return src->file_size;
	while (off + TB5_CHUNK_HEADER_SIZE <= src->file_size) {
		size_t want = src->file_size - off < BLOCK + TB5_CHUNK_HEADER_SIZE ? (size_t)(src->file_size - off)
										     : BLOCK + TB5_CHUNK_HEADER_SIZE;
		ssize_t r = pread(src->fd, buf, want, (off_t)off);
		if (r < (ssize_t)TB5_CHUNK_HEADER_SIZE)
			break;
		for (size_t i = 0; i + TB5_CHUNK_HEADER_SIZE <= (size_t)r && i < BLOCK; i += 8) {
			struct tb5_chunk_ref c;
			if (tb5_get32(buf + i) != CHUNK_MAGIC || parse_chunk_header(src, buf + i, off + i, &c) != VT_SUCCESS)
				continue;
			if (c.kind < CK_STRINGS || c.kind > CK_DROP ||
			    off + i + TB5_CHUNK_HEADER_SIZE + pad8(c.stored_len) > src->file_size)
				continue;
			free(buf);
			tb5_detail_clear();
			return off + i;
		}
		off += BLOCK;
	}
	free(buf);
	tb5_detail_clear();
	return src->file_size;
}

/* Takes a chunk that checks out into the salvage: NO when it cannot be used where it is. */
static int salvage_take(struct salvage *sv, struct tb5_chunk_ref *c, const unsigned char *p)
{
	struct tb5_handle *src = sv->src;
	struct tb5_obj *o;

	if (c->kind == CK_STRINGS) {
		if (c->first < src->n_strings)
			return 0; /* strings already known: not from this file's sequence */
		/* strings of a lost chunk become empty placeholders, so later ids keep their text */
		while (src->n_strings < c->first) {
			char *e = calloc(1, 1);
			if (e == NULL || string_add(src, e, 0) != 0) {
				free(e);
				return 0;
			}
			sv->strings_padded++;
		}
		if (load_strings_chunk(src, c, p) != VT_SUCCESS)
			return 0;
		return push_ref(&src->chunks, &src->n_chunks, &src->cap_chunks, c) == 0;
	}
	o = tb5_obj_find(src, c->id);
	/* Data sections keep the records after a lost chunk: renumbered to follow on. */
	if (o != NULL && o->state != OBJ_DONE && OBJ_IS_STREAM(c->id) &&
	    OBJ_CODE(c->id) == 16u + TBRW_DATA_SECTION && (c->kind == CK_DATA || c->kind == CK_END) &&
	    c->first >= o->lost_records && c->first - o->lost_records > o->total && !o->drop) {
		uint64_t gap = c->first - o->lost_records - o->total;
		o->lost_records += gap;
		sv->rep.records_lost += gap;
	}
	if (o != NULL && c->first >= o->lost_records && (c->kind == CK_DATA || c->kind == CK_END))
		c->first -= o->lost_records;
	if (take_chunk(src, c, 0) == VT_SUCCESS)
		return 1;
	/* out of place (a chunk of it was lost): its section cannot be rebuilt */
	o = tb5_obj_find(src, c->id);
	if (o != NULL)
		o->drop = 1;
	return 0;
}

/* Whether a finished metadata section reads as its API reads it. */
static int section_readable(struct tb5_handle *src, struct tb5_obj *o)
{
	TBRW_U32 rc = tb5_check_section(src, o);

	tb5_detail_clear();
	return rc == VT_SUCCESS;
}

/* Opens the written file as a reader would and checks all of it. */
static TBRW_U32 check_output(const char *part_path, const char *final_path)
{
	struct tb5_handle *h = handle_new();
	TBRW_U32 rc;
	int fd;

	if (h == NULL || (h->path = strdup(part_path)) == NULL) {
		handle_free(h);
		return tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	fd = open(part_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = tb5_fail(tb5_errno_code(errno), "%s: cannot open: %s", part_path, strerror(errno));
	} else {
		rc = open_existing(h, fd);
		if (rc == VT_SUCCESS)
			rc = TBRW_verify(h);
	}
	if (rc != VT_SUCCESS)
		rc = tb5_fail(TBRW_FILE_CORRUPT, "%s: the salvaged file does not read back (%s); nothing was saved",
			      final_path, tk_tbrw_error_detail());
	handle_free(h);
	return rc;
}

TBRW_U32 tk_tbrw_recover(const char *src_path, const char *dst_path, tk_tbrw_recover_report *report)
{
	return tk_tbrw_recover_ranges(src_path, dst_path, report, NULL, NULL);
}

TBRW_U32 tk_tbrw_recover_ranges(const char *src_path, const char *dst_path, tk_tbrw_recover_report *report,
				tk_tbrw_lost_fn *on_lost, void *user)
{
	struct salvage sv = {.on_lost = on_lost, .user = user};
	struct tb5_handle *src, *dst;
	unsigned char hd[TB5_HEADER_SIZE], ch[TB5_CHUNK_HEADER_SIZE];
	unsigned char *scratch = NULL;
	size_t scratch_cap = 0;
	struct stat st;
	uint64_t off, dst_strings = 0;
	TBRW_U32 rc;
	ssize_t r;
	int fd;

	tb5_detail_clear();
	if (src_path == NULL || dst_path == NULL)
		return tb5_fail(TBRW_INVALID_PARAMETER, "tk_tbrw_recover: NULL path");
	src = sv.src = handle_new();
	dst = sv.dst = handle_new();
	if (src == NULL || dst == NULL) {
		handle_free(src);
		handle_free(dst);
		return tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	src->path = strdup(src_path);
	dst->path = strdup(dst_path);
	if (src->path == NULL || dst->path == NULL) {
		rc = tb5_fail(TBRW_NO_MEMORY, "out of memory");
		goto out;
	}
	dst->writable = 1;

	fd = open_input(src_path, &rc);
	if (fd < 0)
		goto out;
	src->fd = fd;
	if (fstat(fd, &st) != 0) {
		rc = tb5_fail(TBRW_IO_ERROR, "%s: %s", src_path, strerror(errno));
		goto out;
	}
	src->file_size = (uint64_t)st.st_size;
	r = pread(fd, hd, sizeof hd, 0);
	rc = check_header_block(src, hd, r < 0 ? 0 : (uint64_t)r);
	if (rc != VT_SUCCESS) {
		if (rc == TBRW_FILE_TRUNCATED || rc == TBRW_FILE_CORRUPT)
			rc = tb5_fail(TBRW_NOT_A_TB5_FILE, "%s: the 64-byte header is incomplete or damaged: nothing "
							   "can be salvaged",
				      src_path);
		goto out;
	}
	src->compress = (tb5_get32(hd + 20) & 1u) != 0;

	/*
	 * Scan: every chunk in order. A chunk whose header checks out but whose payload does not
	 * (or that cannot be used where it is) is skipped by its own length; where no header
	 * checks out, the scan looks for the next one. Each skipped stretch is reported. The
	 * directory chunk ends the chunks.
	 */
	off = TB5_HEADER_SIZE;
	while (off < src->file_size) {
		struct tb5_chunk_ref c;
		const unsigned char *p;
		char what[160];
		uint64_t next;
		int head_ok = off + TB5_CHUNK_HEADER_SIZE <= src->file_size &&
			      pread(fd, ch, sizeof ch, (off_t)off) == (ssize_t)sizeof ch &&
			      parse_chunk_header(src, ch, off, &c) == VT_SUCCESS && c.kind >= CK_STRINGS &&
			      c.kind <= CK_DROP;
		if (!head_ok || off + TB5_CHUNK_HEADER_SIZE + pad8(c.stored_len) > src->file_size) {
			next = resync(src, off + 8);
			if (head_ok)
				chunk_what(&c, what, sizeof what);
			lost(&sv, off, next, "%s%s", head_ok ? "the start of " : "bytes that hold no chunk",
			     head_ok ? what : "");
			off = next;
			continue;
		}
		next = off + TB5_CHUNK_HEADER_SIZE + pad8(c.stored_len);
		if (c.kind == CK_DIRECTORY) {
			sv.rep.was_complete = sv.rep.ranges_lost == 0;
			break;
		}
		if (tb5_read_chunk(src, &c, &scratch, &scratch_cap, &p) != VT_SUCCESS) {
			chunk_what(&c, what, sizeof what);
			lost(&sv, off, next, "%s: %s", what, tk_tbrw_error_detail());
		} else if (!salvage_take(&sv, &c, p)) {
			chunk_what(&c, what, sizeof what);
			lost(&sv, off, next, "%s that no longer fits its section (a chunk before it was lost)", what);
		} else {
			sv.rep.chunks_kept++;
		}
		off = next;
	}
	tb5_detail_clear();
	if (sv.rep.ranges_lost == 0)
		sv.rep.first_bad_offset = sv.rep.was_complete ? src->file_size : off;
	sv.rep.bytes_scanned = src->file_size;

	/* Decide what to keep: finished sections that read back; data sections (finished or
	 * not) whose data description is kept and whose chunks match its record size. Unfinished
	 * metadata, sections with a lost chunk and unfinished bind results are left out. */
	for (struct tb5_obj *o = src->objs; o != NULL; o = o->next) {
		int is_data = OBJ_IS_STREAM(o->id) && OBJ_CODE(o->id) == 16u + TBRW_DATA_SECTION;
		o->drop = o->drop || (o->state != OBJ_DONE && !is_data);
		int has_items = !is_data && o->id != OBJ_DERIVED_PT && !(OBJ_IS_STREAM(o->id) && OBJ_CODE(o->id) >= 32u);
		if (!o->drop && has_items && o->state == OBJ_DONE && !section_readable(src, o)) {
			o->drop = 1;
			sv.rep.sections_unreadable++;
			if (sv.on_lost != NULL) {
				const struct tb5_chunk_ref *last = &o->chunks[o->n_chunks - 1];
				char what[96];
				snprintf(what, sizeof what, "section %u, left out: its items do not decode", o->id);
				sv.on_lost(tb5_obj_offset(o), last->offset + TB5_CHUNK_HEADER_SIZE + pad8(last->stored_len),
					   what, sv.user);
			}
		}
	}
	for (struct tb5_obj *o = src->objs; o != NULL; o = o->next) {
		if (!(OBJ_IS_STREAM(o->id) && OBJ_CODE(o->id) == 16u + TBRW_DATA_SECTION) || o->drop)
			continue;
		uint32_t s = OBJ_STREAM_OF(o->id);
		struct tb5_obj *desc = tb5_obj_find(src, OBJ_STREAM_SEC(s, TBRW_DATA_DESCRIPTION_SECTION));
		if (desc == NULL || desc->state != OBJ_DONE || desc->drop || tb5_stream_layout(src, s) != VT_SUCCESS) {
			o->drop = 1;
		} else {
			for (size_t i = 0; i < o->n_chunks; i++)
				if (o->chunks[i].kind == CK_DATA &&
				    (uint64_t)o->chunks[i].count * src->streams[s]->record_size != o->chunks[i].raw_len)
					o->drop = 1;
		}
	}
	/* bind results stand or fall with their data */
	for (struct tb5_obj *o = src->objs; o != NULL; o = o->next) {
		if (OBJ_IS_STREAM(o->id) && OBJ_CODE(o->id) >= 32u && !o->drop) {
			struct tb5_obj *d = tb5_obj_find(src, OBJ_STREAM_SEC(OBJ_STREAM_OF(o->id), TBRW_DATA_SECTION));
			if (d == NULL || d->drop || (d->state != OBJ_DONE && o->state == OBJ_DONE))
				o->drop = 1;
		}
	}
	for (struct tb5_obj *o = src->objs; o != NULL; o = o->next)
		if (o->drop)
			sv.rep.sections_dropped++;
	tb5_detail_clear();

	/* Write the kept chunks into a new file with a directory. */
	rc = out_create(dst);
	if (rc != VT_SUCCESS)
		goto out;
	dst->compress = src->compress;
	rc = write_header(dst);
	for (size_t i = 0; i < src->n_chunks && rc == VT_SUCCESS; i++) {
		struct tb5_chunk_ref c = src->chunks[i];
		struct tb5_obj *o = c.kind == CK_STRINGS ? NULL : tb5_obj_find(src, c.id);
		const unsigned char *p;
		unsigned char *copy;
		size_t len = TB5_CHUNK_HEADER_SIZE + pad8(c.stored_len);
		struct iovec iov;
		if (o != NULL && o->drop)
			continue;
		if (c.kind == CK_STRINGS && c.first > dst_strings) {
			/* placeholders for the strings of a lost chunk: empty, length 0 each */
			uint64_t gap = c.first - dst_strings;
			unsigned char *zeros = calloc(gap, 4);
			rc = zeros == NULL ? tb5_fail(TBRW_NO_MEMORY, "out of memory")
					   : tb5_write_chunk(dst, NULL, CK_STRINGS, 0, dst_strings, (uint32_t)gap, zeros,
							     (size_t)gap * 4);
			free(zeros);
			if (rc != VT_SUCCESS)
				break;
			dst_strings = c.first;
		}
		if (c.kind == CK_STRINGS)
			dst_strings += c.count;
		if (c.kind == CK_DATA && OBJ_IS_STREAM(c.id) && OBJ_CODE(c.id) == 16u + TBRW_DATA_SECTION)
			sv.rep.records_kept += c.count;
		if (c.kind == CK_END)
			sv.rep.sections_kept++;
		copy = malloc(len);
		if (copy == NULL) {
			rc = tb5_fail(TBRW_NO_MEMORY, "out of memory");
			break;
		}
		if (pread(src->fd, copy, len, (off_t)c.offset) != (ssize_t)len) {
			free(copy);
			rc = tb5_fail(TBRW_IO_ERROR, "%s: read failed at byte offset %llu", src_path,
				      (unsigned long long)c.offset);
			break;
		}
		{
			/* checked again as it is on disk (a renumbered chunk says its old first record) */
			struct tb5_chunk_ref on_disk = c;
			on_disk.first = tb5_get64(copy + 24);
			rc = tb5_read_chunk(src, &on_disk, &scratch, &scratch_cap, &p);
		}
		if (rc != VT_SUCCESS) {
			free(copy);
			break;
		}
		/* the header again from the entry: a renumbered chunk gets its new first record */
		chunk_header(copy, c.kind, c.flags, c.id, c.stored_len, c.raw_len, c.count, c.first, tb5_get32(copy + 32));
		iov.iov_base = copy;
		iov.iov_len = len;
		c.offset = dst->end;
		rc = pwrite_all(dst, &iov, 1, dst->end);
		free(copy);
		dst->end += len;
		if (rc == VT_SUCCESS && push_ref(&dst->chunks, &dst->n_chunks, &dst->cap_chunks, &c))
			rc = tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	/* Data sections cut short get their end mark now. */
	for (struct tb5_obj *o = src->objs; o != NULL && rc == VT_SUCCESS; o = o->next) {
		if (o->state == OBJ_DONE || o->drop)
			continue;
		rc = tb5_write_chunk(dst, NULL, CK_END, o->id, o->total, 0, NULL, 0);
		sv.rep.sections_kept++;
	}
	if (rc == VT_SUCCESS)
		rc = write_directory(dst);
	if (rc == VT_SUCCESS && fsync(dst->fd) != 0)
		rc = tb5_fail(tb5_errno_code(errno), "%s: sync failed: %s", dst->part_path, strerror(errno));
	/* what was kept must read back, section by section, before it gets the final name */
	if (rc == VT_SUCCESS)
		rc = check_output(dst->part_path, dst->path);
	if (rc == VT_SUCCESS)
		rc = out_commit(dst);
	out_abort(dst);
out:
	free(scratch);
	if (rc == VT_SUCCESS && report != NULL)
		*report = sv.rep;
	handle_free(src);
	handle_free(dst);
	return rc;
}
