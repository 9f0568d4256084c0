/* SPDX-License-Identifier: MIT */
/*
 * tb5_strings.c: the string table of a .tb5 handle: interning wide strings as UTF-8 with a
 * hash (src/common/tk_hash.h), writing them as strings chunks before anything refers to
 * them, loading them back, and TBRW_convert_uniqueid_to_string().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>

#include "common/tk_hash.h"
#include "tb5/tb5_internal.h"

/* ---- strings ----------------------------------------------------------------------------- */

int tk__tb5_string_add(struct tb5_handle *h, char *s, uint32_t len)
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
	if (tk__hash_cap(h->n_strings + 1, 256) > h->hash_cap) {
		size_t ncap = tk__hash_cap(h->n_strings + 1, h->hash_cap ? h->hash_cap : 256);
		uint64_t *nt = calloc(ncap, sizeof *nt);
		if (nt == NULL)
			return -1;
		for (size_t i = 0; i < h->hash_cap; i++) {
			uint64_t v = h->hash_ids[i];
			if (v == 0)
				continue;
			size_t k = tk__hash_bytes(h->strings[v - 1], h->string_len[v - 1]) & (ncap - 1);
			while (nt[k] != 0)
				k = tk__hash_next(k, ncap - 1);
			nt[k] = v;
		}
		free(h->hash_ids);
		h->hash_ids = nt;
		h->hash_cap = ncap;
	}
	size_t k = tk__hash_bytes(h->strings[idx], h->string_len[idx]) & (h->hash_cap - 1);
	while (h->hash_ids[k] != 0)
		k = tk__hash_next(k, h->hash_cap - 1);
	h->hash_ids[k] = idx + 1;
	return 0;
}

TBRW_U32 tk__tb5_string_id(struct tb5_handle *h, const TBRW_CHAR *s, uint64_t *id)
{
	size_t len;
	char *u;

	*id = 0;
	if (s == NULL)
		return VT_SUCCESS;
	u = tk__tb5_wcs_to_utf8_alloc(s, &len);
	if (u == NULL)
		return tk__tb5_fail(TBRW_INVALID_STRING, "%s: a string holds an invalid character or exceeds %u bytes",
				h->path, TB5_MAX_STRING);
	pthread_mutex_lock(&h->lock);
	if (h->hash_cap > 0) {
		size_t k = tk__hash_bytes(u, len) & (h->hash_cap - 1);
		while (h->hash_ids[k] != 0) {
			uint64_t v = h->hash_ids[k];
			if (h->string_len[v - 1] == len && memcmp(h->strings[v - 1], u, len) == 0) {
				pthread_mutex_unlock(&h->lock);
				free(u);
				*id = v;
				return VT_SUCCESS;
			}
			k = tk__hash_next(k, h->hash_cap - 1);
		}
	}
	if (tk__tb5_string_add(h, u, (uint32_t)len) != 0 || hash_insert(h, h->n_strings - 1) != 0) {
		pthread_mutex_unlock(&h->lock);
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	*id = h->n_strings;
	pthread_mutex_unlock(&h->lock);
	return VT_SUCCESS;
}

TBRW_U32 tk__tb5_flush_strings(struct tb5_handle *h)
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
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	for (i = first; i < first + n; i++) {
		tb5_put32(buf + at, h->string_len[i]);
		memcpy(buf + at + 4, h->strings[i], h->string_len[i]);
		at += 4 + (size_t)h->string_len[i];
	}
	rc = tk__tb5_chunk_prepare(h, CK_STRINGS, 0, first, (uint32_t)n, buf, len, &c);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_chunk_place_locked(h, NULL, &c);
	if (rc == VT_SUCCESS)
		h->n_strings_flushed = first + n;
	pthread_mutex_unlock(&h->lock);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_chunk_store(h, &c);
	free(buf);
	return rc;
}

TBRW_U32 tk__tb5_load_strings_chunk(struct tb5_handle *h, const struct tb5_chunk_ref *c, const unsigned char *p)
{
	size_t at = 0;

	if (c->first != h->n_strings)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: string chunk at byte offset %llu starts at string %llu, "
						   "expected %llu",
				h->path, (unsigned long long)c->offset, (unsigned long long)c->first,
				(unsigned long long)h->n_strings);
	for (uint32_t i = 0; i < c->count; i++) {
		uint32_t len;
		char *s;
		if (at + 4 > c->raw_len || (len = tb5_get32(p + at)) > c->raw_len - at - 4 || len > TB5_MAX_STRING)
			return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: string chunk at byte offset %llu: string %u overruns it",
					h->path, (unsigned long long)c->offset, i);
		s = malloc(len + 1u);
		if (s == NULL)
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
		memcpy(s, p + at + 4, len);
		s[len] = '\0';
		if (tk__tb5_string_add(h, s, len) != 0) {
			free(s);
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
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
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_convert_uniqueid_to_string: NULL argument");
	id = string_id->soi_uniqueid;
	pthread_mutex_lock(&h->lock);
	if (id == 0 || id > h->n_strings) {
		pthread_mutex_unlock(&h->lock);
		return tk__tb5_fail(TBRW_INVALID_STRING, "%s: no string has unique id %llu", h->path,
				(unsigned long long)id);
	}
	need = tk__tb5_utf8_to_wcs_n(h->strings[id - 1], h->string_len[id - 1], NULL, 0);
	if (need != 0 && via_ptr) {
		dst = soi_buf_get(need);
		size_of_buffer = need;
		if (dst == NULL)
			rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory converting string %llu", (unsigned long long)id);
	}
	if (rc != VT_SUCCESS) {
		/* reported above */
	} else if (need == 0) {
		rc = tk__tb5_fail(TBRW_INVALID_STRING, "%s: string %llu is not valid UTF-8", h->path,
			      (unsigned long long)id);
	} else if (need > size_of_buffer) {
		rc = tk__tb5_fail(TBRW_BUFFER_TOO_SMALL, "%s: string %llu needs %zu wide characters (with its NUL), the "
						     "buffer holds %u",
			      h->path, (unsigned long long)id, need, size_of_buffer);
	} else {
		tk__tb5_utf8_to_wcs_n(h->strings[id - 1], h->string_len[id - 1], dst, size_of_buffer);
	}
	pthread_mutex_unlock(&h->lock);
	if (size_buffer_needed != NULL && need != 0)
		*size_buffer_needed = (TBRW_U32)need;
	if (rc == VT_SUCCESS)
		string_id->soi_ptr = dst;
	return rc;
}
