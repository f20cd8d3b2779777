/* Tests of common/backoff: client-go's jittered exponential backoff with reset. */
#include "common/backoff.h"

#include <criterion/criterion.h>

/* The jittered delay d for a base b lies in [b, 2b). */
static void assert_jittered(long d, long base)
{
    cr_assert(d >= base && d < 2 * base, "delay %ld for base %ld", d, base);
}

Test(backoff, doubles_up_to_the_cap_with_jitter)
{
    static const long base[] = { 100, 200, 400, 800, 1000, 1000, 1000 };
    struct backoff b;
    long long now = 5000;
    size_t i;

    backoff_init(&b, 100, 1000, 60000, 42);
    for (i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
        assert_jittered(backoff_next(&b, now), base[i]);
        now += 10;
    }
}

Test(backoff, quiet_time_resets_to_the_initial_delay)
{
    struct backoff b;

    backoff_init(&b, 100, 1000, 5000, 7);
    assert_jittered(backoff_next(&b, 1000), 100);
    assert_jittered(backoff_next(&b, 2000), 200);
    assert_jittered(backoff_next(&b, 7000), 400); /* exactly reset_ms later: no reset yet */
    assert_jittered(backoff_next(&b, 12001), 100);
    assert_jittered(backoff_next(&b, 12002), 200);
}

Test(backoff, jitter_spreads_over_the_interval)
{
    struct backoff b;
    long d, lo = 1L << 30, hi = 0;
    int i;

    for (i = 0; i < 200; i++) {
        backoff_init(&b, 1000, 1000, 60000, (uint64_t)i * 7919);
        d = backoff_next(&b, 100);
        assert_jittered(d, 1000);
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    cr_assert_lt(lo, 1250, "jitter reaches the low end (%ld)", lo);
    cr_assert_gt(hi, 1750, "jitter reaches the high end (%ld)", hi);
}

Test(backoff, rand_is_a_seeded_stream)
{
    struct backoff a, b, zero;
    uint64_t x, y;
    int i, same = 1;

    backoff_init(&a, 1, 1, 1, 99);
    backoff_init(&b, 1, 1, 1, 99);
    backoff_init(&zero, 1, 1, 1, 0);
    for (i = 0; i < 10; i++) {
        x = backoff_rand(&a);
        y = backoff_rand(&b);
        cr_assert_eq(x, y, "one seed, one stream");
        same = same && x == backoff_rand(&zero);
    }
    cr_assert_not(same, "different seeds, different streams");
    cr_assert_neq(backoff_rand(&zero), 0, "a zero seed still works");
}
