/*
 * Tests of common/k8s bounds on one call, against tests/support/mockapi: a
 * Retry-After too large for milliseconds is clamped when it is read (it
 * overflowed), and a call with a deadline (k8s_get_until, k8s_list_opts
 * deadline_ms) neither waits for a retry nor runs an attempt past it.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "common/k8s.h"
#include "common/ktime.h"
#include "tests/support/mockapi.h"
#include "tests/support/mockfix.h"

static const struct k8s_resource PODS = { "", "v1", "pods", 1 };

#define POD_PATH "/api/v1/namespaces/default/pods/p"
#define THROTTLED \
    "{\"kind\":\"Status\",\"code\":429,\"reason\":\"TooManyRequests\",\"message\":\"m\"}"

static void throttle(struct mockapi *m, const char *retry_after)
{
    mockapi_add(m, &(struct mockapi_spec){ .method = "GET",
                                           .target = POD_PATH,
                                           .status = 429,
                                           .headers = retry_after,
                                           .body = THROTTLED,
                                           .times = -1 });
}

Test(k8s_deadline, a_huge_retry_after_waits_the_capped_delay)
{
    static const char *const huge[] = { "Retry-After: 9223372036854775807",
                                        "Retry-After: 9223372036854776",
                                        "Retry-After: 18446744073709551" };
    struct k8s_client_opts o = { .max_retries = 1, .max_retry_delay_ms = 300 };
    struct mockapi *m;
    struct k8s_client *c;
    struct kerr_info err;
    cJSON *obj = NULL;
    int64_t t0, ms;
    size_t i;

    for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
        mockfix_start(&m, &c, "t", &o);
        throttle(m, huge[i]);
        t0 = ktime_mono_ms();
        cr_expect_eq(k8s_get(c, &PODS, "default", "p", NULL, &obj, &err), KERR_TOOMANY);
        ms = ktime_mono_ms() - t0;
        cr_expect_eq(mockapi_request_count(m), 2, "%s: one retry", huge[i]);
        cr_expect_geq(ms, 280, "%s: waited %lld ms, not the 300 ms cap", huge[i], (long long)ms);
        cr_expect_lt(ms, 20000, "%s: an uncapped wait would not end", huge[i]);
        mockfix_stop(m, c);
    }
}

Test(k8s_deadline, no_retry_wait_runs_past_the_deadline)
{
    struct mockapi *m;
    struct k8s_client *c;
    struct kerr_info err;
    struct k8s_list_opts lo = { 0 };
    cJSON *obj = NULL;
    int64_t t0, ms;

    mockfix_start(&m, &c, "t", NULL); /* 5 retries, up to 10 s each */
    throttle(m, "Retry-After: 10");   /* the longest wait the client honours */
    t0 = ktime_mono_ms();
    cr_expect_eq(k8s_get_until(c, &PODS, "default", "p", NULL, t0 + 500, &obj, &err), KERR_TOOMANY,
                 "%s", err.msg);
    ms = ktime_mono_ms() - t0;
    /* waiting for the retry would take 10 s; the bound is a loaded machine's room below that */
    cr_expect_lt(ms, 8000, "a GET with 500 ms left took %lld ms", (long long)ms);
    cr_expect_eq(mockapi_request_count(m), 1, "a retry 10 s later would end past the deadline");
    mockapi_add(m, &(struct mockapi_spec){ .method = "GET",
                                           .target = "/api/v1/namespaces/default/pods",
                                           .status = 429,
                                           .headers = "Retry-After: 10",
                                           .body = THROTTLED,
                                           .times = -1 });
    lo.deadline_ms = ktime_mono_ms() + 500;
    t0 = ktime_mono_ms();
    cr_expect_eq(k8s_list(c, &PODS, "default", &lo, &obj, &err), KERR_TOOMANY, "%s", err.msg);
    cr_expect_lt(ktime_mono_ms() - t0, 8000);
    mockfix_stop(m, c);
}

Test(k8s_deadline, an_attempt_is_cut_at_the_deadline)
{
    struct mockapi *m;
    struct k8s_client *c;
    struct kerr_info err;
    cJSON *obj = NULL;
    int64_t t0, ms;

    mockfix_start(&m, &c, "t", NULL); /* 30 s per attempt */
    mockapi_add(m, &(struct mockapi_spec){ .method = "GET", .target = POD_PATH, .hold = 1 });
    t0 = ktime_mono_ms();
    cr_expect_eq(k8s_get_until(c, &PODS, "default", "p", NULL, t0 + 400, &obj, &err), KERR_TIMEOUT,
                 "%s", err.msg);
    ms = ktime_mono_ms() - t0;
    cr_expect_geq(ms, 350);
    /* the attempt's own timeout is 30 s */
    cr_expect_lt(ms, 15000, "an answer that never comes, 400 ms left: %lld ms", (long long)ms);
    cr_expect_eq(k8s_get_until(c, &PODS, "default", "p", NULL, ktime_mono_ms() - 1, &obj, &err),
                 KERR_TIMEOUT, "no attempt starts after the deadline");
    mockfix_stop(m, c);
}
