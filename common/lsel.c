/* lsel - a label selector matched against labels; see lsel.h. */
#include "common/lsel.h"

#include <string.h>

/* The value of key in labels, NULL when absent (or not a string). */
static const char *label(const cJSON *labels, const char *key)
{
    const cJSON *v = cJSON_IsObject(labels) ? cJSON_GetObjectItemCaseSensitive(labels, key) : NULL;

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* 1 when s is one of the strings of values. */
static int in_values(const cJSON *values, const char *s)
{
    const cJSON *v;

    cJSON_ArrayForEach (v, values)
        if (strcmp(v->valuestring, s) == 0)
            return 1;
    return 0;
}

/* One matchExpressions item: its result into *ok (1 holds, 0 does not). */
static enum kerr expression(const cJSON *e, const cJSON *labels, int i, int *ok,
                            struct kerr_info *err)
{
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(e, "key");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(e, "operator");
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(e, "values"), *v;
    int has_values = cJSON_IsArray(values) && cJSON_GetArraySize(values) > 0;
    const char *l;

    if (!cJSON_IsObject(e) || !cJSON_IsString(key) || !*key->valuestring || !cJSON_IsString(op))
        return kerr_set(err, KERR_INVAL, "matchExpressions[%d]: key and operator required", i);
    if (values && !cJSON_IsNull(values) && !cJSON_IsArray(values))
        return kerr_set(err, KERR_INVAL, "matchExpressions[%d].values: not a list", i);
    cJSON_ArrayForEach (v, values)
        if (!cJSON_IsString(v))
            return kerr_set(err, KERR_INVAL, "matchExpressions[%d].values: strings only", i);
    l = label(labels, key->valuestring);
    if (strcmp(op->valuestring, "In") == 0 || strcmp(op->valuestring, "NotIn") == 0) {
        if (!has_values)
            return kerr_set(err, KERR_INVAL, "matchExpressions[%d]: %s needs values", i,
                            op->valuestring);
        *ok = (l && in_values(values, l)) == (op->valuestring[0] == 'I');
    } else if (strcmp(op->valuestring, "Exists") == 0 ||
               strcmp(op->valuestring, "DoesNotExist") == 0) {
        if (has_values)
            return kerr_set(err, KERR_INVAL, "matchExpressions[%d]: %s takes no values", i,
                            op->valuestring);
        *ok = (l != NULL) == (op->valuestring[0] == 'E');
    } else {
        return kerr_set(err, KERR_INVAL,
                        "matchExpressions[%d].operator: \"%s\" (known: In, NotIn, Exists, "
                        "DoesNotExist)",
                        i, op->valuestring);
    }
    return KERR_OK;
}

enum kerr lsel_match(const cJSON *sel, const cJSON *labels, int *match, struct kerr_info *err)
{
    const cJSON *ml, *me, *it;
    int ok = 1, one = 0, i = 0;
    enum kerr rc;

    *match = 0;
    if (!cJSON_IsObject(sel))
        return kerr_set(err, KERR_INVAL, "not a label selector object");
    ml = cJSON_GetObjectItemCaseSensitive(sel, "matchLabels");
    me = cJSON_GetObjectItemCaseSensitive(sel, "matchExpressions");
    if (ml && !cJSON_IsNull(ml) && !cJSON_IsObject(ml))
        return kerr_set(err, KERR_INVAL, "matchLabels: not an object");
    if (me && !cJSON_IsNull(me) && !cJSON_IsArray(me))
        return kerr_set(err, KERR_INVAL, "matchExpressions: not a list");
    cJSON_ArrayForEach (it, ml) {
        const char *l = label(labels, it->string);

        if (!cJSON_IsString(it))
            return kerr_set(err, KERR_INVAL, "matchLabels[%s]: not a string", it->string);
        ok = ok && l && strcmp(l, it->valuestring) == 0;
    }
    cJSON_ArrayForEach (it, me) {
        rc = expression(it, labels, i++, &one, err);
        if (rc != KERR_OK)
            return rc;
        ok = ok && one;
    }
    *match = ok;
    return KERR_OK;
}

enum kerr lsel_validate(const cJSON *sel, struct kerr_info *err)
{
    int m;

    return lsel_match(sel, NULL, &m, err);
}
