/*
 * hib_read - the reading half of the hibernation flow (see hib_int.h): load
 * each object once, from the caches or the API, and derive the view that
 * hibplan_decide reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/hibguard.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/core/cmember.h"
#include "controller/core/etcdspec.h"
#include "controller/hibernation/hib_int.h"
#include "controller/core/imtjob.h"

static const struct k8s_resource RES_SVC = { "", "v1", "services", 1 };
static const struct k8s_resource RES_STS = { "apps", "v1", "statefulsets", 1 };

void hib_round_release(struct round *r)
{
    cJSON_Delete(r->etcd);
    cJSON_Delete(r->svc);
    cJSON_Delete(r->sts);
    cJSON_Delete(r->imm);
    cJSON_Delete(r->tasks);
    memset(r, 0, sizeof(*r));
}

enum kerr hib_get_opt(const struct hib_env *env, struct round *r, const struct k8s_resource *res,
                      const char *name, cJSON **out, struct kerr_info *err)
{
    enum kerr rc = k8s_get(env->client, res, r->ns, name, NULL, out, err);

    r->used++;
    if (rc == KERR_NOTFOUND) {
        *out = NULL;
        kerr_clear(err);
        return KERR_OK;
    }
    return rc;
}

enum kerr hib_store_stamp(const struct hib_env *env, struct round *r, char out[HIBGUARD_STAMP_MAX],
                          char *why, size_t n, struct kerr_info *err)
{
    const char *ref = NULL;
    cJSON *secret = NULL;
    const char *checked, *slash;
    long long gen = 0;
    int same = 0;
    enum kerr rc;

    out[0] = '\0';
    why[0] = '\0';
    if (hibguard_secret_ref(r->etcd, &ref) == KERR_INVAL)
        return KERR_OK;
    if (ref && (rc = hib_get_opt(env, r, &ETCDSPEC_RES_SECRET, ref, &secret, err)) != KERR_OK)
        return rc;
    /* the members' sidecars took the snapshot: only their store, when it is the spec's */
    checked = etcdspec_annotation(r->etcd, HIB_ANN_CHECKED); /* "<uid>/<generation>" */
    if (checked && (slash = strrchr(checked, '/')) != NULL)
        gen = strtoll(slash + 1, NULL, 10);
    rc = kjson_get(r->etcd, "spec.backup.store")
             ? cmember_stamp_store(r->etcd, secret, r->sts, gen > 0 ? gen : 0, &same, why, n)
             : KERR_OK;
    if (rc == KERR_OK && !same && why[0]) {
        cJSON_Delete(secret);
        return KERR_OK;
    }
    if (rc == KERR_OK)
        rc = hibguard_store_stamp(r->etcd, secret, out);
    cJSON_Delete(secret);
    if (rc == KERR_NOMEM)
        return kerr_set(err, rc, "the store stamp");
    if (rc != KERR_OK)
        out[0] = '\0';
    return KERR_OK;
}

/* ---- the tasks ---- */

static long since_ms(const char *stamp)
{
    struct timespec ts;

    if (!stamp || ktime_parse(stamp, &ts, NULL) != KERR_OK)
        return 1000L * 86400;
    return ((long)time(NULL) - (long)ts.tv_sec) * 1000L;
}

static enum hibplan_task task_state(const cJSON *t)
{
    const char *s = kjson_get_str(t, "status.state");

    if (kjson_has(t, "metadata.deletionTimestamp"))
        return HIBPLAN_TASK_DELETING;
    if (s && strcmp(s, "Succeeded") == 0)
        return HIBPLAN_TASK_SUCCEEDED;
    if (s && (strcmp(s, "Failed") == 0 || strcmp(s, "Rejected") == 0))
        return HIBPLAN_TASK_FAILED;
    return HIBPLAN_TASK_LIVE;
}

/* Not Succeeded, Failed or Rejected: etcd-druid's IsCompleted() is false. */
static int task_unfinished(const cJSON *t)
{
    const char *s = kjson_get_str(t, "status.state");

    return !s || (strcmp(s, "Succeeded") && strcmp(s, "Failed") && strcmp(s, "Rejected"));
}

time_t hib_cut_time(const cJSON *etcd)
{
    time_t t;

    return hibguard_cut_at(etcd, &t, NULL) == KERR_OK ? t : (time_t)-1;
}

void hib_keep_task(struct round *r, cJSON *t)
{
    const char *name = kjson_get_str(t, "metadata.name");
    const cJSON *o;
    int i = 0;

    if (!t || !name || (!r->tasks && !(r->tasks = cJSON_CreateArray()))) {
        cJSON_Delete(t);
        return;
    }
    cJSON_ArrayForEach (o, r->tasks) {
        const char *n = kjson_get_str(o, "metadata.name");

        if (n && strcmp(n, name) == 0) {
            cJSON_ReplaceItemInArray(r->tasks, i, t);
            return;
        }
        i++;
    }
    cJSON_AddItemToArray(r->tasks, t);
}

/* The tasks from the API: the namespace's (a task of this Etcd names it in spec.etcdName). */
static enum kerr list_tasks(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    cJSON *list = NULL;
    enum kerr rc = k8s_list(env->client, &ETCDSPEC_RES_OPSTASK, r->ns, NULL, &list, err);

    r->used++;
    if (rc != KERR_OK)
        return rc;
    cJSON_Delete(r->tasks);
    r->tasks = cJSON_DetachItemFromObjectCaseSensitive(list, "items");
    cJSON_Delete(list);
    r->tasks_read = true;
    r->tasks_fresh = true;
    return KERR_OK;
}

static enum kerr load_tasks(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    if (r->tasks_read)
        return KERR_OK;
    if (env->cached_tasks) {
        r->tasks = env->cached_tasks(env->cache_arg, r->ns, r->name);
        r->tasks_read = true;
        return KERR_OK;
    }
    return list_tasks(env, r, err);
}

/*
 * The tasks' part of the view: ours (final-snapshot attempts) and the others
 * of this Etcd (etcd-druid's pre-sync tasks, a user's), which decide whether
 * we may create one and whether a snapshot of this cycle exists.
 */
static void derive_tasks(struct round *r)
{
    time_t cut = r->v.cut_forged ? (time_t)-1 : hib_cut_time(r->etcd);
    const cJSON *t;
    const char *en;
    int n;

    r->latest = NULL;
    cJSON_ArrayForEach (t, r->tasks) {
        /* the webhook's rule for a scale-down to 0 (common/hibguard.h) */
        if (cut >= 0 && hibguard_task_counts(t, r->ns, r->name, cut))
            r->v.counted = true;
        if (!(n = hib_task_ours(t, r->name))) {
            en = kjson_get_str(t, "spec.etcdName");
            if (en && strcmp(en, r->name) == 0 && task_unfinished(t))
                r->v.other_live = true;
            continue;
        }
        if (kjson_has(t, "metadata.deletionTimestamp"))
            r->v.ndeleting++;
        else
            r->v.ntasks++;
        if (n > r->v.attempt) {
            r->v.attempt = n;
            r->latest = t;
        }
    }
    r->v.task = r->latest ? task_state(r->latest) : HIBPLAN_TASK_NONE;
    r->v.task_errors = r->v.task == HIBPLAN_TASK_LIVE &&
                       cJSON_GetArraySize(kjson_get_arr(r->latest, "status.lastErrors")) > 0;
    if (r->v.task == HIBPLAN_TASK_FAILED)
        r->v.failed_ago_ms = since_ms(kjson_get_str(r->latest, "status.lastTransitionTime"));
}

/* ---- the other objects ---- */

/*
 * The object what of ns/name: from the cache, or from the API when the cache lacks it or api
 * is set (then *fresh is set).
 */
static enum kerr load(const struct hib_env *env, struct round *r, enum hib_cached what,
                      const struct k8s_resource *res, const char *name, bool api, cJSON **out,
                      bool *fresh, struct kerr_info *err)
{
    enum kerr rc;

    if (!api && env->cached && (*out = env->cached(env->cache_arg, what, r->ns, name)))
        return KERR_OK;
    if ((rc = hib_get_opt(env, r, res, name, out, err)) == KERR_OK)
        *fresh = true;
    return rc;
}

static enum kerr load_sts(const struct hib_env *env, struct round *r, bool api,
                          struct kerr_info *err)
{
    enum kerr rc = KERR_OK;

    if (!r->sts_read && (rc = load(env, r, HIB_CACHED_STATEFULSET, &RES_STS, r->name, api, &r->sts,
                                   &r->sts_fresh, err)) == KERR_OK)
        r->sts_read = true;
    return rc;
}

static enum kerr load_svc(const struct hib_env *env, struct round *r, bool api,
                          struct kerr_info *err)
{
    char name[ETCDSPEC_NAME_MAX + 8];
    enum kerr rc = KERR_OK;

    snprintf(name, sizeof(name), "%s-client", r->name);
    if (!r->svc_read && (rc = load(env, r, HIB_CACHED_SERVICE, &RES_SVC, name, api || r->svc_api,
                                   &r->svc, &r->svc_fresh, err)) == KERR_OK)
        r->svc_read = true;
    return rc;
}

static enum kerr load_imm(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    char name[ETCDSPEC_NAME_MAX + 24];
    enum kerr rc = KERR_OK;
    bool fresh = false;

    if (imtjob_task_name(r->name, name, sizeof(name)) != KERR_OK)
        return kerr_set(err, KERR_INVAL, "Etcd name too long");
    if (!r->imm_read && (rc = load(env, r, HIB_CACHED_IMMTASK, &ETCDSPEC_RES_IMMTASK, name, false,
                                   &r->imm, &fresh, err)) == KERR_OK)
        r->imm_read = true;
    return rc;
}

int hib_stale(const struct round *r)
{
    return !r->svc_fresh + !r->sts_fresh + !r->tasks_fresh;
}

enum kerr hib_read_fresh(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    enum kerr rc;

    if (!r->svc_fresh) {
        cJSON_Delete(r->svc);
        r->svc = NULL;
        r->svc_read = false;
        if ((rc = load_svc(env, r, true, err)) != KERR_OK)
            return rc;
    }
    if (!r->sts_fresh) {
        cJSON_Delete(r->sts);
        r->sts = NULL;
        r->sts_read = false;
        if ((rc = load_sts(env, r, true, err)) != KERR_OK)
            return rc;
    }
    return r->tasks_fresh ? KERR_OK : list_tasks(env, r, err);
}

/* ---- the view ---- */

static int int_at(const cJSON *o, const char *path)
{
    int64_t v = 0;
    return kjson_get_int64(o, path, &v) == KERR_OK ? (int)v : 0;
}

int hib_wanted(const cJSON *etcd)
{
    const char *want = etcdspec_annotation(etcd, HIB_ANN_HIBERNATE);
    return want && strcmp(want, "true") == 0;
}

int hib_spec_zero(const cJSON *etcd)
{
    int64_t v = -1;
    return kjson_get_int64(etcd, "spec.replicas", &v) == KERR_OK && v == 0;
}

/* A phase of the way down or asleep: the spec path's intent holds while spec.replicas is 0. */
static int phase_asleep(enum hibplan_phase p)
{
    return p == HIBPLAN_CUTTING || p == HIBPLAN_SNAPSHOT || p == HIBPLAN_SCALING ||
           p == HIBPLAN_FAILED || p == HIBPLAN_HIBERNATED;
}

/*
 * Break glass counts as the webhook counts it (common/hibguard): "<RFC 3339 expiry> <reason>",
 * not yet expired. Any other value is ignored, as the scale-down guard ignores it.
 */
static bool break_glass_valid(const char *value)
{
    const char *reason;
    time_t expires;

    return value && hibguard_break_glass(value, &expires, &reason, NULL) == KERR_OK &&
           expires > time(NULL);
}

/* The Etcd's part of the view. */
static void derive_etcd(const struct hib_env *env, struct round *r)
{
    const cJSON *e = r->etcd;

    r->v.phase = hibplan_phase_parse(etcdspec_annotation(e, HIB_ANN_PHASE));
    r->v.spec_signal = !hib_wanted(e) && hib_spec_zero(e);
    r->v.want = hib_wanted(e) || (r->v.spec_signal && phase_asleep(r->v.phase));
    r->v.deleting = kjson_has(e, "metadata.deletionTimestamp");
    r->v.suspended = etcdspec_annotation(e, HIB_ANN_SUSPEND) != NULL;
    r->v.suspend_ours = etcdspec_annotation(e, HIB_ANN_SUSPEND_ADDED) != NULL;
    r->v.cut_at = etcdspec_annotation(e, HIB_ANN_CUT_AT) != NULL;
    r->v.failing_noted = etcdspec_annotation(e, HIB_ANN_CONDITION) != NULL;
    r->v.break_glass = break_glass_valid(etcdspec_annotation(e, HIB_ANN_BREAK_GLASS));
    r->v.store = kjson_get_obj(e, "spec.backup.store") != NULL;
    r->v.spec_replicas = int_at(e, "spec.replicas");
    r->v.imm = env->bucket(e, NULL);
}

static void derive_objects(struct round *r)
{
    int64_t start = 0;
    int rem = 0;

    r->v.svc = hib_svc_state(r->svc, &rem);
    r->v.svc_remembered = rem;
    r->v.sts_present = r->sts != NULL;
    r->v.sts_spec = int_at(r->sts, "spec.replicas");
    r->v.sts_moved =
        kjson_get(r->sts, "spec.ordinals.start") &&
        !(kjson_get_int64(r->sts, "spec.ordinals.start", &start) == KERR_OK && start == 0);
    r->v.sts_status = int_at(r->sts, "status.replicas");
    /* the cut time on the Etcd must be the one the controller recorded on the Service */
    if (r->v.cut_at && r->svc_read && r->v.svc != HIBPLAN_SVC_MISSING) {
        const char *rec = etcdspec_annotation(r->svc, HIB_ANN_CUT_AT);
        const char *cut = etcdspec_annotation(r->etcd, HIB_ANN_CUT_AT);

        r->v.cut_forged = !rec || strcmp(rec, cut) != 0;
    }
    r->v.verified = r->verified;
    r->v.stamp_ok =
        r->sts && hibguard_checked_matches(etcdspec_annotation(r->etcd, HIB_ANN_CHECKED), r->sts);
    r->v.stamp_moved =
        r->sts && etcdspec_annotation(r->etcd, HIB_ANN_CHECKED) &&
        !hibguard_checked_slept(etcdspec_annotation(r->etcd, HIB_ANN_CHECKED), r->sts);
    r->v.stamp_next =
        r->sts && hibguard_checked_next(etcdspec_annotation(r->etcd, HIB_ANN_CHECKED), r->sts);
    r->v.imm_task = r->imm != NULL && !kjson_has(r->imm, "metadata.deletionTimestamp");
    r->v.imm_deleting = r->imm != NULL && !r->v.imm_task;
}

enum kerr hib_read_view(const struct hib_env *env, struct round *r, int *gone,
                        struct kerr_info *err)
{
    enum kerr rc;

    *gone = 0;
    if (!r->etcd) {
        if ((rc = hib_get_opt(env, r, &ETCDSPEC_RES_ETCD, r->name, &r->etcd, err)) != KERR_OK)
            return rc;
        if (!r->etcd) { /* deleted meanwhile: owner references clean up */
            *gone = 1;
            return KERR_OK;
        }
    }
    memset(&r->v, 0, sizeof(r->v));
    derive_etcd(env, r);
    if (!r->v.want && r->v.phase == HIBPLAN_NONE) {
        /* only spec.replicas: 0 brought us here: the StatefulSet says whether it is new */
        if ((rc = load_sts(env, r, false, err)) != KERR_OK)
            return rc;
        r->v.want = r->v.spec_signal && int_at(r->sts, "spec.replicas") > 0;
        if (!r->v.want) {
            derive_objects(r);
            return KERR_OK;
        }
    }
    /* Hibernated and staying so: the StatefulSet (a scale-up voids the cut) and the
     * immutability task. */
    if (r->v.want && r->v.phase == HIBPLAN_HIBERNATED &&
        (rc = load_sts(env, r, false, err)) != KERR_OK)
        return rc;
    if (!(r->v.want && r->v.phase == HIBPLAN_HIBERNATED) &&
        ((rc = load_svc(env, r, false, err)) || (rc = load_sts(env, r, false, err)) ||
         (rc = load_tasks(env, r, err))))
        return rc;
    if ((rc = load_imm(env, r, err)) != KERR_OK)
        return rc;
    derive_objects(r);
    derive_tasks(r);
    return KERR_OK;
}
