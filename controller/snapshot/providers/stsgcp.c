/* stsgcp - Google external-account credentials for GCS (see stsgcp.h). */
#include "controller/snapshot/providers/stsgcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/kjson.h"
#include "common/ktime.h"

#define STSGCP_FILE_MAX (64 * 1024)
#define STSGCP_RETRIES  2

static const char *str_of(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

void stsgcp_release(struct stsgcp *x)
{
    if (x == NULL) {
        return;
    }
    free(x->audience);
    free(x->subject_token_type);
    free(x->token_url);
    free(x->impersonation_url);
    free(x->file);
    free(x->json_field);
    memset(x, 0, sizeof *x);
}

static enum kerr dup_to(char **slot, const char *v, struct kerr_info *err)
{
    if (v && (*slot = strdup(v)) == NULL) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    return KERR_OK;
}

enum kerr stsgcp_parse(const cJSON *root, struct stsgcp *out, struct kerr_info *err)
{
    static const char *const required[] = { "audience", "subject_token_type", "token_url" };
    memset(out, 0, sizeof *out);
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(root, "credential_source");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(src, "format");
    const char *ftype = str_of(fmt, "type");
    enum kerr rc = KERR_OK;
    for (size_t i = 0; i < 3 && rc == KERR_OK; i++) {
        if (str_of(root, required[i]) == NULL) {
            rc = kerr_set(err, KERR_INVAL, "GCS external account: %s is required", required[i]);
        }
    }
    if (rc == KERR_OK && !cJSON_IsObject(src)) {
        rc = kerr_set(err, KERR_INVAL, "GCS external account: credential_source is required");
    } else if (rc == KERR_OK && str_of(src, "file") == NULL) {
        rc = kerr_set(err, KERR_UNSUPPORTED,
                      "GCS external account: credential_source.%s is not supported (file is)",
                      cJSON_GetObjectItemCaseSensitive(src, "url")          ? "url"
                      : cJSON_GetObjectItemCaseSensitive(src, "executable") ? "executable"
                                                                            : "file missing:");
    } else if (rc == KERR_OK && ftype && strcmp(ftype, "text") != 0 && strcmp(ftype, "json") != 0) {
        rc = kerr_set(err, KERR_INVAL, "GCS external account: credential_source.format.type %.32s",
                      ftype);
    } else if (rc == KERR_OK && ftype && strcmp(ftype, "json") == 0 &&
               str_of(fmt, "subject_token_field_name") == NULL) {
        rc = kerr_set(err, KERR_INVAL,
                      "GCS external account: credential_source.format.subject_token_field_name "
                      "is required for the json format");
    }
    rc = rc ? rc : dup_to(&out->audience, str_of(root, "audience"), err);
    rc = rc ? rc : dup_to(&out->subject_token_type, str_of(root, "subject_token_type"), err);
    rc = rc ? rc : dup_to(&out->token_url, str_of(root, "token_url"), err);
    rc = rc ? rc
            : dup_to(&out->impersonation_url, str_of(root, "service_account_impersonation_url"),
                     err);
    rc = rc ? rc : dup_to(&out->file, str_of(src, "file"), err);
    if (rc == KERR_OK && ftype && strcmp(ftype, "json") == 0) {
        rc = dup_to(&out->json_field, str_of(fmt, "subject_token_field_name"), err);
    }
    if (rc != KERR_OK) {
        stsgcp_release(out);
    }
    return rc;
}

/* The subject token from the file, as its format says; *out OWNS it. */
static enum kerr subject_token(const struct stsgcp *x, char **out, struct kerr_info *err)
{
    struct buf b;
    char chunk[4096];
    size_t n;
    enum kerr rc = KERR_OK;
    *out = NULL;
    FILE *f = fopen(x->file, "re");
    if (f == NULL) {
        return kerr_set(err, KERR_NOTFOUND, "GCS external account: cannot open %s", x->file);
    }
    buf_init(&b, STSGCP_FILE_MAX);
    while (rc == KERR_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (buf_append(&b, chunk, n) != KERR_OK) {
            rc = kerr_set(err, KERR_TOOBIG, "GCS external account: %s is too large", x->file);
        }
    }
    fclose(f);
    cJSON *root = NULL;
    const char *tok = NULL;
    if (rc == KERR_OK && x->json_field) {
        rc = kjson_parse(buf_str(&b), b.len, NULL, &root, NULL, err);
        tok = rc ? NULL : str_of(root, x->json_field);
        if (rc == KERR_OK && tok == NULL) {
            rc = kerr_set(err, KERR_PARSE, "GCS external account: %s has no string %s", x->file,
                          x->json_field);
        }
    } else if (rc == KERR_OK) {
        while (b.len > 0 && strchr(" \t\r\n", b.data[b.len - 1]) != NULL) {
            b.data[--b.len] = '\0';
        }
        tok = buf_str(&b);
    }
    if (rc == KERR_OK &&
        (tok[0] == '\0' || (!x->json_field && memchr(buf_str(&b), '\0', b.len) != NULL))) {
        rc = kerr_set(err, KERR_INVAL, "GCS external account: %s holds no token", x->file);
    }
    rc = rc ? rc : dup_to(out, tok, err);
    cJSON_Delete(root);
    buf_release(&b);
    return rc;
}

enum kerr stsgcp_exchange_answer(long status, const char *body, size_t len, int64_t now, char **tok,
                                 int64_t *exp, struct kerr_info *err)
{
    cJSON *root = NULL;
    *tok = NULL;
    enum kerr rc = kjson_parse(body, len, NULL, &root, NULL, NULL);
    if (status != 200) {
        const char *code = str_of(root, "error"), *desc = str_of(root, "error_description");
        rc = kerr_set(err, KERR_UNAUTHORIZED, "GCS token exchange: HTTP %ld %.64s%s%.200s", status,
                      code ? code : "", desc ? ": " : "", desc ? desc : "");
    } else if (rc != KERR_OK || str_of(root, "access_token") == NULL) {
        rc = kerr_set(err, KERR_PARSE, "GCS token exchange: no access_token in the answer");
    } else {
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(root, "expires_in");
        *exp = now + (cJSON_IsNumber(in) && in->valuedouble > 0 ? (int64_t)in->valuedouble : 3600);
        rc = dup_to(tok, str_of(root, "access_token"), err);
    }
    cJSON_Delete(root);
    return rc;
}

enum kerr stsgcp_impersonation_answer(long status, const char *body, size_t len, char **tok,
                                      int64_t *exp, struct kerr_info *err)
{
    cJSON *root = NULL;
    struct timespec ts;
    *tok = NULL;
    enum kerr rc = kjson_parse(body, len, NULL, &root, NULL, NULL);
    if (status != 200) {
        const cJSON *e = rc ? NULL : cJSON_GetObjectItemCaseSensitive(root, "error");
        const char *st = str_of(e, "status"), *msg = str_of(e, "message");
        rc = kerr_set(err, KERR_UNAUTHORIZED,
                      "GCS service account impersonation: HTTP %ld %.64s%s%.200s", status,
                      st ? st : "", msg ? ": " : "", msg ? msg : "");
    } else if (rc != KERR_OK || str_of(root, "accessToken") == NULL ||
               ktime_parse(str_of(root, "expireTime"), &ts, NULL) != KERR_OK) {
        rc = kerr_set(err, KERR_PARSE,
                      "GCS service account impersonation: no accessToken and expireTime");
    } else {
        *exp = (int64_t)ts.tv_sec;
        rc = dup_to(tok, str_of(root, "accessToken"), err);
    }
    cJSON_Delete(root);
    return rc;
}

/* The RFC 8693 exchange of the subject token for a Google access token. */
static enum kerr exchange(const struct stsgcp *x, struct shttp *h, const char *scope, char **tok,
                          int64_t *exp, struct kerr_info *err)
{
    const char *raw[4] = { x->audience, scope, NULL, x->subject_token_type };
    char *e[4] = { NULL, NULL, NULL, NULL }, *subject = NULL, *body = NULL;
    enum kerr rc = subject_token(x, &subject, err);
    raw[2] = subject;
    for (size_t i = 0; i < 4 && rc == KERR_OK; i++) {
        rc = shttp_escape(raw[i], 0, &e[i], err);
    }
    if (rc == KERR_OK) {
        body = buf_dupf(STSGCP_FILE_MAX * 2,
                        "grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type%%3Atoken-exchange"
                        "&audience=%s&scope=%s"
                        "&requested_token_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Atoken-type%%3A"
                        "access_token&subject_token=%s&subject_token_type=%s",
                        e[0], e[1], e[2], e[3]);
        rc = body ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    if (rc == KERR_OK) {
        struct shttp_resp r;
        int64_t now = (int64_t)time(NULL);
        rc = shttp_post(h, x->token_url, "application/x-www-form-urlencoded", NULL, body,
                        STSGCP_RETRIES, &r, err);
        rc =
            rc ? rc
               : stsgcp_exchange_answer(r.status, buf_str(&r.body), r.body.len, now, tok, exp, err);
        shttp_resp_release(&r);
    }
    for (size_t i = 0; i < 4; i++) {
        free(e[i]);
    }
    free(subject);
    free(body);
    return rc;
}

/* generateAccessToken for scope with the federated token fed. */
static enum kerr impersonate(const struct stsgcp *x, struct shttp *h, const char *fed,
                             const char *scope, char **tok, int64_t *exp, struct kerr_info *err)
{
    char *auth = buf_dupf(8192, "Authorization: Bearer %s", fed), *body = NULL;
    cJSON *req = cJSON_CreateObject(), *scopes = cJSON_CreateArray();
    enum kerr rc = auth && req && scopes ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK && (!cJSON_AddItemToArray(scopes, cJSON_CreateString(scope)) ||
                          !cJSON_AddItemToObject(req, "scope", scopes) ||
                          (scopes = NULL, !cJSON_AddStringToObject(req, "lifetime", "3600s")))) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : kjson_print(req, &body, NULL, err);
    if (rc == KERR_OK) {
        struct shttp_resp r;
        rc = shttp_post(h, x->impersonation_url, "application/json", auth, body, STSGCP_RETRIES, &r,
                        err);
        rc =
            rc ? rc
               : stsgcp_impersonation_answer(r.status, buf_str(&r.body), r.body.len, tok, exp, err);
        shttp_resp_release(&r);
    }
    cJSON_Delete(scopes);
    cJSON_Delete(req);
    free(auth);
    free(body);
    return rc;
}

enum kerr stsgcp_token(const struct stsgcp *x, struct shttp *h, const char *scope, char **tok,
                       int64_t *exp, struct kerr_info *err)
{
    char *fed = NULL;
    int64_t fed_exp = 0;
    *tok = NULL;
    if (x->impersonation_url == NULL) {
        return exchange(x, h, scope, tok, exp, err);
    }
    enum kerr rc = exchange(x, h, STSGCP_CLOUD_PLATFORM, &fed, &fed_exp, err);
    rc = rc ? rc : impersonate(x, h, fed, scope, tok, exp, err);
    free(fed);
    return rc;
}
