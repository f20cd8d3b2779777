/*
 * The controller's Jobs: one name per kind of Job and owner (the copy Job of
 * backup "x-delete" and the delete Job of backup "x" included); on an
 * in-process kube-sim, a Job of the expected name that another owns is never
 * adopted, read nor deleted (the owner fails or reports it), and a Job the
 * deadline stopped (no Pod ever ran: only the Failed condition) is the
 * owner's failure with that reason. The test plays the EtcdOpsTask executor
 * and the Job controller: each state is one it writes, not a race.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "controller/entries/bke.h"
#include "controller/entries/bkejob.h"
#include "controller/backups/ebk.h"
#include "controller/backups/erst.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_JOB = { "batch", "v1", "jobs", 1 };
static const struct k8s_resource RES_POD = { "", "v1", "pods", 1 };

static const char DEADLINE[] =
    "{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"DeadlineExceeded\","
    "\"message\":\"Job was active longer than specified deadline\"}]}";

/* ---- names, pure ---- */

Test(jobs, names_one_per_kind_and_owner)
{
    static const char *const owners[] = { "x",         "x-delete",   "x-copy", "x-delete-copy",
                                          "x--copy",   "x-restore",  "x.copy", "delete",
                                          "x--delete", "x--restore", "copy" };
    enum { N = sizeof(owners) / sizeof(owners[0]) };
    static char names[N * 4][KNAME_LABEL_MAX + 1];
    char a[KNAME_LABEL_MAX + 1], b[KNAME_LABEL_MAX + 1];
    size_t i, j;

    /* the report: backup "x-delete"'s copy Job and backup "x"'s delete Job */
    cr_assert_eq(ebk_job_name("x-delete", a), KERR_OK);
    cr_assert_eq(ebk_del_job_name("x", b), KERR_OK);
    cr_assert_str_neq(a, b);
    for (i = 0; i < N; i++) {
        cr_assert_eq(ebk_job_name(owners[i], names[4 * i]), KERR_OK);
        cr_assert_eq(ebk_del_job_name(owners[i], names[4 * i + 1]), KERR_OK);
        cr_assert_eq(bkejob_name(owners[i], names[4 * i + 2]), KERR_OK);
        cr_assert_eq(kname_job(owners[i], ERST_JOB_TAG, names[4 * i + 3]), KERR_OK);
    }
    for (i = 0; i < 4 * N; i++)
        for (j = i + 1; j < 4 * N; j++)
            cr_assert_str_neq(names[i], names[j], "%s of %s and %s of %s", names[i], owners[i / 4],
                              names[j], owners[j / 4]);
}

/* ---- on kube-sim ---- */

static struct cfix fx;
static struct ebk_env env;

static void setup(void)
{
    cfix_start(&fx, NULL);
    env = (struct ebk_env){ .client = fx.c, .copy_image = "img:1" };
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(jobs_kubesim, .init = setup, .fini = teardown, .timeout = 60);

static void create_text(const struct k8s_resource *res, const char *text)
{
    cJSON *o = jsonfix_parse(text);

    cJSON_Delete(cfix_create(&fx, res, o));
    cJSON_Delete(o);
}

/* Write the status of res/name (JSON text) through /status. */
static void put_status(const struct k8s_resource *res, const char *name, const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = cfix_get(&fx, res, name), *st = jsonfix_parse(text);

    cr_assert_not_null(o, "%s %s", res->resource, name);
    cJSON_DeleteItemFromObject(o, "status");
    cJSON_AddItemToObject(o, "status", st);
    OK(k8s_update(fx.c, res, res->namespaced ? CFIX_NS : NULL, name, o,
                  &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cJSON_Delete(o);
}

/* A Job name in CFIX_NS that someone else made: controlled by an EtcdBackup of uid "u-other"
 * (ref), or carrying the owner annotation of uid "u-other". */
static void foreign_job(const char *name, int ref)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"%s\",%s},"
             "\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":"
             "[{\"name\":\"c\",\"image\":\"other:1\"}]}}}}",
             name,
             ref ? "\"ownerReferences\":[{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":"
                   "\"EtcdBackup\",\"name\":\"other\",\"uid\":\"u-other\",\"controller\":true}]"
                 : "\"annotations\":{\"" PODJOB_ANN_OWNER_UID "\":\"u-other\"}");
    create_text(&RES_JOB, text);
}

static void del(const struct k8s_resource *res, const char *name)
{
    struct kerr_info err = { 0 };

    OK(k8s_delete(fx.c, res, CFIX_NS, name, NULL, NULL, &err));
}

static const char *uid_of(const struct k8s_resource *res, const char *name, char *out, size_t n)
{
    cJSON *o = cfix_get(&fx, res, name);

    snprintf(out, n, "%s", o ? jsonfix_str(o, "metadata.uid") : "(gone)");
    cJSON_Delete(o);
    return out;
}

/* The Etcd "main" with an S3 store, both Secrets, the backup b1 (S3 destination). */
static void world(void)
{
    cJSON *e = cfix_etcd("main",
                         "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":"
                         "\"ns1/main\",\"secretRef\":{\"name\":\"etcd-backup\"}}",
                         NULL);

    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
    create_text(&ETCDSPEC_RES_SECRET, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
                                      "{\"name\":\"etcd-backup\"},\"data\":{\"region\":\"eA==\"}}");
    create_text(&ETCDSPEC_RES_SECRET, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
                                      "{\"name\":\"dest\"},\"data\":{\"region\":\"eA==\"}}");
    create_text(&EBK_RES_BACKUP,
                "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
                "{\"name\":\"b1\"},\"spec\":{\"etcdName\":\"main\",\"destination\":{\"provider\":"
                "\"S3\",\"container\":\"offsite\",\"prefix\":\"copies/main\",\"secretRef\":"
                "{\"name\":\"dest\"}}}}");
}

static long step(void)
{
    struct kerr_info err = { 0 };
    long requeue = 0;

    OK(ebk_step(&env, CFIX_NS, "b1", &requeue, &err));
    return requeue;
}

static const char *backup(const char *field, char *out, size_t n)
{
    cJSON *b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    char path[128];

    snprintf(path, sizeof(path), "status.%s", field);
    snprintf(out, n, "%s", b ? (kjson_get_str(b, path) ? kjson_get_str(b, path) : "") : "(gone)");
    cJSON_Delete(b);
    return out;
}

/* b1 through its snapshot: the task created and reported Succeeded, the copy Job next. */
static void snapshot_taken(void)
{
    char ph[32];

    step();
    cr_assert_str_eq(backup("phase", ph, sizeof(ph)), "Snapshotting");
    put_status(&ETCDSPEC_RES_OPSTASK, "b1",
               "{\"state\":\"Succeeded\",\"lastOperation\":{\"description\":\"full snapshot "
               "Full-00000000-00000010-1700000000.gz taken\",\"lastTransitionTime\":"
               "\"2026-01-01T00:00:00Z\"}}");
    step();
}

Test(jobs_kubesim, a_foreign_copy_job_fails_the_backup_and_stays)
{
    char buf[512], uid[64];

    world();
    foreign_job("b1--copy", 1);
    uid_of(&RES_JOB, "b1--copy", uid, sizeof(uid));
    snapshot_taken();
    cr_assert_str_eq(backup("phase", buf, sizeof(buf)), "Failed");
    cr_assert(strstr(backup("error", buf, sizeof(buf)),
                     "Job ns1/b1--copy exists and is not ours: its owner is EtcdBackup other "
                     "(uid u-other)"),
              "%s", buf);
    cr_assert_str_eq(backup("jobName", buf, sizeof(buf)), "");
    step();
    cr_assert_str_eq(uid_of(&RES_JOB, "b1--copy", buf, sizeof(buf)), uid, "never deleted");
}

Test(jobs_kubesim, its_own_job_is_adopted_and_a_replaced_one_is_not_read)
{
    char buf[512], uid[64];
    cJSON *job;
    int64_t deadline = 0;

    world();
    snapshot_taken();
    cr_assert_str_eq(backup("phase", buf, sizeof(buf)), "Uploading");
    cr_assert_str_eq(backup("jobName", buf, sizeof(buf)), "b1--copy");
    job = cfix_get(&fx, &RES_JOB, "b1--copy");
    cr_assert_eq(kjson_get_int64(job, "spec.activeDeadlineSeconds", &deadline), KERR_OK);
    cr_assert_eq(deadline, PODJOB_COPY_DEADLINE_S);
    cJSON_Delete(job);
    uid_of(&RES_JOB, "b1--copy", uid, sizeof(uid));
    /* a status lost after the Job (its claim not recorded): the Job is deleted before anything
     * else, and nothing goes on while it is there */
    put_status(&EBK_RES_BACKUP, "b1", "{\"phase\":\"Snapshotting\",\"opsTaskName\":\"b1\"}");
    step();
    cr_assert_str_eq(backup("phase", buf, sizeof(buf)), "Snapshotting");
    job = cfix_get(&fx, &RES_JOB, "b1--copy");
    cr_assert(!job || kjson_has(job, "metadata.deletionTimestamp"),
              "an unrecorded copy Job is deleted");
    cJSON_Delete(job);
    /* the Job replaced by another's of the same name: not read as the result, not deleted */
    if (strcmp(uid_of(&RES_JOB, "b1--copy", buf, sizeof(buf)), "(gone)") != 0) {
        cJSON *p = jsonfix_parse("{\"metadata\":{\"finalizers\":null}}");
        struct kerr_info err = { 0 };

        /* the garbage collector's part: its foreground deletion ends */
        OK(k8s_patch(fx.c, &RES_JOB, CFIX_NS, "b1--copy", K8S_PATCH_MERGE, p, NULL, NULL, &err));
        cJSON_Delete(p);
    }
    cr_assert_str_eq(uid_of(&RES_JOB, "b1--copy", buf, sizeof(buf)), "(gone)");
    foreign_job("b1--copy", 0);
    uid_of(&RES_JOB, "b1--copy", uid, sizeof(uid));
    put_status(&RES_JOB, "b1--copy", "{\"succeeded\":1}");
    step();
    cr_assert_str_eq(backup("phase", buf, sizeof(buf)), "Failed");
    cr_assert(strstr(backup("error", buf, sizeof(buf)), "it belongs to uid u-other"), "%s", buf);
    step();
    cr_assert_str_eq(uid_of(&RES_JOB, "b1--copy", buf, sizeof(buf)), uid, "never deleted");
}

Test(jobs_kubesim, a_copy_job_past_its_deadline_fails_the_backup)
{
    char buf[512];

    world();
    snapshot_taken();
    cr_assert_gt(step(), 0, "the Job never starts: polled");
    cr_assert_str_eq(backup("phase", buf, sizeof(buf)), "Uploading");
    put_status(&RES_JOB, "b1--copy", DEADLINE);
    step();
    cr_assert_str_eq(backup("phase", buf, sizeof(buf)), "Failed");
    cr_assert(strstr(backup("error", buf, sizeof(buf)),
                     "copy Job b1--copy: DeadlineExceeded: Job was active longer than specified "
                     "deadline"),
              "%s", buf);
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--copy"), "the Job goes with the result");
}

/* b1 Completed with a copy at key, the finalizer on; then deleted. */
static void completed_then_deleted(void)
{
    struct kerr_info err = { 0 };

    create_text(&EBK_RES_BACKUP,
                "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
                "{\"name\":\"b1\",\"finalizers\":[\"" EBK_FINALIZER "\"]},\"spec\":{\"etcdName\":"
                "\"main\",\"destination\":{\"provider\":\"S3\",\"container\":\"offsite\","
                "\"prefix\":\"copies/main\",\"secretRef\":{\"name\":\"dest\"}}}}");
    put_status(&EBK_RES_BACKUP, "b1",
               "{\"phase\":\"Completed\",\"destinationKey\":\"copies/main/v2/Full-1\"}");
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
}

Test(jobs_kubesim, a_foreign_delete_job_is_reported_and_stays)
{
    char buf[512], uid[64];
    cJSON *b, *job;
    int64_t deadline = 0;

    create_text(&ETCDSPEC_RES_SECRET, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
                                      "{\"name\":\"dest\"},\"data\":{\"region\":\"eA==\"}}");
    completed_then_deleted();
    foreign_job("b1--delete-copy", 0);
    uid_of(&RES_JOB, "b1--delete-copy", uid, sizeof(uid));
    put_status(&RES_JOB, "b1--delete-copy", "{\"succeeded\":1}");
    cr_assert_gt(step(), 1000L, "looked at again after a backoff");
    cr_assert(strstr(backup("deletionError", buf, sizeof(buf)),
                     "Job ns1/b1--delete-copy exists and is not ours: it belongs to uid u-other"),
              "%s", buf);
    step();
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_not_null(b, "the finalizer stays: the copy is not deleted");
    cJSON_Delete(b);
    cr_assert_str_eq(uid_of(&RES_JOB, "b1--delete-copy", buf, sizeof(buf)), uid, "never deleted");

    /* gone: the backup's own delete Job, with its deadline; stopped by it: a retry */
    del(&RES_JOB, "b1--delete-copy");
    step();
    job = cfix_get(&fx, &RES_JOB, "b1--delete-copy");
    cr_assert_not_null(job);
    cr_assert_eq(kjson_get_int64(job, "spec.activeDeadlineSeconds", &deadline), KERR_OK);
    cr_assert_eq(deadline, PODJOB_DELETE_DEADLINE_S);
    cr_assert_null(kjson_get(job, "metadata.ownerReferences"));
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(job, "metadata.annotations[" PODJOB_ANN_OWNER_UID "]"),
                     jsonfix_str(b, "metadata.uid"));
    cJSON_Delete(b);
    cJSON_Delete(job);
    put_status(&RES_JOB, "b1--delete-copy", DEADLINE);
    step();
    cr_assert(strstr(backup("deletionError", buf, sizeof(buf)),
                     "delete Job b1--delete-copy failed: DeadlineExceeded"),
              "%s", buf);
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--delete-copy"), "our Job goes");
}

/* The BackupEntry e1 of a deleted Etcd; its bucket stores in CFIX_NS's Secret "creds". */
static cJSON *entry_world(void)
{
    create_text(&BKE_RES_ENTRY,
                "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupEntry\",\"metadata\":"
                "{\"name\":\"e1\"},\"spec\":{\"bucketName\":\"shared\",\"prefix\":\"ns1--main\","
                "\"store\":{\"provider\":\"S3\",\"container\":\"bkt\"},"
                "\"etcd\":{\"namespace\":\"ns1\",\"name\":\"main\",\"uid\":\"u1\"},"
                "\"etcdDeletedAt\":\"2026-01-01T00:00:00Z\"}}");
    return jsonfix_parse("{\"metadata\":{\"name\":\"shared\"},\"spec\":{\"provider\":\"aws\","
                         "\"container\":\"bkt\",\"secretRef\":{\"namespace\":\"" CFIX_NS "\","
                         "\"name\":\"creds\"}}}");
}

/* A bucket edited to another container (or provider, or endpoint) after the entry was made: the
 * Job would empty the prefix in the other store; no Job (attack21_bucket_container_edit). */
Test(jobs_kubesim, a_backup_entry_of_an_edited_bucket_starts_no_job)
{
    struct bke_ctx x = { .client = fx.c, .job_image = "img:1" };
    struct kerr_info err = { 0 };
    cJSON *bucket = entry_world(), *entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    char why[BKECLAIM_WHY_MAX];
    struct bke_bucket b;
    long requeue = 0;

    cJSON_ReplaceItemInObject((cJSON *)kjson_get_obj(bucket, "spec"), "container",
                              cJSON_CreateString("bkt-two"));
    OK(bkeclaim_read_bucket(bucket, &b, &err));
    OK(bkejob_step(&x, &b, entry, why, &requeue, &err));
    cr_assert(strstr(why, "the entry was made in store S3 bkt, and BackupBucket shared names "
                          "S3 bkt-two now"),
              "%s", why);
    cr_assert_null(cfix_get(&fx, &RES_JOB, "e1--delete"), "no Job");
    cJSON_Delete(entry);
    cJSON_Delete(bucket);
}

Test(jobs_kubesim, a_backup_entry_leaves_a_foreign_job_and_reports_its_deadline)
{
    struct bke_ctx x = { .client = fx.c, .job_image = "img:1" };
    struct kerr_info err = { 0 };
    cJSON *bucket = entry_world(), *entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    char buf[512], uid[64], why[BKECLAIM_WHY_MAX];
    struct bke_bucket b;
    long requeue = 0;

    OK(bkeclaim_read_bucket(bucket, &b, &err));

    foreign_job("e1--delete", 0);
    uid_of(&RES_JOB, "e1--delete", uid, sizeof(uid));
    put_status(&RES_JOB, "e1--delete", "{\"succeeded\":1}");
    cr_assert_eq(bkejob_step(&x, &b, entry, why, &requeue, &err), KERR_EXISTS);
    cr_assert(strstr(err.msg, "Job ns1/e1--delete exists and is not ours"), "%s", err.msg);
    cr_assert_str_eq(uid_of(&RES_JOB, "e1--delete", buf, sizeof(buf)), uid, "never deleted");
    cJSON_Delete(entry);
    entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    cr_assert_not_null(entry, "the entry stays");

    del(&RES_JOB, "e1--delete");
    kerr_clear(&err);
    OK(bkejob_step(&x, &b, entry, why, &requeue, &err));
    put_status(&RES_JOB, "e1--delete", DEADLINE);
    cJSON_Delete(entry);
    entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    OK(bkejob_step(&x, &b, entry, why, &requeue, &err));
    cJSON_Delete(entry);
    entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    cr_assert(strstr(jsonfix_str(entry, "status.lastError"),
                     "Job ns1/e1--delete failed: DeadlineExceeded"),
              "%s", jsonfix_str(entry, "status.lastError"));
    cr_assert_null(cfix_get(&fx, &RES_JOB, "e1--delete"));
    cJSON_Delete(entry);
    cJSON_Delete(bucket);
}

/* The Job name's Pod terminated with exit status code and the termination message msg. */
static void job_pod_exits(const char *name, int code, const char *msg)
{
    static int runs;
    cJSON *job = cfix_get(&fx, &RES_JOB, name), *pod, *t;
    char text[512], pname[128];

    cr_assert_not_null(job, "Job %s", name);
    snprintf(pname, sizeof(pname), "%s-%d", name, ++runs);
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"controller-uid\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":"
             "\"c\",\"image\":\"img:1\"}]}}",
             pname, jsonfix_str(job, "metadata.uid"));
    create_text(&RES_POD, text);
    pod = jsonfix_parse("{\"containerStatuses\":[{\"state\":{\"terminated\":{}}}]}");
    t = (cJSON *)kjson_get(pod, "containerStatuses.0.state.terminated");
    cJSON_AddNumberToObject(t, "exitCode", code);
    cJSON_AddStringToObject(t, "message", msg);
    {
        char *st = cJSON_PrintUnformatted(pod);

        put_status(&RES_POD, pname, st);
        free(st);
    }
    cJSON_Delete(pod);
    put_status(&RES_JOB, name, code == 0 ? "{\"succeeded\":1}" : "{\"failed\":1}");
    cJSON_Delete(job);
}

/* Only another prefix's objects left (delete-snapshots exits 1 for them): emptied, it goes. */
Test(jobs_kubesim, a_backup_entry_with_only_foreign_objects_left_is_emptied)
{
    struct bke_ctx x = { .client = fx.c, .job_image = "img:1" };
    struct kerr_info err = { 0 };
    cJSON *bucket = entry_world(), *entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    char why[BKECLAIM_WHY_MAX];
    struct bke_bucket b;
    long requeue = 0;

    OK(bkeclaim_read_bucket(bucket, &b, &err));
    OK(bkejob_step(&x, &b, entry, why, &requeue, &err));
    job_pod_exits("e1--delete", 1,
                  "{\"prefix\":\"ns1--main\",\"objectPrefix\":\"ns1--main\",\"deleted\":4,"
                  "\"locked\":0,\"failed\":0,\"remaining\":2,\"earliestDeletable\":null,"
                  "\"dryRun\":false,\"foreign\":2,\"foreignKeys\":[\"ns1--main-2/v2/Full-1\","
                  "\"ns1--main-2/v2/Full-2\"]}");
    cJSON_Delete(entry);
    entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    OK(bkejob_step(&x, &b, entry, why, &requeue, &err));
    cJSON_Delete(entry);
    entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    cr_assert_null(entry, "its own objects are gone: the entry goes (it was retried for ever)");
    cr_assert_null(cfix_get(&fx, &RES_JOB, "e1--delete"), "its Job goes");

    /* a listing that failed (exit 1, nothing foreign) is no emptied prefix */
    create_text(&BKE_RES_ENTRY,
                "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupEntry\",\"metadata\":"
                "{\"name\":\"e1\"},\"spec\":{\"bucketName\":\"shared\",\"prefix\":\"ns1--main\","
                "\"store\":{\"provider\":\"S3\",\"container\":\"bkt\"},"
                "\"etcd\":{\"namespace\":\"ns1\",\"name\":\"main\",\"uid\":\"u1\"},"
                "\"etcdDeletedAt\":\"2026-01-01T00:00:00Z\"}}");
    entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    OK(bkejob_step(&x, &b, entry, why, &requeue, &err));
    job_pod_exits("e1--delete", 1,
                  "{\"prefix\":\"ns1--main\",\"deleted\":0,\"locked\":0,\"failed\":0,"
                  "\"remaining\":0,\"earliestDeletable\":null,\"dryRun\":false,\"foreign\":0,"
                  "\"foreignKeys\":[]}");
    cJSON_Delete(entry);
    entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    OK(bkejob_step(&x, &b, entry, why, &requeue, &err));
    cJSON_Delete(entry);
    entry = cfix_get(&fx, &BKE_RES_ENTRY, "e1");
    cr_assert_not_null(entry, "a failed run keeps the entry");
    cr_assert(strstr(jsonfix_str(entry, "status.lastError"), "exit status 1"), "%s",
              jsonfix_str(entry, "status.lastError"));
    cJSON_Delete(entry);
    cJSON_Delete(bucket);
}
