/*
 * erd - the EtcdRestoreDrill (etcd-warden.io/v1alpha1): proof, on a cron
 * schedule (controller/core/cron, UTC), that the backups of an Etcd (or an
 * EtcdBackup's copy) restore. Kubernetes' CronJob controller is the model
 * of the schedule; each drill is a Job.
 *
 * One pass over a drill (queue key "rdrill/<ns>/<name>") at "now"
 * (ctl_now_ms: a test may set the clock):
 *   - The spec is checked: schedule (cron_parse, with a fire time within
 *     CRON_SEARCH_YEARS), mode Verify or Restore, exactly one of
 *     target.etcdName and target.backupName, the history limits and
 *     activeDeadlineSeconds. Invalid: condition Ready False InvalidSpec (or
 *     InvalidSchedule), a Warning event, no Jobs.
 *   - The target is resolved as the controller resolves it for backups: an
 *     Etcd's spec.backup.store (provider, container, prefix,
 *     endpointOverride, the Secret of secretRef in the drill's namespace);
 *     an EtcdBackup's spec.destination and its Secret (the copy's store).
 *     A target that cannot be resolved (not found, no store, no Secret, a
 *     provider the Jobs cannot open): Ready False TargetNotFound or
 *     InvalidTarget naming the object, a Warning event when new, and the
 *     drill counts as failed once per fire time (lastResult Failed).
 *   - The drill's Jobs are listed (label CPJOB_LABEL_FOR =
 *     "etcdrestoredrill.<name>", owned by the drill's uid). The newest
 *     finished one (fire time ERD_ANN_SCHEDULED_AT, then creation) whose
 *     name is not status.lastJob is read (erd_sum.h) into the status and an
 *     event: Normal DrillSucceeded, or Warning DrillFailed naming the broken
 *     object and why. A Job past its activeDeadlineSeconds is Failed by the
 *     Job controller and reported so.
 *   - Pruning: finished Jobs that succeeded beyond
 *     successfulJobsHistoryLimit (default 3), failed ones beyond
 *     failedJobsHistoryLimit (default 1), oldest first, deleted with their
 *     Pods (never the Job status.lastJob names before it is read).
 *   - A drill starts, unless suspended or one of its Jobs runs (concurrency
 *     Forbid: the fire time is skipped, Normal event DrillAlreadyActive):
 *     at the latest fire time at or before now that is after
 *     status.lastScheduleTime (else the creationTimestamp), Job
 *     "<drill>-<t in Unix minutes>"; or at once when the annotation
 *     ERD_ANN_RUN has a value other than status.lastRunRequest (a drill by
 *     hand, suspended or not), Job "<drill>-r<hash of the value>". Names are
 *     cut by kname_join to KNAME_LABEL_MAX. Normal event DrillStarted.
 *   - Status (subresource, written when it changed): etcdName (the Etcd the
 *     target belongs to: the metrics' label), lastScheduleTime,
 *     nextScheduleTime, lastRunRequest, active [{name}], lastJob,
 *     lastResult, lastDrillTime (the Job's completionTime, else when it was
 *     read), lastSuccessfulDrillTime, duration (completion - start, e.g.
 *     "42s"), restorableRevision, keyCount, newestRestorableSnapshot and
 *     newestRestorableSnapshotTime (of the last Restorable drill: they stay
 *     while later drills fail, so the RPO grows), restoredRevision and
 *     restoredKeyCount (Restore mode), failedObject and message (of the last
 *     drill), observedGeneration, conditions Ready and Restorable (True
 *     Restorable; False NotRestorable or DrillFailed, the message naming the
 *     target and why).
 *   - Requeue: the next fire time; while a Job runs, ERD_POLL_MS.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_ERD_H
#define CONTROLLER_ERD_H

#include <stdint.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

struct ctl;
struct ctl_result;
struct rctx;

#define ERD_ANN_SCHEDULED_AT "etcd-warden.io/scheduled-at"
#define ERD_ANN_RUN          "etcd-warden.io/run-drill"
#define ERD_POLL_MS          5000L
#define ERD_DEFAULT_KEEP_OK  3
#define ERD_DEFAULT_KEEP_BAD 1
#define ERD_COND_RESTORABLE  "Restorable"
#define ERD_RESTORE_DIR      "/var/etcd-drill" /* the emptyDir: data, temporary files */

extern const struct k8s_resource ERD_RES_DRILL; /* etcdrestoredrills */

/* What the controller's flags give the drills. All BORROWED. */
struct erd_env {
    const char *verify_image, *verify_command; /* --copy-job-image; NULL: default command */
    const char *restore_image;                 /* --restore-drill-image */
};

/* One pass over the drill ns/name at now_ms (Unix ms); *requeue_ms 0 = none. */
enum kerr erd_run(const struct rctx *x, const struct erd_env *env, const char *ns, const char *name,
                  int64_t now_ms, long *requeue_ms, struct kerr_info *err);

/* The step of the key "rdrill/<ns>/<name>" (controller/core/ctl.h), at ctl_now_ms(c). */
enum kerr erd_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err);

#endif
