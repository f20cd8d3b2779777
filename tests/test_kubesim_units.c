/* Unit tests of kube-sim's pure modules: store, patch, table, auth, pb, registry, apierr. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "tests/kube-sim/apierr.h"
#include "tests/kube-sim/auth.h"
#include "tests/kube-sim/jpath.h"
#include "tests/kube-sim/patch.h"
#include "tests/kube-sim/pb.h"
#include "tests/kube-sim/registry.h"
#include "tests/kube-sim/store.h"
#include "tests/kube-sim/table.h"
#include "tests/support/jsonfix.h"

static cJSON *js(const char *text)
{
    cJSON *v = NULL;

    cr_assert_eq(kjson_parse(text, strlen(text), NULL, &v, NULL, NULL), KERR_OK, "%s", text);
    return v;
}

static cJSON *obj(const char *name)
{
    char t[256];

    snprintf(t, sizeof(t), "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\"}}", name);
    return js(t);
}

Test(kubesim_store, create_update_delete_and_conflicts)
{
    struct ksim_store *st = NULL;
    struct kerr_info err;
    cJSON *out = NULL, *again;
    uint64_t rv1, rv2;

    cr_assert_eq(ksim_store_new(NULL, &st, NULL), KERR_OK);
    cr_assert_eq(ksim_store_create(st, "/cm", "ns", "a", obj("a"), &out, NULL), KERR_OK);
    rv1 = ksim_store_obj_rv(out);
    cr_assert_gt(rv1, 0);
    cJSON_Delete(out);
    cr_assert_eq(ksim_store_create(st, "/cm", "ns", "a", obj("a"), NULL, &err), KERR_EXISTS);
    cr_assert_eq(ksim_store_update(st, "/cm", "ns", "a", rv1, obj("a"), &out, NULL), KERR_OK);
    rv2 = ksim_store_obj_rv(out);
    cr_assert_gt(rv2, rv1);
    cJSON_Delete(out);
    again = obj("a");
    cr_assert_eq(ksim_store_update(st, "/cm", "ns", "a", rv1, again, NULL, &err), KERR_CONFLICT,
                 "a stale resourceVersion");
    cr_assert_eq(ksim_store_delete(st, "/cm", "ns", "a", 0, &out, NULL), KERR_OK);
    cr_assert_gt(ksim_store_obj_rv(out), rv2, "a deletion takes a resourceVersion");
    cJSON_Delete(out);
    cr_assert_eq(ksim_store_get(st, "/cm", "ns", "a", &out, NULL), KERR_NOTFOUND);
    cr_assert_eq(ksim_store_count(st), 0);
    ksim_store_free(st);
}

Test(kubesim_store, lists_in_key_order_with_pages)
{
    struct ksim_store *st = NULL;
    struct ksim_store_page p;
    const char *names[] = { "c", "a", "b", "d" };
    size_t i;

    cr_assert_eq(ksim_store_new(NULL, &st, NULL), KERR_OK);
    for (i = 0; i < 4; i++)
        cr_assert_eq(ksim_store_create(st, "/cm", "ns", names[i], obj(names[i]), NULL, NULL),
                     KERR_OK);
    cr_assert_eq(ksim_store_list(st, "/cm", "ns", NULL, NULL, NULL, 3, &p, NULL), KERR_OK);
    cr_assert_eq(cJSON_GetArraySize(p.items), 3);
    cr_assert_str_eq(kjson_get_str(cJSON_GetArrayItem(p.items, 0), "metadata.name"), "a");
    cr_assert_str_eq(p.next_key, "ns/c");
    cr_assert_eq(p.remaining, 1);
    ksim_store_page_release(&p);
    cr_assert_eq(ksim_store_list(st, "/cm", "ns", NULL, NULL, "ns/c", 3, &p, NULL), KERR_OK);
    cr_assert_eq(cJSON_GetArraySize(p.items), 1);
    cr_assert_null(p.next_key);
    ksim_store_page_release(&p);
    cr_assert_eq(ksim_store_list(st, "/cm", "other", NULL, NULL, NULL, 0, &p, NULL), KERR_OK);
    cr_assert_eq(cJSON_GetArraySize(p.items), 0);
    ksim_store_page_release(&p);
    ksim_store_free(st);
}

Test(kubesim_store, watch_history_and_expiry)
{
    struct ksim_store_opts o = { 3, 0 };
    struct ksim_store *st = NULL;
    struct ksim_store_watch *w = NULL;
    struct ksim_store_event ev;
    struct kerr_info err;
    struct timespec dl;
    uint64_t start;
    char name[8];
    int i;

    cr_assert_eq(ksim_store_new(&o, &st, NULL), KERR_OK);
    start = ksim_store_rv(st);
    cr_assert_eq(ksim_store_create(st, "/cm", "ns", "x", obj("x"), NULL, NULL), KERR_OK);
    cr_assert_eq(ksim_store_watch_open(st, "/cm", NULL, start, &w, NULL), KERR_OK);
    ktime_deadline_after(&dl, 100, CLOCK_MONOTONIC);
    cr_assert_eq(ksim_store_watch_next(w, &dl, &ev, NULL), KERR_OK);
    cr_assert_eq(ev.type, KSIM_EV_ADDED);
    ksim_store_event_release(&ev);
    ktime_deadline_after(&dl, 50, CLOCK_MONOTONIC);
    cr_assert_eq(ksim_store_watch_next(w, &dl, &ev, NULL), KERR_TIMEOUT);
    ksim_store_watch_close(w);
    for (i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "y%d", i);
        cr_assert_eq(ksim_store_create(st, "/cm", "ns", name, obj(name), NULL, NULL), KERR_OK);
    }
    cr_assert_eq(ksim_store_watch_open(st, "/cm", NULL, start, &w, &err), KERR_GONE);
    cr_assert_not_null(strstr(err.msg, "too old resource version"));
    cr_assert_eq(ksim_store_watch_open(st, "/cm", NULL, ksim_store_rv(st), &w, NULL), KERR_OK);
    ksim_store_cut_watches(st);
    cr_assert_eq(ksim_store_watch_next(w, NULL, &ev, NULL), KERR_CLOSED);
    ksim_store_watch_close(w);
    ksim_store_free(st);
}

Test(kubesim_patch, strategic_merge_by_keys_and_directives)
{
    cJSON *doc = js("{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"1\"},{\"name\":\"b\","
                    "\"image\":\"1\"}],\"ports\":[{\"containerPort\":80,\"name\":\"http\"}]},"
                    "\"metadata\":{\"finalizers\":[\"x\"],\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}");
    cJSON *patch = js("{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"2\"},{\"name\":\"a\","
                      "\"$patch\":\"delete\"},{\"name\":\"c\",\"image\":\"3\"}]},\"metadata\":{"
                      "\"finalizers\":[\"y\"],\"labels\":{\"a\":null},\"$setElementOrder/"
                      "finalizers\":[\"x\",\"y\"]}}");
    cJSON *out = ksim_patch_strategic(doc, patch);

    cr_assert_not_null(out);
    cr_assert_eq(cJSON_GetArraySize(kjson_get(out, "spec.containers")), 2);
    cr_assert_str_eq(kjson_get_str(out, "spec.containers.0.name"), "b");
    cr_assert_str_eq(kjson_get_str(out, "spec.containers.0.image"), "2");
    cr_assert_str_eq(kjson_get_str(out, "spec.containers.1.name"), "c");
    cr_assert_eq(cJSON_GetArraySize(kjson_get(out, "metadata.finalizers")), 2, "a set union");
    cr_assert_null(kjson_get(out, "metadata.labels.a"));
    cr_assert_str_eq(kjson_get_str(out, "metadata.labels.b"), "2");
    cr_assert_null(kjson_get(out, "metadata.$setElementOrder/finalizers"));
    cJSON_Delete(out);
    cJSON_Delete(patch);
    cJSON_Delete(doc);
}

Test(kubesim_patch, webhooks_merged_by_name_middle_element_too)
{
    cJSON *doc = js("{\"webhooks\":[{\"name\":\"a\",\"n\":1},{\"name\":\"b\",\"n\":2},"
                    "{\"name\":\"c\",\"n\":3}]}");
    cJSON *patch = js("{\"webhooks\":[{\"name\":\"b\",\"ca\":\"x\"}]}");
    cJSON *out = ksim_patch_strategic(doc, patch);

    cr_assert_not_null(out);
    cr_assert_eq(cJSON_GetArraySize(kjson_get(out, "webhooks")), 3);
    cr_assert_str_eq(kjson_get_str(out, "webhooks.1.name"), "b");
    cr_assert_str_eq(kjson_get_str(out, "webhooks.1.ca"), "x");
    cr_assert_eq(kjson_get(out, "webhooks.1.n")->valuedouble, 2);
    cr_assert_str_eq(kjson_get_str(out, "webhooks.2.name"), "c");
    cJSON_Delete(out);
    cJSON_Delete(patch);
    cJSON_Delete(doc);
}

Test(kubesim_patch, retain_keys_and_replace)
{
    cJSON *doc = js("{\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"a\":1}},"
                    "\"tpl\":{\"x\":1,\"y\":2}}");
    cJSON *patch = js("{\"strategy\":{\"$retainKeys\":[\"type\"],\"type\":\"Recreate\"},\"tpl\":"
                      "{\"$patch\":\"replace\",\"z\":3}}");
    cJSON *out = ksim_patch_strategic(doc, patch);

    cr_assert_str_eq(kjson_get_str(out, "strategy.type"), "Recreate");
    cr_assert_null(kjson_get(out, "strategy.rollingUpdate"));
    cr_assert_null(kjson_get(out, "tpl.x"));
    cr_assert_eq(kjson_get(out, "tpl.z")->valuedouble, 3);
    cJSON_Delete(out);
    cJSON_Delete(patch);
    cJSON_Delete(doc);
}

Test(kubesim_patch, content_types)
{
    struct ksim_apierr e;

    cr_assert_eq(ksim_patch_type_of("application/merge-patch+json; charset=utf-8"),
                 KSIM_PATCH_MERGE);
    cr_assert_eq(ksim_patch_type_of("application/json-patch+json"), KSIM_PATCH_JSON);
    cr_assert_eq(ksim_patch_type_of("application/strategic-merge-patch+json"),
                 KSIM_PATCH_STRATEGIC);
    cr_assert_eq(ksim_patch_type_of("application/apply-patch+yaml"), KSIM_PATCH_APPLY);
    cr_assert_eq(ksim_patch_type_of("application/json"), KSIM_PATCH_UNKNOWN);
    cr_assert_eq(ksim_patch_check_type(KSIM_PATCH_STRATEGIC, 1, &e), 415,
                 "custom resources refuse strategic merge");
    cr_assert_null(strstr(e.message, "strategic"));
    cr_assert_eq(ksim_patch_check_type(KSIM_PATCH_STRATEGIC, 0, &e), 0);
}

Test(kubesim_table, human_durations)
{
    const struct {
        long long s;
        const char *want;
    } cases[] = { { 0, "0s" },
                  { 59, "59s" },
                  { 119, "119s" },
                  { 125, "2m5s" },
                  { 600, "10m" },
                  { 3 * 3600, "3h" },
                  { 3 * 3600 + 120, "3h2m" },
                  { 30 * 3600, "30h" },
                  { 50 * 3600, "2d2h" },
                  { 10 * 86400, "10d" },
                  { 800 * 86400LL, "2y70d" } };
    char out[32];
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ksim_table_human_duration(cases[i].s, out, sizeof(out));
        cr_expect_str_eq(out, cases[i].want, "%lld", cases[i].s);
    }
}

Test(kubesim_table, jsonpath_subset)
{
    cJSON *o =
        js("{\"status\":{\"ready\":true,\"conditions\":[{\"type\":\"A\",\"status\":\"False\"},"
           "{\"type\":\"Ready\",\"status\":\"True\"}],\"list\":[1,2]},\"spec\":{\"n\":3}}");

    cr_assert(cJSON_IsTrue(ksim_jpath_eval(o, ".status.ready")));
    cr_assert_str_eq(
        ksim_jpath_eval(o, ".status.conditions[?(@.type==\"Ready\")].status")->valuestring, "True");
    cr_assert_str_eq(ksim_jpath_eval(o, ".status.conditions[?(@.type=='A')].status")->valuestring,
                     "False");
    cr_assert_eq(ksim_jpath_eval(o, ".status.list[1]")->valuedouble, 2);
    cr_assert_eq(ksim_jpath_eval(o, "{.spec.n}")->valuedouble, 3);
    cr_assert_null(ksim_jpath_eval(o, ".status.missing"));
    cr_assert_null(ksim_jpath_eval(o, ".status.conditions[?(@.type==\"Nope\")].status"));
    cJSON_Delete(o);
}

Test(kubesim_table, builds_tables_with_printer_columns)
{
    struct ksim_reg *reg = NULL;
    cJSON *crd = js("{\"metadata\":{\"name\":\"things.example.com\"},\"spec\":{\"group\":"
                    "\"example.com\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"things\","
                    "\"kind\":\"Thing\"},\"versions\":[{\"name\":\"v1\",\"served\":true,"
                    "\"storage\":true,\"additionalPrinterColumns\":[{\"name\":\"Size\",\"type\":"
                    "\"integer\",\"jsonPath\":\".spec.size\"},{\"name\":\"Phase\",\"type\":"
                    "\"string\",\"jsonPath\":\".status.phase\"}]}]}}");
    cJSON *items = js("[{\"metadata\":{\"name\":\"t1\"},\"spec\":{\"size\":3}}]"), *t;
    const struct ksim_rtype *rt;

    cr_assert_eq(ksim_reg_new(&reg, NULL), KERR_OK);
    cr_assert_eq(ksim_reg_add_crd(reg, crd, NULL), KERR_OK);
    rt = ksim_reg_find(reg, "example.com", "v1", "things");
    cr_assert_not_null(rt);
    t = ksim_table_build(rt, items, "7", KSIM_INCLUDE_METADATA, 1);
    cr_assert_str_eq(kjson_get_str(t, "kind"), "Table");
    cr_assert_str_eq(kjson_get_str(t, "columnDefinitions.0.name"), "Name");
    cr_assert_str_eq(kjson_get_str(t, "columnDefinitions.1.name"), "Size");
    cr_assert_str_eq(kjson_get_str(t, "rows.0.cells.0"), "t1");
    cr_assert_eq(kjson_get(t, "rows.0.cells.1")->valuedouble, 3);
    cr_assert(cJSON_IsNull(kjson_get(t, "rows.0.cells.2")), "a missing value is null");
    cr_assert_str_eq(kjson_get_str(t, "rows.0.object.kind"), "PartialObjectMetadata");
    cr_assert(ksim_table_wanted("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
    cr_assert_not(ksim_table_wanted("application/json"));
    cJSON_Delete(t);
    cJSON_Delete(items);
    cJSON_Delete(crd);
    ksim_reg_free(reg);
}

Test(kubesim_registry, crds_and_versions)
{
    struct ksim_reg *reg = NULL;
    struct kerr_info err;
    cJSON *bad = js("{\"metadata\":{\"name\":\"wrong\"},\"spec\":{\"group\":\"example.com\","
                    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"things\",\"kind\":\"Thing\"},"
                    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true}]}}");
    cJSON *clash = js("{\"metadata\":{\"name\":\"statefulsets.apps\"},\"spec\":{\"group\":"
                      "\"apps\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"statefulsets\","
                      "\"kind\":\"X\"},\"versions\":[{\"name\":\"v1\",\"served\":true,"
                      "\"storage\":true}]}}");

    cr_assert_eq(ksim_reg_new(&reg, NULL), KERR_OK);
    cr_assert_eq(ksim_reg_crd_validate(bad, &err), KERR_INVAL);
    cr_assert_not_null(strstr(err.msg, "must be spec.names.plural+\".\"+spec.group"));
    cr_assert_eq(ksim_reg_crd_validate(clash, &err), KERR_INVAL, "apps has no dot");
    cr_assert_lt(ksim_reg_version_cmp("v1", "v1beta1"), 0);
    cr_assert_lt(ksim_reg_version_cmp("v1beta2", "v1beta1"), 0);
    cr_assert_lt(ksim_reg_version_cmp("v1alpha1", "foo"), 0);
    cr_assert_lt(ksim_reg_version_cmp("v2", "v1"), 0);
    cr_assert_not_null(ksim_reg_find_kind(reg, "apps/v1", "StatefulSet"));
    cr_assert_not_null(ksim_reg_find_kind(reg, "v1", "ConfigMap"));
    cr_assert_null(ksim_reg_find_kind(reg, "v2", "ConfigMap"));
    cJSON_Delete(bad);
    cJSON_Delete(clash);
    ksim_reg_free(reg);
}

Test(kubesim_auth, token_file)
{
    struct ksim_auth *a = NULL;
    struct kerr_info err;
    const struct ksim_user *u;

    cr_assert_eq(ksim_auth_new("# comment\n"
                               "t1,alice,1,\"dev,ops\"\n"
                               "t2,system:serviceaccount:kube-system:ctl,2\n",
                               "admin", &a, &err),
                 KERR_OK, "%s", err.msg);
    u = ksim_auth_lookup(a, "Bearer t1");
    cr_assert_not_null(u);
    cr_assert_str_eq(u->name, "alice");
    cr_assert_eq(u->ngroups, 3);
    cr_assert_str_eq(u->groups[1], "ops");
    cr_assert(ksim_auth_in_group(u, "system:authenticated"));
    u = ksim_auth_lookup(a, "Bearer t2");
    cr_assert(ksim_auth_in_group(u, "system:serviceaccounts"));
    cr_assert(ksim_auth_in_group(u, "system:serviceaccounts:kube-system"));
    u = ksim_auth_lookup(a, "Bearer admin");
    cr_assert(ksim_auth_in_group(u, "system:masters"));
    cr_assert_null(ksim_auth_lookup(a, "Bearer nope"));
    cr_assert_null(ksim_auth_lookup(a, "Basic dDE="));
    ksim_auth_free(a);
    cr_assert_eq(ksim_auth_new("only-a-token\n", NULL, &a, &err), KERR_PARSE);
    cr_assert_eq(ksim_auth_new("t,u,1,\"unterminated\n", NULL, &a, &err), KERR_PARSE);
}

/* kubectl 1.32's protobuf body of `kubectl create configmap c1 --from-literal=a=b`. */
static const unsigned char configmap_pb[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, 0x43, 0x6f,
    0x6e, 0x66, 0x69, 0x67, 0x4d, 0x61, 0x70, 0x12, 0x1c, 0x0a, 0x12, 0x0a, 0x02, 0x63,
    0x31, 0x12, 0x00, 0x1a, 0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42,
    0x00, 0x12, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62, 0x1a, 0x00, 0x22, 0x00
};

Test(kubesim_pb, decodes_kubectl_configmap)
{
    cJSON *o = NULL;
    char *txt;

    cr_assert(ksim_pb_content_type("application/vnd.kubernetes.protobuf"));
    cr_assert_eq(ksim_pb_decode(configmap_pb, sizeof(configmap_pb), &o, NULL), KERR_OK);
    txt = cJSON_PrintUnformatted(o);
    cr_assert_str_eq(txt, "{\"metadata\":{\"name\":\"c1\"},\"data\":{\"a\":\"b\"},\"apiVersion\":"
                          "\"v1\",\"kind\":\"ConfigMap\"}");
    free(txt);
    cJSON_Delete(o);
}

/* Bodies encoded by the field numbers of k8s.io/api apps/v1 generated.proto: a DaemonSet
 * (selector, updateStrategy OnDelete, minReadySeconds 7, revisionHistoryLimit 5; status desired
 * 2, ready 1, a Ready condition) and a ReplicaSet (replicas 2, selector, minReadySeconds 3;
 * status replicas 2, observedGeneration 4, ready 1, available 1). */
static const unsigned char daemonset_pb[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x14, 0x0a, 0x07, 0x61, 0x70, 0x70, 0x73, 0x2f, 0x76, 0x31, 0x12,
    0x09, 0x44, 0x61, 0x65, 0x6d, 0x6f, 0x6e, 0x53, 0x65, 0x74, 0x12, 0x40, 0x0a, 0x07, 0x0a, 0x05,
    0x61, 0x67, 0x65, 0x6e, 0x74, 0x12, 0x20, 0x0a, 0x0e, 0x0a, 0x0c, 0x0a, 0x03, 0x61, 0x70, 0x70,
    0x12, 0x05, 0x61, 0x67, 0x65, 0x6e, 0x74, 0x1a, 0x0a, 0x0a, 0x08, 0x4f, 0x6e, 0x44, 0x65, 0x6c,
    0x65, 0x74, 0x65, 0x20, 0x07, 0x30, 0x05, 0x1a, 0x13, 0x18, 0x02, 0x20, 0x01, 0x52, 0x0d, 0x0a,
    0x05, 0x52, 0x65, 0x61, 0x64, 0x79, 0x12, 0x04, 0x54, 0x72, 0x75, 0x65, 0x1a, 0x00, 0x22, 0x00
};

static const unsigned char replicaset_pb[] = {
    0x6b, 0x38, 0x73, 0x00, 0x0a, 0x15, 0x0a, 0x07, 0x61, 0x70, 0x70, 0x73, 0x2f, 0x76, 0x31,
    0x12, 0x0a, 0x52, 0x65, 0x70, 0x6c, 0x69, 0x63, 0x61, 0x53, 0x65, 0x74, 0x12, 0x29, 0x0a,
    0x07, 0x0a, 0x05, 0x66, 0x72, 0x6f, 0x6e, 0x74, 0x12, 0x14, 0x08, 0x02, 0x12, 0x0e, 0x0a,
    0x0c, 0x0a, 0x03, 0x61, 0x70, 0x70, 0x12, 0x05, 0x66, 0x72, 0x6f, 0x6e, 0x74, 0x20, 0x03,
    0x1a, 0x08, 0x08, 0x02, 0x18, 0x04, 0x20, 0x01, 0x28, 0x01, 0x1a, 0x00, 0x22, 0x00
};

Test(kubesim_pb, decodes_apps_workloads)
{
    cJSON *o = NULL;

    cr_assert_eq(ksim_pb_decode(daemonset_pb, sizeof(daemonset_pb), &o, NULL), KERR_OK);
    cr_assert_str_eq(kjson_get_str(o, "kind"), "DaemonSet");
    cr_assert_str_eq(kjson_get_str(o, "metadata.name"), "agent");
    cr_assert_str_eq(kjson_get_str(o, "spec.selector.matchLabels.app"), "agent");
    cr_assert_str_eq(kjson_get_str(o, "spec.updateStrategy.type"), "OnDelete");
    cr_assert_eq(jsonfix_int(o, "spec.minReadySeconds"), 7);
    cr_assert_eq(jsonfix_int(o, "spec.revisionHistoryLimit"), 5);
    cr_assert_eq(jsonfix_int(o, "status.desiredNumberScheduled"), 2);
    cr_assert_eq(jsonfix_int(o, "status.numberReady"), 1);
    cr_assert_str_eq(
        kjson_get_str(cJSON_GetArrayItem(kjson_get(o, "status.conditions"), 0), "type"), "Ready");
    cJSON_Delete(o);
    o = NULL;
    cr_assert_eq(ksim_pb_decode(replicaset_pb, sizeof(replicaset_pb), &o, NULL), KERR_OK);
    cr_assert_str_eq(kjson_get_str(o, "kind"), "ReplicaSet");
    cr_assert_eq(jsonfix_int(o, "spec.replicas"), 2);
    cr_assert_str_eq(kjson_get_str(o, "spec.selector.matchLabels.app"), "front");
    cr_assert_eq(jsonfix_int(o, "spec.minReadySeconds"), 3);
    cr_assert_eq(jsonfix_int(o, "status.replicas"), 2);
    cr_assert_eq(jsonfix_int(o, "status.observedGeneration"), 4);
    cr_assert_eq(jsonfix_int(o, "status.readyReplicas"), 1);
    cr_assert_eq(jsonfix_int(o, "status.availableReplicas"), 1);
    cJSON_Delete(o);
}

Test(kubesim_pb, refuses_garbage)
{
    unsigned char truncated[sizeof(configmap_pb) - 10];
    cJSON *o = NULL;

    memcpy(truncated, configmap_pb, sizeof(truncated));
    cr_assert_neq(ksim_pb_decode(truncated, sizeof(truncated), &o, NULL), KERR_OK);
    cr_assert_null(o);
    cr_assert_neq(ksim_pb_decode((const unsigned char *)"{}", 2, &o, NULL), KERR_OK);
}

Test(kubesim_apierr, status_objects)
{
    struct ksim_apierr e;
    cJSON *st = NULL;

    ksim_apierr_conflict(&e, "apps", "statefulsets", "web", "the object has been modified");
    cr_assert_eq(ksim_apierr_to_json(&e, &st), KERR_OK);
    cr_assert_str_eq(kjson_get_str(st, "message"),
                     "Operation cannot be fulfilled on statefulsets.apps \"web\": the object has "
                     "been modified");
    cr_assert_str_eq(kjson_get_str(st, "status"), "Failure");
    cr_assert_eq(kjson_get(st, "code")->valuedouble, 409);
    cJSON_Delete(st);
    ksim_apierr_not_found(&e, "", "pods", "p");
    cr_assert_str_eq(e.message, "pods \"p\" not found");
}
