/*
 * Tests of controller/hib reading from caches (hib_env.cached, cached_tasks)
 * on an in-process kube-sim (tests/support/hibfix): a whole hibernation and
 * wake-up within the request budget of a call, a cache that claims a
 * snapshot the API does not hold (never a scale-down), and a stale cached
 * Service (its write conflicts, the Service is read again, the cut goes on).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "controller/core/etcdspec.h"
#include "controller/hibernation/hib.h"
#include "tests/support/hibfix.h"
#include "tests/support/jsonfix.h"

#define STORE "{\"container\":\"bkt\",\"prefix\":\"ns1/%s\",\"provider\":\"S3\"}"

static const struct k8s_resource RES_SVC = { "", "v1", "services", 1 };
static const struct k8s_resource RES_STS = { "apps", "v1", "statefulsets", 1 };
static struct hibfix x;

/*
 * The test's cache: live (read through the admin client when asked), or frozen copies.
 * reads counts the admin client's requests, which are not the step's.
 */
static struct {
    int live;
    cJSON *svc, *sts, *tasks; /* frozen: OWNED; NULL: read live */
    unsigned long reads;
} cache;

static cJSON *cached(void *arg, enum hib_cached what, const char *ns, const char *name)
{
    const struct k8s_resource *res = what == HIB_CACHED_SERVICE       ? &RES_SVC
                                     : what == HIB_CACHED_STATEFULSET ? &RES_STS
                                                                      : &ETCDSPEC_RES_IMMTASK;
    cJSON *o = NULL;

    (void)arg;
    if (what == HIB_CACHED_SERVICE && cache.svc)
        return cJSON_Duplicate(cache.svc, 1);
    if (what == HIB_CACHED_STATEFULSET && cache.sts)
        return cJSON_Duplicate(cache.sts, 1);
    if (!cache.live)
        return NULL;
    cache.reads++;
    return k8s_get(x.f.c, res, ns, name, NULL, &o, NULL) == KERR_OK ? o : NULL;
}

static cJSON *cached_tasks(void *arg, const char *ns, const char *etcd)
{
    cJSON *all, *out = cJSON_CreateArray();
    const cJSON *t;

    (void)arg, (void)ns;
    if (cache.tasks) {
        cJSON_Delete(out);
        return cJSON_Duplicate(cache.tasks, 1);
    }
    cache.reads++;
    all = hibfix_tasks(&x);
    cJSON_ArrayForEach (t, all) {
        const char *en = kjson_get_str(t, "spec.etcdName");
        if (en && strcmp(en, etcd) == 0)
            cJSON_AddItemToArray(out, cJSON_Duplicate(t, 1));
    }
    cJSON_Delete(all);
    return out;
}

static void setup(void)
{
    memset(&cache, 0, sizeof(cache));
    cache.live = 1;
    hibfix_start(&x);
    x.hib.cached = cached;
    x.hib.cached_tasks = cached_tasks;
}

static void teardown(void)
{
    cJSON_Delete(cache.svc);
    cJSON_Delete(cache.sts);
    cJSON_Delete(cache.tasks);
    hibfix_stop(&x);
}

TestSuite(hib_cache, .init = setup, .fini = teardown, .timeout = 60);

static void etcd_with_store(const char *name)
{
    char *store = buf_dupf(256, STORE, name);

    cJSON_Delete(hibfix_etcd(&x, name, store, NULL, 1));
    free(store);
}

/* One hib_step on name (the dispatch's fresh Etcd), its own API requests into *used. */
static long step(const char *name, int *used)
{
    cJSON *e = hibfix_get_etcd(&x, name);
    unsigned long r0 = k8s_thread_requests(), c0 = cache.reads;
    struct kerr_info err;
    long rq = 0;

    cr_assert_eq(hib_step(&x.hib, e, &rq, &err), KERR_OK, "%s", err.msg);
    *used = (int)(k8s_thread_requests() - r0 - (cache.reads - c0));
    cJSON_Delete(e);
    return rq;
}

Test(hib_cache, a_whole_cycle_from_the_caches_stays_within_the_budget_of_a_call)
{
    char *before = NULL, *after = NULL;
    int used, most = 0, calls = 0, spec, status;

    etcd_with_store("c1");
    before = hibfix_ports(&x, "c1-client");
    hibfix_annotate(&x, "c1", HIB_ANN_HIBERNATE, "true");
    for (int i = 0; i < 1500 && strcmp(hibfix_phase(&x, "c1"), "Hibernated") != 0; i++) {
        step("c1", &used);
        most = used > most ? used : most;
        calls++;
        hibfix_round(&x, "c1"); /* the task executor's part (and a cache-less step) */
        ktime_sleep_ns(20000000L);
    }
    cr_assert_str_eq(hibfix_phase(&x, "c1"), "Hibernated");
    hibfix_sts(&x, "c1", &spec, &status);
    cr_assert(spec == 0 && status == 0, "sts %d/%d", spec, status);
    cr_assert_eq(atomic_load(&x.sc.finals), 1, "one final snapshot, before the scale-down");
    cr_assert_leq(most, HIB_MAX_REQUESTS, "%d requests in one call", most);
    fprintf(stderr, "hibernation from caches: %d calls, at most %d API requests in one\n", calls,
            most);

    hibfix_annotate(&x, "c1", HIB_ANN_HIBERNATE, NULL);
    most = 0;
    for (int i = 0; i < 1500 && strcmp(hibfix_phase(&x, "c1"), "") != 0; i++) {
        step("c1", &used);
        most = used > most ? used : most;
        ktime_sleep_ns(20000000L);
    }
    cr_assert_str_eq(hibfix_phase(&x, "c1"), "");
    cr_assert_leq(most, HIB_MAX_REQUESTS, "%d requests in one call", most);
    after = hibfix_ports(&x, "c1-client");
    cr_assert_str_eq(after, before, "the ports restored exactly");
    free(before);
    free(after);
}

Test(hib_cache, a_snapshot_only_the_cache_holds_never_scales_down)
{
    char stamp[KTIME_LEN + 1], text[1024];
    int used, spec, status;

    etcd_with_store("c2");
    x.hold_prefix = "c2-final-snapshot-"; /* the real attempt never finishes */
    hibfix_annotate(&x, "c2", HIB_ANN_HIBERNATE, "true");
    for (int i = 0; i < 1500 && strcmp(hibfix_phase(&x, "c2"), "FinalSnapshot") != 0; i++) {
        step("c2", &used);
        ktime_sleep_ns(20000000L);
    }
    cr_assert_str_eq(hibfix_phase(&x, "c2"), "FinalSnapshot");
    hibfix_after_cut(&x, "c2");
    /* the cache shows a full snapshot of c2 that Succeeded after the cut; the API has none */
    cr_assert_eq(ktime_format(time(NULL), stamp), KERR_OK);
    snprintf(text, sizeof(text),
             "[{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"EtcdOpsTask\","
             "\"metadata\":{\"name\":\"ghost\",\"namespace\":\"%s\",\"creationTimestamp\":\"%s\"},"
             "\"spec\":{\"etcdName\":\"c2\",\"config\":{\"onDemandSnapshot\":{\"type\":\"full\"}}},"
             "\"status\":{\"state\":\"Succeeded\"}}]",
             CFIX_NS, stamp);
    cache.tasks = jsonfix_parse(text);
    for (int i = 0; i < 10; i++)
        step("c2", &used);
    hibfix_sts(&x, "c2", &spec, &status);
    cr_assert_eq(spec, 3, "scaled on a snapshot only the cache held");
    cr_assert_str_eq(hibfix_phase(&x, "c2"), "FinalSnapshot");
}

Test(hib_cache, a_stale_cached_service_is_read_again_and_cut)
{
    char *ports;
    cJSON *p;
    int used;

    etcd_with_store("c3");
    cache.svc = cfix_get(&x.f, &RES_SVC, "c3-client"); /* frozen now */
    cr_assert_not_null(cache.svc);
    p = jsonfix_parse("{\"metadata\":{\"labels\":{\"touched\":\"yes\"}}}");
    cr_assert_eq(
        k8s_patch(x.f.c, &RES_SVC, CFIX_NS, "c3-client", K8S_PATCH_MERGE, p, NULL, NULL, NULL),
        KERR_OK);
    cJSON_Delete(p);
    hibfix_annotate(&x, "c3", HIB_ANN_HIBERNATE, "true");
    for (int i = 0; i < 5; i++)
        step("c3", &used);
    ports = hibfix_ports(&x, "c3-client");
    cr_assert(!strstr(ports, "\"client\"") && !strstr(ports, "\"server\""), "%s", ports);
    cr_assert(strstr(ports, "\"backuprestore\""), "%s", ports);
    free(ports);
    p = cfix_get(&x.f, &RES_SVC, "c3-client");
    cr_assert_str_eq(kjson_get_str(p, "metadata.labels.touched"), "yes",
                     "the patch keeps what it does not change");
    cJSON_Delete(p);
}

Test(hib_cache, a_cache_that_missed_the_scale_down_does_not_end_a_wake_up_at_zero)
{
    int used, spec, status;

    etcd_with_store("c4");
    cache.sts = cfix_get(&x.f, &RES_STS, "c4"); /* at 3: what a cache behind the watch shows */
    cr_assert_not_null(cache.sts);
    hibfix_annotate(&x, "c4", HIB_ANN_HIBERNATE, "true");
    for (int i = 0; i < 1500 && strcmp(hibfix_phase(&x, "c4"), "Hibernated") != 0; i++) {
        step("c4", &used);
        hibfix_round(&x, "c4"); /* the task executor's part */
        ktime_sleep_ns(20000000L);
    }
    cr_assert_str_eq(hibfix_phase(&x, "c4"), "Hibernated");
    hibfix_sts(&x, "c4", &spec, &status);
    cr_assert_eq(spec, 0);
    hibfix_annotate(&x, "c4", HIB_ANN_HIBERNATE, NULL);
    for (int i = 0; i < 1500 && strcmp(hibfix_phase(&x, "c4"), "") != 0; i++) {
        step("c4", &used);
        ktime_sleep_ns(20000000L);
    }
    cr_assert_str_eq(hibfix_phase(&x, "c4"), "");
    hibfix_sts(&x, "c4", &spec, &status);
    cr_assert_eq(spec, 3, "woke up with the StatefulSet at %d", spec);
}

Test(hib_cache, the_cut_time_is_written_only_once_the_api_shows_the_ports_cut)
{
    char v[64];
    cJSON *svc, *e;
    int used;

    etcd_with_store("c5");
    svc = cfix_get(&x.f, &RES_SVC, "c5-client");
    cr_assert_not_null(svc);
    /* a cache that shows the ports cut while the API server still has them open */
    cr_assert_eq(hib_ports_cut(svc, &cache.svc, NULL), KERR_OK);
    cJSON_Delete(svc);
    hibfix_annotate(&x, "c5", HIB_ANN_HIBERNATE, "true");
    x.hib.max_steps = 1;
    for (int i = 0; i < 20; i++) {
        char *ports;

        step("c5", &used);
        e = hibfix_get_etcd(&x, "c5");
        snprintf(v, sizeof(v), "%s", etcdspec_annotation(e, HIB_ANN_CUT_AT) ? "cut" : "");
        cJSON_Delete(e);
        if (!v[0])
            continue;
        ports = hibfix_ports(&x, "c5-client");
        cr_assert(!strstr(ports, "\"client\"") && !strstr(ports, "\"server\""),
                  "traffic-cut-at written while the ports are open: %s", ports);
        free(ports);
        break;
    }
    x.hib.max_steps = 0;
    cr_assert_str_eq(v, "cut", "no cut time written");
}
