#include "common/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hindex.h"
#include "common/log.h"
#include "common/metrics_int.h"
#include "common/promtext.h"

const double metrics_def_buckets[METRICS_DEF_BUCKETS_LEN] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                              0.5,   1,    2.5,   5,    10 };

const double metrics_reconcile_buckets[METRICS_RECONCILE_BUCKETS_LEN] = {
    0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
    0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
    6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60
};

static double from_bits(uint64_t b)
{
    double d;

    memcpy(&d, &b, sizeof(d));
    return d;
}

static uint64_t to_bits(double d)
{
    uint64_t b;

    memcpy(&b, &d, sizeof(b));
    return b;
}

static void atomic_add_double(_Atomic uint64_t *p, double delta)
{
    uint64_t old = atomic_load_explicit(p, memory_order_relaxed), nv;

    do
        nv = to_bits(from_bits(old) + delta);
    while (!atomic_compare_exchange_weak_explicit(p, &old, nv, memory_order_relaxed,
                                                  memory_order_relaxed));
}

enum kerr metrics_buckets_exponential(double start, double factor, size_t count, double *out)
{
    size_t i;

    if (!(start > 0) || !(factor > 1) || count == 0 || count > METRICS_MAX_BUCKETS)
        return KERR_INVAL;
    for (i = 0; i < count; i++, start *= factor)
        out[i] = start;
    return KERR_OK;
}

enum kerr metrics_buckets_linear(double start, double width, size_t count, double *out)
{
    size_t i;

    if (!isfinite(start) || !(width > 0) || count == 0 || count > METRICS_MAX_BUCKETS)
        return KERR_INVAL;
    for (i = 0; i < count; i++)
        out[i] = start + (double)i * width;
    return KERR_OK;
}

enum kerr metrics_registry_new(struct metrics_registry **out, struct kerr_info *err)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return kerr_set(err, KERR_NOMEM, "metrics: registry");
    if (pthread_mutex_init(&(*out)->lock, NULL) != 0) {
        free(*out);
        *out = NULL;
        return kerr_set(err, KERR_INTERNAL, "metrics: mutex");
    }
    return KERR_OK;
}

static void child_free(struct metrics_child *c, size_t nlabels)
{
    size_t i;

    for (i = 0; c->values && i < nlabels; i++)
        free(c->values[i]);
    free(c->values);
    free(c->counts);
    free(c);
}

void metrics_vec_sweep(struct metrics_vec *v, metrics_keep_fn keep, void *ctx)
{
    struct metrics_child *c, *next, *kept = NULL, *tail = NULL, *gone = NULL;

    pthread_mutex_lock(&v->reg->lock);
    for (c = atomic_load_explicit(&v->children, memory_order_acquire); c; c = next) {
        next = c->next;
        if (keep(ctx, (const char *const *)c->values)) {
            c->next = NULL;
            if (tail)
                tail->next = c;
            else
                kept = c;
            tail = c;
        } else {
            hindex_remove(&v->index, &c->ix); /* no reader meanwhile: the contract above */
            c->next = gone;
            gone = c;
            v->nchildren--;
        }
    }
    atomic_store_explicit(&v->children, kept, memory_order_release);
    pthread_mutex_unlock(&v->reg->lock);
    for (c = gone; c; c = next) {
        next = c->next;
        child_free(c, v->nlabels);
    }
}

static void vec_free(struct metrics_vec *v)
{
    struct metrics_child *c, *next;
    size_t i;

    for (c = atomic_load(&v->children); c; c = next) {
        next = c->next;
        child_free(c, v->nlabels);
    }
    hindex_free(&v->index);
    for (i = 0; i < v->nlabels; i++)
        free(v->labels[i]);
    free(v->name);
    free(v->help);
    free(v);
}

void metrics_registry_free(struct metrics_registry *r)
{
    struct metrics_vec *v, *next;
    size_t i;

    if (!r)
        return;
    for (i = 0; i < r->nhooks; i++) {
        if (r->hook_free[i])
            r->hook_free[i](r->hook_ctx[i]);
    }
    for (v = r->vecs; v; v = next) {
        next = v->next;
        vec_free(v);
    }
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static enum kerr check_labels(enum metrics_type type, const char *const *labels, size_t *n,
                              struct kerr_info *err)
{
    size_t i, j;

    for (*n = 0; labels && labels[*n]; (*n)++) {
        if (*n == METRICS_MAX_LABELS)
            return kerr_set(err, KERR_INVAL, "metrics: more than %d labels", METRICS_MAX_LABELS);
    }
    for (i = 0; i < *n; i++) {
        if (!promtext_valid_label_name(labels[i]) || strncmp(labels[i], "__", 2) == 0 ||
            (type == METRICS_HISTOGRAM && strcmp(labels[i], "le") == 0))
            return kerr_set(err, KERR_INVAL, "metrics: invalid label name \"%s\"", labels[i]);
        for (j = 0; j < i; j++) {
            if (strcmp(labels[i], labels[j]) == 0)
                return kerr_set(err, KERR_INVAL, "metrics: duplicate label \"%s\"", labels[i]);
        }
    }
    return KERR_OK;
}

static enum kerr set_bounds(struct metrics_vec *v, const double *b, size_t n, struct kerr_info *err)
{
    size_t i;

    if (!b || n == 0) {
        b = metrics_def_buckets;
        n = METRICS_DEF_BUCKETS_LEN;
    }
    if (isinf(b[n - 1]) && b[n - 1] > 0)
        n--; /* +Inf is always implied */
    if (n > METRICS_MAX_BUCKETS)
        return kerr_set(err, KERR_INVAL, "metrics: more than %d buckets", METRICS_MAX_BUCKETS);
    for (i = 0; i < n; i++) {
        if (!isfinite(b[i]) || (i > 0 && !(b[i] > b[i - 1])))
            return kerr_set(err, KERR_INVAL, "metrics: buckets of %s not strictly increasing",
                            v->name);
        v->bounds[i] = b[i];
    }
    v->nbounds = n;
    return KERR_OK;
}

/* A new metric with copies of its texts, not yet in a registry. */
static enum kerr vec_new(enum metrics_type type, const char *name, const char *help,
                         const char *const *labels, size_t nlabels, struct metrics_vec **out,
                         struct kerr_info *err)
{
    struct metrics_vec *v = calloc(1, sizeof(*v));
    size_t i;

    *out = NULL;
    if (!v)
        return kerr_set(err, KERR_NOMEM, "metrics: %s", name);
    v->type = type;
    v->name = strdup(name);
    v->help = strdup(help ? help : "");
    atomic_init(&v->children, NULL);
    hindex_init(&v->index);
    for (i = 0; i < nlabels; i++) {
        if (!(v->labels[i] = strdup(labels[i])))
            break;
        v->nlabels++;
    }
    if (!v->name || !v->help || v->nlabels != nlabels) {
        vec_free(v);
        return kerr_set(err, KERR_NOMEM, "metrics: %s", name);
    }
    *out = v;
    return KERR_OK;
}

/* Create and publish the child for values; reg->lock held. */
static enum kerr child_new_locked(struct metrics_vec *v, const char *const *values,
                                  struct metrics_child **out, struct kerr_info *err)
{
    struct metrics_child *c;
    char limit[24];
    size_t i;

    *out = NULL;
    if (v->nchildren >= METRICS_MAX_CHILDREN) {
        if (!v->full_logged) {
            v->full_logged = true;
            snprintf(limit, sizeof(limit), "%d", METRICS_MAX_CHILDREN);
            log_warn("metric has reached its limit of label sets; new series are not recorded",
                     "metric", v->name, "limit", limit);
        }
        return kerr_set(err, KERR_TOOBIG, "metrics: %s has %d label sets already", v->name,
                        METRICS_MAX_CHILDREN);
    }
    if (hindex_reserve(&v->index) != KERR_OK)
        return kerr_set(err, KERR_NOMEM, "metrics: %s", v->name);
    c = calloc(1, sizeof(*c));
    if (!c)
        return kerr_set(err, KERR_NOMEM, "metrics: %s", v->name);
    c->vec = v;
    c->values = calloc(v->nlabels + 1, sizeof(char *));
    if (v->type == METRICS_HISTOGRAM)
        c->counts = calloc(v->nbounds + 1, sizeof(*c->counts));
    for (i = 0; c->values && i < v->nlabels; i++) {
        if (!(c->values[i] = strdup(values[i])))
            break;
    }
    if (!c->values || i < v->nlabels || (v->type == METRICS_HISTOGRAM && !c->counts)) {
        child_free(c, v->nlabels);
        return kerr_set(err, KERR_NOMEM, "metrics: %s", v->name);
    }
    atomic_init(&c->ival, 0);
    atomic_init(&c->dbits, to_bits(0.0));
    c->ix.hash = hindex_hash(values, v->nlabels);
    c->next = atomic_load_explicit(&v->children, memory_order_relaxed);
    atomic_store_explicit(&v->children, c, memory_order_release);
    hindex_put(&v->index, &c->ix);
    v->nchildren++;
    *out = c;
    return KERR_OK;
}

enum kerr metrics_register(struct metrics_registry *r, enum metrics_type type, const char *name,
                           const char *help, const char *const *labels, const double *buckets,
                           size_t nbuckets, struct metrics_vec **out, struct kerr_info *err)
{
    struct metrics_vec *v = NULL, *it;
    struct metrics_child *c;
    size_t nlabels;
    enum kerr rc;

    *out = NULL;
    if (!promtext_valid_name(name))
        return kerr_set(err, KERR_INVAL, "metrics: invalid metric name \"%s\"", name ? name : "");
    if (type != METRICS_COUNTER && type != METRICS_GAUGE && type != METRICS_HISTOGRAM)
        return kerr_set(err, KERR_INVAL, "metrics: unknown type %d", (int)type);
    if ((rc = check_labels(type, labels, &nlabels, err)) != KERR_OK ||
        (rc = vec_new(type, name, help, labels, nlabels, &v, err)) != KERR_OK)
        return rc;
    if (type == METRICS_HISTOGRAM && (rc = set_bounds(v, buckets, nbuckets, err)) != KERR_OK) {
        vec_free(v);
        return rc;
    }
    pthread_mutex_lock(&r->lock);
    for (it = r->vecs; it && strcmp(it->name, name) != 0; it = it->next)
        ;
    if (it)
        rc = kerr_set(err, KERR_EXISTS, "metrics: %s is already registered", name);
    else if (nlabels == 0)
        rc = child_new_locked(v, NULL, &c, err);
    if (rc == KERR_OK) {
        v->reg = r;
        v->next = r->vecs;
        r->vecs = v;
        r->nvecs++;
        *out = v;
    }
    pthread_mutex_unlock(&r->lock);
    if (rc != KERR_OK)
        vec_free(v);
    return rc;
}

struct lookup {
    const char *const *values;
    size_t n;
};

static int child_is(const struct hindex_entry *e, const void *key)
{
    const struct metrics_child *c =
        (const void *)((const char *)e - offsetof(struct metrics_child, ix));
    const struct lookup *k = key;
    size_t i;

    for (i = 0; i < k->n && strcmp(c->values[i], k->values[i]) == 0; i++)
        ;
    return i == k->n;
}

/* The child for values, or NULL; lock-free (common/hindex.h). */
static struct metrics_child *find_child(struct metrics_vec *v, const char *const *values)
{
    struct lookup k = { values, v->nlabels };
    struct hindex_entry *e = hindex_find(&v->index, hindex_hash(values, v->nlabels), child_is, &k);

    return e ? (struct metrics_child *)((char *)e - offsetof(struct metrics_child, ix)) : NULL;
}

enum kerr metrics_with(struct metrics_vec *v, const char *const *values, struct metrics_child **out,
                       struct kerr_info *err)
{
    size_t n = 0;
    enum kerr rc = KERR_OK;

    *out = NULL;
    if (!v)
        return kerr_set(err, KERR_INVAL, "metrics: no metric");
    while (values && values[n])
        n++;
    if (n != v->nlabels)
        return kerr_set(err, KERR_INVAL, "metrics: %s takes %zu label values, not %zu", v->name,
                        v->nlabels, n);
    *out = find_child(v, values);
    if (*out)
        return KERR_OK;
    pthread_mutex_lock(&v->reg->lock);
    *out = find_child(v, values);
    if (!*out)
        rc = child_new_locked(v, values, out, err);
    pthread_mutex_unlock(&v->reg->lock);
    return rc;
}

void metrics_inc(struct metrics_child *c)
{
    metrics_add(c, 1.0);
}

void metrics_add(struct metrics_child *c, double delta)
{
    if (!c)
        return;
    if (c->vec->type == METRICS_GAUGE) {
        atomic_add_double(&c->dbits, delta);
    } else if (c->vec->type == METRICS_COUNTER && delta >= 0) {
        if (delta == floor(delta) && delta < 9007199254740992.0)
            atomic_fetch_add_explicit(&c->ival, (uint64_t)delta, memory_order_relaxed);
        else
            atomic_add_double(&c->dbits, delta);
    }
}

void metrics_set(struct metrics_child *c, double value)
{
    if (!c || c->vec->type == METRICS_HISTOGRAM)
        return;
    atomic_store_explicit(&c->dbits, to_bits(value), memory_order_relaxed);
    if (c->vec->type == METRICS_COUNTER)
        atomic_store_explicit(&c->ival, 0, memory_order_relaxed);
}

void metrics_observe(struct metrics_child *c, double value)
{
    size_t lo = 0, hi, mid;

    if (!c || c->vec->type != METRICS_HISTOGRAM)
        return;
    /* The first bucket whose upper bound is >= value; NaN lands in +Inf. */
    hi = c->vec->nbounds;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        if (c->vec->bounds[mid] >= value)
            hi = mid;
        else
            lo = mid + 1;
    }
    atomic_fetch_add_explicit(&c->counts[lo], 1, memory_order_relaxed);
    atomic_add_double(&c->dbits, value);
}

double metrics_value(const struct metrics_child *c)
{
    double d;

    if (!c)
        return 0;
    d = from_bits(atomic_load_explicit(&c->dbits, memory_order_relaxed));
    if (c->vec->type == METRICS_COUNTER)
        d += (double)atomic_load_explicit(&c->ival, memory_order_relaxed);
    return d;
}

uint64_t metrics_count(const struct metrics_child *c)
{
    uint64_t n = 0;
    size_t i;

    if (!c || c->vec->type != METRICS_HISTOGRAM)
        return 0;
    for (i = 0; i <= c->vec->nbounds; i++)
        n += atomic_load_explicit(&c->counts[i], memory_order_relaxed);
    return n;
}

/* op(child of values, x): the metrics_vec_* shorthands. */
static enum kerr vec_apply(struct metrics_vec *v, const char *const *values,
                           void (*op)(struct metrics_child *c, double x), double x)
{
    struct metrics_child *c;
    enum kerr rc = metrics_with(v, values, &c, NULL);

    if (rc == KERR_OK)
        op(c, x);
    return rc;
}

enum kerr metrics_vec_add(struct metrics_vec *v, const char *const *values, double delta)
{
    return vec_apply(v, values, metrics_add, delta);
}

enum kerr metrics_vec_set(struct metrics_vec *v, const char *const *values, double value)
{
    return vec_apply(v, values, metrics_set, value);
}

enum kerr metrics_vec_observe(struct metrics_vec *v, const char *const *values, double value)
{
    return vec_apply(v, values, metrics_observe, value);
}
