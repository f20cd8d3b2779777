#include "tests/kube-sim/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "common/buf.h"
#include "common/log.h"
#include "tests/kube-sim/watch.h"

#ifndef POLLRDHUP
#define POLLRDHUP 0x2000 /* Linux: peer closed its writing half */
#endif

#define MAX_QUERY 64

struct ksim_server {
    struct MHD_Daemon *d;
    struct ksim_api *api;         /* BORROWED */
    const struct ksim_auth *auth; /* BORROWED */
    size_t max_body;
    int port;
    struct ksim_user anonymous; /* OWNS its name: who unauthenticated public requests are */
};

/* Per-request state, freed in on_completed. */
struct rq {
    struct buf body;
    int too_big;
    int started;
};

struct query_ctx {
    struct ksim_kv kv[MAX_QUERY];
    size_t n;
};

static enum MHD_Result collect_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    struct query_ctx *q = cls;

    (void)kind;
    if (q->n < MAX_QUERY) {
        q->kv[q->n].key = key;
        q->kv[q->n].value = value ? value : "";
        q->n++;
    }
    return MHD_YES;
}

static int peer_alive(void *arg)
{
    struct pollfd p = { .fd = (int)(intptr_t)arg, .events = POLLRDHUP, .revents = 0 };

    if (poll(&p, 1, 0) < 0)
        return 1;
    return !(p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

static ssize_t read_watch(void *cls, uint64_t pos, char *buf, size_t max)
{
    ssize_t n = ksim_watch_read(cls, buf, max);

    (void)pos;
    return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void free_watch(void *cls)
{
    ksim_watch_free(cls);
}

/* Go's net/http quoting of a warning text: 299 - "text" with \ and " escaped. */
static void add_warning(struct MHD_Response *r, const char *text)
{
    char h[1200];
    size_t n = 0;

    n += (size_t)snprintf(h, sizeof(h), "299 - \"");
    for (; *text && n + 4 < sizeof(h); text++) {
        if (*text == '"' || *text == '\\')
            h[n++] = '\\';
        h[n++] = *text == '\n' ? ' ' : *text;
    }
    h[n++] = '"';
    h[n] = '\0';
    MHD_add_response_header(r, "Warning", h);
}

static enum MHD_Result respond(struct MHD_Connection *conn, struct ksim_resp *resp)
{
    struct MHD_Response *r;
    const union MHD_ConnectionInfo *ci;
    enum MHD_Result ret;
    char ra[16];
    size_t i;
    int cache_control = 0;

    if (resp->watch) {
        ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (ci)
            ksim_watch_set_alive(resp->watch, peer_alive, (void *)(intptr_t)ci->connect_fd);
        r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, read_watch, resp->watch,
                                              free_watch);
        if (r)
            resp->watch = NULL;
    } else {
        r = MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
        if (r)
            resp->body = NULL;
    }
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type",
                            resp->content_type ? resp->content_type : "application/json");
    for (i = 0; i < resp->nheaders; i++) {
        char *colon = strstr(resp->headers[i], ": ");

        if (!colon)
            continue;
        *colon = '\0';
        MHD_add_response_header(r, resp->headers[i], colon + 2);
        if (strcasecmp(resp->headers[i], "Cache-Control") == 0)
            cache_control = 1;
        *colon = ':';
    }
    if (!cache_control)
        MHD_add_response_header(r, "Cache-Control", "no-cache, private");
    for (i = 0; i < resp->nwarnings; i++)
        add_warning(r, resp->warnings[i]);
    if (resp->retry_after) {
        snprintf(ra, sizeof(ra), "%d", resp->retry_after);
        MHD_add_response_header(r, "Retry-After", ra);
    }
    ret = MHD_queue_response(conn, (unsigned)resp->code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result status(struct MHD_Connection *conn, int code, const char *reason,
                              const char *msg)
{
    struct ksim_resp resp;
    struct ksim_apierr e;
    enum MHD_Result ret;

    memset(&resp, 0, sizeof(resp));
    ksim_apierr_set(&e, code, reason, "%s", msg);
    ksim_resp_error(&resp, &e);
    ret = respond(conn, &resp);
    ksim_resp_release(&resp);
    return ret;
}

static int public_path(const char *url)
{
    return strcmp(url, "/healthz") == 0 || strcmp(url, "/livez") == 0 ||
           strcmp(url, "/readyz") == 0 || strcmp(url, "/version") == 0;
}

static enum MHD_Result serve(struct ksim_server *s, struct MHD_Connection *conn, const char *url,
                             const char *method, struct rq *rq)
{
    struct query_ctx q;
    struct ksim_req req;
    struct ksim_resp resp;
    enum MHD_Result ret;
    const struct ksim_user *u;

    u = ksim_auth_lookup(s->auth,
                         MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization"));
    if (!u && !public_path(url))
        return status(conn, 401, "Unauthorized", "Unauthorized");
    if (rq->too_big)
        return status(conn, 413, "RequestEntityTooLarge",
                      "Request entity too large: limit is 3145728");
    memset(&q, 0, sizeof(q));
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_query, &q);
    memset(&req, 0, sizeof(req));
    req.method = method;
    req.path = url;
    req.query = q.kv;
    req.nquery = q.n;
    req.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    req.accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
    req.user_agent = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent");
    req.host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
    req.body = rq->body.data;
    req.body_len = rq->body.len;
    req.user = u ? u : &s->anonymous;
    ksim_api_handle(s->api, &req, &resp);
    if (log_enabled(LOG_DEBUG)) {
        char code[8];
        const char *watch = ksim_req_query(&req, "watch");

        snprintf(code, sizeof(code), "%d", resp.code);
        log_debug("request", "method", method, "path", url, "watch", watch ? watch : "", "code",
                  code, "user", req.user->name);
    }
    ret = respond(conn, &resp);
    ksim_resp_release(&resp);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    struct ksim_server *s = cls;
    struct rq *rq = *con_cls;
    const char *cl;

    (void)version;
    if (!rq) {
        rq = calloc(1, sizeof(*rq));
        if (!rq)
            return MHD_NO;
        buf_init(&rq->body, s->max_body);
        *con_cls = rq;
        cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > s->max_body)
            return status(conn, 413, "RequestEntityTooLarge",
                          "Request entity too large: limit is 3145728");
        return MHD_YES;
    }
    if (*size) {
        if (!rq->too_big && buf_append(&rq->body, data, *size) != KERR_OK)
            rq->too_big = 1;
        *size = 0;
        return MHD_YES;
    }
    if (rq->started)
        return MHD_YES;
    rq->started = 1;
    return serve(s, conn, url, method, rq);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct rq *rq = *con_cls;

    (void)cls;
    (void)conn;
    (void)toe;
    if (!rq)
        return;
    buf_release(&rq->body);
    free(rq);
    *con_cls = NULL;
}

static int bound_port(struct MHD_Daemon *d)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
    struct sockaddr_in a;
    socklen_t len = sizeof(a);

    if (!di || getsockname(di->listen_fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    return ntohs(a.sin_port);
}

enum kerr ksim_server_start(struct ksim_api *api, const struct ksim_auth *auth,
                            const struct ksim_server_opts *opts, struct ksim_server **out,
                            struct kerr_info *err)
{
    struct ksim_server *s = calloc(1, sizeof(*s));
    struct sockaddr_in addr;

    *out = NULL;
    if (!s)
        return kerr_set(err, KERR_NOMEM, NULL);
    s->api = api;
    s->auth = auth;
    s->anonymous.name = strdup("system:anonymous");
    s->anonymous.uid = strdup("");
    if (!s->anonymous.name || !s->anonymous.uid) {
        free(s->anonymous.name);
        free(s->anonymous.uid);
        free(s);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    s->max_body = opts->max_body ? opts->max_body : 3u * 1024u * 1024u;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)opts->port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    s->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD |
                                MHD_USE_TLS | MHD_USE_ERROR_LOG,
                            0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
                            (struct sockaddr *)&addr, MHD_OPTION_HTTPS_MEM_CERT, opts->cert_pem,
                            MHD_OPTION_HTTPS_MEM_KEY, opts->key_pem, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)(opts->max_connections ? opts->max_connections : 512),
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)300,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
    if (!s->d) {
        free(s->anonymous.name);
        free(s->anonymous.uid);
        free(s);
        return kerr_set(err, KERR_IO, "cannot listen on 127.0.0.1:%d", opts->port);
    }
    s->port = bound_port(s->d);
    *out = s;
    return KERR_OK;
}

int ksim_server_port(const struct ksim_server *s)
{
    return s->port;
}

void ksim_server_stop(struct ksim_server *s)
{
    if (!s)
        return;
    ksim_store_shutdown(s->api->store);
    MHD_stop_daemon(s->d);
    free(s->anonymous.name);
    free(s->anonymous.uid);
    free(s);
}
