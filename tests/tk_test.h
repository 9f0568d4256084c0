/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for the cmocka unit tests: a scratch directory per test binary, files
 * from byte buffers, and a builder for hand-made .kev images (valid or deliberately
 * broken) whose every byte the test controls.
 */
#ifndef TK_TEST_H
#define TK_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* TKT_ASAN: built with AddressSanitizer; TKT_SANITIZER: with any sanitizer (gcc's macros,
 * clang's __has_feature). Tests use them where a sanitizer changes what can be observed. */
#if defined(__SANITIZE_ADDRESS__)
#define TKT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TKT_ASAN 1
#endif
#endif
#ifndef TKT_ASAN
#define TKT_ASAN 0
#endif
/* TKT_TSAN: built with ThreadSanitizer (its runtime runs threads of its own in the process) */
#if defined(__SANITIZE_THREAD__)
#define TKT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TKT_TSAN 1
#endif
#endif
#ifndef TKT_TSAN
#define TKT_TSAN 0
#endif
#if TKT_ASAN || defined(__SANITIZE_THREAD__)
#define TKT_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define TKT_SANITIZER 1
#endif
#endif
#ifndef TKT_SANITIZER
#define TKT_SANITIZER 0
#endif

/* Creates (once) and returns a scratch directory removed at exit. */
const char *tkt_dir(void);
/* Path inside the scratch directory (static buffer rotated over 8 slots). */
const char *tkt_path(const char *name);
/* Writes len bytes to path; fails the test on error. */
void tkt_write_file(const char *path, const void *data, size_t len);
/* Reads a whole file (malloc'd, NUL-terminated); *len gets its size. NULL if missing. */
char *tkt_read_file(const char *path, size_t *len);
/* 1 if the path exists. */
int tkt_exists(const char *path);

/* A growable byte buffer for building files. */
struct tkt_buf {
	unsigned char *p;
	size_t len, cap;
};
void tkt_buf_put(struct tkt_buf *b, const void *data, size_t n);
void tkt_buf_str(struct tkt_buf *b, const char *s);
void tkt_buf_u32(struct tkt_buf *b, uint32_t v, int big_endian);
void tkt_buf_free(struct tkt_buf *b);

/*
 * A minimal valid header (version 1.01, given byte order, CYCLES_PER_SEC 1000000000,
 * CPU_NUM 2, SYSPAGE_LEN syspage_len) followed by syspage_len zero bytes.
 */
void tkt_kev_header(struct tkt_buf *b, int big_endian, unsigned syspage_len);
/* One 16-byte slot in the given byte order. */
void tkt_kev_slot(struct tkt_buf *b, int big_endian, uint32_t h, uint32_t d0, uint32_t d1, uint32_t d2);

#endif /* TK_TEST_H */
