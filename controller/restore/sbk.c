/* sbk - the status backup of an Etcd and the status-backup-exists annotation. */
#include "controller/restore/sbk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "common/log.h"
#include "common/store.h"
#include "controller/core/ctl.h"
#include "controller/core/etcdspec.h"
#include "controller/core/oref.h"
#include "controller/core/rctx.h"

/* qsort order of inventory entries: kind, then name. */
static int entry_cmp(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    int c = strcmp(kjson_get_str(x, "kind"), kjson_get_str(y, "kind"));

    return c ? c : strcmp(kjson_get_str(x, "name"), kjson_get_str(y, "name"));
}

static cJSON *entry_new(const cJSON *comp)
{
    const char *kind = kjson_get_str(comp, "kind");
    const char *av = kjson_get_str(comp, "apiVersion");
    cJSON *e = cJSON_CreateObject();

    if (!av)
        av = etcdspec_kind_api_version(kind);
    if (!e || !cJSON_AddStringToObject(e, "apiVersion", av) ||
        !cJSON_AddStringToObject(e, "kind", kind) ||
        !cJSON_AddStringToObject(e, "name", kjson_get_str(comp, "metadata.name"))) {
        cJSON_Delete(e);
        return NULL;
    }
    return e;
}

/* The inventory: owned kinds, not being deleted, sorted. NULL on NOMEM. */
static cJSON *inventory(const cJSON *components)
{
    int n = cJSON_GetArraySize(components), k = 0, i;
    cJSON **v = calloc((size_t)n + 1, sizeof(*v)), *arr = cJSON_CreateArray();
    const cJSON *c;

    if (!v || !arr)
        goto fail;
    cJSON_ArrayForEach (c, components) {
        if (!etcdspec_kind_owned(kjson_get_str(c, "kind")) || !kjson_get_str(c, "metadata.name") ||
            kjson_has(c, "metadata.deletionTimestamp"))
            continue;
        v[k] = entry_new(c);
        if (!v[k])
            goto fail;
        k++;
    }
    qsort(v, (size_t)k, sizeof(*v), entry_cmp);
    for (i = 0; i < k; i++) {
        cJSON_AddItemToArray(arr, v[i]);
        v[i] = NULL;
    }
    free(v);
    return arr;
fail:
    for (i = 0; v && i < k; i++)
        cJSON_Delete(v[i]);
    free(v);
    cJSON_Delete(arr);
    return NULL;
}

enum kerr sbk_desired_spec(const cJSON *etcd, const cJSON *components, cJSON **out,
                           struct kerr_info *err)
{
    const cJSON *status = kjson_get_obj(etcd, "status");
    cJSON *spec = cJSON_CreateObject(), *sb, *inv;

    *out = NULL;
    sb = status ? cJSON_Duplicate(status, 1) : cJSON_CreateObject();
    inv = inventory(components);
    if (!spec || !sb || !inv || !cJSON_AddItemToObject(spec, "statusBackup", sb)) {
        cJSON_Delete(sb);
        cJSON_Delete(inv);
        cJSON_Delete(spec);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    cJSON_AddItemToObject(spec, "components", inv);
    *out = spec;
    return KERR_OK;
}

/* Merge-patch the annotation to value, with the Etcd's resourceVersion as precondition. */
static enum kerr annotate(const struct rctx *x, const struct etcdspec *e, const cJSON *etcd,
                          const char *value, struct kerr_info *err)
{
    cJSON *p = cJSON_CreateObject();
    enum kerr rc;

    if (!p)
        return kerr_set(err, KERR_NOMEM, NULL);
    rc = kjson_set_str(p, "metadata.resourceVersion",
                       kjson_get_str(etcd, "metadata.resourceVersion"), err);
    if (rc == KERR_OK)
        rc = kjson_setv(
            p, (const char *const[]){ "metadata", "annotations", ETCDSPEC_ANN_BACKUP_EXISTS, NULL },
            cJSON_CreateString(value), err);
    if (rc == KERR_OK)
        rc = k8s_patch(x->client, &ETCDSPEC_RES_ETCD, e->namespace, e->name, K8S_PATCH_MERGE, p,
                       NULL, NULL, err);
    cJSON_Delete(p);
    return rc == KERR_OK ? rc : kerr_wrap(err, "annotating Etcd %s/%s", e->namespace, e->name);
}

/* A new EtcdStatusBackup: TAKES spec and ref. */
static enum kerr create_backup(const struct rctx *x, const struct etcdspec *e, const cJSON *etcd,
                               cJSON *spec, cJSON *refs, struct kerr_info *err)
{
    cJSON *b = cJSON_CreateObject();
    enum kerr rc = b ? KERR_OK : KERR_NOMEM;

    if (rc == KERR_OK)
        rc = kjson_set_str(b, "apiVersion", ETCDSPEC_WARDEN_API, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(b, "kind", "EtcdStatusBackup", err);
    if (rc == KERR_OK)
        rc = kjson_set_str(b, "metadata.name", e->name, err);
    if (rc == KERR_OK)
        rc = kjson_set_str(b, "metadata.namespace", e->namespace, err);
    rc = rc == KERR_OK ? kjson_set(b, "metadata.ownerReferences", refs, err) : rc;
    refs = NULL;
    rc = rc == KERR_OK ? kjson_set(b, "spec", spec, err) : rc;
    spec = NULL;
    if (rc == KERR_OK)
        rc = k8s_create(x->client, &ETCDSPEC_RES_STATUSBACKUP, e->namespace, b, NULL, NULL, err);
    cJSON_Delete(refs);
    cJSON_Delete(spec);
    cJSON_Delete(b);
    if (rc == KERR_OK)
        rctx_event(x, etcd, EV_NORMAL, "StatusBackupCreated", "BackupStatus",
                   "EtcdStatusBackup %s created", e->name);
    return rc == KERR_OK ? rc
                         : kerr_wrap(err, "creating EtcdStatusBackup %s/%s", e->namespace, e->name);
}

/*
 * The stored backup: from the cache when it has it (a stale copy makes the PUT
 * fail with a conflict, retried by the dispatch), else a GET. KERR_NOTFOUND
 * when there is none.
 */
static enum kerr read_backup(const struct rctx *x, const struct etcdspec *e, cJSON **out,
                             struct kerr_info *err)
{
    char key[2 * ETCDSPEC_NAME_MAX + 2];

    *out = NULL;
    snprintf(key, sizeof(key), "%s/%s", e->namespace, e->name);
    if (x->statusbackups && store_get(x->statusbackups, key, out, NULL) == KERR_OK)
        return KERR_OK;
    return k8s_get(x->client, &ETCDSPEC_RES_STATUSBACKUP, e->namespace, e->name, NULL, out, err);
}

/* Create or replace the backup so that it holds spec and the owner reference. TAKES spec. */
static enum kerr sync_backup(const struct rctx *x, const struct etcdspec *e, const cJSON *etcd,
                             cJSON *spec, struct sbk_stats *st, struct kerr_info *err)
{
    cJSON *cur = NULL, *want = NULL, *refs = NULL;
    int changed = 0;
    enum kerr rc;

    rc = etcdspec_owner_ref(etcd, &want, err);
    if (rc == KERR_OK)
        rc = read_backup(x, e, &cur, err);
    if (rc == KERR_OK || rc == KERR_NOTFOUND)
        rc = oref_compute(kjson_get(cur, "metadata.ownerReferences"), want, &refs, &changed, err);
    if (rc != KERR_OK || kjson_has(cur, "metadata.deletionTimestamp"))
        goto out;
    if (!cur) {
        rc = create_backup(x, e, etcd, spec, refs, err);
        spec = refs = NULL;
        st->created += rc == KERR_OK;
        goto out;
    }
    if (!changed && cJSON_Compare(kjson_get(cur, "spec"), spec, 1))
        goto out;
    cJSON_ReplaceItemInObjectCaseSensitive(cur, "spec", spec);
    spec = NULL;
    rc = kjson_set(cur, "metadata.ownerReferences", refs, err);
    refs = NULL;
    if (rc == KERR_OK)
        rc = k8s_update(x->client, &ETCDSPEC_RES_STATUSBACKUP, e->namespace, e->name, cur, NULL,
                        NULL, err);
    st->updated += rc == KERR_OK;
    if (rc != KERR_OK)
        kerr_wrap(err, "updating EtcdStatusBackup %s/%s", e->namespace, e->name);
out:
    cJSON_Delete(spec);
    cJSON_Delete(refs);
    cJSON_Delete(want);
    cJSON_Delete(cur);
    return rc;
}

static enum kerr delete_backup(const struct rctx *x, const struct etcdspec *e, const cJSON *etcd,
                               struct sbk_stats *st, struct kerr_info *err)
{
    enum kerr rc =
        k8s_delete(x->client, &ETCDSPEC_RES_STATUSBACKUP, e->namespace, e->name, NULL, NULL, err);

    if (rc == KERR_NOTFOUND)
        return KERR_OK;
    if (rc != KERR_OK)
        return kerr_wrap(err, "deleting EtcdStatusBackup %s/%s", e->namespace, e->name);
    st->deleted++;
    rctx_event(x, etcd, EV_NORMAL, "StatusBackupDeleted", "BackupStatus",
               "EtcdStatusBackup %s deleted: --backup-cluster-status=false", e->name);
    return KERR_OK;
}

enum kerr sbk_run(const struct rctx *x, const cJSON *etcd, struct sbk_stats *st,
                  struct kerr_info *err)
{
    struct sbk_stats local;
    const char *want = x->backup_cluster_status ? "true" : "false", *have;
    cJSON *comps = NULL, *spec = NULL;
    struct etcdspec e;
    enum kerr rc;

    if (!st)
        st = &local;
    memset(st, 0, sizeof(*st));
    rc = etcdspec_read(etcd, &e, err);
    if (rc != KERR_OK || !e.namespace || kjson_has(etcd, "metadata.deletionTimestamp") ||
        etcdspec_label(etcd, ETCDSPEC_LABEL_RESTORING))
        return rc;
    have = etcdspec_annotation(etcd, ETCDSPEC_ANN_BACKUP_EXISTS);
    if (!x->backup_cluster_status && (!have || strcmp(have, want) != 0)) {
        rc = annotate(x, &e, etcd, want, err);
        st->annotated += rc == KERR_OK;
    }
    if (!x->backup_cluster_status)
        return rc == KERR_OK ? delete_backup(x, &e, etcd, st, err) : rc;
    rc = rctx_components(x, e.namespace, e.name, &comps, err);
    if (rc == KERR_OK)
        rc = sbk_desired_spec(etcd, comps, &spec, err);
    cJSON_Delete(comps);
    if (rc == KERR_OK)
        rc = sync_backup(x, &e, etcd, spec, st, err);
    if (rc == KERR_OK && (!have || strcmp(have, want) != 0)) {
        rc = annotate(x, &e, etcd, want, err);
        st->annotated += rc == KERR_OK;
    }
    if (rc == KERR_OK && (st->created || st->updated || st->annotated || st->deleted))
        log_debug("status backup synced", "namespace", e.namespace, "name", e.name);
    return rc;
}

enum kerr sbk_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err)
{
    struct rctx x;

    res->requeue_ms = 0;
    rctx_from_ctl(c, &x);
    return sbk_run(&x, etcd, NULL, err);
}
