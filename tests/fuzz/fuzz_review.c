/*
 * libFuzzer target: AdmissionReview decoding and every decision path
 * (component protection, the Etcd restoring rules, the mutating patches)
 * with in-memory parent lookups, then encoding of the answer.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "webhook/mutate.h"
#include "webhook/protect.h"
#include "webhook/restore.h"
#include "webhook/toggles.h"
#include "webhook/review.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char etcds_json[] =
    "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"u1\"},"
    "\"status\":{\"lastOperation\":{\"type\":\"Reconcile\",\"state\":\"Processing\"}}},"
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-b\",\"uid\":\"u2\",\"annotations\":{"
    "\"druid.gardener.cloud/disable-etcd-runtime-component-creation\":\"\"}},"
    "\"status\":{\"lastOperation\":{\"type\":\"Delete\",\"state\":\"Error\"}}}]";
static const char stses_json[] =
    "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"labels\":{"
    "\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":"
    "\"etcd-main\"}}},{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-b\","
    "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",\"labels\":{"
    "\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":\"etcd-b\"}}}]";

/* the PVCs a StatefulSet CREATE or scale-up is checked against: names that end and split oddly */
static const char pvcs_json[] =
    "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main-etcd-main-0\","
    "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"b\"}]}},"
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"-etcd-main-99999999999999999999\","
    "\"ownerReferences\":[{\"kind\":\"Pod\"}]}},"
    "{\"metadata\":{\"namespace\":\"shoot\",\"ownerReferences\":[{}]}},"
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"d-etcd-main-\","
    "\"ownerReferences\":[1]}}]";

static const char *const reconcilers[] = { "system:serviceaccount:druid:etcd-druid" };
static const char *const exempt[] = {
    "system:serviceaccount:kube-system:generic-garbage-collector"
};

static void answer(const struct review_req *req, struct review_resp *resp)
{
    char *out = NULL;
    size_t len = 0;

    if (review_encode(req, resp, &out, &len, NULL) == KERR_OK && len == 0)
        abort();
    free(out);
    review_resp_release(resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cJSON *etcds, *stses, *pvcs;
    struct protect_config cfg = { reconcilers, 1, exempt, 1, NULL, NULL, 0, NULL };
    struct lookup_mem mem = { 0 };
    struct lookup lk;
    struct review_req req;
    struct review_resp resp;

    if (!etcds) {
        etcds = cJSON_Parse(etcds_json);
        stses = cJSON_Parse(stses_json);
        pvcs = cJSON_Parse(pvcs_json);
    }
    mem.etcds = etcds;
    mem.stses = stses;
    mem.pvcs = pvcs;
    mem.fail = size > 0 && data[size - 1] == ' ' ? KERR_API : KERR_OK; /* trailing space */
    lookup_mem_bind(&mem, &lk);
    review_req_init(&req);
    review_resp_init(&resp);
    if (review_req_decode(&req, (const char *)data, size, NULL) != KERR_OK) {
        answer(NULL, &resp);
        return 0;
    }
    if (protect_decide(&cfg, &lk, &req, &resp, NULL) == KERR_OK && resp.code == 0)
        abort();
    answer(&req, &resp);
    /* the scale-down guard alone, with the member-PVC guards (names, ordinals, owners) */
    if (protect_guard_decide(&cfg, &lk, &req, &resp, NULL) == KERR_OK && resp.code == 0)
        abort();
    answer(&req, &resp);
    if (restore_decide(&req, &resp, NULL) == KERR_OK && resp.code == 0)
        abort();
    answer(&req, &resp);
    if (review_allow(&resp, "%s", "") != KERR_OK || toggles_decide(&cfg, &req, &resp, NULL))
        abort();
    answer(&req, &resp);
    if (mutate_decide(&cfg, &lk, &req, &resp, NULL) == KERR_OK && resp.code == 0)
        abort();
    answer(&req, &resp);
    review_req_release(&req);
    return 0;
}
