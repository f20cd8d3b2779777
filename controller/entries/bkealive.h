/*
 * bkealive - when a BackupEntry's Etcd is known alive, from facts only
 * warden-controller or the API server writes, so that a deletion Job's window
 * (controller/entries/bkejob.h) ends no later than the Etcd was last known
 * alive, whether or not the controller ran when it went.
 *
 * On the entry (spec, written by warden-controller only):
 *   - etcdSeenAt: the last time the controller saw the Etcd alive (in its
 *     watch-fed cache, on this entry's prefix), written when the entry is made
 *     and refreshed while the Etcd lives: when older than BKEALIVE_REFRESH_S,
 *     or older than the time this process began reconciling (one write per
 *     entry when a controller starts leading);
 *   - etcdDeletionTimestamp: the Etcd's metadata.deletionTimestamp (the API
 *     server's) once the controller saw it being deleted;
 *   - etcdDeleteAdmittedAt: written by warden-webhook when it admits the
 *     Etcd's DELETE (webhook/pgone): the Etcd exists then, and is deleted only
 *     after. Removed when the entry is reattached to another Etcd, or when the
 *     Etcd is read alive from the API server by a GET sent BKEALIVE_SETTLE_S after
 *     that time (the DELETE was refused after the webhook admitted it; before then
 *     another webhook may still hold it);
 *   - etcdLastAliveAt: written when the entry is released (the Etcd gone, or
 *     moved): the deletion timestamp when seen; else etcdDeleteAdmittedAt when
 *     recorded; else the release time when
 *     this process saw the Etcd alive itself (etcdSeenAt at or after it began
 *     reconciling: it watched the Etcd until it went); else etcdSeenAt (the
 *     controller was down or another replica led when the Etcd went); else
 *     the entry's own times (spec.claimedAt, metadata.creationTimestamp):
 *     never "now" on a guess;
 *   - overlappedAt, overlappedBy: the earliest creation time, and the uid, of another live
 *     Etcd the controller saw claiming a prefix that overlaps the entry's, while the entry's
 *     Etcd lives or after it went (an Etcd of the same name created again and not
 *     reattached, another namespace's, one a webhook did not judge): from then on the prefix
 *     has another writer, so the deletion window ends there, even before etcdLastAliveAt.
 *     Removed only when the entry is reattached to the Etcd it records (overlappedBy its uid;
 *     an entry of an earlier version without overlappedBy: one created at or before it).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEALIVE_H
#define CONTROLLER_BKEALIVE_H

#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"

/* How often etcdSeenAt is refreshed while the Etcd lives: 10,000 Etcds make ~17 writes/s. */
#define BKEALIVE_REFRESH_S 600

/*
 * How long after warden-webhook admitted a request of the Etcd (etcdDeleteAdmittedAt,
 * etcdStoreChangedAt) the Etcd read unchanged shows it refused: before then another webhook may
 * still hold it (kube-apiserver ends a request after its --request-timeout, 60 s unless set, and
 * each webhook after its timeoutSeconds, at most 30 s), and the Etcd read alive, or with its
 * earlier store, shows nothing.
 */
#define BKEALIVE_SETTLE_S 600

/* What an entry's etcdStoreChangedAt (common/bentry.h) tells of its live Etcd. */
enum bkealive_change {
    BKEALIVE_CHANGE_NONE,    /* none recorded */
    BKEALIVE_CHANGE_PENDING, /* not shown stored, nor refused (yet): it stays */
    BKEALIVE_CHANGE_STORED,  /* the Etcd's generation is later than the one changed: stored */
    BKEALIVE_CHANGE_SETTLED, /* the same generation, BKEALIVE_SETTLE_S after: refused if read so
                                from the API server now */
};

/*
 * What entry's etcdStoreChangedAt tells of etcd (the entry's Etcd, its uid, read at now, Unix
 * seconds): as the enum says. A generation that cannot be read (the entry's or the Etcd's) is
 * never STORED nor SETTLED: PENDING.
 */
enum bkealive_change bkealive_change(const cJSON *entry, const cJSON *etcd, int64_t now);

/*
 * 1 when the entry (BORROWED) should be written for its live etcd (BORROWED) at now (Unix
 * seconds; since: when this process began reconciling, 0: always): etcdSeenAt absent, before
 * since, or BKEALIVE_REFRESH_S old; the Etcd's deletionTimestamp not the recorded one; an
 * etcdLastAliveAt left from a release.
 */
int bkealive_due(const cJSON *entry, const cJSON *etcd, int64_t since, int64_t now);

/*
 * Record on obj (the entry about to be written, OWNED by the caller) that etcd is alive at
 * now: etcdSeenAt = now while it is not being deleted, etcdDeletionTimestamp = its
 * deletionTimestamp (removed when it has none: an Etcd created again), etcdLastAliveAt
 * removed, overlappedAt removed when it records etcd (overlappedBy, above).
 * KERR_NOMEM, KERR_INTERNAL (a time that cannot be written).
 */
enum kerr bkealive_mark(cJSON *obj, const cJSON *etcd, int64_t now, struct kerr_info *err);

/*
 * Set etcdLastAliveAt on obj (the entry being released, OWNED by the caller) as the header
 * says, at now with since as in bkealive_due. KERR_INVAL when no time of the entry is known.
 */
enum kerr bkealive_release(cJSON *obj, int64_t since, int64_t now, struct kerr_info *err);

/*
 * 1 when at (Unix seconds, the creation time of another live Etcd overlapping the released
 * entry's prefix; 0: none) is earlier than the entry's overlappedAt, or it has none.
 */
int bkealive_overlap_due(const cJSON *entry, int64_t at);

/*
 * Set overlappedAt on obj (OWNED by the caller) to at, overlappedBy to by (the other Etcd's uid;
 * NULL or "": none). KERR_NOMEM, KERR_INTERNAL.
 */
enum kerr bkealive_overlap(cJSON *obj, int64_t at, const char *by, struct kerr_info *err);

/* The entry's overlappedAt into *t (Unix seconds): 1, or 0 when absent or not a time. */
int bkealive_overlapped(const cJSON *entry, int64_t *t);

/* The entry's etcdDeleteAdmittedAt into *t (Unix seconds): 1, or 0 when absent or not a time. */
int bkealive_admitted(const cJSON *entry, int64_t *t);

/* The time at path of obj into *t (Unix seconds): 1, or 0 when absent or not a time. */
int bkealive_time_at(const cJSON *obj, const char *path, int64_t *t);

/* Set the time t (Unix seconds) at path of obj. KERR_NOMEM, KERR_INTERNAL. */
enum kerr bkealive_set_time(cJSON *obj, const char *path, int64_t t, struct kerr_info *err);

/* The entry's etcdLastAliveAt into *t (Unix seconds): 1, or 0 when absent or not a time. */
int bkealive_last(const cJSON *entry, int64_t *t);

#endif
