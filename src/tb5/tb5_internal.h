/* SPDX-License-Identifier: MIT */
/*
 * tb5_internal.h: the .tb5 container's in-memory state shared by the files of src/tb5/:
 * the handle, its objects (sections, stream sections, bind results), chunk bookkeeping and
 * the error-detail helpers, and the functions the files give each other (tk__tb5_*).
 *
 * The files, each depending only on those above it:
 *   tb5_text.c     error codes and details, UTF-8
 *   tb5_map.c      the read-only mapping, guarded against the file shrinking
 *   tb5_chunk.c    chunks: build, place, write, read and check
 *   tb5_object.c   objects and metadata objects;  tb5_strings.c  the string table
 *   tb5_items.c    items (tb5_items.h is the API files' own header), then the API by job:
 *                  tb5_sections.c (state machine), tb5_global.c, tb5_process.c,
 *                  tb5_stream.c, tb5_data.c, tb5_bind.c
 *   tb5_open.c     header, directory, TBRW_open/close/verify;  tb5_recover.c  salvage
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
 * directory from the chunks that check out (tb5_recover.c).
 */
#ifndef TB5_INTERNAL_H
#define TB5_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "tracekit/tbrw.h"

#define TB5_FORMAT_VERSION 16u
#define TB5_HEADER_SIZE 64u
#define TB5_CHUNK_HEADER_SIZE 40u
#define TB5_TRAILER_SIZE 32u
#define TB5_CHUNK_TARGET (1u << 20) /* data chunk payload */
#define TB5_MAX_CHUNK_RAW (64u << 20) /* any chunk, uncompressed: reader cap */
#define TB5_MAX_RECORD (16u << 20)
#define TB5_MAX_STREAMS 4096u
#define TB5_MAX_STRING (1u << 20) /* bytes of one string */
#define TB5_MAX_META ((uint64_t)256 << 20) /* bytes of one metadata section */

#define CHUNK_MAGIC 0x4B434254u /* "TBCK" */
#define DIR_ENTRY_SIZE 40u

/* Chunks and their payloads are padded to 8 bytes. */
static inline size_t tb5_pad8(size_t n)
{
	return (n + 7u) & ~(size_t)7u;
}

/* Chunk kinds. */
enum {
	CK_STRINGS = 1, /* strings first..first+count-1: u32 length + UTF-8 bytes each */
	CK_META = 2, /* a piece of a section's serialized items */
	CK_DATA = 3, /* count whole records, first record index = first */
	CK_END = 4, /* the object is complete: first = total records or bytes */
	CK_DIRECTORY = 5, /* every live chunk; written last */
	CK_DROP = 6 /* the object (id) written before is discarded (unbind) */
};
#define CK_FLAG_ZSTD 0x1u

/* Object ids: (stream + 1) << 8 | code for stream objects, code for globals. */
#define OBJ_GLOBAL(sec) ((uint32_t)(sec) + 1u) /* 1..6 */
#define OBJ_STREAM(stream, code) ((((uint32_t)(stream) + 1u) << 8) | (uint32_t)(code))
#define OBJ_STREAM_SEC(stream, sec) OBJ_STREAM(stream, 16u + (uint32_t)(sec)) /* 16..20 */
#define OBJ_BIND_DATA 32u
#define OBJ_BIND_MODULE 33u
#define OBJ_BIND_TID 34u
#define OBJ_DERIVED_PT 35u /* marks that the process/thread section was derived by bind */
#define OBJ_IS_STREAM(id) (((id) >> 8) != 0)
#define OBJ_STREAM_OF(id) (((id) >> 8) - 1u)
#define OBJ_CODE(id) ((id)&0xFFu)

struct tb5_chunk_ref {
	uint64_t offset; /* of the chunk header */
	uint64_t first; /* first record index (data) or byte offset in the object (meta) */
	uint32_t count; /* records (data) */
	uint32_t raw_len;
	uint32_t stored_len;
	uint16_t kind;
	uint16_t flags;
	uint32_t id;
};

enum obj_state { OBJ_ABSENT = 0, OBJ_WRITING, OBJ_DONE };

/* A section or stream section (or bind result) of the file. */
struct tb5_obj {
	uint32_t id;
	enum obj_state state;
	int readers; /* TBRW_reading_* opened and not done */
	int from_file; /* existed when the file was opened */
	int drop; /* salvage: leave this object out */
	uint64_t lost_records; /* salvage: records of its lost chunks, before the chunks that follow */
	/* chunks in file order */
	struct tb5_chunk_ref *chunks;
	size_t n_chunks, cap_chunks;
	uint64_t total; /* bytes (meta) or records (data) */
	/* writing: buffered bytes not yet in a chunk */
	unsigned char *buf;
	size_t buf_len, buf_cap;
	/* metadata items parsed or being built */
	unsigned char *meta; /* whole serialized object when loaded */
	size_t meta_len;
	int meta_loaded;
	struct tb5_obj *next;
};

struct tb5_stream {
	int writing; /* TBRW_writing_stream open */
	int readers;
	int exists; /* done_stream called, or present in the file */
	/* from the data description */
	uint32_t record_size;
	uint32_t n_desc;
	uint32_t *piece_size; /* chapter 6 style: sizes of the pieces, or NULL */
	uint32_t pc_offset; /* effective offset of the TBRW_SampleRecordPC, UINT32_MAX if none */
	uint32_t ts_offset; /* effective offset of an 8-byte time stamp, UINT32_MAX if none */
	int desc_known;
	/* chapter 6 style partial record */
	unsigned char *partial;
	uint32_t partial_len, piece_next;
	struct tb5_obj *data_obj; /* the data section object while it is written */
	/* bind results held in memory (read-only handle) */
	DATA_BIND_STRUCT *bind_data;
	uint64_t n_bind_data;
	int bound_in_memory;
};

/* A decoded process/thread/module view used by bind and get_one_*. */
struct tb5_pt {
	TBRW_PID *pids;
	size_t n_pids;
	TBRW_TID *tids;
	size_t n_tids;
	int loaded;
};

/*
 * Threads. The header promises that different streams and stream sections of one handle may
 * be written (or read) from different threads at once; calls on one section, and everything
 * global (global sections, binding, verify, close), are serialised by the caller. So:
 *
 *  - Per-section state (a tb5_obj's buffers, totals and chunk list; a tb5_stream's layout,
 *    partial record and data_obj) belongs to the thread using that section and has no lock:
 *    TBRW_add_data() and TBRW_enumerate_data() take no lock per record.
 *  - h->lock guards what the threads share, and is only held for a few instructions, never
 *    across I/O: creating objects and stream slots, the string table and its hash, the
 *    list of live chunks and the append offset (reserving a chunk's place in the file), the
 *    count of strings already written and the sticky write error. A chunk is placed (its
 *    offset reserved and its directory entry recorded) under the lock, then written with
 *    pwrite() outside it, so h->chunks is in file order and writers do not wait for each
 *    other's I/O. String chunks are built and placed in one hold of the lock, so they are
 *    in the file in string order, before any chunk placed later that refers to them.
 *  - Lock-free reads of shared state: the object list is prepend-only (objects are never
 *    unlinked or freed before the handle) and its head is atomic, so tk__tb5_obj_find() walks it
 *    without the lock; n_strings is atomic so that decoding can bounds-check string ids
 *    while other threads add strings; the stream slot array is allocated with the handle.
 */
struct tb5_handle {
	pthread_mutex_t lock; /* see above */
	char *path; /* final name (UTF-8) */
	char *part_path; /* the temporary ("<path>.part", or a free name like it) while writing */
	struct tk_outfile *out; /* creates part_path and gives it the final name (tb5_open.c) */
	int fd; /* .part (writing) or the file (reading) */
	int writable;
	int compress;
	uint64_t end; /* append offset */
	uint64_t file_size;
	uint64_t dir_off; /* reading: offset of the directory chunk (chunks end there) */
	unsigned char *map; /* read-only mapping of the original file, or NULL (tb5_map.c) */
	size_t map_len;
	int map_slot; /* its entry in tb5_map.c's table of guarded mappings */
	uint32_t write_error; /* sticky first write failure */
	/* strings: id = index + 1 */
	char **strings;
	uint32_t *string_len;
	_Atomic uint64_t n_strings;
	uint64_t cap_strings;
	uint64_t n_strings_flushed;
	/* wide -> id hash for writing */
	uint64_t *hash_ids;
	size_t hash_cap;
	/* objects: prepend-only list */
	struct tb5_obj *_Atomic objs;
	struct tb5_stream **streams; /* TB5_MAX_STREAMS slots, allocated with the handle */
	uint32_t n_streams;
	/* every live chunk in file order (for the directory) */
	struct tb5_chunk_ref *chunks;
	size_t n_chunks, cap_chunks;
	/* get_one_* results */
	TBRW_PID one_pid;
	TBRW_TID one_tid;
	TBRW_MODULE one_module;
	TBRW_MODULE *modules; /* decoded module section (bind, get_one_module) */
	size_t n_modules;
	int modules_loaded;
	struct tb5_pt pt;
	int bound_stream; /* last bound stream for bind_enumerate_modules/threads, -1 */
	MODULE_BIND_STRUCT *bind_module;
	size_t n_bind_module;
	TID_BIND_STRUCT *bind_tid;
	size_t n_bind_tid;
};

/* A chunk on its way to the file: header and stored payload ready, place not yet taken
 * (tb5_chunk.c). */
struct chunk_out {
	unsigned char hd[TB5_CHUNK_HEADER_SIZE];
	const void *stored;
	void *zbuf; /* owned: the compressed payload */
	struct tb5_chunk_ref ref; /* offset set when placed */
};

/* ---- error detail (tb5_text.c) ---- */
TBRW_U32 tk__tb5_fail(TBRW_U32 code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tk__tb5_detail_clear(void);
/* A callback's error code (5.9: neither TRUE nor FALSE), returned as is with a detail. */
TBRW_U32 tk__tb5_callback_error(TBRW_U32 code, const char *fn);
TBRW_U32 tk__tb5_errno_code(int err);

/* ---- strings and UTF-8 (tb5_text.c) ---- */
/* UTF-8 of a wide string into a malloc'd buffer; NULL on an invalid code point. */
char *tk__tb5_wcs_to_utf8_alloc(const wchar_t *wcs, size_t *len);
/* Wide string from UTF-8 (len bytes) into out (cap wide chars incl. NUL); returns the wide
 * chars needed incl. NUL, or 0 on invalid UTF-8. */
size_t tk__tb5_utf8_to_wcs_n(const char *utf8, size_t len, wchar_t *out, size_t cap);

/* ---- container (tb5_object.c, tb5_chunk.c, tb5_strings.c) ---- */
struct tb5_obj *tk__tb5_obj_find(struct tb5_handle *h, uint32_t id);
struct tb5_obj *tk__tb5_obj_get(struct tb5_handle *h, uint32_t id); /* creates */
/* Appends a chunk holding payload to the file; records it for obj (may be NULL). Thread-safe
 * with respect to other objects: takes h->lock only to reserve space. */
TBRW_U32 tk__tb5_write_chunk(struct tb5_handle *h, struct tb5_obj *obj, uint16_t kind, uint32_t id, uint64_t first,
			 uint32_t count, const void *payload, size_t len);
/* Reads and checks a chunk; *out points to its raw payload, in *scratch (malloc'd, reused)
 * or in the file mapping. */
TBRW_U32 tk__tb5_read_chunk(struct tb5_handle *h, const struct tb5_chunk_ref *c, unsigned char **scratch,
			size_t *scratch_cap, const unsigned char **out);
/* Loads the whole serialized content of a metadata object into obj->meta. */
TBRW_U32 tk__tb5_obj_load(struct tb5_handle *h, struct tb5_obj *obj);
/* Buffers bytes for a metadata object being written. */
TBRW_U32 tk__tb5_obj_append(struct tb5_obj *obj, const void *p, size_t n);
/* Writes a metadata object's buffered bytes and its END chunk. */
TBRW_U32 tk__tb5_obj_finish(struct tb5_handle *h, struct tb5_obj *obj);
/* Discards a finished object (CK_DROP chunk) so that it can be written again. */
TBRW_U32 tk__tb5_obj_drop(struct tb5_handle *h, struct tb5_obj *obj);
/* Interns a wide string, returns its id (0 for NULL). */
TBRW_U32 tk__tb5_string_id(struct tb5_handle *h, const TBRW_CHAR *s, uint64_t *id);
TBRW_U32 tk__tb5_flush_strings(struct tb5_handle *h);
struct tb5_stream *tk__tb5_stream_at(struct tb5_handle *h, uint32_t stream, int create);

/* ---- the guarded mapping (tb5_map.c) ---- */
/* Maps h->file_size bytes of fd read-only into h->map when it can (else leaves it NULL). */
void tk__tb5_map_open(struct tb5_handle *h, int fd);
void tk__tb5_map_close(struct tb5_handle *h);
/* TBRW_FILE_TRUNCATED, with the detail, when the file shrank under the mapping since it was
 * made (what was read from the lost part came back as zeros); VT_SUCCESS otherwise. */
TBRW_U32 tk__tb5_map_check(struct tb5_handle *h);

/* ---- API files (tb5_items.c, tb5_process.c, tb5_stream.c) ---- */
TBRW_U32 tk__tb5_load_modules(struct tb5_handle *h);
TBRW_U32 tk__tb5_load_pt(struct tb5_handle *h);
TBRW_U32 tk__tb5_stream_layout(struct tb5_handle *h, uint32_t stream);
/* Loads a metadata object and checks that its items are well framed. */
TBRW_U32 tk__tb5_check_items(struct tb5_handle *h, struct tb5_obj *o);
/* tk__tb5_check_items, and the records the API decodes into arrays decode (salvage keeps only
 * sections that pass). */
TBRW_U32 tk__tb5_check_section(struct tb5_handle *h, struct tb5_obj *o);
void tk__tb5_pt_free(struct tb5_pt *pt);
/* Serialises process and thread records into a process/thread section object. */
TBRW_U32 tk__tb5_put_pid(struct tb5_handle *h, struct tb5_obj *obj, const TBRW_PID *p);
TBRW_U32 tk__tb5_put_tid(struct tb5_handle *h, struct tb5_obj *obj, const TBRW_TID *t);

/* ---- data (tb5_data.c) ---- */
/* Calls fn with the records of a data-like object (a data section or bind results) from
 * record start on, chunk by chunk; fn returns TRUE to go on, FALSE to stop, else an error. */
TBRW_U32 tk__tb5_enumerate_records(struct tb5_handle *h, struct tb5_obj *o, uint32_t rec, uint64_t start,
				   TBRW_U32 (*fn)(void *ctx, unsigned char *p, uint64_t first, uint32_t n), void *ctx);

/* ---- bind (tb5_bind.c) ---- */
TBRW_U32 tk__tb5_load_bind(struct tb5_handle *h, uint32_t stream);
void tk__tb5_bind_free(struct tb5_handle *h);

/* Where an object starts in the file (its first chunk), for messages; 0 if it has none. */
static inline unsigned long long tb5_obj_offset(const struct tb5_obj *o)
{
	return o->n_chunks > 0 ? (unsigned long long)o->chunks[0].offset : 0;
}

/* little-endian helpers */
static inline void tb5_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}
static inline void tb5_put64(unsigned char *p, uint64_t v)
{
	tb5_put32(p, (uint32_t)v);
	tb5_put32(p + 4, (uint32_t)(v >> 32));
}
static inline void tb5_put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}
static inline uint16_t tb5_get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t tb5_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t tb5_get64(const unsigned char *p)
{
	return (uint64_t)tb5_get32(p) | ((uint64_t)tb5_get32(p + 4) << 32);
}

/* ---- chunks: building, placing, writing and reading one, checking a header (tb5_chunk.c) ---- */
TBRW_U32 tk__tb5_chunk_prepare(struct tb5_handle *h, uint16_t kind, uint32_t id, uint64_t first, uint32_t count,
			const void *payload, size_t len, struct chunk_out *c);
TBRW_U32 tk__tb5_chunk_place_locked(struct tb5_handle *h, struct tb5_obj *obj, struct chunk_out *c);
TBRW_U32 tk__tb5_chunk_store(struct tb5_handle *h, struct chunk_out *c);
void tk__tb5_chunk_header(unsigned char *hd, uint16_t kind, uint16_t flags, uint32_t id, uint32_t stored, uint32_t raw,
			uint32_t count, uint64_t first, uint32_t payload_crc);
TBRW_U32 tk__tb5_parse_chunk_header(struct tb5_handle *h, const unsigned char *hd, uint64_t off,
			struct tb5_chunk_ref *c);
TBRW_U32 tk__tb5_pwrite_all(struct tb5_handle *h, const struct iovec *iov, int n_iov, uint64_t off);
TBRW_U32 tk__tb5_pread_all(struct tb5_handle *h, void *buf, size_t len, uint64_t off);

/* ---- objects: a chunk in a chunk list, an object emptied (drop) (tb5_object.c) ---- */
int tk__tb5_push_ref(struct tb5_chunk_ref **arr, size_t *n, size_t *cap, const struct tb5_chunk_ref *r);
void tk__tb5_obj_reset(struct tb5_obj *o);

/* ---- strings: one appended to the table (salvage), a strings chunk loaded (tb5_strings.c) ---- */
int tk__tb5_string_add(struct tb5_handle *h, char *s, uint32_t len);
TBRW_U32 tk__tb5_load_strings_chunk(struct tb5_handle *h, const struct tb5_chunk_ref *c, const unsigned char *p);

/* ---- open and close, shared with salvage: handle, header, directory, output (tb5_open.c) ---- */
struct tb5_handle *tk__tb5_handle_new(void);
void tk__tb5_handle_free(struct tb5_handle *h);
TBRW_U32 tk__tb5_write_header(struct tb5_handle *h);
TBRW_U32 tk__tb5_check_header_block(struct tb5_handle *h, const unsigned char *hd, uint64_t size);
TBRW_U32 tk__tb5_take_chunk(struct tb5_handle *h, const struct tb5_chunk_ref *c, int from_dir);
TBRW_U32 tk__tb5_write_directory(struct tb5_handle *h);
int tk__tb5_open_input(const char *path, TBRW_U32 *rc);
TBRW_U32 tk__tb5_open_existing(struct tb5_handle *h, int fd);
TBRW_U32 tk__tb5_out_create(struct tb5_handle *h);
TBRW_U32 tk__tb5_out_commit(struct tb5_handle *h);
void tk__tb5_out_abort(struct tb5_handle *h);

#endif
