/* orefpass - the owner-reference repair of an Etcd's objects; see orefpass.h. */
#include "controller/restore/orefpass.h"

#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "common/store.h"
#include "controller/core/ctl.h"
#include "controller/core/etcdspec.h"
#include "controller/core/kname.h"
#include "controller/core/oref.h"
#include "controller/core/rctx.h"

static int str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
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

enum kerr orefpass_run(const struct rctx *x, const cJSON *etcd, struct oref_stats *st,
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

enum kerr orefpass_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                             struct kerr_info *err)
{
    struct rctx x;

    res->requeue_ms = 0;
    rctx_from_ctl(c, &x);
    return orefpass_run(&x, etcd, NULL, err);
}
