/*
 * warden-webhook - the admission webhook process: flags and config, the API
 * client, the caches, TLS (files or self-provisioned), the HTTPS server,
 * /metrics, /healthz and /readyz, and a graceful drain on SIGTERM.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cfg.h"
#include "common/events.h"
#include "common/httpsrv.h"
#include "common/jarena.h"
#include "common/k8s.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/proc.h"
#include "common/procmetrics.h"
#include "webhook/prefix.h"
#include "webhook/prefix_cache.h"
#include "webhook/wh_cache.h"
#include "webhook/wh_clientauth.h"
#include "webhook/wh_config.h"
#include "webhook/wh_dispatch.h"
#include "webhook/wh_selftls.h"
#include "webhook/wh_server.h"
#include "webhook/wh_tls.h"

struct app {
    struct wh_config cfg;
    struct metrics_registry *reg;
    struct k8s_client *client;
    struct wh_cache *cache;
    struct prefix_cache *prefixes; /* with --backup-entries */
    struct ev_recorder *events;
    struct lookup lookup;
    struct wh_tls *tls;
    struct wh_selftls *selftls;
    struct wh_clientauth *client_auth; /* OWNS or NULL: --client-ca */
    struct protect_config protect;
    struct wh_dispatch dispatch;
    struct wh_server *server;
    struct httpsrv *metrics_srv, *health_srv;
    struct metrics_vec *cache_objects, *cache_lookups; /* BORROWED from reg */
    struct metrics_vec *cache_rv;                      /* BORROWED from reg */
    struct metrics_vec *cross_refusals;                /* BORROWED from reg */
    /* warden-controller's identities: --controller-service-account, or the reconcilers named so */
    const char *controllers[8];
};

#define CONTROLLER_SUFFIX ":warden-controller"
#define MMAP_THRESHOLD    (128 * 1024)

/* The writers of the state annotations (webhook/toggles.h). */
static void pick_controllers(struct app *a)
{
    const struct proc_strv *l = a->cfg.controllers.n ? &a->cfg.controllers : &a->cfg.reconcilers;
    size_t i, n = 0, ls = strlen(CONTROLLER_SUFFIX);

    for (i = 0; i < l->n && n < sizeof(a->controllers) / sizeof(a->controllers[0]); i++) {
        size_t len = strlen(l->v[i]);

        if (a->cfg.controllers.n ||
            (len > ls && strcmp(l->v[i] + len - ls, CONTROLLER_SUFFIX) == 0))
            a->controllers[n++] = l->v[i];
    }
    a->protect.controllers = a->controllers;
    a->protect.n_controllers = n;
    if (n == 0)
        log_info("no warden-controller identity (--controller-service-account): the Etcd state "
                 "annotations can be written by nobody");
}

static enum kerr ready_caches(void *ctx, struct kerr_info *err)
{
    struct app *a = ctx;

    return wh_cache_synced(a->cache) && (!a->prefixes || prefix_cache_synced(a->prefixes))
               ? KERR_OK
               : kerr_set(err, KERR_UNSUPPORTED, "not synced");
}

static enum kerr ready_tls(void *ctx, struct kerr_info *err)
{
    struct app *a = ctx;

    return wh_tls_ready(a->tls) ? KERR_OK : kerr_set(err, KERR_TLS, "no certificate");
}

static enum kerr healthy(void *ctx, struct kerr_info *err)
{
    (void)ctx;
    (void)err;
    return KERR_OK;
}

static enum kerr start_client(struct app *a, struct kerr_info *err)
{
    struct k8s_client_opts o = { 0 };
    struct cfg_rest rest;
    enum kerr rc;

    /* A lookup after a cache miss must end well within the review's time budget. */
    o.request_timeout_ms = a->cfg.budget_ms / 2;
    cfg_rest_init(&rest);
    rc = cfg_load_default(*a->cfg.kubeconfig ? a->cfg.kubeconfig : NULL, &rest, err);
    if (!rc)
        rc = k8s_client_new(&rest, &o, &a->client, err);
    cfg_rest_release(&rest);
    if (rc)
        return kerr_wrap(err, "--kubeconfig");
    return KERR_OK;
}

/* inf_rv_fn: an informer's resourceVersion as a gauge, when it is a number (kube-apiserver's
 * are etcd's revisions; a client may not rely on that, so this is for tests and debugging). */
static void set_rv(void *ctx, const char *name, const char *rv)
{
    struct app *a = ctx;
    const char *v[2] = { name, NULL };
    char *end = NULL;
    double d = strtod(rv, &end);

    if (*rv && end && !*end)
        metrics_vec_set(a->cache_rv, v, d);
}

/* Render hook: the cache counters as metrics. */
static void render_cache(void *ctx)
{
    struct app *a = ctx;
    struct wh_cache_stats st;
    const char *v[2] = { NULL, NULL };

    wh_cache_stats(a->cache, &st);
    v[0] = "etcds";
    metrics_vec_set(a->cache_objects, v, (double)st.etcds);
    v[0] = "statefulsets";
    metrics_vec_set(a->cache_objects, v, (double)st.stses);
    v[0] = "etcdopstasks";
    metrics_vec_set(a->cache_objects, v, (double)st.tasks);
    v[0] = "hit";
    metrics_vec_set(a->cache_lookups, v, (double)st.hits);
    v[0] = "api";
    metrics_vec_set(a->cache_lookups, v, (double)st.fallbacks);
    v[0] = "refused";
    metrics_vec_set(a->cache_lookups, v, (double)st.refused);
    wh_cache_report_rv(a->cache, set_rv, a);
    if (a->prefixes)
        prefix_cache_report_rv(a->prefixes, set_rv, a);
}

static enum kerr cache_metrics(struct app *a, struct kerr_info *err)
{
    static const char *const by_resource[] = { "resource", NULL };
    static const char *const by_result[] = { "result", NULL };
    static const char *const by_namespace[] = { "namespace", NULL };
    static const char *const by_cache[] = { "cache", NULL };
    enum kerr rc;

    if ((rc = metrics_register(a->reg, METRICS_GAUGE, "warden_webhook_cache_objects",
                               "Objects held by the webhook's caches.", by_resource, NULL, 0,
                               &a->cache_objects, err)) ||
        (rc = metrics_register(a->reg, METRICS_COUNTER, "warden_webhook_cache_lookups_total",
                               "Parent lookups: answered by a cache (hit), by an API call after "
                               "a miss (api), or refused past the fallback limit (refused).",
                               by_result, NULL, 0, &a->cache_lookups, err)) ||
        (rc = metrics_register(a->reg, METRICS_COUNTER,
                               "warden_webhook_prefix_refusals_cross_namespace_total",
                               "Claims (an Etcd's prefix, a copy's or restore's destination) "
                               "refused over a prefix claimed from another namespace, by the "
                               "requesting namespace: many of them are a namespace probing "
                               "the others' prefixes.",
                               by_namespace, NULL, 0, &a->cross_refusals, err)) ||
        (rc = metrics_register(a->reg, METRICS_GAUGE, "warden_webhook_cache_resource_version",
                               "The resourceVersion each cache has applied up to (its last "
                               "event or watch bookmark), when it is a number.",
                               by_cache, NULL, 0, &a->cache_rv, err)))
        return rc;
    return metrics_on_render(a->reg, render_cache, a, err);
}

/*
 * How many server threads may wait on the API server after a cache miss at
 * once: by default half of them (at least one), so the others keep answering
 * from the caches while the API server is slow.
 */
static int fallback_limit(const struct wh_config *c)
{
    long threads = c->threads > 0 ? c->threads : sysconf(_SC_NPROCESSORS_ONLN);

    if (c->fallbacks == 0)
        return -1; /* wh_cache: no fallback */
    if (c->fallbacks > 0)
        return (int)c->fallbacks;
    return threads > 2 ? (int)(threads / 2) : 1;
}

static enum kerr start_cache(struct app *a, struct kerr_info *err)
{
    struct wh_cache_opts o = { 0 };
    enum kerr rc;

    o.client = a->client;
    o.ns = *a->cfg.watch_namespace ? a->cfg.watch_namespace : NULL;
    o.fallback_limit = fallback_limit(&a->cfg);
    o.compact = a->cfg.compact_cache;
    if ((rc = wh_cache_new(&o, &a->cache, err)) || (rc = cache_metrics(a, err)) ||
        (rc = wh_cache_start(a->cache, err)))
        return rc;
    wh_cache_bind(a->cache, &a->lookup);
    if (a->cfg.backup_entries &&
        /* claims are cluster-wide, whatever --watch-namespace says; recorded in Leases of
         * the webhook's own namespace (common/pclaim) */
        ((rc = prefix_cache_new(&(struct prefix_cache_opts){ a->client, NULL, a->cfg.etcd_backups,
                                                             k8s_client_namespace(a->client),
                                                             a->cross_refusals,
                                                             a->cfg.local_volume_guard },
                                &a->prefixes, err)) ||
         (rc = prefix_cache_start(a->prefixes, err))))
        return rc;
    return KERR_OK;
}

static enum kerr start_tls(struct app *a, struct kerr_info *err)
{
    struct wh_tls_opts to = { 0 };
    struct wh_selftls_opts so = { 0 };
    char cert[4096], key[4096];
    enum kerr rc;

    to.poll_ms = a->cfg.cert_poll_ms;
    to.registry = a->reg;
    if (!a->cfg.self_tls) {
        snprintf(cert, sizeof(cert), "%s/tls.crt", a->cfg.cert_dir);
        snprintf(key, sizeof(key), "%s/tls.key", a->cfg.cert_dir);
        to.cert_file = cert;
        to.key_file = key;
        if ((rc = wh_tls_new(&to, &a->tls, err)))
            return kerr_wrap(err, "--webhook-server-tls-server-cert-dir");
        return wh_tls_start_watch(a->tls, err);
    }
    if ((rc = wh_tls_new(&to, &a->tls, err)))
        return rc;
    so.client = a->client;
    so.ns = *a->cfg.tls_namespace ? a->cfg.tls_namespace : k8s_client_namespace(a->client);
    so.secret = a->cfg.tls_secret;
    so.service = a->cfg.tls_service;
    so.vwcs = (const char *const *)a->cfg.vwcs.v;
    so.nvwcs = a->cfg.vwcs.n;
    so.mwcs = (const char *const *)a->cfg.mwcs.v;
    so.nmwcs = a->cfg.mwcs.n;
    so.lifetime_s = a->cfg.cert_lifetime_ms / 1000;
    so.tls = a->tls;
    if ((rc = wh_selftls_new(&so, &a->selftls, err)) || (rc = wh_selftls_ensure(a->selftls, err)))
        return kerr_wrap(err, "--self-provision-tls");
    return wh_selftls_start(a->selftls, err);
}

static enum kerr start_probes(struct app *a, struct kerr_info *err)
{
    struct httpsrv_opts o = { 0 };
    enum kerr rc;

    if (strcmp(a->cfg.metrics_bind, "0") != 0) {
        o.bind = a->cfg.metrics_bind;
        o.registry = a->reg;
        if ((rc = httpsrv_new(&o, &a->metrics_srv, err)) ||
            (rc = httpsrv_start(a->metrics_srv, err)))
            return kerr_wrap(err, "--metrics-bind-address %s", a->cfg.metrics_bind);
    }
    if (strcmp(a->cfg.health_bind, "0") == 0)
        return KERR_OK;
    o.bind = a->cfg.health_bind;
    o.registry = NULL;
    if ((rc = httpsrv_new(&o, &a->health_srv, err)) ||
        (rc = httpsrv_add_check(a->health_srv, HTTPSRV_HEALTHZ, "ping", healthy, a, err)) ||
        (rc = httpsrv_add_check(a->health_srv, HTTPSRV_READYZ, "caches-synced", ready_caches, a,
                                err)) ||
        (rc = httpsrv_add_check(a->health_srv, HTTPSRV_READYZ, "tls-certificate", ready_tls, a,
                                err)) ||
        (rc = httpsrv_start(a->health_srv, err)))
        return kerr_wrap(err, "--health-probe-bind-address %s", a->cfg.health_bind);
    return KERR_OK;
}

/* The recorder of the scale-down guard's break-glass events, named after the host (the pod). */
static enum kerr start_events(struct app *a, struct kerr_info *err)
{
    struct ev_opts o = { 0 };
    char host[128];

    if (gethostname(host, sizeof(host)) != 0 || !*host)
        snprintf(host, sizeof(host), "warden-webhook");
    host[sizeof(host) - 1] = '\0';
    o.reporting_controller = "etcd-warden.io/warden-webhook";
    o.reporting_instance = host;
    return ev_new(a->client, &o, &a->events, err);
}

static enum kerr start_server(struct app *a, struct kerr_info *err)
{
    struct wh_server_opts o = { 0 };
    enum kerr rc;

    a->protect.reconcilers = (const char *const *)a->cfg.reconcilers.v;
    a->protect.n_reconcilers = a->cfg.reconcilers.n;
    a->protect.exempt = (const char *const *)a->cfg.exempt.v;
    a->protect.n_exempt = a->cfg.exempt.n;
    a->protect.events = a->events;
    pick_controllers(a);
    if ((rc = wh_dispatch_init(&a->dispatch, &a->protect, &a->lookup, a->reg, err)))
        return rc;
    a->dispatch.disabled[WH_HOOK_COMPONENTS] = !a->cfg.enable_components;
    a->dispatch.prefix = a->prefixes;
    a->dispatch.disabled[WH_HOOK_BACKUPS] = !a->prefixes;
    o.bind_address = a->cfg.bind;
    o.port = (unsigned short)a->cfg.port;
    o.threads = (unsigned int)a->cfg.threads;
    o.conn_timeout_s = (unsigned int)((a->cfg.conn_timeout_ms + 999) / 1000);
    o.handshake_timeout_s = (unsigned int)((a->cfg.handshake_timeout_ms + 999) / 1000);
    o.conn_limit = (unsigned int)a->cfg.conn_limit;
    o.per_ip_limit = (unsigned int)a->cfg.per_ip_limit;
    o.max_body = (size_t)a->cfg.max_body;
    o.max_buffered = (size_t)a->cfg.max_buffered;
    o.budget_ms = a->cfg.budget_ms;
    o.tls = a->tls;
    o.client_auth = a->client_auth;
    o.dispatch = &a->dispatch;
    o.registry = a->reg;
    if ((rc = wh_server_new(&o, &a->server, err)) || (rc = wh_server_start(a->server, err)))
        return kerr_wrap(err, "--webhook-server-port %ld", a->cfg.port);
    return KERR_OK;
}

/* --client-ca, read before anything else starts: a bundle that cannot be used is fatal. */
static enum kerr load_client_auth(struct app *a, struct kerr_info *err)
{
    if (!*a->cfg.client_ca)
        return KERR_OK;
    if (wh_clientauth_new(a->cfg.client_ca, a->cfg.client_cn, &a->client_auth, err))
        return kerr_wrap(err, "--client-ca");
    log_info("webhook requests need a client certificate", "client-ca", a->cfg.client_ca,
             "client-cn", *a->cfg.client_cn ? a->cfg.client_cn : "(any)");
    return KERR_OK;
}

static enum kerr start(struct app *a, struct kerr_info *err)
{
    enum kerr rc;

    if ((rc = load_client_auth(a, err)) || (rc = metrics_registry_new(&a->reg, err)) ||
        (rc = procmetrics_register(a->reg, err)) || (rc = start_client(a, err)) ||
        (rc = start_cache(a, err)) || (rc = start_events(a, err)) || (rc = start_tls(a, err)) ||
        (rc = start_server(a, err)) || (rc = start_probes(a, err)))
        return rc;
    log_info("warden-webhook started", "reconcilers", a->cfg.reconcilers.v[0]);
    return KERR_OK;
}

static void run(struct app *a)
{
    struct kerr_info err;

    while (!proc_wait_shutdown(-1)) {
        if (!proc_take_reload())
            continue;
        kerr_clear(&err);
        if (wh_tls_reload(a->tls, &err))
            log_warn("reload on SIGHUP failed", "error", err.msg);
    }
    log_info("shutting down: draining the reviews in flight");
}

static void stop(struct app *a)
{
    char left[24];

    if (a->server) {
        snprintf(left, sizeof(left), "%ld", wh_server_drain(a->server, a->cfg.shutdown_ms));
        log_info("webhook server stopped", "unfinished", left);
    }
    httpsrv_free(a->health_srv);
    httpsrv_free(a->metrics_srv);
    wh_server_free(a->server);
    wh_clientauth_free(a->client_auth);
    ev_free(a->events);
    wh_selftls_free(a->selftls);
    if (a->client)
        k8s_client_stop(a->client);
    wh_cache_free(a->cache);
    prefix_cache_free(a->prefixes);
    wh_tls_free(a->tls);
    k8s_client_free(a->client);
    metrics_registry_free(a->reg);
}

int main(int argc, char **argv)
{
    struct app a;
    struct kerr_info err;
    char *help = NULL;
    int status = 0;

    memset(&a, 0, sizeof(a));
    kerr_clear(&err);
    /*
     * Request bodies and their filtered copies (up to 3 MiB each) in pages of
     * their own, returned on free: glibc's moving threshold would otherwise
     * keep them in the heap after the first one (webhook RSS under load).
     */
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    /* Before any thread and any cJSON call: reviews are parsed into per-thread arenas. */
    if (jarena_install(&err)) {
        fprintf(stderr, "warden-webhook: %s\n", err.msg);
        return 1;
    }
    if (wh_config_load(&a.cfg, argc, argv, &err)) {
        fprintf(stderr, "warden-webhook: %s\n", err.msg);
        wh_config_release(&a.cfg);
        return 2;
    }
    if (a.cfg.help) {
        if (wh_config_help(&help, &err) == KERR_OK)
            fputs(help, stdout);
        free(help);
        wh_config_release(&a.cfg);
        return 0;
    }
    log_set_level(log_level_from_verbosity(a.cfg.verbosity));
    if (proc_signals_install(&err) || start(&a, &err)) {
        log_error("cannot start", "error", err.msg);
        fprintf(stderr, "warden-webhook: %s\n", err.msg);
        status = 1;
    } else {
        run(&a);
    }
    stop(&a);
    wh_config_release(&a.cfg);
    return status;
}
