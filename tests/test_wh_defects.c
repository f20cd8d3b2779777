/*
 * Regression tests of defects found in review of warden-webhook:
 *   - the mutating endpoint's time is linear in the number of
 *     volumeClaimTemplates (it walked arrays by index, quadratic);
 *   - a username with an escaped NUL is not read as the part before it
 *     (the review is refused with 400);
 *   - after sync, a cache miss whose fallback lookup was refused is not
 *     read as "the Etcd does not exist" by the mutating endpoint (500, no
 *     owner reference removed), while component protection keeps its
 *     documented answer (allowed, with a warning);
 *   - a fallback lookup made for a review ends by the review's deadline,
 *     whatever Retry-After the API server sends.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/jarena.h"
#include "common/k8s.h"
#include "common/ktime.h"
#include "common/log.h"
#include "tests/support/mockapi.h"
#include "tests/support/mockfix.h"
#include "webhook/mutate.h"
#include "webhook/protect.h"
#include "webhook/wh_cache.h"
#include "webhook/wh_dispatch.h"

#define DRUID "system:serviceaccount:druid:etcd-druid"
#define OWNER                                                                                    \
    "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\",\"name\":\"etcd-new\"," \
    "\"uid\":\"u-new\"}"
#define MANAGED                                                                                  \
    "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":" \
    "\"etcd-new\"}"

static void quiet(void)
{
    log_set_level(LOG_ERROR);
}

TestSuite(wh_defects, .init = quiet);

/* A component CREATE of a StatefulSet with n empty volumeClaimTemplates. */
static char *sts_create(size_t n, size_t *len)
{
    struct buf b;
    size_t i;

    buf_init(&b, 1u << 26);
    cr_assert_eq(buf_appends(&b, "{\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"kind\":{"
                                 "\"group\":\"apps\",\"kind\":\"StatefulSet\"},\"namespace\":"
                                 "\"shoot\",\"object\":{\"metadata\":{\"name\":\"s\"," MANAGED
                                 "},\"spec\":{\"volumeClaimTemplates\":["),
                 KERR_OK);
    for (i = 0; i < n; i++)
        cr_assert_eq(buf_appends(&b, i ? ",{}" : "{}"), KERR_OK);
    cr_assert_eq(buf_appends(&b, "]}}}}"), KERR_OK);
    return buf_detach(&b, len);
}

/* Best of three: milliseconds mutate_decide takes on a review with n templates. */
static double mutate_ms(size_t n)
{
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    struct review_req r;
    struct review_resp resp;
    struct kerr_info err;
    double best = 1e9, ms;
    int64_t t0;
    size_t len;
    char *body = sts_create(n, &len);
    int i;

    lookup_mem_bind(&mem, &lk);
    review_req_init(&r);
    cr_assert_eq(review_req_decode(&r, body, len, &err), KERR_OK, "%s", err.msg);
    for (i = 0; i < 3; i++) {
        review_resp_init(&resp);
        t0 = ktime_mono_ns();
        cr_assert_eq(mutate_decide(NULL, &lk, &r, &resp, &err), KERR_OK, "%s", err.msg);
        ms = (double)(ktime_mono_ns() - t0) / 1e6;
        best = ms < best ? ms : best;
        cr_expect(resp.allowed);
        review_resp_release(&resp);
    }
    review_req_release(&r);
    free(body);
    return best;
}

Test(wh_defects, mutating_time_is_linear_in_the_volume_claim_templates)
{
    double small = mutate_ms(5000), large = mutate_ms(40000);

    /*
     * Linear: about 8 times as long; walking by index (quadratic): about 64
     * times. The bound sits between the two with room for a loaded machine
     * slowing the larger run (each figure is the best of three).
     */
    cr_expect_lt(large, 24.0 * small + 5.0, "5k templates %.1f ms, 40k %.1f ms", small, large);
}

static const char etcd_live[] = "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-new\","
                                "\"uid\":\"u-new\"}}]";

Test(wh_defects, a_nul_in_the_username_is_refused)
{
    static const char *const reconcilers[] = { DRUID };
    static const char body[] =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},"
        "\"operation\":\"DELETE\",\"namespace\":\"shoot\",\"name\":\"c\",\"userInfo\":{"
        "\"username\":\"" DRUID "\\u0000mallory\"},\"oldObject\":{\"metadata\":{"
        "\"namespace\":\"shoot\",\"name\":\"c\"," MANAGED "}}}}";
    struct protect_config cfg = { reconcilers, 1, NULL, 0, NULL, NULL, 0, NULL };
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    struct wh_dispatch d;
    struct kerr_info err;
    unsigned int status = 0;
    size_t len = 0;
    char *out = NULL;
    cJSON *etcds = cJSON_Parse(etcd_live);

    mem.etcds = etcds;
    lookup_mem_bind(&mem, &lk);
    cr_assert_eq(wh_dispatch_init(&d, &cfg, &lk, NULL, &err), KERR_OK);
    cr_assert_eq(
        wh_dispatch_review(&d, WH_HOOK_COMPONENTS, body, strlen(body), &out, &len, &status, &err),
        KERR_OK, "%s", err.msg);
    cr_expect_eq(status, 400, "answer %s", out);
    cr_expect_not_null(strstr(out, "\"allowed\":false"), "%s", out);
    cr_expect_not_null(strstr(out, "NUL"), "%s", out);
    free(out);
    cJSON_Delete(etcds);
}

/* A StatefulSet UPDATE to 0 replicas padded with n labels (malloc'd). */
static char *padded_scale_down(size_t n, size_t *len)
{
    struct buf b;
    size_t i;
    enum kerr rc;

    buf_init(&b, 64u * 1024 * 1024);
    rc =
        buf_appends(&b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                        "\"request\":{\"uid\":\"u-padded\",\"kind\":{\"group\":\"apps\","
                        "\"version\":\"v1\",\"kind\":\"StatefulSet\"},\"operation\":\"UPDATE\","
                        "\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"userInfo\":{"
                        "\"username\":\"alice\"},\"object\":{\"metadata\":{\"namespace\":\"shoot\","
                        "\"name\":\"etcd-main\",\"labels\":{");
    for (i = 0; i < n && rc == KERR_OK; i++)
        rc = buf_appendf(&b, "%s\"l%zu\":\"\"", i ? "," : "", i);
    if (rc == KERR_OK)
        rc = buf_appends(
            &b, "}},\"spec\":{\"replicas\":0}},\"oldObject\":{\"metadata\":{"
                "\"namespace\":\"shoot\",\"name\":\"etcd-main\"},\"spec\":{\"replicas\":3}}}}");
    cr_assert_eq(rc, KERR_OK);
    return buf_detach(&b, len);
}

Test(wh_defects, a_review_past_the_parse_budget_is_refused_not_errored)
{
    static const char *const reconcilers[] = { DRUID };
    struct protect_config cfg = { reconcilers, 1, NULL, 0, NULL, NULL, 0, NULL };
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    struct wh_dispatch d;
    struct kerr_info err;
    unsigned int status = 0;
    size_t len = 0, blen = 0;
    char *out = NULL, *body = padded_scale_down(200000, &blen);
    cJSON *etcds = cJSON_Parse(etcd_live);

    cr_assert_not_null(body);
    cr_assert_eq(jarena_install(&err), KERR_OK, "%s", err.msg); /* the budget, as in the server */
    mem.etcds = etcds;
    lookup_mem_bind(&mem, &lk);
    cr_assert_eq(wh_dispatch_init(&d, &cfg, &lk, NULL, &err), KERR_OK);
    for (int h = 0; h < WH_HOOK__COUNT; h++) {
        cr_assert_eq(wh_dispatch_review(&d, (enum wh_hook)h, body, blen, &out, &len, &status, &err),
                     KERR_OK, "%s", err.msg);
        /* an error (not 200) is a failed call, which failurePolicy Ignore admits unchecked */
        cr_expect_eq(status, 200, "hook %d: answer %.300s", h, out);
        cr_expect_not_null(strstr(out, "\"uid\":\"u-padded\""), "hook %d: %.300s", h, out);
        cr_expect_not_null(strstr(out, "\"allowed\":false"), "hook %d: %.300s", h, out);
        cr_expect_not_null(strstr(out, "\"code\":413"), "hook %d: %.300s", h, out);
        cr_expect_not_null(strstr(out, "parse budget"), "hook %d: %.300s", h, out);
        free(out);
        out = NULL;
    }
    free(body);
    cJSON_Delete(etcds);
}

#define ETCD_PATH "/apis/druid.gardener.cloud/v1alpha1/etcds"
#define STS_PATH  "/apis/apps/v1/statefulsets"
#define TASK_PATH "/apis/druid.gardener.cloud/v1alpha1/etcdopstasks"

struct fx {
    struct mockapi *m;
    struct k8s_client *client;
    struct wh_cache *cache;
    struct lookup lk;
};

/* A synced cache with no Etcds and no StatefulSets; fallback_limit as in wh_cache_opts. */
static void up(struct fx *f, int fallback_limit)
{
    static const char empty[] = "{\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}";
    struct wh_cache_opts o = { 0 };
    struct kerr_info err;

    memset(f, 0, sizeof(*f));
    mockfix_start(&f->m, &f->client, "t", NULL);
    mockapi_add(f->m, &(struct mockapi_spec){
                          .method = "GET", .target = ETCD_PATH "?!watch", .body = empty });
    mockapi_add(f->m,
                &(struct mockapi_spec){ .method = "GET", .target = ETCD_PATH "?watch", .hold = 1 });
    mockapi_add(f->m, &(struct mockapi_spec){
                          .method = "GET", .target = STS_PATH "?!watch", .body = empty });
    mockapi_add(f->m,
                &(struct mockapi_spec){ .method = "GET", .target = STS_PATH "?watch", .hold = 1 });
    mockapi_add(f->m, &(struct mockapi_spec){
                          .method = "GET", .target = TASK_PATH "?!watch", .body = empty });
    mockapi_add(f->m,
                &(struct mockapi_spec){ .method = "GET", .target = TASK_PATH "?watch", .hold = 1 });
    o.client = f->client;
    o.fallback_limit = fallback_limit;
    cr_assert_eq(wh_cache_new(&o, &f->cache, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(wh_cache_start(f->cache, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(wh_cache_wait_synced(f->cache, 30000), KERR_OK);
    wh_cache_bind(f->cache, &f->lk);
}

static void down(struct fx *f)
{
    wh_cache_free(f->cache);
    mockfix_stop(f->m, f->client);
}

Test(wh_defects, a_refused_fallback_is_not_read_as_a_missing_etcd)
{
    static const char *const reconcilers[] = { DRUID };
    static const char create[] =
        "{\"request\":{\"uid\":\"u\",\"operation\":\"CREATE\",\"kind\":{\"group\":\"apps\","
        "\"kind\":\"StatefulSet\"},\"namespace\":\"shoot\",\"object\":{\"metadata\":{"
        "\"name\":\"etcd-new\"," MANAGED ",\"ownerReferences\":[" OWNER "]},\"spec\":{"
        "\"volumeClaimTemplates\":[{\"metadata\":{\"ownerReferences\":[" OWNER "]}}]}}}}";
    static const char update[] =
        "{\"request\":{\"uid\":\"u\",\"operation\":\"UPDATE\",\"kind\":{\"group\":\"\","
        "\"kind\":\"ConfigMap\"},\"namespace\":\"shoot\",\"userInfo\":{\"username\":\"alice\"},"
        "\"object\":{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"c\"," MANAGED "}},"
        "\"oldObject\":{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"c\"," MANAGED "}}}}";
    struct protect_config cfg = { reconcilers, 1, NULL, 0, NULL, NULL, 0, NULL };
    struct review_req r;
    struct review_resp resp;
    struct kerr_info err;
    struct fx f;

    up(&f, -1);
    review_req_init(&r);
    review_resp_init(&resp);
    cr_assert_eq(review_req_decode(&r, create, strlen(create), &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(mutate_decide(NULL, &f.lk, &r, &resp, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(resp.code, 500, "an unconfirmed miss answered %d: %s", resp.code, resp.message);
    cr_expect_null(resp.patch, "owner references removed: %s", resp.patch);
    review_resp_release(&resp);
    review_req_release(&r);
    /* Component protection: the synced cache's answer stands (allowed, with a warning). */
    cr_assert_eq(review_req_decode(&r, update, strlen(update), &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(protect_decide(&cfg, &f.lk, &r, &resp, &err), KERR_OK, "%s", err.msg);
    cr_expect(resp.allowed);
    cr_expect_eq(resp.n_warnings, 1);
    review_resp_release(&resp);
    review_req_release(&r);
    down(&f);
}

Test(wh_defects, a_fallback_lookup_ends_by_the_review_deadline)
{
    struct lookup_etcd e;
    struct kerr_info err;
    struct fx f;
    int64_t t0, ms;

    up(&f, 0);
    mockapi_add(f.m,
                &(struct mockapi_spec){
                    .method = "GET",
                    .target = "/apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds/slow",
                    .status = 429,
                    .headers = "Retry-After: 10",
                    .body = "{\"kind\":\"Status\",\"code\":429,\"reason\":"
                            "\"TooManyRequests\",\"message\":\"slow down\"}",
                    .times = -1 });
    t0 = ktime_mono_ms();
    lookup_deadline_set(t0 + 500);
    cr_expect_neq(f.lk.etcd(f.lk.ctx, "shoot", "slow", &e, &err), KERR_OK);
    lookup_deadline_set(0);
    ms = ktime_mono_ms() - t0;
    /* waiting for the retry would take 10 s */
    cr_expect_lt(ms, 8000, "a lookup with 500 ms left took %lld ms", (long long)ms);
    down(&f);
}
