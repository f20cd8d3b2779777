/*
 * snapdel - `warden-snapshot delete-snapshots`: delete every object of a
 * backup prefix, the clean-up of a BackupEntry whose grace period is over.
 *
 *   warden-snapshot delete-snapshots --storage-provider P --store-container C
 *       --store-prefix X [--dry-run] [-v]
 *
 * The prefix is a path (common/kpath): the objects deleted are X itself and
 * those under "X/" after cleaning, never "X-events/..." of a neighbour whose
 * name merely starts with the same characters. A prefix that cleans to "."
 * or "/" (the whole store) is refused as a usage error.
 *
 * Rounds: list the prefix, delete each object (its version where the store
 * reports one); on a versioned store deleting the current version makes the
 * next older one current, so the next round lists and deletes it, until a
 * round deletes nothing (at most SNAPDEL_MAX_ROUNDS). An object refused
 * because it is immutable (ostore's KERR_FORBIDDEN) is locked: counted, its
 * immutable_until kept for the earliest expiry; it never makes the run fail.
 * Versions hidden behind a delete marker are not reported by ostore's
 * listing and so are not reached.
 *
 * Output: JSON log lines on stderr (one per deletion at -v); the last line
 * on stdout is one JSON object:
 *   {"prefix":"X","deleted":N,"locked":M,"failed":F,"remaining":R,
 *    "earliestDeletable":"<RFC 3339>"|null,"dryRun":false}
 * remaining = locked + failed after the last round (with --dry-run: what
 * would be deleted). Exit status: 0 when nothing but locked objects remain,
 * 1 on any other failure (listing, a deletion refused for another reason),
 * 2 usage error.
 *
 * Ownership: arguments BORROWED. Thread safety: one run per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPDEL_H
#define CONTROLLER_SNAPSHOT_SNAPDEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/kerr.h"
#include "controller/snapshot/ostore.h"

#define SNAPDEL_MAX_ROUNDS 64

/* Where the kubelet reads a container's termination message (terminationMessagePath). */
#define SNAPDEL_TERMINATION_LOG "/dev/termination-log"

struct snapdel_result {
    long deleted, locked, failed;
    int64_t earliest; /* Unix seconds of the earliest locked expiry; 0 unknown / none */
};

/*
 * Delete (or with dry_run count) the objects of prefix in s. KERR_INVAL for a
 * prefix that is the whole store; the listing's error otherwise; deletions
 * that fail are counted in res->failed (first message in err) with KERR_OK.
 */
enum kerr snapdel_run(struct ostore *s, const char *prefix, bool dry_run,
                      struct snapdel_result *res, struct kerr_info *err);

/* The summary line (no newline) of res for prefix into f. */
void snapdel_print(FILE *f, const char *prefix, bool dry_run, const struct snapdel_result *res);

/* The subcommand: argv[0] is "delete-snapshots". Returns the exit status. */
int snapdel_main(int argc, char **argv);

#endif
