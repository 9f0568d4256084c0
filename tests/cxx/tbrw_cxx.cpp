// SPDX-License-Identifier: MIT
// The TBRW headers compiled as C++, as the seed's own examples are: the layout pins and every
// declaration must be valid C++, and the functions must link with C linkage.
#include <tracekit/samprec_shared.h>
#include <tracekit/tbrw.h>
#include <tracekit/tbrw_types.h>

#include <cstdio>
#include <cstring>

static TBRW_U32 on_data(void *data, TBRW_U32 size, TBRW_U32 n, void *user)
{
	(void)data, (void)size, (void)n, (void)user;
	return TRUE;
}

int main()
{
	TBRW_U32 major = 0, minor = 0;
	const TBRW_CHAR *text = NULL;
	TBRW_PTR ptr = NULL;
	TBRW_SampleRecordPC pc;
	TBRW_DATA_CALLBACK *cb = on_data;

	std::memset(&pc, 0, sizeof pc);
	pc.eip = 0x401000;
	pc.pidRecIndex = 7;
	if (TBRW_get_version(&major, &minor) != VT_SUCCESS || major != 2)
		return 1;
	if (TBRW_error_string(TBRW_FILE_CORRUPT, &text) != VT_SUCCESS || text == NULL)
		return 1;
	if (TBRW_open(&ptr, L"/nonexistent/dir/x.tb5", TBRW_FILE_READ) != TBRW_FILE_NOT_FOUND || ptr != NULL)
		return 1;
	std::printf("TBRW %u.%u from C++: %ls; sample record %zu bytes, pid %u\n", major, minor, text, sizeof pc,
		    (unsigned)pc.pidRecIndex);
	return cb(NULL, 0, 0, NULL) == TRUE ? 0 : 1;
}
