/* SPDX-License-Identifier: MIT */
/*
 * tb5_recover.c: salvage of a .tb5 file whose writer died or that was cut short or damaged
 * (tk_tbrw_recover, tk_tbrw_recover_ranges): scans every chunk, past damage, keeps what
 * checks out and reads, writes a new file with a directory and reads it back before naming it.
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
#include <stdarg.h>
#include <stdio.h>
#include <sys/uio.h>

#include "tb5/tb5_internal.h"

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
			if (tb5_get32(buf + i) != CHUNK_MAGIC || tk__tb5_parse_chunk_header(src, buf + i, off + i, &c) != VT_SUCCESS)
				continue;
			if (c.kind < CK_STRINGS || c.kind > CK_DROP ||
			    off + i + TB5_CHUNK_HEADER_SIZE + tb5_pad8(c.stored_len) > src->file_size)
				continue;
			free(buf);
			tk__tb5_detail_clear();
			return off + i;
		}
		off += BLOCK;
	}
	free(buf);
	tk__tb5_detail_clear();
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
		/* lost strings took 4 bytes each at least: a gap the lost bytes cannot hold is a
		 * chunk out of place (and no placeholders by the billion) */
		if (c->first - src->n_strings > sv->rep.bytes_dropped / 4)
			return 0;
		/* strings of a lost chunk become empty placeholders, so later ids keep their text */
		while (src->n_strings < c->first) {
			char *e = calloc(1, 1);
			if (e == NULL || tk__tb5_string_add(src, e, 0) != 0) {
				free(e);
				return 0;
			}
			sv->strings_padded++;
		}
		if (tk__tb5_load_strings_chunk(src, c, p) != VT_SUCCESS)
			return 0;
		return tk__tb5_push_ref(&src->chunks, &src->n_chunks, &src->cap_chunks, c) == 0;
	}
	o = tk__tb5_obj_find(src, c->id);
	/* Data sections keep the records after a lost chunk: renumbered to follow on. */
	if (o != NULL && o->state != OBJ_DONE && OBJ_IS_STREAM(c->id) &&
	    OBJ_CODE(c->id) == 16u + TBRW_DATA_SECTION && (c->kind == CK_DATA || c->kind == CK_END) &&
	    c->first >= o->lost_records && c->first - o->lost_records > o->total && !o->drop &&
	    c->first - o->lost_records - o->total <= sv->rep.bytes_dropped) {
		/* (records of at least a byte each: a gap the lost bytes cannot hold is not taken) */
		uint64_t gap = c->first - o->lost_records - o->total;
		o->lost_records += gap;
		sv->rep.records_lost += gap;
	}
	if (o != NULL && c->first >= o->lost_records && (c->kind == CK_DATA || c->kind == CK_END))
		c->first -= o->lost_records;
	if (tk__tb5_take_chunk(src, c, 0) == VT_SUCCESS)
		return 1;
	/* out of place (a chunk of it was lost): its section cannot be rebuilt */
	o = tk__tb5_obj_find(src, c->id);
	if (o != NULL)
		o->drop = 1;
	return 0;
}

/* Whether a finished metadata section reads as its API reads it. */
static int section_readable(struct tb5_handle *src, struct tb5_obj *o)
{
	TBRW_U32 rc = tk__tb5_check_section(src, o);

	tk__tb5_detail_clear();
	return rc == VT_SUCCESS;
}

/* Opens the written file as a reader would and checks all of it. */
static TBRW_U32 check_output(const char *part_path, const char *final_path)
{
	struct tb5_handle *h = tk__tb5_handle_new();
	TBRW_U32 rc;
	int fd;

	if (h == NULL || (h->path = strdup(part_path)) == NULL) {
		tk__tb5_handle_free(h);
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	fd = open(part_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = tk__tb5_fail(tk__tb5_errno_code(errno), "%s: cannot open: %s", part_path, strerror(errno));
	} else {
		rc = tk__tb5_open_existing(h, fd);
		if (rc == VT_SUCCESS)
			rc = TBRW_verify(h);
	}
	if (rc != VT_SUCCESS)
		rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: the salvaged file does not read back (%s); nothing was saved",
			      final_path, tk_tbrw_error_detail());
	tk__tb5_handle_free(h);
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

	tk__tb5_detail_clear();
	if (src_path == NULL || dst_path == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "tk_tbrw_recover: NULL path");
	src = sv.src = tk__tb5_handle_new();
	dst = sv.dst = tk__tb5_handle_new();
	if (src == NULL || dst == NULL) {
		tk__tb5_handle_free(src);
		tk__tb5_handle_free(dst);
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	src->path = strdup(src_path);
	dst->path = strdup(dst_path);
	if (src->path == NULL || dst->path == NULL) {
		rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
		goto out;
	}
	dst->writable = 1;

	fd = tk__tb5_open_input(src_path, &rc);
	if (fd < 0)
		goto out;
	src->fd = fd;
	if (fstat(fd, &st) != 0) {
		rc = tk__tb5_fail(TBRW_IO_ERROR, "%s: %s", src_path, strerror(errno));
		goto out;
	}
	src->file_size = (uint64_t)st.st_size;
	r = pread(fd, hd, sizeof hd, 0);
	rc = tk__tb5_check_header_block(src, hd, r < 0 ? 0 : (uint64_t)r);
	if (rc != VT_SUCCESS) {
		if (rc == TBRW_FILE_TRUNCATED || rc == TBRW_FILE_CORRUPT)
			rc = tk__tb5_fail(TBRW_NOT_A_TB5_FILE, "%s: the 64-byte header is incomplete or damaged: nothing "
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
			      tk__tb5_parse_chunk_header(src, ch, off, &c) == VT_SUCCESS && c.kind >= CK_STRINGS &&
			      c.kind <= CK_DROP;
		if (!head_ok || off + TB5_CHUNK_HEADER_SIZE + tb5_pad8(c.stored_len) > src->file_size) {
			next = resync(src, off + 8);
			if (head_ok)
				chunk_what(&c, what, sizeof what);
			lost(&sv, off, next, "%s%s", head_ok ? "the start of " : "bytes that hold no chunk",
			     head_ok ? what : "");
			off = next;
			continue;
		}
		next = off + TB5_CHUNK_HEADER_SIZE + tb5_pad8(c.stored_len);
		if (c.kind == CK_DIRECTORY) {
			sv.rep.was_complete = sv.rep.ranges_lost == 0;
			break;
		}
		if (tk__tb5_read_chunk(src, &c, &scratch, &scratch_cap, &p) != VT_SUCCESS) {
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
	tk__tb5_detail_clear();
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
				sv.on_lost(tb5_obj_offset(o), last->offset + TB5_CHUNK_HEADER_SIZE + tb5_pad8(last->stored_len),
					   what, sv.user);
			}
		}
	}
	for (struct tb5_obj *o = src->objs; o != NULL; o = o->next) {
		if (!(OBJ_IS_STREAM(o->id) && OBJ_CODE(o->id) == 16u + TBRW_DATA_SECTION) || o->drop)
			continue;
		uint32_t s = OBJ_STREAM_OF(o->id);
		struct tb5_obj *desc = tk__tb5_obj_find(src, OBJ_STREAM_SEC(s, TBRW_DATA_DESCRIPTION_SECTION));
		if (desc == NULL || desc->state != OBJ_DONE || desc->drop || tk__tb5_stream_layout(src, s) != VT_SUCCESS) {
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
			struct tb5_obj *d = tk__tb5_obj_find(src, OBJ_STREAM_SEC(OBJ_STREAM_OF(o->id), TBRW_DATA_SECTION));
			if (d == NULL || d->drop || (d->state != OBJ_DONE && o->state == OBJ_DONE))
				o->drop = 1;
		}
	}
	for (struct tb5_obj *o = src->objs; o != NULL; o = o->next)
		if (o->drop)
			sv.rep.sections_dropped++;
	tk__tb5_detail_clear();

	/* Write the kept chunks into a new file with a directory. */
	rc = tk__tb5_out_create(dst);
	if (rc != VT_SUCCESS)
		goto out;
	dst->compress = src->compress;
	rc = tk__tb5_write_header(dst);
	for (size_t i = 0; i < src->n_chunks && rc == VT_SUCCESS; i++) {
		struct tb5_chunk_ref c = src->chunks[i];
		struct tb5_obj *o = c.kind == CK_STRINGS ? NULL : tk__tb5_obj_find(src, c.id);
		const unsigned char *p;
		unsigned char *copy;
		size_t len = TB5_CHUNK_HEADER_SIZE + tb5_pad8(c.stored_len);
		struct iovec iov;
		if (o != NULL && o->drop)
			continue;
		if (c.kind == CK_STRINGS && c.first > dst_strings) {
			/* placeholders for the strings of a lost chunk: empty, length 0 each */
			uint64_t gap = c.first - dst_strings;
			unsigned char *zeros = calloc(gap, 4);
			rc = zeros == NULL ? tk__tb5_fail(TBRW_NO_MEMORY, "out of memory")
					   : tk__tb5_write_chunk(dst, NULL, CK_STRINGS, 0, dst_strings, (uint32_t)gap, zeros,
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
			rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
			break;
		}
		if (pread(src->fd, copy, len, (off_t)c.offset) != (ssize_t)len) {
			free(copy);
			rc = tk__tb5_fail(TBRW_IO_ERROR, "%s: read failed at byte offset %llu", src_path,
				      (unsigned long long)c.offset);
			break;
		}
		{
			/* checked again as it is on disk (a renumbered chunk says its old first record) */
			struct tb5_chunk_ref on_disk = c;
			on_disk.first = tb5_get64(copy + 24);
			rc = tk__tb5_read_chunk(src, &on_disk, &scratch, &scratch_cap, &p);
		}
		if (rc != VT_SUCCESS) {
			free(copy);
			break;
		}
		/* the header again from the entry: a renumbered chunk gets its new first record */
		tk__tb5_chunk_header(copy, c.kind, c.flags, c.id, c.stored_len, c.raw_len, c.count, c.first, tb5_get32(copy + 32));
		iov.iov_base = copy;
		iov.iov_len = len;
		c.offset = dst->end;
		rc = tk__tb5_pwrite_all(dst, &iov, 1, dst->end);
		free(copy);
		dst->end += len;
		if (rc == VT_SUCCESS && tk__tb5_push_ref(&dst->chunks, &dst->n_chunks, &dst->cap_chunks, &c))
			rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	}
	/* Data sections cut short get their end mark now. */
	for (struct tb5_obj *o = src->objs; o != NULL && rc == VT_SUCCESS; o = o->next) {
		if (o->state == OBJ_DONE || o->drop)
			continue;
		rc = tk__tb5_write_chunk(dst, NULL, CK_END, o->id, o->total, 0, NULL, 0);
		sv.rep.sections_kept++;
	}
	if (rc == VT_SUCCESS)
		rc = tk__tb5_write_directory(dst);
	if (rc == VT_SUCCESS && fsync(dst->fd) != 0)
		rc = tk__tb5_fail(tk__tb5_errno_code(errno), "%s: sync failed: %s", dst->part_path, strerror(errno));
	/* what was kept must read back, section by section, before it gets the final name */
	if (rc == VT_SUCCESS)
		rc = check_output(dst->part_path, dst->path);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_out_commit(dst);
	tk__tb5_out_abort(dst);
out:
	free(scratch);
	if (rc == VT_SUCCESS && report != NULL)
		*report = sv.rep;
	tk__tb5_handle_free(src);
	tk__tb5_handle_free(dst);
	return rc;
}
