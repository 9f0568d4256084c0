/* SPDX-License-Identifier: MIT */
/*
 * Private to the bfbin module: the parser entry the converters share (with a second stop
 * flag, so a converter can end parsing on its own error while still honouring the
 * caller's flag), and the state and helpers common to every converter.
 */
#ifndef TK_BFBIN_INTERNAL_H
#define TK_BFBIN_INTERNAL_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "tracekit/bfbin.h"
#include "tracekit/bfbin_convert.h"

/*
 * The HDF5 converter is a plugin of the shared library (libtracekit-hdf5-VERSION.so beside
 * libtracekit-formats, loaded by tk_bfbin_to_hdf5() on first use: bfbin_hdf5_entry.c), so
 * that no program pays for loading HDF5 and what it brings (curl, TLS, Kerberos: about 8 ms
 * at every start) unless it writes HDF5; the static library holds it directly. The
 * functions of this module that the plugin calls are therefore exported from the shared
 * library (TK__PLUGIN_API), outside the public API: the plugin is made by the same build,
 * and its file name carries the version.
 */
#define TK__PLUGIN_API __attribute__((visibility("default")))

/* The HDF5 converter itself (bfbin_hdf5.c): tk_bfbin_to_hdf5(), wherever it is. */
TK__PLUGIN_API int tk__bfbin_to_hdf5_impl(const char *in_path, const char *h5_path, tk_bfbin_convert *cv);

/* tk_bfbin_parse() that also stops when *stop2 becomes nonzero. */
int tk__bfbin_parse_path(const char *path, const bfbin_callback_t *callbacks, void *user_data,
			 const tk_bfbin_parse_options *opts, const volatile sig_atomic_t *stop2);

/* tk_bfbin_parse_fd() that also stops when *stop2 becomes nonzero. */
int tk__bfbin_parse_fd_stop(int fd, const char *name, const bfbin_callback_t *callbacks, void *user_data,
			    const tk_bfbin_parse_options *opts, const volatile sig_atomic_t *stop2);

/*
 * Test hook (tests/fuzz/fuzz_bfbin.c): tk_bfbin_parse_fd() without options, starting
 * with a buffer of cap bytes (1 to 1 MiB) instead of 1 MiB and reading at most max_read
 * bytes per read(2) (0: no limit), so that small inputs take the refill, compaction and
 * growth paths of the file and pipe reader.
 */
int tk__bfbin_parse_fd_small(int fd, const char *name, const bfbin_callback_t *callbacks, void *user_data,
			     size_t cap, size_t max_read);

/*
 * The first member of every converter's callback state: the caller's options, the first
 * error (its message goes to cv->error) and the flag that stops the parser.
 */
struct tk__bfconv {
	tk_bfbin_convert *cv;
	const char *in_path;        /* the input's name in messages */
	int in_fd;                  /* the input with TK_BFBIN_INPUT_FD, else -1 */
	int rc;                     /* first error, 0 if none */
	volatile sig_atomic_t halt; /* stops the parser at the next row, table or wait */
	unsigned flags;             /* cv->flags, 0 if the caller's struct predates them */
	/* cv->progress_cb, NULL if the caller's struct predates it */
	void (*progress_cb)(void *user_data, uint64_t done, uint64_t total);
};

/* Whether the caller's tk_bfbin_convert (of size cv->struct_size) has the field. */
#define TK__BFCONV_HAS(cv, field) \
	((cv)->struct_size >= offsetof(tk_bfbin_convert, field) + sizeof((cv)->field))

/* Prepares c; returns TK_EINVAL (and a message) when the arguments are unusable. */
TK__PLUGIN_API int tk__bfconv_init(struct tk__bfconv *c, tk_bfbin_convert *cv, const char *in_path);

/* Records the first error (code and message) and stops the parser. Returns rc. */
TK__PLUGIN_API int tk__bfconv_fail(struct tk__bfconv *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Sends a warning to cv->warning_cb, if any. */
void tk__bfconv_warn(struct tk__bfconv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * error_cb for converters whose user_data starts with struct tk__bfconv: keeps the
 * parser's message as the conversion's error.
 */
TK__PLUGIN_API void tk__bfconv_parse_error(void *user_data, const char *message);

/*
 * Parses c->in_path with cbs (user_data = c, which must be the first member of the
 * converter's state), the live options of cv and the given idle hook. Returns the
 * conversion's result: the converter's own error if it failed, else the parser's.
 */
TK__PLUGIN_API int tk__bfconv_run(struct tk__bfconv *c, const bfbin_callback_t *cbs, int live, void (*idle_cb)(void *));

/* Flushes and checks a FILE * output; records TK_ENOSPC / TK_EIO naming cv->output_name. */
int tk__bfconv_check_output(struct tk__bfconv *c, FILE *out);

/*
 * A set of names (a hash table of copies) to find duplicates in time linear in their
 * number. With fold_ascii, names differing only in ASCII case are equal (SQLite's rule
 * for identifiers). Zero-initialised it is empty; tk__bf_nameset_free() empties it.
 */
struct tk__bf_nameset {
	char **slots;
	size_t cap, n;
	int fold_ascii;
};

/* Adds name: 1 if added, 0 if it was already there, TK_ENOMEM. */
TK__PLUGIN_API int tk__bf_nameset_add(struct tk__bf_nameset *set, const char *name);
TK__PLUGIN_API void tk__bf_nameset_clear(struct tk__bf_nameset *set); /* keeps the allocation */
TK__PLUGIN_API void tk__bf_nameset_free(struct tk__bf_nameset *set);

/* Decimal digits of v into buf (at least 21 bytes); returns the length. */
size_t tk__bf_u64_to_dec(char *buf, uint64_t v);

/*
 * Checks the output path of a database converter: given, not the input, and not an
 * existing device, pipe or directory (the database is renamed onto it).
 */
TK__PLUGIN_API int tk__bfconv_check_db_output(struct tk__bfconv *c, const char *path);

/*
 * Where a database converter builds its file. SQLite and HDF5 open files by name (SQLite
 * also its journals, "<db>-journal", "-wal", "-shm"), so nothing they open may be found
 * in a directory others can write: the file is built in a private directory (mkdtemp,
 * mode 0700) beside the output, ".<base>.part.XXXXXX/<base>", on the output's file
 * system, and moved onto the output by one rename. Nothing another user (or an earlier
 * run) made can be under any name the libraries use. "<out>.part" is a symlink to the
 * file being built, made with symlink(2) (which never follows anything), so that a live
 * database can be queried meanwhile; it is best effort and removed at the end.
 */
struct tk__bf_temp {
	char *dir;  /* the private directory, NULL when none */
	char *file; /* the file SQLite or HDF5 writes */
	char *link; /* "<out>.part", the name messages give */
	char *link_target;
	int linked; /* whether we made that symlink */
	tk_bfbin_convert *cv; /* whose temp_cb is told, NULL when none */
};

/*
 * Makes the private directory and the empty file (with the mode of the output it will
 * replace, 0644 minus the umask for a new one), so a path that cannot be written gets a
 * plain errno message. On failure nothing is left and t is cleared.
 */
TK__PLUGIN_API int tk__bfconv_temp_create(struct tk__bfconv *c, const char *out, struct tk__bf_temp *t);
/* fsync()s the finished file and renames it onto out, then removes the rest. TK_E* code. */
TK__PLUGIN_API int tk__bfconv_temp_commit(struct tk__bf_temp *t, const char *out);
/* Removes the file, its journals, the directory and our "<out>.part" link. */
TK__PLUGIN_API void tk__bfconv_temp_discard(struct tk__bf_temp *t);


#endif /* TK_BFBIN_INTERNAL_H */
