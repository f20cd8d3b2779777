#include "common/jpatch.h"

#include <stdbool.h>
#include <string.h>

#include <cJSON_Utils.h>

enum kerr jpatch_ptr_append_n(struct buf *b, const char *s, size_t n)
{
    enum kerr rc = buf_append(b, "/", 1);
    size_t i, start = 0;

    for (i = 0; rc == KERR_OK && i < n; i++) {
        if (s[i] != '~' && s[i] != '/')
            continue;
        rc = buf_append(b, s + start, i - start);
        if (rc == KERR_OK)
            rc = buf_append(b, s[i] == '~' ? "~0" : "~1", 2);
        start = i + 1;
    }
    if (rc == KERR_OK)
        rc = buf_append(b, s + start, n - start);
    return rc;
}

enum kerr jpatch_ptr_append(struct buf *b, const char *seg)
{
    return jpatch_ptr_append_n(b, seg, strlen(seg));
}

static enum kerr patch_op(cJSON *patch, const char *op, const char *ptr, cJSON *value,
                          bool needs_value, struct kerr_info *err)
{
    cJSON *o = NULL;
    enum kerr rc = KERR_OK;

    if (!cJSON_IsArray(patch) || !ptr || (needs_value && !value)) {
        rc = kerr_set(err, KERR_INVAL, "jpatch: patch %s needs an array, a path and a value", op);
        goto out;
    }
    o = cJSON_CreateObject();
    if (!o || !cJSON_AddStringToObject(o, "op", op) || !cJSON_AddStringToObject(o, "path", ptr) ||
        (value && !cJSON_AddItemToObject(o, "value", value))) {
        rc = kerr_set(err, KERR_NOMEM, "jpatch: building patch %s", op);
        goto out;
    }
    value = NULL; /* now owned by o */
    if (!cJSON_AddItemToArray(patch, o))
        rc = kerr_set(err, KERR_NOMEM, "jpatch: building patch %s", op);
    else
        o = NULL;
out:
    cJSON_Delete(o);
    cJSON_Delete(value);
    return rc;
}

enum kerr jpatch_add(cJSON *patch, const char *ptr, cJSON *value, struct kerr_info *err)
{
    return patch_op(patch, "add", ptr, value, true, err);
}

enum kerr jpatch_replace(cJSON *patch, const char *ptr, cJSON *value, struct kerr_info *err)
{
    return patch_op(patch, "replace", ptr, value, true, err);
}

enum kerr jpatch_test(cJSON *patch, const char *ptr, cJSON *value, struct kerr_info *err)
{
    return patch_op(patch, "test", ptr, value, true, err);
}

enum kerr jpatch_remove(cJSON *patch, const char *ptr, struct kerr_info *err)
{
    return patch_op(patch, "remove", ptr, NULL, false, err);
}

/* Text for a cJSONUtils_ApplyPatches status of a single operation. */
static const char *patch_status_text(int status)
{
    static const char *const texts[] = {
        [1] = "test failed",
        [2] = "missing or non-string \"path\"",
        [3] = "unknown \"op\"",
        [4] = "\"from\" missing",
        [5] = "\"from\" does not exist",
        [7] = "missing \"value\"",
        [9] = "parent of the path does not exist",
        [10] = "array index out of range",
        [11] = "bad array index",
        [13] = "path does not exist",
    };

    if (status > 0 && status < (int)(sizeof(texts) / sizeof(texts[0])) && texts[status])
        return texts[status];
    return "cannot apply";
}

/* The string member field of op, or NULL. */
static const char *op_str(const cJSON *op, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(op, field);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * Apply one operation to doc through cJSON_Utils (case-sensitive keys,
 * RFC 6901 "~0"/"~1" decoding). cJSON_Utils takes an array of operations,
 * so op is wrapped in a one-element array of a copy.
 */
static enum kerr apply_one(cJSON *doc, const cJSON *op, int idx, struct kerr_info *err)
{
    cJSON *one = cJSON_CreateArray(), *dup = cJSON_Duplicate(op, 1);
    const char *name = op_str(op, "op"), *path = op_str(op, "path");
    enum kerr rc = KERR_OK;
    int status;

    if (!one || !dup || !cJSON_AddItemToArray(one, dup)) {
        cJSON_Delete(dup);
        rc = kerr_set(err, KERR_NOMEM, "jpatch: applying patch operation %d", idx);
        goto out;
    }
    status = cJSONUtils_ApplyPatchesCaseSensitive(doc, one);
    if (status != 0) {
        rc = status == 1 ? KERR_CONFLICT : status == 6 || status == 8 ? KERR_NOMEM : KERR_INVAL;
        kerr_set(err, rc, "jpatch: patch operation %d (%s %s): %s", idx, name ? name : "?",
                 path ? path : "?", patch_status_text(status));
    }
out:
    cJSON_Delete(one);
    return rc;
}

enum kerr jpatch_apply(const cJSON *doc, const cJSON *patch, cJSON **out, struct kerr_info *err)
{
    const cJSON *op;
    cJSON *res;
    enum kerr rc;
    int idx = 0;

    *out = NULL;
    if (!doc || !cJSON_IsArray(patch))
        return kerr_set(err, KERR_INVAL, "jpatch: a JSON patch must be an array");
    res = cJSON_Duplicate(doc, 1);
    if (!res)
        return kerr_set(err, KERR_NOMEM, "jpatch: applying patch");
    cJSON_ArrayForEach (op, patch) {
        if (!cJSON_IsObject(op))
            rc = kerr_set(err, KERR_INVAL, "jpatch: patch operation %d is not an object", idx);
        else
            rc = apply_one(res, op, idx, err);
        if (rc != KERR_OK) {
            cJSON_Delete(res);
            return rc;
        }
        idx++;
    }
    *out = res;
    return KERR_OK;
}

enum kerr jpatch_merge_apply(const cJSON *doc, const cJSON *patch, cJSON **out,
                             struct kerr_info *err)
{
    cJSON *target;

    *out = NULL;
    if (!doc || !patch)
        return kerr_set(err, KERR_INVAL, "jpatch: merge patch needs a document and a patch");
    target = cJSON_Duplicate(doc, 1);
    if (!target)
        return kerr_set(err, KERR_NOMEM, "jpatch: applying merge patch");
    *out = cJSONUtils_MergePatchCaseSensitive(target, patch);
    if (!*out)
        return kerr_set(err, KERR_NOMEM, "jpatch: applying merge patch");
    return KERR_OK;
}

enum kerr jpatch_merge_diff(const cJSON *from, const cJSON *to, cJSON **out, struct kerr_info *err)
{
    cJSON *f, *t;

    *out = NULL;
    if (!from || !to)
        return kerr_set(err, KERR_INVAL, "jpatch: merge diff needs two documents");
    /* GenerateMergePatch sorts its arguments in place: work on copies. */
    f = cJSON_Duplicate(from, 1);
    t = cJSON_Duplicate(to, 1);
    if (f && t)
        *out = cJSONUtils_GenerateMergePatchCaseSensitive(f, t);
    if (f && t && !*out && cJSON_Compare(from, to, 1))
        *out = cJSON_CreateObject();
    cJSON_Delete(f);
    cJSON_Delete(t);
    if (!*out)
        return kerr_set(err, KERR_NOMEM, "jpatch: generating merge patch");
    return KERR_OK;
}
