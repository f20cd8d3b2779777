/*
 * proc - process basics for the daemons: command-line flags and signals.
 *
 * Flags are long GNU/pflag-style flags described by a table of struct
 * proc_flag: `--name=value`, `--name value`, booleans `--flag` /
 * `--flag=false` (a boolean never takes the next argument as its value),
 * repeatable string-list flags, comma-separated list flags,
 * integers and durations (`15s`, `2m`, `500ms`, `1h30m`, `1.5s`). `-v`,
 * `-vv`, `--v=N` set the verbosity and `-h` / `--help` ask for the help text,
 * which is generated from the table and documents every flag and its
 * default. `--` ends the flags. Errors (unknown flag, bad value, missing
 * value) come back as KERR_INVAL with a message naming the flag; the library
 * never exits: main() prints the message and returns 2.
 *
 * Signals: proc_signals_install() makes SIGTERM / SIGINT request shutdown,
 * SIGHUP request a reload, and ignores SIGPIPE. The handlers only set
 * volatile sig_atomic_t flags; a second SIGTERM / SIGINT while shutting down
 * exits at once with status 1 (_exit), like controller-runtime.
 *
 * Thread safety: flag parsing is for main() before threads start. The
 * signal-flag readers (proc_shutdown_requested, proc_wait_shutdown, ...)
 * may be called from any thread.
 */
#ifndef COMMON_PROC_H
#define COMMON_PROC_H

#include <stddef.h>

#include "common/kerr.h"

enum proc_flag_type {
    PROC_FLAG_BOOL,     /* value: int *; "--x", "--x=true|false|1|0" */
    PROC_FLAG_STRING,   /* value: const char **; BORROWED from argv or def */
    PROC_FLAG_INT,      /* value: long * */
    PROC_FLAG_DURATION, /* value: long * in milliseconds; "15s", "2m", "500ms", "0" */
    PROC_FLAG_STRINGS,  /* value: struct proc_strv *; each occurrence adds one item */
    PROC_FLAG_LIST      /* value: struct proc_strv *; each occurrence adds comma-separated items */
};

/* A list of strings; items are OWNED copies. Release with proc_strv_release. */
struct proc_strv {
    char **v; /* OWNS; v[n] == NULL when n > 0 */
    size_t n;
};

/* One flag. Tables are usually static const arrays in main.c. */
struct proc_flag {
    const char *name; /* BORROWED: long name without dashes ("kubeconfig") */
    enum proc_flag_type type;
    void *value;      /* BORROWED: where the value goes, typed as above */
    const char *def;  /* BORROWED: default as text (NULL = false / 0 / empty), shown by --help */
    const char *help; /* BORROWED: one-line description */
};

/* What the parser found besides the flags. */
struct proc_args {
    int verbosity;    /* -v count, or --v=N */
    int help;         /* -h / --help was given */
    const char **pos; /* OWNS the array (items BORROWED from argv): positional arguments */
    size_t npos;
};

/* Free the items of a list and empty it. Safe to call twice. */
void proc_strv_release(struct proc_strv *l);

/*
 * Apply every default, then parse argv[1..argc). Values are written through
 * the table's pointers (list values are released and rebuilt; the first use
 * of a list flag on the command line replaces its default). On KERR_OK
 * *args OWNS its pos array (proc_args_release). KERR_INVAL: the message
 * names the flag and the problem; KERR_INTERNAL: a bad table or default.
 */
enum kerr proc_flags_parse(const struct proc_flag *flags, size_t n, int argc, char **argv,
                           struct proc_args *args, struct kerr_info *err);

void proc_args_release(struct proc_args *args);

/* Release every list value of the table. */
void proc_flags_release(const struct proc_flag *flags, size_t n);

/*
 * The --help text: usage line, summary, then one line per flag with its type,
 * help and default, plus -v/--v and -h/--help. *out TAKES a malloc'd string.
 */
enum kerr proc_flags_help(const char *prog, const char *summary, const struct proc_flag *flags,
                          size_t n, char **out, struct kerr_info *err);

/* Parse a duration ("1h2m3s", "500ms", "1.5s", "0") into milliseconds. */
enum kerr proc_parse_duration(const char *s, long *ms, struct kerr_info *err);

/* Install the handlers (sigaction). KERR_INTERNAL if sigaction fails. */
enum kerr proc_signals_install(struct kerr_info *err);

/* True once SIGTERM / SIGINT arrived or proc_request_shutdown was called. */
int proc_shutdown_requested(void);

/* Ask for shutdown from the program (e.g. a fatal error in a worker). */
void proc_request_shutdown(void);

/* True once if SIGHUP arrived since the last call (the flag is cleared). */
int proc_take_reload(void);

/*
 * Sleep until shutdown is requested, a reload is pending or timeout_ms
 * passed (timeout_ms < 0: no limit). Returns 1 when shutdown is requested,
 * else 0. Wakes within about 10 ms of a signal.
 */
int proc_wait_shutdown(long timeout_ms);

#endif
