#include "tests/kube-sim/hook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "common/crypto.h"
#include "common/buf.h"
#include "common/kjson.h"
#include "common/tlsx.h"

struct target {
    char url[2048];       /* what is posted to (and named in errors) */
    char connect_to[600]; /* CURLOPT_CONNECT_TO entry, or "" */
};

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct buf *b = arg;

    if (buf_append(b, p, size * n) != KERR_OK)
        return 0;
    return size * n;
}

static const struct ksim_alias *find_alias(const struct ksim_api *api, const char *svc,
                                           const char *ns)
{
    size_t i;

    for (i = 0; i < api->naliases; i++)
        if (strcmp(api->aliases[i].service, svc) == 0 && strcmp(api->aliases[i].namespace, ns) == 0)
            return &api->aliases[i];
    return NULL;
}

/* Build the URL and the connect-to redirection; -1 with errbuf set when unresolvable. */
static int resolve(struct ksim_api *api, const cJSON *cc, long timeout_s, struct target *t,
                   char *errbuf, size_t errsize)
{
    const char *url = kjson_get_str(cc, "url");
    const char *svc = kjson_get_str(cc, "service.name");
    const char *ns = kjson_get_str(cc, "service.namespace");
    const char *path = kjson_get_str(cc, "service.path");
    const cJSON *port = kjson_get(cc, "service.port");
    const struct ksim_alias *al;
    int p = cJSON_IsNumber(port) ? (int)port->valuedouble : 443;

    t->connect_to[0] = '\0';
    if (url) {
        snprintf(t->url, sizeof(t->url), "%s%stimeout=%lds", url, strchr(url, '?') ? "&" : "?",
                 timeout_s);
        return 0;
    }
    if (!svc || !ns) {
        snprintf(errbuf, errsize, "ClientConfig must have either service or url");
        return -1;
    }
    snprintf(t->url, sizeof(t->url), "https://%s.%s.svc:%d%s%stimeout=%lds", svc, ns, p,
             path && *path ? path : "/", path && strchr(path, '?') ? "&" : "?", timeout_s);
    al = find_alias(api, svc, ns);
    if (!al) {
        snprintf(errbuf, errsize,
                 "Post \"%s\": dial tcp: lookup %s.%s.svc: no such host (kube-sim has no "
                 "--service-alias %s.%s)",
                 t->url, svc, ns, svc, ns);
        return -1;
    }
    snprintf(t->connect_to, sizeof(t->connect_to), "%s.%s.svc:%d:%s:%d", svc, ns, p, al->host,
             al->port);
    return 0;
}

/* Go's wording for the common failures. */
static void describe(CURLcode rc, const char *url, const char *detail, char *errbuf, size_t errsize)
{
    const char *what;

    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
        what = "context deadline exceeded";
        break;
    case CURLE_COULDNT_CONNECT:
        what = "dial tcp: connect: connection refused";
        break;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
        what = "tls: failed to verify certificate: x509: certificate signed by unknown authority";
        break;
    default:
        what = detail && *detail ? detail : curl_easy_strerror(rc);
        break;
    }
    snprintf(errbuf, errsize, "Post \"%s\": %s", url, what);
}

static int set_ca(CURL *h, const cJSON *cc, const char *fallback_ca, struct curl_blob *blob,
                  unsigned char **pem, char *errbuf, size_t errsize)
{
    const char *b64 = kjson_get_str(cc, "caBundle");
    size_t len = 0;

    *pem = NULL;
    if (b64 && *b64) {
        if (crypto_b64_decode(b64, strlen(b64), pem, &len, NULL) != KERR_OK) {
            snprintf(errbuf, errsize, "invalid caBundle: illegal base64 data");
            return -1;
        }
        blob->data = *pem;
        blob->len = len;
    } else if (fallback_ca) {
        blob->data = (void *)fallback_ca;
        blob->len = strlen(fallback_ca);
    } else {
        return 0;
    }
    blob->flags = CURL_BLOB_NOCOPY;
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, blob);
    return 0;
}

static int perform(CURL *h, const struct target *t, long timeout_s, const char *body, size_t len,
                   struct buf *out, char *errbuf, size_t errsize)
{
    struct curl_slist *hdrs = NULL, *cto = NULL;
    char detail[CURL_ERROR_SIZE] = "";
    CURLcode rc;
    long status = 0;

    hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    hdrs = curl_slist_append(hdrs, "Accept: application/json, */*");
    if (t->connect_to[0])
        cto = curl_slist_append(NULL, t->connect_to);
    curl_easy_setopt(h, CURLOPT_URL, t->url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_CONNECT_TO, cto);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_s * 1000L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, detail);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "kube-apiserver-admission");
    rc = curl_easy_perform(h);
    curl_slist_free_all(hdrs);
    curl_slist_free_all(cto);
    if (rc != CURLE_OK) {
        describe(rc, t->url, detail, errbuf, errsize);
        return -1;
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        snprintf(errbuf, errsize,
                 "an error on the server (\"%.200s\") has prevented the request from succeeding "
                 "(post %s)",
                 buf_str(out), t->url);
        return -1;
    }
    return 0;
}

/* An idle client of the pool, or a new one; NULL when none can be made. */
static CURL *pool_get(struct ksim_api *api)
{
    CURL *h = NULL;

    pthread_mutex_lock(&api->hook_mu);
    if (api->nhook_pool)
        h = api->hook_pool[--api->nhook_pool];
    pthread_mutex_unlock(&api->hook_mu);
    return h ? h : curl_easy_init();
}

/* Back to the pool (its options reset, its connections kept), or freed when it is full. */
static void pool_put(struct ksim_api *api, CURL *h)
{
    curl_easy_reset(h);
    pthread_mutex_lock(&api->hook_mu);
    if (api->nhook_pool < KSIM_HOOK_POOL) {
        api->hook_pool[api->nhook_pool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&api->hook_mu);
    if (h)
        curl_easy_cleanup(h);
}

void ksim_hook_pool_free(struct ksim_api *api)
{
    while (api->nhook_pool)
        curl_easy_cleanup(api->hook_pool[--api->nhook_pool]);
    pthread_mutex_destroy(&api->hook_mu);
}

int ksim_hook_post(struct ksim_api *api, const cJSON *client_config, long timeout_s,
                   const char *body, size_t len, char **resp_body, size_t *resp_len, char *errbuf,
                   size_t errsize)
{
    struct target t;
    struct curl_blob blob;
    struct buf out;
    unsigned char *pem = NULL;
    CURL *h = NULL;
    int rc = -1;

    *resp_body = NULL;
    *resp_len = 0;
    buf_init(&out, KSIM_HOOK_MAX_RESPONSE);
    if (resolve(api, client_config, timeout_s, &t, errbuf, errsize) != 0)
        goto out;
    h = pool_get(api);
    if (!h) {
        snprintf(errbuf, errsize, "Post \"%s\": cannot create an HTTP client", t.url);
        goto out;
    }
    if (api->webhook_cert && api->webhook_key) { /* kubeConfigFile: client-certificate */
        curl_easy_setopt(h, CURLOPT_SSLCERT, api->webhook_cert);
        curl_easy_setopt(h, CURLOPT_SSLKEY, api->webhook_key);
    }
    if (set_ca(h, client_config, api->webhook_ca, &blob, &pem, errbuf, errsize) != 0 ||
        perform(h, &t, timeout_s, body, len, &out, errbuf, errsize) != 0)
        goto out;
    *resp_body = buf_detach(&out, resp_len);
    rc = *resp_body ? 0 : -1;
    if (rc)
        snprintf(errbuf, errsize, "out of memory");
out:
    if (h)
        pool_put(api, h);
    free(pem);
    buf_release(&out);
    return rc;
}
