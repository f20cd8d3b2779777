/*
 * cmember - what an Etcd's members, or any other backup sidecar of the cluster, may still hold
 * in a store: a deletion of a BackupEntry's prefix waits for it (controller/entries/bkeclaim).
 *
 * An Etcd whose spec.backup.store moved is not moved until etcd-druid rewrote its
 * StatefulSet's pod template and the pods rolled (common/ststore). So a deletion of claim c,
 * an entry of Etcd ns/name, is held while:
 *   - that Etcd's StatefulSet (the object of the Etcd's name in its namespace, if any, read
 *     from the API server now) names in its template a store overlapping c (common/bstore),
 *     or a store that cannot be read or claimed ("unknown": fail closed), or its rollout is
 *     not complete (ststore_rolled_out: its pods may run an earlier template);
 *   - that Etcd is hibernated (its final-snapshot stamp, common/hibguard's HIBGUARD_ANN_STORE,
 *     exists): the stamp is a digest and does not say which prefix the final snapshot is in,
 *     so every entry of the sleeping Etcd is held until it wakes (a move away and back while
 *     asleep would otherwise empty the final snapshot's prefix and make the stamp equal again).
 *   - a pod that is (or was) a member of that Etcd still exists and may run: a pod of ns
 *     carrying etcd-druid's member labels (app.kubernetes.io/managed-by=etcd-druid,
 *     app.kubernetes.io/part-of=<name>, listed from the API server now), not finished
 *     (status.phase Succeeded or Failed: its containers never run again), whose backup sidecar
 *     (its own spec, common/ststore's ststore_read_spec) writes a store overlapping c, or one
 *     that cannot be read or claimed (fail closed). Such pods outlive their StatefulSet when it
 *     was deleted orphaning them (kubectl delete --cascade=orphan) and keep writing. A LIST
 *     that fails holds it too.
 * No StatefulSet, no Etcd and no such pod, or a template whose sidecar names no store (an Etcd
 * without a backup store: its members write nothing): nothing holds it (cmember_held).
 *
 * Any other writer holds it too: controller/core/cwriter.
 *
 * Every store is read by one helper (a pod spec: a template's or a pod's; common/ststore's
 * ststore_read_spec, then ststore_claim): what it cannot read or claim is "unknown".
 *
 * Ownership: arguments BORROWED; why written into the caller's buffer.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_CMEMBER_H
#define CONTROLLER_CMEMBER_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kerr.h"

#define CMEMBER_WHY_MAX   768
#define CMEMBER_LABEL_MAX 63 /* the longest label value (the Etcd name in part-of) */

/*
 * The decision over objects already read: etcd (NULL: gone) and sts (NULL: none), the
 * entry's claim c. Why the deletion is held into why (n bytes), "" when nothing holds it.
 * KERR_NOMEM only.
 */
enum kerr cmember_held_in(const cJSON *etcd, const cJSON *sts, const struct bstore_claim *c,
                          char *why, size_t n);

/*
 * The label selector of Etcd name's member pods (etcd-druid's labels, see above) into sel (n
 * bytes): 1; 0 when name is longer than a label value may be (no pod can carry it: etcd-druid
 * cannot have created members) or sel too small.
 */
int cmember_selector(const char *name, char *sel, size_t n);

/*
 * The hold of the member pods (items: an array of Pods, those listed by cmember_selector in
 * namespace ns; NULL: none) over claim c of Etcd ns/name: why one holds it into why (n bytes),
 * "" when none does. etcd and sts (NULL: gone), the Etcd and its StatefulSet as read, only
 * word why a pod runs on: not rolled onto the StatefulSet's template yet, or left running by
 * a deleted StatefulSet (or Etcd). KERR_NOMEM only.
 */
enum kerr cmember_pods_held_in(const cJSON *items, const cJSON *etcd, const cJSON *sts,
                               const char *ns, const char *name, const struct bstore_claim *c,
                               char *why, size_t n);

/*
 * cmember_held_in over Etcd ns/name and its StatefulSet read from the API server now, then
 * cmember_pods_held_in over its member pods listed now (a failed LIST: held, why says so). Errors
 * of the reads (but not found) are returned: the deletion must not start then either.
 */
enum kerr cmember_held(struct k8s_client *k, const char *ns, const char *name,
                       const struct bstore_claim *c, char *why, size_t n, struct kerr_info *err);

/*
 * Whether a final snapshot taken now by etcd's members is in the store its spec names, as
 * warden-controller stamps it (HIBGUARD_ANN_STORE): 1 when sts's rollout is complete (at
 * generation gen, the StatefulSet the final snapshot was checked against, common/ststore's
 * ststore_rolled_out; 0: its current one) and its
 * template's store is the spec's (one key, one canonical prefix; a Local store placed by
 * secret, the Etcd's backup Secret as read, NULL: none); 0 with the reason in why (n bytes)
 * when the template is unknown, its rollout incomplete, sts NULL, or the stores differ (no
 * stamp then: the members' claims stay protected). KERR_NOMEM only.
 */
enum kerr cmember_stamp_store(const cJSON *etcd, const cJSON *secret, const cJSON *sts, int64_t gen,
                              int *same, char *why, size_t n);

#endif
