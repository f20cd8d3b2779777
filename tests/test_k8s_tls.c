/*
 * Tests of the TLS side of common/k8s against an HTTPS mockapi: the CA, the
 * client certificate and key from memory, tls_server_name, insecure mode.
 */
#include "common/k8s.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/cfg.h"
#include "common/tlsx.h"
#include "tests/support/mockapi.h"

static const struct k8s_resource NS = { "", "v1", "namespaces", 0 };

static struct tlsx_pem ca, serving, client_ca, client, other_ca;
static struct mockapi *m;
static struct kerr_info err;

static void gen(void)
{
    static const char *const sans[] = { "kubernetes.default.svc", NULL };
    static const char *const groups[] = { "system:masters", NULL };
    struct tlsx_cert_opts o = { .cn = "test-ca" };

    tlsx_pem_init(&ca);
    tlsx_pem_init(&serving);
    tlsx_pem_init(&client_ca);
    tlsx_pem_init(&client);
    tlsx_pem_init(&other_ca);
    cr_assert_eq(tlsx_gen_ca(&o, &ca, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(tlsx_gen_ca(&o, &other_ca, &err), KERR_OK, "%s", err.msg);
    o.cn = "client-ca";
    cr_assert_eq(tlsx_gen_ca(&o, &client_ca, &err), KERR_OK, "%s", err.msg);
    o.cn = "apiserver";
    o.sans = sans; /* not 127.0.0.1: only tls_server_name makes the name match */
    cr_assert_eq(tlsx_gen_serving(&ca, &o, &serving, &err), KERR_OK, "%s", err.msg);
    o.cn = "alice";
    o.sans = NULL;
    o.orgs = groups;
    cr_assert_eq(tlsx_gen_client(&client_ca, &o, &client, &err), KERR_OK, "%s", err.msg);
}

static void start(void)
{
    struct mockapi_tls t;

    gen();
    t.cert_pem = serving.cert;
    t.key_pem = serving.key;
    t.client_ca_pem = client_ca.cert;
    cr_assert_eq(mockapi_new_tls(&t, &m, &err), KERR_OK, "%s", err.msg);
    mockapi_add(m, &(struct mockapi_spec){ .method = "GET",
                                           .target = "/api/v1/namespaces/default",
                                           .body = "{\"kind\":\"Namespace\"}",
                                           .times = -1 });
}

static void stop(void)
{
    mockapi_free(m);
    tlsx_pem_release(&ca);
    tlsx_pem_release(&serving);
    tlsx_pem_release(&client_ca);
    tlsx_pem_release(&client);
    tlsx_pem_release(&other_ca);
}

/* GET the default namespace with a client built from the given pieces. */
static enum kerr get_ns(const char *ca_pem, const char *tls_name, int insecure, int with_cert)
{
    struct cfg_rest rest;
    struct k8s_client *c = NULL;
    cJSON *obj = NULL;
    enum kerr rc;

    cfg_rest_init(&rest);
    rest.server = strdup(mockapi_url(m));
    if (ca_pem) {
        rest.ca_pem = strdup(ca_pem);
        rest.ca_len = strlen(ca_pem);
    }
    rest.tls_server_name = tls_name ? strdup(tls_name) : NULL;
    rest.insecure = insecure;
    if (with_cert) {
        rest.cert_pem = strdup(client.cert);
        rest.cert_len = strlen(client.cert);
        rest.key_pem = strdup(client.key);
        rest.key_len = strlen(client.key);
    }
    cr_assert_eq(k8s_client_new(&rest, NULL, &c, &err), KERR_OK, "%s", err.msg);
    cfg_rest_release(&rest);
    rc = k8s_get(c, &NS, NULL, "default", NULL, &obj, &err);
    cJSON_Delete(obj);
    k8s_client_free(c);
    return rc;
}

Test(k8s_tls, ca_client_cert_and_server_name_from_memory, .init = start, .fini = stop)
{
    const struct mockapi_req *q;

    cr_assert_eq(get_ns(ca.cert, "kubernetes.default.svc", 0, 1), KERR_OK, "%s", err.msg);
    q = mockapi_last(m);
    cr_assert_str_eq(q->sni, "kubernetes.default.svc");
    cr_assert_str_eq(q->client_cn, "alice");
    cr_assert_str_eq(q->target, "/api/v1/namespaces/default");
}

Test(k8s_tls, certificate_name_must_match, .init = start, .fini = stop)
{
    cr_assert_eq(get_ns(ca.cert, NULL, 0, 1), KERR_HTTP, "127.0.0.1 is not in the SANs");
    cr_assert_eq(mockapi_request_count(m), 0);
}

Test(k8s_tls, unknown_ca_is_refused, .init = start, .fini = stop)
{
    cr_assert_eq(get_ns(other_ca.cert, "kubernetes.default.svc", 0, 1), KERR_HTTP);
    cr_assert_eq(get_ns(NULL, "kubernetes.default.svc", 0, 1), KERR_HTTP, "not a system root");
    cr_assert_eq(mockapi_request_count(m), 0);
}

Test(k8s_tls, insecure_skips_verification, .init = start, .fini = stop)
{
    cr_assert_eq(get_ns(NULL, NULL, 1, 1), KERR_OK, "%s", err.msg);
    cr_assert_eq(mockapi_request_count(m), 1);
}

Test(k8s_tls, server_requires_the_client_certificate, .init = start, .fini = stop)
{
    cr_assert_eq(get_ns(ca.cert, "kubernetes.default.svc", 0, 0), KERR_HTTP);
    cr_assert_eq(mockapi_request_count(m), 0);
}
