/*
 * pborn - a namespace created again is another owner. A BackupEntry names its Etcd by
 * namespace and name; when that namespace is deleted and a namespace of the same name is
 * created later (by anyone the cluster lets create namespaces), an Etcd of the old name there
 * would reattach to the old entry and its sidecar restore the old cluster's backups: backups
 * handed to another tenant. An entry is made while its namespace exists (an Etcd's claim, a
 * moved Etcd's earlier prefix, a retained copy), so a namespace created after the entry is not
 * the one the entry was made for: the reattachment is refused until the entry is gone (its
 * grace period, or the operator's `kubectl delete backupentry`).
 *
 * The namespace is read from the API server when a reattachment is decided (rare: an Etcd
 * created onto its own entry's prefix); one that cannot be read is a refusal (fail closed).
 * The same fact decides who owns a Local directory (common/lowner): such an entry makes the
 * namespace no owner and is in the way of its Etcds there, at admission (webhook/bklocal) and
 * when warden-controller makes a Job that reads the directory (controller/backups/bkown).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant (the client is).
 */
#ifndef COMMON_PBORN_H
#define COMMON_PBORN_H

#include <stddef.h>

#include "common/k8s.h"
#include "common/kerr.h"

#define PBORN_WHY_MAX 768

/*
 * Why Etcd ns/name may not reattach to BackupEntry entry, made at entry_created (its
 * metadata.creationTimestamp), into why (n bytes; "" when it may): namespace ns was created
 * after the entry, or it cannot be read, or either time is not understood. KERR_NOMEM only.
 */
enum kerr pborn_check(struct k8s_client *k, const char *ns, const char *name, const char *entry,
                      const char *entry_created, char *why, size_t n);

#endif
