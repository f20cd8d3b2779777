/*
 * snapverify - the integrity check of a full etcd snapshot, as `etcdctl
 * snapshot restore` does it: the last 32 bytes of the (decompressed)
 * snapshot stream are the SHA-256 of every byte before them.
 *
 * The bytes are fed as they are read (snapverify_update), decompressed on
 * the way through zlib where the name says so (".gz": gzip, ".zlib": zlib,
 * as etcd-backup-restore's compressors write them) and through lzw.h where
 * it says ".Z" (Go's compress/lzw, LSB, literal width 8, as
 * etcd-backup-restore's LZW compressor writes it); memory is bounded (a
 * 64 KiB inflate buffer and zlib's window, or LZW's 16 KiB table, and one
 * SHA-256 context) whatever the snapshot's size. Any other compression is
 * refused with KERR_UNSUPPORTED: such a snapshot is not verified.
 *
 * As etcd checks it (etcdctl snapshot restore, and etcd-backup-restore
 * before it uploads a full snapshot), the digest is there only when the
 * decompressed length is 512 k + 32 (a bbolt database is whole sectors); a
 * snapshot of any other length has no digest and fails, as it does there.
 *
 * Only full snapshots are etcd snapshots; delta snapshots are JSON event
 * lists and carry no such digest.
 *
 * Ownership: a struct snapverify is OWNED by its creator (snapverify_free).
 * Thread safety: one verifier per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPVERIFY_H
#define CONTROLLER_SNAPSHOT_SNAPVERIFY_H

#include <stdbool.h>
#include <stddef.h>

#include "common/kerr.h"
#include "controller/snapshot/ostore.h"
#include "controller/snapshot/snapname.h"

#define SNAPVERIFY_HEX_LEN 64

struct snapverify;

/* compression: the name's suffix ("", ".gz", ".zlib", ".Z"; BORROWED). KERR_UNSUPPORTED for
 * any other. On KERR_OK *out OWNS the verifier. */
enum kerr snapverify_new(const char *compression, struct snapverify **out, struct kerr_info *err);

/* The next len bytes of the stored object. KERR_PARSE when they cannot be decompressed or
 * follow the end of the compressed stream. */
enum kerr snapverify_update(struct snapverify *v, const void *data, size_t len,
                            struct kerr_info *err);

/* After the last byte: KERR_OK and the digest (hex) when the stream is complete, its length
 * 512 k + 32 and its last 32 bytes the SHA-256 of the rest; KERR_PARSE otherwise
 * (truncated, no digest, digest mismatch). */
enum kerr snapverify_finish(struct snapverify *v, char hex[SNAPVERIFY_HEX_LEN + 1],
                            struct kerr_info *err);

void snapverify_free(struct snapverify *v);

/* Receives the verified stream's bytes (BORROWED for the call) but its last 32, in order,
 * as they are hashed; a non-OK return stops snapverify_update with it. */
typedef enum kerr (*snapverify_sink)(void *ctx, const unsigned char *p, size_t n,
                                     struct kerr_info *err);

/*
 * Hand the decompressed bytes to sink(ctx, ...) as well (NULL: none). delta: the stream
 * is a delta snapshot, whose length is anything above 32 bytes (the sidecar's restore
 * fails one of 32 bytes or less: "delta snapshot is missing hash"), not 512 k + 32.
 * Call before the first snapverify_update.
 */
void snapverify_tap(struct snapverify *v, snapverify_sink sink, void *ctx, bool delta);

/* Read obj (its size from obj->size) from s through one bounded buffer and verify it as
 * above: KERR_PARSE when it is corrupt, the store's error when it cannot be read. */
enum kerr snapverify_object(struct ostore *s, const struct ostore_obj *obj, const char *compression,
                            char hex[SNAPVERIFY_HEX_LEN + 1], struct kerr_info *err);

/* A verifier for the snapshot n stored at key (BORROWED) into *out (OWNED), or NULL
 * (KERR_OK) when it is not verified: not a full snapshot, a chunk, or a compression this
 * module cannot read (logged as a warning naming key). */
enum kerr snapverify_for(const struct snap_name *n, const char *key, struct snapverify **out,
                         struct kerr_info *err);

/* The len bytes at off of the size-byte object key into v (NULL: nothing to do); after the
 * last one (off + len == size) the verdict: KERR_IO "snapshot <key> is corrupt: ..." when it
 * fails. */
enum kerr snapverify_piece(struct snapverify *v, const char *key, int64_t size, int64_t off,
                           const void *data, size_t len, struct kerr_info *err);

#endif
