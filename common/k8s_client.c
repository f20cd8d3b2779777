#include "common/k8s.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfg.h"
#include "common/k8s_http.h"
#include "common/ratelimit.h"

static void share_lock(CURL *h, curl_lock_data data, curl_lock_access access, void *arg)
{
    struct k8s_client *c = arg;

    (void)h;
    (void)access;
    pthread_mutex_lock(&c->share_mu[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *arg)
{
    struct k8s_client *c = arg;

    (void)h;
    pthread_mutex_unlock(&c->share_mu[data]);
}

static char *dup_mem(const char *p, size_t n)
{
    char *s;

    if (!p)
        return NULL;
    s = malloc(n + 1);
    if (s) {
        memcpy(s, p, n);
        s[n] = '\0';
    }
    return s;
}

static void free_secret(char *p, size_t n)
{
    if (p) {
        explicit_bzero(p, n);
        free(p);
    }
}

/*
 * Work out url_base and, with a tls_server_name, a CONNECT_TO entry: the URL
 * names tls_server_name (so SNI and verification use it) and curl connects to
 * the configured host instead.
 */
static enum kerr setup_url(struct k8s_client *c, const char *tls_name, struct kerr_info *err)
{
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *scheme = NULL, *url = NULL, *entry = NULL;
    enum kerr rc = kerr_set(err, KERR_INVAL, "k8s: bad server URL \"%s\"", c->server);

    if (!u || curl_url_set(u, CURLUPART_URL, c->server, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
        goto out;
    if (strcmp(scheme, "https") != 0 && strcmp(scheme, "http") != 0)
        goto out;
    if (tls_name && *tls_name && strcmp(scheme, "https") == 0) {
        if (curl_url_set(u, CURLUPART_HOST, tls_name, 0) != CURLUE_OK)
            goto out;
        entry = malloc(strlen(tls_name) + strlen(host) + 2 * strlen(port) + 4);
        if (!entry)
            goto out;
        snprintf(entry, strlen(tls_name) + strlen(host) + 2 * strlen(port) + 4, "%s:%s:%s:%s",
                 tls_name, port, host, port);
        c->connect_to = curl_slist_append(NULL, entry);
        if (!c->connect_to)
            goto out;
    }
    /* A path prefix (an API proxy) is kept; query and fragment are not. */
    if (curl_url_set(u, CURLUPART_QUERY, NULL, 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_URL, &url, 0) != CURLUE_OK)
        goto out;
    c->url_base = strdup(url);
    if (!c->url_base)
        goto out;
    while (*c->url_base && c->url_base[strlen(c->url_base) - 1] == '/')
        c->url_base[strlen(c->url_base) - 1] = '\0';
    rc = KERR_OK;
    kerr_clear(err);
out:
    free(entry);
    curl_free(url);
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

static void apply_opts(struct k8s_client *c, const struct k8s_client_opts *o)
{
    static const struct k8s_client_opts zero;

    if (!o)
        o = &zero;
    c->connect_timeout_ms =
        o->connect_timeout_ms > 0 ? o->connect_timeout_ms : K8S_DEFAULT_CONNECT_TIMEOUT_MS;
    c->request_timeout_ms =
        o->request_timeout_ms > 0 ? o->request_timeout_ms : K8S_DEFAULT_REQUEST_TIMEOUT_MS;
    c->max_retries =
        o->max_retries == 0 ? K8S_DEFAULT_MAX_RETRIES : (o->max_retries < 0 ? 0 : o->max_retries);
    c->max_retry_delay_ms =
        o->max_retry_delay_ms > 0 ? o->max_retry_delay_ms : K8S_DEFAULT_MAX_RETRY_DELAY_MS;
    c->max_body = o->max_body > 0 ? o->max_body : K8S_DEFAULT_MAX_BODY;
    c->watch_idle_s = o->watch_idle_s > 0 ? o->watch_idle_s : K8S_DEFAULT_WATCH_IDLE_S;
    c->on_done = o->on_done;
    c->on_done_arg = o->on_done_arg;
}

static enum kerr copy_rest(struct k8s_client *c, const struct cfg_rest *r,
                           const struct k8s_client_opts *o)
{
    const char *ua = o && o->user_agent ? o->user_agent : K8S_DEFAULT_USER_AGENT;

    c->server = strdup(r->server);
    c->ns = strdup(r->namespace && *r->namespace ? r->namespace : "default");
    c->user_agent = strdup(ua);
    c->ca = dup_mem(r->ca_pem, r->ca_len);
    c->cert = dup_mem(r->cert_pem, r->cert_len);
    c->key = dup_mem(r->key_pem, r->key_len);
    c->ca_len = r->ca_len;
    c->cert_len = r->cert_len;
    c->key_len = r->key_len;
    c->insecure = r->insecure;
    if (!c->server || !c->ns || !c->user_agent || (r->ca_pem && !c->ca) ||
        (r->cert_pem && !c->cert) || (r->key_pem && !c->key))
        return KERR_NOMEM;
    while (*c->server && c->server[strlen(c->server) - 1] == '/')
        c->server[strlen(c->server) - 1] = '\0';
    return KERR_OK;
}

/*
 * TLS sessions and DNS are shared between the easy handles. Connections are
 * not: libcurl does not support one connection cache shared by concurrent
 * threads, so each pooled handle keeps its own connections alive instead.
 */
static enum kerr setup_share(struct k8s_client *c, struct kerr_info *err)
{
    int i;

    for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->share_mu[i], NULL);
    pthread_mutex_init(&c->pool_mu, NULL);
    c->share = curl_share_init();
    if (!c->share || curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock) ||
        curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock) ||
        curl_share_setopt(c->share, CURLSHOPT_USERDATA, c) ||
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) ||
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS))
        return kerr_set(err, KERR_NOMEM, "k8s: setting up the curl share");
    return KERR_OK;
}

enum kerr k8s_client_new(const struct cfg_rest *rest, const struct k8s_client_opts *opts,
                         struct k8s_client **out, struct kerr_info *err)
{
    struct k8s_client *c = NULL;
    enum kerr rc;

    *out = NULL;
    if (!rest || !rest->server || !*rest->server)
        return kerr_set(err, KERR_INVAL, "k8s: no server in the configuration");
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return kerr_set(err, KERR_INTERNAL, "k8s: curl_global_init failed");
    c = calloc(1, sizeof(*c));
    if (!c) {
        curl_global_cleanup();
        return kerr_set(err, KERR_NOMEM, "k8s: allocating the client");
    }
    apply_opts(c, opts);
    rc = setup_share(c, err);
    if (rc == KERR_OK && copy_rest(c, rest, opts) != KERR_OK)
        rc = kerr_set(err, KERR_NOMEM, "k8s: copying the configuration");
    if (rc == KERR_OK)
        rc = setup_url(c, rest->tls_server_name, err);
    if (rc == KERR_OK)
        rc = cfg_token_new(rest, &c->token, err);
    if (rc == KERR_OK && opts && opts->qps > 0)
        rc = rl_bucket_new(opts->qps, opts->burst > 0 ? opts->burst : (int)(opts->qps + 0.999),
                           NULL, &c->rl, err);
    if (rc != KERR_OK) {
        k8s_client_free(c);
        return rc;
    }
    *out = c;
    return KERR_OK;
}

void k8s_client_free(struct k8s_client *c)
{
    int i;

    if (!c)
        return;
    for (i = 0; i < c->npool; i++)
        curl_easy_cleanup(c->pool[i]);
    if (c->share)
        curl_share_cleanup(c->share);
    for (i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->share_mu[i]);
    pthread_mutex_destroy(&c->pool_mu);
    curl_slist_free_all(c->connect_to);
    free_secret(c->key, c->key_len);
    free_secret(c->cert, c->cert_len);
    free(c->ca);
    free(c->server);
    free(c->url_base);
    free(c->ns);
    free(c->user_agent);
    cfg_token_free(c->token);
    rl_bucket_free(c->rl);
    free(c);
    curl_global_cleanup();
}

void k8s_client_stop(struct k8s_client *c)
{
    atomic_store(&c->stopped, 1);
}

const char *k8s_client_namespace(const struct k8s_client *c)
{
    return c->ns;
}

const char *k8s_client_server(const struct k8s_client *c)
{
    return c->server;
}

enum kerr k8s_code_from_status(int http_status, const char *reason)
{
    switch (http_status) {
    case 401:
        return KERR_UNAUTHORIZED;
    case 403:
        return KERR_FORBIDDEN;
    case 404:
        return KERR_NOTFOUND;
    case 409:
        return reason && strcmp(reason, "AlreadyExists") == 0 ? KERR_EXISTS : KERR_CONFLICT;
    case 410:
        return KERR_GONE;
    case 429:
        return KERR_TOOMANY;
    default:
        return KERR_API;
    }
}

/* A handle from the pool (or a new one). NULL on allocation failure. */
CURL *k8s_client_pool_get(struct k8s_client *c)
{
    CURL *h = NULL;

    pthread_mutex_lock(&c->pool_mu);
    if (c->npool > 0)
        h = c->pool[--c->npool];
    pthread_mutex_unlock(&c->pool_mu);
    if (!h)
        h = curl_easy_init(); /* a pooled handle is reset before use, keeping its connections */
    return h;
}

void k8s_client_pool_put(struct k8s_client *c, CURL *h)
{
    pthread_mutex_lock(&c->pool_mu);
    if (c->npool < K8S_POOL_MAX) {
        c->pool[c->npool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&c->pool_mu);
    if (h)
        curl_easy_cleanup(h);
}
