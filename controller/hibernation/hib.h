/*
 * hib - the hibernation flow of an Etcd (issue 7; DEP-06 and etcd-druid
 * #922): the I/O around the decision table of controller/hibplan.h.
 *
 * An Etcd with neither signal (the hibernate annotation, spec.replicas: 0) and
 * without a phase costs no request; spec.replicas: 0 without a phase costs one
 * read of the StatefulSet (above 0: hibernation starts). Otherwise one call
 * of hib_step reads the state once: the Etcd it is given (the dispatch's
 * fresh GET), its client Service <etcd>-client, its StatefulSet <etcd>, the
 * EtcdOpsTasks of this Etcd (ours are labelled
 * etcd-warden.io/final-snapshot-of=<etcd>; the others, etcd-druid's pre-sync
 * tasks among them, decide whether ours may be created and may count as this
 * cycle's snapshot) and the ExtendFullSnapshotImmutabilityTask
 * <etcd>-extend-immutability, from the controller's caches when env has
 * them (an object the cache lacks is read from the API), else from the API.
 * It asks hibplan_decide for the next action, performs it, keeps the answer
 * of the write as the new state, and repeats until the decision is to wait
 * or nothing is left. A scale, a step towards a scale-down (the phases
 * ScalingDown and Hibernated) and the end of a wake-up (the phase removed)
 * are decided on the StatefulSet and the tasks read again from the API in
 * that call: a cache never proves a snapshot, nor that the pods are back.
 * A write that conflicts reads its object again from the API. At most
 * HIB_MAX_STEPS actions and env->max_requests API requests per call (the rest
 * follows on an immediate requeue: every step's progress is in the API), and
 * after HIB_MAX_CONFLICTS conflicts it requeues instead of reading again.
 *
 * Writes:
 *   - Etcd annotations (etcd-warden.io/hibernation-phase, the suspend
 *     annotation with etcd-warden.io/suspend-added beside it, the cut time
 *     etcd-warden.io/traffic-cut-at) by a merge patch carrying
 *     metadata.resourceVersion, so a concurrent change is a 409 that makes
 *     the round read again. The suspension is lifted only where
 *     suspend-added says the controller set it: an operator's stays.
 *   - The Service by a PUT of the object read (resourceVersion precondition):
 *     the client and server ports are removed and, in the same update, the
 *     removed port objects are remembered exactly in the annotation
 *     etcd-warden.io/removed-ports (a JSON array in the order they had).
 *     Wake-up puts them back in front of the ports left (etcd-druid's order
 *     is client, server, backuprestore), skipping a name present again, and
 *     removes the annotation in the same update.
 *   - Final snapshot tasks "<etcd>-final-snapshot-<n>" (n = attempt),
 *     onDemandSnapshot {type: full, isFinal: true}, owned by the Etcd
 *     (controller reference), so a deleted Etcd leaves none behind.
 * One clock, the API server's: the cut time written is the
 * creationTimestamp the server stamps on a dry-run create of such a task
 * (generateName, nothing stored), and before creating a task the same
 * dry-run tells whether the server's clock is past the second of the cut
 * (a task of that second would not count, common/hibguard.h): if not, the
 * call ends with a requeue for the next second.
 *   - The StatefulSet through its scale subresource (merge patch).
 *   - The immutability task through env->imt_ensure / env->imt_delete.
 *   - The condition of a failing final snapshot, HIB_ANN_CONDITION on the
 *     Etcd: a JSON object {type: FinalSnapshotFailing, status: "True",
 *     reason: the task's last error code (ERR_EXECUTE_HTTP_REQUEST for an
 *     unreachable sidecar), message: the sidecar's reason and what to do,
 *     task, attempt, lastTransitionTime}, written when an attempt has first
 *     failed (the task Failed, or a sidecar call of a live task failed) and
 *     removed when the flow moves on.
 *   - The cut's record: HIB_ANN_CUT_AT on the client Service too (written
 *     before the Etcd's, removed with every cut or restore of the ports); a
 *     cut time on the Etcd that differs from it is voided.
 *   - Before the scale-down, the sidecar's /snapshot/latest and
 *     /snapshot/full?final=true (hib_verify.c): etcd's revision against the
 *     store's.
 * Events (Etcd as regarding object): Normal HibernationPhase on each phase
 * written, Normal Hibernated and WokeUp, Warning FinalSnapshotFailing with
 * the condition, Warning FinalSnapshotFailed per failed attempt and on
 * phase Failed, Warning ScaleDownWithoutSnapshot once the break-glass
 * annotation let a scale to 0 through with no snapshot since the cut,
 * Warning ScaleDownSnapshotUnverified when it lets ScalingDown begin on a
 * snapshot after the cut that the revision check did not confirm (Hibernated
 * says "final full snapshot taken" only after the check), Warning
 * ScaleDownRefused (the answer
 * quoted) when the scale to 0 was refused, Warning on bad input
 * (ClientServiceMissing, ClientServicePorts, StatefulSetMissing,
 * InvalidImmutability), and nothing is deleted or scaled on bad input;
 * Warning AwakeAgain, TrafficCutVoided, FinalSnapshotBehind,
 * SuspensionReasserted, Normal BreakGlassUsed.
 *
 * Ownership: env and everything in it BORROWED. Thread safety: hib_step may
 * run for different Etcds on several threads at once; for one Etcd the
 * work queue serialises the calls.
 */
#ifndef CONTROLLER_HIB_H
#define CONTROLLER_HIB_H

#include <stdatomic.h>

#include <cJSON.h>

#include "common/hibguard.h"
#include "common/kerr.h"
#include "controller/core/etcdspec.h"
#include "controller/hibernation/hibplan.h"

struct ctl;         /* controller/ctl.h */
struct ctl_result;  /* controller/ctl.h */
struct k8s_client;  /* common/k8s.h */
struct ev_recorder; /* common/events.h */

#define HIB_ANN_HIBERNATE     "etcd-warden.io/hibernate"
#define HIB_ANN_PHASE         "etcd-warden.io/hibernation-phase"
#define HIB_ANN_CONDITION     "etcd-warden.io/hibernation-condition"
#define HIB_ANN_REMOVED_PORTS "etcd-warden.io/removed-ports"
#define HIB_ANN_SUSPEND       "druid.gardener.cloud/suspend-etcd-spec-reconcile"
#define HIB_ANN_SUSPEND_ADDED ETCDSPEC_ANN_SUSPEND_ADDED
#define HIB_ANN_CUT_AT        HIBGUARD_ANN_CUT_AT
#define HIB_ANN_BREAK_GLASS   HIBGUARD_ANN_BREAK_GLASS
#define HIB_ANN_CHECKED       HIBGUARD_ANN_CHECKED
#define HIB_ANN_STORE         HIBGUARD_ANN_STORE
#define HIB_LABEL_TASK_OF     "etcd-warden.io/final-snapshot-of"
#define HIB_MAX_STEPS         24
/*
 * API requests one hib_step call may make: with the dispatch's GET of the Etcd, a reconcile
 * of a hibernation makes at most 8.
 */
#define HIB_MAX_REQUESTS  7
#define HIB_MAX_CONFLICTS 3 /* conflicts per call before a requeue */

/* The objects hib_step may read from a cache. */
enum hib_cached { HIB_CACHED_SERVICE, HIB_CACHED_STATEFULSET, HIB_CACHED_IMMTASK };

/* Creates / deletes the immutability task of etcd (BORROWED); idempotent. */
typedef enum kerr (*hib_imt_fn)(void *arg, const cJSON *etcd, struct kerr_info *err);
/* 1: bucket retention, 0: none, < 0: the Etcd's immutability block is malformed. */
typedef int (*hib_bucket_fn)(const cJSON *etcd, struct kerr_info *err);

/* A copy (OWNED by the caller) of the cached object what ns/name, NULL when not cached. */
typedef cJSON *(*hib_cached_fn)(void *arg, enum hib_cached what, const char *ns, const char *name);
/* A cJSON array (OWNED) of copies of the cached EtcdOpsTasks of Etcd ns/etcd; NULL: none. */
typedef cJSON *(*hib_cached_tasks_fn)(void *arg, const char *ns, const char *etcd);

/*
 * What hib_step needs. All BORROWED; the function pointers are required but for the caches
 * (cached and cached_tasks both NULL: everything is read from the API).
 */
struct hib_env {
    struct k8s_client *client;
    struct ev_recorder *events; /* NULL: no events */
    struct hibplan_opts plan;   /* retries (--snapshot-retries), backoff, poll */
    hib_bucket_fn bucket;
    hib_imt_fn imt_ensure;
    hib_imt_fn imt_delete;
    void *imt_arg;
    hib_cached_fn cached;
    hib_cached_tasks_fn cached_tasks;
    void *cache_arg;
    int max_steps;    /* actions per call; 0: HIB_MAX_STEPS (1: stop after each, as a crash) */
    int max_requests; /* API requests per call, at most HIB_MAX_REQUESTS; 0: that; < 0: none
                         (a call that would read or write asks to be called again at once) */
    const atomic_int *cancel; /* BORROWED, optional: set when the controller stops; the
                                 revision check's sidecar calls and waits end then */
};

/*
 * Run the flow for etcd (BORROWED, freshly read from the API) until it has
 * to wait. *requeue_ms > 0 asks to be called again after that long (0:
 * nothing pending). An error is returned with its message when an API call
 * failed: with *requeue_ms 0 (no hibernation underway) the caller requeues
 * rate-limited; a hibernation or wake-up underway sets *requeue_ms to its own
 * retry (1 s), which the controller keeps however many calls failed before
 * (ctl_result.own_retry). A 409 only repeats the round.
 */
enum kerr hib_step(const struct hib_env *env, const cJSON *etcd, long *requeue_ms,
                   struct kerr_info *err);

/*
 * The step of the controller (controller/ctl.h): hib_step with the
 * controller's client, recorder, --snapshot-retries and controller/imt.h's
 * task helpers.
 */
enum kerr hib_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err);

/* ---- pure helpers (exposed for the tests; in controller/hib_ports.c) ---- */

/*
 * The Service svc (BORROWED) with the client and server ports removed and
 * remembered: on KERR_OK *out OWNS the copy to write. KERR_INVAL when there
 * is nothing to cut and nothing remembered, or no backuprestore port.
 */
enum kerr hib_ports_cut(const cJSON *svc, cJSON **out, struct kerr_info *err);

/*
 * The Service svc (BORROWED) with the remembered ports put back and the
 * annotation removed: on KERR_OK *out OWNS the copy. KERR_PARSE when the
 * annotation is not a JSON array of port objects.
 */
enum kerr hib_ports_restore(const cJSON *svc, cJSON **out, struct kerr_info *err);

/* The state of svc (BORROWED; NULL = missing) for the decision; *remembered set. */
enum hibplan_svc hib_svc_state(const cJSON *svc, int *remembered);

#endif
