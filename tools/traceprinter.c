/* SPDX-License-Identifier: MIT */
/*
 * traceprinter: prints a QNX .kev trace file as text, in the format of QNX traceprinter
 * 1.02, with Linux-style options on top (class filter, time-ordered output, 64-bit times).
 * A thin shell over libtraceparser (reading) and tk_kev_printer (formatting).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool_cli.h"
#include "tracekit/symbols.h"
#include "tracekit/traceparser.h"

#define DEFAULT_INPUT "/dev/shm/tracebuffer.kev"

/* Output buffer: static, because stdout is flushed at exit, after main() returns. */
static char out_buffer[1 << 20];

static const char usage_text[] =
	"Usage: traceprinter [OPTION]... [-f FILE]\n"
	"Print the events of a QNX .kev trace file (from tracelogger or tracekit) as text.\n"
	"\n"
	"  -f, --file=FILE        trace file to read; \"-\" reads standard input\n"
	"                         (default " DEFAULT_INPUT "; a lone FILE argument works too)\n"
	"  -o, --output=FILE      write the text to FILE instead of standard output\n"
	"  -n                     print the arguments of combine events on the event's line\n"
	"  -v                     verbose: header value lengths, syspage, every raw slot\n"
	"  -c, --class=LIST       print only events of these classes (post-processing filter)\n"
	"  -x, --exclude=LIST     do not print events of these classes\n"
	"                         LIST is comma-separated: CONTROL, KERCALL (KERCALLENTER,\n"
	"                         KERCALLEXIT, KERCALLINT), INT (INTENTER, INTEXIT,\n"
	"                         INT_HANDLER_ENTER, INT_HANDLER_EXIT), PROCESS, THREAD,\n"
	"                         VTHREAD, USER, SYSTEM, COMM, QUIP, SEC, QVM, PMU\n"
	"  -s, --sort             print events in time order across CPUs, using 64-bit\n"
	"                         timestamps (large traces are sorted through TMPDIR)\n"
	"  -t, --time=FORMAT      timestamp column: lsb (default, 32-bit LSB as QNX prints it),\n"
	"                         cycles (64-bit cycle count), ns (the count in seconds.nanoseconds)\n"
	"      --strict           print only what QNX traceprinter 1.02 prints (no lines for\n"
	"                         events it has no format for)\n"
	"      --symbols          function entry/exit, ADDRESS and sample addresses as\n"
	"                         name+0xOFF (file:line), from the trace's MMAP events and the\n"
	"                         binaries' symbols and DWARF (unresolvable ones stay addresses)\n"
	"  -q, --quiet            no progress line on a terminal for large files\n"
	"  -h, --help             show this help and exit\n"
	"      --version          show the version and exit\n"
	"\n"
	"Exit status: 0 on success, 1 when the file cannot be read or is malformed (every event\n"
	"before the problem is still printed on standard output; with -o, the output file is\n"
	"left as it was), 2 on a usage error.\n"
	"The output format is described in traceprinter(1) (docs/traceprinter.md).\n";


struct ctx {
	tk_kev_printer *printer;
	struct traceparser_state *st;
	const char *input; /* as messages name it */
	FILE *out;
	int verbose;
	int need_clk;
	int write_errno; /* errno of the first failed write, 0 when none */
	int swap;
	int write_failed;
	struct tktool_progress progress;
	/* -c/-x on KER_CALL (internal class 2): which codes are printed. Its parts are code
	 * ranges in QNX files (entry 0-127, exit 128-255, interrupted 256-383) but bit 7 (exit)
	 * of any code in a file of Linux system calls (TRACEKIT_KERCALLS): decided at the
	 * header, from the selection of codes 0 and 128 */
	const unsigned char *sel_kc; /* the selection by QNX ranges */
	unsigned char kc_want[1024];
	tk_symbols *symbols;  /* --symbols */
	tk_kev_decoded dec;   /* --symbols: the event being printed */
	char line[16384];     /* --symbols: its text */
};

/* Notes a failed write of the printout, keeping the errno of the first one. */
static void write_failed(struct ctx *c)
{
	if (!c->write_failed)
		c->write_errno = errno != 0 ? errno : EIO;
	c->write_failed = 1;
}

/* The progress line follows the parser through the file (byte offset of each event). */
static void show_progress(struct ctx *c, struct traceparser_state *st)
{
	const uint64_t *off;

	if (!c->progress.active)
		return;
	off = traceparser_get_info(st, TK_TRACEPARSER_INFO_OFFSET, NULL);
	if (off != NULL)
		tktool_progress_update(&c->progress, *off);
}

/*
 * The parser's debug output (header, -v dumps) goes to the same stream as the event
 * lines, which the printer collects in blocks: this stream flushes the printer's block
 * before each debug write, so the two stay in file order. The parser's messages
 * ("TRACEPARSER: ...", one write each) are errors and warnings: they go to standard error
 * only, in the tools' style; the error that ends the parse is reported once, by main().
 */
static ssize_t debug_write(void *cookie, const char *buf, size_t size)
{
	struct ctx *c = cookie;
	static const char prefix[] = "TRACEPARSER: ";

	if (size > sizeof(prefix) - 1 && memcmp(buf, prefix, sizeof(prefix) - 1) == 0) {
		const char *msg = buf + sizeof(prefix) - 1, *err;
		size_t len = size - (sizeof(prefix) - 1);
		if (len > 0 && msg[len - 1] == '\n')
			len--;
		err = traceparser_get_info(c->st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		if (err == NULL || strlen(err) != len || memcmp(err, msg, len) != 0)
			fprintf(stderr, "traceprinter: %s: %.*s\n", c->input, (int)len, msg);
		return (ssize_t)size;
	}
	if (tk_kev_printer_flush(c->printer) != TK_OK || fwrite(buf, 1, size, c->out) != size) {
		write_failed(c);
		return -1;
	}
	return (ssize_t)size;
}

/* The input (a pipe) has nothing more for now: what is printed so far goes out. */
static void flush_output(void *ud)
{
	struct ctx *c = ud;

	if (tk_kev_printer_flush(c->printer) != TK_OK || fflush(c->out) != 0)
		write_failed(c);
}

static int null_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct ctx *c = ud;
	const unsigned *conv = traceparser_get_info(st, _TRACEPARSER_INFO_ENDIAN_CONV, NULL);

	(void)t;
	if (buf == NULL && len == 0 && h == 0) {
		/* Linux system calls in KER_CALL/KER_EXIT (tracelogger): name them by that table. */
		unsigned vlen = 0;
		const char *abi = tk_traceparser_header_value(st, "TRACEKIT_KERCALLS", &vlen);
		unsigned linux_calls = tk_kev_kercalls_flags(abi, vlen);
		tk_kev_printer_set_flags(c->printer, tk_kev_printer_flags(c->printer) | linux_calls);
		for (unsigned code = 0; code < 1024; code++)
			c->kc_want[code] = linux_calls ? c->sel_kc[code & 0x80u] : c->sel_kc[code];
		c->swap = conv != NULL && *conv != 0;
		if (c->verbose && tk_kev_printer_flush(c->printer) == TK_OK)
			fprintf(c->out, "TRACEPRINTER: header file and syspage have been processed\n");
	}
	return 0;
}

/*
 * --symbols: replaces the value of the address field `name` in the event's text with what
 * it resolves to ("thisfn:0x0040113a" becomes "thisfn:main+0x0 (prog.c:12)").
 */
static void symbolize_field(struct ctx *c, int32_t pid, const char *name, const char *printed, size_t *len)
{
	const tk_kev_field *f = tk_kev_field_find(&c->dec, name);
	char key[32], text[4096];
	tk_symbol sym;
	char *p, *v, *end;

	if (f == NULL || f->type == TK_KEV_FIELD_NONE || f->type >= TK_KEV_FIELD_STR || f->v.u == 0 ||
	    tk_symbols_lookup(c->symbols, pid, c->dec.time_ns, f->v.u, &sym) != 0)
		return;
	snprintf(key, sizeof(key), " %s:0x", printed != NULL ? printed : name);
	if ((p = strstr(c->line, key)) == NULL)
		return;
	v = p + strlen(key) - 2;
	end = v + 2;
	while ((*end >= '0' && *end <= '9') || (*end >= 'a' && *end <= 'f') || (*end >= 'A' && *end <= 'F'))
		end++;
	if (strtoull(v, NULL, 16) != f->v.u)
		return; /* not the value printed */
	size_t n = tk_symbols_format(&sym, text, sizeof(text)), tail = *len - (size_t)(end - c->line);
	if (n >= sizeof(text) || (size_t)(v - c->line) + n + tail >= sizeof(c->line))
		return;
	memmove(v + n, end, tail + 1);
	memcpy(v, text, n);
	*len = (size_t)(v - c->line) + n + tail;
}

/*
 * --symbols: SYSTEM MMAP/MUNMAP/MAPNAME events feed the symbolizer (standard input has no
 * first pass); events holding code addresses (FUNC_ENTER/EXIT, ADDRESS, PCTRACE samples,
 * INT_HANDLER_ENTRY's handler) are printed with their addresses resolved. Returns 1 when
 * the event was printed here, 0 to print it as usual.
 */
static int print_symbolized(struct ctx *c, struct traceparser_state *st, const tk_kev_event *ev)
{
	static const char *const callers[] = { "caller1",  "caller2",  "caller3",  "caller4",  "caller5",  "caller6",
					       "caller7",  "caller8",  "caller9",  "caller10", "caller11", "caller12",
					       "caller13", "caller14", "caller15", "caller16" };
	tk_kev_decoded *d = &c->dec;
	const tk_kev_field *pf;
	int32_t pid;
	size_t len;

	unsigned cls = TK_KEV_CLASS(ev->header), code = TK_KEV_CODE(ev->header);

	if (!(cls == 5 || (cls == 3 && code == _TRACE_INT_HANDLER_ENTRY)) ||
	    tk_traceparser_decode(st, ev->header, ev->time, ev->data, ev->len, 0, d) != 0)
		return 0;
	if (cls == 5 && (tk_symbols_event(c->symbols, d) != 0 ||
			 (d->code != _NTO_TRACE_SYS_FUNC_ENTER && d->code != _NTO_TRACE_SYS_FUNC_EXIT &&
			  d->code != _NTO_TRACE_SYS_ADDRESS && d->code != 31 /* PCTRACE */)))
		return 0;
	len = tk_kev_format_event(c->line, sizeof(c->line), tk_kev_printer_flags(c->printer), ev);
	if (len >= sizeof(c->line))
		return 0;
	pf = tk_kev_field_find(d, "pid");
	/* a sample's and an interrupt handler's process is in the event; the others' its owner */
	pid = (cls == 3 || d->code == 31) && pf != NULL && pf->type < TK_KEV_FIELD_STR ? (int32_t)pf->v.u : d->pid;
	if (cls == 3) {
		symbolize_field(c, pid, "ip", "IP", &len);
	} else if (d->code == _NTO_TRACE_SYS_ADDRESS) {
		symbolize_field(c, pid, "addr", NULL, &len);
	} else if (d->code == 31) {
		symbolize_field(c, pid, "ip", NULL, &len);
		for (size_t i = 0; i < sizeof(callers) / sizeof(callers[0]); i++)
			symbolize_field(c, pid, callers[i], NULL, &len);
	} else {
		symbolize_field(c, pid, "thisfn", NULL, &len);
		symbolize_field(c, pid, "call_site", NULL, &len);
	}
	if (tk_kev_printer_flush(c->printer) != TK_OK || fwrite(c->line, 1, len, c->out) != len)
		write_failed(c);
	return 1;
}

static int print_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct ctx *c = ud;
	tk_kev_event ev;

	show_progress(c, st);
	ev.header = h;
	ev.time = t;
	ev.data = buf;
	ev.len = len;
	ev.swap = c->swap;
	ev.clk = c->need_clk ? tk_traceparser_clk(st) : 0;
	ev.ns = c->need_clk ? tk_traceparser_ns(st) : 0;
	if (c->symbols != NULL && print_symbolized(c, st, &ev))
		return 0;
	if (tk_kev_print_event(c->printer, &ev) != TK_OK)
		write_failed(c);
	return 0;
}

/* print_cb() for KER_CALL events: those of the selection as the file's header defines its parts */
static int kercall_cb(struct traceparser_state *st, void *ud, unsigned h, unsigned t, unsigned *buf, unsigned len)
{
	struct ctx *c = ud;

	return c->kc_want[_NTO_TRACE_GETEVENT(h)] ? print_cb(st, ud, h, t, buf, len) : 0;
}

/*
 * Marks the selected ranges in sel[32][1024]. Returns 0, or -1 for an unknown name or a
 * list with no name or an empty one ("", "USER,", "USER,,THREAD"): like any bad option
 * value, a usage error, never a silently empty selection.
 */
static int mark_classes(const char *opt, const char *list, unsigned char (*sel)[1024], unsigned char value)
{
	char *copy, *save = NULL, *tok;
	size_t len = strlen(list);
	int rc = 0;

	if (len == 0 || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,") != NULL) {
		fprintf(stderr, "traceprinter: %s needs a comma-separated list of class names, not '%s' (see --help)\n",
			opt, list);
		return -1;
	}
	copy = strdup(list);
	if (copy == NULL)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		/* the library's class table (tracekit/kev.h) */
		const tk_kev_class_desc *c = tk_kev_class_find(tok);
		if (c != NULL) {
			memset(&sel[c->cls][c->first], value, c->last - c->first + 1);
		} else {
			fprintf(stderr, "traceprinter: unknown class '%s' (see --help)\n", tok);
			rc = -1;
		}
	}
	free(copy);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "file", required_argument, NULL, 'f' },   { "output", required_argument, NULL, 'o' },
		{ "class", required_argument, NULL, 'c' },  { "exclude", required_argument, NULL, 'x' },
		{ "sort", no_argument, NULL, 's' },         { "time", required_argument, NULL, 't' },
		{ "strict", no_argument, NULL, 'S' },       { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { "quiet", no_argument, NULL, 'q' },
		{ "symbols", no_argument, NULL, 'Y' },
		{ NULL, 0, NULL, 0 },
	};
	static unsigned char sel[32][1024];
	const char *input = NULL, *output = NULL, *include = NULL, *exclude = NULL;
	unsigned flags = 0, dbg = _TRACEPARSER_DEBUG_HEADER | _TRACEPARSER_DEBUG_ERRORS;
	struct traceparser_state *st = NULL;
	struct tktool_output outfile = { NULL, NULL, -1 };
	FILE *debug_stream;
	struct ctx c = { 0 };
	int opt, sort = 0, rc, status = 0, symbols = 0, regular = 0;
	unsigned cls, ev;

	tktool_init("traceprinter");
	opterr = 0; /* our own messages: they name the program, not the path it ran from */
	while ((opt = getopt_long(argc, argv, ":f:o:nvc:x:st:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'n':
			flags |= TK_KEV_PRINT_NO_NEWLINES;
			break;
		case 'v':
			c.verbose = 1;
			dbg = _TRACEPARSER_DEBUG_ALL;
			break;
		case 'c':
			include = optarg;
			break;
		case 'x':
			exclude = optarg;
			break;
		case 's':
			sort = 1;
			break;
		case 't':
			if (strcmp(optarg, "lsb") == 0) {
				flags &= ~(unsigned)(TK_KEV_PRINT_TIME_CYCLES | TK_KEV_PRINT_TIME_NS);
			} else if (strcmp(optarg, "cycles") == 0) {
				flags |= TK_KEV_PRINT_TIME_CYCLES;
			} else if (strcmp(optarg, "ns") == 0) {
				flags |= TK_KEV_PRINT_TIME_NS;
			} else {
				fprintf(stderr, "traceprinter: --time must be lsb, cycles or ns, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'S':
			flags |= TK_KEV_PRINT_QNX_STRICT;
			break;
		case 'q':
			tktool_quiet = 1;
			break;
		case 'Y':
			symbols = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			return tktool_version("QNX traceprinter 1.02 format");
		case ':':
			return tktool_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return tktool_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		if (input != NULL || optind + 1 < argc)
			return tktool_usage_error("unexpected argument '%s'", argv[optind]);
		input = argv[optind];
	}
	if (input == NULL)
		input = DEFAULT_INPUT;
	c.need_clk = (flags & (TK_KEV_PRINT_TIME_CYCLES | TK_KEV_PRINT_TIME_NS)) != 0;

	memset(sel, include ? 0 : 1, sizeof(sel));
	if ((include && mark_classes("--class", include, sel, 1) != 0) ||
	    (exclude && mark_classes("--exclude", exclude, sel, 0) != 0))
		return 2;

	/*
	 * An input that cannot be opened prints nothing (no banner) and creates no output; a
	 * named pipe or device is left for the parser to open once (a probe could make its
	 * writer see a reader come and go).
	 */
	if (strcmp(input, "-") != 0) {
		struct stat sb;
		int fd = -1;

		if (stat(input, &sb) != 0 || (S_ISREG(sb.st_mode) && (fd = open(input, O_RDONLY | O_CLOEXEC)) < 0)) {
			tktool_error(input, "couldn't open input trace file: %s", strerror(errno));
			return 1;
		}
		if (fd >= 0)
			close(fd);
		regular = S_ISREG(sb.st_mode);
	}

	if (output != NULL) {
		if (tktool_refuse_same_file(input, output))
			return 1;
		/* Ctrl-C: no OUTPUT.part left behind */
		tktool_catch_signals(TKTOOL_SIGNAL_EXIT);
		if (tktool_output_open(&outfile, output, 0) != 0)
			return 1;
		c.out = tktool_output_stream(&outfile);
	} else {
		c.out = stdout;
	}
	/* glibc ignores the size when it allocates the buffer itself (4 KiB): give it ours. */
	setvbuf(c.out, out_buffer, _IOFBF, sizeof(out_buffer));

	st = traceparser_init(NULL);
	c.st = st;
	if (symbols && tk_symbols_new(&c.symbols) != TK_OK) {
		fprintf(stderr, "traceprinter: out of memory\n");
		tktool_output_abort(&outfile);
		traceparser_destroy(&st);
		return 1;
	}
	/* --symbols: the mappings first (the recorder's START snapshot can follow a worker's
	 * buffer in the file); a pipe is read once, its mappings as they come. A damaged file
	 * is reported by the printing pass. */
	if (symbols && regular)
		tk_symbols_load_file(c.symbols, input, NULL, 0);
	c.input = strcmp(input, "-") == 0 ? "standard input" : input;
	if (st == NULL || tk_kev_printer_new(&c.printer, c.out, flags) != TK_OK) {
		fprintf(stderr, "traceprinter: out of memory\n");
		tktool_output_abort(&outfile);
		traceparser_destroy(&st);
		return 1;
	}
	fprintf(c.out, "TRACEPRINTER version 1.02\n");
	debug_stream = fopencookie(&c, "w", (cookie_io_functions_t){ .write = debug_write });
	if (debug_stream == NULL) {
		fprintf(stderr, "traceprinter: out of memory\n");
		tktool_output_abort(&outfile);
		traceparser_destroy(&st);
		tk_kev_printer_free(c.printer);
		return 1;
	}
	setvbuf(debug_stream, NULL, _IONBF, 0);
	traceparser_debug(st, debug_stream, dbg);
	if (sort)
		traceparser_sort(st, _TRACEPARSER_SORT);

	/* KER_CALL: every code goes to kercall_cb, which prints those of the selection as the
	 * file's header defines the class's parts (c.kc_want) */
	c.sel_kc = sel[_TRACE_KER_CALL_C >> 10];
	memcpy(c.kc_want, c.sel_kc, sizeof(c.kc_want));
	if (memchr(c.sel_kc, 1, 1024) != NULL)
		tk_traceparser_cs_internal(st, &c, kercall_cb, _TRACE_KER_CALL_C >> 10, 0, 1023);
	for (cls = 0; cls < 32; cls++) {
		for (ev = 0; ev < 1024; ev++) {
			unsigned last = ev;
			if (cls == _TRACE_KER_CALL_C >> 10 || !sel[cls][ev] || (cls == 0 && ev == 0))
				continue;
			while (last + 1 < 1024 && sel[cls][last + 1])
				last++;
			tk_traceparser_cs_internal(st, &c, print_cb, cls, ev, last);
			ev = last;
		}
	}
	traceparser_cs(st, &c, null_cb, _NTO_TRACE_EMPTY, _NTO_TRACE_EMPTYEVENT);
	tk_traceparser_on_wait(st, flush_output, &c);

	tktool_progress_begin(&c.progress, "reading", tktool_file_size(input));
	rc = traceparser(st, &c, input);
	tktool_progress_end(&c.progress);
	if (rc != 0) {
		const char *msg = traceparser_get_info(st, _TRACEPARSER_INFO_ERROR_STR, NULL);
		fflush(c.out);
		/* "traceprinter: FILE: byte offset N: what" (the parser's message says where) */
		fprintf(stderr, "traceprinter: %s: %s\n", c.input, msg && *msg ? msg : strerror(errno));
		status = 1;
	}
	traceparser_destroy(&st);
	fclose(debug_stream);
	if (tk_kev_printer_flush(c.printer) != TK_OK)
		write_failed(&c);
	tk_kev_printer_free(c.printer);
	tk_symbols_free(c.symbols);

	errno = 0;
	if (fflush(c.out) != 0 || ferror(c.out) || c.write_failed) {
		/* "traceprinter: FILE: cannot write: REASON", as tktool_output_commit says it */
		int err = c.write_errno != 0 ? c.write_errno : errno != 0 ? errno : EIO;

		fprintf(stderr, "traceprinter: %s: cannot write: %s\n", output ? tktool_out_name(output) : "standard output",
			strerror(err));
		tktool_output_abort(&outfile);
		return 1;
	}
	/*
	 * -o FILE is the whole printout or nothing: an input that is not a trace, malformed
	 * or truncated leaves an existing FILE as it was (the events before the problem are
	 * printed only without -o, on standard output).
	 */
	if (status != 0) {
		tktool_output_abort(&outfile);
		return status;
	}
	if (output != NULL && tktool_output_commit(&outfile) != 0)
		return 1;
	return status;
}
