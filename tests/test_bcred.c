/* bcred: an Etcd gets an entry in a BackupBucket only when its backup Secret holds the
 * bucket's credentials (every key of the bucket's Secret, byte for byte; no key that may name
 * another service or identity), its provider is of the bucket's family and its
 * endpointOverride is the bucket's: a tenant's own keys, invented keys at the bucket's
 * endpoint, another storage account at the same domain, an override elsewhere are no evidence. */
#include "common/bcred.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

/* base64 of the values used below */
#define B64_S3RVER "UzNSVkVS"     /* S3RVER */
#define B64_OTHER  "T1RIRVI="     /* OTHER */
#define B64_URL    "aHR0cDovL2E=" /* http://a */
#define B64_URL2   "aHR0cDovL2I=" /* http://b */
#define B64_REGION "ZXUtd2VzdC0x" /* eu-west-1 */

static cJSON *parse(const char *s)
{
    cJSON *j = cJSON_Parse(s);

    cr_assert_not_null(j, "bad JSON: %s", s);
    return j;
}

static cJSON *bucket(const char *provider, const char *override)
{
    char s[512];

    snprintf(
        s, sizeof(s),
        "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"provider\":\"%s\",\"container\":\"c\"%s%s%s}}",
        provider, override ? ",\"endpointOverride\":\"" : "", override ? override : "",
        override ? "\"" : "");
    return parse(s);
}

static cJSON *etcd(const char *provider, const char *override)
{
    char s[512];

    snprintf(s, sizeof(s),
             "{\"metadata\":{\"name\":\"e\",\"namespace\":\"t\"},\"spec\":{\"backup\":{\"store\":"
             "{\"provider\":\"%s\",\"container\":\"c\",\"prefix\":\"p\"%s%s%s}}}}",
             provider, override ? ",\"endpointOverride\":\"" : "", override ? override : "",
             override ? "\"" : "");
    return parse(s);
}

static cJSON *secret(const char *data)
{
    char s[512];

    snprintf(s, sizeof(s), "{\"metadata\":{\"name\":\"s\"},\"data\":{%s}}", data);
    return parse(s);
}

#define BUCKET_DATA                                                        \
    "\"accessKeyID\":\"" B64_S3RVER "\",\"secretAccessKey\":\"" B64_S3RVER \
    "\",\"endpoint\":\"" B64_URL "\""

/* why for the given objects (all deleted); "" when the Etcd's Secret holds the bucket's. */
static const char *judge(cJSON *b, const char *bdata, cJSON *e, const char *edata)
{
    static char why[768];
    struct kerr_info err;
    cJSON *bs = secret(bdata), *es = secret(edata);

    cr_assert_eq(bcred_holds(b, bs, e, es, why, sizeof(why), &err), KERR_OK);
    cJSON_Delete(b);
    cJSON_Delete(e);
    cJSON_Delete(bs);
    cJSON_Delete(es);
    return why;
}

Test(bcred, the_bucket_secret_copied_holds)
{
    cr_assert_str_empty(judge(bucket("aws", NULL), BUCKET_DATA, etcd("aws", NULL), BUCKET_DATA));
    /* S3 spellings of one family; Gardener's bucketName and region added */
    cr_assert_str_empty(judge(bucket("aws", NULL), BUCKET_DATA, etcd("s3", NULL),
                              BUCKET_DATA ",\"bucketName\":\"" B64_OTHER
                                          "\",\"region\":\"" B64_REGION "\""));
    /* one base64 spelling of the same bytes is as good as another (line breaks) */
    cr_assert_str_empty(judge(bucket("aws", NULL), "\"k\":\"" B64_S3RVER "\"", etcd("aws", NULL),
                              "\"k\":\"UzNS\\nVkVS\""));
    /* the endpoint moved from the Secret to endpointOverride, as the sidecar asks: one service */
    cr_assert_str_empty(
        judge(bucket("aws", NULL), BUCKET_DATA, etcd("aws", "http://a"), BUCKET_DATA));
    cr_assert_str_empty(
        judge(bucket("aws", "http://a"), BUCKET_DATA, etcd("aws", NULL), BUCKET_DATA));
    cr_assert_str_empty(judge(bucket("gcp", "https://g"), "\"k\":\"" B64_S3RVER "\"",
                              etcd("GCS", "https://g"), "\"k\":\"" B64_S3RVER "\""));
}

Test(bcred, own_or_invented_keys_are_no_evidence)
{
    const char *why = judge(bucket("aws", NULL), BUCKET_DATA, etcd("aws", NULL),
                            "\"accessKeyID\":\"" B64_OTHER "\",\"secretAccessKey\":\"" B64_OTHER
                            "\",\"endpoint\":\"" B64_URL "\"");

    cr_assert(strstr(why, "key \"accessKeyID\" differs"), "%s", why);
    cr_assert(strstr(why, "no BackupEntry"), "%s", why);
    cr_assert_not_null(strstr(why, "BackupBucket b"), "%s", why);
    /* the bucket's key id, a secret of its own invention */
    why = judge(bucket("aws", NULL), BUCKET_DATA, etcd("aws", NULL),
                "\"accessKeyID\":\"" B64_S3RVER "\",\"secretAccessKey\":\"" B64_OTHER
                "\",\"endpoint\":\"" B64_URL "\"");
    cr_assert(strstr(why, "\"secretAccessKey\" differs"), "%s", why);
}

Test(bcred, a_missing_key_is_no_evidence)
{
    /* no endpoint: the sidecar goes to AWS, not to the bucket's service */
    const char *why =
        judge(bucket("aws", NULL), BUCKET_DATA, etcd("aws", NULL),
              "\"accessKeyID\":\"" B64_S3RVER "\",\"secretAccessKey\":\"" B64_S3RVER "\"");

    cr_assert(strstr(why, "\"endpoint\" is missing"), "%s", why);
}

Test(bcred, an_extra_key_that_may_redirect_is_no_evidence)
{
    const char *why =
        judge(bucket("ABS", NULL),
              "\"storageAccount\":\"" B64_S3RVER "\",\"storageKey\":\"" B64_S3RVER "\"",
              etcd("ABS", NULL),
              "\"storageAccount\":\"" B64_S3RVER "\",\"storageKey\":\"" B64_S3RVER
              "\",\"domain\":\"" B64_URL2 "\"");

    cr_assert(strstr(why, "key \"domain\""), "%s", why);
    /* region only for the S3 family (a Swift region is another cluster) */
    why = judge(bucket("Swift", NULL), "\"k\":\"" B64_S3RVER "\"", etcd("Swift", NULL),
                "\"k\":\"" B64_S3RVER "\",\"region\":\"" B64_REGION "\"");
    cr_assert(strstr(why, "key \"region\""), "%s", why);
}

Test(bcred, another_family_or_override_is_no_evidence)
{
    const char *why = judge(bucket("aws", NULL), BUCKET_DATA, etcd("ABS", NULL), BUCKET_DATA);

    cr_assert(strstr(why, "provider family"), "%s", why);
    why = judge(bucket("aws", NULL), BUCKET_DATA, etcd("awss", NULL), BUCKET_DATA);
    cr_assert(strstr(why, "provider family"), "unknown provider: %s", why);
    why = judge(bucket("aws", NULL), BUCKET_DATA, etcd("aws", "http://tenant"), BUCKET_DATA);
    cr_assert(strstr(why, "endpointOverride"), "%s", why);
    why = judge(bucket("aws", "http://x"), BUCKET_DATA, etcd("aws", NULL), BUCKET_DATA);
    cr_assert(strstr(why, "endpointOverride"), "%s", why);
    /* the deletions use the bucket's override; a sidecar of v0.41 the Secret's endpoint */
    why = judge(bucket("aws", "http://x"), BUCKET_DATA, etcd("aws", "http://x"), BUCKET_DATA);
    cr_assert(strstr(why, "endpointOverride"), "%s", why);
    /* no endpoint in the Secret: the sidecar's override is all, and it is not the bucket's */
    why = judge(bucket("aws", NULL), "\"k\":\"" B64_S3RVER "\"", etcd("aws", "http://t"),
                "\"k\":\"" B64_S3RVER "\"");
    cr_assert(strstr(why, "endpointOverride"), "%s", why);
    why = judge(bucket("gcp", NULL), "\"k\":\"" B64_S3RVER "\"", etcd("gcp", "https://t"),
                "\"k\":\"" B64_S3RVER "\"");
    cr_assert(strstr(why, "endpointOverride"), "%s", why);
}

Test(bcred, bad_or_empty_data_is_no_evidence)
{
    const char *why = judge(bucket("aws", NULL), BUCKET_DATA, etcd("aws", NULL),
                            "\"accessKeyID\":\"%%%\",\"secretAccessKey\":\"" B64_S3RVER
                            "\",\"endpoint\":\"" B64_URL "\"");

    cr_assert(strstr(why, "\"accessKeyID\" is missing"), "no base64: %s", why);
    why = judge(bucket("aws", NULL), "", etcd("aws", NULL), "");
    cr_assert(strstr(why, "has no data"), "%s", why);
    why = judge(bucket("aws", NULL), BUCKET_DATA, etcd("aws", NULL), "\"x\":1");
    cr_assert_str_not_empty(why);
}
