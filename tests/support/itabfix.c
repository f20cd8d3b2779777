#include "tests/support/itabfix.h"

#include <criterion/criterion.h>

enum kerr itabfix_count_visit(void *arg, struct itab_entry *e)
{
    (void)e;
    (*(int *)arg)++;
    return KERR_OK;
}

int itabfix_hits(const struct itab *t, size_t index, const char *value)
{
    int n = 0;

    cr_assert_eq(itab_walk_index(t, index, value, itabfix_count_visit, &n), KERR_OK, "%zu=%s",
                 index, value);
    return n;
}
