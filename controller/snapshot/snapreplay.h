/*
 * snapreplay - a restore's replay of delta snapshots over a full one, as
 * etcd-backup-restore's restorer does it against its embedded etcd, kept
 * as a key set (snapkeys.h) and a revision counter instead of a database:
 *
 *  - the revision starts at the full snapshot's (snapbolt.h);
 *  - of the first delta, the events from the first one whose mod revision
 *    is above that revision are applied (the full snapshot may hold more
 *    than its name says); when none is, every event is (the restorer's
 *    index stays 0): snapreplay_end_delta then asks for the delta again;
 *  - events are grouped as the restorer groups them into transactions: a
 *    new group starts at an event whose mod revision is above the previous
 *    event's (an event going back joins the current group);
 *  - a group is refused as etcd refuses its transaction: an empty key, an
 *    event type other than PUT and DELETE, a key put twice or put and
 *    deleted in one group ("duplicate key given in txn request");
 *  - a group that changes something (a put, or a delete of a live key)
 *    raises the revision by one;
 *  - after each delta the revision must be the delta's last revision (the
 *    restorer's "mismatched event revision"): a gap, an overlap or a
 *    reordering of revisions shows here.
 *
 * Ownership: struct snapreplay BORROWS its key set and OWNS its group
 * buffer (snapreplay_release). Thread safety: one replay per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPREPLAY_H
#define CONTROLLER_SNAPSHOT_SNAPREPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"
#include "controller/snapshot/snapdelta.h"
#include "controller/snapshot/snapkeys.h"

/* Events of one revision kept at once (a transaction larger than this is refused). */
#define SNAPREPLAY_GROUP_MAX (1u << 20)

struct snapreplay_op;

struct snapreplay {
    struct snapkeys *keys; /* BORROWED */
    int64_t rev;           /* the restored etcd's revision */
    int64_t events;        /* events applied, all deltas */
    int64_t skipped;       /* events of the first delta at or below the full revision */
    bool first, skipping, all;
    int64_t start_rev;           /* the revision before this delta */
    int64_t last;                /* the previous event's mod revision in this delta (0: none) */
    struct snapreplay_op *group; /* OWNS */
    size_t ng, gcap;
};

/* A replay over keys (BORROWED: the full snapshot's live keys) at revision rev. */
void snapreplay_init(struct snapreplay *r, struct snapkeys *keys, int64_t rev);

void snapreplay_release(struct snapreplay *r);

/* Before a delta's events: first for the chain's first delta; all to apply every event of
 * it (the second reading snapreplay_end_delta asked for). */
void snapreplay_begin(struct snapreplay *r, bool first, bool all);

/* One event (snapdelta_fn). KERR_PARSE with the restore's reason when it fails on it;
 * KERR_TOOBIG when the key set's bound is passed. */
enum kerr snapreplay_event(void *r, const struct snapdelta_event *ev, struct kerr_info *err);

/* After the delta's last event: its last group applied and the revision checked against
 * last_rev (the name's). *again: the first delta must be read once more with all set (no
 * event was above the full revision). KERR_PARSE with the reason when it fails. */
enum kerr snapreplay_end(struct snapreplay *r, int64_t last_rev, bool *again,
                         struct kerr_info *err);

#endif
