/* schemadef - defaulting of custom resources; see schemadef.h. */
#include "tests/kube-sim/schemadef.h"

#include <stdbool.h>

#define DEPTH_MAX 256

static bool nullable(const cJSON *s)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "nullable"));
}

/* The schema's default, NULL when it has none or it is null (Default.Object == nil). */
static const cJSON *default_of(const cJSON *s)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(s, "default");

    return d && !cJSON_IsNull(d) ? d : NULL;
}

static const cJSON *prop_schema(const cJSON *schema, const char *key)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(schema, "properties"), key);

    return cJSON_IsObject(s) ? s : NULL;
}

/* The schema of key in an object: its property, else additionalProperties (an object), else NULL.
 */
static const cJSON *child_schema(const cJSON *schema, const char *key)
{
    const cJSON *s = prop_schema(schema, key);

    if (s)
        return s;
    s = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
    return cJSON_IsObject(s) ? s : NULL;
}

static void prune_nulls(const cJSON *schema, cJSON *x, int depth)
{
    const cJSON *s, *items;
    cJSON *v, *next;

    if (!cJSON_IsObject(schema) || depth > DEPTH_MAX)
        return;
    if (cJSON_IsObject(x)) {
        for (v = x->child; v; v = next) {
            next = v->next;
            s = v->string ? prop_schema(schema, v->string) : NULL;
            if (s && cJSON_IsNull(v) && !default_of(s) && !nullable(s))
                cJSON_Delete(cJSON_DetachItemViaPointer(x, v));
        }
        cJSON_ArrayForEach (v, x) {
            if (v->string)
                prune_nulls(child_schema(schema, v->string), v, depth + 1);
        }
    } else if (cJSON_IsArray(x)) {
        items = cJSON_GetObjectItemCaseSensitive(schema, "items");
        cJSON_ArrayForEach (v, x)
            prune_nulls(items, v, depth + 1);
    }
}

void ksim_schemadef_prune_nulls(const cJSON *schema, cJSON *x)
{
    prune_nulls(schema, x, 0);
}

/* Set the defaults of schema's properties missing (or non-nullable null) in the object x. */
static int set_defaults(const cJSON *schema, cJSON *x)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties"), *p, *d;
    cJSON *cur, *copy;

    cJSON_ArrayForEach (p, props) {
        if (!p->string || !(d = default_of(p)))
            continue;
        cur = cJSON_GetObjectItemCaseSensitive(x, p->string);
        if (cur && !(cJSON_IsNull(cur) && !nullable(p)))
            continue;
        copy = cJSON_Duplicate(d, 1);
        if (!copy)
            return -1;
        if (cur ? !cJSON_ReplaceItemInObjectCaseSensitive(x, p->string, copy)
                : !cJSON_AddItemToObject(x, p->string, copy)) {
            cJSON_Delete(copy);
            return -1;
        }
    }
    return 0;
}

static int apply_defaults(const cJSON *schema, cJSON *x, int depth)
{
    const cJSON *items;
    cJSON *v;

    if (!cJSON_IsObject(schema) || depth > DEPTH_MAX)
        return 0;
    if (cJSON_IsObject(x)) {
        if (set_defaults(schema, x) != 0)
            return -1;
        cJSON_ArrayForEach (v, x) {
            if (v->string && apply_defaults(child_schema(schema, v->string), v, depth + 1) != 0)
                return -1;
        }
    } else if (cJSON_IsArray(x)) {
        items = cJSON_GetObjectItemCaseSensitive(schema, "items");
        cJSON_ArrayForEach (v, x) {
            if (apply_defaults(items, v, depth + 1) != 0)
                return -1;
        }
    }
    return 0;
}

int ksim_schemadef_default(const cJSON *schema, cJSON *x)
{
    return apply_defaults(schema, x, 0);
}
