/* schemalist - list-type invariants of custom resources; see schemalist.h. */
#include "tests/kube-sim/schemalist.h"

#include <stdio.h>
#include <string.h>

#include "tests/kube-sim/govalue.h"

#define PATH_LEN  1024
#define DEPTH_MAX 128
#define LIST_MAX  1000

struct lctx {
    struct ksim_fielderr *errs;
    size_t max, *n, count;
};

static const cJSON *get(const cJSON *s, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(s, key);
}

static void child_path(const char *path, const char *key, char *out, size_t n)
{
    snprintf(out, n, "%s%s%s", path, *path ? "." : "", key);
}

/* Record "<path>[i]" with reason and "<what>: <v><tail>", v printed as Go prints it. */
static void add(struct lctx *c, const char *path, int i, const char *reason, const char *what,
                const cJSON *v, const char *tail)
{
    struct ksim_fielderr *f;
    char val[512];
    struct ksim_text t;

    c->count++;
    if (*c->n >= c->max)
        return;
    f = &c->errs[(*c->n)++];
    snprintf(f->field, sizeof(f->field), "%s[%d]", path, i);
    snprintf(f->reason, sizeof(f->reason), "%s", reason);
    ksim_text_init(&t, val, sizeof(val));
    ksim_goval_value(&t, v);
    snprintf(f->body, sizeof(f->body), "%s: %s%s", what, val, tail);
}

/* The key tuple of e in a list-type map (a missing key takes its default). OWNED, NULL: no memory.
 */
static cJSON *map_key(const cJSON *e, const cJSON *keys, const cJSON *items)
{
    cJSON *k = cJSON_CreateObject();
    const cJSON *name, *v;

    cJSON_ArrayForEach (name, keys) {
        if (!k || !cJSON_IsString(name))
            continue;
        v = get(e, name->valuestring);
        if (!v)
            v = get(get(get(items, "properties"), name->valuestring), "default");
        if (v && !cJSON_AddItemToObject(k, name->valuestring, cJSON_Duplicate(v, 1))) {
            cJSON_Delete(k);
            return NULL;
        }
    }
    return k;
}

/* A list-type map: objects only, no key tuple twice (each repeat reported). */
static void check_list_map(struct lctx *c, const cJSON *s, const cJSON *x, const char *path)
{
    const cJSON *keys = get(s, "x-kubernetes-list-map-keys"), *items = get(s, "items"), *e, *f;
    cJSON *ke, *kf;
    int i = 0, dup;

    cJSON_ArrayForEach (e, x) {
        if (!cJSON_IsObject(e) && !cJSON_IsNull(e)) {
            add(c, path, i, "FieldValueInvalid", "Invalid value", e,
                ": must be an object for an array of list-type map");
            return;
        }
        i++;
    }
    i = 0;
    for (e = x->child; e; e = e->next, i++) {
        ke = cJSON_IsObject(e) ? map_key(e, keys, items) : NULL;
        for (dup = 0, f = x->child; ke && f != e && !dup; f = f->next) {
            kf = cJSON_IsObject(f) ? map_key(f, keys, items) : NULL;
            dup = kf && cJSON_Compare(ke, kf, 1);
            cJSON_Delete(kf);
        }
        if (dup)
            add(c, path, i, "FieldValueDuplicate", "Duplicate value", ke, "");
        cJSON_Delete(ke);
    }
}

/* A list-type set: each repeated value reported once, at its second place. */
static void check_list_set(struct lctx *c, const cJSON *x, const char *path)
{
    const cJSON *e, *f;
    int i = 0, seen;

    for (e = x->child; e; e = e->next, i++) {
        for (seen = 0, f = x->child; f != e; f = f->next)
            seen += cJSON_Compare(e, f, 1) != 0;
        if (seen == 1)
            add(c, path, i, "FieldValueDuplicate", "Duplicate value", e, "");
    }
}

/*
 * The list-type invariants (apiextensions' listtype validation), after the
 * schema's: x-kubernetes-list-type set and map, nested anywhere.
 */
static void list_types(struct lctx *c, const cJSON *s, const cJSON *x, const char *path, int depth)
{
    const cJSON *lt = get(s, "x-kubernetes-list-type"), *v, *sub_s;
    char sub[PATH_LEN];
    int i = 0;

    if (!cJSON_IsObject(s) || depth > DEPTH_MAX)
        return;
    if (cJSON_IsArray(x)) {
        if (cJSON_IsString(lt) && cJSON_GetArraySize(x) > 1 && cJSON_GetArraySize(x) <= LIST_MAX) {
            if (strcmp(lt->valuestring, "set") == 0)
                check_list_set(c, x, path);
            else if (strcmp(lt->valuestring, "map") == 0)
                check_list_map(c, s, x, path);
        }
        cJSON_ArrayForEach (v, x) {
            snprintf(sub, sizeof(sub), "%s[%d]", path, i++);
            list_types(c, get(s, "items"), v, sub, depth + 1);
        }
    } else if (cJSON_IsObject(x)) {
        cJSON_ArrayForEach (v, x) {
            if (!v->string)
                continue;
            sub_s = get(get(s, "properties"), v->string);
            sub_s = sub_s ? sub_s : get(s, "additionalProperties");
            child_path(path, v->string, sub, sizeof(sub));
            list_types(c, sub_s, v, sub, depth + 1);
        }
    }
}

size_t ksim_schemalist_check(const cJSON *schema, const cJSON *obj, struct ksim_fielderr *errs,
                             size_t max, size_t *n)
{
    struct lctx c;

    memset(&c, 0, sizeof(c));
    c.errs = errs;
    c.max = max;
    c.n = n;
    list_types(&c, schema, obj, "", 0);
    return c.count;
}
