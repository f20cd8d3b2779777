/* metrics_render - render hooks and the text exposition of a registry; see metrics.h. */
#include "common/metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics_int.h"
#include "common/promtext.h"

static enum kerr add_hook(struct metrics_registry *r, metrics_hook_fn fn, void *ctx,
                          metrics_free_fn free_fn, struct kerr_info *err)
{
    enum kerr rc = KERR_OK;

    pthread_mutex_lock(&r->lock);
    if (r->nhooks == METRICS_MAX_HOOKS) {
        rc = kerr_set(err, KERR_TOOBIG, "metrics: more than %d render hooks", METRICS_MAX_HOOKS);
    } else {
        r->hooks[r->nhooks] = fn;
        r->hook_free[r->nhooks] = free_fn;
        r->hook_ctx[r->nhooks++] = ctx;
    }
    pthread_mutex_unlock(&r->lock);
    if (rc != KERR_OK && free_fn)
        free_fn(ctx);
    return rc;
}

enum kerr metrics_on_render(struct metrics_registry *r, metrics_hook_fn fn, void *ctx,
                            struct kerr_info *err)
{
    return add_hook(r, fn, ctx, NULL, err);
}

enum kerr metrics_on_render_owned(struct metrics_registry *r, metrics_hook_fn fn, void *ctx,
                                  metrics_free_fn free_fn, struct kerr_info *err)
{
    return add_hook(r, fn, ctx, free_fn, err);
}

/* name<suffix>{labels[,le="le"]} value\n */
static enum kerr append_sample(struct buf *b, const struct metrics_child *c, const char *suffix,
                               const char *le, double value)
{
    const struct metrics_vec *v = c->vec;

    return promtext_append_sample(b, v->name, suffix, (const char *const *)v->labels,
                                  (const char *const *)c->values, v->nlabels, le, value);
}

static enum kerr append_histogram(struct buf *b, const struct metrics_child *c)
{
    const struct metrics_vec *v = c->vec;
    char le[PROMTEXT_FLOAT_LEN];
    uint64_t cum = 0;
    enum kerr rc = KERR_OK;
    size_t i;

    /* _count is the +Inf bucket read here, so the two always agree. */
    for (i = 0; rc == KERR_OK && i <= v->nbounds; i++) {
        cum += atomic_load_explicit(&c->counts[i], memory_order_relaxed);
        if (i < v->nbounds)
            promtext_format_float(v->bounds[i], le);
        rc = append_sample(b, c, "_bucket", i < v->nbounds ? le : "+Inf", (double)cum);
    }
    if (rc == KERR_OK)
        rc = append_sample(b, c, "_sum", NULL, metrics_value(c));
    if (rc == KERR_OK)
        rc = append_sample(b, c, "_count", NULL, (double)cum);
    return rc;
}

static int cmp_children(const void *a, const void *b)
{
    const struct metrics_child *x = *(const struct metrics_child *const *)a;
    const struct metrics_child *y = *(const struct metrics_child *const *)b;
    size_t i;
    int d;

    for (i = 0; i < x->vec->nlabels; i++) {
        if ((d = strcmp(x->values[i], y->values[i])) != 0)
            return d;
    }
    return 0;
}

static int cmp_vecs(const void *a, const void *b)
{
    return strcmp((*(const struct metrics_vec *const *)a)->name,
                  (*(const struct metrics_vec *const *)b)->name);
}

static const char *type_name(enum metrics_type t)
{
    return t == METRICS_COUNTER ? "counter" : t == METRICS_GAUGE ? "gauge" : "histogram";
}

/* One metric: HELP, TYPE, then its children sorted by label values. reg->lock held. */
static enum kerr render_vec(const struct metrics_vec *v, struct buf *b)
{
    struct metrics_child **kids, *c;
    size_t n = 0, i;
    enum kerr rc;

    if (v->nchildren == 0)
        return KERR_OK;
    kids = malloc(v->nchildren * sizeof(*kids));
    if (!kids)
        return KERR_NOMEM;
    for (c = atomic_load_explicit(&v->children, memory_order_acquire); c && n < v->nchildren;
         c = c->next)
        kids[n++] = c;
    qsort(kids, n, sizeof(*kids), cmp_children);
    rc = buf_appendf(b, "# HELP %s ", v->name);
    if (rc == KERR_OK)
        rc = promtext_append_escaped(b, v->help, false);
    if (rc == KERR_OK)
        rc = buf_appendf(b, "\n# TYPE %s %s\n", v->name, type_name(v->type));
    for (i = 0; rc == KERR_OK && i < n; i++) {
        if (v->type == METRICS_HISTOGRAM)
            rc = append_histogram(b, kids[i]);
        else
            rc = append_sample(b, kids[i], "", NULL, metrics_value(kids[i]));
    }
    free(kids);
    return rc;
}

static void run_hooks(struct metrics_registry *r)
{
    metrics_hook_fn fns[METRICS_MAX_HOOKS];
    void *ctx[METRICS_MAX_HOOKS];
    size_t n, i;

    pthread_mutex_lock(&r->lock);
    n = r->nhooks;
    memcpy(fns, r->hooks, n * sizeof(fns[0]));
    memcpy(ctx, r->hook_ctx, n * sizeof(ctx[0]));
    pthread_mutex_unlock(&r->lock);
    for (i = 0; i < n; i++)
        fns[i](ctx[i]);
}

enum kerr metrics_render(struct metrics_registry *r, struct buf *out, struct kerr_info *err)
{
    struct metrics_vec **vecs = NULL, *v;
    size_t n = 0, i;
    enum kerr rc = KERR_OK;

    run_hooks(r);
    pthread_mutex_lock(&r->lock);
    if (r->nvecs && !(vecs = malloc(r->nvecs * sizeof(*vecs))))
        rc = KERR_NOMEM;
    for (v = r->vecs; rc == KERR_OK && v; v = v->next)
        vecs[n++] = v;
    if (n)
        qsort(vecs, n, sizeof(*vecs), cmp_vecs);
    for (i = 0; rc == KERR_OK && i < n; i++)
        rc = render_vec(vecs[i], out);
    pthread_mutex_unlock(&r->lock);
    free(vecs);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "metrics: rendering: %s", kerr_str(rc));
    return KERR_OK;
}
