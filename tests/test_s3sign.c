/* s3sign: SigV4 against AWS's published S3 example, header names that are prefixes of
 * others sorted by name (where libcurl before 8.10.0 sorts whole lines), the query sorted,
 * the Host as curl sends it. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "controller/snapshot/providers/s3sign.h"

#define AWS_EXAMPLE_NOW 1369353600 /* 20130524T000000Z */
#define EMPTY_SHA256    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static struct curl_slist *list(const char *const *lines)
{
    struct curl_slist *l = NULL;
    for (; *lines; lines++) {
        l = curl_slist_append(l, *lines);
        cr_assert_not_null(l);
    }
    return l;
}

/* The value of the last header called name in l, or NULL. */
static const char *header(const struct curl_slist *l, const char *name)
{
    const char *v = NULL;
    size_t n = strlen(name);
    for (; l; l = l->next) {
        if (strncmp(l->data, name, n) == 0 && l->data[n] == ':') {
            v = l->data + n + 2;
        }
    }
    return v;
}

static char *sign(const char *method, const char *url, const char *const *lines, const char *access,
                  const char *secret, int64_t now)
{
    struct s3sign_req rq = { .method = method,
                             .url = url,
                             .region = "us-east-1",
                             .access_key = access,
                             .secret_key = secret,
                             .now = now };
    struct curl_slist *h = list(lines);
    struct curl_slist *out = NULL;
    struct kerr_info e = { 0 };
    cr_assert_eq(s3sign_v4(&rq, h, &out, &e), KERR_OK, "%s", e.msg);
    const char *a = header(out, "Authorization");
    cr_assert_not_null(a);
    char *r = strdup(a);
    curl_slist_free_all(h);
    curl_slist_free_all(out);
    return r;
}

Test(s3sign, aws_get_object_example)
{
    /* "Example: GET Object" of AWS's "Signature Calculations for the Authorization Header" */
    const char *h[] = { "Range: bytes=0-9", "x-amz-content-sha256: " EMPTY_SHA256, NULL };
    char *a =
        sign("GET", "https://examplebucket.s3.amazonaws.com/test.txt", h, "AKIAIOSFODNN7EXAMPLE",
             "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", AWS_EXAMPLE_NOW);
    cr_expect_str_eq(a,
                     "AWS4-HMAC-SHA256 "
                     "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                     "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                     "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
    free(a);
}

Test(s3sign, upload_part_copy_names_sorted_by_name)
{
    const char *h[] = { "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                        "x-amz-copy-source-range: bytes=0-1048575", "x-amz-copy-source: /b/src",
                        NULL };
    char *a = sign("PUT", "http://127.0.0.1:9000/b/dst?uploadId=2~x&partNumber=1", h, "ak", "sk",
                   AWS_EXAMPLE_NOW);
    cr_expect_not_null(strstr(a, "SignedHeaders=host;x-amz-content-sha256;x-amz-copy-source;"
                                 "x-amz-copy-source-range;x-amz-date, "),
                       "%s", a);
    free(a);
}

Test(s3sign, query_order_and_default_port_do_not_change_the_signature)
{
    const char *h[] = { "x-amz-content-sha256: UNSIGNED-PAYLOAD", NULL };
    char *a = sign("PUT", "http://h:9000/b/k?uploadId=u&partNumber=1", h, "ak", "sk", 1);
    char *b = sign("PUT", "http://h:9000/b/k?partNumber=1&uploadId=u", h, "ak", "sk", 1);
    char *c = sign("PUT", "http://h:80/b/k?partNumber=1&uploadId=u", h, "ak", "sk", 1);
    char *d = sign("PUT", "http://h/b/k?partNumber=1&uploadId=u", h, "ak", "sk", 1);
    cr_expect_str_eq(a, b);
    cr_expect_str_neq(b, c); /* Host: h:9000 vs h */
    cr_expect_str_eq(c, d);
    free(a);
    free(b);
    free(c);
    free(d);
}

Test(s3sign, values_trimmed_names_lowercased)
{
    const char *h1[] = { "X-Amz-Meta-A:   one   two  ", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
                         NULL };
    const char *h2[] = { "x-amz-meta-a: one two", "x-amz-content-sha256: UNSIGNED-PAYLOAD", NULL };
    char *a = sign("PUT", "http://h/b/k", h1, "ak", "sk", 1);
    char *b = sign("PUT", "http://h/b/k", h2, "ak", "sk", 1);
    cr_expect_str_eq(a, b);
    free(a);
    free(b);
}

Test(s3sign, misordered_where_a_name_is_a_prefix)
{
    const char *upc[] = { "x-amz-copy-source: /b/k", "x-amz-copy-source-range: bytes=0-9", NULL };
    const char *ssec[] = { "x-amz-server-side-encryption-customer-key: a",
                           "x-amz-server-side-encryption-customer-key-MD5: b", NULL };
    const char *plain[] = { "x-amz-copy-source: /b/k", "x-amz-metadata-directive: REPLACE",
                            "x-amz-meta-etcd-warden-copy: true", "If-None-Match: *", NULL };
    struct curl_slist *l = list(upc);
    cr_expect(s3sign_misordered(l));
    curl_slist_free_all(l);
    l = list(ssec);
    cr_expect(s3sign_misordered(l));
    curl_slist_free_all(l);
    l = list(plain);
    cr_expect_not(s3sign_misordered(l));
    curl_slist_free_all(l);
}

Test(s3sign, more_headers_than_the_bound)
{
    struct curl_slist *l = NULL;
    char line[64];
    for (int i = 0; i < 40; i++) {
        snprintf(line, sizeof line, "x-amz-meta-h%02d: %d", i, i);
        l = curl_slist_append(l, line);
        cr_assert_not_null(l);
    }
    cr_expect(s3sign_misordered(l)); /* more than it can check: signed here, or refused */
    struct s3sign_req rq = {
        .method = "PUT", .url = "http://h/b/k", .region = "r", .access_key = "a", .secret_key = "s"
    };
    struct curl_slist *out = NULL;
    cr_expect_eq(s3sign_v4(&rq, l, &out, NULL), KERR_TOOBIG);
    cr_expect_null(out);
    curl_slist_free_all(l);
}
