/* abs - Azure Blob Storage provider (see abs.h). */
#include "controller/snapshot/providers/abs.h"
#include "controller/snapshot/providers/absint.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/snapshot/providers/screds.h"
#include "controller/snapshot/providers/shttp.h"
#include "controller/snapshot/providers/snapxml.h"

#define ABS_RETRIES      4
#define ABS_MAX_BLOCKS   50000
#define ABS_COPY_POLL_MS 200

struct abs_upload {
    char *key;
    bool blocks;
    bool sent_single;
    int n;
    struct buf list; /* the Put Block List body */
    EVP_MD_CTX *md;  /* MD5 of the whole blob, for x-ms-blob-content-md5 */
};

enum kerr abs_status_err(const char *what, const char *key, const struct shttp_resp *r,
                         struct kerr_info *err)
{
    char code[64];
    char msg[256];
    snapxml_error(buf_str(&r->body), r->body.len, code, sizeof code, msg, sizeof msg);
    if (code[0] == '\0') {
        snprintf(code, sizeof code, "%s", r->error_code);
    }
    enum kerr k = KERR_HTTP;
    if (r->status == 404) {
        k = KERR_NOTFOUND;
    } else if (r->status == 409 && strncmp(code, "BlobImmutableDueTo", 18) == 0) {
        k = KERR_FORBIDDEN;
    } else if (r->status == 409 || r->status == 412) {
        k = KERR_EXISTS;
    } else if (r->status == 403) {
        k = KERR_UNAUTHORIZED; /* AuthorizationPermissionMismatch & co: never "immutable" */
    } else if (r->status == 501) {
        k = KERR_UNSUPPORTED;
    }
    return kerr_set(err, k, "ABS %s %s: HTTP %ld %s%s%s", what, key, r->status, code,
                    msg[0] ? ": " : "", msg);
}

enum kerr abs_do_req(struct abs *a, const char *method, const char *key, const char *query,
                     const char *url_query, struct curl_slist *extra, const void *body,
                     size_t body_len, void *dst, size_t dst_len, struct shttp_resp *resp,
                     struct kerr_info *err)
{
    char *ek = NULL;
    char *path = NULL;
    char *url = NULL;
    struct curl_slist *h = NULL;
    enum kerr rc = shttp_escape(key, 1, &ek, err);
    memset(resp, 0, sizeof *resp);
    if (rc == KERR_OK) {
        path = buf_dupf(16384, "/%s%s%s", a->container, ek[0] ? "/" : "", ek);
        const char *uq = url_query ? url_query : query;
        url = path ? buf_dupf(32768, "%s%s%s%s", a->base_url, path, uq ? "?" : "", uq ? uq : "")
                   : NULL;
        rc = url ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    for (struct curl_slist *s = extra; rc == KERR_OK && s; s = s->next) {
        struct curl_slist *t = curl_slist_append(h, s->data);
        rc = t ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        h = t ? t : h;
    }
    struct curl_slist *t = rc ? NULL : curl_slist_append(h, "x-ms-version: " ABS_VERSION);
    rc = rc ? rc : (t ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL));
    h = t ? t : h;
    if (rc == KERR_OK) {
        struct abs_sign_ctx sc = { a, method, path, query, body_len };
        struct shttp_req rq = { .method = method,
                                .url = url,
                                .headers = h,
                                .body = body,
                                .body_len = body_len,
                                .dst = dst,
                                .dst_len = dst_len,
                                .retries = ABS_RETRIES,
                                .sign = abs_sign,
                                .sign_ctx = &sc };
        rc = shttp_perform(&a->http, &rq, resp, err);
    }
    curl_slist_free_all(h);
    free(url);
    free(path);
    free(ek);
    return rc;
}

static enum kerr a_list(struct ostore *base, const char *prefix, struct ostore_list *out,
                        struct kerr_info *err)
{
    struct abs *a = (struct abs *)base;
    struct snapxml_page page = { 0 };
    char *marker = NULL;
    char *ep = NULL;
    enum kerr rc = shttp_escape(prefix, 0, &ep, err);
    while (rc == KERR_OK) {
        struct shttp_resp r;
        char *em = NULL;
        rc = marker ? shttp_escape(marker, 0, &em, err) : KERR_OK;
        char *q = buf_dupf(
            8192, "comp=list&include=immutabilitypolicy,tags%s%s&prefix=%s&restype=container",
            marker ? "&marker=" : "", marker ? marker : "", prefix);
        char *uq = buf_dupf(
            8192, "comp=list&include=immutabilitypolicy%%2Ctags%s%s&prefix=%s&restype=container",
            em ? "&marker=" : "", em ? em : "", ep);
        rc = rc ? rc : ((q && uq) ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL));
        rc = rc ? rc : abs_do_req(a, "GET", "", q, uq, NULL, NULL, 0, NULL, 0, &r, err);
        free(q);
        free(uq);
        free(em);
        if (rc == KERR_OK) {
            rc = r.status == 200 ? snapxml_abs_list(buf_str(&r.body), r.body.len, out, &page, err)
                                 : abs_status_err("List Blobs", a->container, &r, err);
        }
        shttp_resp_release(&r);
        free(marker);
        marker = NULL;
        if (rc != KERR_OK || !page.truncated) {
            break;
        }
        marker = page.next;
        page.next = NULL;
        snapxml_page_release(&page);
    }
    snapxml_page_release(&page);
    free(marker);
    free(ep);
    return rc;
}

static enum kerr a_head(struct ostore *base, const char *key, struct ostore_obj *out,
                        struct kerr_info *err)
{
    struct abs *a = (struct abs *)base;
    struct shttp_resp r;
    memset(out, 0, sizeof *out);
    enum kerr rc = abs_do_req(a, "HEAD", key, NULL, NULL, NULL, NULL, 0, NULL, 0, &r, err);
    if (rc == KERR_OK && r.status != 200) {
        rc = abs_status_err("Get Blob Properties", key, &r, err);
    }
    if (rc == KERR_OK) {
        out->size = r.content_length;
        out->mtime = (int64_t)curl_getdate(r.last_modified, NULL);
        snapxml_md5_b64_to_hex(r.content_md5, out->md5);
        snprintf(out->etag, sizeof out->etag, "%.79s", r.etag);
        out->own_copy = strcmp(r.copy_mark, "true") == 0;
        snprintf(out->sha256, sizeof out->sha256, "%s", r.sha256);
        out->key = strdup(key);
        rc = out->key ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        if (r.copy_status[0] && strcmp(r.copy_status, "success") != 0) {
            rc = kerr_set(err, KERR_IO, "ABS %s: copy status %s", key, r.copy_status);
        }
    }
    shttp_resp_release(&r);
    if (rc != KERR_OK) {
        ostore_obj_release(out);
    }
    return rc;
}

static enum kerr a_read(struct ostore *base, const struct ostore_obj *src, int64_t off, void *dst,
                        size_t len, struct kerr_info *err)
{
    struct abs *a = (struct abs *)base;
    struct shttp_resp r;
    char range[96];
    snprintf(range, sizeof range, "x-ms-range: bytes=%lld-%lld", (long long)off,
             (long long)(off + (int64_t)len - 1));
    struct curl_slist *h = curl_slist_append(NULL, range);
    enum kerr rc = h ? abs_do_req(a, "GET", src->key, NULL, NULL, h, NULL, 0, dst, len, &r, err)
                     : kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK && r.status != 206 && r.status != 200) {
        rc = abs_status_err("Get Blob", src->key, &r, err);
    }
    if (h) {
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    return rc;
}

/* Content-MD5 header of data. */
static enum kerr md5_line(const void *data, size_t len, const char *name, char line[96],
                          struct kerr_info *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned ml = 0;
    char *b64 = NULL;
    if (EVP_Digest(data, len, md, &ml, EVP_md5(), NULL) != 1) {
        return kerr_set(err, KERR_INTERNAL, "MD5 failed");
    }
    enum kerr rc = crypto_b64_encode(md, ml, &b64, NULL, err);
    if (rc == KERR_OK) {
        snprintf(line, 96, "%s: %s", name, b64);
    }
    free(b64);
    return rc;
}

/* h with the verified snapshot's digest (OSTORE_SHA256_ABS) appended when one is being
 * recorded; NULL when out of memory. */
static struct curl_slist *sha256_meta(const struct abs *a, struct curl_slist *h)
{
    char line[128];
    if (a->base.copy_sha256[0] == '\0') {
        return h;
    }
    snprintf(line, sizeof line, OSTORE_SHA256_ABS ": %s", a->base.copy_sha256);
    return curl_slist_append(h, line);
}

static void upload_free(struct abs_upload *u)
{
    if (u) {
        free(u->key);
        buf_release(&u->list);
        EVP_MD_CTX_free(u->md);
        free(u);
    }
}

static enum kerr a_up_begin(struct ostore *base, const char *key, int64_t size,
                            struct ostore_upload **out, struct kerr_info *err)
{
    struct abs_upload *u = calloc(1, sizeof *u);
    *out = NULL;
    if (u == NULL || (u->key = strdup(key)) == NULL || (u->md = EVP_MD_CTX_new()) == NULL ||
        EVP_DigestInit_ex(u->md, EVP_md5(), NULL) != 1) {
        upload_free(u);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    buf_init(&u->list, 4u * 1024u * 1024u);
    u->blocks = size > (int64_t)base->part_size;
    if ((size + (int64_t)base->part_size - 1) / (int64_t)base->part_size > ABS_MAX_BLOCKS) {
        upload_free(u);
        return kerr_set(err, KERR_TOOBIG, "%s needs more than %d blocks", key, ABS_MAX_BLOCKS);
    }
    *out = (struct ostore_upload *)(void *)u;
    return KERR_OK;
}

static enum kerr put_blob(struct abs *a, struct abs_upload *u, const void *data, size_t len,
                          struct kerr_info *err)
{
    char md[96];
    struct shttp_resp r;
    struct curl_slist *h = NULL;
    enum kerr rc = md5_line(data, len, "Content-MD5", md, err);
    if (rc == KERR_OK) {
        h = curl_slist_append(h, md);
        h = h ? curl_slist_append(h, "x-ms-blob-type: BlockBlob") : NULL;
        h = h ? curl_slist_append(h, "If-None-Match: *") : NULL;
        h = h ? curl_slist_append(h, OSTORE_COPY_MARK_ABS ": true") : NULL;
        h = h ? sha256_meta(a, h) : NULL;
        rc = h ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : abs_do_req(a, "PUT", u->key, NULL, NULL, h, data, len, NULL, 0, &r, err);
    curl_slist_free_all(h);
    if (rc == KERR_OK) {
        rc = r.status == 201 ? KERR_OK : abs_status_err("Put Blob", u->key, &r, err);
        shttp_resp_release(&r);
    }
    return rc;
}

static enum kerr a_up_part(struct ostore *base, struct ostore_upload *up, const void *data,
                           size_t len, struct kerr_info *err)
{
    struct abs *a = (struct abs *)base;
    struct abs_upload *u = (struct abs_upload *)(void *)up;
    char id[32];
    char *id64 = NULL;
    char md[96];
    struct shttp_resp r;
    EVP_DigestUpdate(u->md, data, len);
    if (!u->blocks) {
        u->sent_single = true;
        return put_blob(a, u, data, len, err);
    }
    snprintf(id, sizeof id, "warden-block-%06d", u->n);
    enum kerr rc = crypto_b64_encode(id, strlen(id), &id64, NULL, err);
    rc = rc ? rc : md5_line(data, len, "Content-MD5", md, err);
    struct curl_slist *h = rc ? NULL : curl_slist_append(NULL, md);
    char *q = id64 ? buf_dupf(256, "blockid=%s&comp=block", id64) : NULL;
    char *eid = NULL;
    rc = rc ? rc : ((h && q) ? shttp_escape(id64, 0, &eid, err) : kerr_set(err, KERR_NOMEM, NULL));
    char *uq = eid ? buf_dupf(256, "blockid=%s&comp=block", eid) : NULL;
    rc = rc ? rc
            : (uq ? abs_do_req(a, "PUT", u->key, q, uq, h, data, len, NULL, 0, &r, err)
                  : kerr_set(err, KERR_NOMEM, NULL));
    if (rc == KERR_OK) {
        rc = r.status == 201 ? KERR_OK : abs_status_err("Put Block", u->key, &r, err);
        shttp_resp_release(&r);
    }
    if (rc == KERR_OK && buf_appendf(&u->list, "<Latest>%s</Latest>", id64) != KERR_OK) {
        rc = kerr_set(err, KERR_TOOBIG, "block list too long");
    }
    u->n += rc == KERR_OK;
    curl_slist_free_all(h);
    free(q);
    free(uq);
    free(eid);
    free(id64);
    return rc;
}

static void a_up_abort(struct ostore *base, struct ostore_upload *up)
{
    (void)base;
    /* Uncommitted blocks are never visible and the service discards them. */
    upload_free((struct abs_upload *)(void *)up);
}

static enum kerr put_block_list(struct abs *a, struct abs_upload *u, struct kerr_info *err)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned ml = 0;
    char *b64 = NULL;
    struct shttp_resp r;
    struct buf body;
    buf_init(&body, 8u * 1024u * 1024u);
    enum kerr rc =
        EVP_DigestFinal_ex(u->md, md, &ml) == 1 ? KERR_OK : kerr_set(err, KERR_INTERNAL, "MD5");
    rc = rc ? rc : crypto_b64_encode(md, ml, &b64, NULL, err);
    char *line = b64 ? buf_dupf(128, "x-ms-blob-content-md5: %s", b64) : NULL;
    struct curl_slist *h = line ? curl_slist_append(NULL, line) : NULL;
    h = h ? curl_slist_append(h, "If-None-Match: *") : NULL;
    h = h ? curl_slist_append(h, OSTORE_COPY_MARK_ABS ": true") : NULL;
    h = h ? sha256_meta(a, h) : NULL;
    if (rc == KERR_OK && (h == NULL || buf_appendf(&body,
                                                   "<?xml version=\"1.0\" encoding=\"utf-8\"?>"
                                                   "<BlockList>%s</BlockList>",
                                                   buf_str(&u->list)) != KERR_OK)) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc
            : abs_do_req(a, "PUT", u->key, "comp=blocklist", NULL, h, body.data, body.len, NULL, 0,
                         &r, err);
    if (rc == KERR_OK) {
        rc = r.status == 201 ? KERR_OK : abs_status_err("Put Block List", u->key, &r, err);
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    free(line);
    free(b64);
    buf_release(&body);
    return rc;
}

static enum kerr a_up_commit(struct ostore *base, struct ostore_upload *up, struct kerr_info *err)
{
    struct abs *a = (struct abs *)base;
    struct abs_upload *u = (struct abs_upload *)(void *)up;
    enum kerr rc = KERR_OK;
    if (!u->blocks && !u->sent_single) {
        rc = put_blob(a, u, "", 0, err);
    } else if (u->blocks) {
        rc = put_block_list(a, u, err);
    }
    upload_free(u);
    return rc;
}

static enum kerr wait_copy(struct abs *a, const char *dst, struct kerr_info *err)
{
    for (int i = 0; i < 6000; i++) {
        struct shttp_resp r;
        enum kerr rc = abs_do_req(a, "HEAD", dst, NULL, NULL, NULL, NULL, 0, NULL, 0, &r, err);
        if (rc == KERR_OK && r.status != 200) {
            rc = abs_status_err("Get Blob Properties", dst, &r, err);
        }
        if (rc == KERR_OK && strcmp(r.copy_status, "pending") != 0) {
            if (r.copy_status[0] && strcmp(r.copy_status, "success") != 0) {
                rc = kerr_set(err, KERR_IO, "ABS Copy Blob %s: status %s", dst, r.copy_status);
            }
            shttp_resp_release(&r);
            return rc;
        }
        shttp_resp_release(&r);
        if (rc != KERR_OK) {
            return rc;
        }
        ktime_sleep_ns((int64_t)ABS_COPY_POLL_MS * KTIME_NS_PER_MS);
    }
    return kerr_set(err, KERR_TIMEOUT, "ABS Copy Blob %s still pending after 20 minutes", dst);
}

static enum kerr a_del(struct ostore *base, const struct ostore_obj *obj, struct kerr_info *err)
{
    struct abs *a = (struct abs *)base;
    struct shttp_resp r;
    enum kerr rc = abs_do_req(a, "DELETE", obj->key, NULL, NULL, NULL, NULL, 0, NULL, 0, &r, err);
    if (rc == KERR_OK) {
        rc = r.status == 202 ? KERR_OK : abs_status_err("Delete Blob", obj->key, &r, err);
        shttp_resp_release(&r);
    }
    return rc;
}

/* Abort Copy Blob: a pending copy left behind could still complete later. */
static void abort_copy(struct abs *a, const char *dst, const char *copy_id)
{
    struct shttp_resp r;
    struct kerr_info e2 = { 0 };
    char *q = buf_dupf(512, "comp=copy&copyid=%s", copy_id);
    struct curl_slist *h = curl_slist_append(NULL, "x-ms-copy-action: abort");
    if (q && h && abs_do_req(a, "PUT", dst, q, NULL, h, NULL, 0, NULL, 0, &r, &e2) == KERR_OK) {
        if (r.status != 204) {
            abs_status_err("Abort Copy Blob", dst, &r, &e2);
            log_warn("cannot abort the pending copy", "key", dst, "error", e2.msg);
        }
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    free(q);
}

static enum kerr a_copy(struct ostore *base, const struct ostore_obj *src, const char *dst,
                        struct kerr_info *err)
{
    struct abs *a = (struct abs *)base;
    struct shttp_resp r;
    char *ek = NULL;
    enum kerr rc = shttp_escape(src->key, 1, &ek, err);
    char *line =
        ek ? buf_dupf(32768, "x-ms-copy-source: %s/%s/%s", a->base_url, a->container, ek) : NULL;
    struct curl_slist *h = line ? curl_slist_append(NULL, line) : NULL;
    h = h ? curl_slist_append(h, "If-None-Match: *") : NULL;
    h = h ? curl_slist_append(h, OSTORE_COPY_MARK_ABS ": true") : NULL;
    h = h ? sha256_meta(a, h) : NULL;
    rc = rc ? rc : (h ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL));
    rc = rc ? rc : abs_do_req(a, "PUT", dst, NULL, NULL, h, NULL, 0, NULL, 0, &r, err);
    if (rc == KERR_OK) {
        rc = r.status == 202 || r.status == 201 ? KERR_OK
                                                : abs_status_err("Copy Blob", dst, &r, err);
        if (rc == KERR_OK && strcmp(r.copy_status, "success") != 0) {
            rc = strcmp(r.copy_status, "pending") == 0
                     ? wait_copy(a, dst, err)
                     : kerr_set(err, KERR_IO, "ABS Copy Blob %s: status %s", dst, r.copy_status);
            if (rc == KERR_TIMEOUT && r.copy_id[0]) {
                abort_copy(a, dst, r.copy_id);
            }
            /* The destination of this copy (failed, aborted, or pending and aborted now)
             * holds no snapshot: it must not stay visible to a restore. */
            struct ostore_obj o = { .key = (char *)(uintptr_t)dst };
            struct kerr_info e2 = { 0 };
            if (rc != KERR_OK && a_del(base, &o, &e2) != KERR_OK) {
                log_warn("cannot delete the failed copy", "key", dst, "error", e2.msg);
            }
        }
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    free(line);
    free(ek);
    return rc;
}

/* Set Blob Tags x-etcd-snapshot-exclude=true: etcd-backup-restore skips a blob so tagged. */
static enum kerr a_exclude(struct ostore *base, const struct ostore_obj *obj, struct kerr_info *err)
{
    static const char body[] = "<?xml version=\"1.0\" encoding=\"utf-8\"?><Tags><TagSet><Tag>"
                               "<Key>x-etcd-snapshot-exclude</Key><Value>true</Value>"
                               "</Tag></TagSet></Tags>";
    struct abs *a = (struct abs *)base;
    struct shttp_resp r;
    struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/xml");
    enum kerr rc = h ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    rc = rc ? rc
            : abs_do_req(a, "PUT", obj->key, "comp=tags", NULL, h, body, sizeof body - 1, NULL, 0,
                         &r, err);
    if (rc == KERR_OK) {
        rc = r.status == 204 || r.status == 200
                 ? KERR_OK
                 : abs_status_err("Set Blob Tags", obj->key, &r, err);
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    return rc;
}

static void a_destroy(struct ostore *base)
{
    struct abs *a = (struct abs *)base;
    shttp_release(&a->http);
    screds_abs_release(&a->creds);
    free(a->container);
    free(a->base_url);
    free(a->canon_base);
    free(a);
}

static const struct ostore_ops abs_ops = {
    .name = "ABS",
    .list = a_list,
    .head = a_head,
    .read = a_read,
    .up_begin = a_up_begin,
    .up_part = a_up_part,
    .up_commit = a_up_commit,
    .up_abort = a_up_abort,
    .copy = a_copy,
    .del = a_del,
    .exclude = a_exclude,
    .extend = abs_extend,
    .destroy = a_destroy,
};

/* base_url and the canonical resource's start from --store-endpoint-override. */
static enum kerr override_base(struct abs *a, const char *ep, struct kerr_info *err)
{
    size_t n = strlen(ep);
    while (n > 0 && ep[n - 1] == '/') {
        n--;
    }
    const char *host = strstr(ep, "://");
    if (host == NULL || (size_t)(host - ep) >= n) {
        return kerr_set(err, KERR_INVAL, "--store-endpoint-override %s is not a URL", ep);
    }
    const char *path = memchr(host + 3, '/', n - (size_t)(host + 3 - ep));
    a->base_url = strndup(ep, n);
    a->canon_base = buf_dupf(1024, "/%s%.*s", a->creds.account,
                             path ? (int)(n - (size_t)(path - ep)) : 0, path ? path : "");
    return (a->base_url && a->canon_base) ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

enum kerr abs_open(const char *container, const char *endpoint_override, struct ostore **out,
                   struct kerr_info *err)
{
    struct abs *a = calloc(1, sizeof *a);
    *out = NULL;
    if (a == NULL || (a->container = strdup(container)) == NULL) {
        free(a);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    a->base.ops = &abs_ops;
    enum kerr rc = screds_abs_from_env(&a->creds, err);
    rc = rc ? rc : shttp_init(&a->http, err);
    if (rc == KERR_OK && endpoint_override && endpoint_override[0]) {
        rc = override_base(a, endpoint_override, err);
    } else if (rc == KERR_OK) {
        const char *dom = a->creds.domain ? a->creds.domain : "blob.core.windows.net";
        if (a->creds.emulator) {
            a->base_url = buf_dupf(1024, "http://%s/%s", dom, a->creds.account);
            a->canon_base = buf_dupf(1024, "/%s/%s", a->creds.account, a->creds.account);
        } else {
            a->base_url = buf_dupf(1024, "https://%s.%s", a->creds.account, dom);
            a->canon_base = buf_dupf(1024, "/%s", a->creds.account);
        }
        rc = (a->base_url && a->canon_base) ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    if (rc != KERR_OK) {
        a_destroy(&a->base);
        return rc;
    }
    *out = &a->base;
    return KERR_OK;
}
