/* SPDX-License-Identifier: MIT */
/*
 * tb5_open.c: opening and closing .tb5 files: the header, the directory and trailer written
 * at close and read at open, the output created through tk_outfile and named at close,
 * TBRW_open/close/abort and TBRW_verify. The layer above the container files (chunks,
 * objects, strings, mapping) and the API files: nothing below includes back.
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
#include <stdio.h>
#include <sys/uio.h>

#include "common/tk_crc32c.h"
#include "tracekit/common.h"
#include "tb5/tb5_internal.h"

static const unsigned char header_magic[8] = {'T', 'K', 'T', 'B', '5', 0, '\r', '\n'};
static const unsigned char trailer_magic[8] = {'T', 'B', '5', 'T', 'R', 'A', 'I', 'L'};

/* ---- directory -------------------------------------------------------------------------- */

TBRW_U32 tk__tb5_write_directory(struct tb5_handle *h)
{
	unsigned char *dir, tr[TB5_TRAILER_SIZE];
	size_t len = 8 + h->n_chunks * DIR_ENTRY_SIZE;
	uint64_t dir_off;
	struct iovec iov;
	TBRW_U32 rc;

	dir = calloc(1, len);
	if (dir == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory writing the directory");
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
		return tk__tb5_fail(TBRW_TOO_BIG, "%s: too many chunks for one directory", h->path);
	}
	rc = tk__tb5_write_chunk(h, NULL, CK_DIRECTORY, 0, 0, 0, dir, len);
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
	rc = tk__tb5_pwrite_all(h, &iov, 1, h->end);
	h->end += TB5_TRAILER_SIZE;
	return rc;
}

/* Registers one chunk listed by a directory or found by a scan. */
TBRW_U32 tk__tb5_take_chunk(struct tb5_handle *h, const struct tb5_chunk_ref *c, int from_dir)
{
	struct tb5_obj *o;

	if (c->kind == CK_STRINGS || c->kind == CK_DIRECTORY)
		return tk__tb5_push_ref(&h->chunks, &h->n_chunks, &h->cap_chunks, c) ? tk__tb5_fail(TBRW_NO_MEMORY, "out of memory")
										 : VT_SUCCESS;
	if (c->kind == CK_DROP) {
		o = tk__tb5_obj_find(h, c->id);
		if (o != NULL) {
			size_t i, j;
			for (i = j = 0; i < h->n_chunks; i++)
				if (h->chunks[i].id != c->id || h->chunks[i].kind == CK_STRINGS)
					h->chunks[j++] = h->chunks[i];
			h->n_chunks = j;
			tk__tb5_obj_reset(o);
		}
		return VT_SUCCESS;
	}
	if (c->kind != CK_META && c->kind != CK_DATA && c->kind != CK_END)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu has unknown kind %u", h->path,
				(unsigned long long)c->offset, c->kind);
	if (c->id == 0 || (!OBJ_IS_STREAM(c->id) && c->id != OBJ_DERIVED_PT &&
			   (c->id < OBJ_GLOBAL(TBRW_HARDWARE_SECTION) || c->id > OBJ_GLOBAL(TBRW_VERSION_INFO_SECTION))))
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu belongs to unknown object %u",
				h->path, (unsigned long long)c->offset, c->id);
	if (OBJ_IS_STREAM(c->id)) {
		uint32_t code = OBJ_CODE(c->id);
		if (OBJ_STREAM_OF(c->id) >= TB5_MAX_STREAMS || !((code >= 16 && code <= 20) || (code >= 32 && code <= 34)))
			return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu belongs to unknown object %u",
					h->path, (unsigned long long)c->offset, c->id);
	}
	/* Record objects (data sections, bind results) hold data chunks, the others meta chunks;
	 * a data chunk's count must fit its bytes: counts are only trusted once checked here. */
	int records = OBJ_IS_STREAM(c->id) && (OBJ_CODE(c->id) == 16u + TBRW_DATA_SECTION || OBJ_CODE(c->id) >= 32u);
	uint32_t entry = !OBJ_IS_STREAM(c->id) ? 0 : OBJ_CODE(c->id) == OBJ_BIND_DATA ? 24u
						   : OBJ_CODE(c->id) >= OBJ_BIND_MODULE ? 8u : 0;
	if ((c->kind == CK_DATA && !records) || (c->kind == CK_META && records))
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu: a %s chunk in object %u", h->path,
				(unsigned long long)c->offset, c->kind == CK_DATA ? "data" : "meta", c->id);
	if (c->kind == CK_DATA && (entry != 0 ? (uint64_t)c->count * entry != c->raw_len
					      : c->count > c->raw_len || (c->count == 0) != (c->raw_len == 0)))
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: data chunk at byte offset %llu claims %u records in %u bytes",
				h->path, (unsigned long long)c->offset, c->count, c->raw_len);
	o = tk__tb5_obj_get(h, c->id);
	if (o == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	if (o->state == OBJ_DONE)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu follows the end of its section",
				h->path, (unsigned long long)c->offset);
	if (c->kind == CK_DATA && c->first != o->total)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: data chunk at byte offset %llu starts at record %llu, expected %llu",
				h->path, (unsigned long long)c->offset, (unsigned long long)c->first,
				(unsigned long long)o->total);
	if (c->kind == CK_META && c->first != o->total)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu is out of place in its section",
				h->path, (unsigned long long)c->offset);
	if (c->kind == CK_END && c->first != o->total)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: section end at byte offset %llu counts %llu, its chunks %llu",
				h->path, (unsigned long long)c->offset, (unsigned long long)c->first,
				(unsigned long long)o->total);
	if (tk__tb5_push_ref(&o->chunks, &o->n_chunks, &o->cap_chunks, c) ||
	    tk__tb5_push_ref(&h->chunks, &h->n_chunks, &h->cap_chunks, c))
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	if (c->kind == CK_DATA)
		o->total += c->count;
	else if (c->kind == CK_META)
		o->total += c->raw_len;
	else
		o->state = OBJ_DONE;
	o->from_file = 1;
	if (!from_dir && o->state != OBJ_DONE)
		o->state = OBJ_WRITING;
	if (OBJ_IS_STREAM(c->id) && OBJ_CODE(c->id) < 32 && tk__tb5_stream_at(h, OBJ_STREAM_OF(c->id), 1) == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	return VT_SUCCESS;
}

TBRW_U32 tk__tb5_check_header_block(struct tb5_handle *h, const unsigned char *hd, uint64_t size)
{
	if (size < 8 || memcmp(hd, header_magic, size < 8 ? size : 8) != 0)
		return tk__tb5_fail(TBRW_NOT_A_TB5_FILE, "%s: not a tb5 file (no tb5 signature at byte offset 0)", h->path);
	if (size < TB5_HEADER_SIZE)
		return tk__tb5_fail(TBRW_FILE_TRUNCATED, "%s: file ends at byte offset %llu, inside its 64-byte header",
				h->path, (unsigned long long)size);
	if (tb5_get32(hd + 60) != tk__crc32c(0, hd, 60))
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: header checksum mismatch (bytes 0..59, checksum at byte offset 60)",
				h->path);
	if (tb5_get32(hd + 8) != TB5_FORMAT_VERSION || tb5_get32(hd + 12) != TB5_HEADER_SIZE)
		return tk__tb5_fail(TBRW_UNSUPPORTED_VERSION, "%s: tb5 format version %u at byte offset 8; this library reads %u",
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
		return tk__tb5_fail(TBRW_FILE_TRUNCATED, "%s: file of %llu bytes has no trailer: its writer did not finish "
						     "(tb5_recover can salvage it)",
				h->path, (unsigned long long)h->file_size);
	rc = tk__tb5_pread_all(h, tr, sizeof tr, h->file_size - TB5_TRAILER_SIZE);
	if (rc != VT_SUCCESS)
		return rc;
	if (memcmp(tr, trailer_magic, 8) != 0 || tb5_get32(tr + 28) != tk__crc32c(0, tr, 28))
		return tk__tb5_fail(TBRW_FILE_TRUNCATED, "%s: no valid trailer at byte offset %llu: the file was cut short "
						     "or its writer did not finish (tb5_recover can salvage it)",
				h->path, (unsigned long long)(h->file_size - TB5_TRAILER_SIZE));
	dir_off = tb5_get64(tr + 8);
	if (tb5_get64(tr + 16) != h->file_size || dir_off < TB5_HEADER_SIZE ||
	    dir_off + TB5_CHUNK_HEADER_SIZE > h->file_size - TB5_TRAILER_SIZE)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: trailer at byte offset %llu points outside the file", h->path,
				(unsigned long long)(h->file_size - TB5_TRAILER_SIZE));
	rc = tk__tb5_pread_all(h, hd, sizeof hd, dir_off);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_parse_chunk_header(h, hd, dir_off, &dc);
	if (rc != VT_SUCCESS)
		return rc;
	if (dc.kind != CK_DIRECTORY || dir_off + TB5_CHUNK_HEADER_SIZE + tb5_pad8(dc.stored_len) + TB5_TRAILER_SIZE !=
					       h->file_size)
		return tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: no directory at byte offset %llu", h->path,
				(unsigned long long)dir_off);
	/* The directory stays in its own buffer while string chunks are read into another. */
	rc = tk__tb5_read_chunk(h, &dc, &dir_scratch, &dir_scratch_cap, &dir);
	if (rc != VT_SUCCESS)
		goto out;
	h->dir_off = dir_off;
	n = dc.raw_len >= 8 ? tb5_get64(dir) : UINT64_MAX;
	if (n > (dc.raw_len - 8) / DIR_ENTRY_SIZE || 8 + n * DIR_ENTRY_SIZE != dc.raw_len) {
		rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: directory at byte offset %llu is malformed", h->path,
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
		    tb5_pad8(c.stored_len) > dir_off - c.offset - TB5_CHUNK_HEADER_SIZE || c.raw_len > TB5_MAX_CHUNK_RAW ||
		    c.kind == CK_DROP || c.kind == CK_DIRECTORY || tb5_get32(e + 36) != 0 ||
		    (!(c.flags & CK_FLAG_ZSTD) && c.stored_len != c.raw_len)) {
			rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: directory entry %llu (at byte offset %llu) is invalid",
				      h->path, (unsigned long long)i,
				      (unsigned long long)(dir_off + TB5_CHUNK_HEADER_SIZE + 8 + i * DIR_ENTRY_SIZE));
			break;
		}
		next_free = c.offset + TB5_CHUNK_HEADER_SIZE + tb5_pad8(c.stored_len);
		if (c.kind == CK_STRINGS) {
			rc = tk__tb5_read_chunk(h, &c, &scratch, &scratch_cap, &p);
			if (rc == VT_SUCCESS)
				rc = tk__tb5_load_strings_chunk(h, &c, p);
			if (rc == VT_SUCCESS && tk__tb5_push_ref(&h->chunks, &h->n_chunks, &h->cap_chunks, &c))
				rc = tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
			continue;
		}
		/* An end chunk is only a header: reading it now is cheap, and a damaged one would
		 * otherwise never be read at all. */
		if (c.kind == CK_END && (rc = tk__tb5_read_chunk(h, &c, &scratch, &scratch_cap, &p)) != VT_SUCCESS)
			break;
		rc = tk__tb5_take_chunk(h, &c, 1);
	}
	/* Every listed object must have been finished. */
	for (struct tb5_obj *o = h->objs; o != NULL && rc == VT_SUCCESS; o = o->next)
		if (o->state != OBJ_DONE)
			rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: section %u (from byte offset %llu) has no end mark", h->path,
				      o->id, tb5_obj_offset(o));
out:
	free(scratch);
	free(dir_scratch);
	return rc;
}

/* ---- open / close ------------------------------------------------------------------------- */

void tk__tb5_handle_free(struct tb5_handle *h)
{
	struct tb5_obj *o, *next;

	if (h == NULL)
		return;
	tk__tb5_map_close(h);
	tk__tb5_out_abort(h);
	if (h->fd >= 0)
		close(h->fd);
	for (o = h->objs; o != NULL; o = next) {
		next = o->next;
		tk__tb5_obj_reset(o);
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
	tk__tb5_pt_free(&h->pt);
	tk__tb5_bind_free(h);
	free(h->path);
	free(h->part_path);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* A handle with its lock and stream slots (allocated up front: threads read the slot array
 * without the lock). NULL when out of memory. */
struct tb5_handle *tk__tb5_handle_new(void)
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

TBRW_U32 tk__tb5_write_header(struct tb5_handle *h)
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
	return tk__tb5_pwrite_all(h, &iov, 1, 0);
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
			return tk__tb5_fail(tk__tb5_errno_code(errno), "%s: copying into %s failed: %s", h->path, h->part_path,
					strerror(errno));
		/* fall back to read/write */
		ssize_t r = pread(src, buf, sizeof buf, (off_t)done);
		if (r <= 0)
			return tk__tb5_fail(TBRW_IO_ERROR, "%s: read failed at byte offset %llu", h->path,
					(unsigned long long)done);
		struct iovec iov = {buf, (size_t)r};
		TBRW_U32 rc = tk__tb5_pwrite_all(h, &iov, 1, done);
		if (rc != VT_SUCCESS)
			return rc;
		done += (uint64_t)r;
	}
	return VT_SUCCESS;
}

TBRW_U32 tk__tb5_open_existing(struct tb5_handle *h, int fd)
{
	unsigned char hd[TB5_HEADER_SIZE];
	struct stat st;
	ssize_t r;
	TBRW_U32 rc;

	if (fstat(fd, &st) != 0)
		return tk__tb5_fail(TBRW_IO_ERROR, "%s: %s", h->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return tk__tb5_fail(TBRW_NOT_A_TB5_FILE, "%s: not a regular file", h->path);
	h->file_size = (uint64_t)st.st_size;
	r = pread(fd, hd, sizeof hd, 0);
	if (r < 0)
		return tk__tb5_fail(TBRW_IO_ERROR, "%s: read failed at byte offset 0: %s", h->path, strerror(errno));
	rc = tk__tb5_check_header_block(h, hd, (uint64_t)r);
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
int tk__tb5_open_input(const char *path, TBRW_U32 *rc)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), fl;

	if (fd < 0) {
		*rc = tk__tb5_fail(tk__tb5_errno_code(errno), "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		*rc = tk__tb5_fail(TBRW_IO_ERROR, "%s: %s", path, strerror(errno));
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
		*rc = tk__tb5_fail(TBRW_NOT_A_TB5_FILE, "%s: not a regular file (%s): a .tb5 file is read at offsets", path,
			       what);
		close(fd);
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		*rc = tk__tb5_fail(TBRW_IO_ERROR, "%s: %s", path, strerror(errno));
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
 * never followed, a crashed run's ".part" is kept), renamed over h->path by tk__tb5_out_commit() (a
 * symlink there is replaced, not followed; the old file's mode is kept). A .tb5 file is
 * written at offsets and read back, so an output that is not a regular file (a device, a
 * FIFO, written in place by tk_outfile) is refused, untouched. h->fd gets a read-write
 * descriptor of the temporary (tk_outfile's is write-only: it is reopened through
 * /proc/self/fd and checked to be the same file), h->part_path its name.
 */
TBRW_U32 tk__tb5_out_create(struct tb5_handle *h)
{
	char self[64];
	struct stat ws, rs;
	const char *name = strcmp(h->path, "-") == 0 ? "./-" : h->path; /* a file named "-", not stdout */
	int err, wfd, fd;

	/* refused before tk_outfile_open, which would wait for a reader to open a FIFO */
	if (stat(name, &ws) == 0 && !S_ISREG(ws.st_mode))
		return tk__tb5_fail(TBRW_ACCESS_DENIED, "%s: %s: a .tb5 file is written at offsets, only as a regular file", h->path,
				file_kind(ws.st_mode));
	err = tk_outfile_open(&h->out, name, 0);
	if (err != TK_OK) {
		h->out = NULL;
		return tk__tb5_fail(tk_error_code(err), "%s: cannot create: %s", h->path, tk_strerror(err));
	}
	free(h->part_path);
	h->part_path = strdup(tk_outfile_temp_path(h->out));
	wfd = fileno(tk_outfile_stream(h->out));
	if (h->part_path == NULL || wfd < 0 || fstat(wfd, &ws) != 0) {
		tk_outfile_abort(h->out);
		h->out = NULL;
		return tk__tb5_fail(TBRW_NO_MEMORY, "%s: cannot create: out of memory", h->path);
	}
	if (!S_ISREG(ws.st_mode)) {
		tk_outfile_abort(h->out); /* closes it: nothing was written, nothing is renamed */
		h->out = NULL;
		return tk__tb5_fail(TBRW_ACCESS_DENIED, "%s: %s: a .tb5 file is written at offsets, only as a regular file",
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
		return tk__tb5_fail(TBRW_IO_ERROR, "%s: cannot reopen %s for reading and writing: %s", h->path, h->part_path,
				fd < 0 ? strerror(e) : "another file");
	}
	h->fd = fd;
	return VT_SUCCESS;
}

/* Gives the finished temporary its name (tk_outfile_commit: fsync, rename). */
TBRW_U32 tk__tb5_out_commit(struct tb5_handle *h)
{
	int err;

	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	err = tk_outfile_commit(h->out);
	h->out = NULL;
	if (err != TK_OK)
		return tk__tb5_fail(tk_error_code(err), "%s: cannot complete %s: %s", h->part_path, h->path,
				tk_strerror(err));
	return VT_SUCCESS;
}

/* Removes the temporary (when there is one). */
void tk__tb5_out_abort(struct tb5_handle *h)
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
	return tk__tb5_wcs_to_utf8_alloc(w, &len);
}

TBRW_U32 TBRW_open(TBRW_PTR *ptr, const TBRW_CHAR *filename, TBRW_U32 access_mode)
{
	struct tb5_handle *h;
	TBRW_U32 rc;
	int fd;

	tk__tb5_detail_clear();
	if (ptr == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_open: ptr is NULL");
	*ptr = NULL;
	if (filename == NULL || filename[0] == 0)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_open: no file name");
	if ((access_mode & ~(TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS | TBRW_FILE_COMPRESS)) != 0 ||
	    (access_mode & (TBRW_FILE_READ | TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS)) == 0)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_open: invalid access mode 0x%x", access_mode);
	h = tk__tb5_handle_new();
	if (h == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "TBRW_open: out of memory");
	h->writable = (access_mode & (TBRW_FILE_WRITE | TBRW_FILE_CREATE_ALWAYS)) != 0;
	h->compress = (access_mode & TBRW_FILE_COMPRESS) != 0;
	h->path = path_from_wide(filename);
	if (h->path == NULL) {
		tk__tb5_handle_free(h);
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_open: the file name is not a valid string");
	}
	if (access_mode & TBRW_FILE_CREATE_ALWAYS) {
		rc = tk__tb5_out_create(h);
		if (rc != VT_SUCCESS) {
			tk__tb5_handle_free(h);
			return rc;
		}
		rc = tk__tb5_write_header(h);
	} else {
		fd = tk__tb5_open_input(h->path, &rc);
		if (fd < 0) {
			tk__tb5_handle_free(h);
			return rc;
		}
		if (!h->writable) {
			rc = tk__tb5_open_existing(h, fd);
		} else {
			/* Append: work on a copy, drop its directory and trailer, keep its chunks. */
			int src = fd;
			h->fd = -1;
			rc = tk__tb5_open_existing(h, src);
			h->fd = -1;
			if (rc == VT_SUCCESS) {
				rc = tk__tb5_out_create(h);
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
		tk__tb5_out_abort(h);
		tk__tb5_handle_free(h);
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
	tk__tb5_out_abort(h);
	tk__tb5_handle_free(h);
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
		rc = tk__tb5_fail(h->write_error, "%s: an earlier write failed; nothing was saved", h->part_path);
	for (struct tb5_obj *o = h->objs; o != NULL && rc == VT_SUCCESS; o = o->next)
		if (o->state == OBJ_WRITING || o->readers > 0)
			rc = tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_close with section %u still open (call its "
							      "TBRW_done_* first); nothing was saved",
				      h->path, o->id);
	for (uint32_t s = 0; s < h->n_streams && rc == VT_SUCCESS; s++)
		if (h->streams[s] != NULL && (h->streams[s]->writing || h->streams[s]->readers > 0))
			rc = tk__tb5_fail(TBRW_CALL_OUT_OF_ORDER, "%s: TBRW_close with stream %u still open (call "
							      "TBRW_done_stream first); nothing was saved",
				      h->path, s);
	if (h->writable) {
		if (rc == VT_SUCCESS)
			rc = tk__tb5_flush_strings(h);
		if (rc == VT_SUCCESS)
			rc = tk__tb5_write_directory(h);
		if (rc == VT_SUCCESS && ftruncate(h->fd, (off_t)h->end) != 0)
			rc = tk__tb5_fail(tk__tb5_errno_code(errno), "%s: %s", h->part_path, strerror(errno));
		if (rc == VT_SUCCESS && fsync(h->fd) != 0)
			rc = tk__tb5_fail(tk__tb5_errno_code(errno), "%s: sync failed: %s", h->part_path, strerror(errno));
		if (rc == VT_SUCCESS)
			rc = tk__tb5_out_commit(h);
		tk__tb5_out_abort(h);
	}
	tk__tb5_handle_free(h);
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
			rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: %llu stray bytes at byte offset %llu, where a chunk "
							 "should start",
				      h->path, (unsigned long long)(end - off), (unsigned long long)off);
			break;
		}
		if (h->map != NULL && off + TB5_CHUNK_HEADER_SIZE <= h->map_len)
			memcpy(hd, h->map + off, sizeof hd);
		else if ((rc = tk__tb5_pread_all(h, hd, sizeof hd, off)) != VT_SUCCESS)
			break;
		if ((rc = tk__tb5_parse_chunk_header(h, hd, off, &c)) != VT_SUCCESS)
			break;
		if (c.kind < CK_STRINGS || c.kind > CK_DROP || c.kind == CK_DIRECTORY ||
		    tb5_pad8(c.stored_len) > end - off - TB5_CHUNK_HEADER_SIZE) {
			rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: chunk at byte offset %llu is impossible here (kind %u, "
							 "%u bytes)",
				      h->path, (unsigned long long)off, c.kind, c.stored_len);
			break;
		}
		if (k < n && dir[k].offset < off) {
			rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: the directory lists a chunk at byte offset %llu, inside "
							 "another chunk",
				      h->path, (unsigned long long)dir[k].offset);
			break;
		}
		/* a listed chunk must match its entry (tk__tb5_read_chunk compares the two) */
		rc = tk__tb5_read_chunk(h, k < n && dir[k].offset == off ? &dir[k] : &c, &scratch, &scratch_cap, &p);
		if (k < n && dir[k].offset == off)
			k++;
		off += TB5_CHUNK_HEADER_SIZE + tb5_pad8(c.stored_len);
	}
	if (rc == VT_SUCCESS && k < n)
		rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: the directory lists a chunk at byte offset %llu, past the last "
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
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_verify: NULL handle");
	pthread_mutex_lock(&h->lock);
	n = h->n_chunks;
	end = h->writable ? h->end : h->dir_off;
	copy = malloc((n ? n : 1) * sizeof *copy);
	if (copy != NULL && n > 0)
		memcpy(copy, h->chunks, n * sizeof *copy);
	pthread_mutex_unlock(&h->lock);
	if (copy == NULL)
		return tk__tb5_fail(TBRW_NO_MEMORY, "out of memory");
	rc = verify_chunks(h, copy, n, end);
	free(copy);
	/* every finished section's items are well formed */
	for (struct tb5_obj *o = h->objs; o != NULL && rc == VT_SUCCESS; o = o->next)
		if (o->state == OBJ_DONE && o->id != OBJ_DERIVED_PT &&
		    !(OBJ_IS_STREAM(o->id) && (OBJ_CODE(o->id) == 16u + TBRW_DATA_SECTION || OBJ_CODE(o->id) >= 32u)))
			rc = tk__tb5_check_items(h, o);
	for (uint32_t s = 0; s < h->n_streams && rc == VT_SUCCESS; s++) {
		struct tb5_obj *d = tk__tb5_obj_find(h, OBJ_STREAM_SEC(s, TBRW_DATA_SECTION));
		if (d == NULL || d->state != OBJ_DONE)
			continue;
		rc = tk__tb5_stream_layout(h, s);
		for (size_t i = 0; i < d->n_chunks && rc == VT_SUCCESS; i++)
			if (d->chunks[i].kind == CK_DATA &&
			    (uint64_t)d->chunks[i].count * h->streams[s]->record_size != d->chunks[i].raw_len)
				rc = tk__tb5_fail(TBRW_FILE_CORRUPT, "%s: data chunk at byte offset %llu holds %u bytes, not %u "
								 "records of %u bytes",
					      h->path, (unsigned long long)d->chunks[i].offset, d->chunks[i].raw_len,
					      d->chunks[i].count, h->streams[s]->record_size);
	}
	return rc;
}
