/* bstore: the store identity and the overlap of prefixes as etcd-backup-restore sees them. */
#include <criterion/criterion.h>

#include <string.h>

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
    cr_assert(overlap("aws", "bkt", NULL, "ns/etcd", "S3", "bkt", NULL, "ns/etcd-2"));
    cr_assert(overlap("aws", "bkt", NULL, "shoot--etcd-main", "aws", "bkt", NULL,
                      "shoot--etcd-main-restored"));
    cr_assert(overlap("aws", "bkt", NULL, "/web/a/b", "aws", "bkt", NULL, "web/a/b"));
    cr_assert(overlap("aws", "bkt", NULL, "a/", "aws", "bkt", NULL, "a"));
    cr_assert(overlap("aws", "bkt", NULL, "a//b", "aws", "bkt", NULL, "a/b"));
    cr_assert(overlap("aws", "bkt", NULL, "a", "aws", "bkt", NULL, "a/b"));
    cr_assert(overlap("aws", "bkt", NULL, "/", "aws", "bkt", NULL, "anything"));
    cr_assert(overlap("aws", "bkt", NULL, "", "aws", "bkt", NULL, "x/y"));
    cr_assert(overlap("gcp", "bkt", NULL, "/x", "GCS", "bkt", NULL, "x"));
    cr_assert_not(overlap("aws", "bkt", NULL, "shoot--etcd-main", "aws", "bkt", NULL,
                          "shoot--restored-etcd-main"));
    cr_assert_not(overlap("aws", "bkt", NULL, "p/etcd-main", "aws", "bkt", NULL, "p/etcd-events"));
    cr_assert_not(overlap("aws", "bkt", NULL, "a", "aws", "ckt", NULL, "a"));
    cr_assert(overlap("aws", "bkt", NULL, "a", "azure", "bkt", NULL, "a"),
              "one container, one store");
    cr_assert_not(overlap("aws", "bkt", NULL, "a", "local", "bkt", NULL, "a"));
}

Test(bstore, one_store_whatever_the_endpoint)
{
    /* the sidecar may take the endpoint from the Secret: one container, one store */
    cr_assert(overlap("aws", "bkt", "http://h:9000/", "a", "aws", "bkt", "http://h:9000", "a"));
    cr_assert(overlap("aws", "bkt", "", "a", "aws", "bkt", "https://s3.amazonaws.com", "a"));
    cr_assert(
        overlap("aws", "bkt", NULL, "a", "s3", "bkt", "https://s3.eu-west-1.amazonaws.com", "a"));
    cr_assert(overlap("aws", "bkt", "http://h:9000", "a", "aws", "bkt", "http://h:9001", "a"));
    cr_assert(overlap("aws", "bkt", "https://u:p@h:0443/#f", "a", "S3", "bkt", "https://h.", "a"));
    cr_assert(overlap("gcp", "bkt", "https://storage.googleapis.com/storage/v1/", "a", "gcs", "bkt",
                      NULL, "a"));
    cr_assert(overlap("openstack", "bkt", "http://ignored", "a", "swift", "bkt", NULL, "a"));
    cr_assert(overlap("dell", "bkt", "http://ecs:9020", "a", "S3", "bkt", NULL, "a"));
    cr_assert_not(overlap("aws", "bkt", "http://h", "a", "aws", "ckt", "http://h", "a"));
}

Test(bstore, every_provider_druid_accepts)
{
    /* etcd-druid internal/store/store.go StorageProviderFromInfraProvider (v0.35+) */
    static const char *const names[][2] = {
        { "aws", "S3" },      { "S3", "S3" },           { "s3", "S3" },
        { "stackit", "S3" },  { "azure", "ABS" },       { "ABS", "ABS" },
        { "abs", "ABS" },     { "gcp", "GCS" },         { "GCS", "GCS" },
        { "gcs", "GCS" },     { "openstack", "Swift" }, { "Swift", "Swift" },
        { "swift", "Swift" }, { "alicloud", "OSS" },    { "OSS", "OSS" },
        { "oss", "OSS" },     { "dell", "ECS" },        { "ECS", "ECS" },
        { "ecs", "ECS" },     { "openshift", "OCS" },   { "OCS", "OCS" },
        { "ocs", "OCS" },     { "Local", "Local" },     { "local", "Local" },
    };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        cr_assert_str_eq(bstore_provider_kind(names[i][0]), names[i][1], "%s", names[i][0]);
        cr_assert(strstr(bstore_provider_list(), names[i][0]), "%s listed", names[i][0]);
    }
    cr_assert_null(bstore_provider_kind("awss"));
    cr_assert_null(bstore_provider_kind("Aws"));
    cr_assert_null(bstore_provider_kind("sTACKIT"));
    cr_assert(overlap("aws", "bkt", NULL, "p", "s3", "bkt", NULL, "p"), "a respelling: one claim");
}

Test(bstore, one_container_is_one_store_in_every_object_family)
{
    static const char *const p[] = { "aws",      "gcp",  "azure",     "openstack",
                                     "alicloud", "dell", "openshift", "stackit" };
    struct bstore_claim a, b;
    char legacy[BSTORE_LEGACY_N][BSTORE_KEY_MAX];

    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        for (size_t j = 0; j < sizeof(p) / sizeof(p[0]); j++) {
            cr_assert_eq(bstore_claim_init(&a, p[i], "bkt", NULL, "p/etcd", NULL), KERR_OK);
            cr_assert_eq(bstore_claim_init(&b, p[j], "bkt", "https://x", "/p/etcd", NULL), KERR_OK);
            cr_assert(bstore_claims_overlap(&a, &b), "%s and %s on one bucket", p[i], p[j]);
            bstore_claim_release(&a);
            bstore_claim_release(&b);
        }
    cr_assert_eq(bstore_claim_init(&a, "aws", "bkt", NULL, "bkt/p", NULL), KERR_OK);
    cr_assert_eq(bstore_claim_init(&b, "local", "bkt", NULL, "p", NULL), KERR_OK);
    cr_assert_not(bstore_claims_overlap(&a, &b), "a Local directory is no bucket");
    bstore_claim_release(&a);
    bstore_claim_release(&b);
    cr_assert_eq(bstore_legacy_keys("bkt", legacy), KERR_OK);
    cr_assert_str_eq(legacy[0], "S3|bkt|");
    cr_assert_str_eq(legacy[4], "OSS|bkt|");
}

Test(bstore, unkeyed_overlaps_its_container)
{
    cr_assert(bstore_unkeyed_overlap("Object|b|", "b"));
    cr_assert(bstore_unkeyed_overlap("Local|b|", "b"), "any store");
    cr_assert(bstore_unkeyed_overlap("Object|b|", NULL), "no container: everything");
    cr_assert(bstore_unkeyed_overlap("Object|b|", ""));
    cr_assert(bstore_unkeyed_overlap("Local||", "x"), "a Local store may be any directory");
    cr_assert_not(bstore_unkeyed_overlap("Object|b|", "c"));
    cr_assert_not(bstore_unkeyed_overlap("Object|b|", "bb"));
    cr_assert_not(bstore_unkeyed_overlap("Object|bb|", "b"));
}

Test(bstore, both_s3_spellings_of_a_leading_slash)
{
    char a[64], b[64];

    cr_assert_eq(bstore_object_prefixes("S3", "/p//x/", a, b, sizeof(a)), KERR_OK);
    cr_assert_str_eq(a, "p/x");
    cr_assert_str_eq(b, "/p/x");
    cr_assert_eq(bstore_object_prefixes("OCS", "//p", a, b, sizeof(a)), KERR_OK);
    cr_assert_str_eq(a, "p");
    cr_assert_str_eq(b, "/p");
    cr_assert_eq(bstore_object_prefixes("S3", "p/x", a, b, sizeof(a)), KERR_OK);
    cr_assert_str_eq(a, "p/x");
    cr_assert_str_eq(b, "");
    cr_assert_eq(bstore_object_prefixes("S3", "/", a, b, sizeof(a)), KERR_OK);
    cr_assert_str_eq(a, "");
    cr_assert_str_eq(b, "");
    cr_assert_eq(bstore_object_prefixes("GCS", "/g", a, b, sizeof(a)), KERR_OK);
    cr_assert_str_eq(a, "/g");
    cr_assert_str_eq(b, "");
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

    cr_assert_eq(bstore_claim_init(&c, "amazon", "bkt", NULL, "a", &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "accepted: aws"), "%s", err.msg);
    cr_assert_eq(bstore_claim_init(&c, "awss", "bkt", NULL, "a", &err), KERR_INVAL);
    cr_assert_eq(bstore_claim_init(&c, "aws", "", NULL, "a", NULL), KERR_INVAL);
    cr_assert_eq(bstore_claim_init(&c, "aws", "bkt", NULL, NULL, NULL), KERR_INVAL);
    cr_assert_eq(bstore_claim_init(&c, "aws", "bkt", NULL, "../other/x", &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "leaves its container"), "%s", err.msg);
    cr_assert_eq(bstore_claim_init(&c, "aws", "bkt", NULL, "a/../..", NULL), KERR_INVAL);
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
    cr_assert_eq(bstore_key("aws", "bkt", "HTTP://H:80/", key, sizeof(key)), KERR_OK);
    cr_assert_str_eq(key, "Object|bkt|");
    cr_assert_eq(bstore_key("gcp", "bkt", NULL, key, sizeof(key)), KERR_OK);
    cr_assert_str_eq(key, "Object|bkt|", "one container, any object-store family: one store");
    cr_assert_eq(bstore_key("local", "b", NULL, key, sizeof(key)), KERR_OK);
    cr_assert_str_eq(key, "Local|b|");
    cr_assert_eq(bstore_key("nope", "bkt", NULL, key, sizeof(key)), KERR_INVAL);
    cr_assert_eq(bstore_key("aws", "bkt", NULL, key, 4), KERR_TOOBIG);
}

Test(bstore, prefixes_the_sidecar_cannot_parse)
{
    cr_assert(bstore_prefix_unparsable("prod-v1/etcd"));
    cr_assert(bstore_prefix_unparsable("v1"));
    cr_assert(bstore_prefix_unparsable("p/etcd-v1"));
    cr_assert(bstore_prefix_unparsable("a/v1/b"));
    cr_assert_not(bstore_prefix_unparsable("prod-v2/etcd"), "the last \"v2/\" is the sidecar's");
    cr_assert_not(bstore_prefix_unparsable("p/v12/etcd"));
    cr_assert_not(bstore_prefix_unparsable("p/etcd-v"));
    cr_assert_not(bstore_prefix_unparsable(""));
}

Test(bstore, no_store_only_without_a_provider)
{
    cr_expect(bstore_no_store(NULL));
    cr_expect(!bstore_no_store(""), "an empty provider is etcd-druid's error, not no store");
    cr_expect(!bstore_no_store("aws"));
    cr_expect(!bstore_no_store("awss"));
}

Test(bstore, prefixes_longer_than_an_object_key_are_refused)
{
    char p[BSTORE_PREFIX_MAX + 2];
    struct bstore_claim c;
    struct kerr_info err = { 0 };

    memset(p, 'a', sizeof(p) - 1);
    p[sizeof(p) - 1] = '\0';
    cr_assert_eq(bstore_claim_init(&c, "aws", "bkt", NULL, p, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "prefix of 1025 bytes: at most 1024"), "%s", err.msg);
    p[BSTORE_PREFIX_MAX] = '\0';
    cr_assert_eq(bstore_claim_init(&c, "aws", "bkt", NULL, p, NULL), KERR_OK);
    bstore_claim_release(&c);
}

/* An object store's container is a bucket name (etcd-druid's pattern): "b/t" would address
 * bucket "b", key "t/..." (another tenant's prefix), so it is refused, never a store of its
 * own; a Local store's container is a directory, any path. */
Test(bstore, containers_that_are_no_bucket_names_are_refused)
{
    static const char *bad[] = { "etcd-bucket/team2",
                                 "b",
                                 "ab",
                                 "-bkt",
                                 "bkt-",
                                 ".bkt",
                                 "bkt.",
                                 "b kt",
                                 "bkt/",
                                 "/bkt",
                                 "b%2Ft",
                                 "bkt\n",
                                 "bkt?x",
                                 "bkt#x" };
    static const char *good[] = { "bkt", "etcd-bucket", "a.b_c-d", "A0z" };
    struct bstore_claim c;
    struct kerr_info err = { 0 };
    char key[BSTORE_KEY_MAX], c64[65];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(bstore_claim_init(&c, "aws", bad[i], NULL, "p", &err), KERR_INVAL, "%s",
                     bad[i]);
        cr_assert(strstr(err.msg, "is not a bucket name"), "%s", err.msg);
        cr_assert_eq(bstore_key("S3", bad[i], NULL, key, sizeof(key)), KERR_INVAL, "%s", bad[i]);
        cr_assert_eq(bstore_container_check("gcp", bad[i], NULL), KERR_INVAL, "%s", bad[i]);
    }
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        cr_assert_eq(bstore_container_check("swift", good[i], NULL), KERR_OK, "%s", good[i]);
    memset(c64, 'a', 64);
    c64[64] = '\0';
    cr_assert_eq(bstore_container_check("aws", c64, NULL), KERR_INVAL, "64 bytes");
    c64[63] = '\0';
    cr_assert_eq(bstore_container_check("aws", c64, NULL), KERR_OK, "63 bytes");
    /* Local: a directory, relative or absolute, as docs/warden-snapshot.md says */
    cr_assert_eq(bstore_container_check("Local", "/var/backups/team2", NULL), KERR_OK);
    cr_assert_eq(bstore_claim_init(&c, "local", "c/lw", NULL, "x", NULL), KERR_OK);
    bstore_claim_release(&c);
    cr_assert_eq(bstore_container_check("Local", "", NULL), KERR_INVAL);
}
