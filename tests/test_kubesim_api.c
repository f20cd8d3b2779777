/* kube-sim object semantics and errors, through its HTTPS API (libcurl). */
#include "tests/kube-sim/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

static struct ksim_harness *h;

static void setup(void)
{
    h = ksimfix_start(NULL);
}

static void teardown(void)
{
    ksim_harness_stop(h);
}

TestSuite(kubesim_api, .init = setup, .fini = teardown, .timeout = 60);

static const char sts_json[] =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\","
    "\"labels\":{\"app\":\"web\"}},\"spec\":{\"replicas\":2,\"selector\":{\"matchLabels\":{"
    "\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{"
    "\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}}}";

static const char *sts_path = "/apis/apps/v1/namespaces/default/statefulsets";

static cJSON *create_cm(const char *name, const char *extra_meta)
{
    char body[1024];
    long code;
    cJSON *j;

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"%s%s},"
             "\"data\":{\"k\":\"v\"}}",
             name, extra_meta ? "," : "", extra_meta ? extra_meta : "");
    j = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, body, &code);
    cr_assert_eq(code, 201, "create %s: %ld", name, code);
    return j;
}

Test(kubesim_api, create_fills_server_fields)
{
    cJSON *cm = create_cm("c1", NULL), *sts;
    long code;

    cr_assert_eq(strlen(jsonfix_str(cm, "metadata.uid")), 36);
    cr_assert_eq(strlen(jsonfix_str(cm, "metadata.creationTimestamp")), 20);
    cr_assert(strtoull(jsonfix_str(cm, "metadata.resourceVersion"), NULL, 10) > 0);
    cr_assert_str_eq(jsonfix_str(cm, "metadata.namespace"), "default");
    cr_assert_null(kjson_get(cm, "metadata.generation"), "configmaps have no generation");
    sts = ksimfix_call(h, "POST", sts_path, NULL, sts_json, &code);
    cr_assert_eq(code, 201);
    cr_assert_eq(jsonfix_int(sts, "metadata.generation"), 1);
    cr_assert(strtoull(jsonfix_str(sts, "metadata.resourceVersion"), NULL, 10) >
                  strtoull(jsonfix_str(cm, "metadata.resourceVersion"), NULL, 10),
              "one global resourceVersion counter");
    cr_assert_eq(jsonfix_int(sts, "status.replicas"), 0, "a new StatefulSet reports 0 replicas");
    cJSON_Delete(cm);
    cJSON_Delete(sts);
}

Test(kubesim_api, create_twice_is_already_exists)
{
    cJSON *st;
    long code;

    cJSON_Delete(ksimfix_call(h, "POST", sts_path, NULL, sts_json, &code));
    st = ksimfix_call(h, "POST", sts_path, NULL, sts_json, &code);
    cr_assert_eq(code, 409);
    cr_assert_str_eq(jsonfix_str(st, "kind"), "Status");
    cr_assert_str_eq(jsonfix_str(st, "reason"), "AlreadyExists");
    cr_assert_str_eq(jsonfix_str(st, "message"), "statefulsets.apps \"web\" already exists");
    cr_assert_str_eq(jsonfix_str(st, "details.name"), "web");
    cr_assert_str_eq(jsonfix_str(st, "details.kind"), "statefulsets");
    cJSON_Delete(st);
}

Test(kubesim_api, missing_object_is_not_found)
{
    long code;
    cJSON *st = ksimfix_call(h, "GET", "/apis/apps/v1/namespaces/default/statefulsets/nope", NULL,
                             NULL, &code);

    cr_assert_eq(code, 404);
    cr_assert_str_eq(jsonfix_str(st, "reason"), "NotFound");
    cr_assert_str_eq(jsonfix_str(st, "message"), "statefulsets.apps \"nope\" not found");
    cr_assert_eq(jsonfix_int(st, "code"), 404);
    cJSON_Delete(st);
}

Test(kubesim_api, put_with_stale_resource_version_is_conflict)
{
    cJSON *cm = create_cm("c1", NULL), *upd, *st;
    char *body;
    long code;

    kjson_set_str(cm, "data.k", "v2", NULL);
    body = cJSON_PrintUnformatted(cm);
    upd = ksimfix_call(h, "PUT", "/api/v1/namespaces/default/configmaps/c1", NULL, body, &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(upd, "data.k"), "v2");
    cr_assert_str_neq(jsonfix_str(upd, "metadata.resourceVersion"),
                      jsonfix_str(cm, "metadata.resourceVersion"));
    st = ksimfix_call(h, "PUT", "/api/v1/namespaces/default/configmaps/c1", NULL, body, &code);
    cr_assert_eq(code, 409, "the second PUT carries the old resourceVersion");
    cr_assert_str_eq(jsonfix_str(st, "reason"), "Conflict");
    cr_assert_str_eq(jsonfix_str(st, "message"),
                     "Operation cannot be fulfilled on configmaps \"c1\": the object has been "
                     "modified; please apply your changes to the latest version and try again");
    free(body);
    cJSON_Delete(cm);
    cJSON_Delete(upd);
    cJSON_Delete(st);
}

Test(kubesim_api, unchanged_update_writes_nothing)
{
    cJSON *cm = create_cm("c1", NULL), *upd;
    char *body = cJSON_PrintUnformatted(cm);
    long code;

    upd = ksimfix_call(h, "PUT", "/api/v1/namespaces/default/configmaps/c1", NULL, body, &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(upd, "metadata.resourceVersion"),
                     jsonfix_str(cm, "metadata.resourceVersion"));
    free(body);
    cJSON_Delete(cm);
    cJSON_Delete(upd);
}

Test(kubesim_api, generation_follows_spec_only)
{
    const char *path = "/apis/apps/v1/namespaces/default/statefulsets/web";
    const char *mp = "application/merge-patch+json";
    cJSON *j;
    long code;

    cJSON_Delete(ksimfix_call(h, "POST", sts_path, NULL, sts_json, &code));
    j = ksimfix_call(h, "PATCH", path, mp, "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}", &code);
    cr_assert_eq(code, 200);
    cr_assert_eq(jsonfix_int(j, "metadata.generation"), 1, "a label is not a spec change");
    cJSON_Delete(j);
    j = ksimfix_call(h, "PATCH", path, mp, "{\"spec\":{\"replicas\":5}}", &code);
    cr_assert_eq(jsonfix_int(j, "metadata.generation"), 2);
    cJSON_Delete(j);
    j = ksimfix_call(h, "PATCH", "/apis/apps/v1/namespaces/default/statefulsets/web/status", mp,
                     "{\"status\":{\"replicas\":5}}", &code);
    cr_assert_eq(code, 200);
    cr_assert_eq(jsonfix_int(j, "metadata.generation"), 2, "a status write is not a spec change");
    cJSON_Delete(j);
}

Test(kubesim_api, status_subresource_is_separate)
{
    const char *path = "/apis/apps/v1/namespaces/default/statefulsets/web";
    const char *mp = "application/merge-patch+json";
    cJSON *j;
    long code;

    cJSON_Delete(ksimfix_call(h, "POST", sts_path, NULL, sts_json, &code));
    j = ksimfix_call(h, "PATCH", path, mp,
                     "{\"spec\":{\"replicas\":3},\"status\":{\"replicas\":9}}", &code);
    cr_assert_eq(code, 200);
    cr_assert_eq(jsonfix_int(j, "spec.replicas"), 3);
    cr_assert_eq(jsonfix_int(j, "status.replicas"), 0, "the main resource ignores status");
    cJSON_Delete(j);
    j = ksimfix_call(h, "PATCH", "/apis/apps/v1/namespaces/default/statefulsets/web/status", mp,
                     "{\"spec\":{\"replicas\":7},\"status\":{\"replicas\":2}}", &code);
    cr_assert_eq(code, 200);
    cr_assert_eq(jsonfix_int(j, "spec.replicas"), 3, "/status ignores everything but status");
    cr_assert_eq(jsonfix_int(j, "status.replicas"), 2);
    cJSON_Delete(j);
}

Test(kubesim_api, scale_subresource)
{
    const char *path = "/apis/apps/v1/namespaces/default/statefulsets/web/scale";
    cJSON *j;
    long code;

    cJSON_Delete(ksimfix_call(h, "POST", sts_path, NULL, sts_json, &code));
    j = ksimfix_call(h, "GET", path, NULL, NULL, &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(j, "kind"), "Scale");
    cr_assert_str_eq(jsonfix_str(j, "apiVersion"), "autoscaling/v1");
    cr_assert_eq(jsonfix_int(j, "spec.replicas"), 2);
    cr_assert_str_eq(jsonfix_str(j, "status.selector"), "app=web");
    cJSON_Delete(j);
    j = ksimfix_call(h, "PATCH", path, "application/merge-patch+json",
                     "{\"spec\":{\"replicas\":4}}", &code);
    cr_assert_eq(code, 200);
    cr_assert_eq(jsonfix_int(j, "spec.replicas"), 4);
    cJSON_Delete(j);
    j = ksimfix_call(h, "GET", "/apis/apps/v1/namespaces/default/statefulsets/web", NULL, NULL,
                     &code);
    cr_assert_eq(jsonfix_int(j, "spec.replicas"), 4);
    cr_assert_eq(jsonfix_int(j, "metadata.generation"), 2);
    cJSON_Delete(j);
    j = ksimfix_call(h, "PUT", path, NULL,
                     "{\"kind\":\"Scale\",\"apiVersion\":\"autoscaling/v1\",\"metadata\":{\"name\":"
                     "\"web\",\"resourceVersion\":\"1\"},\"spec\":{\"replicas\":1}}",
                     &code);
    cr_assert_eq(code, 409, "a Scale PUT with a stale resourceVersion conflicts");
    cJSON_Delete(j);
}

Test(kubesim_api, namespace_must_exist)
{
    long code;
    cJSON *st = ksimfix_call(
        h, "POST", "/api/v1/namespaces/nope/configmaps", NULL,
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}", &code);

    cr_assert_eq(code, 404);
    cr_assert_str_eq(jsonfix_str(st, "message"), "namespaces \"nope\" not found");
    cJSON_Delete(st);
}

Test(kubesim_api, generate_name)
{
    long code;
    cJSON *j = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL,
                            "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                            "\"generateName\":\"job-\"}}",
                            &code);

    cr_assert_eq(code, 201);
    cr_assert_eq(strncmp(jsonfix_str(j, "metadata.name"), "job-", 4), 0);
    cr_assert_eq(strlen(jsonfix_str(j, "metadata.name")), 9);
    cJSON_Delete(j);
    j = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL,
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{}}", &code);
    cr_assert_eq(code, 422);
    cr_assert_str_eq(jsonfix_str(j, "reason"), "Invalid");
    cr_assert_not_null(strstr(jsonfix_str(j, "message"), "name or generateName is required"));
    cJSON_Delete(j);
}

Test(kubesim_api, authentication)
{
    struct ksim_http r;
    cJSON *j;

    cr_assert_eq(ksim_harness_call(h, "", "GET", "/api/v1/namespaces", NULL, NULL, 0, &r), 0);
    cr_assert_eq(r.code, 401);
    j = ksim_http_json(&r);
    cr_assert_str_eq(jsonfix_str(j, "reason"), "Unauthorized");
    cJSON_Delete(j);
    ksim_http_release(&r);
    cr_assert_eq(ksim_harness_call(h, "wrong", "GET", "/api/v1/namespaces", NULL, NULL, 0, &r), 0);
    cr_assert_eq(r.code, 401);
    ksim_http_release(&r);
    cr_assert_eq(ksim_harness_call(h, "", "GET", "/healthz", NULL, NULL, 0, &r), 0);
    cr_assert_eq(r.code, 200, "/healthz is public");
    ksim_http_release(&r);
}

Test(kubesim_api, unknown_paths_and_methods)
{
    struct ksim_http r;
    cJSON *j;
    long code;

    j = ksimfix_call(h, "GET", "/api/v1/namespaces/default/widgets", NULL, NULL, &code);
    cr_assert_eq(code, 404);
    cr_assert_str_eq(jsonfix_str(j, "message"), "the server could not find the requested resource");
    cJSON_Delete(j);
    cr_assert_eq(
        ksim_harness_call(h, NULL, "GET", "/apis/nope.example.com/v1/things", NULL, NULL, 0, &r),
        0);
    cr_assert_eq(r.code, 404);
    cr_assert_str_eq(buf_str(&r.body), "404 page not found\n");
    ksim_http_release(&r);
    j = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps/x", NULL, "{}", &code);
    cr_assert_eq(code, 405);
    cr_assert_str_eq(jsonfix_str(j, "reason"), "MethodNotAllowed");
    cJSON_Delete(j);
}

Test(kubesim_api, media_types_and_body_limit)
{
    long code;
    char *big;
    cJSON *j;

    cJSON_Delete(create_cm("c1", NULL));
    j = ksimfix_call(h, "PATCH", "/api/v1/namespaces/default/configmaps/c1", "text/plain", "{}",
                     &code);
    cr_assert_eq(code, 415);
    cr_assert_str_eq(jsonfix_str(j, "reason"), "UnsupportedMediaType");
    cJSON_Delete(j);
    j = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", "application/yaml", "a: b",
                     &code);
    cr_assert_eq(code, 415);
    cJSON_Delete(j);
    big = malloc(4u << 20);
    cr_assert_not_null(big);
    memset(big, ' ', 4u << 20);
    big[(4u << 20) - 1] = '\0';
    big[0] = '{';
    big[(4u << 20) - 2] = '}';
    j = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, big, &code);
    cr_assert_eq(code, 413);
    cr_assert_str_eq(jsonfix_str(j, "reason"), "RequestEntityTooLarge");
    cJSON_Delete(j);
    free(big);
}

Test(kubesim_api, finalizers_hold_deletion)
{
    const char *path = "/api/v1/namespaces/default/configmaps/c1";
    cJSON *j;
    long code;

    cJSON_Delete(create_cm("c1", "\"finalizers\":[\"example.com/hold\"]"));
    j = ksimfix_call(h, "DELETE", path, NULL, NULL, &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(j, "kind"), "ConfigMap",
                     "a pending deletion answers with the object");
    cr_assert_neq(strlen(jsonfix_str(j, "metadata.deletionTimestamp")), 0);
    cJSON_Delete(j);
    j = ksimfix_call(h, "GET", path, NULL, NULL, &code);
    cr_assert_eq(code, 200, "the object stays while a finalizer is left");
    cJSON_Delete(j);
    j = ksimfix_call(h, "PATCH", path, "application/merge-patch+json",
                     "{\"metadata\":{\"finalizers\":[\"example.com/hold\",\"example.com/new\"]}}",
                     &code);
    cr_assert_eq(code, 422, "no new finalizers while deleting");
    cJSON_Delete(j);
    j = ksimfix_call(h, "PATCH", path, "application/json-patch+json",
                     "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers\"}]", &code);
    cr_assert_eq(code, 200);
    cJSON_Delete(j);
    j = ksimfix_call(h, "GET", path, NULL, NULL, &code);
    cr_assert_eq(code, 404, "the object goes with its last finalizer");
    cJSON_Delete(j);
}

Test(kubesim_api, delete_answers_status_and_checks_preconditions)
{
    cJSON *cm = create_cm("c1", NULL), *j;
    char body[512];
    long code;

    j = ksimfix_call(h, "DELETE", "/api/v1/namespaces/default/configmaps/c1", NULL,
                     "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"preconditions\":{\"uid\":"
                     "\"00000000-0000-0000-0000-000000000000\"}}",
                     &code);
    cr_assert_eq(code, 409);
    cr_assert_not_null(
        strstr(jsonfix_str(j, "message"), "Precondition failed: UID in precondition"));
    cJSON_Delete(j);
    snprintf(body, sizeof(body), "{\"preconditions\":{\"uid\":\"%s\"}}",
             jsonfix_str(cm, "metadata.uid"));
    j = ksimfix_call(h, "DELETE", "/api/v1/namespaces/default/configmaps/c1", NULL, body, &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(j, "kind"), "Status");
    cr_assert_str_eq(jsonfix_str(j, "status"), "Success");
    cr_assert_str_eq(jsonfix_str(j, "details.uid"), jsonfix_str(cm, "metadata.uid"));
    cJSON_Delete(j);
    cJSON_Delete(cm);
}

Test(kubesim_api, dry_run_stores_nothing)
{
    long code;
    cJSON *j = ksimfix_call(
        h, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All", NULL,
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"d\"}}", &code);

    cr_assert_eq(code, 201);
    cr_assert_str_eq(jsonfix_str(j, "metadata.name"), "d");
    cJSON_Delete(j);
    j = ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps/d", NULL, NULL, &code);
    cr_assert_eq(code, 404);
    cJSON_Delete(j);
}

/* kubectl delete --dry-run=server sends dryRun in DeleteOptions, not in the query */
Test(kubesim_api, delete_dry_run_in_options_stores_nothing)
{
    static const char *const opts[] = {
        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"dryRun\":[\"All\"]}",
        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"dryRun\":[\"All\"],"
        "\"propagationPolicy\":\"Orphan\"}",
    };
    long code;
    size_t i;
    cJSON *j = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL,
                            "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                            "\"name\":\"dd\"}}",
                            &code);

    cr_assert_eq(code, 201);
    cJSON_Delete(j);
    for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
        j = ksimfix_call(h, "DELETE", "/api/v1/namespaces/default/configmaps/dd", NULL, opts[i],
                         &code);
        cr_assert_eq(code, 200, "%s", opts[i]);
        cJSON_Delete(j);
        j = ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps/dd", NULL, NULL, &code);
        cr_assert_eq(code, 200, "deleted by a dry run: %s", opts[i]);
        cr_assert_null(kjson_get(j, "metadata.deletionTimestamp"), "%s", opts[i]);
        cJSON_Delete(j);
    }
    j = ksimfix_call(h, "DELETE", "/api/v1/namespaces/default/configmaps/dd", NULL,
                     "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"dryRun\":[\"x\"]}",
                     &code);
    cr_assert_eq(code, 422);
    cr_assert_not_null(strstr(jsonfix_str(j, "message"), "dryRun: Unsupported value: \"x\""), "%s",
                       jsonfix_str(j, "message"));
    cJSON_Delete(j);
    j = ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps/dd", NULL, NULL, &code);
    cr_assert_eq(code, 200);
    cJSON_Delete(j);
}

Test(kubesim_api, body_must_match_url)
{
    long code;
    cJSON *j =
        ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL,
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
                     "\"namespace\":\"other\"}}",
                     &code);

    cr_assert_eq(code, 400);
    cr_assert_str_eq(jsonfix_str(j, "message"),
                     "the namespace of the provided object does not match "
                     "the namespace sent on the request");
    cJSON_Delete(j);
    j = ksimfix_call(
        h, "POST", "/api/v1/namespaces/default/configmaps", NULL,
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}", &code);
    cr_assert_eq(code, 400, "wrong apiVersion");
    cJSON_Delete(j);
}

Test(kubesim_api, patch_types)
{
    const char *path = "/apis/apps/v1/namespaces/default/statefulsets/web";
    cJSON *j;
    long code;

    cJSON_Delete(ksimfix_call(h, "POST", sts_path, NULL, sts_json, &code));
    j = ksimfix_call(
        h, "PATCH", path, "application/strategic-merge-patch+json",
        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"side\",\"image\":"
        "\"busybox\"}]}}}}",
        &code);
    cr_assert_eq(code, 200);
    cr_assert_eq(cJSON_GetArraySize(kjson_get(j, "spec.template.spec.containers")), 2,
                 "strategic merge adds to containers by name");
    cJSON_Delete(j);
    j = ksimfix_call(h, "PATCH", path, "application/json-patch+json",
                     "[{\"op\":\"test\",\"path\":\"/spec/replicas\",\"value\":9}]", &code);
    cr_assert_eq(code, 422, "a failing JSON patch test");
    cJSON_Delete(j);
    j = ksimfix_call(h, "PATCH", path, "application/apply-patch+yaml",
                     "{\"spec\":{\"replicas\":6}}", &code);
    cr_assert_eq(code, 422, "apply needs a fieldManager");
    cJSON_Delete(j);
    j = ksimfix_call(
        h, "PATCH", "/api/v1/namespaces/default/configmaps/applied?fieldManager=test",
        "application/apply-patch+yaml",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"applied\"},"
        "\"data\":{\"a\":\"1\"}}",
        &code);
    cr_assert_eq(code, 201, "server-side apply creates");
    cJSON_Delete(j);
    j = ksimfix_call(
        h, "PATCH", "/api/v1/namespaces/default/configmaps/applied?fieldManager=test",
        "application/apply-patch+yaml",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"applied\"},"
        "\"data\":{\"b\":\"2\"}}",
        &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(j, "data.a"), "1");
    cr_assert_str_eq(jsonfix_str(j, "data.b"), "2");
    cJSON_Delete(j);
}

Test(kubesim_api, validation_errors_are_invalid)
{
    long code;
    cJSON *j =
        ksimfix_call(h, "POST", sts_path, NULL,
                     "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":"
                     "\"bad\"},\"spec\":{\"replicas\":-1}}",
                     &code);

    cr_assert_eq(code, 422);
    cr_assert_str_eq(jsonfix_str(j, "message"),
                     "StatefulSet.apps \"bad\" is invalid: spec.replicas: Invalid value: -1: must "
                     "be greater than or equal to 0");
    cr_assert_str_eq(jsonfix_str(j, "details.causes.0.field"), "spec.replicas");
    cJSON_Delete(j);
    j = ksimfix_call(
        h, "POST", "/api/v1/namespaces/default/configmaps", NULL,
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"Bad_Name\"}}",
        &code);
    cr_assert_eq(code, 422);
    cJSON_Delete(j);
}

Test(kubesim_api, discovery)
{
    long code;
    cJSON *j = ksimfix_call(h, "GET", "/apis/apps/v1", NULL, NULL, &code);
    const cJSON *r;
    int sts = 0, scale = 0;

    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(j, "kind"), "APIResourceList");
    cJSON_ArrayForEach (r, kjson_get(j, "resources")) {
        if (strcmp(jsonfix_str(r, "name"), "statefulsets") == 0) {
            sts = 1;
            cr_assert_str_eq(jsonfix_str(r, "shortNames.0"), "sts");
            cr_assert(cJSON_IsTrue(kjson_get(r, "namespaced")));
        }
        if (strcmp(jsonfix_str(r, "name"), "statefulsets/scale") == 0) {
            scale = 1;
            cr_assert_str_eq(jsonfix_str(r, "group"), "autoscaling");
            cr_assert_str_eq(jsonfix_str(r, "kind"), "Scale");
        }
    }
    cr_assert(sts && scale);
    cJSON_Delete(j);
    j = ksimfix_call(h, "GET", "/version", NULL, NULL, &code);
    cr_assert_str_eq(jsonfix_str(j, "major"), "1");
    cJSON_Delete(j);
}

Test(kubesim_api, events_are_one_resource_in_two_groups)
{
    long code;
    cJSON *j;

    j = ksimfix_call(
        h, "POST", "/apis/events.k8s.io/v1/namespaces/default/events", NULL,
        "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
        "\"e1\"},\"eventTime\":\"2026-01-01T00:00:00.000000Z\",\"reportingController\":"
        "\"example.com/ctl\",\"reportingInstance\":\"i\",\"action\":\"Act\",\"reason\":"
        "\"Done\",\"type\":\"Normal\",\"note\":\"it worked\",\"regarding\":{\"kind\":"
        "\"ConfigMap\",\"name\":\"c1\",\"namespace\":\"default\"}}",
        &code);
    cr_assert_eq(code, 201, "%s", jsonfix_str(j, "message"));
    cr_assert_str_eq(jsonfix_str(j, "note"), "it worked");
    cr_assert_str_eq(jsonfix_str(j, "regarding.name"), "c1");
    cJSON_Delete(j);
    j = ksimfix_call(h, "GET",
                     "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dc1",
                     NULL, NULL, &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(j, "items.0.message"), "it worked");
    cr_assert_str_eq(jsonfix_str(j, "items.0.reportingComponent"), "example.com/ctl");
    cr_assert_str_eq(jsonfix_str(j, "items.0.apiVersion"), "v1");
    cJSON_Delete(j);
    j = ksimfix_call(
        h, "GET",
        "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.name%3Dc2", NULL,
        NULL, &code);
    cr_assert_eq(code, 200);
    cr_assert_eq(cJSON_GetArraySize(kjson_get(j, "items")), 0);
    cJSON_Delete(j);
}
