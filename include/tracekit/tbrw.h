/* SPDX-License-Identifier: MIT */
/*
 * tracekit/tbrw.h: the VTune(TM) Reader/Writer API (TBRW 2.3, seed 000 chapter 9) over
 * tracekit's .tb5 container (docs/tb5-format.md): open/close, sections, data streams,
 * set/get/add, enumeration, binding and string conversion, plus two tracekit extensions:
 * a detailed error message with the file position, and salvaging a file whose writer died.
 *
 * Conventions (seed chapter 5):
 *  - Every function returns VT_SUCCESS (0) or one of the TBRW_* error codes below;
 *    TBRW_error_string() names it and tk_tbrw_error_detail() says what and where.
 *  - Every TBRW_reading_* / TBRW_writing_* call needs its TBRW_done_*; a section or stream
 *    cannot be open for reading and writing at once, and existing sections are never
 *    overwritten.
 *  - get_ functions use the size-query protocol of 5.8: pass size 0 and NULL to learn the
 *    size needed in *size_buffer_used; a short buffer gives TBRW_BUFFER_TOO_SMALL.
 *  - Threads: different streams and stream sections of one handle may be written or read
 *    from different threads at once; calls on one section are serialised by the caller.
 *  - A file opened with TBRW_FILE_CREATE_ALWAYS (or opened for writing) is built as
 *    "<name>.part" and appears under its name only when TBRW_close() succeeds;
 *    TBRW_abort_cleanup_and_close() removes it and leaves any existing file untouched.
 *    The temporary is created through tk_outfile_open() (tracekit/common.h): nothing that
 *    exists at its name is followed or reused (a busy "<name>.part" gives a free name beside
 *    it), the old file's mode is kept and a symlink at <name> is replaced, not followed. An
 *    output that is not a regular file (device, FIFO) is refused: TBRW_ACCESS_DENIED.
 *    A relative name is resolved once, at TBRW_open(): TBRW_close() and
 *    TBRW_abort_cleanup_and_close() act in that directory even if the program has changed
 *    its working directory since, and never touch files of the same names in the new one.
 *  - Only regular files are read (a FIFO is refused at once). A file that shrinks while it is
 *    read gives TBRW_FILE_TRUNCATED, not SIGBUS (docs/tb5-format.md, "Reading and writing
 *    safely").
 */
#ifndef TRACEKIT_TBRW_H
#define TRACEKIT_TBRW_H

#include "tracekit/common.h"
#include "tracekit/tbrw_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- error codes (7.7) ------------------------------------------------------------------ */
#define VT_SUCCESS 0u
#define TBRW_INVALID_PARAMETER 1u /* NULL pointer, bad size field, bad flag */
#define TBRW_NO_MEMORY 2u
#define TBRW_BUFFER_TOO_SMALL 3u /* the size needed is in *size_buffer_used */
#define TBRW_FILE_NOT_FOUND 4u
#define TBRW_ACCESS_DENIED 5u
#define TBRW_IO_ERROR 6u
#define TBRW_DISK_FULL 7u
#define TBRW_NOT_A_TB5_FILE 8u
#define TBRW_UNSUPPORTED_VERSION 9u
#define TBRW_FILE_TRUNCATED 10u /* the file ends early (its writer may have died) */
#define TBRW_FILE_CORRUPT 11u /* a checksum or a structure is wrong */
#define TBRW_SECTION_EXISTS 12u /* writing a section or stream that exists */
#define TBRW_SECTION_NOT_FOUND 13u /* reading a section that was never written */
#define TBRW_STREAM_NOT_FOUND 14u
#define TBRW_INVALID_SECTION 15u /* unknown section identifier */
#define TBRW_INVALID_STREAM 16u /* stream number out of range */
#define TBRW_CALL_OUT_OF_ORDER 17u /* e.g. set_ without writing_, done_ without its opener */
#define TBRW_SECTION_BUSY 18u /* the section or stream is already open */
#define TBRW_READ_ONLY 19u /* writing to a file opened without TBRW_FILE_WRITE */
#define TBRW_RECORD_SIZE_MISMATCH 20u /* a data entry's size disagrees with the data descriptor */
#define TBRW_LEGACY_RECORD_IN_STREAM 21u /* ST_LEGACY_SAMPLE_RECORD in a stream above 0 */
#define TBRW_VALIDATION_FAILED 22u /* done_ found required information missing or wrong */
#define TBRW_INVALID_STRING 23u /* unique id 0 or unknown, or text that does not convert */
#define TBRW_INDEX_OUT_OF_RANGE 24u
#define TBRW_NOT_BOUND 25u /* bind information requested for an unbound stream */
#define TBRW_BIND_FAILED 26u /* the stream lacks what binding needs (modules, PC records) */
#define TBRW_TOO_BIG 27u /* a size beyond the format's limits */
#define TBRW_ERROR_LAST 27u

/* ---- 9.1 high level functions -------------------------------------------------------- */

/* Version of the API this library implements: 2.3. */
TK_API TBRW_U32 TBRW_get_version(TBRW_U32 *major, TBRW_U32 *minor);

/*
 * Opens filename with access_mode, a combination of TBRW_FILE_READ, TBRW_FILE_WRITE,
 * TBRW_FILE_CREATE_ALWAYS (required to create a file) and TBRW_FILE_COMPRESS (zstd data
 * chunks). Opening an existing file for writing lets you append streams and write sections
 * that do not exist yet; the result replaces the file at TBRW_close(). Opening for reading
 * checks the header, the trailer, the directory, the strings and every section's end mark
 * with their checksums (the other chunks are checked when read, or all at once by
 * TBRW_verify()). On failure *ptr is NULL.
 */
TK_API TBRW_U32 TBRW_open(TBRW_PTR *ptr, const TBRW_CHAR *filename, TBRW_U32 access_mode);

/* Closes the handle. For a written file: flushes, writes the directory, syncs and renames
 * "<name>.part" to its name. Any section still open is an error (TBRW_CALL_OUT_OF_ORDER) and
 * the file is then discarded as by TBRW_abort_cleanup_and_close(). NULL is accepted. */
TK_API TBRW_U32 TBRW_close(TBRW_PTR ptr);

/* Discards everything written through the handle (no file is left behind) and frees it. */
TK_API TBRW_U32 TBRW_abort_cleanup_and_close(TBRW_PTR ptr);

/* Points *error_string at a constant wide text for error_code (any value works). */
TK_API TBRW_U32 TBRW_error_string(TBRW_U32 error_code, const TBRW_CHAR **error_string);

/* Checks the whole file: every chunk between the header and the directory, listed or not
 * (header and payload checksums, zero padding, compressed frames), that the directory lists
 * exactly the chunks found there, that every section's items are well formed and that data
 * sizes agree with their descriptors. Call it while no section is being written. */
TK_API TBRW_U32 TBRW_verify(TBRW_PTR ptr);

/*
 * Translates the unique id string_id->soi_uniqueid to its text, and on success leaves
 * string_id->soi_ptr pointing to it (the guide's 9.1 usage; the id is then gone from
 * *string_id, so convert a copy if you need the id again):
 *  - with a buffer (size_of_buffer wide characters, the terminating NUL included) the text is
 *    copied there and soi_ptr points to buffer;
 *  - with buffer NULL, size_of_buffer 0 and size_buffer_needed NULL the text is in a buffer of
 *    the library, one per thread, valid until the same thread's next call (copy it to keep it).
 * *size_buffer_needed (optional) receives the number of wide characters needed, NUL included;
 * a buffer too small (or NULL with size_buffer_needed given) gives TBRW_BUFFER_TOO_SMALL and
 * leaves *string_id as it was. Id 0 is "no string": TBRW_INVALID_STRING (FAQ 7.6).
 * Safe to call from several threads.
 */
TK_API TBRW_U32 TBRW_convert_uniqueid_to_string(TBRW_PTR ptr, TBRW_U32 size_of_buffer, TBRW_STRING_OR_ID *string_id,
						TBRW_CHAR *buffer, TBRW_U32 *size_buffer_needed);

/* ---- 9.1.1-9.1.3 sections and streams ------------------------------------------------- */
TK_API TBRW_U32 TBRW_reading_section(TBRW_PTR ptr, TBRW_SECTION_IDENTIFIER section);
TK_API TBRW_U32 TBRW_writing_section(TBRW_PTR ptr, TBRW_SECTION_IDENTIFIER section);
TK_API TBRW_U32 TBRW_done_section(TBRW_PTR ptr, TBRW_SECTION_IDENTIFIER section);

/* Number of data streams in the file, streams being written included. */
TK_API TBRW_U32 TBRW_get_number_data_streams(TBRW_PTR ptr, TBRW_U32 *numStreams);
TK_API TBRW_U32 TBRW_reading_stream(TBRW_PTR ptr, TBRW_U32 stream);
/* Streams are numbered densely: stream must be at most the current number of streams. */
TK_API TBRW_U32 TBRW_writing_stream(TBRW_PTR ptr, TBRW_U32 stream);
/* When writing, checks that the stream has its stream information and data description
 * sections and that no stream section is still open. */
TK_API TBRW_U32 TBRW_done_stream(TBRW_PTR ptr, TBRW_U32 stream);
TK_API TBRW_U32 TBRW_reading_stream_section(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section);
TK_API TBRW_U32 TBRW_writing_stream_section(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section);
TK_API TBRW_U32 TBRW_done_stream_section(TBRW_PTR ptr, TBRW_U32 stream, TBRW_STREAM_SECTION_IDENTIFIER section);

/* ---- 9.2 global sections ------------------------------------------------------------------
 * get_system fills buf_ptr with the TBRW_SYSTEM followed by its nodes, cpus, architectures
 * and cpuid arrays; every pointer in the result points inside buf_ptr.
 */
TK_API TBRW_U32 TBRW_set_system(TBRW_PTR ptr, TBRW_SYSTEM *system);
TK_API TBRW_U32 TBRW_get_system(TBRW_PTR ptr, TBRW_U32 size_of_buffer, TBRW_SYSTEM *buf_ptr,
				TBRW_U32 *size_buffer_used);
TK_API TBRW_U32 TBRW_set_host(TBRW_PTR ptr, TBRW_HOST *host);
TK_API TBRW_U32 TBRW_get_host(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr, TBRW_U32 *size_buffer_used);
TK_API TBRW_U32 TBRW_set_os(TBRW_PTR ptr, TBRW_OS *os);
TK_API TBRW_U32 TBRW_get_os(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr, TBRW_U32 *size_buffer_used);
TK_API TBRW_U32 TBRW_set_application(TBRW_PTR ptr, TBRW_APPLICATION *application);
TK_API TBRW_U32 TBRW_get_application(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr,
				     TBRW_U32 *size_buffer_used);

TK_API TBRW_U32 TBRW_add_process(TBRW_PTR ptr, TBRW_PID *process);
/* *p_pid stays valid until the next TBRW_get_one_pid() on this handle. */
TK_API TBRW_U32 TBRW_get_one_pid(TBRW_PTR ptr, TBRW_U64 pid_index, const TBRW_PID **p_pid);
TK_API TBRW_U32 TBRW_enumerate_processes(TBRW_PTR ptr, TBRW_PID_CALLBACK *callback_func, void *user_ptr,
					 TBRW_U64 start_index);
TK_API TBRW_U32 TBRW_add_thread(TBRW_PTR ptr, TBRW_TID *thread);
TK_API TBRW_U32 TBRW_get_one_tid(TBRW_PTR ptr, TBRW_U64 tid_index, const TBRW_TID **p_tid);
TK_API TBRW_U32 TBRW_enumerate_threads(TBRW_PTR ptr, TBRW_TID_CALLBACK *callback_func, void *user_ptr,
				       TBRW_U64 start_index);
/* Threads with the index of their process, for the last bound stream (see TBRW_dobind). */
TK_API TBRW_U32 TBRW_bind_enumerate_threads(TBRW_PTR ptr, BIND_TID_CALLBACK *callback_func, void *user_ptr,
					    TBRW_U64 start_index);
TK_API TBRW_U32 TBRW_get_size_of_tid_bind_entry(TBRW_PTR ptr, TBRW_U32 data_stream, TBRW_U32 *sizeof_tid_bind_entry);

TK_API TBRW_U32 TBRW_add_module(TBRW_PTR ptr, TBRW_MODULE *module);
TK_API TBRW_U32 TBRW_get_one_module(TBRW_PTR ptr, TBRW_U64 module_index, const TBRW_MODULE **p_module);
TK_API TBRW_U32 TBRW_enumerate_modules(TBRW_PTR ptr, TBRW_MODULE_CALLBACK *callback_func, void *user_ptr,
				       TBRW_U64 start_index);
TK_API TBRW_U32 TBRW_bind_enumerate_modules(TBRW_PTR ptr, BIND_MODULE_CALLBACK *callback_func, void *user_ptr,
					    TBRW_U64 start_index);
TK_API TBRW_U32 TBRW_get_size_of_module_bind_entry(TBRW_PTR ptr, TBRW_U32 data_stream,
						   TBRW_U32 *sizeof_module_bind_entry);

TK_API TBRW_U32 TBRW_set_version_info(TBRW_PTR tbrw_ptr, TBRW_VERSION_INFO *version_info);
TK_API TBRW_U32 TBRW_get_version_info(TBRW_PTR tbrw_ptr, TBRW_U32 size_of_buffer, void *buf_ptr,
				      TBRW_U32 *size_buffer_used);
TK_API TBRW_U32 TBRW_set_user_defined_global(TBRW_PTR ptr, TBRW_U32 size_of_data, void *data_ptr);
TK_API TBRW_U32 TBRW_get_user_defined_global(TBRW_PTR ptr, TBRW_U32 size_of_buffer, void *buf_ptr,
					     TBRW_U32 *size_buffer_used);

/* ---- 9.3 stream sections ---------------------------------------------------------------- */
TK_API TBRW_U32 TBRW_get_stream_info(TBRW_PTR tbrw_ptr, TBRW_U32 stream, TBRW_U32 size_of_buffer, void *buf_ptr,
				     TBRW_U32 *size_buffer_used);
TK_API TBRW_U32 TBRW_set_stream_info(TBRW_PTR tbrw_ptr, TBRW_U32 stream, TBRW_STREAM_INFO *stream_info);
TK_API TBRW_U32 TBRW_add_event(TBRW_PTR ptr, TBRW_U32 stream, TBRW_EVENT *event_descriptor_entry);
TK_API TBRW_U32 TBRW_enumerate_events(TBRW_PTR ptr, TBRW_U32 stream, TBRW_EVENT_CALLBACK *callback_func,
				      void *user_ptr, TBRW_U64 start_index);
TK_API TBRW_U32 TBRW_add_data_descriptor_entry(TBRW_PTR ptr, TBRW_U32 stream,
					       TBRW_SAMPREC_DESC_ENTRY *data_descriptor_entry);
TK_API TBRW_U32 TBRW_enumerate_data_descriptor_entries(TBRW_PTR ptr, TBRW_U32 stream,
						       TBRW_DATA_DESC_CALLBACK *callback_func, void *user_ptr);

/*
 * Appends data entries. The record size is fixed by the data descriptor: the largest
 * desc_offset + desc_data_size of its entries. size_of_data_entry may be the record size or,
 * when every entry has desc_offset 0 (the chapter 6 style, one TBRW_add_data per entry), the
 * size of each entry in turn: the pieces are joined into records in descriptor order.
 * A multiple of the record size appends that many records at once. Any other size is
 * TBRW_RECORD_SIZE_MISMATCH. Stream data may be larger than memory.
 */
TK_API TBRW_U32 TBRW_add_data(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_data_entry, void *data_entry);
/* Appends the records of a regular binary file. Its size must be a multiple of the record
 * size: that is checked before anything is appended, so a refused file has no effect. A read
 * error part way through (TBRW_IO_ERROR) leaves the records before it appended. */
TK_API TBRW_U32 TBRW_add_data_from_file(TBRW_PTR ptr, TBRW_U32 stream, TBRW_CHAR *filename);
/* Calls back with consecutive records from record start_index on, in batches of whole records. */
TK_API TBRW_U32 TBRW_enumerate_data(TBRW_PTR ptr, TBRW_U32 stream, TBRW_DATA_CALLBACK *callback_func,
				    void *user_ptr, TBRW_U64 start_index);
TK_API TBRW_U32 TBRW_bind_enumerate_data(TBRW_PTR ptr, TBRW_U32 data_stream, BIND_DATA_CALLBACK *callback_func,
					 void *user_ptr, TBRW_U64 start_index);
TK_API TBRW_U32 TBRW_get_size_of_data_bind_entry(TBRW_PTR ptr, TBRW_U32 data_stream,
						 TBRW_U32 *sizeof_data_bind_entry);
TK_API TBRW_U32 TBRW_is_bound(TBRW_PTR ptr, TBRW_U32 data_stream, TBRW_U32 *is_bound);
/*
 * Binds a stream whose records hold a TBRW_SampleRecordPC (ST_LEGACY_SAMPLE_RECORD) and
 * optionally a time stamp (ST_TIME_STAMP): each sample gets the module loaded in its process
 * (or globally) whose address range holds its instruction pointer at the sample's time
 * (TSC, or sample number for modules without TBRW_MODULE_TSC_USED), its process (a reused pid
 * is a new process once its executable is loaded again) and its thread. When the file has no
 * process/thread section, one is derived and written. On a writable handle the result is
 * stored in the file (bind streams, see docs/tb5-format.md); on a read-only handle it is
 * kept in memory until the handle is closed. Binding again replaces the previous result.
 */
TK_API TBRW_U32 TBRW_dobind(TBRW_PTR ptr, TBRW_U32 data_stream);
/* Removes the bind result of a stream (and a process/thread section the binder derived). */
TK_API TBRW_U32 TBRW_unbind(TBRW_PTR ptr, TBRW_U32 data_stream);

TK_API TBRW_U32 TBRW_set_user_defined_stream(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_data, void *data_ptr);
TK_API TBRW_U32 TBRW_get_user_defined_stream(TBRW_PTR ptr, TBRW_U32 stream, TBRW_U32 size_of_buffer, void *buf_ptr,
					     TBRW_U32 *size_buffer_used);

/* ---- 9.4 string conversion -----------------------------------------------------------------
 * Sizes count output units (wide characters, bytes) including the terminating NUL. With
 * *size 0 (and a NULL output) the call only measures: it returns TBRW_BUFFER_TOO_SMALL with
 * the size needed in *size. Invalid UTF-8 or an invalid code point: TBRW_INVALID_STRING.
 */
TK_API TBRW_U32 TBRW_convert_utf8_to_wcs(const char *utf8, wchar_t *wcs, TBRW_U32 *wcs_size);
TK_API TBRW_U32 TBRW_convert_wcs_to_utf8(const wchar_t *wcs, char *utf8, TBRW_U32 *utf8_size);

/* ---- tracekit extensions ------------------------------------------------------------------ */

/*
 * The calling thread's description of its last failed TBRW_* call, naming the file and,
 * for bad files, the byte offset and what is wrong there, e.g.
 * "a.tb5: chunk at byte offset 4160: checksum mismatch (stored 0x1234abcd, computed ...)".
 * Works after a failed TBRW_open() too. Empty string when nothing failed yet.
 */
TK_API const char *tk_tbrw_error_detail(void);

/* What tk_tbrw_recover() salvaged. */
typedef struct tk_tbrw_recover_report {
	TBRW_U64 chunks_kept; /* complete chunks copied */
	TBRW_U64 bytes_scanned; /* bytes of the damaged file examined */
	TBRW_U64 bytes_dropped; /* bytes of the damaged file left out, all ranges together */
	TBRW_U64 first_bad_offset; /* byte offset of the first range left out (file size if none) */
	TBRW_U64 records_kept; /* data records kept, all streams */
	TBRW_U32 sections_kept; /* global and stream sections kept */
	TBRW_U32 sections_dropped; /* sections left out: unfinished, with a lost chunk, or unreadable */
	TBRW_U32 was_complete; /* 1: the file had a valid directory and no damage (nothing was lost) */
	TBRW_U32 ranges_lost; /* stretches of the file left out (tk_tbrw_recover_ranges lists them) */
	TBRW_U64 records_lost; /* data records of lost chunks before later ones that were kept */
	TBRW_U32 sections_unreadable; /* finished sections whose items do not decode (left out) */
	TBRW_U32 reserved;
} tk_tbrw_recover_report;

/*
 * Salvages src_path, a .tb5 file whose writer died or that was cut short or damaged, into a
 * new file dst_path (written as "<dst>.part", renamed on success). Every chunk whose
 * checksums hold is considered, also past damage: a chunk that fails its checks is skipped
 * by the length its header gives, and where no header holds the scan looks for the next one
 * that does. Sections that were completed (done_) are kept whole when none of their chunks
 * was lost and their items decode; data sections keep all their complete records (records
 * after a lost chunk follow on, renumbered); strings of a lost strings chunk read as empty.
 * The written file is read back and checked in full before it gets its name: success means
 * every section in it reads. report may be NULL. Returns VT_SUCCESS, or TBRW_NOT_A_TB5_FILE
 * when src has no valid header, an I/O error, or TBRW_FILE_CORRUPT when what was kept does
 * not read back (then nothing is left under dst_path).
 */
TK_API TBRW_U32 tk_tbrw_recover(const char *src_path, const char *dst_path, tk_tbrw_recover_report *report);

/* Called once for each stretch [from, to) of the damaged file that was left out, in file
 * order, with what it held when its chunk header could still be read (or why a section was
 * left out). The trailing stretch of a file cut short is reported too. */
typedef void tk_tbrw_lost_fn(TBRW_U64 from, TBRW_U64 to, const char *what, void *user_ptr);
/* tk_tbrw_recover(), reporting each stretch left out to on_lost (may be NULL). */
TK_API TBRW_U32 tk_tbrw_recover_ranges(const char *src_path, const char *dst_path, tk_tbrw_recover_report *report,
				       tk_tbrw_lost_fn *on_lost, void *user_ptr);

#ifdef __cplusplus
}
#endif
#endif
