/*
 * snapbolt - the bbolt database inside a full etcd snapshot, read without
 * etcd: what `etcdbrctl restore` and etcd starting on its result read of it.
 *
 * bbolt's file (go.etcd.io/bbolt, little-endian as written on amd64/arm64):
 * pages of meta.pageSize bytes, each with a 16-byte header (id u64, flags
 * u16: 0x01 branch, 0x02 leaf, 0x04 meta, 0x10 freelist; count u16;
 * overflow u32: the page runs on over that many more pages). Pages 0 and 1
 * are meta pages: magic 0xED0CDAED, version 2, pageSize, flags, the root
 * bucket (root pgid, sequence), freelist pgid, pgid (the high-water mark:
 * pages in use), txid, and a checksum (FNV-1a 64 of the 56 bytes before
 * it). As bbolt opens a file, the meta with the higher txid is used when it
 * is valid, else the other one; the page size is meta 0's, or 4096 when
 * meta 0 is not valid. Branch elements (pos u32, ksize u32, pgid u64) and
 * leaf elements (flags u32: 0x01 a bucket; pos u32, ksize u32, vsize u32)
 * are 16 bytes, their key at the element's address + pos, a leaf's value
 * after its key. A bucket's value is (root pgid u64, sequence u64); root 0
 * means an inline bucket, its page following in the value.
 *
 * etcd's buckets, under the root: `key`, whose keys are revisions (main
 * u64 big-endian, '_', sub u64 big-endian, and 't' for a deletion's
 * tombstone) and whose values are mvccpb.KeyValue protobufs (field 1 the
 * key, 3 the mod revision); `meta`, with consistent_index (u64 big-endian)
 * and finishedCompactRev (a revision as above). The revision etcd serves
 * after starting on the database is that of its mvcc restore: the highest
 * main revision in `key`, at least the finished compaction's, at least 1.
 *
 * snapbolt_scan walks the tree from the chosen meta page and hands every
 * entry of `key`, in revision order, to the caller (who replays puts and
 * tombstones over a key set). Everything is checked as it is read, hostile
 * input included: meta magic, version, checksum and page size; every page
 * id inside the high-water mark and the file, each page header's id its
 * own, flags as expected, every element inside its page, the tree at most
 * SNAPBOLT_MAX_DEPTH deep and no page read more often than the file has
 * pages (no loop), `key`'s revisions strictly increasing, each value a
 * KeyValue whose mod revision is its main revision (but for tombstones).
 * Memory: one page run per tree level, a run at most SNAPBOLT_RUN_MAX bytes
 * (a page and its overflow; bbolt keeps a value larger than a page in one
 * run), whatever the database's size. The database is read through a
 * callback (pread of a spooled file), never mapped.
 *
 * Thread safety: reentrant; no state beyond the call.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPBOLT_H
#define CONTROLLER_SNAPSHOT_SNAPBOLT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

#define SNAPBOLT_MAX_DEPTH 32
#define SNAPBOLT_RUN_MAX   (64u * 1024u * 1024u)

/* Read exactly len bytes at off into dst (BORROWED); KERR_IO when it cannot. */
typedef enum kerr (*snapbolt_read_fn)(void *ctx, int64_t off, void *dst, size_t len,
                                      struct kerr_info *err);

/* One entry of `key`, in revision order: key (BORROWED for the call) put at main_rev, or
 * deleted there (tombstone). A non-OK return stops the scan with it. */
typedef enum kerr (*snapbolt_kv_fn)(void *ctx, int64_t main_rev, const unsigned char *key,
                                    size_t klen, bool tombstone, struct kerr_info *err);

struct snapbolt_info {
    uint32_t page_size;
    int meta;                  /* the meta page used: 0 or 1 */
    uint64_t txid;             /* its transaction id */
    uint64_t high_water;       /* its pgid: pages in use */
    int64_t entries;           /* entries of `key` (revisions, tombstones included) */
    int64_t max_key_rev;       /* the highest main revision in `key`, 0 when empty */
    int64_t compact_rev;       /* meta finishedCompactRev's main revision, 0 when none */
    uint64_t consistent_index; /* meta consistent_index, 0 when none */
    int64_t revision;          /* what etcd serves: max(1, max_key_rev, compact_rev) */
};

/*
 * Scan the size-byte database read through rd(rctx, ...): every entry of `key` to
 * kv(kctx, ...), the figures into *out (zeroed first). KERR_PARSE with a message naming
 * the page and the fault when the database is not a valid bbolt file with etcd's buckets;
 * the callbacks' errors as they return them.
 */
enum kerr snapbolt_scan(snapbolt_read_fn rd, void *rctx, int64_t size, snapbolt_kv_fn kv,
                        void *kctx, struct snapbolt_info *out, struct kerr_info *err);

#endif
