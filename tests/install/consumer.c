/* SPDX-License-Identifier: MIT */
/*
 * An installed-library consumer written the QNX way (<sys/trace.h>, <sys/traceparser.h>):
 * counts the user events of a trace. Built by install_test.sh with pkg-config (shared and
 * static) and with find_package(Tracekit).
 */
#include <stdio.h>
#include <sys/trace.h>
#include <sys/traceparser.h>

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
	struct traceparser_state *tp = traceparser_init(NULL);
	unsigned count = 0;
	int rc;

	if (argc < 2 || tp == NULL)
		return 2;
	traceparser_cs_range(tp, &count, on_user, _NTO_TRACE_USER, _NTO_TRACE_USERFIRST, _NTO_TRACE_USERLAST);
	rc = traceparser(tp, NULL, argv[1]);
	traceparser_destroy(&tp);
	printf("%u user events\n", count);
	return rc != 0;
}
