/* SPDX-License-Identifier: MIT */
/*
 * tk_bfbin_to_hdf5(): the HDF5 converter (bfbin_hdf5.c) called directly in the static
 * library, and in the shared library loaded on first use from the plugin beside it
 * (TK_HDF5_PLUGIN_LOAD: libtracekit-hdf5-VERSION.so in the directory libtracekit-formats
 * was loaded from; bfbin_internal.h says why). A plugin that cannot be loaded fails the
 * conversion with TK_ENOTSUP and a message naming the file and the loader's reason.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bfbin/bfbin_internal.h"

#ifdef TK_HDF5_PLUGIN_LOAD
#include <dlfcn.h>
#include <pthread.h>

typedef int (*h5_convert_fn)(const char *in_path, const char *h5_path, tk_bfbin_convert *cv);

static pthread_once_t plugin_once = PTHREAD_ONCE_INIT;
static h5_convert_fn plugin_fn;
static char plugin_why[1500]; /* why it could not be loaded */

static void plugin_load(void)
{
	static const char file[] = "libtracekit-hdf5-" TK_VERSION_STRING ".so";
	char path[4096];
	Dl_info info;

	/* the directory of this library, never the working directory (nothing planted there
	 * is loaded) */
	const char *slash = NULL;
	if (dladdr((void *)tk_bfbin_to_hdf5, &info) == 0 || info.dli_fname == NULL ||
	    (slash = strrchr(info.dli_fname, '/')) == NULL) {
		snprintf(plugin_why, sizeof(plugin_why), "cannot find the directory libtracekit-formats was loaded from");
		return;
	}
	if (snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, file) >=
	    (int)sizeof(path)) {
		snprintf(plugin_why, sizeof(plugin_why), "the path of %s is too long", file);
		return;
	}
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(plugin_why, sizeof(plugin_why), "cannot load %.1000s (%.400s)", path,
			 e != NULL ? e : "unknown reason");
		return;
	}
	void *sym = dlsym(h, "tk__bfbin_to_hdf5_impl");
	if (sym == NULL) {
		snprintf(plugin_why, sizeof(plugin_why), "%.1000s has no HDF5 converter", path);
		dlclose(h);
		return;
	}
	/* (a function pointer from dlsym's object pointer: POSIX allows it) */
	memcpy(&plugin_fn, &sym, sizeof(plugin_fn));
}

int tk_bfbin_to_hdf5(const char *in_path, const char *h5_path, tk_bfbin_convert *cv)
{
	pthread_once(&plugin_once, plugin_load);
	if (plugin_fn != NULL)
		return plugin_fn(in_path, h5_path, cv);
	/* no room for a message: the caller passed no usable cv (tk__bfconv_init()'s test) */
	if (cv == NULL || cv->struct_size < offsetof(tk_bfbin_convert, flags))
		return TK_EINVAL;
	snprintf(cv->error, sizeof(cv->error), "HDF5 output is not available: %.1500s", plugin_why);
	return TK_ENOTSUP;
}

#else

int tk_bfbin_to_hdf5(const char *in_path, const char *h5_path, tk_bfbin_convert *cv)
{
	return tk__bfbin_to_hdf5_impl(in_path, h5_path, cv);
}

#endif
