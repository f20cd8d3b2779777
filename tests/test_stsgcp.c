/* stsgcp: the external_account file's fields and refusals, and the answers of Google's STS
 * token exchange and IAM Credentials generateAccessToken. */
#include "controller/snapshot/providers/stsgcp.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "controller/snapshot/providers/gcsauth.h"

static enum kerr parse(const char *text, struct stsgcp *x, struct kerr_info *err)
{
    cJSON *root = cJSON_ParseWithLength(text, strlen(text));
    cr_assert_not_null(root, "%s", text);
    enum kerr rc = stsgcp_parse(root, x, err);
    cJSON_Delete(root);
    return rc;
}

#define BASE                                                                                  \
    "\"type\":\"external_account\",\"audience\":\"//iam.googleapis.com/projects/1/locations/" \
    "global/workloadIdentityPools/p/providers/q\",\"subject_token_type\":"                    \
    "\"urn:ietf:params:oauth:token-type:jwt\",\"token_url\":\"https://sts.googleapis.com/v1/" \
    "token\""

Test(stsgcp, fields_of_a_file_sourced_credential)
{
    struct stsgcp x;
    struct kerr_info err = { 0 };
    cr_assert_eq(parse("{" BASE ",\"credential_source\":{\"file\":\"/var/run/token\"}}", &x, &err),
                 KERR_OK, "%s", err.msg);
    cr_assert_str_eq(x.token_url, "https://sts.googleapis.com/v1/token");
    cr_assert_str_eq(x.file, "/var/run/token");
    cr_assert_null(x.json_field);
    cr_assert_null(x.impersonation_url);
    stsgcp_release(&x);
    cr_assert_eq(parse("{" BASE ",\"service_account_impersonation_url\":\"https://iam/x\","
                       "\"credential_source\":{\"file\":\"/t\",\"format\":{\"type\":\"json\","
                       "\"subject_token_field_name\":\"id_token\"}}}",
                       &x, &err),
                 KERR_OK, "%s", err.msg);
    cr_assert_str_eq(x.json_field, "id_token");
    cr_assert_str_eq(x.impersonation_url, "https://iam/x");
    stsgcp_release(&x);
}

Test(stsgcp, refusals_name_the_field)
{
    static const char *const bad[][2] = {
        { "{" BASE "}", "credential_source is required" },
        { "{" BASE ",\"credential_source\":{\"url\":\"http://x\"}}",
          "credential_source.url is not supported" },
        { "{" BASE ",\"credential_source\":{\"executable\":{}}}",
          "credential_source.executable is not supported" },
        { "{" BASE ",\"credential_source\":{\"file\":\"/t\",\"format\":{\"type\":\"json\"}}}",
          "subject_token_field_name is required" },
        { "{" BASE ",\"credential_source\":{\"file\":\"/t\",\"format\":{\"type\":\"xml\"}}}",
          "format.type xml" },
        { "{\"type\":\"external_account\",\"credential_source\":{\"file\":\"/t\"}}",
          "audience is required" },
    };
    struct stsgcp x;
    struct kerr_info err = { 0 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_neq(parse(bad[i][0], &x, &err), KERR_OK, "%s", bad[i][0]);
        cr_assert(strstr(err.msg, bad[i][1]), "%s: %s", bad[i][1], err.msg);
        cr_assert_null(x.audience);
    }
    /* through gcsauth, which used to refuse the type */
    struct gcsauth a;
    const char *j = "{" BASE ",\"credential_source\":{\"file\":\"/t\"}}";
    cr_assert_eq(gcsauth_parse(j, strlen(j), &a, &err), KERR_OK, "%s", err.msg);
    cr_assert_not_null(a.ext);
    cr_assert_str_eq(a.ext->file, "/t");
    gcsauth_release(&a);
    j = "{\"type\":\"authorized_user\"}";
    cr_assert_eq(gcsauth_parse(j, strlen(j), &a, &err), KERR_UNSUPPORTED);
    cr_assert(strstr(err.msg, "service_account and external_account are"), "%s", err.msg);
}

Test(stsgcp, answers)
{
    char *tok = NULL;
    int64_t exp = 0;
    struct kerr_info err = { 0 };
    const char *ok = "{\"access_token\":\"ya29.federated\",\"issued_token_type\":"
                     "\"urn:ietf:params:oauth:token-type:access_token\",\"token_type\":\"Bearer\","
                     "\"expires_in\":3600}";
    cr_assert_eq(stsgcp_exchange_answer(200, ok, strlen(ok), 1000, &tok, &exp, &err), KERR_OK);
    cr_assert_str_eq(tok, "ya29.federated");
    cr_assert_eq(exp, 4600);
    free(tok);
    const char *no = "{\"error\":\"invalid_grant\",\"error_description\":\"The audience in "
                     "ID Token does not match the expected audience.\"}";
    cr_assert_eq(stsgcp_exchange_answer(400, no, strlen(no), 1000, &tok, &exp, &err),
                 KERR_UNAUTHORIZED);
    cr_assert(strstr(err.msg, "HTTP 400 invalid_grant: The audience"), "%s", err.msg);
    cr_assert_null(tok);
    cr_assert_eq(stsgcp_exchange_answer(200, "{}", 2, 1000, &tok, &exp, &err), KERR_PARSE);
    cr_assert_eq(stsgcp_exchange_answer(502, "<html>", 6, 1000, &tok, &exp, &err),
                 KERR_UNAUTHORIZED);

    const char *iam = "{\"accessToken\":\"ya29.sa\",\"expireTime\":\"2014-10-02T15:01:23Z\"}";
    cr_assert_eq(stsgcp_impersonation_answer(200, iam, strlen(iam), &tok, &exp, &err), KERR_OK);
    cr_assert_str_eq(tok, "ya29.sa");
    cr_assert_eq(exp, 1412262083);
    free(tok);
    const char *denied = "{\"error\":{\"code\":403,\"message\":\"Permission "
                         "'iam.serviceAccounts.getAccessToken' denied\",\"status\":"
                         "\"PERMISSION_DENIED\"}}";
    cr_assert_eq(stsgcp_impersonation_answer(403, denied, strlen(denied), &tok, &exp, &err),
                 KERR_UNAUTHORIZED);
    cr_assert(strstr(err.msg, "PERMISSION_DENIED: Permission"), "%s", err.msg);
    const char *nodate = "{\"accessToken\":\"x\"}";
    cr_assert_eq(stsgcp_impersonation_answer(200, nodate, strlen(nodate), &tok, &exp, &err),
                 KERR_PARSE);
}

/* A malformed credentials file: the parser's reason behind one prefix (the message used to
 * be formatted into the buffer it was read from). */
Test(stsgcp, malformed_file_message_keeps_its_reason)
{
    struct gcsauth a;
    struct kerr_info err = { 0 };
    cr_assert_eq(gcsauth_parse("{\"type\":", 8, &a, &err), KERR_PARSE);
    const char *first = strstr(err.msg, "GCS credentials: ");
    cr_assert_not_null(first, "%s", err.msg);
    cr_assert_null(strstr(first + 1, "GCS credentials"), "%s", err.msg);
    cr_assert_gt(strlen(err.msg), strlen("GCS credentials: ") + 4, "%s", err.msg);
}
