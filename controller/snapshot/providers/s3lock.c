/* s3lock - S3 Object Lock: immutability refusals told from permission errors, and the
 * exclude mark on a version that cannot be deleted. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/crypto.h"
#include "common/ktime.h"
#include "common/log.h"
#include "controller/snapshot/providers/s3int.h"
#include "controller/snapshot/providers/snapxml.h"

/* Leeway for a retention that ended just now: the store may still refuse for a moment. */
#define S3_LOCK_LEEWAY_S 5

/* One Object Lock subresource (retention or legal-hold) of obj's version; *text gets the
 * element named elem, NULL when the store has none (404, 501, no such element). */
static enum kerr lock_get(struct s3 *s, const struct ostore_obj *obj, const char *sub,
                          const char *elem, char **text, struct kerr_info *err)
{
    struct shttp_resp r;
    char *ev = NULL;
    char *q = NULL;
    struct curl_slist *h = NULL;
    *text = NULL;
    enum kerr rc = obj->version_id ? shttp_escape(obj->version_id, 0, &ev, err) : KERR_OK;
    if (rc == KERR_OK) {
        q = buf_dupf(1024, "%s%s%s", sub, ev ? "&versionId=" : "", ev ? ev : "");
        rc = q ? s3_headers(s, 0, 0, &h, err) : kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : s3_do(s, "GET", obj->key, q, h, NULL, 0, &r, err);
    if (rc == KERR_OK) {
        if (r.status == 200 &&
            snapxml_find(buf_str(&r.body), r.body.len, elem, text, NULL) != KERR_OK) {
            *text = NULL;
        }
        shttp_resp_release(&r);
    }
    curl_slist_free_all(h);
    free(q);
    free(ev);
    return rc;
}

/* Whether obj's version is under a retention that has not ended or a legal hold. */
static bool locked(struct s3 *s, const struct ostore_obj *obj, char *why, size_t n)
{
    char *until = NULL;
    char *hold = NULL;
    struct timespec ts;
    bool res = false;
    if (lock_get(s, obj, "retention=", "RetainUntilDate", &until, NULL) == KERR_OK && until &&
        ktime_parse(until, &ts, NULL) == KERR_OK &&
        (int64_t)ts.tv_sec + S3_LOCK_LEEWAY_S >= (int64_t)time(NULL)) {
        snprintf(why, n, "retained until %s", until);
        res = true;
    }
    if (!res && lock_get(s, obj, "legal-hold=", "Status", &hold, NULL) == KERR_OK && hold &&
        strcmp(hold, "ON") == 0) {
        snprintf(why, n, "under legal hold");
        res = true;
    }
    free(until);
    free(hold);
    return res;
}

enum kerr s3_retain_until(struct s3 *s, const struct ostore_obj *obj, int64_t *until,
                          struct kerr_info *err)
{
    char *text = NULL;
    struct timespec ts;
    *until = 0;
    enum kerr rc = lock_get(s, obj, "retention=", "RetainUntilDate", &text, err);
    if (rc == KERR_OK && text && ktime_parse(text, &ts, NULL) == KERR_OK) {
        *until = (int64_t)ts.tv_sec;
    }
    free(text);
    return rc;
}

/* ASCII case-insensitive substring test. */
static bool has_words(const char *s, const char *words)
{
    size_t n = strlen(words);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && (s[i] | 0x20) == (words[i] | 0x20)) {
            i++;
        }
        if (i == n) {
            return true;
        }
    }
    return false;
}

enum kerr s3_delete_refused(struct s3 *s, const struct ostore_obj *obj, struct kerr_info *err)
{
    char why[160];
    if (err && has_words(err->msg, "object lock")) {
        return KERR_FORBIDDEN; /* AWS "protected by object lock", Ceph "forbidden by object lock" */
    }
    if (locked(s, obj, why, sizeof why)) {
        return kerr_set(err, KERR_FORBIDDEN, "S3 DeleteObject %s: %s", obj->key, why);
    }
    /* the message is built into err: the refusal's text must be copied out first */
    char refusal[sizeof err->msg];
    snprintf(refusal, sizeof refusal, "%s", err ? err->msg : "");
    return kerr_set(err, KERR_UNAUTHORIZED,
                    "S3 DeleteObject %s: access denied and the object is not locked "
                    "(missing s3:DeleteObject / s3:DeleteObjectVersion permission?): %s",
                    obj->key, refusal);
}

enum kerr s3_exclude(struct ostore *base, const struct ostore_obj *obj, struct kerr_info *err)
{
    static const char body[] = "<Tagging><TagSet><Tag><Key>x-etcd-snapshot-exclude</Key>"
                               "<Value>true</Value></Tag></TagSet></Tagging>";
    struct s3 *s = (struct s3 *)base;
    struct shttp_resp r;
    struct curl_slist *h = NULL;
    char *ev = NULL;
    char *q = NULL;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned ml = 0;
    char *b64 = NULL;
    enum kerr rc = obj->version_id ? shttp_escape(obj->version_id, 0, &ev, err) : KERR_OK;
    q = rc ? NULL : buf_dupf(1024, "tagging=%s%s", ev ? "&versionId=" : "", ev ? ev : "");
    rc = q ? s3_headers(s, 0, 0, &h, err) : kerr_set(err, KERR_NOMEM, NULL);
    /* PutObjectTagging requires Content-MD5 (or a flexible checksum). */
    if (rc == KERR_OK && (EVP_Digest(body, sizeof body - 1, md, &ml, EVP_md5(), NULL) != 1 ||
                          crypto_b64_encode(md, ml, &b64, NULL, err) != KERR_OK)) {
        rc = kerr_set(err, KERR_INTERNAL, "MD5 of the tagging body failed");
    }
    char *line = b64 ? buf_dupf(128, "Content-MD5: %s", b64) : NULL;
    if (rc == KERR_OK && (line == NULL || curl_slist_append(h, line) == NULL)) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : s3_do(s, "PUT", obj->key, q, h, body, sizeof body - 1, &r, err);
    if (rc == KERR_OK) {
        rc = r.status == 200 ? KERR_OK : s3_status_err("PutObjectTagging", obj->key, &r, err);
        shttp_resp_release(&r);
    }
    if (rc == KERR_OK) {
        /* The delete marker: a plain DeleteObject, allowed under Object Lock. */
        struct ostore_obj current = { .key = obj->key };
        rc = base->ops->del(base, &current, err);
    }
    curl_slist_free_all(h);
    free(line);
    free(b64);
    free(q);
    free(ev);
    return rc;
}

/* GetObjectLockConfiguration: *enabled, and the default retention (seconds, mode). */
static enum kerr lock_config(struct s3 *s, bool *enabled, int64_t *period, char mode[16],
                             struct kerr_info *err)
{
    struct shttp_resp r;
    char *v = NULL;
    *enabled = false;
    *period = 0;
    snprintf(mode, 16, "GOVERNANCE");
    enum kerr rc = s3_do(s, "GET", "", "object-lock=", NULL, NULL, 0, &r, err);
    if (rc != KERR_OK) {
        return rc;
    }
    const char *xml = buf_str(&r.body);
    if (r.status == 200) {
        *enabled = snapxml_find(xml, r.body.len, "ObjectLockEnabled", &v, NULL) == KERR_OK &&
                   strcmp(v, "Enabled") == 0;
        free(v);
        v = NULL;
        if (snapxml_find(xml, r.body.len, "Days", &v, NULL) == KERR_OK) {
            *period = strtoll(v, NULL, 10) * 86400;
        } else if (snapxml_find(xml, r.body.len, "Years", &v, NULL) == KERR_OK) {
            *period = strtoll(v, NULL, 10) * 365 * 86400;
        }
        free(v);
        v = NULL;
        if (snapxml_find(xml, r.body.len, "Mode", &v, NULL) == KERR_OK) {
            snprintf(mode, 16, "%s", v);
        }
        free(v);
    } else if (r.status != 404 && r.status != 400 && r.status != 501) {
        rc = s3_status_err("GetObjectLockConfiguration", s->bucket, &r, err);
    }
    shttp_resp_release(&r);
    return rc;
}

enum kerr s3_extend(struct ostore *base, const struct ostore_obj *obj, int64_t period,
                    int64_t *until, struct kerr_info *err)
{
    struct s3 *s = (struct s3 *)base;
    bool enabled = false;
    int64_t def = 0;
    int64_t cur = 0;
    char mode[16];
    char *cur_mode = NULL;
    char date[KTIME_LEN + 1];
    *until = 0;
    enum kerr rc = lock_config(s, &enabled, &def, mode, err);
    if (rc == KERR_OK && !enabled) {
        return kerr_set(err, KERR_UNSUPPORTED, "bucket %s has no Object Lock", s->bucket);
    }
    period = period > 0 ? period : def;
    if (rc == KERR_OK && period <= 0) {
        return kerr_set(err, KERR_INVAL,
                        "bucket %s has no default retention: give --retention-days", s->bucket);
    }
    rc = rc ? rc : s3_retain_until(s, obj, &cur, err);
    if (rc == KERR_OK && lock_get(s, obj, "retention=", "Mode", &cur_mode, err) == KERR_OK &&
        cur_mode) {
        snprintf(mode, sizeof mode, "%s", cur_mode); /* a retention keeps its mode */
    }
    free(cur_mode);
    int64_t want = (int64_t)time(NULL) + period;
    if (rc != KERR_OK || cur >= want) {
        *until = cur; /* never shortened */
        return rc;
    }
    if (ktime_format((time_t)want, date) != KERR_OK) {
        return kerr_set(err, KERR_INVAL, "retention date out of range");
    }
    char *body = buf_dupf(512,
                          "<Retention xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Mode>%s"
                          "</Mode><RetainUntilDate>%s</RetainUntilDate></Retention>",
                          mode, date);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned ml = 0;
    char *b64 = NULL;
    char *ev = NULL;
    char *q = NULL;
    char *line = NULL;
    struct curl_slist *h = NULL;
    struct shttp_resp r;
    rc = body ? KERR_OK : kerr_set(err, KERR_NOMEM, NULL);
    if (rc == KERR_OK && (EVP_Digest(body, strlen(body), md, &ml, EVP_md5(), NULL) != 1 ||
                          crypto_b64_encode(md, ml, &b64, NULL, err) != KERR_OK)) {
        rc = kerr_set(err, KERR_INTERNAL, "MD5 of the retention body failed");
    }
    rc = (rc == KERR_OK && obj->version_id) ? shttp_escape(obj->version_id, 0, &ev, err) : rc;
    if (rc == KERR_OK) {
        q = buf_dupf(1024, "retention=%s%s", ev ? "&versionId=" : "", ev ? ev : "");
        line = buf_dupf(128, "Content-MD5: %s", b64);
        rc = q && line ? s3_headers(s, 0, 0, &h, err) : kerr_set(err, KERR_NOMEM, NULL);
    }
    if (rc == KERR_OK && curl_slist_append(h, line) == NULL) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
    }
    rc = rc ? rc : s3_do(s, "PUT", obj->key, q, h, body, strlen(body), &r, err);
    if (rc == KERR_OK) {
        rc = r.status == 200 ? KERR_OK : s3_status_err("PutObjectRetention", obj->key, &r, err);
        shttp_resp_release(&r);
    }
    *until = rc == KERR_OK ? want : cur;
    curl_slist_free_all(h);
    free(line);
    free(q);
    free(ev);
    free(b64);
    free(body);
    return rc;
}
