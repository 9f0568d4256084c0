/* SPDX-License-Identifier: MIT */
/*
 * tracekit/traceparser.h: libtraceparser, the callback parser of QNX .kev trace files,
 * with the API and semantics of the QNX System Analysis Toolkit (<sys/traceparser.h>).
 *
 * Usage: traceparser_init(), optionally traceparser_debug(), one traceparser_cs() or
 * traceparser_cs_range() per event of interest, traceparser() on a file name ("-" reads
 * standard input, pipes included), traceparser_destroy().
 *
 * Callbacks receive the event's header word and 32-bit timestamp (both already in host
 * byte order) and its payload words exactly as stored in the file: when
 * _TRACEPARSER_INFO_ENDIAN_CONV says 1, the callback swaps them itself. Combine events
 * (CB, CC..., CE, interlaced with others or not) arrive reassembled as one call whose
 * buffer holds every payload word of every part, padding words included.
 *
 * tracekit extension: 64-bit timestamps. The parser follows the CONTROL TIME events of
 * each CPU; inside a callback, traceparser_get_info(state, _TRACEPARSER_INFO_CLK, NULL)
 * (or tk_traceparser_clk()) gives the full 64-bit cycle count of the event being
 * delivered, and _TRACEPARSER_INFO_TIME_DELTA / tk_traceparser_ns() its time in
 * nanoseconds. See docs/kev-format.md, "Timestamps", for the exact rules.
 */
#ifndef TRACEKIT_TRACEPARSER_H
#define TRACEKIT_TRACEPARSER_H

#include <stdint.h>
#include <stdio.h>

#include "tracekit/kev.h"

#ifdef __cplusplus
extern "C" {
#endif

struct traceparser_state;

/*
 * Callback: header and time in host order; buffer points at buffer_len 32-bit payload
 * words in file byte order (2 for a simple event). The buffer is only valid during the
 * call; the callback may modify it. The return value is kept for
 * _TRACEPARSER_INFO_PREV_CALLBACK_RETURN and otherwise ignored.
 */
typedef int (*tracep_callb_func_t)(struct traceparser_state *stateptr, void *user_data,
				   unsigned header, unsigned time, unsigned *buffer,
				   unsigned buffer_len);

/* What traceparser_get_info() can return. 0..18 are the header keywords. */
typedef enum {
	_TRACEPARSER_INFO_HEADER_BEGIN = 0,
	_TRACEPARSER_INFO_FILE_NAME,
	_TRACEPARSER_INFO_DATE,
	_TRACEPARSER_INFO_VER_MAJOR,
	_TRACEPARSER_INFO_VER_MINOR,
	_TRACEPARSER_INFO_LITTLE_ENDIAN,
	_TRACEPARSER_INFO_BIG_ENDIAN,
	_TRACEPARSER_INFO_MIDDLE_ENDIAN,
	_TRACEPARSER_INFO_ENCODING,
	_TRACEPARSER_INFO_BOOT_DATE,
	_TRACEPARSER_INFO_CYCLES_PER_SEC,
	_TRACEPARSER_INFO_CPU_NUM,
	_TRACEPARSER_INFO_SYSNAME,
	_TRACEPARSER_INFO_NODENAME,
	_TRACEPARSER_INFO_SYS_RELEASE,
	_TRACEPARSER_INFO_SYS_VERSION,
	_TRACEPARSER_INFO_MACHINE,
	_TRACEPARSER_INFO_SYSPAGE_LEN,
	_TRACEPARSER_INFO_HEADER_END,

	_TRACEPARSER_INFO_SYSPAGE = -1,             /* syspage bytes; *len = SYSPAGE_LEN */
	_TRACEPARSER_INFO_ENDIAN_CONV = -2,         /* unsigned: 1 if payload needs swapping */
	_TRACEPARSER_INFO_NOW_CALLBACK_CLASS = -3,  /* unsigned: internal class of the callback */
	_TRACEPARSER_INFO_NOW_CALLBACK_EVENT = -4,  /* unsigned: event code of the callback */
	_TRACEPARSER_INFO_PREV_CALLBACK_CLASS = -5, /* unsigned */
	_TRACEPARSER_INFO_PREV_CALLBACK_EVENT = -6, /* unsigned */
	_TRACEPARSER_INFO_PREV_CALLBACK_RETURN = -7,/* int */
	_TRACEPARSER_INFO_DEBUG = -8,               /* unsigned: debug flags */
	_TRACEPARSER_INFO_ERROR = -9,               /* traceparser_error_t */
	/* QNX 7 additions */
	_TRACEPARSER_INFO_ERROR_STR = -10,  /* const char*: last error, "byte offset N: what" */
	_TRACEPARSER_INFO_STATS = -11,      /* struct tk_traceparser_stats */
	_TRACEPARSER_INFO_EVENT_ID = -12,   /* uint64_t: index of the event's first slot */
	_TRACEPARSER_INFO_CLK_MSB = -13,    /* unsigned: upper 32 bits of CLK */
	_TRACEPARSER_INFO_CLK_INTIAL = -14, /* uint64_t: CLK of the first slot of the file (*) */
	_TRACEPARSER_INFO_CLK = -15,        /* uint64_t: 64-bit cycle count of this event */
	_TRACEPARSER_INFO_CLK_DELTA = -16,  /* uint64_t: CLK - CLK_INTIAL (0 if negative) */
	_TRACEPARSER_INFO_TIME_DELTA = -17, /* uint64_t: CLK_DELTA in nanoseconds */
	/* tracekit additions */
	TK_TRACEPARSER_INFO_OFFSET = -100,  /* uint64_t: byte offset of the event's first slot */
	TK_TRACEPARSER_INFO_NS = -101       /* uint64_t: tk_traceparser_ns() */
} info_modes_t;

#define _TRACEPARSER_INFO_CLK_INITIAL _TRACEPARSER_INFO_CLK_INTIAL

/*
 * (*) CLK_INTIAL is the time the trace starts: the 64-bit time of the first slot after the
 * syspage, whatever its class (QNX's files begin with a CONTROL BUFFER event, then TIME).
 * Its upper 32 bits come from the first CONTROL TIME event, even when that event follows
 * the first slot, which is taken to lie within 2^31 cycles of it; until that TIME event
 * is read they are 0, as they are in CLK. A file without TIME events has upper bits 0.
 */

/* The spellings of the SAT guide (without the leading underscore). */
#define TRACEPARSER_INFO_SYSPAGE        _TRACEPARSER_INFO_SYSPAGE
#define TRACEPARSER_INFO_FILE_NAME      _TRACEPARSER_INFO_FILE_NAME
#define TRACEPARSER_INFO_DATE           _TRACEPARSER_INFO_DATE
#define TRACEPARSER_INFO_VER_MAJOR      _TRACEPARSER_INFO_VER_MAJOR
#define TRACEPARSER_INFO_VER_MINOR      _TRACEPARSER_INFO_VER_MINOR
#define TRACEPARSER_INFO_LITTLE_ENDIAN  _TRACEPARSER_INFO_LITTLE_ENDIAN
#define TRACEPARSER_INFO_BIG_ENDIAN     _TRACEPARSER_INFO_BIG_ENDIAN
#define TRACEPARSER_INFO_MIDDLE_ENDIAN  _TRACEPARSER_INFO_MIDDLE_ENDIAN
#define TRACEPARSER_INFO_ENCODING       _TRACEPARSER_INFO_ENCODING
#define TRACEPARSER_INFO_BOOT_DATE      _TRACEPARSER_INFO_BOOT_DATE
#define TRACEPARSER_INFO_CYCLES_PER_SEC _TRACEPARSER_INFO_CYCLES_PER_SEC
#define TRACEPARSER_INFO_CPU_NUM        _TRACEPARSER_INFO_CPU_NUM
#define TRACEPARSER_INFO_SYSNAME        _TRACEPARSER_INFO_SYSNAME
#define TRACEPARSER_INFO_NODENAME       _TRACEPARSER_INFO_NODENAME
#define TRACEPARSER_INFO_SYS_RELEASE    _TRACEPARSER_INFO_SYS_RELEASE
#define TRACEPARSER_INFO_SYS_VERSION    _TRACEPARSER_INFO_SYS_VERSION
#define TRACEPARSER_INFO_MACHINE        _TRACEPARSER_INFO_MACHINE
#define TRACEPARSER_INFO_SYSPAGE_LEN    _TRACEPARSER_INFO_SYSPAGE_LEN

/* Error levels (traceparser_get_info(_TRACEPARSER_INFO_ERROR)), numbered as in QNX 6.4. */
typedef enum {
	_TRACEPARSER_UNKNOWN_CLASS,
	_TRACEPARSER_UNKNOWN_PR_TH_EVENT,
	_TRACEPARSER_UNKNOWN_CONTROL_EVENT,
	_TRACEPARSER_UNKNOWN_KER_CALL_EVENT,
	_TRACEPARSER_UNKNOWN_INT_EVENT,
	_TRACEPARSER_UNKNOWN_CONTAINER_EVENT,
	_TRACEPARSER_UNKNOWN_USR_EVENT,
	_TRACEPARSER_UNKNOWN_COMM_EVENT,
	_TRACEPARSER_NO_MORE_MEMORY,
	_TRACEPARSER_WRONG_H_KEYWORD,
	_TRACEPARSER_NULL_STATE_PTR,
	_TRACEPARSER_WRONG_ENDIAN_TYPE,
	_TRACEPARSER_CANNOT_READ_IN_FILE,
	_TRACEPARSER_WRONG_FILE_VERSION,
	_TRACEPARSER_MISSING_FIELD,
	_TRACEPARSER_UNKNOWN_ERROR
} traceparser_error_t;

/* Debug flags for traceparser_debug(). */
#define _TRACEPARSER_DEBUG_ALL     (0xFFFFFFFFu)
#define _TRACEPARSER_DEBUG_NONE    (0x00000000u)
#define _TRACEPARSER_DEBUG_ERRORS  (0x00000001u)
#define _TRACEPARSER_DEBUG_HEADER  (0x00000002u)
#define _TRACEPARSER_DEBUG_SYSPAGE (0x00000004u)
#define _TRACEPARSER_DEBUG_EVENTS  (0x00000008u)

/* traceparser_sort() modes (QNX 8). */
#define _TRACEPARSER_NOSORT (0u)
#define _TRACEPARSER_SORT   (1u)

/* Version of the library interface this implements (printed as "1.02"). */
#define _TRACEPARSER_VER_MAJOR 1
#define _TRACEPARSER_VER_MINOR 2

/*
 * Allocates a parser state (stateptr NULL) or resets one previously returned by this
 * function (callbacks, header and errors cleared). Returns NULL with errno ENOMEM.
 */
TK_API struct traceparser_state *traceparser_init(struct traceparser_state *stateptr);

/* Frees the state and sets *stateptr to NULL. NULL and *NULL are accepted. */
TK_API void traceparser_destroy(struct traceparser_state **stateptr);

/*
 * Debug output: the header lines (HEADER), the syspage (SYSPAGE), every raw slot
 * (EVENTS) and error messages (ERRORS) go to streamptr, exactly as QNX's traceprinter
 * shows them. Returns 0, or -1 with errno EINVAL.
 */
TK_API int traceparser_debug(struct traceparser_state *stateptr, FILE *streamptr, unsigned flags);

/*
 * Attaches funcptr to one event of one external class (_NTO_TRACE_*). THREAD, VTHREAD
 * and PROCESS events are the API masks (_NTO_TRACE_THRUNNING, ...); KERCALL attaches both
 * entry and exit. userdata, when not NULL, is passed instead of traceparser()'s.
 * Returns 0, or -1 with errno EINVAL (error level _TRACEPARSER_UNKNOWN_ERROR).
 */
TK_API int traceparser_cs(struct traceparser_state *stateptr, void *userdata,
			  tracep_callb_func_t funcptr, unsigned _class, unsigned event);

/* As traceparser_cs() for firstevent..lastevent inclusive. INT classes accept only the
 * whole range _NTO_TRACE_INTFIRST.._NTO_TRACE_INTLAST. */
TK_API int traceparser_cs_range(struct traceparser_state *stateptr, void *userdata,
				tracep_callb_func_t funcptr, unsigned _class, unsigned firstevent,
				unsigned lastevent);

/*
 * tracekit extension: attaches funcptr to events first..last (0..1023) of an INTERNAL
 * class (0..31, the header's bits 14-10), which reaches every event, including those no
 * external class names (QNX 7/8 classes, unknown codes). Returns 0 or -1 (EINVAL).
 */
TK_API int tk_traceparser_cs_internal(struct traceparser_state *stateptr, void *userdata,
				      tracep_callb_func_t funcptr, unsigned internal_class,
				      unsigned firstevent, unsigned lastevent);

/*
 * Parses a whole file ("-": standard input), calling the attached callbacks. The
 * callback attached to _NTO_TRACE_EMPTY/_NTO_TRACE_EMPTYEVENT runs once, after the
 * header and the syspage, with a NULL buffer. Returns 0, or -1 with errno set; the error
 * level and a message naming the byte offset are then available from
 * traceparser_get_info(). A file that ends inside an event is an error reported after
 * every complete event has been delivered.
 */
TK_API int traceparser(struct traceparser_state *stateptr, void *userdata, const char *filename);

/*
 * Feeds one event slot (host byte order) through reassembly and dispatch, for events
 * that do not come from a file (a live buffer). Returns 0, or -1 with errno set.
 */
TK_API int traceparser_one_event(struct traceparser_state *stateptr, traceevent_t *event);

/*
 * _TRACEPARSER_SORT: traceparser() delivers events in order of their 64-bit timestamps
 * across all CPUs (stable: ties keep file order) instead of file order. Memory stays
 * bounded: events are kept in memory up to a budget (64 MiB by default, about 60 bytes
 * per event plus payload), then sorted in runs written to an unlinked temporary file in
 * TMPDIR (/tmp by default) and merged at the end, which needs about the file's size of
 * temporary space.
 */
TK_API int traceparser_sort(struct traceparser_state *stateptr, unsigned mode);

/*
 * tracekit extension: fn(ud) is called when traceparser() reads a pipe (or any input that
 * is not a regular file) that has no bytes ready, just before it waits for more: every
 * complete event has then been delivered, and a program that buffers its output flushes
 * it there, so that a live trace shows as it comes. NULL removes it; traceparser_init()
 * clears it. Returns 0, or -1 with errno EINVAL.
 */
TK_API int tk_traceparser_on_wait(struct traceparser_state *stateptr, void (*fn)(void *ud), void *ud);

/* tracekit extension: the memory budget of sort mode in bytes (at least 64 KiB).
 * Returns 0, or -1 with errno EINVAL. traceparser_init() resets it to the default. */
TK_API int tk_traceparser_sort_memory(struct traceparser_state *stateptr, size_t bytes);

/*
 * Returns a pointer to the requested information (see info_modes_t), its size in *len
 * when len is not NULL, or NULL with errno EINVAL when it does not exist (a header key
 * that is not in the file sets error level _TRACEPARSER_MISSING_FIELD). Header values are
 * the raw bytes of the file, not NUL-terminated beyond *len.
 *
 * Lifetime (QNX documents none): header values, SYSPAGE and STATS stay valid until the
 * next traceparser(), traceparser_init() or traceparser_destroy() on the state; ENDIAN_CONV,
 * DEBUG, ERROR and ERROR_STR point at the parser's own fields and follow them. Every other
 * mode (NOW/PREV_CALLBACK_*, EVENT_ID, CLK*, TIME_DELTA and the tracekit modes) returns a
 * value computed at the call, in storage of its own: the pointer keeps that value until
 * traceparser_get_info() is called again with the same mode, so pointers obtained for
 * several modes can be read together. Take them again in each callback for that event.
 * Not thread-safe: one state is used by one thread at a time.
 */
TK_API void *traceparser_get_info(struct traceparser_state *stateptr, info_modes_t infomodes,
				  unsigned *len);

/* Every header entry, unknown (user) keys included, in file order. */
TK_API unsigned tk_traceparser_header_count(const struct traceparser_state *stateptr);
TK_API int tk_traceparser_header_entry(const struct traceparser_state *stateptr, unsigned index,
				       const char **key, const char **value, unsigned *value_len);
/* Value of any header key (e.g. "TRACELOGGER_ARGS"); NULL if absent. */
TK_API const char *tk_traceparser_header_value(const struct traceparser_state *stateptr,
					       const char *key, unsigned *value_len);

/*
 * 64-bit cycle count of the event being delivered, and its time in nanoseconds on the
 * file's time line (docs/kev-format.md, "One time line"): CLOCK_MONOTONIC_RAW when the
 * header carries TRACEKIT_CLOCK_CYCLES and TRACEKIT_CLOCK_RAW_NS (files of tracekit's
 * recorder), otherwise the cycle count converted at CYCLES_PER_SEC (since boot on QNX).
 */
TK_API uint64_t tk_traceparser_clk(const struct traceparser_state *stateptr);
TK_API uint64_t tk_traceparser_ns(const struct traceparser_state *stateptr);

/*
 * Owner of the event being delivered (docs/kev-format.md, "Owner of every event"): in a
 * file with TRACEKIT_OWNER=buffer, the pid/tid of the THRUNNING that follows the last
 * CONTROL BUFFER before the event (in file order, whatever traceparser_sort() says); in
 * other files (QNX), the last THRUNNING seen on the event's CPU. Combine events have the
 * owner of their first slot. Returns 1 when known; 0 with *pid = *tid = 0 when not (no
 * THRUNNING yet, a buffer without one), and also outside a callback (no event is being
 * delivered: before traceparser() runs, after it returns, in the NULL callback at the end)
 * and with a NULL stateptr. pid and tid may be NULL. Call it from a callback.
 */
TK_API int tk_traceparser_owner(const struct traceparser_state *stateptr, int32_t *pid, int32_t *tid);

/*
 * Decodes the event a callback received (its header, time, buffer and buffer_len as
 * given) with tk_kev_decode(), filling in what the parser knows: the byte order, the
 * 64-bit time, the time in ns (tk_traceparser_ns()) and the owner (pid, tid and
 * TK_KEV_DEC_OWNER_KNOWN). flags: TK_KEV_DECODE_*. Call it from the callback; *out points
 * into buffer (see tk_kev_decoded). Returns 0 or TK_EINVAL.
 */
TK_API int tk_traceparser_decode(struct traceparser_state *stateptr, unsigned header, unsigned time,
				 const unsigned *buffer, unsigned buffer_len, unsigned flags,
				 tk_kev_decoded *out);

/* Counters of what the parser has seen (_TRACEPARSER_INFO_STATS). */
struct tk_traceparser_stats {
	uint64_t slots;             /* 16-byte slots read */
	uint64_t events;            /* events delivered or dispatched (simple + reassembled) */
	uint64_t combine_events;    /* reassembled combine events */
	uint64_t unbalanced_parts;  /* CC/CE slots without a matching CB, ignored */
	uint64_t incomplete_events; /* CB slots never completed (end of file or queue cap) */
	uint64_t time_events;       /* CONTROL TIME events */
	uint64_t trailing_bytes;    /* bytes of a partial slot at the end of the file */
	uint64_t bytes;             /* bytes read, header and syspage included */
};

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_TRACEPARSER_H */
