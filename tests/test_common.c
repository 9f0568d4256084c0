/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of src/common: CRC-32C (check value, chaining, every alignment and length
 * against a bitwise reference), the error list and errno mapping, crash-safe output files
 * and the clocks.
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/tk_crc32c.h"
#include "tk_test.h"
#include "tracekit/common.h"

/* The definition, one bit at a time: what every faster implementation must equal. */
static uint32_t crc_reference(uint32_t crc, const unsigned char *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);
	}
	return ~crc;
}

static void test_crc32c(void **state)
{
	static unsigned char buf[70000];
	uint32_t seed = 12345;

	(void)state;
	assert_int_equal(tk__crc32c(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(tk__crc32c(0, "", 0), 0);
	assert_int_equal(tk__crc32c(0x1234, NULL, 0), 0x1234);
	for (size_t i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (unsigned char)(seed >> 16);
	}
	/* every start alignment and short length, then lengths around the wide kernels' blocks */
	for (size_t off = 0; off < 16; off++)
		for (size_t len = 0; len < 300; len++)
			assert_int_equal(tk__crc32c(0, buf + off, len), crc_reference(0, buf + off, len));
	for (size_t len = 1000; len < sizeof(buf); len = len * 3 + 7)
		assert_int_equal(tk__crc32c(0, buf + 3, len), crc_reference(0, buf + 3, len));
	/* chaining: the CRC of a followed by b */
	for (size_t cut = 0; cut <= 4096; cut += 511)
		assert_int_equal(tk__crc32c(tk__crc32c(0, buf, cut), buf + cut, 4096 - cut), tk__crc32c(0, buf, 4096));
}

static void test_errors(void **state)
{
	(void)state;
	assert_string_equal(tk_strerror(TK_OK), "success");
	assert_string_equal(tk_strerror(TK_EROFS), "read-only file system");
	assert_string_equal(tk_strerror(-9999), "unknown error");
	assert_int_equal(tk_error_from_errno(ENOSPC), TK_ENOSPC);
	assert_int_equal(tk_error_from_errno(EROFS), TK_EROFS);
	assert_int_equal(tk_error_from_errno(ENOMEM), TK_ENOMEM);
	assert_int_equal(tk_error_from_errno(ENOENT), TK_ENOENT);
	/* every code has its own text */
#define CODE(name, value, text) value,
	static const int codes[] = { TK_ERRNO_MAP(CODE) };
#undef CODE
	for (size_t a = 0; a < sizeof(codes) / sizeof(codes[0]); a++)
		for (size_t b = a + 1; b < sizeof(codes) / sizeof(codes[0]); b++)
			assert_string_not_equal(tk_strerror(codes[a]), tk_strerror(codes[b]));
}

static void test_outfile(void **state)
{
	const char *path = tkt_path("out.txt");
	char part[4096];
	tk_outfile *of;
	size_t len;
	char *text;

	(void)state;
	snprintf(part, sizeof(part), "%s.part", path);
	/* nothing under the final name until commit */
	assert_int_equal(tk_outfile_open(&of, path, 0), TK_OK);
	fputs("hello\n", tk_outfile_stream(of));
	assert_false(tkt_exists(path));
	assert_string_equal(tk_outfile_temp_path(of), part);
	assert_int_equal(tk_outfile_commit(of), TK_OK);
	text = tkt_read_file(path, &len);
	assert_non_null(text);
	assert_string_equal(text, "hello\n");
	free(text);
	assert_false(tkt_exists(part));
	/* abort leaves the old file and no part */
	assert_int_equal(tk_outfile_open(&of, path, 0), TK_OK);
	fputs("other\n", tk_outfile_stream(of));
	tk_outfile_abort(of);
	text = tkt_read_file(path, &len);
	assert_string_equal(text, "hello\n");
	free(text);
	assert_false(tkt_exists(part));
	tk_outfile_abort(NULL);
	/* a device is written in place, never replaced */
	assert_int_equal(tk_outfile_open(&of, "/dev/null", 0), TK_OK);
	fputs("x", tk_outfile_stream(of));
	assert_int_equal(tk_outfile_commit(of), TK_OK);
	/* a full device: the commit says so */
	if (access("/dev/full", W_OK) == 0) {
		assert_int_equal(tk_outfile_open(&of, "/dev/full", 0), TK_OK);
		for (int i = 0; i < 10000; i++)
			fputs("0123456789abcdef", tk_outfile_stream(of));
		assert_int_equal(tk_outfile_commit(of), TK_ENOSPC);
	}
	/* a directory that does not exist */
	assert_int_not_equal(tk_outfile_open(&of, tkt_path("no/such/dir/x"), 0), TK_OK);
	assert_int_equal(tk_outfile_open(&of, "", 0), TK_EINVAL);
}

static void test_clocks(void **state)
{
	uint64_t a, b, n0, n1;

	(void)state;
	a = tk_clock_cycles();
	n0 = tk_clock_ns();
	usleep(2000);
	b = tk_clock_cycles();
	n1 = tk_clock_ns();
	assert_true(b > a);
	assert_true(n1 - n0 >= 2000000u);
	assert_true(tk_clock_cycles_per_sec() > 0);
	assert_int_equal(tk_clock_cycles_per_sec(), tk_clock_cycles_per_sec());
	assert_non_null(tk_version());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_outfile),
		cmocka_unit_test(test_clocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
