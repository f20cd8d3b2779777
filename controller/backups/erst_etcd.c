/* erst_etcd - the new Etcd of an EtcdRestore and the one-prefix-one-cluster check of its
 * target store; see erst.h. */
#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/store.h"
#include "controller/core/claims.h"
#include "controller/backups/erst.h"
#include "controller/core/etcdspec.h"

const struct k8s_resource ERST_RES_RESTORE = { "etcd-warden.io", "v1alpha1", "etcdrestores", 1 };
const struct k8s_resource ERST_RES_BACKUP = { "etcd-warden.io", "v1alpha1", "etcdbackups", 1 };

/* ---- the new Etcd ---- */

/* Labels and annotations of a source Etcd that must not reach a new one. */
static int dropped_mark(const char *key, int annotation)
{
    if (!annotation)
        return strcmp(key, ETCDSPEC_LABEL_RESTORING) == 0 ||
               strcmp(key, "etcd-warden.io/allow-delete-while-restoring") == 0 ||
               strcmp(key, ERST_LABEL_RESTORED_FROM) == 0;
    /* hibernation intent and phase, restore progress, status-backup-exists (which would
     * make the webhook treat the new Etcd as a re-created one), the suspension */
    if (strncmp(key, "etcd-warden.io/", 15) == 0)
        return strcmp(key, ETCDSPEC_ANN_RETENTION_TYPE) != 0;
    return strcmp(key, ETCDSPEC_ANN_SUSPEND) == 0 ||
           strcmp(key, "kubectl.kubernetes.io/last-applied-configuration") == 0 ||
           strcmp(key, "gardener.cloud/operation") == 0;
}

/* The map at field of meta (may be NULL) into obj.metadata.field without the dropped marks. */
static enum kerr copy_marks(const cJSON *meta, const char *field, cJSON *md)
{
    const cJSON *src = meta ? cJSON_GetObjectItemCaseSensitive(meta, field) : NULL, *it;
    cJSON *dst = cJSON_AddObjectToObject(md, field);

    if (!dst)
        return KERR_NOMEM;
    cJSON_ArrayForEach (it, src) {
        if (cJSON_IsString(it) && !dropped_mark(it->string, strcmp(field, "annotations") == 0) &&
            !cJSON_AddStringToObject(dst, it->string, it->valuestring))
            return KERR_NOMEM;
    }
    return KERR_OK;
}

static cJSON *store_json(const struct erst_store *s)
{
    cJSON *o = cJSON_CreateObject(), *ref;

    if (!o || !cJSON_AddStringToObject(o, "provider", s->provider) ||
        !cJSON_AddStringToObject(o, "container", s->container) ||
        !cJSON_AddStringToObject(o, "prefix", s->prefix) ||
        (s->endpoint && *s->endpoint &&
         !cJSON_AddStringToObject(o, "endpointOverride", s->endpoint)) ||
        (s->secret && (!(ref = cJSON_AddObjectToObject(o, "secretRef")) ||
                       !cJSON_AddStringToObject(ref, "name", s->secret)))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

enum kerr erst_build_etcd(const cJSON *restore, const cJSON *spec, const cJSON *meta,
                          const struct erst_store *target, cJSON **out, struct kerr_info *err)
{
    const char *rname = kjson_get_str(restore, "metadata.name");
    const char *ns = kjson_get_str(restore, "metadata.namespace");
    const char *name = kjson_get_str(restore, "spec.target.etcdName");
    cJSON *e = cJSON_CreateObject(), *md = cJSON_AddObjectToObject(e, "metadata"), *labels, *sp;
    int64_t replicas = 0;
    enum kerr rc = KERR_NOMEM;

    *out = NULL;
    if (!rname || !name || !cJSON_IsObject(spec) || !target->provider || !target->container ||
        !target->prefix) {
        cJSON_Delete(e);
        return kerr_set(err, KERR_INVAL, "the new Etcd needs a name, a spec and a target store");
    }
    if (!md || !cJSON_AddStringToObject(e, "apiVersion", ETCDSPEC_API_VERSION) ||
        !cJSON_AddStringToObject(e, "kind", ETCDSPEC_KIND) ||
        !cJSON_AddStringToObject(md, "name", name) ||
        (ns && !cJSON_AddStringToObject(md, "namespace", ns)) || copy_marks(meta, "labels", md) ||
        copy_marks(meta, "annotations", md))
        goto out;
    labels = cJSON_GetObjectItemCaseSensitive(md, "labels");
    if (!cJSON_AddStringToObject(labels, ERST_LABEL_RESTORED_FROM, rname))
        goto out;
    sp = cJSON_Duplicate(spec, 1);
    if (!sp || !cJSON_AddItemToObject(e, "spec", sp)) {
        cJSON_Delete(sp);
        goto out;
    }
    if ((rc = kjson_set(e, "spec.backup.store", store_json(target), err)))
        goto out;
    /* a hibernated source (replicas 0) would give an Etcd that never starts */
    if (kjson_get_int64(e, "spec.replicas", &replicas) != KERR_OK || replicas <= 0)
        rc = kjson_set_int(e, "spec.replicas", 1, err);
out:
    if (rc) {
        cJSON_Delete(e);
        return rc == KERR_NOMEM ? kerr_set(err, rc, "building the Etcd") : rc;
    }
    *out = e;
    return KERR_OK;
}

/* ---- one prefix, one cluster ---- */

enum kerr erst_target_claim(const struct erst_store *s, const char *host, struct bstore_claim *c,
                            struct kerr_info *err)
{
    const char *kind = bstore_provider_kind(s->provider);

    if (kind && strcmp(kind, "Local") == 0)
        return bstore_local_claim_init(c, host && *host ? host : NULL, s->container, s->prefix,
                                       err);
    return bstore_claim_init(c, s->provider, s->container, s->endpoint, s->prefix, err);
}

int erst_prefix_in_use(struct k8s_client *client, const char *ns, const char *name,
                       const struct erst_store *s, const char *host, char *why, size_t n,
                       struct kerr_info *err)
{
    struct claims_skip skip = { .etcd_ns = ns, .etcd_name = name, .viewer_ns = ns };
    struct bstore_claim c;
    char other[CLAIMS_WHY_MAX];
    enum kerr rc;

    *why = '\0';
    if (erst_target_claim(s, host, &c, err) != KERR_OK)
        return -1;
    rc = claims_find(client, NULL, &c, &skip, other, err);
    bstore_claim_release(&c);
    if (rc != KERR_OK)
        return -1;
    snprintf(why, n, "%s", other);
    return *other != '\0';
}
