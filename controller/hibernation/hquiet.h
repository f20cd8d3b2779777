/*
 * hquiet - did etcd hold still for the revision check's quiet second? The interval decision
 * of controller/hibernation/hib_verify.c, without I/O and without reading a clock.
 *
 * The check needs etcd's revision seen unchanged over HQUIET_MS: the same revision at both
 * ends of an interval that long means nothing was written in it (a revision only grows).
 * Both ends are read on the sidecar's clock, never compared with the controller's:
 *   - the start: the time of the stored snapshot carrying the revision (its createdOn;
 *     etcd-backup-restore sets it after reading the revision it names, for a full snapshot
 *     with NewSnapshot before the upload, for a delta after the events it holds). A createdOn
 *     without a fraction of a second is a whole second cut down (the sidecar's
 *     /snapshot/latest parses it from the name, Full-<start>-<last>-<unix>): its end is taken,
 *     one second later. The name's <unix> must agree with createdOn; without createdOn the
 *     name's <unix> plus one second is the start;
 *   - the end: the HTTP Date of the POST /snapshot/full?final=true answer, when that answer
 *     is the stored snapshot itself (etcd-backup-restore skips a final full snapshot at the
 *     revision of the previous final one and answers it at once: the Date is written
 *     milliseconds after the revision was read). Date has whole seconds, cut down.
 * Whatever is short of HQUIET_MS is waited on the controller's monotonic clock before the
 * sidecar is asked again; the same revision then closes the interval. A time that cannot be
 * read (no Date, no createdOn or name, a name and createdOn that disagree) leaves the whole
 * HQUIET_MS to wait: fail closed.
 *
 * Thread safety: every function is reentrant; no state.
 */
#ifndef CONTROLLER_HQUIET_H
#define CONTROLLER_HQUIET_H

#include <stdint.h>

#include <cJSON.h>

#define HQUIET_MS 1000L /* etcd must hold still this long between two reads */

enum hquiet_verdict {
    HQUIET_QUIET, /* the same revision over HQUIET_MS: nothing was written */
    HQUIET_WAIT,  /* the same revision, not yet long enough: wait *wait_ms, ask again */
    HQUIET_AGAIN, /* a new snapshot at the same revision (the stored one was not a final full
                   * snapshot): it becomes the stored one; ask again at once */
    HQUIET_MOVED, /* a higher revision: etcd moved on; the answer is a newer final snapshot */
};

/* What the check has seen. Pointers BORROWED. */
struct hquiet_in {
    long long stored_rev; /* the revision the store holds */
    const cJSON *stored;  /* the snapshot carrying it (Snapshot JSON), NULL if unknown */
    long long answer_rev; /* the POST's revision */
    const cJSON *answer;  /* the POST's Snapshot, NULL if none */
    int64_t date_ms;      /* the POST answer's Date in ms since the epoch; -1: none */
    int waited;           /* the previous answer was HQUIET_WAIT and that wait is over */
};

/*
 * The snapshot's start time on the sidecar's clock in ms since the epoch, rounded up as the
 * file comment says; -1 when it cannot be read. snap BORROWED, may be NULL.
 */
int64_t hquiet_snapshot_ms(const cJSON *snap);

/* An HTTP-date (RFC 9110: IMF-fixdate, or the obsolete forms) in ms since the epoch; -1
 * when date (BORROWED, may be NULL) is none of them. */
int64_t hquiet_date_ms(const char *date);

/*
 * The decision on one POST answer. *wait_ms is set for HQUIET_WAIT (1..HQUIET_MS), else 0.
 */
enum hquiet_verdict hquiet_decide(const struct hquiet_in *in, long *wait_ms);

/* "quiet", "wait", "again", "moved". Static. */
const char *hquiet_verdict_name(enum hquiet_verdict v);

#endif
