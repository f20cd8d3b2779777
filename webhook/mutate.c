/* mutate - the mutating patches; see mutate.h. */
#include "webhook/mutate.h"

#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "common/jpatch.h"
#include "common/kjson.h"
#include "webhook/toggles.h"

#define PTR_MAX 4096u /* a JSON Pointer this module builds; keys are label keys (<= 317 bytes) */

/* A JSON Pointer from raw segments (NULL-terminated), into a fresh buffer b. */
static enum kerr make_ptr(struct buf *b, const char *const *segs)
{
    enum kerr rc = KERR_OK;

    buf_reset(b);
    for (; *segs && !rc; segs++)
        rc = jpatch_ptr_append(b, *segs);
    return rc;
}

/*
 * Add key=value to metadata.<map> unless the key is there: one "add" of the
 * whole map when the map is missing or empty, else one "add" of the key.
 */
static enum kerr add_meta_key(cJSON *patch, const cJSON *obj, const char *map, const char *key,
                              const char *value, int *changed, struct kerr_info *err)
{
    const char *map_segs[] = { "metadata", map, NULL };
    const char *key_segs[] = { "metadata", map, key, NULL };
    const cJSON *m = kjson_getv(obj, map_segs);
    int whole = !cJSON_IsObject(m) || !m->child;
    struct buf ptr;
    cJSON *v = NULL;
    enum kerr rc;

    if (!whole && cJSON_GetObjectItemCaseSensitive(m, key))
        return KERR_OK;
    buf_init(&ptr, PTR_MAX);
    if (!whole) {
        v = cJSON_CreateString(value);
    } else {
        v = cJSON_CreateObject();
        if (v && !cJSON_AddStringToObject(v, key, value)) {
            cJSON_Delete(v);
            v = NULL;
        }
    }
    if (!v) {
        rc = kerr_set(err, KERR_NOMEM, "building the patch");
        goto out;
    }
    if ((rc = make_ptr(&ptr, whole ? map_segs : key_segs))) {
        cJSON_Delete(v);
        kerr_set(err, rc, "building the patch path");
        goto out;
    }
    rc = jpatch_add(patch, buf_str(&ptr), v, err);
    *changed += rc == KERR_OK;
out:
    buf_release(&ptr);
    return rc;
}

static enum kerr mutate_etcd(const struct protect_config *cfg, const struct review_req *req,
                             const cJSON *obj, struct review_resp *resp, struct kerr_info *err)
{
    const cJSON *ann = kjson_get_obj(obj, "metadata.annotations");
    cJSON *patch = cJSON_CreateArray();
    int changed = 0, stripped = 0,
        had_suspend = cJSON_GetObjectItemCaseSensitive(ann, LOOKUP_ANN_SUSPEND_RECONCILE) != NULL;
    enum kerr rc;

    if (!patch)
        return kerr_set(err, KERR_NOMEM, "building the patch");
    /* the state only warden-controller writes: a restored or re-applied Etcd starts without it */
    if (cfg && (rc = toggles_strip_patch(cfg, req, obj, patch, &stripped, resp, err)))
        goto out;
    if (!cJSON_GetObjectItemCaseSensitive(ann, LOOKUP_ANN_STATUS_BACKUP)) {
        if ((rc = review_set_patch(resp, patch, err)))
            goto out;
        rc = review_allow(resp, "Etcd %s/%s is not re-created from a backup: %s", req->namespace,
                          lookup_meta_str(obj, "name"),
                          stripped ? "state annotations removed" : "no changes");
        goto out;
    }
    if ((rc = add_meta_key(patch, obj, "labels", LOOKUP_LABEL_RESTORING, "", &changed, err)) ||
        (rc = add_meta_key(patch, obj, "annotations", LOOKUP_ANN_SUSPEND_RECONCILE,
                           MUTATE_SUSPEND_VALUE, &changed, err)) ||
        /* recorded, so that the controller lifts only a suspension etcd-warden added */
        (!had_suspend && (rc = add_meta_key(patch, obj, "annotations", MUTATE_ANN_SUSPEND_ADDED,
                                            "true", &changed, err))) ||
        (rc = review_set_patch(resp, patch, err)))
        goto out;
    rc = review_allow(resp, "Etcd %s/%s is re-created from a backup: label %s and annotation %s %s",
                      req->namespace, lookup_meta_str(obj, "name"), LOOKUP_LABEL_RESTORING,
                      LOOKUP_ANN_SUSPEND_RECONCILE, changed ? "added" : "already present");
out:
    cJSON_Delete(patch);
    return rc;
}

/*
 * An Etcd UPDATE: the restoring label, removed by someone other than warden-controller together
 * with other changes (gardenlet's reconcile writes the Etcd's labels whole), is put back.
 */
static enum kerr mutate_etcd_update(const struct protect_config *cfg, const struct review_req *req,
                                    struct review_resp *resp, struct kerr_info *err)
{
    const cJSON *was = kjson_get_obj(req->old_object, "metadata.labels");
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(was, LOOKUP_LABEL_RESTORING);
    const char *v = cJSON_IsString(l) ? l->valuestring : NULL;
    cJSON *patch;
    int changed = 0;
    enum kerr rc;

    if (!toggles_keeps_restoring(cfg, req))
        return review_allow(resp, "Etcd %s/%s keeps its labels: no changes", req->namespace,
                            req->name);
    if (!(patch = cJSON_CreateArray()))
        return kerr_set(err, KERR_NOMEM, "building the patch");
    if (!(rc = add_meta_key(patch, req->object, "labels", LOOKUP_LABEL_RESTORING, v ? v : "",
                            &changed, err)) &&
        !(rc = review_set_patch(resp, patch, err)) &&
        !(rc = review_warn(resp,
                           "metadata.labels[%s] kept: it was removed together with other changes "
                           "(a controller writing the Etcd's labels whole, such as gardenlet, "
                           "does that) and the restore of Etcd %s goes on; to end it by hand, "
                           "remove the label alone: kubectl label etcd %s %s-",
                           LOOKUP_LABEL_RESTORING, req->name, req->name, LOOKUP_LABEL_RESTORING)))
        rc = review_allow(resp, "Etcd %s/%s: label %s put back", req->namespace, req->name,
                          LOOKUP_LABEL_RESTORING);
    cJSON_Delete(patch);
    if (rc == KERR_NOMEM || rc == KERR_TOOBIG)
        kerr_set(err, rc, "building the answer");
    return rc;
}

/* True when ref is an ownerReference to an Etcd named parent. */
static int refers_to(const cJSON *ref, const char *parent)
{
    const char *api = kjson_get_str(ref, "apiVersion"), *kind = kjson_get_str(ref, "kind");
    const char *name = kjson_get_str(ref, "name");
    static const char group[] = "druid.gardener.cloud/";

    return api && kind && name && strncmp(api, group, sizeof(group) - 1) == 0 &&
           strcmp(kind, "Etcd") == 0 && strcmp(name, parent) == 0;
}

static int is_stale(const cJSON *ref, const char *parent, const char *live_uid)
{
    const char *uid = kjson_get_str(ref, "uid");

    return refers_to(ref, parent) && (!live_uid || !uid || strcmp(uid, live_uid) != 0);
}

static size_t count_refs(const cJSON *refs, const char *parent)
{
    const cJSON *r;
    size_t n = 0;

    cJSON_ArrayForEach (r, refs) {
        n += refers_to(r, parent);
    }
    return n;
}

/*
 * The ownerReferences arrays of obj: the object's, then one per element of
 * spec.volumeClaimTemplates (NULL where there is none). Every walk below
 * goes through each array once: indexing a cJSON array by position walks
 * it from the start, and a decision must stay linear in the body.
 */
static const cJSON *top_refs(const cJSON *obj)
{
    return kjson_get_arr(obj, "metadata.ownerReferences");
}

static const cJSON *vct_refs(const cJSON *vct)
{
    return kjson_get_arr(vct, "metadata.ownerReferences");
}

static const cJSON *vcts(const cJSON *obj)
{
    return kjson_get_arr(obj, "spec.volumeClaimTemplates");
}

static size_t count_all_refs(const cJSON *obj, const char *parent)
{
    const cJSON *t;
    size_t n = count_refs(top_refs(obj), parent);

    cJSON_ArrayForEach (t, vcts(obj)) {
        n += count_refs(vct_refs(t), parent);
    }
    return n;
}

static enum kerr refs_ptr(struct buf *ptr, int i)
{
    char idx[24];
    const char *top[] = { "metadata", "ownerReferences", NULL };
    const char *vct[] = {
        "spec", "volumeClaimTemplates", idx, "metadata", "ownerReferences", NULL
    };

    snprintf(idx, sizeof(idx), "%d", i - 1);
    return make_ptr(ptr, i == 0 ? top : vct);
}

/* Patch one ownerReferences array: drop the stale references (remove it when none is left). */
static enum kerr filter_refs(cJSON *patch, int i, const cJSON *refs, const char *parent,
                             const char *live_uid, size_t *dropped, struct kerr_info *err)
{
    const cJSON *r;
    cJSON *keep = cJSON_CreateArray(), *c;
    struct buf ptr;
    size_t n = 0;
    enum kerr rc = KERR_NOMEM;

    buf_init(&ptr, PTR_MAX);
    if (!keep)
        goto out;
    cJSON_ArrayForEach (r, refs) {
        if (is_stale(r, parent, live_uid)) {
            n++;
            continue;
        }
        c = cJSON_Duplicate(r, 1);
        if (!c || !cJSON_AddItemToArray(keep, c)) {
            cJSON_Delete(c);
            goto out;
        }
    }
    rc = KERR_OK;
    if (n == 0)
        goto out;
    if ((rc = refs_ptr(&ptr, i)))
        goto out;
    if (keep->child) {
        rc = jpatch_replace(patch, buf_str(&ptr), keep, err);
        keep = NULL; /* TAKEN by jpatch_replace, on failure too */
    } else {
        rc = jpatch_remove(patch, buf_str(&ptr), err);
    }
    *dropped += n;
out:
    cJSON_Delete(keep);
    buf_release(&ptr);
    if (rc == KERR_NOMEM)
        kerr_set(err, rc, "building the owner-reference patch");
    return rc;
}

static enum kerr drop_stale_refs(const cJSON *obj, const char *parent, const char *live_uid,
                                 struct review_resp *resp, size_t *dropped, struct kerr_info *err)
{
    cJSON *patch = cJSON_CreateArray();
    const cJSON *t;
    enum kerr rc;
    int i = 1;

    if (!patch)
        return kerr_set(err, KERR_NOMEM, "building the patch");
    rc = filter_refs(patch, 0, top_refs(obj), parent, live_uid, dropped, err);
    for (t = vcts(obj) ? vcts(obj)->child : NULL; t && !rc; t = t->next)
        rc = filter_refs(patch, i++, vct_refs(t), parent, live_uid, dropped, err);
    if (!rc)
        rc = review_set_patch(resp, patch, err);
    cJSON_Delete(patch);
    return rc;
}

/*
 * The Etcd whose owner references are checked: a component's part-of label, or an
 * EtcdStatusBackup's own name (it bears its Etcd's name); NULL when the object is neither.
 */
static const char *parent_of(const struct review_req *req, const cJSON *obj)
{
    const cJSON *labels = lookup_meta_map(obj, "labels");
    const char *managed = lookup_map_get(labels, LOOKUP_LABEL_MANAGED_BY);
    const char *name;

    if (strcmp(req->kind_group, "etcd-warden.io") == 0 &&
        strcmp(req->kind_kind, "EtcdStatusBackup") == 0) {
        name = lookup_meta_str(obj, "name");
        return name && *name ? name : (*req->name ? req->name : NULL);
    }
    if (!managed || strcmp(managed, LOOKUP_MANAGED_BY_DRUID) != 0)
        return NULL;
    return lookup_map_get(labels, LOOKUP_LABEL_PART_OF);
}

static enum kerr mutate_component(const struct lookup *lk, const struct review_req *req,
                                  const cJSON *obj, struct review_resp *resp, struct kerr_info *err)
{
    const char *parent = parent_of(req, obj);
    const char *ns = *req->namespace ? req->namespace : lookup_meta_str(obj, "namespace");
    size_t dropped = 0;
    struct lookup_etcd etcd;
    struct kerr_info e;
    enum kerr rc;

    if (!parent)
        return review_allow(resp, "resource is not a component of an Etcd: no changes");
    if (count_all_refs(obj, parent) == 0)
        return review_allow(resp, "no owner references to an Etcd %s: no changes", parent);
    kerr_clear(&e);
    rc = lk->etcd(lk->ctx, ns, parent, &etcd, &e);
    if (lookup_unconfirmed(rc, &e))
        return review_errored(resp, 500,
                              "Etcd %s/%s is not in the cache and no lookup could confirm that "
                              "it does not exist: owner references left alone",
                              ns, parent);
    if (rc != KERR_OK && rc != KERR_NOTFOUND)
        return review_errored(resp, 500, "%s", e.msg);
    rc = drop_stale_refs(obj, parent, rc == KERR_OK ? etcd.uid : NULL, resp, &dropped, err);
    if (rc)
        return rc;
    if (dropped == 0)
        return review_allow(resp, "owner references point at the live Etcd %s: no changes", parent);
    return review_allow(resp, "removed %zu owner reference(s) to a previous Etcd %s", dropped,
                        parent);
}

enum kerr mutate_decide(const struct protect_config *cfg, const struct lookup *lk,
                        const struct review_req *req, struct review_resp *resp,
                        struct kerr_info *err)
{
    enum kerr rc;

    if (req->op == REVIEW_OP_UPDATE && strcmp(req->kind_group, "druid.gardener.cloud") == 0 &&
        strcmp(req->kind_kind, "Etcd") == 0)
        rc = mutate_etcd_update(cfg, req, resp, err);
    else if (req->op != REVIEW_OP_CREATE)
        rc = review_allow(resp, "operation %s is not mutated", req->operation);
    else if (!cJSON_IsObject(req->object))
        rc = review_errored(resp, 400, "object: expected the object being created");
    else if (strcmp(req->kind_group, "druid.gardener.cloud") == 0 &&
             strcmp(req->kind_kind, "Etcd") == 0)
        rc = mutate_etcd(cfg, req, req->object, resp, err);
    else
        rc = mutate_component(lk, req, req->object, resp, err);
    return rc;
}
