/*
 * bkeheld - whether a BackupEntry's Etcd held its bucket's credentials the whole time its
 * deletion window covers, from facts only warden-controller writes.
 *
 * The credentials rule (controller/entries/bkeauth.h, bcred.h) is the evidence that what the
 * Etcd's sidecar wrote went into the bucket's store, so that deleting it with the bucket's Secret
 * deletes only the Etcd's own. Evidence seen once proves nothing later: a tenant may edit its
 * Secret, its Etcd's spec.backup.store.secretRef or endpointOverride, the operator may rotate the
 * bucket's Secret, an entry may be made by warden-webhook for a moved Etcd that never held them
 * (webhook/pmove). From then on the sidecar writes elsewhere and what lands under the prefix in
 * the bucket's store is somebody else's. So the comparison is made again, and the deletion
 * window ends at the last one that held once one does not:
 *
 *   - spec.credentialsHeldAt: the last time warden-controller compared (bkeauth_etcd) and the
 *     Etcd was allowed its entry, holding the bucket's credentials;
 *   - spec.credentialsHeldAs: what was compared: the Etcd's metadata.generation and its
 *     spec.backup.store as it was then (secretRef, provider, endpointOverride, container,
 *     prefix), so that a release can compare the same again once the Etcd is gone;
 *   - spec.credentialsLostAt: written once, at the first comparison that does not hold: the
 *     credentialsHeldAt before it, else one second before the entry's claim began (nothing
 *     shown held: the window is empty). Never removed by warden-controller (what was written
 *     between a loss and a later match cannot be shown to be the Etcd's): the deletion Job
 *     deletes nothing written after it. An operator who has seen to it (a rotation of the
 *     bucket's Secret copied into every tenant's) may remove it.
 *
 * When compared: when the entry is made (the caller has just allowed it); when it is written
 * for its live Etcd anyway (etcdSeenAt's refresh, a reattach: controller/entries/bkealive.h);
 * at once when the Etcd's generation is not the one compared (an edit of its store is seen
 * through the watch); and when the entry is released, against credentialsHeldAs, by a process
 * that watched the Etcd until it went (else its last spec is not known, and the last comparison
 * is the last match). Secrets are not watched: an edit of a Secret's contents is seen at the
 * next refresh or release.
 *
 * Ownership: arguments BORROWED; results as documented. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEHELD_H
#define CONTROLLER_BKEHELD_H

#include <stdint.h>

#include <cJSON.h>

#include "common/bentry.h"
#include "common/kerr.h"
#include "controller/entries/bke_ctx.h"
#include "controller/entries/bkeclaim.h"

#define BKEHELD_AT   BENTRY_CREDS_HELD
#define BKEHELD_AS   "spec.credentialsHeldAs"
#define BKEHELD_LOST BENTRY_CREDS_LOST

/* 1 when entry's credentials are to be compared again for its live etcd now: never compared,
 * or compared for another generation of it. */
int bkeheld_due(const cJSON *entry, const cJSON *etcd);

/*
 * Record on obj (the entry about to be written, OWNED by the caller) the comparison made at now
 * for etcd (its store as recorded; NULL at a release: the recorded one kept): why "" held
 * (credentialsHeldAt = now, credentialsHeldAs etcd's); else lost (credentialsLostAt set as the
 * header says, unless it is set). KERR_NOMEM, KERR_INTERNAL (a time that cannot be written).
 */
enum kerr bkeheld_mark(cJSON *obj, const cJSON *etcd, const char *why, int64_t now,
                       struct kerr_info *err);

/*
 * The Etcd entry last compared, rebuilt from credentialsHeldAs and spec.etcd (metadata
 * namespace and name, spec.backup.store) into *out (OWNS); NULL when the entry records none.
 * KERR_NOMEM.
 */
enum kerr bkeheld_etcd(const cJSON *entry, cJSON **out, struct kerr_info *err);

/*
 * Compare for live etcd (bkeauth_etcd, reads of the API server) and record it on obj (the entry
 * about to be written for it, OWNED by the caller) at now; a comparison that does not hold is a
 * Warning event NotAuthorised on etcd. Errors of the reads are returned: obj is not to be written
 * then (the next reconcile compares again).
 */
enum kerr bkeheld_compare(const struct bke_ctx *x, const struct bke_bucket *b, cJSON *obj,
                          const cJSON *etcd, int64_t now, struct kerr_info *err);

/*
 * At the release of obj (the entry, its spec.etcdLastAliveAt set: controller/entries/bkealive.h,
 * OWNED by the caller) at now: nothing when the last comparison that held is no earlier than
 * etcdLastAliveAt; else compared again against credentialsHeldAs when this process (reconciling
 * since since) watched the Etcd until it went; else, or when that does not hold, lost. Errors of
 * the reads are returned.
 */
enum kerr bkeheld_release(const struct bke_ctx *x, const struct bke_bucket *b, cJSON *obj,
                          int64_t since, int64_t now, struct kerr_info *err);

/* The entry's credentialsLostAt into *t (Unix seconds): 1, or 0 when absent or not a time. */
int bkeheld_lost(const cJSON *entry, int64_t *t);

#endif
