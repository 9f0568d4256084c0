/* SPDX-License-Identifier: MIT */
/*
 * tb5_object.c: the objects of a .tb5 handle (sections, stream sections, bind results): the
 * prepend-only list, stream slots, and metadata objects: buffering their bytes, writing them
 * as chunks with an end mark, discarding them (drop chunk) and loading them back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb5/tb5_internal.h"

/* ---- objects --------------------------------------------------------------------------- */

struct tb5_obj *tk__tb5_obj_find(struct tb5_handle *h, uint32_t id)
{
	for (struct tb5_obj *o = h->objs; o != NULL; o = o->next)
		if (o->id == id)
			return o;
	return NULL;
}

struct tb5_obj *tk__tb5_obj_get(struct tb5_handle *h, uint32_t id)
{
	struct tb5_obj *o = tk__tb5_obj_find(h, id);

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

void tk__tb5_obj_reset(struct tb5_obj *o)
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

int tk__tb5_push_ref(struct tb5_chunk_ref **arr, size_t *n, size_t *cap, const struct tb5_chunk_ref *r)
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

struct tb5_stream *tk__tb5_stream_at(struct tb5_handle *h, uint32_t stream, int create)
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

/* ---- metadata objects ------------------------------------------------------------------- */

TBRW_U32 tk__tb5_obj_append(struct tb5_obj *obj, const void *p, size_t n)
{
	if (obj->buf_len + n > TB5_MAX_META)
		return tk__tb5_fail(TBRW_TOO_BIG, "a metadata section may hold at most %llu bytes",
				(unsigned long long)TB5_MAX_META);
	if (obj->buf_len + n > obj->buf_cap) {
		size_t ncap = obj->buf_cap ? obj->buf_cap : 256;
		while (ncap < obj->buf_len + n)
			ncap *= 2;
		unsigned char *nb = realloc(obj->buf, ncap);
		if (nb == NULL)
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
		obj->buf = nb;
		obj->buf_cap = ncap;
	}
	memcpy(obj->buf + obj->buf_len, p, n);
	obj->buf_len += n;
	return VT_SUCCESS;
}

TBRW_U32 tk__tb5_obj_finish(struct tb5_handle *h, struct tb5_obj *obj)
{
	TBRW_U32 rc;
	size_t off = 0;

	/* Strings go first so that a salvaged file never holds an id without its text. */
	rc = tk__tb5_flush_strings(h);
	while (rc == VT_SUCCESS && off < obj->buf_len) {
		size_t n = obj->buf_len - off;
		if (n > TB5_CHUNK_TARGET * 4)
			n = TB5_CHUNK_TARGET * 4;
		rc = tk__tb5_write_chunk(h, obj, CK_META, obj->id, obj->total + off, 0, obj->buf + off, n);
		off += n;
	}
	if (rc != VT_SUCCESS)
		return rc;
	obj->total += obj->buf_len;
	rc = tk__tb5_write_chunk(h, obj, CK_END, obj->id, obj->total, 0, NULL, 0);
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

TBRW_U32 tk__tb5_obj_drop(struct tb5_handle *h, struct tb5_obj *obj)
{
	unsigned char id_le[4];
	TBRW_U32 rc;
	size_t i, j;

	tb5_put32(id_le, obj->id);
	rc = tk__tb5_write_chunk(h, NULL, CK_DROP, obj->id, 0, 0, id_le, sizeof id_le);
	if (rc != VT_SUCCESS)
		return rc;
	pthread_mutex_lock(&h->lock);
	for (i = j = 0; i < h->n_chunks; i++)
		if (h->chunks[i].id != obj->id)
			h->chunks[j++] = h->chunks[i];
	h->n_chunks = j;
	pthread_mutex_unlock(&h->lock);
	tk__tb5_obj_reset(obj);
	return VT_SUCCESS;
}

TBRW_U32 tk__tb5_obj_load(struct tb5_handle *h, struct tb5_obj *obj)
{
	unsigned char *scratch = NULL, *all;
	size_t scratch_cap = 0, at = 0;
	const unsigned char *p;
	TBRW_U32 rc = VT_SUCCESS;

	if (obj->meta_loaded)
		return VT_SUCCESS;
	if (obj->total > TB5_MAX_META)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: section %u (from byte offset %llu) claims %llu bytes", h->path,
				obj->id, tb5_obj_offset(obj), (unsigned long long)obj->total);
	all = malloc(obj->total ? obj->total : 1);
	if (all == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "%s: out of memory loading a section", h->path);
	for (size_t i = 0; i < obj->n_chunks && rc == VT_SUCCESS; i++) {
		const struct tb5_chunk_ref *c = &obj->chunks[i];
		if (c->kind != CK_META)
			continue;
		if (c->first != at || at + c->raw_len > obj->total) {
			rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu is out of place in its section",
				      h->path, (unsigned long long)c->offset);
			break;
		}
		rc = tk__tb5_read_chunk(h, c, &scratch, &scratch_cap, &p);
		if (rc == VT_SUCCESS) {
			memcpy(all + at, p, c->raw_len);
			at += c->raw_len;
		}
	}
	free(scratch);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_map_check(h);
	if (rc == VT_SUCCESS && at != obj->total)
		rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: section %u (from byte offset %llu) holds %zu of its %llu bytes",
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
