#include "tests/support/metricsfix.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct metrics_registry *metricsfix_registry(void)
{
    struct metrics_registry *reg = NULL;
    struct kerr_info err;

    cr_assert_eq(metrics_registry_new(&reg, &err), KERR_OK, "%s", err.msg);
    return reg;
}

char *metricsfix_render(struct metrics_registry *reg)
{
    struct buf b;
    struct kerr_info err;

    buf_init(&b, 1u << 20);
    cr_assert_eq(metrics_render(reg, &b, &err), KERR_OK, "%s", err.msg);
    return buf_detach(&b, NULL);
}

double metricsfix_sample(const char *text, const char *name)
{
    char key[128];
    const char *p;

    snprintf(key, sizeof(key), "\n%s ", name);
    p = strstr(text, key);
    cr_assert_not_null(p, "%s missing", name);
    return strtod(p + strlen(key), NULL);
}
