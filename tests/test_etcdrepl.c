/*
 * Tests of webhook/etcdrepl on /webhooks/etcd: etcd-druid's CRD rule on an
 * Etcd's spec.replicas ("Replicas can either be increased or be downscaled to
 * 0."), for the Etcd and for etcds/scale, through both review decoders.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/testutil.h"
#include "tests/support/whdiff.h"
#include "webhook/etcdrepl.h"
#include "webhook/wh_dispatch.h"

#define NONE -1 /* spec.replicas absent */

/* An UPDATE of Etcd shoot/etcd-main (or of its Scale) from from to to replicas. */
static char *review(int scale, int from, int to)
{
    char *body = malloc(2048), a[32] = "", b[32] = "";

    cr_assert_not_null(body);
    if (from != NONE)
        snprintf(a, sizeof(a), "\"replicas\":%d", from);
    if (to != NONE)
        snprintf(b, sizeof(b), "\"replicas\":%d", to);
    snprintf(body, 2048,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"u\",\"kind\":{\"group\":\"%s\",\"version\":\"%s\",\"kind\":\"%s\"},"
             "\"resource\":{\"group\":\"druid.gardener.cloud\",\"version\":\"v1alpha1\","
             "\"resource\":\"etcds\"},%s\"name\":\"etcd-main\",\"namespace\":\"shoot\","
             "\"operation\":\"UPDATE\",\"userInfo\":{\"username\":\"alice\"},"
             "\"object\":{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\"},"
             "\"spec\":{%s}},\"oldObject\":{\"metadata\":{\"name\":\"etcd-main\","
             "\"namespace\":\"shoot\"},\"spec\":{%s}}}}",
             scale ? "autoscaling" : "druid.gardener.cloud", scale ? "v1" : "v1alpha1",
             scale ? "Scale" : "Etcd", scale ? "\"subResource\":\"scale\"," : "", b, a);
    return body;
}

/*
 * A refusal as kube-apiserver answers the CRD's rule: 422 Invalid, its message, and the
 * details kubectl prints from ("The Etcd \"etcd-main\" is invalid: spec.replicas: ...").
 */
static void expect_invalid(const cJSON *doc, size_t i)
{
    const char *msg = kjson_get_str(doc, "response.status.message");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "response"), "status");
    cJSON *want = cJSON_Parse(
        "{\"name\":\"etcd-main\",\"group\":\"druid.gardener.cloud\",\"kind\":\"Etcd\","
        "\"causes\":[{\"reason\":\"FieldValueInvalid\",\"message\":\"Invalid value: "
        "\\\"integer\\\": Replicas can either be increased or be downscaled to 0.\",\"field\":"
        "\"spec.replicas\"}]}");
    int64_t code = 0;

    cr_assert_not_null(want);
    cr_expect_str_eq(msg ? msg : "(none)",
                     "Etcd.druid.gardener.cloud \"etcd-main\" is invalid: spec.replicas: Invalid "
                     "value: \"integer\": Replicas can either be increased or be downscaled to 0.",
                     "row %zu: message", i);
    cr_expect_eq(kjson_get_int64(doc, "response.status.code", &code), KERR_OK);
    cr_expect_eq(code, 422, "row %zu: code %lld", i, (long long)code);
    cr_expect_str_eq(kjson_get_str(doc, "response.status.reason") ?: "(none)", "Invalid",
                     "row %zu: reason", i);
    cr_expect(cJSON_Compare(cJSON_GetObjectItemCaseSensitive(st, "details"), want, 1),
              "row %zu: details", i);
    cJSON_Delete(want);
}

Test(etcdrepl, replicas_grow_or_go_to_zero_only)
{
    static const struct {
        int scale, from, to, allowed;
    } rows[] = {
        { 0, 3, 1, 0 }, { 0, 3, 2, 0 },    { 0, 5, 3, 0 },    /* partial scale-downs */
        { 1, 3, 1, 0 }, { 1, 3, 2, 0 },                       /* kubectl scale etcd */
        { 0, 3, 0, 1 }, { 1, 3, 0, 1 },    { 1, 3, NONE, 1 }, /* to 0 (Scale: absent) */
        { 0, 1, 3, 1 }, { 0, 0, 3, 1 },    { 0, 3, 3, 1 },
        { 1, 1, 3, 1 }, { 0, NONE, 1, 1 }, { 0, 3, NONE, 1 }, /* absent on a side: not judged */
    };
    static const char *const none[] = { NULL };
    struct protect_config cfg = { none, 0, none, 0, NULL, NULL, 0, NULL };
    cJSON *etcds = cJSON_Parse("[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\","
                               "\"uid\":\"u1\"},\"spec\":{\"replicas\":3}}]");
    struct lookup_mem mem = { 0 };
    struct wh_dispatch d;
    struct lookup lk;
    struct kerr_info err;
    size_t i;

    cr_assert_not_null(etcds);
    mem.etcds = etcds;
    lookup_mem_bind(&mem, &lk);
    cr_assert_eq(wh_dispatch_init(&d, &cfg, &lk, NULL, &err), KERR_OK, "%s", err.msg);
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *body = review(rows[i].scale, rows[i].from, rows[i].to);
        bool allowed = false;
        cJSON *doc = whdiff_answer(&d, &cfg, &mem, WH_HOOK_ETCD, body, &allowed);

        cr_expect_eq(allowed, rows[i].allowed != 0, "row %zu (%d -> %d, scale %d): allowed", i,
                     rows[i].from, rows[i].to, rows[i].scale);
        if (!rows[i].allowed)
            expect_invalid(doc, i);
        cJSON_Delete(doc);
        free(body);
    }
    cJSON_Delete(etcds);
}
