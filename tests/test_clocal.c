/*
 * Tests of controller/core/clocal and claims_find for Local stores: a step that deletes or
 * writes places every Local claim on the node with the hostPath read when it runs (from the
 * API server of an in-process kube-sim), and one it cannot place is in its way.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "controller/core/claims.h"
#include "controller/core/clocal.h"
#include "controller/core/etcdspec.h"
#include "tests/support/cfix.h"

static struct cfix fx;

static void create_text(const struct k8s_resource *res, const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = cJSON_Parse(text);

    cr_assert_not_null(o, "%s", text);
    cr_assert_eq(k8s_create(fx.c, res, CFIX_NS, o, NULL, NULL, &err), KERR_OK, "%s", err.msg);
    cJSON_Delete(o);
}

static void setup(void)
{
    cfix_start(&fx, NULL);
    /* /var/lib/lb/bkt */
    create_text(&ETCDSPEC_RES_SECRET,
                "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"lb-bkt\"},"
                "\"data\":{\"hostPath\":\"L3Zhci9saWIvbGIvYmt0\"}}");
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(clocal, .init = setup, .fini = teardown);

Test(clocal, etcds_are_placed_with_their_secrets_hostpath_read_now)
{
    cJSON *items = cJSON_Parse(
        "[{\"metadata\":{\"namespace\":\"" CFIX_NS "\",\"name\":\"b\"},\"spec\":{\"backup\":"
        "{\"store\":{\"provider\":\"Local\",\"container\":\"shoot--a\",\"prefix\":\"etcd\","
        "\"secretRef\":{\"name\":\"lb-bkt\"}}}}},"
        "{\"metadata\":{\"namespace\":\"" CFIX_NS "\",\"name\":\"c\"},\"spec\":{\"backup\":"
        "{\"store\":{\"provider\":\"local\",\"container\":\"bkt\",\"prefix\":\"p\"}}}},"
        "{\"metadata\":{\"namespace\":\"" CFIX_NS "\",\"name\":\"d\"},\"spec\":{\"backup\":"
        "{\"store\":{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"q\","
        "\"secretRef\":{\"name\":\"gone\"}}}}},"
        "{\"metadata\":{\"namespace\":\"" CFIX_NS "\",\"name\":\"e\"},\"spec\":{\"backup\":"
        "{\"store\":{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"q\"}}}}]");
    struct bstore_claim a;
    char why[CLAIMS_WHY_MAX];

    clocal_place(fx.c, items, CLOCAL_ETCD);
    cr_assert_str_eq(kjson_get_str(items, "0." CLOCAL_DIR), "var/lib/lb/bkt/shoot--a/etcd");
    cr_assert_str_eq(kjson_get_str(items, "1." CLOCAL_DIR),
                     "etc/gardener/local-backupbuckets/bkt/p");
    cr_assert(kjson_has(items, "2." CLOCAL_UNKNOWN), "a Secret that cannot be read");
    cr_assert_not(kjson_has(items, "3." CLOCAL_DIR), "an object store is no directory");

    /* a deletion of /var/lib/lb/bkt/shoot--a/etcd (the attack's entry) is in b's way */
    cr_assert_eq(bstore_local_claim_init(&a, "/var/lib/lb", "bkt", "shoot--a/etcd", NULL), KERR_OK);
    cJSON_Delete(cJSON_DetachItemFromArray(items, 2));
    claims_find_in(items, NULL, NULL, &a, &(struct claims_skip){ 0 }, why);
    cr_assert(strstr(why, "Etcd " CFIX_NS "/b"), "%s", why);
    bstore_claim_release(&a);
    /* elsewhere: only the unplaced one is in the way */
    cr_assert_eq(bstore_local_claim_init(&a, "/srv", "bkt", "x", NULL), KERR_OK);
    claims_find_in(items, NULL, NULL, &a, &(struct claims_skip){ 0 }, why);
    cr_assert_str_eq(why, "");
    cJSON_AddTrueToObject(cJSON_GetArrayItem(items, 1), CLOCAL_UNKNOWN);
    cJSON_DeleteItemFromObject(cJSON_GetArrayItem(items, 1), CLOCAL_DIR);
    claims_find_in(items, NULL, NULL, &a, &(struct claims_skip){ 0 }, why);
    cr_assert(strstr(why, "Etcd " CFIX_NS "/c"), "%s", why);
    bstore_claim_release(&a);
    cJSON_Delete(items);
}

Test(clocal, entries_by_their_annotation_or_bucket)
{
    cJSON *items = cJSON_Parse(
        "[{\"metadata\":{\"name\":\"r\",\"annotations\":{\"" BLOCAL_HOSTPATH_ANNOTATION
        "\":\"/var/lib/lb\"}},\"spec\":{\"bucketName\":\"\",\"prefix\":\"copies\",\"store\":"
        "{\"provider\":\"Local\",\"container\":\"bkt\"}}},"
        "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"bucketName\":\"absent\",\"prefix\":\"x\","
        "\"store\":{\"provider\":\"Local\",\"container\":\"bkt\"}}}]");

    clocal_place(fx.c, items, CLOCAL_ENTRY);
    cr_assert_str_eq(kjson_get_str(items, "0." CLOCAL_DIR), "var/lib/lb/bkt/copies");
    cr_assert(kjson_has(items, "1." CLOCAL_UNKNOWN), "its bucket is not there");
    cJSON_Delete(items);
}

/* A written copy is placed where its Job wrote (status.destination.hostPath), whatever its
 * Secret says now; one from before the record by its Secret. */
Test(clocal, copies_by_their_recorded_hostpath)
{
    cJSON *items = cJSON_Parse(
        "[{\"metadata\":{\"namespace\":\"" CFIX_NS "\",\"name\":\"b1\"},\"spec\":{\"destination\":"
        "{\"secretRef\":{\"name\":\"lb-bkt\"}}},\"status\":{\"destination\":{\"provider\":"
        "\"Local\",\"container\":\"shoot--a\",\"prefix\":\"etcd\",\"hostPath\":\"/var/lib/"
        "evil\"}}},"
        "{\"metadata\":{\"namespace\":\"" CFIX_NS "\",\"name\":\"b2\"},\"spec\":{\"destination\":"
        "{\"secretRef\":{\"name\":\"lb-bkt\"}}},\"status\":{\"destination\":{\"provider\":"
        "\"Local\",\"container\":\"shoot--a\",\"prefix\":\"etcd\"}}}]");

    clocal_place(fx.c, items, CLOCAL_BACKUP);
    cr_assert_str_eq(kjson_get_str(items, "0." CLOCAL_DIR), "var/lib/evil/shoot--a/etcd");
    cr_assert_str_eq(kjson_get_str(items, "1." CLOCAL_DIR), "var/lib/lb/bkt/shoot--a/etcd");
    cJSON_Delete(items);
}

/* An EtcdRestore's Local target is placed where its copy Job mounts it: the recorded
 * status.targetHostPath, else the Secret warden-webhook read at admission (target's, template's,
 * source's), never etcd-druid's default by itself. */
Test(clocal, restore_targets_by_their_record_or_secret)
{
#define RS(name, target, rest)                                                                  \
    "{\"metadata\":{\"namespace\":\"" CFIX_NS "\",\"name\":\"" name "\"},\"spec\":{\"target\":" \
    "{\"etcdName\":\"e\",\"store\":" target "}" rest "}"
    cJSON *items = cJSON_Parse("[" RS(
        "r1", "{\"provider\":\"Local\",\"container\":\"shoot--a\",\"prefix\":\"etcd\"}",
        ",\"source\":{\"store\":{\"provider\":\"Local\",\"container\":\"x\",\"prefix\":"
        "\"y\"}}},\"status\":{\"targetHostPath\":\"/var/lib/evil\"") "}," RS("r2",
                                                                             "{\"provider\":"
                                                                             "\"Local\","
                                                                             "\"container\":"
                                                                             "\"shoot--a\","
                                                                             "\"prefix\":\"r2\","
                                                                             "\"secretRef\":{"
                                                                             "\"name\":\"lb-bkt\"}"
                                                                             "}",
                                                                             "") "}," RS("r3",
                                                                                         "{\"provid"
                                                                                         "er\":"
                                                                                         "\"Local\""
                                                                                         ",\"contai"
                                                                                         "ner\":"
                                                                                         "\"shoot--"
                                                                                         "a\","
                                                                                         "\"prefix"
                                                                                         "\":"
                                                                                         "\"r3\"}",
                                                                                         ",\"etcdTe"
                                                                                         "mplate\":"
                                                                                         "{\"backup"
                                                                                         "\":{"
                                                                                         "\"store\""
                                                                                         ":{"
                                                                                         "\"secretR"
                                                                                         "ef\":{"
                                                                                         "\"name\":"
                                                                                         "\"lb-"
                                                                                         "bkt\"}}}"
                                                                                         "}") "}"
                                                                                              "," RS(
                                                                                                  "r4",
                                                                                                  "{\"container\":\"shoot--a\",\"prefix\":\"r4\"}",
                                                                                                  ",\"source\":{\"store\":{\"provider\":\"Local\",\"container\":\"x\",\"prefix\":\"y\","
                                                                                                  "\"secretRef\":{\"name\":\"gone\"}}}") "}," RS("r5",
                                                                                                                                                 "{\"provider\":\"aws\",\"container\":\"shoot--a\",\"prefix\":\"r5\"}",
                                                                                                                                                 "") "}]");
#undef RS
    struct bstore_claim a;
    char why[CLAIMS_WHY_MAX];

    cr_assert_not_null(items);
    clocal_place_restores(fx.c, items, NULL, NULL);
    cr_assert_str_eq(kjson_get_str(items, "0." CLOCAL_DIR), "var/lib/evil/shoot--a/etcd");
    cr_assert_str_eq(kjson_get_str(items, "1." CLOCAL_DIR), "var/lib/lb/bkt/shoot--a/r2");
    cr_assert_str_eq(kjson_get_str(items, "2." CLOCAL_DIR), "var/lib/lb/bkt/shoot--a/r3");
    cr_assert(kjson_has(items, "3." CLOCAL_UNKNOWN), "the source's Secret cannot be read");
    cr_assert_not(kjson_has(items, "4." CLOCAL_DIR), "an object store is no directory");

    /* r1's target is in the way of the directory its Job writes, not of the default one */
    cJSON_Delete(cJSON_DetachItemFromArray(items, 3));
    cr_assert_eq(bstore_local_claim_init(&a, "/var/lib/evil", "shoot--a", "etcd", NULL), KERR_OK);
    claims_find_restores_in(items, NULL, NULL, &a, &(struct claims_skip){ 0 }, why);
    cr_assert(strstr(why, "EtcdRestore " CFIX_NS "/r1"), "%s", why);
    bstore_claim_release(&a);
    cr_assert_eq(
        bstore_local_claim_init(&a, "/etc/gardener/local-backupbuckets", "shoot--a", "etcd", NULL),
        KERR_OK);
    claims_find_restores_in(items, NULL, NULL, &a, &(struct claims_skip){ 0 }, why);
    cr_assert_str_eq(why, "");
    bstore_claim_release(&a);
    cr_assert_eq(bstore_local_claim_init(&a, "/var/lib/lb", "bkt", "shoot--a/r3", NULL), KERR_OK);
    claims_find_restores_in(items, NULL, NULL, &a, &(struct claims_skip){ 0 }, why);
    cr_assert(strstr(why, "EtcdRestore " CFIX_NS "/r3"), "%s", why);
    bstore_claim_release(&a);
    cJSON_Delete(items);
}
