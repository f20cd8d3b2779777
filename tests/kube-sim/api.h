/*
 * api - kube-sim's REST front door, independent of HTTP plumbing: a parsed
 * request (method, path, query, headers, body, authenticated user) goes in,
 * a response (status code, JSON body, Warning headers, or a watch stream)
 * comes out. Routing follows kube-apiserver's URL layout:
 *
 *   /version /api /api/v1 /apis /apis/G /apis/G/V          discovery
 *   /api/v1/[namespaces/NS/]PLURAL[/NAME[/SUB]]            core resources
 *   /apis/G/V/[namespaces/NS/]PLURAL[/NAME[/SUB]]          group resources
 *   /healthz /livez /readyz /openapi/v2 /openapi/v3        (404 for openapi)
 *   /kube-sim/faults                                       fault injection (system:masters)
 *
 * struct ksim_api is the shared context of every module that serves
 * requests (read, write, watch, admit, ctrl); its fields are set up by
 * ksim_api_new and read-only afterwards, except where noted.
 *
 * Ownership: ksim_api_new returns a context the caller OWNS (ksim_api_free).
 * A struct ksim_req borrows everything it points to; a struct ksim_resp
 * OWNS its body, warnings and watch (ksim_resp_release).
 * Thread safety: ksim_api_handle may run on any number of threads at once.
 */
#ifndef KSIM_API_H
#define KSIM_API_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "tests/kube-sim/apierr.h"
#include "tests/kube-sim/auth.h"
#include "tests/kube-sim/registry.h"
#include "tests/kube-sim/store.h"

struct ksim_watch;
struct ksim_fault;
struct ksim_svcip;

/* --service-alias NAME.NAMESPACE=HOST:PORT */
struct ksim_alias {
    char *service;   /* OWNS */
    char *namespace; /* OWNS */
    char *host;      /* OWNS */
    int port;
};

struct ksim_api_opts {
    const struct ksim_alias *aliases; /* BORROWED (copied) */
    size_t naliases;
    size_t history;           /* watch history per resource (0 = 1000) */
    size_t max_objects;       /* 0 = 100000 */
    long bookmark_ms;         /* bookmark interval of watches (0 = 60000) */
    long sts_delay_ms;        /* StatefulSet status lag (0 = 1000; <0 = immediately) */
    long gc_interval_ms;      /* controller loop period (0 = 200) */
    const char *webhook_ca;   /* PEM trusted for webhooks without caBundle, BORROWED; NULL */
    const char *webhook_cert; /* PEM file of the client certificate shown to webhooks; NULL */
    const char *webhook_key;  /* PEM file of its key (with webhook_cert), BORROWED; NULL */
    const char *service_cidr; /* Service clusterIP range, BORROWED; NULL = 10.96.0.0/12 */
};

#define KSIM_HOOK_POOL 32 /* idle webhook clients kept (struct ksim_api) */

struct ksim_api {
    struct ksim_reg *reg;       /* OWNS */
    struct ksim_store *store;   /* OWNS */
    struct ksim_fault *fault;   /* OWNS */
    struct ksim_alias *aliases; /* OWNS */
    size_t naliases;
    long bookmark_ms;
    long sts_delay_ms;
    long gc_interval_ms;
    char *webhook_ca;         /* OWNS or NULL */
    char *webhook_cert;       /* OWNS or NULL: CURLOPT_SSLCERT of webhook calls */
    char *webhook_key;        /* OWNS or NULL: CURLOPT_SSLKEY */
    struct ksim_svcip *svcip; /* OWNS: Service clusterIPs (thread-safe) */
    /*
     * Idle curl handles of the webhook calls (tests/kube-sim/hook.c), OWNED: each keeps its
     * connections and TLS sessions, as kube-apiserver's webhook client keeps its connections
     * alive, instead of a TLS handshake per review. Guarded by hook_mu.
     */
    pthread_mutex_t hook_mu;
    void *hook_pool[KSIM_HOOK_POOL];
    size_t nhook_pool;
};

/* One query parameter (unescaped). */
struct ksim_kv {
    const char *key;
    const char *value;
};

/* A request. Every pointer is BORROWED for the duration of ksim_api_handle. */
struct ksim_req {
    const char *method; /* "GET", ... */
    const char *path;   /* without the query string */
    const struct ksim_kv *query;
    size_t nquery;
    const char *content_type; /* or NULL */
    const char *accept;       /* or NULL */
    const char *user_agent;   /* or NULL */
    const char *host;         /* Host header ("127.0.0.1:PORT"), or NULL */
    const char *body;         /* or NULL */
    size_t body_len;
    const struct ksim_user *user; /* authenticated identity, never NULL */
};

/* The resource a request addresses, from its path. */
struct ksim_target {
    const struct ksim_rtype *rt; /* BORROWED from the registry */
    char ns[254];                /* "" for cluster scope or "all namespaces" */
    char name[254];              /* "" for a collection */
    char sub[32];                /* "", "status" or "scale" */
};

#define KSIM_MAX_WARNINGS 16
#define KSIM_MAX_HEADERS  4

/* A response. */
struct ksim_resp {
    int code;
    char *body; /* OWNS: JSON text (or plain text when content_type says so) */
    size_t body_len;
    const char *content_type;          /* static string */
    char *warnings[KSIM_MAX_WARNINGS]; /* OWNS: Warning header texts */
    size_t nwarnings;
    int retry_after;                 /* Retry-After seconds, 0 = none */
    char *headers[KSIM_MAX_HEADERS]; /* OWNS: more headers, "Name: value"; a Cache-Control
                                        here replaces the default "no-cache, private" */
    size_t nheaders;
    struct ksim_watch *watch; /* OWNS: a streaming body instead of body */
};

/* A context with a fresh registry and store. On KERR_OK *out OWNS it. */
enum kerr ksim_api_new(const struct ksim_api_opts *opts, struct ksim_api **out,
                       struct kerr_info *err);

/* NULL is a no-op. Stop the server and controllers first. */
void ksim_api_free(struct ksim_api *api);

/* Serve one request into resp (zeroed first). Never fails: errors become Status bodies. */
void ksim_api_handle(struct ksim_api *api, const struct ksim_req *req, struct ksim_resp *resp);

/* The value of query parameter key, or NULL. */
const char *ksim_req_query(const struct ksim_req *req, const char *key);

/* Set resp to code with body (TAKEN; NULL body means "out of memory", a 500). */
void ksim_resp_json(struct ksim_resp *resp, int code, cJSON *body);

/* Set resp to the Status of e. */
void ksim_resp_error(struct ksim_resp *resp, const struct ksim_apierr *e);

/* Add a header "name: value" (copied); -1 when out of memory or past KSIM_MAX_HEADERS. */
int ksim_resp_header(struct ksim_resp *resp, const char *name, const char *value);

/* Add a Warning header text (copied; silently dropped past KSIM_MAX_WARNINGS). */
void ksim_resp_warn(struct ksim_resp *resp, const char *text);

/* Free what resp owns (the watch too) and zero it. */
void ksim_resp_release(struct ksim_resp *resp);

/* Set obj's apiVersion and kind to rt's (objects are served in the requested version). 0 or -1. */
int ksim_api_externalize(const struct ksim_rtype *rt, cJSON *obj);

#endif
