/*
 * storeent - how common/store keeps an object: the codec between cJSON
 * objects and the itab entries of its table (common/itab).
 *
 * Storing an object runs the store's projection, takes the key (the
 * store's key function, by default kobj_key_of), computes the values of
 * every index function, and keeps the result either as a cJSON tree or,
 * with opts.compact, as compact JSON text. Reading copies the tree or
 * parses the text. This module holds no lock and no table: common/store
 * links and unlinks the entries under its lock, and calls the codec
 * outside it wherever it can.
 *
 * Ownership: a struct storeent_codec BORROWS its index functions; objects
 * and entries follow the TAKES / OWNED notes below.
 * Thread safety: the functions only read the codec, so they may run in
 * several threads at once while the codec is not changed; the projection
 * and index functions must then be thread-safe too.
 */
#ifndef COMMON_STOREENT_H
#define COMMON_STOREENT_H

#include <stddef.h>

#include <cJSON.h>

#include "common/itab.h"
#include "common/kerr.h"
#include "common/store.h"

/* One index function and its context (BORROWED). */
struct storeent_index {
    store_index_fn fn;
    void *ctx;
};

/* How objects are kept. Fill the fields directly; no init or release. */
struct storeent_codec {
    struct store_opts opts;           /* projection and compact */
    const struct storeent_index *idx; /* BORROWED; one per index of the table, in its order */
    size_t nidx;
};

/* The projection of obj (BORROWED) into *out (OWNED by the caller): a copy without one. */
enum kerr storeent_project(const struct storeent_codec *c, const cJSON *obj, cJSON **out,
                           struct kerr_info *err);

/* The key of obj (BORROWED, projected) by the codec's key function, into out (n bytes). */
enum kerr storeent_key(const struct storeent_codec *c, const cJSON *obj, char *out, size_t n,
                       struct kerr_info *err);

/*
 * Build an unlinked entry from obj (TAKES: freed in every case):
 * projection, key, index values, data. In a compact codec without a
 * projection obj may be a raw item (cJSON_CreateRaw) holding the object's
 * compact text, which is kept as it is. On KERR_OK *out OWNS the entry
 * (storeent_retire frees it) and *tree_out (optional) OWNS a copy of the
 * stored object. KERR_INVAL without a name or for a raw item that is not
 * JSON, KERR_TOOBIG, KERR_NOMEM, or the error of the projection or an index
 * function.
 */
enum kerr storeent_prepare(const struct storeent_codec *c, cJSON *obj, struct itab_entry **out,
                           cJSON **tree_out, struct kerr_info *err);

/* A new tree (OWNED by the caller) from an entry's data: a copy or a parse. KERR_NOMEM. */
enum kerr storeent_copy(const struct storeent_codec *c, const void *data, cJSON **out);

/*
 * The object of e into *out (OWNED by the caller): the tree itself, after
 * which e->data is NULL, or, compact, a parsed copy. KERR_NOMEM.
 */
enum kerr storeent_take(const struct storeent_codec *c, struct itab_entry *e, cJSON **out);

/* Free an entry's data. NULL is a no-op. */
void storeent_free_data(const struct storeent_codec *c, void *data);

/* storeent_free_data as an itab_free_fn: arg is the codec. */
void storeent_free_cb(void *arg, void *data);

/*
 * Free an entry taken out of a table (NULL is a no-op), first handing its
 * object to *obj_out when obj_out is not NULL (as storeent_take). The entry
 * is freed even when that copy fails with KERR_NOMEM.
 */
enum kerr storeent_retire(const struct storeent_codec *c, struct itab_entry *e, cJSON **obj_out);

/* 1 when the objects of a and b differ. */
int storeent_differs(const struct storeent_codec *c, const struct itab_entry *a,
                     const struct itab_entry *b);

#endif
