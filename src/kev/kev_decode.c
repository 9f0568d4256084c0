/* SPDX-License-Identifier: MIT */
/*
 * The decoded event model: what each class of event means, as named and typed fields.
 *
 * The per-event argument lists are those of kev_names.c (QNX 6.4's traceprinter and the
 * SAT appendix): a simple event gets the fast-mode arguments ('f' and 'F'), a combine
 * event the wide-mode ones (unmarked and 'f'); the special layouts (thread states,
 * interrupts, CONTROL events, user events, failed kernel calls) are decoded here too, so
 * that kev_format.c only lays the fields out as text. Nothing is read past the payload.
 */
#include "kev/kev_decode_impl.h"

int tk_kev_decode(const tk_kev_event *ev, unsigned flags, tk_kev_decoded *d)
{
	if (ev == NULL || d == NULL || (ev->len > 0 && ev->data == NULL))
		return TK_EINVAL;
	d->cpu = _NTO_TRACE_GETCPU(ev->header);
	d->cls_desc = tk__kev_class_of(ev->header);
	/* Linux system calls: bit 7 is the exit, whatever the call's number (the parts of a QNX
	 * class 2 are code ranges, which calls from 128 on would leave) */
	if ((flags & TK_KEV_DECODE_LINUX_MASK) && TK_KEV_CLASS(ev->header) == 2)
		d->cls_desc = &tk__kev_class_table[TK_KEV_CODE(ev->header) & 0x80u ? TK__CT_KEREXIT : TK__CT_KERENTER];
	d->event_name[0] = '\0';
	d->time = ev->time;
	d->cycles = ev->clk;
	d->time_ns = ev->ns;
	d->pid = d->tid = 0;
	d->data = ev->data;
	d->len = ev->len;
	d->swap = ev->swap;
	kev_decode_core(ev, flags, d);
	return TK_OK;
}

const tk_kev_field *tk_kev_field_find(const tk_kev_decoded *d, const char *name)
{
	unsigned i;

	if (d == NULL || name == NULL)
		return NULL;
	for (i = 0; i < d->n_fields; i++) {
		if (strcmp(d->fields[i].name, name) == 0)
			return &d->fields[i];
	}
	return NULL;
}

uint32_t tk_kev_field_word(const tk_kev_decoded *d, const tk_kev_field *f, unsigned i)
{
	if (d == NULL || f == NULL || f->type != TK_KEV_FIELD_WORDS || i >= f->len)
		return 0;
	return tk__cs32(d->swap, tk__load32(f->str + (size_t)i * 4));
}
