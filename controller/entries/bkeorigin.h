/*
 * bkeorigin - where an Etcd's claim of its prefix began when etcd-warden wrote there for it
 * before it existed: an Etcd created by an EtcdRestore, whose copy wrote the restored snapshots
 * into the Etcd's prefix (its BackupEntry's deletion then deletes that copy too, instead of
 * leaving a tenant's data in a prefix nothing claims).
 *
 * The link is read from facts a tenant cannot write: the Etcd's label
 * etcd-warden.io/restored-from names the EtcdRestore (a label anyone may write, so it only says
 * where to look), and the EtcdRestore of that name in the Etcd's namespace must say, in its
 * status (written through /status by warden-controller alone), that it is Completed, created
 * this Etcd (status.etcdName) no later than it completed (the Etcd's creationTimestamp at or
 * before status.completionTime: an Etcd created again later is another), with its copy started
 * at status.copyStartedAt; its spec.target.store.prefix must be the Etcd's prefix (the same
 * canonical prefix) and the Etcd's spec never changed since (metadata.generation 1).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_BKEORIGIN_H
#define CONTROLLER_BKEORIGIN_H

#include <stdint.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "common/ktime.h"
#include "controller/entries/bke_ctx.h"

#define BKEORIGIN_LABEL   "etcd-warden.io/restored-from" /* controller/backups/erst.h's */
#define BKEORIGIN_WAIT_MS 5000L /* the restore not Completed yet: its entry waits */

/* What bkeorigin_since found. */
enum bkeorigin {
    BKEORIGIN_NONE,    /* not created by a restore, or not shown to be: its own creation counts */
    BKEORIGIN_RESTORE, /* created by a Completed restore: *since is its copy's start */
    BKEORIGIN_WAIT,    /* a restore of its label is not over yet: make the entry later */
};

/*
 * For etcd (a live Etcd whose entry is about to be made), *since (Unix seconds) when
 * BKEORIGIN_RESTORE, with one GET of the EtcdRestore its label names (none without the label).
 * An error reading it is returned (the entry is made later), NOTFOUND is BKEORIGIN_NONE.
 */
enum kerr bkeorigin_since(const struct bke_ctx *x, const cJSON *etcd, enum bkeorigin *what,
                          int64_t *since, struct kerr_info *err);

/*
 * When etcd's claim of its prefix began, into out: the restore's copy start (above); else its
 * creationTimestamp while its spec never changed (metadata.generation 1: the prefix is the one
 * it was created with); else now (it moved here: what its sidecar wrote before the entry
 * exists is left, never what another wrote before the move deleted). *what as bkeorigin_since
 * found (out unset for BKEORIGIN_WAIT). Errors as bkeorigin_since; KERR_INTERNAL when no time
 * can be written.
 */
enum kerr bkeorigin_claimed_at(const struct bke_ctx *x, const cJSON *etcd, char out[KTIME_LEN + 1],
                               enum bkeorigin *what, struct kerr_info *err);

/* The decision of bkeorigin_since on a fetched restore (BORROWED, NULL: none), for tests. */
enum bkeorigin bkeorigin_judge(const cJSON *etcd, const cJSON *restore, int64_t *since);

#endif
