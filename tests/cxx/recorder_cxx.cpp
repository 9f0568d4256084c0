// SPDX-License-Identifier: MIT
// The recorder's inline fast paths compiled as C++ (Pin tools are C++): in C++ the per-thread
// state is std::atomic, in the library C11 _Atomic; records written through tk_buffer_reserve()
// and tk_trace_user() from C++ must arrive intact, so both views share one layout.
#include <tracekit/buffer.h>
#include <tracekit/trace.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
struct rec {
	uint32_t seq, check;
};
uint64_t n_delivered, n_bad;
uint32_t next_expected;

void *on_full(tk_buffer_id, uint32_t, void *buf, uint64_t n_records, void *)
{
	const rec *r = static_cast<const rec *>(buf);
	for (uint64_t i = 0; i < n_records; i++, next_expected++)
		if (r[i].seq != next_expected || r[i].check != ~next_expected)
			n_bad++;
	n_delivered += n_records;
	return buf;
}
} // namespace

int main(int argc, char **argv)
{
	const uint32_t n = 100000; // several buffers of one page
	tk_buffer_id id = tk_buffer_define(sizeof(rec), 1, on_full, NULL);
	if (id == TK_BUFFER_ID_INVALID)
		return 1;
	for (uint32_t i = 0; i < n; i++) {
		rec *r = static_cast<rec *>(tk_buffer_reserve(id));
		if (r == NULL)
			return 2;
		r->seq = i;
		r->check = ~i;
		tk_buffer_commit(id, r);
	}
	if (tk_buffer_flush(id) != 0 || n_delivered != n || n_bad != 0) {
		std::fprintf(stderr, "buffer: %llu of %u records delivered, %llu wrong\n",
			     (unsigned long long)n_delivered, n, (unsigned long long)n_bad);
		return 3;
	}
	// The emitter's inline path, into a .kev file.
	if (argc > 1) {
		tk_logger_stats st;
		if (tk_logger_start(argv[1], NULL) != 0 || TraceEvent(_NTO_TRACE_ADDALLCLASSES) == -1 ||
		    TraceEvent(_NTO_TRACE_START) == -1)
			return 4;
		for (unsigned i = 0; i < 1000; i++)
			tk_trace_user(i % 1024, i, ~i);
		if (tk_logger_stop() != 0 || tk_logger_get_stats(&st) != 0 || st.events_written < 1000)
			return 5;
	}
	std::printf("C++: %u records through tk_buffer_reserve, 1000 events through tk_trace_user\n", n);
	return 0;
}
