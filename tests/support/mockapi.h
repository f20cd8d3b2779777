/*
 * mockapi - a scripted HTTP/1.1 server on 127.0.0.1 for tests of HTTP
 * clients (the API client, informers, watches).
 *
 * The server listens on an ephemeral port and serves every connection in its
 * own thread, with keep-alive. A test queues expected requests with canned
 * replies (struct mockapi_spec); each incoming request is answered by the
 * first queued reply that matches it and still has uses left, and is
 * recorded so the test can assert on what arrived (method, path, query
 * parameters, headers, body, connection). A request nothing matches is
 * answered 404 with a metav1.Status whose message starts with "mockapi: no
 * reply" and is counted by mockapi_unexpected().
 *
 * Matching: spec.method must equal the method (NULL matches any). spec.target
 * is "path" or "path?query". The path must be equal, or, when it ends in '*',
 * start with what precedes the '*'. Each query item of the target must hold
 * for the request's query: "k=v" (the raw, still percent-encoded value is
 * equal), "k" (present, any value) or "!k" (absent). Other parameters of the
 * request are allowed. Examples: "/api/v1/namespaces/ns/pods?!watch" is a
 * LIST, "/api/v1/pods?watch=1&resourceVersion=5" a WATCH from 5.
 *
 * Replies: status (default 200), extra header lines, then either a body sent
 * with Content-Length, or chunks sent with Transfer-Encoding: chunked, one
 * every chunk_delay_ms. A reply can wait delay_ms before answering (client
 * timeouts), close the connection after answering, be used several times or
 * forever, and be held open after its chunks: the test then pushes more
 * chunks with mockapi_push() and ends the stream with mockapi_end(), cleanly
 * (terminating chunk) or by dropping the connection (a broken watch).
 *
 * TLS (mockapi_new_tls) uses OpenSSL; the SNI name and the CN of a client
 * certificate are recorded with each request.
 *
 * Thread safety: every function may be called from any thread while the
 * server runs; mockapi_free() must be the last call. Recorded requests and
 * replies are BORROWED pointers, valid until mockapi_free().
 */
#ifndef TESTS_SUPPORT_MOCKAPI_H
#define TESTS_SUPPORT_MOCKAPI_H

#include <stddef.h>

#include "common/kerr.h"

/* A canned reply and the request it answers. Strings BORROWED: copied by mockapi_add. */
struct mockapi_spec {
    const char *method;        /* "GET", ...; NULL matches any method */
    const char *target;        /* path[?query] pattern, see the top of this file; required */
    int status;                /* HTTP status; 0 = 200 */
    const char *headers;       /* extra header lines "Name: value", separated by '\n'; NULL */
    const char *body;          /* body sent with Content-Length; NULL = empty */
    const char *const *chunks; /* NULL-terminated; if set, a chunked body instead of body */
    long chunk_delay_ms;       /* pause before each chunk */
    long delay_ms;             /* pause before the status line */
    int hold;                  /* after the chunks keep the stream open (see mockapi_push) */
    int close;                 /* close the connection after the reply */
    int times;                 /* number of uses; 0 = 1, negative = unlimited */
};

/* One query parameter or header of a recorded request. */
struct mockapi_kv {
    char *key;
    char *value;
};

/* A recorded request. Everything OWNED by the server (BORROWED by the test). */
struct mockapi_req {
    char method[16];
    char *target;              /* request target as sent: path and raw query */
    char *path;                /* target up to '?' (still encoded) */
    char *query;               /* raw query after '?', "" when none */
    struct mockapi_kv *params; /* query parameters, percent- and '+'-decoded */
    size_t nparams;
    struct mockapi_kv *headers; /* header lines as received */
    size_t nheaders;
    char *body; /* NUL-terminated, body_len bytes */
    size_t body_len;
    char sni[256];       /* TLS: server name the client sent (SNI), else "" */
    char client_cn[256]; /* TLS: CN of the client certificate, else "" */
    int conn;            /* 1-based number of the connection it came on */
    int matched;         /* 1 when a queued reply answered it */
    size_t reply;        /* index (in mockapi_add order) of that reply */
};

/* TLS setup of mockapi_new_tls. PEM strings BORROWED (loaded at start). */
struct mockapi_tls {
    const char *cert_pem;      /* serving certificate (chain) */
    const char *key_pem;       /* its key */
    const char *client_ca_pem; /* when set, a client certificate signed by it is required */
};

struct mockapi;

/*
 * Start a server on 127.0.0.1, ephemeral port. On KERR_OK *out OWNS it
 * (mockapi_free). KERR_IO when the socket or the thread cannot be set up.
 */
enum kerr mockapi_new(struct mockapi **out, struct kerr_info *err);

/*
 * As mockapi_new, speaking HTTPS (TLS 1.2+, ALPN http/1.1 only) with tls;
 * the URL is "https://127.0.0.1:<port>". A failed handshake closes the
 * connection without recording a request. KERR_TLS on a bad certificate or key.
 */
enum kerr mockapi_new_tls(const struct mockapi_tls *tls, struct mockapi **out,
                          struct kerr_info *err);

/* Stop the server: ends held streams, closes every connection, joins every thread. NULL ok. */
void mockapi_free(struct mockapi *m);

/* "http://127.0.0.1:<port>" ("https://..." for TLS). BORROWED. */
const char *mockapi_url(const struct mockapi *m);

/* The listening port. */
int mockapi_port(const struct mockapi *m);

/*
 * Queue a reply (spec BORROWED, copied). Returns its index (0, 1, ... in
 * call order), or -1 on allocation failure or a spec without target.
 */
int mockapi_add(struct mockapi *m, const struct mockapi_spec *spec);

/* Shorthand for a one-use reply with a Content-Length body (body NULL = empty). */
int mockapi_expect(struct mockapi *m, const char *method, const char *target, int status,
                   const char *body);

/*
 * Push one chunk (data BORROWED, copied; len 0 = strlen) to the held stream
 * of reply idx. Chunks pushed before the reply is served are sent right after
 * its own chunks. Returns 0, or -1 on a bad index or allocation failure.
 */
int mockapi_push(struct mockapi *m, int idx, const char *data, size_t len);

/*
 * End the held stream of reply idx: abort 0 sends the terminating chunk (a
 * clean end; the connection stays usable), abort 1 drops the connection
 * without it (the client sees a broken transfer). Pending pushes are sent
 * first either way. May be called before the reply is served.
 */
void mockapi_end(struct mockapi *m, int idx, int abort);

/* Drop every open connection now (a network failure). */
void mockapi_drop_connections(struct mockapi *m);

/* How many times reply idx has been used so far. */
int mockapi_served(struct mockapi *m, int idx);

/* Wait until reply idx has been used at least n times: 0, or -1 on timeout. */
int mockapi_wait_served(struct mockapi *m, int idx, int n, long timeout_ms);

/* Number of requests recorded so far. */
size_t mockapi_request_count(struct mockapi *m);

/* Wait until at least n requests were recorded: 0, or -1 on timeout. */
int mockapi_wait_requests(struct mockapi *m, size_t n, long timeout_ms);

/* The i-th recorded request (0-based), or NULL when there is none yet. BORROWED. */
const struct mockapi_req *mockapi_request(struct mockapi *m, size_t i);

/* The last recorded request, or NULL. BORROWED. */
const struct mockapi_req *mockapi_last(struct mockapi *m);

/* Value of header name (case-insensitive), or NULL. BORROWED. */
const char *mockapi_req_header(const struct mockapi_req *r, const char *name);

/* Decoded value of query parameter key, or NULL. BORROWED. */
const char *mockapi_req_param(const struct mockapi_req *r, const char *key);

/* Requests that no reply matched. */
size_t mockapi_unexpected(struct mockapi *m);

/* Replies that still have uses left (unlimited ones count as pending). */
size_t mockapi_pending(struct mockapi *m);

/* Connections accepted so far. */
int mockapi_connections(struct mockapi *m);

#endif
