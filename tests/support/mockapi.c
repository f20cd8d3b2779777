#include "tests/support/mockapi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/ktime.h"
#include "tests/support/mockapi_int.h"

static void free_reply(struct reply *r)
{
    struct pushed *p;
    size_t i;

    if (!r)
        return;
    while ((p = r->head)) {
        r->head = p->next;
        free(p->data);
        free(p);
    }
    for (i = 0; i < r->nconds; i++)
        free(r->conds[i]);
    for (i = 0; i < r->nchunks; i++)
        free(r->chunks[i]);
    free(r->conds);
    free(r->chunks);
    free(r->method);
    free(r->path);
    free(r->headers);
    free(r->body);
    free(r);
}

/* Split target into path (prefix flag) and query conditions. Non-zero on failure. */
static int parse_target(struct reply *r, const char *target)
{
    const char *qm = strchr(target, '?');
    size_t plen = qm ? (size_t)(qm - target) : strlen(target);
    const char *p, *amp;
    size_t n;

    r->prefix = plen > 0 && target[plen - 1] == '*';
    r->path = strndup(target, plen - (size_t)r->prefix);
    r->conds = calloc(qm ? strlen(qm) + 1 : 1, sizeof(*r->conds));
    if (!r->path || !r->conds)
        return -1;
    for (p = qm ? qm + 1 : ""; *p; p += n + (amp ? 1 : 0)) {
        amp = strchr(p, '&');
        n = amp ? (size_t)(amp - p) : strlen(p);
        if (n > 0 && !(r->conds[r->nconds++] = strndup(p, n)))
            return -1;
    }
    return 0;
}

static char *dup_or_null(const char *s, int *bad)
{
    char *d = s ? strdup(s) : NULL;

    *bad |= s && !d;
    return d;
}

static struct reply *make_reply(const struct mockapi_spec *spec)
{
    struct reply *r = calloc(1, sizeof(*r));
    int bad = !r;
    size_t n = 0;

    if (bad || parse_target(r, spec->target)) {
        free_reply(r);
        return NULL;
    }
    r->method = dup_or_null(spec->method, &bad);
    r->headers = dup_or_null(spec->headers, &bad);
    r->body = dup_or_null(spec->body, &bad);
    while (spec->chunks && spec->chunks[n])
        n++;
    r->chunks = calloc(n + 1, sizeof(*r->chunks));
    bad |= !r->chunks;
    for (r->nchunks = 0; !bad && r->nchunks < n; r->nchunks++)
        r->chunks[r->nchunks] = dup_or_null(spec->chunks[r->nchunks], &bad);
    r->status = spec->status ? spec->status : 200;
    r->chunk_delay_ms = spec->chunk_delay_ms;
    r->delay_ms = spec->delay_ms;
    r->hold = spec->hold;
    r->close = spec->close;
    r->left = spec->times == 0 ? 1 : (spec->times < 0 ? -1 : spec->times);
    if (bad) {
        free_reply(r);
        return NULL;
    }
    return r;
}

int mockapi_add(struct mockapi *m, const struct mockapi_spec *spec)
{
    struct reply **arr;
    struct reply *r = spec && spec->target ? make_reply(spec) : NULL;
    int idx = -1;

    if (!r)
        return -1;
    pthread_mutex_lock(&m->mu);
    arr = realloc(m->replies, (m->nreplies + 1) * sizeof(*arr));
    if (arr) {
        m->replies = arr;
        idx = (int)m->nreplies;
        m->replies[m->nreplies++] = r;
    }
    pthread_mutex_unlock(&m->mu);
    if (idx < 0)
        free_reply(r);
    return idx;
}

int mockapi_expect(struct mockapi *m, const char *method, const char *target, int status,
                   const char *body)
{
    struct mockapi_spec spec = { 0 };

    spec.method = method;
    spec.target = target;
    spec.status = status;
    spec.body = body;
    return mockapi_add(m, &spec);
}

/* Reply idx, or NULL. Caller holds the lock. */
static struct reply *reply_at(struct mockapi *m, int idx)
{
    return idx >= 0 && (size_t)idx < m->nreplies ? m->replies[idx] : NULL;
}

int mockapi_push(struct mockapi *m, int idx, const char *data, size_t len)
{
    struct pushed *p = calloc(1, sizeof(*p));
    struct reply *r;

    if (len == 0)
        len = strlen(data);
    if (!p || !(p->data = malloc(len + 1))) {
        free(p);
        return -1;
    }
    memcpy(p->data, data, len);
    p->data[len] = '\0';
    p->len = len;
    pthread_mutex_lock(&m->mu);
    r = reply_at(m, idx);
    if (r) {
        if (r->tail)
            r->tail->next = p;
        else
            r->head = p;
        r->tail = p;
        pthread_cond_broadcast(&m->cv);
    }
    pthread_mutex_unlock(&m->mu);
    if (!r) {
        free(p->data);
        free(p);
        return -1;
    }
    return 0;
}

void mockapi_end(struct mockapi *m, int idx, int abort)
{
    struct reply *r;

    pthread_mutex_lock(&m->mu);
    r = reply_at(m, idx);
    if (r) {
        r->end = 1;
        r->abort = abort;
        pthread_cond_broadcast(&m->cv);
    }
    pthread_mutex_unlock(&m->mu);
}

void mockapi_drop_connections(struct mockapi *m)
{
    struct conn *cn;

    pthread_mutex_lock(&m->mu);
    m->drops++;
    for (cn = m->conns; cn; cn = cn->next) {
        if (cn->fd >= 0)
            shutdown(cn->fd, SHUT_RDWR);
    }
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
}

int mockapi_served(struct mockapi *m, int idx)
{
    struct reply *r;
    int n;

    pthread_mutex_lock(&m->mu);
    r = reply_at(m, idx);
    n = r ? r->served : 0;
    pthread_mutex_unlock(&m->mu);
    return n;
}

int mockapi_wait_served(struct mockapi *m, int idx, int n, long timeout_ms)
{
    struct timespec ts;
    struct reply *r;
    int ok;

    ktime_deadline_after(&ts, timeout_ms, CLOCK_MONOTONIC);
    pthread_mutex_lock(&m->mu);
    r = reply_at(m, idx);
    while (r && r->served < n && pthread_cond_timedwait(&m->cv, &m->mu, &ts) != ETIMEDOUT) {
    }
    ok = r && r->served >= n;
    pthread_mutex_unlock(&m->mu);
    return ok ? 0 : -1;
}

size_t mockapi_request_count(struct mockapi *m)
{
    size_t n;

    pthread_mutex_lock(&m->mu);
    n = m->nreqs;
    pthread_mutex_unlock(&m->mu);
    return n;
}

int mockapi_wait_requests(struct mockapi *m, size_t n, long timeout_ms)
{
    struct timespec ts;
    int ok;

    ktime_deadline_after(&ts, timeout_ms, CLOCK_MONOTONIC);
    pthread_mutex_lock(&m->mu);
    while (m->nreqs < n && pthread_cond_timedwait(&m->cv, &m->mu, &ts) != ETIMEDOUT) {
    }
    ok = m->nreqs >= n;
    pthread_mutex_unlock(&m->mu);
    return ok ? 0 : -1;
}

const struct mockapi_req *mockapi_request(struct mockapi *m, size_t i)
{
    const struct mockapi_req *q;

    pthread_mutex_lock(&m->mu);
    q = i < m->nreqs ? m->reqs[i] : NULL;
    pthread_mutex_unlock(&m->mu);
    return q;
}

const struct mockapi_req *mockapi_last(struct mockapi *m)
{
    const struct mockapi_req *q;

    pthread_mutex_lock(&m->mu);
    q = m->nreqs ? m->reqs[m->nreqs - 1] : NULL;
    pthread_mutex_unlock(&m->mu);
    return q;
}

size_t mockapi_unexpected(struct mockapi *m)
{
    size_t n;

    pthread_mutex_lock(&m->mu);
    n = m->unexpected;
    pthread_mutex_unlock(&m->mu);
    return n;
}

size_t mockapi_pending(struct mockapi *m)
{
    size_t i, n = 0;

    pthread_mutex_lock(&m->mu);
    for (i = 0; i < m->nreplies; i++)
        n += m->replies[i]->left != 0;
    pthread_mutex_unlock(&m->mu);
    return n;
}

int mockapi_connections(struct mockapi *m)
{
    int n;

    pthread_mutex_lock(&m->mu);
    n = m->nconns;
    pthread_mutex_unlock(&m->mu);
    return n;
}

const char *mockapi_url(const struct mockapi *m)
{
    return m->url;
}

int mockapi_port(const struct mockapi *m)
{
    return m->port;
}

/* Join and free finished connections (all of them when all is set). Caller holds no lock. */
static void reap(struct mockapi *m, int all)
{
    struct conn **link, *cn;

    pthread_mutex_lock(&m->mu);
    link = &m->conns;
    while ((cn = *link)) {
        if (!cn->done && !all) {
            link = &cn->next;
            continue;
        }
        *link = cn->next;
        pthread_mutex_unlock(&m->mu);
        pthread_join(cn->th, NULL);
        buf_release(&cn->in);
        free(cn);
        pthread_mutex_lock(&m->mu);
        link = &m->conns;
    }
    pthread_mutex_unlock(&m->mu);
}

static void start_conn(struct mockapi *m, int fd)
{
    struct conn *cn = calloc(1, sizeof(*cn));

    if (!cn) {
        close(fd);
        return;
    }
    cn->m = m;
    cn->fd = fd;
    cn->ssl = m->tls ? SSL_new(m->tls) : NULL;
    if (m->tls && !cn->ssl) {
        close(fd);
        free(cn);
        return;
    }
    buf_init(&cn->in, MOCKAPI_HEAD_MAX + MOCKAPI_BODY_MAX);
    pthread_mutex_lock(&m->mu);
    cn->id = ++m->nconns;
    if (pthread_create(&cn->th, NULL, mockapi_conn_main, cn) != 0) {
        pthread_mutex_unlock(&m->mu);
        SSL_free(cn->ssl);
        close(fd);
        free(cn);
        return;
    }
    cn->next = m->conns;
    m->conns = cn;
    pthread_mutex_unlock(&m->mu);
}

static void *accept_main(void *arg)
{
    struct mockapi *m = arg;
    struct pollfd pfd = { .fd = m->lfd, .events = POLLIN };
    int fd, stop = 0;

    while (!stop) {
        if (poll(&pfd, 1, 50) > 0 && (fd = accept(m->lfd, NULL, NULL)) >= 0)
            start_conn(m, fd);
        reap(m, 0);
        pthread_mutex_lock(&m->mu);
        stop = m->stopping;
        pthread_mutex_unlock(&m->mu);
    }
    return NULL;
}

static int listen_local(int *port)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* Select http/1.1 when the client offers it (no HTTP/2 here). */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char h11[] = "\x08http/1.1";
    unsigned char *sel = NULL;
    unsigned char sel_len = 0;

    (void)ssl;
    (void)arg;
    if (SSL_select_next_proto(&sel, &sel_len, h11, sizeof(h11) - 1, in, inlen) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = sel;
    *outlen = sel_len;
    return SSL_TLSEXT_ERR_OK;
}

/* Add every certificate of pem to the context's trust store (client CAs). */
static int trust_clients(SSL_CTX *ctx, const char *pem)
{
    BIO *b = BIO_new_mem_buf(pem, -1);
    X509_STORE *st = SSL_CTX_get_cert_store(ctx);
    X509 *x;
    int n = 0;

    while (b && (x = PEM_read_bio_X509(b, NULL, NULL, NULL))) {
        n += X509_STORE_add_cert(st, x) == 1;
        X509_free(x);
    }
    BIO_free(b);
    ERR_clear_error(); /* the end of the PEM text */
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    return n > 0 ? 0 : -1;
}

static SSL_CTX *make_tls(const struct mockapi_tls *t)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    BIO *cb = BIO_new_mem_buf(t->cert_pem, -1);
    BIO *kb = BIO_new_mem_buf(t->key_pem, -1);
    X509 *x = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    EVP_PKEY *k = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
    int bad = !ctx || !x || !k;

    if (!bad)
        bad = SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
              SSL_CTX_use_certificate(ctx, x) != 1 || SSL_CTX_use_PrivateKey(ctx, k) != 1 ||
              SSL_CTX_check_private_key(ctx) != 1;
    if (!bad && t->client_ca_pem)
        bad = trust_clients(ctx, t->client_ca_pem) != 0;
    if (!bad)
        SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
    X509_free(x);
    EVP_PKEY_free(k);
    BIO_free(cb);
    BIO_free(kb);
    if (bad) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/* Start m (tls already set, TAKEN): on failure everything is freed. */
static enum kerr start_server(struct mockapi *m, struct mockapi **out, struct kerr_info *err)
{
    pthread_condattr_t ca;

    pthread_mutex_init(&m->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cv, &ca);
    pthread_condattr_destroy(&ca);
    m->lfd = listen_local(&m->port);
    if (m->lfd < 0 || pthread_create(&m->accept_th, NULL, accept_main, m) != 0) {
        if (m->lfd >= 0)
            close(m->lfd);
        pthread_cond_destroy(&m->cv);
        pthread_mutex_destroy(&m->mu);
        SSL_CTX_free(m->tls);
        free(m);
        return kerr_set(err, KERR_IO, "mockapi: cannot listen on 127.0.0.1");
    }
    snprintf(m->url, sizeof(m->url), "%s://127.0.0.1:%d", m->tls ? "https" : "http", m->port);
    *out = m;
    return KERR_OK;
}

enum kerr mockapi_new(struct mockapi **out, struct kerr_info *err)
{
    struct mockapi *m = calloc(1, sizeof(*m));

    *out = NULL;
    if (!m)
        return kerr_set(err, KERR_NOMEM, "mockapi: allocating");
    return start_server(m, out, err);
}

enum kerr mockapi_new_tls(const struct mockapi_tls *tls, struct mockapi **out,
                          struct kerr_info *err)
{
    struct mockapi *m;

    *out = NULL;
    if (!tls || !tls->cert_pem || !tls->key_pem)
        return kerr_set(err, KERR_INVAL, "mockapi: TLS needs a certificate and a key");
    m = calloc(1, sizeof(*m));
    if (!m)
        return kerr_set(err, KERR_NOMEM, "mockapi: allocating");
    m->tls = make_tls(tls);
    if (!m->tls) {
        free(m);
        ERR_clear_error();
        return kerr_set(err, KERR_TLS, "mockapi: unusable TLS certificate, key or client CA");
    }
    return start_server(m, out, err);
}

void mockapi_free(struct mockapi *m)
{
    size_t i;

    if (!m)
        return;
    pthread_mutex_lock(&m->mu);
    m->stopping = 1;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->accept_th, NULL);
    close(m->lfd);
    mockapi_drop_connections(m);
    reap(m, 1);
    for (i = 0; i < m->nreqs; i++)
        mockapi_free_req(m->reqs[i]);
    for (i = 0; i < m->nreplies; i++)
        free_reply(m->replies[i]);
    free(m->reqs);
    free(m->replies);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    SSL_CTX_free(m->tls);
    free(m);
}
