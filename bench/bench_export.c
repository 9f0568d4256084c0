/* SPDX-License-Identifier: MIT */
/*
 * Export benchmark: writes (once) a .kev trace of N events as a traced program makes them
 * (4 threads; function entry/exit, user begin/end pairs and instants, thread switches) and
 * exports it to /dev/null as Chrome JSON, Perfetto protobuf and statistics, and to a new
 * SQLite database beside it: best of 3 x RUNS runs each, taken in turn, and of RUNS for SQLite.
 * Prints key=value lines for bench/run_export.sh.
 * The SQLite figure's anchor: SQLite itself inserting as many rows of four integers (the
 * same pragmas, one transaction, a prepared statement) and indexing them by (pid, tid, ts),
 * the least any database of the trace through SQLite costs.
 *
 *   bench_export TRACE.kev [N [RUNS [fast]]]   default 10000000 events, 3 runs (0: write the trace
 *                                              only); fast: the fast exports only, no SQLite
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <tracekit/export.h>
#include <tracekit/kev.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int ev(tk_kev_writer *w, unsigned cls, unsigned code, uint64_t t, uint32_t a, uint32_t b)
{
	uint32_t words[2] = { a, b };
	return tk_kev_write_event(w, 0, cls, code, t, words, 2);
}

/* The trace: segments of 1000 events per thread after a THRUNNING, each a run of
 * USER 10, FUNC_ENTER f, FUNC_ENTER g, FUNC_EXIT g, FUNC_EXIT f, USER 11, USER 20. */
static int write_trace(const char *path, uint64_t n)
{
	tk_kev_header hdr;
	tk_kev_writer *w = NULL;
	uint64_t t = 1000000, i = 0;
	int rc;

	memset(&hdr, 0, sizeof(hdr));
	hdr.cycles_per_sec = 1000000000u;
	hdr.cpu_num = 1;
	tk_kev_attr attr = { "TRACEKIT_USER_PAIRS", "10:11=item" };
	hdr.attrs = &attr;
	hdr.n_attrs = 1;
	if ((rc = tk_kev_writer_open(&w, path, &hdr, 0)) != 0)
		return rc;
	static const unsigned seq_cls[7] = { _TRACE_USER_C, _TRACE_SYSTEM_C, _TRACE_SYSTEM_C, _TRACE_SYSTEM_C,
					     _TRACE_SYSTEM_C, _TRACE_USER_C, _TRACE_USER_C };
	static const unsigned seq_code[7] = { 10, _NTO_TRACE_SYS_FUNC_ENTER, _NTO_TRACE_SYS_FUNC_ENTER,
					      _NTO_TRACE_SYS_FUNC_EXIT, _NTO_TRACE_SYS_FUNC_EXIT, 11, 20 };
	static const uint32_t seq_fn[7] = { 0, 0x401000, 0x402000, 0x402000, 0x401000, 0, 0 };
	unsigned k = 0;
	while (i < n && rc == 0) {
		uint32_t tid = 1 + (uint32_t)((i / 1000) % 4);
		rc = ev(w, _TRACE_PR_TH_C, STATE_RUNNING, t += 50, 4242, tid);
		i++;
		for (unsigned j = 1; j < 1000 && i < n && rc == 0; j++, i++, k = (k + 1) % 7)
			rc = ev(w, seq_cls[k], seq_code[k], t += 37, seq_fn[k] ? seq_fn[k] : (uint32_t)i,
				seq_fn[k] ? 0x400100 : 512);
	}
	if (rc != 0) {
		tk_kev_writer_abort(w);
		return rc;
	}
	return tk_kev_writer_close(w);
}

/* Seconds for SQLite to take n rows (ts, kind, pid, tid) and index them; -1 on failure. */
static double sqlite_floor(const char *path, uint64_t n)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;
	int rc;

	remove(path);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		goto fail;
	double t0 = now_s();
	if (sqlite3_exec(db,
			 "PRAGMA page_size=65536; PRAGMA cache_size=-65536; PRAGMA locking_mode=EXCLUSIVE;"
			 " PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
			 " CREATE TABLE r(id INTEGER PRIMARY KEY, ts INTEGER, kind INTEGER, pid INTEGER, tid INTEGER);"
			 " BEGIN",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO r(ts, kind, pid, tid) VALUES (?,?,?,?)", -1, &ins, NULL) != SQLITE_OK)
		goto fail;
	for (uint64_t i = 0; i < n; i++) {
		sqlite3_bind_int64(ins, 1, (sqlite3_int64)(1000000 + i * 37));
		sqlite3_bind_int(ins, 2, (int)(i % 7));
		sqlite3_bind_int(ins, 3, 4242);
		sqlite3_bind_int(ins, 4, (int)(1 + (i / 1000) % 4));
		if ((rc = sqlite3_step(ins)) != SQLITE_DONE)
			goto fail;
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	ins = NULL;
	if (sqlite3_exec(db, "CREATE INDEX r_thread ON r(pid, tid, ts); COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	double dt = now_s() - t0;
	sqlite3_close(db);
	return dt;
fail:
	fprintf(stderr, "bench_export: the SQLite anchor: %s\n", db != NULL ? sqlite3_errmsg(db) : "cannot open");
	sqlite3_finalize(ins);
	sqlite3_close(db);
	return -1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_export TRACE.kev [N [RUNS [fast]]]\n");
		return 2;
	}
	const char *path = argv[1];
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000u;
	int runs = argc > 3 ? atoi(argv[3]) : 3;
	int fast_only = argc > 4 && strcmp(argv[4], "fast") == 0;
	struct stat sb;
	char done[4096];
	snprintf(done, sizeof(done), "%s.complete", path);
	if (stat(done, &sb) != 0) {
		int rc = write_trace(path, n);
		if (rc != 0) {
			fprintf(stderr, "bench_export: writing %s: %s\n", path, tk_strerror(rc));
			return 1;
		}
		FILE *f = fopen(done, "w");
		if (f != NULL)
			fclose(f);
	}
	if (runs <= 0) /* RUNS 0: the trace only */
		return 0;
	static const struct {
		const char *name;
		tk_export_format fmt;
	} formats[] = { { "json", TK_EXPORT_CHROME_JSON },
			{ "perfetto", TK_EXPORT_PERFETTO },
			{ "stats", TK_EXPORT_STATS_TEXT } };
	/* The fast exports, best of 3 x RUNS each, taken in turn (a change of the machine's load
	 * falls on all of them, not on one) */
	enum { NF = sizeof(formats) / sizeof(formats[0]) };
	double fbest[NF] = { 0 };
	tk_export_stats fst[NF];
	for (int r = 0; r < 3 * runs; r++) {
		for (size_t i = 0; i < NF; i++) {
			FILE *out = fopen("/dev/null", "w");
			char err[256];
			if (out == NULL)
				return 1;
			double t0 = now_s();
			int rc = tk_export_file(path, out, formats[i].fmt, NULL, NULL, &fst[i], err, sizeof(err));
			double dt = now_s() - t0;
			fclose(out);
			if (rc != 0) {
				fprintf(stderr, "bench_export: %s: %s\n", formats[i].name, err);
				return 1;
			}
			if (fbest[i] == 0 || dt < fbest[i])
				fbest[i] = dt;
		}
	}
	for (size_t i = 0; i < NF; i++)
		printf("%s_events=%" PRIu64 "\n%s_seconds_best=%.6f\n%s_events_per_sec=%.0f\n%s_slices=%" PRIu64
		       "\n%s_runs=%d\n",
		       formats[i].name, fst[i].events, formats[i].name, fbest[i], formats[i].name,
		       (double)fst[i].events / fbest[i], formats[i].name, fst[i].slices, formats[i].name, 3 * runs);
	if (fast_only)
		return 0;
	/* SQLite: a new database each run, removed after */
	double best = 0;
	tk_export_stats st;
	char db[4200];
	snprintf(db, sizeof(db), "%s.bench.db", path);
	for (int r = 0; r < runs; r++) {
		char err[256];
		remove(db);
		double t0 = now_s();
		int rc = tk_export_sqlite(path, db, NULL, NULL, &st, err, sizeof(err));
		double dt = now_s() - t0;
		remove(db);
		if (rc != 0) {
			fprintf(stderr, "bench_export: sqlite: %s\n", err);
			return 1;
		}
		if (best == 0 || dt < best)
			best = dt;
	}
	printf("sqlite_events=%" PRIu64 "\nsqlite_seconds_best=%.6f\nsqlite_events_per_sec=%.0f\n", st.events, best,
	       (double)st.events / best);
	double floor_s = sqlite_floor(db, st.events);
	remove(db);
	if (floor_s < 0)
		return 1;
	printf("sqlite_floor_rows_per_sec=%.0f\n", (double)st.events / floor_s);
	return 0;
}
