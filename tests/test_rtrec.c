/* rtrec: the target an EtcdRestore was admitted with, against the one resolved now. */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "common/bstore.h"
#include "common/pclaim.h"
#include "common/rtrec.h"

#define RESTORE(uid)                                                                       \
    "{\"metadata\":{\"namespace\":\"team\",\"name\":\"r\",\"uid\":\"" uid "\"},\"spec\":{" \
    "\"target\":{\"store\":{\"container\":\"etcd-bucket\",\"prefix\":\"team2/r\"}}}}"

static const char REC[] =
    "[{\"kind\":\"EtcdRestore\",\"namespace\":\"team\",\"name\":\"r\",\"uid\":\"old\","
    "\"prefix\":\"team2/x\",\"at\":1},"
    "{\"namespace\":\"team\",\"name\":\"r\",\"prefix\":\"team2/r\",\"at\":1},"
    "{\"kind\":\"EtcdRestore\",\"namespace\":\"team\",\"name\":\"r\",\"uid\":\"u-1\","
    "\"prefix\":\"team2/r\",\"provider\":\"Local\",\"at\":2}]";

static const char *prefix_found(const char *restore, const char *records)
{
    static char out[64];
    cJSON *rs = cJSON_Parse(restore), *rec = cJSON_Parse(records);
    const cJSON *r = rtrec_find(rec, rs);

    snprintf(out, sizeof(out), "%s", r ? cJSON_GetObjectItem(r, "prefix")->valuestring : "-");
    cJSON_Delete(rs);
    cJSON_Delete(rec);
    return out;
}

Test(rtrec, the_record_of_this_restore)
{
    cr_expect_str_eq(prefix_found(RESTORE("u-1"), REC), "team2/r", "its uid");
    cr_expect_str_eq(prefix_found(RESTORE("u-2"), REC), "-", "an earlier restore of its name");
    cr_expect_str_eq(prefix_found(RESTORE("u-2"),
                                  "[{\"kind\":\"EtcdRestore\",\"namespace\":\"team\","
                                  "\"name\":\"r\",\"prefix\":\"p\"}]"),
                     "p", "an earlier release's record: by name");
    cr_expect_str_eq(prefix_found(RESTORE("u-1"), "[{\"kind\":\"EtcdRestore\",\"namespace\":"
                                                  "\"team2\",\"name\":\"r\",\"prefix\":\"p\"}]"),
                     "-", "another namespace's");
    cr_expect_str_eq(prefix_found(RESTORE("u-1"), "{\"x\":1}"), "-");
    cr_expect_str_eq(prefix_found(RESTORE("u-1"), "[1,\"a\",null,[]]"), "-");
}

/* The Lease the record is in is the store admitted: a live target in another store (Local
 * admitted, S3 now), with another prefix, or one that cannot be keyed is moved. */
Test(rtrec, a_target_that_moved_is_refused)
{
    cJSON *rec = cJSON_Parse("{\"provider\":\"Local\"}");
    cJSON *rec3 = cJSON_Parse("{\"prefix\":\"team2/r\",\"provider\":\"S3\"}");
    struct bstore_claim local = { "", NULL }, s3 = { "", NULL };
    char ll[64], ls3[64], why[512];
    struct rtarget now_local = { "Local", NULL }, now_s3 = { "S3", NULL },
                   now_gcs = { "GCS", NULL }, bad = { "nope", NULL }, none = { NULL, NULL };

    cr_assert_eq(bstore_claim_init(&local, "Local", "etcd-bucket", NULL, "team2/r", NULL), KERR_OK);
    cr_assert_eq(bstore_claim_init(&s3, "S3", "etcd-bucket", NULL, "team2/r", NULL), KERR_OK);
    /* a Local target's canonical prefix is its directory on the node (common/blocal) */
    cJSON_AddStringToObject(rec, "prefix", local.prefix);
    pclaim_lease_name(local.key, ll, sizeof(ll));
    pclaim_lease_name(s3.key, ls3, sizeof(ls3));
    cr_expect_eq(rtrec_judge(ll, rec, &now_local, "etcd-bucket", "team2/r", why, sizeof(why)),
                 RTREC_SAME);
    cr_expect_eq(rtrec_judge(ll, rec, &now_local, "etcd-bucket", "./team2//r", why, sizeof(why)),
                 RTREC_SAME, "the canonical prefix");
    cr_expect_eq(rtrec_judge(ll, rec, &now_s3, "etcd-bucket", "team2/r", why, sizeof(why)),
                 RTREC_MOVED);
    cr_expect(strstr(why, "not the store it was admitted with (provider \"Local\")"), "%s", why);
    cr_expect_eq(rtrec_judge(ll, rec, &now_local, "etcd-bucket", "team2/r2", why, sizeof(why)),
                 RTREC_MOVED);
    cr_expect(strstr(why, "local-backupbuckets/etcd-bucket/team2/r2\", not ") &&
                  strstr(why, "local-backupbuckets/etcd-bucket/team2/r\" as admitted"),
              "%s", why);
    /* one object store of one container is one store: the webhook admitted it as such */
    cr_expect_eq(rtrec_judge(ls3, rec3, &now_gcs, "etcd-bucket", "team2/r", why, sizeof(why)),
                 RTREC_SAME);
    cr_expect_eq(rtrec_judge(ls3, rec3, &bad, "etcd-bucket", "team2/r", why, sizeof(why)),
                 RTREC_MOVED);
    cr_expect_eq(rtrec_judge(ls3, rec3, &none, "etcd-bucket", "team2/r", why, sizeof(why)),
                 RTREC_MOVED);
    cr_expect_eq(rtrec_judge(ls3, NULL, &now_s3, "etcd-bucket", "team2/r", why, sizeof(why)),
                 RTREC_MOVED, "a record without a prefix");
    bstore_claim_release(&local);
    bstore_claim_release(&s3);
    cJSON_Delete(rec);
    cJSON_Delete(rec3);
}

/* A Local record is the directory warden-webhook placed by the target's Secret (any hostPath):
 * the same container and prefix below it is the target admitted, another prefix is not. */
Test(rtrec, a_local_record_under_its_own_hostpath)
{
    cJSON *rec = cJSON_Parse("{\"provider\":\"Local\",\"prefix\":\"var/lib/evil/shoot--a/etcd\"}");
    struct rtarget now = { "Local", NULL };
    char ll[64], why[512];

    pclaim_lease_name("Local||", ll, sizeof(ll));
    cr_expect_eq(rtrec_judge(ll, rec, &now, "shoot--a", "etcd", why, sizeof(why)), RTREC_SAME, "%s",
                 why);
    cr_expect_eq(rtrec_judge(ll, rec, &now, "shoot--a", "./etcd/", why, sizeof(why)), RTREC_SAME);
    cr_expect_eq(rtrec_judge(ll, rec, &now, "shoot--a", "tcd", why, sizeof(why)), RTREC_MOVED);
    cr_expect_eq(rtrec_judge(ll, rec, &now, "a", "etcd", why, sizeof(why)), RTREC_MOVED);
    cr_expect_eq(rtrec_judge(ll, rec, &now, "shoot--a", "etcd/x", why, sizeof(why)), RTREC_MOVED);
    cJSON_Delete(rec);
}
