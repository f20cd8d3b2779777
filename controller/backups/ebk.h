/*
 * ebk - the EtcdBackup (etcd-warden.io/v1alpha1): a full snapshot of an Etcd
 * taken now and copied to a second store.
 *
 * One step per reconcile of "backup/<ns>/<name>" (ebk_step), always on the
 * stored backup (a fresh GET), each step driven by what it reads back so
 * that a controller killed anywhere decides the same again:
 *   - Pending (or no phase): the checks: the Etcd spec.etcdName of the
 *     namespace exists with a backup store the copy opens, the destination
 *     has a provider the copy opens (controller/backups/cpjob.h: S3, ABS, Local), a
 *     container and a prefix, and both Secrets (the Etcd store's, the
 *     destination's secretRef) exist in the namespace. A failed check:
 *     phase Failed with the error, a Warning event Failed. Else, unless
 *     another unfinished EtcdOpsTask of that Etcd exists (then Pending, an
 *     event Waiting, looked at again in EBK_WAIT_MS), the EtcdOpsTask
 *     ebk_task_name(backup) with spec {etcdName, config.onDemandSnapshot
 *     {type: full}} and the backup's controller reference is created:
 *     phase Snapshotting, startTime, opsTaskName, event SnapshotStarted.
 *   - Snapshotting: the task's status.state, whoever executes it
 *     (controller/hibernation/otask.h or etcd-druid). Failed or Rejected: Failed with
 *     its lastErrors' last description. Succeeded: the destination's claim
 *     recorded in its store's claim Lease (controller/core/claims.h's
 *     claims_take, atomic with warden-webhook's admissions: an overlapping
 *     live record of another owner fails the backup; a Lease that cannot be
 *     read or written keeps the phase, status.error, a Warning event
 *     ClaimNotRecorded, looked at again in EBK_WAIT_MS), then the copy Job
 *     (cpjob_build, name ebk_job_name(backup), activeDeadlineSeconds
 *     PODJOB_COPY_DEADLINE_S) from the Etcd's store to the
 *     destination, with --snapshot NAME when the task's
 *     lastOperation.description names the snapshot as the executor of
 *     otask.c writes it ("full snapshot NAME taken ..."), else --latest-full
 *     --until <the task's lastOperation.lastTransitionTime> (etcd-druid's
 *     executor does not name it). With deletionPolicy Delete (the default)
 *     the finalizer EBK_FINALIZER is added first, so that a backup deleted
 *     while the copy runs still has its copy removed. Phase Uploading,
 *     jobName, events SnapshotTaken and UploadStarted. A task gone before
 *     that: Failed. A Job of that name owned by another (controller/core/podjob.h):
 *     Failed with an error naming it; it is left alone.
 *   - Uploading: the Job's result (cpjob_read). Running: looked at again in
 *     EBK_POLL_MS. Succeeded with a summary naming a full snapshot:
 *     Completed, completionTime, status.snapshot {name, kind, startRevision,
 *     lastRevision, size, md5, createdOn} and destinationKey, event
 *     Completed; anything else: Failed with the summary's error (or the exit
 *     status; a Job stopped at its deadline: "DeadlineExceeded: ..."), a
 *     Warning event Failed. Either way, when the Pod's summary is the
 *     copy's whole report (none or one snapshot listed, with its key),
 *     status.copyReported is true and the key, if any, is destinationKey:
 *     provenance for the deletion (a failed copy removes what it wrote and
 *     lists nothing). The status is written before the Job is deleted
 *     (propagation Background), so a restarted controller finds the
 *     finished Job again and decides the same. A Job gone before its
 *     result was read: Failed.
 *   - Completed, Failed: terminal, never run again; a Job still there (a
 *     crash between the status and its deletion) is deleted.
 * Deletion (metadata.deletionTimestamp) with the finalizer: a copy Job
 * still running is waited for (and its result recorded as above); a copy
 * that reported writing nothing: the finalizer goes (event CopyWroteNothing);
 * then, with deletionPolicy Delete and a destinationKey, the delete Job
 * ebk_del_job_name(backup) runs `warden-snapshot delete-snapshots` with the
 * destination key as the prefix (exactly that object: a prefix is a path,
 * controller/snapshot/snapdel.h) and the destination's Secret. Exit 0 and
 * nothing left: the finalizer is removed (event CopyDeleted). Locked objects
 * left (an immutable copy): status deletionError, nextDeletionAt = the
 * store's earliest deletable time, or a backoff as below when it does not
 * say, an event CopyLocked saying until when; other failures likewise with
 * the backoff of podjob_backoff_ms (status.deletionFailures) and a Warning
 * event DeletionFailed. A key another EtcdBackup of the namespace records as
 * its destinationKey (same container) is not deleted (event CopyShared).
 * Provenance before deletion (controller/backups/ebk_del.h): a copy never read
 * deletes only the snapshot its Job was told to copy, written since its start;
 * one whose snapshot is unknown deletes nothing (the prefix holds the other
 * copies of the Etcd) and is handed to a BackupEntry as a retained copy is,
 * with a Warning event CopyUnproven naming the prefix and the window.
 * With deletionPolicy Retain, whatever a copy Job
 * recorded in the status may have written (Completed or not: ebk_copy_window)
 * is handed to a BackupEntry first (controller/backups/ebk_keep.h). Without
 * a copy Job recorded (failed before one was made) the finalizer is simply
 * removed. A Job of the delete Job's name owned by
 * another: status deletionError naming it, a Warning event DeletionFailed,
 * looked at again after a backoff; it is never deleted.
 *
 * Ownership: env BORROWED; strings BORROWED. Thread safety: ebk_step may run
 * for different backups at once; one backup's calls are serialised by the
 * work queue.
 */
#ifndef CONTROLLER_EBK_H
#define CONTROLLER_EBK_H

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "controller/core/kname.h"
#include "controller/backups/ebk_env.h"

struct ctl;        /* controller/core/ctl.h */
struct ctl_result; /* controller/core/ctl.h */

/*
 * One step of the backup ns/name as above; *requeue_ms > 0 asks to be
 * called again after that long. A backup that is gone is KERR_OK.
 */
enum kerr ebk_step(const struct ebk_env *env, const char *ns, const char *name, long *requeue_ms,
                   struct kerr_info *err);

/*
 * The step of the controller (controller/core/ctl.h) on its client, recorder and flags: the
 * copy Jobs run --copy-job-image/--copy-job-command, the delete Jobs
 * --deletion-job-image/--deletion-job-command.
 */
enum kerr ebk_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err);

#endif
