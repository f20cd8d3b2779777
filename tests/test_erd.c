/* erd on kube-sim, with the clock set by the test (fire times without waiting): a drill's Job per
 * fire time (Verify and Restore mode) named, labelled and owned as the contract says; the verdict
 * read from the Job and its Pod into the status (lastResult, restorableRevision, keyCount, the
 * newest restorable snapshot kept while later drills fail, duration, conditions) and events; a
 * drill by hand (annotation); one Job at a time; history limits; a deadline; a missing target.
 * The test plays the Job controller and the kubelet: it writes the Jobs' status and their Pods. */
#include "controller/backups/erd.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/events.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/backups/cpjob.h"
#include "controller/backups/erd_sum.h"
#include "controller/core/etcdspec.h"
#include "controller/core/rctx.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/testutil.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_CRD = { "apiextensions.k8s.io", "v1",
                                             "customresourcedefinitions", 0 };
static const struct k8s_resource RES_EVENT = { "events.k8s.io", "v1", "events", 1 };
static const struct erd_env ENV = { "reg.example/warden:1", NULL, "reg.example/etcdbrctl:v0.41.2" };

static struct cfix fx;

static void crd(const char *name, const char *file)
{
    const char *src = getenv("WARDEN_SOURCE_DIR");
    char cmd[512], *out = NULL;
    cJSON *c = NULL;

    if (k8s_get(fx.c, &RES_CRD, NULL, name, NULL, &c, NULL) != KERR_OK) {
        snprintf(cmd, sizeof(cmd), "apply -f '%s/charts/etcd-warden/crds/%s'", src ? src : ".",
                 file);
        cr_assert_eq(ksim_harness_kubectl(fx.h, NULL, cmd, &out), 0, "%s", out ? out : "");
        free(out);
    }
    cJSON_Delete(c);
}

static void setup(void)
{
    struct ev_opts eo = { .reporting_controller = "etcd-warden.io/controller",
                          .reporting_instance = "test" };
    struct kerr_info err;
    cJSON *e, *s;

    cfix_start(&fx, NULL);
    crd("etcdrestoredrills.etcd-warden.io", "etcd-warden.io_etcdrestoredrills.yaml");
    crd("etcdbackups.etcd-warden.io", "etcd-warden.io_etcdbackups.yaml");
    crd("backupbuckets.etcd-warden.io", "etcd-warden.io_backupbuckets.yaml");
    OK(ev_new(fx.c, &eo, &fx.x.events, &err));
    e = cfix_etcd("main",
                  "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"ns1/main\","
                  "\"secretRef\":{\"name\":\"etcd-backup\"}}",
                  NULL);
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
    s = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
                      "\"etcd-backup\"},\"data\":{\"accessKeyID\":\"eA==\"}}");
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_SECRET, s));
    cJSON_Delete(s);
}

static void teardown(void)
{
    ev_free(fx.x.events);
    cfix_stop(&fx);
}

TestSuite(erd_kubesim, .init = setup, .fini = teardown, .timeout = 60);

/* Create drill name (spec fields in extra, JSON without braces); its creation time. */
static int64_t drill(const char *name, const char *cron, const char *extra)
{
    char text[2048];
    cJSON *d, *live;
    struct timespec ts;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdRestoreDrill\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"schedule\":\"%s\",%s%s"
             "\"target\":{\"etcdName\":\"main\"}}}",
             name, cron, extra ? extra : "", extra ? "," : "");
    d = jsonfix_parse(text);
    live = cfix_create(&fx, &ERD_RES_DRILL, d);
    cr_assert_eq(ktime_parse(jsonfix_str(live, "metadata.creationTimestamp"), &ts, NULL), KERR_OK);
    cJSON_Delete(live);
    cJSON_Delete(d);
    return (int64_t)ts.tv_sec;
}

static int64_t minute_after(int64_t t)
{
    return t - t % 60 + 60;
}

static long pass(const char *name, int64_t now)
{
    struct kerr_info err;
    long requeue = -1;

    kerr_clear(&err);
    OK(erd_run(&fx.x, &ENV, CFIX_NS, name, now * 1000, &requeue, &err));
    return requeue;
}

static cJSON *get(const char *name)
{
    cJSON *d = cfix_get(&fx, &ERD_RES_DRILL, name);

    cr_assert_not_null(d);
    return d;
}

/* The drill's status field as text ("" when absent; numbers printed). OWNED by the caller. */
static char *st(const char *name, const char *field)
{
    cJSON *d = get(name);
    const cJSON *v = kjson_get(kjson_get(d, "status"), field);
    char *out = cJSON_IsString(v)   ? strdup(v->valuestring)
                : cJSON_IsNumber(v) ? cJSON_PrintUnformatted(v)
                                    : strdup("");

    cJSON_Delete(d);
    return out;
}

static void expect_st(const char *name, const char *field, const char *want)
{
    char *got = st(name, field);

    cr_expect_str_eq(got, want, "status.%s", field);
    free(got);
}

static const char *fmt(int64_t t, char *out)
{
    cr_assert_eq(ktime_format((time_t)t, out), KERR_OK);
    return out;
}

/* The Job names of the drill's label, sorted, joined by ','. */
static char *jobs(const char *name)
{
    char sel[128], buf[1024] = "";
    cJSON *list = NULL;
    const cJSON *j;
    const char *names[16];
    size_t n = 0;

    snprintf(sel, sizeof(sel), CPJOB_LABEL_FOR "=etcdrestoredrill.%s", name);
    cr_assert_eq(k8s_list(fx.c, &ETCDSPEC_RES_JOB, CFIX_NS,
                          &(struct k8s_list_opts){ .label_selector = sel }, &list, NULL),
                 KERR_OK);
    cJSON_ArrayForEach (j, kjson_get_arr(list, "items"))
        if (!kjson_has(j, "metadata.deletionTimestamp") && n < 16)
            names[n++] = jsonfix_str(j, "metadata.name");
    for (size_t i = 0; i < n; i++)
        for (size_t k = i + 1; k < n; k++)
            if (strcmp(names[k], names[i]) < 0) {
                const char *t = names[i];
                names[i] = names[k];
                names[k] = t;
            }
    for (size_t i = 0; i < n; i++)
        snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? "," : "", names[i]);
    cJSON_Delete(list);
    return strdup(buf);
}

static void expect_jobs(const char *name, const char *want)
{
    char *got = jobs(name);

    cr_expect_str_eq(got, want);
    free(got);
}

/* Play the Job controller and kubelet: Job job ran from start to end, its container exited
 * with code, its termination message msg (NULL: no Pod at all; the Job failed with reason). */
static void finish(const char *job, int code, const char *msg, int64_t start, int64_t end,
                   const char *reason)
{
    char a[KTIME_LEN + 1], b[KTIME_LEN + 1], text[4096];
    struct kerr_info err;
    cJSON *j = NULL, *patch, *pod, *live = NULL;

    OK(k8s_get(fx.c, &ETCDSPEC_RES_JOB, CFIX_NS, job, NULL, &j, &err));
    if (msg) {
        cJSON *m = cJSON_CreateString(msg);
        char *q = cJSON_PrintUnformatted(m);

        snprintf(text, sizeof(text),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-abcde\","
                 "\"labels\":{\"controller-uid\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":"
                 "\"verify\",\"image\":\"x\"}]}}",
                 job, jsonfix_str(j, "metadata.uid"));
        pod = jsonfix_parse(text);
        OK(k8s_create(fx.c, &ETCDSPEC_RES_POD, CFIX_NS, pod, NULL, &live, &err));
        cJSON_Delete(pod);
        cJSON_Delete(live);
        snprintf(text, sizeof(text),
                 "{\"status\":{\"phase\":\"%s\",\"containerStatuses\":[{\"name\":\"verify\","
                 "\"state\":{\"terminated\":{\"exitCode\":%d,\"message\":%s}}}]}}",
                 code ? "Failed" : "Succeeded", code, q);
        free(q);
        cJSON_Delete(m);
        patch = jsonfix_parse(text);
        snprintf(text, sizeof(text), "%s-abcde", job);
        OK(k8s_patch(fx.c, &ETCDSPEC_RES_POD, CFIX_NS, text, K8S_PATCH_MERGE, patch,
                     &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
        cJSON_Delete(patch);
    }
    if (code == 0)
        snprintf(text, sizeof(text),
                 "{\"status\":{\"succeeded\":1,\"startTime\":\"%s\",\"completionTime\":\"%s\","
                 "\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}}",
                 fmt(start, a), fmt(end, b));
    else
        snprintf(text, sizeof(text),
                 "{\"status\":{\"failed\":1,\"startTime\":\"%s\",\"conditions\":[{\"type\":"
                 "\"Failed\",\"status\":\"True\",\"reason\":\"%s\",\"message\":\"stopped\","
                 "\"lastTransitionTime\":\"%s\"}]}}",
                 fmt(start, a), reason, fmt(end, b));
    patch = jsonfix_parse(text);
    OK(k8s_patch(fx.c, &ETCDSPEC_RES_JOB, CFIX_NS, job, K8S_PATCH_MERGE, patch,
                 &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cJSON_Delete(patch);
    cJSON_Delete(j);
}

static int events(const char *reason, const char *contains)
{
    cJSON *list = NULL;
    const cJSON *e;
    int n = 0;

    ev_stop(fx.x.events);
    cr_assert_eq(k8s_list(fx.c, &RES_EVENT, CFIX_NS, NULL, &list, NULL), KERR_OK);
    cJSON_ArrayForEach (e, kjson_get_arr(list, "items"))
        n += strcmp(jsonfix_str(e, "reason"), reason) == 0 &&
             (!contains || strstr(jsonfix_str(e, "note"), contains));
    cJSON_Delete(list);
    return n;
}

static const char *cond(const char *name, const char *type, const char *field, char *out)
{
    cJSON *d = get(name);
    const cJSON *c;

    out[0] = '\0';
    cJSON_ArrayForEach (c, kjson_get_arr(d, "status.conditions"))
        if (strcmp(jsonfix_str(c, "type"), type) == 0)
            snprintf(out, 512, "%s", jsonfix_str(c, field));
    cJSON_Delete(d);
    return out;
}

#define GOOD                                                                               \
    "{\"restorable\":true,\"prefix\":\"ns1/main\",\"snapshots\":9,\"chainLength\":9,"      \
    "\"revision\":61,\"keys\":45,\"newestSnapshot\":\"ns1/main/v2/Incr-00000060-00000061-" \
    "1700000300.gz\",\"newestSnapshotTime\":\"2023-11-14T22:18:20Z\"}"
#define BROKEN                                                                          \
    "{\"restorable\":false,\"prefix\":\"ns1/main\",\"snapshots\":9,\"chainLength\":9,"  \
    "\"failedObject\":\"ns1/main/v2/Incr-00000040-00000050-1700000200.gz\",\"reason\":" \
    "\"revision gap: 39 then 40\"}"

Test(erd_kubesim, a_fire_time_runs_a_verify_job_and_its_verdict_is_the_status)
{
    int64_t t0 = drill("d", "*/5 * * * *", NULL), f1 = t0 - t0 % 300 + 300;
    char name[64], c[512], a[KTIME_LEN + 1];
    cJSON *job = NULL;
    long rq;

    rq = pass("d", t0);
    expect_jobs("d", "");
    cr_expect_eq(rq, (f1 - t0) * 1000, "requeued at the next fire time");
    expect_st("d", "nextScheduleTime", fmt(f1, a));
    rq = pass("d", f1 + 1);
    snprintf(name, sizeof(name), "d-%" PRId64, f1 / 60);
    expect_jobs("d", name);
    cr_expect_eq(rq, ERD_POLL_MS, "followed while it runs");
    expect_st("d", "lastScheduleTime", fmt(f1, a));
    cr_assert_eq(k8s_get(fx.c, &ETCDSPEC_RES_JOB, CFIX_NS, name, NULL, &job, NULL), KERR_OK);
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.name"), "verify");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.image"),
                     "reg.example/warden:1");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.command.1"), "verify");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.args.0"),
                     "--storage-provider=S3");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.args.2"),
                     "--store-prefix=ns1/main");
    cr_expect_str_eq(jsonfix_str(job, "metadata.ownerReferences.0.kind"), "EtcdRestoreDrill");
    cr_expect_eq(jsonfix_int(job, "spec.activeDeadlineSeconds"), 3600);
    cr_expect_str_eq(jsonfix_str(job, "metadata.annotations[" ERD_ANN_SCHEDULED_AT "]"),
                     fmt(f1, a));
    cr_expect_null(kjson_get(job, "spec.template.spec.initContainers"));
    cJSON_Delete(job);
    /* nothing new while it runs */
    pass("d", f1 + 30);
    expect_jobs("d", name);
    finish(name, 0, "warden-snapshot: log\n" GOOD, f1 + 2, f1 + 9, NULL);
    pass("d", f1 + 40);
    expect_st("d", "lastResult", "Restorable");
    expect_st("d", "restorableRevision", "61");
    expect_st("d", "keyCount", "45");
    expect_st("d", "newestRestorableSnapshotTime", "2023-11-14T22:18:20Z");
    expect_st("d", "lastSuccessfulDrillTime", fmt(f1 + 9, a));
    expect_st("d", "lastDrillTime", fmt(f1 + 9, a));
    expect_st("d", "duration", "7s");
    expect_st("d", "lastJob", name);
    expect_st("d", "etcdName", "main");
    cr_expect_str_eq(cond("d", "Restorable", "status", c), "True");
    cr_expect_eq(events("DrillSucceeded", "Etcd ns1/main is restorable"), 1);
}

Test(erd_kubesim, a_broken_chain_is_not_restorable_and_the_last_good_figures_stay)
{
    int64_t t0 = drill("d", "* * * * *", "\"failedJobsHistoryLimit\":2"), f = minute_after(t0);
    char n1[64], n2[64], n3[64], c[512];

    pass("d", f);
    snprintf(n1, sizeof(n1), "d-%" PRId64, f / 60);
    finish(n1, 0, GOOD, f, f + 5, NULL);
    pass("d", f + 10);
    pass("d", f + 60);
    snprintf(n2, sizeof(n2), "d-%" PRId64, f / 60 + 1);
    finish(n2, 1, BROKEN, f + 60, f + 65, "BackoffLimitExceeded");
    pass("d", f + 70);
    expect_st("d", "lastResult", "NotRestorable");
    expect_st("d", "failedObject", "ns1/main/v2/Incr-00000040-00000050-1700000200.gz");
    /* what a restore now gives: the last good drill's */
    expect_st("d", "restorableRevision", "61");
    expect_st("d", "newestRestorableSnapshotTime", "2023-11-14T22:18:20Z");
    cr_expect_str_eq(cond("d", "Restorable", "status", c), "False");
    cr_expect_str_eq(cond("d", "Restorable", "reason", c), "NotRestorable");
    cr_expect(strstr(cond("d", "Restorable", "message", c), "Incr-00000040-00000050") != NULL, "%s",
              c);
    /* the deadline: the Job stopped with no Pod that ended */
    pass("d", f + 120);
    snprintf(n3, sizeof(n3), "d-%" PRId64, f / 60 + 2);
    finish(n3, 1, NULL, f + 120, f + 150, "DeadlineExceeded");
    pass("d", f + 155);
    expect_st("d", "lastResult", "Failed");
    cr_expect_str_eq(cond("d", "Restorable", "reason", c), "DrillFailed");
    cr_expect(strstr(cond("d", "Restorable", "message", c), "DeadlineExceeded") != NULL, "%s", c);
    cr_expect_eq(events("DrillFailed", "Incr-00000040-00000050"), 1);
    cr_expect_eq(events("DrillFailed", "DeadlineExceeded"), 1);
}

Test(erd_kubesim, history_limits_keep_the_newest_jobs)
{
    int64_t t0 = drill("d", "* * * * *", "\"successfulJobsHistoryLimit\":1"), f = minute_after(t0);
    char n[3][64], want[128];

    for (int i = 0; i < 3; i++) {
        pass("d", f + 60 * i);
        snprintf(n[i], sizeof(n[i]), "d-%" PRId64, f / 60 + i);
        finish(n[i], 0, GOOD, f + 60 * i, f + 60 * i + 5, NULL);
        pass("d", f + 60 * i + 10);
    }
    snprintf(want, sizeof(want), "%s", n[2]);
    expect_jobs("d", want);
    expect_st("d", "lastJob", n[2]);
}

Test(erd_kubesim, a_drill_by_hand_runs_once_even_when_suspended)
{
    int64_t t0 = drill("d", "0 0 1 1 *", "\"suspend\":true");
    struct kerr_info err;
    cJSON *patch = jsonfix_parse("{\"metadata\":{\"annotations\":{\"" ERD_ANN_RUN "\":\"1\"}}}");
    char name[64], *got;

    pass("d", t0 + 1);
    expect_jobs("d", "");
    OK(k8s_patch(fx.c, &ERD_RES_DRILL, CFIX_NS, "d", K8S_PATCH_MERGE, patch, NULL, NULL, &err));
    cJSON_Delete(patch);
    pass("d", t0 + 2);
    got = jobs("d");
    cr_expect(strncmp(got, "d-r", 3) == 0 && !strchr(got, ','), "one Job by hand: %s", got);
    snprintf(name, sizeof(name), "%s", got);
    free(got);
    expect_st("d", "lastRunRequest", "1");
    pass("d", t0 + 3);
    expect_jobs("d", name);
    finish(name, 0, GOOD, t0 + 3, t0 + 4, NULL);
    pass("d", t0 + 5);
    pass("d", t0 + 6);
    expect_jobs("d", name);
    expect_st("d", "lastResult", "Restorable");
    cr_expect_eq(events("DrillStarted", "run by hand"), 1);
}

Test(erd_kubesim, restore_mode_restores_with_the_sidecar_image_first)
{
    int64_t t0 = drill("d", "* * * * *",
                       "\"mode\":\"Restore\",\"restore\":{\"emptyDirSizeLimit\":\"8Gi\","
                       "\"resources\":{\"limits\":{\"memory\":\"2Gi\"}}}"),
            f = minute_after(t0);
    char name[64];
    const cJSON *a;
    cJSON *job = NULL;
    int restored_db = 0;

    pass("d", f);
    snprintf(name, sizeof(name), "d-%" PRId64, f / 60);
    cr_assert_eq(k8s_get(fx.c, &ETCDSPEC_RES_JOB, CFIX_NS, name, NULL, &job, NULL), KERR_OK);
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.initContainers.0.name"), "restore");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.initContainers.0.image"),
                     "reg.example/etcdbrctl:v0.41.2");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.initContainers.0.command.0"),
                     "/etcdbrctl");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.initContainers.0.args.0"), "restore");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.initContainers.0.env.1.name"),
                     "AWS_APPLICATION_CREDENTIALS");
    cr_expect_str_eq(
        jsonfix_str(job, "spec.template.spec.initContainers.0.resources.limits.memory"), "2Gi");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.volumes.1.emptyDir.sizeLimit"), "8Gi");
    cJSON_ArrayForEach (a, kjson_get(job, "spec.template.spec.containers.0.args"))
        restored_db +=
            strcmp(a->valuestring, "--restored-db=" ERD_RESTORE_DIR "/data/member/snap/db") == 0;
    cr_expect_eq(restored_db, 1);
    cJSON_Delete(job);
}

Test(erd_kubesim, a_missing_target_fails_the_drill_without_a_job)
{
    int64_t t0 = drill("d", "* * * * *", NULL), f = minute_after(t0);
    struct kerr_info err;
    char c[512];

    OK(k8s_delete(fx.c, &ETCDSPEC_RES_SECRET, CFIX_NS, "etcd-backup", NULL, NULL, &err));
    pass("d", f);
    expect_jobs("d", "");
    expect_st("d", "lastResult", "Failed");
    cr_expect_str_eq(cond("d", "Ready", "reason", c), "TargetNotFound");
    cr_expect(strstr(cond("d", "Ready", "message", c), "Secret ns1/etcd-backup") != NULL, "%s", c);
    cr_expect_eq(events("DrillFailed", "Secret ns1/etcd-backup"), 1);
}

Test(erd_kubesim, an_invalid_spec_gets_a_condition_and_no_jobs)
{
    int64_t t0 = drill("d", "* * * * *", "\"mode\":\"Verify\"");
    struct kerr_info err;
    cJSON *patch = jsonfix_parse("{\"spec\":{\"target\":{\"backupName\":\"b\"}}}");
    char c[512];

    /* both targets: the CRD's CEL rule refuses it in a cluster (kube-sim evaluates no such
     * rule), the controller refuses it too */
    OK(k8s_patch(fx.c, &ERD_RES_DRILL, CFIX_NS, "d", K8S_PATCH_MERGE, patch, NULL, NULL, &err));
    cJSON_Delete(patch);
    pass("d", minute_after(t0));
    pass("d", minute_after(t0) + 1);
    expect_jobs("d", "");
    cr_expect_str_eq(cond("d", "Ready", "status", c), "False");
    cr_expect_str_eq(cond("d", "Ready", "reason", c), "InvalidSpec");
    cr_expect(strstr(cond("d", "Ready", "message", c), "exactly one of etcdName and backupName"),
              "%s", c);
    cr_expect_eq(events("InvalidSpec", "spec.target"), 1, "one event, not one per pass");
}

Test(erd_kubesim, an_etcdbackups_copy_is_drilled_in_its_destination)
{
    struct kerr_info err;
    cJSON *b = jsonfix_parse(
        "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
        "{\"name\":\"b\"},\"spec\":{\"etcdName\":\"main\",\"destination\":{\"provider\":"
        "\"Local\",\"container\":\"offsite\",\"prefix\":\"copies/main\",\"secretRef\":"
        "{\"name\":\"offsite\"}}}}");
    cJSON *d = jsonfix_parse(
        "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdRestoreDrill\","
        "\"metadata\":{\"name\":\"c\"},\"spec\":{\"schedule\":\"* * * * *\",\"target\":"
        "{\"backupName\":\"b\"}}}");
    cJSON *s = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
                             "{\"name\":\"offsite\"},\"data\":{}}");
    /* the copy as its Job wrote it (the controller's record), not what the Secret says now */
    cJSON *rec = jsonfix_parse(
        "{\"status\":{\"destination\":{\"provider\":\"Local\",\"container\":\"offsite\","
        "\"prefix\":\"copies/main\",\"hostPath\":\"/etc/gardener/local-backupbuckets\"}}}");
    cJSON *live = cfix_create(&fx, &ERD_RES_DRILL, d), *job = NULL;
    struct k8s_write_opts wo = { .subresource = "status" };
    struct timespec ts;
    char name[64];
    int64_t f;

    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_SECRET, s));
    cJSON_Delete(cfix_create(
        &fx, &(struct k8s_resource){ "etcd-warden.io", "v1alpha1", "etcdbackups", 1 }, b));
    OK(k8s_patch(fx.c, &(struct k8s_resource){ "etcd-warden.io", "v1alpha1", "etcdbackups", 1 },
                 CFIX_NS, "b", K8S_PATCH_MERGE, rec, &wo, NULL, &err));
    cJSON_Delete(rec);
    cr_assert_eq(ktime_parse(jsonfix_str(live, "metadata.creationTimestamp"), &ts, NULL), KERR_OK);
    f = minute_after(ts.tv_sec);
    pass("c", f);
    snprintf(name, sizeof(name), "c-%" PRId64, f / 60);
    OK(k8s_get(fx.c, &ETCDSPEC_RES_JOB, CFIX_NS, name, NULL, &job, &err));
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.args.0"),
                     "--storage-provider=Local");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.containers.0.args.2"),
                     "--store-prefix=copies/main");
    cr_expect_str_eq(jsonfix_str(job, "spec.template.spec.volumes.0.hostPath.path"),
                     "/etc/gardener/local-backupbuckets/offsite");
    expect_st("c", "etcdName", "main");
    cJSON_Delete(job);
    cJSON_Delete(live);
    cJSON_Delete(d);
    cJSON_Delete(b);
    cJSON_Delete(s);
}
