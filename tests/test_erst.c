/* erst: the new Etcd built from a live Etcd or a template (marks dropped, the target store,
 * replicas of a hibernated source); on kube-sim, pass by pass: the refusals (two sources, an
 * existing target, a prefix in use by an Etcd or a BackupEntry, overlapping the source, no
 * spec to start from), the wait for an EtcdBackup and its failure, the copy Job's arguments,
 * the Job's result into the status and the Job deleted, the Etcd created, and the crash
 * points: a Job or an Etcd made by a pass that did not get to write the status. */
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
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_JOB = { "batch", "v1", "jobs", 1 };
static const struct k8s_resource RES_POD = { "", "v1", "pods", 1 };

#define SRC_STORE                                                           \
    "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"ns1--main\"," \
    "\"secretRef\":{\"name\":\"creds\"}}"

/* ---- the new Etcd, pure ---- */

Test(erst, build_from_live_etcd)
{
    cJSON *rs = jsonfix_parse("{\"metadata\":{\"name\":\"r1\",\"namespace\":\"ns1\"},"
                              "\"spec\":{\"target\":{\"etcdName\":\"copy\"}}}");
    cJSON *src = jsonfix_parse(
        "{\"metadata\":{\"name\":\"main\",\"uid\":\"u\",\"resourceVersion\":\"7\","
        "\"finalizers\":[\"x\"],\"labels\":{\"team\":\"a\",\"etcd-warden.io/restoring\":\"\"},"
        "\"annotations\":{\"note\":\"kept\",\"etcd-warden.io/hibernate\":\"true\","
        "\"etcd-warden.io/hibernation-phase\":\"Hibernated\","
        "\"etcd-warden.io/status-backup-exists\":\"true\","
        "\"etcd-warden.io/immutability-retention-type\":\"bucket\","
        "\"druid.gardener.cloud/suspend-etcd-spec-reconcile\":\"\"}},"
        "\"spec\":{\"replicas\":0,\"labels\":{\"app\":\"etcd\"},\"etcd\":{},\"backup\":{\"store\":"
        "{\"provider\":\"aws\",\"container\":\"old\",\"prefix\":\"p\",\"immutability\":{}}}},"
        "\"status\":{\"ready\":true}}");
    struct erst_store to = { "S3", "bkt2", "ns1--copy", "http://s3:1", "creds2" };
    struct kerr_info err = { 0 };
    cJSON *e = NULL;
    int64_t replicas = -1;

    OK(erst_build_etcd(rs, kjson_get(src, "spec"), kjson_get(src, "metadata"), &to, &e, &err));
    cr_assert_str_eq(kjson_get_str(e, "metadata.name"), "copy");
    cr_assert_str_eq(kjson_get_str(e, "metadata.namespace"), "ns1");
    cr_assert_null(kjson_get(e, "metadata.uid"));
    cr_assert_null(kjson_get(e, "metadata.resourceVersion"));
    cr_assert_null(kjson_get(e, "metadata.finalizers"));
    cr_assert_null(kjson_get(e, "status"));
    cr_assert_str_eq(kjson_get_str(e, "metadata.labels[team]"), "a");
    cr_assert_str_eq(kjson_get_str(e, "metadata.labels[" ERST_LABEL_RESTORED_FROM "]"), "r1");
    cr_assert_null(kjson_get(e, "metadata.labels[etcd-warden.io/restoring]"));
    cr_assert_str_eq(kjson_get_str(e, "metadata.annotations[note]"), "kept");
    cr_assert_str_eq(
        kjson_get_str(e, "metadata.annotations[etcd-warden.io/immutability-retention-type]"),
        "bucket");
    cr_assert_null(kjson_get(e, "metadata.annotations[etcd-warden.io/hibernate]"));
    cr_assert_null(kjson_get(e, "metadata.annotations[etcd-warden.io/hibernation-phase]"));
    cr_assert_null(kjson_get(e, "metadata.annotations[etcd-warden.io/status-backup-exists]"));
    cr_assert_null(
        kjson_get(e, "metadata.annotations[druid.gardener.cloud/suspend-etcd-spec-reconcile]"));
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.provider"), "S3");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.container"), "bkt2");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.prefix"), "ns1--copy");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.endpointOverride"), "http://s3:1");
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.secretRef.name"), "creds2");
    cr_assert_null(kjson_get(e, "spec.backup.store.immutability"));
    cr_assert_eq(kjson_get_int64(e, "spec.replicas", &replicas), KERR_OK);
    cr_assert_eq(replicas, 1, "a hibernated source gives 1 replica, not %lld", (long long)replicas);
    /* the source is untouched */
    cr_assert_str_eq(kjson_get_str(src, "spec.backup.store.container"), "old");
    cJSON_Delete(e);
    cJSON_Delete(src);
    cJSON_Delete(rs);
}

Test(erst, build_from_template_keeps_its_replicas)
{
    cJSON *rs = jsonfix_parse("{\"metadata\":{\"name\":\"r1\",\"namespace\":\"ns1\"},"
                              "\"spec\":{\"target\":{\"etcdName\":\"copy\"}}}");
    cJSON *t = jsonfix_parse("{\"replicas\":5,\"labels\":{\"app\":\"x\"},\"etcd\":{}}");
    struct erst_store to = { "ABS", "ckt", "p", NULL, NULL };
    struct kerr_info err = { 0 };
    cJSON *e = NULL;
    int64_t replicas = -1;

    OK(erst_build_etcd(rs, t, NULL, &to, &e, &err));
    cr_assert_eq(kjson_get_int64(e, "spec.replicas", &replicas), KERR_OK);
    cr_assert_eq(replicas, 5);
    cr_assert_str_eq(kjson_get_str(e, "spec.backup.store.provider"), "ABS");
    cr_assert_null(kjson_get(e, "spec.backup.store.endpointOverride"));
    cr_assert_null(kjson_get(e, "spec.backup.store.secretRef"));
    cr_assert_str_eq(kjson_get_str(e, "metadata.labels[" ERST_LABEL_RESTORED_FROM "]"), "r1");
    cr_assert_null(kjson_get(e, "metadata.annotations.note"));
    cJSON_Delete(e);
    cJSON_Delete(t);
    cJSON_Delete(rs);
}

/* ---- on kube-sim ---- */

static struct cfix fx;
static struct erst_ctx ctx;

static void setup(void)
{
    cJSON *s;

    cfix_start(&fx, NULL);
    memset(&ctx, 0, sizeof(ctx));
    ctx.client = fx.c;
    ctx.job_image = "img:1";
    ctx.backup_wait_ms = ERST_BACKUP_WAIT_MS;
    s = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
                      "\"creds\"},\"data\":{\"accessKeyID\":\"QQ==\"}}");
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_SECRET, s));
    cJSON_Delete(s);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(erst_kubesim, .init = setup, .fini = teardown, .timeout = 60);

/* Create the EtcdRestore name with the spec text. */
static void restore(const char *name, const char *spec)
{
    char text[4096];
    cJSON *o;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdRestore\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":%s}",
             name, spec);
    o = jsonfix_parse(text);
    cJSON_Delete(cfix_create(&fx, &ERST_RES_RESTORE, o));
    cJSON_Delete(o);
}

/* One pass; its requeue. */
static long run(const char *name)
{
    struct kerr_info err = { 0 };
    long requeue = -1;

    OK(erst_run(&ctx, CFIX_NS, name, &requeue, &err));
    return requeue;
}

/* status.<field> of the restore name, "" when absent; in a static buffer. */
static const char *st(const char *name, const char *field)
{
    static char out[1024];
    char path[64];
    cJSON *o = cfix_get(&fx, &ERST_RES_RESTORE, name);
    const char *v;

    snprintf(path, sizeof(path), "status.%s", field);
    v = kjson_get_str(o, path);
    snprintf(out, sizeof(out), "%s", v ? v : "");
    cJSON_Delete(o);
    return out;
}

static void etcd(const char *name, const char *store)
{
    cJSON *e = cfix_etcd(name, store, NULL);

    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
}

#define STORE_SPEC(target_prefix)                                                           \
    "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\"},\"target\":{\"etcdName\":" \
    "\"copy\",\"store\":{\"container\":\"bkt\",\"prefix\":\"" target_prefix "\"}}}"

static void assert_refused(const char *name, const char *needle)
{
    cr_assert_eq(run(name), 0);
    cr_assert_str_eq(st(name, "phase"), ERST_PHASE_FAILED, "error: %s", st(name, "error"));
    cr_assert(strstr(st(name, "error"), needle), "error \"%s\" lacks \"%s\"", st(name, "error"),
              needle);
    cr_assert_str_neq(st(name, "completionTime"), "");
    /* terminal: another pass changes nothing */
    cr_assert_eq(run(name), 0);
    cr_assert_str_eq(st(name, "phase"), ERST_PHASE_FAILED);
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_ETCD, "copy"));
}

Test(erst_kubesim, refusals)
{
    etcd("main", SRC_STORE);
    restore("two", "{\"source\":{\"backupName\":\"b\",\"store\":" SRC_STORE "},"
                   "\"target\":{\"etcdName\":\"copy\",\"store\":{\"container\":\"ckt\","
                   "\"prefix\":\"p\"}}}");
    assert_refused("two", "exactly one of backupName and store");
    restore("inplace", "{\"source\":{\"store\":" SRC_STORE "},\"target\":{\"etcdName\":\"main\","
                       "\"store\":{\"container\":\"ckt\",\"prefix\":\"p\"}}}");
    assert_refused("inplace", "Etcd ns1/main exists");
    /* "ns1--main/x" lies inside the live Etcd's prefix "ns1--main" of the same store */
    restore("inside", STORE_SPEC("ns1--main/x"));
    assert_refused("inside", "overlaps the source prefix");
    etcd("other", "{\"provider\":\"S3\",\"container\":\"bkt\",\"prefix\":\"team/other\"}");
    restore("used", STORE_SPEC("team"));
    assert_refused("used", "the prefix \"team/other\" of Etcd ns1/other");
    restore("nospec", "{\"source\":{\"store\":" SRC_STORE "},\"target\":{\"etcdName\":\"copy\","
                      "\"store\":{\"container\":\"ckt\",\"prefix\":\"p\"}}}");
    assert_refused("nospec", "an EtcdStatusBackup keeps no spec");
    restore("gone", "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"deleted\"},"
                    "\"target\":{\"etcdName\":\"copy\",\"store\":{\"container\":\"ckt\","
                    "\"prefix\":\"p\"}}}");
    assert_refused("gone", "the source Etcd deleted does not exist");
    restore("nosecret", "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\"},"
                        "\"target\":{\"etcdName\":\"copy\",\"store\":{\"container\":\"ckt\","
                        "\"prefix\":\"p\",\"secretRef\":{\"name\":\"nope\"}}}}");
    assert_refused("nosecret", "the Secret nope of the target store");
    restore("oss", "{\"source\":{\"store\":{\"provider\":\"alicloud\",\"container\":\"bkt\","
                   "\"prefix\":\"p\",\"secretRef\":{\"name\":\"creds\"}},\"etcdName\":\"main\"},"
                   "\"target\":{\"etcdName\":\"copy\",\"store\":{\"container\":\"ckt\","
                   "\"prefix\":\"p\"}}}");
    assert_refused("oss", "the copy Job: ");
}

/*
 * A prefix kept by a BackupEntry of a deleted Etcd, or holding an EtcdBackup's copies, is in
 * use (read from the API server when the restore is checked); so is a sibling the backup
 * sidecar lists with it ("team-b" beside "team"); another prefix is not.
 */
Test(erst_kubesim, prefix_of_a_backup_entry_or_copy)
{
    static const struct k8s_resource res_entry = { "etcd-warden.io", "v1alpha1", "backupentries",
                                                   0 };
    cJSON *entry = jsonfix_parse(
        "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupEntry\","
        "\"metadata\":{\"name\":\"ns1--gone--0123abcd4567cdef\"},\"spec\":{\"bucketName\":\"b\","
        "\"prefix\":\"team\",\"store\":{\"provider\":\"S3\",\"container\":\"bkt\"},"
        "\"etcd\":{\"namespace\":\"ns1\",\"name\":\"gone\",\"uid\":\"u\"},"
        "\"etcdDeletedAt\":\"2026-01-01T00:00:00Z\"}}");
    cJSON *backup = jsonfix_parse(
        "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\","
        "\"metadata\":{\"name\":\"nightly\",\"namespace\":\"ns1\"},\"spec\":{\"etcdName\":"
        "\"other\",\"destination\":{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":"
        "\"/offsite/x\",\"secretRef\":{\"name\":\"creds\"}}},"
        "\"status\":{\"phase\":\"Completed\",\"destination\":{\"provider\":\"aws\","
        "\"container\":\"bkt\",\"prefix\":\"/offsite/x\"}}}");

    cJSON_Delete(cfix_create(&fx, &res_entry, entry));
    {
        /* its copy was written: status.destination, stored through the status subresource */
        cJSON *created = cfix_create(&fx, &ERST_RES_BACKUP, backup);
        struct kerr_info err;

        cr_assert_eq(
            kjson_set(created, "status", cJSON_Duplicate(kjson_get(backup, "status"), 1), NULL),
            KERR_OK);
        cr_assert_eq(k8s_update(fx.c, &ERST_RES_BACKUP, CFIX_NS, "nightly", created,
                                &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err),
                     KERR_OK, "%s", err.msg);
        cJSON_Delete(created);
    }
    etcd("main", SRC_STORE);
    restore("entry", STORE_SPEC("team/sub"));
    assert_refused("entry", "BackupEntry ns1--gone--0123abcd4567cdef of Etcd ns1/gone");
    restore("sibling", STORE_SPEC("team-b"));
    assert_refused("sibling", "BackupEntry ns1--gone--0123abcd4567cdef of Etcd ns1/gone");
    restore("copies", STORE_SPEC("offsite"));
    assert_refused("copies", "the copies of EtcdBackup ns1/nightly");
    restore("beside", STORE_SPEC("ns1--restored"));
    cr_assert_eq(run("beside"), ERST_POLL_MS);
    cr_assert_str_eq(st("beside", "phase"), ERST_PHASE_COPYING, "%s", st("beside", "error"));
    cJSON_Delete(entry);
    cJSON_Delete(backup);
}

/* The sidecar lists "ns1--main" as a plain string: a target "ns1--main-2" would put the new
 * cluster's snapshots into the source's listing. */
Test(erst_kubesim, a_sibling_of_the_source)
{
    etcd("main", SRC_STORE);
    restore("sib", STORE_SPEC("ns1--main-2"));
    assert_refused("sib", "overlaps the source prefix \"ns1--main\"");
    restore("slash", STORE_SPEC("/ns1--main"));
    assert_refused("slash", "overlaps the source prefix");
}

/* The arguments of the Job's container. */
static int job_has_arg(const cJSON *job, const char *want)
{
    const cJSON *a;

    cJSON_ArrayForEach (a, kjson_get(job, "spec.template.spec.containers.0.args")) {
        if (cJSON_IsString(a) && strcmp(a->valuestring, want) == 0)
            return 1;
    }
    return 0;
}

/* What job_exec.py writes for a finished Job: its Pod with the termination message, then the
 * Job's status. */
static void finish_job(const char *job, int ok, const char *message)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    struct kerr_info err = { 0 };
    cJSON *j = cfix_get(&fx, &RES_JOB, job), *pod, *patch;
    char text[4096];

    cr_assert_not_null(j, "no Job %s", job);
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-abcde\","
             "\"labels\":{\"controller-uid\":\"%s\",\"job-name\":\"%s\"}},\"spec\":{"
             "\"containers\":[{\"name\":\"copy\",\"image\":\"img:1\"}]}}",
             job, kjson_get_str(j, "metadata.uid"), job);
    pod = jsonfix_parse(text);
    cJSON_Delete(cfix_create(&fx, &RES_POD, pod));
    cJSON_Delete(pod);
    patch = cJSON_CreateObject();
    OK(kjson_set_str(patch, "status.phase", ok ? "Succeeded" : "Failed", &err));
    OK(kjson_set(patch, "status.containerStatuses",
                 jsonfix_parse("[{\"name\":\"copy\",\"state\":{\"terminated\":{}}}]"), &err));
    OK(kjson_set_int(patch, "status.containerStatuses.0.state.terminated.exitCode", ok ? 0 : 1,
                     &err));
    OK(kjson_set_str(patch, "status.containerStatuses.0.state.terminated.message", message, &err));
    snprintf(text, sizeof(text), "%s-abcde", job);
    OK(k8s_patch(fx.c, &RES_POD, CFIX_NS, text, K8S_PATCH_MERGE, patch, &wo, NULL, &err));
    cJSON_Delete(patch);
    patch = jsonfix_parse(ok ? "{\"status\":{\"succeeded\":1}}" : "{\"status\":{\"failed\":1}}");
    OK(k8s_patch(fx.c, &RES_JOB, CFIX_NS, job, K8S_PATCH_MERGE, patch, &wo, NULL, &err));
    cJSON_Delete(patch);
    cJSON_Delete(j);
}

static const char SUMMARY[] =
    "{\"snapshots\":[{\"name\":\"Full-00000000-00000010-1700000000.gz\",\"kind\":\"Full\","
    "\"startRevision\":0,\"lastRevision\":10,\"size\":100,\"md5\":"
    "\"d41d8cd98f00b204e9800998ecf8427e\","
    "\"destination\":\"ns1--copy/v2/Full-00000000-00000010-1700000000.gz\"},"
    "{\"name\":\"Incr-00000011-00000020-1700000100.gz\",\"kind\":\"Incr\",\"startRevision\":11,"
    "\"lastRevision\":20,\"size\":5,\"md5\":\"d41d8cd98f00b204e9800998ecf8427e\","
    "\"destination\":\"ns1--copy/v2/Incr-00000011-00000020-1700000100.gz\"}],\"total\":2}";

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

static void backup(const char *name, const char *status)
{
    char text[2048];
    cJSON *o, *b;
    struct kerr_info err = { 0 };
    struct k8s_write_opts wo = { .subresource = "status" };

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"etcdName\":\"main\",\"destination\":"
             "{\"provider\":\"S3\",\"container\":\"offsite\",\"prefix\":\"backups/main\","
             "\"secretRef\":{\"name\":\"creds\"}}}}",
             name);
    o = jsonfix_parse(text);
    b = cfix_create(&fx, &ERST_RES_BACKUP, o);
    cJSON_Delete(o);
    OK(kjson_set(b, "status", jsonfix_parse(status), &err));
    OK(k8s_update(fx.c, &ERST_RES_BACKUP, CFIX_NS, name, b, &wo, NULL, &err));
    cJSON_Delete(b);
}

#define BACKUP_SPEC(b)                                                                     \
    "{\"source\":{\"backupName\":\"" b "\"},\"target\":{\"etcdName\":\"copy\",\"store\":{" \
    "\"container\":\"bkt\",\"prefix\":\"ns1--copy\"}}}"

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

/* Careless input refused at once, before any Job: a target name that is no Etcd name, and a
 * backupName no EtcdBackup has once the wait for one is over. */
Test(erst_kubesim, careless_input)
{
    static const char *const bad[] = { "Etcd_Restored", "-copy", "copy.", "UPPER", "a b" };
    char spec[512];
    size_t i;

    etcd("main", SRC_STORE);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char name[16];

        snprintf(name, sizeof(name), "bad%zu", i);
        snprintf(spec, sizeof(spec),
                 "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\"},"
                 "\"target\":{\"etcdName\":\"%s\",\"store\":{\"container\":\"ckt\","
                 "\"prefix\":\"p\"}}}",
                 bad[i]);
        restore(name, spec);
        snprintf(spec, sizeof(spec), "spec.target.etcdName \"%s\" is not a valid Etcd name",
                 bad[i]);
        assert_refused(name, spec);
        snprintf(spec, sizeof(spec), "%s--restore", name);
        cr_assert_null(cfix_get(&fx, &RES_JOB, spec), "a Job for %s", bad[i]);
    }
    restore("valid", STORE_SPEC("ns1--copy")); /* target "copy" */
    cr_assert_eq(run("valid"), ERST_POLL_MS, "%s", st("valid", "error"));
    restore("typo", BACKUP_SPEC("no-such-backup"));
    cr_assert_eq(run("typo"), ERST_WAIT_MS);
    cr_assert(strstr(st("typo", "error"), "not found (refused after 60s)"), "%s",
              st("typo", "error"));
    ctx.backup_wait_ms = 0; /* the wait over */
    assert_refused("typo", "EtcdBackup no-such-backup not found in namespace ns1 (waited 0s): "
                           "check spec.source.backupName");
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
