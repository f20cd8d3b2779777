/*
 * snappipe - one object streamed from a source store into an upload of the
 * destination store, reading the next part while the current one is sent.
 *
 * A reader thread reads the object part by part (at most part-size bytes
 * each) from the source into one of two buffers, adds each part to the
 * object's MD5 and to the snapshot verifier, and hands it over; the calling
 * thread sends the parts in order (up_part). So at most two parts are held,
 * and the source and the destination are each used by one thread only.
 *
 * The guarantees of the sequential stream are kept: a part is handed over
 * only after the verifier has seen it, so the verdict on a full snapshot
 * (snapverify_piece on its last part) comes before its last part is sent; a
 * failure on either side (a read, the verdict, a part, stop() answering an
 * error) stops both, and the first error is returned. The caller aborts the
 * upload then; nothing is committed here.
 *
 * Ownership: everything BORROWED; the buffers are the caller's, each at least
 * the part size. Thread safety: src and dst must be different stores (each
 * store is used from one thread at a time); md and v are touched by the reader
 * thread only until snappipe_stream returns.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPPIPE_H
#define CONTROLLER_SNAPSHOT_SNAPPIPE_H

#include <openssl/evp.h>
#include <stddef.h>

#include "common/kerr.h"
#include "controller/snapshot/ostore.h"
#include "controller/snapshot/snapverify.h"

struct snappipe_job {
    struct ostore *src;
    const struct ostore_obj *obj; /* the source object, its size known */
    struct ostore *dst;
    struct ostore_upload *up; /* begun by the caller */
    unsigned char *buf[2];    /* two buffers of part bytes each */
    size_t part;
    EVP_MD_CTX *md;       /* the object's MD5, initialised by the caller */
    struct snapverify *v; /* NULL: not verified */
    /* Polled before every read and every send: non-KERR_OK stops the stream (a signal). */
    enum kerr (*stop)(struct kerr_info *err);
};

/* Stream j->obj into j->up as above. */
enum kerr snappipe_stream(const struct snappipe_job *j, struct kerr_info *err);

#endif
