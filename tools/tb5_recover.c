/* SPDX-License-Identifier: MIT */
/*
 * tb5_recover: salvages a .tb5 file whose writer died (a left-over "<name>.part", or a file
 * cut short): keeps every chunk up to the last complete one whose CRC holds and writes a
 * valid file from them. A thin shell over the library's recovery function.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbrw_fields.h"
#include "tool_cli.h"
#include "tracekit/common.h"

#define TOOL "tb5_recover"

static const char usage_text[] =
	"Usage: " TOOL " [OPTION]... DAMAGED.tb5 OUTPUT.tb5\n"
	"Salvage a .tb5 file whose writer died before TBRW_close (such as a left-over\n"
	"FILE.tb5.part) or that was cut short: every complete chunk whose checksum holds is\n"
	"kept, and OUTPUT.tb5 is written as a valid file holding them.\n"
	"\n"
	"  -q, --quiet     do not report what was kept and dropped, nor show progress\n"
	"  -h, --help      show this help and exit\n"
	"      --version   show the version and exit\n"
	"\n"
	"Exit status: 0 when OUTPUT.tb5 was written (also when nothing had to be dropped), 1 when\n"
	"nothing could be salvaged or OUTPUT.tb5 cannot be written (nothing is then left under\n"
	"its name), 2 on a usage error. See tb5_recover(1) (docs/tb5_recover.md).\n";

/* The signature a .tb5 file starts with (docs/tb5-format.md). */
static const unsigned char tb5_signature[8] = { 'T', 'K', 'T', 'B', '5', 0, '\r', '\n' };

/* The stretches of the damaged file left out, as the library reports them. */
struct lost_list {
	struct lost_range {
		uint64_t from, to;
		char *what;
	} *v;
	size_t n, cap;
};

static void on_lost(TBRW_U64 from, TBRW_U64 to, const char *what, void *user)
{
	struct lost_list *l = user;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		struct lost_range *nv = realloc(l->v, ncap * sizeof(*nv));
		if (nv == NULL)
			return;
		l->v = nv;
		l->cap = ncap;
	}
	l->v[l->n].from = from;
	l->v[l->n].to = to;
	l->v[l->n].what = strdup(what);
	l->n++;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in_path, *out_path, *in_open, *out_open, *in_name;
	struct tktool_stdin_file in_file;
	tk_tbrw_recover_report report;
	char tmp_dir[4096] = "", tmp_path[4200];
	int opt, quiet = 0, status = 1, dir_slot = -1, from_stdin, to_copy;
	TBRW_U32 rc;
	int probe;
	struct lost_list lost = {NULL, 0, 0};

	tktool_init(TOOL);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'q':
			quiet = 1;
			tktool_quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			return tktool_version(NULL);
		case ':':
			return tktool_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return tktool_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return tktool_usage_error("expected a damaged .tb5 file and an output .tb5 file");
	in_path = argv[optind];
	out_path = argv[optind + 1];
	in_name = tktool_in_name(in_path);
	/* The salvage would replace the damaged original, its only copy. */
	if (tktool_refuse_same_file(in_path, out_path))
		return 1;
	tktool_catch_signals(TKTOOL_SIGNAL_EXIT);
	from_stdin = strcmp(in_path, "-") == 0;
	in_open = in_path;
	if (from_stdin) {
		if (tktool_stdin_file(&in_file, tb5_signature, sizeof(tb5_signature)) != 0)
			return 1;
		in_open = in_file.path;
		tbf_name_input(in_open);
	}
	probe = open(in_open, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC); /* a FIFO must not block */
	if (probe < 0) {
		fprintf(stderr, TOOL ": %s: %s\n", in_name, strerror(errno));
		goto done;
	}
	close(probe);
	/*
	 * The salvage is built in a directory only we can enter, so that Ctrl-C leaves nothing:
	 * beside OUTPUT.tb5 (one rename puts it there), or anywhere for standard output, a
	 * device or a FIFO (the library writes with seeks, and would replace a device node).
	 */
	to_copy = tktool_needs_copy(out_path);
	if ((to_copy ? tktool_private_dir(tmp_dir, sizeof(tmp_dir))
		     : tktool_private_dir_beside(out_path, tmp_dir, sizeof(tmp_dir))) != 0) {
		fprintf(stderr, TOOL ": %s: cannot create a temporary directory: %s\n", tktool_out_name(out_path),
			strerror(errno));
		tmp_dir[0] = '\0';
		goto done;
	}
	dir_slot = tktool_cleanup_add_dir(tmp_dir);
	snprintf(tmp_path, sizeof(tmp_path), "%s/out.tb5", tmp_dir);
	out_open = tmp_path;
	memset(&report, 0, sizeof(report));
	tktool_progress_watch_dir(tmp_dir, "salvaging", tktool_file_size(in_open));
	rc = tk_tbrw_recover_ranges(in_open, out_open, &report, on_lost, &lost);
	tktool_progress_watch_end();
	if (rc != VT_SUCCESS) {
		tbf_report(TOOL, in_name, NULL, "cannot salvage", rc);
		goto done;
	}
	if (to_copy ? tktool_copy_file(tmp_path, out_path) != 0 : tktool_install(tmp_path, out_path) != 0) {
		fprintf(stderr, TOOL ": error writing %s: %s\n", tktool_out_name(out_path), strerror(errno));
		goto done;
	}
	/* sections that could not be read were left out: the output holds the rest, and the
	 * status says that not everything finished could be salvaged */
	status = report.sections_unreadable > 0 ? 3 : 0;
	for (size_t i = 0; i < lost.n && !quiet; i++)
		/* the end of a file cut short is the summary's "dropped ... from byte offset" */
		if (lost.n > 1 || lost.v[i].to != report.bytes_scanned)
			fprintf(stderr, TOOL ": %s: left out bytes %" PRIu64 "..%" PRIu64 ": %s\n", in_name, lost.v[i].from,
				lost.v[i].to - 1, lost.v[i].what ? lost.v[i].what : "?");
	if (status != 0)
		fprintf(stderr, TOOL ": %s: %" PRIu32 " finished sections could not be read and were left out\n", in_name,
			(uint32_t)report.sections_unreadable);
	if (quiet)
		goto done;
	if (report.was_complete)
		fprintf(stderr, TOOL ": %s: the file was complete: copied %" PRIu64 " chunks, %" PRIu32
			" sections, %" PRIu64 " data records\n",
			in_name, (uint64_t)report.chunks_kept, (uint32_t)report.sections_kept, (uint64_t)report.records_kept);
	else
		fprintf(stderr, TOOL ": %s: kept %" PRIu64 " chunks, %" PRIu32 " sections, %" PRIu64
			" data records; dropped %" PRIu64 " bytes from byte offset %" PRIu64 " and %" PRIu32
			" unfinished sections\n",
			in_name, (uint64_t)report.chunks_kept, (uint32_t)report.sections_kept, (uint64_t)report.records_kept,
			(uint64_t)report.bytes_dropped, (uint64_t)report.first_bad_offset, (uint32_t)report.sections_dropped);
done:
	for (size_t i = 0; i < lost.n; i++)
		free(lost.v[i].what);
	free(lost.v);
	if (tmp_dir[0] != '\0') {
		tktool_private_dir_remove(tmp_dir);
		tktool_cleanup_forget(dir_slot);
	}
	if (from_stdin)
		tktool_stdin_file_close(&in_file);
	return status;
}
