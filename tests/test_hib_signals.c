/*
 * Tests of controller/hib on an in-process kube-sim (tests/support/hibfix)
 * for the two signals and for living beside etcd-druid: spec.replicas: 0 as
 * Gardener sends it (the Etcd handed back to etcd-druid once at 0, woken by
 * spec.replicas above 0), etcd-druid's pre-sync task (waited for, never
 * raced, and used as the cycle's snapshot when it Succeeded after the cut, not
 * when created in the cut's own second),
 * an operator's suspension left alone, wake-up without a StatefulSet and
 * during the final snapshot, an Etcd already at 0, break-glass, and the API
 * requests one reconcile makes (an immutability task held by a finalizer).
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/cfg.h"
#include "common/hibguard.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/core/etcdspec.h"
#include "tests/support/hibfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimcli.h"
#include "tests/support/testutil.h"

#define STORE        "{\"container\":\"bkt\",\"prefix\":\"ns1/%s\",\"provider\":\"S3\"}"
#define PRESYNC      "presync-snapshot-hibernation-"
#define GARDENER_OP  "gardener.cloud/operation"
#define OPERATOR_VAL "operator-maintenance"

static const struct k8s_resource RES_STS = { "apps", "v1", "statefulsets", 1 };
static struct hibfix x;
static atomic_int requests;

static void setup(void)
{
    hibfix_start(&x);
}

static void teardown(void)
{
    hibfix_stop(&x);
}

TestSuite(hib_signals, .init = setup, .fini = teardown, .timeout = 60);

static void etcd_with_store(const char *name)
{
    char *store = buf_dupf(256, STORE, name);

    cJSON_Delete(hibfix_etcd(&x, name, store, NULL, 1));
    free(store);
}

/* The object exists (fetched and freed). */
static int exists(const struct k8s_resource *res, const char *name)
{
    cJSON *o = cfix_get(&x.f, res, name);
    int found = o != NULL;

    cJSON_Delete(o);
    return found;
}

/* Merge-patch the Etcd as Gardener or a user does. */
static void patch_etcd(const char *name, const char *json)
{
    cJSON *p = jsonfix_parse(json);
    struct kerr_info err;

    cr_assert_eq(
        k8s_patch(x.f.c, &ETCDSPEC_RES_ETCD, CFIX_NS, name, K8S_PATCH_MERGE, p, NULL, NULL, &err),
        KERR_OK, "%s", err.msg);
    cJSON_Delete(p);
}

static const char *annotation(const char *name, const char *key, char *out, size_t n)
{
    cJSON *e = hibfix_get_etcd(&x, name);
    const char *v = etcdspec_annotation(e, key);

    snprintf(out, n, "%s", v ? v : "<none>");
    cJSON_Delete(e);
    return out;
}

/* Tasks of the namespace whose name starts with prefix; *succeeded counts those Succeeded. */
static int tasks_named(const char *prefix, int *succeeded)
{
    cJSON *items = hibfix_tasks(&x);
    const cJSON *t;
    int n = 0;

    if (succeeded)
        *succeeded = 0;
    cJSON_ArrayForEach (t, items) {
        const char *tn = kjson_get_str(t, "metadata.name"), *st = kjson_get_str(t, "status.state");

        if (strncmp(tn, prefix, strlen(prefix)) != 0)
            continue;
        n++;
        if (succeeded && st && strcmp(st, "Succeeded") == 0)
            (*succeeded)++;
    }
    cJSON_Delete(items);
    return n;
}

static void on_done(void *arg, const char *method, int code, double seconds)
{
    (void)arg, (void)method, (void)code, (void)seconds;
    atomic_fetch_add(&requests, 1);
}

/* hib_step and the immutability helpers on a client that counts its requests. */
static struct k8s_client *counting_client(void)
{
    struct k8s_client_opts co = { .on_done = on_done };
    struct k8s_client *k = NULL;
    struct kerr_info err;
    struct cfg_rest rest;

    ksimcli_load_rest(x.f.h, &rest);
    cr_assert_eq(k8s_client_new(&rest, &co, &k, &err), KERR_OK, "%s", err.msg);
    cfg_rest_release(&rest);
    x.hib.client = k;
    x.f.x.client = k;
    return k;
}

static void plain_client(struct k8s_client *k)
{
    x.hib.client = x.f.c;
    x.f.x.client = x.f.c;
    k8s_client_free(k);
}

Test(hib_signals, gardeners_spec_replicas_zero_hibernates_hands_back_to_druid_and_wakes)
{
    char v[128], *before, *after;
    int spec, status, ok;

    etcd_with_store("g1");
    hibfix_annotate(&x, "g1", ETCDSPEC_ANN_RETENTION_TYPE, "bucket");
    before = hibfix_ports(&x, "g1-client");
    patch_etcd("g1", "{\"metadata\":{\"annotations\":{\"" GARDENER_OP "\":\"reconcile\"}},"
                     "\"spec\":{\"replicas\":0}}");
    cr_assert(hibfix_drive(&x, "g1", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "g1"));
    hibfix_sts(&x, "g1", &spec, &status);
    cr_assert(spec == 0 && status == 0, "sts %d/%d", spec, status);
    cr_assert_eq(tasks_named("g1-final-snapshot-", &ok), 1);
    cr_assert_eq(ok, 1);
    cr_assert_eq(atomic_load(&x.sc.finals), 1, "one final snapshot, before the scale-down");
    cr_assert(exists(&ETCDSPEC_RES_IMMTASK, "g1-extend-immutability"));
    /* at 0 etcd-druid reconciles spec.replicas: 0 itself: no suspension left (Gardener waits) */
    cr_assert_str_eq(annotation("g1", HIB_ANN_SUSPEND, v, sizeof(v)), "<none>");
    cr_assert_str_eq(annotation("g1", HIB_ANN_SUSPEND_ADDED, v, sizeof(v)), "<none>");
    cr_assert_neq(strcmp(annotation("g1", HIB_ANN_CUT_AT, v, sizeof(v)), "<none>"), 0);
    cr_assert_eq(hibfix_round(&x, "g1"), 0, "Hibernated stays without requeue");

    patch_etcd("g1", "{\"spec\":{\"replicas\":3}}");
    cr_assert(hibfix_drive(&x, "g1", "", 20000), "phase %s", hibfix_phase(&x, "g1"));
    hibfix_sts(&x, "g1", &spec, &status);
    cr_assert_eq(spec, 3);
    after = hibfix_ports(&x, "g1-client");
    cr_assert_str_eq(after, before);
    cr_assert_str_eq(annotation("g1", HIB_ANN_CUT_AT, v, sizeof(v)), "<none>");
    cr_assert_null(cfix_get(&x.f, &ETCDSPEC_RES_IMMTASK, "g1-extend-immutability"));
    free(after);
    free(before);
}

Test(hib_signals, spec_replicas_zero_on_a_new_etcd_at_zero_is_not_a_hibernation)
{
    cJSON *e;
    long rq;
    struct kerr_info err;

    etcd_with_store("g2");
    patch_etcd("g2", "{\"spec\":{\"replicas\":0}}");
    hibfix_sts(&x, "g2", &(int){ 0 }, &(int){ 0 });
    cJSON *p = jsonfix_parse("{\"spec\":{\"replicas\":0}}");
    cr_assert_eq(k8s_patch(x.f.c, &RES_STS, CFIX_NS, "g2", K8S_PATCH_MERGE, p,
                           &(struct k8s_write_opts){ .subresource = "scale" }, NULL, &err),
                 KERR_OK, "%s", err.msg);
    cJSON_Delete(p);
    e = hibfix_get_etcd(&x, "g2");
    cr_assert_eq(hib_step(&x.hib, e, &rq, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(rq, 0);
    cJSON_Delete(e);
    cr_assert_str_eq(hibfix_phase(&x, "g2"), "");
}

Test(hib_signals, druids_unfinished_pre_sync_task_is_never_raced)
{
    int ok;

    etcd_with_store("d1");
    x.hold_prefix = PRESYNC; /* etcd-druid's executor runs its own tasks */
    /* Gardener's write; etcd-druid's PreSync reacted before the controller */
    patch_etcd("d1", "{\"metadata\":{\"annotations\":{\"" GARDENER_OP "\":\"reconcile\"}},"
                     "\"spec\":{\"replicas\":0}}");
    hibfix_druid_task(&x, PRESYNC "0", "d1", "InProgress", 1);
    for (int i = 0; i < 10; i++)
        hibfix_round(&x, "d1");
    cr_assert_str_eq(hibfix_phase(&x, "d1"), "FinalSnapshot");
    cr_assert_eq(tasks_named("d1-final-snapshot-", NULL), 0,
                 "a task of ours now would make etcd-druid's executor reject one of the two");
    /* it failed (its sidecar call timed out): now ours may run */
    hibfix_druid_task(&x, PRESYNC "0", "d1", "Failed", 0);
    cr_assert(hibfix_drive(&x, "d1", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "d1"));
    cr_assert_eq(tasks_named("d1-final-snapshot-", &ok), 1);
    cr_assert_eq(ok, 1);
    cr_assert_eq(atomic_load(&x.sc.finals), 1);
}

Test(hib_signals, druids_pre_sync_snapshot_after_the_cut_is_the_cycles_snapshot)
{
    int spec, status;

    etcd_with_store("d2");
    x.hold_prefix = PRESYNC;
    x.hib.max_steps = 1;
    patch_etcd("d2", "{\"spec\":{\"replicas\":0}}");
    for (int i = 0; i < 20 && strcmp(hibfix_phase(&x, "d2"), "FinalSnapshot") != 0; i++)
        hibfix_round(&x, "d2");
    cr_assert_str_eq(hibfix_phase(&x, "d2"), "FinalSnapshot");
    /* created after the cut (creationTimestamp in a later second than traffic-cut-at) */
    hibfix_after_cut(&x, "d2");
    hibfix_druid_task(&x, PRESYNC "0", "d2", "InProgress", 1);
    x.hib.max_steps = 0;
    for (int i = 0; i < 5; i++)
        hibfix_round(&x, "d2");
    cr_assert_eq(tasks_named("d2-final-snapshot-", NULL), 0);
    hibfix_druid_task(&x, PRESYNC "0", "d2", "Succeeded", 0);
    cr_assert(hibfix_drive(&x, "d2", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "d2"));
    hibfix_sts(&x, "d2", &spec, &status);
    cr_assert(spec == 0 && status == 0, "sts %d/%d", spec, status);
    cr_assert_eq(tasks_named("d2-final-snapshot-", NULL), 0, "no second snapshot");
    cr_assert_eq(atomic_load(&x.sc.requests), 0);
}

/* metadata.creationTimestamp of task name, in seconds (-1 when missing). */
static time_t task_created(const char *name)
{
    cJSON *t = cfix_get(&x.f, &ETCDSPEC_RES_OPSTASK, name);
    struct timespec ts = { .tv_sec = -1 };

    if (t)
        ktime_parse(kjson_get_str(t, "metadata.creationTimestamp"), &ts, NULL);
    cJSON_Delete(t);
    return ts.tv_sec;
}

static time_t cut_of(const char *name)
{
    cJSON *e = hibfix_get_etcd(&x, name);
    time_t cut = -1;

    cr_assert_eq(hibguard_cut_at(e, &cut, NULL), KERR_OK, "no traffic cut on %s", name);
    cJSON_Delete(e);
    return cut;
}

/*
 * One clock, strictly after: a snapshot created in the second of the cut may predate the cut
 * and does not count, even Succeeded; the controller then takes its own, created in a later
 * second (it waits for the API server's clock to pass the cut), and only that one lets the
 * StatefulSet go to 0.
 */
Test(hib_signals, a_snapshot_of_the_cuts_own_second_does_not_count)
{
    char name[16] = "", task[64], ours[64];
    time_t cut = 0;
    int spec, status, ok;

    x.hold_prefix = PRESYNC;
    /* the pre-sync task must land in the cut's second: a few tries at most */
    for (int attempt = 0; attempt < 5; attempt++) {
        snprintf(name, sizeof(name), "c%d", attempt);
        snprintf(task, sizeof(task), PRESYNC "%s", name);
        etcd_with_store(name);
        x.hib.max_steps = 1;
        hibfix_annotate(&x, name, HIB_ANN_HIBERNATE, "true");
        for (int i = 0; i < 20 && strcmp(hibfix_phase(&x, name), "FinalSnapshot") != 0; i++)
            hibfix_round(&x, name);
        x.hib.max_steps = 0;
        cr_assert_str_eq(hibfix_phase(&x, name), "FinalSnapshot");
        hibfix_druid_task(&x, task, name, "Succeeded", 1);
        cut = cut_of(name);
        if (task_created(task) == cut)
            break;
        cr_assert_lt(attempt, 4, "the pre-sync task never landed in the second of the cut");
    }
    cr_assert(hibfix_drive(&x, name, "Hibernated", 20000), "phase %s", hibfix_phase(&x, name));
    snprintf(ours, sizeof(ours), "%s-final-snapshot-1", name);
    cr_assert_eq(tasks_named(ours, &ok), 1, "the controller took a snapshot of its own");
    cr_assert_eq(ok, 1);
    cr_assert_gt(task_created(ours), cut, "our task is created after the second of the cut");
    cr_assert_gt(atomic_load(&x.sc.finals), 0);
    hibfix_sts(&x, name, &spec, &status);
    cr_assert(spec == 0 && status == 0, "sts %d/%d", spec, status);
}

Test(hib_signals, an_operators_suspension_survives_hibernation_and_wake_up)
{
    char v[128];

    cJSON_Delete(hibfix_etcd(&x, "o1", NULL, NULL, 1));
    hibfix_annotate(&x, "o1", HIB_ANN_SUSPEND, OPERATOR_VAL);
    hibfix_annotate(&x, "o1", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_drive(&x, "o1", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "o1"));
    hibfix_annotate(&x, "o1", HIB_ANN_HIBERNATE, NULL);
    cr_assert(hibfix_drive(&x, "o1", "", 20000), "phase %s", hibfix_phase(&x, "o1"));
    cr_assert_str_eq(annotation("o1", HIB_ANN_SUSPEND, v, sizeof(v)), OPERATOR_VAL);
    /* the controller's own suspension is lifted */
    hibfix_annotate(&x, "o1", HIB_ANN_SUSPEND, NULL);
    hibfix_annotate(&x, "o1", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_drive(&x, "o1", "Hibernated", 20000));
    cr_assert_str_eq(annotation("o1", HIB_ANN_SUSPEND, v, sizeof(v)), "true");
    hibfix_annotate(&x, "o1", HIB_ANN_HIBERNATE, NULL);
    cr_assert(hibfix_drive(&x, "o1", "", 20000));
    cr_assert_str_eq(annotation("o1", HIB_ANN_SUSPEND, v, sizeof(v)), "<none>");
}

Test(hib_signals, wake_up_without_a_statefulset_restores_ports_and_lifts_the_suspension)
{
    char v[128], *before = NULL, *after;
    struct kerr_info err;

    cJSON_Delete(hibfix_etcd(&x, "w1", NULL, NULL, 1));
    before = hibfix_ports(&x, "w1-client");
    hibfix_annotate(&x, "w1", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_drive(&x, "w1", "Hibernated", 20000));
    cr_assert_eq(k8s_delete(x.f.c, &RES_STS, CFIX_NS, "w1", NULL, NULL, &err), KERR_OK, "%s",
                 err.msg);
    hibfix_annotate(&x, "w1", HIB_ANN_HIBERNATE, NULL);
    cr_assert(hibfix_drive(&x, "w1", "", 5000), "phase %s", hibfix_phase(&x, "w1"));
    after = hibfix_ports(&x, "w1-client");
    cr_assert_str_eq(after, before);
    cr_assert_str_eq(annotation("w1", HIB_ANN_SUSPEND, v, sizeof(v)), "<none>",
                     "etcd-druid must run again to create the StatefulSet");
    free(after);
    free(before);
}

Test(hib_signals, waking_up_during_the_final_snapshot_deletes_its_task)
{
    x.hold_prefix = "w2-final-snapshot-"; /* the snapshot is in flight until told */
    etcd_with_store("w2");
    hibfix_annotate(&x, "w2", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_await_task(&x, "w2", "w2-final-snapshot-", 30000));
    cr_assert_eq(tasks_named("w2-final-snapshot-", NULL), 1);
    cr_assert_str_eq(hibfix_phase(&x, "w2"), "FinalSnapshot");
    hibfix_annotate(&x, "w2", HIB_ANN_HIBERNATE, NULL);
    cr_assert(hibfix_drive(&x, "w2", "", 5000), "phase %s", hibfix_phase(&x, "w2"));
    cr_assert_eq(tasks_named("w2-final-snapshot-", NULL), 0,
                 "a final snapshot of the live cluster would follow");
    x.hold_prefix = NULL;
    hibfix_round(&x, "w2");
    cr_assert_eq(atomic_load(&x.sc.requests), 0);
}

Test(hib_signals, an_etcd_already_at_zero_hibernates_with_its_immutability_task)
{
    struct kerr_info err;
    cJSON *p = jsonfix_parse("{\"spec\":{\"replicas\":0}}");
    int spec = -1, status = -1;

    etcd_with_store("z1");
    hibfix_annotate(&x, "z1", ETCDSPEC_ANN_RETENTION_TYPE, "bucket");
    cr_assert_eq(k8s_patch(x.f.c, &RES_STS, CFIX_NS, "z1", K8S_PATCH_MERGE, p,
                           &(struct k8s_write_opts){ .subresource = "scale" }, NULL, &err),
                 KERR_OK, "%s", err.msg);
    cJSON_Delete(p);
    for (int i = 0; i < 1500 && status != 0; i++) { /* 30 s at most */
        hibfix_sts(&x, "z1", &spec, &status);
        ktime_sleep_ns(20000000L);
    }
    cr_assert_eq(status, 0);
    atomic_store(&x.sc.code, 503); /* no pod: no sidecar answers */
    hibfix_annotate(&x, "z1", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_drive(&x, "z1", "Hibernated", 5000), "phase %s", hibfix_phase(&x, "z1"));
    cr_assert_eq(tasks_named("z1-final-snapshot-", NULL), 0);
    cr_assert(exists(&ETCDSPEC_RES_IMMTASK, "z1-extend-immutability"));
}

Test(hib_signals, break_glass_scales_down_after_failed_snapshots_with_an_event)
{
    int spec, status;

    etcd_with_store("b1");
    atomic_store(&x.sc.code, 500);
    hibfix_annotate(&x, "b1", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_drive(&x, "b1", "Failed", 20000), "phase %s", hibfix_phase(&x, "b1"));
    hibfix_sts(&x, "b1", &spec, &status);
    cr_assert_eq(spec, 3, "never scaled down without a snapshot");
    hibfix_break_glass(&x, "b1", "store-credentials-revoked");
    cr_assert(hibfix_drive(&x, "b1", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "b1"));
    hibfix_sts(&x, "b1", &spec, &status);
    cr_assert_eq(spec, 0);
    TESTUTIL_AWAIT(hibfix_events(&x, "ScaleDownWithoutSnapshot", "Warning") > 0, 30000);
}

Test(hib_signals, requests_per_reconcile_are_bounded_and_a_terminating_task_is_waited_for)
{
    struct k8s_client *k = counting_client();
    cJSON *p, *e;
    struct kerr_info err;
    int most = 0, n, calls = 0;
    long rq = 0;

    etcd_with_store("r1");
    hibfix_annotate(&x, "r1", ETCDSPEC_ANN_RETENTION_TYPE, "bucket");
    hibfix_annotate(&x, "r1", HIB_ANN_HIBERNATE, "true");
    for (int i = 0; i < 400 && strcmp(hibfix_phase(&x, "r1"), "Hibernated") != 0; i++) {
        atomic_store(&requests, 0);
        hibfix_round(&x, "r1");
        n = atomic_load(&requests);
        most = n > most ? n : most;
        calls++;
        ktime_sleep_ns(20000000L);
    }
    cr_assert_str_eq(hibfix_phase(&x, "r1"), "Hibernated");
    cr_assert_leq(most, HIB_MAX_REQUESTS);
    fprintf(stderr, "hibernation: %d reconciles, at most %d API requests in one\n", calls, most);

    /* a finalizer holds the immutability task while it is deleted */
    p = jsonfix_parse("{\"metadata\":{\"finalizers\":[\"test.etcd-warden.io/hold\"]}}");
    cr_assert_eq(k8s_patch(x.f.c, &ETCDSPEC_RES_IMMTASK, CFIX_NS, "r1-extend-immutability",
                           K8S_PATCH_MERGE, p, NULL, NULL, &err),
                 KERR_OK, "%s", err.msg);
    cJSON_Delete(p);
    cr_assert_eq(k8s_delete(x.f.c, &ETCDSPEC_RES_IMMTASK, CFIX_NS, "r1-extend-immutability", NULL,
                            NULL, &err),
                 KERR_OK, "%s", err.msg);
    e = hibfix_get_etcd(&x, "r1");
    atomic_store(&requests, 0);
    cr_assert_eq(hib_step(&x.hib, e, &rq, &err), KERR_OK, "%s", err.msg);
    n = atomic_load(&requests);
    cJSON_Delete(e);
    fprintf(stderr, "terminating immutability task: %d API requests, requeue %ld ms\n", n, rq);
    cr_assert_leq(n, 2, "%d requests in one reconcile", n);
    cr_assert_geq(rq, 1000);
    plain_client(k);
}

/* Scale StatefulSet name to n as someone does while warden-controller is away. */
static void scale_sts(const char *name, int n)
{
    char body[64];
    cJSON *p;
    struct kerr_info err;

    snprintf(body, sizeof(body), "{\"spec\":{\"replicas\":%d}}", n);
    p = jsonfix_parse(body);
    cr_assert_eq(k8s_patch(x.f.c, &RES_STS, CFIX_NS, name, K8S_PATCH_MERGE, p, NULL, NULL, &err),
                 KERR_OK, "%s", err.msg);
    cJSON_Delete(p);
}

/*
 * issue 30: woken behind warden-controller's back (no round runs: it is down), written to and
 * scaled back to 0. The stamps of the sleep are kept while Hibernated and no longer describe
 * the StatefulSet (two generations past the scale to 0): the next round voids the cut, and
 * the sleep that follows records no final snapshot, so its claims stay protected.
 */
Test(hib_signals, a_wake_and_scale_down_behind_its_back_voids_the_sleep)
{
    char v[512];

    etcd_with_store("k1");
    hibfix_annotate(&x, "k1", HIB_ANN_HIBERNATE, "true");
    cr_assert(hibfix_drive(&x, "k1", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "k1"));
    cr_assert_str_neq(annotation("k1", HIB_ANN_CHECKED, v, sizeof(v)), "<none>",
                      "the StatefulSet checked is kept while Hibernated");
    cr_assert_str_neq(annotation("k1", HIB_ANN_STORE, v, sizeof(v)), "<none>");
    cr_assert_eq(hibfix_round(&x, "k1"), 0, "Hibernated stays without requeue");
    cr_assert_eq(hibfix_events(&x, "AwakeAgain", "Warning"), 0);

    scale_sts("k1", 3);
    scale_sts("k1", 0);
    hibfix_round(&x, "k1");
    cr_assert_str_neq(hibfix_phase(&x, "k1"), "Hibernated");
    /* Events are sent by the recorder's thread: wait for it, bounded. */
    TESTUTIL_AWAIT(hibfix_events(&x, "AwakeAgain", "Warning") > 0, 30000);
    cr_assert_str_eq(annotation("k1", HIB_ANN_STORE, v, sizeof(v)), "<none>");
    cr_assert_str_eq(annotation("k1", HIB_ANN_CHECKED, v, sizeof(v)), "<none>");
    cr_assert(hibfix_drive(&x, "k1", "Hibernated", 20000), "phase %s", hibfix_phase(&x, "k1"));
    cr_assert_str_eq(annotation("k1", HIB_ANN_STORE, v, sizeof(v)), "<none>",
                     "no final snapshot holds the writes of the wake");
}
