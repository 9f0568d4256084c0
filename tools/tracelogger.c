/* SPDX-License-Identifier: MIT */
/*
 * tracelogger: records the kernel's side of a trace (thread states, process and thread
 * life, system calls, interrupts, samples) through the collect module (perf_event_open)
 * into a .kev file, with QNX tracelogger's options given their Linux meaning and perf-style
 * additions (-- cmd, -p, -a, -c, -g, -A). A traced command's own events (libtracekit,
 * TRACEKIT_LOG) are merged into the same file on the same time line. docs/tracelogger.md.
 *
 * Output: CYCLES_PER_SEC 1000000000 and TRACEKIT_CLOCK_CYCLES = TRACEKIT_CLOCK_RAW_NS = 0:
 * every time is CLOCK_MONOTONIC_RAW in ns. Events are written as the collector hands them
 * over (per CPU in time order) with CONTROL TIME events for the upper 32 bits; when user
 * events are merged, the file is rewritten once in time order across CPUs. Owners follow
 * the per-CPU THRUNNING rule; where a THRUNNING only names an owner (no switch), it follows
 * a CONTROL BUFFER and the header says TRACEKIT_OWNER=cpu (docs/kev-format.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool_cli.h"
#include "tracekit/collect.h"
#include "tracekit/kev.h"
#include "tracekit/session.h"

#define DEFAULT_OUTPUT "/dev/shm/tracebuffer.kev"
#define STOP_TIME_UP "the -s time is up"
#define BUF_SLOTS 1024u /* one "buffer": 1024 slots (16 KiB), as QNX's kernel buffers */

static const char usage_text[] =
	"Usage: tracelogger [OPTION]... [-- COMMAND [ARG]...]\n"
	"Record the kernel's events (thread states, process life, system calls, interrupts)\n"
	"into a QNX .kev trace file, with the own tracekit events of every program attached to\n"
	"its session merged in.\n"
	"\n"
	"What to trace (default: the whole system, as QNX's tracelogger, when permitted):\n"
	"  -- COMMAND [ARG]...     run COMMAND and trace it and its descendants; exit with its\n"
	"                          status (127 when it cannot be found)\n"
	"  -p PID[,PID]...         trace running processes (their threads and later children)\n"
	"  -a                      every CPU, every task (needs privileges)\n"
	"What to record:\n"
	"  -c CLASSES              comma-separated: THREAD, PROCESS, SYSTEM, KERCALL, INT, USER\n"
	"                          (default: all of them that are permitted)\n"
	"  -F NUM                  filter preset: 0 none, 1 no kernel calls, 2 no interrupts,\n"
	"                          3 no process class, 4 no thread class, 5 no VThread (none on\n"
	"                          Linux), 6 no COMM class (none on Linux)\n"
	"  -w                      wide mode: every system call argument, thread priorities\n"
	"  -g                      cpu-clock samples with user call chains (at --freq, 999 Hz)\n"
	"      --freq=HZ           cpu-clock samples per second (0: none, the default without -g)\n"
	"  -A KEY=VALUE            add a header attribute (repeatable)\n"
	"Where and how much:\n"
	"  -f FILE                 output (default " DEFAULT_OUTPUT "; \"-\": standard output,\n"
	"                          and the command's output then goes to standard error)\n"
	"  -n NUM                  stop after NUM buffers of 1024 events (0: until stopped;\n"
	"                          default 32 for the whole system or -p, 0 with a command,\n"
	"                          -s, -r, -M or -d1)\n"
	"  -s SECONDS              stop after SECONDS\n"
	"  -S SIZE                 stop before the file exceeds SIZE bytes (K or M suffix)\n"
	"  -M                      with -S: keep the newest SIZE bytes instead of stopping\n"
	"  -r                      ring mode: keep the newest -b buffers, write them at the stop\n"
	"  -b NUM                  buffers kept in ring mode (default 64, 16 KiB each)\n"
	"  -k NUM                  kernel buffers: 16 KiB of perf ring per CPU each (default 32)\n"
	"  -d1                     daemon mode: record nothing until a traced program starts the\n"
	"                          trace (TraceEvent(_NTO_TRACE_START), or SIGUSR1), what it enables,\n"
	"                          until it stops it (or SIGUSR2) or a limit\n"
	"The session (traced programs' own events):\n"
	"  -N, --session=NAME      the session programs attach to (default: $TRACEKIT_SESSION,\n"
	"                          else default); a command gets TRACEKIT_SESSION=NAME\n"
	"      --session-buffers=NUM  its buffers, 16 KiB each (default 1024)\n"
	"      --recover           only turn the session left by a logger that died into -f FILE\n"
	"Other:\n"
	"  -v                      per-buffer statistics on standard error\n"
	"  -h, --help              show this help and exit\n"
	"      --version           show the version and exit\n"
	"\n"
	"Ctrl-C, SIGTERM or SIGHUP stop the recording and complete the file; a second one\n"
	"aborts at once, still leaving a readable file. Exit status: the command's with a\n"
	"command, else 0; 1 on an error (also: the session has a live logger); 2 on a usage\n"
	"error. See tracelogger(1) (docs/tracelogger.md).\n";

/* ---- signals ---- */

static volatile sig_atomic_t g_stop;   /* first SIGINT/SIGTERM/SIGHUP, SIGUSR2, or a limit */
static volatile sig_atomic_t g_abort;  /* second SIGINT/SIGTERM/SIGHUP */
static volatile sig_atomic_t g_signo;  /* the last stopping signal */
static volatile sig_atomic_t g_start;  /* SIGUSR1 in daemon mode */

static void on_stop_signal(int sig)
{
	if (g_stop && sig != SIGUSR2)
		g_abort = 1;
	g_stop = 1;
	if (sig != SIGUSR2)
		g_signo = sig;
	tktool_stop = 1;
}

static void on_start_signal(int sig)
{
	(void)sig;
	g_start = 1;
}

static void on_child(int sig)
{
	(void)sig; /* only wakes the poll: the command's end is seen at once */
}

static struct sigaction g_pipe_old; /* SIGPIPE as tracelogger found it: the command's */

static void install_signals(int daemon)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_flags = 0;
	sa.sa_handler = on_stop_signal; /* no SA_RESTART: a blocked wait returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a closed terminal stops the recording as SIGTERM does (the file completed, the session
	 * region removed), not with the default death; under nohup it stays ignored */
	if (!tktool_signal_ignored(SIGHUP))
		sigaction(SIGHUP, &sa, NULL);
	if (daemon) {
		sigaction(SIGUSR2, &sa, NULL);
		sa.sa_handler = on_start_signal;
		sigaction(SIGUSR1, &sa, NULL);
	} else {
		/* START and STOP mean something only with -d1: a stray one never ends a run */
		sa.sa_handler = SIG_IGN;
		sigaction(SIGUSR1, &sa, NULL);
		sigaction(SIGUSR2, &sa, NULL);
	}
	/* A reader of standard output that goes away (| head): EPIPE, reported, not a silent death */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &g_pipe_old);
}

/* ---- options ---- */

struct opts {
	const char *output;
	unsigned buffers;      /* -b */
	int daemon;            /* -d1 */
	int filter;            /* -F */
	unsigned kbuffers;     /* -k */
	int size_ring;         /* -M */
	long long n_buffers;   /* -n, -1 = default */
	int ring;              /* -r */
	unsigned seconds_ms;   /* -s, 0 = none */
	uint64_t max_size;     /* -S, 0 = none */
	int verbose;           /* -v */
	int wide;              /* -w */
	int all_cpus;          /* -a */
	int *pids;             /* -p */
	size_t n_pids;
	uint32_t classes;      /* -c, kernel classes (TK_COLLECT_CLASS bits) */
	int classes_given;
	uint32_t sub_sel;      /* -c, the parts of KERCALL and INT named (bits 1 << _NTO_TRACE_KERCALLENTER, ...) */
	int user_events;       /* USER class selected */
	int callchains;        /* -g */
	long freq;             /* --freq, -1 = default */
	tk_kev_attr attrs[64]; /* -A */
	size_t n_attrs;
	char **cmd;            /* after -- */
	const char *session;   /* -N, --session */
	int session_implicit;  /* neither -N nor TRACEKIT_SESSION: the default one, never asked for */
	unsigned session_bufs; /* --session-buffers */
	int recover;           /* --recover */
};

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v, mul = 1;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -1;
	if (*end == 'K' || *end == 'k')
		mul = 1024, end++;
	else if (*end == 'M' || *end == 'm')
		mul = 1024 * 1024, end++;
	else if (*end == 'G' || *end == 'g')
		mul = 1024ull * 1024 * 1024, end++;
	if (*end != '\0' || v == 0 || v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

#define SEL_KERCALL ((1u << _NTO_TRACE_KERCALLENTER) | (1u << _NTO_TRACE_KERCALLEXIT) | (1u << _NTO_TRACE_KERCALLINT))
#define SEL_INT ((1u << _NTO_TRACE_INTENTER) | (1u << _NTO_TRACE_INTEXIT) | (1u << _NTO_TRACE_INT_HANDLER_ENTER) | (1u << _NTO_TRACE_INT_HANDLER_EXIT))

static int parse_classes(struct opts *o, const char *list)
{
	char *copy, *save = NULL, *tok;
	size_t len = strlen(list);

	if (len == 0 || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,") != NULL)
		return tktool_usage_error("-c: empty class name in '%s'", list);
	copy = strdup(list);
	if (copy == NULL)
		return tktool_usage_error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		const tk_kev_class_desc *d = tk_kev_class_find(tok);
		int ext = d != NULL ? d->ext_class : -1;
		switch (ext) {
		case _NTO_TRACE_THREAD: o->classes |= TK_COLLECT_CLASS(_NTO_TRACE_THREAD); break;
		case _NTO_TRACE_PROCESS: o->classes |= TK_COLLECT_CLASS(_NTO_TRACE_PROCESS); break;
		case _NTO_TRACE_SYSTEM: o->classes |= TK_COLLECT_CLASS(_NTO_TRACE_SYSTEM); break;
		/* KERCALLENTER, INTEXIT, ...: recorded as their class, written alone (as traceprinter -c selects) */
		case _NTO_TRACE_KERCALL:
			o->sub_sel |= SEL_KERCALL;
			o->classes |= TK_COLLECT_CLASS(_NTO_TRACE_KERCALL);
			break;
		case _NTO_TRACE_KERCALLENTER:
		case _NTO_TRACE_KERCALLEXIT:
			o->sub_sel |= 1u << ext;
			o->classes |= TK_COLLECT_CLASS(_NTO_TRACE_KERCALL);
			break;
		case _NTO_TRACE_INT:
			o->sub_sel |= SEL_INT;
			o->classes |= TK_COLLECT_CLASS(_NTO_TRACE_INT);
			break;
		case _NTO_TRACE_INTENTER:
		case _NTO_TRACE_INTEXIT:
		case _NTO_TRACE_INT_HANDLER_ENTER:
		case _NTO_TRACE_INT_HANDLER_EXIT:
			o->sub_sel |= 1u << ext;
			o->classes |= TK_COLLECT_CLASS(_NTO_TRACE_INT);
			break;
		case _NTO_TRACE_USER: o->user_events = 1; break;
		default: {
			int rc = d == NULL ? tktool_usage_error("-c: unknown class '%s'", tok)
					   : tktool_usage_error("-c: class '%s' is not recorded on Linux (THREAD, PROCESS, "
								"SYSTEM, KERCALL, INT, USER are)", tok);
			free(copy);
			return rc;
		}
		}
	}
	free(copy);
	o->classes_given = 1;
	return 0;
}

static int parse_pids(struct opts *o, const char *list)
{
	const char *p = list;

	while (*p != '\0') {
		char num[32];
		size_t n = strcspn(p, ",");
		unsigned long long v;
		int *grown;
		if (n == 0 || n >= sizeof(num))
			return tktool_usage_error("-p: bad process ID list '%s'", list);
		memcpy(num, p, n);
		num[n] = '\0';
		if (parse_uint(num, INT_MAX, &v) != 0 || v == 0)
			return tktool_usage_error("-p: '%s' is not a process ID", num);
		grown = realloc(o->pids, (o->n_pids + 1) * sizeof(*o->pids));
		if (grown == NULL)
			return tktool_usage_error("out of memory");
		o->pids = grown;
		o->pids[o->n_pids++] = (int)v;
		p += n;
		if (*p == ',') {
			p++;
			if (*p == '\0')
				return tktool_usage_error("-p: bad process ID list '%s'", list);
		}
	}
	return 0;
}

enum { OPT_VERSION = 256, OPT_FREQ, OPT_RECOVER, OPT_SESSION_BUFS };

static int parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option longs[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{"freq", required_argument, NULL, OPT_FREQ},
		{"session", required_argument, NULL, 'N'},
		{"session-buffers", required_argument, NULL, OPT_SESSION_BUFS},
		{"recover", no_argument, NULL, OPT_RECOVER},
		{NULL, 0, NULL, 0},
	};
	unsigned long long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->output = DEFAULT_OUTPUT;
	o->buffers = 64;
	o->kbuffers = 32;
	o->n_buffers = -1;
	o->freq = -1;
	o->user_events = 1;
	/* the session programs attach to: TRACEKIT_SESSION names it for them, and for us */
	o->session_implicit = getenv(TK_SESSION_ENV) == NULL || getenv(TK_SESSION_ENV)[0] == '\0';
	o->session = o->session_implicit ? TK_SESSION_DEFAULT : getenv(TK_SESSION_ENV);
	o->session_bufs = TK_SESSION_DEFAULT_BUFFERS;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:ab:c:d:f:F:ghk:Mn:N:p:rs:S:vwA:", longs, NULL)) != -1) {
		switch (c) {
		case 'a': o->all_cpus = 1; break;
		case 'b':
			if (parse_uint(optarg, 1u << 20, &v) != 0 || v == 0)
				return tktool_usage_error("-b: '%s' is not a number of buffers (1 to 1048576)", optarg);
			o->buffers = (unsigned)v;
			break;
		case 'c':
			if (!o->classes_given)
				o->user_events = 0;
			if (parse_classes(o, optarg) != 0)
				return 2;
			break;
		case 'd':
			if (strcmp(optarg, "1") != 0)
				return tktool_usage_error("-d: unknown mode '%s' (1: daemon mode)", optarg);
			o->daemon = 1;
			break;
		case 'f': o->output = optarg; break;
		case 'F':
			if (parse_uint(optarg, 6, &v) != 0)
				return tktool_usage_error("-F: '%s' is not a filter preset (0 to 6)", optarg);
			o->filter = (int)v;
			break;
		case 'g': o->callchains = 1; break;
		case 'h': fputs(usage_text, stdout); return -1;
		case 'k':
			if (parse_uint(optarg, 65536, &v) != 0 || v == 0)
				return tktool_usage_error("-k: '%s' is not a number of kernel buffers (1 to 65536)", optarg);
			o->kbuffers = (unsigned)v;
			break;
		case 'M': o->size_ring = 1; break;
		case 'n':
			if (parse_uint(optarg, UINT32_MAX, &v) != 0)
				return tktool_usage_error("-n: '%s' is not a number of buffers", optarg);
			o->n_buffers = (long long)v;
			break;
		case 'N':
			if (!tk_session_name_valid(optarg))
				return tktool_usage_error("-N: '%s' is not a session name (1 to %d of A-Z a-z 0-9 _ . -, "
							  "not starting with '.')", optarg, TK_SESSION_NAME_MAX);
			o->session = optarg;
			o->session_implicit = 0;
			break;
		case OPT_SESSION_BUFS:
			if (parse_uint(optarg, TK_SESSION_MAX_BUFFERS, &v) != 0 || v == 0)
				return tktool_usage_error("--session-buffers: '%s' is not a number of buffers (1 to %u)",
							  optarg, TK_SESSION_MAX_BUFFERS);
			o->session_bufs = (unsigned)v;
			break;
		case OPT_RECOVER: o->recover = 1; break;
		case 'p':
			if (parse_pids(o, optarg) != 0)
				return 2;
			break;
		case 'r': o->ring = 1; break;
		case 's':
			if (tktool_parse_seconds(optarg, &o->seconds_ms) != 0)
				return tktool_usage_error("-s: '%s' is not a number of seconds", optarg);
			break;
		case 'S':
			if (parse_size(optarg, &o->max_size) != 0)
				return tktool_usage_error("-S: '%s' is not a size (bytes, or with K, M or G)", optarg);
			break;
		case 'v': o->verbose++; break;
		case 'w': o->wide = 1; break;
		case 'A': {
			char *eq = strchr(optarg, '=');
			if (eq == NULL || eq == optarg)
				return tktool_usage_error("-A: '%s' is not KEY=VALUE", optarg);
			if (o->n_attrs >= sizeof(o->attrs) / sizeof(o->attrs[0]) - 8)
				return tktool_usage_error("-A: too many attributes");
			*eq = '\0';
			if (strstr(optarg, "::") || strstr(optarg, "TRACE_") || strstr(eq + 1, "::") ||
			    strstr(eq + 1, "TRACE_") || strncmp(optarg, "TRACEKIT_", 9) == 0 || strchr(optarg, '\n') ||
			    strchr(eq + 1, '\n'))
				return tktool_usage_error("-A: '%.60s%s': a key or value may not contain \"::\", \"TRACE_\" "
							  "or a newline, and TRACEKIT_ keys are tracekit's", optarg,
							  strlen(optarg) > 60 ? "..." : "");
			o->attrs[o->n_attrs].key = optarg;
			o->attrs[o->n_attrs].value = eq + 1;
			/* the writer's own rules (a reserved keyword, the readers' key length, a trailing
			 * ':'), said here rather than as a failure to create a file once recording */
			char why[256];
			if (tk_kev_attr_check(&o->attrs[o->n_attrs], why, sizeof(why)) != TK_OK)
				return tktool_usage_error("-A: %s", why);
			o->n_attrs++;
			break;
		}
		case OPT_VERSION: tktool_version(NULL); return -1;
		case OPT_FREQ:
			if (parse_uint(optarg, 100000, &v) != 0)
				return tktool_usage_error("--freq: '%s' is not a number of samples per second", optarg);
			o->freq = (long)v;
			break;
		case ':': return tktool_usage_error("option -%c needs a value", optopt);
		default:
			if (optopt != 0)
				return tktool_usage_error("unknown option -%c", optopt);
			return tktool_usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->cmd = argv + optind;
	if (o->cmd != NULL && o->n_pids > 0)
		return tktool_usage_error("give a command or -p, not both");
	if (o->all_cpus && o->n_pids > 0) /* -a took every task: -p was ignored */
		return tktool_usage_error("-a records every task: give -a or -p, not both");
	if (o->size_ring && o->max_size == 0)
		return tktool_usage_error("-M needs -S SIZE (the size of the newest events to keep)");
	if (o->size_ring && o->ring)
		return tktool_usage_error("-M and -r both choose the ring's size: give one");
	if (!tk_session_name_valid(o->session))
		return tktool_usage_error("TRACEKIT_SESSION: '%s' is not a session name (1 to %d of A-Z a-z 0-9 _ . -, "
					  "not starting with '.')", o->session, TK_SESSION_NAME_MAX);
	if (o->recover && (o->cmd != NULL || o->n_pids > 0 || o->daemon || o->all_cpus))
		return tktool_usage_error("--recover only recovers a session (-N) into a file (-f): no command, -p, "
					  "-a or -d1");
	if (o->classes_given && o->classes == 0 && !o->user_events)
		return tktool_usage_error("-c: name at least one class (THREAD, PROCESS, SYSTEM, KERCALL, INT, USER)");
	if (strcmp(o->output, "-") == 0 && isatty(STDOUT_FILENO))
		return tktool_usage_error("-f -: standard output is a terminal; redirect it or name a file");
	return 0;
}

/* ---- output ---- */

/* ---- the header ---- */

struct header {
	tk_kev_header h;
	tk_kev_attr attrs[96];
	char keys[16][64], vals[16][256];
	unsigned n_collect;
};

static void add_collect_attr(void *ud, const char *key, const char *val)
{
	struct header *H = ud;

	if (H->n_collect >= 16 || H->h.n_attrs >= sizeof(H->attrs) / sizeof(H->attrs[0]))
		return;
	snprintf(H->keys[H->n_collect], sizeof(H->keys[0]), "%s", key);
	snprintf(H->vals[H->n_collect], sizeof(H->vals[0]), "%s", val);
	H->attrs[H->h.n_attrs].key = H->keys[H->n_collect];
	H->attrs[H->h.n_attrs].value = H->vals[H->n_collect];
	H->h.n_attrs++;
	H->n_collect++;
}

static void build_header(struct header *H, const struct opts *o, const tk_collect *c, const char *file_name)
{
	size_t i;

	memset(H, 0, sizeof(*H));
	H->h.file_name = file_name;
	H->h.cycles_per_sec = 1000000000ull; /* times are CLOCK_MONOTONIC_RAW ns */
	H->h.attrs = H->attrs;
	H->attrs[0].key = "TRACEKIT_CLOCK_CYCLES";
	H->attrs[0].value = "0";
	H->attrs[1].key = "TRACEKIT_CLOCK_RAW_NS";
	H->attrs[1].value = "0";
	H->h.n_attrs = 2;
	if (c != NULL)
		tk_collect_header_attrs(c, add_collect_attr, H);
	for (i = 0; i < o->n_attrs; i++)
		H->attrs[H->h.n_attrs++] = o->attrs[i];
}

/* ---- the traced command ---- */

struct child {
	pid_t pid;
	int go_fd;   /* write end: one byte lets it exec */
	int err_fd;  /* read end: errno of a failed exec (close-on-exec) */
	int exited, status;
	int exec_errno;
};

/* Whether the output is tracelogger's standard output (-f -, or /dev/stdout and the like). */
static int output_is_stdout(const char *output)
{
	struct stat out_sb, fd_sb;

	if (strcmp(output, "-") == 0)
		return 1;
	return stat(output, &out_sb) == 0 && fstat(STDOUT_FILENO, &fd_sb) == 0 && !S_ISREG(out_sb.st_mode) &&
	       out_sb.st_dev == fd_sb.st_dev && out_sb.st_ino == fd_sb.st_ino;
}

/* stdout_to_stderr: the trace goes to standard output, so the command's output, which would
 * come before the header and corrupt the stream, goes to tracelogger's standard error. */
static int launch(struct child *ch, char **cmd, const char *session, int daemon, int stdout_to_stderr)
{
	int go[2], err[2];

	memset(ch, 0, sizeof(*ch));
	ch->go_fd = ch->err_fd = -1;
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
		return -1;
	ch->pid = fork();
	if (ch->pid < 0)
		return -1;
	if (ch->pid == 0) {
		char b, pidbuf[32];
		int e;
		sigset_t none;
		close(go[1]);
		close(err[0]);
		signal(SIGUSR1, SIG_DFL);
		signal(SIGUSR2, SIG_DFL);
		sigaction(SIGPIPE, &g_pipe_old, NULL); /* ignored here; the command's as tracelogger found it */
		tktool_exec_prepare(); /* SIGXFSZ as tracelogger found it */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (daemon) { /* only a daemon-mode tracelogger takes START and STOP */
			snprintf(pidbuf, sizeof(pidbuf), "%ld", (long)getppid());
			setenv("TRACELOGGER_PID", pidbuf, 1);
		} else {
			unsetenv("TRACELOGGER_PID");
		}
		/* its own events go to the session, which tracelogger drains (not to a file of
		 * its own: TRACEKIT_LOG would win over the session) */
		if (session != NULL) {
			setenv("TRACEKIT_SESSION", session, 1);
			unsetenv("TRACEKIT_LOG");
		}
		if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(126);
		while (read(go[0], &b, 1) < 0 && errno == EINTR)
			;
		if (read(go[0], &b, 0) < 0) /* keeps the compiler quiet about b */
			_exit(127);
		execvp(cmd[0], cmd);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(err[1]);
	ch->go_fd = go[1];
	ch->err_fd = err[0];
	return 0;
}

/* Lets the child exec; returns 0, or its exec errno when exec failed. */
static int release(struct child *ch)
{
	char b = 1;
	int e = 0;
	ssize_t r;

	if (write(ch->go_fd, &b, 1) < 0) {
		/* the child is gone already */
	}
	close(ch->go_fd);
	ch->go_fd = -1;
	do
		r = read(ch->err_fd, &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(ch->err_fd);
	ch->err_fd = -1;
	ch->exec_errno = r == (ssize_t)sizeof(e) ? e : 0;
	return ch->exec_errno;
}

static int child_poll(struct child *ch, int block)
{
	int st;
	pid_t r;

	if (ch->pid <= 0 || ch->exited)
		return ch->exited;
	do
		r = waitpid(ch->pid, &st, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR && block && !g_abort);
	if (r == ch->pid) {
		ch->exited = 1;
		ch->status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	}
	return ch->exited;
}

static int pids_alive(const struct opts *o)
{
	size_t i;

	for (i = 0; i < o->n_pids; i++)
		if (kill(o->pids[i], 0) == 0 || errno == EPERM)
			return 1;
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Opens the collector. Falls back to what is permitted when the user asked for nothing privileged. */
static int open_collect(tk_collect **c, struct opts *o, int child_pid, uint32_t *recorded)
{
	tk_collect_config cfg;
	char why[1024];
	uint32_t all = TK_COLLECT_DEFAULT_CLASSES | TK_COLLECT_CLASS(_NTO_TRACE_KERCALL) | TK_COLLECT_CLASS(_NTO_TRACE_INT);
	uint32_t classes = o->classes_given ? o->classes : all;
	int rc, explicit_priv;

	if (o->classes_given && o->classes == 0) {
		/* -c USER alone: the programs' own events, no kernel events (no collector) */
		*c = NULL;
		*recorded = 0;
		return 0;
	}
	switch (o->filter) {
	case 1: classes &= ~TK_COLLECT_CLASS(_NTO_TRACE_KERCALL); break;
	case 2: classes &= ~TK_COLLECT_CLASS(_NTO_TRACE_INT); break;
	case 3: classes &= ~TK_COLLECT_CLASS(_NTO_TRACE_PROCESS); break;
	case 4: classes &= ~TK_COLLECT_CLASS(_NTO_TRACE_THREAD); break;
	default: break;
	}
	if (classes == 0) {
		tktool_usage_error("-F %d leaves no class to record", o->filter);
		return 2;
	}
	explicit_priv = o->all_cpus || (o->classes_given && (o->classes & (TK_COLLECT_CLASS(_NTO_TRACE_KERCALL) |
									   TK_COLLECT_CLASS(_NTO_TRACE_INT))));
	memset(&cfg, 0, sizeof(cfg));
	cfg.size = sizeof(cfg);
	cfg.classes = classes;
	cfg.wide = o->wide;
	cfg.callchains = o->callchains;
	cfg.sample_hz = o->freq >= 0 ? (unsigned)o->freq : o->callchains ? 999 : 0;
	cfg.system_wide = o->all_cpus || (o->cmd == NULL && o->n_pids == 0);
	cfg.pids = o->pids;
	cfg.n_pids = o->n_pids;
	cfg.child_pid = child_pid;
	cfg.ring_kib = (size_t)o->kbuffers * 16;
	/* Fast mode on a command or pids with only THREAD, PROCESS, SYSTEM: the per-task switch
	 * records (about one per switch, blocked or preempted); the tracepoints' exact blocked
	 * states (and the system calls they need watched) come with -w, KERCALL or INT. */
	if (explicit_priv || cfg.system_wide)
		cfg.tier = TK_COLLECT_TIER_PRIV;
	else if (!o->wide && !(classes & (TK_COLLECT_CLASS(_NTO_TRACE_KERCALL) | TK_COLLECT_CLASS(_NTO_TRACE_INT))))
		cfg.tier = TK_COLLECT_TIER_UNPRIV;
	else
		cfg.tier = TK_COLLECT_TIER_AUTO;
	why[0] = '\0';
	rc = tk_collect_open(c, &cfg, why, sizeof(why));
	*recorded = cfg.classes;
	if (rc == TK_EACCES && !explicit_priv && !cfg.system_wide && !o->classes_given) {
		/* the default set asked for system calls and interrupts; without them: */
		char why2[1024];
		cfg.classes = classes & ~(TK_COLLECT_CLASS(_NTO_TRACE_KERCALL) | TK_COLLECT_CLASS(_NTO_TRACE_INT));
		cfg.tier = o->wide ? TK_COLLECT_TIER_AUTO : TK_COLLECT_TIER_UNPRIV;
		why2[0] = '\0';
		rc = tk_collect_open(c, &cfg, why2, sizeof(why2));
		*recorded = cfg.classes;
		if (rc == TK_OK)
			fprintf(stderr, "tracelogger: note: %s; recording without system calls and interrupts\n", why);
		else
			snprintf(why, sizeof(why), "%s", why2);
	} else if (rc == TK_OK && why[0] != '\0') {
		fprintf(stderr, "tracelogger: note: %s\n", why);
	}
	if (rc != TK_OK && o->daemon && cfg.system_wide && !o->all_cpus && !o->classes_given) {
		/* daemon mode for whatever program starts the trace: its own events still come */
		fprintf(stderr, "tracelogger: note: no kernel events: %s; recording the programs' own events only\n",
			why[0] ? why : tk_strerror(rc));
		*c = NULL;
		*recorded = 0;
		return 0;
	}
	if (rc != TK_OK) {
		tktool_error(NULL, "cannot record: %s", why[0] ? why : tk_strerror(rc));
		return 1;
	}
	return 0;
}

static void remove_dir(const char *dir)
{
	if (dir[0] != '\0')
		tktool_private_dir_remove(dir);
}

/* The real uid of a process (from /proc/PID/status), or -1 when it cannot be read. */
static long pid_uid(int pid)
{
	char path[64], line[256];
	long uid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Uid: %ld", &uid) == 1)
			break;
	fclose(f);
	return uid;
}

/* Whether this process passes the kernel's ptrace-access check for another user's task:
 * CAP_SYS_PTRACE (19) or CAP_PERFMON (38) in its effective set. */
static int may_trace_others(void)
{
	char line[256];
	unsigned long long eff = 0;
	int found = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (f == NULL)
		return 1; /* cannot tell: let the kernel answer */
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			found = 1;
			break;
		}
	fclose(f);
	return !found || (eff & (1ULL << 19)) || (eff & (1ULL << 38));
}

static const char *signame(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
}

/* Static: what they point to stays reachable on every way out (the early error returns). */
static struct opts g_o;
static tk_collect_sink *g_K;       /* the kernel's events: what, how much, where */
static tk_session *g_S;            /* removed on every way out (atexit) */
static tk_collect_session *g_CS;   /* its drain */

static void close_session(void)
{
	tk_collect_session_close(g_CS); /* the drain thread ends before the region goes */
	g_CS = NULL;
	if (g_S != NULL)
		tk_session_close(g_S);
	g_S = NULL;
}

/* Where the session of a logger that died is recovered before a new one is made: beside
 * the output ($TMPDIR or /tmp for standard output or a device), never over a file. */
static void recovered_path(char *buf, size_t cap, const char *output, const char *name)
{
	char dir[4096];
	const char *slash = strrchr(output, '/');

	if (tktool_needs_copy(output)) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof(dir), "%s", t != NULL && *t != '\0' ? t : "/tmp");
	} else if (slash == output) {
		snprintf(dir, sizeof(dir), "/");
	} else if (slash != NULL) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - output), output);
	} else {
		snprintf(dir, sizeof(dir), ".");
	}
	snprintf(buf, cap, "%s/tracekit-%s.recovered.kev", dir, name);
	for (int k = 1; access(buf, F_OK) == 0 && k < 10000; k++)
		snprintf(buf, cap, "%s/tracekit-%s.recovered.%d.kev", dir, name, k);
}

/* Turns session `name`, whose logger died, into the .kev `path`. 0, or 1 (said why). */
static int recover_into(const char *name, const char *path)
{
	struct header H;
	tk_collect_recovered res;
	char why[8400];
	int rc;

	build_header(&H, &g_o, NULL, path);
	rc = tk_collect_session_recover(name, path, &H.h, &res, why, sizeof(why));
	if (rc != TK_OK) {
		tktool_error(NULL, "%s", why);
		return 1;
	}
	fprintf(stderr, "tracelogger: session %s: recovered %" PRIu64 " events of %u processes left by a logger "
			"that died (pid %u) into %s\n",
		name, res.events, res.processes, res.logger_pid, strcmp(path, "-") == 0 ? "standard output" : path);
	if (res.dropped > 0)
		fprintf(stderr, "tracelogger: session %s: its programs had lost %" PRIu64 " events (no free buffer); "
				"the file counts them as CONTROL DROPPED events\n", name, res.dropped);
	return 0;
}

/*
 * The implicit default session (no -N, no TRACEKIT_SESSION) cannot be used: another user's
 * region, a damaged one, a link at its name. Any user can make /dev/shm/tracekit.UID.default
 * in advance, so refusing would let them stop every plain tracelogger of that uid; the
 * kernel's events need no session, so, as when /dev/shm is full, a note and a recording
 * without the programs' own events. A session named with -N or TRACEKIT_SESSION is refused.
 */
static int session_unusable_note(const char *why)
{
	char shm[TK_SESSION_NAME_MAX + 32];

	if (tk_session_shm_name(g_o.session, shm, sizeof(shm)) != TK_OK)
		shm[0] = '\0';
	fprintf(stderr, "tracelogger: note: %s; recording without the programs' own events (session %s cannot be "
			"used while /dev/shm%s exists; -N NAME records them in another one)\n",
		why, g_o.session, shm);
	g_S = NULL;
	return 0;
}

/* The session NAME: created (after recovering one a dead logger left), configured from the
 * options (plain mode: every class, fast, or -c/-w/-F; daemon mode: nothing, or -c), and in
 * plain mode started at once. 0, or 1 (said why). */
static int open_session(void)
{
	static const unsigned kclass[] = { _NTO_TRACE_THREAD, _NTO_TRACE_PROCESS, _NTO_TRACE_SYSTEM, _NTO_TRACE_KERCALL,
					   _NTO_TRACE_INT };
	int rc = tk_session_create(&g_S, g_o.session, g_o.session_bufs);

	if (rc == TK_EEXIST) {
		char path[4400];
		tk_session *probe = NULL;
		/* an orphan (its logger died) is recovered first; a region we may not use is refused */
		int prc = tk_session_open(&probe, g_o.session, TK_SESSION_RECOVER);
		if (prc != TK_OK) {
			char shm[TK_SESSION_NAME_MAX + 32];
			if (prc != TK_EBUSY && g_o.session_implicit)
				return session_unusable_note(tk_session_errmsg());
			if (prc == TK_EBUSY || tk_session_shm_name(g_o.session, shm, sizeof(shm)) != TK_OK)
				tktool_error(NULL, "%s", tk_session_errmsg());
			else /* damaged, not a region, another user's: nothing will ever use it */
				tktool_error(NULL, "%s (session %s cannot be used while /dev/shm%s exists; -N NAME "
						   "records into another one)",
					     tk_session_errmsg(), g_o.session, shm);
			return 1;
		}
		tk_session_abandon(probe);
		recovered_path(path, sizeof(path), g_o.output, g_o.session);
		if (recover_into(g_o.session, path) != 0)
			return 1;
		rc = tk_session_create(&g_S, g_o.session, g_o.session_bufs);
	}
	if (rc == TK_EBUSY) {
		tktool_error(NULL, "%s: one logger per session (-N NAME records another one)", tk_session_errmsg());
		return 1;
	}
	if (rc == TK_EACCES || rc == TK_EINVAL || rc == TK_EEXIST) {
		if (g_o.session_implicit)
			return session_unusable_note(tk_session_errmsg());
		tktool_error(NULL, "%s", tk_session_errmsg());
		return 1;
	}
	if (rc != TK_OK) {
		/* no room for the region (a file size limit, /dev/shm full): the kernel's events
		 * are still recorded, the programs' own are not */
		fprintf(stderr, "tracelogger: note: %s; recording without the programs' own events\n",
			tk_session_errmsg());
		g_S = NULL;
		return 0;
	}
	if (!g_o.daemon && !g_o.classes_given) {
		tk_session_set_all_classes(g_S, 1);
	} else if (g_o.classes_given) {
		for (size_t i = 0; i < sizeof(kclass) / sizeof(kclass[0]); i++)
			if (g_o.classes & TK_COLLECT_CLASS(kclass[i]))
				tk_session_set_class(g_S, kclass[i], 1);
		if (g_o.user_events)
			tk_session_set_class(g_S, _NTO_TRACE_USER, 1);
	}
	switch (g_o.filter) {
	case 1: tk_session_set_class(g_S, _NTO_TRACE_KERCALL, 0); break;
	case 2: tk_session_set_class(g_S, _NTO_TRACE_INT, 0); break;
	case 3: tk_session_set_class(g_S, _NTO_TRACE_PROCESS, 0); break;
	case 4: tk_session_set_class(g_S, _NTO_TRACE_THREAD, 0); break;
	default: break;
	}
	if (g_o.wide)
		tk_session_set_all_wide(g_S, 1);
	if (!g_o.daemon)
		tk_session_start(g_S);
	return 0;
}

/* -v: one line per buffer, as the SAT tutorial shows */
static void print_buffer(void *ud, uint64_t buffer, uint64_t reads, uint64_t events, uint64_t lost)
{
	(void)ud;
	fprintf(stderr, "tracelogger: iteration %" PRIu64 ", interrupts %" PRIu64 ", events %" PRIu64 ", lost %" PRIu64
			"\n", buffer, reads, events, lost);
}

/* Daemon mode: waits up to ms for START (a program's, through the session; SIGUSR1 ends
 * the wait early). 1 once started. */
static int wait_start(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	if (g_CS != NULL)
		return tk_collect_session_wait_started(g_CS, 1, ms);
	if (!g_start)
		nanosleep(&ts, NULL);
	return g_start != 0;
}

static void get_stats(tk_collect_session_stats *st)
{
	if (g_CS != NULL)
		tk_collect_session_get_stats(g_CS, st);
	else
		memset(st, 0, sizeof(*st));
}

/* Stops everything started so far on an early error. */
static void undo_start(struct child *ch, int have_child, const char *dir)
{
	if (have_child) {
		kill(ch->pid, SIGKILL);
		child_poll(ch, 1);
	}
	close_session();
	remove_dir(dir);
}

int main(int argc, char **argv)
{
	struct header H;
	struct child ch;
	tk_collect *c = NULL;
	tk_collect_merge *m = NULL;
	tk_collect_session_config scfg;
	tk_collect_session_stats sst;
	char dir[4096] = "";
	char spool[4400] = "";
	const char *write_path;
	int rc, status = 0, via_spool, have_child, n_default, said_stop = 0;
	uint64_t deadline = 0, hdr_bytes;
	uint32_t recorded = 0;

	tktool_init("tracelogger");
	rc = parse_args(&g_o, argc, argv);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	if (g_o.recover)
		return recover_into(g_o.session, g_o.output);
	/* -s names the duration: a default buffer limit would end the recording first, silently */
	n_default = g_o.n_buffers < 0;
	if (n_default)
		g_o.n_buffers = (g_o.cmd != NULL || g_o.ring || g_o.size_ring || g_o.daemon || g_o.seconds_ms > 0) ? 0
															   : 32;
	for (size_t i = 0; i < g_o.n_pids; i++)
		if (kill(g_o.pids[i], 0) != 0 && errno == ESRCH) {
			tktool_error(NULL, "pid %d: no such process", g_o.pids[i]);
			return 1;
		}
	for (size_t i = 0; i < g_o.n_pids; i++) {
		long uid = pid_uid(g_o.pids[i]);
		if (uid >= 0 && (uid_t)uid != geteuid() && !may_trace_others()) {
			tktool_error(NULL, "pid %d belongs to another user (uid %ld): the kernel lets a process "
					   "record only its own user's processes unless it has CAP_SYS_PTRACE "
					   "(run tracelogger as that user, or as root)", g_o.pids[i], uid);
			return 1;
		}
	}
	install_signals(g_o.daemon);
	have_child = g_o.cmd != NULL;

	/* The private directory: the kernel's events when the output cannot be re-read
	 * (standard output, a device, a FIFO). */
	via_spool = tktool_needs_copy(g_o.output);
	if (via_spool) {
		if (tktool_private_dir(dir, sizeof(dir)) != 0) {
			tktool_error(g_o.output, "cannot make a private directory: %s", strerror(errno));
			return 1;
		}
		tktool_cleanup_add_dir(dir);
	}
	/* The session, before the command: it attaches to it when it starts. */
	atexit(close_session);
	if (open_session() != 0) {
		remove_dir(dir);
		return 1;
	}
	if (g_S == NULL && g_o.classes_given && g_o.classes == 0) {
		/* -c USER alone without the session: nothing could be recorded; the command is not run */
		tktool_error(NULL, "cannot record: -c USER records only the programs' own events, and they need "
			     "session %s, which could not be opened (see the note above)", g_o.session);
		remove_dir(dir);
		return 1;
	}
	if (have_child && launch(&ch, g_o.cmd, g_S != NULL ? g_o.session : NULL, g_o.daemon,
				   output_is_stdout(g_o.output)) != 0) {
		tktool_error(NULL, "cannot start %s: %s", g_o.cmd[0], strerror(errno));
		undo_start(&ch, 0, dir);
		return 1;
	}
	rc = open_collect(&c, &g_o, have_child ? ch.pid : 0, &recorded);
	if (rc != 0) {
		undo_start(&ch, have_child, dir);
		return rc;
	}
	if (c == NULL && g_S == NULL) {
		/* no kernel events and no session to drain: the file could only be empty */
		tktool_error(NULL, "cannot record: no kernel events were asked for or permitted, and the programs' "
			     "own events need session %s, which could not be opened (see the note above)", g_o.session);
		undo_start(&ch, have_child, dir);
		return 1;
	}

	/* The programs' own events: drained from the session as they come. */
	if (g_o.user_events && tk_collect_merge_new(&m) != TK_OK) {
		tktool_error(NULL, "out of memory");
		undo_start(&ch, have_child, dir);
		return 1;
	}
	if (via_spool)
		snprintf(spool, sizeof(spool), "%s/kernel.kev", dir);
	write_path = via_spool ? spool : g_o.output;
	build_header(&H, &g_o, c, g_o.output);
	if (m != NULL) {
		/* what is drained is also kept on disk as it comes, for a logger that dies */
		char keep[4500];
		snprintf(keep, sizeof(keep), "%s.programs", write_path);
		if ((rc = tk_collect_merge_spool(m, keep, &H.h)) != TK_OK) {
			tktool_error(keep, "cannot create: %s", tk_strerror(rc));
			tk_collect_merge_free(m);
			tk_collect_close(c);
			undo_start(&ch, have_child, dir);
			return 1;
		}
	}
	memset(&scfg, 0, sizeof(scfg));
	scfg.size = sizeof(scfg);
	scfg.merge = m;
	scfg.thread = 1;
	/* the programs' snapshots of their threads and their TraceEvent() calls: the kernel's
	 * record of them is in the file (without a collector, theirs are all there is) */
	if (c != NULL)
		scfg.skip_classes = 1u << (_TRACE_PR_TH_C >> 10) | 1u << (_TRACE_KER_CALL_C >> 10);
	/* a process found dead gets a PROCDESTROY where PROCESS is written (unless the kernel's
	 * record of its end is in the file already) */
	scfg.no_procdestroy = c != NULL && !(recorded & TK_COLLECT_CLASS(_NTO_TRACE_PROCESS));
	scfg.obey_config = g_o.daemon;
	if (g_S != NULL && (rc = tk_collect_session_open(&g_CS, g_S, &scfg)) != TK_OK) {
		tktool_error(NULL, "session %s: cannot drain it: %s", g_o.session, tk_strerror(rc));
		tk_collect_merge_free(m);
		tk_collect_close(c);
		undo_start(&ch, have_child, dir);
		return 1;
	}

	/* The output: written as events come; the final name appears only when complete. */
	tk_kev_writer *w = NULL;
	rc = tk_kev_writer_open(&w, write_path, &H.h, TK_KEV_NO_AUTO_TIME);
	if (rc != TK_OK) {
		tktool_error(g_o.output, "cannot create: %s", tk_strerror(rc));
		tk_collect_close(c);
		undo_start(&ch, have_child, dir);
		tk_collect_merge_free(m);
		return 1;
	}
	tk_kev_writer_flush(w);
	hdr_bytes = tk_kev_writer_bytes(w);
	/* -S: the file's header alone (its size is known only once written) must leave room for an
	 * event (one slot, and the one the limit keeps free); else the file could hold nothing */
	if (g_o.max_size > 0 && g_o.max_size < hdr_bytes + 2 * sizeof(traceevent_t)) {
		tk_kev_writer_abort(w);
		tk_collect_close(c);
		undo_start(&ch, have_child, dir);
		tk_collect_merge_free(m);
		return tktool_usage_error("-S %" PRIu64 ": smaller than the file's header (%" PRIu64 " bytes) and "
					  "one event; the minimum here is %" PRIu64 " bytes",
					  g_o.max_size, hdr_bytes, (uint64_t)(hdr_bytes + 2 * sizeof(traceevent_t)));
	}

	tk_collect_sink_config kcfg;
	memset(&kcfg, 0, sizeof(kcfg));
	kcfg.size = sizeof(kcfg);
	kcfg.w = w;
	kcfg.classes = recorded;
	kcfg.sub_sel = g_o.classes_given ? g_o.sub_sel : SEL_KERCALL | SEL_INT;
	kcfg.session = g_o.daemon ? g_S : NULL;
	kcfg.max_size = g_o.max_size;
	kcfg.n_buffers = g_o.n_buffers > 0 ? (uint64_t)g_o.n_buffers : 0;
	if (g_o.ring || g_o.size_ring) {
		kcfg.ring_buffers = g_o.ring ? g_o.buffers : (unsigned)(g_o.max_size / (BUF_SLOTS * sizeof(traceevent_t)));
		if (kcfg.ring_buffers == 0)
			kcfg.ring_buffers = 1;
	}
	kcfg.stop = &g_stop;
	kcfg.on_buffer = g_o.verbose ? print_buffer : NULL;
	if (tk_collect_sink_new(&g_K, &kcfg) != TK_OK) {
		tktool_error(NULL, "out of memory");
		tk_kev_writer_abort(w);
		tk_collect_close(c);
		undo_start(&ch, have_child, dir);
		tk_collect_merge_free(m);
		return 1;
	}

	/* Start: recording first, then the command, so nothing it does is missed. */
	if (!g_o.daemon && c != NULL && (rc = tk_collect_enable(c)) != TK_OK) {
		tktool_error(NULL, "cannot start recording: %s", tk_strerror(rc));
		g_stop = 1;
	}
	if (g_o.daemon)
		fprintf(stderr, "tracelogger: daemon mode: waiting for START in session %s (TraceEvent(_NTO_TRACE_START) "
				"in a program, or SIGUSR1 to pid %ld)\n", g_o.session, (long)getpid());
	if (have_child && release(&ch) != 0) {
		if (ch.exec_errno == ENOENT)
			tktool_error(g_o.cmd[0], "command not found");
		else
			tktool_error(g_o.cmd[0], "cannot execute: %s", strerror(ch.exec_errno));
	}
	if (g_o.seconds_ms > 0)
		deadline = now_ms() + g_o.seconds_ms;

	/* Record until a limit, a signal, a STOP (daemon mode) or the end of what is traced. */
	int enabled = !g_o.daemon;
	uint64_t start_ns = tk_clock_ns(), stop_ns = UINT64_MAX;
	tk_collect_sink_stats kst;
	tk_collect_sink_get_stats(g_K, &kst);
	while (!g_stop && kst.write_err == 0) {
		if (!enabled) {
			/* daemon mode: START from a program (the session's futex) or SIGUSR1 */
			if (g_start && g_S != NULL && !tk_session_started(g_S))
				tk_session_start(g_S); /* for every program of the session, as QNX's START */
			if (wait_start(200)) {
				if (c == NULL || tk_collect_enable(c) == TK_OK) {
					enabled = 1;
					start_ns = tk_clock_ns();
					if (g_o.seconds_ms > 0)
						deadline = now_ms() + g_o.seconds_ms;
					get_stats(&sst);
					tk_collect_sink_user_base(g_K, sst.user_slots); /* the buffers count from START */
					if (g_o.verbose)
						fprintf(stderr, "tracelogger: START received\n");
				}
			}
		} else if (c != NULL) {
			tk_collect_sink_new_read(g_K);
			rc = tk_collect_read(c, 50, tk_collect_sink_take, g_K);
			tk_collect_sink_get_stats(g_K, &kst);
			if (rc < 0 && rc != kst.write_err) {
				tktool_error(NULL, "reading the kernel's events: %s", tk_strerror(rc));
				status = 1;
				break;
			}
		} else {
			tk_collect_session_wait_started(g_CS, 0, 50); /* the programs' events only: until STOP */
		}
		get_stats(&sst);
		if (sst.error != 0) {
			tktool_error(NULL, "session %s: draining it: %s", g_o.session, tk_strerror(sst.error));
			status = 1;
			break;
		}
		if (enabled && g_o.user_events)
			tk_collect_sink_count_user(g_K, sst.user_slots);
		if (enabled && g_o.daemon && g_S != NULL && !tk_session_started(g_S) && !g_stop) {
			if (g_o.verbose)
				fprintf(stderr, "tracelogger: STOP received\n");
			g_stop = 1; /* a program stopped the trace */
		}
		if (enabled && deadline && now_ms() >= deadline && !g_stop) {
			tk_collect_sink_set_stop(g_K, STOP_TIME_UP);
			g_stop = 1;
		}
		tk_collect_sink_get_stats(g_K, &kst);
		if (have_child && child_poll(&ch, 0) && !g_stop)
			break;
		if (g_o.n_pids > 0 && !pids_alive(&g_o) && !g_stop)
			break;
	}
	/* Drain what the rings still hold (not after a second signal or a limit that stops taking). */
	if (c != NULL)
		tk_collect_disable(c);
	stop_ns = tk_clock_ns();
	tk_collect_sink_get_stats(g_K, &kst);
	if (c != NULL && !g_abort && kst.write_err == 0 && kst.stop_reason == NULL) {
		for (int k = 0; k < 64; k++) {
			tk_collect_sink_new_read(g_K);
			rc = tk_collect_read(c, 0, tk_collect_sink_take, g_K);
			if (rc <= 0)
				break;
		}
	}
	if (g_o.verbose) {
		tk_collect_stats cst;
		memset(&cst, 0, sizeof(cst));
		if (c != NULL)
			tk_collect_get_stats(c, &cst);
		tk_collect_sink_end(g_K);
		tk_collect_sink_get_stats(g_K, &kst);
		fprintf(stderr, "tracelogger: %" PRIu64 " events, %" PRIu64 " kernel records (%" PRIu64
				" bytes), %" PRIu64 " lost\n",
			kst.events, cst.records, cst.bytes, cst.lost);
	}
	tk_collect_close(c);
	tk_collect_sink_get_stats(g_K, &kst);
	if (kst.stop_reason != NULL && g_o.verbose)
		fprintf(stderr, "tracelogger: stopped: %s\n", kst.stop_reason);
	/* SIGTERM or SIGHUP sent to tracelogger alone is passed on (Ctrl-C, and the hangup of a
	 * closed terminal, reach the command from the terminal itself) */
	if (g_signo != 0 && have_child && (g_signo == SIGTERM || g_signo == SIGHUP) && !child_poll(&ch, 0))
		kill(ch.pid, g_signo);
	if (kst.lost > 0)
		fprintf(stderr, "tracelogger: %" PRIu64 " kernel records were lost (the rings overflowed; more -k "
				"buffers or fewer classes help); the file counts them as CONTROL DROPPED events\n",
			kst.lost);

	/* Ring mode: the newest buffers, now. */
	if (kcfg.ring_buffers > 0 && kst.write_err == 0) {
		if (kst.ring_dropped_buffers > 0 && g_o.verbose)
			fprintf(stderr, "tracelogger: ring mode: %" PRIu64 " older buffers overwritten\n",
				kst.ring_dropped_buffers);
		tk_collect_sink_flush_ring(g_K);
		tk_collect_sink_get_stats(g_K, &kst);
		if (kst.write_err == TK_OK && kst.ring_dropped_buffers > 0)
			start_ns = kst.first_ns;
	}

	/* The command's own events: they are complete when it has ended (its last buffers are
	 * queued at its exit). */
	int merge_user = m != NULL && !g_abort && kst.write_err == 0 && status == 0;
	if (merge_user && have_child && !child_poll(&ch, 0)) {
		if (g_o.verbose || kst.stop_reason != NULL)
			fprintf(stderr, "tracelogger: recording stopped%s%s; waiting for %s (pid %ld) to end\n",
				kst.stop_reason ? ": " : "", kst.stop_reason ? kst.stop_reason : "", g_o.cmd[0], (long)ch.pid);
		said_stop = 1;
		child_poll(&ch, 1);
		if (g_abort)
			merge_user = 0;
	}
	if (g_S != NULL)
		tk_session_stop(g_S);
	/* A size or buffer limit that ended the recording before -s, the command, the -p
	 * processes or a signal: said (with -p and -a it was silent), naming the limit. */
	if (kst.stop_reason != NULL && !said_stop && !g_o.verbose && strcmp(kst.stop_reason, STOP_TIME_UP) != 0) {
		if (g_o.max_size > 0 && strstr(kst.stop_reason, "-S") != NULL)
			fprintf(stderr, "tracelogger: note: recording stopped: the -S limit of %" PRIu64 " bytes is "
					"reached\n", g_o.max_size);
		else if (g_o.n_buffers > 0 && strstr(kst.stop_reason, "-n") != NULL)
			fprintf(stderr, "tracelogger: note: recording stopped: the -n limit of %lld buffers of 1024 "
					"events is full%s; -n 0 records until %s\n", g_o.n_buffers,
				n_default ? " (the default for the whole system and -p)" : "",
				g_o.seconds_ms > 0 ? "the -s time is up" : "stopped");
		else
			fprintf(stderr, "tracelogger: note: recording stopped: %s\n", kst.stop_reason);
	}

	char part[4400];
	snprintf(part, sizeof(part), "%s", tk_kev_writer_temp_path(w));
	int werr = tk_kev_writer_close(w); /* on an error: "<path>.part" kept, nothing under the final name */
	if (kst.write_err != 0 || werr != TK_OK) {
		tktool_error(g_o.output, "cannot write: %s; the events recorded until then are in %s",
			     tk_strerror(kst.write_err != 0 ? kst.write_err : werr), part);
		status = 1;
		merge_user = 0;
	}
	w = NULL;

	if (g_CS == NULL)
		merge_user = 0;
	if (merge_user && (rc = tk_collect_session_finish(g_CS)) != TK_OK) {
		tktool_error(NULL, "session %s: draining it: %s; the file has the kernel's events only", g_o.session,
			     tk_strerror(rc));
		status = 1;
		merge_user = 0;
	}
	get_stats(&sst);
	if (sst.dropped > 0)
		fprintf(stderr, "tracelogger: %" PRIu64 " events of the traced programs were lost: every buffer of "
				"session %s was in use (--session-buffers=%u; more help); the file counts them as "
				"CONTROL DROPPED events\n", sst.dropped, g_o.session, g_o.session_bufs);
	if (g_o.verbose && g_CS != NULL)
		fprintf(stderr, "tracelogger: session %s: %" PRIu64 " events in %" PRIu64 " buffers, %" PRIu64
				" processes ended\n", g_o.session, sst.events, sst.buffers, sst.deaths);
	if (merge_user && tk_collect_merge_count(m) > 0) {
		/* Rewrite the file once, in time order, with the programs' events in it. */
		char why[8400];
		tk_collect_merge_window(m, kst.ring_dropped_buffers > 0 ? start_ns : 0,
					g_o.daemon || kst.stop_reason != NULL ? stop_ns : UINT64_MAX);
		if (g_o.n_buffers > 0 && kcfg.ring_buffers == 0)
			tk_collect_merge_limit(m, (uint64_t)g_o.n_buffers * BUF_SLOTS);
		rc = tk_collect_merge_write(m, write_path, hdr_bytes, write_path, &H.h, why, sizeof(why));
		if (rc != TK_OK) {
			tktool_error(g_o.output, "cannot merge the programs' own events: %s; the file has the "
					       "kernel's events only", why);
			status = 1;
		} else if (g_o.verbose) {
			fprintf(stderr, "tracelogger: merged %zu events of the programs' own traces\n",
				tk_collect_merge_count(m));
		}
	}
	close_session();
	tk_collect_merge_free(m);
	tk_collect_sink_free(g_K);
	free(g_o.pids);

	if (via_spool && status == 0 && tktool_copy_file(spool, g_o.output) != 0) {
		if (strcmp(g_o.output, "-") == 0)
			tktool_error(NULL, "standard output: cannot write: %s", strerror(errno));
		else
			tktool_error(g_o.output, "cannot write: %s", strerror(errno));
		status = 1;
	}
	remove_dir(dir);

	if (g_abort)
		fprintf(stderr, "tracelogger: aborted by a second %s; the file has what was recorded until then\n",
			signame(g_signo));
	if (have_child) {
		if (ch.exec_errno != 0)
			return ch.exec_errno == ENOENT ? 127 : 126;
		if (!g_abort)
			child_poll(&ch, 1);
		if (ch.exited)
			return status != 0 ? status : ch.status;
		return 128 + (g_signo ? g_signo : SIGTERM);
	}
	if (g_signo != 0 && status == 0)
		return 0;
	return status;
}
