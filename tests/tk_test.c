/* SPDX-License-Identifier: MIT */
/* Shared helpers for the unit tests (see tk_test.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tk_test.h"

static char g_dir[256];

static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char child[512];

	if (d == NULL) {
		unlink(path);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
		remove_tree(child);
	}
	closedir(d);
	rmdir(path);
}

static void cleanup_dir(void)
{
	if (g_dir[0] != '\0' && getenv("TK_TEST_KEEP") == NULL)
		remove_tree(g_dir);
}

const char *tkt_dir(void)
{
	if (g_dir[0] == '\0') {
		const char *tmp = getenv("TMPDIR");
		snprintf(g_dir, sizeof(g_dir), "%s/tktest.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (mkdtemp(g_dir) == NULL) {
			fprintf(stderr, "mkdtemp(%s): %s\n", g_dir, strerror(errno));
			abort();
		}
		atexit(cleanup_dir);
	}
	return g_dir;
}

const char *tkt_path(const char *name)
{
	static char paths[8][512];
	static unsigned next;
	char *p = paths[next++ % 8];

	snprintf(p, 512, "%s/%s", tkt_dir(), name);
	return p;
}

void tkt_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	if (len > 0)
		assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

char *tkt_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (f == NULL)
		return NULL;
	for (;;) {
		size_t got;
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int tkt_exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

void tkt_buf_put(struct tkt_buf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		assert_non_null(b->p);
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

void tkt_buf_str(struct tkt_buf *b, const char *s)
{
	tkt_buf_put(b, s, strlen(s));
}

void tkt_buf_u32(struct tkt_buf *b, uint32_t v, int big_endian)
{
	unsigned char x[4];
	if (big_endian) {
		x[0] = (unsigned char)(v >> 24);
		x[1] = (unsigned char)(v >> 16);
		x[2] = (unsigned char)(v >> 8);
		x[3] = (unsigned char)v;
	} else {
		x[0] = (unsigned char)v;
		x[1] = (unsigned char)(v >> 8);
		x[2] = (unsigned char)(v >> 16);
		x[3] = (unsigned char)(v >> 24);
	}
	tkt_buf_put(b, x, 4);
}

void tkt_buf_free(struct tkt_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void tkt_kev_header(struct tkt_buf *b, int big_endian, unsigned syspage_len)
{
	char tmp[64];
	unsigned i;

	tkt_buf_str(b, "TRACE_HEADER_BEGIN::TRACE_FILE_NAME::test.kevTRACE_VER_MAJOR::1TRACE_VER_MINOR::01");
	tkt_buf_str(b, big_endian ? "TRACE_BIG_ENDIAN::TRUE" : "TRACE_LITTLE_ENDIAN::TRUE");
	tkt_buf_str(b, "TRACE_ENCODING::16 byte eventsTRACE_CYCLES_PER_SEC::1000000000TRACE_CPU_NUM::2");
	snprintf(tmp, sizeof(tmp), "TRACE_SYSPAGE_LEN::%u", syspage_len);
	tkt_buf_str(b, tmp);
	tkt_buf_str(b, "TRACE_HEADER_END::");
	for (i = 0; i < syspage_len; i++)
		tkt_buf_put(b, "", 1);
}

void tkt_kev_slot(struct tkt_buf *b, int big_endian, uint32_t h, uint32_t d0, uint32_t d1, uint32_t d2)
{
	tkt_buf_u32(b, h, big_endian);
	tkt_buf_u32(b, d0, big_endian);
	tkt_buf_u32(b, d1, big_endian);
	tkt_buf_u32(b, d2, big_endian);
}
