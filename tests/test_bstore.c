/* bstore: the store identity and the overlap of prefixes as etcd-backup-restore sees them. */
#include <criterion/criterion.h>

#include "common/bstore.h"

static void claim(struct bstore_claim *c, const char *provider, const char *container,
                  const char *endpoint, const char *prefix)
{
    struct kerr_info err = { 0 };

    cr_assert_eq(bstore_claim_init(c, provider, container, endpoint, prefix, &err), KERR_OK,
                 "%s %s %s: %s", provider, container, prefix, err.msg);
}

static int overlap(const char *pa, const char *ca, const char *ea, const char *xa, const char *pb,
                   const char *cb, const char *eb, const char *xb)
{
    struct bstore_claim a, b;
    int r;

    claim(&a, pa, ca, ea, xa);
    claim(&b, pb, cb, eb, xb);
    r = bstore_claims_overlap(&a, &b);
    cr_assert_eq(r, bstore_claims_overlap(&b, &a), "overlap is symmetric");
    bstore_claim_release(&a);
    bstore_claim_release(&b);
    return r;
}

Test(bstore, canonical_prefix)
{
    static const char *const cases[][2] = {
        { "", "" },          { "/", "" },       { ".", "" },
        { "//", "" },        { "a", "a" },      { "/a", "a" },
        { "a/", "a" },       { "a//b", "a/b" }, { "/web/a/b", "web/a/b" },
        { "a/./b/", "a/b" }, { "a/b/..", "a" }, { "///x//", "x" },
        { "..", ".." },      { "/..", "" },
    };
    char out[64];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(bstore_prefix(cases[i][0], out, sizeof(out)), KERR_OK);
        cr_assert_str_eq(out, cases[i][1], "\"%s\"", cases[i][0]);
    }
    cr_assert_eq(bstore_prefix("abcdef", out, 3), KERR_TOOBIG);
}

Test(bstore, string_prefixes_overlap_as_the_sidecar_lists)
{
    /* The sidecar lists "p/etcd" and gets "p/etcd-2/..." too. */
    cr_assert(overlap("aws", "b", NULL, "ns/etcd", "S3", "b", NULL, "ns/etcd-2"));
    cr_assert(overlap("aws", "b", NULL, "shoot--etcd-main", "aws", "b", NULL,
                      "shoot--etcd-main-restored"));
    cr_assert(overlap("aws", "b", NULL, "/web/a/b", "aws", "b", NULL, "web/a/b"));
    cr_assert(overlap("aws", "b", NULL, "a/", "aws", "b", NULL, "a"));
    cr_assert(overlap("aws", "b", NULL, "a//b", "aws", "b", NULL, "a/b"));
    cr_assert(overlap("aws", "b", NULL, "a", "aws", "b", NULL, "a/b"));
    cr_assert(overlap("aws", "b", NULL, "/", "aws", "b", NULL, "anything"));
    cr_assert(overlap("aws", "b", NULL, "", "aws", "b", NULL, "x/y"));
    cr_assert(overlap("gcp", "b", NULL, "/x", "GCS", "b", NULL, "x"));
    cr_assert_not(overlap("aws", "b", NULL, "shoot--etcd-main", "aws", "b", NULL,
                          "shoot--restored-etcd-main"));
    cr_assert_not(overlap("aws", "b", NULL, "p/etcd-main", "aws", "b", NULL, "p/etcd-events"));
    cr_assert_not(overlap("aws", "b", NULL, "a", "aws", "c", NULL, "a"));
    cr_assert_not(overlap("aws", "b", NULL, "a", "azure", "b", NULL, "a"));
}

Test(bstore, endpoints_compare_canonical)
{
    cr_assert(overlap("aws", "b", "http://h:9000/", "a", "aws", "b", "http://h:9000", "a"));
    cr_assert(overlap("aws", "b", "HTTP://H:9000", "a", "aws", "b", "http://h:9000", "a"));
    cr_assert(overlap("aws", "b", "https://h:443", "a", "aws", "b", "https://H/", "a"));
    cr_assert(overlap("aws", "b", "http://h:80", "a", "aws", "b", "http://h", "a"));
    cr_assert(overlap("aws", "b", "", "a", "aws", "b", NULL, "a"));
    cr_assert(overlap("dell", "b", "http://ecs:9020", "a", "S3", "b", "http://ecs:9020", "a"));
    cr_assert_not(overlap("aws", "b", "http://h:9000", "a", "aws", "b", "http://h:9001", "a"));
    cr_assert_not(overlap("aws", "b", "https://h:80", "a", "aws", "b", "https://h", "a"));
    cr_assert_not(overlap("aws", "b", "http://h/p1", "a", "aws", "b", "http://h/P1", "a"));
}

Test(bstore, endpoint_forms)
{
    static const char *const cases[][2] = {
        { "", "" },
        { "HTTP://Minio.Local:80/", "http://minio.local" },
        { "https://[::1]:443", "https://[::1]" },
        { "https://[::1]:8443/", "https://[::1]:8443" },
        { "s3.example.com/", "s3.example.com" },
        { "http://h:9000/path/", "http://h:9000/path" },
    };
    char out[128];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(bstore_endpoint(cases[i][0], out, sizeof(out)), KERR_OK);
        cr_assert_str_eq(out, cases[i][1], "\"%s\"", cases[i][0]);
    }
    cr_assert_eq(bstore_endpoint("http://a-long-host", out, 8), KERR_TOOBIG);
}

Test(bstore, local_joins_container_and_prefix)
{
    /* path.Join(home, container, prefix): one directory. */
    cr_assert(overlap("Local", "c", NULL, "/lw/x", "local", "c", NULL, "lw/x"));
    cr_assert(overlap("Local", "c/lw", NULL, "x", "Local", "c", NULL, "lw/x"));
    cr_assert(overlap("Local", "/c", NULL, "x", "Local", "c", NULL, "x"));
    cr_assert_not(overlap("Local", "c", NULL, "x", "Local", "d", NULL, "x"));
    /* a directory walk, not a string listing */
    cr_assert_not(overlap("Local", "c", NULL, "etcd-l", "Local", "c", NULL, "etcd-l2"));
    cr_assert(overlap("Local", "c", NULL, "etcd-l", "Local", "c", NULL, "etcd-l/sub"));
    cr_assert(overlap("Local", "c", NULL, "/", "Local", "c", NULL, "x"), "the home itself");
}

Test(bstore, refused_claims)
{
    struct bstore_claim c;
    struct kerr_info err = { 0 };

    cr_assert_eq(bstore_claim_init(&c, "amazon", "b", NULL, "a", &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "known: aws"), "%s", err.msg);
    cr_assert_eq(bstore_claim_init(&c, "aws", "", NULL, "a", NULL), KERR_INVAL);
    cr_assert_eq(bstore_claim_init(&c, "aws", "b", NULL, NULL, NULL), KERR_INVAL);
    cr_assert_eq(bstore_claim_init(&c, "aws", "b", NULL, "../other/x", &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "leaves its container"), "%s", err.msg);
    cr_assert_eq(bstore_claim_init(&c, "aws", "b", NULL, "a/../..", NULL), KERR_INVAL);
    bstore_claim_release(&c);
}

Test(bstore, object_prefix_per_provider)
{
    char out[64];

    cr_assert_eq(bstore_object_prefix("S3", "/pl/x/", out, sizeof(out)), KERR_OK);
    cr_assert_str_eq(out, "pl/x");
    cr_assert_eq(bstore_object_prefix("Local", "/ld/x", out, sizeof(out)), KERR_OK);
    cr_assert_str_eq(out, "ld/x");
    cr_assert_eq(bstore_object_prefix("GCS", "/g//x", out, sizeof(out)), KERR_OK);
    cr_assert_str_eq(out, "/g/x");
    cr_assert_eq(bstore_object_prefix("ABS", "/", out, sizeof(out)), KERR_OK);
    cr_assert_str_eq(out, "");
    cr_assert_eq(bstore_object_prefix("S3", "", out, sizeof(out)), KERR_OK);
    cr_assert_str_eq(out, "");
}

Test(bstore, families_and_keys)
{
    char key[BSTORE_KEY_MAX];

    cr_assert_str_eq(bstore_family("OCS"), "S3");
    cr_assert_str_eq(bstore_family("ABS"), "ABS");
    cr_assert_eq(bstore_key("aws", "b", "HTTP://H:80/", key, sizeof(key)), KERR_OK);
    cr_assert_str_eq(key, "S3|b|http://h");
    cr_assert_eq(bstore_key("nope", "b", NULL, key, sizeof(key)), KERR_INVAL);
    cr_assert_eq(bstore_key("aws", "b", NULL, key, 4), KERR_TOOBIG);
}
