/*
 * s3int - what s3.c and s3up.c share: the S3 store's state, its request
 * plumbing and the upload/copy operations (s3up.c). Not for other modules.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_S3INT_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_S3INT_H

#include <stdbool.h>
#include <stdint.h>

#include "controller/snapshot/ostore.h"
#include "controller/snapshot/providers/screds.h"
#include "controller/snapshot/providers/shttp.h"

#define S3_RETRIES   4
#define S3_MAX_PARTS 10000

struct s3 {
    struct ostore base;
    struct screds_s3 creds;
    struct shttp http;
    char *bucket;
    char *endpoint; /* "<scheme>://<host>[:port][/path]" without a trailing '/' */
    const char *scheme;
    char *host;
    char *sse_key_b64; /* SSE-C key and its MD5, base64; NULL without SSE-C */
    char *sse_key_md5_b64;
    bool kms_seen;        /* an answer said SSE-KMS: its ETags are no MD5s */
    bool web_identity;    /* the keys come from STS (s3auth.c) */
    int64_t creds_expiry; /* when they expire, Unix seconds */
};

/* The request keys: static ones as read, or web identity's first from STS. */
enum kerr s3_auth_init(struct s3 *s, struct kerr_info *err);

/*
 * Before each request: renew web identity's keys when they expire within minutes (a
 * failed renewal is only logged while the current ones are still valid), and, when there
 * is a session token, *out = a copy of h (BORROWED) with x-amz-security-token added
 * (OWNS; curl signs it with the rest); else *out = NULL and h is sent as is.
 */
enum kerr s3_auth(struct s3 *s, struct curl_slist *h, struct curl_slist **out,
                  struct kerr_info *err);

/* URL of key (BORROWED; "" for the bucket) with an already encoded, sorted query
 * (BORROWED, may be NULL). *out OWNS it. */
enum kerr s3_url(const struct s3 *s, const char *key, const char *query, char **out,
                 struct kerr_info *err);

/* The base headers (payload hash) plus SSE-C headers for the object (sse) and for a copy
 * source (copy_source). *out OWNS the list (curl_slist_free_all). */
enum kerr s3_headers(const struct s3 *s, int sse, int copy_source, struct curl_slist **out,
                     struct kerr_info *err);

/* One request, retried as shttp does; *resp must be released when KERR_OK. */
enum kerr s3_do(struct s3 *s, const char *method, const char *key, const char *query,
                struct curl_slist *extra, const void *body, size_t body_len,
                struct shttp_resp *resp, struct kerr_info *err);

/* An unexpected answer as an error: 404 NOTFOUND, 403 FORBIDDEN, 412 EXISTS, 501 or
 * NotImplemented UNSUPPORTED, else HTTP; the message carries the S3 error code. */
enum kerr s3_status_err(const char *what, const char *key, const struct shttp_resp *r,
                        struct kerr_info *err);

/*
 * o->etag from a raw (quoted) ETag, and o->md5 when AWS guarantees it is the content's
 * MD5: 32 hex digits (not multipart) and not encrypted with SSE-C or SSE-KMS (sse true).
 */
void s3_set_etag(struct ostore_obj *o, const char *raw, bool sse);

/* Whether an answer's x-amz-server-side-encryption makes its ETag no MD5 (SSE-KMS). */
bool s3_kms(const struct shttp_resp *r);

/*
 * Extend obj's version's Object Lock retention in place to now + period (seconds; 0: the
 * bucket's default retention), keeping the mode it has (else the bucket default's). Never
 * shortens: a retention already reaching that far is left alone. *until: the retain-until
 * date it has afterwards. KERR_UNSUPPORTED when the bucket has no Object Lock.
 */
enum kerr s3_extend(struct ostore *s, const struct ostore_obj *obj, int64_t period, int64_t *until,
                    struct kerr_info *err);

/* Mark obj excluded as etcd-backup-restore reads the mark on a versioned bucket: tag its
 * version x-etcd-snapshot-exclude=true, then add a delete marker on top. */
enum kerr s3_exclude(struct ostore *s, const struct ostore_obj *obj, struct kerr_info *err);

/*
 * A DeleteObject refused with 403 (err holds its message): KERR_FORBIDDEN when the refusal
 * is Object Lock's (its message names the object lock, or the version has a retention
 * that has not ended or a legal hold), else KERR_UNAUTHORIZED (a permission error).
 */
enum kerr s3_delete_refused(struct s3 *s, const struct ostore_obj *obj, struct kerr_info *err);

/* GetObjectRetention of obj's version: *until its RetainUntilDate (Unix seconds), 0 when
 * it has none (or the store has no Object Lock). */
enum kerr s3_retain_until(struct s3 *s, const struct ostore_obj *obj, int64_t *until,
                          struct kerr_info *err);

enum kerr s3_up_begin(struct ostore *s, const char *key, int64_t size, struct ostore_upload **out,
                      struct kerr_info *err);
enum kerr s3_up_part(struct ostore *s, struct ostore_upload *u, const void *data, size_t len,
                     struct kerr_info *err);
enum kerr s3_up_commit(struct ostore *s, struct ostore_upload *u, struct kerr_info *err);
void s3_up_abort(struct ostore *s, struct ostore_upload *u);
enum kerr s3_copy(struct ostore *s, const struct ostore_obj *src, const char *dst,
                  struct kerr_info *err);

#endif
