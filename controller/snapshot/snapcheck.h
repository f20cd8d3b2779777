/*
 * snapcheck - `warden-snapshot check-prefixes`: which clusters' backups in
 * one container does the backup sidecar (etcd-backup-restore) mix?
 *
 *   warden-snapshot check-prefixes --storage-provider P --store-container C
 *       [--store-endpoint-override URL] [--json] [-v]
 *
 * The whole container is listed. Every snapshot object (a key whose part
 * after "v1/" or "v2/", at the start or after '/', snapname parses) belongs
 * to the cluster prefix before that level ("p/etcd" for
 * "p/etcd/v2/Full-..."; "" for "v2/Full-..."). Two cluster prefixes are a
 * pair when their canonical forms overlap (common/bstore:
 * bstore_prefix_overlap): the sidecar lists a prefix as a plain string
 * without a trailing '/', so the listing of the shorter one ("p/etcd")
 * returns the longer one's snapshots ("p/etcd-2/v2/..."). Its restore
 * takes the latest full snapshot of that listing and every delta after
 * it, rebuilding each key as path.Join(<shorter>, <rest of the key>):
 *
 *  - when the longer prefix holds a snapshot after the shorter one's latest
 *    full (in etcd-backup-restore's order: last revision, non-chunks first,
 *    creation time), the restore takes it: if the rest of the longer prefix
 *    starts with '/' ("p/etcd" and "p/etcd/sub", or "" and anything) the
 *    rebuilt key exists and the shorter cluster is restored with the other
 *    one's data (SNAPCHECK_WRONG_DATA); otherwise ("p/etcd" + "-2/...") the
 *    rebuilt key does not exist and the restore fails with NoSuchKey
 *    (SNAPCHECK_FAILS). Only the S3 listing of an unversioned bucket rebuilds
 *    keys (pkg/snapstore/s3_snapstore.go:471 at v0.28.4, :729 at v0.43.0;
 *    ABS's at v0.28.4, abs_snapstore.go:226). Where the sidecar parses the
 *    whole listed key (struct snapcheck.full_key) - GCS (gcs_snapstore.go:334
 *    at v0.43.0, :253 at v0.28.4), OSS (oss_snapstore.go:247), Swift
 *    (swift_snapstore.go:480), ABS from v0.41 (abs_snapstore.go:295) and S3 on
 *    a versioned or Object Lock bucket from v0.41 (s3_snapstore.go:695) - the
 *    key exists: the restore succeeds with the longer prefix's data, and the
 *    shorter cluster's garbage collection, deleting from that listing,
 *    deletes the longer one's snapshots (SNAPCHECK_WRONG_DATA);
 *  - otherwise the restore still works, until the longer cluster's next
 *    snapshot (SNAPCHECK_AT_RISK);
 *  - two prefixes that overlap for etcd-warden but whose listings this
 *    store keeps apart are SNAPCHECK_APART: "/x" and "x" on a store that
 *    keeps the '/' (ABS, GCS), and on Local (struct snapcheck.local), whose
 *    sidecar walks the prefix's directory, every pair but a prefix inside
 *    another as a path ("p/etcd" and "p/etcd/sub", or "").
 *
 * Output: one line per pair and its details on stdout, or with --json one
 * JSON object (snapcheck_print_json). Exit status: 0 no pair, 1 pairs
 * found, 2 usage error, 3 the container could not be listed.
 *
 * Ownership: a struct snapcheck OWNS its prefixes and pairs
 * (snapcheck_release); keys passed in are copied. Thread safety: one
 * struct snapcheck per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPCHECK_H
#define CONTROLLER_SNAPSHOT_SNAPCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common/kerr.h"
#include "controller/snapshot/snapname.h"

/* Keys longer than this are not snapshots of any sidecar (S3 keys are at most 1024 bytes). */
#define SNAPCHECK_KEY_MAX 4096

/* The latest snapshot of a kind in one prefix. */
struct snapcheck_latest {
    bool set;
    struct snap_name name; /* order fields: last_rev, is_chunk, created */
    char *key;             /* OWNS */
};

/* One cluster prefix: the snapshots under "<prefix>/v1/" and "<prefix>/v2/". */
struct snapcheck_prefix {
    char *prefix;                 /* OWNS: as in the keys ("" for keys starting with "v2/") */
    char *canonical;              /* OWNS: bstore_prefix of it */
    long snapshots;               /* snapshot objects, chunks included */
    long fulls;                   /* full snapshots, chunks not included */
    struct snapcheck_latest full; /* the latest full snapshot (never a chunk) */
    struct snapcheck_latest any;  /* the latest snapshot of either kind (never a chunk) */
};

enum snapcheck_effect {
    SNAPCHECK_AT_RISK,    /* restores today; the longer prefix's next snapshot breaks it */
    SNAPCHECK_FAILS,      /* the restore takes a key it cannot fetch: NoSuchKey */
    SNAPCHECK_WRONG_DATA, /* the restore takes the longer prefix's snapshots */
    SNAPCHECK_APART,      /* one claim to etcd-warden; this store's listings do not mix */
};

/* Two prefixes the sidecar mixes: indexes into struct snapcheck.v. */
struct snapcheck_pair {
    size_t shorter; /* whose listing returns the other's snapshots */
    size_t longer;
    bool newer_full; /* longer holds a full snapshot after shorter's latest full */
    bool newer;      /* longer holds any snapshot after shorter's latest full */
    enum snapcheck_effect effect;
};

struct snapcheck {
    struct snapcheck_prefix *v; /* sorted by canonical, then prefix (after snapcheck_pairs) */
    size_t n, cap;
    struct snapcheck_pair *pairs;
    size_t npairs, pcap;
    long objects;  /* keys seen */
    bool local;    /* set by the caller for a Local store: its sidecar walks directories */
    bool full_key; /* set by the caller where the sidecar parses whole listed keys (below) */
    size_t last;   /* index of the last prefix added to (consecutive keys share it) */
};

/*
 * Count one listed key (BORROWED) into c: a snapshot goes to its cluster prefix, anything
 * else only into c->objects. KERR_NOMEM only.
 */
enum kerr snapcheck_add(struct snapcheck *c, const char *key, struct kerr_info *err);

/* Sort the prefixes and find every overlapping pair. KERR_NOMEM only. */
enum kerr snapcheck_pairs(struct snapcheck *c, struct kerr_info *err);

/* Free what c OWNS; c can be released twice. */
void snapcheck_release(struct snapcheck *c);

/* "at-risk", "fails", "wrong-data", "apart". */
const char *snapcheck_effect_str(enum snapcheck_effect e);

/*
 * The human-readable report of c (after snapcheck_pairs) for the store named into f; in
 * keys and prefixes control characters, '"' and '\' are written as \xHH.
 */
void snapcheck_print_text(const struct snapcheck *c, const char *store, FILE *f);

/*
 * The JSON report (one line) of c into f:
 *   {"store":S,"objects":N,"prefixes":[{"prefix":P,"snapshots":N,"fullSnapshots":N,
 *     "latestFull":K|null,"latest":K|null}],
 *    "overlaps":[{"shorter":P,"longer":Q,"restore":"fails"|...,"breaks":P|null,
 *     "newerFull":B,"newer":B,"shorterSnapshots":N,"longerSnapshots":N,
 *     "shorterLatestFull":K|null,"longerLatestFull":K|null,"longerLatest":K|null}]}
 * KERR_NOMEM when it cannot be built.
 */
enum kerr snapcheck_print_json(const struct snapcheck *c, const char *store, FILE *f,
                               struct kerr_info *err);

/* The subcommand: argv[0] is "check-prefixes". Returns the exit status. */
int snapcheck_main(int argc, char **argv);

#endif
