/* erst_etcd - the new Etcd of an EtcdRestore and the one-prefix-one-cluster check of its
 * target store; see erst.h. */
#include <stdio.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/kpath.h"
#include "common/store.h"
#include "controller/erst.h"
#include "controller/etcdspec.h"

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

struct probe {
    const char *key, *prefix, *ns, *name;
    char *why;
    size_t n;
    int found;
};

/* Another owner than p's whose claim (store key of provider/container/endpoint, prefix) overlaps.
 */
static int overlaps(struct probe *p, const char *ons, const char *oname, const char *provider,
                    const char *container, const char *endpoint, const char *prefix)
{
    char key[1024];

    if (!prefix || !ons || !oname || (strcmp(ons, p->ns) == 0 && strcmp(oname, p->name) == 0) ||
        bstore_key(provider, container, endpoint, key, sizeof(key)) != KERR_OK ||
        strcmp(key, p->key) != 0)
        return 0;
    return kpath_overlap(p->prefix, prefix) == 1;
}

static enum kerr view_etcd(void *ctx, const char *k, const cJSON *o)
{
    struct probe *p = ctx;
    const char *prefix = kjson_get_str(o, "spec.backup.store.prefix");

    (void)k;
    if (!overlaps(p, kjson_get_str(o, "metadata.namespace"), kjson_get_str(o, "metadata.name"),
                  kjson_get_str(o, "spec.backup.store.provider"),
                  kjson_get_str(o, "spec.backup.store.container"),
                  kjson_get_str(o, "spec.backup.store.endpointOverride"), prefix))
        return KERR_OK;
    snprintf(p->why, p->n, "the prefix \"%s\" of Etcd %s/%s", prefix,
             kjson_get_str(o, "metadata.namespace"), kjson_get_str(o, "metadata.name"));
    p->found = 1;
    return KERR_EXISTS;
}

static enum kerr view_entry(void *ctx, const char *k, const cJSON *o)
{
    struct probe *p = ctx;
    const char *prefix = kjson_get_str(o, "spec.prefix");

    (void)k;
    if (!overlaps(p, kjson_get_str(o, "spec.etcd.namespace"), kjson_get_str(o, "spec.etcd.name"),
                  kjson_get_str(o, "spec.store.provider"), kjson_get_str(o, "spec.store.container"),
                  kjson_get_str(o, "spec.store.endpointOverride"), prefix))
        return KERR_OK;
    snprintf(p->why, p->n, "the prefix \"%s\" of BackupEntry %s of Etcd %s/%s", prefix,
             kjson_get_str(o, "metadata.name"), kjson_get_str(o, "spec.etcd.namespace"),
             kjson_get_str(o, "spec.etcd.name"));
    p->found = 1;
    return KERR_EXISTS;
}

int erst_prefix_in_use(struct k8s_client *client, struct store *etcds, struct store *entries,
                       const char *ns, const char *name, const struct erst_store *s, char *why,
                       size_t n, struct kerr_info *err)
{
    char key[1024];
    struct probe p = { key, s->prefix, ns, name, why, n, 0 };
    cJSON *list = NULL;
    const cJSON *it;
    enum kerr rc;

    *why = '\0';
    if (!s->prefix || bstore_key(s->provider, s->container, s->endpoint, key, sizeof(key)))
        return kerr_set(err, KERR_INVAL, "the target store has no known provider or no container"),
               -1;
    if (etcds) {
        (void)store_foreach(etcds, view_etcd, &p, NULL);
    } else {
        rc = k8s_list_all(client, &ETCDSPEC_RES_ETCD, NULL, NULL, &list, err);
        if (rc)
            return -1;
        cJSON_ArrayForEach (it, kjson_get_arr(list, "items")) {
            if (view_etcd(&p, NULL, it) != KERR_OK)
                break;
        }
        cJSON_Delete(list);
    }
    if (!p.found && entries)
        (void)store_foreach(entries, view_entry, &p, NULL);
    return p.found;
}
