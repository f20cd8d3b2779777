/*
 * wh_server - the HTTPS admission server (libmicrohttpd over GnuTLS).
 *
 *   POST /webhooks/etcdcomponents | /webhooks/etcd | /webhooks/etcd-mutate
 *        Content-Type application/json (parameters allowed), body at most
 *        max_body bytes -> the AdmissionReview answer (wh_dispatch).
 *   With a client_auth (--client-ca), a request on those paths without a
 *   valid client certificate gets 401 (403: wrong CN) before anything else
 *   (webhook/wh_clientauth).
 *   405 (Allow: POST) for another method on those paths, 415 for another
 *   content type, 413 over the body limit (seen in Content-Length on the
 *   first call, or while reading: the rest is discarded), 503 when the
 *   bodies being received by all connections together would pass
 *   max_buffered bytes (the rest is discarded), 404 elsewhere.
 *
 * Hardening: TLS 1.2+ only (WH_TLS_PRIORITIES) with the hot-swapped
 * certificate of a struct wh_tls; an idle-connection timeout, shorter until a
 * connection's first request (handshake_timeout_s), a connection limit and a
 * per-IP limit; near the limit the least recently active connections without a
 * request in progress are dropped to make room (webhook/wh_conns), so idle
 * connections cannot keep the API server's calls out; a per-request time budget from the first byte
 * to the answer (a request still uploading past it is dropped; the API
 * lookups of its decision get the deadline WH_SERVER_LOOKUP_SHARE of it,
 * through lookup_deadline_set, and decisions are linear in the body); a thread
 * pool sized to the cores; reviews above WH_SERVER_LARGE_BODY decided one
 * at a time (another waits inside its budget, then gets 503), the heap
 * trimmed after each, so that concurrent hostile bodies cost their bytes
 * and one parse (REVIEW_PARSE_BUDGET), not one parse each; a drain on shutdown (stop accepting, let
 * the reviews in flight finish, then close). A connection's memory pool is 16 KiB: request headers
 * of more than about 14 KiB get 431.
 *
 * Speed: a body that arrives whole (the usual case) is decided straight
 * from libmicrohttpd's buffer; TLS records are read ahead (wh_tlsio).
 *
 * Metrics (controller-runtime's names, label webhook = the path):
 * controller_runtime_webhook_requests_total{webhook,code} (HTTP status),
 * controller_runtime_webhook_latency_seconds{webhook},
 * controller_runtime_webhook_requests_in_flight{webhook};
 * warden_webhook_connections_dropped_total (wh_conns' drops).
 *
 * Thread safety: new/start/drain/free from the controlling thread; the
 * handlers run on the pool threads and only read the configuration.
 */
#ifndef WEBHOOK_WH_SERVER_H
#define WEBHOOK_WH_SERVER_H

#include <stddef.h>

#include "common/kerr.h"
#include "common/metrics.h"
#include "webhook/wh_clientauth.h"
#include "webhook/wh_dispatch.h"
#include "webhook/wh_tls.h"

/* kube-apiserver's own request body limit: no review it sends is larger */
#define WH_SERVER_DEFAULT_MAX_BODY (3u * 1024u * 1024u)
/* Bytes of review bodies held at once by all connections (what they cost beside one parse) */
#define WH_SERVER_DEFAULT_MAX_BUFFERED (64u * 1024u * 1024u)
/* A review above this is decided one at a time (wh_server.c: decide) */
#define WH_SERVER_LARGE_BODY           (256u * 1024u)
#define WH_SERVER_DEFAULT_TIMEOUT_S    30u
#define WH_SERVER_DEFAULT_CONN_LIMIT   1000u
#define WH_SERVER_DEFAULT_PER_IP_LIMIT 256u
#define WH_SERVER_DEFAULT_BUDGET_MS    10000L
/* Time a connection has, after its TLS handshake, to send its first request's headers. */
#define WH_SERVER_DEFAULT_HANDSHAKE_S 10u
/* Share of the budget, from the first byte, that a review's API lookups may use. */
#define WH_SERVER_LOOKUP_SHARE 0.75

struct wh_server_opts {
    const char *bind_address;                /* BORROWED; "" or NULL: every address */
    unsigned short port;                     /* 0: any (tests; see wh_server_port) */
    unsigned int threads;                    /* 0: the number of online cores */
    unsigned int conn_timeout_s;             /* idle timeout once a request came; 0: default */
    unsigned int handshake_timeout_s;        /* idle timeout before the first; 0: default */
    unsigned int conn_limit;                 /* 0: default */
    unsigned int per_ip_limit;               /* 0: default */
    size_t max_body;                         /* 0: default (3 MiB) */
    size_t max_buffered;                     /* 0: default (64 MiB); raised to max_body */
    long budget_ms;                          /* per request; 0: default */
    struct wh_tls *tls;                      /* BORROWED, required */
    const struct wh_clientauth *client_auth; /* BORROWED, optional: require a client certificate */
    const struct wh_dispatch *dispatch;      /* BORROWED, required */
    struct metrics_registry *registry;       /* BORROWED, optional */
};

struct wh_server;

/* A server, not yet listening. The options are copied. On KERR_OK *out OWNS it. */
enum kerr wh_server_new(const struct wh_server_opts *opts, struct wh_server **out,
                        struct kerr_info *err);

/* Listen and start the pool. KERR_IO when the address cannot be bound. */
enum kerr wh_server_start(struct wh_server *s, struct kerr_info *err);

/* The bound port once started. */
unsigned short wh_server_port(const struct wh_server *s);

/* Requests being handled right now (all webhooks). */
long wh_server_in_flight(const struct wh_server *s);

/* Bytes of review bodies being held right now (all connections). */
size_t wh_server_buffered(const struct wh_server *s);

/*
 * Stop accepting connections, answer the requests in flight (their
 * responses close the connection) for up to timeout_ms, then stop the
 * daemon. Idempotent. Returns the number of requests still in flight
 * when the wait ended (0 after a clean drain).
 */
long wh_server_drain(struct wh_server *s, long timeout_ms);

/* Drain (with no wait) if needed and free. NULL: no-op. */
void wh_server_free(struct wh_server *s);

#endif
