/* oref - owner-reference repair: the pure computation and the patch with a precondition. */
#include "controller/oref.h"

#include <stdio.h>
#include <string.h>

#include "common/jpatch.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "common/log.h"
#include "common/store.h"
#include "controller/ctl.h"
#include "controller/etcdspec.h"
#include "controller/kname.h"
#include "controller/rctx.h"

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

/* Keep the first error; go on. */
static void keep(enum kerr *first, struct kerr_info *ferr, enum kerr rc, const struct kerr_info *e)
{
    if (rc != KERR_OK && *first == KERR_OK) {
        *first = rc;
        if (ferr)
            *ferr = *e;
    }
}

struct task_pick {
    const char *etcd;
    int ours_only; /* only tasks the controller made or an Etcd of that name owned */
    cJSON *found;  /* OWNS: copies of the matching tasks */
};

/* Made by hibernation (its label) or owned by an Etcd of that name (maybe stale)? */
static int ours(const cJSON *task, const char *etcd)
{
    char of[KNAME_LABEL_MAX + 1];
    const cJSON *r;

    if (kname_label_value(etcd, of) == KERR_OK &&
        str_eq(etcdspec_label(task, ETCDSPEC_LABEL_FINAL_SNAPSHOT_OF), of))
        return 1;
    cJSON_ArrayForEach (r, kjson_get_arr(task, "metadata.ownerReferences"))
        if (str_eq(kjson_get_str(r, "kind"), ETCDSPEC_KIND) &&
            str_eq(kjson_get_str(r, "name"), etcd))
            return 1;
    return 0;
}

static enum kerr pick_task(void *ctx, const char *key, const cJSON *obj)
{
    struct task_pick *p = ctx;

    (void)key;
    if (str_eq(kjson_get_str(obj, "spec.etcdName"), p->etcd) &&
        (!p->ours_only || ours(obj, p->etcd)))
        cJSON_AddItemToArray(p->found, cJSON_Duplicate(obj, 1));
    return KERR_OK;
}

/* The tasks of a cache whose spec.etcdName is the Etcd's, repaired. */
static enum kerr repair_tasks(const struct rctx *x, struct store *s, const struct k8s_resource *res,
                              const struct etcdspec *e, const cJSON *want, struct oref_stats *st,
                              struct kerr_info *err)
{
    struct task_pick p = { e->name, res == &ETCDSPEC_RES_OPSTASK, cJSON_CreateArray() };
    char key[KOBJ_KEY_MAX];
    struct kerr_info one;
    enum kerr rc = KERR_OK;
    const cJSON *t;

    if (!p.found)
        return kerr_set(err, KERR_NOMEM, NULL);
    if (s && snprintf(key, sizeof(key), "%s/%s", e->namespace, e->name) < (int)sizeof(key) &&
        store_index_view(s, CTL_INDEX_ETCD_NAME, key, pick_task, &p, NULL) == KERR_NOTFOUND)
        (void)store_foreach(s, pick_task, &p, NULL); /* a cache without the index */
    cJSON_ArrayForEach (t, p.found) {
        const char *ns = kjson_get_str(t, "metadata.namespace");

        if (!str_eq(ns, e->namespace) || kjson_has(t, "metadata.deletionTimestamp"))
            continue;
        keep(&rc, err,
             oref_repair(x->client, res, ns, kjson_get_str(t, "metadata.name"), t, want, st, &one),
             &one);
    }
    cJSON_Delete(p.found);
    return rc;
}

static enum kerr repair_components(const struct rctx *x, const struct etcdspec *e,
                                   const cJSON *want, struct oref_stats *st, struct kerr_info *err)
{
    struct kerr_info one;
    cJSON *comps = NULL;
    const cJSON *c;
    enum kerr rc;

    rc = rctx_components(x, e->namespace, e->name, &comps, err);
    if (rc != KERR_OK)
        return rc;
    cJSON_ArrayForEach (c, comps) {
        const char *kind = kjson_get_str(c, "kind");

        if (!etcdspec_kind_owned(kind) || kjson_has(c, "metadata.deletionTimestamp"))
            continue;
        keep(&rc, err,
             oref_repair(x->client, etcdspec_kind_resource(kind), e->namespace,
                         kjson_get_str(c, "metadata.name"), c, want, st, &one),
             &one);
    }
    cJSON_Delete(comps);
    return rc;
}

enum kerr oref_run(const struct rctx *x, const cJSON *etcd, struct oref_stats *st,
                   struct kerr_info *err)
{
    struct oref_stats local = { 0, 0, 0 };
    struct kerr_info one;
    struct etcdspec e;
    cJSON *want = NULL;
    enum kerr rc;
    int before;

    if (!st)
        st = &local;
    before = st->repaired;
    rc = etcdspec_read(etcd, &e, err);
    if (rc == KERR_OK && (!e.namespace || kjson_has(etcd, "metadata.deletionTimestamp")))
        return KERR_OK;
    if (rc == KERR_OK)
        rc = etcdspec_owner_ref(etcd, &want, err);
    if (rc != KERR_OK)
        return rc;
    rc = repair_components(x, &e, want, st, err);
    keep(&rc, err, repair_tasks(x, x->immtasks, &ETCDSPEC_RES_IMMTASK, &e, want, st, &one), &one);
    keep(&rc, err, repair_tasks(x, x->opstasks, &ETCDSPEC_RES_OPSTASK, &e, want, st, &one), &one);
    cJSON_Delete(want);
    if (st->repaired > before)
        rctx_event(x, etcd, EV_NORMAL, "OwnerReferenceRepaired", "RepairOwnerReferences",
                   "owner references of %d objects now point at Etcd %s (uid %s)",
                   st->repaired - before, e.name, e.uid);
    return rc;
}

enum kerr oref_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                         struct kerr_info *err)
{
    struct rctx x;

    res->requeue_ms = 0;
    rctx_from_ctl(c, &x);
    return oref_run(&x, etcd, NULL, err);
}
