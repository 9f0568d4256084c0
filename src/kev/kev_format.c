/* SPDX-License-Identifier: MIT */
/*
 * Events as text, in the format of QNX traceprinter 1.02 (QNX 6.4):
 *
 *   t:0x<lsb, 8 hex> CPU:<2 digits> <class>:<event>[ <name>:<value>...]
 *
 * Simple events (2 payload words) show the arguments of fast mode ('f', 'F'); combine
 * events show every argument of wide mode, each on its own line as "\n%26s:" (or " %s:"
 * with TK_KEV_PRINT_NO_NEWLINES). The per-event argument lists are in kev_names.c.
 *
 * Deliberate differences from traceprinter 1.02 (docs/traceprinter.md):
 * - number words are byte-swapped for other-endian files everywhere (1.02 printed the
 *   failed-call errno unswapped); message and string bytes are memory, not numbers: their
 *   hex shows each 4-byte piece as a little-endian word whatever the file's byte order
 *   (what 1.02 printed on x86 hosts), so the same bytes print the same in both orders;
 * - a failed kernel call ("ret_val:-1, errno:N") ends its line;
 * - pointers print as plain hex as on QNX ("%p" there), "0" for NULL;
 * - nothing is read past the payload: an argument that does not fit ends the line;
 * - events 1.02 does not print get a generic line with every payload word, and user
 *   combine events that are not a string print their words.
 * All formatting is hand-written into one growable buffer: this is the hot path of
 * traceprinter (goal: 20 M lines/s).
 */
#include <stdlib.h>
#include <string.h>

#include "common/tk_bytes.h"
#include "kev/kev_names.h"
#include "tracekit/kev.h"

struct obuf {
	char *p;
	size_t len, cap;
	int oom;
};

struct tk_kev_printer {
	FILE *stream;
	unsigned flags;
	struct obuf ob;
};

static __attribute__((noinline, cold)) int ob_grow(struct obuf *o, size_t need)
{
	size_t cap = o->cap ? o->cap : 1024;
	char *np;

	while (cap < o->len + need)
		cap *= 2;
	np = realloc(o->p, cap);
	if (np == NULL) {
		o->oom = 1;
		return -1;
	}
	o->p = np;
	o->cap = cap;
	return 0;
}

/* Makes room for n more bytes; on allocation failure output is silently dropped. */
static inline char *ob_room(struct obuf *o, size_t n)
{
	if (o->len + n > o->cap && ob_grow(o, n) != 0)
		return NULL;
	return o->p + o->len;
}

static inline void put_mem(struct obuf *o, const char *s, size_t n)
{
	char *d = ob_room(o, n);
	if (d == NULL)
		return;
	memcpy(d, s, n);
	o->len += n;
}

static inline void put_str(struct obuf *o, const char *s)
{
	put_mem(o, s, strlen(s));
}

static inline void put_chr(struct obuf *o, char c)
{
	char *d = ob_room(o, 1);
	if (d == NULL)
		return;
	*d = c;
	o->len++;
}

static const char hexdig[] = "0123456789abcdef";

/*
 * The 8 hex digits of v as one 64-bit word, first digit in the lowest byte: nibbles are
 * spread one per byte, then turned into ASCII in parallel (SWAR). No table, no loop.
 */
static inline uint64_t hex8_chars(uint32_t v)
{
	uint64_t x = v, letters;

	x = ((x & 0xffff0000u) << 16) | (x & 0x0000ffffu);
	x = ((x & 0x0000ff000000ff00ull) << 8) | (x & 0x000000ff000000ffull);
	x = ((x & 0x00f000f000f000f0ull) << 4) | (x & 0x000f000f000f000full);
	/* x holds one nibble per byte, the most significant in the highest byte */
	letters = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull; /* nibble >= 10 */
	x += 0x3030303030303030ull + letters * ('a' - '0' - 10);
	return TK__HOST_BIG_ENDIAN ? x : tk__bswap64(x);
}

/* "%08x" */
static inline void put_hex8(struct obuf *o, uint32_t v)
{
	char *d = ob_room(o, 8);
	if (d == NULL)
		return;
	tk__store64(d, hex8_chars(v));
	o->len += 8;
}

/* "%x" / "%llx" */
static inline void put_hex(struct obuf *o, uint64_t v)
{
	char tmp[16];
	int n = 0;
	do {
		tmp[15 - n++] = hexdig[v & 0xf];
		v >>= 4;
	} while (v != 0);
	put_mem(o, tmp + 16 - n, (size_t)n);
}

/* "%016llx" */
static inline void put_hex16(struct obuf *o, uint64_t v)
{
	put_hex8(o, (uint32_t)(v >> 32));
	put_hex8(o, (uint32_t)v);
}

/* "%llu" */
static inline void put_u64(struct obuf *o, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[19 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	put_mem(o, tmp + 20 - n, (size_t)n);
}

/* "%d" of a 32-bit word */
static inline void put_d32(struct obuf *o, uint32_t w)
{
	int32_t v = (int32_t)w;
	if (v < 0) {
		put_chr(o, '-');
		put_u64(o, (uint64_t)(-(int64_t)v));
	} else {
		put_u64(o, (uint64_t)v);
	}
}

/* "%lld" */
static void put_d64(struct obuf *o, uint64_t w)
{
	int64_t v = (int64_t)w;
	if (v < 0) {
		put_chr(o, '-');
		put_u64(o, (uint64_t)0 - w);
	} else {
		put_u64(o, w);
	}
}

/* "%02d" for 0..99 */
static inline void put_2d(struct obuf *o, unsigned v)
{
	char *d = ob_room(o, 2);
	if (d == NULL)
		return;
	d[0] = (char)('0' + (v / 10) % 10);
	d[1] = (char)('0' + v % 10);
	o->len += 2;
}

/* "%#x": 0 prints as "0", others as 0x... */
static void put_althex(struct obuf *o, uint64_t v)
{
	if (v != 0)
		put_mem(o, "0x", 2);
	put_hex(o, v);
}

static inline uint32_t word_at(const tk_kev_event *ev, size_t byte_off)
{
	const unsigned char *p = (const unsigned char *)ev->data + byte_off;
	return tk__cs32(ev->swap, tk__load32(p));
}

static inline uint32_t word(const tk_kev_event *ev, unsigned i)
{
	return word_at(ev, (size_t)i * 4);
}

/* 4 message or string bytes as the word QNX shows for them (see the head comment). */
static inline uint32_t mem_word_at(const tk_kev_event *ev, size_t byte_off)
{
	return tk__le32((const unsigned char *)ev->data + byte_off);
}

static inline uint64_t dword_at(const tk_kev_event *ev, size_t byte_off)
{
	const unsigned char *p = (const unsigned char *)ev->data + byte_off;
	return tk__cs64(ev->swap, tk__load64(p));
}

static int is_printable(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/*
 * traceprinter's check for printable text: up to max bytes or the first NUL; any byte
 * that is neither printable nor '\n' makes the whole text empty. Returns its length.
 */
static size_t checked_text(const unsigned char *s, size_t max)
{
	size_t n;
	for (n = 0; n < max && s[n] != '\0'; n++) {
		if (s[n] != '\n' && !is_printable(s[n]))
			return 0;
	}
	return n;
}

static inline void put_prefix(struct obuf *o, unsigned flags, const tk_kev_event *ev)
{
	char *d;

	if (flags & TK_KEV_PRINT_TIME_NS) {
		put_mem(o, "t:", 2);
		put_u64(o, ev->ns / 1000000000u);
		put_chr(o, '.');
		d = ob_room(o, 9);
		if (d != NULL) {
			uint64_t frac = ev->ns % 1000000000u;
			int i;
			for (i = 8; i >= 0; i--) {
				d[i] = (char)('0' + frac % 10);
				frac /= 10;
			}
			o->len += 9;
		}
	} else if (flags & TK_KEV_PRINT_TIME_CYCLES) {
		put_mem(o, "t:0x", 4);
		put_hex16(o, ev->clk);
	} else {
		put_mem(o, "t:0x", 4);
		put_hex8(o, ev->time);
	}
	put_mem(o, " CPU:", 5);
	put_2d(o, _NTO_TRACE_GETCPU(ev->header));
	put_chr(o, ' ');
}

static void put_arg_name(struct obuf *o, unsigned flags, const char *name)
{
	if (flags & TK_KEV_PRINT_NO_NEWLINES) {
		put_chr(o, ' ');
		put_str(o, name);
		put_chr(o, ':');
	} else {
		size_t n = strlen(name);
		put_chr(o, '\n');
		if (n < 26) {
			char *d = ob_room(o, 26 - n);
			if (d != NULL) {
				memset(d, ' ', 26 - n);
				o->len += 26 - n;
			}
		}
		put_mem(o, name, n);
		put_chr(o, ':');
	}
}

/*
 * Prints one value of type t at byte offset c. Returns the bytes consumed, 0 if the
 * value does not fit in the payload (the caller stops), or -1 for 'N' (line finished).
 */
static int put_value(struct obuf *o, const tk_kev_event *ev, char t, size_t c, size_t nbytes)
{
	const unsigned char *p = (const unsigned char *)ev->data;

	switch (t) {
	case 'N': {
		size_t n = checked_text(p + c, nbytes - c);
		put_mem(o, (const char *)p + c, n);
		put_chr(o, '\n');
		return -1;
	}
	case 'D':
		if (c + 4 > nbytes)
			return 0;
		put_d32(o, word_at(ev, c));
		return 4;
	case 'H':
		if (c + 4 > nbytes)
			return 0;
		put_mem(o, "0x", 2);
		put_hex8(o, word_at(ev, c));
		return 4;
	case 'P':
		if (c + 4 > nbytes)
			return 0;
		put_hex(o, word_at(ev, c));
		return 4;
	case 'E':
		if (c + 8 > nbytes)
			return 0;
		put_d64(o, dword_at(ev, c));
		return 8;
	case 'X':
		if (c + 8 > nbytes)
			return 0;
		put_mem(o, "0x", 2);
		put_hex(o, dword_at(ev, c));
		return 8;
	default:
		return 0;
	}
}

/* Payload bytes an argument type needs (N needs at least its NUL). */
static size_t arg_size(char t)
{
	return t == 'E' || t == 'X' ? 8 : t == 'N' ? 1 : 4;
}

/* The generic argument printer: traceprinter's trace_print(). */
static void print_args(struct obuf *o, unsigned flags, const tk_kev_event *ev, const char *cls_label,
		       const char *ev_label, const char *const *args, int force_wide)
{
	const unsigned char *p = (const unsigned char *)ev->data;
	size_t nbytes = (size_t)ev->len * 4;
	size_t c = 0;
	const char *const *a;

	put_str(o, cls_label);
	put_chr(o, ':');
	put_str(o, ev_label);

	if (ev->len == 2 && !force_wide) {
		for (a = args; *a != NULL && c < nbytes; a++) {
			const char *spec = *a;
			int used;
			if (spec[0] != 'f' && spec[0] != 'F')
				continue; /* wide mode only */
			if (c + arg_size(spec[1]) > nbytes)
				break; /* QNX read past the payload here; we stop */
			put_chr(o, ' ');
			put_str(o, spec + 2);
			put_chr(o, ':');
			if (spec[1] == 'S' || spec[1] == 's') {
				size_t n;
				if (c + 4 > nbytes)
					break;
				n = checked_text(p + c, 4);
				put_chr(o, '"');
				put_mem(o, (const char *)p + c, n);
				put_mem(o, "\" (0x", 5);
				put_hex8(o, mem_word_at(ev, c));
				put_chr(o, ')');
				c += 4;
				continue;
			}
			used = put_value(o, ev, spec[1], c, nbytes);
			if (used < 0)
				return;
			if (used == 0)
				break;
			c += (size_t)used;
		}
		put_chr(o, '\n');
		return;
	}

	/* Wide: every argument; string pieces accumulate until the next non-'s' argument. */
	{
		char text[256];
		size_t text_len = 0;   /* length of the string so far */
		int text_open = 0;     /* a string is being accumulated */
		int text_ended = 0;    /* a short piece ended the string */
		char hex[512];
		size_t hex_len = 0;

		for (a = args; *a != NULL && c < nbytes; a++) {
			const char *spec = *a;
			char t;
			int used;

			if (spec[0] == 'F')
				continue; /* fast mode only */
			if (spec[0] == 'f')
				spec++;
			t = spec[0];
			if (t != 's') {
				if (text_open) {
					put_chr(o, '"');
					put_mem(o, text, text_len);
					put_mem(o, "\" (0x", 5);
					put_mem(o, hex, hex_len);
					put_chr(o, ')');
					text_open = 0;
				}
				put_arg_name(o, flags, spec + 1);
			}
			if (t == 'S' || t == 's') {
				size_t n;
				if (c + 4 > nbytes)
					break;
				if (t == 'S' || !text_open) {
					text_len = 0;
					hex_len = 0;
					text_ended = 0;
					text_open = 1;
				} else if (hex_len + 11 <= sizeof(hex)) {
					memcpy(hex + hex_len, " 0x", 3);
					hex_len += 3;
				}
				if (hex_len + 8 <= sizeof(hex)) {
					tk__store64(hex + hex_len, hex8_chars(mem_word_at(ev, c)));
					hex_len += 8;
				}
				n = checked_text(p + c, 4);
				if (!text_ended && text_len + n <= sizeof(text)) {
					memcpy(text + text_len, p + c, n);
					text_len += n;
				}
				if (n < 4)
					text_ended = 1;
				c += 4;
				continue;
			}
			used = put_value(o, ev, t, c, nbytes);
			if (used < 0)
				return;
			if (used == 0)
				break;
			c += (size_t)used;
		}
		if (text_open) {
			put_chr(o, '"');
			put_mem(o, text, text_len);
			put_mem(o, "\" (0x", 5);
			put_mem(o, hex, hex_len);
			put_mem(o, ")\n", 2);
		} else {
			put_chr(o, '\n');
		}
	}
}

/* A line for events without a known format: every payload word. */
static void print_generic(struct obuf *o, const tk_kev_event *ev, const char *label)
{
	unsigned cls = TK_KEV_CLASS(ev->header), i;

	if (label != NULL) {
		put_str(o, label);
	} else if (cls < 12) {
		put_str(o, tk__class_label(cls));
	} else {
		char tmp[16];
		int n = snprintf(tmp, sizeof(tmp), "CLASS%-3u", cls);
		put_mem(o, tmp, (size_t)n);
	}
	put_mem(o, ":EVENT:", 7);
	put_u64(o, TK_KEV_CODE(ev->header));
	for (i = 0; i < ev->len; i++) {
		put_mem(o, i == 0 ? ", d" : " d", i == 0 ? 3 : 2);
		put_u64(o, i);
		put_mem(o, ":0x", 3);
		put_hex8(o, word(ev, i));
	}
	put_chr(o, '\n');
}

static int print_kercall(struct obuf *o, unsigned flags, const tk_kev_event *ev)
{
	unsigned code = TK_KEV_CODE(ev->header);
	char label[64];
	const struct tk__kercall_desc *k;

	if (code >= 2 * _TRACE_MAX_KER_CALL_NUM && code < 3 * _TRACE_MAX_KER_CALL_NUM) {
		unsigned n = code - 2 * _TRACE_MAX_KER_CALL_NUM;
		if (n >= tk__n_kercalls)
			return -1;
		put_mem(o, "INT_CALL:KER_", 13);
		put_str(o, tk__kercalls[n].name);
		put_chr(o, '/');
		put_u64(o, n);
		put_chr(o, '\n');
		return 0;
	}
	if (code >= 2 * _TRACE_MAX_KER_CALL_NUM)
		return -1;
	if (code >= _TRACE_MAX_KER_CALL_NUM) {
		unsigned n = code - _TRACE_MAX_KER_CALL_NUM;
		if (n >= tk__n_kercalls)
			return -1;
		k = &tk__kercalls[n];
		snprintf(label, sizeof(label), "%s/%02u", k->exit_name ? k->exit_name : k->name, n);
		if (ev->len >= 2 && word(ev, 0) == 0xffffffffu) {
			put_mem(o, "KER_EXIT:", 9);
			put_str(o, label);
			put_mem(o, " ret_val:-1, errno:", 19);
			put_d32(o, word(ev, 1));
			put_chr(o, '\n');
			return 0;
		}
		print_args(o, flags, ev, "KER_EXIT", label, k->exit_args, 0);
		return 0;
	}
	if (code >= tk__n_kercalls)
		return -1;
	k = &tk__kercalls[code];
	snprintf(label, sizeof(label), "%s/%02u", k->name, code);
	print_args(o, flags, ev, "KER_CALL", label, k->enter_args, 0);
	return 0;
}

static const char *const args_pid_tid[] = { "fDpid", "fDtid", NULL };

static int print_pr_th(struct obuf *o, unsigned flags, const tk_kev_event *ev)
{
	static const char *const create_args[] = { "fDpid", "fDtid", "Dpolicy", NULL };
	static const char *const ppid_pid[] = { "fDppid", "fDpid", NULL };
	static const char *const ppid_pid_name[] = { "fDppid", "fDpid", "Nname", NULL };
	static const char *const pid_tid_name[] = { "fDpid", "fDtid", "Nname", NULL };
	unsigned code = TK_KEV_CODE(ev->header);

	if (code < tk__n_thread_states) {
		put_mem(o, "THREAD  :", 9);
		put_str(o, tk__thread_states[code]);
		put_mem(o, " pid:", 5);
		put_d32(o, word(ev, 0));
		put_mem(o, " tid:", 5);
		put_d32(o, word(ev, 1));
		put_chr(o, ' ');
		if (ev->len > 2) {
			put_mem(o, "priority:", 9);
			put_d32(o, word(ev, 2));
			put_mem(o, " policy:", 8);
			put_d32(o, word(ev, 3));
			if (ev->len > 4) {
				put_mem(o, " partition:", 11);
				put_d32(o, word(ev, 4));
			}
			if (ev->len > 5) {
				put_mem(o, " sched_flags:0x", 15);
				put_hex8(o, word(ev, 5));
			}
		}
		put_chr(o, '\n');
		return 0;
	}
	if (code >= _TRACE_MAX_TH_STATE_NUM && code - _TRACE_MAX_TH_STATE_NUM < tk__n_thread_states) {
		print_args(o, flags, ev, "VTHREAD ", tk__thread_states[code - _TRACE_MAX_TH_STATE_NUM],
			   args_pid_tid, 0);
		return 0;
	}
	switch (code) {
	case _TRACE_PR_TH_CREATE_T:
		print_args(o, flags, ev, "THREAD  ", "THCREATE     ", create_args, 0);
		return 0;
	case _TRACE_PR_TH_DESTROY_T:
		print_args(o, flags, ev, "THREAD  ", "THDESTROY    ", args_pid_tid, 0);
		return 0;
	case _TRACE_PR_TH_CREATE_VT:
		print_args(o, flags, ev, "VTHREAD ", "VTHCREATE    ", args_pid_tid, 0);
		return 0;
	case _TRACE_PR_TH_DESTROY_VT:
		print_args(o, flags, ev, "VTHREAD ", "VTHDESTROY   ", args_pid_tid, 0);
		return 0;
	case _TRACE_PR_TH_CREATE_P:
		print_args(o, flags, ev, "PROCESS ", "PROCCREATE   ", ppid_pid, 0);
		return 0;
	case _TRACE_PR_TH_DESTROY_P:
		print_args(o, flags, ev, "PROCESS ", "PROCDESTROY  ", ppid_pid, 0);
		return 0;
	case _TRACE_PR_TH_CREATE_P_NAME:
		print_args(o, flags, ev, "PROCESS ", "PROCCREATE_NAME", ppid_pid_name, 0);
		return 0;
	case _TRACE_PR_TH_DESTROY_P_NAME:
		print_args(o, flags, ev, "PROCESS ", "PROCDESTROY_NAME", ppid_pid_name, 0);
		return 0;
	case _TRACE_PR_TH_NAME_T:
		print_args(o, flags, ev, "PROCESS ", "PROCTHREAD_NAME", pid_tid_name, 0);
		return 0;
	default:
		return -1;
	}
}

/* QNX's struct sigevent (32-bit): notify, signo/coid, value, code and priority. */
static void put_sigevent(struct obuf *o, const tk_kev_event *ev)
{
	uint32_t notify = ev->len > 1 ? word(ev, 1) : 0;
	uint32_t signo = ev->len > 2 ? word(ev, 2) : 0;
	uint32_t value = ev->len > 3 ? word(ev, 3) : 0;
	uint32_t cp = ev->len > 4 ? word(ev, 4) : 0;
	/* short sigev_code, short sigev_priority share one word in the target's order */
	int big = ev->swap != TK__HOST_BIG_ENDIAN;
	uint32_t code = (uint32_t)(int32_t)(int16_t)(big ? cp >> 16 : cp & 0xffff);
	int32_t prio = (int16_t)(big ? cp & 0xffff : cp >> 16);

	switch (notify) {
	case 0:
		put_str(o, "NONE");
		break;
	case 1:
		put_str(o, "SIGNAL ");
		put_u64(o, signo);
		break;
	case 2:
	case 3:
		put_str(o, notify == 2 ? "SIGNAL_CODE " : "SIGNAL_THREAD ");
		put_u64(o, signo);
		put_chr(o, ' ');
		put_althex(o, code);
		put_chr(o, ':');
		put_althex(o, value);
		break;
	case 4:
		put_str(o, "PULSE ");
		put_althex(o, signo);
		put_chr(o, ':');
		put_d32(o, (uint32_t)prio);
		put_chr(o, ' ');
		put_althex(o, code);
		put_chr(o, ':');
		put_althex(o, value);
		break;
	case 5:
		put_str(o, "UNBLOCK");
		break;
	case 6:
		put_str(o, "INTR");
		break;
	case 7:
		put_str(o, "THREAD ");
		put_hex(o, code);
		put_chr(o, ':');
		put_hex(o, value);
		break;
	default:
		put_str(o, "UNKNOWN(");
		put_althex(o, notify);
		put_chr(o, ')');
		break;
	}
}

static int print_int(struct obuf *o, const tk_kev_event *ev)
{
	switch (TK_KEV_CODE(ev->header)) {
	case _TRACE_INT_ENTRY:
		put_mem(o, "INT_ENTR:0x", 11);
		put_hex8(o, word(ev, 0));
		put_mem(o, " (", 2);
		put_d32(o, word(ev, 0));
		put_mem(o, ")       IP:0x", 13);
		put_hex8(o, word(ev, 1));
		put_chr(o, '\n');
		return 0;
	case _TRACE_INT_EXIT:
		put_mem(o, "INT_EXIT:0x", 11);
		put_hex8(o, word(ev, 0));
		put_mem(o, " (", 2);
		put_d32(o, word(ev, 0));
		put_mem(o, ") inkernel:0x", 13);
		put_hex8(o, word(ev, 1));
		put_chr(o, '\n');
		return 0;
	case _TRACE_INT_HANDLER_ENTRY:
		if (ev->len < 4)
			return -1;
		put_mem(o, "INT_HANDLER_ENTR:0x", 19);
		put_hex8(o, word(ev, 1));
		put_mem(o, " (", 2);
		put_d32(o, word(ev, 1));
		put_mem(o, ")       PID:", 12);
		put_d32(o, word(ev, 0));
		put_mem(o, " IP:0x", 6);
		put_hex8(o, word(ev, 2));
		put_mem(o, " AREA:0x", 8);
		put_hex8(o, word(ev, 3));
		put_chr(o, '\n');
		return 0;
	case _TRACE_INT_HANDLER_EXIT:
		put_mem(o, "INT_HANDLER_EXIT:0x", 19);
		put_hex8(o, word(ev, 0));
		put_mem(o, " (", 2);
		put_d32(o, word(ev, 0));
		put_mem(o, ") SIGEVENT:", 11);
		put_sigevent(o, ev);
		put_chr(o, '\n');
		return 0;
	default:
		return -1;
	}
}

/*
 * A user combine event is a string when it is printable text, NUL, and zero padding. QNX
 * and tracekit's writer put a string of 8 bytes or less in one simple slot, which prints
 * as d0/d1 (it cannot be told from two words); older tracekit files and the in-process
 * recorder pad such a string to a CB + all-zero CE, accepted here as a string.
 */
static size_t user_string_len(const tk_kev_event *ev)
{
	const unsigned char *p = (const unsigned char *)ev->data;
	size_t nbytes = (size_t)ev->len * 4, n, i;

	for (n = 0; n < nbytes && p[n] != '\0'; n++) {
		if (p[n] != '\n' && !is_printable(p[n]))
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

static int print_user(struct obuf *o, unsigned flags, const tk_kev_event *ev)
{
	unsigned code = TK_KEV_CODE(ev->header);
	size_t n;
	unsigned i;

	put_mem(o, "USREVENT:EVENT:", 15);
	put_u64(o, code);
	if (ev->len <= 2) {
		put_mem(o, ", d0:0x", 7);
		put_hex8(o, ev->len > 0 ? word(ev, 0) : 0);
		put_mem(o, " d1:0x", 6);
		put_hex8(o, ev->len > 1 ? word(ev, 1) : 0);
		put_chr(o, '\n');
		return 0;
	}
	n = user_string_len(ev);
	if (n == (size_t)-1 && (flags & TK_KEV_PRINT_QNX_STRICT)) {
		/* 1.02: the payload as a string, last byte forced to NUL, "" if unprintable */
		n = checked_text((const unsigned char *)ev->data, (size_t)ev->len * 4 - 1);
	}
	if (n != (size_t)-1) {
		put_mem(o, " STR:\"", 6);
		put_mem(o, (const char *)ev->data, n);
		put_mem(o, "\"\n", 2);
		return 0;
	}
	for (i = 0; i < ev->len; i++) {
		put_mem(o, i == 0 ? ", d" : " d", i == 0 ? 3 : 2);
		put_u64(o, i);
		put_mem(o, ":0x", 3);
		put_hex8(o, word(ev, i));
	}
	put_chr(o, '\n');
	return 0;
}

static int print_control(struct obuf *o, unsigned flags, const tk_kev_event *ev)
{
	static const char *const time_args[] = { "fHmsb", "fHlsb(offset)", NULL };

	switch (TK_KEV_CODE(ev->header)) {
	case _TRACE_CONTROL_TIME:
		print_args(o, flags, ev, "CONTROL ", "TIME", time_args, 0);
		return 0;
	case _TRACE_CONTROL_BUFFER:
		put_mem(o, "CONTROL: BUFFER sequence = ", 27);
		put_d32(o, word(ev, 0) & 0x7ff);
		put_mem(o, ", num_events = ", 15);
		put_d32(o, word(ev, 1));
		put_chr(o, '\n');
		return 0;
	case _TRACE_CONTROL_BUFFER_END:
		if (flags & TK_KEV_PRINT_QNX_STRICT)
			return -1;
		put_str(o, "CONTROL :BUFFER_END\n");
		return 0;
	case _TRACE_CONTROL_DROPPED:
		if (flags & TK_KEV_PRINT_QNX_STRICT)
			return -1;
		put_str(o, "CONTROL :DROPPED events:");
		put_u64(o, (uint64_t)word(ev, 0) | (ev->len > 1 ? (uint64_t)word(ev, 1) << 32 : 0));
		put_chr(o, '\n');
		return 0;
	default:
		return -1;
	}
}

static int print_system(struct obuf *o, unsigned flags, const tk_kev_event *ev)
{
	unsigned code = TK_KEV_CODE(ev->header);
	const struct tk__event_desc *d;

	if (code >= tk__n_system_events || tk__system_events[code].label == NULL)
		return -1;
	d = &tk__system_events[code];
	if (!(flags & TK_KEV_PRINT_QNX_STRICT)) {
		/* tracekit's 64-bit forms: wide function hooks carry two 64-bit addresses, and
		 * an ADDRESS above 4 GiB has its upper half in the second word */
		static const char *const wide_fn[] = { "Xthisfn", "Xcall_site", NULL };
		static const char *const addr64[] = { "fXaddr", NULL };
		if ((code == _NTO_TRACE_SYS_FUNC_ENTER || code == _NTO_TRACE_SYS_FUNC_EXIT) && ev->len >= 4) {
			print_args(o, flags, ev, "SYSTEM  ", d->label, wide_fn, 0);
			return 0;
		}
		if (code == _NTO_TRACE_SYS_ADDRESS && ev->len == 2 && word(ev, 1) != 0) {
			print_args(o, flags, ev, "SYSTEM  ", d->label, addr64, 0);
			return 0;
		}
	}
	print_args(o, flags, ev, "SYSTEM  ", d->label, d->args, code == _NTO_TRACE_SYS_APS_NAME);
	return 0;
}

static int print_comm(struct obuf *o, unsigned flags, const tk_kev_event *ev)
{
	unsigned code = TK_KEV_CODE(ev->header);

	if (code >= tk__n_comm_events)
		return -1;
	print_args(o, flags, ev, "COMM    ", tk__comm_events[code].label, tk__comm_events[code].args, 0);
	return 0;
}

/* Formats ev into o. Returns 0, or 1 when nothing is printed (strict mode, unknown). */
static int format_event(struct obuf *o, unsigned flags, const tk_kev_event *ev)
{
	size_t start = o->len;
	int rc;

	put_prefix(o, flags, ev);
	switch (TK_KEV_CLASS(ev->header)) {
	case 1:
		rc = print_control(o, flags, ev);
		break;
	case 2:
		rc = print_kercall(o, flags, ev);
		break;
	case 3:
		rc = print_int(o, ev);
		break;
	case 4:
		rc = print_pr_th(o, flags, ev);
		break;
	case 5:
		rc = print_system(o, flags, ev);
		break;
	case 6:
		rc = print_user(o, flags, ev);
		break;
	case 7:
		rc = print_comm(o, flags, ev);
		break;
	default:
		rc = -1;
		break;
	}
	if (rc != 0) {
		/* Discard any partial text and print the event generically. */
		o->len = start;
		if (flags & TK_KEV_PRINT_QNX_STRICT)
			return 1;
		put_prefix(o, flags, ev);
		print_generic(o, ev, NULL);
	}
	return 0;
}

/* Lines are collected and written to the stream in blocks of about this size. */
#define PRINTER_BLOCK (256u << 10)

int tk_kev_printer_new(tk_kev_printer **out, FILE *stream, unsigned flags)
{
	tk_kev_printer *p;

	if (out == NULL || stream == NULL)
		return TK_EINVAL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return TK_ENOMEM;
	p->stream = stream;
	p->flags = flags;
	if (ob_grow(&p->ob, PRINTER_BLOCK + 4096) != 0) {
		free(p);
		return TK_ENOMEM;
	}
	*out = p;
	return TK_OK;
}

int tk_kev_printer_flush(tk_kev_printer *p)
{
	size_t len;

	if (p == NULL)
		return TK_EINVAL;
	len = p->ob.len;
	p->ob.len = 0;
	if (len > 0 && fwrite_unlocked(p->ob.p, 1, len, p->stream) != len)
		return TK_EIO;
	return TK_OK;
}

void tk_kev_printer_free(tk_kev_printer *p)
{
	if (p == NULL)
		return;
	tk_kev_printer_flush(p);
	free(p->ob.p);
	free(p);
}

int tk_kev_print_event(tk_kev_printer *p, const tk_kev_event *ev)
{
	if (p == NULL || ev == NULL || (ev->len > 0 && ev->data == NULL))
		return TK_EINVAL;
	format_event(&p->ob, p->flags, ev);
	if (p->ob.oom) {
		p->ob.oom = 0;
		return TK_ENOMEM;
	}
	if (p->ob.len >= PRINTER_BLOCK)
		return tk_kev_printer_flush(p);
	return TK_OK;
}

size_t tk_kev_format_event(char *buf, size_t cap, unsigned flags, const tk_kev_event *ev)
{
	struct obuf o = { 0 };
	size_t len;

	if (ev == NULL || (ev->len > 0 && ev->data == NULL)) {
		if (buf != NULL && cap > 0)
			buf[0] = '\0';
		return 0;
	}
	format_event(&o, flags, ev);
	len = o.len;
	if (buf != NULL && cap > 0) {
		size_t n = len < cap - 1 ? len : cap - 1;
		if (o.p != NULL)
			memcpy(buf, o.p, n);
		buf[n] = '\0';
	}
	free(o.p);
	return len;
}
