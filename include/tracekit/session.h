/* SPDX-License-Identifier: MIT */
/*
 * tracekit/session.h: trace sessions over shared memory (docs/sessions.md).
 *
 * A session is a named shared-memory region, /dev/shm/tracekit.<uid>.<name>, created by a
 * logger (tracelogger) and attached to by traced programs. It holds:
 *   - a header (magic, version, sizes and offsets of the parts, the owner's uid, the
 *     logger's pid and start time, the clock pair the events' cycle counts convert with),
 *   - a futex word the writers bump and wake when they queue a buffer, register, START,
 *     STOP or FLUSHBUFFER, and on which the logger waits (tk_session_wait()),
 *   - the trace configuration TraceEvent() reads and writes (started, ring, classes and
 *     events enabled, fast/wide, pid/tid filters, a generation counter): a START in one
 *     attached process starts the trace of all of them,
 *   - a registry of the attached processes (pid, start time, state, command name),
 *   - a tk_pool of 16 KiB trace buffers (include/tracekit/buffer.h): every thread of every
 *     attached process writes into a buffer of it; full buffers are queued for the logger.
 *
 * The logger creates the session (tk_session_create), holds an exclusive flock() on it for
 * its life ("a live logger"), configures and starts it (tk_session_start, ...), drains the
 * pool's queue (tk_pool_dequeue on tk_session_pool()) and the WRITING buffers of processes
 * that died (tk_session_process, tk_pool_desc_of: up to `committed`), then closes it
 * (tk_session_close unlinks the region). A program attaches with TK_SESSION_WRITER (the
 * recorder does it by itself, from TRACEKIT_SESSION or a live "default" session).
 *
 * Everything in the region is checked before it is used (tk_session_check): owner, mode,
 * size, magic, version, every offset and size. A region is only trusted as far as its
 * owner is: the same user, who could ptrace the processes anyway (docs/sessions.md).
 *
 * Errors are TK_E* codes; tk_session_errmsg() says why, naming the region, the field and its
 * byte offset when the region is refused. Thread safety: a tk_session handle may be used by
 * several threads at once except tk_session_close(). Nothing here blocks except
 * tk_session_wait() (and, for microseconds, the configuration lock).
 */
#ifndef TRACEKIT_SESSION_H
#define TRACEKIT_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/buffer.h"
#include "tracekit/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_session tk_session;

#define TK_SESSION_NAME_MAX 64       /* characters of a name: [A-Za-z0-9_.-], not starting with '.' */
#define TK_SESSION_DEFAULT "default" /* the session a program attaches to without TRACEKIT_SESSION */
#define TK_SESSION_ENV "TRACEKIT_SESSION"
#define TK_SESSION_BUFFER_SIZE 16384u     /* bytes of one trace buffer (1024 slots of 16 bytes) */
#define TK_SESSION_DEFAULT_BUFFERS 1024u  /* 16 MiB of buffers */
#define TK_SESSION_MAX_BUFFERS (1u << 20)
#define TK_SESSION_SLOTS 256u             /* processes the registry holds at once */

/* tk_session_open() flags: exactly one of them. */
enum {
	TK_SESSION_WRITER = 1,  /* attach a traced program: refused (TK_ENOENT, "no logger") without a live logger */
	TK_SESSION_RECOVER = 2, /* open an orphaned region to drain it: takes the logger lock; TK_EBUSY if a logger lives */
};

/* Registry slot states (tk_session_process_info.state). */
enum {
	TK_SESSION_FREE = 0,     /* never used, or reused */
	TK_SESSION_ATTACHED = 1, /* a process registered (it may have died since: check pid and start time) */
	TK_SESSION_EXITED = 2,   /* the logger drained what it left and reaped it (tk_session_reap) */
};

/* 1 if name is a valid session name, else 0. */
TK_API int tk_session_name_valid(const char *name);

/*
 * The shm_open() name of session `name` of the calling user ("/tracekit.<euid>.<name>"),
 * written into buf. TK_OK, TK_EINVAL (bad name) or TK_EOVERFLOW (cap too small).
 */
TK_API int tk_session_shm_name(const char *name, char *buf, size_t cap);

/* Bytes of the region of a session of n_buffers buffers; 0 if n_buffers is 0 or too many. */
TK_API size_t tk_session_region_size(uint32_t n_buffers);

/*
 * Logger side: creates session `name` with n_buffers buffers (0: TK_SESSION_DEFAULT_BUFFERS),
 * O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, and takes the logger lock (held until
 * tk_session_close). Nothing is enabled and the trace is stopped. Errors:
 *   TK_EINVAL  bad name or buffer count
 *   TK_EBUSY   a live logger holds the session ("logger pid N" in the message)
 *   TK_EEXIST  an orphaned region (its logger died): recover it first
 *              (tk_session_open(TK_SESSION_RECOVER), drain, tk_session_close), then create
 *   TK_ENOMEM, TK_ENOSPC, TK_EACCES, TK_EIO  creating or sizing the region failed
 */
TK_API int tk_session_create(tk_session **out, const char *name, uint32_t n_buffers);

/*
 * Opens session `name` of the calling user with TK_SESSION_WRITER or TK_SESSION_RECOVER.
 * The region is checked (tk_session_check, plus owner == euid, mode & 077 == 0, a regular
 * file) before anything in it is used. Errors:
 *   TK_ENOENT  no such session; for WRITER also a region without a live logger ("no logger")
 *   TK_EBUSY   RECOVER: a logger lives (pid in the message); WRITER: the registry is full
 *   TK_EACCES  the region belongs to another user, is open to others or is not a regular
 *              file (the contract's "TK_EPERM": common.h has TK_EACCES for it)
 *   TK_EFORMAT the region is damaged (field and byte offset in the message)
 * A WRITER handle registers the calling process in the registry (tk_session_register is
 * done for you) and wakes the logger.
 */
TK_API int tk_session_open(tk_session **out, const char *name, unsigned flags);

/*
 * Closes the handle. A logger's (created or recovered) handle unlinks the region first: the
 * caller has drained it. A writer's handle unmaps it (the registry slot stays ATTACHED, so
 * that the logger sees the process end). NULL accepted. Returns TK_OK or TK_EIO (unlink).
 */
TK_API int tk_session_close(tk_session *s);

/* Unmaps without unlinking (a logger that failed and wants the region kept for recovery). */
TK_API void tk_session_abandon(tk_session *s);

/* The buffer pool in the region (valid until close). */
TK_API tk_pool *tk_session_pool(tk_session *s);

/* Text of the calling thread's last tk_session error ("" if none). */
TK_API const char *tk_session_errmsg(void);

/*
 * Pure validation of a region's bytes (size bytes at region, 64-byte aligned): magic,
 * version, header size, region size, every offset and size in bounds and aligned, the
 * registry's slot count and slot states, the configuration's size, and the pool's own
 * header. Never reads outside [region, region + size). Returns TK_OK, or TK_EFORMAT (or
 * TK_EVERSION for an unknown version) with why (cap bytes, may be NULL) naming the field
 * and its byte offset ("byte 16 (region_size): 4096 is not the region's size 8192").
 */
TK_API int tk_session_check(const void *region, size_t size, char *why, size_t cap);

/*
 * Formats size bytes at region (page-aligned, exactly tk_session_region_size(n_buffers)) as
 * an empty, stopped session named name, logged by the calling process: what
 * tk_session_create() writes into the new shared-memory file; public for tests and the fuzz
 * target. TK_OK or TK_EINVAL.
 */
TK_API int tk_session_format(void *region, size_t size, const char *name, uint32_t n_buffers);

/* ---- logger-side control (the same configuration TraceEvent() sets) ------------------ */

/*
 * START / STOP for every attached process. START bumps the start epoch: each process
 * announces itself and its threads when it next records (as TraceEvent(_NTO_TRACE_START)
 * does in one process). Both wake the logger. TK_OK.
 */
TK_API int tk_session_start(tk_session *s);
TK_API int tk_session_stop(tk_session *s);
TK_API int tk_session_started(const tk_session *s); /* 1 or 0 */

/*
 * The static rules filter and the fast/wide mask, as _NTO_TRACE_ADDALLCLASSES /
 * DELALLCLASSES (on), SETALLCLASSESFAST / WIDE (wide), ADDCLASS / DELCLASS, SETCLASSFAST /
 * SETCLASSWIDE with a QNX class (_NTO_TRACE_KERCALL ... _NTO_TRACE_USER, from
 * <tracekit/kev.h>). TK_OK or TK_EINVAL (unknown class).
 */
TK_API int tk_session_set_all_classes(tk_session *s, int on);
TK_API int tk_session_set_all_wide(tk_session *s, int wide);
TK_API int tk_session_set_class(tk_session *s, unsigned qnx_class, int on);
TK_API int tk_session_set_class_wide(tk_session *s, unsigned qnx_class, int wide);
/* Ring (flight recorder: writers reuse the oldest queued buffer) or linear mode. */
TK_API int tk_session_set_ring(tk_session *s, int ring);

/* Bumped by every configuration change (by the logger or any attached process). */
TK_API uint32_t tk_session_generation(const tk_session *s);

/*
 * Logger: waits until a writer wakes the session (a buffer queued, a process registered,
 * START, STOP, FLUSHBUFFER, a configuration change) or timeout_ms passes (futex, no
 * polling). Returns 1 if woken since the previous call (or now), 0 on timeout.
 */
TK_API int tk_session_wait(tk_session *s, unsigned timeout_ms);
/* Writer: bumps the futex word and wakes the waiting logger. */
TK_API void tk_session_wake(tk_session *s);

/*
 * The clock of the events' cycle counts: cycles per second and a (cycles, CLOCK_MONOTONIC_RAW
 * ns) pair taken when the session was created, as the recorder's .kev header carries them
 * (TRACEKIT_CLOCK_CYCLES, TRACEKIT_CLOCK_RAW_NS): ns = raw_ns + (cycles - c0) * 1e9 / cps.
 */
TK_API void tk_session_clock(const tk_session *s, uint64_t *cycles_per_sec, uint64_t *c0, uint64_t *raw_ns0);

/* The logger's pid and start time as the header says. */
TK_API void tk_session_logger(const tk_session *s, uint32_t *pid, uint64_t *start_time);

/* ---- registry ------------------------------------------------------------------------- */

typedef struct tk_session_process_info {
	uint32_t pid;
	uint32_t state;      /* TK_SESSION_FREE, _ATTACHED, _EXITED */
	uint64_t start_time; /* /proc/PID/stat field 22 (clock ticks after boot) at registration */
	char comm[17];       /* /proc/PID/comm, NUL-terminated */
} tk_session_process_info;

TK_API uint32_t tk_session_n_slots(const tk_session *s);
/* Slot i (0 .. n_slots-1). TK_OK, TK_ERANGE. */
TK_API int tk_session_process(const tk_session *s, uint32_t i, tk_session_process_info *info);
/*
 * 1 if the process of info still runs (pid exists with the same start time), 0 if it died
 * (its WRITING buffers with owner_pid == pid may then be drained up to `committed`).
 */
TK_API int tk_session_process_alive(const tk_session_process_info *info);
/* Marks the ATTACHED slot of pid EXITED (after its buffers were drained; the slot's pid is
 * cleared, so a slot being filled in always names its own claimer). TK_OK, TK_ENOENT. */
TK_API int tk_session_reap(tk_session *s, uint32_t pid);
/* Logger side: frees (EXITED) the slots a process was filling in when it died (SIGKILL while
 * it registered), which would otherwise stay taken for the session's life. Returns how many. */
TK_API int tk_session_reap_stuck(tk_session *s);

/*
 * Logger: the buffers a dead process left (docs/sessions.md, "Draining"). Call it after
 * draining the pool's queue until tk_pool_dequeue() says empty (with tk_pool_skip_stuck()
 * when it stays empty too soon). For every buffer whose descriptor names pid as its owner and
 * that is WRITING (fn gets `committed` / 16 records: exactly the records it finished) or
 * QUEUED outside the queue (killed while queueing it: `records` records), in the order the
 * process took them (descriptor `seq`), calls fn, then gives the buffer back to the free
 * stack. Each record is a 16-byte traceevent_t; the buffer starts with TIME, BUFFER, maybe
 * DROPPED, and THRUNNING (pid, tid). Returns the number of buffers, or TK_EINVAL.
 */
typedef void (*tk_session_buffer_fn)(const void *buf, uint32_t n_records, uint32_t idx, const tk_pool_desc *d,
				     void *ctx);
TK_API int tk_session_collect_dead(tk_session *s, uint32_t pid, tk_session_buffer_fn fn, void *ctx);

/* /proc/PID/stat field 22 of pid (0 if the process does not exist). */
TK_API uint64_t tk_session_proc_start_time(uint32_t pid);

/*
 * Registers the calling process (a forked child re-registers: it is a new process). Done by
 * tk_session_open(WRITER); public for the recorder's fork handling. Returns the slot index
 * (>= 0) or TK_EBUSY (registry full).
 */
TK_API int tk_session_register(tk_session *s);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_SESSION_H */
