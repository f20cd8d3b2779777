/* Tests of common/k8s: paths, query encoding, verbs and errors, against tests/support/mockapi. */
#include "common/k8s.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfg.h"
#include "tests/support/jsonfix.h"
#include "tests/support/mockapi.h"
#include "tests/support/mockfix.h"

static const struct k8s_resource PODS = { "", "v1", "pods", 1 };
static const struct k8s_resource NODES = { "", "v1", "nodes", 0 };
static const struct k8s_resource STS = { "apps", "v1", "statefulsets", 1 };
static const struct k8s_resource ETCD = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };

static struct mockapi *m;
static struct k8s_client *c;
static struct kerr_info err;

static void start(void)
{
    mockfix_start(&m, &c, "tok-1", NULL);
}

static void stop(void)
{
    mockfix_stop(m, c);
}

static char *path_of(const struct k8s_resource *res, const char *ns, const char *name,
                     const char *sub, enum kerr *rc)
{
    struct buf b;

    buf_init(&b, 4096);
    *rc = k8s_path(res, ns, name, sub, &b, &err);
    return buf_detach(&b, NULL);
}

Test(k8s_path, core_and_group_paths)
{
    enum kerr rc;
    char *p;

    p = path_of(&PODS, "default", "web-0", NULL, &rc);
    cr_assert_eq(rc, KERR_OK);
    cr_assert_str_eq(p, "/api/v1/namespaces/default/pods/web-0");
    free(p);
    p = path_of(&STS, "ns1", "etcd-main", "scale", &rc);
    cr_assert_str_eq(p, "/apis/apps/v1/namespaces/ns1/statefulsets/etcd-main/scale");
    free(p);
    p = path_of(&ETCD, NULL, NULL, NULL, &rc);
    cr_assert_str_eq(p, "/apis/druid.gardener.cloud/v1alpha1/etcds");
    free(p);
    p = path_of(&NODES, "ignored", "node-1", NULL, &rc);
    cr_assert_eq(rc, KERR_OK);
    cr_assert_str_eq(p, "/api/v1/nodes/node-1");
    free(p);
}

Test(k8s_path, names_are_validated_and_encoded)
{
    enum kerr rc;
    char *p;

    p = path_of(&PODS, "default", "a b:c@d", NULL, &rc);
    cr_assert_eq(rc, KERR_OK);
    cr_assert_str_eq(p, "/api/v1/namespaces/default/pods/a%20b%3Ac%40d");
    free(p);
    free(path_of(&PODS, "default", "..", NULL, &rc));
    cr_assert_eq(rc, KERR_INVAL);
    free(path_of(&PODS, "default", "a/b", NULL, &rc));
    cr_assert_eq(rc, KERR_INVAL);
    free(path_of(&PODS, "default", "100%", NULL, &rc));
    cr_assert_eq(rc, KERR_INVAL);
    free(path_of(&PODS, "default", "", NULL, &rc));
    cr_assert_eq(rc, KERR_INVAL);
    free(path_of(&PODS, "Bad_NS", "x", NULL, &rc));
    cr_assert_eq(rc, KERR_INVAL);
    cr_assert(strstr(err.msg, "namespace") != NULL);
    free(path_of(&PODS, "-a", "x", NULL, &rc));
    cr_assert_eq(rc, KERR_INVAL);
    free(path_of(&PODS, NULL, "x", NULL, &rc));
    cr_assert_eq(rc, KERR_INVAL, "a namespaced object needs its namespace");
    free(path_of(&PODS, "default", "x", "st/atus", &rc));
    cr_assert_eq(rc, KERR_INVAL);
}

Test(k8s_path, query_values_are_percent_encoded)
{
    struct buf b;

    buf_init(&b, 4096);
    cr_assert_eq(buf_appends(&b, "/api/v1/pods"), KERR_OK);
    cr_assert_eq(k8s_query_add(&b, "labelSelector", "a+b&c%d#e=f g", NULL), KERR_OK);
    cr_assert_eq(k8s_query_add(&b, "limit", "5", NULL), KERR_OK);
    cr_assert_eq(k8s_query_add(&b, "skipped", NULL, NULL), KERR_OK);
    cr_assert_str_eq(buf_str(&b), "/api/v1/pods?labelSelector=a%2Bb%26c%25d%23e%3Df%20g&limit=5");
    buf_release(&b);
}

Test(k8s, code_mapping)
{
    cr_assert_eq(k8s_code_from_status(404, NULL), KERR_NOTFOUND);
    cr_assert_eq(k8s_code_from_status(409, "AlreadyExists"), KERR_EXISTS);
    cr_assert_eq(k8s_code_from_status(409, "Conflict"), KERR_CONFLICT);
    cr_assert_eq(k8s_code_from_status(410, "Expired"), KERR_GONE);
    cr_assert_eq(k8s_code_from_status(401, NULL), KERR_UNAUTHORIZED);
    cr_assert_eq(k8s_code_from_status(403, "Forbidden"), KERR_FORBIDDEN);
    cr_assert_eq(k8s_code_from_status(429, NULL), KERR_TOOMANY);
    cr_assert_eq(k8s_code_from_status(500, NULL), KERR_API);
    cr_assert_eq(k8s_code_from_status(422, "Invalid"), KERR_API);
}

Test(k8s, client_needs_an_http_server)
{
    struct cfg_rest rest;
    struct k8s_client *bad = (struct k8s_client *)1;

    cfg_rest_init(&rest);
    cr_assert_eq(k8s_client_new(&rest, NULL, &bad, &err), KERR_INVAL);
    cr_assert_null(bad);
    rest.server = strdup("ftp://example.com");
    cr_assert_eq(k8s_client_new(&rest, NULL, &bad, &err), KERR_INVAL);
    free(rest.server);
    rest.server = strdup("https://10.0.0.1:6443/");
    rest.namespace = strdup("team-a");
    cr_assert_eq(k8s_client_new(&rest, NULL, &bad, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(k8s_client_server(bad), "https://10.0.0.1:6443");
    cr_assert_str_eq(k8s_client_namespace(bad), "team-a");
    k8s_client_free(bad);
    k8s_client_free(NULL);
    cfg_rest_release(&rest);
}

Test(k8s, get_sends_token_and_parses_the_object, .init = start, .fini = stop)
{
    const struct mockapi_req *q;
    cJSON *obj = NULL;

    mockapi_expect(m, "GET", "/api/v1/namespaces/default/pods/web-0", 200,
                   "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-0\"}}");
    cr_assert_eq(k8s_get(c, &PODS, "default", "web-0", NULL, &obj, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(cJSON_GetObjectItem(obj, "kind")->valuestring, "Pod");
    q = mockapi_last(m);
    cr_assert_str_eq(mockapi_req_header(q, "Authorization"), "Bearer tok-1");
    cr_assert_str_eq(mockapi_req_header(q, "Accept"), "application/json");
    cr_assert_str_eq(mockapi_req_header(q, "User-Agent"), K8S_DEFAULT_USER_AGENT);
    cr_assert_str_eq(mockapi_req_header(q, "Accept-Encoding"), "gzip");
    cr_assert_null(mockapi_req_header(q, "Expect"));
    cr_assert_eq(q->body_len, 0);
    cJSON_Delete(obj);
}

Test(k8s, get_subresource, .init = start, .fini = stop)
{
    cJSON *obj = NULL;

    mockapi_expect(m, "GET", "/apis/apps/v1/namespaces/ns1/statefulsets/etcd-main/scale", 200,
                   "{\"kind\":\"Scale\",\"spec\":{\"replicas\":3}}");
    cr_assert_eq(k8s_get(c, &STS, "ns1", "etcd-main", "scale", &obj, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "spec"), "replicas")->valueint, 3);
    cJSON_Delete(obj);
}

Test(k8s, not_found_returns_the_status, .init = start, .fini = stop)
{
    cJSON *obj = NULL;

    mockapi_expect(m, "GET", "/api/v1/namespaces/default/pods/nope", 404,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                   "\"message\":\"pods \\\"nope\\\" not found\",\"reason\":\"NotFound\","
                   "\"code\":404}");
    cr_assert_eq(k8s_get(c, &PODS, "default", "nope", NULL, &obj, &err), KERR_NOTFOUND);
    cr_assert_null(obj);
    cr_assert_eq(err.code, KERR_NOTFOUND);
    cr_assert_eq(err.http_status, 404);
    cr_assert_str_eq(err.reason, "NotFound");
    cr_assert_str_eq(err.msg, "pods \"nope\" not found");
}

Test(k8s, conflicts_keep_their_reason, .init = start, .fini = stop)
{
    cJSON *obj = jsonfix_parse("{\"metadata\":{\"name\":\"x\",\"namespace\":\"default\","
                               "\"resourceVersion\":\"7\"}}");

    mockapi_expect(m, "POST", "/api/v1/namespaces/default/pods", 409,
                   "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\",\"code\":409,"
                   "\"message\":\"pods \\\"x\\\" already exists\"}");
    mockapi_expect(m, "PUT", "/api/v1/namespaces/default/pods/x", 409,
                   "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409,"
                   "\"message\":\"the object has been modified\"}");
    cr_assert_eq(k8s_create(c, &PODS, NULL, obj, NULL, NULL, &err), KERR_EXISTS);
    cr_assert_str_eq(err.reason, "AlreadyExists");
    cr_assert_eq(err.http_status, 409);
    cr_assert_eq(k8s_update(c, &PODS, NULL, NULL, obj, NULL, NULL, &err), KERR_CONFLICT);
    cr_assert_str_eq(err.reason, "Conflict");
    cr_assert_str_eq(err.msg, "the object has been modified");
    cr_assert_eq(mockapi_unexpected(m), 0);
    cJSON_Delete(obj);
}

Test(k8s, error_body_that_is_not_a_status, .init = start, .fini = stop)
{
    struct mockapi_spec s = { .method = "GET",
                              .target = "/api/v1/namespaces/default/pods/x",
                              .status = 502,
                              .headers = "Content-Type: text/plain",
                              .body = "upstream\nconnect error" };
    cJSON *obj = NULL;

    mockapi_add(m, &s);
    mockapi_expect(m, "GET", "/api/v1/namespaces/default/pods/y", 500, NULL);
    cr_assert_eq(k8s_get(c, &PODS, "default", "x", NULL, &obj, &err), KERR_API);
    cr_assert_eq(err.http_status, 502);
    cr_assert_str_eq(err.msg, "upstream connect error");
    cr_assert_eq(k8s_get(c, &PODS, "default", "y", NULL, &obj, &err), KERR_API);
    cr_assert_str_eq(err.reason, "InternalError");
    cr_assert_str_eq(err.msg, "HTTP 500 InternalError");
}

Test(k8s, list_with_selectors_is_encoded, .init = start, .fini = stop)
{
    struct k8s_list_opts o = { .label_selector = "app in (a,b),tier!=x+y",
                               .field_selector = "metadata.name=a b#c%d&e",
                               .limit = 50,
                               .resource_version = "0",
                               .resource_version_match = "NotOlderThan" };
    const struct mockapi_req *q;
    cJSON *list = NULL;

    mockapi_expect(m, "GET", "/api/v1/namespaces/ns1/pods?limit=50", 200,
                   "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[]}");
    cr_assert_eq(k8s_list(c, &PODS, "ns1", &o, &list, &err), KERR_OK, "%s", err.msg);
    q = mockapi_last(m);
    cr_assert_str_eq(mockapi_req_param(q, "labelSelector"), o.label_selector);
    cr_assert_str_eq(mockapi_req_param(q, "fieldSelector"), o.field_selector);
    cr_assert_str_eq(mockapi_req_param(q, "resourceVersion"), "0");
    cr_assert_str_eq(mockapi_req_param(q, "resourceVersionMatch"), "NotOlderThan");
    cr_assert_null(strpbrk(q->query, " #+(),!"), "raw query: %s", q->query);
    cr_assert_null(mockapi_req_param(q, "continue"));
    cJSON_Delete(list);
}

Test(k8s, list_all_follows_continue, .init = start, .fini = stop)
{
    struct k8s_list_opts o = { .limit = 2, .resource_version = "0" };
    const struct mockapi_req *q;
    cJSON *list = NULL, *items;

    mockapi_expect(
        m, "GET", "/api/v1/pods?!continue", 200,
        "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"40\","
        "\"continue\":\"t1\",\"remainingItemCount\":3},\"items\":[{\"n\":1},{\"n\":2}]}");
    mockapi_expect(m, "GET", "/api/v1/pods?continue=t1", 200,
                   "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"40\","
                   "\"continue\":\"t2\"},\"items\":[{\"n\":3},{\"n\":4}]}");
    mockapi_expect(m, "GET", "/api/v1/pods?continue=t2", 200,
                   "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"40\"},"
                   "\"items\":[{\"n\":5}]}");
    cr_assert_eq(k8s_list_all(c, &PODS, NULL, &o, &list, &err), KERR_OK, "%s", err.msg);
    items = cJSON_GetObjectItem(list, "items");
    cr_assert_eq(cJSON_GetArraySize(items), 5);
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 4), "n")->valueint, 5);
    cr_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(list, "metadata"), "resourceVersion")->valuestring,
        "40");
    cr_assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(list, "metadata"), "continue"));
    cr_assert_eq(mockapi_request_count(m), 3);
    q = mockapi_request(m, 1);
    cr_assert_null(mockapi_req_param(q, "resourceVersion"), "no resourceVersion with continue");
    cr_assert_str_eq(mockapi_req_param(q, "limit"), "2");
    cJSON_Delete(list);
}

Test(k8s, list_all_restarts_without_limit_when_continue_expires, .init = start, .fini = stop)
{
    struct k8s_list_opts o = { .limit = 1 };
    cJSON *list = NULL;

    mockapi_expect(m, "GET", "/api/v1/pods?limit=1&!continue", 200,
                   "{\"metadata\":{\"resourceVersion\":\"1\",\"continue\":\"old\"},"
                   "\"items\":[{\"n\":1}]}");
    mockapi_expect(m, "GET", "/api/v1/pods?continue=old", 410,
                   "{\"kind\":\"Status\",\"reason\":\"Expired\",\"code\":410,"
                   "\"message\":\"continue token expired\"}");
    mockapi_expect(m, "GET", "/api/v1/pods?!limit&!continue", 200,
                   "{\"metadata\":{\"resourceVersion\":\"2\"},\"items\":[{\"n\":1},{\"n\":2}]}");
    cr_assert_eq(k8s_list_all(c, &PODS, NULL, &o, &list, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 2);
    cr_assert_eq(mockapi_unexpected(m), 0);
    cJSON_Delete(list);
}

Test(k8s, create_posts_the_object_with_write_options, .init = start, .fini = stop)
{
    struct k8s_write_opts o = { .dry_run = 1, .field_manager = "etcd-warden" };
    cJSON *obj = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                               "\"metadata\":{\"name\":\"cm\",\"namespace\":\"ns2\"}}");
    const struct mockapi_req *q;
    cJSON *sent, *got = NULL;

    mockapi_expect(m, "POST", "/apis/druid.gardener.cloud/v1alpha1/namespaces/ns2/etcds", 201,
                   "{\"metadata\":{\"uid\":\"u1\"}}");
    cr_assert_eq(k8s_create(c, &ETCD, NULL, obj, &o, &got, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(got, "metadata"), "uid")->valuestring,
                     "u1");
    q = mockapi_last(m);
    cr_assert_str_eq(mockapi_req_header(q, "Content-Type"), "application/json");
    cr_assert_str_eq(mockapi_req_param(q, "dryRun"), "All");
    cr_assert_str_eq(mockapi_req_param(q, "fieldManager"), "etcd-warden");
    sent = cJSON_ParseWithLength(q->body, q->body_len);
    cr_assert(cJSON_Compare(sent, obj, 1), "body: %s", q->body);
    cJSON_Delete(sent);
    cJSON_Delete(got);
    cJSON_Delete(obj);
}

Test(k8s, update_of_the_status_subresource, .init = start, .fini = stop)
{
    struct k8s_write_opts o = { .subresource = "status" };
    cJSON *obj = jsonfix_parse("{\"metadata\":{\"name\":\"main\",\"namespace\":\"shoot\","
                               "\"resourceVersion\":\"5\"},\"status\":{\"ready\":true}}");

    mockapi_expect(m, "PUT",
                   "/apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds/main/status", 200,
                   "{}");
    cr_assert_eq(k8s_update(c, &ETCD, NULL, NULL, obj, &o, NULL, &err), KERR_OK, "%s", err.msg);
    cr_assert(strstr(mockapi_last(m)->body, "\"resourceVersion\":\"5\"") != NULL);
    cJSON_Delete(obj);
}

Test(k8s, patch_types_and_server_side_apply, .init = start, .fini = stop)
{
    static const char *const types[] = { "application/merge-patch+json",
                                         "application/json-patch+json",
                                         "application/strategic-merge-patch+json",
                                         "application/apply-patch+yaml" };
    struct k8s_write_opts o = { .field_manager = "warden", .force = 1 };
    cJSON *obj = jsonfix_parse("{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
    cJSON *ops = jsonfix_parse("[{\"op\":\"remove\",\"path\":\"/metadata/labels/a\"}]");
    const struct mockapi_req *q;
    int i;

    mockapi_add(m, &(struct mockapi_spec){ .method = "PATCH",
                                           .target = "/apis/apps/v1/namespaces/ns/statefulsets/s",
                                           .body = "{}",
                                           .times = 4 });
    cr_assert_eq(k8s_patch(c, &STS, "ns", "s", K8S_PATCH_MERGE, obj, &o, NULL, &err), KERR_OK);
    cr_assert_eq(k8s_patch(c, &STS, "ns", "s", K8S_PATCH_JSON, ops, NULL, NULL, &err), KERR_OK);
    cr_assert_eq(k8s_patch(c, &STS, "ns", "s", K8S_PATCH_STRATEGIC, obj, NULL, NULL, &err),
                 KERR_OK);
    cr_assert_eq(k8s_patch(c, &STS, "ns", "s", K8S_PATCH_APPLY, obj, &o, NULL, &err), KERR_OK);
    cr_assert_eq(mockapi_request_count(m), 4);
    for (i = 0; i < 4; i++) {
        q = mockapi_request(m, (size_t)i);
        cr_assert_str_eq(mockapi_req_header(q, "Content-Type"), types[i]);
    }
    cr_assert_null(mockapi_req_param(mockapi_request(m, 0), "force"), "force only for apply");
    cr_assert_str_eq(mockapi_req_param(mockapi_request(m, 3), "force"), "true");
    cr_assert_str_eq(mockapi_req_param(mockapi_request(m, 3), "fieldManager"), "warden");
    cr_assert_str_eq(mockapi_request(m, 1)->body,
                     "[{\"op\":\"remove\",\"path\":\"/metadata/labels/a\"}]");
    /* refused before sending: apply without a manager, a JSON patch that is not an array */
    cr_assert_eq(k8s_patch(c, &STS, "ns", "s", K8S_PATCH_APPLY, obj, NULL, NULL, &err), KERR_INVAL);
    cr_assert_eq(k8s_patch(c, &STS, "ns", "s", K8S_PATCH_JSON, obj, NULL, NULL, &err), KERR_INVAL);
    cr_assert_eq(mockapi_request_count(m), 4);
    cJSON_Delete(obj);
    cJSON_Delete(ops);
}

Test(k8s, delete_sends_delete_options, .init = start, .fini = stop)
{
    struct k8s_delete_opts o = { .propagation_policy = "Foreground",
                                 .precondition_uid = "uid-1",
                                 .precondition_resource_version = "77",
                                 .grace_period_set = 1,
                                 .grace_period_seconds = 0 };
    cJSON *body, *pre;

    mockapi_expect(m, "DELETE", "/api/v1/namespaces/default/pods/p", 200,
                   "{\"kind\":\"Status\",\"status\":\"Success\"}");
    mockapi_expect(m, "DELETE", "/api/v1/namespaces/default/pods/p", 409,
                   "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409,\"message\":"
                   "\"Precondition failed: UID in precondition: uid-1, UID in object meta: u2\"}");
    cr_assert_eq(k8s_delete(c, &PODS, "default", "p", &o, NULL, &err), KERR_OK, "%s", err.msg);
    body = cJSON_ParseWithLength(mockapi_last(m)->body, mockapi_last(m)->body_len);
    cr_assert_str_eq(cJSON_GetObjectItem(body, "propagationPolicy")->valuestring, "Foreground");
    cr_assert_eq(cJSON_GetObjectItem(body, "gracePeriodSeconds")->valueint, 0);
    pre = cJSON_GetObjectItem(body, "preconditions");
    cr_assert_str_eq(cJSON_GetObjectItem(pre, "uid")->valuestring, "uid-1");
    cr_assert_str_eq(cJSON_GetObjectItem(pre, "resourceVersion")->valuestring, "77");
    cr_assert_null(cJSON_GetObjectItem(body, "dryRun"));
    cJSON_Delete(body);
    cr_assert_eq(k8s_delete(c, &PODS, "default", "p", &o, NULL, &err), KERR_CONFLICT);
    cr_assert(strstr(err.msg, "Precondition failed") != NULL);
}

Test(k8s, raw_request_and_empty_answers, .init = start, .fini = stop)
{
    cJSON *out = NULL;

    mockapi_expect(m, "GET", "/version", 200, "{\"major\":\"1\",\"minor\":\"32\"}");
    mockapi_expect(m, "POST", "/apis/x/v1/things", 204, NULL);
    mockapi_expect(m, "GET", "/api/v1/namespaces/default/pods/garbage", 200, "not json");
    cr_assert_eq(k8s_request(c, "GET", "/version", NULL, NULL, 0, &out, &err), KERR_OK);
    cr_assert_str_eq(cJSON_GetObjectItem(out, "minor")->valuestring, "32");
    cJSON_Delete(out);
    cr_assert_eq(k8s_request(c, "POST", "/apis/x/v1/things", NULL, "{}", 2, &out, &err), KERR_OK);
    cr_assert_null(out);
    cr_assert_str_eq(mockapi_req_header(mockapi_last(m), "Content-Type"), "application/json");
    cr_assert_eq(k8s_get(c, &PODS, "default", "garbage", NULL, &out, &err), KERR_PARSE);
    cr_assert_eq(k8s_request(c, "GET", "version", NULL, NULL, 0, &out, &err), KERR_INVAL);
}
