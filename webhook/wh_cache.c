/* wh_cache - parent lookups from watch-fed caches; see wh_cache.h. */
#include "webhook/wh_cache.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/hibguard.h"
#include "common/informer.h"
#include "common/ktime.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "common/store.h"
#include "webhook/datamnt.h"

static const struct k8s_resource res_etcd = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };
static const struct k8s_resource res_sts = { "apps", "v1", "statefulsets", 1 };
static const struct k8s_resource res_pod = { "", "v1", "pods", 1 };
static const struct k8s_resource res_pvc = { "", "v1", "persistentvolumeclaims", 1 };
static const struct k8s_resource res_secret = { "", "v1", "secrets", 1 };
static const struct k8s_resource res_task = { "druid.gardener.cloud", "v1alpha1", "etcdopstasks",
                                              1 };

#define MANAGED_SELECTOR LOOKUP_LABEL_MANAGED_BY "=" LOOKUP_MANAGED_BY_DRUID
#define NS_INDEX         "namespace"

struct wh_cache {
    struct wh_cache_opts o;
    char *ns; /* OWNS or NULL */
    struct inf *etcds, *stses, *tasks;
    atomic_int running; /* fallbacks in flight */
    atomic_ulong hits, fallbacks, refused;
};

static enum kerr project_etcd(void *ctx, const cJSON *obj, cJSON **out)
{
    (void)ctx;
    *out = lookup_etcd_project(obj);
    return *out ? KERR_OK : KERR_NOMEM;
}

/* What the StatefulSet views read (lookup_sts_project) and the data-directory rule
 * (datamnt_project): TAKES a new tree, NULL when out of memory. */
static cJSON *sts_project(const cJSON *obj)
{
    cJSON *p = lookup_sts_project(obj);

    if (p && datamnt_project(p, obj)) {
        cJSON_Delete(p);
        return NULL;
    }
    return p;
}

static enum kerr project_sts(void *ctx, const cJSON *obj, cJSON **out)
{
    (void)ctx;
    *out = sts_project(obj);
    return *out ? KERR_OK : KERR_NOMEM;
}

static enum kerr project_task(void *ctx, const cJSON *obj, cJSON **out)
{
    (void)ctx;
    *out = lookup_task_project(obj);
    return *out ? KERR_OK : KERR_NOMEM;
}

static enum kerr new_informer(struct wh_cache *c, const struct k8s_resource *res,
                              const char *selector, store_project_fn project, struct inf **out,
                              struct kerr_info *err)
{
    struct inf_opts o;

    memset(&o, 0, sizeof(o));
    o.res = res;
    o.ns = c->ns;
    o.label_selector = selector;
    o.project = project;
    o.compact = c->o.compact;
    return inf_new(c->o.client, &o, out, err);
}

enum kerr wh_cache_new(const struct wh_cache_opts *opts, struct wh_cache **out,
                       struct kerr_info *err)
{
    struct wh_cache *c;
    enum kerr rc;

    *out = NULL;
    if (!opts->client)
        return kerr_set(err, KERR_INVAL, "the cache needs an API client");
    c = calloc(1, sizeof(*c));
    if (!c)
        return kerr_set(err, KERR_NOMEM, "allocating the cache");
    c->o = *opts;
    if (!c->o.fallback_limit)
        c->o.fallback_limit = WH_CACHE_DEFAULT_FALLBACKS;
    if (opts->ns && !(c->ns = strdup(opts->ns))) {
        rc = kerr_set(err, KERR_NOMEM, "allocating the cache");
        goto fail;
    }
    c->o.ns = c->ns;
    if ((rc = new_informer(c, &res_etcd, NULL, project_etcd, &c->etcds, err)) ||
        (rc = store_add_index(inf_store(c->etcds), NS_INDEX, kobj_index_namespace, NULL, err)) ||
        (rc = new_informer(c, &res_sts, MANAGED_SELECTOR, project_sts, &c->stses, err)) ||
        (rc = store_add_index(inf_store(c->stses), NS_INDEX, kobj_index_namespace, NULL, err)) ||
        (rc = new_informer(c, &res_task, NULL, project_task, &c->tasks, err)) ||
        (rc = store_add_index(inf_store(c->tasks), NS_INDEX, kobj_index_namespace, NULL, err)))
        goto fail;
    *out = c;
    return KERR_OK;
fail:
    wh_cache_free(c);
    return rc;
}

enum kerr wh_cache_start(struct wh_cache *c, struct kerr_info *err)
{
    enum kerr rc = inf_start(c->etcds, err);

    if (!rc)
        rc = inf_start(c->stses, err);
    return rc ? rc : inf_start(c->tasks, err);
}

int wh_cache_synced(struct wh_cache *c)
{
    return inf_has_synced(c->etcds) && inf_has_synced(c->stses) && inf_has_synced(c->tasks);
}

enum kerr wh_cache_wait_synced(struct wh_cache *c, long timeout_ms)
{
    int64_t t0 = ktime_mono_ms();
    enum kerr rc;
    long spent;

    rc = inf_wait_synced(c->etcds, timeout_ms);
    if (rc)
        return rc;
    spent = (long)(ktime_mono_ms() - t0);
    rc = inf_wait_synced(c->stses, timeout_ms > spent ? timeout_ms - spent : 0);
    if (rc)
        return rc;
    spent = (long)(ktime_mono_ms() - t0);
    return inf_wait_synced(c->tasks, timeout_ms > spent ? timeout_ms - spent : 0);
}

void wh_cache_stats(struct wh_cache *c, struct wh_cache_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->hits = atomic_load(&c->hits);
    out->fallbacks = atomic_load(&c->fallbacks);
    out->refused = atomic_load(&c->refused);
    out->etcds = store_count(inf_store(c->etcds));
    out->stses = store_count(inf_store(c->stses));
    out->tasks = store_count(inf_store(c->tasks));
}

void wh_cache_report_rv(struct wh_cache *c, inf_rv_fn fn, void *ctx)
{
    inf_report_rv(c->etcds, fn, ctx);
    inf_report_rv(c->stses, fn, ctx);
    inf_report_rv(c->tasks, fn, ctx);
}

void wh_cache_free(struct wh_cache *c)
{
    if (!c)
        return;
    inf_free(c->etcds);
    inf_free(c->stses);
    inf_free(c->tasks);
    free(c->ns);
    free(c);
}

static enum kerr not_found(const struct k8s_resource *res, const char *name, struct kerr_info *err)
{
    return kerr_set(err, KERR_NOTFOUND, "%s.%s \"%s\" not found", res->resource, res->group, name);
}

/* Take a fallback slot: 1 when granted (give it back with atomic_fetch_sub). */
/* One of the fallback_limit slots if one is free (counted as a fallback), else 0. */
static int try_slot(struct wh_cache *c)
{
    if (atomic_fetch_add(&c->running, 1) >= c->o.fallback_limit) {
        atomic_fetch_sub(&c->running, 1);
        return 0;
    }
    atomic_fetch_add(&c->fallbacks, 1);
    return 1;
}

static int take_slot(struct wh_cache *c)
{
    if (c->o.fallback_limit < 0)
        return 0;
    if (try_slot(c))
        return 1;
    atomic_fetch_add(&c->refused, 1);
    return 0;
}

/*
 * A slot as take_slot, waited for up to the review's lookup deadline: for a read every review
 * of its kind makes (not a cache miss): the Secret and the StatefulSet of a hibernated Etcd's
 * member claim.
 */
static int wait_slot(struct wh_cache *c)
{
    int64_t until = lookup_deadline();

    if (c->o.fallback_limit < 0)
        return 0;
    while (!try_slot(c)) {
        if (until <= 0 || ktime_mono_ms() >= until) {
            atomic_fetch_add(&c->refused, 1);
            return 0;
        }
        usleep(2000);
    }
    return 1;
}

/* One GET of ns/name after a cache miss; *out OWNS the projected object on KERR_OK. */
static enum kerr fallback_get(struct wh_cache *c, const struct k8s_resource *res, const char *ns,
                              const char *name, int synced, cJSON **out, struct kerr_info *err)
{
    cJSON *obj = NULL;
    enum kerr rc;

    *out = NULL;
    if (!take_slot(c)) {
        if (synced) {
            not_found(res, name, err);
            if (err)
                snprintf(err->reason, sizeof(err->reason), "%s", LOOKUP_REASON_UNCONFIRMED);
            return KERR_NOTFOUND;
        }
        return kerr_set(err, KERR_TOOMANY, "%s cache not synced and too many lookups in flight",
                        res->resource);
    }
    rc = k8s_get_until(c->o.client, res, ns, name, NULL, lookup_deadline(), &obj, err);
    atomic_fetch_sub(&c->running, 1);
    if (rc == KERR_INVAL) /* a name no object can have */
        return not_found(res, name, err);
    if (rc)
        return rc;
    *out = res == &res_etcd ? lookup_etcd_project(obj) : sts_project(obj);
    cJSON_Delete(obj);
    return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, "projecting %s", res->resource);
}

static enum kerr view_etcd(void *ctx, const char *key, const cJSON *obj)
{
    (void)key;
    return lookup_etcd_from_json(obj, ctx, NULL);
}

static enum kerr view_sts(void *ctx, const char *key, const cJSON *obj)
{
    (void)key;
    return lookup_sts_from_json(obj, ctx, NULL);
}

/* Look ns/name up in inf; on a miss fall back to a GET. */
static enum kerr lookup_one(struct wh_cache *c, struct inf *inf, const struct k8s_resource *res,
                            const char *ns, const char *name, store_view_fn view, void *out,
                            struct kerr_info *err)
{
    char key[KOBJ_KEY_MAX];
    int synced = inf_has_synced(inf), n;
    cJSON *obj = NULL;
    enum kerr rc;

    n = snprintf(key, sizeof(key), "%s/%s", ns, name);
    if (n < 0 || (size_t)n >= sizeof(key) || !*ns || !*name)
        return not_found(res, name, err);
    if (synced) {
        rc = store_view(inf_store(inf), key, view, out, NULL);
        if (rc == KERR_OK) {
            atomic_fetch_add(&c->hits, 1);
            return KERR_OK;
        }
        if (rc != KERR_NOTFOUND)
            return kerr_set(err, rc, "reading the %s cache", res->resource);
    }
    rc = fallback_get(c, res, ns, name, synced, &obj, err);
    if (rc == KERR_OK)
        rc = view(out, key, obj);
    cJSON_Delete(obj);
    return rc;
}

static enum kerr c_etcd(void *ctx, const char *ns, const char *name, struct lookup_etcd *out,
                        struct kerr_info *err)
{
    struct wh_cache *c = ctx;

    return lookup_one(c, c->etcds, &res_etcd, ns, name, view_etcd, out, err);
}

/* A GET whatever the cache holds; no lookup slot free: not confirmed (KERR_TOOMANY). */
static enum kerr c_etcd_fresh(void *ctx, const char *ns, const char *name, struct lookup_etcd *out,
                              struct kerr_info *err)
{
    struct wh_cache *c = ctx;
    cJSON *obj = NULL;
    enum kerr rc;

    rc = fallback_get(c, &res_etcd, ns, name, 0, &obj, err);
    if (rc == KERR_OK)
        rc = view_etcd(out, NULL, obj);
    cJSON_Delete(obj);
    return rc;
}

static enum kerr c_sts(void *ctx, const char *ns, const char *name, struct lookup_sts *out,
                       struct kerr_info *err)
{
    struct wh_cache *c = ctx;

    return lookup_one(c, c->stses, &res_sts, ns, name, view_sts, out, err);
}

struct match {
    const cJSON *want;
    struct lookup_sts *out;
    size_t n;
    enum kerr rc;
};

static enum kerr view_match(void *ctx, const char *key, const cJSON *obj)
{
    struct match *m = ctx;

    (void)key;
    if (!lookup_labels_match(lookup_meta_map(obj, "labels"), m->want))
        return KERR_OK;
    if (m->n++ == 0)
        m->rc = lookup_sts_from_json(obj, m->out, NULL);
    return KERR_OK;
}

/* The LIST fallback: StatefulSets of ns selected by every label of want. */
static enum kerr list_match(struct wh_cache *c, const char *ns, struct match *m,
                            struct kerr_info *err)
{
    struct k8s_list_opts lo;
    struct buf sel;
    const cJSON *e, *items;
    cJSON *list = NULL;
    enum kerr rc = KERR_OK;

    buf_init(&sel, 64 * 1024);
    cJSON_ArrayForEach (e, m->want) {
        if (!rc)
            rc = buf_appendf(&sel, "%s%s=%s", sel.len ? "," : "", e->string, e->valuestring);
    }
    if (rc) {
        buf_release(&sel);
        return kerr_set(err, rc, "building a label selector");
    }
    if (!take_slot(c)) {
        buf_release(&sel);
        return kerr_set(err, KERR_TOOMANY, "too many API lookups in flight");
    }
    memset(&lo, 0, sizeof(lo));
    lo.label_selector = buf_str(&sel);
    lo.deadline_ms = lookup_deadline();
    rc = k8s_list(c->o.client, &res_sts, ns, &lo, &list, err);
    atomic_fetch_sub(&c->running, 1);
    items = kjson_get_arr(list, "items");
    cJSON_ArrayForEach (e, items) {
        view_match(m, NULL, e);
    }
    cJSON_Delete(list);
    buf_release(&sel);
    return rc ? rc : m->rc;
}

static enum kerr c_sts_by_labels(void *ctx, const char *ns, const cJSON *labels,
                                 struct lookup_sts *out, size_t *matches, struct kerr_info *err)
{
    struct wh_cache *c = ctx;
    const char *managed = lookup_map_get(labels, LOOKUP_LABEL_MANAGED_BY);
    struct match m = { labels, out, 0, KERR_OK };
    enum kerr rc;

    *matches = 0;
    if (inf_has_synced(c->stses) && managed && strcmp(managed, LOOKUP_MANAGED_BY_DRUID) == 0) {
        /* Every StatefulSet these labels select is a managed one: the cache has them all. */
        rc = store_index_view(inf_store(c->stses), NS_INDEX, ns, view_match, &m, err);
        atomic_fetch_add(&c->hits, 1);
        rc = rc ? rc : m.rc;
    } else {
        rc = list_match(c, ns, &m, err);
    }
    *matches = m.n;
    return rc;
}

struct snap_match {
    const char *ns, *etcd;
    time_t cut_at;
    int found;
};

static enum kerr view_snapshot(void *ctx, const char *key, const cJSON *obj)
{
    struct snap_match *m = ctx;

    (void)key;
    if (!m->found && hibguard_task_counts(obj, m->ns, m->etcd, m->cut_at))
        m->found = 1;
    return KERR_OK;
}

/* From the EtcdOpsTask cache only: no fallback, a task is never looked up by name. */
static enum kerr c_snapshot(void *ctx, const char *ns, const char *etcd, time_t cut_at, int *found,
                            struct kerr_info *err)
{
    struct wh_cache *c = ctx;
    struct snap_match m = { ns, etcd, cut_at, 0 };
    enum kerr rc;

    *found = 0;
    if (!inf_has_synced(c->tasks))
        return kerr_set(err, KERR_UNSUPPORTED, "the EtcdOpsTask cache has not synced yet");
    rc = store_index_view(inf_store(c->tasks), NS_INDEX, ns, view_snapshot, &m, err);
    atomic_fetch_add(&c->hits, 1);
    *found = m.found;
    return rc;
}

/* A LIST of ns's pods (not cached): only a guarded request that may take members asks. */
static enum kerr c_pods(void *ctx, const char *ns, const char *sts, int64_t lo, int64_t hi,
                        size_t *outside, int64_t *first, struct kerr_info *err)
{
    struct wh_cache *c = ctx;
    struct k8s_list_opts o;
    cJSON *list = NULL;
    enum kerr rc;

    *outside = 0;
    *first = -1;
    if (!take_slot(c))
        return kerr_set(err, KERR_TOOMANY, "too many API lookups in flight to list the pods");
    memset(&o, 0, sizeof(o));
    o.deadline_ms = lookup_deadline();
    rc = k8s_list(c->o.client, &res_pod, ns, &o, &list, err);
    atomic_fetch_sub(&c->running, 1);
    if (rc == KERR_OK)
        *outside = lookup_pods_outside(kjson_get_arr(list, "items"), sts, lo, hi, first);
    cJSON_Delete(list);
    return rc;
}

/* A LIST of ns's objects of res (not cached), its items into *items (what: for messages). */
static enum kerr list_items(struct wh_cache *c, const struct k8s_resource *res, const char *what,
                            const char *ns, cJSON **items, struct kerr_info *err)
{
    struct k8s_list_opts o;
    cJSON *list = NULL;
    enum kerr rc;

    *items = NULL;
    if (!take_slot(c))
        return kerr_set(err, KERR_TOOMANY, "too many API lookups in flight to list the %s", what);
    memset(&o, 0, sizeof(o));
    o.deadline_ms = lookup_deadline();
    rc = k8s_list(c->o.client, res, ns, &o, &list, err);
    atomic_fetch_sub(&c->running, 1);
    if (rc == KERR_OK) {
        *items = cJSON_DetachItemFromObjectCaseSensitive(list, "items");
        if (!cJSON_IsArray(*items)) {
            cJSON_Delete(*items);
            *items = cJSON_CreateArray();
        }
        if (!*items)
            rc = kerr_set(err, KERR_NOMEM, "listing %s", what);
    }
    cJSON_Delete(list);
    return rc;
}

/* A LIST of ns's PVCs: only a StatefulSet taking new ordinals asks. */
static enum kerr c_pvcs(void *ctx, const char *ns, cJSON **items, struct kerr_info *err)
{
    return list_items(ctx, &res_pvc, "persistentvolumeclaims", ns, items, err);
}

/* A LIST of ns's pods: only a DELETE of a claim of no running StatefulSet's member asks. */
static enum kerr c_pod_items(void *ctx, const char *ns, cJSON **items, struct kerr_info *err)
{
    return list_items(ctx, &res_pod, "pods", ns, items, err);
}

/* A copy of the projection obj into *(cJSON **)ctx. */
static enum kerr view_copy(void *ctx, const char *key, const cJSON *obj)
{
    cJSON **out = ctx;

    (void)key;
    *out = cJSON_Duplicate(obj, 1);
    return *out ? KERR_OK : KERR_NOMEM;
}

/* StatefulSet ns/name as the cache keeps it (sts_project): a ConfigMap judged by the
 * data-directory rule asks (webhook/cfgguard.h). A miss falls back to a GET as lookup_one. */
static enum kerr c_sts_object(void *ctx, const char *ns, const char *name, cJSON **obj,
                              struct kerr_info *err)
{
    struct wh_cache *c = ctx;
    enum kerr rc;

    *obj = NULL;
    rc = lookup_one(c, c->stses, &res_sts, ns, name, view_copy, obj, err);
    if (rc != KERR_OK) {
        cJSON_Delete(*obj);
        *obj = NULL;
    }
    return rc;
}

/* A GET of StatefulSet ns/name as a whole (never cached): a DELETE of a hibernated Etcd's
 * member claim asks (the StatefulSet its final snapshot was checked against, claimguard.h). */
static enum kerr c_sts_fresh(void *ctx, const char *ns, const char *name, cJSON **obj,
                             struct kerr_info *err)
{
    struct wh_cache *c = ctx;
    enum kerr rc;

    *obj = NULL;
    if (!wait_slot(c))
        return kerr_set(err, KERR_TOOMANY,
                        "too many API lookups in flight to read the StatefulSet");
    rc = k8s_get_until(c->o.client, &res_sts, ns, name, NULL, lookup_deadline(), obj, err);
    atomic_fetch_sub(&c->running, 1);
    if (rc == KERR_INVAL) /* a name no object can have */
        return not_found(&res_sts, name, err);
    return rc;
}

/* A GET of Secret ns/name (never cached): a DELETE of a hibernated Etcd's member claim asks
 * (its store stamp, webhook/claimguard.h). */
static enum kerr c_secret(void *ctx, const char *ns, const char *name, cJSON **obj,
                          struct kerr_info *err)
{
    struct wh_cache *c = ctx;
    enum kerr rc;

    *obj = NULL;
    if (!wait_slot(c))
        return kerr_set(err, KERR_TOOMANY, "too many API lookups in flight to read the Secret");
    rc = k8s_get_until(c->o.client, &res_secret, ns, name, NULL, lookup_deadline(), obj, err);
    atomic_fetch_sub(&c->running, 1);
    if (rc == KERR_INVAL) /* a name no object can have */
        return not_found(&res_secret, name, err);
    return rc;
}

static enum kerr view_any(void *ctx, const char *key, const cJSON *obj)
{
    (void)key;
    (void)obj;
    *(int *)ctx = 1;
    return KERR_OK;
}

/* The cache's Etcds of ns; none there: one LIST (limit 1) of them confirms it. */
static enum kerr c_etcd_any(void *ctx, const char *ns, int *any, struct kerr_info *err)
{
    struct wh_cache *c = ctx;
    struct k8s_list_opts o;
    cJSON *list = NULL;
    enum kerr rc;

    *any = 0;
    if (inf_has_synced(c->etcds)) {
        if ((rc = store_index_view(inf_store(c->etcds), NS_INDEX, ns, view_any, any, err)))
            return rc;
        atomic_fetch_add(&c->hits, 1);
        if (*any)
            return KERR_OK;
    }
    if (!take_slot(c))
        return kerr_set(err, KERR_TOOMANY, "too many API lookups in flight to list the Etcds");
    memset(&o, 0, sizeof(o));
    o.limit = 1;
    o.deadline_ms = lookup_deadline();
    rc = k8s_list(c->o.client, &res_etcd, ns, &o, &list, err);
    atomic_fetch_sub(&c->running, 1);
    *any = cJSON_GetArraySize(kjson_get_arr(list, "items")) > 0;
    cJSON_Delete(list);
    return rc;
}

/* Recorded in the webhook's own namespace (webhook/glass.h). */
static enum kerr c_glass(void *ctx, const struct glass_use *u, int dry_run,
                         struct glass_prior *used, struct kerr_info *err)
{
    struct wh_cache *c = ctx;

    return glass_take(c->o.client, k8s_client_namespace(c->o.client), u, dry_run, used, err);
}

void wh_cache_bind(struct wh_cache *c, struct lookup *out)
{
    out->ctx = c;
    out->etcd = c_etcd;
    out->etcd_fresh = c_etcd_fresh;
    out->sts = c_sts;
    out->sts_by_labels = c_sts_by_labels;
    out->snapshot = c_snapshot;
    out->pods = c_pods;
    out->pvcs = c_pvcs;
    out->pod_items = c_pod_items;
    out->sts_object = c_sts_object;
    out->sts_fresh = c_sts_fresh;
    out->secret = c_secret;
    out->glass = c_glass;
    out->etcd_any = c_etcd_any;
}
