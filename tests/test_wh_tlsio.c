/*
 * Tests of webhook/wh_tlsio: the read-ahead pull function over a socket
 * pair, then the HTTPS server reading through it. A GnuTLS client that can
 * hold back its records sends requests pipelined in one record and in
 * several records of one TCP write, bodies split across records (the
 * server buffers them) and chunked, and a long run of keep-alive requests
 * on one connection, each answer checked by its uid.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "common/buf.h"
#include "common/ktime.h"
#include "tests/support/whfix.h"
#include "webhook/wh_server.h"
#include "webhook/wh_tlsio.h"

/* ---- the pull function ---- */

static void pair(int sv[2])
{
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cr_assert_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
}

Test(wh_tlsio, reads_ahead_and_serves_from_the_buffer)
{
    struct wh_tlsio io;
    char out[64];
    int sv[2];

    pair(sv);
    wh_tlsio_init(&io, sv[0]);
    errno = 0;
    cr_expect_eq(wh_tlsio_read(&io, out, 5), -1, "nothing to read yet");
    cr_expect(errno == EAGAIN || errno == EWOULDBLOCK);
    cr_assert_eq(write(sv[1], "0123456789", 10), 10);
    cr_expect_eq(wh_tlsio_read(&io, out, 3), 3);
    cr_expect_eq(memcmp(out, "012", 3), 0);
    cr_expect_eq(wh_tlsio_buffered(&io), 7, "the rest was read with the first call");
    cr_assert_eq(write(sv[1], "abc", 3), 3);
    cr_expect_eq(wh_tlsio_read(&io, out, sizeof(out)), 7, "the buffer first, no socket read");
    cr_expect_eq(memcmp(out, "3456789", 7), 0);
    cr_expect_eq(wh_tlsio_read(&io, out, sizeof(out)), 3);
    cr_expect_eq(memcmp(out, "abc", 3), 0);
    cr_expect_eq(wh_tlsio_buffered(&io), 0);
    close(sv[1]);
    cr_expect_eq(wh_tlsio_read(&io, out, sizeof(out)), 0, "end of stream");
    wh_tlsio_release(&io);
    wh_tlsio_release(&io);
    close(sv[0]);
}

Test(wh_tlsio, large_reads_go_straight_to_the_caller)
{
    static char in[WH_TLSIO_READAHEAD + 100], out[sizeof(in)];
    struct wh_tlsio io;
    size_t got = 0;
    ssize_t n;
    int sv[2];

    pair(sv);
    memset(in, 'x', sizeof(in));
    in[sizeof(in) - 1] = 'y';
    wh_tlsio_init(&io, sv[0]);
    cr_assert_eq(write(sv[1], in, sizeof(in)), (ssize_t)sizeof(in));
    while (got < sizeof(in) && (n = wh_tlsio_read(&io, out + got, sizeof(out) - got)) > 0) {
        cr_expect_eq(wh_tlsio_buffered(&io), 0);
        got += (size_t)n;
    }
    cr_expect_eq(got, sizeof(in));
    cr_expect_eq(memcmp(in, out, sizeof(in)), 0);
    cr_expect_null(io.buf, "no buffer was needed");
    wh_tlsio_release(&io);
    close(sv[0]);
    close(sv[1]);
}

/* ---- the server, read through it ---- */

/* A TLS client whose records can be held back and written to the socket together. */
struct client {
    int fd;
    int hold;       /* records are kept in out until flush */
    struct buf out; /* held records */
    struct buf in;  /* plaintext received */
    gnutls_session_t s;
    gnutls_certificate_credentials_t cred;
};

static ssize_t client_push(gnutls_transport_ptr_t ptr, const void *data, size_t n)
{
    struct client *c = ptr;

    if (!c->hold)
        return send(c->fd, data, n, MSG_NOSIGNAL);
    return buf_append(&c->out, data, n) == KERR_OK ? (ssize_t)n : -1;
}

static ssize_t client_pull(gnutls_transport_ptr_t ptr, void *data, size_t n)
{
    struct client *c = ptr;

    return recv(c->fd, data, n, 0);
}

static void flush(struct client *c)
{
    size_t off = 0;
    ssize_t n;

    while (off < c->out.len) {
        n = send(c->fd, c->out.data + off, c->out.len - off, MSG_NOSIGNAL);
        cr_assert_gt(n, 0);
        off += (size_t)n;
    }
    buf_reset(&c->out);
}

static void client_up(struct client *c, const struct whfix *e)
{
    struct sockaddr_in a;
    struct timeval tv = { 10, 0 };
    int r;

    memset(c, 0, sizeof(*c));
    buf_init(&c->out, 1 << 20);
    buf_init(&c->in, 1 << 20);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(c->fd, 0);
    cr_assert_eq(setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(wh_server_port(e->srv));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(c->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    cr_assert_eq(gnutls_certificate_allocate_credentials(&c->cred), 0);
    cr_assert_eq(gnutls_init(&c->s, GNUTLS_CLIENT), 0);
    cr_assert_eq(gnutls_set_default_priority(c->s), 0);
    cr_assert_eq(gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, c->cred), 0);
    gnutls_transport_set_ptr(c->s, c);
    gnutls_transport_set_push_function(c->s, client_push);
    gnutls_transport_set_pull_function(c->s, client_pull);
    do {
        r = gnutls_handshake(c->s);
    } while (r < 0 && !gnutls_error_is_fatal(r));
    cr_assert_eq(r, 0, "handshake: %s", gnutls_strerror(r));
}

static void client_down(struct client *c)
{
    gnutls_deinit(c->s);
    gnutls_certificate_free_credentials(c->cred);
    close(c->fd);
    buf_release(&c->out);
    buf_release(&c->in);
}

/* Send text as one TLS record, or as several past the record size (held back while c->hold). */
static void send_record(struct client *c, const char *text, size_t n)
{
    ssize_t sent;

    while (n > 0) {
        sent = gnutls_record_send(c->s, text, n);
        cr_assert_gt(sent, 0, "%s", gnutls_strerror((int)sent));
        text += sent;
        n -= (size_t)sent;
    }
}

static void review(struct buf *b, int uid)
{
    cr_assert_eq(buf_appendf(b,
                             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                             "\"request\":{\"uid\":\"r-%d\",\"kind\":{\"group\":\"\",\"version\":"
                             "\"v1\",\"kind\":\"ConfigMap\"},\"operation\":\"UPDATE\",\"userInfo\":"
                             "{\"username\":\"%s\"},\"object\":{\"metadata\":{\"namespace\":\"ns\","
                             "\"name\":\"c\"}},\"oldObject\":{\"metadata\":{\"name\":\"c\"}}}}",
                             uid, uid % 2 ? WHFIX_RECONCILER : "alice"),
                 KERR_OK);
}

/* The HTTP request for review uid (Content-Length, or chunked) appended to b. */
static void request(struct buf *b, int uid, int chunked)
{
    struct buf body;

    buf_init(&body, 1 << 16);
    review(&body, uid);
    cr_assert_eq(buf_appendf(b, "POST /webhooks/etcdcomponents HTTP/1.1\r\nHost: t\r\n"
                                "Content-Type: application/json\r\n"),
                 KERR_OK);
    if (chunked)
        cr_assert_eq(buf_appendf(b, "Transfer-Encoding: chunked\r\n\r\n%zx\r\n%s\r\n0\r\n\r\n",
                                 body.len, buf_str(&body)),
                     KERR_OK);
    else
        cr_assert_eq(buf_appendf(b, "Content-Length: %zu\r\n\r\n%s", body.len, buf_str(&body)),
                     KERR_OK);
    buf_release(&body);
}

/* Complete HTTP responses at the start of in; *ends receives where the last one ends. */
static int count_responses(const struct buf *in, size_t *ends)
{
    const char *p = buf_str(in), *end = p + in->len, *hdr_end, *cl;
    int n = 0;

    *ends = 0;
    while ((hdr_end = strstr(p, "\r\n\r\n")) != NULL) {
        cl = strstr(p, "Content-Length: ");
        if (!cl || cl > hdr_end)
            cl = strstr(p, "content-length: ");
        cr_assert(cl && cl < hdr_end, "no Content-Length in %s", p);
        if (hdr_end + 4 + strtoul(cl + 16, NULL, 10) > end)
            break;
        p = hdr_end + 4 + strtoul(cl + 16, NULL, 10);
        *ends = (size_t)(p - buf_str(in));
        n++;
    }
    return n;
}

/* Read until want responses arrived; check each is 200 for the next uid from first. */
static void expect_answers(struct client *c, int first, int want)
{
    char tmp[4096], uid[32];
    const char *p;
    size_t ends;
    ssize_t n;
    int i;

    while (count_responses(&c->in, &ends) < want) {
        n = gnutls_record_recv(c->s, tmp, sizeof(tmp));
        cr_assert_gt(n, 0, "connection ended after %d answers: %s", count_responses(&c->in, &ends),
                     n < 0 ? gnutls_strerror((int)n) : "EOF");
        cr_assert_eq(buf_append(&c->in, tmp, (size_t)n), KERR_OK);
    }
    cr_assert_eq(count_responses(&c->in, &ends), want, "more answers than requests");
    p = buf_str(&c->in);
    for (i = 0; i < want; i++) {
        cr_assert_eq(strncmp(p, "HTTP/1.1 200", 12), 0, "%s", p);
        snprintf(uid, sizeof(uid), "\"uid\":\"r-%d\"", first + i);
        p = strstr(p, uid);
        cr_assert_not_null(p, "answer %d lacks %s: %s", i, uid, buf_str(&c->in));
        p = strstr(p, "HTTP/1.1 ") ? strstr(p, "HTTP/1.1 ") : p + strlen(p);
    }
    buf_consume(&c->in, ends);
}

Test(wh_tlsio, pipelined_requests_in_one_record_and_in_one_write)
{
    struct whfix e;
    struct client c;
    struct buf b;
    int i;

    whfix_init(&e, 0, 0, 0);
    client_up(&c, &e);
    buf_init(&b, 1 << 20);
    for (i = 1; i <= 3; i++)
        request(&b, i, 0);
    send_record(&c, b.data, b.len); /* three requests, one record */
    expect_answers(&c, 1, 3);
    c.hold = 1;
    for (i = 4; i <= 9; i++) { /* six records, one write */
        buf_reset(&b);
        request(&b, i, i % 3 == 0);
        send_record(&c, b.data, b.len);
    }
    flush(&c);
    c.hold = 0;
    expect_answers(&c, 4, 6);
    buf_release(&b);
    client_down(&c);
    whfix_release(&e);
}

Test(wh_tlsio, bodies_split_across_records_are_put_together)
{
    struct whfix e;
    struct client c;
    struct buf b;
    size_t cut;
    int i;

    whfix_init(&e, 0, 0, 0);
    client_up(&c, &e);
    buf_init(&b, 1 << 20);
    for (i = 1; i <= 4; i++) {
        buf_reset(&b);
        request(&b, i, i == 4);
        cut = b.len - 40 - (size_t)i * 7; /* inside the body */
        send_record(&c, b.data, cut);
        send_record(&c, b.data + cut, b.len - cut);
        expect_answers(&c, i, 1);
    }
    buf_release(&b);
    client_down(&c);
    whfix_release(&e);
}

Test(wh_tlsio, a_long_keep_alive_run_has_no_stalls)
{
    struct whfix e;
    struct client c;
    struct buf b;
    int64_t t0;
    int i;

    whfix_init(&e, 0, 0, 0);
    client_up(&c, &e);
    buf_init(&b, 1 << 20);
    t0 = ktime_mono_ms();
    for (i = 1; i <= 1000; i++) {
        buf_reset(&b);
        request(&b, i, 0);
        send_record(&c, b.data, b.len);
        expect_answers(&c, i, 1);
    }
    /*
     * Each answer takes well under a millisecond; a delayed push would cost
     * 40 ms or more each, 40 s in all: half that leaves a loaded machine room.
     */
    cr_expect_lt(ktime_mono_ms() - t0, 20000, "1000 answers took %lld ms",
                 (long long)(ktime_mono_ms() - t0));
    buf_release(&b);
    client_down(&c);
    whfix_release(&e);
}

/* One request with an X-Big header of n bytes; the HTTP status of the answer. */
static int status_with_header(const struct whfix *e, size_t n)
{
    struct client c;
    struct buf b;
    char tmp[4096];
    size_t off;
    ssize_t got;
    int status = 0;

    client_up(&c, e);
    buf_init(&b, 1 << 20);
    cr_assert_eq(buf_appends(&b, "POST /webhooks/etcdcomponents HTTP/1.1\r\nHost: t\r\nX-Big: "),
                 KERR_OK);
    while (n--)
        cr_assert_eq(buf_append(&b, "a", 1), KERR_OK);
    cr_assert_eq(
        buf_appends(&b, "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"),
        KERR_OK);
    /* The server may answer 431 and close before the last record: a failed send is fine. */
    for (off = 0; off < b.len && (got = gnutls_record_send(c.s, b.data + off, b.len - off)) > 0;)
        off += (size_t)got;
    while (!strstr(buf_str(&c.in), "\r\n\r\n") &&
           (got = gnutls_record_recv(c.s, tmp, sizeof(tmp))) > 0)
        cr_assert_eq(buf_append(&c.in, tmp, (size_t)got), KERR_OK);
    if (strncmp(buf_str(&c.in), "HTTP/1.1 ", 9) == 0)
        status = (int)strtol(buf_str(&c.in) + 9, NULL, 10);
    buf_release(&b);
    client_down(&c);
    return status;
}

Test(wh_tlsio, request_headers_fit_the_connection_pool_up_to_about_14k)
{
    struct whfix e;

    whfix_init(&e, 0, 0, 0);
    cr_expect_eq(status_with_header(&e, 12000), 400, "read: {} is not an AdmissionReview");
    cr_expect_eq(status_with_header(&e, 20000), 431);
    whfix_release(&e);
}
