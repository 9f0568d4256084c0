/* SPDX-License-Identifier: MIT */
/*
 * The .kev writer.
 *
 * File layout it produces:
 *   TRACE_HEADER_BEGIN:: TRACE_FILE_NAME::<path> TRACE_DATE::<ctime> TRACE_VER_MAJOR::1
 *   TRACE_VER_MINOR::01 TRACE_<LITTLE|BIG>_ENDIAN::TRUE TRACE_ENCODING::16 byte events
 *   TRACE_BOOT_DATE::<ctime> TRACE_CYCLES_PER_SEC::<n> TRACE_CPU_NUM::<n> TRACE_SYSNAME::..
 *   TRACE_NODENAME::.. TRACE_SYS_RELEASE::.. TRACE_SYS_VERSION::.. TRACE_MACHINE::..
 *   TRACE_SYSPAGE_LEN::<n> [TRACE_<user key>::<value>...] TRACE_HEADER_END::
 *   (no separators between entries: each value runs up to the next "TRACE_")
 *   <syspage: SYSPAGE_LEN bytes>
 *   <16-byte events in the chosen byte order>
 *
 * Events are split as the QNX kernel splits them: up to 2 payload words make a simple
 * (S) event; more make CB, CC..., CE slots sharing one timestamp, 2 words per slot, the
 * last padded with 0. Strings are packed 8 bytes per slot, NUL included, zero-filled:
 * a payload of 8 bytes or less (words and string) is a single S slot.
 * With tracekit's own syspage the header and syspage are padded so events start at a
 * 16-byte file offset.
 *
 * Long captures: once a regular file passes KEV_WB_START bytes, the writer hands every
 * KEV_WB_WINDOW it writes to the kernel for writeback at once, waits for the window before
 * it and drops that from the page cache. Dirty trace data then never piles up until the
 * kernel throttles the writer for hundreds of milliseconds (which a recorder's buffers
 * cannot ride out), and a capture of many gigabytes does not evict the traced program's
 * own cached files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/tk_bytes.h"
#include "common/tk_cycles.h"
#include "tracekit/kev.h"

#define KEV_BUF_SLOTS 16384 /* 256 KiB of events between writes */
#define KEV_WB_START (64u << 20)
#define KEV_WB_WINDOW (8u << 20)

struct tk_kev_writer {
	int fd;              /* where events go: a high duplicate of the output file's descriptor */
	tk_outfile *outfile; /* NULL when writing to a caller's fd or to standard output */
	int held;            /* fd is the writer's own duplicate (a path was opened, or "-") */
	int stream_fd;       /* the output's own descriptor (a low number the program may reuse) */
	dev_t dev;           /* identity of the output: checked before every write */
	ino_t ino;
	int swap;            /* file byte order differs from the host's */
	unsigned flags;
	int err;             /* first error, sticky */
	uint64_t bytes_written;
	int wb;              /* write-behind: the file is a regular file */
	off_t wb_base;       /* file offset of the writer's first byte */
	off_t wb_off;        /* writeback started up to here */
	off_t wb_prev_off, wb_prev_len; /* the window started before: waited for next time */
	uint64_t slots;
	/* The rate: with the machine's (cycles_per_sec 0 in the header), a (cycles, raw ns)
	 * pair is read at the start and at the end, and the measured rate replaces the start
	 * value in place when the file is completed (a file that can be rewritten). */
	int clock_pair;       /* the header names the start pair (TRACEKIT_CLOCK_*) */
	uint64_t c0, ns0;     /* the start pair */
	off_t hdr_off;        /* file offset of the header; -1 if it cannot be rewritten */
	size_t cps_pos;       /* offset of the CYCLES_PER_SEC value in the header */
	size_t syspage_pos, syspage_len; /* our own syspage (0 length: the caller's) */
	unsigned cpu_num;
	uint32_t boot;
	int big_endian;
	size_t n_buf;
	uint32_t msb[64];
	uint64_t msb_valid; /* bit per CPU */
	char errmsg[256];
	traceevent_t buf[KEV_BUF_SLOTS];
};

static int set_err(tk_kev_writer *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_err(tk_kev_writer *w, int err, const char *fmt, ...)
{
	va_list ap;

	if (w->err == TK_OK) {
		w->err = err;
		va_start(ap, fmt);
		vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
		va_end(ap);
	}
	return err;
}

/* Write-behind (see the head comment): called after writes; costs nothing until a window fills. */
static void write_behind(tk_kev_writer *w)
{
	off_t end;

	if (!w->wb || w->bytes_written < KEV_WB_START)
		return;
	end = w->wb_base + (off_t)w->bytes_written; /* every byte goes through write_all or writev */
	if (end - w->wb_off < (off_t)KEV_WB_WINDOW)
		return;
	if (sync_file_range(w->fd, w->wb_off, end - w->wb_off, SYNC_FILE_RANGE_WRITE) != 0) {
		w->wb = 0; /* not supported here: leave it to the kernel */
		return;
	}
	if (w->wb_prev_len > 0) {
		/* errors surface at fsync when the file is closed */
		(void)sync_file_range(w->fd, w->wb_prev_off, w->wb_prev_len,
				      SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
		(void)posix_fadvise(w->fd, w->wb_prev_off, w->wb_prev_len, POSIX_FADV_DONTNEED);
	}
	w->wb_prev_off = w->wb_off;
	w->wb_prev_len = end - w->wb_off;
	w->wb_off = end;
}

static void write_behind_init(tk_kev_writer *w)
{
	struct stat sb;
	off_t here;

	if (fstat(w->fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (here = lseek(w->fd, 0, SEEK_CUR)) < 0)
		return;
	w->wb = 1;
	w->wb_base = here - (off_t)w->bytes_written;
	w->wb_off = here;
}

/* 1 if fd still refers to the file the writer opened. */
static int fd_is_ours(const tk_kev_writer *w, int fd)
{
	struct stat sb;

	return fd >= 0 && fstat(fd, &sb) == 0 && sb.st_dev == w->dev && sb.st_ino == w->ino;
}

/*
 * Before every write to a file the writer opened itself: the program may have closed the
 * descriptor (daemons close every descriptor) and opened a file that got its number.
 * Nothing is written then, and the writer stops for good with an error that says so.
 */
static int check_fd(tk_kev_writer *w)
{
	if (!w->held || fd_is_ours(w, w->fd))
		return TK_OK;
	return set_err(w, TK_EIO,
		       "descriptor %d of the trace file was closed or replaced by the program at byte offset "
		       "%llu: nothing more is written to it",
		       w->fd, (unsigned long long)w->bytes_written);
}

static int write_all(tk_kev_writer *w, const void *data, size_t len)
{
	const char *p = data;
	int err = check_fd(w);

	if (err != TK_OK)
		return err;
	while (len > 0) {
		ssize_t n = write(w->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return set_err(w, tk_error_from_errno(errno),
				       "write failed at byte offset %llu: %s",
				       (unsigned long long)w->bytes_written, strerror(errno));
		}
		p += n;
		len -= (size_t)n;
		w->bytes_written += (uint64_t)n;
	}
	write_behind(w);
	return TK_OK;
}

int tk_kev_writer_flush(tk_kev_writer *w)
{
	int err;

	if (w == NULL)
		return TK_EINVAL;
	if (w->err != TK_OK)
		return w->err;
	if (w->n_buf == 0)
		return TK_OK;
	err = write_all(w, w->buf, w->n_buf * sizeof(traceevent_t));
	w->n_buf = 0;
	return err;
}

/* Appends one slot whose four words are in host order. */
static inline int put_slot(tk_kev_writer *w, uint32_t h, uint32_t t, uint32_t d1, uint32_t d2)
{
	traceevent_t *ev;

	if (w->n_buf == KEV_BUF_SLOTS) {
		int err = tk_kev_writer_flush(w);
		if (err != TK_OK)
			return err;
	}
	ev = &w->buf[w->n_buf++];
	ev->header = tk__cs32(w->swap, h);
	ev->data[0] = tk__cs32(w->swap, t);
	ev->data[1] = tk__cs32(w->swap, d1);
	ev->data[2] = tk__cs32(w->swap, d2);
	w->slots++;
	return TK_OK;
}

/* Appends one slot whose payload bytes are already in file order. */
static inline int put_slot_bytes(tk_kev_writer *w, uint32_t h, uint32_t t, const unsigned char *payload8)
{
	traceevent_t *ev;

	if (w->n_buf == KEV_BUF_SLOTS) {
		int err = tk_kev_writer_flush(w);
		if (err != TK_OK)
			return err;
	}
	ev = &w->buf[w->n_buf++];
	ev->header = tk__cs32(w->swap, h);
	ev->data[0] = tk__cs32(w->swap, t);
	memcpy(&ev->data[1], payload8, 8);
	w->slots++;
	return TK_OK;
}

/* ---- header ------------------------------------------------------------------------- */

struct hdr_buf {
	char *p;
	size_t len, cap;
	int oom;
};

static void hb_put(struct hdr_buf *hb, const char *s, size_t n)
{
	if (hb->oom)
		return;
	if (hb->len + n + 1 > hb->cap) {
		size_t cap = hb->cap ? hb->cap : 1024;
		char *np;
		while (hb->len + n + 1 > cap)
			cap *= 2;
		np = realloc(hb->p, cap);
		if (np == NULL) {
			hb->oom = 1;
			return;
		}
		hb->p = np;
		hb->cap = cap;
	}
	memcpy(hb->p + hb->len, s, n);
	hb->len += n;
	hb->p[hb->len] = '\0';
}

static void hb_key(struct hdr_buf *hb, const char *key, const char *value)
{
	hb_put(hb, "TRACE_", 6);
	hb_put(hb, key, strlen(key));
	hb_put(hb, "::", 2);
	if (value)
		hb_put(hb, value, strlen(value));
}

static void ctime_value(char *out, size_t cap, time_t t)
{
	char tmp[64];
	size_t n;

	if (ctime_r(&t, tmp) == NULL) {
		snprintf(out, cap, "%lld", (long long)t);
		return;
	}
	n = strlen(tmp);
	if (n > 0 && tmp[n - 1] == '\n')
		tmp[n - 1] = '\0';
	snprintf(out, cap, "%s", tmp);
}

static time_t system_boot_time(void)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[256];
	long long btime = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "btime %lld", &btime) == 1)
			break;
	}
	fclose(f);
	return (time_t)btime;
}

static int bad_header_text(const char *s)
{
	return s != NULL && (strstr(s, "TRACE_") != NULL || strstr(s, "::") != NULL);
}

/*
 * The standard header keywords (qnx-kev-format.md 1.1, QNX 8's NORMALIZEDN included): as
 * a user attribute each would end the header early, change the byte order or version a
 * reader sees, or hide the real value, so none may be one.
 */
static const char *const reserved_keys[] = {
	"HEADER_BEGIN", "FILE_NAME",   "DATE",        "VER_MAJOR",      "VER_MINOR",
	"LITTLE_ENDIAN", "BIG_ENDIAN", "MIDDLE_ENDIAN", "ENCODING",     "BOOT_DATE",
	"CYCLES_PER_SEC", "CPU_NUM",   "SYSNAME",     "NODENAME",       "SYS_RELEASE",
	"SYS_VERSION",  "MACHINE",     "SYSPAGE_LEN", "NORMALIZEDN",    "HEADER_END",
};

static int reserved_key(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(reserved_keys) / sizeof(reserved_keys[0]); i++) {
		if (strcmp(key, reserved_keys[i]) == 0)
			return 1;
	}
	return 0;
}

/*
 * Builds the header text. syspage_len is the SYSPAGE_LEN value to declare.
 */
/* Width of a CYCLES_PER_SEC value that may be rewritten in place: any uint64_t, padded with
 * trailing spaces (readers skip white space around numbers). */
#define KEV_CPS_WIDTH 20

static void cps_text(char *out, size_t cap, uint64_t cps, int padded)
{
	if (padded)
		snprintf(out, cap, "%-*llu", KEV_CPS_WIDTH, (unsigned long long)cps);
	else
		snprintf(out, cap, "%llu", (unsigned long long)cps);
}

static int build_header(struct hdr_buf *hb, const tk_kev_header *hdr, const char *default_name,
			const struct utsname *uts, uint64_t cps, int cps_padded, unsigned cpu_num,
			size_t syspage_len)
{
	char val[128];
	size_t i;

	hb->len = 0;
	hb_key(hb, "HEADER_BEGIN", NULL);
	hb_key(hb, "FILE_NAME", hdr->file_name ? hdr->file_name : default_name);
	ctime_value(val, sizeof(val), hdr->date ? hdr->date : time(NULL));
	hb_key(hb, "DATE", val);
	hb_key(hb, "VER_MAJOR", hdr->ver_major ? hdr->ver_major : "1");
	hb_key(hb, "VER_MINOR", hdr->ver_minor ? hdr->ver_minor : "01");
	hb_key(hb, hdr->big_endian ? "BIG_ENDIAN" : "LITTLE_ENDIAN", "TRUE");
	hb_key(hb, "ENCODING", "16 byte events");
	ctime_value(val, sizeof(val), hdr->boot_date ? hdr->boot_date : system_boot_time());
	hb_key(hb, "BOOT_DATE", val);
	cps_text(val, sizeof(val), cps, cps_padded);
	hb_key(hb, "CYCLES_PER_SEC", val);
	snprintf(val, sizeof(val), "%u", cpu_num);
	hb_key(hb, "CPU_NUM", val);
	hb_key(hb, "SYSNAME", hdr->sysname ? hdr->sysname : uts->sysname);
	hb_key(hb, "NODENAME", hdr->nodename ? hdr->nodename : uts->nodename);
	hb_key(hb, "SYS_RELEASE", hdr->sys_release ? hdr->sys_release : uts->release);
	hb_key(hb, "SYS_VERSION", hdr->sys_version ? hdr->sys_version : uts->version);
	hb_key(hb, "MACHINE", hdr->machine ? hdr->machine : uts->machine);
	snprintf(val, sizeof(val), "%zu", syspage_len);
	hb_key(hb, "SYSPAGE_LEN", val);
	for (i = 0; i < hdr->n_attrs; i++)
		hb_key(hb, hdr->attrs[i].key, hdr->attrs[i].value);
	hb_key(hb, "HEADER_END", NULL);
	return hb->oom ? TK_ENOMEM : TK_OK;
}

static int check_header(const tk_kev_header *hdr, const struct utsname *uts, const char *name,
			char *msg, size_t cap)
{
	const char *fixed[] = { hdr->file_name ? hdr->file_name : name,
				hdr->sysname ? hdr->sysname : uts->sysname,
				hdr->nodename ? hdr->nodename : uts->nodename,
				hdr->sys_release ? hdr->sys_release : uts->release,
				hdr->sys_version ? hdr->sys_version : uts->version,
				hdr->machine ? hdr->machine : uts->machine,
				hdr->ver_major, hdr->ver_minor };
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (fixed[i] != NULL && strstr(fixed[i], "TRACE_") != NULL) {
			snprintf(msg, cap, "header value \"%s\" contains \"TRACE_\", which ends a value", fixed[i]);
			return TK_EINVAL;
		}
	}
	if (hdr->n_attrs > 0 && hdr->attrs == NULL) {
		snprintf(msg, cap, "n_attrs is %zu but attrs is NULL", hdr->n_attrs);
		return TK_EINVAL;
	}
	for (i = 0; i < hdr->n_attrs; i++) {
		char why[200];
		if (tk_kev_attr_check(&hdr->attrs[i], why, sizeof(why)) != TK_OK) {
			snprintf(msg, cap, "user attribute %zu: %s", i, why);
			return TK_EINVAL;
		}
	}
	return TK_OK;
}

int tk_kev_attr_check(const tk_kev_attr *a, char *msg, size_t cap)
{
	size_t len;

	if (a == NULL || a->key == NULL || a->key[0] == '\0' || a->value == NULL) {
		if (cap > 0)
			snprintf(msg, cap, "an empty key or a missing value");
		return TK_EINVAL;
	}
	len = strlen(a->key);
	if (bad_header_text(a->key) || bad_header_text(a->value)) {
		if (cap > 0)
			snprintf(msg, cap, "\"%.40s%s\": a key or value may not contain \"TRACE_\" or \"::\"", a->key,
				 len > 40 ? "..." : "");
		return TK_EINVAL;
	}
	/* a longer key makes the whole header unreadable (traceparser's limit) */
	if (len > TK_KEV_ATTR_KEY_MAX) {
		if (cap > 0)
			snprintf(msg, cap, "the key \"%.40s...\" has %zu bytes; readers take at most %d", a->key, len,
				 TK_KEV_ATTR_KEY_MAX);
		return TK_EINVAL;
	}
	/* "k:" + "::" reads back as the key "k" and a value beginning with ':' */
	if (a->key[len - 1] == ':') {
		if (cap > 0)
			snprintf(msg, cap, "the key \"%s\" ends in ':', which a reader would take as part of the value",
				 a->key);
		return TK_EINVAL;
	}
	if (reserved_key(a->key)) {
		if (cap > 0)
			snprintf(msg, cap, "\"%s\" is a standard header keyword", a->key);
		return TK_EINVAL;
	}
	return TK_OK;
}

static unsigned online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 && n <= 64 ? (unsigned)n : (n > 64 ? 64u : 1u);
}

static int has_attr(const tk_kev_header *hdr, const char *key)
{
	size_t i;

	for (i = 0; i < hdr->n_attrs; i++)
		if (hdr->attrs != NULL && hdr->attrs[i].key != NULL && strcmp(hdr->attrs[i].key, key) == 0)
			return 1;
	return 0;
}

static int writer_start(tk_kev_writer *w, const tk_kev_header *hdr_in, const char *default_name)
{
	static const tk_kev_header empty;
	const tk_kev_header *hdr = hdr_in ? hdr_in : &empty;
	struct hdr_buf hb = { 0 };
	struct utsname uts;
	uint64_t cps = hdr->cycles_per_sec ? hdr->cycles_per_sec : tk_clock_cycles_per_sec();
	unsigned cpu_num = hdr->cpu_num ? hdr->cpu_num : online_cpus();
	unsigned char *syspage = NULL;
	size_t syspage_len, pad = 0;
	int err, padded = 0;
	tk_kev_header with_clock;
	tk_kev_attr *attrs = NULL;
	char c0_text[24], ns0_text[24];

	w->swap = (hdr->big_endian != 0) != TK__HOST_BIG_ENDIAN;
	if (uname(&uts) != 0)
		memset(&uts, 0, sizeof(uts));
	err = check_header(hdr, &uts, default_name, w->errmsg, sizeof(w->errmsg));
	if (err != TK_OK) {
		w->err = err;
		return err;
	}
	w->hdr_off = -1;
	if (hdr->cycles_per_sec == 0 && !has_attr(hdr, "TRACEKIT_CLOCK_CYCLES") &&
	    !has_attr(hdr, "TRACEKIT_CLOCK_RAW_NS")) {
		/* The machine's clock: name the start pair (docs/kev-format.md, "Time"). */
		attrs = malloc((hdr->n_attrs + 2) * sizeof(*attrs));
		if (attrs == NULL)
			return set_err(w, TK_ENOMEM, "cannot build the header: %s", tk_strerror(TK_ENOMEM));
		if (hdr->n_attrs > 0)
			memcpy(attrs, hdr->attrs, hdr->n_attrs * sizeof(*attrs));
		tk__clock_pair(&w->c0, &w->ns0);
		snprintf(c0_text, sizeof(c0_text), "%llu", (unsigned long long)w->c0);
		snprintf(ns0_text, sizeof(ns0_text), "%llu", (unsigned long long)w->ns0);
		attrs[hdr->n_attrs] = (tk_kev_attr){ "TRACEKIT_CLOCK_CYCLES", c0_text };
		attrs[hdr->n_attrs + 1] = (tk_kev_attr){ "TRACEKIT_CLOCK_RAW_NS", ns0_text };
		with_clock = *hdr;
		with_clock.attrs = attrs;
		with_clock.n_attrs = hdr->n_attrs + 2;
		hdr = &with_clock;
		w->clock_pair = 1;
		padded = 1;
		if (padded) {
			int fl = fcntl(w->fd, F_GETFL);
			w->hdr_off = fl >= 0 && !(fl & O_APPEND) ? lseek(w->fd, 0, SEEK_CUR) : -1;
		}
	}
	if (hdr->syspage != NULL) {
		syspage_len = hdr->syspage_len;
		err = build_header(&hb, hdr, default_name, &uts, cps, padded, cpu_num, syspage_len);
	} else {
		size_t base = tk_kev_syspage_size(cpu_num);
		/* Pad the syspage so the first event starts at a 16-byte file offset. */
		for (pad = 0; pad < 16; pad++) {
			err = build_header(&hb, hdr, default_name, &uts, cps, padded, cpu_num, base + pad);
			if (err != TK_OK || (hb.len + base + pad) % 16 == 0)
				break;
		}
		syspage_len = base + pad;
		if (err == TK_OK) {
			syspage = calloc(1, syspage_len);
			if (syspage == NULL)
				err = TK_ENOMEM;
			else
				tk_kev_syspage_build(syspage, syspage_len, cpu_num, cps,
						     (uint32_t)(hdr->boot_date ? hdr->boot_date : system_boot_time()),
						     hdr->big_endian != 0);
		}
	}
	free(attrs);
	if (err != TK_OK) {
		free(hb.p);
		free(syspage);
		return set_err(w, err, "cannot build the header: %s", tk_strerror(err));
	}
	if (w->hdr_off >= 0) {
		const char *v = strstr(hb.p, "TRACE_CYCLES_PER_SEC::");
		w->cps_pos = v != NULL ? (size_t)(v - hb.p) + strlen("TRACE_CYCLES_PER_SEC::") : 0;
		if (v == NULL)
			w->hdr_off = -1;
		w->syspage_pos = hb.len;
		w->syspage_len = syspage != NULL ? syspage_len : 0;
		w->cpu_num = cpu_num;
		w->boot = (uint32_t)(hdr->boot_date ? hdr->boot_date : system_boot_time());
		w->big_endian = hdr->big_endian != 0;
	}
	err = write_all(w, hb.p, hb.len);
	if (err == TK_OK)
		err = write_all(w, syspage ? syspage : hdr->syspage, syspage_len);
	free(hb.p);
	free(syspage);
	return err;
}

/*
 * The output's descriptor is duplicated to a high number (close-on-exec) and events are
 * written there: a program that closes its low descriptors, or stdout ("-"), before it
 * exits still has its trace delivered, and the identity of the file (device and inode) is
 * checked before each write in case the program closes that one too.
 */
static int hold_high(tk_kev_writer *w)
{
	struct rlimit rl;
	struct stat sb;
	long floor = 1000;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur <= floor + 24)
		floor = (long)rl.rlim_cur * 3 / 4; /* a small limit: still above the usual numbers */
	if (fstat(w->stream_fd, &sb) != 0)
		return set_err(w, tk_error_from_errno(errno), "cannot use the output: %s", strerror(errno));
	w->dev = sb.st_dev;
	w->ino = sb.st_ino;
	w->fd = fcntl(w->stream_fd, F_DUPFD_CLOEXEC, floor > 3 ? floor : 3);
	if (w->fd < 0)
		w->fd = fcntl(w->stream_fd, F_DUPFD_CLOEXEC, 3);
	if (w->fd < 0)
		return set_err(w, tk_error_from_errno(errno), "cannot duplicate the output's descriptor: %s",
			       strerror(errno));
	return TK_OK;
}

static tk_outfile *abandoned[8]; /* outfiles whose descriptors the program took */
static unsigned n_abandoned;

/*
 * Commits (or aborts) the outfile, whose stream still holds the low descriptor. If the
 * program closed or reused that number, the writer's own duplicate is put there for the
 * time of the commit and the program's descriptor restored after it, so the commit never
 * syncs, closes or renames anything of the program's. Returns the commit's result.
 */
static int finish_outfile(tk_kev_writer *w, int commit)
{
	int saved = -1, saved_flags = 0, err = TK_OK, swapped = 0;

	if (!fd_is_ours(w, w->stream_fd)) {
		if (!fd_is_ours(w, w->fd)) {
			/* Neither descriptor is ours any more: leave the stream alone (never close
			 * a descriptor of the program's); the handle is kept, not freed. */
			if (n_abandoned < sizeof(abandoned) / sizeof(abandoned[0]))
				abandoned[n_abandoned++] = w->outfile;
			return commit ? set_err(w, TK_EIO, "the trace file's descriptors were closed by the program") : TK_OK;
		}
		saved_flags = fcntl(w->stream_fd, F_GETFD);
		if (saved_flags >= 0)
			saved = fcntl(w->stream_fd, F_DUPFD_CLOEXEC, w->fd + 1);
		if (saved_flags >= 0 && saved < 0)
			return set_err(w, tk_error_from_errno(errno), "cannot keep the program's descriptor %d: %s",
				       w->stream_fd, strerror(errno));
		dup2(w->fd, w->stream_fd);
		swapped = 1;
	}
	if (commit)
		err = tk_outfile_commit(w->outfile);
	else
		tk_outfile_abort(w->outfile);
	if (swapped && saved >= 0) {
		dup3(saved, w->stream_fd, (saved_flags & FD_CLOEXEC) ? O_CLOEXEC : 0);
		close(saved);
	}
	return err;
}

int tk_kev_writer_open(tk_kev_writer **out, const char *path, const tk_kev_header *hdr, unsigned flags)
{
	tk_kev_writer *w;
	int err;

	if (out == NULL || path == NULL)
		return TK_EINVAL;
	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return TK_ENOMEM;
	w->flags = flags;
	w->fd = -1;
	if (strcmp(path, "-") == 0) {
		/* Standard output: a duplicate of it, never the program's stdio stream (a program
		 * may fclose(stdout) before it exits, and its trace still gets out). */
		w->stream_fd = STDOUT_FILENO;
	} else {
		err = tk_outfile_open(&w->outfile, path, TK_OUTFILE_KEEP_PARTIAL_ON_ABORT);
		if (err != TK_OK) {
			free(w);
			return err;
		}
		/* Events go out with write(2); nothing is ever buffered in the stdio stream. */
		w->stream_fd = fileno(tk_outfile_stream(w->outfile));
	}
	err = hold_high(w);
	if (err == TK_OK) {
		w->held = 1;
		write_behind_init(w);
		err = writer_start(w, hdr, path);
	}
	if (err != TK_OK) {
		if (w->fd >= 0)
			close(w->fd);
		if (w->outfile != NULL) {
			/* by tk_outfile, in the output's directory: never a device written in place */
			tk_outfile_remove_temp(w->outfile);
			tk_outfile_abort(w->outfile);
		}
		free(w);
		return err;
	}
	*out = w;
	return TK_OK;
}

int tk_kev_writer_open_fd(tk_kev_writer **out, int fd, const tk_kev_header *hdr, unsigned flags)
{
	tk_kev_writer *w;
	int err;

	if (out == NULL || fd < 0)
		return TK_EINVAL;
	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return TK_ENOMEM;
	w->fd = fd;
	w->stream_fd = -1;
	w->flags = flags;
	write_behind_init(w);
	err = writer_start(w, hdr, "-");
	if (err != TK_OK) {
		free(w);
		return err;
	}
	*out = w;
	return TK_OK;
}

static int check_event(tk_kev_writer *w, unsigned cpu, unsigned cls, unsigned code)
{
	if (w->err != TK_OK)
		return w->err;
	if (cpu > 63 || (cls & ~(0x1fu << 10)) != 0 || code > 0x3ff)
		return TK_EINVAL;
	return TK_OK;
}

static int maybe_time(tk_kev_writer *w, unsigned cpu, uint64_t t)
{
	uint32_t msb = (uint32_t)(t >> 32);
	uint64_t bit = 1ull << cpu;

	if (w->flags & TK_KEV_NO_AUTO_TIME)
		return TK_OK;
	if ((w->msb_valid & bit) && w->msb[cpu] == msb)
		return TK_OK;
	w->msb_valid |= bit;
	w->msb[cpu] = msb;
	return put_slot(w, _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, _TRACE_CONTROL_C, _TRACE_CONTROL_TIME),
			(uint32_t)t, msb, (uint32_t)t);
}

int tk_kev_write_event(tk_kev_writer *w, unsigned cpu, unsigned cls, unsigned code, uint64_t t,
		       const uint32_t *words, size_t n_words)
{
	uint32_t ts = (uint32_t)t;
	size_t i;
	int err;

	if (w == NULL || (n_words > 0 && words == NULL))
		return TK_EINVAL;
	err = check_event(w, cpu, cls, code);
	if (err != TK_OK)
		return err;
	if (n_words * 4 > TK_KEV_MAX_PAYLOAD)
		return TK_ETOOBIG;
	err = maybe_time(w, cpu, t);
	if (err != TK_OK)
		return err;
	if (n_words <= 2)
		return put_slot(w, _TRACE_MAKE_CODE(cpu, _TRACE_STRUCT_S, cls, code), ts,
				n_words > 0 ? words[0] : 0, n_words > 1 ? words[1] : 0);
	for (i = 0; i < n_words && err == TK_OK; i += 2) {
		unsigned flag = i == 0 ? _TRACE_STRUCT_CB : (i + 2 >= n_words ? _TRACE_STRUCT_CE : _TRACE_STRUCT_CC);
		err = put_slot(w, _TRACE_MAKE_CODE(cpu, flag, cls, code), ts, words[i],
			       i + 1 < n_words ? words[i + 1] : 0);
	}
	return err;
}

int tk_kev_write_event_str(tk_kev_writer *w, unsigned cpu, unsigned cls, unsigned code, uint64_t t,
			   const uint32_t *words, size_t n_words, const char *str)
{
	unsigned char stackbuf[256];
	unsigned char *payload = stackbuf;
	size_t slen, n_bytes, padded, i, n_slots;
	uint32_t ts = (uint32_t)t;
	int err;

	if (w == NULL || str == NULL || (n_words > 0 && words == NULL))
		return TK_EINVAL;
	err = check_event(w, cpu, cls, code);
	if (err != TK_OK)
		return err;
	slen = strlen(str) + 1;
	if (slen > TK_KEV_MAX_PAYLOAD || n_words * 4 + slen > TK_KEV_MAX_PAYLOAD)
		return TK_ETOOBIG;
	n_bytes = n_words * 4 + slen;
	/* 8 bytes or less (NUL included) is one S slot, as QNX's kernel writes it */
	padded = (n_bytes + 7) & ~(size_t)7;
	if (padded > sizeof(stackbuf)) {
		payload = malloc(padded);
		if (payload == NULL)
			return TK_ENOMEM;
	}
	for (i = 0; i < n_words; i++)
		tk__store32(payload + 4 * i, tk__cs32(w->swap, words[i]));
	memcpy(payload + 4 * n_words, str, slen);
	memset(payload + n_bytes, 0, padded - n_bytes);

	err = maybe_time(w, cpu, t);
	n_slots = padded / 8;
	for (i = 0; i < n_slots && err == TK_OK; i++) {
		unsigned flag = n_slots == 1 ? _TRACE_STRUCT_S
				: i == 0 ? _TRACE_STRUCT_CB
				: i + 1 == n_slots ? _TRACE_STRUCT_CE
				: _TRACE_STRUCT_CC;
		err = put_slot_bytes(w, _TRACE_MAKE_CODE(cpu, flag, cls, code), ts, payload + 8 * i);
	}
	if (payload != stackbuf)
		free(payload);
	return err;
}

int tk_kev_write_raw(tk_kev_writer *w, const traceevent_t *events, size_t n)
{
	size_t i;
	int err = TK_OK;

	if (w == NULL || (n > 0 && events == NULL))
		return TK_EINVAL;
	if (w->err != TK_OK)
		return w->err;
	for (i = 0; i < n && err == TK_OK; i++)
		err = put_slot(w, events[i].header, events[i].data[0], events[i].data[1], events[i].data[2]);
	return err;
}

int tk_kev_write_raw_file_order(tk_kev_writer *w, const void *slots, size_t n)
{
	int err;

	if (w == NULL || (n > 0 && slots == NULL))
		return TK_EINVAL;
	err = tk_kev_writer_flush(w);
	if (err != TK_OK)
		return err;
	err = write_all(w, slots, n * sizeof(traceevent_t));
	if (err == TK_OK)
		w->slots += n;
	return err;
}

int tk_kev_write_raw_file_order_v(tk_kev_writer *w, const struct iovec *iov_in, int n_iov)
{
	struct iovec iov[64];
	uint64_t total = 0;
	int i, err;

	if (w == NULL || n_iov < 0 || (n_iov > 0 && iov_in == NULL))
		return TK_EINVAL;
	for (i = 0; i < n_iov; i++) {
		if (iov_in[i].iov_len % sizeof(traceevent_t) != 0 || (iov_in[i].iov_len > 0 && iov_in[i].iov_base == NULL))
			return TK_EINVAL;
		total += iov_in[i].iov_len;
	}
	err = tk_kev_writer_flush(w);
	if (err == TK_OK)
		err = check_fd(w);
	if (err != TK_OK)
		return err;
	while (n_iov > 0) {
		int k = n_iov < 64 ? n_iov : 64, first = 0;
		memcpy(iov, iov_in, (size_t)k * sizeof(*iov));
		iov_in += k;
		n_iov -= k;
		/* writev, resuming after short writes */
		while (first < k) {
			ssize_t n = writev(w->fd, iov + first, k - first);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return set_err(w, tk_error_from_errno(errno), "write failed at byte offset %llu: %s",
					       (unsigned long long)w->bytes_written, strerror(errno));
			}
			w->bytes_written += (uint64_t)n;
			while (first < k && (size_t)n >= iov[first].iov_len) {
				n -= (ssize_t)iov[first].iov_len;
				first++;
			}
			if (first < k) {
				iov[first].iov_base = (char *)iov[first].iov_base + n;
				iov[first].iov_len -= (size_t)n;
			}
		}
	}
	w->slots += total / sizeof(traceevent_t);
	write_behind(w);
	return TK_OK;
}

uint64_t tk_kev_writer_slots(const tk_kev_writer *w)
{
	return w ? w->slots : 0;
}

uint64_t tk_kev_writer_bytes(const tk_kev_writer *w)
{
	return w ? w->bytes_written : 0;
}

const char *tk_kev_writer_temp_path(const tk_kev_writer *w)
{
	if (w == NULL || !w->held)
		return "";
	return w->outfile != NULL ? tk_outfile_temp_path(w->outfile) : "-";
}

const char *tk_kev_writer_errmsg(const tk_kev_writer *w)
{
	return w ? w->errmsg : "";
}

/*
 * Completing a file written with the machine's rate: the rate measured against
 * CLOCK_MONOTONIC_RAW between the start pair and now replaces the one written at the start
 * (the kernel's, or an estimate), in the header and in our syspage, in place (same width).
 * Converted with it, every event's time is off by at most about the pairs' read gaps (tens
 * of ns) anywhere in the file, however long. A file never completed keeps the start value.
 */
static int correct_rate(tk_kev_writer *w)
{
	uint64_t c1, ns1, rate;
	char text[KEV_CPS_WIDTH + 1];
	unsigned char *sp;
	int err;

	if (!w->clock_pair || w->hdr_off < 0)
		return TK_OK;
	tk__clock_pair(&c1, &ns1);
	if (ns1 <= w->ns0 + 1000000u || c1 <= w->c0)
		return TK_OK; /* under a millisecond: the estimate is as good */
	rate = (uint64_t)((long double)(c1 - w->c0) * 1e9L / (long double)(ns1 - w->ns0) + 0.5L);
	if (rate == 0)
		return TK_OK;
	err = check_fd(w);
	if (err != TK_OK)
		return err;
	cps_text(text, sizeof(text), rate, 1);
	if (pwrite(w->fd, text, KEV_CPS_WIDTH, w->hdr_off + (off_t)w->cps_pos) != KEV_CPS_WIDTH)
		return set_err(w, tk_error_from_errno(errno ? errno : EIO),
			       "rewriting TRACE_CYCLES_PER_SEC at byte offset %llu failed: %s",
			       (unsigned long long)w->cps_pos, strerror(errno ? errno : EIO));
	if (w->syspage_len == 0)
		return TK_OK;
	sp = calloc(1, w->syspage_len);
	if (sp == NULL)
		return set_err(w, TK_ENOMEM, "out of memory");
	tk_kev_syspage_build(sp, w->syspage_len, w->cpu_num, rate, w->boot, w->big_endian);
	if (pwrite(w->fd, sp, w->syspage_len, w->hdr_off + (off_t)w->syspage_pos) != (ssize_t)w->syspage_len)
		err = set_err(w, tk_error_from_errno(errno ? errno : EIO),
			      "rewriting the syspage at byte offset %llu failed: %s",
			      (unsigned long long)w->syspage_pos, strerror(errno ? errno : EIO));
	free(sp);
	return err;
}

int tk_kev_writer_close(tk_kev_writer *w)
{
	int err;

	if (w == NULL)
		return TK_OK;
	err = tk_kev_writer_flush(w);
	if (err == TK_OK)
		err = correct_rate(w);
	if (w->outfile != NULL) {
		/* Keep what was written in "<path>.part" on error; nothing under the final name. */
		int rc = finish_outfile(w, err == TK_OK);
		if (err == TK_OK)
			err = rc;
	}
	if (w->held && fd_is_ours(w, w->fd))
		close(w->fd);
	free(w);
	return err;
}

void tk_kev_writer_abort(tk_kev_writer *w)
{
	if (w == NULL)
		return;
	if (w->outfile != NULL) {
		/* in the directory of the open, even after a chdir(), and only the file we created */
		tk_outfile_remove_temp(w->outfile);
		finish_outfile(w, 0);
	}
	if (w->held && fd_is_ours(w, w->fd))
		close(w->fd);
	free(w);
}
