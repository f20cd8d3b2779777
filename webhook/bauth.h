/*
 * bauth - the bucket owner's authority at admission. A BackupBucket owns its
 * store (common/bstore: every object store of one container name is one
 * store); its spec.namespaceSelector names the namespaces that may claim
 * prefixes there (none: every namespace). A new claim (an Etcd's store and
 * prefix, an EtcdBackup's, EtcdBackupSchedule's or EtcdRestore's destination)
 * of a namespace that some BackupBucket of its store does not select is
 * refused, so that a namespace the owner has not authorised neither gets an
 * entry nor blocks the authorised tenants' prefixes. A store no BackupBucket
 * owns (or a Local one) is not checked here.
 *
 * A bucket with spec.prefixScope Namespace (BSTORE_SCOPE_NAMESPACE) partitions
 * the store's prefixes among the namespaces: a prefix belongs to the namespace
 * bstore_prefix_owner names, and any other namespace's claim of it is refused.
 * No two namespaces' prefixes can then overlap (the owner is a function of the
 * first segment, which a "/" ends), so a claim in a namespace's own part is
 * only ever in the way of that namespace's claims (and of claims from before
 * the setting), and whether a probe is refused tells nothing of the others.
 * The check reads the bucket and the candidate alone, never another claim: it
 * runs before the overlap checks.
 *
 * Ownership: arguments BORROWED; why written into the caller's buffer.
 * Thread safety: reentrant (the store and the client are thread-safe).
 */
#ifndef WEBHOOK_BAUTH_H
#define WEBHOOK_BAUTH_H

#include <stddef.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"

#define BAUTH_WHY_MAX 1024

/*
 * Why namespace ns may not claim prefix (canonical, common/bstore) in store key (a bstore
 * key), into why (n bytes; "" when it may), from buckets (a cache of BackupBuckets, whole
 * objects): a bucket of the store with spec.prefixScope Namespace whose partition gives the
 * prefix to another namespace (or to none), or one whose namespaceSelector does not select
 * ns (its labels read with k, a GET, only then). Errors when that could not be read: the
 * caller refuses then (fail closed).
 */
enum kerr bauth_check(struct store *buckets, struct k8s_client *k, const char *ns, const char *key,
                      const char *prefix, char *why, size_t n, struct kerr_info *err);

#endif
