#include "tests/kube-sim/pb.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/tlsx.h"
#include "tests/kube-sim/pbschema.h"

#define MAX_DEPTH 48

/* A wire value. */
struct wire {
    unsigned num, type;
    uint64_t v;             /* varint, fixed64, fixed32 */
    const unsigned char *p; /* length-delimited bytes */
    size_t len;
};

/* A field of the schema. */
struct field {
    char kind[64]; /* "s", "@ObjectMeta", "{s", "T", ... */
    char name[64];
    int repeated;
};

int ksim_pb_content_type(const char *ct)
{
    size_t n;

    if (!ct)
        return 0;
    n = strcspn(ct, ";");
    while (n && ct[n - 1] == ' ')
        n--;
    return n == 35 && strncasecmp(ct, "application/vnd.kubernetes.protobuf", 35) == 0;
}

static int varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
    uint64_t r = 0;
    unsigned shift = 0;

    while (*p < end && shift < 64) {
        unsigned char c = *(*p)++;

        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = r;
            return 0;
        }
        shift += 7;
    }
    return -1;
}

/* Read the next field; 1 at the end, -1 when malformed. */
static int next(const unsigned char **p, const unsigned char *end, struct wire *w)
{
    uint64_t key, len;

    if (*p >= end)
        return 1;
    if (varint(p, end, &key) != 0)
        return -1;
    memset(w, 0, sizeof(*w));
    w->num = (unsigned)(key >> 3);
    w->type = (unsigned)(key & 7);
    switch (w->type) {
    case 0:
        return varint(p, end, &w->v);
    case 1:
    case 5:
        len = w->type == 1 ? 8 : 4;
        if ((size_t)(end - *p) < len)
            return -1;
        memcpy(&w->v, *p, (size_t)len);
        *p += len;
        return 0;
    case 2:
        if (varint(p, end, &len) != 0 || len > (uint64_t)(end - *p))
            return -1;
        w->p = *p;
        w->len = (size_t)len;
        *p += len;
        return 0;
    default:
        return -1;
    }
}

/* The schema line of message name (pointing at its first field), or NULL. */
static const char *find_message(const char *name)
{
    const char *s = ksim_pbschema_text;
    size_t n = strlen(name);

    while (s && *s) {
        if (strncmp(s, name, n) == 0 && s[n] == ' ')
            return s + n + 1;
        s = strchr(s, '\n');
        if (s)
            s++;
    }
    return NULL;
}

/* Field num of the message at line, or -1. */
static int find_field(const char *line, unsigned num, struct field *f)
{
    const char *p = line, *tok_end, *eq;
    char *end = NULL;
    unsigned long n;

    while (*p && *p != '\n') {
        tok_end = p + strcspn(p, " \n");
        n = strtoul(p, &end, 10);
        if (n == num && end && end < tok_end) {
            f->repeated = *end == '*';
            if (f->repeated)
                end++;
            eq = memchr(end, '=', (size_t)(tok_end - end));
            if (!eq || (size_t)(eq - end) >= sizeof(f->kind) ||
                (size_t)(tok_end - eq - 1) >= sizeof(f->name))
                return -1;
            memcpy(f->kind, end, (size_t)(eq - end));
            f->kind[eq - end] = '\0';
            memcpy(f->name, eq + 1, (size_t)(tok_end - eq - 1));
            f->name[tok_end - eq - 1] = '\0';
            return 0;
        }
        p = *tok_end == ' ' ? tok_end + 1 : tok_end;
    }
    return -1;
}

static cJSON *decode_message(const char *name, const unsigned char *p, size_t len, int depth);

/* Time / MicroTime: {seconds, nanos}; NULL for the zero time. */
static cJSON *time_value(const struct wire *w, int micro)
{
    const unsigned char *p = w->p, *end = w->p + w->len;
    struct wire f;
    struct timespec ts = { 0, 0 };
    char text[KTIME_MICROTIME_LEN + 1];

    while (next(&p, end, &f) == 0) {
        if (f.num == 1 && f.type == 0)
            ts.tv_sec = (time_t)(int64_t)f.v;
        else if (f.num == 2 && f.type == 0)
            ts.tv_nsec = (long)(int64_t)f.v;
    }
    if (!ts.tv_sec && !ts.tv_nsec)
        return NULL;
    if ((micro ? ktime_microtime_format(&ts, text) : ktime_format(ts.tv_sec, text)) != KERR_OK)
        return NULL;
    return cJSON_CreateString(text);
}

static cJSON *string_value(const unsigned char *p, size_t len)
{
    char *s = malloc(len + 1);
    cJSON *v;

    if (!s)
        return NULL;
    memcpy(s, p, len);
    s[len] = '\0';
    v = cJSON_CreateString(s);
    free(s);
    return v;
}

/* IntOrString {type, intVal, strVal}, Quantity {string}, RawExtension / FieldsV1 {raw}. */
static cJSON *special_value(char kind, const struct wire *w)
{
    const unsigned char *p = w->p, *end = w->p + w->len;
    struct wire f;
    int64_t type = 0, ival = 0;
    cJSON *sval = NULL, *raw = NULL;

    while (next(&p, end, &f) == 0) {
        if (f.num == 1 && f.type == 0)
            type = (int64_t)f.v;
        else if (f.num == 2 && f.type == 0)
            ival = (int64_t)f.v;
        else if (f.num == 1 && f.type == 2 && (kind == 'R' || kind == 'F'))
            kjson_parse((const char *)f.p, f.len, NULL, &raw, NULL, NULL);
        else if (f.type == 2 && ((kind == 'I' && f.num == 3) || (kind == 'Q' && f.num == 1))) {
            cJSON_Delete(sval);
            sval = string_value(f.p, f.len);
        }
    }
    if (kind == 'I' && type == 0) {
        cJSON_Delete(sval);
        return cJSON_CreateNumber((double)(int32_t)ival);
    }
    if (kind == 'R' || kind == 'F')
        return raw;
    return sval;
}

static cJSON *bytes_value(const unsigned char *p, size_t len)
{
    char *b64 = NULL;
    cJSON *v;

    if (crypto_b64_encode(p, len, &b64, NULL, NULL) != KERR_OK)
        return NULL;
    v = cJSON_CreateString(b64);
    free(b64);
    return v;
}

static double as_double(const struct wire *w)
{
    double d;
    float f;
    uint32_t u = (uint32_t)w->v;

    if (w->type == 1) {
        memcpy(&d, &w->v, sizeof(d));
        return d;
    }
    memcpy(&f, &u, sizeof(f));
    return (double)f;
}

/* The JSON of one value of kind; *skip when it is the zero value to leave out. */
static cJSON *value(const char *kind, const struct wire *w, const char *name, int depth, int *skip)
{
    int keep_zero = strcmp(name, "replicas") == 0;

    *skip = 0;
    switch (kind[0]) {
    case 's':
        *skip = w->type != 2 || w->len == 0;
        return *skip ? NULL : string_value(w->p, w->len);
    case 'b':
        return w->type == 2 ? bytes_value(w->p, w->len) : NULL;
    case 'i':
        *skip = w->v == 0 && !keep_zero;
        return cJSON_CreateNumber((double)(int64_t)w->v);
    case 'u':
        *skip = w->v == 0 && !keep_zero;
        return cJSON_CreateNumber((double)w->v);
    case 'B':
        *skip = w->v == 0;
        return cJSON_CreateBool(w->v != 0);
    case 'd':
        return cJSON_CreateNumber(as_double(w));
    case '@':
        return w->type == 2 ? decode_message(kind + 1, w->p, w->len, depth + 1) : NULL;
    case 'T':
    case 'U':
        *skip = 1;
        if (w->type != 2)
            return NULL;
        {
            cJSON *t = time_value(w, kind[0] == 'U');

            *skip = t == NULL;
            return t;
        }
    case 'I':
    case 'Q':
    case 'R':
    case 'F':
        return w->type == 2 ? special_value(kind[0], w) : NULL;
    default:
        *skip = 1;
        return NULL;
    }
}

/* The JSON of a map value that the encoder left out because it was empty. */
static cJSON *map_default(char kind)
{
    if (kind == 's' || kind == 'b')
        return cJSON_CreateString("");
    if (kind == '@')
        return cJSON_CreateObject();
    return cJSON_CreateNull();
}

/* A map entry {key: 1, value: 2} into obj[name]. */
static int map_entry(cJSON *obj, const struct field *f, const struct wire *w, int depth)
{
    const unsigned char *p = w->p, *end = w->p + w->len;
    struct wire e, val;
    cJSON *map = cJSON_GetObjectItemCaseSensitive(obj, f->name), *v = NULL, *key = NULL;
    int have_val = 0, skip, rc = -1;

    memset(&val, 0, sizeof(val));
    while (next(&p, end, &e) == 0) {
        if (e.num == 1 && e.type == 2) {
            cJSON_Delete(key);
            key = string_value(e.p, e.len);
        } else if (e.num == 2) {
            val = e;
            have_val = 1;
        }
    }
    if (!map)
        map = cJSON_AddObjectToObject(obj, f->name);
    if (have_val)
        v = value(f->kind + 1, &val, "", depth, &skip);
    if (!v)
        v = map_default(f->kind[1]);
    if (key && map && v) {
        cJSON_DeleteItemFromObjectCaseSensitive(map, key->valuestring);
        if (cJSON_AddItemToObject(map, key->valuestring, v)) {
            v = NULL;
            rc = 0;
        }
    }
    cJSON_Delete(v);
    cJSON_Delete(key);
    return rc;
}

static int add_field(cJSON *obj, const struct field *f, const struct wire *w, int depth)
{
    cJSON *v, *arr;
    int skip;

    if (f->kind[0] == '{')
        return w->type == 2 ? map_entry(obj, f, w, depth) : -1;
    v = value(f->kind, w, f->name, depth, &skip);
    if (f->repeated) {
        arr = cJSON_GetObjectItemCaseSensitive(obj, f->name);
        if (!arr)
            arr = cJSON_AddArrayToObject(obj, f->name);
        if (!v && (f->kind[0] == 's' || f->kind[0] == 'i'))
            v = f->kind[0] == 's' ? cJSON_CreateString("") : cJSON_CreateNumber(0);
        if (!arr || !v || !cJSON_AddItemToArray(arr, v)) {
            cJSON_Delete(v);
            return -1;
        }
        return 0;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(obj, f->name);
    if (skip || !v) {
        cJSON_Delete(v);
        return skip ? 0 : -1;
    }
    return cJSON_AddItemToObject(obj, f->name, v) ? 0 : (cJSON_Delete(v), -1);
}

static cJSON *decode_message(const char *name, const unsigned char *p, size_t len, int depth)
{
    const unsigned char *end = p + len;
    const char *line = find_message(name);
    cJSON *obj;
    struct wire w;
    struct field f;
    int rc;

    if (!line || depth > MAX_DEPTH)
        return NULL;
    obj = cJSON_CreateObject();
    while (obj && (rc = next(&p, end, &w)) == 0) {
        if (find_field(line, w.num, &f) != 0)
            continue; /* a field kube-sim's table does not know: skipped */
        if (add_field(obj, &f, &w, depth) != 0) {
            cJSON_Delete(obj);
            return NULL;
        }
    }
    if (obj && rc < 0) {
        cJSON_Delete(obj);
        return NULL;
    }
    return obj;
}

/* runtime.Unknown: typeMeta {apiVersion, kind}, raw. */
static int envelope(const unsigned char *p, const unsigned char *end, char *av, char *kind,
                    size_t size, struct wire *raw)
{
    struct wire w, t;
    const unsigned char *q;

    memset(raw, 0, sizeof(*raw));
    av[0] = kind[0] = '\0';
    while (next(&p, end, &w) == 0) {
        if (w.num == 2 && w.type == 2)
            *raw = w;
        if (w.num != 1 || w.type != 2)
            continue;
        q = w.p;
        while (next(&q, w.p + w.len, &t) == 0) {
            if (t.type == 2 && t.len < size && (t.num == 1 || t.num == 2)) {
                memcpy(t.num == 1 ? av : kind, t.p, t.len);
                (t.num == 1 ? av : kind)[t.len] = '\0';
            }
        }
    }
    return kind[0] && raw->p ? 0 : -1;
}

enum kerr ksim_pb_decode(const unsigned char *body, size_t len, cJSON **out, struct kerr_info *err)
{
    char av[128], kind[128];
    struct wire raw;
    cJSON *obj;

    *out = NULL;
    if (len < 4 || memcmp(body, "k8s\0", 4) != 0 ||
        envelope(body + 4, body + len, av, kind, sizeof(av), &raw) != 0)
        return kerr_set(err, KERR_PARSE, "not a Kubernetes protobuf envelope");
    if (!find_message(kind))
        return kerr_set(err, KERR_UNSUPPORTED, "kube-sim cannot decode protobuf %s", kind);
    obj = decode_message(kind, raw.p, raw.len, 0);
    if (!obj)
        return kerr_set(err, KERR_PARSE, "malformed protobuf %s", kind);
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "apiVersion");
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "kind");
    if (!cJSON_AddStringToObject(obj, "apiVersion", av) ||
        !cJSON_AddStringToObject(obj, "kind", kind)) {
        cJSON_Delete(obj);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    *out = obj;
    return KERR_OK;
}
