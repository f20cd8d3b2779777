/* s3up - S3 uploads (PutObject, multipart) and server-side copies (see s3.h). */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/log.h"
#include "controller/snapshot/providers/s3int.h"
#include "controller/snapshot/providers/snapxml.h"

struct s3_upload {
    char *key;
    int64_t size;
    bool multipart;
    bool sent_single;
    char *upload_id; /* escaped for the query */
    int parts;
    struct buf complete;    /* the CompleteMultipartUpload body */
    EVP_MD_CTX *md_of_md5s; /* for the expected multipart ETag */
};

static void upload_free(struct s3_upload *u)
{
    if (u) {
        free(u->key);
        free(u->upload_id);
        buf_release(&u->complete);
        EVP_MD_CTX_free(u->md_of_md5s);
        free(u);
    }
}

/* Append the verified snapshot's digest (OSTORE_SHA256_S3) when one is being recorded;
 * false when out of memory. */
static bool sha256_meta(const struct s3 *s, struct curl_slist *h)
{
    char line[128];
    if (s->base.copy_sha256[0] == '\0') {
        return true;
    }
    snprintf(line, sizeof line, OSTORE_SHA256_S3 ": %s", s->base.copy_sha256);
    return curl_slist_append(h, line) != NULL;
}

/* POST ?uploads=: a new multipart upload of key. */
static enum kerr create_multipart(struct s3 *s, struct s3_upload *u, struct kerr_info *err)
{
    struct shttp_resp r;
    struct curl_slist *h = NULL;
    char *id = NULL;
    enum kerr rc = s3_headers(s, 1, 0, &h, err);
    if (rc == KERR_OK &&
        (curl_slist_append(h, OSTORE_COPY_MARK_S3 ": true") == NULL || !sha256_meta(s, h))) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : s3_do(s, "POST", u->key, "uploads=", h, NULL, 0, &r, err);
    curl_slist_free_all(h);
    if (rc != KERR_OK) {
        return rc;
    }
    if (r.status != 200) {
        rc = s3_status_err("CreateMultipartUpload", u->key, &r, err);
    } else {
        rc = snapxml_find(buf_str(&r.body), r.body.len, "UploadId", &id, err);
    }
    shttp_resp_release(&r);
    rc = rc ? rc : shttp_escape(id, 0, &u->upload_id, err);
    free(id);
    if (rc == KERR_OK) {
        u->md_of_md5s = EVP_MD_CTX_new();
        if (u->md_of_md5s == NULL || EVP_DigestInit_ex(u->md_of_md5s, EVP_md5(), NULL) != 1) {
            rc = kerr_set(err, KERR_NOMEM, NULL);
        }
    }
    return rc;
}

enum kerr s3_up_begin(struct ostore *base, const char *key, int64_t size,
                      struct ostore_upload **out, struct kerr_info *err)
{
    struct s3 *s = (struct s3 *)base;
    struct s3_upload *u = calloc(1, sizeof *u);
    *out = NULL;
    if (u == NULL || (u->key = strdup(key)) == NULL) {
        free(u);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    buf_init(&u->complete, 2u * 1024u * 1024u);
    u->size = size;
    u->multipart = size > (int64_t)base->part_size;
    if (u->multipart &&
        (size + (int64_t)base->part_size - 1) / (int64_t)base->part_size > S3_MAX_PARTS) {
        upload_free(u);
        return kerr_set(err, KERR_TOOBIG, "%s needs more than %d parts of %zu bytes", key,
                        S3_MAX_PARTS, base->part_size);
    }
    enum kerr rc = u->multipart ? create_multipart(s, u, err) : KERR_OK;
    if (rc != KERR_OK) {
        upload_free(u);
        return rc;
    }
    *out = (struct ostore_upload *)(void *)u;
    return KERR_OK;
}

/* Content-MD5 header line and the raw digest of data. */
static enum kerr md5_header(const void *data, size_t len, unsigned char md[16], char line[64],
                            struct kerr_info *err)
{
    unsigned ml = 0;
    char *b64 = NULL;
    if (EVP_Digest(data, len, md, &ml, EVP_md5(), NULL) != 1 || ml != 16) {
        return kerr_set(err, KERR_INTERNAL, "MD5 failed");
    }
    enum kerr rc = crypto_b64_encode(md, 16, &b64, NULL, err);
    if (rc == KERR_OK) {
        snprintf(line, 64, "Content-MD5: %s", b64);
    }
    free(b64);
    return rc;
}

static void hex16(const unsigned char *md, char out[33])
{
    for (int i = 0; i < 16; i++) {
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    }
}

/* One PUT of data (a whole object or one part) with Content-MD5; *etag gets the answer's. */
static enum kerr put_bytes(struct s3 *s, struct s3_upload *u, const char *query, int create_only,
                           const void *data, size_t len, unsigned char md[16],
                           struct ostore_obj *etag, struct kerr_info *err)
{
    char line[64];
    struct shttp_resp r;
    struct curl_slist *h = NULL;
    enum kerr rc = md5_header(data, len, md, line, err);
    rc = rc ? rc : s3_headers(s, 1, 0, &h, err);
    if (rc == KERR_OK &&
        (curl_slist_append(h, line) == NULL ||
         (create_only &&
          (curl_slist_append(h, "If-None-Match: *") == NULL ||
           curl_slist_append(h, OSTORE_COPY_MARK_S3 ": true") == NULL || !sha256_meta(s, h))))) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : s3_do(s, "PUT", u->key, query, h, data, len, &r, err);
    curl_slist_free_all(h);
    if (rc != KERR_OK) {
        return rc;
    }
    if (r.status != 200) {
        rc = s3_status_err(query ? "UploadPart" : "PutObject", u->key, &r, err);
    } else {
        s3_set_etag(etag, r.etag, s->sse_key_b64 != NULL || s3_kms(&r));
    }
    shttp_resp_release(&r);
    return rc;
}

enum kerr s3_up_part(struct ostore *base, struct ostore_upload *up, const void *data, size_t len,
                     struct kerr_info *err)
{
    struct s3 *s = (struct s3 *)base;
    struct s3_upload *u = (struct s3_upload *)(void *)up;
    struct ostore_obj et = { 0 };
    unsigned char md[16];
    char hex[33];
    if (!u->multipart) {
        if (u->sent_single) {
            return kerr_set(err, KERR_INTERNAL, "second part of a single-part upload");
        }
        u->sent_single = true;
        enum kerr rc = put_bytes(s, u, NULL, 1, data, len, md, &et, err);
        hex16(md, hex);
        if (rc == KERR_OK && et.md5[0] && strcmp(et.md5, hex) != 0) {
            rc = kerr_set(err, KERR_IO, "S3 PutObject %s: ETag %s, sent MD5 %s", u->key, et.etag,
                          hex);
        }
        return rc;
    }
    char *q = buf_dupf(1024, "partNumber=%d&uploadId=%s", u->parts + 1, u->upload_id);
    enum kerr rc =
        q ? put_bytes(s, u, q, 0, data, len, md, &et, err) : kerr_set(err, KERR_NOMEM, NULL);
    free(q);
    if (rc != KERR_OK) {
        return rc;
    }
    u->parts++;
    EVP_DigestUpdate(u->md_of_md5s, md, 16);
    return buf_appendf(&u->complete, "<Part><PartNumber>%d</PartNumber><ETag>\"%s\"</ETag></Part>",
                       u->parts, et.etag) == KERR_OK
               ? KERR_OK
               : kerr_set(err, KERR_TOOBIG, "too many parts");
}

/* POST ?uploadId=: assemble the parts; the answer's ETag must be MD5(part MD5s)-N. */
static enum kerr complete(struct s3 *s, struct s3_upload *u, struct kerr_info *err)
{
    struct shttp_resp r;
    struct curl_slist *h = NULL;
    struct buf body;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned ml = 0;
    char want[48];
    char *got = NULL;
    char *q = buf_dupf(1024, "uploadId=%s", u->upload_id);
    buf_init(&body, 4u * 1024u * 1024u);
    enum kerr rc = q ? s3_headers(s, 0, 0, &h, err) : kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK &&
        (buf_appendf(&body, "<CompleteMultipartUpload>%s</CompleteMultipartUpload>",
                     buf_str(&u->complete)) != KERR_OK ||
         curl_slist_append(h, "If-None-Match: *") == NULL)) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : s3_do(s, "POST", u->key, q, h, body.data, body.len, &r, err);
    if (rc == KERR_OK) {
        rc = r.status == 200 ? snapxml_find(buf_str(&r.body), r.body.len, "ETag", &got, err)
                             : s3_status_err("CompleteMultipartUpload", u->key, &r, err);
        if (rc == KERR_NOTFOUND) { /* 200 with an <Error> body */
            rc = s3_status_err("CompleteMultipartUpload", u->key, &r, err);
            rc = rc == KERR_NOTFOUND ? KERR_HTTP : rc;
        }
        shttp_resp_release(&r);
    }
    if (rc == KERR_OK && EVP_DigestFinal_ex(u->md_of_md5s, md, &ml) == 1 && ml == 16) {
        struct ostore_obj et = { 0 };
        hex16(md, want);
        snprintf(want + 32, sizeof want - 32, "-%d", u->parts);
        s3_set_etag(&et, got, true);
        /* AWS answers MD5(part MD5s)-N (not under SSE-C or SSE-KMS); stores answering a
         * plain MD5 are checked by the caller's verification against the streamed bytes,
         * which also drops an object assembled wrong. */
        if (s->sse_key_b64 == NULL && !s->kms_seen && strchr(et.etag, '-') &&
            strcmp(et.etag, want) != 0) {
            rc = kerr_set(err, KERR_IO, "S3 CompleteMultipartUpload %s: ETag %s, expected %s",
                          u->key, et.etag, want);
        }
    }
    free(got);
    free(q);
    buf_release(&body);
    curl_slist_free_all(h);
    return rc;
}

void s3_up_abort(struct ostore *base, struct ostore_upload *up)
{
    struct s3 *s = (struct s3 *)base;
    struct s3_upload *u = (struct s3_upload *)(void *)up;
    struct shttp_resp r;
    struct kerr_info e = { 0 };
    if (u && u->upload_id) {
        char *q = buf_dupf(1024, "uploadId=%s", u->upload_id);
        struct curl_slist *h = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
        if (q && h && s3_do(s, "DELETE", u->key, q, h, NULL, 0, &r, &e) == KERR_OK) {
            if (r.status != 204 && r.status != 200 && r.status != 404) {
                s3_status_err("AbortMultipartUpload", u->key, &r, &e);
                log_warn("cannot abort the multipart upload (parts stay invisible until the "
                         "bucket's lifecycle removes them)",
                         "key", u->key, "error", e.msg);
            }
        } else {
            log_warn("cannot abort the multipart upload", "key", u->key, "error", e.msg);
        }
        shttp_resp_release(&r);
        curl_slist_free_all(h);
        free(q);
    }
    upload_free(u);
}

enum kerr s3_up_commit(struct ostore *base, struct ostore_upload *up, struct kerr_info *err)
{
    struct s3 *s = (struct s3 *)base;
    struct s3_upload *u = (struct s3_upload *)(void *)up;
    enum kerr rc = KERR_OK;
    if (!u->multipart && !u->sent_single) {
        rc = s3_up_part(base, up, "", 0, err);
    } else if (u->multipart) {
        rc = complete(s, u, err);
    }
    if (rc != KERR_OK && u->multipart) {
        s3_up_abort(base, up);
        return rc;
    }
    upload_free(u);
    return rc;
}

/* "x-amz-copy-source: /bucket/key[?versionId=v]" */
static enum kerr copy_source(const struct s3 *s, const struct ostore_obj *src, char **line,
                             struct kerr_info *err)
{
    char *ek = NULL;
    char *ev = NULL;
    enum kerr rc = shttp_escape(src->key, 1, &ek, err);
    rc = (rc == KERR_OK && src->version_id) ? shttp_escape(src->version_id, 0, &ev, err) : rc;
    if (rc == KERR_OK) {
        *line = buf_dupf(16384, "x-amz-copy-source: /%s/%s%s%s", s->bucket, ek,
                         ev ? "?versionId=" : "", ev ? ev : "");
        rc = *line ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    free(ek);
    free(ev);
    return rc;
}

/* One CopyObject or UploadPartCopy (range != NULL); *etag gets the result's ETag. */
static enum kerr copy_call(struct s3 *s, const struct ostore_obj *src, const char *dst,
                           const char *query, const char *range, char **etag, struct kerr_info *err)
{
    struct shttp_resp r;
    struct curl_slist *h = NULL;
    char *src_line = NULL;
    *etag = NULL;
    enum kerr rc = s3_headers(s, 1, 1, &h, err);
    rc = rc ? rc : copy_source(s, src, &src_line, err);
    /* CopyObject: create-only where the store honours If-None-Match (AWS), and REPLACE
     * with warden-snapshot's mark, so the copy also takes the bucket's default retention
     * from now (Ceph's COPY directive keeps the source's retain-until date). */
    if (rc == KERR_OK &&
        (curl_slist_append(h, src_line) == NULL || (range && curl_slist_append(h, range) == NULL) ||
         (!range && curl_slist_append(h, "If-None-Match: *") == NULL) ||
         (!range && curl_slist_append(h, "x-amz-metadata-directive: REPLACE") == NULL) ||
         (!range && curl_slist_append(h, OSTORE_COPY_MARK_S3 ": true") == NULL) ||
         (!range && !sha256_meta(s, h)))) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : s3_do(s, "PUT", dst, query, h, NULL, 0, &r, err);
    if (rc == KERR_OK) {
        const char *what = range ? "UploadPartCopy" : "CopyObject";
        rc = r.status == 200 ? snapxml_find(buf_str(&r.body), r.body.len, "ETag", etag, err)
                             : s3_status_err(what, dst, &r, err);
        if (rc == KERR_NOTFOUND) { /* 200 with an <Error> body */
            rc = s3_status_err(what, dst, &r, err);
            rc = rc == KERR_NOTFOUND ? KERR_HTTP : rc;
        }
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    free(src_line);
    return rc;
}

static enum kerr copy_multipart(struct s3 *s, const struct ostore_obj *src, const char *dst,
                                struct kerr_info *err)
{
    struct ostore_upload *up = NULL;
    int64_t part = (int64_t)s->base.part_size;
    if ((src->size + part - 1) / part > S3_MAX_PARTS) {
        part = (src->size + S3_MAX_PARTS - 1) / S3_MAX_PARTS;
    }
    enum kerr rc = s3_up_begin(&s->base, dst, src->size + (int64_t)s->base.part_size + 1, &up, err);
    struct s3_upload *u = (struct s3_upload *)(void *)up;
    for (int64_t off = 0; rc == KERR_OK && off < src->size; off += part) {
        int64_t end = off + part < src->size ? off + part : src->size;
        char range[96];
        char *etag = NULL;
        unsigned char md[16] = { 0 };
        char *q = buf_dupf(1024, "partNumber=%d&uploadId=%s", u->parts + 1, u->upload_id);
        snprintf(range, sizeof range, "x-amz-copy-source-range: bytes=%lld-%lld", (long long)off,
                 (long long)end - 1);
        rc = q ? copy_call(s, src, dst, q, range, &etag, err) : kerr_set(err, KERR_NOMEM, NULL);
        free(q);
        struct ostore_obj et = { 0 };
        if (rc == KERR_OK) {
            s3_set_etag(&et, etag, false);
            u->parts++;
            for (int i = 0; i < 16 && et.md5[0]; i++) {
                unsigned v = 0;
                sscanf(et.md5 + 2 * i, "%2x", &v);
                md[i] = (unsigned char)v;
            }
            EVP_DigestUpdate(u->md_of_md5s, md, 16);
            rc = buf_appendf(&u->complete,
                             "<Part><PartNumber>%d</PartNumber><ETag>\"%s\"</ETag></Part>",
                             u->parts, et.etag) == KERR_OK
                     ? KERR_OK
                     : kerr_set(err, KERR_TOOBIG, "too many parts");
        }
        free(etag);
    }
    if (up && rc != KERR_OK) {
        s3_up_abort(&s->base, up);
        return rc;
    }
    return up ? s3_up_commit(&s->base, up, err) : rc;
}

enum kerr s3_copy(struct ostore *base, const struct ostore_obj *src, const char *dst,
                  struct kerr_info *err)
{
    struct s3 *s = (struct s3 *)base;
    char *etag = NULL;
    if (src->size > base->copy_part_threshold) {
        return copy_multipart(s, src, dst, err);
    }
    enum kerr rc = copy_call(s, src, dst, NULL, NULL, &etag, err);
    free(etag);
    return rc;
}
