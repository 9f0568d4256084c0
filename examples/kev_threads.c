// SPDX-License-Identifier: MIT
/*
 * kev_threads: what each thread of a .kev trace did, through the decoded event model.
 * Every event arrives decoded (tk_traceparser_decode: class, event name, time in
 * CLOCK_MONOTONIC_RAW ns, CPU, pid, tid, named fields); the program counts events per
 * thread and per class and prints the first events of one class with their fields.
 *
 *   kev_threads TRACE.kev [CLASS [N]]     CLASS as traceprinter's -c names it (USER)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracekit/kev.h>
#include <tracekit/traceparser.h>

#define MAX_THREADS 4096

struct thread_sum {
	int32_t pid, tid;
	uint64_t events, first_ns, last_ns;
	uint64_t per_class[64]; /* by index in tk_kev_class_table() */
};

struct summary {
	struct thread_sum threads[MAX_THREADS];
	size_t n_threads;
	uint64_t unknown_owner, total;
	unsigned show_cls; /* internal class whose events are printed */
	unsigned show_left;
	const tk_kev_class_desc *classes;
	size_t n_classes;
	tk_kev_decoded dec; /* large: kept here, not on the callback's stack */
};

static struct thread_sum *thread_of(struct summary *s, int32_t pid, int32_t tid)
{
	for (size_t i = 0; i < s->n_threads; i++)
		if (s->threads[i].pid == pid && s->threads[i].tid == tid)
			return &s->threads[i];
	if (s->n_threads == MAX_THREADS)
		return NULL;
	struct thread_sum *t = &s->threads[s->n_threads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	return t;
}

static void print_fields(const tk_kev_decoded *d)
{
	for (unsigned i = 0; i < d->n_fields; i++) {
		const tk_kev_field *f = &d->fields[i];
		const char *name = f->name[0] != '\0' ? f->name : "text";

		switch (f->type) {
		case TK_KEV_FIELD_INT:
			printf(" %s=%" PRId64, name, f->v.i);
			break;
		case TK_KEV_FIELD_STR:
			printf(" %s=\"%.*s\"", name, (int)f->len, f->str);
			break;
		case TK_KEV_FIELD_BYTES:
		case TK_KEV_FIELD_WORDS:
			printf(" %s=(%" PRIu32 " %s)", name, f->len,
			       f->type == TK_KEV_FIELD_WORDS ? "words" : "bytes");
			break;
		default:
			printf(" %s=0x%" PRIx64, name, f->v.u);
			break;
		}
	}
}

static int on_event(struct traceparser_state *st, void *ud, unsigned header, unsigned time,
		    unsigned *buf, unsigned len)
{
	struct summary *s = ud;
	tk_kev_decoded *d = &s->dec;

	if (tk_traceparser_decode(st, header, time, buf, len, 0, d) != 0)
		return 0;
	s->total++;
	if (!(d->flags & TK_KEV_DEC_OWNER_KNOWN)) {
		s->unknown_owner++;
		return 0;
	}
	struct thread_sum *t = thread_of(s, d->pid, d->tid);
	if (t != NULL) {
		/* file order is not time order across buffers: keep the extremes */
		if (t->events == 0 || d->time_ns < t->first_ns)
			t->first_ns = d->time_ns;
		if (d->time_ns > t->last_ns)
			t->last_ns = d->time_ns;
		t->events++;
		if (d->cls_desc != NULL && (size_t)(d->cls_desc - s->classes) < s->n_classes &&
		    (size_t)(d->cls_desc - s->classes) < 64)
			t->per_class[d->cls_desc - s->classes]++;
	}
	if (d->cls == s->show_cls && s->show_left > 0) {
		s->show_left--;
		printf("  %" PRIu64 " ns  cpu %u  pid %" PRId32 " tid %" PRId32 "  %s ", d->time_ns, d->cpu, d->pid,
		       d->tid, d->cls_desc != NULL ? d->cls_desc->name : "?");
		if (d->event_name[0] != '\0')
			printf("%s:", d->event_name);
		else
			printf("EVENT %d:", d->number);
		print_fields(d);
		putchar('\n');
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 4 || strcmp(argv[1], "--help") == 0) {
		fprintf(stderr, "usage: kev_threads TRACE.kev [CLASS [N]]\n");
		return argc == 2 ? 0 : 2;
	}
	const char *cls_name = argc > 2 ? argv[2] : "USER";
	const tk_kev_class_desc *show = tk_kev_class_find(cls_name);
	if (show == NULL) {
		fprintf(stderr, "kev_threads: unknown class '%s'\n", cls_name);
		return 2;
	}
	struct summary *s = calloc(1, sizeof(*s));
	struct traceparser_state *st = traceparser_init(NULL);
	if (s == NULL || st == NULL) {
		fprintf(stderr, "kev_threads: out of memory\n");
		return 1;
	}
	s->show_cls = show->cls;
	s->show_left = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 5;

	size_t n_classes;
	const tk_kev_class_desc *classes = tk_kev_class_table(&n_classes);
	s->classes = classes;
	s->n_classes = n_classes;
	for (size_t i = 0; i < n_classes; i++)
		tk_traceparser_cs_internal(st, s, on_event, classes[i].cls, classes[i].first, classes[i].last);

	printf("first %s events, decoded:\n", show->name);
	int rc = traceparser(st, NULL, argv[1]);
	if (rc != 0) {
		const char *msg = traceparser_get_info(st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		fprintf(stderr, "kev_threads: %s: %s\n", argv[1], msg != NULL && *msg ? msg : "unreadable");
		traceparser_destroy(&st);
		free(s);
		return 1;
	}
	printf("\n%" PRIu64 " events, %zu threads, %" PRIu64 " without a known owner\n", s->total, s->n_threads,
	       s->unknown_owner);
	printf("%8s %8s %10s %12s  %s\n", "pid", "tid", "events", "span (us)", "events per class");
	for (size_t i = 0; i < s->n_threads; i++) {
		const struct thread_sum *t = &s->threads[i];
		printf("%8" PRId32 " %8" PRId32 " %10" PRIu64 " %12.1f ", t->pid, t->tid, t->events,
		       (double)(t->last_ns - t->first_ns) / 1e3);
		for (size_t c = 0; c < n_classes && c < 64; c++)
			if (t->per_class[c] != 0)
				printf(" %s:%" PRIu64, classes[c].name, t->per_class[c]);
		putchar('\n');
	}
	traceparser_destroy(&st);
	free(s);
	return 0;
}
