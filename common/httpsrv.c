#include "common/httpsrv.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <microhttpd.h>

#include "common/log.h"

#define TEXT_PLAIN     "text/plain; charset=utf-8"
#define PROBE_BODY_MAX (64u * 1024u)
#define CHECK_NAME_MAX 64

struct check {
    char name[CHECK_NAME_MAX];
    httpsrv_check_fn fn;
    void *ctx;
};

struct route {
    char *path;
    httpsrv_route_fn fn;
    void *ctx;
};

struct httpsrv {
    char *bind;
    struct metrics_registry *registry; /* BORROWED */
    unsigned int threads, conn_timeout, conn_limit;
    struct MHD_Daemon *daemon;
    unsigned short port;
    struct check checks[2][HTTPSRV_MAX_CHECKS]; /* per probe, sorted by name */
    size_t nchecks[2];
    struct route routes[HTTPSRV_MAX_ROUTES];
    size_t nroutes;
};

struct httpsrv_req {
    struct MHD_Connection *conn;
    const char *method;
    const char *path;
};

static const char *const probe_names[] = { "healthz", "readyz" };

enum kerr httpsrv_new(const struct httpsrv_opts *opts, struct httpsrv **out, struct kerr_info *err)
{
    struct httpsrv *s;

    *out = NULL;
    if (!opts || !opts->bind)
        return kerr_set(err, KERR_INVAL, "httpsrv: a bind address is required");
    s = calloc(1, sizeof(*s));
    if (!s || !(s->bind = strdup(opts->bind))) {
        free(s);
        return kerr_set(err, KERR_NOMEM, "httpsrv: new");
    }
    s->registry = opts->registry;
    s->threads = opts->threads ? opts->threads : 1;
    s->conn_timeout = opts->conn_timeout_secs ? opts->conn_timeout_secs : 10;
    s->conn_limit = opts->conn_limit ? opts->conn_limit : 64;
    *out = s;
    return KERR_OK;
}

void httpsrv_free(struct httpsrv *s)
{
    size_t i;

    if (!s)
        return;
    httpsrv_stop(s);
    for (i = 0; i < s->nroutes; i++)
        free(s->routes[i].path);
    free(s->bind);
    free(s);
}

static bool valid_check_name(const char *name)
{
    size_t i;

    if (!name || !name[0] || strlen(name) >= CHECK_NAME_MAX)
        return false;
    for (i = 0; name[i]; i++) {
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", name[i]))
            return false;
    }
    return true;
}

enum kerr httpsrv_add_check(struct httpsrv *s, enum httpsrv_probe probe, const char *name,
                            httpsrv_check_fn fn, void *ctx, struct kerr_info *err)
{
    struct check *list;
    size_t n, at;

    if (s->daemon)
        return kerr_set(err, KERR_INVAL, "httpsrv: checks must be added before start");
    if ((probe != HTTPSRV_HEALTHZ && probe != HTTPSRV_READYZ) || !fn || !valid_check_name(name))
        return kerr_set(err, KERR_INVAL, "httpsrv: invalid check \"%s\"", name ? name : "");
    list = s->checks[probe];
    n = s->nchecks[probe];
    if (n == HTTPSRV_MAX_CHECKS)
        return kerr_set(err, KERR_TOOBIG, "httpsrv: more than %d checks", HTTPSRV_MAX_CHECKS);
    for (at = 0; at < n && strcmp(list[at].name, name) < 0; at++)
        ;
    if (at < n && strcmp(list[at].name, name) == 0)
        return kerr_set(err, KERR_EXISTS, "httpsrv: check %s exists", name);
    memmove(&list[at + 1], &list[at], (n - at) * sizeof(*list));
    snprintf(list[at].name, sizeof(list[at].name), "%s", name);
    list[at].fn = fn;
    list[at].ctx = ctx;
    s->nchecks[probe]++;
    return KERR_OK;
}

enum kerr httpsrv_add_route(struct httpsrv *s, const char *path, httpsrv_route_fn fn, void *ctx,
                            struct kerr_info *err)
{
    struct route *r;

    if (s->daemon)
        return kerr_set(err, KERR_INVAL, "httpsrv: routes must be added before start");
    if (!path || path[0] != '/' || !fn)
        return kerr_set(err, KERR_INVAL, "httpsrv: invalid route \"%s\"", path ? path : "");
    if (s->nroutes == HTTPSRV_MAX_ROUTES)
        return kerr_set(err, KERR_TOOBIG, "httpsrv: more than %d routes", HTTPSRV_MAX_ROUTES);
    r = &s->routes[s->nroutes];
    if (!(r->path = strdup(path)))
        return kerr_set(err, KERR_NOMEM, "httpsrv: route");
    r->fn = fn;
    r->ctx = ctx;
    s->nroutes++;
    return KERR_OK;
}

/* Split "host:port", ":port" or "[v6]:port"; host "" means every interface. */
static enum kerr parse_bind(const char *bind, char *host, size_t hsize, unsigned short *port,
                            struct kerr_info *err)
{
    const char *colon = strrchr(bind, ':'), *h = bind;
    size_t hlen;
    char *end;
    long p;

    if (!colon)
        goto bad;
    hlen = (size_t)(colon - bind);
    if (hlen > 0 && bind[0] == '[') {
        if (hlen < 2 || colon[-1] != ']')
            goto bad;
        h = bind + 1;
        hlen -= 2;
    } else if (memchr(bind, ':', hlen)) {
        goto bad; /* an IPv6 literal needs brackets */
    }
    errno = 0;
    p = strtol(colon + 1, &end, 10);
    if (hlen >= hsize || colon[1] == '\0' || *end != '\0' || errno || p < 0 || p > 65535)
        goto bad;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = (unsigned short)p;
    return KERR_OK;
bad:
    return kerr_set(err, KERR_INVAL, "httpsrv: bad bind address \"%s\" (want host:port)", bind);
}

/* A listening, non-blocking socket on sa; -1 with errno set on failure. */
static int listen_addr(const struct sockaddr *sa, socklen_t len)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1, zero = 0, saved;

    if (fd < 0)
        return -1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        (sa->sa_family == AF_INET6 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) != 0) ||
        bind(fd, sa, len) != 0 || listen(fd, 128) != 0) {
        saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* Every interface: IPv6 dual-stack when the host has IPv6, else IPv4. */
static int listen_any(unsigned short port)
{
    struct sockaddr_in6 a6;
    struct sockaddr_in a4;
    int fd;

    memset(&a6, 0, sizeof(a6));
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_any;
    a6.sin6_port = htons(port);
    fd = listen_addr((const struct sockaddr *)&a6, sizeof(a6));
    if (fd >= 0 || (errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL))
        return fd;
    memset(&a4, 0, sizeof(a4));
    a4.sin_family = AF_INET;
    a4.sin_addr.s_addr = htonl(INADDR_ANY);
    a4.sin_port = htons(port);
    return listen_addr((const struct sockaddr *)&a4, sizeof(a4));
}

static enum kerr open_listener(const char *bind, int *fd, unsigned short *bound,
                               struct kerr_info *err)
{
    struct addrinfo hints, *res = NULL, *ai;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[256], port_s[8], eb[128];
    unsigned short port = 0;
    enum kerr rc;
    int gai;

    *fd = -1;
    if ((rc = parse_bind(bind, host, sizeof(host), &port, err)) != KERR_OK)
        return rc;
    if (host[0] == '\0') {
        *fd = listen_any(port);
    } else {
        memset(&hints, 0, sizeof(hints));
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
        snprintf(port_s, sizeof(port_s), "%u", (unsigned)port);
        if ((gai = getaddrinfo(host, port_s, &hints, &res)) != 0)
            return kerr_set(err, KERR_INVAL, "httpsrv: %s: %s", host, gai_strerror(gai));
        for (ai = res; ai && *fd < 0; ai = ai->ai_next)
            *fd = listen_addr(ai->ai_addr, ai->ai_addrlen);
        freeaddrinfo(res);
    }
    if (*fd < 0) {
        if (strerror_r(errno, eb, sizeof(eb)))
            eb[0] = '\0';
        return kerr_set(err, KERR_IO, "httpsrv: cannot listen on %s: %s", bind, eb);
    }
    if (getsockname(*fd, (struct sockaddr *)&ss, &sl) == 0)
        *bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                : ((struct sockaddr_in *)&ss)->sin_port);
    return KERR_OK;
}

/* Queue body (emptied) with status; TAKES the buffer's content. */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *ctype,
                             struct buf *body, const char *allow)
{
    size_t len = 0;
    char *data = buf_detach(body, &len);
    struct MHD_Response *r;
    enum MHD_Result ret;

    if (!data)
        return MHD_NO;
    r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) != MHD_YES ||
        MHD_add_response_header(r, "X-Content-Type-Options", "nosniff") != MHD_YES ||
        (allow && MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow) != MHD_YES)) {
        MHD_destroy_response(r);
        return MHD_NO;
    }
    ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
                                  const char *text, const char *allow)
{
    struct buf b;

    buf_init(&b, PROBE_BODY_MAX);
    if (buf_appends(&b, text) != KERR_OK) {
        buf_release(&b);
        return MHD_NO;
    }
    return reply(conn, status, TEXT_PLAIN, &b, allow);
}

/* Key lookup in the query string that tells "?k" (value "") from no k at all (NULL). */
struct arg_find {
    const char *key;
    const char *value;
};

static enum MHD_Result find_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    struct arg_find *f = cls;

    (void)kind;
    if (key && strcmp(key, f->key) == 0) {
        f->value = value ? value : "";
        return MHD_NO; /* stop iterating */
    }
    return MHD_YES;
}

static const char *query_arg(struct MHD_Connection *conn, const char *key)
{
    struct arg_find f = { key, NULL };

    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, find_arg, &f);
    return f.value;
}

static bool run_check(const struct check *c, const char *probe)
{
    struct kerr_info err;
    enum kerr rc;

    kerr_clear(&err);
    rc = c->fn(c->ctx, &err);
    if (rc != KERR_OK)
        log_debug("httpsrv: check failed", "probe", probe, "check", c->name, "error",
                  err.msg[0] ? err.msg : kerr_str(rc));
    return rc == KERR_OK;
}

/* /healthz/<name> or /readyz/<name>: one check. */
static enum MHD_Result serve_one(struct httpsrv *s, struct MHD_Connection *conn, int probe,
                                 const char *name)
{
    const struct check *checks = s->checks[probe];
    size_t n = s->nchecks[probe], i;
    char text[CHECK_NAME_MAX + 64];

    for (i = 0; i < n && strcmp(checks[i].name, name) != 0; i++)
        ;
    if (i == n)
        return reply_text(conn, MHD_HTTP_NOT_FOUND, "404 page not found\n", NULL);
    if (run_check(&checks[i], probe_names[probe]))
        return reply_text(conn, MHD_HTTP_OK, "ok", NULL);
    snprintf(text, sizeof(text), "[-]%s failed: reason withheld\n", checks[i].name);
    return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, text, NULL);
}

/* /healthz or /readyz: every check of the probe, as controller-runtime's healthz handler. */
static enum MHD_Result serve_probe(struct httpsrv *s, struct MHD_Connection *conn, int probe)
{
    const struct check *checks = s->checks[probe];
    size_t n = s->nchecks[probe], i;
    bool ok[HTTPSRV_MAX_CHECKS], failed = false, verbose = query_arg(conn, "verbose") != NULL;
    enum kerr rc = KERR_OK;
    struct buf b;

    for (i = 0; i < n; i++)
        failed |= !(ok[i] = run_check(&checks[i], probe_names[probe]));
    if (!failed && !verbose)
        return reply_text(conn, MHD_HTTP_OK, "ok", NULL);
    buf_init(&b, PROBE_BODY_MAX);
    if (n == 0)
        rc = buf_appends(&b, "[+]ping ok\n");
    for (i = 0; rc == KERR_OK && i < n; i++)
        rc = buf_appendf(&b, ok[i] ? "[+]%s ok\n" : "[-]%s failed: reason withheld\n",
                         checks[i].name);
    if (rc == KERR_OK)
        rc = buf_appendf(&b, "%s check %s\n", probe_names[probe], failed ? "failed" : "passed");
    if (rc != KERR_OK) {
        buf_release(&b);
        return MHD_NO;
    }
    return reply(conn, failed ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK, TEXT_PLAIN, &b, NULL);
}

static enum MHD_Result serve_metrics(struct httpsrv *s, struct MHD_Connection *conn)
{
    struct kerr_info err;
    struct buf b;

    buf_init(&b, HTTPSRV_MAX_BODY);
    if (metrics_render(s->registry, &b, &err) != KERR_OK) {
        buf_release(&b);
        log_error("httpsrv: rendering metrics", "error", err.msg);
        return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "metrics unavailable\n", NULL);
    }
    return reply(conn, MHD_HTTP_OK, METRICS_CONTENT_TYPE, &b, NULL);
}

static enum MHD_Result serve_route(const struct route *r, struct MHD_Connection *conn,
                                   const char *method, const char *url)
{
    struct httpsrv_req req = { conn, method, url };
    struct httpsrv_reply rep = { .status = MHD_HTTP_OK, .content_type = NULL };
    struct kerr_info err;

    buf_init(&rep.body, HTTPSRV_MAX_BODY);
    kerr_clear(&err);
    if (r->fn(r->ctx, &req, &rep, &err) != KERR_OK) {
        buf_release(&rep.body);
        log_warn("httpsrv: route failed", "path", url, "error", err.msg);
        rep.status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        rep.content_type = NULL;
        if (buf_appendf(&rep.body, "%s\n", err.msg[0] ? err.msg : "internal error") != KERR_OK)
            return MHD_NO;
    }
    return reply(conn, rep.status, rep.content_type ? rep.content_type : TEXT_PLAIN, &rep.body,
                 NULL);
}

/* Which probe path is url ("/readyz", "/readyz/<name>"); -1 for none. */
static int probe_of(const char *url, const char **name)
{
    size_t n;
    int p;

    *name = NULL;
    for (p = 0; p < 2; p++) {
        n = strlen(probe_names[p]);
        if (url[0] != '/' || strncmp(url + 1, probe_names[p], n) != 0)
            continue;
        if (url[n + 1] == '\0')
            return p;
        if (url[n + 1] == '/' && url[n + 2] != '\0') {
            *name = url + n + 2;
            return p;
        }
    }
    return -1;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **req_cls)
{
    struct httpsrv *s = cls;
    bool get =
        strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    const char *name;
    size_t i;
    int probe;

    (void)version;
    (void)upload;
    if (!get) /* answered at once: MHD drops any body and closes */
        return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n", "GET, HEAD");
    if (!*req_cls) {
        *req_cls = s; /* headers seen; wait for the end of the request */
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0; /* a GET body is ignored */
        return MHD_YES;
    }
    if (strcmp(url, "/metrics") == 0 && s->registry)
        return serve_metrics(s, conn);
    if ((probe = probe_of(url, &name)) >= 0)
        return name ? serve_one(s, conn, probe, name) : serve_probe(s, conn, probe);
    for (i = 0; i < s->nroutes; i++) {
        if (strcmp(url, s->routes[i].path) == 0)
            return serve_route(&s->routes[i], conn, method, url);
    }
    return reply_text(conn, MHD_HTTP_NOT_FOUND, "404 page not found\n", NULL);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[256];
    size_t n;

    (void)cls;
    if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
        return;
    n = strlen(msg);
    while (n > 0 && msg[n - 1] == '\n')
        msg[--n] = '\0';
    log_warn("httpsrv: libmicrohttpd", "error", msg);
}

enum kerr httpsrv_start(struct httpsrv *s, struct kerr_info *err)
{
    struct MHD_OptionItem ops[5];
    unsigned int flags =
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    enum kerr rc;
    int fd, n = 0;

    if (s->daemon)
        return kerr_set(err, KERR_INVAL, "httpsrv: already started");
    if ((rc = open_listener(s->bind, &fd, &s->port, err)) != KERR_OK)
        return rc;
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, fd, NULL };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, s->conn_timeout, NULL };
    ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, s->conn_limit, NULL };
    if (s->threads > 1)
        ops[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, s->threads, NULL };
    ops[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
    s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER,
                                 mhd_log, s, MHD_OPTION_ARRAY, ops, MHD_OPTION_END);
    if (!s->daemon) {
        close(fd);
        s->port = 0;
        return kerr_set(err, KERR_IO, "httpsrv: libmicrohttpd did not start on %s", s->bind);
    }
    log_info("httpsrv: listening", "bind", s->bind);
    return KERR_OK;
}

unsigned short httpsrv_port(const struct httpsrv *s)
{
    return s && s->daemon ? s->port : 0;
}

void httpsrv_stop(struct httpsrv *s)
{
    if (!s || !s->daemon)
        return;
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
}

const char *httpsrv_req_method(const struct httpsrv_req *req)
{
    return req->method;
}

const char *httpsrv_req_path(const struct httpsrv_req *req)
{
    return req->path;
}

const char *httpsrv_req_arg(const struct httpsrv_req *req, const char *key)
{
    return query_arg(req->conn, key);
}

const char *httpsrv_req_header(const struct httpsrv_req *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}
