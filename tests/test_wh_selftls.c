/*
 * Tests of webhook/wh_selftls against a scripted API server: a fresh
 * Secret is generated and stored and caBundle patched in; a good Secret is
 * reused without writes; a pair past two thirds of its life is renewed with
 * the same CA; a lost creation race uses the winner's Secret.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/tlsx.h"
#include "tests/support/mockapi.h"
#include "tests/support/mockfix.h"
#include "webhook/wh_selftls.h"

#define SECRET_PATH "/api/v1/namespaces/sys/secrets"
#define VWC_PATH    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/warden"
#define MWC_PATH    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/warden-m"
#define HOST        "wh.sys.svc"

struct fx {
    struct mockapi *m;
    struct k8s_client *client;
    struct wh_tls *tls;
    struct wh_selftls *st;
};

static void up(struct fx *f, long lifetime_s)
{
    static const char *const vwcs[] = { "warden" };
    static const char *const mwcs[] = { "warden-m" };
    struct wh_tls_opts to = { 0 };
    struct wh_selftls_opts so = { 0 };
    struct kerr_info err;

    memset(f, 0, sizeof(*f));
    mockfix_start(&f->m, &f->client, "t", NULL);
    cr_assert_eq(wh_tls_new(&to, &f->tls, &err), KERR_OK, "%s", err.msg);
    so.client = f->client;
    so.ns = "sys";
    so.secret = "wh-tls";
    so.service = "wh";
    so.vwcs = vwcs;
    so.nvwcs = 1;
    so.mwcs = mwcs;
    so.nmwcs = 1;
    so.lifetime_s = lifetime_s;
    so.tls = f->tls;
    cr_assert_eq(wh_selftls_new(&so, &f->st, &err), KERR_OK, "%s", err.msg);
}

static void down(struct fx *f)
{
    wh_selftls_free(f->st);
    wh_tls_free(f->tls);
    mockfix_stop(f->m, f->client);
}

static char *data_pem(const cJSON *secret, const char *key)
{
    const char *segs[] = { "data", key, NULL };
    const char *b64 = kjson_get_str(kjson_getv(secret, segs), NULL);
    unsigned char *raw = NULL;
    size_t len = 0;

    cr_assert_not_null(b64, "Secret without %s", key);
    cr_assert_eq(crypto_b64_decode(b64, strlen(b64), &raw, &len, NULL), KERR_OK);
    return (char *)raw;
}

static const struct mockapi_req *find(struct mockapi *m, const char *method, const char *path)
{
    const struct mockapi_req *r;
    size_t i;

    for (i = 0; (r = mockapi_request(m, i)); i++) {
        if (strcmp(r->method, method) == 0 && strcmp(r->path, path) == 0)
            return r;
    }
    return NULL;
}

/* A stored Secret (as the API server returns it) made from a generated bundle. */
static char *secret_json(long lifetime, time_t not_before, char **ca_out)
{
    static const char *const sans[] = { "wh", "wh.sys", HOST, NULL };
    struct tlsx_cert_opts o = { 0 };
    struct tlsx_pem ca, leaf;
    cJSON *s = cJSON_CreateObject(), *d;
    char *b64, *text;
    const char *keys[4] = { "ca.crt", "ca.key", "tls.crt", "tls.key" };
    const char *vals[4];
    int i;

    tlsx_pem_init(&ca);
    tlsx_pem_init(&leaf);
    o.cn = "ca";
    cr_assert_eq(tlsx_gen_ca(&o, &ca, NULL), KERR_OK);
    o.cn = HOST;
    o.sans = sans;
    o.lifetime_secs = lifetime;
    o.not_before = not_before;
    cr_assert_eq(tlsx_gen_serving(&ca, &o, &leaf, NULL), KERR_OK);
    vals[0] = ca.cert;
    vals[1] = ca.key;
    vals[2] = leaf.cert;
    vals[3] = leaf.key;
    cJSON_AddItemToObject(s, "metadata",
                          cJSON_Parse("{\"name\":\"wh-tls\",\"namespace\":\"sys\","
                                      "\"resourceVersion\":\"41\"}"));
    d = cJSON_AddObjectToObject(s, "data");
    for (i = 0; i < 4; i++) {
        cr_assert_eq(crypto_b64_encode(vals[i], strlen(vals[i]), &b64, NULL, NULL), KERR_OK);
        cJSON_AddStringToObject(d, keys[i], b64);
        free(b64);
    }
    *ca_out = strdup(ca.cert);
    text = cJSON_PrintUnformatted(s);
    cJSON_Delete(s);
    tlsx_pem_release(&ca);
    tlsx_pem_release(&leaf);
    return text;
}

static char *configs_with_bundle(const char *ca_pem)
{
    char *b64 = NULL, *out = malloc(4096);

    cr_assert_eq(crypto_b64_encode(ca_pem, strlen(ca_pem), &b64, NULL, NULL), KERR_OK);
    snprintf(out, 4096, "{\"webhooks\":[{\"name\":\"a\",\"clientConfig\":{\"caBundle\":\"%s\"}}]}",
             b64);
    free(b64);
    return out;
}

Test(wh_selftls, generates_stores_serves_and_patches)
{
    struct fx f;
    struct kerr_info err;
    const struct mockapi_req *post, *patch;
    cJSON *sec = NULL, *ops = NULL;
    char *ca, *leaf, *b64 = NULL;
    time_t renew, now = time(NULL);

    up(&f, 3 * 24 * 3600);
    mockapi_expect(f.m, "GET", SECRET_PATH "/wh-tls", 404, "{\"kind\":\"Status\",\"code\":404}");
    mockapi_expect(f.m, "POST", SECRET_PATH, 201, "{}");
    mockapi_expect(f.m, "GET", VWC_PATH, 200,
                   "{\"webhooks\":[{\"name\":\"a\",\"clientConfig\":{}},{\"name\":\"b\","
                   "\"clientConfig\":{\"caBundle\":\"b2xk\"}}]}");
    mockapi_expect(f.m, "PATCH", VWC_PATH, 200, "{}");
    mockapi_expect(f.m, "GET", MWC_PATH, 404, "{\"kind\":\"Status\",\"code\":404}");
    cr_assert_eq(wh_selftls_ensure(f.st, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(mockapi_unexpected(f.m), 0);
    cr_expect(wh_tls_ready(f.tls));
    post = find(f.m, "POST", SECRET_PATH);
    cr_assert_not_null(post);
    cr_assert_eq(kjson_parse(post->body, post->body_len, NULL, &sec, NULL, NULL), KERR_OK);
    cr_expect_str_eq(kjson_get_str(sec, "metadata.name"), "wh-tls");
    cr_expect_str_eq(kjson_get_str(sec, "type"), "kubernetes.io/tls");
    ca = data_pem(sec, "ca.crt");
    leaf = data_pem(sec, "tls.crt");
    cr_expect_eq(tlsx_verify(ca, leaf, HOST, 0, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(tlsx_verify(ca, leaf, "wh.sys.svc.cluster.local", 0, NULL), KERR_OK);
    renew = wh_selftls_renew_at(f.st);
    cr_expect(renew >= now + 2 * 24 * 3600 - 600 && renew <= now + 2 * 24 * 3600 + 600,
              "renewal at %ld, now %ld", (long)renew, (long)now);
    patch = find(f.m, "PATCH", VWC_PATH);
    cr_assert_not_null(patch);
    cr_expect_str_eq(mockapi_req_header(patch, "Content-Type"), "application/json-patch+json");
    cr_assert_eq(kjson_parse(patch->body, patch->body_len, NULL, &ops, NULL, NULL), KERR_OK);
    /* Each add is guarded by a test of the webhook's name: the configuration may have
     * changed between the GET and the PATCH, and the indices with it. */
    cr_assert_eq(cJSON_GetArraySize(ops), 4, "%.*s", (int)patch->body_len, patch->body);
    cr_assert_eq(crypto_b64_encode(ca, strlen(ca), &b64, NULL, NULL), KERR_OK);
    cr_expect_str_eq(kjson_get_str(ops, "[0].op"), "test");
    cr_expect_str_eq(kjson_get_str(ops, "[0].path"), "/webhooks/0/name");
    cr_expect_str_eq(kjson_get_str(ops, "[0].value"), "a");
    cr_expect_str_eq(kjson_get_str(ops, "[2].op"), "test");
    cr_expect_str_eq(kjson_get_str(ops, "[2].path"), "/webhooks/1/name");
    cr_expect_str_eq(kjson_get_str(ops, "[2].value"), "b");
    cr_expect_str_eq(kjson_get_str(ops, "[3].path"), "/webhooks/1/clientConfig/caBundle");
    cr_expect_str_eq(kjson_get_str(ops, "[1].value"), b64);
    free(b64);
    free(ca);
    free(leaf);
    cJSON_Delete(sec);
    cJSON_Delete(ops);
    down(&f);
}

Test(wh_selftls, reuses_a_good_secret)
{
    struct fx f;
    struct kerr_info err;
    char *ca = NULL, *secret = secret_json(3600 * 24, 0, &ca), *cfgs = configs_with_bundle(ca);

    up(&f, 0);
    mockapi_expect(f.m, "GET", SECRET_PATH "/wh-tls", 200, secret);
    mockapi_expect(f.m, "GET", VWC_PATH, 200, cfgs);
    mockapi_expect(f.m, "GET", MWC_PATH, 200, cfgs);
    cr_assert_eq(wh_selftls_ensure(f.st, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(mockapi_unexpected(f.m), 0, "a write or patch was made");
    cr_expect_eq(mockapi_request_count(f.m), 3);
    cr_expect(wh_tls_ready(f.tls));
    cr_expect_eq(wh_tls_generation(f.tls), 1);
    free(ca);
    free(secret);
    free(cfgs);
    down(&f);
}

Test(wh_selftls, renews_at_two_thirds_with_the_same_ca)
{
    struct fx f;
    struct kerr_info err;
    char *ca = NULL, *secret = secret_json(3000, time(NULL) - 2500, &ca), *cfgs = NULL;
    const struct mockapi_req *put;
    cJSON *sec = NULL;
    char *stored_ca;

    cfgs = configs_with_bundle(ca);
    up(&f, 0);
    mockapi_expect(f.m, "GET", SECRET_PATH "/wh-tls", 200, secret);
    mockapi_expect(f.m, "PUT", SECRET_PATH "/wh-tls", 200, "{}");
    mockapi_expect(f.m, "GET", VWC_PATH, 200, cfgs);
    mockapi_expect(f.m, "GET", MWC_PATH, 200, cfgs);
    cr_assert_eq(wh_selftls_ensure(f.st, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(mockapi_unexpected(f.m), 0);
    put = find(f.m, "PUT", SECRET_PATH "/wh-tls");
    cr_assert_not_null(put);
    cr_assert_eq(kjson_parse(put->body, put->body_len, NULL, &sec, NULL, NULL), KERR_OK);
    cr_expect_str_eq(kjson_get_str(sec, "metadata.resourceVersion"), "41");
    stored_ca = data_pem(sec, "ca.crt");
    cr_expect_str_eq(stored_ca, ca, "the CA was replaced");
    cr_expect_gt(wh_selftls_renew_at(f.st), time(NULL) + 3600);
    free(stored_ca);
    cJSON_Delete(sec);
    free(ca);
    free(secret);
    free(cfgs);
    down(&f);
}

Test(wh_selftls, a_lost_race_uses_the_winner)
{
    struct fx f;
    struct kerr_info err;
    char *ca = NULL, *secret = secret_json(3600 * 24, 0, &ca), *cfgs = configs_with_bundle(ca);

    up(&f, 0);
    mockapi_expect(f.m, "GET", SECRET_PATH "/wh-tls", 404, "{\"kind\":\"Status\",\"code\":404}");
    mockapi_expect(f.m, "POST", SECRET_PATH, 409,
                   "{\"kind\":\"Status\",\"code\":409,\"reason\":\"AlreadyExists\"}");
    mockapi_expect(f.m, "GET", SECRET_PATH "/wh-tls", 200, secret);
    mockapi_expect(f.m, "GET", VWC_PATH, 200, cfgs);
    mockapi_expect(f.m, "GET", MWC_PATH, 200, cfgs);
    cr_assert_eq(wh_selftls_ensure(f.st, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(mockapi_unexpected(f.m), 0);
    cr_expect_eq(wh_tls_generation(f.tls), 1);
    free(ca);
    free(secret);
    free(cfgs);
    down(&f);
}

Test(wh_selftls, a_new_pair_is_served_only_once_the_ca_bundle_is_published)
{
    struct fx f;
    struct kerr_info err;
    char *ca = NULL, *secret = secret_json(3600 * 24, 0, &ca), *cfgs = configs_with_bundle(ca);
    char *ca2 = NULL, *old_leaf = secret_json(3000, time(NULL) - 2500, &ca2);

    up(&f, 0);
    mockapi_expect(f.m, "GET", SECRET_PATH "/wh-tls", 200, secret);
    mockapi_expect(f.m, "GET", VWC_PATH, 200, cfgs);
    mockapi_expect(f.m, "GET", MWC_PATH, 200, cfgs);
    cr_assert_eq(wh_selftls_ensure(f.st, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(wh_tls_generation(f.tls), 1);
    /* The Secret now holds a pair of another CA that is due for renewal; publishing the
     * CA fails: the pair in service stays, and the next pass comes soon. */
    mockapi_expect(f.m, "GET", SECRET_PATH "/wh-tls", 200, old_leaf);
    mockapi_expect(f.m, "PUT", SECRET_PATH "/wh-tls", 200, "{}");
    mockapi_expect(f.m, "GET", VWC_PATH, 200, cfgs);
    mockapi_expect(f.m, "PATCH", VWC_PATH, 500, "{\"kind\":\"Status\",\"code\":500}");
    mockapi_expect(f.m, "GET", MWC_PATH, 200, cfgs);
    mockapi_expect(f.m, "PATCH", MWC_PATH, 200, "{}");
    cr_assert_eq(wh_selftls_ensure(f.st, &err), KERR_OK, "%s", err.msg);
    cr_expect_eq(mockapi_unexpected(f.m), 0);
    cr_expect_eq(wh_tls_generation(f.tls), 1, "a pair the API server may not trust was served");
    cr_expect_leq(wh_selftls_next_pass_ms(f.st), WH_SELFTLS_RETRY_MS,
                  "a failed caBundle patch waits %ld ms", wh_selftls_next_pass_ms(f.st));
    free(ca);
    free(ca2);
    free(secret);
    free(old_leaf);
    free(cfgs);
    down(&f);
}

Test(wh_selftls, two_thirds)
{
    cr_expect_eq(wh_selftls_two_thirds(0, 3000), 2000);
    cr_expect_eq(wh_selftls_two_thirds(1000, 4000), 3000);
}
