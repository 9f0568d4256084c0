/* SPDX-License-Identifier: MIT */
/*
 * tracekit/collect.h: the kernel side of a trace. A perf_event_open collector (one ring
 * buffer per CPU, read with poll, records stamped CLOCK_MONOTONIC_RAW) that turns the
 * kernel's records into .kev events of the QNX classes: thread states, process and thread
 * life, names, file mappings, interrupts, system calls and cpu-clock samples.
 * docs/collect.md has the mapping of every kernel record onto its QNX class and event.
 *
 * Two tiers:
 *   unprivileged  (perf_event_paranoid <= 2): per-task software events with inherit on
 *                 the followed processes: PERF_RECORD_SWITCH (preempted or blocked),
 *                 fork/exit, comm, mmap2, cpu-clock samples.
 *   privileged    (root, CAP_PERFMON, or paranoid <= -1): tracepoints (sched_switch with
 *                 the exact previous state, sched_wakeup, sched_process_fork/exec/exit,
 *                 irq/softirq entry and exit, raw_syscalls), per task or system-wide.
 */
#ifndef TRACEKIT_COLLECT_H
#define TRACEKIT_COLLECT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "tracekit/buffer.h"
#include "tracekit/common.h"
#include "tracekit/kev.h"
#include "tracekit/session.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_collect tk_collect;

/* Which tier tk_collect_open() uses (tk_collect_config.tier). */
enum tk_collect_tier {
	TK_COLLECT_TIER_AUTO = 0, /* privileged if permitted, else unprivileged when nothing
	                             asked needs privileges (a note in *why says so) */
	TK_COLLECT_TIER_UNPRIV,   /* per-task software events only */
	TK_COLLECT_TIER_PRIV      /* tracepoints; fails with the reason when refused */
};

/* Bit of tk_collect_config.classes for an external class (_NTO_TRACE_THREAD, ...). */
#define TK_COLLECT_CLASS(ext) (1u << (ext))
/* The default set (classes == 0): THREAD, PROCESS, SYSTEM (mappings; samples when
 * sample_hz > 0). KERCALL and INT need privileges and are recorded only when asked. */
#define TK_COLLECT_DEFAULT_CLASSES                                                    \
	(TK_COLLECT_CLASS(_NTO_TRACE_THREAD) | TK_COLLECT_CLASS(_NTO_TRACE_PROCESS) |  \
	 TK_COLLECT_CLASS(_NTO_TRACE_SYSTEM))

typedef struct tk_collect_config {
	size_t size;         /* sizeof(tk_collect_config), for growth */
	uint32_t classes;    /* TK_COLLECT_CLASS(_NTO_TRACE_xxx) per QNX class to record:
	                        THREAD, PROCESS, SYSTEM, KERCALL (KER_CALL/KER_EXIT), INT;
	                        0 = TK_COLLECT_DEFAULT_CLASSES */
	int wide;            /* wide mode: every argument of system calls */
	int callchains;      /* -g: user call chains on samples */
	unsigned sample_hz;  /* cpu-clock samples per second, 0 = none */
	int system_wide;     /* -a: every CPU, every task (needs privileges) */
	const int *pids;     /* -p: existing processes (with their threads and later children) */
	size_t n_pids;
	int child_pid;       /* a child the caller started stopped (or waiting on a pipe):
	                        followed with inherit; 0 = none */
	size_t ring_kib;     /* per-CPU perf ring size in KiB (-k), rounded up to a power of
	                        two pages; 0 = default (512 KiB) */
	int tier;            /* enum tk_collect_tier */
} tk_collect_config;

/*
 * Opens every perf event it needs (nothing is recorded until tk_collect_enable()). With
 * neither system_wide, pids nor child_pid, it means system_wide. On failure returns a
 * negative TK_E* code (TK_EACCES when refused) and *why holds a sentence saying exactly why
 * (the perf_event_paranoid value, the missing capability, no tracefs) and what would allow
 * it. When the privileged tier is refused and nothing asked needs it, it falls back to the
 * unprivileged tier, returns 0 and leaves a note in *why; otherwise *why is "".
 */
TK_API int tk_collect_open(tk_collect **out, const tk_collect_config *cfg, char *why,
                           size_t whycap);
/* The tier actually opened (TK_COLLECT_TIER_UNPRIV or TK_COLLECT_TIER_PRIV). */
TK_API int tk_collect_tier(const tk_collect *c);
TK_API int tk_collect_enable(tk_collect *c); /* start recording */

/*
 * Waits up to timeout_ms (poll on all rings; 0 = do not wait, -1 = forever), then hands
 * every record available to `emit` as .kev slots: `slots` is one whole event (1 slot, or a
 * combine event's CB/CC.../CE slots), its CPU field the CPU of the ring, data[0] of each
 * slot the low 32 bits of `time_ns`, its CLOCK_MONOTONIC_RAW time in ns. Per CPU, times are
 * non-decreasing. Records lost by perf are emitted as CONTROL DROPPED events (code
 * _TRACE_CONTROL_DROPPED, data[1..2] = the count's low and high words) on the ring's CPU.
 * Returns the number of events emitted (>= 0), or a negative TK_E* code; a non-zero return
 * of `emit` stops the read and is returned.
 */
typedef int (*tk_collect_emit_fn)(void *ud, const traceevent_t *slots, size_t n_slots,
                                  uint64_t time_ns);
TK_API int tk_collect_read(tk_collect *c, int timeout_ms, tk_collect_emit_fn emit, void *ud);
TK_API int tk_collect_disable(tk_collect *c); /* stop recording; read drains the rest */
TK_API void tk_collect_close(tk_collect *c);  /* NULL ok */

/* Counters for -v: records read, records lost (by perf), bytes read from the rings. */
typedef struct tk_collect_stats {
	uint64_t records, lost, bytes;
} tk_collect_stats;
TK_API void tk_collect_get_stats(const tk_collect *c, tk_collect_stats *st);

/*
 * The header attributes a file of these events needs: TRACEKIT_KERCALLS=linux-<arch> (the
 * printer names KER_CALL/KER_EXIT codes by the Linux system-call table, not QNX's kernel
 * calls) and TRACEKIT_COLLECT_TIER=unprivileged|privileged. Calls cb(ud, key, value) for each.
 */
TK_API void tk_collect_header_attrs(const tk_collect *c,
                                    void (*cb)(void *ud, const char *key, const char *val),
                                    void *ud);

/*
 * Events of the collector that QNX 6.4 has no code for (docs/collect.md):
 * SYSTEM PCTRACE (QNX 8's code 31): a cpu-clock sample: pid, tid, ip low, ip high, then with
 * call chains each caller's address as low, high word pairs.
 */
#define TK_COLLECT_SYS_PCTRACE (31)
/*
 * KER_CALL/KER_EXIT codes of Linux system call n (0 <= n < 512; others are recorded as 511):
 * bits 0-6 = n & 0x7f, bit 7 = exit, bits 8-9 = n >> 7. Fast mode: entry = the low words of
 * the first two arguments; exit = the return value's low and high words. Wide mode: entry
 * = n, then the six arguments as low, high word pairs; exit = n, return low, return high.
 */
#define TK_COLLECT_KERCALL_CODE(n, exit) \
	((((unsigned)(n) & 0x7fu) | (((unsigned)(n) >> 7) << 8)) | ((exit) ? 0x80u : 0u))
#define TK_COLLECT_KERCALL_NR(code) (((code) & 0x7fu) | ((((code) >> 8) & 0x3u) << 7))


/* ---- One time line: writing collected events, merging a program's own ---------------- */

/*
 * tracelogger's writing side (docs/tracelogger.md, "The file"). Events carry 64-bit
 * CLOCK_MONOTONIC_RAW nanosecond times; a file holds their low 32 bits and CONTROL TIME
 * events with the upper ones, per CPU. A timeline remembers, per CPU, the upper bits last
 * written and the thread last shown running (THRUNNING), so that every event's thread can be
 * recovered by QNX's per-CPU rule. Not thread-safe: one per writer.
 */
typedef struct tk_collect_timeline tk_collect_timeline;
TK_API int tk_collect_timeline_new(tk_collect_timeline **out); /* TK_OK or TK_ENOMEM */
TK_API void tk_collect_timeline_free(tk_collect_timeline *tl); /* NULL ok */
/* Forgets every CPU's time and running thread (a new file begins). */
TK_API void tk_collect_timeline_reset(tk_collect_timeline *tl);
/*
 * Writes one event (n slots: 1, or a combine event's CB, CC..., CE) of time t_ns to w
 * (opened with TK_KEV_NO_AUTO_TIME): a CONTROL TIME first when the upper 32 bits of t_ns
 * differ from those last written on the event's CPU. A THRUNNING is noted as its CPU's
 * running thread. Returns TK_OK or the writer's error.
 */
TK_API int tk_collect_timeline_write(tk_collect_timeline *tl, tk_kev_writer *w, const traceevent_t *slots,
                                     size_t n, uint64_t t_ns);

/*
 * A merge: events of the traced programs (from a session's buffers, or from a program's own
 * .kev file) kept in memory with their times and owners, written at the end between the
 * kernel's events of a file already written, in time order across CPUs. An event whose
 * thread is not the one the file shows running on its CPU at that moment gets a THRUNNING
 * of its thread, at its time, just before it. Not thread-safe.
 */
typedef struct tk_collect_merge tk_collect_merge;
TK_API int tk_collect_merge_new(tk_collect_merge **out); /* TK_OK or TK_ENOMEM */
TK_API void tk_collect_merge_free(tk_collect_merge *m);  /* NULL ok */
/* Only events with lo_ns <= time <= hi_ns are written (default: all). */
TK_API void tk_collect_merge_window(tk_collect_merge *m, uint64_t lo_ns, uint64_t hi_ns);
/*
 * Adds one event: n slots (at most 1024), its time in ns and its owner (tid 0: unknown,
 * no THRUNNING is written for it). The slots' data[0] is set to the low 32 bits of t_ns.
 * Returns TK_OK, TK_EINVAL (n 0 or too large) or TK_ENOMEM.
 */
TK_API int tk_collect_merge_add(tk_collect_merge *m, const traceevent_t *slots, size_t n, uint64_t t_ns,
                                int32_t pid, int32_t tid);
/*
 * Adds a PROCESS PROCDESTROY (ppid 0, pid) for a process whose end was noticed otherwise
 * than by the kernel (an attached process found dead), written only if the kernel's file
 * has no PROCDESTROY of that pid. TK_OK or TK_ENOMEM.
 */
TK_API int tk_collect_merge_add_procdestroy(tk_collect_merge *m, unsigned cpu, uint64_t t_ns, int32_t pid);
/* At most max_slots slots of events (TIME and the THRUNNING the merge adds not counted) are
 * written, the earliest (0: no limit; tracelogger's -n). */
TK_API void tk_collect_merge_limit(tk_collect_merge *m, uint64_t max_slots);
/* Events added so far. */
TK_API size_t tk_collect_merge_count(const tk_collect_merge *m);
/*
 * Also writes every event added from now on, as it comes, into a .kev at path (header hdr,
 * through tk_kev_writer: "<path>.part" until then), so that a logger that dies keeps what it
 * had drained: the part file is readable. tk_collect_merge_flush() puts what was added on
 * disk; tk_collect_merge_free() removes the file (its events are in the merged one).
 * TK_OK, TK_ESTATE (one already) or the writer's error.
 */
TK_API int tk_collect_merge_spool(tk_collect_merge *m, const char *path, const tk_kev_header *hdr);
TK_API int tk_collect_merge_flush(tk_collect_merge *m); /* TK_OK or the spool's first error */
TK_API const char *tk_collect_merge_spool_path(const tk_collect_merge *m); /* its temporary file, or NULL */
/*
 * Adds the events of a program's own .kev file (the recorder's, TRACEKIT_LOG), its times
 * converted to the file's time line (tk_traceparser_ns()). Its CONTROL events, its THREAD,
 * VTHREAD and PROCESS events (the owner markers of its buffers, its snapshot of threads) and
 * its KERCALL events (TraceEvent() calls) are left out: the kernel's record of them is in
 * the file. Returns TK_OK; TK_EFORMAT when the file is damaged or cannot be read (the events
 * before the damage are kept) or TK_ENOMEM, with the reason in why.
 */
TK_API int tk_collect_merge_load_kev(tk_collect_merge *m, const char *path, char *why, size_t whycap);
/*
 * Writes out_path (through tk_kev_writer: complete or not at all) with header hdr: the
 * events of kernel_path (NULL: none) from byte hdr_bytes on (a file written with a timeline: whole
 * events, CONTROL TIME per CPU) and the added events, in time order (stable: at equal
 * times the added events come first, each side in its own order). out_path may be kernel_path. Returns
 * TK_OK or a TK_E* code, with the reason in why.
 */
TK_API int tk_collect_merge_write(tk_collect_merge *m, const char *kernel_path, uint64_t hdr_bytes,
                                  const char *out_path, const tk_kev_header *hdr, char *why, size_t whycap);

/* ---- Draining a pool: the traced programs' own events --------------------------------- */

/*
 * The recorder's trace buffers in a pool shared with the logger (a session's,
 * tracekit/session.h): each event handed over with its owner and its time converted from
 * the writers' cycle clock to CLOCK_MONOTONIC_RAW ns (the collector's time line):
 *   ns = clock_ns + (cycles - clock_cycles) * 10^9 / cycles_per_sec   (signed, floored)
 * CONTROL TIME and BUFFER and each buffer's owner THRUNNING are consumed (the owner comes
 * with every event); CONTROL DROPPED events (records the writers lost for want of a free
 * buffer) are handed over and counted. A combine event cut short by its writer's death is
 * left out. One drainer per pool (the logger); not thread-safe.
 */
typedef struct tk_collect_drain tk_collect_drain;
typedef struct tk_collect_drain_config {
	size_t size;             /* sizeof(tk_collect_drain_config) */
	uint64_t cycles_per_sec; /* the writers' clock (not 0) */
	uint64_t clock_cycles;   /* a cycle count ... */
	uint64_t clock_ns;       /* ... and the CLOCK_MONOTONIC_RAW ns read with it */
	uint32_t skip_classes;   /* bit (1 << internal class) per class left out, e.g.
	                            1u << (_TRACE_KER_CALL_C >> 10) */
	/* Optional: called with emit's ud after a buffer's events were handed over and before
	 * the buffer is given back to the writers, to make what emit was given durable (a
	 * consumer killed after the give, before its own flush, would lose those events: the
	 * region no longer holds them). Non-zero: the buffer is still given back, and the drain
	 * stops with that code. */
	int (*before_give)(void *ud);
} tk_collect_drain_config;
/* Called for each event: n slots, its time, its owner. Non-zero stops the drain. */
typedef int (*tk_collect_user_fn)(void *ud, const traceevent_t *slots, size_t n, uint64_t t_ns, int32_t pid,
                                  int32_t tid);
TK_API int tk_collect_drain_new(tk_collect_drain **out, tk_pool *pool, const tk_collect_drain_config *cfg);
TK_API void tk_collect_drain_free(tk_collect_drain *d); /* NULL ok */
/* The writers' cycle count converted to ns. */
TK_API uint64_t tk_collect_drain_ns(const tk_collect_drain *d, uint64_t cycles);
/*
 * Every queued buffer, read whole (from its `flushed` part on) and given back. Returns the
 * events handed over, or a negative TK_E* code (emit's negative return, TK_ECANCELED for a
 * positive one).
 */
TK_API int tk_collect_drain_queued(tk_collect_drain *d, tk_collect_user_fn emit, void *ud);
/*
 * The WRITING buffers of process pid, read up to `committed`. dead != 0: the process has
 * ended (nothing writes them any more) and they are given back; dead == 0: it lives on and
 * keeps them (read once, at the end of a recording). Returns as tk_collect_drain_queued().
 */
TK_API int tk_collect_drain_process(tk_collect_drain *d, int32_t pid, int dead, tk_collect_user_fn emit,
                                    void *ud);
/*
 * The first n_records slots of one buffer (from its descriptor's `flushed` part on), owned
 * as desc says: for a caller that found the buffer itself (tk_session_collect_dead()). The
 * buffer is not given back. Returns as tk_collect_drain_queued().
 */
TK_API int tk_collect_drain_records(tk_collect_drain *d, const void *buf, uint32_t n_records,
                                    const tk_pool_desc *desc, tk_collect_user_fn emit, void *ud);
/* Takes the pool's drops not yet reported in any buffer (tk_pool_take_dropped()), counted. */
TK_API uint64_t tk_collect_drain_take_dropped(tk_collect_drain *d);
/*
 * Recovery only (the region's consumer died): every buffer left DRAINING (the dead consumer
 * had taken it off the queue and not given it back: with before_give, its events had not
 * been made durable), read whole from its `flushed` part on and given back. Returns as
 * tk_collect_drain_queued().
 */
TK_API int tk_collect_drain_stranded(tk_collect_drain *d, tk_collect_user_fn emit, void *ud);
/* Events handed over, buffers read, records lost by the writers (DROPPED counts). NULL ok. */
TK_API void tk_collect_drain_get_stats(const tk_collect_drain *d, uint64_t *events, uint64_t *buffers,
                                       uint64_t *dropped);

/* ---- A session's logger side ---------------------------------------------------------- */

/*
 * tracelogger's side of a session it created (tracekit/session.h): the events of every
 * attached process drained into a merge, live. With `thread`, a thread (taking no signal)
 * waits on the session's futex (wait_ms at most: no polling), drains the queued buffers,
 * and notices the death of an attached process (its pid gone or reused, or a zombie): its
 * WRITING buffers are read up to `committed`, a PROCDESTROY is added for it
 * (tk_collect_merge_add_procdestroy) and its registry slot is marked EXITED.
 */
typedef struct tk_collect_session tk_collect_session;
typedef struct tk_collect_session_config {
	size_t size;             /* sizeof(tk_collect_session_config) */
	tk_collect_merge *merge; /* where the events go (NULL: read and dropped); the caller
	                            does not touch it until tk_collect_session_finish() */
	uint32_t skip_classes;   /* as tk_collect_drain_config */
	unsigned wait_ms;        /* the longest futex wait (0: 100 ms) */
	int thread;              /* 1: drain on a thread of its own; 0: tk_collect_session_drain() */
	int no_procdestroy;      /* 1: no PROCDESTROY for the dead (PROCESS is not recorded) */
	int obey_config;         /* 1: only if the session's configuration enables PROCDESTROY
	                            (daemon mode: the programs chose what is recorded) */
} tk_collect_session_config;
typedef struct tk_collect_session_stats {
	uint64_t events, buffers; /* events handed over, buffers read */
	uint64_t user_slots;      /* slots added to the merge */
	uint64_t dropped;         /* records the writers lost (DROPPED counts) */
	uint64_t deaths;          /* attached processes found dead */
	int error;                /* the drain thread's error (it stopped), or 0 */
} tk_collect_session_stats;

TK_API int tk_collect_session_open(tk_collect_session **out, tk_session *s,
                                   const tk_collect_session_config *cfg);
/* One round without a thread: queued buffers, deaths. TK_OK, TK_ESTATE (a thread drains). */
TK_API int tk_collect_session_drain(tk_collect_session *cs);
/*
 * Waits (futex, at most timeout_ms; a signal ends it early) until the session's trace is
 * started (want 1: started now, or a START came since the handle was opened, even if a STOP
 * followed) or stopped (want 0) by an attached program or the logger. Returns 1 when it is,
 * 0 otherwise.
 */
TK_API int tk_collect_session_wait_started(tk_collect_session *cs, int want, unsigned timeout_ms);
/* Counters so far (thread-safe). */
TK_API void tk_collect_session_get_stats(tk_collect_session *cs, tk_collect_session_stats *st);
/*
 * The end: stops the thread, drains what is queued and what dead processes left, reads the
 * WRITING buffers of processes that live on up to `committed`, and adds one CONTROL
 * DROPPED for the writers' losses no buffer reported. The merge is then the caller's.
 * TK_OK or the first error.
 */
TK_API int tk_collect_session_finish(tk_collect_session *cs);
TK_API void tk_collect_session_close(tk_collect_session *cs); /* NULL ok; the session stays open */

/*
 * What the kernel's side records in daemon mode, from the session's configuration (set by
 * the programs' TraceEvent()): the collector classes (TK_COLLECT_CLASS bits of THREAD,
 * PROCESS, SYSTEM, KERCALL, INT) with at least one event enabled, and in *wide (NULL ok)
 * whether any enabled event is wide.
 */
TK_API uint32_t tk_collect_session_classes(tk_session *s, int *wide);
/* 1 if the session's static filter lets the kernel's event of this header through
 * (KERCALL: by class; Linux system calls have no QNX kernel-call number). */
TK_API int tk_collect_session_enabled(tk_session *s, uint32_t header);

/*
 * Recovers an orphaned session (its logger died): opens it with TK_SESSION_RECOVER, drains
 * everything its processes committed (queued buffers, the WRITING buffers of every process
 * up to `committed`) into out_path (a .kev with header hdr, written whole or not at all) and
 * removes the region. Errors as tk_session_open() (TK_EBUSY: a logger lives; TK_ENOENT: no
 * such session) or writing; the region is then kept. why says why.
 */
typedef struct tk_collect_recovered {
	uint32_t logger_pid;  /* the dead logger's */
	uint32_t processes;   /* processes the registry named */
	uint64_t events, dropped, deaths;
} tk_collect_recovered;
TK_API int tk_collect_session_recover(const char *name, const char *out_path, const tk_kev_header *hdr,
                                      tk_collect_recovered *res, char *why, size_t whycap);

/* ---- A sink of the kernel's events ------------------------------------------------------ */

/*
 * tracelogger's handling of what the collector hands over (tk_collect_sink_take is a
 * tk_collect_emit_fn): only the classes selected are written (the collector may read more:
 * the names it needs, the exits of the calls it watches), and of KERCALL and INT only the
 * parts selected; with a session, only what its static filter lets through (daemon mode).
 * Events are counted in buffers of 1024 slots (-n, -v: on_buffer is called as each one
 * completes, with the collector reads that brought events during it, QNX's "interrupts",
 * its events and the kernel records lost meanwhile). Linear mode writes each event at once
 * through a timeline, stopping before the file would exceed max_size (-S); ring mode keeps
 * the newest ring_buffers buffers (whole events) and writes them at tk_collect_sink_flush_ring().
 * A limit reached sets *stop (if it was 0) and a stop reason; the sink then takes nothing
 * more (the collector's read stops). Not thread-safe.
 */
typedef struct tk_collect_sink tk_collect_sink;
typedef struct tk_collect_sink_config {
	size_t size;                 /* sizeof(tk_collect_sink_config) */
	tk_kev_writer *w;            /* opened with TK_KEV_NO_AUTO_TIME, its header written */
	uint32_t classes;            /* TK_COLLECT_CLASS bits written */
	uint32_t sub_sel;            /* parts of KERCALL and INT written: 1 << _NTO_TRACE_KERCALLENTER,
	                                _KERCALLEXIT, _INTENTER, _INTEXIT, _INT_HANDLER_ENTER, _EXIT */
	tk_session *session;         /* non-NULL: its static filter applies too */
	uint64_t max_size;           /* linear mode: bytes the file may not exceed (0: none) */
	uint64_t n_buffers;          /* stop after that many buffers (0: none) */
	unsigned ring_buffers;       /* ring mode: buffers kept (0: linear mode) */
	volatile sig_atomic_t *stop; /* set to 1 when a limit is reached (noted only while 0) */
	void (*on_buffer)(void *ud, uint64_t buffer, uint64_t reads, uint64_t events, uint64_t lost);
	void *ud;
} tk_collect_sink_config;
typedef struct tk_collect_sink_stats {
	uint64_t buffers, events, lost;  /* buffers completed, kernel events taken, records lost */
	uint64_t ring_dropped_buffers;   /* ring mode: older buffers overwritten */
	uint64_t first_ns;               /* the first kernel event's time (kept, in ring mode) */
	const char *stop_reason;         /* the limit reached, or NULL */
	int write_err;                   /* the writer's error, or 0 */
} tk_collect_sink_stats;
TK_API int tk_collect_sink_new(tk_collect_sink **out, const tk_collect_sink_config *cfg);
TK_API void tk_collect_sink_free(tk_collect_sink *k); /* NULL ok; the writer stays the caller's */
TK_API int tk_collect_sink_take(void *k, const traceevent_t *slots, size_t n, uint64_t t_ns);
TK_API void tk_collect_sink_new_read(tk_collect_sink *k); /* before each tk_collect_read() */
/* The programs' own events count in the buffers too: total slots drained so far (from the
 * base given at START), and the base. */
TK_API void tk_collect_sink_count_user(tk_collect_sink *k, uint64_t total);
TK_API void tk_collect_sink_user_base(tk_collect_sink *k, uint64_t total);
TK_API void tk_collect_sink_set_stop(tk_collect_sink *k, const char *reason); /* -s: the reason */
TK_API void tk_collect_sink_end(tk_collect_sink *k);        /* the last partial buffer (-v) */
TK_API int tk_collect_sink_flush_ring(tk_collect_sink *k);  /* ring mode: write the kept buffers */
TK_API void tk_collect_sink_get_stats(const tk_collect_sink *k, tk_collect_sink_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_COLLECT_H */
