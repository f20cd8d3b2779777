/*
 * s3auth - the S3 store's credentials over a run (see s3int.h): static keys as read, or
 * web identity exchanged at STS for temporary keys that are renewed before they expire;
 * the session token of either rides on every request as x-amz-security-token.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/log.h"
#include "controller/snapshot/providers/s3int.h"
#include "controller/snapshot/providers/sts.h"

/* Renew temporary credentials this long before they expire (the SDKs' margin is minutes). */
#define S3_RENEW_S 300

static enum kerr apply_keys(struct s3 *s, struct kerr_info *err)
{
    CURL *c = s->http.curl;
    if (curl_easy_setopt(c, CURLOPT_USERNAME, s->creds.access_key) != CURLE_OK ||
        curl_easy_setopt(c, CURLOPT_PASSWORD, s->creds.secret_key) != CURLE_OK) {
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    return KERR_OK;
}

/* Fresh keys from STS into s->creds. */
static enum kerr renew(struct s3 *s, struct kerr_info *err)
{
    struct sts_creds t;
    struct sts_web_identity in = { .role_arn = s->creds.role_arn,
                                   .token_path = s->creds.token_path,
                                   .session_name = s->creds.session_name,
                                   .region = s->creds.region };
    enum kerr rc = sts_assume_web_identity(&in, &t, err);
    if (rc != KERR_OK) {
        return rc;
    }
    free(s->creds.access_key);
    free(s->creds.secret_key);
    free(s->creds.session_token);
    s->creds.access_key = t.access_key;
    s->creds.secret_key = t.secret_key;
    s->creds.session_token = t.session_token;
    s->creds_expiry = t.expires;
    char left[32];
    snprintf(left, sizeof left, "%llds", (long long)(t.expires - (int64_t)time(NULL)));
    log_info("S3 web identity: temporary credentials from STS", "role", s->creds.role_arn,
             "expiresIn", left);
    return apply_keys(s, err);
}

enum kerr s3_auth_init(struct s3 *s, struct kerr_info *err)
{
    s->web_identity =
        !(s->creds.access_key && s->creds.access_key[0]) && screds_s3_web_identity(&s->creds);
    return s->web_identity ? renew(s, err) : apply_keys(s, err);
}

enum kerr s3_auth(struct s3 *s, struct curl_slist *h, struct curl_slist **out,
                  struct kerr_info *err)
{
    *out = NULL;
    int64_t now = (int64_t)time(NULL);
    if (s->web_identity && now >= s->creds_expiry - S3_RENEW_S) {
        struct kerr_info e2 = { 0 };
        enum kerr rc = renew(s, &e2);
        if (rc != KERR_OK && now >= s->creds_expiry) {
            if (err) {
                *err = e2;
            }
            return rc;
        }
        if (rc != KERR_OK) {
            log_warn("S3 web identity: renewal failed, the current credentials are still valid",
                     "error", e2.msg);
        }
    }
    if (s->creds.session_token == NULL) {
        return KERR_OK;
    }
    char *line = buf_dupf(8192, "x-amz-security-token: %s", s->creds.session_token);
    struct curl_slist *l = NULL;
    for (const struct curl_slist *p = h; line && p; p = p->next) {
        struct curl_slist *n = curl_slist_append(l, p->data);
        if (n == NULL) {
            curl_slist_free_all(l);
            free(line);
            return kerr_set(err, KERR_NOMEM, NULL);
        }
        l = n;
    }
    struct curl_slist *n = line ? curl_slist_append(l, line) : NULL;
    free(line);
    if (n == NULL) {
        curl_slist_free_all(l);
        return kerr_set(err, KERR_NOMEM, NULL);
    }
    *out = n;
    return KERR_OK;
}
