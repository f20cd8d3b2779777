/* wh_config - flags and the YAML config file; see wh_config.h. */
#include "webhook/wh_config.h"

#include <stdlib.h>
#include <string.h>

#include "common/flagfile.h"

#define MAX_FLAGS 40

static const char summary[] =
    "Admission webhook for etcd-druid Etcd clusters: etcd-druid's component protection\n"
    "(/webhooks/etcdcomponents), the restoring rules for Etcd objects (/webhooks/etcd), the\n"
    "mutating patches for restored objects (/webhooks/etcd-mutate) and the scale-down guard\n"
    "alone (/webhooks/scaleguard), over HTTPS.";

static size_t make_table(struct wh_config *c, struct proc_flag *out)
{
    const struct proc_flag t[] = {
        { "config", PROC_FLAG_STRING, &c->config_file, "",
          "YAML file with these settings (keys are the flag names); flags win" },
        { "reconciler-service-account", PROC_FLAG_LIST, &c->reconcilers, NULL,
          "trusted reconciler usernames system:serviceaccount:<ns>:<name> (required, at least "
          "one)" },
        { "controller-service-account", PROC_FLAG_LIST, &c->controllers, NULL,
          "warden-controller's usernames: the only writers of the Etcd state annotations "
          "(default: the reconcilers named warden-controller)" },
        { "etcd-components-webhook-exempt-service-accounts", PROC_FLAG_LIST, &c->exempt, NULL,
          "usernames exempt from component protection" },
        { "enable-etcd-components-webhook", PROC_FLAG_BOOL, &c->enable_components, "true",
          "serve /webhooks/etcdcomponents (accepted for etcd-druid compatibility)" },
        { "webhook-server-port", PROC_FLAG_INT, &c->port, "9443", "HTTPS port" },
        { "webhook-server-tls-server-cert-dir", PROC_FLAG_STRING, &c->cert_dir,
          "/etc/webhook-server-tls", "directory holding tls.crt and tls.key (watched)" },
        { "webhook-server-bind-address", PROC_FLAG_STRING, &c->bind, "",
          "address to listen on (empty: every address)" },
        { "kubeconfig", PROC_FLAG_STRING, &c->kubeconfig, "",
          "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)" },
        { "metrics-bind-address", PROC_FLAG_STRING, &c->metrics_bind, ":8080",
          "host:port of /metrics (\"0\" disables)" },
        { "health-probe-bind-address", PROC_FLAG_STRING, &c->health_bind, ":8081",
          "host:port of /healthz and /readyz (\"0\" disables)" },
        { "watch-namespace", PROC_FLAG_STRING, &c->watch_namespace, "",
          "cache Etcds, StatefulSets and EtcdOpsTasks of this namespace only (empty: all)" },
        { "webhook-server-max-request-bytes", PROC_FLAG_INT, &c->max_body, "3145728",
          "largest AdmissionReview body accepted (413 above)" },
        { "webhook-server-max-buffered-bytes", PROC_FLAG_INT, &c->max_buffered, "67108864",
          "bytes of review bodies held by all connections at once (503 above)" },
        { "webhook-server-idle-timeout", PROC_FLAG_DURATION, &c->conn_timeout_ms, "30s",
          "close connections idle this long once they sent a request" },
        { "webhook-server-handshake-timeout", PROC_FLAG_DURATION, &c->handshake_timeout_ms, "10s",
          "close a connection that sends no request this long after its TLS handshake" },
        { "webhook-server-max-connections", PROC_FLAG_INT, &c->conn_limit, "1000",
          "concurrent connections" },
        { "webhook-server-max-connections-per-ip", PROC_FLAG_INT, &c->per_ip_limit, "256",
          "concurrent connections from one address" },
        { "webhook-server-request-timeout", PROC_FLAG_DURATION, &c->budget_ms, "10s",
          "time budget of one request, first byte to answer" },
        { "webhook-server-threads", PROC_FLAG_INT, &c->threads, "0",
          "server threads (0: one per core)" },
        { "cache-fallback-limit", PROC_FLAG_INT, &c->fallbacks, "-1",
          "concurrent API calls after cache misses (0: none, -1: half the server threads)" },
        { "backup-entries", PROC_FLAG_BOOL, &c->backup_entries, "false",
          "refuse an Etcd whose backup prefix overlaps another Etcd's or BackupEntry's "
          "(needs the BackupEntry CRD)" },
        { "etcd-backups", PROC_FLAG_BOOL, &c->etcd_backups, "false",
          "with --backup-entries, also an Etcd whose backup prefix overlaps an EtcdBackup's "
          "copies (needs the EtcdBackup CRD)" },
        { "local-volume-guard", PROC_FLAG_BOOL, &c->local_volume_guard, "false",
          "with --backup-entries, the Etcds' StatefulSet CREATEs and UPDATEs are routed to this "
          "webhook (the chart sets it), so no StatefulSet mounts a Local directory its Etcd could "
          "not claim, and another namespace's claim on a partitioned Local bucket's own directory "
          "is in nobody's way in their own part" },
        { "compact-cache", PROC_FLAG_BOOL, &c->compact_cache, "true",
          "keep cached objects as text: less memory, a parse per lookup" },
        { "graceful-shutdown-timeout", PROC_FLAG_DURATION, &c->shutdown_ms, "30s",
          "how long reviews in flight may finish after SIGTERM" },
        { "cert-poll-interval", PROC_FLAG_DURATION, &c->cert_poll_ms, "1s",
          "how often tls.crt and tls.key are checked for changes" },
        { "self-provision-tls", PROC_FLAG_BOOL, &c->self_tls, "false",
          "generate the CA and serving certificate, keep them in a Secret, patch caBundle" },
        { "tls-secret-name", PROC_FLAG_STRING, &c->tls_secret, "warden-webhook-tls",
          "Secret holding the self-provisioned CA and certificate" },
        { "tls-namespace", PROC_FLAG_STRING, &c->tls_namespace, "",
          "namespace of that Secret and the Service (empty: the client's namespace)" },
        { "tls-service-name", PROC_FLAG_STRING, &c->tls_service, "warden-webhook",
          "Service the API server calls (the certificate's DNS names)" },
        { "validating-webhook-configuration", PROC_FLAG_LIST, &c->vwcs, NULL,
          "ValidatingWebhookConfigurations to patch caBundle into" },
        { "mutating-webhook-configuration", PROC_FLAG_LIST, &c->mwcs, NULL,
          "MutatingWebhookConfigurations to patch caBundle into" },
        { "tls-cert-lifetime", PROC_FLAG_DURATION, &c->cert_lifetime_ms, "8760h",
          "lifetime of a self-provisioned serving certificate (renewed at 2/3)" },
        { "client-ca", PROC_FLAG_STRING, &c->client_ca, "",
          "PEM CA bundle: webhook requests need a client certificate it signed (the API "
          "server's; empty: none asked)" },
        { "client-cn", PROC_FLAG_STRING, &c->client_cn, "",
          "with --client-ca, the subject CN the client certificate must carry" },
    };
    size_t n = sizeof(t) / sizeof(t[0]);

    memcpy(out, t, sizeof(t));
    return n;
}

void wh_config_release(struct wh_config *c)
{
    struct proc_flag f[MAX_FLAGS];
    size_t n = make_table(c, f);

    proc_flags_release(f, n);
    flagfile_release(&c->file);
}

enum kerr wh_config_help(char **out, struct kerr_info *err)
{
    struct wh_config c;
    struct proc_flag f[MAX_FLAGS];
    size_t n;
    enum kerr rc;

    memset(&c, 0, sizeof(c));
    n = make_table(&c, f);
    rc = proc_flags_help("warden-webhook", summary, f, n, out, err);
    return rc;
}

static enum kerr check_users(const struct proc_strv *l, const char *flag, struct kerr_info *err)
{
    size_t i;

    for (i = 0; i < l->n; i++) {
        if (!l->v[i][0] || strchr(l->v[i], ' '))
            return kerr_set(err, KERR_INVAL, "--%s: \"%s\" is not a username", flag, l->v[i]);
    }
    return KERR_OK;
}

static enum kerr range(long v, long lo, long hi, const char *flag, struct kerr_info *err)
{
    if (v < lo || v > hi)
        return kerr_set(err, KERR_INVAL, "--%s: %ld is out of range [%ld, %ld]", flag, v, lo, hi);
    return KERR_OK;
}

static enum kerr validate(const struct wh_config *c, struct kerr_info *err)
{
    enum kerr rc;

    if (c->reconcilers.n == 0)
        return kerr_set(err, KERR_INVAL,
                        "--reconciler-service-account: at least one trusted reconciler is "
                        "required (system:serviceaccount:<namespace>:<name>)");
    if ((rc = check_users(&c->reconcilers, "reconciler-service-account", err)) ||
        (rc = check_users(&c->controllers, "controller-service-account", err)) ||
        (rc = check_users(&c->exempt, "etcd-components-webhook-exempt-service-accounts", err)) ||
        (rc = range(c->port, 1, 65535, "webhook-server-port", err)) ||
        (rc = range(c->max_body, 1024, 1L << 30, "webhook-server-max-request-bytes", err)) ||
        (rc = range(c->max_buffered, c->max_body, 1L << 34, "webhook-server-max-buffered-bytes",
                    err)) ||
        (rc = range(c->conn_timeout_ms, 1000, 3600000, "webhook-server-idle-timeout", err)) ||
        (rc = range(c->handshake_timeout_ms, 1000, 3600000, "webhook-server-handshake-timeout",
                    err)) ||
        (rc = range(c->conn_limit, 1, 100000, "webhook-server-max-connections", err)) ||
        (rc = range(c->per_ip_limit, 0, 100000, "webhook-server-max-connections-per-ip", err)) ||
        (rc = range(c->budget_ms, 100, 600000, "webhook-server-request-timeout", err)) ||
        (rc = range(c->threads, 0, 256, "webhook-server-threads", err)) ||
        (rc = range(c->fallbacks, -1, 1000, "cache-fallback-limit", err)) ||
        (rc = range(c->shutdown_ms, 0, 3600000, "graceful-shutdown-timeout", err)) ||
        (rc = range(c->cert_poll_ms, 10, 3600000, "cert-poll-interval", err)))
        return rc;
    if (!c->self_tls && !*c->cert_dir)
        return kerr_set(err, KERR_INVAL,
                        "--webhook-server-tls-server-cert-dir: required unless "
                        "--self-provision-tls is set");
    if (c->self_tls && (!*c->tls_secret || !*c->tls_service))
        return kerr_set(err, KERR_INVAL,
                        "--self-provision-tls needs --tls-secret-name and --tls-service-name");
    if (c->self_tls && c->cert_lifetime_ms < 3600000L)
        return kerr_set(err, KERR_INVAL, "--tls-cert-lifetime: at least 1h");
    if (c->etcd_backups && !c->backup_entries)
        return kerr_set(err, KERR_INVAL,
                        "--etcd-backups needs --backup-entries: it adds EtcdBackups' copies to the "
                        "prefix check that --backup-entries turns on");
    if (c->local_volume_guard && !c->backup_entries)
        return kerr_set(err, KERR_INVAL,
                        "--local-volume-guard needs --backup-entries: the StatefulSets' Local "
                        "directories are judged against the claims that flag caches");
    if (*c->client_cn && !*c->client_ca)
        return kerr_set(err, KERR_INVAL,
                        "--client-cn needs --client-ca: the CN of a client certificate is checked "
                        "only once the certificate is verified against that CA bundle");
    if (!c->self_tls && (c->vwcs.n || c->mwcs.n))
        return kerr_set(err, KERR_INVAL,
                        "--validating-webhook-configuration and --mutating-webhook-configuration "
                        "name what --self-provision-tls patches its CA into: set it, or patch "
                        "caBundle yourself");
    return KERR_OK;
}

enum kerr wh_config_load(struct wh_config *c, int argc, char **argv, struct kerr_info *err)
{
    struct proc_flag f[MAX_FLAGS];
    size_t nf;
    enum kerr rc;

    memset(c, 0, sizeof(*c));
    nf = make_table(c, f);
    rc = flagfile_parse(f, nf, "warden-webhook", "config", WH_CONFIG_MAX_FILE, argc, argv, &c->file,
                        err);
    c->help = c->file.help;
    c->verbosity = c->file.verbosity;
    if (rc || c->help)
        return rc;
    return validate(c, err);
}
