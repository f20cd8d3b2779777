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
 * Ownership: arguments BORROWED; why written into the caller's buffer.
 * Thread safety: reentrant (the store and the client are thread-safe).
 */
#ifndef WEBHOOK_BAUTH_H
#define WEBHOOK_BAUTH_H

#include <stddef.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"

#define BAUTH_WHY_MAX 768

/*
 * Why namespace ns may not claim a prefix in store key (a bstore key), into why (n bytes; ""
 * when it may), from buckets (a cache of BackupBuckets, whole objects) and the namespace's
 * labels, read with k (a GET, only when a bucket of the store has a selector). Errors when
 * that could not be read: the caller refuses then (fail closed).
 */
enum kerr bauth_check(struct store *buckets, struct k8s_client *k, const char *ns, const char *key,
                      char *why, size_t n, struct kerr_info *err);

#endif
