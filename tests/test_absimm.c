/* absimm: the ABS extension in place against a scripted Blob service (mockapi): the
 * requests it sends (Set Blob Immutability Policy's headers, an RFC 1123 date, the mode
 * kept), what it never sends (a shorter date), and how answers map to errors. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "controller/snapshot/providers/abs.h"
#include "tests/support/mockapi.h"

#define DAY 86400

static struct mockapi *m;
static struct ostore *s;
static char creds[] = "/tmp/absimm-creds.XXXXXX";

static void setup(void)
{
    struct kerr_info err = { 0 };
    int fd = mkstemp(creds);
    cr_assert(fd >= 0);
    static const char json[] = "{\"storageAccount\":\"acct\",\"storageKey\":\"a2V5\"}";
    cr_assert(write(fd, json, sizeof json - 1) == (ssize_t)(sizeof json - 1));
    close(fd);
    setenv("AZURE_APPLICATION_CREDENTIALS_JSON", creds, 1);
    unsetenv("AZURE_APPLICATION_CREDENTIALS");
    cr_assert(mockapi_new(&m, &err) == KERR_OK, "%s", err.msg);
    cr_assert(abs_open("cont", mockapi_url(m), &s, &err) == KERR_OK, "%s", err.msg);
}

static void teardown(void)
{
    ostore_free(s);
    mockapi_free(m);
    unlink(creds);
}

TestSuite(absimm, .init = setup, .fini = teardown);

/* Get Container Properties with or without version-level immutability. */
static void container(bool versioned)
{
    struct mockapi_spec c = { .method = "HEAD",
                              .target = "/cont?restype=container",
                              .headers =
                                  versioned
                                      ? "x-ms-immutable-storage-with-versioning-enabled: true"
                                      : "x-ms-immutable-storage-with-versioning-enabled: false" };
    cr_assert(mockapi_add(m, &c) >= 0);
}

/* Get Blob Properties of "snap" with a policy until then (0: none) in mode. */
static void blob(time_t until, const char *mode)
{
    static char h[256];
    char date[64];
    struct tm tm;
    gmtime_r(&until, &tm);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    snprintf(h, sizeof h,
             "x-ms-immutability-policy-until-date: %s\nx-ms-immutability-policy-mode: %s", date,
             mode);
    struct mockapi_spec b = { .method = "HEAD",
                              .target = "/cont/snap?!comp",
                              .headers = until ? h : NULL };
    cr_assert(mockapi_add(m, &b) >= 0);
}

static const struct mockapi_req *policy_put(void)
{
    for (size_t i = 0; i < mockapi_request_count(m); i++) {
        const struct mockapi_req *r = mockapi_request(m, i);
        if (strcmp(r->method, "PUT") == 0) {
            return r;
        }
    }
    return NULL;
}

static enum kerr extend(int64_t period, int64_t *until, struct kerr_info *err)
{
    char key[] = "snap";
    struct ostore_obj o = { .key = key };
    return s->ops->extend(s, &o, period, until, err);
}

Test(absimm, a_locked_policy_is_extended_and_stays_locked)
{
    struct kerr_info err = { 0 };
    int64_t until = 0;
    container(true);
    blob(time(NULL) + DAY, "locked");
    mockapi_expect(m, "PUT", "/cont/snap?comp=immutabilityPolicies", 200, NULL);
    int64_t want = (int64_t)time(NULL) + 2 * DAY;
    cr_assert_eq(extend(2 * DAY, &until, &err), KERR_OK, "%s", err.msg);
    const struct mockapi_req *r = policy_put();
    cr_assert_not_null(r);
    cr_assert_str_eq(mockapi_req_header(r, "x-ms-immutability-policy-mode"), "Locked");
    const char *date = mockapi_req_header(r, "x-ms-immutability-policy-until-date");
    cr_assert_not_null(date);
    cr_assert(strstr(date, " GMT") != NULL, "not RFC 1123: %s", date);
    int64_t sent = (int64_t)curl_getdate(date, NULL);
    cr_assert(sent >= want - 5 && sent <= want + 5, "sent %s", date);
    cr_assert_eq(until, sent);
    cr_assert(strcmp(mockapi_req_header(r, "x-ms-version"), "2020-06-12") >= 0);
    cr_assert_not_null(mockapi_req_header(r, "Authorization"));
    cr_assert_eq(mockapi_unexpected(m), 0);
}

Test(absimm, never_shortened)
{
    struct kerr_info err = { 0 };
    int64_t until = 0;
    time_t cur = time(NULL) + 5 * DAY;
    container(true);
    blob(cur, "locked");
    cr_assert_eq(extend(2 * DAY, &until, &err), KERR_OK, "%s", err.msg);
    cr_assert_null(policy_put(), "a shorter date was sent");
    cr_assert_eq(until, (int64_t)cur);
}

Test(absimm, unlocked_stays_unlocked_unless_asked_to_lock)
{
    struct kerr_info err = { 0 };
    int64_t until = 0;
    container(true);
    blob(0, NULL);
    mockapi_expect(m, "PUT", "/cont/snap?comp=immutabilityPolicies", 200, NULL);
    cr_assert_eq(extend(DAY, &until, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(mockapi_req_header(policy_put(), "x-ms-immutability-policy-mode"), "Unlocked");
}

Test(absimm, lock_keeps_a_later_date)
{
    struct kerr_info err = { 0 };
    int64_t until = 0;
    time_t cur = time(NULL) + 5 * DAY;
    s->extend_lock = true;
    container(true);
    blob(cur, "unlocked");
    mockapi_expect(m, "PUT", "/cont/snap?comp=immutabilityPolicies", 200, NULL);
    cr_assert_eq(extend(DAY, &until, &err), KERR_OK, "%s", err.msg);
    const struct mockapi_req *r = policy_put();
    cr_assert_str_eq(mockapi_req_header(r, "x-ms-immutability-policy-mode"), "Locked");
    cr_assert_eq(
        (int64_t)curl_getdate(mockapi_req_header(r, "x-ms-immutability-policy-until-date"), NULL),
        (int64_t)cur);
}

Test(absimm, a_plain_container_is_unsupported)
{
    struct kerr_info err = { 0 };
    int64_t until = 0;
    container(false);
    cr_assert_eq(extend(DAY, &until, &err), KERR_UNSUPPORTED);
    cr_assert(strstr(err.msg, "version-level immutability") != NULL, "%s", err.msg);
    cr_assert_null(policy_put());
}

Test(absimm, the_period_must_be_given)
{
    struct kerr_info err = { 0 };
    int64_t until = 0;
    container(true);
    cr_assert_eq(extend(0, &until, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "--retention-days") != NULL, "%s", err.msg);
}

Test(absimm, the_services_refusal_is_the_immutability_refusal)
{
    struct kerr_info err = { 0 };
    int64_t until = 0;
    time_t cur = time(NULL) + DAY;
    container(true);
    blob(cur, "locked");
    struct mockapi_spec refuse = {
        .method = "PUT",
        .target = "/cont/snap?comp=immutabilityPolicies",
        .status = 409,
        .headers = "x-ms-error-code: BlobImmutableDueToPolicy",
        .body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>BlobImmutableDueToPolicy"
                "</Code><Message>immutable</Message></Error>"
    };
    mockapi_add(m, &refuse);
    cr_assert_eq(extend(2 * DAY, &until, &err), KERR_FORBIDDEN);
    cr_assert(strstr(err.msg, "Set Blob Immutability Policy") != NULL, "%s", err.msg);
    cr_assert_eq(until, (int64_t)cur);
}

Test(absimm, a_permission_error_is_not_immutability)
{
    struct kerr_info err = { 0 };
    int64_t until = 0;
    container(true);
    blob(0, NULL);
    mockapi_expect(m, "PUT", "/cont/snap?comp=immutabilityPolicies", 403,
                   "<Error><Code>AuthorizationPermissionMismatch</Code></Error>");
    cr_assert_eq(extend(DAY, &until, &err), KERR_UNAUTHORIZED);
}
