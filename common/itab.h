/*
 * itab - a hash table of string-keyed entries with secondary indexes: the
 * engine under common/store (which adds locking, cJSON objects, projection).
 *
 * An entry has a key, an opaque data pointer and, for each index, zero or
 * more index values. An index maps a value to the entries that have it
 * (a group of postings, linked both ways so that removing an entry is O(its
 * values)). Entries are built with itab_entry_new, which allocates everything
 * an insertion needs (including a spare group per value), so itab_put,
 * itab_del and itab_swap never fail: they allocate only to grow the hash
 * tables, and a failed growth just leaves longer chains.
 *
 * Ownership: a table OWNS the entries linked into it; an entry taken out
 * (itab_put's return value, itab_del) is OWNED by the caller and
 * freed with itab_entry_free. The data pointer is never touched by itab: the
 * caller frees it before freeing the entry.
 * Thread safety: none; the caller serialises access (readers may share a
 * table while nobody modifies it: lookups and walks do not write).
 */
#ifndef COMMON_ITAB_H
#define COMMON_ITAB_H

#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

struct itab_posting;
struct itab_index;

struct itab_entry {
    struct itab_entry *next;    /* hash chain; internal */
    void *data;                 /* the caller's */
    struct itab_posting *posts; /* internal */
    uint32_t nposts;
    uint32_t hash;
    int linked; /* internal: postings linked into a table's indexes */
    char key[]; /* NUL-terminated */
};

struct itab {
    struct itab_entry **b;
    size_t n;     /* buckets, a power of two */
    size_t count; /* entries */
    struct itab_index *idx;
    size_t nidx;
};

/* An index value for itab_entry_new: index number (itab_add_index order) and value (BORROWED). */
struct itab_value {
    size_t index;
    const char *value;
};

/* Visitor of a walk: non-OK stops the walk and is returned. */
typedef enum kerr (*itab_visit_fn)(void *arg, struct itab_entry *e);

/* Frees the data of an entry (called by itab_release). */
typedef void (*itab_free_fn)(void *arg, void *data);

/* An empty table without indexes. KERR_NOMEM. */
enum kerr itab_init(struct itab *t);

/*
 * Free the table, its indexes and every entry still in it, calling
 * free_data(arg, data) for each entry's data when free_data is not NULL.
 * Safe to call twice.
 */
void itab_release(struct itab *t, itab_free_fn free_data, void *arg);

/* Add an index named name (copied); only while the table is empty (KERR_INVAL). */
enum kerr itab_add_index(struct itab *t, const char *name);

/* The number of the index named name, or -1. */
long itab_index_of(const struct itab *t, const char *name);

/*
 * A new, unlinked entry with a copy of key and of the n values (a value
 * repeated for one index counts once; index numbers must be valid for the
 * table it will go into). data is NULL. On KERR_OK *out OWNS it.
 */
enum kerr itab_entry_new(const char *key, const struct itab_value *vals, size_t n,
                         struct itab_entry **out);

/* Free an entry that is in no table (not its data). NULL is a no-op. */
void itab_entry_free(struct itab_entry *e);

/* The entry under key, or NULL. BORROWED. */
struct itab_entry *itab_get(const struct itab *t, const char *key);

/*
 * Link e (TAKES) under its key, and into the indexes when the table has
 * any. Returns the entry it replaced (now OWNED by the caller), or NULL.
 */
struct itab_entry *itab_put(struct itab *t, struct itab_entry *e);

/* Take the entry under key out of the table (OWNED by the caller), or NULL. */
struct itab_entry *itab_del(struct itab *t, const char *key);

/* Visit every entry (no particular order). fn may change e->data, not the table. */
enum kerr itab_walk(const struct itab *t, itab_visit_fn fn, void *arg);

/* Visit the entries whose index number index has value. */
enum kerr itab_walk_index(const struct itab *t, size_t index, const char *value, itab_visit_fn fn,
                          void *arg);

/*
 * Replace the content of t by that of fresh (a table without indexes whose
 * entries were built for t's indexes): t's entries move to *old (set up here,
 * without indexes; release it with itab_release after taking what you need),
 * the indexes are rebuilt from fresh's entries, and fresh is released.
 * Cannot fail.
 */
void itab_swap(struct itab *t, struct itab *fresh, struct itab *old);

#endif
