/* ctl_caches - the controller's caches and their event mapping; see ctl_caches.h. */
#include "controller/core/ctl_caches.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/informer.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "common/log.h"
#include "common/store.h"
#include "controller/core/ctl_cap.h"

/* How one informer's events become keys. */
enum feed { FEED_COMPONENT };

/* One watched component resource. */
struct kind {
    struct k8s_resource res;
    const char *api_version; /* written into projected components */
    const char *kind;
    enum feed feed;
};

#define MAX_RESOURCES 16

/* The core's own watch of Etcds (re-delivered every resync). */
static const struct ctl_watch etcds = {
    .res = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 },
    .kind = "Etcd",
};

static const struct kind components[] = {
    { { "", "v1", "serviceaccounts", 1 }, "v1", "ServiceAccount", FEED_COMPONENT },
    { { "", "v1", "services", 1 }, "v1", "Service", FEED_COMPONENT },
    { { "", "v1", "configmaps", 1 }, "v1", "ConfigMap", FEED_COMPONENT },
    { { "rbac.authorization.k8s.io", "v1", "roles", 1 },
      "rbac.authorization.k8s.io/v1",
      "Role",
      FEED_COMPONENT },
    { { "rbac.authorization.k8s.io", "v1", "rolebindings", 1 },
      "rbac.authorization.k8s.io/v1",
      "RoleBinding",
      FEED_COMPONENT },
    { { "apps", "v1", "statefulsets", 1 }, "apps/v1", "StatefulSet", FEED_COMPONENT },
    { { "policy", "v1", "poddisruptionbudgets", 1 },
      "policy/v1",
      "PodDisruptionBudget",
      FEED_COMPONENT },
    { { "coordination.k8s.io", "v1", "leases", 1 },
      "coordination.k8s.io/v1",
      "Lease",
      FEED_COMPONENT },
    { { "", "v1", "persistentvolumeclaims", 1 }, "v1", "PersistentVolumeClaim", FEED_COMPONENT },
};

#define NCOMPONENTS (sizeof(components) / sizeof(components[0]))

static const char *const component_paths[] = {
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.labels",
    "metadata.resourceVersion",
    "metadata.ownerReferences",
    NULL,
};

/* What an informer's handlers need. */
struct feedctx {
    struct ctl_caches *c;
    const struct kind *k;               /* a component's, else NULL */
    const struct ctl_watch *w;          /* an object's: the first watch of its resource */
    ctl_keys_fn keys[CTL_CAPS_MAX + 1]; /* an object's key functions */
    size_t nkeys;
    char scope[48]; /* a component's: "<kind>/", its keys in the combined store */
};

struct ctl_caches {
    struct ctl_caches_opts o;
    char *ns; /* OWNS or NULL */
    size_t nobjs;
    struct inf *objs[MAX_RESOURCES];
    struct inf *comps[NCOMPONENTS];
    struct feedctx objctx[MAX_RESOURCES];
    struct feedctx compctx[NCOMPONENTS];
    struct store *components; /* OWNS: every component, "<kind>/<ns>/<name>" */
};

/* ---- projections, keys and indexes ---- */

/* Everything but metadata.managedFields. */
static enum kerr project_object(void *ctx, const cJSON *obj, cJSON **out)
{
    cJSON *md;

    (void)ctx;
    *out = cJSON_Duplicate(obj, 1);
    if (!*out)
        return KERR_NOMEM;
    md = cJSON_GetObjectItemCaseSensitive(*out, "metadata");
    if (cJSON_IsObject(md))
        cJSON_DeleteItemFromObjectCaseSensitive(md, "managedFields");
    return KERR_OK;
}

/* Beside component_paths, what hibernation reads of the client Service and the StatefulSet. */
static const char *const service_paths[] = {
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.labels",
    "metadata.annotations",
    "metadata.resourceVersion",
    "metadata.ownerReferences",
    "spec.ports",
    NULL,
};

static const char *const statefulset_paths[] = {
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.labels",
    "metadata.resourceVersion",
    "metadata.ownerReferences",
    "metadata.generation",
    "spec.replicas",
    "spec.ordinals",
    "status.replicas",
    "status.readyReplicas",
    /* the store the members write and whether they run it (common/ststore) */
    "spec.template.spec.containers",
    "spec.template.spec.volumes",
    "status.observedGeneration",
    "status.currentRevision",
    "status.updateRevision",
    NULL,
};

/* Beside component_paths, what the backup sidecar records in its snapshot Leases (the time
 * and the last revision of its last snapshot), for warden_etcd_last_full_snapshot_*. */
static const char *const lease_paths[] = {
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.labels",
    "metadata.resourceVersion",
    "metadata.ownerReferences",
    "metadata.creationTimestamp",
    "spec.renewTime",
    "spec.holderIdentity",
    NULL,
};

/*
 * apiVersion, kind (of the informer: lists leave them out) and the metadata of
 * component_paths; Services and StatefulSets keep what hibernation reads too, Leases what
 * the sidecar writes in them.
 */
static enum kerr project_component(void *ctx, const cJSON *obj, cJSON **out)
{
    const struct kind *k = ctx;
    const char *const *paths = strcmp(k->kind, "Service") == 0       ? service_paths
                               : strcmp(k->kind, "StatefulSet") == 0 ? statefulset_paths
                               : strcmp(k->kind, "Lease") == 0       ? lease_paths
                                                                     : component_paths;
    enum kerr rc = kobj_project_paths((void *)paths, obj, out);

    if (rc)
        return rc;
    if (!cJSON_AddStringToObject(*out, "apiVersion", k->api_version) ||
        !cJSON_AddStringToObject(*out, "kind", k->kind)) {
        cJSON_Delete(*out);
        *out = NULL;
        return KERR_NOMEM;
    }
    return KERR_OK;
}

/* "<kind>/<ns>/<name>" */
static enum kerr component_key(void *ctx, const cJSON *obj, char *out, size_t n,
                               struct kerr_info *err)
{
    const char *kind = kjson_get_str(obj, "kind");
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    const char *name = kjson_get_str(obj, "metadata.name");
    int len;

    (void)ctx;
    if (!kind || !name || !*name)
        return kerr_set(err, KERR_INVAL, "component without kind or name");
    len = snprintf(out, n, "%s/%s/%s", kind, ns ? ns : "", name);
    if (len < 0 || (size_t)len >= n)
        return kerr_set(err, KERR_TOOBIG, "component key too long");
    return KERR_OK;
}

/* "<ns>/<part-of label>" */
static enum kerr index_part_of(void *ctx, const cJSON *obj, struct strlist *values)
{
    (void)ctx;
    return ctl_index_ns_value(obj, "metadata.labels[" CTL_LABEL_PART_OF "]", values);
}

/* ---- events to keys ---- */

/* The key "<kind>/<obj's namespace>/<name>" of the core's own, unless name is NULL or empty. */
static void key(struct ctl_caches *c, const char *kind, const cJSON *obj, const char *name)
{
    const char *ns = kjson_get_str(obj, "metadata.namespace");

    if (name && *name)
        c->o.on_key(c->o.ctx, kind, ns ? ns : "", name);
}

/* Whether the update of an object touched more than its status (and resourceVersion). */
static int task_changed(const cJSON *a, const cJSON *b)
{
    static const char *const paths[] = { "spec",
                                         "metadata.generation",
                                         "metadata.deletionTimestamp",
                                         "metadata.finalizers",
                                         "metadata.labels",
                                         "metadata.annotations",
                                         "metadata.ownerReferences" };
    const cJSON *x, *y;
    size_t i;

    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        x = kjson_get(a, paths[i]);
        y = kjson_get(b, paths[i]);
        if (!x != !y || (x && !cJSON_Compare(x, y, 1)))
            return 1;
    }
    return 0;
}

static void feed(struct feedctx *f, const cJSON *obj, int own_key)
{
    size_t i;

    if (f->k) { /* a component: its Etcd */
        key(f->c, "etcd", obj, kjson_get_str(obj, "metadata.labels[" CTL_LABEL_PART_OF "]"));
        return;
    }
    if (f->w == &etcds) /* an Etcd: its own key, then the capabilities' */
        key(f->c, "etcd", obj, kjson_get_str(obj, "metadata.name"));
    for (i = 0; i < f->nkeys; i++)
        f->keys[i](f->c->o.ctl, obj, own_key);
}

static void on_add(void *ctx, const cJSON *obj)
{
    feed(ctx, obj, 1);
}

static void on_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    struct feedctx *f = ctx;
    const char *a = kjson_get_str(old_obj, "metadata.labels[" CTL_LABEL_PART_OF "]");
    const char *b = kjson_get_str(new_obj, "metadata.labels[" CTL_LABEL_PART_OF "]");

    /* A component that moved to another Etcd concerns both. */
    if (f->k && a && (!b || strcmp(a, b) != 0))
        feed(f, old_obj, 1);
    /*
     * A task's own key skips updates of its status alone: they are the
     * executor's own writes, and re-running on them would defeat the
     * requeue it asked for (a failed attempt would be retried at once).
     */
    feed(f, new_obj, old_obj == new_obj || task_changed(old_obj, new_obj));
}

static void on_delete(void *ctx, const cJSON *obj)
{
    feed(ctx, obj, 1);
}

/* ---- lifecycle ---- */

static enum kerr new_informer(struct ctl_caches *c, const struct inf_opts *o, struct feedctx *f,
                              struct inf **out, struct kerr_info *err)
{
    struct inf_handlers h = { on_add, on_update, on_delete, f };
    enum kerr rc;

    f->c = c;
    if ((rc = inf_new(c->o.client, o, out, err)) || (rc = inf_add_handlers(*out, &h, err)))
        return rc;
    return KERR_OK;
}

static enum kerr new_component(struct ctl_caches *c, size_t i, struct kerr_info *err)
{
    const struct kind *k = &components[i];
    struct inf_opts o;

    memset(&o, 0, sizeof(o));
    o.res = &components[i].res;
    o.ns = k->res.namespaced ? c->ns : NULL;
    o.name = k->kind;
    o.compact = 1;
    o.label_selector = CTL_LABEL_MANAGED_BY "=etcd-druid";
    o.project = project_component;
    o.project_ctx = (void *)k;
    /* One copy of each component: the informers of the nine kinds fill the combined store. */
    snprintf(c->compctx[i].scope, sizeof(c->compctx[i].scope), "%s/", k->kind);
    o.store = c->components;
    o.scope = c->compctx[i].scope;
    c->compctx[i].k = k;
    return new_informer(c, &o, &c->compctx[i], &c->comps[i], err);
}

static int same_resource(const struct k8s_resource *a, const struct k8s_resource *b)
{
    return strcmp(a->group, b->group) == 0 && strcmp(a->resource, b->resource) == 0;
}

/* The informer of w's resource, made on its first watch; then w's indexes and keys. */
static enum kerr add_watch(struct ctl_caches *c, const struct ctl_watch *w, struct kerr_info *err)
{
    const struct ctl_index *x;
    struct feedctx *f = NULL;
    struct inf_opts o;
    enum kerr rc = KERR_OK;
    size_t i;

    for (i = 0; i < c->nobjs && !f; i++)
        f = same_resource(&c->objctx[i].w->res, &w->res) ? &c->objctx[i] : NULL;
    if (!f) {
        if (c->nobjs == MAX_RESOURCES)
            return kerr_set(err, KERR_INVAL, "more than %d watched resources", MAX_RESOURCES);
        memset(&o, 0, sizeof(o));
        o.res = &w->res;
        o.ns = w->res.namespaced ? c->ns : NULL;
        o.name = w->kind;
        o.compact = 1;
        o.label_selector = w->label_selector;
        o.project = project_object;
        o.resync_ms = w == &etcds ? c->o.resync_ms : 0;
        f = &c->objctx[c->nobjs];
        f->w = w;
        if ((rc = new_informer(c, &o, f, &c->objs[c->nobjs], err)))
            return rc;
        c->nobjs++;
    }
    if (w->keys && f->nkeys < CTL_CAPS_MAX + 1)
        f->keys[f->nkeys++] = w->keys;
    for (x = w->indexes; !rc && x->name; x++)
        rc = store_add_index(inf_store(c->objs[f - c->objctx]), x->name, x->fn, NULL, err);
    return rc;
}

enum kerr ctl_caches_new(const struct ctl_caches_opts *o, struct ctl_caches **out,
                         struct kerr_info *err)
{
    struct store_opts so = { 0 };
    const struct ctl_watch *w;
    struct ctl_caches *c;
    enum kerr rc = KERR_OK;
    size_t i;

    *out = NULL;
    if (!o->client || !o->on_key)
        return kerr_set(err, KERR_INVAL, "ctl_caches: client and on_key are required");
    c = calloc(1, sizeof(*c));
    if (!c)
        return kerr_set(err, KERR_NOMEM, "allocating the caches");
    c->o = *o;
    if (o->ns && *o->ns && !(c->ns = strdup(o->ns)))
        rc = kerr_set(err, KERR_NOMEM, "allocating the caches");
    so.compact = 1;
    so.key = component_key;
    if (!rc && !(rc = store_new(&so, &c->components, err)))
        rc = store_add_index(c->components, CTL_INDEX_PART_OF, index_part_of, NULL, err);
    if (!rc)
        rc = add_watch(c, &etcds, err);
    for (i = 0; !rc && i < o->ncaps; i++) {
        for (w = o->caps[i]->watches; !rc && w && w->res.resource; w++)
            rc = add_watch(c, w, err);
    }
    for (i = 0; !rc && i < NCOMPONENTS; i++)
        rc = new_component(c, i, err);
    if (rc) {
        ctl_caches_free(c);
        return rc;
    }
    *out = c;
    return KERR_OK;
}

enum kerr ctl_caches_start(struct ctl_caches *c, struct kerr_info *err)
{
    enum kerr rc = KERR_OK;
    size_t i;

    for (i = 0; !rc && i < c->nobjs; i++)
        rc = inf_start(c->objs[i], err);
    for (i = 0; !rc && i < NCOMPONENTS; i++)
        rc = inf_start(c->comps[i], err);
    return rc;
}

int ctl_caches_synced(struct ctl_caches *c)
{
    size_t i;

    for (i = 0; i < c->nobjs; i++) {
        if (!inf_has_synced(c->objs[i]))
            return 0;
    }
    for (i = 0; i < NCOMPONENTS; i++) {
        if (!inf_has_synced(c->comps[i]))
            return 0;
    }
    return 1;
}

struct store *ctl_caches_store(struct ctl_caches *c, const char *resource)
{
    size_t i;

    if (!c || !resource)
        return NULL;
    if (strcmp(resource, CTL_CACHE_COMPONENTS) == 0)
        return c->components;
    for (i = 0; i < c->nobjs; i++) {
        if (strcmp(c->objctx[i].w->res.resource, resource) == 0)
            return inf_store(c->objs[i]);
    }
    return NULL;
}

size_t ctl_caches_objects(struct ctl_caches *c)
{
    size_t i, n = store_count(c->components);

    for (i = 0; i < c->nobjs; i++)
        n += store_count(inf_store(c->objs[i]));
    return n;
}

static void *stop_one(void *arg)
{
    inf_stop(arg);
    return NULL;
}

/*
 * Stop every informer. Each stop waits up to about a second for its watch
 * to notice the cancel, so they are stopped in parallel (one thread each;
 * inline when a thread cannot be made).
 */
void ctl_caches_stop(struct ctl_caches *c)
{
    struct inf *all[MAX_RESOURCES + NCOMPONENTS];
    pthread_t t[MAX_RESOURCES + NCOMPONENTS];
    int started[MAX_RESOURCES + NCOMPONENTS];
    size_t i, n = 0;

    for (i = 0; i < c->nobjs; i++)
        all[n++] = c->objs[i];
    for (i = 0; i < NCOMPONENTS; i++)
        all[n++] = c->comps[i];
    for (i = 0; i < n; i++) {
        started[i] = all[i] && pthread_create(&t[i], NULL, stop_one, all[i]) == 0;
        if (all[i] && !started[i])
            inf_stop(all[i]);
    }
    for (i = 0; i < n; i++) {
        if (started[i])
            pthread_join(t[i], NULL);
    }
}

void ctl_caches_free(struct ctl_caches *c)
{
    size_t i;

    if (!c)
        return;
    ctl_caches_stop(c);
    for (i = 0; i < MAX_RESOURCES; i++)
        inf_free(c->objs[i]);
    for (i = 0; i < NCOMPONENTS; i++)
        inf_free(c->comps[i]);
    store_free(c->components);
    free(c->ns);
    free(c);
}
