/* SPDX-License-Identifier: MIT */
/*
 * Addresses to function names and source lines (tracekit/symbols.h): the mappings of each
 * process with the time they hold from (records sorted by start; a lookup takes the latest
 * record holding the address at its time, see the header), the binaries they name (each
 * opened once with libdwfl, at the first lookup that needs it) and a direct-mapped cache
 * of results.
 *
 * An address A in a mapping [start, end) of file offset pgoff is at file offset
 * A - start + pgoff; the PT_LOAD segment holding that offset turns it into the binary's own
 * (link-time) address, which libdwfl resolves in a module reported at base 0. A MAPNAME
 * image is loaded at its base instead: A - base + the first segment's address.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracekit/symbols.h"
#include "tracekit/traceparser.h"

#define CACHE_SIZE (1u << 14)
/* Binaries kept open at once (each holds a descriptor or two: the file, its debug file);
 * the least recently used is closed beyond, and opened again when needed. */
#define MAX_OPEN 128
#define ARENA_CHUNK (64u * 1024)

typedef struct sym_load {
	uint64_t offset, filesz, vaddr;
} sym_load;

typedef struct sym_file {
	char *path;      /* as the trace names it */
	int state;       /* 0: not open (yet, or closed as least recently used), 1: open, -1: failed */
	uint64_t used;   /* the lookup count when last used (least recently used: closed first) */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint64_t bias;
	sym_load *loads;
	size_t n_loads;
	uint64_t first_vaddr; /* the first PT_LOAD's address, page-aligned (MAPNAME base) */
} sym_file;

enum { MAP_FILE_OFFSET, MAP_IMAGE_BASE };
#define NO_FILE UINT32_MAX

typedef struct sym_map {
	uint64_t start, end; /* [start, end) */
	uint64_t adj;        /* FILE_OFFSET: file offset = A + adj; IMAGE_BASE: A + adj from the base */
	uint64_t t;          /* time_ns from which it holds */
	uint32_t file;       /* NO_FILE: unmapped from t on */
	uint32_t kind;
} sym_map;

typedef struct sym_proc {
	int32_t pid;
	uint32_t gen; /* changes with the mappings: cache entries of an older one are stale */
	sym_map *maps;
	size_t n, cap;
} sym_proc;

typedef struct sym_cache {
	uint64_t addr;
	int32_t pid;
	uint32_t gen; /* 0: empty */
	tk_symbol sym;
} sym_cache;

struct tk_symbols {
	sym_file *files;
	size_t n_files, files_cap;
	uint32_t *file_hash; /* path hash -> file index + 1, open addressing */
	size_t file_hash_cap;
	sym_proc *procs; /* sorted by pid; each has its records sorted by start */
	size_t n_procs, procs_cap;
	size_t n_maps;   /* all processes */
	uint32_t next_gen;
	char *root;
	int mangled; /* tk_symbols_set_demangle(s, 0): names as the symbol tables have them */
	sym_cache *cache;
	size_t n_open;
	/* names and source files, copied (a binary may be closed) and interned */
	char **chunks;
	size_t n_chunks, chunks_cap, chunk_used;
	const char **strings; /* hash set */
	size_t n_strings, strings_cap;
	tk_symbols_stats stats;
};

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = NULL,
	.find_debuginfo = dwfl_standard_find_debuginfo, /* .gnu_debuglink, build-id in /usr/lib/debug */
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = NULL,
};

int tk_symbols_new(tk_symbols **out)
{
	tk_symbols *s;

	if (out == NULL)
		return TK_EINVAL;
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return TK_ENOMEM;
	s->cache = calloc(CACHE_SIZE, sizeof(*s->cache));
	s->file_hash_cap = 64;
	s->file_hash = calloc(s->file_hash_cap, sizeof(*s->file_hash));
	if (s->cache == NULL || s->file_hash == NULL) {
		free(s->cache);
		free(s->file_hash);
		free(s);
		return TK_ENOMEM;
	}
	s->next_gen = 1;
	*out = s;
	return 0;
}

void tk_symbols_free(tk_symbols *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n_files; i++) {
		if (s->files[i].dwfl != NULL)
			dwfl_end(s->files[i].dwfl);
		free(s->files[i].loads);
		free(s->files[i].path);
	}
	for (size_t i = 0; i < s->n_procs; i++)
		free(s->procs[i].maps);
	for (size_t i = 0; i < s->n_chunks; i++)
		free(s->chunks[i]);
	free(s->chunks);
	free(s->strings);
	free(s->files);
	free(s->file_hash);
	free(s->procs);
	free(s->root);
	free(s->cache);
	free(s);
}

int tk_symbols_set_root(tk_symbols *s, const char *root)
{
	char *copy = NULL;

	if (s == NULL)
		return TK_EINVAL;
	if (root != NULL && root[0] != '\0') {
		if (strlen(root) > TK_SYMBOLS_MAX_PATH)
			return TK_EINVAL;
		if ((copy = strdup(root)) == NULL)
			return TK_ENOMEM;
	}
	free(s->root);
	s->root = copy;
	return 0;
}

int tk_symbols_set_demangle(tk_symbols *s, int on)
{
	if (s == NULL)
		return TK_EINVAL;
	s->mangled = !on;
	return 0;
}

const tk_symbols_stats *tk_symbols_get_stats(const tk_symbols *s)
{
	return s != NULL ? &s->stats : NULL;
}

/* ---- binaries ------------------------------------------------------------------------------ */

static uint64_t path_hash(const char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h;
}

static int file_hash_grow(tk_symbols *s)
{
	size_t cap = s->file_hash_cap * 2;
	uint32_t *h = calloc(cap, sizeof(*h));
	if (h == NULL)
		return TK_ENOMEM;
	for (size_t i = 0; i < s->n_files; i++) {
		size_t k = path_hash(s->files[i].path, strlen(s->files[i].path)) & (cap - 1);
		while (h[k] != 0)
			k = (k + 1) & (cap - 1);
		h[k] = (uint32_t)i + 1;
	}
	free(s->file_hash);
	s->file_hash = h;
	s->file_hash_cap = cap;
	return 0;
}

/* The index of the file named path (len bytes), added when new; -1 when out of memory. */
static long file_index(tk_symbols *s, const char *path, size_t len)
{
	size_t mask = s->file_hash_cap - 1, k = path_hash(path, len) & mask;
	sym_file *f;

	while (s->file_hash[k] != 0) {
		f = &s->files[s->file_hash[k] - 1];
		if (strlen(f->path) == len && memcmp(f->path, path, len) == 0)
			return (long)s->file_hash[k] - 1;
		k = (k + 1) & mask;
	}
	if ((s->n_files + 1) * 2 > s->file_hash_cap) {
		if (file_hash_grow(s) != 0)
			return -1;
		return file_index(s, path, len);
	}
	if (s->n_files == s->files_cap) {
		size_t cap = s->files_cap == 0 ? 16 : s->files_cap * 2;
		sym_file *nf = realloc(s->files, cap * sizeof(*nf));
		if (nf == NULL)
			return -1;
		s->files = nf;
		s->files_cap = cap;
	}
	f = &s->files[s->n_files];
	memset(f, 0, sizeof(*f));
	if ((f->path = malloc(len + 1)) == NULL)
		return -1;
	memcpy(f->path, path, len);
	f->path[len] = '\0';
	s->file_hash[k] = (uint32_t)s->n_files + 1;
	s->stats.files++;
	return (long)s->n_files++;
}

/* A copy of str that lives as long as s (one per distinct string); NULL when out of memory. */
static const char *intern(tk_symbols *s, const char *str)
{
	size_t len = strlen(str), k;

	if ((s->n_strings + 1) * 2 > s->strings_cap) {
		size_t cap = s->strings_cap == 0 ? 1024 : s->strings_cap * 2;
		const char **set = calloc(cap, sizeof(*set));
		if (set == NULL)
			return NULL;
		for (size_t i = 0; i < s->strings_cap; i++) {
			if (s->strings[i] == NULL)
				continue;
			k = path_hash(s->strings[i], strlen(s->strings[i])) & (cap - 1);
			while (set[k] != NULL)
				k = (k + 1) & (cap - 1);
			set[k] = s->strings[i];
		}
		free(s->strings);
		s->strings = set;
		s->strings_cap = cap;
	}
	k = path_hash(str, len) & (s->strings_cap - 1);
	while (s->strings[k] != NULL) {
		if (strcmp(s->strings[k], str) == 0)
			return s->strings[k];
		k = (k + 1) & (s->strings_cap - 1);
	}
	if (len + 1 > ARENA_CHUNK)
		return NULL; /* longer than any name: left unresolved */
	if (s->n_chunks == 0 || s->chunk_used + len + 1 > ARENA_CHUNK) {
		if (s->n_chunks == s->chunks_cap) {
			size_t cap = s->chunks_cap == 0 ? 16 : s->chunks_cap * 2;
			char **c = realloc(s->chunks, cap * sizeof(*c));
			if (c == NULL)
				return NULL;
			s->chunks = c;
			s->chunks_cap = cap;
		}
		if ((s->chunks[s->n_chunks] = malloc(ARENA_CHUNK)) == NULL)
			return NULL;
		s->n_chunks++;
		s->chunk_used = 0;
	}
	char *copy = s->chunks[s->n_chunks - 1] + s->chunk_used;
	s->chunk_used += len + 1;
	memcpy(copy, str, len + 1);
	s->strings[k] = copy;
	s->n_strings++;
	return copy;
}

static void file_close(tk_symbols *s, sym_file *f)
{
	if (f->dwfl != NULL)
		dwfl_end(f->dwfl);
	f->dwfl = NULL;
	f->mod = NULL;
	free(f->loads);
	f->loads = NULL;
	f->n_loads = 0;
	if (f->state == 1)
		s->n_open--;
	f->state = 0;
}

/* Whether the descriptor fd is a regular file starting with a valid ELF identification
 * (magic, class, byte order, version: what libelf takes for an ELF file); its O_NONBLOCK
 * is cleared for libdwfl's reads. */
static int elf_file_fd(int fd)
{
	struct stat sb;
	unsigned char id[EI_NIDENT];
	int fl;

	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
		return 0;
	if ((fl = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1)
		return 0;
	if (pread(fd, id, sizeof(id), 0) != (ssize_t)sizeof(id) || memcmp(id, ELFMAG, SELFMAG) != 0)
		return 0;
	return (id[EI_CLASS] == ELFCLASS32 || id[EI_CLASS] == ELFCLASS64) &&
	       (id[EI_DATA] == ELFDATA2LSB || id[EI_DATA] == ELFDATA2MSB) && id[EI_VERSION] == EV_CURRENT;
}

/* Opens a binary: a regular ELF file, reported to its own Dwfl at base 0. A file that
 * fails is not tried again; one closed as least recently used is opened again. */
static int file_open(tk_symbols *s, sym_file *f)
{
	char full[2 * TK_SYMBOLS_MAX_PATH + 2];
	struct stat sb;
	GElf_Addr bias = 0;
	Elf *elf;
	size_t n_ph = 0;

	f->used = s->stats.lookups;
	if (f->state != 0)
		return f->state;
	if (s->n_open >= MAX_OPEN) {
		sym_file *lru = NULL;
		for (size_t i = 0; i < s->n_files; i++)
			if (s->files[i].state == 1 && (lru == NULL || s->files[i].used < lru->used))
				lru = &s->files[i];
		if (lru != NULL)
			file_close(s, lru);
	}
	f->state = -1;
	s->stats.files_failed++;
	snprintf(full, sizeof(full), "%s%s", s->root != NULL ? s->root : "", f->path);
	/* A FIFO or device named by a trace must not block or be read: regular files only. The
	 * stat() spares opening what is plainly not one (a device's open may act); the file is
	 * then opened once, without blocking, and its descriptor checked and handed to libdwfl,
	 * so a file swapped in after the stat() is refused too. */
	if (stat(full, &sb) != 0 || !S_ISREG(sb.st_mode))
		return -1;
	int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (!elf_file_fd(fd)) {
		close(fd);
		return -1;
	}
	if ((f->dwfl = dwfl_begin(&dwfl_callbacks)) == NULL) {
		close(fd);
		return -1;
	}
	dwfl_report_begin(f->dwfl);
	/* On success the module owns fd (closed by dwfl_end()); on failure it is still ours, as
	 * the file starts with a valid ELF identification: libdwfl closes a descriptor it was
	 * given only after decompressing a compressed (gzip, xz...) file, which this cannot be. */
	f->mod = dwfl_report_elf(f->dwfl, f->path, full, fd, 0, true);
	if (f->mod == NULL)
		close(fd);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (f->mod == NULL || (elf = dwfl_module_getelf(f->mod, &bias)) == NULL ||
	    elf_getphdrnum(elf, &n_ph) != 0 || n_ph == 0 || n_ph > 65535)
		goto fail;
	f->loads = calloc(n_ph, sizeof(*f->loads));
	if (f->loads == NULL)
		goto fail;
	for (size_t i = 0; i < n_ph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		if (f->n_loads == 0)
			f->first_vaddr = ph.p_align > 1 ? ph.p_vaddr & ~(ph.p_align - 1) : ph.p_vaddr;
		f->loads[f->n_loads].offset = ph.p_offset;
		f->loads[f->n_loads].filesz = ph.p_filesz;
		f->loads[f->n_loads].vaddr = ph.p_vaddr;
		f->n_loads++;
	}
	if (f->n_loads == 0)
		goto fail;
	f->bias = bias;
	f->state = 1;
	s->n_open++;
	s->stats.files_failed--;
	return 1;
fail:
	free(f->loads);
	f->loads = NULL;
	f->n_loads = 0;
	if (f->dwfl != NULL)
		dwfl_end(f->dwfl);
	f->dwfl = NULL;
	f->mod = NULL;
	return -1;
}

/* ---- mappings -------------------------------------------------------------------------------- */

/* The process pid, added when create is set and it is new; NULL otherwise (*oom set when
 * that was for lack of memory). */
static sym_proc *proc_get(tk_symbols *s, int32_t pid, int create, int *oom)
{
	size_t lo = 0, hi = s->n_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->procs[mid].pid == pid)
			return &s->procs[mid];
		if (s->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!create)
		return NULL;
	if (s->n_procs == s->procs_cap) {
		size_t cap = s->procs_cap == 0 ? 16 : s->procs_cap * 2;
		sym_proc *np = realloc(s->procs, cap * sizeof(*np));
		if (np == NULL) {
			*oom = 1;
			return NULL;
		}
		s->procs = np;
		s->procs_cap = cap;
	}
	memmove(&s->procs[lo + 1], &s->procs[lo], (s->n_procs - lo) * sizeof(*s->procs));
	memset(&s->procs[lo], 0, sizeof(*s->procs));
	s->procs[lo].pid = pid;
	s->n_procs++;
	return &s->procs[lo];
}

/* Adds a record (sorted by start); 0, or 1 when it is one already there (nothing added). */
static int add_record(tk_symbols *s, int32_t pid, const sym_map *r)
{
	sym_proc *p;
	size_t i;
	int oom = 0;

	if ((p = proc_get(s, pid, 1, &oom)) == NULL)
		return TK_ENOMEM;
	for (i = 0; i < p->n && p->maps[i].start <= r->start; i++) {
		const sym_map *m = &p->maps[i];
		if (m->start == r->start && m->end == r->end && m->adj == r->adj && m->file == r->file &&
		    m->kind == r->kind) {
			/* the same mapping again (each START, perf's snapshot): keep one, the
			 * earliest, unless something else covered part of it in between */
			int between = 0;
			uint64_t lo = m->t < r->t ? m->t : r->t, hi = m->t < r->t ? r->t : m->t;
			for (size_t j = 0; j < p->n && p->maps[j].start < r->end; j++)
				if (j != i && p->maps[j].end > r->start && p->maps[j].t >= lo && p->maps[j].t <= hi)
					between = 1;
			if (!between) {
				if (r->t < m->t)
					p->maps[i].t = r->t;
				return 1;
			}
		}
	}
	if (s->n_maps >= TK_SYMBOLS_MAX_MAPPINGS) {
		s->stats.dropped_mappings++;
		return TK_ETOOBIG;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap == 0 ? 8 : p->cap * 2;
		sym_map *m = realloc(p->maps, cap * sizeof(*m));
		if (m == NULL)
			return TK_ENOMEM;
		p->maps = m;
		p->cap = cap;
	}
	for (i = p->n; i > 0 && p->maps[i - 1].start > r->start; i--)
		;
	memmove(&p->maps[i + 1], &p->maps[i], (p->n - i) * sizeof(*p->maps));
	p->maps[i] = *r;
	p->n++;
	s->n_maps++;
	p->gen = s->next_gen++;
	if (s->next_gen == 0)
		s->next_gen = 1;
	return 0;
}

static int add_map(tk_symbols *s, int32_t pid, uint64_t t, uint64_t vaddr, uint64_t len, uint64_t adj,
		   unsigned kind, const char *path)
{
	size_t path_len;
	long file;
	sym_map r;
	int rc;

	if (s == NULL || path == NULL || len == 0 || vaddr + len < vaddr || path[0] != '/' ||
	    (path_len = strlen(path)) > TK_SYMBOLS_MAX_PATH)
		return TK_EINVAL;
	if ((file = file_index(s, path, path_len)) < 0)
		return TK_ENOMEM;
	r.start = vaddr;
	r.end = vaddr + len;
	r.adj = adj;
	r.t = t;
	r.file = (uint32_t)file;
	r.kind = kind;
	if ((rc = add_record(s, pid, &r)) == 0)
		s->stats.mappings++;
	return rc == 1 ? 0 : rc;
}

int tk_symbols_add_mapping(tk_symbols *s, int32_t pid, uint64_t time_ns, uint64_t vaddr, uint64_t len,
			   uint64_t offset, const char *path)
{
	return add_map(s, pid, time_ns, vaddr, len, offset - vaddr, MAP_FILE_OFFSET, path);
}

int tk_symbols_add_image(tk_symbols *s, int32_t pid, uint64_t time_ns, uint64_t vaddr, uint64_t len,
			 const char *path)
{
	return add_map(s, pid, time_ns, vaddr, len, (uint64_t)0 - vaddr, MAP_IMAGE_BASE, path);
}

int tk_symbols_remove_mapping(tk_symbols *s, int32_t pid, uint64_t time_ns, uint64_t vaddr, uint64_t len)
{
	sym_map r;

	if (s == NULL || len == 0 || vaddr + len < vaddr)
		return TK_EINVAL;
	r.start = vaddr;
	r.end = vaddr + len;
	r.adj = 0;
	r.t = time_ns;
	r.file = NO_FILE;
	r.kind = MAP_FILE_OFFSET;
	int rc = add_record(s, pid, &r);
	return rc == 1 ? 0 : rc;
}

/* ---- events ---------------------------------------------------------------------------------- */

static int field_num(const tk_kev_decoded *d, const char *name, uint64_t *v)
{
	const tk_kev_field *f = tk_kev_field_find(d, name);
	if (f == NULL || f->type == TK_KEV_FIELD_NONE || f->type >= TK_KEV_FIELD_STR)
		return -1;
	*v = f->v.u;
	return 0;
}

int tk_symbols_event(tk_symbols *s, const tk_kev_decoded *d)
{
	uint64_t pid, vaddr, len, offset = 0;
	const tk_kev_field *name;
	char path[TK_SYMBOLS_MAX_PATH + 1];
	int rc;

	if (s == NULL || d == NULL || d->cls != 5 ||
	    (d->code != _NTO_TRACE_SYS_MMAP && d->code != _NTO_TRACE_SYS_MUNMAP && d->code != _NTO_TRACE_SYS_MAPNAME))
		return 0;
	if (field_num(d, "pid", &pid) != 0 || field_num(d, "vaddr", &vaddr) != 0 || field_num(d, "len", &len) != 0)
		goto malformed;
	if (d->code == _NTO_TRACE_SYS_MUNMAP) {
		rc = tk_symbols_remove_mapping(s, (int32_t)pid, d->time_ns, vaddr, len);
		goto done;
	}
	name = tk_kev_field_find(d, d->code == _NTO_TRACE_SYS_MMAP ? "path" : "name");
	if (name == NULL || name->type != TK_KEV_FIELD_STR || name->len == 0 || name->len > TK_SYMBOLS_MAX_PATH ||
	    memchr(name->str, '\0', name->len) != NULL)
		goto malformed;
	memcpy(path, name->str, name->len);
	path[name->len] = '\0';
	if (d->code == _NTO_TRACE_SYS_MMAP) {
		if (field_num(d, "offset", &offset) != 0)
			goto malformed;
		rc = tk_symbols_add_mapping(s, (int32_t)pid, d->time_ns, vaddr, len, offset, path);
	} else {
		rc = tk_symbols_add_image(s, (int32_t)pid, d->time_ns, vaddr, len, path);
	}
done:
	if (rc == 0)
		return 1;
	if (rc == TK_ENOMEM)
		return rc;
	if (rc == TK_ETOOBIG)
		return 0; /* counted */
malformed:
	s->stats.dropped_mappings++;
	return 0;
}

typedef struct load_run {
	tk_symbols *s;
	int rc;
	tk_kev_decoded dec;
} load_run;

static int load_event(struct traceparser_state *st, void *ud, unsigned header, unsigned time, unsigned *buf,
		      unsigned len)
{
	load_run *r = ud;
	int rc;

	if (r->rc == 0 && tk_traceparser_decode(st, header, time, buf, len, 0, &r->dec) == 0 &&
	    (rc = tk_symbols_event(r->s, &r->dec)) < 0)
		r->rc = rc;
	return 0;
}

int tk_symbols_load_file(tk_symbols *s, const char *path, char *errmsg, size_t errmsg_cap)
{
	struct traceparser_state *st;
	load_run *r;
	int rc, parse_errno;

	if (errmsg != NULL && errmsg_cap > 0)
		errmsg[0] = '\0';
	if (s == NULL || path == NULL || strcmp(path, "-") == 0)
		return TK_EINVAL;
	/* what cannot be read twice (a FIFO, a device) is refused before it is opened: its
	 * data would be gone for the caller's own pass (and opening a FIFO blocks) */
	struct stat sb;
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		if (errmsg != NULL && errmsg_cap > 0)
			snprintf(errmsg, errmsg_cap, "%s: not a regular file: its events cannot be read twice", path);
		return TK_EINVAL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return TK_ENOMEM;
	if ((st = traceparser_init(NULL)) == NULL) {
		free(r);
		return TK_ENOMEM;
	}
	r->s = s;
	tk_traceparser_cs_internal(st, r, load_event, 5, _NTO_TRACE_SYS_MMAP, _NTO_TRACE_SYS_MAPNAME);
	rc = traceparser(st, r, path);
	parse_errno = errno;
	if (rc != 0) {
		const char *msg = traceparser_get_info(st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		if (errmsg != NULL && errmsg_cap > 0)
			snprintf(errmsg, errmsg_cap, "%s", msg != NULL && *msg ? msg : strerror(parse_errno));
		rc = tk_error_from_errno(parse_errno);
		if (rc == 0 || rc == TK_EINVAL)
			rc = TK_ECORRUPT;
	} else if (r->rc != 0) {
		rc = r->rc;
		if (errmsg != NULL && errmsg_cap > 0)
			snprintf(errmsg, errmsg_cap, "%s", tk_strerror(rc));
	}
	traceparser_destroy(&st);
	free(r);
	return rc;
}

/* ---- lookups --------------------------------------------------------------------------------- */

/* The mapping of addr at time t (see tracekit/symbols.h); *only: the only one holding addr. */
static const sym_map *map_find(const sym_proc *p, uint64_t addr, uint64_t t, int *only)
{
	const sym_map *best = NULL, *earliest = NULL;
	int n = 0;

	for (size_t i = 0; i < p->n && p->maps[i].start <= addr; i++) {
		const sym_map *m = &p->maps[i];
		if (addr >= m->end)
			continue;
		n++;
		if (m->t <= t && (best == NULL || m->t >= best->t))
			best = m;
		if (earliest == NULL || m->t < earliest->t)
			earliest = m;
	}
	*only = n <= 1;
	return best != NULL ? best : earliest;
}

/*
 * The source line of a (module address) through the compilation unit that holds it, for
 * binaries without .debug_aranges (clang's default), where dwfl_module_getsrc() finds none.
 */
static const char *src_by_units(sym_file *f, GElf_Addr a, int *lineno)
{
	Dwarf_Addr bias = 0;
	Dwarf *dw = dwfl_module_getdwarf(f->mod, &bias);
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie;

	if (dw == NULL)
		return NULL;
	while (dwarf_get_units(dw, cu, &next, NULL, NULL, &cudie, NULL) == 0) {
		cu = next;
		if (dwarf_haspc(&cudie, a - bias) != 1)
			continue;
		Dwarf_Line *line = dwarf_getsrc_die(&cudie, a - bias);
		const char *src = line != NULL ? dwarf_linesrc(line, NULL, NULL) : NULL;
		return src != NULL && dwarf_lineno(line, lineno) == 0 ? src : NULL;
	}
	return NULL;
}

static void resolve(tk_symbols *s, const sym_map *m, uint64_t addr, tk_symbol *out)
{
	sym_file *f;
	uint64_t elf_addr;

	if (m->file == NO_FILE)
		return;
	f = &s->files[m->file];
	out->module = f->path;
	if (file_open(s, f) != 1)
		return;
	if (m->kind == MAP_IMAGE_BASE) {
		elf_addr = addr + m->adj + f->first_vaddr;
	} else {
		uint64_t off = addr + m->adj;
		size_t i;
		for (i = 0; i < f->n_loads; i++)
			if (off >= f->loads[i].offset && off - f->loads[i].offset < f->loads[i].filesz)
				break;
		if (i == f->n_loads)
			return; /* not in the file's loadable part */
		elf_addr = off - f->loads[i].offset + f->loads[i].vaddr;
	}
	out->module_addr = elf_addr;

	GElf_Addr a = elf_addr + f->bias;
	GElf_Off sym_off = 0;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(f->mod, a, &sym_off, &sym, NULL, NULL, NULL);
	if (name == NULL || name[0] == '\0')
		return;
	/* C++ (_Z) and Rust (_R, and _ZN...17h<hash>E) names as their programmers write them,
	 * with parameter types, as perf and gdb show them; a name that does not demangle stays */
	char *readable = NULL;
	if (!s->mangled && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'))
		readable = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	const char *kept = intern(s, readable != NULL ? readable : name);
	if (kept == NULL && readable != NULL) /* longer than any name: the mangled one */
		kept = intern(s, name);
	free(readable);
	if ((name = kept) == NULL)
		return;
	out->name = name;
	out->offset = sym_off;
	Dwfl_Line *line = dwfl_module_getsrc(f->mod, a);
	int lineno = 0;
	const char *src = line != NULL ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL)
				       : src_by_units(f, a, &lineno);
	if (src != NULL && lineno > 0 && (src = intern(s, src)) != NULL) {
		out->file = src;
		out->line = lineno;
	}
}

/*
 * A 32-bit address that no mapping holds may be the low half of a 64-bit one: fast-mode
 * events (FUNC_ENTER/EXIT, ADDRESS of tracekit's recorder outside wide mode; QNX's) hold 32
 * bits, and a position-independent program or a shared library is mapped above 4 GiB. The
 * address is widened when exactly one 64-bit address of the process's mappings ends in
 * those 32 bits; 0 otherwise (unknown or ambiguous: it stays unresolved).
 */
static uint64_t widen32(const sym_proc *p, uint64_t addr)
{
	uint64_t found = 0;

	if (addr > UINT32_MAX)
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		const sym_map *m = &p->maps[i];
		uint64_t hi = m->start & ~(uint64_t)UINT32_MAX;
		for (int k = 0; k < 2; k++, hi += (uint64_t)1 << 32) {
			uint64_t a = hi | addr;
			if (hi == 0 || a < m->start || a >= m->end)
				continue;
			if (found != 0 && found != a)
				return 0; /* two candidates */
			found = a;
		}
	}
	return found;
}

int tk_symbols_lookup(tk_symbols *s, int32_t pid, uint64_t time_ns, uint64_t addr, tk_symbol *out)
{
	const sym_proc *p;
	const sym_map *m;
	int oom = 0, only = 1;

	if (out == NULL)
		return TK_EINVAL;
	memset(out, 0, sizeof(*out));
	out->addr = addr;
	if (s == NULL)
		return TK_EINVAL;
	s->stats.lookups++;
	if ((p = proc_get(s, pid, 0, &oom)) == NULL)
		return TK_ENOENT;
	uint64_t k = (addr ^ ((uint64_t)(uint32_t)pid << 40)) * 0x9e3779b97f4a7c15ull;
	sym_cache *c = &s->cache[(k >> 40) & (CACHE_SIZE - 1)];
	if (c->gen == p->gen && c->gen != 0 && c->pid == pid && c->addr == addr) {
		s->stats.cache_hits++;
		*out = c->sym;
	} else {
		uint64_t wide;
		if ((m = map_find(p, addr, time_ns, &only)) != NULL)
			resolve(s, m, addr, out);
		else if ((wide = widen32(p, addr)) != 0 && (m = map_find(p, wide, time_ns, &only)) != NULL)
			resolve(s, m, wide, out);
		if (only) { /* the same at any time: cached */
			c->addr = addr;
			c->pid = pid;
			c->gen = p->gen;
			c->sym = *out;
		}
	}
	if (out->name == NULL)
		return TK_ENOENT;
	s->stats.resolved++;
	return 0;
}

size_t tk_symbols_format(const tk_symbol *sym, char *buf, size_t cap)
{
	int n;

	if (sym == NULL)
		return 0;
	if (sym->name == NULL)
		n = snprintf(buf, cap, "0x%llx", (unsigned long long)sym->addr);
	else if (sym->file != NULL)
		n = snprintf(buf, cap, "%s+0x%llx (%s:%d)", sym->name, (unsigned long long)sym->offset, sym->file,
			     sym->line);
	else
		n = snprintf(buf, cap, "%s+0x%llx", sym->name, (unsigned long long)sym->offset);
	return n < 0 ? 0 : (size_t)n;
}
