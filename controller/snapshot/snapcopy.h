/*
 * snapcopy - `warden-snapshot copy`: copy snapshots from one store to another
 * (any two providers ostore opens: S3, ABS, Local), in etcd-backup-restore's
 * layout.
 *
 *   warden-snapshot copy --from-storage-provider P --from-store-container C
 *       --from-store-prefix X [--from-store-endpoint-override URL]
 *       [--from-credentials-dir DIR]
 *       --to-storage-provider P --to-store-container C --to-store-prefix X
 *       [--to-store-endpoint-override URL] [--to-credentials-dir DIR]
 *       [--snapshot NAME | [--latest-full] [--until TIME]] [--part-size BYTES]
 *       [--skip-hash-check] [--require-empty-destination] [-v]
 *
 * Credentials: each side's provider reads them as the other subcommands do
 * (screds.h); --from/--to-credentials-dir name a mounted Secret directory
 * (one file per field) for that side, so two stores of one provider can
 * have different credentials. Without them both sides read the environment.
 *
 * What is copied, from the source's snapshots as etcd-backup-restore lists
 * them (snapext_collect; chunks and objects tagged
 * x-etcd-snapshot-exclude=true are never chosen):
 *   --snapshot NAME  exactly that snapshot (its SnapName, e.g.
 *                    "Full-00000000-00002300-1700002000.gz");
 *   --until TIME     what etcd-backup-restore's restore would take from the
 *                    snapshots created at or before TIME (Unix seconds or
 *                    RFC 3339): the latest full, then every delta after it
 *                    (GetLatestFullSnapshotAndDeltaSnapList);
 *   neither          the same over every snapshot;
 *   --latest-full    with --until or alone: the full only, no deltas after it.
 * Each goes to "<to-prefix>/v2/<SnapName>" (a v1 source lands in v2, the
 * name unchanged), full first, deltas in order.
 *
 * Every full snapshot (not a chunk) is verified as it is streamed, unless
 * --skip-hash-check: its last 32 bytes (decompressed) must be the SHA-256 of
 * the rest (snapverify.h); the verdict comes before its last part is sent,
 * so a corrupt one is never committed: the run fails naming it ("snapshot
 * <key> is corrupt: ...") and rolls back as below. A compression snapverify
 * cannot read is copied unverified, with a warning.
 *
 * With --require-empty-destination a destination prefix that holds any
 * snapshot already (as snapext_collect lists them) is refused before
 * anything is written (exit 1): a restore's target must be a fresh prefix.
 *
 * Every destination key is checked absent before anything is written
 * (create-only; the providers' conditional writes guard the race). Each
 * object is streamed through two part-size buffers (the only large
 * allocations: peak memory stays near twice the part size), the next part
 * read while the last one is sent (snappipe.h), while its MD5 is computed;
 * the destination is then verified: same size, and the same MD5 as the
 * bytes read, taken from the destination where it reports one, else read
 * back. A failure at any point (a read, a part, the commit, verification,
 * SIGTERM or SIGINT, checked before every part and object) aborts the upload
 * in flight and deletes every object this run created, so the destination
 * prefix holds all the chosen snapshots or none of them. Only SIGKILL (or a
 * crash) can leave the objects already written; a new run then refuses
 * their names until they are deleted.
 *
 * Output: JSON log lines on stderr; the last line on stdout one JSON object:
 *   {"from":"<prefix>","to":"<prefix>","snapshots":[{"name":..,"kind":"Full",
 *    "startRevision":N,"lastRevision":N,"createdOn":"<RFC 3339>","size":N,
 *    "md5":"<hex>","source":"<key>","destination":"<key>"},...],
 *    "peakRssKiB":N}
 * The same result, compacted, is written to the termination log
 * ($WARDEN_TERMINATION_LOG, else /dev/termination-log where the kubelet
 * mounts it; never created on a host) whatever the exit status, so that the
 * controller reads it from the Pod's status (snapcopy_summary):
 *   {"snapshots":[{"name","kind","startRevision","lastRevision","size",
 *    "md5","destination"},...],"total":N,"error":"<one line>"}
 * error "" on success; on failure snapshots is empty. When the list does
 * not fit in SNAPCOPY_SUMMARY_MAX bytes, only the full and the last delta
 * are listed (total still counts them all).
 * Exit status: 0 copied, 1 failure, 2 usage error.
 *
 * Ownership: arguments BORROWED; results OWN their strings. Thread safety:
 * one run per thread (the credentials directories are passed through the
 * process environment while a store opens).
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPCOPY_H
#define CONTROLLER_SNAPSHOT_SNAPCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"
#include "controller/snapshot/ostore.h"
#include "controller/snapshot/snapext.h"

struct snapcopy_item {
    struct snap_name name;
    char *source;      /* OWNS: the source key */
    char *destination; /* OWNS: the destination key */
    int64_t size;
    char md5[33];
};

struct snapcopy_result {
    struct snapcopy_item *v; /* OWNS */
    size_t n;
};

struct snapcopy_opts {
    const char *from_prefix; /* BORROWED, cleaned as etcd-backup-restore cleans it */
    const char *from_also;   /* BORROWED or NULL: its other S3 spelling, read as well */
    const char *to_prefix;
    const char *snapshot; /* --snapshot, or NULL */
    int64_t until;        /* --until, Unix seconds; 0: no bound */
    bool skip_hash_check; /* --skip-hash-check: full snapshots are not verified */
    bool latest_full;     /* --latest-full: the full alone */
};

/* The kubelet's cap of a termination message. */
#define SNAPCOPY_SUMMARY_MAX 4096

/*
 * The snapshots of set to copy under o (indices into set->v, in copy order) into
 * *idx (OWNED, free()) and *n. KERR_NOTFOUND when there is none (no such snapshot,
 * no full snapshot at or before the bound).
 */
enum kerr snapcopy_choose(const struct snapext_set *set, const struct snapcopy_opts *o,
                          size_t **idx, size_t *n, struct kerr_info *err);

/* Copy what snapcopy_choose picks from src to dst as described above. On KERR_OK *res
 * lists the copies (snapcopy_result_release); on failure nothing this run wrote is left. */
enum kerr snapcopy_run(struct ostore *src, struct ostore *dst, const struct snapcopy_opts *o,
                       struct snapcopy_result *res, struct kerr_info *err);

void snapcopy_result_release(struct snapcopy_result *r);

/*
 * The termination-log summary of r (NULL: nothing copied) and error (NULL or
 * "": none; cut to one line of at most 200 bytes) into *out (OWNED, free()),
 * at most SNAPCOPY_SUMMARY_MAX bytes with its newline.
 */
enum kerr snapcopy_summary(const struct snapcopy_result *r, const char *error, char **out,
                           struct kerr_info *err);

/* Write that summary to the termination log (above); silent where it cannot. */
void snapcopy_write_termination_log(const struct snapcopy_result *r, const char *error);

/*
 * Ask a run in progress to stop (async-signal-safe: the SIGTERM/SIGINT handler
 * of snapcopy_main calls it): it stops between parts and rolls back.
 */
void snapcopy_stop(void);

/* The subcommand (snapcopy_cli.c): argv[0] is "copy". Returns the exit status. */
int snapcopy_main(int argc, char **argv);

#endif
