/*
 * store - a thread-safe cache of Kubernetes objects: the store of an informer.
 *
 * Objects are keyed by "namespace/name" ("name" for cluster-scoped ones,
 * kobj_key_of) in a hash table (common/itab). Before an object is stored an
 * optional projection keeps only the fields a process needs
 * (kobj_project_paths with a list of paths, e.g. KOBJ_META_PATHS);
 * secondary indexes map an index value (a namespace, a label value, ...) to
 * the keys of the objects that produce it (ready-made index functions are in
 * common/kobj). How an entry is built and kept is common/storeent.
 *
 * Memory: an object is kept either as a cJSON tree (the default: store_view
 * hands the tree itself to the caller, zero-copy) or, with opts.compact, as
 * its compact JSON text, parsed again on every read. cJSON spends several
 * times the text size on a tree. Measured with 10,000 Etcd objects of 1.3 KB
 * projected with KOBJ_META_PATHS and two indexes: 31 MB as trees, 8.4 MB
 * compact (unprojected: 84 MB and 16 MB); a store_get took 2.5 us (tree
 * copy) and 1.6 us (compact parse). A process caching many objects under a
 * tight memory budget should project and set compact. On top of the object
 * an entry costs its key, about 40 bytes, a hash-table slot and 32 bytes plus
 * a group share per index value.
 *
 * Reads (get, view, foreach, count, index lookups) take a read lock and run
 * concurrently; writes (put, remove, replace) take the write lock only to
 * link or unlink prepared entries (replace also compares old and new objects
 * under it): projection, index functions and printing happen before. The
 * lock prefers writers, so a stream of readers cannot starve the informer.
 * Callbacks (store_view_fn) run under the read
 * lock: they must be short, must not keep the object pointer and must not
 * call into the same store. Projection and index functions are called from
 * the writing thread, outside the lock, and must be thread-safe if several
 * threads write.
 *
 * Ownership: the store OWNS what it holds; every object it returns is a deep
 * copy the caller OWNS (cJSON_Delete), except the BORROWED object passed to a
 * store_view_fn.
 * Thread safety: every function may be called from any thread, except
 * store_add_index (before the store is shared) and store_free (last call).
 */
#ifndef COMMON_STORE_H
#define COMMON_STORE_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "common/strlist.h"

/*
 * Projection: make *out, a new tree (OWNED by the caller) holding what should
 * be stored of obj (BORROWED). KERR_OK or an error that makes the write fail.
 */
typedef enum kerr (*store_project_fn)(void *ctx, const cJSON *obj, cJSON **out);

/*
 * Index function: add zero or more values for obj (BORROWED, the projected
 * object) to values with strlist_add. Duplicates are ignored.
 */
typedef enum kerr (*store_index_fn)(void *ctx, const cJSON *obj, struct strlist *values);

/*
 * Key function: write the key of obj (BORROWED, the projected object) into
 * out (n bytes, NUL-terminated). KERR_OK, or an error that makes the write fail.
 */
typedef enum kerr (*store_key_fn)(void *ctx, const cJSON *obj, char *out, size_t n,
                                  struct kerr_info *err);

/* Reader callback: obj is BORROWED for the call only. Non-OK stops an iteration. */
typedef enum kerr (*store_view_fn)(void *ctx, const char *key, const cJSON *obj);

#define STORE_KEY_MAX 512 /* a key of any key function, NUL included; kobj keys fit */

struct store_opts {
    store_project_fn project; /* NULL: store objects whole */
    void *project_ctx;        /* BORROWED, passed to project; must outlive the store */
    int compact;              /* keep objects as compact JSON text (see the top of the file) */
    store_key_fn key;         /* NULL: kobj_key_of ("namespace/name"); a store holding
                                 several kinds keys them e.g. "kind/namespace/name" */
    void *key_ctx;            /* BORROWED, passed to key; must outlive the store */
};

/* One difference found by store_replace. Objects OWNED by the change. */
enum store_change_kind { STORE_ADDED, STORE_UPDATED, STORE_DELETED };

struct store_change {
    enum store_change_kind kind;
    char *key;      /* OWNS */
    cJSON *old_obj; /* UPDATED, DELETED: the object that was stored; else NULL */
    cJSON *new_obj; /* ADDED, UPDATED: the object now stored; else NULL */
};

struct store_changes {
    struct store_change *v;
    size_t n;
    size_t cap;
    /*
     * Set after store_changes_init: store_replace leaves new_obj NULL in the ADDED and
     * UPDATED changes (read each with store_get under its key when it is needed), so that
     * a large list's new objects are never all parsed into trees at once.
     */
    int lazy_new;
};

struct store;

/* ---- lists ---- */

void store_changes_init(struct store_changes *c);

/* Free every change and its objects. Safe to call twice. */
void store_changes_release(struct store_changes *c);

/* ---- lifecycle ---- */

/* Create an empty store; opts may be NULL. On KERR_OK *out OWNS it (store_free). */
enum kerr store_new(const struct store_opts *opts, struct store **out, struct kerr_info *err);

/* Free the store and everything in it. NULL is a no-op. */
void store_free(struct store *s);

/*
 * Add a secondary index named name (copied) computed by fn(ctx, obj, values).
 * Only while the store is empty and not yet shared between threads:
 * KERR_INVAL otherwise or when the name is taken. ctx must outlive the store.
 */
enum kerr store_add_index(struct store *s, const char *name, store_index_fn fn, void *ctx,
                          struct kerr_info *err);

/* ---- projection ---- */

/* The projection of the store applied to obj (BORROWED); *out OWNED by the caller. */
enum kerr store_project(const struct store *s, const cJSON *obj, cJSON **out,
                        struct kerr_info *err);

/* The key obj (BORROWED, projected) has in this store, into out (n bytes). */
enum kerr store_key_of(const struct store *s, const cJSON *obj, char *out, size_t n,
                       struct kerr_info *err);

/* ---- writes ---- */

/*
 * Add or replace obj (TAKES: freed on failure too) under its key, after the
 * projection. old_out (optional): *old_out OWNS the previously stored object,
 * or NULL when the key is new. new_out (optional): *new_out OWNS a copy of
 * what is now stored.
 */
enum kerr store_put(struct store *s, cJSON *obj, cJSON **old_out, cJSON **new_out,
                    struct kerr_info *err);

/* Remove key. KERR_NOTFOUND when absent. old_out (optional) OWNS the removed object. */
enum kerr store_remove(struct store *s, const char *key, cJSON **old_out, struct kerr_info *err);

/*
 * Replace the whole content with items (TAKES: a cJSON array of objects,
 * freed in every case), as after a relist; a later item wins over an earlier
 * one with the same key. changes (optional, appended to) receives ADDED for
 * new keys and UPDATED for keys whose stored object differs, in the order of
 * items (a repeated key at the place of its last item), then DELETED for
 * keys gone. On an error before the swap the store is unchanged; KERR_NOMEM while
 * building changes leaves the store replaced and changes incomplete.
 *
 * Raw items: in a compact store without a projection an item may be a raw
 * item (cJSON_CreateRaw) holding the object's compact JSON text, as an
 * informer lists into such a store. The text is parsed once for the key and
 * the index values and stored as it is, never printed again
 * (storeent_prepare), and it is compared byte for byte with the stored
 * text: it should be printed as cJSON_PrintUnformatted prints, or an
 * unchanged object counts as UPDATED. A raw item that is not JSON fails the
 * call with KERR_INVAL before the swap; in any other store a raw item is no
 * object and fails the call too (it has no metadata.name). The objects of
 * the changes are trees either way.
 */
enum kerr store_replace(struct store *s, cJSON *items, struct store_changes *changes,
                        struct kerr_info *err);

/*
 * store_replace for one scope of a store shared by several writers: the
 * objects whose keys start with scope (e.g. "Service/" in a store keyed
 * "<kind>/<ns>/<name>") are replaced with items, every other key is left
 * as it is (scope NULL: the whole store, store_replace). Every item's key
 * must start with scope (KERR_INVAL before any change otherwise). Changes
 * as store_replace's, DELETED for the keys of the scope gone. Only one
 * thread may write a scope (an informer: it lists and watches its kind);
 * other threads may write other scopes at the same time. Readers see the
 * scope switch at once, under the write lock, as with store_replace.
 */
enum kerr store_replace_scope(struct store *s, const char *scope, cJSON *items,
                              struct store_changes *changes, struct kerr_info *err);

/* ---- reads ---- */

/* Number of objects. */
size_t store_count(struct store *s);

/* Copy of the object under key into *out (OWNED by the caller). KERR_NOTFOUND when absent. */
enum kerr store_get(struct store *s, const char *key, cJSON **out, struct kerr_info *err);

/*
 * As store_get, but a compact store's copy is parsed into the calling thread's arena
 * (common/jarena): read it only, and release it with jarena_delete on this thread.
 */
enum kerr store_get_arena(struct store *s, const char *key, cJSON **out, struct kerr_info *err);

/*
 * Run fn(ctx, key, obj) on the object under key, under the read lock, and
 * return what fn returns. Zero-copy unless the store is compact. KERR_NOTFOUND
 * (fn not called) when absent.
 */
enum kerr store_view(struct store *s, const char *key, store_view_fn fn, void *ctx,
                     struct kerr_info *err);

/* Run fn on every object (in no particular order) until it returns non-OK, which is returned. */
enum kerr store_foreach(struct store *s, store_view_fn fn, void *ctx, struct kerr_info *err);

/* Append every key to out. */
enum kerr store_keys(struct store *s, struct strlist *out, struct kerr_info *err);

/*
 * Append to out the keys of the objects whose index produced value (none:
 * KERR_OK, nothing appended). KERR_NOTFOUND for an unknown index.
 */
enum kerr store_index_keys(struct store *s, const char *index, const char *value,
                           struct strlist *out, struct kerr_info *err);

/* As store_index_keys, but *out OWNS a cJSON array of copies of the objects. */
enum kerr store_index_list(struct store *s, const char *index, const char *value, cJSON **out,
                           struct kerr_info *err);

/* As store_index_keys, running fn on each object under the read lock (as store_foreach). */
enum kerr store_index_view(struct store *s, const char *index, const char *value, store_view_fn fn,
                           void *ctx, struct kerr_info *err);

#endif
