#include "tests/kube-sim/api.h"
#include "tests/kube-sim/hook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/kjson.h"
#include "tests/kube-sim/convert.h"
#include "tests/kube-sim/delete.h"
#include "tests/kube-sim/discovery.h"
#include "tests/kube-sim/fault.h"
#include "tests/kube-sim/obj.h"
#include "tests/kube-sim/openapi.h"
#include "tests/kube-sim/pb.h"
#include "tests/kube-sim/prune.h"
#include "tests/kube-sim/read.h"
#include "tests/kube-sim/review.h"
#include "tests/kube-sim/svcip.h"
#include "tests/kube-sim/watch.h"
#include "tests/kube-sim/write.h"

#define MAX_SEGS 10

static const char *const system_namespaces[] = { "default", "kube-system", "kube-public",
                                                 "kube-node-lease" };

const char *ksim_req_query(const struct ksim_req *req, const char *key)
{
    size_t i;

    for (i = 0; i < req->nquery; i++)
        if (strcmp(req->query[i].key, key) == 0)
            return req->query[i].value ? req->query[i].value : "";
    return NULL;
}

void ksim_resp_json(struct ksim_resp *resp, int code, cJSON *body)
{
    char *txt = body ? cJSON_PrintUnformatted(body) : NULL;

    cJSON_Delete(body);
    free(resp->body);
    resp->body = NULL;
    if (!txt) {
        resp->code = 500;
        txt = strdup("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                     "\"Failure\",\"message\":\"Internal error occurred: out of memory\","
                     "\"reason\":\"InternalError\",\"code\":500}");
    } else {
        resp->code = code;
    }
    resp->body = txt;
    resp->body_len = txt ? strlen(txt) : 0;
    resp->content_type = "application/json";
}

void ksim_resp_error(struct ksim_resp *resp, const struct ksim_apierr *e)
{
    cJSON *st = NULL;

    if (ksim_apierr_to_json(e, &st) != KERR_OK)
        st = NULL;
    ksim_resp_json(resp, e->code, st);
    if (e->retry_after)
        resp->retry_after = e->retry_after;
}

void ksim_resp_warn(struct ksim_resp *resp, const char *text)
{
    if (resp->nwarnings < KSIM_MAX_WARNINGS) {
        resp->warnings[resp->nwarnings] = strdup(text);
        if (resp->warnings[resp->nwarnings])
            resp->nwarnings++;
    }
}

int ksim_resp_header(struct ksim_resp *resp, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 3;
    char *h;

    if (resp->nheaders >= KSIM_MAX_HEADERS || !(h = malloc(len)))
        return -1;
    snprintf(h, len, "%s: %s", name, value);
    resp->headers[resp->nheaders++] = h;
    return 0;
}

void ksim_resp_release(struct ksim_resp *resp)
{
    size_t i;

    free(resp->body);
    for (i = 0; i < resp->nwarnings; i++)
        free(resp->warnings[i]);
    for (i = 0; i < resp->nheaders; i++)
        free(resp->headers[i]);
    ksim_watch_free(resp->watch);
    memset(resp, 0, sizeof(*resp));
}

static void plain(struct ksim_resp *resp, int code, const char *text)
{
    free(resp->body);
    resp->body = strdup(text);
    resp->body_len = resp->body ? strlen(resp->body) : 0;
    resp->code = code;
    resp->content_type = "text/plain; charset=utf-8";
}

int ksim_api_externalize(const struct ksim_rtype *rt, cJSON *obj)
{
    char gv[300];

    if (ksim_convert_out(rt, obj) != 0)
        return -1;
    snprintf(gv, sizeof(gv), "%s%s%s", rt->group, *rt->group ? "/" : "", rt->version);
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "apiVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "kind");
    if (!cJSON_AddStringToObject(obj, "apiVersion", gv) ||
        !cJSON_AddStringToObject(obj, "kind", rt->kind))
        return -1;
    return 0;
}

static int bootstrap(struct ksim_api *api)
{
    const struct ksim_rtype *nsrt = ksim_reg_find(api->reg, "", "v1", "namespaces");
    const struct ksim_rtype *svc = ksim_reg_find(api->reg, "", "v1", "services");
    cJSON *obj;
    char json[512], ip[KSIM_SVCIP_LEN];
    size_t i;

    for (i = 0; i < sizeof(system_namespaces) / sizeof(system_namespaces[0]); i++) {
        snprintf(json, sizeof(json),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"},"
                 "\"spec\":{\"finalizers\":[\"kubernetes\"]}}",
                 system_namespaces[i]);
        if (kjson_parse(json, strlen(json), NULL, &obj, NULL, NULL) != KERR_OK)
            return -1;
        if (ksim_obj_prepare_create(nsrt, obj) != 0 ||
            ksim_store_create(api->store, nsrt->store_key, NULL, system_namespaces[i], obj, NULL,
                              NULL) != KERR_OK)
            return -1;
    }
    ksim_svcip_first(api->svcip, ip);
    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"kubernetes\","
             "\"namespace\":\"default\",\"labels\":{\"component\":\"apiserver\",\"provider\":"
             "\"kubernetes\"}},\"spec\":{\"clusterIP\":\"%s\",\"clusterIPs\":["
             "\"%s\"],\"ports\":[{\"name\":\"https\",\"port\":443,\"protocol\":\"TCP\","
             "\"targetPort\":6443}]}}",
             ip, ip);
    if (kjson_parse(json, strlen(json), NULL, &obj, NULL, NULL) != KERR_OK)
        return -1;
    if (ksim_obj_prepare_create(svc, obj) != 0 ||
        ksim_store_create(api->store, svc->store_key, "default", "kubernetes", obj, NULL, NULL) !=
            KERR_OK)
        return -1;
    return 0;
}

static int copy_aliases(struct ksim_api *api, const struct ksim_api_opts *o)
{
    size_t i;

    if (!o->naliases)
        return 0;
    api->aliases = calloc(o->naliases, sizeof(*api->aliases));
    if (!api->aliases)
        return -1;
    api->naliases = o->naliases;
    for (i = 0; i < o->naliases; i++) {
        api->aliases[i].service = strdup(o->aliases[i].service);
        api->aliases[i].namespace = strdup(o->aliases[i].namespace);
        api->aliases[i].host = strdup(o->aliases[i].host);
        api->aliases[i].port = o->aliases[i].port;
        if (!api->aliases[i].service || !api->aliases[i].namespace || !api->aliases[i].host)
            return -1;
    }
    return 0;
}

enum kerr ksim_api_new(const struct ksim_api_opts *opts, struct ksim_api **out,
                       struct kerr_info *err)
{
    struct ksim_store_opts so = { opts->history, opts->max_objects };
    struct ksim_api *api = calloc(1, sizeof(*api));
    enum kerr rc;

    *out = NULL;
    if (!api)
        return kerr_set(err, KERR_NOMEM, NULL);
    api->bookmark_ms = opts->bookmark_ms > 0 ? opts->bookmark_ms : 60000;
    api->sts_delay_ms = opts->sts_delay_ms ? opts->sts_delay_ms : 1000;
    api->gc_interval_ms = opts->gc_interval_ms > 0 ? opts->gc_interval_ms : 200;
    api->webhook_ca = opts->webhook_ca ? strdup(opts->webhook_ca) : NULL;
    api->webhook_cert = opts->webhook_cert ? strdup(opts->webhook_cert) : NULL;
    api->webhook_key = opts->webhook_key ? strdup(opts->webhook_key) : NULL;
    pthread_mutex_init(&api->hook_mu, NULL);
    rc = ksim_svcip_new(opts->service_cidr ? opts->service_cidr : KSIM_SVCIP_DEFAULT_RANGE,
                        &api->svcip, err);
    if (rc == KERR_OK)
        rc = ksim_reg_new(&api->reg, err);
    if (rc == KERR_OK)
        rc = ksim_store_new(&so, &api->store, err);
    if (rc == KERR_OK)
        rc = ksim_fault_new(NULL, &api->fault, err);
    if (rc == KERR_OK &&
        ((opts->webhook_ca && !api->webhook_ca) || (opts->webhook_cert && !api->webhook_cert) ||
         (opts->webhook_key && !api->webhook_key) || copy_aliases(api, opts) != 0 ||
         bootstrap(api) != 0))
        rc = kerr_set(err, KERR_NOMEM, "cannot set up the API state");
    if (rc != KERR_OK) {
        ksim_api_free(api);
        return rc;
    }
    *out = api;
    return KERR_OK;
}

void ksim_api_free(struct ksim_api *api)
{
    size_t i;

    if (!api)
        return;
    ksim_store_free(api->store);
    ksim_reg_free(api->reg);
    ksim_fault_free(api->fault);
    for (i = 0; i < api->naliases; i++) {
        free(api->aliases[i].service);
        free(api->aliases[i].namespace);
        free(api->aliases[i].host);
    }
    free(api->aliases);
    free(api->webhook_ca);
    free(api->webhook_cert);
    free(api->webhook_key);
    ksim_svcip_free(api->svcip);
    ksim_hook_pool_free(api);
    free(api);
}

static int split(const char *path, char segs[MAX_SEGS][254], size_t *n)
{
    const char *p = path;
    size_t len;

    *n = 0;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        len = strcspn(p, "/");
        if (*n == MAX_SEGS || len >= 254)
            return -1;
        memcpy(segs[*n], p, len);
        segs[*n][len] = '\0';
        (*n)++;
        p += len;
    }
    return 0;
}

/* Resolve the resource part of a path (after /api/v1 or /apis/G/V). 0, or 404 / plain 404 (-1). */
static int resolve(struct ksim_api *api, const char *group, const char *version, char r[][254],
                   size_t n, struct ksim_target *t, struct ksim_apierr *e)
{
    const char *plural, *name = "", *sub = "";
    int nsform = n >= 3 && strcmp(r[0], "namespaces") == 0 &&
                 !(n == 3 && (strcmp(r[2], "status") == 0 || strcmp(r[2], "finalize") == 0));

    memset(t, 0, sizeof(*t));
    if (nsform) {
        snprintf(t->ns, sizeof(t->ns), "%s", r[1]);
        r += 2;
        n -= 2;
    }
    if (n == 0 || n > 3)
        return ksim_apierr_set(e, 404, "NotFound",
                               "the server could not find the requested "
                               "resource");
    plural = r[0];
    if (n > 1)
        name = r[1];
    if (n > 2)
        sub = r[2];
    t->rt = ksim_reg_find(api->reg, group, version, plural);
    if (!t->rt || (t->rt->namespaced && !nsform && *name) || (!t->rt->namespaced && nsform) ||
        (*sub && !((strcmp(sub, "status") == 0 && t->rt->has_status) ||
                   (strcmp(sub, "scale") == 0 && t->rt->has_scale))))
        return ksim_apierr_set(e, 404, "NotFound",
                               "the server could not find the requested "
                               "resource");
    snprintf(t->name, sizeof(t->name), "%s", name);
    snprintf(t->sub, sizeof(t->sub), "%s", sub);
    return 0;
}

static int method_not_allowed(struct ksim_resp *resp)
{
    struct ksim_apierr e;

    ksim_apierr_set(&e, 405, "MethodNotAllowed",
                    "the server does not allow this method on the requested resource");
    ksim_resp_error(resp, &e);
    return 405;
}

static int handle_patch(const struct ksim_write_ctx *c, const struct ksim_req *req, cJSON **out,
                        struct ksim_apierr *e)
{
    enum ksim_patch_type type = ksim_patch_type_of(req->content_type);
    const char *force = ksim_req_query(req, "force");
    cJSON *patch = NULL;
    int code = ksim_patch_check_type(type, c->rt->custom, e);

    if (!code && type == KSIM_PATCH_APPLY && (!c->field_manager || !*c->field_manager))
        code = ksim_apierr_invalid(e, "meta.k8s.io", "PatchOptions", "", "fieldManager",
                                   "FieldValueRequired",
                                   "fieldManager: Required value: is required for apply patch");
    if (!code && type != KSIM_PATCH_APPLY && force)
        code = ksim_apierr_invalid(e, "meta.k8s.io", "PatchOptions", "", "force",
                                   "FieldValueForbidden",
                                   "force: Forbidden: may not be specified for non-apply patch");
    if (!code)
        code = ksim_patch_parse(type, req->body, req->body_len, &patch, e);
    if (!code && strcmp(c->sub, "scale") != 0)
        code = ksim_prune_validate(c->rt, req, type, patch, c->resp, e);
    if (!code)
        code = ksim_write_patch(c, type, patch, force && strcmp(force, "true") == 0, out, e);
    cJSON_Delete(patch);
    return code;
}

static int handle_delete(const struct ksim_write_ctx *c, const struct ksim_req *req, cJSON **out,
                         struct ksim_apierr *e)
{
    struct ksim_read_filter f;
    struct ksim_write_ctx dc = *c; /* dry_run from the query or from the options */
    cJSON *opts = NULL;
    const char *policy = ksim_req_query(req, "propagationPolicy");
    int code = 0;

    if (req->body_len)
        code = ksim_write_decode(req->body, req->body_len, &opts, e);
    if (!code)
        code = ksim_write_options_dry_run(opts, &dc.dry_run, e);
    if (!code && *c->name)
        code = ksim_delete_one(&dc, opts, policy, out, e);
    else if (!code && ksim_read_filter_init(&f, c->rt, req, e) == 0) {
        code = ksim_delete_collection(&dc, &f, opts, policy, out, e);
        ksim_read_filter_release(&f);
    } else if (!code) {
        code = e->code;
    }
    cJSON_Delete(opts);
    return code;
}

/*
 * POST and PUT bodies: JSON, or kubectl's protobuf for the kinds kube-sim can decode; anything
 * else is 415.
 */
static int decode_body(const struct ksim_req *req, cJSON **out, struct ksim_apierr *e)
{
    const char *ct = req->content_type;
    struct kerr_info err;
    size_t n;

    *out = NULL;
    if (ksim_pb_content_type(ct)) {
        if (ksim_pb_decode((const unsigned char *)req->body, req->body_len, out, &err) == KERR_OK)
            return 0;
        if (err.code == KERR_UNSUPPORTED)
            return ksim_apierr_set(e, 415, "UnsupportedMediaType",
                                   "the body of the request was in an unknown format - accepted "
                                   "media types include: application/json (%s)",
                                   err.msg);
        return ksim_apierr_bad_request(e, "%s", err.msg);
    }
    n = ct ? strcspn(ct, ";") : 0;
    while (n && ct[n - 1] == ' ')
        n--;
    if (n && !(n == 16 && strncasecmp(ct, "application/json", 16) == 0))
        return ksim_apierr_set(e, 415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted media "
                               "types include: application/json, "
                               "application/vnd.kubernetes.protobuf");
    return ksim_write_decode(req->body, req->body_len, out, e);
}

/* POST, PUT, PATCH and DELETE. */
static void handle_write(struct ksim_api *api, const struct ksim_req *req,
                         const struct ksim_target *t, struct ksim_resp *resp)
{
    struct ksim_write_ctx c = { api,    t->rt,     t->ns, t->name,
                                t->sub, req->user, 0,     ksim_req_query(req, "fieldManager"),
                                resp };
    struct ksim_apierr e;
    cJSON *body = NULL, *out = NULL;
    const char *m = req->method;
    int code = ksim_write_dry_run(req, &c.dry_run, &e);

    if (!code && strcmp(m, "POST") == 0) {
        if (*t->name || *t->sub) {
            method_not_allowed(resp);
            return;
        }
        code = decode_body(req, &body, &e);
        if (code == 415 && ksim_review_is(t->rt) && ksim_pb_content_type(req->content_type))
            code = (body = cJSON_CreateObject()) ? 0 : ksim_apierr_internal(&e, "out of memory");
        if (!code && ksim_review_is(t->rt))
            code = ksim_review_answer(t->rt, req->user, body, &out, &e);
        else if (!code &&
                 (code = ksim_prune_validate(t->rt, req, KSIM_PATCH_UNKNOWN, body, resp, &e)) != 0)
            cJSON_Delete(body);
        else if (!code)
            code = ksim_write_create(&c, body, &out, &e);
    } else if (!code && (strcmp(m, "PUT") == 0 || strcmp(m, "PATCH") == 0) && !*t->name) {
        method_not_allowed(resp);
        return;
    } else if (!code && strcmp(m, "PUT") == 0) {
        code = decode_body(req, &body, &e);
        if (!code && strcmp(t->sub, "scale") != 0)
            code = ksim_prune_validate(t->rt, req, KSIM_PATCH_UNKNOWN, body, resp, &e);
        if (!code)
            code = ksim_write_update(&c, body, &out, &e);
        else
            cJSON_Delete(body);
    } else if (!code && strcmp(m, "PATCH") == 0) {
        code = handle_patch(&c, req, &out, &e);
    } else if (!code && strcmp(m, "DELETE") == 0 && !*t->sub) {
        code = handle_delete(&c, req, &out, &e);
    } else if (!code) {
        method_not_allowed(resp);
        return;
    }
    if (code >= 400 || !out)
        ksim_resp_error(resp, &e);
    else
        ksim_resp_json(resp, code, out);
}

static void handle_faults(struct ksim_api *api, const struct ksim_req *req, struct ksim_resp *resp)
{
    struct ksim_apierr e;
    struct kerr_info err;
    cJSON *doc = NULL, *out = NULL;

    if (!ksim_auth_in_group(req->user, "system:masters")) {
        ksim_apierr_forbidden(&e, "", "kube-sim/faults", "",
                              "only system:masters may inject faults");
        ksim_resp_error(resp, &e);
        return;
    }
    if (strcmp(req->method, "GET") == 0) {
        doc = cJSON_CreateObject();
        ksim_fault_configure(api->fault, api->store, doc, &out, NULL);
        cJSON_Delete(doc);
        ksim_resp_json(resp, 200, out);
        return;
    }
    if (strcmp(req->method, "POST") != 0) {
        method_not_allowed(resp);
        return;
    }
    if (ksim_write_decode(req->body, req->body_len, &doc, &e) != 0) {
        ksim_resp_error(resp, &e);
        return;
    }
    if (ksim_fault_configure(api->fault, api->store, doc, &out, &err) != KERR_OK) {
        ksim_apierr_bad_request(&e, "%s", err.msg);
        ksim_resp_error(resp, &e);
    } else {
        ksim_resp_json(resp, 200, out);
    }
    cJSON_Delete(doc);
}

/* Discovery and the other non-resource paths; 1 when handled. */
static int non_resource(struct ksim_api *api, const struct ksim_req *req, char segs[][254],
                        size_t n, struct ksim_resp *resp)
{
    if (n == 1 && (strcmp(segs[0], "healthz") == 0 || strcmp(segs[0], "livez") == 0 ||
                   strcmp(segs[0], "readyz") == 0)) {
        plain(resp, 200, "ok");
        return 1;
    }
    if (n == 1 && strcmp(segs[0], "version") == 0)
        ksim_resp_json(resp, 200, ksim_disc_version());
    else if (n == 1 && strcmp(segs[0], "api") == 0)
        ksim_resp_json(resp, 200, ksim_disc_api(req->host ? req->host : "127.0.0.1:443"));
    else if (n == 2 && strcmp(segs[0], "api") == 0 && strcmp(segs[1], "v1") == 0)
        ksim_resp_json(resp, 200, ksim_disc_resources(api->reg, "", "v1"));
    else if (n == 1 && strcmp(segs[0], "apis") == 0)
        ksim_resp_json(resp, 200, ksim_disc_groups(api->reg));
    else if (n == 2 && strcmp(segs[0], "apis") == 0) {
        cJSON *g = ksim_disc_group(api->reg, segs[1]);

        if (!g)
            plain(resp, 404, "404 page not found\n");
        else
            ksim_resp_json(resp, 200, g);
    } else if (n == 3 && strcmp(segs[0], "apis") == 0) {
        cJSON *r = ksim_disc_resources(api->reg, segs[1], segs[2]);

        if (!r)
            plain(resp, 404, "404 page not found\n");
        else
            ksim_resp_json(resp, 200, r);
    } else if (n >= 2 && strcmp(segs[0], "openapi") == 0) {
        ksim_openapi_serve(api->reg, req->accept, ksim_req_query(req, "hash"), segs, n, resp);
    } else {
        return 0;
    }
    return 1;
}

static int fault_injected(struct ksim_api *api, const struct ksim_req *req, struct ksim_resp *resp)
{
    struct ksim_apierr e;
    int code = ksim_fault_before(api->fault, req->method, req->path);

    if (code == 429) {
        ksim_apierr_set(&e, 429, "TooManyRequests", "Too many requests, please try again later.");
        e.retry_after = 1;
        ksim_resp_error(resp, &e);
    } else if (code) {
        ksim_apierr_internal(&e, "injected fault");
        ksim_resp_error(resp, &e);
    }
    return code;
}

/* Does rt support what the request asks for (405 otherwise)? */
static int verb_allowed(const struct ksim_rtype *rt, const char *method,
                        const struct ksim_target *t)
{
    enum ksim_verb v;

    if (strcmp(method, "GET") == 0)
        v = *t->name ? KSIM_VERB_GET : KSIM_VERB_LIST;
    else if (strcmp(method, "POST") == 0)
        v = KSIM_VERB_CREATE;
    else if (strcmp(method, "PUT") == 0)
        v = KSIM_VERB_UPDATE;
    else if (strcmp(method, "PATCH") == 0)
        v = KSIM_VERB_PATCH;
    else if (strcmp(method, "DELETE") == 0)
        v = *t->name ? KSIM_VERB_DELETE : KSIM_VERB_DELETECOLLECTION;
    else
        return 0;
    return ksim_reg_has_verb(rt, v);
}

static int group_served(struct ksim_api *api, const char *group)
{
    cJSON *g = ksim_disc_group(api->reg, group);
    int served = g != NULL;

    cJSON_Delete(g);
    return served;
}

void ksim_api_handle(struct ksim_api *api, const struct ksim_req *req, struct ksim_resp *resp)
{
    char segs[MAX_SEGS][254];
    struct ksim_target t;
    struct ksim_apierr e;
    size_t n;
    int rc;

    memset(resp, 0, sizeof(*resp));
    if (split(req->path, segs, &n) != 0) {
        plain(resp, 404, "404 page not found\n");
        return;
    }
    if (n == 2 && strcmp(segs[0], "kube-sim") == 0 && strcmp(segs[1], "faults") == 0) {
        handle_faults(api, req, resp);
        return;
    }
    if (fault_injected(api, req, resp))
        return;
    if (non_resource(api, req, segs, n, resp))
        return;
    if (n > 2 && strcmp(segs[0], "api") == 0 && strcmp(segs[1], "v1") == 0)
        rc = resolve(api, "", "v1", segs + 2, n - 2, &t, &e);
    else if (n > 3 && strcmp(segs[0], "apis") == 0 && group_served(api, segs[1]))
        rc = resolve(api, segs[1], segs[2], segs + 3, n - 3, &t, &e);
    else {
        plain(resp, 404, "404 page not found\n");
        return;
    }
    if (rc) {
        ksim_resp_error(resp, &e);
        return;
    }
    if (!verb_allowed(t.rt, req->method, &t)) {
        method_not_allowed(resp);
        return;
    }
    if (strcmp(req->method, "GET") == 0)
        ksim_read_handle(api, req, &t, resp);
    else
        handle_write(api, req, &t, resp);
}
