/*
 * Tests of controller/cpjob (the copy and delete Jobs, the summary read from
 * a Pod) and controller/ebk (the EtcdBackup reconcile: snapshot, copy, its
 * failures and the claim of its destination) on an in-process kube-sim
 * (tests/support/ebkfix: the test stands for the executor, the Job controller
 * and kubelet, so every "while X runs" is a state the test holds, not a race).
 * A retained copy handed to a BackupEntry: tests/test_ebk_retain.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/k8s.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/pclaim.h"
#include "controller/backups/cpjob.h"
#include "controller/backups/ebk.h"
#include "controller/core/etcdspec.h"
#include "tests/support/cfix.h"
#include "tests/support/ebkfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const char *arg_of(const cJSON *job, const char *prefix)
{
    const cJSON *a;

    cJSON_ArrayForEach (a, kjson_get_arr(job, "spec.template.spec.containers.0.args"))
        if (cJSON_IsString(a) && strncmp(a->valuestring, prefix, strlen(prefix)) == 0)
            return a->valuestring;
    return NULL;
}

static const char OWNER[] =
    "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\","
    "\"metadata\":{\"name\":\"b1\",\"namespace\":\"ns1\",\"uid\":\"u-b1\"}}";

/* ---- cpjob, pure ---- */

Test(cpjob, copy_job_between_s3_and_abs)
{
    cJSON *owner = jsonfix_parse(OWNER), *job = NULL;
    cJSON *s1 = jsonfix_parse("{\"metadata\":{\"name\":\"etcd-backup\"}}");
    cJSON *s2 = jsonfix_parse("{\"metadata\":{\"name\":\"dest\"}}");
    struct cpjob_spec s = { .name = "b1--copy", .ns = "ns1", .owner = owner };
    struct kerr_info err = { 0 };

    s.from = (struct cpjob_store){ "aws", "bkt", "ns1/main", NULL, s1, NULL };
    s.to = (struct cpjob_store){ "ABS", "offsite", "copies/main", "http://127.0.0.1:1", s2, NULL };
    s.snapshot = "Full-00000000-00000010-1700000000.gz";
    OK(cpjob_build(&s, &job, &err));
    cr_assert_str_eq(jsonfix_str(job, "metadata.name"), "b1--copy");
    cr_assert_str_eq(jsonfix_str(job, "metadata.labels[etcd-warden.io/copy-for]"), "etcdbackup.b1");
    cr_assert_str_eq(jsonfix_str(job, "spec.template.metadata.labels[etcd-warden.io/copy-for]"),
                     "etcdbackup.b1");
    cr_assert_str_eq(jsonfix_str(job, "metadata.ownerReferences.0.uid"), "u-b1");
    cr_assert_str_eq(jsonfix_str(job, "spec.template.spec.restartPolicy"), "Never");
    cr_assert_eq(jsonfix_int(job, "spec.backoffLimit"), 0);
    cr_assert_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.command.1"), "copy");
    cr_assert_str_eq(arg_of(job, "--from-storage-provider="), "--from-storage-provider=S3");
    cr_assert_str_eq(arg_of(job, "--to-storage-provider="), "--to-storage-provider=ABS");
    cr_assert_str_eq(arg_of(job, "--from-store-prefix="), "--from-store-prefix=ns1/main");
    cr_assert_str_eq(arg_of(job, "--to-store-endpoint-override="),
                     "--to-store-endpoint-override=http://127.0.0.1:1");
    cr_assert_null(arg_of(job, "--from-store-endpoint-override"));
    cr_assert_str_eq(arg_of(job, "--from-credentials-dir="),
                     "--from-credentials-dir=" CPJOB_FROM_DIR);
    cr_assert_str_eq(arg_of(job, "--to-credentials-dir="), "--to-credentials-dir=" CPJOB_TO_DIR);
    cr_assert_str_eq(arg_of(job, "--snapshot="), "--snapshot=Full-00000000-00000010-1700000000.gz");
    cr_assert_null(arg_of(job, "--latest-full"));
    cr_assert_str_eq(jsonfix_str(job, "spec.template.spec.volumes.0.secret.secretName"),
                     "etcd-backup");
    cr_assert_str_eq(jsonfix_str(job, "spec.template.spec.volumes.1.secret.secretName"), "dest");
    cr_assert_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.volumeMounts.1.mountPath"),
                     CPJOB_TO_DIR);
    cJSON_Delete(job);

    s.snapshot = NULL;
    s.latest_full = 1;
    s.until = "2026-01-01T00:00:00Z";
    OK(cpjob_build(&s, &job, &err));
    cr_assert_not_null(arg_of(job, "--latest-full"));
    cr_assert_str_eq(arg_of(job, "--until="), "--until=2026-01-01T00:00:00Z");
    cJSON_Delete(job);

    s.snapshot = "x";
    cr_assert_eq(cpjob_build(&s, &job, &err), KERR_INVAL);
    s.snapshot = NULL;
    s.to.provider = "gcp";
    cr_assert_eq(cpjob_build(&s, &job, &err), KERR_UNSUPPORTED);
    cr_assert(strstr(err.msg, "not supported"), "%s", err.msg);
    s.to.provider = "S3";
    s.to.secret = NULL;
    cr_assert_eq(cpjob_build(&s, &job, &err), KERR_INVAL);
    cr_assert_null(job);
    cJSON_Delete(owner);
    cJSON_Delete(s1);
    cJSON_Delete(s2);
}

Test(cpjob, local_stores_share_one_volume_and_delete_job)
{
    cJSON *owner = jsonfix_parse(OWNER), *job = NULL;
    cJSON *sec = jsonfix_parse("{\"metadata\":{\"name\":\"local\"},\"data\":{\"hostPath\":"
                               "\"L3Nydi9idWNrZXRz\"}}"); /* /srv/buckets */
    struct cpjob_spec s = { .name = "b1--copy", .ns = "ns1", .owner = owner };
    struct cpjob_delete_spec d = { .name = "b1--delete-copy", .ns = "ns1", .owner = owner };
    struct kerr_info err = { 0 };

    s.from = (struct cpjob_store){ "local", "dir", "ns1/main", NULL, sec, NULL };
    s.to = (struct cpjob_store){ "Local", "dir", "copies", NULL, sec, NULL };
    OK(cpjob_build(&s, &job, &err));
    cr_assert_eq(cJSON_GetArraySize(kjson_get(job, "spec.template.spec.volumes")), 1);
    cr_assert_str_eq(jsonfix_str(job, "spec.template.spec.volumes.0.hostPath.path"),
                     "/srv/buckets/dir");
    cr_assert_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.volumeMounts.0.mountPath"),
                     "/home/nonroot/dir");
    cr_assert_null(arg_of(job, "--from-credentials-dir"));
    cJSON_Delete(job);

    d.store = (struct cpjob_store){ "aws", "offsite", "copies/v2/Full-1", NULL, sec, NULL };
    OK(cpjob_build_delete(&d, &job, &err));
    cr_assert_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.command.1"),
                     "delete-snapshots");
    cr_assert_str_eq(arg_of(job, "--store-prefix="), "--store-prefix=copies/v2/Full-1");
    cr_assert_str_eq(arg_of(job, "--storage-provider="), "--storage-provider=S3");
    cr_assert_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.env.1.name"),
                     "AWS_APPLICATION_CREDENTIALS");
    cr_assert_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.env.1.value"), CPJOB_TO_DIR);
    cr_assert_null(kjson_get(job, "metadata.ownerReferences"));
    cr_assert_null(arg_of(job, "--written-since"), "no window unless given");
    cr_assert_null(arg_of(job, "--written-before"));
    cr_assert_null(arg_of(job, "--only-copies"), "every object unless asked");
    cJSON_Delete(job);
    /* a window (an EtcdRestore's copy): only what was written then */
    d.written_since = "2026-11-29T04:00:00Z";
    d.written_before = "2026-11-29T05:00:00Z";
    OK(cpjob_build_delete(&d, &job, &err));
    cr_assert_str_eq(arg_of(job, "--written-since="), "--written-since=2026-11-29T04:00:00Z");
    cr_assert_str_eq(arg_of(job, "--written-before="), "--written-before=2026-11-29T05:00:00Z");
    cJSON_Delete(job);
    /* what warden-snapshot wrote only (a copy's clean-up) */
    d.copies_only = 1;
    OK(cpjob_build_delete(&d, &job, &err));
    cr_assert_str_eq(arg_of(job, "--only-copies"), "--only-copies");
    cJSON_Delete(job);
    cJSON_Delete(owner);
    cJSON_Delete(sec);
}

Test(cpjob, summary_from_the_pod)
{
    struct cpjob_summary s = { 0 };
    cJSON *p =
        ebkfix_pod_with("log line\n{\"snapshots\":[{\"name\":\"Full-00000000-00000010-1700000000."
                        "gz\",\"kind\":\"Full\",\"startRevision\":0,\"lastRevision\":10,\"size\":"
                        "123,\"md5\":\"0123456789abcdef0123456789abcdef\",\"destination\":\"c/v2/"
                        "Full-00000000-00000010-1700000000.gz\"}],\"total\":1,\"error\":\"\"}\n",
                        0);

    cpjob_read_pod(p, &s);
    cr_assert(s.parsed);
    cr_assert_eq(s.exit_code, 0);
    cr_assert_eq(s.n, 1);
    cr_assert_eq(s.total, 1);
    cr_assert_str_eq(s.snaps[0].kind, "Full");
    cr_assert_eq(s.snaps[0].last_rev, 10);
    cr_assert_eq(s.snaps[0].size, 123);
    cr_assert_str_eq(s.snaps[0].destination, "c/v2/Full-00000000-00000010-1700000000.gz");
    cJSON_Delete(p);

    p = ebkfix_pod_with("panic: something broke", 2);
    cpjob_read_pod(p, &s);
    cr_assert_not(s.parsed);
    cr_assert_eq(s.exit_code, 2);
    cr_assert_str_eq(s.error, "panic: something broke");
    cJSON_Delete(p);
}

Test(ebk, snapshot_named_by_the_task)
{
    char out[128];
    cJSON *t = jsonfix_parse("{\"status\":{\"lastOperation\":{\"description\":\"full snapshot "
                             "Full-00000000-00000010-1700000000.gz taken (last revision 10)\"}}}");

    cr_assert(ebk_snapshot_of(t, out, sizeof(out)));
    cr_assert_str_eq(out, "Full-00000000-00000010-1700000000.gz");
    cJSON_Delete(t);
    t = jsonfix_parse("{\"status\":{\"lastOperation\":{\"description\":\"Snapshot taken\"}}}");
    cr_assert_not(ebk_snapshot_of(t, out, sizeof(out)));
    cJSON_Delete(t);
}

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

TestSuite(ebk_kubesim, .init = setup, .fini = teardown, .timeout = 60);

Test(ebk_kubesim, snapshot_copy_complete_then_delete_the_copy)
{
    struct kerr_info err = { 0 };
    char ph[32];
    cJSON *t, *b, *job;

    ebkfix_world(&ef, "S3");
    cr_assert_gt(ebkfix_step(&ef), 0);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Snapshotting");
    t = cfix_get(&ef.fx, &ETCDSPEC_RES_OPSTASK, "b1");
    cr_assert_not_null(t, "the EtcdOpsTask named after the backup");
    cr_assert_str_eq(jsonfix_str(t, "spec.etcdName"), "main");
    cr_assert_str_eq(jsonfix_str(t, "spec.config.onDemandSnapshot.type"), "full");
    cr_assert_str_eq(jsonfix_str(t, "metadata.ownerReferences.0.kind"), "EtcdBackup");
    cJSON_Delete(t);
    cr_assert_gt(ebkfix_step(&ef), 0, "the task runs: polled");
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Snapshotting");

    ebkfix_task_succeeded(&ef);
    ebkfix_step(&ef);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Uploading");
    job = cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--copy");
    cr_assert_not_null(job);
    cr_assert_str_eq(arg_of(job, "--snapshot="), "--snapshot=Full-00000000-00000010-1700000000.gz");
    cr_assert_str_eq(arg_of(job, "--to-store-prefix="), "--to-store-prefix=copies/main");
    cJSON_Delete(job);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "metadata.finalizers.0"), EBK_FINALIZER);
    cJSON_Delete(b);
    cr_assert_gt(ebkfix_step(&ef), 0, "the copy runs: polled");

    ebkfix_finish_job(&ef, "b1--copy", EBKFIX_SUMMARY, 0);
    ebkfix_step(&ef);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Completed");
    cr_assert_str_eq(jsonfix_str(b, "status.snapshot.name"),
                     "Full-00000000-00000010-1700000000.gz");
    cr_assert_eq(jsonfix_int(b, "status.snapshot.size"), 123);
    cr_assert_eq(jsonfix_int(b, "status.snapshot.lastRevision"), 10);
    cr_assert_str_eq(jsonfix_str(b, "status.snapshot.createdOn"), "2023-11-14T22:13:20Z");
    cr_assert_str_eq(jsonfix_str(b, "status.destinationKey"),
                     "copies/main/v2/Full-00000000-00000010-1700000000.gz");
    cr_assert_not_null(kjson_get(b, "status.completionTime"));
    cr_assert_eq(jsonfix_int(b, "status.observedGeneration"), 1);
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--copy"),
                   "the Job goes once its result is written");
    cr_assert_eq(ebkfix_step(&ef), 0, "Completed is terminal");

    /* spec.destination edited after the upload: the deletion goes where the copy was written */
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.destination.container"), "offsite");
    kjson_set_str(b, "spec.destination.container", "someone-elses", NULL);
    OK(k8s_update(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", b, NULL, NULL, &err));
    cJSON_Delete(b);

    /* deleted: the copy's delete Job; a locked copy keeps the finalizer */
    OK(k8s_delete(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    ebkfix_step(&ef);
    job = cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--delete-copy");
    cr_assert_not_null(job);
    cr_assert_str_eq(arg_of(job, "--store-prefix="),
                     "--store-prefix=copies/main/v2/Full-00000000-00000010-1700000000.gz");
    cr_assert_str_eq(arg_of(job, "--store-container="), "--store-container=offsite");
    cJSON_Delete(job);
    ebkfix_finish_job(&ef, "b1--delete-copy",
                      "{\"prefix\":\"x\",\"deleted\":0,\"locked\":1,\"failed\":0,\"remaining\":1,"
                      "\"earliestDeletable\":\"2099-01-01T00:00:00Z\",\"dryRun\":false}",
                      0);
    cr_assert_gt(ebkfix_step(&ef), 1000L, "retried when the lock expires");
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_not_null(b, "a locked copy keeps the backup");
    cr_assert(strstr(jsonfix_str(b, "status.deletionError"), "locked"), "%s",
              jsonfix_str(b, "status.deletionError"));
    cr_assert_str_eq(jsonfix_str(b, "status.nextDeletionAt"), "2099-01-01T00:00:00Z");
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--delete-copy"));
    ebkfix_step(&ef);
    cr_assert_null(cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--delete-copy"),
                   "no new Job before the lock ends");

    /* the lock is over (the test moves the retry time): deleted, the backup goes */
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    kjson_set_str(b, "status.nextDeletionAt", "2020-01-01T00:00:00Z", NULL);
    OK(k8s_update(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", b,
                  &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cJSON_Delete(b);
    ebkfix_step(&ef);
    ebkfix_finish_job(&ef, "b1--delete-copy",
                      "{\"prefix\":\"x\",\"deleted\":1,\"locked\":0,\"failed\":0,\"remaining\":0,"
                      "\"earliestDeletable\":null,\"dryRun\":false}",
                      0);
    ebkfix_step(&ef);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "(gone)");
}

/* Deleted while its copy runs: it says it waits and how to stop; the Job deleted, it goes. */
Test(ebk_kubesim, deleted_while_uploading_says_it_waits_and_how_to_stop)
{
    struct kerr_info err = { 0 };
    char ph[32];
    const char *msg;
    cJSON *b, *job;
    char *args;

    ebkfix_world(&ef, "S3");
    ebkfix_step(&ef);
    ebkfix_task_succeeded(&ef);
    ebkfix_step(&ef);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Uploading");
    OK(k8s_delete(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    cr_assert_gt(ebkfix_step(&ef), 0, "the copy runs: polled");
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_not_null(b, "the finalizer waits for the copy's result");
    msg = jsonfix_str(b, "status.deletionError");
    cr_assert(strstr(msg, "deleted while its copy Job " CFIX_NS "/b1--copy runs"), "%s", msg);
    cr_assert(strstr(msg, "kubectl -n " CFIX_NS " delete job b1--copy"), "%s", msg);
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Uploading");
    cJSON_Delete(b);
    cr_assert_gt(ebkfix_step(&ef), 0, "still polled, said once");

    OK(k8s_delete(ef.fx.c, &EBKFIX_RES_JOB, CFIX_NS, "b1--copy", NULL, NULL, &err));
    ebkfix_step(&ef);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Failed");
    ebkfix_step(&ef);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_not_null(b, "its copy Job was made: what it may have written is deleted first");
    cJSON_Delete(b);
    job = cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--delete-copy");
    cr_assert_not_null(job, "the delete Job of what the copy may have written");
    args = cJSON_PrintUnformatted(kjson_get(job, "spec.template.spec.containers"));
    cr_assert(strstr(args, "Full-00000000-00000010-1700000000.gz"), "the snapshot copied: %s",
              args);
    cr_assert(strstr(args, "--written-since"), "only what was written since the copy: %s", args);
    cr_assert(strstr(args, "--only-copies"), "only what warden-snapshot wrote: %s", args);
    free(args);
    cJSON_Delete(job);
}

/* The destination in the live prefix of another Etcd, as its sidecar lists it: never copied. */
Test(ebk_kubesim, destination_in_another_clusters_prefix)
{
    cJSON *b, *e = cfix_etcd("events",
                             "{\"provider\":\"S3\",\"container\":\"offsite\",\"prefix\":"
                             "\"copies/main-2\",\"secretRef\":{\"name\":\"etcd-backup\"}}",
                             NULL);

    cJSON_Delete(cfix_create(&ef.fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
    ebkfix_world(&ef, "S3");
    ebkfix_step(&ef);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert(strstr(jsonfix_str(b, "status.error"),
                     "overlaps the prefix \"copies/main-2\" of Etcd ns1/events"),
              "%s", jsonfix_str(b, "status.error"));
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&ef.fx, &ETCDSPEC_RES_OPSTASK, "b1"), "no snapshot for a refused copy");
}

Test(ebk_kubesim, waits_for_another_unfinished_task)
{
    char ph[32];

    ebkfix_world(&ef, "S3");
    ebkfix_create_text(
        &ef, &ETCDSPEC_RES_OPSTASK,
        "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"EtcdOpsTask\","
        "\"metadata\":{\"name\":\"presync\"},\"spec\":{\"etcdName\":\"main\",\"config\":"
        "{\"onDemandSnapshot\":{\"type\":\"full\"}}}}");
    cr_assert_eq(ebkfix_step(&ef), EBK_WAIT_MS);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Pending");
    cr_assert_null(cfix_get(&ef.fx, &ETCDSPEC_RES_OPSTASK, "b1"), "no second task");
    ebkfix_put_status(&ef, &ETCDSPEC_RES_OPSTASK, "presync", "{\"state\":\"Succeeded\"}");
    ebkfix_step(&ef);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Snapshotting");
}

Test(ebk_kubesim, failures_are_terminal_with_a_clear_error)
{
    char ph[32];
    cJSON *b;

    ebkfix_world(&ef, "gcp");
    ebkfix_step(&ef);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert(strstr(jsonfix_str(b, "status.error"), "not supported"), "%s",
              jsonfix_str(b, "status.error"));
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&ef.fx, &ETCDSPEC_RES_OPSTASK, "b1"));
    cr_assert_eq(ebkfix_step(&ef), 0);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Failed");
}

Test(ebk_kubesim, failed_task_and_failed_copy)
{
    struct kerr_info err = { 0 };
    cJSON *b;

    ebkfix_world(&ef, "S3");
    ebkfix_step(&ef);
    ebkfix_put_status(&ef, &ETCDSPEC_RES_OPSTASK, "b1",
                      "{\"state\":\"Failed\",\"lastErrors\":[{\"code\":\"ERR_CREATE_SNAPSHOT\","
                      "\"description\":\"sidecar answered 500\"}]}");
    ebkfix_step(&ef);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert(strstr(jsonfix_str(b, "status.error"), "sidecar answered 500"), "%s",
              jsonfix_str(b, "status.error"));
    cJSON_Delete(b);

    /* a second backup whose copy fails: no snapshot named by the task (etcd-druid's executor) */
    OK(k8s_delete(ef.fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    OK(k8s_delete(ef.fx.c, &ETCDSPEC_RES_OPSTASK, CFIX_NS, "b1", NULL, NULL, &err));
    ebkfix_create_text(
        &ef, &EBK_RES_BACKUP,
        "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
        "{\"name\":\"b1\"},\"spec\":{\"etcdName\":\"main\",\"deletionPolicy\":\"Retain\","
        "\"destination\":{\"provider\":\"aws\",\"container\":\"offsite\",\"prefix\":\"c\","
        "\"secretRef\":{\"name\":\"dest\"}}}}");
    ebkfix_step(&ef);
    ebkfix_put_status(
        &ef, &ETCDSPEC_RES_OPSTASK, "b1",
        "{\"state\":\"Succeeded\",\"lastOperation\":{\"description\":\"Snapshot taken\","
        "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}}");
    ebkfix_step(&ef);
    b = cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--copy");
    cr_assert_not_null(arg_of(b, "--latest-full"));
    cr_assert_str_eq(arg_of(b, "--until="), "--until=2026-01-01T00:00:00Z");
    cJSON_Delete(b);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    /* Retain too: its finalizer hands the copy to a BackupEntry before the backup goes */
    cr_assert_str_eq(jsonfix_str(b, "metadata.finalizers.0"), EBK_FINALIZER);
    cJSON_Delete(b);
    ebkfix_finish_job(&ef, "b1--copy",
                      "{\"snapshots\":[],\"total\":0,\"error\":\"no full snapshot under x\"}", 1);
    ebkfix_step(&ef);
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert(strstr(jsonfix_str(b, "status.error"), "no full snapshot under x"), "%s",
              jsonfix_str(b, "status.error"));
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--copy"));
}

/* An Etcd warden-webhook admitted onto the destination and the API server has not stored yet
 * (another webhook holding it): only its record in the claim Lease says so. The copy is
 * refused, no Job; and the copy's own record, once written, refuses such an Etcd. */
Test(ebk_kubesim, an_admitted_etcd_not_stored_yet_refuses_the_copy)
{
    struct bstore_claim c = { "", NULL };
    struct pclaim_other o;
    struct kerr_info err = { 0 };
    char ph[32];
    cJSON *b;

    ebkfix_world(&ef, "S3");
    ebkfix_step(&ef);
    cr_assert_eq(bstore_claim_init(&c, "S3", "offsite", NULL, "copies/main", &err), KERR_OK);
    OK(pclaim_take(ef.fx.c, k8s_client_namespace(ef.fx.c),
                   &(struct pclaim){ "other", "x", c.key, c.prefix, NULL, NULL, NULL, NULL, NULL },
                   &o, &err));
    cr_assert_str_eq(o.what, "");
    ebkfix_task_succeeded(&ef);
    ebkfix_step(&ef);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Failed");
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert(strstr(jsonfix_str(b, "status.error"),
                     "spec.destination.prefix \"copies/main\" overlaps a prefix claimed from "
                     "another namespace in the same store"),
              "%s", jsonfix_str(b, "status.error"));
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--copy"), "no copy Job");
    bstore_claim_release(&c);
}

Test(ebk_kubesim, the_copy_record_refuses_an_etcd_admitted_after)
{
    struct bstore_claim c = { "", NULL };
    struct pclaim_other o;
    struct kerr_info err = { 0 };
    char ph[32];

    ebkfix_world(&ef, "S3");
    ebkfix_step(&ef);
    ebkfix_task_succeeded(&ef);
    ebkfix_step(&ef);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Uploading");
    cr_assert_eq(bstore_claim_init(&c, "S3", "offsite", NULL, "copies/main/x", &err), KERR_OK);
    OK(pclaim_take(ef.fx.c, k8s_client_namespace(ef.fx.c),
                   &(struct pclaim){ "other", "x", c.key, c.prefix, NULL, NULL, NULL, NULL, NULL },
                   &o, &err));
    cr_assert_str_eq(o.what, "the destination prefix \"copies/main\" of EtcdBackup ns1/b1, whose "
                             "copy is starting");
    bstore_claim_release(&c);
}

/* A claim Lease that cannot be read or written: no copy Job, the phase kept with the error in
 * status.error, looked at again; once it answers, the copy starts. */
Test(ebk_kubesim, a_lease_that_cannot_be_written_makes_no_copy)
{
    char ph[32];
    cJSON *b;

    ebkfix_world(&ef, "S3");
    ebkfix_step(&ef);
    ebkfix_task_succeeded(&ef);
    ksimfix_faults(ef.fx.h, "{\"errorRate\":1,\"match\":\"/leases\"}");
    cr_assert_eq(ebkfix_step(&ef), EBK_WAIT_MS);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Snapshotting");
    b = cfix_get(&ef.fx, &EBK_RES_BACKUP, "b1");
    cr_assert(strstr(jsonfix_str(b, "status.error"), "recording the claim of prefix"), "%s",
              jsonfix_str(b, "status.error"));
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&ef.fx, &EBKFIX_RES_JOB, "b1--copy"), "no copy Job");
    ksimfix_faults(ef.fx.h, "{\"reset\":true}");
    ebkfix_step(&ef);
    cr_assert_str_eq(ebkfix_phase(&ef, ph, sizeof(ph)), "Uploading");
}
