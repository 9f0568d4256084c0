/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the bfbin module's reader and writer: the exact bytes of the reference,
 * every callback order, NULL callbacks, every error message, truncation at every byte,
 * live input through a pipe and a growing file fed by a writer thread, the writer's
 * refusals, and random round trips (the seed is printed).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tk_test.h"
#include "tracekit/bfbin.h"
#include "tracekit/bfbin_writer.h"

/* ---- a callback list that records every call as one line of text ------------------- */

struct rec {
	char *log;
	size_t len, cap;
	int errors;
	bfbin_callback_t *cbs; /* for the test that changes callbacks mid-parse */
};

static void rec_add(struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void rec_add(struct rec *r, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(r->log ? r->log + r->len : NULL, r->log ? r->cap - r->len : 0, fmt, ap);
		va_end(ap);
		assert_true(n >= 0);
		if (r->log != NULL && (size_t)n + 2 <= r->cap - r->len)
			break;
		r->cap = (r->cap + (size_t)n + 2) * 2;
		r->log = realloc(r->log, r->cap);
		assert_non_null(r->log);
		if (r->len == 0)
			r->log[0] = '\0';
	}
	r->len += (size_t)n;
	r->log[r->len++] = '\n';
	r->log[r->len] = '\0';
}

static void rec_free(struct rec *r)
{
	free(r->log);
	memset(r, 0, sizeof(*r));
}

static const char *rec_text(struct rec *r)
{
	return r->log ? r->log : "";
}

static void r_error(void *ud, const char *m)
{
	((struct rec *)ud)->errors++;
	rec_add(ud, "ERROR %s", m);
}
static void r_tb(void *ud, const char *n)
{
	rec_add(ud, "table_begin_basic %s", n);
}
static void r_te(void *ud)
{
	rec_add(ud, "table_end_basic");
}
static void r_tk(void *ud, const char *n)
{
	rec_add(ud, "table_begin_keyval %s", n);
}
static void r_tke(void *ud)
{
	rec_add(ud, "table_end_keyval");
}
static void r_cb(void *ud)
{
	rec_add(ud, "column_begin");
}
static void r_cu(void *ud, const char *n)
{
	rec_add(ud, "column_uint64 %s", n);
}
static void r_cs(void *ud, const char *n)
{
	rec_add(ud, "column_string %s", n);
}
static void r_cbo(void *ud, const char *n)
{
	rec_add(ud, "column_bool %s", n);
}
static void r_ce(void *ud)
{
	rec_add(ud, "column_end");
}
static void r_rb(void *ud)
{
	rec_add(ud, "row_begin");
}
static void r_du(void *ud, uint64_t v)
{
	rec_add(ud, "data_uint64 %llu", (unsigned long long)v);
}
static void r_ds(void *ud, const char *v)
{
	rec_add(ud, "data_string %s", v);
}
static void r_db(void *ud, uint8_t v)
{
	rec_add(ud, "data_bool %u", (unsigned)v);
}
static void r_re(void *ud)
{
	rec_add(ud, "row_end");
}

static const bfbin_callback_t all_cbs = { r_error, r_tb, r_te,  r_tk, r_tke, r_cb, r_cu, r_cs,
					  r_cbo,   r_ce, r_rb, r_du, r_ds,  r_db, r_re };

/* ---- building files ---------------------------------------------------------------- */

static void put_str16(struct tkt_buf *b, const char *s)
{
	size_t n = strlen(s);
	unsigned char len[2] = { (unsigned char)(n >> 8), (unsigned char)n };
	tkt_buf_put(b, len, 2);
	tkt_buf_put(b, s, n);
}

static void put_byte(struct tkt_buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;
	tkt_buf_put(b, &c, 1);
}

static void put_u64(struct tkt_buf *b, uint64_t v)
{
	unsigned char x[8];
	int i;
	for (i = 7; i >= 0; i--, v >>= 8)
		x[i] = (unsigned char)v;
	tkt_buf_put(b, x, 8);
}

/* The example of the reference: basic table "Command line", column "Argument", row "-x". */
static const unsigned char ref_cmdline[] = "BYFLBIN\x01\x00\x0c"
					   "Command line\x02\x00\x08"
					   "Argument\x00\x01\x00\x02-x\x00\x00";
/* The key:value example of the reference: table "K", key "Answer" = 42. */
static const unsigned char ref_keyval[] = "BYFLBIN\x02\x00\x01K\x01\x00\x06"
					  "Answer\x00\x00\x00\x00\x00\x00\x00\x2a\x00\x00";

static char *write_with(void (*fill)(tk_bfbin_writer *), size_t *len)
{
	const char *path = tkt_path("written.byfl");
	tk_bfbin_writer *w;

	assert_int_equal(tk_bfbin_writer_open(&w, path, 0), TK_OK);
	fill(w);
	assert_int_equal(tk_bfbin_writer_close(w), TK_OK);
	assert_false(tkt_exists(tkt_path("written.byfl.part")));
	return tkt_read_file(path, len);
}

static void fill_ref_cmdline(tk_bfbin_writer *w)
{
	assert_int_equal(tk_bfbin_begin_basic(w, "Command line"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_STRING, "Argument"), TK_OK);
	assert_int_equal(tk_bfbin_put_string(w, "-x"), TK_OK);
	assert_int_equal(tk_bfbin_end_row(w), TK_OK);
	assert_int_equal(tk_bfbin_end_table(w), TK_OK);
}

static void fill_ref_keyval(tk_bfbin_writer *w)
{
	assert_int_equal(tk_bfbin_begin_keyval(w, "K"), TK_OK);
	assert_int_equal(tk_bfbin_kv_uint64(w, "Answer", 42), TK_OK);
	assert_int_equal(tk_bfbin_end_table(w), TK_OK);
}

/* A file with every kind of table, type and edge value. */
static void fill_rich(tk_bfbin_writer *w)
{
	assert_int_equal(tk_bfbin_begin_basic(w, "Functions"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_UINT64, "Load operations"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_STRING, "Demangled function name"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_BOOL, "Leaf"), TK_OK);
	assert_int_equal(tk_bfbin_put_uint64(w, 0), TK_OK);
	assert_int_equal(tk_bfbin_put_string(w, "main"), TK_OK);
	assert_int_equal(tk_bfbin_put_bool(w, 1), TK_OK);
	assert_int_equal(tk_bfbin_end_row(w), TK_OK);
	assert_int_equal(tk_bfbin_put_uint64(w, UINT64_MAX), TK_OK);
	assert_int_equal(tk_bfbin_put_string(w, ""), TK_OK);
	assert_int_equal(tk_bfbin_put_bool(w, 0), TK_OK);
	assert_int_equal(tk_bfbin_end_row(w), TK_OK);
	assert_int_equal(tk_bfbin_end_table(w), TK_OK);
	assert_int_equal(tk_bfbin_begin_keyval(w, "Program"), TK_OK);
	assert_int_equal(tk_bfbin_kv_uint64(w, "Integer operations", 123456789), TK_OK);
	assert_int_equal(tk_bfbin_kv_string(w, "Name", "a \"quoted\", name"), TK_OK);
	assert_int_equal(tk_bfbin_kv_bool(w, "Done", 5), TK_OK);
	assert_int_equal(tk_bfbin_end_table(w), TK_OK);
	assert_int_equal(tk_bfbin_begin_basic(w, "Empty"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_UINT64, "Nothing"), TK_OK);
	assert_int_equal(tk_bfbin_end_table(w), TK_OK);
	assert_int_equal(tk_bfbin_begin_keyval(w, "No keys"), TK_OK);
	assert_int_equal(tk_bfbin_end_table(w), TK_OK);
	assert_int_equal(tk_bfbin_begin_basic(w, "No columns"), TK_OK);
	assert_int_equal(tk_bfbin_end_row(w), TK_OK);
	assert_int_equal(tk_bfbin_end_row(w), TK_OK);
	assert_int_equal(tk_bfbin_end_table(w), TK_OK);
}

static const char rich_log[] = "table_begin_basic Functions\n"
			       "column_begin\n"
			       "column_uint64 Load operations\n"
			       "column_string Demangled function name\n"
			       "column_bool Leaf\n"
			       "column_end\n"
			       "row_begin\n"
			       "data_uint64 0\n"
			       "data_string main\n"
			       "data_bool 1\n"
			       "row_end\n"
			       "row_begin\n"
			       "data_uint64 18446744073709551615\n"
			       "data_string \n"
			       "data_bool 0\n"
			       "row_end\n"
			       "table_end_basic\n"
			       "table_begin_keyval Program\n"
			       "column_begin\n"
			       "column_uint64 Integer operations\n"
			       "column_string Name\n"
			       "column_bool Done\n"
			       "column_end\n"
			       "row_begin\n"
			       "data_uint64 123456789\n"
			       "data_string a \"quoted\", name\n"
			       "data_bool 1\n"
			       "row_end\n"
			       "table_end_keyval\n"
			       "table_begin_basic Empty\n"
			       "column_begin\n"
			       "column_uint64 Nothing\n"
			       "column_end\n"
			       "table_end_basic\n"
			       "table_begin_keyval No keys\n"
			       "column_begin\n"
			       "column_end\n"
			       "row_begin\n"
			       "row_end\n"
			       "table_end_keyval\n"
			       "table_begin_basic No columns\n"
			       "column_begin\n"
			       "column_end\n"
			       "row_begin\n"
			       "row_end\n"
			       "row_begin\n"
			       "row_end\n"
			       "table_end_basic\n";

static int parse_mem_log(const void *data, size_t len, struct rec *r)
{
	memset(r, 0, sizeof(*r));
	return tk_bfbin_parse_mem(data, len, "mem.byfl", &all_cbs, r);
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_reference_bytes(void **state)
{
	size_t len;
	char *bytes;
	struct rec r;

	(void)state;
	bytes = write_with(fill_ref_cmdline, &len);
	assert_int_equal(len, sizeof(ref_cmdline) - 1);
	assert_memory_equal(bytes, ref_cmdline, len);
	free(bytes);
	bytes = write_with(fill_ref_keyval, &len);
	assert_int_equal(len, sizeof(ref_keyval) - 1);
	assert_memory_equal(bytes, ref_keyval, len);
	free(bytes);

	assert_int_equal(parse_mem_log(ref_cmdline, sizeof(ref_cmdline) - 1, &r), TK_OK);
	assert_string_equal(rec_text(&r), "table_begin_basic Command line\ncolumn_begin\ncolumn_string Argument\n"
					  "column_end\nrow_begin\ndata_string -x\nrow_end\ntable_end_basic\n");
	rec_free(&r);
	assert_int_equal(parse_mem_log(ref_keyval, sizeof(ref_keyval) - 1, &r), TK_OK);
	assert_string_equal(rec_text(&r), "table_begin_keyval K\ncolumn_begin\ncolumn_uint64 Answer\ncolumn_end\n"
					  "row_begin\ndata_uint64 42\nrow_end\ntable_end_keyval\n");
	rec_free(&r);
}

static void test_callback_order(void **state)
{
	size_t len;
	char *bytes = write_with(fill_rich, &len);
	struct rec r;

	(void)state;
	assert_int_equal(parse_mem_log(bytes, len, &r), TK_OK);
	assert_string_equal(rec_text(&r), rich_log);
	assert_int_equal(r.errors, 0);
	rec_free(&r);

	/* The same through the file path of the seed API. */
	memset(&r, 0, sizeof(r));
	bf_process_byfl_file(tkt_path("written.byfl"), (bfbin_callback_t *)&all_cbs, &r, 0);
	assert_string_equal(rec_text(&r), rich_log);
	rec_free(&r);
	free(bytes);
}

/* Key:value entries interleave header and value on disk; clients see columns first. */
static void test_keyval_interleaved(void **state)
{
	struct tkt_buf b = { 0 };
	struct rec r;

	(void)state;
	tkt_buf_str(&b, "BYFLBIN");
	put_byte(&b, 2);
	put_str16(&b, "System information");
	put_byte(&b, 2);
	put_str16(&b, "Host name");
	put_str16(&b, "node7");
	put_byte(&b, 3);
	put_str16(&b, "Flag");
	put_byte(&b, 7); /* a bool byte other than 0/1 passes through unchanged */
	put_byte(&b, 1);
	put_str16(&b, "Pid");
	put_u64(&b, 0x0102030405060708ull);
	put_byte(&b, 0);
	put_byte(&b, 0);
	assert_int_equal(parse_mem_log(b.p, b.len, &r), TK_OK);
	assert_string_equal(rec_text(&r), "table_begin_keyval System information\ncolumn_begin\n"
					  "column_string Host name\ncolumn_bool Flag\ncolumn_uint64 Pid\ncolumn_end\n"
					  "row_begin\ndata_string node7\ndata_bool 7\ndata_uint64 72623859790382856\n"
					  "row_end\ntable_end_keyval\n");
	rec_free(&r);
	tkt_buf_free(&b);
}

static int n_calls;
static void count0(void *ud)
{
	(void)ud;
	n_calls++;
}
static void count_str(void *ud, const char *s)
{
	(void)ud;
	(void)s;
	n_calls++;
}

static void test_null_callbacks(void **state)
{
	size_t len;
	char *bytes = write_with(fill_rich, &len);
	bfbin_callback_t none;
	bfbin_callback_t some;

	(void)state;
	memset(&none, 0, sizeof(none));
	assert_int_equal(tk_bfbin_parse_mem(bytes, len, NULL, &none, NULL), TK_OK);
	bf_process_byfl_file(tkt_path("written.byfl"), &none, NULL, 0);
	bf_process_byfl_file(tkt_path("written.byfl"), NULL, NULL, 0); /* accepted, does nothing */
	bf_process_byfl_file(NULL, &none, NULL, 0);
	/* An error with a NULL error_cb is silent but still reported by the extension. */
	assert_int_equal(tk_bfbin_parse_mem(bytes, len - 1, NULL, &none, NULL), TK_ETRUNC);

	memset(&some, 0, sizeof(some));
	some.row_begin_cb = count0;
	some.table_begin_keyval_cb = count_str;
	n_calls = 0;
	assert_int_equal(tk_bfbin_parse_mem(bytes, len, NULL, &some, NULL), TK_OK);
	assert_int_equal(n_calls, 6 + 2); /* rows: 2 + 1 + 0 + 1 (no keys) + 2; 2 key:value tables */
	free(bytes);
	assert_int_equal(tk_bfbin_parse_mem(NULL, 1, NULL, &none, NULL), TK_EINVAL);
	assert_int_equal(tk_bfbin_parse(NULL, &none, NULL, NULL), TK_EINVAL);
	assert_int_equal(tk_bfbin_parse("x", NULL, NULL, NULL), TK_EINVAL);
}

/* A callback may change the callback list while the file is parsed, as with Byfl. */
static void switch_on_data(void *ud, const char *name)
{
	struct rec *r = ud;
	rec_add(r, "table %s", name);
	if (strcmp(name, "Program") == 0)
		r->cbs->data_uint64_cb = r_du;
}

static void test_callbacks_changed_midway(void **state)
{
	size_t len;
	char *bytes = write_with(fill_rich, &len);
	bfbin_callback_t cbs;
	struct rec r;

	(void)state;
	memset(&cbs, 0, sizeof(cbs));
	memset(&r, 0, sizeof(r));
	r.cbs = &cbs;
	cbs.table_begin_basic_cb = switch_on_data;
	cbs.table_begin_keyval_cb = switch_on_data;
	assert_int_equal(tk_bfbin_parse_mem(bytes, len, NULL, &cbs, &r), TK_OK);
	assert_string_equal(rec_text(&r), "table Functions\ntable Program\ndata_uint64 123456789\ntable Empty\n"
					  "table No keys\ntable No columns\n");
	rec_free(&r);
	free(bytes);
}

static void expect_error(const void *data, size_t len, int code, const char *message)
{
	struct rec r;
	int rc = parse_mem_log(data, len, &r);
	const char *err;

	assert_int_equal(rc, code);
	assert_int_equal(r.errors, 1);
	err = strstr(rec_text(&r), "ERROR ");
	assert_non_null(err);
	assert_string_equal(err + 6, message);
	rec_free(&r);
}

static void test_errors(void **state)
{
	struct tkt_buf b = { 0 };
	struct rec r;

	(void)state;
	expect_error("BYFLBIX\x00", 8, TK_EFORMAT, "File mem.byfl does not appear to be a Byfl binary-output file\n");
	expect_error("BYF", 3, TK_ETRUNC, "Failed to read the file header from mem.byfl (file is truncated: 3 of 7 bytes)\n");
	expect_error("", 0, TK_ETRUNC, "Failed to read the file header from mem.byfl (file is truncated: 0 of 7 bytes)\n");
	expect_error("BYFLBIN", 7, TK_ETRUNC,
		     "Failed to read a table tag from mem.byfl at byte offset 7 (file is truncated)\n");
	expect_error("BYFLBIN\x03\x00\x01T\x00\x00", 12, TK_ECORRUPT,
		     "mem.byfl is corrupt at byte offset 7: unknown table tag 0x03\n");
	expect_error("BYFLBIN\x01\x00\x01T\x04\x00\x01" "C\x00\x00\x00", 17, TK_ECORRUPT,
		     "mem.byfl is corrupt at byte offset 11: unknown column tag 0x04 in table \"T\"\n");
	expect_error("BYFLBIN\x01\x00\x01T\x03\x00\x01" "C\x00\x02\x01\x00\x00", 19, TK_ECORRUPT,
		     "mem.byfl is corrupt at byte offset 16: unknown row tag 0x02 in table \"T\"\n");
	expect_error("BYFLBIN\x02\x00\x01T\x09\x00\x01" "C\x00\x00", 16, TK_ECORRUPT,
		     "mem.byfl is corrupt at byte offset 11: unknown column tag 0x09 in key:value table \"T\"\n");
	expect_error("BYFLBIN\x01\x00\x05Tab", 13, TK_ETRUNC,
		     "Failed to read a 5-byte table name from mem.byfl at byte offset 10 (file is truncated)\n");
	expect_error("BYFLBIN\x01\x00\x01T\x01\x00\x01" "C\x00\x01\x00\x00\x00", 20, TK_ETRUNC,
		     "Failed to read a uint64 value of table \"T\" from mem.byfl at byte offset 17 (file is truncated)\n");
	expect_error("BYFLBIN\x01\x00\x01T\x02\x00\x01" "C\x00\x01\x00", 18, TK_ETRUNC,
		     "Failed to read the length of a string value of table \"T\" from mem.byfl at byte offset 17 (file is "
		     "truncated)\n");
	expect_error("BYFLBIN\x02\x00\x01T\x02\x00\x01" "C\x00\x09xyz", 20, TK_ETRUNC,
		     "Failed to read a 9-byte string value of table \"T\" from mem.byfl at byte offset 17 (file is "
		     "truncated)\n");
	expect_error("BYFLBIN\x01\x00\x01T\x03\x00\x01" "C\x00\x01\x01\x00", 18, TK_ETRUNC,
		     "Failed to read a row tag of table \"T\" from mem.byfl at byte offset 18 (file is truncated)\n");
	expect_error("BYFLBIN\x01\x00\x01T\x03\x00\x01" "C\x00\x01\x01\x00", 19, TK_ETRUNC,
		     "Failed to read a table tag from mem.byfl at byte offset 19 (file is truncated)\n");

	/* Rows before the error were delivered; nothing after it. */
	assert_int_equal(parse_mem_log("BYFLBIN\x01\x00\x01T\x03\x00\x01" "C\x00\x01\x01\x01", 19, &r), TK_ETRUNC);
	assert_string_equal(rec_text(&r), "table_begin_basic T\ncolumn_begin\ncolumn_bool C\ncolumn_end\nrow_begin\n"
					  "data_bool 1\nrow_end\nrow_begin\nERROR Failed to read a bool value of table "
					  "\"T\" from mem.byfl at byte offset 19 (file is truncated)\n");
	rec_free(&r);

	/* Bytes after the end-of-file tag are ignored, as Byfl does. */
	tkt_buf_put(&b, ref_cmdline, sizeof(ref_cmdline) - 1);
	tkt_buf_str(&b, "trailing garbage");
	assert_int_equal(parse_mem_log(b.p, b.len, &r), TK_OK);
	assert_int_equal(r.errors, 0);
	rec_free(&r);
	tkt_buf_free(&b);

	/* Files: a missing one, and a directory. */
	memset(&r, 0, sizeof(r));
	bf_process_byfl_file(tkt_path("no-such-file.byfl"), (bfbin_callback_t *)&all_cbs, &r, 0);
	assert_int_equal(r.errors, 1);
	assert_non_null(strstr(rec_text(&r), "Failed to open "));
	assert_non_null(strstr(rec_text(&r), "no-such-file.byfl (No such file or directory)"));
	rec_free(&r);
	memset(&r, 0, sizeof(r));
	assert_int_equal(tk_bfbin_parse(tkt_dir(), &all_cbs, &r, NULL), TK_EIO);
	assert_non_null(strstr(rec_text(&r), "(Is a directory)"));
	rec_free(&r);
}

/* Every strict prefix of a valid file is truncated: a clean TK_ETRUNC, one message. */
static void test_truncated_everywhere(void **state)
{
	size_t len, cut;
	char *bytes = write_with(fill_rich, &len);
	const char *path = tkt_path("cut.byfl");

	(void)state;
	for (cut = 0; cut < len; cut++) {
		struct rec r;
		int rc = parse_mem_log(bytes, cut, &r);
		if (rc != TK_ETRUNC || r.errors != 1 || strstr(rec_text(&r), "truncated") == NULL)
			fail_msg("cut at %zu: rc %d, log:\n%s", cut, rc, rec_text(&r));
		rec_free(&r);
		if (cut % 17 == 0) { /* the file path as well, now and then */
			tkt_write_file(path, bytes, cut);
			memset(&r, 0, sizeof(r));
			assert_int_equal(tk_bfbin_parse(path, &all_cbs, &r, NULL), TK_ETRUNC);
			assert_int_equal(r.errors, 1);
			rec_free(&r);
		}
	}
	free(bytes);
}

static void test_limits(void **state)
{
	struct tkt_buf b = { 0 };
	struct rec r;
	unsigned i;
	tk_bfbin_writer *w;
	static char big[65535 + 2];

	(void)state;
	/* One column too many. */
	tkt_buf_str(&b, "BYFLBIN");
	put_byte(&b, 1);
	put_str16(&b, "Wide");
	for (i = 0; i <= TK_BFBIN_MAX_COLUMNS; i++) {
		put_byte(&b, 1);
		put_str16(&b, "");
	}
	assert_int_equal(tk_bfbin_parse_mem(b.p, b.len, "wide.byfl", &(bfbin_callback_t){ .error_cb = r_error },
					    memset(&r, 0, sizeof(r))),
			 TK_ETOOBIG);
	assert_string_equal(rec_text(&r), "ERROR wide.byfl: table \"Wide\" at byte offset 7 has more than 1048576 "
					  "columns\n");
	rec_free(&r);
	tkt_buf_free(&b);

	/* A key:value table beyond TK_BFBIN_MAX_KEYVAL_BYTES, read from a file. */
	memset(big, 'v', sizeof(big) - 2);
	tkt_buf_str(&b, "BYFLBIN");
	put_byte(&b, 2);
	put_str16(&b, "Huge");
	for (i = 0; i < TK_BFBIN_MAX_KEYVAL_BYTES / 65535 + 2; i++) {
		put_byte(&b, 2);
		put_str16(&b, "k");
		put_str16(&b, big);
	}
	put_byte(&b, 0);
	put_byte(&b, 0);
	tkt_write_file(tkt_path("huge.byfl"), b.p, b.len);
	tkt_buf_free(&b);
	memset(&r, 0, sizeof(r));
	assert_int_equal(tk_bfbin_parse(tkt_path("huge.byfl"), &all_cbs, &r, NULL), TK_ETOOBIG);
	assert_non_null(strstr(rec_text(&r), "key:value table \"Huge\" at byte offset 7 is larger than 67108864 bytes"));
	assert_null(strstr(rec_text(&r), "column_begin")); /* refused before any column callback */
	rec_free(&r);

	/* The writer refuses the same table before writing anything. */
	assert_int_equal(tk_bfbin_writer_open(&w, tkt_path("huge2.byfl"), 0), TK_OK);
	assert_int_equal(tk_bfbin_begin_keyval(w, "Huge"), TK_OK);
	for (i = 0;; i++) {
		int rc = tk_bfbin_kv_string(w, "k", big);
		if (rc != TK_OK) {
			assert_int_equal(rc, TK_ETOOBIG);
			break;
		}
	}
	assert_int_equal(i, TK_BFBIN_MAX_KEYVAL_BYTES / (3 + 1 + 2 + 65535));
	assert_int_equal(tk_bfbin_writer_close(w), TK_OK);
	memset(&r, 0, sizeof(r));
	assert_int_equal(tk_bfbin_parse(tkt_path("huge2.byfl"), &(bfbin_callback_t){ .error_cb = r_error }, &r, NULL),
			 TK_OK);
	rec_free(&r);
	unlink(tkt_path("huge.byfl"));
	unlink(tkt_path("huge2.byfl"));
}

/* ---- the writer's refusals ---------------------------------------------------------- */

static void test_writer_states(void **state)
{
	tk_bfbin_writer *w;
	static char long_str[65536 + 1];
	uint64_t before;
	size_t len;
	char *bytes;
	struct rec r;

	(void)state;
	assert_int_equal(tk_bfbin_writer_open(NULL, "x", 0), TK_EINVAL);
	assert_int_equal(tk_bfbin_writer_open(&w, "", 0), TK_EINVAL);
	assert_null(w);
	assert_int_equal(tk_bfbin_writer_open(&w, "x", 0x80), TK_EINVAL);
	assert_int_equal(tk_bfbin_writer_open(&w, tkt_path("no/such/dir/x.byfl"), 0), TK_ENOENT);
	assert_int_equal(tk_bfbin_writer_open_fd(&w, -1), TK_EINVAL);

	assert_int_equal(tk_bfbin_writer_open(&w, tkt_path("states.byfl"), 0), TK_OK);
	assert_true(tkt_exists(tkt_path("states.byfl.part")));
	assert_int_equal(tk_bfbin_put_uint64(w, 1), TK_ESTATE);
	assert_int_equal(tk_bfbin_end_row(w), TK_ESTATE);
	assert_int_equal(tk_bfbin_end_table(w), TK_ESTATE);
	assert_int_equal(tk_bfbin_kv_bool(w, "k", 1), TK_ESTATE);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_UINT64, "c"), TK_ESTATE);
	assert_int_equal(tk_bfbin_begin_basic(w, NULL), TK_EINVAL);

	assert_int_equal(tk_bfbin_begin_basic(w, "T"), TK_OK);
	assert_int_equal(tk_bfbin_begin_basic(w, "U"), TK_ESTATE);
	assert_int_equal(tk_bfbin_begin_keyval(w, "U"), TK_ESTATE);
	assert_int_equal(tk_bfbin_add_column(w, (tk_bfbin_type)9, "c"), TK_EINVAL);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_UINT64, "n"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_STRING, "s"), TK_OK);
	before = tk_bfbin_writer_bytes(w);
	/* Refused values leave no byte behind. */
	assert_int_equal(tk_bfbin_put_string(w, "x"), TK_EINVAL);
	assert_string_equal(tk_bfbin_writer_errmsg(w), "tk_bfbin_put_string: column 1 of table \"T\" holds uint64 values");
	assert_int_equal(tk_bfbin_put_bool(w, 1), TK_EINVAL);
	assert_int_equal(tk_bfbin_writer_bytes(w), before);
	assert_int_equal(tk_bfbin_put_uint64(w, 7), TK_OK);
	memset(long_str, 'a', sizeof(long_str) - 1);
	before = tk_bfbin_writer_bytes(w);
	assert_int_equal(tk_bfbin_put_string(w, long_str), TK_ETOOBIG);
	assert_string_equal(tk_bfbin_writer_errmsg(w),
			    "a string value of 65536 bytes exceeds the format's limit of 65535 bytes (table \"T\")");
	assert_int_equal(tk_bfbin_put_string(w, NULL), TK_EINVAL);
	assert_int_equal(tk_bfbin_writer_bytes(w), before);
	assert_int_equal(tk_bfbin_end_row(w), TK_ESTATE); /* one value missing: the row stays open */
	assert_int_equal(tk_bfbin_end_table(w), TK_ESTATE);
	long_str[65535] = '\0'; /* exactly the limit is fine */
	assert_int_equal(tk_bfbin_put_string(w, long_str), TK_OK);
	assert_int_equal(tk_bfbin_put_uint64(w, 8), TK_ESTATE); /* row is full */
	assert_int_equal(tk_bfbin_end_row(w), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_BOOL, "late"), TK_ESTATE);
	assert_int_equal(tk_bfbin_end_table(w), TK_OK);
	assert_int_equal(tk_bfbin_begin_keyval(w, "K"), TK_OK);
	assert_int_equal(tk_bfbin_kv_string(w, "k", long_str), TK_OK);
	long_str[65535] = 'a';
	assert_int_equal(tk_bfbin_kv_string(w, "k2", long_str), TK_ETOOBIG);
	assert_int_equal(tk_bfbin_kv_uint64(w, long_str, 1), TK_ETOOBIG);
	assert_int_equal(tk_bfbin_put_uint64(w, 1), TK_ESTATE);
	/* close ends the open key:value table */
	assert_int_equal(tk_bfbin_writer_close(w), TK_OK);
	assert_false(tkt_exists(tkt_path("states.byfl.part")));

	bytes = tkt_read_file(tkt_path("states.byfl"), &len);
	assert_int_equal(parse_mem_log(bytes, len, &r), TK_OK);
	assert_int_equal(r.errors, 0);
	assert_non_null(strstr(rec_text(&r), "table_end_keyval\n"));
	rec_free(&r);
	free(bytes);

	/* Closing inside an unfinished row discards the file. */
	assert_int_equal(tk_bfbin_writer_open(&w, tkt_path("unfinished.byfl"), 0), TK_OK);
	assert_int_equal(tk_bfbin_begin_basic(w, "T"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_UINT64, "a"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_UINT64, "b"), TK_OK);
	assert_int_equal(tk_bfbin_put_uint64(w, 1), TK_OK);
	assert_int_equal(tk_bfbin_writer_close(w), TK_ESTATE);
	assert_false(tkt_exists(tkt_path("unfinished.byfl")));
	assert_false(tkt_exists(tkt_path("unfinished.byfl.part")));

	/* Abort removes the partial file; NULL is accepted everywhere it should be. */
	assert_int_equal(tk_bfbin_writer_open(&w, tkt_path("aborted.byfl"), 0), TK_OK);
	tk_bfbin_writer_abort(w);
	assert_false(tkt_exists(tkt_path("aborted.byfl.part")));
	tk_bfbin_writer_abort(NULL);
	assert_int_equal(tk_bfbin_writer_close(NULL), TK_OK);
	assert_int_equal(tk_bfbin_put_uint64(NULL, 1), TK_EINVAL);
	assert_string_equal(tk_bfbin_writer_errmsg(NULL), "");
}

static void test_writer_full_disk(void **state)
{
	tk_bfbin_writer *w;
	int i, rc = TK_OK;

	(void)state;
	/* /dev/full is not a regular file: written directly, and every write fails. */
	assert_int_equal(tk_bfbin_writer_open(&w, "/dev/full", 0), TK_OK);
	assert_int_equal(tk_bfbin_begin_basic(w, "T"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_STRING, "s"), TK_OK);
	for (i = 0; i < 100000 && rc == TK_OK; i++) {
		rc = tk_bfbin_put_string(w, "a string that fills the buffer quickly enough");
		if (rc == TK_OK)
			rc = tk_bfbin_end_row(w);
	}
	assert_int_equal(rc, TK_ENOSPC); /* the buffer filled, the write failed, sticky */
	assert_non_null(strstr(tk_bfbin_writer_errmsg(w), "cannot write /dev/full at byte offset 0: No space left"));
	assert_int_equal(tk_bfbin_end_row(w), TK_ENOSPC);
	assert_int_equal(tk_bfbin_writer_close(w), TK_ENOSPC);

	/* A small file fails at close. */
	assert_int_equal(tk_bfbin_writer_open(&w, "/dev/full", 0), TK_OK);
	assert_int_equal(tk_bfbin_writer_close(w), TK_ENOSPC);
}

static void test_writer_live_flag(void **state)
{
	tk_bfbin_writer *w;
	const char *path = tkt_path("live.byfl");
	size_t len;
	char *bytes;

	(void)state;
	assert_int_equal(tk_bfbin_writer_open(&w, path, TK_BFBIN_WRITER_LIVE), TK_OK);
	assert_true(tkt_exists(path));
	assert_false(tkt_exists(tkt_path("live.byfl.part")));
	fill_ref_cmdline(w); /* table end pushes the bytes to the file */
	bytes = tkt_read_file(path, &len);
	assert_int_equal(len, sizeof(ref_cmdline) - 2);
	free(bytes);
	assert_int_equal(tk_bfbin_writer_close(w), TK_OK);
	bytes = tkt_read_file(path, &len);
	assert_int_equal(len, sizeof(ref_cmdline) - 1);
	assert_memory_equal(bytes, ref_cmdline, len);
	free(bytes);
}

/* ---- live input ---------------------------------------------------------------------- */

struct feeder {
	const char *path; /* FIFO or regular file to append to */
	int fd;           /* or a descriptor to write to (then path is NULL) */
	const unsigned char *data;
	size_t len;
	unsigned piece_delay_us;
	size_t stop_at; /* write only this many bytes (len for all) */
	/* If set, stop after half the bytes until the reader has gone idle once (at most 10 s),
	 * so that "the reader saw an empty pipe" does not depend on scheduling. */
	const atomic_int *wait_idle;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;
	int fd = f->path ? open(f->path, O_WRONLY | O_APPEND | O_CLOEXEC) : f->fd;
	size_t off = 0, piece = 1;
	int waited = f->wait_idle == NULL;

	if (fd < 0) /* cmocka's asserts are not for threads */
		abort();
	while (off < f->stop_at) {
		size_t n = piece < f->stop_at - off ? piece : f->stop_at - off;
		if (!waited && off >= f->stop_at / 2) {
			for (int i = 0; i < 10000 && atomic_load(f->wait_idle) == 0; i++)
				usleep(1000);
			waited = 1;
		}
		ssize_t k = write(fd, f->data + off, n);
		if (k <= 0)
			abort();
		off += (size_t)k;
		piece = piece * 2 + 1; /* 1, 3, 7, ... bytes: cuts fall everywhere in the first items */
		if (piece > 4096)
			piece = 1;
		usleep(f->piece_delay_us);
	}
	if (f->path)
		close(fd);
	return NULL;
}

static atomic_int idle_calls;
static void on_idle(void *ud)
{
	(void)ud;
	atomic_fetch_add(&idle_calls, 1);
}

static void test_live_pipe(void **state)
{
	size_t len;
	char *bytes = write_with(fill_rich, &len);
	const char *fifo = tkt_path("live.fifo");
	tk_bfbin_parse_options opts = TK_BFBIN_PARSE_OPTIONS_INIT;
	struct feeder f = { fifo, -1, (const unsigned char *)bytes, len, 300, len, &idle_calls };
	bfbin_callback_t cbs = all_cbs;
	pthread_t t;
	struct rec r;
	int pfd[2];

	(void)state;
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* live input, named pipe, pieces with pauses; idle_cb fires while the pipe is empty */
	idle_calls = 0;
	opts.live_input = 1;
	opts.idle_cb = on_idle;
	memset(&r, 0, sizeof(r));
	assert_int_equal(pthread_create(&t, NULL, feed, &f), 0);
	assert_int_equal(tk_bfbin_parse(fifo, &cbs, &r, &opts), TK_OK);
	pthread_join(t, NULL);
	assert_string_equal(rec_text(&r), rich_log);
	assert_true(idle_calls > 0);
	rec_free(&r);

	/* the seed API, live and not live, on the same pipe */
	memset(&r, 0, sizeof(r));
	assert_int_equal(pthread_create(&t, NULL, feed, &f), 0);
	bf_process_byfl_file(fifo, &cbs, &r, 1);
	pthread_join(t, NULL);
	assert_string_equal(rec_text(&r), rich_log);
	rec_free(&r);
	memset(&r, 0, sizeof(r));
	assert_int_equal(pthread_create(&t, NULL, feed, &f), 0);
	bf_process_byfl_file(fifo, &cbs, &r, 0);
	pthread_join(t, NULL);
	assert_string_equal(rec_text(&r), rich_log);
	rec_free(&r);

	/* an anonymous pipe through the descriptor API; the writer closes early: truncated */
	assert_int_equal(pipe(pfd), 0);
	f.path = NULL;
	f.fd = pfd[1];
	f.stop_at = len / 2;
	memset(&r, 0, sizeof(r));
	assert_int_equal(pthread_create(&t, NULL, feed, &f), 0);
	pthread_join(t, NULL);
	close(pfd[1]);
	assert_int_equal(tk_bfbin_parse_fd(pfd[0], "pipe", &cbs, &r, NULL), TK_ETRUNC);
	assert_int_equal(r.errors, 1);
	close(pfd[0]);
	rec_free(&r);
	unlink(fifo);
	free(bytes);
}

static void test_live_growing_file(void **state)
{
	size_t len;
	char *bytes = write_with(fill_rich, &len);
	const char *path = tkt_path("growing.byfl");
	tk_bfbin_parse_options opts = TK_BFBIN_PARSE_OPTIONS_INIT;
	struct feeder f = { path, -1, (const unsigned char *)bytes, len, 2000, len, NULL };
	pthread_t t;
	struct rec r;
	uint64_t t0;
	struct timespec ts;

	(void)state;
	tkt_write_file(path, "", 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(pthread_create(&t, NULL, feed, &f), 0);
	bf_process_byfl_file(path, (bfbin_callback_t *)&all_cbs, &r, 1); /* Byfl hangs here; we must not */
	pthread_join(t, NULL);
	assert_string_equal(rec_text(&r), rich_log);
	rec_free(&r);

	/* The extension on a file that stops growing before its end: timeout, then truncated. */
	tkt_write_file(path, "", 0);
	f.stop_at = len - 3;
	f.piece_delay_us = 500;
	opts.live_input = 1;
	opts.live_timeout_ms = 200;
	idle_calls = 0;
	opts.idle_cb = on_idle;
	memset(&r, 0, sizeof(r));
	assert_int_equal(pthread_create(&t, NULL, feed, &f), 0);
	assert_int_equal(tk_bfbin_parse(path, &all_cbs, &r, &opts), TK_ETRUNC);
	pthread_join(t, NULL);
	assert_int_equal(r.errors, 1);
	assert_non_null(strstr(rec_text(&r), "(no new data for 200 ms)"));
	assert_true(idle_calls > 0);
	rec_free(&r);

	/* A complete file with live input returns at once (the end-of-file tag ends it). */
	tkt_write_file(path, bytes, len);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	memset(&r, 0, sizeof(r));
	bf_process_byfl_file(path, (bfbin_callback_t *)&all_cbs, &r, 1);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	assert_true((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 - t0 < 1000);
	assert_string_equal(rec_text(&r), rich_log);
	rec_free(&r);
	free(bytes);
}

static volatile sig_atomic_t g_stop;

static void *set_stop_later(void *arg)
{
	(void)arg;
	usleep(50000);
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED); /* the documented way from a thread */
	return NULL;
}

static void stop_in_row(void *ud)
{
	(void)ud;
	g_stop = 1;
}

static void test_stop(void **state)
{
	size_t len;
	char *bytes = write_with(fill_rich, &len);
	const char *path = tkt_path("stopped.byfl");
	tk_bfbin_parse_options opts = TK_BFBIN_PARSE_OPTIONS_INIT;
	bfbin_callback_t cbs = all_cbs;
	pthread_t t;
	struct rec r;

	(void)state;
	/* From another thread while the parser waits for a file that never completes. */
	tkt_write_file(path, bytes, len / 2);
	g_stop = 0;
	opts.live_input = 1;
	opts.stop = &g_stop;
	memset(&r, 0, sizeof(r));
	assert_int_equal(pthread_create(&t, NULL, set_stop_later, NULL), 0);
	assert_int_equal(tk_bfbin_parse(path, &cbs, &r, &opts), TK_ECANCELED);
	pthread_join(t, NULL);
	assert_int_equal(r.errors, 0); /* cancellation is not an error of the file */
	rec_free(&r);

	/* From a callback: the parser stops before the next row. */
	g_stop = 0;
	cbs.row_end_cb = stop_in_row;
	opts.live_input = 0;
	memset(&r, 0, sizeof(r));
	tkt_write_file(path, bytes, len);
	assert_int_equal(tk_bfbin_parse(path, &cbs, &r, &opts), TK_ECANCELED);
	assert_string_equal(rec_text(&r), "table_begin_basic Functions\ncolumn_begin\ncolumn_uint64 Load operations\n"
					  "column_string Demangled function name\ncolumn_bool Leaf\ncolumn_end\n"
					  "row_begin\ndata_uint64 0\ndata_string main\ndata_bool 1\n");
	rec_free(&r);
	free(bytes);
}

/* A stop flag set during a very wide table's column list ends it there, not at its first row. */
static int g_columns_seen;
static void stop_at_column(void *ud, const char *name)
{
	(void)ud;
	(void)name;
	if (++g_columns_seen == 5000)
		g_stop = 1;
}

static void test_stop_in_columns(void **state)
{
	const char *path = tkt_path("wide_stop.byfl");
	tk_bfbin_parse_options opts = TK_BFBIN_PARSE_OPTIONS_INIT;
	bfbin_callback_t cbs = { 0 };
	tk_bfbin_writer *w;
	char name[32];
	unsigned i, kv;

	(void)state;
	for (kv = 0; kv < 2; kv++) {
		assert_int_equal(tk_bfbin_writer_open(&w, path, 0), TK_OK);
		assert_int_equal(kv ? tk_bfbin_begin_keyval(w, "KV") : tk_bfbin_begin_basic(w, "Wide"), TK_OK);
		for (i = 0; i < 200000; i++) {
			snprintf(name, sizeof(name), "c%u", i);
			assert_int_equal(kv ? tk_bfbin_kv_bool(w, name, 1) : tk_bfbin_add_column(w, TK_BFBIN_BOOL, name),
					 TK_OK);
		}
		assert_int_equal(tk_bfbin_end_table(w), TK_OK);
		assert_int_equal(tk_bfbin_writer_close(w), TK_OK);
		g_stop = 0;
		g_columns_seen = 0;
		opts.stop = &g_stop;
		cbs.column_bool_cb = stop_at_column;
		assert_int_equal(tk_bfbin_parse(path, &cbs, NULL, &opts), TK_ECANCELED);
		assert_true(g_columns_seen >= 5000 && g_columns_seen <= 5000 + 1024);
	}
	g_stop = 0;
}

/* ---- progress ------------------------------------------------------------------------ */

struct progress_log {
	uint64_t done[64], total[64];
	unsigned n;
	int bad_order;
};

static void on_progress(void *ud, uint64_t done, uint64_t total)
{
	struct progress_log *pl = ud;

	if (pl->n > 0 && done < pl->done[pl->n - 1])
		pl->bad_order = 1;
	if (pl->n < 64) {
		pl->done[pl->n] = done;
		pl->total[pl->n] = total;
	}
	pl->n++;
}

/* A file of about 3.3 MB (100,000 rows of a uint64 and a 20-byte string) and trailing junk. */
static const char *write_progress_file(size_t *size)
{
	const char *path = tkt_path("progress.byfl");
	tk_bfbin_writer *w;
	unsigned i;
	int fd;
	struct stat sb;

	assert_int_equal(tk_bfbin_writer_open(&w, path, 0), TK_OK);
	assert_int_equal(tk_bfbin_begin_basic(w, "T"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_UINT64, "n"), TK_OK);
	assert_int_equal(tk_bfbin_add_column(w, TK_BFBIN_STRING, "s"), TK_OK);
	for (i = 0; i < 100000; i++) {
		assert_int_equal(tk_bfbin_put_uint64(w, i), TK_OK);
		assert_int_equal(tk_bfbin_put_string(w, "twenty bytes of text"), TK_OK);
		assert_int_equal(tk_bfbin_end_row(w), TK_OK);
	}
	assert_int_equal(tk_bfbin_end_table(w), TK_OK);
	assert_int_equal(tk_bfbin_writer_close(w), TK_OK);
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "junk", 4), 4); /* ignored after the end tag */
	assert_int_equal(fstat(fd, &sb), 0);
	close(fd);
	*size = (size_t)sb.st_size;
	return path;
}

static void test_progress(void **state)
{
	tk_bfbin_parse_options opts = TK_BFBIN_PARSE_OPTIONS_INIT;
	bfbin_callback_t cbs = { 0 };
	struct progress_log pl;
	size_t size;
	const char *path = write_progress_file(&size);
	unsigned i;
	int fd, pfd[2];
	pid_t pid;

	(void)state;
	opts.progress_cb = on_progress;
	/* A regular file: 0 first, then about once per MiB, the whole size last. */
	memset(&pl, 0, sizeof(pl));
	assert_int_equal(tk_bfbin_parse(path, &cbs, &pl, &opts), TK_OK);
	assert_false(pl.bad_order);
	assert_true(pl.n >= 4 && pl.n <= 12);
	assert_int_equal(pl.done[0], 0);
	for (i = 0; i < pl.n; i++)
		assert_int_equal(pl.total[i], size);
	assert_int_equal(pl.done[pl.n - 1], size);

	/* The same through a descriptor. */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	memset(&pl, 0, sizeof(pl));
	assert_int_equal(tk_bfbin_parse_fd(fd, path, &cbs, &pl, &opts), TK_OK);
	assert_int_equal(pl.done[pl.n - 1], size);
	close(fd);

	/* A pipe: the total is unknown (0), done still grows to what was parsed. */
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		size_t len;
		char *bytes = tkt_read_file(path, &len);
		close(pfd[0]);
		_exit(write(pfd[1], bytes, len - 4) == (ssize_t)(len - 4) ? 0 : 1);
	}
	close(pfd[1]);
	memset(&pl, 0, sizeof(pl));
	assert_int_equal(tk_bfbin_parse_fd(pfd[0], "<pipe>", &cbs, &pl, &opts), TK_OK);
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	assert_false(pl.bad_order);
	assert_true(pl.n >= 2);
	assert_int_equal(pl.total[0], 0);
	assert_int_equal(pl.done[pl.n - 1], size - 4);

	/* Memory input: the size is the total. */
	{
		size_t len;
		char *bytes = tkt_read_file(path, &len);
		memset(&pl, 0, sizeof(pl));
		/* tk_bfbin_parse_mem() takes no options: progress is for files and descriptors */
		assert_int_equal(tk_bfbin_parse_mem(bytes, len, NULL, &cbs, &pl), TK_OK);
		assert_int_equal(pl.n, 0);
		free(bytes);
	}
}

/* ---- random round trips -------------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rng(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void random_string(char *s, size_t max)
{
	size_t n = rng() % 4 == 0 ? rng() % max : rng() % 24, i;
	for (i = 0; i < n; i++)
		s[i] = (char)(1 + rng() % 255); /* any byte but NUL */
	s[n] = '\0';
}

static void test_round_trip_random(void **state)
{
	static char s[70000], key[300];
	const char *path = tkt_path("random.byfl");
	unsigned seed = (unsigned)time(NULL), iter;
	const char *env = getenv("TK_TEST_SEED");

	(void)state;
	if (env != NULL)
		seed = (unsigned)strtoul(env, NULL, 0);
	printf("test_round_trip_random: seed %u (set TK_TEST_SEED to repeat)\n", seed);
	rng_state = seed;
	for (iter = 0; iter < 40; iter++) {
		tk_bfbin_writer *w;
		struct rec want, got;
		unsigned t, n_tables = (unsigned)(rng() % 6);
		size_t len;
		char *bytes;

		memset(&want, 0, sizeof(want));
		assert_int_equal(tk_bfbin_writer_open(&w, path, 0), TK_OK);
		for (t = 0; t < n_tables; t++) {
			unsigned c, ncols = (unsigned)(rng() % 6), row, nrows = (unsigned)(rng() % 50);
			tk_bfbin_type types[6];
			random_string(key, sizeof(key) - 1);
			if (rng() % 3 == 0) {
				assert_int_equal(tk_bfbin_begin_keyval(w, key), TK_OK);
				rec_add(&want, "table_begin_keyval %s", key);
				rec_add(&want, "column_begin");
				struct rec vals;
				memset(&vals, 0, sizeof(vals));
				for (c = 0; c < ncols; c++) {
					random_string(key, sizeof(key) - 1);
					switch (rng() % 3) {
					case 0: {
						uint64_t v = rng();
						assert_int_equal(tk_bfbin_kv_uint64(w, key, v), TK_OK);
						rec_add(&want, "column_uint64 %s", key);
						rec_add(&vals, "data_uint64 %llu", (unsigned long long)v);
						break;
					}
					case 1:
						random_string(s, TK_BFBIN_MAX_STRING + 1);
						assert_int_equal(tk_bfbin_kv_string(w, key, s), TK_OK);
						rec_add(&want, "column_string %s", key);
						rec_add(&vals, "data_string %s", s);
						break;
					default: {
						int v = (int)(rng() % 2);
						assert_int_equal(tk_bfbin_kv_bool(w, key, v), TK_OK);
						rec_add(&want, "column_bool %s", key);
						rec_add(&vals, "data_bool %d", v);
						break;
					}
					}
				}
				rec_add(&want, "column_end");
				rec_add(&want, "row_begin");
				if (vals.len > 0)
					rec_add(&want, "%.*s", (int)vals.len - 1, vals.log);
				rec_add(&want, "row_end");
				rec_add(&want, "table_end_keyval");
				rec_free(&vals);
				assert_int_equal(tk_bfbin_end_table(w), TK_OK);
				continue;
			}
			assert_int_equal(tk_bfbin_begin_basic(w, key), TK_OK);
			rec_add(&want, "table_begin_basic %s", key);
			rec_add(&want, "column_begin");
			for (c = 0; c < ncols; c++) {
				static const char *const names[] = { "", "uint64", "string", "bool" };
				types[c] = (tk_bfbin_type)(1 + rng() % 3);
				random_string(key, sizeof(key) - 1);
				assert_int_equal(tk_bfbin_add_column(w, types[c], key), TK_OK);
				rec_add(&want, "column_%s %s", names[types[c]], key);
			}
			rec_add(&want, "column_end");
			for (row = 0; row < nrows; row++) {
				rec_add(&want, "row_begin");
				for (c = 0; c < ncols; c++) {
					if (types[c] == TK_BFBIN_UINT64) {
						uint64_t v = rng() >> (rng() % 64);
						assert_int_equal(tk_bfbin_put_uint64(w, v), TK_OK);
						rec_add(&want, "data_uint64 %llu", (unsigned long long)v);
					} else if (types[c] == TK_BFBIN_STRING) {
						random_string(s, 2000);
						assert_int_equal(tk_bfbin_put_string(w, s), TK_OK);
						rec_add(&want, "data_string %s", s);
					} else {
						int v = (int)(rng() % 2);
						assert_int_equal(tk_bfbin_put_bool(w, v), TK_OK);
						rec_add(&want, "data_bool %d", v);
					}
				}
				assert_int_equal(tk_bfbin_end_row(w), TK_OK);
				rec_add(&want, "row_end");
			}
			assert_int_equal(tk_bfbin_end_table(w), TK_OK);
			rec_add(&want, "table_end_basic");
		}
		assert_int_equal(tk_bfbin_writer_close(w), TK_OK);
		bytes = tkt_read_file(path, &len);
		assert_int_equal(parse_mem_log(bytes, len, &got), TK_OK);
		if (strcmp(rec_text(&want), rec_text(&got)) != 0)
			fail_msg("round trip %u differs (seed %u)", iter, seed);
		rec_free(&got);
		memset(&got, 0, sizeof(got));
		assert_int_equal(tk_bfbin_parse(path, &all_cbs, &got, NULL), TK_OK);
		assert_string_equal(rec_text(&want), rec_text(&got));
		rec_free(&got);
		rec_free(&want);
		free(bytes);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_bytes),
		cmocka_unit_test(test_callback_order),
		cmocka_unit_test(test_keyval_interleaved),
		cmocka_unit_test(test_null_callbacks),
		cmocka_unit_test(test_callbacks_changed_midway),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_writer_states),
		cmocka_unit_test(test_writer_full_disk),
		cmocka_unit_test(test_writer_live_flag),
		cmocka_unit_test(test_live_pipe),
		cmocka_unit_test(test_live_growing_file),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_stop_in_columns),
		cmocka_unit_test(test_round_trip_random),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
