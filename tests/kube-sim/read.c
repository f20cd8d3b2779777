#include "tests/kube-sim/read.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "common/tlsx.h"
#include "tests/kube-sim/convert.h"
#include "tests/kube-sim/obj.h"
#include "tests/kube-sim/table.h"
#include "tests/kube-sim/watch.h"

int ksim_read_filter_init(struct ksim_read_filter *f, const struct ksim_rtype *rt,
                          const struct ksim_req *req, struct ksim_apierr *e)
{
    struct kerr_info err;
    size_t i;
    const char *const *p;
    int ok;

    memset(f, 0, sizeof(*f));
    if (ksim_sel_parse(ksim_req_query(req, "labelSelector"), &f->labels, &err) != KERR_OK)
        return ksim_apierr_bad_request(e, "%s", err.msg);
    if (ksim_fsel_parse(ksim_req_query(req, "fieldSelector"), &f->fields, &err) != KERR_OK) {
        ksim_read_filter_release(f);
        return ksim_apierr_bad_request(e, "%s", err.msg);
    }
    for (i = 0; i < f->fields->n; i++) {
        const char *path = f->fields->reqs[i].path;

        ok = strcmp(path, "metadata.name") == 0 || strcmp(path, "metadata.namespace") == 0;
        for (p = rt->fields; !ok && p && *p; p++)
            ok = strcmp(*p, path) == 0;
        if (!ok) {
            ksim_apierr_bad_request(e, "field label not supported: %s", path);
            ksim_read_filter_release(f);
            return 400;
        }
        if (ksim_convert_needed(rt)) {
            char stored[256], *copy;

            ksim_convert_field(rt, path, stored, sizeof(stored));
            copy = strdup(stored);
            if (copy) {
                free(f->fields->reqs[i].path);
                f->fields->reqs[i].path = copy;
            }
        }
    }
    return 0;
}

int ksim_read_filter_match(const struct ksim_read_filter *f, const cJSON *obj)
{
    return ksim_sel_matches(f->labels, ksim_obj_labels(obj)) && ksim_fsel_matches(f->fields, obj);
}

void ksim_read_filter_release(struct ksim_read_filter *f)
{
    ksim_sel_free(f->labels);
    ksim_fsel_free(f->fields);
    memset(f, 0, sizeof(*f));
}

static int match_cb(const cJSON *obj, void *arg)
{
    return ksim_read_filter_match(arg, obj);
}

/* Continue tokens: base64url(JSON). */
static char *encode_continue(uint64_t rv, const char *start)
{
    cJSON *t = cJSON_CreateObject();
    char *json = NULL, *b64 = NULL;
    char rvs[32];
    size_t i, n = 0;

    snprintf(rvs, sizeof(rvs), "%" PRIu64, rv);
    if (t && cJSON_AddStringToObject(t, "v", "meta.k8s.io/v1") &&
        cJSON_AddNumberToObject(t, "rv", (double)rv) && cJSON_AddStringToObject(t, "start", start))
        json = cJSON_PrintUnformatted(t);
    cJSON_Delete(t);
    if (!json || crypto_b64_encode(json, strlen(json), &b64, NULL, NULL) != KERR_OK) {
        free(json);
        return NULL;
    }
    free(json);
    for (i = 0; b64[i]; i++) {
        if (b64[i] == '=')
            continue;
        b64[n++] = b64[i] == '+' ? '-' : b64[i] == '/' ? '_' : b64[i];
    }
    b64[n] = '\0';
    return b64;
}

static int decode_continue(const char *tok, uint64_t *rv, char *start, size_t size)
{
    size_t len = strlen(tok), i;
    char *std = malloc(len + 4);
    unsigned char *raw = NULL;
    size_t rawlen = 0;
    cJSON *t = NULL;
    const char *s;
    const cJSON *r;
    int rc = -1;

    if (!std)
        return -1;
    for (i = 0; i < len; i++)
        std[i] = tok[i] == '-' ? '+' : tok[i] == '_' ? '/' : tok[i];
    while (i % 4)
        std[i++] = '=';
    std[i] = '\0';
    if (crypto_b64_decode(std, i, &raw, &rawlen, NULL) == KERR_OK &&
        kjson_parse((const char *)raw, rawlen, NULL, &t, NULL, NULL) == KERR_OK) {
        s = kjson_get_str(t, "start");
        r = kjson_get(t, "rv");
        if (s && cJSON_IsNumber(r) && r->valuedouble >= 1) {
            *rv = (uint64_t)r->valuedouble;
            snprintf(start, size, "%s", s);
            rc = 0;
        }
    }
    cJSON_Delete(t);
    free(raw);
    free(std);
    return rc;
}

static int parse_limit(const struct ksim_req *req, size_t *limit, struct ksim_apierr *e)
{
    const char *v = ksim_req_query(req, "limit");
    char *end = NULL;
    long long n;

    *limit = 0;
    if (!v || !*v)
        return 0;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno || !end || *end)
        return ksim_apierr_bad_request(e, "limit: Invalid value: \"%s\": must be an integer", v);
    *limit = n > 0 ? (size_t)n : 0;
    return 0;
}

/* Where a list starts: after the continue token's key, checking that it has not expired. */
static int list_start(struct ksim_api *api, const struct ksim_target *tgt,
                      const struct ksim_req *req, char *start, size_t size, uint64_t *tok_rv,
                      struct ksim_apierr *e)
{
    const char *cont = ksim_req_query(req, "continue");
    const char *rv = ksim_req_query(req, "resourceVersion");

    start[0] = '\0';
    *tok_rv = 0;
    if (!cont || !*cont)
        return 0;
    if (rv && *rv && strcmp(rv, "0") != 0)
        return ksim_apierr_bad_request(e, "specifying resource version is not allowed when "
                                          "using continue");
    if (decode_continue(cont, tok_rv, start, size) != 0)
        return ksim_apierr_bad_request(e, "continue key is not valid: illegal base64 data");
    if (*tok_rv < ksim_store_oldest_rv(api->store, tgt->rt->store_key))
        return ksim_apierr_set(
            e, 410, "Expired",
            "The provided continue parameter is too old to display a consistent list result. "
            "You can start a new list without the continue parameter, or use the continue token "
            "in this response to retrieve the remainder of the results. Continuing with the "
            "provided token results in an inconsistent list - objects that were created, "
            "modified, or deleted between the time the first chunk was returned and now may show "
            "up in the list.");
    return 0;
}

/* A list at an explicit old resourceVersion with a limit must still be in the history. */
static int check_list_rv(struct ksim_api *api, const struct ksim_target *tgt,
                         const struct ksim_req *req, size_t limit, struct ksim_apierr *e)
{
    const char *rv = ksim_req_query(req, "resourceVersion");
    uint64_t want, oldest;
    char *end = NULL;

    if (!rv || !*rv || strcmp(rv, "0") == 0 || !limit)
        return 0;
    errno = 0;
    want = strtoull(rv, &end, 10);
    if (errno || !end || *end)
        return ksim_apierr_bad_request(e,
                                       "resourceVersion: Invalid value: \"%s\": must be a "
                                       "number",
                                       rv);
    oldest = ksim_store_oldest_rv(api->store, tgt->rt->store_key);
    if (want < oldest)
        return ksim_apierr_set(e, 410, "Expired",
                               "too old resource version: %" PRIu64 " (%" PRIu64 ")", want, oldest);
    return 0;
}

static cJSON *list_doc(const struct ksim_rtype *rt, struct ksim_store_page *page, const char *cont,
                       int selectors)
{
    cJSON *doc = cJSON_CreateObject(), *md, *it;
    char gv[300], rvs[32];

    snprintf(gv, sizeof(gv), "%s%s%s", rt->group, *rt->group ? "/" : "", rt->version);
    snprintf(rvs, sizeof(rvs), "%" PRIu64, page->rv);
    cJSON_ArrayForEach (it, page->items) {
        ksim_api_externalize(rt, it);
    }
    if (!doc || !cJSON_AddStringToObject(doc, "kind", rt->list_kind) ||
        !cJSON_AddStringToObject(doc, "apiVersion", gv) ||
        !(md = cJSON_AddObjectToObject(doc, "metadata")) ||
        !cJSON_AddStringToObject(md, "resourceVersion", rvs) ||
        (cont && !cJSON_AddStringToObject(md, "continue", cont)) ||
        (cont && !selectors && !cJSON_AddNumberToObject(md, "remainingItemCount", page->remaining)))
        goto fail;
    cJSON_AddItemToObject(doc, "items", page->items);
    page->items = NULL;
    return doc;
fail:
    cJSON_Delete(doc);
    return NULL;
}

static void serve_list(struct ksim_api *api, const struct ksim_req *req,
                       const struct ksim_target *tgt, struct ksim_resp *resp)
{
    struct ksim_read_filter f;
    struct ksim_store_page page;
    struct ksim_apierr e;
    char start[600], rvs[32];
    char *cont = NULL;
    size_t limit;
    uint64_t tok_rv;
    cJSON *doc;

    if (ksim_read_filter_init(&f, tgt->rt, req, &e) || parse_limit(req, &limit, &e) ||
        list_start(api, tgt, req, start, sizeof(start), &tok_rv, &e) ||
        check_list_rv(api, tgt, req, limit, &e)) {
        ksim_read_filter_release(&f);
        ksim_resp_error(resp, &e);
        return;
    }
    /* without selectors every object matches: no test per object, and a count of the rest */
    if (ksim_store_list(api->store, tgt->rt->store_key, tgt->ns,
                        ksim_sel_is_everything(f.labels) && !(f.fields && f.fields->n) ? NULL
                                                                                       : match_cb,
                        &f, start[0] ? start : NULL, limit, &page, NULL) != KERR_OK) {
        ksim_read_filter_release(&f);
        ksim_resp_json(resp, 500, NULL);
        return;
    }
    if (tok_rv)
        page.rv = tok_rv;
    if (page.next_key)
        cont = encode_continue(page.rv, page.next_key);
    if (ksim_table_wanted(req->accept)) {
        snprintf(rvs, sizeof(rvs), "%" PRIu64, page.rv);
        doc = ksim_table_build(tgt->rt, page.items, rvs,
                               ksim_table_include_of(ksim_req_query(req, "includeObject")), 1);
        if (doc && cont)
            cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(doc, "metadata"), "continue",
                                    cont);
    } else {
        doc = list_doc(tgt->rt, &page, cont,
                       !ksim_sel_is_everything(f.labels) || (f.fields && f.fields->n));
    }
    ksim_resp_json(resp, 200, doc);
    free(cont);
    ksim_store_page_release(&page);
    ksim_read_filter_release(&f);
}

static void serve_get(struct ksim_api *api, const struct ksim_req *req,
                      const struct ksim_target *tgt, struct ksim_resp *resp)
{
    const struct ksim_rtype *rt = tgt->rt;
    struct ksim_apierr e;
    cJSON *obj = NULL, *out = NULL, *items;
    char rvs[32];

    if (ksim_store_get(api->store, rt->store_key, tgt->ns, tgt->name, &obj, NULL) != KERR_OK) {
        ksim_apierr_not_found(&e, rt->group, rt->plural, tgt->name);
        ksim_resp_error(resp, &e);
        return;
    }
    ksim_api_externalize(rt, obj);
    if (strcmp(tgt->sub, "scale") == 0) {
        if (ksim_obj_scale_of(rt, obj, &out) != 0)
            out = NULL;
        cJSON_Delete(obj);
        ksim_resp_json(resp, 200, out);
        return;
    }
    if (!tgt->sub[0] && ksim_table_wanted(req->accept)) {
        items = cJSON_CreateArray();
        snprintf(rvs, sizeof(rvs), "%" PRIu64, ksim_store_obj_rv(obj));
        if (items && cJSON_AddItemToArray(items, obj))
            out = ksim_table_build(rt, items, rvs,
                                   ksim_table_include_of(ksim_req_query(req, "includeObject")), 1);
        else
            cJSON_Delete(obj);
        cJSON_Delete(items);
        ksim_resp_json(resp, 200, out);
        return;
    }
    ksim_resp_json(resp, 200, obj);
}

static int truthy(const char *v)
{
    return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0);
}

void ksim_read_handle(struct ksim_api *api, const struct ksim_req *req,
                      const struct ksim_target *tgt, struct ksim_resp *resp)
{
    struct ksim_apierr e;

    if (tgt->sub[0] && !tgt->name[0]) {
        ksim_apierr_set(&e, 404, "NotFound", "the server could not find the requested resource");
        ksim_resp_error(resp, &e);
        return;
    }
    if (truthy(ksim_req_query(req, "watch"))) {
        if (ksim_watch_start(api, req, tgt, resp, &e) != 0)
            ksim_resp_error(resp, &e);
        return;
    }
    if (tgt->name[0])
        serve_get(api, req, tgt, resp);
    else
        serve_list(api, req, tgt, resp);
}
