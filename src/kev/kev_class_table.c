/* SPDX-License-Identifier: MIT */
/*
 * The class table: every event class by name, API number and the internal codes it
 * covers, for the library's decoder and the tools (traceprinter -c/-x). Part of the
 * readers' library; the recorder needs only the mapping of kev_classes.c.
 */
#include "kev/kev_names.h"
#include "tracekit/kev.h"

/* ---- The class table --------------------------------------------------------------------- */

/* Most specific first: tk_kev_class_of() returns the first entry that covers a header. */
const tk_kev_class_desc tk__kev_class_table[] = {
	{ "EMPTY", _NTO_TRACE_EMPTY, 0, 0, 1023 },
	{ "CONTROL", _NTO_TRACE_CONTROL, 1, 0, 1023 },
	{ "KERCALLENTER", _NTO_TRACE_KERCALLENTER, 2, 0, _TRACE_MAX_KER_CALL_NUM - 1 },
	{ "KERCALLEXIT", _NTO_TRACE_KERCALLEXIT, 2, _TRACE_MAX_KER_CALL_NUM, 2 * _TRACE_MAX_KER_CALL_NUM - 1 },
	{ "KERCALLINT", _NTO_TRACE_KERCALLINT, 2, 2 * _TRACE_MAX_KER_CALL_NUM, 3 * _TRACE_MAX_KER_CALL_NUM - 1 },
	{ "KERCALL", _NTO_TRACE_KERCALL, 2, 0, 1023 },
	{ "INTENTER", _NTO_TRACE_INTENTER, 3, _TRACE_INT_ENTRY, _TRACE_INT_ENTRY },
	{ "INTEXIT", _NTO_TRACE_INTEXIT, 3, _TRACE_INT_EXIT, _TRACE_INT_EXIT },
	{ "INT_HANDLER_ENTER", _NTO_TRACE_INT_HANDLER_ENTER, 3, _TRACE_INT_HANDLER_ENTRY, _TRACE_INT_HANDLER_ENTRY },
	{ "INT_HANDLER_EXIT", _NTO_TRACE_INT_HANDLER_EXIT, 3, _TRACE_INT_HANDLER_EXIT, _TRACE_INT_HANDLER_EXIT },
	{ "INT", _NTO_TRACE_INT, 3, 0, 1023 },
	{ "THREAD", _NTO_TRACE_THREAD, 4, 0, _TRACE_MAX_TH_STATE_NUM - 1 },
	{ "VTHREAD", _NTO_TRACE_VTHREAD, 4, _TRACE_MAX_TH_STATE_NUM, 2 * _TRACE_MAX_TH_STATE_NUM - 1 },
	{ "PROCESS", _NTO_TRACE_PROCESS, 4, 64, 1023 },
	{ "SYSTEM", _NTO_TRACE_SYSTEM, 5, 0, 1023 },
	{ "USER", _NTO_TRACE_USER, 6, 0, 1023 },
	{ "COMM", _NTO_TRACE_COMM, 7, 0, 1023 },
	{ "QUIP", _NTO_TRACE_QUIP, 8, 0, 1023 },
	{ "SEC", _NTO_TRACE_SEC, 9, 0, 1023 },
	{ "QVM", _NTO_TRACE_QVM, 10, 0, 1023 },
	{ "PMU", 20, 11, 0, 1023 }, /* QNX 8's _NTO_TRACE_PMU */
};
#define N_CLASS_TABLE (TK__CT_PMU + 1u)

const tk_kev_class_desc *tk_kev_class_table(size_t *n)
{
	if (n != NULL)
		*n = N_CLASS_TABLE;
	return tk__kev_class_table;
}

/* "_NTO_TRACE_" in any case */
static int same_name_prefix(const char *name)
{
	static const char prefix[] = "_NTO_TRACE_";
	size_t i;

	for (i = 0; i < sizeof(prefix) - 1; i++) {
		char c = name[i];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if (c != prefix[i])
			return 0;
	}
	return 1;
}

static int same_name(const char *a, const char *b)
{
	for (; *a != '\0' && *b != '\0'; a++, b++) {
		unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
		if (x >= 'a' && x <= 'z')
			x = (unsigned char)(x - 'a' + 'A');
		if (y >= 'a' && y <= 'z')
			y = (unsigned char)(y - 'a' + 'A');
		if (x != y)
			return 0;
	}
	return *a == *b;
}

const tk_kev_class_desc *tk_kev_class_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	if (same_name_prefix(name))
		name += 11;
	for (i = 0; i < N_CLASS_TABLE; i++) {
		if (same_name(name, tk__kev_class_table[i].name))
			return &tk__kev_class_table[i];
	}
	return NULL;
}

const tk_kev_class_desc *tk_kev_class_by_number(int ext_class)
{
	size_t i;

	for (i = 0; i < N_CLASS_TABLE; i++) {
		if (tk__kev_class_table[i].ext_class == ext_class)
			return &tk__kev_class_table[i];
	}
	return NULL;
}

/* The decoder's direct lookup (kev_names.h) indexes this table. */
_Static_assert(sizeof(tk__kev_class_table) / sizeof(tk__kev_class_table[0]) == N_CLASS_TABLE,
	       "one TK__CT_ index per class table entry");

const tk_kev_class_desc *tk_kev_class_of(unsigned header)
{
	return tk__kev_class_of(header);
}
