#include "common/k8s.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jarena.h"
#include "common/k8s_http.h"
#include "common/pager.h"

#define PATH_MAX_LEN (64u * 1024u) /* cap on a request path with its query */
#define SEGMENT_MAX  253
#define LABEL_MAX    63

static const struct k8s_list_opts no_list_opts;
static const struct k8s_write_opts no_write_opts;
static const struct k8s_delete_opts no_delete_opts;

/* A path segment the API server accepts as a name (IsValidPathSegmentName). */
static int valid_segment(const char *s)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > SEGMENT_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return 0;
    return strpbrk(s, "/%") == NULL;
}

/* A DNS-1123 label (namespace names). */
static int valid_label(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    size_t i;

    if (n == 0 || n > LABEL_MAX || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (i = 0; i < n; i++) {
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    }
    return 1;
}

static enum kerr add_segment(struct buf *out, const char *seg, struct kerr_info *err)
{
    char *e = curl_easy_escape(NULL, seg, 0);
    enum kerr rc;

    if (!e)
        return kerr_set(err, KERR_NOMEM, "k8s: escaping a path segment");
    rc = buf_appendf(out, "/%s", e);
    curl_free(e);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "k8s: request path too long");
    return KERR_OK;
}

static enum kerr check_path(const struct k8s_resource *res, const char *ns, const char *name,
                            const char *sub, struct kerr_info *err)
{
    if (!res || !valid_segment(res->version) || !valid_segment(res->resource) ||
        (res->group && *res->group && !valid_segment(res->group)))
        return kerr_set(err, KERR_INVAL, "k8s: invalid resource descriptor");
    if (ns && res->namespaced && !valid_label(ns))
        return kerr_set(err, KERR_INVAL, "k8s: invalid namespace \"%.64s\"", ns);
    if (name && !valid_segment(name))
        return kerr_set(err, KERR_INVAL, "k8s: invalid name \"%.256s\"", name);
    if (sub && !valid_segment(sub))
        return kerr_set(err, KERR_INVAL, "k8s: invalid subresource \"%.64s\"", sub);
    if (res->namespaced && name && !ns)
        return kerr_set(err, KERR_INVAL, "k8s: %s \"%s\" needs a namespace", res->resource, name);
    return KERR_OK;
}

enum kerr k8s_path(const struct k8s_resource *res, const char *ns, const char *name,
                   const char *subresource, struct buf *out, struct kerr_info *err)
{
    enum kerr rc = check_path(res, ns, name, subresource, err);

    if (rc != KERR_OK)
        return rc;
    if (!res->group || !*res->group)
        rc = buf_appends(out, "/api");
    else if ((rc = buf_appends(out, "/apis")) == KERR_OK)
        rc = add_segment(out, res->group, err);
    if (rc == KERR_OK)
        rc = add_segment(out, res->version, err);
    if (rc == KERR_OK && res->namespaced && ns && (rc = buf_appends(out, "/namespaces")) == KERR_OK)
        rc = add_segment(out, ns, err);
    if (rc == KERR_OK)
        rc = add_segment(out, res->resource, err);
    if (rc == KERR_OK && name)
        rc = add_segment(out, name, err);
    if (rc == KERR_OK && subresource)
        rc = add_segment(out, subresource, err);
    if (rc != KERR_OK && (!err || err->code != rc))
        return kerr_set(err, rc, "k8s: building a request path");
    return rc;
}

enum kerr k8s_query_add(struct buf *out, const char *key, const char *value, struct kerr_info *err)
{
    char *k = NULL, *v = NULL;
    enum kerr rc;

    if (!value)
        return KERR_OK;
    k = curl_easy_escape(NULL, key, 0);
    v = curl_easy_escape(NULL, value, 0);
    if (!k || !v)
        rc = kerr_set(err, KERR_NOMEM, "k8s: escaping a query value");
    else if (buf_appendf(out, "%c%s=%s", strchr(buf_str(out), '?') ? '&' : '?', k, v) != KERR_OK)
        rc = kerr_set(err, KERR_TOOBIG, "k8s: request path too long");
    else
        rc = KERR_OK;
    curl_free(k);
    curl_free(v);
    return rc;
}

/* Add key=value unless value is NULL or empty. */
static enum kerr add_opt(struct buf *out, const char *key, const char *value, struct kerr_info *err)
{
    if (!value || !*value)
        return KERR_OK;
    return k8s_query_add(out, key, value, err);
}

static enum kerr add_long(struct buf *out, const char *key, long value, struct kerr_info *err)
{
    char num[32];

    if (value <= 0)
        return KERR_OK;
    snprintf(num, sizeof(num), "%ld", value);
    return k8s_query_add(out, key, num, err);
}

static enum kerr list_query(struct buf *p, const struct k8s_list_opts *o, struct kerr_info *err)
{
    enum kerr rc = add_opt(p, "labelSelector", o->label_selector, err);

    if (rc == KERR_OK)
        rc = add_opt(p, "fieldSelector", o->field_selector, err);
    if (rc == KERR_OK)
        rc = add_long(p, "limit", o->limit, err);
    if (rc == KERR_OK)
        rc = add_opt(p, "continue", o->continue_token, err);
    if (rc == KERR_OK)
        rc = add_opt(p, "resourceVersion", o->resource_version, err);
    if (rc == KERR_OK && o->resource_version && *o->resource_version)
        rc = add_opt(p, "resourceVersionMatch", o->resource_version_match, err);
    if (rc == KERR_OK)
        rc = add_long(p, "timeoutSeconds", o->timeout_seconds, err);
    return rc;
}

static enum kerr write_query(struct buf *p, const struct k8s_write_opts *o, int apply,
                             struct kerr_info *err)
{
    enum kerr rc = KERR_OK;

    if (o->dry_run)
        rc = k8s_query_add(p, "dryRun", "All", err);
    if (rc == KERR_OK)
        rc = add_opt(p, "fieldManager", o->field_manager, err);
    if (rc == KERR_OK && apply && o->force)
        rc = k8s_query_add(p, "force", "true", err);
    if (rc == KERR_OK)
        rc = add_opt(p, "fieldValidation", o->field_validation, err);
    return rc;
}

/* Send body (BORROWED, may be NULL) as JSON with the given Content-Type. */
static enum kerr send_json_until(struct k8s_client *c, const char *method, const struct buf *path,
                                 const char *content_type, const cJSON *body, int64_t deadline_ms,
                                 cJSON **out, struct kerr_info *err)
{
    struct k8s_http_req req;
    char *text = NULL;
    enum kerr rc;

    memset(&req, 0, sizeof(req));
    if (body) {
        text = cJSON_PrintUnformatted(body);
        if (!text)
            return kerr_set(err, KERR_NOMEM, "k8s: printing the request body");
        req.content_type = content_type;
        req.body = text;
        req.body_len = strlen(text);
    }
    req.method = method;
    req.path = buf_str(path);
    req.deadline_ms = deadline_ms;
    rc = k8s_http_do(c, &req, out, err);
    free(text);
    return rc;
}

static enum kerr send_json(struct k8s_client *c, const char *method, const struct buf *path,
                           const char *content_type, const cJSON *body, cJSON **out,
                           struct kerr_info *err)
{
    return send_json_until(c, method, path, content_type, body, 0, out, err);
}

static const char *meta_str(const cJSON *obj, const char *key)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(meta, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

enum kerr k8s_get(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                  const char *name, const char *subresource, cJSON **out, struct kerr_info *err)
{
    return k8s_get_until(c, res, ns, name, subresource, 0, out, err);
}

enum kerr k8s_get_until(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                        const char *name, const char *subresource, int64_t deadline_ms, cJSON **out,
                        struct kerr_info *err)
{
    struct buf path;
    enum kerr rc;

    *out = NULL;
    if (!name)
        return kerr_set(err, KERR_INVAL, "k8s: GET needs a name");
    buf_init(&path, PATH_MAX_LEN);
    rc = k8s_path(res, ns, name, subresource, &path, err);
    if (rc == KERR_OK)
        rc = send_json_until(c, "GET", &path, NULL, NULL, deadline_ms, out, err);
    if (rc == KERR_OK && !*out)
        rc = kerr_set(err, KERR_PARSE, "k8s: GET %s: empty answer", buf_str(&path));
    buf_release(&path);
    return rc;
}

enum kerr k8s_list(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                   const struct k8s_list_opts *opts, cJSON **out, struct kerr_info *err)
{
    struct k8s_http_req req;
    struct buf path;
    enum kerr rc;

    *out = NULL;
    buf_init(&path, PATH_MAX_LEN);
    rc = k8s_path(res, ns, NULL, NULL, &path, err);
    if (rc == KERR_OK)
        rc = list_query(&path, opts ? opts : &no_list_opts, err);
    memset(&req, 0, sizeof(req));
    req.method = "GET";
    req.path = buf_str(&path);
    req.deadline_ms = opts ? opts->deadline_ms : 0;
    req.arena = opts ? opts->arena : 0;
    if (rc == KERR_OK)
        rc = k8s_http_do(c, &req, out, err);
    if (rc == KERR_OK && !cJSON_IsObject(*out)) {
        jarena_delete(*out); /* a plain tree too */
        *out = NULL;
        rc = kerr_set(err, KERR_PARSE, "k8s: LIST %s: answer is not an object", buf_str(&path));
    }
    buf_release(&path);
    return rc;
}

enum kerr k8s_list_all(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                       const struct k8s_list_opts *opts, cJSON **out, struct kerr_info *err)
{
    const struct k8s_list_opts *lo = opts ? opts : &no_list_opts;
    struct pager_opts po = { .label_selector = lo->label_selector,
                             .field_selector = lo->field_selector,
                             .limit = lo->limit,
                             .resource_version = lo->resource_version,
                             .resource_version_match = lo->resource_version_match,
                             .timeout_seconds = lo->timeout_seconds };

    return pager_list_object(c, res, ns, &po, out, err);
}

/* ns for a write of obj: the argument, else obj's metadata.namespace. */
static enum kerr write_ns(const struct k8s_resource *res, const char *ns, const cJSON *obj,
                          const char **out, struct kerr_info *err)
{
    *out = NULL;
    if (!res || !res->namespaced)
        return KERR_OK;
    *out = ns ? ns : meta_str(obj, "namespace");
    if (!*out)
        return kerr_set(err, KERR_INVAL, "k8s: no namespace for a namespaced %s",
                        res->resource ? res->resource : "resource");
    return KERR_OK;
}

enum kerr k8s_create(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                     const cJSON *obj, const struct k8s_write_opts *opts, cJSON **out,
                     struct kerr_info *err)
{
    struct buf path;
    enum kerr rc;

    if (out)
        *out = NULL;
    if (!cJSON_IsObject(obj))
        return kerr_set(err, KERR_INVAL, "k8s: CREATE needs an object");
    buf_init(&path, PATH_MAX_LEN);
    rc = write_ns(res, ns, obj, &ns, err);
    if (rc == KERR_OK)
        rc = k8s_path(res, ns, NULL, NULL, &path, err);
    if (rc == KERR_OK)
        rc = write_query(&path, opts ? opts : &no_write_opts, 0, err);
    if (rc == KERR_OK)
        rc = send_json_until(c, "POST", &path, "application/json", obj,
                             opts ? opts->deadline_ms : 0, out, err);
    buf_release(&path);
    return rc;
}

enum kerr k8s_update(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                     const char *name, const cJSON *obj, const struct k8s_write_opts *opts,
                     cJSON **out, struct kerr_info *err)
{
    struct buf path;
    enum kerr rc;

    if (out)
        *out = NULL;
    if (!opts)
        opts = &no_write_opts;
    if (!cJSON_IsObject(obj))
        return kerr_set(err, KERR_INVAL, "k8s: UPDATE needs an object");
    if (!name && !(name = meta_str(obj, "name")))
        return kerr_set(err, KERR_INVAL, "k8s: UPDATE needs a name");
    buf_init(&path, PATH_MAX_LEN);
    rc = write_ns(res, ns, obj, &ns, err);
    if (rc == KERR_OK)
        rc = k8s_path(res, ns, name, opts->subresource, &path, err);
    if (rc == KERR_OK)
        rc = write_query(&path, opts, 0, err);
    if (rc == KERR_OK)
        rc = send_json_until(c, "PUT", &path, "application/json", obj, opts->deadline_ms, out, err);
    buf_release(&path);
    return rc;
}

static const char *patch_content_type(enum k8s_patch_type type)
{
    switch (type) {
    case K8S_PATCH_MERGE:
        return "application/merge-patch+json";
    case K8S_PATCH_JSON:
        return "application/json-patch+json";
    case K8S_PATCH_STRATEGIC:
        return "application/strategic-merge-patch+json";
    case K8S_PATCH_APPLY:
        return "application/apply-patch+yaml";
    }
    return NULL;
}

enum kerr k8s_patch(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                    const char *name, enum k8s_patch_type type, const cJSON *patch,
                    const struct k8s_write_opts *opts, cJSON **out, struct kerr_info *err)
{
    const char *ct = patch_content_type(type);
    struct buf path;
    enum kerr rc;

    if (out)
        *out = NULL;
    if (!opts)
        opts = &no_write_opts;
    if (!ct || !patch || (type == K8S_PATCH_JSON ? !cJSON_IsArray(patch) : !cJSON_IsObject(patch)))
        return kerr_set(err, KERR_INVAL, "k8s: PATCH body does not fit the patch type");
    if (type == K8S_PATCH_APPLY && (!opts->field_manager || !*opts->field_manager))
        return kerr_set(err, KERR_INVAL, "k8s: server-side apply needs a field manager");
    if (!ns && res && res->namespaced)
        return kerr_set(err, KERR_INVAL, "k8s: PATCH of a namespaced %s needs a namespace",
                        res->resource ? res->resource : "resource");
    buf_init(&path, PATH_MAX_LEN);
    rc = name ? k8s_path(res, ns, name, opts->subresource, &path, err)
              : kerr_set(err, KERR_INVAL, "k8s: PATCH needs a name");
    if (rc == KERR_OK)
        rc = write_query(&path, opts, type == K8S_PATCH_APPLY, err);
    if (rc == KERR_OK)
        rc = send_json(c, "PATCH", &path, ct, patch, out, err);
    buf_release(&path);
    return rc;
}

/* The DeleteOptions body. NULL on allocation failure. */
static cJSON *delete_body(const struct k8s_delete_opts *o)
{
    cJSON *b = cJSON_CreateObject();
    cJSON *pre, *dry;
    int bad = !b;

    if (!bad && o->propagation_policy)
        bad = !cJSON_AddStringToObject(b, "propagationPolicy", o->propagation_policy);
    if (!bad && o->grace_period_set)
        bad = !cJSON_AddNumberToObject(b, "gracePeriodSeconds", (double)o->grace_period_seconds);
    if (!bad && (o->precondition_uid || o->precondition_resource_version)) {
        pre = cJSON_AddObjectToObject(b, "preconditions");
        bad = !pre ||
              (o->precondition_uid && !cJSON_AddStringToObject(pre, "uid", o->precondition_uid)) ||
              (o->precondition_resource_version &&
               !cJSON_AddStringToObject(pre, "resourceVersion", o->precondition_resource_version));
    }
    if (!bad && o->dry_run) {
        dry = cJSON_AddArrayToObject(b, "dryRun");
        bad = !dry || !cJSON_AddItemToArray(dry, cJSON_CreateString("All"));
    }
    if (bad) {
        cJSON_Delete(b);
        return NULL;
    }
    return b;
}

enum kerr k8s_delete(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                     const char *name, const struct k8s_delete_opts *opts, cJSON **out,
                     struct kerr_info *err)
{
    struct buf path;
    cJSON *body = NULL;
    enum kerr rc;

    if (out)
        *out = NULL;
    if (!name)
        return kerr_set(err, KERR_INVAL, "k8s: DELETE needs a name");
    buf_init(&path, PATH_MAX_LEN);
    rc = k8s_path(res, ns, name, NULL, &path, err);
    if (rc == KERR_OK && opts && opts->dry_run)
        rc = k8s_query_add(&path, "dryRun", "All", err);
    if (rc == KERR_OK && !(body = delete_body(opts ? opts : &no_delete_opts)))
        rc = kerr_set(err, KERR_NOMEM, "k8s: building DeleteOptions");
    if (rc == KERR_OK)
        rc = send_json(c, "DELETE", &path, "application/json", body, out, err);
    cJSON_Delete(body);
    buf_release(&path);
    return rc;
}

static enum kerr watch_query(struct buf *p, const struct k8s_watch_opts *o, struct kerr_info *err)
{
    enum kerr rc = k8s_query_add(p, "watch", "1", err);

    if (rc == KERR_OK)
        rc = k8s_query_add(p, "allowWatchBookmarks", "true", err);
    if (rc == KERR_OK)
        rc = add_opt(p, "resourceVersion", o->resource_version, err);
    if (rc == KERR_OK)
        rc = add_long(p, "timeoutSeconds", o->timeout_seconds, err);
    if (rc == KERR_OK)
        rc = add_opt(p, "labelSelector", o->label_selector, err);
    if (rc == KERR_OK)
        rc = add_opt(p, "fieldSelector", o->field_selector, err);
    if (rc == KERR_OK && o->send_initial_events)
        rc = k8s_query_add(p, "sendInitialEvents", "true", err);
    if (rc == KERR_OK && o->send_initial_events)
        rc = k8s_query_add(p, "resourceVersionMatch", "NotOlderThan", err);
    return rc;
}

enum kerr k8s_watch(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                    const struct k8s_watch_opts *opts, struct kerr_info *err)
{
    struct k8s_http_req req;
    struct buf path;
    enum kerr rc;

    if (!opts || !opts->on_data)
        return kerr_set(err, KERR_INVAL, "k8s: WATCH needs a data callback");
    buf_init(&path, PATH_MAX_LEN);
    rc = k8s_path(res, ns, NULL, NULL, &path, err);
    if (rc == KERR_OK)
        rc = watch_query(&path, opts, err);
    if (rc == KERR_OK) {
        memset(&req, 0, sizeof(req));
        req.method = "GET";
        req.path = buf_str(&path);
        req.watch = 1;
        req.on_data = opts->on_data;
        req.arg = opts->arg;
        req.cancel = opts->cancel;
        rc = k8s_http_do(c, &req, NULL, err);
    }
    buf_release(&path);
    return rc;
}

enum kerr k8s_request(struct k8s_client *c, const char *method, const char *path,
                      const char *content_type, const char *body, size_t len, cJSON **out,
                      struct kerr_info *err)
{
    struct k8s_http_req req;

    if (out)
        *out = NULL;
    if (!method || !*method || !path || path[0] != '/')
        return kerr_set(err, KERR_INVAL, "k8s: a request needs a method and a path");
    memset(&req, 0, sizeof(req));
    req.method = method;
    req.path = path;
    req.body = body;
    req.body_len = body ? len : 0;
    req.content_type = body ? (content_type ? content_type : "application/json") : NULL;
    return k8s_http_do(c, &req, out, err);
}
