/* SPDX-License-Identifier: MIT */
/*
 * Error codes of the tk_ API and their messages, generated from TK_ERRNO_MAP so the
 * list of codes and the list of messages cannot drift apart.
 */
#include <errno.h>
#include <string.h>

#include "tracekit/common.h"

const char *tk_version(void)
{
	return TK_VERSION_STRING;
}

const char *tk_strerror(int err)
{
	if (err > 0)
		return strerror(err);
	switch (err) {
	case TK_OK:
		return "success";
#define TK__ERRNO_TEXT(name, value, text) \
	case TK_##name:                   \
		return text;
		TK_ERRNO_MAP(TK__ERRNO_TEXT)
#undef TK__ERRNO_TEXT
	default:
		return "unknown error";
	}
}

int tk_error_from_errno(int errnum)
{
	switch (errnum) {
	case 0:
		return TK_OK;
	case ENOMEM:
		return TK_ENOMEM;
	case ENOSPC:
		return TK_ENOSPC;
	/* Each limit says which it is: the fix differs (free space, quota, ulimit -f). */
	case EDQUOT:
		return TK_EDQUOT;
	case EFBIG:
		return TK_EFBIG;
	case ENOENT:
		return TK_ENOENT;
	case ENOTDIR:
		return TK_ENOTDIR;
	case EMFILE:
	case ENFILE:
		return TK_EMFILE;
	case EISDIR:
		return TK_EISDIR;
	case ENAMETOOLONG:
		return TK_ENAMETOOLONG;
	case EACCES:
	case EPERM:
		return TK_EACCES;
	case EROFS: /* not "permission denied": no permission would help */
		return TK_EROFS;
	case EEXIST:
		return TK_EEXIST;
	case EINVAL:
		return TK_EINVAL;
	case EBUSY:
		return TK_EBUSY;
	case ERANGE:
	case EOVERFLOW:
		return TK_ERANGE;
	case ENOTSUP:
		return TK_ENOTSUP;
	case ECANCELED:
		return TK_ECANCELED;
	default:
		return TK_EIO;
	}
}
