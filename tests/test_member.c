/*
 * Tests of webhook/member's spec.replicas reader (member_replicas, member_replicas_count): the
 * one reading of spec.replicas for the scale-down, claim, PVC, restore and Etcd replica guards,
 * what an absent or malformed field means to each.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdint.h>

#include "tests/support/jsonfix.h"
#include "webhook/member.h"

static long count(const char *text, int scale, long max)
{
    cJSON *o = text ? jsonfix_parse(text) : NULL;
    long r = member_replicas_count(o, scale, max);

    cJSON_Delete(o);
    return r;
}

static enum kerr raw(const char *text, int scale, int64_t *r)
{
    cJSON *o = text ? jsonfix_parse(text) : NULL;
    enum kerr rc = member_replicas(o, scale, r);

    cJSON_Delete(o);
    return rc;
}

Test(member, replicas_read_as_written)
{
    int64_t r = 7;

    cr_assert_eq(raw("{\"spec\":{\"replicas\":3}}", 0, &r), KERR_OK);
    cr_assert_eq(r, 3);
    cr_assert_eq(raw("{\"spec\":{\"replicas\":-2}}", 1, &r), KERR_OK, "any integer: the caller's");
    cr_assert_eq(r, -2);
    cr_assert_eq(raw("{\"spec\":{\"replicas\":\"3\"}}", 0, &r), KERR_INVAL);
    cr_assert_eq(raw("{\"spec\":{\"replicas\":1.5}}", 1, &r), KERR_INVAL);
    cr_assert_eq(raw("{\"spec\":{\"replicas\":null}}", 1, &r), KERR_INVAL);
}

Test(member, absent_replicas_are_a_scales_zero_only)
{
    int64_t r = 7;

    cr_assert_eq(raw("{\"spec\":{}}", 1, &r), KERR_OK, "a Scale omits 0");
    cr_assert_eq(r, 0);
    cr_assert_eq(raw("{}", 1, &r), KERR_OK);
    cr_assert_eq(r, 0);
    cr_assert_eq(raw("{\"spec\":{}}", 0, &r), KERR_NOTFOUND, "an Etcd's or a StatefulSet's");
    cr_assert_eq(raw(NULL, 1, &r), KERR_NOTFOUND, "no object: nothing read");
    cr_assert_eq(raw("[1]", 1, &r), KERR_NOTFOUND);
}

Test(member, replicas_count_defaults_and_range)
{
    cr_assert_eq(count("{\"spec\":{}}", 0, LONG_MAX), 1, "a StatefulSet's default");
    cr_assert_eq(count("{\"spec\":{}}", 1, LONG_MAX), 0, "a Scale's omitted 0");
    cr_assert_eq(count(NULL, 0, LONG_MAX), 1);
    cr_assert_eq(count(NULL, 1, LONG_MAX), 0);
    cr_assert_eq(count("{\"spec\":{\"replicas\":5}}", 0, LONG_MAX), 5);
    cr_assert_eq(count("{\"spec\":{\"replicas\":-1}}", 0, LONG_MAX), -1, "not a count");
    cr_assert_eq(count("{\"spec\":{\"replicas\":\"5\"}}", 1, LONG_MAX), -1);
    cr_assert_eq(count("{\"spec\":{\"replicas\":2147483648}}", 0, LONG_MAX), 2147483648L);
    cr_assert_eq(count("{\"spec\":{\"replicas\":2147483648}}", 0, 2147483647L), -1,
                 "past the caller's maximum: not a count");
    cr_assert_eq(count("{\"spec\":{\"replicas\":2147483647}}", 1, 2147483647L), 2147483647L);
}
