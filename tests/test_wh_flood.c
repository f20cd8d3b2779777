/*
 * webhook/wh_server over real TLS near its connection limit: idle connections that never send
 * a byte, more than the limit, do not keep a review out (the least recently active idle ones
 * are dropped, and counted), and a connection whose request is in progress is not dropped
 * (issue 30, item 7; e2e attack12_conn_flood; the order: test_wh_conns).
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/metrics.h"
#include "tests/support/whfix.h"
#include "webhook/wh_server.h"

#define REVIEW                                                                                   \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":" \
    "\"r-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},\"operation\":" \
    "\"UPDATE\",\"userInfo\":{\"username\":\"alice\"},\"object\":{\"metadata\":{\"namespace\":"  \
    "\"ns\",\"name\":\"c\"}},\"oldObject\":{\"metadata\":{\"name\":\"c\"}}}}"

/* A review whose body is sent up to `before` bytes, then held until go (bounded), then whole. */
struct held {
    const struct whfix *e;
    size_t before, total, sent;
    atomic_int go;
    long status;
};

static size_t held_read(char *p, size_t sz, size_t n, void *arg)
{
    struct held *h = arg;
    size_t want = sz * n, i;
    int waited;

    for (waited = 0; h->sent >= h->before && !atomic_load(&h->go) && waited < 1000; waited++)
        usleep(10000);
    if (want > h->total - h->sent)
        want = h->total - h->sent;
    if (h->sent < h->before && want > h->before - h->sent)
        want = h->before - h->sent;
    for (i = 0; i < want; i++) /* REVIEW, then blanks: one JSON document */
        p[i] = h->sent + i < sizeof(REVIEW) - 1 ? REVIEW[h->sent + i] : ' ';
    h->sent += want;
    return want;
}

static size_t ignore(char *p, size_t sz, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return sz * n;
}

/*
 * POST /webhooks/etcdcomponents on c (NULL: a new handle); the body REVIEW, or held's when h is
 * set. Returns the status.
 */
static long post_on(CURL *reuse, const struct whfix *e, struct held *h)
{
    struct curl_blob ca = { e->ca.cert, strlen(e->ca.cert), CURL_BLOB_COPY };
    struct curl_slist *hd = NULL;
    char url[96], cl[64];
    long status = 0;
    CURL *c = reuse ? reuse : curl_easy_init();

    snprintf(url, sizeof(url), "https://127.0.0.1:%u/webhooks/etcdcomponents",
             wh_server_port(e->srv));
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ignore);
    hd = curl_slist_append(hd, "Content-Type: application/json");
    hd = curl_slist_append(hd, "Expect:");
    if (h) {
        snprintf(cl, sizeof(cl), "Content-Length: %zu", h->total);
        hd = curl_slist_append(hd, cl);
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "POST");
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)h->total);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, held_read);
        curl_easy_setopt(c, CURLOPT_READDATA, h);
    } else {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, REVIEW);
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hd);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (!reuse)
        curl_easy_cleanup(c);
    curl_slist_free_all(hd);
    return status;
}

static long post(const struct whfix *e, struct held *h)
{
    return post_on(NULL, e, h);
}

static void *held_post(void *arg)
{
    struct held *h = arg;

    h->status = post(h->e, h);
    return NULL;
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

/* warden_webhook_connections_dropped_total as rendered (-1: absent). */
static long dropped(const struct whfix *e)
{
    static const char name[] = "\nwarden_webhook_connections_dropped_total ";
    struct buf text;
    const char *at;
    long n = -1;

    buf_init(&text, 1 << 20);
    cr_assert_eq(metrics_render(e->reg, &text, NULL), KERR_OK);
    at = strstr(buf_str(&text), name);
    if (at)
        n = strtol(at + sizeof(name) - 1, NULL, 10);
    buf_release(&text);
    return n;
}

Test(wh_flood, idle_connections_past_the_limit_leave_room_and_a_request_in_progress_stays)
{
    struct held h;
    struct whfix e;
    pthread_t t;
    int fds[80], i;

    whfix_init_conns(&e, 0, 8000, 0, 0, 32, 0);
    cr_expect_eq(dropped(&e), 0);
    memset(&h, 0, sizeof(h));
    h.e = &e;
    h.before = 64;
    h.total = 4096;
    atomic_init(&h.go, 0);
    pthread_create(&t, NULL, held_post, &h);
    for (i = 0; i < 1000 && wh_server_in_flight(e.srv) < 1; i++)
        usleep(5000);
    cr_assert_geq(wh_server_in_flight(e.srv), 1, "the held review never began");
    /* 80 connections that never send a byte, the first ones older than any other */
    for (i = 0; i < 80; i++)
        fds[i] = tcp_connect(wh_server_port(e.srv));
    for (i = 0; i < 1000 && dropped(&e) < 80 - 32; i++)
        usleep(5000);
    cr_expect_geq(dropped(&e), 80 - 32, "the idle connections past the limit were not dropped");
    cr_expect_eq(post(&e, NULL), 200, "a review among 80 idle connections (limit 32)");
    atomic_store(&h.go, 1);
    pthread_join(t, NULL);
    cr_expect_eq(h.status, 200, "the review in progress before the flood was dropped (%ld)",
                 h.status);
    for (i = 0; i < 80; i++)
        close(fds[i]);
    whfix_release(&e);
}

/*
 * A connection that finished its TLS handshake and sends no request is closed after the
 * handshake time; one that sent a request stays open, idle, past it (kube-apiserver's
 * keep-alive). (libmicrohttpd 0.9.75 times out no connection still in its TLS handshake: those
 * are dropped under pressure, as above.)
 */
Test(wh_flood, the_handshake_time_is_for_a_connections_first_request_only)
{
    struct whfix e;
    struct curl_blob ca;
    char url[96], byte[64];
    long reused = -1;
    size_t n = 0;
    CURLcode rc = CURLE_AGAIN;
    CURL *c, *silent;
    int i;

    whfix_init_conns(&e, 0, 8000, 0, 0, 0, 1);
    ca = (struct curl_blob){ e.ca.cert, strlen(e.ca.cert), CURL_BLOB_COPY };
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/", wh_server_port(e.srv));
    silent = curl_easy_init();
    curl_easy_setopt(silent, CURLOPT_URL, url);
    curl_easy_setopt(silent, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(silent, CURLOPT_CONNECT_ONLY, 1L);
    cr_assert_eq(curl_easy_perform(silent), CURLE_OK, "the TLS handshake");
    c = curl_easy_init();
    cr_assert_eq(post_on(c, &e, NULL), 200);
    for (i = 0; i < 100 && rc == CURLE_AGAIN; i++) {
        usleep(50000);
        rc = curl_easy_recv(silent, byte, sizeof(byte), &n);
    }
    cr_expect(rc != CURLE_AGAIN && n == 0, "a connection without a request was not closed in 5 s");
    cr_assert_eq(post_on(c, &e, NULL), 200);
    curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &reused);
    cr_expect_eq(reused, 0, "the connection that served a request was closed after 1 s idle");
    curl_easy_cleanup(c);
    curl_easy_cleanup(silent);
    whfix_release(&e);
}
