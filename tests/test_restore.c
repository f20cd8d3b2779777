/* Tests of webhook/restore: the restoring rules for Etcd objects, one row per rule and message. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/testutil.h"
#include "webhook/restore.h"
#include "tests/support/whdiff.h"
#include "webhook/wh_dispatch.h"

#define RESTORING    "\"etcd-warden.io/restoring\":\"\""
#define ALLOW_DELETE "\"etcd-warden.io/allow-delete-while-restoring\":\"yes\""
#define SPEC_OK      "\"spec\":{\"replicas\":3,\"etcd\":{},\"backup\":{\"store\":{\"prefix\":\"p\"}}}"
#define SPEC_EDITED \
    "\"spec\":{\"replicas\":5,\"etcd\":{},\"backup\":{\"store\":{\"prefix\":\"p\"}}}"
#define SPEC_REORDERD \
    "\"spec\":{\"backup\":{\"store\":{\"prefix\":\"p\"}},\"etcd\":{},\"replicas\":3}"
#define ETCD(labels, spec)                                                                         \
    "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"labels\":{" labels "}}," spec \
    "}"

#define SPEC_CHANGE_MSG "\nspec changes not allowed while etcd-warden.io/restoring label exists"
#define DELETE_MSG                                                              \
    "\ndelete not allowed while etcd-warden.io/restoring label exists, unless " \
    "etcd-warden.io/allow-delete-while-restoring label also exists"
#define CANNOT "etcd-warden.io/restoring label cannot be removed: "

struct row {
    const char *title;
    const char *op;
    const char *old_object, *object; /* NULL = absent */
    int allowed, code;
    const char *message; /* exact, or NULL when any message will do */
};

static const struct row rows[] = {
    { "create", "CREATE", NULL, ETCD(RESTORING, SPEC_OK), 1, 200, "operation CREATE is allowed" },
    { "delete of a live etcd", "DELETE", ETCD("", SPEC_OK), NULL, 1, 200, NULL },
    { "delete while restoring", "DELETE", ETCD(RESTORING, SPEC_OK), NULL, 0, 403, DELETE_MSG },
    { "delete while restoring with the allow label", "DELETE",
      ETCD(RESTORING "," ALLOW_DELETE, SPEC_OK), NULL, 1, 200, NULL },
    { "allow label added while restoring", "UPDATE", ETCD(RESTORING, SPEC_OK),
      ETCD(RESTORING "," ALLOW_DELETE, SPEC_OK), 1, 200, NULL },
    { "spec change while restoring", "UPDATE", ETCD(RESTORING, SPEC_OK),
      ETCD(RESTORING, SPEC_EDITED), 0, 403, SPEC_CHANGE_MSG },
    { "spec change of a live etcd", "UPDATE", ETCD("", SPEC_OK), ETCD("", SPEC_EDITED), 1, 200,
      NULL },
    { "same spec in another order", "UPDATE", ETCD(RESTORING, SPEC_OK),
      ETCD(RESTORING, SPEC_REORDERD), 1, 200, NULL },
    { "metadata edit while restoring", "UPDATE", ETCD(RESTORING, SPEC_OK),
      ETCD(RESTORING ",\"team\":\"a\"", SPEC_OK), 1, 200, NULL },
    { "label removed from a valid etcd", "UPDATE", ETCD(RESTORING, SPEC_OK), ETCD("", SPEC_OK), 1,
      200, "Etcd shoot/etcd-main leaves the restoring state" },
    { "label removed together with a spec change", "UPDATE", ETCD(RESTORING, SPEC_OK),
      ETCD("", SPEC_EDITED), 0, 403, SPEC_CHANGE_MSG },
    { "label removed, no replicas", "UPDATE",
      ETCD(RESTORING, "\"spec\":{\"etcd\":{},\"backup\":{}}"),
      ETCD("", "\"spec\":{\"etcd\":{},\"backup\":{}}"), 0, 403,
      "\n" CANNOT "spec.replicas is missing" },
    { "label removed, nothing valid", "UPDATE", ETCD(RESTORING, "\"spec\":{}"),
      ETCD("", "\"spec\":{}"), 0, 403,
      "\n" CANNOT "spec.replicas is missing\n" CANNOT "spec.etcd is missing\n" CANNOT
      "spec.backup is missing" },
    { "label removed, store without prefix", "UPDATE",
      ETCD(RESTORING, "\"spec\":{\"replicas\":1,\"etcd\":{},\"backup\":{\"store\":{}}}"),
      ETCD("", "\"spec\":{\"replicas\":1,\"etcd\":{},\"backup\":{\"store\":{}}}"), 0, 403,
      "\n" CANNOT "spec.backup.store.prefix is missing although a store is set" },
    { "label removed, backup without store", "UPDATE",
      ETCD(RESTORING, "\"spec\":{\"replicas\":0,\"etcd\":{},\"backup\":{}}"),
      ETCD("", "\"spec\":{\"replicas\":0,\"etcd\":{},\"backup\":{}}"), 1, 200, NULL },
    { "label added to a live etcd", "UPDATE", ETCD("", SPEC_OK), ETCD(RESTORING, SPEC_OK), 1, 200,
      NULL },
    { "update without old object", "UPDATE", NULL, ETCD("", SPEC_OK), 0, 400, NULL },
    { "delete of a string", "DELETE", "\"x\"", NULL, 0, 400, NULL },
    { "restoring update without object", "UPDATE", ETCD(RESTORING, SPEC_OK), NULL, 0, 400, NULL },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static void add_raw(cJSON *req, const char *key, const char *json)
{
    cJSON *v;

    if (!json)
        return;
    v = cJSON_Parse(json);
    cr_assert_not_null(v, "bad row JSON %s", json);
    cJSON_AddItemToObject(req, key, v);
}

ParameterizedTestParameters(restore, rows)
{
    static size_t idx[NROWS];

    return testutil_row_params(idx, NROWS);
}

ParameterizedTest(size_t *i, restore, rows)
{
    const struct row *t = &rows[*i];
    cJSON *root = cJSON_CreateObject(), *req = cJSON_AddObjectToObject(root, "request");
    struct review_req r;
    struct review_resp resp;
    struct kerr_info err;
    char *body;

    cJSON_AddStringToObject(req, "uid", "u");
    cJSON_AddStringToObject(req, "operation", t->op);
    add_raw(req, "oldObject", t->old_object);
    add_raw(req, "object", t->object);
    body = cJSON_PrintUnformatted(root);
    review_req_init(&r);
    review_resp_init(&resp);
    cr_assert_eq(review_req_decode(&r, body, strlen(body), &err), KERR_OK, "%s", err.msg);
    whdiff_same(NULL, NULL, WH_HOOK_ETCD, body);
    cr_assert_eq(restore_decide(&r, &resp, &err), KERR_OK);
    cr_expect_eq(resp.allowed, t->allowed, "%s: allowed", t->title);
    cr_expect_eq(resp.code, t->code, "%s: code %d", t->title, resp.code);
    cr_expect_str_eq(resp.reason, t->code == 403 ? "Forbidden" : "", "%s: reason", t->title);
    cr_assert_not_null(resp.message);
    if (t->message)
        cr_expect_str_eq(resp.message, t->message, "%s", t->title);
    review_resp_release(&resp);
    review_req_release(&r);
    free(body);
    cJSON_Delete(root);
}

Test(restore, json_equal)
{
    cJSON *a = cJSON_Parse("{\"a\":1,\"b\":[1,{\"c\":null,\"d\":\"x\"}],\"e\":true}");
    cJSON *b = cJSON_Parse("{\"e\":true,\"b\":[1,{\"d\":\"x\",\"c\":null}],\"a\":1.0}");
    cJSON *c = cJSON_Parse("{\"e\":true,\"b\":[{\"d\":\"x\",\"c\":null},1],\"a\":1}");
    cJSON *d = cJSON_Parse("{\"a\":1,\"b\":[1,{\"c\":null,\"d\":\"x\"}],\"e\":false}");
    cJSON *e = cJSON_Parse("{\"a\":1,\"b\":[1,{\"c\":null,\"d\":\"x\"}],\"e\":true,\"f\":0}");
    cJSON *n = cJSON_CreateNull();

    cr_expect(restore_json_equal(a, b));
    cr_expect(restore_json_equal(b, a));
    cr_expect_not(restore_json_equal(a, c));
    cr_expect_not(restore_json_equal(a, d));
    cr_expect_not(restore_json_equal(a, e));
    cr_expect_not(restore_json_equal(e, a));
    cr_expect(restore_json_equal(NULL, NULL));
    cr_expect(restore_json_equal(NULL, n));
    cr_expect_not(restore_json_equal(a, NULL));
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
    cJSON_Delete(d);
    cJSON_Delete(e);
    cJSON_Delete(n);
}

/* 100k members in opposite orders compare in well under a second (not quadratically). */
Test(restore, json_equal_is_not_quadratic, .timeout = 10)
{
    cJSON *a = cJSON_CreateObject(), *b = cJSON_CreateObject();
    char key[32];
    int i, n = 100000;

    for (i = 0; i < n; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        cJSON_AddNumberToObject(a, key, i);
        snprintf(key, sizeof(key), "k%d", n - 1 - i);
        cJSON_AddNumberToObject(b, key, n - 1 - i);
    }
    cr_expect(restore_json_equal(a, b));
    cJSON_ReplaceItemInObject(b, "k5", cJSON_CreateNumber(-1));
    cr_expect_not(restore_json_equal(a, b));
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* etcds/scale (`kubectl scale etcd`): a Scale shows no labels, the Etcd is looked up. */
static char *scale_review(const char *name, int from, int to)
{
    char *body = malloc(1024);

    cr_assert_not_null(body);
    snprintf(body, 1024,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"u\",\"kind\":{\"group\":\"autoscaling\",\"version\":\"v1\",\"kind\":"
             "\"Scale\"},\"resource\":{\"group\":\"druid.gardener.cloud\",\"version\":"
             "\"v1alpha1\",\"resource\":\"etcds\"},\"subResource\":\"scale\",\"name\":\"%s\","
             "\"namespace\":\"shoot\",\"operation\":\"UPDATE\",\"userInfo\":{\"username\":"
             "\"alice\"},\"object\":{\"kind\":\"Scale\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"shoot\"},\"spec\":{\"replicas\":%d}},\"oldObject\":{\"kind\":"
             "\"Scale\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"shoot\"},\"spec\":{"
             "\"replicas\":%d}}}}",
             name, name, to, name, from);
    return body;
}

Test(restore, etcds_scale_of_a_restoring_etcd_is_refused_as_a_patch_is)
{
    static const struct {
        const char *name;
        int from, to, allowed;
        const char *message;
    } srows[] = {
        { "etcd-main", 3, 5, 0, SPEC_CHANGE_MSG }, /* restoring */
        { "etcd-main", 3, 0, 0, SPEC_CHANGE_MSG },
        { "etcd-main", 3, 3, 1, "replicas of Etcd shoot/etcd-main unchanged" },
        { "etcd-live", 3, 0, 1, "Etcd shoot/etcd-live is not restoring" },
        { "etcd-gone", 3, 0, 1, "Etcd shoot/etcd-gone not found" },
    };
    static const char *const none[] = { NULL };
    struct protect_config cfg = { none, 0, none, 0, NULL, NULL, 0, NULL };
    cJSON *etcds = cJSON_Parse(
        "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"u1\","
        "\"labels\":{" RESTORING "}}," SPEC_OK "},{\"metadata\":{\"namespace\":\"shoot\","
        "\"name\":\"etcd-live\",\"uid\":\"u2\"}," SPEC_OK "}]");
    struct lookup_mem mem = { 0 };
    struct wh_dispatch d;
    struct lookup lk;
    struct kerr_info err;
    size_t i;

    cr_assert_not_null(etcds);
    mem.etcds = etcds;
    lookup_mem_bind(&mem, &lk);
    cr_assert_eq(wh_dispatch_init(&d, &cfg, &lk, NULL, &err), KERR_OK, "%s", err.msg);
    for (i = 0; i < sizeof(srows) / sizeof(srows[0]); i++) {
        char *body = scale_review(srows[i].name, srows[i].from, srows[i].to);
        bool allowed = false;
        cJSON *doc = whdiff_answer(&d, &cfg, &mem, WH_HOOK_ETCD, body, &allowed);

        cr_expect_eq(allowed, srows[i].allowed != 0, "row %zu: allowed", i);
        cr_expect_str_eq(kjson_get_str(doc, "response.status.message"), srows[i].message, "row %zu",
                         i);
        cJSON_Delete(doc);
        free(body);
    }
    cJSON_Delete(etcds);
}
