/* ctl_config - flags and the YAML config file; see ctl_config.h. */
#include "controller/core/ctl_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/flagfile.h"
#include "common/proc.h"

#define MAX_FLAGS 32

static const char summary[] =
    "Reconciles etcd-warden's flows for druid.gardener.cloud/v1alpha1 Etcd objects: hibernation\n"
    "(annotation etcd-warden.io/hibernate), the EtcdOpsTask executor, the\n"
    "ExtendFullSnapshotImmutabilityTask CronJobs, the status backup, restore progress and\n"
    "owner-reference repair; the backups that outlive their Etcd (BackupBuckets,\n"
    "BackupEntries and their deletion Jobs, --backup-entries) and the off-site backups\n"
    "(EtcdBackups, EtcdBackupSchedules, EtcdRestores and their copy Jobs, --backups).\n"
    "\n"
    "Signals: SIGTERM and SIGINT stop gracefully (keys in hand finish, the leader-election\n"
    "Lease is released, exit 0); a second one exits at once (status 1). SIGPIPE is ignored.\n"
    "Once every cache has synced the log line \"warden-controller ready\" is written.";

static size_t make_table(struct ctl_config *c, struct proc_flag *out)
{
    const struct proc_flag t[] = {
        { "config", PROC_FLAG_STRING, &c->config_file, "",
          "YAML file with these settings (keys are the flag names); flags win" },
        { "kubeconfig", PROC_FLAG_STRING, &c->kubeconfig, "",
          "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)" },
        { "leader-elect", PROC_FLAG_BOOL, &c->leader_elect, "true",
          "elect a leader on a Lease; only the leader reconciles" },
        { "leader-election-id", PROC_FLAG_STRING, &c->le_id, "warden-controller-leader-election",
          "name of the coordination.k8s.io/v1 Lease" },
        { "leader-election-namespace", PROC_FLAG_STRING, &c->le_namespace, "",
          "namespace of the Lease (empty: the pod's or the kubeconfig context's)" },
        { "leader-election-lease-duration", PROC_FLAG_DURATION, &c->lease_ms, "15s",
          "how long a standby waits before taking over an unrenewed Lease" },
        { "leader-election-renew-deadline", PROC_FLAG_DURATION, &c->renew_ms, "10s",
          "how long the leader tries to renew before it steps down" },
        { "leader-election-retry-period", PROC_FLAG_DURATION, &c->retry_ms, "2s",
          "time between two tries to acquire or renew the Lease" },
        { "backup-cluster-status", PROC_FLAG_BOOL, &c->backup_cluster_status, "true",
          "keep an EtcdStatusBackup of every Etcd (false: delete them)" },
        { "ops-task-executor", PROC_FLAG_BOOL, &c->ops_task_executor, "true",
          "execute EtcdOpsTasks (false where etcd-druid executes them itself)" },
        { "backup-entries", PROC_FLAG_BOOL, &c->backup_entries, "true",
          "keep a BackupEntry per Etcd backing up into a BackupBucket (needs their CRDs)" },
        { "backups", PROC_FLAG_BOOL, &c->backups, "true",
          "reconcile EtcdBackups, EtcdBackupSchedules, EtcdRestores and EtcdRestoreDrills (needs "
          "their CRDs)" },
        { "ops-task-workers", PROC_FLAG_INT, &c->ops_task_workers, "3",
          "concurrent EtcdOpsTask calls to backup sidecars, apart from --workers (1-64)" },
        { "ops-task-call-timeout", PROC_FLAG_DURATION, &c->ops_task_call_ms, "15m",
          "longest wait for one sidecar answer, within the task's own timeout (1s-1h)" },
        { "snapshot-retries", PROC_FLAG_INT, &c->snapshot_retries, "3",
          "final-snapshot attempts before the hibernation phase Failed (1-100)" },
        { "immutability-task-image", PROC_FLAG_STRING, &c->imm_image, WARDEN_DEFAULT_IMAGE,
          "container image of the immutability CronJobs" },
        { "immutability-task-command", PROC_FLAG_STRING, &c->imm_command,
          "warden-snapshot extend-snapshot-immutability",
          "command of the immutability CronJobs (words split at spaces)" },
        { "deletion-job-image", PROC_FLAG_STRING, &c->bke_image, WARDEN_DEFAULT_IMAGE,
          "container image of the backup deletion Jobs" },
        { "deletion-job-command", PROC_FLAG_STRING, &c->bke_command,
          "warden-snapshot delete-snapshots",
          "command of the backup deletion Jobs (words split at spaces)" },
        { "copy-job-image", PROC_FLAG_STRING, &c->copy_image, WARDEN_DEFAULT_IMAGE,
          "container image of the Jobs copying snapshots between stores" },
        { "copy-job-command", PROC_FLAG_STRING, &c->copy_command, "warden-snapshot copy",
          "command of the copy Jobs (words split at spaces)" },
        { "restore-drill-image", PROC_FLAG_STRING, &c->restore_drill_image,
          CTL_DEFAULT_RESTORE_DRILL_IMAGE,
          "image of etcdbrctl restore in a Restore mode drill when neither the drill nor the "
          "Etcd names one" },
        { "workers", PROC_FLAG_INT, &c->workers, "3", "concurrent reconciles (1-256)" },
        { "watch-namespace", PROC_FLAG_STRING, &c->watch_namespace, "",
          "watch and reconcile this namespace only (empty: all)" },
        { "metrics-bind-address", PROC_FLAG_STRING, &c->metrics_bind, ":8080",
          "host:port of /metrics (\"0\" disables)" },
        { "health-probe-bind-address", PROC_FLAG_STRING, &c->health_bind, ":8081",
          "host:port of /healthz and /readyz (\"0\" disables)" },
        { "sync-period", PROC_FLAG_DURATION, &c->resync_ms, "10m",
          "every cached Etcd is reconciled again this often (0: never)" },
        { "graceful-shutdown-timeout", PROC_FLAG_DURATION, &c->shutdown_ms, "30s",
          "how long reconciles in flight may finish after SIGTERM" },
    };
    size_t n = sizeof(t) / sizeof(t[0]);

    memcpy(out, t, sizeof(t));
    return n;
}

void ctl_config_release(struct ctl_config *c)
{
    struct proc_flag f[MAX_FLAGS];
    size_t n = make_table(c, f);

    proc_flags_release(f, n);
    flagfile_release(&c->file);
}

enum kerr ctl_config_help(char **out, struct kerr_info *err)
{
    struct ctl_config c;
    struct proc_flag f[MAX_FLAGS];
    size_t n;

    memset(&c, 0, sizeof(c));
    n = make_table(&c, f);
    return proc_flags_help("warden-controller", summary, f, n, out, err);
}

static enum kerr range(long v, long lo, long hi, const char *flag, struct kerr_info *err)
{
    if (v < lo || v > hi)
        return kerr_set(err, KERR_INVAL, "--%s: %ld is out of range [%ld, %ld]", flag, v, lo, hi);
    return KERR_OK;
}

/* ms as the shortest duration flag text that reads back as it: 0, 2h, 90s, 1500ms. */
static void duration_text(long ms, char *out, size_t size)
{
    if (ms == 0)
        snprintf(out, size, "0");
    else if (ms % 3600000L == 0)
        snprintf(out, size, "%ldh", ms / 3600000L);
    else if (ms % 60000L == 0)
        snprintf(out, size, "%ldm", ms / 60000L);
    else if (ms % 1000L == 0)
        snprintf(out, size, "%lds", ms / 1000L);
    else
        snprintf(out, size, "%ldms", ms);
}

/* A duration flag's range, said in durations (the flag's own units), not milliseconds. */
static enum kerr duration_range(long ms, long lo, long hi, const char *flag, struct kerr_info *err)
{
    char v[32], l[32], h[32];

    if (ms >= lo && ms <= hi)
        return KERR_OK;
    duration_text(ms, v, sizeof(v));
    duration_text(lo, l, sizeof(l));
    duration_text(hi, h, sizeof(h));
    return kerr_set(err, KERR_INVAL, "--%s: %s is out of range [%s, %s]", flag, v, l, h);
}

/* "0" (off), or "[host]:port" with a port 0-65535. */
static enum kerr address(const char *v, const char *flag, struct kerr_info *err)
{
    const char *colon = strrchr(v, ':');
    char *end = NULL;
    long port;

    if (strcmp(v, "0") == 0)
        return KERR_OK;
    if (colon && colon[1]) {
        port = strtol(colon + 1, &end, 10);
        if (*end == '\0' && port >= 0 && port <= 65535)
            return KERR_OK;
    }
    return kerr_set(err, KERR_INVAL, "--%s: \"%.64s\" is not host:port or \"0\"", flag, v);
}

/* A DNS-1123 subdomain-ish name (Lease name, namespace): [a-z0-9.-], 1-253 bytes. */
static enum kerr k8s_name(const char *v, int empty_ok, const char *flag, struct kerr_info *err)
{
    size_t n = strlen(v), i;

    if (n == 0 && empty_ok)
        return KERR_OK;
    for (i = 0; i < n; i++) {
        if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '-' ||
              v[i] == '.'))
            break;
    }
    if (n == 0 || n > 253 || i < n || v[0] == '-' || v[n - 1] == '-')
        return kerr_set(err, KERR_INVAL, "--%s: \"%.64s\" is not a Kubernetes object name", flag,
                        v);
    return KERR_OK;
}

static enum kerr validate(const struct ctl_config *c, struct kerr_info *err)
{
    enum kerr rc;

    if ((rc = range(c->snapshot_retries, 1, 100, "snapshot-retries", err)) ||
        (rc = range(c->workers, 1, 256, "workers", err)) ||
        (rc = range(c->ops_task_workers, 1, 64, "ops-task-workers", err)) ||
        (rc = duration_range(c->ops_task_call_ms, 1000L, 3600000L, "ops-task-call-timeout", err)) ||
        (rc = duration_range(c->resync_ms, 0, 86400000L, "sync-period", err)) ||
        (rc = duration_range(c->shutdown_ms, 0, 3600000L, "graceful-shutdown-timeout", err)) ||
        (rc = address(c->metrics_bind, "metrics-bind-address", err)) ||
        (rc = address(c->health_bind, "health-probe-bind-address", err)) ||
        (rc = k8s_name(c->le_id, 0, "leader-election-id", err)) ||
        (rc = k8s_name(c->le_namespace, 1, "leader-election-namespace", err)) ||
        (rc = k8s_name(c->watch_namespace, 1, "watch-namespace", err)))
        return rc;
    if (!c->imm_image[0] || strchr(c->imm_image, ' '))
        return kerr_set(err, KERR_INVAL, "--immutability-task-image: \"%.64s\" is not an image",
                        c->imm_image);
    if (!c->imm_command[0] || strspn(c->imm_command, " ") == strlen(c->imm_command))
        return kerr_set(err, KERR_INVAL, "--immutability-task-command: empty");
    if (!c->bke_image[0] || strchr(c->bke_image, ' '))
        return kerr_set(err, KERR_INVAL, "--deletion-job-image: \"%.64s\" is not an image",
                        c->bke_image);
    if (!c->bke_command[0] || strspn(c->bke_command, " ") == strlen(c->bke_command))
        return kerr_set(err, KERR_INVAL, "--deletion-job-command: empty");
    if (!c->copy_image[0] || strchr(c->copy_image, ' '))
        return kerr_set(err, KERR_INVAL, "--copy-job-image: \"%.64s\" is not an image",
                        c->copy_image);
    if (!c->copy_command[0] || strspn(c->copy_command, " ") == strlen(c->copy_command))
        return kerr_set(err, KERR_INVAL, "--copy-job-command: empty");
    if (!c->restore_drill_image[0] || strchr(c->restore_drill_image, ' '))
        return kerr_set(err, KERR_INVAL, "--restore-drill-image: \"%.64s\" is not an image",
                        c->restore_drill_image);
    if (c->leader_elect &&
        (c->lease_ms <= c->renew_ms || c->renew_ms * 10 <= c->retry_ms * 12 || c->retry_ms <= 0))
        return kerr_set(err, KERR_INVAL,
                        "--leader-election-lease-duration (%ld ms) must exceed "
                        "--leader-election-renew-deadline (%ld ms), which must exceed 1.2 x "
                        "--leader-election-retry-period (%ld ms)",
                        c->lease_ms, c->renew_ms, c->retry_ms);
    return KERR_OK;
}

enum kerr ctl_config_load(struct ctl_config *c, int argc, char **argv, struct kerr_info *err)
{
    struct proc_flag f[MAX_FLAGS];
    size_t nf;
    enum kerr rc;

    memset(c, 0, sizeof(*c));
    nf = make_table(c, f);
    rc = flagfile_parse(f, nf, "warden-controller", "config", CTL_CONFIG_MAX_FILE, argc, argv,
                        &c->file, err);
    c->help = c->file.help;
    c->verbosity = c->file.verbosity;
    if (rc || c->help)
        return rc;
    return validate(c, err);
}
