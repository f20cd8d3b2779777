/* pclaim: the records of a store's claim Lease, read as the next admission reads them. */
#include <string.h>

#include <criterion/criterion.h>

#include "common/pclaim.h"

static const char REC[] =
    "[{\"namespace\":\"a\",\"name\":\"etcd\",\"prefix\":\"race-1\",\"at\":1000},"
    "{\"namespace\":\"c\",\"name\":\"old\",\"prefix\":\"team\",\"at\":10},"
    "{\"namespace\":\"d\",\"name\":\"x\",\"prefix\":\"zz\",\"at\":1000}]";

static const char *conflict(const char *ns, const char *name, const char *prefix, time_t now,
                            struct pclaim_other *o)
{
    cJSON *rec = cJSON_Parse(REC);
    struct pclaim c = { ns, name, "Object|bkt|", prefix, NULL, NULL, NULL, NULL, NULL };

    pclaim_conflict(rec, &c, now, o);
    cJSON_Delete(rec);
    return o->what;
}

Test(pclaim, overlap_not_only_equality)
{
    struct pclaim_other o;

    cr_expect_str_eq(conflict("b", "etcd", "race-1", 1001, &o),
                     "the prefix \"race-1\" of Etcd a/etcd, admitted at the same time");
    cr_expect_str_eq(o.ns, "a");
    cr_expect_neq(*conflict("b", "etcd", "race-1-b", 1001, &o), '\0', "a string prefix of it");
    cr_expect_neq(*conflict("b", "etcd", "race", 1001, &o), '\0', "containing it");
    cr_expect_neq(*conflict("b", "etcd", "", 1001, &o), '\0', "the whole container");
    cr_expect_str_eq(conflict("b", "etcd", "race-2", 1001, &o), "");
}

Test(pclaim, own_and_expired_records_do_not_count)
{
    struct pclaim_other o;

    cr_expect_str_eq(conflict("a", "etcd", "race-1", 1001, &o), "", "its own record");
    cr_expect_str_eq(conflict("b", "x", "team/a", 1001, &o), "", "recorded long ago");
    cr_expect_neq(*conflict("b", "x", "team/a", 10 + PCLAIM_TTL_S, &o), '\0', "within the TTL");
    cr_expect_str_eq(conflict("b", "etcd", "race-1", 1000 + PCLAIM_TTL_S + 1, &o), "");
}

Test(pclaim, lease_name_per_store)
{
    char a[64], b[64];

    pclaim_lease_name("Object|bkt|", a, sizeof(a));
    pclaim_lease_name("Object|bkt2|", b, sizeof(b));
    cr_expect_eq(strncmp(a, PCLAIM_LEASE_PREFIX, strlen(PCLAIM_LEASE_PREFIX)), 0);
    cr_expect_eq(strlen(a), strlen(PCLAIM_LEASE_PREFIX) + 16);
    cr_expect_str_neq(a, b);
}

Test(pclaim, pending_records_per_namespace)
{
    cJSON *rec = cJSON_Parse(REC);

    cr_expect_eq(pclaim_pending(rec, "a", 1001), 1);
    cr_expect_eq(pclaim_pending(rec, "c", 1001), 0, "recorded long ago");
    cr_expect_eq(pclaim_pending(rec, "c", 11), 1);
    cr_expect_eq(pclaim_pending(rec, "b", 1001), 0);
    cJSON_Delete(rec);
}

/* An EtcdRestore's target, recorded at its admission, counts while its copy runs (past
 * PCLAIM_TTL_S) for every owner but the Etcd the restore creates. */
Test(pclaim, a_restore_target_claims_until_its_etcd_does)
{
    cJSON *rec = cJSON_Parse("[{\"kind\":\"EtcdRestore\",\"namespace\":\"t\",\"name\":\"r\","
                             "\"etcd\":\"restored\",\"prefix\":\"t/restored\",\"at\":1000}]");
    time_t later = 1000 + 10 * PCLAIM_TTL_S;
    struct pclaim other = {
        "t", "other", "Object|bkt|", "t/restored", NULL, NULL, NULL, NULL, NULL
    };
    struct pclaim target = { "t",  "restored", "Object|bkt|", "t/restored", NULL,
                             NULL, NULL,       NULL,          NULL };
    struct pclaim elsewhere = { "u",  "restored", "Object|bkt|", "t/restored-2", NULL, NULL,
                                NULL, NULL,       NULL };
    struct pclaim restore2 = { "t", "r2", "Object|bkt|", "t", PCLAIM_KIND_RESTORE,
                               "x", NULL, NULL,          NULL };
    struct pclaim_other o;

    pclaim_conflict(rec, &other, later, &o);
    cr_expect_str_eq(o.what, "the target prefix \"t/restored\" of EtcdRestore t/r, whose copy "
                             "is in flight or stays there after it failed");
    pclaim_conflict(rec, &elsewhere, later, &o);
    cr_expect_neq(*o.what, '\0', "an overlapping prefix of another namespace's Etcd");
    cr_expect_str_eq(o.ns, "t");
    pclaim_conflict(rec, &restore2, later, &o);
    cr_expect_neq(*o.what, '\0', "another restore onto a containing prefix");
    pclaim_conflict(rec, &target, later, &o);
    cr_expect_str_eq(o.what, "", "the Etcd the restore creates takes the claim over");
    cr_expect_eq(pclaim_pending(rec, "t", later), 1);
    cJSON_Delete(rec);
}

/* An Etcd's record does not stand in the way of a restore of the same name (kinds differ) but
 * does of a restore onto its prefix, unless that restore's target is that Etcd. */
Test(pclaim, kinds_are_owners_apart)
{
    cJSON *rec = cJSON_Parse(REC);
    struct pclaim onto = { "a",   "etcd", "Object|bkt|", "race-1/x", PCLAIM_KIND_RESTORE,
                           "new", NULL,   NULL,          NULL };
    struct pclaim own = { "a",    "r",  "Object|bkt|", "race-1/x", PCLAIM_KIND_RESTORE,
                          "etcd", NULL, NULL,          NULL };
    struct pclaim_other o;

    pclaim_conflict(rec, &onto, 1001, &o);
    cr_expect_neq(*o.what, '\0', "an EtcdRestore named like the Etcd is another owner");
    pclaim_conflict(rec, &own, 1001, &o);
    cr_expect_str_eq(o.what, "");
    cJSON_Delete(rec);
}

/* A namespace's share of the Lease in bytes, as the records are written. */
Test(pclaim, bytes_of_a_namespaces_records)
{
    cJSON *rec = cJSON_Parse(REC);
    struct pclaim c = { "a", "etcd", "Object|bkt|", "race-1", NULL, NULL, NULL, NULL, NULL };
    char *one = cJSON_PrintUnformatted(cJSON_GetArrayItem(rec, 0));
    size_t n = strlen(one) + 1;

    cr_assert_not_null(rec);
    cr_expect_eq(pclaim_ns_bytes(rec, "a", 1001), n);
    cr_expect_eq(pclaim_record_bytes(&c, 1000), n, "the record c is written as");
    cr_expect_eq(pclaim_ns_bytes(rec, "c", 1001), 0, "lapsed");
    cr_expect_eq(pclaim_ns_bytes(rec, "nobody", 1001), 0);
    cJSON_free(one);
    cJSON_Delete(rec);
}

/* The annotations as the API server counts them (keys and values), ours replaced. */
Test(pclaim, annotation_bytes_as_the_api_server_counts)
{
    cJSON *lease = cJSON_Parse("{\"metadata\":{\"annotations\":{\"etcd-warden.io/claims\":"
                               "\"[old]\",\"other\":\"12345\"}}}");
    cJSON *bare = cJSON_Parse("{\"metadata\":{}}");

    cr_assert_not_null(lease);
    cr_expect_eq(pclaim_annotation_bytes(lease, "[]"),
                 strlen(PCLAIM_ANNOTATION) + 2 + strlen("other") + 5);
    cr_expect_eq(pclaim_annotation_bytes(bare, "[x]"), strlen(PCLAIM_ANNOTATION) + 3);
    cr_expect_eq(PCLAIM_ANNOTATIONS_MAX, 262144, "apimachinery's TotalAnnotationSizeLimitB");
    cr_expect_geq(PCLAIM_ANNOTATIONS_MAX / PCLAIM_NS_BYTES, PCLAIM_NS_CLAIMS,
                  "the Lease fills only once as many namespaces as one holds Etcds are full");
    cJSON_Delete(lease);
    cJSON_Delete(bare);
}

/* An EtcdBackup's copy destination, recorded by warden-controller before its copy Job: an Etcd
 * (its own source Etcd included) or a restore target overlapping it is refused while it counts
 * (PCLAIM_TTL_S); the copies of EtcdBackups of the same Etcd in the same namespace share it. */
Test(pclaim, a_copy_destination_is_an_owner)
{
    cJSON *rec = cJSON_Parse("[{\"kind\":\"EtcdBackup\",\"namespace\":\"shoot\",\"name\":\"b\","
                             "\"etcd\":\"main\",\"prefix\":\"copies--x\",\"at\":1000}]");
    struct pclaim etcd = { "other", "x", "Object|bkt|", "copies--x", NULL, NULL, NULL, NULL, NULL };
    struct pclaim source = {
        "shoot", "main", "Object|bkt|", "copies", NULL, NULL, NULL, NULL, NULL
    };
    struct pclaim sibling = { "shoot", "b2", "Object|bkt|", "copies--x", PCLAIM_KIND_BACKUP,
                              "main",  NULL, NULL,          NULL };
    struct pclaim stranger = { "shoot", "b3", "Object|bkt|", "copies--x", PCLAIM_KIND_BACKUP,
                               "other", NULL, NULL,          NULL };
    struct pclaim restore = { "shoot", "r",  "Object|bkt|", "copies--x/r", PCLAIM_KIND_RESTORE,
                              "main",  NULL, NULL,          NULL };
    struct pclaim_other o;

    pclaim_conflict(rec, &etcd, 1001, &o);
    cr_expect_str_eq(o.what, "the destination prefix \"copies--x\" of EtcdBackup shoot/b, whose "
                             "copy is starting");
    cr_expect_str_eq(o.ns, "shoot");
    pclaim_conflict(rec, &source, 1001, &o);
    cr_expect_neq(*o.what, '\0', "the backup's own Etcd onto a containing prefix");
    pclaim_conflict(rec, &sibling, 1001, &o);
    cr_expect_str_eq(o.what, "", "another copy of the same Etcd");
    pclaim_conflict(rec, &stranger, 1001, &o);
    cr_expect_neq(*o.what, '\0', "a copy of another Etcd");
    pclaim_conflict(rec, &restore, 1001, &o);
    cr_expect_neq(*o.what, '\0', "a restore whose target Etcd is named like the source");
    pclaim_conflict(rec, &etcd, 1000 + PCLAIM_TTL_S + 1, &o);
    cr_expect_str_eq(o.what, "", "lapsed: its status.destination is the claim by then");
    cJSON_Delete(rec);
}

/* A restore's record carries the target store resolved at admission and the restore's uid. */
Test(pclaim, a_restore_record_carries_its_admitted_target)
{
    struct pclaim c = { "t",  "r",  "Object|bkt|", "t/r", PCLAIM_KIND_RESTORE,
                        "rr", "S3", "https://e",   "u-1" };
    struct pclaim bare = { "t",  "r",  "Object|bkt|", "t/r", PCLAIM_KIND_RESTORE,
                           "rr", NULL, NULL,          NULL };

    cr_expect_eq(pclaim_record_bytes(&c, 1000),
                 pclaim_record_bytes(&bare, 1000) +
                     strlen(",\"provider\":\"S3\",\"endpointOverride\":\"https://e\","
                            "\"uid\":\"u-1\""));
}

/* An EtcdRestore's source is read, not claimed: its record is in no claim's way, and a source
 * recorded overlapping any claim is recorded all the same. */
Test(pclaim, a_restore_source_conflicts_with_nothing)
{
    cJSON *rec = cJSON_Parse("[{\"kind\":\"EtcdRestoreSource\",\"namespace\":\"t\",\"name\":\"r\","
                             "\"prefix\":\"team\",\"at\":1000}]");
    cJSON *claims = cJSON_Parse(REC);
    struct pclaim etcd = { "u", "e", "Object|bkt|", "team/e", NULL, NULL, NULL, NULL, NULL };
    struct pclaim target = { "u",  "r2", "Object|bkt|", "team", PCLAIM_KIND_RESTORE,
                             "e2", NULL, NULL,          NULL };
    struct pclaim src = { "b",  "r3", "Object|bkt|", "race-1", PCLAIM_KIND_SOURCE,
                          NULL, NULL, NULL,          NULL };
    struct pclaim_other o;

    pclaim_conflict(rec, &etcd, 1001, &o);
    cr_expect_str_eq(o.what, "");
    pclaim_conflict(rec, &target, 1001, &o);
    cr_expect_str_eq(o.what, "");
    pclaim_conflict(claims, &src, 1001, &o);
    cr_expect_str_eq(o.what, "", "a source over another namespace's Etcd: read, not claimed");
    cr_expect_eq(pclaim_pending(rec, "t", 1001), 1, "it counts in its namespace's share");
    cr_expect_eq(pclaim_pending(rec, "t", 1000 + PCLAIM_TTL_S + 1), 0, "and lapses");
    cJSON_Delete(claims);
    cJSON_Delete(rec);
}
