/* pmove: the BackupEntry a moved Etcd's earlier prefix gets at admission; bkefree: which
 * stores no bucket owns. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/bentry.h"
#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "controller/core/claims.h"
#include "controller/entries/bkefree.h"
#include "webhook/pmove.h"

static cJSON *etcd(const char *provider, const char *container, const char *prefix, int gen)
{
    char text[1024];
    cJSON *e;

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\",\"uid\":\"u1\","
             "\"generation\":%d,\"creationTimestamp\":\"2026-01-02T03:04:05Z\"},"
             "\"spec\":{\"backup\":{\"store\":{\"provider\":\"%s\",\"container\":\"%s\","
             "\"prefix\":\"%s\"}}}}",
             gen, provider, container, prefix);
    e = cJSON_Parse(text);
    cr_assert_not_null(e);
    return e;
}

Test(pmove, the_earlier_claims_entry)
{
    cJSON *old = etcd("aws", "bkt", "/shoot--etcd-main/", 1), *e = NULL;
    char name[BSTORE_ENTRY_NAME_MAX + 1], ctl[KNAME_SUBDOMAIN_MAX + 1];
    struct bstore_claim c;

    cr_assert_eq(pmove_entry(old, "s3", 1800000000, &e, name, NULL, NULL), KERR_OK);
    /* the name warden-controller gives the same claim: one claim, one name */
    cr_assert_eq(bstore_claim_init(&c, "S3", "bkt", NULL, "shoot--etcd-main", NULL), KERR_OK);
    cr_assert_eq(claims_entry_name(&c, ctl), KERR_OK);
    bstore_claim_release(&c);
    cr_assert_str_eq(name, ctl);
    cr_assert_str_eq(kjson_get_str(e, "metadata.name"), name);
    cr_assert_str_eq(kjson_get_str(e, "kind"), "BackupEntry");
    cr_assert_str_eq(kjson_get_str(e, "spec.bucketName"), "s3");
    cr_assert_str_eq(kjson_get_str(e, "spec.prefix"), "/shoot--etcd-main/");
    cr_assert_str_eq(kjson_get_str(e, "spec.store.provider"), "S3");
    cr_assert_str_eq(kjson_get_str(e, "spec.store.container"), "bkt");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.namespace"), "shoot");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.name"), "etcd-main");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.uid"), "u1");
    /* never created with it: the claim began with the Etcd */
    cr_assert_str_eq(kjson_get_str(e, "spec.claimedAt"), "2026-01-02T03:04:05Z");
    /* nothing shown written: no member seen, no origin */
    cr_assert_not(kjson_has(e, "spec.membersSeenAt"));
    cr_assert_not(kjson_has(e, "spec.origin"));
    cr_assert_not(kjson_has(e, "spec.etcdDeletedAt"));
    cJSON_Delete(e);
    cJSON_Delete(old);
}

Test(pmove, the_claim_handed_out_is_the_entrys)
{
    cJSON *old = etcd("aws", "bkt", "/shoot--etcd-main/", 1), *e = NULL;
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    struct bstore_claim c = { "x", NULL }, other = { "", NULL };

    cr_assert_eq(pmove_entry(old, "s3", 1800000000, &e, name, &c, NULL), KERR_OK);
    cr_assert(bentry_is_claims(e, &c), "the entry is the claim's, as common/bentry reads it");
    cr_assert_eq(bstore_claim_init(&other, "S3", "bkt", NULL, "shoot--etcd-other", NULL), KERR_OK);
    cr_assert_not(bentry_is_claims(e, &other));
    bstore_claim_release(&other);
    bstore_claim_release(&c);
    cJSON_Delete(e);
    cJSON_Delete(old);
    old = etcd("Local", "bkt", "shoot--a/etcd", 1);
    cr_assert_eq(pmove_local_entry(old, "/var/lib/lb", 1800000000, &e, name, &c, NULL), KERR_OK);
    cr_assert_str_eq(c.key, BLOCAL_KEY);
    cr_assert(bentry_is_claims(e, &c), "a Local entry is its directory's");
    bstore_claim_release(&c);
    cJSON_Delete(e);
    cr_assert_eq(pmove_local_entry(old, "relative", 1800000000, &e, name, &c, NULL), KERR_INVAL);
    cr_assert_null(c.prefix, "no claim handed out on an error");
    cJSON_Delete(old);
    old = etcd("awss", "bkt", "a", 1);
    cr_assert_eq(pmove_entry(old, "b", 1800000000, &e, name, &c, NULL), KERR_INVAL);
    cr_assert_null(c.prefix, "no claim handed out on an error");
    cr_assert_null(e);
    cJSON_Delete(old);
}

Test(pmove, a_changed_spec_claims_from_the_move)
{
    cJSON *old = etcd("S3", "bkt", "a", 3), *e = NULL;
    char name[BSTORE_ENTRY_NAME_MAX + 1];

    cr_assert_eq(pmove_entry(old, NULL, 1800000000, &e, name, NULL, NULL), KERR_OK);
    cr_assert_str_eq(kjson_get_str(e, "spec.claimedAt"), "2027-01-15T08:00:00Z");
    cr_assert_str_eq(kjson_get_str(e, "spec.bucketName"), "", "no bucket owns it");
    cJSON_Delete(e);
    cJSON_Delete(old);
}

Test(pmove, nothing_to_keep)
{
    const char *bad[][3] = { { "Local", "bkt", "a" },  { "local", "/tmp", "a" },
                             { "awss", "bkt", "a" },   { "aws", "bkt/x", "a" },
                             { "aws", "bkt", "../a" }, { "", "", "" } };
    char name[BSTORE_ENTRY_NAME_MAX + 1];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *old = etcd(bad[i][0], bad[i][1], bad[i][2], 1), *e = NULL;

        cr_assert_eq(pmove_entry(old, "b", 1800000000, &e, name, NULL, NULL), KERR_INVAL,
                     "%s %s %s", bad[i][0], bad[i][1], bad[i][2]);
        cr_assert_null(e);
        cJSON_Delete(old);
    }
}

Test(pmove, a_local_earlier_directory_is_kept_by_an_entry_of_no_bucket)
{
    cJSON *old = etcd("Local", "bkt", "shoot--a/etcd", 1), *e = NULL, *e2 = NULL;
    char name[BSTORE_ENTRY_NAME_MAX + 1], name2[BSTORE_ENTRY_NAME_MAX + 1];

    cr_assert_eq(pmove_local_entry(old, "/var/lib/lb", 1800000000, &e, name, NULL, NULL), KERR_OK);
    cr_assert_str_eq(kjson_get_str(e, "metadata.name"), name);
    cr_assert_str_eq(kjson_get_str(e, "spec.bucketName"), "", "no bucket: no deletion Job");
    cr_assert_str_eq(kjson_get_str(e, "metadata.annotations[etcd-warden.io/local-host-path]"),
                     "/var/lib/lb", "the directory as the sidecar wrote it");
    cr_assert_str_eq(kjson_get_str(e, "spec.store.provider"), "Local");
    cr_assert_str_eq(kjson_get_str(e, "spec.store.container"), "bkt");
    cr_assert_str_eq(kjson_get_str(e, "spec.prefix"), "shoot--a/etcd");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.namespace"), "shoot");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.name"), "etcd-main");
    cr_assert_not(kjson_has(e, "spec.membersSeenAt"), "nothing shown written");
    /* one directory, one name; another hostPath is another directory, another name */
    cr_assert_eq(pmove_local_entry(old, "/var/lib/lb/", 1800000000, &e2, name2, NULL, NULL),
                 KERR_OK);
    cr_assert_str_eq(name, name2);
    cJSON_Delete(e2);
    cr_assert_eq(pmove_local_entry(old, "/srv", 1800000000, &e2, name2, NULL, NULL), KERR_OK);
    cr_assert_str_neq(name, name2);
    cJSON_Delete(e2);
    cJSON_Delete(e);
    cJSON_Delete(old);
    old = etcd("aws", "bkt", "a", 1);
    cr_assert_eq(pmove_local_entry(old, "/var/lib/lb", 1800000000, &e, name, NULL, NULL),
                 KERR_INVAL, "an object store is pmove_entry's");
    cr_assert_null(e);
    cJSON_Delete(old);
    old = etcd("Local", "bkt", "a", 1);
    cr_assert_eq(pmove_local_entry(old, "relative", 1800000000, &e, name, NULL, NULL), KERR_INVAL,
                 "a hostPath not understood: no directory");
    cJSON_Delete(old);
}

Test(pmove, a_local_directory_is_recorded_when_it_becomes_a_sidecars)
{
    cJSON *a = etcd("Local", "bkt", "shoot/etcd", 1), *b = etcd("Local", "bkt", "shoot/etcd", 2),
          *moved = etcd("Local", "bkt", "shoot/etcd-2", 2), *s3 = etcd("aws", "bkt", "p", 1);
    struct review_req req = { 0 };

    req.op = REVIEW_OP_CREATE;
    req.object = a;
    cr_assert_eq(pmove_records(&req), 1, "a Local Etcd created");
    req.dry_run = 1;
    cr_assert_eq(pmove_records(&req), 0, "a dry run records nothing");
    req.dry_run = 0;
    req.object = s3;
    cr_assert_eq(pmove_records(&req), 0, "an object store: its bucket's or bkefree's entries");
    req.op = REVIEW_OP_UPDATE;
    req.old_object = a;
    req.object = b;
    cr_assert_eq(pmove_records(&req), 0, "an UPDATE that leaves the store as it was");
    req.object = moved;
    cr_assert_eq(pmove_records(&req), 1, "an UPDATE that moves the directory");
    req.op = REVIEW_OP_DELETE;
    cr_assert_eq(pmove_records(&req), 0, "a DELETE");
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(moved);
    cJSON_Delete(s3);
}

Test(pmove, the_recorded_entry_is_the_one_warden_controller_makes)
{
    cJSON *a = etcd("Local", "bkt", "shoot/etcd", 1), *a2 = etcd("Local", "bkt/shoot", "etcd", 1);
    cJSON *e = NULL, *e2 = NULL;
    char name[BSTORE_ENTRY_NAME_MAX + 1], name2[BSTORE_ENTRY_NAME_MAX + 1];

    /* the same directory spelt another way: one entry, so the controller finds the webhook's */
    cr_assert_eq(pmove_local_entry(a, "/var/lib/lb", 1800000000, &e, name, NULL, NULL), KERR_OK);
    cr_assert_eq(pmove_local_entry(a2, "/var/lib/lb/", 1800000000, &e2, name2, NULL, NULL),
                 KERR_OK);
    cr_assert_str_eq(name, name2);
    cr_assert_str_eq(kjson_get_str(e, "spec.claimedAt"), "2026-01-02T03:04:05Z",
                     "made at the CREATE: the claim began with the Etcd");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.uid"), "u1");
    cJSON_Delete(e);
    cJSON_Delete(e2);
    cJSON_Delete(a);
    cJSON_Delete(a2);
}

Test(bkefree, a_bucket_owns_its_container_whatever_its_provider)
{
    cJSON *b = cJSON_Parse("[{\"spec\":{\"provider\":\"AWS\",\"container\":\"bkt\"}},"
                           "{\"spec\":{\"provider\":\"gcp\"}}]");

    cr_assert_not_null(b);
    cr_assert(bkefree_owned(b, "bkt"), "a spec not understood still owns its container");
    cr_assert_not(bkefree_owned(b, "bkt2"));
    cr_assert_not(bkefree_owned(b, ""));
    cr_assert_not(bkefree_owned(NULL, "bkt"), "no bucket");
    cJSON_Delete(b);
}
