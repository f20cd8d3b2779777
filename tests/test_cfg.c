#include "common/cfg.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/ktime.h"
#include "common/log.h"
#include "tests/support/testutil.h"

#define CA_PEM "-----BEGIN CERTIFICATE-----\nQ0FDRVJU\n-----END CERTIFICATE-----\n"

static void sa_dir(struct testutil_dir *d, const char *ns)
{
    testutil_dir_make(d, "cfg-test");
    testutil_dir_write(d, "token", "sa-token-1\n");
    testutil_dir_write(d, "ca.crt", CA_PEM);
    if (ns)
        testutil_dir_write(d, "namespace", ns);
}

static void clear_env(void)
{
    unsetenv("KUBECONFIG");
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("WARDEN_SA_DIR");
    unsetenv("POD_NAMESPACE");
}

TestSuite(incluster, .init = clear_env);
TestSuite(cfg_default, .init = clear_env);

Test(incluster, reads_service_env_and_sa_dir)
{
    struct testutil_dir d;
    struct cfg_rest r;
    struct kerr_info e;
    char want[160];

    sa_dir(&d, "kube-system\n");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    cr_assert_eq(cfg_load_incluster(d.path, &r, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "https://10.96.0.1:443");
    snprintf(want, sizeof(want), "%s/token", d.path);
    cr_expect_str_eq(r.token_file, want);
    cr_expect_null(r.token, "the token is re-read from the file, not copied");
    cr_expect_str_eq(r.ca_pem, CA_PEM);
    cr_expect_eq(r.ca_len, strlen(CA_PEM));
    cr_expect_str_eq(r.namespace, "kube-system");
    cr_expect_str_eq(r.source, "in-cluster");
    cfg_rest_release(&r);
    testutil_dir_remove(&d);
}

Test(incluster, ipv6_host_is_bracketed)
{
    struct testutil_dir d;
    struct cfg_rest r;
    struct kerr_info e;

    sa_dir(&d, NULL);
    setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
    cr_assert_eq(cfg_load_incluster(d.path, &r, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "https://[fd00:10:96::1]:6443");
    cr_expect_str_eq(r.namespace, "default", "no namespace file");
    cfg_rest_release(&r);
    testutil_dir_remove(&d);
}

Test(incluster, pod_namespace_env_wins)
{
    struct testutil_dir d;
    struct cfg_rest r;

    sa_dir(&d, "from-file");
    setenv("KUBERNETES_SERVICE_HOST", "k", 1);
    setenv("KUBERNETES_SERVICE_PORT", "1", 1);
    setenv("POD_NAMESPACE", "from-env", 1);
    cr_assert_eq(cfg_load_incluster(d.path, &r, NULL), KERR_OK);
    cr_expect_str_eq(r.namespace, "from-env");
    cfg_rest_release(&r);
    testutil_dir_remove(&d);
}

Test(incluster, errors)
{
    struct testutil_dir d;
    struct cfg_rest r;
    struct kerr_info e;

    sa_dir(&d, NULL);
    cr_expect_eq(cfg_load_incluster(d.path, &r, &e), KERR_NOTFOUND);
    cr_expect_not_null(strstr(e.msg, "KUBERNETES_SERVICE_HOST"), "%s", e.msg);
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "http", 1);
    cr_expect_eq(cfg_load_incluster(d.path, &r, &e), KERR_INVAL);
    cr_expect_not_null(strstr(e.msg, "\"http\" is not a port"), "%s", e.msg);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    cr_expect_eq(cfg_load_incluster("/nonexistent/sa", &r, &e), KERR_IO);
    cr_expect_str_eq(e.msg,
                     "in-cluster: cannot read /nonexistent/sa/token: No such file or directory");
    cr_expect_null(r.server);
    testutil_dir_remove(&d);
}

static void write_kubeconfig(struct testutil_dir *d, const char *name, const char *server)
{
    char text[512];

    snprintf(text, sizeof(text),
             "current-context: a\n"
             "contexts: [{name: a, context: {cluster: c}}]\n"
             "clusters: [{name: c, cluster: {server: '%s'}}]\n",
             server);
    testutil_dir_write(d, name, text);
}

Test(cfg_default, flag_then_env_then_incluster_then_home)
{
    struct testutil_dir d, sa;
    struct cfg_rest r;
    struct kerr_info e;
    char flag[160], env[400];

    testutil_dir_make(&d, "cfg-test");
    sa_dir(&sa, NULL);
    write_kubeconfig(&d, "flag", "https://from-flag");
    write_kubeconfig(&d, "env", "https://from-env");
    snprintf(flag, sizeof(flag), "%s/flag", d.path);
    snprintf(env, sizeof(env), "%s/missing:%s/env", d.path, d.path);
    setenv("KUBECONFIG", env, 1);
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.9", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    setenv("WARDEN_SA_DIR", sa.path, 1);
    cr_assert_eq(cfg_load_default(flag, &r, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "https://from-flag");
    cfg_rest_release(&r);
    cr_assert_eq(cfg_load_default("", &r, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "https://from-env", "first existing KUBECONFIG entry");
    cfg_rest_release(&r);
    unsetenv("KUBECONFIG");
    cr_assert_eq(cfg_load_default(NULL, &r, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "https://10.0.0.9:443");
    cr_expect_str_eq(r.source, "in-cluster");
    cfg_rest_release(&r);
    unsetenv("KUBERNETES_SERVICE_HOST");
    cr_assert_eq(mkdir(testutil_dir_path(&d, ".kube"), 0700), 0);
    write_kubeconfig(&d, ".kube/config", "https://from-home");
    setenv("HOME", d.path, 1);
    cr_assert_eq(cfg_load_default(NULL, &r, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "https://from-home");
    cfg_rest_release(&r);
    testutil_dir_remove(&sa);
    testutil_dir_remove(&d);
}

/* --context: the named context of the kubeconfig the usual order finds, its namespace too. */
Test(cfg_default, context_of_flag_env_and_home)
{
    static const char two[] = "current-context: a\n"
                              "contexts: [{name: a, context: {cluster: ca}},\n"
                              "           {name: b, context: {cluster: cb, namespace: shoot}}]\n"
                              "clusters: [{name: ca, cluster: {server: 'https://a'}},\n"
                              "           {name: cb, cluster: {server: 'https://b'}}]\n";
    struct testutil_dir d, sa;
    struct cfg_rest r;
    struct kerr_info e;
    char path[160];

    testutil_dir_make(&d, "cfg-test");
    sa_dir(&sa, NULL);
    snprintf(path, sizeof(path), "%s", testutil_dir_write(&d, "two", two));
    cr_assert_eq(cfg_load_context(path, "b", &r, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "https://b");
    cr_expect_str_eq(r.namespace, "shoot");
    cfg_rest_release(&r);
    cr_assert_eq(cfg_load_context(path, NULL, &r, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "https://a", "NULL: the current context");
    cr_expect_str_eq(r.namespace, "default");
    cfg_rest_release(&r);
    cr_expect_neq(cfg_load_context(path, "nope", &r, &e), KERR_OK);
    cr_expect_not_null(strstr(e.msg, "nope"), "%s", e.msg);
    setenv("KUBECONFIG", path, 1);
    cr_assert_eq(cfg_load_context(NULL, "b", &r, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(r.server, "https://b", "KUBECONFIG's context b");
    cfg_rest_release(&r);
    unsetenv("KUBECONFIG");
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.9", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    setenv("WARDEN_SA_DIR", sa.path, 1);
    cr_expect_eq(cfg_load_context(NULL, "b", &r, &e), KERR_INVAL, "in-cluster has no contexts");
    cr_expect_not_null(strstr(e.msg, "context b needs a kubeconfig"), "%s", e.msg);
    unsetenv("KUBERNETES_SERVICE_HOST");
    testutil_dir_remove(&sa);
    testutil_dir_remove(&d);
}

Test(cfg_default, nothing_configured)
{
    struct cfg_rest r;
    struct kerr_info e;

    unsetenv("HOME");
    cr_expect_eq(cfg_load_default(NULL, &r, &e), KERR_NOTFOUND);
    cr_expect_not_null(strstr(e.msg, "--kubeconfig"), "%s", e.msg);
    setenv("KUBECONFIG", "/nonexistent/a:/nonexistent/b", 1);
    cr_expect_eq(cfg_load_default(NULL, &r, &e), KERR_IO);
    cr_expect_not_null(strstr(e.msg, "/nonexistent/a"), "%s", e.msg);
}

Test(cfg, read_file_caps_and_grows)
{
    struct testutil_dir d;
    struct kerr_info e;
    char *data = NULL;
    size_t len = 0;
    const char *p;

    testutil_dir_make(&d, "cfg-test");
    p = testutil_dir_write(&d, "ten", "0123456789");
    cr_assert_eq(cfg_read_file(p, 10, &data, &len, &e), KERR_OK, "%s", e.msg);
    cr_expect_eq(len, 10);
    cr_expect_str_eq(data, "0123456789");
    free(data);
    cr_expect_eq(cfg_read_file(p, 9, &data, &len, &e), KERR_TOOBIG);
    cr_expect_null(data);
    cr_expect_not_null(strstr(e.msg, "larger than 9 bytes"), "%s", e.msg);
    /* /proc files report size 0: the buffer has to grow while reading. */
    cr_assert_eq(cfg_read_file("/proc/self/status", 1 << 20, &data, &len, &e), KERR_OK);
    cr_expect_gt(len, 256);
    cr_expect_eq(strlen(data), len);
    cr_expect_not_null(strstr(data, "Name:"));
    free(data);
    cr_expect_eq(cfg_read_file(d.path, 100, &data, &len, &e), KERR_IO, "a directory");
    cr_expect_eq(cfg_read_file("/dev/zero", 100, &data, &len, &e), KERR_IO);
    cr_expect_str_eq(e.msg, "cannot read /dev/zero: not a regular file");
    testutil_dir_remove(&d);
}

Test(cfg, copy_is_deep_and_trim_trims)
{
    struct cfg_rest a, b;
    char *t;

    cfg_rest_init(&a);
    a.server = strdup("https://s");
    a.ca_pem = strdup("CA");
    a.ca_len = 2;
    a.key_pem = strdup("KEY");
    a.key_len = 3;
    a.token_file = strdup("/t");
    a.insecure = 1;
    cr_assert_eq(cfg_rest_copy(&a, &b, NULL), KERR_OK);
    cfg_rest_release(&a);
    cr_expect_str_eq(b.server, "https://s");
    cr_expect_str_eq(b.ca_pem, "CA");
    cr_expect_eq(b.ca_len, 2);
    cr_expect_str_eq(b.key_pem, "KEY");
    cr_expect_str_eq(b.token_file, "/t");
    cr_expect_null(b.cert_pem);
    cr_expect_eq(b.cert_len, 0);
    cr_expect_eq(b.insecure, 1);
    cfg_rest_release(&b);
    t = cfg_strdup_trim(" \t tok en \r\n", 12);
    cr_expect_str_eq(t, "tok en");
    free(t);
    t = cfg_strdup_trim("   ", 3);
    cr_expect_str_eq(t, "");
    free(t);
}

static struct cfg_token *token_for(const char *token, const char *file)
{
    struct cfg_rest r;
    struct cfg_token *t = NULL;

    cfg_rest_init(&r);
    r.token = (char *)token;
    r.token_file = (char *)file;
    cr_assert_eq(cfg_token_new(&r, &t, NULL), KERR_OK);
    return t;
}

static void expect_token(struct cfg_token *t, const char *want)
{
    struct kerr_info e;
    char *got = NULL;

    cr_assert_eq(cfg_token_get(t, &got, &e), KERR_OK, "%s", e.msg);
    cr_expect_str_eq(got, want);
    free(got);
}

Test(token, static_and_empty)
{
    struct cfg_token *t = token_for("static-tok", NULL);
    struct cfg_rest r;
    struct kerr_info e;

    expect_token(t, "static-tok");
    cfg_token_invalidate(t);
    expect_token(t, "static-tok");
    cfg_token_free(t);
    t = token_for(NULL, NULL);
    expect_token(t, "");
    cfg_token_free(t);
    cfg_token_free(NULL);
    cfg_rest_init(&r);
    r.token = (char *)"two words";
    cr_expect_eq(cfg_token_new(&r, &t, &e), KERR_INVAL);
    cr_expect_null(t);
    cr_expect_not_null(strstr(e.msg, "printable"), "%s", e.msg);
}

Test(token, file_is_trimmed_and_reread_after_invalidate)
{
    struct testutil_dir d;
    struct cfg_token *t;
    const char *p;

    testutil_dir_make(&d, "cfg-test");
    p = testutil_dir_write(&d, "token", "  one\n");
    t = token_for(NULL, p);
    expect_token(t, "one");
    testutil_dir_write(&d, "token", "two\n");
    expect_token(t, "one"); /* cached: the 60 s period has not passed */
    cfg_token_invalidate(t);
    expect_token(t, "two");
    cfg_token_free(t);
    testutil_dir_remove(&d);
}

Test(token, file_is_reread_after_the_period)
{
    struct testutil_dir d;
    struct cfg_token *t;
    struct timespec t0, nap = { 0, 5 * 1000000L };
    const char *p;
    char *got = NULL;
    int seen_new = 0;

    testutil_dir_make(&d, "cfg-test");
    p = testutil_dir_write(&d, "token", "old");
    t = token_for(NULL, p);
    cfg_token_set_period_ms(t, 1000);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    expect_token(t, "old");
    testutil_dir_write(&d, "token", "new");
    cr_assert_eq(cfg_token_get(t, &got, NULL), KERR_OK);
    if (ktime_elapsed_ms(&t0) < 900)
        cr_expect_str_eq(got, "old", "re-read before the period passed");
    free(got);
    while (!seen_new && ktime_elapsed_ms(&t0) < 5000) {
        cr_assert_eq(cfg_token_get(t, &got, NULL), KERR_OK);
        seen_new = strcmp(got, "new") == 0;
        free(got);
        if (!seen_new)
            nanosleep(&nap, NULL);
    }
    cr_expect(seen_new, "the new token was never read");
    cr_expect_geq(ktime_elapsed_ms(&t0), 1000, "re-read before the period passed");
    cfg_token_free(t);
    testutil_dir_remove(&d);
}

Test(token, failed_reread_keeps_last_token_and_warns)
{
    struct testutil_dir d;
    struct cfg_token *t;
    char logged[4096];
    const char *p;
    int fds[2];
    ssize_t n;

    cr_assert_eq(pipe(fds), 0);
    log_set_fd(fds[1]);
    testutil_dir_make(&d, "cfg-test");
    p = testutil_dir_write(&d, "token", "good");
    t = token_for(NULL, p);
    expect_token(t, "good");
    unlink(p);
    cfg_token_invalidate(t);
    expect_token(t, "good");
    log_set_fd(-1);
    close(fds[1]);
    n = read(fds[0], logged, sizeof(logged) - 1);
    cr_assert_gt(n, 0);
    logged[n] = '\0';
    cr_expect_not_null(strstr(logged, "\"level\":\"warn\""), "%s", logged);
    cr_expect_not_null(strstr(logged, "keeping the last token"), "%s", logged);
    cr_expect_not_null(strstr(logged, p), "%s", logged);
    close(fds[0]);
    testutil_dir_write(&d, "token", "back");
    cfg_token_invalidate(t);
    expect_token(t, "back");
    cfg_token_free(t);
    testutil_dir_remove(&d);
}

Test(token, first_read_failure_is_an_error_unless_a_static_token_exists)
{
    struct testutil_dir d;
    struct cfg_token *t;
    struct kerr_info e;
    char *got = (char *)"x";
    const char *p;

    testutil_dir_make(&d, "cfg-test");
    p = testutil_dir_write(&d, "token", " \n");
    t = token_for(NULL, p);
    cr_expect_eq(cfg_token_get(t, &got, &e), KERR_IO);
    cr_expect_null(got);
    cr_expect_not_null(strstr(e.msg, "is empty"), "%s", e.msg);
    cfg_token_free(t);
    testutil_dir_write(&d, "token", "abc\r\nX-Injected: 1\n");
    t = token_for(NULL, p);
    cr_expect_eq(cfg_token_get(t, &got, &e), KERR_IO);
    cr_expect_not_null(strstr(e.msg, "not one word of printable characters"), "%s", e.msg);
    cfg_token_free(t);
    t = token_for("fallback", "/nonexistent/token");
    expect_token(t, "fallback");
    cfg_token_free(t);
    t = token_for("fallback", p);
    testutil_dir_write(&d, "token", "from-file");
    expect_token(t, "from-file");
    cfg_token_free(t);
    testutil_dir_remove(&d);
}

struct reader {
    struct cfg_token *t;
    int bad;
};

static void *read_tokens(void *arg)
{
    struct reader *r = arg;
    char *got;
    int i;

    for (i = 0; i < 300; i++) {
        if (cfg_token_get(r->t, &got, NULL) != KERR_OK) {
            r->bad++;
            continue;
        }
        if (strcmp(got, "alpha") != 0 && strcmp(got, "beta") != 0)
            r->bad++;
        free(got);
        if (i % 50 == 0)
            cfg_token_invalidate(r->t);
    }
    return NULL;
}

Test(token, concurrent_readers_see_whole_tokens)
{
    struct testutil_dir d;
    struct reader rd[4];
    pthread_t th[4];
    const char *p;
    int i;

    testutil_dir_make(&d, "cfg-test");
    p = testutil_dir_write(&d, "token", "alpha");
    for (i = 0; i < 4; i++) {
        rd[i].t = i == 0 ? token_for(NULL, p) : rd[0].t;
        rd[i].bad = 0;
    }
    cfg_token_set_period_ms(rd[0].t, 0);
    for (i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, read_tokens, &rd[i]), 0);
    for (i = 0; i < 40; i++)
        testutil_dir_write(&d, "token", i % 2 ? "alpha" : "beta");
    for (i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        cr_expect_eq(rd[i].bad, 0, "reader %d saw %d bad tokens", i, rd[i].bad);
    }
    cfg_token_free(rd[0].t);
    testutil_dir_remove(&d);
}
