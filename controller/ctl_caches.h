/*
 * ctl_caches - the watch-fed caches of warden-controller (enum ctl_cache of
 * controller/ctl.h) and the mapping of their events to queue keys.
 *
 * One informer per resource: Etcds, EtcdOpsTasks, immutability tasks,
 * CronJobs (only those labelled app.kubernetes.io/managed-by=etcd-warden,
 * as controller/imtjob makes them) and EtcdStatusBackups are kept as
 * compact JSON text (metadata.managedFields dropped); the nine kinds of managed components
 * (label app.kubernetes.io/managed-by=etcd-druid) are projected to
 * apiVersion, kind and metadata (name, namespace, uid, resourceVersion,
 * labels, ownerReferences) and mirrored into one store keyed
 * "<kind>/<ns>/<name>" with the index CTL_INDEX_PART_OF ("<ns>/<part-of>").
 * With backup_entries, BackupBuckets and BackupEntries (cluster-scoped,
 * never restricted to ns) are cached too, the entries indexed by
 * BKE_INDEX_BUCKET; a bucket maps to "bucket//<name>", an entry to its
 * bucket's key, and an Etcd to every cached bucket's key as well as its own.
 * With backups, EtcdBackups are cached too, indexed by CTL_INDEX_ETCD_NAME;
 * one maps to "backup/<ns>/<name>" and, when a schedule made it, to its
 * schedule's "bschedule/<ns>/<label>" (controller/ebs.h).
 * EtcdRestores map to "restore/<ns>/<name>", EtcdBackupSchedules to
 * "bschedule/<ns>/<name>" (not for an update of its status alone).
 * The Etcd store has an index "phase" by the value of the annotation
 * etcd-warden.io/hibernation-phase.
 *
 * Every add, update (resyncs included) and delete calls on_key with the
 * queue keys it maps to (see controller/ctl.h): kind "etcd", "opstask" or
 * "immtask", the namespace and the name. An update of an EtcdOpsTask or
 * an immutability task that changed nothing but its status (and
 * resourceVersion) does not queue the task's own key (controller-runtime's
 * GenerationChangedPredicate, with metadata changes counted too): those
 * are the executor's own writes; the Etcd's key is queued all the same.
 *
 * Ownership: struct ctl_caches (ctl_caches_new / ctl_caches_free) OWNS its
 * informers and stores; the client and the option strings are BORROWED.
 * Thread safety: ctl_caches_store, ctl_caches_synced and
 * ctl_caches_phase_count from any thread; new/start/stop/free from one.
 * on_key runs on the informer threads.
 */
#ifndef CONTROLLER_CTL_CACHES_H
#define CONTROLLER_CTL_CACHES_H

#include <stddef.h>

#include "common/kerr.h"
#include "controller/ctl.h"

#define CTL_INDEX_PHASE      "phase"
#define CTL_ANN_PHASE        "etcd-warden.io/hibernation-phase"
#define CTL_LABEL_PART_OF    "app.kubernetes.io/part-of"
#define CTL_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"

/* Called with each queue key an event maps to; strings BORROWED for the call. */
typedef void (*ctl_caches_key_fn)(void *ctx, const char *kind, const char *ns, const char *name);

struct ctl_caches_opts {
    struct k8s_client *client; /* BORROWED, required */
    const char *ns;            /* BORROWED; NULL or "": every namespace */
    long resync_ms;            /* Etcds re-delivered this often (0: never) */
    ctl_caches_key_fn on_key;  /* required */
    int backup_entries;        /* also BackupBuckets and BackupEntries (cluster-wide) */
    int backups;               /* also EtcdBackups ("backup/<ns>/<name>"), EtcdRestores
                                  ("restore/<ns>/<name>") and EtcdBackupSchedules
                                  ("bschedule/<ns>/<name>") */
    void *ctx;                 /* BORROWED, passed to on_key */
};

struct ctl_caches;

/* Build the informers and stores (nothing runs). On KERR_OK *out OWNS them. */
enum kerr ctl_caches_new(const struct ctl_caches_opts *o, struct ctl_caches **out,
                         struct kerr_info *err);

/* Start every informer. */
enum kerr ctl_caches_start(struct ctl_caches *c, struct kerr_info *err);

/* True once every informer has listed. */
int ctl_caches_synced(struct ctl_caches *c);

/* A cache. BORROWED. */
struct store *ctl_caches_store(struct ctl_caches *c, enum ctl_cache w);

/* Cached Etcds whose hibernation-phase annotation is phase ("none": without one). */
size_t ctl_caches_phase_count(struct ctl_caches *c, const char *phase);

/* Objects in all caches (the components counted once). */
size_t ctl_caches_objects(struct ctl_caches *c);

/* Stop every informer (joins their threads). Idempotent. */
void ctl_caches_stop(struct ctl_caches *c);

/* Stop and free. NULL is a no-op. */
void ctl_caches_free(struct ctl_caches *c);

#endif
