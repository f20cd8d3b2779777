/*
 * Tests of controller/otask, the EtcdOpsTask executor: the pure checks
 * (spec, duplicates, the handler's admission checks, TTL) as tables, then
 * the lifecycle on an in-process kube-sim against a sidecar stand-in
 * reached through the client Service's clusterIP (tests/support/hibfix):
 * success (task created with kubectl), rejection of a second live task,
 * admission failures, a failing sidecar, transport errors and the timeout,
 * TTL cleanup, a user's delete, and https with the CA of spec.backup.tls.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/tlsx.h"
#include "controller/core/etcdspec.h"
#include "tests/support/hibfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

#define STORE "{\"container\":\"bkt\",\"prefix\":\"ns1/e1\",\"provider\":\"S3\"}"

/* ---- pure ---- */

static cJSON *task_json(const char *name, const char *etcd, const char *config, const char *created,
                        const char *state)
{
    char text[1024];

    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"%s\",\"creationTimestamp\":\"%s\"},\"spec\":{%s%s%s"
             "\"config\":%s},\"status\":{\"state\":\"%s\"}}",
             name, created, etcd ? "\"etcdName\":\"" : "", etcd ? etcd : "", etcd ? "\"," : "",
             config, state);
    return jsonfix_parse(text);
}

Test(otask, spec_rows)
{
    static const struct {
        const char *config;
        const char *etcd;
        enum kerr rc;
        int delta, final;
        long timeout;
    } rows[] = {
        { "{\"onDemandSnapshot\":{\"type\":\"full\",\"isFinal\":true}}", "e", KERR_OK, 0, 1, 900 },
        { "{\"onDemandSnapshot\":{\"type\":\"full\",\"timeoutSecondsFull\":200}}", "e", KERR_OK, 0,
          0, 200 },
        { "{\"onDemandSnapshot\":{\"type\":\"delta\"}}", "e", KERR_OK, 1, 0, 60 },
        { "{\"onDemandSnapshot\":{\"type\":\"delta\",\"isFinal\":true}}", "e", KERR_INVAL, 0, 0,
          0 },
        { "{\"onDemandSnapshot\":{\"type\":\"weekly\"}}", "e", KERR_INVAL, 0, 0, 0 },
        { "{\"onDemandSnapshot\":{}}", "e", KERR_INVAL, 0, 0, 0 },
        { "{}", "e", KERR_INVAL, 0, 0, 0 },
        { "{\"onDemandSnapshot\":{\"type\":\"full\"},\"quorumLoss\":{}}", "e", KERR_INVAL, 0, 0,
          0 },
        { "{\"onDemandSnapshot\":{\"type\":\"full\"}}", NULL, KERR_INVAL, 0, 0, 0 },
    };

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cJSON *t = task_json("t", rows[i].etcd, rows[i].config, "2026-01-01T00:00:00Z", "");
        struct otask_spec sp;
        struct kerr_info e;

        cr_assert_eq(otask_spec_read(t, &sp, &e), rows[i].rc, "row %zu: %s", i, e.msg);
        if (rows[i].rc == KERR_OK) {
            cr_assert_eq(sp.delta, rows[i].delta, "row %zu", i);
            cr_assert_eq(sp.final, rows[i].final, "row %zu", i);
            cr_assert_eq(sp.timeout_s, rows[i].timeout, "row %zu", i);
            cr_assert_eq(sp.ttl_s, OTASK_DEFAULT_TTL_S);
        }
        cJSON_Delete(t);
    }
}

Test(otask, duplicates_the_older_or_admitted_task_wins)
{
    static const char *cfg = "{\"onDemandSnapshot\":{\"type\":\"full\"}}";
    static const struct {
        const char *name, *etcd, *created, *state;
        int deleting;
        enum kerr rc; /* for the task "b" created at 10:00:05 */
    } rows[] = {
        { "a", "e", "2026-01-01T10:00:00Z", "Pending", 0, KERR_EXISTS },
        { "a", "e", "2026-01-01T10:00:00Z", "", 0, KERR_EXISTS },
        { "c", "e", "2026-01-01T10:00:09Z", "Pending", 0, KERR_OK },
        { "c", "e", "2026-01-01T10:00:09Z", "InProgress", 0, KERR_EXISTS },
        { "a", "e", "2026-01-01T10:00:05Z", "Pending", 0, KERR_EXISTS },
        { "c", "e", "2026-01-01T10:00:05Z", "Pending", 0, KERR_OK },
        { "a", "e", "2026-01-01T10:00:00Z", "Succeeded", 0, KERR_OK },
        { "a", "e", "2026-01-01T10:00:00Z", "Rejected", 0, KERR_OK },
        { "a", "e", "2026-01-01T10:00:00Z", "InProgress", 1, KERR_OK },
        { "a", "other", "2026-01-01T10:00:00Z", "InProgress", 0, KERR_OK },
        { "b", "e", "2026-01-01T10:00:00Z", "InProgress", 0, KERR_OK },
    };
    cJSON *me = task_json("b", "e", cfg, "2026-01-01T10:00:05Z", "Pending");

    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        cJSON *items = cJSON_CreateArray();
        cJSON *o = task_json(rows[i].name, rows[i].etcd, cfg, rows[i].created, rows[i].state);
        struct kerr_info e;

        if (rows[i].deleting)
            kjson_set_str(o, "metadata.deletionTimestamp", "2026-01-01T10:00:06Z", NULL);
        cJSON_AddItemToArray(items, o);
        cr_assert_eq(otask_check_duplicate(me, items, &e), rows[i].rc, "row %zu: %s", i, e.msg);
        cJSON_Delete(items);
    }
    cr_assert_eq(otask_check_duplicate(me, NULL, NULL), KERR_OK);
    cJSON_Delete(me);
}

Test(otask, etcd_checks_and_ttl)
{
    cJSON *ok = jsonfix_parse("{\"spec\":{\"backup\":{\"store\":{}}},\"status\":{\"conditions\":"
                              "[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    cJSON *nostore = jsonfix_parse("{\"spec\":{\"backup\":{}},\"status\":{\"conditions\":"
                                   "[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    cJSON *unready = jsonfix_parse("{\"spec\":{\"backup\":{\"store\":{}}},\"status\":{"
                                   "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
    cJSON *t = jsonfix_parse("{\"status\":{\"lastTransitionTime\":\"2026-01-01T10:00:00Z\"}}");
    const char *code;
    struct timespec ts;

    cr_assert_eq(otask_check_etcd(ok, &code, NULL), KERR_OK);
    cr_assert_eq(otask_check_etcd(NULL, &code, NULL), KERR_INVAL);
    cr_assert_str_eq(code, "ERR_GET_ETCD");
    cr_assert_eq(otask_check_etcd(nostore, &code, NULL), KERR_INVAL);
    cr_assert_str_eq(code, "ERR_BACKUP_NOT_ENABLED");
    cr_assert_eq(otask_check_etcd(unready, &code, NULL), KERR_INVAL);
    cr_assert_str_eq(code, "ERR_ETCD_NOT_READY");
    cr_assert_eq(ktime_parse("2026-01-01T10:00:00Z", &ts, NULL), KERR_OK);
    cr_assert_eq(otask_ttl_left_ms(t, 60, ts.tv_sec + 10), 50000);
    cr_assert_eq(otask_ttl_left_ms(t, 60, ts.tv_sec + 61), -1000);
    cr_assert_eq(otask_ttl_left_ms(ok, 60, ts.tv_sec), 0);
    cr_assert(otask_finished(OTASK_REJECTED) && !otask_finished(OTASK_INPROGRESS));
    cr_assert_eq(otask_state_parse("InProgress"), OTASK_INPROGRESS);
    cr_assert_eq(otask_state_parse("Bogus"), OTASK_NONE);
    cJSON_Delete(ok);
    cJSON_Delete(nostore);
    cJSON_Delete(unready);
    cJSON_Delete(t);
}

/* ---- on kube-sim ---- */

static struct hibfix x;

static void setup(void)
{
    hibfix_start(&x);
}

static void teardown(void)
{
    hibfix_stop(&x);
}

TestSuite(otask_kubesim, .init = setup, .fini = teardown, .timeout = 60);

static void create_task(const char *name, const char *etcd, const char *snap, long ttl)
{
    char text[1024];
    cJSON *t;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"EtcdOpsTask\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"etcdName\":\"%s\","
             "\"ttlSecondsAfterFinished\":%ld,\"config\":{\"onDemandSnapshot\":%s}}}",
             name, etcd, ttl, snap);
    t = jsonfix_parse(text);
    cJSON_Delete(cfix_create(&x.f, &ETCDSPEC_RES_OPSTASK, t));
    cJSON_Delete(t);
}

static long step(const char *name)
{
    struct kerr_info e;
    long rq = 0;

    cr_assert_eq(otask_step(&x.ot, CFIX_NS, name, &rq, &e), KERR_OK, "%s", e.msg);
    return rq;
}

static cJSON *task(const char *name)
{
    return cfix_get(&x.f, &ETCDSPEC_RES_OPSTASK, name);
}

static void expect_state(const char *name, const char *state, const char *code)
{
    cJSON *t = task(name);
    const cJSON *errs;

    cr_assert_not_null(t, "task %s is gone", name);
    cr_assert_str_eq(kjson_get_str(t, "status.state"), state);
    errs = kjson_get_arr(t, "status.lastErrors");
    if (code)
        cr_assert_str_eq(
            kjson_get_str(cJSON_GetArrayItem(errs, cJSON_GetArraySize(errs) - 1), "code"), code);
    cJSON_Delete(t);
}

static int await_event(const char *reason, const char *type)
{
    for (int i = 0; i < 600; i++) { /* 30 s at most */
        if (hibfix_events(&x, reason, type) > 0)
            return 1;
        ktime_sleep_ns(50000000L);
    }
    return 0;
}

Test(otask_kubesim, a_task_created_with_kubectl_runs_to_succeeded)
{
    char path[512], *out = NULL;
    FILE *fp;
    cJSON *t;
    const char *fins;

    cJSON_Delete(hibfix_etcd(&x, "e1", STORE, NULL, 1));
    snprintf(path, sizeof(path), "%s/task.yaml", x.f.h->dir);
    fp = fopen(path, "w");
    cr_assert_not_null(fp);
    fputs("apiVersion: druid.gardener.cloud/v1alpha1\nkind: EtcdOpsTask\nmetadata:\n"
          "  name: snap1\n  namespace: ns1\nspec:\n  etcdName: e1\n  config:\n"
          "    onDemandSnapshot:\n      type: full\n      isFinal: true\n",
          fp);
    fclose(fp);
    snprintf(path, sizeof(path), "apply -f %s/task.yaml", x.f.h->dir);
    cr_assert_eq(ksim_harness_kubectl(x.f.h, NULL, path, &out), 0, "%s", out);
    free(out);
    cr_assert_gt(step("snap1"), 0, "a finished task waits for its TTL");
    t = task("snap1");
    cr_assert_str_eq(kjson_get_str(t, "status.state"), "Succeeded");
    cr_assert_str_eq(kjson_get_str(t, "status.lastOperation.type"), "Execution");
    cr_assert_str_eq(kjson_get_str(t, "status.lastOperation.state"), "Completed");
    cr_assert(strstr(kjson_get_str(t, "status.lastOperation.description"), ".final"));
    cr_assert_eq(strlen(kjson_get_str(t, "status.lastOperation.runID")), CRYPTO_UUID_LEN);
    cr_assert_not_null(kjson_get_str(t, "status.startedAt"));
    cr_assert_not_null(kjson_get_str(t, "status.lastTransitionTime"));
    fins = cJSON_GetStringValue(cJSON_GetArrayItem(kjson_get_arr(t, "metadata.finalizers"), 0));
    cr_assert_str_eq(fins, OTASK_FINALIZER);
    cJSON_Delete(t);
    cr_assert_eq(atomic_load(&x.sc.finals), 1);
    cr_assert(await_event("SnapshotSucceeded", "Normal"));
    cr_assert_gt(step("snap1"), 0); /* idempotent: no second snapshot */
    cr_assert_eq(atomic_load(&x.sc.requests), 1);
}

Test(otask_kubesim, a_second_live_task_for_the_same_etcd_is_rejected)
{
    cJSON_Delete(hibfix_etcd(&x, "e1", STORE, NULL, 1));
    create_task("t1", "e1", "{\"type\":\"full\"}", 3600);
    create_task("t2", "e1", "{\"type\":\"delta\"}", 3600);
    step("t2"); /* t1 is older (or, in the same second, has the smaller name) */
    expect_state("t2", "Rejected", "ERR_DUPLICATE_TASK");
    step("t1");
    expect_state("t1", "Succeeded", NULL);
    cr_assert_eq(atomic_load(&x.sc.requests), 1);
    cr_assert(await_event("TaskRejected", "Warning"));
}

Test(otask_kubesim, admission_checks_reject_with_etcd_druids_codes)
{
    cJSON *p = jsonfix_parse("{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
                             "\"False\"}]}}");
    struct k8s_write_opts wo = { .subresource = "status" };

    cJSON_Delete(hibfix_etcd(&x, "nostore", NULL, NULL, 1));
    cJSON_Delete(hibfix_etcd(&x, "unready", STORE, NULL, 1));
    cr_assert_eq(k8s_patch(x.f.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "unready", K8S_PATCH_MERGE, p, &wo,
                           NULL, NULL),
                 KERR_OK);
    cJSON_Delete(p);
    create_task("a", "missing", "{\"type\":\"full\"}", 3600);
    create_task("b", "nostore", "{\"type\":\"full\"}", 3600);
    create_task("c", "unready", "{\"type\":\"full\"}", 3600);
    step("a");
    step("b");
    step("c");
    expect_state("a", "Rejected", "ERR_GET_ETCD");
    expect_state("b", "Rejected", "ERR_BACKUP_NOT_ENABLED");
    expect_state("c", "Rejected", "ERR_ETCD_NOT_READY");
    cr_assert_eq(atomic_load(&x.sc.requests), 0);
}

Test(otask_kubesim, an_error_answer_fails_the_task)
{
    cJSON_Delete(hibfix_etcd(&x, "e1", STORE, NULL, 1));
    atomic_store(&x.sc.code, 500);
    create_task("t", "e1", "{\"type\":\"full\",\"isFinal\":true}", 3600);
    step("t");
    expect_state("t", "Failed", "ERR_CREATE_SNAPSHOT");
    cr_assert(await_event("SnapshotFailed", "Warning"));
}

Test(otask_kubesim, transport_errors_are_retried_until_the_timeout)
{
    cJSON *p, *t;
    struct k8s_write_opts wo = { .subresource = "status" };

    cJSON_Delete(hibfix_etcd(&x, "e1", STORE, NULL, 1));
    /* the backup port points where nothing listens */
    hibfix_backup_port(&x, "e1", 1);
    create_task("t", "e1", "{\"type\":\"full\"}", 3600);
    cr_assert_gt(step("t"), 0);
    expect_state("t", "InProgress", "ERR_EXECUTE_HTTP_REQUEST");
    cr_assert_gt(step("t"), 0);
    t = task("t");
    cr_assert_eq(cJSON_GetArraySize(kjson_get_arr(t, "status.lastErrors")), 2);
    cJSON_Delete(t);
    /* the sidecar comes back: the same task succeeds */
    hibfix_backup_port(&x, "e1", x.sc.port);
    step("t");
    expect_state("t", "Succeeded", NULL);

    /* a task started long ago is past its timeout */
    create_task("old", "e1", "{\"type\":\"full\"}", 3600);
    hibfix_backup_port(&x, "e1", 1);
    step("old");
    expect_state("old", "InProgress", "ERR_EXECUTE_HTTP_REQUEST");
    p = jsonfix_parse("{\"status\":{\"startedAt\":\"2020-01-01T00:00:00Z\"}}");
    cr_assert_eq(k8s_patch(x.f.c, &ETCDSPEC_RES_OPSTASK, CFIX_NS, "old", K8S_PATCH_MERGE, p, &wo,
                           NULL, NULL),
                 KERR_OK);
    cJSON_Delete(p);
    step("old");
    expect_state("old", "Failed", "ERR_CREATE_SNAPSHOT");
}

/* Sets the stopping flag once the sidecar has the request (it holds its answer). */
static void *stop_when_asked(void *arg)
{
    for (int i = 0; i < 600 && atomic_load(&x.sc.requests) == 0; i++) /* 30 s at most */
        ktime_sleep_ns(50000000L);
    atomic_store((atomic_int *)arg, 1);
    return NULL;
}

/* issue 30: a sidecar call in flight ends when the process begins to stop, not after its drain */
Test(otask_kubesim, a_call_in_flight_ends_when_the_process_begins_to_stop)
{
    atomic_int stopping = 0;
    struct kerr_info e;
    pthread_t th;
    long rq = 0;

    cJSON_Delete(hibfix_etcd(&x, "e1", STORE, NULL, 1));
    atomic_store(&x.sc.delay_ms, 8000); /* the sidecar holds its answer */
    x.ot.stopping = &stopping;
    create_task("t", "e1", "{\"type\":\"full\",\"isFinal\":true}", 3600);
    cr_assert_eq(pthread_create(&th, NULL, stop_when_asked, &stopping), 0);
    cr_assert_eq(otask_step(&x.ot, CFIX_NS, "t", &rq, &e), KERR_CANCELLED);
    pthread_join(th, NULL);
    cr_assert_eq(atomic_load(&x.sc.requests), 1);
    /* nothing decided: the task is as the call found it, for the next leader to run again */
    expect_state("t", "InProgress", NULL);
    x.ot.stopping = NULL;
}

Test(otask_kubesim, an_api_server_failure_reading_the_members_is_not_the_sidecars)
{
    const char *faults[][2] = {
        { "{\"errorRate\":1,\"match\":\"GET /apis/apps/v1/namespaces/ns1/statefulsets/\"}",
          "StatefulSet e1" },
        { "{\"errorRate\":1,\"match\":\"GET /api/v1/namespaces/ns1/pods\"}", "listing the pods" },
    };
    struct kerr_info e;
    long rq = 0;
    cJSON *t;

    cJSON_Delete(hibfix_etcd(&x, "e1", STORE, NULL, 1));
    create_task("t", "e1", "{\"type\":\"full\",\"isFinal\":true}", 3600);
    for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
        ksimfix_faults(x.f.h, faults[i][0]);
        cr_assert_neq(otask_step(&x.ot, CFIX_NS, "t", &rq, &e), KERR_OK,
                      "the queue retries a failure of the API server");
        ksimfix_faults(x.f.h, "{\"reset\":true}");
        cr_assert(strstr(e.msg, faults[i][1]), "%s", e.msg);
        t = task("t");
        cr_assert_eq(cJSON_GetArraySize(kjson_get_arr(t, "status.lastErrors")), 0,
                     "nothing recorded against the sidecar");
        cJSON_Delete(t);
    }
    cr_assert_eq(hibfix_events(&x, "SnapshotCallFailed", NULL), 0);
    cr_assert_eq(atomic_load(&x.sc.requests), 0);
    step("t");
    expect_state("t", "Succeeded", NULL);
    cr_assert_eq(atomic_load(&x.sc.finals), 1);
}

/* The tenant's side of issue 30: the client Service's backuprestore port points at a stand-in
 * (any pod with the selector's labels, or an edited port): the task still reaches the member's
 * sidecar, and a member pod that is not the StatefulSet's, or not Running, is never asked. */
Test(otask_kubesim, the_sidecar_asked_is_the_members_not_the_services)
{
    struct hibfix_sidecar fake = { 0 };
    char ports[512], want[64], ip[64];
    cJSON *p;

    hibfix_tls_sidecar(&x, &fake, NULL, NULL);
    snprintf(ports, sizeof(ports),
             "[{\"name\":\"client\",\"protocol\":\"TCP\",\"port\":2379,\"targetPort\":2379},"
             "{\"name\":\"server\",\"protocol\":\"TCP\",\"port\":2380,\"targetPort\":2380},"
             "{\"name\":\"backuprestore\",\"protocol\":\"TCP\",\"port\":%d,\"targetPort\":%d}]",
             x.sc.port, x.sc.port);
    cJSON_Delete(hibfix_etcd(&x, "e1", STORE, ports, 1));
    snprintf(ports, sizeof(ports),
             "[{\"op\":\"replace\",\"path\":\"/spec/ports/2/port\",\"value\":%d}]", fake.port);
    p = jsonfix_parse(ports);
    cr_assert_eq(k8s_patch(x.f.c, &(struct k8s_resource){ "", "v1", "services", 1 }, CFIX_NS,
                           "e1-client", K8S_PATCH_JSON, p, NULL, NULL, NULL),
                 KERR_OK);
    cJSON_Delete(p);
    /* member e1-0 stops running: every member or none is asked (smember), so nothing is */
    p = jsonfix_parse("{\"status\":{\"phase\":\"Failed\"}}");
    cr_assert_eq(k8s_patch(x.f.c, &ETCDSPEC_RES_POD, CFIX_NS, "e1-0", K8S_PATCH_MERGE, p,
                           &(struct k8s_write_opts){ .subresource = "status" }, NULL, NULL),
                 KERR_OK);
    cJSON_Delete(p);
    create_task("t", "e1", "{\"type\":\"full\",\"isFinal\":true}", 3600);
    step("t");
    expect_state("t", "InProgress", NULL);
    cr_assert_eq(atomic_load(&fake.requests), 0, "the Service's stand-in was asked");
    cr_assert_eq(atomic_load(&x.sc.finals), 0, "a member was asked while e1-0 was not running");
    /* e1-0 running again: the members' sidecar at its pod IP answers */
    p = jsonfix_parse("{\"status\":{\"phase\":\"Running\"}}");
    cr_assert_eq(k8s_patch(x.f.c, &ETCDSPEC_RES_POD, CFIX_NS, "e1-0", K8S_PATCH_MERGE, p,
                           &(struct k8s_write_opts){ .subresource = "status" }, NULL, NULL),
                 KERR_OK);
    cJSON_Delete(p);
    step("t");
    expect_state("t", "Succeeded", NULL);
    cr_assert_eq(atomic_load(&fake.requests), 0, "the Service's stand-in was asked");
    cr_assert_eq(atomic_load(&x.sc.finals), 1);
    hibfix_last_ip(&x, ip, sizeof(ip));
    snprintf(want, sizeof(want), HIBFIX_POD_IP_FMT, 0);
    cr_assert_str_eq(ip, want);
    hibfix_sidecar_stop(&fake);
}

Test(otask_kubesim, after_the_ttl_the_task_is_deleted_and_a_users_delete_is_honoured)
{
    char *out = NULL;
    int64_t end;
    cJSON *t;

    cJSON_Delete(hibfix_etcd(&x, "e1", STORE, NULL, 1));
    create_task("short", "e1", "{\"type\":\"full\"}", 2);
    step("short");
    if ((t = task("short"))) /* a slow run may already be past the TTL */
        cr_assert_str_eq(kjson_get_str(t, "status.state"), "Succeeded");
    cJSON_Delete(t);
    cr_assert_eq(atomic_load(&x.sc.requests), 1);
    end = ktime_mono_ms() + 8000;
    while ((t = task("short")) && ktime_mono_ms() < end) {
        cJSON_Delete(t);
        step("short");
        ktime_sleep_ns(100000000L);
    }
    cr_assert_null(t, "the task outlived its TTL");

    create_task("kept", "e1", "{\"type\":\"full\"}", 3600);
    step("kept");
    cr_assert_eq(
        ksim_harness_kubectl(x.f.h, NULL, "delete eot kept --wait=false -n " CFIX_NS, &out), 0,
        "%s", out);
    free(out);
    t = task("kept");
    cr_assert_not_null(t, "the finalizer holds the task");
    cr_assert_not_null(kjson_get_str(t, "metadata.deletionTimestamp"));
    cJSON_Delete(t);
    step("kept");
    cr_assert_null(task("kept"));
}

Test(otask_kubesim, https_with_the_ca_of_spec_backup_tls)
{
    const char *sans[] = { "e1-client.ns1.svc", NULL };
    struct tlsx_cert_opts co = { .cn = "backup-ca" }, so = { .cn = "e1-client", .sans = sans };
    struct tlsx_pem ca, serving;
    struct hibfix_sidecar tls;
    char ports[512], *b64 = NULL, secret[8192];
    cJSON *etcd, *s;

    tlsx_pem_init(&ca);
    tlsx_pem_init(&serving);
    cr_assert_eq(tlsx_gen_ca(&co, &ca, NULL), KERR_OK);
    cr_assert_eq(tlsx_gen_serving(&ca, &so, &serving, NULL), KERR_OK);
    hibfix_tls_sidecar(&x, &tls, serving.cert, serving.key);
    cr_assert_eq(crypto_b64_encode(ca.cert, strlen(ca.cert), &b64, NULL, NULL), KERR_OK);
    snprintf(secret, sizeof(secret),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"ca\"},"
             "\"data\":{\"bundle.crt\":\"%s\"}}",
             b64);
    s = jsonfix_parse(secret);
    cJSON_Delete(cfix_create(&x.f, &ETCDSPEC_RES_SECRET, s));
    cJSON_Delete(s);
    snprintf(ports, sizeof(ports),
             "[{\"name\":\"client\",\"port\":2379},{\"name\":\"server\",\"port\":2380},"
             "{\"name\":\"backuprestore\",\"port\":%d}]",
             tls.port);
    etcd = hibfix_etcd(&x, "e1", STORE, ports, 1);
    s = jsonfix_parse("{\"spec\":{\"backup\":{\"tls\":{\"tlsCASecretRef\":{\"name\":\"ca\"}}}}}");
    cr_assert_eq(
        k8s_patch(x.f.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "e1", K8S_PATCH_MERGE, s, NULL, NULL, NULL),
        KERR_OK);
    cJSON_Delete(s);
    create_task("t", "e1", "{\"type\":\"full\",\"isFinal\":true}", 3600);
    step("t");
    expect_state("t", "Succeeded", NULL);
    cr_assert_eq(atomic_load(&tls.finals), 1);
    cr_assert_eq(atomic_load(&x.sc.requests), 0);

    /* a CA secret without the key: no request, an error recorded, retried */
    s = jsonfix_parse("{\"spec\":{\"backup\":{\"tls\":{\"tlsCASecretRef\":{\"name\":\"ca\","
                      "\"dataKey\":\"ca.crt\"}}}}}");
    cr_assert_eq(
        k8s_patch(x.f.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "e1", K8S_PATCH_MERGE, s, NULL, NULL, NULL),
        KERR_OK);
    cJSON_Delete(s);
    create_task("t2", "e1", "{\"type\":\"full\"}", 3600);
    cr_assert_gt(step("t2"), 0);
    expect_state("t2", "InProgress", "ERR_EXECUTE_HTTP_REQUEST");
    cr_assert_eq(atomic_load(&tls.requests), 1);
    hibfix_sidecar_stop(&tls);
    free(b64);
    cJSON_Delete(etcd);
    tlsx_pem_release(&ca);
    tlsx_pem_release(&serving);
}

/* The lastErrors description of the last error of task name (OWNED copy). */
static char *last_error(const char *name)
{
    cJSON *t = task(name);
    const cJSON *errs = kjson_get_arr(t, "status.lastErrors");
    char *d = strdup(
        kjson_get_str(cJSON_GetArrayItem(errs, cJSON_GetArraySize(errs) - 1), "description"));

    cJSON_Delete(t);
    return d;
}

/* Delete task name and let the executor remove its finalizer. */
static void drop(const char *name)
{
    cr_assert_eq(k8s_delete(x.f.c, &ETCDSPEC_RES_OPSTASK, CFIX_NS, name, NULL, NULL, NULL),
                 KERR_OK);
    step(name);
    cr_assert_null(task(name));
}

static void set_ca_ref(const char *ref)
{
    char text[512];
    cJSON *s;

    snprintf(text, sizeof(text), "{\"spec\":{\"backup\":{\"tls\":{\"tlsCASecretRef\":%s}}}}", ref);
    s = jsonfix_parse(text);
    cr_assert_eq(
        k8s_patch(x.f.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "e1", K8S_PATCH_MERGE, s, NULL, NULL, NULL),
        KERR_OK);
    cJSON_Delete(s);
}

/* A namespace user points tlsCASecretRef at kube-system: the Secret there is never read, and
 * whatever keeps a CA from being used reads alike in the status (nothing tells which Secrets
 * or keys exist). */
Test(otask_kubesim, the_backup_ca_is_read_in_the_etcds_namespace_only)
{
    const char *sans[] = { "e1-client.ns1.svc", NULL };
    struct tlsx_cert_opts co = { .cn = "backup-ca" }, so = { .cn = "e1-client", .sans = sans };
    struct tlsx_pem ca, serving;
    struct hibfix_sidecar tls;
    char ports[512], *b64 = NULL, secret[8192], *missing, *nokey, *other;
    cJSON *etcd, *s;

    tlsx_pem_init(&ca);
    tlsx_pem_init(&serving);
    cr_assert_eq(tlsx_gen_ca(&co, &ca, NULL), KERR_OK);
    cr_assert_eq(tlsx_gen_serving(&ca, &so, &serving, NULL), KERR_OK);
    hibfix_tls_sidecar(&x, &tls, serving.cert, serving.key);
    cr_assert_eq(crypto_b64_encode(ca.cert, strlen(ca.cert), &b64, NULL, NULL), KERR_OK);
    snprintf(secret, sizeof(secret),
             "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"ca\"},"
             "\"data\":{\"bundle.crt\":\"%s\"}}",
             b64);
    s = jsonfix_parse(secret);
    cr_assert_eq(k8s_create(x.f.c, &ETCDSPEC_RES_SECRET, "kube-system", s, NULL, NULL, NULL),
                 KERR_OK);
    cJSON_Delete(cfix_create(&x.f, &ETCDSPEC_RES_SECRET, s)); /* and ns1/ca */
    cJSON_Delete(s);
    snprintf(ports, sizeof(ports),
             "[{\"name\":\"client\",\"port\":2379},{\"name\":\"server\",\"port\":2380},"
             "{\"name\":\"backuprestore\",\"port\":%d}]",
             tls.port);
    etcd = hibfix_etcd(&x, "e1", STORE, ports, 1);

    set_ca_ref("{\"name\":\"ca\",\"namespace\":\"kube-system\"}");
    create_task("t1", "e1", "{\"type\":\"full\"}", 3600);
    cr_assert_gt(step("t1"), 0);
    expect_state("t1", "InProgress", "ERR_EXECUTE_HTTP_REQUEST");
    cr_assert_eq(atomic_load(&tls.requests), 0, "a CA from another namespace was used");
    other = last_error("t1");
    cr_assert_str_eq(other, "spec.backup.tls.tlsCASecretRef.namespace must be empty or the "
                            "Etcd's own namespace");
    drop("t1");

    set_ca_ref("{\"name\":\"nope\",\"namespace\":\"ns1\"}");
    create_task("t2", "e1", "{\"type\":\"full\"}", 3600);
    cr_assert_gt(step("t2"), 0);
    missing = last_error("t2");
    drop("t2");
    set_ca_ref("{\"name\":\"ca\",\"dataKey\":\"ca.crt\"}");
    create_task("t3", "e1", "{\"type\":\"full\"}", 3600);
    cr_assert_gt(step("t3"), 0);
    nokey = last_error("t3");
    cr_assert_str_eq(missing, "the backup CA (Secret nope, key bundle.crt) is not available");
    cr_assert_str_eq(nokey, "the backup CA (Secret ca, key ca.crt) is not available");
    cr_assert_eq(atomic_load(&tls.requests), 0);
    hibfix_sidecar_stop(&tls);
    free(other);
    free(missing);
    free(nokey);
    free(b64);
    cJSON_Delete(etcd);
    tlsx_pem_release(&ca);
    tlsx_pem_release(&serving);
}
