/*
 * oref - owner-reference repair (KubeDirector's, ../shared/reference/
 * kubedirector.md §3, adapted to etcd-druid's components).
 *
 * On every reconcile of a live, non-restoring Etcd, each managed component
 * (labels app.kubernetes.io/managed-by=etcd-druid, part-of=<etcd>) of a kind
 * etcd-druid owns by the Etcd (every kind but PersistentVolumeClaim: an owner
 * reference there would make deleting an Etcd delete its data) carries
 * exactly one controller reference to the live Etcd's UID, the one etcd-druid
 * writes (etcdspec_owner_ref): a missing one is added (Velero strips
 * top-level ownerReferences), a reference to an Etcd of the same name with
 * another UID (stale: the Etcd was re-created) is dropped, foreign owners are
 * kept (with controller=false: an object has one controller). The same holds
 * for the Etcd's ExtendFullSnapshotImmutabilityTasks and for the
 * EtcdOpsTasks hibernation made (label etcd-warden.io/final-snapshot-of) or
 * an Etcd of that name owned (those of the caches whose spec.etcdName is the
 * Etcd; a user's own EtcdOpsTask is not given an owner). The EtcdStatusBackup's
 * reference is kept by sbk (it writes the backup with oref_compute's
 * references), the CronJob -> task reference by imt (with oref_repair).
 *
 * A repair is a JSON patch [{"op":"test","path":"/metadata/resourceVersion"},
 * {"op":"add","path":"/metadata/ownerReferences",...}]: a concurrent write
 * fails the test (422, or 409), the object is read again and the repair
 * computed anew, up to ORF_TRIES times; nothing is ever overwritten blindly.
 * Each repair is logged and counted; an event "OwnerReferenceRepaired" names
 * the objects repaired in one pass.
 *
 * Ownership: arguments BORROWED; results as documented. Thread safety:
 * reentrant (the I/O through the thread-safe client).
 */
#ifndef CONTROLLER_OREF_H
#define CONTROLLER_OREF_H

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

struct ctl;
struct ctl_result;
struct rctx;

#define OREF_TRIES 5

/* Counters of one pass (or one object). */
struct oref_stats {
    int checked;   /* objects looked at */
    int repaired;  /* objects patched */
    int conflicts; /* precondition failures retried */
};

/*
 * The ownerReferences refs (BORROWED; an array or NULL) should have so that
 * want (BORROWED; a controller reference {apiVersion, kind, name, uid, ...})
 * is the one controller: references with want's uid, or to an owner of
 * want's kind, API group and name with another uid, are replaced by one copy
 * of want (at the place of the first of them, else at the end); every other
 * reference is kept, its controller flag cleared. On KERR_OK *out OWNS the
 * new array and *changed says whether it differs from refs.
 */
enum kerr oref_compute(const cJSON *refs, const cJSON *want, cJSON **out, int *changed,
                       struct kerr_info *err);

/*
 * Repair one object (res, ns, name) so that its ownerReferences hold want
 * (BORROWED) as oref_compute says. cur (BORROWED, may be NULL: read with a
 * GET) is what the caller knows of it (metadata.resourceVersion and
 * ownerReferences suffice, as in a projected cache). Patches with the
 * resourceVersion test; on a failed precondition reads the object again
 * (st->conflicts) and retries, up to OREF_TRIES. An object that is gone is
 * not an error. st (optional) is added to.
 */
enum kerr oref_repair(struct k8s_client *k, const struct k8s_resource *res, const char *ns,
                      const char *name, const cJSON *cur, const cJSON *want, struct oref_stats *st,
                      struct kerr_info *err);

/*
 * One pass for etcd (BORROWED, live, not restoring): its components (from
 * the cache or the API, see rctx_components), its immutability tasks and
 * its ops tasks (from the caches; none without them). Errors of single objects are
 * collected; the pass goes on and returns the first. st optional.
 */
enum kerr oref_run(const struct rctx *x, const cJSON *etcd, struct oref_stats *st,
                   struct kerr_info *err);

/* The step of the contract (controller/ctl.h): oref_run on the controller's rctx. */
enum kerr oref_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                         struct kerr_info *err);

#endif
