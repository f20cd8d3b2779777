/*
 * hindex - a hash index of entries that readers probe without a lock:
 * open addressing with linear probing, kept at most half full (removed
 * entries count until the next growth), so a probe always ends at an empty
 * slot. common/metrics indexes a metric's label sets with it.
 *
 * Entries are intrusive: the indexed struct embeds a struct hindex_entry
 * whose hash is set before hindex_put and never changes. A slot goes from
 * empty to an entry (release) and, on removal, to a tombstone, so a reader
 * sees an empty slot, a tombstone or a whole entry. Growing builds a bigger
 * table and publishes it; the replaced tables are kept, since readers may
 * still probe them, until hindex_remove or hindex_free.
 *
 * Thread safety: hindex_find from any thread at any time, without a lock; a
 * find racing a put may miss the new entry (look again under the writers'
 * lock). hindex_reserve and hindex_put are serialized by the caller (one
 * writer at a time). hindex_remove requires that no other thread uses the
 * index meanwhile. Ownership: the index BORROWS its entries; it owns its
 * tables (hindex_free).
 */
#ifndef COMMON_HINDEX_H
#define COMMON_HINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

struct hindex_entry {
    uint64_t hash;
};

struct hindex_table;

struct hindex {
    struct hindex_table *_Atomic table; /* NULL while empty */
    size_t used;                        /* entries and tombstones in table; writer only */
};

/* FNV-1a over n strings, each with its NUL, so ("a","bc") and ("ab","c") differ. */
uint64_t hindex_hash(const char *const *strs, size_t n);

/* An empty index (no allocation). */
void hindex_init(struct hindex *ix);

/* Free the tables (not the entries). The index is empty afterwards. */
void hindex_free(struct hindex *ix);

/*
 * The first entry with hash for which eq(e, key) is true, or NULL.
 * Lock-free (see above).
 */
typedef int (*hindex_eq_fn)(const struct hindex_entry *e, const void *key);
struct hindex_entry *hindex_find(struct hindex *ix, uint64_t hash, hindex_eq_fn eq,
                                 const void *key);

/* Make room for one more hindex_put. Writer. Errors: KERR_NOMEM (the index unchanged). */
enum kerr hindex_reserve(struct hindex *ix);

/* Add e (BORROWED, e->hash set) after a successful hindex_reserve. Writer. */
void hindex_put(struct hindex *ix, struct hindex_entry *e);

/* Remove e (by identity) if indexed. No concurrent use; frees replaced tables. */
void hindex_remove(struct hindex *ix, struct hindex_entry *e);

#endif
