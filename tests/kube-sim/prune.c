/* prune - pruning and fieldValidation of custom resources; see prune.h. */
#include "tests/kube-sim/prune.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "tests/kube-sim/schemadef.h"

#define PATH_MAX_LEN 4096

struct pctx {
    struct strlist *paths; /* or NULL */
    char path[PATH_MAX_LEN];
    int oom;
};

static bool flag(const cJSON *schema, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(schema, key));
}

static const cJSON *child_schema(const cJSON *schema, const char *key)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(props, key);

    if (cJSON_IsObject(s))
        return s;
    s = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
    return cJSON_IsObject(s) ? s : NULL;
}

/* Append ".key" (or "key" at the root) or "[i]" to p->path; returns the old length. */
static size_t push(struct pctx *p, const char *key, int index)
{
    size_t n = strlen(p->path);

    if (key)
        snprintf(p->path + n, sizeof(p->path) - n, "%s%s", n ? "." : "", key);
    else
        snprintf(p->path + n, sizeof(p->path) - n, "[%d]", index);
    return n;
}

static void record(struct pctx *p, const char *key)
{
    size_t n;

    if (!p->paths)
        return;
    n = push(p, key, 0);
    if (strlist_add(p->paths, p->path) != KERR_OK)
        p->oom = 1;
    p->path[n] = '\0';
}

static void prune_node(struct pctx *p, const cJSON *schema, cJSON *x, bool root);

/* An embedded resource (or the root) keeps apiVersion and kind strings and its metadata. */
static bool resource_field(const cJSON *v)
{
    const char *k = v->string;

    return ((strcmp(k, "apiVersion") == 0 || strcmp(k, "kind") == 0) && cJSON_IsString(v)) ||
           (strcmp(k, "metadata") == 0 && cJSON_IsObject(v));
}

static void prune_object(struct pctx *p, const cJSON *schema, cJSON *x, bool root)
{
    bool preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
    bool resource = root || flag(schema, "x-kubernetes-embedded-resource");
    cJSON *v = x->child, *next;
    const cJSON *s;
    size_t n;

    for (; v; v = next) {
        next = v->next;
        if (!v->string || (resource && resource_field(v)))
            continue;
        s = schema ? child_schema(schema, v->string) : NULL;
        if (s || preserve) {
            n = push(p, v->string, 0);
            prune_node(p, s, v, false);
            p->path[n] = '\0';
            continue;
        }
        record(p, v->string);
        cJSON_Delete(cJSON_DetachItemViaPointer(x, v));
    }
}

/*
 * Prune x by schema. A NULL schema inside preserved unknown fields keeps
 * everything below it.
 */
static void prune_node(struct pctx *p, const cJSON *schema, cJSON *x, bool root)
{
    const cJSON *items;
    cJSON *v;
    size_t n;
    int i = 0;

    if (!schema && !root)
        return;
    if (cJSON_IsObject(x)) {
        prune_object(p, schema, x, root);
    } else if (cJSON_IsArray(x)) {
        items = cJSON_GetObjectItemCaseSensitive(schema, "items");
        if (!cJSON_IsObject(items))
            return;
        cJSON_ArrayForEach (v, x) {
            n = push(p, NULL, i++);
            prune_node(p, items, v, false);
            p->path[n] = '\0';
        }
    }
}

int ksim_prune(const cJSON *schema, cJSON *obj, struct strlist *paths)
{
    struct pctx p;

    memset(&p, 0, sizeof(p));
    p.paths = paths;
    if (!cJSON_IsObject(schema) || !cJSON_IsObject(obj))
        return 0;
    prune_node(&p, schema, obj, true);
    return p.oom ? -1 : 0;
}

const cJSON *ksim_prune_schema(const struct ksim_rtype *rt)
{
    return rt && rt->custom ? rt->schema : NULL;
}

int ksim_prune_obj(const struct ksim_rtype *rt, cJSON *obj)
{
    const cJSON *schema = ksim_prune_schema(rt);

    if (!schema || ksim_prune(schema, obj, NULL) != 0)
        return schema ? -1 : 0;
    ksim_schemadef_prune_nulls(schema, obj);
    return ksim_schemadef_default(schema, obj);
}

/* Drop the null members of a merge patch: they delete fields, they do not set them. */
static void drop_nulls(cJSON *x)
{
    cJSON *v = x ? x->child : NULL, *next;

    for (; v; v = next) {
        next = v->next;
        if (cJSON_IsNull(v))
            cJSON_Delete(cJSON_DetachItemViaPointer(x, v));
        else if (cJSON_IsObject(v))
            drop_nulls(v);
    }
}

int ksim_prune_validate(const struct ksim_rtype *rt, const struct ksim_req *req,
                        enum ksim_patch_type ptype, const cJSON *body, struct ksim_resp *resp,
                        struct ksim_apierr *e)
{
    const char *mode = ksim_req_query(req, "fieldValidation");
    const cJSON *schema = ksim_prune_schema(rt);
    struct strlist paths;
    struct buf msg;
    char warn[PATH_MAX_LEN + 32];
    cJSON *copy;
    size_t i;
    int code = 0;

    if (!mode || !*mode)
        mode = "Warn";
    if (strcmp(mode, "Strict") != 0 && strcmp(mode, "Warn") != 0 && strcmp(mode, "Ignore") != 0)
        return ksim_apierr_bad_request(e,
                                       "Invalid field validation directive: %s. Valid values "
                                       "are Ignore, Warn, or Strict",
                                       mode);
    if (!schema || strcmp(mode, "Ignore") == 0 || !cJSON_IsObject(body) ||
        ptype == KSIM_PATCH_JSON || ptype == KSIM_PATCH_STRATEGIC)
        return 0;
    copy = cJSON_Duplicate(body, 1);
    if (!copy)
        return ksim_apierr_internal(e, "out of memory");
    if (ptype == KSIM_PATCH_MERGE)
        drop_nulls(copy);
    strlist_init(&paths);
    if (ksim_prune(schema, copy, &paths) != 0)
        code = ksim_apierr_internal(e, "out of memory");
    cJSON_Delete(copy);
    if (!code && paths.n && strcmp(mode, "Strict") == 0) {
        buf_init(&msg, 64 * 1024);
        for (i = 0; i < paths.n; i++) {
            if (buf_appendf(&msg, "%sunknown field \"%s\"", i ? ", " : "", paths.v[i]) != KERR_OK)
                break; /* the message is cut at the buffer's limit */
        }
        code = ksim_apierr_bad_request(e,
                                       "%s in version \"%s\" cannot be handled as a %s: strict "
                                       "decoding error: %s",
                                       rt->kind, rt->version, rt->kind, buf_str(&msg));
        buf_release(&msg);
    } else if (!code) {
        for (i = 0; i < paths.n; i++) {
            snprintf(warn, sizeof(warn), "unknown field \"%s\"", paths.v[i]);
            ksim_resp_warn(resp, warn);
        }
    }
    strlist_release(&paths);
    return code;
}
