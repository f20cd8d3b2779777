/*
 * common/metrics at a seed's scale: many label sets per metric, found by
 * their hash; the cardinality limit logged once; threads adding series
 * while others look them up and scrape. A timing of a per-Etcd rebuild is
 * printed (never asserted).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/metrics.h"
#include "tests/support/metricsfix.h"

static struct metrics_registry *reg;

static void setup(void)
{
    reg = metricsfix_registry();
}

static void teardown(void)
{
    metrics_registry_free(reg);
    log_set_fd(-1);
}

TestSuite(metrics_index, .init = setup, .fini = teardown);

/* The whole exposition text, up to 64 MiB. OWNED by the caller (free). */
static char *render_big(void)
{
    struct buf b;
    char *text;

    buf_init(&b, 64u << 20);
    cr_assert_eq(metrics_render(reg, &b, NULL), KERR_OK);
    text = buf_detach(&b, NULL);
    cr_assert_not_null(text);
    return text;
}

static const char *const etcd_labels[] = { "namespace", "etcd", NULL };

static void names(int i, char *ns, char *name, size_t n)
{
    snprintf(ns, n, "shoot--p%d--s%d", i % 97, i);
    snprintf(name, n, "etcd-%s", i % 2 ? "main" : "events");
}

Test(metrics_index, twenty_thousand_label_sets_of_one_metric_are_admitted)
{
    struct metrics_vec *v;
    char ns[64], name[64], want[192];
    char *text;
    int i;

    cr_assert_eq(
        metrics_register(reg, METRICS_GAUGE, "etcd_up", "", etcd_labels, NULL, 0, &v, NULL),
        KERR_OK);
    for (i = 0; i < 20000; i++) {
        names(i, ns, name, sizeof(ns));
        cr_assert_eq(metrics_vec_set(v, (const char *[]){ ns, name, NULL }, i), KERR_OK, "set %d",
                     i);
    }
    names(19999, ns, name, sizeof(ns));
    snprintf(want, sizeof(want), "etcd_up{namespace=\"%s\",etcd=\"%s\"} 19999\n", ns, name);
    text = render_big();
    cr_expect_not_null(strstr(text, want), "the last series is rendered: %s", want);
    free(text);
}

Test(metrics_index, a_lookup_after_many_adds_finds_its_own_series)
{
    struct metrics_vec *v;
    struct metrics_child **kids, *c;
    char ns[64], name[64];
    int i, n = 50000;

    kids = calloc((size_t)n, sizeof(*kids));
    cr_assert_not_null(kids);
    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "g", "", etcd_labels, NULL, 0, &v, NULL),
                 KERR_OK);
    for (i = 0; i < n; i++) {
        names(i, ns, name, sizeof(ns));
        cr_assert_eq(metrics_with(v, (const char *[]){ ns, name, NULL }, &kids[i], NULL), KERR_OK);
        metrics_set(kids[i], i);
    }
    for (i = n - 1; i >= 0; i--) {
        names(i, ns, name, sizeof(ns));
        cr_assert_eq(metrics_with(v, (const char *[]){ ns, name, NULL }, &c, NULL), KERR_OK);
        cr_assert_eq(c, kids[i], "series %d found again", i);
        cr_assert_eq(metrics_value(c), i);
    }
    /* The same bytes split differently are another series. */
    cr_assert_eq(metrics_with(v, (const char *[]){ "a", "bc", NULL }, &kids[0], NULL), KERR_OK);
    cr_assert_eq(metrics_with(v, (const char *[]){ "ab", "c", NULL }, &kids[1], NULL), KERR_OK);
    cr_assert_neq(kids[0], kids[1]);
    free(kids);
}

static size_t count_lines_with(const char *path, const char *what)
{
    char line[1024];
    size_t n = 0;
    FILE *f = fopen(path, "r");

    cr_assert_not_null(f);
    while (fgets(line, sizeof(line), f))
        n += strstr(line, what) != NULL;
    fclose(f);
    return n;
}

Test(metrics_index, the_limit_is_reached_and_logged_once)
{
    char path[] = "/tmp/metrics_index_log_XXXXXX";
    struct metrics_vec *v, *other;
    struct metrics_child *first;
    char val[16];
    int fd, i;

    fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    log_set_fd(fd);
    cr_assert_eq(metrics_register(reg, METRICS_COUNTER, "c_total", "",
                                  (const char *[]){ "k", NULL }, NULL, 0, &v, NULL),
                 KERR_OK);
    cr_assert_eq(metrics_register(reg, METRICS_COUNTER, "d_total", "",
                                  (const char *[]){ "k", NULL }, NULL, 0, &other, NULL),
                 KERR_OK);
    cr_assert_eq(metrics_with(v, (const char *[]){ "0", NULL }, &first, NULL), KERR_OK);
    for (i = 1; i < METRICS_MAX_CHILDREN; i++) {
        snprintf(val, sizeof(val), "%d", i);
        cr_assert_eq(metrics_vec_add(v, (const char *[]){ val, NULL }, 1), KERR_OK);
    }
    for (i = 0; i < 3; i++)
        cr_assert_eq(metrics_vec_add(v, (const char *[]){ "one more", NULL }, 1), KERR_TOOBIG);
    cr_assert_eq(metrics_vec_add(v, (const char *[]){ "0", NULL }, 1), KERR_OK, "existing: fine");
    cr_assert_eq(metrics_value(first), 1);
    cr_assert_eq(metrics_vec_add(other, (const char *[]){ "x", NULL }, 1), KERR_OK,
                 "another metric is not affected");
    log_set_fd(-1);
    close(fd);
    cr_expect_eq(count_lines_with(path, "limit of label sets"), 1, "logged once");
    cr_expect_eq(count_lines_with(path, "\"metric\":\"c_total\""), 1, "names the metric");
    unlink(path);
}

/* Threads adding series while others look them up and scrape. */

#define ADDERS  3
#define LOOKERS 3
#define PER_ADD 4000
#define PRESET  2000

struct race {
    struct metrics_vec *v;
    struct metrics_child *preset[PRESET];
    atomic_int adders_left;
};

struct race_arg {
    struct race *r;
    int id;
};

static void *adder(void *p)
{
    struct race_arg *a = p;
    char ns[32];
    int i;

    for (i = 0; i < PER_ADD; i++) {
        snprintf(ns, sizeof(ns), "a%d-%d", a->id, i);
        if (metrics_vec_set(a->r->v, (const char *[]){ ns, "x", NULL }, a->id * PER_ADD + i) !=
            KERR_OK)
            return (void *)1;
    }
    atomic_fetch_sub(&a->r->adders_left, 1);
    return NULL;
}

/* Look up the preset series (each must be the same child) and others' fresh ones. */
static void *looker(void *p)
{
    struct race_arg *a = p;
    struct metrics_child *c;
    char ns[32];
    int i = 0;

    while (atomic_load(&a->r->adders_left) > 0 || i < 2 * PRESET) {
        snprintf(ns, sizeof(ns), "p%d", i % PRESET);
        if (metrics_with(a->r->v, (const char *[]){ ns, "x", NULL }, &c, NULL) != KERR_OK ||
            c != a->r->preset[i % PRESET] || metrics_value(c) != i % PRESET)
            return (void *)1;
        snprintf(ns, sizeof(ns), "a%d-%d", i % ADDERS, (i * 7) % PER_ADD);
        if (metrics_with(a->r->v, (const char *[]){ ns, "x", NULL }, &c, NULL) != KERR_OK)
            return (void *)2;
        i++;
    }
    return NULL;
}

static void *scraper(void *p)
{
    struct race_arg *a = p;
    struct buf b;
    int n = 0;

    while (atomic_load(&a->r->adders_left) > 0 || n < 2) {
        buf_init(&b, 64u << 20);
        if (metrics_render(reg, &b, NULL) != KERR_OK) {
            buf_release(&b);
            return (void *)1;
        }
        buf_release(&b);
        n++;
    }
    return NULL;
}

Test(metrics_index, threads_add_series_while_others_look_up_and_scrape, .timeout = 300)
{
    static struct race r;
    struct race_arg args[ADDERS + LOOKERS + 1];
    pthread_t th[ADDERS + LOOKERS + 1];
    struct metrics_child *c;
    char ns[32], *text;
    const char *s;
    size_t lines = 0;
    void *res;
    int i, nth = 0;

    memset(&r, 0, sizeof(r));
    atomic_init(&r.adders_left, ADDERS);
    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "race", "", etcd_labels, NULL, 0, &r.v, NULL),
                 KERR_OK);
    for (i = 0; i < PRESET; i++) {
        snprintf(ns, sizeof(ns), "p%d", i);
        cr_assert_eq(metrics_with(r.v, (const char *[]){ ns, "x", NULL }, &r.preset[i], NULL),
                     KERR_OK);
        metrics_set(r.preset[i], i);
    }
    for (i = 0; i < ADDERS + LOOKERS + 1; i++) {
        args[i] = (struct race_arg){ .r = &r, .id = i < ADDERS ? i : i - ADDERS };
        cr_assert_eq(pthread_create(&th[nth++], NULL,
                                    i < ADDERS             ? adder
                                    : i < ADDERS + LOOKERS ? looker
                                                           : scraper,
                                    &args[i]),
                     0);
    }
    for (i = 0; i < nth; i++) {
        cr_assert_eq(pthread_join(th[i], &res), 0);
        cr_expect_null(res, "thread %d failed (%p)", i, res);
    }
    /* Every series exists once, with the value its adder set (lookers created none twice). */
    for (i = 0; i < ADDERS * PER_ADD; i++) {
        snprintf(ns, sizeof(ns), "a%d-%d", i / PER_ADD, i % PER_ADD);
        cr_assert_eq(metrics_with(r.v, (const char *[]){ ns, "x", NULL }, &c, NULL), KERR_OK);
        cr_assert_eq(metrics_value(c), i, "%s", ns);
    }
    text = render_big();
    for (s = text; (s = strstr(s, "race{")) != NULL; s++)
        lines++;
    cr_expect_eq(lines, (size_t)(PRESET + ADDERS * PER_ADD), "each series rendered once");
    free(text);
}

/* A scrape's per-Etcd rebuild: set every series, then render. Printed, not asserted. */
Test(metrics_index, scrape_rebuild_timing, .timeout = 300)
{
    struct metrics_vec *v;
    struct timespec t0, t1;
    char ns[64], name[64];
    struct buf b;
    int i, round, n = 10000;

    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "t", "", etcd_labels, NULL, 0, &v, NULL),
                 KERR_OK);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (round = 0; round < 3; round++) {
        for (i = 0; i < n; i++) {
            names(i, ns, name, sizeof(ns));
            cr_assert_eq(metrics_vec_set(v, (const char *[]){ ns, name, NULL }, round), KERR_OK);
        }
        buf_init(&b, 64u << 20);
        cr_assert_eq(metrics_render(reg, &b, NULL), KERR_OK);
        buf_release(&b);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "metrics_index: %d series, 3 rebuilds + renders: %.1f ms per scrape\n", n,
            ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / 3);
}

static int keep_even_round(void *ctx, const char *const *values)
{
    return ((int)strtol(values[0] + 1, NULL, 10) + *(int *)ctx) % 2 == 0;
}

/* Sweeps leave removed series' slots behind; lookups and adds stay right across many rounds. */
Test(metrics_index, sweeps_and_adds_in_rounds_keep_lookups_right)
{
    struct metrics_vec *v;
    struct metrics_child *c;
    char ns[32];
    int round, i;

    cr_assert_eq(metrics_register(reg, METRICS_GAUGE, "s", "", etcd_labels, NULL, 0, &v, NULL),
                 KERR_OK);
    for (round = 0; round < 20; round++) {
        for (i = 0; i < 1000; i++) {
            snprintf(ns, sizeof(ns), "n%d", i);
            cr_assert_eq(metrics_vec_set(v, (const char *[]){ ns, "x", NULL }, i + round), KERR_OK);
        }
        metrics_vec_sweep(v, keep_even_round, &round);
        for (i = 0; i < 1000; i++) {
            snprintf(ns, sizeof(ns), "n%d", i);
            cr_assert_eq(metrics_with(v, (const char *[]){ ns, "x", NULL }, &c, NULL), KERR_OK);
            /* Kept: the value of this round; swept: a new child at 0. */
            cr_assert_eq(metrics_value(c), (i + round) % 2 == 0 ? i + round : 0, "%s round %d", ns,
                         round);
        }
    }
}
