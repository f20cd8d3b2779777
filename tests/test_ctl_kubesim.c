/*
 * The controller core (controller/ctl) against an in-process kube-sim with
 * the chart's CRDs: the caches sync and project, informer events become the
 * right queue keys (seen through recording steps), the dispatch order
 * (restoring: rst only; else sbk, oref, hib; the smallest requeue wins;
 * errors retried and counted), --ops-task-executor=false, --watch-namespace,
 * the metrics, and leader election: of two controllers only the leader
 * runs its steps, and stopping it releases the Lease so the other takes over.
 */
#include "controller/core/ctl.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/metrics.h"
#include "common/proc.h"
#include "common/store.h"
#include "common/strlist.h"
#include "controller/backups/backups.h"
#include "controller/core/ctl_cap.h"
#include "controller/core/ctl_config.h"
#include "controller/entries/entries.h"
#include "controller/hibernation/hibernation.h"
#include "controller/immutability/immutability.h"
#include "controller/restore/restore.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimcli.h"
#include "tests/support/ksimfix.h"
#include "tests/support/linerec.h"
#include "tests/support/metricsfix.h"
#include "tests/support/testutil.h"

#define OK(call) KSIMCLI_OK(call, err)
#define AWAIT(cond)                               \
    do {                                          \
        TESTUTIL_AWAIT(cond, 30000);              \
        cr_assert(cond, "never true: %s", #cond); \
    } while (0)

static const struct k8s_resource ETCD = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };
static const struct k8s_resource OPSTASK = { "druid.gardener.cloud", "v1alpha1", "etcdopstasks",
                                             1 };
static const struct k8s_resource IMMTASK = { "etcd-warden.io", "v1alpha1",
                                             "extendfullsnapshotimmutabilitytasks", 1 };
static const struct k8s_resource BACKUP = { "etcd-warden.io", "v1alpha1", "etcdstatusbackups", 1 };
static const struct k8s_resource CRONJOB = { "batch", "v1", "cronjobs", 1 };
static const struct k8s_resource CM = { "", "v1", "configmaps", 1 };
static const struct k8s_resource LEASE = { "coordination.k8s.io", "v1", "leases", 1 };

/* What the recording steps saw and answer. */
struct seen {
    struct linerec lines;    /* "<step> <ns>/<name> <instance>" (first LINEREC_MAX) */
    atomic_int calls[6][2];  /* per step, per instance */
    atomic_int fail_oref;    /* oref answers KERR_API this many more times */
    atomic_long sbk_requeue; /* requeue_ms of sbk, hib */
    atomic_long hib_requeue;
};

enum { S_SBK, S_OREF, S_HIB, S_RST, S_OTASK, S_IMT };
static const char *const step_names[] = { "sbk", "oref", "hib", "rst", "otask", "imt" };

static struct ksim_harness *h;
static struct k8s_client *admin;
static struct ctl *ctls[2];
static struct ctl_config cfgs[2];
static struct seen seen;
static struct kerr_info err;

static int instance(struct ctl *c)
{
    return c == ctls[1] ? 1 : 0;
}

static void record(struct ctl *c, int step, const char *ns, const char *name)
{
    atomic_fetch_add(&seen.calls[step][instance(c)], 1);
    (void)linerec_addf(&seen.lines, "%s %s/%s %d", step_names[step], ns, name, instance(c));
}

static void record_etcd(struct ctl *c, int step, const cJSON *etcd)
{
    record(c, step, jsonfix_str(etcd, "metadata.namespace"), jsonfix_str(etcd, "metadata.name"));
}

static enum kerr f_sbk(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                       struct kerr_info *e)
{
    (void)e;
    record_etcd(c, S_SBK, etcd);
    res->requeue_ms = atomic_load(&seen.sbk_requeue);
    return KERR_OK;
}

static enum kerr f_oref(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                        struct kerr_info *e)
{
    (void)res;
    record_etcd(c, S_OREF, etcd);
    if (atomic_load(&seen.fail_oref) > 0) {
        atomic_fetch_sub(&seen.fail_oref, 1);
        return kerr_set(e, KERR_API, "injected failure");
    }
    return KERR_OK;
}

static enum kerr f_hib(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                       struct kerr_info *e)
{
    (void)e;
    record_etcd(c, S_HIB, etcd);
    res->requeue_ms = atomic_load(&seen.hib_requeue);
    return KERR_OK;
}

static enum kerr f_rst(struct ctl *c, const cJSON *etcd, struct ctl_result *res,
                       struct kerr_info *e)
{
    (void)res;
    (void)e;
    record_etcd(c, S_RST, etcd);
    return KERR_OK;
}

static enum kerr f_otask(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                         struct kerr_info *e)
{
    (void)res;
    (void)e;
    record(c, S_OTASK, ns, name);
    return KERR_OK;
}

static enum kerr f_imt(struct ctl *c, const char *ns, const char *name, struct ctl_result *res,
                       struct kerr_info *e)
{
    (void)res;
    (void)e;
    record(c, S_IMT, ns, name);
    return KERR_OK;
}

static const struct ctl_stub stubs[] = {
    { "status-backup", f_sbk, NULL },
    { "owner-references", f_oref, NULL },
    { "hibernation", f_hib, NULL },
    { "restore", f_rst, NULL },
    { "opstask", NULL, f_otask },
    { "immtask", NULL, f_imt },
    { NULL, NULL, NULL },
};

/* The capabilities of warden-controller (controller/main.c). */
static const struct ctl_capability *const caps[] = {
    &restore_capability, &hibernation_capability, &immutability_capability,
    &entries_capability, &backups_capability,     NULL,
};

static int calls(int step, int inst)
{
    return atomic_load(&seen.calls[step][inst]);
}

static void setup(void)
{
    char cmd[512], *out = NULL;
    const char *src = getenv("WARDEN_SOURCE_DIR");

    memset(&seen, 0, sizeof(seen));
    linerec_init(&seen.lines);
    h = ksimfix_start(NULL);
    admin = ksimcli_admin(h);
    snprintf(cmd, sizeof(cmd), "apply -f '%s/charts/etcd-warden/crds'", src ? src : ".");
    cr_assert_eq(ksim_harness_kubectl(h, NULL, cmd, &out), 0, "%s", out ? out : "");
    free(out);
    ksimcli_create_ns(admin, "ns1");
    ksimcli_create_ns(admin, "ns2");
}

static void teardown(void)
{
    int i;

    for (i = 0; i < 2; i++) {
        ctl_free(ctls[i]);
        ctls[i] = NULL;
        ctl_config_release(&cfgs[i]);
    }
    k8s_client_free(admin);
    ksim_harness_stop(h);
    linerec_release(&seen.lines);
}

/* The Lease duration start() gives the electors (a test may lengthen it). */
static long lease_ms =
    4000; /* renewed every 2.7 s: a loaded machine (ASan, -j) still renews in time */

/* Start controller i with the flags in args (NULL-terminated), the fake steps, no servers. */
static void start(int i, const char *const *args, const char *identity)
{
    const char *argv[16] = { "warden-controller", "--metrics-bind-address=0",
                             "--health-probe-bind-address=0", "--leader-election-namespace=ns1" };
    struct ctl_opts o = { 0 };
    int n = 4;

    while (args && *args && n < 15)
        argv[n++] = *args++;
    OK(ctl_config_load(&cfgs[i], n, (char **)argv, &err));
    o.stubs = stubs;
    o.client = admin;
    o.identity = identity;
    o.lease_ms = lease_ms;
    o.renew_ms = lease_ms * 2 / 3;
    o.retry_ms = 200;
    o.no_servers = 1;
    OK(ctl_new(&cfgs[i], caps, &o, &ctls[i], &err));
    OK(ctl_start(ctls[i], &err));
}

static void create(const struct k8s_resource *res, const char *ns, const char *json)
{
    cJSON *o = jsonfix_parse(json), *got = NULL;

    OK(k8s_create(admin, res, ns, o, NULL, &got, &err));
    cJSON_Delete(o);
    cJSON_Delete(got);
}

static void create_etcd(const char *ns, const char *name, const char *labels)
{
    char json[512];

    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\","
             "\"metadata\":{\"name\":\"%s\",\"labels\":{%s}},"
             "\"spec\":{\"replicas\":3,\"labels\":{\"app\":\"etcd\"},"
             "\"etcd\":{},\"backup\":{}}}",
             name, labels ? labels : "");
    create(&ETCD, ns, json);
}

static void create_component(const char *ns, const char *name, const char *etcd)
{
    char json[512];

    snprintf(json, sizeof(json),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-druid\","
             "\"app.kubernetes.io/part-of\":\"%s\"}},\"data\":{\"k\":\"v\"}}",
             name, etcd);
    create(&CM, ns, json);
}

static int has(const char *line)
{
    return linerec_has(&seen.lines, line);
}

/* The line index of want, or -1. */
static int line_of(const char *want)
{
    char buf[LINEREC_LEN];
    int i;

    for (i = 0; i < linerec_count(&seen.lines); i++) {
        if (strcmp(linerec_at(&seen.lines, i, buf, sizeof(buf)), want) == 0)
            return i;
    }
    return -1;
}

TestSuite(ctl_kubesim, .init = setup, .fini = teardown, .timeout = 60);

Test(ctl_kubesim, caches_sync_project_and_map_events_to_keys)
{
    static const char *const args[] = { "--leader-elect=false", NULL };
    struct strlist keys;
    cJSON *cm = NULL;

    create_etcd("ns1", "e1", NULL);
    create_component("ns1", "e1-config", "e1");
    start(0, args, "a");
    AWAIT(ctl_synced(ctls[0]));
    cr_expect(ctl_leading(ctls[0]), "no election: the workers run at once");
    AWAIT(has("hib ns1/e1 0"));
    cr_expect_lt(line_of("sbk ns1/e1 0"), line_of("oref ns1/e1 0"));
    cr_expect_lt(line_of("oref ns1/e1 0"), line_of("hib ns1/e1 0"));
    cr_expect_eq(calls(S_RST, 0), 0);

    /* The component cache: projected, keyed by kind, indexed by part-of. */
    OK(store_get(ctl_store(ctls[0], CTL_CACHE_COMPONENTS), "ConfigMap/ns1/e1-config", &cm, &err));
    cr_expect_str_eq(jsonfix_str(cm, "kind"), "ConfigMap");
    cr_expect_str_eq(jsonfix_str(cm, "apiVersion"), "v1");
    cr_expect_str_eq(jsonfix_str(cm, "metadata.labels[app.kubernetes.io/part-of]"), "e1");
    cr_expect_null(kjson_get(cm, "data"), "components keep metadata only");
    cr_expect_not_null(kjson_get_str(cm, "metadata.uid"));
    cJSON_Delete(cm);
    strlist_init(&keys);
    OK(store_index_keys(ctl_store(ctls[0], CTL_CACHE_COMPONENTS), CTL_INDEX_PART_OF, "ns1/e1",
                        &keys, &err));
    cr_expect_eq(keys.n, 1);
    strlist_release(&keys);
    cr_expect_eq(store_count(ctl_store(ctls[0], CTL_CACHE_ETCDS)), 1);

    /* Each kind of event reaches its key. */
    create(&OPSTASK, "ns1",
           "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"EtcdOpsTask\","
           "\"metadata\":{\"name\":\"t1\"},\"spec\":{\"etcdName\":\"e1\","
           "\"config\":{\"onDemandSnapshot\":{\"type\":\"full\"}}}}");
    AWAIT(has("otask ns1/t1 0"));
    create(&IMMTASK, "ns1",
           "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":"
           "\"ExtendFullSnapshotImmutabilityTask\",\"metadata\":{\"name\":\"i1\"},"
           "\"spec\":{\"etcdName\":\"e1\",\"config\":{\"schedule\":\"0 0 * * *\"}}}");
    AWAIT(has("imt ns1/i1 0"));
    {
        int before = calls(S_IMT, 0);

        create(&CRONJOB, "ns1",
               "{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":\"cj\","
               "\"labels\":{\"app.kubernetes.io/managed-by\":\"etcd-warden\"},"
               "\"ownerReferences\":[{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":"
               "\"ExtendFullSnapshotImmutabilityTask\",\"name\":\"i1\",\"uid\":\"u-1\","
               "\"controller\":true}]},\"spec\":{\"schedule\":\"0 0 * * *\",\"jobTemplate\":"
               "{\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":"
               "[{\"name\":\"x\",\"image\":\"x\"}]}}}}}}");
        AWAIT(calls(S_IMT, 0) > before);
        AWAIT(store_count(ctl_store(ctls[0], "cronjobs")) == 1);
        create(&CRONJOB, "ns1",
               "{\"apiVersion\":\"batch/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":"
               "\"unrelated\"},\"spec\":{\"schedule\":\"0 0 * * *\",\"jobTemplate\":"
               "{\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":"
               "[{\"name\":\"x\",\"image\":\"x\"}]}}}}}}");
        testutil_pause_ms(300);
        cr_expect_eq(store_count(ctl_store(ctls[0], "cronjobs")), 1,
                     "only etcd-warden's CronJobs are cached");
    }
    {
        int before = calls(S_HIB, 0);

        create(&BACKUP, "ns1",
               "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdStatusBackup\","
               "\"metadata\":{\"name\":\"e1\"},\"spec\":{\"statusBackup\":{},\"components\":[]}}");
        AWAIT(calls(S_HIB, 0) > before);
        before = calls(S_HIB, 0);
        create_component("ns1", "e1-more", "e1");
        AWAIT(calls(S_HIB, 0) > before);
        AWAIT(store_count(ctl_store(ctls[0], CTL_CACHE_COMPONENTS)) == 2);
    }
    OK(k8s_delete(admin, &CM, "ns1", "e1-more", NULL, NULL, &err));
    AWAIT(store_count(ctl_store(ctls[0], CTL_CACHE_COMPONENTS)) == 1);
}

Test(ctl_kubesim, restoring_runs_rst_only_and_gone_etcds_nothing)
{
    static const char *const args[] = { "--leader-elect=false", NULL };
    char *text;

    create_etcd("ns1", "r1", "\"etcd-warden.io/restoring\":\"true\"");
    start(0, args, "a");
    AWAIT(has("rst ns1/r1 0"));
    cr_expect_eq(calls(S_SBK, 0) + calls(S_OREF, 0) + calls(S_HIB, 0), 0);
    /* A key of an Etcd that does not exist reaches no step and counts as a success. */
    ctl_enqueue_etcd(ctls[0], "ns1", "ghost", 0);
    text = NULL;
    TESTUTIL_AWAIT((free(text), text = metricsfix_render(ctl_metrics(ctls[0])),
                    strstr(text, "controller_runtime_reconcile_total{controller=\"etcd\","
                                 "result=\"success\"} 2")),
                   8000);
    cr_expect_not_null(strstr(text, "controller_runtime_reconcile_total{controller=\"etcd\","
                                    "result=\"success\"} 2"),
                       "%s", text);
    free(text);
    cr_expect_eq(calls(S_SBK, 0) + calls(S_RST, 0), 1);
}

Test(ctl_kubesim, smallest_requeue_wins_and_errors_are_retried)
{
    static const char *const args[] = { "--leader-elect=false", NULL };
    int64_t t0;
    char *text;

    atomic_store(&seen.sbk_requeue, 60000);
    atomic_store(&seen.hib_requeue, 100);
    atomic_store(&seen.fail_oref, 2);
    create_etcd("ns1", "q1", NULL);
    t0 = ktime_mono_ms();
    start(0, args, "a");
    /* Two failures (rate-limited retries, every step still runs), then requeues every 100 ms. */
    AWAIT(calls(S_HIB, 0) >= 6);
    /* six reconciles on the 60 s requeue would take five minutes */
    cr_expect_lt(ktime_mono_ms() - t0, 30000, "the 100 ms requeue won over 60 s");
    cr_expect_geq(calls(S_SBK, 0), 6, "a failing oref does not stop the other steps");
    text = metricsfix_render(ctl_metrics(ctls[0]));
    cr_expect_not_null(strstr(text, "controller_runtime_reconcile_errors_total{controller="
                                    "\"etcd\"} 2"),
                       "%s", text);
    cr_expect_not_null(strstr(text, "workqueue_retries_total{name=\"etcd\"}"), "%s", text);
    free(text);
}

Test(ctl_kubesim, ops_task_executor_off_and_watch_namespace)
{
    static const char *const args[] = { "--leader-elect=false", "--ops-task-executor=false",
                                        "--watch-namespace=ns2", NULL };

    create_etcd("ns1", "a1", NULL);
    create_etcd("ns2", "b1", NULL);
    create(&OPSTASK, "ns2",
           "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"EtcdOpsTask\","
           "\"metadata\":{\"name\":\"t2\"},\"spec\":{\"etcdName\":\"b1\","
           "\"config\":{\"onDemandSnapshot\":{\"type\":\"full\"}}}}");
    start(0, args, "a");
    AWAIT(has("hib ns2/b1 0"));
    AWAIT(store_count(ctl_store(ctls[0], "etcdopstasks")) == 1);
    {
        struct strlist keys;

        strlist_init(&keys);
        OK(store_index_keys(ctl_store(ctls[0], "etcdopstasks"), CTL_INDEX_ETCD_NAME, "ns2/b1",
                            &keys, &err));
        cr_expect_eq(keys.n, 1, "the task is indexed by its Etcd");
        strlist_release(&keys);
        OK(store_index_keys(ctl_store(ctls[0], "extendfullsnapshotimmutabilitytasks"),
                            CTL_INDEX_ETCD_NAME, "ns2/b1", &keys, &err));
        strlist_release(&keys);
    }
    testutil_pause_ms(300);
    cr_expect_eq(calls(S_OTASK, 0), 0, "no opstask key is processed");
    cr_expect(!has("hib ns1/a1 0"), "ns1 is not watched");
    cr_expect_eq(store_count(ctl_store(ctls[0], CTL_CACHE_ETCDS)), 1);
}

Test(ctl_kubesim, metrics_exposition_names)
{
    static const char *const args[] = { NULL };
    static const char *const names[] = {
        "controller_runtime_reconcile_total{controller=\"etcd\",result=\"success\"}",
        "controller_runtime_reconcile_time_seconds_bucket",
        "controller_runtime_reconcile_errors_total{controller=\"etcd\"}",
        "workqueue_depth{name=\"etcd\"}",
        "workqueue_adds_total{name=\"etcd\"}",
        "workqueue_retries_total{name=\"etcd\"}",
        "leader_election_master_status{name=\"warden-controller-leader-election\"} 1",
        "warden_hibernation_phase_etcds{phase=\"Hibernated\"} 1",
        "warden_hibernation_phase_etcds{phase=\"none\"} 1",
        "process_resident_memory_bytes",
        /* every running controller's series at 0 before its first reconcile */
        "controller_runtime_reconcile_total{controller=\"bucket\",result=\"error\"} 0",
        "controller_runtime_reconcile_total{controller=\"backup\",result=\"success\"} 0",
        "controller_runtime_reconcile_total{controller=\"restore\",result=\"requeue\"} 0",
        "controller_runtime_reconcile_errors_total{controller=\"bschedule\"} 0",
    };
    char *text;
    size_t i;

    create_etcd("ns1", "m1", NULL);
    {
        cJSON *p = jsonfix_parse("{\"metadata\":{\"annotations\":{"
                                 "\"etcd-warden.io/hibernation-phase\":\"Hibernated\"}}}");

        create_etcd("ns1", "m2", NULL);
        OK(k8s_patch(admin, &ETCD, "ns1", "m2", K8S_PATCH_MERGE, p, NULL, NULL, &err));
        cJSON_Delete(p);
    }
    start(0, args, "a");
    AWAIT(ctl_leading(ctls[0]));
    AWAIT(has("hib ns1/m2 0"));
    text = metricsfix_render(ctl_metrics(ctls[0]));
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        cr_expect_not_null(strstr(text, names[i]), "%s missing", names[i]);
    free(text);
}

static const char *holder(void)
{
    static char out[64];
    cJSON *l = NULL;

    out[0] = '\0';
    if (k8s_get(admin, &LEASE, "ns1", "warden-controller-leader-election", NULL, &l, NULL) ==
        KERR_OK) {
        const char *s = kjson_get_str(l, "spec.holderIdentity");

        snprintf(out, sizeof(out), "%s", s ? s : "");
    }
    cJSON_Delete(l);
    return out;
}

Test(ctl_kubesim, only_the_leader_reconciles_and_stop_releases_the_lease)
{
    int lead, other;
    int64_t t0;

    lease_ms = 60000; /* a take-over by expiry would take a minute */
    create_etcd("ns1", "l1", NULL);
    start(0, NULL, "a");
    start(1, NULL, "b");
    AWAIT(ctl_leading(ctls[0]) || ctl_leading(ctls[1]));
    lead = ctl_leading(ctls[0]) ? 0 : 1;
    other = 1 - lead;
    AWAIT(calls(S_HIB, lead) >= 1);
    AWAIT(ctl_synced(ctls[other]));
    testutil_pause_ms(500);
    cr_expect(!ctl_leading(ctls[other]));
    cr_expect_eq(calls(S_SBK, other) + calls(S_HIB, other), 0, "the standby ran a step");
    cr_expect_str_eq(holder(), lead ? "b" : "a");

    t0 = ktime_mono_ms();
    ctl_stop(ctls[lead]);
    cr_expect_str_neq(holder(), lead ? "b" : "a", "the Lease is released on stop");
    /* The standby takes over at once (released), not after the 60 s lease expired. */
    TESTUTIL_AWAIT(ctl_leading(ctls[other]), 30000);
    cr_expect_lt(ktime_mono_ms() - t0, 30000, "took %ld ms", (long)(ktime_mono_ms() - t0));
    AWAIT(calls(S_HIB, other) >= 1);
    cr_expect_str_eq(holder(), other ? "b" : "a");
}

struct runner {
    struct ctl *c;
    enum kerr rc;
    struct kerr_info err;
    pthread_t t;
};

static void *run_ctl(void *arg)
{
    struct runner *r = arg;

    r->rc = ctl_run(r->c, &r->err);
    return NULL;
}

/* Build controller i as start() does, without starting it. */
static void build(int i, const char *identity)
{
    const char *argv[] = { "warden-controller", "--metrics-bind-address=0",
                           "--health-probe-bind-address=0", "--leader-election-namespace=ns1" };
    struct ctl_opts o = { 0 };

    OK(ctl_config_load(&cfgs[i], 4, (char **)argv, &err));
    o.stubs = stubs;
    o.client = admin;
    o.identity = identity;
    o.lease_ms = lease_ms;
    o.renew_ms = lease_ms * 2 / 3;
    o.retry_ms = 200;
    o.no_servers = 1;
    OK(ctl_new(&cfgs[i], caps, &o, &ctls[i], &err));
}

Test(ctl_kubesim, sigterm_ends_run_and_releases_the_lease)
{
    struct runner r = { 0 };

    lease_ms = 60000; /* a renewal late under load must not lose the Lease first */
    create_etcd("ns1", "s1", NULL);
    build(0, "a");
    r.c = ctls[0];
    cr_assert_eq(pthread_create(&r.t, NULL, run_ctl, &r), 0);
    AWAIT(ctl_leading(ctls[0]));
    AWAIT(has("hib ns1/s1 0"));
    cr_expect_str_eq(holder(), "a");
    proc_request_shutdown(); /* what SIGTERM does */
    pthread_join(r.t, NULL);
    cr_expect_eq(r.rc, KERR_OK, "%s", r.err.msg);
    cr_expect_str_eq(holder(), "", "released: no holder");
    cr_expect(!ctl_leading(ctls[0]));
}

Test(ctl_kubesim, a_lost_lease_ends_run_with_an_error)
{
    struct runner r = { 0 };
    cJSON *l = NULL, *p;

    build(0, "a");
    r.c = ctls[0];
    cr_assert_eq(pthread_create(&r.t, NULL, run_ctl, &r), 0);
    AWAIT(ctl_leading(ctls[0]));
    /* Another replica takes the Lease behind this one's back (a split brain healed). */
    OK(k8s_get(admin, &LEASE, "ns1", "warden-controller-leader-election", NULL, &l, &err));
    p = jsonfix_parse("{\"spec\":{\"holderIdentity\":\"intruder\",\"leaseDurationSeconds\":60}}");
    OK(k8s_patch(admin, &LEASE, "ns1", "warden-controller-leader-election", K8S_PATCH_MERGE, p,
                 NULL, NULL, &err));
    cJSON_Delete(p);
    cJSON_Delete(l);
    pthread_join(r.t, NULL);
    cr_expect_eq(r.rc, KERR_CANCELLED);
    cr_expect_not_null(strstr(r.err.msg, "lost the leader-election Lease"), "%s", r.err.msg);
    cr_expect_str_eq(holder(), "intruder", "a replica that lost the Lease leaves it alone");
}

Test(ctl_kubesim, a_task_status_write_queues_the_etcd_not_the_task)
{
    static const char *const args[] = { "--leader-elect=false", NULL };
    cJSON *p;
    int otask, hib;

    create_etcd("ns1", "e3", NULL);
    create(&OPSTASK, "ns1",
           "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"EtcdOpsTask\","
           "\"metadata\":{\"name\":\"t3\"},\"spec\":{\"etcdName\":\"e3\","
           "\"config\":{\"onDemandSnapshot\":{\"type\":\"full\"}}}}");
    start(0, args, "a");
    AWAIT(has("otask ns1/t3 0"));
    AWAIT(has("hib ns1/e3 0"));
    testutil_pause_ms(200);
    otask = calls(S_OTASK, 0);
    hib = calls(S_HIB, 0);
    p = jsonfix_parse("{\"status\":{\"state\":\"InProgress\"}}");
    OK(k8s_patch(admin, &OPSTASK, "ns1", "t3", K8S_PATCH_MERGE, p,
                 &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cJSON_Delete(p);
    AWAIT(calls(S_HIB, 0) > hib);
    testutil_pause_ms(300);
    cr_expect_eq(calls(S_OTASK, 0), otask, "a status write re-ran the task");
    p = jsonfix_parse("{\"metadata\":{\"labels\":{\"x\":\"y\"}}}");
    OK(k8s_patch(admin, &OPSTASK, "ns1", "t3", K8S_PATCH_MERGE, p, NULL, NULL, &err));
    cJSON_Delete(p);
    AWAIT(calls(S_OTASK, 0) > otask);
}
