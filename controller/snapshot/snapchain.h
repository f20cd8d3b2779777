/*
 * snapchain - `warden-snapshot verify`: is the chain a restore of a prefix
 * would use restorable, checked without etcd?
 *
 * Selection (snapchain_select), as etcd-backup-restore's restore selects
 * it (GetLatestFullSnapshotAndDeltaSnapList): the store is listed as the
 * sidecar lists it, the prefix as a plain string (a sibling "p/etcd-2"
 * comes with "p/etcd"; Local walks the prefix's directory instead), each
 * key rebuilt as path.Join(prefix, rest of the key) and parsed
 * (snapname.h; v1 and v2 layouts alike); objects tagged
 * x-etcd-snapshot-exclude are left out. Sorted in the sidecar's order, the
 * chain is the latest full snapshot (never a chunk) and every delta after
 * it. With at set (--at), only snapshots created at or before it are
 * listed: the chain a restore at that time would have used.
 *
 * Verification (snapchain_verify), each object in chain order, stopping at
 * the first fault (the object and the restore's reason):
 *  - the rebuilt key is an object of the store (else the restore fails
 *    with NoSuchKey), of this prefix (a key of "p/etcd/sub" rebuilt under
 *    "p/etcd" exists: that restore brings up the other cluster's data);
 *  - it is read and decompressed (snapverify.h: gzip, zlib, lzw) with its
 *    SHA-256 trailer checked; a full snapshot is spooled to an unlinked
 *    temporary file (the only copy of its bytes: disk, not memory) and its
 *    bbolt structure and revision read (snapbolt.h) into the key set
 *    (snapkeys.h, at most max_keys keys);
 *  - each delta's events are parsed as they stream (snapdelta.h) and
 *    replayed over the key set (snapreplay.h): revision continuity, and at
 *    the end the revision and key count the restored etcd would report.
 *
 * Ownership: a struct snapchain OWNS its objects (snapchain_release).
 * Thread safety: one chain per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPCHAIN_H
#define CONTROLLER_SNAPSHOT_SNAPCHAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/kerr.h"
#include "controller/snapshot/ostore.h"
#include "controller/snapshot/snapbolt.h"
#include "controller/snapshot/snapname.h"

#define SNAPCHAIN_DEFAULT_MAX_KEYS 1000000u

struct snapchain_obj {
    struct snap_name name; /* parsed from the rebuilt key */
    char *key;             /* OWNS: the rebuilt key, what the restore fetches */
    char *listed;          /* OWNS: the key as listed */
    struct ostore_obj obj; /* OWNS: the object at key, when it exists (obj.key set) */
    bool foreign;          /* key belongs to another cluster prefix */
};

struct snapchain {
    char *prefix;            /* OWNS: cleaned */
    long snapshots;          /* snapshot objects listed (at or before at) */
    struct snapchain_obj *v; /* OWNS: v[0] the full snapshot, then the deltas */
    size_t n;                /* 0: no full snapshot */
};

/*
 * Select the chain of prefix (BORROWED) from the listing l (BORROWED: what the sidecar's
 * listing of the prefix returns), only snapshots created at or before at (INT64_MAX: all);
 * local: the store is Local (the sidecar walks the prefix's directory). On KERR_OK *out
 * OWNS its objects.
 */
enum kerr snapchain_select(const struct ostore_list *l, const char *prefix, int64_t at, bool local,
                           struct snapchain *out, struct kerr_info *err);

void snapchain_release(struct snapchain *c);

/*
 * Fetchers the CLI opens (as etcd-backup-restore's restore fetches deltas with 6), and the
 * pieces held beyond one per fetcher: the read-ahead holds at most
 * (fetchers + SNAPCHAIN_FETCH_SLOTS_EXTRA) pieces of 4 MiB.
 */
#define SNAPCHAIN_FETCHERS          6
#define SNAPCHAIN_FETCH_SLOTS_EXTRA 2

struct snapchain_opts {
    size_t max_keys;     /* the key set's bound; 0: SNAPCHAIN_DEFAULT_MAX_KEYS */
    const char *tmp_dir; /* for the spooled full snapshot; NULL: $TMPDIR or /tmp */
    /* Stores of the same bucket (BORROWED, each used by one fetcher thread only, none of
     * them the store verified through): the chain's pieces are read ahead through them in
     * parallel (snapfetch.h) and checked in order. 0: each piece is read when checked. */
    struct ostore *const *fetchers;
    size_t nfetchers;
};

struct snapchain_result {
    bool restorable;
    size_t checked; /* objects checked (the failed one included) */
    long fault;     /* index of the failed object in the chain, -1: none or chain */
    char reason[KERR_MSG_LEN];
    struct snapbolt_info bolt; /* the full snapshot's database */
    int64_t revision;          /* after the last delta */
    int64_t keys;              /* live keys after the last delta */
    int64_t events;            /* delta events applied */
    char full_sha256[65];
    bool restored;             /* --restored-db was read: */
    int64_t restored_revision; /* what etcd serves on the restored database */
    int64_t restored_keys;     /* its live keys */
};

/*
 * Verify c in s. KERR_OK with res->restorable set or the fault and its reason; another
 * error only when the check itself cannot run (memory, the temporary file).
 */
enum kerr snapchain_verify(struct ostore *s, const struct snapchain *c,
                           const struct snapchain_opts *o, struct snapchain_result *res,
                           struct kerr_info *err);

/* The text report (prefix, each object, the verdict) into f. */
void snapchain_print_text(const struct snapchain *c, const struct snapchain_result *r, FILE *f);

/* The JSON report (one line) into f; KERR_NOMEM when it cannot be built. */
enum kerr snapchain_print_json(const struct snapchain *c, const struct snapchain_result *r, FILE *f,
                               struct kerr_info *err);

/*
 * --restored-db: the database `etcdbrctl restore` left at db_path (BORROWED), read
 * (snapdb.h) into r->restored_*; a chain verify found restorable whose restore holds
 * another revision or key count, or a database that cannot be read, becomes not
 * restorable with the reason. KERR_OK in every case but NOMEM.
 */
enum kerr snapchain_compare_restored(const char *db_path, size_t max_keys,
                                     struct snapchain_result *r, struct kerr_info *err);

#define SNAPCHAIN_SUMMARY_MAX 4096 /* a container's termination message */

/*
 * The summary the restore drill reads (one JSON line, at most SNAPCHAIN_SUMMARY_MAX - 1
 * bytes, strings cut to fit): {"restorable","prefix","snapshots","chainLength",
 * "revision","keys","newestSnapshot","newestSnapshotTime","failedObject","reason",
 * "restoredRevision","restoredKeys"} of c and r, or {"error"} alone when c or r is NULL
 * (the check could not run: error BORROWED). On KERR_OK *out OWNS the text (free).
 */
enum kerr snapchain_summary(const struct snapchain *c, const struct snapchain_result *r,
                            const char *error, char **out, struct kerr_info *err);

/* The summary to $WARDEN_TERMINATION_LOG when set, else to /dev/termination-log where it
 * exists (the kubelet mounts it); nothing where it cannot be opened. */
void snapchain_write_termination_log(const struct snapchain *c, const struct snapchain_result *r,
                                     const char *error);

/* The subcommand: argv[0] is "verify". Returns the exit status. */
int snapchain_main(int argc, char **argv);

#endif
