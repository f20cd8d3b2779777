/*
 * ctl_cap - what a capability tells the controller core: one struct
 * ctl_capability per capability (hibernation, immutability, restore,
 * backups, backup entries), defined in the capability's folder and handed
 * to ctl_new by the composition root (controller/main.c). The core knows no
 * capability: every resource it watches beyond Etcds and their components,
 * every index, every queue key kind and every reconcile comes from these
 * entries.
 *
 * Watches. Each struct ctl_watch names a resource; the core runs one
 * informer per resource (compact JSON, metadata.managedFields dropped;
 * namespaced ones restricted to --watch-namespace) and one cache per
 * resource, read with ctl_store(c, res.resource). Several capabilities may
 * name the same resource (the core's own "etcds" among them): the first
 * makes the informer (its label selector wins), the others add their
 * indexes and key functions. On every add, update (resyncs included) and
 * delete the core calls each key function of the resource, in the order of
 * the capabilities, after its own (an Etcd event queues "etcd/<ns>/<name>"
 * first). own says whether the object's own key is to be queued: 0 for an
 * update that changed nothing but the status and resourceVersion (the
 * reconciler's own write; controller-runtime's GenerationChangedPredicate
 * with metadata changes counted too), 1 otherwise.
 *
 * Keys. A struct ctl_key is a queue key kind "<kind>/<ns>/<name>" and its
 * reconcile; kind is also the controller label of the metrics. Etcd steps
 * (struct ctl_etcd_step) run on "etcd/<ns>/<name>" in the order of the
 * capabilities and of their arrays (controller/core/ctl.h, "Dispatch").
 *
 * Services. A capability may offer functions of an Etcd to the others by
 * name (struct ctl_service): the others call them through ctl_call
 * (controller/core/ctl.h), so that no capability includes another's headers.
 *
 * Tests replace steps and key reconciles by name (struct ctl_stub,
 * ctl_opts.stubs of controller/core/ctl.h).
 *
 * Ownership: every table is static and BORROWED by the core for the life
 * of the struct ctl. Thread safety: the functions of a table run on the
 * workers (reconciles, services) or the informer threads (key functions).
 */
#ifndef CONTROLLER_CTL_CAP_H
#define CONTROLLER_CTL_CAP_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"

struct ctl;               /* controller/core/ctl.h: the running controller */
struct ctl_metrics_gauge; /* controller/core/ctl_metrics.h */
struct ctl_config;        /* controller/core/ctl_config.h */

#define CTL_CAPS_MAX          8 /* capabilities of one controller */
#define CTL_WATCH_INDEXES_MAX 2

/*
 * The core's caches (ctl_store; the capabilities' are named by their
 * resource): druid.gardener.cloud/v1alpha1 etcds, full objects; and every
 * managed component of every kind (ServiceAccount, Service, ConfigMap,
 * Role, RoleBinding, StatefulSet, PodDisruptionBudget, Lease,
 * PersistentVolumeClaim) with label app.kubernetes.io/managed-by=etcd-druid,
 * projected to apiVersion, kind, metadata (name, namespace, uid,
 * resourceVersion, labels, ownerReferences), Services also to
 * metadata.annotations and spec.ports, StatefulSets to metadata.generation,
 * spec.replicas, spec.ordinals, status.replicas and status.readyReplicas (what
 * hibernation reads); key "<kind>/<ns>/<name>";
 * index CTL_INDEX_PART_OF.
 */
#define CTL_CACHE_ETCDS      "etcds"
#define CTL_CACHE_COMPONENTS "components"

/* Name of the index of CTL_CACHE_COMPONENTS: values "<ns>/<part-of label>". */
#define CTL_INDEX_PART_OF "part-of"

/*
 * Name of the index ctl_index_etcd_name (controller/core/ctl_cap.h) of the caches
 * of resources whose spec names an Etcd (tasks, backups): values
 * "<ns>/<spec.etcdName>", so that one Etcd's reconcile reads its own
 * objects only, not those of every namespace.
 */
#define CTL_INDEX_ETCD_NAME "etcd-name"

/* What a step asks of the dispatch. */
struct ctl_result {
    long requeue_ms; /* > 0: call again after that long */
    /*
     * With an error and requeue_ms > 0: the step paces the retry of its failure itself (a
     * hibernation underway retries within seconds, however many calls failed before). The
     * key's backoff is then forgotten, so a failure outside the step (the Etcd's own GET)
     * starts again from the queue's first delay rather than from where the step's failures
     * took it.
     */
    int own_retry;
};

/* A step of an Etcd key. */
typedef enum kerr (*ctl_etcd_step_fn)(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                                      struct kerr_info *err);

/* The reconcile of a capability's key "<kind>/<ns>/<name>". */
typedef enum kerr (*ctl_task_step_fn)(struct ctl *c, const char *ns, const char *name,
                                      struct ctl_result *res, struct kerr_info *err);

/* A test's replacement of the steps and key reconciles named name. */
struct ctl_stub {
    const char *name;      /* NULL ends the array: a step's or a key kind's name */
    ctl_etcd_step_fn step; /* replaces the Etcd step name */
    ctl_task_step_fn key;  /* replaces the reconcile of the key kind name */
};

/* An index of a cache (common/store.h), read with store_index_*. */
struct ctl_index {
    const char *name;  /* NULL ends the array */
    store_index_fn fn; /* called with ctx NULL */
};

/*
 * Queue the keys an event of obj (BORROWED) maps to, with ctl_enqueue /
 * ctl_enqueue_obj (controller/core/ctl.h).
 */
typedef void (*ctl_keys_fn)(struct ctl *c, const cJSON *obj, int own);

/* One watched resource. */
struct ctl_watch {
    struct k8s_resource res;    /* res.resource names the cache; NULL ends the array */
    const char *kind;           /* the Kind (names the informer in logs) */
    const char *label_selector; /* NULL: every object */
    ctl_keys_fn keys;           /* NULL: the events queue nothing */
    struct ctl_index indexes[CTL_WATCH_INDEXES_MAX + 1];
};

/* A step of the Etcd key. */
struct ctl_etcd_step {
    const char *name; /* NULL ends the array; names the step in logs and events */
    ctl_etcd_step_fn fn;
    int restoring; /* 1: runs (alone) while the Etcd is restoring; 0: otherwise */
};

/* A queue key kind. */
struct ctl_key {
    const char *kind; /* NULL ends the array; "<kind>/<ns>/<name>", the metrics' controller */
    ctl_task_step_fn reconcile;
    int (*enabled)(const struct ctl_config *cfg);       /* NULL: always; else dispatched only when
                                                           it returns non-zero */
    long (*lane_workers)(const struct ctl_config *cfg); /* non-NULL: the key runs on the lane
                                                           (controller/core/ctl_lane.h) with that
                                                           many workers */
};

/* A function of an Etcd offered to the other capabilities (ctl_call). */
struct ctl_service {
    const char *name; /* NULL ends the array */
    ctl_etcd_step_fn fn;
};

/* A capability. Every array may be NULL. */
struct ctl_capability {
    const char *name;                             /* "hibernation", ... */
    int (*enabled)(const struct ctl_config *cfg); /* NULL: always; else nothing of it runs
                                                     (no watch, key, step or service) when
                                                     it returns 0 */
    const struct ctl_watch *watches;
    const struct ctl_etcd_step *steps;
    const struct ctl_key *keys;
    const struct ctl_service *services;
    /* Gauges of the metrics (controller/core/ctl_metrics.h); NULL: not this capability's. */
    size_t (*phase_count)(struct ctl *c, const char *phase); /* warden_hibernation_phase_etcds */
    size_t (*conflicts)(struct ctl *c); /* warden_backup_entry_prefix_conflicts */
    /* Per-object gauges (name NULL ends the array; NULL: none); collect gets the struct ctl. */
    const struct ctl_metrics_gauge *gauges;
};

/* The index "<ns>/<spec.etcdName>" (CTL_INDEX_ETCD_NAME) of a resource whose spec names an Etcd. */
enum kerr ctl_index_etcd_name(void *ctx, const cJSON *obj, struct strlist *values);

/*
 * The value "<ns>/<etcd>" that CTL_INDEX_ETCD_NAME files an Etcd's objects under, into v:
 * 1, or 0 when it does not fit (nothing of that Etcd can be filed under it) or ns or etcd is
 * NULL.
 */
int ctl_index_etcd_value(const char *ns, const char *etcd, char v[STORE_KEY_MAX]);

/* The index value "<ns>/<the string at path>" of obj, none when that string is absent or "". */
enum kerr ctl_index_ns_value(const cJSON *obj, const char *path, struct strlist *values);

#endif
