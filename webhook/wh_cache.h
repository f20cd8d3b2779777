/*
 * wh_cache - the parent lookups of the webhook, served from watch-fed caches.
 *
 * Three informers (common/informer): every Etcd
 * (druid.gardener.cloud/v1alpha1), the StatefulSets labelled
 * app.kubernetes.io/managed-by=etcd-druid, and every EtcdOpsTask. Each
 * keeps only what the decisions read (lookup_etcd_project /
 * lookup_sts_project with datamnt_project, container etcd's volume mounts
 * and the claim templates' names / lookup_task_project); StatefulSets are
 * indexed by
 * namespace for the PVC rule, EtcdOpsTasks for the scale-down guard, whose
 * snapshot lookup is answered by the cache alone (no fallback; an error
 * until the cache has synced).
 *
 * wh_cache_bind turns the caches into a struct lookup:
 *   - an object found in the cache is answered from it, with no API call
 *     (sts_object too: the projection, a copy per call);
 *   - a miss (or a cache not synced yet) falls back to one GET (one LIST
 *     for the PVC rule when the PVC's labels do not select managed
 *     StatefulSets only), so an object created a moment ago is seen; the
 *     call is bounded by the review's deadline (lookup_deadline: no
 *     attempt or Retry-After wait past it);
 *   - at most fallback_limit fallbacks run at once: past that, a synced
 *     cache's answer stands (KERR_NOTFOUND with err->reason
 *     LOOKUP_REASON_UNCONFIRMED, so a decision can tell it from an API
 *     answer), so a flood of reviews about missing objects cannot tie up
 *     the server threads on API calls.
 *
 * Thread safety: the lookups may be called from any number of threads
 * once the cache is started; new/start/free from the controlling thread.
 */
#ifndef WEBHOOK_WH_CACHE_H
#define WEBHOOK_WH_CACHE_H

#include "common/informer.h"
#include "common/k8s.h"
#include "common/kerr.h"
#include "webhook/lookup.h"

#define WH_CACHE_DEFAULT_FALLBACKS 2

struct wh_cache_opts {
    struct k8s_client *client; /* BORROWED, required */
    const char *ns;            /* BORROWED; NULL: every namespace */
    int fallback_limit;        /* concurrent fallback calls; 0: default, < 0: none */
    int compact;               /* keep cached objects as text (smaller, a parse per read) */
};

/* Counters since wh_cache_new. */
struct wh_cache_stats {
    unsigned long hits;         /* lookups answered by a cache */
    unsigned long fallbacks;    /* GET / LIST calls made */
    unsigned long refused;      /* fallbacks skipped because fallback_limit was reached */
    size_t etcds, stses, tasks; /* objects cached */
};

struct wh_cache;

/* Create the caches (not started). On KERR_OK *out OWNS it: wh_cache_free(). */
enum kerr wh_cache_new(const struct wh_cache_opts *opts, struct wh_cache **out,
                       struct kerr_info *err);

/* Start the informers. */
enum kerr wh_cache_start(struct wh_cache *c, struct kerr_info *err);

/* True once every informer filled its store. */
int wh_cache_synced(struct wh_cache *c);

/* Wait until synced: KERR_OK or KERR_TIMEOUT. */
enum kerr wh_cache_wait_synced(struct wh_cache *c, long timeout_ms);

/* Point *out at the cache. c must outlive *out. */
void wh_cache_bind(struct wh_cache *c, struct lookup *out);

/* A snapshot of the counters. */
void wh_cache_stats(struct wh_cache *c, struct wh_cache_stats *out);

/* inf_report_rv for each informer. */
void wh_cache_report_rv(struct wh_cache *c, inf_rv_fn fn, void *ctx);

/* Stop the informers and free. NULL: no-op. */
void wh_cache_free(struct wh_cache *c);

#endif
