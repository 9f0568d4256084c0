/* SPDX-License-Identifier: MIT */
/*
 * Private to the bfbin module: the HDF5 file driver of bfbin2hdf5, a POSIX file driver
 * that never reports a failed write to HDF5 (see bfbin_hdf5_vfd.c for why).
 */
#ifndef TK_BFBIN_HDF5_VFD_H
#define TK_BFBIN_HDF5_VFD_H

#include <hdf5.h>

/* Where a file of the driver reports its first write error; owned by the caller. */
struct tk__h5vfd_status {
	int err; /* errno of the first failed write, truncation or close; 0 if none */
	/* Called once, with that errno, when it happens (may be NULL). */
	void (*on_error)(void *user_data, int err);
	void *user_data;
};

/*
 * Registers the driver with HDF5; returns its id (release it with H5FDunregister() once
 * no file and no property list uses it) or H5I_INVALID_HID with HDF5's error stack set.
 */
hid_t tk__h5vfd_register(void);

/*
 * A new file access property list that opens files with driver `driver` (from
 * tk__h5vfd_register()), reports to *status (which must outlive every file opened
 * with it), and closes files with H5F_CLOSE_STRONG. Returns H5I_INVALID_HID on failure.
 */
hid_t tk__h5vfd_fapl(hid_t driver, struct tk__h5vfd_status *status);

#endif /* TK_BFBIN_HDF5_VFD_H */
