/*
 * store - kube-sim's in-memory object store: etcd's role in a cluster.
 *
 * Objects are cJSON trees grouped in tables by store key ("apps/statefulsets")
 * and ordered by "namespace/name" (cluster-scoped: "name"), as etcd orders
 * /registry keys, so limit/continue pages are stable. One global counter
 * hands out resourceVersions: every create, update and delete takes the next
 * one and records an event in the table's history ring (its length is
 * configurable). A watch replays the history after its starting
 * resourceVersion, then follows new events; a start older than the history
 * is KERR_GONE (410 Expired).
 *
 * The store knows nothing of API semantics (uid, generation, finalizers,
 * admission): it writes metadata.resourceVersion and keeps order.
 *
 * Ownership: objects passed in are TAKEN; objects handed out are deep copies
 * the caller OWNS (cJSON_Delete). Thread safety: every function may be
 * called from any thread; one mutex guards all tables and a condition
 * variable wakes watchers.
 */
#ifndef KSIM_STORE_H
#define KSIM_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cJSON.h>

#include "common/kerr.h"

struct ksim_store;
struct ksim_store_watch;

struct ksim_store_opts {
    size_t history;     /* events kept per table for watch resumption; 0 = 1000 */
    size_t max_objects; /* objects in all tables together; 0 = 100000 */
};

enum ksim_event_type { KSIM_EV_ADDED, KSIM_EV_MODIFIED, KSIM_EV_DELETED };

/* One change, as a watcher receives it. obj and prev are OWNED by the receiver. */
struct ksim_store_event {
    enum ksim_event_type type;
    uint64_t rv;
    cJSON *obj;  /* the object after the change (DELETED: last state, rv = deletion rv) */
    cJSON *prev; /* the object before a MODIFIED, else NULL */
};

/* Object filter for list: return non-zero to keep obj (BORROWED). */
typedef int (*ksim_store_match_fn)(const cJSON *obj, void *arg);

/* A new empty store. On KERR_OK *out OWNS it (ksim_store_free). */
enum kerr ksim_store_new(const struct ksim_store_opts *opts, struct ksim_store **out,
                         struct kerr_info *err);

/* Wake every watcher with KERR_CLOSED; later waits return at once. */
void ksim_store_shutdown(struct ksim_store *st);

/* NULL is a no-op. All watches must be closed first. */
void ksim_store_free(struct ksim_store *st);

/* The latest resourceVersion handed out. */
uint64_t ksim_store_rv(struct ksim_store *st);

/* Number of objects in all tables. */
size_t ksim_store_count(struct ksim_store *st);

/* A deep copy of the object. KERR_NOTFOUND when absent. ns is NULL or "" for cluster scope. */
enum kerr ksim_store_get(struct ksim_store *st, const char *skey, const char *ns, const char *name,
                         cJSON **out, struct kerr_info *err);

/*
 * fn on the stored object (BORROWED, only during the call, the store locked: fn must not
 * call the store) with arg; KERR_NOTFOUND when absent. A look without a copy.
 */
enum kerr ksim_store_view(struct ksim_store *st, const char *skey, const char *ns, const char *name,
                          void (*fn)(const cJSON *obj, void *arg), void *arg);

/*
 * Store a new object (TAKEN) under ns/name with the next resourceVersion.
 * KERR_EXISTS when present, KERR_TOOBIG past max_objects. On KERR_OK *out
 * (optional) OWNS a copy of what was stored.
 */
enum kerr ksim_store_create(struct ksim_store *st, const char *skey, const char *ns,
                            const char *name, cJSON *obj, cJSON **out, struct kerr_info *err);

/*
 * Replace the object (obj TAKEN) when its stored resourceVersion equals
 * expect_rv (0 = unconditionally). KERR_NOTFOUND, KERR_CONFLICT.
 */
enum kerr ksim_store_update(struct ksim_store *st, const char *skey, const char *ns,
                            const char *name, uint64_t expect_rv, cJSON *obj, cJSON **out,
                            struct kerr_info *err);

/* Remove the object when its resourceVersion equals expect_rv (0 = any). *out (optional) OWNS
 * its last state stamped with the deletion's resourceVersion. */
enum kerr ksim_store_delete(struct ksim_store *st, const char *skey, const char *ns,
                            const char *name, uint64_t expect_rv, cJSON **out,
                            struct kerr_info *err);

/* What a list returns. */
struct ksim_store_page {
    cJSON *items;   /* OWNS: array of deep copies in key order */
    uint64_t rv;    /* resourceVersion the list was served at */
    char *next_key; /* OWNS: last key of a full page when more items follow, else NULL */
    long remaining; /* items after this page (counted when limit > 0 and no match function) */
};

/*
 * List objects of a table (ns NULL = all namespaces), keeping those match
 * accepts (NULL = all), starting after key start_after (NULL = from the
 * beginning), at most limit items (0 = no limit). On KERR_OK *page OWNS its
 * fields (ksim_store_page_release).
 */
enum kerr ksim_store_list(struct ksim_store *st, const char *skey, const char *ns,
                          ksim_store_match_fn match, void *arg, const char *start_after,
                          size_t limit, struct ksim_store_page *page, struct kerr_info *err);

/* Free the fields of a page. */
void ksim_store_page_release(struct ksim_store_page *page);

/* The resourceVersion below which a table's history is gone (0: nothing dropped yet). */
uint64_t ksim_store_oldest_rv(struct ksim_store *st, const char *skey);

/*
 * Start watching a table (ns NULL = all namespaces) for events after
 * from_rv. KERR_GONE with kube-apiserver's "too old resource version: X (Y)"
 * message when from_rv is older than the history. On KERR_OK *out OWNS the
 * watch (ksim_store_watch_close).
 */
enum kerr ksim_store_watch_open(struct ksim_store *st, const char *skey, const char *ns,
                                uint64_t from_rv, struct ksim_store_watch **out,
                                struct kerr_info *err);

/*
 * Wait for the next event until deadline (CLOCK_MONOTONIC; NULL = forever).
 * KERR_OK: *ev filled. KERR_TIMEOUT at the deadline. KERR_CLOSED when the
 * store shuts down or the watch was cut (fault injection). KERR_GONE when
 * the history moved past the watcher (forced expiry or a slow reader).
 */
enum kerr ksim_store_watch_next(struct ksim_store_watch *w, const struct timespec *deadline,
                                struct ksim_store_event *ev, struct kerr_info *err);

/* The resourceVersion a watch has delivered up to (for bookmarks): the store's own once no
 * event of the watcher's is left to deliver, as kube-apiserver's watch cache. */
uint64_t ksim_store_watch_rv(struct ksim_store_watch *w);

/* NULL is a no-op. */
void ksim_store_watch_close(struct ksim_store_watch *w);

/* Release the objects of an event. */
void ksim_store_event_release(struct ksim_store_event *ev);

/* Number of open watches. */
size_t ksim_store_watch_count(struct ksim_store *st);

/* Fault injection: every open watch ends with KERR_CLOSED. */
void ksim_store_cut_watches(struct ksim_store *st);

/* Fault injection: drop all history, so every open watch and every older
 * resourceVersion or continue token gets 410. */
void ksim_store_expire_history(struct ksim_store *st);

/*
 * Block until the store's resourceVersion passes since or the deadline
 * (CLOCK_MONOTONIC) comes; returns the current resourceVersion. For the
 * built-in controllers.
 */
uint64_t ksim_store_wait_change(struct ksim_store *st, uint64_t since,
                                const struct timespec *deadline);

/*
 * Call fn(skey, obj, arg) for every object (BORROWED, read-only) of every
 * table (skey NULL) or of one table, under the store lock: fn must not
 * call back into the store. The lock is let go between chunks of objects: a
 * write in between is seen or not, as by a walk that started later; an
 * object is never seen twice.
 */
void ksim_store_each(struct ksim_store *st, const char *skey,
                     void (*fn)(const char *skey, const cJSON *obj, void *arg), void *arg);

/* Drop a whole table (a deleted CRD's objects), recording no events. */
void ksim_store_drop_table(struct ksim_store *st, const char *skey);

/* metadata.resourceVersion of obj as a number; 0 when absent or malformed. */
uint64_t ksim_store_obj_rv(const cJSON *obj);

#endif
