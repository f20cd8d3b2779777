/*
 * snapname - etcd-backup-restore's snapshot object names, parsed and built
 * exactly as its ParseSnapshot and SnapName do
 * (shared/reference/etcd-druid.md section 4.2).
 *
 *   <Kind>-<start %08d>-<last %08d>-<createdOn unix>[<compression>][.final]
 *
 * Kind is "Full" or "Incr". The tail after the creation time is read as
 * etcd-backup-restore's ParseSnapshot reads it: split at '.', the second
 * field (unless it is "final") is the compression suffix, whatever it is
 * (".gz", ".Z", ".zlib", ".zst", ...), and the name is final when the last
 * field is "final". The tail is kept verbatim, so a copy is named exactly
 * like its source but for the creation time.
 * Layouts under the store prefix:
 *   v2: <prefix>/v2/<SnapName>              chunk: <prefix>/v2/<SnapName>/<chunk>
 *   v1: <prefix>/v1/Backup-<ts>/<SnapName>  chunk: .../Backup-<ts>/<SnapName>/<chunk>
 * The key is split at the last "v1/" or "v2/", as etcd-backup-restore does.
 * Unlike Go's ParseInt, revisions and times are plain decimal digits (no
 * sign).
 *
 * The store prefix is cleaned as etcd-backup-restore's path.Join cleans it
 * (snap_clean_prefix): "etcd-main/" and "etcd-main" name the same snapshots.
 *
 * Thread safety: every function is reentrant; no state.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPNAME_H
#define CONTROLLER_SNAPSHOT_SNAPNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

#define SNAP_NAME_MAX 128
#define SNAP_DIR_MAX  64

enum snap_kind { SNAP_FULL, SNAP_INCR };

/* One parsed snapshot key. Plain value, no pointers. */
struct snap_name {
    enum snap_kind kind;
    int64_t start_rev;
    int64_t last_rev;
    int64_t created;                 /* createdOn, Unix seconds */
    char compression[SNAP_NAME_MAX]; /* upstream's CompressionSuffix: "", ".gz", ".zst", ... */
    char suffix[SNAP_NAME_MAX];      /* the tail after createdOn, verbatim: ".gz.final" */
    bool is_final;
    bool is_chunk;
    int layout;                  /* 1 or 2 */
    char snap_dir[SNAP_DIR_MAX]; /* v1 "Backup-<ts>"; "" in v2 */
    char name[SNAP_NAME_MAX];    /* the SnapName (without chunk part) */
    size_t prefix_len;           /* bytes of the key before "v1/" or "v2/" */
};

/*
 * Parse an object key (BORROWED). KERR_PARSE with a message naming the
 * fault when the key is not a snapshot; *out is zeroed first.
 */
enum kerr snap_parse(const char *key, struct snap_name *out, struct kerr_info *err);

/* "Full"/"Incr". */
const char *snap_kind_str(enum snap_kind kind);

/* Rebuild s->name from the fields (kind, revisions, created) and s->suffix.
 * KERR_INVAL for negative numbers or a suffix that is not ".<...>" without '/' and '-'. */
enum kerr snap_build_name(struct snap_name *s, struct kerr_info *err);

/*
 * The object key of s under store_prefix (BORROWED, without "/vN"):
 * "<store_prefix>/v2/<name>" or "<store_prefix>/v1/<snap_dir>/<name>".
 * On KERR_OK *out OWNS the string (free()).
 */
enum kerr snap_key(const char *store_prefix, const struct snap_name *s, char **out,
                   struct kerr_info *err);

/*
 * The store prefix (BORROWED) as etcd-backup-restore uses it: path.Join(prefix, "v2") and
 * then its parent, i.e. Go's path.Clean ("a//b/" -> "a/b", "./a/../b" -> "b") with "." and
 * "/" meaning the bucket's root (""). On KERR_OK *out OWNS the string (free()).
 */
enum kerr snap_clean_prefix(const char *prefix, char **out, struct kerr_info *err);

/* etcd-backup-restore's order: last revision, then non-chunks before
 * chunks, then creation time. qsort-style result. */
int snap_cmp(const struct snap_name *a, const struct snap_name *b);

#endif
