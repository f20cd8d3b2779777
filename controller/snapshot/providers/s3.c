/* s3 - S3 provider: plumbing, listing, reads and deletes (see s3.h; uploads in s3up.c). */
#include "controller/snapshot/providers/s3.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/log.h"
#include "controller/snapshot/providers/s3int.h"
#include "controller/snapshot/providers/s3sign.h"
#include "controller/snapshot/providers/snapxml.h"

enum kerr s3_status_err(const char *what, const char *key, const struct shttp_resp *r,
                        struct kerr_info *err)
{
    char code[64];
    char msg[256];
    snapxml_error(buf_str(&r->body), r->body.len, code, sizeof code, msg, sizeof msg);
    enum kerr k = KERR_HTTP;
    if (r->status == 404) {
        k = KERR_NOTFOUND;
    } else if (r->status == 403) {
        k = KERR_FORBIDDEN;
    } else if (r->status == 412) {
        k = KERR_EXISTS;
    } else if (r->status == 501 || strcmp(code, "NotImplemented") == 0) {
        k = KERR_UNSUPPORTED;
    }
    return kerr_set(err, k, "S3 %s %s: HTTP %ld %s%s%s", what, key, r->status, code[0] ? code : "",
                    msg[0] ? ": " : "", msg);
}

enum kerr s3_url(const struct s3 *s, const char *key, const char *query, char **out,
                 struct kerr_info *err)
{
    char *ek = NULL, *eb = NULL;
    /* the bucket escaped whole: a "/" in it must never become a path segment (another
     * bucket's prefix); ptable_open refuses such a container before this */
    enum kerr rc = shttp_escape(key ? key : "", 1, &ek, err);
    rc = rc ? rc : shttp_escape(s->bucket, 0, &eb, err);
    if (rc != KERR_OK) {
        free(ek);
        return rc;
    }
    const char *q = query && query[0] ? "?" : "";
    if (s->creds.path_style) {
        *out = buf_dupf(16384, "%s/%s/%s%s%s", s->endpoint, eb, ek, q, q[0] ? query : "");
    } else {
        *out = buf_dupf(16384, "%s%s.%s/%s%s%s", s->scheme, eb, s->host, ek, q, q[0] ? query : "");
    }
    free(ek);
    free(eb);
    return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, "URL too long");
}

/* The headers every request carries, plus SSE-C ones when sse (and copy-source ones). */
enum kerr s3_headers(const struct s3 *s, int sse, int copy_source, struct curl_slist **out,
                     struct kerr_info *err)
{
    char line[256];
    struct curl_slist *h = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    for (int pass = 0; h && s->sse_key_b64 && pass < 2; pass++) {
        const char *p =
            pass == 0 ? "x-amz-server-side-encryption" : "x-amz-copy-source-server-side-encryption";
        if ((pass == 0 && !sse) || (pass == 1 && !copy_source)) {
            continue;
        }
        snprintf(line, sizeof line, "%s-customer-algorithm: %s", p, s->creds.sse_alg);
        h = curl_slist_append(h, line);
        snprintf(line, sizeof line, "%s-customer-key: %s", p, s->sse_key_b64);
        h = h ? curl_slist_append(h, line) : NULL;
        snprintf(line, sizeof line, "%s-customer-key-MD5: %s", p, s->sse_key_md5_b64);
        h = h ? curl_slist_append(h, line) : NULL;
    }
    *out = h;
    return h ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

enum kerr s3_do(struct s3 *s, const char *method, const char *key, const char *query,
                struct curl_slist *extra, const void *body, size_t body_len,
                struct shttp_resp *resp, struct kerr_info *err)
{
    struct shttp_req rq = { .method = method,
                            .headers = extra,
                            .body = body,
                            .body_len = body_len,
                            .retries = S3_RETRIES };
    char *url = NULL;
    struct curl_slist *base = NULL;
    enum kerr rc = s3_url(s, key, query, &url, err);
    if (rc == KERR_OK && extra == NULL) {
        rc = s3_headers(s, 0, 0, &base, err);
        rq.headers = base;
    }
    if (rc != KERR_OK) {
        free(url);
        memset(resp, 0, sizeof *resp);
        return rc;
    }
    rq.url = url;
    struct curl_slist *tok = NULL;
    rc = s3_auth(s, (struct curl_slist *)rq.headers, &tok, err);
    if (rc != KERR_OK) {
        curl_slist_free_all(base);
        free(url);
        memset(resp, 0, sizeof *resp);
        return rc;
    }
    rq.headers = tok ? tok : rq.headers;
    rc = s3sign_perform(&s->http, &rq, &s->creds, resp, err);
    s->kms_seen = s->kms_seen || (rc == KERR_OK && s3_kms(resp));
    curl_slist_free_all(tok);
    curl_slist_free_all(base);
    free(url);
    return rc;
}

/* Tags of one object: excluded when x-etcd-snapshot-exclude=true. Missing tagging support
 * counts as "no tag". */
static enum kerr get_excluded(struct s3 *s, const char *key, const char *version, bool *out,
                              struct kerr_info *err)
{
    struct shttp_resp r;
    struct curl_slist *h = NULL;
    char *q = NULL;
    char *ev = NULL;
    *out = false;
    enum kerr rc = version ? shttp_escape(version, 0, &ev, err) : KERR_OK;
    q = rc ? NULL : buf_dupf(1024, "tagging=%s%s", ev ? "&versionId=" : "", ev ? ev : "");
    rc = q ? s3_headers(s, 0, 0, &h, err) : kerr_set(err, KERR_NOMEM, NULL);
    rc = rc ? rc : s3_do(s, "GET", key, q, h, NULL, 0, &r, err);
    if (rc == KERR_OK && r.status == 200) {
        rc = snapxml_s3_tagging(buf_str(&r.body), r.body.len, out, err);
    } else if (rc == KERR_OK && r.status != 404 && r.status != 501 && r.status != 405) {
        rc = s3_status_err("GetObjectTagging", key, &r, err);
    }
    if (rc == KERR_OK || rc == KERR_PARSE) {
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    free(q);
    free(ev);
    return rc;
}

/* Pages of one listing call into out. */
static enum kerr list_pages(struct s3 *s, const char *prefix, bool versions,
                            struct ostore_list *out, struct kerr_info *err)
{
    struct snapxml_page page = { 0 };
    char *ep = NULL;
    char *tok = NULL;
    char *vtok = NULL;
    enum kerr rc = shttp_escape(prefix, 0, &ep, err);
    for (int n = 0; rc == KERR_OK; n++) {
        struct shttp_resp r;
        char *q;
        if (versions) {
            q = buf_dupf(4096, "%s%s%sprefix=%s%s%s&versions=", tok ? "key-marker=" : "",
                         tok ? tok : "", tok ? "&" : "", ep, vtok ? "&version-id-marker=" : "",
                         vtok ? vtok : "");
        } else {
            q = buf_dupf(4096, "%s%s%slist-type=2&prefix=%s", tok ? "continuation-token=" : "",
                         tok ? tok : "", tok ? "&" : "", ep);
        }
        rc = q ? s3_do(s, "GET", "", q, NULL, NULL, 0, &r, err) : kerr_set(err, KERR_NOMEM, NULL);
        free(q);
        if (rc == KERR_OK && r.status != 200) {
            rc = s3_status_err(versions ? "ListObjectVersions" : "ListObjectsV2", s->bucket, &r,
                               err);
        } else if (rc == KERR_OK) {
            rc = (versions ? snapxml_s3_versions : snapxml_s3_list)(buf_str(&r.body), r.body.len,
                                                                    out, &page, err);
        }
        shttp_resp_release(&r);
        free(tok);
        free(vtok);
        tok = vtok = NULL;
        if (rc != KERR_OK || !page.truncated) {
            break;
        }
        rc = shttp_escape(page.next, 0, &tok, err);
        if (rc == KERR_OK && page.next_version) {
            rc = shttp_escape(page.next_version, 0, &vtok, err);
        }
        snapxml_page_release(&page);
    }
    snapxml_page_release(&page);
    free(tok);
    free(vtok);
    free(ep);
    return rc;
}

/* GetBucketVersioning: *on when Status is Enabled (a store without the call: off). */
static enum kerr versioning_enabled(struct s3 *s, bool *on, struct kerr_info *err)
{
    struct shttp_resp r;
    char *status = NULL;
    *on = false;
    enum kerr rc = s3_do(s, "GET", "", "versioning=", NULL, NULL, 0, &r, err);
    if (rc != KERR_OK) {
        return rc;
    }
    if (r.status == 200) {
        *on = snapxml_find(buf_str(&r.body), r.body.len, "Status", &status, NULL) == KERR_OK &&
              strcmp(status, "Enabled") == 0;
    } else if (r.status != 404 && r.status != 405 && r.status != 501) {
        rc = s3_status_err("GetBucketVersioning", s->bucket, &r, err);
    }
    free(status);
    shttp_resp_release(&r);
    return rc;
}

/*
 * A versioned bucket as etcd-backup-restore lists it: every key with its oldest version
 * (LastModified; listed newest first, so a tie goes to the later entry), including keys
 * under a delete marker, except those whose oldest version is tagged
 * x-etcd-snapshot-exclude=true (kept here with excluded set, never chosen). The versions
 * of one key come together (the listing is sorted by key).
 */
static enum kerr list_versioned(struct s3 *s, const char *prefix, struct ostore_list *out,
                                struct kerr_info *err)
{
    struct ostore_list v = { 0 };
    enum kerr rc = list_pages(s, prefix, true, &v, err);
    for (size_t i = 0; rc == KERR_OK && i < v.n;) {
        size_t end = i;
        const struct ostore_obj *old = NULL;
        bool marker = false;
        for (; end < v.n && strcmp(v.v[end].key, v.v[i].key) == 0; end++) {
            if (strcmp(v.v[end].etag, "delete-marker") == 0) {
                marker = true;
            } else if (old == NULL || v.v[end].mtime <= old->mtime) {
                old = &v.v[end];
            }
        }
        if (old != NULL) {
            bool ex = false;
            rc = marker ? get_excluded(s, old->key, old->version_id, &ex, err) : KERR_OK;
            struct ostore_obj o = *old;
            o.excluded = ex;
            rc = rc ? rc : ostore_list_add(out, &o, err);
        }
        i = end;
    }
    ostore_list_release(&v);
    return rc;
}

/*
 * etcd-backup-restore's listing: GetBucketVersioning, then the versioned listing above,
 * or ListObjectsV2 where exclude tags are not read at all (as upstream ignores them there).
 */
static enum kerr s_list(struct ostore *base, const char *prefix, struct ostore_list *out,
                        struct kerr_info *err)
{
    struct s3 *s = (struct s3 *)base;
    size_t first = out->n;
    bool versioned = false;
    enum kerr rc = versioning_enabled(s, &versioned, err);
    if (rc == KERR_OK) {
        rc = versioned ? list_versioned(s, prefix, out, err)
                       : list_pages(s, prefix, false, out, err);
    }
    /* A listed ETag says nothing about SSE-KMS or SSE-C: never an MD5 (HEAD tells). On a
     * versioned bucket, a full snapshot's retain-until date is its version's retention. */
    for (size_t i = first; rc == KERR_OK && i < out->n; i++) {
        struct ostore_obj *o = &out->v[i];
        o->md5[0] = '\0';
        if (versioned && o->version_id && strstr(o->key, "/Full-") != NULL) {
            rc = s3_retain_until(s, o, &o->immutable_until, err);
        }
    }
    return rc;
}

static enum kerr s_head(struct ostore *base, const char *key, struct ostore_obj *out,
                        struct kerr_info *err)
{
    struct s3 *s = (struct s3 *)base;
    struct shttp_resp r;
    struct curl_slist *h = NULL;
    memset(out, 0, sizeof *out);
    enum kerr rc = s3_headers(s, 1, 0, &h, err);
    rc = rc ? rc : s3_do(s, "HEAD", key, NULL, h, NULL, 0, &r, err);
    curl_slist_free_all(h);
    if (rc == KERR_OK && r.status != 200) {
        rc = s3_status_err("HeadObject", key, &r, err);
    }
    if (rc == KERR_OK) {
        struct ostore_obj tmp = { 0 };
        out->size = r.content_length;
        out->mtime = (int64_t)curl_getdate(r.last_modified, NULL);
        s3_set_etag(out, r.etag, s->sse_key_b64 != NULL || s3_kms(&r));
        out->own_copy = strcmp(r.copy_mark, "true") == 0;
        snprintf(out->sha256, sizeof out->sha256, "%s", r.sha256);
        (void)tmp;
        out->key = strdup(key);
        out->version_id = r.version_id[0] ? strdup(r.version_id) : NULL;
        rc = out->key ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    shttp_resp_release(&r);
    return rc;
}

bool s3_kms(const struct shttp_resp *r)
{
    return strncmp(r->sse, "aws:kms", 7) == 0;
}

void s3_set_etag(struct ostore_obj *o, const char *raw, bool sse)
{
    size_t n = strlen(raw);
    if (n >= 2 && raw[0] == '"' && raw[n - 1] == '"') {
        raw++;
        n -= 2;
    }
    snprintf(o->etag, sizeof o->etag, "%.*s", (int)(n < sizeof o->etag ? n : 0), raw);
    o->md5[0] = '\0';
    if (!sse && n == 32 && strspn(o->etag, "0123456789abcdef") == 32) {
        memcpy(o->md5, o->etag, 33);
    }
}

static enum kerr s_read(struct ostore *base, const struct ostore_obj *src, int64_t off, void *dst,
                        size_t len, struct kerr_info *err)
{
    struct s3 *s = (struct s3 *)base;
    struct shttp_resp r;
    struct curl_slist *h = NULL;
    char range[96];
    char *url = NULL;
    char *q = NULL;
    char *ev = NULL;
    snprintf(range, sizeof range, "Range: bytes=%lld-%lld", (long long)off,
             (long long)(off + (int64_t)len - 1));
    enum kerr rc = s3_headers(s, 1, 0, &h, err);
    struct curl_slist *h2 = h ? curl_slist_append(h, range) : NULL;
    rc = rc ? rc : (h2 ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL));
    if (rc == KERR_OK && src->version_id) {
        rc = shttp_escape(src->version_id, 0, &ev, err);
        q = ev ? buf_dupf(1024, "versionId=%s", ev) : NULL;
    }
    rc = rc ? rc : s3_url(s, src->key, q, &url, err);
    struct curl_slist *tok = NULL;
    rc = rc ? rc : s3_auth(s, h, &tok, err);
    if (rc == KERR_OK) {
        struct shttp_req rq = { .method = "GET",
                                .url = url,
                                .headers = tok ? tok : h,
                                .dst = dst,
                                .dst_len = len,
                                .retries = S3_RETRIES };
        rc = s3sign_perform(&s->http, &rq, &s->creds, &r, err);
        if (rc == KERR_OK && r.status != 206 &&
            !(r.status == 200 && off == 0 && (int64_t)len == src->size)) {
            rc = s3_status_err("GetObject", src->key, &r, err);
        }
        shttp_resp_release(&r);
    }
    curl_slist_free_all(tok);
    curl_slist_free_all(h);
    free(url);
    free(q);
    free(ev);
    return rc;
}

static enum kerr s_del(struct ostore *base, const struct ostore_obj *obj, struct kerr_info *err)
{
    struct s3 *s = (struct s3 *)base;
    struct shttp_resp r;
    char *ev = NULL;
    char *q = NULL;
    enum kerr rc = KERR_OK;
    if (obj->version_id) {
        rc = shttp_escape(obj->version_id, 0, &ev, err);
        q = ev ? buf_dupf(1024, "versionId=%s", ev) : NULL;
    }
    struct curl_slist *h = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    rc = rc ? rc : s3_do(s, "DELETE", obj->key, q, h, NULL, 0, &r, err);
    if (rc == KERR_OK && r.status != 204 && r.status != 200) {
        rc = s3_status_err("DeleteObject", obj->key, &r, err);
        rc = rc == KERR_FORBIDDEN ? s3_delete_refused(s, obj, err) : rc;
    }
    if (rc == KERR_OK || r.status) {
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    free(ev);
    free(q);
    return rc;
}

static void s_destroy(struct ostore *base)
{
    struct s3 *s = (struct s3 *)base;
    shttp_release(&s->http);
    screds_s3_release(&s->creds);
    free(s->endpoint);
    free(s->host);
    free(s->sse_key_b64);
    free(s->sse_key_md5_b64);
    free(s->bucket);
    free(s);
}

static const struct ostore_ops s3_ops = {
    .name = "S3",
    .list = s_list,
    .head = s_head,
    .read = s_read,
    .up_begin = s3_up_begin,
    .up_part = s3_up_part,
    .up_commit = s3_up_commit,
    .up_abort = s3_up_abort,
    .copy = s3_copy,
    .del = s_del,
    .exclude = s3_exclude,
    .extend = s3_extend,
    .destroy = s_destroy,
};

static enum kerr setup_sse(struct s3 *s, struct kerr_info *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned ml = 0;
    if (s->creds.sse_key == NULL) {
        return KERR_OK;
    }
    size_t kl = strlen(s->creds.sse_key);
    if (EVP_Digest(s->creds.sse_key, kl, md, &ml, EVP_md5(), NULL) != 1) {
        return kerr_set(err, KERR_INTERNAL, "MD5 of the SSE-C key failed");
    }
    enum kerr rc = crypto_b64_encode(s->creds.sse_key, kl, &s->sse_key_b64, NULL, err);
    return rc ? rc : crypto_b64_encode(md, ml, &s->sse_key_md5_b64, NULL, err);
}

static enum kerr setup_curl(struct s3 *s, struct kerr_info *err)
{
    char sig[160];
    struct curl_blob ca;
    CURL *c = s->http.curl;
    snprintf(sig, sizeof sig, "aws:amz:%.64s:s3", s->creds.region);
    if (curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sig) != CURLE_OK) {
        return kerr_set(err, KERR_UNSUPPORTED, "libcurl without CURLOPT_AWS_SIGV4");
    }
    if (s->creds.ca_pem) {
        ca.data = s->creds.ca_pem;
        ca.len = strlen(s->creds.ca_pem);
        ca.flags = CURL_BLOB_COPY;
        curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
    }
    if (s->creds.insecure) {
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    return KERR_OK;
}

static enum kerr setup_endpoint(struct s3 *s, const char *override, struct kerr_info *err)
{
    const char *ep = override && override[0] ? override : s->creds.endpoint;
    char *def = NULL;
    if (override && override[0] && s->creds.endpoint && s->creds.endpoint[0]) {
        log_info("the endpoint of --store-endpoint-override wins over the credentials' endpoint",
                 "endpoint", override);
    }
    if (ep == NULL || ep[0] == '\0') {
        def = buf_dupf(256, "https://s3.%s.amazonaws.com", s->creds.region);
        ep = def;
    }
    if (ep == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    size_t n = strlen(ep);
    while (n > 0 && ep[n - 1] == '/') {
        n--;
    }
    s->endpoint = strndup(ep, n);
    s->scheme = strncmp(ep, "https://", 8) == 0 ? "https://" : "http://";
    s->host = s->endpoint ? strdup(s->endpoint + strlen(s->scheme)) : NULL;
    free(def);
    return (s->endpoint && s->host) ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

enum kerr s3_open(const char *bucket, const char *endpoint_override, struct ostore **out,
                  struct kerr_info *err)
{
    return s3_open_with(bucket, endpoint_override, screds_s3_from_env, out, err);
}

enum kerr s3_open_with(const char *bucket, const char *endpoint_override,
                       enum kerr (*creds)(struct screds_s3 *, struct kerr_info *),
                       struct ostore **out, struct kerr_info *err)
{
    struct s3 *s = calloc(1, sizeof *s);
    enum kerr rc = KERR_OK;
    *out = NULL;
    if (s == NULL || (s->bucket = strdup(bucket)) == NULL) {
        free(s);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    s->base.ops = &s3_ops;
    rc = creds(&s->creds, err);
    rc = rc ? rc : shttp_init(&s->http, err);
    rc = rc ? rc : setup_endpoint(s, endpoint_override, err);
    rc = rc ? rc : setup_sse(s, err);
    rc = rc ? rc : setup_curl(s, err);
    rc = rc ? rc : s3_auth_init(s, err);
    if (rc != KERR_OK) {
        s_destroy(&s->base);
        return rc;
    }
    *out = &s->base;
    return KERR_OK;
}
