/*
 * informer - a watch-fed cache of one resource: client-go's reflector, store
 * and event handlers in one object with its own thread.
 *
 * The thread LISTs the resource (resourceVersion unset: a consistent read;
 * pages of page_size, following metadata.continue; an expired continue
 * token restarts the list once without a limit; each page is projected
 * before the next is fetched, so a large list never sits in memory whole;
 * the pages are parsed into the thread's arena, common/jarena, made
 * INF_LIST_ARENA bytes for the list's time and freed after it; the list
 * half is common/inflist.c),
 * fills the store, then WATCHes from the list's resourceVersion with
 * allowWatchBookmarks=true and timeoutSeconds random in
 * [min_watch_timeout_s, 2 * min_watch_timeout_s]. It tracks the
 * resourceVersion of every event, BOOKMARKs included, and:
 *   - a watch the server ends cleanly (timeoutSeconds) is resumed at once
 *     from the last resourceVersion (after a backoff if it ended within a
 *     second without any event, so a misbehaving server is not hammered);
 *   - a broken watch (transport error, undecodable stream, an ERROR event
 *     other than 410, an HTTP error) is resumed from the last
 *     resourceVersion after a backoff;
 *   - "too old resource version" (an in-stream ERROR with code 410 / reason
 *     Expired or Gone, or an HTTP 410 answer) and a failed LIST lead to a new
 *     LIST after a backoff; the store is replaced and the handlers are
 *     called for the differences (add, update, delete).
 * Backoff as client-go's reflector: 800 ms initial, doubled per failure up to
 * 30 s, jitter factor 1.0 (a delay d becomes a random value in [d, 2d)), and
 * back to the initial delay when the previous backoff is more than 2 minutes
 * old (2 minutes of healthy watching).
 *
 * Objects pass through the optional projection before they are stored or
 * handed to handlers (see common/kobj.h: KOBJ_META_PATHS); with compact the
 * store keeps them as text (smaller, a parse per read). Indexes are added to
 * inf_store() before inf_start.
 *
 * Handlers are called from the informer thread, in event order, never under
 * the store lock (they may read the store); the objects passed are BORROWED
 * for the call. A handler must not call inf_stop / inf_free on its own
 * informer. The optional resync re-delivers every stored object to
 * on_update(obj, obj) every resync_ms; it runs when a watch ends, and the
 * watch's timeoutSeconds is capped so that one ends in time.
 *
 * Ownership: struct inf (inf_new / inf_free) OWNS its thread and its store
 * (unless opts.store lends it a shared one); the client, the resource and the
 * option strings are BORROWED and must outlive the informer.
 * Thread safety: inf_store, inf_has_synced, inf_wait_synced, inf_stats and
 * inf_last_rv may be called from any thread at any time; inf_add_handlers
 * only before inf_start; inf_start, inf_stop and inf_free from one
 * controlling thread.
 */
#ifndef COMMON_INFORMER_H
#define COMMON_INFORMER_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"

#define INF_DEFAULT_PAGE_SIZE        500L
#define INF_DEFAULT_MIN_WATCH_S      300L    /* timeoutSeconds in [300, 600] */
#define INF_DEFAULT_BACKOFF_MS       800L    /* first backoff */
#define INF_DEFAULT_BACKOFF_MAX_MS   30000L  /* cap (before jitter) */
#define INF_DEFAULT_BACKOFF_RESET_MS 120000L /* healthy time that resets the backoff */
#define INF_RV_MAX                   64      /* resourceVersion buffer size */

/* Event handlers; any may be NULL. Objects are BORROWED for the call. */
struct inf_handlers {
    void (*on_add)(void *ctx, const cJSON *obj);
    void (*on_update)(void *ctx, const cJSON *old_obj, const cJSON *new_obj);
    void (*on_delete)(void *ctx, const cJSON *obj);
    void *ctx; /* BORROWED, passed to the handlers */
};

/* Options; zero fields take the defaults. Strings BORROWED. */
struct inf_opts {
    const struct k8s_resource *res; /* required */
    const char *ns;                 /* NULL: all namespaces */
    const char *label_selector;
    const char *field_selector;
    const char *name; /* for logs; NULL: the resource name */
    long page_size;   /* LIST limit; 0: 500, negative: no limit */
    long min_watch_timeout_s;
    long backoff_initial_ms;
    long backoff_max_ms;
    long backoff_reset_ms;
    long resync_ms;           /* 0: no resync */
    size_t line_max;          /* cap on one watch event; 0: WATCH_LINE_MAX_DEFAULT */
    store_project_fn project; /* NULL: keep objects whole */
    void *project_ctx;        /* BORROWED */
    int compact;              /* store objects as compact text */
    /*
     * A store shared by several informers (BORROWED, must outlive the informer), or NULL:
     * the informer makes and OWNS its own. The shared store's key function must give this
     * informer's (projected) objects keys that start with scope, and no other informer's
     * keys may: a relist replaces that scope only (store_replace_scope), a DELETED event
     * removes the key of the event object's projection. Indexes are the store owner's; a
     * compact informer needs a compact store without a projection (it lists raw items).
     */
    struct store *store;
    const char *scope; /* with store: the prefix of this informer's keys, e.g. "Service/" */
};

/* Counters since inf_new, for tests and metrics. */
struct inf_stats {
    unsigned long lists;   /* successful LISTs (the first one included) */
    unsigned long relists; /* LISTs after the first successful one */
    unsigned long list_errors;
    unsigned long watches;    /* WATCH requests made */
    unsigned long reconnects; /* WATCH requests after the first */
    unsigned long watch_errors;
    unsigned long expired;   /* 410 answers and ERROR events */
    unsigned long events;    /* ADDED, MODIFIED and DELETED events applied */
    unsigned long bookmarks; /* BOOKMARK events */
    unsigned long resyncs;
    long last_backoff_ms; /* the last backoff delay, 0 before any */
};

struct inf;

/* Create a stopped informer. On KERR_OK *out OWNS it (inf_free). KERR_INVAL without res. */
enum kerr inf_new(struct k8s_client *client, const struct inf_opts *opts, struct inf **out,
                  struct kerr_info *err);

/* Stop (if running) and free. NULL is a no-op. */
void inf_free(struct inf *inf);

/* Register handlers (copied) before inf_start; KERR_INVAL once started. */
enum kerr inf_add_handlers(struct inf *inf, const struct inf_handlers *h, struct kerr_info *err);

/* The informer's store (BORROWED): read it any time, add indexes before inf_start. */
struct store *inf_store(struct inf *inf);

/* Start the thread. KERR_INVAL when already started. */
enum kerr inf_start(struct inf *inf, struct kerr_info *err);

/*
 * Stop the thread: backoff sleeps end at once, the watch in flight is
 * cancelled (within about a second: k8s_watch polls its cancel flag from
 * curl's progress callback), a LIST in flight is finished first. Returns
 * when the thread has exited. Safe to call twice or before inf_start.
 */
void inf_stop(struct inf *inf);

/* 1 once the first LIST filled the store. */
int inf_has_synced(struct inf *inf);

/* Wait until synced: KERR_OK, KERR_TIMEOUT after timeout_ms, KERR_CANCELLED when stopped. */
enum kerr inf_wait_synced(struct inf *inf, long timeout_ms);

/* A snapshot of the counters. */
void inf_stats(struct inf *inf, struct inf_stats *out);

/* The last resourceVersion seen into out (n bytes; "" before the first LIST). */
void inf_last_rv(struct inf *inf, char *out, size_t n);

/* Called with an informer's name (opts.name, else the resource's) and its inf_last_rv. */
typedef void (*inf_rv_fn)(void *ctx, const char *name, const char *rv);

/* fn(ctx, name, last resourceVersion) for inf; NULL inf: no call. Any thread. */
void inf_report_rv(struct inf *inf, inf_rv_fn fn, void *ctx);

#endif
