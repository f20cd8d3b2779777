/*
 * imtjob - the objects of the immutability task (see controller/immutability/imt.h for
 * the flow): the ExtendFullSnapshotImmutabilityTask hibernation creates for
 * an Etcd, and the batch/v1 CronJob a task is reconciled into. Pure
 * functions, no I/O.
 *
 * The CronJob (etcd-druid.md §3.3, §7): schedule from the task
 * (spec.config.schedule, else the Etcd's fullSnapshotSchedule, else
 * ETCDSPEC_DEFAULT_IMM_SCHEDULE), concurrencyPolicy Forbid; Jobs with
 * backoffLimit 2 and activeDeadlineSeconds PODJOB_IMT_DEADLINE_S (a Job that
 * hangs would hold every later run back: Forbid); one container
 * IMTJOB_CONTAINER running the image with the command split into words and
 * the args --gc-from-timestamp=<task creationTimestamp, unix seconds>,
 * --storage-provider=<S3|ABS|GCS|OSS|Swift|ECS|OCS|Local>,
 * --store-container=<container> (when set), --store-prefix=<prefix>; the
 * environment and the store Secret exactly as etcd-druid gives them to its
 * backup sidecar: POD_NAME, POD_NAMESPACE (field refs), STORAGE_CONTAINER,
 * then per provider S3 AWS_APPLICATION_CREDENTIALS=/var/etcd-backup, ABS
 * AZURE_APPLICATION_CREDENTIALS=/var/etcd-backup and AZURE_EMULATOR_ENABLED
 * (Secret key emulatorEnabled, optional), GCS
 * GOOGLE_APPLICATION_CREDENTIALS=/var/.gcp/serviceaccount.json, Swift
 * OPENSTACK_, OSS ALICLOUD_, OCS OPENSHIFT_APPLICATION_CREDENTIALS=
 * /var/etcd-backup, ECS ECS_ENDPOINT / ECS_ACCESS_KEY_ID /
 * ECS_SECRET_ACCESS_KEY from the Secret; the Secret (secretRef.name) as
 * volume "etcd-backup-secret" at /var/.gcp/ (GCS) or /var/etcd-backup (S3,
 * ABS, OSS, Swift, OCS); Local: hostPath (type Directory)
 * <hostPath>/<container>, hostPath the store Secret's key of that name, else
 * etcd-druid's default /etc/gardener/local-backupbuckets, at
 * /home/nonroot/<container> with HOME=/home/nonroot, so that warden-snapshot
 * finds $HOME/<container>/<prefix> as etcd-backup-restore does;
 * --store-endpoint-override=<spec.backup.store.endpointOverride> when set,
 * as etcd-druid passes it. Providers warden-snapshot cannot open (GCS, OSS,
 * Swift, ECS, OCS) are refused before anything is built. Pod and container non-root
 * (IMTJOB_RUN_AS), no privilege escalation, read-only root file system, every capability dropped,
 * seccomp RuntimeDefault. Labels app.kubernetes.io/managed-by= etcd-warden,
 * app.kubernetes.io/part-of=<etcd>, etcd-warden.io/task=<task> (label values cut with a hash by
 * kname when longer than 63; the task name
 * "<etcd>-extend-immutability" and the CronJob name likewise, to 253 and 52);
 * the controller reference to the task; the annotation IMTJOB_ANN_SPEC_HASH,
 * the sha256 of the labels and spec above.
 *
 * Ownership: arguments BORROWED; results OWNED by the caller.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_IMTJOB_H
#define CONTROLLER_IMTJOB_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"

#define IMTJOB_KIND          "ExtendFullSnapshotImmutabilityTask"
#define IMTJOB_TASK_SUFFIX   "-extend-immutability"
#define IMTJOB_CONTAINER     "extend-snapshot-immutability"
#define IMTJOB_ANN_SPEC_HASH "etcd-warden.io/spec-hash"
#define IMTJOB_LABEL_TASK    "etcd-warden.io/task"
#define IMTJOB_MANAGED_BY    "etcd-warden"
#define IMTJOB_CRONJOB_MAX   52
#define IMTJOB_RUN_AS        65532
#define IMTJOB_ARGS_MAX      32 /* command words */

/* "<etcd>-extend-immutability" into out. KERR_TOOBIG when n is too small. */
enum kerr imtjob_task_name(const char *etcd_name, char *out, size_t n);

/* The CronJob name of a task: its name, or its first 43 characters + "-" + 8 hex of its sha256. */
void imtjob_cronjob_name(const char *task_name, char out[IMTJOB_CRONJOB_MAX + 1]);

/* The schedule of a task: spec.config.schedule, the Etcd's fullSnapshotSchedule, the default.
 * BORROWED from task, etcd (may be NULL) or static. */
const char *imtjob_schedule(const cJSON *task, const cJSON *etcd);

/*
 * The task hibernation creates for etcd: name, namespace, labels, the Etcd's
 * controller reference, spec {etcdName, config {schedule}}. KERR_INVAL when
 * the schedule is not a cron expression or the Etcd lacks name, namespace or
 * uid. On KERR_OK *out OWNS it.
 */
enum kerr imtjob_task_build(const cJSON *etcd, cJSON **out, struct kerr_info *err);

/*
 * The task's creationTimestamp as unix seconds into *out. KERR_INVAL when
 * absent or malformed.
 */
enum kerr imtjob_gc_from(const cJSON *task, int64_t *out, struct kerr_info *err);

/*
 * The CronJob of task for etcd (above), running image with command (split at
 * blanks, at most IMTJOB_ARGS_MAX words). KERR_INVAL with a message for a
 * task without name, uid or creationTimestamp, a bad schedule, an Etcd
 * without a backup store, or with a missing or unknown provider. On KERR_OK
 * *out OWNS it.
 */
enum kerr imtjob_cronjob_build(const cJSON *task, const cJSON *etcd, const char *image,
                               const char *command, cJSON **out, struct kerr_info *err);

/*
 * The same with the store Secret (BORROWED, may be NULL): for Local its
 * data.hostPath, as etcd-druid reads it, is the host directory of the
 * buckets. KERR_UNSUPPORTED with a message for a provider warden-snapshot
 * cannot open (imtjob_provider_supported).
 */
enum kerr imtjob_cronjob_build_store(const cJSON *task, const cJSON *etcd, const cJSON *secret,
                                     const char *image, const char *command, cJSON **out,
                                     struct kerr_info *err);

/* Does warden-snapshot open this store (an etcdspec provider_kind: S3, ABS, Local)? */
int imtjob_provider_supported(const char *kind);

/* The store Secret's name when the Etcd's store is Local and names one, else NULL (BORROWED). */
const char *imtjob_local_secret(const cJSON *etcd);

#endif
