/*
 * cwriter - any backup sidecar of the cluster that may still write a store: a deletion of a
 * BackupEntry's prefix waits for it (controller/entries/bkeclaim), besides the entry's own
 * Etcd's members (controller/core/cmember).
 *
 * A writer is any container, whatever its name, that may be a backup sidecar
 * (common/ststore's ststore_looks_like_sidecar: the name backup-restore, an etcdbrctl image,
 * a store flag in its command or args, an env STORAGE_CONTAINER), in any object of any
 * namespace that runs or may run one, whoever owns it and however it is labelled:
 *   - a Pod (its spec), unless finished (status.phase Succeeded or Failed: its containers never
 *     run again);
 *   - the pod template of a StatefulSet, Deployment, ReplicaSet or DaemonSet (at 0 replicas
 *     too: it may be scaled up), of a Job unless finished (a condition Complete or Failed
 *     "True"), and of a CronJob (suspended too: it may be resumed). So etcd-druid's
 *     compaction Jobs, an Etcd's sidecar under another container name, a workload whose pods
 *     are not there now, and etcd-warden's own Jobs are writers like any other.
 * It holds a claim c when its store (ststore_read_container, then ststore_claim) overlaps c
 * (common/bstore), or when that store cannot be read or claimed ("unknown": fail closed), or
 * when the container is an init or ephemeral container (whose store is not read). A container
 * that names no store at all writes nothing.
 *
 * Every kind is listed cluster-wide from the API server at the deletion (rare), page by page,
 * stopped at the first hold; a LIST that fails holds it.
 *
 * Ownership: arguments BORROWED; why written into the caller's buffer.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_CWRITER_H
#define CONTROLLER_CWRITER_H

#include <stddef.h>

#include <cJSON.h>

#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kerr.h"

#define CWRITER_WHY_MAX 768

/* The kinds whose objects may run a backup sidecar, in the order they are listed. */
enum cwriter_kind {
    CWRITER_STATEFULSET,
    CWRITER_DEPLOYMENT,
    CWRITER_REPLICASET,
    CWRITER_DAEMONSET,
    CWRITER_JOB,
    CWRITER_CRONJOB,
    CWRITER_POD,
    CWRITER_KINDS
};

/* The resource listed for kind (its plural, as RBAC names it), for docs and tests. */
const struct k8s_resource *cwriter_resource(enum cwriter_kind kind);

/*
 * The hold of obj, an object of kind (hostile JSON allowed), over claim c (see the top): why
 * into why (n bytes), "" when it does not write there. KERR_NOMEM only.
 */
enum kerr cwriter_held_in(const cJSON *obj, enum cwriter_kind kind, const struct bstore_claim *c,
                          char *why, size_t n);

/*
 * cwriter_held_in over every object of every kind of the cluster, listed now (pages of a few
 * hundred, stopped at the first hold): why (n bytes) names the first that holds c, or the LIST
 * that failed (held then too); "" when none. KERR_NOMEM only (in err).
 */
enum kerr cwriter_held(struct k8s_client *k, const struct bstore_claim *c, char *why, size_t n,
                       struct kerr_info *err);

#endif
