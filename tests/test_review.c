/* Tests of webhook/review: AdmissionReview decoding and the exact encoding of answers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "webhook/review.h"

static enum kerr decode(struct review_req *r, const char *body, struct kerr_info *err)
{
    review_req_init(r);
    kerr_clear(err);
    return review_req_decode(r, body, strlen(body), err);
}

Test(review, decodes_every_field_of_v1)
{
    static const char body[] =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","
        "\"kind\":{\"group\":\"autoscaling\",\"version\":\"v1\",\"kind\":\"Scale\"},"
        "\"resource\":{\"group\":\"apps\",\"version\":\"v1\",\"resource\":\"statefulsets\"},"
        "\"subResource\":\"scale\",\"name\":\"etcd-main\",\"namespace\":\"shoot\","
        "\"operation\":\"UPDATE\",\"userInfo\":{\"username\":\"alice\",\"groups\":[\"x\"]},"
        "\"object\":{\"spec\":{\"replicas\":0}},\"oldObject\":{\"spec\":{\"replicas\":3}},"
        "\"dryRun\":true}}";
    struct review_req r;
    struct kerr_info err;

    cr_assert_eq(decode(&r, body, &err), KERR_OK, "%s", err.msg);
    cr_expect_str_eq(r.api_version, REVIEW_API_V1);
    cr_expect_str_eq(r.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
    cr_expect_str_eq(r.kind_group, "autoscaling");
    cr_expect_str_eq(r.kind_version, "v1");
    cr_expect_str_eq(r.kind_kind, "Scale");
    cr_expect_str_eq(r.res_group, "apps");
    cr_expect_str_eq(r.res_resource, "statefulsets");
    cr_expect_str_eq(r.sub_resource, "scale");
    cr_expect_str_eq(r.name, "etcd-main");
    cr_expect_str_eq(r.namespace, "shoot");
    cr_expect_str_eq(r.operation, "UPDATE");
    cr_expect_eq(r.op, REVIEW_OP_UPDATE);
    cr_expect_str_eq(r.username, "alice");
    cr_expect_eq(r.dry_run, 1);
    cr_assert_not_null(r.object);
    cr_expect_eq(kjson_get(r.object, "spec.replicas")->valueint, 0);
    cr_expect_eq(kjson_get(r.old_object, "spec.replicas")->valueint, 3);
    review_req_release(&r);
    review_req_release(&r);
}

Test(review, v1beta1_and_missing_fields_read_as_empty)
{
    static const char body[] = "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":"
                               "\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"object\":null,"
                               "\"operation\":\"PATCH\"}}";
    struct review_req r;
    struct kerr_info err;

    cr_assert_eq(decode(&r, body, &err), KERR_OK, "%s", err.msg);
    cr_expect_str_eq(r.api_version, REVIEW_API_V1BETA1);
    cr_expect_str_eq(r.kind_kind, "");
    cr_expect_str_eq(r.username, "");
    cr_expect_null(r.object);
    cr_expect_null(r.old_object);
    cr_expect_eq(r.op, REVIEW_OP_OTHER);
    cr_expect_str_eq(r.operation, "PATCH");
    review_req_release(&r);
}

struct bad {
    const char *body;
    const char *want; /* substring of the message */
};

static const struct bad bad_bodies[] = {
    { "", "empty" },
    { "not json", "" },
    { "[1,2]", "expected a JSON object" },
    { "{\"kind\":\"Pod\",\"request\":{}}", "kind Pod is not AdmissionReview" },
    { "{\"apiVersion\":\"admission.k8s.io/v2\",\"request\":{}}", "admission.k8s.io/v2" },
    { "{\"apiVersion\":5,\"request\":{}}", "apiVersion: expected a string" },
    { "{\"apiVersion\":\"admission.k8s.io/v1\"}", "has no request" },
    { "{\"request\":\"x\"}", "request: expected an object" },
    { "{\"request\":{\"uid\":5}}", "request.uid: expected a string" },
    { "{\"request\":{\"kind\":[]}}", "request.kind: expected an object" },
    { "{\"request\":{\"kind\":{\"kind\":true}}}", "request.kind.kind: expected a string" },
    { "{\"request\":{\"resource\":{\"group\":1}}}", "request.resource.group: expected a string" },
    { "{\"request\":{\"userInfo\":{\"username\":{}}}}", "request.userInfo.username" },
    { "{\"request\":{\"dryRun\":\"yes\"}}", "request.dryRun: expected a boolean" },
    { "{\"request\":{}} trailing", "" },
    { "{\"request\":{\"operation\":[\"UPDATE\"]}}", "request.operation: expected a string" },
};

Test(review, rejects_undecodable_bodies_with_a_reason)
{
    struct review_req r;
    struct kerr_info err;
    size_t i;

    for (i = 0; i < sizeof(bad_bodies) / sizeof(bad_bodies[0]); i++) {
        cr_expect_eq(decode(&r, bad_bodies[i].body, &err), KERR_PARSE, "body %zu accepted", i);
        cr_expect_not_null(strstr(err.msg, bad_bodies[i].want), "body %zu: message '%s'", i,
                           err.msg);
        cr_expect_null(r.root, "body %zu left a tree", i);
    }
}

Test(review, rejects_deep_nesting)
{
    char body[4200];
    struct review_req r;
    struct kerr_info err;
    size_t i, n = 0;

    n += (size_t)snprintf(body, sizeof(body), "{\"request\":{\"object\":");
    for (i = 0; i < 2000; i++)
        body[n++] = '[';
    for (i = 0; i < 2000; i++)
        body[n++] = ']';
    memcpy(body + n, "}}", 3);
    cr_expect_eq(decode(&r, body, &err), KERR_PARSE);
}

static char *encode(const struct review_req *req, const struct review_resp *resp)
{
    char *out = NULL;
    size_t len = 0;

    cr_assert_eq(review_encode(req, resp, &out, &len, NULL), KERR_OK);
    cr_assert_eq(strlen(out), len);
    return out;
}

/* Byte-for-byte what controller-runtime writes for admission.Allowed / Denied / Errored. */
Test(review, encodes_like_controller_runtime)
{
    struct review_req r;
    struct review_resp resp;
    struct kerr_info err;
    char *out;

    cr_assert_eq(decode(&r,
                        "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
                        "\"request\":{\"uid\":\"abc-123\"}}",
                        &err),
                 KERR_OK);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "operation %s is allowed", "CREATE"), KERR_OK);
    out = encode(&r, &resp);
    cr_expect_str_eq(out, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
                          "\"response\":{\"uid\":\"abc-123\",\"allowed\":true,\"status\":{"
                          "\"metadata\":{},\"message\":\"operation CREATE is allowed\","
                          "\"code\":200}}}");
    free(out);
    cr_assert_eq(review_deny(&resp, "no \"way\""), KERR_OK);
    out = encode(&r, &resp);
    cr_expect_str_eq(out, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
                          "\"response\":{\"uid\":\"abc-123\",\"allowed\":false,\"status\":{"
                          "\"metadata\":{},\"message\":\"no \\\"way\\\"\",\"reason\":"
                          "\"Forbidden\",\"code\":403}}}");
    free(out);
    cr_assert_eq(review_errored(&resp, 500, "boom"), KERR_OK);
    out = encode(&r, &resp);
    cr_expect_str_eq(out, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
                          "\"response\":{\"uid\":\"abc-123\",\"allowed\":false,\"status\":{"
                          "\"metadata\":{},\"message\":\"boom\",\"code\":500}}}");
    free(out);
    review_resp_release(&resp);
    review_req_release(&r);
}

Test(review, echoes_v1beta1_and_carries_warnings)
{
    struct review_req r;
    struct review_resp resp;
    struct kerr_info err;
    char *out;
    int i;

    cr_assert_eq(decode(&r,
                        "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"request\":{\"uid\":"
                        "\"x\"}}",
                        &err),
                 KERR_OK);
    review_resp_init(&resp);
    cr_assert_eq(review_allow(&resp, "ok"), KERR_OK);
    for (i = 0; i < REVIEW_MAX_WARNINGS + 3; i++)
        cr_assert_eq(review_warn(&resp, "w%d", i), KERR_OK);
    cr_expect_eq(resp.n_warnings, REVIEW_MAX_WARNINGS);
    out = encode(&r, &resp);
    cr_expect_not_null(strstr(out, "\"apiVersion\":\"admission.k8s.io/v1beta1\""));
    cr_expect_not_null(strstr(out, "\"warnings\":[\"w0\",\"w1\""));
    cr_expect_null(strstr(out, "\"w8\""));
    cr_expect_null(strstr(out, "\"reason\""));
    free(out);
    review_resp_release(&resp);
    review_req_release(&r);
}

Test(review, patch_is_base64_json_patch)
{
    struct review_resp resp;
    cJSON *ops = cJSON_Parse("[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{}}]");
    cJSON *doc = NULL;
    unsigned char *raw = NULL;
    size_t rawlen = 0;
    char *out;
    const char *b64;

    review_resp_init(&resp);
    cr_assert_eq(review_set_patch(&resp, ops, NULL), KERR_OK);
    cr_assert_eq(review_allow(&resp, "patched"), KERR_OK);
    out = encode(NULL, &resp);
    cr_assert_eq(kjson_parse(out, strlen(out), NULL, &doc, NULL, NULL), KERR_OK);
    cr_expect_str_eq(kjson_get_str(doc, "response.patchType"), "JSONPatch");
    cr_expect_str_eq(kjson_get_str(doc, "response.uid"), "");
    b64 = kjson_get_str(doc, "response.patch");
    cr_assert_not_null(b64);
    cr_assert_eq(crypto_b64_decode(b64, strlen(b64), &raw, &rawlen, NULL), KERR_OK);
    cr_expect_str_eq((char *)raw, "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{}}]");
    free(raw);
    free(out);
    cJSON_Delete(doc);
    /* An empty patch clears it. */
    cJSON_DeleteItemFromArray(ops, 0);
    cr_assert_eq(review_set_patch(&resp, ops, NULL), KERR_OK);
    cr_expect_null(resp.patch);
    cJSON_Delete(ops);
    review_resp_release(&resp);
}

Test(review, encode_error_for_undecodable_bodies)
{
    char *out = NULL;
    size_t len = 0;

    cr_assert_eq(review_encode_error(NULL, 400, "request body is empty", &out, &len, NULL),
                 KERR_OK);
    cr_expect_str_eq(out, "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\","
                          "\"response\":{\"uid\":\"\",\"allowed\":false,\"status\":{\"metadata\":"
                          "{},\"message\":\"request body is empty\",\"code\":400}}}");
    free(out);
}

Test(review, op_names)
{
    cr_expect_str_eq(review_op_name(REVIEW_OP_CREATE), "CREATE");
    cr_expect_str_eq(review_op_name(REVIEW_OP_UPDATE), "UPDATE");
    cr_expect_str_eq(review_op_name(REVIEW_OP_DELETE), "DELETE");
    cr_expect_str_eq(review_op_name(REVIEW_OP_CONNECT), "CONNECT");
    cr_expect_str_eq(review_op_name(REVIEW_OP_OTHER), "");
}
