/* ctl_caches - the controller's caches and their event mapping; see ctl_caches.h. */
#include "controller/ctl_caches.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/informer.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "common/log.h"
#include "common/store.h"
#include "controller/bke.h"
#include "controller/ebs.h"

/* How one informer's events become keys. */
enum feed {
    FEED_ETCD,
    FEED_COMPONENT,
    FEED_OPSTASK,
    FEED_IMMTASK,
    FEED_CRONJOB,
    FEED_BACKUP,
    FEED_BUCKET,
    FEED_BKENTRY,
    FEED_EBACKUP,
    FEED_RESTORE,
    FEED_SCHEDULE
};

/* One watched resource. */
struct kind {
    struct k8s_resource res;
    const char *api_version; /* written into projected components */
    const char *kind;
    enum feed feed;
};

static const struct kind objects[] = {
    { { "druid.gardener.cloud", "v1alpha1", "etcds", 1 }, NULL, "Etcd", FEED_ETCD },
    { { "druid.gardener.cloud", "v1alpha1", "etcdopstasks", 1 },
      NULL,
      "EtcdOpsTask",
      FEED_OPSTASK },
    { { "etcd-warden.io", "v1alpha1", "extendfullsnapshotimmutabilitytasks", 1 },
      NULL,
      "ExtendFullSnapshotImmutabilityTask",
      FEED_IMMTASK },
    { { "batch", "v1", "cronjobs", 1 }, NULL, "CronJob", FEED_CRONJOB },
    { { "etcd-warden.io", "v1alpha1", "etcdstatusbackups", 1 },
      NULL,
      "EtcdStatusBackup",
      FEED_BACKUP },
    /* with --backup-entries only (cluster-scoped: never restricted to a namespace) */
    { { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 }, NULL, "BackupBucket", FEED_BUCKET },
    { { "etcd-warden.io", "v1alpha1", "backupentries", 0 }, NULL, "BackupEntry", FEED_BKENTRY },
    /* with --backups only */
    { { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 }, NULL, "EtcdBackup", FEED_EBACKUP },
    { { "etcd-warden.io", "v1alpha1", "etcdrestores", 1 }, NULL, "EtcdRestore", FEED_RESTORE },
    { { "etcd-warden.io", "v1alpha1", "etcdbackupschedules", 1 },
      NULL,
      "EtcdBackupSchedule",
      FEED_SCHEDULE },
};

/* The cache each entry of objects fills. */
static const enum ctl_cache object_cache[] = { CTL_C_ETCDS,     CTL_C_OPSTASKS,      CTL_C_IMMTASKS,
                                               CTL_C_CRONJOBS,  CTL_C_STATUSBACKUPS, CTL_C_BUCKETS,
                                               CTL_C_BKENTRIES, CTL_C_BACKUPS,       CTL_C_RESTORES,
                                               CTL_C_SCHEDULES };

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

#define NOBJECTS    (sizeof(objects) / sizeof(objects[0]))
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
    const struct kind *k;
};

struct ctl_caches {
    struct ctl_caches_opts o;
    char *ns; /* OWNS or NULL */
    struct inf *objs[NOBJECTS];
    struct inf *comps[NCOMPONENTS];
    struct feedctx objctx[NOBJECTS];
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
    "metadata.name",   "metadata.namespace",       "metadata.uid",
    "metadata.labels", "metadata.resourceVersion", "metadata.ownerReferences",
    "spec.replicas",   "status.replicas",          NULL,
};

/*
 * apiVersion, kind (of the informer: lists leave them out) and the metadata of
 * component_paths; Services and StatefulSets keep what hibernation reads too.
 */
static enum kerr project_component(void *ctx, const cJSON *obj, cJSON **out)
{
    const struct kind *k = ctx;
    const char *const *paths = strcmp(k->kind, "Service") == 0       ? service_paths
                               : strcmp(k->kind, "StatefulSet") == 0 ? statefulset_paths
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
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    const char *etcd = kjson_get_str(obj, "metadata.labels[" CTL_LABEL_PART_OF "]");
    char v[KOBJ_KEY_MAX];
    int len;

    (void)ctx;
    if (!etcd || !*etcd)
        return KERR_OK;
    len = snprintf(v, sizeof(v), "%s/%s", ns ? ns : "", etcd);
    if (len < 0 || (size_t)len >= sizeof(v))
        return KERR_OK;
    return strlist_add(values, v);
}

/* "<ns>/<spec.etcdName>" of a task. */
static enum kerr index_etcd_name(void *ctx, const cJSON *obj, struct strlist *values)
{
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    const char *etcd = kjson_get_str(obj, "spec.etcdName");
    char v[KOBJ_KEY_MAX];
    int len;

    (void)ctx;
    if (!etcd || !*etcd)
        return KERR_OK;
    len = snprintf(v, sizeof(v), "%s/%s", ns ? ns : "", etcd);
    if (len < 0 || (size_t)len >= sizeof(v))
        return KERR_OK;
    return strlist_add(values, v);
}

/* The hibernation phase of an Etcd, "none" without one. */
static enum kerr index_phase(void *ctx, const cJSON *obj, struct strlist *values)
{
    const char *p = kjson_get_str(obj, "metadata.annotations[" CTL_ANN_PHASE "]");

    (void)ctx;
    return strlist_add(values, p && *p ? p : "none");
}

/* ---- events to keys ---- */

static void key(struct ctl_caches *c, const char *kind, const cJSON *obj, const char *name)
{
    const char *ns = kjson_get_str(obj, "metadata.namespace");

    if (name && *name)
        c->o.on_key(c->o.ctx, kind, ns ? ns : "", name);
}

/* The name of obj's owner of kind (an ownerReference), or NULL. */
static const char *owner_named(const cJSON *obj, const char *kind)
{
    const cJSON *ref;

    cJSON_ArrayForEach (ref, kjson_get_arr(obj, "metadata.ownerReferences")) {
        const char *k = kjson_get_str(ref, "kind");

        if (k && strcmp(k, kind) == 0)
            return kjson_get_str(ref, "name");
    }
    return NULL;
}

/* Whether the update of a task touched more than its status (and resourceVersion). */
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

/* Every bucket's key: an Etcd may join or leave any bucket. */
static void bucket_keys(struct ctl_caches *c)
{
    struct store *s = ctl_caches_store(c, CTL_C_BUCKETS);
    struct strlist keys;
    size_t i;

    strlist_init(&keys);
    if (s && store_keys(s, &keys, NULL) == KERR_OK) {
        for (i = 0; i < keys.n; i++)
            c->o.on_key(c->o.ctx, "bucket", "", keys.v[i]);
    }
    strlist_release(&keys);
}

static void feed(struct feedctx *f, const cJSON *obj, int own_key)
{
    struct ctl_caches *c = f->c;

    switch (f->k->feed) {
    case FEED_BUCKET:
        key(c, "bucket", obj, kjson_get_str(obj, "metadata.name"));
        break;
    case FEED_BKENTRY:
        key(c, "bucket", obj, kjson_get_str(obj, "spec.bucketName"));
        break;
    case FEED_EBACKUP:
        key(c, "backup", obj, kjson_get_str(obj, "metadata.name"));
        key(c, "bschedule", obj, ebs_backup_schedule(obj));
        break;
    case FEED_RESTORE:
        key(c, "restore", obj, kjson_get_str(obj, "metadata.name"));
        break;
    case FEED_ETCD:
        bucket_keys(c);
        key(c, "etcd", obj, kjson_get_str(obj, "metadata.name"));
        break;
    case FEED_BACKUP:
        key(c, "etcd", obj, kjson_get_str(obj, "metadata.name"));
        break;
    case FEED_COMPONENT:
        key(c, "etcd", obj, kjson_get_str(obj, "metadata.labels[" CTL_LABEL_PART_OF "]"));
        break;
    case FEED_OPSTASK:
        if (own_key)
            key(c, "opstask", obj, kjson_get_str(obj, "metadata.name"));
        key(c, "etcd", obj, kjson_get_str(obj, "spec.etcdName"));
        break;
    case FEED_IMMTASK:
        if (own_key)
            key(c, "immtask", obj, kjson_get_str(obj, "metadata.name"));
        key(c, "etcd", obj, kjson_get_str(obj, "spec.etcdName"));
        break;
    case FEED_CRONJOB:
        key(c, "immtask", obj, owner_named(obj, "ExtendFullSnapshotImmutabilityTask"));
        break;
    case FEED_SCHEDULE:
        if (own_key)
            key(c, "bschedule", obj, kjson_get_str(obj, "metadata.name"));
        break;
    }
}

/*
 * Mirror a component into the combined store, as its compact text (a raw
 * item: the store keeps the text as it is and parses it once for the key
 * and the index, cheaper than copying the tree).
 */
static void mirror_put(struct ctl_caches *c, const cJSON *obj)
{
    struct kerr_info err;
    char *text = cJSON_PrintUnformatted(obj);
    cJSON *raw = text ? cJSON_CreateRaw(text) : NULL;

    free(text);
    kerr_clear(&err);
    if (!raw || store_put(c->components, raw, NULL, NULL, &err))
        log_warn("component not cached", "error", raw ? err.msg : "out of memory");
}

static void mirror_remove(struct ctl_caches *c, const cJSON *obj)
{
    char k[STORE_KEY_MAX];

    if (!store_key_of(c->components, obj, k, sizeof(k), NULL))
        (void)store_remove(c->components, k, NULL, NULL);
}

static void on_add(void *ctx, const cJSON *obj)
{
    struct feedctx *f = ctx;

    if (f->k->feed == FEED_COMPONENT)
        mirror_put(f->c, obj);
    feed(f, obj, 1);
}

static void on_update(void *ctx, const cJSON *old_obj, const cJSON *new_obj)
{
    struct feedctx *f = ctx;
    const char *a = kjson_get_str(old_obj, "metadata.labels[" CTL_LABEL_PART_OF "]");
    const char *b = kjson_get_str(new_obj, "metadata.labels[" CTL_LABEL_PART_OF "]");

    if (f->k->feed == FEED_COMPONENT && old_obj != new_obj)
        mirror_put(f->c, new_obj);
    /* A component that moved to another Etcd concerns both. */
    if (f->k->feed == FEED_COMPONENT && a && (!b || strcmp(a, b) != 0))
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
    struct feedctx *f = ctx;

    if (f->k->feed == FEED_COMPONENT)
        mirror_remove(f->c, obj);
    feed(f, obj, 1);
}

/* ---- lifecycle ---- */

static enum kerr new_informer(struct ctl_caches *c, const struct kind *k, struct feedctx *f,
                              struct inf **out, struct kerr_info *err)
{
    struct inf_handlers h = { on_add, on_update, on_delete, f };
    struct inf_opts o;
    enum kerr rc;

    memset(&o, 0, sizeof(o));
    o.res = &k->res;
    o.ns = k->res.namespaced ? c->ns : NULL;
    o.name = k->kind;
    o.compact = 1;
    if (k->feed == FEED_CRONJOB)
        o.label_selector = CTL_LABEL_MANAGED_BY "=etcd-warden";
    if (k->feed == FEED_COMPONENT) {
        o.label_selector = CTL_LABEL_MANAGED_BY "=etcd-druid";
        o.project = project_component;
        o.project_ctx = (void *)k;
    } else {
        o.project = project_object;
    }
    if (k->feed == FEED_ETCD)
        o.resync_ms = c->o.resync_ms;
    f->c = c;
    f->k = k;
    if ((rc = inf_new(c->o.client, &o, out, err)) || (rc = inf_add_handlers(*out, &h, err)))
        return rc;
    if (k->feed == FEED_ETCD)
        rc = store_add_index(inf_store(*out), CTL_INDEX_PHASE, index_phase, NULL, err);
    if (k->feed == FEED_OPSTASK || k->feed == FEED_IMMTASK || k->feed == FEED_EBACKUP)
        rc = store_add_index(inf_store(*out), CTL_INDEX_ETCD_NAME, index_etcd_name, NULL, err);
    if (k->feed == FEED_BKENTRY)
        rc = store_add_index(inf_store(*out), BKE_INDEX_BUCKET, bke_index_bucket, NULL, err);
    return rc;
}

enum kerr ctl_caches_new(const struct ctl_caches_opts *o, struct ctl_caches **out,
                         struct kerr_info *err)
{
    struct store_opts so = { 0 };
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
    for (i = 0; !rc && i < NOBJECTS; i++) {
        if ((o->backup_entries ||
             (objects[i].feed != FEED_BUCKET && objects[i].feed != FEED_BKENTRY)) &&
            (o->backups || (objects[i].feed != FEED_EBACKUP && objects[i].feed != FEED_RESTORE &&
                            objects[i].feed != FEED_SCHEDULE)))
            rc = new_informer(c, &objects[i], &c->objctx[i], &c->objs[i], err);
    }
    for (i = 0; !rc && i < NCOMPONENTS; i++)
        rc = new_informer(c, &components[i], &c->compctx[i], &c->comps[i], err);
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

    for (i = 0; !rc && i < NOBJECTS; i++)
        rc = c->objs[i] ? inf_start(c->objs[i], err) : KERR_OK;
    for (i = 0; !rc && i < NCOMPONENTS; i++)
        rc = inf_start(c->comps[i], err);
    return rc;
}

int ctl_caches_synced(struct ctl_caches *c)
{
    size_t i;

    for (i = 0; i < NOBJECTS; i++) {
        if (c->objs[i] && !inf_has_synced(c->objs[i]))
            return 0;
    }
    for (i = 0; i < NCOMPONENTS; i++) {
        if (!inf_has_synced(c->comps[i]))
            return 0;
    }
    return 1;
}

struct store *ctl_caches_store(struct ctl_caches *c, enum ctl_cache w)
{
    size_t i;

    if (w == CTL_C_COMPONENTS)
        return c->components;
    for (i = 0; i < NOBJECTS; i++) {
        if (object_cache[i] == w)
            return c->objs[i] ? inf_store(c->objs[i]) : NULL;
    }
    return NULL;
}

size_t ctl_caches_phase_count(struct ctl_caches *c, const char *phase)
{
    struct strlist keys;
    size_t n = 0;

    strlist_init(&keys);
    if (!store_index_keys(inf_store(c->objs[0]), CTL_INDEX_PHASE, phase, &keys, NULL))
        n = keys.n;
    strlist_release(&keys);
    return n;
}

size_t ctl_caches_objects(struct ctl_caches *c)
{
    size_t i, n = store_count(c->components);

    for (i = 0; i < NOBJECTS; i++)
        n += c->objs[i] ? store_count(inf_store(c->objs[i])) : 0;
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
    struct inf *all[NOBJECTS + NCOMPONENTS];
    pthread_t t[NOBJECTS + NCOMPONENTS];
    int started[NOBJECTS + NCOMPONENTS];
    size_t i, n = 0;

    for (i = 0; i < NOBJECTS; i++)
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
    for (i = 0; i < NOBJECTS; i++)
        inf_free(c->objs[i]);
    for (i = 0; i < NCOMPONENTS; i++)
        inf_free(c->comps[i]);
    store_free(c->components);
    free(c->ns);
    free(c);
}
