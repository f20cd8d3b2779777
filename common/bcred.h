/*
 * bcred - whether an Etcd's backup Secret holds its BackupBucket's
 * credentials: the evidence that its backup sidecar writes into the bucket's
 * store, and that deleting what it wrote there, with the bucket's Secret,
 * lets nobody do what they could not do themselves.
 *
 * A Secret names the service the sidecar writes (an endpoint, a domain, a
 * storage account, a service account's project) and the identity it writes
 * as; which keys do that differs by provider and sidecar version (an
 * endpoint from the Secret or from spec.backup.store.endpointOverride). So
 * the rule reads no key's meaning: the Etcd's Secret holds the bucket's
 * credentials when it has every key of the bucket's Secret with the same
 * bytes, no other key but those that name neither service nor identity
 * (bucketName, which Gardener adds and the sidecar does not read, and for
 * the S3 family region, which with an endpoint only signs and without one
 * picks an AWS region, where bucket names are global), the same provider
 * family as the bucket, and an endpoint the sidecar takes, whatever its
 * version, that is the one the bucket's deletions use (see bcred.c's
 * same_endpoint). Anything else is not evidence: a
 * tenant with keys of its own, or the bucket's endpoint and keys it
 * invented, or another storage account at the same domain, gets no entry.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef COMMON_BCRED_H
#define COMMON_BCRED_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"

/*
 * Why the Secret esecret (as stored: data base64) of etcd does not hold the credentials of
 * bucket (a BackupBucket object) in bsecret (its Secret as stored), into why (n bytes; ""
 * when it does). A value that is no base64 is not evidence either. KERR_NOMEM only.
 */
enum kerr bcred_holds(const cJSON *bucket, const cJSON *bsecret, const cJSON *etcd,
                      const cJSON *esecret, char *why, size_t n, struct kerr_info *err);

#endif
