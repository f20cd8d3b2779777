/* wh_server_conns - the server's connections, metrics and log; see wh_server_int.h. */
#include "webhook/wh_server_int.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/log.h"
#include "webhook/wh_tls.h"

static int fd_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *fd =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

    return fd ? fd->connect_fd : -1;
}

void wh_server_conn_busy(struct wh_server *s, struct MHD_Connection *c)
{
    if (wh_conns_busy(s->conns, fd_of(c)))
        MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, s->o.conn_timeout_s);
}

void wh_server_conn_idle(struct wh_server *s, struct MHD_Connection *c)
{
    wh_conns_idle(s->conns, fd_of(c));
}

/*
 * requests_total{webhook, code} += 1. The child of code 200, the usual one,
 * is looked up once per webhook and kept; the series still appears only
 * once a request had that code.
 */
void wh_server_count_request(struct wh_server *s, int hook, unsigned int status)
{
    const char *values[3] = { NULL, NULL, NULL };
    struct metrics_child *child = NULL;
    char code[16];

    if (!s->requests || !status)
        return;
    if (status == 200 && (child = atomic_load(&s->ok[hook]))) {
        metrics_inc(child);
        return;
    }
    snprintf(code, sizeof(code), "%u", status);
    values[0] = wh_hook_path((enum wh_hook)hook);
    values[1] = code;
    if (metrics_with(s->requests, values, &child, NULL) != KERR_OK)
        return;
    metrics_inc(child);
    if (status == 200)
        atomic_store(&s->ok[hook], child);
}

/* wh_conns' drop: the socket shut down, libmicrohttpd closes the connection on its next read. */
void wh_server_drop(void *ctx, int fd)
{
    struct wh_server *s = ctx;

    shutdown(fd, SHUT_RDWR);
    if (s->dropped)
        metrics_inc(s->dropped);
}

/*
 * A connection opened or closed: its TLS context (wh_tls), and its place in the table of
 * connections. An opened one has handshake_timeout_s to send its first request's headers;
 * one the table cannot hold is dropped (it could never be dropped to make room).
 */
void wh_server_notify_conn(void *cls, struct MHD_Connection *c, void **socket_context,
                           enum MHD_ConnectionNotificationCode toe)
{
    struct wh_server *s = cls;
    int fd = fd_of(c);

    wh_tls_notify_connection(s->o.tls, c, socket_context, toe);
    if (toe != MHD_CONNECTION_NOTIFY_STARTED) {
        wh_conns_close(s->conns, fd);
        return;
    }
    if (wh_conns_open(s->conns, fd) < 0 && fd >= 0)
        shutdown(fd, SHUT_RDWR);
    MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, s->o.handshake_timeout_s);
}

void wh_server_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    size_t n;

    (void)cls;
    if (!log_enabled(LOG_DEBUG))
        return;
    vsnprintf(line, sizeof(line), fmt, ap);
    n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    log_debug("libmicrohttpd", "detail", line);
}

enum kerr wh_server_register_metrics(struct wh_server *s, struct kerr_info *err)
{
    static const char *const by_hook[] = { "webhook", NULL };
    static const char *const by_code[] = { "webhook", "code", NULL };
    struct metrics_vec *lat = NULL, *gauge = NULL, *dropped = NULL;
    const char *values[2] = { NULL, NULL };
    enum kerr rc;
    int h;

    if (!s->o.registry)
        return KERR_OK;
    if ((rc = metrics_register(s->o.registry, METRICS_COUNTER,
                               "controller_runtime_webhook_requests_total",
                               "Total number of admission requests by HTTP status code.", by_code,
                               NULL, 0, &s->requests, err)) ||
        (rc = metrics_register(s->o.registry, METRICS_HISTOGRAM,
                               "controller_runtime_webhook_latency_seconds",
                               "Histogram of the latency of processing admission requests", by_hook,
                               metrics_def_buckets, METRICS_DEF_BUCKETS_LEN, &lat, err)) ||
        (rc = metrics_register(s->o.registry, METRICS_GAUGE,
                               "controller_runtime_webhook_requests_in_flight",
                               "Current number of admission requests being served.", by_hook, NULL,
                               0, &gauge, err)) ||
        (rc = metrics_register(s->o.registry, METRICS_COUNTER,
                               "warden_webhook_connections_dropped_total",
                               "Connections without a request in progress closed to make room "
                               "near the connection limit",
                               NULL, NULL, 0, &dropped, err)) ||
        (rc = metrics_with(dropped, NULL, &s->dropped, err)))
        return rc;
    for (h = 0; h < WH_HOOK__COUNT && !rc; h++) {
        values[0] = wh_hook_path((enum wh_hook)h);
        if (!(rc = metrics_with(lat, values, &s->latency[h], err)))
            rc = metrics_with(gauge, values, &s->gauge[h], err);
    }
    return rc;
}
