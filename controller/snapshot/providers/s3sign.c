/* s3sign - SigV4 for the requests libcurl's signer gets wrong (see s3sign.h). */
#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "controller/snapshot/providers/s3sign.h"

#define S3SIGN_MAX_HEADERS 32
#define S3SIGN_MAX_PARAMS  32
#define S3SIGN_MAX_TEXT    65536

/* One header as SigV4 canonicalises it: lowercase name, trimmed value. */
struct hdr {
    char *name;
    char *value;
};

static int hdr_by_name(const void *a, const void *b)
{
    const struct hdr *x = a;
    const struct hdr *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->value, y->value);
}

static int by_line(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The lowercased "name:value" lines of h (at most n) into lines[] (OWNS each); their
 * count, or -1 (nothing kept) when out of memory or more than n. */
static int lower_lines(const struct curl_slist *h, char **lines, int n)
{
    int k = 0;
    for (; h; h = h->next) {
        const char *c = strchr(h->data, ':');
        if (c == NULL) {
            continue;
        }
        char *l = k < n ? strdup(h->data) : NULL;
        if (l == NULL) {
            while (k > 0) {
                free(lines[--k]);
            }
            return -1;
        }
        for (char *p = l; p < l + (c - h->data); p++) {
            *p = (char)tolower((unsigned char)*p);
        }
        lines[k++] = l;
    }
    return k;
}

bool s3sign_misordered(const struct curl_slist *h)
{
    char *lines[S3SIGN_MAX_HEADERS];
    int n = lower_lines(h, lines, S3SIGN_MAX_HEADERS);
    bool bad = n < 0;
    if (n > 1) {
        qsort(lines, (size_t)n, sizeof *lines, by_line);
        for (int i = 0; i + 1 < n && !bad; i++) { /* names must come out sorted too */
            size_t a = strcspn(lines[i], ":");
            size_t b = strcspn(lines[i + 1], ":");
            int c = strncmp(lines[i], lines[i + 1], a < b ? a : b);
            bad = c > 0 || (c == 0 && a > b);
        }
    }
    for (int i = 0; i < n; i++) {
        free(lines[i]);
    }
    return bad;
}

/* name lowercased, value trimmed with sequential spaces as one; false when out of memory. */
static bool hdr_set(struct hdr *o, const char *name, size_t nl, const char *value)
{
    o->name = strndup(name, nl);
    o->value = malloc(strlen(value) + 1);
    if (o->name == NULL || o->value == NULL) {
        return false;
    }
    for (char *p = o->name; *p; p++) {
        *p = (char)tolower((unsigned char)*p);
    }
    char *w = o->value;
    for (const char *p = value; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            if (w != o->value && w[-1] != ' ') {
                *w++ = ' ';
            }
        } else {
            *w++ = *p;
        }
    }
    while (w != o->value && w[-1] == ' ') {
        w--;
    }
    *w = '\0';
    return true;
}

/* Host as curl sends it: the port only when the URL names one other than the default. */
static enum kerr host_path_query(CURLU *u, const char *url, char **host, char **path, char **query,
                                 struct kerr_info *err)
{
    char *h = NULL;
    char *port = NULL;
    char *scheme = NULL;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PATH, path, 0) != CURLUE_OK) {
        curl_free(h);
        curl_free(scheme);
        return kerr_set(err, KERR_INVAL, "cannot sign a request to %.200s", url);
    }
    if (curl_url_get(u, CURLUPART_QUERY, query, 0) != CURLUE_OK) {
        *query = NULL;
    }
    bool def = true;
    if (curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK) {
        def = strcmp(port, strcasecmp(scheme, "https") == 0 ? "443" : "80") == 0;
    }
    *host = def ? strdup(h) : buf_dupf(1024, "%s:%s", h, port);
    curl_free(h);
    curl_free(port);
    curl_free(scheme);
    return *host ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
}

static int param_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a;
    const char *y = *(const char *const *)b;
    size_t xl = strcspn(x, "=");
    size_t yl = strcspn(y, "=");
    int c = strncmp(x, y, xl < yl ? xl : yl);
    if (c || xl != yl) {
        return c ? c : (xl < yl ? -1 : 1);
    }
    return strcmp(x + xl, y + yl);
}

/* The canonical query: parameters sorted by name, each "name=value". */
static enum kerr canon_query(char *query, struct buf *b, struct kerr_info *err)
{
    char *v[S3SIGN_MAX_PARAMS];
    size_t n = 0;
    char *save = NULL;
    for (char *p = query ? strtok_r(query, "&", &save) : NULL; p; p = strtok_r(NULL, "&", &save)) {
        if (n == S3SIGN_MAX_PARAMS) {
            return kerr_set(err, KERR_TOOBIG, "too many query parameters to sign");
        }
        v[n++] = p;
    }
    qsort(v, n, sizeof *v, param_cmp);
    for (size_t i = 0; i < n; i++) {
        if (buf_appendf(b, "%s%s%s", i ? "&" : "", v[i], strchr(v[i], '=') ? "" : "=") != KERR_OK) {
            return kerr_set(err, KERR_TOOBIG, "query too long to sign");
        }
    }
    return KERR_OK;
}

static bool hmac(const void *key, size_t kl, const char *msg, unsigned char out[32])
{
    unsigned ol = 0;
    return HMAC(EVP_sha256(), key, (int)kl, (const unsigned char *)msg, strlen(msg), out, &ol) &&
           ol == 32;
}

/* The signature of sts: hex HMAC over the key derived from secret, day and region. */
static enum kerr signature(const struct s3sign_req *rq, const char *day, const char *sts,
                           char hex[65], struct kerr_info *err)
{
    unsigned char k[32];
    char *first = buf_dupf(1024, "AWS4%s", rq->secret_key);
    bool ok = first && hmac(first, strlen(first), day, k) && hmac(k, 32, rq->region, k) &&
              hmac(k, 32, "s3", k) && hmac(k, 32, "aws4_request", k) && hmac(k, 32, sts, k);
    if (first) {
        OPENSSL_cleanse(first, strlen(first));
    }
    free(first);
    if (!ok) {
        return kerr_set(err, KERR_INTERNAL, "HMAC-SHA256 failed");
    }
    for (int i = 0; i < 32; i++) {
        snprintf(hex + 2 * i, 3, "%02x", k[i]);
    }
    OPENSSL_cleanse(k, sizeof k);
    return KERR_OK;
}

/* The canonical request's headers and SignedHeaders into creq and signed_h. */
static enum kerr canon_headers(struct hdr *hs, int n, struct buf *creq, struct buf *signed_h,
                               struct kerr_info *err)
{
    qsort(hs, (size_t)n, sizeof *hs, hdr_by_name);
    for (int i = 0; i < n; i++) {
        if (buf_appendf(creq, "%s:%s\n", hs[i].name, hs[i].value) != KERR_OK ||
            buf_appendf(signed_h, "%s%s", i ? ";" : "", hs[i].name) != KERR_OK) {
            return kerr_set(err, KERR_TOOBIG, "headers too long to sign");
        }
    }
    return buf_appends(creq, "\n") == KERR_OK ? KERR_OK
                                              : kerr_set(err, KERR_TOOBIG, "headers too long");
}

enum kerr s3sign_v4(const struct s3sign_req *rq, const struct curl_slist *h,
                    struct curl_slist **out, struct kerr_info *err)
{
    struct hdr hs[S3SIGN_MAX_HEADERS + 2] = { 0 };
    int n = 0;
    char *host = NULL, *path = NULL, *query = NULL, *auth = NULL;
    char date[32], day[16], creq_hex[CRYPTO_SHA256_HEX_LEN + 1], sig[65];
    const char *payload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    struct buf creq, signed_h, sts;
    buf_init(&creq, S3SIGN_MAX_TEXT);
    buf_init(&signed_h, S3SIGN_MAX_TEXT);
    buf_init(&sts, S3SIGN_MAX_TEXT);
    *out = NULL;
    time_t t = (time_t)rq->now;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", &tm);
    strftime(day, sizeof day, "%Y%m%d", &tm);

    CURLU *u = curl_url();
    enum kerr rc = u ? host_path_query(u, rq->url, &host, &path, &query, err)
                     : kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK &&
        (!hdr_set(&hs[n++], "host", 4, host) || !hdr_set(&hs[n++], "x-amz-date", 10, date))) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    for (const struct curl_slist *p = h; rc == KERR_OK && p; p = p->next) {
        const char *c = strchr(p->data, ':');
        if (c == NULL) {
            continue;
        }
        if (n == S3SIGN_MAX_HEADERS + 2) {
            rc = kerr_set(err, KERR_TOOBIG, "too many headers to sign");
        } else if (!hdr_set(&hs[n++], p->data, (size_t)(c - p->data), c + 1)) {
            rc = kerr_set(err, KERR_NOMEM, NULL);
        } else if (strcmp(hs[n - 1].name, "x-amz-content-sha256") == 0) {
            payload = hs[n - 1].value;
        }
    }
    if (rc == KERR_OK && buf_appendf(&creq, "%s\n%s\n", rq->method, path) != KERR_OK) {
        rc = kerr_set(err, KERR_TOOBIG, "path too long to sign");
    }
    rc = rc ? rc : canon_query(query, &creq, err);
    if (rc == KERR_OK && buf_appends(&creq, "\n") != KERR_OK) {
        rc = kerr_set(err, KERR_TOOBIG, "query too long to sign");
    }
    rc = rc ? rc : canon_headers(hs, n, &creq, &signed_h, err);
    if (rc == KERR_OK && buf_appendf(&creq, "%s\n%s", buf_str(&signed_h), payload) != KERR_OK) {
        rc = kerr_set(err, KERR_TOOBIG, "headers too long to sign");
    }
    rc = rc ? rc : crypto_sha256_hex(creq.data, creq.len, creq_hex, err);
    if (rc == KERR_OK && buf_appendf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/s3/aws4_request\n%s", date,
                                     day, rq->region, creq_hex) != KERR_OK) {
        rc = kerr_set(err, KERR_TOOBIG, "region too long to sign");
    }
    rc = rc ? rc : signature(rq, day, buf_str(&sts), sig, err);
    if (rc == KERR_OK) {
        auth = buf_dupf(S3SIGN_MAX_TEXT,
                        "Authorization: AWS4-HMAC-SHA256 Credential=%s/%s/%s/s3/aws4_request, "
                        "SignedHeaders=%s, Signature=%s",
                        rq->access_key, day, rq->region, buf_str(&signed_h), sig);
    }
    struct curl_slist *l = NULL;
    for (const struct curl_slist *p = h; rc == KERR_OK && p; p = p->next) {
        struct curl_slist *m = curl_slist_append(l, p->data);
        rc = m ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        l = m ? m : l;
    }
    char dline[48];
    snprintf(dline, sizeof dline, "x-amz-date: %s", date);
    for (int i = 0; rc == KERR_OK && i < 2; i++) {
        struct curl_slist *m = auth ? curl_slist_append(l, i ? auth : dline) : NULL;
        rc = m ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        l = m ? m : l;
    }
    if (rc == KERR_OK) {
        *out = l;
    } else {
        curl_slist_free_all(l);
    }
    for (int i = 0; i < n; i++) {
        free(hs[i].name);
        free(hs[i].value);
    }
    free(host);
    free(auth);
    curl_free(path);
    curl_free(query);
    curl_url_cleanup(u);
    buf_release(&creq);
    buf_release(&signed_h);
    buf_release(&sts);
    return rc;
}

/* shttp's per-attempt hook: ctx a struct s3sign_req, signed at the current time. */
static enum kerr sign_hook(void *ctx, struct curl_slist **headers, struct kerr_info *err)
{
    struct s3sign_req rq = *(const struct s3sign_req *)ctx;
    struct curl_slist *out = NULL;
    rq.now = (int64_t)time(NULL);
    enum kerr rc = s3sign_v4(&rq, *headers, &out, err);
    if (rc == KERR_OK) {
        curl_slist_free_all(*headers);
        *headers = out;
    }
    return rc;
}

enum kerr s3sign_perform(struct shttp *http, struct shttp_req *rq, const struct screds_s3 *creds,
                         struct shttp_resp *resp, struct kerr_info *err)
{
    if (!s3sign_misordered(rq->headers)) {
        return shttp_perform(http, rq, resp, err);
    }
    struct s3sign_req sr = { .method = rq->method,
                             .url = rq->url,
                             .region = creds->region,
                             .access_key = creds->access_key,
                             .secret_key = creds->secret_key };
    char sig[160];
    snprintf(sig, sizeof sig, "aws:amz:%.64s:s3", creds->region);
    rq->sign = sign_hook;
    rq->sign_ctx = &sr;
    curl_easy_setopt(http->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_NONE);
    enum kerr rc = shttp_perform(http, rq, resp, err);
    curl_easy_setopt(http->curl, CURLOPT_AWS_SIGV4, sig); /* as s3.c set it before */
    return rc;
}
