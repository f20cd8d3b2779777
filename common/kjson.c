#include "common/kjson.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON_Utils.h>

#include "common/jpatch.h"

/*
 * A path being walked: the dotted text (p) or the segment array (segs).
 * started is set once the first dotted segment has been read, after which
 * a segment must be introduced by '.' or '['.
 */
struct path_it {
    const char *p;
    const char *const *segs;
    int started;
};

static const char *const no_segs[] = { NULL };

#define PATH_DOTTED(path) \
    {                     \
        .p = (path)       \
    }
#define PATH_SEGS(segs)                   \
    {                                     \
        .segs = (segs) ? (segs) : no_segs \
    }

/* Next segment in *s / *n: 1 when there is one, 0 at the end, -1 when the path is malformed. */
static int next_seg(struct path_it *it, const char **s, size_t *n)
{
    const char *p = it->p, *end;

    if (it->segs) {
        if (!*it->segs)
            return 0;
        *s = *it->segs++;
        *n = strlen(*s);
        return 1;
    }
    if (!p || !*p)
        return 0;
    if (it->started && *p == '.')
        p++;
    else if (it->started && *p != '[')
        return -1;
    it->started = 1;
    if (*p == '[') {
        end = strchr(p + 1, ']');
        if (!end)
            return -1;
        *s = p + 1;
        *n = (size_t)(end - p - 1);
        it->p = end + 1;
        return 1;
    }
    end = p + strcspn(p, ".[");
    if (end == p)
        return -1;
    *s = p;
    *n = (size_t)(end - p);
    it->p = end;
    return 1;
}

/* A decimal array index of at most 9 digits; -1 otherwise. */
static int seg_index(const char *s, size_t n)
{
    int v = 0;
    size_t i;

    if (n == 0 || n > 9)
        return -1;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* The member of an object, or element of an array, named by the segment; NULL if none. */
static cJSON *child_of(const cJSON *node, const char *s, size_t n)
{
    cJSON *c;
    int idx;

    if (cJSON_IsArray(node)) {
        idx = seg_index(s, n);
        return idx < 0 ? NULL : cJSON_GetArrayItem(node, idx);
    }
    if (!cJSON_IsObject(node))
        return NULL;
    for (c = node->child; c; c = c->next) {
        if (c->string && strlen(c->string) == n && memcmp(c->string, s, n) == 0)
            return c;
    }
    return NULL;
}

static const cJSON *walk(const cJSON *root, struct path_it *it)
{
    const cJSON *node = root;
    const char *s;
    size_t n;
    int r;

    while (node && (r = next_seg(it, &s, &n)) != 0) {
        if (r < 0)
            return NULL;
        node = child_of(node, s, n);
    }
    return node;
}

const cJSON *kjson_get(const cJSON *root, const char *path)
{
    struct path_it it = PATH_DOTTED(path);

    return walk(root, &it);
}

const cJSON *kjson_getv(const cJSON *root, const char *const *segs)
{
    struct path_it it = PATH_SEGS(segs);

    return walk(root, &it);
}

bool kjson_has(const cJSON *root, const char *path)
{
    return kjson_get(root, path) != NULL;
}

const char *kjson_get_str(const cJSON *root, const char *path)
{
    const cJSON *v = kjson_get(root, path);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *kjson_get_obj(const cJSON *root, const char *path)
{
    const cJSON *v = kjson_get(root, path);

    return cJSON_IsObject(v) ? v : NULL;
}

const cJSON *kjson_get_arr(const cJSON *root, const char *path)
{
    const cJSON *v = kjson_get(root, path);

    return cJSON_IsArray(v) ? v : NULL;
}

enum kerr kjson_get_int64(const cJSON *root, const char *path, int64_t *out)
{
    const cJSON *v = kjson_get(root, path);
    double d;

    *out = 0;
    if (!v)
        return KERR_NOTFOUND;
    if (!cJSON_IsNumber(v))
        return KERR_INVAL;
    d = v->valuedouble;
    /* 2^63 is exactly representable; anything at or above it does not fit. */
    if (!isfinite(d) || d != floor(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
        return KERR_INVAL;
    *out = (int64_t)d;
    return KERR_OK;
}

int64_t kjson_get_count(const cJSON *root, const char *path, int64_t def)
{
    int64_t v;

    if (!kjson_get(root, path))
        return def;
    if (kjson_get_int64(root, path, &v) != KERR_OK || v < 0)
        return -1;
    return v;
}

enum kerr kjson_get_bool(const cJSON *root, const char *path, bool *out)
{
    const cJSON *v = kjson_get(root, path);

    *out = false;
    if (!v)
        return KERR_NOTFOUND;
    if (!cJSON_IsBool(v))
        return KERR_INVAL;
    *out = cJSON_IsTrue(v);
    return KERR_OK;
}

/* The container below node for a non-final segment, created as an object when missing. */
static enum kerr step_create(cJSON *node, const char *s, size_t n, cJSON **next,
                             struct kerr_info *err)
{
    cJSON *c = child_of(node, s, n);
    char *key;

    *next = NULL;
    if (c && (cJSON_IsObject(c) || cJSON_IsArray(c))) {
        *next = c;
        return KERR_OK;
    }
    if (c || !cJSON_IsObject(node))
        return kerr_set(err, KERR_INVAL, "kjson: \"%.*s\" is not an object or has no such element",
                        (int)n, s);
    key = strndup(s, n);
    *next = key ? cJSON_AddObjectToObject(node, key) : NULL;
    free(key);
    if (!*next)
        return kerr_set(err, KERR_NOMEM, "kjson: creating \"%.*s\"", (int)n, s);
    return KERR_OK;
}

/* Put value (TAKEN) as the member/element s of node. */
static enum kerr put_leaf(cJSON *node, const char *s, size_t n, cJSON *value, struct kerr_info *err)
{
    int idx, size, ok = 0;
    char *key = NULL;

    if (cJSON_IsArray(node)) {
        idx = seg_index(s, n);
        size = cJSON_GetArraySize(node);
        if (idx >= 0 && idx < size)
            ok = cJSON_ReplaceItemInArray(node, idx, value);
        else if (idx == size)
            ok = cJSON_AddItemToArray(node, value);
        if (idx < 0 || idx > size) {
            cJSON_Delete(value);
            return kerr_set(err, KERR_INVAL, "kjson: index %.*s out of range", (int)n, s);
        }
    } else if (cJSON_IsObject(node)) {
        key = strndup(s, n);
        if (key && child_of(node, s, n))
            ok = cJSON_ReplaceItemInObjectCaseSensitive(node, key, value);
        else if (key)
            ok = cJSON_AddItemToObject(node, key, value);
        free(key);
    } else {
        cJSON_Delete(value);
        return kerr_set(err, KERR_INVAL, "kjson: parent of \"%.*s\" is not a container", (int)n, s);
    }
    if (!ok) {
        cJSON_Delete(value);
        return kerr_set(err, KERR_NOMEM, "kjson: setting \"%.*s\"", (int)n, s);
    }
    return KERR_OK;
}

static enum kerr set_at(cJSON *root, struct path_it *it, cJSON *value, struct kerr_info *err)
{
    const char *s, *ns;
    size_t n, nn;
    cJSON *node = root;
    enum kerr rc;
    int r;

    if (!value)
        return kerr_set(err, KERR_NOMEM, "kjson: no value to set");
    r = next_seg(it, &s, &n);
    while (r > 0) {
        r = next_seg(it, &ns, &nn);
        if (r == 0)
            return put_leaf(node, s, n, value, err);
        if (r < 0)
            break;
        if ((rc = step_create(node, s, n, &node, err)) != KERR_OK) {
            cJSON_Delete(value);
            return rc;
        }
        s = ns;
        n = nn;
    }
    cJSON_Delete(value);
    return kerr_set(err, KERR_INVAL, "kjson: empty or malformed path");
}

enum kerr kjson_set(cJSON *root, const char *path, cJSON *value, struct kerr_info *err)
{
    struct path_it it = PATH_DOTTED(path);

    return set_at(root, &it, value, err);
}

enum kerr kjson_setv(cJSON *root, const char *const *segs, cJSON *value, struct kerr_info *err)
{
    struct path_it it = PATH_SEGS(segs);

    return set_at(root, &it, value, err);
}

enum kerr kjson_set_str(cJSON *root, const char *path, const char *s, struct kerr_info *err)
{
    return kjson_set(root, path, cJSON_CreateString(s ? s : ""), err);
}

enum kerr kjson_set_int(cJSON *root, const char *path, int64_t v, struct kerr_info *err)
{
    return kjson_set(root, path, cJSON_CreateNumber((double)v), err);
}

enum kerr kjson_set_bool(cJSON *root, const char *path, bool v, struct kerr_info *err)
{
    return kjson_set(root, path, cJSON_CreateBool(v), err);
}

static enum kerr delete_at(cJSON *root, struct path_it *it)
{
    const char *s, *ns;
    size_t n, nn;
    cJSON *node = root, *c;
    int r = next_seg(it, &s, &n);

    while (r > 0 && node) {
        r = next_seg(it, &ns, &nn);
        if (r < 0)
            return KERR_NOTFOUND;
        c = child_of(node, s, n);
        if (r == 0) {
            if (!c)
                return KERR_NOTFOUND;
            cJSON_Delete(cJSON_DetachItemViaPointer(node, c));
            return KERR_OK;
        }
        node = c;
        s = ns;
        n = nn;
    }
    return KERR_NOTFOUND;
}

enum kerr kjson_delete(cJSON *root, const char *path)
{
    struct path_it it = PATH_DOTTED(path);

    return delete_at(root, &it);
}

enum kerr kjson_deletev(cJSON *root, const char *const *segs)
{
    struct path_it it = PATH_SEGS(segs);

    return delete_at(root, &it);
}

/*
 * Offset of the first '[' or '{' that opens a level deeper than max (and
 * *what says so), or of the first raw control character inside a string
 * (RFC 8259 requires them escaped; cJSON would accept them and cut the
 * string at a NUL); len when the text has neither.
 */
static size_t prescan(const char *d, size_t len, unsigned max, const char **what)
{
    unsigned depth = 0;
    int in_str = 0, esc = 0;
    size_t i;

    *what = "nesting too deep";
    for (i = 0; i < len; i++) {
        if (in_str && (unsigned char)d[i] < 0x20) {
            *what = "control character in string";
            return i;
        }
        if (in_str) {
            if (esc)
                esc = 0;
            else if (d[i] == '\\')
                esc = 1;
            else if (d[i] == '"')
                in_str = 0;
        } else if (d[i] == '"') {
            in_str = 1;
        } else if ((d[i] == '[' || d[i] == '{') && ++depth > max) {
            return i;
        } else if ((d[i] == ']' || d[i] == '}') && depth > 0) {
            depth--;
        }
    }
    return len;
}

static enum kerr parse_fail(size_t off, size_t *err_offset, struct kerr_info *err, const char *what)
{
    if (err_offset)
        *err_offset = off;
    return kerr_set(err, KERR_PARSE, "kjson: %s at offset %zu", what, off);
}

enum kerr kjson_parse(const char *data, size_t len, const struct kjson_limits *lim, cJSON **out,
                      size_t *err_offset, struct kerr_info *err)
{
    size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : KJSON_DEFAULT_MAX_BYTES;
    unsigned max_depth = lim && lim->max_depth ? lim->max_depth : KJSON_DEFAULT_MAX_DEPTH;
    const char *end = NULL, *what;
    size_t off;

    *out = NULL;
    if (err_offset)
        *err_offset = 0;
    if (len > max_bytes)
        return kerr_set(err, KERR_TOOBIG, "kjson: %zu bytes exceed the limit of %zu", len,
                        max_bytes);
    if (!data || len == 0)
        return parse_fail(0, err_offset, err, "empty input");
    off = prescan(data, len, max_depth, &what);
    if (off < len)
        return parse_fail(off, err_offset, err, what);
    *out = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    off = end && end >= data ? (size_t)(end - data) : 0;
    if (!*out)
        return parse_fail(off, err_offset, err, "invalid JSON");
    while (off < len && memchr(" \t\n\r", data[off], 4))
        off++;
    if (off < len) {
        cJSON_Delete(*out);
        *out = NULL;
        return parse_fail(off, err_offset, err, "unexpected data after the value");
    }
    return KERR_OK;
}

enum kerr kjson_print(const cJSON *v, char **out, size_t *len, struct kerr_info *err)
{
    *out = v ? cJSON_PrintUnformatted(v) : NULL;
    if (len)
        *len = *out ? strlen(*out) : 0;
    if (!*out)
        return kerr_set(err, v ? KERR_NOMEM : KERR_INVAL, "kjson: printing JSON");
    return KERR_OK;
}

static void sort_tree(cJSON *node)
{
    cJSON *c;

    if (cJSON_IsObject(node))
        cJSONUtils_SortObjectCaseSensitive(node);
    for (c = node->child; c; c = c->next)
        sort_tree(c);
}

enum kerr kjson_print_sorted(const cJSON *v, char **out, size_t *len, struct kerr_info *err)
{
    cJSON *dup = v ? cJSON_Duplicate(v, 1) : NULL;
    enum kerr rc;

    if (dup)
        sort_tree(dup);
    rc = kjson_print(dup, out, len, err);
    cJSON_Delete(dup);
    return rc;
}

static enum kerr path_to_ptr(struct path_it *it, char **out, struct kerr_info *err)
{
    struct buf b;
    const char *s;
    size_t n;
    enum kerr rc = KERR_OK;
    int r;

    *out = NULL;
    buf_init(&b, KJSON_DEFAULT_MAX_BYTES);
    while (rc == KERR_OK && (r = next_seg(it, &s, &n)) != 0)
        rc = r < 0 ? KERR_INVAL : jpatch_ptr_append_n(&b, s, n);
    if (rc == KERR_OK && !(*out = buf_detach(&b, NULL)))
        rc = KERR_NOMEM;
    buf_release(&b);
    if (rc != KERR_OK)
        return kerr_set(err, rc, "kjson: %s", rc == KERR_INVAL ? "malformed path" : kerr_str(rc));
    return KERR_OK;
}

enum kerr kjson_path_to_ptr(const char *path, char **out, struct kerr_info *err)
{
    struct path_it it = PATH_DOTTED(path);

    return path_to_ptr(&it, out, err);
}

enum kerr kjson_segs_to_ptr(const char *const *segs, char **out, struct kerr_info *err)
{
    struct path_it it = PATH_SEGS(segs);

    return path_to_ptr(&it, out, err);
}
