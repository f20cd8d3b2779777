/*
 * metrics_scrape_bench - the cost of a scrape's per-Etcd rebuild in
 * common/metrics: set one gauge series per Etcd (namespace, etcd), then
 * render, as warden-controller's render hook does. Prints the milliseconds
 * per scrape. Built by bench/metrics_scrape_bench.sh against two versions of
 * common/metrics.c.
 *
 * Usage: metrics_scrape_bench ETCDS SCRAPES
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/buf.h"
#include "common/metrics.h"

int main(int argc, char **argv)
{
    static const char *const labels[] = { "namespace", "etcd", NULL };
    struct metrics_registry *reg;
    struct metrics_vec *v;
    struct timespec t0, t1;
    char ns[64], name[64];
    struct buf b;
    int n, scrapes, i, s;

    if (argc != 3 || (n = (int)strtol(argv[1], NULL, 10)) <= 0 ||
        (scrapes = (int)strtol(argv[2], NULL, 10)) <= 0 || n > 10000000 || scrapes > 100000) {
        fprintf(stderr, "usage: %s ETCDS SCRAPES\n", argv[0]);
        return 2;
    }
    if (metrics_registry_new(&reg, NULL) != KERR_OK ||
        metrics_register(reg, METRICS_GAUGE, "etcd_up", "", labels, NULL, 0, &v, NULL) != KERR_OK)
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (s = 0; s < scrapes; s++) {
        for (i = 0; i < n; i++) {
            snprintf(ns, sizeof(ns), "shoot--p%d--s%d", i % 97, i / 2);
            snprintf(name, sizeof(name), "etcd-%s", i % 2 ? "main" : "events");
            if (metrics_vec_set(v, (const char *[]){ ns, name, NULL }, s) != KERR_OK)
                return 1;
        }
        buf_init(&b, 256u << 20);
        if (metrics_render(reg, &b, NULL) != KERR_OK)
            return 1;
        buf_release(&b);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%.2f\n",
           ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) /
               scrapes);
    metrics_registry_free(reg);
    return 0;
}
