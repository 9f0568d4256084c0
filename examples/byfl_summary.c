/* SPDX-License-Identifier: MIT */
/*
 * byfl_summary: a client written against Byfl's own libbfbin API, unchanged: it includes
 * <byfl/bfbin.h> (tracekit's compat directory provides it) and lists each table of a .byfl
 * file with its kind, columns and rows, then the program's key:value totals.
 * Build: cc byfl_summary.c -I$(pkg-config --variable=compatdir tracekit) \
 *           $(pkg-config --cflags --libs tracekit)
 * Usage: byfl_summary FILE.byfl
 */
#include <byfl/bfbin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct summary {
	int keyval;          /* the current table is a key:value table */
	int in_program;      /* ... and it is "Program" */
	unsigned long columns;
	unsigned long long rows;
	char names[64][128]; /* the first column names of "Program" */
	unsigned n_names, next;
	int failed;
};

static void on_error(void *ud, const char *message)
{
	((struct summary *)ud)->failed = 1;
	fprintf(stderr, "byfl_summary: %s\n", message);
}

static void begin_table(struct summary *s, const char *name, int keyval)
{
	s->keyval = keyval;
	s->in_program = keyval && strcmp(name, "Program") == 0;
	s->columns = 0;
	s->rows = 0;
	s->n_names = s->next = 0;
	printf("%-9s %s", keyval ? "key:value" : "basic", name);
}

static void on_basic(void *ud, const char *name)
{
	begin_table(ud, name, 0);
}

static void on_keyval(void *ud, const char *name)
{
	begin_table(ud, name, 1);
}

static void on_column(void *ud, const char *name)
{
	struct summary *s = ud;

	s->columns++;
	if (s->in_program && s->n_names < 64)
		snprintf(s->names[s->n_names++], sizeof(s->names[0]), "%s", name);
}

static void on_row(void *ud)
{
	((struct summary *)ud)->rows++;
}

static void on_uint64(void *ud, uint64_t value)
{
	struct summary *s = ud;

	/* Key:value tables deliver every key first, then every value: match them by position. */
	if (s->in_program && s->next < s->n_names)
		printf("\n    %-28s %" PRIu64, s->names[s->next], value);
	s->next++;
}

static void on_other_value(void *ud, const char *value)
{
	(void)value;
	((struct summary *)ud)->next++;
}

/*
 * Every value moves the position on, whatever its type: without this callback a bool key
 * would leave every later uint64 value under the name of the key before it.
 */
static void on_bool_value(void *ud, uint8_t value)
{
	(void)value;
	((struct summary *)ud)->next++;
}

static void on_end(void *ud)
{
	struct summary *s = ud;

	printf("%s(%lu columns, %llu rows)\n", s->in_program ? "\n    " : ": ", s->columns, s->rows);
}

int main(int argc, char **argv)
{
	bfbin_callback_t callbacks;
	struct summary s;

	if (argc != 2) {
		fputs("usage: byfl_summary FILE.byfl\n", stderr);
		return 2;
	}
	memset(&callbacks, 0, sizeof(callbacks)); /* NULL callbacks are skipped */
	memset(&s, 0, sizeof(s));
	callbacks.error_cb = on_error;
	callbacks.table_begin_basic_cb = on_basic;
	callbacks.table_begin_keyval_cb = on_keyval;
	callbacks.column_uint64_cb = on_column;
	callbacks.column_string_cb = on_column;
	callbacks.column_bool_cb = on_column;
	callbacks.row_begin_cb = on_row;
	callbacks.data_uint64_cb = on_uint64;
	callbacks.data_string_cb = on_other_value;
	callbacks.data_bool_cb = on_bool_value;
	callbacks.table_end_basic_cb = on_end;
	callbacks.table_end_keyval_cb = on_end;
	bf_process_byfl_file(argv[1], &callbacks, &s, 0);
	return s.failed ? 1 : 0;
}
