/* wh_selftls - self-provisioned CA, serving certificate and caBundle; see wh_selftls.h. */
#include "webhook/wh_selftls.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/jpatch.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "common/tlsx.h"

static const struct k8s_resource res_secret = { "", "v1", "secrets", 1 };
static const struct k8s_resource res_vwc = { "admissionregistration.k8s.io", "v1",
                                             "validatingwebhookconfigurations", 0 };
static const struct k8s_resource res_mwc = { "admissionregistration.k8s.io", "v1",
                                             "mutatingwebhookconfigurations", 0 };

#define PEM_END     "-----END CERTIFICATE-----"
#define MAX_ATTEMPT 3

struct wh_selftls {
    struct wh_selftls_opts o;
    char *ns, *secret, *service; /* OWNS */
    char **names;                /* OWNS: vwcs then mwcs */
    char host[320];              /* <service>.<ns>.svc, checked against the certificate */
    char *served;                /* OWNS: the certificate PEM in service */
    time_t renew_at;
    int retry_soon; /* the last pass could not publish the caBundle everywhere */
    pthread_t thread;
    int running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
};

/* CA and serving pair as stored in the Secret. */
struct bundle {
    struct tlsx_pem ca;
    struct tlsx_pem leaf;
};

static void bundle_init(struct bundle *b)
{
    tlsx_pem_init(&b->ca);
    tlsx_pem_init(&b->leaf);
}

static void bundle_release(struct bundle *b)
{
    tlsx_pem_release(&b->ca);
    tlsx_pem_release(&b->leaf);
}

time_t wh_selftls_two_thirds(time_t not_before, time_t not_after)
{
    return not_before + (not_after - not_before) / 3 * 2;
}

/* A pair that is a matching key, within the first two thirds of its life. */
static int young(const struct tlsx_pem *p, time_t now, time_t *renew)
{
    time_t nb = 0, na = 0;

    if (!p->cert || !p->key || tlsx_check_pair(p, NULL) ||
        tlsx_cert_validity(p->cert, strlen(p->cert), &nb, &na, NULL))
        return 0;
    if (renew)
        *renew = wh_selftls_two_thirds(nb, na);
    return now < wh_selftls_two_thirds(nb, na);
}

static int leaf_good(const struct wh_selftls *s, const struct bundle *b, time_t now, time_t *renew)
{
    return b->ca.cert && young(&b->leaf, now, renew) &&
           tlsx_verify(b->ca.cert, b->leaf.cert, s->host, now, NULL) == KERR_OK;
}

static enum kerr secret_value(const cJSON *secret, const char *key, char **out)
{
    const char *segs[] = { "data", key, NULL };
    const cJSON *v = kjson_getv(secret, segs);
    unsigned char *raw = NULL;
    size_t len = 0;

    *out = NULL;
    if (!cJSON_IsString(v))
        return KERR_NOTFOUND;
    if (crypto_b64_decode(v->valuestring, strlen(v->valuestring), &raw, &len, NULL))
        return KERR_PARSE;
    *out = (char *)raw;
    return KERR_OK;
}

static void bundle_from_secret(const cJSON *secret, struct bundle *b)
{
    secret_value(secret, "ca.crt", &b->ca.cert);
    secret_value(secret, "ca.key", &b->ca.key);
    secret_value(secret, "tls.crt", &b->leaf.cert);
    secret_value(secret, "tls.key", &b->leaf.key);
}

/* The first certificate of pem as a new string, or NULL. */
static char *first_cert(const char *pem)
{
    const char *end = pem ? strstr(pem, PEM_END) : NULL;

    return end ? strndup(pem, (size_t)(end - pem) + strlen(PEM_END) + 1) : NULL;
}

/* A new CA; the previous one (still valid) stays in ca.crt after it during the rotation. */
static enum kerr new_ca(struct bundle *b, time_t now, struct kerr_info *err)
{
    struct tlsx_cert_opts o = { 0 };
    struct tlsx_pem ca;
    time_t na = 0;
    char *old = NULL, *both;
    struct buf joined;
    enum kerr rc;

    o.cn = "warden-webhook-ca";
    tlsx_pem_init(&ca);
    if ((rc = tlsx_gen_ca(&o, &ca, err)))
        return rc;
    if (b->ca.cert && !tlsx_cert_validity(b->ca.cert, strlen(b->ca.cert), NULL, &na, NULL) &&
        na > now)
        old = first_cert(b->ca.cert);
    buf_init(&joined, 1 << 20);
    if (old && !buf_appends(&joined, ca.cert) && !buf_appends(&joined, old) &&
        (both = buf_detach(&joined, NULL))) {
        free(ca.cert);
        ca.cert = both;
    }
    buf_release(&joined);
    free(old);
    tlsx_pem_release(&b->ca);
    b->ca = ca;
    return KERR_OK;
}

static enum kerr generate(const struct wh_selftls *s, struct bundle *b, time_t now,
                          struct kerr_info *err)
{
    char n1[256], n2[320], n3[352];
    const char *sans[5] = { s->service, n1, n2, n3, NULL };
    struct tlsx_cert_opts o = { 0 };
    struct tlsx_pem leaf;
    enum kerr rc;

    snprintf(n1, sizeof(n1), "%s.%s", s->service, s->ns);
    snprintf(n2, sizeof(n2), "%s.%s.svc", s->service, s->ns);
    snprintf(n3, sizeof(n3), "%s.%s.svc.cluster.local", s->service, s->ns);
    if (!young(&b->ca, now, NULL) && (rc = new_ca(b, now, err)))
        return rc;
    o.cn = n2;
    o.sans = sans;
    o.lifetime_secs = s->o.lifetime_s;
    tlsx_pem_init(&leaf);
    if ((rc = tlsx_gen_serving(&b->ca, &o, &leaf, err)))
        return rc;
    tlsx_pem_release(&b->leaf);
    b->leaf = leaf;
    return KERR_OK;
}

static int add_data(cJSON *data, const char *key, const char *pem)
{
    char *b64 = NULL;
    int ok;

    if (crypto_b64_encode(pem, strlen(pem), &b64, NULL, NULL))
        return 0;
    ok = cJSON_AddStringToObject(data, key, b64) != NULL;
    free(b64);
    return ok;
}

/* Create the Secret, or update it when old (the stored one) is given. */
static enum kerr write_secret(const struct wh_selftls *s, const cJSON *old, const struct bundle *b,
                              struct kerr_info *err)
{
    cJSON *sec = cJSON_CreateObject(), *meta, *data;
    const char *rv = kjson_get_str(old, "metadata.resourceVersion");
    enum kerr rc = KERR_NOMEM;

    meta = sec ? cJSON_AddObjectToObject(sec, "metadata") : NULL;
    data = sec ? cJSON_AddObjectToObject(sec, "data") : NULL;
    if (!meta || !data || !cJSON_AddStringToObject(sec, "apiVersion", "v1") ||
        !cJSON_AddStringToObject(sec, "kind", "Secret") ||
        !cJSON_AddStringToObject(sec, "type", "kubernetes.io/tls") ||
        !cJSON_AddStringToObject(meta, "name", s->secret) ||
        !cJSON_AddStringToObject(meta, "namespace", s->ns) ||
        (rv && !cJSON_AddStringToObject(meta, "resourceVersion", rv)) ||
        !add_data(data, "ca.crt", b->ca.cert) || !add_data(data, "ca.key", b->ca.key) ||
        !add_data(data, "tls.crt", b->leaf.cert) || !add_data(data, "tls.key", b->leaf.key)) {
        kerr_set(err, rc, "building the Secret");
        goto out;
    }
    if (old)
        rc = k8s_update(s->o.client, &res_secret, s->ns, s->secret, sec, NULL, NULL, err);
    else
        rc = k8s_create(s->o.client, &res_secret, s->ns, sec, NULL, NULL, err);
out:
    cJSON_Delete(sec);
    return rc;
}

/* Set caBundle on every webhook of one configuration where it differs. */
static enum kerr patch_config(const struct wh_selftls *s, const struct k8s_resource *res,
                              const char *name, const char *b64, struct kerr_info *err)
{
    cJSON *cfg = NULL, *ops = cJSON_CreateArray();
    const cJSON *hook;
    char ptr[64];
    enum kerr rc;
    int i = 0;

    if (!ops)
        return kerr_set(err, KERR_NOMEM, "building the caBundle patch");
    rc = k8s_get(s->o.client, res, NULL, name, NULL, &cfg, err);
    cJSON_ArrayForEach (hook, kjson_get_arr(cfg, "webhooks")) {
        const char *have = kjson_get_str(hook, "clientConfig.caBundle");

        const char *hname = kjson_get_str(hook, "name");

        if (!rc && (!have || strcmp(have, b64) != 0)) {
            /* The index is the GET's: test that it is still the same webhook. */
            snprintf(ptr, sizeof(ptr), "/webhooks/%d/name", i);
            rc = jpatch_test(ops, ptr, hname ? cJSON_CreateString(hname) : cJSON_CreateNull(), err);
            snprintf(ptr, sizeof(ptr), "/webhooks/%d/clientConfig/caBundle", i);
            if (!rc)
                rc = jpatch_add(ops, ptr, cJSON_CreateString(b64), err);
        }
        i++;
    }
    if (!rc && cJSON_GetArraySize(ops) > 0) {
        rc = k8s_patch(s->o.client, res, NULL, name, K8S_PATCH_JSON, ops, NULL, NULL, err);
        if (!rc)
            log_info("caBundle set", "configuration", name, "webhooks",
                     cJSON_GetArraySize(ops) == 2 ? "1" : "several");
    }
    cJSON_Delete(cfg);
    cJSON_Delete(ops);
    return rc;
}

/* Publish ca_pem as every caBundle: the number of configurations that could not be patched. */
static int patch_all(const struct wh_selftls *s, const char *ca_pem)
{
    char *b64 = NULL;
    struct kerr_info e;
    size_t i;
    int failed = 0;

    if (crypto_b64_encode(ca_pem, strlen(ca_pem), &b64, NULL, NULL))
        return 1;
    for (i = 0; i < s->o.nvwcs + s->o.nmwcs; i++) {
        kerr_clear(&e);
        if (patch_config(s, i < s->o.nvwcs ? &res_vwc : &res_mwc, s->names[i], b64, &e)) {
            failed++;
            log_warn("cannot set caBundle; will retry", "configuration", s->names[i], "error",
                     e.msg);
        }
    }
    free(b64);
    return failed;
}

static enum kerr install(struct wh_selftls *s, const struct bundle *b, time_t renew,
                         struct kerr_info *err)
{
    char *copy;
    enum kerr rc;

    pthread_mutex_lock(&s->mu);
    s->renew_at = renew;
    pthread_mutex_unlock(&s->mu);
    if (s->served && strcmp(s->served, b->leaf.cert) == 0)
        return KERR_OK;
    copy = strdup(b->leaf.cert);
    if (!copy)
        return kerr_set(err, KERR_NOMEM, "keeping the certificate");
    if ((rc = wh_tls_set_pem(s->o.tls, &b->leaf, err))) {
        free(copy);
        return rc;
    }
    free(s->served);
    s->served = copy;
    log_info("serving self-provisioned certificate", "secret", s->secret, "host", s->host);
    return KERR_OK;
}

/* One attempt: 1 in *again when the Secret changed under us. */
static enum kerr attempt(struct wh_selftls *s, int *again, struct kerr_info *err)
{
    struct bundle b;
    cJSON *sec = NULL;
    time_t now = time(NULL), renew = 0;
    enum kerr rc;
    int failed;

    *again = 0;
    bundle_init(&b);
    rc = k8s_get(s->o.client, &res_secret, s->ns, s->secret, NULL, &sec, err);
    if (rc && rc != KERR_NOTFOUND)
        goto out;
    bundle_from_secret(sec, &b);
    if (!leaf_good(s, &b, now, &renew)) {
        if ((rc = generate(s, &b, now, err)))
            goto out;
        rc = write_secret(s, sec, &b, err);
        if (rc == KERR_CONFLICT || rc == KERR_EXISTS) {
            *again = 1;
            goto out;
        }
        if (rc)
            goto out;
        young(&b.leaf, now, &renew);
        log_info("stored a new serving certificate", "secret", s->secret);
    }
    /*
     * The CA is published before the pair is served: a pair of a new CA served
     * first would be refused by the API server until its caBundle caught up.
     * When publishing fails, a pair already in service (still valid: renewal is
     * at two thirds of its life) stays until a pass soon after succeeds.
     */
    failed = patch_all(s, b.ca.cert);
    pthread_mutex_lock(&s->mu);
    s->retry_soon = failed > 0;
    pthread_mutex_unlock(&s->mu);
    if (failed && s->served && strcmp(s->served, b.leaf.cert) != 0) {
        log_warn("new serving certificate held back until the caBundle is published", "secret",
                 s->secret);
        goto out;
    }
    rc = install(s, &b, renew, err);
out:
    cJSON_Delete(sec);
    bundle_release(&b);
    return rc;
}

enum kerr wh_selftls_ensure(struct wh_selftls *s, struct kerr_info *err)
{
    enum kerr rc = KERR_OK;
    int i, again = 1;

    for (i = 0; i < MAX_ATTEMPT && again; i++)
        rc = attempt(s, &again, err);
    if (again)
        return kerr_set(err, KERR_CONFLICT, "Secret %s/%s kept changing", s->ns, s->secret);
    return rc;
}

time_t wh_selftls_renew_at(struct wh_selftls *s)
{
    time_t t;

    pthread_mutex_lock(&s->mu);
    t = s->renew_at;
    pthread_mutex_unlock(&s->mu);
    return t;
}

/* The next pass (s->mu held): after the recheck interval, or at the renewal time when sooner. */
static long next_ms(const struct wh_selftls *s)
{
    long ms = s->o.recheck_ms, to_renew;

    if (s->renew_at > 0) {
        to_renew = (long)(s->renew_at - time(NULL)) * 1000L;
        if (to_renew < ms)
            ms = to_renew > 0 ? to_renew : 0;
    }
    if (s->retry_soon && ms > WH_SELFTLS_RETRY_MS)
        ms = WH_SELFTLS_RETRY_MS;
    return ms;
}

long wh_selftls_next_pass_ms(struct wh_selftls *s)
{
    long ms;

    pthread_mutex_lock(&s->mu);
    ms = next_ms(s);
    pthread_mutex_unlock(&s->mu);
    return ms;
}

static void next_pass(const struct wh_selftls *s, struct timespec *until)
{
    ktime_deadline_after(until, next_ms(s), CLOCK_REALTIME);
}

static void *renew_main(void *arg)
{
    struct wh_selftls *s = arg;
    struct timespec until;
    struct kerr_info e;

    pthread_mutex_lock(&s->mu);
    while (!s->stop) {
        next_pass(s, &until);
        pthread_cond_timedwait(&s->cv, &s->mu, &until);
        if (s->stop)
            break;
        pthread_mutex_unlock(&s->mu);
        kerr_clear(&e);
        if (wh_selftls_ensure(s, &e))
            log_warn("self-provisioned TLS pass failed; will retry", "error", e.msg);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

enum kerr wh_selftls_start(struct wh_selftls *s, struct kerr_info *err)
{
    if (s->running)
        return KERR_OK;
    if (pthread_create(&s->thread, NULL, renew_main, s) != 0)
        return kerr_set(err, KERR_INTERNAL, "cannot start the certificate renewal thread");
    s->running = 1;
    return KERR_OK;
}

void wh_selftls_free(struct wh_selftls *s)
{
    size_t i;

    if (!s)
        return;
    if (s->running) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    for (i = 0; s->names && i < s->o.nvwcs + s->o.nmwcs; i++)
        free(s->names[i]);
    free(s->names);
    free(s->ns);
    free(s->secret);
    free(s->service);
    free(s->served);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

enum kerr wh_selftls_new(const struct wh_selftls_opts *opts, struct wh_selftls **out,
                         struct kerr_info *err)
{
    struct wh_selftls *s;
    size_t i, n = opts->nvwcs + opts->nmwcs;
    int ok;

    *out = NULL;
    if (!opts->client || !opts->tls || !opts->ns || !opts->secret || !opts->service)
        return kerr_set(err, KERR_INVAL, "self-provisioned TLS needs a client, names and a holder");
    s = calloc(1, sizeof(*s));
    if (!s)
        return kerr_set(err, KERR_NOMEM, "allocating self-provisioned TLS");
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->o = *opts;
    s->o.lifetime_s = opts->lifetime_s > 0 ? opts->lifetime_s : 365L * 24 * 3600;
    s->o.recheck_ms = opts->recheck_ms > 0 ? opts->recheck_ms : 60000L;
    s->ns = strdup(opts->ns);
    s->secret = strdup(opts->secret);
    s->service = strdup(opts->service);
    s->names = calloc(n + 1, sizeof(*s->names));
    ok = s->ns && s->secret && s->service && s->names;
    for (i = 0; ok && i < n; i++) {
        s->names[i] = strdup(i < opts->nvwcs ? opts->vwcs[i] : opts->mwcs[i - opts->nvwcs]);
        ok = s->names[i] != NULL;
    }
    if (!ok) {
        wh_selftls_free(s);
        return kerr_set(err, KERR_NOMEM, "allocating self-provisioned TLS");
    }
    snprintf(s->host, sizeof(s->host), "%s.%s.svc", s->service, s->ns);
    *out = s;
    return KERR_OK;
}
