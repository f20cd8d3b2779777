/* orefpass - the owner-reference repair of an Etcd's objects; see orefpass.h. */
#include "controller/restore/orefpass.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/k8s.h"
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

/* One component to repair: its own result, stats and requests (made on a helper thread). */
struct repair {
    const char *kind; /* BORROWED from cur */
    const char *name; /* BORROWED from cur */
    const cJSON *cur; /* BORROWED */
    enum kerr rc;
    struct kerr_info err;
    struct oref_stats st;
    unsigned long requests;
};

struct repairs {
    const struct rctx *x;
    const char *ns;
    const cJSON *want;
    struct repair *v;
    int n;
    atomic_int next;
};

static void *run_repairs(void *arg)
{
    struct repairs *js = arg;
    int i;

    while ((i = atomic_fetch_add(&js->next, 1)) < js->n) {
        struct repair *j = &js->v[i];
        unsigned long before = k8s_thread_requests();

        kerr_clear(&j->err);
        if (js->x->repair_slots)
            while (sem_wait(js->x->repair_slots) != 0 && errno == EINTR)
                ;
        j->rc = oref_repair(js->x->client, etcdspec_kind_resource(j->kind), js->ns, j->name, j->cur,
                            js->want, &j->st, &j->err);
        if (js->x->repair_slots)
            sem_post(js->x->repair_slots);
        j->requests = k8s_thread_requests() - before;
    }
    return NULL;
}

/*
 * The repairs of an Etcd run OREFPASS_IN_FLIGHT at a time, each holding a repair slot (all
 * passes together at most CTL_REPAIRS_IN_FLIGHT): each is a PATCH (a GET too after a
 * conflict) that waits on the API server and the component webhook, and a start after a
 * restore (Velero strips every owner reference) has twelve per Etcd. Helper threads' requests
 * are charged to this one, the reconcile's budget counts them.
 */
static void run_parallel(struct repairs *js)
{
    pthread_t tid[OREFPASS_IN_FLIGHT - 1];
    int n = 0, i;

    atomic_init(&js->next, 0);
    for (i = 0; i < js->n - 1 && n < OREFPASS_IN_FLIGHT - 1; i++)
        if (pthread_create(&tid[n], NULL, run_repairs, js) == 0)
            n++;
    run_repairs(js); /* this thread works too (all of them when no thread could start) */
    for (i = 0; i < n; i++)
        pthread_join(tid[i], NULL);
}

static enum kerr repair_components(const struct rctx *x, const struct etcdspec *e,
                                   const cJSON *want, struct oref_stats *st, struct kerr_info *err)
{
    struct repairs js = { x, e->namespace, want, NULL, 0, 0 };
    unsigned long mine, theirs = 0;
    cJSON *comps = NULL, *refs;
    const cJSON *c;
    enum kerr rc;
    int changed, i;

    rc = rctx_components(x, e->namespace, e->name, &comps, err);
    if (rc != KERR_OK)
        return rc;
    js.v = calloc((size_t)cJSON_GetArraySize(comps) + 1, sizeof(*js.v));
    if (!js.v) {
        cJSON_Delete(comps);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    cJSON_ArrayForEach (c, comps) {
        const char *kind = kjson_get_str(c, "kind");

        if (!etcdspec_kind_owned(kind) || kjson_has(c, "metadata.deletionTimestamp"))
            continue;
        refs = NULL;
        changed = 1; /* unknown (out of memory): oref_repair finds out */
        if (oref_compute(kjson_get(c, "metadata.ownerReferences"), want, &refs, &changed, NULL) ==
                KERR_OK &&
            !changed) {
            st->checked++; /* nothing to write */
            cJSON_Delete(refs);
            continue;
        }
        cJSON_Delete(refs);
        js.v[js.n++] =
            (struct repair){ .kind = kind, .name = kjson_get_str(c, "metadata.name"), .cur = c };
    }
    mine = k8s_thread_requests();
    if (js.n > 1)
        run_parallel(&js);
    else if (js.n == 1)
        run_repairs(&js);
    for (i = 0; i < js.n; i++) {
        keep(&rc, err, js.v[i].rc, &js.v[i].err);
        st->checked += js.v[i].st.checked;
        st->repaired += js.v[i].st.repaired;
        st->conflicts += js.v[i].st.conflicts;
        theirs += js.v[i].requests;
    }
    /* the requests of the helper threads (this thread's own are counted already) */
    if (k8s_thread_requests() - mine < theirs)
        k8s_thread_requests_charge(theirs - (k8s_thread_requests() - mine));
    free(js.v);
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
