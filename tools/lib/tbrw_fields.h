/* SPDX-License-Identifier: MIT */
/*
 * tbrw_fields.h: what print_tb5, tbrw_reader, tbrw_writer and tb5_recover share on top of
 * the TBRW API: TBRW structures to and from the .dat schema's field values (tbrw_dat.h),
 * strings between the API's wchar_t and UTF-8, and error messages with their byte offsets.
 */
#ifndef TRACEKIT_TOOLS_TBRW_FIELDS_H
#define TRACEKIT_TOOLS_TBRW_FIELDS_H

#include <stddef.h>

#include "tbrw_dat.h"
#include "tool_cli.h"
#include "tracekit/tbrw.h"

/* A section, stream section or record that was never written. */
#define tbf_absent(rc) ((rc) == TBRW_SECTION_NOT_FOUND)

/* Strings converted for one record; tbf_strings_reset() frees them. */
struct tbf_strings {
	void **items;
	size_t n, cap;
};
void tbf_strings_reset(struct tbf_strings *sb);

/*
 * A TBRW structure (of the type that goes with kind, see tbrw_fields.c) to field values.
 * Strings are read back from their unique ids (ptr) and converted to UTF-8 into sb.
 * Returns VT_SUCCESS or the failing call's TBRW error code.
 */
TBRW_U32 tbf_to_values(TBRW_PTR ptr, enum dat_kind kind, const void *in, struct dat_values *v,
		       struct tbf_strings *sb);

/*
 * Field values to a TBRW structure ready for a set_/add_ call: the *_size member set, the
 * strings converted to wchar_t into sb (soi_ptr), array pointers and counts left zero.
 * Returns VT_SUCCESS or TBRW_... from the string conversion.
 */
TBRW_U32 tbf_from_values(enum dat_kind kind, const struct dat_values *v, void *out, struct tbf_strings *sb);

/* A string of the API as UTF-8 into sb; *out is NULL for unique id 0. */
TBRW_U32 tbf_string(TBRW_PTR ptr, const TBRW_STRING_OR_ID *id, struct tbf_strings *sb, const char **out);

/* A path as the wchar_t string TBRW_open() takes (malloc'd), or NULL. */
TBRW_CHAR *tbf_wide_path(const char *path);

/*
 * Writes "<tool>: <file>: <what>: <error string> (at byte offset N)" to stderr for a failed
 * TBRW call with code rc: the library's detailed message and offset when it has them.
 */
void tbf_report(const char *tool, const char *file, TBRW_PTR ptr, const char *what, TBRW_U32 rc);
/* Names open_path (a copy of standard input) as the file tbf_report's callers name. */
void tbf_name_input(const char *open_path);

/*
 * An input file opened for reading; "-" (standard input) is read where it is when it is a
 * file, else copied to a private temporary (bounded, see tktool_stdin_file).
 */
struct tbf_input {
	struct tktool_stdin_file stdin_file;
	int is_stdin;
};

/*
 * Opens path (or "-") with TBRW_open for reading. On failure prints
 * "<tool>: <file>: <what> (at byte offset N)" and returns -1.
 */
int tbf_open_input(const char *tool, const char *path, struct tbf_input *in, TBRW_PTR *ptr);
/* Closes the file (ptr may be NULL) and removes a temporary copy. */
void tbf_close_input(struct tbf_input *in, TBRW_PTR ptr);

#endif /* TRACEKIT_TOOLS_TBRW_FIELDS_H */

/* ---- reading a whole file ---- */

/* Returned by a walk callback on a data record: skip the section's remaining records
 * (they are still counted: the DAT_SECTION_END item carries the count in n_bytes). */
#define TBF_SKIP_RECORDS 0x7fff0001

/*
 * Reads every global section, then every stream with its sections, of an open file and hands
 * them to fn as the items the .dat parser would produce for the same content (line is 0;
 * DAT_SECTION_END of a data section has the number of records in n_bytes). Absent sections
 * are left out. Returns 0, the callback's non-zero value, or -1 after a failed TBRW call
 * whose name and code are stored in *failed_call and *failed_rc. A callback stops the walk
 * with a positive value (an output error, say): -1 would be taken for a failed TBRW call.
 */
int tbf_walk(TBRW_PTR ptr, dat_item_fn fn, void *ud, const char **failed_call, TBRW_U32 *failed_rc);
/*
 * Has the following tbf_walk calls update progress (begun by the caller with the file's
 * size) with the bytes of data records read, which make up most of a large file. NULL: none.
 */
void tbf_walk_progress(struct tktool_progress *progress);
