/* SPDX-License-Identifier: MIT */
/*
 * Private: the layout (version 1) of a session region (docs/sessions.md, "Layout"), shared
 * by the session module (libtracekit-core) and the recorder (src/trace), which reaches it
 * through the tk__session_* calls at the end (TK_API: they cross from one library to the
 * other). Every byte offset here is pinned by the _Static_asserts in session.c: a process
 * of another build reads the same bytes.
 *
 *   header     magic "TKSESS\0\1", version, sizes and offsets, owner, logger, clock, name;
 *              then the futex word and the configuration lock on cache lines of their own
 *   config     struct tk__trace_config: what TraceEvent() sets (also the recorder's
 *              in-process configuration, outside any session)
 *   registry   n_slots slots of struct tk__sess_slot (128 bytes): one per attached process,
 *              with the emission modes the process's inline emitter reads
 *   pool       a tk_pool of n_buffers buffers of 16 KiB (page-aligned)
 */
#ifndef SESSION_LAYOUT_H
#define SESSION_LAYOUT_H

#include <stdatomic.h>
#include <stdint.h>

#include "tracekit/session.h"

#define TK_SESS_MAGIC "TKSESS\0\1"
#define TK_SESS_VERSION 1u
#define TK_SESS_N_CLASSES 32u
#define TK_SESS_N_CODES 1024u
#define TK_SESS_BITMAP_WORDS (TK_SESS_N_CODES / 64u)
#define TK_SESS_MAX_SLOTS 4096u

/* Emission modes (trace.h's TK__TRACE_OFF, _FAST, _FILTERED). */
#define TK_SESS_MODE_OFF 0u
#define TK_SESS_MODE_FAST 1u
#define TK_SESS_MODE_FILTERED 2u

/* A pid/tid rule of a class or an event (SET...PID, SET...TID): relaxed atomics, read by
 * emitting threads without a lock. */
struct trace_filter {
	_Atomic int pid_set, tid_set;
	_Atomic int pid;     /* SET...PID: only this process */
	_Atomic int tid_pid; /* SET...TID: only this thread of this process */
	_Atomic int tid;
};

/*
 * The trace configuration (the static rules filter, fast/wide, execution control). In a
 * session it lives in the region and every attached process reads and writes it (under the
 * session's configuration lock); outside one, the recorder keeps one of its own.
 */
struct tk__trace_config {
	_Atomic uint32_t generation;  /* bumped by every change */
	_Atomic uint32_t start_epoch; /* bumped by every START of a stopped trace */
	_Atomic int started;          /* 0 or 1 */
	_Atomic int start_state;      /* 1: the last START was START (snapshot), 0: STARTNOSTATE */
	_Atomic int ring;             /* ring (flight recorder) mode, 0 or 1 */
	_Atomic int overwrite;        /* OVERWRITEBUFFER, 0 or 1 */
	uint32_t pad[2];
	_Atomic uint32_t n_filtered[TK_SESS_N_CLASSES]; /* codes of a class with a pid/tid rule (0-1024) */
	_Atomic uint64_t enabled[TK_SESS_N_CLASSES][TK_SESS_BITMAP_WORDS]; /* one bit per (class, code) */
	_Atomic uint64_t wide[TK_SESS_N_CLASSES][TK_SESS_BITMAP_WORDS];    /* 1 = wide */
	/* [class * 1024 + code][0: class rule, 1: event rule] */
	struct trace_filter filters[TK_SESS_N_CLASSES * TK_SESS_N_CODES][2];
};

struct tk__sess_hdr {
	char magic[8];           /* 0 */
	uint32_t version;        /* 8 */
	uint32_t hdr_size;       /* 12 */
	uint64_t region_size;    /* 16 */
	uint32_t owner_uid;      /* 24 */
	uint32_t logger_pid;     /* 28 */
	uint64_t logger_start;   /* 32: /proc/PID/stat field 22 */
	uint64_t cycles_per_sec; /* 40 */
	uint64_t clock_cycles;   /* 48: a (cycles, CLOCK_MONOTONIC_RAW ns) pair */
	uint64_t clock_ns;       /* 56 */
	uint64_t config_off;     /* 64 */
	uint64_t config_size;    /* 72 */
	uint64_t registry_off;   /* 80 */
	uint32_t n_slots;        /* 88 */
	uint32_t slot_size;      /* 92 */
	uint64_t pool_off;       /* 96 */
	uint64_t pool_size;      /* 104 */
	uint32_t n_buffers;      /* 112 */
	uint32_t buf_size;       /* 116 */
	char name[72];           /* 120: NUL-terminated */
	_Alignas(64) _Atomic uint32_t wake; /* 192: futex word, bumped by writers */
	_Atomic uint32_t waiting;           /* 196: 1 while the logger sleeps on `wake` */
	_Alignas(64) _Atomic uint32_t cfg_lock; /* 256: pid of the holder, 0 when free */
	_Atomic uint32_t cfg_waiters;           /* 260 */
};

/* Registry slot states: TK_SESSION_FREE, _ATTACHED, _EXITED, and, while a process fills its
 * slot in, this one (readers skip it). */
#define TK_SESS_CLAIMING 3u

struct tk__sess_slot {
	_Atomic uint32_t state;       /* 0 */
	_Atomic uint32_t pid;         /* 4 */
	_Atomic uint64_t start_time;  /* 8 */
	char comm[16];                /* 16: not NUL-terminated when 16 bytes long */
	_Atomic uint32_t epoch;       /* 32: the start epoch this process announced itself in */
	_Atomic uint32_t handler_classes; /* 36: classes with a handler of this process (bit per class) */
	uint32_t spare[6];            /* 40 */
	_Atomic unsigned char modes[TK_SESS_N_CLASSES]; /* 64: what the process's emitter reads */
	uint32_t spare2[8];           /* 96 */
};

/*
 * The modes of one process from the configuration: off (stopped, or nothing of the class
 * enabled), fast (every code enabled, no rule, no handler) or filtered. A process that has
 * not announced itself in the current start epoch gets filtered for every class that
 * records, so that its first event takes the slow path, which announces it.
 */
static inline void tk__trace_modes_compute(const struct tk__trace_config *c, int usable, uint32_t handler_classes,
					   int announced, _Atomic unsigned char *out)
{
	unsigned cls, w;
	int on = usable && atomic_load_explicit(&c->started, memory_order_relaxed);

	for (cls = 0; cls < TK_SESS_N_CLASSES; cls++) {
		unsigned n_enabled = 0, mode;
		for (w = 0; w < TK_SESS_BITMAP_WORDS; w++)
			n_enabled += (unsigned)__builtin_popcountll(
				atomic_load_explicit(&c->enabled[cls][w], memory_order_relaxed));
		if (!on || n_enabled == 0)
			mode = TK_SESS_MODE_OFF;
		else if (announced && n_enabled == TK_SESS_N_CODES &&
			 atomic_load_explicit(&c->n_filtered[cls], memory_order_relaxed) == 0 &&
			 !(handler_classes >> cls & 1u))
			mode = TK_SESS_MODE_FAST;
		else
			mode = TK_SESS_MODE_FILTERED;
		atomic_store_explicit(&out[cls], (unsigned char)mode, memory_order_relaxed);
	}
}

/* ---- for the recorder (TK_API: it lives in another library) ---------------------------- */

TK_API struct tk__trace_config *tk__session_config(tk_session *s);
/* The calling process's registry slot (NULL for a logger's handle). */
TK_API struct tk__sess_slot *tk__session_slot(tk_session *s);
/* The configuration lock (between processes: held for microseconds; a dead holder's is
 * taken over). */
TK_API void tk__session_lock(tk_session *s);
TK_API void tk__session_unlock(tk_session *s);
/* Lock held: recomputes the modes of every attached process and bumps the generation. */
TK_API void tk__session_changed(tk_session *s);
/* Lock held: START (or STARTNOSTATE) of a stopped trace: a new start epoch. */
TK_API void tk__session_start_locked(tk_session *s, int with_state);

#endif /* SESSION_LAYOUT_H */
