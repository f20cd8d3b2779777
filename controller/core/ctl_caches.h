/*
 * ctl_caches - the watch-fed caches of warden-controller and the mapping of
 * their events to queue keys (controller/core/ctl.h, controller/core/ctl_cap.h).
 *
 * One informer per resource: the core's Etcds and the resources the
 * capabilities watch (struct ctl_watch) are kept as compact JSON text
 * (metadata.managedFields dropped), with the indexes the watches name; the
 * nine kinds of managed components (label app.kubernetes.io/managed-by=etcd-druid)
 * are projected to apiVersion, kind and metadata (name, namespace, uid,
 * resourceVersion, labels, ownerReferences) and kept once, in one store
 * keyed "<kind>/<ns>/<name>" with the index CTL_INDEX_PART_OF ("<ns>/<part-of>")
 * that their nine informers share (each relists its "<kind>/" keys only).
 *
 * Every add, update (resyncs included) and delete queues keys: on_key with
 * an Etcd's own "etcd/<ns>/<name>", a component's etcd/<ns>/<part-of label>
 * (both Etcds' when the label changed), then the key functions of the
 * watches of the object's resource, in the capabilities' order. The own
 * flag they get is 0 for an update that changed nothing but the status
 * (and resourceVersion): controller-runtime's GenerationChangedPredicate,
 * with metadata changes counted too.
 *
 * Ownership: struct ctl_caches (ctl_caches_new / ctl_caches_free) OWNS its
 * informers and stores; the client, the controller, the capabilities and
 * the option strings are BORROWED.
 * Thread safety: ctl_caches_store, ctl_caches_synced and ctl_caches_objects
 * from any thread; new/start/stop/free from one. The key functions run on
 * the informer threads.
 */
#ifndef CONTROLLER_CTL_CACHES_H
#define CONTROLLER_CTL_CACHES_H

#include <stddef.h>

#include "common/kerr.h"

struct ctl;            /* controller/core/ctl.h */
struct ctl_capability; /* controller/core/ctl_cap.h */
struct k8s_client;     /* common/k8s.h */
struct store;          /* common/store.h */

#define CTL_LABEL_PART_OF    "app.kubernetes.io/part-of"
#define CTL_LABEL_MANAGED_BY "app.kubernetes.io/managed-by"

/* Called with each queue key of the core's own; strings BORROWED for the call. */
typedef void (*ctl_caches_key_fn)(void *ctx, const char *kind, const char *ns, const char *name);

struct ctl_caches_opts {
    struct k8s_client *client;                /* BORROWED, required */
    ctl_caches_key_fn on_key;                 /* required: an Etcd's and a component's keys */
    void *ctx;                                /* BORROWED, passed to on_key */
    struct ctl *ctl;                          /* BORROWED, passed to the capabilities' key fns */
    const char *ns;                           /* BORROWED; NULL or "": every namespace */
    long resync_ms;                           /* Etcds re-delivered this often (0: never) */
    const struct ctl_capability *const *caps; /* BORROWED: their watches */
    size_t ncaps;
};

struct ctl_caches;

/* Build the informers and stores (nothing runs). On KERR_OK *out OWNS them. */
enum kerr ctl_caches_new(const struct ctl_caches_opts *o, struct ctl_caches **out,
                         struct kerr_info *err);

/* Start every informer. */
enum kerr ctl_caches_start(struct ctl_caches *c, struct kerr_info *err);

/* True once every informer has listed. */
int ctl_caches_synced(struct ctl_caches *c);

/* The cache of resource (ctl_store), or NULL. BORROWED. */
struct store *ctl_caches_store(struct ctl_caches *c, const char *resource);

/* Objects in all caches (the components counted once). */
size_t ctl_caches_objects(struct ctl_caches *c);

/* Stop every informer (joins their threads). Idempotent. */
void ctl_caches_stop(struct ctl_caches *c);

/* Stop and free. NULL is a no-op. */
void ctl_caches_free(struct ctl_caches *c);

#endif
