/* SPDX-License-Identifier: MIT */
/*
 * An installed-library consumer of the recorder alone (TraceEvent): linked with
 * tracekit-recorder.pc or Tracekit::recorder, it must load neither the readers' library
 * nor any third-party library (install_test.sh checks its dependencies).
 */
#include <stdio.h>
#include <tracekit/trace.h>

int main(void)
{
	const char *msg = tk_trace_errmsg();

	printf("recorder %s\n", msg != NULL ? "linked" : "missing");
	return msg == NULL;
}
