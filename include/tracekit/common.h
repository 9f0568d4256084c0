/* SPDX-License-Identifier: MIT */
/*
 * tracekit/common.h: what every tracekit module shares: the export macro, error codes and
 * their messages, crash-safe output files and the cycle clock.
 * Nothing here depends on any other tracekit module.
 */
#ifndef TRACEKIT_COMMON_H
#define TRACEKIT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TK_BUILDING_LIBRARY)
#define TK_API __attribute__((visibility("default")))
#else
#define TK_API
#endif

/* A compile-time check in a public header, valid in C11 and in C++11 (static_assert). */
#ifdef __cplusplus
#define TK_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define TK_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define TK_VERSION_MAJOR 0
#define TK_VERSION_MINOR 1
#define TK_VERSION_PATCH 0
#define TK_VERSION_STRING "0.1.0"

/* Returns the library version as "major.minor.patch". */
TK_API const char *tk_version(void);

/*
 * Error codes of the tk_ API. Functions return 0 on success and one of these (negative)
 * values on failure. The numbers are part of the ABI: never reuse or renumber an entry,
 * only append. tk_strerror() turns any of them (or a positive errno value) into text.
 */
#define TK_ERRNO_MAP(XX)                                                     \
	XX(EINVAL,   -1, "invalid argument")                                 \
	XX(ENOMEM,   -2, "out of memory")                                    \
	XX(EIO,      -3, "input/output error")                               \
	XX(ETRUNC,   -4, "file is truncated")                                \
	XX(ECORRUPT, -5, "file is corrupt")                                  \
	XX(EFORMAT,  -6, "file is not in the expected format")               \
	XX(EVERSION, -7, "unsupported format version")                       \
	XX(ERANGE,   -8, "value out of range")                               \
	XX(ESTATE,   -9, "call made out of order")                           \
	XX(ENOSPC,   -10, "no space left on device")                         \
	XX(ENOENT,   -11, "no such file or directory")                       \
	XX(EACCES,   -12, "permission denied")                               \
	XX(EEXIST,   -13, "already exists")                                  \
	XX(ETOOBIG,  -14, "input exceeds a size limit")                      \
	XX(ENOTSUP,  -15, "operation not supported")                         \
	XX(EBUSY,    -16, "resource busy")                                   \
	XX(EOVERFLOW, -17, "buffer too small")                               \
	XX(ECANCELED, -18, "operation canceled")                             \
	XX(EROFS,    -19, "read-only file system")                           \
	XX(ENOTDIR,  -20, "not a directory")                                 \
	XX(EMFILE,   -21, "too many open files")                             \
	XX(EISDIR,   -22, "is a directory")                                  \
	XX(ENAMETOOLONG, -23, "file name too long")                          \
	XX(EDQUOT,   -24, "disk quota exceeded")                             \
	XX(EFBIG,    -25, "file too large")

enum tk_error {
	TK_OK = 0,
#define TK__ERRNO_ENUM(name, value, text) TK_##name = (value),
	TK_ERRNO_MAP(TK__ERRNO_ENUM)
#undef TK__ERRNO_ENUM
};

/*
 * Message for a TK_E* code (negative), or strerror() text for a positive errno value.
 * Never returns NULL; unknown codes give "unknown error". Thread-safe.
 */
TK_API const char *tk_strerror(int err);

/* Maps an errno value (EIO, ENOSPC, ...) to the closest TK_E* code. */
TK_API int tk_error_from_errno(int errnum);

/*
 * Crash-safe output files.
 *
 * tk_outfile_open() creates a temporary next to the final path: "<path>.part", or
 * "<path>.XXXXXX.part" (six random characters) when that name is already taken, or writes
 * straight to standard output when path is "-". Data written through the stream or the fd
 * goes there; tk_outfile_commit() flushes, fsyncs and renames it to its final name, so a
 * file appears under its final name only when it is complete. tk_outfile_abort() removes
 * the temporary. A process killed mid-write leaves only the temporary (its name is
 * tk_outfile_temp_path()), which holds every byte that was flushed before the kill.
 *
 * Safety: the temporary is created with O_EXCL|O_NOFOLLOW, so nothing that exists under
 * its name is followed, truncated or reused: a symlink planted at "<path>.part" is left
 * alone and a crashed run's "<path>.part" (perhaps the only copy of a trace) is kept, the
 * new run writing to "<path>.XXXXXX.part" instead. The new file gets the mode of the file
 * it replaces (a 0600 file stays 0600), or 0644 minus the umask when there was none.
 * A symlink at the final name is replaced, never followed: its target is not touched.
 * Exceptions: /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N mean that open
 * descriptor (a file the shell redirected to, a pipe), which is written, never replaced;
 * and a link that we or root own naming a device or FIFO is written through.
 * An existing path that is not a regular file (/dev/null, /dev/full, a named pipe) is
 * written in place: commit flushes and closes it, nothing is ever renamed onto it.
 * A directory at the path fails with TK_EISDIR.
 *
 * The directory is pinned at open: a relative path is resolved once, against the working
 * directory of the open, and commit and abort rename or remove the temporary in that
 * directory (through a descriptor of it, renameat/unlinkat) even if the program has
 * chdir()ed since; files of the same names in its new directory are never touched. The
 * handle holds that descriptor (O_PATH, close-on-exec) until commit or abort. If the
 * program closes it, the directory is found again by its absolute path and used only if
 * it is still the same directory (else commit fails with TK_ENOENT, keeping nothing under
 * the final name); a descriptor the program reused is never used or closed. Removing the
 * temporary removes only the file this handle created (same inode), never one that
 * replaced it.
 */
typedef struct tk_outfile tk_outfile;

/* flags for tk_outfile_open */
#define TK_OUTFILE_KEEP_PARTIAL_ON_ABORT 0x1 /* abort renames nothing but keeps the temporary */

TK_API int tk_outfile_open(tk_outfile **out, const char *path, unsigned flags);
/* Stream for writing (buffered stdio); valid until commit or abort. */
TK_API FILE *tk_outfile_stream(tk_outfile *of);
/*
 * Path the data is being written to: the temporary ("<path>.part" or
 * "<path>.XXXXXX.part"), the path itself for a device or FIFO, "-" for stdout. A relative
 * name is relative to the working directory of the open: for messages; to remove the
 * temporary use tk_outfile_remove_temp(), which is right after a chdir() too.
 */
TK_API const char *tk_outfile_temp_path(const tk_outfile *of);
/*
 * Removes the temporary now, whatever the flags (in the pinned directory, and only while
 * it is the file this handle created); the handle stays open, to be aborted (a commit
 * would then fail). Does nothing for standard output, a device or a FIFO. NULL is accepted.
 */
TK_API void tk_outfile_remove_temp(tk_outfile *of);
/*
 * Finishes the file: flush, fsync, rename to the final name. Frees of.
 * Returns 0, or TK_ENOSPC / TK_EIO / ... (the temporary is then removed unless
 * TK_OUTFILE_KEEP_PARTIAL_ON_ABORT was given).
 */
TK_API int tk_outfile_commit(tk_outfile *of);
/* Discards the file (removes the temporary) and frees of. NULL is accepted. */
TK_API void tk_outfile_abort(tk_outfile *of);

/*
 * Whether input and output name the same file (same st_dev and st_ino, not the same
 * string: hard links and "./x" count), so a tool would destroy its input by writing its
 * output. "-" stands for standard input (as input) and standard output (as output).
 * Only regular files count: a device or FIFO can be read and written at once.
 * Returns 1 when they are the same file, 0 otherwise (also when either does not exist).
 */
TK_API int tk_same_file(const char *input, const char *output);

/* The directory for temporary files: $TMPDIR when set and not empty, else /tmp. */
TK_API const char *tk_tmpdir(void);
/*
 * An unnamed temporary file in tk_tmpdir(), open for reading and writing, gone when closed
 * (O_TMPFILE, or a mkstemp() name "PREFIX.XXXXXX" removed at once; NULL prefix: "tracekit").
 * Unlike tmpfile(), which always uses /tmp. NULL with errno set: name tk_tmpdir() in the
 * message.
 */
TK_API FILE *tk_tmpfile(const char *prefix);

/*
 * Cycle clock. tk_clock_cycles() reads the CPU's time-stamp counter where there is one
 * (x86: rdtsc), CLOCK_MONOTONIC_RAW nanoseconds elsewhere. tk_clock_cycles_per_sec()
 * measures its rate once (about 20 ms on first call) and caches it; thread-safe.
 */
TK_API uint64_t tk_clock_cycles(void);
TK_API uint64_t tk_clock_cycles_per_sec(void);
/* Monotonic nanoseconds (CLOCK_MONOTONIC_RAW). */
TK_API uint64_t tk_clock_ns(void);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_COMMON_H */
