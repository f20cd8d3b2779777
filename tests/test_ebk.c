/*
 * Tests of controller/cpjob (the copy and delete Jobs, the summary read from
 * a Pod) and controller/ebk (the EtcdBackup reconcile) on an in-process
 * kube-sim. The test stands for the executor of the EtcdOpsTask and for the
 * Job controller and kubelet: it writes the task's state, the Job's status
 * and its Pod's termination message, so every "while X runs" is a state the
 * test holds, not a race.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/k8s.h"
#include "common/bstore.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/pclaim.h"
#include "controller/backups/cpjob.h"
#include "controller/backups/ebk.h"
#include "controller/core/claims.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_JOB = { "batch", "v1", "jobs", 1 };
static const struct k8s_resource RES_POD = { "", "v1", "pods", 1 };

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
    cJSON_Delete(job);
    /* a window (an EtcdRestore's copy): only what was written then */
    d.written_since = "2026-11-29T04:00:00Z";
    d.written_before = "2026-11-29T05:00:00Z";
    OK(cpjob_build_delete(&d, &job, &err));
    cr_assert_str_eq(arg_of(job, "--written-since="), "--written-since=2026-11-29T04:00:00Z");
    cr_assert_str_eq(arg_of(job, "--written-before="), "--written-before=2026-11-29T05:00:00Z");
    cJSON_Delete(job);
    cJSON_Delete(owner);
    cJSON_Delete(sec);
}

static cJSON *pod_with(const char *message, int code)
{
    cJSON *p =
        jsonfix_parse("{\"status\":{\"containerStatuses\":[{\"state\":{\"terminated\":{}}}]}}");
    cJSON *t = (cJSON *)kjson_get(p, "status.containerStatuses.0.state.terminated");

    cJSON_AddNumberToObject(t, "exitCode", code);
    if (message)
        cJSON_AddStringToObject(t, "message", message);
    return p;
}

Test(cpjob, summary_from_the_pod)
{
    struct cpjob_summary s = { 0 };
    cJSON *p = pod_with("log line\n{\"snapshots\":[{\"name\":\"Full-00000000-00000010-1700000000."
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

    p = pod_with("panic: something broke", 2);
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

/* ---- ebk on kube-sim ---- */

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

TestSuite(ebk_kubesim, .init = setup, .fini = teardown, .timeout = 60);

static void create_text(const struct k8s_resource *res, const char *text)
{
    cJSON *o = jsonfix_parse(text);

    cJSON_Delete(cfix_create(&fx, res, o));
    cJSON_Delete(o);
}

/* The Etcd "main" with an S3 store, its Secret, the destination's Secret, backup b1. */
static void world(const char *dest_provider)
{
    char text[1024];
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
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
             "{\"name\":\"b1\"},\"spec\":{\"etcdName\":\"main\",\"destination\":{\"provider\":"
             "\"%s\",\"container\":\"offsite\",\"prefix\":\"copies/main\",\"secretRef\":"
             "{\"name\":\"dest\"}}}}",
             dest_provider);
    create_text(&EBK_RES_BACKUP, text);
}

static long step(void)
{
    struct kerr_info err = { 0 };
    long requeue = 0;

    OK(ebk_step(&env, CFIX_NS, "b1", &requeue, &err));
    return requeue;
}

static const char *phase_of(char *out, size_t n)
{
    cJSON *b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");

    snprintf(out, n, "%s", b ? jsonfix_str(b, "status.phase") : "(gone)");
    cJSON_Delete(b);
    return out;
}

/* Write obj's status (merged from text) through /status as the executor or Job controller. */
static void put_status(const struct k8s_resource *res, const char *name, const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = cfix_get(&fx, res, name), *st = jsonfix_parse(text);

    cr_assert_not_null(o, "%s %s", res->resource, name);
    cJSON_ReplaceItemInObject(o, "status", st);
    if (!kjson_get(o, "status"))
        cJSON_AddItemToObject(o, "status", st);
    OK(k8s_update(fx.c, res, CFIX_NS, name, o, &(struct k8s_write_opts){ .subresource = "status" },
                  NULL, &err));
    cJSON_Delete(o);
}

/* The Job name finished with its Pod's termination message (exit code code). */
static void finish_job(const char *name, const char *message, int code)
{
    static int runs;
    char text[4096], pname[128], *st;
    cJSON *job = cfix_get(&fx, &RES_JOB, name), *pod;

    cr_assert_not_null(job, "Job %s", name);
    snprintf(pname, sizeof(pname), "%s-%d", name, ++runs);
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"controller-uid\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":"
             "\"copy\",\"image\":\"img:1\"}]}}",
             pname, jsonfix_str(job, "metadata.uid"));
    create_text(&RES_POD, text);
    pod = pod_with(message, code);
    st = cJSON_PrintUnformatted(kjson_get(pod, "status"));
    put_status(&RES_POD, pname, st);
    free(st);
    cJSON_Delete(pod);
    put_status(&RES_JOB, name, code == 0 ? "{\"succeeded\":1}" : "{\"failed\":1}");
    cJSON_Delete(job);
}

static const char SUMMARY[] =
    "{\"snapshots\":[{\"name\":\"Full-00000000-00000010-1700000000.gz\",\"kind\":\"Full\","
    "\"startRevision\":0,\"lastRevision\":10,\"size\":123,\"md5\":"
    "\"0123456789abcdef0123456789abcdef\",\"destination\":\"copies/main/v2/"
    "Full-00000000-00000010-1700000000.gz\"}],\"total\":1,\"error\":\"\"}";

Test(ebk_kubesim, snapshot_copy_complete_then_delete_the_copy)
{
    struct kerr_info err = { 0 };
    char ph[32];
    cJSON *t, *b, *job;

    world("S3");
    cr_assert_gt(step(), 0);
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Snapshotting");
    t = cfix_get(&fx, &ETCDSPEC_RES_OPSTASK, "b1");
    cr_assert_not_null(t, "the EtcdOpsTask named after the backup");
    cr_assert_str_eq(jsonfix_str(t, "spec.etcdName"), "main");
    cr_assert_str_eq(jsonfix_str(t, "spec.config.onDemandSnapshot.type"), "full");
    cr_assert_str_eq(jsonfix_str(t, "metadata.ownerReferences.0.kind"), "EtcdBackup");
    cJSON_Delete(t);
    cr_assert_gt(step(), 0, "the task runs: polled");
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Snapshotting");

    put_status(&ETCDSPEC_RES_OPSTASK, "b1",
               "{\"state\":\"Succeeded\",\"lastOperation\":{\"type\":\"Execution\",\"state\":"
               "\"Succeeded\",\"description\":\"full snapshot Full-00000000-00000010-1700000000.gz "
               "taken (last revision 10)\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}}");
    step();
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Uploading");
    job = cfix_get(&fx, &RES_JOB, "b1--copy");
    cr_assert_not_null(job);
    cr_assert_str_eq(arg_of(job, "--snapshot="), "--snapshot=Full-00000000-00000010-1700000000.gz");
    cr_assert_str_eq(arg_of(job, "--to-store-prefix="), "--to-store-prefix=copies/main");
    cJSON_Delete(job);
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "metadata.finalizers.0"), EBK_FINALIZER);
    cJSON_Delete(b);
    cr_assert_gt(step(), 0, "the copy runs: polled");

    finish_job("b1--copy", SUMMARY, 0);
    step();
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
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
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--copy"), "the Job goes once its result is written");
    cr_assert_eq(step(), 0, "Completed is terminal");

    /* spec.destination edited after the upload: the deletion goes where the copy was written */
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.destination.container"), "offsite");
    kjson_set_str(b, "spec.destination.container", "someone-elses", NULL);
    OK(k8s_update(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", b, NULL, NULL, &err));
    cJSON_Delete(b);

    /* deleted: the copy's delete Job; a locked copy keeps the finalizer */
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    step();
    job = cfix_get(&fx, &RES_JOB, "b1--delete-copy");
    cr_assert_not_null(job);
    cr_assert_str_eq(arg_of(job, "--store-prefix="),
                     "--store-prefix=copies/main/v2/Full-00000000-00000010-1700000000.gz");
    cr_assert_str_eq(arg_of(job, "--store-container="), "--store-container=offsite");
    cJSON_Delete(job);
    finish_job("b1--delete-copy",
               "{\"prefix\":\"x\",\"deleted\":0,\"locked\":1,\"failed\":0,\"remaining\":1,"
               "\"earliestDeletable\":\"2099-01-01T00:00:00Z\",\"dryRun\":false}",
               0);
    cr_assert_gt(step(), 1000L, "retried when the lock expires");
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_not_null(b, "a locked copy keeps the backup");
    cr_assert(strstr(jsonfix_str(b, "status.deletionError"), "locked"), "%s",
              jsonfix_str(b, "status.deletionError"));
    cr_assert_str_eq(jsonfix_str(b, "status.nextDeletionAt"), "2099-01-01T00:00:00Z");
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--delete-copy"));
    step();
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--delete-copy"), "no new Job before the lock ends");

    /* the lock is over (the test moves the retry time): deleted, the backup goes */
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    kjson_set_str(b, "status.nextDeletionAt", "2020-01-01T00:00:00Z", NULL);
    OK(k8s_update(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", b,
                  &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cJSON_Delete(b);
    step();
    finish_job("b1--delete-copy",
               "{\"prefix\":\"x\",\"deleted\":1,\"locked\":0,\"failed\":0,\"remaining\":0,"
               "\"earliestDeletable\":null,\"dryRun\":false}",
               0);
    step();
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "(gone)");
}

/* Deleted while its copy runs: it says it waits and how to stop; the Job deleted, it goes. */
Test(ebk_kubesim, deleted_while_uploading_says_it_waits_and_how_to_stop)
{
    struct kerr_info err = { 0 };
    char ph[32];
    const char *msg;
    cJSON *b, *job;
    char *args;

    world("S3");
    step();
    put_status(&ETCDSPEC_RES_OPSTASK, "b1",
               "{\"state\":\"Succeeded\",\"lastOperation\":{\"type\":\"Execution\",\"state\":"
               "\"Succeeded\",\"description\":\"full snapshot Full-00000000-00000010-1700000000.gz "
               "taken (last revision 10)\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}}");
    step();
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Uploading");
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    cr_assert_gt(step(), 0, "the copy runs: polled");
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_not_null(b, "the finalizer waits for the copy's result");
    msg = jsonfix_str(b, "status.deletionError");
    cr_assert(strstr(msg, "deleted while its copy Job " CFIX_NS "/b1--copy runs"), "%s", msg);
    cr_assert(strstr(msg, "kubectl -n " CFIX_NS " delete job b1--copy"), "%s", msg);
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Uploading");
    cJSON_Delete(b);
    cr_assert_gt(step(), 0, "still polled, said once");

    OK(k8s_delete(fx.c, &RES_JOB, CFIX_NS, "b1--copy", NULL, NULL, &err));
    step();
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Failed");
    step();
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_not_null(b, "its copy Job was made: what it may have written is deleted first");
    cJSON_Delete(b);
    job = cfix_get(&fx, &RES_JOB, "b1--delete-copy");
    cr_assert_not_null(job, "the delete Job of what the copy may have written");
    args = cJSON_PrintUnformatted(kjson_get(job, "spec.template.spec.containers"));
    cr_assert(strstr(args, "Full-00000000-00000010-1700000000.gz"), "the snapshot copied: %s",
              args);
    cr_assert(strstr(args, "--written-since"), "only what was written since the copy: %s", args);
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

    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
    world("S3");
    step();
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert(strstr(jsonfix_str(b, "status.error"),
                     "overlaps the prefix \"copies/main-2\" of Etcd ns1/events"),
              "%s", jsonfix_str(b, "status.error"));
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_OPSTASK, "b1"), "no snapshot for a refused copy");
}

Test(ebk_kubesim, waits_for_another_unfinished_task)
{
    char ph[32];

    world("S3");
    create_text(&ETCDSPEC_RES_OPSTASK,
                "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"EtcdOpsTask\","
                "\"metadata\":{\"name\":\"presync\"},\"spec\":{\"etcdName\":\"main\",\"config\":"
                "{\"onDemandSnapshot\":{\"type\":\"full\"}}}}");
    cr_assert_eq(step(), EBK_WAIT_MS);
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Pending");
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_OPSTASK, "b1"), "no second task");
    put_status(&ETCDSPEC_RES_OPSTASK, "presync", "{\"state\":\"Succeeded\"}");
    step();
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Snapshotting");
}

Test(ebk_kubesim, failures_are_terminal_with_a_clear_error)
{
    char ph[32];
    cJSON *b;

    world("gcp");
    step();
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert(strstr(jsonfix_str(b, "status.error"), "not supported"), "%s",
              jsonfix_str(b, "status.error"));
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_OPSTASK, "b1"));
    cr_assert_eq(step(), 0);
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Failed");
}

Test(ebk_kubesim, failed_task_and_failed_copy)
{
    struct kerr_info err = { 0 };
    cJSON *b;

    world("S3");
    step();
    put_status(&ETCDSPEC_RES_OPSTASK, "b1",
               "{\"state\":\"Failed\",\"lastErrors\":[{\"code\":\"ERR_CREATE_SNAPSHOT\","
               "\"description\":\"sidecar answered 500\"}]}");
    step();
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert(strstr(jsonfix_str(b, "status.error"), "sidecar answered 500"), "%s",
              jsonfix_str(b, "status.error"));
    cJSON_Delete(b);

    /* a second backup whose copy fails: no snapshot named by the task (etcd-druid's executor) */
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    OK(k8s_delete(fx.c, &ETCDSPEC_RES_OPSTASK, CFIX_NS, "b1", NULL, NULL, &err));
    create_text(&EBK_RES_BACKUP,
                "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
                "{\"name\":\"b1\"},\"spec\":{\"etcdName\":\"main\",\"deletionPolicy\":\"Retain\","
                "\"destination\":{\"provider\":\"aws\",\"container\":\"offsite\",\"prefix\":\"c\","
                "\"secretRef\":{\"name\":\"dest\"}}}}");
    step();
    put_status(&ETCDSPEC_RES_OPSTASK, "b1",
               "{\"state\":\"Succeeded\",\"lastOperation\":{\"description\":\"Snapshot taken\","
               "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}}");
    step();
    b = cfix_get(&fx, &RES_JOB, "b1--copy");
    cr_assert_not_null(arg_of(b, "--latest-full"));
    cr_assert_str_eq(arg_of(b, "--until="), "--until=2026-01-01T00:00:00Z");
    cJSON_Delete(b);
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    /* Retain too: its finalizer hands the copy to a BackupEntry before the backup goes */
    cr_assert_str_eq(jsonfix_str(b, "metadata.finalizers.0"), EBK_FINALIZER);
    cJSON_Delete(b);
    finish_job("b1--copy", "{\"snapshots\":[],\"total\":0,\"error\":\"no full snapshot under x\"}",
               1);
    step();
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert(strstr(jsonfix_str(b, "status.error"), "no full snapshot under x"), "%s",
              jsonfix_str(b, "status.error"));
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--copy"));
}

/* Succeed b1's snapshot task as the executor does. */
static void task_succeeded(void)
{
    put_status(&ETCDSPEC_RES_OPSTASK, "b1",
               "{\"state\":\"Succeeded\",\"lastOperation\":{\"type\":\"Execution\",\"state\":"
               "\"Succeeded\",\"description\":\"full snapshot Full-00000000-00000010-1700000000.gz "
               "taken (last revision 10)\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}}");
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

    world("S3");
    step();
    cr_assert_eq(bstore_claim_init(&c, "S3", "offsite", NULL, "copies/main", &err), KERR_OK);
    OK(pclaim_take(fx.c, k8s_client_namespace(fx.c),
                   &(struct pclaim){ "other", "x", c.key, c.prefix, NULL, NULL, NULL, NULL, NULL },
                   &o, &err));
    cr_assert_str_eq(o.what, "");
    task_succeeded();
    step();
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Failed");
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert(strstr(jsonfix_str(b, "status.error"),
                     "spec.destination.prefix \"copies/main\" overlaps a prefix claimed from "
                     "another namespace in the same store"),
              "%s", jsonfix_str(b, "status.error"));
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--copy"), "no copy Job");
    bstore_claim_release(&c);
}

Test(ebk_kubesim, the_copy_record_refuses_an_etcd_admitted_after)
{
    struct bstore_claim c = { "", NULL };
    struct pclaim_other o;
    struct kerr_info err = { 0 };
    char ph[32];

    world("S3");
    step();
    task_succeeded();
    step();
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Uploading");
    cr_assert_eq(bstore_claim_init(&c, "S3", "offsite", NULL, "copies/main/x", &err), KERR_OK);
    OK(pclaim_take(fx.c, k8s_client_namespace(fx.c),
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

    world("S3");
    step();
    task_succeeded();
    ksimfix_faults(fx.h, "{\"errorRate\":1,\"match\":\"/leases\"}");
    cr_assert_eq(step(), EBK_WAIT_MS);
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Snapshotting");
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert(strstr(jsonfix_str(b, "status.error"), "recording the claim of prefix"), "%s",
              jsonfix_str(b, "status.error"));
    cJSON_Delete(b);
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--copy"), "no copy Job");
    ksimfix_faults(fx.h, "{\"reset\":true}");
    step();
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Uploading");
}

static const struct k8s_resource RES_ENTRY = { "etcd-warden.io", "v1alpha1", "backupentries", 0 };

/* A Completed backup b1 (deletionPolicy Retain) whose copy was written. */
static void retained_copy(void)
{
    struct kerr_info err = { 0 };
    cJSON *b;

    world("S3");
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    kjson_set_str(b, "spec.deletionPolicy", "Retain", NULL);
    OK(k8s_update(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", b, NULL, NULL, &err));
    cJSON_Delete(b);
    step();
    put_status(&ETCDSPEC_RES_OPSTASK, "b1",
               "{\"state\":\"Succeeded\",\"lastOperation\":{\"type\":\"Execution\",\"state\":"
               "\"Succeeded\",\"description\":\"full snapshot Full-00000000-00000010-1700000000.gz "
               "taken (last revision 10)\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}}");
    step();
    finish_job("b1--copy", SUMMARY, 0);
    step();
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Completed");
    cr_assert_str_eq(jsonfix_str(b, "metadata.finalizers.0"), EBK_FINALIZER);
    cJSON_Delete(b);
}

/* The name of the BackupEntry of the copies' claim (S3 "offsite", "copies/main"). */
static void copy_entry_name(char out[KNAME_SUBDOMAIN_MAX + 1])
{
    struct kerr_info err = { 0 };
    struct bstore_claim c;

    OK(bstore_claim_init(&c, "S3", "offsite", NULL, "copies/main", &err));
    OK(claims_entry_name(&c, out));
    bstore_claim_release(&c);
}

Test(ebk_kubesim, retained_copy_is_handed_to_a_backup_entry_before_the_backup_goes)
{
    struct kerr_info err = { 0 };
    char ph[32], name[KNAME_SUBDOMAIN_MAX + 1];
    cJSON *e;

    retained_copy();
    copy_entry_name(name);
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    step();
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--delete-copy"), "Retain: the copy is not deleted");
    e = cfix_get(&fx, &RES_ENTRY, name);
    cr_assert_not_null(e, "the copy's prefix is claimed by BackupEntry %s", name);
    cr_assert_str_eq(jsonfix_str(e, "spec.etcd.namespace"), CFIX_NS);
    cr_assert_str_eq(jsonfix_str(e, "spec.etcd.name"), "main");
    cr_assert_str_eq(jsonfix_str(e, "spec.prefix"), "copies/main");
    cr_assert_str_eq(jsonfix_str(e, "spec.store.container"), "offsite");
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "(gone)", "the finalizer goes once the entry is");
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
    cJSON_Delete(cfix_create(&fx, &RES_ENTRY, b));
    cJSON_Delete(b);
}

/* The copy's name held by another namespace's entry of store: the finalizer stays, why. */
static void held_by_another(const char *store, const char *why)
{
    struct kerr_info err = { 0 };
    char name[KNAME_SUBDOMAIN_MAX + 1];
    cJSON *b;

    retained_copy();
    copy_entry_name(name);
    plant_other(name, "copies/main", store);
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    cr_assert_gt(step(), 0, "looked at again");
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_not_null(b, "the finalizer stays while no entry claims the copy");
    cr_assert(strstr(jsonfix_str(b, "status.deletionError"), why), "%s",
              jsonfix_str(b, "status.deletionError"));
    cJSON_Delete(b);
}

Test(ebk_kubesim, retained_copy_whose_entry_cannot_be_made_keeps_the_backup)
{
    /* the claim's entry is another namespace's (fail closed), or another claim's holds the name */
    held_by_another("{\"provider\":\"S3\",\"container\":\"offsite\"}", "another owner");
}

Test(ebk_kubesim, retained_copys_name_held_by_another_claim_keeps_the_backup)
{
    held_by_another("{\"provider\":\"S3\",\"container\":\"elsewhere\"}",
                    "held by an entry of another prefix or store");
}

Test(ebk_kubesim, retained_copy_finds_its_entry_past_a_collision_under_the_old_name)
{
    struct kerr_info err = { 0 };
    char name[KNAME_SUBDOMAIN_MAX + 1], v1[KNAME_SUBDOMAIN_MAX + 1];
    cJSON *e;

    retained_copy();
    copy_entry_name(name);
    snprintf(v1, sizeof(v1), "%.*s", (int)strlen(name) - 8, name); /* its 8-digit name */
    /* a tenant's claim (her container, a prefix that reads alike) under the 8-digit name */
    plant_other(v1, "copies_main", "{\"provider\":\"S3\",\"container\":\"mallory\"}");
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    step();
    e = cfix_get(&fx, &RES_ENTRY, name);
    cr_assert_not_null(e, "the copy's own entry under the 16-digit name");
    cr_assert_str_eq(jsonfix_str(e, "spec.store.container"), "offsite");
    cJSON_Delete(e);
    e = cfix_get(&fx, &RES_ENTRY, v1);
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

Test(ebk_kubesim, retained_copy_never_read_is_handed_to_a_backup_entry)
{
    struct kerr_info err = { 0 };
    char ph[32], name[KNAME_SUBDOMAIN_MAX + 1], deadline[KTIME_LEN + 1];
    struct timespec at;
    cJSON *b, *e;

    world("S3");
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    kjson_set_str(b, "spec.deletionPolicy", "Retain", NULL);
    OK(k8s_update(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", b, NULL, NULL, &err));
    cJSON_Delete(b);
    step();
    task_succeeded();
    step();
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Uploading");
    /* the copy Job ran and went while the controller was away: its result is never read */
    OK(k8s_delete(fx.c, &RES_JOB, CFIX_NS, "b1--copy", NULL, NULL, &err));
    step();
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert_null(kjson_get_str(b, "status.destinationKey"));
    OK(ktime_parse(jsonfix_str(b, "status.copyStartedAt"), &at, &err));
    OK(ktime_format(at.tv_sec + PODJOB_COPY_DEADLINE_S, deadline));
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    step();
    cr_assert_null(cfix_get(&fx, &RES_JOB, "b1--delete-copy"), "Retain: nothing is deleted");
    copy_entry_name(name);
    e = cfix_get(&fx, &RES_ENTRY, name);
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
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "(gone)", "the finalizer goes once the entry is");
    cJSON_Delete(e);
    cJSON_Delete(b);
}

/* The copy's write window (status.copyStartedAt, a retained copy's spec.claimedAt) starts once
 * its destination is claimed, after the snapshot: what another owner wrote into the destination
 * while the snapshot was taken is not the copy's. */
Test(ebk_kubesim, a_copy_starts_when_its_claim_is_recorded_not_with_its_snapshot)
{
    struct kerr_info err = { 0 };
    struct timespec task_at, copy_at;
    char ph[32];
    time_t before;
    cJSON *t, *b;

    world("S3");
    step();
    t = cfix_get(&fx, &ETCDSPEC_RES_OPSTASK, "b1");
    cr_assert_not_null(t, "the snapshot task");
    OK(ktime_parse(jsonfix_str(t, "metadata.creationTimestamp"), &task_at, &err));
    cJSON_Delete(t);
    /* the snapshot takes a while: the claim comes in a later second */
    while (time(NULL) <= task_at.tv_sec + 1)
        usleep(100 * 1000);
    before = time(NULL);
    task_succeeded();
    step();
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "Uploading");
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    OK(ktime_parse(jsonfix_str(b, "status.copyStartedAt"), &copy_at, &err));
    cr_assert_geq(copy_at.tv_sec, before, "copyStartedAt %s: before the claim (task created %s)",
                  jsonfix_str(b, "status.copyStartedAt"), jsonfix_str(b, "status.startTime"));
    cJSON_Delete(b);
}

Test(ebk_kubesim, retained_backup_without_a_copy_job_goes_without_an_entry)
{
    struct kerr_info err = { 0 };
    char ph[32], name[KNAME_SUBDOMAIN_MAX + 1];
    cJSON *b;

    world("S3");
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    kjson_set_str(b, "spec.deletionPolicy", "Retain", NULL);
    OK(k8s_update(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", b, NULL, NULL, &err));
    cJSON_Delete(b);
    /* a Job of the copy's name that is not b1's: b1 fails before making one */
    create_text(&RES_JOB, "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
                          "{\"name\":\"b1--copy\"},\"spec\":{\"template\":{\"spec\":"
                          "{\"containers\":[{\"name\":\"x\",\"image\":\"x\"}],"
                          "\"restartPolicy\":\"Never\"}}}}");
    step();
    task_succeeded();
    step();
    b = cfix_get(&fx, &EBK_RES_BACKUP, "b1");
    cr_assert_str_eq(jsonfix_str(b, "status.phase"), "Failed");
    cr_assert_null(kjson_get_str(b, "status.jobName"));
    cr_assert_null(kjson_get_str(b, "status.copyStartedAt"));
    cJSON_Delete(b);
    OK(k8s_delete(fx.c, &EBK_RES_BACKUP, CFIX_NS, "b1", NULL, NULL, &err));
    step();
    copy_entry_name(name);
    cr_assert_null(cfix_get(&fx, &RES_ENTRY, name), "no copy was written: no entry");
    cr_assert_str_eq(phase_of(ph, sizeof(ph)), "(gone)");
}
