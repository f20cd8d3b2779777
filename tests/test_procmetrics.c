#include "common/procmetrics.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/support/metricsfix.h"

Test(procmetrics, values_from_proc)
{
    struct metrics_registry *reg = metricsfix_registry();
    char *text;
    double start, now = (double)time(NULL);

    cr_assert_eq(procmetrics_register(reg, NULL), KERR_OK);
    cr_assert_eq(procmetrics_register(reg, NULL), KERR_EXISTS);
    text = metricsfix_render(reg);
    cr_assert_gt(metricsfix_sample(text, "process_resident_memory_bytes"), 1024 * 1024);
    cr_assert_gt(metricsfix_sample(text, "process_virtual_memory_bytes"), 1024 * 1024);
    cr_assert_geq(metricsfix_sample(text, "process_open_fds"), 3);
    cr_assert_gt(metricsfix_sample(text, "process_max_fds"), 0);
    cr_assert_geq(metricsfix_sample(text, "process_cpu_seconds_total"), 0);
    start = metricsfix_sample(text, "process_start_time_seconds");
    cr_assert(start > now - 3600 && start <= now + 1, "start %f now %f", start, now);
    cr_assert_not_null(strstr(text, "# TYPE process_cpu_seconds_total counter\n"));
    free(text);
    metrics_registry_free(reg);
}

Test(procmetrics, open_fds_follow_the_process)
{
    struct metrics_registry *reg = metricsfix_registry();
    char *text;
    double before, after;
    FILE *f;

    cr_assert_eq(procmetrics_register(reg, NULL), KERR_OK);
    text = metricsfix_render(reg);
    before = metricsfix_sample(text, "process_open_fds");
    free(text);
    f = fopen("/proc/self/stat", "re");
    cr_assert_not_null(f);
    text = metricsfix_render(reg);
    after = metricsfix_sample(text, "process_open_fds");
    free(text);
    fclose(f);
    cr_assert_eq(after, before + 1, "before %f after %f", before, after);
    metrics_registry_free(reg);
}
