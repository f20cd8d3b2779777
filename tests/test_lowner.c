/*
 * common/lowner: the partition of a Local BackupBucket with spec.prefixScope Namespace. A
 * directory below the bucket's is a namespace's part when the path below the bucket's starts
 * with its name (or its name, "--" and a word) followed by "/"; a directory that is not the
 * namespace's part is never granted to it, whatever else grants it, and may not be claimed by
 * it. A partitioned bucket that cannot be placed is in the way of every directory.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/kjson.h"
#include "common/lowner.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"

static const struct k8s_resource RES_NS = { "", "v1", "namespaces", 0 };
static const struct k8s_resource RES_SECRET = { "", "v1", "secrets", 1 };

static struct cfix fx;

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static void create(const struct k8s_resource *res, const char *ns, const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = jsonfix_parse(text);

    OK(k8s_create(fx.c, res, ns, o, NULL, NULL, &err));
    cJSON_Delete(o);
}

static void setup(void)
{
    cfix_start(&fx, NULL);
    create(&RES_NS, NULL,
           "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
           "\"etcd-warden\"}}");
    /* hostPath /var/lib/lb */
    create(&RES_SECRET, "etcd-warden",
           "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"local-bucket\"},"
           "\"data\":{\"hostPath\":\"L3Zhci9saWIvbGI=\"}}");
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(lowner, .init = setup, .fini = teardown, .timeout = 60);

/* A Local bucket of container bkt at /var/lib/lb; scope: its prefixScope (NULL: none); secret:
 * its Secret's name. OWNED by the caller. */
static cJSON *bucket(const char *scope, const char *secret)
{
    char text[512];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"local\"},\"spec\":{\"provider\":\"Local\","
             "\"container\":\"bkt\",\"secretRef\":{\"namespace\":\"etcd-warden\",\"name\":"
             "\"%s\"}%s%s%s}}",
             secret, scope ? ",\"prefixScope\":\"" : "", scope ? scope : "", scope ? "\"" : "");
    return jsonfix_parse(text);
}

Test(lowner, the_part_of_a_namespace_is_named_by_the_path_below_the_bucket)
{
    cr_expect(lowner_in_part("var/lib/lb/bkt/shoot/etcd-a", "var/lib/lb/bkt", "shoot"));
    cr_expect(lowner_in_part("var/lib/lb/bkt/shoot--a1/etcd", "var/lib/lb/bkt", "shoot"));
    cr_expect(
        lowner_in_part("var/lib/lb/bkt/shoot--p--n--uid/etcd", "var/lib/lb/bkt", "shoot--p--n"));
    cr_expect(!lowner_in_part("var/lib/lb/bkt/shoot/etcd-a", "var/lib/lb/bkt", "other"),
              "another namespace's part");
    cr_expect(!lowner_in_part("var/lib/lb/bkt/third/etcd", "var/lib/lb/bkt", "other"),
              "a part of a namespace that has claimed nothing there yet");
    cr_expect(!lowner_in_part("var/lib/lb/bkt/shoot", "var/lib/lb/bkt", "shoot"),
              "no '/' after the first segment: nobody's");
    cr_expect(!lowner_in_part("var/lib/lb/bkt", "var/lib/lb/bkt", "shoot"),
              "the bucket's whole directory: nobody's");
    cr_expect(!lowner_in_part("var/lib/lb", "var/lib/lb/bkt", "shoot"), "a parent: nobody's");
    cr_expect(!lowner_in_part("var/lib/lb/bkt2/shoot/x", "var/lib/lb/bkt", "shoot"),
              "a sibling is not below the bucket");
    cr_expect(lowner_in_part("shoot/x", "", "shoot"), "below the root");
}

Test(lowner, a_partition_outweighs_every_grant)
{
    cr_expect(!lowner_owned(&(struct lowner_found){ .granted = 1, .forbidden = 1 }));
    cr_expect(!lowner_owned(&(struct lowner_found){ .own_etcd = 1, .forbidden = 1 }));
    cr_expect(lowner_owned(&(struct lowner_found){ .granted = 1 }), "control");
}

Test(lowner, a_partitioned_bucket_grants_its_part_only)
{
    struct kerr_info err = { 0 };
    struct lowner o;
    cJSON *b = bucket("Namespace", "local-bucket");

    lowner_init(&o, fx.c, "shoot", "var/lib/lb/bkt/shoot/etcd-a");
    cr_expect_eq(lowner_bucket(&o, b, &err), KERR_EXISTS, "shoot's part, no selector: granted");
    lowner_release(&o);
    lowner_init(&o, fx.c, "other", "var/lib/lb/bkt/shoot/etcd-a");
    cr_expect_eq(lowner_bucket(&o, b, &err), KERR_FORBIDDEN, "shoot's part read by other");
    cr_expect(strstr(err.msg, "not namespace other's") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "namespace shoot") == NULL, "names no other namespace: %s", err.msg);
    lowner_release(&o);
    lowner_init(&o, fx.c, "other", "var/lib/lb/bkt");
    cr_expect_eq(lowner_bucket(&o, b, &err), KERR_FORBIDDEN, "the whole bucket is nobody's");
    lowner_release(&o);
    lowner_init(&o, fx.c, "other", "var/lib/evil/bkt/shoot/etcd-a");
    cr_expect_eq(lowner_bucket(&o, b, &err), KERR_OK, "outside the bucket: neither");
    lowner_release(&o);
    cJSON_Delete(b);
}

Test(lowner, an_unpartitioned_bucket_grants_as_before)
{
    struct kerr_info err = { 0 };
    struct lowner o;
    cJSON *b = bucket(NULL, "local-bucket"), *bb = bucket("Bucket", "local-bucket");
    char why[1024];

    lowner_init(&o, fx.c, "other", "var/lib/lb/bkt/shoot/etcd-a");
    cr_expect_eq(lowner_bucket(&o, b, &err), KERR_EXISTS);
    cr_expect_eq(lowner_bucket(&o, bb, &err), KERR_EXISTS);
    cr_expect_eq(lowner_part(&o, b, why, sizeof(why)), KERR_OK);
    cr_expect_str_empty(why);
    cr_expect_eq(lowner_part(&o, bb, why, sizeof(why)), KERR_OK);
    cr_expect_str_empty(why);
    lowner_release(&o);
    cJSON_Delete(b);
    cJSON_Delete(bb);
}

Test(lowner, a_claim_outside_its_part_is_refused)
{
    struct lowner o;
    cJSON *b = bucket("Namespace", "local-bucket"), *bad = bucket("Namespaces", "local-bucket");
    char why[1024];

    lowner_init(&o, fx.c, "other", "var/lib/lb/bkt/third/etcd");
    cr_assert_eq(lowner_part(&o, b, why, sizeof(why)), KERR_OK);
    cr_expect(strstr(why, "is not namespace other's") != NULL, "%s", why);
    lowner_release(&o);
    lowner_init(&o, fx.c, "other", "var/lib/lb/bkt/other--x/etcd");
    cr_assert_eq(lowner_part(&o, b, why, sizeof(why)), KERR_OK);
    cr_expect_str_empty(why, "its own part (control)");
    cr_assert_eq(lowner_part(&o, bad, why, sizeof(why)), KERR_OK);
    cr_expect(strstr(why, "neither Bucket nor Namespace") != NULL,
              "a prefixScope not understood: nobody's: %s", why);
    lowner_release(&o);
    lowner_init(&o, fx.c, "other", "var/lib");
    cr_assert_eq(lowner_part(&o, b, why, sizeof(why)), KERR_OK);
    cr_expect(*why, "a directory holding the whole bucket is refused");
    lowner_release(&o);
    lowner_init(&o, fx.c, "other", "srv/other/etcd");
    cr_assert_eq(lowner_part(&o, b, why, sizeof(why)), KERR_OK);
    cr_expect_str_empty(why, "apart from the bucket (control)");
    lowner_release(&o);
    cJSON_Delete(b);
    cJSON_Delete(bad);
}

Test(lowner, a_partitioned_bucket_not_placed_is_in_the_way_of_every_directory)
{
    struct kerr_info err = { 0 };
    struct lowner o;
    cJSON *b = bucket("Namespace", "absent"), *plain = bucket(NULL, "absent");
    char why[1024];

    lowner_init(&o, fx.c, "other", "srv/other/etcd");
    cr_assert_eq(lowner_part(&o, b, why, sizeof(why)), KERR_OK);
    cr_expect(strstr(why, "cannot be placed") != NULL, "%s", why);
    cr_expect_eq(lowner_bucket(&o, b, &err), KERR_FORBIDDEN);
    cr_assert_eq(lowner_part(&o, plain, why, sizeof(why)), KERR_OK);
    cr_expect_str_empty(why, "a bucket without a partition claims nothing (control)");
    cr_expect_eq(lowner_bucket(&o, plain, &err), KERR_OK, "and grants nothing");
    lowner_release(&o);
    cJSON_Delete(b);
    cJSON_Delete(plain);
}

Test(lowner, a_claim_on_the_bucket_or_above_is_unmountable_for_a_namespace_in_its_part)
{
    struct lowner o;
    cJSON *b = bucket("Namespace", "local-bucket"), *plain = bucket("Bucket", "local-bucket"),
          *absent = bucket("Namespace", "absent"), *bad = bucket("Namespaces", "local-bucket");
    int yes = -1;

    lowner_init(&o, fx.c, "shoot", "var/lib/lb/bkt/shoot/etcd-b");
    cr_assert_eq(lowner_unmountable(&o, b, "var/lib/lb/bkt", &yes), KERR_OK);
    cr_expect_eq(yes, 1, "the bucket's own directory");
    cr_assert_eq(lowner_unmountable(&o, b, "var", &yes), KERR_OK);
    cr_expect_eq(yes, 1, "a parent of it");
    cr_assert_eq(lowner_unmountable(&o, b, "", &yes), KERR_OK);
    cr_expect_eq(yes, 1, "the root");
    cr_assert_eq(lowner_unmountable(&o, b, "var/lib/lb/bkt/shoot", &yes), KERR_OK);
    cr_expect_eq(yes, 0, "a directory below the bucket's (nobody's part, but mountable)");
    cr_assert_eq(lowner_unmountable(&o, b, "var/lib/lb/bkt/shoot/etcd-b/x", &yes), KERR_OK);
    cr_expect_eq(yes, 0, "a claim inside the candidate's (control)");
    cr_assert_eq(lowner_unmountable(&o, plain, "var/lib/lb/bkt", &yes), KERR_OK);
    cr_expect_eq(yes, 0, "prefixScope Bucket: no partition, the claim stays in the way");
    cr_assert_eq(lowner_unmountable(&o, absent, "var/lib/lb/bkt", &yes), KERR_OK);
    cr_expect_eq(yes, 0, "a bucket not placed tells nothing");
    cr_assert_eq(lowner_unmountable(&o, bad, "var/lib/lb/bkt", &yes), KERR_OK);
    cr_expect_eq(yes, 0, "a prefixScope not understood gives no part");
    lowner_release(&o);
    lowner_init(&o, fx.c, "shoot", "var/lib/lb/bkt/other/etcd-b");
    cr_assert_eq(lowner_unmountable(&o, b, "var/lib/lb/bkt", &yes), KERR_OK);
    cr_expect_eq(yes, 0, "a candidate outside its namespace's part");
    lowner_release(&o);
    lowner_init(&o, fx.c, "shoot", "srv/shoot/etcd");
    cr_assert_eq(lowner_unmountable(&o, b, "var/lib/lb/bkt", &yes), KERR_OK);
    cr_expect_eq(yes, 0, "a candidate outside the bucket");
    lowner_release(&o);
    cJSON_Delete(b);
    cJSON_Delete(plain);
    cJSON_Delete(absent);
    cJSON_Delete(bad);
}

Test(lowner, the_first_bucket_whose_partition_refuses_says_why)
{
    struct lowner o;
    cJSON *list = cJSON_CreateArray();
    char why[1024];

    lowner_init(&o, fx.c, "other", "var/lib/lb/bkt/shoot/copy");
    cr_assert_eq(lowner_part_in(&o, NULL, why, sizeof(why)), KERR_OK);
    cr_expect_str_empty(why, "no buckets: nothing partitions");
    cr_assert_eq(lowner_part_in(&o, list, why, sizeof(why)), KERR_OK);
    cr_expect_str_empty(why, "an empty list: nothing partitions");
    cJSON_AddItemToArray(list, bucket(NULL, "local-bucket"));
    cJSON_AddItemToArray(list, bucket("Bucket", "local-bucket"));
    cr_assert_eq(lowner_part_in(&o, list, why, sizeof(why)), KERR_OK);
    cr_expect_str_empty(why, "no bucket partitioned (control)");
    cJSON_AddItemToArray(list, bucket("Namespace", "local-bucket"));
    cr_assert_eq(lowner_part_in(&o, list, why, sizeof(why)), KERR_OK);
    cr_expect(strstr(why, "\"/var/lib/lb/bkt/shoot/copy\" is not namespace other's"), "%s", why);
    lowner_release(&o);
    lowner_init(&o, fx.c, "shoot", "var/lib/lb/bkt/shoot/copy");
    cr_assert_eq(lowner_part_in(&o, list, why, sizeof(why)), KERR_OK);
    cr_expect_str_empty(why, "its own part (control): %s", why);
    lowner_release(&o);
    cJSON_Delete(list);
}
