/*
 * imt - the ExtendFullSnapshotImmutabilityTask (etcd-warden.io/v1alpha1,
 * etcd-druid's DEP-06) and its CronJob.
 *
 * Hibernation creates the task with imt_task_ensure (name
 * "<etcd>-extend-immutability", spec.etcdName, spec.config.schedule =
 * spec.backup.fullSnapshotSchedule, else ETCDSPEC_DEFAULT_IMM_SCHEDULE;
 * owned by the Etcd; labels app.kubernetes.io/managed-by=etcd-warden and
 * app.kubernetes.io/part-of=<etcd>) and deletes it with imt_task_delete.
 * imt_task_ensure also queues the task's key, so that its CronJob follows a
 * change of the Etcd's store or schedule while hibernated.
 *
 * imt_reconcile keeps a task's batch/v1 CronJob (built by imtjob: name the
 * task's, cut to 52 characters with a hash when longer), owned by the task
 * (controller reference; the garbage collector deletes it with the task):
 *   schedule = spec.config.schedule (else the Etcd's fullSnapshotSchedule),
 *   concurrencyPolicy Forbid; one container "extend-snapshot-immutability"
 *   running --immutability-task-image with --immutability-task-command split
 *   into words, args --gc-from-timestamp=<task creationTimestamp, unix
 *   seconds>, --storage-provider=<S3|ABS|GCS|...>, --store-container=,
 *   --store-prefix= from the Etcd's store; the store Secret mounted and the
 *   environment set exactly as etcd-druid sets them for its backup sidecar
 *   (etcd-druid.md §7: POD_NAME, POD_NAMESPACE, STORAGE_CONTAINER, and per
 *   provider AWS_APPLICATION_CREDENTIALS=/var/etcd-backup,
 *   AZURE_APPLICATION_CREDENTIALS (+ AZURE_EMULATOR_ENABLED from the Secret),
 *   GOOGLE_APPLICATION_CREDENTIALS=/var/.gcp/serviceaccount.json,
 *   OPENSTACK_/ALICLOUD_/OPENSHIFT_APPLICATION_CREDENTIALS, ECS_* from the
 *   Secret; Local: the host directory /etc/gardener/local-backupbuckets/<container>
 *   at /home/nonroot/<container>); pod and container run as non-root
 *   (65532), no privilege escalation, read-only root, capabilities dropped.
 * The CronJob carries the annotation etcd-warden.io/spec-hash (sha256 of
 * what the controller sets); it is replaced only when that differs or its
 * owner reference is wrong, so defaults an API server adds cause no writes.
 * A CronJob of that name controlled by another owner is never taken over
 * (condition CronJobFailed, KERR_EXISTS).
 *
 * Status of the task (subresource, written only when it changed):
 * cronJobName, lastScheduleTime (the CronJob's status.lastScheduleTime),
 * observedGeneration, conditions [{type: Ready, status, reason, message,
 * lastTransitionTime}] with reason CronJobReady, EtcdNotFound,
 * BackupNotEnabled, InvalidSchedule, InvalidEtcd, UnsupportedProvider,
 * EtcdDeleting or CronJobFailed. A task that is not ready gets the condition and
 * a Warning event and is looked at again after IMT_RETRY_MS; the task is never
 * deleted. Its CronJob (when the task controls it) is deleted unless the reason
 * is InvalidSchedule or CronJobFailed: a CronJob runs only for a live Etcd's
 * store, as a copy elsewhere would write into an unclaimed prefix.
 *
 * Ownership: arguments BORROWED; results as documented. Thread safety:
 * reentrant.
 */
#ifndef CONTROLLER_IMT_H
#define CONTROLLER_IMT_H

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/core/imtjob.h"

struct ctl;
struct ctl_result;
struct rctx;

#define IMT_RETRY_MS 30000L
/* The Ready condition's reason (and the Warning event's) when a Local Etcd's directory, placed by
 * its Secret read now, is not its namespace's part of a partitioned Local BackupBucket: no
 * CronJob (one there is deleted). */
#define IMT_REASON_NOT_OWNED "LocalDirectoryNotOwned"

/* Create etcd's task when missing (or fix its schedule); idempotent. */
enum kerr imt_task_ensure_x(const struct rctx *x, const cJSON *etcd, struct kerr_info *err);

/* Delete etcd's task when present; NotFound is success. */
enum kerr imt_task_delete_x(const struct rctx *x, const cJSON *etcd, struct kerr_info *err);

/* Reconcile the task ns/name into its CronJob and status; *requeue_ms set when retrying. */
enum kerr imt_run(const struct rctx *x, const char *ns, const char *name, long *requeue_ms,
                  struct kerr_info *err);

/* The functions of the contract (controller/core/ctl.h). */
enum kerr imt_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err);
enum kerr imt_task_ensure(struct ctl *c, const cJSON *etcd, struct kerr_info *err);
enum kerr imt_task_delete(struct ctl *c, const cJSON *etcd, struct kerr_info *err);

#endif
