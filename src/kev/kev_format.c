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
#include "kev/kev_decode_impl.h"
#include "kev/kev_names.h"
#include "tracekit/kev.h"

/* What the printer lays out comes from the decoder (kev_decode.c): the values and which
 * arguments exist; the labels, padding and line shapes are traceprinter's. */

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
		/* the common case, "t:0x%08x CPU:%02d ", with one bounds check */
		unsigned cpu = _NTO_TRACE_GETCPU(ev->header);

		d = ob_room(o, 20);
		if (d == NULL)
			return;
		memcpy(d, "t:0x", 4);
		tk__store64(d + 4, hex8_chars(ev->time));
		memcpy(d + 12, " CPU:", 5);
		d[17] = (char)('0' + (cpu / 10) % 10);
		d[18] = (char)('0' + cpu % 10);
		d[19] = ' ';
		o->len += 20;
		return;
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

/* Prints a number field the way traceprinter prints its argument type. */
static inline void put_number(struct obuf *o, const tk_kev_field *f)
{
	switch (f->fmt) {
	case 'D':
		put_d32(o, (uint32_t)f->v.u);
		break;
	case 'H':
		put_mem(o, "0x", 2);
		put_hex8(o, (uint32_t)f->v.u);
		break;
	case 'P':
		put_hex(o, f->v.u);
		break;
	case 'E':
		put_d64(o, f->v.u);
		break;
	case 'X':
		put_mem(o, "0x", 2);
		put_hex(o, f->v.u);
		break;
	default:
		break;
	}
}

/* 4 message or string bytes as the word QNX shows for them (see the head comment). */
static inline uint32_t mem_word(const char *p)
{
	return tk__le32((const unsigned char *)p);
}

/*
 * A string of 4-byte pieces, wide mode: "text" (0x<piece> 0x<piece>...). The text stops at
 * the first piece shorter than 4 printable bytes; both parts are bounded as in 1.02.
 */
static void put_pieces(struct obuf *o, const tk_kev_field *f)
{
	char text[256], hex[512];
	size_t text_len = 0, hex_len = 0, off;
	int text_ended = 0;

	for (off = 0; off + 4 <= f->len; off += 4) {
		const unsigned char *piece = (const unsigned char *)f->str + off;
		size_t n;
		if (off > 0 && hex_len + 11 <= sizeof(hex)) {
			memcpy(hex + hex_len, " 0x", 3);
			hex_len += 3;
		}
		if (hex_len + 8 <= sizeof(hex)) {
			tk__store64(hex + hex_len, hex8_chars(mem_word((const char *)piece)));
			hex_len += 8;
		}
		n = checked_text(piece, 4);
		if (!text_ended && text_len + n <= sizeof(text)) {
			memcpy(text + text_len, piece, n);
			text_len += n;
		}
		if (n < 4)
			text_ended = 1;
	}
	put_chr(o, '"');
	put_mem(o, text, text_len);
	put_mem(o, "\" (0x", 5);
	put_mem(o, hex, hex_len);
	put_chr(o, ')');
}

/* The generic argument printer (traceprinter's trace_print()), from the decoded fields. */
static void print_args(struct obuf *o, unsigned flags, const tk_kev_decoded *d, const char *cls_label,
		       const char *ev_label)
{
	unsigned i;

	put_str(o, cls_label);
	put_chr(o, ':');
	put_str(o, ev_label);

	if (!(d->flags & TK_KEV_DEC_WIDE)) {
		for (i = 0; i < d->n_fields; i++) {
			const tk_kev_field *f = &d->fields[i];
			put_chr(o, ' ');
			put_str(o, f->name);
			put_chr(o, ':');
			if (f->type == TK_KEV_FIELD_BYTES) {
				put_chr(o, '"');
				put_mem(o, f->str, checked_text((const unsigned char *)f->str, 4));
				put_mem(o, "\" (0x", 5);
				put_hex8(o, mem_word(f->str));
				put_chr(o, ')');
			} else if (f->type == TK_KEV_FIELD_STR) {
				put_mem(o, f->str, checked_text((const unsigned char *)f->str, f->len));
				break;
			} else {
				put_number(o, f);
			}
		}
		put_chr(o, '\n');
		return;
	}

	/* Wide: one argument per line; a string's pieces were merged into one field. */
	for (i = 0; i < d->n_fields; i++) {
		const tk_kev_field *f = &d->fields[i];
		if (f->fmt != 's')
			put_arg_name(o, flags, f->name);
		switch (f->type) {
		case TK_KEV_FIELD_BYTES:
			put_pieces(o, f);
			break;
		case TK_KEV_FIELD_STR:
			put_mem(o, f->str, checked_text((const unsigned char *)f->str, f->len));
			break;
		case TK_KEV_FIELD_NONE:
			break;
		default:
			put_number(o, f);
			break;
		}
	}
	put_chr(o, '\n');
}

/* A line for events without a known format: every payload word. */
static void print_generic(struct obuf *o, const tk_kev_event *ev)
{
	unsigned cls = TK_KEV_CLASS(ev->header), i;

	if (cls < 12) {
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

/* Value of field i, or 0 when the payload did not have it. */
static inline uint64_t fval(const tk_kev_decoded *d, unsigned i)
{
	return i < d->n_fields ? d->fields[i].v.u : 0;
}

/* A Linux system call: "KER_CALL:write/1" and its arguments (decode_linux_kercall). */
static void print_linux_kercall(struct obuf *o, unsigned flags, const tk_kev_decoded *d)
{
	char label[64];

	snprintf(label, sizeof(label), "%s/%d", d->event_name, d->number);
	print_args(o, flags, d, (d->code & 0x80u) ? "KER_EXIT" : "KER_CALL", label);
}

static void print_kercall(struct obuf *o, unsigned flags, const tk_kev_decoded *d)
{
	unsigned code = d->code, n = (unsigned)d->number;
	const struct tk__kercall_desc *k = &tk__kercalls[n];
	const char *name;
	char label[64];
	size_t len;

	if (code >= 2 * _TRACE_MAX_KER_CALL_NUM) {
		put_mem(o, "INT_CALL:KER_", 13);
		put_str(o, k->name);
		put_chr(o, '/');
		put_u64(o, n);
		put_chr(o, '\n');
		return;
	}
	/* "<name>/%02u" */
	name = code >= _TRACE_MAX_KER_CALL_NUM && k->exit_name ? k->exit_name : k->name;
	len = strlen(name);
	if (len > sizeof(label) - 8)
		len = sizeof(label) - 8;
	memcpy(label, name, len);
	label[len++] = '/';
	if (n >= 100)
		label[len++] = (char)('0' + n / 100);
	label[len++] = (char)('0' + (n / 10) % 10);
	label[len++] = (char)('0' + n % 10);
	label[len] = '\0';
	if (code < _TRACE_MAX_KER_CALL_NUM) {
		print_args(o, flags, d, "KER_CALL", label);
		return;
	}
	if (d->flags & TK_KEV_DEC_FAILED) {
		put_mem(o, "KER_EXIT:", 9);
		put_mem(o, label, len);
		put_mem(o, " ret_val:-1, errno:", 19);
		put_d32(o, (uint32_t)fval(d, 1));
		put_chr(o, '\n');
		return;
	}
	print_args(o, flags, d, "KER_EXIT", label);
}

static int print_pr_th(struct obuf *o, unsigned flags, const tk_kev_decoded *d)
{
	unsigned code = d->code;
	const char *cls = "PROCESS ", *label;

	if (code < tk__n_thread_states) {
		put_mem(o, "THREAD  :", 9);
		put_str(o, tk__thread_states[code]);
		put_mem(o, " pid:", 5);
		put_d32(o, (uint32_t)fval(d, 0));
		put_mem(o, " tid:", 5);
		put_d32(o, (uint32_t)fval(d, 1));
		put_chr(o, ' ');
		if (d->n_fields > 2) {
			put_mem(o, "priority:", 9);
			put_d32(o, (uint32_t)fval(d, 2));
			put_mem(o, " policy:", 8);
			put_d32(o, (uint32_t)fval(d, 3));
			if (d->n_fields > 4) {
				put_mem(o, " partition:", 11);
				put_d32(o, (uint32_t)fval(d, 4));
			}
			if (d->n_fields > 5) {
				put_mem(o, " sched_flags:0x", 15);
				put_hex8(o, (uint32_t)fval(d, 5));
			}
		}
		put_chr(o, '\n');
		return 0;
	}
	if (code >= _TRACE_MAX_TH_STATE_NUM && code - _TRACE_MAX_TH_STATE_NUM < tk__n_thread_states) {
		print_args(o, flags, d, "VTHREAD ", tk__thread_states[code - _TRACE_MAX_TH_STATE_NUM]);
		return 0;
	}
	switch (code) {
	case _TRACE_PR_TH_CREATE_T:
		cls = "THREAD  ", label = "THCREATE     ";
		break;
	case _TRACE_PR_TH_DESTROY_T:
		cls = "THREAD  ", label = "THDESTROY    ";
		break;
	case _TRACE_PR_TH_CREATE_VT:
		cls = "VTHREAD ", label = "VTHCREATE    ";
		break;
	case _TRACE_PR_TH_DESTROY_VT:
		cls = "VTHREAD ", label = "VTHDESTROY   ";
		break;
	case _TRACE_PR_TH_CREATE_P:
		label = "PROCCREATE   ";
		break;
	case _TRACE_PR_TH_DESTROY_P:
		label = "PROCDESTROY  ";
		break;
	case _TRACE_PR_TH_CREATE_P_NAME:
		label = "PROCCREATE_NAME";
		break;
	case _TRACE_PR_TH_DESTROY_P_NAME:
		label = "PROCDESTROY_NAME";
		break;
	case _TRACE_PR_TH_NAME_T:
		label = "PROCTHREAD_NAME";
		break;
	default:
		return -1;
	}
	print_args(o, flags, d, cls, label);
	return 0;
}

/* QNX's struct sigevent, decoded: notify, signo/coid, value, code and priority. */
static void put_sigevent(struct obuf *o, const tk_kev_decoded *d)
{
	uint32_t notify = (uint32_t)fval(d, 1);
	uint32_t signo = (uint32_t)fval(d, 2);
	uint32_t value = (uint32_t)fval(d, 3);
	uint32_t code = (uint32_t)fval(d, 4);
	uint32_t prio = (uint32_t)fval(d, 5);

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
		put_d32(o, prio);
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

static int print_int(struct obuf *o, const tk_kev_decoded *d)
{
	switch (d->code) {
	case _TRACE_INT_ENTRY:
		put_mem(o, "INT_ENTR:0x", 11);
		put_hex8(o, (uint32_t)fval(d, 0));
		put_mem(o, " (", 2);
		put_d32(o, (uint32_t)fval(d, 0));
		put_mem(o, ")       IP:0x", 13);
		put_hex8(o, (uint32_t)fval(d, 1));
		put_chr(o, '\n');
		return 0;
	case _TRACE_INT_EXIT:
		put_mem(o, "INT_EXIT:0x", 11);
		put_hex8(o, (uint32_t)fval(d, 0));
		put_mem(o, " (", 2);
		put_d32(o, (uint32_t)fval(d, 0));
		put_mem(o, ") inkernel:0x", 13);
		put_hex8(o, (uint32_t)fval(d, 1));
		put_chr(o, '\n');
		return 0;
	case _TRACE_INT_HANDLER_ENTRY:
		put_mem(o, "INT_HANDLER_ENTR:0x", 19);
		put_hex8(o, (uint32_t)fval(d, 1));
		put_mem(o, " (", 2);
		put_d32(o, (uint32_t)fval(d, 1));
		put_mem(o, ")       PID:", 12);
		put_d32(o, (uint32_t)fval(d, 0));
		put_mem(o, " IP:0x", 6);
		put_hex8(o, (uint32_t)fval(d, 2));
		put_mem(o, " AREA:0x", 8);
		put_hex8(o, (uint32_t)fval(d, 3));
		put_chr(o, '\n');
		return 0;
	case _TRACE_INT_HANDLER_EXIT:
		put_mem(o, "INT_HANDLER_EXIT:0x", 19);
		put_hex8(o, (uint32_t)fval(d, 0));
		put_mem(o, " (", 2);
		put_d32(o, (uint32_t)fval(d, 0));
		put_mem(o, ") SIGEVENT:", 11);
		put_sigevent(o, d);
		put_chr(o, '\n');
		return 0;
	default:
		return -1;
	}
}

static void print_user(struct obuf *o, const tk_kev_event *ev, const tk_kev_decoded *d)
{
	const tk_kev_field *f = &d->fields[0];
	unsigned i;

	if (!(d->flags & TK_KEV_DEC_WIDE)) { /* fields d0 and d1, always; one bounds check */
		/* "USREVENT:EVENT:%u, d0:0x%08x d1:0x%08x\n", the code below 1024 */
		unsigned code = d->code & 1023, n = 15;
		char *p = ob_room(o, 15 + 4 + 7 + 8 + 6 + 8 + 1);

		if (p == NULL)
			return;
		memcpy(p, "USREVENT:EVENT:", 15);
		if (code >= 1000)
			p[n++] = '1';
		if (code >= 100)
			p[n++] = (char)('0' + (code / 100) % 10);
		if (code >= 10)
			p[n++] = (char)('0' + (code / 10) % 10);
		p[n++] = (char)('0' + code % 10);
		memcpy(p + n, ", d0:0x", 7);
		tk__store64(p + n + 7, hex8_chars((uint32_t)d->fields[0].v.u));
		memcpy(p + n + 15, " d1:0x", 6);
		tk__store64(p + n + 21, hex8_chars((uint32_t)d->fields[1].v.u));
		p[n + 29] = '\n';
		o->len += n + 30;
		return;
	}
	put_mem(o, "USREVENT:EVENT:", 15);
	put_u64(o, d->code);
	if (f->type == TK_KEV_FIELD_STR) {
		put_mem(o, " STR:\"", 6);
		put_mem(o, f->str, checked_text((const unsigned char *)f->str, f->len));
		put_mem(o, "\"\n", 2);
		return;
	}
	for (i = 0; i < ev->len; i++) {
		put_mem(o, i == 0 ? ", d" : " d", i == 0 ? 3 : 2);
		put_u64(o, i);
		put_mem(o, ":0x", 3);
		put_hex8(o, word(ev, i));
	}
	put_chr(o, '\n');
}

static int print_control(struct obuf *o, unsigned flags, const tk_kev_decoded *d)
{
	switch (d->code) {
	case _TRACE_CONTROL_TIME:
		print_args(o, flags, d, "CONTROL ", "TIME");
		return 0;
	case _TRACE_CONTROL_BUFFER:
		put_mem(o, "CONTROL: BUFFER sequence = ", 27);
		put_d32(o, (uint32_t)fval(d, 0));
		put_mem(o, ", num_events = ", 15);
		put_d32(o, (uint32_t)fval(d, 1));
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
		put_u64(o, fval(d, 0));
		put_chr(o, '\n');
		return 0;
	default:
		return -1;
	}
}

/* Formats ev into o. Returns 0, or 1 when nothing is printed (strict mode, unknown). */
static int format_event(struct obuf *o, unsigned flags, const tk_kev_event *ev)
{
	size_t start = o->len;
	tk_kev_decoded d;
	int rc = 0;

	kev_decode_core(ev, ((flags & TK_KEV_PRINT_QNX_STRICT) ? TK_KEV_DECODE_QNX_STRICT : 0) |
				    (flags & TK_KEV_DECODE_LINUX_MASK),
			&d);
	put_prefix(o, flags, ev);
	if (d.flags & TK_KEV_DEC_UNKNOWN) {
		rc = -1;
	} else {
		switch (d.cls) {
		case 1:
			rc = print_control(o, flags, &d);
			break;
		case 2:
			if (flags & TK_KEV_DECODE_LINUX_MASK)
				print_linux_kercall(o, flags, &d);
			else
				print_kercall(o, flags, &d);
			break;
		case 3:
			rc = print_int(o, &d);
			break;
		case 4:
			rc = print_pr_th(o, flags, &d);
			break;
		case 5:
			print_args(o, flags, &d, "SYSTEM  ", tk__system_events[d.code].label);
			break;
		case 6:
			print_user(o, ev, &d);
			break;
		case 7:
			print_args(o, flags, &d, "COMM    ", tk__comm_events[d.code].label);
			break;
		default:
			rc = -1;
			break;
		}
	}
	if (rc != 0) {
		/* Discard any partial text and print the event generically. */
		o->len = start;
		if (flags & TK_KEV_PRINT_QNX_STRICT)
			return 1;
		put_prefix(o, flags, ev);
		print_generic(o, ev);
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

int tk_kev_printer_set_flags(tk_kev_printer *p, unsigned flags)
{
	if (p == NULL)
		return TK_EINVAL;
	p->flags = flags;
	return TK_OK;
}

unsigned tk_kev_printer_flags(const tk_kev_printer *p)
{
	return p != NULL ? p->flags : 0;
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
