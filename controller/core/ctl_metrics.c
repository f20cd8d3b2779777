/* ctl_metrics - the controller's metrics; see ctl_metrics.h. */
#include "controller/core/ctl_metrics.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/procmetrics.h"

static const char *const phases[] = { "none",        "CuttingTraffic", "FinalSnapshot",
                                      "ScalingDown", "Hibernated",     "WakingUp",
                                      "Failed" };

static const char *const result_names[] = { "success", "error", "requeue", "requeue_after" };

struct ctl_metrics {
    struct ctl_metrics_source src;
    struct metrics_registry *reg; /* OWNS */
    struct metrics_vec *total, *errors, *seconds, *depth, *adds, *retries, *leader, *phase,
        *objects, *conflicts, *requests;
    struct metrics_vec *gauges[CTL_METRICS_GAUGES_MAX]; /* of src.gauges, in order */
    size_t ngauges;
    pthread_mutex_t gauge_lock; /* one scrape at a time rebuilds the per-object gauges */
};

/* The series one collect emitted: their label values joined by '\x1f', sorted. */
struct seen {
    struct metrics_vec *vec;
    char **keys;
    size_t n, cap;
    int failed;
};

struct ctl_metrics_def {
    enum metrics_type type;
    const char *name;
    const char *help;
    const char *const *labels;
    size_t off; /* where the vec goes */
};

/* API requests per reconcile: the budget of a hibernation reconcile is 8 (controller/hib.h). */
static const double request_buckets[] = { 0, 1, 2, 4, 8, 16, 32, 64 };

static const char *const by_controller_result[] = { "controller", "result", NULL };
static const char *const by_controller[] = { "controller", NULL };
static const char *const by_name[] = { "name", NULL };
static const char *const by_phase[] = { "phase", NULL };

static const struct ctl_metrics_def defs[] = {
    { METRICS_COUNTER, "controller_runtime_reconcile_total",
      "Total number of reconciliations per controller", by_controller_result,
      offsetof(struct ctl_metrics, total) },
    { METRICS_COUNTER, "controller_runtime_reconcile_errors_total",
      "Total number of reconciliation errors per controller", by_controller,
      offsetof(struct ctl_metrics, errors) },
    { METRICS_HISTOGRAM, "controller_runtime_reconcile_time_seconds",
      "Length of time per reconciliation per controller", by_controller,
      offsetof(struct ctl_metrics, seconds) },
    { METRICS_GAUGE, "workqueue_depth", "Current depth of workqueue", by_name,
      offsetof(struct ctl_metrics, depth) },
    { METRICS_COUNTER, "workqueue_adds_total", "Total number of adds handled by workqueue", by_name,
      offsetof(struct ctl_metrics, adds) },
    { METRICS_COUNTER, "workqueue_retries_total", "Total number of retries handled by workqueue",
      by_name, offsetof(struct ctl_metrics, retries) },
    { METRICS_GAUGE, "leader_election_master_status",
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 "
      "indicates master. 'name' is the string used to identify the lease.",
      by_name, offsetof(struct ctl_metrics, leader) },
    { METRICS_GAUGE, "warden_hibernation_phase_etcds",
      "Cached Etcds per hibernation phase (annotation etcd-warden.io/hibernation-phase; none: "
      "not hibernating)",
      by_phase, offsetof(struct ctl_metrics, phase) },
    { METRICS_GAUGE, "warden_controller_cache_objects", "Objects held by the controller's caches",
      NULL, offsetof(struct ctl_metrics, objects) },
    { METRICS_GAUGE, "warden_backup_entry_prefix_conflicts",
      "BackupEntries with the condition PrefixConflict: a prefix another owner's overlaps as "
      "the backup sidecar lists it, or a deletion that overlap blocks",
      NULL, offsetof(struct ctl_metrics, conflicts) },
};

/* values joined by '\x1f' into a new string (NULL when out of memory). */
static char *join(const char *const *values)
{
    size_t len = 1, i, at = 0, n;
    char *s;

    for (i = 0; values[i]; i++)
        len += strlen(values[i]) + 1;
    if (!(s = malloc(len)))
        return NULL;
    for (i = 0; values[i]; i++) {
        if (i)
            s[at++] = '\x1f';
        n = strlen(values[i]);
        memcpy(s + at, values[i], n);
        at += n;
    }
    s[at] = '\0';
    return s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A series that exists now: set it and remember it. */
static void emit(void *ctx, const char *const *values, double value)
{
    struct seen *s = ctx;
    char **grown, *k;

    if (s->n == s->cap) {
        grown = realloc(s->keys, (s->cap ? s->cap * 2 : 64) * sizeof(*grown));
        if (!grown) {
            s->failed = 1;
            return;
        }
        s->keys = grown;
        s->cap = s->cap ? s->cap * 2 : 64;
    }
    if (!(k = join(values)) || metrics_vec_set(s->vec, values, value) != KERR_OK) {
        free(k);
        s->failed = 1;
        return;
    }
    s->keys[s->n++] = k;
}

/* Keep the series emitted in this scrape (all of them when a step failed). */
static int keep(void *ctx, const char *const *values)
{
    struct seen *s = ctx;
    char *k = join(values);
    int found = !k || s->failed || (s->n && bsearch(&k, s->keys, s->n, sizeof(*s->keys), cmp_str));

    free(k);
    return found;
}

/* Rebuild every per-object gauge from what its collect emits now. */
static void render_gauges(struct ctl_metrics *m)
{
    struct seen s;
    size_t i, j;

    pthread_mutex_lock(&m->gauge_lock);
    for (i = 0; i < m->ngauges; i++) {
        memset(&s, 0, sizeof(s));
        s.vec = m->gauges[i];
        m->src.gauges[i]->collect(m->src.ctx, emit, &s);
        if (s.n)
            qsort(s.keys, s.n, sizeof(*s.keys), cmp_str);
        metrics_vec_sweep(s.vec, keep, &s);
        for (j = 0; j < s.n; j++)
            free(s.keys[j]);
        free(s.keys);
    }
    pthread_mutex_unlock(&m->gauge_lock);
}

/* Render hook: the values read from the queue, the elector and the caches. */
static void render(void *ctx)
{
    struct ctl_metrics *m = ctx;
    const struct ctl_metrics_source *s = &m->src;
    const char *v[2] = { s->queue_name, NULL };
    struct wq_stats st;
    size_t i;

    if (s->queue) {
        wq_get_stats(s->queue, &st);
        metrics_vec_set(m->depth, v, (double)st.depth);
        metrics_vec_set(m->adds, v, (double)st.adds);
        metrics_vec_set(m->retries, v, (double)st.retries);
    }
    if (s->leading) {
        v[0] = s->lease_name;
        metrics_vec_set(m->leader, v, s->leading(s->ctx) ? 1.0 : 0.0);
    }
    for (i = 0; s->phase_count && i < sizeof(phases) / sizeof(phases[0]); i++) {
        v[0] = phases[i];
        metrics_vec_set(m->phase, v, (double)s->phase_count(s->ctx, phases[i]));
    }
    if (s->objects)
        metrics_vec_set(m->objects, NULL, (double)s->objects(s->ctx));
    if (s->conflicts)
        metrics_vec_set(m->conflicts, NULL, (double)s->conflicts(s->ctx));
    render_gauges(m);
}

/* Every running controller's series from the start, at 0, as controller-runtime does. */
static enum kerr zero_children(struct ctl_metrics *m, struct kerr_info *err)
{
    static const char *const always[] = { "etcd", "opstask", "immtask", NULL };
    const char *const *controllers = m->src.controllers ? m->src.controllers : always;
    struct metrics_child *ch;
    const char *v[3] = { NULL, NULL, NULL };
    enum kerr rc = KERR_OK;
    size_t i, j;

    for (i = 0; !rc && controllers[i]; i++) {
        v[0] = controllers[i];
        for (j = 0; !rc && j < sizeof(result_names) / sizeof(result_names[0]); j++) {
            v[1] = result_names[j];
            rc = metrics_with(m->total, v, &ch, err);
        }
        v[1] = NULL;
        if (!rc)
            rc = metrics_with(m->errors, v, &ch, err);
        if (!rc)
            rc = metrics_with(m->seconds, v, &ch, err);
        if (!rc)
            rc = metrics_with(m->requests, v, &ch, err);
    }
    return rc;
}

enum kerr ctl_metrics_new(const struct ctl_metrics_source *src, struct ctl_metrics **out,
                          struct kerr_info *err)
{
    struct ctl_metrics *m;
    enum kerr rc;
    size_t i;

    *out = NULL;
    m = calloc(1, sizeof(*m));
    if (!m)
        return kerr_set(err, KERR_NOMEM, "allocating the metrics");
    m->src = *src;
    pthread_mutex_init(&m->gauge_lock, NULL);
    if (!m->src.queue_name)
        m->src.queue_name = "etcd";
    if (!m->src.lease_name)
        m->src.lease_name = "";
    rc = metrics_registry_new(&m->reg, err);
    if (!rc)
        rc = procmetrics_register(m->reg, err);
    for (i = 0; !rc && i < sizeof(defs) / sizeof(defs[0]); i++)
        rc = metrics_register(m->reg, defs[i].type, defs[i].name, defs[i].help, defs[i].labels,
                              metrics_reconcile_buckets, METRICS_RECONCILE_BUCKETS_LEN,
                              (struct metrics_vec **)((char *)m + defs[i].off), err);
    if (!rc)
        rc = metrics_register(m->reg, METRICS_HISTOGRAM, "warden_reconcile_api_requests",
                              "API requests made by one reconciliation per controller (a retry "
                              "after Retry-After is part of its request)",
                              by_controller, request_buckets,
                              sizeof(request_buckets) / sizeof(request_buckets[0]), &m->requests,
                              err);
    for (i = 0; !rc && m->src.gauges && m->src.gauges[i]; i++) {
        if (i == CTL_METRICS_GAUGES_MAX)
            rc =
                kerr_set(err, KERR_INVAL, "more than %d per-object gauges", CTL_METRICS_GAUGES_MAX);
        else
            rc = metrics_register(m->reg, METRICS_GAUGE, m->src.gauges[i]->name,
                                  m->src.gauges[i]->help, m->src.gauges[i]->labels, NULL, 0,
                                  &m->gauges[m->ngauges++], err);
    }
    if (!rc)
        rc = metrics_on_render(m->reg, render, m, err);
    if (!rc)
        rc = zero_children(m, err);
    if (rc) {
        ctl_metrics_free(m);
        return rc;
    }
    *out = m;
    return KERR_OK;
}

struct metrics_registry *ctl_metrics_registry(struct ctl_metrics *m)
{
    return m->reg;
}

void ctl_metrics_reconcile(struct ctl_metrics *m, const char *controller, enum ctl_metrics_result r,
                           double seconds, unsigned long requests)
{
    const char *v[3] = { controller, result_names[r], NULL };

    metrics_vec_add(m->total, v, 1.0);
    v[1] = NULL;
    if (r == CTL_R_ERROR)
        metrics_vec_add(m->errors, v, 1.0);
    metrics_vec_observe(m->seconds, v, seconds);
    metrics_vec_observe(m->requests, v, (double)requests);
}

void ctl_metrics_free(struct ctl_metrics *m)
{
    if (!m)
        return;
    metrics_registry_free(m->reg);
    pthread_mutex_destroy(&m->gauge_lock);
    free(m);
}
