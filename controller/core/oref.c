/* oref - owner references: the pure computation and the patch with a precondition. */
#include "controller/core/oref.h"

#include <stdio.h>
#include <string.h>

#include "common/jpatch.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"

/* Equal API groups of two apiVersions ("druid.gardener.cloud/v1alpha1"; "v1" is the core group). */
static int same_group(const char *a, const char *b)
{
    const char *sa = a ? strchr(a, '/') : NULL, *sb = b ? strchr(b, '/') : NULL;
    size_t la = sa ? (size_t)(sa - a) : 0, lb = sb ? (size_t)(sb - b) : 0;

    return la == lb && (la == 0 || strncmp(a, b, la) == 0);
}

static int str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Does ref point at want's owner, live (same uid) or stale (same kind, group and name)? */
static int is_ours(const cJSON *ref, const cJSON *want)
{
    if (str_eq(kjson_get_str(ref, "uid"), kjson_get_str(want, "uid")))
        return 1;
    return str_eq(kjson_get_str(ref, "kind"), kjson_get_str(want, "kind")) &&
           str_eq(kjson_get_str(ref, "name"), kjson_get_str(want, "name")) &&
           same_group(kjson_get_str(ref, "apiVersion"), kjson_get_str(want, "apiVersion"));
}

/* A copy of a foreign reference, no longer a controller. NULL on NOMEM. */
static cJSON *foreign_copy(const cJSON *ref)
{
    cJSON *c = cJSON_Duplicate(ref, 1);
    const cJSON *ctl = cJSON_GetObjectItemCaseSensitive(ref, "controller");

    if (c && cJSON_IsTrue(ctl) &&
        !cJSON_ReplaceItemInObjectCaseSensitive(c, "controller", cJSON_CreateFalse())) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

enum kerr oref_compute(const cJSON *refs, const cJSON *want, cJSON **out, int *changed,
                       struct kerr_info *err)
{
    cJSON *arr = cJSON_CreateArray(), *item, *empty = NULL;
    const cJSON *ref, *list = cJSON_IsArray(refs) ? refs : NULL;
    int placed = 0;

    *out = NULL;
    *changed = 0;
    if (!arr)
        return kerr_set(err, KERR_NOMEM, NULL);
    if (!kjson_get_str(want, "uid") || !kjson_get_str(want, "name")) {
        cJSON_Delete(arr);
        return kerr_set(err, KERR_INVAL, "owner reference without name or uid");
    }
    cJSON_ArrayForEach (ref, list) {
        if (is_ours(ref, want) && placed)
            continue;
        if (is_ours(ref, want)) {
            placed = 1;
            item = cJSON_Duplicate(want, 1);
        } else {
            item = foreign_copy(ref);
        }
        if (!item || !cJSON_AddItemToArray(arr, item))
            goto nomem;
    }
    if (!placed && !cJSON_AddItemToArray(arr, cJSON_Duplicate(want, 1)))
        goto nomem;
    if (!cJSON_IsArray(refs))
        empty = cJSON_CreateArray();
    *changed = !cJSON_Compare(cJSON_IsArray(refs) ? refs : empty, arr, 1);
    cJSON_Delete(empty);
    *out = arr;
    return KERR_OK;
nomem:
    cJSON_Delete(arr);
    return kerr_set(err, KERR_NOMEM, NULL);
}

/* The JSON patch: test the resourceVersion, then set the references. TAKES refs. */
static enum kerr build_patch(const char *rv, cJSON *refs, cJSON **out, struct kerr_info *err)
{
    cJSON *p = cJSON_CreateArray();
    enum kerr rc;

    *out = NULL;
    if (!p) {
        cJSON_Delete(refs);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = jpatch_test(p, "/metadata/resourceVersion", cJSON_CreateString(rv), err);
    if (rc == KERR_OK)
        rc = jpatch_add(p, "/metadata/ownerReferences", refs, err);
    else
        cJSON_Delete(refs);
    if (rc != KERR_OK) {
        cJSON_Delete(p);
        return rc;
    }
    *out = p;
    return KERR_OK;
}

/* One try on obj: KERR_OK (done or repaired), KERR_CONFLICT (read again), or an error. */
static enum kerr repair_once(struct k8s_client *k, const struct k8s_resource *res, const char *ns,
                             const char *name, const cJSON *obj, const cJSON *want,
                             struct oref_stats *st, struct kerr_info *err)
{
    const char *rv = kjson_get_str(obj, "metadata.resourceVersion");
    cJSON *refs = NULL, *patch = NULL;
    struct kerr_info perr;
    int changed = 0;
    enum kerr rc;

    kerr_clear(&perr);
    if (!rv)
        return kerr_set(err, KERR_CONFLICT, "%s/%s: no resourceVersion", ns, name);
    rc = oref_compute(kjson_get(obj, "metadata.ownerReferences"), want, &refs, &changed, err);
    if (rc != KERR_OK || !changed) {
        cJSON_Delete(refs);
        return rc;
    }
    rc = build_patch(rv, refs, &patch, err);
    if (rc != KERR_OK)
        return rc;
    rc = k8s_patch(k, res, ns, name, K8S_PATCH_JSON, patch, NULL, NULL, &perr);
    cJSON_Delete(patch);
    if (rc != KERR_OK && err)
        *err = perr;
    if (rc == KERR_OK) {
        st->repaired++;
        log_info("owner reference repaired", "namespace", ns, "name", name, "resource",
                 res->resource, "owner", kjson_get_str(want, "name"), "uid",
                 kjson_get_str(want, "uid"));
    } else if (rc == KERR_API && perr.http_status == 422) {
        rc = KERR_CONFLICT; /* the resourceVersion test failed */
    }
    return rc == KERR_NOTFOUND ? KERR_OK : rc;
}

enum kerr oref_repair(struct k8s_client *k, const struct k8s_resource *res, const char *ns,
                      const char *name, const cJSON *cur, const cJSON *want, struct oref_stats *st,
                      struct kerr_info *err)
{
    struct oref_stats local = { 0, 0, 0 };
    cJSON *fresh = NULL;
    enum kerr rc = KERR_CONFLICT;
    int i;

    if (!st)
        st = &local;
    st->checked++;
    for (i = 0; i < OREF_TRIES; i++) {
        if (!cur || i > 0) {
            cJSON_Delete(fresh);
            fresh = NULL;
            rc = k8s_get(k, res, ns, name, NULL, &fresh, err);
            if (rc != KERR_OK)
                break;
        }
        rc = repair_once(k, res, ns, name, fresh ? fresh : cur, want, st, err);
        if (rc != KERR_CONFLICT)
            break;
        st->conflicts++;
    }
    cJSON_Delete(fresh);
    if (rc == KERR_NOTFOUND)
        return KERR_OK;
    if (rc == KERR_CONFLICT)
        return kerr_set(err, KERR_CONFLICT, "%s %s/%s: owner reference not repaired: %d conflicts",
                        res->resource, ns, name, OREF_TRIES);
    return rc;
}
