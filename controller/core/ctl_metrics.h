/*
 * ctl_metrics - the metrics of warden-controller, named as controller-runtime
 * and client-go name theirs:
 *   controller_runtime_reconcile_total{controller,result}   counter
 *       result: success, error, requeue, requeue_after
 *   controller_runtime_reconcile_errors_total{controller}   counter
 *   controller_runtime_reconcile_time_seconds{controller}   histogram
 *   workqueue_depth{name}, workqueue_adds_total{name}, workqueue_retries_total{name}
 *   leader_election_master_status{name}                      gauge, 1 while leading
 *   warden_hibernation_phase_etcds{phase}                    gauge, cached Etcds per
 *       hibernation phase ("none": no phase annotation)
 *   warden_controller_cache_objects                          gauge, cached objects
 *   warden_reconcile_api_requests{controller}                histogram, API requests
 *       made by one reconciliation (k8s_thread_requests)
 *   the per-object gauges of src.gauges (struct ctl_metrics_gauge)
 * plus the process metrics (common/procmetrics). The queue, leader and cache
 * values are read by a render hook (ctl_metrics_source) on every scrape.
 *
 * Ownership: struct ctl_metrics (ctl_metrics_new / ctl_metrics_free) OWNS
 * its registry; metric pointers are BORROWED from it.
 * Thread safety: ctl_metrics_reconcile from any thread; new/free from one.
 */
#ifndef CONTROLLER_CTL_METRICS_H
#define CONTROLLER_CTL_METRICS_H

#include <stddef.h>

#include "common/kerr.h"
#include "common/metrics.h"
#include "common/workqueue.h"

/* Called by a gauge's collect for each series that exists now, with its value (1 for a
 * state; values BORROWED for the call). */
typedef void (*ctl_metrics_emit_fn)(void *emit_ctx, const char *const *values, double value);

/*
 * A per-object gauge: one series for each object in some state (at 1) or with some value
 * (a time), named by its labels (an Etcd, an entry), rebuilt from the caches on every
 * scrape: collect emits every series that exists now, the others disappear (so an alert
 * on it names the object and resolves when the object leaves the state). Strings
 * BORROWED, static.
 */
struct ctl_metrics_gauge {
    const char *name; /* NULL ends an array of them */
    const char *help;
    const char *const *labels; /* NULL-terminated */
    void (*collect)(void *src_ctx, ctl_metrics_emit_fn emit, void *emit_ctx);
};

#define CTL_METRICS_GAUGES_MAX 8 /* per-object gauges of one controller */

/* The live values a scrape reads; each callback may be NULL. */
struct ctl_metrics_source {
    struct wq *queue;          /* BORROWED; workqueue_* */
    const char *queue_name;    /* BORROWED; the name label */
    const char *lease_name;    /* BORROWED; leader_election_master_status's name */
    int (*leading)(void *ctx); /* 1 while leading */
    size_t (*phase_count)(void *ctx, const char *phase);
    size_t (*objects)(void *ctx);   /* cached objects */
    size_t (*conflicts)(void *ctx); /* BackupEntries with a PrefixConflict condition */
    void *ctx;                      /* BORROWED */
    /* The controllers that run (NULL-terminated, BORROWED; NULL: "etcd", "opstask",
     * "immtask"): their reconcile series exist at 0 from the start, as controller-runtime's. */
    const char *const *controllers;
    /* The per-object gauges (NULL-terminated, at most CTL_METRICS_GAUGES_MAX, BORROWED;
     * NULL: none); collect gets ctx. */
    const struct ctl_metrics_gauge *const *gauges;
};

#define CTL_METRICS_CONTROLLERS_MAX 8 /* the most src.controllers names */

struct ctl_metrics;

/* The outcome of one reconcile. */
enum ctl_metrics_result { CTL_R_SUCCESS, CTL_R_ERROR, CTL_R_REQUEUE, CTL_R_REQUEUE_AFTER };

/*
 * Registry and metrics; src (copied; its pointers BORROWED, must outlive the
 * metrics) feeds the render hook. On KERR_OK *out OWNS it.
 */
enum kerr ctl_metrics_new(const struct ctl_metrics_source *src, struct ctl_metrics **out,
                          struct kerr_info *err);

/* The registry (BORROWED). */
struct metrics_registry *ctl_metrics_registry(struct ctl_metrics *m);

/* Count one reconcile of controller (one of src.controllers) that took seconds and made
 * requests API requests. */
void ctl_metrics_reconcile(struct ctl_metrics *m, const char *controller, enum ctl_metrics_result r,
                           double seconds, unsigned long requests);

/* NULL is a no-op. */
void ctl_metrics_free(struct ctl_metrics *m);

#endif
