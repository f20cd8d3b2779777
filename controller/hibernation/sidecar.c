/*
 * sidecar - POST /snapshot/{full,delta} to etcd-backup-restore through
 * CURLOPT_CONNECT_TO (see sidecar.h).
 */
#include "controller/hibernation/sidecar.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "common/buf.h"
#include "common/kjson.h"

#define CONNECT_TIMEOUT_MS 5000L

const char *sidecar_path(enum sidecar_kind kind, int final)
{
    if (kind == SIDECAR_DELTA)
        return "/snapshot/delta";
    if (kind == SIDECAR_LATEST)
        return "/snapshot/latest";
    return final ? "/snapshot/full?final=true" : "/snapshot/full";
}

void sidecar_result_release(struct sidecar_result *r)
{
    if (!r)
        return;
    cJSON_Delete(r->snapshot);
    memset(r, 0, sizeof(*r));
}

/* A host name that may go into a URL and a CONNECT_TO entry: no ':' '/' '@' or spaces. */
static int host_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 253)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '.'))
            return 0;
    return 1;
}

/* An IPv4 or IPv6 address in text form. */
static int ip_ok(const char *s)
{
    unsigned char a[16];

    return s && (inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1);
}

/* The answer body, capped; over is set when the cap stopped the transfer. */
struct sink {
    struct buf b;
    int over;
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct sink *s = arg;

    if (buf_append(&s->b, p, size * n) != KERR_OK) {
        s->over = 1;
        return 0; /* curl stops with CURLE_WRITE_ERROR */
    }
    return size * n;
}

static enum kerr curl_fail(CURLcode cc, const struct sink *body, const char *url,
                           struct kerr_info *err)
{
    if (cc == CURLE_ABORTED_BY_CALLBACK)
        return kerr_set(err, KERR_CANCELLED, "sidecar %s: cancelled", url);
    if (body->over)
        return kerr_set(err, KERR_TOOBIG, "sidecar %s: answer larger than %u bytes", url,
                        SIDECAR_MAX_BODY);
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return kerr_set(err, KERR_TIMEOUT, "sidecar %s: %s", url, curl_easy_strerror(cc));
    if (cc == CURLE_SSL_CONNECT_ERROR || cc == CURLE_PEER_FAILED_VERIFICATION ||
        cc == CURLE_SSL_CACERT_BADFILE || cc == CURLE_SSL_CERTPROBLEM)
        return kerr_set(err, KERR_TLS, "sidecar %s: %s", url, curl_easy_strerror(cc));
    return kerr_set(err, KERR_HTTP, "sidecar %s: %s", url, curl_easy_strerror(cc));
}

/* Fill out from a received answer. */
static enum kerr take_answer(const struct buf *body, const char *url, struct sidecar_result *out,
                             struct kerr_info *err)
{
    cJSON *v = NULL;
    enum kerr rc;

    if (out->http_status != 200) {
        snprintf(out->excerpt, sizeof(out->excerpt), "%s", body->data ? body->data : "");
        return KERR_OK;
    }
    rc = kjson_parse(body->data ? body->data : "", body->len, NULL, &v, NULL, err);
    if (rc != KERR_OK)
        return kerr_wrap(err, "sidecar %s: answer is not JSON", url);
    if (cJSON_IsNull(v)) {
        cJSON_Delete(v);
        return KERR_OK;
    }
    if (!cJSON_IsObject(v)) {
        cJSON_Delete(v);
        return kerr_set(err, KERR_PARSE, "sidecar %s: answer is not a Snapshot object", url);
    }
    out->snapshot = v;
    return KERR_OK;
}

/* The answer's one Date header, if it fits (several, or none: ""). */
static void take_date(CURL *h, struct sidecar_result *out)
{
    struct curl_header *hd = NULL;

    if (curl_easy_header(h, "Date", 0, CURLH_HEADER, -1, &hd) == CURLHE_OK && hd &&
        hd->amount == 1 && hd->value && strlen(hd->value) < sizeof(out->date))
        snprintf(out->date, sizeof(out->date), "%s", hd->value);
}

static int setup(CURL *h, const struct sidecar_target *t, const char *url, int get,
                 struct curl_slist *connect_to, long timeout_ms, struct sink *body)
{
    struct curl_blob blob;
    int bad = 0;

    bad |= curl_easy_setopt(h, CURLOPT_URL, url) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to) != CURLE_OK;
    if (!get) {
        bad |= curl_easy_setopt(h, CURLOPT_POST, 1L) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_POSTFIELDS, "") != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L) != CURLE_OK;
    }
    bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                            timeout_ms < CONNECT_TIMEOUT_MS ? timeout_ms : CONNECT_TIMEOUT_MS) !=
           CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_USERAGENT, "etcd-warden") != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
    bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, body) != CURLE_OK;
    if (t->ca_pem) {
        blob = (struct curl_blob){ (void *)t->ca_pem, t->ca_len, CURL_BLOB_COPY };
        bad |= curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob) != CURLE_OK;
        bad |= curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2) != CURLE_OK;
    }
    return bad;
}

/*
 * curl_easy_perform on a multi handle, checking t->cancel and t->abandon
 * between polls (CURLE_ABORTED_BY_CALLBACK once either says so).
 */
static CURLcode perform(CURL *h, const struct sidecar_target *t)
{
    CURLM *m = curl_multi_init();
    CURLcode cc = CURLE_OUT_OF_MEMORY;
    CURLMsg *msg;
    int running = 1, left;

    if (!m)
        return cc;
    if (curl_multi_add_handle(m, h) != CURLM_OK)
        goto out;
    while (running) {
        if ((t->cancel && atomic_load(t->cancel)) || (t->abandon && t->abandon(t->abandon_arg))) {
            cc = CURLE_ABORTED_BY_CALLBACK;
            goto out;
        }
        if (curl_multi_perform(m, &running) != CURLM_OK ||
            (running && curl_multi_poll(m, NULL, 0, (int)SIDECAR_POLL_MS, NULL) != CURLM_OK)) {
            cc = CURLE_RECV_ERROR;
            goto out;
        }
    }
    cc = CURLE_RECV_ERROR;
    while ((msg = curl_multi_info_read(m, &left)))
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == h)
            cc = msg->data.result;
out:
    curl_multi_remove_handle(m, h);
    curl_multi_cleanup(m);
    return cc;
}

enum kerr sidecar_snapshot(const struct sidecar_target *t, enum sidecar_kind kind, int final,
                           long timeout_ms, struct sidecar_result *out, struct kerr_info *err)
{
    CURL *h = NULL;
    struct curl_slist *connect_to = NULL;
    char url[512], entry[400];
    struct sink body = { .over = 0 };
    CURLcode cc;
    enum kerr rc;
    int v6;

    memset(out, 0, sizeof(*out));
    buf_init(&body.b, SIDECAR_MAX_BODY);
    if (!t || !host_ok(t->host) || !ip_ok(t->ip) || t->port <= 0 || t->port > 65535 ||
        timeout_ms <= 0 || (t->ca_pem && t->ca_len == 0))
        return kerr_set(err, KERR_INVAL, "sidecar: bad target (host, IP, port or CA)");
    v6 = strchr(t->ip, ':') != NULL;
    snprintf(url, sizeof(url), "%s://%s:%d%s", t->ca_pem ? "https" : "http", t->host, t->port,
             sidecar_path(kind, final));
    snprintf(entry, sizeof(entry), "%s:%d:%s%s%s:%d", t->host, t->port, v6 ? "[" : "", t->ip,
             v6 ? "]" : "", t->port);
    rc = kerr_set(err, KERR_NOMEM, "sidecar: out of memory");
    if (!(connect_to = curl_slist_append(NULL, entry)) || !(h = curl_easy_init()))
        goto out;
    rc = kerr_set(err, KERR_INTERNAL, "sidecar: curl option refused");
    if (setup(h, t, url, kind == SIDECAR_LATEST, connect_to, timeout_ms, &body))
        goto out;
    cc = perform(h, t);
    if (cc != CURLE_OK) {
        rc = curl_fail(cc, &body, url, err);
        goto out;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->http_status);
    take_date(h, out);
    rc = take_answer(&body.b, url, out, err);
out:
    curl_easy_cleanup(h);
    curl_slist_free_all(connect_to);
    buf_release(&body.b);
    return rc;
}
