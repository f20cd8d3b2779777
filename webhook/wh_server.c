/* wh_server - the HTTPS admission server; see wh_server.h. */
#include "webhook/wh_server.h"

#include <errno.h>
#include <malloc.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/ktime.h"
#include "common/log.h"
#include "webhook/lookup.h"
#include "webhook/review.h"
#include "webhook/wh_conns.h"
#include "webhook/wh_server_int.h"

/* One request, from the first call of the handler to the completion notice. */
struct req_state {
    int hook; /* enum wh_hook, or -1 for another path */
    struct buf body;
    int too_big;
    int busy;       /* the server held max_buffered bytes of bodies: answered 503 */
    size_t charged; /* bytes of body counted in the server's buffered */
    size_t seen;
    long long length; /* Content-Length, -1 when not given */
    struct timespec start;
    int decided;             /* the review was answered into out */
    char *out;               /* OWNS or NULL: the answer, until it is queued */
    size_t out_len;          /* its length */
    unsigned int out_status; /* its HTTP status */
    unsigned int status;     /* HTTP status sent, 0 before */
};

static double since(const struct timespec *t0)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static enum MHD_Result send_bytes(struct wh_server *s, struct MHD_Connection *c,
                                  struct req_state *st, unsigned int status, char *body, size_t len,
                                  const char *type, int must_free)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    r = MHD_create_response_from_buffer(len, body,
                                        must_free ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (must_free)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "POST");
    if (atomic_load(&s->draining))
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    if (ret == MHD_YES)
        st->status = status;
    return ret;
}

static enum MHD_Result send_text(struct wh_server *s, struct MHD_Connection *c,
                                 struct req_state *st, unsigned int status, const char *text)
{
    return send_bytes(s, c, st, status, (char *)text, strlen(text), "text/plain; charset=utf-8", 0);
}

/* text (BORROWED, may be on the stack) copied: the response outlives the caller's frame. */
static enum MHD_Result send_text_copy(struct wh_server *s, struct MHD_Connection *c,
                                      struct req_state *st, unsigned int status, const char *text)
{
    char *copy = strdup(text);

    if (!copy)
        return MHD_NO;
    return send_bytes(s, c, st, status, copy, strlen(copy), "text/plain; charset=utf-8", 1);
}

/* An AdmissionReview carrying code and message, sent with HTTP status. */
static enum MHD_Result send_review_error(struct wh_server *s, struct MHD_Connection *c,
                                         struct req_state *st, unsigned int status,
                                         const char *message)
{
    char *out = NULL;
    size_t len = 0;

    if (review_encode_error(NULL, (int)status, message, &out, &len, NULL))
        return send_text_copy(s, c, st, status, message);
    return send_bytes(s, c, st, status, out, len, "application/json", 1);
}

static int json_content_type(const char *ct)
{
    static const char want[] = "application/json";
    size_t n = sizeof(want) - 1;

    if (!ct || strncasecmp(ct, want, n) != 0)
        return 0;
    ct += n;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    return *ct == '\0' || *ct == ';';
}

/* First call: route and check what the headers tell; answer at once when they already fail. */
static enum MHD_Result begin(struct wh_server *s, struct MHD_Connection *c, const char *url,
                             const char *method, void **con_cls)
{
    struct req_state *st = calloc(1, sizeof(*st));
    enum wh_hook h;
    const char *ct, *cl;
    char msg[160];
    unsigned int denied;
    unsigned long long len;
    char *end = NULL;

    if (!st)
        return MHD_NO;
    *con_cls = st;
    clock_gettime(CLOCK_MONOTONIC, &st->start);
    buf_init(&st->body, s->o.max_body);
    st->length = -1;
    st->hook = wh_hook_from_path(url, &h) == 0 && !s->o.dispatch->disabled[h] ? (int)h : -1;
    atomic_fetch_add(&s->in_flight, 1);
    if (st->hook < 0)
        return send_text(s, c, st, MHD_HTTP_NOT_FOUND, "404 page not found\n");
    if (s->gauge[st->hook])
        metrics_add(s->gauge[st->hook], 1);
    if (s->o.client_auth && (denied = wh_clientauth_check(s->o.client_auth, c, msg, sizeof(msg)))) {
        log_info("refusing a review from an unauthenticated client", "webhook", url, "reason", msg);
        strncat(msg, "\n", sizeof(msg) - strlen(msg) - 1);
        return send_text_copy(s, c, st, denied, msg);
    }
    if (strcmp(method, "POST") != 0)
        return send_text(s, c, st, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
    ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!json_content_type(ct)) {
        snprintf(msg, sizeof(msg), "contentType=%.64s, expected application/json", ct ? ct : "");
        return send_review_error(s, c, st, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, msg);
    }
    cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        len = strtoull(cl, &end, 10);
        if (end != cl && *end == '\0' && len <= s->o.max_body)
            st->length = (long long)len;
        if (end != cl && len > s->o.max_body) {
            st->too_big = 1;
            snprintf(msg, sizeof(msg), "request entity is too large; limit is %zu bytes",
                     s->o.max_body);
            return send_review_error(s, c, st, MHD_HTTP_CONTENT_TOO_LARGE, msg);
        }
    }
    return MHD_YES;
}

/*
 * Answer the review in data (len bytes, BORROWED) into st->out: the answer
 * waits there for the last call of the handler, the only one that may queue
 * it. A failure becomes a 500 AdmissionReview (or, failing that, no text).
 */
static void decide(struct wh_server *s, struct req_state *st, const char *data, size_t len)
{
    struct kerr_info err;

    double left_ms = (double)s->o.budget_ms * WH_SERVER_LOOKUP_SHARE - since(&st->start) * 1000.0;
    int large = len > WH_SERVER_LARGE_BODY, locked = 0;
    struct timespec until;
    enum kerr rc;

    kerr_clear(&err);
    st->decided = 1;
    st->out_status = 200;
    /*
     * One large review at a time (its selective parse and tree, bounded by
     * REVIEW_PARSE_BUDGET): what concurrent hostile bodies cost stays the
     * bodies themselves. The wait ends inside the review's budget.
     */
    if (large) {
        ktime_deadline_after(&until, left_ms > 1.0 ? (long)left_ms : 1, CLOCK_REALTIME);
        locked = pthread_mutex_timedlock(&s->large, &until) == 0;
        if (!locked) {
            log_info("refusing a large review: another one is being decided", "webhook",
                     wh_hook_path((enum wh_hook)st->hook));
            st->out_status = MHD_HTTP_SERVICE_UNAVAILABLE;
            if (review_encode_error(NULL, MHD_HTTP_SERVICE_UNAVAILABLE,
                                    "busy: another large review is being decided", &st->out,
                                    &st->out_len, NULL) != KERR_OK)
                st->out = NULL;
            return;
        }
    }
    /* Lookups for this review end inside its budget, with time left to answer. */
    lookup_deadline_set(ktime_mono_ms() + (left_ms > 1.0 ? (int64_t)left_ms : 1));
    rc = wh_dispatch_review(s->o.dispatch, (enum wh_hook)st->hook, data, len, &st->out,
                            &st->out_len, &st->out_status, &err);
    lookup_deadline_set(0);
    if (locked) {
        pthread_mutex_unlock(&s->large);
        malloc_trim(0); /* give the pages of its tree back */
    }
    if (rc == KERR_OK)
        return;
    log_error("cannot answer an admission review", "error", err.msg);
    st->out_status = MHD_HTTP_INTERNAL_SERVER_ERROR;
    if (review_encode_error(NULL, MHD_HTTP_INTERNAL_SERVER_ERROR, err.msg, &st->out, &st->out_len,
                            NULL) != KERR_OK)
        st->out = NULL;
}

/* Count n more bytes of st's body in the server's total: 0 (nothing counted) past the cap. */
static int charge(struct wh_server *s, struct req_state *st, size_t n)
{
    if (atomic_fetch_add(&s->buffered, n) + n > s->o.max_buffered) {
        atomic_fetch_sub(&s->buffered, n);
        return 0;
    }
    st->charged += n;
    return 1;
}

/* st's body freed: its bytes leave the server's total. */
static void release_body(struct wh_server *s, struct req_state *st)
{
    atomic_fetch_sub(&s->buffered, st->charged);
    st->charged = 0;
    buf_release(&st->body);
}

/*
 * A chunk of the body: kept up to the cap, then discarded; a slow or endless
 * upload is cut. A body that arrives whole in one chunk (the usual case) is
 * decided on the spot, without a copy. Bodies held by all connections
 * together stay under max_buffered: a chunk past it makes its review a 503.
 */
static enum MHD_Result receive(struct wh_server *s, struct req_state *st, const char *data,
                               size_t *size)
{
    if (st->status || st->decided)
        return MHD_NO;
    if (since(&st->start) * 1000.0 > (double)s->o.budget_ms) {
        log_info("dropping a request that exceeded its time budget", "webhook",
                 st->hook >= 0 ? wh_hook_path((enum wh_hook)st->hook) : "");
        return MHD_NO;
    }
    if (st->seen == 0 && st->length >= 0 && (unsigned long long)st->length == *size) {
        st->seen = *size;
        *size = 0;
        decide(s, st, data, st->seen);
        return MHD_YES;
    }
    st->seen += *size;
    if (!st->too_big && !st->busy && !charge(s, st, *size)) {
        st->busy = 1;
        release_body(s, st);
        log_info("refusing a review: the bodies being received passed the server's limit",
                 "webhook", st->hook >= 0 ? wh_hook_path((enum wh_hook)st->hook) : "");
    } else if (!st->too_big && !st->busy && buf_append(&st->body, data, *size) != KERR_OK) {
        st->too_big = 1;
        release_body(s, st);
    }
    *size = 0;
    return (st->too_big || st->busy) && st->seen > 2 * s->o.max_body ? MHD_NO : MHD_YES;
}

static enum MHD_Result finish(struct wh_server *s, struct MHD_Connection *c, struct req_state *st)
{
    char msg[96], *out;

    if (st->status)
        return MHD_YES;
    if (st->too_big) {
        snprintf(msg, sizeof(msg), "request entity is too large; limit is %zu bytes",
                 s->o.max_body);
        return send_review_error(s, c, st, MHD_HTTP_CONTENT_TOO_LARGE, msg);
    }
    if (st->busy) {
        snprintf(msg, sizeof(msg), "busy: review bodies of %zu bytes are being received at once",
                 s->o.max_buffered);
        return send_review_error(s, c, st, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
    }
    if (!st->decided) {
        decide(s, st, st->body.data, st->body.len);
        release_body(s, st);
    }
    if (!st->out)
        return send_text(s, c, st, st->out_status, "cannot answer the admission review\n");
    out = st->out;
    st->out = NULL;
    return send_bytes(s, c, st, st->out_status, out, st->out_len, "application/json", 1);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls)
{
    struct wh_server *s = cls;
    struct req_state *st = *con_cls;

    (void)version;
    if (!st) {
        wh_server_conn_busy(s, c);
        return begin(s, c, url, method, con_cls);
    }
    if (*upload_data_size > 0)
        return receive(s, st, upload_data, upload_data_size);
    return finish(s, c, st);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct wh_server *s = cls;
    struct req_state *st = *con_cls;

    (void)toe;
    wh_server_conn_idle(s, c);
    if (!st)
        return;
    if (st->hook >= 0) {
        if (s->gauge[st->hook])
            metrics_add(s->gauge[st->hook], -1);
        if (s->latency[st->hook] && st->status == 200)
            metrics_observe(s->latency[st->hook], since(&st->start));
        wh_server_count_request(s, st->hook, st->status);
    }
    atomic_fetch_sub(&s->in_flight, 1);
    release_body(s, st);
    free(st->out);
    free(st);
    *con_cls = NULL;
}

enum kerr wh_server_new(const struct wh_server_opts *opts, struct wh_server **out,
                        struct kerr_info *err)
{
    struct wh_conns_opts copts = { 0, 0, NULL, NULL };
    struct wh_server *s;
    long cores;
    enum kerr rc;

    *out = NULL;
    if (!opts->tls || !opts->dispatch)
        return kerr_set(err, KERR_INVAL, "the webhook server needs TLS and a dispatcher");
    s = calloc(1, sizeof(*s));
    if (!s)
        return kerr_set(err, KERR_NOMEM, "allocating the webhook server");
    s->o = *opts;
    s->bind = strdup(opts->bind_address ? opts->bind_address : "");
    if (!s->bind || pthread_mutex_init(&s->large, NULL) != 0) {
        free(s->bind);
        free(s);
        return kerr_set(err, KERR_NOMEM, "allocating the webhook server");
    }
    s->o.bind_address = s->bind;
    cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (!s->o.threads)
        s->o.threads = cores > 0 ? (unsigned int)cores : 1;
    if (!s->o.conn_timeout_s)
        s->o.conn_timeout_s = WH_SERVER_DEFAULT_TIMEOUT_S;
    if (!s->o.conn_limit)
        s->o.conn_limit = WH_SERVER_DEFAULT_CONN_LIMIT;
    if (!s->o.per_ip_limit)
        s->o.per_ip_limit = WH_SERVER_DEFAULT_PER_IP_LIMIT;
    if (!s->o.max_body)
        s->o.max_body = WH_SERVER_DEFAULT_MAX_BODY;
    if (!s->o.max_buffered)
        s->o.max_buffered = WH_SERVER_DEFAULT_MAX_BUFFERED;
    if (s->o.max_buffered < s->o.max_body)
        s->o.max_buffered = s->o.max_body;
    if (s->o.budget_ms <= 0)
        s->o.budget_ms = WH_SERVER_DEFAULT_BUDGET_MS;
    if (!s->o.handshake_timeout_s)
        s->o.handshake_timeout_s = WH_SERVER_DEFAULT_HANDSHAKE_S;
    copts.limit = s->o.conn_limit;
    copts.drop = wh_server_drop;
    copts.drop_ctx = s;
    if ((rc = wh_conns_new(&copts, &s->conns, err)) || (rc = wh_server_register_metrics(s, err))) {
        wh_server_free(s);
        return rc;
    }
    *out = s;
    return KERR_OK;
}

/*
 * Memory pool of a connection: request line, headers, the read buffer (half
 * of it) and the response headers. libmicrohttpd zeroes the whole pool after
 * every request, so its 32 KiB default costs a 32 KiB memset per review;
 * 16 KiB still takes headers of several KiB (bearer tokens) and reads a
 * review of up to 8 KiB in one go.
 */
#define CONN_MEMORY (16u * 1024u)

static struct MHD_Daemon *start_daemon(struct wh_server *s, unsigned int flags,
                                       const struct sockaddr *addr)
{
    /* MHD_OPTION_HTTPS_MEM_TRUST makes the handshake ask for a client certificate */
    struct MHD_OptionItem trust[] = {
        { s->o.client_auth ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0,
          s->o.client_auth ? (void *)wh_clientauth_pem(s->o.client_auth) : NULL },
        { MHD_OPTION_END, 0, NULL },
    };

    flags |= MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TLS | MHD_USE_ITC |
             MHD_USE_TURBO | MHD_USE_ERROR_LOG;
    return MHD_start_daemon(
        flags, s->o.port, NULL, NULL, handle, s, MHD_OPTION_EXTERNAL_LOGGER, wh_server_log, s,
        MHD_OPTION_THREAD_POOL_SIZE, s->o.threads, MHD_OPTION_CONNECTION_TIMEOUT,
        s->o.conn_timeout_s, MHD_OPTION_CONNECTION_LIMIT, s->o.conn_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->o.per_ip_limit, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)CONN_MEMORY, MHD_OPTION_HTTPS_PRIORITIES, WH_TLS_PRIORITIES,
        MHD_OPTION_HTTPS_CERT_CALLBACK, wh_tls_retrieve, MHD_OPTION_NOTIFY_CONNECTION,
        wh_server_notify_conn, s, MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_ARRAY,
        trust, addr ? MHD_OPTION_SOCK_ADDR : MHD_OPTION_END, addr, MHD_OPTION_END);
}

enum kerr wh_server_start(struct wh_server *s, struct kerr_info *err)
{
    struct addrinfo hints, *res = NULL;
    const union MHD_DaemonInfo *info;
    char port[8];
    int e;

    if (s->d)
        return KERR_OK;
    if (*s->bind) {
        memset(&hints, 0, sizeof(hints));
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE;
        snprintf(port, sizeof(port), "%u", (unsigned int)s->o.port);
        e = getaddrinfo(s->bind, port, &hints, &res);
        if (e != 0)
            return kerr_set(err, KERR_INVAL, "--webhook-server-bind-address %s: %s", s->bind,
                            gai_strerror(e));
        s->d = start_daemon(s, res->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0, res->ai_addr);
        freeaddrinfo(res);
    } else {
        s->d = start_daemon(s, MHD_USE_DUAL_STACK, NULL);
        if (!s->d)
            s->d = start_daemon(s, 0, NULL);
    }
    if (!s->d)
        return kerr_set(err, KERR_IO, "cannot listen on %s:%u", *s->bind ? s->bind : "*",
                        (unsigned int)s->o.port);
    info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : s->o.port;
    snprintf(port, sizeof(port), "%u", (unsigned int)s->port);
    log_info("webhook server listening", "address", *s->bind ? s->bind : "*", "port", port);
    return KERR_OK;
}

unsigned short wh_server_port(const struct wh_server *s)
{
    return s->port;
}

long wh_server_in_flight(const struct wh_server *s)
{
    return atomic_load(&s->in_flight);
}

size_t wh_server_buffered(const struct wh_server *s)
{
    return atomic_load(&s->buffered);
}

long wh_server_drain(struct wh_server *s, long timeout_ms)
{
    struct timespec t0, nap = { 0, 5 * 1000000L };
    MHD_socket fd;
    long left, quiet = 0;

    if (!s->d)
        return 0;
    atomic_store(&s->draining, 1);
    fd = MHD_quiesce_daemon(s->d);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* Wait until nothing has been in flight for 50 ms, or the time is up. */
    while (since(&t0) * 1000.0 < (double)timeout_ms && quiet < 10) {
        quiet = atomic_load(&s->in_flight) == 0 ? quiet + 1 : 0;
        nanosleep(&nap, NULL);
    }
    left = atomic_load(&s->in_flight);
    MHD_stop_daemon(s->d);
    s->d = NULL;
    return left;
}

void wh_server_free(struct wh_server *s)
{
    if (!s)
        return;
    wh_server_drain(s, 0);
    wh_conns_free(s->conns);
    pthread_mutex_destroy(&s->large);
    free(s->bind);
    free(s);
}
