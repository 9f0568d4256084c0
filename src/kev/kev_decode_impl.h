/* SPDX-License-Identifier: MIT */
/*
 * Private: the decoder's implementation (kev_decode.c documents it), included by
 * kev_decode.c, which exports it, and by kev_format.c, where it is inlined into the
 * printer's hot path: one copy of the code, no call per printed event.
 */
#ifndef KEV_DECODE_IMPL_H
#define KEV_DECODE_IMPL_H

#include <stdio.h>
#include <string.h>

#include "common/tk_bytes.h"
#include "common/tk_utf8.h"
#include "kev/kev_names.h"
#include "tracekit/kev.h"

static inline uint32_t dec_word_at(const tk_kev_event *ev, size_t off)
{
	return tk__cs32(ev->swap, tk__load32((const unsigned char *)ev->data + off));
}

static inline uint64_t dec_dword_at(const tk_kev_event *ev, size_t off)
{
	return tk__cs64(ev->swap, tk__load64((const unsigned char *)ev->data + off));
}

/* Internal flag: a STR or BYTES field was added (its utf8 is computed at the end). */
#define DEC_HAS_TEXT 0x80000000u

static inline tk_kev_field *add_field(tk_kev_decoded *d, const char *name, uint8_t type, char fmt, uint32_t off)
{
	tk_kev_field *f;

	if (d->n_fields >= TK_KEV_MAX_FIELDS) {
		d->flags |= TK_KEV_DEC_TRUNCATED;
		return NULL;
	}
	f = &d->fields[d->n_fields++];
	f->name = name;
	f->type = type;
	f->bits = 32;
	f->fmt = fmt;
	f->utf8 = 0;
	f->offset = off;
	f->len = 0;
	f->v.u = 0;
	f->str = NULL;
	if (type == TK_KEV_FIELD_STR || type == TK_KEV_FIELD_BYTES)
		d->flags |= DEC_HAS_TEXT;
	return f;
}

/* A 32-bit number at byte offset off (the caller checked that it fits). */
static inline void num32(tk_kev_decoded *d, const tk_kev_event *ev, const char *name, uint8_t type, char fmt,
			 uint32_t off)
{
	tk_kev_field *f = add_field(d, name, type, fmt, off);
	uint32_t w;

	if (f == NULL)
		return;
	w = dec_word_at(ev, off);
	if (type == TK_KEV_FIELD_INT)
		f->v.i = (int32_t)w;
	else
		f->v.u = w;
}

/* A number computed from the payload (not at one offset of its own). */
static inline void num_value(tk_kev_decoded *d, const char *name, uint8_t type, char fmt, uint32_t off,
			     uint64_t v, uint8_t bits)
{
	tk_kev_field *f = add_field(d, name, type, fmt, off);

	if (f == NULL)
		return;
	f->v.u = v;
	f->bits = bits;
}

static void set_name(tk_kev_decoded *d, const char *prefix, const char *label)
{
	size_t n = 0;

	if (prefix != NULL)
		while (*prefix != '\0' && n < sizeof(d->event_name) - 1)
			d->event_name[n++] = *prefix++;
	while (label[0] != '\0' && label[0] != ' ' && n < sizeof(d->event_name) - 1)
		d->event_name[n++] = *label++;
	d->event_name[n] = '\0';
}

static void unknown(tk_kev_decoded *d, const tk_kev_event *ev)
{
	tk_kev_field *f;

	d->n_fields = 0;
	d->flags = (d->flags & ~(unsigned)(TK_KEV_DEC_WIDE | TK_KEV_DEC_TRUNCATED | TK_KEV_DEC_FAILED |
					   TK_KEV_DEC_TK_FORM)) |
		   TK_KEV_DEC_UNKNOWN;
	f = add_field(d, "d", TK_KEV_FIELD_WORDS, 0, 0);
	f->len = ev->len;
	f->str = (const char *)ev->data;
	d->flags &= ~DEC_HAS_TEXT;
}

/*
 * The generic argument list (traceprinter's trace_print()). Wide: every argument but the
 * fast-only ones; consecutive string pieces (S then s...) make one BYTES field. A value
 * the payload ends before: in wide mode its name is kept (a NONE field, as traceprinter
 * prints the name), in fast mode nothing.
 */
static void decode_args(tk_kev_decoded *d, const tk_kev_event *ev, const char *const *args, int wide)
{
	const char *p = (const char *)ev->data;
	size_t nbytes = (size_t)ev->len * 4, c = 0;
	tk_kev_field *open_str = NULL, *f;
	const char *const *a;

	if (wide)
		d->flags |= TK_KEV_DEC_WIDE;
	for (a = args; *a != NULL && c < nbytes; a++) {
		const char *spec = *a;
		char t;

		if (wide) {
			if (spec[0] == 'F')
				continue;
			if (spec[0] == 'f')
				spec++;
		} else {
			if (spec[0] != 'f' && spec[0] != 'F')
				continue;
			spec++;
		}
		t = spec[0];
		if (t != 's')
			open_str = NULL;
		switch (t) {
		case 'S':
		case 's':
			if (c + 4 > nbytes)
				goto truncated;
			if (t == 's' && open_str != NULL) {
				open_str->len += 4;
			} else {
				f = add_field(d, spec + 1, TK_KEV_FIELD_BYTES, t, (uint32_t)c);
				if (f == NULL)
					return;
				f->len = 4;
				f->str = p + c;
				open_str = wide ? f : NULL;
			}
			c += 4;
			break;
		case 'N':
			f = add_field(d, spec + 1, TK_KEV_FIELD_STR, 'N', (uint32_t)c);
			if (f == NULL)
				return;
			f->len = (uint32_t)strnlen(p + c, nbytes - c);
			f->str = p + c;
			return; /* always the last argument */
		case 'D':
		case 'H':
		case 'P':
			if (c + 4 > nbytes)
				goto truncated;
			num32(d, ev, spec + 1,
			      t == 'D' ? TK_KEV_FIELD_INT : t == 'H' ? TK_KEV_FIELD_HEX : TK_KEV_FIELD_PTR, t,
			      (uint32_t)c);
			c += 4;
			break;
		case 'E':
		case 'X':
			if (c + 8 > nbytes) {
				if (wide)
					add_field(d, spec + 1, TK_KEV_FIELD_NONE, t, (uint32_t)c);
				goto truncated;
			}
			f = add_field(d, spec + 1, t == 'E' ? TK_KEV_FIELD_INT : TK_KEV_FIELD_HEX, t, (uint32_t)c);
			if (f == NULL)
				return;
			f->bits = 64;
			f->v.u = dec_dword_at(ev, c);
			c += 8;
			break;
		default:
			return;
		}
	}
	return;
truncated:
	d->flags |= TK_KEV_DEC_TRUNCATED;
}

/*
 * A Linux system call (TK_KEV_DECODE_LINUX_*): code bits 0-6 the number's low bits, bit 7
 * exit, bits 8-9 its high bits (collect.h TK_COLLECT_KERCALL_CODE). Fast entry: a0, a1
 * (low words); wide entry: nr, then a0..a5 (64 bits each); fast exit: ret (64 bits);
 * wide exit: nr, ret.
 */
static int decode_linux_kercall(tk_kev_decoded *d, const tk_kev_event *ev, unsigned flags)
{
	static const char *const fast_enter[] = { "fHa0", "fHa1", NULL };
	static const char *const wide_enter[] = { "Dnr", "Xa0", "Xa1", "Xa2", "Xa3", "Xa4", "Xa5", NULL };
	static const char *const fast_exit[] = { "fEret", NULL };
	static const char *const wide_exit[] = { "Dnr", "Eret", NULL };
	unsigned code = d->code, n = (code & 0x7fu) | ((code >> 8) & 0x3u) << 7;
	int wide = ev->len != 2, ex = (code & 0x80u) != 0;
	const char *name = tk__linux_syscall_name(n, flags);
	char tmp[24];

	if (name == NULL) {
		snprintf(tmp, sizeof(tmp), "syscall_%u", n);
		name = tmp;
	}
	set_name(d, NULL, name);
	d->number = (int)n;
	decode_args(d, ev, ex ? (wide ? wide_exit : fast_exit) : (wide ? wide_enter : fast_enter), wide);
	return 0;
}

static int decode_kercall(tk_kev_decoded *d, const tk_kev_event *ev)
{
	unsigned code = d->code, n;
	const struct tk__kercall_desc *k;

	if (code >= 2 * _TRACE_MAX_KER_CALL_NUM && code < 3 * _TRACE_MAX_KER_CALL_NUM) {
		n = code - 2 * _TRACE_MAX_KER_CALL_NUM;
		if (n >= tk__n_kercalls)
			return -1;
		set_name(d, NULL, tk__kercalls[n].name);
		d->number = (int)n;
		return 0;
	}
	if (code >= 2 * _TRACE_MAX_KER_CALL_NUM)
		return -1;
	n = code >= _TRACE_MAX_KER_CALL_NUM ? code - _TRACE_MAX_KER_CALL_NUM : code;
	if (n >= tk__n_kercalls)
		return -1;
	k = &tk__kercalls[n];
	set_name(d, NULL, k->name);
	d->number = (int)n;
	if (code < _TRACE_MAX_KER_CALL_NUM) {
		decode_args(d, ev, k->enter_args, ev->len != 2);
		return 0;
	}
	if (ev->len >= 2 && dec_word_at(ev, 0) == 0xffffffffu) {
		d->flags |= TK_KEV_DEC_FAILED;
		num32(d, ev, "ret_val", TK_KEV_FIELD_INT, 'D', 0);
		num32(d, ev, "errno", TK_KEV_FIELD_INT, 'D', 4);
		return 0;
	}
	decode_args(d, ev, k->exit_args, ev->len != 2);
	return 0;
}

static const char *const args_pid_tid[] = { "fDpid", "fDtid", NULL };

static int decode_pr_th(tk_kev_decoded *d, const tk_kev_event *ev)
{
	/* Wide THCREATE carries the new thread's priority and policy, as a wide state event. */
	static const char *const create_args[] = { "fDpid", "fDtid", "Dpriority", "Dpolicy", NULL };
	static const char *const ppid_pid[] = { "fDppid", "fDpid", NULL };
	static const char *const ppid_pid_name[] = { "fDppid", "fDpid", "Nname", NULL };
	static const char *const pid_tid_name[] = { "fDpid", "fDtid", "Nname", NULL };
	unsigned code = d->code;
	const char *const *args;
	const char *name;

	if (code < tk__n_thread_states) {
		if (ev->len < 2)
			return -1;
		set_name(d, NULL, tk__thread_states[code]);
		d->number = (int)code;
		num32(d, ev, "pid", TK_KEV_FIELD_INT, 'D', 0);
		num32(d, ev, "tid", TK_KEV_FIELD_INT, 'D', 4);
		if (ev->len > 2) {
			d->flags |= TK_KEV_DEC_WIDE;
			if (ev->len < 4)
				return -1;
			num32(d, ev, "priority", TK_KEV_FIELD_INT, 'D', 8);
			num32(d, ev, "policy", TK_KEV_FIELD_INT, 'D', 12);
			if (ev->len > 4)
				num32(d, ev, "partition", TK_KEV_FIELD_INT, 'D', 16);
			if (ev->len > 5)
				num32(d, ev, "sched_flags", TK_KEV_FIELD_HEX, 'H', 20);
		}
		return 0;
	}
	if (code >= _TRACE_MAX_TH_STATE_NUM && code - _TRACE_MAX_TH_STATE_NUM < tk__n_thread_states) {
		set_name(d, "V", tk__thread_states[code - _TRACE_MAX_TH_STATE_NUM]);
		d->number = (int)(code - _TRACE_MAX_TH_STATE_NUM);
		decode_args(d, ev, args_pid_tid, ev->len != 2);
		return 0;
	}
	switch (code) {
	case _TRACE_PR_TH_CREATE_T:
		name = "THCREATE", args = create_args;
		break;
	case _TRACE_PR_TH_DESTROY_T:
		name = "THDESTROY", args = args_pid_tid;
		break;
	case _TRACE_PR_TH_CREATE_VT:
		name = "VTHCREATE", args = args_pid_tid;
		break;
	case _TRACE_PR_TH_DESTROY_VT:
		name = "VTHDESTROY", args = args_pid_tid;
		break;
	case _TRACE_PR_TH_CREATE_P:
		name = "PROCCREATE", args = ppid_pid;
		break;
	case _TRACE_PR_TH_DESTROY_P:
		name = "PROCDESTROY", args = ppid_pid;
		break;
	case _TRACE_PR_TH_CREATE_P_NAME:
		name = "PROCCREATE_NAME", args = ppid_pid_name;
		break;
	case _TRACE_PR_TH_DESTROY_P_NAME:
		name = "PROCDESTROY_NAME", args = ppid_pid_name;
		break;
	case _TRACE_PR_TH_NAME_T:
		name = "PROCTHREAD_NAME", args = pid_tid_name;
		break;
	default:
		return -1;
	}
	set_name(d, NULL, name);
	decode_args(d, ev, args, ev->len != 2);
	return 0;
}

/* QNX's struct sigevent (32-bit): notify, signo/coid, value, then code and priority. */
static void decode_sigevent(tk_kev_decoded *d, const tk_kev_event *ev)
{
	if (ev->len > 1)
		num32(d, ev, "sigev_notify", TK_KEV_FIELD_INT, 'D', 4);
	if (ev->len > 2)
		num32(d, ev, "sigev_signo", TK_KEV_FIELD_INT, 'D', 8);
	if (ev->len > 3)
		num32(d, ev, "sigev_value", TK_KEV_FIELD_HEX, 'H', 12);
	if (ev->len > 4) {
		/* short sigev_code, short sigev_priority share one word in the target's order */
		uint32_t cp = dec_word_at(ev, 16);
		int big = ev->swap != TK__HOST_BIG_ENDIAN;
		int16_t code = (int16_t)(big ? cp >> 16 : cp & 0xffff);
		int16_t prio = (int16_t)(big ? cp & 0xffff : cp >> 16);
		num_value(d, "sigev_code", TK_KEV_FIELD_INT, 'D', 16, (uint64_t)(int64_t)code, 16);
		num_value(d, "sigev_priority", TK_KEV_FIELD_INT, 'D', 16, (uint64_t)(int64_t)prio, 16);
	}
}

static int decode_int(tk_kev_decoded *d, const tk_kev_event *ev)
{
	if (ev->len < 2)
		return -1;
	switch (d->code) {
	case _TRACE_INT_ENTRY:
		set_name(d, NULL, "INT_ENTRY");
		num32(d, ev, "intnum", TK_KEV_FIELD_HEX, 'H', 0);
		num32(d, ev, "ip", TK_KEV_FIELD_HEX, 'H', 4);
		return 0;
	case _TRACE_INT_EXIT:
		set_name(d, NULL, "INT_EXIT");
		num32(d, ev, "intnum", TK_KEV_FIELD_HEX, 'H', 0);
		num32(d, ev, "inkernel", TK_KEV_FIELD_HEX, 'H', 4);
		return 0;
	case _TRACE_INT_HANDLER_ENTRY:
		if (ev->len < 4)
			return -1;
		set_name(d, NULL, "INT_HANDLER_ENTRY");
		num32(d, ev, "pid", TK_KEV_FIELD_INT, 'D', 0);
		num32(d, ev, "intnum", TK_KEV_FIELD_HEX, 'H', 4);
		num32(d, ev, "ip", TK_KEV_FIELD_HEX, 'H', 8);
		num32(d, ev, "area", TK_KEV_FIELD_HEX, 'H', 12);
		return 0;
	case _TRACE_INT_HANDLER_EXIT:
		set_name(d, NULL, "INT_HANDLER_EXIT");
		num32(d, ev, "intnum", TK_KEV_FIELD_HEX, 'H', 0);
		decode_sigevent(d, ev);
		return 0;
	default:
		return -1;
	}
}

/*
 * A user combine event is a string when it is printable text, NUL, and zero padding. QNX
 * and tracekit's writer put a string of 8 bytes or less in one simple slot, which cannot be
 * told from two words; older tracekit files and the in-process recorder pad such a string
 * to a CB + all-zero CE, accepted here as a string. Returns its length or -1.
 */
static size_t user_string_len(const tk_kev_event *ev)
{
	const unsigned char *p = (const unsigned char *)ev->data;
	size_t nbytes = (size_t)ev->len * 4, n, i;

	for (n = 0; n < nbytes && p[n] != '\0'; n++) {
		if (p[n] != '\n' && (p[n] < 0x20 || p[n] >= 0x7f))
			return (size_t)-1;
	}
	/* no NUL, or a whole slot of padding (except in the two-slot minimum of a combine) */
	if (n == nbytes || (n + 1 + 8 <= nbytes && nbytes > 16))
		return (size_t)-1;
	for (i = n; i < nbytes; i++) {
		if (p[i] != '\0')
			return (size_t)-1;
	}
	return n;
}

static int decode_user(tk_kev_decoded *d, const tk_kev_event *ev, unsigned flags)
{
	size_t n;
	tk_kev_field *f;

	d->number = (int)d->code;
	if (ev->len <= 2) {
		num_value(d, "d0", TK_KEV_FIELD_HEX, 'H', 0, ev->len > 0 ? dec_word_at(ev, 0) : 0, 32);
		num_value(d, "d1", TK_KEV_FIELD_HEX, 'H', 4, ev->len > 1 ? dec_word_at(ev, 4) : 0, 32);
		return 0;
	}
	d->flags |= TK_KEV_DEC_WIDE;
	n = user_string_len(ev);
	if (n == (size_t)-1 && (flags & TK_KEV_DECODE_QNX_STRICT)) /* 1.02: last byte forced to NUL */
		n = strnlen((const char *)ev->data, (size_t)ev->len * 4 - 1);
	if (n != (size_t)-1) {
		f = add_field(d, "str", TK_KEV_FIELD_STR, 'N', 0);
		f->len = (uint32_t)n;
		f->str = (const char *)ev->data;
		return 0;
	}
	f = add_field(d, "d", TK_KEV_FIELD_WORDS, 0, 0);
	f->len = ev->len;
	f->str = (const char *)ev->data;
	return 0;
}

static int decode_control(tk_kev_decoded *d, const tk_kev_event *ev)
{
	static const char *const time_args[] = { "fHmsb", "fHlsb(offset)", NULL };

	if (ev->len < 2)
		return -1;
	switch (d->code) {
	case _TRACE_CONTROL_TIME:
		set_name(d, NULL, "TIME");
		decode_args(d, ev, time_args, ev->len != 2);
		return 0;
	case _TRACE_CONTROL_BUFFER:
		set_name(d, NULL, "BUFFER");
		num_value(d, "sequence", TK_KEV_FIELD_UINT, 'D', 0, dec_word_at(ev, 0) & 0x7ff, 32);
		num32(d, ev, "num_events", TK_KEV_FIELD_INT, 'D', 4);
		return 0;
	case _TRACE_CONTROL_BUFFER_END:
		set_name(d, NULL, "BUFFER_END");
		return 0;
	case _TRACE_CONTROL_DROPPED:
		set_name(d, NULL, "DROPPED");
		num_value(d, "events", TK_KEV_FIELD_UINT, 'E', 0,
			  (uint64_t)dec_word_at(ev, 0) | (uint64_t)dec_word_at(ev, 4) << 32, 64);
		return 0;
	default:
		return -1;
	}
}

static int decode_system(tk_kev_decoded *d, const tk_kev_event *ev, unsigned flags)
{
	static const char *const wide_fn[] = { "Xthisfn", "Xcall_site", NULL };
	static const char *const addr64[] = { "fXaddr", NULL };
	unsigned code = d->code;
	const struct tk__event_desc *e;

	if (code >= tk__n_system_events || tk__system_events[code].label == NULL)
		return -1;
	e = &tk__system_events[code];
	set_name(d, NULL, e->label);
	d->number = (int)code;
	if ((code == _NTO_TRACE_SYS_FUNC_ENTER || code == _NTO_TRACE_SYS_FUNC_EXIT) && ev->len == 2) {
		/* the hot case of -finstrument-functions traces: decode_args() of "fHthisfn",
		 * "fHcall_site" without walking the list */
		num32(d, ev, "thisfn", TK_KEV_FIELD_HEX, 'H', 0);
		num32(d, ev, "call_site", TK_KEV_FIELD_HEX, 'H', 4);
		return 0;
	}
	if (!(flags & TK_KEV_DECODE_QNX_STRICT)) {
		/* tracekit's 64-bit forms: wide function hooks carry two 64-bit addresses, and an
		 * ADDRESS above 4 GiB has its upper half in the second word */
		if ((code == _NTO_TRACE_SYS_FUNC_ENTER || code == _NTO_TRACE_SYS_FUNC_EXIT) && ev->len >= 4) {
			d->flags |= TK_KEV_DEC_TK_FORM;
			decode_args(d, ev, wide_fn, 1);
			return 0;
		}
		if (code == _NTO_TRACE_SYS_ADDRESS && ev->len == 2 && dec_word_at(ev, 4) != 0) {
			d->flags |= TK_KEV_DEC_TK_FORM;
			decode_args(d, ev, addr64, 0);
			return 0;
		}
	}
	decode_args(d, ev, e->args, ev->len != 2 || code == _NTO_TRACE_SYS_APS_NAME);
	return 0;
}

static int decode_comm(tk_kev_decoded *d, const tk_kev_event *ev)
{
	unsigned code = d->code;

	if (code >= tk__n_comm_events)
		return -1;
	set_name(d, NULL, tk__comm_events[code].label);
	d->number = (int)code;
	decode_args(d, ev, tk__comm_events[code].args, ev->len != 2);
	return 0;
}

/* What the printer needs: header, cls, code, number, flags and fields (event_name when
 * the event has one); tk_kev_decode() fills in the rest. */
static inline __attribute__((always_inline)) void kev_decode_core(const tk_kev_event *ev, unsigned flags,
								   tk_kev_decoded *d)
{
	int rc;
	unsigned i;

	d->header = ev->header;
	d->cls = TK_KEV_CLASS(ev->header);
	d->code = TK_KEV_CODE(ev->header);
	d->number = -1;
	d->flags = 0;
	d->n_fields = 0;

	switch (d->cls) {
	case 1:
		rc = decode_control(d, ev);
		break;
	case 2:
		rc = (flags & TK_KEV_DECODE_LINUX_MASK) ? decode_linux_kercall(d, ev, flags)
							: decode_kercall(d, ev);
		break;
	case 3:
		rc = decode_int(d, ev);
		break;
	case 4:
		rc = decode_pr_th(d, ev);
		break;
	case 5:
		rc = decode_system(d, ev, flags);
		break;
	case 6:
		rc = decode_user(d, ev, flags);
		break;
	case 7:
		rc = decode_comm(d, ev);
		break;
	default:
		rc = -1;
		break;
	}
	if (rc != 0) {
		d->event_name[0] = '\0';
		d->number = -1;
		unknown(d, ev);
		return;
	}
	if (d->flags & DEC_HAS_TEXT) {
		d->flags &= ~DEC_HAS_TEXT;
		for (i = 0; i < d->n_fields; i++) {
			tk_kev_field *f = &d->fields[i];
			if (f->type == TK_KEV_FIELD_STR || f->type == TK_KEV_FIELD_BYTES)
				f->utf8 = (uint8_t)tk__utf8_valid(f->str, f->len);
		}
	}
}

#endif /* KEV_DECODE_IMPL_H */
