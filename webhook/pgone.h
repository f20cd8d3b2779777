/*
 * pgone - when an Etcd was last known alive, recorded as it is deleted.
 *
 * A deletion Job deletes only what its entry's Etcd wrote before it was last
 * known alive (docs/backup-entries.md, "Nothing deleted without provenance").
 * With etcd-druid's finalizer the Etcd's deletionTimestamp, written by the API
 * server, says when; without one the Etcd is gone at once, and warden-controller
 * only learns of it when it reads the watch event: a controller paused, starved
 * or behind a long queue reads it late, and what another writer put into the
 * prefix in between would count as the Etcd's. The API server sends the DELETE
 * to this webhook before it deletes: at that moment the Etcd exists, and it is
 * deleted only after the answer. So when it admits an Etcd's DELETE (no dry run;
 * the Etcd not being deleted already, which its deletionTimestamp records), the
 * webhook writes its own clock's time into the entry of the Etcd's claim, as
 * spec.etcdDeleteAdmittedAt (common/bentry's BENTRY_DELETE_ADMITTED), when that entry (found by the
 * claim's names, common/bentry, first in the webhook's cache) records this Etcd (its uid) and has
 * no earlier such time: warden-controller takes it for etcdLastAliveAt
 * (controller/entries/bkealive.h). A DELETE refused after this admission leaves
 * an earlier time, which only keeps more (the controller removes it when it
 * reads the Etcd alive from the API server after that time). An entry that
 * cannot be written refuses the DELETE with 500 (retry). Object stores only: a
 * Local store's entry is named after its directory, which its Secret places.
 *
 * The same holds for a change of the Etcd's store that warden-controller does not
 * see: a move away and back, or a secretRef edited and reverted, while it is
 * down, paused, or between two reads of its queue, shows it the same Etcd on
 * the same prefix, and what another writer put there in between would count as
 * the Etcd's. So when it admits an UPDATE that changes anything of
 * spec.backup.store (no dry run), the webhook writes its time into the entries,
 * as stored (not the cache: a change of store is rare and its record must not
 * miss an entry made a moment ago), of both the earlier and the new claim, as
 * spec.etcdStoreChangedAt (BENTRY_STORE_CHANGED), when the entry records this
 * Etcd and has no earlier such time: warden-controller ends the deletion window
 * there and, when it attaches the entry to the Etcd again, starts it anew
 * (spec.reattachedAt, controller/entries/bkeseen.h) and removes the time. An
 * UPDATE refused after this admission leaves a time that only keeps more.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef WEBHOOK_PGONE_H
#define WEBHOOK_PGONE_H

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"
#include "webhook/review.h"

/* 1 when req is an UPDATE of an Etcd that changes anything of its spec.backup.store. Pure. */
int pgone_store_changed(const struct review_req *req);

/*
 * Record the time on the entries as the header says, for req (an Etcd review admitted so far,
 * resp allowed: a DELETE, or an UPDATE of its store); entries is the webhook's BackupEntry cache
 * (keyed by name). A failure turns resp into a 500. KERR_NOMEM only.
 */
enum kerr pgone_record(struct k8s_client *k, struct store *entries, const struct review_req *req,
                       struct review_resp *resp, struct kerr_info *err);

#endif
