/*
 * Tests of controller/core/claims (claims_find_in): what a refusal says of the claim in the
 * way, to whom, and which EtcdBackups claim anything. The randomized sequences over the same
 * rules are test_claims_random.c.
 */
#include <criterion/criterion.h>

#include "common/bstore.h"
#include "controller/core/claims.h"

/* A tenant's status (an EtcdBackup's, an EtcdRestore's error) names another namespace's claim
 * as nothing but that; the operator's (no viewer) names it. */
Test(claims, reason_shown_to_its_namespace_only)
{
    cJSON *etcds = cJSON_Parse("[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"main\"},"
                               "\"spec\":{\"backup\":{\"store\":{\"provider\":\"S3\","
                               "\"container\":\"bkt\",\"prefix\":\"shoot--main\"}}}}]");
    struct bstore_claim c;
    struct claims_skip tenant = { .viewer_ns = "other" }, own = { .viewer_ns = "shoot" };
    char why[CLAIMS_WHY_MAX];

    cr_assert_eq(bstore_claim_init(&c, "S3", "bkt", NULL, "shoot--main/x", NULL), KERR_OK);
    claims_find_in(etcds, NULL, NULL, &c, &tenant, why);
    cr_expect_str_eq(why, "a prefix claimed from another namespace");
    claims_find_in(etcds, NULL, NULL, &c, &own, why);
    cr_expect_str_eq(why, "the prefix \"shoot--main\" of Etcd shoot/main");
    claims_find_in(etcds, NULL, NULL, &c, NULL, why);
    cr_expect_str_eq(why, "the prefix \"shoot--main\" of Etcd shoot/main");
    bstore_claim_release(&c);
    cJSON_Delete(etcds);
}

/* An EtcdBackup claims its destination once its copy is written (status.destination): a failed
 * one for an Etcd that does not exist, with prefix ".", keeps nobody out of the bucket. */
Test(claims, unwritten_backup_claims_nothing)
{
    cJSON *backups = cJSON_Parse(
        "[{\"metadata\":{\"namespace\":\"t\",\"name\":\"ghost\"},\"spec\":{\"etcdName\":\"none\","
        "\"destination\":{\"provider\":\"S3\",\"container\":\"bkt\",\"prefix\":\".\"}},"
        "\"status\":{\"phase\":\"Failed\"}},"
        "{\"metadata\":{\"namespace\":\"t\",\"name\":\"done\"},\"spec\":{\"etcdName\":\"e\","
        "\"destination\":{\"provider\":\"S3\",\"container\":\"bkt\",\"prefix\":\"copies\"}},"
        "\"status\":{\"destination\":{\"provider\":\"S3\",\"container\":\"bkt\","
        "\"prefix\":\"copies\"}}}]");
    struct bstore_claim c;
    char why[CLAIMS_WHY_MAX];

    cr_assert_eq(bstore_claim_init(&c, "S3", "bkt", NULL, "shoot--main", NULL), KERR_OK);
    claims_find_in(NULL, NULL, backups, &c, NULL, why);
    cr_expect_str_eq(why, "", "an unwritten backup's \".\" claims the whole bucket");
    bstore_claim_release(&c);
    cr_assert_eq(bstore_claim_init(&c, "S3", "bkt", NULL, "copies-2", NULL), KERR_OK);
    claims_find_in(NULL, NULL, backups, &c, NULL, why);
    cr_expect_str_eq(why, "the prefix \"copies\" of the copies of EtcdBackup t/done");
    bstore_claim_release(&c);
    cJSON_Delete(backups);
}
