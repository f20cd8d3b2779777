/*
 * prefix - one prefix, one cluster: the rule of /webhooks/etcd that refuses
 * an Etcd CREATE or UPDATE whose claim (common/bstore: the store as the
 * backup sidecar sees it, the prefix canonical) overlaps, as the sidecar
 * lists prefixes (one a plain string prefix of the other: "ns/etcd" and
 * "ns/etcd-2"; "" and "/" overlap every prefix of their container), the
 * claim of
 *   - another live Etcd (another namespace/name), or
 *   - a BackupEntry (etcd-warden.io/v1alpha1, spec.store, spec.prefix,
 *     spec.etcd) of another Etcd: one kept for a deleted Etcd within its
 *     grace period (spec.etcdDeletedAt), or one of a live Etcd this
 *     webhook does not watch; or one of the same Etcd with another prefix;
 *   - with opts.backups, an EtcdBackup's copies (etcd-warden.io/v1alpha1,
 *     status.destination, recorded once its copy is being written: an
 *     EtcdBackup that never wrote, a failed one for an Etcd that does not
 *     exist, claims nothing), of any Etcd: a cluster listing them would
 *     restore another's data.
 * A prefix that leaves its container ("../x") is refused. When the caches
 * cannot answer, the request is refused (500), never waved through.
 * An Etcd of the same namespace and name is never a conflict (its own
 * entry: a re-creation reattaches), unless that entry is being deleted
 * (status.phase PREFIX_ENTRY_DELETING: the deletion Job would delete the new
 * cluster's first snapshots with the old ones): then it waits for the entry
 * to go. An UPDATE that keeps the store and
 * prefix as they were is never refused, so Etcds already in conflict when
 * the rule was installed are not disrupted. Refusals are 403 / Forbidden,
 * naming the other owner.
 *
 * Refusals name the other owner only when it is of the requester's
 * namespace; otherwise "a prefix claimed from another namespace" (the
 * details go to warden-webhook's log and warden-snapshot check-prefixes).
 *
 * Answered from watch-fed caches of this module: Etcds (of every
 * namespace, whatever --watch-namespace says: a claim is cluster-wide) and BackupEntries
 * (cluster-scoped), each projected by prefix_project to {metadata {name,
 * namespace}, claim {namespace, name, store, prefix (cleaned), deletedAt}}; an Etcd's also
 * {secret} (its backup Secret's name), an EtcdBackup's {etcdName, destination {provider,
 * endpointOverride, secret}}
 * and indexed by store key (PREFIX_INDEX_STORE): webhook/prefix_cache.
 *
 * Ownership: arguments BORROWED. Thread safety: prefix_check / prefix_cache_decide
 * from any number of threads once started; new/start/free from one thread.
 */
#ifndef WEBHOOK_PREFIX_H
#define WEBHOOK_PREFIX_H

#include <cJSON.h>

#include "common/blocal.h"
#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"
#include "webhook/review.h"

#define PREFIX_INDEX_STORE "store"
/* The index value of claims whose store cannot be keyed (claim.invalid): in every store's way. */
#define PREFIX_STORE_UNKEYED "?"

/* Which kind of object prefix_project reads. */
enum prefix_kind { PREFIX_ETCD, PREFIX_ENTRY, PREFIX_BACKUP };

/* How a refusal describes another namespace's claim to the requester (nothing more of it). */
#define PREFIX_OTHER_NAMESPACE "a prefix claimed from another namespace"

/* store_project_fn: ctx points at an enum prefix_kind. Objects without a usable store
 * are kept with no claim (and so in no index). */
enum kerr prefix_project(void *ctx, const cJSON *obj, cJSON **out);

/* store_index_fn of PREFIX_INDEX_STORE over projected objects. */
enum kerr prefix_index_store(void *ctx, const cJSON *obj, struct strlist *values);

/*
 * prefix_check with a third cache, EtcdBackups projected with PREFIX_BACKUP
 * (NULL: not consulted): the copies of a backup (status.destination, else
 * spec.destination) are a claim too, whoever's backup it is.
 */
enum kerr prefix_check3(struct store *etcds, struct store *entries, struct store *backups,
                        const struct review_req *req, struct review_resp *resp,
                        struct kerr_info *err);

/*
 * The rule for req (an Etcd review) against the projected caches etcds and
 * entries (either may be NULL: not consulted). When it refuses, resp is
 * denied; otherwise resp is left as it was. KERR_NOMEM / KERR_TOOBIG when
 * the answer could not be built.
 */
/*
 * prefix_check3 deciding Local claims by their directory on the node, the hostPaths read now
 * through k (webhook/plocal; buckets: the cached BackupBuckets, for the entries' directories).
 * k NULL: as prefix_check3 (every Local store taken at etcd-druid's default hostPath). routed:
 * the Etcds' StatefulSets are judged by webhook/stsvol, so another namespace's claim no
 * StatefulSet may mount is in nobody's way in their own part (plocal_in_the_way); 0: every
 * overlap counts.
 */
enum kerr prefix_check_local(struct store *etcds, struct store *entries, struct store *backups,
                             struct k8s_client *k, struct store *buckets, int routed,
                             const struct review_req *req, struct review_resp *resp,
                             struct kerr_info *err);

enum kerr prefix_check(struct store *etcds, struct store *entries, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err);

/* The claim of obj as prefix_project reads it (see there) into out; 0 when it has none. */
int prefix_claim_of(enum prefix_kind k, const cJSON *obj, cJSON *out);

/*
 * Deny resp for req's prefix overlapping other (described) of namespace other_ns in store.
 * The description reaches the requester only when other_ns is its own namespace; otherwise
 * it reads "a prefix claimed from another namespace" (the details go to the log).
 */
enum kerr prefix_deny(struct review_resp *resp, const struct review_req *req, const char *other,
                      const char *other_ns, const char *store);

/*
 * The claim of req (an Etcd CREATE, or an UPDATE changing its store or prefix) recorded in the
 * claim Lease of its store in namespace ns (common/pclaim): denied when a claim admitted
 * meanwhile overlaps it, an error (500) when it cannot be recorded; resp untouched otherwise.
 */
enum kerr prefix_lock(struct k8s_client *k, const char *ns, const struct review_req *req,
                      struct review_resp *resp, struct kerr_info *err);

#endif
