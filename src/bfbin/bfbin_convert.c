/* SPDX-License-Identifier: MIT */
/*
 * What every .byfl converter shares: error and warning reporting, running the parser
 * with the caller's live-input options and stop flag, output checks, the default output
 * name, and the private directory a database file is built in, then renamed from.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bfbin/bfbin_internal.h"

int tk__bfconv_init(struct tk__bfconv *c, tk_bfbin_convert *cv, const char *in_path)
{
	memset(c, 0, sizeof(*c));
	c->cv = cv;
	c->in_path = in_path;
	c->in_fd = -1;
	/* Fields after error[] came later: a caller built before them is still served. */
	if (cv == NULL || cv->struct_size < offsetof(tk_bfbin_convert, flags))
		return TK_EINVAL; /* no room for a message: the caller passed no usable cv */
	cv->error[0] = '\0';
	if (TK__BFCONV_HAS(cv, flags))
		c->flags = cv->flags;
	if (TK__BFCONV_HAS(cv, progress_cb))
		c->progress_cb = cv->progress_cb;
	if ((c->flags & TK_BFBIN_INPUT_FD) && TK__BFCONV_HAS(cv, input_fd)) {
		if (cv->input_fd < 0)
			return tk__bfconv_fail(c, TK_EINVAL, "no input descriptor was given");
		c->in_fd = cv->input_fd;
		if (in_path == NULL)
			c->in_path = "standard input";
		return TK_OK;
	}
	if (in_path == NULL)
		return tk__bfconv_fail(c, TK_EINVAL, "no input file was given");
	return TK_OK;
}

int tk__bfconv_fail(struct tk__bfconv *c, int rc, const char *fmt, ...)
{
	va_list ap;

	if (c->rc == TK_OK) {
		c->rc = rc;
		va_start(ap, fmt);
		vsnprintf(c->cv->error, sizeof(c->cv->error), fmt, ap);
		va_end(ap);
	}
	c->halt = 1;
	return rc;
}

void tk__bfconv_warn(struct tk__bfconv *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (c->cv->warning_cb == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->cv->warning_cb(c->cv->user_data, msg);
}

void tk__bfconv_parse_error(void *user_data, const char *message)
{
	struct tk__bfconv *c = user_data;

	if (c->rc == TK_OK) /* the parser's code is taken from its return value */
		snprintf(c->cv->error, sizeof(c->cv->error), "%s", message);
}

/* The parser's progress, passed on with the caller's user_data. */
static void bfconv_progress(void *user_data, uint64_t done, uint64_t total)
{
	struct tk__bfconv *c = user_data;

	c->progress_cb(c->cv->user_data, done, total);
}

int tk__bfconv_run(struct tk__bfconv *c, const bfbin_callback_t *cbs, int live, void (*idle_cb)(void *))
{
	tk_bfbin_parse_options opts = TK_BFBIN_PARSE_OPTIONS_INIT;
	int rc;

	opts.live_input = live;
	opts.live_timeout_ms = c->cv->live_timeout_ms;
	opts.stop = c->cv->stop;
	opts.idle_cb = idle_cb;
	opts.progress_cb = c->progress_cb != NULL ? bfconv_progress : NULL;
	if (c->in_fd >= 0)
		rc = tk__bfbin_parse_fd_stop(c->in_fd, c->in_path, cbs, c, &opts, &c->halt);
	else
		rc = tk__bfbin_parse_path(c->in_path, cbs, c, &opts, &c->halt);
	if (c->rc != TK_OK)
		return c->rc;
	if (rc == TK_ECANCELED)
		snprintf(c->cv->error, sizeof(c->cv->error), "Conversion of %s interrupted", c->in_path);
	return rc;
}

int tk__bfconv_check_output(struct tk__bfconv *c, FILE *out)
{
	if (fflush(out) != 0 || ferror(out)) {
		int err = errno ? errno : EIO;
		return tk__bfconv_fail(c, tk_error_from_errno(err), "Failed to write %s (%s)",
				       c->cv->output_name ? c->cv->output_name : "the output", strerror(err));
	}
	return TK_OK;
}

size_t tk__bf_u64_to_dec(char *buf, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return n;
}

char *tk_bfbin_default_output(const char *in_path, const char *ext)
{
	const char *base, *dot;
	size_t keep, ext_len;
	char *out;

	if (in_path == NULL || ext == NULL)
		return NULL;
	base = strrchr(in_path, '/');
	base = base ? base + 1 : in_path;
	dot = strrchr(base, '.');
	/*
	 * Byfl looks for the last '.' of the whole path ("dir.v2/run" -> "dir.db"): we only
	 * look in the last component, where a leading '.' (".profile") is not an extension.
	 */
	keep = dot != NULL && dot != base ? (size_t)(dot - in_path) : strlen(in_path);
	ext_len = strlen(ext);
	out = malloc(keep + ext_len + 1);
	if (out == NULL)
		return NULL;
	memcpy(out, in_path, keep);
	memcpy(out + keep, ext, ext_len + 1);
	return out;
}

int tk_bfbin_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (a == NULL || b == NULL || stat(a, &sa) != 0 || stat(b, &sb) != 0)
		return 0;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int tk__bfconv_check_db_output(struct tk__bfconv *c, const char *path)
{
	struct stat sb;

	if (path == NULL || path[0] == '\0')
		return tk__bfconv_fail(c, TK_EINVAL, "no output file was given");
	if (c->in_fd >= 0) {
		struct stat si, so;
		if (fstat(c->in_fd, &si) == 0 && stat(path, &so) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
			return tk__bfconv_fail(c, TK_EINVAL, "The output file %s is the input file", path);
	} else if (tk_bfbin_same_file(c->in_path, path)) {
		return tk__bfconv_fail(c, TK_EINVAL, "The output file %s is the input file", path);
	}
	/* The file is built beside and renamed onto path: never onto a device or a pipe. */
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
		return tk__bfconv_fail(c, TK_EINVAL, "Cannot replace %s: it is not a regular file", path);
	return TK_OK;
}

/* Removes every entry of a private directory (one level), then the directory. */
static void bf_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d != NULL) {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

/* Removes "<out>.part" only while it is still the symlink we made. */
static void bf_remove_link(struct tk__bf_temp *t)
{
	char buf[4096];
	ssize_t n;

	if (!t->linked)
		return;
	n = readlink(t->link, buf, sizeof(buf) - 1);
	if (n >= 0) {
		buf[n] = '\0';
		if (strcmp(buf, t->link_target) == 0)
			unlink(t->link);
	}
}

static void bf_temp_free(struct tk__bf_temp *t)
{
	free(t->dir);
	free(t->file);
	free(t->link);
	free(t->link_target);
	memset(t, 0, sizeof(*t));
}

void tk__bfconv_temp_discard(struct tk__bf_temp *t)
{
	bf_remove_link(t);
	if (t->dir != NULL)
		bf_remove_dir(t->dir);
	if (t->cv != NULL)
		t->cv->temp_cb(t->cv->user_data, NULL, NULL);
	bf_temp_free(t);
}

static char *bf_concat(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = malloc(la + lb + lc + 1);

	if (s != NULL) {
		memcpy(s, a, la);
		memcpy(s + la, b, lb);
		memcpy(s + la + lb, c, lc + 1);
	}
	return s;
}

int tk__bfconv_temp_create(struct tk__bfconv *c, const char *out, struct tk__bf_temp *t)
{
	const char *slash = strrchr(out, '/');
	const char *base = slash != NULL ? slash + 1 : out;
	size_t dir_len = slash != NULL ? (size_t)(slash - out) + 1 : 0;
	struct stat old;
	int have_old, fd, err;
	char *prefix;

	memset(t, 0, sizeof(*t));
	prefix = malloc(dir_len + 1);
	if (prefix == NULL)
		return tk__bfconv_fail(c, TK_ENOMEM, "Out of memory");
	memcpy(prefix, out, dir_len);
	prefix[dir_len] = '\0';
	t->dir = bf_concat(prefix, ".", base);
	free(prefix);
	if (t->dir != NULL) {
		char *d = bf_concat(t->dir, ".part.XXXXXX", "");
		free(t->dir);
		t->dir = d;
	}
	if (t->dir == NULL) {
		bf_temp_free(t);
		return tk__bfconv_fail(c, TK_ENOMEM, "Out of memory");
	}
	if (mkdtemp(t->dir) == NULL) {
		err = errno;
		free(t->dir);
		t->dir = NULL;
		bf_temp_free(t);
		return tk__bfconv_fail(c, tk_error_from_errno(err), "Failed to create %s.part (%s)", out, strerror(err));
	}
	t->file = bf_concat(t->dir, "/", base);
	t->link = bf_concat(out, ".part", "");
	/* relative to the output's directory: ".<base>.part.XXXXXX/<base>" */
	t->link_target = bf_concat(t->dir + dir_len, "/", base);
	if (t->file == NULL || t->link == NULL || t->link_target == NULL) {
		tk__bfconv_temp_discard(t);
		return tk__bfconv_fail(c, TK_ENOMEM, "Out of memory");
	}
	have_old = lstat(out, &old) == 0 && S_ISREG(old.st_mode);
	fd = open(t->file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, have_old ? 0600 : 0644);
	/* the mode of the output it replaces, exactly (open() applied the umask) */
	if (fd < 0 || (have_old && fchmod(fd, old.st_mode & 0777) != 0)) {
		err = errno;
		if (fd >= 0)
			close(fd);
		tk__bfconv_temp_discard(t);
		return tk__bfconv_fail(c, tk_error_from_errno(err), "Failed to create %s.part (%s)", out, strerror(err));
	}
	if (have_old && geteuid() == 0 && (old.st_uid != 0 || old.st_gid != 0) && fchown(fd, old.st_uid, old.st_gid) != 0) {
		/* best effort, as tk_outfile: the mode still keeps others out as before */
	}
	close(fd);
	/*
	 * "<out>.part": a stale one (an older run's file or link) is replaced by a link to the
	 * file being built. unlink() and symlink() follow nothing; when the name is taken
	 * again in between, there is simply no link.
	 */
	unlink(t->link);
	t->linked = symlink(t->link_target, t->link) == 0;
	if (TK__BFCONV_HAS(c->cv, temp_cb) && c->cv->temp_cb != NULL) {
		t->cv = c->cv;
		t->cv->temp_cb(t->cv->user_data, t->dir, t->linked ? t->link : NULL);
	}
	return TK_OK;
}

int tk__bfconv_temp_commit(struct tk__bf_temp *t, const char *out)
{
	int fd = open(t->file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), rc = TK_OK;

	if (fd < 0)
		return tk_error_from_errno(errno);
	if (fsync(fd) != 0 && errno != EINVAL)
		rc = tk_error_from_errno(errno);
	close(fd);
	if (rc == TK_OK && rename(t->file, out) != 0)
		rc = tk_error_from_errno(errno);
	if (rc != TK_OK)
		return rc; /* the caller discards */
	tk__bfconv_temp_discard(t);
	return TK_OK;
}

static uint64_t bf_name_hash(const char *name, int fold)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (; *name != '\0'; name++) {
		unsigned char ch = (unsigned char)*name;
		if (fold && ch >= 'A' && ch <= 'Z')
			ch = (unsigned char)(ch - 'A' + 'a');
		h = (h ^ ch) * 0x100000001b3ull;
	}
	return h;
}

static int bf_name_equal(const char *a, const char *b, int fold)
{
	if (!fold)
		return strcmp(a, b) == 0;
	for (;; a++, b++) {
		unsigned char ca = (unsigned char)*a, cb = (unsigned char)*b;
		if (ca >= 'A' && ca <= 'Z')
			ca = (unsigned char)(ca - 'A' + 'a');
		if (cb >= 'A' && cb <= 'Z')
			cb = (unsigned char)(cb - 'A' + 'a');
		if (ca != cb)
			return 0;
		if (ca == '\0')
			return 1;
	}
}

static char **bf_nameset_slot(char **slots, size_t cap, const char *name, int fold)
{
	size_t i = (size_t)bf_name_hash(name, fold) & (cap - 1);

	while (slots[i] != NULL && !bf_name_equal(slots[i], name, fold))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

int tk__bf_nameset_add(struct tk__bf_nameset *set, const char *name)
{
	char **slot;

	if ((set->n + 1) * 2 > set->cap) { /* at most half full: short probe sequences */
		size_t cap = set->cap ? set->cap * 2 : 64, i;
		char **slots = calloc(cap, sizeof(*slots));
		if (slots == NULL)
			return TK_ENOMEM;
		for (i = 0; i < set->cap; i++)
			if (set->slots[i] != NULL)
				*bf_nameset_slot(slots, cap, set->slots[i], set->fold_ascii) = set->slots[i];
		free(set->slots);
		set->slots = slots;
		set->cap = cap;
	}
	slot = bf_nameset_slot(set->slots, set->cap, name, set->fold_ascii);
	if (*slot != NULL)
		return 0;
	*slot = strdup(name);
	if (*slot == NULL)
		return TK_ENOMEM;
	set->n++;
	return 1;
}

void tk__bf_nameset_clear(struct tk__bf_nameset *set)
{
	size_t i;

	for (i = 0; i < set->cap && set->n > 0; i++) {
		if (set->slots[i] != NULL) {
			free(set->slots[i]);
			set->slots[i] = NULL;
			set->n--;
		}
	}
}

void tk__bf_nameset_free(struct tk__bf_nameset *set)
{
	tk__bf_nameset_clear(set);
	free(set->slots);
	set->slots = NULL;
	set->cap = set->n = 0;
}
