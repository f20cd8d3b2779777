#include "common/ktime.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

Test(ktime, format_and_parse)
{
    char t[KTIME_LEN + 1], mt[KTIME_MICROTIME_LEN + 1];
    struct timespec ts = { .tv_sec = 1700000000, .tv_nsec = 123456789 }, got;
    struct kerr_info err;

    cr_assert_eq(ktime_format(1700000000, t), KERR_OK);
    cr_assert_str_eq(t, "2023-11-14T22:13:20Z");
    cr_assert_eq(ktime_microtime_format(&ts, mt), KERR_OK);
    cr_assert_str_eq(mt, "2023-11-14T22:13:20.123456Z");
    cr_assert_eq(ktime_parse(mt, &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 1700000000);
    cr_assert_eq(got.tv_nsec, 123456000);
    cr_assert_eq(ktime_parse("2023-11-14T23:13:20.5+01:00", &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 1700000000);
    cr_assert_eq(got.tv_nsec, 500000000);
    cr_assert_eq(ktime_parse("2024-02-29T00:00:00-00:30", &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 1709166600);
    ts.tv_nsec = 1000000000;
    cr_assert_eq(ktime_microtime_format(&ts, mt), KERR_INVAL);
    cr_assert_eq(ktime_microtime_now(mt), KERR_OK);
    cr_assert_eq(ktime_parse(mt, &got, &err), KERR_OK);
    cr_assert_gt(got.tv_sec, 1700000000);
}

Test(ktime, rejects_malformed)
{
    static const char *const bad[] = {
        "2023-11-14 22:13:20Z",     "2023-11-14T22:13:20",
        "2023-02-29T00:00:00Z",     "2023-11-14T24:00:00Z",
        "2023-11-14T22:13:20.Z",    "2023-11-14T22:13:20.1234567890Z",
        "2023-11-14T22:13:20+0100", "2023-11-14T22:13:20Zjunk",
        "23-11-14T22:13:20Z",       ""
    };
    struct timespec got;
    struct kerr_info err;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(ktime_parse(bad[i], &got, &err), KERR_PARSE, "%s", bad[i]);
    cr_assert_eq(ktime_parse(NULL, &got, &err), KERR_PARSE);
}

Test(ktime, leap_years_epoch_and_cleared_output)
{
    char t[KTIME_LEN + 1];
    struct timespec got = { .tv_sec = 5, .tv_nsec = 5 };
    struct kerr_info err;

    cr_assert_eq(ktime_format(0, t), KERR_OK);
    cr_assert_str_eq(t, "1970-01-01T00:00:00Z");
    cr_assert_eq(ktime_parse("2000-02-29T12:00:00Z", &got, &err), KERR_OK);
    cr_assert_eq(got.tv_sec, 951825600);
    cr_assert_eq(ktime_parse("1900-02-29T00:00:00Z", &got, &err), KERR_PARSE);
    cr_assert_eq(got.tv_sec, 0);
    cr_assert_eq(got.tv_nsec, 0);
    cr_assert_str_eq(err.msg, "ktime: \"1900-02-29T00:00:00Z\" is not an RFC 3339 time");
}

Test(ktime, monotonic_now_in_ns_and_ms)
{
    int64_t ns0 = ktime_mono_ns(), ms = ktime_mono_ms(), ns1 = ktime_mono_ns();
    struct timespec ts = ktime_ts_of_ns(3 * KTIME_NS_PER_SEC + 250);

    cr_assert_geq(ns1, ns0);
    cr_assert_geq(ms, ns0 / KTIME_NS_PER_MS);
    cr_assert_leq(ms, ns1 / KTIME_NS_PER_MS);
    cr_assert_eq(ts.tv_sec, 3);
    cr_assert_eq(ts.tv_nsec, 250);
}

/* ms between now on clock and *ts (negative when *ts has passed). */
static int64_t ms_until(const struct timespec *ts, clockid_t clock)
{
    struct timespec now;

    clock_gettime(clock, &now);
    return ((int64_t)(ts->tv_sec - now.tv_sec) * KTIME_NS_PER_SEC + (ts->tv_nsec - now.tv_nsec)) /
           KTIME_NS_PER_MS;
}

Test(ktime, deadline_after_on_either_clock)
{
    struct timespec a, b, past = { 0, 0 };
    int64_t left;

    ktime_deadline_after(&a, 2999, CLOCK_MONOTONIC);
    left = ms_until(&a, CLOCK_MONOTONIC);
    cr_assert(left > 2000 && left <= 2999, "%lld", (long long)left);
    cr_assert(a.tv_nsec >= 0 && a.tv_nsec < KTIME_NS_PER_SEC);
    ktime_deadline_after(&b, 1500, CLOCK_REALTIME);
    left = ms_until(&b, CLOCK_REALTIME);
    cr_assert(left > 500 && left <= 1500, "%lld", (long long)left);
    ktime_deadline_after(&b, -5000, CLOCK_MONOTONIC);
    cr_assert_leq(ms_until(&b, CLOCK_MONOTONIC), 0);
    cr_assert_gt(ms_until(&b, CLOCK_MONOTONIC), -1000);
    cr_assert(ktime_before(&b, &a));
    cr_assert_not(ktime_before(&a, &b));
    cr_assert_not(ktime_before(&a, &a));
    cr_assert(ktime_before(&past, &b));
}

Test(ktime, deadline_ends_a_monotonic_condition_wait)
{
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_condattr_t ca;
    pthread_cond_t cv;
    struct timespec dl, start;
    int rc;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&cv, &ca);
    clock_gettime(CLOCK_MONOTONIC, &start);
    ktime_deadline_after(&dl, 60, CLOCK_MONOTONIC);
    pthread_mutex_lock(&mu);
    do
        rc = pthread_cond_timedwait(&cv, &mu, &dl);
    while (rc == 0);
    pthread_mutex_unlock(&mu);
    cr_assert_eq(rc, ETIMEDOUT);
    cr_assert_geq(ktime_elapsed_ms(&start), 60);
    /* not a timing figure: a deadline on the wrong clock would be decades away */
    cr_assert_lt(ktime_elapsed_ms(&start), 60000);
    pthread_cond_destroy(&cv);
    pthread_condattr_destroy(&ca);
}

Test(ktime, elapsed_ms_and_sleep)
{
    struct timespec since;
    int64_t t0;
    long e;

    clock_gettime(CLOCK_MONOTONIC, &since);
    since.tv_sec -= 3;
    e = ktime_elapsed_ms(&since);
    /* milliseconds, not seconds or microseconds; a stalled thread only adds to it */
    cr_assert(e >= 3000 && e < 60000, "%ld", e);
    t0 = ktime_mono_ns();
    ktime_sleep_ns(30 * KTIME_NS_PER_MS);
    cr_assert_geq(ktime_mono_ns() - t0, 30 * KTIME_NS_PER_MS);
    t0 = ktime_mono_ns();
    ktime_sleep_ns(-1);
    ktime_sleep_ns(0);
    /* returns rather than sleeping for ever; how soon is the scheduler's business */
    cr_assert_lt(ktime_mono_ns() - t0, 60000 * KTIME_NS_PER_MS);
}

/* A cancel check that says yes on its n-th call; counts its calls. */
struct cancel_after {
    int calls;
    int n;
};

static int cancel_check(void *arg)
{
    struct cancel_after *c = arg;

    return ++c->calls >= c->n;
}

Test(ktime, sleep_cancellable)
{
    struct cancel_after never = { 0, 1 << 30 }, third = { 0, 3 }, first = { 0, 1 };
    int64_t t0 = ktime_mono_ns();

    cr_assert_eq(ktime_sleep_cancellable(45, 10, cancel_check, &never), 0);
    cr_assert_geq(ktime_mono_ns() - t0, 45 * KTIME_NS_PER_MS);
    /*
     * One check before the first slice and one at the end. How many slices
     * fit in 45 ms depends on how long each nanosleep overslept (a loaded
     * machine oversleeps a 10 ms slice by far more): that slices are cut at
     * all is what the endless sleep below proves.
     */
    cr_assert_geq(never.calls, 2);
    t0 = ktime_mono_ns();
    cr_assert_eq(ktime_sleep_cancellable(-1, 5, cancel_check, &third), -1);
    cr_assert_eq(third.calls, 3);
    cr_assert_lt(ktime_mono_ns() - t0, 60000 * KTIME_NS_PER_MS);
    cr_assert_eq(ktime_sleep_cancellable(10000, 50, cancel_check, &first), -1);
    cr_assert_eq(first.calls, 1);
    never.calls = 0;
    cr_assert_eq(ktime_sleep_cancellable(0, 50, cancel_check, &never), 0);
    cr_assert_eq(never.calls, 1);
}
