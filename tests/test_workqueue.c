#include "common/workqueue.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/support/testutil.h"
#include "tests/support/wqfix.h"

/*
 * Scheduling on a shared, sanitized build can stall a thread for a second:
 * upper bounds only prove that a delay ends, the lower bounds carry the timing.
 */
#define SLACK_MS 2000

/*
 * Get a key and check it; returns the ms since t0. Delays are scheduled from
 * the add, so a lower bound is only sound against a t0 taken before the add.
 */
static long long get_since(struct wq *q, const char *want, long long t0)
{
    char *key = NULL;

    cr_assert_eq(wq_get(q, &key), KERR_OK);
    cr_assert_str_eq(key, want);
    wq_done(q, key);
    free(key);
    return ktime_mono_ms() - t0;
}

/* Get a key and check it; returns the ms the get blocked. */
static long long get_expect(struct wq *q, const char *want)
{
    return get_since(q, want, ktime_mono_ms());
}

Test(workqueue, add_deduplicates)
{
    struct wq *q = wqfix_new(NULL);
    struct wq_stats st;

    cr_assert_eq(wq_add(q, "ns/a"), KERR_OK);
    cr_assert_eq(wq_add(q, "ns/a"), KERR_OK);
    cr_assert_eq(wq_add(q, "ns/b"), KERR_OK);
    cr_assert_eq(wq_len(q), 2);
    get_expect(q, "ns/a");
    get_expect(q, "ns/b");
    cr_assert_eq(wq_len(q), 0);
    wq_get_stats(q, &st);
    cr_assert_eq(st.adds, 2);
    cr_assert_eq(st.work_count, 2);
    wq_free(q);
}

Test(workqueue, add_while_processing_requeues_after_done)
{
    struct wq *q = wqfix_new(NULL);
    char *key = NULL;
    struct wq_stats st;

    cr_assert_eq(wq_add(q, "k"), KERR_OK);
    cr_assert_eq(wq_get(q, &key), KERR_OK);
    cr_assert_eq(wq_add(q, "k"), KERR_OK);
    cr_assert_eq(wq_add(q, "k"), KERR_OK);
    cr_assert_eq(wq_len(q), 0, "a key in flight must not be handed out again");
    wq_get_stats(q, &st);
    cr_assert_eq(st.processing, 1);
    wq_done(q, key);
    free(key);
    cr_assert_eq(wq_len(q), 1);
    get_expect(q, "k");
    cr_assert_eq(wq_len(q), 0);
    wq_done(q, "k"); /* not in flight: ignored */
    cr_assert_eq(wq_len(q), 0);
    wq_free(q);
}

Test(workqueue, rejects_bad_keys_and_options)
{
    struct wq *q = wqfix_new(NULL);
    struct wq *bad = NULL;
    char long_key[WQ_KEY_MAX + 2];
    struct wq_opts o = { .base_delay_ms = 100, .max_delay_ms = 10 };
    struct kerr_info err;

    memset(long_key, 'x', sizeof(long_key) - 1);
    long_key[sizeof(long_key) - 1] = '\0';
    cr_assert_eq(wq_add(q, ""), KERR_INVAL);
    cr_assert_eq(wq_add(q, NULL), KERR_INVAL);
    cr_assert_eq(wq_add(q, long_key), KERR_INVAL);
    cr_assert_eq(wq_add_after(q, long_key, 5), KERR_INVAL);
    cr_assert_eq(wq_new(&o, &bad, &err), KERR_INVAL);
    cr_assert_null(bad);
    o.max_delay_ms = 0;
    o.burst = -1;
    cr_assert_eq(wq_new(&o, &bad, &err), KERR_INVAL);
    wq_free(q);
}

Test(workqueue, add_after_orders_by_ready_time)
{
    struct wq *q = wqfix_new(NULL);
    long long t0 = ktime_mono_ms(), t;
    struct wq_stats st;

    cr_assert_eq(wq_add_after(q, "c", 150), KERR_OK);
    cr_assert_eq(wq_add_after(q, "a", 50), KERR_OK);
    cr_assert_eq(wq_add_after(q, "b", 100), KERR_OK);
    cr_assert_eq(wq_len(q), 0);
    wq_get_stats(q, &st);
    cr_assert_eq(st.delayed, 3);
    get_expect(q, "a");
    t = ktime_mono_ms() - t0;
    cr_assert(t >= 50 && t < 50 + SLACK_MS, "a after %lld ms", t);
    get_expect(q, "b");
    t = ktime_mono_ms() - t0;
    cr_assert(t >= 100 && t < 100 + SLACK_MS, "b after %lld ms", t);
    get_expect(q, "c");
    t = ktime_mono_ms() - t0;
    cr_assert(t >= 150 && t < 150 + SLACK_MS, "c after %lld ms", t);
    wq_free(q);
}

Test(workqueue, add_after_keeps_the_earlier_time)
{
    struct wq *q = wqfix_new(NULL);
    long long t0, t;

    t0 = ktime_mono_ms();
    cr_assert_eq(wq_add_after(q, "x", 5000), KERR_OK);
    cr_assert_eq(wq_add_after(q, "x", 40), KERR_OK);
    t = get_since(q, "x", t0);
    cr_assert(t >= 39 && t < 40 + SLACK_MS, "earlier time must win: %lld ms", t);
    cr_assert_eq(wq_add_after(q, "y", 40), KERR_OK);
    cr_assert_eq(wq_add_after(q, "y", 5000), KERR_OK);
    t = get_expect(q, "y");
    cr_assert(t < 40 + SLACK_MS, "a later time must not postpone: %lld ms", t);
    cr_assert_eq(wq_add_after(q, "z", 0), KERR_OK);
    cr_assert_eq(wq_len(q), 1, "a zero delay queues at once");
    wq_free(q);
}

Test(workqueue, delayed_add_of_queued_key_is_processed_once)
{
    struct wq *q = wqfix_new(NULL);
    struct wq_stats st;

    cr_assert_eq(wq_add(q, "k"), KERR_OK);
    cr_assert_eq(wq_add_after(q, "k", 20), KERR_OK);
    testutil_pause_ms(40);
    cr_assert_eq(wq_len(q), 1);
    get_expect(q, "k");
    wq_get_stats(q, &st);
    cr_assert_eq(st.adds, 1);
    cr_assert_eq(st.retries, 1);
    cr_assert_eq(st.delayed, 0);
    wq_free(q);
}

Test(workqueue, rate_limited_backoff_grows_and_forget_resets)
{
    struct wq_opts o = { .base_delay_ms = 20, .qps = -1 };
    struct wq *q = wqfix_new(&o);
    long long t0, t[6];
    int i;

    /* Six failures: without forget the next delay would be 20 ms << 6 = 1280 ms. */
    for (i = 0; i < 6; i++) {
        t0 = ktime_mono_ms();
        cr_assert_eq(wq_add_rate_limited(q, "k"), KERR_OK);
        t[i] = get_since(q, "k", t0);
        cr_assert(t[i] >= (20LL << i) - 1, "try %d waited %lld ms", i, t[i]);
    }
    cr_assert(t[5] > t[0] && t[5] >= 600, "backoff must grow: %lld then %lld", t[0], t[5]);
    cr_assert_eq(wq_num_requeues(q, "k"), 6);
    wq_forget(q, "k");
    cr_assert_eq(wq_num_requeues(q, "k"), 0);
    t0 = ktime_mono_ms();
    cr_assert_eq(wq_add_rate_limited(q, "k"), KERR_OK);
    cr_assert_eq(wq_num_requeues(q, "k"), 1);
    t[0] = get_since(q, "k", t0);
    cr_assert(t[0] >= 19 && t[0] < 1200, "after forget the delay starts over: %lld", t[0]);
    wq_free(q);
}

Test(workqueue, backoff_is_capped)
{
    struct wq_opts o = { .base_delay_ms = 10, .max_delay_ms = 30, .qps = -1 };
    struct wq *q = wqfix_new(&o);
    long long t0, t = 0;
    int i;

    /* Uncapped, the twelfth delay would be 10 ms << 11, about 20 s. */
    for (i = 0; i < 12; i++) {
        t0 = ktime_mono_ms();
        cr_assert_eq(wq_add_rate_limited(q, "k"), KERR_OK);
        t = get_since(q, "k", t0);
    }
    cr_assert(t >= 29 && t < 30 + SLACK_MS, "capped delay was %lld ms", t);
    wq_free(q);
}

Test(workqueue, token_bucket_limits_distinct_keys)
{
    struct wq_opts o = { .base_delay_ms = 1, .max_delay_ms = 1, .qps = 20, .burst = 2 };
    struct wq *q = wqfix_new(&o);
    long long t0 = ktime_mono_ms(), t;
    char key[8];
    int i;

    for (i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        cr_assert_eq(wq_add_rate_limited(q, key), KERR_OK);
    }
    for (i = 0; i < 4; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        get_expect(q, key);
    }
    t = ktime_mono_ms() - t0;
    /* two tokens at once, then one per 50 ms: the fourth key is due after 100 ms */
    cr_assert(t >= 95 && t < 100 + SLACK_MS, "four keys took %lld ms", t);
    wq_free(q);
}

struct getter {
    pthread_t th;
    struct wq *q;
    atomic_int *started;
    enum kerr rc;
};

static void *getter_main(void *p)
{
    struct getter *g = p;
    char *key = NULL;

    atomic_fetch_add(g->started, 1);
    g->rc = wq_get(g->q, &key);
    free(key);
    return NULL;
}

Test(workqueue, shutdown_wakes_all_getters_and_refuses_adds)
{
    struct wq *q = wqfix_new(NULL);
    struct getter g[3];
    atomic_int started = 0;
    int i;

    cr_assert_eq(wq_add_after(q, "later", 10000), KERR_OK);
    for (i = 0; i < 3; i++) {
        g[i].q = q;
        g[i].started = &started;
        g[i].rc = KERR_OK;
        cr_assert_eq(pthread_create(&g[i].th, NULL, getter_main, &g[i]), 0);
    }
    cr_assert(testutil_await_count(&started, 3, 30000));
    testutil_pause_ms(20); /* let them block; the result is the same if they have not yet */
    wq_shutdown(q);
    for (i = 0; i < 3; i++) {
        pthread_join(g[i].th, NULL);
        cr_assert_eq(g[i].rc, KERR_CLOSED);
    }
    cr_assert(wq_is_shutting_down(q));
    cr_assert_eq(wq_add(q, "x"), KERR_CLOSED);
    cr_assert_eq(wq_add_after(q, "x", 10), KERR_CLOSED);
    cr_assert_eq(wq_add_rate_limited(q, "x"), KERR_CLOSED);
    cr_assert_eq(wq_len(q), 0);
    wq_free(q);
}

struct drainer {
    struct wq *q;
    atomic_int finished;
    enum kerr rc;
};

static void *drainer_main(void *p)
{
    struct drainer *d = p;

    d->rc = wq_shutdown_drain(d->q, -1);
    atomic_store(&d->finished, 1);
    return NULL;
}

Test(workqueue, shutdown_drain_waits_for_in_flight_keys)
{
    struct drainer d = { .q = wqfix_new(NULL), .rc = KERR_INTERNAL };
    long long end = ktime_mono_ms() + 5000;
    char *key = NULL;
    pthread_t th;

    cr_assert_eq(wq_add(d.q, "k"), KERR_OK);
    cr_assert_eq(wq_get(d.q, &key), KERR_OK);
    cr_assert_eq(wq_shutdown_drain(d.q, 30), KERR_TIMEOUT);
    cr_assert_eq(pthread_create(&th, NULL, drainer_main, &d), 0);
    while (!wq_is_shutting_down(d.q) && ktime_mono_ms() < end)
        testutil_pause_ms(1);
    testutil_pause_ms(20);
    cr_assert_eq(atomic_load(&d.finished), 0, "drain returned with a key in flight");
    wq_done(d.q, key);
    free(key);
    pthread_join(th, NULL);
    cr_assert_eq(d.rc, KERR_OK);
    cr_assert_eq(wq_shutdown_drain(d.q, 0), KERR_OK);
    wq_free(d.q);
}

struct observed {
    atomic_int queue_wait, work;
};

static void observe(void *arg, enum wq_observation what, double seconds)
{
    struct observed *o = arg;

    cr_assert(seconds >= 0);
    atomic_fetch_add(what == WQ_OBS_WORK ? &o->work : &o->queue_wait, 1);
}

Test(workqueue, stats_and_observer)
{
    struct observed seen = { 0 };
    struct wq_opts o = { .name = "etcd", .observe = observe, .observe_arg = &seen };
    struct wq *q = wqfix_new(&o);
    struct wq_stats st;
    char *key = NULL;

    cr_assert_eq(wq_add(q, "a"), KERR_OK);
    cr_assert_eq(wq_add(q, "b"), KERR_OK);
    cr_assert_eq(wq_add_after(q, "c", 10000), KERR_OK);
    cr_assert_eq(wq_get(q, &key), KERR_OK);
    testutil_pause_ms(20);
    wq_get_stats(q, &st);
    cr_assert_eq(st.depth, 1);
    cr_assert_eq(st.delayed, 1);
    cr_assert_eq(st.processing, 1);
    cr_assert(st.longest_running_seconds >= 0.019, "%f", st.longest_running_seconds);
    cr_assert(st.unfinished_work_seconds >= st.longest_running_seconds);
    wq_done(q, key);
    free(key);
    wq_get_stats(q, &st);
    cr_assert(st.work_seconds >= 0.019);
    cr_assert_eq(st.longest_running_seconds, 0);
    cr_assert_eq(atomic_load(&seen.queue_wait), 1);
    cr_assert_eq(atomic_load(&seen.work), 1);
    wq_free(q);
}
