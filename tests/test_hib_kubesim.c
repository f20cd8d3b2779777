/*
 * Tests of controller/hib on an in-process kube-sim, with the ops-task
 * executor (controller/otask) running the final snapshot against a sidecar
 * stand-in on the client Service's clusterIP (tests/support/hibfix):
 * hibernate and wake up with a store and bucket immutability, without a
 * store, a failing sidecar, a controller that stops after every single
 * action, bad input, immutability changed while hibernated, an Etcd deleted
 * mid-flow. The user's side is kubectl annotate.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/core/etcdspec.h"
#include "tests/support/hibfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

#define STORE "{\"container\":\"bkt\",\"prefix\":\"ns1/%s\",\"provider\":\"S3\"}"
#define CUT_PORTS_ANN                                                                \
    "[{\"name\":\"client\",\"protocol\":\"TCP\",\"port\":2379,\"targetPort\":2379}," \
    "{\"name\":\"server\",\"protocol\":\"TCP\",\"port\":2380,\"targetPort\":2380}]"

static const struct k8s_resource RES_SVC = { "", "v1", "services", 1 };
static struct hibfix x;

static void setup(void)
{
    hibfix_start(&x);
}

static void teardown(void)
{
    hibfix_stop(&x);
}

TestSuite(hib_kubesim, .init = setup, .fini = teardown, .timeout = 60);

static char *store_for(const char *name)
{
    return buf_dupf(256, STORE, name);
}

/* The values the phase annotation took since resourceVersion rv, in order, joined by ','. */
static void phases_since(const char *rv, char *out, size_t n)
{
    char path[256], *body, *line, *nl;
    size_t used = 0;
    char last[64] = "";

    snprintf(path, sizeof(path),
             "/apis/druid.gardener.cloud/v1alpha1/namespaces/" CFIX_NS
             "/etcds?watch=1&resourceVersion=%s&timeoutSeconds=1",
             rv);
    body = ksimfix_raw(x.f.h, path);
    out[0] = '\0';
    for (line = body; line && *line; line = nl ? nl + 1 : NULL) {
        cJSON *ev;

        if ((nl = strchr(line, '\n')))
            *nl = '\0';
        ev = jsonfix_parse(line);
        const char *p = etcdspec_annotation(kjson_get(ev, "object"), HIB_ANN_PHASE);
        if (!p)
            p = "-";
        if (strcmp(p, last) != 0 && used < n) {
            used += (size_t)snprintf(out + used, n - used, "%s%s", used ? "," : "", p);
            snprintf(last, sizeof(last), "%s", p);
        }
        cJSON_Delete(ev);
    }
    free(body);
}

Test(hib_kubesim, hibernate_with_store_and_immutability_then_wake_up_exactly)
{
    cJSON *etcd = hibfix_etcd(&x, "e1",
                              "{\"container\":\"bkt\",\"prefix\":\"ns1/e1\",\"provider\":\"S3\"}",
                              NULL, 1),
          *svc, *t;
    char *before = hibfix_ports(&x, "e1-client"), *after, phases[512], rv[32], ip[64], want[64];
    const char *imm_name = "e1-extend-immutability";
    int spec, status;

    /* bucket immutability as users set it: etcd-druid's CRD prunes a spec field for it */
    hibfix_annotate(&x, "e1", ETCDSPEC_ANN_RETENTION_TYPE, "bucket");
    cJSON_Delete(etcd);
    etcd = hibfix_get_etcd(&x, "e1");
    snprintf(rv, sizeof(rv), "%s", kjson_get_str(etcd, "metadata.resourceVersion"));
    hibfix_annotate(&x, "e1", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_drive(&x, "e1", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "e1"));

    phases_since(rv, phases, sizeof(phases));
    cr_assert_str_eq(phases, "-,CuttingTraffic,FinalSnapshot,ScalingDown,Hibernated");
    after = hibfix_ports(&x, "e1-client");
    cr_assert(strstr(after, "\"backuprestore\"") && !strstr(after, "\"client\"") &&
                  !strstr(after, "\"server\""),
              "%s", after);
    free(after);
    svc = cfix_get(&x.f, &RES_SVC, "e1-client");
    cr_assert_str_eq(etcdspec_annotation(svc, HIB_ANN_REMOVED_PORTS), CUT_PORTS_ANN);
    cJSON_Delete(svc);
    t = cfix_get(&x.f, &ETCDSPEC_RES_OPSTASK, "e1-final-snapshot-1");
    cr_assert_not_null(t);
    cr_assert_str_eq(kjson_get_str(t, "status.state"), "Succeeded");
    cr_assert_eq(kjson_get(t, "spec.config.onDemandSnapshot.isFinal")->type, cJSON_True);
    cJSON_Delete(t);
    cr_assert_eq(atomic_load(&x.sc.finals), 1);
    cr_assert_eq(atomic_load(&x.sc.requests), 1);
    svc = cfix_get(&x.f, &RES_SVC, "e1-client");
    hibfix_last_ip(&x, ip, sizeof(ip));
    /* the sidecar of member e1-0 at its pod IP, not the Service's clusterIP */
    snprintf(want, sizeof(want), HIBFIX_POD_IP_FMT, 0);
    cr_assert_str_eq(ip, want);
    cr_assert_str_neq(ip, kjson_get_str(svc, "spec.clusterIP"));
    cJSON_Delete(svc);
    hibfix_sts(&x, "e1", &spec, &status);
    cr_assert(spec == 0 && status == 0, "sts %d/%d", spec, status);
    t = cfix_get(&x.f, &ETCDSPEC_RES_IMMTASK, imm_name);
    cr_assert_not_null(t, "no immutability task");
    cr_assert_str_eq(kjson_get_str(t, "spec.config.schedule"), "0 */6 * * *");
    cJSON_Delete(t);
    cr_assert_eq(etcdspec_annotation(etcd, HIB_ANN_SUSPEND), NULL);
    cJSON_Delete(etcd);

    hibfix_annotate(&x, "e1", HIB_ANN_HIBERNATE, NULL);
    cr_assert(hibfix_drive(&x, "e1", "", 20000), "phase %s", hibfix_phase(&x, "e1"));
    after = hibfix_ports(&x, "e1-client");
    cr_assert_str_eq(after, before);
    free(after);
    svc = cfix_get(&x.f, &RES_SVC, "e1-client");
    cr_assert_null(etcdspec_annotation(svc, HIB_ANN_REMOVED_PORTS));
    cJSON_Delete(svc);
    hibfix_sts(&x, "e1", &spec, &status);
    cr_assert_eq(spec, 3);
    cr_assert_null(cfix_get(&x.f, &ETCDSPEC_RES_IMMTASK, imm_name));
    etcd = hibfix_get_etcd(&x, "e1");
    cr_assert_null(etcdspec_annotation(etcd, HIB_ANN_SUSPEND));
    cr_assert_null(etcdspec_annotation(etcd, HIB_ANN_PHASE));
    cJSON_Delete(etcd);
    free(before);
}

Test(hib_kubesim, hibernate_without_store_takes_no_snapshot)
{
    cJSON *etcd = hibfix_etcd(&x, "e2", NULL, NULL, 1), *tasks;
    int spec, status;

    cJSON_Delete(etcd);
    hibfix_annotate(&x, "e2", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_drive(&x, "e2", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "e2"));
    tasks = hibfix_tasks(&x);
    cr_assert_eq(cJSON_GetArraySize(tasks), 0);
    cJSON_Delete(tasks);
    cr_assert_eq(atomic_load(&x.sc.requests), 0);
    hibfix_sts(&x, "e2", &spec, &status);
    cr_assert(spec == 0 && status == 0);
}

Test(hib_kubesim, a_failing_sidecar_never_scales_down_goes_failed_and_recovers)
{
    char *store = store_for("e3");
    cJSON *etcd = hibfix_etcd(&x, "e3", store, NULL, 1), *tasks;
    int64_t end;
    int spec, status, ok = 0;

    cJSON_Delete(etcd);
    free(store);
    atomic_store(&x.sc.code, 500);
    hibfix_annotate(&x, "e3", HIB_ANN_HIBERNATE, "true");
    end = ktime_mono_ms() + 20000;
    while (ktime_mono_ms() < end && strcmp(hibfix_phase(&x, "e3"), "Failed") != 0) {
        hibfix_round(&x, "e3");
        hibfix_sts(&x, "e3", &spec, &status);
        cr_assert_eq(spec, 3, "scaled down without a successful snapshot");
        ktime_sleep_ns(50000000L);
    }
    cr_assert_str_eq(hibfix_phase(&x, "e3"), "Failed");
    cr_assert_geq(atomic_load(&x.sc.requests), 3);
    for (int i = 0; i < 100 && !ok; i++) { /* the recorder sends asynchronously */
        ok = hibfix_events(&x, "FinalSnapshotFailed", "Warning") > 0;
        ktime_sleep_ns(50000000L);
    }
    cr_assert(ok, "no Warning event FinalSnapshotFailed");
    atomic_store(&x.sc.code, 200);
    cr_assert(hibfix_drive(&x, "e3", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "e3"));
    hibfix_sts(&x, "e3", &spec, &status);
    cr_assert_eq(spec, 0);
    tasks = hibfix_tasks(&x);
    cr_assert_geq(cJSON_GetArraySize(tasks), 4);
    cJSON_Delete(tasks);
}

/*
 * A dead sidecar (nothing listens on the backuprestore port): the task stays InProgress and
 * its calls fail until the task's timeout (15 min). The first failed call is told at once -
 * the condition on the Etcd and Warning events with the sidecar's reason - and the
 * break-glass annotation is honoured from then on, without waiting out the timeouts.
 */
Test(hib_kubesim, a_dead_sidecar_is_told_at_once_and_break_glass_needs_no_timeouts)
{
    static const char ports[] =
        "[{\"name\":\"client\",\"protocol\":\"TCP\",\"port\":2379,\"targetPort\":2379},"
        "{\"name\":\"server\",\"protocol\":\"TCP\",\"port\":2380,\"targetPort\":2380},"
        "{\"name\":\"backuprestore\",\"protocol\":\"TCP\",\"port\":1,\"targetPort\":8080}]";
    char *store = store_for("e9");
    cJSON *etcd = hibfix_etcd(&x, "e9", store, ports, 1), *e, *cond, *task;
    const char *ann;
    int64_t end;
    int spec, status, ev = 0, tev = 0;

    cJSON_Delete(etcd);
    free(store);
    hibfix_annotate(&x, "e9", HIB_ANN_HIBERNATE, "true");
    end = ktime_mono_ms() + 10000;
    for (ann = NULL; !ann && ktime_mono_ms() < end; ktime_sleep_ns(50000000L)) {
        hibfix_round(&x, "e9");
        e = hibfix_get_etcd(&x, "e9");
        ann = etcdspec_annotation(e, HIB_ANN_CONDITION) ? "" : NULL;
        cJSON_Delete(e);
    }
    cr_assert_not_null(ann, "no condition on the Etcd after a failed sidecar call");
    cr_assert_str_eq(hibfix_phase(&x, "e9"), "FinalSnapshot");
    task = cfix_get(&x.f, &ETCDSPEC_RES_OPSTASK, "e9-final-snapshot-1");
    cr_assert_str_eq(kjson_get_str(task, "status.state"), "InProgress");
    cJSON_Delete(task);
    e = hibfix_get_etcd(&x, "e9");
    cond = jsonfix_parse(etcdspec_annotation(e, HIB_ANN_CONDITION));
    cr_assert_str_eq(kjson_get_str(cond, "type"), "FinalSnapshotFailing");
    cr_assert_str_eq(kjson_get_str(cond, "status"), "True");
    cr_assert_str_eq(kjson_get_str(cond, "reason"), "ERR_EXECUTE_HTTP_REQUEST");
    cr_assert_str_eq(kjson_get_str(cond, "task"), "e9-final-snapshot-1");
    cr_assert(strstr(kjson_get_str(cond, "message"), "could not reach the backup sidecar") &&
                  strstr(kjson_get_str(cond, "message"), HIB_ANN_BREAK_GLASS),
              "%s", kjson_get_str(cond, "message"));
    cJSON_Delete(cond);
    cJSON_Delete(e);
    hibfix_sts(&x, "e9", &spec, &status);
    cr_assert_eq(spec, 3, "scaled down without a snapshot or break glass");
    for (int i = 0; i < 100 && !(ev && tev); i++) { /* the recorder sends asynchronously */
        ev = hibfix_events(&x, "FinalSnapshotFailing", "Warning") > 0;
        tev = hibfix_events(&x, "SnapshotCallFailed", "Warning") > 0;
        ktime_sleep_ns(50000000L);
    }
    cr_assert(ev, "no Warning event FinalSnapshotFailing on the Etcd");
    cr_assert(tev, "no Warning event SnapshotCallFailed on the task");
    /* the backups are known broken: the operator breaks glass, honoured at once */
    hibfix_break_glass(&x, "e9", "sidecar-image-gone");
    cr_assert(hibfix_drive(&x, "e9", "Hibernated", 10000), "phase %s", hibfix_phase(&x, "e9"));
    hibfix_sts(&x, "e9", &spec, &status);
    cr_assert_eq(spec, 0);
    e = hibfix_get_etcd(&x, "e9");
    cr_assert_null(etcdspec_annotation(e, HIB_ANN_CONDITION), "the condition stays after the flow");
    cJSON_Delete(e);
}

/* After each single action: the invariants of a crash at that point. */
static void check_safe(const char *name, const char *before)
{
    cJSON *tasks = hibfix_tasks(&x), *svc;
    const cJSON *t;
    char *ports = NULL, svc_name[64];
    const char *mem;
    int spec, status, succeeded = 0;

    cJSON_ArrayForEach (t, tasks) {
        succeeded |= kjson_get_str(t, "status.state") &&
                     strcmp(kjson_get_str(t, "status.state"), "Succeeded") == 0;
    }
    cJSON_Delete(tasks);
    hibfix_sts(&x, name, &spec, &status);
    cr_assert(spec == 3 || succeeded, "scaled to %d without a successful snapshot", spec);
    snprintf(svc_name, sizeof(svc_name), "%s-client", name);
    svc = cfix_get(&x.f, &RES_SVC, svc_name);
    mem = etcdspec_annotation(svc, HIB_ANN_REMOVED_PORTS);
    ports = hibfix_ports(&x, svc_name);
    if (strstr(ports, "\"client\""))
        cr_assert_str_eq(ports, before, "ports changed without being remembered");
    else
        cr_assert(mem && strcmp(mem, CUT_PORTS_ANN) == 0, "a port was lost: %s", ports);
    free(ports);
    cJSON_Delete(svc);
}

Test(hib_kubesim, stopping_after_every_action_always_converges_and_loses_nothing)
{
    char *store = store_for("e4"), *before, *after;
    cJSON *etcd = hibfix_etcd(&x, "e4", store, NULL, 1);
    int64_t end = ktime_mono_ms() + 30000;
    int rounds = 0;

    cJSON_Delete(etcd);
    free(store);
    before = hibfix_ports(&x, "e4-client");
    x.hib.max_steps = 1; /* one action per call: a crash after each one */
    hibfix_annotate(&x, "e4", HIB_ANN_HIBERNATE, "true");
    while (strcmp(hibfix_phase(&x, "e4"), "Hibernated") != 0 && ktime_mono_ms() < end) {
        hibfix_round(&x, "e4");
        check_safe("e4", before);
        hibfix_round(&x, "e4"); /* a restarted replica doing the same again */
        check_safe("e4", before);
        rounds++;
    }
    cr_assert_str_eq(hibfix_phase(&x, "e4"), "Hibernated");
    cr_assert_geq(rounds, 4);
    cr_assert_eq(atomic_load(&x.sc.finals), 1);
    hibfix_annotate(&x, "e4", HIB_ANN_HIBERNATE, "false");
    cr_assert(hibfix_drive(&x, "e4", "", 20000));
    after = hibfix_ports(&x, "e4-client");
    cr_assert_str_eq(after, before);
    free(after);
    free(before);
}

Test(hib_kubesim, a_service_without_the_expected_ports_is_reported_and_left_alone)
{
    const char *ports = "[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80,\"targetPort\":80}]";
    cJSON *etcd = hibfix_etcd(&x, "e5", NULL, ports, 1);
    char *before = hibfix_ports(&x, "e5-client"), *after;
    int spec, status, ok = 0;

    cJSON_Delete(etcd);
    hibfix_annotate(&x, "e5", HIB_ANN_HIBERNATE, "true");
    for (int i = 0; i < 5; i++)
        cr_assert_gt(hibfix_round(&x, "e5"), 0);
    cr_assert_str_eq(hibfix_phase(&x, "e5"), "CuttingTraffic");
    after = hibfix_ports(&x, "e5-client");
    cr_assert_str_eq(after, before);
    hibfix_sts(&x, "e5", &spec, &status);
    cr_assert_eq(spec, 3);
    for (int i = 0; i < 100 && !ok; i++) {
        ok = hibfix_events(&x, "ClientServicePorts", "Warning") > 0;
        ktime_sleep_ns(50000000L);
    }
    cr_assert(ok, "no Warning event ClientServicePorts");
    free(after);
    free(before);
}

Test(hib_kubesim, a_missing_statefulset_is_reported_and_nothing_scaled)
{
    cJSON *etcd = hibfix_etcd(&x, "e6", NULL, NULL, 0);

    cJSON_Delete(etcd);
    hibfix_annotate(&x, "e6", HIB_ANN_HIBERNATE, "true");
    for (int i = 0; i < 5; i++)
        hibfix_round(&x, "e6");
    cr_assert_str_eq(hibfix_phase(&x, "e6"), "ScalingDown");
    cr_assert_null(cfix_get(&x.f, &(struct k8s_resource){ "apps", "v1", "statefulsets", 1 }, "e6"));
}

/* issue 30: ordinals moved while asleep (where no webhook judges it): the wake does not scale */
Test(hib_kubesim, a_wake_leaves_a_statefulset_whose_ordinals_moved_at_0)
{
    cJSON *etcd = hibfix_etcd(&x, "e8", NULL, NULL, 1);
    char cmd[256], *out = NULL;
    int spec = -1, status = -1, ok = 0;

    cJSON_Delete(etcd);
    hibfix_annotate(&x, "e8", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_drive(&x, "e8", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "e8"));
    snprintf(cmd, sizeof(cmd),
             "patch statefulset e8 -n %s --type merge -p '{\"spec\":{\"ordinals\":{\"start\":3}}}'",
             CFIX_NS);
    cr_assert_eq(ksim_harness_kubectl(x.f.h, NULL, cmd, &out), 0, "kubectl %s: %s", cmd,
                 out ? out : "");
    free(out);
    out = NULL;
    hibfix_annotate(&x, "e8", HIB_ANN_HIBERNATE, NULL);
    for (int i = 0; i < 8; i++)
        hibfix_round(&x, "e8");
    hibfix_sts(&x, "e8", &spec, &status);
    cr_assert_eq(spec, 0, "woken from ordinal 3 at %d replicas", spec);
    cr_assert_str_eq(hibfix_phase(&x, "e8"), "WakingUp");
    for (int i = 0; i < 100 && !ok; i++) {
        ok = hibfix_events(&x, "OrdinalsMoved", "Warning") > 0;
        ktime_sleep_ns(50000000L);
    }
    cr_assert(ok, "no Warning event OrdinalsMoved");
    /* set back to 0: the wake goes on */
    snprintf(cmd, sizeof(cmd),
             "patch statefulset e8 -n %s --type merge -p '{\"spec\":{\"ordinals\":{\"start\":0}}}'",
             CFIX_NS);
    cr_assert_eq(ksim_harness_kubectl(x.f.h, NULL, cmd, &out), 0, "kubectl %s: %s", cmd,
                 out ? out : "");
    free(out);
    cr_assert(hibfix_drive(&x, "e8", "", 20000), "phase %s", hibfix_phase(&x, "e8"));
    hibfix_sts(&x, "e8", &spec, &status);
    cr_assert_eq(spec, 3);
}

Test(hib_kubesim, immutability_follows_the_annotation_while_hibernated_and_bad_values_are_left)
{
    const char *imm_name = "e7-extend-immutability";
    char *store = store_for("e7");
    cJSON *etcd = hibfix_etcd(&x, "e7", store, NULL, 1), *t;
    int ok = 0;

    cJSON_Delete(etcd);
    free(store);
    hibfix_annotate(&x, "e7", ETCDSPEC_ANN_RETENTION_TYPE, "weird");
    hibfix_annotate(&x, "e7", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_drive(&x, "e7", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "e7"));
    cr_assert_null(cfix_get(&x.f, &ETCDSPEC_RES_IMMTASK, imm_name));
    for (int i = 0; i < 100 && !ok; i++) {
        ok = hibfix_events(&x, "InvalidImmutability", "Warning") > 0;
        ktime_sleep_ns(50000000L);
    }
    cr_assert(ok, "no Warning event InvalidImmutability");

    hibfix_annotate(&x, "e7", ETCDSPEC_ANN_RETENTION_TYPE, "bucket");
    hibfix_round(&x, "e7");
    t = cfix_get(&x.f, &ETCDSPEC_RES_IMMTASK, imm_name);
    cr_assert_not_null(t, "adding immutability while hibernated creates the task");
    cJSON_Delete(t);
    hibfix_annotate(&x, "e7", ETCDSPEC_ANN_RETENTION_TYPE, "weird");
    hibfix_round(&x, "e7");
    t = cfix_get(&x.f, &ETCDSPEC_RES_IMMTASK, imm_name);
    cr_assert_not_null(t, "a malformed value deletes nothing");
    cJSON_Delete(t);
    hibfix_annotate(&x, "e7", ETCDSPEC_ANN_RETENTION_TYPE, NULL);
    hibfix_round(&x, "e7");
    cr_assert_null(cfix_get(&x.f, &ETCDSPEC_RES_IMMTASK, imm_name),
                   "removing immutability while hibernated deletes the task");
    cr_assert_str_eq(hibfix_phase(&x, "e7"), "Hibernated");
}

Test(hib_kubesim, an_etcd_deleted_mid_flow_leaves_nothing_behind)
{
    char *store = store_for("e8"), *out = NULL;
    cJSON *etcd = hibfix_etcd(&x, "e8", store, NULL, 1), *tasks;
    int64_t end;
    int n = 1;

    cJSON_Delete(etcd);
    free(store);
    atomic_store(&x.sc.code, 503);
    hibfix_annotate(&x, "e8", HIB_ANN_HIBERNATE, "true");
    for (int i = 0; i < 40 && strcmp(hibfix_phase(&x, "e8"), "FinalSnapshot") != 0; i++)
        hibfix_round(&x, "e8");
    cr_assert(hibfix_await_task(&x, "e8", "e8-final-snapshot-", 30000));
    tasks = hibfix_tasks(&x);
    cr_assert_geq(cJSON_GetArraySize(tasks), 1);
    cJSON_Delete(tasks);
    cr_assert_eq(ksim_harness_kubectl(x.f.h, NULL, "delete etcd e8 -n " CFIX_NS, &out), 0, "%s",
                 out);
    free(out);
    end = ktime_mono_ms() + 15000;
    while (n > 0 && ktime_mono_ms() < end) { /* the garbage collector, the executor's finalizer */
        hibfix_round(&x, "e8");
        tasks = hibfix_tasks(&x);
        n = cJSON_GetArraySize(tasks);
        cJSON_Delete(tasks);
        ktime_sleep_ns(50000000L);
    }
    cr_assert_eq(n, 0, "final-snapshot tasks left behind");
    cr_assert(ksimfix_await_status(x.f.h, "/api/v1/namespaces/" CFIX_NS "/services/e8-client", 404,
                                   10000));
}

/* Run one hib_step on name limited to max actions; its duration in microseconds. */
static long timed_step(const char *name, int max)
{
    cJSON *etcd = hibfix_get_etcd(&x, name);
    struct kerr_info e;
    long rq;
    int64_t t0 = ktime_mono_ns();

    x.hib.max_steps = max;
    cr_assert_eq(hib_step(&x.hib, etcd, &rq, &e), KERR_OK, "%s", e.msg);
    cJSON_Delete(etcd);
    x.hib.max_steps = 0;
    return (long)((ktime_mono_ns() - t0) / 1000);
}

static int cmp_long(const void *a, const void *b)
{
    long d = *(const long *)a - *(const long *)b;
    return (d > 0) - (d < 0);
}

Test(hib_kubesim, latencies_annotation_to_ports_cut_and_succeeded_to_scale_request)
{
    enum { N = 9 };
    long cut[N], scale[N];

    for (int i = 0; i < N; i++) {
        char name[16], *store, *ports, patch[128];
        cJSON *etcd, *p, *t;
        int spec, status;
        long tq;

        snprintf(name, sizeof(name), "lat%d", i);
        store = store_for(name);
        etcd = hibfix_etcd(&x, name, store, NULL, 1);
        free(store);
        snprintf(patch, sizeof(patch), "{\"metadata\":{\"annotations\":{\"%s\":\"true\"}}}",
                 HIB_ANN_HIBERNATE);
        p = jsonfix_parse(patch);
        cr_assert_eq(k8s_patch(x.f.c, &ETCDSPEC_RES_ETCD, CFIX_NS, name, K8S_PATCH_MERGE, p, NULL,
                               NULL, NULL),
                     KERR_OK);
        cJSON_Delete(p);
        cJSON_Delete(etcd);
        /* phase CuttingTraffic, suspend, cut: three actions from the annotation */
        cut[i] = timed_step(name, 3);
        snprintf(patch, sizeof(patch), "%s-client", name);
        ports = hibfix_ports(&x, patch);
        cr_assert(!strstr(ports, "\"client\""), "%s", ports);
        free(ports);
        timed_step(name, 0); /* FinalSnapshot */
        snprintf(patch, sizeof(patch), "%s-final-snapshot-", name);
        /* the task, once the API server's clock is past the second of the cut */
        cr_assert(hibfix_await_task(&x, name, patch, 30000));
        snprintf(patch, sizeof(patch), "%s-final-snapshot-1", name);
        cr_assert_eq(otask_step(&x.ot, CFIX_NS, patch, &tq, NULL), KERR_OK);
        t = cfix_get(&x.f, &ETCDSPEC_RES_OPSTASK, patch);
        cr_assert_str_eq(kjson_get_str(t, "status.state"), "Succeeded");
        cJSON_Delete(t);
        /* phase ScalingDown, scale: two actions from the task's Succeeded */
        scale[i] = timed_step(name, 2);
        hibfix_sts(&x, name, &spec, &status);
        cr_assert_eq(spec, 0);
    }
    qsort(cut, N, sizeof(long), cmp_long);
    qsort(scale, N, sizeof(long), cmp_long);
    fprintf(stderr,
            "hib latency (in-process kube-sim, %d Etcds): annotation->ports cut median %.2f ms "
            "max %.2f ms; task Succeeded->scale request median %.2f ms max %.2f ms\n",
            N, cut[N / 2] / 1000.0, cut[N - 1] / 1000.0, scale[N / 2] / 1000.0,
            scale[N - 1] / 1000.0);
    cr_assert_lt(cut[N / 2], 5000000L); /* a loose bound: the figure is what counts */
    cr_assert_lt(scale[N / 2], 5000000L);
}

/* One round with kube-sim answering 500 to a share of the requests, then the checks without. */
static void faulty_round(const char *name, const char *before)
{
    ksimfix_faults(x.f.h, "{\"errorRate\":0.3}");
    hibfix_round(&x, name);
    ksimfix_faults(x.f.h, "{\"reset\":true}");
    check_safe(name, before);
}

Test(hib_kubesim, api_errors_anywhere_in_the_flow_still_converge)
{
    char *store = store_for("e9"), *before, *after;
    int64_t end = ktime_mono_ms() + 40000;
    int spec, status;

    cJSON_Delete(hibfix_etcd(&x, "e9", store, NULL, 1));
    free(store);
    before = hibfix_ports(&x, "e9-client");
    x.tolerate = 1;
    hibfix_annotate(&x, "e9", HIB_ANN_HIBERNATE, "true");
    while (strcmp(hibfix_phase(&x, "e9"), "Hibernated") != 0 && ktime_mono_ms() < end)
        faulty_round("e9", before);
    cr_assert_str_eq(hibfix_phase(&x, "e9"), "Hibernated");
    hibfix_sts(&x, "e9", &spec, &status);
    cr_assert_eq(spec, 0);
    hibfix_annotate(&x, "e9", HIB_ANN_HIBERNATE, NULL);
    while (strcmp(hibfix_phase(&x, "e9"), "") != 0 && ktime_mono_ms() < end)
        faulty_round("e9", before);
    cr_assert_str_eq(hibfix_phase(&x, "e9"), "");
    after = hibfix_ports(&x, "e9-client");
    cr_assert_str_eq(after, before);
    cr_assert_gt(x.errors, 0, "no fault was injected");
    hibfix_sts(&x, "e9", &spec, &status);
    cr_assert_eq(spec, 3);
    free(after);
    free(before);
}
