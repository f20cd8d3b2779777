/*
 * snapdel - `warden-snapshot delete-snapshots`: delete every object of a
 * backup prefix, the clean-up of a BackupEntry whose grace period is over.
 *
 *   warden-snapshot delete-snapshots --storage-provider P --store-container C
 *       --store-prefix X [--store-endpoint-override URL] [--dry-run] [-v]
 *
 * The prefix is where etcd-backup-restore (the backup sidecar) of that
 * provider writes (common/bstore's bstore_object_prefix): path.Clean of it,
 * and for S3, ECS, OCS, OSS and Local without a leading '/' ("/pl/x" is
 * written at "pl/x/..."; ABS, GCS and Swift keep it). For the S3 family a
 * prefix with a leading '/' has a second spelling, deleted the same way:
 * etcd-backup-restore v0.37.0 and later (aws-sdk-go-v2, which does not clean
 * the request path) write "/pl/x/..." (bstore_object_prefixes); counts and
 * foreign keys are those of both, and the prefix is emptied only when both
 * listings are empty. The objects deleted
 * are the cluster's own: the object prefix itself and those under
 * "<object prefix>/", never "X-events/..." of a neighbour whose name merely
 * starts with the same characters, nor the snapshots of a prefix below it
 * ("X/etcd-events/v2/Full-..."; the sidecar splits a key at its last "v1/"
 * or "v2/", controller/snapshot/snapname.h): those are foreign. A prefix that is the whole
 * container
 * ("", ".", "/") is refused as a usage error.
 *
 * Rounds: list the object prefix as the sidecar lists it (a plain string,
 * no trailing '/'), delete each own object (its version where the store
 * reports one); on a versioned store deleting the current version makes
 * the next older one current, so the next round lists and deletes it, until
 * a round deletes nothing (at most SNAPDEL_MAX_ROUNDS). That last round's
 * listing, made after every deletion, is the sidecar's view of the prefix
 * (a run stopped by the round limit lists once more): the prefix is
 * emptied only when it returns nothing. Objects of other prefixes it
 * returns ("p/etcd-2/..." for "p/etcd": the sidecar of "p/etcd" would take
 * them for its own) are foreign: never deleted, counted, the first
 * SNAPDEL_FOREIGN_KEYS of them named (those that fit in
 * SNAPDEL_FOREIGN_BYTES). Local is the exception: its sidecar walks the
 * directory "<container>/<object prefix>", which holds the own objects
 * only, so a neighbour directory is not foreign there. An object refused because it is
 * immutable (ostore's KERR_FORBIDDEN) is locked: counted, its
 * immutable_until kept for the earliest expiry; it never makes the run
 * fail. Versions hidden behind a delete marker are not reported by
 * ostore's listing and so are not reached.
 *
 * Provenance (--written-since T, --written-before T, RFC 3339): only objects whose
 * last-modified time, as the store reports it, lies in [since, before] are deleted; the
 * others under the prefix (written before the claim began: another cluster's backups from
 * before it, a deleted backup's retained copy; written after the deletion began; or of a
 * time the store does not report) are kept: counted in "kept", never deleted, and not
 * "remaining" (they are not the deleted owner's). Without the flags every object of the
 * prefix is deleted, as before. The flags may be repeated, in pairs (the k-th --written-since
 * with the k-th --written-before, at most SNAPDEL_SPANS_MAX): an object goes when its time lies
 * in any of the spans (a BackupEntry's earlier windows, before a reattachment, and its current
 * one).
 *
 * Copies only (--only-copies): of the objects in the window, only those warden-snapshot wrote
 * (carrying OSTORE_COPY_MARK, read with a head each) are deleted; the others are kept (a
 * backup sidecar's, written into the prefix while a copy was to be made there). The clean-up of
 * what a copy wrote (a failed EtcdRestore's, a deleted EtcdBackup's) runs so. A head that fails
 * counts the object as failed: it is neither deleted nor taken for another's.
 *
 * Output: JSON log lines on stderr (one per deletion at -v); the last line
 * on stdout is one JSON object:
 *   {"prefix":"X","objectPrefix":"O",["objectPrefix2":"/O",]"deleted":N,"locked":M,"failed":F,
 *    "remaining":R,"earliestDeletable":"<RFC 3339>"|null,"dryRun":false,
 *    "foreign":G,"foreignKeys":["..."],"kept":K}  ("kept" only when K > 0)
 * remaining = what the final listing still returns: locked + failed +
 * foreign (with --dry-run: what would be deleted + foreign). Exit status:
 * 0 when nothing but locked objects remain, 1 on any other failure
 * (listing, a deletion refused for another reason, foreign objects in the
 * listing), 2 usage error.
 *
 * Ownership: arguments BORROWED; a struct snapdel_result OWNS its keys
 * (snapdel_result_release). Thread safety: one run per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPDEL_H
#define CONTROLLER_SNAPSHOT_SNAPDEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/kerr.h"
#include "controller/snapshot/ostore.h"

#define SNAPDEL_MAX_ROUNDS 64

/*
 * How many foreign keys a result names, and how many bytes of JSON they take at most: the
 * summary is the Pod's termination message, of which the kubelet keeps 4096 bytes.
 */
#define SNAPDEL_FOREIGN_KEYS  5
#define SNAPDEL_FOREIGN_BYTES 1024

/* Where the kubelet reads a container's termination message (terminationMessagePath). */
#define SNAPDEL_TERMINATION_LOG "/dev/termination-log"

/* The spans a window may have: a BackupEntry's current one and its earlier ones. */
#define SNAPDEL_SPANS_MAX 17

/* Last-modified times (Unix seconds) an object may have to go; 0: no bound on that side. */
struct snapdel_span {
    int64_t since;  /* objects modified before it are outside */
    int64_t before; /* objects modified after it are outside */
};

/* Which objects of the prefix may go: those inside any span (n 0: every object). */
struct snapdel_window {
    struct snapdel_span span[SNAPDEL_SPANS_MAX];
    size_t n;
    bool copies_only; /* objects without OSTORE_COPY_MARK (a head each) are kept */
};

struct snapdel_result {
    long deleted, locked, failed;
    long kept;            /* own objects outside the window (or of unknown time): not deleted */
    long foreign;         /* objects of other prefixes in the final listing */
    long remaining;       /* objects the final listing returns (dry run: would delete + foreign) */
    int64_t earliest;     /* Unix seconds of the earliest locked expiry; 0 unknown / none */
    char *object_prefix;  /* OWNS: where the objects were looked for */
    char *object_prefix2; /* OWNS: "" or the other spelling looked for too (S3's "/p") */
    char *foreign_keys[SNAPDEL_FOREIGN_KEYS]; /* OWNS: the first foreign keys that fit, then NULL */
};

/*
 * Delete (or with dry_run count) the objects of prefix in s, a store of provider kind
 * (bstore_provider_kind: "S3", "ABS", "Local", ...). KERR_INVAL for a prefix that is the
 * whole store; the listing's error otherwise; deletions that fail are counted in
 * res->failed (first message in err) with KERR_OK. res is zeroed first and must be
 * released with snapdel_result_release whatever the result.
 */
enum kerr snapdel_run(struct ostore *s, const char *kind, const char *prefix, bool dry_run,
                      struct snapdel_result *res, struct kerr_info *err);

/*
 * snapdel_run deleting only the objects whose last-modified time lies in w (BORROWED; NULL:
 * every object); the others are counted in res->kept and are not remaining.
 */
enum kerr snapdel_run_window(struct ostore *s, const char *kind, const char *prefix,
                             const struct snapdel_window *w, bool dry_run,
                             struct snapdel_result *res, struct kerr_info *err);

/* Free what res OWNS; it can be released twice. */
void snapdel_result_release(struct snapdel_result *res);

/* The summary line (no newline) of res for prefix into f. */
void snapdel_print(FILE *f, const char *prefix, bool dry_run, const struct snapdel_result *res);

/* The subcommand: argv[0] is "delete-snapshots". Returns the exit status. */
int snapdel_main(int argc, char **argv);

#endif
