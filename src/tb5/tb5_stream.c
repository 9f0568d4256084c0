/* SPDX-License-Identifier: MIT */
/*
 * tb5_stream.c: stream information, user-defined stream data, events and the data
 * description, and the record layout worked out from it (seed 9.3).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb5/tb5_items.h"

TBRW_U32 TBRW_set_stream_info(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_INFO *si)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct enc e = {.len = 0};
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (si == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_set_stream_info: stream_info is NULL");
	rc = tk__tb5_stream_writing_obj(h, stream, TBRW_STREAM_INFO_SECTION, "TBRW_set_stream_info", &o);
	if (rc != VT_SUCCESS)
		return rc;
	if (tk__tb5_has_item(o, IT_STREAM_INFO))
		return tk__tb5_fail(TBRW_SECTION_EXISTS, "%s: TBRW_set_stream_info called twice for stream %u", h->path,
				stream);
	NEED_SIZE(si->stream_info_size, TBRW_STREAM_INFO, "TBRW_STREAM_INFO");
	e32(&e, si->sampling_duration);
	e32(&e, si->stream_type);
	e32(&e, si->sampling_interval);
	e32(&e, si->sampling_start_time.dwLowDateTime);
	e32(&e, si->sampling_start_time.dwHighDateTime);
	e32(&e, si->sampling_end_time.dwLowDateTime);
	e32(&e, si->sampling_end_time.dwHighDateTime);
	if ((rc = tk__tb5_sid(h, &si->command_line, &e)) != VT_SUCCESS || (rc = tk__tb5_sid(h, &si->cpu_mask, &e)) != VT_SUCCESS ||
	    (rc = tk__tb5_sid(h, &si->comment, &e)) != VT_SUCCESS)
		return rc;
	return tk__tb5_put_item(o, IT_STREAM_INFO, e.buf, e.len);
}

TBRW_U32 TBRW_get_stream_info(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_buffer, void *buf_ptr,
			      TBRW_U32 *size_buffer_used)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct dec d;
	TBRW_STREAM_INFO v;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	rc = tk__tb5_stream_reading_obj(h, stream, TBRW_STREAM_INFO_SECTION, "TBRW_get_stream_info", &o);
	if (rc != VT_SUCCESS)
		return rc;
	if (!tk__tb5_find_item(o, IT_STREAM_INFO, &d))
		return tk__tb5_bad_item(h, o, "stream information");
	memset(&v, 0, sizeof v);
	v.stream_info_size = sizeof v;
	v.sampling_duration = d32(&d);
	v.stream_type = d32(&d);
	v.sampling_interval = d32(&d);
	v.sampling_start_time.dwLowDateTime = d32(&d);
	v.sampling_start_time.dwHighDateTime = d32(&d);
	v.sampling_end_time.dwLowDateTime = d32(&d);
	v.sampling_end_time.dwHighDateTime = d32(&d);
	tk__tb5_rid(h, &d, &v.command_line);
	tk__tb5_rid(h, &d, &v.cpu_mask);
	tk__tb5_rid(h, &d, &v.comment);
	if (d.bad)
		return tk__tb5_bad_item(h, o, "stream information");
	return tk__tb5_give(h, "TBRW_get_stream_info", &v, sizeof v, size_of_buffer, buf_ptr, size_buffer_used);
}

TBRW_U32 TBRW_set_user_defined_stream(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_data, void *data_ptr)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (data_ptr == NULL && size_of_data != 0)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_set_user_defined_stream: data is NULL");
	rc = tk__tb5_stream_writing_obj(h, stream, TBRW_USER_DEFINED_STREAM_SECTION, "TBRW_set_user_defined_stream", &o);
	if (rc != VT_SUCCESS)
		return rc;
	if (tk__tb5_has_item(o, IT_USER))
		return tk__tb5_fail(TBRW_SECTION_EXISTS, "%s: TBRW_set_user_defined_stream called twice for stream %u",
				h->path, stream);
	return tk__tb5_put_item(o, IT_USER, data_ptr, size_of_data);
}

TBRW_U32 TBRW_get_user_defined_stream(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_buffer, void *buf_ptr,
				      TBRW_U32 *size_buffer_used)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct dec d;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	rc = tk__tb5_stream_reading_obj(h, stream, TBRW_USER_DEFINED_STREAM_SECTION, "TBRW_get_user_defined_stream", &o);
	if (rc != VT_SUCCESS)
		return rc;
	if (!tk__tb5_find_item(o, IT_USER, &d))
		return tk__tb5_bad_item(h, o, "user-defined");
	return tk__tb5_give(h, "TBRW_get_user_defined_stream", d.p, d.len, size_of_buffer, buf_ptr, size_buffer_used);
}

/* ---- events ---------------------------------------------------------------------------------- */

TBRW_U32 TBRW_add_event(TBRW_PTR ptr, TBRW_U32 stream, TBRW_EVENT *ev)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct enc e = {.len = 0};
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (ev == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_add_event: event is NULL");
	rc = tk__tb5_stream_writing_obj(h, stream, TBRW_EVENT_DESCRIPTION_SECTION, "TBRW_add_event", &o);
	if (rc != VT_SUCCESS)
		return rc;
	NEED_SIZE(ev->event_size, TBRW_EVENT, "TBRW_EVENT");
	if (ev->event_num_details > 0 && ev->event_detail_array == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "%s: event %u has details but no event_detail_array", h->path,
				ev->event_id);
	if (ev->event_num_details > 65536)
		return tk__tb5_fail(TBRW_TOO_BIG, "%s: event %u has %u details", h->path, ev->event_id, ev->event_num_details);
	e32(&e, ev->event_id);
	e32(&e, ev->event_num_details);
	e32(&e, ev->event_flags);
	e64(&e, ev->event_sav);
	if ((rc = tk__tb5_sid(h, &ev->event_name, &e)) != VT_SUCCESS || (rc = tk__tb5_sid(h, &ev->event_arch_name, &e)) != VT_SUCCESS)
		return rc;
	rc = tk__tb5_put_item(o, IT_EVENT, e.buf, e.len);
	for (TBRW_U32 i = 0; i < ev->event_num_details && rc == VT_SUCCESS; i++) {
		const TBRW_EVENT_DETAIL *x = &ev->event_detail_array[i];
		NEED_SIZE(x->detail_size, TBRW_EVENT_DETAIL, "TBRW_EVENT_DETAIL");
		e.len = 0;
		e16(&e, x->detail_access_size);
		e16(&e, (uint32_t)x->detail_method | ((uint32_t)x->detail_access << 8));
		e64(&e, x->detail_address);
		e64(&e, x->detail_value);
		e16(&e, (uint32_t)x->legacy_command | ((uint32_t)x->reserved1 << 8));
		e16(&e, x->reserved2);
		e32(&e, x->reserved3);
		rc = tk__tb5_put_item(o, IT_DETAIL, e.buf, e.len);
	}
	return rc;
}

TBRW_U32 TBRW_enumerate_events(TBRW_PTR ptr, TBRW_U32 stream, TBRW_EVENT_CALLBACK *callback_func, void *user_ptr,
			       TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct items it;
	struct dec d;
	uint16_t t;
	size_t n_ev = 0, n_det = 0, ei = 0, di = 0;
	TBRW_EVENT *evs;
	TBRW_EVENT_DETAIL *dets;
	uint64_t det_left = 0;
	TBRW_U32 rc;
	int r;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_events: no callback");
	rc = tk__tb5_stream_reading_obj(h, stream, TBRW_EVENT_DESCRIPTION_SECTION, "TBRW_enumerate_events", &o);
	if (rc != VT_SUCCESS)
		return rc;
	it = (struct items){o->meta, o->meta_len, 0};
	while ((r = tk__tb5_next_item(&it, &t, &d)) == 1) {
		if (t == IT_EVENT)
			n_ev++;
		else if (t == IT_DETAIL)
			n_det++;
		else
			return tk__tb5_bad_item(h, o, "event");
	}
	if (r < 0)
		return tk__tb5_bad_item(h, o, "event");
	evs = calloc(n_ev * sizeof *evs + n_det * sizeof *dets + 1, 1);
	if (evs == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	dets = (TBRW_EVENT_DETAIL *)(void *)(evs + n_ev);
	it.at = 0;
	while (tk__tb5_next_item(&it, &t, &d) == 1) {
		if (t == IT_EVENT) {
			if (det_left != 0)
				break;
			TBRW_EVENT *ev = &evs[ei++];
			ev->event_size = sizeof *ev;
			ev->event_id = d32(&d);
			ev->event_num_details = d32(&d);
			ev->event_flags = d32(&d);
			ev->event_sav = d64(&d);
			tk__tb5_rid(h, &d, &ev->event_name);
			tk__tb5_rid(h, &d, &ev->event_arch_name);
			ev->event_detail_array = ev->event_num_details ? &dets[di] : NULL;
			det_left = ev->event_num_details;
			if (det_left > n_det - di)
				d.bad = 1;
		} else {
			if (det_left == 0)
				d.bad = 1;
			else {
				TBRW_EVENT_DETAIL *x = &dets[di++];
				uint32_t v;
				det_left--;
				x->detail_size = sizeof *x;
				x->detail_access_size = (TBRW_U16)d16(&d);
				v = d16(&d);
				x->detail_method = (TBRW_U8)v;
				x->detail_access = (TBRW_U8)(v >> 8);
				x->detail_address = d64(&d);
				x->detail_value = d64(&d);
				v = d16(&d);
				x->legacy_command = (TBRW_U8)v;
				x->reserved1 = (TBRW_U8)(v >> 8);
				x->reserved2 = (TBRW_U16)d16(&d);
				x->reserved3 = d32(&d);
			}
		}
		if (d.bad) {
			free(evs);
			return tk__tb5_bad_item(h, o, "event");
		}
	}
	if (det_left != 0 || ei != n_ev) {
		free(evs);
		return tk__tb5_bad_item(h, o, "event");
	}
	rc = VT_SUCCESS;
	if (start_index < n_ev) {
		r = (int)callback_func(evs + start_index, (TBRW_U32)((n_ev - start_index) * sizeof *evs),
				       (TBRW_U32)(n_ev - start_index), user_ptr);
		if ((TBRW_U32)r != TRUE && (TBRW_U32)r != FALSE)
			rc = tk__tb5_callback_error((TBRW_U32)r, "TBRW_enumerate_events");
	}
	free(evs);
	return rc;
}

/* ---- data descriptors -------------------------------------------------------------------- */

TBRW_U32 TBRW_add_data_descriptor_entry(TBRW_PTR ptr, TBRW_U32 stream, TBRW_SAMPREC_DESC_ENTRY *x)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	struct enc e = {.len = 0};
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (x == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_add_data_descriptor_entry: entry is NULL");
	rc = tk__tb5_stream_writing_obj(h, stream, TBRW_DATA_DESCRIPTION_SECTION, "TBRW_add_data_descriptor_entry", &o);
	if (rc != VT_SUCCESS)
		return rc;
	NEED_SIZE(x->desc_size, TBRW_SAMPREC_DESC_ENTRY, "TBRW_SAMPREC_DESC_ENTRY");
	if (x->desc_type == ST_LEGACY_SAMPLE_RECORD && stream != 0)
		return tk__tb5_fail(TBRW_LEGACY_RECORD_IN_STREAM, "%s: stream %u: legacy sample records "
							      "(ST_LEGACY_SAMPLE_RECORD) belong in stream 0 only",
				h->path, stream);
	if (x->desc_type >= ST_RESERVED_START)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "%s: stream %u: descriptor type 0x%x is reserved", h->path,
				stream, x->desc_type);
	if (x->desc_data_size == 0 || x->desc_data_size > TB5_MAX_RECORD ||
	    (uint64_t)x->desc_offset + x->desc_data_size > TB5_MAX_RECORD)
		return tk__tb5_fail(TBRW_RECORD_SIZE_MISMATCH, "%s: stream %u: descriptor entry of %u bytes at offset %u "
							   "(records are 1 byte to 16 MiB)",
				h->path, stream, x->desc_data_size, x->desc_offset);
	e32(&e, x->desc_offset);
	e16(&e, x->desc_type);
	e16(&e, x->desc_subtype);
	e32(&e, x->desc_data_size);
	e64(&e, x->desc_access_offset);
	e16(&e, (uint32_t)x->desc_access_type | ((uint32_t)x->desc_access_method << 8));
	e16(&e, (uint32_t)x->desc_sample_flag | ((uint32_t)x->reserved0 << 8));
	e32(&e, x->reserved1);
	if ((rc = tk__tb5_sid(h, &x->desc_name, &e)) != VT_SUCCESS)
		return rc;
	return tk__tb5_put_item(o, IT_DESC, e.buf, e.len);
}

int tk__tb5_dec_desc(struct tb5_handle *h, struct dec *d, void *out)
{
	TBRW_SAMPREC_DESC_ENTRY *x = out;
	uint32_t v;
	x->desc_size = sizeof *x;
	x->desc_offset = d32(d);
	x->desc_type = (TBRW_U16)d16(d);
	x->desc_subtype = (TBRW_U16)d16(d);
	x->desc_data_size = d32(d);
	x->desc_access_offset = d64(d);
	v = d16(d);
	x->desc_access_type = (TBRW_U8)v;
	x->desc_access_method = (TBRW_U8)(v >> 8);
	v = d16(d);
	x->desc_sample_flag = (TBRW_U8)v;
	x->reserved0 = (TBRW_U8)(v >> 8);
	x->reserved1 = d32(d);
	tk__tb5_rid(h, d, &x->desc_name);
	return 1;
}

/*
 * The offsets records are laid out with. Chapter 6 of the TBRW guide gives every entry offset
 * 0 and adds each piece with its own TBRW_add_data call: such entries (more than one, all at
 * 0) lie one after another, in the order they were added. Returns whether it rewrote them.
 */
static int desc_effective_offsets(TBRW_SAMPREC_DESC_ENTRY *x, size_t n)
{
	uint64_t at = 0;

	if (n < 2)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (x[i].desc_offset != 0)
			return 0;
	for (size_t i = 0; i < n; i++) {
		x[i].desc_offset = at > UINT32_MAX ? UINT32_MAX : (TBRW_U32)at;
		at += x[i].desc_data_size;
	}
	return 1;
}

static TBRW_U32 call_desc(void *fn, void *data, TBRW_U32 size, TBRW_U32 n, void *user)
{
	return ((TBRW_DATA_DESC_CALLBACK *)fn)(data, size, n, user);
}

TBRW_U32 TBRW_enumerate_data_descriptor_entries(TBRW_PTR ptr, TBRW_U32 stream, TBRW_DATA_DESC_CALLBACK *callback_func,
						void *user_ptr)
{
	struct tb5_handle *h = ptr;
	struct tb5_obj *o = NULL;
	void *arr = NULL;
	size_t n = 0;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_data_descriptor_entries: no callback");
	rc = tk__tb5_stream_reading_obj(h, stream, TBRW_DATA_DESCRIPTION_SECTION, "TBRW_enumerate_data_descriptor_entries", &o);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_decode_all(h, o, IT_DESC, sizeof(TBRW_SAMPREC_DESC_ENTRY), tk__tb5_dec_desc, &arr, &n);
	if (rc != VT_SUCCESS)
		return rc;
	/* the offsets the records really have, as the data enumeration lays them out */
	desc_effective_offsets(arr, n);
	rc = tk__tb5_enumerate_array(arr, sizeof(TBRW_SAMPREC_DESC_ENTRY), n, 0, call_desc, (void *)callback_func, user_ptr,
			     "TBRW_enumerate_data_descriptor_entries");
	free(arr);
	return rc;
}

/* Works out a stream's record layout from its data description. */
TBRW_U32 tk__tb5_stream_layout(struct tb5_handle *h, uint32_t stream)
{
	struct tb5_stream *st = tk__tb5_stream_at(h, stream, 0);
	struct tb5_obj *o = NULL;
	TBRW_SAMPREC_DESC_ENTRY *x = NULL;
	size_t n = 0;
	uint64_t size = 0, sum = 0;
	TBRW_U32 rc;

	if (st == NULL)
		return tk__tb5_fail(TBRW_INVALID_STREAM, "%s: stream %u does not exist", h->path, stream);
	if (st->desc_known)
		return VT_SUCCESS;
	o = tk__tb5_obj_find(h, OBJ_STREAM_SEC(stream, TBRW_DATA_DESCRIPTION_SECTION));
	if (o == NULL || o->state != OBJ_DONE)
		return tk__tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: stream %u has no data description section", h->path, stream);
	rc = tk__tb5_obj_load(h, o);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_decode_all(h, o, IT_DESC, sizeof *x, tk__tb5_dec_desc, (void **)&x, &n);
	if (rc != VT_SUCCESS)
		return rc;
	if (n == 0) {
		free(x);
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: stream %u: empty data description (at byte offset %llu)", h->path,
				stream, tb5_obj_offset(o));
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t end = (uint64_t)x[i].desc_offset + x[i].desc_data_size;
		if (x[i].desc_data_size == 0 || end > TB5_MAX_RECORD) {
			free(x);
			return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: stream %u: data descriptor entry %zu (section at byte "
							   "offset %llu) is out of range",
					h->path, stream, i, tb5_obj_offset(o));
		}
		if (end > size)
			size = end;
		sum += x[i].desc_data_size;
	}
	free(st->piece_size);
	st->piece_size = NULL;
	st->pc_offset = st->ts_offset = UINT32_MAX;
	if (desc_effective_offsets(x, n)) {
		/* chapter 6 style: each entry is its own piece, laid out one after another */
		if (sum > TB5_MAX_RECORD) {
			free(x);
			return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: stream %u: records exceed 16 MiB (data description at "
							   "byte offset %llu)",
					h->path, stream, tb5_obj_offset(o));
		}
		st->piece_size = malloc(n * sizeof *st->piece_size);
		if (st->piece_size == NULL) {
			free(x);
			return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
		}
		for (size_t i = 0; i < n; i++)
			st->piece_size[i] = x[i].desc_data_size;
		size = sum;
	}
	for (size_t i = 0; i < n; i++) {
		if (x[i].desc_type == ST_LEGACY_SAMPLE_RECORD && x[i].desc_data_size >= sizeof(TBRW_SampleRecordPC) &&
		    st->pc_offset == UINT32_MAX)
			st->pc_offset = x[i].desc_offset;
		if (x[i].desc_type == ST_TIME_STAMP && x[i].desc_data_size == 8 && st->ts_offset == UINT32_MAX)
			st->ts_offset = x[i].desc_offset;
	}
	st->n_desc = (uint32_t)n;
	st->record_size = (uint32_t)size;
	st->desc_known = 1;
	free(x);
	return VT_SUCCESS;
}
