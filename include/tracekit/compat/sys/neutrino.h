/* SPDX-License-Identifier: MIT */
/*
 * Compatibility shim: lets code written for QNX include <sys/neutrino.h> unchanged when built
 * with -I$(pkg-config --variable=compatdir tracekit), for the one thing the SAT guide's
 * programs need from it: ThreadCtl(_NTO_TCTL_IO, 0), which a QNX thread calls to obtain I/O
 * privileges before it attaches event handlers or a trace interrupt hook.
 *
 * tracekit records from user space: event handlers are plain function calls in the process
 * that attached them, so no privilege is needed and the request succeeds doing nothing.
 *
 *   ThreadCtl(_NTO_TCTL_IO, data)       returns 0 (EOK); `data` is ignored, as QNX ignores it
 *   ThreadCtl(_NTO_TCTL_IO_PRIV, data)  likewise
 *   ThreadCtl(any other cmd, data)      returns -1 with errno ENOTSUP: the other thread
 *                                       controls (run masks, holding threads, alignment
 *                                       faults, ...) are not provided; code that needs them
 *                                       must use the Linux calls (sched_setaffinity(), ...)
 *   ThreadCtl_r(...)                    the same, returning EOK or the negative errno value
 *                                       instead of setting errno
 *
 * Command numbers: QNX 7 numbers _NTO_TCTL_IO_PRIV 1 and _NTO_TCTL_IO 14; QNX 6 (the guide's
 * release) called command 1 _NTO_TCTL_IO. Both numbers are accepted, so code written for
 * either release gets the same answer. EOK, QNX's name for "no error", is 0.
 */
#ifndef TRACEKIT_COMPAT_SYS_NEUTRINO_H
#define TRACEKIT_COMPAT_SYS_NEUTRINO_H

#include <errno.h>

#ifndef EOK
#define EOK 0
#endif

#define _NTO_TCTL_IO_PRIV 1
#define _NTO_TCTL_IO 14

#ifdef __cplusplus
extern "C" {
#endif

static inline int ThreadCtl_r(int cmd, void *data)
{
	(void)data;
	if (cmd == _NTO_TCTL_IO || cmd == _NTO_TCTL_IO_PRIV)
		return EOK;
	return -ENOTSUP;
}

static inline int ThreadCtl(int cmd, void *data)
{
	int rc = ThreadCtl_r(cmd, data);

	if (rc != EOK) {
		errno = -rc;
		return -1;
	}
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* TRACEKIT_COMPAT_SYS_NEUTRINO_H */
