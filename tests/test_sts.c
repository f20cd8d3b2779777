#include "controller/snapshot/providers/sts.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/snapshot/providers/s3.h"
#include "controller/snapshot/providers/s3int.h"

/* The answer as the STS API reference shows it. */
static const char OK_XML[] =
    "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n"
    "  <AssumeRoleWithWebIdentityResult>\n"
    "    <SubjectFromWebIdentityToken>amzn1.account.AF6RHO7KZU5XRVQJGXK6HB56KR2A"
    "</SubjectFromWebIdentityToken>\n"
    "    <Audience>client.5498841531868486423.1548@apps.example.com</Audience>\n"
    "    <AssumedRoleUser>\n"
    "      <Arn>arn:aws:sts::123456789012:assumed-role/FederatedWebIdentityRole/app1</Arn>\n"
    "      <AssumedRoleId>AROACLKWSDQRAOEXAMPLE:app1</AssumedRoleId>\n"
    "    </AssumedRoleUser>\n"
    "    <Credentials>\n"
    "      <SessionToken>AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE</SessionToken>\n"
    "      <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>\n"
    "      <Expiration>2014-10-24T23:00:23Z</Expiration>\n"
    "      <AccessKeyId>ASgeIAIOSFODNN7EXAMPLE</AccessKeyId>\n"
    "    </Credentials>\n"
    "    <SourceIdentity>SourceIdentityValue</SourceIdentity>\n"
    "    <Provider>www.amazon.com</Provider>\n"
    "  </AssumeRoleWithWebIdentityResult>\n"
    "  <ResponseMetadata><RequestId>ad4156e9-bce1-11e2-82e6-6b6efEXAMPLE</RequestId>"
    "</ResponseMetadata>\n"
    "</AssumeRoleWithWebIdentityResponse>\n";

Test(sts, parse_the_reference_answer)
{
    struct sts_creds c;
    struct kerr_info err = { 0 };
    cr_assert_eq(sts_parse(200, OK_XML, strlen(OK_XML), &c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.access_key, "ASgeIAIOSFODNN7EXAMPLE");
    cr_assert_str_eq(c.secret_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY");
    cr_assert_str_eq(c.session_token, "AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE");
    cr_assert_eq(c.expires, 1414191623);
    sts_creds_release(&c);
}

Test(sts, error_answers_and_malformed_ones)
{
    struct sts_creds c;
    struct kerr_info err = { 0 };
    const char *e = "<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error>"
                    "<Type>Sender</Type><Code>InvalidIdentityToken</Code>"
                    "<Message>Couldn't retrieve verification key from your identity provider"
                    "</Message></Error><RequestId>x</RequestId></ErrorResponse>";
    cr_assert_eq(sts_parse(400, e, strlen(e), &c, &err), KERR_UNAUTHORIZED);
    cr_assert(strstr(err.msg, "HTTP 400 InvalidIdentityToken: Couldn't retrieve"), "%s", err.msg);
    cr_assert_null(c.access_key);
    cr_assert_eq(sts_parse(502, "<html>bad gateway</html>", 24, &c, &err), KERR_PARSE);
    cr_assert(strstr(err.msg, "HTTP 502"), "%s", err.msg);

    /* each field is required; an Expiration must be a date */
    static const char *const drop[] = { "<SessionToken>", "<SecretAccessKey>", "<Expiration>",
                                        "<AccessKeyId>" };
    for (size_t i = 0; i < 4; i++) {
        char *x = strdup(OK_XML);
        char *p = strstr(x, drop[i]);
        p[1] = 'X'; /* another element name, opening and closing */
        p = strstr(p, drop[i] + 1);
        p[0] = 'X';
        cr_assert_eq(sts_parse(200, x, strlen(x), &c, &err), KERR_PARSE, "%s", drop[i]);
        cr_assert(strstr(err.msg, "STS answer: no "), "%s", err.msg);
        cr_assert_null(c.access_key);
        free(x);
    }
    char *x = strdup(OK_XML);
    memcpy(strstr(x, "2014-10-24T23"), "2014-13-24T23", 13);
    cr_assert_eq(sts_parse(200, x, strlen(x), &c, &err), KERR_PARSE);
    cr_assert(strstr(err.msg, "Expiration"), "%s", err.msg);
    free(x);
    const char *other = "<AssumeRoleResponse><AssumeRoleResult/></AssumeRoleResponse>";
    cr_assert_eq(sts_parse(200, other, strlen(other), &c, &err), KERR_PARSE);
    cr_assert_eq(sts_parse(200, "<a", 2, &c, &err), KERR_PARSE);
}

Test(sts, missing_token_file_names_it)
{
    struct sts_creds c;
    struct kerr_info err = { 0 };
    struct sts_web_identity in = { .role_arn = "arn:aws:iam::1:role/r",
                                   .token_path = "/nonexistent/token",
                                   .region = "eu-west-1" };
    cr_assert_eq(sts_assume_web_identity(&in, &c, &err), KERR_NOTFOUND);
    cr_assert(strstr(err.msg, "/nonexistent/token"), "%s", err.msg);
    cr_assert(strstr(err.msg, "arn:aws:iam::1:role/r"), "%s", err.msg);
}

/* The region goes into the STS host: one that is no DNS label sends nothing anywhere (the
 * token is not even read). */
Test(sts, region_is_a_dns_label)
{
    struct sts_creds c;
    struct kerr_info err = { 0 };
    struct sts_web_identity in = { .role_arn = "arn:aws:iam::1:role/r",
                                   .token_path = "/nonexistent/token",
                                   .region = "evil.example.com/x?" };

    unsetenv("AWS_ENDPOINT_URL_STS");
    cr_assert_eq(sts_assume_web_identity(&in, &c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "not a DNS label"), "%s", err.msg);
}

/* A session token (AWS_SESSION_TOKEN's or STS's) rides on every request, after the
 * caller's headers, which stay untouched. */
Test(s3auth, session_token_header_on_a_copy)
{
    struct s3 s;
    struct kerr_info err = { 0 };
    struct curl_slist *out = NULL;
    memset(&s, 0, sizeof s);
    struct curl_slist *h = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    cr_assert_eq(s3_auth(&s, h, &out, &err), KERR_OK);
    cr_assert_null(out, "no token, no copy");
    char token[] = "FwoGZXIvYXdzEXAMPLE";
    s.creds.session_token = token;
    cr_assert_eq(s3_auth(&s, h, &out, &err), KERR_OK, "%s", err.msg);
    cr_assert_not_null(out);
    cr_assert_str_eq(out->data, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    cr_assert_str_eq(out->next->data, "x-amz-security-token: FwoGZXIvYXdzEXAMPLE");
    cr_assert_null(out->next->next);
    cr_assert_null(h->next);
    curl_slist_free_all(out);
    cr_assert_eq(s3_auth(&s, NULL, &out, &err), KERR_OK);
    cr_assert_str_eq(out->data, "x-amz-security-token: FwoGZXIvYXdzEXAMPLE");
    curl_slist_free_all(out);
    curl_slist_free_all(h);
}

/* Static keys, path style, an endpoint where nothing listens. */
static enum kerr dead_store(struct screds_s3 *c, struct kerr_info *err)
{
    memset(c, 0, sizeof *c);
    c->access_key = strdup("AK");
    c->secret_key = strdup("SK");
    c->region = strdup("us-east-1");
    c->endpoint = strdup("http://127.0.0.1:9");
    c->path_style = true;
    return c->access_key && c->secret_key && c->region && c->endpoint
               ? KERR_OK
               : kerr_set(err, KERR_NOMEM, NULL);
}

/* A 403 that is no Object Lock refusal keeps the store's own words after the explanation
 * (the message is built into the buffer holding them). */
Test(s3auth, permission_refusal_keeps_the_store_message, .timeout = 60)
{
    struct ostore *st = NULL;
    struct kerr_info err = { 0 };
    struct ostore_obj obj = { 0 };
    char key[] = "p/Full-1";
    static const char store_said[] =
        "S3 DeleteObject p/Full-1: HTTP 403 AccessDenied: Access Denied";
    cr_assert_eq(s3_open_with("bkt", NULL, dead_store, &st, &err), KERR_OK, "%s", err.msg);
    obj.key = key;
    snprintf(err.msg, sizeof err.msg, "%s", store_said);
    cr_assert_eq(s3_delete_refused((struct s3 *)st, &obj, &err), KERR_UNAUTHORIZED);
    cr_assert(strstr(err.msg, "DeleteObjectVersion permission?): "), "%s", err.msg);
    const char *tail = err.msg + strlen(err.msg) - strlen(store_said);
    cr_assert_str_eq(tail, store_said, "%s", err.msg);
    ostore_free(st);
}
