/*
 * pmove - a moved Etcd's earlier prefix stays claimed. An UPDATE of an Etcd that
 * changes its object store or prefix (admitted by webhook/prefix) leaves what
 * its sidecar wrote under the earlier prefix (full snapshots: the cluster's
 * data, Secrets included). warden-controller keeps that prefix with the
 * Etcd's BackupEntry, which turns PendingDeletion when the Etcd moves; but it
 * makes the entry only once it saw the Etcd there, and it may not have (it
 * was down, an upgrade or a node drain, between the Etcd's CREATE and its
 * move): nothing would then claim the earlier prefix, and another
 * namespace's Etcd admitted there would restore the cluster. So before such
 * an UPDATE is admitted, the earlier claim gets its entry here, made from
 * what only the API server and etcd-warden wrote (the stored Etcd the
 * request replaces), unless the claim's entry is there already (under its
 * name or an earlier release's, its spec that claim: common/bentry; a name
 * held by an entry of another claim refuses the move with 500):
 *
 *   name        bstore_entry_name of the earlier claim (one claim, one name:
 *               the controller's entry, when it made it, is this one);
 *   spec        bucketName: the BackupBucket of the store (the oldest, then
 *               the first by name, of those naming its container), "" when
 *               none (then warden-controller keeps it until the operator
 *               deletes it: controller/entries/bkefree.h); prefix and store:
 *               the earlier ones; etcd {namespace, name, uid}; claimedAt: the
 *               Etcd's creationTimestamp when its spec never changed
 *               (generation 1), else the time of the move. No membersSeenAt:
 *               no member was seen running, so its deletion deletes nothing
 *               (docs/backup-entries.md, provenance).
 *
 * warden-controller then finds no live Etcd on it and releases it
 * (PendingDeletion), as any entry of an Etcd that moved. A Local store is a
 * directory of the node whose hostPath is in the Etcd's Secret: its earlier
 * directory gets an entry of no bucket (pmove_local_entry), named after the
 * directory, whose annotation BLOCAL_HOSTPATH_ANNOTATION records the hostPath
 * the earlier Secret names at the move (read then from the API server; a
 * Secret that cannot be read refuses the move). warden-controller keeps it
 * until the operator deletes it (controller/entries/bkefree.h) and never
 * gives it to a bucket, so no deletion Job ever runs for it: the directory
 * stays the namespace's (common/lowner), its snapshots where they are. Only
 * requests that are no dry run. When the entry cannot be made the UPDATE is
 * refused with 500 (fail closed; the request can be retried).
 *
 * A Local directory is recorded before its sidecar can write there, so it stays its namespace's
 * whatever warden-controller saw (it may be down when an Etcd is created and then deleted, or
 * moved by an edit of its Secret's hostPath, which no Etcd request shows): when a Local Etcd
 * whose container no BackupBucket names is created, or moved by an UPDATE, its directory (its
 * Secret's hostPath read now) gets the same entry of no bucket (pmove_record), the one
 * warden-controller makes for it when it runs (controller/entries/bkefree.h), which then finds
 * it and keeps it. Not for a dry run; an entry that cannot be made refuses the request with 500.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef WEBHOOK_PMOVE_H
#define WEBHOOK_PMOVE_H

#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"
#include "webhook/review.h"

/*
 * Make the earlier claim's entry of req (an Etcd UPDATE admitted so far, resp allowed) as the
 * header says; entries (the webhook's BackupEntry cache, keyed by name) and buckets (its
 * BackupBucket cache) say what is there. A failure turns resp into a 500. KERR_NOMEM only.
 */
enum kerr pmove_keep(struct k8s_client *k, struct store *entries, struct store *buckets,
                     const struct review_req *req, struct review_resp *resp, struct kerr_info *err);

/* 1 when req is a CREATE of a Local Etcd, or an UPDATE that moves one (anything of its
 * spec.backup.store changed), and no dry run: its new directory is recorded (above). Pure. */
int pmove_records(const struct review_req *req);

/*
 * Record the directory of etcd (BORROWED), a Local Etcd whose container no BackupBucket of
 * buckets names, with its entry of no bucket (above; etcd's Secret read now through k) unless
 * entries has it: KERR_OK when it is there now, or when etcd is no such Etcd; else an error
 * (why says it). buckets NULL: none is taken to name it.
 */
enum kerr pmove_record(struct k8s_client *k, struct store *entries, struct store *buckets,
                       const cJSON *etcd, struct kerr_info *why);

/*
 * The BackupEntry pmove_keep makes for the earlier Etcd old (BORROWED) in bucket (NULL: "")
 * at now (Unix seconds) into *out (OWNS on KERR_OK), its name into name, and the claim it is
 * named after into *c (NULL: not wanted; on KERR_OK c->prefix OWNS an allocation that
 * bstore_claim_release frees, else *c is empty). KERR_INVAL when old has no object store or
 * prefix understood (nothing to keep). Pure.
 */
enum kerr pmove_entry(const cJSON *old, const char *bucket, int64_t now, cJSON **out,
                      char name[BSTORE_ENTRY_NAME_MAX + 1], struct bstore_claim *c,
                      struct kerr_info *err);

/*
 * The BackupEntry pmove_keep makes for the earlier directory of old (BORROWED), a Local Etcd
 * whose Secret names hostpath, at now into *out (OWNS on KERR_OK), its name (after the
 * directory) into name, and the claim of that directory (BLOCAL_KEY, the directory) into *c
 * (NULL: not wanted; owned as pmove_entry's). KERR_INVAL when old has no Local store and
 * directory understood. Pure.
 */
enum kerr pmove_local_entry(const cJSON *old, const char *hostpath, int64_t now, cJSON **out,
                            char name[BSTORE_ENTRY_NAME_MAX + 1], struct bstore_claim *c,
                            struct kerr_info *err);

#endif
