/*
 * s3sign - AWS Signature Version 4 (header form, service "s3") for the requests libcurl's
 * own signer (CURLOPT_AWS_SIGV4) gets wrong.
 *
 * libcurl before 8.10.0 sorts the canonical headers as whole "name:value" lines. Where one
 * header's name is another's followed by '-' (x-amz-copy-source and
 * x-amz-copy-source-range on UploadPartCopy; the SSE-C ...-customer-key and
 * ...-customer-key-MD5) ':' sorts after '-', so its canonical request and SignedHeaders
 * list the longer name first, while SigV4 (AWS, radosgw) sorts by name: the store answers
 * 403 SignatureDoesNotMatch. s3.c sends every request through s3sign_perform, which signs
 * such a request here whatever the libcurl.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_S3SIGN_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_S3SIGN_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/kerr.h"
#include "controller/snapshot/providers/screds.h"
#include "controller/snapshot/providers/shttp.h"

/* Whether h's headers (BORROWED) sorted as whole lowercased lines come in another order
 * than sorted by name: libcurl's signer before 8.10.0 would sign them wrongly. */
bool s3sign_misordered(const struct curl_slist *h);

struct s3sign_req {
    const char *method;     /* BORROWED */
    const char *url;        /* BORROWED; path and query already percent-encoded */
    const char *region;     /* BORROWED */
    const char *access_key; /* BORROWED */
    const char *secret_key; /* BORROWED */
    int64_t now;            /* Unix seconds: x-amz-date and the credential scope */
};

/*
 * *out OWNS a copy of h (BORROWED) with x-amz-date and Authorization appended. Signs the
 * Host curl sends (host, and the port when not the scheme's default) and every header of
 * h (names lowercased, values trimmed, sequential spaces as one); the payload hash is h's
 * x-amz-content-sha256, else the SHA-256 of an empty body. The query's parameters are
 * sorted by name, each kept as encoded.
 */
enum kerr s3sign_v4(const struct s3sign_req *rq, const struct curl_slist *h,
                    struct curl_slist **out, struct kerr_info *err);

/*
 * shttp_perform of an S3 request on http (whose handle has libcurl's SigV4 for
 * creds->region on), rq (BORROWED; its sign hook is set here) signed at every attempt by
 * s3sign_v4 with creds (BORROWED) when s3sign_misordered(rq->headers), else by libcurl.
 * libcurl's signer is off for such a request and back on afterwards: left on, libcurl 7.88
 * sends a PUT that already carries an Authorization header with Content-Length: 0 (as a
 * first pass of a multi-pass authentication), without its body.
 */
enum kerr s3sign_perform(struct shttp *http, struct shttp_req *rq, const struct screds_s3 *creds,
                         struct shttp_resp *resp, struct kerr_info *err);

#endif
