#include "tests/support/mockapi.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/ktime.h"
#include "tests/support/mockapi_int.h"

/* Sleep ms unless the server stops first (caller does not hold the lock): 0, or -1 on stop. */
static int pause_ms(struct mockapi *m, long ms)
{
    struct timespec ts;
    int stop;

    ktime_deadline_after(&ts, ms, CLOCK_MONOTONIC);
    pthread_mutex_lock(&m->mu);
    while (!m->stopping && pthread_cond_timedwait(&m->cv, &m->mu, &ts) != ETIMEDOUT) {
    }
    stop = m->stopping;
    pthread_mutex_unlock(&m->mu);
    return stop ? -1 : 0;
}

static int send_all(struct conn *cn, const char *p, size_t n)
{
    ssize_t w;
    int nw;

    while (n > 0) {
        if (cn->ssl) {
            nw = SSL_write(cn->ssl, p, n > INT_MAX ? INT_MAX : (int)n);
            w = nw;
        } else {
            w = send(cn->fd, p, n, MSG_NOSIGNAL);
        }
        if (w < 0 && !cn->ssl && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int send_chunk(struct conn *cn, const char *p, size_t n)
{
    char size[32];

    if (n == 0)
        return 0;
    snprintf(size, sizeof(size), "%zx\r\n", n);
    if (send_all(cn, size, strlen(size)) || send_all(cn, p, n) || send_all(cn, "\r\n", 2))
        return -1;
    return 0;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* Percent- and '+'-decode n bytes of s into a new string. */
static char *decode(const char *s, size_t n)
{
    char *out = malloc(n + 1);
    size_t i, j = 0;

    if (!out)
        return NULL;
    for (i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            out[j++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            out[j++] = s[i] == '+' ? ' ' : s[i];
        }
    }
    out[j] = '\0';
    return out;
}

/* Split the raw query into decoded parameters. */
static void parse_params(struct mockapi_req *q)
{
    const char *p = q->query, *amp, *eq;
    size_t n, count = 1;

    if (!*p)
        return;
    for (amp = p; *amp; amp++)
        count += *amp == '&';
    q->params = calloc(count, sizeof(*q->params));
    while (q->params && *p) {
        amp = strchr(p, '&');
        n = amp ? (size_t)(amp - p) : strlen(p);
        eq = memchr(p, '=', n);
        q->params[q->nparams].key = decode(p, eq ? (size_t)(eq - p) : n);
        q->params[q->nparams].value = eq ? decode(eq + 1, n - (size_t)(eq - p) - 1) : strdup("");
        q->nparams++;
        p += n + (amp ? 1 : 0);
    }
}

const char *mockapi_req_header(const struct mockapi_req *r, const char *name)
{
    size_t i;

    for (i = 0; r && i < r->nheaders; i++) {
        if (r->headers[i].key && strcasecmp(r->headers[i].key, name) == 0)
            return r->headers[i].value;
    }
    return NULL;
}

const char *mockapi_req_param(const struct mockapi_req *r, const char *key)
{
    size_t i;

    for (i = 0; r && i < r->nparams; i++) {
        if (r->params[i].key && strcmp(r->params[i].key, key) == 0)
            return r->params[i].value;
    }
    return NULL;
}

void mockapi_free_req(struct mockapi_req *q)
{
    size_t i;

    if (!q)
        return;
    for (i = 0; i < q->nparams; i++) {
        free(q->params[i].key);
        free(q->params[i].value);
    }
    for (i = 0; i < q->nheaders; i++) {
        free(q->headers[i].key);
        free(q->headers[i].value);
    }
    free(q->params);
    free(q->headers);
    free(q->target);
    free(q->path);
    free(q->query);
    free(q->body);
    free(q);
}

/* Parse the request line and headers of head (NUL-terminated, without the blank line). */
static struct mockapi_req *parse_head(char *head)
{
    struct mockapi_req *q = calloc(1, sizeof(*q));
    char *save = NULL, *line, *sp1, *sp2, *colon, *qm;
    size_t count = 1;

    if (!q)
        return NULL;
    for (line = head; *line; line++)
        count += *line == '\n';
    q->headers = calloc(count, sizeof(*q->headers));
    line = strtok_r(head, "\r\n", &save);
    sp1 = line ? strchr(line, ' ') : NULL;
    sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    if (!q->headers || !sp2 || (size_t)(sp1 - line) >= sizeof(q->method)) {
        mockapi_free_req(q);
        return NULL;
    }
    memcpy(q->method, line, (size_t)(sp1 - line));
    q->target = strndup(sp1 + 1, (size_t)(sp2 - sp1 - 1));
    qm = q->target ? strchr(q->target, '?') : NULL;
    q->path =
        q->target ? strndup(q->target, qm ? (size_t)(qm - q->target) : strlen(q->target)) : NULL;
    q->query = strdup(qm ? qm + 1 : "");
    while ((line = strtok_r(NULL, "\r\n", &save)) && (colon = strchr(line, ':'))) {
        q->headers[q->nheaders].key = strndup(line, (size_t)(colon - line));
        for (colon++; *colon == ' ' || *colon == '\t'; colon++) {
        }
        q->headers[q->nheaders++].value = strdup(colon);
    }
    if (!q->target || !q->path || !q->query) {
        mockapi_free_req(q);
        return NULL;
    }
    parse_params(q);
    return q;
}

/* Is the raw item "k=v" or "k" (matching key k) in query? */
static int query_has(const char *query, const char *item, int key_only)
{
    size_t n = strlen(item), len;
    const char *p = query, *amp;

    while (*p) {
        amp = strchr(p, '&');
        len = amp ? (size_t)(amp - p) : strlen(p);
        if (key_only ? (len >= n && strncmp(p, item, n) == 0 && (len == n || p[n] == '='))
                     : (len == n && strncmp(p, item, n) == 0))
            return 1;
        p += len + (amp ? 1 : 0);
    }
    return 0;
}

static int matches(const struct reply *r, const struct mockapi_req *q)
{
    size_t i;
    const char *c;

    if (r->left == 0 || (r->method && strcmp(r->method, q->method) != 0))
        return 0;
    if (r->prefix ? strncmp(q->path, r->path, strlen(r->path)) != 0 : strcmp(q->path, r->path))
        return 0;
    for (i = 0; i < r->nconds; i++) {
        c = r->conds[i];
        if (c[0] == '!' ? query_has(q->query, c + 1, 1)
                        : !query_has(q->query, c, strchr(c, '=') == NULL))
            return 0;
    }
    return 1;
}

/*
 * Record q and pick its reply (NULL: none). *stored is 1 when the server's
 * list took q; else (out of memory) the caller still owns it.
 */
static struct reply *record(struct mockapi *m, struct mockapi_req *q, int *stored)
{
    struct mockapi_req **reqs;
    struct reply *r = NULL;
    size_t i;

    pthread_mutex_lock(&m->mu);
    for (i = 0; i < m->nreplies && !r; i++) {
        if (matches(m->replies[i], q)) {
            r = m->replies[i];
            q->matched = 1;
            q->reply = i;
            r->served++;
            if (r->left > 0)
                r->left--;
        }
    }
    if (!r)
        m->unexpected++;
    reqs = realloc(m->reqs, (m->nreqs + 1) * sizeof(*reqs));
    *stored = reqs != NULL;
    if (reqs) {
        m->reqs = reqs;
        m->reqs[m->nreqs++] = q;
    }
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    return r;
}

static const char *reason_phrase(int status)
{
    static const struct {
        int code;
        const char *text;
    } t[] = { { 200, "OK" },
              { 201, "Created" },
              { 202, "Accepted" },
              { 204, "No Content" },
              { 400, "Bad Request" },
              { 401, "Unauthorized" },
              { 403, "Forbidden" },
              { 404, "Not Found" },
              { 409, "Conflict" },
              { 410, "Gone" },
              { 422, "Unprocessable Entity" },
              { 429, "Too Many Requests" },
              { 500, "Internal Server Error" },
              { 503, "Service Unavailable" },
              { 504, "Gateway Timeout" } };
    size_t i;

    for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (t[i].code == status)
            return t[i].text;
    }
    return "Status";
}

static int has_content_type(const char *headers)
{
    const char *p = headers;

    while (p && *p) {
        if (strncasecmp(p, "Content-Type:", 13) == 0)
            return 1;
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return 0;
}

static int send_head(struct conn *cn, int status, const char *headers, int chunked, size_t len,
                     int close)
{
    struct buf h;
    const char *p = headers ? headers : "";
    const char *nl;
    int rc;

    buf_init(&h, MOCKAPI_HEAD_MAX);
    rc = buf_appendf(&h, "HTTP/1.1 %d %s\r\n", status, reason_phrase(status)) != KERR_OK;
    if (!has_content_type(p))
        rc |= buf_appends(&h, "Content-Type: application/json\r\n") != KERR_OK;
    while (*p) {
        nl = strchr(p, '\n');
        rc |= buf_append(&h, p, nl ? (size_t)(nl - p) : strlen(p)) != KERR_OK;
        rc |= buf_appends(&h, "\r\n") != KERR_OK;
        p = nl ? nl + 1 : p + strlen(p);
    }
    if (chunked)
        rc |= buf_appends(&h, "Transfer-Encoding: chunked\r\n") != KERR_OK;
    else
        rc |= buf_appendf(&h, "Content-Length: %zu\r\n", len) != KERR_OK;
    if (close)
        rc |= buf_appends(&h, "Connection: close\r\n") != KERR_OK;
    rc |= buf_appends(&h, "\r\n") != KERR_OK;
    if (!rc)
        rc = send_all(cn, h.data, h.len);
    buf_release(&h);
    return rc;
}

/* Send what is pushed to a held stream until its end: 0 clean end, -1 drop the connection. */
static int stream_pushed(struct conn *cn, struct reply *r)
{
    struct mockapi *m = cn->m;
    unsigned drops;
    struct pushed *p;
    int rc = 0;

    pthread_mutex_lock(&m->mu);
    drops = m->drops;
    for (;;) {
        while (!r->head && !r->end && !m->stopping && m->drops == drops)
            pthread_cond_wait(&m->cv, &m->mu);
        if (m->stopping || m->drops != drops)
            rc = -1;
        if (rc || !r->head)
            break;
        p = r->head;
        r->head = p->next;
        if (!r->head)
            r->tail = NULL;
        pthread_mutex_unlock(&m->mu);
        rc = send_chunk(cn, p->data, p->len);
        free(p->data);
        free(p);
        pthread_mutex_lock(&m->mu);
    }
    if (!rc && r->abort)
        rc = -1;
    pthread_mutex_unlock(&m->mu);
    return rc;
}

/* Answer with r: 0 keeps the connection, -1 closes it. */
static int serve(struct conn *cn, struct reply *r)
{
    int chunked = r->nchunks > 0 || r->hold;
    size_t i;

    if (r->delay_ms > 0 && pause_ms(cn->m, r->delay_ms))
        return -1;
    if (send_head(cn, r->status, r->headers, chunked, r->body ? strlen(r->body) : 0, r->close))
        return -1;
    if (!chunked)
        return (r->body && send_all(cn, r->body, strlen(r->body))) || r->close ? -1 : 0;
    for (i = 0; i < r->nchunks; i++) {
        if ((r->chunk_delay_ms > 0 && pause_ms(cn->m, r->chunk_delay_ms)) ||
            send_chunk(cn, r->chunks[i], strlen(r->chunks[i])))
            return -1;
    }
    if (r->hold && stream_pushed(cn, r))
        return -1;
    if (send_all(cn, "0\r\n\r\n", 5))
        return -1;
    return r->close ? -1 : 0;
}

static int serve_unexpected(struct conn *cn, const struct mockapi_req *q)
{
    cJSON *st = cJSON_CreateObject();
    char msg[512];
    char *text = NULL;
    int rc = -1;

    snprintf(msg, sizeof(msg), "mockapi: no reply for %s %s", q->method, q->target);
    if (st && cJSON_AddStringToObject(st, "kind", "Status") &&
        cJSON_AddStringToObject(st, "apiVersion", "v1") &&
        cJSON_AddStringToObject(st, "status", "Failure") &&
        cJSON_AddStringToObject(st, "message", msg) &&
        cJSON_AddStringToObject(st, "reason", "NotFound") &&
        cJSON_AddNumberToObject(st, "code", 404))
        text = cJSON_PrintUnformatted(st);
    if (text && !send_head(cn, 404, NULL, 0, strlen(text), 0))
        rc = send_all(cn, text, strlen(text));
    free(text);
    cJSON_Delete(st);
    return rc;
}

/* Read until the input holds need bytes: 0, or -1 on EOF, error or cap. */
static int fill(struct conn *cn, size_t need)
{
    char tmp[16384];
    ssize_t n;

    while (cn->in.len < need) {
        n = cn->ssl ? SSL_read(cn->ssl, tmp, (int)sizeof(tmp)) : recv(cn->fd, tmp, sizeof(tmp), 0);
        if (n < 0 && !cn->ssl && errno == EINTR)
            continue;
        if (n <= 0 || buf_append(&cn->in, tmp, (size_t)n) != KERR_OK)
            return -1;
    }
    return 0;
}

/* Read one request (head and Content-Length body). NULL on EOF or a bad request. */
static struct mockapi_req *read_request(struct conn *cn)
{
    struct mockapi_req *q;
    const char *end, *cl;
    size_t head_len;
    long len = 0;

    while (!(end = strstr(buf_str(&cn->in), "\r\n\r\n"))) {
        if (cn->in.len > MOCKAPI_HEAD_MAX || fill(cn, cn->in.len + 1))
            return NULL;
    }
    head_len = (size_t)(end - cn->in.data);
    cn->in.data[head_len] = '\0';
    q = parse_head(cn->in.data);
    if (!q)
        return NULL;
    cl = mockapi_req_header(q, "Content-Length");
    if (cl)
        len = strtol(cl, NULL, 10);
    if (len < 0 || (size_t)len > MOCKAPI_BODY_MAX ||
        (mockapi_req_header(q, "Expect") && send_all(cn, "HTTP/1.1 100 Continue\r\n\r\n", 25)) ||
        fill(cn, head_len + 4 + (size_t)len) || !(q->body = malloc((size_t)len + 1))) {
        mockapi_free_req(q);
        return NULL;
    }
    memcpy(q->body, cn->in.data + head_len + 4, (size_t)len);
    q->body[len] = '\0';
    q->body_len = (size_t)len;
    buf_consume(&cn->in, head_len + 4 + (size_t)len);
    return q;
}

/* TLS handshake; remembers the SNI name and the client certificate's CN. 0 or -1. */
static int tls_accept(struct conn *cn)
{
    const char *sni;
    X509 *peer;

    if (SSL_set_fd(cn->ssl, cn->fd) != 1 || SSL_accept(cn->ssl) != 1)
        return -1;
    sni = SSL_get_servername(cn->ssl, TLSEXT_NAMETYPE_host_name);
    snprintf(cn->sni, sizeof(cn->sni), "%s", sni ? sni : "");
    peer = SSL_get1_peer_certificate(cn->ssl);
    if (peer) {
        X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn->client_cn,
                                  (int)sizeof(cn->client_cn));
        X509_free(peer);
    }
    return 0;
}

void *mockapi_conn_main(void *arg)
{
    struct conn *cn = arg;
    struct mockapi_req *q;
    struct reply *r;
    const char *ch;
    sigset_t pipe;
    int keep = 1, fd, stored;

    /* OpenSSL writes with write(2): a client gone mid-handshake must give EPIPE, not SIGPIPE. */
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, NULL);
    keep = !cn->ssl || tls_accept(cn) == 0;
    while (keep && (q = read_request(cn))) {
        ch = mockapi_req_header(q, "Connection");
        keep = !(ch && strcasecmp(ch, "close") == 0);
        q->conn = cn->id;
        snprintf(q->sni, sizeof(q->sni), "%s", cn->sni);
        snprintf(q->client_cn, sizeof(q->client_cn), "%s", cn->client_cn);
        r = record(cn->m, q, &stored);
        keep = (r ? serve(cn, r) : serve_unexpected(cn, q)) == 0 && keep;
        if (!stored)
            mockapi_free_req(q);
    }
    pthread_mutex_lock(&cn->m->mu);
    fd = cn->fd;
    cn->fd = -1;
    cn->done = 1;
    pthread_mutex_unlock(&cn->m->mu);
    if (cn->ssl) {
        SSL_shutdown(cn->ssl);
        SSL_free(cn->ssl);
        cn->ssl = NULL;
    }
    close(fd);
    return NULL;
}
