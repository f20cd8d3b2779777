/* ctl_dispatch - a queue key to the reconcile steps; see ctl.h ("Dispatch"). */
#include <stdio.h>
#include <string.h>

#include "common/events.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/workqueue.h"
#include "controller/core/ctl_config.h"
#include "controller/core/ctl_int.h"

#define LABEL_RESTORING "etcd-warden.io/restoring"

static const struct k8s_resource res_etcd = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };

/* Split "kind/ns/name" into buf; 0 when malformed. */
static int split_key(const char *key, char *buf, size_t n, const char **kind, const char **ns,
                     const char **name)
{
    char *a, *b;

    if (strlen(key) >= n)
        return 0;
    memcpy(buf, key, strlen(key) + 1);
    a = strchr(buf, '/');
    b = a ? strchr(a + 1, '/') : NULL;
    if (!b || !b[1])
        return 0;
    *a = *b = '\0';
    *kind = buf;
    *ns = a + 1;
    *name = b + 1;
    return 1;
}

/*
 * The result of one step merged into the key's: the first error, the smallest requeue, and
 * whether every failed step paces its own retry (*own).
 */
static void merge(enum kerr rc, const struct ctl_result *r, const char *step,
                  const struct kerr_info *e, enum kerr *first, const char **where,
                  struct kerr_info *err, long *requeue, int *own)
{
    if (rc && !(r->own_retry && r->requeue_ms > 0))
        *own = 0;
    if (rc && !*first) {
        *first = rc;
        *where = step;
        *err = *e;
    }
    if (r->requeue_ms > 0 && (*requeue <= 0 || r->requeue_ms < *requeue))
        *requeue = r->requeue_ms;
}

/*
 * Run the steps of an Etcd (restoring: those marked restoring, else the
 * others); the first error (step named by *where) or KERR_OK. *own: every
 * failed step paces its own retry.
 */
static enum kerr etcd_steps(struct ctl *c, const cJSON *etcd, long *requeue, int *own,
                            const char **where, struct kerr_info *err)
{
    int restoring = kjson_get_str(etcd, "metadata.labels[" LABEL_RESTORING "]") != NULL;
    const struct ctl_etcd_step *s;
    ctl_etcd_step_fn fn;
    struct ctl_result r;
    struct kerr_info e;
    enum kerr first = KERR_OK, rc;
    size_t i;

    for (i = 0; i < c->table.n; i++) {
        for (s = c->table.caps[i]->steps; s && s->name; s++) {
            if (!s->restoring != !restoring || !(fn = ctl_table_step_fn(&c->table, s)))
                continue;
            memset(&r, 0, sizeof(r));
            kerr_clear(&e);
            rc = fn(c, etcd, &r, &e);
            merge(rc, &r, s->name, &e, &first, where, err, requeue, own);
        }
    }
    return first;
}

/* An Etcd key: a fresh GET, then the steps. */
static enum kerr reconcile_etcd(struct ctl *c, const char *ns, const char *name, long *requeue,
                                int *own, const char **where, struct kerr_info *err)
{
    cJSON *etcd = NULL;
    struct ev_ref ref;
    enum kerr rc = k8s_get(c->client, &res_etcd, ns, name, NULL, &etcd, err);

    *where = "get";
    if (rc == KERR_NOTFOUND)
        return KERR_OK; /* gone: owner references let the garbage collector clean up */
    if (rc)
        return rc;
    *own = 1;
    rc = etcd_steps(c, etcd, requeue, own, where, err);
    /* a conflict (the object changed since it was read) is a retry, not a failure to report */
    if (rc && rc != KERR_CONFLICT && ev_ref_from_object(etcd, &ref) == KERR_OK) {
        if (!ref.kind)
            ref.kind = "Etcd";
        (void)ev_emitf(c->events, &ref, EV_WARNING, "ReconcileFailed", "Reconcile", "%s: %s",
                       *where, err->msg);
    }
    cJSON_Delete(etcd);
    return rc;
}

static enum kerr reconcile_task(struct ctl *c, ctl_task_step_fn fn, const char *ns,
                                const char *name, long *requeue, int *own, struct kerr_info *err)
{
    struct ctl_result r = { 0 };
    enum kerr rc;

    if (!fn)
        return KERR_OK;
    rc = fn(c, ns, name, &r, err);
    *requeue = r.requeue_ms;
    *own = r.own_retry && r.requeue_ms > 0;
    return rc;
}

/* k8s_thread_requests() when the reconcile running on this thread began. */
static __thread unsigned long reconcile_start;

unsigned long ctl_reconcile_requests(void)
{
    return k8s_thread_requests() - reconcile_start;
}

enum wqpool_result ctl_dispatch(void *arg, const char *key, long *after_ms)
{
    struct ctl *c = arg;
    char buf[WQ_KEY_MAX];
    const char *kind, *ns, *name, *where = "";
    struct kerr_info err;
    const struct ctl_key *k;
    int64_t t0 = ktime_mono_ns();
    unsigned long reqs;
    long requeue = 0;
    int own = 0;
    enum kerr rc = KERR_OK;
    enum ctl_metrics_result res;

    kerr_clear(&err);
    reconcile_start = k8s_thread_requests();
    if (!split_key(key, buf, sizeof(buf), &kind, &ns, &name)) {
        log_warn("dropped a malformed queue key", "key", key);
        return WQPOOL_RESULT_OK;
    }
    if (strcmp(kind, "etcd") == 0)
        rc = reconcile_etcd(c, ns, name, &requeue, &own, &where, &err);
    else if ((k = ctl_table_key(&c->table, kind)) && (!k->enabled || k->enabled(c->cfg)))
        rc = reconcile_task(c, ctl_table_key_fn(&c->table, k), ns, name, &requeue, &own, &err);
    res = rc ? CTL_R_ERROR : requeue > 0 ? CTL_R_REQUEUE_AFTER : CTL_R_SUCCESS;
    reqs = ctl_reconcile_requests();
    ctl_metrics_reconcile(c->metrics, kind, res, (double)(ktime_mono_ns() - t0) / 1e9, reqs);
    if (rc) {
        log_warn("reconcile failed", "controller", kind, "namespace", ns, "name", name, "step",
                 where, "error", err.msg);
        *after_ms = requeue; /* another step's polling is not slowed by this backoff */
        return own && requeue > 0 ? WQPOOL_RESULT_ERROR_AFTER : WQPOOL_RESULT_ERROR;
    }
    if (log_enabled(LOG_DEBUG)) {
        char after[24], made[24];

        snprintf(after, sizeof(after), "%ld", requeue);
        snprintf(made, sizeof(made), "%lu", reqs);
        log_debug("reconciled", "controller", kind, "namespace", ns, "name", name, "requeue_ms",
                  after, "requests", made);
    }
    if (requeue <= 0)
        return WQPOOL_RESULT_OK;
    *after_ms = requeue;
    return WQPOOL_RESULT_REQUEUE_AFTER;
}
