/*
 * otask - the EtcdOpsTask executor for onDemandSnapshot tasks, with
 * etcd-druid's semantics (shared/reference/etcd-druid.md §3.2):
 *
 *   1. A live task gets the finalizer druid.gardener.cloud/etcd-ops-task,
 *      then state Pending.
 *   2. Admit (lastOperation Admit): another unfinished task of the same
 *      Etcd -> Rejected ERR_DUPLICATE_TASK (of two unfinished tasks the
 *      older one is admitted: creationTimestamp, then name); then the
 *      handler's checks: the Etcd exists (ERR_GET_ETCD), a backup store is
 *      configured (ERR_BACKUP_NOT_ENABLED), condition Ready is True
 *      (ERR_ETCD_NOT_READY); a config that is not onDemandSnapshot, or
 *      isFinal with type delta, -> Rejected ERR_INVALID_CONFIG.
 *   3. InProgress (startedAt set).
 *   4. Execute (lastOperation Execution): the checks again, then POST
 *      /snapshot/full[?final=true] or /snapshot/delta to the sidecar
 *      (controller/hibernation/sidecar.h) of the StatefulSet's own member pods
 *      (controller/core/smember.h: <etcd>-<n> owned by it, Running, at the pod IP on
 *      the port its pod template declares; in ordinal order until one answers 200, as only
 *      the backup leader's takes snapshots), the name <etcd>-client.<ns>.svc verified against
 *      the sidecar's certificate (never the Service's clusterIP, which a tenant may edit
 *      once component protection is disabled), https with the
 *      CA of spec.backup.tls.tlsCASecretRef (data key default bundle.crt),
 *      read in the Etcd's own namespace only, as etcd-druid mounts it (a
 *      namespace other than the Etcd's is refused without a read). Whatever
 *      keeps the CA from being used (no Secret, no key, no access, an API
 *      failure) reads the same in the status; the controller's log has why.
 *      One call waits at most env->call_timeout_ms (and never past the
 *      task's timeout); a call cut by that cap is a transport error.
 *      200 -> Succeeded; any other status -> Failed ERR_CREATE_SNAPSHOT;
 *      a transport error is recorded (ERR_EXECUTE_HTTP_REQUEST) and
 *      retried after the requeue interval, until the task's timeout
 *      (timeoutSecondsFull 900 / timeoutSecondsDelta 60, counted from
 *      startedAt) has passed -> Failed.
 *   5. Finished (Succeeded/Failed/Rejected): after ttlSecondsAfterFinished
 *      (default 3600) from lastTransitionTime the task is deleted; a task
 *      being deleted (by the TTL or a user) has its finalizer removed.
 * Status is written through the /status subresource with the object's
 * resourceVersion (a 409 is retried on the next call, never overwritten);
 * lastErrors keeps the last 3. Events: Normal SnapshotSucceeded, Warning
 * SnapshotFailed / TaskRejected, and Warning SnapshotCallFailed on the first
 * failed sidecar call of a task (with the reason), on the task.
 *
 * Ownership: env BORROWED. Thread safety: otask_step may run for different
 * tasks at once; one task's calls are serialised by the work queue.
 */
#ifndef CONTROLLER_OTASK_H
#define CONTROLLER_OTASK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include <cJSON.h>

#include "common/kerr.h"

struct ctl;         /* controller/core/ctl.h */
struct ctl_result;  /* controller/core/ctl.h */
struct k8s_client;  /* common/k8s.h */
struct ev_recorder; /* common/events.h */

#define OTASK_FINALIZER       "druid.gardener.cloud/etcd-ops-task"
#define OTASK_DEFAULT_TTL_S   3600L
#define OTASK_DEFAULT_FULL_S  900L
#define OTASK_DEFAULT_DELTA_S 60L
#define OTASK_DEFAULT_REQUEUE 15000L
#define OTASK_MAX_ERRORS      3

/* status.state */
enum otask_state {
    OTASK_NONE, /* no state yet */
    OTASK_PENDING,
    OTASK_INPROGRESS,
    OTASK_SUCCEEDED,
    OTASK_FAILED,
    OTASK_REJECTED,
    OTASK_STATE_COUNT
};

struct otask_env {
    struct k8s_client *client;  /* BORROWED, required */
    struct ev_recorder *events; /* BORROWED; NULL: no events */
    long requeue_ms;            /* after a transport error; 0: 15 s */
    long call_timeout_ms;       /* cap of one sidecar call; 0: the task's time left only */
    const atomic_int *cancel;   /* BORROWED, optional: once set, a sidecar call in flight ends
                                   and the step returns KERR_CANCELLED writing nothing */
    const atomic_int *stopping; /* BORROWED, optional: the same, set from the moment the process
                                   begins to stop (SIGTERM, a lost Lease), not after its drain:
                                   the task stays as it is and the next leader runs it again */
    /* optional: 1 when the task ns/name is gone or being deleted (a cache read, asked every
     * SIDECAR_POLL_MS during a sidecar call): the call is abandoned and the step comes back
     * at once to read the task again; arg BORROWED */
    int (*task_deleted)(void *arg, const char *ns, const char *name);
    void *task_deleted_arg;
};

/* What a task asks for (spec.config.onDemandSnapshot). */
struct otask_spec {
    const char *etcd_name; /* BORROWED from the task; NULL when absent */
    int delta;             /* type delta (else full) */
    int final;             /* isFinal */
    long timeout_s;        /* timeoutSecondsFull / timeoutSecondsDelta with defaults */
    long ttl_s;            /* ttlSecondsAfterFinished, default 3600 */
};

/*
 * Run one task ns/name until it waits: *requeue_ms > 0 asks to be called
 * again after that long. A task that is gone is KERR_OK with 0.
 */
enum kerr otask_step(const struct otask_env *env, const char *ns, const char *name,
                     long *requeue_ms, struct kerr_info *err);

/* The step of the controller (controller/core/ctl.h) on the controller's client and recorder. */
enum kerr otask_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                          struct kerr_info *err);

/*
 * The CA of spec.backup.tls.tlsCASecretRef of etcd (BORROWED) in namespace ns, when
 * spec.backup.tls is set (else *pem NULL): *pem OWNED (free). *api set when the API server
 * failed the read (retry later; it says nothing about the sidecar).
 */
enum kerr otask_backup_ca(struct k8s_client *client, const char *ns, const cJSON *etcd,
                          unsigned char **pem, size_t *len, int *api, struct kerr_info *err);

/* ---- pure helpers (exposed for the tests) ---- */

/* Parse status.state (NULL or "": OTASK_NONE; unknown: OTASK_NONE). */
enum otask_state otask_state_parse(const char *s);

/* The status.state text ("" for NONE). Static. */
const char *otask_state_name(enum otask_state s);

/* Succeeded, Failed or Rejected. */
bool otask_finished(enum otask_state s);

/*
 * Read task's spec (BORROWED) into *out. KERR_INVAL (message for the
 * status) when the config is not a valid onDemandSnapshot.
 */
enum kerr otask_spec_read(const cJSON *task, struct otask_spec *out, struct kerr_info *err);

/*
 * Admission against the other tasks of the namespace (items, BORROWED,
 * may be NULL): KERR_EXISTS naming the blocking task when another unfinished,
 * not deleted task has the same etcdName and was created before task (or at
 * the same second with a smaller name).
 */
enum kerr otask_check_duplicate(const cJSON *task, const cJSON *items, struct kerr_info *err);

/*
 * etcd-druid's handler checks on etcd (BORROWED; NULL = not found). KERR_OK,
 * else KERR_INVAL with *code set to the error code text (static:
 * ERR_GET_ETCD, ERR_BACKUP_NOT_ENABLED, ERR_ETCD_NOT_READY) and a message.
 */
enum kerr otask_check_etcd(const cJSON *etcd, const char **code, struct kerr_info *err);

/* Milliseconds left of the TTL of a finished task at now (<= 0: expired). */
long otask_ttl_left_ms(const cJSON *task, long ttl_s, time_t now);

#endif
