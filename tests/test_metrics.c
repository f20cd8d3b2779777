#include "common/metrics.h"

#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/metricsfix.h"

static struct metrics_registry *reg;

static void setup(void)
{
    reg = metricsfix_registry();
}

static void teardown(void)
{
    metrics_registry_free(reg);
}

TestSuite(metrics, .init = setup, .fini = teardown);

Test(metrics, exposition_golden_text)
{
    static const char *const req_labels[] = { "code", "path", NULL };
    static const char *const wh_labels[] = { "webhook", NULL };
    static const double buckets[] = { 0.125, 0.5, 1, INFINITY };
    struct metrics_vec *req, *temp, *lat, *unused;
    struct metrics_child *c;
    struct kerr_info err;
    char *text;

    cr_assert_eq(metrics_register(reg, METRICS_COUNTER, "warden_requests_total",
                                  "Requests \\ handled.\nSecond line", req_labels, NULL, 0, &req,
                                  &err),
                 KERR_OK, "%s", err.msg);
    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "warden_temperature", "Temperature.", NULL,
                                  NULL, 0, &temp, &err),
                 KERR_OK);
    cr_assert_eq(metrics_register(reg, METRICS_HISTOGRAM, "warden_latency_seconds", "Latency.",
                                  wh_labels, buckets, 4, &lat, &err),
                 KERR_OK, "%s", err.msg);
    cr_assert_eq(metrics_register(reg, METRICS_COUNTER, "warden_unused_total", "Unused.", wh_labels,
                                  NULL, 0, &unused, &err),
                 KERR_OK);
    cr_assert_eq(metrics_with(req, (const char *[]){ "500", "/x", NULL }, &c, &err), KERR_OK);
    metrics_add(c, 1.5);
    cr_assert_eq(metrics_with(req, (const char *[]){ "200", "/a\"b\\c\nd", NULL }, &c, &err),
                 KERR_OK);
    metrics_inc(c);
    metrics_add(c, 2);
    metrics_add(c, -5); /* ignored: counters only go up */
    cr_assert_eq(metrics_vec_set(temp, NULL, -2.5), KERR_OK);
    cr_assert_eq(metrics_with(lat, (const char *[]){ "etcd", NULL }, &c, &err), KERR_OK);
    metrics_observe(c, 0.0625);
    metrics_observe(c, 0.125);
    metrics_observe(c, 0.75);
    metrics_observe(c, 3);
    text = metricsfix_render(reg);
    cr_assert_str_eq(text, "# HELP warden_latency_seconds Latency.\n"
                           "# TYPE warden_latency_seconds histogram\n"
                           "warden_latency_seconds_bucket{webhook=\"etcd\",le=\"0.125\"} 2\n"
                           "warden_latency_seconds_bucket{webhook=\"etcd\",le=\"0.5\"} 2\n"
                           "warden_latency_seconds_bucket{webhook=\"etcd\",le=\"1\"} 3\n"
                           "warden_latency_seconds_bucket{webhook=\"etcd\",le=\"+Inf\"} 4\n"
                           "warden_latency_seconds_sum{webhook=\"etcd\"} 3.9375\n"
                           "warden_latency_seconds_count{webhook=\"etcd\"} 4\n"
                           "# HELP warden_requests_total Requests \\\\ handled.\\nSecond line\n"
                           "# TYPE warden_requests_total counter\n"
                           "warden_requests_total{code=\"200\",path=\"/a\\\"b\\\\c\\nd\"} 3\n"
                           "warden_requests_total{code=\"500\",path=\"/x\"} 1.5\n"
                           "# HELP warden_temperature Temperature.\n"
                           "# TYPE warden_temperature gauge\n"
                           "warden_temperature -2.5\n");
    free(text);
}

Test(metrics, unlabelled_metrics_render_zero_at_once)
{
    struct metrics_vec *v;
    char *text;

    cr_assert_eq(metrics_register(reg, METRICS_HISTOGRAM, "h", "", NULL, NULL, 0, &v, NULL),
                 KERR_OK);
    cr_assert_eq(metrics_register(reg, METRICS_COUNTER, "a_total", "", NULL, NULL, 0, &v, NULL),
                 KERR_OK);
    text = metricsfix_render(reg);
    cr_assert_not_null(strstr(text, "# HELP a_total \n# TYPE a_total counter\na_total 0\n"), "%s",
                       text);
    cr_assert_not_null(strstr(text, "h_bucket{le=\"0.005\"} 0\n"), "%s", text);
    cr_assert_not_null(strstr(text, "h_bucket{le=\"10\"} 0\nh_bucket{le=\"+Inf\"} 0\n"
                                    "h_sum 0\nh_count 0\n"),
                       "%s", text);
    cr_assert_lt(strstr(text, "a_total"), strstr(text, "# HELP h "));
    free(text);
}

static int keep_not_b(void *ctx, const char *const *values)
{
    (*(int *)ctx)++;
    return strcmp(values[0], "b") != 0 && values[1] == NULL;
}

static int keep_none(void *ctx, const char *const *values)
{
    (void)ctx;
    (void)values;
    return 0;
}

/* A swept series is no longer rendered; the others keep their values; a new one can come. */
Test(metrics, sweep_removes_the_children_not_kept)
{
    static const char *const labels[] = { "etcd", NULL };
    const char *a[] = { "a", NULL }, *b[] = { "b", NULL }, *c[] = { "c", NULL };
    struct metrics_vec *v;
    char *text;
    int calls = 0;

    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "g", "", labels, NULL, 0, &v, NULL), KERR_OK);
    cr_assert_eq(metrics_vec_set(v, a, 1), KERR_OK);
    cr_assert_eq(metrics_vec_set(v, b, 2), KERR_OK);
    cr_assert_eq(metrics_vec_set(v, c, 3), KERR_OK);
    metrics_vec_sweep(v, keep_not_b, &calls);
    cr_expect_eq(calls, 3);
    text = metricsfix_render(reg);
    cr_expect_not_null(strstr(text, "g{etcd=\"a\"} 1\ng{etcd=\"c\"} 3\n"), "%s", text);
    cr_expect_null(strstr(text, "etcd=\"b\""), "%s", text);
    free(text);
    cr_assert_eq(metrics_vec_set(v, b, 5), KERR_OK);
    text = metricsfix_render(reg);
    cr_expect_not_null(strstr(text, "g{etcd=\"b\"} 5\n"), "b is back, new: %s", text);
    free(text);
    metrics_vec_sweep(v, keep_none, NULL);
    text = metricsfix_render(reg);
    cr_expect_null(strstr(text, "# TYPE g "), "no child left, nothing rendered: %s", text);
    free(text);
    cr_assert_eq(metrics_vec_set(v, a, 7), KERR_OK);
    text = metricsfix_render(reg);
    cr_expect_not_null(strstr(text, "# TYPE g gauge\ng{etcd=\"a\"} 7\n"), "%s", text);
    free(text);
}

Test(metrics, names_and_labels_are_validated)
{
    static const double bad_buckets[] = { 1, 1 };
    struct metrics_vec *v;
    struct kerr_info err;

    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "bad-name", "", NULL, NULL, 0, &v, &err),
                 KERR_INVAL);
    cr_assert_null(v);
    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "g", "", (const char *[]){ "__x", NULL },
                                  NULL, 0, &v, &err),
                 KERR_INVAL);
    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "g", "", (const char *[]){ "a", "a", NULL },
                                  NULL, 0, &v, &err),
                 KERR_INVAL);
    cr_assert_eq(metrics_register(reg, METRICS_HISTOGRAM, "h", "", (const char *[]){ "le", NULL },
                                  NULL, 0, &v, &err),
                 KERR_INVAL);
    cr_assert_eq(metrics_register(reg, METRICS_HISTOGRAM, "h", "", NULL, bad_buckets, 2, &v, &err),
                 KERR_INVAL);
    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "g", "", (const char *[]){ "le", NULL }, NULL,
                                  0, &v, &err),
                 KERR_OK);
    cr_assert_eq(metrics_register(reg, METRICS_COUNTER, "g", "", NULL, NULL, 0, &v, &err),
                 KERR_EXISTS);
}

Test(metrics, label_value_count_and_cardinality_cap)
{
    struct metrics_vec *v;
    struct metrics_child *c, *again;
    char val[16];
    int i;

    cr_assert_eq(metrics_register(reg, METRICS_COUNTER, "c_total", "",
                                  (const char *[]){ "a", "b", NULL }, NULL, 0, &v, NULL),
                 KERR_OK);
    cr_assert_eq(metrics_with(v, (const char *[]){ "x", NULL }, &c, NULL), KERR_INVAL);
    cr_assert_eq(metrics_with(v, NULL, &c, NULL), KERR_INVAL);
    cr_assert_eq(metrics_with(v, (const char *[]){ "x", "y", NULL }, &c, NULL), KERR_OK);
    cr_assert_eq(metrics_with(v, (const char *[]){ "x", "y", NULL }, &again, NULL), KERR_OK);
    cr_assert_eq(c, again);
    for (i = 1; i < METRICS_MAX_CHILDREN; i++) {
        snprintf(val, sizeof(val), "%d", i);
        cr_assert_eq(metrics_vec_add(v, (const char *[]){ val, "y", NULL }, 1), KERR_OK);
    }
    cr_assert_eq(metrics_vec_add(v, (const char *[]){ "one", "more", NULL }, 1), KERR_TOOBIG);
    cr_assert_eq(metrics_vec_add(v, (const char *[]){ "x", "y", NULL }, 1), KERR_OK);
    cr_assert_eq(metrics_value(c), 1);
}

struct worker {
    struct metrics_child *shared;
    struct metrics_vec *vec, *hist;
    int id;
};

#define THREADS    8
#define ITERATIONS 20000

static void *work(void *arg)
{
    struct worker *w = arg;
    char own[16];
    int i;

    snprintf(own, sizeof(own), "t%d", w->id % 4);
    for (i = 0; i < ITERATIONS; i++) {
        metrics_inc(w->shared);
        if (metrics_vec_add(w->vec, (const char *[]){ own, NULL }, 1) != KERR_OK ||
            metrics_vec_observe(w->hist, NULL, (i % 4) * 0.5) != KERR_OK)
            return (void *)1;
    }
    return NULL;
}

Test(metrics, concurrent_updates_are_exact)
{
    struct metrics_vec *vec, *hist;
    struct metrics_child *shared, *c;
    struct worker w[THREADS];
    pthread_t th[THREADS];
    void *res;
    int i;

    cr_assert_eq(metrics_register(reg, METRICS_COUNTER, "ops_total", "",
                                  (const char *[]){ "who", NULL }, NULL, 0, &vec, NULL),
                 KERR_OK);
    cr_assert_eq(metrics_register(reg, METRICS_HISTOGRAM, "obs", "", NULL,
                                  (const double[]){ 0.5, 1 }, 2, &hist, NULL),
                 KERR_OK);
    cr_assert_eq(metrics_with(vec, (const char *[]){ "all", NULL }, &shared, NULL), KERR_OK);
    for (i = 0; i < THREADS; i++) {
        w[i] = (struct worker){ .shared = shared, .vec = vec, .hist = hist, .id = i };
        cr_assert_eq(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (i = 0; i < THREADS; i++) {
        cr_assert_eq(pthread_join(th[i], &res), 0);
        cr_assert_null(res);
    }
    cr_assert_eq(metrics_value(shared), THREADS * ITERATIONS);
    for (i = 0; i < 4; i++) {
        char own[16];

        snprintf(own, sizeof(own), "t%d", i);
        cr_assert_eq(metrics_with(vec, (const char *[]){ own, NULL }, &c, NULL), KERR_OK);
        cr_assert_eq(metrics_value(c), 2 * ITERATIONS, "%s", own);
    }
    cr_assert_eq(metrics_with(hist, NULL, &c, NULL), KERR_OK);
    cr_assert_eq(metrics_count(c), THREADS * ITERATIONS);
    /* Each thread observes 0, 0.5, 1, 1.5 in turn: 0.75 on average. */
    cr_assert_eq(metrics_value(c), THREADS * ITERATIONS * 0.75);
}

Test(metrics, bucket_helpers)
{
    double b[12];

    cr_assert_eq(metrics_buckets_exponential(10e-9, 10, 12, b), KERR_OK);
    cr_assert_float_eq(b[0], 1e-8, 1e-20);
    cr_assert_float_eq(b[11], 1e3, 1e-9);
    cr_assert_eq(metrics_buckets_linear(1, 2, 3, b), KERR_OK);
    cr_assert_eq(b[0], 1);
    cr_assert_eq(b[2], 5);
    cr_assert_eq(metrics_buckets_exponential(0, 2, 3, b), KERR_INVAL);
    cr_assert_eq(metrics_buckets_linear(0, 0, 3, b), KERR_INVAL);
    cr_assert_eq(metrics_def_buckets[METRICS_DEF_BUCKETS_LEN - 1], 10);
    cr_assert_eq(metrics_reconcile_buckets[METRICS_RECONCILE_BUCKETS_LEN - 1], 60);
}

static void bump(void *ctx)
{
    metrics_inc(ctx);
}

Test(metrics, render_hooks_run_before_rendering)
{
    struct metrics_vec *v;
    struct metrics_child *c;
    char *text;

    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "renders", "", NULL, NULL, 0, &v, NULL),
                 KERR_OK);
    cr_assert_eq(metrics_with(v, NULL, &c, NULL), KERR_OK);
    cr_assert_eq(metrics_on_render(reg, bump, c, NULL), KERR_OK);
    free(metricsfix_render(reg));
    text = metricsfix_render(reg);
    cr_assert_not_null(strstr(text, "renders 2\n"), "%s", text);
    free(text);
}

/* A "free" function that counts its calls in *ctx. */
static void count_free(void *ctx)
{
    ++*(int *)ctx;
}

static void noop(void *ctx)
{
    (void)ctx;
}

Test(metrics, owned_hook_context_is_freed_with_the_registry)
{
    struct metrics_registry *r = NULL;
    struct kerr_info err;
    int *ctx = malloc(sizeof(*ctx)), freed = 0;
    size_t i;

    cr_assert_not_null(ctx);
    cr_assert_eq(metrics_registry_new(&r, NULL), KERR_OK);
    /* Heap context: LeakSanitizer reports it if the registry does not free it. */
    cr_assert_eq(metrics_on_render_owned(r, noop, ctx, free, NULL), KERR_OK);
    for (i = 1; i < METRICS_MAX_HOOKS; i++)
        cr_assert_eq(metrics_on_render_owned(r, noop, &freed, count_free, NULL), KERR_OK);
    cr_assert_eq(freed, 0);
    /* Past the limit the context is refused and freed at once. */
    cr_assert_eq(metrics_on_render_owned(r, noop, &freed, count_free, &err), KERR_TOOBIG);
    cr_assert_eq(freed, 1);
    cr_assert_eq(metrics_on_render(r, noop, NULL, NULL), KERR_TOOBIG);
    metrics_registry_free(r);
    cr_assert_eq(freed, METRICS_MAX_HOOKS);
}
