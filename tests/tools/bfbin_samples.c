/* SPDX-License-Identifier: MIT */
/*
 * Writes the deterministic .byfl samples the golden tests convert, through the public
 * writer API:
 *   call_stack: what a program built with -bf-call-stack writes at exit (Functions with
 *     leaf-first call stacks and a recursion, Program, Instruction mix, Environment
 *     variables, Command line, Byfl options, System information);
 *   by_func: the same program built with -bf-by-func (function names, no stacks);
 *   tricky: strings CSV, XML and spreadsheets trip over (quotes, commas, a leading '-',
 *     markup, line breaks, control bytes, bad UTF-8), odd sheet names, empty tables,
 *     extreme integers;
 *   dup_tables: two tables with one name; slash_name: a table name with '/';
 *   big_uint: integers above INT64_MAX; dup_columns: a table with two columns of one name;
 *   empty_key: a key:value table with an empty key;
 *   large: 12,000 rows of pseudo-random integers and strings (about 500 KB that deflate
 *     cannot shrink much), for converters writing into a filesystem that fills up.
 * Usage: bfbin_samples NAME OUTPUT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/bfbin_writer.h"

static tk_bfbin_writer *g_w;

static void check(int rc, const char *what)
{
	if (rc != TK_OK) {
		fprintf(stderr, "bfbin_samples: %s: %s (%s)\n", what, tk_strerror(rc), tk_bfbin_writer_errmsg(g_w));
		exit(1);
	}
}

static void basic(const char *name)
{
	check(tk_bfbin_begin_basic(g_w, name), name);
}
static void col(tk_bfbin_type t, const char *name)
{
	check(tk_bfbin_add_column(g_w, t, name), name);
}
static void u64(uint64_t v)
{
	check(tk_bfbin_put_uint64(g_w, v), "uint64");
}
static void str(const char *v)
{
	check(tk_bfbin_put_string(g_w, v), "string");
}
static void boolean(int v)
{
	check(tk_bfbin_put_bool(g_w, v), "bool");
}
static void row(void)
{
	check(tk_bfbin_end_row(g_w), "row");
}
static void keyval(const char *name)
{
	check(tk_bfbin_begin_keyval(g_w, name), name);
}
static void kv_u64(const char *k, uint64_t v)
{
	check(tk_bfbin_kv_uint64(g_w, k, v), k);
}
static void kv_str(const char *k, const char *v)
{
	check(tk_bfbin_kv_string(g_w, k, v), k);
}
static void kv_bool(const char *k, int v)
{
	check(tk_bfbin_kv_bool(g_w, k, v), k);
}
static void end(void)
{
	check(tk_bfbin_end_table(g_w), "end table");
}

/* The 22 counters of Byfl's Functions table, in its order. */
static const char *const counters[22] = {
	"Load operations",
	"Store operations",
	"Floating-point operations",
	"Integer operations",
	"Function-call operations (non-exception-throwing)",
	"Function-call operations (exception-throwing)",
	"Unconditional and direct branch operations (removable)",
	"Unconditional and direct branch operations (mandatory)",
	"Conditional branch operations (not taken)",
	"Conditional branch operations (taken)",
	"Unconditional but indirect branch operations",
	"Multi-target (switch) branch operations",
	"Function-return operations",
	"Other branch operations",
	"Floating-point operation bits",
	"Integer operation bits",
	"Bytes loaded",
	"Bytes stored",
	"Calls to memset",
	"Bytes stored by memset",
	"Calls to memcpy and memmove",
	"Bytes loaded and stored by memcpy and memmove",
};

/* One Functions row: counters derived from a seed, so every cell differs. */
static void func_row(unsigned seed, uint64_t invocations, const char *mangled, const char *demangled,
		     const char *file, uint64_t line)
{
	unsigned i;

	for (i = 0; i < 22; i++)
		u64((uint64_t)seed * 100 + i * (seed % 7 + 1));
	u64(seed * 3 + 1); /* Unique bytes */
	u64(invocations);
	str(mangled);
	str(demangled);
	str(file);
	u64(line);
	row();
}

static void trailer_tables(int call_stack)
{
	keyval("Program");
	kv_u64("Load operations", 4280);
	kv_u64("Store operations", 2330);
	kv_u64("Floating-point operations", 1000);
	kv_u64("Integer operations", 123456);
	kv_u64("Bytes loaded", 34240);
	kv_u64("Bytes stored", 18640);
	end();
	keyval("Instruction mix");
	kv_u64("Load", 4280);
	kv_u64("Store", 2330);
	kv_u64("FAdd", 500);
	kv_u64("FMul", 500);
	kv_u64("Call", 77);
	end();
	keyval("Environment variables");
	kv_str("HOME", "/home/user");
	kv_str("PATH", "/usr/local/bin:/usr/bin:/bin");
	kv_str("BF_BINOUT", "app.byfl");
	end();
	basic("Command line");
	col(TK_BFBIN_STRING, "Argument");
	str("./app");
	row();
	str("-n");
	row();
	str("10");
	row();
	end();
	basic("Byfl options");
	col(TK_BFBIN_STRING, "Option");
	str(call_stack ? "-bf-call-stack" : "-bf-by-func");
	row();
	str("-bf-unique-bytes");
	row();
	end();
	keyval("System information");
	kv_str("Byfl version", "1.8.0");
	kv_str("LLVM version", "11.0.1");
	kv_str("Host name", "node7");
	kv_str("Working directory", "/home/user/src");
	kv_str("Executable name", "/home/user/src/app");
	kv_u64("Process ID", 4242);
	kv_str("Start time", "Mon May 17 10:00:00 2021");
	end();
}

static void functions_header(int call_stack)
{
	unsigned i;

	basic("Functions");
	for (i = 0; i < 22; i++)
		col(TK_BFBIN_UINT64, counters[i]);
	col(TK_BFBIN_UINT64, "Unique bytes");
	col(TK_BFBIN_UINT64, "Invocations");
	col(TK_BFBIN_STRING, call_stack ? "Mangled call stack" : "Mangled function name");
	col(TK_BFBIN_STRING, call_stack ? "Demangled call stack" : "Demangled function name");
	col(TK_BFBIN_STRING, call_stack ? "Leaf file name" : "File name");
	col(TK_BFBIN_UINT64, call_stack ? "Leaf line number" : "Line number");
}

static void call_stack(void)
{
	basic("Basic-block accesses");
	col(TK_BFBIN_UINT64, "Basic block");
	col(TK_BFBIN_UINT64, "Accesses");
	u64(1);
	u64(4096);
	row();
	end();
	functions_header(1);
	func_row(1, 1, "main", "main", "app.c", 40);
	func_row(2, 10, "_Z7computei main", "compute(int) # main", "compute.cpp", 12);
	func_row(3, 10, "_Z6helperd _Z7computei main", "helper(double) # compute(int) # main", "compute.cpp", 30);
	func_row(4, 1, "fib main", "fib # main", "app.c", 20);
	func_row(5, 2, "fib fib main", "fib # fib # main", "app.c", 20);
	func_row(6, 4, "fib fib fib main", "fib # fib # fib # main", "app.c", 20);
	func_row(7, 3, "memcpy _Z6helperd _Z7computei main", "memcpy # helper(double) # compute(int) # main", "", 0);
	end();
	trailer_tables(1);
}

static void by_func(void)
{
	functions_header(0);
	func_row(1, 1, "main", "main", "app.c", 40);
	func_row(2, 10, "_Z7computei", "compute(int)", "compute.cpp", 12);
	func_row(3, 100, "_Z6helperd", "helper(double)", "compute.cpp", 30);
	func_row(4, 7, "fib", "fib", "app.c", 20);
	end();
	trailer_tables(0);
}

static void tricky(void)
{
	basic("Strings");
	col(TK_BFBIN_STRING, "Text");
	col(TK_BFBIN_STRING, "-Leading dash \"column\"");
	col(TK_BFBIN_BOOL, "Flag");
	str("plain");
	str("");
	boolean(1);
	row();
	str("comma, and \"quotes\"");
	str("-x");
	boolean(0);
	row();
	str("<tag attr=\"v\">&amp;</tag>");
	str("line one\nline two\r\n\ttabbed");
	boolean(1);
	row();
	str("control \x01\x02\x1f bytes, DEL \x7f");
	str("bad UTF-8: \xff\xfe \xc3\x28 \xed\xa0\x80 \xef\xbf\xbf end");
	boolean(0);
	row();
	str("UTF-8: caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e");
	str("=1+1");
	boolean(1);
	row();
	end();
	basic("Numbers");
	col(TK_BFBIN_UINT64, "Zero");
	col(TK_BFBIN_UINT64, "Large");
	col(TK_BFBIN_UINT64, "INT64_MAX");
	u64(0);
	u64(1234567890123ull);
	u64(9223372036854775807ull);
	row();
	end();
	keyval("A key:value table whose name is longer than thirty-one characters");
	kv_u64("count", 3);
	kv_str("name", "a \"quoted\" <value>");
	kv_bool("enabled", 1);
	kv_bool("disabled", 0);
	end();
	keyval("A key:value table whose name is longer than thirty-one characters, again");
	kv_str("same start", "the sheet name is cut and numbered");
	end();
	keyval("Sheet: [odd] *names*?");
	kv_str("k", "v");
	end();
	keyval("'quoted'");
	kv_str("k", "v");
	end();
	keyval("No keys");
	end();
	basic("No rows");
	col(TK_BFBIN_UINT64, "Nothing");
	col(TK_BFBIN_STRING, "Nobody");
	end();
	basic("No columns");
	row();
	row();
	end();
	basic("history");
	col(TK_BFBIN_STRING, "Event");
	str("reserved sheet name in Excel");
	row();
	end();
}

static void dup_tables(void)
{
	basic("Table");
	col(TK_BFBIN_UINT64, "A");
	u64(1);
	row();
	end();
	basic("Table");
	col(TK_BFBIN_UINT64, "B");
	u64(2);
	row();
	end();
}

static void slash_name(void)
{
	basic("Bytes/op");
	col(TK_BFBIN_UINT64, "Ratio");
	u64(8);
	row();
	end();
}

static void big_uint(void)
{
	basic("Counters");
	col(TK_BFBIN_STRING, "Name");
	col(TK_BFBIN_UINT64, "Value");
	str("small");
	u64(42);
	row();
	str("INT64_MAX");
	u64(9223372036854775807ull);
	row();
	str("INT64_MAX + 1");
	u64(9223372036854775808ull);
	row();
	str("UINT64_MAX");
	u64(18446744073709551615ull);
	row();
	end();
	keyval("Totals");
	kv_u64("Huge", 18446744073709551615ull);
	kv_u64("Fine", 7);
	end();
}

static void empty_key(void)
{
	keyval("Empty key");
	kv_str("", "a key with no name");
	kv_u64("count", 1);
	end();
}

static void dup_columns(void)
{
	basic("Twice");
	col(TK_BFBIN_UINT64, "Same");
	col(TK_BFBIN_UINT64, "Same");
	u64(1);
	u64(2);
	row();
	end();
}

static void large(void)
{
	uint64_t x = 88172645463325252ull;
	char text[40];
	int r, c;

	basic("Large");
	for (c = 0; c < 4; c++) {
		char name[16];
		snprintf(name, sizeof(name), "Counter %d", c);
		col(TK_BFBIN_UINT64, name);
	}
	col(TK_BFBIN_STRING, "Text");
	for (r = 0; r < 12000; r++) {
		for (c = 0; c < 4; c++) {
			x ^= x << 13; /* xorshift64 */
			x ^= x >> 7;
			x ^= x << 17;
			u64(x >> 1); /* below INT64_MAX: SQLite takes them as they are */
		}
		snprintf(text, sizeof(text), "%016llx", (unsigned long long)(x * 0x9e3779b97f4a7c15ull));
		str(text);
		row();
	}
	end();
}

/* 20,000 one-row tables: a conversion whose end (closing, renaming) takes a while. */
static void many_tables(void)
{
	char name[32];
	int t;

	for (t = 0; t < 20000; t++) {
		snprintf(name, sizeof(name), "T%05d", t);
		basic(name);
		col(TK_BFBIN_UINT64, "v");
		u64((uint64_t)t);
		row();
		end();
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} samples[] = {
		{ "call_stack", call_stack }, { "by_func", by_func },       { "tricky", tricky },
		{ "dup_tables", dup_tables }, { "slash_name", slash_name }, { "big_uint", big_uint },
		{ "dup_columns", dup_columns }, { "empty_key", empty_key }, { "large", large },
		{ "many_tables", many_tables },
	};
	size_t i;

	if (argc != 3) {
		fputs("usage: bfbin_samples NAME OUTPUT\n", stderr);
		return 2;
	}
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		if (strcmp(argv[1], samples[i].name) == 0) {
			check(tk_bfbin_writer_open(&g_w, argv[2], 0), argv[2]);
			samples[i].fn();
			check(tk_bfbin_writer_close(g_w), "close");
			return 0;
		}
	}
	fprintf(stderr, "bfbin_samples: unknown sample %s\n", argv[1]);
	return 2;
}
