/* gcsauth - GCS service-account credentials and OAuth2 tokens (see gcsauth.h). */
#include "controller/snapshot/providers/gcsauth.h"

#include <cjson/cJSON.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/kjson.h"

#define GCSAUTH_FILE_MAX (64 * 1024)
#define GCSAUTH_RETRIES  4

static const char *str_field(const cJSON *root, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

enum kerr gcsauth_parse(const char *text, size_t len, struct gcsauth *out, struct kerr_info *err)
{
    cJSON *root = NULL;
    struct kjson_limits lim = { GCSAUTH_FILE_MAX, 8 };
    memset(out, 0, sizeof *out);
    enum kerr rc = kjson_parse(text, len, &lim, &root, NULL, err);
    if (rc != KERR_OK) {
        kerr_wrap(err, "GCS credentials");
        return rc;
    }
    const char *type = str_field(root, "type");
    const char *email = str_field(root, "client_email");
    const char *pem = str_field(root, "private_key");
    const char *uri = str_field(root, "token_uri");
    if (type && strcmp(type, "external_account") == 0) {
        out->ext = calloc(1, sizeof *out->ext);
        rc = out->ext ? stsgcp_parse(root, out->ext, err) : kerr_set(err, KERR_NOMEM, NULL);
        cJSON_Delete(root);
        if (rc != KERR_OK) {
            gcsauth_release(out);
        }
        return rc;
    }
    if (type == NULL || strcmp(type, "service_account") != 0) {
        rc = kerr_set(err, KERR_UNSUPPORTED,
                      "GCS credentials: type %s is not supported "
                      "(service_account and external_account are)",
                      type ? type : "(missing)");
    } else if (email == NULL || pem == NULL) {
        rc = kerr_set(err, KERR_INVAL, "GCS credentials: %s is required",
                      email ? "private_key" : "client_email");
    }
    if (rc == KERR_OK) {
        BIO *b = BIO_new_mem_buf(pem, -1);
        out->key = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
        BIO_free(b);
        if (out->key == NULL || EVP_PKEY_get_base_id(out->key) != EVP_PKEY_RSA) {
            rc = kerr_set(err, KERR_PARSE, "GCS credentials: private_key is not an RSA PEM key");
        }
    }
    if (rc == KERR_OK) {
        out->client_email = strdup(email);
        out->token_uri = strdup(uri ? uri : GCSAUTH_TOKEN_URI);
        if (out->client_email == NULL || out->token_uri == NULL) {
            rc = kerr_set(err, KERR_NOMEM, NULL);
        }
    }
    cJSON_Delete(root);
    if (rc != KERR_OK) {
        gcsauth_release(out);
    }
    return rc;
}

enum kerr gcsauth_read(const char *path, struct gcsauth *out, struct kerr_info *err)
{
    struct buf b;
    char chunk[4096];
    size_t n;
    enum kerr rc = KERR_OK;
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        return kerr_set(err, KERR_NOTFOUND, "GCS credentials: cannot open %s", path);
    }
    buf_init(&b, GCSAUTH_FILE_MAX);
    while (rc == KERR_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (buf_append(&b, chunk, n) != KERR_OK) {
            rc = kerr_set(err, KERR_TOOBIG, "GCS credentials: %s is too large", path);
        }
    }
    if (rc == KERR_OK && ferror(f)) {
        rc = kerr_set(err, KERR_IO, "GCS credentials: cannot read %s", path);
    }
    fclose(f);
    rc = rc ? rc : gcsauth_parse(buf_str(&b), b.len, out, err);
    buf_release(&b);
    return rc;
}

void gcsauth_release(struct gcsauth *a)
{
    if (a) {
        free(a->client_email);
        free(a->token_uri);
        free(a->token);
        EVP_PKEY_free(a->key);
        stsgcp_release(a->ext);
        free(a->ext);
        memset(a, 0, sizeof *a);
    }
}

/* base64url without padding (RFC 7515 section 2) of len bytes; *out OWNS it. */
static enum kerr b64url(const void *data, size_t len, char **out, struct kerr_info *err)
{
    size_t n = 0;
    enum kerr rc = crypto_b64_encode(data, len, out, &n, err);
    if (rc != KERR_OK) {
        return rc;
    }
    while (n > 0 && (*out)[n - 1] == '=') {
        (*out)[--n] = '\0';
    }
    for (char *p = *out; *p; p++) {
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
    }
    return KERR_OK;
}

enum kerr gcsauth_jwt(const struct gcsauth *a, int64_t now, char **out, struct kerr_info *err)
{
    static const char header[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
    char *h64 = NULL, *c64 = NULL, *s64 = NULL, *claims = NULL, *input = NULL;
    unsigned char *sig = NULL;
    size_t siglen = 0;
    *out = NULL;
    cJSON *c = cJSON_CreateObject();
    if (c == NULL || !cJSON_AddStringToObject(c, "iss", a->client_email) ||
        !cJSON_AddStringToObject(c, "scope", GCSAUTH_SCOPE) ||
        !cJSON_AddStringToObject(c, "aud", a->token_uri) ||
        !cJSON_AddNumberToObject(c, "iat", (double)now) ||
        !cJSON_AddNumberToObject(c, "exp", (double)(now + 3600))) {
        cJSON_Delete(c);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    enum kerr rc = kjson_print(c, &claims, NULL, err);
    cJSON_Delete(c);
    rc = rc ? rc : b64url(header, sizeof header - 1, &h64, err);
    rc = rc ? rc : b64url(claims, strlen(claims), &c64, err);
    if (rc == KERR_OK) {
        input = buf_dupf(GCSAUTH_FILE_MAX, "%s.%s", h64, c64);
        rc = input ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    EVP_MD_CTX *md = rc ? NULL : EVP_MD_CTX_new();
    if (rc == KERR_OK &&
        (md == NULL || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, a->key) != 1 ||
         EVP_DigestSign(md, NULL, &siglen, (const unsigned char *)input, strlen(input)) != 1 ||
         (sig = malloc(siglen)) == NULL ||
         EVP_DigestSign(md, sig, &siglen, (const unsigned char *)input, strlen(input)) != 1)) {
        rc = crypto_ossl_fail(err, KERR_INTERNAL, "GCS credentials", "RS256 signature");
    }
    EVP_MD_CTX_free(md);
    rc = rc ? rc : b64url(sig, siglen, &s64, err);
    if (rc == KERR_OK) {
        *out = buf_dupf(GCSAUTH_FILE_MAX, "%s.%s", input, s64);
        rc = *out ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    free(h64);
    free(c64);
    free(s64);
    free(claims);
    free(input);
    free(sig);
    return rc;
}

/* The token endpoint's answer {"access_token":..., "expires_in":...}. */
static enum kerr take_token(struct gcsauth *a, const struct shttp_resp *r, int64_t now,
                            struct kerr_info *err)
{
    cJSON *root = NULL;
    enum kerr rc = kjson_parse(buf_str(&r->body), r->body.len, NULL, &root, NULL, err);
    const char *tok = rc ? NULL : str_field(root, "access_token");
    const cJSON *exp = rc ? NULL : cJSON_GetObjectItemCaseSensitive(root, "expires_in");
    if (rc == KERR_OK && tok == NULL) {
        rc = kerr_set(err, KERR_PARSE, "GCS token endpoint %s: no access_token", a->token_uri);
    }
    if (rc == KERR_OK) {
        free(a->token);
        a->token = strdup(tok);
        a->token_exp = now + (cJSON_IsNumber(exp) ? (int64_t)exp->valuedouble : 3600);
        rc = a->token ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    cJSON_Delete(root);
    return rc;
}

enum kerr gcsauth_token(struct gcsauth *a, struct shttp *h, const char **tok, struct kerr_info *err)
{
    int64_t now = (int64_t)time(NULL);
    char *jwt = NULL, *body = NULL;
    *tok = NULL;
    if (a->token && a->token_exp - 60 > now) {
        *tok = a->token;
        return KERR_OK;
    }
    if (a->ext) {
        char *t = NULL;
        int64_t exp = 0;
        enum kerr xrc = stsgcp_token(a->ext, h, GCSAUTH_SCOPE, &t, &exp, err);
        if (xrc == KERR_OK) {
            free(a->token);
            a->token = t;
            a->token_exp = exp;
            *tok = t;
        }
        return xrc;
    }
    enum kerr rc = gcsauth_jwt(a, now, &jwt, err);
    if (rc == KERR_OK) {
        body = buf_dupf(GCSAUTH_FILE_MAX,
                        "grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type%%3Ajwt-bearer"
                        "&assertion=%s",
                        jwt);
        rc = body ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    if (rc == KERR_OK) {
        struct shttp_resp r;
        rc = shttp_post(h, a->token_uri, "application/x-www-form-urlencoded", NULL, body,
                        GCSAUTH_RETRIES, &r, err);
        if (rc == KERR_OK && r.status != 200) {
            rc = kerr_set(err, KERR_UNAUTHORIZED, "GCS token endpoint %s: HTTP %ld %.200s",
                          a->token_uri, r.status, buf_str(&r.body));
        }
        rc = rc ? rc : take_token(a, &r, now, err);
        shttp_resp_release(&r);
    }
    free(jwt);
    free(body);
    *tok = rc ? NULL : a->token;
    return rc;
}
