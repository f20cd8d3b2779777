/*
 * httpsrv - the small plain-HTTP server both daemons run for /metrics,
 * /healthz and /readyz (libmicrohttpd, internal polling thread(s)).
 *
 *   GET /metrics          the registry in Prometheus text format 0.0.4
 *   GET /healthz, /readyz 200 "ok" when every check of that endpoint
 *                         passes; otherwise 503 with one line per check
 *                         ("[+]name ok" / "[-]name failed: reason withheld")
 *                         and "<endpoint> check failed", as
 *                         controller-runtime's healthz handler (which
 *                         answers 500). ?verbose lists the checks on
 *                         success too. With no checks the endpoint is "ok".
 *   GET /readyz/<name>    (or /healthz/<name>) runs one check: 200 "ok" or 503.
 *   extra routes          added with httpsrv_add_route (exact paths).
 * Only GET and HEAD are served (405 with "Allow: GET, HEAD" otherwise);
 * unknown paths are 404. Request bodies are discarded.
 *
 * Lifecycle: httpsrv_new, then httpsrv_add_check / httpsrv_add_route, then
 * httpsrv_start; httpsrv_stop (or httpsrv_free) stops listening and joins
 * the server threads. Checks and routes cannot be added once started.
 *
 * Thread safety: new/add/start/stop/free from one controlling thread.
 * Check and route callbacks run on the server threads, possibly
 * concurrently with each other; they must be thread-safe and quick
 * (read an atomic flag, not call the API server).
 */
#ifndef COMMON_HTTPSRV_H
#define COMMON_HTTPSRV_H

#include <stddef.h>

#include "common/buf.h"
#include "common/kerr.h"
#include "common/metrics.h"

#define HTTPSRV_MAX_CHECKS 32
#define HTTPSRV_MAX_ROUTES 16
#define HTTPSRV_MAX_BODY   (32u * 1024u * 1024u) /* cap of a reply body (/metrics included) */

struct httpsrv;
struct httpsrv_req; /* a request, valid during a route callback only */

/* Which endpoint a check belongs to. */
enum httpsrv_probe { HTTPSRV_HEALTHZ, HTTPSRV_READYZ };

/*
 * A health or readiness check: KERR_OK when healthy/ready. The message in
 * err is logged at debug level, never sent (as controller-runtime).
 */
typedef enum kerr (*httpsrv_check_fn)(void *ctx, struct kerr_info *err);

/* What a route callback fills in. body is capped at HTTPSRV_MAX_BODY. */
struct httpsrv_reply {
    unsigned int status;      /* default 200 */
    const char *content_type; /* BORROWED static string; default "text/plain; charset=utf-8" */
    struct buf body;
};

/*
 * An extra route. A return other than KERR_OK answers 500 with the
 * message of err instead of the reply.
 */
typedef enum kerr (*httpsrv_route_fn)(void *ctx, const struct httpsrv_req *req,
                                      struct httpsrv_reply *reply, struct kerr_info *err);

struct httpsrv_opts {
    const char *bind;                  /* "host:port", ":8080" (all interfaces), port 0 = any */
    struct metrics_registry *registry; /* BORROWED; NULL = no /metrics (404) */
    unsigned int threads;              /* server threads; 0 = 1 */
    unsigned int conn_timeout_secs;    /* idle connection timeout; 0 = 10 */
    unsigned int conn_limit;           /* concurrent connections; 0 = 64 */
};

/*
 * A server (not yet listening). The options are copied (the registry
 * stays BORROWED). On KERR_OK *out OWNS it: httpsrv_free().
 */
enum kerr httpsrv_new(const struct httpsrv_opts *opts, struct httpsrv **out, struct kerr_info *err);

/* Stop (if started) and free. NULL is a no-op. */
void httpsrv_free(struct httpsrv *s);

/*
 * Add a named check (name copied; [a-zA-Z0-9_.-]+, unique per endpoint)
 * to /healthz or /readyz. ctx is BORROWED and must outlive the server.
 */
enum kerr httpsrv_add_check(struct httpsrv *s, enum httpsrv_probe probe, const char *name,
                            httpsrv_check_fn fn, void *ctx, struct kerr_info *err);

/* Serve path (copied; exact match, starting with '/') with fn. ctx as for checks. */
enum kerr httpsrv_add_route(struct httpsrv *s, const char *path, httpsrv_route_fn fn, void *ctx,
                            struct kerr_info *err);

/* Bind, listen and start the server threads. KERR_IO when the address cannot be bound. */
enum kerr httpsrv_start(struct httpsrv *s, struct kerr_info *err);

/* The bound port once started (the chosen one for port 0), else 0. */
unsigned short httpsrv_port(const struct httpsrv *s);

/* Stop listening, close connections and join the threads. Idempotent. */
void httpsrv_stop(struct httpsrv *s);

/* Request accessors for route callbacks (results BORROWED, valid during the callback). */
const char *httpsrv_req_method(const struct httpsrv_req *req);
const char *httpsrv_req_path(const struct httpsrv_req *req);
/* A query argument, "" for a key without value, NULL when absent. */
const char *httpsrv_req_arg(const struct httpsrv_req *req, const char *key);
/* A request header (case-insensitive name), NULL when absent. */
const char *httpsrv_req_header(const struct httpsrv_req *req, const char *name);

#endif
