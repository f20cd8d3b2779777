/*
 * bkefree - BackupEntries of stores no BackupBucket owns. An Etcd whose
 * object store no bucket owns (no BackupBucket names its container) gets no
 * entry of a bucket (controller/entries/bke.h), so its claim of its prefix
 * used to end with it, while what its sidecar wrote (full snapshots: the
 * cluster's data, Secrets included) stays in the store: another namespace's
 * Etcd admitted on that prefix would restore it at its first start. So such
 * an Etcd gets an entry too, as a retained EtcdBackup copy in such a store
 * does (controller/backups/ebk_keep.h):
 *
 *   - each live Etcd of the cache whose store is a Local one whose container
 *     no BackupBucket names gets the entry of its directory (common/blocal:
 *     its Secret's hostPath read now; no Secret: none), named after the
 *     directory as webhook/pmove names a moved Etcd's earlier one, with
 *     annotation BLOCAL_HOSTPATH_ANNOTATION; it is released (below) once its
 *     Etcd's Secret places it elsewhere, and never adopted by a bucket;
 *   - each live Etcd of the cache whose store is an object store, understood
 *     (common/bstore), owned by no
 *     BackupBucket (none has its spec.container, whatever its provider or
 *     whether its spec is understood), with credentials (its secretRef names a
 *     Secret that exists in its namespace: else its sidecar wrote nothing)
 *     gets the entry named after its claim (claims_entry_name; one of an
 *     earlier release's name is found too, and one of either name is its
 *     claim's only when its spec says so: common/bentry): spec.bucketName
 *     "", spec.prefix and spec.store the Etcd's, spec.etcd {namespace, name,
 *     uid}, spec.claimedAt as a bucket's entry (bkeorigin), phase Active. The
 *     entry of the same namespace, name and prefix left by a predecessor is
 *     reattached (uid, spec.etcdDeletedAt removed);
 *   - each such entry (bucketName "", not a retained copy's) whose Etcd is gone
 *     from its prefix (a GET, never the cache alone) turns PendingDeletion for
 *     good: spec.etcdDeletedAt, a PendingDeletion event. No bucket reconciles
 *     it and no deletion Job ever runs for it (no BackupBucket grants
 *     credentials for that store): it keeps the prefix claimed for its
 *     namespace until the operator deletes it (kubectl delete backupentry),
 *     which releases the prefix and leaves the backups;
 *   - a bucket made later for the store adopts the entry of a live Etcd
 *     (bke.c): from then on it is that bucket's.
 * With --watch-namespace only the Etcds and entries of that namespace.
 *
 * One reconcile for every such store: the queue key "unowned//stores", queued
 * by every Etcd, BackupBucket and bucket-less entry event, and every minute.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (one reconcile at a
 * time, as the work queue ensures).
 */
#ifndef CONTROLLER_BKEFREE_H
#define CONTROLLER_BKEFREE_H

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/entries/bke_ctx.h"

struct ctl;
struct ctl_result;

#define BKEFREE_KIND "unowned" /* the queue key's kind */
#define BKEFREE_NAME "stores"  /* and name */

/* 1 when buckets (a List's items, BORROWED; NULL: none) has one of container's name. */
int bkefree_owned(const cJSON *buckets, const char *container);

/*
 * The stored entry ename, of a live Etcd of bucket's store that the bucket would make, is
 * made the bucket's (spec.bucketName) when it has none (made before the bucket) and is no
 * retained copy's nor of a Local store (its directory's: webhook/pmove); nothing otherwise. Errors
 * of the API server returned.
 */
enum kerr bkefree_adopt(const struct bke_ctx *x, const char *ename, const char *bucket,
                        struct kerr_info *err);

/* Keep the entries of the Etcds in stores no bucket owns (above); *requeue_ms as bke_run. */
enum kerr bkefree_run(const struct bke_ctx *x, long *requeue_ms, struct kerr_info *err);

/* The step of the key BKEFREE_KIND "//" BKEFREE_NAME (controller/core/ctl.h). */
enum kerr bkefree_reconcile(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                            struct kerr_info *err);

#endif
