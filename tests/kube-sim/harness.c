/* nftw is an XSI interface */
#define _XOPEN_SOURCE 700

#include "tests/kube-sim/harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ftw.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>
#include <microhttpd.h>

#include "common/crypto.h"
#include "common/kjson.h"
#include "tests/kube-sim/auth.h"
#include "tests/kube-sim/ctrl.h"
#include "tests/kube-sim/files.h"
#include "tests/kube-sim/server.h"

#define HTTP_MAX (64u * 1024u * 1024u)

static enum kerr certs(struct ksim_harness *h, struct kerr_info *err)
{
    static const char *const sans[] = { "127.0.0.1", "localhost", NULL };
    struct tlsx_cert_opts o;
    enum kerr rc;

    memset(&o, 0, sizeof(o));
    o.cn = "kube-sim-test-ca";
    rc = tlsx_gen_ca(&o, &h->ca, err);
    if (rc != KERR_OK)
        return rc;
    o.cn = "kube-apiserver";
    o.sans = sans;
    rc = tlsx_gen_serving(&h->ca, &o, &h->serving, err);
    if (rc == KERR_OK)
        rc = crypto_random_hex(32, h->token, sizeof(h->token), err);
    return rc;
}

static enum kerr serve(struct ksim_harness *h, const struct ksim_harness_opts *o,
                       struct kerr_info *err)
{
    struct ksim_api_opts ao;
    struct ksim_server_opts so;
    char addr[32];
    enum kerr rc;

    memset(&ao, 0, sizeof(ao));
    ao.aliases = o->aliases;
    ao.naliases = o->naliases;
    ao.history = o->history;
    ao.bookmark_ms = o->bookmark_ms;
    ao.sts_delay_ms = o->sts_delay_ms;
    ao.gc_interval_ms = o->gc_interval_ms;
    ao.service_cidr = o->service_cidr;
    ao.webhook_ca = h->ca.cert;
    rc = ksim_auth_new(o->token_csv, h->token, &h->auth, err);
    if (rc == KERR_OK)
        rc = ksim_api_new(&ao, &h->api, err);
    memset(&so, 0, sizeof(so));
    so.cert_pem = h->serving.cert;
    so.key_pem = h->serving.key;
    if (rc == KERR_OK)
        rc = ksim_server_start(h->api, h->auth, &so, &h->server, err);
    if (rc != KERR_OK)
        return rc;
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", ksim_server_port(h->server));
    snprintf(h->url, sizeof(h->url), "https://%s", addr);
    if (!o->no_controllers)
        rc = ksim_ctrl_start(h->api, &h->ctrl, err);
    return rc;
}

enum kerr ksim_harness_start(const struct ksim_harness_opts *opts, struct ksim_harness **out,
                             struct kerr_info *err)
{
    struct ksim_harness_opts none;
    struct ksim_harness *h = calloc(1, sizeof(*h));
    enum kerr rc;

    *out = NULL;
    if (!h)
        return kerr_set(err, KERR_NOMEM, NULL);
    memset(&none, 0, sizeof(none));
    curl_global_init(CURL_GLOBAL_DEFAULT);
    tlsx_pem_init(&h->ca);
    tlsx_pem_init(&h->serving);
    snprintf(h->dir, sizeof(h->dir), "/tmp/kube-sim-test.XXXXXX");
    if (!mkdtemp(h->dir)) {
        free(h);
        return kerr_set(err, KERR_IO, "cannot create a temporary directory");
    }
    rc = certs(h, err);
    if (rc == KERR_OK)
        rc = serve(h, opts ? opts : &none, err);
    if (rc == KERR_OK)
        rc = ksim_files_write(h->dir, h->url, h->ca.cert, h->token, err);
    if (rc != KERR_OK) {
        ksim_harness_stop(h);
        return rc;
    }
    *out = h;
    return KERR_OK;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* The directory holds the kubeconfig, the CA and kubectl's cache. */
static void remove_dir(const char *dir)
{
    if (strncmp(dir, "/tmp/kube-sim-test.", 19) == 0)
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void ksim_harness_stop(struct ksim_harness *h)
{
    if (!h)
        return;
    ksim_ctrl_stop(h->ctrl);
    ksim_server_stop(h->server);
    ksim_api_free(h->api);
    ksim_auth_free(h->auth);
    tlsx_pem_release(&h->ca);
    tlsx_pem_release(&h->serving);
    remove_dir(h->dir);
    free(h);
    curl_global_cleanup();
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    return buf_append(arg, p, size * n) == KERR_OK ? size * n : 0;
}

int ksim_harness_call(struct ksim_harness *h, const char *token, const char *method,
                      const char *path, const char *content_type, const char *body, long timeout_ms,
                      struct ksim_http *r)
{
    struct curl_slist *hdrs = NULL;
    struct curl_blob ca = { h->ca.cert, strlen(h->ca.cert), CURL_BLOB_NOCOPY };
    char url[4096], line[512];
    CURL *c = curl_easy_init();
    CURLcode rc;

    memset(r, 0, sizeof(*r));
    buf_init(&r->body, HTTP_MAX);
    buf_init(&r->headers, 1024 * 1024);
    if (!c)
        return -1;
    snprintf(url, sizeof(url), "%s%s", h->url, path);
    if (!token || *token) {
        snprintf(line, sizeof(line), "Authorization: Bearer %s", token ? token : h->token);
        hdrs = curl_slist_append(hdrs, line);
    }
    if (body) {
        snprintf(line, sizeof(line), "Content-Type: %s",
                 content_type ? content_type : "application/json");
        hdrs = curl_slist_append(hdrs, line);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms ? timeout_ms : 30000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(c);
    return rc == CURLE_OK ? 0 : -1;
}

cJSON *ksim_http_json(const struct ksim_http *r)
{
    cJSON *v = NULL;

    if (kjson_parse(buf_str(&r->body), r->body.len, NULL, &v, NULL, NULL) != KERR_OK)
        return NULL;
    return v;
}

int ksim_http_header(const struct ksim_http *r, const char *name, char *out, size_t size)
{
    const char *p = buf_str(&r->headers);
    size_t n = strlen(name), len;

    while (*p) {
        len = strcspn(p, "\r\n");
        if (len > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
            snprintf(out, size, "%.*s", (int)(len - n - 2), p + n + 2);
            return 0;
        }
        p += len;
        while (*p == '\r' || *p == '\n')
            p++;
    }
    return -1;
}

void ksim_http_release(struct ksim_http *r)
{
    buf_release(&r->body);
    buf_release(&r->headers);
}

int ksim_harness_kubectl(struct ksim_harness *h, const char *token, const char *args, char **out)
{
    struct buf cmd, o;
    char chunk[4096];
    FILE *p;
    size_t n;
    int status;

    if (out)
        *out = NULL;
    buf_init(&cmd, 64 * 1024);
    buf_init(&o, HTTP_MAX);
    if (buf_appendf(&cmd, "kubectl --kubeconfig '%s/admin.kubeconfig' --cache-dir '%s/cache' ",
                    h->dir, h->dir) != KERR_OK ||
        (token && buf_appendf(&cmd, "--token='%s' ", token) != KERR_OK) ||
        buf_appendf(&cmd, "%s 2>&1", args) != KERR_OK || !(p = popen(buf_str(&cmd), "r"))) {
        buf_release(&cmd);
        return -1;
    }
    while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
        if (buf_append(&o, chunk, n) != KERR_OK)
            break;
    status = pclose(p);
    buf_release(&cmd);
    if (out)
        *out = buf_detach(&o, NULL);
    buf_release(&o);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct ksim_harness_hook {
    struct MHD_Daemon *d;
    struct tlsx_pem ca;  /* OWNS */
    struct tlsx_pem pem; /* OWNS */
    ksim_harness_hook_fn fn;
    void *arg;
    int port;
    pthread_mutex_t mu;
    int calls;
    int connections; /* TCP connections accepted */
};

static void hook_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                            enum MHD_ConnectionNotificationCode toe)
{
    struct ksim_harness_hook *hk = cls;

    (void)conn;
    (void)socket_context;
    if (toe != MHD_CONNECTION_NOTIFY_STARTED)
        return;
    pthread_mutex_lock(&hk->mu);
    hk->connections++;
    pthread_mutex_unlock(&hk->mu);
}

struct hook_rq {
    struct buf body;
};

static enum MHD_Result hook_reply(struct MHD_Connection *conn, int code, char *text)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    r = MHD_create_response_from_buffer(text ? strlen(text) : 0, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    ret = MHD_queue_response(conn, (unsigned)code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result hook_request(void *cls, struct MHD_Connection *conn, const char *url,
                                    const char *method, const char *version, const char *data,
                                    size_t *size, void **con_cls)
{
    struct ksim_harness_hook *hk = cls;
    struct hook_rq *rq = *con_cls;
    const char *timeout;
    cJSON *review = NULL, *answer = NULL;
    char path[1024], *text = NULL;

    (void)method;
    (void)version;
    if (!rq) {
        rq = calloc(1, sizeof(*rq));
        if (!rq)
            return MHD_NO;
        buf_init(&rq->body, HTTP_MAX);
        *con_cls = rq;
        return MHD_YES;
    }
    if (*size) {
        if (buf_append(&rq->body, data, *size) != KERR_OK)
            return MHD_NO;
        *size = 0;
        return MHD_YES;
    }
    pthread_mutex_lock(&hk->mu);
    hk->calls++;
    pthread_mutex_unlock(&hk->mu);
    timeout = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "timeout");
    snprintf(path, sizeof(path), "%s%s%s", url, timeout ? "?timeout=" : "", timeout ? timeout : "");
    if (kjson_parse(buf_str(&rq->body), rq->body.len, NULL, &review, NULL, NULL) == KERR_OK)
        answer = hk->fn(review, path, hk->arg);
    if (answer)
        text = cJSON_PrintUnformatted(answer);
    cJSON_Delete(answer);
    cJSON_Delete(review);
    return hook_reply(conn, text ? 200 : 500, text ? text : strdup("{}"));
}

static void hook_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct hook_rq *rq = *con_cls;

    (void)cls;
    (void)conn;
    (void)toe;
    if (rq) {
        buf_release(&rq->body);
        free(rq);
        *con_cls = NULL;
    }
}

enum kerr ksim_harness_hook_start(const char *dns_name, ksim_harness_hook_fn fn, void *arg,
                                  struct ksim_harness_hook **out, struct kerr_info *err)
{
    const char *sans[] = { dns_name, "127.0.0.1", NULL };
    struct ksim_harness_hook *hk = calloc(1, sizeof(*hk));
    struct tlsx_cert_opts o;
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    const union MHD_DaemonInfo *di;
    enum kerr rc;

    *out = NULL;
    if (!hk)
        return kerr_set(err, KERR_NOMEM, NULL);
    memset(&o, 0, sizeof(o));
    o.cn = "kube-sim-test-webhook-ca";
    tlsx_pem_init(&hk->ca);
    tlsx_pem_init(&hk->pem);
    pthread_mutex_init(&hk->mu, NULL);
    hk->fn = fn;
    hk->arg = arg;
    rc = tlsx_gen_ca(&o, &hk->ca, err);
    o.cn = dns_name;
    o.sans = sans;
    if (rc == KERR_OK)
        rc = tlsx_gen_serving(&hk->ca, &o, &hk->pem, err);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (rc == KERR_OK)
        hk->d = MHD_start_daemon(
            MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_TLS, 0, NULL,
            NULL, hook_request, hk, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a,
            MHD_OPTION_HTTPS_MEM_CERT, hk->pem.cert, MHD_OPTION_HTTPS_MEM_KEY, hk->pem.key,
            MHD_OPTION_NOTIFY_COMPLETED, hook_done, hk, MHD_OPTION_NOTIFY_CONNECTION,
            hook_connection, hk, MHD_OPTION_END);
    di = hk->d ? MHD_get_daemon_info(hk->d, MHD_DAEMON_INFO_LISTEN_FD) : NULL;
    if (rc == KERR_OK && (!di || getsockname(di->listen_fd, (struct sockaddr *)&a, &len) != 0))
        rc = kerr_set(err, KERR_IO, "cannot start the webhook server");
    if (rc != KERR_OK) {
        ksim_harness_hook_stop(hk);
        return rc;
    }
    hk->port = ntohs(a.sin_port);
    *out = hk;
    return KERR_OK;
}

int ksim_harness_hook_port(const struct ksim_harness_hook *hk)
{
    return hk->port;
}

int ksim_harness_hook_calls(struct ksim_harness_hook *hk)
{
    int n;

    pthread_mutex_lock(&hk->mu);
    n = hk->calls;
    pthread_mutex_unlock(&hk->mu);
    return n;
}

int ksim_harness_hook_connections(struct ksim_harness_hook *hk)
{
    int n;

    pthread_mutex_lock(&hk->mu);
    n = hk->connections;
    pthread_mutex_unlock(&hk->mu);
    return n;
}

char *ksim_harness_hook_ca_bundle(const struct ksim_harness_hook *hk)
{
    char *b64 = NULL;

    if (crypto_b64_encode(hk->ca.cert, strlen(hk->ca.cert), &b64, NULL, NULL) != KERR_OK)
        return NULL;
    return b64;
}

void ksim_harness_hook_stop(struct ksim_harness_hook *hk)
{
    if (!hk)
        return;
    if (hk->d)
        MHD_stop_daemon(hk->d);
    tlsx_pem_release(&hk->ca);
    tlsx_pem_release(&hk->pem);
    pthread_mutex_destroy(&hk->mu);
    free(hk);
}

cJSON *ksim_harness_review_answer(const cJSON *review, int allowed, int code, const char *message,
                                  const char *json_patch, const char *warning)
{
    cJSON *a = cJSON_CreateObject(), *r, *st, *w;
    const char *av = kjson_get_str(review, "apiVersion");
    const char *uid = kjson_get_str(review, "request.uid");
    char *b64 = NULL;

    if (!a || !cJSON_AddStringToObject(a, "apiVersion", av ? av : "admission.k8s.io/v1") ||
        !cJSON_AddStringToObject(a, "kind", "AdmissionReview") ||
        !(r = cJSON_AddObjectToObject(a, "response")) ||
        !cJSON_AddStringToObject(r, "uid", uid ? uid : "") ||
        !cJSON_AddBoolToObject(r, "allowed", allowed))
        goto fail;
    if (!allowed && (!(st = cJSON_AddObjectToObject(r, "status")) ||
                     !cJSON_AddNumberToObject(st, "code", code) ||
                     (code == 403 && !cJSON_AddStringToObject(st, "reason", "Forbidden")) ||
                     (message && !cJSON_AddStringToObject(st, "message", message))))
        goto fail;
    if (json_patch &&
        (crypto_b64_encode(json_patch, strlen(json_patch), &b64, NULL, NULL) != KERR_OK ||
         !cJSON_AddStringToObject(r, "patch", b64) ||
         !cJSON_AddStringToObject(r, "patchType", "JSONPatch")))
        goto fail;
    if (warning && (!(w = cJSON_AddArrayToObject(r, "warnings")) ||
                    !cJSON_AddItemToArray(w, cJSON_CreateString(warning))))
        goto fail;
    free(b64);
    return a;
fail:
    free(b64);
    cJSON_Delete(a);
    return NULL;
}
