/*
 * bke - backups that outlive their Etcd: BackupBuckets and the BackupEntries
 * the controller keeps in them (etcd-warden.io/v1alpha1, both cluster-scoped;
 * charts/etcd-warden/crds/etcd-warden.io_backup*.yaml).
 *
 * A BackupBucket names a store shared by many Etcds (spec.provider,
 * spec.container, spec.endpointOverride), the operator's credentials
 * (spec.secretRef {namespace, name}) and spec.deletionGracePeriod, a duration
 * string ("168h", the default: 7 days; "1h30m", "90s").
 *
 * An Etcd matches a bucket when its spec.backup.store has the same provider
 * family (compared as etcd-backup-restore's names: "aws", "s3" are "S3"; ECS
 * and OCS are S3 too) and the same container, whatever its endpointOverride
 * (common/bstore: the sidecar may take the endpoint from the Secret); an Etcd
 * whose store is not understood may match any bucket of its container and
 * keeps its entries there (bkeclaim_same_store's BKECLAIM_MAYBE). The controller
 * keeps one BackupEntry per matching Etcd, named after its claim
 * (bke_entry_name: the canonical prefix as a name, "--" and 16 hex digits of
 * the sha256 of the store and prefix; an Etcd that moved to another prefix
 * gets a second entry; an entry of an earlier release's 8-digit name is found
 * too, and an entry of either name is the claim's only when its spec is:
 * common/bentry), with spec.bucketName, spec.prefix
 * (the Etcd's store prefix), spec.store {provider (etcd-backup-restore's
 * name), container, endpointOverride} (the bucket's, which the webhook
 * compares prefixes within) and spec.etcd {namespace, name, uid}, no owner
 * reference. Status: phase Active or PendingDeletion, and a message.
 *
 * One reconcile per bucket (queue key "bucket//<bucket name>"; every Etcd
 * event queues every bucket's key, an entry's event its bucket's):
 *   - each Etcd of the cache that matches the bucket: its entry (same
 *     namespace, name and canonical prefix, common/bstore) is created, or
 *     reattached when it is PendingDeletion or carries another uid (an Etcd
 *     re-created within the grace period: spec.etcdDeletedAt removed, the
 *     uid updated, phase Active again; event Reattached);
 *   - each entry of the bucket no live matching Etcd claims (checked with a
 *     GET of the Etcd, never from the cache alone) turns PendingDeletion:
 *     spec.etcdDeletedAt = now, event PendingDeletion naming the time its
 *     backups become deletable (etcdDeletedAt + the grace period); the key
 *     is queued again at that time. An Etcd whose store moved to another
 *     prefix or bucket leaves its old entry the same way.
 *     With --watch-namespace, entries of Etcds of other namespaces are left
 *     alone;
 *   - an entry past its grace period: a Job deletes its backups and then the
 *     entry goes (phase Deleting; controller/entries/bkejob.h);
 *   - the bucket keeps the finalizer BKE_FINALIZER while entries reference
 *     it, and status {entryCount, observedGeneration, conditions [Ready]}:
 *     True/EntriesKept, False/InvalidSpec (a bad provider or grace period; a
 *     Warning event), False/SecretNotFound (spec.secretRef names no Secret:
 *     entries neither made nor deleted; a Warning event; looked at again every
 *     BKEBUCKET_SECRET_RETRY_MS), or, when deleted while entries remain, False/
 *     EntriesRemain naming them (a Warning event DeletionBlocked); no entry is
 *     created for a bucket being deleted. The finalizer goes when the last
 *     entry does.
 * Events are about the entry or the bucket (kind BackupEntry/BackupBucket,
 * namespace "default" as for every cluster-scoped object).
 *
 * Ownership: arguments BORROWED; results as documented. Thread safety:
 * reentrant (one reconcile per key at a time, as the work queue ensures).
 */
#ifndef CONTROLLER_BKE_H
#define CONTROLLER_BKE_H

#include <cJSON.h>
#include <time.h>

#include "common/bstore.h"
#include "common/events.h"
#include "common/k8s.h"
#include "common/kerr.h"
#include "common/strlist.h"
#include "controller/core/kname.h"
#include "controller/entries/bke_ctx.h"

struct ctl;
struct ctl_result;
struct store;

/* 1 when etcd's spec.backup.store is bucket's store (provider, container, endpoint). */
int bke_store_matches(const cJSON *bucket, const cJSON *etcd);

/* The index BKE_INDEX_BUCKET of the entry cache (common/store's store_index_fn). */
enum kerr bke_index_bucket(void *ctx, const cJSON *obj, struct strlist *values);

/*
 * When entry's prefix may be emptied: grace_ms after the later of spec.etcdDeletedAt (the
 * window's end) and spec.retainedAt (a retained EtcdBackup copy handed over, however old the
 * copy). Call only for an entry with a readable spec.etcdDeletedAt.
 */
time_t bke_due(const cJSON *entry, long grace_ms);

/* Reconcile the bucket named bucket; *requeue_ms set when it is to be looked at again. */
enum kerr bke_run(const struct bke_ctx *x, const char *bucket, long *requeue_ms,
                  struct kerr_info *err);

/* The step of the key "bucket//<name>" (controller/core/ctl.h); ns is "". */
/* Cached BackupEntries (s, BORROWED; NULL: 0) whose PrefixConflict condition is True:
 * Etcds that shared a prefix before the webhook's rule, for a metric. */
size_t bke_conflicts(struct store *s);

enum kerr bke_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                        struct kerr_info *err);

#endif
