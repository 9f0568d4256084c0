/* SPDX-License-Identifier: MIT */
/*
 * Function slices named by their functions (tracekit/symbols.h): the exporter's symbolizer,
 * the caller's (tk_export_set_symbols()) or its own with the file's mappings read first
 * (TK_EXPORT_SYMBOLS), fed every SYSTEM event by the model and asked the name of each
 * FUNC_ENTER's function. A name is the function's alone (the slice starts at its entry);
 * an address that does not resolve stays the name. docs/export.md, "Symbols".
 */
#include <string.h>
#include <sys/stat.h>

#include "export/export_internal.h"
#include "tracekit/symbols.h"

int tk_export_set_symbols(tk_export *x, struct tk_symbols *symbols)
{
	if (x == NULL || x->started)
		return TK_EINVAL;
	tk__export_free_symbols(x);
	x->symbols = symbols;
	x->owns_symbols = 0;
	return 0;
}

int tk__export_use_symbols(tk_export *x, const char *in_path)
{
	tk_symbols *s = NULL;
	int rc = tk_symbols_new(&s);

	if (rc != 0)
		return rc;
	/* A damaged or unreadable input is reported by the export's own pass; standard input,
	 * a FIFO or a device cannot be read twice (the second pass would wait for a writer
	 * that is gone): their mappings are taken as they come. */
	struct stat sb;
	tk__export_free_symbols(x);
	if (in_path != NULL && strcmp(in_path, "-") != 0 && stat(in_path, &sb) == 0 && S_ISREG(sb.st_mode)) {
		const tk_symbols_stats *st;
		tk_symbols_load_file(s, in_path, NULL, 0);
		if ((st = tk_symbols_get_stats(s)) != NULL && st->mappings == 0) {
			/* a file without mappings (QNX's, a program's own that wrote none): every
			 * address stays an address, without a lookup per function entry */
			tk_symbols_free(s);
			return 0;
		}
	}
	x->symbols = s;
	x->owns_symbols = 1;
	return 0;
}

const char *tk__export_func_name_at(tk_export *x, int32_t pid, uint64_t ns, uint64_t addr)
{
	tk_symbol sym;

	if (tk_symbols_lookup(x->symbols, pid, ns, addr, &sym) != 0)
		return NULL;
	return sym.name; /* the symbolizer's: valid as long as it is */
}

const char *tk__export_func_name(tk_export *x, const tk_kev_decoded *d, uint64_t addr)
{
	if (!(d->flags & TK_KEV_DEC_OWNER_KNOWN))
		return NULL;
	return tk__export_func_name_at(x, d->pid, d->time_ns, addr);
}

void tk__export_free_symbols(tk_export *x)
{
	if (x->owns_symbols)
		tk_symbols_free(x->symbols);
	x->symbols = NULL;
	x->owns_symbols = 0;
}
