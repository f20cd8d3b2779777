/*
 * snapfetch - the pieces of a chain of objects fetched ahead, in parallel,
 * and handed over in order, as etcd-backup-restore's restore fetches its
 * deltas with several fetchers.
 *
 * The objects are cut into pieces of at most piece bytes (an object of size
 * 0 has none). Each fetcher thread reads through a store of its own the next
 * piece not yet taken, into the slot it maps to (piece k into slot
 * k % slots); a slot is refilled only once the consumer released the piece
 * before. So at most slots pieces are held, whatever the chain's size, and
 * a fetcher runs at most slots pieces ahead of the consumer.
 *
 * The consumer asks for pieces in order (snapfetch_take): the piece at
 * (object, offset) when it is the next one, its bytes or the error its read
 * gave; anything else (a piece read again, out of order) is a miss and the
 * caller reads it itself. A read error is handed over as the piece's answer,
 * the same as a read by the caller would give.
 *
 * Ownership: a struct snapfetch OWNS its slots and threads; the stores and
 * the object list are BORROWED and must outlive it (snapfetch_free joins
 * the threads). Thread safety: take and release from one thread.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPFETCH_H
#define CONTROLLER_SNAPSHOT_SNAPFETCH_H

#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"
#include "controller/snapshot/ostore.h"

#define SNAPFETCH_MAX_FETCHERS 16

struct snapfetch;

/* One object of the chain: NULL obj (or obj->size <= 0) is not fetched. */
struct snapfetch_item {
    const struct ostore_obj *obj; /* BORROWED */
};

/*
 * Start fetching items[0..n) (BORROWED) through stores[0..nstores) (BORROWED, one per
 * fetcher thread, 1..SNAPFETCH_MAX_FETCHERS), slots pieces of at most piece bytes held at
 * most. On KERR_OK *out OWNS the fetcher.
 */
enum kerr snapfetch_start(struct ostore *const *stores, size_t nstores,
                          const struct snapfetch_item *items, size_t n, size_t piece, size_t slots,
                          struct snapfetch **out, struct kerr_info *err);

/*
 * The piece of item idx at off of len bytes when it is the next piece: *data (BORROWED until
 * snapfetch_release) and the read's result (KERR_OK, or its error in err). Returns 0 on a
 * miss (not the next piece, or f NULL): the caller reads the bytes itself.
 */
int snapfetch_take(struct snapfetch *f, size_t idx, int64_t off, size_t len,
                   const unsigned char **data, enum kerr *rc, struct kerr_info *err);

/* Done with the piece taken last: its slot is refilled. */
void snapfetch_release(struct snapfetch *f);

/* Stop the fetchers, join them and free. NULL is a no-op. */
void snapfetch_free(struct snapfetch *f);

#endif
