/*
 * Tests of webhook/mutate: the restoring patch on Etcd CREATE and the removal
 * of stale owner references on component CREATE. Every patch is applied to
 * the request's object to check that it works on the document it is for.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdlib.h>
#include <string.h>

#include "common/jpatch.h"
#include "common/kjson.h"
#include "common/tlsx.h"
#include "tests/support/testutil.h"
#include "webhook/mutate.h"
#include "tests/support/whdiff.h"

#define BACKUP_ANN "\"etcd-warden.io/status-backup-exists\":\"true\""
#define LIVE_ETCD \
    "[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"new-uid\"}}]"
#define REF(name, uid)                                                                     \
    "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\",\"name\":\"" name \
    "\",\"uid\":\"" uid "\",\"controller\":true}"
#define FOREIGN "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"x\",\"uid\":\"f\"}"
#define COMPONENT(refs)                                                                 \
    "{\"metadata\":{\"name\":\"etcd-main-config\",\"namespace\":\"shoot\",\"labels\":{" \
    "\"app.kubernetes.io/managed-by\":\"etcd-druid\",\"app.kubernetes.io/part-of\":"    \
    "\"etcd-main\"},\"ownerReferences\":[" refs "]}}"

struct row {
    const char *title;
    const char *op;
    const char *group, *kind;
    const char *object;
    const char *etcds; /* JSON array, or "fail" */
    int code;
    int patched;
    const char *checks[4]; /* "path=value" on the patched object, or "!path" for absent */
};

static const struct row rows[] = {
    { "etcd without labels",
      "CREATE",
      "druid.gardener.cloud",
      "Etcd",
      "{\"metadata\":{\"name\":\"etcd-main\",\"annotations\":{" BACKUP_ANN "}}}",
      "[]",
      200,
      1,
      { "metadata.labels[etcd-warden.io/restoring]=",
        "metadata.annotations[druid.gardener.cloud/suspend-etcd-spec-reconcile]=true",
        "metadata.annotations[etcd-warden.io/status-backup-exists]=true", NULL } },
    { "etcd with empty labels",
      "CREATE",
      "druid.gardener.cloud",
      "Etcd",
      "{\"metadata\":{\"name\":\"e\",\"labels\":{},\"annotations\":{" BACKUP_ANN "}}}",
      "[]",
      200,
      1,
      { "metadata.labels[etcd-warden.io/restoring]=",
        "metadata.annotations[etcd-warden.io/suspend-added]=true", NULL } },
    { "etcd with null labels",
      "CREATE",
      "druid.gardener.cloud",
      "Etcd",
      "{\"metadata\":{\"name\":\"e\",\"labels\":null,\"annotations\":{" BACKUP_ANN "}}}",
      "[]",
      200,
      1,
      { "metadata.labels[etcd-warden.io/restoring]=", NULL } },
    { "etcd with labels",
      "CREATE",
      "druid.gardener.cloud",
      "Etcd",
      "{\"metadata\":{\"name\":\"e\",\"labels\":{\"a/b~c\":\"1\"},\"annotations\":{"
      "\"etcd-warden.io/status-backup-exists\":\"false\"}}}",
      "[]",
      200,
      1,
      { "metadata.labels[etcd-warden.io/restoring]=", "metadata.labels[a/b~c]=1",
        "metadata.annotations[druid.gardener.cloud/suspend-etcd-spec-reconcile]=true", NULL } },
    { "etcd already marked",
      "CREATE",
      "druid.gardener.cloud",
      "Etcd",
      "{\"metadata\":{\"name\":\"e\",\"labels\":{\"etcd-warden.io/restoring\":\"x\"},"
      "\"annotations\":{" BACKUP_ANN
      ",\"druid.gardener.cloud/suspend-etcd-spec-reconcile\":\"y\"}}}",
      "[]",
      200,
      0,
      { NULL } },
    { "fresh etcd",
      "CREATE",
      "druid.gardener.cloud",
      "Etcd",
      "{\"metadata\":{\"name\":\"e\",\"annotations\":{\"a\":\"b\"}}}",
      "[]",
      200,
      0,
      { NULL } },
    { "etcd update without an old object is not mutated",
      "UPDATE",
      "druid.gardener.cloud",
      "Etcd",
      "{\"metadata\":{\"name\":\"e\",\"annotations\":{" BACKUP_ANN "}}}",
      "[]",
      200,
      0,
      { NULL } },
    { "stale reference dropped, foreign kept",
      "CREATE",
      "",
      "ConfigMap",
      COMPONENT(REF("etcd-main", "old-uid") "," FOREIGN),
      LIVE_ETCD,
      200,
      1,
      { "metadata.ownerReferences[0].kind=ConfigMap", "!metadata.ownerReferences[1]", NULL } },
    { "only reference dropped",
      "CREATE",
      "",
      "Service",
      COMPONENT(REF("etcd-main", "old-uid")),
      LIVE_ETCD,
      200,
      1,
      { "!metadata.ownerReferences", "metadata.name=etcd-main-config", NULL } },
    { "reference to the live etcd kept",
      "CREATE",
      "",
      "Service",
      COMPONENT(REF("etcd-main", "new-uid")),
      LIVE_ETCD,
      200,
      0,
      { NULL } },
    { "reference while no etcd exists",
      "CREATE",
      "",
      "Service",
      COMPONENT(REF("etcd-main", "new-uid") "," REF("other", "o")),
      "[]",
      200,
      1,
      { "metadata.ownerReferences[0].name=other", "!metadata.ownerReferences[1]", NULL } },
    { "etcd lookup fails",
      "CREATE",
      "",
      "Service",
      COMPONENT(REF("etcd-main", "a")),
      "fail",
      500,
      0,
      { NULL } },
    { "unmanaged object",
      "CREATE",
      "",
      "Service",
      "{\"metadata\":{\"name\":\"s\",\"ownerReferences\":[" REF("etcd-main", "a") "]}}",
      "fail",
      200,
      0,
      { NULL } },
    { "statefulset and its claim templates",
      "CREATE",
      "apps",
      "StatefulSet",
      "{\"metadata\":{\"name\":\"etcd-main\",\"labels\":{\"app.kubernetes.io/managed-by\":"
      "\"etcd-druid\",\"app.kubernetes.io/part-of\":\"etcd-main\"},\"ownerReferences\":[" REF(
          "etcd-main", "old") "]},\"spec\":{\"volumeClaimTemplates\":[{\"metadata\":{\"name\":"
                              "\"a\"}},{\"metadata\":{\"name\":\"b\",\"ownerReferences\":[" REF(
                                  "etcd-main", "old") "," FOREIGN "]}}]}}",
      LIVE_ETCD,
      200,
      1,
      { "!metadata.ownerReferences",
        "spec.volumeClaimTemplates[1].metadata.ownerReferences[0].uid=f",
        "!spec.volumeClaimTemplates[1].metadata.ownerReferences[1]", NULL } },
    { "status backup with a stale owner reference",
      "CREATE",
      "etcd-warden.io",
      "EtcdStatusBackup",
      "{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\",\"ownerReferences\":[" REF(
          "etcd-main", "old") "," FOREIGN "]}}",
      LIVE_ETCD,
      200,
      1,
      { "metadata.ownerReferences[0].uid=f", "!metadata.ownerReferences[1]", NULL } },
    { "status backup owned by the live etcd",
      "CREATE",
      "etcd-warden.io",
      "EtcdStatusBackup",
      "{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\",\"ownerReferences\":[" REF(
          "etcd-main", "new-uid") "]}}",
      LIVE_ETCD,
      200,
      0,
      { NULL } },
    { "status backup when the etcd lookup fails",
      "CREATE",
      "etcd-warden.io",
      "EtcdStatusBackup",
      "{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\",\"ownerReferences\":[" REF(
          "etcd-main", "old") "]}}",
      "fail",
      500,
      0,
      { NULL } },
    { "object that is not an object", "CREATE", "", "Service", "[1]", "[]", 400, 0, { NULL } },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static void check(const cJSON *doc, const char *spec, const char *title)
{
    char path[256];
    const char *eq = strchr(spec, '=');
    size_t n;

    if (spec[0] == '!') {
        cr_expect_null(kjson_get(doc, spec + 1), "%s: %s present", title, spec + 1);
        return;
    }
    cr_assert_not_null(eq);
    n = (size_t)(eq - spec);
    memcpy(path, spec, n);
    path[n] = '\0';
    cr_expect_str_eq(kjson_get_str(doc, path) ? kjson_get_str(doc, path) : "(absent)", eq + 1,
                     "%s: %s", title, path);
}

/* An AdmissionReview body (OWNED by the caller, free()) of op on group/kind; old may be NULL. */
static char *review_body(const char *op, const char *group, const char *kind, const char *user,
                         const char *obj, const char *old)
{
    cJSON *root = cJSON_CreateObject(), *req = cJSON_AddObjectToObject(root, "request"), *k;
    char *body;

    cJSON_AddStringToObject(req, "uid", "u");
    cJSON_AddStringToObject(req, "operation", op);
    cJSON_AddStringToObject(req, "namespace", "shoot");
    if (user) {
        cJSON_AddStringToObject(req, "name", "etcd-main");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "userInfo"), "username", user);
    }
    k = cJSON_AddObjectToObject(req, "kind");
    cJSON_AddStringToObject(k, "group", group);
    cJSON_AddStringToObject(k, "kind", kind);
    cJSON_AddItemToObject(req, "object", cJSON_Parse(obj));
    if (old)
        cJSON_AddItemToObject(req, "oldObject", cJSON_Parse(old));
    body = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    cr_assert_not_null(body);
    return body;
}

/* Decode body into r and answer it into resp (both to be released), with the lookups of mem. */
static void answer(const struct protect_config *cfg, struct lookup_mem *mem, const char *body,
                   struct review_req *r, struct review_resp *resp)
{
    struct lookup lk;
    struct kerr_info err;

    lookup_mem_bind(mem, &lk);
    review_req_init(r);
    review_resp_init(resp);
    cr_assert_eq(review_req_decode(r, body, strlen(body), &err), KERR_OK, "%s", err.msg);
    whdiff_same(cfg, mem, WH_HOOK_MUTATE, body);
    cr_assert_eq(mutate_decide(cfg, &lk, r, resp, &err), KERR_OK, "%s", err.msg);
}

/* resp's patch applied to r's object (OWNED by the caller). */
static cJSON *patched_object(const struct review_req *r, const struct review_resp *resp,
                             const char *title)
{
    cJSON *ops = cJSON_Parse(resp->patch), *patched = NULL;
    struct kerr_info err;

    cr_assert_eq(jpatch_apply(r->object, ops, &patched, &err), KERR_OK, "%s: %s", title, err.msg);
    cJSON_Delete(ops);
    return patched;
}

ParameterizedTestParameters(mutate, rows)
{
    static size_t idx[NROWS];

    return testutil_row_params(idx, NROWS);
}

ParameterizedTest(size_t *i, mutate, rows)
{
    const struct row *t = &rows[*i];
    cJSON *etcds = NULL, *patched = NULL;
    struct lookup_mem mem = { 0 };
    struct review_req r;
    struct review_resp resp;
    char *body;
    size_t j;

    body = review_body(t->op, t->group, t->kind, NULL, t->object, NULL);
    if (strcmp(t->etcds, "fail") == 0)
        mem.fail = KERR_HTTP;
    else
        etcds = cJSON_Parse(t->etcds);
    mem.etcds = etcds;
    answer(NULL, &mem, body, &r, &resp);
    cr_expect_eq(resp.code, t->code, "%s: code %d", t->title, resp.code);
    cr_expect_eq(resp.allowed, t->code == 200, "%s: allowed", t->title);
    cr_assert_not_null(resp.message);
    cr_expect_eq(resp.patch != NULL, t->patched, "%s: patch %s", t->title,
                 resp.patch ? resp.patch : "none");
    if (resp.patch) {
        patched = patched_object(&r, &resp, t->title);
        for (j = 0; j < 4 && t->checks[j]; j++)
            check(patched, t->checks[j], t->title);
    }
    cJSON_Delete(patched);
    cJSON_Delete(etcds);
    review_resp_release(&resp);
    review_req_release(&r);
    free(body);
}

#define RESTORING_OLD                                                            \
    "{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\",\"labels\":{" \
    "\"etcd-warden.io/restoring\":\"v\",\"role\":\"main\"},\"annotations\":{"    \
    "\"gardener.cloud/timestamp\":\"1\"}},\"spec\":{\"replicas\":3}}"

/* The mutating answer to an Etcd UPDATE from old to obj by user (cfg: CTL is the controller). */
static void update_case(const char *title, const char *user, const char *old, const char *obj,
                        const char *want_label)
{
    static const char *const ctls[] = { "system:serviceaccount:w:warden-controller" };
    static const struct protect_config cfg = { NULL, 0, NULL, 0, NULL, ctls, 1, NULL };
    cJSON *patched = NULL;
    struct lookup_mem mem = { 0 };
    struct review_req r;
    struct review_resp resp;
    char *body;

    body = review_body("UPDATE", "druid.gardener.cloud", "Etcd", user, obj, old);
    answer(&cfg, &mem, body, &r, &resp);
    cr_expect(resp.allowed, "%s", title);
    cr_expect_eq(resp.patch != NULL, want_label != NULL, "%s: patch %s", title,
                 resp.patch ? resp.patch : "none");
    if (resp.patch) {
        patched = patched_object(&r, &resp, title);
        check(patched, want_label, title);
        cr_expect(resp.n_warnings == 1 && strstr(resp.warnings[0], "kept: it was removed "
                                                                   "together with other changes"),
                  "%s: warning", title);
    }
    cJSON_Delete(patched);
    review_resp_release(&resp);
    review_req_release(&r);
    free(body);
}

/*
 * gardenlet's reconcile writes the Etcd's labels whole ({role, gardener.cloud/role}) with a new
 * timestamp annotation: on a restoring Etcd that would end the restore; the label is put back.
 */
Test(mutate, restoring_label_kept_when_removed_with_other_changes)
{
    const char *person = "alice";

    update_case("gardenlet's labels and timestamp", person, RESTORING_OLD,
                "{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\",\"labels\":{"
                "\"role\":\"main\",\"gardener.cloud/role\":\"controlplane\"},\"annotations\":{"
                "\"gardener.cloud/timestamp\":\"2\"}},\"spec\":{\"replicas\":3}}",
                "metadata.labels[etcd-warden.io/restoring]=v");
    update_case("all labels dropped", person, RESTORING_OLD,
                "{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\",\"annotations\":{"
                "\"gardener.cloud/timestamp\":\"2\"}},\"spec\":{\"replicas\":3}}",
                "metadata.labels[etcd-warden.io/restoring]=v");
    update_case("removed alone: the restore ends by hand", person, RESTORING_OLD,
                "{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\",\"labels\":{"
                "\"role\":\"main\"},\"annotations\":{\"gardener.cloud/timestamp\":\"1\"}},"
                "\"spec\":{\"replicas\":3}}",
                NULL);
    update_case("kept", person, RESTORING_OLD, RESTORING_OLD, NULL);
    update_case("warden-controller", "system:serviceaccount:w:warden-controller", RESTORING_OLD,
                "{\"metadata\":{\"name\":\"etcd-main\",\"namespace\":\"shoot\",\"labels\":{"
                "\"role\":\"main\"}},\"spec\":{\"replicas\":3}}",
                NULL);
}
