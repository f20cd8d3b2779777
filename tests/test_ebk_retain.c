/*
 * Tests of controller/ebk's retained copies (deletionPolicy Retain) on an in-process kube-sim
 * (tests/support/ebkfix): a copy the backup leaves is handed to a BackupEntry of its
 * destination's claim before the backup goes (its write window, a name held by another
 * claim, a collision under the earlier name, a copy never read), and a backup whose copy
 * never started goes without one. The copy flow itself: tests/test_ebk.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/bstore.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/backups/ebk.h"
#include "controller/core/claims.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"
#include "tests/support/cfix.h"
#include "tests/support/ebkfix.h"
#include "tests/support/jsonfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

/* ---- ebk on kube-sim (tests/support/ebkfix) ---- */

static struct ebkfix ef;

static void setup(void)
{
    ebkfix_start(&ef);
}

static void teardown(void)
{
    ebkfix_stop(&ef);
}

TestSuite(ebk_retain, .init = setup, .fini = teardown, .timeout = 60);

static const struct k8s_resource RES_ENTRY = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };

/* The world (ebkfix_world, S3) with backup b1 of deletionPolicy Retain. */
static void retained_b1(void)
{
    struct kerr_info err = { 0 };
    cJSON *b;

    ebkfix_world(&ef, "S3");
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    kjson_set_str(b, "spec.deletionPolicy", "Retain", NULL);
    OK(k8s_update(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", b, NULL, NULL, &err));
    cJSON_Delete(b);
}

/* A Completed backup b1 (deletionPolicy Retain) whose copy was written. */
static void retained_copy(void)
{
    cJSON *b;

    retained_b1();
    ebkfix_step(&ef);
    ebkfix_task_succeeded(&ef);
    ebkfix_step(&ef);
    ebkfix_finish_job(&ef, "b1--copy", EBKFIX_SUMMARY, 0);
    ebkfix_step(&ef);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Completed");
    cr_assert_str_eq(jsonfix_str(b, "metadata.finalizers.0"), EBK_FINALIZER);
    cJSON_Delete(b);
}

Test(ebk_retain, retained_copy_is_handed_to_a_backup_entry_before_the_backup_goes)
{
    struct kerr_info err = { 0 };
    char ph[32], name[KNAME_SUBDOMAIN_MAX + 1];
    cJSON *e;

    retained_copy();
    ebkfix_copy_entry_name(name);
    OK(k8s_delete(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    ebkfix_step(&ef);
    cr_assert_null(cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--delete-copy"),
                   "Retain: the copy is not deleted");
    e = cfix_get(&ef.fx, &RES_ENTRY, name);
    cr_assert_not_null(e, "the copy's prefix is claimed by BackupEntry %s", name);
    cr_assert_str_eq(jsonfix_str(e, "spec.etcd.namespace"), CFIX_NS);
    cr_assert_str_eq(jsonfix_str(e, "spec.etcd.name"), "main");
    cr_assert_str_eq(jsonfix_str(e, "spec.prefix"), "copies/main");
    cr_assert_str_eq(jsonfix_str(e, "spec.store.container"), "offsite");
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "(gone)",
                     "the finalizer goes once the entry is");
    /* the window is the copy's: from its start to its completion */
    cr_assert(kjson_get_str(e, "spec.claimedAt") && kjson_get_str(e, "spec.etcdDeletedAt"));
    cJSON_Delete(e);
}

/* An entry name of Etcd other/e, prefix and store (JSON) as given. */
static void plant_other(const char *name, const char *prefix, const char *store)
{
    char text[1024];
    cJSON *b;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupEntry\",\"metadata\":"
             "{\"name\":\"%s\"},\"spec\":{\"bucketName\":\"x\",\"prefix\":\"%s\",\"store\":%s,"
             "\"etcd\":{\"namespace\":\"other\",\"name\":\"e\"}}}",
             name, prefix, store);
    b = jsonfix_parse(text);
    cJSON_Delete(cfix_create(&ef.fx, &RES_ENTRY, b));
    cJSON_Delete(b);
}

/* The copy's name held by another namespace's entry of store: the finalizer stays, why. */
static void held_by_another(const char *store, const char *why)
{
    struct kerr_info err = { 0 };
    char name[KNAME_SUBDOMAIN_MAX + 1];
    cJSON *b;

    retained_copy();
    ebkfix_copy_entry_name(name);
    plant_other(name, "copies/main", store);
    OK(k8s_delete(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    cr_assert_gt(ebkfix_step(&ef), 0, "looked at again");
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_not_null(b, "the finalizer stays while no entry claims the copy");
    cr_assert(strstr(jsonfix_str(b, "status.deletionError"), why), "%s",
              jsonfix_str(b, "status.deletionError"));
    cJSON_Delete(b);
}

Test(ebk_retain, retained_copy_whose_entry_cannot_be_made_keeps_the_backup)
{
    /* the claim's entry is another namespace's (fail closed), or another claim's holds the name */
    held_by_another("{\"provider\":\"S3\",\"container\":\"offsite\"}", "another owner");
}

Test(ebk_retain, retained_copys_name_held_by_another_claim_keeps_the_backup)
{
    held_by_another("{\"provider\":\"S3\",\"container\":\"elsewhere\"}",
                    "held by an entry of another prefix or store");
}

Test(ebk_retain, retained_copy_finds_its_entry_past_a_collision_under_the_old_name)
{
    struct kerr_info err = { 0 };
    char name[KNAME_SUBDOMAIN_MAX + 1], v1[KNAME_SUBDOMAIN_MAX + 1];
    cJSON *e;

    retained_copy();
    ebkfix_copy_entry_name(name);
    snprintf(v1, sizeof(v1), "%.*s", (int)strlen(name) - 8, name); /* its 8-digit name */
    /* a tenant's claim (her container, a prefix that reads alike) under the 8-digit name */
    plant_other(v1, "copies_main", "{\"provider\":\"S3\",\"container\":\"mallory\"}");
    OK(k8s_delete(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    ebkfix_step(&ef);
    e = cfix_get(&ef.fx, &RES_ENTRY, name);
    cr_assert_not_null(e, "the copy's own entry under the 16-digit name");
    cr_assert_str_eq(jsonfix_str(e, "spec.store.container"), "offsite");
    cJSON_Delete(e);
    e = cfix_get(&ef.fx, &RES_ENTRY, v1);
    cr_assert_str_eq(jsonfix_str(e, "spec.etcd.namespace"), "other", "hers, untouched");
    cJSON_Delete(e);
}

/* 1 when RFC 3339 time a is at or after b. */
static int not_before(const char *a, const char *b)
{
    struct timespec ta, tb;

    return ktime_parse(a, &ta, NULL) == KERR_OK && ktime_parse(b, &tb, NULL) == KERR_OK &&
           ta.tv_sec >= tb.tv_sec;
}

Test(ebk_retain, retained_copy_never_read_is_handed_to_a_backup_entry)
{
    struct kerr_info err = { 0 };
    char ph[32], name[KNAME_SUBDOMAIN_MAX + 1], deadline[KTIME_LEN + 1];
    struct timespec at;
    cJSON *b, *e;

    retained_b1();
    ebkfix_step(&ef);
    ebkfix_task_succeeded(&ef);
    ebkfix_step(&ef);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Uploading");
    /* the copy Job ran and went while the controller was away: its result is never read */
    OK(k8s_delete(ef.fx.c, &EBKFIX_RES_JOB, CFIX_NS, "b1--copy", NULL, NULL, &err));
    ebkfix_step(&ef);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert_null(kjson_get_str(b, "status.destinationKey"));
    OK(ktime_parse(jsonfix_str(b, "status.copyStartedAt"), &at, &err));
    OK(ktime_format(at.tv_sec + PODJOB_COPY_DEADLINE_S, deadline));
    OK(k8s_delete(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    ebkfix_step(&ef);
    cr_assert_null(cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--delete-copy"),
                   "Retain: nothing is deleted");
    ebkfix_copy_entry_name(name);
    e = cfix_get(&ef.fx, &RES_ENTRY, name);
    cr_assert_not_null(e, "what the copy may have written is claimed by BackupEntry %s", name);
    cr_assert_str_eq(jsonfix_str(e, "spec.etcd.namespace"), CFIX_NS);
    cr_assert_str_eq(jsonfix_str(e, "spec.etcd.name"), "main");
    cr_assert_str_eq(jsonfix_str(e, "spec.prefix"), "copies/main");
    /* the window: the copy's start to the later of its failure and its Job's deadline */
    cr_assert_str_eq(jsonfix_str(e, "spec.claimedAt"), jsonfix_str(b, "status.copyStartedAt"));
    cr_assert(not_before(jsonfix_str(e, "spec.etcdDeletedAt"), deadline), "%s before %s",
              jsonfix_str(e, "spec.etcdDeletedAt"), deadline);
    cr_assert(
        not_before(jsonfix_str(e, "spec.etcdDeletedAt"), jsonfix_str(b, "status.completionTime")),
        "%s", jsonfix_str(e, "spec.etcdDeletedAt"));
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "(gone)",
                     "the finalizer goes once the entry is");
    cJSON_Delete(e);
    cJSON_Delete(b);
}

/* The copy's write window (status.copyStartedAt, a retained copy's spec.claimedAt) starts once
 * its destination is claimed, after the snapshot: what another owner wrote into the destination
 * while the snapshot was taken is not the copy's. */
Test(ebk_retain, a_copy_starts_when_its_claim_is_recorded_not_with_its_snapshot)
{
    struct kerr_info err = { 0 };
    struct timespec task_at, copy_at;
    char ph[32];
    time_t before;
    cJSON *t, *b;

    ebkfix_world(&ef, "S3");
    ebkfix_step(&ef);
    t = cfix_get(&ef.fx, &ETCDSPEC_RES_OPSTASK, "b1");
    cr_assert_not_null(t, "the snapshot task");
    OK(ktime_parse(jsonfix_str(t, "metadata.creationTimestamp"), &task_at, &err));
    cJSON_Delete(t);
    /* the snapshot takes a while: the claim comes in a later second */
    while (time(NULL) <= task_at.tv_sec + 1)
        usleep(100 * 1000);
    before = time(NULL);
    ebkfix_task_succeeded(&ef);
    ebkfix_step(&ef);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Uploading");
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    OK(ktime_parse(jsonfix_str(b, "status.copyStartedAt"), &copy_at, &err));
    cr_assert_geq(copy_at.tv_sec, before, "copyStartedAt %s: before the claim (task created %s)",
                  jsonfix_str(b, "status.copyStartedAt"), jsonfix_str(b, "status.startTime"));
    cJSON_Delete(b);
}

Test(ebk_retain, retained_backup_without_a_copy_job_goes_without_an_entry)
{
    struct kerr_info err = { 0 };
    char ph[32], name[KNAME_SUBDOMAIN_MAX + 1];
    cJSON *b;

    retained_b1();
    /* a Job of the copy's name that is not b1's: b1 fails before making one */
    ebkfix_create_text(&ef, &EBKFIX_RES_JOB,
                       "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
                       "{\"name\":\"b1--copy\"},\"spec\":{\"template\":{\"spec\":"
                       "{\"containers\":[{\"name\":\"x\",\"image\":\"x\"}],"
                       "\"restartPolicy\":\"Never\"}}}}");
    ebkfix_step(&ef);
    ebkfix_task_succeeded(&ef);
    ebkfix_step(&ef);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert_null(kjson_get_str(b, "status.jobName"));
    cr_assert_null(kjson_get_str(b, "status.copyStartedAt"));
    cJSON_Delete(b);
    OK(k8s_delete(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    ebkfix_step(&ef);
    ebkfix_copy_entry_name(name);
    cr_assert_null(cfix_get(&ef.fx, &RES_ENTRY, name), "no copy was written: no entry");
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "(gone)");
}
