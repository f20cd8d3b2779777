/*
 * Tests of controller/backups/ebk_keep: the BackupEntry a retained copy is handed to (its
 * name, store, owner and deletion window: the copy's write window) and the bucket of its
 * store. The reconcile that creates it runs in e2e_attack5_retained_copy.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/backups/ebk_keep.h"
#include "controller/core/claims.h"
#include "controller/entries/bke.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static cJSON *backup(const char *provider, const char *prefix)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"b\","
             "\"creationTimestamp\":\"2026-11-01T00:00:00Z\"},"
             "\"spec\":{\"etcdName\":\"etcd-main\",\"deletionPolicy\":\"Retain\","
             "\"destination\":{\"provider\":\"aws\",\"container\":\"moved\",\"prefix\":\"x\"}},"
             "\"status\":{\"phase\":\"Completed\",\"destinationKey\":\"k\","
             "\"startTime\":\"2026-11-02T00:00:00Z\",\"completionTime\":\"2026-11-02T00:05:00Z\","
             "\"destination\":{\"provider\":\"%s\",\"container\":\"bkt\",\"prefix\":\"%s\"}}}",
             provider, prefix);
    return cJSON_Parse(text);
}

Test(ebk_keep, the_entry_claims_what_the_copy_wrote_for_its_namespace)
{
    struct kerr_info err = { 0 };
    struct bstore_claim c;
    char name[KNAME_SUBDOMAIN_MAX + 1];
    cJSON *b = backup("aws", "/copies--r/"), *e = NULL;

    OK(ebk_keep_entry(b, "bkt-bucket", &e, &err));
    /* status.destination (where the copy is), never spec.destination (edited since) */
    cr_assert_str_eq(kjson_get_str(e, "spec.store.provider"), "S3");
    cr_assert_str_eq(kjson_get_str(e, "spec.store.container"), "bkt");
    cr_assert_str_eq(kjson_get_str(e, "spec.prefix"), "/copies--r/");
    cr_assert_str_eq(kjson_get_str(e, "spec.bucketName"), "bkt-bucket");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.namespace"), "shoot");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcd.name"), "etcd-main");
    /* the copy's write window: the deletion removes nothing else */
    cr_assert_str_eq(kjson_get_str(e, "spec.claimedAt"), "2026-11-02T00:00:00Z");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcdDeletedAt"), "2026-11-02T00:05:00Z");
    cr_assert_str_eq(kjson_get_str(e, "metadata.annotations[" EBK_KEEP_ANNOTATION "]"), "shoot/b");
    /* named after the claim: the webhook's and the entries' one name for it */
    OK(bstore_claim_init(&c, "S3", "bkt", NULL, "copies--r", &err));
    OK(claims_entry_name(&c, name));
    bstore_claim_release(&c);
    cr_assert_str_eq(kjson_get_str(e, "metadata.name"), name);
    cJSON_Delete(e);
    cJSON_Delete(b);
}

Test(ebk_keep, a_destination_not_understood_gets_no_entry)
{
    struct kerr_info err = { 0 };
    cJSON *b = backup("awss", "copies"), *e = NULL;

    cr_assert_eq(ebk_keep_entry(b, "", &e, &err), KERR_INVAL);
    cr_assert_null(e);
    cJSON_Delete(b);
}

Test(ebk_keep, the_bucket_of_the_store_is_the_oldest_of_its_container)
{
    cJSON *l = cJSON_Parse(
        "[{\"metadata\":{\"name\":\"other\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
        "\"spec\":{\"provider\":\"aws\",\"container\":\"elsewhere\"}},"
        "{\"metadata\":{\"name\":\"young\",\"creationTimestamp\":\"2026-03-01T00:00:00Z\"},"
        "\"spec\":{\"provider\":\"gcp\",\"container\":\"bkt\"}},"
        "{\"metadata\":{\"name\":\"old\",\"creationTimestamp\":\"2026-02-01T00:00:00Z\"},"
        "\"spec\":{\"provider\":\"S3\",\"container\":\"bkt\"}},"
        "{\"metadata\":{\"name\":\"local\",\"creationTimestamp\":\"2025-01-01T00:00:00Z\"},"
        "\"spec\":{\"provider\":\"Local\",\"container\":\"bkt\"}}]");
    char out[64];

    ebk_keep_bucket(l, "s3", "bkt", out, sizeof(out));
    cr_assert_str_eq(out, "old");
    ebk_keep_bucket(l, "local", "bkt", out, sizeof(out));
    cr_assert_str_eq(out, "local");
    ebk_keep_bucket(l, "aws", "none", out, sizeof(out));
    cr_assert_str_eq(out, "");
    ebk_keep_bucket(l, "awss", "bkt", out, sizeof(out));
    cr_assert_str_eq(out, "");
    cJSON_Delete(l);
}

Test(ebk_keep, a_local_copy_records_the_host_directory_its_job_mounted)
{
    struct kerr_info err = { 0 };
    cJSON *b = backup("local", "copies"), *e = NULL;
    cJSON *secret = cJSON_Parse("{\"data\":{\"hostPath\":\"L3Zhci9saWIvbGI=\"}}");

    OK(ebk_keep_entry(b, "", &e, &err));
    OK(ebk_keep_hostpath(e, secret, &err));
    cr_assert_str_eq(kjson_get_str(e, "metadata.annotations[" EBK_KEEP_HOSTPATH "]"),
                     "/var/lib/lb");
    cJSON_Delete(e);
    e = NULL;
    OK(ebk_keep_entry(b, "", &e, &err));
    OK(ebk_keep_hostpath(e, NULL, &err));
    cr_assert_str_eq(kjson_get_str(e, "metadata.annotations[" EBK_KEEP_HOSTPATH "]"),
                     "/etc/gardener/local-backupbuckets");
    cJSON_Delete(e);
    cJSON_Delete(secret);
    cJSON_Delete(b);
}

Test(ebk_keep, the_copies_of_the_same_etcd_may_share_a_retained_copys_prefix)
{
    struct kerr_info err = { 0 };
    struct bstore_claim c;
    char why[CLAIMS_WHY_MAX];
    cJSON *b = backup("aws", "copies/main"), *e = NULL, *entries = cJSON_CreateArray();
    struct claims_skip mine = { .backup_ns = "shoot", .backup = "b2", .backups_of = "etcd-main" };
    struct claims_skip other = { .backup_ns = "shoot", .backup = "b3", .backups_of = "events" };

    OK(ebk_keep_entry(b, "", &e, &err));
    cJSON_AddItemToArray(entries, e);
    OK(bstore_claim_init(&c, "S3", "bkt", NULL, "copies/main", &err));
    claims_find_in(NULL, entries, NULL, &c, &mine, why);
    cr_assert_str_eq(why, "", "%s", why);
    claims_find_in(NULL, entries, NULL, &c, &other, why);
    cr_assert(strstr(why, "BackupEntry"), "%s", why);
    bstore_claim_release(&c);
    cJSON_Delete(entries);
    cJSON_Delete(b);
}

/* A Retain backup whose copy Job was made and whose result was never read (the Job deleted
 * first): Failed, no destinationKey, the copy recorded in its status. */
static cJSON *unread(const char *completion)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"b\","
             "\"creationTimestamp\":\"2026-11-01T00:00:00Z\"},"
             "\"spec\":{\"etcdName\":\"etcd-main\",\"deletionPolicy\":\"Retain\","
             "\"destination\":{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"x\"}},"
             "\"status\":{\"phase\":\"Failed\",\"jobName\":\"b--copy\","
             "\"startTime\":\"2026-11-02T00:00:00Z\",\"copyStartedAt\":\"2026-11-02T00:01:00Z\","
             "\"completionTime\":\"%s\","
             "\"destination\":{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"x\"}}}",
             completion);
    return cJSON_Parse(text);
}

Test(ebk_keep, a_copy_never_read_is_claimed_until_its_jobs_deadline)
{
    struct kerr_info err = { 0 };
    cJSON *b = unread("2026-11-02T00:05:00Z"), *e = NULL;

    OK(ebk_keep_entry(b, "", &e, &err));
    /* from the copy's start; its Pod may have written until the Job's deadline, later than the
     * failure the controller saw */
    cr_assert_str_eq(kjson_get_str(e, "spec.claimedAt"), "2026-11-02T00:01:00Z");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcdDeletedAt"), "2026-11-02T02:01:00Z");
    cJSON_Delete(e);
    cJSON_Delete(b);
    /* a failure seen after the deadline: the failure */
    b = unread("2026-11-02T05:00:00Z");
    e = NULL;
    OK(ebk_keep_entry(b, "", &e, &err));
    cr_assert_str_eq(kjson_get_str(e, "spec.claimedAt"), "2026-11-02T00:01:00Z");
    cr_assert_str_eq(kjson_get_str(e, "spec.etcdDeletedAt"), "2026-11-02T05:00:00Z");
    cJSON_Delete(e);
    cJSON_Delete(b);
}

Test(ebk_keep, the_copy_window_is_known_only_when_a_copy_job_was_recorded)
{
    const char *since;
    char until[KTIME_LEN + 1];
    cJSON *b = unread("2026-11-02T00:05:00Z");

    cr_assert_eq(ebk_copy_window(b, &since, until), 1);
    kjson_delete(b, "status.jobName");
    cr_assert_eq(ebk_copy_window(b, &since, until), 1, "copyStartedAt alone records the copy");
    kjson_delete(b, "status.copyStartedAt");
    cr_assert_eq(ebk_copy_window(b, &since, until), 0, "no copy Job: nothing written");
    cr_assert_str_eq(since, "2026-11-02T00:00:00Z");
    kjson_set_str(b, "status.jobName", "b--copy", NULL);
    cr_assert_eq(ebk_copy_window(b, &since, until), 1, "jobName alone records the copy");
    /* a copy read back ended when its result was read */
    kjson_set_str(b, "status.destinationKey", "x/v2/Full-00000000-00000010-1700000000.gz", NULL);
    kjson_set_str(b, "status.copyStartedAt", "2026-11-02T00:01:00Z", NULL);
    cr_assert_eq(ebk_copy_window(b, &since, until), 1);
    cr_assert_str_eq(since, "2026-11-02T00:01:00Z");
    cr_assert_str_eq(until, "2026-11-02T00:05:00Z");
    /* an unparsable start: the failure time, never an empty end */
    kjson_delete(b, "status.destinationKey");
    kjson_set_str(b, "status.copyStartedAt", "yesterday", NULL);
    cr_assert_eq(ebk_copy_window(b, &since, until), 1);
    cr_assert_str_eq(until, "2026-11-02T00:05:00Z");
    cJSON_Delete(b);
}

/* Retain keeps the copy for the bucket's grace period from the EtcdBackup's deletion, however
 * long ago the copy was made: the window still ends at the copy's completion. */
Test(ebk_keep, the_grace_period_runs_from_the_hand_over_not_from_the_copy)
{
    struct kerr_info err = { 0 };
    cJSON *b = backup("aws", "copies"), *e = NULL;
    time_t before = time(NULL), due;
    struct timespec done;

    OK(ebk_keep_entry(b, "bkt-bucket", &e, &err));
    cr_assert_str_eq(kjson_get_str(e, "spec.etcdDeletedAt"), "2026-11-02T00:05:00Z");
    cr_assert_not_null(kjson_get_str(e, "spec.retainedAt"));
    due = bke_due(e, 3600L * 1000);
    cr_assert_geq(due, before + 3600, "the copy of a month ago is kept an hour from now");
    cr_assert_leq(due, time(NULL) + 3600);
    /* an entry of an Etcd (no hand-over): from the Etcd's deletion */
    cr_assert_eq(kjson_delete(e, "spec.retainedAt"), KERR_OK);
    cr_assert_eq(ktime_parse("2026-11-02T00:05:00Z", &done, NULL), KERR_OK);
    cr_assert_eq(bke_due(e, 3600L * 1000), done.tv_sec + 3600);
    cJSON_Delete(e);
    cJSON_Delete(b);
}
