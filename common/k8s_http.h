/*
 * k8s_http - internals of the k8s module (common/k8s.h): the client object
 * and its pool of CURL easy handles over one CURLSH share of TLS sessions
 * and DNS (k8s_client.c), and the transport: authentication, retries and the
 * mapping of answers to enum kerr (k8s_http.c). Only k8s.c, k8s_client.c and k8s_http.c include
 * this header; everyone else uses k8s.h.
 *
 * Thread safety: as struct k8s_client (see k8s.h): k8s_http_do and the pool
 * functions may run on any number of threads at once; the fields below are
 * read-only after k8s_client_new except the pool (pool_mu) and stopped.
 */
#ifndef COMMON_K8S_HTTP_H
#define COMMON_K8S_HTTP_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

/* Cap on the body of a non-2xx answer kept for its Status (the rest is read and dropped). */
#define K8S_HTTP_MAX_ERROR_BODY (1024u * 1024u)

#define K8S_POOL_MAX            16 /* idle easy handles kept for reuse */

/* The client (see k8s.h). Strings OWNED; key material is wiped when freed. */
struct k8s_client {
    char *server;   /* as configured, without trailing '/' */
    char *url_base; /* scheme://host:port used in URLs (tls_server_name swapped in) */
    struct curl_slist *connect_to; /* CURLOPT_CONNECT_TO for tls_server_name, or NULL */
    char *ca, *cert, *key;
    size_t ca_len, cert_len, key_len;
    int insecure;
    char *ns;
    char *user_agent;
    struct cfg_token *token;
    long connect_timeout_ms, request_timeout_ms, max_retry_delay_ms, watch_idle_s;
    int max_retries;
    size_t max_body;
    struct rl_bucket *rl;
    k8s_done_fn on_done;
    void *on_done_arg;
    CURLSH *share;
    pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];
    pthread_mutex_t pool_mu;
    CURL *pool[K8S_POOL_MAX];
    int npool;
    atomic_int stopped;
};

/* An easy handle from the pool, or a new one (NULL on allocation failure). */
CURL *k8s_client_pool_get(struct k8s_client *c);

/* Return h (TAKES) to the pool, or clean it up when the pool is full. */
void k8s_client_pool_put(struct k8s_client *c, CURL *h);

/* One request as the verbs hand it to the transport. All pointers BORROWED. */
struct k8s_http_req {
    const char *method;       /* "GET", "POST", "PUT", "PATCH", "DELETE" */
    const char *path;         /* encoded path and query, starting with '/' */
    const char *content_type; /* of body; NULL when there is no body */
    const char *body;
    size_t body_len;
    int watch;                /* streaming: no total timeout, low-speed limit, on_data */
    k8s_watch_fn on_data;     /* watch only */
    void *arg;                /* watch only */
    const atomic_int *cancel; /* optional */
    int64_t deadline_ms;      /* ktime_mono_ms() deadline; 0: none (see k8s.h, Deadlines) */
    int arena;                /* parse the body with jarena_parse (release with jarena_delete) */
};

/*
 * Run req with retries (see k8s.h). On KERR_OK and out non-NULL, *out OWNS
 * the parsed 2xx body, or is NULL when the body was empty (KERR_PARSE when
 * it is not JSON). Watches never parse a body.
 */
enum kerr k8s_http_do(struct k8s_client *c, const struct k8s_http_req *req, cJSON **out,
                      struct kerr_info *err);

#endif
