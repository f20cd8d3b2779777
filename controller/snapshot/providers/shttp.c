/* shttp - object-store HTTP exchanges (see shttp.h). */
#include "controller/snapshot/providers/shttp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/ktime.h"
#include "common/log.h"

#define BODY_MAX (16u * 1024u * 1024u)

struct xfer {
    const struct shttp_req *req;
    struct shttp_resp *resp;
    size_t sent; /* request body bytes handed to curl */
    size_t got;  /* answer bytes into req->dst */
    int overflow;
};

enum kerr shttp_init(struct shttp *h, struct kerr_info *err)
{
    h->curl = curl_easy_init();
    if (h->curl == NULL) {
        return kerr_set(err, KERR_NOMEM, "curl_easy_init failed");
    }
    backoff_init(&h->bo, 100, 2000, 60000, (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)h);
    curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h->curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h->curl, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(h->curl, CURLOPT_TCP_KEEPALIVE, 1L);
    return KERR_OK;
}

void shttp_release(struct shttp *h)
{
    if (h && h->curl) {
        curl_easy_cleanup(h->curl);
        h->curl = NULL;
    }
}

void shttp_resp_release(struct shttp_resp *r)
{
    if (r) {
        buf_release(&r->body);
    }
}

static size_t on_read(char *p, size_t size, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t left = x->req->body_len - x->sent;
    size_t k = size * n < left ? size * n : left;
    memcpy(p, (const char *)x->req->body + x->sent, k);
    x->sent += k;
    return k;
}

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
    struct xfer *x = ud;
    size_t k = size * n;
    int ok2xx = x->resp->status >= 200 && x->resp->status < 300;
    if (x->req->dst && ok2xx) {
        if (k > x->req->dst_len - x->got) {
            x->overflow = 1;
            return 0;
        }
        memcpy((char *)x->req->dst + x->got, p, k);
        x->got += k;
        return k;
    }
    return buf_append(&x->resp->body, p, k) == KERR_OK ? k : 0;
}

static void copy_value(const char *v, size_t vl, char *out, size_t size)
{
    while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' ')) {
        vl--;
    }
    while (vl > 0 && *v == ' ') {
        v++;
        vl--;
    }
    snprintf(out, size, "%.*s", (int)(vl < size ? vl : size - 1), v);
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    static const struct {
        const char *name;
        size_t off;
        size_t size;
    } wanted[] = {
        { "etag", offsetof(struct shttp_resp, etag), 96 },
        { "content-md5", offsetof(struct shttp_resp, content_md5), 64 },
        { "last-modified", offsetof(struct shttp_resp, last_modified), 64 },
        { "x-amz-version-id", offsetof(struct shttp_resp, version_id), 256 },
        { "x-ms-copy-status", offsetof(struct shttp_resp, copy_status), 32 },
        { "x-ms-copy-id", offsetof(struct shttp_resp, copy_id), 128 },
        { "x-ms-error-code", offsetof(struct shttp_resp, error_code), 64 },
        { "x-amz-tagging-count", offsetof(struct shttp_resp, tag_count), 16 },
        { "x-amz-server-side-encryption", offsetof(struct shttp_resp, sse), 32 },
        { "x-amz-meta-etcd-warden-copy", offsetof(struct shttp_resp, copy_mark), 8 },
        { "x-ms-meta-etcdwardencopy", offsetof(struct shttp_resp, copy_mark), 8 },
        { "x-amz-meta-etcd-warden-sha256", offsetof(struct shttp_resp, sha256), 65 },
        { "x-ms-meta-etcdwardensha256", offsetof(struct shttp_resp, sha256), 65 },
        { "location", offsetof(struct shttp_resp, location), 1024 },
        { "x-ms-immutability-policy-until-date", offsetof(struct shttp_resp, imm_until), 40 },
        { "x-ms-immutability-policy-mode", offsetof(struct shttp_resp, imm_mode), 16 },
        { "x-ms-immutable-storage-with-versioning-enabled", offsetof(struct shttp_resp, imm_vers),
          8 },
    };
    struct xfer *x = ud;
    size_t len = size * n;
    const char *colon = memchr(p, ':', len);
    if (len > 5 && strncmp(p, "HTTP/", 5) == 0) {
        x->resp->status =
            strtol(memchr(p, ' ', len) ? (char *)memchr(p, ' ', len) + 1 : p, NULL, 10);
        return len;
    }
    if (colon == NULL) {
        return len;
    }
    size_t nl = (size_t)(colon - p);
    const char *v = colon + 1;
    size_t vl = len - nl - 1;
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        if (strlen(wanted[i].name) == nl && strncasecmp(p, wanted[i].name, nl) == 0) {
            copy_value(v, vl, (char *)x->resp + wanted[i].off, wanted[i].size);
        }
    }
    if (nl == 14 && strncasecmp(p, "content-length", nl) == 0) {
        char t[32];
        copy_value(v, vl, t, sizeof t);
        x->resp->content_length = strtoll(t, NULL, 10);
    } else if (nl == 11 && strncasecmp(p, "retry-after", nl) == 0) {
        char t[32];
        copy_value(v, vl, t, sizeof t);
        x->resp->retry_after_s = strtol(t, NULL, 10);
    }
    return len;
}

static void reset_resp(struct shttp_resp *r)
{
    buf_release(&r->body);
    memset(r, 0, sizeof *r);
    buf_init(&r->body, BODY_MAX);
    r->content_length = -1;
}

static void set_method(CURL *c, const struct shttp_req *req, struct xfer *x)
{
    curl_easy_setopt(c, CURLOPT_NOBODY, 0L);
    curl_easy_setopt(c, CURLOPT_UPLOAD, 0L);
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, NULL);
    if (strcmp(req->method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (strcmp(req->method, "PUT") == 0) {
        /* The body is in memory and small or a part: no "Expect: 100-continue" round trip
         * (radosgw answers it only after curl's 1 s timeout). */
        curl_easy_setopt(c, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(c, CURLOPT_READDATA, x);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)req->body_len);
    } else if (strcmp(req->method, "POST") == 0 || strcmp(req->method, "PATCH") == 0) {
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body ? req->body : "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len);
        if (req->method[1] == 'A') { /* PATCH: a POST body under another verb */
            curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
        }
    } else if (strcmp(req->method, "GET") != 0) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
    }
}

static int retryable(CURLcode cc, long status)
{
    if (cc != CURLE_OK) {
        return cc != CURLE_SSL_CACERT && cc != CURLE_PEER_FAILED_VERIFICATION &&
               cc != CURLE_URL_MALFORMAT && cc != CURLE_UNSUPPORTED_PROTOCOL &&
               cc != CURLE_WRITE_ERROR;
    }
    return status == 500 || status == 502 || status == 503 || status == 504;
}

static CURLcode attempt(struct shttp *h, const struct shttp_req *req, struct shttp_resp *resp,
                        struct xfer *x, char *ebuf, struct kerr_info *err, enum kerr *sign_rc)
{
    struct curl_slist *hdrs = NULL;
    for (struct curl_slist *s = req->headers; s; s = s->next) {
        struct curl_slist *t = curl_slist_append(hdrs, s->data);
        if (t == NULL) {
            curl_slist_free_all(hdrs);
            *sign_rc = kerr_set(err, KERR_NOMEM, NULL);
            return CURLE_OUT_OF_MEMORY;
        }
        hdrs = t;
    }
    *sign_rc = req->sign ? req->sign(req->sign_ctx, &hdrs, err) : KERR_OK;
    if (*sign_rc != KERR_OK) {
        curl_slist_free_all(hdrs);
        return CURLE_ABORTED_BY_CALLBACK;
    }
    reset_resp(resp);
    memset(x, 0, sizeof *x);
    x->req = req;
    x->resp = resp;
    set_method(h->curl, req, x);
    curl_easy_setopt(h->curl, CURLOPT_URL, req->url);
    curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h->curl, CURLOPT_HEADERDATA, x);
    curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, ebuf);
    ebuf[0] = '\0';
    CURLcode cc = curl_easy_perform(h->curl);
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &resp->status);
    curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
    return cc;
}

enum kerr shttp_perform(struct shttp *h, const struct shttp_req *req, struct shttp_resp *resp,
                        struct kerr_info *err)
{
    char ebuf[CURL_ERROR_SIZE];
    struct xfer x;
    enum kerr sign_rc = KERR_OK;
    memset(resp, 0, sizeof *resp);
    buf_init(&resp->body, BODY_MAX);
    for (int i = 0;; i++) {
        CURLcode cc = attempt(h, req, resp, &x, ebuf, err, &sign_rc);
        if (sign_rc != KERR_OK) {
            return sign_rc;
        }
        if (cc == CURLE_OK && req->dst && resp->status >= 200 && resp->status < 300 &&
            x.got != req->dst_len) {
            cc = CURLE_PARTIAL_FILE;
            snprintf(ebuf, sizeof ebuf, "answer has %zu bytes, expected %zu", x.got, req->dst_len);
        }
        if (x.overflow) {
            return kerr_set(err, KERR_IO, "%s %s: answer longer than the %zu bytes asked for",
                            req->method, req->url, req->dst_len);
        }
        if (!retryable(cc, resp->status) || i >= req->retries) {
            if (cc != CURLE_OK) {
                return kerr_set(err, KERR_HTTP, "%s %s: %s", req->method, req->url,
                                ebuf[0] ? ebuf : curl_easy_strerror(cc));
            }
            return KERR_OK;
        }
        long ms = backoff_next(&h->bo, ktime_mono_ms());
        if (resp->retry_after_s > 0) {
            ms = resp->retry_after_s > 5 ? 5000 : resp->retry_after_s * 1000;
        }
        char st[16];
        char ds[16];
        snprintf(st, sizeof st, "%ld", resp->status);
        snprintf(ds, sizeof ds, "%ld", ms);
        log_warn("object store request failed, retrying", "method", req->method, "url", req->url,
                 "status", st, "error",
                 cc != CURLE_OK ? (ebuf[0] ? ebuf : curl_easy_strerror(cc)) : "", "delayMs", ds);
        ktime_sleep_ns((int64_t)ms * KTIME_NS_PER_MS);
    }
}

enum kerr shttp_escape(const char *s, int keep_slash, char **out, struct kerr_info *err)
{
    static const char hex[] = "0123456789ABCDEF";
    struct buf b;
    buf_init(&b, 64 * 1024);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' || *p == '~' ||
                    (keep_slash && *p == '/');
        char enc[3] = { '%', hex[*p >> 4], hex[*p & 15] };
        if ((plain ? buf_append(&b, p, 1) : buf_append(&b, enc, 3)) != KERR_OK) {
            buf_release(&b);
            return kerr_set(err, KERR_TOOBIG, "name too long");
        }
    }
    *out = buf_detach(&b, NULL);
    if (*out == NULL) {
        *out = strdup("");
    }
    return *out ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

enum kerr shttp_post(struct shttp *h, const char *url, const char *content_type, const char *extra,
                     const char *body, int retries, struct shttp_resp *resp, struct kerr_info *err)
{
    char ct[256];
    struct curl_slist *hd = NULL, *all = NULL;
    if (snprintf(ct, sizeof ct, "Content-Type: %s", content_type) < (int)sizeof ct) {
        hd = curl_slist_append(NULL, ct);
        all = hd && extra ? curl_slist_append(hd, extra) : hd;
    }
    if (!all) {
        curl_slist_free_all(hd);
        memset(resp, 0, sizeof *resp);
        buf_init(&resp->body, BODY_MAX);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    struct shttp_req rq = { .method = "POST",
                            .url = url,
                            .headers = hd,
                            .body = body,
                            .body_len = strlen(body),
                            .retries = retries };
    enum kerr rc = shttp_perform(h, &rq, resp, err);
    curl_slist_free_all(hd);
    return rc;
}
