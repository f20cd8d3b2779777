/* The informer (common/informer) against kube-sim: list then watch, writes made through the
 * client seen by the handlers, a relist after 410 firing handlers for the differences, a cut
 * watch resumed from the last resourceVersion, bookmarks, namespace and label scoping, and a
 * workqueue (with a wqpool) fed by the handlers. */
#include "common/informer.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "common/log.h"
#include "common/workqueue.h"
#include "common/wqpool.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimcli.h"
#include "tests/support/ksimfix.h"
#include "tests/support/linerec.h"
#include "tests/support/testutil.h"
#include "tests/support/wqfix.h"

static const struct k8s_resource CM = { "", "v1", "configmaps", 1 };

/* call returned KERR_OK (else the message is printed). */
#define OK(call) KSIMCLI_OK(call, err)

/* What one informer's handlers saw, as lines "add ns/name k=v", "upd ns/name v>w",
 * "del ns/name"; optionally feeding keys to a workqueue. */
struct rec {
    struct linerec lines;
    struct wq *q; /* BORROWED or NULL */
};

static struct ksim_harness *h;
static struct k8s_client *c;
static struct inf *infs[2];
static struct kerr_info err;
static struct rec recs[2];

static void queue(struct rec *r, const cJSON *o)
{
    char key[KOBJ_KEY_MAX];

    if (r->q && kobj_key_of(o, key, sizeof(key), NULL) == KERR_OK)
        (void)wq_add(r->q, key);
}

static void on_add(void *ctx, const cJSON *o)
{
    (void)linerec_addf(&((struct rec *)ctx)->lines, "add %s/%s k=%s",
                       jsonfix_str(o, "metadata.namespace"), jsonfix_str(o, "metadata.name"),
                       jsonfix_str(o, "data.k"));
    queue(ctx, o);
}

static void on_update(void *ctx, const cJSON *old, const cJSON *o)
{
    (void)linerec_addf(&((struct rec *)ctx)->lines, "upd %s/%s %s>%s",
                       jsonfix_str(o, "metadata.namespace"), jsonfix_str(o, "metadata.name"),
                       jsonfix_str(old, "data.k"), jsonfix_str(o, "data.k"));
    queue(ctx, o);
}

static void on_delete(void *ctx, const cJSON *o)
{
    (void)linerec_addf(&((struct rec *)ctx)->lines, "del %s/%s",
                       jsonfix_str(o, "metadata.namespace"), jsonfix_str(o, "metadata.name"));
    queue(ctx, o);
}

/* Poll until cond holds (5 s deadline). */
#define AWAIT(cond)                               \
    do {                                          \
        TESTUTIL_AWAIT(cond, 30000);              \
        cr_assert(cond, "never true: %s", #cond); \
    } while (0)

static struct inf_stats stats(int i)
{
    struct inf_stats s;

    inf_stats(infs[i], &s);
    return s;
}

static void start(const struct ksim_harness_opts *ho)
{
    linerec_init(&recs[0].lines);
    linerec_init(&recs[1].lines);
    log_set_level(LOG_ERROR);
    h = ksimfix_start(ho);
    c = ksimcli_admin(h);
}

static void stop(void)
{
    if (c)
        k8s_client_stop(c); /* ends every watch at once */
    inf_free(infs[0]);
    inf_free(infs[1]);
    k8s_client_free(c);
    ksim_harness_stop(h);
    linerec_release(&recs[0].lines);
    linerec_release(&recs[1].lines);
}

TestSuite(informer_kubesim, .fini = stop, .timeout = 30);

/* Start informer i on configmaps with fast backoff, the recording handlers and o's scope. */
static void run_informer(int i, struct inf_opts o)
{
    struct inf_handlers hd = { on_add, on_update, on_delete, &recs[i] };

    o.res = &CM;
    o.backoff_initial_ms = 20;
    o.backoff_max_ms = 100;
    OK(inf_new(c, &o, &infs[i], &err));
    OK(inf_add_handlers(infs[i], &hd, &err));
    OK(inf_start(infs[i], &err));
    OK(inf_wait_synced(infs[i], 30000));
}

/* Create ConfigMap ns/name with data.k = k and labels app (NULL: none); returns its RV. */
static unsigned long long put_cm(const char *ns, const char *name, const char *k, const char *app)
{
    cJSON *o = cJSON_CreateObject(), *out = NULL;
    unsigned long long rv;

    OK(kjson_set_str(o, "metadata.name", name, &err));
    OK(kjson_set_str(o, "data.k", k, &err));
    if (app)
        OK(kjson_set_str(o, "metadata.labels.app", app, &err));
    OK(k8s_create(c, &CM, ns, o, NULL, &out, &err));
    rv = strtoull(jsonfix_str(out, "metadata.resourceVersion"), NULL, 10);
    cJSON_Delete(o);
    cJSON_Delete(out);
    return rv;
}

/* Merge-patch ns/name with patch (JSON text). */
static void patch_cm(const char *ns, const char *name, const char *patch)
{
    cJSON *p = NULL;

    OK(kjson_parse(patch, strlen(patch), NULL, &p, NULL, &err));
    OK(k8s_patch(c, &CM, ns, name, K8S_PATCH_MERGE, p, NULL, NULL, &err));
    cJSON_Delete(p);
}

static void delete_cm(const char *ns, const char *name)
{
    OK(k8s_delete(c, &CM, ns, name, NULL, NULL, &err));
}

static unsigned long long last_rv(int i)
{
    char rv[INF_RV_MAX];

    inf_last_rv(infs[i], rv, sizeof(rv));
    return strtoull(rv, NULL, 10);
}

/* The resourceVersion of a fresh list of ns: the store's current one. */
static unsigned long long list_rv(const char *ns)
{
    cJSON *l = NULL;
    unsigned long long rv;

    OK(k8s_list(c, &CM, ns, NULL, &l, &err));
    rv = strtoull(jsonfix_str(l, "metadata.resourceVersion"), NULL, 10);
    cJSON_Delete(l);
    return rv;
}

/* data.k of key in informer i's store ("" when absent). */
static const char *stored_k(int i, const char *key)
{
    static char out[64];
    cJSON *o = NULL;

    out[0] = '\0';
    if (store_get(inf_store(infs[i]), key, &o, NULL) == KERR_OK)
        snprintf(out, sizeof(out), "%s", jsonfix_str(o, "data.k"));
    cJSON_Delete(o);
    return out;
}

/* Line i of r (a copy; "" past the end). */
static const char *line_at(struct rec *r, int i)
{
    static char out[LINEREC_LEN];

    return linerec_at(&r->lines, i, out, sizeof(out));
}

/* Objects a and b (k=1) in namespace inf, informer 0 synced on that namespace. */
static void two_objects_watched(void)
{
    ksimcli_create_ns(c, "inf");
    put_cm("inf", "a", "1", NULL);
    put_cm("inf", "b", "1", NULL);
    run_informer(0, (struct inf_opts){ .ns = "inf" });
    cr_assert_eq(linerec_count(&recs[0].lines), 2);
}

/* The same three writes in every test: add c, update a to k=2, delete b. */
static void three_writes(void)
{
    put_cm("inf", "c", "1", NULL);
    patch_cm("inf", "a", "{\"data\":{\"k\":\"2\"}}");
    delete_cm("inf", "b");
}

static void assert_three_writes_seen(int from)
{
    linerec_await(&recs[0].lines, "del inf/b", 30000);
    cr_assert_str_eq(line_at(&recs[0], from), "add inf/c k=1");
    cr_assert_str_eq(line_at(&recs[0], from + 1), "upd inf/a 1>2");
    cr_assert_str_eq(line_at(&recs[0], from + 2), "del inf/b");
    cr_assert_eq(linerec_count(&recs[0].lines), from + 3, "nothing else, nothing twice");
    cr_assert_eq(store_count(inf_store(infs[0])), 2);
    cr_assert_str_eq(stored_k(0, "inf/a"), "2");
    cr_assert_str_eq(stored_k(0, "inf/c"), "1");
}

Test(informer_kubesim, list_then_watch_sees_the_clients_writes)
{
    struct inf_stats s;

    start(NULL);
    put_cm("default", "elsewhere", "1", NULL);
    ksimcli_create_ns(c, "inf");
    put_cm("inf", "a", "1", NULL);
    put_cm("inf", "b", "1", NULL);
    run_informer(0, (struct inf_opts){ .ns = "inf", .page_size = 1 });
    cr_assert_eq(store_count(inf_store(infs[0])), 2, "pages of one, namespace inf only");
    cr_assert(linerec_has(&recs[0].lines, "add inf/a k=1"));
    cr_assert(linerec_has(&recs[0].lines, "add inf/b k=1"));
    cr_assert_eq(last_rv(0), list_rv("inf"), "the list's resourceVersion");
    three_writes();
    assert_three_writes_seen(2);
    AWAIT(last_rv(0) == list_rv("inf"));
    s = stats(0);
    cr_assert_eq(s.lists, 1);
    cr_assert_eq(s.events, 3);
    cr_assert_eq(s.watches, 1, "one watch, never broken");
}

/*
 * Break informer 0's watch and keep it broken (its reconnects get 500) until faults change.
 * Returns once the cut and at least one failed reconnect have happened, so that the
 * reconnects are known to fail while the caller writes.
 */
static void break_watch(void)
{
    ksimfix_faults(h, "{\"errorRate\":1,\"match\":\"GET /api/v1/namespaces/inf/configmaps\"}");
    ksimfix_faults(h, "{\"cutWatches\":true}");
    AWAIT(stats(0).watch_errors >= 2 && stats(0).reconnects >= 1);
}

Test(informer_kubesim, cut_watch_resumes_from_the_last_resource_version)
{
    struct inf_stats s;

    start(NULL);
    two_objects_watched();
    break_watch();
    three_writes();
    ksimfix_faults(h, "{\"errorRate\":0}");
    assert_three_writes_seen(2);
    s = stats(0);
    cr_assert_eq(s.events, 3, "the missed writes came as watch events");
    cr_assert_eq(s.relists, 0);
    cr_assert_eq(s.expired, 0);
    cr_assert_geq(s.reconnects, 2);
}

Test(informer_kubesim, expired_watch_relists_and_reports_the_differences)
{
    struct inf_stats s;

    start(NULL);
    two_objects_watched();
    break_watch();
    three_writes();
    ksimfix_faults(h, "{\"expireHistory\":true}"); /* while the reconnects still fail */
    ksimfix_faults(h, "{\"errorRate\":0}");
    linerec_await(&recs[0].lines, "del inf/b", 30000);
    cr_assert(linerec_has(&recs[0].lines, "add inf/c k=1"));
    cr_assert(linerec_has(&recs[0].lines, "upd inf/a 1>2"));
    cr_assert_eq(linerec_count(&recs[0].lines), 5);
    cr_assert_eq(store_count(inf_store(infs[0])), 2);
    cr_assert_str_eq(stored_k(0, "inf/a"), "2");
    s = stats(0);
    cr_assert_geq(s.expired, 1);
    cr_assert_eq(s.relists, 1);
    cr_assert_eq(s.events, 0, "the differences came from the relist");
    AWAIT(last_rv(0) == list_rv("inf"));
}

Test(informer_kubesim, bookmarks_advance_the_resource_version)
{
    struct ksim_harness_opts ho = { .no_controllers = 1, .history = 4, .bookmark_ms = 100 };
    unsigned long long synced, newest = 0;
    struct inf_stats s;
    char name[16];
    int i;

    start(&ho);
    ksimcli_create_ns(c, "inf");
    ksimcli_create_ns(c, "other");
    put_cm("inf", "a", "1", NULL);
    run_informer(0, (struct inf_opts){ .ns = "inf" });
    synced = last_rv(0);
    for (i = 0; i < 6; i++) { /* one at a time: a watcher behind the history gets 410 too */
        snprintf(name, sizeof(name), "o%d", i);
        newest = put_cm("other", name, "1", NULL);
        AWAIT(last_rv(0) >= newest);
    }
    s = stats(0);
    cr_assert_eq(s.expired, 0);
    cr_assert_geq(s.bookmarks, 1);
    cr_assert_eq(s.events, 0, "nothing happened in namespace inf");
    cr_assert_gt(ksim_store_oldest_rv(h->api->store, "/configmaps"), synced,
                 "without the bookmarks the informer would resume from an expired version");
    ksimfix_faults(h, "{\"cutWatches\":true}");
    AWAIT(stats(0).watches >= 2);
    put_cm("inf", "b", "1", NULL);
    linerec_await(&recs[0].lines, "add inf/b k=1", 30000);
    s = stats(0);
    cr_assert_eq(s.expired, 0, "resumed from the bookmark's version");
    cr_assert_eq(s.relists, 0);
    cr_assert_eq(linerec_count(&recs[0].lines), 2);
}

Test(informer_kubesim, namespace_and_label_selector_scope_the_cache)
{
    cJSON *o = NULL;

    start(NULL);
    ksimcli_create_ns(c, "inf");
    ksimcli_create_ns(c, "other");
    put_cm("inf", "one", "1", "etcd");
    put_cm("other", "two", "1", "backup");
    put_cm("inf", "three", "1", "web");
    put_cm("other", "four", "1", NULL);
    run_informer(0, (struct inf_opts){ .ns = "inf" });
    run_informer(1, (struct inf_opts){ .label_selector = "app in (etcd, backup)" });
    cr_assert_eq(store_count(inf_store(infs[0])), 2);
    cr_assert_eq(store_count(inf_store(infs[1])), 2);
    OK(store_get(inf_store(infs[1]), "other/two", &o, &err));
    cJSON_Delete(o);
    patch_cm("inf", "three", "{\"metadata\":{\"labels\":{\"app\":\"etcd\"}}}");
    patch_cm("other", "two", "{\"metadata\":{\"labels\":{\"app\":\"web\"}}}");
    put_cm("inf", "five", "1", "web");
    put_cm("other", "six", "1", "etcd");
    linerec_await(&recs[0].lines, "add inf/five k=1", 30000);
    linerec_await(&recs[1].lines, "add other/six k=1", 30000);
    cr_assert_str_eq(line_at(&recs[1], 2), "add inf/three k=1", "started to match");
    cr_assert_str_eq(line_at(&recs[1], 3), "del other/two", "stopped matching");
    cr_assert_eq(linerec_count(&recs[1].lines), 5,
                 "inf/five, four and the relabelled web never seen");
    cr_assert_str_eq(line_at(&recs[0], 2), "upd inf/three 1>1");
    cr_assert_eq(linerec_count(&recs[0].lines), 4, "namespace other never seen");
    cr_assert_eq(store_count(inf_store(infs[0])), 3);
    cr_assert_eq(store_count(inf_store(infs[1])), 3);
    cr_assert_eq(store_get(inf_store(infs[1]), "other/two", &o, &err), KERR_NOTFOUND);
}

/* What the workers did: per key p0..p9 how often it was processed, and data.k they read. */
struct work {
    pthread_mutex_t mu;
    int count[10];
    char seen[10][8];
    int total;
    int bad; /* keys that are not inf/p0..p9 or not in the cache */
};

static enum wqpool_result process(void *arg, const char *key, long *after_ms)
{
    struct work *w = arg;
    cJSON *o = NULL;
    int i = strncmp(key, "inf/p", 5) == 0 && strlen(key) == 6 ? key[5] - '0' : -1;
    int ok = i >= 0 && i < 10 && store_get(inf_store(infs[0]), key, &o, NULL) == KERR_OK;

    (void)after_ms;
    pthread_mutex_lock(&w->mu);
    if (ok) {
        w->count[i]++;
        w->total++;
        snprintf(w->seen[i], sizeof(w->seen[i]), "%s", jsonfix_str(o, "data.k"));
    } else {
        w->bad++;
    }
    pthread_mutex_unlock(&w->mu);
    cJSON_Delete(o);
    return WQPOOL_RESULT_OK;
}

static int processed(struct work *w)
{
    int n;

    pthread_mutex_lock(&w->mu);
    n = w->total;
    pthread_mutex_unlock(&w->mu);
    return n;
}

Test(informer_kubesim, workqueue_fed_by_handlers_processes_each_key_once)
{
    struct work w = { .mu = PTHREAD_MUTEX_INITIALIZER };
    struct wqpool *workers = NULL;
    struct wq_stats ws;
    struct wq *q = NULL;
    char name[8], patch[64];
    int i, round;

    start(NULL);
    ksimcli_create_ns(c, "inf");
    for (i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        put_cm("inf", name, "1", NULL);
    }
    q = wqfix_new(NULL);
    recs[0].q = q;
    run_informer(0, (struct inf_opts){ .ns = "inf" });
    for (round = 2; round <= 4; round++) {
        snprintf(patch, sizeof(patch), "{\"data\":{\"k\":\"%d\"}}", round);
        for (i = 0; i < 10; i++) {
            snprintf(name, sizeof(name), "p%d", i);
            patch_cm("inf", name, patch);
        }
    }
    AWAIT(stats(0).events == 30);
    wq_get_stats(q, &ws);
    cr_assert_eq(ws.adds, 10, "40 handler calls, 10 distinct keys");
    cr_assert_eq(wq_len(q), 10);
    OK(wqpool_new(q, 2, process, &w, &workers, &err));
    AWAIT(processed(&w) == 10);
    pthread_mutex_lock(&w.mu); /* the workers are idle now: nothing is queued */
    cr_assert_eq(w.bad, 0);
    for (i = 0; i < 10; i++) {
        cr_assert_eq(w.count[i], 1, "p%d processed %d times", i, w.count[i]);
        cr_assert_str_eq(w.seen[i], "4", "p%d: the latest state from the cache", i);
    }
    pthread_mutex_unlock(&w.mu);
    patch_cm("inf", "p3", "{\"data\":{\"k\":\"5\"}}");
    AWAIT(processed(&w) == 11);
    inf_free(infs[0]); /* its handlers feed q */
    infs[0] = NULL;
    wqpool_free(workers); /* joins the workers */
    cr_assert_eq(w.bad, 0);
    cr_assert_eq(w.count[3], 2);
    cr_assert_str_eq(w.seen[3], "5");
    wq_get_stats(q, &ws);
    cr_assert_eq(ws.work_count, 11);
    wq_free(q);
}
