/*
 * Tests of webhook/wh_cache against a scripted API server (mockapi): the
 * lookups are answered from the watch-fed caches with no API call in steady
 * state (a burst of reviews through the whole dispatch path counts the
 * requests), a miss falls back to exactly one GET, watch events update the
 * caches, and the PVC rule lists only when the cache cannot answer.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "common/log.h"
#include "tests/support/mockapi.h"
#include "tests/support/mockfix.h"
#include "webhook/cfgguard.h"
#include "webhook/wh_cache.h"
#include "webhook/wh_dispatch.h"

#define ETCD_PATH "/apis/druid.gardener.cloud/v1alpha1/etcds"
#define STS_PATH  "/apis/apps/v1/statefulsets"
#define TASK_PATH "/apis/druid.gardener.cloud/v1alpha1/etcdopstasks"
#define MANAGED                                                                                  \
    "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":" \
    "\"etcd-main\"}"

static const char etcd_list[] =
    "{\"kind\":\"EtcdList\",\"metadata\":{\"resourceVersion\":\"10\"},\"items\":["
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"u-main\","
    "\"resourceVersion\":\"9\"},\"spec\":{\"replicas\":3},\"status\":{\"lastOperation\":{"
    "\"type\":\"Reconcile\",\"state\":\"Processing\",\"description\":\"x\"}}},"
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-open\",\"uid\":\"u-open\","
    "\"annotations\":{\"druid.gardener.cloud/disable-etcd-component-protection\":\"\","
    "\"other\":\"dropped\"}}}]}";

static const char sts_list[] =
    "{\"kind\":\"StatefulSetList\",\"metadata\":{\"resourceVersion\":\"20\"},\"items\":["
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\"," MANAGED
    "},\"spec\":{\"replicas\":3,\"template\":{\"spec\":{\"containers\":[{\"name\":"
    "\"backup-restore\",\"volumeMounts\":[{\"name\":\"etcd-main\",\"mountPath\":\"/srv\"}]},"
    "{\"name\":\"etcd\",\"env\":[{\"name\":\"A\",\"value\":\"b\"}],\"volumeMounts\":[{"
    "\"name\":\"etcd-main\",\"mountPath\":\"/var/etcd/data\",\"readOnly\":false},{\"name\":"
    "\"etcd-main\",\"mountPath\":\"/var/etcd/sub\",\"subPath\":\"x\"}]}]}},"
    "\"volumeClaimTemplates\":[{\"metadata\":{\"name\":\"etcd-main\",\"labels\":{\"a\":"
    "\"b\"}},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"]}}]}}]}";

struct fx {
    struct mockapi *m;
    struct k8s_client *client;
    struct wh_cache *cache;
    struct lookup lk;
    int etcd_watch, sts_watch, task_watch;
};

static void up(struct fx *f, int fallback_limit)
{
    struct wh_cache_opts o = { 0 };
    struct kerr_info err;

    memset(f, 0, sizeof(*f));
    mockfix_start(&f->m, &f->client, "t", NULL);
    mockapi_add(f->m, &(struct mockapi_spec){
                          .method = "GET", .target = ETCD_PATH "?!watch", .body = etcd_list });
    f->etcd_watch = mockapi_add(
        f->m, &(struct mockapi_spec){ .method = "GET", .target = ETCD_PATH "?watch", .hold = 1 });
    mockapi_add(f->m,
                &(struct mockapi_spec){ .method = "GET",
                                        .target = STS_PATH "?!watch&labelSelector=app.kubernetes."
                                                           "io%2Fmanaged-by%3Detcd-druid",
                                        .body = sts_list });
    f->sts_watch = mockapi_add(
        f->m, &(struct mockapi_spec){ .method = "GET", .target = STS_PATH "?watch", .hold = 1 });
    mockapi_add(f->m,
                &(struct mockapi_spec){ .method = "GET",
                                        .target = TASK_PATH "?!watch",
                                        .body = "{\"kind\":\"EtcdOpsTaskList\",\"metadata\":{"
                                                "\"resourceVersion\":\"30\"},\"items\":[]}" });
    f->task_watch = mockapi_add(
        f->m, &(struct mockapi_spec){ .method = "GET", .target = TASK_PATH "?watch", .hold = 1 });
    o.client = f->client;
    o.fallback_limit = fallback_limit;
    cr_assert_eq(wh_cache_new(&o, &f->cache, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(wh_cache_start(f->cache, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(wh_cache_wait_synced(f->cache, 30000), KERR_OK);
    cr_assert_eq(mockapi_wait_served(f->m, f->etcd_watch, 1, 30000), 0);
    cr_assert_eq(mockapi_wait_served(f->m, f->sts_watch, 1, 30000), 0);
    cr_assert_eq(mockapi_wait_served(f->m, f->task_watch, 1, 30000), 0);
    wh_cache_bind(f->cache, &f->lk);
}

static void down(struct fx *f)
{
    wh_cache_free(f->cache);
    mockfix_stop(f->m, f->client);
}

Test(wh_cache, lookups_come_from_the_caches)
{
    struct fx f;
    struct lookup_etcd e;
    struct lookup_sts s;
    struct wh_cache_stats st;
    cJSON *labels = cJSON_Parse("{\"app.kubernetes.io/managed-by\":\"etcd-druid\"}");
    size_t before, matches = 0;
    int i;

    up(&f, 0);
    before = mockapi_request_count(f.m);
    for (i = 0; i < 1000; i++) {
        cr_assert_eq(f.lk.etcd(f.lk.ctx, "shoot", "etcd-main", &e, NULL), KERR_OK);
        cr_assert_eq(f.lk.sts(f.lk.ctx, "shoot", "etcd-main", &s, NULL), KERR_OK);
        cr_assert_eq(f.lk.sts_by_labels(f.lk.ctx, "shoot", labels, &s, &matches, NULL), KERR_OK);
    }
    cr_expect_eq(mockapi_request_count(f.m), before, "lookups reached the API server");
    cr_expect_str_eq(e.uid, "u-main");
    cr_expect(e.reconcile_in_progress);
    cr_expect_not(e.protection_disabled);
    cr_expect_eq(matches, 1);
    cr_expect(s.managed);
    cr_expect_str_eq(s.part_of, "etcd-main");
    cr_assert_eq(f.lk.etcd(f.lk.ctx, "shoot", "etcd-open", &e, NULL), KERR_OK);
    cr_expect(e.protection_disabled);
    wh_cache_stats(f.cache, &st);
    cr_expect_eq(st.etcds, 2);
    cr_expect_eq(st.stses, 1);
    cr_expect_geq(st.hits, 3000);
    cr_expect_eq(st.fallbacks, 0);
    cJSON_Delete(labels);
    down(&f);
}

/* Issue 33: the data-directory rule of etcd's configuration reads the StatefulSet from the
 * cache, which keeps container etcd's mounts and the claim templates' names of it only. */
Test(wh_cache, the_statefulset_of_the_configuration_rule_comes_from_the_cache)
{
    struct fx f;
    struct kerr_info err;
    cJSON *sts = NULL;
    size_t before;
    int i;

    up(&f, -1);
    before = mockapi_request_count(f.m);
    for (i = 0; i < 1000; i++) {
        cJSON_Delete(sts);
        sts = NULL;
        cr_assert_eq(f.lk.sts_object(f.lk.ctx, "shoot", "etcd-main", &sts, &err), KERR_OK, "%s",
                     err.msg);
    }
    cr_expect_eq(mockapi_request_count(f.m), before, "the StatefulSet was read from the API");
    cr_expect_eq(cJSON_GetArraySize(kjson_get(sts, "spec.template.spec.containers")), 1);
    cr_expect_str_eq(kjson_get_str(sts, "spec.template.spec.containers.0.name"), "etcd");
    cr_expect_null(kjson_get(sts, "spec.template.spec.containers.0.env"));
    cr_expect_eq(cJSON_GetArraySize(kjson_get(sts, "spec.template.spec.containers.0.volumeMounts")),
                 2);
    cr_expect_str_eq(kjson_get_str(sts, "spec.template.spec.containers.0.volumeMounts.1.subPath"),
                     "x");
    cr_expect_null(kjson_get(sts, "spec.template.spec.containers.0.volumeMounts.0.readOnly"));
    cr_expect_str_eq(kjson_get_str(sts, "spec.volumeClaimTemplates.0.metadata.name"), "etcd-main");
    cr_expect_null(kjson_get(sts, "spec.volumeClaimTemplates.0.spec"));
    cr_expect_null(kjson_get(sts, "spec.volumeClaimTemplates.0.metadata.labels"));
    cr_expect_str_eq(cfgguard_claim_of(sts, "/var/etcd/data/new.etcd"), "etcd-main");
    cr_expect_null(cfgguard_claim_of(sts, "/var/etcd/sub/new.etcd"), "a sub path");
    cr_expect_null(cfgguard_claim_of(sts, "/srv/new.etcd"), "the sidecar's mount");
    cJSON_Delete(sts);
    sts = NULL;
    /* a miss the cache alone answers (no fallback allowed) is not confirmed: a 500 there */
    cr_expect_eq(f.lk.sts_object(f.lk.ctx, "shoot", "missing", &sts, &err), KERR_NOTFOUND);
    cr_expect(lookup_unconfirmed(KERR_NOTFOUND, &err), "%s", err.reason);
    cr_expect_null(sts);
    cr_expect_eq(mockapi_request_count(f.m), before);
    down(&f);
}

Test(wh_cache, a_miss_falls_back_to_one_get)
{
    struct fx f;
    struct lookup_etcd e;
    struct lookup_sts s;
    struct kerr_info err;
    size_t before;

    up(&f, 0);
    mockapi_expect(f.m, "GET", "/apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds/new",
                   200,
                   "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"new\",\"uid\":\"u-new\"}}");
    mockapi_expect(f.m, "GET", "/apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds/gone",
                   404,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
                   "\"etcds.druid.gardener.cloud \\\"gone\\\" not found\",\"reason\":\"NotFound\","
                   "\"code\":404}");
    mockapi_expect(f.m, "GET", "/apis/apps/v1/namespaces/shoot/statefulsets/plain", 200,
                   "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"plain\"}}");
    before = mockapi_request_count(f.m);
    cr_assert_eq(f.lk.etcd(f.lk.ctx, "shoot", "new", &e, &err), KERR_OK, "%s", err.msg);
    cr_expect_str_eq(e.uid, "u-new");
    cr_expect_eq(f.lk.etcd(f.lk.ctx, "shoot", "gone", &e, &err), KERR_NOTFOUND);
    cr_expect_str_eq(err.msg, "etcds.druid.gardener.cloud \"gone\" not found");
    cr_assert_eq(f.lk.sts(f.lk.ctx, "shoot", "plain", &s, &err), KERR_OK, "%s", err.msg);
    cr_expect_not(s.managed);
    cr_expect_eq(mockapi_request_count(f.m), before + 3);
    cr_expect_eq(mockapi_unexpected(f.m), 0);
    /* A name no object can have is not found without asking. */
    cr_expect_eq(f.lk.etcd(f.lk.ctx, "", "x", &e, &err), KERR_NOTFOUND);
    cr_expect_eq(mockapi_request_count(f.m), before + 3);
    down(&f);
}

Test(wh_cache, no_fallback_past_the_limit)
{
    struct fx f;
    struct lookup_etcd e;
    struct kerr_info err;
    struct wh_cache_stats st;
    size_t before;

    up(&f, -1);
    before = mockapi_request_count(f.m);
    cr_expect_eq(f.lk.etcd(f.lk.ctx, "shoot", "missing", &e, &err), KERR_NOTFOUND);
    cr_expect_str_eq(err.msg, "etcds.druid.gardener.cloud \"missing\" not found");
    cr_expect_eq(mockapi_request_count(f.m), before);
    wh_cache_stats(f.cache, &st);
    cr_expect_eq(st.fallbacks, 0);
    down(&f);
}

Test(wh_cache, watch_events_update_the_cache)
{
    struct fx f;
    struct lookup_etcd e;
    size_t before;
    int i;

    up(&f, -1);
    before = mockapi_request_count(f.m);
    mockapi_push(f.m, f.etcd_watch,
                 "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"namespace\":\"shoot\",\"name\":"
                 "\"late\",\"uid\":\"u-late\",\"resourceVersion\":\"11\"}}}\n"
                 "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"namespace\":\"shoot\","
                 "\"name\":\"etcd-main\",\"uid\":\"u-main\",\"resourceVersion\":\"12\"},"
                 "\"status\":{\"lastOperation\":{\"type\":\"Delete\",\"state\":\"Processing\"}}}}"
                 "\n",
                 0);
    for (i = 0; i < 6000; i++) { /* 30 s at most */
        if (f.lk.etcd(f.lk.ctx, "shoot", "late", &e, NULL) == KERR_OK)
            break;
        usleep(5000);
    }
    cr_expect_str_eq(e.uid, "u-late");
    for (i = 0; i < 6000; i++) { /* 30 s at most */
        cr_assert_eq(f.lk.etcd(f.lk.ctx, "shoot", "etcd-main", &e, NULL), KERR_OK);
        if (e.deletion_in_progress)
            break;
        usleep(5000);
    }
    cr_expect(e.deletion_in_progress);
    cr_expect_not(e.reconcile_in_progress);
    cr_expect_eq(mockapi_request_count(f.m), before);
    down(&f);
}

Test(wh_cache, unmanaged_pvc_labels_are_listed)
{
    struct fx f;
    struct lookup_sts s;
    struct kerr_info err;
    cJSON *labels = cJSON_Parse("{\"app\":\"db\"}");
    size_t matches = 9;
    const struct mockapi_req *r;

    up(&f, 0);
    mockapi_expect(f.m, "GET", "/apis/apps/v1/namespaces/shoot/statefulsets?labelSelector", 200,
                   "{\"items\":[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"db\",\"labels\":"
                   "{\"app\":\"db\"}}}]}");
    cr_assert_eq(f.lk.sts_by_labels(f.lk.ctx, "shoot", labels, &s, &matches, &err), KERR_OK, "%s",
                 err.msg);
    cr_expect_eq(matches, 1);
    cr_expect_str_eq(s.name, "db");
    r = mockapi_last(f.m);
    cr_assert_not_null(r);
    cr_expect_str_eq(r->path, "/apis/apps/v1/namespaces/shoot/statefulsets");
    cr_expect_str_eq(mockapi_req_param(r, "labelSelector"), "app=db");
    cJSON_Delete(labels);
    down(&f);
}

static const char *const reconcilers[] = { "system:serviceaccount:druid:etcd-druid" };

/* The acceptance check of the cache: a burst of reviews in steady state makes no API call. */
Test(wh_cache, burst_of_reviews_makes_no_api_call)
{
    static const char *const users[] = { "alice", "system:serviceaccount:druid:etcd-druid",
                                         "system:serviceaccount:shoot:etcd-main" };
    static const char *const kinds[][2] = { { "", "ConfigMap" },
                                            { "apps", "StatefulSet" },
                                            { "coordination.k8s.io", "Lease" } };
    struct protect_config pc = { reconcilers, 1, NULL, 0, NULL, NULL, 0, NULL };
    struct wh_dispatch d;
    struct fx f;
    char body[1024], *out = NULL;
    size_t before, len;
    unsigned int status;
    int i, denied = 0;

    up(&f, 0);
    log_set_level(LOG_WARN); /* one line per denial otherwise */
    cr_assert_eq(wh_dispatch_init(&d, &pc, &f.lk, NULL, NULL), KERR_OK);
    before = mockapi_request_count(f.m);
    for (i = 0; i < 3000; i++) {
        snprintf(body, sizeof(body),
                 "{\"request\":{\"uid\":\"%d\",\"kind\":{\"group\":\"%s\",\"kind\":\"%s\"},"
                 "\"operation\":\"%s\",\"userInfo\":{\"username\":\"%s\"},\"oldObject\":{"
                 "\"metadata\":{\"namespace\":\"shoot\",\"name\":\"x\"," MANAGED "}},"
                 "\"object\":{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"x\"," MANAGED "}}}}",
                 i, kinds[i % 3][0], kinds[i % 3][1], i % 2 ? "UPDATE" : "DELETE", users[i % 3]);
        cr_assert_eq(wh_dispatch_review(&d, WH_HOOK_COMPONENTS, body, strlen(body), &out, &len,
                                        &status, NULL),
                     KERR_OK);
        cr_assert_eq(status, 200);
        denied += strstr(out, "\"allowed\":false") != NULL;
        free(out);
    }
    cr_expect_eq(mockapi_request_count(f.m), before, "%zu API calls during the burst",
                 mockapi_request_count(f.m) - before);
    cr_expect_eq(denied, 1000, "people are denied, druid and the member lease are not");
    down(&f);
}

/* The StatefulSet a hibernated Etcd's claims are judged by is the API server's whole object
 * (its uid and generation; a cache may not have seen a wake yet), one GET per call. */
Test(wh_cache, the_statefulset_of_the_claims_rule_comes_from_the_api_server)
{
    struct fx f;
    struct kerr_info err;
    cJSON *sts = NULL;
    size_t before;

    up(&f, 4);
    mockapi_add(f.m,
                &(struct mockapi_spec){
                    .method = "GET",
                    .target = "/apis/apps/v1/namespaces/shoot/statefulsets/etcd-main",
                    .body = "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\","
                            "\"uid\":\"u-sts\",\"generation\":7},\"spec\":{\"replicas\":0}}" });
    before = mockapi_request_count(f.m);
    cr_assert_eq(f.lk.sts_fresh(f.lk.ctx, "shoot", "etcd-main", &sts, &err), KERR_OK, "%s",
                 err.msg);
    cr_expect_eq(mockapi_request_count(f.m), before + 1, "one GET");
    cr_expect_str_eq(kjson_get_str(sts, "metadata.uid"), "u-sts");
    cr_expect_eq(kjson_get_count(sts, "metadata.generation", -1), 7);
    cJSON_Delete(sts);
    down(&f);
}
