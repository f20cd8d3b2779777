/*
 * etcdspec - reading an Etcd (druid.gardener.cloud/v1alpha1) the way the
 * controller needs it: the backup store (provider, container, prefix,
 * secretRef), the DEP-06 retention type (spec.backup.store.immutability.
 * retentionType, or the annotation etcd-warden.io/immutability-retention-type
 * where the installed CRD lacks the field), fullSnapshotSchedule, replicas,
 * backup TLS; the names etcd-druid gives an Etcd's components
 * (its component builders) and the owner reference it puts on
 * them; the API resource of each component kind; and validation of what the
 * controller acts on, with messages that name the field (a malformed
 * immutability block, a schedule that is not a cron expression).
 *
 * Pure functions: no I/O. Ownership: every string in a struct etcdspec is
 * BORROWED from the Etcd it was read from and valid while that tree lives.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_ETCDSPEC_H
#define CONTROLLER_ETCDSPEC_H

#include <stdint.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

#define ETCDSPEC_API_VERSION "druid.gardener.cloud/v1alpha1"
#define ETCDSPEC_KIND        "Etcd"
#define ETCDSPEC_WARDEN_API  "etcd-warden.io/v1alpha1"

/* Labels and annotations (DESIGN.md §1). */
#define ETCDSPEC_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"
#define ETCDSPEC_LABEL_PART_OF    "app.kubernetes.io/part-of"
#define ETCDSPEC_MANAGED_BY_DRUID "etcd-druid"
#define ETCDSPEC_LABEL_RESTORING  "etcd-warden.io/restoring"
#define ETCDSPEC_ANN_SUSPEND      "druid.gardener.cloud/suspend-etcd-spec-reconcile"
/* Set beside the suspend annotation by whoever of etcd-warden added it: only then it is removed. */
#define ETCDSPEC_ANN_SUSPEND_ADDED       "etcd-warden.io/suspend-added"
#define ETCDSPEC_ANN_BACKUP_EXISTS       "etcd-warden.io/status-backup-exists"
#define ETCDSPEC_ANN_RESTORE_PROGRESS    "etcd-warden.io/restore-progress"
#define ETCDSPEC_ANN_RETENTION_TYPE      "etcd-warden.io/immutability-retention-type"
#define ETCDSPEC_LABEL_FINAL_SNAPSHOT_OF "etcd-warden.io/final-snapshot-of" /* hib's tasks */
#define ETCDSPEC_ANN_HIBERNATE           "etcd-warden.io/hibernate"
#define ETCDSPEC_ANN_HIBERNATION_PHASE   "etcd-warden.io/hibernation-phase"
#define ETCDSPEC_ANN_RUNTIME_DISABLED    "druid.gardener.cloud/disable-etcd-runtime-component-creation"
#define ETCDSPEC_RETENTION_BUCKET        "bucket"
#define ETCDSPEC_DEFAULT_IMM_SCHEDULE    "0 0 * * *" /* DEP-06's example, when none is set */
#define ETCDSPEC_NAME_MAX                254

/* The API resources the controller reads and writes. */
extern const struct k8s_resource ETCDSPEC_RES_ETCD;
extern const struct k8s_resource ETCDSPEC_RES_STATUSBACKUP;
extern const struct k8s_resource ETCDSPEC_RES_IMMTASK;
extern const struct k8s_resource ETCDSPEC_RES_OPSTASK;
extern const struct k8s_resource ETCDSPEC_RES_CRONJOB;
extern const struct k8s_resource ETCDSPEC_RES_SECRET;
extern const struct k8s_resource ETCDSPEC_RES_JOB;
extern const struct k8s_resource ETCDSPEC_RES_POD;

/* The backup store of an Etcd (spec.backup.store). */
struct etcdspec_store {
    const char *provider;         /* as written ("aws", "S3", "gcp", ...), or NULL */
    const char *provider_kind;    /* etcd-backup-restore's name: S3 ABS GCS OSS Swift ECS OCS
                                     Local; NULL when provider is NULL */
    const char *container;        /* or NULL */
    const char *prefix;           /* required by the CRD; NULL when missing */
    const char *secret_name;      /* spec.backup.store.secretRef.name, or NULL */
    const char *secret_namespace; /* or NULL (the Etcd's namespace) */
};

/* What the controller reads of an Etcd. */
struct etcdspec {
    const char *namespace;
    const char *name;
    const char *uid;
    int64_t replicas;                   /* spec.replicas, 0 when absent */
    int has_store;                      /* spec.backup.store present (backup enabled) */
    struct etcdspec_store store;        /* valid when has_store */
    const char *retention_type;         /* field, else annotation, else NULL */
    const char *full_snapshot_schedule; /* spec.backup.fullSnapshotSchedule or NULL */
    int backup_tls;                     /* spec.backup.tls present */
    long backup_port;                   /* spec.backup.port, default 8080 */
};

/*
 * Read etcd (BORROWED) into *out (strings BORROWED from etcd). Only a missing
 * metadata.name is an error (KERR_INVAL); everything else is reported by
 * etcdspec_validate.
 */
enum kerr etcdspec_read(const cJSON *etcd, struct etcdspec *out, struct kerr_info *err);

/*
 * Check what the controller acts on: the immutability block (an object whose
 * retentionType is a string, and "bucket", the only type DEP-06 defines; the
 * annotation likewise), fullSnapshotSchedule a cron schedule (etcdspec_cron_check), a
 * known storage provider, a prefix when a store is set. KERR_INVAL with a
 * message naming the field.
 */
enum kerr etcdspec_validate(const cJSON *etcd, struct kerr_info *err);

/* 1 when the retention type is "bucket" (the field, or the annotation when the field is absent). */
int etcdspec_bucket_immutability(const cJSON *etcd);

/*
 * What hibernation does about immutability: 1 bucket, 0 none; -1 (message in err) when an
 * immutability setting is there but the Etcd does not validate.
 */
int etcdspec_bucket_state(const cJSON *etcd, struct kerr_info *err);

/*
 * Check a cron schedule as Kubernetes' CronJob and etcd-backup-restore read
 * it (controller/core/cron.h: cron_parse). KERR_INVAL with the message
 * "\"<expr>\" is not a cron expression: <what is wrong, naming the field>".
 */
enum kerr etcdspec_cron_check(const char *expr, struct kerr_info *err);

/* etcd-backup-restore's provider name for a spec provider ("aws" -> "S3"), or NULL if unknown. */
const char *etcdspec_provider_kind(const char *provider);

/* ---- components (etcd-druid.md §6) ---- */

/*
 * The API resource of a component kind (ServiceAccount, Service, ConfigMap,
 * Role, RoleBinding, StatefulSet, PodDisruptionBudget, Lease,
 * PersistentVolumeClaim, Job), or NULL for an unknown kind. BORROWED, static.
 */
const struct k8s_resource *etcdspec_kind_resource(const char *kind);

/* The apiVersion of a component kind, or NULL. BORROWED, static. */
const char *etcdspec_kind_api_version(const char *kind);

/* 1 when etcd-druid owns components of this kind by the Etcd (every kind but PVCs). */
int etcdspec_kind_owned(const char *kind);

/*
 * The components etcd-druid builds for etcd, as a cJSON array of
 * {apiVersion, kind, name} in a fixed order (StatefulSet, Services client and
 * peer, ConfigMap, ServiceAccount, Role, RoleBinding, PodDisruptionBudget,
 * member Leases, snapshot Leases). PVCs are not listed. On KERR_OK *out OWNS
 * the array.
 */
enum kerr etcdspec_components(const cJSON *etcd, cJSON **out, struct kerr_info *err);

/* "<name>-client": the client Service. KERR_TOOBIG when n is too small. */
enum kerr etcdspec_client_service_name(const char *etcd_name, char *out, size_t n);

/*
 * The owner reference etcd-druid puts on components: {apiVersion, kind: Etcd,
 * name, uid, controller: true, blockOwnerDeletion: true}. On KERR_OK *out
 * OWNS it. KERR_INVAL when etcd has no name or uid.
 */
enum kerr etcdspec_owner_ref(const cJSON *etcd, cJSON **out, struct kerr_info *err);

/* A label or annotation value of obj, or NULL. BORROWED from obj. */
const char *etcdspec_label(const cJSON *obj, const char *key);
const char *etcdspec_annotation(const cJSON *obj, const char *key);

#endif
