/* SPDX-License-Identifier: MIT */
/*
 * Private: names and argument lists of QNX 6.4 events, as traceprinter 1.02 shows them.
 *
 * An argument spec is "[f|F]<type><name>": no mark, an argument of wide mode only; 'f'
 * one of both modes; 'F' one of fast mode only (where the appendix names the fast-mode
 * value differently, e.g. CLOCK_TIME's "old" for wide "old(sec)"). A simple (fast)
 * event prints the 'f' and 'F' arguments in order, a combine (wide) event the unmarked
 * and 'f' ones. Type H hex32, D dec32, P pointer (plain hex), E dec64, X hex64, S first
 * 4 bytes of a string, s 4 more bytes of it, N NUL-terminated string to the end of the
 * payload.
 */
#ifndef KEV_NAMES_H
#define KEV_NAMES_H

struct tk__kercall_desc {
	const char *name;       /* "MSG_SENDV" */
	const char *exit_name;  /* label on exit when it differs ("SYNC_CONDVAR_SIG"), or NULL */
	const char *const *enter_args;
	const char *const *exit_args;
};

/* __KER_NOP .. __KER_BAD, indexed by call number; NULL name past the end. */
extern const struct tk__kercall_desc tk__kercalls[];
extern const unsigned tk__n_kercalls;

/* Thread state labels padded to 13 characters, indexed by state number (0..20). */
extern const char *const tk__thread_states[];
extern const unsigned tk__n_thread_states;

struct tk__event_desc {
	const char *label;      /* event label, padded as traceprinter pads it */
	const char *const *args;
};

/* SYSTEM and COMM class events indexed by code; NULL label when unknown. */
extern const struct tk__event_desc tk__system_events[];
extern const unsigned tk__n_system_events;
extern const struct tk__event_desc tk__comm_events[];
extern const unsigned tk__n_comm_events;

/* Name of Linux system call n in the table a TK_KEV_DECODE_LINUX_* flag names (libaudit),
 * or NULL. */
const char *tk__linux_syscall_name(unsigned n, unsigned flags);

/* Printable name of an internal class (0..31), 8 characters wide. */
const char *tk__class_label(unsigned cls);

/*
 * tk_kev_class_of() without a search: indexes of the class table (kev_classes.c, the
 * table's order) and the direct mapping of a header to its most specific class.
 */
#include "tracekit/kev.h"

enum {
	TK__CT_EMPTY, TK__CT_CONTROL, TK__CT_KERENTER, TK__CT_KEREXIT, TK__CT_KERINT, TK__CT_KERCALL,
	TK__CT_INTENTER, TK__CT_INTEXIT, TK__CT_HENTER, TK__CT_HEXIT, TK__CT_INT, TK__CT_THREAD,
	TK__CT_VTHREAD, TK__CT_PROCESS, TK__CT_SYSTEM, TK__CT_USER, TK__CT_COMM, TK__CT_QUIP, TK__CT_SEC,
	TK__CT_QVM, TK__CT_PMU
};
extern const tk_kev_class_desc tk__kev_class_table[];

static inline const tk_kev_class_desc *tk__kev_class_of(unsigned header)
{
	unsigned cls = TK_KEV_CLASS(header), code = TK_KEV_CODE(header);

	switch (cls) {
	case 0:
		return &tk__kev_class_table[TK__CT_EMPTY];
	case 1:
		return &tk__kev_class_table[TK__CT_CONTROL];
	case 2:
		return &tk__kev_class_table[code < 3 * _TRACE_MAX_KER_CALL_NUM
						    ? TK__CT_KERENTER + code / _TRACE_MAX_KER_CALL_NUM
						    : TK__CT_KERCALL];
	case 3:
		return &tk__kev_class_table[code >= 1 && code <= 4 ? TK__CT_INTENTER + code - 1 : TK__CT_INT];
	case 4:
		if (code < _TRACE_MAX_TH_STATE_NUM)
			return &tk__kev_class_table[TK__CT_THREAD];
		if (code < 2 * _TRACE_MAX_TH_STATE_NUM)
			return &tk__kev_class_table[TK__CT_VTHREAD];
		return code >= 64 ? &tk__kev_class_table[TK__CT_PROCESS] : NULL;
	default:
		return cls <= 11 ? &tk__kev_class_table[TK__CT_SYSTEM + cls - 5] : NULL;
	}
}

#endif /* KEV_NAMES_H */
