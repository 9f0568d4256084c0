/* SPDX-License-Identifier: MIT */
/*
 * tool_cli.h: what every tracekit command-line tool shares, so that they behave alike:
 * usage errors and --version, messages in one style ("tool: file: what"), "-" for standard
 * input and output, outputs opened and committed through tk_outfile with the same-file
 * check, SIGINT/SIGTERM/SIGHUP handling that leaves no temporary behind, the progress line, and a
 * bounded copy of a standard input that must be seekable. Part of the static tools library
 * (tools/lib/); only the tools and the fuzz targets link it.
 */
#ifndef TRACEKIT_TOOLS_TOOL_CLI_H
#define TRACEKIT_TOOLS_TOOL_CLI_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "tracekit/common.h"

/* ---- names and messages ---- */

/*
 * Sets the name every message starts with (call first in main). Also ignores SIGXFSZ, so
 * that a write past a file size limit fails with EFBIG and is reported like any other.
 */
void tktool_init(const char *name);
/* In a child about to exec another program: gives SIGXFSZ back the disposition it had. */
void tktool_exec_prepare(void);
/* The name given to tktool_init. */
const char *tktool_name(void);

/*
 * Prints "tool: MESSAGE" and "Try 'tool --help' for more information." to stderr.
 * Returns 2, the exit status of a usage error.
 */
int tktool_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "tool (tracekit) VERSION" (then ", extra" if extra is not NULL). Returns 0. */
int tktool_version(const char *extra);

/*
 * Prints "tool: FILE: MESSAGE" to stderr ("tool: MESSAGE" when file is NULL). file is a
 * path as given; "-" prints as "standard input" (use tktool_out_name for an output).
 */
void tktool_error(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A positive number of seconds (a --live-timeout value, "0.5" say, at most 4000000) as
 * milliseconds, at least 1. Returns 0, or -1 for anything else.
 */
int tktool_parse_seconds(const char *arg, unsigned *ms);

/* How a path reads in messages: "-" is "standard input" / "standard output". */
const char *tktool_in_name(const char *path);
const char *tktool_out_name(const char *path);

/* ---- interruption ---- */

/* Set by the SIGINT/SIGTERM/SIGHUP handler; tools (and the bfbin converters) poll it. */
extern volatile sig_atomic_t tktool_stop;

enum tktool_signal_mode {
	/*
	 * The tool stops by itself when tktool_stop is set (the handler does not restart
	 * interrupted reads, so a blocked read returns). A second signal ends the process
	 * as the exit mode does.
	 */
	TKTOOL_SIGNAL_STOP,
	/* The handler removes the registered temporaries and the process dies of the signal. */
	TKTOOL_SIGNAL_EXIT,
};

/*
 * Installs the SIGINT, SIGTERM and SIGHUP handler (and SIGPIPE's in the exit mode). A
 * closed terminal (SIGHUP) is a stop like Ctrl-C, not a death that leaves .part files; a
 * SIGHUP ignored when the tool started (nohup) stays ignored.
 */
void tktool_catch_signals(enum tktool_signal_mode mode);
/* Whether sig is ignored (SIG_IGN) now: what the tool was started with, before it catches it. */
int tktool_signal_ignored(int sig);

/*
 * Registers a file for the handler to remove (a temporary output, a spool). Returns a
 * slot for tktool_cleanup_forget, or -1 when the path is too long or all slots are taken.
 */
int tktool_cleanup_add(const char *path);
/* The same for a private directory: the handler removes everything in it, then it. */
int tktool_cleanup_add_dir(const char *dir);
/* Forgets a registered file (it was renamed or removed). slot -1 is accepted. */
void tktool_cleanup_forget(int slot);
/*
 * A library's temporaries callback (tk_bfbin_convert.temp_cb): registers dir (a private
 * directory) and file (may be NULL) for the handler to remove; (NULL, NULL) forgets
 * them. One pair at a time; user_data is not used.
 */
void tktool_temp_cb(void *user_data, const char *dir, const char *file);

/* ---- outputs ---- */

/*
 * Whether writing output would destroy input (tk_same_file: the same file, however it is
 * named). When it would, prints "tool: OUTPUT: is the input file: writing it would destroy
 * the input" and returns 1; else returns 0.
 */
int tktool_refuse_same_file(const char *input, const char *output);

/*
 * An output opened through tk_outfile ("-" is standard output). Its temporary is removed
 * if a signal ends the process (with TKTOOL_SIGNAL_EXIT).
 */
struct tktool_output {
	tk_outfile *of;
	const char *path;
	int cleanup_slot;
};

/*
 * Opens path for writing. On failure prints "tool: PATH: cannot create: REASON" and
 * returns 1; 0 on success.
 */
int tktool_output_open(struct tktool_output *out, const char *path, unsigned flags);
/* The same without a message: returns 0 or the TK_E* code of tk_outfile_open. */
int tktool_output_create(struct tktool_output *out, const char *path, unsigned flags);
FILE *tktool_output_stream(const struct tktool_output *out);
/* tk_outfile_commit without a message: returns 0 or its TK_E* code. */
int tktool_output_finish(struct tktool_output *out);
/*
 * Flushes, checks and commits the output. On failure prints "tool: PATH: cannot write:
 * REASON", leaves nothing under the final name and returns 1; 0 on success.
 */
int tktool_output_commit(struct tktool_output *out);
/* Discards the output (nothing left under its name). Accepts an output never opened. */
void tktool_output_abort(struct tktool_output *out);

/*
 * Copies a finished temporary file to standard output (for outputs that must be seekable
 * while written: .tb5, HDF5, SQLite). Returns 0, or -1 with errno set.
 */
int tktool_copy_to_stdout(const char *path);
/*
 * The same to any output path through tk_outfile: a device or FIFO is written in place,
 * a regular file replaced whole. Returns 0, or -1 with errno set (nothing left under dest
 * when it is a regular file).
 */
int tktool_copy_file(const char *path, const char *dest);
/*
 * Whether an output that a library writes by name must be built elsewhere and copied:
 * "-", or an existing device or FIFO (a library would replace the node with a file).
 */
int tktool_needs_copy(const char *path);

/*
 * A private directory for temporaries (mode 0700, under $TMPDIR or /tmp): nothing
 * another user made can be found in it. dir receives its path (size at least 4096).
 * Returns 0, or -1 with errno set. tktool_private_dir_remove removes the directory and
 * everything in it (one level).
 */
int tktool_private_dir(char *dir, size_t size);
/*
 * tktool_private_dir(), registered for removal by the signal handler (*slot, for
 * tktool_cleanup_forget) with the signals blocked in between, so that no signal finds it
 * made but unregistered. Returns 0, or -1 with errno set (*slot -1).
 */
int tktool_private_dir_registered(char *dir, size_t size, int *slot);
void tktool_private_dir_remove(const char *dir);
/*
 * Standard output for a library that writes its output by name with seeks (SQLite, HDF5):
 * tktool_stdout_stage_begin() makes a private directory (removed on SIGINT/SIGTERM/SIGHUP too) and
 * sets s->path to LEAF inside it; tktool_stdout_stage_end() copies that file to standard
 * output when copy is set, then removes the directory. begin returns 0, or -1 with errno
 * set (nothing left); end returns 0, or -1 with errno set when the copy failed.
 */
struct tktool_stdout_stage {
	char dir[4096];
	char path[4200];
	int slot;
};
int tktool_stdout_stage_begin(struct tktool_stdout_stage *s, const char *leaf);
int tktool_stdout_stage_end(struct tktool_stdout_stage *s, int copy);
/*
 * The same beside path ("<path's directory>/.tool.XXXXXX"), on path's file system, for an
 * output a library writes by name: built there, it is moved to path by one rename.
 */
int tktool_private_dir_beside(const char *path, char *dir, size_t size);
/*
 * Moves a finished file from a private directory to its final name with one rename,
 * after giving it the mode of the regular file it replaces (a symlink there is replaced,
 * not followed). Returns 0, or -1 with errno set.
 */
int tktool_install(const char *built, const char *final);

/* ---- standard input that must be a file ---- */

/*
 * Readers that need a seekable file (the .tb5 library maps its input) take "-" this way:
 * standard input that is a regular file is used as it is (path "/dev/stdin"); a pipe is
 * copied into a private temporary, at most TKTOOL_SPOOL_MAX bytes, and the copy stops at
 * once when the first bytes are not magic (magic_len bytes; 0: no check) so that endless
 * junk (/dev/zero) is not copied. The temporary is removed by tktool_stdin_file_close, by
 * the signal handler, and may be unlinked early with tktool_stdin_file_unlink once opened.
 */
#define TKTOOL_SPOOL_MAX ((uint64_t)16 << 30)

struct tktool_stdin_file {
	char path[4200]; /* the file to open */
	char dir[4096];  /* the private directory of the copy, "" if none */
	int cleanup_slot;
};

/* Returns 0, or prints "tool: standard input: REASON" and returns 1. */
int tktool_stdin_file(struct tktool_stdin_file *f, const void *magic, size_t magic_len);
/*
 * The same for any descriptor open for reading (a named pipe given by name, "<(cmd)"):
 * messages name it name; head_len bytes at head (already read from it) come first. The
 * caller keeps and closes fd_in.
 */
int tktool_fd_file(struct tktool_stdin_file *f, int fd_in, const char *name, const void *magic, size_t magic_len,
		   const void *head, size_t head_len);
/* Removes the copy now (an open file stays readable). */
void tktool_stdin_file_unlink(struct tktool_stdin_file *f);
void tktool_stdin_file_close(struct tktool_stdin_file *f);

/* ---- progress ---- */

/*
 * A progress line on standard error for long work: shown only when standard error is a
 * terminal, the work is at least TKTOOL_PROGRESS_MIN bytes, and --quiet was not given
 * (tktool_quiet). Updated at most 4 times a second; erased at the end.
 */
#define TKTOOL_PROGRESS_MIN ((uint64_t)100 << 20)

extern int tktool_quiet;

struct tktool_progress {
	const char *what; /* "reading FILE", say */
	uint64_t total;   /* bytes, 0 when unknown */
	uint64_t next_ns; /* earliest time of the next update */
	int shown, active, begun;
};

void tktool_progress_begin(struct tktool_progress *p, const char *what, uint64_t total);
void tktool_progress_update(struct tktool_progress *p, uint64_t done);
void tktool_progress_end(struct tktool_progress *p);
/*
 * A progress callback for the libraries that report bytes consumed (the bfbin converters'
 * progress_cb): user_data is a struct tktool_progress, zeroed before the work; the first
 * call begins it with the library's total ("converting").
 */
void tktool_progress_bytes(void *user_data, uint64_t done, uint64_t total);

/* ---- standard output that must not show a partial document ---- */

/*
 * A private unnamed temporary in tk_tmpdir() (tk_tmpfile()) standing in for standard output, so that
 * a document is shown only complete: tktool_stdout_deliver copies it to standard output
 * and closes it. Returns NULL (errno set) on failure: name tk_tmpdir() in the message.
 */
FILE *tktool_stdout_buffer(void);
/* Copies the buffer to standard output and closes it. Returns 0, or -1 with errno set. */
int tktool_stdout_deliver(FILE *buffer);
/*
 * For work done inside a library call that reports nothing (tb5_recover's salvage): a
 * thread shows the progress line from the bytes of the files in dir (a private directory
 * the output grows in), 4 times a second, against total. Nothing starts when the line
 * would not be shown. tktool_progress_watch_end stops it and erases the line.
 */
void tktool_progress_watch_dir(const char *dir, const char *what, uint64_t total);
void tktool_progress_watch_end(void);
/* Size of a path's regular file, 0 for "-", a pipe or an error (for the progress total). */
uint64_t tktool_file_size(const char *path);

#endif /* TRACEKIT_TOOLS_TOOL_CLI_H */
