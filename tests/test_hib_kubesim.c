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
#include "controller/etcdspec.h"
#include "tests/support/hibfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

#define STORE "{\"container\":\"bkt\",\"prefix\":\"ns1/%s\",\"provider\":\"S3\"}"
#define STORE_IMM                                                                        \
    "{\"container\":\"bkt\",\"prefix\":\"ns1/e1\",\"provider\":\"S3\",\"immutability\":" \
    "{\"retentionType\":\"bucket\"}}"
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
    cJSON *etcd = hibfix_etcd(&x, "e1", STORE_IMM, NULL, 1), *svc, *t;
    char *before = hibfix_ports(&x, "e1-client"), *after, phases[512], rv[32];
    const char *imm_name = "e1-extend-immutability";
    int spec, status;

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
