/* clocal - Local claims placed on the node; see clocal.h. */
#include "controller/core/clocal.h"

#include <stdio.h>
#include <string.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/rtarget.h"
#include "controller/core/etcdspec.h"

static const struct k8s_resource res_bucket = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };

enum kerr clocal_hostpath(struct k8s_client *k, const char *ns, const char *secret,
                          int missing_default, char *out, size_t n, struct kerr_info *err)
{
    cJSON *obj = NULL;
    enum kerr rc = KERR_OK;

    if (secret && *secret)
        rc = k8s_get(k, &ETCDSPEC_RES_SECRET, ns, secret, NULL, &obj, err);
    if (rc == KERR_NOTFOUND && missing_default) {
        kerr_clear(err);
        rc = KERR_OK;
    }
    if (rc == KERR_OK)
        rc = blocal_hostpath(obj, out, n, err);
    cJSON_Delete(obj);
    return rc;
}

enum kerr clocal_bucket_hostpath(struct k8s_client *k, const cJSON *bucket, char *out, size_t n,
                                 struct kerr_info *err)
{
    const char *ns = kjson_get_str(bucket, "spec.secretRef.namespace");
    const char *name = kjson_get_str(bucket, "spec.secretRef.name");

    if (!ns || !name)
        return kerr_set(err, KERR_INVAL, "the bucket names no Secret");
    return clocal_hostpath(k, ns, name, 0, out, n, err);
}

static int is_local(const cJSON *store)
{
    const char *kind = bstore_provider_kind(kjson_get_str(store, "provider"));

    return kind && strcmp(kind, "Local") == 0;
}

/* The hostPath of one item into out; KERR_OK when known. */
static enum kerr hostpath_of(struct k8s_client *k, const cJSON *it, enum clocal_kind kind,
                             char *out, size_t n)
{
    const char *ns = kjson_get_str(it, "metadata.namespace"), *a;
    cJSON *bucket = NULL;
    enum kerr rc;

    if (kind == CLOCAL_ETCD)
        return clocal_hostpath(k, ns, kjson_get_str(it, "spec.backup.store.secretRef.name"), 0, out,
                               n, NULL);
    if (kind == CLOCAL_BACKUP && (a = kjson_get_str(it, "status.destination.hostPath"))) {
        snprintf(out, n, "%s", a); /* as its copy Job mounted it */
        return strlen(a) < n ? KERR_OK : KERR_TOOBIG;
    }
    if (kind == CLOCAL_BACKUP)
        return clocal_hostpath(k, ns, kjson_get_str(it, "spec.destination.secretRef.name"), 1, out,
                               n, NULL);
    if ((a = kjson_get_str(it, "metadata.annotations[" BLOCAL_HOSTPATH_ANNOTATION "]"))) {
        snprintf(out, n, "%s", a);
        return strlen(a) < n ? KERR_OK : KERR_TOOBIG;
    }
    if (!kjson_get_str(it, "spec.bucketName") || !*kjson_get_str(it, "spec.bucketName"))
        return KERR_NOTFOUND;
    rc = k8s_get(k, &res_bucket, NULL, kjson_get_str(it, "spec.bucketName"), NULL, &bucket, NULL);
    if (rc == KERR_OK)
        rc = clocal_bucket_hostpath(k, bucket, out, n, NULL);
    cJSON_Delete(bucket);
    return rc;
}

void clocal_place(struct k8s_client *k, cJSON *items, enum clocal_kind kind)
{
    char hostpath[BLOCAL_HOSTPATH_MAX + 1], dir[BLOCAL_HOSTPATH_MAX + 2 * BLOCAL_PREFIX_MAX];
    const char *base = kind == CLOCAL_ETCD    ? "spec.backup.store"
                       : kind == CLOCAL_ENTRY ? "spec.store"
                                              : "status.destination";
    cJSON *it;

    cJSON_ArrayForEach (it, items) {
        const cJSON *st = kjson_get(it, base);
        const char *prefix =
            kind == CLOCAL_ENTRY ? kjson_get_str(it, "spec.prefix") : kjson_get_str(st, "prefix");

        if (!cJSON_IsObject(st) || !is_local(st))
            continue;
        if (hostpath_of(k, it, kind, hostpath, sizeof(hostpath)) == KERR_OK &&
            blocal_dir(hostpath, kjson_get_str(st, "container"), prefix, dir, sizeof(dir), NULL) ==
                KERR_OK)
            cJSON_AddStringToObject(it, CLOCAL_DIR, dir);
        else
            cJSON_AddTrueToObject(it, CLOCAL_UNKNOWN);
    }
}

/* The hostPath of restore r's target into out; KERR_OK when known. */
static enum kerr target_hostpath(struct k8s_client *k, const cJSON *r, const cJSON *etcds,
                                 const cJSON *backups, char *out, size_t n)
{
    const char *a = kjson_get_str(r, "status.targetHostPath"), *secret = NULL;

    if (a && *a) { /* as its copy Job mounts it */
        snprintf(out, n, "%s", a);
        return strlen(a) < n ? KERR_OK : KERR_TOOBIG;
    }
    if (!rtarget_local_secret_in(r, etcds, backups, &secret))
        return KERR_NOTFOUND;
    return clocal_hostpath(k, kjson_get_str(r, "metadata.namespace"), secret, 0, out, n, NULL);
}

void clocal_place_restores(struct k8s_client *k, cJSON *restores, const cJSON *etcds,
                           const cJSON *backups)
{
    char hostpath[BLOCAL_HOSTPATH_MAX + 1], dir[BLOCAL_HOSTPATH_MAX + 2 * BLOCAL_PREFIX_MAX];
    cJSON *r;

    cJSON_ArrayForEach (r, restores) {
        const cJSON *st = kjson_get(r, "spec.target.store");
        struct rtarget t;

        /* the provider as the webhook resolved it (common/rtarget): Local, or not this */
        if (!cJSON_IsObject(st) || rtarget_resolve_in(r, etcds, backups, &t) == RTARGET_UNKNOWN ||
            !t.provider || !bstore_provider_kind(t.provider) ||
            strcmp(bstore_provider_kind(t.provider), "Local") != 0)
            continue;
        if (target_hostpath(k, r, etcds, backups, hostpath, sizeof(hostpath)) == KERR_OK &&
            blocal_dir(hostpath, kjson_get_str(st, "container"), kjson_get_str(st, "prefix"), dir,
                       sizeof(dir), NULL) == KERR_OK)
            cJSON_AddStringToObject(r, CLOCAL_DIR, dir);
        else
            cJSON_AddTrueToObject(r, CLOCAL_UNKNOWN);
    }
}
