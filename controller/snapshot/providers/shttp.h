/*
 * shttp - one HTTP exchange with an object store on a kept-alive libcurl
 * handle: request body from memory, answer body either into an exact-size
 * caller buffer (ranged GET: the bounded stream path) or into a capped
 * struct buf (XML), the answer headers the providers need, and retries.
 *
 * Retried (up to req->retries more attempts, backoff 100 ms doubling, with
 * jitter; Retry-After honoured up to 5 s): transport failures and HTTP
 * 500, 502, 503 (S3 SlowDown), 504. The provider's signing (CURLOPT_AWS_SIGV4
 * set once on the handle, or an Authorization header computed per request)
 * is redone by each attempt.
 *
 * Ownership: struct shttp OWNS its curl handle (shttp_release); a response
 * OWNS its body (shttp_resp_release). Thread safety: one handle per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_SHTTP_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_SHTTP_H

#include <curl/curl.h>
#include <stdint.h>

#include "common/backoff.h"
#include "common/buf.h"
#include "common/kerr.h"

struct shttp {
    CURL *curl;
    struct backoff bo;
};

/* Re-sign hook: called before every attempt (ABS date + SharedKey). May be NULL. */
typedef enum kerr (*shttp_sign_fn)(void *ctx, struct curl_slist **headers, struct kerr_info *err);

struct shttp_req {
    const char *method;         /* GET HEAD PUT POST PATCH DELETE */
    const char *url;            /* BORROWED */
    struct curl_slist *headers; /* BORROWED (the sign hook may append) */
    const void *body;           /* PUT/POST body, BORROWED; NULL for none */
    size_t body_len;
    void *dst; /* when set: the answer body of a 2xx goes here, exactly dst_len bytes */
    size_t dst_len;
    int retries; /* extra attempts on retryable failures */
    shttp_sign_fn sign;
    void *sign_ctx;
};

struct shttp_resp {
    long status;
    struct buf body;        /* answer body (also of errors), capped at 16 MiB */
    int64_t content_length; /* -1 unknown */
    char etag[96];
    char content_md5[64];
    char last_modified[64];
    char version_id[256]; /* x-amz-version-id */
    char copy_status[32]; /* x-ms-copy-status */
    char copy_id[128];    /* x-ms-copy-id */
    char error_code[64];  /* x-ms-error-code */
    char tag_count[16];   /* x-amz-tagging-count */
    char sse[32];         /* x-amz-server-side-encryption: AES256, aws:kms, aws:kms:dsse */
    char copy_mark[8];    /* x-amz-meta-etcd-warden-copy or x-ms-meta-etcdwardencopy */
    char sha256[65];      /* x-amz-meta-etcd-warden-sha256 or x-ms-meta-etcdwardensha256 */
    char location[1024];  /* Location (GCS resumable upload session URI) */
    char imm_until[40];   /* x-ms-immutability-policy-until-date (RFC 1123) */
    char imm_mode[16];    /* x-ms-immutability-policy-mode: unlocked, locked */
    char imm_vers[8];     /* x-ms-immutable-storage-with-versioning-enabled */
    long retry_after_s;
};

enum kerr shttp_init(struct shttp *h, struct kerr_info *err);
void shttp_release(struct shttp *h);

/*
 * Perform req. KERR_OK whenever an HTTP answer arrived (any status: the caller maps it);
 * KERR_HTTP for a transport failure after the retries, with curl's message. *resp is
 * initialised here and must be released by the caller whatever the result.
 */
enum kerr shttp_perform(struct shttp *h, const struct shttp_req *req, struct shttp_resp *resp,
                        struct kerr_info *err);

void shttp_resp_release(struct shttp_resp *r);

/*
 * POST body (a string, BORROWED) to url with the header "Content-Type: content_type" and,
 * when not NULL, the header line extra after it, with retries extra attempts: as
 * shttp_perform. *resp is initialised here (also on KERR_NOMEM, when the headers cannot be
 * built) and must be released by the caller whatever the result.
 */
enum kerr shttp_post(struct shttp *h, const char *url, const char *content_type, const char *extra,
                     const char *body, int retries, struct shttp_resp *resp, struct kerr_info *err);

/* Percent-encode s for a URL path (keep_slash) or a query value, into *out (OWNS). */
enum kerr shttp_escape(const char *s, int keep_slash, char **out, struct kerr_info *err);

#endif
