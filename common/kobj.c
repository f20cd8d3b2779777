/* kobj - see kobj.h. Paths and fields are read and written through common/kjson. */
#include "common/kobj.h"

#include <stdio.h>
#include <string.h>

#include "common/kjson.h"

const char *const KOBJ_META_PATHS[] = {
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.resourceVersion",
    "metadata.generation",
    "metadata.labels",
    "metadata.annotations",
    "metadata.deletionTimestamp",
    "metadata.ownerReferences",
    "status.lastOperation",
    NULL,
};

enum kerr kobj_key_of(const cJSON *obj, char *out, size_t n, struct kerr_info *err)
{
    const char *name = kjson_get_str(obj, "metadata.name");
    const char *ns = kjson_get_str(obj, "metadata.namespace");
    int len;

    if (n)
        out[0] = '\0';
    if (!name || !*name)
        return kerr_set(err, KERR_INVAL, "object has no metadata.name");
    if (ns && *ns)
        len = snprintf(out, n, "%s/%s", ns, name);
    else
        len = snprintf(out, n, "%s", name);
    if (len < 0 || (size_t)len >= n)
        return kerr_set(err, KERR_TOOBIG, "object key longer than %zu bytes", n);
    return KERR_OK;
}

enum kerr kobj_project_paths(void *ctx, const cJSON *obj, cJSON **out)
{
    const char *const *paths = ctx;
    const cJSON *v;
    cJSON *res, *copy;
    size_t i;

    *out = NULL;
    res = cJSON_CreateObject();
    if (!res)
        return KERR_NOMEM;
    for (i = 0; paths && paths[i]; i++) {
        v = kjson_get(obj, paths[i]);
        if (!v)
            continue;
        copy = cJSON_Duplicate(v, 1);
        if (!copy || kjson_set(res, paths[i], copy, NULL) != KERR_OK) {
            cJSON_Delete(res);
            return KERR_NOMEM;
        }
    }
    *out = res;
    return KERR_OK;
}

static enum kerr add_str_value(const char *v, struct strlist *values)
{
    if (!v || !*v)
        return KERR_OK;
    return strlist_add(values, v);
}

enum kerr kobj_index_namespace(void *ctx, const cJSON *obj, struct strlist *values)
{
    (void)ctx;
    return add_str_value(kjson_get_str(obj, "metadata.namespace"), values);
}

enum kerr kobj_index_label(void *ctx, const cJSON *obj, struct strlist *values)
{
    const cJSON *labels = kjson_get_obj(obj, "metadata.labels");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(labels, (const char *)ctx);

    return cJSON_IsString(v) ? strlist_add(values, v->valuestring) : KERR_OK;
}

enum kerr kobj_index_owner_uid(void *ctx, const cJSON *obj, struct strlist *values)
{
    const cJSON *refs = kjson_get_arr(obj, "metadata.ownerReferences");
    const cJSON *ref;
    enum kerr rc;

    (void)ctx;
    cJSON_ArrayForEach (ref, refs) {
        rc = add_str_value(kjson_get_str(ref, "uid"), values);
        if (rc != KERR_OK)
            return rc;
    }
    return KERR_OK;
}

const cJSON *kobj_condition(const cJSON *obj, const char *type)
{
    const cJSON *c;

    cJSON_ArrayForEach (c, kjson_get_arr(obj, "status.conditions")) {
        const char *t = kjson_get_str(c, "type");

        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}
