/*
 * cmember - what an Etcd's members may still hold in a store its spec no longer names: a
 * deletion of a BackupEntry's prefix waits for it (controller/entries/bkeclaim).
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
 * No StatefulSet and no Etcd, or a template whose sidecar names no store (an Etcd without a
 * backup store: its members write nothing): nothing holds it.
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

#define CMEMBER_WHY_MAX 768

/*
 * The decision over objects already read: etcd (NULL: gone) and sts (NULL: none), the
 * entry's claim c. Why the deletion is held into why (n bytes), "" when nothing holds it.
 * KERR_NOMEM only.
 */
enum kerr cmember_held_in(const cJSON *etcd, const cJSON *sts, const struct bstore_claim *c,
                          char *why, size_t n);

/*
 * cmember_held_in over Etcd ns/name and its StatefulSet read from the API server now. Errors
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
