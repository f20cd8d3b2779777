/*
 * hib_note - what the hibernation flow tells (see hib.h): the events that go
 * with a phase, the condition of a failing final snapshot, and the voiding of
 * a cut that no longer holds, each with the words that say what happened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/events.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/core/etcdspec.h"
#include "controller/hibernation/hib_int.h"

/*
 * The condition of the failing final snapshot (HIB_ANN_CONDITION) from the latest task of
 * ours, written on the Etcd with a Warning event that carries the sidecar's reason.
 */
enum kerr hib_note_failing(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    const cJSON *errs = kjson_get_arr(r->latest, "status.lastErrors");
    const cJSON *last = cJSON_GetArrayItem(errs, cJSON_GetArraySize(errs) - 1);
    const char *task = kjson_get_str(r->latest, "metadata.name");
    const char *code = kjson_get_str(last, "code"), *why = kjson_get_str(last, "description");
    int failed = r->v.task == HIBPLAN_TASK_FAILED;
    char now[KTIME_LEN + 1], msg[1024];
    cJSON *cond = cJSON_CreateObject();
    char *text = NULL;
    enum kerr rc;

    if (!why)
        why = kjson_get_str(r->latest, "status.lastOperation.description");
    if (!code)
        code = failed ? "SnapshotFailed" : "SidecarCallFailed";
    snprintf(msg, sizeof(msg),
             "final snapshot attempt %d (EtcdOpsTask %s) %s: %s; hibernation waits and retries "
             "(%s). If the backups of this Etcd are broken, scale down without a snapshot: "
             "kubectl annotate etcd -n %s %s %s=\"<RFC 3339 expiry, at most 24h ahead> <reason>\"",
             r->v.attempt, task ? task : "?",
             failed ? "failed" : "could not reach the backup sidecar", why ? why : "no detail",
             failed ? "a new attempt follows"
                    : "the sidecar is called again until the task's timeout",
             r->ns, r->name, HIB_ANN_BREAK_GLASS);
    if (ktime_format(time(NULL), now) != KERR_OK)
        now[0] = '\0';
    if (!cond || !cJSON_AddStringToObject(cond, "type", "FinalSnapshotFailing") ||
        !cJSON_AddStringToObject(cond, "status", "True") ||
        !cJSON_AddStringToObject(cond, "reason", code) ||
        !cJSON_AddStringToObject(cond, "message", msg) ||
        !cJSON_AddStringToObject(cond, "task", task ? task : "") ||
        !cJSON_AddNumberToObject(cond, "attempt", r->v.attempt) ||
        !cJSON_AddStringToObject(cond, "lastTransitionTime", now) ||
        !(text = cJSON_PrintUnformatted(cond))) {
        cJSON_Delete(cond);
        return kerr_set(err, KERR_NOMEM, "out of memory");
    }
    cJSON_Delete(cond);
    rc = hib_patch_one(env, r, HIB_ANN_CONDITION, text, err);
    free(text);
    if (rc == KERR_OK)
        ev_log_emitf(env->events, r->etcd, EV_WARNING, "FinalSnapshotFailing", "Hibernation", "%s",
                     msg);
    return rc;
}

/*
 * What the Hibernated event says of the final snapshot. "final full snapshot taken" only when
 * the sidecar confirmed it holds etcd's last revision (ScalingDown stamped the StatefulSet it
 * was checked against, kept while Hibernated): a snapshot after the cut that nobody checked
 * (break glass, or a StatefulSet someone else had scaled to 0) is said to be unchecked.
 */
static const char *hibernated_snapshot(const struct hib_env *env, const struct round *r)
{
    if (!r->v.store)
        return "no backup store (no snapshot)";
    if (!r->v.counted)
        return r->v.attempt ? "without a final snapshot (break glass after a failed attempt)"
                            : "without a final snapshot (the StatefulSet was at 0)";
    if (!env->plan.verify)
        return "a full snapshot taken after the cut, not checked against etcd's last revision "
               "(the revision check is off)";
    if (!etcdspec_annotation(r->etcd, HIB_ANN_CHECKED))
        return "a full snapshot taken after the cut, not checked against etcd's last revision "
               "(break glass, or the StatefulSet was already at 0): writes after it may be "
               "missing from the store";
    return "final full snapshot taken, checked to hold etcd's last revision";
}

/* Events that go with a phase about to be written. */
void hib_phase_event(const struct hib_env *env, struct round *r, enum hibplan_phase p)
{
    const char *desc =
        r->latest ? kjson_get_str(r->latest, "status.lastOperation.description") : NULL;
    const char *glass = etcdspec_annotation(r->etcd, HIB_ANN_BREAK_GLASS);

    if (p == HIBPLAN_HIBERNATED)
        ev_log_emitf(env->events, r->etcd, EV_NORMAL, "Hibernated", "Hibernation",
                     "hibernated: traffic cut, %s, scaled to 0", hibernated_snapshot(env, r));
    /* a snapshot after the cut was counted, the check that it holds the last write was not
     * passed: break glass lets the scale-down go on (no snapshot at all: hib_scale_event) */
    else if (p == HIBPLAN_SCALING && r->v.store && r->v.counted && !r->verified &&
             env->plan.verify && r->v.break_glass)
        ev_log_emitf(env->events, r->etcd, EV_WARNING, "ScaleDownSnapshotUnverified", "Hibernation",
                     "scaling down on %s (%s) with a full snapshot taken after the traffic cut "
                     "that was not confirmed to hold etcd's last revision: writes after it may "
                     "be missing from the store",
                     HIB_ANN_BREAK_GLASS, glass ? glass : "");
    else if (p == HIBPLAN_FAILED)
        ev_log_emitf(env->events, r->etcd, EV_WARNING, "FinalSnapshotFailed", "Hibernation",
                     "phase Failed: %d final snapshot attempts failed (last: %s); still retrying, "
                     "not scaling down",
                     r->v.attempt, desc ? desc : "no detail");
    else
        ev_log_emitf(env->events, r->etcd, EV_NORMAL, "HibernationPhase", "Hibernation",
                     "hibernation phase %s", hibplan_phase_name(p));
}

/*
 * Whether err is the API server's refusal of a write (nothing written): a 4xx other than a
 * conflict, a missing object or throttling, or an admission webhook's denial with any code.
 */
static int refusal(const struct kerr_info *err)
{
    int s = err->http_status;

    return (s >= 400 && s < 500 && s != 404 && s != 409 && s != 429) ||
           (s >= 400 && strstr(err->msg, "denied the request") != NULL);
}

void hib_scale_event(const struct hib_env *env, struct round *r, int replicas, enum kerr rc,
                     const struct kerr_info *err)
{
    if (replicas != 0)
        return;
    if (rc == KERR_OK && r->v.store && !r->v.counted)
        ev_log_emitf(env->events, r->etcd, EV_WARNING, "ScaleDownWithoutSnapshot", "Hibernation",
                     "scaled to 0 without a final snapshot (%d attempt%s failed): %s is set "
                     "(%s); it is removed after this scale-down",
                     r->v.attempt, r->v.attempt == 1 ? "" : "s", HIB_ANN_BREAK_GLASS,
                     etcdspec_annotation(r->etcd, HIB_ANN_BREAK_GLASS));
    else if (rc != KERR_OK && err && refusal(err))
        ev_log_emitf(env->events, r->etcd, EV_WARNING, "ScaleDownRefused", "Hibernation",
                     "the scale of StatefulSet %s to 0 %s was refused, it did not move (HTTP %d: "
                     "%s); retrying",
                     r->name,
                     !r->v.store     ? "(no backup store)"
                     : !r->v.counted ? "without a final snapshot, on " HIB_ANN_BREAK_GLASS ","
                     : r->verified   ? "after the final full snapshot"
                                     : "on a full snapshot not checked against etcd's revision,",
                     err->http_status, err->msg[0] ? err->msg : kerr_str(rc));
}

/* metadata.generation of r's StatefulSet, 0 when unknown. */
static long long sts_generation(const struct round *r)
{
    int64_t g = 0;

    return kjson_get_int64(r->sts, "metadata.generation", &g) == KERR_OK ? (long long)g : 0;
}

/*
 * The cut no longer holds: scaled up while Hibernated (the Etcd is awake again: phase WakingUp
 * in the same write), the ports open again, or a time that is not the controller's record.
 */
enum kerr hib_void_cut(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    const char *old = etcdspec_annotation(r->etcd, HIB_ANN_CUT_AT);
    const char *rec = etcdspec_annotation(r->svc, HIB_ANN_CUT_AT);
    /* scaled up while asleep, or after the final snapshot was checked (ScalingDown) */
    int checked = r->v.phase == HIBPLAN_SCALING && r->v.sts_present && r->v.sts_spec > 0 &&
                  r->v.svc != HIBPLAN_SVC_OPEN && !r->v.cut_forged;
    int awake = r->v.phase == HIBPLAN_HIBERNATED || checked;
    const char *kv[] = {
        HIB_ANN_CUT_AT, NULL, HIB_ANN_CHECKED, NULL,
        HIB_ANN_STORE,  NULL, HIB_ANN_PHASE,   hibplan_phase_name(HIBPLAN_WAKING)
    };
    char was[64], msg[768];
    enum kerr rc;

    snprintf(was, sizeof(was), "%s", old ? old : "none");
    if (checked)
        snprintf(msg, sizeof(msg),
                 "StatefulSet at %d replicas is not the one the final snapshot was checked "
                 "against (%s=%s): scaled up or changed since, etcd may have moved on; the Etcd "
                 "is awake again, its traffic cut (%s) no longer holds, a new hibernation cuts "
                 "and snapshots again",
                 r->v.sts_spec, HIB_ANN_CHECKED,
                 etcdspec_annotation(r->etcd, HIB_ANN_CHECKED)
                     ? etcdspec_annotation(r->etcd, HIB_ANN_CHECKED)
                     : "none",
                 was);
    else if (awake && r->v.sts_spec == 0)
        snprintf(msg, sizeof(msg),
                 "StatefulSet is not asleep as the final snapshot's stamp says (%s=%s, now "
                 "generation %lld, %d pods in its status): two or more changes past it while "
                 "hibernated, unseen (warden-controller was away), may be a scale-up and down, "
                 "or it was re-created or ran pods; the Etcd may have been awake, its traffic "
                 "cut (%s) and final snapshot no longer hold; a new hibernation cuts and "
                 "snapshots again",
                 HIB_ANN_CHECKED,
                 etcdspec_annotation(r->etcd, HIB_ANN_CHECKED)
                     ? etcdspec_annotation(r->etcd, HIB_ANN_CHECKED)
                     : "none",
                 sts_generation(r), r->v.sts_status, was);
    else if (awake)
        snprintf(msg, sizeof(msg),
                 "StatefulSet scaled to %d while hibernated: the Etcd is awake again, its "
                 "traffic cut (%s) and final snapshot no longer hold; a new hibernation cuts "
                 "and snapshots again",
                 r->v.sts_spec, was);
    else if (r->v.phase == HIBPLAN_NONE)
        snprintf(msg, sizeof(msg),
                 "%s=%s on an Etcd that is not hibernating is no cut of warden-controller's: "
                 "removed",
                 HIB_ANN_CUT_AT, was);
    else if (r->v.svc == HIBPLAN_SVC_OPEN)
        snprintf(msg, sizeof(msg),
                 "the client Service's ports are open again: the traffic cut of %s no longer "
                 "holds; they are cut again and a new time written, only a snapshot requested "
                 "after it counts",
                 was);
    else
        snprintf(msg, sizeof(msg),
                 "%s=%s on the Etcd is not the cut warden-controller recorded (%s): removed, a "
                 "new cut time is written",
                 HIB_ANN_CUT_AT, was, rec ? rec : "none");
    rc = hib_patch_etcd(env, r, awake ? 4 : 3, kv, err);
    if (rc == KERR_OK)
        ev_log_emitf(env->events, r->etcd, EV_WARNING, awake ? "AwakeAgain" : "TrafficCutVoided",
                     "Hibernation", "%s", msg);
    return rc;
}

enum kerr hib_restamp(const struct hib_env *env, struct round *r, struct kerr_info *err)
{
    char was[HIBGUARD_CHECKED_MAX], now[HIBGUARD_CHECKED_MAX];
    const char *old = etcdspec_annotation(r->etcd, HIB_ANN_CHECKED);
    enum kerr rc;

    snprintf(was, sizeof(was), "%s", old ? old : "");
    if ((rc = hibguard_checked_format(r->sts, now, sizeof(now), err)) != KERR_OK)
        return rc;
    rc = hib_patch_one(env, r, HIB_ANN_CHECKED, now, err);
    if (rc == KERR_OK && r->v.phase == HIBPLAN_HIBERNATED)
        ev_log_emitf(env->events, r->etcd, EV_NORMAL, "SleepKept", "Hibernation",
                     "StatefulSet changed while hibernated (%s=%s, now generation %lld) at 0 "
                     "replicas, never above since the final snapshot was checked: still "
                     "hibernated, the final snapshot holds; the stamp moves to %s",
                     HIB_ANN_CHECKED, was, sts_generation(r), now);
    return rc;
}
