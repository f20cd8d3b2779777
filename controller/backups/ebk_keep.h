/*
 * ebk_keep - a retained copy handed to a BackupEntry. An EtcdBackup with
 * deletionPolicy Retain leaves its copy (a full snapshot of the cluster, in
 * etcd-backup-restore's layout) when it is deleted; its claim of the
 * destination prefix (status.destination) would go with the object, and
 * another namespace's Etcd could then be admitted there and restore the
 * copy. So before the EtcdBackup's finalizer goes, the copy's prefix is given
 * to a BackupEntry, the object for backups that outlive what wrote them
 * (controller/entries/bke.h, docs/backup-entries.md):
 *
 *   name        claims_entry_name of the copy's claim (one claim, one name);
 *   spec        bucketName: the BackupBucket of the destination's store (the
 *               oldest, then the first by name, when several), "" when no
 *               bucket owns it (then no bucket reconciles the entry: it
 *               stays until the operator deletes it); prefix: the copy's;
 *               store {provider (etcd-backup-restore's name), container,
 *               endpointOverride}: the destination's; etcd {namespace, name}:
 *               the backup's namespace and spec.etcdName; claimedAt and
 *               etcdDeletedAt: the copy's write window (ebk_copy_window:
 *               status.copyStartedAt to status.completionTime for a copy
 *               read back; a copy whose result was never read, its Job
 *               deleted first, to the later of its failure and its Job's
 *               deadline). The entry is PendingDeletion from the start, its
 *               deletion window the copy's write window (only what the copy
 *               may have written is ever deleted, past the bucket's grace
 *               period);
 *   annotation  EBK_KEEP_ANNOTATION: "<namespace>/<name>" of the backup; a Local
 *               copy's also EBK_KEEP_HOSTPATH.
 *
 * The copy wrote with the destination's Secret, its bucket's deletions delete with the bucket's:
 * unless that Secret, still the version the copy Job was made from (EBK_SECRET_VERSION), holds
 * the bucket's credentials (common/bcred, the rule an Etcd's entry needs), the entry gets
 * BENTRY_CREDS_LOST one second before the copy began: the prefix stays claimed, and its
 * deletion deletes nothing (what lies there in the bucket's store is not shown to be the
 * copy's). A Warning event NotAuthorised on the backup says why.
 *
 * An entry of the copy's claim already there (under that name or an earlier
 * release's, its spec the claim: common/bentry) is the copy's when it has the
 * same namespace and Etcd and is not Deleting: its window is widened to cover
 * the copy's when the two overlap, else the copy's becomes one of its earlier windows
 * (BENTRY_EARLIER: the time between is not joined). Anything else (another owner's entry, an entry
 * of another claim holding the name, one being deleted, the API refusing) is a reason in why: the
 * caller keeps the finalizer (fail closed).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_EBK_KEEP_H
#define CONTROLLER_EBK_KEEP_H

#include <stddef.h>

#include <cJSON.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kerr.h"
#include "controller/backups/ebk_env.h"

#define EBK_KEEP_ANNOTATION BSTORE_RETAINED_COPY_ANNOTATION
/* The resourceVersion of the destination's Secret the copy Job was made from (controller/
 * backups/ebk.c records it with status.destination). */
#define EBK_SECRET_VERSION "status.destination.secretResourceVersion"
/* On the entry of a Local copy: the host directory the copy Job mounted the destination from
 * (its Secret's hostPath, controller/core/podjob's podjob_local_root), so that the webhook
 * places the entry's directory without a bucket (webhook/plocal). */
#define EBK_KEEP_HOSTPATH BLOCAL_HOSTPATH_ANNOTATION

/*
 * The BackupEntry of backup's retained copy (backup as stored, its copy Job recorded: read
 * back or not) built into *out (OWNS on KERR_OK) with bucket as spec.bucketName: the copy's
 * write window in spec.claimedAt and spec.etcdDeletedAt, and spec.retainedAt the time now
 * (the grace period runs from the hand-over, controller/entries/bke's bke_due). Reads the
 * clock, nothing else.
 */
enum kerr ebk_keep_entry(const cJSON *backup, const char *bucket, cJSON **out,
                         struct kerr_info *err);

/* Of a Local copy's entry e: EBK_KEEP_HOSTPATH from the destination's Secret (NULL: none). */
enum kerr ebk_keep_hostpath(cJSON *e, const cJSON *secret, struct kerr_info *err);

/*
 * The name of the BackupBucket of buckets (a List's items, BORROWED) that owns the store of
 * provider and container into out (n bytes); "" when none. Pure.
 */
void ebk_keep_bucket(const cJSON *buckets, const char *provider, const char *container, char *out,
                     size_t n);

/*
 * Make sure backup's retained copy is claimed by a BackupEntry (see above): KERR_OK with why
 * "" when it is; why (n bytes) says what stops it otherwise; errors of the API server are
 * returned (the caller keeps the finalizer either way).
 */
enum kerr ebk_keep_copy(const struct ebk_env *env, const cJSON *backup, char *why, size_t n,
                        struct kerr_info *err);

#endif
