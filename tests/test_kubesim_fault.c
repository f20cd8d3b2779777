/* kube-sim fault injection: latency, 500 and 429 answers, cut watches, forced 410s. */
#include "tests/kube-sim/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "tests/support/ksimfix.h"

static struct ksim_harness *h;

static void setup(void)
{
    struct ksim_harness_opts o = { .no_controllers = 1,
                                   .token_csv = "user-token,someone,uid-9,\n" };

    h = ksimfix_start(&o);
}

static void teardown(void)
{
    ksim_harness_stop(h);
}

TestSuite(kubesim_fault, .init = setup, .fini = teardown, .timeout = 60);

static long code_of(const char *token, const char *method, const char *path, const char *body,
                    char *retry_after, size_t size)
{
    struct ksim_http r;
    long code;

    cr_assert_eq(ksim_harness_call(h, token, method, path, NULL, body, 0, &r), 0);
    code = r.code;
    if (retry_after && ksim_http_header(&r, "Retry-After", retry_after, size) != 0)
        retry_after[0] = '\0';
    ksim_http_release(&r);
    return code;
}

Test(kubesim_fault, throttling_answers_429_with_retry_after)
{
    char ra[16];

    ksimfix_faults(h, "{\"throttleRate\":1}");
    cr_assert_eq(code_of(NULL, "GET", "/api/v1/namespaces", NULL, ra, sizeof(ra)), 429);
    cr_assert_str_eq(ra, "1");
    ksimfix_faults(h, "{\"reset\":true}");
    cr_assert_eq(code_of(NULL, "GET", "/api/v1/namespaces", NULL, NULL, 0), 200);
}

Test(kubesim_fault, errors_only_where_matched)
{
    const char *cm = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\"}}";

    ksimfix_faults(h, "{\"errorRate\":1,\"match\":\"POST /api/v1/namespaces/default/configmaps\"}");
    cr_assert_eq(code_of(NULL, "POST", "/api/v1/namespaces/default/configmaps", cm, NULL, 0), 500);
    cr_assert_eq(code_of(NULL, "GET", "/api/v1/namespaces/default/configmaps", NULL, NULL, 0), 200);
    ksimfix_faults(h, "{\"errorRate\":0.5,\"match\":\"\"}");
    {
        int i, fails = 0;

        for (i = 0; i < 200; i++)
            fails += code_of(NULL, "GET", "/api/v1/namespaces", NULL, NULL, 0) == 500;
        cr_assert(fails > 40 && fails < 160, "about half fail: %d of 200", fails);
    }
}

Test(kubesim_fault, latency_is_added)
{
    struct timespec t0, t1;
    long ms;

    ksimfix_faults(h, "{\"latencyMs\":300}");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(code_of(NULL, "GET", "/api/v1/namespaces", NULL, NULL, 0), 200);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    cr_assert_geq(ms, 300);
}

Test(kubesim_fault, only_masters_configure)
{
    cr_assert_eq(code_of("user-token", "POST", "/kube-sim/faults", "{\"errorRate\":1}", NULL, 0),
                 403);
    cr_assert_eq(code_of(NULL, "POST", "/kube-sim/faults", "{\"errorRate\":2}", NULL, 0), 400);
}

Test(kubesim_fault, cut_watches_end_streams)
{
    struct ksimfix_watch w;
    struct timespec t0, t1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    ksimfix_watch_start(&w, h, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=20",
                        30000);
    ksimfix_await_watchers(h, 1);
    ksimfix_faults(h, "{\"cutWatches\":true}");
    free(ksimfix_watch_join(&w));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_lt(t1.tv_sec - t0.tv_sec, 15, "the watch ended before its 20 s timeout");
}

Test(kubesim_fault, watch_max_duration)
{
    struct timespec t0, t1;
    struct ksim_http r;

    ksimfix_faults(h, "{\"watchMaxMs\":300}");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(ksim_harness_call(h, NULL, "GET",
                                   "/api/v1/namespaces/default/configmaps?watch=1&"
                                   "timeoutSeconds=20",
                                   NULL, NULL, 0, &r),
                 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_eq(r.code, 200);
    ksim_http_release(&r);
    cr_assert_lt(t1.tv_sec - t0.tv_sec, 15, "cut at 300 ms, not at the 20 s timeout");
}

Test(kubesim_fault, expire_history_forces_410)
{
    struct ksim_http r;
    char path[512], rv[32];
    cJSON *l;

    cr_assert_eq(ksim_harness_call(h, NULL, "GET", "/api/v1/namespaces/default/configmaps?limit=1",
                                   NULL, NULL, 0, &r),
                 0);
    l = ksim_http_json(&r);
    snprintf(rv, sizeof(rv), "%s", kjson_get_str(l, "metadata.resourceVersion"));
    cJSON_Delete(l);
    ksim_http_release(&r);
    ksimfix_faults(h, "{\"expireHistory\":true}");
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%s&timeoutSeconds=5",
             rv);
    cr_assert_eq(ksim_harness_call(h, NULL, "GET", path, NULL, NULL, 0, &r), 0);
    cr_assert_not_null(strstr(buf_str(&r.body), "\"type\":\"ERROR\""), "%s", buf_str(&r.body));
    cr_assert_not_null(strstr(buf_str(&r.body), "\"code\":410"));
    ksim_http_release(&r);
}
