/* Tests of common/wqpool: worker threads driving a process callback from a work queue. */
#include "common/wqpool.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/workqueue.h"
#include "tests/support/testutil.h"
#include "tests/support/wqfix.h"

#define NKEYS 200

struct tally {
    atomic_int calls[NKEYS];
    atomic_int in_flight[NKEYS];
    atomic_int total;
    atomic_int overlap;
};

static enum wqpool_result count_once(void *arg, const char *key, long *after_ms)
{
    struct tally *t = arg;
    int i = (int)strtol(key + 1, NULL, 10);

    (void)after_ms;
    if (atomic_fetch_add(&t->in_flight[i], 1) != 0)
        atomic_store(&t->overlap, 1);
    atomic_fetch_add(&t->calls[i], 1);
    atomic_fetch_sub(&t->in_flight[i], 1);
    atomic_fetch_add(&t->total, 1);
    return WQPOOL_RESULT_OK;
}

Test(wqpool, workers_process_each_key_exactly_once)
{
    struct wq *q = wqfix_new(NULL);
    struct wqpool *w = NULL;
    struct tally *t = calloc(1, sizeof(*t));
    struct wq_stats st;
    char key[16];
    int i;

    cr_assert_not_null(t);
    cr_assert_eq(wqpool_new(q, 4, count_once, t, &w, NULL), KERR_OK);
    for (i = 0; i < NKEYS; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        cr_assert_eq(wq_add(q, key), KERR_OK);
    }
    cr_assert(testutil_await_count(&t->total, NKEYS, 10000), "only %d processed",
              atomic_load(&t->total));
    wqpool_free(w);
    for (i = 0; i < NKEYS; i++)
        cr_assert_eq(atomic_load(&t->calls[i]), 1, "key %d processed %d times", i,
                     atomic_load(&t->calls[i]));
    wq_get_stats(q, &st);
    cr_assert_eq(st.adds, NKEYS);
    cr_assert_eq(st.work_count, NKEYS);
    cr_assert_eq(st.processing, 0);
    wq_free(q);
    free(t);
}

static enum wqpool_result slow_single(void *arg, const char *key, long *after_ms)
{
    struct tally *t = arg;

    (void)key;
    (void)after_ms;
    if (atomic_fetch_add(&t->in_flight[0], 1) != 0)
        atomic_store(&t->overlap, 1);
    testutil_pause_ms(2);
    atomic_fetch_sub(&t->in_flight[0], 1);
    atomic_fetch_add(&t->total, 1);
    return WQPOOL_RESULT_OK;
}

Test(wqpool, one_key_is_never_processed_concurrently)
{
    struct wq *q = wqfix_new(NULL);
    struct wqpool *w = NULL;
    struct tally *t = calloc(1, sizeof(*t));
    int i;

    cr_assert_not_null(t);
    cr_assert_eq(wqpool_new(q, 4, slow_single, t, &w, NULL), KERR_OK);
    for (i = 0; i < 100; i++) {
        cr_assert_eq(wq_add(q, "same"), KERR_OK);
        if (i % 10 == 0)
            testutil_pause_ms(1);
    }
    cr_assert(testutil_await_count(&t->total, 2, 30000));
    wqpool_free(w);
    cr_assert_eq(atomic_load(&t->overlap), 0, "a key ran in two workers at once");
    cr_assert(atomic_load(&t->total) < 100, "adds during processing must coalesce");
    wq_free(q);
    free(t);
}

struct requeue_state {
    atomic_int err_calls, req_calls, after_calls, total;
    long long after_first, after_second;
};

static enum wqpool_result requeue_paths(void *arg, const char *key, long *after_ms)
{
    struct requeue_state *s = arg;
    enum wqpool_result r = WQPOOL_RESULT_OK;
    int n;

    if (strcmp(key, "err") == 0) {
        n = atomic_fetch_add(&s->err_calls, 1);
        r = n < 2 ? WQPOOL_RESULT_ERROR : WQPOOL_RESULT_OK;
    } else if (strcmp(key, "req") == 0) {
        n = atomic_fetch_add(&s->req_calls, 1);
        r = n < 1 ? WQPOOL_RESULT_REQUEUE : WQPOOL_RESULT_OK;
    } else {
        n = atomic_fetch_add(&s->after_calls, 1);
        if (n == 0) {
            s->after_first = ktime_mono_ms();
            *after_ms = 60;
            r = WQPOOL_RESULT_REQUEUE_AFTER;
        } else {
            s->after_second = ktime_mono_ms();
        }
    }
    atomic_fetch_add(&s->total, 1);
    return r;
}

Test(wqpool, requeue_paths_follow_the_result)
{
    struct wq_opts o = { .base_delay_ms = 5, .qps = -1 };
    struct wq *q = wqfix_new(&o);
    struct wqpool *w = NULL;
    struct requeue_state s = { 0 };
    struct wq_stats st;

    cr_assert_eq(wqpool_new(q, 2, requeue_paths, &s, &w, NULL), KERR_OK);
    cr_assert_eq(wq_add(q, "err"), KERR_OK);
    cr_assert_eq(wq_add(q, "req"), KERR_OK);
    cr_assert_eq(wq_add(q, "after"), KERR_OK);
    cr_assert(testutil_await_count(&s.total, 3 + 2 + 1 + 1, 30000), "total %d",
              atomic_load(&s.total));
    wqpool_free(w);
    cr_assert_eq(atomic_load(&s.err_calls), 3);
    cr_assert_eq(atomic_load(&s.req_calls), 2);
    cr_assert_eq(atomic_load(&s.after_calls), 2);
    cr_assert(s.after_second - s.after_first >= 59, "requeue-after came after %lld ms",
              s.after_second - s.after_first);
    cr_assert_eq(wq_num_requeues(q, "err"), 0, "success must forget the backoff");
    cr_assert_eq(wq_num_requeues(q, "req"), 0);
    wq_get_stats(q, &st);
    cr_assert_eq(st.retries, 4, "2 errors + 1 requeue + 1 requeue-after");
    wq_free(q);
}

static enum wqpool_result never(void *arg, const char *key, long *after_ms)
{
    (void)arg;
    (void)key;
    (void)after_ms;
    return WQPOOL_RESULT_OK;
}

Test(wqpool, rejects_bad_arguments)
{
    struct wq *q = wqfix_new(NULL);
    struct wqpool *w = (struct wqpool *)1;
    struct kerr_info err;

    cr_assert_eq(wqpool_new(q, 0, never, NULL, &w, &err), KERR_INVAL);
    cr_assert_null(w, "*out is cleared on failure");
    cr_assert_eq(wqpool_new(q, 2, NULL, NULL, &w, &err), KERR_INVAL);
    cr_assert_eq(wq_is_shutting_down(q), 0, "a refused pool leaves the queue alone");
    wqpool_free(NULL);
    wq_free(q);
}

Test(wqpool, free_shuts_the_queue_down_and_returns_with_idle_workers)
{
    struct wq *q = wqfix_new(NULL);
    struct wqpool *w = NULL;

    cr_assert_eq(wqpool_new(q, 3, never, NULL, &w, NULL), KERR_OK);
    testutil_pause_ms(
        10); /* let the workers block in wq_get; the result is the same if they have not */
    wqpool_free(w);
    cr_assert(wq_is_shutting_down(q));
    cr_assert_eq(wq_add(q, "late"), KERR_CLOSED);
    wq_free(q);
}

/* Fails every time but asks to be polled again after 50 ms (an Etcd key whose
 * status-backup step fails while hibernation polls): counts the calls. */
static enum wqpool_result fail_but_poll(void *arg, const char *key, long *after_ms)
{
    struct tally *t = arg;

    (void)key;
    atomic_fetch_add(&t->total, 1);
    *after_ms = 50;
    return WQPOOL_RESULT_ERROR;
}

Test(wqpool, an_error_keeps_the_requeue_another_step_asked_for)
{
    /* A backoff that starts at 10 s: without the requeue the key would not come back. */
    struct wq_opts o = { .base_delay_ms = 10000, .max_delay_ms = 1000000 };
    struct wq *q = wqfix_new(&o);
    struct wqpool *w = NULL;
    struct tally *t = calloc(1, sizeof(*t));

    cr_assert_not_null(t);
    cr_assert_eq(wqpool_new(q, 1, fail_but_poll, t, &w, NULL), KERR_OK);
    cr_assert_eq(wq_add(q, "etcd/ns/a"), KERR_OK);
    cr_assert(testutil_await_count(&t->total, 4, 30000),
              "the failing key came back %d times in 5 s; it asked for every 50 ms",
              atomic_load(&t->total));
    cr_assert_geq(wq_num_requeues(q, "etcd/ns/a"), 3, "the failures still count for the backoff");
    wqpool_free(w);
    wq_free(q);
    free(t);
}

/* A step that paces its own retry (a hibernation underway) fails four times, then the
 * Etcd's GET fails once: counts the calls and what the queue counted at the last. */
struct own_retry {
    struct wq *q;
    atomic_int total;
    int requeues_at_last;
};

static enum wqpool_result fail_own_then_plain(void *arg, const char *key, long *after_ms)
{
    struct own_retry *s = arg;
    int n = atomic_load(&s->total);

    if (n == 5)
        s->requeues_at_last = wq_num_requeues(s->q, key);
    atomic_fetch_add(&s->total, 1);
    if (n < 4) {
        *after_ms = 20;
        return WQPOOL_RESULT_ERROR_AFTER;
    }
    return n == 4 ? WQPOOL_RESULT_ERROR : WQPOOL_RESULT_OK;
}

Test(wqpool, an_error_that_paces_its_retry_forgets_the_backoff)
{
    struct wq_opts o = { .base_delay_ms = 5, .max_delay_ms = 1000000, .qps = -1 };
    struct own_retry *s = calloc(1, sizeof(*s));
    struct wqpool *w = NULL;

    cr_assert_not_null(s);
    s->q = wqfix_new(&o);
    cr_assert_eq(wqpool_new(s->q, 1, fail_own_then_plain, s, &w, NULL), KERR_OK);
    cr_assert_eq(wq_add(s->q, "etcd/ns/a"), KERR_OK);
    cr_assert(testutil_await_count(&s->total, 6, 30000), "%d calls", atomic_load(&s->total));
    wqpool_free(w);
    cr_assert_eq(s->requeues_at_last, 1,
                 "four paced failures and one plain one: only the plain one counts, not %d",
                 s->requeues_at_last);
    wq_free(s->q);
    free(s);
}
