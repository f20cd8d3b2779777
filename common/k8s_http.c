#include "common/k8s_http.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/cfg.h"
#include "common/jarena.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/ratelimit.h"

#define SLEEP_SLICE   50 /* ms between cancel checks while sleeping */
#define KEEPALIVE_S   30L
#define BEARER_PREFIX "Authorization: Bearer "

/* State of one attempt, shared with the curl callbacks. */
struct xfer {
    struct k8s_client *c;
    const struct k8s_http_req *req;
    CURL *h;
    struct buf body;
    long retry_after;   /* seconds, -1 when absent */
    enum kerr write_rc; /* a body append failed: KERR_TOOBIG or KERR_NOMEM */
    int stopped_by_cb;
};

/* Credentials and connection options, the same for every request. */
static int setup_tls(struct k8s_client *c, CURL *h)
{
    struct curl_blob blob;
    int bad = 0;

    if (c->insecure) {
        bad |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L) != CURLE_OK;
    } else if (c->ca) {
        blob = (struct curl_blob){ c->ca, c->ca_len, CURL_BLOB_COPY };
        bad |= curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob) != CURLE_OK;
    }
    if (c->cert) {
        blob = (struct curl_blob){ c->cert, c->cert_len, CURL_BLOB_COPY };
        bad |= curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM") != CURLE_OK;
    }
    if (c->key) {
        blob = (struct curl_blob){ c->key, c->key_len, CURL_BLOB_COPY };
        bad |= curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM") != CURLE_OK;
    }
    if (c->connect_to)
        bad |= curl_easy_setopt(h, CURLOPT_CONNECT_TO, c->connect_to) != CURLE_OK;
    return bad;
}

/* Milliseconds left before req's deadline (at least 1), or LONG_MAX without one. */
static long left_ms(const struct k8s_http_req *req)
{
    int64_t left;

    if (!req->deadline_ms)
        return LONG_MAX;
    left = req->deadline_ms - ktime_mono_ms();
    return left < 1 ? 1 : left > LONG_MAX ? LONG_MAX : (long)left;
}

/* An attempt's total time: the client's request timeout, cut at the call's deadline. */
static long attempt_timeout_ms(const struct k8s_client *c, const struct k8s_http_req *req)
{
    long left = left_ms(req);

    return c->request_timeout_ms < left ? c->request_timeout_ms : left;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct xfer *x = arg;
    size_t len = size * n;
    char line[64];
    char *end;
    long v;

    if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
        x->retry_after = -1; /* a new response (after a 100 Continue, say) */
    } else if (len > 12 && len < sizeof(line) && strncasecmp(p, "Retry-After:", 12) == 0) {
        memcpy(line, p + 12, len - 12);
        line[len - 12] = '\0';
        errno = 0;
        v = strtol(line, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        /* Clamped here: the wait is computed in milliseconds (v * 1000 must not overflow). */
        if (errno == ERANGE && v == LONG_MAX)
            errno = 0;
        if (!errno && end != line && *end == '\0' && v >= 0)
            x->retry_after = v < K8S_RETRY_AFTER_MAX_S ? v : K8S_RETRY_AFTER_MAX_S;
    }
    return len;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct xfer *x = arg;
    size_t len = size * n;
    long status = 0;
    size_t keep;

    curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300) {
        keep = K8S_HTTP_MAX_ERROR_BODY -
               (x->body.len < K8S_HTTP_MAX_ERROR_BODY ? x->body.len : K8S_HTTP_MAX_ERROR_BODY);
        /* Keep the start of an error body for its Status, drop the rest. */
        if (keep > 0 && buf_append(&x->body, p, len < keep ? len : keep) != KERR_OK)
            return 0;
        return len;
    }
    if (x->req->watch) {
        if (x->req->on_data(x->req->arg, p, len) != 0) {
            x->stopped_by_cb = 1;
            return 0;
        }
        return len;
    }
    x->write_rc = buf_append(&x->body, p, len);
    return x->write_rc == KERR_OK ? len : 0;
}

static int cancelled(struct k8s_client *c, const struct k8s_http_req *req)
{
    return atomic_load(&c->stopped) || (req->cancel && atomic_load(req->cancel));
}

/* cancelled() of a transfer; arg is the struct xfer (a ktime_sleep_cancellable check). */
static int xfer_cancelled(void *arg)
{
    struct xfer *x = arg;

    return cancelled(x->c, x->req);
}

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    return xfer_cancelled(arg);
}

/* Request headers; the bearer token line is wiped before the list is freed. */
static struct curl_slist *make_headers(const struct k8s_http_req *req, const char *token)
{
    struct curl_slist *l = NULL, *t;
    char ct[128];
    struct buf auth;

    buf_init(&auth, CFG_MAX_TOKEN + sizeof(BEARER_PREFIX));
    if (!(t = curl_slist_append(l, "Accept: application/json")))
        goto fail;
    l = t;
    if (!(t = curl_slist_append(l, "Expect:")))
        goto fail;
    l = t;
    if (req->content_type) {
        snprintf(ct, sizeof(ct), "Content-Type: %s", req->content_type);
        if (!(t = curl_slist_append(l, ct)))
            goto fail;
        l = t;
    }
    if (token && *token) {
        if (buf_appendf(&auth, "%s%s", BEARER_PREFIX, token) != KERR_OK ||
            !(t = curl_slist_append(l, buf_str(&auth))))
            goto fail;
        l = t;
    }
    if (auth.data)
        explicit_bzero(auth.data, auth.len);
    buf_release(&auth);
    return l;
fail:
    if (auth.data)
        explicit_bzero(auth.data, auth.len);
    buf_release(&auth);
    curl_slist_free_all(l);
    return NULL;
}

static void free_headers(struct curl_slist *l)
{
    struct curl_slist *p;

    for (p = l; p; p = p->next)
        explicit_bzero(p->data, strlen(p->data));
    curl_slist_free_all(l);
}

/* Per-request options on a freshly reset handle. Non-zero on failure. */
static int setup_request(struct xfer *x, const char *url, struct curl_slist *hdrs, char *errbuf)
{
    struct k8s_client *c = x->c;
    const struct k8s_http_req *req = x->req;
    CURL *h = x->h;
    int bad;

    curl_easy_reset(h);
    bad = setup_tls(c, h);
    bad |= curl_easy_setopt(h, CURLOPT_URL, url) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_SHARE, c->share) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_USERAGENT, c->user_agent) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, KEEPALIVE_S) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, KEEPALIVE_S) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, x) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_HEADERDATA, x) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_XFERINFODATA, x) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L) != CURLE_OK;
    if (req->watch) {
        bad |= curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, c->watch_idle_s) != CURLE_OK;
    } else {
        bad |= curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, attempt_timeout_ms(c, req)) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "gzip") != CURLE_OK;
    }
    if (strcmp(req->method, "GET") != 0)
        bad |= curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method) != CURLE_OK;
    if (req->body) {
        bad |=
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req->body_len) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body) != CURLE_OK;
    }
    return bad;
}

static double now_s(void)
{
    return (double)ktime_mono_ns() / (double)KTIME_NS_PER_SEC;
}

/* Map a failed curl transfer to an enum kerr. */
static enum kerr transport_error(const struct xfer *x, CURLcode cc, const char *errbuf,
                                 const char *url, struct kerr_info *err)
{
    const char *what = *errbuf ? errbuf : curl_easy_strerror(cc);

    if (x->write_rc == KERR_TOOBIG)
        return kerr_set(err, KERR_TOOBIG, "k8s: %s %s: response larger than %zu bytes",
                        x->req->method, url, x->c->max_body);
    if (x->write_rc != KERR_OK)
        return kerr_set(err, x->write_rc, "k8s: %s %s: storing the response", x->req->method, url);
    if (x->stopped_by_cb || cc == CURLE_ABORTED_BY_CALLBACK)
        return kerr_set(err, KERR_CANCELLED, "k8s: %s %s: cancelled", x->req->method, url);
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return kerr_set(err, KERR_TIMEOUT, "k8s: %s %s: %s", x->req->method, url, what);
    return kerr_set(err, KERR_HTTP, "k8s: %s %s: %s", x->req->method, url, what);
}

/*
 * One HTTP attempt. KERR_OK when an answer (any status) arrived: *status is
 * set and x->body holds the body (2xx non-watch) or the error body.
 */
static enum kerr attempt(struct xfer *x, const char *url, const char *token, long *status,
                         struct kerr_info *err)
{
    struct curl_slist *hdrs = make_headers(x->req, token);
    char errbuf[CURL_ERROR_SIZE] = "";
    double t0 = now_s();
    enum kerr rc = KERR_OK;
    CURLcode cc;

    *status = 0;
    if (!hdrs || setup_request(x, url, hdrs, errbuf)) {
        free_headers(hdrs);
        return kerr_set(err, KERR_NOMEM, "k8s: setting up %s %s", x->req->method, url);
    }
    cc = curl_easy_perform(x->h);
    curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, status);
    if (cc != CURLE_OK)
        rc = transport_error(x, cc, errbuf, url, err);
    if (x->c->on_done)
        x->c->on_done(x->c->on_done_arg, x->req->method, (int)*status, now_s() - t0);
    free_headers(hdrs);
    return rc;
}

/* The standard reason of a status, for answers that are not a metav1.Status (as client-go). */
static const char *status_reason(long status)
{
    switch (status) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 406:
        return "NotAcceptable";
    case 409:
        return "Conflict";
    case 410:
        return "Gone";
    case 415:
        return "UnsupportedMediaType";
    case 422:
        return "Invalid";
    case 429:
        return "TooManyRequests";
    case 500:
        return "InternalError";
    case 503:
        return "ServiceUnavailable";
    case 504:
        return "Timeout";
    default:
        return "";
    }
}

/* The body as one line of printable text, at most KERR_MSG_LEN - 1 bytes. */
static void body_text(const struct buf *body, char *out, size_t n)
{
    size_t i, j = 0;
    unsigned char ch;

    for (i = 0; i < body->len && j + 1 < n; i++) {
        ch = (unsigned char)body->data[i];
        out[j++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
    }
    while (j > 0 && out[j - 1] == ' ')
        j--;
    out[j] = '\0';
}

/* err from a non-2xx answer: the Status when the body is one, else the body text. */
static enum kerr api_error(long status, const struct buf *body, struct kerr_info *err)
{
    cJSON *st = NULL;
    const cJSON *kind, *msg, *reason;
    const char *why = status_reason(status);
    char text[KERR_MSG_LEN];
    enum kerr rc;

    if (body->len > 0)
        st = cJSON_ParseWithLengthOpts(body->data, body->len, NULL, 0);
    kind = cJSON_GetObjectItemCaseSensitive(st, "kind");
    msg = cJSON_GetObjectItemCaseSensitive(st, "message");
    reason = cJSON_GetObjectItemCaseSensitive(st, "reason");
    if (cJSON_IsString(kind) && strcmp(kind->valuestring, "Status") == 0) {
        if (cJSON_IsString(reason))
            why = reason->valuestring;
        if (cJSON_IsString(msg) && *msg->valuestring)
            snprintf(text, sizeof(text), "%s", msg->valuestring);
        else
            snprintf(text, sizeof(text), "%s (HTTP %ld)", *why ? why : "error", status);
    } else {
        body_text(body, text, sizeof(text));
        if (!*text)
            snprintf(text, sizeof(text), "HTTP %ld%s%s", status, *why ? " " : "", why);
    }
    rc = kerr_set_api(err, k8s_code_from_status((int)status, why), (int)status, why, "%s", text);
    cJSON_Delete(st);
    return rc;
}

/* Retry rule of k8s.h: 429 any verb, 5xx idempotent verbs, both only with Retry-After. */
static int should_retry(const struct k8s_client *c, const struct k8s_http_req *req, long status,
                        long retry_after, int tries)
{
    int idempotent = strcmp(req->method, "GET") == 0 || strcmp(req->method, "PUT") == 0 ||
                     strcmp(req->method, "DELETE") == 0;

    if (retry_after < 0 || tries >= c->max_retries)
        return 0;
    return status == 429 || (status >= 500 && status < 600 && idempotent);
}

/* Parse the 2xx body into *out (NULL for an empty body). */
static enum kerr parse_body(const struct buf *body, const char *url, int arena, cJSON **out,
                            struct kerr_info *err)
{
    if (!out || body->len == 0)
        return KERR_OK;
    if (arena)
        *out = jarena_parse(body->data, body->len, NULL);
    else
        *out = cJSON_ParseWithLengthOpts(body->data, body->len, NULL, 0);
    if (!*out)
        return kerr_set(err, KERR_PARSE, "k8s: %s: answer is not JSON", url);
    return KERR_OK;
}

/* Wait for the rate limiter and get the token. */
static enum kerr before_attempt(struct k8s_client *c, const struct k8s_http_req *req, char **token,
                                struct kerr_info *err)
{
    enum kerr rc;

    free(*token);
    *token = NULL;
    if (cancelled(c, req))
        return kerr_set(err, KERR_CANCELLED, "k8s: %s %s: cancelled", req->method, req->path);
    if (req->deadline_ms && ktime_mono_ms() >= req->deadline_ms)
        return kerr_set(err, KERR_TIMEOUT, "k8s: %s %s: the call's deadline passed", req->method,
                        req->path);
    if (c->rl &&
        (rc = rl_take(c->rl, req->deadline_ms ? left_ms(req) : -1, &c->stopped, err)) != KERR_OK)
        return rc;
    return cfg_token_get(c->token, token, err);
}

static enum kerr run(struct xfer *x, const char *url, char **token, struct kerr_info *err)
{
    struct k8s_client *c = x->c;
    long status, delay;
    int tries = 0, reauth = 0;
    enum kerr rc;

    for (;;) {
        if ((rc = before_attempt(c, x->req, token, err)) != KERR_OK)
            return rc;
        buf_reset(&x->body);
        x->retry_after = -1;
        x->write_rc = KERR_OK;
        if ((rc = attempt(x, url, *token, &status, err)) != KERR_OK)
            return rc;
        if (status >= 200 && status < 300)
            return KERR_OK;
        if (status == 401 && !reauth) {
            reauth = 1;
            cfg_token_invalidate(c->token);
            log_debug("k8s: 401, re-reading the token", "url", url);
            continue;
        }
        /* retry_after <= K8S_RETRY_AFTER_MAX_S: the product fits in a long. */
        delay = x->retry_after * 1000 < c->max_retry_delay_ms ? x->retry_after * 1000
                                                              : c->max_retry_delay_ms;
        if (!should_retry(c, x->req, status, x->retry_after, tries) ||
            (x->req->deadline_ms && ktime_mono_ms() + delay >= x->req->deadline_ms))
            return api_error(status, &x->body, err);
        tries++;
        log_debug("k8s: retrying after Retry-After", "url", url, "method", x->req->method);
        if (ktime_sleep_cancellable(delay, SLEEP_SLICE, xfer_cancelled, x))
            return kerr_set(err, KERR_CANCELLED, "k8s: %s %s: cancelled", x->req->method, url);
    }
}

/* Calls of k8s_http_do by this thread (k8s_thread_requests). */
static __thread unsigned long thread_requests;

unsigned long k8s_thread_requests(void)
{
    return thread_requests;
}

void k8s_thread_requests_charge(unsigned long n)
{
    thread_requests += n;
}

enum kerr k8s_http_do(struct k8s_client *c, const struct k8s_http_req *req, cJSON **out,
                      struct kerr_info *err)
{
    struct xfer x;
    struct buf url;
    char *token = NULL;
    enum kerr rc;

    if (out)
        *out = NULL;
    thread_requests++;
    memset(&x, 0, sizeof(x));
    x.c = c;
    x.req = req;
    buf_init(&x.body, c->max_body);
    buf_init(&url, 64 * 1024);
    if (buf_appendf(&url, "%s%s", c->url_base, req->path) != KERR_OK) {
        rc = kerr_set(err, KERR_TOOBIG, "k8s: request URL too long");
        goto out;
    }
    x.h = k8s_client_pool_get(c);
    if (!x.h) {
        rc = kerr_set(err, KERR_NOMEM, "k8s: curl_easy_init failed");
        goto out;
    }
    rc = run(&x, buf_str(&url), &token, err);
    if (rc == KERR_OK && !req->watch)
        rc = parse_body(&x.body, buf_str(&url), req->arena, out, err);
out:
    if (x.h)
        k8s_client_pool_put(c, x.h);
    if (token) {
        explicit_bzero(token, strlen(token));
        free(token);
    }
    buf_release(&url);
    buf_release(&x.body);
    return rc;
}
