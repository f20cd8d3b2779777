#include "controller/snapshot/providers/snapxml.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static const char s3_page[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>bk</Name>"
    "<Prefix>p/</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>"
    "<IsTruncated>true</IsTruncated><NextContinuationToken>tok+/=</NextContinuationToken>"
    "<Contents><Key>p/v2/Full-00000000-00000010-100.gz</Key>"
    "<LastModified>2026-11-23T19:40:20.000Z</LastModified>"
    "<ETag>&quot;5d41402abc4b2a76b9719d911017c592&quot;</ETag><Size>5</Size>"
    "<StorageClass>STANDARD</StorageClass></Contents>"
    "<Contents><Key>p/v2/a&amp;b</Key><LastModified>bad</LastModified>"
    "<ETag>\"0123456789abcdef0123456789abcdef-3\"</ETag><Size>17179869184</Size></Contents>"
    "</ListBucketResult>";

Test(snapxml, s3_list_page)
{
    struct ostore_list l = { 0 };
    struct snapxml_page pg;
    struct kerr_info err = { 0 };
    cr_assert_eq(snapxml_s3_list(s3_page, strlen(s3_page), &l, &pg, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(l.v[0].key, "p/v2/Full-00000000-00000010-100.gz");
    cr_assert_eq(l.v[0].size, 5);
    cr_assert_eq(l.v[0].mtime, 1795462820);
    cr_assert_str_eq(l.v[0].md5, "5d41402abc4b2a76b9719d911017c592");
    cr_assert_str_eq(l.v[1].key, "p/v2/a&b");
    cr_assert_eq(l.v[1].size, 17179869184LL);
    cr_assert_eq(l.v[1].mtime, 0);
    cr_assert_str_eq(l.v[1].md5, "", "a multipart ETag is not an MD5");
    cr_assert_str_eq(l.v[1].etag, "0123456789abcdef0123456789abcdef-3");
    cr_assert(pg.truncated);
    cr_assert_str_eq(pg.next, "tok+/=");
    snapxml_page_release(&pg);
    ostore_list_release(&l);
}

Test(snapxml, s3_list_last_page_and_malformed)
{
    static const char last[] = "<ListBucketResult><IsTruncated>false</IsTruncated>"
                               "</ListBucketResult>";
    static const char *const bad[] = {
        "",
        "not xml",
        "<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>k</Key><Size>1x</Size></Contents></ListBucketResult>",
        "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
        "<Error><Code>AccessDenied</Code></Error>",
        "<ListBucketResult><Contents><Key>k</Key>",
    };
    struct ostore_list l = { 0 };
    struct snapxml_page pg;
    struct kerr_info err = { 0 };
    cr_assert_eq(snapxml_s3_list(last, strlen(last), &l, &pg, &err), KERR_OK);
    cr_assert_eq(l.n, 0);
    cr_assert_not(pg.truncated);
    cr_assert_null(pg.next);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(snapxml_s3_list(bad[i], strlen(bad[i]), &l, &pg, &err), KERR_PARSE,
                     "accepted %s", bad[i]);
        cr_assert_null(pg.next);
    }
    ostore_list_release(&l);
}

Test(snapxml, s3_versions)
{
    static const char v[] =
        "<ListVersionsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<IsTruncated>true</IsTruncated><NextKeyMarker>p/k2</NextKeyMarker>"
        "<NextVersionIdMarker>v9</NextVersionIdMarker>"
        "<DeleteMarker><Key>p/k</Key><VersionId>v3</VersionId><IsLatest>true</IsLatest>"
        "<LastModified>2026-11-23T19:40:20Z</LastModified></DeleteMarker>"
        "<Version><Key>p/k</Key><VersionId>v1</VersionId><IsLatest>false</IsLatest>"
        "<ETag>\"5d41402abc4b2a76b9719d911017c592\"</ETag><Size>5</Size></Version>"
        "</ListVersionsResult>";
    struct ostore_list l = { 0 };
    struct snapxml_page pg;
    cr_assert_eq(snapxml_s3_versions(v, strlen(v), &l, &pg, NULL), KERR_OK);
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(l.v[0].etag, "delete-marker");
    cr_assert_eq(l.v[0].size, -1);
    cr_assert_str_eq(l.v[0].version_id, "v3");
    cr_assert_str_eq(l.v[1].version_id, "v1");
    cr_assert_eq(l.v[1].size, 5);
    cr_assert_str_eq(pg.next, "p/k2");
    cr_assert_str_eq(pg.next_version, "v9");
    snapxml_page_release(&pg);
    ostore_list_release(&l);
    static const char wrong[] = "<ListBucketResult></ListBucketResult>";
    cr_assert_eq(snapxml_s3_versions(wrong, strlen(wrong), &l, &pg, NULL), KERR_PARSE);
}

Test(snapxml, s3_tagging)
{
    static const char yes[] = "<Tagging><TagSet><Tag><Key>a</Key><Value>b</Value></Tag>"
                              "<Tag><Key>x-etcd-snapshot-exclude</Key><Value>true</Value></Tag>"
                              "</TagSet></Tagging>";
    static const char no[] = "<Tagging xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><TagSet>"
                             "<Tag><Key>x-etcd-snapshot-exclude</Key><Value>True</Value></Tag>"
                             "</TagSet></Tagging>";
    static const char empty[] = "<Tagging><TagSet/></Tagging>";
    bool ex = false;
    cr_assert_eq(snapxml_s3_tagging(yes, strlen(yes), &ex, NULL), KERR_OK);
    cr_assert(ex);
    cr_assert_eq(snapxml_s3_tagging(no, strlen(no), &ex, NULL), KERR_OK);
    cr_assert_not(ex, "the value must be exactly \"true\"");
    cr_assert_eq(snapxml_s3_tagging(empty, strlen(empty), &ex, NULL), KERR_OK);
    cr_assert_not(ex);
    cr_assert_eq(snapxml_s3_tagging("<Tags/>", 7, &ex, NULL), KERR_PARSE);
}

Test(snapxml, find_and_error)
{
    static const char init[] = "<InitiateMultipartUploadResult><Bucket>b</Bucket>"
                               "<UploadId>abc-123</UploadId></InitiateMultipartUploadResult>";
    static const char err_doc[] = "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code>"
                                  "<Message>Please reduce\nyour request rate.</Message></Error>";
    char *out = NULL;
    char code[64];
    char msg[256];
    cr_assert_eq(snapxml_find(init, strlen(init), "UploadId", &out, NULL), KERR_OK);
    cr_assert_str_eq(out, "abc-123");
    free(out);
    cr_assert_eq(snapxml_find(init, strlen(init), "ETag", &out, NULL), KERR_NOTFOUND);
    cr_assert_null(out);
    snapxml_error(err_doc, strlen(err_doc), code, sizeof code, msg, sizeof msg);
    cr_assert_str_eq(code, "SlowDown");
    cr_assert_str_eq(msg, "Please reduce");
    snapxml_error("garbage", 7, code, sizeof code, msg, sizeof msg);
    cr_assert_str_eq(code, "");
    snapxml_error(init, strlen(init), code, sizeof code, msg, sizeof msg);
    cr_assert_str_eq(code, "");
}

Test(snapxml, no_entities_no_network)
{
    static const char xxe[] = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY e SYSTEM "
                              "\"file:///etc/passwd\">]><ListBucketResult><Contents><Key>&e;"
                              "</Key><Size>1</Size></Contents></ListBucketResult>";
    struct ostore_list l = { 0 };
    struct snapxml_page pg;
    enum kerr rc = snapxml_s3_list(xxe, strlen(xxe), &l, &pg, NULL);
    if (rc == KERR_OK) {
        cr_assert_eq(l.n, 1);
        cr_assert_null(strstr(l.v[0].key, "root:"), "an external entity was expanded");
        snapxml_page_release(&pg);
    }
    ostore_list_release(&l);
}

static const char abs_page[] =
    "\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"utf-8\"?>"
    "<EnumerationResults ServiceEndpoint=\"http://127.0.0.1:10000/devstoreaccount1\" "
    "ContainerName=\"c\"><Prefix>p/</Prefix><Marker/><Blobs>"
    "<Blob><Name>p/v2/Full-00000000-00000010-100.gz</Name><Properties>"
    "<Last-Modified>Mon, 23 Nov 2026 19:40:20 GMT</Last-Modified><Etag>0x8DC</Etag>"
    "<Content-Length>5</Content-Length><Content-MD5>XUFAKrxLKna5cZ2REBfFkg==</Content-MD5>"
    "<BlobType>BlockBlob</BlobType>"
    "<ImmutabilityPolicyUntilDate>Tue, 24 Nov 2026 19:40:20 GMT</ImmutabilityPolicyUntilDate>"
    "</Properties>"
    "<Tags><TagSet><Tag><Key>x-etcd-snapshot-exclude</Key><Value>true</Value></Tag></TagSet>"
    "</Tags></Blob>"
    "<Blob><Name>p/v2/other</Name><Properties><Content-Length>0</Content-Length>"
    "<Content-MD5/></Properties></Blob>"
    "</Blobs><NextMarker>2!abc</NextMarker></EnumerationResults>";

Test(snapxml, abs_list)
{
    struct ostore_list l = { 0 };
    struct snapxml_page pg;
    struct kerr_info err = { 0 };
    cr_assert_eq(snapxml_abs_list(abs_page, strlen(abs_page), &l, &pg, &err), KERR_OK, "%s",
                 err.msg);
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(l.v[0].key, "p/v2/Full-00000000-00000010-100.gz");
    cr_assert_eq(l.v[0].size, 5);
    cr_assert_eq(l.v[0].mtime, 1795462820);
    cr_assert_str_eq(l.v[0].md5, "5d41402abc4b2a76b9719d911017c592");
    cr_assert(l.v[0].excluded);
    cr_assert_eq(l.v[0].immutable_until, 1795462820 + 86400);
    cr_assert_not(l.v[1].excluded);
    cr_assert_eq(l.v[1].immutable_until, 0);
    cr_assert_str_eq(l.v[1].md5, "");
    cr_assert(pg.truncated);
    cr_assert_str_eq(pg.next, "2!abc");
    snapxml_page_release(&pg);
    ostore_list_release(&l);

    static const char last[] = "<EnumerationResults><Blobs/><NextMarker/></EnumerationResults>";
    cr_assert_eq(snapxml_abs_list(last, strlen(last), &l, &pg, NULL), KERR_OK);
    cr_assert_not(pg.truncated);
    static const char *const bad[] = {
        "<EnumerationResults><Blobs><Blob><Properties><Content-Length>1</Content-Length>"
        "</Properties></Blob></Blobs></EnumerationResults>",
        "<EnumerationResults><Blobs><Blob><Name>n</Name></Blob></Blobs></EnumerationResults>",
        "<EnumerationResults><Blobs><Blob><Name>n</Name><Properties><Content-Length>x"
        "</Content-Length></Properties></Blob></Blobs></EnumerationResults>",
        "<ListBucketResult/>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(snapxml_abs_list(bad[i], strlen(bad[i]), &l, &pg, NULL), KERR_PARSE, "%s",
                     bad[i]);
    }
    ostore_list_release(&l);
}

Test(snapxml, md5_b64)
{
    char hex[33];
    cr_assert_eq(snapxml_md5_b64_to_hex("XUFAKrxLKna5cZ2REBfFkg==", hex), 0);
    cr_assert_str_eq(hex, "5d41402abc4b2a76b9719d911017c592");
    cr_assert_eq(snapxml_md5_b64_to_hex("a2V5", hex), -1);
    cr_assert_eq(snapxml_md5_b64_to_hex("", hex), -1);
    cr_assert_eq(snapxml_md5_b64_to_hex(NULL, hex), -1);
    cr_assert_str_eq(hex, "");
}
