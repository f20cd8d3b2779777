/*
 * Tests of webhook/etcdimm on /webhooks/etcd: etcd-druid's CRD rules keeping
 * spec.volumeClaimTemplate, spec.storageClass and spec.memberNamePrefix of an
 * Etcd, through both review decoders, with kube-apiserver's wording.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/testutil.h"
#include "tests/support/whdiff.h"
#include "webhook/wh_dispatch.h"

/* An OPERATION of Etcd shoot/etcd-main from spec {old} to spec {cur} (old NULL: none). */
static char *review(const char *op, const char *old, const char *cur)
{
    char *body = malloc(4096), prev[1024] = "";

    cr_assert_not_null(body);
    if (old)
        snprintf(prev, sizeof(prev),
                 ",\"oldObject\":{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\"},"
                 "\"spec\":{%s}}",
                 old);
    snprintf(body, 4096,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"u\",\"kind\":{\"group\":\"druid.gardener.cloud\",\"version\":\"v1alpha1\","
             "\"kind\":\"Etcd\"},\"resource\":{\"group\":\"druid.gardener.cloud\",\"version\":"
             "\"v1alpha1\",\"resource\":\"etcds\"},\"name\":\"etcd-main\",\"namespace\":\"shoot\","
             "\"operation\":\"%s\",\"userInfo\":{\"username\":\"alice\"},"
             "\"object\":{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\"},"
             "\"spec\":{%s}}%s}}",
             op, cur, prev);
    return body;
}

#define VCT           "\"replicas\":3,\"volumeClaimTemplate\":\"etcd-main\""
#define CHANGED(f, m) "spec." f ": Invalid value: \"string\": etcd.spec." m " is an immutable field"
#define PRESENCE(m)   "spec: Invalid value: \"object\": etcd.spec." m " is an immutable field."
#define INVALID       "Etcd.druid.gardener.cloud \"etcd-main\" is invalid: "

Test(etcdimm, member_naming_fields_stay)
{
    static const struct {
        const char *op, *old, *cur, *message; /* message NULL: allowed */
        int causes;
    } rows[] = {
        { "UPDATE", VCT, VCT, NULL, 0 },
        { "UPDATE", VCT ",\"storageClass\":\"a\"", VCT ",\"storageClass\":\"a\",\"x\":1", NULL, 0 },
        { "CREATE", NULL, VCT, NULL, 0 },
        { "UPDATE", "\"replicas\":3", "\"replicas\":5", NULL, 0 },
        { "UPDATE", VCT, "\"replicas\":3,\"volumeClaimTemplate\":\"fresh\"",
          INVALID CHANGED("volumeClaimTemplate", "VolumeClaimTemplate"), 1 },
        { "UPDATE", VCT, "\"replicas\":3", INVALID PRESENCE("volumeClaimTemplate"), 1 },
        { "UPDATE", "\"replicas\":3", VCT, INVALID PRESENCE("volumeClaimTemplate"), 1 },
        { "UPDATE", "\"memberNamePrefix\":\"a\"", "\"memberNamePrefix\":\"b\"",
          INVALID CHANGED("memberNamePrefix", "memberNamePrefix"), 1 },
        { "UPDATE", VCT ",\"storageClass\":\"a\"", "\"storageClass\":\"b\"",
          INVALID
          "[" PRESENCE("volumeClaimTemplate") ", " CHANGED("storageClass", "storageClass") "]",
          2 },
    };
    static const char *const none[] = { NULL };
    struct protect_config cfg = { none, 0, none, 0, NULL, NULL, 0, NULL };
    struct lookup_mem mem = { 0 };
    struct wh_dispatch d;
    struct lookup lk;
    struct kerr_info err;
    cJSON *etcds = cJSON_Parse("[]");
    size_t i;

    cr_assert_not_null(etcds);
    mem.etcds = etcds;
    lookup_mem_bind(&mem, &lk);
    cr_assert_eq(wh_dispatch_init(&d, &cfg, &lk, NULL, &err), KERR_OK, "%s", err.msg);
    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *body = review(rows[i].op, rows[i].old, rows[i].cur);
        bool allowed = false;
        int64_t code = 0;
        cJSON *doc = whdiff_answer(&d, &cfg, &mem, WH_HOOK_ETCD, body, &allowed);

        cr_expect_eq(allowed, rows[i].message == NULL, "row %zu: allowed %d (%s)", i, allowed,
                     kjson_get_str(doc, "response.status.message") ?: "");
        if (rows[i].message) {
            const cJSON *causes = kjson_get(doc, "response.status.details.causes");

            cr_expect_str_eq(kjson_get_str(doc, "response.status.message") ?: "(none)",
                             rows[i].message, "row %zu: message", i);
            cr_expect_eq(kjson_get_int64(doc, "response.status.code", &code), KERR_OK);
            cr_expect_eq(code, 422, "row %zu: code", i);
            cr_expect_str_eq(kjson_get_str(doc, "response.status.reason") ?: "", "Invalid");
            cr_expect_str_eq(kjson_get_str(doc, "response.status.details.kind") ?: "", "Etcd");
            cr_expect_eq(cJSON_GetArraySize(causes), rows[i].causes, "row %zu: causes", i);
        }
        cJSON_Delete(doc);
        free(body);
    }
    cJSON_Delete(etcds);
}
