/*
 * claimguard - the member claims of a live Etcd, decided from the Etcd (which the API
 * server keeps) rather than from who mounts them right now (pods are not routed to the
 * webhook: a tenant deletes them first) or from a StatefulSet (an orphaning DELETE takes
 * it away while the members' data stays on the claims).
 *
 * A claim of Etcd E is a PVC of E's namespace named "<template>-<E>-<n>" (etcd-druid's
 * StatefulSet is named as its Etcd, its claim template spec.volumeClaimTemplate or the
 * Etcd's name; any template is read, as the planted-claim check reads it: the Etcd's field
 * is mutable where its CRD has no CEL, and the StatefulSet may be gone), n an ordinal as
 * the StatefulSet controller writes it (decimal, no leading zero, an int32), unless the claim
 * is proven another application's whose name reads so too (webhook/claimalias.h: DELETE only;
 * a StatefulSet E the API server does not answer for is a 500).
 *
 * - DELETE (claimguard_delete): a claim of a live Etcd (found, no deletionTimestamp) whose
 *   ordinal is in the Etcd's member range ([0, spec.replicas); every ordinal when
 *   spec.replicas is 0 or not a number: the sleeping members' count is not on the Etcd) is
 *   deleted only while the Etcd is hibernated with a final snapshot of this sleep (phase
 *   ScalingDown or Hibernated, a backup store, its traffic cut, a full snapshot task that
 *   Succeeded after the cut; its StatefulSet, read from the API server, at 0 replicas,
 *   created no later than the cut and as the scale to 0 on the checked snapshot left it
 *   (common/hibguard's hibguard_checked_slept: a StatefulSet re-created, with pods in its
 *   status, or two or more changes past the stamp, where a scale-up and down may hide, is no
 *   longer the one scaled down on the snapshot); and its store stamp
 *   made afresh, its backup Secret read from the API server, equal to HIBGUARD_ANN_STORE: a
 *   store moved through its spec, its secretRef or the Secret is not the snapshot's; a
 *   Secret that cannot be read is a 500) or on a break glass that counts (once per value). An Etcd
 * that is gone (confirmed) or being deleted (its deletionTimestamp) has no live claims.
 * - CREATE (claimguard_create): a claim of an Etcd that exists carrying spec.dataSource,
 *   spec.dataSourceRef or spec.volumeName (a clone, a volume snapshot, a volume that may
 *   hold old data) is refused, break glass aside (once per value): the members would start
 *   on that data instead of the final snapshot.
 * - UPDATE (claimguard_create too): the same for an UPDATE that sets spec.volumeName of such a
 *   claim while it is empty (kube-apiserver allows it once, on a claim not bound yet), by
 *   anyone but the persistent volume controller that binds claims
 *   (system:serviceaccount:kube-system:persistent-volume-binder, or
 *   system:kube-controller-manager without service account credentials).
 *
 * A lookup that fails, or a cache miss nobody confirmed, is a 500.
 *
 * Thread safety: reentrant, as struct lookup allows.
 */
#ifndef WEBHOOK_CLAIMGUARD_H
#define WEBHOOK_CLAIMGUARD_H

#include <stddef.h>
#include <time.h>

#include "common/kerr.h"
#include "webhook/lookup.h"
#include "webhook/pvcguard.h"
#include "webhook/review.h"

/*
 * The next reading of PVC name name as "<template>-<etcd>-<ordinal>" (template and etcd not
 * empty), from *pos on (0 on the first call; advanced): 1 with the Etcd's name in etcd
 * (size bytes, NUL-terminated) and *ordinal, 0 when there is no further one. Pure: name is
 * any text (NULL: none).
 */
int claimguard_split(const char *name, size_t *pos, char *etcd, size_t size, long *ordinal);

/* True when a PVC object carries spec.dataSource, spec.dataSourceRef or spec.volumeName
 * (not empty), into *field its name (static). */
int claimguard_seeded(const cJSON *pvc, const char **field);

/*
 * Judge a PVC DELETE as above at time now (what break glass expires against). Admitted on
 * a break glass that counts: its use and Etcd into *pg (only when pg->gp.what is "" on
 * entry; otherwise a request already admitted on break glass is not judged), for the
 * caller to record once its decision allows (glassadm_settle). *decided 1: resp holds the
 * refusal or the 500; 0: not refused here. Any other request: 0, nothing looked up.
 */
enum kerr claimguard_delete(time_t now, const struct lookup *lk, const struct review_req *req,
                            struct pvcguard_glass *pg, struct review_resp *resp, int *decided);

/*
 * A wake from another store: an UPDATE of StatefulSet (or its scale) m->name of Etcd
 * m->part_of from 0 replicas to more, while etcd was put to sleep with a final snapshot
 * (etcd->snapshot_store) and some claim of a member it brings up is gone (those members restore
 * from the backup store), is refused when the store etcd names now, its Secret read from the
 * API server, is not the final snapshot's (store_problem above): the members would start from
 * a store without it. With every claim there the members keep their data. A PVC list or Secret
 * that cannot be read is a 500. *decided as claimguard_delete; any other request: 0.
 */
enum kerr claimguard_wake(const struct lookup *lk, const struct review_req *req,
                          const struct member_meta *m, const struct lookup_etcd *etcd,
                          struct review_resp *resp, int *decided);

/* Judge a PVC CREATE or UPDATE as above; *pg, *decided as claimguard_delete. */
enum kerr claimguard_create(time_t now, const struct lookup *lk, const struct review_req *req,
                            struct pvcguard_glass *pg, struct review_resp *resp, int *decided);

#endif
