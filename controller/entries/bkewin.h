/*
 * bkewin - the provenance window of a BackupEntry's deletion: the spans of last-modified times in
 * which what lies under its prefix is shown to be its Etcd's (docs/backup-entries.md, "Nothing
 * deleted without provenance"), passed to the deletion Job as pairs of --written-since and
 * --written-before (controller/snapshot/snapdel.h).
 *
 * The current span: since T1 (controller/entries/bkeseen.h), before the earliest of the end
 * given (the deletion's start, status.deletionStartedAt), the Etcd last known alive
 * (spec.etcdLastAliveAt, bkealive.h), seen gone (spec.etcdDeletedAt), another Etcd claiming the
 * prefix from then on (spec.overlappedAt) and the credentials last shown held
 * (spec.credentialsLostAt, bkeheld.h), those seconds included; and before the second of its
 * store's change unseen (spec.etcdStoreChangedAt, common/bentry.h), that second excluded: a move
 * away, another writer's write and a move back may all fall in it. Nothing shown written (no
 * sighting, no copy): an empty span, since one second after before.
 *
 * The earlier spans: spec.earlierWindows, a list of {since, before} (RFC 3339) that
 * warden-controller alone writes. When it attaches an entry to an Etcd anew (a reattachment,
 * bke.c: released before, another Etcd's, its store changed unseen) the window starts again
 * after the gap, and what the entry's owner was shown to have written before stays its: the
 * current span as it stands then (ending no later than that moment and, for an Etcd of another
 * uid not seen going, than it was last known alive: etcdDeletionTimestamp, etcdDeleteAdmittedAt,
 * etcdSeenAt, else the claim) is appended, unless empty. At most BENTRY_EARLIER_MAX
 * (common/bentry.h) are kept, the oldest dropped first (what it covered stays, for the operator).
 * Each is cut again, when the Job is made, at spec.overlappedAt and spec.credentialsLostAt (facts
 * that hold for every span); one that cannot be read is skipped (nothing deleted for it).
 *
 * A retained EtcdBackup copy's entry (annotation BSTORE_RETAINED_COPY_ANNOTATION) never attached
 * to an Etcd holds only what warden-snapshot wrote: its spec.etcdDeletedAt is the copy's own end
 * (controller/backups/ebk_keep.h), and its Job passes --only-copies
 * (objects without warden-snapshot's mark are kept: a sidecar's written into the prefix).
 *
 * Ownership: arguments BORROWED; obj arguments OWNED by the caller. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEWIN_H
#define CONTROLLER_BKEWIN_H

#include <stdint.h>

#include <cJSON.h>

#include "common/bentry.h"
#include "common/kerr.h"

/*
 * The current span of entry ending no later than end (Unix seconds) into *since and *before:
 * 1 when something is shown written in it, 0 when it is empty (*since = *before + 1).
 */
int bkewin_current(const cJSON *entry, int64_t end, int64_t *since, int64_t *before);

/*
 * Append to args (a JSON array of strings) the flags of entry's window: its earlier spans, then
 * its current one ending no later than status.deletionStartedAt. KERR_INVAL without a
 * deletion start (what the Etcd wrote cannot be told apart), KERR_NOMEM, KERR_INTERNAL.
 */
enum kerr bkewin_args(const cJSON *entry, cJSON *args, struct kerr_info *err);

/*
 * Record on obj (the entry about to be attached anew, a copy of old) the current span of old
 * (BORROWED, the entry as it was) at now, as the header says; another_etcd: attached to an Etcd
 * of another uid without a release in between. KERR_NOMEM, KERR_INTERNAL.
 */
enum kerr bkewin_keep_earlier(cJSON *obj, const cJSON *old, int another_etcd, int64_t now,
                              struct kerr_info *err);

#endif
