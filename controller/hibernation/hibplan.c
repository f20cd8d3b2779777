/*
 * hibplan - the pure decision table of hibernation (see hibplan.h).
 *
 * Each phase has one function that returns the first thing not yet true,
 * in the order of the flow; the I/O layer performs it and asks again.
 *
 * What the flow relies on of etcd-druid v0.38 (gardener/etcd-druid 5b90b4a7):
 *   - internal/controller/etcd/reconcile_spec.go:147-152 shouldReconcileSpec:
 *     with the suspend annotation no spec reconcile runs, so neither PreSync
 *     nor the StatefulSet sync: suspending first keeps etcd-druid from
 *     scaling down (or back up) under the flow; reconciler.go:130-141: the
 *     operation annotation is removed and observedGeneration written only
 *     after a spec reconcile, which is why the spec path lifts the
 *     suspension once the StatefulSet is at 0 (Gardener waits for both).
 *   - internal/component/statefulset/statefulset.go:91-107 PreSync: the
 *     pre-sync snapshot only while the StatefulSet is above 0, so etcd-druid
 *     released at 0 takes no second snapshot and just syncs replicas 0;
 *     136-173 ensurePreSyncSnapshot / 200-223 createPreSyncTask: a full
 *     snapshot task with spec.etcdName and no isFinal, its Succeeded state
 *     read back: it may serve as this cycle's snapshot when created at or
 *     after the cut (common/hibguard.h, the webhook's rule too).
 *   - internal/controller/etcdopstask/reconcile_task.go:110-117 admitTask:
 *     a task is Rejected while another task of the same etcdName is not
 *     completed, so a task of ours is created only when no other task of
 *     the Etcd is unfinished (other_live), and never beside etcd-druid's.
 */
#include "controller/hibernation/hibplan.h"

#include <stddef.h>
#include <string.h>

#define DEF_BACKOFF_MS 5000L
#define DEF_MAX_MS     60000L
#define DEF_POLL_MS    5000L
#define BAD_WAIT_MS    30000L
#define SHORT_WAIT_MS  1000L

static const char *const PHASE_NAMES[HIBPLAN_PHASE_COUNT] = {
    [HIBPLAN_NONE] = "",
    [HIBPLAN_CUTTING] = "CuttingTraffic",
    [HIBPLAN_SNAPSHOT] = "FinalSnapshot",
    [HIBPLAN_SCALING] = "ScalingDown",
    [HIBPLAN_HIBERNATED] = "Hibernated",
    [HIBPLAN_WAKING] = "WakingUp",
    [HIBPLAN_FAILED] = "Failed",
    [HIBPLAN_UNKNOWN] = "?",
};

static const char *const ACT_NAMES[HIBPLAN_ACT_COUNT] = {
    [HIBPLAN_DONE] = "Done",
    [HIBPLAN_WAIT] = "Wait",
    [HIBPLAN_BAD] = "BadInput",
    [HIBPLAN_SET_PHASE] = "SetPhase",
    [HIBPLAN_SET_SUSPEND] = "SetSuspend",
    [HIBPLAN_CUT_PORTS] = "CutPorts",
    [HIBPLAN_SET_CUT_AT] = "SetCutAt",
    [HIBPLAN_DELETE_TASKS] = "DeleteTasks",
    [HIBPLAN_CREATE_TASK] = "CreateTask",
    [HIBPLAN_SCALE] = "Scale",
    [HIBPLAN_IMT_ENSURE] = "ImmutabilityTaskEnsure",
    [HIBPLAN_IMT_DELETE] = "ImmutabilityTaskDelete",
    [HIBPLAN_RESTORE_PORTS] = "RestorePorts",
    [HIBPLAN_REMOVE_SUSPEND] = "RemoveSuspend",
    [HIBPLAN_REMOVE_CUT_AT] = "RemoveCutAt",
    [HIBPLAN_REMOVE_PHASE] = "RemovePhase",
    [HIBPLAN_NOTE_FAILING] = "NoteFailing",
    [HIBPLAN_CLEAR_FAILING] = "ClearFailing",
    [HIBPLAN_VOID_CUT] = "VoidCut",
    [HIBPLAN_VERIFY] = "VerifyRevision",
    [HIBPLAN_REMOVE_BREAK_GLASS] = "RemoveBreakGlass",
    [HIBPLAN_RESTAMP] = "MoveCheckedStamp",
};

enum hibplan_phase hibplan_phase_parse(const char *s)
{
    if (!s)
        return HIBPLAN_NONE;
    for (int p = HIBPLAN_CUTTING; p < HIBPLAN_UNKNOWN; p++)
        if (strcmp(s, PHASE_NAMES[p]) == 0)
            return (enum hibplan_phase)p;
    return HIBPLAN_UNKNOWN;
}

const char *hibplan_phase_name(enum hibplan_phase p)
{
    return (p >= 0 && p < HIBPLAN_PHASE_COUNT) ? PHASE_NAMES[p] : "?";
}

const char *hibplan_act_name(enum hibplan_act a)
{
    return (a >= 0 && a < HIBPLAN_ACT_COUNT) ? ACT_NAMES[a] : "?";
}

long hibplan_backoff_ms(const struct hibplan_opts *opts, int attempt)
{
    long base = opts && opts->backoff_ms > 0 ? opts->backoff_ms : DEF_BACKOFF_MS;
    long max = opts && opts->backoff_max_ms > 0 ? opts->backoff_max_ms : DEF_MAX_MS;
    long d = base;

    for (int i = 1; i < attempt && d < max; i++)
        d *= 2;
    return d < max ? d : max;
}

static long poll_ms(const struct hibplan_opts *o)
{
    return o && o->poll_ms > 0 ? o->poll_ms : DEF_POLL_MS;
}

static struct hibplan_step act(enum hibplan_act a)
{
    struct hibplan_step s = { .act = a };
    return s;
}

static struct hibplan_step set_phase(enum hibplan_phase p)
{
    struct hibplan_step s = { .act = HIBPLAN_SET_PHASE, .phase = p };
    return s;
}

static struct hibplan_step wait_for(long ms)
{
    struct hibplan_step s = { .act = HIBPLAN_WAIT, .wait_ms = ms };
    return s;
}

static struct hibplan_step bad(const char *reason, const char *note)
{
    struct hibplan_step s = {
        .act = HIBPLAN_BAD, .wait_ms = BAD_WAIT_MS, .reason = reason, .note = note
    };
    return s;
}

static struct hibplan_step service_bad(const struct hibplan_view *v)
{
    if (v->svc == HIBPLAN_SVC_MISSING)
        return bad("ClientServiceMissing",
                   "the client Service <etcd>-client does not exist; nothing changed. etcd-druid "
                   "creates it for the Etcd: check that etcd-druid runs and reconciles <etcd> "
                   "(kubectl get service <etcd>-client); hibernation goes on once it exists");
    return bad("ClientServicePorts",
               "the client Service has neither client nor server port (and no remembered "
               "ports), lacks the backuprestore port, or its removed-ports annotation is "
               "malformed; nothing changed");
}

/* CuttingTraffic: suspend, cut, clean earlier tasks, next phase. */
static struct hibplan_step decide_cutting(const struct hibplan_view *v)
{
    if (!v->suspended)
        return act(HIBPLAN_SET_SUSPEND);
    if (v->svc == HIBPLAN_SVC_MISSING || v->svc == HIBPLAN_SVC_BAD)
        return service_bad(v);
    if (v->svc == HIBPLAN_SVC_OPEN)
        return act(HIBPLAN_CUT_PORTS);
    if (!v->cut_at)
        return act(HIBPLAN_SET_CUT_AT);
    if (v->cut_forged) /* not the cut the controller recorded: a new one */
        return act(HIBPLAN_VOID_CUT);
    if (v->ntasks > 0)
        return act(HIBPLAN_DELETE_TASKS);
    if (v->ndeleting > 0)
        return wait_for(SHORT_WAIT_MS);
    if (v->failing_noted) /* left by an earlier cycle */
        return act(HIBPLAN_CLEAR_FAILING);
    return set_phase(v->store ? HIBPLAN_SNAPSHOT : HIBPLAN_SCALING);
}

/* The latest attempt has failed: Failed, or live with a failed sidecar call recorded. */
static bool attempt_failed(const struct hibplan_view *v)
{
    return v->task == HIBPLAN_TASK_FAILED || (v->task == HIBPLAN_TASK_LIVE && v->task_errors);
}

/* The StatefulSet is (going) to 0 already: nothing left to snapshot. */
static bool at_zero(const struct hibplan_view *v)
{
    return v->sts_present && v->sts_spec == 0;
}

static struct hibplan_step create_task(const struct hibplan_view *v, const struct hibplan_opts *o)
{
    struct hibplan_step s = act(HIBPLAN_CREATE_TASK);

    /* etcd-druid's executor rejects a task while another one of the Etcd is unfinished */
    if (v->other_live)
        return wait_for(poll_ms(o));
    s.attempt = v->attempt + 1;
    return s;
}

/* FinalSnapshot and Failed: run attempts until one succeeds (or someone else's counts). */
static struct hibplan_step decide_snapshot(const struct hibplan_view *v,
                                           const struct hibplan_opts *o)
{
    int retries = o && o->retries > 1 ? o->retries : 1;
    long delay;

    if (!v->store || at_zero(v))
        return set_phase(HIBPLAN_SCALING);
    /* this cycle's snapshot exists: it holds the last write only if etcd has not moved on */
    if (v->counted &&
        (!(o && o->verify) || v->verified || (v->break_glass && v->phase == HIBPLAN_FAILED)))
        return set_phase(HIBPLAN_SCALING);
    if (v->counted)
        return act(HIBPLAN_VERIFY);
    if (attempt_failed(v) && !v->failing_noted)
        return act(HIBPLAN_NOTE_FAILING);
    /* break glass as soon as an attempt has failed: no waiting out a dead sidecar's timeouts */
    if (v->break_glass && (attempt_failed(v) || v->phase == HIBPLAN_FAILED))
        return set_phase(HIBPLAN_SCALING);
    switch (v->task) {
    case HIBPLAN_TASK_NONE:
        return create_task(v, o);
    case HIBPLAN_TASK_DELETING:
        return wait_for(SHORT_WAIT_MS);
    case HIBPLAN_TASK_LIVE:
        return wait_for(poll_ms(o));
    case HIBPLAN_TASK_SUCCEEDED: /* but not after the cut: a new attempt */
    case HIBPLAN_TASK_FAILED:
        break;
    }
    if (v->phase == HIBPLAN_SNAPSHOT && v->task == HIBPLAN_TASK_FAILED && v->attempt >= retries)
        return set_phase(HIBPLAN_FAILED);
    delay = v->task == HIBPLAN_TASK_FAILED ? hibplan_backoff_ms(o, v->attempt) : 0;
    if (v->failed_ago_ms < delay)
        return wait_for(delay - v->failed_ago_ms);
    return create_task(v, o);
}

/*
 * ScalingDown: prove the snapshot, scale to 0, wait, immutability, hand the
 * spec path back to etcd-druid, Hibernated.
 */
static struct hibplan_step decide_scaling(const struct hibplan_view *v,
                                          const struct hibplan_opts *o)
{
    bool zero = v->sts_present && v->sts_spec == 0;
    bool on_snapshot = v->store && v->counted && !v->break_glass;

    if (v->store && !v->counted && !zero && !v->break_glass)
        return set_phase(HIBPLAN_SNAPSHOT);
    if (v->failing_noted)
        return act(HIBPLAN_CLEAR_FAILING);
    if (!v->sts_present)
        return bad("StatefulSetMissing",
                   "the StatefulSet <etcd> does not exist; not scaled. etcd-druid creates it for "
                   "the Etcd: check that etcd-druid runs and reconciles <etcd> (kubectl get "
                   "statefulset <etcd>); hibernation goes on once it exists");
    if (v->sts_spec != 0) {
        struct hibplan_step s = act(HIBPLAN_SCALE);

        /* scaled up or changed since the check: the Etcd is awake again, the cut void */
        if (on_snapshot && !v->stamp_ok)
            return act(HIBPLAN_VOID_CUT);
        /* the scale-down follows a check of this call: writes since the last one count */
        if (on_snapshot && o && o->verify && !v->verified)
            return act(HIBPLAN_VERIFY);
        s.replicas = 0;
        return s;
    }
    if (v->sts_status != 0)
        return wait_for(SHORT_WAIT_MS);
    /* the stamp follows the scale to 0 while etcd-druid is still held off: a change of its
     * after that (a template rolled at 0) is then one generation away, not two */
    if (v->stamp_next)
        return act(HIBPLAN_RESTAMP);
    /* break glass allows one scale-down, the one just made (present at a scale-down that did
     * not need it, it still went unused to the next one: removed either way) */
    if (v->break_glass)
        return act(HIBPLAN_REMOVE_BREAK_GLASS);
    if (v->imm > 0 && !v->imm_task)
        return v->imm_deleting ? wait_for(SHORT_WAIT_MS) : act(HIBPLAN_IMT_ENSURE);
    if (v->spec_signal && v->suspend_ours)
        return act(HIBPLAN_REMOVE_SUSPEND);
    return set_phase(HIBPLAN_HIBERNATED);
}

static struct hibplan_step decide_hibernate(const struct hibplan_view *v,
                                            const struct hibplan_opts *o)
{
    /* After CuttingTraffic, what it did must still hold (someone may have undone it). */
    bool held = !(v->spec_signal && v->sts_present && v->sts_spec == 0);

    /* ... until the spec path's StatefulSet is at 0: then etcd-druid takes over again. */
    if ((v->phase == HIBPLAN_SNAPSHOT || v->phase == HIBPLAN_FAILED ||
         v->phase == HIBPLAN_SCALING) &&
        held) {
        if (!v->suspended)
            return act(HIBPLAN_SET_SUSPEND);
        /* ports open again: the old cut time goes before the new cut (a re-cut is a new time) */
        if (v->svc == HIBPLAN_SVC_OPEN)
            return act(v->cut_at ? HIBPLAN_VOID_CUT : HIBPLAN_CUT_PORTS);
        if (!v->cut_at)
            return act(HIBPLAN_SET_CUT_AT);
        if (v->cut_forged)
            return act(HIBPLAN_VOID_CUT);
    }
    switch (v->phase) {
    case HIBPLAN_CUTTING:
        return decide_cutting(v);
    case HIBPLAN_SNAPSHOT:
    case HIBPLAN_FAILED:
        return decide_snapshot(v, o);
    case HIBPLAN_SCALING:
        return decide_scaling(v, o);
    case HIBPLAN_HIBERNATED:
        /* scaled up while asleep (or maybe up and down again: two or more changes past the
         * stamp, pods in its status): the cut belonged to that sleep, the Etcd is awake again */
        if (v->sts_present && (v->sts_spec > 0 || v->stamp_moved))
            return act(HIBPLAN_VOID_CUT);
        /* one change at 0 (etcd-druid rolling the template): asleep still, the stamp follows */
        if (v->sts_present && v->stamp_next)
            return act(HIBPLAN_RESTAMP);
        /* the annotation path keeps etcd-druid suspended: re-assert a suspension removed */
        if (!v->spec_signal && !v->suspended)
            return act(HIBPLAN_SET_SUSPEND);
        /* the signal switched to spec.replicas: 0: etcd-druid reconciles it itself */
        if (v->spec_signal && v->suspend_ours)
            return act(HIBPLAN_REMOVE_SUSPEND);
        if (v->failing_noted)
            return act(HIBPLAN_CLEAR_FAILING);
        if (v->imm > 0 && !v->imm_task)
            return v->imm_deleting ? wait_for(SHORT_WAIT_MS) : act(HIBPLAN_IMT_ENSURE);
        if (v->imm == 0 && v->imm_task)
            return act(HIBPLAN_IMT_DELETE);
        return act(HIBPLAN_DONE);
    default:
        return set_phase(HIBPLAN_CUTTING);
    }
}

static struct hibplan_step decide_wake(const struct hibplan_view *v)
{
    /* a cut time outside any hibernation is nobody's cut (written by someone else) */
    if (v->phase == HIBPLAN_NONE && v->cut_at)
        return act(HIBPLAN_VOID_CUT);
    if (v->phase == HIBPLAN_NONE)
        return act(HIBPLAN_DONE);
    if (v->phase != HIBPLAN_WAKING)
        return set_phase(HIBPLAN_WAKING);
    /*
     * The cut goes first: while it stands, a snapshot of this cycle lets the StatefulSet go
     * to 0 (common/hibguard.h), and once the pods are back and the ports restored, writes
     * flow that such a snapshot does not hold.
     */
    if (v->cut_at)
        return act(HIBPLAN_REMOVE_CUT_AT);
    if (v->failing_noted)
        return act(HIBPLAN_CLEAR_FAILING);
    if (v->imm_task)
        return act(HIBPLAN_IMT_DELETE);
    /* a snapshot still to be taken would be a final one of a live cluster */
    if (v->task == HIBPLAN_TASK_LIVE)
        return act(HIBPLAN_DELETE_TASKS);
    /* without a StatefulSet etcd-druid creates one at spec.replicas once not suspended */
    if (v->sts_present && v->sts_spec == 0 && v->spec_replicas > 0) {
        struct hibplan_step s = act(HIBPLAN_SCALE);

        /* its members would start on claims other than those the sleep left */
        if (v->sts_moved)
            return bad("OrdinalsMoved",
                       "StatefulSet <etcd> has spec.ordinals.start set, which etcd-druid never "
                       "does: scaled up, its members would not be <etcd>-0..n-1 and would start "
                       "on other, empty claims while <template>-<etcd>-0.. hold the data; it is "
                       "not scaled up. Set spec.ordinals.start back to 0 (or remove "
                       "spec.ordinals)");
        s.replicas = v->spec_replicas;
        return s;
    }
    if (v->svc_remembered) {
        if (v->svc == HIBPLAN_SVC_BAD)
            return service_bad(v);
        if (v->svc != HIBPLAN_SVC_MISSING)
            return act(HIBPLAN_RESTORE_PORTS);
    }
    if (v->suspend_ours)
        return act(HIBPLAN_REMOVE_SUSPEND);
    return act(HIBPLAN_REMOVE_PHASE);
}

struct hibplan_step hibplan_decide(const struct hibplan_view *v, const struct hibplan_opts *opts)
{
    if (v->deleting)
        return act(HIBPLAN_DONE);
    return v->want ? decide_hibernate(v, opts) : decide_wake(v);
}

const char *hibplan_note(const struct hibplan_step *s, const char *etcd, char *buf, size_t cap)
{
    static const char mark[] = "<etcd>";
    const char *p = s && s->note ? s->note : "";
    size_t n = 0, m;

    if (!buf || cap == 0)
        return buf;
    while (*p && n + 1 < cap) {
        if (etcd && strncmp(p, mark, sizeof(mark) - 1) == 0) {
            m = strlen(etcd);
            if (m > cap - 1 - n)
                m = cap - 1 - n;
            memcpy(buf + n, etcd, m);
            n += m;
            p += sizeof(mark) - 1;
            continue;
        }
        buf[n++] = *p++;
    }
    buf[n] = '\0';
    return buf;
}
