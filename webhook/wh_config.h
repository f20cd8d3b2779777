/*
 * wh_config - the settings of warden-webhook: command-line flags (etcd-druid's
 * names where they exist) and the same settings in a YAML file (--config).
 *
 * The YAML file is one mapping whose keys are the flag names without the
 * dashes; a value is a scalar, or a list for the list flags:
 *
 *   reconciler-service-account:
 *     - system:serviceaccount:etcd-druid:etcd-druid
 *     - system:serviceaccount:etcd-warden:warden-controller
 *   etcd-components-webhook-exempt-service-accounts:
 *     - system:serviceaccount:kube-system:generic-garbage-collector
 *   webhook-server-port: 9443
 *
 * A flag given on the command line wins over the file. Every error names
 * the flag, or the file, line and key: an unknown flag or key, a bad
 * value, a missing required setting.
 *
 * Ownership: struct wh_config is embedded (wh_config_load /
 * wh_config_release); its strings are BORROWED from argv, the defaults or
 * its own copies of the file's values, and live until the release.
 * Thread safety: for main() before threads start.
 */
#ifndef WEBHOOK_WH_CONFIG_H
#define WEBHOOK_WH_CONFIG_H

#include <stddef.h>

#include "common/flagfile.h"
#include "common/kerr.h"
#include "common/proc.h"

#define WH_CONFIG_MAX_FILE (1024u * 1024u)

struct wh_config {
    struct proc_strv reconcilers; /* --reconciler-service-account (repeatable, commas split) */
    struct proc_strv controllers; /* --controller-service-account (none: see main.c) */
    struct proc_strv exempt;      /* --etcd-components-webhook-exempt-service-accounts */
    int enable_components;        /* --enable-etcd-components-webhook (accepted; default true) */
    long port;                    /* --webhook-server-port */
    const char *cert_dir;         /* --webhook-server-tls-server-cert-dir */
    const char *bind;             /* --webhook-server-bind-address */
    const char *kubeconfig;       /* --kubeconfig ("" = in-cluster / default lookup) */
    const char *metrics_bind;     /* --metrics-bind-address ("0" = off) */
    const char *health_bind;      /* --health-probe-bind-address ("0" = off) */
    const char *config_file;      /* --config */
    const char *watch_namespace;  /* --watch-namespace ("" = all) */
    long max_body;                /* --webhook-server-max-request-bytes */
    long max_buffered;            /* --webhook-server-max-buffered-bytes */
    long conn_timeout_ms;         /* --webhook-server-idle-timeout */
    long handshake_timeout_ms;    /* --webhook-server-handshake-timeout */
    long conn_limit;              /* --webhook-server-max-connections */
    long per_ip_limit;            /* --webhook-server-max-connections-per-ip */
    long budget_ms;               /* --webhook-server-request-timeout */
    long threads;                 /* --webhook-server-threads (0 = cores) */
    long fallbacks;               /* --cache-fallback-limit (-1: auto, 0: none) */
    long shutdown_ms;             /* --graceful-shutdown-timeout */
    long cert_poll_ms;            /* --cert-poll-interval */
    int compact_cache;            /* --compact-cache */
    int backup_entries;           /* --backup-entries: one prefix, one cluster (webhook/prefix.h) */
    int etcd_backups;             /* --etcd-backups: EtcdBackup copies are claims too */
    int local_volume_guard;    /* --local-volume-guard: the Etcds' StatefulSets are routed here */
    int self_tls;              /* --self-provision-tls */
    const char *tls_secret;    /* --tls-secret-name */
    const char *tls_namespace; /* --tls-namespace ("" = the client's namespace) */
    const char *tls_service;   /* --tls-service-name */
    struct proc_strv vwcs;     /* --validating-webhook-configuration */
    struct proc_strv mwcs;     /* --mutating-webhook-configuration */
    long cert_lifetime_ms;     /* --tls-cert-lifetime */
    const char *client_ca;     /* --client-ca ("" = no client certificate asked) */
    const char *client_cn;     /* --client-cn ("" = any CN the CA signed) */
    int verbosity;             /* -v / --v */
    int help;                  /* -h / --help */
    struct flagfile file;      /* OWNS: argument strings made from the config file */
};

/*
 * Parse argv (and the --config file it names). On KERR_OK the config is
 * filled and checked (c->help set means: print wh_config_help and exit 0,
 * nothing else is checked). On error the message names the flag or the
 * file:line: key. Call wh_config_release in every case.
 */
enum kerr wh_config_load(struct wh_config *c, int argc, char **argv, struct kerr_info *err);

/* Free what the config owns. Safe to call twice. */
void wh_config_release(struct wh_config *c);

/* The --help text. *out TAKES a malloc'd string. */
enum kerr wh_config_help(char **out, struct kerr_info *err);

#endif
