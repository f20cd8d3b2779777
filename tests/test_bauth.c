/* bauth: the bucket owner's authority at admission, spec.prefixScope Namespace (no API: the
 * buckets have no namespaceSelector, so no namespace is read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/bstore.h"
#include "common/store.h"
#include "webhook/bauth.h"

#define STORE "Object|etcd-bucket|"

static struct store *buckets;

static void setup(void)
{
    cr_assert_eq(store_new(NULL, &buckets, NULL), KERR_OK);
}

static void teardown(void)
{
    store_free(buckets);
}

static void bucket(const char *name, const char *container, const char *scope)
{
    char text[512];
    cJSON *b;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\"},\"spec\":{\"provider\":\"aws\",\"container\":\"%s\""
             "%s%s%s}}",
             name, container, scope ? ",\"prefixScope\":\"" : "", scope ? scope : "",
             scope ? "\"" : "");
    b = cJSON_Parse(text);
    cr_assert_not_null(b);
    cr_assert_eq(store_put(buckets, b, NULL, NULL, NULL), KERR_OK);
}

/* bauth_check's reason for ns claiming prefix in etcd-bucket ("" when it may). */
static const char *why(const char *ns, const char *prefix)
{
    static char out[BAUTH_WHY_MAX];

    cr_assert_eq(bauth_check(buckets, NULL, ns, STORE, prefix, out, sizeof(out), NULL), KERR_OK);
    return out;
}

static const char *owner(const char *prefix)
{
    static char out[256];

    return bstore_prefix_owner(prefix, out, sizeof(out)) ? out : NULL;
}

TestSuite(bauth, .init = setup, .fini = teardown);

Test(bauth, the_owner_of_a_prefix)
{
    cr_assert_str_eq(owner("shoot--proj--name--0c5a-11ef/etcd-main"), "shoot--proj--name");
    cr_assert_str_eq(owner("team/etcd-main"), "team");
    cr_assert_str_eq(owner("team--a1/x/y"), "team");
    cr_assert_str_eq(owner("a--b-/x"), "a");
    cr_assert_str_eq(owner("a---b/x"), "a-");
    cr_assert_null(owner("team"));           /* lists team2/... too */
    cr_assert_null(owner("shoot--p--n--u")); /* no "/": its first segment is open */
    cr_assert_null(owner(""));
    cr_assert_null(owner("--x/y"));
    cr_assert_null(owner("/x"));
    char tiny[4];
    cr_assert_eq(bstore_prefix_owner("longer/x", tiny, sizeof(tiny)), 0);
    cr_assert_str_eq(tiny, "");
}

/* Random prefixes of a small alphabet: two of different owners never overlap as the sidecar
 * lists them (the real overlap, common/bstore), so a namespace's claims are in no other
 * namespace's way. */
Test(bauth, the_partition_never_overlaps_across_namespaces)
{
    static const char alphabet[] = "ab-/";
    char p[400][12], oa[64], ob[64];
    unsigned seed = 29;
    long pairs = 0, overlaps = 0;

    for (int i = 0; i < 400; i++) {
        int len = 1 + (int)(rand_r(&seed) % 10);

        for (int j = 0; j < len; j++)
            p[i][j] = alphabet[rand_r(&seed) % 4];
        p[i][len] = '\0';
    }
    for (int i = 0; i < 400; i++)
        for (int j = 0; j < 400; j++) {
            if (!bstore_prefix_owner(p[i], oa, sizeof(oa)) ||
                !bstore_prefix_owner(p[j], ob, sizeof(ob)))
                continue;
            pairs++;
            if (bstore_overlap(STORE, p[i], p[j]) && strcmp(oa, ob) != 0)
                cr_assert_fail("\"%s\" (%s) and \"%s\" (%s) overlap", p[i], oa, p[j], ob);
            overlaps += bstore_overlap(STORE, p[i], p[j]) && i != j;
        }
    cr_assert_gt(overlaps, 0, "the corpus has no overlapping pair: it shows nothing");
    cr_assert_gt(pairs, 1000);
}

Test(bauth, namespace_scope_refuses_another_namespaces_prefix)
{
    bucket("shared", "etcd-bucket", "Namespace");
    cr_assert_str_eq(why("shoot--p--n", "shoot--p--n--0c5a/etcd-main"), "");
    cr_assert_str_eq(why("team", "team/etcd-main"), "");
    cr_assert(strstr(why("evil", "shoot--p--n--0c5a/etcd-main"),
                     "prefix \"shoot--p--n--0c5a/etcd-main\" is not namespace evil's: "
                     "BackupBucket shared, which owns the store (Object|etcd-bucket|), has "
                     "spec.prefixScope Namespace"),
              "%s", why("evil", "shoot--p--n--0c5a/etcd-main"));
    /* the whole container, and a first segment left open, belong to nobody */
    cr_assert_neq(*why("team", ""), '\0');
    cr_assert_neq(*why("team", "team"), '\0');
    cr_assert_neq(*why("team", "t"), '\0');
    /* a namespace whose name has "--" does not own its bare name: that is its parent's */
    cr_assert_neq(*why("shoot--p--n", "shoot--p--n/etcd-main"), '\0');
    cr_assert_str_eq(why("shoot--p", "shoot--p--n/etcd-main"), "");
}

Test(bauth, bucket_scope_and_other_stores_are_unchecked)
{
    bucket("open", "etcd-bucket", "Bucket");
    bucket("other", "another-bucket", "Namespace");
    cr_assert_str_eq(why("evil", "shoot--p--n--0c5a/etcd-main"), "");
    cr_assert_str_eq(why("evil", ""), "");
}

static void bucket_json(const char *text)
{
    cJSON *b = cJSON_Parse(text);

    cr_assert_not_null(b);
    cr_assert_eq(store_put(buckets, b, NULL, NULL, NULL), KERR_OK);
}

/* A bucket whose spec is not understood still owns the container it names (fail closed). */
Test(bauth, a_bucket_not_understood_owns_its_container)
{
    bucket_json("{\"metadata\":{\"name\":\"typo\"},\"spec\":{\"provider\":\"AWS\","
                "\"container\":\"etcd-bucket\",\"prefixScope\":\"Namespace\"}}");
    cr_assert(strstr(why("evil", ""), "BackupBucket typo"), "%s", why("evil", ""));
    cr_assert_str_eq(why("team", "team/etcd-main"), "");
}

Test(bauth, a_selector_that_cannot_be_read_lets_nobody_claim)
{
    bucket_json("{\"metadata\":{\"name\":\"typo\"},\"spec\":{\"provider\":\"AWS\","
                "\"container\":\"etcd-bucket\",\"namespaceSelector\":{\"matchExpressions\":"
                "[{\"key\":\"a\",\"operator\":\"Bogus\"}]}}}");
    cr_assert(strstr(why("team", "team/etcd-main"), "cannot be read"), "%s",
              why("team", "team/etcd-main"));
    cr_assert(strstr(why("team", "team/etcd-main"), "spec.provider \"AWS\""), "%s",
              why("team", "team/etcd-main"));
}

Test(bauth, a_prefix_scope_not_understood_lets_nobody_claim)
{
    bucket("typo", "etcd-bucket", "namespace");
    cr_assert(strstr(why("team", "team/etcd-main"), "neither Bucket nor Namespace"), "%s",
              why("team", "team/etcd-main"));
    bucket("other", "bucket-2", NULL);
    cr_assert(strstr(why("team", "x/y"), "BackupBucket typo"), "%s", why("team", "x/y"));
}

Test(bauth, a_bucket_with_an_invalid_container_owns_that_name)
{
    bucket("slash", "etcd-bucket", NULL); /* valid, no selector: nobody restricted */
    cr_assert_str_eq(why("evil", ""), "");
    bucket_json("{\"metadata\":{\"name\":\"sel\"},\"spec\":{\"provider\":\"nope\","
                "\"container\":\"etcd-bucket\",\"namespaceSelector\":{\"matchLabels\":"
                "{\"a\":[1]}}}}");
    cr_assert(strstr(why("evil", ""), "BackupBucket sel"), "%s", why("evil", ""));
}
