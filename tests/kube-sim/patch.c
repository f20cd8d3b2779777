#include "tests/kube-sim/patch.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/jpatch.h"
#include "common/kjson.h"

#define PATCH_MAX_BYTES (3u * 1024u * 1024u)

static const char accepted_builtin[] =
    "application/json-patch+json, application/merge-patch+json, "
    "application/apply-patch+yaml, application/strategic-merge-patch+json";
static const char accepted_custom[] = "application/json-patch+json, "
                                      "application/merge-patch+json, "
                                      "application/apply-patch+yaml";

/* patchMergeKey of well-known list fields of built-in kinds. */
struct merge_key {
    const char *field, *key;
};

static const struct merge_key merge_keys[] = {
    { "containers", "name" },
    { "initContainers", "name" },
    { "ephemeralContainers", "name" },
    { "env", "name" },
    { "volumes", "name" },
    { "volumeMounts", "mountPath" },
    { "volumeDevices", "devicePath" },
    { "imagePullSecrets", "name" },
    { "hostAliases", "ip" },
    { "conditions", "type" },
    { "ownerReferences", "uid" },
    { "topologySpreadConstraints", "topologyKey" },
    { "resourceClaims", "name" },
    { "volumeClaimTemplates", "name" },
    { "webhooks", "name" },
};

/* Lists of scalars merged as sets (patchStrategy: merge without a key). */
static const char *const set_lists[] = { "finalizers" };

enum ksim_patch_type ksim_patch_type_of(const char *ct)
{
    size_t n;

    if (!ct)
        return KSIM_PATCH_UNKNOWN;
    n = strcspn(ct, ";");
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    if (n == 27 && strncasecmp(ct, "application/json-patch+json", n) == 0)
        return KSIM_PATCH_JSON;
    if (n == 28 && strncasecmp(ct, "application/merge-patch+json", n) == 0)
        return KSIM_PATCH_MERGE;
    if (n == 38 && strncasecmp(ct, "application/strategic-merge-patch+json", n) == 0)
        return KSIM_PATCH_STRATEGIC;
    if (n == 28 && strncasecmp(ct, "application/apply-patch+yaml", n) == 0)
        return KSIM_PATCH_APPLY;
    return KSIM_PATCH_UNKNOWN;
}

int ksim_patch_check_type(enum ksim_patch_type type, int custom, struct ksim_apierr *e)
{
    if (type == KSIM_PATCH_UNKNOWN || (custom && type == KSIM_PATCH_STRATEGIC))
        return ksim_apierr_set(e, 415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted "
                               "media types include: %s",
                               custom ? accepted_custom : accepted_builtin);
    return 0;
}

int ksim_patch_parse(enum ksim_patch_type type, const char *body, size_t len, cJSON **out,
                     struct ksim_apierr *e)
{
    struct kjson_limits lim = { PATCH_MAX_BYTES, 0 };
    struct kerr_info err;

    *out = NULL;
    if (kjson_parse(body, len, &lim, out, NULL, &err) != KERR_OK)
        return ksim_apierr_bad_request(e, "error decoding patch: %s", err.msg);
    if (type == KSIM_PATCH_JSON && !cJSON_IsArray(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        return ksim_apierr_bad_request(e, "json: cannot unmarshal object into Go value of type "
                                          "jsonpatch.Patch");
    }
    if (type != KSIM_PATCH_JSON && !cJSON_IsObject(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        return ksim_apierr_bad_request(e, "error decoding patch: the patch is not a JSON object");
    }
    return 0;
}

static const char *merge_key_of(const char *field, const cJSON *list)
{
    size_t i;
    const cJSON *first = cJSON_GetArrayItem(list, 0);

    if (!field)
        return NULL;
    if (strcmp(field, "ports") == 0)
        return cJSON_GetObjectItemCaseSensitive(first, "containerPort") ? "containerPort" : "port";
    for (i = 0; i < sizeof(merge_keys) / sizeof(merge_keys[0]); i++)
        if (strcmp(field, merge_keys[i].field) == 0)
            return merge_keys[i].key;
    return NULL;
}

static int is_set_list(const char *field)
{
    size_t i;

    for (i = 0; field && i < sizeof(set_lists) / sizeof(set_lists[0]); i++)
        if (strcmp(field, set_lists[i]) == 0)
            return 1;
    return 0;
}

static cJSON *merge_value(cJSON *doc, const cJSON *patch, const char *field);

static int same_key(const cJSON *a, const cJSON *b, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(a, key);
    const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, key);

    return x && y && cJSON_Compare(x, y, 1);
}

/* Merge the patch list into the doc list (TAKEN) by key; returns the result. */
static cJSON *merge_keyed(cJSON *doc, const cJSON *patch, const char *key)
{
    const cJSON *p;
    cJSON *d, *merged, *copy;
    const char *directive;
    int i;

    cJSON_ArrayForEach (p, patch) {
        directive = cJSON_IsObject(p) ? kjson_get_str(p, "$patch") : NULL;
        for (i = 0, d = doc->child; d && !same_key(d, p, key); d = d->next)
            i++;
        if (directive && strcmp(directive, "delete") == 0) {
            if (d)
                cJSON_DeleteItemFromArray(doc, i);
            continue;
        }
        if (d) {
            /* merged in a copy and swapped in place: detaching an element and
               inserting it back at its index breaks for middle elements */
            merged = merge_value(cJSON_Duplicate(d, 1), p, NULL);
            if (!merged || !cJSON_ReplaceItemViaPointer(doc, d, merged)) {
                cJSON_Delete(merged);
                cJSON_Delete(doc);
                return NULL;
            }
        } else {
            copy = merge_value(NULL, p, NULL);
            if (!copy || !cJSON_AddItemToArray(doc, copy)) {
                cJSON_Delete(copy);
                cJSON_Delete(doc);
                return NULL;
            }
        }
    }
    return doc;
}

/* Union of scalar lists (doc TAKEN). */
static cJSON *merge_set(cJSON *doc, const cJSON *patch)
{
    const cJSON *p, *d;
    cJSON *copy;
    int found;

    cJSON_ArrayForEach (p, patch) {
        found = 0;
        cJSON_ArrayForEach (d, doc) {
            found |= cJSON_Compare(d, p, 1);
        }
        if (found)
            continue;
        copy = cJSON_Duplicate(p, 1);
        if (!copy || !cJSON_AddItemToArray(doc, copy)) {
            cJSON_Delete(copy);
            cJSON_Delete(doc);
            return NULL;
        }
    }
    return doc;
}

/* Remove the values of a $deleteFromPrimitiveList/<field> directive from obj[field]. */
static void delete_from_list(cJSON *obj, const char *field, const cJSON *values)
{
    cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, field);
    const cJSON *v;
    int i;

    cJSON_ArrayForEach (v, values) {
        for (i = cJSON_GetArraySize(list) - 1; i >= 0; i--)
            if (cJSON_Compare(cJSON_GetArrayItem(list, i), v, 1))
                cJSON_DeleteItemFromArray(list, i);
    }
}

static void retain_keys(cJSON *obj, const cJSON *keys)
{
    cJSON *it = obj->child, *next;
    const cJSON *k;
    int keep;

    for (; it; it = next) {
        next = it->next;
        keep = 0;
        cJSON_ArrayForEach (k, keys) {
            keep |= cJSON_IsString(k) && strcmp(k->valuestring, it->string) == 0;
        }
        if (!keep)
            cJSON_DeleteItemFromObjectCaseSensitive(obj, it->string);
    }
}

/* Merge patch object p into doc object (TAKEN). */
static cJSON *merge_object(cJSON *doc, const cJSON *p)
{
    const cJSON *it;
    const char *directive = kjson_get_str(p, "$patch");
    cJSON *cur, *merged;

    if (directive && strcmp(directive, "replace") == 0) {
        cJSON_Delete(doc);
        doc = cJSON_CreateObject();
        for (it = p->child; doc && it; it = it->next)
            if (it->string[0] != '$' &&
                !cJSON_AddItemToObject(doc, it->string, merge_value(NULL, it, it->string)))
                break;
        return doc;
    }
    for (it = p->child; doc && it; it = it->next) {
        if (strncmp(it->string, "$deleteFromPrimitiveList/", 25) == 0)
            delete_from_list(doc, it->string + 25, it);
        if (it->string[0] == '$')
            continue;
        cur = cJSON_DetachItemFromObjectCaseSensitive(doc, it->string);
        if (cJSON_IsNull(it)) {
            cJSON_Delete(cur);
            continue;
        }
        merged = merge_value(cur, it, it->string);
        if (!merged || !cJSON_AddItemToObject(doc, it->string, merged)) {
            cJSON_Delete(merged);
            cJSON_Delete(doc);
            return NULL;
        }
    }
    if (doc && cJSON_IsArray(kjson_get(p, "$retainKeys")))
        retain_keys(doc, kjson_get(p, "$retainKeys"));
    return doc;
}

/* Merge patch value p into doc (TAKEN, may be NULL); field names p in its parent. */
static cJSON *merge_value(cJSON *doc, const cJSON *patch, const char *field)
{
    const char *key;

    if (cJSON_IsObject(patch)) {
        if (!cJSON_IsObject(doc)) {
            cJSON_Delete(doc);
            doc = cJSON_CreateObject();
        }
        return doc ? merge_object(doc, patch) : NULL;
    }
    if (cJSON_IsArray(patch) && cJSON_IsArray(doc)) {
        key = merge_key_of(field, patch);
        if (key)
            return merge_keyed(doc, patch, key);
        if (is_set_list(field))
            return merge_set(doc, patch);
    }
    cJSON_Delete(doc);
    if (cJSON_IsArray(patch)) {
        /* Strip directives from the elements of a new list. */
        cJSON *out = cJSON_CreateArray(), *el;
        const cJSON *it;

        cJSON_ArrayForEach (it, patch) {
            el = cJSON_IsObject(it) ? merge_value(NULL, it, NULL) : cJSON_Duplicate(it, 1);
            if (!out || !el || !cJSON_AddItemToArray(out, el)) {
                cJSON_Delete(el);
                cJSON_Delete(out);
                return NULL;
            }
        }
        return out;
    }
    return cJSON_Duplicate(patch, 1);
}

cJSON *ksim_patch_strategic(const cJSON *doc, const cJSON *patch)
{
    cJSON *copy = cJSON_Duplicate(doc, 1);

    if (!copy)
        return NULL;
    return merge_value(copy, patch, NULL);
}

int ksim_patch_apply(enum ksim_patch_type type, int custom, const cJSON *doc, const cJSON *patch,
                     cJSON **out, struct ksim_apierr *e)
{
    struct kerr_info err;
    cJSON *applied;

    *out = NULL;
    switch (type) {
    case KSIM_PATCH_JSON:
        if (jpatch_apply(doc, patch, out, &err) == KERR_OK)
            return 0;
        ksim_apierr_set(e, 422, "Invalid",
                        "the server rejected our request due to an error in our request");
        snprintf(e->cause_message, sizeof(e->cause_message), "%s", err.msg);
        return 422;
    case KSIM_PATCH_MERGE:
        if (jpatch_merge_apply(doc, patch, out, &err) == KERR_OK)
            return 0;
        return ksim_apierr_internal(e, "%s", err.msg);
    case KSIM_PATCH_STRATEGIC:
    case KSIM_PATCH_APPLY:
        if (custom && type == KSIM_PATCH_STRATEGIC)
            return ksim_patch_check_type(type, custom, e);
        applied = cJSON_Duplicate(patch, 1);
        if (applied && type == KSIM_PATCH_APPLY)
            cJSON_DeleteItemFromObjectCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(applied, "metadata"), "managedFields");
        if (applied && custom && jpatch_merge_apply(doc, applied, out, &err) != KERR_OK)
            *out = NULL;
        else if (applied && !custom)
            *out = ksim_patch_strategic(doc, applied);
        cJSON_Delete(applied);
        return *out ? 0 : ksim_apierr_internal(e, "cannot apply the patch");
    case KSIM_PATCH_UNKNOWN:
        break;
    }
    return ksim_patch_check_type(type, custom, e);
}
