/* SPDX-License-Identifier: MIT */
/*
 * tracekit/symbols.h: addresses of a traced process resolved to function names, and to
 * source file and line where DWARF debug information exists, through elfutils' libdwfl
 * (libtracekit-formats). docs/man3/tk_symbols.md is the manual.
 *
 * Where the code of a process was comes from the trace: its SYSTEM MMAP, MUNMAP and
 * MAPNAME events (tracelogger's collector writes MMAP from perf's MMAP2 records; tracekit's
 * recorder writes MMAP for every executable file mapping at START), each with its time:
 * tk_symbols_load_file() reads them all from a .kev file before anything is looked up
 * (a file holds the per-thread buffers of a recording in the order they were written, not
 * in time order), tk_symbols_event() takes them one by one, tk_symbols_add_mapping()
 * directly. A lookup of an address of process pid at time t uses, of the mappings of pid
 * holding the address, the latest one from t or before (a later mapping replaces an
 * earlier one, an unmapping removes it); when all of them are later than t, the earliest
 * (a process's code was there before the trace said so: perf's and the recorder's
 * snapshots are written after the process started). Each binary is opened once (one
 * Dwfl_Module per file, whatever the number of processes and lookups) and results are
 * cached per address.
 *
 * Unresolvable addresses stay addresses: an address in no mapping, a mapping of a file
 * that is missing, not a regular file or not ELF, or an address without a symbol give
 * TK_ENOENT and the formatted text "0x<address>".
 *
 * One tk_symbols is used by one thread at a time. Strings in a tk_symbol (name, file,
 * module) belong to the tk_symbols and stay valid until tk_symbols_free().
 */
#ifndef TRACEKIT_SYMBOLS_H
#define TRACEKIT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/common.h"
#include "tracekit/kev.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_symbols tk_symbols;

/* What an address resolved to. */
typedef struct tk_symbol {
	uint64_t addr;          /* the address looked up */
	const char *name;       /* function (demangled: tk_symbols_set_demangle()), NULL when unresolved */
	uint64_t offset;        /* addr - the function's start */
	const char *file;       /* source file from DWARF line information, or NULL */
	int line;               /* its line, 0 when unknown */
	const char *module;     /* path of the mapped binary, or NULL (in no mapping) */
	uint64_t module_addr;   /* the address in the binary's own (link-time) address space */
} tk_symbol;

/* Limits: mappings kept (all processes together; more are counted in dropped_mappings)
 * and the length of a binary's path. */
#define TK_SYMBOLS_MAX_MAPPINGS (1u << 20)
#define TK_SYMBOLS_MAX_PATH 4096

typedef struct tk_symbols_stats {
	uint64_t mappings;         /* mappings added (events and calls) */
	uint64_t dropped_mappings; /* past TK_SYMBOLS_MAX_MAPPINGS or malformed: ignored */
	uint64_t files;            /* distinct binaries named */
	uint64_t files_failed;     /* of which could not be opened as ELF */
	uint64_t lookups, resolved, cache_hits;
} tk_symbols_stats;

/* Creates an empty symbolizer. Returns 0, TK_EINVAL (NULL out) or TK_ENOMEM. */
TK_API int tk_symbols_new(tk_symbols **out);

/* Frees s and every binary it opened (NULL accepted). */
TK_API void tk_symbols_free(tk_symbols *s);

/*
 * A directory the trace's paths are found under (a copy of a target's file system, as
 * QNX's sysroot): "/usr/lib/libc.so" is then opened as ROOT "/usr/lib/libc.so". NULL or
 * "" for none (the default). Call before the first lookup. Returns 0, TK_EINVAL (too
 * long) or TK_ENOMEM.
 */
TK_API int tk_symbols_set_root(tk_symbols *s, const char *root);

/*
 * Names of C++ and Rust functions demangled (on: the default), with their parameter types
 * ("ns::Cls::run(int)"), through libiberty's demangler, as perf and gdb show them; off: as
 * the symbol tables have them ("_ZN2ns3Cls3runEi"). A name that does not demangle stays
 * as it is. Call before the first lookup. Returns 0 or TK_EINVAL.
 */
TK_API int tk_symbols_set_demangle(tk_symbols *s, int on);

/*
 * Process pid has, from time_ns (the trace's nanoseconds, tk_kev_decoded.time_ns) on,
 * [vaddr, vaddr + len) mapped from file path at file offset offset (as /proc/PID/maps and
 * perf's MMAP2 say it). A mapping identical to one pid already has is not added again.
 * The file is opened at the first lookup that needs it. Returns 0, TK_EINVAL (NULL path,
 * empty range or one that wraps, a path not absolute or longer than TK_SYMBOLS_MAX_PATH),
 * TK_ETOOBIG (TK_SYMBOLS_MAX_MAPPINGS reached) or TK_ENOMEM.
 */
TK_API int tk_symbols_add_mapping(tk_symbols *s, int32_t pid, uint64_t time_ns, uint64_t vaddr, uint64_t len,
				  uint64_t offset, const char *path);

/*
 * Like tk_symbols_add_mapping() for a QNX MAPNAME event: the binary path is loaded at
 * base vaddr (its first loadable segment there), len bytes.
 */
TK_API int tk_symbols_add_image(tk_symbols *s, int32_t pid, uint64_t time_ns, uint64_t vaddr, uint64_t len,
				const char *path);

/* From time_ns on, process pid has nothing mapped at [vaddr, vaddr + len). Returns 0,
 * TK_EINVAL, TK_ETOOBIG or TK_ENOMEM. */
TK_API int tk_symbols_remove_mapping(tk_symbols *s, int32_t pid, uint64_t time_ns, uint64_t vaddr, uint64_t len);

/*
 * Feeds one decoded event (tk_traceparser_decode()): SYSTEM MMAP (wide form: pid,
 * vaddr, len, offset, path), MUNMAP and MAPNAME change the mappings, every other event is
 * ignored. Returns 1 for a mapping event taken, 0 when it did not concern them
 * (or was malformed: a fast-mode MMAP without length and path, a relative path; counted
 * in dropped_mappings), TK_ENOMEM.
 */
TK_API int tk_symbols_event(tk_symbols *s, const tk_kev_decoded *d);

/*
 * Reads the SYSTEM MMAP, MUNMAP and MAPNAME events of the .kev file path (tk_symbols_event()
 * for each), before the file is read again for its other events. Standard input ("-")
 * cannot be read twice: feed its events with tk_symbols_event() instead. Returns 0, or the
 * error of reading the file (TK_ENOENT, TK_EFORMAT, TK_ECORRUPT...) with errmsg
 * (errmsg_cap bytes, may be NULL) saying what and where; the mappings before a damage
 * are kept.
 */
TK_API int tk_symbols_load_file(tk_symbols *s, const char *path, char *errmsg, size_t errmsg_cap);

/*
 * Resolves addr of process pid at time time_ns into *out (always filled: name NULL when unresolved).
 * Returns 0 when a function name was found, TK_ENOENT when not, TK_EINVAL for NULL
 * arguments.
 */
TK_API int tk_symbols_lookup(tk_symbols *s, int32_t pid, uint64_t time_ns, uint64_t addr, tk_symbol *out);

/*
 * Text of a lookup: "name+0xOFF (file:line)", "name+0xOFF" without line information,
 * "0xADDR" when unresolved. Writes at most cap bytes, NUL-terminated; returns the length
 * the whole text needs (as snprintf).
 */
TK_API size_t tk_symbols_format(const tk_symbol *sym, char *buf, size_t cap);

/* Counters so far (valid until tk_symbols_free()); NULL for a NULL s. */
TK_API const tk_symbols_stats *tk_symbols_get_stats(const tk_symbols *s);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_SYMBOLS_H */
