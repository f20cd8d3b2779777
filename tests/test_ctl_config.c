/* Tests of controller/ctl_config: flags, the YAML config file, precedence and error messages. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/core/ctl_config.h"

struct bad {
    const char *arg;
    const char *want;
};

static enum kerr load(struct ctl_config *c, struct kerr_info *err, int argc, const char **argv)
{
    kerr_clear(err);
    return ctl_config_load(c, argc, (char **)argv, err);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(ctl_config, defaults)
{
    const char *argv[] = { "warden-controller" };
    struct ctl_config c;
    struct kerr_info err;

    cr_assert_eq(load(&c, &err, 1, argv), KERR_OK, "%s", err.msg);
    cr_expect_str_eq(c.kubeconfig, "");
    cr_expect_eq(c.leader_elect, 1);
    cr_expect_str_eq(c.le_id, "warden-controller-leader-election");
    cr_expect_str_eq(c.le_namespace, "");
    cr_expect_eq(c.lease_ms, 15000);
    cr_expect_eq(c.renew_ms, 10000);
    cr_expect_eq(c.retry_ms, 2000);
    cr_expect_eq(c.backup_cluster_status, 1);
    cr_expect_eq(c.ops_task_executor, 1);
    cr_expect_eq(c.snapshot_retries, 3);
    cr_expect_str_eq(c.imm_image, WARDEN_DEFAULT_IMAGE);
    cr_expect_str_eq(c.imm_command, "warden-snapshot extend-snapshot-immutability");
    cr_expect_eq(c.workers, 3);
    cr_expect_str_eq(c.watch_namespace, "");
    cr_expect_str_eq(c.metrics_bind, ":8080");
    cr_expect_str_eq(c.health_bind, ":8081");
    cr_expect_eq(c.verbosity, 0);
    cr_expect_eq(c.help, 0);
    ctl_config_release(&c);
    ctl_config_release(&c);
}

Test(ctl_config, flags)
{
    const char *argv[] = { "warden-controller",
                           "--kubeconfig=/tmp/kc",
                           "--leader-elect=false",
                           "--leader-election-id",
                           "my-lease",
                           "--leader-election-namespace=etcd-warden",
                           "--backup-cluster-status=false",
                           "--ops-task-executor=false",
                           "--snapshot-retries=7",
                           "--immutability-task-image=reg.example/imm:1",
                           "--immutability-task-command=etcdbrctl extend-snapshot-immutability",
                           "--workers=9",
                           "--watch-namespace=shoot--a",
                           "--metrics-bind-address=127.0.0.1:0",
                           "--health-probe-bind-address=0",
                           "-vv" };
    struct ctl_config c;
    struct kerr_info err;

    cr_assert_eq(load(&c, &err, 16, argv), KERR_OK, "%s", err.msg);
    cr_expect_str_eq(c.kubeconfig, "/tmp/kc");
    cr_expect_eq(c.leader_elect, 0);
    cr_expect_str_eq(c.le_id, "my-lease");
    cr_expect_str_eq(c.le_namespace, "etcd-warden");
    cr_expect_eq(c.backup_cluster_status, 0);
    cr_expect_eq(c.ops_task_executor, 0);
    cr_expect_eq(c.snapshot_retries, 7);
    cr_expect_str_eq(c.imm_image, "reg.example/imm:1");
    cr_expect_str_eq(c.imm_command, "etcdbrctl extend-snapshot-immutability");
    cr_expect_eq(c.workers, 9);
    cr_expect_str_eq(c.watch_namespace, "shoot--a");
    cr_expect_str_eq(c.metrics_bind, "127.0.0.1:0");
    cr_expect_str_eq(c.health_bind, "0");
    cr_expect_eq(c.verbosity, 2);
    ctl_config_release(&c);
}

Test(ctl_config, errors_name_the_flag)
{
    static const struct bad bad[] = {
        { "--workers=0", "--workers: 0 is out of range" },
        { "--workers=many", "workers" },
        { "--snapshot-retries=-1", "--snapshot-retries: -1 is out of range" },
        { "--snapshot-retries=0", "--snapshot-retries" },
        { "--leader-elect=maybe", "leader-elect" },
        { "--metrics-bind-address=localhost", "--metrics-bind-address: \"localhost\"" },
        { "--health-probe-bind-address=:99999", "--health-probe-bind-address" },
        { "--immutability-task-image=", "--immutability-task-image" },
        { "--immutability-task-command=  ", "--immutability-task-command: empty" },
        { "--leader-election-id=Bad_Name", "--leader-election-id: \"Bad_Name\"" },
        { "--watch-namespace=UPPER", "--watch-namespace" },
        { "--leader-election-renew-deadline=20s", "--leader-election-lease-duration" },
        { "--sync-period=soon", "sync-period" },
        { "--ops-task-call-timeout=2h", "--ops-task-call-timeout: 2h is out of range [1s, 1h]" },
        { "--ops-task-call-timeout=500ms",
          "--ops-task-call-timeout: 500ms is out of range [1s, 1h]" },
        { "--ops-task-call-timeout=1h0m1s", "--ops-task-call-timeout: 3601s is out of range" },
        { "--graceful-shutdown-timeout=90m",
          "--graceful-shutdown-timeout: 90m is out of range [0, 1h]" },
        { "--sync-period=25h", "--sync-period: 25h is out of range [0, 24h]" },
        { "--no-such-flag=1", "--no-such-flag" },
        { "stray", "unexpected argument \"stray\"" },
    };
    const char *argv[2] = { "warden-controller", NULL };
    struct ctl_config c;
    struct kerr_info err;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        argv[1] = bad[i].arg;
        cr_expect_neq(load(&c, &err, 2, argv), KERR_OK, "%s accepted", bad[i].arg);
        cr_expect_not_null(strstr(err.msg, bad[i].want), "%s: '%s'", bad[i].arg, err.msg);
        ctl_config_release(&c);
    }
}

Test(ctl_config, help_documents_every_flag)
{
    static const char *const names[] = {
        "--kubeconfig",
        "--leader-elect ",
        "--leader-election-id",
        "--leader-election-namespace",
        "--backup-cluster-status",
        "--ops-task-executor",
        "--snapshot-retries",
        "--immutability-task-image",
        "--immutability-task-command",
        "--workers",
        "--watch-namespace",
        "--metrics-bind-address",
        "--health-probe-bind-address",
        "--config",
        "-v",
        "SIGTERM",
        "warden-controller ready",
    };
    const char *argv[] = { "warden-controller", "--workers=0", "--help" };
    struct ctl_config c;
    struct kerr_info err;
    char *text = NULL;
    size_t i;

    cr_assert_eq(load(&c, &err, 3, argv), KERR_OK, "%s", err.msg);
    cr_expect(c.help);
    ctl_config_release(&c);
    cr_assert_eq(ctl_config_help(&text, NULL), KERR_OK);
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        cr_expect_not_null(strstr(text, names[i]), "%s missing from the help", names[i]);
    cr_expect_not_null(strstr(text, "warden-snapshot extend-snapshot-immutability"));
    free(text);
}

Test(ctl_config, yaml_file_and_precedence)
{
    char path[] = "/tmp/ctl-config-XXXXXX";
    int fd = mkstemp(path);
    char flag[64];
    const char *argv[] = { "warden-controller", flag, "--workers=5" };
    struct ctl_config c;
    struct kerr_info err;

    cr_assert_geq(fd, 0);
    close(fd);
    write_file(path, "workers: 2\n"
                     "snapshot-retries: 6\n"
                     "leader-election-namespace: etcd-warden\n"
                     "ops-task-executor: false\n"
                     "immutability-task-image: \"img:2\"\n"
                     "watch-namespace:\n");
    snprintf(flag, sizeof(flag), "--config=%s", path);
    cr_assert_eq(load(&c, &err, 3, argv), KERR_OK, "%s", err.msg);
    cr_expect_eq(c.workers, 5, "the command line wins");
    cr_expect_eq(c.snapshot_retries, 6);
    cr_expect_str_eq(c.le_namespace, "etcd-warden");
    cr_expect_eq(c.ops_task_executor, 0);
    cr_expect_str_eq(c.imm_image, "img:2");
    cr_expect_str_eq(c.watch_namespace, "");
    ctl_config_release(&c);
    unlink(path);
}

Test(ctl_config, yaml_errors_name_file_line_and_key)
{
    static const struct bad bad[] = {
        { "workers: 2\nno-such-setting: 1\n", ":2: unknown setting \"no-such-setting\"" },
        { "workers: 2\nsnapshot-retries: lots\n", ":2: snapshot-retries: " },
        { "workers: [1, 2]\n", ":1: workers: expected one value" },
        { "config: other.yaml\n", ":1: config cannot be set" },
        { "a: [\n", "not YAML" },
        { "workers: 0\n", "--workers: 0 is out of range" },
    };
    char path[] = "/tmp/ctl-config-XXXXXX";
    int fd = mkstemp(path);
    char flag[64];
    const char *argv[] = { "warden-controller", flag };
    struct ctl_config c;
    struct kerr_info err;
    size_t i;

    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(flag, sizeof(flag), "--config=%s", path);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_file(path, bad[i].arg);
        cr_expect_neq(load(&c, &err, 2, argv), KERR_OK, "file %zu accepted", i);
        cr_expect_not_null(strstr(err.msg, bad[i].want), "file %zu: '%s'", i, err.msg);
        ctl_config_release(&c);
    }
    unlink(path);
    cr_expect_neq(load(&c, &err, 2, argv), KERR_OK);
    cr_expect_not_null(strstr(err.msg, "--config"), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, path), "%s", err.msg);
    ctl_config_release(&c);
}

Test(ctl_config, backups_and_the_copy_jobs)
{
    const char *dflt[] = { "warden-controller" };
    const char *argv[] = { "warden-controller", "--backups=false",
                           "--copy-job-image=reg.example/c:1",
                           "--copy-job-command=warden-snapshot copy -v" };
    static const struct bad bad[] = {
        { "--copy-job-image=", "--copy-job-image" },
        { "--copy-job-image=a b", "--copy-job-image" },
        { "--copy-job-command= ", "--copy-job-command: empty" },
        { "--backups=perhaps", "backups" },
    };
    const char *one[2] = { "warden-controller", NULL };
    struct ctl_config c;
    struct kerr_info err;
    size_t i;

    cr_assert_eq(load(&c, &err, 1, dflt), KERR_OK, "%s", err.msg);
    cr_expect_eq(c.backups, 1);
    cr_expect_str_eq(c.copy_image, WARDEN_DEFAULT_IMAGE);
    cr_expect_str_eq(c.copy_command, "warden-snapshot copy");
    ctl_config_release(&c);
    cr_assert_eq(load(&c, &err, 4, argv), KERR_OK, "%s", err.msg);
    cr_expect_eq(c.backups, 0);
    cr_expect_str_eq(c.copy_image, "reg.example/c:1");
    cr_expect_str_eq(c.copy_command, "warden-snapshot copy -v");
    ctl_config_release(&c);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        one[1] = bad[i].arg;
        cr_expect_neq(load(&c, &err, 2, one), KERR_OK, "%s accepted", bad[i].arg);
        cr_expect_not_null(strstr(err.msg, bad[i].want), "%s: '%s'", bad[i].arg, err.msg);
        ctl_config_release(&c);
    }
}
