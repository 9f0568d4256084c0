/* SPDX-License-Identifier: MIT */
/*
 * tb5_items.c: the tagged little-endian items metadata sections are made of
 * (docs/tb5-format.md, "Items"): appending one, walking and checking them, string ids,
 * decoding a list of them, and the size-query and enumeration helpers of the API.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb5/tb5_items.h"

/* Appends the item (type, payload e) to obj. */
TBRW_U32 tk__tb5_put_item(struct tb5_obj *obj, uint16_t type, const void *payload, size_t len)
{
	unsigned char hd[8];
	TBRW_U32 rc;

	if (len > UINT32_MAX)
		return tk__tb5_fail(TBRW_TOO_BIG, "item too large");
	tb5_put16(hd, type);
	tb5_put16(hd + 2, 0);
	tb5_put32(hd + 4, (uint32_t)len);
	rc = tk__tb5_obj_append(obj, hd, sizeof hd);
	if (rc == VT_SUCCESS && len > 0)
		rc = tk__tb5_obj_append(obj, payload, len);
	return rc;
}
int tk__tb5_next_item(struct items *it, uint16_t *type, struct dec *d)
{
	uint32_t n;

	if (it->at + 8 > it->len)
		return 0;
	n = tb5_get32(it->p + it->at + 4);
	if (n > it->len - it->at - 8)
		return -1;
	*type = tb5_get16(it->p + it->at);
	d->p = it->p + it->at + 8;
	d->len = n;
	d->at = 0;
	d->bad = 0;
	it->at += 8u + n;
	return 1;
}

TBRW_U32 tk__tb5_bad_item(struct tb5_handle *h, struct tb5_obj *o, const char *what)
{
	return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: section %u (from byte offset %llu): malformed %s item", h->path, o->id,
			tb5_obj_offset(o), what);
}

TBRW_U32 tk__tb5_check_items(struct tb5_handle *h, struct tb5_obj *o)
{
	struct items it;
	struct dec d;
	uint16_t t;
	int r;
	TBRW_U32 rc = tk__tb5_obj_load(h, o);

	if (rc != VT_SUCCESS)
		return rc;
	it = (struct items){o->meta, o->meta_len, 0};
	while ((r = tk__tb5_next_item(&it, &t, &d)) == 1)
		;
	if (r < 0 || it.at != it.len)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: section %u (from byte offset %llu): the item at byte %zu of the "
						   "section overruns it",
				h->path, o->id, tb5_obj_offset(o), it.at);
	return VT_SUCCESS;
}

/* Strings: on write intern the wide text, on read the id must exist. */
TBRW_U32 tk__tb5_sid(struct tb5_handle *h, const TBRW_STRING_OR_ID *s, struct enc *e)
{
	uint64_t id;
	TBRW_U32 rc = tk__tb5_string_id(h, s->soi_ptr, &id);
	if (rc == VT_SUCCESS)
		e64(e, id);
	return rc;
}
void tk__tb5_rid(struct tb5_handle *h, struct dec *d, TBRW_STRING_OR_ID *s)
{
	s->soi_uniqueid = d64(d);
	/* atomic: other threads may be adding strings */
	if (s->soi_uniqueid > atomic_load_explicit(&h->n_strings, memory_order_relaxed))
		d->bad = 1;
}

/* Items a section needs before its done_ succeeds. */
int tk__tb5_has_item(struct tb5_obj *o, uint16_t want)
{
	struct items it = {o->buf, o->buf_len, 0};
	struct dec d;
	uint16_t t;
	while (tk__tb5_next_item(&it, &t, &d) == 1)
		if (t == want)
			return 1;
	return 0;
}

/* Copies one fixed-size decoded structure out with the size-query protocol. */
TBRW_U32 tk__tb5_give(struct tb5_handle *h, const char *what, const void *src, size_t size, TBRW_U32 size_of_buffer,
		     void *buf, TBRW_U32 *used)
{
	if (used != NULL)
		*used = (TBRW_U32)size;
	if (buf == NULL || size_of_buffer < size)
		return tk__tb5_fail(TBRW_BUFFER_TOO_SMALL, "%s: %s: the buffer holds %u bytes, %zu are needed", h->path, what,
				buf == NULL ? 0u : size_of_buffer, size);
	if (size > 0)
		memcpy(buf, src, size);
	return VT_SUCCESS;
}

/* Finds the first item of a type in a loaded object. */
int tk__tb5_find_item(struct tb5_obj *o, uint16_t want, struct dec *d)
{
	struct items it = {o->meta, o->meta_len, 0};
	uint16_t t;
	int r;
	while ((r = tk__tb5_next_item(&it, &t, d)) == 1)
		if (t == want)
			return 1;
	return 0;
}

TBRW_U32 tk__tb5_decode_all(struct tb5_handle *h, struct tb5_obj *o, uint16_t want, size_t elem, decode_fn *fn,
			   void **out, size_t *n_out)
{
	struct items it = {o->meta, o->meta_len, 0};
	struct dec d;
	uint16_t t;
	size_t n = 0, cap = 0;
	unsigned char *arr = NULL;
	int r;

	while ((r = tk__tb5_next_item(&it, &t, &d)) == 1) {
		if (t != want)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			unsigned char *na = realloc(arr, cap * elem);
			if (na == NULL) {
				free(arr);
				return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
			}
			arr = na;
		}
		memset(arr + n * elem, 0, elem);
		if (!fn(h, &d, arr + n * elem) || d.bad) {
			free(arr);
			return tk__tb5_bad_item(h, o, "record");
		}
		n++;
	}
	if (r < 0) {
		free(arr);
		return tk__tb5_bad_item(h, o, "record");
	}
	*out = arr;
	*n_out = n;
	return VT_SUCCESS;
}
TBRW_U32 tk__tb5_enumerate_array(void *base, size_t elem, size_t n, TBRW_U64 start, array_cb *call, void *fn,
				void *user, const char *what)
{
	const size_t batch = 4096;

	for (size_t i = (size_t)(start < n ? start : n); i < n;) {
		size_t k = n - i < batch ? n - i : batch;
		TBRW_U32 r = call(fn, (unsigned char *)base + i * elem, (TBRW_U32)(k * elem), (TBRW_U32)k, user);
		if (r == FALSE)
			return VT_SUCCESS;
		if (r != TRUE)
			return tk__tb5_callback_error(r, what);
		i += k;
	}
	return VT_SUCCESS;
}
