/*
 * Tests of webhook/wh_server, wh_tls and wh_dispatch over real HTTPS on
 * 127.0.0.1 with libcurl: the answers and HTTP errors, TLS 1.2+ only,
 * certificate hot-reload with keep-alive connections kept, the per-request
 * budget against a slow upload, the drain, and the metrics.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/kjson.h"
#include "common/metrics.h"
#include "common/tlsx.h"
#include "tests/support/whfix.h"
#include "webhook/wh_server.h"

struct reply {
    long status;
    struct buf body;
    CURLcode rc;
    char subject[256];
};

static size_t on_body(char *p, size_t sz, size_t n, void *arg)
{
    struct reply *r = arg;

    return buf_append(&r->body, p, sz * n) == KERR_OK ? sz * n : 0;
}

static CURL *client(const struct whfix *e)
{
    CURL *c = curl_easy_init();
    struct curl_blob ca = { e->ca.cert, strlen(e->ca.cert), CURL_BLOB_COPY };

    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_CERTINFO, 1L);
    return c;
}

static void perform(CURL *c, const struct whfix *e, const char *method, const char *path,
                    const char *ctype, const char *body, struct reply *r)
{
    char url[128];
    struct curl_slist *h = NULL;
    char hdr[128];
    struct curl_certinfo *ci = NULL;

    memset(r, 0, sizeof(*r));
    buf_init(&r->body, 1 << 20);
    snprintf(url, sizeof(url), "https://127.0.0.1:%u%s", wh_server_port(e->srv), path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    if (ctype) {
        snprintf(hdr, sizeof(hdr), "Content-Type: %s", ctype);
        h = curl_slist_append(h, hdr);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    r->rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    if (curl_easy_getinfo(c, CURLINFO_CERTINFO, &ci) == CURLE_OK && ci && ci->num_of_certs > 0) {
        struct curl_slist *s;

        for (s = ci->certinfo[0]; s; s = s->next) {
            if (strncmp(s->data, "Subject:", 8) == 0)
                snprintf(r->subject, sizeof(r->subject), "%s", s->data + 8);
        }
    }
    curl_slist_free_all(h);
}

static void request(const struct whfix *e, const char *method, const char *path, const char *ctype,
                    const char *body, struct reply *r)
{
    CURL *c = client(e);

    perform(c, e, method, path, ctype, body, r);
    curl_easy_cleanup(c);
}

#define REVIEW                                                                                   \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":" \
    "\"r-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},\"operation\":" \
    "\"UPDATE\",\"userInfo\":{\"username\":\"alice\"},\"object\":{\"metadata\":{\"namespace\":"  \
    "\"ns\",\"name\":\"c\",\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\","         \
    "\"app.kubernetes.io/part-of\":\"e\"}}},\"oldObject\":{\"metadata\":{\"name\":\"c\"}}}}"

static cJSON *parse(const struct reply *r)
{
    cJSON *doc = NULL;

    cr_assert_eq(kjson_parse(buf_str(&r->body), r->body.len, NULL, &doc, NULL, NULL), KERR_OK,
                 "not JSON: %s", buf_str(&r->body));
    return doc;
}

Test(wh_server, answers_reviews_and_http_errors)
{
    struct whfix e;
    struct reply r;
    cJSON *doc;

    whfix_init(&e, 4096, 2000, 0);
    request(&e, "POST", "/webhooks/etcdcomponents", "application/json", REVIEW, &r);
    cr_assert_eq(r.rc, CURLE_OK, "%s", curl_easy_strerror(r.rc));
    cr_expect_eq(r.status, 200);
    doc = parse(&r);
    cr_expect_str_eq(kjson_get_str(doc, "response.uid"), "r-1");
    cr_expect_str_eq(kjson_get_str(doc, "response.status.message"),
                     "resource: ns/c  is not part of any Etcd, skipping validations");
    cJSON_Delete(doc);
    buf_release(&r.body);

    request(&e, "POST", "/webhooks/etcd", "application/json; charset=utf-8", REVIEW, &r);
    cr_expect_eq(r.status, 200);
    buf_release(&r.body);

    request(&e, "GET", "/webhooks/etcd", NULL, NULL, &r);
    cr_expect_eq(r.status, 405);
    buf_release(&r.body);

    request(&e, "POST", "/webhooks/etcd-mutate", "text/plain", REVIEW, &r);
    cr_expect_eq(r.status, 415);
    doc = parse(&r);
    cr_expect_str_eq(kjson_get_str(doc, "response.status.message"),
                     "contentType=text/plain, expected application/json");
    cJSON_Delete(doc);
    buf_release(&r.body);

    request(&e, "POST", "/webhooks/etcdcomponents", "application/json", "{\"request\":7}", &r);
    cr_expect_eq(r.status, 400);
    doc = parse(&r);
    cr_expect_str_eq(kjson_get_str(doc, "response.status.message"), "request: expected an object");
    cJSON_Delete(doc);
    buf_release(&r.body);

    request(&e, "POST", "/nope", "application/json", REVIEW, &r);
    cr_expect_eq(r.status, 404);
    buf_release(&r.body);
    whfix_release(&e);
}

Test(wh_server, body_limit)
{
    struct whfix e;
    struct reply r;
    char *big = malloc(8192);
    struct curl_slist *h = NULL;
    CURL *c;

    whfix_init(&e, 4096, 2000, 0);
    memset(big, ' ', 8191);
    big[0] = '{';
    big[8190] = '}';
    big[8191] = '\0';
    request(&e, "POST", "/webhooks/etcd", "application/json", big, &r);
    cr_expect_eq(r.status, 413);
    cr_expect_not_null(strstr(buf_str(&r.body), "limit is 4096 bytes"));
    buf_release(&r.body);
    /* Without a Content-Length (chunked): found while reading. */
    c = client(&e);
    h = curl_slist_append(h, "Transfer-Encoding: chunked");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    perform(c, &e, "POST", "/webhooks/etcd", "application/json", big, &r);
    cr_expect_eq(r.status, 413);
    buf_release(&r.body);
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    free(big);
    whfix_release(&e);
}

/*
 * The default body limit is kube-apiserver's own request limit, 3 MiB: a
 * body one byte larger gets 413 (before: 8 MiB passed to the parser).
 */
Test(wh_server, default_body_limit_is_3_mib)
{
    struct whfix e;
    struct reply r;
    size_t n = 3u * 1024u * 1024u + 1u;
    char *big = malloc(n + 1);

    cr_assert_not_null(big);
    cr_assert_eq(WH_SERVER_DEFAULT_MAX_BODY, 3u * 1024u * 1024u);
    whfix_init(&e, 0, 5000, 0);
    memset(big, ' ', n);
    big[0] = '{';
    big[n - 1] = '}';
    big[n] = '\0';
    request(&e, "POST", "/webhooks/etcd", "application/json", big, &r);
    cr_expect_eq(r.status, 413);
    cr_expect_not_null(strstr(buf_str(&r.body), "limit is 3145728 bytes"), "%s", buf_str(&r.body));
    buf_release(&r.body);
    whfix_release(&e);
    free(big);
}

Test(wh_server, tls_1_1_is_refused)
{
    struct whfix e;
    struct reply r;
    CURL *c;

    whfix_init(&e, 4096, 2000, 0);
    c = client(&e);
    curl_easy_setopt(c, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_0 | CURL_SSLVERSION_MAX_TLSv1_1);
    perform(c, &e, "POST", "/webhooks/etcd", "application/json", REVIEW, &r);
    cr_expect_neq(r.rc, CURLE_OK);
    buf_release(&r.body);
    curl_easy_setopt(c, CURLOPT_SSLVERSION, CURL_SSLVERSION_TLSv1_2 | CURL_SSLVERSION_MAX_TLSv1_2);
    perform(c, &e, "POST", "/webhooks/etcd", "application/json", REVIEW, &r);
    cr_expect_eq(r.rc, CURLE_OK, "%s", curl_easy_strerror(r.rc));
    cr_expect_eq(r.status, 200);
    buf_release(&r.body);
    curl_easy_cleanup(c);
    whfix_release(&e);
}

Test(wh_server, certificate_hot_reload_keeps_connections)
{
    struct whfix e;
    struct reply r;
    CURL *kept, *fresh;
    long conns = 0;
    int i;

    whfix_init(&e, 4096, 2000, 0);
    cr_assert_eq(wh_tls_start_watch(e.tls, NULL), KERR_OK);
    kept = client(&e);
    perform(kept, &e, "POST", "/webhooks/etcd", "application/json", REVIEW, &r);
    cr_assert_eq(r.status, 200);
    cr_expect_not_null(strstr(r.subject, "first"), "%s", r.subject);
    buf_release(&r.body);
    whfix_write_pair(&e, "second");
    /* Poll with a deadline until a new connection is served the new certificate. */
    for (i = 0; i < 200; i++) {
        fresh = client(&e);
        perform(fresh, &e, "POST", "/webhooks/etcd", "application/json", REVIEW, &r);
        curl_easy_cleanup(fresh);
        buf_release(&r.body);
        if (strstr(r.subject, "second"))
            break;
        usleep(20000);
    }
    cr_expect_not_null(strstr(r.subject, "second"), "never reloaded: %s", r.subject);
    cr_expect_geq(wh_tls_generation(e.tls), 2);
    /* The keep-alive connection from before the swap still answers, on the same connection. */
    perform(kept, &e, "POST", "/webhooks/etcd", "application/json", REVIEW, &r);
    cr_expect_eq(r.status, 200);
    curl_easy_getinfo(kept, CURLINFO_NUM_CONNECTS, &conns);
    cr_expect_eq(conns, 0, "the kept connection was re-opened");
    buf_release(&r.body);
    curl_easy_cleanup(kept);
    /* A broken pair is refused and the good one stays. */
    {
        FILE *f = fopen(e.key, "w");

        fputs("not a key", f);
        fclose(f);
    }
    cr_expect_neq(wh_tls_reload(e.tls, NULL), KERR_OK);
    request(&e, "POST", "/webhooks/etcd", "application/json", REVIEW, &r);
    cr_expect_eq(r.status, 200);
    buf_release(&r.body);
    whfix_release(&e);
}

struct slow_upload {
    int calls;
};

static size_t slow_read(char *p, size_t sz, size_t n, void *arg)
{
    struct slow_upload *u = arg;

    (void)sz;
    (void)n;
    if (u->calls++ >= 200)
        return 0;
    usleep(50000);
    p[0] = ' ';
    return 1;
}

Test(wh_server, slow_upload_is_cut_at_the_budget)
{
    struct whfix e;
    struct reply r;
    struct slow_upload u = { 0 };
    struct curl_slist *h = NULL;
    struct timespec t0, t1;
    CURL *c;

    whfix_init(&e, 4096, 300, 0);
    c = client(&e);
    h = curl_slist_append(h, "Transfer-Encoding: chunked");
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, slow_read);
    curl_easy_setopt(c, CURLOPT_READDATA, &u);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    perform(c, &e, "POST", "/webhooks/etcd", "application/json", NULL, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_expect_neq(r.status, 200, "a 10 s upload was answered");
    cr_expect_lt(u.calls, 200, "the whole slow body was read (the budget is 300 ms)");
    buf_release(&r.body);
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    whfix_release(&e);
}

struct bg {
    const struct whfix *e;
    struct reply r;
};

static void *bg_request(void *arg)
{
    struct bg *b = arg;

    request(b->e, "POST", "/webhooks/etcdcomponents", "application/json", REVIEW, &b->r);
    return NULL;
}

Test(wh_server, drain_finishes_reviews_in_flight)
{
    struct whfix e;
    struct bg b;
    pthread_t t;
    struct reply r;
    int i;

    whfix_init(&e, 4096, 5000, 0);
    e.lookup_delay_ms = 400;
    memset(&b, 0, sizeof(b));
    b.e = &e;
    pthread_create(&t, NULL, bg_request, &b);
    for (i = 0; i < 500 && wh_server_in_flight(e.srv) == 0; i++)
        usleep(2000);
    cr_assert_gt(wh_server_in_flight(e.srv), 0, "the review never arrived");
    cr_expect_eq(wh_server_drain(e.srv, 3000), 0);
    pthread_join(t, NULL);
    cr_expect_eq(b.r.rc, CURLE_OK, "%s", curl_easy_strerror(b.r.rc));
    cr_expect_eq(b.r.status, 200);
    buf_release(&b.r.body);
    e.lookup_delay_ms = 0;
    request(&e, "POST", "/webhooks/etcd", "application/json", REVIEW, &r);
    cr_expect_neq(r.rc, CURLE_OK, "a drained server accepted a connection");
    buf_release(&r.body);
    whfix_release(&e);
}

Test(wh_server, metrics)
{
    struct whfix e;
    struct reply r;
    struct buf text;
    int i;

    whfix_init(&e, 4096, 2000, 0);
    for (i = 0; i < 3; i++) {
        request(&e, "POST", "/webhooks/etcdcomponents", "application/json", REVIEW, &r);
        buf_release(&r.body);
    }
    request(&e, "PUT", "/webhooks/etcdcomponents", "application/json", REVIEW, &r);
    buf_release(&r.body);
    /* The completion notice of a request may run just after the client got the answer. */
    for (i = 0; i < 500 && wh_server_in_flight(e.srv) > 0; i++)
        usleep(2000);
    buf_init(&text, 1 << 20);
    cr_assert_eq(metrics_render(e.reg, &text, NULL), KERR_OK);
    cr_expect(strstr(buf_str(&text), "controller_runtime_webhook_requests_total{code=\"200\","
                                     "webhook=\"/webhooks/etcdcomponents\"} 3") != NULL ||
                  strstr(buf_str(&text),
                         "controller_runtime_webhook_requests_total{webhook=\"/webhooks/"
                         "etcdcomponents\",code=\"200\"} 3") != NULL,
              "%s", buf_str(&text));
    cr_expect_not_null(strstr(buf_str(&text), "code=\"405\""), "%s", buf_str(&text));
    cr_expect_not_null(strstr(buf_str(&text), "controller_runtime_webhook_latency_seconds_count{"
                                              "webhook=\"/webhooks/etcdcomponents\"} 3"));
    cr_expect_not_null(strstr(buf_str(&text), "controller_runtime_webhook_requests_in_flight{"
                                              "webhook=\"/webhooks/etcdcomponents\"} 0"));
    cr_expect_not_null(strstr(buf_str(&text), "warden_webhook_decisions_total{webhook=\"/webhooks/"
                                              "etcdcomponents\",result=\"allowed\"} 3"));
    cr_expect_not_null(strstr(buf_str(&text), "certwatcher_read_certificate_total 1"));
    buf_release(&text);
    whfix_release(&e);
}

static int tcp_connect(unsigned short port)
{
    struct sockaddr_in a;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* Idle and half-open connections (no TLS handshake, a partial request) do not hold up a review. */
Test(wh_server, idle_connections_do_not_starve_reviews)
{
    struct whfix e;
    struct reply r;
    struct timespec t0, t1;
    int fds[64], i;

    whfix_init(&e, 4096, 20000, 0);
    for (i = 0; i < 64; i++) {
        fds[i] = tcp_connect(wh_server_port(e.srv));
        if (i % 2)
            cr_assert_eq(write(fds[i], "\x16\x03\x01", 3), 3); /* a TLS record header, no more */
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    request(&e, "POST", "/webhooks/etcdcomponents", "application/json", REVIEW, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_expect_eq(r.status, 200);
    /* waiting behind them would take at least one 20 s budget */
    cr_expect_lt((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, 10000,
                 "a review waited behind idle connections");
    buf_release(&r.body);
    for (i = 0; i < 64; i++)
        close(fds[i]);
    whfix_release(&e);
}

/* The per-IP limit refuses one more connection from an address that holds its share. */
Test(wh_server, per_ip_limit)
{
    struct whfix e;
    struct reply r;
    int fds[3], i;

    whfix_init(&e, 4096, 2000, 3);
    for (i = 0; i < 3; i++)
        fds[i] = tcp_connect(wh_server_port(e.srv));
    /* Wait (with a deadline) until the server has accepted all three. */
    for (i = 0; i < 200; i++) {
        request(&e, "POST", "/webhooks/etcd", "application/json", REVIEW, &r);
        buf_release(&r.body);
        if (r.rc != CURLE_OK)
            break;
        usleep(5000);
    }
    cr_expect_neq(r.rc, CURLE_OK, "a fourth connection from 127.0.0.1 was served");
    close(fds[0]);
    for (i = 0; i < 200; i++) {
        request(&e, "POST", "/webhooks/etcd", "application/json", REVIEW, &r);
        buf_release(&r.body);
        if (r.rc == CURLE_OK)
            break;
        usleep(5000);
    }
    cr_expect_eq(r.rc, CURLE_OK, "no connection once one was closed");
    cr_expect_eq(r.status, 200);
    close(fds[1]);
    close(fds[2]);
    whfix_release(&e);
}

/* An upload that sends its first `before` bytes, then waits for go (bounded), then the rest. */
struct held_upload {
    size_t before, total, sent;
    atomic_int go;
};

static size_t held_read(char *p, size_t sz, size_t n, void *arg)
{
    struct held_upload *u = arg;
    size_t want = sz * n, i;
    int waited;

    for (waited = 0; u->sent >= u->before && !atomic_load(&u->go) && waited < 1000; waited++)
        usleep(10000);
    if (u->sent >= u->total)
        return 0;
    if (want > u->total - u->sent)
        want = u->total - u->sent;
    if (u->sent < u->before && want > u->before - u->sent)
        want = u->before - u->sent;
    /* REVIEW first, then blanks: one JSON document of u->total bytes */
    for (i = 0; i < want; i++)
        p[i] = u->sent + i < sizeof(REVIEW) - 1 ? REVIEW[u->sent + i] : ' ';
    u->sent += want;
    return want;
}

struct held_bg {
    const struct whfix *e;
    struct held_upload u;
    struct reply r;
};

static void *held_request(void *arg)
{
    struct held_bg *b = arg;
    struct curl_slist *h = NULL;
    char cl[64];
    CURL *c = client(b->e);

    snprintf(cl, sizeof(cl), "Content-Length: %zu", b->u.total);
    h = curl_slist_append(h, cl);
    h = curl_slist_append(h, "Expect:");
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)b->u.total);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, held_read);
    curl_easy_setopt(c, CURLOPT_READDATA, &b->u);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    perform(c, b->e, "POST", "/webhooks/etcdcomponents", "application/json", NULL, &b->r);
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    return NULL;
}

/* Bodies held by all connections stay under the server's cap: the review past it gets 503, the
 * one held is decided, and nothing stays counted. */
Test(wh_server, buffered_bodies_are_capped)
{
    struct whfix e;
    struct held_bg a;
    struct reply r;
    pthread_t t;
    char *body;
    int i;

    whfix_init_buffered(&e, 48 * 1024, 5000, 0, 64 * 1024);
    memset(&a, 0, sizeof(a));
    a.e = &e;
    a.u.before = 40 * 1024;
    a.u.total = 44 * 1024;
    atomic_init(&a.u.go, 0);
    pthread_create(&t, NULL, held_request, &a);
    for (i = 0; i < 1000 && wh_server_buffered(e.srv) < 32 * 1024; i++)
        usleep(5000);
    cr_assert_geq(wh_server_buffered(e.srv), 32 * 1024, "the held upload never arrived");
    /* a second review of 40 KiB while the first holds 32-40 KiB: past 64 KiB */
    body = malloc(40 * 1024 + 1);
    cr_assert_not_null(body);
    memset(body, ' ', 40 * 1024);
    memcpy(body, REVIEW, sizeof(REVIEW) - 1);
    body[40 * 1024] = '\0';
    request(&e, "POST", "/webhooks/etcdcomponents", "application/json", body, &r);
    cr_expect_eq(r.status, 503, "a review past the buffered cap: %ld %s", r.status,
                 buf_str(&r.body));
    cr_expect(strstr(buf_str(&r.body), "busy") != NULL, "%s", buf_str(&r.body));
    buf_release(&r.body);
    atomic_store(&a.u.go, 1);
    pthread_join(t, NULL);
    cr_expect_eq(a.r.status, 200, "the held review: %ld %s", a.r.status, buf_str(&a.r.body));
    buf_release(&a.r.body);
    /* nothing stays counted: the same review alone is decided */
    request(&e, "POST", "/webhooks/etcdcomponents", "application/json", body, &r);
    cr_expect_eq(r.status, 200, "%ld %s", r.status, buf_str(&r.body));
    cr_expect_eq(wh_server_buffered(e.srv), 0);
    buf_release(&r.body);
    free(body);
    whfix_release(&e);
}
