/*
 * mutate - the mutating patches (/webhooks/etcd-mutate).
 *
 * On CREATE only:
 *   - an Etcd (druid.gardener.cloud) carrying the annotation
 *     etcd-warden.io/status-backup-exists (any value) was re-created from a
 *     backup: add the label etcd-warden.io/restoring ("") and the annotation
 *     druid.gardener.cloud/suspend-etcd-spec-reconcile ("true"), each only
 *     when missing, with a JSON Patch that works whether or not
 *     metadata.labels / metadata.annotations exist;
 *   - any other object labelled managed-by etcd-druid and part-of <etcd>:
 *     drop the ownerReferences (also those in a StatefulSet's
 *     volumeClaimTemplates) that point at an Etcd named <etcd> whose uid is
 *     not the live Etcd's, or all of them when no such Etcd exists, so the
 *     garbage collector cannot delete restored components;
 *   - an EtcdStatusBackup (etcd-warden.io), whose name is its Etcd's: the
 *     same for its ownerReferences, so a backup restored with a stale owner
 *     reference is not collected before the controller repairs it.
 *   - an Etcd created by anyone but warden-controller (cfg->controllers):
 *     its state annotations are removed, each with a warning
 *     (toggles_strip_patch; cfg NULL: nothing removed).
 * On UPDATE of an Etcd only: the label etcd-warden.io/restoring, removed by
 * anyone but warden-controller together with other changes
 * (toggles_keeps_restoring), is put back with a warning.
 * Every answer allows; a failed Etcd lookup is answered with 500, and so is
 * a "not found" that only a cache gave (lookup_unconfirmed): an unknown
 * answer is never read as "the Etcd does not exist", which would remove the
 * references to an Etcd created a moment ago. The decision is linear in
 * the object (each array is walked once).
 *
 * Thread safety: mutate_decide is reentrant.
 */
#ifndef WEBHOOK_MUTATE_H
#define WEBHOOK_MUTATE_H

#include "common/kerr.h"
#include "webhook/lookup.h"
#include "webhook/protect.h"
#include "webhook/review.h"

/* Value written for the suspend annotation. */
#define MUTATE_SUSPEND_VALUE     "true"
#define MUTATE_ANN_SUSPEND_ADDED "etcd-warden.io/suspend-added"

/*
 * Decide req (BORROWED) into resp: the verdict, a message saying what was
 * changed, and the patch when there is one. Returns KERR_OK, or
 * KERR_NOMEM / KERR_TOOBIG when the answer could not be built.
 */
enum kerr mutate_decide(const struct protect_config *cfg, const struct lookup *lk,
                        const struct review_req *req, struct review_resp *resp,
                        struct kerr_info *err);

#endif
