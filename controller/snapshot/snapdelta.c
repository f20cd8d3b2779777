/* snapdelta - a delta snapshot's events as they stream in (see snapdelta.h). */
#include "controller/snapshot/snapdelta.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/buf.h"

enum state { S_START, S_FIRST, S_VALUE, S_OBJECT, S_AFTER, S_END };

struct snapdelta {
    enum state st;
    int depth;
    bool in_str, esc;
    struct buf ev;      /* the element being read */
    unsigned char *key; /* OWNS: decoded key */
    size_t key_cap;
    int64_t n;
    snapdelta_fn fn;
    void *ctx;
};

enum kerr snapdelta_new(size_t event_max, snapdelta_fn fn, void *ctx, struct snapdelta **out,
                        struct kerr_info *err)
{
    struct snapdelta *d = calloc(1, sizeof *d);
    *out = NULL;
    if (d == NULL)
        return kerr_set(err, KERR_NOMEM, NULL);
    buf_init(&d->ev, event_max);
    d->fn = fn;
    d->ctx = ctx;
    *out = d;
    return KERR_OK;
}

void snapdelta_free(struct snapdelta *d)
{
    if (d) {
        buf_release(&d->ev);
        free(d->key);
        free(d);
    }
}

int64_t snapdelta_events(const struct snapdelta *d)
{
    return d->n;
}

static bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool integer(const cJSON *j, int64_t *out)
{
    if (j == NULL) {
        *out = 0;
        return true;
    }
    if (!cJSON_IsNumber(j) || j->valuedouble != floor(j->valuedouble) ||
        fabs(j->valuedouble) > 9007199254740992.0)
        return false;
    *out = (int64_t)j->valuedouble;
    return true;
}

/* Standard base64 with padding, as Go's encoding/json writes []byte. */
static enum kerr b64(struct snapdelta *d, const char *s, size_t *len, struct kerr_info *err)
{
    size_t n = strlen(s), pad = 0;
    if (n % 4 != 0)
        return kerr_set(err, KERR_PARSE, "event %lld: key is not base64", (long long)d->n);
    if (n / 4 * 3 + 1 > d->key_cap) {
        unsigned char *k = realloc(d->key, n / 4 * 3 + 1);
        if (k == NULL)
            return kerr_set(err, KERR_NOMEM, NULL);
        d->key = k;
        d->key_cap = n / 4 * 3 + 1;
    }
    if (n > 0 && s[n - 1] == '=')
        pad = n > 1 && s[n - 2] == '=' ? 2 : 1;
    int r = n ? EVP_DecodeBlock(d->key, (const unsigned char *)s, (int)n) : 0;
    const char *eq = strchr(s, '=');
    if (r < 0 || (size_t)r < pad || (eq != NULL && eq < s + n - pad))
        return kerr_set(err, KERR_PARSE, "event %lld: key is not base64", (long long)d->n);
    *len = (size_t)r - pad;
    return KERR_OK;
}

/* One whole element in d->ev. */
static enum kerr event(struct snapdelta *d, struct kerr_info *err)
{
    cJSON *j = cJSON_ParseWithLength(d->ev.data, d->ev.len);
    const cJSON *ee = cJSON_GetObjectItemCaseSensitive(j, "etcdEvent");
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(ee, "kv");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ee, "type");
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(kv, "key");
    struct snapdelta_event ev = { .index = d->n };
    int64_t t = 0;
    enum kerr rc = KERR_OK;

    if (j == NULL)
        rc = kerr_set(err, KERR_PARSE, "event %lld: not JSON", (long long)d->n);
    else if (!cJSON_IsObject(ee) || !cJSON_IsObject(kv))
        rc = kerr_set(err, KERR_PARSE, "event %lld: no etcdEvent.kv object", (long long)d->n);
    else if (!integer(type, &t) || t < INT32_MIN || t > INT32_MAX ||
             !integer(cJSON_GetObjectItemCaseSensitive(kv, "mod_revision"), &ev.mod_revision))
        rc = kerr_set(err, KERR_PARSE, "event %lld: type or mod_revision is not an integer",
                      (long long)d->n);
    else if (key != NULL && !cJSON_IsString(key))
        rc = kerr_set(err, KERR_PARSE, "event %lld: key is not a string", (long long)d->n);
    else if (key != NULL)
        rc = b64(d, key->valuestring, &ev.klen, err);
    if (rc == KERR_OK) {
        ev.type = (int)t;
        ev.key = d->key;
        rc = d->fn(d->ctx, &ev, err);
    }
    cJSON_Delete(j);
    buf_reset(&d->ev);
    d->n++;
    return rc;
}

/* Inside an element: copy bytes until its closing brace. *used: bytes of p consumed. */
static enum kerr in_object(struct snapdelta *d, const unsigned char *p, size_t n, size_t *used,
                           struct kerr_info *err)
{
    size_t i = 0;
    bool done = false;
    for (; i < n && !done; i++) {
        unsigned char c = p[i];
        if (d->in_str) {
            if (d->esc)
                d->esc = false;
            else if (c == '\\')
                d->esc = true;
            else if (c == '"')
                d->in_str = false;
        } else if (c == '"') {
            d->in_str = true;
        } else if (c == '{' || c == '[') {
            d->depth++;
        } else if (c == '}' || c == ']') {
            done = --d->depth == 0;
        }
    }
    *used = i;
    if (buf_append(&d->ev, p, i) != KERR_OK)
        return kerr_set(err, KERR_PARSE, "event %lld: larger than %zu bytes", (long long)d->n,
                        d->ev.max);
    if (!done)
        return KERR_OK;
    d->st = S_AFTER;
    return event(d, err);
}

enum kerr snapdelta_update(struct snapdelta *d, const void *data, size_t len, struct kerr_info *err)
{
    const unsigned char *p = data;
    enum kerr rc = KERR_OK;
    for (size_t i = 0; rc == KERR_OK && i < len;) {
        unsigned char c = p[i];
        size_t used = 1;
        if (d->st == S_OBJECT) {
            rc = in_object(d, p + i, len - i, &used, err);
        } else if (is_ws(c)) {
            /* between tokens */
        } else if (d->st == S_START && c == '[') {
            d->st = S_FIRST;
        } else if ((d->st == S_FIRST || d->st == S_AFTER) && c == ']') {
            d->st = S_END;
        } else if (d->st == S_AFTER && c == ',') {
            d->st = S_VALUE;
        } else if ((d->st == S_FIRST || d->st == S_VALUE) && c == '{') {
            d->st = S_OBJECT;
            d->depth = 0;
            d->in_str = d->esc = false;
            used = 0;
        } else {
            rc = kerr_set(err, KERR_PARSE,
                          "not an array of events: unexpected '%c' before event %lld",
                          c >= 0x20 && c < 0x7f ? c : '?', (long long)d->n);
        }
        i += used;
    }
    return rc;
}

enum kerr snapdelta_finish(struct snapdelta *d, struct kerr_info *err)
{
    if (d->st != S_END)
        return kerr_set(err, KERR_PARSE, "the array of events does not end (after %lld events)",
                        (long long)d->n);
    return KERR_OK;
}
