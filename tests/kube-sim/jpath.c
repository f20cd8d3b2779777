/* jpath - see jpath.h. */
#include "tests/kube-sim/jpath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ksim_jpath_text(const cJSON *v, char *out, size_t size)
{
    char *p;

    if (cJSON_IsString(v))
        snprintf(out, size, "%s", v->valuestring);
    else if (cJSON_IsBool(v))
        snprintf(out, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsNumber(v))
        snprintf(out, size, "%.15g", v->valuedouble);
    else if (v && !cJSON_IsNull(v) && (p = cJSON_PrintUnformatted(v))) {
        snprintf(out, size, "%s", p);
        free(p);
    } else
        snprintf(out, size, "<none>");
}

/* Compare a filter operand ("v", 'v' or a number) with a node. */
static int filter_eq(const cJSON *v, const char *lit, size_t len)
{
    char text[256];

    if (len >= 2 && (lit[0] == '"' || lit[0] == '\'') && lit[len - 1] == lit[0]) {
        return cJSON_IsString(v) && strlen(v->valuestring) == len - 2 &&
               strncmp(v->valuestring, lit + 1, len - 2) == 0;
    }
    if (!v || cJSON_IsNull(v) || cJSON_IsObject(v) || cJSON_IsArray(v))
        return 0;
    ksim_jpath_text(v, text, sizeof(text));
    return strlen(text) == len && strncmp(text, lit, len) == 0;
}

static const cJSON *eval(const cJSON *cur, const char *p);

/* [?(@.path==lit)] or [?(@.path!=lit)] applied to array cur; p points after the ']'. */
static const cJSON *eval_filter(const cJSON *cur, const char *expr, size_t len, const char *rest)
{
    char path[256];
    const char *op = NULL;
    const cJSON *it, *found;
    size_t i, plen;
    int negate;

    for (i = 0; i + 1 < len && !op; i++)
        if ((expr[i] == '=' || expr[i] == '!') && expr[i + 1] == '=')
            op = expr + i;
    if (!op || expr[0] != '@')
        return NULL;
    negate = *op == '!';
    plen = (size_t)(op - expr) - 1;
    while (plen && expr[1 + plen - 1] == ' ')
        plen--;
    if (plen >= sizeof(path))
        return NULL;
    memcpy(path, expr + 1, plen);
    path[plen] = '\0';
    op += 2;
    while (*op == ' ')
        op++;
    cJSON_ArrayForEach (it, cur) {
        if (filter_eq(plen ? eval(it, path) : it, op, (size_t)(expr + len - op)) != negate) {
            found = eval(it, rest);
            if (found)
                return found;
        }
    }
    return NULL;
}

static const cJSON *eval_bracket(const cJSON *cur, const char *p)
{
    const char *close = strchr(p, ']');
    const cJSON *it, *found;
    char key[256];
    size_t len;
    long idx;

    if (!close)
        return NULL;
    len = (size_t)(close - p - 1);
    if (p[1] == '?' && p[2] == '(' && len >= 3 && close[-1] == ')') {
        /* the filter may contain ']' inside quotes: rare in CRD columns, not handled */
        return cJSON_IsArray(cur) ? eval_filter(cur, p + 3, len - 3, close + 1) : NULL;
    }
    if (len == 1 && p[1] == '*') {
        cJSON_ArrayForEach (it, cur) {
            found = eval(it, close + 1);
            if (found)
                return found;
        }
        return NULL;
    }
    if (len >= 2 && (p[1] == '\'' || p[1] == '"') && p[len] == p[1]) {
        if (len - 2 >= sizeof(key))
            return NULL;
        memcpy(key, p + 2, len - 2);
        key[len - 2] = '\0';
        return eval(cJSON_GetObjectItemCaseSensitive(cur, key), close + 1);
    }
    idx = strtol(p + 1, NULL, 10);
    if (idx < 0)
        idx += cJSON_GetArraySize(cur);
    return cJSON_IsArray(cur) ? eval(cJSON_GetArrayItem(cur, (int)idx), close + 1) : NULL;
}

static const cJSON *eval(const cJSON *cur, const char *p)
{
    char key[256];
    size_t n;

    if (!cur)
        return NULL;
    if (!*p || *p == '}')
        return cur;
    if (*p == '[')
        return eval_bracket(cur, p);
    if (*p != '.')
        return NULL;
    p++;
    n = strcspn(p, ".[}");
    if (n == 0 || n >= sizeof(key))
        return n == 0 && !*p ? cur : NULL;
    memcpy(key, p, n);
    key[n] = '\0';
    return eval(cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, key) : NULL, p + n);
}

const cJSON *ksim_jpath_eval(const cJSON *obj, const char *path)
{
    if (!path)
        return NULL;
    if (*path == '{')
        path++;
    if (*path == '$')
        path++;
    if (*path && *path != '.' && *path != '[')
        return NULL;
    return eval(obj, path);
}
