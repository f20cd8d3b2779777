/*
 * orefpass - owner-reference repair (KubeDirector's, adapted to etcd-druid's
 * components).
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
 * Each repair (oref_repair, controller/core/oref.h) is logged and counted; an event
 * "OwnerReferenceRepaired" names the objects repaired in one pass.
 *
 * The components' repairs of one pass run up to OREFPASS_IN_FLIGHT at a time (helper
 * threads for the pass: an Etcd's twelve components at once), and each holds one of the
 * rctx's repair_slots while it runs: all workers' passes together make at most
 * CTL_REPAIRS_IN_FLIGHT (16) repairs at once, as etcd-druid's own 16-in-flight writes.
 * Their requests are charged to the calling thread (k8s_thread_requests_charge), where the
 * reconcile's request budget counts them.
 *
 * Ownership: arguments BORROWED; results as documented. Thread safety:
 * reentrant (the I/O through the thread-safe client).
 */
#ifndef CONTROLLER_OREFPASS_H
#define CONTROLLER_OREFPASS_H

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/core/oref.h"

#define OREFPASS_IN_FLIGHT 12

struct ctl;
struct ctl_result;
struct rctx;

/*
 * One pass for etcd (BORROWED, live, not restoring): its components (from
 * the cache or the API, see rctx_components), its immutability tasks and
 * its ops tasks (from the caches; none without them). Errors of single objects are
 * collected; the pass goes on and returns the first. st optional.
 */
enum kerr orefpass_run(const struct rctx *x, const cJSON *etcd, struct oref_stats *st,
                       struct kerr_info *err);

/* The step of the contract (controller/core/ctl.h): orefpass_run on the controller's rctx. */
enum kerr orefpass_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                             struct kerr_info *err);

#endif
