/*
 * bkejob - the deletion of a BackupEntry's backups once its grace period is
 * over (controller/entries/bke.h has the flow before it).
 *
 * The Job: batch/v1, named by kname_job(entry, BKEJOB_TAG) ("<entry>--delete",
 * or cut with a hash: a label value, as the Job controller labels its Pods
 * with it, one per entry and never an EtcdBackup's Job name), in the namespace of the bucket's
 * spec.secretRef: the operator's namespace, which outlives the Etcd's. One container, image and
 * command from
 * --deletion-job-image/--deletion-job-command, built as the
 * immutability CronJob's (controller/core/imtjob.h: the Secret volume and
 * environment etcd-druid gives its backup sidecar, here from the bucket's
 * Secret; Local: the Secret's hostPath, else the default host directory) with the args
 * --storage-provider, --store-container, --store-prefix=<entry's prefix>;
 * restartPolicy Never, backoffLimit 0 (the controller retries, with backoff),
 * activeDeadlineSeconds PODJOB_DELETE_DEADLINE_S, terminationMessagePolicy FallbackToLogsOnError:
 * the summary line `warden-snapshot delete-snapshots` prints last (controller/snapshot/ snapdel.h)
 * is the Pod's termination message. Labels app.kubernetes.io/managed-by=etcd-warden and
 * BKEJOB_LABEL_ENTRY=<entry, as a label value>; annotations BKEJOB_LABEL_ENTRY=<entry name> and
 * PODJOB_ANN_OWNER_UID=<entry uid> (a Job in another namespace than its
 * cluster-scoped entry has no owner reference; controller/core/podjob.h).
 *
 * One step per reconcile of an entry past its grace period (bkejob_step):
 *   - no Job: when status.nextDeletionAt lies ahead, wait for it; else,
 *     unless bkeclaim_deletion_blocked finds another owner of the prefix
 *     (read from the API server now: a live Etcd, its own re-created one
 *     included, another entry, an EtcdBackup's copies; or the prefix is the
 *     whole container), create the Job; phase Deleting, event
 *     DeletionStarted. Blocked, no Job is made and the reason is returned:
 *     a retry never deletes what a cluster wrote since the first run;
 *   - the Job running: phase Deleting, looked at again in BKEJOB_POLL_MS;
 *   - a Job of that name whose owner uid is not the entry's: left alone, a
 *     Warning event DeletionFailed naming it, an error (retried with the
 *     work queue's backoff);
 *   - the Job finished (status.succeeded or status.failed > 0): its Pod's
 *     containerStatuses[0].state.terminated {exitCode, message}, the
 *     message's last line read as the summary:
 *       exit 0, remaining 0: the entry is deleted (event Deleted on it);
 *       exit 0, only locked objects left: status objectsLeft,
 *         objectsImmutable, earliestDeletable, nextDeletionAt = that time
 *         (event ObjectsLocked), the Job re-run then; when the store does not
 *         say until when (earliestDeletable null), after a backoff as below
 *         counted in status.lockedRechecks;
 *       anything else (exit non-zero, no Pod, no summary, the deadline
 *         exceeded: "DeadlineExceeded: ..."): status lastError,
 *         deletionFailures + 1, nextDeletionAt = now + backoff (2 s doubled
 *         per failure, at most PODJOB_BACKOFF_MAX_MS; a Warning event
 *         DeletionFailed);
 *     then the Job is deleted (its Pods with it, propagation Background), and, when the
 *     entry is done, its finalizer removed before the entry is deleted.
 * The entry gets the finalizer BKEFIN_FINALIZER (controller/entries/bkefin.h) before its
 * first Job exists: an entry deleted meanwhile (metadata.deletionTimestamp) starts no Job,
 * and controller/entries/bkestop.h stops the running one before the entry goes.
 *     The status is written before the Job goes, so a controller killed in
 *     between finds the finished Job again and decides the same.
 * An Etcd re-created once the deletion has begun (phase Deleting) is not
 * reattached while the Job runs (a Warning event DeletionInProgress on each
 * look): a run that empties the prefix deletes the entry, and the Etcd gets a
 * new one; after any other run no other starts (the Etcd blocks it) and bke
 * reattaches the entry to the Etcd.
 * The Job deletes only what was written in the entry's window: from T1 (controller/entries/
 * bkeseen.h: not before a member of its Etcd was seen running, unless etcd-warden wrote the
 * prefix for it) to the Etcd last known alive (bkealive.h), no later; with no
 * T1 the window is empty, every object is kept, and the entry ends with the event
 * NothingWritten instead of Deleted.
 * Nothing but the Job deletes objects, and it only under the entry's prefix
 * (the objects "<canonical prefix>/...", as the sidecar writes them, never
 * another prefix's that its listing returns: controller/snapshot/snapdel.h).
 *
 * Ownership: arguments BORROWED; results OWNED by the caller.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEJOB_H
#define CONTROLLER_BKEJOB_H

#include <cJSON.h>

#include "common/kerr.h"
#include "common/ktime.h"
#include "controller/entries/bke_ctx.h"
#include "controller/entries/bkeclaim.h"
#include "controller/core/kname.h"

#define BKEJOB_TAG         "delete" /* kname_job */
#define BKEJOB_LABEL_ENTRY "etcd-warden.io/backup-entry"
#define BKEJOB_POLL_MS     2000L
/*
 * The namespace of entry's deletion Job: the one recorded when it was made
 * (status.deletionJobNamespace), else the bucket's spec.secretRef.namespace (where the next one
 * is made). A bucket whose secretRef moved to another namespace does not hide a Job made
 * before: it is looked at, polled and stopped where it is. NULL when neither is set.
 */
const char *bkejob_namespace(const cJSON *entry, const cJSON *bucket);

/* The Job name of the entry named entry. */
enum kerr bkejob_name(const char *entry, char out[KNAME_LABEL_MAX + 1]);

/*
 * The Job deleting entry's prefix with the credentials of bucket (both
 * BORROWED), running image with command. secret (BORROWED, may be NULL) is
 * the bucket's Secret: for a Local bucket its hostPath key is the host
 * directory of the buckets, as etcd-druid reads it (bkejob_local_secret).
 * KERR_INVAL with a message for a bucket without secretRef or an entry
 * without prefix; KERR_UNSUPPORTED for a provider warden-snapshot cannot
 * open. On KERR_OK *out OWNS it.
 */
enum kerr bkejob_build(const cJSON *entry, const cJSON *bucket, const cJSON *secret,
                       const char *image, const char *command, cJSON **out, struct kerr_info *err);

/* The name of bucket's Secret when its store is Local (the Secret is read then), else NULL. */
const char *bkejob_local_secret(const cJSON *bucket);

/* 1 when entry's Etcd is deleted (spec.etcdDeletedAt); the grace period is bke's to check. */
int bkejob_due(const cJSON *entry);

/* 1 when entry's deletion has begun (phase Deleting, its Etcd deleted). */
int bkejob_in_progress(const cJSON *entry);

/*
 * entry's deletion has begun and etcd (same namespace, name, prefix) is back:
 * an event saying the running Job ends first, then bkejob_step (why as there:
 * set when no Job runs and none may start, the entry then to be reattached).
 */
enum kerr bkejob_hold(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *entry,
                      const cJSON *etcd, char why[BKECLAIM_WHY_MAX], long *requeue,
                      struct kerr_info *err);

/*
 * One step of the deletion of entry (as cached: it is read again from the API
 * server before anything is decided) from bucket b; *requeue lowered to when it
 * is to be looked at again. An entry deleted or reattached meanwhile is success.
 * why: "" unless a Job was due and another owner blocks it (the reason; no Job made).
 */
enum kerr bkejob_step(const struct bke_ctx *x, const struct bke_bucket *b, const cJSON *entry,
                      char why[BKECLAIM_WHY_MAX], long *requeue, struct kerr_info *err);

#endif
