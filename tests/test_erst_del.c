/* erst_del: the decision of a restore being deleted (a table); on kube-sim, the finalizer put
 * before the copy Job and the copy's start recorded, then the deletions: a restore Failed at
 * Creating (its delete Job with provenance, the finalizer dropped once it emptied what was its),
 * Completed or refused (nothing deleted), deleted in flight (the copy Job stopped first, then
 * Failed), one whose target another now owns (nothing deleted), a delete Job that leaves objects
 * (retried with backoff) and a Job of its name that is another's (left alone). */
#include "controller/backups/erst_del.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/backups/erst.h"
#include "controller/core/etcdspec.h"
#include "controller/core/podjob.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

/* ---- the decision, pure ---- */

Test(erst_del, decide_table)
{
#define N ERST_DJ_NONE
#define R ERST_DJ_RUNNING
#define C ERST_DJ_CLEAN
#define U ERST_DJ_UNFINISHED
#define F ERST_DJ_FOREIGN
    static const struct row {
        struct erst_del_facts f;
        enum erst_del_act want;
        const char *what;
    } rows[] = {
        { { 0, 1, 1, 1, N, 0, -1 }, ERST_DEL_NOTHING, "no finalizer: nothing, a Job or not" },
        { { 1, 1, 1, 1, N, 0, -1 }, ERST_DEL_STOP_COPY, "the copy Job still there: stopped" },
        { { 1, 1, 0, 1, C, 0, 0 }, ERST_DEL_STOP_COPY, "the copy Job first, whatever else" },
        { { 1, 0, 1, 1, N, 0, -1 }, ERST_DEL_END_FLIGHT, "in flight, the copy stopped: Failed" },
        { { 1, 0, 0, 0, N, 0, -1 }, ERST_DEL_DROP, "Completed or nothing copied: dropped" },
        { { 1, 0, 0, 0, F, 0, 1 }, ERST_DEL_DROP, "nothing copied: no claim, no Job looked at" },
        { { 1, 0, 0, 1, N, 0, -1 }, ERST_DEL_READ_CLAIMS, "Failed after its copy: the claims" },
        { { 1, 0, 0, 1, N, 0, 1 }, ERST_DEL_KEEP, "another owns the prefix: kept" },
        { { 1, 0, 0, 1, N, 0, 0 }, ERST_DEL_START, "nobody owns it: the delete Job" },
        { { 1, 0, 0, 1, N, 1, -1 }, ERST_DEL_WAIT, "the backoff not over: waits" },
        { { 1, 0, 0, 1, R, 0, -1 }, ERST_DEL_WAIT, "the delete Job running: waits" },
        { { 1, 0, 0, 1, C, 0, -1 }, ERST_DEL_DONE, "emptied: done" },
        { { 1, 0, 0, 1, C, 1, -1 }, ERST_DEL_DONE, "emptied, a backoff recorded before: done" },
        { { 1, 0, 0, 1, U, 0, -1 }, ERST_DEL_RETRY, "locked or failed: retried" },
        { { 1, 0, 0, 1, F, 0, -1 }, ERST_DEL_FOREIGN, "another's Job of its name: left alone" },
        { { 1, 0, 0, 1, F, 0, 0 }, ERST_DEL_FOREIGN, "another's Job even with nobody owning" },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        cr_expect_eq(erst_del_decide(&rows[i].f), rows[i].want, "row %zu (%s): %d, want %d", i,
                     rows[i].what, erst_del_decide(&rows[i].f), rows[i].want);
#undef N
#undef R
#undef C
#undef U
#undef F
}

/* ---- on kube-sim ---- */

static const struct k8s_resource RES_JOB = { "batch", "v1", "jobs", 1 };
static const struct k8s_resource RES_POD = { "", "v1", "pods", 1 };

#define SRC_STORE                                                           \
    "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"ns1--main\"," \
    "\"secretRef\":{\"name\":\"creds\"}}"
#define SPEC(etcd_name, prefix)                                                             \
    "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\"},\"target\":{\"etcdName\":" \
    "\"" etcd_name "\",\"store\":{\"container\":\"bkt\",\"prefix\":\"" prefix "\"}}}"

static const char SUMMARY[] =
    "{\"snapshots\":[{\"name\":\"Full-00000000-00000010-1700000000.gz\",\"kind\":\"Full\","
    "\"startRevision\":0,\"lastRevision\":10,\"size\":100,\"md5\":"
    "\"d41d8cd98f00b204e9800998ecf8427e\",\"destination\":\"x\"}],\"total\":1}";

static struct cfix fx;
static struct erst_ctx ctx;

static void setup(void)
{
    struct ksim_harness_opts o = { .gc_interval_ms = 50 }; /* the garbage collector: Foreground */
    cJSON *s;

    cfix_start(&fx, &o);
    memset(&ctx, 0, sizeof(ctx));
    ctx.client = fx.c;
    ctx.job_image = "img:1";
    ctx.backup_wait_ms = ERST_BACKUP_WAIT_MS;
    s = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
                      "\"creds\"},\"data\":{\"accessKeyID\":\"QQ==\"}}");
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_SECRET, s));
    cJSON_Delete(s);
    s = cfix_etcd("main", SRC_STORE, NULL);
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, s));
    cJSON_Delete(s);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(erst_del_kubesim, .init = setup, .fini = teardown, .timeout = 60);

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

static long run(const char *name)
{
    struct kerr_info err = { 0 };
    long requeue = -1;

    OK(erst_run(&ctx, CFIX_NS, name, &requeue, &err));
    return requeue;
}

/* path of the restore name, "" when absent or gone; in a static buffer. */
static const char *get(const char *name, const char *path)
{
    static char out[1024];
    cJSON *o = cfix_get(&fx, &ERST_RES_RESTORE, name);
    const char *v = kjson_get_str(o, path);

    snprintf(out, sizeof(out), "%s", v ? v : "");
    cJSON_Delete(o);
    return out;
}

static int gone(const char *name)
{
    cJSON *o = cfix_get(&fx, &ERST_RES_RESTORE, name);

    cJSON_Delete(o);
    return o == NULL;
}

static void delete_restore(const char *name)
{
    struct kerr_info err = { 0 };

    OK(k8s_delete(fx.c, &ERST_RES_RESTORE, CFIX_NS, name, NULL, NULL, &err));
}

static void etcd(const char *name, const char *store)
{
    cJSON *e = cfix_etcd(name, store, NULL);

    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
}

static int job_has_arg(const cJSON *job, const char *want)
{
    const cJSON *a;

    cJSON_ArrayForEach (a, kjson_get(job, "spec.template.spec.containers.0.args"))
        if (cJSON_IsString(a) && strcmp(a->valuestring, want) == 0)
            return 1;
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
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-%.5s\","
             "\"labels\":{\"controller-uid\":\"%s\",\"job-name\":\"%s\"}},\"spec\":{"
             "\"containers\":[{\"name\":\"c\",\"image\":\"img:1\"}]}}",
             job, kjson_get_str(j, "metadata.uid"), kjson_get_str(j, "metadata.uid"), job);
    pod = jsonfix_parse(text);
    cJSON_Delete(cfix_create(&fx, &RES_POD, pod));
    cJSON_Delete(pod);
    patch = cJSON_CreateObject();
    OK(kjson_set_str(patch, "status.phase", ok ? "Succeeded" : "Failed", &err));
    OK(kjson_set(patch, "status.containerStatuses",
                 jsonfix_parse("[{\"name\":\"c\",\"state\":{\"terminated\":{}}}]"), &err));
    OK(kjson_set_int(patch, "status.containerStatuses.0.state.terminated.exitCode", ok ? 0 : 1,
                     &err));
    OK(kjson_set_str(patch, "status.containerStatuses.0.state.terminated.message", message, &err));
    snprintf(text, sizeof(text), "%s-%.5s", job, kjson_get_str(j, "metadata.uid"));
    OK(k8s_patch(fx.c, &RES_POD, CFIX_NS, text, K8S_PATCH_MERGE, patch, &wo, NULL, &err));
    cJSON_Delete(patch);
    patch = jsonfix_parse(ok ? "{\"status\":{\"succeeded\":1}}" : "{\"status\":{\"failed\":1}}");
    OK(k8s_patch(fx.c, &RES_JOB, CFIX_NS, job, K8S_PATCH_MERGE, patch, &wo, NULL, &err));
    cJSON_Delete(patch);
    cJSON_Delete(j);
}

static int job_gone(const char *job)
{
    char path[256];

    snprintf(path, sizeof(path), "/apis/batch/v1/namespaces/ns1/jobs/%s", job);
    return ksimfix_await_status(fx.h, path, 404, 10000);
}

/* A restore name copied into its target, then Failed at Creating: an Etcd of its target name
 * made meanwhile on another prefix. */
static void failed_at_creating(const char *name, const char *target, const char *prefix)
{
    char spec[1024], job[128];

    snprintf(spec, sizeof(spec),
             "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\"},\"target\":{"
             "\"etcdName\":\"%s\",\"store\":{\"container\":\"bkt\",\"prefix\":\"%s\"}}}",
             target, prefix);
    restore(name, spec);
    snprintf(job, sizeof(job), "%s--restore", name);
    cr_assert_eq(run(name), ERST_POLL_MS, "%s", get(name, "status.error"));
    finish_job(job, 1, SUMMARY);
    cr_assert_gt(run(name), 0);
    cr_assert_str_eq(get(name, "status.phase"), ERST_PHASE_CREATING);
    etcd(target, "{\"provider\":\"S3\",\"container\":\"other\",\"prefix\":\"x\"}");
    cr_assert_eq(run(name), 0);
    cr_assert_str_eq(get(name, "status.phase"), ERST_PHASE_FAILED);
    cr_assert(job_gone(job), "the copy Job is deleted once read");
}

/* The finalizer is there before the copy Job; the copy's window starts at the restore's
 * creation, which is no later than the Job's (compared as RFC 3339 UTC text). */
Test(erst_del_kubesim, finalizer_before_the_copy)
{
    char made[1024];
    cJSON *job;

    restore("r1", SPEC("copy", "ns1--copy"));
    cr_assert_eq(run("r1"), ERST_POLL_MS);
    cr_assert_str_eq(get("r1", "metadata.finalizers.0"), ERST_FINALIZER);
    job = cfix_get(&fx, &RES_JOB, "r1--restore");
    cr_assert_not_null(job);
    snprintf(made, sizeof(made), "%s", get("r1", "metadata.creationTimestamp"));
    cr_assert_str_eq(get("r1", "status.copyStartedAt"), made);
    cr_assert_leq(strcmp(made, kjson_get_str(job, "metadata.creationTimestamp")), 0);
    cJSON_Delete(job);
    /* a refused restore never copies: no finalizer, and its deletion is immediate */
    restore("refused", SPEC("main", "ns1--refused"));
    cr_assert_eq(run("refused"), 0);
    cr_assert_str_eq(get("refused", "status.phase"), ERST_PHASE_FAILED);
    cr_assert_str_eq(get("refused", "metadata.finalizers.0"), "");
    delete_restore("refused");
    cr_assert(gone("refused"));
}

/* Failed at Creating, deleted: a delete Job of the target prefix with the copy's window; once
 * it emptied what was the restore's, the finalizer goes and the restore with it. */
Test(erst_del_kubesim, failed_at_creating_deleted)
{
    char since[1100], before[1100];
    cJSON *job;

    failed_at_creating("r2", "late", "ns1--late");
    snprintf(since, sizeof(since), "--written-since=%s", get("r2", "status.copyStartedAt"));
    snprintf(before, sizeof(before), "--written-before=%s", get("r2", "status.completionTime"));
    delete_restore("r2");
    cr_assert_not(gone("r2"), "the finalizer holds it");
    cr_assert_eq(run("r2"), ERST_POLL_MS);
    job = cfix_get(&fx, &RES_JOB, "r2--cleanup");
    cr_assert_not_null(job, "no delete Job");
    cr_assert(job_has_arg(job, "--store-prefix=ns1--late"));
    cr_assert(job_has_arg(job, "--store-container=bkt"));
    cr_assert(job_has_arg(job, "--storage-provider=S3"));
    cr_assert(job_has_arg(job, since), "no %s", since);
    cr_assert(job_has_arg(job, before), "no %s", before);
    cr_assert(job_has_arg(job, "--only-copies"), "a sidecar's snapshot in the window would go");
    cr_assert_str_eq(kjson_get_str(job, "metadata.annotations[" PODJOB_ANN_OWNER_UID "]"),
                     get("r2", "metadata.uid"));
    cJSON_Delete(job);
    /* running: waits */
    cr_assert_eq(run("r2"), ERST_POLL_MS);
    cr_assert_not(gone("r2"));
    finish_job("r2--cleanup", 1,
               "{\"prefix\":\"ns1--late\",\"objectPrefix\":\"ns1--late\",\"deleted\":1,"
               "\"locked\":0,\"failed\":0,\"remaining\":0,\"earliestDeletable\":null,"
               "\"dryRun\":false,\"foreign\":0,\"foreignKeys\":[]}");
    cr_assert_eq(run("r2"), 0);
    cr_assert(gone("r2"), "the finalizer is not dropped: %s", get("r2", "status.deletionError"));
    cr_assert(job_gone("r2--cleanup"), "the delete Job stays");
}

/* Completed: its Etcd owns the data; nothing is deleted. */
Test(erst_del_kubesim, completed_deleted)
{
    restore("r3", SPEC("copy", "ns1--copy"));
    cr_assert_eq(run("r3"), ERST_POLL_MS);
    finish_job("r3--restore", 1, SUMMARY);
    cr_assert_gt(run("r3"), 0);
    cr_assert_eq(run("r3"), 0);
    cr_assert_str_eq(get("r3", "status.phase"), ERST_PHASE_COMPLETED);
    delete_restore("r3");
    cr_assert_eq(run("r3"), 0);
    cr_assert(gone("r3"));
    cr_assert_null(cfix_get(&fx, &RES_JOB, "r3--cleanup"), "a delete Job for a Completed one");
}

/* Deleted while copying: the copy Job is stopped first, then the restore is Failed (the end
 * of its writes), then what it wrote is deleted. */
Test(erst_del_kubesim, deleted_in_flight)
{
    cJSON *job;
    char before[1100];

    restore("r4", SPEC("copy", "ns1--copy"));
    cr_assert_eq(run("r4"), ERST_POLL_MS);
    delete_restore("r4");
    cr_assert_eq(run("r4"), ERST_POLL_MS);
    cr_assert(job_gone("r4--restore"), "the copy Job is not deleted");
    cr_assert_str_eq(get("r4", "status.phase"), ERST_PHASE_COPYING);
    cr_assert_eq(run("r4"), 1);
    cr_assert_str_eq(get("r4", "status.phase"), ERST_PHASE_FAILED);
    cr_assert_str_eq(get("r4", "status.error"), "deleted while Copying");
    cr_assert_eq(run("r4"), ERST_POLL_MS);
    job = cfix_get(&fx, &RES_JOB, "r4--cleanup");
    cr_assert_not_null(job, "no delete Job");
    snprintf(before, sizeof(before), "--written-before=%s", get("r4", "status.completionTime"));
    cr_assert(job_has_arg(job, before), "no %s", before);
    cJSON_Delete(job);
}

/* The Etcd of the target's name on the target prefix (made by hand after the failure) owns
 * the data: nothing is deleted; the same for another Etcd on an overlapping prefix. */
Test(erst_del_kubesim, owned_by_another)
{
    cJSON *e;
    struct kerr_info err = { 0 };

    failed_at_creating("r5", "late", "ns1--late");
    /* the Etcd "late" moved onto the target prefix */
    e = cfix_get(&fx, &ETCDSPEC_RES_ETCD, "late");
    OK(kjson_set_str(e, "spec.backup.store.container", "bkt", &err));
    OK(kjson_set_str(e, "spec.backup.store.prefix", "ns1--late", &err));
    OK(kjson_set_str(e, "spec.backup.store.provider", "aws", &err));
    OK(k8s_update(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "late", e, NULL, NULL, &err));
    cJSON_Delete(e);
    delete_restore("r5");
    cr_assert_eq(run("r5"), 0);
    cr_assert(gone("r5"));
    cr_assert_null(cfix_get(&fx, &RES_JOB, "r5--cleanup"), "the owner's data is deleted");

    failed_at_creating("r6", "late2", "ns1--other");
    etcd("neighbour", "{\"provider\":\"S3\",\"container\":\"bkt\",\"prefix\":\"ns1--other-2\"}");
    delete_restore("r6");
    cr_assert_eq(run("r6"), 0);
    cr_assert(gone("r6"));
    cr_assert_null(cfix_get(&fx, &RES_JOB, "r6--cleanup"));
}

/* A delete Job that leaves locked objects: recorded, retried after the lock; the Job is deleted
 * and the restore stays. */
Test(erst_del_kubesim, locked)
{
    failed_at_creating("r7", "late", "ns1--late");
    delete_restore("r7");
    cr_assert_eq(run("r7"), ERST_POLL_MS);
    finish_job("r7--cleanup", 1,
               "{\"prefix\":\"ns1--late\",\"objectPrefix\":\"ns1--late\",\"deleted\":0,"
               "\"locked\":1,\"failed\":0,\"remaining\":1,"
               "\"earliestDeletable\":\"2999-01-01T00:00:00Z\",\"dryRun\":false,\"foreign\":0,"
               "\"foreignKeys\":[]}");
    cr_assert_gt(run("r7"), 60000L);
    cr_assert_not(gone("r7"));
    cr_assert(strstr(get("r7", "status.deletionError"), "locked in the store until 2999-01-01"),
              "%s", get("r7", "status.deletionError"));
    {
        cJSON *o = cfix_get(&fx, &ERST_RES_RESTORE, "r7");
        int64_t failures = 0;

        cr_assert_eq(kjson_get_int64(o, "status.deletionFailures", &failures), KERR_OK);
        cr_assert_eq(failures, 1);
        cJSON_Delete(o);
    }
    cr_assert_str_neq(get("r7", "status.nextDeletionAt"), "");
    cr_assert(job_gone("r7--cleanup"));
    cr_assert_gt(run("r7"), 0);
    cr_assert_null(cfix_get(&fx, &RES_JOB, "r7--cleanup"), "retried before its time");
}

/* A Job of the delete Job's name that is another's: left alone, the error recorded. */
Test(erst_del_kubesim, foreign_delete_job)
{
    cJSON *job, *mine;
    char uid[64];

    job = jsonfix_parse("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":"
                        "\"r8--cleanup\"},\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":"
                        "\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"other:1\"}]}}}}");
    mine = cfix_create(&fx, &RES_JOB, job);
    snprintf(uid, sizeof(uid), "%s", kjson_get_str(mine, "metadata.uid"));
    cJSON_Delete(mine);
    cJSON_Delete(job);
    failed_at_creating("r8", "late8", "ns1--eight");
    delete_restore("r8");
    cr_assert_gt(run("r8"), 0);
    cr_assert_not(gone("r8"));
    cr_assert(strstr(get("r8", "status.deletionError"), "r8--cleanup exists and is not ours"), "%s",
              get("r8", "status.deletionError"));
    job = cfix_get(&fx, &RES_JOB, "r8--cleanup");
    cr_assert_str_eq(kjson_get_str(job, "metadata.uid"), uid, "left alone");
    cJSON_Delete(job);
}

/* A pass that created the copy Job and died before the status, then the deletion: the Job's
 * name and creation are recorded before it is stopped, so what it wrote is still deleted. */
Test(erst_del_kubesim, crash_before_the_status)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    struct kerr_info err = { 0 };
    char created[64];
    cJSON *rs, *job;

    restore("r9", SPEC("copy", "ns1--copy"));
    cr_assert_eq(run("r9"), ERST_POLL_MS);
    job = cfix_get(&fx, &RES_JOB, "r9--restore");
    snprintf(created, sizeof(created), "%s", kjson_get_str(job, "metadata.creationTimestamp"));
    cJSON_Delete(job);
    rs = cfix_get(&fx, &ERST_RES_RESTORE, "r9");
    OK(kjson_set(rs, "status", cJSON_CreateObject(), &err));
    OK(k8s_update(fx.c, &ERST_RES_RESTORE, CFIX_NS, "r9", rs, &wo, NULL, &err));
    cJSON_Delete(rs);
    cr_assert_str_eq(get("r9", "status.jobName"), "");
    delete_restore("r9");
    cr_assert_eq(run("r9"), ERST_POLL_MS);
    cr_assert_str_eq(get("r9", "status.jobName"), "r9--restore");
    cr_assert_str_eq(get("r9", "status.copyStartedAt"), created);
    cr_assert(job_gone("r9--restore"));
    cr_assert_eq(run("r9"), 1);
    cr_assert_str_eq(get("r9", "status.phase"), ERST_PHASE_FAILED);
    cr_assert_eq(run("r9"), ERST_POLL_MS);
    job = cfix_get(&fx, &RES_JOB, "r9--cleanup");
    cr_assert_not_null(job, "what the Job wrote is kept");
    cJSON_Delete(job);
}

/* Another restore in flight whose target names no provider is in the store its source Etcd
 * tells (as warden-webhook admitted it): it is nobody's owner of other prefixes there, so a
 * restore next to it copies and its deletion deletes what it wrote. One whose store no rule
 * tells (its source Etcd not there) still stands in the way of the whole container. */
Test(erst_del_kubesim, a_providerless_target_owns_its_prefix_only)
{
    cJSON *job;

    restore("wide", "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\"},\"target\":{"
                    "\"etcdName\":\"w\",\"store\":{\"container\":\"bkt\",\"prefix\":"
                    "\"ns1--wide\"}}}");
    failed_at_creating("r7", "late7", "ns1--seven");
    delete_restore("r7");
    cr_assert_eq(run("r7"), ERST_POLL_MS);
    job = cfix_get(&fx, &RES_JOB, "r7--cleanup");
    cr_assert_not_null(job, "the copy is kept for a restore that owns nothing there");
    cJSON_Delete(job);

    failed_at_creating("r8", "late8", "ns1--eight");
    restore("blind", "{\"source\":{\"etcdName\":\"nosuch\"},\"target\":{\"etcdName\":\"b\","
                     "\"store\":{\"container\":\"bkt\",\"prefix\":\"ns1--blind\"}}}");
    delete_restore("r8");
    cr_assert_eq(run("r8"), 0);
    cr_assert(gone("r8"));
    cr_assert_null(cfix_get(&fx, &RES_JOB, "r8--cleanup"), "a target not told is not in the way");
}

/* A Secret name with data.hostPath b64 (replaced when there). */
static void host_secret(const char *name, const char *b64)
{
    struct kerr_info err = { 0 };
    char text[512];
    cJSON *s;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"%s\"},"
             "\"data\":{\"hostPath\":\"%s\"}}",
             name, b64);
    s = jsonfix_parse(text);
    if (k8s_create(fx.c, &ETCDSPEC_RES_SECRET, CFIX_NS, s, NULL, NULL, &err) == KERR_EXISTS) {
        kerr_clear(&err);
        OK(k8s_update(fx.c, &ETCDSPEC_RES_SECRET, CFIX_NS, name, s, NULL, NULL, &err));
    }
    cJSON_Delete(s);
}

/* The hostPath of the Job's volume name, "" when none. */
static const char *volume_path(const char *job, const char *name)
{
    static char out[512];
    cJSON *j = cfix_get(&fx, &RES_JOB, job);
    const cJSON *v;

    out[0] = '\0';
    cJSON_ArrayForEach (v, kjson_get(j, "spec.template.spec.volumes"))
        if (strcmp(kjson_get_str(v, "name") ? kjson_get_str(v, "name") : "", name) == 0)
            snprintf(out, sizeof(out), "%s", kjson_get_str(v, "hostPath.path"));
    cJSON_Delete(j);
    return out;
}

#define LB_BKT "L3Zhci9saWIvbGIvYmt0" /* /var/lib/lb/bkt */
#define EVIL   "L3Zhci9saWIvZXZpbA==" /* /var/lib/evil */
#define LOCAL_SPEC(prefix)                                                              \
    "{\"source\":{\"store\":{\"provider\":\"Local\",\"container\":\"obkt\",\"prefix\":" \
    "\"o/src\",\"secretRef\":{\"name\":\"src\"}}},\"etcdTemplate\":{\"replicas\":1},"   \
    "\"target\":{\"etcdName\":\"x\",\"store\":{\"provider\":\"Local\",\"container\":"   \
    "\"shoot--a\",\"prefix\":\"" prefix "\",\"secretRef\":{\"name\":\"tgt\"}}}}"

/* BackupBucket "obkt" of provider Local: /var/lib/evil/obkt, every namespace (no selector); its
 * Secret ns1/bucket. A Local source is read only from a directory the namespace owns. */
static void local_bucket(void)
{
    static const struct k8s_resource res = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 };
    struct kerr_info err = { 0 };
    cJSON *b =
        jsonfix_parse("{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupBucket\","
                      "\"metadata\":{\"name\":\"obkt\"},\"spec\":{\"provider\":\"Local\","
                      "\"container\":\"obkt\",\"secretRef\":{\"namespace\":\"" CFIX_NS "\","
                      "\"name\":\"bucket\"}}}");

    host_secret("bucket", EVIL);
    OK(k8s_create(fx.c, &res, NULL, b, NULL, NULL, &err));
    cJSON_Delete(b);
}

/* A Local target is the directory the copy Job mounted, recorded when it was made: the cleanup
 * deletes there, not where the target Secret points when the restore is deleted (another
 * Etcd's directory); without the record nothing is deleted. */
Test(erst_del_kubesim, a_local_cleanup_deletes_where_the_copy_wrote)
{
    local_bucket();
    host_secret("src", EVIL);
    host_secret("tgt", EVIL);
    etcd("victim", "{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"shoot--a/etcd\","
                   "\"secretRef\":{\"name\":\"victim\"}}");
    host_secret("victim", "L3Zhci9saWIvbGI="); /* /var/lib/lb: /var/lib/lb/bkt/shoot--a/etcd */
    restore("l1", LOCAL_SPEC("etcd"));
    cr_assert_eq(run("l1"), ERST_POLL_MS, "%s", get("l1", "status.error"));
    cr_assert_str_eq(get("l1", "status.targetHostPath"), "/var/lib/evil");
    cr_assert_str_eq(volume_path("l1--restore", "to-store"), "/var/lib/evil/shoot--a");
    host_secret("tgt", LB_BKT); /* the victim's directory, once the copy was admitted */
    delete_restore("l1");
    cr_assert_eq(run("l1"), ERST_POLL_MS);
    cr_assert(job_gone("l1--restore"));
    cr_assert_eq(run("l1"), 1);
    cr_assert_eq(run("l1"), ERST_POLL_MS, "%s", get("l1", "status.deletionError"));
    cr_assert_str_eq(volume_path("l1--cleanup", "to-store"), "/var/lib/evil/shoot--a");

    /* the record lost: nothing is known to be the restore's, nothing deleted */
    host_secret("tgt", EVIL);
    restore("l3", LOCAL_SPEC("other"));
    cr_assert_eq(run("l3"), ERST_POLL_MS, "%s", get("l3", "status.error"));
    {
        struct k8s_write_opts wo = { .subresource = "status" };
        struct kerr_info err = { 0 };
        cJSON *r = cfix_get(&fx, &ERST_RES_RESTORE, "l3");

        cr_assert_eq(kjson_delete(r, "status.targetHostPath"), KERR_OK);
        OK(k8s_update(fx.c, &ERST_RES_RESTORE, CFIX_NS, "l3", r, &wo, NULL, &err));
        cJSON_Delete(r);
    }
    delete_restore("l3");
    cr_assert_eq(run("l3"), ERST_POLL_MS);
    cr_assert(job_gone("l3--restore"));
    cr_assert_eq(run("l3"), 1);
    run("l3");
    cr_assert(gone("l3"), "kept: %s", get("l3", "status.deletionError"));
    cr_assert_null(cfix_get(&fx, &RES_JOB, "l3--cleanup"), "a cleanup Job without a record");
}
