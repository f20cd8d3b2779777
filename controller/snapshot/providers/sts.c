/* sts - AWS STS AssumeRoleWithWebIdentity (see sts.h). */
#include "controller/snapshot/providers/sts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/ktime.h"
#include "controller/snapshot/providers/screds.h"
#include "controller/snapshot/providers/shttp.h"
#include "controller/snapshot/providers/snapxml.h"

#define STS_RETRIES  2
#define STS_BODY_MAX (64 * 1024)

void sts_creds_release(struct sts_creds *c)
{
    if (c == NULL) {
        return;
    }
    free(c->access_key);
    free(c->secret_key);
    free(c->session_token);
    memset(c, 0, sizeof *c);
}

/* An ErrorResponse's Code and Message as the error. */
static enum kerr answer_error(long status, const char *xml, size_t len, struct kerr_info *err)
{
    char *code = NULL, *msg = NULL;
    if (snapxml_find(xml, len, "ErrorResponse", &code, NULL) != KERR_OK) {
        return kerr_set(err, KERR_PARSE,
                        "STS AssumeRoleWithWebIdentity: HTTP %ld, not an STS answer", status);
    }
    free(code);
    code = NULL;
    snapxml_find(xml, len, "Code", &code, NULL);
    snapxml_find(xml, len, "Message", &msg, NULL);
    enum kerr rc =
        kerr_set(err, KERR_UNAUTHORIZED, "STS AssumeRoleWithWebIdentity: HTTP %ld %s%s%.200s",
                 status, code ? code : "", msg ? ": " : "", msg ? msg : "");
    free(code);
    free(msg);
    return rc;
}

enum kerr sts_parse(long status, const char *xml, size_t len, struct sts_creds *out,
                    struct kerr_info *err)
{
    static const char *const names[] = { "AccessKeyId", "SecretAccessKey", "SessionToken" };
    char *exp = NULL, *root = NULL;
    memset(out, 0, sizeof *out);
    if (status < 200 || status > 299) {
        return answer_error(status, xml, len, err);
    }
    enum kerr rc = snapxml_find(xml, len, "AssumeRoleWithWebIdentityResult", &root, err);
    free(root);
    if (rc != KERR_OK) {
        return rc == KERR_NOTFOUND
                   ? kerr_set(err, KERR_PARSE, "STS answer without AssumeRoleWithWebIdentityResult")
                   : rc;
    }
    char **slots[] = { &out->access_key, &out->secret_key, &out->session_token, &exp };
    for (size_t i = 0; i < 4 && rc == KERR_OK; i++) {
        const char *name = i < 3 ? names[i] : "Expiration";
        rc = snapxml_find(xml, len, name, slots[i], err);
        if (rc == KERR_NOTFOUND || (rc == KERR_OK && (*slots[i])[0] == '\0')) {
            rc = kerr_set(err, KERR_PARSE, "STS answer: no %s", name);
        }
    }
    struct timespec ts;
    if (rc == KERR_OK && ktime_parse(exp, &ts, NULL) != KERR_OK) {
        rc = kerr_set(err, KERR_PARSE, "STS answer: Expiration \"%.40s\" is not a date", exp);
    }
    free(exp);
    if (rc != KERR_OK) {
        sts_creds_release(out);
        return rc;
    }
    out->expires = (int64_t)ts.tv_sec;
    return KERR_OK;
}

/* The token file's text without trailing whitespace, into b. */
static enum kerr read_token(const char *path, struct buf *b, struct kerr_info *err)
{
    char chunk[4096];
    size_t n;
    enum kerr rc = KERR_OK;
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        return kerr_set(err, KERR_NOTFOUND, "web identity token file %s cannot be opened", path);
    }
    while (rc == KERR_OK && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (buf_append(b, chunk, n) != KERR_OK) {
            rc = kerr_set(err, KERR_TOOBIG, "web identity token file %s: over %d bytes", path,
                          STS_TOKEN_MAX);
        }
    }
    if (rc == KERR_OK && ferror(f)) {
        rc = kerr_set(err, KERR_IO, "cannot read the web identity token file %s", path);
    }
    fclose(f);
    while (rc == KERR_OK && b->len > 0 && strchr(" \t\r\n", b->data[b->len - 1]) != NULL) {
        b->data[--b->len] = '\0';
    }
    if (rc == KERR_OK && (b->len < 4 || memchr(buf_str(b), '\0', b->len) != NULL)) {
        rc = kerr_set(err, KERR_INVAL, "web identity token file %s holds no token", path);
    }
    return rc;
}

/* The form body of the call; *out OWNS it. */
static enum kerr form_body(const struct sts_web_identity *in, const char *token, char **out,
                           struct kerr_info *err)
{
    char name[64];
    char *e[3] = { NULL, NULL, NULL };
    if (in->session_name && in->session_name[0]) {
        snprintf(name, sizeof name, "%s", in->session_name);
    } else {
        snprintf(name, sizeof name, "etcd-warden-%lld", (long long)time(NULL));
    }
    const char *raw[3] = { in->role_arn, name, token };
    enum kerr rc = KERR_OK;
    for (size_t i = 0; i < 3 && rc == KERR_OK; i++) {
        rc = shttp_escape(raw[i], 0, &e[i], err);
    }
    if (rc == KERR_OK) {
        *out = buf_dupf(STS_BODY_MAX,
                        "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=%s"
                        "&RoleSessionName=%s&WebIdentityToken=%s",
                        e[0], e[1], e[2]);
        rc = *out ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    for (size_t i = 0; i < 3; i++) {
        free(e[i]);
    }
    return rc;
}

enum kerr sts_assume_web_identity(const struct sts_web_identity *in, struct sts_creds *out,
                                  struct kerr_info *err)
{
    struct buf tok;
    struct shttp h;
    char *body = NULL, *url = NULL;
    const char *ep = getenv("AWS_ENDPOINT_URL_STS");
    memset(out, 0, sizeof *out);
    /* no user string in a URL host: the region is a DNS label or nothing is sent */
    if (!(ep && ep[0]) && !screds_dns_label(in->region)) {
        return kerr_set(err, KERR_INVAL, "region \"%.64s\" is not a DNS label",
                        in->region ? in->region : "");
    }
    buf_init(&tok, STS_TOKEN_MAX);
    enum kerr rc = read_token(in->token_path, &tok, err);
    rc = rc ? rc : form_body(in, buf_str(&tok), &body, err);
    buf_release(&tok);
    if (rc == KERR_OK) {
        url = ep && ep[0] ? strdup(ep) : buf_dupf(256, "https://sts.%s.amazonaws.com/", in->region);
        rc = url ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    struct curl_slist *hd = NULL;
    if (rc == KERR_OK) {
        hd = curl_slist_append(NULL,
                               "Content-Type: application/x-www-form-urlencoded; charset=utf-8");
        rc = hd ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : shttp_init(&h, err);
    if (rc == KERR_OK) {
        struct shttp_resp r;
        struct shttp_req rq = { .method = "POST",
                                .url = url,
                                .headers = hd,
                                .body = body,
                                .body_len = strlen(body),
                                .retries = STS_RETRIES };
        rc = shttp_perform(&h, &rq, &r, err);
        rc = rc ? rc : sts_parse(r.status, buf_str(&r.body), r.body.len, out, err);
        shttp_resp_release(&r);
        shttp_release(&h);
    }
    curl_slist_free_all(hd);
    free(body);
    free(url);
    if (rc != KERR_OK) {
        kerr_wrap(err, "S3 web identity (role %.200s)", in->role_arn);
    }
    return rc;
}
