/*
 * wh_dispatch - from a request body to the AdmissionReview answer of one of
 * the webhooks, with the decision metric and the review log line.
 * Everything between the HTTP layer (wh_server) and the pure decisions
 * (protect, restore, mutate); no sockets, so it is tested directly.
 *
 *   /webhooks/etcdcomponents  protect_decide  (validating, etcd-druid's)
 *   /webhooks/etcd            restore_decide  (validating, restoring rules)
 *   /webhooks/etcd-mutate     mutate_decide   (mutating)
 *   /webhooks/scaleguard      protect_guard_decide (validating: the scale-down
 *                             guard alone, next to etcd-druid's component webhook)
 *   /webhooks/backups         bkadm_decide (validating: EtcdBackup, EtcdBackupSchedule
 *                             and EtcdRestore destinations; with --backup-entries)
 *
 * A body that is not an AdmissionReview is answered with HTTP 400 and an
 * AdmissionReview carrying code 400 and the reason; every decided review is
 * HTTP 200 (the verdict is inside, as controller-runtime writes it).
 * Reviews are decoded selectively (see review_req_decode_sel), or as whole
 * trees when full_tree is set: the answers are the same byte for byte.
 * Each answer is logged as one JSON line with the review uid: denials and
 * errors at info, allowed reviews at debug.
 *
 * Thread safety: after wh_dispatch_init the struct is read-only and
 * wh_dispatch_review may run on any number of threads.
 */
#ifndef WEBHOOK_WH_DISPATCH_H
#define WEBHOOK_WH_DISPATCH_H

#include <stddef.h>

#include "common/kerr.h"
#include "common/metrics.h"
#include "webhook/lookup.h"
#include "webhook/protect.h"

struct prefix_cache; /* webhook/prefix.h */

enum wh_hook {
    WH_HOOK_COMPONENTS = 0,
    WH_HOOK_ETCD,
    WH_HOOK_MUTATE,
    WH_HOOK_SCALEGUARD,
    WH_HOOK_BACKUPS,
    WH_HOOK__COUNT
};

enum wh_result { WH_RESULT_ALLOWED = 0, WH_RESULT_DENIED, WH_RESULT_ERRORED, WH_RESULT__COUNT };

struct wh_dispatch {
    const struct protect_config *protect; /* BORROWED */
    const struct lookup *lookup;          /* BORROWED */
    struct prefix_cache *prefix; /* BORROWED or NULL: one prefix, one cluster (webhook/prefix.h) */
    /* warden_webhook_decisions_total children, BORROWED from the registry (NULL: none) */
    struct metrics_child *decisions[WH_HOOK__COUNT][WH_RESULT__COUNT];
    int disabled[WH_HOOK__COUNT]; /* a disabled webhook is not served (404) */
    /*
     * 0: the selective decoder (review_req_decode_sel: only what the
     * decision reads is parsed); 1: whole trees (review_req_decode_tree),
     * the reference of the differential tests and of the benchmark.
     */
    int full_tree;
};

/* The path of a webhook ("/webhooks/etcd", ...). */
const char *wh_hook_path(enum wh_hook h);

/* The webhook served at path: 0 and *out set, or -1 for an unknown path. */
int wh_hook_from_path(const char *path, enum wh_hook *out);

/*
 * Set up d with the decision inputs (BORROWED; must outlive d) and, when
 * registry is not NULL, register warden_webhook_decisions_total{webhook,result}.
 */
enum kerr wh_dispatch_init(struct wh_dispatch *d, const struct protect_config *protect,
                           const struct lookup *lookup, struct metrics_registry *registry,
                           struct kerr_info *err);

/*
 * Answer body (len bytes, BORROWED) for webhook h. On KERR_OK *out TAKES
 * the JSON text (free()) of *out_len bytes and *http_status is 200, or 400
 * for an undecodable body. Errors: KERR_NOMEM / KERR_TOOBIG when no answer
 * could be built (the caller answers 500).
 */
enum kerr wh_dispatch_review(const struct wh_dispatch *d, enum wh_hook h, const char *body,
                             size_t len, char **out, size_t *out_len, unsigned int *http_status,
                             struct kerr_info *err);

#endif
