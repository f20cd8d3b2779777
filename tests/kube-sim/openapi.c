#include "tests/kube-sim/openapi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/kube-sim/discovery.h"

struct root_ctx {
    cJSON *paths;
    int failed;
};

static void gv_path(const struct ksim_rtype *rt, char *out, size_t size)
{
    if (*rt->group)
        snprintf(out, size, "apis/%s/%s", rt->group, rt->version);
    else
        snprintf(out, size, "api/%s", rt->version);
}

static void add_root(const struct ksim_rtype *rt, void *arg)
{
    struct root_ctx *c = arg;
    char key[300], url[400];
    cJSON *e;

    gv_path(rt, key, sizeof(key));
    if (cJSON_GetObjectItemCaseSensitive(c->paths, key))
        return;
    snprintf(url, sizeof(url), "/openapi/v3/%s?hash=0", key);
    e = cJSON_CreateObject();
    if (!e || !cJSON_AddStringToObject(e, "serverRelativeURL", url) ||
        !cJSON_AddItemToObject(c->paths, key, e)) {
        cJSON_Delete(e);
        c->failed = 1;
    }
}

cJSON *ksim_openapi_root(struct ksim_reg *reg)
{
    cJSON *doc = cJSON_CreateObject();
    struct root_ctx c = { NULL, 0 };

    if (!doc || !(c.paths = cJSON_AddObjectToObject(doc, "paths"))) {
        cJSON_Delete(doc);
        return NULL;
    }
    ksim_reg_each(reg, add_root, &c);
    if (c.failed) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

struct gv_ctx {
    const char *group, *version;
    cJSON *paths;
    int found, failed;
};

static cJSON *patch_op(const struct ksim_rtype *rt)
{
    cJSON *op = cJSON_CreateObject(), *params, *p, *schema, *gvk;

    if (!op || !cJSON_AddStringToObject(op, "x-kubernetes-action", "patch") ||
        !(gvk = cJSON_AddObjectToObject(op, "x-kubernetes-group-version-kind")) ||
        !cJSON_AddStringToObject(gvk, "group", rt->group) ||
        !cJSON_AddStringToObject(gvk, "version", rt->version) ||
        !cJSON_AddStringToObject(gvk, "kind", rt->kind) ||
        !(params = cJSON_AddArrayToObject(op, "parameters")) || !(p = cJSON_CreateObject()) ||
        !cJSON_AddItemToArray(params, p) ||
        !cJSON_AddStringToObject(p, "name", "fieldValidation") ||
        !cJSON_AddStringToObject(p, "in", "query") ||
        !(schema = cJSON_AddObjectToObject(p, "schema")) ||
        !cJSON_AddStringToObject(schema, "type", "string")) {
        cJSON_Delete(op);
        return NULL;
    }
    return op;
}

static void add_kind(const struct ksim_rtype *rt, void *arg)
{
    struct gv_ctx *c = arg;
    char path[512];
    cJSON *item;

    if (strcmp(rt->group, c->group) != 0 || strcmp(rt->version, c->version) != 0)
        return;
    c->found = 1;
    if (*rt->group)
        snprintf(path, sizeof(path), "/apis/%s/%s%s/%s/{name}", rt->group, rt->version,
                 rt->namespaced ? "/namespaces/{namespace}" : "", rt->plural);
    else
        snprintf(path, sizeof(path), "/api/%s%s/%s/{name}", rt->version,
                 rt->namespaced ? "/namespaces/{namespace}" : "", rt->plural);
    item = cJSON_CreateObject();
    if (!item || !cJSON_AddItemToObject(item, "patch", patch_op(rt)) ||
        !cJSON_AddItemToObject(c->paths, path, item)) {
        cJSON_Delete(item);
        c->failed = 1;
    }
}

cJSON *ksim_openapi_gv(struct ksim_reg *reg, const char *group, const char *version)
{
    struct gv_ctx c = { group, version, NULL, 0, 0 };
    cJSON *doc = cJSON_CreateObject(), *info, *comp;

    if (!doc || !cJSON_AddStringToObject(doc, "openapi", "3.0.0") ||
        !(info = cJSON_AddObjectToObject(doc, "info")) ||
        !cJSON_AddStringToObject(info, "title", "Kubernetes") ||
        !cJSON_AddStringToObject(info, "version", "v1.32.0") ||
        !(c.paths = cJSON_AddObjectToObject(doc, "paths")) ||
        !(comp = cJSON_AddObjectToObject(doc, "components")) ||
        !cJSON_AddObjectToObject(comp, "schemas")) {
        cJSON_Delete(doc);
        return NULL;
    }
    ksim_reg_each(reg, add_kind, &c);
    if (!c.found || c.failed) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

int ksim_openapi_v2(const char *accept, char **body, size_t *len, const char **ctype)
{
    /* openapi_v2.Document: swagger = 1, info = 2 (title = 1, version = 2), paths = 8 */
    unsigned char pb[64];
    const char *title = "Kubernetes", *version = KSIM_GIT_VERSION;
    size_t n = 0, tl = strlen(title), vl = strlen(version);
    char json[256];

    *body = NULL;
    *len = 0;
    if (accept && strstr(accept, "protobuf") && tl + vl + 16 < sizeof(pb) && vl < 64) {
        pb[n++] = 0x0a;
        pb[n++] = 3;
        memcpy(pb + n, "2.0", 3);
        n += 3;
        pb[n++] = 0x12;
        pb[n++] = (unsigned char)(tl + vl + 4);
        pb[n++] = 0x0a;
        pb[n++] = (unsigned char)tl;
        memcpy(pb + n, title, tl);
        n += tl;
        pb[n++] = 0x12;
        pb[n++] = (unsigned char)vl;
        memcpy(pb + n, version, vl);
        n += vl;
        pb[n++] = 0x42;
        pb[n++] = 0;
        *ctype = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
    } else {
        snprintf(json, sizeof(json),
                 "{\"swagger\":\"2.0\",\"info\":{\"title\":\"%s\",\"version\":\"%s\"},"
                 "\"paths\":{},\"definitions\":{}}",
                 title, version);
        n = strlen(json);
        *ctype = "application/json";
    }
    *body = malloc(n + 1);
    if (!*body)
        return -1;
    memcpy(*body, (*ctype)[12] == 'j' ? (const void *)json : (const void *)pb, n);
    (*body)[n] = '\0';
    *len = n;
    return 0;
}

static void not_found(struct ksim_resp *resp)
{
    free(resp->body);
    resp->body = strdup("404 page not found\n");
    resp->body_len = resp->body ? strlen(resp->body) : 0;
    resp->code = 404;
    resp->content_type = "text/plain; charset=utf-8";
}

void ksim_openapi_serve(struct ksim_reg *reg, const char *accept, char segs[][254], size_t n,
                        struct ksim_resp *resp)
{
    cJSON *doc = NULL;

    if (n == 2 && strcmp(segs[1], "v2") == 0) {
        free(resp->body);
        resp->body = NULL;
        if (ksim_openapi_v2(accept, &resp->body, &resp->body_len, &resp->content_type) != 0) {
            not_found(resp);
            resp->code = 500;
            return;
        }
        resp->code = 200;
        return;
    }
    if (strcmp(segs[1], "v3") != 0)
        doc = NULL;
    else if (n == 2)
        doc = ksim_openapi_root(reg);
    else if (n == 4 && strcmp(segs[2], "api") == 0)
        doc = ksim_openapi_gv(reg, "", segs[3]);
    else if (n == 5 && strcmp(segs[2], "apis") == 0)
        doc = ksim_openapi_gv(reg, segs[3], segs[4]);
    if (!doc)
        not_found(resp);
    else
        ksim_resp_json(resp, 200, doc);
}
