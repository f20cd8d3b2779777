/*
 * stsgcp - Google external-account credentials (workload identity federation) for GCS:
 * GOOGLE_APPLICATION_CREDENTIALS of type external_account, as the Google SDK's
 * externalaccount package (which etcd-backup-restore's storage client uses) takes them.
 * The subject token is read from a file (credential_source.file; format "text", or "json"
 * with subject_token_field_name), at every exchange so a rotated token is picked up, and
 * exchanged at token_url (an RFC 8693 token exchange: grant_type
 * urn:ietf:params:oauth:grant-type:token-exchange, audience, scope, requested_token_type
 * urn:ietf:params:oauth:token-type:access_token, subject_token, subject_token_type) for a
 * Google access token; with service_account_impersonation_url, that token (asked for
 * with the cloud-platform scope) is exchanged for the service account's own through IAM
 * Credentials generateAccessToken ({"scope":[scope],"lifetime":"3600s"}).
 *
 * Fields read: type (external_account), audience, subject_token_type, token_url,
 * credential_source.file and .format; optional service_account_impersonation_url.
 * URL- and executable-sourced credentials are refused naming the field.
 *
 * Ownership: struct stsgcp OWNS its strings (stsgcp_release).
 * Thread safety: reentrant; reads the subject token file.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_STSGCP_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_STSGCP_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"
#include "controller/snapshot/providers/shttp.h"

#define STSGCP_CLOUD_PLATFORM "https://www.googleapis.com/auth/cloud-platform"

struct stsgcp {
    char *audience;
    char *subject_token_type;
    char *token_url;
    char *impersonation_url; /* or NULL */
    char *file;              /* credential_source.file */
    char *json_field;        /* subject_token_field_name of the json format; NULL for text */
};

/* The external_account object root (BORROWED) into *out (zeroed first, released on
 * failure). */
enum kerr stsgcp_parse(const cJSON *root, struct stsgcp *out, struct kerr_info *err);

void stsgcp_release(struct stsgcp *x);

/* A fresh access token for scope through h: *tok OWNS it, *exp is when it expires (Unix
 * seconds). */
enum kerr stsgcp_token(const struct stsgcp *x, struct shttp *h, const char *scope, char **tok,
                       int64_t *exp, struct kerr_info *err);

/* The token exchange's answer {"access_token", "expires_in", ...} (status 200), else its
 * {"error", "error_description"}; now is the time of the call. */
enum kerr stsgcp_exchange_answer(long status, const char *body, size_t len, int64_t now, char **tok,
                                 int64_t *exp, struct kerr_info *err);

/* generateAccessToken's answer {"accessToken", "expireTime"} (status 200), else its
 * {"error": {"code", "message", "status"}}. */
enum kerr stsgcp_impersonation_answer(long status, const char *body, size_t len, char **tok,
                                      int64_t *exp, struct kerr_info *err);

#endif
