#include "common/proc.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/ktime.h"

#define HELP_MAX      (256u * 1024u)
#define HELP_COL_MAX  34
#define VERBOSITY_MAX 10

/* The only writable globals: set by the signal handlers (and proc_request_shutdown). */
static volatile sig_atomic_t shutdown_flag;
static volatile sig_atomic_t reload_flag;
static volatile sig_atomic_t term_signals;

void proc_strv_release(struct proc_strv *l)
{
    size_t i;

    if (!l)
        return;
    for (i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static enum kerr strv_add(struct proc_strv *l, const char *s, size_t len, struct kerr_info *err)
{
    char **nv, *copy;

    copy = strndup(s, len);
    nv = copy ? realloc(l->v, (l->n + 2) * sizeof(*nv)) : NULL;
    if (!nv) {
        free(copy);
        return kerr_set(err, KERR_NOMEM, "flags: out of memory");
    }
    l->v = nv;
    l->v[l->n++] = copy;
    l->v[l->n] = NULL;
    return KERR_OK;
}

/* Add the comma-separated items of s (spaces around items dropped, empty items skipped). */
static enum kerr strv_add_csv(struct proc_strv *l, const char *s, struct kerr_info *err)
{
    const char *p = s, *end;
    size_t n;
    enum kerr rc;

    while (*p) {
        end = strchr(p, ',');
        n = end ? (size_t)(end - p) : strlen(p);
        while (n > 0 && *p == ' ')
            p++, n--;
        while (n > 0 && p[n - 1] == ' ')
            n--;
        if (n > 0) {
            rc = strv_add(l, p, n, err);
            if (rc != KERR_OK)
                return rc;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return KERR_OK;
}

static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = { "true", "True", "TRUE", "t", "T", "1" };
    static const char *const no[] = { "false", "False", "FALSE", "f", "F", "0" };
    size_t i;

    for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(s, yes[i]) == 0) {
            *out = 1;
            return 0;
        }
        if (strcmp(s, no[i]) == 0) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

/* Milliseconds per unit at *p (advanced past it), or 0 when no unit is there. */
static long long unit_ms(const char **p)
{
    static const struct {
        const char *name;
        long long ms;
    } units[] = { { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 } };
    size_t i, n;

    for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        n = strlen(units[i].name);
        if (strncmp(*p, units[i].name, n) == 0) {
            *p += n;
            return units[i].ms;
        }
    }
    return 0;
}

/* One "<digits>[.<digits>]<unit>" term, in ms. */
static int duration_term(const char **p, long long *ms)
{
    long long whole = 0, frac = 0, scale = 1, unit;
    int digits = 0;

    for (; **p >= '0' && **p <= '9'; (*p)++, digits++) {
        if (whole > (LLONG_MAX - 9) / 10)
            return -1;
        whole = whole * 10 + (**p - '0');
    }
    if (**p == '.') {
        for ((*p)++; **p >= '0' && **p <= '9'; (*p)++, digits++) {
            if (scale < 1000000000LL) {
                frac = frac * 10 + (**p - '0');
                scale *= 10;
            }
        }
    }
    unit = digits ? unit_ms(p) : 0;
    if (!unit || whole > LLONG_MAX / unit)
        return -1;
    *ms = whole * unit + frac * unit / scale;
    return 0;
}

enum kerr proc_parse_duration(const char *s, long *ms, struct kerr_info *err)
{
    const char *p = s;
    long long total = 0, term;

    *ms = 0;
    if (!s || !*s)
        return kerr_set(err, KERR_INVAL, "empty duration");
    if (strcmp(s, "0") == 0)
        return KERR_OK;
    while (*p) {
        if (duration_term(&p, &term) != 0 || term > LONG_MAX - total)
            return kerr_set(err, KERR_INVAL,
                            "\"%.64s\" is not a duration (like 500ms, 15s, 2m, 1h30m)", s);
        total += term;
    }
    *ms = (long)total;
    return KERR_OK;
}

/* Store text as the value of f. first: the first command-line use of the flag. */
static enum kerr set_value(const struct proc_flag *f, const char *text, int first,
                           struct kerr_info *err)
{
    struct kerr_info e;

    switch (f->type) {
    case PROC_FLAG_BOOL:
        if (parse_bool(text, f->value) != 0)
            return kerr_set(err, KERR_INVAL,
                            "invalid value \"%.64s\" for flag --%s: not true or false", text,
                            f->name);
        return KERR_OK;
    case PROC_FLAG_STRING:
        *(const char **)f->value = text;
        return KERR_OK;
    case PROC_FLAG_INT:
        if (parse_long(text, f->value) != 0)
            return kerr_set(err, KERR_INVAL,
                            "invalid value \"%.64s\" for flag --%s: not an integer", text, f->name);
        return KERR_OK;
    case PROC_FLAG_DURATION:
        if (proc_parse_duration(text, f->value, &e) != KERR_OK)
            return kerr_set(err, KERR_INVAL, "invalid value for flag --%s: %s", f->name, e.msg);
        return KERR_OK;
    case PROC_FLAG_STRINGS:
    case PROC_FLAG_LIST:
        if (first)
            proc_strv_release(f->value);
        if (f->type == PROC_FLAG_STRINGS)
            return strv_add(f->value, text, strlen(text), err);
        return strv_add_csv(f->value, text, err);
    }
    return kerr_set(err, KERR_INTERNAL, "flag --%s: unknown type", f->name);
}

static enum kerr apply_default(const struct proc_flag *f, struct kerr_info *err)
{
    switch (f->type) {
    case PROC_FLAG_STRING:
        *(const char **)f->value = f->def;
        return KERR_OK;
    case PROC_FLAG_STRINGS:
    case PROC_FLAG_LIST:
        proc_strv_release(f->value);
        return f->def ? strv_add_csv(f->value, f->def, err) : KERR_OK;
    case PROC_FLAG_BOOL:
        return set_value(f, f->def ? f->def : "false", 0, err);
    default:
        return set_value(f, f->def ? f->def : "0", 0, err);
    }
}

static enum kerr apply_defaults(const struct proc_flag *flags, size_t n, struct kerr_info *err)
{
    struct kerr_info e;
    size_t i;

    for (i = 0; i < n; i++) {
        if (!flags[i].name || !flags[i].name[0] || !flags[i].value)
            return kerr_set(err, KERR_INTERNAL, "flag table entry %zu has no name or value", i);
        if (apply_default(&flags[i], &e) != KERR_OK)
            return kerr_set(err, e.code == KERR_NOMEM ? KERR_NOMEM : KERR_INTERNAL,
                            "bad default: %s", e.msg);
    }
    return KERR_OK;
}

static const struct proc_flag *find_flag(const struct proc_flag *flags, size_t n, const char *name,
                                         size_t len)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
            return &flags[i];
    }
    return NULL;
}

/* -v, -vv, ... and -h. */
static enum kerr parse_short(const char *a, struct proc_args *args, struct kerr_info *err)
{
    size_t n = strspn(a + 1, "v");

    if (strcmp(a, "-h") == 0) {
        args->help = 1;
        return KERR_OK;
    }
    if (n > 0 && a[1 + n] == '\0') {
        args->verbosity += (int)n;
        return KERR_OK;
    }
    return kerr_set(err, KERR_INVAL, "unknown flag %.64s (flags are --name or --name=value)", a);
}

static enum kerr set_verbosity(const char *text, struct proc_args *args, struct kerr_info *err)
{
    long v;

    if (parse_long(text, &v) != 0 || v < 0 || v > VERBOSITY_MAX)
        return kerr_set(err, KERR_INVAL, "invalid value \"%.64s\" for flag --v: not 0..%d", text,
                        VERBOSITY_MAX);
    args->verbosity = (int)v;
    return KERR_OK;
}

static enum kerr add_pos(struct proc_args *args, const char *a, struct kerr_info *err)
{
    const char **np = realloc(args->pos, (args->npos + 1) * sizeof(*np));

    if (!np)
        return kerr_set(err, KERR_NOMEM, "flags: out of memory");
    args->pos = np;
    args->pos[args->npos++] = a;
    return KERR_OK;
}

/* One "--name[=value]" argument at argv[*i]; may consume argv[*i + 1]. */
static enum kerr parse_long_flag(const struct proc_flag *flags, size_t n, int argc, char **argv,
                                 int *i, unsigned char *used, struct proc_args *args,
                                 struct kerr_info *err)
{
    const char *name = argv[*i] + 2, *eq = strchr(name, '='), *val = eq ? eq + 1 : NULL;
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const struct proc_flag *f = find_flag(flags, n, name, len);
    int first;

    if (!f && len == 4 && strncmp(name, "help", 4) == 0 && !val) {
        args->help = 1;
        return KERR_OK;
    }
    if (!f && !(len == 1 && name[0] == 'v'))
        return kerr_set(err, KERR_INVAL, "unknown flag --%.*s", (int)(len > 64 ? 64 : len), name);
    if (f && f->type == PROC_FLAG_BOOL && !val)
        return set_value(f, "true", 0, err);
    if (!val) {
        if (*i + 1 >= argc)
            return kerr_set(err, KERR_INVAL, "flag --%.*s needs a value", (int)len, name);
        val = argv[++*i];
    }
    if (!f)
        return set_verbosity(val, args, err);
    first = !used[f - flags];
    used[f - flags] = 1;
    return set_value(f, val, first, err);
}

enum kerr proc_flags_parse(const struct proc_flag *flags, size_t n, int argc, char **argv,
                           struct proc_args *args, struct kerr_info *err)
{
    unsigned char *used = NULL;
    enum kerr rc;
    int i, only_pos = 0;

    memset(args, 0, sizeof(*args));
    rc = apply_defaults(flags, n, err);
    if (rc != KERR_OK)
        return rc;
    used = calloc(n ? n : 1, 1);
    if (!used)
        return kerr_set(err, KERR_NOMEM, "flags: out of memory");
    for (i = 1; i < argc && rc == KERR_OK; i++) {
        const char *a = argv[i];

        if (only_pos || a[0] != '-' || a[1] == '\0')
            rc = add_pos(args, a, err);
        else if (strcmp(a, "--") == 0)
            only_pos = 1;
        else if (a[1] != '-')
            rc = parse_short(a, args, err);
        else
            rc = parse_long_flag(flags, n, argc, argv, &i, used, args, err);
    }
    free(used);
    if (rc != KERR_OK)
        proc_args_release(args);
    return rc;
}

void proc_args_release(struct proc_args *args)
{
    if (!args)
        return;
    free(args->pos);
    memset(args, 0, sizeof(*args));
}

void proc_flags_release(const struct proc_flag *flags, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (flags[i].type == PROC_FLAG_STRINGS || flags[i].type == PROC_FLAG_LIST)
            proc_strv_release(flags[i].value);
    }
}

static const char *type_name(enum proc_flag_type t)
{
    switch (t) {
    case PROC_FLAG_BOOL:
        return "";
    case PROC_FLAG_STRING:
        return " string";
    case PROC_FLAG_INT:
        return " int";
    case PROC_FLAG_DURATION:
        return " duration";
    case PROC_FLAG_STRINGS:
        return " string";
    case PROC_FLAG_LIST:
        return " strings";
    }
    return "";
}

static enum kerr help_default(struct buf *b, const struct proc_flag *f)
{
    const char *d = f->def;

    switch (f->type) {
    case PROC_FLAG_BOOL:
        return buf_appendf(b, " (default %s)", d ? d : "false");
    case PROC_FLAG_STRING:
        return buf_appendf(b, " (default \"%s\")", d ? d : "");
    case PROC_FLAG_INT:
        return buf_appendf(b, " (default %s)", d ? d : "0");
    case PROC_FLAG_DURATION:
        return buf_appendf(b, " (default %s)", d ? d : "0s");
    case PROC_FLAG_STRINGS:
        return buf_appendf(b, "; repeatable (default [%s])", d ? d : "");
    case PROC_FLAG_LIST:
        return buf_appendf(b, "; comma-separated, repeatable (default [%s])", d ? d : "");
    }
    return KERR_OK;
}

static enum kerr help_line(struct buf *b, const char *shortf, const char *name, const char *type,
                           const char *help, int col)
{
    int w = (int)(strlen(shortf) + 2 + strlen(name) + strlen(type));
    enum kerr rc;

    rc = buf_appendf(b, "  %s--%s%s", shortf, name, type);
    if (rc == KERR_OK && w > col)
        rc = buf_appendf(b, "\n  %*s", col, "");
    else if (rc == KERR_OK)
        rc = buf_appendf(b, "%*s", col - w, "");
    if (rc == KERR_OK)
        rc = buf_appendf(b, "  %s", help ? help : "");
    return rc;
}

enum kerr proc_flags_help(const char *prog, const char *summary, const struct proc_flag *flags,
                          size_t n, char **out, struct kerr_info *err)
{
    struct buf b;
    enum kerr rc;
    size_t i;
    int col = 16, w;

    *out = NULL;
    for (i = 0; i < n; i++) {
        w = (int)(6 + strlen(flags[i].name) + strlen(type_name(flags[i].type)));
        col = w > col && w <= HELP_COL_MAX ? w : col;
    }
    buf_init(&b, HELP_MAX);
    rc = buf_appendf(&b, "Usage: %s [flags]\n\n%s%sFlags:\n", prog ? prog : "",
                     summary ? summary : "", summary ? "\n\n" : "");
    for (i = 0; i < n && rc == KERR_OK; i++) {
        rc = help_line(&b, "    ", flags[i].name, type_name(flags[i].type), flags[i].help, col);
        if (rc == KERR_OK)
            rc = help_default(&b, &flags[i]);
        if (rc == KERR_OK)
            rc = buf_appends(&b, "\n");
    }
    if (rc == KERR_OK)
        rc = help_line(&b, "-v, ", "v", " int", "log verbosity: -v debug, -vv trace (default 0)\n",
                       col);
    if (rc == KERR_OK)
        rc = help_line(&b, "-h, ", "help", "", "show this help and exit\n", col);
    if (rc == KERR_OK)
        *out = buf_detach(&b, NULL);
    buf_release(&b);
    if (rc == KERR_OK && !*out)
        rc = KERR_NOMEM;
    if (rc != KERR_OK)
        return kerr_set(err, rc, "flags: cannot build the help text");
    return KERR_OK;
}

static void on_term(int sig)
{
    (void)sig;
    if (term_signals)
        _exit(1);
    term_signals = 1;
    shutdown_flag = 1;
}

static void on_hup(int sig)
{
    (void)sig;
    reload_flag = 1;
}

static int set_handler(int sig, void (*fn)(int))
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = fn == SIG_IGN ? 0 : SA_RESTART;
    return sigaction(sig, &sa, NULL);
}

enum kerr proc_signals_install(struct kerr_info *err)
{
    if (set_handler(SIGTERM, on_term) != 0 || set_handler(SIGINT, on_term) != 0 ||
        set_handler(SIGHUP, on_hup) != 0 || set_handler(SIGPIPE, SIG_IGN) != 0)
        return kerr_set(err, KERR_INTERNAL, "cannot install signal handlers");
    return KERR_OK;
}

int proc_shutdown_requested(void)
{
    return shutdown_flag != 0;
}

void proc_request_shutdown(void)
{
    shutdown_flag = 1;
}

int proc_take_reload(void)
{
    if (!reload_flag)
        return 0;
    reload_flag = 0;
    return 1;
}

/* A ktime_sleep_cancellable check: a shutdown or reload request ends the wait. */
static int flagged(void *arg)
{
    (void)arg;
    return shutdown_flag || reload_flag;
}

int proc_wait_shutdown(long timeout_ms)
{
    ktime_sleep_cancellable(timeout_ms, 10, flagged, NULL);
    return shutdown_flag != 0;
}
