/* SPDX-License-Identifier: MIT */
/*
 * An installed-library consumer that uses every library: the readers (traceparser, TBRW,
 * whose .tb5 code needs zstd and ISA-L, and the Byfl converters, which need SQLite and
 * HDF5), the recorder and core. Linked statically by install_test.sh, it proves that the
 * static pkg-config and CMake packages carry every third-party library.
 */
#include <stdio.h>
#include <tracekit/bfbin_convert.h>
#include <tracekit/common.h>
#include <tracekit/tbrw.h>
#include <tracekit/trace.h>
#include <tracekit/traceparser.h>

static int on_user(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	(void)st;
	(void)h;
	(void)t;
	(void)buf;
	(void)len;
	++*(unsigned *)ud;
	return 0;
}

int main(int argc, char **argv)
{
	/* Referenced, not called: the static link must resolve SQLite's and HDF5's symbols. */
	int (*volatile to_hdf5)(const char *, const char *, tk_bfbin_convert *) = tk_bfbin_to_hdf5;
	int (*volatile to_sqlite3)(const char *, const char *, tk_bfbin_convert *) = tk_bfbin_to_sqlite3;
	struct traceparser_state *tp = traceparser_init(NULL);
	TBRW_U32 major = 0, minor = 0;
	TBRW_PTR tbrw = NULL;
	unsigned count = 0;
	int rc;

	if (argc < 2 || tp == NULL || to_hdf5 == NULL || to_sqlite3 == NULL)
		return 2;
	traceparser_cs_range(tp, &count, on_user, _NTO_TRACE_USER, _NTO_TRACE_USERFIRST, _NTO_TRACE_USERLAST);
	rc = traceparser(tp, NULL, argv[1]);
	traceparser_destroy(&tp);
	if (TBRW_get_version(&major, &minor) != VT_SUCCESS ||
	    TBRW_open(&tbrw, L"/nonexistent/dir/x.tb5", TBRW_FILE_READ) != TBRW_FILE_NOT_FOUND)
		return 3;
	if (tk_trace_errmsg() == NULL || tk_strerror(TK_EIO) == NULL)
		return 4;
	printf("%u user events, TBRW %u\n", count, (unsigned)major);
	return rc != 0;
}
