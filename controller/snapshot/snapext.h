/*
 * snapext - what warden-snapshot does with a store: list the snapshots
 * under a prefix as etcd-backup-restore parses them, and
 * extend-snapshot-immutability (DEP-06, shared/reference/etcd-druid.md
 * sections 3.3, 4.4):
 *
 *   1. list <prefix>/v1/... and <prefix>/v2/... (snapname.h), sorted as
 *      etcd-backup-restore sorts them; objects that do not parse are
 *      foreign and never touched;
 *   2. take the latest full snapshot that is not a chunk and not tagged
 *      x-etcd-snapshot-exclude=true; of the objects with its revisions, copy
 *      the oldest (the sidecar's own snapshot, never an earlier copy) with
 *      ostore_copy (content-verified against it, create-only) under the same
 *      name with createdOn = now, in the same layout (v1 gets a new
 *      Backup-<now> directory);
 *   3. garbage-collect the copies this task made earlier: full snapshots
 *      with the source's revisions, createdOn >= gc_from and older than the
 *      new copy, not excluded. A deletion refused because the object is
 *      still immutable is logged and skipped (the next run retries).
 *
 * Thread safety: one call at a time per store.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPEXT_H
#define CONTROLLER_SNAPSHOT_SNAPEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "controller/snapshot/ostore.h"
#include "controller/snapshot/snapname.h"

struct snapext_entry {
    struct snap_name name;
    struct ostore_obj obj; /* OWNS its strings */
    const char *hash;      /* "ok", "corrupt", "unchecked", "recorded" (see below); else NULL */
};

struct snapext_set {
    struct snapext_entry *v;
    size_t n;
};

/* The snapshots under store_prefix (BORROWED, without "/vN"), sorted; excluded ones are
 * kept with obj.excluded set. On KERR_OK *out OWNS the entries (snapext_set_release). */
enum kerr snapext_collect(struct ostore *s, const char *store_prefix, struct snapext_set *out,
                          struct kerr_info *err);

/*
 * snapext_collect of store_prefix and, when also is neither NULL nor "", of also (the other
 * spelling of one prefix: S3's "p" and "/p", bstore_object_prefixes), merged and sorted.
 */
enum kerr snapext_collect_both(struct ostore *s, const char *store_prefix, const char *also,
                               struct snapext_set *out, struct kerr_info *err);

void snapext_set_release(struct snapext_set *set);

/* One line per snapshot (the `list` subcommand):
 *   <key> kind=Full start=0 last=9002 created=<RFC 3339>(<unix>) compression=gz|none
 *   final=true|false chunk=true|false exclude=true|false immutable-until=<RFC 3339>|unknown
 *   size=<bytes> [sha256=ok|corrupt|unchecked|recorded (full snapshots, after
 *   snapext_verify_all or snapext_mark_recorded)] */
enum kerr snapext_print(const struct snapext_set *set, FILE *f, struct kerr_info *err);

/* `list --verify-hash`: read every full snapshot (not chunks) through snapverify.h and
 * set its hash mark; unchecked where it cannot be verified (an unknown compression). A
 * corrupt one is logged with the reason; errors reading the store fail the call. */
enum kerr snapext_verify_all(struct ostore *s, struct snapext_set *set, struct kerr_info *err);

/* `list` without --verify-hash: no snapshot is read; every full snapshot (not chunks) is
 * marked "recorded" when it carries the digest warden-snapshot verified as it made it
 * (OSTORE_SHA256 with its mark; one head request each), else "unchecked". Never fails: a
 * head that fails is logged and marked unchecked. */
enum kerr snapext_mark_recorded(struct ostore *s, struct snapext_set *set, struct kerr_info *err);

/* --mode: copy (steps 1-3), extend-in-place (the retention of the snapshot a restore would
 * take is extended where it lies: no bytes copied, no new object, nothing to collect), or
 * auto (in place where the store and bucket have object-level lock, else copy). */
enum snapext_mode { SNAPEXT_COPY, SNAPEXT_IN_PLACE, SNAPEXT_AUTO };

struct snapext_opts {
    const char *prefix; /* --store-prefix */
    int64_t gc_from;    /* --gc-from-timestamp, Unix seconds */
    int64_t now;        /* createdOn of the new copy, Unix seconds */
    bool server_copy;   /* --copy-mode server */
    bool dry_run;
    bool verify; /* unless --skip-hash-check: the SHA-256 of the snapshot to copy or to
                  * extend in place is checked first (not read again when it is a copy
                  * carrying its recorded digest) and recorded on the new copy; a corrupt
                  * one fails the run before anything is copied, extended or collected */
    enum snapext_mode mode;
    int64_t retention; /* --retention-days in seconds; 0: the bucket's default retention */
};

struct snapext_result {
    char source[512]; /* key of the snapshot copied */
    char copy[512];   /* key of the new copy */
    bool server;      /* copied server-side */
    int deleted;      /* earlier copies deleted */
    int immutable;    /* deletions refused (still immutable) */
    bool in_place;    /* extended in place: copy is "" */
    bool verified;    /* the snapshot to extend in place was verified (or unverifiable) */
    int64_t until;    /* the retain-until date set in place, else the new copy's as a head
                       * of it reads it (Unix seconds); 0 unknown (no lock, a dry run) */
};

/* Steps 1-3 above. KERR_NOTFOUND when there is no full snapshot to copy. A failed
 * deletion other than an immutability refusal fails the run after the other deletions. */
enum kerr snapext_extend(struct ostore *s, const struct snapext_opts *o, struct snapext_result *res,
                         struct kerr_info *err);

/*
 * The run's one-line summary, the termination message of the CronJob's Pod that the
 * controller reads into the task's status.immutableUntil:
 *   {"source":"<key>","copy":"<key>"|"","inPlace":bool,"immutableUntil":"<RFC 3339>"}
 * (immutableUntil left out when unknown; res NULL and error set: {"error":"<error>"}),
 * written to $WARDEN_TERMINATION_LOG when set, else to /dev/termination-log where it
 * exists (the kubelet mounts it; never created on a host). Silent where it cannot.
 */
void snapext_write_termination_log(const struct snapext_result *res, const char *error);

#endif
