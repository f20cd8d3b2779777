#include "tests/support/ksimcli.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/log.h"
#include "tests/kube-sim/fault.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

/* The on_done hook: record code, then run the one-shot action it triggers. */
static void on_done(void *arg, const char *method, int code, double seconds)
{
    struct ksimcli *f = arg;
    struct kerr_info err;
    cJSON *reset;

    (void)seconds;
    pthread_mutex_lock(&f->mu);
    if (f->n < KSIMCLI_ATTEMPTS)
        f->code[f->n++] = code;
    if (code == 429 && f->reset_on_429) {
        f->reset_on_429 = 0;
        reset = cJSON_CreateObject();
        cr_assert_not_null(cJSON_AddTrueToObject(reset, "reset"));
        KSIMCLI_OK(ksim_fault_configure(f->h->api->fault, f->h->api->store, reset, NULL, &err),
                   err);
        cJSON_Delete(reset);
    }
    if (code == 200 && f->expire_after_get && strcmp(method, "GET") == 0) {
        f->expire_after_get = 0;
        ksim_store_expire_history(f->h->api->store);
    }
    pthread_mutex_unlock(&f->mu);
}

void ksimcli_load_rest(const struct ksim_harness *h, struct cfg_rest *rest)
{
    struct kerr_info err;
    char path[512];

    snprintf(path, sizeof(path), "%s/admin.kubeconfig", h->dir);
    cr_assert_eq(cfg_load_kubeconfig(path, NULL, rest, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(rest->server, h->url);
    cr_assert_not_null(rest->ca_pem, "the kubeconfig carries kube-sim's CA");
}

struct k8s_client *ksimcli_client(struct ksimcli *f, const struct cfg_rest *rest,
                                  const struct k8s_client_opts *co)
{
    struct k8s_client_opts o = { .request_timeout_ms = 10000 };
    struct k8s_client *k = NULL;
    struct kerr_info err;

    if (co)
        o = *co;
    o.on_done = on_done;
    o.on_done_arg = f;
    cr_assert_eq(k8s_client_new(rest, &o, &k, &err), KERR_OK, "%s", err.msg);
    return k;
}

void ksimcli_init(struct ksimcli *f, const struct ksim_harness_opts *ho,
                  const struct k8s_client_opts *co)
{
    struct cfg_rest rest;

    memset(f, 0, sizeof(*f));
    cr_assert_eq(pthread_mutex_init(&f->mu, NULL), 0);
    log_set_level(LOG_ERROR);
    f->h = ksimfix_start(ho);
    ksimcli_load_rest(f->h, &rest);
    f->c = ksimcli_client(f, &rest, co);
    cfg_rest_release(&rest);
}

void ksimcli_release(struct ksimcli *f)
{
    k8s_client_free(f->c);
    f->c = NULL;
    ksim_harness_stop(f->h);
    f->h = NULL;
}

const char *ksimcli_codes(struct ksimcli *f)
{
    size_t off = 0;
    int i;

    pthread_mutex_lock(&f->mu);
    f->codes[0] = '\0';
    for (i = 0; i < f->n && off < sizeof(f->codes) - 8; i++)
        off += (size_t)snprintf(f->codes + off, sizeof(f->codes) - off, "%s%d", i ? "," : "",
                                f->code[i]);
    f->n = 0;
    pthread_mutex_unlock(&f->mu);
    return f->codes;
}

struct k8s_client *ksimcli_admin(const struct ksim_harness *h)
{
    struct k8s_client *k = NULL;
    struct kerr_info err;
    struct cfg_rest rest;

    ksimcli_load_rest(h, &rest);
    cr_assert_eq(k8s_client_new(&rest, NULL, &k, &err), KERR_OK, "%s", err.msg);
    cfg_rest_release(&rest);
    return k;
}

cJSON *ksimcli_cm(const char *name, const char *labels)
{
    cJSON *o =
        jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"k\":\"v\"}}");
    struct kerr_info err;
    char path[160], val[64];
    size_t n, k;

    KSIMCLI_OK(kjson_set_str(o, "metadata.name", name, &err), err);
    for (; labels && *labels; labels += n + (labels[n] == ',')) {
        n = strcspn(labels, ",");
        k = strcspn(labels, "=");
        cr_assert_lt(k, n, "%s", labels);
        snprintf(path, sizeof(path), "metadata.labels[%.*s]", (int)k, labels);
        snprintf(val, sizeof(val), "%.*s", (int)(n - k - 1), labels + k + 1);
        KSIMCLI_OK(kjson_set_str(o, path, val, &err), err);
    }
    return o;
}

void ksimcli_create_cm(struct k8s_client *c, const char *ns, const char *name, const char *labels,
                       cJSON **out)
{
    static const struct k8s_resource cm = { "", "v1", "configmaps", 1 };
    cJSON *o = ksimcli_cm(name, labels);
    struct kerr_info err;

    KSIMCLI_OK(k8s_create(c, &cm, ns, o, NULL, out, &err), err);
    cJSON_Delete(o);
}

void ksimcli_create_ns(struct k8s_client *c, const char *name)
{
    static const struct k8s_resource ns = { "", "v1", "namespaces", 0 };
    cJSON *o = cJSON_CreateObject();
    struct kerr_info err;

    cr_assert_not_null(o);
    KSIMCLI_OK(kjson_set_str(o, "metadata.name", name, &err), err);
    KSIMCLI_OK(k8s_create(c, &ns, NULL, o, NULL, NULL, &err), err);
    cJSON_Delete(o);
}
