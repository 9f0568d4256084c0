/* SPDX-License-Identifier: MIT */
/*
 * The mappings START writes, for symbols (tracekit/symbols.h): a SYSTEM MMAP event for every
 * executable file mapping of /proc/self/maps, laid out as tracelogger's collector writes
 * them (pid, vaddr, len, flags, prot, fd, align, offset, path; 64-bit values as low, high
 * words). Each START writes the mappings of that moment, so a library dlopen()ed later is
 * in the file from the next START on (docs/recording.md, "Mappings").
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/trace_internal.h"

void tk__trace_emit_maps(void)
{
	uint32_t pid = (uint32_t)getpid();
	char line[4096 + 256];
	FILE *f = fopen("/proc/self/maps", "re");

	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long start, end, offset;
		char perms[8];
		int path_at = 0;
		size_t n;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &path_at) != 4 ||
		    path_at == 0 || perms[2] != 'x' || line[path_at] != '/' || end <= start)
			continue; /* not executable, or anonymous, [vdso], [stack]... */
		n = strcspn(line + path_at, "\n");
		line[path_at + n] = '\0';
		uint32_t prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		uint32_t w[12] = {
			pid,
			(uint32_t)start, (uint32_t)(start >> 32),
			(uint32_t)(end - start), (uint32_t)((end - start) >> 32),
			perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE,
			prot,
			0xffffffffu, /* fd: not known */
			0, 0,        /* align */
			(uint32_t)offset, (uint32_t)(offset >> 32),
		};
		tk__trace_write(TRACE_CLS(_TRACE_SYSTEM_C), _NTO_TRACE_SYS_MMAP, w, 12, line + path_at, n, 1);
	}
	fclose(f);
}
