/*
 * sbk - the status backup of an Etcd (KubeDirector's kdstatusbackup).
 *
 * On every live (no deletionTimestamp), non-restoring Etcd:
 *   - the annotation etcd-warden.io/status-backup-exists is "true", or
 *     "false" with --backup-cluster-status=false (a merge patch of the
 *     annotation carrying the Etcd's resourceVersion, so a concurrent write is
 *     a conflict, retried by the dispatch);
 *   - when on, an EtcdStatusBackup (etcd-warden.io/v1alpha1) of the same name
 *     and namespace, owned by the Etcd (its controller reference, kept by
 *     oref_compute), with spec.statusBackup = the Etcd's status ({} when it
 *     has none) and spec.components = the inventory of its managed components
 *     that etcd-druid owns by the Etcd (every kind but PVCs: the StatefulSet
 *     makes those), each {apiVersion, kind, name}, sorted by kind then name;
 *     created when missing, replaced (PUT with its resourceVersion) when the
 *     spec or the owner references differ, else left alone (read from the
 *     status-backup cache when there is one, else a GET; a stale cached copy
 *     makes the PUT a conflict, retried by the dispatch);
 *   - when off, the backup is deleted (NotFound is fine).
 * Nothing is written when nothing changed. Events: StatusBackupCreated,
 * StatusBackupDeleted (Normal).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_SBK_H
#define CONTROLLER_SBK_H

#include <cJSON.h>

#include "common/kerr.h"

struct ctl;
struct ctl_result;
struct rctx;

/* What one pass wrote. */
struct sbk_stats {
    int annotated; /* the annotation was patched */
    int created;   /* the backup was created */
    int updated;   /* the backup was replaced */
    int deleted;   /* the backup was deleted */
};

/*
 * The spec an EtcdStatusBackup of etcd (BORROWED) should have, given its
 * components (BORROWED: an array of objects with apiVersion, kind and
 * metadata.name, as the components cache holds them): {statusBackup,
 * components}. On KERR_OK *out OWNS it.
 */
enum kerr sbk_desired_spec(const cJSON *etcd, const cJSON *components, cJSON **out,
                           struct kerr_info *err);

/* One pass for etcd (BORROWED). st optional. */
enum kerr sbk_run(const struct rctx *x, const cJSON *etcd, struct sbk_stats *st,
                  struct kerr_info *err);

/* The step of the contract (controller/core/ctl.h): sbk_run on the controller's rctx. */
enum kerr sbk_reconcile(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *err);

#endif
