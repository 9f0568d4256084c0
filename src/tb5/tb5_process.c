/* SPDX-License-Identifier: MIT */
/*
 * tb5_process.c: processes, threads and modules: adding, decoding, enumerating and getting
 * one by index (seed 9.2), and the check salvage makes of sections holding such lists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb5/tb5_items.h"

/* ---- processes, threads, modules --------------------------------------------------------- */

static void enc_pid(struct enc *e, const TBRW_PID *p, uint64_t path, uint64_t name)
{
	e32(e, p->pid_reserved);
	e32(e, p->pid_id);
	e32(e, p->pid_flags);
	e64(e, p->pid_event_when);
	e32(e, p->reserved1);
	e32(e, p->reserved2);
	e64(e, path);
	e64(e, name);
}

TBRW_U32 tk__tb5_put_pid(struct tb5_handle *h, struct tb5_obj *obj, const TBRW_PID *p)
{
	struct enc e = {.len = 0};
	(void)h;
	/* derived records carry ids already */
	enc_pid(&e, p, p->pid_path.soi_uniqueid, p->pid_name.soi_uniqueid);
	return tk__tb5_put_item(obj, IT_PID, e.buf, e.len);
}

static void enc_tid(struct enc *e, const TBRW_TID *t, uint64_t name)
{
	e32(e, t->tid_associated_pid);
	e32(e, t->tid_id);
	e32(e, t->tid_flags);
	e64(e, t->tid_event_when);
	e32(e, t->reserved1);
	e32(e, t->reserved2);
	e64(e, name);
}

TBRW_U32 tk__tb5_put_tid(struct tb5_handle *h, struct tb5_obj *obj, const TBRW_TID *t)
{
	struct enc e = {.len = 0};
	(void)h;
	enc_tid(&e, t, t->tid_name.soi_uniqueid);
	return tk__tb5_put_item(obj, IT_TID, e.buf, e.len);
}

TBRW_U32 TBRW_add_process(TBRW_PTR ptr, TBRW_PID *process)
{
	uint64_t path, name;
	SET_PROLOGUE(TBRW_PROCESS_THREAD_SECTION, "TBRW_add_process", 0, process);
	NEED_SIZE(process->pid_size, TBRW_PID, "TBRW_PID");
	if ((rc = tk__tb5_string_id(h, process->pid_path.soi_ptr, &path)) != VT_SUCCESS ||
	    (rc = tk__tb5_string_id(h, process->pid_name.soi_ptr, &name)) != VT_SUCCESS)
		return rc;
	enc_pid(&e, process, path, name);
	return tk__tb5_put_item(o, IT_PID, e.buf, e.len);
}

TBRW_U32 TBRW_add_thread(TBRW_PTR ptr, TBRW_TID *thread)
{
	uint64_t name;
	SET_PROLOGUE(TBRW_PROCESS_THREAD_SECTION, "TBRW_add_thread", 0, thread);
	NEED_SIZE(thread->tid_size, TBRW_TID, "TBRW_TID");
	if ((rc = tk__tb5_string_id(h, thread->tid_name.soi_ptr, &name)) != VT_SUCCESS)
		return rc;
	enc_tid(&e, thread, name);
	return tk__tb5_put_item(o, IT_TID, e.buf, e.len);
}

TBRW_U32 TBRW_add_module(TBRW_PTR ptr, TBRW_MODULE *m)
{
	SET_PROLOGUE(TBRW_MODULE_SECTION, "TBRW_add_module", 0, m);
	NEED_SIZE(m->module_size, TBRW_MODULE, "TBRW_MODULE");
	e32(&e, m->module_reserved);
	e32(&e, m->module_associated_pid);
	e32(&e, m->module_flags);
	e64(&e, m->module_event_when);
	e32(&e, m->module_segment_number);
	e32(&e, m->module_segment_type);
	e32(&e, m->module_code_selector);
	e64(&e, m->module_length);
	e64(&e, m->module_load_address);
	e32(&e, m->reserved_for_legacy);
	e32(&e, m->reserved_for_legacy2);
	e32(&e, m->reserved_for_legacy_flags);
	e32(&e, m->reserved1);
	e64(&e, m->module_unload_tsc);
	if ((rc = tk__tb5_sid(h, &m->module_path, &e)) != VT_SUCCESS || (rc = tk__tb5_sid(h, &m->module_name, &e)) != VT_SUCCESS ||
	    (rc = tk__tb5_sid(h, &m->module_segment_name, &e)) != VT_SUCCESS)
		return rc;
	return tk__tb5_put_item(o, IT_MODULE, e.buf, e.len);
}

static int dec_pid(struct tb5_handle *h, struct dec *d, void *out);
static int dec_tid(struct tb5_handle *h, struct dec *d, void *out);
static int dec_module(struct tb5_handle *h, struct dec *d, void *out);

/* Whether a finished metadata section reads: framing, and the records the API decodes into
 * arrays (processes, threads, modules, data descriptors) with their string ids. */
TBRW_U32 tk__tb5_check_section(struct tb5_handle *h, struct tb5_obj *o)
{
	static const struct {
		uint16_t type;
		size_t size;
		decode_fn *fn;
	} lists[] = {{IT_PID, sizeof(TBRW_PID), dec_pid},
		     {IT_TID, sizeof(TBRW_TID), dec_tid},
		     {IT_MODULE, sizeof(TBRW_MODULE), dec_module},
		     {IT_DESC, sizeof(TBRW_SAMPREC_DESC_ENTRY), tk__tb5_dec_desc}};
	TBRW_U32 rc = tk__tb5_check_items(h, o);

	for (size_t i = 0; i < sizeof lists / sizeof lists[0] && rc == VT_SUCCESS; i++) {
		void *arr = NULL;
		size_t n = 0;
		rc = tk__tb5_decode_all(h, o, lists[i].type, lists[i].size, lists[i].fn, &arr, &n);
		free(arr);
	}
	return rc;
}

static int dec_pid(struct tb5_handle *h, struct dec *d, void *out)
{
	TBRW_PID *p = out;
	p->pid_size = sizeof *p;
	p->pid_reserved = d32(d);
	p->pid_id = d32(d);
	p->pid_flags = d32(d);
	p->pid_event_when = d64(d);
	p->reserved1 = d32(d);
	p->reserved2 = d32(d);
	tk__tb5_rid(h, d, &p->pid_path);
	tk__tb5_rid(h, d, &p->pid_name);
	return 1;
}

static int dec_tid(struct tb5_handle *h, struct dec *d, void *out)
{
	TBRW_TID *t = out;
	t->tid_size = sizeof *t;
	t->tid_associated_pid = d32(d);
	t->tid_id = d32(d);
	t->tid_flags = d32(d);
	t->tid_event_when = d64(d);
	t->reserved1 = d32(d);
	t->reserved2 = d32(d);
	tk__tb5_rid(h, d, &t->tid_name);
	return 1;
}

static int dec_module(struct tb5_handle *h, struct dec *d, void *out)
{
	TBRW_MODULE *m = out;
	m->module_size = sizeof *m;
	m->module_reserved = d32(d);
	m->module_associated_pid = d32(d);
	m->module_flags = d32(d);
	m->module_event_when = d64(d);
	m->module_segment_number = d32(d);
	m->module_segment_type = d32(d) & 3u;
	m->module_code_selector = d32(d);
	m->module_length = d64(d);
	m->module_load_address = d64(d);
	m->reserved_for_legacy = d32(d);
	m->reserved_for_legacy2 = d32(d);
	m->reserved_for_legacy_flags = d32(d);
	m->reserved1 = d32(d);
	m->module_unload_tsc = d64(d);
	tk__tb5_rid(h, d, &m->module_path);
	tk__tb5_rid(h, d, &m->module_name);
	tk__tb5_rid(h, d, &m->module_segment_name);
	return 1;
}

TBRW_U32 tk__tb5_load_modules(struct tb5_handle *h)
{
	struct tb5_obj *o = NULL;
	void *arr = NULL;
	size_t n = 0;
	TBRW_U32 rc;

	if (h->modules_loaded)
		return VT_SUCCESS;
	o = tk__tb5_obj_find(h, OBJ_GLOBAL(TBRW_MODULE_SECTION));
	if (o == NULL || o->state != OBJ_DONE)
		return tk__tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: the file has no module section", h->path);
	rc = tk__tb5_obj_load(h, o);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_decode_all(h, o, IT_MODULE, sizeof(TBRW_MODULE), dec_module, &arr, &n);
	if (rc != VT_SUCCESS)
		return rc;
	free(h->modules);
	h->modules = arr;
	h->n_modules = n;
	h->modules_loaded = 1;
	return VT_SUCCESS;
}

void tk__tb5_pt_free(struct tb5_pt *pt)
{
	free(pt->pids);
	free(pt->tids);
	memset(pt, 0, sizeof *pt);
}

TBRW_U32 tk__tb5_load_pt(struct tb5_handle *h)
{
	struct tb5_obj *o = NULL;
	void *pids = NULL, *tids = NULL;
	size_t np = 0, nt = 0;
	TBRW_U32 rc;

	if (h->pt.loaded)
		return VT_SUCCESS;
	o = tk__tb5_obj_find(h, OBJ_GLOBAL(TBRW_PROCESS_THREAD_SECTION));
	if (o == NULL || o->state != OBJ_DONE)
		return tk__tb5_fail(TBRW_SECTION_NOT_FOUND, "%s: the file has no process/thread section (TBRW_dobind "
							"derives one)",
				h->path);
	rc = tk__tb5_obj_load(h, o);
	if (rc == VT_SUCCESS)
		rc = tk__tb5_decode_all(h, o, IT_PID, sizeof(TBRW_PID), dec_pid, &pids, &np);
	if (rc != VT_SUCCESS)
		return rc;
	rc = tk__tb5_decode_all(h, o, IT_TID, sizeof(TBRW_TID), dec_tid, &tids, &nt);
	if (rc != VT_SUCCESS) {
		free(pids);
		return rc;
	}
	tk__tb5_pt_free(&h->pt);
	h->pt.pids = pids;
	h->pt.n_pids = np;
	h->pt.tids = tids;
	h->pt.n_tids = nt;
	h->pt.loaded = 1;
	return VT_SUCCESS;
}

static TBRW_U32 call_pid(void *fn, void *data, TBRW_U32 size, TBRW_U32 n, void *user)
{
	return ((TBRW_PID_CALLBACK *)fn)(data, size, n, user);
}
static TBRW_U32 call_tid(void *fn, void *data, TBRW_U32 size, TBRW_U32 n, void *user)
{
	return ((TBRW_TID_CALLBACK *)fn)(data, size, n, user);
}
static TBRW_U32 call_module(void *fn, void *data, TBRW_U32 size, TBRW_U32 n, void *user)
{
	return ((TBRW_MODULE_CALLBACK *)fn)(data, size, n, user);
}

TBRW_U32 TBRW_enumerate_processes(TBRW_PTR ptr, TBRW_PID_CALLBACK *callback_func, void *user_ptr,
				  TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_processes: no callback");
	rc = tk__tb5_load_pt(h);
	if (rc != VT_SUCCESS)
		return rc;
	return tk__tb5_enumerate_array(h->pt.pids, sizeof(TBRW_PID), h->pt.n_pids, start_index, call_pid,
			       (void *)callback_func, user_ptr, "TBRW_enumerate_processes");
}

TBRW_U32 TBRW_enumerate_threads(TBRW_PTR ptr, TBRW_TID_CALLBACK *callback_func, void *user_ptr, TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_threads: no callback");
	rc = tk__tb5_load_pt(h);
	if (rc != VT_SUCCESS)
		return rc;
	return tk__tb5_enumerate_array(h->pt.tids, sizeof(TBRW_TID), h->pt.n_tids, start_index, call_tid,
			       (void *)callback_func, user_ptr, "TBRW_enumerate_threads");
}

TBRW_U32 TBRW_enumerate_modules(TBRW_PTR ptr, TBRW_MODULE_CALLBACK *callback_func, void *user_ptr,
				TBRW_U64 start_index)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (callback_func == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_enumerate_modules: no callback");
	rc = tk__tb5_load_modules(h);
	if (rc != VT_SUCCESS)
		return rc;
	return tk__tb5_enumerate_array(h->modules, sizeof(TBRW_MODULE), h->n_modules, start_index, call_module,
			       (void *)callback_func, user_ptr, "TBRW_enumerate_modules");
}

TBRW_U32 TBRW_get_one_module(TBRW_PTR ptr, TBRW_U64 module_index, const TBRW_MODULE **p_module)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (p_module == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_one_module: p_module is NULL");
	rc = tk__tb5_load_modules(h);
	if (rc != VT_SUCCESS)
		return rc;
	if (module_index >= h->n_modules)
		return tk__tb5_fail(TBRW_INDEX_OUT_OF_RANGE, "%s: module index %llu, the file has %zu modules", h->path,
				(unsigned long long)module_index, h->n_modules);
	h->one_module = h->modules[module_index];
	*p_module = &h->one_module;
	return VT_SUCCESS;
}

TBRW_U32 TBRW_get_one_pid(TBRW_PTR ptr, TBRW_U64 pid_index, const TBRW_PID **p_pid)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (p_pid == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_one_pid: p_pid is NULL");
	rc = tk__tb5_load_pt(h);
	if (rc != VT_SUCCESS)
		return rc;
	if (pid_index >= h->pt.n_pids)
		return tk__tb5_fail(TBRW_INDEX_OUT_OF_RANGE, "%s: process index %llu, the file has %zu processes", h->path,
				(unsigned long long)pid_index, h->pt.n_pids);
	h->one_pid = h->pt.pids[pid_index];
	*p_pid = &h->one_pid;
	return VT_SUCCESS;
}

TBRW_U32 TBRW_get_one_tid(TBRW_PTR ptr, TBRW_U64 tid_index, const TBRW_TID **p_tid)
{
	struct tb5_handle *h = ptr;
	TBRW_U32 rc;

	CHECK_HANDLE(h);
	if (p_tid == NULL)
		return tk__tb5_fail(TBRW_INVALID_PARAMETER, "TBRW_get_one_tid: p_tid is NULL");
	rc = tk__tb5_load_pt(h);
	if (rc != VT_SUCCESS)
		return rc;
	if (tid_index >= h->pt.n_tids)
		return tk__tb5_fail(TBRW_INDEX_OUT_OF_RANGE, "%s: thread index %llu, the file has %zu threads", h->path,
				(unsigned long long)tid_index, h->pt.n_tids);
	h->one_tid = h->pt.tids[tid_index];
	*p_tid = &h->one_tid;
	return VT_SUCCESS;
}
