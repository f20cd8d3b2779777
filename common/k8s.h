/*
 * k8s - the Kubernetes API client (libcurl + cJSON).
 *
 * One struct k8s_client talks to one API server with the credentials of a
 * struct cfg_rest. It keeps connections alive (a pool of CURL easy handles,
 * each keeping its connections, over one CURLSH share of TLS sessions and
 * DNS: a thread takes a handle per request, so N concurrent requests use at
 * most N connections), uses HTTP/2 where the server offers it over TLS, sets timeouts on every
 * request, keeps every credential in memory (CAINFO/SSLCERT/SSLKEY blobs, never a file), reads the
 * bearer token through cfg_token_get() for every request and, on a 401, invalidates it and retries
 * once with the re-read token.
 *
 * Errors: every non-2xx answer becomes an enum kerr with err->http_status,
 * err->reason (the metav1.Status reason) and err->msg (the Status message,
 * or the body / HTTP status text when the body is not a Status):
 *   404 KERR_NOTFOUND, 409 + reason AlreadyExists KERR_EXISTS, other 409
 *   KERR_CONFLICT, 410 KERR_GONE, 401 KERR_UNAUTHORIZED, 403 KERR_FORBIDDEN,
 *   429 KERR_TOOMANY (after the retries), anything else KERR_API.
 * Transport failures are KERR_HTTP (KERR_TIMEOUT for timeouts) with curl's
 * message; a response larger than the body cap is KERR_TOOBIG; a request
 * stopped by a cancel flag, a callback or k8s_client_stop() is KERR_CANCELLED.
 *
 * Retries: an answer 429 or 5xx that carries "Retry-After: <seconds>" (as
 * client-go: without the header nothing is retried) is retried up to
 * max_retries times, after sleeping the given seconds (capped at
 * max_retry_delay_ms; the sleep ends early on cancel/stop; a Retry-After above
 * K8S_RETRY_AFTER_MAX_S reads as that many seconds). 429 is retried for
 * every verb (the server did nothing); 5xx only for the idempotent verbs
 * GET, PUT and DELETE, never for POST or PATCH. A 401 is retried once, for
 * every verb, after cfg_token_invalidate().
 *
 * Deadlines: k8s_get_until and k8s_list_opts.deadline_ms bound one call on
 * the ktime_mono_ms() clock: every attempt is cut at the deadline
 * (KERR_TIMEOUT), none starts after it, and a retry whose Retry-After wait
 * would end past it is not made (the answer's error is returned at once).
 *
 * Paths: every path segment and every query value is percent-encoded
 * (curl_easy_escape); names and namespaces are validated first.
 *
 * Idle watches: curl's low-speed check averages the rate over its last ~5 s,
 * so a stream that goes silent after sending data fails up to ~6 s later
 * than watch_idle_s; keep watch_idle_s above the server's ~60 s bookmark
 * interval.
 *
 * Thread safety: a struct k8s_client may be used by any number of threads at
 * once (k8s_client_free excepted, which must run after every other call has
 * returned). The done hook is called from the requesting thread.
 */
#ifndef COMMON_K8S_H
#define COMMON_K8S_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/buf.h"
#include "common/kerr.h"

struct cfg_rest; /* common/cfg.h */

#define K8S_DEFAULT_CONNECT_TIMEOUT_MS 10000L
#define K8S_DEFAULT_REQUEST_TIMEOUT_MS 30000L
#define K8S_DEFAULT_MAX_RETRIES        5
#define K8S_DEFAULT_MAX_RETRY_DELAY_MS 10000L
#define K8S_DEFAULT_MAX_BODY           (64u * 1024u * 1024u)
#define K8S_DEFAULT_WATCH_IDLE_S       90L
#define K8S_DEFAULT_USER_AGENT         "etcd-warden"

/*
 * Called once per HTTP attempt (retries count separately) when the answer
 * is in or the transport failed: method ("GET", "POST", ...), the HTTP status
 * (0 for a transport error) and the duration in seconds. Must be thread-safe
 * and must not call back into the client. For rest_client_requests_total.
 */
typedef void (*k8s_done_fn)(void *arg, const char *method, int code, double seconds);

/*
 * Options of a client. Zero (or a NULL opts pointer) means the default for
 * every field.
 */
struct k8s_client_opts {
    long connect_timeout_ms; /* 0: 10 s */
    long request_timeout_ms; /* total per attempt, not for watches; 0: 30 s */
    const char *user_agent;  /* BORROWED, copied; NULL: "etcd-warden" */
    int max_retries;         /* 429/5xx + Retry-After; 0: 5, negative: none */
    long max_retry_delay_ms; /* cap of one Retry-After sleep; 0: 10 s */
    double qps;              /* client-side rate limit; <= 0: off (default) */
    int burst;               /* token bucket size when qps > 0; <= 0: max(1, qps) */
    size_t max_body;         /* response body cap; 0: 64 MiB */
    long watch_idle_s;       /* a watch below 1 byte/s this long fails; 0: 90 s (see above) */
    k8s_done_fn on_done;     /* optional request hook */
    void *on_done_arg;       /* BORROWED, passed to on_done */
};

/*
 * An API resource: group ("" for the core group), version, plural resource
 * name and whether it lives in a namespace. All strings BORROWED; usually
 * static constants, e.g.
 *   static const struct k8s_resource K8S_RES_STS = { "apps", "v1", "statefulsets", 1 };
 */
struct k8s_resource {
    const char *group;
    const char *version;
    const char *resource;
    int namespaced;
};

/* Options of a LIST (all optional; zero-initialise). Strings BORROWED. */
struct k8s_list_opts {
    const char *label_selector;
    const char *field_selector;
    long limit;                         /* page size; 0: no limit */
    const char *continue_token;         /* metadata.continue of the previous page */
    const char *resource_version;       /* "", "0" or a version */
    const char *resource_version_match; /* "Exact" | "NotOlderThan"; needs resource_version */
    long timeout_seconds;               /* server-side timeoutSeconds; 0: unset */
    int64_t deadline_ms;                /* ktime_mono_ms() deadline of the call; 0: none */
    /*
     * k8s_list only: parse the answer into the calling thread's arena (common/jarena): the
     * page is read-only (items may be detached and cJSON_Deleted) and is released with
     * jarena_delete on this thread.
     */
    int arena;
};

/* Retry-After values above this many seconds read as this (one hour). */
#define K8S_RETRY_AFTER_MAX_S 3600L

/* Options of CREATE / UPDATE / PATCH (all optional). Strings BORROWED. */
struct k8s_write_opts {
    const char *subresource;      /* UPDATE/PATCH: "status", "scale"; NULL: the object */
    int dry_run;                  /* dryRun=All */
    const char *field_manager;    /* fieldManager; required for K8S_PATCH_APPLY */
    int force;                    /* force=true; K8S_PATCH_APPLY only */
    const char *field_validation; /* "Strict" | "Warn" | "Ignore"; NULL: server default */
    int64_t deadline_ms;          /* CREATE/UPDATE: ktime_mono_ms() deadline (Deadlines); 0: none */
};

/* PATCH flavours (Content-Type). */
enum k8s_patch_type {
    K8S_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
    K8S_PATCH_JSON,      /* application/json-patch+json (RFC 6902) */
    K8S_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in kinds only) */
    K8S_PATCH_APPLY      /* application/apply-patch+yaml: server-side apply, JSON body */
};

/* Options of DELETE, sent as a DeleteOptions body (all optional). Strings BORROWED. */
struct k8s_delete_opts {
    const char *propagation_policy; /* "Foreground" | "Background" | "Orphan" */
    const char *precondition_uid;
    const char *precondition_resource_version;
    int grace_period_set;      /* send grace_period_seconds */
    long grace_period_seconds; /* 0 = delete immediately */
    int dry_run;               /* dryRun: ["All"] */
};

/*
 * Called with raw bytes of a watch stream as they arrive (chunk boundaries
 * are arbitrary, not event boundaries: the decoder is the caller's). data is
 * BORROWED for the call. Return 0 to go on, non-zero to stop the watch
 * (k8s_watch then returns KERR_CANCELLED).
 */
typedef int (*k8s_watch_fn)(void *arg, const char *data, size_t len);

/* Options of a WATCH. Strings BORROWED. allowWatchBookmarks=true is always sent. */
struct k8s_watch_opts {
    const char *resource_version; /* where to start; NULL or "": most recent */
    const char *label_selector;
    const char *field_selector;
    long timeout_seconds;     /* server-side timeoutSeconds; 0: unset (server default) */
    int send_initial_events;  /* sendInitialEvents=true&resourceVersionMatch=NotOlderThan */
    const atomic_int *cancel; /* BORROWED, optional: any thread sets it non-zero to stop */
    k8s_watch_fn on_data;     /* required */
    void *arg;                /* BORROWED, passed to on_data */
};

struct k8s_client;

/*
 * Create a client for rest (BORROWED: everything needed is copied, the
 * token source is created from it with cfg_token_new). opts may be NULL.
 * On KERR_OK *out OWNS the client: release it with k8s_client_free().
 * KERR_INVAL when rest->server is missing or not an http(s) URL.
 */
enum kerr k8s_client_new(const struct cfg_rest *rest, const struct k8s_client_opts *opts,
                         struct k8s_client **out, struct kerr_info *err);

/* Free the client and its connections. NULL is a no-op. No call may be in flight. */
void k8s_client_free(struct k8s_client *c);

/*
 * Abort every request in flight (watches included, within about a second)
 * and make every later request fail with KERR_CANCELLED. For shutdown; safe
 * from any thread, not from a signal handler.
 */
void k8s_client_stop(struct k8s_client *c);

/* The default namespace of the configuration ("default" when unset). BORROWED. */
const char *k8s_client_namespace(const struct k8s_client *c);

/* The server URL without a trailing '/'. BORROWED. */
const char *k8s_client_server(const struct k8s_client *c);

/*
 * Append the path of res to out: /api/v1 or /apis/G/V, then
 * /namespaces/<ns> (namespaced resources; ns NULL = all namespaces),
 * /<resource>, /<name> (NULL = the collection), /<subresource> (NULL = none).
 * Segments are validated (ns a DNS-1123 label, name a path segment: not
 * empty, "." or "..", no '/' or '%', at most 253 bytes) and percent-encoded.
 * KERR_INVAL on a bad segment (out may then hold a partial path).
 */
enum kerr k8s_path(const struct k8s_resource *res, const char *ns, const char *name,
                   const char *subresource, struct buf *out, struct kerr_info *err);

/*
 * Append "?key=value" (first parameter, when out holds no '?') or
 * "&key=value" to out, key and value percent-encoded. NULL value: no-op.
 */
enum kerr k8s_query_add(struct buf *out, const char *key, const char *value, struct kerr_info *err);

/*
 * GET one object (or its subresource, e.g. "status" or "scale"; NULL for
 * the object). On KERR_OK *out OWNS the object (cJSON_Delete).
 */
enum kerr k8s_get(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                  const char *name, const char *subresource, cJSON **out, struct kerr_info *err);

/*
 * k8s_get bounded by deadline_ms (ktime_mono_ms() clock; 0: none, as
 * k8s_get): see Deadlines above. KERR_TIMEOUT when the deadline cut it.
 */
enum kerr k8s_get_until(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                        const char *name, const char *subresource, int64_t deadline_ms, cJSON **out,
                        struct kerr_info *err);

/*
 * LIST one page (opts may be NULL). ns NULL lists all namespaces. On KERR_OK
 * *out OWNS the List object, including metadata.continue when there is more.
 */
enum kerr k8s_list(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                   const struct k8s_list_opts *opts, cJSON **out, struct kerr_info *err);

/*
 * LIST every page, following metadata.continue, and return one List whose
 * "items" holds all items and whose metadata.resourceVersion is the list's
 * (metadata.continue removed). opts->continue_token is ignored. If a continue
 * token expires (410) the list restarts once from scratch without a limit
 * (as client-go's pager); a token that comes back unchanged is KERR_PARSE.
 * It is pager_list_object of common/pager.h. On KERR_OK *out OWNS the List.
 */
enum kerr k8s_list_all(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                       const struct k8s_list_opts *opts, cJSON **out, struct kerr_info *err);

/*
 * POST obj (BORROWED) to the collection. For namespaced resources ns NULL
 * takes obj's metadata.namespace. opts may be NULL (subresource ignored).
 * out may be NULL; else on KERR_OK *out OWNS the created object.
 */
enum kerr k8s_create(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                     const cJSON *obj, const struct k8s_write_opts *opts, cJSON **out,
                     struct kerr_info *err);

/*
 * PUT obj (BORROWED) to the object or to opts->subresource. name NULL takes
 * obj's metadata.name, ns NULL obj's metadata.namespace. obj should carry
 * metadata.resourceVersion (409 KERR_CONFLICT when stale). out may be NULL;
 * else on KERR_OK *out OWNS the stored object.
 */
enum kerr k8s_update(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                     const char *name, const cJSON *obj, const struct k8s_write_opts *opts,
                     cJSON **out, struct kerr_info *err);

/*
 * PATCH the object (or opts->subresource) with patch (BORROWED: an object,
 * or an array for K8S_PATCH_JSON). K8S_PATCH_APPLY requires
 * opts->field_manager (KERR_INVAL otherwise); force is only sent for apply.
 * out may be NULL; else on KERR_OK *out OWNS the patched object.
 */
enum kerr k8s_patch(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                    const char *name, enum k8s_patch_type type, const cJSON *patch,
                    const struct k8s_write_opts *opts, cJSON **out, struct kerr_info *err);

/*
 * DELETE the object with a DeleteOptions body built from opts (may be NULL).
 * A failed precondition is 409 KERR_CONFLICT. out may be NULL; else on
 * KERR_OK *out OWNS the answer (the object being deleted, or a Status).
 */
enum kerr k8s_delete(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                     const char *name, const struct k8s_delete_opts *opts, cJSON **out,
                     struct kerr_info *err);

/*
 * WATCH res (ns NULL: all namespaces): GET ...?watch=1&allowWatchBookmarks=true
 * with the options, delivering the raw 2xx body to opts->on_data as it
 * arrives. No total timeout; the transfer fails with KERR_TIMEOUT after
 * watch_idle_s without a byte; TCP keepalive is on. Blocks until the stream
 * ends: KERR_OK when the server closed it cleanly (timeoutSeconds, normal
 * end), KERR_CANCELLED when stopped by on_data, opts->cancel or
 * k8s_client_stop(), KERR_HTTP/KERR_TIMEOUT when the connection broke, or
 * the API error of a non-2xx answer (then on_data is never called).
 */
enum kerr k8s_watch(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                    const struct k8s_watch_opts *opts, struct kerr_info *err);

/*
 * A raw request: method, path (already encoded, with its query; see
 * k8s_path / k8s_query_add), optional body (BORROWED, len bytes) with its
 * Content-Type. For discovery, /version and the like. On KERR_OK *out OWNS
 * the parsed answer, or is NULL when the body was empty; out may be NULL.
 */
enum kerr k8s_request(struct k8s_client *c, const char *method, const char *path,
                      const char *content_type, const char *body, size_t len, cJSON **out,
                      struct kerr_info *err);

/*
 * API requests (calls of the verbs above, watches included; a retry after a
 * Retry-After is part of its call) made so far by the calling thread, on any
 * client. The difference across a piece of work is what that work cost.
 */
unsigned long k8s_thread_requests(void);

/* Add n requests made on the calling thread's behalf (by helper threads) to its count. */
void k8s_thread_requests_charge(unsigned long n);

/*
 * Map an HTTP status (>= 300) and Status reason to the enum kerr listed at
 * the top of this file. reason may be NULL.
 */
enum kerr k8s_code_from_status(int http_status, const char *reason);

#endif
