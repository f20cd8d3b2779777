/*
 * hib - the I/O of the hibernation flow (see hib.h): read the state back
 * from the API, decide with hibplan_decide, act, repeat.
 */
#include "controller/hibernation/hib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/events.h"
#include "common/k8s.h"
#include "common/jpatch.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/core/etcdspec.h"
#include "controller/hibernation/hib_int.h"

#define CONFLICT_WAIT    200L
#define CONFLICT_BACKOFF 1000L
/* A hibernation or wake-up underway (ports cut, maybe scaled to 0) retries a failed call
 * within this, however many calls failed before: the work queue's own backoff doubles to
 * 1000 s, and the cluster would stay cut off that long after the API server recovers. */
#define ERROR_RETRY 1000L

static const struct k8s_resource RES_SVC = { "", "v1", "services", 1 };
static const struct k8s_resource RES_STS = { "apps", "v1", "statefulsets", 1 };

/* ---- acting ---- */

/*
 * Merge-patch annotations of the Etcd, resourceVersion checked: n pairs of
 * key and value (NULL: remove), in one write. The answer is the Etcd from
 * then on; a conflict has it read again.
 */
enum kerr hib_patch_etcd(const struct hib_env *env, struct round *r, int n, const char *const kv[],
                         struct kerr_info *err)
{
    cJSON *patch = cJSON_CreateObject(), *ans = NULL;
    const char *rv = kjson_get_str(r->etcd, "metadata.resourceVersion");
    enum kerr rc = kerr_set(err, KERR_NOMEM, "out of memory");

    if (!patch)
        goto out;
    for (int i = 0; i < n; i++) {
        const char *segs[] = { "metadata", "annotations", kv[2 * i], NULL };
        const char *value = kv[2 * i + 1];

        if (kjson_setv(patch, segs, value ? cJSON_CreateString(value) : cJSON_CreateNull(), err) !=
            KERR_OK)
            goto out;
    }
    if (rv && kjson_set_str(patch, "metadata.resourceVersion", rv, err) != KERR_OK)
        goto out;
    rc = k8s_patch(env->client, &ETCDSPEC_RES_ETCD, r->ns, r->name, K8S_PATCH_MERGE, patch, NULL,
                   &ans, err);
    r->used++;
    if (rc == KERR_OK || rc == KERR_CONFLICT) {
        cJSON_Delete(r->etcd);
        r->etcd = rc == KERR_OK ? ans : NULL;
        ans = NULL;
    }
out:
    cJSON_Delete(ans);
    cJSON_Delete(patch);
    return rc;
}

enum kerr hib_patch_one(const struct hib_env *env, struct round *r, const char *key,
                        const char *value, struct kerr_info *err)
{
    const char *kv[] = { key, value };
    return hib_patch_etcd(env, r, 1, kv, err);
}

/*
 * Cut or restore the ports: a merge patch of spec.ports and the removed-ports annotation,
 * resourceVersion checked (the Service read may be the cache's, projected). The answer is
 * the Service from then on; a conflict has it read again from the API.
 */
static enum kerr patch_svc(const struct hib_env *env, struct round *r, int cut,
                           struct kerr_info *err)
{
    const char *segs[] = { "metadata", "annotations", HIB_ANN_REMOVED_PORTS, NULL };
    const char *csegs[] = { "metadata", "annotations", HIB_ANN_CUT_AT, NULL };
    const char *rv = kjson_get_str(r->svc, "metadata.resourceVersion");
    const char *name = kjson_get_str(r->svc, "metadata.name");
    const char *rem;
    cJSON *next = NULL, *patch = NULL, *ans = NULL;
    enum kerr rc = cut ? hib_ports_cut(r->svc, &next, err) : hib_ports_restore(r->svc, &next, err);

    if (rc != KERR_OK)
        return rc;
    if (!name || !rv) {
        rc = kerr_set(err, KERR_INVAL, "the client Service has no name or resourceVersion");
        goto out;
    }
    rem = etcdspec_annotation(next, HIB_ANN_REMOVED_PORTS);
    rc = kerr_set(err, KERR_NOMEM, "out of memory");
    if (!(patch = cJSON_CreateObject()) ||
        kjson_set_str(patch, "metadata.resourceVersion", rv, err) ||
        kjson_setv(patch, segs, rem ? cJSON_CreateString(rem) : cJSON_CreateNull(), err) ||
        kjson_setv(patch, csegs, cJSON_CreateNull(), err) || /* a cut's time comes after it */
        kjson_set(patch, "spec.ports", cJSON_Duplicate(kjson_get_arr(next, "spec.ports"), 1), err))
        goto out;
    rc = k8s_patch(env->client, &RES_SVC, r->ns, name, K8S_PATCH_MERGE, patch, NULL, &ans, err);
    r->used++;
    if (rc == KERR_OK || rc == KERR_CONFLICT) {
        cJSON_Delete(r->svc);
        r->svc = rc == KERR_OK ? ans : NULL;
        r->svc_read = rc == KERR_OK;
        r->svc_fresh = rc == KERR_OK;
        r->svc_api = r->svc_api || rc == KERR_CONFLICT;
        ans = NULL;
    }
out:
    cJSON_Delete(ans);
    cJSON_Delete(patch);
    cJSON_Delete(next);
    return rc;
}

/*
 * The controller's own record of the cut: its time on the client Service (a component only the
 * reconcilers may change), written before the Etcd's; a cut time on the Etcd that differs from
 * it is not the controller's (common/hibguard.h).
 */
static enum kerr record_cut(const struct hib_env *env, struct round *r, const char *when,
                            struct kerr_info *err)
{
    const char *segs[] = { "metadata", "annotations", HIB_ANN_CUT_AT, NULL };
    const char *rv = kjson_get_str(r->svc, "metadata.resourceVersion");
    const char *name = kjson_get_str(r->svc, "metadata.name");
    cJSON *patch = cJSON_CreateObject(), *ans = NULL;
    enum kerr rc = kerr_set(err, KERR_NOMEM, "out of memory");

    if (!name || !rv) {
        cJSON_Delete(patch);
        return kerr_set(err, KERR_INVAL, "the client Service has no name or resourceVersion");
    }
    if (patch && !kjson_set_str(patch, "metadata.resourceVersion", rv, err) &&
        !kjson_setv(patch, segs, cJSON_CreateString(when), err)) {
        rc = k8s_patch(env->client, &RES_SVC, r->ns, name, K8S_PATCH_MERGE, patch, NULL, &ans, err);
        r->used++;
    }
    if (rc == KERR_OK || rc == KERR_CONFLICT) {
        cJSON_Delete(r->svc);
        r->svc = rc == KERR_OK ? ans : NULL;
        r->svc_read = rc == KERR_OK;
        r->svc_fresh = rc == KERR_OK;
        r->svc_api = r->svc_api || rc == KERR_CONFLICT;
        ans = NULL;
    }
    cJSON_Delete(ans);
    cJSON_Delete(patch);
    return rc;
}

/* Scale through the scale subresource; the answer's replicas are the StatefulSet's from then on. */
/*
 * The scale to 0 on a checked final snapshot: a JSON patch of the StatefulSet itself whose
 * tests hold it to the uid and generation of the stamp (so the API server refuses it when the
 * StatefulSet changed since the check, and the webhook sees the old object it judges by).
 */
static enum kerr checked_scale_patch(const char *stamp, cJSON **out, struct kerr_info *err)
{
    char uid[HIBGUARD_CHECKED_MAX];
    long long gen = 0;
    cJSON *p = NULL;
    enum kerr rc;

    *out = NULL;
    if ((rc = hibguard_checked_parse(stamp, uid, sizeof(uid), &gen, err)) != KERR_OK)
        return rc;
    if (!(p = cJSON_CreateArray()))
        return kerr_set(err, KERR_NOMEM, "out of memory");
    if ((rc = jpatch_test(p, "/metadata/uid", cJSON_CreateString(uid), err)) != KERR_OK ||
        (rc = jpatch_test(p, "/metadata/generation", cJSON_CreateNumber((double)gen), err)) !=
            KERR_OK ||
        (rc = jpatch_replace(p, "/spec/replicas", cJSON_CreateNumber(0), err)) != KERR_OK) {
        cJSON_Delete(p);
        return rc;
    }
    *out = p;
    return KERR_OK;
}

static enum kerr scale(const struct hib_env *env, struct round *r, int replicas,
                       struct kerr_info *err)
{
    struct k8s_write_opts wo = { .subresource = "scale" };
    const char *stamp = etcdspec_annotation(r->etcd, HIB_ANN_CHECKED);
    cJSON *patch = NULL, *ans = NULL;
    enum kerr rc = kerr_set(err, KERR_NOMEM, "out of memory");
    int64_t spec = replicas, status = -1;

    if (replicas == 0 && r->v.stamp_ok && stamp) {
        if ((rc = checked_scale_patch(stamp, &patch, err)) == KERR_OK) {
            rc = k8s_patch(env->client, &RES_STS, r->ns, r->name, K8S_PATCH_JSON, patch, NULL, &ans,
                           err);
            r->used++;
        }
    } else if ((patch = cJSON_CreateObject()) &&
               kjson_set_int(patch, "spec.replicas", replicas, err) == KERR_OK) {
        rc = k8s_patch(env->client, &RES_STS, r->ns, r->name, K8S_PATCH_MERGE, patch, &wo, &ans,
                       err);
        r->used++;
    }
    if (rc == KERR_OK && r->sts) {
        (void)kjson_get_int64(ans, "spec.replicas", &spec);
        if (kjson_get_int64(ans, "status.replicas", &status) != KERR_OK)
            status = -1;
        if (kjson_set_int(r->sts, "spec.replicas", spec, NULL) ||
            (status >= 0 && kjson_set_int(r->sts, "status.replicas", status, NULL))) {
            cJSON_Delete(r->sts); /* read it again */
            r->sts = NULL;
            r->sts_read = false;
        }
    }
    cJSON_Delete(ans);
    cJSON_Delete(patch);
    return rc;
}

/*
 * The stamp for ScalingDown into r->checked: the StatefulSet as read before this call's
 * revision check, or as read now when the controller does not check (hibplan_opts.verify
 * off). False when there is none (no check of this call, no StatefulSet, nothing counted).
 */
static bool checked_stamp(const struct hib_env *env, struct round *r)
{
    if (!r->v.store || !r->v.counted || !r->sts)
        return false;
    if (!env->plan.verify &&
        hibguard_checked_format(r->sts, r->checked, sizeof(r->checked), NULL) != KERR_OK)
        return false;
    if (env->plan.verify && !r->verified)
        return false;
    return r->checked[0] != '\0';
}

static enum kerr perform(const struct hib_env *env, struct round *r, const struct hibplan_step *s,
                         struct kerr_info *err)
{
    enum kerr rc;

    char now[KTIME_LEN + 1];

    switch (s->act) {
    case HIBPLAN_SET_PHASE: {
        /*
         * ScalingDown carries the StatefulSet the final snapshot was checked against (the
         * webhook admits a scale to 0 on the snapshot only for it); any other phase drops it;
         * a new cycle starts without the cut time of the last one.
         */
        const char *kv[8] = { HIB_ANN_PHASE,   hibplan_phase_name(s->phase),
                              HIB_ANN_CHECKED, NULL,
                              HIB_ANN_STORE,   NULL,
                              HIB_ANN_CUT_AT,  NULL };
        char store[HIBGUARD_STAMP_MAX], unstamped[512] = "";
        int n = 3;

        if (s->phase == HIBPLAN_SCALING && checked_stamp(env, r))
            kv[3] = r->checked;
        /*
         * Hibernated keeps the check and adds the store the checked final snapshot is in (the
         * claims' rule), its Secret read now that the scale to 0 is confirmed: the call that
         * checks the snapshot and writes ScalingDown has no request left for it. Both are
         * kept while Hibernated and dropped in any other phase (the store: but WakingUp).
         */
        if (s->phase == HIBPLAN_HIBERNATED &&
            (kv[3] = etcdspec_annotation(r->etcd, HIB_ANN_CHECKED)) != NULL) {
            if ((rc = hib_store_stamp(env, r, store, unstamped, sizeof(unstamped), err)) != KERR_OK)
                return rc;
            kv[5] = store[0] ? store : NULL;
        }
        /* a wake keeps the store of the final snapshot until it is up: warden-webhook refuses
         * the scale-up when a member whose claim is gone would restore from another store */
        if (s->phase == HIBPLAN_WAKING)
            kv[5] = etcdspec_annotation(r->etcd, HIB_ANN_STORE);
        if (s->phase == HIBPLAN_CUTTING && r->v.cut_at)
            n = 4;
        rc = hib_patch_etcd(env, r, n, kv, err);
        if (rc == KERR_OK)
            hib_phase_event(env, r, s->phase);
        if (rc == KERR_OK && unstamped[0])
            ev_log_emitf(env->events, r->etcd, EV_WARNING, "FinalSnapshotStoreUnknown",
                         "Hibernation",
                         "no %s stamped: %s; the member claims stay protected (wake it, let "
                         "etcd-druid reconcile, and hibernate it again)",
                         HIB_ANN_STORE, unstamped);
        return rc;
    }
    case HIBPLAN_SET_SUSPEND: {
        const char *kv[] = { HIB_ANN_SUSPEND, "true", HIB_ANN_SUSPEND_ADDED, "true" };
        int taken = r->v.suspend_ours; /* its record stayed: someone else removed it */

        rc = hib_patch_etcd(env, r, 2, kv, err);
        if (rc == KERR_OK && taken) /* someone removed it: `kubectl druid reconciliation resume`? */
            ev_log_emitf(env->events, r->etcd, EV_WARNING, "SuspensionReasserted", "Hibernation",
                         "%s was removed while hibernation phase %s holds it: set again "
                         "(etcd-druid would scale the StatefulSet back up); to wake up, remove "
                         "%s or set spec.replicas above 0",
                         HIB_ANN_SUSPEND, hibplan_phase_name(r->v.phase), HIB_ANN_HIBERNATE);
        return rc;
    }
    case HIBPLAN_REMOVE_SUSPEND: {
        /* only what the controller added: an operator's suspension stays */
        const char *kv[] = { HIB_ANN_SUSPEND_ADDED, NULL, HIB_ANN_SUSPEND, NULL };
        return hib_patch_etcd(env, r, 2, kv, err);
    }
    case HIBPLAN_SET_CUT_AT: {
        /* the API server's time, which stamps the tasks it is compared with */
        time_t t;

        if ((rc = hib_task_server_now(env, r, &t, now, err)) != KERR_OK ||
            (rc = record_cut(env, r, now, err)) != KERR_OK)
            return rc;
        return hib_patch_one(env, r, HIB_ANN_CUT_AT, now, err);
    }
    case HIBPLAN_VOID_CUT:
        return hib_void_cut(env, r, err);
    case HIBPLAN_RESTAMP:
        return hib_restamp(env, r, err);
    case HIBPLAN_VERIFY:
        return hib_verify(env, r, err);
    case HIBPLAN_REMOVE_BREAK_GLASS: {
        const char *why = etcdspec_annotation(r->etcd, HIB_ANN_BREAK_GLASS);
        char reason[256];

        snprintf(reason, sizeof(reason), "%s", why ? why : "");
        rc = hib_patch_one(env, r, HIB_ANN_BREAK_GLASS, NULL, err);
        if (rc == KERR_OK && (!r->v.store || !r->v.counted))
            ev_log_emitf(env->events, r->etcd, EV_NORMAL, "BreakGlassUsed", "Hibernation",
                         "the scale-down without a final snapshot that %s allowed (%s) is done: "
                         "the annotation is removed, the next scale-down needs a snapshot again",
                         HIB_ANN_BREAK_GLASS, reason);
        else if (rc == KERR_OK && env->plan.verify && etcdspec_annotation(r->etcd, HIB_ANN_CHECKED))
            ev_log_emitf(env->events, r->etcd, EV_NORMAL, "BreakGlassUsed", "Hibernation",
                         "scaled to 0 with %s set (%s), which it did not need: the final full "
                         "snapshot was checked to hold etcd's last revision; the annotation is "
                         "removed",
                         HIB_ANN_BREAK_GLASS, reason);
        else if (rc == KERR_OK)
            ev_log_emitf(env->events, r->etcd, EV_NORMAL, "BreakGlassUsed", "Hibernation",
                         "scaled to 0 with %s set (%s): a full snapshot was taken after the cut, "
                         "and the scale-down did not wait for a check that it holds etcd's last "
                         "write; the annotation is removed, the next scale-down needs the check "
                         "again",
                         HIB_ANN_BREAK_GLASS, reason);
        return rc;
    }
    case HIBPLAN_REMOVE_CUT_AT:
        return hib_patch_one(env, r, HIB_ANN_CUT_AT, NULL, err);
    case HIBPLAN_REMOVE_PHASE:
        rc = hib_patch_one(env, r, HIB_ANN_PHASE, NULL, err);
        if (rc == KERR_OK)
            ev_log_emitf(env->events, r->etcd, EV_NORMAL, "WokeUp", "Hibernation",
                         "woke up: replicas, ports and spec "
                         "reconciliation restored");
        return rc;
    case HIBPLAN_NOTE_FAILING:
        return hib_note_failing(env, r, err);
    case HIBPLAN_CLEAR_FAILING:
        return hib_patch_one(env, r, HIB_ANN_CONDITION, NULL, err);
    case HIBPLAN_CUT_PORTS:
        return patch_svc(env, r, 1, err);
    case HIBPLAN_RESTORE_PORTS:
        return patch_svc(env, r, 0, err);
    case HIBPLAN_DELETE_TASKS:
        return hib_task_delete_ours(env, r, &r->defer_ms, err);
    case HIBPLAN_CREATE_TASK:
        if (r->v.task == HIBPLAN_TASK_FAILED)
            ev_log_emitf(env->events, r->etcd, EV_WARNING, "FinalSnapshotFailed", "Hibernation",
                         "final snapshot attempt %d failed (%s); attempt %d", r->v.attempt,
                         kjson_get_str(r->latest, "status.lastOperation.description")
                             ? kjson_get_str(r->latest, "status.lastOperation.description")
                             : kjson_get_str(r->latest, "status.state"),
                         s->attempt);
        return hib_task_create(env, r, s->attempt, &r->defer_ms, err);
    case HIBPLAN_SCALE:
        rc = scale(env, r, s->replicas, err);
        hib_scale_event(env, r, s->replicas, rc, err);
        return rc;
    case HIBPLAN_IMT_ENSURE:
        r->used += 2; /* a GET and a write */
        if ((rc = env->imt_ensure(env->imt_arg, r->etcd, err)) == KERR_OK) {
            cJSON_Delete(r->imm); /* it exists: what the decision needs to know */
            r->imm = cJSON_CreateObject();
        }
        return rc;
    case HIBPLAN_IMT_DELETE:
        r->used++;
        if ((rc = env->imt_delete(env->imt_arg, r->etcd, err)) == KERR_OK) {
            cJSON_Delete(r->imm);
            r->imm = NULL;
        }
        return rc;
    default:
        return KERR_OK;
    }
}

/* API requests the action s may make (the budget of a call). */
static int cost(const struct round *r, const struct hibplan_step *s)
{
    switch (s->act) {
    case HIBPLAN_SET_CUT_AT:
        return 3;
    case HIBPLAN_IMT_ENSURE:
        return 2;
    case HIBPLAN_CREATE_TASK:
        return r->v.cut_at ? 3 : 2; /* the server's clock; a GET when it exists already */
    case HIBPLAN_SET_PHASE:         /* Hibernated's store stamp reads the backup Secret */
        return s->phase == HIBPLAN_HIBERNATED && etcdspec_annotation(r->etcd, HIB_ANN_CHECKED) &&
                       kjson_get(r->etcd, "spec.backup.store.secretRef")
                   ? 2
                   : 1;
    default:
        return 1;
    }
}

/*
 * The cut time, a scale, a step towards a scale-down, and the end of a wake-up: decided on the
 * Service, the StatefulSet and the tasks read from the API (a cache that has not seen the cut
 * would date a cut that has not happened; one that has not seen the scale to 0 would end a
 * wake-up with the StatefulSet still at 0).
 */
static int needs_proof(const struct hibplan_step *s)
{
    return s->act == HIBPLAN_SET_CUT_AT || s->act == HIBPLAN_SCALE ||
           s->act == HIBPLAN_REMOVE_PHASE || s->act == HIBPLAN_VOID_CUT ||
           s->act == HIBPLAN_VERIFY || s->act == HIBPLAN_REMOVE_BREAK_GLASS ||
           s->act == HIBPLAN_RESTAMP ||
           (s->act == HIBPLAN_SET_PHASE &&
            (s->phase == HIBPLAN_SCALING || s->phase == HIBPLAN_HIBERNATED));
}

/*
 * Read what is missing and decide; warnings about the input go out as
 * events. *gone: the Etcd no longer exists.
 */
static enum kerr read_decide(const struct hib_env *env, struct round *r, struct hibplan_step *s,
                             int *told, int *gone, struct kerr_info *err)
{
    enum kerr rc;

    if ((rc = hib_read_view(env, r, gone, err)) != KERR_OK || *gone)
        return rc;
    if (r->v.imm < 0 && !(*told)++ && r->v.phase != HIBPLAN_NONE) {
        struct kerr_info e = { 0 };
        env->bucket(r->etcd, &e);
        ev_log_emitf(env->events, r->etcd, EV_WARNING, "InvalidImmutability", "Hibernation",
                     "immutability task left as it is: %s", e.msg);
    }
    *s = hibplan_decide(&r->v, &env->plan);
    log_msg(LOG_DEBUG, "hibernation step", "namespace", r->ns, "name", r->name, "phase",
            hibplan_phase_name(r->v.phase), "action", hibplan_act_name(s->act), (char *)NULL);
    if (s->act == HIBPLAN_BAD) {
        char note[512];
        ev_log_emitf(env->events, r->etcd, EV_WARNING, s->reason, "Hibernation", "hibernation: %s",
                     hibplan_note(s, r->name, note, sizeof(note)));
    }
    return KERR_OK;
}

enum kerr hib_step(const struct hib_env *env, const cJSON *etcd, long *requeue_ms,
                   struct kerr_info *err)
{
    struct round r = { 0 };
    struct hibplan_step s = { .act = HIBPLAN_WAIT, .wait_ms = CONFLICT_WAIT };
    enum kerr rc = KERR_OK;
    int told = 0, acts = 0, conflicts = 0, gone = 0;
    unsigned long base;
    int used,
        max = env->max_steps > 0 && env->max_steps < HIB_MAX_STEPS ? env->max_steps : HIB_MAX_STEPS;

    *requeue_ms = 0;
    kerr_clear(err);
    r.ns = kjson_get_str(etcd, "metadata.namespace");
    r.name = kjson_get_str(etcd, "metadata.name");
    if (!r.ns || !r.name || strlen(r.name) > ETCDSPEC_NAME_MAX)
        return kerr_set(err, KERR_INVAL, "Etcd without namespace or name");
    if (!hib_wanted(etcd) && !hib_spec_zero(etcd) && !etcdspec_annotation(etcd, HIB_ANN_PHASE) &&
        !etcdspec_annotation(etcd, HIB_ANN_CUT_AT))
        return KERR_OK; /* never hibernated: nothing to read */
    r.budget = env->max_requests < 0                                           ? 0
               : env->max_requests > 0 && env->max_requests < HIB_MAX_REQUESTS ? env->max_requests
                                                                               : HIB_MAX_REQUESTS;
    if (r.budget == 0) { /* spent by the reconcile's other steps: the next one goes on */
        *requeue_ms = 1;
        return KERR_OK;
    }
    if (!(r.etcd = cJSON_Duplicate(etcd, 1)))
        return kerr_set(err, KERR_NOMEM, "out of memory");
    for (;;) {
        rc = read_decide(env, &r, &s, &told, &gone, err);
        if (rc != KERR_OK || gone)
            break;
        if (s.act == HIBPLAN_DONE || s.act == HIBPLAN_WAIT || s.act == HIBPLAN_BAD)
            break;
        if (needs_proof(&s) && hib_stale(&r) > 0) {
            if (r.used + hib_stale(&r) + cost(&r, &s) > r.budget)
                goto later;
            if ((rc = hib_read_fresh(env, &r, err)) != KERR_OK)
                break;
            continue; /* decide again on what the API says */
        }
        if (r.used + cost(&r, &s) > r.budget)
            goto later;
        used = r.used;
        base = k8s_thread_requests();
        rc = perform(env, &r, &s, err);
        /* what the action made, whoever made it (the sidecar check reads pods and Secrets) */
        if (used + (int)(k8s_thread_requests() - base) > r.used)
            r.used = used + (int)(k8s_thread_requests() - base);
        s.act = HIBPLAN_WAIT;
        s.wait_ms = CONFLICT_WAIT;
        if (rc == KERR_OK && r.defer_ms > 0) { /* the action waits (the API server's clock) */
            s.wait_ms = r.defer_ms;
            break;
        }
        if (rc == KERR_CONFLICT) { /* someone wrote first: read that object again, a few times */
            rc = KERR_OK;
            if (++conflicts >= HIB_MAX_CONFLICTS) {
                s.wait_ms = CONFLICT_BACKOFF;
                break;
            }
        }
        if (rc != KERR_OK || ++acts >= max)
            break;
    }
    if (rc == KERR_OK && (s.act == HIBPLAN_WAIT || s.act == HIBPLAN_BAD))
        *requeue_ms = s.wait_ms;
    else if (rc != KERR_OK && r.v.phase != HIBPLAN_NONE)
        *requeue_ms = ERROR_RETRY; /* underway: the queue's backoff grows past it */
    hib_round_release(&r);
    return rc;
later: /* the budget of this call is spent; everything done so far is in the API */
    *requeue_ms = 1;
    hib_round_release(&r);
    return KERR_OK;
}
