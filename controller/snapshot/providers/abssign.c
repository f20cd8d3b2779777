/* abssign - the SharedKey signature of ABS requests (see absint.h). */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "controller/snapshot/providers/absint.h"

static int hdr_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The value of standard header name among hs, or "". */
static const char *std_header(struct curl_slist *hs, const char *name, char *out, size_t n)
{
    size_t nl = strlen(name);
    out[0] = '\0';
    for (; hs; hs = hs->next) {
        if (strncasecmp(hs->data, name, nl) == 0 && hs->data[nl] == ':') {
            snprintf(out, n, "%s", hs->data + nl + 1 + (hs->data[nl + 1] == ' '));
        }
    }
    return out;
}

/* "x-ms-a:v\nx-ms-b:v\n" sorted, into b. */
static enum kerr canon_headers(struct curl_slist *hs, struct buf *b, struct kerr_info *err)
{
    const char *v[64];
    size_t n = 0;
    for (; hs && n < 64; hs = hs->next) {
        if (strncmp(hs->data, "x-ms-", 5) == 0) {
            v[n++] = hs->data;
        }
    }
    qsort(v, n, sizeof v[0], hdr_cmp);
    for (size_t i = 0; i < n; i++) {
        const char *c = strchr(v[i], ':');
        const char *val = c ? c + 1 : "";
        while (*val == ' ') {
            val++;
        }
        if (buf_appendf(b, "%.*s:%s\n", c ? (int)(c - v[i]) : 0, v[i], val) != KERR_OK) {
            return kerr_set(err, KERR_NOMEM, NULL);
        }
    }
    return KERR_OK;
}

static enum kerr canon_query(const char *q, struct buf *b, struct kerr_info *err)
{
    while (q && *q) {
        const char *amp = strchr(q, '&');
        size_t n = amp ? (size_t)(amp - q) : strlen(q);
        const char *eq = memchr(q, '=', n);
        size_t kl = eq ? (size_t)(eq - q) : n;
        if (buf_appendf(b, "\n%.*s:%.*s", (int)kl, q, eq ? (int)(n - kl - 1) : 0,
                        eq ? eq + 1 : "") != KERR_OK) {
            return kerr_set(err, KERR_NOMEM, NULL);
        }
        q = amp ? amp + 1 : NULL;
    }
    return KERR_OK;
}

enum kerr abs_sign(void *vctx, struct curl_slist **headers, struct kerr_info *err)
{
    const struct abs_sign_ctx *c = vctx;
    char date[64];
    char std[8][128];
    char len[32];
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned ml = 0;
    char *b64 = NULL;
    struct buf s;
    time_t now = time(NULL);
    struct tm tm;
    static const char *const names[] = { "Content-Encoding",  "Content-Language",   "Content-MD5",
                                         "Content-Type",      "If-Match",           "If-None-Match",
                                         "If-Modified-Since", "If-Unmodified-Since" };
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "x-ms-date: %a, %d %b %Y %H:%M:%S GMT", &tm);
    struct curl_slist *h = curl_slist_append(*headers, date);
    if (h == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    *headers = h;
    for (int i = 0; i < 8; i++) {
        std_header(h, names[i], std[i], sizeof std[i]);
    }
    snprintf(len, sizeof len, "%zu", c->body_len);
    buf_init(&s, 64 * 1024);
    enum kerr rc =
        buf_appendf(&s, "%s\n%s\n%s\n%s\n%s\n%s\n\n%s\n%s\n%s\n%s\n\n", c->method, std[0], std[1],
                    c->body_len ? len : "", std[2], std[3], std[6], std[4], std[5], std[7]);
    rc = rc ? kerr_set(err, KERR_NOMEM, NULL) : canon_headers(h, &s, err);
    if (rc == KERR_OK && buf_appendf(&s, "%s%s", c->a->canon_base, c->path) != KERR_OK) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : canon_query(c->query, &s, err);
    if (rc == KERR_OK && HMAC(EVP_sha256(), c->a->creds.key, (int)c->a->creds.key_len,
                              (const unsigned char *)s.data, s.len, mac, &ml) == NULL) {
        rc = kerr_set(err, KERR_INTERNAL, "HMAC-SHA256 failed");
    }
    rc = rc ? rc : crypto_b64_encode(mac, ml, &b64, NULL, err);
    buf_release(&s);
    if (rc == KERR_OK) {
        char *line = buf_dupf(512, "Authorization: SharedKey %s:%s", c->a->creds.account, b64);
        h = line ? curl_slist_append(*headers, line) : NULL;
        rc = h ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
        free(line);
    }
    free(b64);
    return rc;
}
