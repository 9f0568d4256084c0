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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbrw_fields.h"
#include "tracekit/common.h"

#define TOOL "tb5_recover"

static const char usage_text[] =
	"Usage: " TOOL " [OPTION]... DAMAGED.tb5 OUTPUT.tb5\n"
	"Salvage a .tb5 file whose writer died before TBRW_close (such as a left-over\n"
	"FILE.tb5.part) or that was cut short: every complete chunk whose checksum holds is\n"
	"kept, and OUTPUT.tb5 is written as a valid file holding them.\n"
	"\n"
	"  -q, --quiet     do not report what was kept and dropped\n"
	"  -h, --help      show this help and exit\n"
	"      --version   show the version and exit\n"
	"\n"
	"Exit status: 0 when OUTPUT.tb5 was written (also when nothing had to be dropped), 1 when\n"
	"nothing could be salvaged or OUTPUT.tb5 cannot be written (nothing is then left under\n"
	"its name), 2 on a usage error. See tb5_recover(1) (docs/tb5_recover.md).\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(TOOL ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry '" TOOL " --help' for more information.\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in_path, *out_path;
	tk_tbrw_recover_report report;
	int opt, quiet = 0;
	TBRW_U32 rc;
	int probe;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf(TOOL " (tracekit) %s\n", tk_version());
			return 0;
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return usage_error("expected a damaged .tb5 file and an output .tb5 file");
	in_path = argv[optind];
	out_path = argv[optind + 1];
	probe = open(in_path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC); /* a FIFO must not block */
	if (probe < 0) {
		fprintf(stderr, TOOL ": %s: %s\n", in_path, strerror(errno));
		return 1;
	}
	close(probe);
	memset(&report, 0, sizeof(report));
	rc = tk_tbrw_recover(in_path, out_path, &report);
	if (rc != VT_SUCCESS) {
		tbf_report(TOOL, in_path, NULL, "cannot salvage", rc);
		return 1;
	}
	if (quiet)
		return 0;
	if (report.was_complete)
		fprintf(stderr, TOOL ": %s: the file was complete: copied %" PRIu64 " chunks, %" PRIu32
			" sections, %" PRIu64 " data records\n",
			in_path, (uint64_t)report.chunks_kept, (uint32_t)report.sections_kept, (uint64_t)report.records_kept);
	else
		fprintf(stderr, TOOL ": %s: kept %" PRIu64 " chunks, %" PRIu32 " sections, %" PRIu64
			" data records; dropped %" PRIu64 " bytes from byte offset %" PRIu64 " and %" PRIu32
			" unfinished sections\n",
			in_path, (uint64_t)report.chunks_kept, (uint32_t)report.sections_kept, (uint64_t)report.records_kept,
			(uint64_t)report.bytes_dropped, (uint64_t)report.first_bad_offset, (uint32_t)report.sections_dropped);
	return 0;
}
