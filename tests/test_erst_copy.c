/* erst on kube-sim, pass by pass, the copy: the wait for an EtcdBackup and its failure, the
 * copy Job's arguments, the Job's result into the status and the Job deleted, the Etcd
 * created, and the crash points: a Job or an Etcd made by a pass that did not get to write the
 * status, a foreign Job, the deadline, the target claimed or the source deleted meanwhile, a
 * lease that cannot be read or written. The refusals are test_erst.c. */
#include "controller/backups/erst.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "common/store.h"
#include "controller/backups/cpjob.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"
#include "tests/support/cfix.h"
#include "tests/support/erstfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

TestSuite(erst_kubesim, .init = setup, .fini = teardown, .timeout = 60);

/* A store source with a point in time, from the live Etcd's spec, to the end. */
Test(erst_kubesim, store_source_to_completed)
{
    cJSON *job, *e, *rs;
    int64_t rev = 0;

    etcd("main", SRC_STORE);
    restore("r1", "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\","
                  "\"pointInTime\":\"2026-01-02T03:04:05Z\"},\"target\":{\"etcdName\":\"copy\","
                  "\"store\":{\"container\":\"bkt\",\"prefix\":\"ns1--copy\"}}}");
    cr_assert_eq(run("r1"), ERST_POLL_MS);
    cr_assert_str_eq(st("r1", "phase"), ERST_PHASE_COPYING, "%s", st("r1", "error"));
    cr_assert_str_eq(st("r1", "jobName"), "r1--" ERST_JOB_TAG);
    cr_assert_str_neq(st("r1", "startTime"), "");
    job = cfix_get(&fx, &RES_JOB, "r1--restore");
    cr_assert_not_null(job);
    cr_assert(job_has_arg(job, "--from-store-prefix=ns1--main"));
    cr_assert(job_has_arg(job, "--to-store-prefix=ns1--copy"));
    cr_assert(job_has_arg(job, "--until=2026-01-02T03:04:05Z"));
    cr_assert(job_has_arg(job, "--require-empty-destination"));
    cr_assert_str_eq(kjson_get_str(job, "metadata.ownerReferences.0.kind"), "EtcdRestore");
    cJSON_Delete(job);
    /* running: polled, nothing changes */
    cr_assert_eq(run("r1"), ERST_POLL_MS);
    cr_assert_str_eq(st("r1", "phase"), ERST_PHASE_COPYING);
    finish_job("r1--restore", 1, SUMMARY);
    cr_assert_gt(run("r1"), 0);
    cr_assert_str_eq(st("r1", "phase"), ERST_PHASE_CREATING, "%s", st("r1", "error"));
    cr_assert(
        ksimfix_await_status(fx.h, "/apis/batch/v1/namespaces/ns1/jobs/r1--restore", 404, 10000),
        "the Job is not deleted once its result is in the status");
    rs = cfix_get(&fx, &ERST_RES_RESTORE, "r1");
    cr_assert_str_eq(kjson_get_str(rs, "status.snapshots.0.name"),
                     "Full-00000000-00000010-1700000000.gz");
    cr_assert_str_eq(kjson_get_str(rs, "status.snapshots.1.kind"), "Incr");
    cr_assert_eq(kjson_get_int64(rs, "status.snapshots.1.lastRevision", &rev), KERR_OK);
    cr_assert_eq(rev, 20);
    cJSON_Delete(rs);
    cr_assert_eq(run("r1"), 0);
    cr_assert_str_eq(st("r1", "phase"), ERST_PHASE_COMPLETED, "%s", st("r1", "error"));
    cr_assert_str_eq(st("r1", "etcdName"), "copy");
    cr_assert_str_neq(st("r1", "completionTime"), "");
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "copy");
    cr_assert_not_null(e);
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.prefix"), "ns1--copy");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.provider"), "aws");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.secretRef.name"), "creds");
    cr_assert_str_eq(kjson_get_str(e, "metadata.labels[" ERST_LABEL_RESTORED_FROM "]"), "r1");
    cJSON_Delete(e);
    /* the source Etcd is untouched */
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.prefix"), "ns1--main");
    cJSON_Delete(e);
}

/* A backup source: waits while the backup is missing or running, fails with it, and copies
 * exactly its snapshot once Completed; the target store defaults to the live Etcd's. */
Test(erst_kubesim, backup_source)
{
    cJSON *job;

    etcd("main", SRC_STORE);
    restore("early", BACKUP_SPEC("b1"));
    cr_assert_eq(run("early"), ERST_WAIT_MS);
    cr_assert_str_eq(st("early", "phase"), ERST_PHASE_PENDING);
    cr_assert(strstr(st("early", "error"), "EtcdBackup b1: not found"), "%s", st("early", "error"));
    backup("b1", "{\"phase\":\"Uploading\"}");
    cr_assert_eq(run("early"), ERST_WAIT_MS);
    cr_assert(strstr(st("early", "error"), "phase Uploading"), "%s", st("early", "error"));
    backup("bad", "{\"phase\":\"Failed\",\"error\":\"sidecar down\"}");
    restore("frombad", BACKUP_SPEC("bad"));
    assert_refused("frombad", "EtcdBackup bad Failed: sidecar down");
    restore("pit", "{\"source\":{\"backupName\":\"b1\",\"pointInTime\":\"2026-01-01T00:00:00Z\"},"
                   "\"target\":{\"etcdName\":\"copy\",\"store\":{\"container\":\"ckt\","
                   "\"prefix\":\"p\"}}}");
    assert_refused("pit", "pointInTime is for a store source only");
    backup("b2", "{\"phase\":\"Completed\",\"snapshot\":{\"name\":"
                 "\"Full-00000000-00000010-1700000000.gz\",\"kind\":\"Full\"}}");
    restore("ok", BACKUP_SPEC("b2"));
    cr_assert_eq(run("ok"), ERST_POLL_MS);
    cr_assert_str_eq(st("ok", "phase"), ERST_PHASE_COPYING, "%s", st("ok", "error"));
    job = cfix_get(&fx, &RES_JOB, "ok--restore");
    cr_assert(job_has_arg(job, "--from-store-container=offsite"));
    cr_assert(job_has_arg(job, "--from-store-prefix=backups/main"));
    cr_assert(job_has_arg(job, "--snapshot=Full-00000000-00000010-1700000000.gz"));
    cr_assert(job_has_arg(job, "--to-storage-provider=S3"), "the live Etcd's provider (aws)");
    cr_assert(job_has_arg(job, "--require-empty-destination"));
    cJSON_Delete(job);
}

/* The copy fails (a target prefix with snapshots already): Failed with the Job's error line,
 * the Job deleted, no Etcd. */
Test(erst_kubesim, copy_fails)
{
    etcd("main", SRC_STORE);
    restore("r2", STORE_SPEC("ns1--copy"));
    cr_assert_eq(run("r2"), ERST_POLL_MS);
    finish_job("r2--restore", 0,
               "{\"snapshots\":[],\"total\":0,\"error\":\"the destination prefix \\\"ns1--copy\\\" "
               "already holds 1 snapshot(s)\"}");
    cr_assert_eq(run("r2"), 0);
    cr_assert_str_eq(st("r2", "phase"), ERST_PHASE_FAILED);
    cr_assert(strstr(st("r2", "error"), "already holds 1 snapshot"), "%s", st("r2", "error"));
    cr_assert_eq(ksimfix_status(fx.h, "/apis/batch/v1/namespaces/ns1/jobs/r2--restore"), 404);
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_ETCD, "copy"));
}

/* Crash points: a Job no status records (a pass of a controller that created it before the
 * status, then died: stopped, its copy recorded, before a new one); the Etcd created by a pass that
 * died before Completed (ours by the label: fine; someone else's: Failed, and it is left alone). */
Test(erst_kubesim, crash_safety)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    struct kerr_info err = { 0 };
    cJSON *rs, *e;
    int i;

    etcd("main", SRC_STORE);
    restore("r3", STORE_SPEC("ns1--copy"));
    cr_assert_eq(run("r3"), ERST_POLL_MS);
    /* back to no status, the Job left: as if the status write had not happened */
    rs = cfix_get(&fx, &ERST_RES_RESTORE, "r3");
    cJSON_DeleteItemFromObjectCaseSensitive(rs, "status");
    OK(kjson_set(rs, "status", cJSON_CreateObject(), &err));
    OK(k8s_update(fx.c, &ERST_RES_RESTORE, CFIX_NS, "r3", rs, &wo, NULL, &err));
    cJSON_Delete(rs);
    cr_assert_eq(run("r3"), ERST_POLL_MS, "the Job nothing records is stopped first");
    cr_assert_str_eq(st("r3", "jobName"), "r3--restore", "its copy recorded while it may write");
    cr_assert_str_neq(st("r3", "copyStartedAt"), "");
    cr_assert_str_neq(st("r3", "phase"), ERST_PHASE_FAILED);
    rs = cfix_get(&fx, &RES_JOB, "r3--restore");
    cr_assert(kjson_has(rs, "metadata.deletionTimestamp"), "the Job is being deleted");
    cr_assert_eq(run("r3"), ERST_POLL_MS, "waited for while it is there");
    cr_assert_str_eq(st("r3", "phase"), "", "no copy meanwhile");
    /* its Pod gone: the garbage collector drops the foreground finalizer */
    (void)kjson_delete(rs, "metadata.finalizers");
    OK(k8s_update(fx.c, &RES_JOB, CFIX_NS, "r3--restore", rs, NULL, NULL, &err));
    cJSON_Delete(rs);
    for (i = 0; i < 5 && strcmp(st("r3", "phase"), ERST_PHASE_COPYING) != 0; i++)
        (void)run("r3");
    cr_assert_str_eq(st("r3", "phase"), ERST_PHASE_COPYING, "%s", st("r3", "error"));
    finish_job("r3--restore", 1, SUMMARY);
    cr_assert_gt(run("r3"), 0);
    cr_assert_str_eq(st("r3", "phase"), ERST_PHASE_CREATING);
    /* the Etcd made by an earlier pass (ours) */
    rs = cfix_get(&fx, &ERST_RES_RESTORE, "r3");
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "main");
    {
        struct erst_store to = { "aws", "bkt", "ns1--copy", NULL, "creds" };
        cJSON *mine = NULL;

        OK(erst_build_etcd(rs, kjson_get(e, "spec"), kjson_get(e, "metadata"), &to, &mine, &err));
        cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, mine));
        cJSON_Delete(mine);
    }
    cJSON_Delete(e);
    cJSON_Delete(rs);
    cr_assert_eq(run("r3"), 0);
    cr_assert_str_eq(st("r3", "phase"), ERST_PHASE_COMPLETED, "%s", st("r3", "error"));

    /* someone else's Etcd under the target name while the copy ran */
    restore("r4",
            "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\"},\"target\":{"
            "\"etcdName\":\"late\",\"store\":{\"container\":\"bkt\",\"prefix\":\"ns1--late\"}}}");
    cr_assert_eq(run("r4"), ERST_POLL_MS);
    finish_job("r4--restore", 1, SUMMARY);
    cr_assert_gt(run("r4"), 0);
    etcd("late", "{\"provider\":\"S3\",\"container\":\"other\",\"prefix\":\"x\"}");
    cr_assert_eq(run("r4"), 0);
    cr_assert_str_eq(st("r4", "phase"), ERST_PHASE_FAILED);
    cr_assert(strstr(st("r4", "error"), "created meanwhile by someone else"), "%s",
              st("r4", "error"));
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "late");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.container"), "other");
    cJSON_Delete(e);
}

/* A Job of the copy Job's name that is not the restore's: Failed naming it, the Job left alone.
 * A copy Job the deadline stopped before any Pod ran: Failed with DeadlineExceeded. */
Test(erst_kubesim, a_foreign_job_and_the_deadline)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    struct kerr_info err = { 0 };
    cJSON *job, *patch;
    char uid[64];

    etcd("main", SRC_STORE);
    job = jsonfix_parse("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
                        "\"r5--restore\"},\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":"
                        "\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"other:1\"}]}}}}");
    patch = cfix_create(&fx, &RES_JOB, job);
    snprintf(uid, sizeof(uid), "%s", kjson_get_str(patch, "metadata.uid"));
    cJSON_Delete(patch);
    cJSON_Delete(job);
    restore("r5", STORE_SPEC("ns1--copy"));
    assert_refused("r5", "the copy Job: Job ns1/r5--restore exists and is not ours: it has no "
                         "owner");
    job = cfix_get(&fx, &RES_JOB, "r5--restore");
    cr_assert_str_eq(kjson_get_str(job, "metadata.uid"), uid, "left alone");
    cJSON_Delete(job);

    restore("r6", STORE_SPEC("ns1--copy"));
    cr_assert_eq(run("r6"), ERST_POLL_MS);
    job = cfix_get(&fx, &RES_JOB, "r6--restore");
    cr_assert_eq(jsonfix_int(job, "spec.activeDeadlineSeconds"), PODJOB_COPY_DEADLINE_S);
    cJSON_Delete(job);
    patch = jsonfix_parse("{\"status\":{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\","
                          "\"reason\":\"DeadlineExceeded\",\"message\":\"Job was active longer "
                          "than specified deadline\"}]}}");
    OK(k8s_patch(fx.c, &RES_JOB, CFIX_NS, "r6--restore", K8S_PATCH_MERGE, patch, &wo, NULL, &err));
    cJSON_Delete(patch);
    run("r6");
    cr_assert_str_eq(st("r6", "phase"), ERST_PHASE_FAILED);
    cr_assert(strstr(st("r6", "error"), "DeadlineExceeded: Job was active longer than specified"),
              "%s", st("r6", "error"));
    cr_assert(
        ksimfix_await_status(fx.h, "/apis/batch/v1/namespaces/ns1/jobs/r6--restore", 404, 10000),
        "the stopped Job is deleted");
}

/* The target prefix has no owner while the copy runs: an Etcd that claims an overlapping one
 * meanwhile (admitted, or made without the webhook) makes the restore fail, not share it. */
Test(erst_kubesim, target_claimed_while_copying)
{
    etcd("main", SRC_STORE);
    restore("r1", STORE_SPEC("ns1--copy"));
    cr_assert_eq(run("r1"), ERST_POLL_MS);
    cr_assert_str_eq(st("r1", "phase"), ERST_PHASE_COPYING, "%s", st("r1", "error"));
    etcd("other", "{\"provider\":\"S3\",\"container\":\"bkt\",\"prefix\":\"ns1--copy-2\","
                  "\"secretRef\":{\"name\":\"creds\"}}");
    finish_job("r1--restore", 1, SUMMARY);
    run("r1");
    cr_assert_str_eq(st("r1", "phase"), ERST_PHASE_CREATING, "%s", st("r1", "error"));
    run("r1");
    cr_assert_str_eq(st("r1", "phase"), ERST_PHASE_FAILED);
    cr_assert(strstr(st("r1", "error"),
                     "spec.target.store.prefix \"ns1--copy\" was claimed while the copy ran: it "
                     "overlaps the prefix \"ns1--copy-2\" of Etcd ns1/other"),
              "%s", st("r1", "error"));
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_ETCD, "copy"), "no Etcd on a shared prefix");
}

/* A source prefix a BackupEntry in phase Deleting overlaps is being emptied by its deletion
 * Job: the restore is refused before any copy Job exists (one PendingDeletion is no reason). */
Test(erst_kubesim, source_being_deleted)
{
    static const struct k8s_resource res_entry = { "etcd-warden.io", "v1alpha1", "backupentries",
                                                   0 };
    cJSON *entry = jsonfix_parse(
        "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupEntry\","
        "\"metadata\":{\"name\":\"ns1--main--0123abcd4567cdef\"},\"spec\":{\"bucketName\":\"b\","
        "\"prefix\":\"ns1--main\",\"store\":{\"provider\":\"S3\",\"container\":\"bkt\"},"
        "\"etcd\":{\"namespace\":\"ns1\",\"name\":\"main\",\"uid\":\"u\"},"
        "\"etcdDeletedAt\":\"2026-01-01T00:00:00Z\"}}");
    cJSON *created = cfix_create(&fx, &res_entry, entry);
    struct kerr_info err;
    cJSON *job;

    etcd("main", SRC_STORE);
    restore("pending", STORE_SPEC("ns1--restored"));
    cr_assert_eq(run("pending"), ERST_POLL_MS);
    cr_assert_str_eq(st("pending", "phase"), ERST_PHASE_COPYING, "%s", st("pending", "error"));
    cr_assert_eq(kjson_set(created, "status",
                           jsonfix_parse("{\"phase\":\"" BSTORE_ENTRY_DELETING "\"}"), NULL),
                 KERR_OK);
    cr_assert_eq(k8s_update(fx.c, &res_entry, NULL, "ns1--main--0123abcd4567cdef", created,
                            &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err),
                 KERR_OK, "%s", err.msg);
    restore("deleting", STORE_SPEC("other--restored"));
    assert_refused("deleting",
                   "BackupEntry ns1--main--0123abcd4567cdef of Etcd ns1/main, which is being "
                   "deleted");
    job = cfix_get(&fx, &RES_JOB, "deleting--restore");
    cr_assert_null(job, "no copy Job from a prefix being deleted");
    cJSON_Delete(created);
    cJSON_Delete(entry);
}

/* The claim Leases unreadable, then unwritable: no copy Job, the restore Pending with the error
 * and looked at again; once they answer, the copy starts. */
Test(erst_kubesim, a_lease_that_cannot_be_read_or_written_makes_no_copy)
{
    etcd("main", SRC_STORE);
    restore("r9", STORE_SPEC("ns1--nine"));
    ksimfix_faults(fx.h, "{\"errorRate\":1,\"match\":\"/leases\"}");
    cr_assert_eq(run("r9"), ERST_WAIT_MS);
    cr_assert_str_eq(st("r9", "phase"), ERST_PHASE_PENDING);
    cr_assert(strstr(st("r9", "error"), "the claim Leases could not be read"), "%s",
              st("r9", "error"));
    cr_assert_eq(ksimfix_status(fx.h, "/apis/batch/v1/namespaces/ns1/jobs/r9--restore"), 404);
    /* readable, not writable */
    ksimfix_faults(fx.h, "{\"match\":\"PUT /apis/coordination.k8s.io\"}");
    ksimfix_faults(fx.h, "{\"errorRate\":1,\"match\":\"POST /apis/coordination.k8s.io\"}");
    cr_assert_eq(run("r9"), ERST_WAIT_MS);
    cr_assert_str_eq(st("r9", "phase"), ERST_PHASE_PENDING);
    cr_assert(strstr(st("r9", "error"), "recording the claim of prefix \"ns1--nine\""), "%s",
              st("r9", "error"));
    cr_assert_eq(ksimfix_status(fx.h, "/apis/batch/v1/namespaces/ns1/jobs/r9--restore"), 404);
    ksimfix_faults(fx.h, "{\"reset\":true}");
    cr_assert_eq(run("r9"), ERST_POLL_MS);
    cr_assert_str_eq(st("r9", "phase"), ERST_PHASE_COPYING, "%s", st("r9", "error"));
    cr_assert_eq(ksimfix_status(fx.h, "/apis/batch/v1/namespaces/ns1/jobs/r9--restore"), 200);
}
