/* imt and imtjob: the task hibernation creates, the CronJob built as etcd-druid builds its backup
 * sidecar (command, args, env, Secret mount per provider, non-root), its name and hash, bad input;
 * and on kube-sim: ensure/delete idempotent, the CronJob created owned by the task and left alone
 * when unchanged, its last schedule time reflected in the task's status, an owner reference
 * repaired, a task for a missing Etcd or with a bad schedule reported, the CronJob garbage
 * collected with its task. */
#include "controller/immutability/imt.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/core/etcdspec.h"
#include "controller/core/rctx.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/testutil.h"
#include "tests/kube-sim/validate.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const char S3[] = "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"ns1--main\","
                         "\"secretRef\":{\"name\":\"etcd-backup\"},\"immutability\":"
                         "{\"retentionType\":\"bucket\"}}";

/* A task as the API server returns it: uid and creationTimestamp set. */
static cJSON *stored_task(const cJSON *etcd)
{
    cJSON *t = NULL;
    struct kerr_info err;

    OK(imtjob_task_build(etcd, &t, &err));
    OK(kjson_set_str(t, "metadata.uid", "task-uid", &err));
    OK(kjson_set_str(t, "metadata.creationTimestamp", "2026-11-23T10:00:00Z", &err));
    return t;
}

static cJSON *etcd_of(const char *store, const char *schedule)
{
    cJSON *e = cfix_etcd("main", store, schedule);
    struct kerr_info err;

    OK(kjson_set_str(e, "metadata.uid", "etcd-uid", &err));
    return e;
}

Test(imtjob, task_for_hibernation)
{
    cJSON *e = etcd_of(S3, "0 */12 * * *"), *t = NULL;
    struct kerr_info err;

    OK(imtjob_task_build(e, &t, &err));
    jsonfix_assert_sorted(
        t, "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":"
           "\"ExtendFullSnapshotImmutabilityTask\",\"metadata\":{\"labels\":{"
           "\"app.kubernetes.io/managed-by\":\"etcd-warden\",\"app.kubernetes.io/part-of\":"
           "\"main\"},\"name\":\"main-extend-immutability\",\"namespace\":\"ns1\","
           "\"ownerReferences\":[{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\","
           "\"blockOwnerDeletion\":true,\"controller\":true,\"kind\":\"Etcd\",\"name\":\"main\","
           "\"uid\":\"etcd-uid\"}]},\"spec\":{\"config\":{\"schedule\":\"0 */12 * * *\"},"
           "\"etcdName\":\"main\"}}");
    cJSON_Delete(t);
    cJSON_Delete(e);
    e = etcd_of(S3, NULL);
    OK(imtjob_task_build(e, &t, &err));
    cr_assert_str_eq(jsonfix_str(t, "spec.config.schedule"), ETCDSPEC_DEFAULT_IMM_SCHEDULE);
    cJSON_Delete(t);
    cJSON_Delete(e);
    e = etcd_of(S3, "daily");
    cr_assert_eq(imtjob_task_build(e, &t, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "spec.backup.fullSnapshotSchedule: \"daily\" is not a cron"), "%s",
              err.msg);
    cJSON_Delete(e);
}

Test(imtjob, cronjob_names)
{
    char out[IMTJOB_CRONJOB_MAX + 1], out2[IMTJOB_CRONJOB_MAX + 1];

    imtjob_cronjob_name("main-extend-immutability", out);
    cr_assert_str_eq(out, "main-extend-immutability");
    imtjob_cronjob_name("a-rather-long-etcd-name-for-a-shoot-cluster-extend-immutability", out);
    imtjob_cronjob_name("a-rather-long-etcd-name-for-a-shoot-cluster-extend-immutabilitx", out2);
    cr_assert_eq(strlen(out), IMTJOB_CRONJOB_MAX);
    cr_assert_eq(strncmp(out, "a-rather-long-etcd-name-for-a-shoot-cluster-", 44), 0, "%s", out);
    cr_assert_str_neq(out, out2, "the hash tells long names apart");
}

static cJSON *build(const char *store, const char *command, struct kerr_info *err, enum kerr want)
{
    cJSON *e = etcd_of(store, "0 */12 * * *"), *t = stored_task(e), *cj = NULL;

    cr_assert_eq(imtjob_cronjob_build(t, e, "img:1", command, &cj, err), want, "%s", err->msg);
    cJSON_Delete(t);
    cJSON_Delete(e);
    return cj;
}

#define CTR "spec.jobTemplate.spec.template.spec.containers[0]"
#define POD "spec.jobTemplate.spec.template.spec"

Test(imtjob, s3_cronjob_as_etcd_druid_builds_the_sidecar)
{
    struct kerr_info err;
    cJSON *cj = build(S3, NULL, &err, KERR_OK);

    cr_assert_str_eq(jsonfix_str(cj, "metadata.name"), "main-extend-immutability");
    cr_assert_str_eq(jsonfix_str(cj, "spec.schedule"), "0 */12 * * *");
    cr_assert_str_eq(jsonfix_str(cj, "spec.concurrencyPolicy"), "Forbid");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".image"), "img:1");
    jsonfix_assert_sorted(kjson_get(cj, CTR ".command"),
                          "[\"warden-snapshot\",\"extend-snapshot-immutability\"]");
    jsonfix_assert_sorted(kjson_get(cj, CTR ".args"),
                          "[\"--gc-from-timestamp=1795428000\",\"--storage-provider=S3\","
                          "\"--store-container=bkt\",\"--store-prefix=ns1--main\"]");
    jsonfix_assert_sorted(
        kjson_get(cj, CTR ".env"),
        "[{\"name\":\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}},"
        "{\"name\":\"POD_NAMESPACE\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":"
        "\"metadata.namespace\"}}},{\"name\":\"STORAGE_CONTAINER\",\"value\":\"bkt\"},"
        "{\"name\":\"AWS_APPLICATION_CREDENTIALS\",\"value\":\"/var/etcd-backup\"}]");
    jsonfix_assert_sorted(kjson_get(cj, POD ".volumes"),
                          "[{\"name\":\"etcd-backup-secret\",\"secret\":{\"secretName\":"
                          "\"etcd-backup\"}}]");
    jsonfix_assert_sorted(kjson_get(cj, CTR ".volumeMounts"),
                          "[{\"mountPath\":\"/var/etcd-backup\",\"name\":\"etcd-backup-secret\","
                          "\"readOnly\":true}]");
    cr_assert(cJSON_IsTrue(kjson_get(cj, POD ".securityContext.runAsNonRoot")));
    cr_assert_eq(jsonfix_int(cj, POD ".securityContext.runAsUser"), IMTJOB_RUN_AS);
    cr_assert(cJSON_IsFalse(kjson_get(cj, CTR ".securityContext.allowPrivilegeEscalation")));
    cr_assert_str_eq(jsonfix_str(cj, "metadata.ownerReferences[0].uid"), "task-uid");
    cr_assert_str_eq(jsonfix_str(cj, "metadata.ownerReferences[0].kind"), IMTJOB_KIND);
    cr_assert(cJSON_IsTrue(kjson_get(cj, "metadata.ownerReferences[0].controller")));
    cr_assert_eq(strlen(jsonfix_str(cj, "metadata.annotations[etcd-warden.io/spec-hash]")), 64);
    cJSON_Delete(cj);
}

Test(imtjob, other_providers)
{
    static const char *const refused[][2] = {
        { "alicloud", "OSS" },
        { "openstack", "Swift" },
    };
    char store[256], want[64];
    struct kerr_info err;
    cJSON *cj;
    size_t i;

    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        snprintf(store, sizeof(store),
                 "{\"provider\":\"%s\",\"container\":\"b\",\"prefix\":\"p\","
                 "\"secretRef\":{\"name\":\"s\"}}",
                 refused[i][0]);
        cr_assert_null(build(store, NULL, &err, KERR_UNSUPPORTED));
        snprintf(want, sizeof(want), "%s (%s) is not supported", refused[i][0], refused[i][1]);
        cr_assert(strstr(err.msg, want), "%s", err.msg);
    }
    cj = build("{\"provider\":\"azure\",\"container\":\"b\",\"prefix\":\"p\",\"secretRef\":"
               "{\"name\":\"s\"}}",
               "etcdbrctl  extend-snapshot-immutability", &err, KERR_OK);
    jsonfix_assert_sorted(kjson_get(cj, CTR ".command"),
                          "[\"etcdbrctl\",\"extend-snapshot-immutability\"]");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".env[3].name"), "AZURE_APPLICATION_CREDENTIALS");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".env[4].name"), "AZURE_EMULATOR_ENABLED");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".env[4].valueFrom.secretKeyRef.key"), "emulatorEnabled");
    cr_assert(cJSON_IsTrue(kjson_get(cj, CTR ".env[4].valueFrom.secretKeyRef.optional")));
    cJSON_Delete(cj);
    cj = build("{\"provider\":\"gcp\",\"container\":\"b\",\"prefix\":\"p\",\"secretRef\":"
               "{\"name\":\"s\"}}",
               NULL, &err, KERR_OK);
    cr_assert_str_eq(jsonfix_str(cj, CTR ".env[3].name"), "GOOGLE_APPLICATION_CREDENTIALS");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".env[3].value"), "/var/.gcp/serviceaccount.json");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".volumeMounts[0].mountPath"), "/var/.gcp/");
    cJSON_Delete(cj);
    cj =
        build("{\"provider\":\"local\",\"container\":\"b\",\"prefix\":\"p\"}", NULL, &err, KERR_OK);
    cr_assert_str_eq(jsonfix_str(cj, POD ".volumes[0].hostPath.path"),
                     "/etc/gardener/local-backupbuckets/b");
    cr_assert_str_eq(jsonfix_str(cj, POD ".volumes[0].hostPath.type"), "Directory");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".volumeMounts[0].mountPath"), "/home/nonroot/b");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".env[3].name"), "HOME");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".env[3].value"), "/home/nonroot");
    cJSON_Delete(cj);
}

Test(imtjob, endpoint_override_passed_as_etcd_druid_does)
{
    struct kerr_info err;
    cJSON *cj = build("{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"p\","
                      "\"endpointOverride\":\"http://minio.store:9000\"}",
                      NULL, &err, KERR_OK);

    jsonfix_assert_sorted(kjson_get(cj, CTR ".args"),
                          "[\"--gc-from-timestamp=1795428000\",\"--storage-provider=S3\","
                          "\"--store-container=bkt\",\"--store-prefix=p\","
                          "\"--store-endpoint-override=http://minio.store:9000\"]");
    cJSON_Delete(cj);
}

Test(imtjob, local_host_path_from_the_secret)
{
    cJSON *e = etcd_of("{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"p\","
                       "\"secretRef\":{\"name\":\"local-backup\"}}",
                       NULL),
          *t = stored_task(e), *cj = NULL;
    /* hostPath: "/var/buckets/" */
    cJSON *sec = jsonfix_parse("{\"data\":{\"hostPath\":\"L3Zhci9idWNrZXRzLw==\"}}");
    struct kerr_info err;

    cr_assert_str_eq(imtjob_local_secret(e), "local-backup");
    OK(imtjob_cronjob_build_store(t, e, sec, NULL, NULL, &cj, &err));
    cr_assert_str_eq(jsonfix_str(cj, POD ".volumes[0].hostPath.path"), "/var/buckets/bkt");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".volumeMounts[0].mountPath"), "/home/nonroot/bkt");
    cr_assert_null(kjson_get(cj, CTR ".volumeMounts[1]"), "the Local Secret is not mounted");
    cJSON_Delete(cj);
    cJSON_Delete(sec);
    cJSON_Delete(t);
    cJSON_Delete(e);
}

Test(imtjob, longest_names_give_names_and_labels_the_api_accepts)
{
    /* 56: the longest name whose "<name>-client" Service etcd-druid can create */
    const char *names[] = { "a-rather-long-etcd-name-of-44-characters-xyz",
                            "an-etcd-name-of-fifty-six-characters-is-the-longest-one1" };
    char why[1024];
    struct kerr_info err;
    const cJSON *it;
    size_t i;

    for (i = 0; i < 2; i++) {
        cJSON *e = cfix_etcd(names[i], S3, NULL), *t, *cj = NULL;

        OK(kjson_set_str(e, "metadata.uid", "etcd-uid", &err));
        t = stored_task(e);
        cJSON_ArrayForEach (it, kjson_get_obj(t, "metadata.labels"))
            cr_assert(ksim_valid_label_value(it->valuestring, why, sizeof(why)), "%s", why);
        cr_assert(ksim_valid_subdomain(jsonfix_str(t, "metadata.name"), why, sizeof(why)));
        OK(imtjob_cronjob_build(t, e, NULL, NULL, &cj, &err));
        cr_assert_leq(strlen(jsonfix_str(cj, "metadata.name")), 52);
        cJSON_ArrayForEach (it, kjson_get_obj(cj, "metadata.labels"))
            cr_assert(ksim_valid_label_value(it->valuestring, why, sizeof(why)), "%s: %s",
                      it->string, why);
        cr_assert_str_eq(jsonfix_str(cj, "metadata.labels[app.kubernetes.io/part-of]"), names[i]);
        cJSON_Delete(cj);
        cJSON_Delete(t);
        cJSON_Delete(e);
    }
}

Test(imtjob, bad_input_named)
{
    static const char *const rows[][2] = {
        { "{\"provider\":\"dropbox\",\"prefix\":\"p\"}", "unsupported provider \"dropbox\"" },
        { "{\"prefix\":\"p\"}", "spec.backup.store.provider: required" },
        { "{\"provider\":\"aws\"}", "spec.backup.store.prefix: required" },
    };
    struct kerr_info err;
    cJSON *e, *t, *cj = NULL;
    size_t i;

    for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cr_assert_null(build(rows[i][0], NULL, &err, KERR_INVAL));
        cr_assert(strstr(err.msg, rows[i][1]), "%zu: %s", i, err.msg);
    }
    e = etcd_of(NULL, NULL);
    t = stored_task(e);
    cr_assert_eq(imtjob_cronjob_build(t, e, NULL, NULL, &cj, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "has no backup store"), "%s", err.msg);
    OK(kjson_set_str(t, "spec.config.schedule", "* * *", &err));
    cr_assert_eq(imtjob_cronjob_build(t, e, NULL, NULL, &cj, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "schedule: \"* * *\" is not a cron expression"), "%s", err.msg);
    (void)kjson_delete(t, "metadata.creationTimestamp");
    cr_assert_eq(imtjob_cronjob_build(t, e, NULL, NULL, &cj, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "creationTimestamp"), "%s", err.msg);
    cJSON_Delete(t);
    cJSON_Delete(e);
    cr_assert_null(build(S3, "   ", &err, KERR_INVAL));
}

Test(imtjob, hash_follows_the_spec)
{
    struct kerr_info err;
    cJSON *a = build(S3, NULL, &err, KERR_OK), *b = build(S3, NULL, &err, KERR_OK),
          *c = build(S3, "other command", &err, KERR_OK);
    const char *k = "metadata.annotations[etcd-warden.io/spec-hash]";

    cr_assert_str_eq(jsonfix_str(a, k), jsonfix_str(b, k));
    cr_assert_str_neq(jsonfix_str(a, k), jsonfix_str(c, k));
    cJSON_Delete(a);
    cJSON_Delete(b);
    cJSON_Delete(c);
}

static struct cfix fx;

static void setup(void)
{
    cfix_start(&fx, NULL);
}

static void gc_setup(void)
{
    struct ksim_harness_opts o = { 0 };

    o.gc_interval_ms = 50;
    cfix_start(&fx, &o);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(imt_kubesim, .init = setup, .fini = teardown, .timeout = 60);

/* The Etcd "main" with store (may be NULL), created. */
static cJSON *live_etcd(const char *store, const char *schedule)
{
    cJSON *e = cfix_etcd("main", store, schedule), *live = cfix_create(&fx, &ETCDSPEC_RES_ETCD, e);

    cJSON_Delete(e);
    return live;
}

/* One imt pass over task name; the requeue asked for. */
static long pass(const char *name)
{
    struct kerr_info err;
    long requeue = -1;

    OK(imt_run(&fx.x, CFIX_NS, name, &requeue, &err));
    return requeue;
}

#define TASK "main-extend-immutability"

Test(imt_kubesim, ensure_and_delete_are_idempotent)
{
    cJSON *live = live_etcd(S3, "0 */12 * * *"), *t1, *t2;
    struct kerr_info err;

    OK(imt_task_ensure_x(&fx.x, live, &err));
    t1 = cfix_get(&fx, &ETCDSPEC_RES_IMMTASK, TASK);
    cr_assert_not_null(t1);
    cr_assert_str_eq(jsonfix_str(t1, "spec.config.schedule"), "0 */12 * * *");
    cr_assert_str_eq(jsonfix_str(t1, "metadata.ownerReferences[0].uid"),
                     jsonfix_str(live, "metadata.uid"));
    OK(imt_task_ensure_x(&fx.x, live, &err));
    t2 = cfix_get(&fx, &ETCDSPEC_RES_IMMTASK, TASK);
    cr_assert_str_eq(jsonfix_str(t1, "metadata.resourceVersion"),
                     jsonfix_str(t2, "metadata.resourceVersion"), "nothing written");
    cJSON_Delete(t2);
    /* the Etcd's schedule changes while hibernated */
    OK(kjson_set_str(live, "spec.backup.fullSnapshotSchedule", "30 1 * * *", &err));
    OK(imt_task_ensure_x(&fx.x, live, &err));
    t2 = cfix_get(&fx, &ETCDSPEC_RES_IMMTASK, TASK);
    cr_assert_str_eq(jsonfix_str(t2, "spec.config.schedule"), "30 1 * * *");
    cJSON_Delete(t2);
    OK(imt_task_delete_x(&fx.x, live, &err));
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_IMMTASK, TASK));
    OK(imt_task_delete_x(&fx.x, live, &err));
    cJSON_Delete(t1);
    cJSON_Delete(live);
}

Test(imt_kubesim, cronjob_created_owned_and_left_alone)
{
    cJSON *live = live_etcd(S3, "0 */12 * * *"), *task, *cj, *cj2, *t2;
    struct kerr_info err;
    struct timespec ts;
    char want[64];

    OK(imt_task_ensure_x(&fx.x, live, &err));
    cr_assert_eq(pass(TASK), 0);
    task = cfix_get(&fx, &ETCDSPEC_RES_IMMTASK, TASK);
    cj = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    cr_assert_not_null(cj);
    cr_assert_str_eq(jsonfix_str(cj, "metadata.ownerReferences[0].uid"),
                     jsonfix_str(task, "metadata.uid"));
    cr_assert_str_eq(jsonfix_str(cj, "spec.schedule"), "0 */12 * * *");
    cr_assert_str_eq(jsonfix_str(cj, CTR ".args[2]"), "--store-container=bkt");
    OK(ktime_parse(jsonfix_str(task, "metadata.creationTimestamp"), &ts, &err));
    snprintf(want, sizeof(want), "--gc-from-timestamp=%lld", (long long)ts.tv_sec);
    cr_assert_str_eq(jsonfix_str(cj, CTR ".args[0]"), want);
    cr_assert_str_eq(jsonfix_str(task, "status.cronJobName"), TASK);
    cr_assert_str_eq(jsonfix_str(task, "status.conditions[0].type"), "Ready");
    cr_assert_str_eq(jsonfix_str(task, "status.conditions[0].status"), "True");
    cr_assert_str_eq(jsonfix_str(task, "status.conditions[0].reason"), "CronJobReady");
    /* a second pass: the API server's defaults are no reason to write */
    cr_assert_eq(pass(TASK), 0);
    cj2 = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    t2 = cfix_get(&fx, &ETCDSPEC_RES_IMMTASK, TASK);
    cr_assert_str_eq(jsonfix_str(cj, "metadata.resourceVersion"),
                     jsonfix_str(cj2, "metadata.resourceVersion"));
    cr_assert_str_eq(jsonfix_str(task, "metadata.resourceVersion"),
                     jsonfix_str(t2, "metadata.resourceVersion"));
    cJSON_Delete(cj2);
    cJSON_Delete(t2);
    cJSON_Delete(cj);
    cJSON_Delete(task);
    cJSON_Delete(live);
}

Test(imt_kubesim, last_schedule_time_and_a_stripped_owner)
{
    cJSON *live = live_etcd(S3, NULL), *cj, *task;
    struct kerr_info err;

    OK(imt_task_ensure_x(&fx.x, live, &err));
    cr_assert_eq(pass(TASK), 0);
    cj = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    OK(kjson_set_str(cj, "status.lastScheduleTime", "2026-11-23T00:00:00Z", &err));
    OK(k8s_update(fx.c, &ETCDSPEC_RES_CRONJOB, CFIX_NS, TASK, cj,
                  &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cJSON_Delete(cj);
    cj = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    (void)kjson_delete(cj, "metadata.ownerReferences");
    OK(k8s_update(fx.c, &ETCDSPEC_RES_CRONJOB, CFIX_NS, TASK, cj, NULL, NULL, &err));
    cJSON_Delete(cj);
    cr_assert_eq(pass(TASK), 0);
    task = cfix_get(&fx, &ETCDSPEC_RES_IMMTASK, TASK);
    cj = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    cr_assert_str_eq(jsonfix_str(task, "status.lastScheduleTime"), "2026-11-23T00:00:00Z");
    cr_assert_str_eq(jsonfix_str(cj, "metadata.ownerReferences[0].uid"),
                     jsonfix_str(task, "metadata.uid"), "the owner reference is back");
    cr_assert_str_eq(jsonfix_str(cj, "spec.schedule"), ETCDSPEC_DEFAULT_IMM_SCHEDULE);
    cJSON_Delete(cj);
    cJSON_Delete(task);
    cJSON_Delete(live);
}

/* Create a task for etcd_name with schedule (NULL: none) directly. */
static void raw_task(const char *name, const char *etcd_name, const char *schedule)
{
    char text[512];
    cJSON *t;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":"
             "\"ExtendFullSnapshotImmutabilityTask\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{\"etcdName\":\"%s\"}}",
             name, etcd_name);
    t = jsonfix_parse(text);
    if (schedule)
        cr_assert_eq(kjson_set_str(t, "spec.config.schedule", schedule, NULL), KERR_OK);
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_IMMTASK, t));
    cJSON_Delete(t);
}

static void assert_condition(const char *task_name, const char *reason, const char *msg_part)
{
    cJSON *t = cfix_get(&fx, &ETCDSPEC_RES_IMMTASK, task_name);

    cr_assert_not_null(t, "the task is never deleted");
    cr_assert_str_eq(jsonfix_str(t, "status.conditions[0].status"), "False");
    cr_assert_str_eq(jsonfix_str(t, "status.conditions[0].reason"), reason);
    cr_assert(strstr(jsonfix_str(t, "status.conditions[0].message"), msg_part), "%s",
              jsonfix_str(t, "status.conditions[0].message"));
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, task_name), "no CronJob");
    cJSON_Delete(t);
}

Test(imt_kubesim, bad_tasks_get_a_condition_nothing_deleted)
{
    cJSON *live = live_etcd(NULL, NULL);

    raw_task("ghost-task", "ghost", NULL);
    cr_assert_eq(pass("ghost-task"), IMT_RETRY_MS);
    assert_condition("ghost-task", "EtcdNotFound", "Etcd ns1/ghost not found");
    raw_task("nostore", "main", NULL);
    cr_assert_eq(pass("nostore"), IMT_RETRY_MS);
    assert_condition("nostore", "BackupNotEnabled", "no backup store");
    raw_task("badcron", "main", "30-10 * * * *"); /* the CRD's rule refuses "every night" */
    cr_assert_eq(pass("badcron"), IMT_RETRY_MS);
    assert_condition("badcron", "InvalidSchedule", "\"30-10 * * * *\" is not a cron expression");
    cr_assert_eq(pass("not-there"), 0, "a task that is gone is nothing to do");
    cJSON_Delete(live);
}

/*
 * A task whose Etcd goes (or is being deleted, or drops its backup) stops its CronJob: a copy
 * made there would write into a prefix no live Etcd claims any more. Its condition says why;
 * the task itself stays.
 */
Test(imt_kubesim, the_cronjob_stops_when_its_etcd_goes)
{
    cJSON *live = live_etcd(S3, NULL), *cj;
    struct kerr_info err;

    OK(imt_task_ensure_x(&fx.x, live, &err));
    cr_assert_eq(pass(TASK), 0);
    cj = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    cr_assert_not_null(cj, "the CronJob runs while the Etcd lives");
    cJSON_Delete(cj);
    OK(k8s_delete(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", NULL, NULL, &err));
    cr_assert_eq(pass(TASK), IMT_RETRY_MS);
    assert_condition(TASK, "EtcdNotFound", "Etcd ns1/main not found");
    cr_assert_eq(pass(TASK), IMT_RETRY_MS, "a CronJob already gone is nothing to do");
    cJSON_Delete(live);
    /* the Etcd back without a backup store: no CronJob either */
    live = live_etcd(S3, NULL);
    cr_assert_eq(pass(TASK), 0);
    cj = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    cr_assert_not_null(cj, "the CronJob is made again for the live Etcd");
    cJSON_Delete(cj);
    OK(kjson_delete(live, "spec.backup.store"));
    OK(k8s_update(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", live, NULL, NULL, &err));
    cr_assert_eq(pass(TASK), IMT_RETRY_MS);
    assert_condition(TASK, "BackupNotEnabled", "no backup store");
    cJSON_Delete(live);
}

Test(imt_gc, cronjob_deleted_with_its_task, .init = gc_setup, .fini = teardown, .timeout = 60)
{
    cJSON *live = live_etcd(S3, NULL), *cj;
    struct kerr_info err;

    OK(imt_task_ensure_x(&fx.x, live, &err));
    cr_assert_eq(pass(TASK), 0);
    cj = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    cr_assert_not_null(cj);
    cJSON_Delete(cj);
    OK(imt_task_delete_x(&fx.x, live, &err));
    cj = NULL;
    TESTUTIL_AWAIT(!(cj = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK)) || (cJSON_Delete(cj), 0),
                   10000);
    cr_assert_null(cj, "the garbage collector deleted the CronJob with its task");
    cJSON_Delete(live);
}

Test(imt_kubesim, a_cronjob_controlled_by_another_owner_is_not_taken)
{
    cJSON *live = live_etcd(S3, NULL),
          *cj = jsonfix_parse(
              "{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":\"" TASK
              "\",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
              "\"name\":\"d\",\"uid\":\"d-uid\",\"controller\":true}]},\"spec\":{\"schedule\":"
              "\"1 1 * * *\",\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":{\"containers\":"
              "[{\"name\":\"c\",\"image\":\"i\"}],\"restartPolicy\":\"Never\"}}}}}}"),
          *after;
    struct kerr_info err;
    long requeue = 0;

    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_CRONJOB, cj));
    OK(imt_task_ensure_x(&fx.x, live, &err));
    cr_assert_eq(imt_run(&fx.x, CFIX_NS, TASK, &requeue, &err), KERR_EXISTS);
    cr_assert(strstr(err.msg, "controlled by another owner"), "%s", err.msg);
    cr_assert_eq(requeue, IMT_RETRY_MS);
    after = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    cr_assert_str_eq(jsonfix_str(after, "spec.schedule"), "1 1 * * *", "left alone");
    cr_assert_str_eq(jsonfix_str(after, "metadata.ownerReferences[0].uid"), "d-uid");
    cJSON_Delete(after);
    after = cfix_get(&fx, &ETCDSPEC_RES_IMMTASK, TASK);
    cr_assert_str_eq(jsonfix_str(after, "status.conditions[0].reason"), "CronJobFailed");
    cJSON_Delete(after);
    cJSON_Delete(cj);
    cJSON_Delete(live);
}

/* Create text (JSON) as res in ns (NULL: cluster-scoped) through the test's client. */
static void create_in(const struct k8s_resource *res, const char *ns, const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = jsonfix_parse(text);

    OK(k8s_create(fx.c, res, ns, o, NULL, NULL, &err));
    cJSON_Delete(o);
}

/*
 * A Local Etcd's Secret edited after admission so that its directory is another namespace's part
 * of a partitioned Local BackupBucket: the immutability CronJob (which copies and deletes there)
 * is not made there, and the one made before goes; the condition and a Warning event say why.
 */
Test(imt_kubesim, a_local_cronjob_stays_in_its_namespaces_part)
{
    static const struct k8s_resource res_secret = { "", "v1", "secrets", 1 };
    static const struct k8s_resource res_ns = { "", "v1", "namespaces", 0 };
    static const struct k8s_resource res_bucket = { "etcd-warden.io", "v1alpha1", "backupbuckets",
                                                    0 };
    cJSON *live, *cj;
    struct kerr_info err;

    create_in(&res_ns, NULL, "{\"metadata\":{\"name\":\"etcd-warden\"}}");
    /* hostPath /var/lib/lb, for the bucket and (at first) the Etcd */
    create_in(&res_secret, "etcd-warden",
              "{\"metadata\":{\"name\":\"local-bucket\"},\"data\":{\"hostPath\":"
              "\"L3Zhci9saWIvbGI=\"}}");
    create_in(&res_secret, CFIX_NS,
              "{\"metadata\":{\"name\":\"eb\"},\"data\":{\"hostPath\":\"L3Zhci9saWIvbGI=\"}}");
    create_in(&res_bucket, NULL,
              "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"BackupBucket\",\"metadata\":"
              "{\"name\":\"local\"},\"spec\":{\"provider\":\"Local\",\"container\":\"bkt\","
              "\"secretRef\":{\"namespace\":\"etcd-warden\",\"name\":\"local-bucket\"},"
              "\"deletionGracePeriod\":\"168h\",\"prefixScope\":\"Namespace\"}}");
    live = live_etcd("{\"provider\":\"Local\",\"container\":\"bkt\",\"prefix\":\"" CFIX_NS
                     "/main\",\"secretRef\":{\"name\":\"eb\"}}",
                     NULL);
    OK(imt_task_ensure_x(&fx.x, live, &err));
    cr_assert_eq(pass(TASK), 0, "the control: its own part");
    cj = cfix_get(&fx, &ETCDSPEC_RES_CRONJOB, TASK);
    cr_assert_not_null(cj, "the CronJob runs in the namespace's part");
    cr_expect_str_eq(
        jsonfix_str(cj, "spec.jobTemplate.spec.template.spec.volumes[0].hostPath.path"),
        "/var/lib/lb/bkt");
    cJSON_Delete(cj);
    /* /var/lib/lb/bkt/bob: the directory becomes /var/lib/lb/bkt/bob/bkt/ns1/main, bob's part */
    cj = jsonfix_parse("{\"metadata\":{\"name\":\"eb\"},\"data\":{\"hostPath\":"
                       "\"L3Zhci9saWIvbGIvYmt0L2JvYg==\"}}");
    OK(k8s_update(fx.c, &res_secret, CFIX_NS, "eb", cj, NULL, NULL, &err));
    cJSON_Delete(cj);
    cr_assert_eq(pass(TASK), IMT_RETRY_MS);
    assert_condition(TASK, IMT_REASON_NOT_OWNED,
                     "\"/var/lib/lb/bkt/bob/bkt/" CFIX_NS "/main\" is not namespace " CFIX_NS "'s");
    cJSON_Delete(live);
}
