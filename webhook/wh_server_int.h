/*
 * wh_server_int - what webhook/wh_server.c (the requests) and wh_server_conns.c (the
 * connections, the metrics, libmicrohttpd's log) share: the server itself, and the callbacks
 * the second gives the first.
 *
 * Thread safety: as wh_server.h; the callbacks run on the server's threads.
 */
#ifndef WEBHOOK_WH_SERVER_INT_H
#define WEBHOOK_WH_SERVER_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include <microhttpd.h>

#include "common/kerr.h"
#include "common/metrics.h"
#include "webhook/wh_conns.h"
#include "webhook/wh_server.h"

struct wh_server {
    struct wh_server_opts o;
    char *bind; /* OWNS: copy of o.bind_address */
    struct MHD_Daemon *d;
    unsigned short port;
    atomic_long in_flight;
    atomic_size_t buffered; /* bytes of bodies held by all requests (their charged) */
    atomic_int draining;
    struct metrics_vec *requests;                       /* BORROWED or NULL */
    _Atomic(struct metrics_child *) ok[WH_HOOK__COUNT]; /* BORROWED or NULL: requests_total 200 */
    struct metrics_child *latency[WH_HOOK__COUNT];      /* BORROWED or NULL */
    struct metrics_child *gauge[WH_HOOK__COUNT];        /* BORROWED or NULL */
    pthread_mutex_t large;         /* held while a review above WH_SERVER_LARGE_BODY is decided */
    struct wh_conns *conns;        /* OWNS: the connections, which to drop near the limit */
    struct metrics_child *dropped; /* BORROWED or NULL: connections dropped */
};

/* A request begins on c: busy in the table (never dropped); its first ends the handshake time. */
void wh_server_conn_busy(struct wh_server *s, struct MHD_Connection *c);

/* c's request completed: idle in the table again. */
void wh_server_conn_idle(struct wh_server *s, struct MHD_Connection *c);

/*
 * MHD_OPTION_NOTIFY_CONNECTION (cls: the server): a connection's TLS context (wh_tls) and its
 * place in the table; an opened one has handshake_timeout_s to send its first request, and one
 * the table cannot hold is dropped at once.
 */
void wh_server_notify_conn(void *cls, struct MHD_Connection *c, void **socket_context,
                           enum MHD_ConnectionNotificationCode toe);

/* wh_conns' drop (ctx: the server): fd's socket shut down, the drop counted. */
void wh_server_drop(void *ctx, int fd);

/* Register the server's metrics in s->o.registry (none without one). */
enum kerr wh_server_register_metrics(struct wh_server *s, struct kerr_info *err);

/* requests_total{webhook, code} += 1 (no-op without metrics or a status). */
void wh_server_count_request(struct wh_server *s, int hook, unsigned int status);

/* MHD_OPTION_EXTERNAL_LOGGER: libmicrohttpd's messages at debug level. */
void wh_server_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif
