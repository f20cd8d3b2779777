#include "common/buf.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

Test(buf, empty_buffer_is_empty_string)
{
    struct buf b;

    buf_init(&b, 16);
    cr_assert_str_eq(buf_str(&b), "");
    cr_assert_eq(b.len, 0);
    buf_release(&b);
    buf_release(&b);
}

Test(buf, append_and_format)
{
    struct buf b;

    buf_init(&b, 1024);
    cr_assert_eq(buf_appends(&b, "hello"), KERR_OK);
    cr_assert_eq(buf_append(&b, ", ", 2), KERR_OK);
    cr_assert_eq(buf_appendf(&b, "%s %d", "world", 42), KERR_OK);
    cr_assert_str_eq(buf_str(&b), "hello, world 42");
    cr_assert_eq(b.len, 15);
    buf_release(&b);
}

Test(buf, cap_is_hard_and_failure_leaves_content)
{
    struct buf b;

    buf_init(&b, 8);
    cr_assert_eq(buf_appends(&b, "12345678"), KERR_OK);
    cr_assert_eq(buf_appends(&b, "9"), KERR_TOOBIG);
    cr_assert_str_eq(buf_str(&b), "12345678");
    cr_assert_eq(buf_appendf(&b, "%d", 1), KERR_TOOBIG);
    cr_assert_eq(b.len, 8);
    buf_release(&b);
}

Test(buf, huge_length_does_not_overflow)
{
    struct buf b;

    buf_init(&b, 64);
    cr_assert_eq(buf_appends(&b, "x"), KERR_OK);
    cr_assert_eq(buf_append(&b, "y", (size_t)-1), KERR_TOOBIG);
    cr_assert_str_eq(buf_str(&b), "x");
    buf_release(&b);
}

Test(buf, consume_moves_the_rest_forward)
{
    struct buf b;

    buf_init(&b, 64);
    cr_assert_eq(buf_appends(&b, "line1\nline2"), KERR_OK);
    buf_consume(&b, 6);
    cr_assert_str_eq(buf_str(&b), "line2");
    buf_consume(&b, 100);
    cr_assert_str_eq(buf_str(&b), "");
    cr_assert_eq(b.len, 0);
    buf_release(&b);
}

Test(buf, detach_hands_over_ownership)
{
    struct buf b;
    size_t n = 0;
    char *p;

    buf_init(&b, 64);
    cr_assert_eq(buf_appends(&b, "abc"), KERR_OK);
    p = buf_detach(&b, &n);
    cr_assert_str_eq(p, "abc");
    cr_assert_eq(n, 3);
    cr_assert_eq(b.len, 0);
    cr_assert_null(b.data);
    free(p);
    p = buf_detach(&b, &n);
    cr_assert_str_eq(p, "");
    free(p);
}

Test(buf, grows_through_many_appends)
{
    struct buf b;
    int i;

    buf_init(&b, 1 << 20);
    for (i = 0; i < 10000; i++)
        cr_assert_eq(buf_append(&b, "0123456789", 10), KERR_OK);
    cr_assert_eq(b.len, 100000);
    cr_assert_eq(b.data[99999], '9');
    cr_assert_eq(b.data[100000], '\0');
    buf_release(&b);
}

Test(buf, dupf_formats_a_new_string_within_the_cap)
{
    char *p = buf_dupf(16, "%s/%s", "ns", "name");

    cr_assert_str_eq(p, "ns/name");
    free(p);
    p = buf_dupf(7, "%s/%s", "ns", "name");
    cr_assert_str_eq(p, "ns/name", "exactly the cap");
    free(p);
    cr_assert_null(buf_dupf(6, "%s/%s", "ns", "name"), "one byte over the cap");
    p = buf_dupf(0, "%s", "");
    cr_assert_str_eq(p, "");
    free(p);
}
