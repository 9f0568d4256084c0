/* SPDX-License-Identifier: MIT */
/*
 * csv_heap.c: the one binary min-heap of tk_csv_import()'s merge, which holds both the ends
 * of the open intervals of an interval file and the values of a counter row (the merge
 * order and the heap's top are inline in csv_internal.h).
 */
#include <stdlib.h>
#include <string.h>

#include "csv_internal.h"

static int key_before(const struct tk__csv_heap_key *a, const struct tk__csv_heap_key *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return a->sub < b->sub;
}

int tk__csv_heap_push(struct tk__csv_heap *e, const struct tk__csv_ev *v)
{
	uint32_t slot;
	if (e->nfree) {
		slot = e->freel[--e->nfree];
	} else {
		if (e->npool == e->cappool) {
			size_t nc = e->cappool ? e->cappool * 2 : 256;
			if (nc > UINT32_MAX)
				return TK_ENOMEM;
			struct tk__csv_ev *np = realloc(e->pool, nc * sizeof(*np));
			if (np == NULL)
				return TK_ENOMEM;
			e->pool = np;
			uint32_t *nf = realloc(e->freel, nc * sizeof(*nf));
			if (nf == NULL)
				return TK_ENOMEM;
			e->freel = nf;
			e->cappool = nc;
		}
		slot = (uint32_t)e->npool++;
	}
	if (e->n == e->cap) {
		size_t nc = e->cap ? e->cap * 2 : 256;
		struct tk__csv_heap_key *nh = realloc(e->h, nc * sizeof(*nh));
		if (nh == NULL) {
			e->freel[e->nfree++] = slot;
			return TK_ENOMEM;
		}
		e->h = nh;
		e->cap = nc;
	}
	e->pool[slot] = *v;
	struct tk__csv_heap_key k = {v->t, v->seq, v->sub, slot};
	size_t i = e->n++;
	while (i > 0 && key_before(&k, &e->h[(i - 1) / 2])) {
		e->h[i] = e->h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	e->h[i] = k;
	return 0;
}

struct tk__csv_ev *tk__csv_heap_at(const struct tk__csv_heap *e, size_t i)
{
	return &e->pool[e->h[i].slot];
}

void tk__csv_heap_pop(struct tk__csv_heap *e)
{
	e->freel[e->nfree++] = e->h[0].slot;
	struct tk__csv_heap_key last = e->h[--e->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= e->n)
			break;
		if (c + 1 < e->n && key_before(&e->h[c + 1], &e->h[c]))
			c++;
		if (!key_before(&e->h[c], &last))
			break;
		e->h[i] = e->h[c];
		i = c;
	}
	if (e->n > 0)
		e->h[i] = last;
}

void tk__csv_heap_clear(struct tk__csv_heap *e)
{
	e->n = e->nfree = e->npool = 0;
}

void tk__csv_heap_free(struct tk__csv_heap *e)
{
	free(e->h);
	free(e->pool);
	free(e->freel);
	memset(e, 0, sizeof(*e));
}
