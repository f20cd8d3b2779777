/* review - AdmissionReview decoding and encoding; see review.h. */
#include "webhook/review.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/jarena.h"
#include "webhook/jscan.h"
#include "webhook/rneed.h"

static const char empty[] = "";

void review_req_init(struct review_req *r)
{
    memset(r, 0, sizeof(*r));
    r->api_version = REVIEW_API_V1;
    r->uid = r->kind_group = r->kind_version = r->kind_kind = empty;
    r->res_group = r->res_version = r->res_resource = r->sub_resource = empty;
    r->name = r->namespace = r->operation = r->username = empty;
    r->op = REVIEW_OP_OTHER;
}

void review_req_release(struct review_req *r)
{
    jarena_delete(r->root);
    review_req_init(r);
}

const char *review_op_name(enum review_op op)
{
    switch (op) {
    case REVIEW_OP_CREATE:
        return "CREATE";
    case REVIEW_OP_UPDATE:
        return "UPDATE";
    case REVIEW_OP_DELETE:
        return "DELETE";
    case REVIEW_OP_CONNECT:
        return "CONNECT";
    case REVIEW_OP_OTHER:
        break;
    }
    return empty;
}

static enum review_op parse_op(const char *s)
{
    if (strcmp(s, "CREATE") == 0)
        return REVIEW_OP_CREATE;
    if (strcmp(s, "UPDATE") == 0)
        return REVIEW_OP_UPDATE;
    if (strcmp(s, "DELETE") == 0)
        return REVIEW_OP_DELETE;
    if (strcmp(s, "CONNECT") == 0)
        return REVIEW_OP_CONNECT;
    return REVIEW_OP_OTHER;
}

/* A string member of obj: "" when absent or null, KERR_PARSE when of another type. */
static enum kerr str_field(const cJSON *obj, const char *key, const char *path, const char **out,
                           struct kerr_info *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    *out = empty;
    if (!v || cJSON_IsNull(v))
        return KERR_OK;
    if (!cJSON_IsString(v) || !v->valuestring)
        return kerr_set(err, KERR_PARSE, "%s%s: expected a string", path, key);
    *out = v->valuestring;
    return KERR_OK;
}

/* An object member of obj: NULL when absent or null, KERR_PARSE when of another type. */
static enum kerr obj_field(const cJSON *obj, const char *key, const char *path, const cJSON **out,
                           struct kerr_info *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return KERR_OK;
    if (!cJSON_IsObject(v))
        return kerr_set(err, KERR_PARSE, "%s%s: expected an object", path, key);
    *out = v;
    return KERR_OK;
}

static enum kerr decode_envelope(struct review_req *r, struct kerr_info *err)
{
    const char *api = empty, *kind = empty;
    enum kerr rc;

    if (!cJSON_IsObject(r->root))
        return kerr_set(err, KERR_PARSE, "AdmissionReview: expected a JSON object");
    if ((rc = str_field(r->root, "apiVersion", "", &api, err)) ||
        (rc = str_field(r->root, "kind", "", &kind, err)))
        return rc;
    if (*kind && strcmp(kind, "AdmissionReview") != 0)
        return kerr_set(err, KERR_PARSE, "kind %s is not AdmissionReview", kind);
    if (!*api || strcmp(api, REVIEW_API_V1) == 0)
        r->api_version = REVIEW_API_V1;
    else if (strcmp(api, REVIEW_API_V1BETA1) == 0)
        r->api_version = REVIEW_API_V1BETA1;
    else
        return kerr_set(err, KERR_PARSE, "no kind \"AdmissionReview\" is registered for version %s",
                        api);
    return KERR_OK;
}

static enum kerr decode_gvk(const cJSON *req, const char *key, const char *path, const char **g,
                            const char **v, const char **k, struct kerr_info *err)
{
    const cJSON *o = NULL;
    enum kerr rc;

    *g = *v = *k = empty;
    if ((rc = obj_field(req, key, "request.", &o, err)) || !o)
        return rc;
    if ((rc = str_field(o, "group", path, g, err)) || (rc = str_field(o, "version", path, v, err)))
        return rc;
    return str_field(o, key, path, k, err);
}

static enum kerr decode_request(struct review_req *r, const cJSON *req, struct kerr_info *err)
{
    const cJSON *user = NULL, *dry, *opts;
    enum kerr rc;

    if ((rc = str_field(req, "uid", "request.", &r->uid, err)) ||
        (rc = decode_gvk(req, "kind", "request.kind.", &r->kind_group, &r->kind_version,
                         &r->kind_kind, err)) ||
        (rc = decode_gvk(req, "resource", "request.resource.", &r->res_group, &r->res_version,
                         &r->res_resource, err)) ||
        (rc = str_field(req, "subResource", "request.", &r->sub_resource, err)) ||
        (rc = str_field(req, "name", "request.", &r->name, err)) ||
        (rc = str_field(req, "namespace", "request.", &r->namespace, err)) ||
        (rc = str_field(req, "operation", "request.", &r->operation, err)) ||
        (rc = obj_field(req, "userInfo", "request.", &user, err)))
        return rc;
    if (user && (rc = str_field(user, "username", "request.userInfo.", &r->username, err)))
        return rc;
    dry = cJSON_GetObjectItemCaseSensitive(req, "dryRun");
    if (dry && !cJSON_IsNull(dry) && !cJSON_IsBool(dry))
        return kerr_set(err, KERR_PARSE, "request.dryRun: expected a boolean");
    r->dry_run = cJSON_IsTrue(dry);
    opts = cJSON_GetObjectItemCaseSensitive(req, "options");
    if (cJSON_IsObject(opts)) {
        const cJSON *pp = cJSON_GetObjectItemCaseSensitive(opts, "propagationPolicy");

        r->orphan =
            (cJSON_IsString(pp) && pp->valuestring && strcmp(pp->valuestring, "Orphan") == 0) ||
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(opts, "orphanDependents"));
    }
    r->op = parse_op(r->operation);
    r->object = cJSON_GetObjectItemCaseSensitive(req, "object");
    if (cJSON_IsNull(r->object))
        r->object = NULL;
    r->old_object = cJSON_GetObjectItemCaseSensitive(req, "oldObject");
    if (cJSON_IsNull(r->old_object))
        r->old_object = NULL;
    return KERR_OK;
}

/* What need reads of a review (webhook/rneed), the whole body for REVIEW_NEED_ALL. */
static const struct jscan_keep *schema(enum review_need need)
{
    static const struct jscan_keep all = { JSCAN_ALL, NULL, NULL };

    switch (need) {
    case REVIEW_NEED_COMPONENTS:
        return rneed_components();
    case REVIEW_NEED_ETCD:
        return rneed_etcd();
    case REVIEW_NEED_MUTATE:
        return rneed_mutate();
    case REVIEW_NEED_ENVELOPE:
        return rneed_envelope();
    case REVIEW_NEED_LABELS:
        return rneed_labels();
    case REVIEW_NEED_ALL:
        break;
    }
    return &all;
}

/* Only whitespace (space, tab, CR, LF) between end and the end of the body, no NUL. */
static int only_space_after(const char *body, size_t len, const char *end)
{
    while (end && end < body + len && *end && strchr(" \t\r\n", *end))
        end++;
    return !end || end >= body + len;
}

/* The checks after the parse, on r->root (OWNED by r); nul_at is where a read string has NUL. */
static enum kerr decode_tree_fields(struct review_req *r, const struct jscan_result *scan,
                                    struct kerr_info *err)
{
    const cJSON *req = NULL;
    enum kerr rc;

    if ((rc = decode_envelope(r, err)) || (rc = obj_field(r->root, "request", "", &req, err)))
        return rc;
    if (!req)
        return kerr_set(err, KERR_PARSE, "AdmissionReview has no request");
    if ((rc = decode_request(r, req, err)))
        return rc;
    if (scan->has_nul)
        return kerr_set(err, KERR_PARSE,
                        "request body: the string at byte %zu contains a NUL character (\\u0000)",
                        scan->nul_at);
    return KERR_OK;
}

static enum kerr too_big(struct kerr_info *err)
{
    return kerr_set(err, KERR_TOOBIG,
                    "the review is too large to decide: its parsed tree would take more than "
                    "%u bytes (the parse budget)",
                    (unsigned)REVIEW_PARSE_BUDGET);
}

enum kerr review_req_decode_tree(struct review_req *r, const char *body, size_t len,
                                 enum review_need need, struct kerr_info *err)
{
    const char *end = NULL;
    struct jscan_result scan;
    enum kerr rc = KERR_OK;
    int over = 0;

    review_req_release(r);
    memset(&scan, 0, sizeof(scan));
    if (!body || len == 0)
        return kerr_set(err, KERR_PARSE, "request body is empty");
    /*
     * cJSON directly, not kjson_parse: its depth pre-scan costs a quarter of
     * a review's CPU time, and cJSON's own nesting limit (CJSON_NESTING_LIMIT,
     * 1000) already bounds the recursion of the parser and of every walk here.
     * Into the thread's arena (common/jarena) when the process installed it:
     * the tree lives only until review_req_release on this thread.
     */
    r->root = jarena_parse_budget(body, len, &end, REVIEW_PARSE_BUDGET, &over);
    if (!r->root && over) {
        rc = too_big(err);
        goto out;
    }
    if (!r->root) {
        rc = kerr_set(err, KERR_PARSE, "request body is not valid JSON (near byte %zu)",
                      end && end >= body ? (size_t)(end - body) : (size_t)0);
        goto out;
    }
    if (!only_space_after(body, len, end)) {
        rc = kerr_set(err, KERR_PARSE, "request body has data after the JSON value");
        goto out;
    }
    /* Where a string the decision reads holds a NUL: the tree cannot tell (C strings). */
    if (jscan_filter(body, len, schema(need), NULL, &scan) != KERR_OK) {
        rc = kerr_set(err, KERR_INTERNAL, "the JSON scanner refused what cJSON parsed");
        goto out;
    }
    rc = decode_tree_fields(r, &scan, err);
out:
    if (rc)
        review_req_release(r);
    return rc;
}

enum kerr review_req_decode(struct review_req *r, const char *body, size_t len,
                            struct kerr_info *err)
{
    return review_req_decode_tree(r, body, len, REVIEW_NEED_ALL, err);
}

enum kerr review_req_decode_sel(struct review_req *r, const char *body, size_t len,
                                enum review_need need, struct kerr_info *err)
{
    struct jscan_result scan;
    struct buf kept;
    const char *end = NULL;
    enum kerr rc;
    int over = 0;

    review_req_release(r);
    if (!body || len == 0 || need == REVIEW_NEED_ALL)
        return review_req_decode_tree(r, body, len, need, err);
    buf_init(&kept, len + 1);
    rc = jscan_filter(body, len, schema(need), &kept, &scan);
    if (rc == KERR_NOMEM || rc == KERR_TOOBIG) {
        buf_release(&kept);
        return kerr_set(err, KERR_NOMEM, "decoding the review");
    }
    /* Not JSON, or data after it: cJSON's parse of the whole body words the error. */
    if (rc || !only_space_after(body, len, body + scan.end)) {
        buf_release(&kept);
        return review_req_decode_tree(r, body, len, need, err);
    }
    r->root = jarena_parse_budget(kept.data, kept.len, &end, REVIEW_PARSE_BUDGET, &over);
    buf_release(&kept);
    if (!r->root && over)
        return too_big(err);
    if (!r->root)
        return review_req_decode_tree(r, body, len, need, err);
    rc = decode_tree_fields(r, &scan, err);
    if (rc)
        review_req_release(r);
    return rc;
}

void review_resp_init(struct review_resp *r)
{
    memset(r, 0, sizeof(*r));
    r->reason = empty;
}

void review_resp_release(struct review_resp *r)
{
    size_t i;

    free(r->message);
    free(r->details);
    for (i = 0; i < r->n_warnings; i++)
        free(r->warnings[i]);
    free(r->patch);
    review_resp_init(r);
}

__attribute__((format(printf, 2, 0))) static enum kerr vformat(char **out, const char *fmt,
                                                               va_list ap)
{
    struct buf b;
    enum kerr rc;

    buf_init(&b, REVIEW_MAX_TEXT);
    rc = buf_vappendf(&b, fmt, ap);
    if (rc == KERR_OK) {
        *out = buf_detach(&b, NULL);
        if (!*out)
            rc = KERR_NOMEM;
    }
    buf_release(&b);
    return rc;
}

__attribute__((format(printf, 5, 0))) static enum kerr set_verdict(struct review_resp *r,
                                                                   int allowed, int code,
                                                                   const char *reason,
                                                                   const char *fmt, va_list ap)
{
    char *msg = NULL;
    enum kerr rc = vformat(&msg, fmt, ap);

    if (rc)
        return rc;
    free(r->message);
    free(r->details);
    r->message = msg;
    r->details = NULL;
    r->allowed = allowed;
    r->code = code;
    r->reason = reason;
    return KERR_OK;
}

enum kerr review_allow(struct review_resp *r, const char *fmt, ...)
{
    va_list ap;
    enum kerr rc;

    va_start(ap, fmt);
    rc = set_verdict(r, 1, 200, empty, fmt, ap);
    va_end(ap);
    return rc;
}

enum kerr review_deny(struct review_resp *r, const char *fmt, ...)
{
    va_list ap;
    enum kerr rc;

    va_start(ap, fmt);
    rc = set_verdict(r, 0, 403, "Forbidden", fmt, ap);
    va_end(ap);
    return rc;
}

enum kerr review_invalid(struct review_resp *r, const cJSON *details, const char *fmt, ...)
{
    char *text = cJSON_PrintUnformatted(details);
    va_list ap;
    enum kerr rc;

    if (!text)
        return KERR_NOMEM;
    va_start(ap, fmt);
    rc = set_verdict(r, 0, 422, "Invalid", fmt, ap);
    va_end(ap);
    if (rc)
        free(text);
    else
        r->details = text;
    return rc;
}

enum kerr review_errored(struct review_resp *r, int code, const char *fmt, ...)
{
    va_list ap;
    enum kerr rc;

    va_start(ap, fmt);
    rc = set_verdict(r, 0, code, empty, fmt, ap);
    va_end(ap);
    return rc;
}

enum kerr review_warn(struct review_resp *r, const char *fmt, ...)
{
    va_list ap;
    char *w = NULL;
    enum kerr rc;

    if (r->n_warnings >= REVIEW_MAX_WARNINGS)
        return KERR_OK;
    va_start(ap, fmt);
    rc = vformat(&w, fmt, ap);
    va_end(ap);
    if (rc)
        return rc;
    r->warnings[r->n_warnings++] = w;
    return KERR_OK;
}

enum kerr review_set_patch(struct review_resp *r, const cJSON *ops, struct kerr_info *err)
{
    char *text = NULL;

    if (!cJSON_IsArray(ops))
        return kerr_set(err, KERR_INVAL, "a JSON Patch is an array");
    if (cJSON_GetArraySize(ops) > 0) {
        text = cJSON_PrintUnformatted(ops);
        if (!text)
            return kerr_set(err, KERR_NOMEM, "encoding the JSON Patch");
    }
    free(r->patch);
    r->patch = text;
    return KERR_OK;
}

/* status as metav1.Status marshals: metadata {}, then message, reason, details, code when set. */
static int add_status(cJSON *resp, const struct review_resp *r)
{
    cJSON *st = cJSON_AddObjectToObject(resp, "status");
    char code[16];

    if (!st || !cJSON_AddObjectToObject(st, "metadata"))
        return -1;
    if (r->message && *r->message && !cJSON_AddStringToObject(st, "message", r->message))
        return -1;
    if (r->reason && *r->reason && !cJSON_AddStringToObject(st, "reason", r->reason))
        return -1;
    if (r->details && !cJSON_AddRawToObject(st, "details", r->details))
        return -1;
    /* An integer as raw JSON: cJSON prints numbers with "%1.15g" and reads them back. */
    snprintf(code, sizeof(code), "%d", r->code ? r->code : 200);
    if (!cJSON_AddRawToObject(st, "code", code))
        return -1;
    return 0;
}

static int add_patch(cJSON *resp, const struct review_resp *r)
{
    char *b64 = NULL;
    int ok;

    if (!r->patch)
        return 0;
    if (crypto_b64_encode(r->patch, strlen(r->patch), &b64, NULL, NULL))
        return -1;
    ok = cJSON_AddStringToObject(resp, "patch", b64) &&
         cJSON_AddStringToObject(resp, "patchType", "JSONPatch");
    free(b64);
    return ok ? 0 : -1;
}

static int add_warnings(cJSON *resp, const struct review_resp *r)
{
    cJSON *arr, *s;
    size_t i;

    if (r->n_warnings == 0)
        return 0;
    arr = cJSON_AddArrayToObject(resp, "warnings");
    if (!arr)
        return -1;
    for (i = 0; i < r->n_warnings; i++) {
        s = cJSON_CreateString(r->warnings[i]);
        if (!s || !cJSON_AddItemToArray(arr, s)) {
            cJSON_Delete(s);
            return -1;
        }
    }
    return 0;
}

enum kerr review_encode(const struct review_req *req, const struct review_resp *resp, char **out,
                        size_t *len, struct kerr_info *err)
{
    cJSON *root = NULL, *r;
    enum kerr rc = KERR_NOMEM;

    *out = NULL;
    *len = 0;
    root = cJSON_CreateObject();
    if (!root || !cJSON_AddStringToObject(root, "kind", "AdmissionReview") ||
        !cJSON_AddStringToObject(root, "apiVersion", req ? req->api_version : REVIEW_API_V1))
        goto out;
    r = cJSON_AddObjectToObject(root, "response");
    if (!r || !cJSON_AddStringToObject(r, "uid", req ? req->uid : empty) ||
        !cJSON_AddBoolToObject(r, "allowed", resp->allowed) || add_status(r, resp) ||
        add_patch(r, resp) || add_warnings(r, resp))
        goto out;
    *out = cJSON_PrintUnformatted(root);
    if (!*out)
        goto out;
    *len = strlen(*out);
    rc = KERR_OK;
out:
    cJSON_Delete(root);
    if (rc)
        kerr_set(err, rc, "encoding the AdmissionReview response");
    return rc;
}

enum kerr review_encode_error(const struct review_req *req, int code, const char *message,
                              char **out, size_t *len, struct kerr_info *err)
{
    struct review_resp resp;
    enum kerr rc;

    review_resp_init(&resp);
    rc = review_errored(&resp, code, "%s", message);
    if (rc == KERR_OK)
        rc = review_encode(req, &resp, out, len, err);
    else
        kerr_set(err, rc, "building the error response");
    review_resp_release(&resp);
    return rc;
}
