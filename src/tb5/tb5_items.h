/* SPDX-License-Identifier: MIT */
/*
 * tb5_items.h: what the API files of src/tb5/ share: the item types and their encoder and
 * decoder (docs/tb5-format.md, "Items"), the handle and size checks, and the item helpers of
 * tb5_items.c.
 */
#ifndef TB5_ITEMS_H
#define TB5_ITEMS_H

#include <stdlib.h>
#include <string.h>

#include "tb5/tb5_internal.h"

enum item_type {
	IT_SYSTEM = 1, IT_NODE, IT_CPU, IT_ARCH, IT_CPUID32, IT_CPUID64, IT_HOST, IT_OS, IT_APP, IT_PID, IT_TID,
	IT_MODULE, IT_VERSION, IT_USER, IT_STREAM_INFO, IT_EVENT, IT_DETAIL, IT_DESC
};

/* ---- item encoding ---------------------------------------------------------------------- */

struct enc {
	unsigned char buf[256];
	size_t len;
};

static inline void e16(struct enc *e, uint32_t v)
{
	tb5_put16(e->buf + e->len, (uint16_t)v);
	e->len += 2;
}
static inline void e32(struct enc *e, uint32_t v)
{
	tb5_put32(e->buf + e->len, v);
	e->len += 4;
}
static inline void e64(struct enc *e, uint64_t v)
{
	tb5_put64(e->buf + e->len, v);
	e->len += 8;
}

struct dec {
	const unsigned char *p;
	size_t len, at;
	int bad;
};
static inline uint32_t d16(struct dec *d)
{
	if (d->at + 2 > d->len) {
		d->bad = 1;
		return 0;
	}
	d->at += 2;
	return tb5_get16(d->p + d->at - 2);
}
static inline uint32_t d32(struct dec *d)
{
	if (d->at + 4 > d->len) {
		d->bad = 1;
		return 0;
	}
	d->at += 4;
	return tb5_get32(d->p + d->at - 4);
}
static inline uint64_t d64(struct dec *d)
{
	if (d->at + 8 > d->len) {
		d->bad = 1;
		return 0;
	}
	d->at += 8;
	return tb5_get64(d->p + d->at - 8);
}

/* Walks the items of a loaded object. */
struct items {
	const unsigned char *p;
	size_t len, at;
};

#define CHECK_HANDLE(h)                                                                        \
	do {                                                                                   \
		if ((h) == NULL)                                                               \
			return tk__tb5_fail(TBRW_INVALID_PARAMETER, "%s: NULL TBRW handle", __func__); \
	} while (0)

#define NEED_SIZE(field, type, what)                                                                   \
	do {                                                                                           \
		if ((field) != sizeof(type))                                                           \
			return tk__tb5_fail(TBRW_INVALID_PARAMETER, "%s: %s: size field is %u, expected %zu", \
					h->path, what, (unsigned)(field), sizeof(type));               \
	} while (0)

/* Decodes every item of type want into an array of size elem via fn. */
typedef int decode_fn(struct tb5_handle *h, struct dec *d, void *out);

/* Enumerates an array in batches with the 5.9 protocol. */
typedef TBRW_U32 array_cb(void *fn, void *data, TBRW_U32 size, TBRW_U32 n, void *user);

/* The start of a set_ (add_) and of a get_ function on a global section. */
#define SET_PROLOGUE(section, fname, item, arg)                                                    \
	struct tb5_handle *h = ptr;                                                                \
	struct tb5_obj *o = NULL;                                                                  \
	struct enc e;                                                                              \
	TBRW_U32 rc;                                                                               \
	CHECK_HANDLE(h);                                                                           \
	if ((arg) == NULL)                                                                         \
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, fname ": argument is NULL");               \
	rc = tk__tb5_writing_obj(h, OBJ_GLOBAL(section), fname, &o);                                       \
	if (rc != VT_SUCCESS)                                                                      \
		return rc;                                                                         \
	if (item != 0 && tk__tb5_has_item(o, item))                                                        \
		return tk__tb5_fail(TBRW_SECTION_EXISTS, "%s: " fname " called twice", h->path);       \
	e.len = 0

#define GET_PROLOGUE(section, fname, item)                                                         \
	struct tb5_handle *h = ptr;                                                                \
	struct tb5_obj *o = NULL;                                                                  \
	struct dec d;                                                                              \
	TBRW_U32 rc;                                                                               \
	CHECK_HANDLE(h);                                                                           \
	rc = tk__tb5_reading_obj(h, OBJ_GLOBAL(section), fname, &o);                                       \
	if (rc != VT_SUCCESS)                                                                      \
		return rc;                                                                         \
	if (!tk__tb5_find_item(o, item, &d))                                                               \
		return tk__tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: " fname ": the section holds no such data", \
				h->path)

/* ---- items: append, walk, check, decode; string ids; size query, enumeration (tb5_items.c) ---- */
TBRW_U32 tk__tb5_put_item(struct tb5_obj *obj, uint16_t type, const void *payload, size_t len);
int tk__tb5_next_item(struct items *it, uint16_t *type, struct dec *d);
TBRW_U32 tk__tb5_bad_item(struct tb5_handle *h, struct tb5_obj *o, const char *what);
int tk__tb5_has_item(struct tb5_obj *o, uint16_t want);
int tk__tb5_find_item(struct tb5_obj *o, uint16_t want, struct dec *d);
TBRW_U32 tk__tb5_sid(struct tb5_handle *h, const TBRW_STRING_OR_ID *s, struct enc *e);
void tk__tb5_rid(struct tb5_handle *h, struct dec *d, TBRW_STRING_OR_ID *s);
TBRW_U32 tk__tb5_decode_all(struct tb5_handle *h, struct tb5_obj *o, uint16_t want, size_t elem, decode_fn *fn,
			void **out, size_t *n_out);
TBRW_U32 tk__tb5_enumerate_array(void *base, size_t elem, size_t n, TBRW_U64 start, array_cb *call, void *fn,
			void *user, const char *what);
TBRW_U32 tk__tb5_give(struct tb5_handle *h, const char *what, const void *src, size_t size, TBRW_U32 size_of_buffer,
			void *buf, TBRW_U32 *used);

/* ---- the (stream) section an API call works on, checked against its state (tb5_sections.c) ---- */
TBRW_U32 tk__tb5_writing_obj(struct tb5_handle *h, uint32_t id, const char *what, struct tb5_obj **out);
TBRW_U32 tk__tb5_reading_obj(struct tb5_handle *h, uint32_t id, const char *what, struct tb5_obj **out);
TBRW_U32 tk__tb5_stream_writing_obj(struct tb5_handle *h, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section,
			const char *what, struct tb5_obj **out);
TBRW_U32 tk__tb5_stream_reading_obj(struct tb5_handle *h, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section,
			const char *what, struct tb5_obj **out);

/* ---- a stream's buffered records written as data chunks (tb5_data.c) ---- */
TBRW_U32 tk__tb5_flush_data(struct tb5_handle *h, struct tb5_stream *st, struct tb5_obj *o);

/* ---- a data descriptor entry decoded (decode_fn) (tb5_stream.c) ---- */
int tk__tb5_dec_desc(struct tb5_handle *h, struct dec *d, void *out);

#endif
