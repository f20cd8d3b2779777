/*
 * bstore - which object store an Etcd's backups go to, as both processes
 * compare them: the provider as etcd-backup-restore names it (etcd-druid's
 * StorageProviderFromInfraProvider: "aws" and "S3" are both S3), the
 * container and the endpoint override ("" when absent). Two stores are the
 * same when their keys "<provider>|<container>|<endpoint>" are equal; the
 * one-prefix-one-cluster rule and the BackupEntries compare prefixes
 * (common/kpath) within one store only.
 *
 * Pure functions. Ownership: arguments BORROWED; output into caller buffers.
 * Thread safety: reentrant.
 */
#ifndef COMMON_BSTORE_H
#define COMMON_BSTORE_H

#include <stddef.h>

#include "common/kerr.h"

/* etcd-backup-restore's provider name for provider ("aws" -> "S3"), or NULL if unknown. */
const char *bstore_provider_kind(const char *provider);

/*
 * "<provider kind>|<container>|<endpoint>" into out. KERR_INVAL for an
 * unknown provider or a missing container; KERR_TOOBIG when n is too small.
 * endpoint NULL is "".
 */
enum kerr bstore_key(const char *provider, const char *container, const char *endpoint, char *out,
                     size_t n);

#endif
