/* gcs - Google Cloud Storage provider (see gcs.h). */
#include "controller/snapshot/providers/gcs.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/kjson.h"
#include "controller/snapshot/providers/gcsauth.h"
#include "controller/snapshot/providers/gcsjson.h"
#include "controller/snapshot/providers/shttp.h"

#define GCS_RETRIES     4
#define GCS_URL_MAX     16384
#define GCS_REWRITE_MAX 10000 /* rewrite calls for one copy before giving up */

struct gcs {
    struct ostore base;
    struct shttp http;
    struct gcsauth auth;
    bool authed;    /* credentials present: requests carry a bearer token */
    char *bucket;   /* escaped for a URL path */
    char *endpoint; /* "https://storage.googleapis.com", no trailing slash */
};

struct gcs_upload {
    char *key;
    char *session; /* the resumable upload session URI */
    int64_t size;
    int64_t sent;
};

/* A non-success answer mapped: 403 retentionPolicyNotMet is the Bucket Lock refusal. */
static enum kerr status_err(const char *what, const char *key, const struct shttp_resp *r,
                            struct kerr_info *err)
{
    char reason[64], msg[256];
    gcsjson_error(buf_str(&r->body), r->body.len, reason, msg);
    enum kerr k = KERR_HTTP;
    if (r->status == 404) {
        k = KERR_NOTFOUND;
    } else if (r->status == 403 && strcmp(reason, "retentionPolicyNotMet") == 0) {
        k = KERR_FORBIDDEN;
    } else if (r->status == 412 || r->status == 409) {
        k = KERR_EXISTS;
    } else if (r->status == 401 || r->status == 403) {
        k = KERR_UNAUTHORIZED; /* permissions: never "immutable" */
    }
    return kerr_set(err, k, "GCS %s %s: HTTP %ld %s%s%.200s", what, key, r->status, reason,
                    reason[0] && msg[0] ? ": " : "", msg);
}

/* One request to url (BORROWED) with the bearer token; extra headers BORROWED. */
static enum kerr do_req(struct gcs *g, const char *method, const char *url,
                        struct curl_slist *extra, const void *body, size_t body_len, void *dst,
                        size_t dst_len, struct shttp_resp *resp, struct kerr_info *err)
{
    struct curl_slist *h = NULL;
    const char *tok = NULL;
    enum kerr rc = KERR_OK;
    memset(resp, 0, sizeof *resp);
    for (struct curl_slist *s = extra; rc == KERR_OK && s; s = s->next) {
        struct curl_slist *t = curl_slist_append(h, s->data);
        rc = t ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        h = t ? t : h;
    }
    if (rc == KERR_OK && g->authed) {
        rc = gcsauth_token(&g->auth, &g->http, &tok, err);
        char *line = rc ? NULL : buf_dupf(8192, "Authorization: Bearer %s", tok);
        struct curl_slist *t = line ? curl_slist_append(h, line) : NULL;
        rc = rc ? rc : (t ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL));
        h = t ? t : h;
        free(line);
    }
    if (rc == KERR_OK) {
        struct shttp_req rq = { .method = method,
                                .url = url,
                                .headers = h,
                                .body = body,
                                .body_len = body_len,
                                .dst = dst,
                                .dst_len = dst_len,
                                .retries = GCS_RETRIES };
        rc = shttp_perform(&g->http, &rq, resp, err);
        if (rc != KERR_OK) { /* no answer: nothing for the caller to release */
            shttp_resp_release(resp);
            memset(resp, 0, sizeof *resp);
        }
    }
    curl_slist_free_all(h);
    return rc;
}

/* "<endpoint>/storage/v1/b/<bucket>/o/<key escaped>" + rest (may be ""). *out OWNS it. */
static enum kerr obj_url(const struct gcs *g, const char *key, const char *rest, char **out,
                         struct kerr_info *err)
{
    char *ek = NULL;
    enum kerr rc = shttp_escape(key, 0, &ek, err);
    if (rc == KERR_OK) {
        *out = buf_dupf(GCS_URL_MAX, "%s/storage/v1/b/%s/o/%s%s", g->endpoint, g->bucket, ek, rest);
        rc = *out ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    free(ek);
    return rc;
}

/* objects.list: GET .../b/<bucket>/o?prefix=..&pageToken=.. until no nextPageToken. */
static enum kerr g_list(struct ostore *base, const char *prefix, struct ostore_list *out,
                        struct kerr_info *err)
{
    struct gcs *g = (struct gcs *)base;
    char *ep = NULL, *token = NULL;
    enum kerr rc = shttp_escape(prefix, 0, &ep, err);
    while (rc == KERR_OK) {
        struct shttp_resp r = { 0 };
        char *et = NULL;
        rc = token ? shttp_escape(token, 0, &et, err) : KERR_OK;
        char *url = rc ? NULL
                       : buf_dupf(GCS_URL_MAX, "%s/storage/v1/b/%s/o?prefix=%s%s%s", g->endpoint,
                                  g->bucket, ep, et ? "&pageToken=" : "", et ? et : "");
        free(et);
        free(token);
        token = NULL;
        rc = rc ? rc : (url ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL));
        rc = rc ? rc : do_req(g, "GET", url, NULL, NULL, 0, NULL, 0, &r, err);
        free(url);
        if (rc == KERR_OK) {
            rc = r.status == 200 ? gcsjson_list(buf_str(&r.body), r.body.len, out, &token, err)
                                 : status_err("objects.list", prefix, &r, err);
        }
        shttp_resp_release(&r);
        if (token == NULL) {
            break;
        }
    }
    free(token);
    free(ep);
    return rc;
}

/* objects.get (metadata). */
static enum kerr g_head(struct ostore *base, const char *key, struct ostore_obj *out,
                        struct kerr_info *err)
{
    struct gcs *g = (struct gcs *)base;
    struct shttp_resp r;
    char *url = NULL;
    memset(out, 0, sizeof *out);
    enum kerr rc = obj_url(g, key, "", &url, err);
    rc = rc ? rc : do_req(g, "GET", url, NULL, NULL, 0, NULL, 0, &r, err);
    if (rc == KERR_OK) {
        rc = r.status == 200 ? gcsjson_object(buf_str(&r.body), r.body.len, out, err)
                             : status_err("objects.get", key, &r, err);
        shttp_resp_release(&r);
    }
    free(url);
    return rc;
}

/* objects.get alt=media of the listed generation, with a Range. */
static enum kerr g_read(struct ostore *base, const struct ostore_obj *src, int64_t off, void *dst,
                        size_t len, struct kerr_info *err)
{
    struct gcs *g = (struct gcs *)base;
    struct shttp_resp r;
    char range[96], rest[128];
    char *url = NULL;
    snprintf(range, sizeof range, "Range: bytes=%lld-%lld", (long long)off,
             (long long)(off + (int64_t)len - 1));
    snprintf(rest, sizeof rest, "?alt=media%s%.40s", src->version_id ? "&generation=" : "",
             src->version_id ? src->version_id : "");
    struct curl_slist *h = curl_slist_append(NULL, range);
    enum kerr rc = h ? obj_url(g, src->key, rest, &url, err) : kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK) {
        rc = do_req(g, "GET", url, h, NULL, 0, dst, len, &r, err);
        if (rc == KERR_OK && r.status != 206 && r.status != 200) {
            rc = status_err("objects.get", src->key, &r, err);
        }
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    free(url);
    return rc;
}

/* The metadata of an object warden-snapshot creates: the copy mark, and the verified
 * SHA-256 while base.copy_sha256 is set. *out OWNS it. */
static enum kerr create_meta(const struct gcs *g, char **out, struct kerr_info *err)
{
    const char *sha = g->base.copy_sha256;
    *out = buf_dupf(512, "{\"metadata\":{\"" GCS_COPY_MARK "\":\"true\"%s%s%s}}",
                    sha[0] ? ",\"" GCS_SHA256 "\":\"" : "", sha, sha[0] ? "\"" : "");
    return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

static void upload_free(struct gcs_upload *u)
{
    if (u) {
        free(u->key);
        free(u->session);
        free(u);
    }
}

/* A resumable upload session, create-only (ifGenerationMatch=0), with the copy mark. */
static enum kerr g_up_begin(struct ostore *base, const char *key, int64_t size,
                            struct ostore_upload **out, struct kerr_info *err)
{
    struct gcs *g = (struct gcs *)base;
    struct gcs_upload *u = calloc(1, sizeof *u);
    char *body = NULL;
    char *ek = NULL, *url = NULL;
    struct shttp_resp r;
    *out = NULL;
    if (u == NULL || (u->key = strdup(key)) == NULL) {
        upload_free(u);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    u->size = size;
    enum kerr rc = create_meta(g, &body, err);
    rc = rc ? rc : shttp_escape(key, 0, &ek, err);
    if (rc == KERR_OK) {
        url = buf_dupf(GCS_URL_MAX,
                       "%s/upload/storage/v1/b/%s/o?uploadType=resumable&ifGenerationMatch=0"
                       "&name=%s",
                       g->endpoint, g->bucket, ek);
        rc = url ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    struct curl_slist *h = rc ? NULL : curl_slist_append(NULL, "Content-Type: application/json");
    rc = rc ? rc : (h ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL));
    if (rc == KERR_OK) {
        rc = do_req(g, "POST", url, h, body, strlen(body), NULL, 0, &r, err);
        if (rc == KERR_OK && r.status != 200) {
            rc = status_err("resumable upload", key, &r, err);
        } else if (rc == KERR_OK && r.location[0] == '\0') {
            rc = kerr_set(err, KERR_HTTP, "GCS resumable upload %s: no session URI", key);
        } else if (rc == KERR_OK) {
            u->session = strdup(r.location);
            rc = u->session ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        }
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    free(url);
    free(ek);
    free(body);
    if (rc != KERR_OK) {
        upload_free(u);
        return rc;
    }
    *out = (struct ostore_upload *)(void *)u;
    return KERR_OK;
}

/* One chunk PUT to the session with Content-Range; 308 until the last. */
static enum kerr put_chunk(struct gcs *g, struct gcs_upload *u, const void *data, size_t len,
                           struct kerr_info *err)
{
    char range[128];
    struct shttp_resp r;
    if (len == 0) {
        snprintf(range, sizeof range, "Content-Range: bytes */%lld", (long long)u->size);
    } else {
        snprintf(range, sizeof range, "Content-Range: bytes %lld-%lld/%lld", (long long)u->sent,
                 (long long)(u->sent + (int64_t)len - 1), (long long)u->size);
    }
    bool last = u->sent + (int64_t)len >= u->size;
    struct curl_slist *h = curl_slist_append(NULL, range);
    enum kerr rc = h ? do_req(g, "PUT", u->session, h, data, len, NULL, 0, &r, err)
                     : kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK) {
        bool ok = last ? (r.status == 200 || r.status == 201) : r.status == 308;
        rc = ok ? KERR_OK : status_err("upload", u->key, &r, err);
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    u->sent += rc ? 0 : (int64_t)len;
    return rc;
}

static enum kerr g_up_part(struct ostore *base, struct ostore_upload *up, const void *data,
                           size_t len, struct kerr_info *err)
{
    struct gcs_upload *u = (struct gcs_upload *)(void *)up;
    if (u->sent + (int64_t)len > u->size) {
        return kerr_set(err, KERR_INVAL, "GCS upload %s: more than %lld bytes", u->key,
                        (long long)u->size);
    }
    return len ? put_chunk((struct gcs *)base, u, data, len, err) : KERR_OK;
}

/* Cancel the session (DELETE on its URI; the service answers 499). */
static void g_up_abort(struct ostore *base, struct ostore_upload *up)
{
    struct gcs_upload *u = (struct gcs_upload *)(void *)up;
    struct shttp_resp r;
    if (u && u->session && u->sent < u->size) {
        struct kerr_info e;
        if (do_req((struct gcs *)base, "DELETE", u->session, NULL, NULL, 0, NULL, 0, &r, &e) ==
            KERR_OK) {
            shttp_resp_release(&r);
        }
    }
    upload_free(u);
}

/* The last chunk finalises the object; an empty object finalises with "bytes * /0". */
static enum kerr g_up_commit(struct ostore *base, struct ostore_upload *up, struct kerr_info *err)
{
    struct gcs_upload *u = (struct gcs_upload *)(void *)up;
    enum kerr rc = KERR_OK;
    if (u->sent != u->size || u->size == 0) {
        rc = u->sent != u->size
                 ? kerr_set(err, KERR_INVAL, "GCS upload %s: %lld of %lld bytes sent", u->key,
                            (long long)u->sent, (long long)u->size)
                 : put_chunk((struct gcs *)base, u, NULL, 0, err);
    }
    if (rc != KERR_OK) {
        g_up_abort(base, up);
        return rc;
    }
    upload_free(u);
    return KERR_OK;
}

/* objects.rewrite, create-only, with the copy mark replacing the source's metadata. */
static enum kerr g_copy(struct ostore *base, const struct ostore_obj *src, const char *dst,
                        struct kerr_info *err)
{
    struct gcs *g = (struct gcs *)base;
    char *ed = NULL, *url = NULL, *tok = NULL, *body = NULL;
    bool done = false;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    enum kerr rc = h ? create_meta(g, &body, err) : kerr_set(err, KERR_NOMEM, NULL);
    rc = rc ? rc : shttp_escape(dst, 0, &ed, err);
    for (int i = 0; rc == KERR_OK && !done; i++) {
        struct shttp_resp r = { 0 };
        cJSON *root = NULL;
        char *et = NULL;
        char *rest = NULL;
        rc = tok ? shttp_escape(tok, 0, &et, err) : KERR_OK;
        if (rc == KERR_OK) {
            rest = buf_dupf(GCS_URL_MAX, "/rewriteTo/b/%s/o/%s?ifGenerationMatch=0%s%.40s%s%s",
                            g->bucket, ed, src->version_id ? "&sourceGeneration=" : "",
                            src->version_id ? src->version_id : "", et ? "&rewriteToken=" : "",
                            et ? et : "");
            rc = rest ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        }
        free(et);
        free(url);
        url = NULL;
        rc = rc ? rc : obj_url(g, src->key, rest, &url, err);
        free(rest);
        rc = rc ? rc : do_req(g, "POST", url, h, body, strlen(body), NULL, 0, &r, err);
        if (rc == KERR_OK) {
            rc = r.status == 200 ? kjson_parse(buf_str(&r.body), r.body.len, NULL, &root, NULL, err)
                                 : status_err("objects.rewrite", dst, &r, err);
            shttp_resp_release(&r);
        }
        if (rc == KERR_OK) {
            done = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "done"));
            const char *t = kjson_get_str(root, "rewriteToken");
            free(tok);
            tok = t ? strdup(t) : NULL;
            if (!done && tok == NULL) {
                rc = kerr_set(err, KERR_HTTP, "GCS objects.rewrite %s: not done, no token", dst);
            } else if (!done && i + 1 >= GCS_REWRITE_MAX) {
                rc = kerr_set(err, KERR_TIMEOUT, "GCS objects.rewrite %s: not done after %d calls",
                              dst, GCS_REWRITE_MAX);
            }
        }
        cJSON_Delete(root);
    }
    curl_slist_free_all(h);
    free(tok);
    free(url);
    free(ed);
    free(body);
    return rc;
}

/* objects.delete of the generation; 403 retentionPolicyNotMet is the Bucket Lock. */
static enum kerr g_del(struct ostore *base, const struct ostore_obj *obj, struct kerr_info *err)
{
    struct gcs *g = (struct gcs *)base;
    struct shttp_resp r;
    char rest[96];
    char *url = NULL;
    snprintf(rest, sizeof rest, "%s%.40s", obj->version_id ? "?generation=" : "",
             obj->version_id ? obj->version_id : "");
    enum kerr rc = obj_url(g, obj->key, rest, &url, err);
    rc = rc ? rc : do_req(g, "DELETE", url, NULL, NULL, 0, NULL, 0, &r, err);
    if (rc == KERR_OK) {
        rc = r.status == 204 || r.status == 200 ? KERR_OK
                                                : status_err("objects.delete", obj->key, &r, err);
        shttp_resp_release(&r);
    }
    free(url);
    return rc;
}

/* objects.patch of the custom metadata x-etcd-snapshot-exclude=true (allowed under a lock). */
static enum kerr g_exclude(struct ostore *base, const struct ostore_obj *obj, struct kerr_info *err)
{
    static const char body[] = "{\"metadata\":{\"x-etcd-snapshot-exclude\":\"true\"}}";
    struct gcs *g = (struct gcs *)base;
    struct shttp_resp r;
    char *url = NULL;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
    enum kerr rc = h ? obj_url(g, obj->key, "", &url, err) : kerr_set(err, KERR_NOMEM, NULL);
    rc = rc ? rc : do_req(g, "PATCH", url, h, body, sizeof body - 1, NULL, 0, &r, err);
    if (rc == KERR_OK) {
        rc = r.status == 200 ? KERR_OK : status_err("objects.patch", obj->key, &r, err);
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    free(url);
    return rc;
}

static void g_destroy(struct ostore *base)
{
    struct gcs *g = (struct gcs *)base;
    shttp_release(&g->http);
    gcsauth_release(&g->auth);
    free(g->bucket);
    free(g->endpoint);
    free(g);
}

static const struct ostore_ops gcs_ops = {
    .name = "GCS",
    .list = g_list,
    .head = g_head,
    .read = g_read,
    .up_begin = g_up_begin,
    .up_part = g_up_part,
    .up_commit = g_up_commit,
    .up_abort = g_up_abort,
    .copy = g_copy,
    .del = g_del,
    .exclude = g_exclude,
    .destroy = g_destroy,
};

/* The storageAPIEndpoint file beside the credentials file, trimmed; *out OWNS it or NULL. */
static enum kerr endpoint_file(const char *creds, char **out, struct kerr_info *err)
{
    char line[2048];
    const char *slash = strrchr(creds, '/');
    char *path = buf_dupf(4096, "%.*s%sstorageAPIEndpoint", slash ? (int)(slash - creds + 1) : 0,
                          creds, slash ? "" : "");
    *out = NULL;
    if (path == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    FILE *f = fopen(path, "re");
    free(path);
    if (f && fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' ' || line[n - 1] == '\r')) {
            line[--n] = '\0';
        }
        *out = n ? strdup(line) : NULL;
        if (n && *out == NULL) {
            fclose(f);
            return kerr_set(err, KERR_NOMEM, NULL);
        }
    }
    if (f) {
        fclose(f);
    }
    return KERR_OK;
}

/* g->endpoint from the sources in gcs.h's order, without a trailing "/storage/v1/". */
static enum kerr pick_endpoint(struct gcs *g, const char *override, const char *creds,
                               struct kerr_info *err)
{
    char *file = NULL;
    const char *env = getenv("GOOGLE_STORAGE_API_ENDPOINT");
    enum kerr rc = (override && override[0]) || !creds ? KERR_OK : endpoint_file(creds, &file, err);
    const char *ep = override && override[0] ? override
                     : file                  ? file
                     : env && env[0]         ? env
                                             : GCS_DEFAULT_ENDPOINT;
    size_t n = strlen(ep);
    while (n > 0 && ep[n - 1] == '/') {
        n--;
    }
    if (n >= 11 && strncmp(ep + n - 11, "/storage/v1", 11) == 0) {
        n -= 11;
    }
    if (rc == KERR_OK && strncmp(ep, "http://", 7) != 0 && strncmp(ep, "https://", 8) != 0) {
        rc = kerr_set(err, KERR_INVAL, "GCS endpoint %.200s is not an http(s) URL", ep);
    }
    if (rc == KERR_OK) {
        g->endpoint = strndup(ep, n);
        rc = g->endpoint ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    free(file);
    return rc;
}

enum kerr gcs_open(const char *bucket, const char *endpoint_override, struct ostore **out,
                   struct kerr_info *err)
{
    struct gcs *g = calloc(1, sizeof *g);
    *out = NULL;
    if (g == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    g->base.ops = &gcs_ops;
    const char *creds = getenv("GOOGLE_APPLICATION_CREDENTIALS");
    if (creds && creds[0] == '\0') {
        creds = NULL;
    }
    enum kerr rc = shttp_init(&g->http, err);
    rc = rc ? rc : shttp_escape(bucket, 0, &g->bucket, err);
    rc = rc ? rc : pick_endpoint(g, endpoint_override, creds, err);
    if (rc == KERR_OK && creds) {
        rc = gcsauth_read(creds, &g->auth, err);
        g->authed = rc == KERR_OK;
    } else if (rc == KERR_OK && strncmp(g->endpoint, "http://", 7) != 0) {
        rc = kerr_set(err, KERR_INVAL, "GCS: GOOGLE_APPLICATION_CREDENTIALS is not set");
    }
    if (rc != KERR_OK) {
        g_destroy(&g->base);
        return rc;
    }
    *out = &g->base;
    return KERR_OK;
}
