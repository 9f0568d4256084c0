/* SPDX-License-Identifier: MIT */
/*
 * .byfl to the Callgrind profile format (callgrind_annotate, KCachegrind), as Byfl's
 * bfbin2cgrind writes it.
 *
 * Input: the "Functions" table (every column), plus "Executable name" from "System
 * information" (the ob= line) and every string of "Command line" (the cmd: line). In the
 * Functions table: the function is the first "Demangled function name" or "Demangled call
 * stack" column (a call stack is leaf first, joined by " # "), the file the first "File
 * name" or "Leaf file name", the line the last "Line number" or "Leaf line number", the
 * call count the last "Invocations"; every uint64 column but the line numbers is an event.
 *
 * Output: a header, the event definitions (Byfl's short names, E1, E2... for unknown
 * columns) with the derived events whose inputs all exist, the summary (sum of all self
 * costs, modulo 2^64), ob=, the file and function name tables, then the call tree: call
 * stacks are inserted outermost first into a trie, and every trie node prints its self
 * cost, then one cfn=/calls=/inclusive-cost group per child, in order of first appearance.
 *
 * Differences from Byfl (docs/bfbin2cgrind.md): children in first-appearance order, not
 * std::unordered_map order; calls= is the child's own invocation count (Byfl added its
 * descendants' counts), never 0, which callgrind_annotate would misread; cfn= is written
 * for recursive calls too; a call-stack prefix without a row of its own gets a node with
 * zero self cost instead of undefined ids and costs; duplicate call stacks are summed;
 * line breaks in names become spaces; a second Functions table is an error.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bfbin/bfbin_internal.h"

#define CG_MAX_ARENA ((size_t)1 << 30) /* bytes of strings kept from the Functions table */
#define CG_MAX_ROWS ((size_t)1 << 28)
#define CG_NONE UINT32_MAX
#define CG_SEP " # "

enum cg_table { CG_OTHER, CG_FUNCS, CG_SYSINFO, CG_CMDLINE };

struct cg_col {
	size_t name; /* arena offset */
	unsigned type;
	size_t index; /* among the columns of its type */
};

/* A string -> id map keyed by (parent, bytes); parent is 0 except for trie children. */
struct cg_slot {
	const char *key;
	size_t len;
	uint32_t parent, value;
	uint64_t hash;
};

struct cg_map {
	struct cg_slot *slots;
	size_t cap, n;
};

struct cg_seg {
	const char *p;
	size_t len;
};

struct cg_event {
	size_t u64_index; /* its column among the uint64 columns */
	const char *long_name;
	char short_name[24];
};

struct cg_node {
	uint32_t first_child, last_child, next_sibling;
	uint32_t func_id, file_id;
	const char *name;
	size_t name_len;
	uint64_t line, calls;
	int has_row;
};

struct cg_state {
	struct tk__bfconv base; /* first: the parser's user_data */
	FILE *out;
	enum cg_table table;
	size_t n_funcs_tables, n_sysinfo_tables, n_cmdline_tables;
	int in_first; /* in the first table of its kind */

	/* all strings (column names, Functions strings, names of the small tables) */
	char *arena;
	size_t arena_len, arena_cap;

	/* the Functions table, column-typed storage */
	struct cg_col *cols;
	size_t ncols, cols_cap, n_u64, n_str;
	uint64_t *u64; /* nrows x n_u64 */
	size_t *str;   /* nrows x n_str arena offsets */
	size_t nrows, rows_cap;
	size_t col, u64_col, str_col;
	int row_ok; /* the current Functions row has storage (the parser stops after a failure) */

	/* the small tables */
	int exe_col; /* column of "Executable name" in System information, -1 if none */
	int have_exe;
	size_t exe; /* arena offset */
	size_t *cmd; /* arena offsets of Command line strings */
	size_t n_cmd, cmd_cap;

	/* output model */
	struct cg_map funcs, files, children;
	uint32_t *func_file;  /* file id of each function id (index id - 1) */
	uint64_t *func_line;
	size_t n_func_ids, func_ids_cap, n_file_ids;
	const char **file_names; /* by id - 1 */
	size_t file_names_cap;
	const char **func_names;
	struct cg_node *nodes;
	size_t n_nodes, nodes_cap;
	uint64_t *self, *incl; /* n_nodes x n_events */
	uint32_t *row_node;     /* the trie node of each row */
	struct cg_seg *segs;    /* scratch: the segments of one call stack */
	size_t segs_cap;
	size_t n_events;
	struct cg_event *events;
};

static int cg_nomem(struct cg_state *s)
{
	return tk__bfconv_fail(&s->base, TK_ENOMEM, "Out of memory while converting %s", s->base.in_path);
}

static int cg_reserve(struct cg_state *s, void **p, size_t *cap, size_t want, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *np;

	if (want <= *cap)
		return TK_OK;
	while (ncap < want)
		ncap *= 2;
	np = realloc(*p, ncap * elem);
	if (np == NULL)
		return cg_nomem(s);
	*p = np;
	*cap = ncap;
	return TK_OK;
}

/* Copies a string into the arena; *off gets its offset. */
static int cg_keep(struct cg_state *s, const char *str, size_t *off)
{
	size_t n = strlen(str) + 1;

	if (s->arena_len + n > CG_MAX_ARENA)
		return tk__bfconv_fail(&s->base, TK_ETOOBIG, "The Functions table of %s holds more than %zu bytes of text",
				       s->base.in_path, CG_MAX_ARENA);
	if (cg_reserve(s, (void **)&s->arena, &s->arena_cap, s->arena_len + n, 1) != TK_OK)
		return s->base.rc;
	memcpy(s->arena + s->arena_len, str, n);
	*off = s->arena_len;
	s->arena_len += n;
	return TK_OK;
}

/* ---- collecting the tables ---------------------------------------------------------- */

static void cg_table_begin(void *ud, const char *name)
{
	struct cg_state *s = ud;

	s->table = CG_OTHER;
	s->in_first = 0;
	if (strcmp(name, "Functions") == 0) {
		s->table = CG_FUNCS;
		s->in_first = s->n_funcs_tables++ == 0;
		if (!s->in_first)
			tk__bfconv_fail(&s->base, TK_ECORRUPT, "%s contains more than one \"Functions\" table",
					s->base.in_path);
	} else if (strcmp(name, "System information") == 0) {
		s->table = CG_SYSINFO;
		s->in_first = s->n_sysinfo_tables++ == 0;
		s->exe_col = -1;
	} else if (strcmp(name, "Command line") == 0) {
		s->table = CG_CMDLINE;
		s->in_first = s->n_cmdline_tables++ == 0;
	}
	s->col = 0;
}

static void cg_column(struct cg_state *s, const char *name, unsigned type)
{
	if (!s->in_first)
		return;
	if (s->table == CG_SYSINFO) {
		if (type == TK_BFBIN_STRING && s->exe_col < 0 && strcmp(name, "Executable name") == 0)
			s->exe_col = (int)s->col;
		s->col++;
		return;
	}
	if (s->table != CG_FUNCS)
		return;
	if (cg_reserve(s, (void **)&s->cols, &s->cols_cap, s->ncols + 1, sizeof(*s->cols)) != TK_OK ||
	    cg_keep(s, name, &s->cols[s->ncols].name) != TK_OK)
		return;
	s->cols[s->ncols].type = type;
	s->cols[s->ncols].index = type == TK_BFBIN_UINT64 ? s->n_u64++ : type == TK_BFBIN_STRING ? s->n_str++ : 0;
	s->ncols++;
}

static void cg_column_uint64(void *ud, const char *name)
{
	cg_column(ud, name, TK_BFBIN_UINT64);
}

static void cg_column_string(void *ud, const char *name)
{
	cg_column(ud, name, TK_BFBIN_STRING);
}

static void cg_column_bool(void *ud, const char *name)
{
	cg_column(ud, name, TK_BFBIN_BOOL);
}

static void cg_row_begin(void *ud)
{
	struct cg_state *s = ud;

	s->col = s->u64_col = s->str_col = 0;
	s->row_ok = 0;
	if (!s->in_first || s->table != CG_FUNCS)
		return;
	if (s->nrows == CG_MAX_ROWS) {
		tk__bfconv_fail(&s->base, TK_ETOOBIG, "The Functions table of %s has more than %zu rows", s->base.in_path,
				CG_MAX_ROWS);
		return;
	}
	if (s->nrows == s->rows_cap) {
		size_t cap = s->rows_cap ? s->rows_cap * 2 : 256;
		uint64_t *nu = realloc(s->u64, cap * (s->n_u64 ? s->n_u64 : 1) * sizeof(*nu));
		size_t *ns;
		if (nu == NULL) {
			cg_nomem(s);
			return;
		}
		s->u64 = nu;
		ns = realloc(s->str, cap * (s->n_str ? s->n_str : 1) * sizeof(*ns));
		if (ns == NULL) {
			cg_nomem(s);
			return;
		}
		s->str = ns;
		s->rows_cap = cap;
	}
	s->row_ok = 1;
}

static void cg_data_uint64(void *ud, uint64_t v)
{
	struct cg_state *s = ud;

	if (s->row_ok)
		s->u64[s->nrows * s->n_u64 + s->u64_col++] = v;
	s->col++;
}

static void cg_data_string(void *ud, const char *v)
{
	struct cg_state *s = ud;

	if (!s->in_first) {
		s->col++;
		return;
	}
	switch (s->table) {
	case CG_FUNCS:
		if (s->row_ok && cg_keep(s, v, &s->str[s->nrows * s->n_str + s->str_col++]) != TK_OK)
			s->row_ok = 0;
		break;
	case CG_SYSINFO:
		if ((int)s->col == s->exe_col && !s->have_exe && cg_keep(s, v, &s->exe) == TK_OK)
			s->have_exe = 1;
		break;
	case CG_CMDLINE:
		if (cg_reserve(s, (void **)&s->cmd, &s->cmd_cap, s->n_cmd + 1, sizeof(*s->cmd)) == TK_OK &&
		    cg_keep(s, v, &s->cmd[s->n_cmd]) == TK_OK)
			s->n_cmd++;
		break;
	default:
		break;
	}
	s->col++;
}

static void cg_data_bool(void *ud, uint8_t v)
{
	struct cg_state *s = ud;

	(void)v;
	s->col++;
}

static void cg_row_end(void *ud)
{
	struct cg_state *s = ud;

	if (s->row_ok && s->base.rc == TK_OK)
		s->nrows++;
}

static void cg_table_end(void *ud)
{
	struct cg_state *s = ud;

	s->table = CG_OTHER;
	s->in_first = 0;
}

/* ---- the model ------------------------------------------------------------------------ */

static uint64_t cg_hash(uint32_t parent, const char *key, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull);
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)key[i];
		h *= 1099511628211ull;
	}
	return h ^ (h >> 29);
}

/* Finds (parent, key); returns its slot (value CG_NONE and key NULL when absent). */
static struct cg_slot *cg_find(struct cg_map *m, uint32_t parent, const char *key, size_t len, uint64_t h)
{
	size_t i = (size_t)h & (m->cap - 1);

	for (;;) {
		struct cg_slot *sl = &m->slots[i];
		if (sl->key == NULL)
			return sl;
		if (sl->hash == h && sl->parent == parent && sl->len == len && memcmp(sl->key, key, len) == 0)
			return sl;
		i = (i + 1) & (m->cap - 1);
	}
}

/* The id stored for (parent, key), or CG_NONE; with insert != CG_NONE, adds it if absent. */
static uint32_t cg_map_get(struct cg_state *s, struct cg_map *m, uint32_t parent, const char *key, size_t len,
			   uint32_t insert)
{
	uint64_t h = cg_hash(parent, key, len);
	struct cg_slot *sl;

	if (m->cap == 0 || (insert != CG_NONE && (m->n + 1) * 2 > m->cap)) {
		struct cg_map grown;
		size_t i;
		grown.cap = m->cap ? m->cap * 2 : 1024;
		grown.n = m->n;
		grown.slots = calloc(grown.cap, sizeof(*grown.slots));
		if (grown.slots == NULL) {
			cg_nomem(s);
			return CG_NONE;
		}
		for (i = 0; i < m->cap; i++)
			if (m->slots[i].key != NULL)
				*cg_find(&grown, m->slots[i].parent, m->slots[i].key, m->slots[i].len, m->slots[i].hash) =
					m->slots[i];
		free(m->slots);
		*m = grown;
	}
	sl = cg_find(m, parent, key, len, h);
	if (sl->key != NULL)
		return sl->value;
	if (insert == CG_NONE)
		return CG_NONE;
	sl->key = key;
	sl->len = len;
	sl->parent = parent;
	sl->hash = h;
	sl->value = insert;
	m->n++;
	return insert;
}

static uint32_t cg_file_id(struct cg_state *s, const char *name)
{
	uint32_t id = cg_map_get(s, &s->files, 0, name, strlen(name), (uint32_t)s->n_file_ids + 1);

	if (id == s->n_file_ids + 1) {
		if (cg_reserve(s, (void **)&s->file_names, &s->file_names_cap, s->n_file_ids + 1,
			       sizeof(*s->file_names)) != TK_OK)
			return CG_NONE;
		s->file_names[s->n_file_ids++] = name;
	}
	return id;
}

static uint32_t cg_func_id(struct cg_state *s, const char *name, size_t len, uint32_t file_id, uint64_t line)
{
	uint32_t id = cg_map_get(s, &s->funcs, 0, name, len, (uint32_t)s->n_func_ids + 1);

	if (id == s->n_func_ids + 1) {
		size_t cap = s->func_ids_cap;
		if (cg_reserve(s, (void **)&s->func_file, &cap, s->n_func_ids + 1, sizeof(*s->func_file)) != TK_OK)
			return CG_NONE;
		cap = s->func_ids_cap;
		if (cg_reserve(s, (void **)&s->func_line, &cap, s->n_func_ids + 1, sizeof(*s->func_line)) != TK_OK)
			return CG_NONE;
		cap = s->func_ids_cap;
		if (cg_reserve(s, (void **)&s->func_names, &cap, s->n_func_ids + 1, sizeof(*s->func_names)) != TK_OK)
			return CG_NONE;
		s->func_ids_cap = cap;
		s->func_file[s->n_func_ids] = file_id;
		s->func_line[s->n_func_ids] = line;
		s->func_names[s->n_func_ids] = name; /* length: up to the first " # " or the end */
		s->n_func_ids++;
	}
	return id;
}

static size_t cg_leaf_len(const char *stack)
{
	const char *sep = strstr(stack, CG_SEP);
	return sep ? (size_t)(sep - stack) : strlen(stack);
}

static uint32_t cg_new_node(struct cg_state *s, uint32_t parent, const char *name, size_t len)
{
	struct cg_node *n;
	uint32_t id = (uint32_t)s->n_nodes;

	if (s->n_nodes >= CG_NONE - 1 ||
	    cg_reserve(s, (void **)&s->nodes, &s->nodes_cap, s->n_nodes + 1, sizeof(*s->nodes)) != TK_OK)
		return CG_NONE;
	n = &s->nodes[s->n_nodes++];
	memset(n, 0, sizeof(*n));
	n->first_child = n->last_child = n->next_sibling = CG_NONE;
	n->name = name;
	n->name_len = len;
	if (parent != CG_NONE) {
		struct cg_node *p = &s->nodes[parent];
		if (p->last_child == CG_NONE)
			p->first_child = id;
		else
			s->nodes[p->last_child].next_sibling = id;
		p->last_child = id;
	}
	return id;
}

/* Finds a column of the Functions table by name and type: the first or the last match. */
static const struct cg_col *cg_find_col(struct cg_state *s, const char *a, const char *b, int last)
{
	const struct cg_col *found = NULL;
	size_t i;

	for (i = 0; i < s->ncols; i++) {
		const char *name = s->arena + s->cols[i].name;
		if (strcmp(name, a) == 0 || (b != NULL && strcmp(name, b) == 0)) {
			found = &s->cols[i];
			if (!last)
				break;
		}
	}
	return found;
}

static int cg_need_col(struct cg_state *s, const struct cg_col *c, const char *what, unsigned type)
{
	if (c == NULL)
		return tk__bfconv_fail(&s->base, TK_EFORMAT, "Failed to find %s column in the \"Functions\" table", what);
	if (c->type != type)
		return tk__bfconv_fail(&s->base, TK_EFORMAT, "The \"%s\" column does not contain %s data",
				       s->arena + c->name, type == TK_BFBIN_UINT64 ? "integer" : "string");
	return TK_OK;
}

static const char *const long_names[][2] = {
	{ "Load operations", "LD_ops" },
	{ "Store operations", "ST_ops" },
	{ "Floating-point operations", "FP_ops" },
	{ "Integer operations", "Int_ops" },
	{ "Function-call operations (non-exception-throwing)", "Calls" },
	{ "Function-call operations (exception-throwing)", "Calls_exc" },
	{ "Unconditional and direct branch operations (removable)", "Br_rem" },
	{ "Unconditional and direct branch operations (mandatory)", "Br_mand" },
	{ "Conditional branch operations (not taken)", "Cond_Br_NT" },
	{ "Conditional branch operations (taken)", "Cond_Br_T" },
	{ "Unconditional but indirect branch operations", "Ind_Br" },
	{ "Multi-target (switch) branch operations", "Sw" },
	{ "Function-return operations", "Ret" },
	{ "Other branch operations", "Other_br" },
	{ "Floating-point operation bits", "FP_bits" },
	{ "Integer operation bits", "Int_bits" },
	{ "Bytes loaded", "LD_bytes" },
	{ "Bytes stored", "ST_bytes" },
	{ "Calls to memset", "Memset" },
	{ "Bytes stored by memset", "Memset_bytes" },
	{ "Calls to memcpy and memmove", "Memcpy" },
	{ "Bytes loaded and stored by memcpy and memmove", "Memcpy_bytes" },
	{ "Unique bytes", "Uniq_bytes" },
	{ "Invocations", "Invokes" },
};
#define N_LONG_NAMES (sizeof(long_names) / sizeof(long_names[0]))

/* Derived events: name, formula, description, and the events the formula needs. */
static const struct {
	const char *def;
	const char *needs[11];
} derived[] = {
	{ "Mem_ops = LD_ops + ST_ops + Memset + Memcpy : All memory operations",
	  { "LD_ops", "ST_ops", "Memset", "Memcpy", NULL } },
	{ "ALU_ops = FP_ops + Int_ops : All ALU operations", { "FP_ops", "Int_ops", NULL } },
	{ "Bytes = LD_bytes + ST_bytes + Memset_bytes + 2*Memcpy_bytes : All bytes loaded or stored",
	  { "LD_bytes", "ST_bytes", "Memset_bytes", "Memcpy_bytes", NULL } },
	{ "Branches = Calls + Calls_exc + Br_rem + Br_mand + Cond_Br_NT + Cond_Br_T + Ind_Br + Sw + Ret + Other_br : "
	  "All branches",
	  { "Calls", "Calls_exc", "Br_rem", "Br_mand", "Cond_Br_NT", "Cond_Br_T", "Ind_Br", "Sw", "Ret", "Other_br",
	    NULL } },
};

/* Writes a name on one line: line breaks become spaces, an empty name "???". */
static void cg_put_name(FILE *out, const char *name, size_t len)
{
	size_t i;

	if (len == 0) {
		fputs_unlocked("???", out);
		return;
	}
	for (i = 0; i < len; i++)
		putc_unlocked(name[i] == '\n' || name[i] == '\r' ? ' ' : name[i], out);
}

static void cg_put_u64(FILE *out, uint64_t v)
{
	char num[24];

	fwrite_unlocked(num, 1, tk__bf_u64_to_dec(num, v), out);
}

static void cg_put_costs(FILE *out, uint64_t line, const uint64_t *costs, size_t n)
{
	size_t i;

	cg_put_u64(out, line);
	for (i = 0; i < n; i++) {
		putc_unlocked(' ', out);
		cg_put_u64(out, costs[i]);
	}
	putc_unlocked('\n', out);
}

/* Splits a call stack ("leaf # caller # ... # main") into s->segs; returns the count. */
static size_t cg_split(struct cg_state *s, const char *stack)
{
	size_t n = 0;
	const char *p = stack, *sep;

	for (;;) {
		if (cg_reserve(s, (void **)&s->segs, &s->segs_cap, n + 1, sizeof(*s->segs)) != TK_OK)
			return 0;
		sep = strstr(p, CG_SEP);
		s->segs[n].p = p;
		s->segs[n].len = sep ? (size_t)(sep - p) : strlen(p);
		n++;
		if (sep == NULL)
			return n;
		p = sep + 3;
	}
}

/* Builds function and file ids and the call trie from the collected rows. */
static int cg_build(struct cg_state *s, const struct cg_col *func_col, const struct cg_col *file_col,
		    const struct cg_col *line_col, const struct cg_col *inv_col)
{
	uint32_t root, empty_file = CG_NONE;
	size_t r, i, e, ne = s->n_events ? s->n_events : 1;

	/* Ids in order of first appearance, as Byfl numbers them: files, then functions. */
	for (r = 0; r < s->nrows; r++)
		if (cg_file_id(s, s->arena + s->str[r * s->n_str + file_col->index]) == CG_NONE)
			return s->base.rc;
	for (r = 0; r < s->nrows; r++) {
		const char *stack = s->arena + s->str[r * s->n_str + func_col->index];
		const char *file = s->arena + s->str[r * s->n_str + file_col->index];
		if (cg_func_id(s, stack, cg_leaf_len(stack), cg_file_id(s, file),
			       s->u64[r * s->n_u64 + line_col->index]) == CG_NONE)
			return s->base.rc;
	}

	/* The trie: each row's stack inserted outermost caller first. */
	s->row_node = malloc((s->nrows ? s->nrows : 1) * sizeof(*s->row_node));
	if (s->row_node == NULL)
		return cg_nomem(s);
	root = cg_new_node(s, CG_NONE, "", 0);
	if (root == CG_NONE)
		return s->base.rc;
	for (r = 0; r < s->nrows; r++) {
		size_t n_segs = cg_split(s, s->arena + s->str[r * s->n_str + func_col->index]);
		uint32_t node = root;
		struct cg_node *n;
		if (n_segs == 0)
			return s->base.rc;
		while (n_segs-- > 0) {
			const struct cg_seg *sg = &s->segs[n_segs];
			uint32_t child = cg_map_get(s, &s->children, node, sg->p, sg->len, (uint32_t)s->n_nodes);
			if (child == CG_NONE)
				return s->base.rc;
			if (child == s->n_nodes && cg_new_node(s, node, sg->p, sg->len) == CG_NONE)
				return s->base.rc;
			node = child;
		}
		s->row_node[r] = node;
		n = &s->nodes[node];
		if (!n->has_row) { /* a repeated stack keeps its first file and line */
			n->has_row = 1;
			n->file_id = cg_file_id(s, s->arena + s->str[r * s->n_str + file_col->index]);
			n->line = s->u64[r * s->n_u64 + line_col->index];
		}
		n->calls += s->u64[r * s->n_u64 + inv_col->index];
	}

	/* Function ids of every node; a node without a row takes its function's file and line. */
	for (i = 1; i < s->n_nodes; i++) {
		struct cg_node *n = &s->nodes[i];
		uint32_t id = cg_map_get(s, &s->funcs, 0, n->name, n->name_len, CG_NONE);
		if (id == CG_NONE) { /* only ever a caller: no file known */
			if (empty_file == CG_NONE && (empty_file = cg_file_id(s, "")) == CG_NONE)
				return s->base.rc;
			id = cg_func_id(s, n->name, n->name_len, empty_file, 0);
			if (id == CG_NONE)
				return s->base.rc;
		}
		n->func_id = id;
		if (!n->has_row) {
			n->file_id = s->func_file[id - 1];
			n->line = s->func_line[id - 1];
		}
	}

	/* Self costs (repeated stacks add up), then inclusive costs bottom-up. */
	s->self = calloc(s->n_nodes * ne, sizeof(uint64_t));
	s->incl = calloc(s->n_nodes * ne, sizeof(uint64_t));
	if (s->self == NULL || s->incl == NULL)
		return cg_nomem(s);
	for (r = 0; r < s->nrows; r++)
		for (e = 0; e < s->n_events; e++)
			s->self[s->row_node[r] * ne + e] += s->u64[r * s->n_u64 + s->events[e].u64_index];
	memcpy(s->incl, s->self, s->n_nodes * ne * sizeof(uint64_t));
	/* A child is always created after its parent: a backward pass adds children first. */
	for (i = s->n_nodes; i-- > 0;) {
		uint32_t c;
		for (c = s->nodes[i].first_child; c != CG_NONE; c = s->nodes[c].next_sibling)
			for (e = 0; e < s->n_events; e++)
				s->incl[i * ne + e] += s->incl[(size_t)c * ne + e];
	}
	return TK_OK;
}

/* Chooses the events (every uint64 column but the line numbers) and their short names. */
static int cg_events(struct cg_state *s)
{
	size_t i, j, k, unknown = 0;

	s->events = calloc(s->n_u64 ? s->n_u64 : 1, sizeof(*s->events));
	if (s->events == NULL)
		return cg_nomem(s);
	for (i = 0; i < s->ncols; i++) {
		const char *name = s->arena + s->cols[i].name;
		struct cg_event *ev = &s->events[s->n_events];
		int unique;
		if (s->cols[i].type != TK_BFBIN_UINT64 || strcmp(name, "Line number") == 0 ||
		    strcmp(name, "Leaf line number") == 0)
			continue;
		ev->u64_index = s->cols[i].index;
		ev->long_name = name;
		for (k = 0; k < N_LONG_NAMES; k++)
			if (strcmp(name, long_names[k][0]) == 0)
				break;
		/* A repeated column gets a name of its own: "events:" must not list one twice. */
		unique = k < N_LONG_NAMES;
		for (j = 0; unique && j < s->n_events; j++)
			if (strcmp(s->events[j].short_name, long_names[k][1]) == 0)
				unique = 0;
		if (unique)
			snprintf(ev->short_name, sizeof(ev->short_name), "%s", long_names[k][1]);
		else
			snprintf(ev->short_name, sizeof(ev->short_name), "E%zu", ++unknown);
		s->n_events++;
	}
	return TK_OK;
}

static int cg_has_event(const struct cg_state *s, const char *short_name)
{
	size_t e;

	for (e = 0; e < s->n_events; e++)
		if (strcmp(s->events[e].short_name, short_name) == 0)
			return 1;
	return 0;
}

static void cg_write(struct cg_state *s)
{
	FILE *out = s->out;
	size_t i, e, k, ne = s->n_events ? s->n_events : 1;
	uint32_t prev_file = CG_NONE;
	uint32_t *todo;
	size_t n_todo = 0;

	fputs_unlocked("# KCachegrind view of ", out);
	cg_put_name(out, s->base.in_path, strlen(s->base.in_path));
	fputs_unlocked("\nversion: 1\ncreator: bfbin2cgrind\npositions: line\ncmd:", out);
	for (i = 0; i < s->n_cmd; i++) {
		const char *arg = s->arena + s->cmd[i];
		putc_unlocked(' ', out);
		cg_put_name(out, arg, strlen(arg));
	}
	fputs_unlocked("\n\n# Define all of the events represented in the .byfl file.\n", out);
	for (e = 0; e < s->n_events; e++) {
		fprintf(out, "event: %s : ", s->events[e].short_name);
		cg_put_name(out, s->events[e].long_name, strlen(s->events[e].long_name));
		putc_unlocked('\n', out);
	}
	for (k = 0; k < sizeof(derived) / sizeof(derived[0]); k++) {
		const char *const *need = derived[k].needs;
		while (*need != NULL && cg_has_event(s, *need))
			need++;
		if (*need == NULL)
			fprintf(out, "event: %s\n", derived[k].def);
	}
	fputs_unlocked("events:", out);
	for (e = 0; e < s->n_events; e++)
		fprintf(out, " %s", s->events[e].short_name);
	fputs_unlocked("\n\n# Precompute each event's total across all positions.\nsummary:", out);
	for (e = 0; e < s->n_events; e++) {
		putc_unlocked(' ', out);
		cg_put_u64(out, s->incl[e]); /* the root's inclusive cost: everything */
	}
	fputs_unlocked("\n\n", out);
	if (s->have_exe) {
		fputs_unlocked("# Note the name of the executable that was instrumented.\nob=", out);
		cg_put_name(out, s->arena + s->exe, strlen(s->arena + s->exe));
		fputs_unlocked("\n\n", out);
	}
	fputs_unlocked("# Associate a small integer with each file name.\n", out);
	for (i = 0; i < s->n_file_ids; i++) {
		fprintf(out, "fl=(%zu) ", i + 1);
		cg_put_name(out, s->file_names[i], strlen(s->file_names[i]));
		putc_unlocked('\n', out);
	}
	fputs_unlocked("\n# Associate a small integer with each function name.\n", out);
	for (i = 0; i < s->n_func_ids; i++) {
		if (s->func_file[i] != prev_file) {
			fprintf(out, "fl=(%u)\n", (unsigned)s->func_file[i]);
			prev_file = s->func_file[i];
		}
		fprintf(out, "fn=(%zu) ", i + 1);
		cg_put_name(out, s->func_names[i], cg_leaf_len(s->func_names[i]));
		putc_unlocked('\n', out);
	}
	fputs_unlocked("\n# List event values for each function on each call path.\n", out);

	/* Depth-first, parents before children, without recursion (stacks can be deep). */
	todo = malloc(s->n_nodes * sizeof(*todo));
	if (todo == NULL) {
		cg_nomem(s);
		return;
	}
	for (i = s->nodes[0].first_child; i != CG_NONE; i = s->nodes[i].next_sibling)
		n_todo++;
	/* push the roots in reverse so the first root comes out first */
	{
		size_t at = n_todo;
		for (i = s->nodes[0].first_child; i != CG_NONE; i = s->nodes[i].next_sibling)
			todo[--at] = (uint32_t)i;
	}
	while (n_todo > 0) {
		uint32_t id = todo[--n_todo], c;
		const struct cg_node *n = &s->nodes[id];
		size_t n_children = 0, at;
		fprintf(out, "fl=(%u)\nfn=(%u)\n", (unsigned)n->file_id, (unsigned)n->func_id);
		cg_put_costs(out, n->line, s->self + (size_t)id * ne, s->n_events);
		for (c = n->first_child; c != CG_NONE; c = s->nodes[c].next_sibling) {
			const struct cg_node *ch = &s->nodes[c];
			if (ch->file_id != n->file_id)
				fprintf(out, "cfl=(%u)\n", (unsigned)ch->file_id);
			fprintf(out, "cfn=(%u)\ncalls=", (unsigned)ch->func_id);
			cg_put_u64(out, ch->calls ? ch->calls : 1);
			putc_unlocked(' ', out);
			cg_put_u64(out, ch->line);
			putc_unlocked('\n', out);
			cg_put_costs(out, n->line, s->incl + (size_t)c * ne, s->n_events);
			n_children++;
		}
		putc_unlocked('\n', out);
		at = n_todo + n_children;
		n_todo = at;
		for (c = n->first_child; c != CG_NONE; c = s->nodes[c].next_sibling)
			todo[--at] = c;
	}
	free(todo);
}

/* ---- entry point ---------------------------------------------------------------------- */

static void cg_free(struct cg_state *s)
{
	free(s->arena);
	free(s->cols);
	free(s->u64);
	free(s->str);
	free(s->cmd);
	free(s->funcs.slots);
	free(s->files.slots);
	free(s->children.slots);
	free(s->func_file);
	free(s->func_line);
	free(s->func_names);
	free(s->file_names);
	free(s->nodes);
	free(s->self);
	free(s->incl);
	free(s->row_node);
	free(s->segs);
	free(s->events);
}

int tk_bfbin_to_callgrind(const char *in_path, FILE *out, tk_bfbin_convert *cv)
{
	const struct cg_col *func_col, *file_col, *line_col, *inv_col;
	bfbin_callback_t cbs;
	struct cg_state s;
	int rc;

	memset(&s, 0, sizeof(s));
	rc = tk__bfconv_init(&s.base, cv, in_path);
	if (rc != TK_OK)
		return rc;
	if (out == NULL)
		return tk__bfconv_fail(&s.base, TK_EINVAL, "no output stream was given");
	s.out = out;
	s.exe_col = -1;
	memset(&cbs, 0, sizeof(cbs));
	cbs.error_cb = tk__bfconv_parse_error;
	cbs.table_begin_basic_cb = cg_table_begin;
	cbs.table_begin_keyval_cb = cg_table_begin;
	cbs.column_uint64_cb = cg_column_uint64;
	cbs.column_string_cb = cg_column_string;
	cbs.column_bool_cb = cg_column_bool;
	cbs.row_begin_cb = cg_row_begin;
	cbs.data_uint64_cb = cg_data_uint64;
	cbs.data_string_cb = cg_data_string;
	cbs.data_bool_cb = cg_data_bool;
	cbs.row_end_cb = cg_row_end;
	cbs.table_end_basic_cb = cg_table_end;
	cbs.table_end_keyval_cb = cg_table_end;
	rc = tk__bfconv_run(&s.base, &cbs, 0, NULL);
	if (rc != TK_OK)
		goto done;

	/* The checks and messages of Byfl's bfbin2cgrind, in its order. */
	if (s.n_funcs_tables == 0) {
		rc = tk__bfconv_fail(&s.base, TK_EFORMAT,
				     "Failed to find a Functions table in %s; please re-compile your application with "
				     "-bf-by-func or, preferably, -bf-call-stack and re-run it",
				     s.base.in_path);
		goto done;
	}
	if (s.n_sysinfo_tables == 0) {
		rc = tk__bfconv_fail(&s.base, TK_EFORMAT, "Failed to find a System Information table in %s", s.base.in_path);
		goto done;
	}
	if (s.n_cmdline_tables == 0) {
		rc = tk__bfconv_fail(&s.base, TK_EFORMAT, "Failed to find a Command Line table in %s", s.base.in_path);
		goto done;
	}
	line_col = cg_find_col(&s, "Line number", "Leaf line number", 1);
	inv_col = cg_find_col(&s, "Invocations", NULL, 1);
	file_col = cg_find_col(&s, "File name", "Leaf file name", 0);
	func_col = cg_find_col(&s, "Demangled function name", "Demangled call stack", 0);
	if ((rc = cg_need_col(&s, line_col, "a \"Line number\" or \"Leaf line number\"", TK_BFBIN_UINT64)) != TK_OK ||
	    (rc = cg_need_col(&s, inv_col, "an \"Invocations\"", TK_BFBIN_UINT64)) != TK_OK ||
	    (rc = cg_need_col(&s, file_col, "a \"File name\" or \"Leaf file name\"", TK_BFBIN_STRING)) != TK_OK ||
	    (rc = cg_need_col(&s, func_col, "a \"Demangled function name\" or \"Demangled call stack\"",
			      TK_BFBIN_STRING)) != TK_OK)
		goto done;
	if ((rc = cg_events(&s)) != TK_OK || (rc = cg_build(&s, func_col, file_col, line_col, inv_col)) != TK_OK)
		goto done;
	cg_write(&s);
	rc = s.base.rc != TK_OK ? s.base.rc : tk__bfconv_check_output(&s.base, out);
done:
	cg_free(&s);
	return rc;
}
