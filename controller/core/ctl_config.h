/*
 * ctl_config - the settings of warden-controller: command-line flags and the
 * same settings in a YAML file (--config).
 *
 * The YAML file is one mapping whose keys are the flag names without the
 * dashes; a value is a scalar:
 *
 *   leader-election-namespace: etcd-warden
 *   snapshot-retries: 5
 *   workers: 4
 *   watch-namespace: shoot--foo
 *
 * A flag given on the command line wins over the file. Every error names
 * the flag, or the file, line and key: an unknown flag or key, a bad value
 * (a negative count, an empty image, an address that is not host:port).
 *
 * Ownership: struct ctl_config is embedded (ctl_config_load /
 * ctl_config_release); its strings are BORROWED from argv, the defaults or
 * its own copies of the file's values, and live until the release.
 * Thread safety: load and release in main() before and after the threads;
 * the filled struct is read-only and may be read from any thread.
 */
#ifndef CONTROLLER_CTL_CONFIG_H
#define CONTROLLER_CTL_CONFIG_H

#include <stddef.h>

#include "common/flagfile.h"
#include "common/kerr.h"

#define CTL_CONFIG_MAX_FILE (1024u * 1024u)
/* etcd-druid's backup sidecar image (what it deploys today) */
#define CTL_DEFAULT_RESTORE_DRILL_IMAGE \
    "europe-docker.pkg.dev/gardener-project/public/gardener/etcdbrctl:v0.41.2"

struct ctl_config {
    const char *kubeconfig;    /* --kubeconfig ("" = $KUBECONFIG, in-cluster, ~/.kube) */
    int leader_elect;          /* --leader-elect (default true) */
    const char *le_id;         /* --leader-election-id (Lease name) */
    const char *le_namespace;  /* --leader-election-namespace ("" = the client's) */
    long lease_ms;             /* --leader-election-lease-duration (15s) */
    long renew_ms;             /* --leader-election-renew-deadline (10s) */
    long retry_ms;             /* --leader-election-retry-period (2s) */
    int backup_cluster_status; /* --backup-cluster-status (default true) */
    int ops_task_executor;     /* --ops-task-executor (default true) */
    int backup_entries;        /* --backup-entries: BackupBuckets and entries (default true) */
    int backups;               /* --backups: EtcdBackups, schedules, restores (default true) */
    long ops_task_workers;     /* --ops-task-workers: the executor's own workers (1-64) */
    long ops_task_call_ms;     /* --ops-task-call-timeout: cap of one sidecar call (1s-1h) */
    long snapshot_retries;     /* --snapshot-retries: final-snapshot attempts, >= 1 */
    const char *imm_image;     /* --immutability-task-image */
    const char *imm_command;   /* --immutability-task-command (split at spaces) */
    const char *bke_image;     /* --deletion-job-image */
    const char *bke_command;   /* --deletion-job-command (split at spaces) */
    const char *copy_image;    /* --copy-job-image */
    const char *copy_command;  /* --copy-job-command (split at spaces) */
    const char *restore_drill_image; /* --restore-drill-image: etcdbrctl restore's image */
    long workers;                    /* --workers (>= 1) */
    const char *watch_namespace;     /* --watch-namespace ("" = all) */
    const char *metrics_bind;        /* --metrics-bind-address ("0" = off) */
    const char *health_bind;         /* --health-probe-bind-address ("0" = off) */
    long resync_ms;                  /* --sync-period: every Etcd requeued this often (0 = off) */
    long shutdown_ms;                /* --graceful-shutdown-timeout */
    const char *config_file;         /* --config */
    int verbosity;                   /* -v / --v */
    int help;                        /* -h / --help */
    struct flagfile file;            /* OWNS: argument strings made from the config file */
};

/*
 * Parse argv (and the --config file it names). On KERR_OK the config is
 * filled and checked (c->help set means: print ctl_config_help and exit 0,
 * nothing else is checked). On error (KERR_INVAL, KERR_PARSE, KERR_IO) the
 * message names the flag or the file:line: key. Call ctl_config_release in
 * every case.
 */
enum kerr ctl_config_load(struct ctl_config *c, int argc, char **argv, struct kerr_info *err);

/* Free what the config owns. Safe to call twice. */
void ctl_config_release(struct ctl_config *c);

/* The --help text (every flag, its default, the signals). *out TAKES a malloc'd string. */
enum kerr ctl_config_help(char **out, struct kerr_info *err);

#endif
