/* SPDX-License-Identifier: MIT */
/*
 * tb5_sections.c: the reading/writing/done state machine of global sections, streams and
 * stream sections (seed 000 chapter 5 and 9.1.1-9.1.3).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb5/tb5_items.h"

static const char *const global_names[] = {"hardware", "software", "process/thread", "module", "user-defined global",
					   "version information"};
static const char *const stream_names[] = {"event description", "data description", "data", "user-defined stream",
					   "stream information"};

/* ---- section state ------------------------------------------------------------------------ */

static int global_ok(TBRW_SECTION_IDENTIFIER s)
{
	return (unsigned)s <= (unsigned)TBRW_VERSION_INFO_SECTION;
}
static int stream_sec_ok(TBRW_STREAM_SECTION_IDENTIFIER s)
{
	return (unsigned)s <= (unsigned)TBRW_STREAM_INFO_SECTION;
}

static int stream_exists(struct tb5_handle *h, uint32_t s)
{
	struct tb5_stream *st = tk__tb5_stream_at(h, s, 0);
	if (st == NULL)
		return 0;
	if (st->exists)
		return 1;
	for (int k = 0; k <= (int)TBRW_STREAM_INFO_SECTION; k++) {
		struct tb5_obj *o = tk__tb5_obj_find(h, OBJ_STREAM_SEC(s, k));
		if (o != NULL && o->state == OBJ_DONE && o->from_file) {
			st->exists = 1;
			return 1;
		}
	}
	return 0;
}

TBRW_U32 TBRW_writing_section(TBRW_PTR ptr, TBRW_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	if (!global_ok(section))
		return tk__tb5_fail(TBRW_INVALID_SECTION, "TBRW_writing_section: %d is not a global section identifier",
				(int)section);
	if (!h->writable)
		return tk__tb5_fail(TBRW_READ_ONLY, "%s: opened for reading only", h->path);
	pthread_mutex_lock(&h->lock);
	o = tk__tb5_obj_get(h, OBJ_GLOBAL(section));
	if (o == NULL)
		rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	else if (o->state == OBJ_DONE)
		rc = tk__tb5_fail(TBRW_SECTION_EXISTS, "%s: the %s section already exists", h->path, global_names[section]);
	else if (o->state == OBJ_WRITING || o->readers > 0)
		rc = tk__tb5_fail(TBRW_SECTION_BUSY, "%s: the %s section is already open", h->path, global_names[section]);
	else
		o->state = OBJ_WRITING;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

TBRW_U32 TBRW_reading_section(TBRW_PTR ptr, TBRW_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	if (!global_ok(section))
		return tk__tb5_fail(TBRW_INVALID_SECTION, "TBRW_reading_section: %d is not a global section identifier",
				(int)section);
	pthread_mutex_lock(&h->lock);
	o = tk__tb5_obj_find(h, OBJ_GLOBAL(section));
	if (o == NULL || o->state == OBJ_ABSENT)
		rc = tk__tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: the file has no %s section", h->path, global_names[section]);
	else if (o->state == OBJ_WRITING)
		rc = tk__tb5_fail(TBRW_SECTION_BUSY, "%s: the %s section is being written", h->path, global_names[section]);
	else
		o->readers++;
	pthread_mutex_unlock(&h->lock);
	if (rc == VT_SUCCESS) {
		rc = tk__tb5_obj_load(h, o);
		if (rc != VT_SUCCESS) {
			pthread_mutex_lock(&h->lock);
			o->readers--;
			pthread_mutex_unlock(&h->lock);
		}
	}
	return rc;
}

TBRW_U32 TBRW_done_section(TBRW_PTR ptr, TBRW_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;

	CHECK_HANDLE(h);
	if (!global_ok(section))
		return tk__tb5_fail(TBRW_INVALID_SECTION, "TBRW_done_section: %d is not a global section identifier",
				(int)section);
	pthread_mutex_lock(&h->lock);
	o = tk__tb5_obj_find(h, OBJ_GLOBAL(section));
	if (o != NULL && o->readers > 0) {
		o->readers--;
		pthread_mutex_unlock(&h->lock);
		return VT_SUCCESS;
	}
	pthread_mutex_unlock(&h->lock);
	if (o == NULL || o->state != OBJ_WRITING)
		return tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_done_section(%s) without TBRW_writing_section or "
							"TBRW_reading_section",
				h->path, global_names[section]);
	if (section == TBRW_HARDWARE_SECTION && !tk__tb5_has_item(o, IT_SYSTEM))
		return tk__tb5_fail(TBRW_VALIDATION_FAILED, "%s: the hardware section needs TBRW_set_system", h->path);
	if (section == TBRW_VERSION_INFO_SECTION && !tk__tb5_has_item(o, IT_VERSION))
		return tk__tb5_fail(TBRW_VALIDATION_FAILED, "%s: the version information section needs TBRW_set_version_info",
				h->path);
	if (section == TBRW_SOFTWARE_SECTION && o->buf_len == 0)
		return tk__tb5_fail(TBRW_VALIDATION_FAILED, "%s: the software section needs a host, OS or application",
				h->path);
	if (section == TBRW_USER_DEFINED_GLOBAL_SECTION && o->buf_len == 0)
		return tk__tb5_fail(TBRW_VALIDATION_FAILED, "%s: the user-defined section needs TBRW_set_user_defined_global",
				h->path);
	if (section == TBRW_MODULE_SECTION || section == TBRW_PROCESS_THREAD_SECTION) {
		h->modules_loaded = 0;
		h->pt.loaded = 0;
	}
	return tk__tb5_obj_finish(h, o);
}

/* The object a set_/add_ call writes to: open for writing, or an error. */
TBRW_U32 tk__tb5_writing_obj(struct tb5_handle *h, uint32_t id, const char *what, struct tb5_obj **out)
{
	struct tb5_obj *o = NULL;

	pthread_mutex_lock(&h->lock);
	o = tk__tb5_obj_find(h, id);
	pthread_mutex_unlock(&h->lock);
	if (o == NULL || o->state != OBJ_WRITING)
		return tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: %s before its section was opened with TBRW_writing_*",
				h->path, what);
	*out = o;
	return VT_SUCCESS;
}

TBRW_U32 tk__tb5_reading_obj(struct tb5_handle *h, uint32_t id, const char *what, struct tb5_obj **out)
{
	struct tb5_obj *o = NULL;

	pthread_mutex_lock(&h->lock);
	o = tk__tb5_obj_find(h, id);
	pthread_mutex_unlock(&h->lock);
	if (o == NULL || o->readers <= 0 || !o->meta_loaded)
		return tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: %s before its section was opened with TBRW_reading_*",
				h->path, what);
	*out = o;
	return VT_SUCCESS;
}

/* ---- streams ------------------------------------------------------------------------------- */

TBRW_U32 TBRW_get_number_data_streams(TBRW_PTR ptr, TBRW_U32 *numStreams)
{
	struct tb5_handle *h = ptr;

	CHECK_HANDLE(h);
	if (numStreams == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_number_data_streams: numStreams is NULL");
	pthread_mutex_lock(&h->lock);
	*numStreams = h->n_streams;
	pthread_mutex_unlock(&h->lock);
	return VT_SUCCESS;
}

TBRW_U32 TBRW_writing_stream(TBRW_PTR ptr, TBRW_U32 stream)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	if (!h->writable)
		return tk__tb5_fail(TBRW_READ_ONLY, "%s: opened for reading only", h->path);
	pthread_mutex_lock(&h->lock);
	if (stream > h->n_streams || stream >= TB5_MAX_STREAMS) {
		rc = tk__tb5_fail(TBRW_INVALID_STREAM, "%s: TBRW_writing_stream(%u): the file has %u streams; the next one "
						   "is %u",
			      h->path, stream, h->n_streams, h->n_streams);
	} else if ((st = tk__tb5_stream_at(h, stream, 1)) == NULL) {
		rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	} else if (stream_exists(h, stream)) {
		rc = tk__tb5_fail(TBRW_SECTION_EXISTS, "%s: stream %u already exists", h->path, stream);
	} else if (st->writing || st->readers) {
		rc = tk__tb5_fail(TBRW_SECTION_BUSY, "%s: stream %u is already open", h->path, stream);
	} else {
		st->writing = 1;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

TBRW_U32 TBRW_reading_stream(TBRW_PTR ptr, TBRW_U32 stream)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	pthread_mutex_lock(&h->lock);
	st = tk__tb5_stream_at(h, stream, 0);
	if (stream >= h->n_streams)
		rc = tk__tb5_fail(TBRW_INVALID_STREAM, "%s: stream %u does not exist (the file has %u)", h->path, stream,
			      h->n_streams);
	else if (st == NULL || !stream_exists(h, stream))
		rc = tk__tb5_fail(TBRW_STREAM_NOT_FOUND, "%s: stream %u is not complete", h->path, stream);
	else if (st->writing)
		rc = tk__tb5_fail(TBRW_SECTION_BUSY, "%s: stream %u is being written", h->path, stream);
	else
		st->readers++;
	pthread_mutex_unlock(&h->lock);
	return rc;
}

TBRW_U32 TBRW_done_stream(TBRW_PTR ptr, TBRW_U32 stream)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	pthread_mutex_lock(&h->lock);
	st = tk__tb5_stream_at(h, stream, 0);
	if (st == NULL || (!st->writing && st->readers == 0)) {
		rc = tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_done_stream(%u) without TBRW_writing_stream or "
						      "TBRW_reading_stream",
			      h->path, stream);
	} else if (st->readers > 0 && !st->writing) {
		st->readers--;
	} else {
		for (int k = 0; k <= (int)TBRW_STREAM_INFO_SECTION && rc == VT_SUCCESS; k++) {
			struct tb5_obj *o = tk__tb5_obj_find(h, OBJ_STREAM_SEC(stream, k));
			if (o != NULL && (o->state == OBJ_WRITING || o->readers > 0))
				rc = tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: stream %u: the %s section is still open",
					      h->path, stream, stream_names[k]);
		}
		static const TBRW_STREAM_SECTION_IDENTIFIER required[] = {TBRW_STREAM_INFO_SECTION,
									   TBRW_DATA_DESCRIPTION_SECTION};
		for (size_t k = 0; k < 2 && rc == VT_SUCCESS; k++) {
			struct tb5_obj *o = tk__tb5_obj_find(h, OBJ_STREAM_SEC(stream, required[k]));
			if (o == NULL || o->state != OBJ_DONE)
				rc = tk__tb5_fail(TBRW_VALIDATION_FAILED, "%s: stream %u has no %s section", h->path, stream,
					      stream_names[required[k]]);
		}
		if (rc == VT_SUCCESS) {
			st->writing = 0;
			st->exists = 1;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

static const char *sec_name(TBRW_STREAM_SECTION_IDENTIFIER s)
{
	return stream_names[s];
}

TBRW_U32 TBRW_writing_stream_section(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	if (!stream_sec_ok(section))
		return tk__tb5_fail(TBRW_INVALID_SECTION, "TBRW_writing_stream_section: %d is not a stream section identifier",
				(int)section);
	if (!h->writable)
		return tk__tb5_fail(TBRW_READ_ONLY, "%s: opened for reading only", h->path);
	pthread_mutex_lock(&h->lock);
	st = tk__tb5_stream_at(h, stream, 0);
	if (stream >= h->n_streams || st == NULL)
		rc = tk__tb5_fail(TBRW_INVALID_STREAM, "%s: stream %u does not exist (call TBRW_writing_stream first)",
			      h->path, stream);
	else if (!st->writing)
		rc = tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: stream %u is not open for writing", h->path, stream);
	else if ((o = tk__tb5_obj_get(h, OBJ_STREAM_SEC(stream, section))) == NULL)
		rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	else if (o->state == OBJ_DONE)
		rc = tk__tb5_fail(TBRW_SECTION_EXISTS, "%s: stream %u already has a %s section", h->path, stream,
			      sec_name(section));
	else if (o->state == OBJ_WRITING)
		rc = tk__tb5_fail(TBRW_SECTION_BUSY, "%s: stream %u: the %s section is already open", h->path, stream,
			      sec_name(section));
	else if (section == TBRW_DATA_SECTION && !st->desc_known)
		rc = tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: stream %u: write the data description section before the "
						      "data section",
			      h->path, stream);
	else {
		o->state = OBJ_WRITING;
		if (section == TBRW_DATA_SECTION)
			st->data_obj = o;
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

TBRW_U32 TBRW_reading_stream_section(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc = VT_SUCCESS;

	CHECK_HANDLE(h);
	if (!stream_sec_ok(section))
		return tk__tb5_fail(TBRW_INVALID_SECTION, "TBRW_reading_stream_section: %d is not a stream section identifier",
				(int)section);
	pthread_mutex_lock(&h->lock);
	st = tk__tb5_stream_at(h, stream, 0);
	if (stream >= h->n_streams || st == NULL)
		rc = tk__tb5_fail(TBRW_INVALID_STREAM, "%s: stream %u does not exist (the file has %u)", h->path, stream,
			      h->n_streams);
	else if (st->readers == 0)
		rc = tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: stream %u is not open for reading (call "
						      "TBRW_reading_stream first)",
			      h->path, stream);
	else if ((o = tk__tb5_obj_find(h, OBJ_STREAM_SEC(stream, section))) == NULL || o->state == OBJ_ABSENT)
		rc = tk__tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: stream %u has no %s section", h->path, stream,
			      sec_name(section));
	else if (o->state == OBJ_WRITING)
		rc = tk__tb5_fail(TBRW_SECTION_BUSY, "%s: stream %u: the %s section is being written", h->path, stream,
			      sec_name(section));
	else
		o->readers++;
	pthread_mutex_unlock(&h->lock);
	if (rc == VT_SUCCESS && section != TBRW_DATA_SECTION)
		rc = tk__tb5_obj_load(h, o);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_stream_layout(h, stream);
	if (rc != VT_SUCCESS && o != NULL && o->readers > 0 && tk__tb5_obj_find(h, OBJ_STREAM_SEC(stream, section)) == o) {
		pthread_mutex_lock(&h->lock);
		o->readers--;
		pthread_mutex_unlock(&h->lock);
	}
	return rc;
}

TBRW_U32 TBRW_done_stream_section(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section)
{
	struct tb5_handle *h = ptr;
	struct tb5_stream *st = NULL;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (!stream_sec_ok(section))
		return tk__tb5_fail(TBRW_INVALID_SECTION, "TBRW_done_stream_section: %d is not a stream section identifier",
				(int)section);
	pthread_mutex_lock(&h->lock);
	st = tk__tb5_stream_at(h, stream, 0);
	o = st != NULL ? tk__tb5_obj_find(h, OBJ_STREAM_SEC(stream, section)) : NULL;
	if (o != NULL && o->readers > 0) {
		o->readers--;
		pthread_mutex_unlock(&h->lock);
		return VT_SUCCESS;
	}
	pthread_mutex_unlock(&h->lock);
	if (o == NULL || o->state != OBJ_WRITING)
		return tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_done_stream_section(%u, %s) without its "
							"TBRW_writing_stream_section or TBRW_reading_stream_section",
				h->path, stream, sec_name(section));
	switch (section) {
	case TBRW_STREAM_INFO_SECTION:
		if (!tk__tb5_has_item(o, IT_STREAM_INFO))
			return tk__tb5_fail(TBRW_VALIDATION_FAILED, "%s: stream %u: the stream information section needs "
								"TBRW_set_stream_info",
					h->path, stream);
		break;
	case TBRW_DATA_DESCRIPTION_SECTION:
		if (!tk__tb5_has_item(o, IT_DESC))
			return tk__tb5_fail(TBRW_VALIDATION_FAILED, "%s: stream %u: the data description needs at least one "
								"entry",
					h->path, stream);
		break;
	case TBRW_USER_DEFINED_STREAM_SECTION:
		if (!tk__tb5_has_item(o, IT_USER))
			return tk__tb5_fail(TBRW_VALIDATION_FAILED, "%s: stream %u: the user-defined section needs "
								"TBRW_set_user_defined_stream",
					h->path, stream);
		break;
	case TBRW_DATA_SECTION:
		if (st->partial_len != 0)
			return tk__tb5_fail(TBRW_VALIDATION_FAILED, "%s: stream %u: the last record is incomplete (%u of %u "
								"bytes)",
					h->path, stream, st->partial_len, st->record_size);
		rc = tk__tb5_flush_data(h, st, o);
		if (rc != VT_SUCCESS)
			return rc;
		rc = tk__tb5_write_chunk(h, o, CK_END, o->id, o->total, 0, NULL, 0);
		if (rc == VT_SUCCESS) {
			free(o->buf);
			o->buf = NULL;
			o->buf_len = o->buf_cap = 0;
			o->state = OBJ_DONE;
			st->data_obj = NULL;
		}
		return rc;
	default:
		break;
	}
	rc = tk__tb5_obj_finish(h, o);
	if (rc == VT_SUCCESS && section == TBRW_DATA_DESCRIPTION_SECTION) {
		st->desc_known = 0;
		rc = tk__tb5_stream_layout(h, stream);
		if (rc != VT_SUCCESS) {
			/* the section stays, but the layout error is the caller's */
			return rc;
		}
	}
	return rc;
}

/* Stream section object open for writing. */
TBRW_U32 tk__tb5_stream_writing_obj(struct tb5_handle *h, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section,
				   const char *what, struct tb5_obj **out)
{
	if (stream >= TB5_MAX_STREAMS || tk__tb5_stream_at(h, stream, 0) == NULL)
		return tk__tb5_fail(TBRW_INVALID_STREAM, "%s: %s: stream %u does not exist", h->path, what, stream);
	return tk__tb5_writing_obj(h, OBJ_STREAM_SEC(stream, section), what, out);
}

TBRW_U32 tk__tb5_stream_reading_obj(struct tb5_handle *h, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section,
				   const char *what, struct tb5_obj **out)
{
	if (stream >= TB5_MAX_STREAMS || tk__tb5_stream_at(h, stream, 0) == NULL)
		return tk__tb5_fail(TBRW_INVALID_STREAM, "%s: %s: stream %u does not exist", h->path, what, stream);
	return tk__tb5_reading_obj(h, OBJ_STREAM_SEC(stream, section), what, out);
}
