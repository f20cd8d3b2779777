#include "tests/kube-sim/fsel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TERMS 64

void ksim_fsel_free(struct ksim_fsel *fs)
{
    size_t i;

    if (!fs)
        return;
    for (i = 0; i < fs->n; i++) {
        free(fs->reqs[i].path);
        free(fs->reqs[i].value);
    }
    free(fs->reqs);
    free(fs);
}

/* Copy s[0..len) dropping backslash escapes; NULL on a dangling or unknown escape. */
static char *unescape(const char *s, size_t len)
{
    char *o = malloc(len + 1);
    size_t i, n = 0;

    if (!o)
        return NULL;
    for (i = 0; i < len; i++) {
        if (s[i] == '\\') {
            if (i + 1 >= len || (s[i + 1] != '\\' && s[i + 1] != ',' && s[i + 1] != '=')) {
                free(o);
                return NULL;
            }
            i++;
        }
        o[n++] = s[i];
    }
    o[n] = '\0';
    return o;
}

/* Parse one "path op value" term of length len. */
static enum kerr field_term(struct ksim_fsel *fs, const char *t, size_t len, struct kerr_info *err)
{
    struct ksim_fsel_req *nr;
    size_t i, oplen = 0;
    int negate = 0;

    for (i = 0; i < len; i++) {
        if (t[i] == '\\') {
            i++;
            continue;
        }
        if (t[i] == '!' && i + 1 < len && t[i + 1] == '=') {
            oplen = 2;
            negate = 1;
            break;
        }
        if (t[i] == '=') {
            oplen = i + 1 < len && t[i + 1] == '=' ? 2 : 1;
            break;
        }
    }
    if (oplen == 0 || i == 0)
        return kerr_set(err, KERR_PARSE, "invalid selector: '%.*s'; can't understand '%.*s'",
                        (int)len, t, (int)len, t);
    if (fs->n >= MAX_TERMS)
        return kerr_set(err, KERR_PARSE, "invalid selector: too many terms");
    nr = realloc(fs->reqs, (fs->n + 1) * sizeof(*nr));
    if (!nr)
        return kerr_set(err, KERR_NOMEM, NULL);
    fs->reqs = nr;
    nr = &fs->reqs[fs->n];
    nr->path = strndup(t, i);
    nr->value = unescape(t + i + oplen, len - i - oplen);
    nr->negate = negate;
    fs->n++;
    if (!nr->path || !nr->value)
        return kerr_set(err, KERR_PARSE, "invalid selector: bad escape in '%.*s'", (int)len, t);
    return KERR_OK;
}

enum kerr ksim_fsel_parse(const char *text, struct ksim_fsel **out, struct kerr_info *err)
{
    struct ksim_fsel *fs;
    const char *p = text ? text : "", *start = p;
    enum kerr rc = KERR_OK;

    *out = NULL;
    fs = calloc(1, sizeof(*fs));
    if (!fs)
        return kerr_set(err, KERR_NOMEM, NULL);
    for (;; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            continue;
        }
        if (*p != ',' && *p != '\0')
            continue;
        if (p > start)
            rc = field_term(fs, start, (size_t)(p - start), err);
        if (rc != KERR_OK || *p == '\0')
            break;
        start = p + 1;
    }
    if (rc != KERR_OK) {
        ksim_fsel_free(fs);
        return rc;
    }
    *out = fs;
    return KERR_OK;
}

void ksim_fsel_value(const cJSON *obj, const char *path, char *out, size_t size)
{
    const cJSON *cur = obj;
    const char *p = path;
    char part[128];
    size_t n;

    out[0] = '\0';
    while (cur && *p) {
        n = strcspn(p, ".");
        if (n >= sizeof(part))
            return;
        memcpy(part, p, n);
        part[n] = '\0';
        cur = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, part) : NULL;
        p += n;
        if (*p == '.')
            p++;
    }
    if (cJSON_IsString(cur))
        snprintf(out, size, "%s", cur->valuestring);
    else if (cJSON_IsBool(cur))
        snprintf(out, size, "%s", cJSON_IsTrue(cur) ? "true" : "false");
    else if (cJSON_IsNumber(cur))
        snprintf(out, size, "%.0f", cur->valuedouble);
}

int ksim_fsel_matches(const struct ksim_fsel *fs, const cJSON *obj)
{
    char v[512];
    size_t i;

    for (i = 0; fs && i < fs->n; i++) {
        ksim_fsel_value(obj, fs->reqs[i].path, v, sizeof(v));
        if ((strcmp(v, fs->reqs[i].value) == 0) == fs->reqs[i].negate)
            return 0;
    }
    return 1;
}
