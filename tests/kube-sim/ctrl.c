#include "tests/kube-sim/ctrl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "tests/kube-sim/delete.h"
#include "tests/kube-sim/obj.h"
#include "tests/kube-sim/write.h"

#define MAX_PENDING 4096

/* A StatefulSet or Deployment whose status lags behind its spec since `since`. */
struct pending {
    char uid[40];
    struct timespec since;
};

struct ksim_ctrl {
    struct ksim_api *api;
    pthread_t th;
    pthread_mutex_t mu; /* guards stop and serialises passes */
    int stop;
    struct ksim_user gc, nsc, sts;
    struct pending *pending; /* OWNS */
    size_t npending;
};

/* What one pass looks at: copies of the objects that may need work. */
struct snap {
    cJSON *objs; /* OWNS: array of {"skey":...,"obj":...} */
};

static int workload_key(const char *skey)
{
    return strcmp(skey, "apps/statefulsets") == 0 || strcmp(skey, "apps/deployments") == 0;
}

/* Copy of what the garbage collector needs of obj: its metadata, without managedFields. */
static cJSON *meta_copy(const cJSON *obj)
{
    cJSON *c = cJSON_CreateObject(), *m = c ? cJSON_AddObjectToObject(c, "metadata") : NULL, *f;
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata"), *it;

    if (!m) {
        cJSON_Delete(c);
        return NULL;
    }
    cJSON_ArrayForEach (it, md) {
        if (!it->string || strcmp(it->string, "managedFields") == 0)
            continue;
        f = cJSON_Duplicate(it, 1);
        if (!f || !cJSON_AddItemToObject(m, it->string, f)) {
            cJSON_Delete(f);
            cJSON_Delete(c);
            return NULL;
        }
    }
    return c;
}

static void take(const char *skey, const cJSON *obj, void *arg)
{
    struct snap *s = arg;
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    cJSON *e;

    if (!cJSON_GetObjectItemCaseSensitive(md, "ownerReferences") &&
        !cJSON_GetObjectItemCaseSensitive(md, "deletionTimestamp") && !workload_key(skey))
        return;
    e = cJSON_CreateObject();
    if (!e || !cJSON_AddStringToObject(e, "skey", skey) ||
        !cJSON_AddItemToObject(e, "obj",
                               workload_key(skey) ? cJSON_Duplicate(obj, 1) : meta_copy(obj)) ||
        !cJSON_AddItemToArray(s->objs, e))
        cJSON_Delete(e);
}

static int deleting_with(const cJSON *obj, const char *finalizer)
{
    return obj && ksim_obj_meta_str(obj, "deletionTimestamp") &&
           ksim_obj_has_finalizer(obj, finalizer);
}

static const struct ksim_rtype *rtype_of(struct ksim_api *api, const char *skey)
{
    return ksim_reg_find_store(api->reg, skey);
}

enum owner_state { OWNER_SOLID, OWNER_GONE, OWNER_WAITING, OWNER_ORPHANING };

struct owner_look {
    const char *uid; /* the reference's */
    enum owner_state st;
};

static void look_at_owner(const cJSON *owner, void *arg)
{
    struct owner_look *l = arg;
    const char *have = ksim_obj_meta_str(owner, "uid");

    if (!have || strcmp(have, l->uid) != 0)
        l->st = OWNER_GONE;
    else if (deleting_with(owner, "foregroundDeletion"))
        l->st = OWNER_WAITING;
    else if (deleting_with(owner, "orphan"))
        l->st = OWNER_ORPHANING;
}

/*
 * What became of the owner a reference of a dependent in namespace ns points at, looked up by
 * its coordinates and compared by uid, as kube-controller-manager's garbage collector does.
 * Owners of kinds kube-sim does not serve are left alone (solid).
 */
static enum owner_state owner_state(struct ksim_api *api, const char *ns, const cJSON *ref)
{
    const struct ksim_rtype *rt =
        ksim_reg_find_kind(api->reg, kjson_get_str(ref, "apiVersion"), kjson_get_str(ref, "kind"));
    const char *name = kjson_get_str(ref, "name");
    struct owner_look l = { kjson_get_str(ref, "uid"), OWNER_SOLID };

    if (!rt || !name || !l.uid)
        return OWNER_SOLID;
    /* looked at in the store, not copied: a pass asks once per reference of every dependent */
    switch (ksim_store_view(api->store, rt->store_key, rt->namespaced ? ns : NULL, name,
                            look_at_owner, &l)) {
    case KERR_OK:
        return l.st;
    case KERR_NOTFOUND:
        return OWNER_GONE;
    default: /* out of memory: nothing is collected on a guess */
        return OWNER_SOLID;
    }
}

static void ctx_for(struct ksim_ctrl *c, const struct ksim_rtype *rt, const cJSON *obj,
                    const struct ksim_user *u, const char *sub, struct ksim_write_ctx *w)
{
    const char *ns = ksim_obj_meta_str(obj, "namespace");

    memset(w, 0, sizeof(*w));
    w->api = c->api;
    w->rt = rt;
    w->ns = rt->namespaced && ns ? ns : "";
    w->name = ksim_obj_meta_str(obj, "name");
    w->sub = sub;
    w->user = u;
}

static void delete_obj(struct ksim_ctrl *c, const struct ksim_rtype *rt, const cJSON *obj,
                       const struct ksim_user *u, const char *policy)
{
    struct ksim_write_ctx w;
    struct ksim_apierr e;
    cJSON *out = NULL;
    int code;

    ctx_for(c, rt, obj, u, "", &w);
    code = ksim_delete_one(&w, NULL, policy, &out, &e);
    cJSON_Delete(out);
    if (code != 200 && code != 404)
        log_info("controller delete refused", "name", w.name, "user", u->name, "error", e.message);
}

/* Remove the references to owners that are gone, waiting for dependents or orphaning. */
static int drop_refs(cJSON *obj, void *arg, struct ksim_apierr *e)
{
    struct ksim_api *api = arg;
    cJSON *refs = (cJSON *)kjson_get(obj, "metadata.ownerReferences");
    const char *ns = ksim_obj_meta_str(obj, "namespace");
    int i, changed = 0;

    (void)e;
    for (i = cJSON_GetArraySize(refs) - 1; i >= 0; i--) {
        if (owner_state(api, ns, cJSON_GetArrayItem(refs, i)) != OWNER_SOLID) {
            cJSON_DeleteItemFromArray(refs, i);
            changed = 1;
        }
    }
    if (refs && cJSON_GetArraySize(refs) == 0)
        kjson_delete(obj, "metadata.ownerReferences");
    return changed ? 0 : 1;
}

static void modify(struct ksim_ctrl *c, const struct ksim_rtype *rt, const cJSON *obj,
                   const struct ksim_user *u, const char *sub,
                   int (*fn)(cJSON *obj, void *arg, struct ksim_apierr *e), void *arg)
{
    struct ksim_write_ctx w;
    struct ksim_apierr e;
    cJSON *out = NULL;
    int code;

    ctx_for(c, rt, obj, u, sub, &w);
    code = ksim_write_modify(&w, fn, arg, &out, &e);
    cJSON_Delete(out);
    if (code != 200 && code != 404)
        log_info("controller update refused", "name", w.name, "user", u->name, "error", e.message);
}

static void gc_dependent(struct ksim_ctrl *c, const struct ksim_rtype *rt, const cJSON *obj)
{
    const cJSON *ref;
    const char *ns = ksim_obj_meta_str(obj, "namespace");
    int n[4] = { 0, 0, 0, 0 };

    if (ksim_obj_meta_str(obj, "deletionTimestamp"))
        return;
    cJSON_ArrayForEach (ref, kjson_get(obj, "metadata.ownerReferences")) {
        n[owner_state(c->api, ns, ref)]++;
    }
    if (!n[OWNER_SOLID] && !n[OWNER_ORPHANING] && (n[OWNER_GONE] || n[OWNER_WAITING]))
        delete_obj(c, rt, obj, &c->gc, n[OWNER_WAITING] ? "Foreground" : "Background");
    else if (n[OWNER_GONE] || n[OWNER_WAITING] || n[OWNER_ORPHANING])
        modify(c, rt, obj, &c->gc, "", drop_refs, c->api);
}

/* Does any snapshot object reference uid (blocking only: with blockOwnerDeletion)? */
static int referenced(const struct snap *s, const char *uid, int blocking_only)
{
    const cJSON *e, *ref;

    cJSON_ArrayForEach (e, s->objs) {
        cJSON_ArrayForEach (ref, kjson_get(e, "obj.metadata.ownerReferences")) {
            const char *u = kjson_get_str(ref, "uid");

            if (u && strcmp(u, uid) == 0 &&
                (!blocking_only ||
                 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "blockOwnerDeletion"))))
                return 1;
        }
    }
    return 0;
}

static int remove_finalizer(cJSON *obj, void *arg, struct ksim_apierr *e)
{
    (void)e;
    if (!ksim_obj_has_finalizer(obj, arg))
        return 1;
    ksim_obj_remove_finalizer(obj, arg);
    return 0;
}

static void gc_owner(struct ksim_ctrl *c, const struct snap *s, const struct ksim_rtype *rt,
                     const cJSON *obj)
{
    const char *uid = ksim_obj_meta_str(obj, "uid");

    if (!uid || !ksim_obj_meta_str(obj, "deletionTimestamp"))
        return;
    if (ksim_obj_has_finalizer(obj, "orphan") && !referenced(s, uid, 0))
        modify(c, rt, obj, &c->gc, "", remove_finalizer, (void *)"orphan");
    if (ksim_obj_has_finalizer(obj, "foregroundDeletion") && !referenced(s, uid, 1))
        modify(c, rt, obj, &c->gc, "", remove_finalizer, (void *)"foregroundDeletion");
}

struct skeys {
    const char *v[128];
    size_t n;
};

static void namespaced_keys(const struct ksim_rtype *rt, void *arg)
{
    struct skeys *k = arg;
    size_t i;

    if (!rt->namespaced)
        return;
    for (i = 0; i < k->n; i++)
        if (strcmp(k->v[i], rt->store_key) == 0)
            return;
    if (k->n < 128)
        k->v[k->n++] = rt->store_key;
}

static int clear_spec_finalizers(cJSON *obj, void *arg, struct ksim_apierr *e)
{
    (void)arg;
    (void)e;
    if (cJSON_GetArraySize(kjson_get(obj, "spec.finalizers")) == 0)
        return 1;
    return kjson_set(obj, "spec.finalizers", cJSON_CreateArray(), NULL) == KERR_OK ? 0 : 1;
}

static void finalize_namespace(struct ksim_ctrl *c, const struct ksim_rtype *nsrt, const cJSON *ns)
{
    struct skeys k = { { 0 }, 0 };
    struct ksim_store_page page;
    const char *name = ksim_obj_meta_str(ns, "name");
    const cJSON *it;
    size_t i, left = 0;

    ksim_reg_each(c->api->reg, namespaced_keys, &k);
    for (i = 0; i < k.n; i++) {
        if (ksim_store_list(c->api->store, k.v[i], name, NULL, NULL, NULL, 0, &page, NULL) !=
            KERR_OK)
            return;
        cJSON_ArrayForEach (it, page.items) {
            left++;
            if (!ksim_obj_meta_str(it, "deletionTimestamp") && rtype_of(c->api, k.v[i]))
                delete_obj(c, rtype_of(c->api, k.v[i]), it, &c->nsc, "Background");
        }
        ksim_store_page_release(&page);
    }
    if (!left)
        modify(c, nsrt, ns, &c->nsc, "", clear_spec_finalizers, NULL);
}

static struct pending *pending_of(struct ksim_ctrl *c, const char *uid, int create)
{
    size_t i;
    struct pending *np;

    for (i = 0; i < c->npending; i++)
        if (strcmp(c->pending[i].uid, uid) == 0)
            return &c->pending[i];
    if (!create || c->npending == MAX_PENDING)
        return NULL;
    np = realloc(c->pending, (c->npending + 1) * sizeof(*np));
    if (!np)
        return NULL;
    c->pending = np;
    np = &c->pending[c->npending++];
    snprintf(np->uid, sizeof(np->uid), "%s", uid);
    clock_gettime(CLOCK_MONOTONIC, &np->since);
    return np;
}

static void pending_drop(struct ksim_ctrl *c, const char *uid)
{
    struct pending *p = pending_of(c, uid, 0);

    if (p)
        *p = c->pending[--c->npending];
}

static int num_at(const cJSON *obj, const char *path)
{
    const cJSON *v = kjson_get(obj, path);

    return cJSON_IsNumber(v) ? (int)v->valuedouble : 0;
}

/* What a settled workload reports: its replicas, generation and (a StatefulSet) revision. */
struct settled {
    int replicas, generation;
    char revision[CRYPTO_SHA256_HEX_LEN + 1]; /* "" but for a StatefulSet */
};

/* The status a settled workload reports (fields with omitempty left out at 0); a StatefulSet's
 * pods all run its template: currentRevision and updateRevision both name it. */
static int settled_status(cJSON *obj, void *arg, struct ksim_apierr *e)
{
    const struct settled *want = arg;
    cJSON *st = cJSON_CreateObject();
    int r = want->replicas;

    (void)e;
    if (!st || !cJSON_AddNumberToObject(st, "observedGeneration", want->generation) ||
        !cJSON_AddNumberToObject(st, "replicas", r) ||
        (r && !cJSON_AddNumberToObject(st, "readyReplicas", r)) ||
        (r && !cJSON_AddNumberToObject(st, "currentReplicas", r)) ||
        (r && !cJSON_AddNumberToObject(st, "updatedReplicas", r)) ||
        !cJSON_AddNumberToObject(st, "availableReplicas", r) ||
        (want->revision[0] && (!cJSON_AddStringToObject(st, "currentRevision", want->revision) ||
                               !cJSON_AddStringToObject(st, "updateRevision", want->revision)))) {
        cJSON_Delete(st);
        return 1;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    cJSON_AddItemToObject(obj, "status", st);
    return 0;
}

/* A StatefulSet's revision: the sha256 of its pod template ("" when it cannot be made). */
static void template_revision(const cJSON *obj, char out[CRYPTO_SHA256_HEX_LEN + 1])
{
    char *t = cJSON_PrintUnformatted(kjson_get(obj, "spec.template"));

    out[0] = '\0';
    if (t && crypto_sha256_hex(t, strlen(t), out, NULL) != KERR_OK)
        out[0] = '\0';
    free(t);
}

static int same_str(const cJSON *obj, const char *path, const char *want)
{
    const char *v = kjson_get_str(obj, path);

    return v ? strcmp(v, want) == 0 : !*want;
}

static void workload(struct ksim_ctrl *c, const struct ksim_rtype *rt, const cJSON *obj)
{
    const char *uid = ksim_obj_meta_str(obj, "uid");
    struct settled want = { (int)ksim_obj_spec_replicas(rt, obj),
                            num_at(obj, "metadata.generation"), "" };
    struct pending *p;

    if (!uid || ksim_obj_meta_str(obj, "deletionTimestamp"))
        return;
    if (strcmp(rt->kind, "StatefulSet") == 0)
        template_revision(obj, want.revision);
    if (num_at(obj, "status.replicas") == want.replicas &&
        num_at(obj, "status.readyReplicas") == want.replicas &&
        num_at(obj, "status.availableReplicas") == want.replicas &&
        num_at(obj, "status.observedGeneration") == want.generation &&
        same_str(obj, "status.currentRevision", want.revision) &&
        same_str(obj, "status.updateRevision", want.revision)) {
        pending_drop(c, uid);
        return;
    }
    p = pending_of(c, uid, 1);
    if (p && ktime_elapsed_ms(&p->since) < c->api->sts_delay_ms)
        return;
    modify(c, rt, obj, &c->sts, "status", settled_status, &want);
    pending_drop(c, uid);
}

static void pass(struct ksim_ctrl *c)
{
    struct snap s;
    const cJSON *e, *obj;
    const struct ksim_rtype *rt;
    const char *skey;

    s.objs = cJSON_CreateArray();
    if (!s.objs)
        return;
    ksim_store_each(c->api->store, NULL, take, &s);
    cJSON_ArrayForEach (e, s.objs) {
        skey = kjson_get_str(e, "skey");
        obj = kjson_get(e, "obj");
        rt = rtype_of(c->api, skey);
        if (!rt)
            continue;
        if (kjson_get(obj, "metadata.ownerReferences"))
            gc_dependent(c, rt, obj);
        gc_owner(c, &s, rt, obj);
        if (strcmp(skey, "/namespaces") == 0 && ksim_obj_meta_str(obj, "deletionTimestamp"))
            finalize_namespace(c, rt, obj);
        if (workload_key(skey))
            workload(c, rt, obj);
    }
    cJSON_Delete(s.objs);
}

void ksim_ctrl_sync(struct ksim_ctrl *c)
{
    pthread_mutex_lock(&c->mu);
    pass(c);
    pthread_mutex_unlock(&c->mu);
}

static int stopping(struct ksim_ctrl *c)
{
    int stop;

    pthread_mutex_lock(&c->mu);
    stop = c->stop;
    pthread_mutex_unlock(&c->mu);
    return stop;
}

static void *loop(void *arg)
{
    struct ksim_ctrl *c = arg;
    struct timespec dl;
    uint64_t seen = 0, now;
    size_t pending;

    while (!stopping(c)) {
        ktime_deadline_after(&dl, c->api->gc_interval_ms, CLOCK_MONOTONIC);
        now = ksim_store_wait_change(c->api->store, seen, &dl);
        if (stopping(c))
            break;
        pthread_mutex_lock(&c->mu);
        pending = c->npending;
        pthread_mutex_unlock(&c->mu);
        if (now != seen || pending) {
            int64_t t0 = ktime_mono_ns();
            long spent_ms, wait_ms;

            seen = now;
            ksim_ctrl_sync(c);
            /*
             * At most one pass per interval (a burst of writes is handled together), and
             * passes at most a tenth of the time: a pass holds the store's lock while it
             * copies what it looks at, and with 100,000 objects stored a pass after every
             * write held up most requests (a controller's initial LISTs among them).
             */
            spent_ms = (long)((ktime_mono_ns() - t0) / KTIME_NS_PER_MS);
            wait_ms = spent_ms * 9 > c->api->gc_interval_ms ? spent_ms * 9 : c->api->gc_interval_ms;
            ktime_deadline_after(&dl, wait_ms, CLOCK_MONOTONIC);
            ksim_store_wait_change(c->api->store, UINT64_MAX, &dl);
        }
    }
    return NULL;
}

static int user(struct ksim_user *u, const char *sa)
{
    char name[128];

    snprintf(name, sizeof(name), "system:serviceaccount:kube-system:%s", sa);
    u->name = strdup(name);
    u->uid = strdup("");
    u->groups = calloc(3, sizeof(*u->groups));
    if (!u->name || !u->uid || !u->groups)
        return -1;
    u->groups[0] = strdup("system:serviceaccounts");
    u->groups[1] = strdup("system:serviceaccounts:kube-system");
    u->groups[2] = strdup("system:authenticated");
    u->ngroups = 3;
    return u->groups[0] && u->groups[1] && u->groups[2] ? 0 : -1;
}

static void user_release(struct ksim_user *u)
{
    size_t i;

    free(u->name);
    free(u->uid);
    for (i = 0; u->groups && i < u->ngroups; i++)
        free(u->groups[i]);
    free(u->groups);
}

static void ctrl_free(struct ksim_ctrl *c)
{
    user_release(&c->gc);
    user_release(&c->nsc);
    user_release(&c->sts);
    free(c->pending);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

enum kerr ksim_ctrl_start(struct ksim_api *api, struct ksim_ctrl **out, struct kerr_info *err)
{
    struct ksim_ctrl *c = calloc(1, sizeof(*c));

    *out = NULL;
    if (!c)
        return kerr_set(err, KERR_NOMEM, NULL);
    c->api = api;
    pthread_mutex_init(&c->mu, NULL);
    if (user(&c->gc, "generic-garbage-collector") != 0 ||
        user(&c->nsc, "namespace-controller") != 0 ||
        user(&c->sts, "statefulset-controller") != 0) {
        ctrl_free(c);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    if (pthread_create(&c->th, NULL, loop, c) != 0) {
        ctrl_free(c);
        return kerr_set(err, KERR_INTERNAL, "cannot start the controllers");
    }
    *out = c;
    return KERR_OK;
}

void ksim_ctrl_stop(struct ksim_ctrl *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->th, NULL);
    ctrl_free(c);
}
