/* Tests of webhook/wh_config: flags, the YAML config file, precedence and error messages. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webhook/wh_config.h"

#define DRUID "system:serviceaccount:druid:etcd-druid"
/* One argv element (parenthesised: clang -Wstring-concatenation). */
#define DRUID_FLAG ("--reconciler-service-account=" DRUID)

static enum kerr load(struct wh_config *c, struct kerr_info *err, int argc, const char **argv)
{
    kerr_clear(err);
    return wh_config_load(c, argc, (char **)argv, err);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(wh_config, defaults_and_flags)
{
    const char *argv[] = { "warden-webhook",
                           DRUID_FLAG,
                           "--reconciler-service-account",
                           "system:serviceaccount:w:warden-controller,system:serviceaccount:w:x",
                           "--etcd-components-webhook-exempt-service-accounts=a,b",
                           "--webhook-server-port=10443",
                           "--webhook-server-request-timeout=2s",
                           "-v" };
    struct wh_config c;
    struct kerr_info err;

    cr_assert_eq(load(&c, &err, 8, argv), KERR_OK, "%s", err.msg);
    cr_expect_eq(c.reconcilers.n, 3);
    cr_expect_str_eq(c.reconcilers.v[0], DRUID);
    cr_expect_str_eq(c.reconcilers.v[2], "system:serviceaccount:w:x");
    cr_expect_eq(c.exempt.n, 2);
    cr_expect_eq(c.port, 10443);
    cr_expect_eq(c.budget_ms, 2000);
    cr_expect_str_eq(c.cert_dir, "/etc/webhook-server-tls");
    cr_expect_str_eq(c.bind, "");
    cr_expect_str_eq(c.metrics_bind, ":8080");
    cr_expect_str_eq(c.health_bind, ":8081");
    cr_expect_eq(c.max_body, 3 * 1024 * 1024);
    cr_expect_eq(c.max_buffered, 64 * 1024 * 1024);
    cr_expect_eq(c.enable_components, 1);
    cr_expect_eq(c.self_tls, 0);
    cr_expect_eq(c.verbosity, 1);
    wh_config_release(&c);
    wh_config_release(&c);
}

struct bad {
    const char *arg;
    const char *want;
};

Test(wh_config, errors_name_the_flag)
{
    static const struct bad bad[] = {
        { "--webhook-server-port=0", "--webhook-server-port: 0 is out of range" },
        { "--webhook-server-port=x", "webhook-server-port" },
        { "--no-such-flag=1", "--no-such-flag" },
        { "--webhook-server-idle-timeout=forever", "webhook-server-idle-timeout" },
        { "--webhook-server-max-request-bytes=10", "--webhook-server-max-request-bytes" },
        { "--webhook-server-max-buffered-bytes=1048576",
          "--webhook-server-max-buffered-bytes: 1048576 is out of range [3145728," },
        { "--etcd-components-webhook-exempt-service-accounts=a b",
          "--etcd-components-webhook-exempt-service-accounts: \"a b\" is not a username" },
        { "stray", "unexpected argument \"stray\"" },
    };
    const char *argv[3] = { "warden-webhook", DRUID_FLAG, NULL };
    struct wh_config c;
    struct kerr_info err;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        argv[2] = bad[i].arg;
        cr_expect_neq(load(&c, &err, 3, argv), KERR_OK, "%s accepted", bad[i].arg);
        cr_expect_not_null(strstr(err.msg, bad[i].want), "%s: '%s'", bad[i].arg, err.msg);
        wh_config_release(&c);
    }
    {
        const char *tls[] = { "warden-webhook", DRUID_FLAG, "--self-provision-tls",
                              "--tls-cert-lifetime=1m" };

        cr_expect_neq(load(&c, &err, 4, tls), KERR_OK);
        cr_expect_not_null(strstr(err.msg, "--tls-cert-lifetime"), "%s", err.msg);
        wh_config_release(&c);
        tls[3] = "--tls-service-name=";
        cr_expect_neq(load(&c, &err, 4, tls), KERR_OK);
        cr_expect_not_null(strstr(err.msg, "--tls-service-name"), "%s", err.msg);
        wh_config_release(&c);
    }
    argv[1] = "--webhook-server-port=9443";
    cr_expect_neq(load(&c, &err, 2, argv), KERR_OK);
    cr_expect_not_null(strstr(err.msg, "--reconciler-service-account"), "%s", err.msg);
    wh_config_release(&c);
}

Test(wh_config, help)
{
    const char *argv[] = { "warden-webhook", "--help" };
    struct wh_config c;
    struct kerr_info err;
    char *text = NULL;

    cr_assert_eq(load(&c, &err, 2, argv), KERR_OK);
    cr_expect(c.help);
    wh_config_release(&c);
    cr_assert_eq(wh_config_help(&text, NULL), KERR_OK);
    cr_expect_not_null(strstr(text, "--reconciler-service-account"));
    cr_expect_not_null(strstr(text, "--webhook-server-tls-server-cert-dir"));
    cr_expect_not_null(strstr(text, "9443"));
    free(text);
}

Test(wh_config, yaml_file_and_precedence)
{
    char path[] = "/tmp/wh-config-XXXXXX";
    int fd = mkstemp(path);
    char flag[64];
    const char *argv[] = { "warden-webhook", flag, "--webhook-server-port=7443",
                           "--etcd-components-webhook-exempt-service-accounts=cli" };
    struct wh_config c;
    struct kerr_info err;

    cr_assert_geq(fd, 0);
    close(fd);
    write_file(path, "# warden-webhook settings\n"
                     "reconciler-service-account:\n"
                     "  - " DRUID "\n"
                     "  - system:serviceaccount:w:warden-controller\n"
                     "etcd-components-webhook-exempt-service-accounts: [file-a, file-b]\n"
                     "webhook-server-port: 8443\n"
                     "webhook-server-bind-address: 127.0.0.1\n"
                     "self-provision-tls: false\n"
                     "webhook-server-request-timeout: 3s\n"
                     "metrics-bind-address: \"0\"\n"
                     "watch-namespace:\n");
    snprintf(flag, sizeof(flag), "--config=%s", path);
    cr_assert_eq(load(&c, &err, 2, argv), KERR_OK, "%s", err.msg);
    cr_expect_eq(c.reconcilers.n, 2);
    cr_expect_str_eq(c.reconcilers.v[1], "system:serviceaccount:w:warden-controller");
    cr_expect_eq(c.exempt.n, 2);
    cr_expect_str_eq(c.exempt.v[0], "file-a");
    cr_expect_eq(c.port, 8443);
    cr_expect_str_eq(c.bind, "127.0.0.1");
    cr_expect_str_eq(c.metrics_bind, "0");
    cr_expect_eq(c.budget_ms, 3000);
    wh_config_release(&c);
    /* Flags win over the file, lists included. */
    cr_assert_eq(load(&c, &err, 4, argv), KERR_OK, "%s", err.msg);
    cr_expect_eq(c.port, 7443);
    cr_expect_eq(c.exempt.n, 1);
    cr_expect_str_eq(c.exempt.v[0], "cli");
    cr_expect_eq(c.reconcilers.n, 2);
    wh_config_release(&c);
    unlink(path);
}

Test(wh_config, yaml_errors_name_file_line_and_key)
{
    static const struct bad bad[] = {
        { "webhook-server-port: 8443\nno-such-setting: 1\n",
          ":2: unknown setting \"no-such-setting\"" },
        { "reconciler-service-account: [x]\nwebhook-server-port: high\n",
          ":2: webhook-server-port: " },
        { "webhook-server-port: [1, 2]\n", ":1: webhook-server-port: expected one value" },
        { "webhook-server-port: {a: 1}\n", ":1: webhook-server-port: expected a value" },
        { "config: other.yaml\n", ":1: config cannot be set" },
        { "- a\n- b\n", "" },
        { "a: [\n", "not YAML" },
    };
    char path[] = "/tmp/wh-config-XXXXXX";
    int fd = mkstemp(path);
    char flag[64];
    const char *argv[] = { "warden-webhook", flag };
    struct wh_config c;
    struct kerr_info err;
    size_t i;

    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(flag, sizeof(flag), "--config=%s", path);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_file(path, bad[i].arg);
        cr_expect_neq(load(&c, &err, 2, argv), KERR_OK, "file %zu accepted", i);
        cr_expect_not_null(strstr(err.msg, path), "file %zu: '%s'", i, err.msg);
        cr_expect_not_null(strstr(err.msg, bad[i].want), "file %zu: '%s'", i, err.msg);
        wh_config_release(&c);
    }
    unlink(path);
    cr_expect_neq(load(&c, &err, 2, argv), KERR_OK);
    cr_expect_not_null(strstr(err.msg, "--config"), "%s", err.msg);
    wh_config_release(&c);
}

Test(wh_config, combinations_that_cannot_work_are_refused_at_start)
{
    static const struct {
        const char *args[3];
        const char *want;
    } rows[] = {
        { { "--etcd-backups", NULL }, "--etcd-backups needs --backup-entries" },
        { { "--etcd-backups=true", "--backup-entries=false" },
          "--etcd-backups needs --backup-entries" },
        { { "--validating-webhook-configuration=etcd-warden", NULL },
          "name what --self-provision-tls patches its CA into" },
        { { "--mutating-webhook-configuration=etcd-warden", NULL },
          "name what --self-provision-tls patches its CA into" },
        { { "--local-volume-guard", NULL }, "--local-volume-guard needs --backup-entries" },
    };
    struct wh_config c;
    struct kerr_info err;

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const char *argv[] = { "warden-webhook", DRUID_FLAG, rows[i].args[0], rows[i].args[1] };

        cr_expect_eq(load(&c, &err, rows[i].args[1] ? 4 : 3, argv), KERR_INVAL, "row %zu", i);
        cr_expect(strstr(err.msg, rows[i].want), "row %zu: %s", i, err.msg);
        wh_config_release(&c);
    }
    {
        const char *argv[] = { "warden-webhook", DRUID_FLAG, "--backup-entries", "--etcd-backups" };

        cr_assert_eq(load(&c, &err, 4, argv), KERR_OK, "%s", err.msg);
        wh_config_release(&c);
    }
    {
        const char *argv[] = { "warden-webhook", DRUID_FLAG, "--backup-entries",
                               "--local-volume-guard" };

        cr_assert_eq(load(&c, &err, 4, argv), KERR_OK, "%s", err.msg);
        cr_expect_eq(c.local_volume_guard, 1);
        wh_config_release(&c);
    }
}

Test(wh_config, help_marks_the_required_flag)
{
    char *text = NULL, *line;

    cr_assert_eq(wh_config_help(&text, NULL), KERR_OK);
    line = strstr(text, "--reconciler-service-account");
    cr_assert_not_null(line, "%s", text);
    cr_assert(strstr(line, "(required") && strstr(line, "(required") < strstr(line + 2, "\n  -"),
              "%s", text);
    free(text);
}

Test(wh_config, client_ca_and_cn)
{
    struct wh_config c;
    struct kerr_info err;

    {
        const char *argv[] = { "warden-webhook", DRUID_FLAG };

        cr_assert_eq(load(&c, &err, 2, argv), KERR_OK, "%s", err.msg);
        cr_expect_str_eq(c.client_ca, "", "no client certificate is asked by default");
        cr_expect_str_eq(c.client_cn, "");
        wh_config_release(&c);
    }
    {
        const char *argv[] = { "warden-webhook", DRUID_FLAG, "--client-ca", "/etc/apiserver/ca.crt",
                               "--client-cn=kube-apiserver" };

        cr_assert_eq(load(&c, &err, 5, argv), KERR_OK, "%s", err.msg);
        cr_expect_str_eq(c.client_ca, "/etc/apiserver/ca.crt");
        cr_expect_str_eq(c.client_cn, "kube-apiserver");
        wh_config_release(&c);
    }
    {
        const char *argv[] = { "warden-webhook", DRUID_FLAG, "--client-cn=kube-apiserver" };

        cr_expect_eq(load(&c, &err, 3, argv), KERR_INVAL);
        cr_expect(strstr(err.msg, "--client-cn needs --client-ca"), "%s", err.msg);
        wh_config_release(&c);
    }
    {
        char path[] = "/tmp/wh_config_client_XXXXXX";
        int fd = mkstemp(path);
        const char *argv[] = { "warden-webhook", "--config", path };

        cr_assert_geq(fd, 0);
        close(fd);
        write_file(path, "reconciler-service-account: [" DRUID "]\n"
                         "client-ca: /etc/apiserver/ca.crt\nclient-cn: apiserver\n");
        cr_assert_eq(load(&c, &err, 3, argv), KERR_OK, "%s", err.msg);
        cr_expect_str_eq(c.client_ca, "/etc/apiserver/ca.crt");
        cr_expect_str_eq(c.client_cn, "apiserver");
        wh_config_release(&c);
        unlink(path);
    }
}
