#include "common/procmetrics.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct metrics_registry *reg;

static void setup(void)
{
    cr_assert_eq(metrics_registry_new(&reg, NULL), KERR_OK);
}

static void teardown(void)
{
    metrics_registry_free(reg);
}

TestSuite(procmetrics, .init = setup, .fini = teardown);

/* The whole exposition text; the caller frees it. */
static char *render(void)
{
    struct buf b;
    struct kerr_info err;

    buf_init(&b, 1u << 20);
    cr_assert_eq(metrics_render(reg, &b, &err), KERR_OK, "%s", err.msg);
    return buf_detach(&b, NULL);
}

/* The value of the unlabelled sample name in text. */
static double sample(const char *text, const char *name)
{
    char key[128];
    const char *p;

    snprintf(key, sizeof(key), "\n%s ", name);
    p = strstr(text, key);
    cr_assert_not_null(p, "%s missing", name);
    return strtod(p + strlen(key), NULL);
}

Test(procmetrics, values_from_proc)
{
    char *text;
    double start, now = (double)time(NULL);

    cr_assert_eq(procmetrics_register(reg, NULL), KERR_OK);
    cr_assert_eq(procmetrics_register(reg, NULL), KERR_EXISTS);
    text = render();
    cr_assert_gt(sample(text, "process_resident_memory_bytes"), 1024 * 1024);
    cr_assert_gt(sample(text, "process_virtual_memory_bytes"), 1024 * 1024);
    cr_assert_geq(sample(text, "process_open_fds"), 3);
    cr_assert_gt(sample(text, "process_max_fds"), 0);
    cr_assert_geq(sample(text, "process_cpu_seconds_total"), 0);
    start = sample(text, "process_start_time_seconds");
    cr_assert(start > now - 3600 && start <= now + 1, "start %f now %f", start, now);
    cr_assert_not_null(strstr(text, "# TYPE process_cpu_seconds_total counter\n"));
    free(text);
}

Test(procmetrics, open_fds_follow_the_process)
{
    char *text;
    double before, after;
    FILE *f;

    cr_assert_eq(procmetrics_register(reg, NULL), KERR_OK);
    text = render();
    before = sample(text, "process_open_fds");
    free(text);
    f = fopen("/proc/self/stat", "re");
    cr_assert_not_null(f);
    text = render();
    after = sample(text, "process_open_fds");
    free(text);
    fclose(f);
    cr_assert_eq(after, before + 1, "before %f after %f", before, after);
}
