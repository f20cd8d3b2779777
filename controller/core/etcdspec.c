/* etcdspec - reading and validating an Etcd; component names as etcd-druid gives them. */
#include "controller/core/etcdspec.h"

#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "controller/core/cron.h"

const struct k8s_resource ETCDSPEC_RES_ETCD = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };
const struct k8s_resource ETCDSPEC_RES_STATUSBACKUP = { "etcd-warden.io", "v1alpha1",
                                                        "etcdstatusbackups", 1 };
const struct k8s_resource ETCDSPEC_RES_IMMTASK = { "etcd-warden.io", "v1alpha1",
                                                   "extendfullsnapshotimmutabilitytasks", 1 };
const struct k8s_resource ETCDSPEC_RES_OPSTASK = { "druid.gardener.cloud", "v1alpha1",
                                                   "etcdopstasks", 1 };
const struct k8s_resource ETCDSPEC_RES_CRONJOB = { "batch", "v1", "cronjobs", 1 };
const struct k8s_resource ETCDSPEC_RES_SECRET = { "", "v1", "secrets", 1 };
const struct k8s_resource ETCDSPEC_RES_JOB = { "batch", "v1", "jobs", 1 };
const struct k8s_resource ETCDSPEC_RES_POD = { "", "v1", "pods", 1 };

/* A component kind: its resource, apiVersion and whether etcd-druid owns it by the Etcd. */
struct kind_info {
    const char *kind;
    const char *api_version;
    struct k8s_resource res;
    int owned;
};

static const struct kind_info KINDS[] = {
    { "ServiceAccount", "v1", { "", "v1", "serviceaccounts", 1 }, 1 },
    { "Service", "v1", { "", "v1", "services", 1 }, 1 },
    { "ConfigMap", "v1", { "", "v1", "configmaps", 1 }, 1 },
    { "Role",
      "rbac.authorization.k8s.io/v1",
      { "rbac.authorization.k8s.io", "v1", "roles", 1 },
      1 },
    { "RoleBinding",
      "rbac.authorization.k8s.io/v1",
      { "rbac.authorization.k8s.io", "v1", "rolebindings", 1 },
      1 },
    { "StatefulSet", "apps/v1", { "apps", "v1", "statefulsets", 1 }, 1 },
    { "PodDisruptionBudget", "policy/v1", { "policy", "v1", "poddisruptionbudgets", 1 }, 1 },
    { "Lease", "coordination.k8s.io/v1", { "coordination.k8s.io", "v1", "leases", 1 }, 1 },
    { "Job", "batch/v1", { "batch", "v1", "jobs", 1 }, 1 },
    { "PersistentVolumeClaim", "v1", { "", "v1", "persistentvolumeclaims", 1 }, 0 },
};

static const struct kind_info *kind_find(const char *kind)
{
    size_t i;

    for (i = 0; kind && i < sizeof(KINDS) / sizeof(KINDS[0]); i++)
        if (strcmp(KINDS[i].kind, kind) == 0)
            return &KINDS[i];
    return NULL;
}

const struct k8s_resource *etcdspec_kind_resource(const char *kind)
{
    const struct kind_info *k = kind_find(kind);

    return k ? &k->res : NULL;
}

const char *etcdspec_kind_api_version(const char *kind)
{
    const struct kind_info *k = kind_find(kind);

    return k ? k->api_version : NULL;
}

int etcdspec_kind_owned(const char *kind)
{
    const struct kind_info *k = kind_find(kind);

    return k && k->owned;
}

/* The provider names etcd-druid accepts: one table, common/bstore's. */
const char *etcdspec_provider_kind(const char *provider)
{
    return bstore_provider_kind(provider);
}

static const char *map_str(const cJSON *obj, const char *map, const char *key)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(kjson_get(obj, "metadata"), map);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *etcdspec_label(const cJSON *obj, const char *key)
{
    return map_str(obj, "labels", key);
}

const char *etcdspec_annotation(const cJSON *obj, const char *key)
{
    return map_str(obj, "annotations", key);
}

enum kerr etcdspec_read(const cJSON *etcd, struct etcdspec *out, struct kerr_info *err)
{
    const cJSON *store;
    int64_t v = 0;

    memset(out, 0, sizeof(*out));
    out->name = kjson_get_str(etcd, "metadata.name");
    if (!out->name || !out->name[0])
        return kerr_set(err, KERR_INVAL, "the Etcd has no metadata.name");
    out->namespace = kjson_get_str(etcd, "metadata.namespace");
    out->uid = kjson_get_str(etcd, "metadata.uid");
    if (kjson_get_int64(etcd, "spec.replicas", &v) == KERR_OK)
        out->replicas = v;
    store = kjson_get_obj(etcd, "spec.backup.store");
    out->has_store = store != NULL;
    if (store) {
        out->store.provider = kjson_get_str(store, "provider");
        out->store.provider_kind = etcdspec_provider_kind(out->store.provider);
        out->store.container = kjson_get_str(store, "container");
        out->store.prefix = kjson_get_str(store, "prefix");
        out->store.secret_name = kjson_get_str(store, "secretRef.name");
        out->store.secret_namespace = kjson_get_str(store, "secretRef.namespace");
    }
    out->retention_type = kjson_get_str(etcd, "spec.backup.store.immutability.retentionType");
    if (!out->retention_type && !kjson_has(etcd, "spec.backup.store.immutability.retentionType"))
        out->retention_type = etcdspec_annotation(etcd, ETCDSPEC_ANN_RETENTION_TYPE);
    out->full_snapshot_schedule = kjson_get_str(etcd, "spec.backup.fullSnapshotSchedule");
    out->backup_tls = kjson_get_obj(etcd, "spec.backup.tls") != NULL;
    out->backup_port = 8080;
    if (kjson_get_int64(etcd, "spec.backup.port", &v) == KERR_OK && v > 0 && v < 65536)
        out->backup_port = (long)v;
    return KERR_OK;
}

int etcdspec_bucket_immutability(const cJSON *etcd)
{
    struct etcdspec s;

    if (etcdspec_read(etcd, &s, NULL) != KERR_OK || !s.retention_type)
        return 0;
    return strcmp(s.retention_type, ETCDSPEC_RETENTION_BUCKET) == 0;
}

int etcdspec_bucket_state(const cJSON *etcd, struct kerr_info *err)
{
    int has = kjson_get(etcd, "spec.backup.store.immutability") != NULL ||
              etcdspec_annotation(etcd, ETCDSPEC_ANN_RETENTION_TYPE) != NULL;

    if (has && etcdspec_validate(etcd, err) != KERR_OK)
        return -1;
    return etcdspec_bucket_immutability(etcd) == 1;
}

static enum kerr check_immutability(const cJSON *etcd, struct kerr_info *err)
{
    const cJSON *imm = kjson_get(etcd, "spec.backup.store.immutability");
    const cJSON *rt;
    const char *ann;

    if (imm) {
        if (!cJSON_IsObject(imm))
            return kerr_set(err, KERR_INVAL,
                            "spec.backup.store.immutability: must be an object with retentionType");
        rt = cJSON_GetObjectItemCaseSensitive(imm, "retentionType");
        if (rt && !cJSON_IsString(rt))
            return kerr_set(err, KERR_INVAL,
                            "spec.backup.store.immutability.retentionType: must be a string");
        if (rt && strcmp(rt->valuestring, ETCDSPEC_RETENTION_BUCKET) != 0)
            return kerr_set(err, KERR_INVAL,
                            "spec.backup.store.immutability.retentionType: unsupported value "
                            "\"%s\": supported values: \"bucket\"",
                            rt->valuestring);
        if (rt)
            return KERR_OK;
    }
    ann = etcdspec_annotation(etcd, ETCDSPEC_ANN_RETENTION_TYPE);
    if (ann && strcmp(ann, ETCDSPEC_RETENTION_BUCKET) != 0)
        return kerr_set(err, KERR_INVAL,
                        "annotation " ETCDSPEC_ANN_RETENTION_TYPE ": unsupported value \"%s\": "
                        "supported values: \"bucket\"",
                        ann);
    if (ann && !kjson_get_obj(etcd, "spec.backup.store"))
        return kerr_set(err, KERR_INVAL,
                        "annotation " ETCDSPEC_ANN_RETENTION_TYPE
                        ": immutability needs a backup store (spec.backup.store)");
    return KERR_OK;
}

static enum kerr check_store(const cJSON *etcd, struct kerr_info *err)
{
    const cJSON *store = kjson_get(etcd, "spec.backup.store");
    const char *p;

    if (!store || cJSON_IsNull(store))
        return KERR_OK;
    if (!cJSON_IsObject(store))
        return kerr_set(err, KERR_INVAL, "spec.backup.store: must be an object");
    p = kjson_get_str(store, "provider");
    if (kjson_has(store, "provider") && !p)
        return kerr_set(err, KERR_INVAL, "spec.backup.store.provider: must be a string");
    if (p && !etcdspec_provider_kind(p))
        return kerr_set(err, KERR_INVAL, "spec.backup.store.provider: unsupported provider \"%s\"",
                        p);
    if (!kjson_get_str(store, "prefix"))
        return kerr_set(err, KERR_INVAL, "spec.backup.store.prefix: required");
    return KERR_OK;
}

enum kerr etcdspec_validate(const cJSON *etcd, struct kerr_info *err)
{
    const cJSON *sched = kjson_get(etcd, "spec.backup.fullSnapshotSchedule");
    enum kerr rc;

    if (!kjson_get_str(etcd, "metadata.name"))
        return kerr_set(err, KERR_INVAL, "metadata.name: required");
    rc = check_store(etcd, err);
    if (rc == KERR_OK)
        rc = check_immutability(etcd, err);
    if (rc != KERR_OK || !sched || cJSON_IsNull(sched))
        return rc;
    if (!cJSON_IsString(sched))
        return kerr_set(err, KERR_INVAL, "spec.backup.fullSnapshotSchedule: must be a string");
    rc = etcdspec_cron_check(sched->valuestring, err);
    return rc == KERR_OK ? rc : kerr_wrap(err, "spec.backup.fullSnapshotSchedule");
}

/* ---- cron ---- */

enum kerr etcdspec_cron_check(const char *expr, struct kerr_info *err)
{
    struct cron c;

    if (cron_parse(expr, &c, err) == KERR_OK)
        return KERR_OK;
    if (!err)
        return KERR_INVAL;
    return kerr_wrap(err, "\"%.*s\" is not a cron expression", 64, expr ? expr : "");
}

/* ---- components ---- */

/* Append {apiVersion, kind, name: pre + name + suf} to arr. */
static enum kerr add_component(cJSON *arr, const char *kind, const char *pre, const char *name,
                               const char *suf)
{
    char buf[ETCDSPEC_NAME_MAX + 64];
    cJSON *c = cJSON_CreateObject();

    snprintf(buf, sizeof(buf), "%s%s%s", pre, name, suf);
    if (!c || !cJSON_AddStringToObject(c, "apiVersion", etcdspec_kind_api_version(kind)) ||
        !cJSON_AddStringToObject(c, "kind", kind) || !cJSON_AddStringToObject(c, "name", buf) ||
        !cJSON_AddItemToArray(arr, c)) {
        cJSON_Delete(c);
        return KERR_NOMEM;
    }
    return KERR_OK;
}

enum kerr etcdspec_components(const cJSON *etcd, cJSON **out, struct kerr_info *err)
{
    static const struct {
        const char *kind, *pre, *suf;
    } FIXED[] = {
        { "StatefulSet", "", "" },
        { "Service", "", "-client" },
        { "Service", "", "-peer" },
        { "ConfigMap", "", "-config" },
        { "ServiceAccount", "", "" },
        { "Role", "druid.gardener.cloud:etcd:", "" },
        { "RoleBinding", "druid.gardener.cloud:etcd:", "" },
        { "PodDisruptionBudget", "", "" },
    };
    char ord[32];
    struct etcdspec s;
    cJSON *arr = NULL;
    enum kerr rc;
    size_t i;
    long r;

    *out = NULL;
    rc = etcdspec_read(etcd, &s, err);
    if (rc != KERR_OK)
        return rc;
    if (strlen(s.name) > ETCDSPEC_NAME_MAX - 32)
        return kerr_set(err, KERR_INVAL, "Etcd name too long: %s", s.name);
    arr = cJSON_CreateArray();
    rc = arr ? KERR_OK : KERR_NOMEM;
    for (i = 0; rc == KERR_OK && i < sizeof(FIXED) / sizeof(FIXED[0]); i++)
        rc = add_component(arr, FIXED[i].kind, FIXED[i].pre, s.name, FIXED[i].suf);
    for (r = 0; rc == KERR_OK && r < s.replicas && r < 1000; r++) {
        snprintf(ord, sizeof(ord), "-%ld", r);
        rc = add_component(arr, "Lease", "", s.name, ord);
    }
    if (rc == KERR_OK)
        rc = add_component(arr, "Lease", "", s.name, "-full-snap");
    if (rc == KERR_OK)
        rc = add_component(arr, "Lease", "", s.name, "-delta-snap");
    if (rc != KERR_OK) {
        cJSON_Delete(arr);
        return kerr_set(err, rc, NULL);
    }
    *out = arr;
    return KERR_OK;
}

enum kerr etcdspec_client_service_name(const char *etcd_name, char *out, size_t n)
{
    int w = snprintf(out, n, "%s-client", etcd_name ? etcd_name : "");

    return w < 0 || (size_t)w >= n ? KERR_TOOBIG : KERR_OK;
}

enum kerr etcdspec_owner_ref(const cJSON *etcd, cJSON **out, struct kerr_info *err)
{
    const char *name = kjson_get_str(etcd, "metadata.name");
    const char *uid = kjson_get_str(etcd, "metadata.uid");
    cJSON *ref;

    *out = NULL;
    if (!name || !uid || !uid[0])
        return kerr_set(err, KERR_INVAL, "the Etcd has no metadata.name or metadata.uid");
    ref = cJSON_CreateObject();
    if (!ref || !cJSON_AddStringToObject(ref, "apiVersion", ETCDSPEC_API_VERSION) ||
        !cJSON_AddStringToObject(ref, "kind", ETCDSPEC_KIND) ||
        !cJSON_AddStringToObject(ref, "name", name) || !cJSON_AddStringToObject(ref, "uid", uid) ||
        !cJSON_AddTrueToObject(ref, "controller") ||
        !cJSON_AddTrueToObject(ref, "blockOwnerDeletion")) {
        cJSON_Delete(ref);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    *out = ref;
    return KERR_OK;
}
