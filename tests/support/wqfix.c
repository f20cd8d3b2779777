#include "tests/support/wqfix.h"

#include <criterion/criterion.h>

struct wq *wqfix_new(const struct wq_opts *o)
{
    struct wq *q = NULL;
    struct kerr_info err;

    cr_assert_eq(wq_new(o, &q, &err), KERR_OK, "%s", err.msg);
    return q;
}
