#include "common/ratelimit.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>

#include "common/ktime.h"
#include "tests/support/fakeclock.h"

#define MS (1000LL * 1000)
#define S  (1000LL * MS)

Test(ratelimit, bucket_rejects_bad_parameters)
{
    struct rl_bucket *b = (struct rl_bucket *)1;
    struct kerr_info err;

    cr_assert_eq(rl_bucket_new(0, 1, NULL, &b, &err), KERR_INVAL);
    cr_assert_null(b);
    cr_assert_eq(rl_bucket_new(5, 0, NULL, &b, &err), KERR_INVAL);
    cr_assert_eq(rl_bucket_new(-1, 3, NULL, &b, NULL), KERR_INVAL);
    rl_bucket_free(NULL);
}

Test(ratelimit, bucket_starts_full_and_refills_at_rate)
{
    struct fakeclock f;
    struct rl_clock c = fakeclock_init(&f, 1000 * S);
    struct rl_bucket *b = NULL;
    int i;

    cr_assert_eq(rl_bucket_new(10, 3, &c, &b, NULL), KERR_OK);
    for (i = 0; i < 3; i++)
        cr_assert_eq(rl_try(b), 1, "token %d of the burst", i);
    cr_assert_eq(rl_try(b), 0);
    atomic_fetch_add(&f.now, 99 * MS); /* 0.99 token */
    cr_assert_eq(rl_try(b), 0);
    atomic_fetch_add(&f.now, 1 * MS);
    cr_assert_eq(rl_try(b), 1);
    cr_assert_eq(rl_try(b), 0);
    atomic_fetch_add(&f.now, 3600 * S); /* refill is capped at the burst */
    cr_assert_float_eq(rl_tokens(b), 3.0, 1e-9);
    rl_bucket_free(b);
}

Test(ratelimit, reserve_goes_into_debt_and_reports_the_wait)
{
    struct fakeclock f;
    struct rl_clock c = fakeclock_init(&f, 1000 * S);
    struct rl_bucket *b = NULL;

    cr_assert_eq(rl_bucket_new(5, 2, &c, &b, NULL), KERR_OK);
    cr_assert_eq(rl_reserve(b), 0);
    cr_assert_eq(rl_reserve(b), 0);
    cr_assert_eq(rl_reserve(b), 200 * MS);
    cr_assert_eq(rl_reserve(b), 400 * MS);
    cr_assert_float_eq(rl_tokens(b), -2.0, 1e-9);
    atomic_fetch_add(&f.now, 400 * MS);
    cr_assert_float_eq(rl_tokens(b), 0.0, 1e-9);
    cr_assert_eq(rl_try(b), 0);
    rl_bucket_free(b);
}

Test(ratelimit, take_sleeps_on_the_clock_until_the_token_is_due)
{
    struct fakeclock f;
    struct rl_clock c = fakeclock_init(&f, 1000 * S);
    struct rl_bucket *b = NULL;

    cr_assert_eq(rl_bucket_new(2, 1, &c, &b, NULL), KERR_OK);
    cr_assert_eq(rl_take(b, -1, NULL, NULL), KERR_OK);
    cr_assert_eq(atomic_load(&f.slept), 0);
    cr_assert_eq(rl_take(b, -1, NULL, NULL), KERR_OK);
    cr_assert_eq(atomic_load(&f.slept), 500 * MS);
    cr_assert_eq(rl_take(b, 1000, NULL, NULL), KERR_OK);
    cr_assert_eq(atomic_load(&f.slept), 1000 * MS);
    rl_bucket_free(b);
}

Test(ratelimit, take_with_a_short_deadline_times_out_without_taking)
{
    struct fakeclock f;
    struct rl_clock c = fakeclock_init(&f, 1000 * S);
    struct rl_bucket *b = NULL;
    struct kerr_info err;

    cr_assert_eq(rl_bucket_new(1, 1, &c, &b, NULL), KERR_OK);
    cr_assert_eq(rl_take(b, 0, NULL, NULL), KERR_OK);
    cr_assert_eq(rl_take(b, 999, NULL, &err), KERR_TIMEOUT);
    cr_assert_eq(err.code, KERR_TIMEOUT);
    cr_assert_eq(atomic_load(&f.slept), 0);
    cr_assert_float_eq(rl_tokens(b), 0.0, 1e-9, "the refused take left no debt");
    cr_assert_eq(rl_take(b, 1000, NULL, NULL), KERR_OK);
    rl_bucket_free(b);
}

Test(ratelimit, take_is_cancelled_and_returns_the_token)
{
    struct fakeclock f;
    struct rl_clock c = fakeclock_init(&f, 1000 * S);
    struct rl_bucket *b = NULL;
    atomic_int cancel = 1;

    cr_assert_eq(rl_bucket_new(1, 1, &c, &b, NULL), KERR_OK);
    cr_assert_eq(rl_try(b), 1);
    cr_assert_eq(rl_take(b, -1, &cancel, NULL), KERR_CANCELLED);
    cr_assert_float_eq(rl_tokens(b), 0.0, 1e-9);
    rl_bucket_free(b);
}

struct taker {
    struct rl_bucket *b;
    atomic_int *cancel;
    enum kerr rc;
};

static void *take_thread(void *arg)
{
    struct taker *t = arg;

    t->rc = rl_take(t->b, -1, t->cancel, NULL);
    return NULL;
}

Test(ratelimit, take_on_the_real_clock_is_cancelled_from_another_thread)
{
    struct rl_bucket *b = NULL;
    atomic_int cancel = 0;
    struct taker t;
    pthread_t th;
    int64_t start;

    cr_assert_eq(rl_bucket_new(0.01, 1, NULL, &b, NULL), KERR_OK); /* next token in 100 s */
    cr_assert_eq(rl_try(b), 1);
    t.b = b;
    t.cancel = &cancel;
    t.rc = KERR_OK;
    start = ktime_mono_ns();
    cr_assert_eq(pthread_create(&th, NULL, take_thread, &t), 0);
    atomic_store(&cancel, 1);
    pthread_join(th, NULL);
    cr_assert_eq(t.rc, KERR_CANCELLED);
    cr_assert_lt(ktime_mono_ns() - start, 30 * S, "the next token is 100 s away");
    rl_bucket_free(b);
}

static void *hammer(void *arg)
{
    struct rl_bucket *b = arg;
    long n = 0;
    int i;

    for (i = 0; i < 10000; i++)
        n += rl_try(b);
    return (void *)n;
}

Test(ratelimit, concurrent_try_never_hands_out_more_than_the_burst)
{
    struct fakeclock f;
    struct rl_clock c = fakeclock_init(&f, 1000 * S);
    struct rl_bucket *b = NULL;
    pthread_t th[4];
    void *got;
    long total = 0;
    int i;

    cr_assert_eq(rl_bucket_new(1, 100, &c, &b, NULL), KERR_OK);
    for (i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, hammer, b), 0);
    for (i = 0; i < 4; i++) {
        pthread_join(th[i], &got);
        total += (long)got;
    }
    cr_assert_eq(total, 100);
    rl_bucket_free(b);
}

Test(ratelimit, expo_doubles_from_base_to_the_cap)
{
    struct rl_expo *e = NULL;
    int64_t want = 5 * MS;
    int i;

    cr_assert_eq(rl_expo_new(0, 0, &e, NULL), KERR_OK); /* client-go defaults */
    for (i = 0; i < 18; i++) {
        cr_assert_eq(rl_expo_when(e, "ns/a"), want, "failure %d", i);
        want *= 2;
    }
    /* 5 ms * 2^18 = 1310.72 s > 1000 s */
    cr_assert_eq(rl_expo_when(e, "ns/a"), 1000 * S);
    for (i = 0; i < 100; i++)
        cr_assert_eq(rl_expo_when(e, "ns/a"), 1000 * S);
    cr_assert_eq(rl_expo_retries(e, "ns/a"), 119);
    rl_expo_free(e);
}

Test(ratelimit, expo_keys_are_independent_and_forget_resets)
{
    struct rl_expo *e = NULL;

    cr_assert_eq(rl_expo_new(1 * MS, 10 * MS, &e, NULL), KERR_OK);
    cr_assert_eq(rl_expo_when(e, "a"), 1 * MS);
    cr_assert_eq(rl_expo_when(e, "a"), 2 * MS);
    cr_assert_eq(rl_expo_when(e, "b"), 1 * MS);
    cr_assert_eq(rl_expo_when(e, "a"), 4 * MS);
    cr_assert_eq(rl_expo_when(e, "a"), 8 * MS);
    cr_assert_eq(rl_expo_when(e, "a"), 10 * MS);
    cr_assert_eq(rl_expo_retries(e, "a"), 5);
    cr_assert_eq(rl_expo_retries(e, "b"), 1);
    cr_assert_eq(rl_expo_retries(e, "c"), 0);
    cr_assert_eq(rl_expo_len(e), 2);
    rl_expo_forget(e, "a");
    rl_expo_forget(e, "unknown");
    cr_assert_eq(rl_expo_retries(e, "a"), 0);
    cr_assert_eq(rl_expo_len(e), 1);
    cr_assert_eq(rl_expo_when(e, "a"), 1 * MS);
    rl_expo_free(e);
}

Test(ratelimit, expo_rejects_base_above_max)
{
    struct rl_expo *e = (struct rl_expo *)1;

    cr_assert_eq(rl_expo_new(2 * S, 1 * S, &e, NULL), KERR_INVAL);
    cr_assert_null(e);
    rl_expo_free(NULL);
}

Test(ratelimit, expo_tracks_many_keys_across_table_growth)
{
    struct rl_expo *e = NULL;
    char key[32];
    int i;

    cr_assert_eq(rl_expo_new(1 * MS, 1 * S, &e, NULL), KERR_OK);
    for (i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "ns/obj-%d", i);
        cr_assert_eq(rl_expo_when(e, key), 1 * MS);
        if (i % 2)
            cr_assert_eq(rl_expo_when(e, key), 2 * MS);
    }
    cr_assert_eq(rl_expo_len(e), 1000);
    for (i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "ns/obj-%d", i);
        cr_assert_eq(rl_expo_retries(e, key), i % 2 ? 2 : 1, "%s", key);
        if (i % 3 == 0)
            rl_expo_forget(e, key);
    }
    cr_assert_eq(rl_expo_len(e), 1000 - 334);
    rl_expo_free(e);
}
