/* gcsjson - GCS JSON API answers (see gcsjson.h). */
#include "controller/snapshot/providers/gcsjson.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/snapshot/providers/snapxml.h"

#define GCSJSON_MAX (16u * 1024u * 1024u)

static enum kerr parse(const char *text, size_t len, cJSON **root, struct kerr_info *err)
{
    struct kjson_limits lim = { GCSJSON_MAX, 16 };
    enum kerr rc = kjson_parse(text, len, &lim, root, NULL, err);
    if (rc == KERR_OK && !cJSON_IsObject(*root)) {
        cJSON_Delete(*root);
        *root = NULL;
        rc = kerr_set(err, KERR_PARSE, "GCS answer is not a JSON object");
    }
    return rc;
}

static const char *str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool meta_true(const cJSON *meta, const char *name)
{
    const char *v = str(meta, name);
    return v && strcmp(v, "true") == 0;
}

/* An int64 in decimal (the JSON API's "size" and "generation" are strings). */
static bool int64_of(const char *s, int64_t *out)
{
    char *end = NULL;
    if (s == NULL || s[0] < '0' || s[0] > '9') {
        return false;
    }
    long long v = strtoll(s, &end, 10);
    *out = v;
    return *end == '\0' && v >= 0;
}

static enum kerr take(const cJSON *it, struct ostore_obj *o, struct kerr_info *err)
{
    const char *name = str(it, "name"), *gen = str(it, "generation"), *md5 = str(it, "md5Hash");
    const char *etag = str(it, "etag");
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(it, "metadata");
    struct timespec ts;
    int64_t g = 0;
    memset(o, 0, sizeof *o);
    if (!cJSON_IsObject(it) || name == NULL || name[0] == '\0') {
        return kerr_set(err, KERR_PARSE, "GCS object without a name");
    }
    if (gen && !int64_of(gen, &g)) {
        return kerr_set(err, KERR_PARSE, "GCS object %.200s: bad generation", name);
    }
    if (!int64_of(str(it, "size"), &o->size)) {
        o->size = -1;
    }
    o->mtime = ktime_parse(str(it, "updated"), &ts, NULL) == KERR_OK ? (int64_t)ts.tv_sec : 0;
    o->immutable_until = ktime_parse(str(it, "retentionExpirationTime"), &ts, NULL) == KERR_OK
                             ? (int64_t)ts.tv_sec
                             : 0;
    if (md5 == NULL || snapxml_md5_b64_to_hex(md5, o->md5) != 0) {
        o->md5[0] = '\0';
    }
    snprintf(o->etag, sizeof o->etag, "%s", etag ? etag : "");
    o->excluded = meta_true(meta, "x-etcd-snapshot-exclude");
    o->own_copy = meta_true(meta, GCS_COPY_MARK);
    const char *sha = str(meta, GCS_SHA256);
    if (sha && strlen(sha) == 64 && strspn(sha, "0123456789abcdef") == 64) {
        memcpy(o->sha256, sha, 65);
    }
    o->key = strdup(name);
    o->version_id = gen ? strdup(gen) : NULL;
    if (o->key == NULL || (gen && o->version_id == NULL)) {
        ostore_obj_release(o);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    return KERR_OK;
}

enum kerr gcsjson_object(const char *text, size_t len, struct ostore_obj *out,
                         struct kerr_info *err)
{
    cJSON *root = NULL;
    memset(out, 0, sizeof *out);
    enum kerr rc = parse(text, len, &root, err);
    rc = rc ? rc : take(root, out, err);
    cJSON_Delete(root);
    return rc;
}

enum kerr gcsjson_list(const char *text, size_t len, struct ostore_list *out, char **next,
                       struct kerr_info *err)
{
    cJSON *root = NULL;
    const cJSON *it = NULL;
    *next = NULL;
    enum kerr rc = parse(text, len, &root, err);
    const cJSON *items = rc ? NULL : cJSON_GetObjectItemCaseSensitive(root, "items");
    if (items && !cJSON_IsArray(items)) {
        rc = kerr_set(err, KERR_PARSE, "GCS listing: items is not an array");
        items = NULL;
    }
    cJSON_ArrayForEach (it, items) {
        struct ostore_obj o;
        rc = take(it, &o, err);
        rc = rc ? rc : ostore_list_add(out, &o, err);
        ostore_obj_release(&o);
        if (rc != KERR_OK) {
            break;
        }
    }
    const char *tok = rc ? NULL : str(root, "nextPageToken");
    if (tok && tok[0]) {
        *next = strdup(tok);
        rc = *next ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    cJSON_Delete(root);
    return rc;
}

void gcsjson_error(const char *text, size_t len, char reason[64], char msg[256])
{
    cJSON *root = NULL;
    reason[0] = msg[0] = '\0';
    if (parse(text, len, &root, NULL) == KERR_OK) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
        const char *m = str(e, "message");
        const char *r =
            str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "errors"), 0), "reason");
        snprintf(reason, 64, "%s", r ? r : "");
        snprintf(msg, 256, "%s", m ? m : "");
    }
    cJSON_Delete(root);
}
