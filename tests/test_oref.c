/* oref: the ownerReferences computation (missing added, stale replaced, foreign kept and demoted,
 * duplicates folded), and the repair on kube-sim: a precondition failure read again and retried
 * without overwriting the concurrent write, components stripped by a Velero restore, stale
 * references, PVCs left alone, tasks from a cache, and the garbage collector afterwards. */
#include "controller/core/oref.h"
#include "controller/restore/orefpass.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "common/ktime.h"
#include "common/store.h"
#include "common/strlist.h"
#include "controller/core/ctl.h"
#include "controller/core/etcdspec.h"
#include "controller/core/imtjob.h"
#include "controller/core/rctx.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimcli.h"
#include "tests/support/testutil.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const char WANT[] = "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\","
                           "\"name\":\"main\",\"uid\":\"live\",\"controller\":true,"
                           "\"blockOwnerDeletion\":true}";

/* oref_compute on refs (JSON text or NULL): the uids and controller flags, and changed. */
static void compute(const char *refs, const char *want_out, int want_changed)
{
    cJSON *r = refs ? jsonfix_parse(refs) : NULL, *w = jsonfix_parse(WANT), *out = NULL;
    struct kerr_info err;
    char got[512] = "";
    size_t used = 0;
    const cJSON *o;
    int changed = -1;

    OK(oref_compute(r, w, &out, &changed, &err));
    cJSON_ArrayForEach (o, out)
        used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%s:%d", used ? "," : "",
                                 jsonfix_str(o, "uid"),
                                 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "controller")));
    cr_assert_str_eq(got, want_out, "refs %s", refs ? refs : "null");
    cr_assert_eq(changed, want_changed, "refs %s", refs ? refs : "null");
    cJSON_Delete(out);
    cJSON_Delete(w);
    cJSON_Delete(r);
}

Test(oref, compute_rules)
{
    /* missing: added (Velero strips them) */
    compute(NULL, "live:1", 1);
    compute("[]", "live:1", 1);
    /* already right: unchanged */
    compute("[{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\","
            "\"name\":\"main\",\"uid\":\"live\",\"controller\":true,"
            "\"blockOwnerDeletion\":true}]",
            "live:1", 0);
    /* stale: an Etcd of that name with another uid, replaced in place */
    compute("[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"a\",\"uid\":\"f1\"},"
            "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\",\"name\":\"main\","
            "\"uid\":\"old\",\"controller\":true,\"blockOwnerDeletion\":true}]",
            "f1:0,live:1", 1);
    /* another version of the same group is the same owner */
    compute("[{\"apiVersion\":\"druid.gardener.cloud/v1beta1\",\"kind\":\"Etcd\",\"name\":\"main\","
            "\"uid\":\"old\"}]",
            "live:1", 1);
    /* an Etcd of another name is foreign: kept; a foreign controller loses the flag */
    compute("[{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\","
            "\"name\":\"other\",\"uid\":\"o\",\"controller\":true}]",
            "o:0,live:1", 1);
    /* live uid without controller: fixed; duplicates folded into one */
    compute(
        "[{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\",\"name\":\"main\","
        "\"uid\":\"live\"},{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\","
        "\"name\":\"main\",\"uid\":\"old\",\"controller\":true}]",
        "live:1", 1);
    /* another kind named main in another group is foreign */
    compute("[{\"apiVersion\":\"other.io/v1\",\"kind\":\"Etcd\",\"name\":\"main\",\"uid\":\"x\"}]",
            "x:0,live:1", 1);
}

Test(oref, compute_rejects_a_reference_without_uid)
{
    cJSON *w = jsonfix_parse("{\"kind\":\"Etcd\",\"name\":\"main\"}"), *out = NULL;
    struct kerr_info err;
    int changed = 0;

    cr_assert_eq(oref_compute(NULL, w, &out, &changed, &err), KERR_INVAL);
    cr_assert_null(out);
    cJSON_Delete(w);
}

static struct cfix fx;

static void setup(void)
{
    cfix_start(&fx, NULL);
}

static void teardown(void)
{
    cfix_stop(&fx);
}

TestSuite(oref_kubesim, .init = setup, .fini = teardown, .timeout = 60);

static const struct k8s_resource CM = { "", "v1", "configmaps", 1 };
static const struct k8s_resource PVC = { "", "v1", "persistentvolumeclaims", 1 };

Test(oref_kubesim, conflict_is_read_again_never_overwritten)
{
    cJSON *e = cfix_etcd("main", NULL, NULL), *live, *want = NULL, *cm, *stale, *now;
    struct oref_stats st = { 0, 0, 0 };
    struct kerr_info err;
    char owners[256], expect[256];

    live = cfix_create(&fx, &ETCDSPEC_RES_ETCD, e);
    OK(etcdspec_owner_ref(live, &want, &err));
    cm = jsonfix_parse("{\"metadata\":{\"name\":\"main-config\",\"labels\":{\"a\":\"1\"}}}");
    stale = cfix_create(&fx, &CM, cm);
    /* a concurrent writer: a label and a foreign owner, after the repair read the object */
    cJSON_Delete(cm);
    cm = jsonfix_parse(
        "{\"metadata\":{\"labels\":{\"b\":\"2\"},\"ownerReferences\":[{\"apiVersion\":"
        "\"v1\",\"kind\":\"ConfigMap\",\"name\":\"x\",\"uid\":\"foreign\","
        "\"controller\":true}]}}");
    OK(k8s_patch(fx.c, &CM, CFIX_NS, "main-config", K8S_PATCH_MERGE, cm, NULL, NULL, &err));
    OK(oref_repair(fx.c, &CM, CFIX_NS, "main-config", stale, want, &st, &err));
    cr_assert_eq(st.conflicts, 1, "the stale read failed the resourceVersion test");
    cr_assert_eq(st.repaired, 1);
    now = cfix_get(&fx, &CM, "main-config");
    cr_assert_str_eq(jsonfix_str(now, "metadata.labels.b"), "2", "the concurrent write survived");
    snprintf(expect, sizeof(expect), "foreign:0,%s:1", jsonfix_str(live, "metadata.uid"));
    cr_assert_str_eq(cfix_owners(&fx, &CM, "main-config", owners, sizeof(owners)), expect);
    /* the same stale copy again, without an error out-parameter: read again, nothing to do */
    OK(oref_repair(fx.c, &CM, CFIX_NS, "main-config", stale, want, &st, NULL));
    cr_assert_eq(st.conflicts, 2);
    cr_assert_eq(st.repaired, 1, "already right once read again");
    cJSON_Delete(now);
    cJSON_Delete(stale);
    cJSON_Delete(cm);
    cJSON_Delete(want);
    cJSON_Delete(live);
    cJSON_Delete(e);
}

/* The Etcd "main" created; OWNED by the caller. */
static cJSON *live_etcd(void)
{
    cJSON *e = cfix_etcd("main", NULL, NULL), *live = cfix_create(&fx, &ETCDSPEC_RES_ETCD, e);

    cJSON_Delete(e);
    return live;
}

/* Every component of live has exactly the controller reference to live's uid. */
static void assert_owned(const cJSON *live)
{
    cJSON *list = NULL;
    const cJSON *c;
    char owners[256], expect[128];

    snprintf(expect, sizeof(expect), "%s:1", jsonfix_str(live, "metadata.uid"));
    cr_assert_eq(etcdspec_components(live, &list, NULL), KERR_OK);
    cJSON_ArrayForEach (c, list)
        cr_assert_str_eq(cfix_owners(&fx, etcdspec_kind_resource(jsonfix_str(c, "kind")),
                                     jsonfix_str(c, "name"), owners, sizeof(owners)),
                         expect, "%s %s", jsonfix_str(c, "kind"), jsonfix_str(c, "name"));
    cJSON_Delete(list);
}

static const char PVC_JSON[] =
    "{\"metadata\":{\"name\":\"main-main-0\",\"labels\":{\"app.kubernetes.io/managed-by\":"
    "\"etcd-druid\",\"app.kubernetes.io/part-of\":\"main\"}},\"spec\":{\"accessModes\":"
    "[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}}}";

Test(oref_kubesim, velero_stripped_components_owned_again_pvc_left_alone)
{
    cJSON *live = live_etcd(), *pvc = jsonfix_parse(PVC_JSON), *out, *sts1, *sts2;
    struct oref_stats st = { 0, 0, 0 };
    struct kerr_info err;
    char owners[64];

    cr_assert_eq(cfix_components(&fx, live, NULL), 13);
    cJSON_Delete(cfix_create(&fx, &PVC, pvc));
    OK(orefpass_run(&fx.x, live, &st, &err));
    cr_assert_eq(st.repaired, 13, "repaired %d", st.repaired);
    cr_assert_eq(st.conflicts, 0);
    assert_owned(live);
    cr_assert_str_eq(cfix_owners(&fx, &PVC, "main-main-0", owners, sizeof(owners)), "",
                     "a PVC never gets the Etcd as owner");
    /* a second pass writes nothing */
    sts1 = cfix_get(&fx, etcdspec_kind_resource("StatefulSet"), "main");
    memset(&st, 0, sizeof(st));
    OK(orefpass_run(&fx.x, live, &st, &err));
    cr_assert_eq(st.repaired, 0);
    sts2 = cfix_get(&fx, etcdspec_kind_resource("StatefulSet"), "main");
    cr_assert_str_eq(jsonfix_str(sts1, "metadata.resourceVersion"),
                     jsonfix_str(sts2, "metadata.resourceVersion"));
    out = NULL;
    cJSON_Delete(out);
    cJSON_Delete(sts1);
    cJSON_Delete(sts2);
    cJSON_Delete(pvc);
    cJSON_Delete(live);
}

Test(oref_kubesim, stale_references_replaced)
{
    cJSON *live = live_etcd();
    struct oref_stats st = { 0, 0, 0 };
    struct kerr_info err;

    cr_assert_eq(cfix_components(&fx, live, "old-uid"), 13);
    OK(orefpass_run(&fx.x, live, &st, &err));
    cr_assert_eq(st.repaired, 13);
    assert_owned(live);
    cJSON_Delete(live);
}

static enum kerr part_of(void *ctx, const cJSON *obj, struct strlist *values)
{
    (void)ctx;
    (void)obj;
    (void)values;
    return KERR_OK;
}

Test(oref_kubesim, tasks_of_the_cache_owned_too)
{
    cJSON *live = live_etcd(), *task = NULL, *stored, *other;
    struct store *s = NULL;
    struct oref_stats st = { 0, 0, 0 };
    struct kerr_info err;
    char owners[128], expect[128];

    OK(imtjob_task_build(live, &task, &err));
    (void)kjson_delete(task, "metadata.ownerReferences");
    stored = cfix_create(&fx, &ETCDSPEC_RES_IMMTASK, task);
    other = cJSON_Duplicate(stored, 1);
    OK(kjson_set_str(other, "metadata.name", "someone-elses", &err));
    OK(kjson_set_str(other, "spec.etcdName", "other", &err));
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_IMMTASK, other));
    OK(store_new(NULL, &s, &err));
    OK(store_add_index(s, "unused", part_of, NULL, &err));
    OK(store_put(s, cJSON_Duplicate(stored, 1), NULL, NULL, &err));
    OK(store_put(s, cJSON_Duplicate(other, 1), NULL, NULL, &err));
    fx.x.immtasks = s;
    OK(orefpass_run(&fx.x, live, &st, &err));
    cr_assert_eq(st.repaired, 1, "the task of main only");
    snprintf(expect, sizeof(expect), "%s:1", jsonfix_str(live, "metadata.uid"));
    cr_assert_str_eq(
        cfix_owners(&fx, &ETCDSPEC_RES_IMMTASK, "main-extend-immutability", owners, sizeof(owners)),
        expect);
    cr_assert_str_eq(
        cfix_owners(&fx, &ETCDSPEC_RES_IMMTASK, "someone-elses", owners, sizeof(owners)), "");
    fx.x.immtasks = NULL;
    store_free(s);
    cJSON_Delete(other);
    cJSON_Delete(stored);
    cJSON_Delete(task);
    cJSON_Delete(live);
}

/* The PATCHes a client made: when each ended and how long it took (the client's own clock). */
struct patches {
    pthread_mutex_t mu;
    int all; /* every request */
    int n;
    int64_t end_ns[64];
    double secs[64];
};

static void on_done(void *arg, const char *method, int code, double seconds)
{
    struct patches *p = arg;

    (void)code;
    pthread_mutex_lock(&p->mu);
    p->all++;
    if (strcmp(method, "PATCH") == 0 && p->n < 64) {
        p->end_ns[p->n] = ktime_mono_ns();
        p->secs[p->n++] = seconds;
    }
    pthread_mutex_unlock(&p->mu);
}

/* The most PATCHes in flight at one moment: at each start, the intervals that cover it. */
static int most_in_flight(const struct patches *p)
{
    int best = 0, i, j, k;

    for (i = 0; i < p->n; i++) {
        int64_t t = p->end_ns[i] - (int64_t)(p->secs[i] * 1e9);

        for (j = 0, k = 0; j < p->n; j++)
            k += p->end_ns[j] - (int64_t)(p->secs[j] * 1e9) <= t && t < p->end_ns[j];
        best = k > best ? k : best;
    }
    return best;
}

/*
 * A start after a restore has every component of every Etcd to repair: one pass has several
 * PATCHes in flight (the API server answers each 300 ms late here, so that they overlap if
 * they are sent together), never more than OREFPASS_IN_FLIGHT, and they count as the
 * calling thread's requests (the reconcile's budget).
 */
Test(oref_kubesim, components_repaired_several_at_a_time)
{
    const char *slow = "{\"latencyMs\":300,\"match\":\"PATCH /\"}", *reset = "{\"reset\":true}";
    struct patches p = { .mu = PTHREAD_MUTEX_INITIALIZER };
    struct k8s_client_opts co = { .on_done = on_done, .on_done_arg = &p };
    cJSON *live = live_etcd();
    struct oref_stats st = { 0, 0, 0 };
    struct k8s_client *k = NULL;
    struct kerr_info err;
    struct cfg_rest rest;
    struct rctx x = fx.x;
    unsigned long before;
    int most;

    cr_assert_eq(cfix_components(&fx, live, NULL), 13);
    ksimcli_load_rest(fx.h, &rest);
    OK(k8s_client_new(&rest, &co, &k, &err));
    cfg_rest_release(&rest);
    x.client = k;
    OK(k8s_request(fx.c, "POST", "/kube-sim/faults", "application/json", slow, strlen(slow), NULL,
                   &err));
    before = k8s_thread_requests();
    OK(orefpass_run(&x, live, &st, &err));
    cr_assert_eq(k8s_thread_requests() - before, (unsigned long)p.all,
                 "every request counted on this thread: %lu of %d", k8s_thread_requests() - before,
                 p.all);
    OK(k8s_request(fx.c, "POST", "/kube-sim/faults", "application/json", reset, strlen(reset), NULL,
                   &err));
    cr_assert_eq(st.repaired, 13, "repaired %d", st.repaired);
    cr_assert_eq(p.n, 13, "%d PATCHes", p.n);
    assert_owned(live);
    most = most_in_flight(&p);
    cr_assert(most >= 2 && most <= OREFPASS_IN_FLIGHT, "%d PATCHes in flight at most", most);
    k8s_client_free(k);
    cJSON_Delete(live);
}

/*
 * The repairs hold the rctx's repair slots: with 3 slots (the controller has
 * CTL_REPAIRS_IN_FLIGHT for all its workers' passes) a pass of 13 components has at most 3
 * PATCHes in flight, though it would run OREFPASS_IN_FLIGHT at once, and every component is
 * still repaired.
 */
Test(oref_kubesim, repairs_hold_the_shared_slots)
{
    const char *slow = "{\"latencyMs\":300,\"match\":\"PATCH /\"}", *reset = "{\"reset\":true}";
    struct patches p = { .mu = PTHREAD_MUTEX_INITIALIZER };
    struct k8s_client_opts co = { .on_done = on_done, .on_done_arg = &p };
    cJSON *live = live_etcd();
    struct oref_stats st = { 0, 0, 0 };
    struct k8s_client *k = NULL;
    struct kerr_info err;
    struct cfg_rest rest;
    struct rctx x = fx.x;
    sem_t slots;
    int most, free_slots;

    cr_assert_eq(sem_init(&slots, 0, 3), 0);
    cr_assert_eq(cfix_components(&fx, live, NULL), 13);
    ksimcli_load_rest(fx.h, &rest);
    OK(k8s_client_new(&rest, &co, &k, &err));
    cfg_rest_release(&rest);
    x.client = k;
    x.repair_slots = &slots;
    OK(k8s_request(fx.c, "POST", "/kube-sim/faults", "application/json", slow, strlen(slow), NULL,
                   &err));
    OK(orefpass_run(&x, live, &st, &err));
    OK(k8s_request(fx.c, "POST", "/kube-sim/faults", "application/json", reset, strlen(reset), NULL,
                   &err));
    cr_assert_eq(st.repaired, 13, "repaired %d", st.repaired);
    assert_owned(live);
    most = most_in_flight(&p);
    cr_assert(most >= 2 && most <= 3, "%d PATCHes in flight at most, 3 slots", most);
    cr_assert_eq(sem_getvalue(&slots, &free_slots), 0);
    cr_assert_eq(free_slots, 3, "every slot given back");
    sem_destroy(&slots);
    k8s_client_free(k);
    cJSON_Delete(live);
}

Test(oref_kubesim, repairs_per_second)
{
    cJSON *live = live_etcd(), *cm;
    struct oref_stats st = { 0, 0, 0 };
    struct kerr_info err;
    char text[512];
    int64_t t0;
    double secs, ref;
    int i, n = 300;

    for (i = 0; i < n; i++) {
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"name\":\"cm-%d\",\"labels\":{\"app.kubernetes.io/managed-by\":"
                 "\"etcd-druid\",\"app.kubernetes.io/part-of\":\"main\"}}}",
                 i);
        cm = jsonfix_parse(text);
        cJSON_Delete(cfix_create(&fx, &CM, cm));
        cJSON_Delete(cm);
    }
    t0 = ktime_mono_ns();
    OK(orefpass_run(&fx.x, live, &st, &err));
    secs = (double)(ktime_mono_ns() - t0) / 1e9;
    cr_assert_eq(st.repaired, n);
    /* the reference, same run: one plain merge patch per object (no list, no precondition) */
    cm = jsonfix_parse("{\"metadata\":{\"labels\":{\"touched\":\"1\"}}}");
    t0 = ktime_mono_ns();
    for (i = 0; i < n; i++) {
        snprintf(text, sizeof(text), "cm-%d", i);
        OK(k8s_patch(fx.c, &CM, CFIX_NS, text, K8S_PATCH_MERGE, cm, NULL, NULL, &err));
    }
    ref = (double)(ktime_mono_ns() - t0) / 1e9;
    cJSON_Delete(cm);
    printf("oref: %d repairs in %.3f s = %.0f repairs/s; %d plain merge patches in %.3f s = "
           "%.0f/s; repair/patch rate ratio %.2f\n",
           n, secs, n / secs, n, ref, n / ref, ref / secs);
    cJSON_Delete(live);
}

static void gc_setup(void)
{
    struct ksim_harness_opts o = { 0 };

    o.gc_interval_ms = 50;
    o.sts_delay_ms = -1;
    cfix_start(&fx, &o);
}

Test(oref_gc, repaired_components_go_with_their_etcd_pvcs_stay, .init = gc_setup, .fini = teardown,
     .timeout = 60)
{
    cJSON *live = live_etcd(), *pvc = jsonfix_parse(PVC_JSON), *gone, *kept;
    struct kerr_info err;

    cr_assert_eq(cfix_components(&fx, live, NULL), 13);
    cJSON_Delete(cfix_create(&fx, &PVC, pvc));
    OK(orefpass_run(&fx.x, live, NULL, &err));
    OK(k8s_delete(fx.c, &ETCDSPEC_RES_ETCD, CFIX_NS, "main", NULL, NULL, &err));
    gone = NULL;
    TESTUTIL_AWAIT(!(gone = cfix_get(&fx, etcdspec_kind_resource("ConfigMap"), "main-config")) ||
                       (cJSON_Delete(gone), 0),
                   10000);
    cr_assert_null(gone, "the garbage collector deleted the repaired component");
    /* the collector deletes the dependents one at a time: wait for the StatefulSet too */
    TESTUTIL_AWAIT(!(gone = cfix_get(&fx, etcdspec_kind_resource("StatefulSet"), "main")) ||
                       (cJSON_Delete(gone), 0),
                   10000);
    cr_assert_null(gone, "the garbage collector deleted the repaired StatefulSet");
    kept = cfix_get(&fx, &PVC, "main-main-0");
    cr_assert_not_null(kept, "the PVC (the data) stays");
    cJSON_Delete(kept);
    cJSON_Delete(pvc);
    cJSON_Delete(live);
}

/* An EtcdOpsTask for main named name with labels (JSON text), created and put in cache s. */
static void ops_task(struct store *s, const char *name, const char *labels)
{
    char text[512];
    cJSON *t, *stored;
    struct kerr_info err;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"EtcdOpsTask\","
             "\"metadata\":{\"name\":\"%s\",\"labels\":%s},\"spec\":{\"etcdName\":\"main\","
             "\"config\":{\"onDemandSnapshot\":{\"type\":\"full\"}}}}",
             name, labels);
    t = jsonfix_parse(text);
    stored = cfix_create(&fx, &ETCDSPEC_RES_OPSTASK, t);
    OK(store_put(s, stored, NULL, NULL, &err));
    cJSON_Delete(t);
}

Test(oref_kubesim, ops_tasks_of_hibernation_owned_a_users_left_alone)
{
    cJSON *live = live_etcd();
    struct store *s = NULL;
    struct oref_stats st = { 0, 0, 0 };
    struct kerr_info err;
    char owners[128], expect[128];

    OK(store_new(NULL, &s, &err));
    ops_task(s, "final-1", "{\"etcd-warden.io/final-snapshot-of\":\"main\"}");
    ops_task(s, "users-own", "{}");
    fx.x.opstasks = s;
    OK(orefpass_run(&fx.x, live, &st, &err));
    cr_assert_eq(st.repaired, 1);
    snprintf(expect, sizeof(expect), "%s:1", jsonfix_str(live, "metadata.uid"));
    cr_assert_str_eq(cfix_owners(&fx, &ETCDSPEC_RES_OPSTASK, "final-1", owners, sizeof(owners)),
                     expect);
    cr_assert_str_eq(cfix_owners(&fx, &ETCDSPEC_RES_OPSTASK, "users-own", owners, sizeof(owners)),
                     "");
    fx.x.opstasks = NULL;
    store_free(s);
    cJSON_Delete(live);
}

/* An index "etcd-name" as the controller's task caches have, holding only the tasks labelled
 * in-index (so a test can tell a read through the index from a scan of the whole cache). */
static enum kerr etcd_name_if_labelled(void *ctx, const cJSON *obj, struct strlist *values)
{
    char v[KOBJ_KEY_MAX];

    (void)ctx;
    if (!kjson_get_str(obj, "metadata.labels[in-index]"))
        return KERR_OK;
    snprintf(v, sizeof(v), "%s/%s", kjson_get_str(obj, "metadata.namespace"),
             kjson_get_str(obj, "spec.etcdName"));
    return strlist_add(values, v);
}

Test(oref_kubesim, tasks_are_read_through_the_caches_etcd_name_index)
{
    cJSON *live = live_etcd();
    struct store *s = NULL;
    struct oref_stats st = { 0, 0, 0 };
    struct kerr_info err;
    char owners[128], expect[128];

    OK(store_new(NULL, &s, &err));
    OK(store_add_index(s, CTL_INDEX_ETCD_NAME, etcd_name_if_labelled, NULL, &err));
    ops_task(s, "final-1", "{\"etcd-warden.io/final-snapshot-of\":\"main\",\"in-index\":\"y\"}");
    ops_task(s, "final-2", "{\"etcd-warden.io/final-snapshot-of\":\"main\"}");
    fx.x.opstasks = s;
    OK(orefpass_run(&fx.x, live, &st, &err));
    cr_assert_eq(st.repaired, 1, "only the task the index names is read");
    snprintf(expect, sizeof(expect), "%s:1", jsonfix_str(live, "metadata.uid"));
    cr_assert_str_eq(cfix_owners(&fx, &ETCDSPEC_RES_OPSTASK, "final-1", owners, sizeof(owners)),
                     expect);
    cr_assert_str_eq(cfix_owners(&fx, &ETCDSPEC_RES_OPSTASK, "final-2", owners, sizeof(owners)),
                     "");
    fx.x.opstasks = NULL;
    store_free(s);
    cJSON_Delete(live);
}
