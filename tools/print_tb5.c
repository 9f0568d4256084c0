/* SPDX-License-Identifier: MIT */
/*
 * print_tb5: prints every section and stream of a .tb5 file as readable text: the global
 * sections field by field, then each stream with its data records decoded through the
 * stream's data descriptors. The VTune TBRW package's example of the same name.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tbrw_dat.h"
#include "tb5_print.h"
#include "tbrw_fields.h"
#include "tool_cli.h"
#include "tracekit/common.h"

#define TOOL "print_tb5"

static const char usage_text[] =
	"Usage: " TOOL " [OPTION]... FILE.tb5\n"
	"Print every section and stream of a .tb5 file: the hardware, software, version,\n"
	"module and process/thread sections field by field, then each stream's information,\n"
	"events, data descriptors and data records, decoded through the data descriptors.\n"
	"\n"
	"  FILE.tb5                the file to read; \"-\" reads standard input\n"
	"  -o, --output=FILE       write to FILE instead of standard output\n"
	"  -n, --max-records=N     print at most N data records of each stream (they are\n"
	"                          still counted); 0 prints none\n"
	"  -D, --no-data           print no data records (same as -n 0)\n"
	"  -x, --hex               also print each data record's bytes in hex\n"
	"  -s, --stream=N          print only stream N (and no global section)\n"
	"  -b, --bind              also bind each stream (in memory; the file is not changed)\n"
	"                          and print each record's module, process and thread, and\n"
	"                          the process/thread section when binding derived it\n"
	"  -q, --quiet             no progress line on a terminal for large files\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 when the file cannot be read or is not a valid .tb5 file\n"
	"(what was read before the problem is printed), 2 on a usage error.\n"
	"The output is described in print_tb5(1) (docs/print_tb5.md).\n";

static int parse_count(const char *arg, uint64_t *out)
{
	char *end;
	unsigned long long x;

	if (arg[0] < '0' || arg[0] > '9')
		return -1;
	errno = 0;
	x = strtoull(arg, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = x;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "max-records", required_argument, NULL, 'n' },
		{ "no-data", no_argument, NULL, 'D' },
		{ "hex", no_argument, NULL, 'x' },
		{ "stream", required_argument, NULL, 's' },
		{ "bind", no_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static char out_buffer[1 << 20];
	struct tbf_printer p;
	struct tbf_input input;
	const char *output = NULL, *in_name, *call = "";
	struct tktool_output out = { NULL, NULL, -1 };
	struct tktool_progress progress;
	TBRW_PTR ptr = NULL;
	TBRW_U32 rc = VT_SUCCESS;
	uint64_t x;
	int opt, status = 1, r, bind = 0;

	memset(&p, 0, sizeof(p));
	p.max_records = UINT64_MAX;
	p.only_stream = -1;
	p.out = stdout;
	tktool_init(TOOL);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:n:Dxs:bqh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case 'n':
			if (parse_count(optarg, &p.max_records) != 0)
				return tktool_usage_error("--max-records needs a number of records, not '%s'", optarg);
			break;
		case 'D':
			p.max_records = 0;
			break;
		case 'x':
			p.hex = 1;
			break;
		case 'b':
			bind = 1;
			break;
		case 's':
			if (parse_count(optarg, &x) != 0 || x > UINT32_MAX)
				return tktool_usage_error("--stream needs a stream number, not '%s'", optarg);
			p.only_stream = (long)x;
			break;
		case 'q':
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
	if (optind == argc)
		return tktool_usage_error("no .tb5 file given");
	if (argc - optind > 1)
		return tktool_usage_error("unexpected argument '%s'", argv[optind + 1]);
	in_name = tktool_in_name(argv[optind]);
	if (output != NULL && tktool_refuse_same_file(argv[optind], output))
		return 1;
	/* Ctrl-C: the temporaries (the output's, a copy of standard input) go with the process. */
	tktool_catch_signals(TKTOOL_SIGNAL_EXIT);

	if (tbf_open_input(TOOL, argv[optind], &input, &ptr) != 0)
		return 1;
	if (output != NULL) {
		if (tktool_output_open(&out, output, 0) != 0)
			goto done;
		p.out = tktool_output_stream(&out);
	}
	setvbuf(p.out, out_buffer, _IOFBF, sizeof(out_buffer));
	tktool_progress_begin(&progress, "reading", tktool_file_size(argv[optind]));
	tbf_walk_progress(&progress);
	r = tbf_walk(ptr, tbf_print_item, &p, &call, &rc);
	tbf_walk_progress(NULL);
	tktool_progress_end(&progress);
	fflush(p.out);
	if (r == -1) {
		tbf_report(TOOL, in_name, ptr, call, rc);
		goto done;
	}
	if (r == 0 && p.only_stream >= 0) {
		TBRW_U32 n_streams = 0;

		if (TBRW_get_number_data_streams(ptr, &n_streams) == VT_SUCCESS && (TBRW_U32)p.only_stream >= n_streams) {
			fflush(p.out);
			fprintf(stderr, TOOL ": %s: no stream %ld (the file has %u)\n", in_name, p.only_stream,
				(unsigned)n_streams);
			goto done;
		}
	}
	if (r == 0 && bind) {
		r = tbf_print_bind(&p, ptr, &call, &rc);
		fflush(p.out);
		if (r == -1) {
			tbf_report(TOOL, in_name, ptr, call, rc);
			goto done;
		}
	}
	if (r != 0 || ferror(p.out)) {
		fprintf(stderr, TOOL ": error writing %s: %s\n", output ? tktool_out_name(output) : "standard output",
			strerror(errno));
		goto done;
	}
	if (output != NULL && tktool_output_commit(&out) != 0)
		goto done;
	status = 0;
done:
	tktool_output_abort(&out);
	tbf_printer_clear(&p);
	tbf_close_input(&input, ptr);
	return status;
}
