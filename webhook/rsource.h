/*
 * rsource - the source an EtcdRestore from an EtcdBackup reads (spec.source.backupName):
 * the backup's copy, its claim (store key and canonical prefix, common/bstore) as
 * warden-webhook's cache of EtcdBackups holds it (webhook/prefix.h: the copy's
 * status.destination, once written), else as the API server holds it now (the cache may be
 * behind). warden-webhook records it in the claim Lease (common/pclaim, PCLAIM_KIND_SOURCE)
 * as it records a spec.source.store, so that a deletion of that prefix (a BackupEntry, a
 * handed-on copy) waits for a restore admitted and not stored yet.
 *
 * Ownership: arguments BORROWED; the result's strings OWNED by it (rsource_release).
 * Thread safety: reentrant (the store and client are).
 */
#ifndef WEBHOOK_RSOURCE_H
#define WEBHOOK_RSOURCE_H

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"

/* A source's claim: key "" when there is nothing to record. */
struct rsource {
    char key[512];    /* the store (common/bstore's claim key) */
    char prefix[512]; /* canonical */
};

/* key and prefix into out when both fit (else out unchanged); an unkeyed store is none. */
void rsource_set(struct rsource *out, const char *key, const char *prefix);

/*
 * The claim of the copy of EtcdBackup ns/name into *out: from backups (the prefix cache's
 * projections, NULL: none), else a GET through k (NULL: none). out->key "" when the backup does
 * not exist or has no written copy (nothing there to read yet) or its destination cannot be
 * keyed (its copy is never written: the controller refuses it). KERR_OK, or the GET's error
 * (the caller fails closed).
 */
enum kerr rsource_of_backup(struct store *backups, struct k8s_client *k, const char *ns,
                            const char *name, struct rsource *out, struct kerr_info *err);

#endif
