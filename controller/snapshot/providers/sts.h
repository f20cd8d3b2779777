/*
 * sts - AWS STS AssumeRoleWithWebIdentity: temporary S3 credentials for a
 * role, in exchange for the web identity token a file holds (a projected
 * service-account token, or the token Gardener keeps in the store Secret),
 * as the AWS SDK's stscreds.WebIdentityRoleProvider that etcd-backup-restore
 * uses. The request is an unsigned form POST to the STS endpoint
 * (Action, Version 2011-06-15, RoleArn, RoleSessionName, WebIdentityToken);
 * the answer is AssumeRoleWithWebIdentityResponse XML, decoded with expat
 * (snapxml).
 *
 * The endpoint is $AWS_ENDPOINT_URL_STS when set (the SDKs' service-specific
 * endpoint variable), else https://sts.<region>.amazonaws.com.
 *
 * Ownership: struct sts_creds OWNS its strings (sts_creds_release).
 * Thread safety: reentrant; reads the environment and the token file.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_STS_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_STS_H

#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

#define STS_TOKEN_MAX (20000) /* WebIdentityToken's maximum length in the API reference */

struct sts_creds {
    char *access_key;    /* AccessKeyId */
    char *secret_key;    /* SecretAccessKey */
    char *session_token; /* SessionToken */
    int64_t expires;     /* Expiration, Unix seconds */
};

/* What one call needs; every string BORROWED; session_name may be NULL. STS is reached with
 * the system's CAs, as etcd-backup-restore's STS client (trustedCaCert is the store's). */
struct sts_web_identity {
    const char *role_arn;
    const char *token_path;
    const char *session_name; /* NULL: "etcd-warden-<unix seconds>" */
    const char *region;
};

/*
 * Decode an answer body: a 2xx's AssumeRoleWithWebIdentityResponse into *out (all four
 * fields required), or an ErrorResponse (any status) into KERR_UNAUTHORIZED with its Code
 * and Message. KERR_PARSE for anything else. *out is zeroed first and owns nothing on
 * failure.
 */
enum kerr sts_parse(long status, const char *xml, size_t len, struct sts_creds *out,
                    struct kerr_info *err);

/* Read the token file and call AssumeRoleWithWebIdentity. */
enum kerr sts_assume_web_identity(const struct sts_web_identity *in, struct sts_creds *out,
                                  struct kerr_info *err);

void sts_creds_release(struct sts_creds *c);

#endif
