/*
 * ebs - the EtcdBackupSchedule (etcd-warden.io/v1alpha1): EtcdBackups of
 * one Etcd created on a cron schedule (controller/cron, UTC), with history
 * limits. Kubernetes' CronJob controller is the model.
 *
 * One pass over a schedule (queue key "bschedule/<ns>/<name>"), at the
 * time "now" the caller gives (ctl_now_ms: a test may set the clock):
 *   - The spec is checked: schedule (cron_parse, and a fire time within
 *     CRON_SEARCH_YEARS: "0 0 30 2 *" is refused), backupTemplate.etcdName,
 *     startingDeadlineSeconds and both history limits >= 0. An invalid one
 *     gets condition Ready False (reason InvalidSchedule, or InvalidSpec),
 *     a Warning event of that reason, and no backups; nothing is requeued
 *     (editing the spec queues the key).
 *   - The EtcdBackups of the namespace are listed from the API (not a
 *     cache: what the pass creates or deletes must be seen by the next).
 *     The schedule's own carry the label EBS_LABEL_SCHEDULE = the
 *     schedule's name (kname_label_value), the label EBS_LABEL_UID = the
 *     schedule's uid (written when the pass creates them) and the schedule's
 *     backupTemplate.etcdName: all three, or the backup is not the schedule's
 *     (one of a deleted schedule of the same name, of another Etcd, made by
 *     hand or by an earlier version) and is never pruned nor counted; a
 *     backup is unfinished while its
 *     status.phase is neither Completed nor Failed and it is not being
 *     deleted.
 *   - Pruning: the schedule's Completed backups beyond
 *     successfulBackupsHistoryLimit (default 3) and Failed ones beyond
 *     failedBackupsHistoryLimit (default 1), oldest first (annotation
 *     EBS_ANN_SCHEDULED_AT, then creationTimestamp), are deleted (event
 *     BackupDeleted); the EtcdBackup's own finalizer deletes its copy.
 *   - Scheduling, unless spec.suspend: t = the latest fire time at or
 *     before now. Nothing when t is not after the earliest time, which is
 *     status.lastScheduleTime (else the creationTimestamp), raised to
 *     now - startingDeadlineSeconds when that is set: a fire time missed
 *     by more than the deadline gets a Warning MissSchedule event, and more
 *     than EBS_MAX_MISSED missed ones a Warning TooManyMissedTimes; either
 *     way only the latest is taken, once. Then: the backup of t already
 *     exists (a crash after the create): lastScheduleTime = t. An unfinished
 *     EtcdBackup of the same Etcd exists (this schedule's, another's or a
 *     hand-made one): t is skipped, Normal event BackupAlreadyActive,
 *     lastScheduleTime = t. An unfinished one there for more than
 *     EBS_STUCK_S (since its fire time EBS_ANN_SCHEDULED_AT, else its
 *     creationTimestamp) is stuck (its Jobs have deadlines well below
 *     that: something else holds it, such as an EtcdOpsTask that never
 *     ends): it is reported (condition EBS_COND_STUCK, a Warning event BackupStuck when
 *     the condition is new) and holds no fire time back, so the schedule
 *     makes at most one new backup per EBS_STUCK_S while that lasts.
 *     Otherwise the EtcdBackup "<schedule>-<t in Unix minutes>"
 *     (kname_join: cut with a hash when too long) is created with
 *     spec = backupTemplate, the two labels, the annotation = t (RFC 3339) and no
 *     owner reference (it outlives the schedule); AlreadyExists counts as
 *     created; Normal event BackupCreated; lastScheduleTime = t. Before it
 *     is created, the destination (backupTemplate.destination) is checked as
 *     an EtcdBackup's is (controller/core/claims: overlapping, as the backup
 *     sidecar lists prefixes, an Etcd's, a BackupEntry's or another Etcd's
 *     copies' prefix, read from the API server): when it is in use, t is
 *     skipped (lastScheduleTime = t) with a Warning event EBS_REASON_IN_USE,
 *     the condition Ready is False with that reason naming the owner, and the
 *     destination is looked at again every EBS_RECHECK_MS until it is free.
 *     A backup the API server refuses (403, an admission webhook's denial:
 *     warden-webhook refusing a destination in another namespace's part since a
 *     BackupBucket's prefixScope changed; or 422 Invalid) skips
 *     t the same way, with a Warning event EBS_REASON_REFUSED quoting the
 *     refusal, and the condition Ready is False with that reason until a later
 *     fire time's backup is created.
 *   - Status (subresource, written only when it changed):
 *     lastScheduleTime, lastSuccessfulTime (the newest completionTime of
 *     the schedule's Completed backups, never going back), active [{name}]
 *     (its unfinished backups), observedGeneration, conditions [Ready: True
 *     Scheduled or Suspended, or False as above; BackupStuck: True,
 *     reason BackupNotFinished, naming the oldest stuck backup, only while
 *     there is one].
 *   - Requeue: at the next fire time after now; while the schedule has an
 *     unfinished backup, after EBS_POLL_MS at the latest (to follow its
 *     phase, to prune and to fill lastSuccessfulTime).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_EBS_H
#define CONTROLLER_EBS_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

struct ctl;
struct ctl_result;
struct rctx;

#define EBS_LABEL_SCHEDULE   "etcd-warden.io/backup-schedule"
#define EBS_LABEL_UID        "etcd-warden.io/backup-schedule-uid"
#define EBS_ANN_SCHEDULED_AT "etcd-warden.io/scheduled-at"
#define EBS_MAX_MISSED       100
#define EBS_POLL_MS          5000L
#define EBS_DEFAULT_KEEP_OK  3
#define EBS_DEFAULT_KEEP_BAD 1
#define EBS_STUCK_S          (3L * 3600) /* the copy Job's deadline (controller/core/podjob.h) + 1 h */
#define EBS_COND_STUCK       "BackupStuck"
#define EBS_REASON_IN_USE    "DestinationInUse"
#define EBS_REASON_REFUSED   "BackupRefused"
#define EBS_RECHECK_MS       60000L /* a destination in use: looked at again */

extern const struct k8s_resource EBS_RES_SCHEDULE; /* etcdbackupschedules */
extern const struct k8s_resource EBS_RES_BACKUP;   /* etcdbackups */

/*
 * The name of the backup a schedule creates for fire time t (Unix seconds):
 * "<schedule>-<t / 60>", cut by kname_join to a subdomain. KERR_INVAL or
 * KERR_TOOBIG as kname_join.
 */
enum kerr ebs_backup_name(const char *schedule, int64_t t, char *out, size_t n);

/*
 * The schedule a backup (BORROWED) belongs to, for mapping its events to
 * the key "bschedule/<ns>/<label>": its EBS_LABEL_SCHEDULE label, or NULL.
 * BORROWED from backup.
 */
const char *ebs_backup_schedule(const cJSON *backup);

/* One pass over the schedule ns/name at now_ms (Unix ms); *requeue_ms 0 = none. */
enum kerr ebs_run(const struct rctx *x, const char *ns, const char *name, int64_t now_ms,
                  long *requeue_ms, struct kerr_info *err);

/* The step of the key "bschedule/<ns>/<name>" (controller/core/ctl.h), at ctl_now_ms(c). */
enum kerr ebs_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err);

#endif
