/* ctl - the warden-controller process; see ctl.h. */
#include "controller/core/ctl.h"
#include "controller/core/ctl_int.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/cfg.h"
#include "common/events.h"
#include "common/httpsrv.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/leader.h"
#include "common/log.h"
#include "common/proc.h"
#include "common/workqueue.h"
#include "common/wqpool.h"
#include "controller/core/ctl_cap.h"
#include "controller/core/ctl_caches.h"
#include "controller/core/ctl_config.h"
#include "controller/core/ctl_lane.h"
#include "controller/core/ctl_metrics.h"
#include "controller/core/ctl_table.h"

#define SUPERVISE_MS 20L

/* ---- the contract's accessors ---- */

struct k8s_client *ctl_client(struct ctl *c)
{
    return c->client;
}

struct ev_recorder *ctl_events(struct ctl *c)
{
    return c->events;
}

sem_t *ctl_repair_slots(struct ctl *c)
{
    return c->slots_made ? &c->repair_slots : NULL;
}

long long ctl_now_ms(const struct ctl *c)
{
    struct timespec ts;

    if (c->o.now_ms)
        return c->o.now_ms();
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const struct ctl_config *ctl_cfg(const struct ctl *c)
{
    return c->cfg;
}

struct store *ctl_store(struct ctl *c, const char *resource)
{
    return ctl_caches_store(c->caches, resource);
}

struct metrics_registry *ctl_metrics(struct ctl *c)
{
    return ctl_metrics_registry(c->metrics);
}

void ctl_enqueue(struct ctl *c, const char *kind, const char *ns, const char *name, long after_ms)
{
    char key[WQ_KEY_MAX];
    int n = snprintf(key, sizeof(key), "%s/%s/%s", kind, ns ? ns : "", name);

    const struct ctl_key *k = ctl_table_key(&c->table, kind);

    if (n <= 0 || (size_t)n >= sizeof(key))
        return;
    if (k && k->lane_workers && c->lane)
        ctl_lane_add(c->lane, key, after_ms);
    else
        (void)wq_add_after(c->queue, key, after_ms);
}

void ctl_enqueue_obj(struct ctl *c, const char *kind, const cJSON *obj, const char *name)
{
    const char *ns = kjson_get_str(obj, "metadata.namespace");

    if (name && *name)
        ctl_enqueue(c, kind, ns ? ns : "", name, 0);
}

void ctl_enqueue_etcd(struct ctl *c, const char *ns, const char *name, long after_ms)
{
    ctl_enqueue(c, "etcd", ns, name, after_ms);
}

int ctl_synced(struct ctl *c)
{
    return ctl_caches_synced(c->caches);
}

int ctl_leading(struct ctl *c)
{
    return atomic_load(&c->leading);
}

int64_t ctl_working_since(struct ctl *c)
{
    return (int64_t)atomic_load(&c->working_since);
}

const atomic_int *ctl_stopping_flag(struct ctl *c)
{
    return &c->stopping;
}

const atomic_int *ctl_cancel_flag(struct ctl *c)
{
    static const atomic_int never = 0;

    return c->lane ? ctl_lane_cancel_flag(c->lane) : &never;
}

/* ---- the capabilities' services ---- */

enum kerr ctl_call(struct ctl *c, const char *name, int optional, const cJSON *etcd,
                   struct ctl_result *res, struct kerr_info *err)
{
    const struct ctl_service *sv = ctl_table_service(&c->table, name);

    if (sv)
        return sv->fn(c, etcd, res, err);
    return optional ? KERR_OK : kerr_set(err, KERR_UNSUPPORTED, "no capability offers %s", name);
}

/* ---- leader election and the supervisor ---- */

static void started_leading(void *arg)
{
    struct ctl *c = arg;

    atomic_store(&c->leading, 1);
    log_info("leading", "lease", c->cfg->le_id, "identity", c->identity);
}

static void stopped_leading(void *arg)
{
    struct ctl *c = arg;

    atomic_store(&c->leading, 0);
    if (!atomic_load(&c->stopping)) {
        /* Another replica may lead now: nothing more is written from here. */
        atomic_store(&c->lost, 1);
        if (c->lane)
            ctl_lane_cancel(c->lane);
        wq_shutdown(c->queue);
        atomic_store(&c->ready, 0); /* /readyz fails from now on */
        if (!c->o.client)
            k8s_client_stop(c->client);
        log_error("leader election lost", "lease", c->cfg->le_id, "identity", c->identity);
    }
}

static void new_leader(void *arg, const char *identity)
{
    if (strcmp(identity, ((struct ctl *)arg)->identity) != 0)
        log_info("new leader elected", "lease", ((struct ctl *)arg)->cfg->le_id, "leader",
                 identity);
}

static int cfg_leading(void *ctx)
{
    return ctl_leading(ctx);
}

static size_t cfg_phase_count(void *ctx, const char *phase)
{
    struct ctl *c = ctx;
    size_t i;

    for (i = 0; i < c->table.n; i++) {
        if (c->table.caps[i]->phase_count)
            return c->table.caps[i]->phase_count(c, phase);
    }
    return 0;
}

static size_t cfg_objects(void *ctx)
{
    struct ctl *c = ctx;

    return ctl_caches_objects(c->caches);
}

static size_t cfg_conflicts(void *ctx)
{
    struct ctl *c = ctx;
    size_t i;

    for (i = 0; i < c->table.n; i++) {
        if (c->table.caps[i]->conflicts)
            return c->table.caps[i]->conflicts(c);
    }
    return 0;
}

/*
 * Every SUPERVISE_MS: log readiness once the caches synced, and start the
 * workers once this replica leads (or elects no leader) and the caches
 * synced, as controller-runtime waits for its caches before its workers.
 */
static void *supervise(void *arg)
{
    struct ctl *c = arg;
    struct kerr_info err;
    int workers = 0;

    while (!atomic_load(&c->stopping)) {
        if (!atomic_load(&c->ready) && ctl_caches_synced(c->caches)) {
            atomic_store(&c->ready, 1);
            /* The initial lists' transient trees are freed: give their pages back. */
            malloc_trim(0);
            log_info("warden-controller ready", "identity", c->identity);
        }
        if (!workers && atomic_load(&c->ready) && atomic_load(&c->leading) &&
            !atomic_load(&c->lost)) {
            kerr_clear(&err);
            atomic_store(&c->working_since, (long long)time(NULL));
            if (wqpool_new(c->queue, (int)c->cfg->workers, ctl_dispatch, c, &c->pool, &err) ||
                (c->lane && ctl_lane_start(c->lane, ctl_dispatch, c, &err))) {
                log_error("cannot start the workers", "error", err.msg);
                atomic_store(&c->lost, 1);
            }
            workers = 1;
        }
        ktime_sleep_ns(SUPERVISE_MS * 1000000L);
    }
    return NULL;
}

/* ---- construction ---- */

static void on_key(void *ctx, const char *kind, const char *ns, const char *name)
{
    ctl_enqueue(ctx, kind, ns, name, 0);
}

static enum kerr make_clients(struct ctl *c, struct kerr_info *err)
{
    struct k8s_client_opts o = { 0 };
    struct cfg_rest rest;
    enum kerr rc;

    if (c->o.client) {
        c->client = c->le_client = c->o.client;
        return KERR_OK;
    }
    cfg_rest_init(&rest);
    rc = cfg_load_default(*c->cfg->kubeconfig ? c->cfg->kubeconfig : NULL, &rest, err);
    if (!rc)
        rc = k8s_client_new(&rest, &o, &c->client, err);
    /* A renewal stuck in a slow request must not outlast the renew deadline. */
    o.request_timeout_ms = (c->o.renew_ms ? c->o.renew_ms : c->cfg->renew_ms) / 2;
    o.max_retries = -1;
    if (!rc)
        rc = k8s_client_new(&rest, &o, &c->le_client, err);
    cfg_rest_release(&rest);
    return rc ? kerr_wrap(err, "--kubeconfig") : KERR_OK;
}

static enum kerr make_identity(struct ctl *c, struct kerr_info *err)
{
    char host[128] = "warden-controller";
    int n;

    if (c->o.identity)
        n = snprintf(c->identity, sizeof(c->identity), "%s", c->o.identity);
    else {
        (void)gethostname(host, sizeof(host) - 1);
        n = snprintf(c->identity, sizeof(c->identity), "%s_%ld", host, (long)getpid());
    }
    if (n <= 0 || (size_t)n >= sizeof(c->identity))
        return kerr_set(err, KERR_INVAL, "leader-election identity too long");
    c->le_ns =
        strdup(*c->cfg->le_namespace ? c->cfg->le_namespace : k8s_client_namespace(c->client));
    return c->le_ns ? KERR_OK : kerr_set(err, KERR_NOMEM, "out of memory");
}

static enum kerr make_parts(struct ctl *c, struct kerr_info *err)
{
    struct ev_opts eo = { 0 };
    struct wq_opts qo = { 0 };
    struct ctl_caches_opts co = { 0 };
    struct ctl_metrics_source ms = { 0 };
    const struct ctl_metrics_gauge *g;
    const struct ctl_key *k;
    const char *lane_name = NULL;
    long lane = 0;
    size_t i, n = 0;
    enum kerr rc;

    eo.reporting_controller = "etcd-warden.io/warden-controller";
    eo.reporting_instance = c->identity;
    qo.name = "etcd";
    co.client = c->client;
    co.ns = c->cfg->watch_namespace;
    co.resync_ms = c->cfg->resync_ms;
    co.on_key = on_key;
    co.ctx = c;
    co.ctl = c;
    co.caps = c->table.caps;
    co.ncaps = c->table.n;
    c->controllers[n++] = "etcd";
    for (i = 0; i < c->table.n; i++) {
        for (k = c->table.caps[i]->keys; k && k->kind; k++) {
            if (k->lane_workers && k->lane_workers(c->cfg) > lane) {
                lane = k->lane_workers(c->cfg);
                lane_name = lane_name ? lane_name : k->kind;
            }
            if (n < CTL_METRICS_CONTROLLERS_MAX)
                c->controllers[n++] = k->kind;
        }
    }
    if ((rc = ev_new(c->client, &eo, &c->events, err)) || (rc = wq_new(&qo, &c->queue, err)) ||
        (lane && (rc = ctl_lane_new(lane_name, (int)lane, &c->lane, err))) ||
        (rc = ctl_caches_new(&co, &c->caches, err)))
        return rc;
    ms.queue = c->queue;
    ms.queue_name = "etcd";
    ms.lease_name = c->cfg->le_id;
    ms.leading = cfg_leading;
    ms.phase_count = cfg_phase_count;
    ms.objects = cfg_objects;
    ms.conflicts = cfg_conflicts;
    ms.ctx = c;
    ms.controllers = c->controllers;
    for (i = 0, n = 0; i < c->table.n; i++) {
        for (g = c->table.caps[i]->gauges; g && g->name && n < CTL_METRICS_GAUGES_MAX; g++)
            c->gauges[n++] = g;
    }
    ms.gauges = c->gauges;
    return ctl_metrics_new(&ms, &c->metrics, err);
}

enum kerr ctl_new(const struct ctl_config *cfg, const struct ctl_capability *const *caps,
                  const struct ctl_opts *opts, struct ctl **out, struct kerr_info *err)
{
    struct ctl *c;
    enum kerr rc;

    *out = NULL;
    c = calloc(1, sizeof(*c));
    if (!c)
        return kerr_set(err, KERR_NOMEM, "allocating the controller");
    c->cfg = cfg;
    if (opts)
        c->o = *opts;
    c->slots_made = sem_init(&c->repair_slots, 0, CTL_REPAIRS_IN_FLIGHT) == 0;
    if ((rc = ctl_table_init(&c->table, caps, cfg, c->o.stubs, err)) ||
        (rc = make_clients(c, err)) || (rc = make_identity(c, err)) || (rc = make_parts(c, err))) {
        ctl_free(c);
        return rc;
    }
    *out = c;
    return KERR_OK;
}

/* ---- running ---- */

static enum kerr ready_caches(void *ctx, struct kerr_info *err)
{
    return ctl_synced(ctx) ? KERR_OK : kerr_set(err, KERR_UNSUPPORTED, "caches not synced");
}

static enum kerr healthy(void *ctx, struct kerr_info *err)
{
    (void)ctx;
    (void)err;
    return KERR_OK;
}

static enum kerr start_servers(struct ctl *c, struct kerr_info *err)
{
    struct httpsrv_opts o = { 0 };
    enum kerr rc;

    if (c->o.no_servers)
        return KERR_OK;
    if (strcmp(c->cfg->metrics_bind, "0") != 0) {
        o.bind = c->cfg->metrics_bind;
        o.registry = ctl_metrics(c);
        if ((rc = httpsrv_new(&o, &c->metrics_srv, err)) ||
            (rc = httpsrv_start(c->metrics_srv, err)))
            return kerr_wrap(err, "--metrics-bind-address %s", c->cfg->metrics_bind);
    }
    if (strcmp(c->cfg->health_bind, "0") == 0)
        return KERR_OK;
    o.bind = c->cfg->health_bind;
    o.registry = NULL;
    if ((rc = httpsrv_new(&o, &c->health_srv, err)) ||
        (rc = httpsrv_add_check(c->health_srv, HTTPSRV_HEALTHZ, "ping", healthy, c, err)) ||
        (rc = httpsrv_add_check(c->health_srv, HTTPSRV_READYZ, "caches-synced", ready_caches, c,
                                err)) ||
        (rc = httpsrv_start(c->health_srv, err)))
        return kerr_wrap(err, "--health-probe-bind-address %s", c->cfg->health_bind);
    return KERR_OK;
}

static enum kerr start_election(struct ctl *c, struct kerr_info *err)
{
    struct le_opts o = { 0 };
    enum kerr rc;

    if (!c->cfg->leader_elect) {
        atomic_store(&c->leading, 1);
        return KERR_OK;
    }
    o.lease_namespace = c->le_ns;
    o.lease_name = c->cfg->le_id;
    o.identity = c->identity;
    o.lease_duration_ms = c->o.lease_ms ? c->o.lease_ms : c->cfg->lease_ms;
    o.renew_deadline_ms = c->o.renew_ms ? c->o.renew_ms : c->cfg->renew_ms;
    o.retry_period_ms = c->o.retry_ms ? c->o.retry_ms : c->cfg->retry_ms;
    o.on_started_leading = started_leading;
    o.on_stopped_leading = stopped_leading;
    o.on_new_leader = new_leader;
    o.arg = c;
    if ((rc = le_new(c->le_client, &o, &c->le, err)) || (rc = le_start(c->le, err)))
        return kerr_wrap(err, "leader election on Lease %s/%s", c->le_ns, c->cfg->le_id);
    return KERR_OK;
}

enum kerr ctl_start(struct ctl *c, struct kerr_info *err)
{
    enum kerr rc;

    if (c->supervising)
        return kerr_set(err, KERR_INVAL, "the controller is already started");
    if ((rc = ctl_caches_start(c->caches, err)) || (rc = start_servers(c, err)) ||
        (rc = start_election(c, err)))
        return rc;
    if (pthread_create(&c->supervisor, NULL, supervise, c) != 0)
        return kerr_set(err, KERR_INTERNAL, "cannot start the supervisor thread");
    c->supervising = 1;
    log_info("warden-controller started", "identity", c->identity, "lease", c->cfg->le_id,
             "watch-namespace", *c->cfg->watch_namespace ? c->cfg->watch_namespace : "(all)");
    return KERR_OK;
}

void ctl_stop(struct ctl *c)
{
    int64_t t0;
    long drain_ms;

    if (atomic_exchange(&c->stopping, 1))
        return;
    if (c->supervising)
        pthread_join(c->supervisor, NULL);
    /*
     * After SIGTERM the keys in hand may finish (--graceful-shutdown-timeout);
     * after a lost Lease another replica leads already, so they may not. Past
     * the drain an owned client is stopped: requests in flight end at once.
     */
    drain_ms = atomic_load(&c->lost) ? 0 : c->cfg->shutdown_ms;
    t0 = ktime_mono_ms();
    if (c->queue && wq_shutdown_drain(c->queue, drain_ms) == KERR_TIMEOUT) {
        log_warn("reconciles cut short", "reason",
                 atomic_load(&c->lost) ? "lost the Lease" : "--graceful-shutdown-timeout");
        if (!c->o.client)
            k8s_client_stop(c->client);
    }
    if (c->lane) /* the rest of the drain, then its long calls are cancelled */
        ctl_lane_stop(c->lane, drain_ms - (long)(ktime_mono_ms() - t0));
    wqpool_free(c->pool);
    c->pool = NULL;
    if (c->le)
        le_stop(c->le); /* releases the Lease */
    atomic_store(&c->leading, 0);
    if (c->caches)
        ctl_caches_stop(c->caches);
    httpsrv_stop(c->metrics_srv);
    httpsrv_stop(c->health_srv);
    if (c->events)
        ev_stop(c->events);
}

enum kerr ctl_run(struct ctl *c, struct kerr_info *err)
{
    enum kerr rc = ctl_start(c, err);

    while (!rc && !atomic_load(&c->lost) && !proc_wait_shutdown(SUPERVISE_MS))
        (void)proc_take_reload();
    if (!rc && atomic_load(&c->lost)) /* stopped_leading ended the work: exit at once */
        return kerr_set(err, KERR_CANCELLED, "lost the leader-election Lease %s/%s", c->le_ns,
                        c->cfg->le_id);
    if (!rc)
        log_info("shutting down", "identity", c->identity);
    ctl_stop(c);
    if (!rc)
        log_info("warden-controller stopped", "identity", c->identity);
    return rc;
}

void ctl_free(struct ctl *c)
{
    if (!c)
        return;
    ctl_stop(c);
    le_free(c->le);
    httpsrv_free(c->metrics_srv);
    httpsrv_free(c->health_srv);
    ctl_caches_free(c->caches);
    ev_free(c->events);
    wq_free(c->queue);
    ctl_lane_free(c->lane);
    ctl_metrics_free(c->metrics);
    if (!c->o.client) {
        k8s_client_free(c->le_client);
        k8s_client_free(c->client);
    }
    free(c->le_ns);
    if (c->slots_made)
        sem_destroy(&c->repair_slots);
    free(c);
}
