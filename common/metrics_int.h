/*
 * metrics_int - what common/metrics.c (registration, label sets, updates)
 * and metrics_render.c (render hooks and the text exposition) share: the
 * registry, a metric (vec) and one label set (child).
 *
 * Thread safety: as metrics.h; the fields say which lock guards them.
 */
#ifndef COMMON_METRICS_INT_H
#define COMMON_METRICS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hindex.h"
#include "common/metrics.h"

struct metrics_child {
    struct metrics_child *next;    /* older children; immutable once published */
    const struct metrics_vec *vec; /* the metric it belongs to */
    char **values;                 /* one per label name */
    struct hindex_entry ix;        /* in vec->index; hash of values, immutable */
    _Atomic uint64_t ival;         /* counter: integral increments */
    _Atomic uint64_t dbits;        /* double bits: counter remainder, gauge value, histogram sum */
    _Atomic uint64_t *counts;      /* histogram: per bucket, nbounds + 1 (+Inf), not cumulative */
};

struct metrics_vec {
    struct metrics_vec *next;
    struct metrics_registry *reg;
    enum metrics_type type;
    char *name;
    char *help;
    char *labels[METRICS_MAX_LABELS];
    size_t nlabels;
    double bounds[METRICS_MAX_BUCKETS];
    size_t nbounds;
    struct metrics_child *_Atomic children; /* newest first; published with release */
    size_t nchildren;                       /* written under reg->lock */
    struct hindex index; /* the children by label values; written under reg->lock */
    bool full_logged;    /* METRICS_MAX_CHILDREN logged; under reg->lock */
};

struct metrics_registry {
    pthread_mutex_t lock; /* registration, child creation, hooks, rendering */
    struct metrics_vec *vecs;
    size_t nvecs;
    metrics_hook_fn hooks[METRICS_MAX_HOOKS];
    void *hook_ctx[METRICS_MAX_HOOKS];
    metrics_free_fn hook_free[METRICS_MAX_HOOKS]; /* NULL: ctx BORROWED */
    size_t nhooks;
};

#endif
