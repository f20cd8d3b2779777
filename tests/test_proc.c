#include "common/proc.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/ktime.h"

/* The values a test's flag table writes into. */
struct opts {
    int debug, leader;
    const char *kubeconfig, *addr;
    long workers, port;
    long timeout, resync;
    struct proc_strv trusted, kinds;
};

#define NFLAGS 10

static void table(struct opts *o, struct proc_flag *f)
{
    struct proc_flag t[NFLAGS] = {
        { "debug", PROC_FLAG_BOOL, &o->debug, NULL, "enable debug endpoints" },
        { "leader-elect", PROC_FLAG_BOOL, &o->leader, "true", "use leader election" },
        { "kubeconfig", PROC_FLAG_STRING, &o->kubeconfig, NULL, "path to a kubeconfig" },
        { "bind-address", PROC_FLAG_STRING, &o->addr, ":8443", "listen address" },
        { "workers", PROC_FLAG_INT, &o->workers, "2", "reconcile workers" },
        { "port", PROC_FLAG_INT, &o->port, NULL, "port" },
        { "timeout", PROC_FLAG_DURATION, &o->timeout, "15s", "request timeout" },
        { "resync", PROC_FLAG_DURATION, &o->resync, NULL, "resync period" },
        { "trusted-sa", PROC_FLAG_STRINGS, &o->trusted, "system:serviceaccount:a:b",
          "trusted service account" },
        { "kinds", PROC_FLAG_LIST, &o->kinds, "Service,Lease", "protected kinds" },
    };

    memset(o, 0, sizeof(*o));
    memcpy(f, t, sizeof(t));
}

/* Parse the NULL-terminated argument list (after "prog") with the test table. */
static enum kerr parse(struct opts *o, struct proc_args *a, struct kerr_info *e, ...)
{
    struct proc_flag f[NFLAGS];
    char *argv[32] = { (char *)"prog" };
    int argc = 1;
    va_list ap;

    va_start(ap, e);
    while (argc < 31 && (argv[argc] = va_arg(ap, char *)))
        argc++;
    va_end(ap);
    table(o, f);
    return proc_flags_parse(f, NFLAGS, argc, argv, a, e);
}

static void release(struct opts *o, struct proc_args *a)
{
    proc_strv_release(&o->trusted);
    proc_strv_release(&o->kinds);
    proc_args_release(a);
}

Test(flags, defaults_apply_without_arguments)
{
    struct opts o;
    struct proc_args a;

    cr_assert_eq(parse(&o, &a, NULL, NULL), KERR_OK);
    cr_expect_eq(o.debug, 0);
    cr_expect_eq(o.leader, 1);
    cr_expect_null(o.kubeconfig);
    cr_expect_str_eq(o.addr, ":8443");
    cr_expect_eq(o.workers, 2);
    cr_expect_eq(o.port, 0);
    cr_expect_eq(o.timeout, 15000);
    cr_expect_eq(o.resync, 0);
    cr_assert_eq(o.trusted.n, 1);
    cr_expect_str_eq(o.trusted.v[0], "system:serviceaccount:a:b");
    cr_assert_eq(o.kinds.n, 2);
    cr_expect_str_eq(o.kinds.v[1], "Lease");
    cr_expect_eq(a.verbosity, 0);
    cr_expect_eq(a.help, 0);
    cr_expect_eq(a.npos, 0);
    release(&o, &a);
}

Test(flags, every_type_and_both_value_forms)
{
    struct opts o;
    struct proc_args a;
    struct kerr_info e;

    cr_assert_eq(parse(&o, &a, &e, "--debug", "--leader-elect=false", "--kubeconfig", "/k/config",
                       "--bind-address=0.0.0.0:9443", "--workers", "-3", "--port=8080",
                       "--timeout=2m", "--resync", "1h30m500ms", "--trusted-sa=x,y", "--trusted-sa",
                       "z", "--kinds=StatefulSet, Role,,", "--kinds", "PodDisruptionBudget", "pos1",
                       "--", "--not-a-flag", NULL),
                 KERR_OK, "%s", e.msg);
    cr_expect_eq(o.debug, 1);
    cr_expect_eq(o.leader, 0);
    cr_expect_str_eq(o.kubeconfig, "/k/config");
    cr_expect_str_eq(o.addr, "0.0.0.0:9443");
    cr_expect_eq(o.workers, -3);
    cr_expect_eq(o.port, 8080);
    cr_expect_eq(o.timeout, 120000);
    cr_expect_eq(o.resync, 5400500);
    cr_assert_eq(o.trusted.n, 2, "the first use replaces the default");
    cr_expect_str_eq(o.trusted.v[0], "x,y", "repeatable flags do not split");
    cr_expect_str_eq(o.trusted.v[1], "z");
    cr_expect_null(o.trusted.v[2]);
    cr_assert_eq(o.kinds.n, 3);
    cr_expect_str_eq(o.kinds.v[0], "StatefulSet");
    cr_expect_str_eq(o.kinds.v[1], "Role");
    cr_expect_str_eq(o.kinds.v[2], "PodDisruptionBudget");
    cr_assert_eq(a.npos, 2);
    cr_expect_str_eq(a.pos[0], "pos1");
    cr_expect_str_eq(a.pos[1], "--not-a-flag");
    release(&o, &a);
}

Test(flags, verbosity_and_help)
{
    struct opts o;
    struct proc_args a;

    cr_assert_eq(parse(&o, &a, NULL, "-vv", "-v", NULL), KERR_OK);
    cr_expect_eq(a.verbosity, 3);
    release(&o, &a);
    cr_assert_eq(parse(&o, &a, NULL, "--v=5", NULL), KERR_OK);
    cr_expect_eq(a.verbosity, 5);
    release(&o, &a);
    cr_assert_eq(parse(&o, &a, NULL, "--v", "3", "--help", NULL), KERR_OK);
    cr_expect_eq(a.verbosity, 3);
    cr_expect_eq(a.help, 1);
    release(&o, &a);
    cr_assert_eq(parse(&o, &a, NULL, "-h", NULL), KERR_OK);
    cr_expect_eq(a.help, 1);
    release(&o, &a);
}

static void expect_bad(const char *arg1, const char *arg2, const char *problem)
{
    struct opts o;
    struct proc_args a;
    struct kerr_info e;

    cr_expect_eq(parse(&o, &a, &e, arg1, arg2, NULL), KERR_INVAL, "%s %s", arg1, arg2 ? arg2 : "");
    cr_expect_not_null(strstr(e.msg, problem), "want \"%s\" in: %s", problem, e.msg);
    cr_expect_null(a.pos);
    release(&o, &a);
}

Test(flags, errors_name_the_flag)
{
    expect_bad("--nope=1", NULL, "unknown flag --nope");
    expect_bad("-x", NULL, "unknown flag -x");
    expect_bad("-vx", NULL, "unknown flag -vx");
    expect_bad("--port", NULL, "flag --port needs a value");
    expect_bad("--port=12a", NULL, "invalid value \"12a\" for flag --port: not an integer");
    expect_bad("--workers", "99999999999999999999999", "for flag --workers: not an integer");
    expect_bad("--debug=maybe", NULL, "invalid value \"maybe\" for flag --debug");
    expect_bad("--timeout=15", NULL, "invalid value for flag --timeout: \"15\" is not a duration");
    expect_bad("--timeout", "1x", "flag --timeout");
    expect_bad("--v=eleven", NULL, "flag --v");
    expect_bad("--v=11", NULL, "flag --v");
    expect_bad("--help=1", NULL, "unknown flag --help");
}

Test(flags, bad_default_is_internal)
{
    long n;
    struct proc_flag f[] = { { "n", PROC_FLAG_INT, &n, "ten", "n" } };
    char *argv[] = { (char *)"prog", NULL };
    struct proc_args a;
    struct kerr_info e;

    cr_expect_eq(proc_flags_parse(f, 1, 1, argv, &a, &e), KERR_INTERNAL);
    cr_expect_not_null(strstr(e.msg, "--n"), "%s", e.msg);
}

Test(flags, durations)
{
    static const struct {
        const char *s;
        long ms;
    } ok[] = { { "0", 0 },         { "500ms", 500 },  { "15s", 15000 },
               { "2m", 120000 },   { "1h", 3600000 }, { "1.5s", 1500 },
               { "1m30s", 90000 }, { ".25s", 250 },   { "0s", 0 } };
    static const char *const bad[] = { "",      "15",   "s",
                                       "1d",    "-1s",  "1s ",
                                       "1..5s", "1.s5", "99999999999999999999h" };
    struct kerr_info e;
    size_t i;
    long v;

    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        cr_expect_eq(proc_parse_duration(ok[i].s, &v, &e), KERR_OK, "%s: %s", ok[i].s, e.msg);
        cr_expect_eq(v, ok[i].ms, "%s", ok[i].s);
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_eq(proc_parse_duration(bad[i], &v, NULL), KERR_INVAL, "\"%s\"", bad[i]);
}

Test(flags, help_lists_every_flag_with_its_default)
{
    static const char *const defaults[] = {
        "--debug  ",
        "enable debug endpoints (default false)",
        "use leader election (default true)",
        "--kubeconfig string",
        "path to a kubeconfig (default \"\")",
        "listen address (default \":8443\")",
        "--workers int",
        "reconcile workers (default 2)",
        "port (default 0)",
        "--timeout duration",
        "request timeout (default 15s)",
        "resync period (default 0s)",
        "repeatable (default [system:serviceaccount:a:b])",
        "comma-separated, repeatable (default [Service,Lease])",
        "-v, --v int",
        "-h, --help",
    };
    struct opts o;
    struct proc_flag f[NFLAGS];
    char *help = NULL;
    size_t i;

    table(&o, f);
    cr_assert_eq(
        proc_flags_help("warden-controller", "Reconciles Etcd objects.", f, NFLAGS, &help, NULL),
        KERR_OK);
    cr_expect_not_null(strstr(help, "Usage: warden-controller [flags]\n"), "%s", help);
    cr_expect_not_null(strstr(help, "Reconciles Etcd objects."));
    for (i = 0; i < NFLAGS; i++) {
        char name[64];

        snprintf(name, sizeof(name), "--%s", f[i].name);
        cr_expect_not_null(strstr(help, name), "%s missing in:\n%s", name, help);
        cr_expect_not_null(strstr(help, f[i].help), "%s help missing", name);
    }
    for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
        cr_expect_not_null(strstr(help, defaults[i]), "\"%s\" missing in:\n%s", defaults[i], help);
    free(help);
}

Test(signals, sigterm_requests_shutdown)
{
    cr_assert_eq(proc_signals_install(NULL), KERR_OK);
    cr_expect_eq(proc_shutdown_requested(), 0);
    cr_expect_eq(raise(SIGTERM), 0);
    cr_expect_eq(proc_shutdown_requested(), 1);
    cr_expect_eq(proc_wait_shutdown(-1), 1, "returns at once once requested");
}

Test(signals, sigint_requests_shutdown)
{
    cr_assert_eq(proc_signals_install(NULL), KERR_OK);
    cr_expect_eq(raise(SIGINT), 0);
    cr_expect_eq(proc_shutdown_requested(), 1);
}

Test(signals, sighup_requests_reload_once_and_sigpipe_is_ignored)
{
    cr_assert_eq(proc_signals_install(NULL), KERR_OK);
    cr_expect_eq(proc_take_reload(), 0);
    cr_expect_eq(raise(SIGPIPE), 0); /* would kill the process if not ignored */
    cr_expect_eq(raise(SIGHUP), 0);
    cr_expect_eq(proc_wait_shutdown(5000), 0, "a pending reload wakes the waiter");
    cr_expect_eq(proc_take_reload(), 1);
    cr_expect_eq(proc_take_reload(), 0);
    cr_expect_eq(proc_shutdown_requested(), 0);
}

static void *send_term(void *arg)
{
    struct timespec nap = { 0, 50 * 1000000L };

    (void)arg;
    nanosleep(&nap, NULL);
    kill(getpid(), SIGTERM);
    return NULL;
}

Test(signals, wait_returns_on_signal_and_on_timeout)
{
    struct timespec t0;
    pthread_t th;

    cr_assert_eq(proc_signals_install(NULL), KERR_OK);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_expect_eq(proc_wait_shutdown(120), 0);
    cr_expect_geq(ktime_elapsed_ms(&t0), 120);
    cr_assert_eq(pthread_create(&th, NULL, send_term, NULL), 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_expect_eq(proc_wait_shutdown(60000), 1);
    cr_expect_lt(ktime_elapsed_ms(&t0), 30000, "woke at the timeout, not at the signal");
    pthread_join(th, NULL);
}

Test(signals, request_shutdown_from_the_program)
{
    proc_request_shutdown();
    cr_expect_eq(proc_shutdown_requested(), 1);
    cr_expect_eq(proc_wait_shutdown(0), 1);
}

Test(signals, second_sigterm_exits_at_once)
{
    pid_t pid;
    int status = 0;

    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (proc_signals_install(NULL) != KERR_OK)
            _exit(3);
        raise(SIGTERM);
        if (!proc_shutdown_requested())
            _exit(4);
        raise(SIGTERM);
        _exit(0); /* not reached: the second signal exits with 1 */
    }
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status));
    cr_expect_eq(WEXITSTATUS(status), 1);
}
