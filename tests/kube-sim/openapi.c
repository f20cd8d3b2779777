#include "tests/kube-sim/openapi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "common/strlist.h"
#include "tests/kube-sim/discovery.h"
#include "tests/kube-sim/oaschema.h"

/* kube-openapi's ETag of a document: SHA-512 of its JSON, upper-case hex. */

struct root_ctx {
    struct strlist gvs; /* "group/version" pairs, in registration order, once each */
    int failed;
};

static void add_gv(const struct ksim_rtype *rt, void *arg)
{
    struct root_ctx *c = arg;
    char gv[300];

    snprintf(gv, sizeof(gv), "%s/%s", rt->group, rt->version);
    if (!strlist_has(&c->gvs, gv) && strlist_add(&c->gvs, gv) != KERR_OK)
        c->failed = 1;
}

cJSON *ksim_openapi_root(struct ksim_reg *reg)
{
    cJSON *doc = cJSON_CreateObject(), *paths, *e;
    struct root_ctx c = { { NULL, 0, 0 }, 0 };
    char key[300], url[512], hash[KSIM_OPENAPI_HASH_LEN + 1], *slash, *text;
    size_t i;

    strlist_init(&c.gvs);
    ksim_reg_each(reg, add_gv, &c);
    if (!doc || c.failed || !(paths = cJSON_AddObjectToObject(doc, "paths")))
        goto fail;
    for (i = 0; i < c.gvs.n; i++) {
        slash = strchr(c.gvs.v[i], '/');
        *slash = '\0';
        text = ksim_openapi_gv_text(reg, c.gvs.v[i], slash + 1, hash);
        if (!text)
            continue; /* removed meanwhile */
        free(text);
        if (*c.gvs.v[i])
            snprintf(key, sizeof(key), "apis/%s/%s", c.gvs.v[i], slash + 1);
        else
            snprintf(key, sizeof(key), "api/%s", slash + 1);
        snprintf(url, sizeof(url), "/openapi/v3/%s?hash=%s", key, hash);
        if (!(e = cJSON_AddObjectToObject(paths, key)) ||
            !cJSON_AddStringToObject(e, "serverRelativeURL", url))
            goto fail;
    }
    strlist_release(&c.gvs);
    return doc;
fail:
    strlist_release(&c.gvs);
    cJSON_Delete(doc);
    return NULL;
}

struct gv_ctx {
    const char *group, *version;
    cJSON *paths, *schemas;
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
    char path[512], name[512];
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
        return;
    }
    item = ksim_oaschema_kind(rt, name, sizeof(name));
    if (!item || !cJSON_AddItemToObject(c->schemas, name, item)) {
        cJSON_Delete(item);
        c->failed = 1;
    }
}

cJSON *ksim_openapi_gv(struct ksim_reg *reg, const char *group, const char *version)
{
    struct gv_ctx c = { group, version, NULL, NULL, 0, 0 };
    cJSON *doc = cJSON_CreateObject(), *info, *comp;

    if (!doc || !cJSON_AddStringToObject(doc, "openapi", "3.0.0") ||
        !(info = cJSON_AddObjectToObject(doc, "info")) ||
        !cJSON_AddStringToObject(info, "title", "Kubernetes") ||
        !cJSON_AddStringToObject(info, "version", "v1.32.0") ||
        !(c.paths = cJSON_AddObjectToObject(doc, "paths")) ||
        !(comp = cJSON_AddObjectToObject(doc, "components")) ||
        !(c.schemas = cJSON_AddObjectToObject(comp, "schemas"))) {
        cJSON_Delete(doc);
        return NULL;
    }
    ksim_reg_each(reg, add_kind, &c);
    if (!c.found || c.failed || ksim_oaschema_add_meta(c.schemas) != 0) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

char *ksim_openapi_gv_text(struct ksim_reg *reg, const char *group, const char *version,
                           char hash[KSIM_OPENAPI_HASH_LEN + 1])
{
    cJSON *doc = ksim_openapi_gv(reg, group, version);
    char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0, i;

    cJSON_Delete(doc);
    if (!text || !EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha512(), NULL) ||
        mdlen * 2 != KSIM_OPENAPI_HASH_LEN) {
        free(text);
        return NULL;
    }
    for (i = 0; i < mdlen; i++)
        snprintf(hash + 2 * i, 3, "%02X", md[i]);
    return text;
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

/* An RFC 1123 date a year from now into buf (Go's time.RFC1123 in UTC). */
static const char *expires_in_a_year(char *buf, size_t size)
{
    time_t t = time(NULL) + 365 * 24 * 3600;
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, size, "%a, %d %b %Y %H:%M:%S UTC", &tm);
    return buf;
}

static void not_found(struct ksim_resp *resp)
{
    free(resp->body);
    resp->body = strdup("404 page not found\n");
    resp->body_len = resp->body ? strlen(resp->body) : 0;
    resp->code = 404;
    resp->content_type = "text/plain; charset=utf-8";
}

/* Does an Accept header take JSON (absent, a JSON type or a wildcard)? */
static int accepts_json(const char *accept)
{
    return !accept || !*accept || strstr(accept, "json") || strstr(accept, "*/*") ||
           strstr(accept, "application/*");
}

/* GET /openapi/v3/{api/V,apis/G/V}: kube-openapi's handler3 (ETag, hash redirect, caching). */
static void serve_gv(struct ksim_reg *reg, const char *accept, const char *want, const char *group,
                     const char *version, struct ksim_resp *resp)
{
    char hash[KSIM_OPENAPI_HASH_LEN + 1], etag[KSIM_OPENAPI_HASH_LEN + 3], url[512];
    char *text = ksim_openapi_gv_text(reg, group, version, hash);

    if (!text) {
        not_found(resp);
        return;
    }
    if (!accepts_json(accept)) {
        free(text);
        not_found(resp);
        resp->code = 406;
        return;
    }
    snprintf(etag, sizeof(etag), "\"%s\"", hash);
    if (want && *want && strcmp(want, hash) != 0) {
        /* an outdated hash: Go's http.Redirect to the current document */
        free(text);
        if (*group)
            snprintf(url, sizeof(url), "/openapi/v3/apis/%s/%s?hash=%s", group, version, hash);
        else
            snprintf(url, sizeof(url), "/openapi/v3/api/%s?hash=%s", version, hash);
        free(resp->body);
        resp->body = malloc(sizeof(url) + 64);
        if (resp->body)
            snprintf(resp->body, sizeof(url) + 64, "<a href=\"%s\">Moved Permanently</a>.\n\n",
                     url);
        resp->body_len = resp->body ? strlen(resp->body) : 0;
        resp->code = 301;
        resp->content_type = "text/html; charset=utf-8";
        if (ksim_resp_header(resp, "Location", url) != 0)
            resp->code = 500;
        return;
    }
    free(resp->body);
    resp->body = text;
    resp->body_len = strlen(text);
    resp->code = 200;
    resp->content_type = "application/json";
    if (ksim_resp_header(resp, "Etag", etag) != 0 || ksim_resp_header(resp, "Vary", "Accept") != 0)
        resp->code = 500;
    if (want && *want &&
        (ksim_resp_header(resp, "Cache-Control", "public, immutable") != 0 ||
         ksim_resp_header(resp, "Expires", expires_in_a_year(url, sizeof(url))) != 0))
        resp->code = 500;
}

void ksim_openapi_serve(struct ksim_reg *reg, const char *accept, const char *hash,
                        char segs[][254], size_t n, struct ksim_resp *resp)
{
    cJSON *doc;

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
    if (strcmp(segs[1], "v3") != 0) {
        not_found(resp);
    } else if (n == 2) {
        doc = ksim_openapi_root(reg);
        if (!doc)
            not_found(resp);
        else
            ksim_resp_json(resp, 200, doc);
    } else if (n == 4 && strcmp(segs[2], "api") == 0) {
        serve_gv(reg, accept, hash, "", segs[3], resp);
    } else if (n == 5 && strcmp(segs[2], "apis") == 0) {
        serve_gv(reg, accept, hash, segs[3], segs[4], resp);
    } else {
        not_found(resp);
    }
}
