/*
 * bkeseen - where a BackupEntry's provenance window begins (T1 of the deletion Job,
 * controller/entries/bkejob.h): no earlier than its Etcd can be shown to have written.
 *
 * A time window alone shows nothing: an Etcd that never ran a member (its Secret opens
 * nothing, no pods) claims a prefix that a cluster on another seed writes, and whatever lands
 * there while it exists would be deleted with its entry. So the window of an entry starts:
 *   - for an entry whose prefix etcd-warden wrote for it (spec.origin BKESEEN_RESTORE: its Etcd
 *     was created by an EtcdRestore whose copy began at spec.claimedAt, controller/entries/
 *     bkeorigin.h; or a retained EtcdBackup copy's entry, annotation
 *     BSTORE_RETAINED_COPY_ANNOTATION, controller/backups/ebk_keep.h): at spec.claimedAt;
 *   - else at the later of spec.claimedAt and spec.membersSeenAt, the first time
 *     warden-controller saw one of the Etcd's members running by the member rule of
 *     controller/core/smember.h (a pod of the Etcd's StatefulSet: its ordinals, controlled by
 *     it, the template's etcd and backup-restore containers, the member claims mounted,
 *     Running with a pod IP, which the kubelet writes);
 *   - else nowhere: nothing was shown written, and the deletion Job deletes nothing of the
 *     prefix (an empty window: every object is kept and counted as kept).
 * spec.claimedAt absent (an entry of an earlier version): metadata.creationTimestamp.
 * In every case after spec.reattachedAt's second (BKESEEN_REATTACHED; object times have seconds,
 * and another writer may have written in it just before): the last time warden-controller
 * attached the entry to an Etcd again after it was released (deleted, moved away, a retained
 * copy's), to an Etcd of another uid, or to its Etcd after warden-webhook recorded a change of
 * its store (spec.etcdStoreChangedAt, webhook/pgone: a move away and back, a secretRef edited
 * and reverted, that warden-controller may not have seen). Between the release and then the
 * prefix had no owner here and may have had another writer (the same cluster on another seed):
 * what was written before it stays (left to the operator), and spec.membersSeenAt is removed
 * then, so the members are seen again.
 *
 * spec.membersSeenAt is written once, by warden-controller only (BackupEntries are
 * cluster-scoped and written by it alone), in an update of the entry made before it counts: a
 * controller that crashes before the write looks again. While an entry has neither an origin
 * nor a sighting and its Etcd lives, each reconcile of its bucket reads the Etcd's StatefulSet
 * (one GET) and its pods (one LIST, by the StatefulSet's selector) and asks to be looked at again
 * in BKESEEN_POLL_MS; once recorded, nothing more is read: one write per entry, once.
 *
 * Ownership: arguments BORROWED; results as documented. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKESEEN_H
#define CONTROLLER_BKESEEN_H

#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "controller/entries/bke_ctx.h"

#define BKESEEN_AT         "spec.membersSeenAt"
#define BKESEEN_REATTACHED "spec.reattachedAt"
#define BKESEEN_ORIGIN     "spec.origin"
#define BKESEEN_RESTORE    "Restore" /* spec.origin of an entry whose Etcd a restore created */
#define BKESEEN_POLL_MS    5000L     /* no member seen yet: looked at again */

/* Where the window of an entry begins (bkeseen_start). */
enum bkeseen {
    BKESEEN_NONE,    /* nothing shown written: the Job deletes nothing */
    BKESEEN_COPY,    /* etcd-warden wrote the prefix for it: spec.claimedAt */
    BKESEEN_MEMBERS, /* the later of spec.claimedAt and spec.membersSeenAt */
};

/*
 * The start of entry's window (BORROWED) into *t1 (Unix seconds; untouched for BKESEEN_NONE).
 * An entry without any claim time (spec.claimedAt, metadata.creationTimestamp) is
 * BKESEEN_NONE.
 */
enum bkeseen bkeseen_start(const cJSON *entry, int64_t *t1);

/* 1 when entry has neither an origin nor a sighting: bkeseen_record has something to do. */
int bkeseen_needed(const cJSON *entry);

/* 1 when one of pods (a JSON array of Pods, BORROWED; NULL: none) is a member of sts. */
int bkeseen_any_member(const cJSON *sts, const cJSON *pods);

/*
 * For entry (cached) of the live etcd: when bkeseen_needed, look for a running member and,
 * when one is, write spec.membersSeenAt = now; *stored (NULL unless written) then OWNS the
 * entry as stored. No member (or no StatefulSet): *requeue lowered to BKESEEN_POLL_MS. An API
 * error reading the StatefulSet or the pods is logged and looked at again then (nothing
 * recorded: fail closed); an error writing the entry is returned.
 */
enum kerr bkeseen_record(const struct bke_ctx *x, const cJSON *entry, const cJSON *etcd,
                         cJSON **stored, long *requeue, struct kerr_info *err);

#endif
