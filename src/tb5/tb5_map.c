/* SPDX-License-Identifier: MIT */
/*
 * tb5_map.c: the read-only mapping of a .tb5 file, safe against the file shrinking under it.
 *
 * A reader maps the file and hands chunk payloads straight from the mapping to its callers.
 * If another process truncates the file meanwhile, touching a page past the new end raises
 * SIGBUS, which used to kill the program (print_tb5 died with it). Each mapping is registered
 * in a small lock-free table; a SIGBUS handler installed once per process recognises a fault
 * inside a registered mapping, puts zero-filled anonymous pages over the rest of it (so the
 * faulting read, in the library or in a user callback, completes) and marks the mapping as
 * lost. The library checks that mark after each chunk it checks, each section it loads and
 * each callback it makes, and reports TBRW_FILE_TRUNCATED naming the file's new size: bytes
 * read as zeros are never passed on as data without that error following. A fault anywhere
 * else goes to the handler the program had before (or, with none, kills as SIGBUS does).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb5/tb5_internal.h"

#define MAP_SLOTS 256u /* mappings guarded at once; more are read with pread() */

struct map_slot {
	_Atomic uintptr_t start; /* 0: free */
	_Atomic size_t len;
	atomic_int lost;
};

static struct map_slot g_slots[MAP_SLOTS];
static struct sigaction g_prev;
static uintptr_t g_page;
static int g_installed;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	for (unsigned i = 0; i < MAP_SLOTS; i++) {
		uintptr_t start = atomic_load(&g_slots[i].start);
		size_t len = atomic_load(&g_slots[i].len);
		if (start == 0 || a < start || a - start >= len)
			continue;
		uintptr_t from = a & ~(g_page - 1), end = (start + len + g_page - 1) & ~(g_page - 1);
		if (mmap((void *)from, end - from, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			 0) == MAP_FAILED)
			break;
		atomic_store(&g_slots[i].lost, 1);
		return;
	}
	/* not ours */
	if ((g_prev.sa_flags & SA_SIGINFO) && g_prev.sa_sigaction != NULL) {
		g_prev.sa_sigaction(sig, si, uc);
	} else if (g_prev.sa_handler != SIG_DFL && g_prev.sa_handler != SIG_IGN && g_prev.sa_handler != NULL) {
		g_prev.sa_handler(sig);
	} else {
		/* the default action: the faulting access runs again and kills as before */
		signal(SIGBUS, SIG_DFL);
	}
}

/* Puts the handler in place, unless it is there already: a program (or a test framework)
 * that set its own SIGBUS handler since gets it chained behind ours. g_lock serialises
 * opens; the handler reads g_prev only for faults that are not ours. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void install(void)
{
	struct sigaction sa, cur;
	long page = sysconf(_SC_PAGESIZE);

	if (page <= 0 || sigaction(SIGBUS, NULL, &cur) != 0)
		return;
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_sigbus) {
		g_installed = 1;
		return;
	}
	g_page = (uintptr_t)page;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	g_prev = cur;
	g_installed = sigaction(SIGBUS, &sa, NULL) == 0;
}

void tk__tb5_map_open(struct tb5_handle *h, int fd)
{
	void *m;

	h->map_slot = -1;
	if (h->file_size == 0 || h->file_size > SIZE_MAX)
		return;
	pthread_mutex_lock(&g_lock);
	install();
	pthread_mutex_unlock(&g_lock);
	if (!g_installed)
		return; /* read with pread(): slower, never faults */
	m = mmap(NULL, (size_t)h->file_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return;
	for (unsigned i = 0; i < MAP_SLOTS; i++) {
		uintptr_t zero = 0;
		if (atomic_load(&g_slots[i].start) != 0)
			continue;
		atomic_store(&g_slots[i].len, (size_t)h->file_size);
		atomic_store(&g_slots[i].lost, 0);
		if (!atomic_compare_exchange_strong(&g_slots[i].start, &zero, (uintptr_t)m))
			continue;
		h->map = m;
		h->map_len = (size_t)h->file_size;
		h->map_slot = (int)i;
		return;
	}
	munmap(m, (size_t)h->file_size);
}

void tk__tb5_map_close(struct tb5_handle *h)
{
	if (h->map == NULL)
		return;
	atomic_store(&g_slots[h->map_slot].start, 0);
	munmap(h->map, h->map_len);
	h->map = NULL;
	h->map_len = 0;
	h->map_slot = -1;
}

TBRW_U32 tk__tb5_map_check(struct tb5_handle *h)
{
	struct stat st;
	unsigned long long now = 0;

	if (h->map == NULL || !atomic_load(&g_slots[h->map_slot].lost))
		return VT_SUCCESS;
	if (fstat(h->fd, &st) == 0)
		now = (unsigned long long)st.st_size;
	return tk__tb5_fail(TBRW_FILE_TRUNCATED, "%s: the file shrank to %llu bytes while it was read (it had %llu): "
					     "what it held past that is gone",
			h->path, now, (unsigned long long)h->file_size);
}
