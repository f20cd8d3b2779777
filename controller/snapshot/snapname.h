/*
 * snapname - etcd-backup-restore's snapshot object names, parsed and built
 * exactly as its ParseSnapshot and SnapName do
 * (shared/reference/etcd-druid.md section 4.2).
 *
 *   <Kind>-<start %08d>-<last %08d>-<createdOn unix>[<compression>][.final]
 *
 * Kind is "Full" or "Incr"; compression is "", ".gz", ".Z" or ".zlib".
 * Layouts under the store prefix:
 *   v2: <prefix>/v2/<SnapName>              chunk: <prefix>/v2/<SnapName>/<chunk>
 *   v1: <prefix>/v1/Backup-<ts>/<SnapName>  chunk: .../Backup-<ts>/<SnapName>/<chunk>
 * The key is split at the last "v1/" or "v2/", as etcd-backup-restore does.
 * Unlike Go's ParseInt, revisions and times are plain decimal digits (no
 * sign), and unknown suffixes make the name invalid (a foreign object).
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
    int64_t created;     /* createdOn, Unix seconds */
    char compression[8]; /* "", ".gz", ".Z", ".zlib" */
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

/* Rebuild s->name from the fields (kind, revisions, created, suffixes).
 * KERR_INVAL for negative numbers or an unknown compression suffix. */
enum kerr snap_build_name(struct snap_name *s, struct kerr_info *err);

/*
 * The object key of s under store_prefix (BORROWED, without "/vN"):
 * "<store_prefix>/v2/<name>" or "<store_prefix>/v1/<snap_dir>/<name>".
 * On KERR_OK *out OWNS the string (free()).
 */
enum kerr snap_key(const char *store_prefix, const struct snap_name *s, char **out,
                   struct kerr_info *err);

/* etcd-backup-restore's order: last revision, then non-chunks before
 * chunks, then creation time. qsort-style result. */
int snap_cmp(const struct snap_name *a, const struct snap_name *b);

#endif
