/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the symbols module (tracekit/symbols.h), on this test program itself (built
 * with -g): its own mappings from /proc/self/maps resolve its functions to their names and
 * lines; addresses in no mapping, mappings of missing, non-ELF or non-regular files stay
 * addresses; mappings replace each other by time; MMAP/MUNMAP/MAPNAME events and a .kev
 * file feed it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tk_test.h"
#include "tracekit/export.h"
#include "tracekit/kev.h"
#include "tracekit/symbols.h"

/* The function looked up: its definition runs from known_line to known_end. Its first
 * instruction belongs to the opening line without optimization and to its body's line with
 * -O2 (the line table's choice, not ours): either is the function's own source. */
static const int known_line = __LINE__ + 2;
__attribute__((noinline, used)) int tkt_symbols_known_function(int x);
__attribute__((noinline, used)) int tkt_symbols_known_function(int x)
{
	return x * 3 + 1;
}
static const int known_end = __LINE__ - 1;

typedef struct self_map {
	uint64_t start, end, offset;
} self_map;

static char exe[4096];
static self_map maps[64];
static size_t n_maps;

/* This program's own file mappings (all of them, executable or not). */
static void read_self_maps(void)
{
	char line[8192];
	FILE *f;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	n_maps = 0;
	while (fgets(line, sizeof(line), f) != NULL && n_maps < 64) {
		unsigned long long a, b, off;
		int at = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &a, &b, &off, &at) != 3 || at == 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line + at, exe) != 0)
			continue;
		maps[n_maps].start = a;
		maps[n_maps].end = b;
		maps[n_maps].offset = off;
		n_maps++;
	}
	fclose(f);
	assert_true(n_maps > 0);
}

static tk_symbols *self_symbols(uint64_t t)
{
	tk_symbols *s = NULL;

	read_self_maps();
	assert_int_equal(tk_symbols_new(&s), 0);
	for (size_t i = 0; i < n_maps; i++)
		assert_int_equal(tk_symbols_add_mapping(s, getpid(), t, maps[i].start, maps[i].end - maps[i].start,
							maps[i].offset, exe),
				 0);
	return s;
}

static uint64_t known_addr(void)
{
	int (*volatile fn)(int) = tkt_symbols_known_function;
	return (uint64_t)(uintptr_t)fn;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void test_resolves_own_function(void **state)
{
	tk_symbols *s = self_symbols(0);
	tk_symbol sym;
	char text[1024], expect[64];

	(void)state;
	assert_int_equal(tkt_symbols_known_function(2), 7);
	assert_int_equal(tk_symbols_lookup(s, getpid(), 0, known_addr(), &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	assert_int_equal(sym.offset, 0);
	assert_non_null(sym.file);
	assert_true(ends_with(sym.file, "test_symbols.c"));
	assert_in_range(sym.line, known_line, known_end);
	assert_string_equal(sym.module, exe);
	tk_symbols_format(&sym, text, sizeof(text));
	snprintf(expect, sizeof(expect), "tkt_symbols_known_function+0x0 (");
	assert_true(strncmp(text, expect, strlen(expect)) == 0);
	snprintf(expect, sizeof(expect), "test_symbols.c:%d)", sym.line);
	assert_true(ends_with(text, expect));

	/* inside the function: an offset; the second lookup of an address is cached */
	assert_int_equal(tk_symbols_lookup(s, getpid(), 0, known_addr() + 1, &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	assert_int_equal(sym.offset, 1);
	uint64_t hits = tk_symbols_get_stats(s)->cache_hits;
	assert_int_equal(tk_symbols_lookup(s, getpid(), 0, known_addr() + 1, &sym), 0);
	assert_int_equal(tk_symbols_get_stats(s)->cache_hits, hits + 1);
	assert_int_equal(tk_symbols_get_stats(s)->files, 1);
	tk_symbols_free(s);
}

/* A function whose symbol is a C++ name (as g++ would mangle tk::demo::run(int)), and one
 * whose symbol is a Rust v0 name: both shown demangled, or as they are on request. */
__attribute__((noinline)) int tkt_cxx_named(int x) __asm__("_ZN2tk4demo3runEi");
__attribute__((noinline)) int tkt_cxx_named(int x)
{
	return x * 3 + 1;
}
__attribute__((noinline)) int tkt_rust_named(int x) __asm__("_RNvNtCs1234_7mycrate4demo3run");
__attribute__((noinline)) int tkt_rust_named(int x)
{
	return x * 5 + 2;
}

static void test_demangled(void **state)
{
	(void)state;
	int (*volatile cxx)(int) = tkt_cxx_named;
	int (*volatile rust)(int) = tkt_rust_named;
	assert_int_equal(cxx(2), 7);
	assert_int_equal(rust(1), 7);
	for (int on = 1; on >= 0; on--) {
		tk_symbols *s = self_symbols(0);
		tk_symbol sym;
		if (!on)
			assert_int_equal(tk_symbols_set_demangle(s, 0), 0);
		assert_int_equal(tk_symbols_lookup(s, getpid(), 0, (uint64_t)(uintptr_t)cxx + 1, &sym), 0);
		assert_string_equal(sym.name, on ? "tk::demo::run(int)" : "_ZN2tk4demo3runEi");
		assert_int_equal(sym.offset, 1);
		assert_int_equal(tk_symbols_lookup(s, getpid(), 0, (uint64_t)(uintptr_t)rust, &sym), 0);
		assert_string_equal(sym.name, on ? "mycrate::demo::run" : "_RNvNtCs1234_7mycrate4demo3run");
		tk_symbols_free(s);
	}
	assert_int_equal(tk_symbols_set_demangle(NULL, 1), TK_EINVAL);
}

/* Hostile names: symbols of 3000 and 100 000 nested pointer types, past libiberty's
 * recursion limit (DMGL_NO_RECURSE_LIMIT must stay unset, or the recursion could exhaust
 * the stack): the first stays as it is, the second is longer than any name kept
 * (unresolved, as before demangling); one of 1000 is demangled in full. */
#define TKT_P10 "PPPPPPPPPP"
#define TKT_P100 TKT_P10 TKT_P10 TKT_P10 TKT_P10 TKT_P10 TKT_P10 TKT_P10 TKT_P10 TKT_P10 TKT_P10
#define TKT_P1000 TKT_P100 TKT_P100 TKT_P100 TKT_P100 TKT_P100 TKT_P100 TKT_P100 TKT_P100 TKT_P100 TKT_P100
#define TKT_P10000 TKT_P1000 TKT_P1000 TKT_P1000 TKT_P1000 TKT_P1000 TKT_P1000 TKT_P1000 TKT_P1000 TKT_P1000 TKT_P1000
#define TKT_P100000 \
	TKT_P10000 TKT_P10000 TKT_P10000 TKT_P10000 TKT_P10000 TKT_P10000 TKT_P10000 TKT_P10000 TKT_P10000 TKT_P10000
__attribute__((noinline)) int tkt_deep_named(int x) __asm__("_Z1f" TKT_P100000 "i");
__attribute__((noinline)) int tkt_deep_named(int x)
{
	return x * 7 + 3;
}
__attribute__((noinline)) int tkt_mid_named(int x) __asm__("_Z1h" TKT_P1000 TKT_P1000 TKT_P1000 "i");
__attribute__((noinline)) int tkt_mid_named(int x)
{
	return x * 13 + 3;
}
__attribute__((noinline)) int tkt_long_named(int x) __asm__("_Z1g" TKT_P1000 "i");
__attribute__((noinline)) int tkt_long_named(int x)
{
	return x * 11 + 3;
}

static void test_demangle_hostile(void **state)
{
	(void)state;
	int (*volatile deep)(int) = tkt_deep_named;
	int (*volatile longer)(int) = tkt_long_named;
	int (*volatile mid)(int) = tkt_mid_named;
	assert_int_equal(deep(1), 10);
	assert_int_equal(longer(1), 14);
	assert_int_equal(mid(1), 16);
	tk_symbols *s = self_symbols(0);
	tk_symbol sym;
	assert_int_equal(tk_symbols_lookup(s, getpid(), 0, (uint64_t)(uintptr_t)deep, &sym), TK_ENOENT);
	assert_int_equal(tk_symbols_lookup(s, getpid(), 0, (uint64_t)(uintptr_t)mid, &sym), 0);
	assert_int_equal(strlen(sym.name), 4 + 3000 + 1);
	assert_memory_equal(sym.name, "_Z1hPPP", 7);
	assert_int_equal(tk_symbols_lookup(s, getpid(), 0, (uint64_t)(uintptr_t)longer, &sym), 0);
	assert_int_equal(strlen(sym.name), strlen("g(int)") + 1000);
	assert_memory_equal(sym.name, "g(int***", 8);
	tk_symbols_free(s);
}

/* Fast-mode events hold 32 bits of an address: a position-independent program mapped above
 * 4 GiB still resolves when one mapping of the process has an address ending in them, and
 * stays an address when two have. */
static void test_truncated_address(void **state)
{
	const uint64_t delta = 0x5a5a00000000ull, delta2 = 0x7f0000000000ull; /* multiples of 2^32 */
	tk_symbols *s = NULL;
	tk_symbol sym;

	(void)state;
	read_self_maps();
	assert_int_equal(tk_symbols_new(&s), 0);
	for (size_t i = 0; i < n_maps; i++)
		assert_int_equal(tk_symbols_add_mapping(s, 9, 0, maps[i].start + delta, maps[i].end - maps[i].start,
							maps[i].offset, exe),
				 0);
	uint64_t low = (known_addr() + delta) & 0xffffffffu;
	assert_int_equal(tk_symbols_lookup(s, 9, 0, low, &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	assert_int_equal(sym.offset, 0);
	assert_int_equal(sym.addr, low); /* the address as given */
	assert_int_equal(tk_symbols_lookup(s, 9, 0, low + 1, &sym), 0);
	assert_int_equal(sym.offset, 1);
	/* the full address resolves as before */
	assert_int_equal(tk_symbols_lookup(s, 9, 0, known_addr() + delta, &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	/* the same binary mapped again elsewhere in the process: ambiguous, stays an address */
	for (size_t i = 0; i < n_maps; i++)
		assert_int_equal(tk_symbols_add_mapping(s, 9, 0, maps[i].start + delta2, maps[i].end - maps[i].start,
							maps[i].offset, exe),
				 0);
	assert_int_equal(tk_symbols_lookup(s, 9, 0, low + 2, &sym), TK_ENOENT);
	assert_null(sym.name);
	tk_symbols_free(s);
}

static void test_unmapped_stays_address(void **state)
{
	tk_symbols *s = self_symbols(0);
	tk_symbol sym;
	char text[64];

	(void)state;
	/* an address in no mapping, and a process without mappings */
	assert_int_equal(tk_symbols_lookup(s, getpid(), 0, 0x1234, &sym), TK_ENOENT);
	assert_null(sym.name);
	assert_null(sym.module);
	tk_symbols_format(&sym, text, sizeof(text));
	assert_string_equal(text, "0x1234");
	assert_int_equal(tk_symbols_lookup(s, getpid() + 1, 0, known_addr(), &sym), TK_ENOENT);
	tk_symbols_format(&sym, text, sizeof(text));
	assert_int_equal(strtoull(text, NULL, 16), known_addr());
	/* arguments */
	assert_int_equal(tk_symbols_lookup(NULL, 1, 0, 1, &sym), TK_EINVAL);
	assert_int_equal(tk_symbols_lookup(s, 1, 0, 1, NULL), TK_EINVAL);
	assert_int_equal(tk_symbols_add_mapping(s, 1, 0, 0x1000, 0, 0, "/bin/true"), TK_EINVAL);
	assert_int_equal(tk_symbols_add_mapping(s, 1, 0, UINT64_MAX, 2, 0, "/bin/true"), TK_EINVAL);
	assert_int_equal(tk_symbols_add_mapping(s, 1, 0, 0x1000, 0x1000, 0, "relative/path"), TK_EINVAL);
	assert_int_equal(tk_symbols_add_mapping(s, 1, 0, 0x1000, 0x1000, 0, NULL), TK_EINVAL);
	tk_symbols_free(s);
	tk_symbols_free(NULL);
}

static void test_missing_and_non_elf_files(void **state)
{
	tk_symbols *s = NULL;
	tk_symbol sym;
	const char *text_file = tkt_path("not-elf.txt"), *fifo = tkt_path("a-fifo");
	char dir[4096];

	(void)state;
	tkt_write_file(text_file, "just text, not an ELF file\n", 27);
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	snprintf(dir, sizeof(dir), "%s", tkt_dir());
	assert_int_equal(tk_symbols_new(&s), 0);
	assert_int_equal(tk_symbols_add_mapping(s, 7, 0, 0x10000, 0x1000, 0, "/nonexistent/tracekit/libnothing.so"), 0);
	assert_int_equal(tk_symbols_add_mapping(s, 7, 0, 0x20000, 0x1000, 0, text_file), 0);
	assert_int_equal(tk_symbols_add_mapping(s, 7, 0, 0x30000, 0x1000, 0, fifo), 0); /* must not block */
	assert_int_equal(tk_symbols_add_mapping(s, 7, 0, 0x40000, 0x1000, 0, dir), 0);
	for (uint64_t a = 0x10010; a < 0x50000; a += 0x10000) {
		assert_int_equal(tk_symbols_lookup(s, 7, 0, a, &sym), TK_ENOENT);
		assert_null(sym.name);
		assert_non_null(sym.module); /* the mapping was found, its file not usable */
		assert_int_equal(tk_symbols_lookup(s, 7, 0, a, &sym), TK_ENOENT); /* opened once */
	}
	assert_int_equal(tk_symbols_get_stats(s)->files, 4);
	assert_int_equal(tk_symbols_get_stats(s)->files_failed, 4);
	tk_symbols_free(s);
	unlink(fifo);
}

/* stat() as the symbols module calls it, from this program: when armed, the regular file at
 * swap_path is replaced by the FIFO swap_fifo just after it is looked at, as another process
 * could do between a check by name and an open by name. */
static char swap_path[4096], swap_fifo[4096];
static int swap_armed;

int stat(const char *restrict path, struct stat *restrict buf)
{
	int rc = fstatat(AT_FDCWD, path, buf, 0);
	if (swap_armed && strcmp(path, swap_path) == 0) {
		swap_armed = 0;
		if (rename(swap_fifo, swap_path) != 0)
			fail_msg("cannot swap a FIFO in for %s", swap_path);
	}
	return rc;
}

/* This process's open descriptors. */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* A regular file checked, then a FIFO in its place when opened: the binary is opened once,
 * without blocking, and what was opened is checked, so the lookup says "not found" at once
 * (opened by name after the check, the FIFO would block without a writer: the alarm fails
 * the test). No descriptor stays open for the files that fail, and a binary that resolves
 * gives its descriptor back when the symbols are freed. */
static void test_file_swapped_for_fifo(void **state)
{
	tk_symbols *s = NULL;
	tk_symbol sym;

	(void)state;
	snprintf(swap_path, sizeof(swap_path), "%s", tkt_path("swapped.so"));
	snprintf(swap_fifo, sizeof(swap_fifo), "%s", tkt_path("swapped.fifo"));
	unlink(swap_fifo);
	tkt_write_file(swap_path, "a regular file until it is opened\n", 34);
	assert_int_equal(mkfifo(swap_fifo, 0600), 0);
	int fds = count_fds();
	assert_int_equal(tk_symbols_new(&s), 0);
	assert_int_equal(tk_symbols_add_mapping(s, 9, 0, 0x10000, 0x1000, 0, swap_path), 0);
	swap_armed = 1;
	alarm(20);
	assert_int_equal(tk_symbols_lookup(s, 9, 0, 0x10010, &sym), TK_ENOENT);
	alarm(0);
	assert_int_equal(swap_armed, 0); /* the swap happened */
	struct stat sb;
	assert_int_equal(lstat(swap_path, &sb), 0);
	assert_true(S_ISFIFO(sb.st_mode));
	assert_null(sym.name);
	assert_int_equal(tk_symbols_get_stats(s)->files_failed, 1);
	assert_int_equal(count_fds(), fds);
	tk_symbols_free(s);
	unlink(swap_path);

	/* a regular ELF file still resolves; its descriptor is closed with the symbols */
	s = self_symbols(0);
	assert_int_equal(tk_symbols_lookup(s, getpid(), 0, known_addr(), &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	tk_symbols_free(s);
	assert_int_equal(count_fds(), fds);
}

static void test_later_mapping_replaces(void **state)
{
	tk_symbols *s = self_symbols(100);
	tk_symbol sym;
	const self_map *code = NULL;
	uint64_t a = known_addr();

	(void)state;
	for (size_t i = 0; i < n_maps; i++)
		if (a >= maps[i].start && a < maps[i].end)
			code = &maps[i];
	assert_non_null(code);
	/* at 200 the range holds a missing file, at 300 nothing, at 400 the program again */
	assert_int_equal(tk_symbols_add_mapping(s, getpid(), 200, code->start, code->end - code->start, code->offset,
						"/nonexistent/replacement"),
			 0);
	assert_int_equal(tk_symbols_remove_mapping(s, getpid(), 300, code->start, code->end - code->start), 0);
	assert_int_equal(tk_symbols_add_mapping(s, getpid(), 400, code->start, code->end - code->start, code->offset,
						exe),
			 0);
	assert_int_equal(tk_symbols_lookup(s, getpid(), 150, a, &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	assert_int_equal(tk_symbols_lookup(s, getpid(), 250, a, &sym), TK_ENOENT);
	assert_string_equal(sym.module, "/nonexistent/replacement");
	assert_int_equal(tk_symbols_lookup(s, getpid(), 350, a, &sym), TK_ENOENT);
	assert_null(sym.module);
	assert_int_equal(tk_symbols_lookup(s, getpid(), 450, a, &sym), 0);
	/* before every mapping: the earliest (the code was there before the trace said so) */
	assert_int_equal(tk_symbols_lookup(s, getpid(), 50, a, &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	/* the same mapping again (each START writes it) is not a new one */
	uint64_t before = tk_symbols_get_stats(s)->mappings;
	assert_int_equal(tk_symbols_add_mapping(s, getpid(), 500, code->start, code->end - code->start, code->offset,
						exe),
			 0);
	assert_int_equal(tk_symbols_get_stats(s)->mappings, before);
	tk_symbols_free(s);
}

static void test_image_base(void **state)
{
	tk_symbols *s = NULL;
	tk_symbol sym;
	uint64_t base = UINT64_MAX, end = 0;

	(void)state;
	read_self_maps();
	for (size_t i = 0; i < n_maps; i++) {
		if (maps[i].offset == 0 && maps[i].start < base)
			base = maps[i].start;
		if (maps[i].end > end)
			end = maps[i].end;
	}
	assert_true(base != UINT64_MAX);
	assert_int_equal(tk_symbols_new(&s), 0);
	assert_int_equal(tk_symbols_add_image(s, 9, 0, base, end - base, exe), 0);
	assert_int_equal(tk_symbols_lookup(s, 9, 0, known_addr(), &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	tk_symbols_free(s);
}

/* Decodes one SYSTEM event of n words (+ string) as the parser would hand it over. */
static void decode_system(tk_kev_decoded *d, unsigned code, const uint32_t *w, size_t n, const char *str,
			  uint64_t t)
{
	static uint32_t payload[1100];
	size_t bytes = n * 4;
	tk_kev_event ev;

	memset(payload, 0, sizeof(payload));
	memcpy(payload, w, n * 4);
	if (str != NULL) {
		memcpy((char *)payload + bytes, str, strlen(str) + 1);
		bytes += strlen(str) + 1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.header = _TRACE_MAKE_CODE(0, bytes <= 8 ? _TRACE_STRUCT_S : _TRACE_STRUCT_CB, _TRACE_SYSTEM_C, code);
	ev.data = payload;
	ev.len = bytes <= 8 ? 2 : (unsigned)((bytes + 7) / 8 * 2);
	ev.ns = t;
	assert_int_equal(tk_kev_decode(&ev, 0, d), 0);
	d->time_ns = t;
}

static void mmap_words(uint32_t w[12], uint32_t pid, uint64_t vaddr, uint64_t len, uint64_t off)
{
	w[0] = pid;
	w[1] = (uint32_t)vaddr, w[2] = (uint32_t)(vaddr >> 32);
	w[3] = (uint32_t)len, w[4] = (uint32_t)(len >> 32);
	w[5] = 2, w[6] = 5, w[7] = 0xffffffffu, w[8] = 0, w[9] = 0;
	w[10] = (uint32_t)off, w[11] = (uint32_t)(off >> 32);
}

static void test_events(void **state)
{
	static tk_kev_decoded d;
	tk_symbols *s = NULL;
	tk_symbol sym;
	uint32_t w[12];

	(void)state;
	read_self_maps();
	assert_int_equal(tk_symbols_new(&s), 0);
	for (size_t i = 0; i < n_maps; i++) {
		mmap_words(w, 42, maps[i].start, maps[i].end - maps[i].start, maps[i].offset);
		decode_system(&d, _NTO_TRACE_SYS_MMAP, w, 12, exe, 1000);
		assert_int_equal(tk_symbols_event(s, &d), 1);
	}
	assert_int_equal(tk_symbols_lookup(s, 42, 2000, known_addr(), &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");

	/* MUNMAP of everything at 3000 */
	uint32_t u[5] = { 42, 0, 0, 0xffffffffu, 0x7fffffffu };
	decode_system(&d, _NTO_TRACE_SYS_MUNMAP, u, 5, NULL, 3000);
	assert_int_equal(tk_symbols_event(s, &d), 1);
	assert_int_equal(tk_symbols_lookup(s, 42, 3500, known_addr(), &sym), TK_ENOENT);

	/* malformed: a fast-mode MMAP (pid, vaddr only), a relative path, an empty path */
	uint64_t dropped = tk_symbols_get_stats(s)->dropped_mappings;
	decode_system(&d, _NTO_TRACE_SYS_MMAP, w, 2, NULL, 4000);
	assert_int_equal(tk_symbols_event(s, &d), 0);
	mmap_words(w, 42, 0x1000, 0x1000, 0);
	decode_system(&d, _NTO_TRACE_SYS_MMAP, w, 12, "relative/lib.so", 4000);
	assert_int_equal(tk_symbols_event(s, &d), 0);
	decode_system(&d, _NTO_TRACE_SYS_MMAP, w, 12, "", 4000);
	assert_int_equal(tk_symbols_event(s, &d), 0);
	assert_int_equal(tk_symbols_get_stats(s)->dropped_mappings, dropped + 3);

	/* QNX's MAPNAME (pid, vaddr, len: 32-bit; name): an image at its base */
	uint32_t mn[3] = { 43, 0x10000000u, 0x8000 };
	decode_system(&d, _NTO_TRACE_SYS_MAPNAME, mn, 3, "/nonexistent/qnx/libc.so.3", 4500);
	assert_int_equal(tk_symbols_event(s, &d), 1);
	assert_int_equal(tk_symbols_lookup(s, 43, 4600, 0x10000010u, &sym), TK_ENOENT);
	assert_string_equal(sym.module, "/nonexistent/qnx/libc.so.3");
	assert_int_equal(tk_symbols_lookup(s, 43, 4600, 0x10008000u, &sym), TK_ENOENT);
	assert_null(sym.module); /* past its length */

	/* other events are not its business */
	uint32_t fn[2] = { 1, 2 };
	decode_system(&d, _NTO_TRACE_SYS_FUNC_ENTER, fn, 2, NULL, 5000);
	assert_int_equal(tk_symbols_event(s, &d), 0);
	assert_int_equal(tk_symbols_get_stats(s)->dropped_mappings, dropped + 3);
	tk_symbols_free(s);
}

/* A .kev file whose MMAP events come after the event that needs them (as a worker's buffer
 * can precede the START snapshot): tk_symbols_load_file() reads them first. */
static void test_load_file(void **state)
{
	const char *path = tkt_path("maps.kev");
	tk_kev_writer *w = NULL;
	tk_kev_header h;
	tk_symbols *s = NULL;
	tk_symbol sym;
	char err[256];
	uint32_t words[12];

	(void)state;
	read_self_maps();
	memset(&h, 0, sizeof(h));
	h.cycles_per_sec = 1000000000;
	assert_int_equal(tk_kev_writer_open(&w, path, &h, 0), 0);
	uint64_t a = known_addr();
	uint32_t fn[4] = { (uint32_t)a, (uint32_t)(a >> 32), 0, 0 };
	assert_int_equal(tk_kev_write_event(w, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_FUNC_ENTER, 100, fn, 4), 0);
	for (size_t i = 0; i < n_maps; i++) {
		mmap_words(words, 77, maps[i].start, maps[i].end - maps[i].start, maps[i].offset);
		assert_int_equal(tk_kev_write_event_str(w, 0, _TRACE_SYSTEM_C, _NTO_TRACE_SYS_MMAP, 200 + i, words, 12,
							exe),
				 0);
	}
	assert_int_equal(tk_kev_writer_close(w), 0);

	assert_int_equal(tk_symbols_new(&s), 0);
	assert_int_equal(tk_symbols_load_file(s, path, err, sizeof(err)), 0);
	assert_int_equal(tk_symbols_get_stats(s)->mappings, n_maps);
	assert_int_equal(tk_symbols_lookup(s, 77, 100, a, &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	/* errors: a missing file says so; standard input cannot be read twice */
	assert_int_not_equal(tk_symbols_load_file(s, tkt_path("missing.kev"), err, sizeof(err)), 0);
	assert_true(err[0] != '\0');
	assert_int_equal(tk_symbols_load_file(s, "-", err, sizeof(err)), TK_EINVAL);
	/* nor a FIFO or any other file that is not a regular one: refused before it is opened
	 * (opening a FIFO without a writer would block: the alarm fails the test instead) */
	const char *fifo = tkt_path("maps.fifo"), *dir = tkt_path("maps.dir");
	unlink(fifo);
	rmdir(dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(tk_symbols_load_file(s, dir, err, sizeof(err)), TK_EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	alarm(20);
	assert_int_equal(tk_symbols_load_file(s, fifo, err, sizeof(err)), TK_EINVAL);
	alarm(0);
	unlink(fifo);
	rmdir(dir);
	tk_symbols_free(s);
}

static void test_root(void **state)
{
	tk_symbols *s = NULL;
	tk_symbol sym;
	char root[4096];
	const char *slash;

	(void)state;
	read_self_maps();
	/* the program's directory as the root, its mappings named from there */
	slash = strrchr(exe, '/');
	assert_non_null(slash);
	snprintf(root, sizeof(root), "%.*s", (int)(slash - exe), exe);
	assert_int_equal(tk_symbols_new(&s), 0);
	assert_int_equal(tk_symbols_set_root(s, root), 0);
	for (size_t i = 0; i < n_maps; i++)
		assert_int_equal(tk_symbols_add_mapping(s, 3, 0, maps[i].start, maps[i].end - maps[i].start,
							maps[i].offset, slash),
				 0);
	assert_int_equal(tk_symbols_lookup(s, 3, 0, known_addr(), &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	assert_string_equal(sym.module, slash);
	tk_symbols_free(s);
}

/* A binary without .debug_aranges (clang's default): the line still comes from its
 * compilation unit. The program's copy loses the section (objcopy; skipped without it). */
static void test_no_aranges(void **state)
{
	char copy[4096], cmd[9000];
	tk_symbols *s = NULL;
	tk_symbol sym;

	(void)state;
	read_self_maps();
	snprintf(copy, sizeof(copy), "%s/no-aranges", tkt_dir());
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section=.debug_aranges '%s' '%s' 2>/dev/null", exe, copy);
	if (system(cmd) != 0) {
		skip();
		return;
	}
	snprintf(cmd, sizeof(cmd), "readelf -S '%s' | grep -q debug_aranges", copy);
	assert_int_not_equal(system(cmd), 0);
	assert_int_equal(tk_symbols_new(&s), 0);
	for (size_t i = 0; i < n_maps; i++)
		assert_int_equal(tk_symbols_add_mapping(s, 5, 0, maps[i].start, maps[i].end - maps[i].start,
							maps[i].offset, copy),
				 0);
	assert_int_equal(tk_symbols_lookup(s, 5, 0, known_addr(), &sym), 0);
	assert_string_equal(sym.name, "tkt_symbols_known_function");
	assert_non_null(sym.file);
	assert_true(ends_with(sym.file, "test_symbols.c"));
	assert_in_range(sym.line, known_line, known_end);
	tk_symbols_free(s);
}

/* More binaries than are kept open at once: each resolves, the least recently used is
 * closed and opened again when needed, names stay valid, descriptors stay bounded. */
static int open_fds(void)
{
	char path[64];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

static void test_many_binaries(void **state)
{
	enum { N = 300 };
	tk_symbols *s = NULL;
	tk_symbol sym;
	const char *first_name = NULL;
	char link[4096];
	int fds_before;

	(void)state;
	read_self_maps();
	fds_before = open_fds();
	assert_int_equal(tk_symbols_new(&s), 0);
	for (int round = 0; round < 2; round++) {
		for (int p = 0; p < N; p++) {
			snprintf(link, sizeof(link), "%s/exe-%d", tkt_dir(), p);
			if (round == 0) {
				unlink(link);
				assert_int_equal(symlink(exe, link), 0);
				for (size_t i = 0; i < n_maps; i++) {
					uint64_t len = maps[i].end - maps[i].start;
					int rc = tk_symbols_add_mapping(s, 1000 + p, 0, maps[i].start, len,
									maps[i].offset, link);
					assert_int_equal(rc, 0);
				}
			}
			assert_int_equal(tk_symbols_lookup(s, 1000 + p, 0, known_addr() + (unsigned)round, &sym), 0);
			assert_string_equal(sym.name, "tkt_symbols_known_function");
			if (first_name == NULL)
				first_name = sym.name;
		}
	}
	assert_string_equal(first_name, "tkt_symbols_known_function"); /* still valid */
	assert_true(open_fds() - fds_before <= 2 * 128);
	assert_int_equal(tk_symbols_get_stats(s)->files_failed, 0);
	tk_symbols_free(s);
	assert_int_equal(open_fds(), fds_before);
}

/* The exporter names a function slice by its function, and by its address without symbols. */
static void test_export_names(void **state)
{
	static tk_kev_decoded d;
	uint64_t a = known_addr();
	uint32_t fn[4] = { (uint32_t)a, (uint32_t)(a >> 32), 0, 0 };

	(void)state;
	for (int with = 0; with < 2; with++) {
		char *text = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&text, &len);
		tk_export *x = NULL;
		tk_symbols *s = with ? self_symbols(0) : NULL;
		char hex[64];

		assert_non_null(out);
		assert_int_equal(tk_export_new(&x, TK_EXPORT_CHROME_JSON, out), 0);
		assert_int_equal(tk_export_set_symbols(x, s), 0);
		for (unsigned code = _NTO_TRACE_SYS_FUNC_ENTER; code <= _NTO_TRACE_SYS_FUNC_EXIT; code++) {
			decode_system(&d, code, fn, 4, NULL, 1000 + code);
			d.pid = getpid();
			d.tid = 1;
			d.flags |= TK_KEV_DEC_OWNER_KNOWN;
			assert_int_equal(tk_export_event(x, &d), 0);
		}
		assert_int_equal(tk_export_set_symbols(x, s), TK_EINVAL); /* events went out */
		assert_int_equal(tk_export_finish(x), 0);
		tk_export_free(x);
		fclose(out);
		snprintf(hex, sizeof(hex), "{\"name\":\"0x%llx\",\"cat\":\"SYSTEM\",\"ph\":\"X\"",
			 (unsigned long long)a);
		if (with)
			assert_non_null(strstr(text, "{\"name\":\"tkt_symbols_known_function\","
						     "\"cat\":\"SYSTEM\",\"ph\":\"X\""));
		else
			assert_non_null(strstr(text, hex));
		free(text);
		tk_symbols_free(s);
	}
}

int main(void)
{
	unsetenv("DEBUGINFOD_URLS"); /* separate debug files from this machine only: no downloads */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolves_own_function),
		cmocka_unit_test(test_unmapped_stays_address),
		cmocka_unit_test(test_truncated_address),
		cmocka_unit_test(test_missing_and_non_elf_files),
		cmocka_unit_test(test_file_swapped_for_fifo),
		cmocka_unit_test(test_later_mapping_replaces),
		cmocka_unit_test(test_image_base),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_export_names),
		cmocka_unit_test(test_many_binaries),
		cmocka_unit_test(test_no_aranges),
		cmocka_unit_test(test_demangled),
		cmocka_unit_test(test_demangle_hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
