/*
 * bkadm - the destinations of EtcdBackups, EtcdBackupSchedules and EtcdRestores
 * (etcd-warden.io/v1alpha1) checked at admission (POST /webhooks/backups), so
 * that a tenant sees a refusal at `kubectl apply` rather than a Failed phase:
 *
 *   - EtcdBackup spec.destination, EtcdBackupSchedule
 *     spec.backupTemplate.destination, EtcdRestore spec.target.store (its
 *     provider and endpointOverride, when absent, from spec.etcdTemplate's
 *     store, else the source Etcd's as cached);
 *   - refused (403): a store that cannot be keyed (an unknown provider: the
 *     message lists the known ones; no container); a prefix that is the whole
 *     container ("", ".", "/") or leaves it ("../x"); a prefix overlapping, as
 *     the backup sidecar lists prefixes (common/bstore), a live Etcd's, a
 *     BackupEntry's, or the copies an EtcdBackup wrote (status.destination:
 *     an EtcdBackup claims its destination once its copy is being written,
 *     never before), except the copies of EtcdBackups of the same Etcd in the
 *     same namespace (a schedule's history shares one prefix);
 *   - an EtcdRestore's target provider, when absent, is told by common/rtarget
 *     (the controller's rule) from the template, the cached source Etcd's store
 *     and the source store (spec.source.store or the cached source EtcdBackup's
 *     spec.destination); when none of them tells it the restore is refused (fail
 *     closed: its target is a claim from admission); an EtcdRestore UPDATE that
 *     changes its spec is refused (immutable: its copy may be writing the
 *     target admitted; the chart's CRD says so too, as a CEL rule);
 *   - an EtcdRestore's spec.source.store is refused when the bucket owner does
 *     not authorise the namespace there (webhook/bauth, as a claim), or when a
 *     BackupEntry in phase Deleting overlaps it (its prefix is being emptied);
 *   - an allowed EtcdRestore CREATE's target is recorded in its store's claim
 *     Lease (common/pclaim, PCLAIM_KIND_RESTORE, with the target's provider and
 *     endpoint as resolved and the restore's uid: warden-controller copies only
 *     into that store and prefix, common/rtrec): it counts while the restore
 *     is stored and claims it (common/rtarget's rtarget_claims), so an Etcd, another restore
 *     or an EtcdBackup/schedule destination overlapping it is refused while
 *     the copy runs (the Etcd the restore creates excepted); an EtcdBackup's
 *     or schedule's destination is checked against those records (read only);
 *     a Lease that cannot be read or written refuses (500);
 *   - an UPDATE keeping the destination (and an EtcdRestore's source store) is
 *     never refused.
 * Refusals name the other owner only to its own namespace (prefix_deny's rule).
 * When the caches cannot answer the request is refused (500).
 *
 * Ownership: arguments BORROWED. Thread safety: as webhook/prefix.
 */
#ifndef WEBHOOK_BKADM_H
#define WEBHOOK_BKADM_H

#include "common/kerr.h"
#include "common/store.h"
#include "webhook/prefix.h"
#include "webhook/prefix_cache.h"
#include "webhook/review.h"

/*
 * The rule for req against the projected caches of webhook/prefix (etcds, entries, backups;
 * any may be NULL: not consulted). Denies resp when it refuses; otherwise leaves it.
 */
enum kerr bkadm_check(struct store *etcds, struct store *entries, struct store *backups,
                      const struct review_req *req, struct review_resp *resp,
                      struct kerr_info *err);

/*
 * bkadm_check deciding Local stores by their directory on the node, the hostPaths read now
 * through k (webhook/bklocal; buckets: the cached BackupBuckets). k NULL: as bkadm_check
 * (every Local store taken at etcd-druid's default hostPath). routed: as prefix_check_local's.
 */
enum kerr bkadm_check_local(struct store *etcds, struct store *entries, struct store *backups,
                            struct k8s_client *k, struct store *buckets, int routed,
                            const struct review_req *req, struct review_resp *resp,
                            struct kerr_info *err);

/* bkadm_check against c's caches; an error (500) until they synced. */
enum kerr bkadm_decide(struct prefix_cache *c, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err);

#endif
