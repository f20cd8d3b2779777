#include "controller/snapshot/providers/gcsauth.h"
#include "controller/snapshot/providers/gcsjson.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"

/* A service-account key file's JSON for a fresh RSA key (*key OWNED by the caller). */
static char *sa_json(const char *type, EVP_PKEY **key)
{
    *key = EVP_RSA_gen(2048);
    cr_assert_not_null(*key);
    BIO *b = BIO_new(BIO_s_mem());
    cr_assert(PEM_write_bio_PrivateKey(b, *key, NULL, NULL, 0, NULL, NULL) == 1);
    char *pem = NULL;
    long n = BIO_get_mem_data(b, &pem);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", type);
    cJSON_AddStringToObject(o, "client_email", "sa@p.iam.gserviceaccount.com");
    char *p = strndup(pem, (size_t)n);
    cJSON_AddStringToObject(o, "private_key", p);
    free(p);
    BIO_free(b);
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

static unsigned char *b64url_dec(const char *s, size_t n, size_t *len)
{
    char *t = calloc(n + 4, 1);
    for (size_t i = 0; i < n; i++) {
        t[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
    }
    while (n % 4) {
        t[n++] = '=';
    }
    unsigned char *out = NULL;
    cr_assert_eq(crypto_b64_decode(t, n, &out, len, NULL), KERR_OK);
    free(t);
    return out;
}

Test(gcsauth, jwt_is_rs256_signed_with_the_key_and_claims_rfc7523)
{
    EVP_PKEY *key;
    char *js = sa_json("service_account", &key);
    struct gcsauth a;
    struct kerr_info err;
    cr_assert_eq(gcsauth_parse(js, strlen(js), &a, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(a.token_uri, "https://oauth2.googleapis.com/token");
    char *jwt = NULL;
    cr_assert_eq(gcsauth_jwt(&a, 1700000000, &jwt, &err), KERR_OK, "%s", err.msg);
    const char *d1 = strchr(jwt, '.'), *d2 = strrchr(jwt, '.');
    cr_assert(d1 && d2 && d1 < d2);
    size_t hl, cl, sl;
    unsigned char *h = b64url_dec(jwt, (size_t)(d1 - jwt), &hl);
    unsigned char *c = b64url_dec(d1 + 1, (size_t)(d2 - d1 - 1), &cl);
    unsigned char *sig = b64url_dec(d2 + 1, strlen(d2 + 1), &sl);
    cr_assert_str_eq((char *)h, "{\"alg\":\"RS256\",\"typ\":\"JWT\"}");
    cJSON *claims = cJSON_Parse((char *)c);
    cr_assert_str_eq(cJSON_GetObjectItem(claims, "iss")->valuestring,
                     "sa@p.iam.gserviceaccount.com");
    cr_assert_str_eq(cJSON_GetObjectItem(claims, "aud")->valuestring, a.token_uri);
    cr_assert_str_eq(cJSON_GetObjectItem(claims, "scope")->valuestring, GCSAUTH_SCOPE);
    cr_assert_eq(cJSON_GetObjectItem(claims, "iat")->valuedouble, 1700000000.0);
    cr_assert_eq(cJSON_GetObjectItem(claims, "exp")->valuedouble, 1700003600.0);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    cr_assert(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) == 1);
    cr_assert(EVP_DigestVerify(md, sig, sl, (const unsigned char *)jwt, (size_t)(d2 - jwt)) == 1,
              "signature does not verify with the service account's key");
    EVP_MD_CTX_free(md);
    cJSON_Delete(claims);
    free(h);
    free(c);
    free(sig);
    free(jwt);
    free(js);
    gcsauth_release(&a);
    EVP_PKEY_free(key);
}

Test(gcsauth, refusals_name_the_field)
{
    EVP_PKEY *key;
    char *js = sa_json("authorized_user", &key);
    struct gcsauth a;
    struct kerr_info err;
    cr_assert_eq(gcsauth_parse(js, strlen(js), &a, &err), KERR_UNSUPPORTED);
    cr_assert(strstr(err.msg, "authorized_user"), "%s", err.msg);
    static const char *const bad[][2] = {
        { "{\"type\":\"service_account\",\"private_key\":\"x\"}", "client_email" },
        { "{\"type\":\"service_account\",\"client_email\":\"e\"}", "private_key" },
        { "{\"type\":\"service_account\",\"client_email\":\"e\",\"private_key\":\"nope\"}",
          "private_key is not" },
        { "{\"client_email\":\"e\"}", "type" },
        { "[1]", "type" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_neq(gcsauth_parse(bad[i][0], strlen(bad[i][0]), &a, &err), KERR_OK);
        cr_assert(strstr(err.msg, bad[i][1]), "%s: %s", bad[i][0], err.msg);
    }
    cr_assert_neq(gcsauth_parse("{", 1, &a, &err), KERR_OK);
    free(js);
    EVP_PKEY_free(key);
}

Test(gcsjson, list_reads_retention_exclusion_mark_and_page_token)
{
    static const char page[] =
        "{\"kind\":\"storage#objects\",\"nextPageToken\":\"tok\",\"items\":["
        "{\"name\":\"p/v2/Full-0-1-1700000000.gz\",\"generation\":\"1700000000123456\","
        "\"size\":\"3145728\",\"md5Hash\":\"1B2M2Y8AsgTpgAmY7PhCfg==\",\"etag\":\"CIDg\","
        "\"updated\":\"2023-11-14T22:13:20.000Z\","
        "\"retentionExpirationTime\":\"2023-11-15T22:13:20.5Z\","
        "\"metadata\":{\"x-etcd-snapshot-exclude\":\"true\",\"etcd-warden-copy\":\"true\",\"etcd-"
        "warden-sha256\":\"abababababababababababababababababababababababababababababababab\"}},"
        "{\"name\":\"p/"
        "other\",\"size\":\"12\",\"metadata\":{\"x-etcd-snapshot-exclude\":\"false\",\"etcd-warden-"
        "sha256\":\"AB\"}}"
        "]}";
    struct ostore_list l = { 0 };
    char *next = NULL;
    struct kerr_info err;
    cr_assert_eq(gcsjson_list(page, sizeof page - 1, &l, &next, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(next, "tok");
    cr_assert_str_eq(l.v[0].key, "p/v2/Full-0-1-1700000000.gz");
    cr_assert_str_eq(l.v[0].version_id, "1700000000123456");
    cr_assert_eq(l.v[0].size, 3145728);
    cr_assert_str_eq(l.v[0].md5, "d41d8cd98f00b204e9800998ecf8427e");
    cr_assert_eq(l.v[0].mtime, 1700000000);
    cr_assert_eq(l.v[0].immutable_until, 1700086400);
    cr_assert(l.v[0].excluded && l.v[0].own_copy);
    cr_assert(!l.v[1].excluded && !l.v[1].own_copy);
    cr_assert_str_eq(l.v[0].sha256,
                     "abababababababababababababababababababababababababababababababab");
    cr_assert_str_eq(l.v[1].sha256, "");
    cr_assert_null(l.v[1].version_id);
    cr_assert_eq(l.v[1].immutable_until, 0);
    cr_assert_str_eq(l.v[1].md5, "");
    free(next);
    ostore_list_release(&l);

    static const char last[] = "{\"kind\":\"storage#objects\"}";
    cr_assert_eq(gcsjson_list(last, sizeof last - 1, &l, &next, &err), KERR_OK);
    cr_assert_null(next);
    cr_assert_eq(l.n, 0);
    static const char *const bad[] = { "{\"items\":{}}", "{\"items\":[{\"size\":\"1\"}]}",
                                       "{\"items\":[{\"name\":\"a\",\"generation\":\"x\"}]}", "[]",
                                       "{\"items\":[" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(gcsjson_list(bad[i], strlen(bad[i]), &l, &next, &err), KERR_PARSE, "%s",
                     bad[i]);
        cr_assert_null(next);
        ostore_list_release(&l);
    }
}

Test(gcsjson, error_reason_and_message)
{
    static const char e[] =
        "{\"error\":{\"code\":403,\"message\":\"Object is subject to bucket's "
        "retention policy\",\"errors\":[{\"reason\":\"retentionPolicyNotMet\"}]}}";
    char reason[64], msg[256];
    gcsjson_error(e, sizeof e - 1, reason, msg);
    cr_assert_str_eq(reason, "retentionPolicyNotMet");
    cr_assert(strstr(msg, "retention policy"));
    gcsjson_error("<html>", 6, reason, msg);
    cr_assert_str_eq(reason, "");
    cr_assert_str_eq(msg, "");
}
