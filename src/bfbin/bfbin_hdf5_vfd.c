/* SPDX-License-Identifier: MIT */
/*
 * The HDF5 file driver of bfbin2hdf5: POSIX pread/pwrite on one file, like HDF5's sec2
 * driver (same address space, no driver block in the superblock, so the files are the
 * ones sec2 writes), except that a write never fails as far as HDF5 can tell.
 *
 * Why: when a write fails (ENOSPC, EFBIG, EDQUOT...) while HDF5 flushes its caches in
 * H5Fclose(), HDF5 1.10 frees the file's structures but leaves its id registered; the
 * library then reads the freed file when it shuts down at exit() and the process dies
 * with SIGSEGV (fixed in later releases by HDFGroup/hdf5 PR #2291; the same failure in
 * H5Dwrite or H5Dclose leaves other half-closed state). So this driver records the first failure
 * in a tk__h5vfd_status (whose callback lets the converter stop and name the file and the
 * reason), and from then on keeps every byte HDF5 writes in memory, "spilled" extents
 * that reads overlay on what reached the disk. HDF5's view of the file stays consistent,
 * every close succeeds and releases everything, and the converter discards the file.
 * The converter stops at the first failure, so the spill holds at most what HDF5's
 * caches flush while the file is closed; past TK_H5VFD_SPILL_MAX writes do fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfbin/bfbin_hdf5_vfd.h"

#if H5_VERSION_GE(1, 13, 0)
#include <H5FDdevelop.h> /* H5FD_class_t and H5FD_t moved here */
#endif

#define TK_H5VFD_SPILL_MAX ((size_t)256 << 20)
#define TK_H5VFD_MAXADDR ((haddr_t)INT64_MAX) /* what off_t can address */
#define TK_H5VFD_IO_MAX ((size_t)1 << 30)     /* per pread/pwrite call */

struct h5vfd_fapl {
	struct tk__h5vfd_status *status;
};

struct h5vfd_spill {
	haddr_t addr;
	size_t size;
	unsigned char data[];
};

struct h5vfd_file {
	H5FD_t pub; /* first: HDF5's part of every open file */
	int fd;
	haddr_t eoa, eof;
	dev_t dev;
	ino_t ino;
	struct tk__h5vfd_status *status;
	struct tk__h5vfd_status own_status; /* when the property list gave none */
	struct h5vfd_spill **spills;        /* in write order: later ones win */
	size_t n_spills, spills_cap, spill_bytes;
};

static void h5vfd_push(const char *func, hid_t minor, int err)
{
	H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_VFL, minor, "%s", strerror(err));
}

static void h5vfd_record(struct h5vfd_file *f, int err)
{
	if (f->status->err != 0)
		return;
	f->status->err = err;
	if (f->status->on_error != NULL)
		f->status->on_error(f->status->user_data, err);
}

static void *h5vfd_fapl_copy(const void *info)
{
	struct h5vfd_fapl *copy = malloc(sizeof(*copy));

	if (copy != NULL)
		memcpy(copy, info, sizeof(*copy));
	return copy;
}

static herr_t h5vfd_fapl_free(void *info)
{
	free(info);
	return 0;
}

static void *h5vfd_fapl_get(H5FD_t *file)
{
	struct h5vfd_fapl info = { ((struct h5vfd_file *)file)->status };

	return h5vfd_fapl_copy(&info);
}

static H5FD_t *h5vfd_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
	const struct h5vfd_fapl *info = H5Pget_driver_info(fapl);
	struct h5vfd_file *f;
	struct stat sb;
	int oflags = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY, fd;

	if (name == NULL || name[0] == '\0' || maxaddr == 0 || maxaddr == HADDR_UNDEF ||
	    maxaddr > TK_H5VFD_MAXADDR) {
		h5vfd_push(__func__, H5E_BADVALUE, EINVAL);
		return NULL;
	}
	if (flags & H5F_ACC_TRUNC)
		oflags |= O_TRUNC;
	if (flags & H5F_ACC_CREAT)
		oflags |= O_CREAT;
	if (flags & H5F_ACC_EXCL)
		oflags |= O_EXCL;
	fd = open(name, oflags | O_CLOEXEC, 0666);
	if (fd < 0) {
		h5vfd_push(__func__, H5E_CANTOPENFILE, errno);
		return NULL;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL || fstat(fd, &sb) != 0) {
		h5vfd_push(__func__, H5E_CANTOPENFILE, f == NULL ? ENOMEM : errno);
		free(f);
		close(fd);
		return NULL;
	}
	f->fd = fd;
	f->eof = (haddr_t)sb.st_size;
	f->dev = sb.st_dev;
	f->ino = sb.st_ino;
	f->status = info != NULL && info->status != NULL ? info->status : &f->own_status;
	return &f->pub;
}

static herr_t h5vfd_close(H5FD_t *file)
{
	struct h5vfd_file *f = (struct h5vfd_file *)file;
	size_t i;

	/* A failing close(2) (NFS reports write errors there) is one more write error. */
	if (close(f->fd) != 0 && errno != EINTR)
		h5vfd_record(f, errno);
	for (i = 0; i < f->n_spills; i++)
		free(f->spills[i]);
	free(f->spills);
	free(f);
	return 0;
}

static int h5vfd_cmp(const H5FD_t *a, const H5FD_t *b)
{
	const struct h5vfd_file *fa = (const struct h5vfd_file *)a, *fb = (const struct h5vfd_file *)b;

	if (fa->dev != fb->dev)
		return fa->dev < fb->dev ? -1 : 1;
	if (fa->ino != fb->ino)
		return fa->ino < fb->ino ? -1 : 1;
	return 0;
}

static herr_t h5vfd_query(const H5FD_t *file, unsigned long *flags)
{
	(void)file;
	/* What sec2 declares, so HDF5 aggregates and caches the same way. */
	*flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_DATA_SIEVE |
		 H5FD_FEAT_AGGREGATE_SMALLDATA;
	return 0;
}

static haddr_t h5vfd_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
	(void)type;
	return ((const struct h5vfd_file *)file)->eoa;
}

static herr_t h5vfd_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
	(void)type;
	((struct h5vfd_file *)file)->eoa = addr;
	return 0;
}

static haddr_t h5vfd_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
	(void)type;
	return ((const struct h5vfd_file *)file)->eof;
}

static herr_t h5vfd_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
	(void)fapl;
	*handle = &((struct h5vfd_file *)file)->fd;
	return 0;
}

static int h5vfd_bad_range(haddr_t addr, size_t size)
{
	return addr == HADDR_UNDEF || addr > TK_H5VFD_MAXADDR || (haddr_t)size > TK_H5VFD_MAXADDR - addr;
}

static herr_t h5vfd_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
	struct h5vfd_file *f = (struct h5vfd_file *)file;
	unsigned char *dst = buf;
	haddr_t at = addr;
	size_t left = size, i;

	(void)type;
	(void)dxpl;
	if (h5vfd_bad_range(addr, size)) {
		h5vfd_push(__func__, H5E_OVERFLOW, EINVAL);
		return -1;
	}
	while (left > 0) {
		ssize_t n = pread(f->fd, dst, left > TK_H5VFD_IO_MAX ? TK_H5VFD_IO_MAX : left, (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			h5vfd_push(__func__, H5E_READERROR, errno);
			return -1;
		}
		if (n == 0) { /* past the end of the file: zeros, as sec2 */
			memset(dst, 0, left);
			break;
		}
		dst += n;
		at += (haddr_t)n;
		left -= (size_t)n;
	}
	/* What was written after the first failure only exists here. */
	for (i = 0; i < f->n_spills; i++) {
		const struct h5vfd_spill *s = f->spills[i];
		haddr_t lo = s->addr > addr ? s->addr : addr;
		haddr_t hi_s = s->addr + s->size, hi_r = addr + size;
		haddr_t hi = hi_s < hi_r ? hi_s : hi_r;
		if (lo < hi)
			memcpy((unsigned char *)buf + (lo - addr), s->data + (lo - s->addr), (size_t)(hi - lo));
	}
	return 0;
}

static int h5vfd_spill(struct h5vfd_file *f, haddr_t addr, const unsigned char *src, size_t size)
{
	struct h5vfd_spill *s;

	if (size > TK_H5VFD_SPILL_MAX - f->spill_bytes)
		return -1;
	if (f->n_spills == f->spills_cap) {
		size_t cap = f->spills_cap ? f->spills_cap * 2 : 64;
		struct h5vfd_spill **ns = realloc(f->spills, cap * sizeof(*ns));
		if (ns == NULL)
			return -1;
		f->spills = ns;
		f->spills_cap = cap;
	}
	s = malloc(sizeof(*s) + size);
	if (s == NULL)
		return -1;
	s->addr = addr;
	s->size = size;
	memcpy(s->data, src, size);
	f->spills[f->n_spills++] = s;
	f->spill_bytes += size;
	return 0;
}

static herr_t h5vfd_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
	struct h5vfd_file *f = (struct h5vfd_file *)file;
	const unsigned char *src = buf;
	haddr_t at = addr;
	size_t left = size;

	(void)type;
	(void)dxpl;
	if (h5vfd_bad_range(addr, size)) {
		h5vfd_push(__func__, H5E_OVERFLOW, EINVAL);
		return -1;
	}
	/* After the first failure nothing goes to the disk: reads must see one story. */
	while (left > 0 && f->status->err == 0) {
		ssize_t n = pwrite(f->fd, src, left > TK_H5VFD_IO_MAX ? TK_H5VFD_IO_MAX : left, (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			h5vfd_record(f, n < 0 ? errno : EIO);
			break;
		}
		src += n;
		at += (haddr_t)n;
		left -= (size_t)n;
	}
	if (left > 0 && h5vfd_spill(f, at, src, left) != 0) {
		h5vfd_push(__func__, H5E_WRITEERROR, f->status->err ? f->status->err : ENOMEM);
		return -1;
	}
	if (addr + size > f->eof)
		f->eof = addr + size;
	return 0;
}

static herr_t h5vfd_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
	struct h5vfd_file *f = (struct h5vfd_file *)file;

	(void)dxpl;
	(void)closing;
	if (f->eoa == f->eof)
		return 0;
	if (f->status->err == 0 && ftruncate(f->fd, (off_t)f->eoa) != 0)
		h5vfd_record(f, errno); /* EFBIG past a file size limit: as a failed write */
	f->eof = f->eoa;
	return 0;
}

static const H5FD_class_t h5vfd_class = {
#ifdef H5FD_CLASS_VERSION
	.version = H5FD_CLASS_VERSION,
	.value = (H5FD_class_value_t)(256 + 0x7b), /* 256..511: unregistered drivers */
#endif
	.name = "tracekit_bfbin",
	.maxaddr = TK_H5VFD_MAXADDR,
	.fc_degree = H5F_CLOSE_WEAK,
	.fapl_size = sizeof(struct h5vfd_fapl),
	.fapl_get = h5vfd_fapl_get,
	.fapl_copy = h5vfd_fapl_copy,
	.fapl_free = h5vfd_fapl_free,
	.open = h5vfd_open,
	.close = h5vfd_close,
	.cmp = h5vfd_cmp,
	.query = h5vfd_query,
	.get_eoa = h5vfd_get_eoa,
	.set_eoa = h5vfd_set_eoa,
	.get_eof = h5vfd_get_eof,
	.get_handle = h5vfd_get_handle,
	.read = h5vfd_read,
	.write = h5vfd_write,
	.truncate = h5vfd_truncate,
	.fl_map = H5FD_FLMAP_DICHOTOMY,
};

hid_t tk__h5vfd_register(void)
{
	return H5FDregister(&h5vfd_class);
}

hid_t tk__h5vfd_fapl(hid_t driver, struct tk__h5vfd_status *status)
{
	struct h5vfd_fapl info = { status };
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

	if (fapl < 0)
		return H5I_INVALID_HID;
	if (H5Pset_driver(fapl, driver, &info) < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
		H5Pclose(fapl);
		return H5I_INVALID_HID;
	}
	return fapl;
}
