/*
 * metrics - Prometheus metrics: a registry of counters, gauges and
 * histograms, rendered in the text exposition format 0.0.4.
 *
 * A metric (struct metrics_vec) has a name, a help text and label names
 * fixed at registration; each set of label values is a child (struct
 * metrics_child) created on first use. A metric without labels has one
 * child, created at registration. Names are validated at registration:
 * metric names [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*
 * and not starting with "__"; histograms may not use the label "le".
 *
 * Rendering: metrics sorted by name, children by label values; # HELP
 * (escaping \\ and \n) and # TYPE before the samples of each metric;
 * label values escaped (\\, \", \n); values in Go's float syntax
 * (shortest round-trip, "+Inf", "-Inf", "NaN"); histograms as cumulative
 * _bucket samples with le="+Inf" equal to _count, then _sum and _count.
 * Metrics that have no child yet are not rendered (as client_golang).
 * Name syntax, float syntax and escaping are common/promtext.h.
 *
 * Thread safety: everything may be called from any thread, except
 * metrics_vec_sweep (below). Updating a child is lock-free (C11 atomics).
 * Looking a child up (metrics_with) is lock-free and O(1): the children of
 * a metric are indexed by a hash of their label values (common/hindex.h,
 * whose tables readers probe without a lock); a lookup that misses takes
 * the registry's mutex and looks again, so a child is created once however
 * many threads ask for it at the same time. The mutex is also taken to
 * register a metric, add a render hook, sweep and render.
 * Keep the struct metrics_child pointer on hot paths. Pointers to metrics
 * and children are BORROWED from the registry and valid until
 * metrics_registry_free (or, for a child, until a sweep removes it).
 *
 * Cardinality: a metric holds at most METRICS_MAX_CHILDREN label-value
 * sets. The per-object gauges have one per Etcd or BackupEntry, so the
 * bound is ten times the largest seed measured (10,000 Etcds, bench/), yet
 * a flood of label values stops at about 200 bytes a set, some 20 MiB per
 * metric. The first set refused is logged once per metric (warn); later
 * ones only return KERR_TOOBIG.
 */
#ifndef COMMON_METRICS_H
#define COMMON_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/kerr.h"

/* Content-Type of the rendered text. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#define METRICS_MAX_LABELS   8      /* label names per metric */
#define METRICS_MAX_BUCKETS  64     /* finite histogram buckets */
#define METRICS_MAX_CHILDREN 100000 /* label-value sets per metric; more is KERR_TOOBIG */
#define METRICS_MAX_HOOKS    16     /* render hooks per registry */

enum metrics_type { METRICS_COUNTER, METRICS_GAUGE, METRICS_HISTOGRAM };

struct metrics_registry;
struct metrics_vec;
struct metrics_child;

/* client_golang's DefBuckets (.005 ... 10), used by controller_runtime_webhook_latency_seconds. */
#define METRICS_DEF_BUCKETS_LEN 11
extern const double metrics_def_buckets[METRICS_DEF_BUCKETS_LEN];

/* controller-runtime's controller_runtime_reconcile_time_seconds buckets (0.005 ... 60). */
#define METRICS_RECONCILE_BUCKETS_LEN 40
extern const double metrics_reconcile_buckets[METRICS_RECONCILE_BUCKETS_LEN];

/* count buckets start, start*factor, ... into out (start > 0, factor > 1). */
enum kerr metrics_buckets_exponential(double start, double factor, size_t count, double *out);

/* count buckets start, start+width, ... into out (width > 0). */
enum kerr metrics_buckets_linear(double start, double width, size_t count, double *out);

/* A new empty registry. On KERR_OK *out OWNS it: metrics_registry_free(). */
enum kerr metrics_registry_new(struct metrics_registry **out, struct kerr_info *err);

/* Free the registry with all its metrics and children. NULL is a no-op. */
void metrics_registry_free(struct metrics_registry *r);

/*
 * Register a metric. name, help and labels (a NULL-terminated list, NULL =
 * none) are copied. For histograms, buckets are the nbuckets finite upper
 * bounds in strictly increasing order (a trailing +Inf is dropped);
 * ignored for counters and gauges. On KERR_OK *out (BORROWED) is the
 * metric. Errors: KERR_INVAL (bad name, label or buckets), KERR_EXISTS
 * (name already registered), KERR_NOMEM.
 */
enum kerr metrics_register(struct metrics_registry *r, enum metrics_type type, const char *name,
                           const char *help, const char *const *labels, const double *buckets,
                           size_t nbuckets, struct metrics_vec **out, struct kerr_info *err);

/*
 * The child for the label values (NULL-terminated, as many as label
 * names; NULL for a metric without labels), created on first use. Values
 * are copied. On KERR_OK *out (BORROWED) is the child. Errors: KERR_INVAL
 * (wrong number of values), KERR_TOOBIG (METRICS_MAX_CHILDREN reached),
 * KERR_NOMEM.
 */
enum kerr metrics_with(struct metrics_vec *v, const char *const *values, struct metrics_child **out,
                       struct kerr_info *err);

/* Counter: +1. Gauge: +1. */
void metrics_inc(struct metrics_child *c);

/* Counter: +delta (negative deltas are ignored). Gauge: +delta (may be negative). */
void metrics_add(struct metrics_child *c, double delta);

/*
 * Gauge: set the value. Counter: set the value, for counters that mirror a
 * monotonic source read at render time (process_cpu_seconds_total).
 */
void metrics_set(struct metrics_child *c, double value);

/* Histogram: record one observation. */
void metrics_observe(struct metrics_child *c, double value);

/* The value of a counter or gauge, or the sum of a histogram. */
double metrics_value(const struct metrics_child *c);

/* The number of observations of a histogram (0 for other types). */
uint64_t metrics_count(const struct metrics_child *c);

/* Shorthands: metrics_with(v, values) then the update; errors as metrics_with. */
enum kerr metrics_vec_add(struct metrics_vec *v, const char *const *values, double delta);
enum kerr metrics_vec_set(struct metrics_vec *v, const char *const *values, double value);
enum kerr metrics_vec_observe(struct metrics_vec *v, const char *const *values, double value);

/*
 * Remove the children of v for which keep(ctx, values) returns 0 (values: the
 * child's label values, NULL-terminated, BORROWED for the call): their series
 * are no longer rendered, as client_golang's DeleteLabelValues. For the
 * per-object gauges a render hook rebuilds on each scrape (set what is, then
 * sweep what is gone). The caller guarantees that no other thread holds or
 * looks up a child of v meanwhile (the hook that owns v serializes itself);
 * pointers to removed children are invalid afterwards. Runs under the
 * registry's lock, so a concurrent metrics_render sees v before or after.
 */
typedef int (*metrics_keep_fn)(void *ctx, const char *const *values);
void metrics_vec_sweep(struct metrics_vec *v, metrics_keep_fn keep, void *ctx);

/*
 * Call fn(ctx) at the start of every metrics_render, before the text is
 * produced, to refresh values computed on demand. fn runs on the
 * rendering thread without registry locks held, so it may call any
 * metrics_ function. ctx is BORROWED and must outlive the registry.
 * KERR_TOOBIG past METRICS_MAX_HOOKS hooks.
 */
typedef void (*metrics_hook_fn)(void *ctx);
enum kerr metrics_on_render(struct metrics_registry *r, metrics_hook_fn fn, void *ctx,
                            struct kerr_info *err);

/*
 * As metrics_on_render, but TAKES ctx: metrics_registry_free calls
 * free_fn(ctx), and so does a failed registration (free_fn may be NULL).
 * Process metrics (common/procmetrics.h) are registered this way.
 */
typedef void (*metrics_free_fn)(void *ctx);
enum kerr metrics_on_render_owned(struct metrics_registry *r, metrics_hook_fn fn, void *ctx,
                                  metrics_free_fn free_fn, struct kerr_info *err);

/* Append the exposition text of every metric to out (capped by the buffer). */
enum kerr metrics_render(struct metrics_registry *r, struct buf *out, struct kerr_info *err);

#endif
