/* Tests of common/informer: list + watch against tests/support/mockapi scripts. */
#include "common/informer.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/jarena.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "tests/support/linerec.h"
#include "tests/support/mockapi.h"
#include "tests/support/mockfix.h"
#include "tests/support/testutil.h"

static const struct k8s_resource ETCD = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };

#define BASE  "/apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds"
#define LIST  BASE "?!watch"
#define WATCH BASE "?watch=1&resourceVersion="

/* Item JSON: {"metadata":{"name":N,"namespace":"shoot","resourceVersion":RV},"spec":{...}} */
#define ITEM(name, rv)                                                                       \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"shoot\",\"resourceVersion\":\"" rv \
    "\"},\"spec\":{\"replicas\":3}}"
#define EVENT(type, name, rv) "{\"type\":\"" type "\",\"object\":" ITEM(name, rv) "}\n"
#define BOOKMARK(rv)                                                                               \
    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Etcd\",\"metadata\":{\"resourceVersion\":\"" rv \
    "\"}}}\n"
#define LIST_BODY(rv, items)                                                   \
    "{\"kind\":\"EtcdList\",\"apiVersion\":\"druid.gardener.cloud/v1alpha1\"," \
    "\"metadata\":{\"resourceVersion\":\"" rv "\"},\"items\":[" items "]}"
#define STATUS_410                                                                       \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\"," \
    "\"message\":\"too old resource version: 10 (40)\",\"reason\":\"Expired\",\"code\":410}"

static struct mockapi *m;
static struct k8s_client *c;
static struct inf *inf;
static struct kerr_info err;
/* What the handlers saw, as lines "add a@1", "upd a@1>2", "del b@1". */
static struct linerec rec;
/* The informer whose store the handlers read, and how often: proves they do not run under
 * the store's lock. */
static struct inf *read_inf;
static atomic_int store_reads;

/* After each handler's line: it was kept, and the handler can read the store. */
static void noted(int added)
{
    cr_assert_eq(added, 0, "more than %d handler calls", LINEREC_MAX);
    if (read_inf && store_count(inf_store(read_inf)) < 1000000)
        atomic_fetch_add(&store_reads, 1);
}

static const char *nm(const cJSON *o)
{
    const char *s = kjson_get_str(o, "metadata.name");

    return s ? s : "?";
}

static const char *rv(const cJSON *o)
{
    const char *s = kjson_get_str(o, "metadata.resourceVersion");

    return s ? s : "?";
}

static void on_add(void *ctx, const cJSON *o)
{
    (void)ctx;
    noted(linerec_addf(&rec, "add %s@%s", nm(o), rv(o)));
}

static void on_update(void *ctx, const cJSON *o, const cJSON *n)
{
    (void)ctx;
    noted(linerec_addf(&rec, "upd %s@%s>%s", nm(o), rv(o), rv(n)));
}

static void on_delete(void *ctx, const cJSON *o)
{
    (void)ctx;
    noted(linerec_addf(&rec, "del %s@%s", nm(o), rv(o)));
}

static void setup(void)
{
    mockfix_start(&m, &c, "t", NULL);
    linerec_init(&rec);
    read_inf = NULL;
    atomic_store(&store_reads, 0);
    inf = NULL;
}

static void teardown(void)
{
    inf_free(inf);
    mockfix_stop(m, c);
    linerec_release(&rec);
}

/* An informer on shoot/etcds with fast backoff and the recording handlers, not started. */
static void make(struct inf_opts *o)
{
    static const struct inf_handlers h = { on_add, on_update, on_delete, NULL };

    o->res = &ETCD;
    o->ns = "shoot";
    if (!o->backoff_initial_ms)
        o->backoff_initial_ms = 20;
    if (!o->backoff_max_ms)
        o->backoff_max_ms = 100;
    cr_assert_eq(inf_new(c, o, &inf, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(inf_add_handlers(inf, &h, &err), KERR_OK);
    read_inf = inf;
}

static void start(struct inf_opts *o)
{
    make(o);
    cr_assert_eq(inf_start(inf, &err), KERR_OK, "%s", err.msg);
}

static int held(const char *target, const char *const *chunks)
{
    static const char *const none[] = { NULL };

    return mockapi_add(
        m, &(struct mockapi_spec){
               .method = "GET", .target = target, .chunks = chunks ? chunks : none, .hold = 1 });
}

static int stream(const char *target, const char *const *chunks)
{
    return mockapi_add(
        m, &(struct mockapi_spec){
               .method = "GET", .target = target, .chunks = chunks, .chunk_delay_ms = 5 });
}

static const struct mockapi_req *request_matching(const char *path_part, const char *rv_value)
{
    size_t i, n = mockapi_request_count(m);
    const struct mockapi_req *q;
    const char *v;

    for (i = 0; i < n; i++) {
        q = mockapi_request(m, i);
        v = mockapi_req_param(q, "resourceVersion");
        if (strstr(q->target, path_part) && mockapi_req_param(q, "watch") && v &&
            strcmp(v, rv_value) == 0)
            return q;
    }
    return NULL;
}

static void assert_rv(const char *key, const char *want)
{
    cJSON *o = NULL;

    cr_assert_eq(store_get(inf_store(inf), key, &o, &err), KERR_OK, "%s: %s", key, err.msg);
    cr_assert_str_eq(rv(o), want, "%s", key);
    cJSON_Delete(o);
}

TestSuite(informer, .init = setup, .fini = teardown, .timeout = 30);

/*
 * List a@1 at 10, stream ev on the watch from 10 and hold the watch from
 * resume_rv; start the informer with o and wait until it has resumed there.
 */
static void run_until_resumed(struct inf_opts *o, const char *const *ev, const char *resume_rv)
{
    char target[160];
    int w2;

    snprintf(target, sizeof(target), WATCH "%s", resume_rv);
    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("10", ITEM("a", "1")));
    stream(WATCH "10", ev);
    w2 = held(target, NULL);
    start(o);
    cr_assert_eq(mockapi_wait_served(m, w2, 1, 30000), 0, "the next watch resumes from %s",
                 resume_rv);
}

Test(informer, list_then_watch_applies_events_in_order)
{
    static const char *const ev[] = { EVENT("ADDED", "c", "11") EVENT("MODIFIED", "a", "12"),
                                      EVENT("DELETED", "b", "13"), NULL };
    struct inf_opts o = { .label_selector = "app=etcd", .field_selector = "metadata.name!=x" };
    const struct mockapi_req *q;
    struct inf_stats st;
    long t;
    int w;

    mockapi_expect(m, "GET", LIST "&labelSelector=app%3Detcd&fieldSelector&limit=500", 200,
                   LIST_BODY("10", ITEM("a", "1") "," ITEM("b", "2")));
    w = held(WATCH "10", ev);
    start(&o);
    cr_assert_eq(inf_wait_synced(inf, 30000), KERR_OK);
    cr_assert(inf_has_synced(inf));
    linerec_await(&rec, "del b@2", 30000);
    cr_assert(linerec_has(&rec, "add a@1"), "the list's objects are added, in any order");
    cr_assert(linerec_has(&rec, "add b@2"));
    cr_assert_str_eq(rec.line[2], "add c@11");
    cr_assert_str_eq(rec.line[3], "upd a@1>12");
    cr_assert_str_eq(rec.line[4], "del b@2");
    cr_assert_eq(store_count(inf_store(inf)), 2);
    assert_rv("shoot/a", "12");
    assert_rv("shoot/c", "11");
    cr_assert_gt(atomic_load(&store_reads), 0);

    q = request_matching(BASE, "10");
    cr_assert_not_null(q);
    cr_assert_str_eq(mockapi_req_param(q, "allowWatchBookmarks"), "true");
    cr_assert_str_eq(mockapi_req_param(q, "labelSelector"), "app=etcd");
    cr_assert_str_eq(mockapi_req_param(q, "fieldSelector"), "metadata.name!=x");
    cr_assert_str_eq(mockapi_req_param(mockapi_request(m, 0), "fieldSelector"), "metadata.name!=x");
    t = strtol(mockapi_req_param(q, "timeoutSeconds"), NULL, 10);
    cr_assert(t >= 300 && t <= 600, "timeoutSeconds %ld", t);
    inf_stats(inf, &st);
    cr_assert_eq(st.lists, 1);
    cr_assert_eq(st.relists, 0);
    cr_assert_eq(st.events, 3);
    cr_assert_eq(mockapi_unexpected(m), 0);
    (void)w;
}

Test(informer, stop_cancels_the_watch_in_flight_promptly)
{
    struct inf_opts o = { 0 };
    long long t0;
    int w;

    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("10", ITEM("a", "1")));
    w = held(WATCH "10", NULL);
    start(&o);
    cr_assert_eq(mockapi_wait_served(m, w, 1, 30000), 0);
    t0 = ktime_mono_ms();
    inf_stop(inf);
    /*
     * k8s_watch notices its cancel flag within about a second on an idle
     * stream; the held watch would otherwise last until the test ends. The
     * bound leaves a loaded machine room and still tells the two apart.
     */
    cr_assert_lt(ktime_mono_ms() - t0, 20000, "stop took %lld ms", ktime_mono_ms() - t0);
    cr_assert_eq(inf_wait_synced(inf, 10), KERR_OK, "synced stays set after stop");
    inf_stop(inf);
}

Test(informer, pagination_of_the_initial_list)
{
    struct inf_opts o = { .page_size = 2 };
    const struct mockapi_req *q;

    mockapi_expect(m, "GET", LIST "&limit=2&!continue", 200,
                   "{\"metadata\":{\"resourceVersion\":\"20\",\"continue\":\"tok1\"},"
                   "\"items\":[" ITEM("a", "1") "," ITEM("b", "2") "]}");
    mockapi_expect(m, "GET", LIST "&limit=2&continue=tok1", 200,
                   "{\"metadata\":{\"resourceVersion\":\"20\",\"continue\":\"tok2\"},"
                   "\"items\":[" ITEM("c", "3") "," ITEM("d", "4") "]}");
    mockapi_expect(m, "GET", LIST "&limit=2&continue=tok2", 200, LIST_BODY("20", ITEM("e", "5")));
    held(WATCH "20", NULL);
    start(&o);
    cr_assert_eq(inf_wait_synced(inf, 30000), KERR_OK);
    cr_assert_eq(store_count(inf_store(inf)), 5);
    assert_rv("shoot/e", "5");
    cr_assert_eq(linerec_count(&rec), 5);
    cr_assert_eq(mockapi_wait_requests(m, 4, 30000), 0);
    q = request_matching(BASE, "20");
    cr_assert_not_null(q, "the watch starts from the list's resourceVersion");
    cr_assert_eq(mockapi_unexpected(m), 0);
}

Test(informer, expired_continue_token_restarts_the_list_without_limit)
{
    struct inf_opts o = { .page_size = 1 };

    mockapi_expect(m, "GET", LIST "&limit=1&!continue", 200,
                   "{\"metadata\":{\"resourceVersion\":\"20\",\"continue\":\"old\"},"
                   "\"items\":[" ITEM("a", "1") "]}");
    mockapi_expect(m, "GET", LIST "&limit=1&continue=old", 410, STATUS_410);
    mockapi_expect(m, "GET", LIST "&!limit&!continue", 200,
                   LIST_BODY("30", ITEM("a", "1") "," ITEM("b", "2")));
    held(WATCH "30", NULL);
    start(&o);
    cr_assert_eq(inf_wait_synced(inf, 30000), KERR_OK);
    cr_assert_eq(store_count(inf_store(inf)), 2);
    cr_assert_eq(linerec_count(&rec), 2,
                 "no duplicate handler calls from the abandoned first page");
    cr_assert_eq(mockapi_unexpected(m), 0);
}

Test(informer, expired_error_event_relists_and_reports_the_differences)
{
    static const char *const ev[] = {
        EVENT("MODIFIED", "a", "11"),
        "{\"type\":\"ERROR\",\"object\":" STATUS_410 "}\n",
        NULL,
    };
    struct inf_opts o = { 0 };
    struct inf_stats st;
    char last[INF_RV_MAX];

    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("10", ITEM("a", "1") "," ITEM("b", "2")));
    stream(WATCH "10", ev);
    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("40", ITEM("a", "12") "," ITEM("c", "3")));
    held(WATCH "40", NULL);
    start(&o);
    linerec_await(&rec, "del b@2", 30000);
    linerec_await(&rec, "add c@3", 30000);
    linerec_await(&rec, "upd a@11>12", 30000);
    cr_assert_eq(store_count(inf_store(inf)), 2);
    assert_rv("shoot/a", "12");
    assert_rv("shoot/c", "3");
    cr_assert_eq(mockapi_wait_served(m, 3, 1, 30000), 0, "watch resumed from the relist's RV");
    inf_stats(inf, &st);
    cr_assert_eq(st.lists, 2);
    cr_assert_eq(st.relists, 1);
    cr_assert_eq(st.expired, 1);
    inf_last_rv(inf, last, sizeof(last));
    cr_assert_str_eq(last, "40");
    cr_assert_eq(mockapi_unexpected(m), 0);
}

/* Script a LIST answer at list_rv of the items "name@rv ..." of spec, in that order. */
static void expect_list(const char *list_rv, const char *spec)
{
    cJSON *list = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(list, "items"), *it;
    char name[16], item_rv[16], *text;
    int used;

    cr_assert_eq(kjson_set_str(list, "metadata.resourceVersion", list_rv, NULL), KERR_OK);
    while (sscanf(spec, "%15[^@]@%15s%n", name, item_rv, &used) == 2) {
        it = cJSON_CreateObject();
        cr_assert(cJSON_AddItemToArray(items, it));
        cr_assert_eq(kjson_set_str(it, "metadata.name", name, NULL), KERR_OK);
        cr_assert_eq(kjson_set_str(it, "metadata.namespace", "shoot", NULL), KERR_OK);
        cr_assert_eq(kjson_set_str(it, "metadata.resourceVersion", item_rv, NULL), KERR_OK);
        spec += used;
        spec += *spec == ' ';
    }
    text = cJSON_PrintUnformatted(list);
    cr_assert_geq(mockapi_expect(m, "GET", LIST, 200, text), 0);
    free(text);
    cJSON_Delete(list);
}

Test(informer, list_handlers_fire_in_list_order)
{
    static const char *const ev[] = { "{\"type\":\"ERROR\",\"object\":" STATUS_410 "}\n", NULL };
    struct inf_opts o = { 0 };
    char got[1024];

    expect_list("10", "q@1 b@2 x@3 a@4 m@5 c@6 z@7 e@8 k@9 d@10");
    stream(WATCH "10", ev);
    /* the relist: new and changed objects among unchanged ones, m and k gone, n twice */
    expect_list("40", "z@31 n@32 q@1 d@33 b@2 y@34 a@35 x@3 c@36 e@8 n@37");
    held(WATCH "40", NULL);
    start(&o);
    TESTUTIL_AWAIT(linerec_count(&rec) == 18, 30000);
    cr_assert_eq(linerec_count(&rec), 18);
    linerec_join(&rec, 0, 10, got, sizeof(got));
    cr_assert_str_eq(got,
                     "add q@1,add b@2,add x@3,add a@4,add m@5,add c@6,add z@7,add e@8,add k@9,"
                     "add d@10",
                     "the initial list: %s", got);
    linerec_join(&rec, 10, 16, got, sizeof(got));
    cr_assert_str_eq(got, "upd z@7>31,upd d@10>33,add y@34,upd a@4>35,upd c@6>36,add n@37",
                     "the relist's additions and updates (n where it came last): %s", got);
    linerec_join(&rec, 16, 18, got, sizeof(got));
    cr_assert(strcmp(got, "del m@5,del k@9") == 0 || strcmp(got, "del k@9,del m@5") == 0,
              "then its deletions: %s", got);
}

Test(informer, http_410_on_the_watch_relists)
{
    struct inf_opts o = { 0 };
    struct inf_stats st;

    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("10", ITEM("a", "1")));
    mockapi_expect(m, "GET", WATCH "10", 410, STATUS_410);
    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("50", ITEM("a", "1") "," ITEM("z", "49")));
    held(WATCH "50", NULL);
    start(&o);
    linerec_await(&rec, "add z@49", 30000);
    cr_assert_eq(mockapi_wait_served(m, 3, 1, 30000), 0);
    inf_stats(inf, &st);
    cr_assert_eq(st.expired, 1);
    cr_assert_eq(st.relists, 1);
    cr_assert_eq(linerec_count(&rec), 2, "the unchanged object a is not reported again");
    cr_assert_eq(mockapi_unexpected(m), 0);
}

Test(informer, bookmarks_advance_the_resource_version_only)
{
    static const char *const ev[] = { BOOKMARK("15"), BOOKMARK("17"), NULL };
    struct inf_opts o = { 0 };
    const struct mockapi_req *q;
    struct inf_stats st;
    char last[INF_RV_MAX];

    run_until_resumed(&o, ev, "17");
    q = request_matching(BASE, "17");
    cr_assert_not_null(q);
    cr_assert_str_eq(mockapi_req_param(q, "resourceVersion"), "17");
    inf_stats(inf, &st);
    cr_assert_eq(st.bookmarks, 2);
    cr_assert_eq(st.events, 0);
    cr_assert_eq(st.reconnects, 1);
    cr_assert_eq(st.watch_errors, 0);
    cr_assert_eq(st.lists, 1, "a clean end is resumed, not relisted");
    inf_last_rv(inf, last, sizeof(last));
    cr_assert_str_eq(last, "17");
    cr_assert_eq(store_count(inf_store(inf)), 1);
    assert_rv("shoot/a", "1");
    cr_assert_eq(linerec_count(&rec), 1);
    cr_assert_eq(mockapi_unexpected(m), 0);
}

Test(informer, dropped_connection_reconnects_from_the_last_rv)
{
    static const char *const ev[] = { EVENT("ADDED", "c", "11"), NULL };
    struct inf_opts o = { 0 };
    struct inf_stats st;
    int w1, w2;

    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("10", ITEM("a", "1")));
    w1 = held(WATCH "10", ev);
    w2 = held(WATCH "12", NULL);
    start(&o);
    linerec_await(&rec, "add c@11", 30000);
    cr_assert_eq(mockapi_push(m, w1, EVENT("MODIFIED", "c", "12"), 0), 0);
    linerec_await(&rec, "upd c@11>12", 30000);
    mockapi_end(m, w1, 1);
    cr_assert_eq(mockapi_wait_served(m, w2, 1, 30000), 0);
    inf_stats(inf, &st);
    cr_assert_eq(st.watch_errors, 1);
    cr_assert_eq(st.reconnects, 1);
    cr_assert_eq(st.lists, 1, "no relist after a dropped connection");
    cr_assert_geq(st.last_backoff_ms, 20);
    cr_assert_lt(st.last_backoff_ms, 40, "jittered first backoff in [initial, 2 initial)");
    assert_rv("shoot/c", "12");
    cr_assert_eq(mockapi_unexpected(m), 0);
}

Test(informer, malformed_line_ends_the_watch_and_resumes)
{
    static const char *const ev[] = { EVENT("ADDED", "c", "11"), "{\"type\":\"ADDED\",oops}\n",
                                      EVENT("ADDED", "never", "12"), NULL };
    struct inf_opts o = { 0 };
    struct inf_stats st;

    run_until_resumed(&o, ev, "11");
    inf_stats(inf, &st);
    cr_assert_eq(st.watch_errors, 1);
    cr_assert(linerec_has(&rec, "add c@11"));
    cr_assert_not(linerec_has(&rec, "add never@12"));
    cr_assert_eq(store_count(inf_store(inf)), 2);
}

Test(informer, oversized_event_line_ends_the_watch)
{
    static const char *const ev[] = { EVENT("ADDED", "a-name-that-makes-the-line-long", "11"),
                                      NULL };
    struct inf_opts o = { .line_max = 64 };
    struct inf_stats st;

    run_until_resumed(&o, ev, "10");
    inf_stats(inf, &st);
    cr_assert_eq(st.watch_errors, 1);
    cr_assert_eq(store_count(inf_store(inf)), 1);
}

Test(informer, other_error_event_resumes_without_relist)
{
    static const char *const ev[] = {
        EVENT("ADDED", "c", "11"),
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,"
        "\"reason\":\"InternalError\",\"message\":\"boom\"}}\n",
        NULL,
    };
    struct inf_opts o = { 0 };
    struct inf_stats st;

    run_until_resumed(&o, ev, "11");
    inf_stats(inf, &st);
    cr_assert_eq(st.lists, 1);
    cr_assert_eq(st.expired, 0);
    cr_assert_eq(st.watch_errors, 1);
}

Test(informer, list_failure_backs_off_and_retries)
{
    struct inf_opts o = { 0 };
    struct inf_stats st;

    mockapi_expect(m, "GET", LIST, 500,
                   "{\"kind\":\"Status\",\"code\":500,\"reason\":\"InternalError\"}");
    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("10", ITEM("a", "1")));
    held(WATCH "10", NULL);
    start(&o);
    cr_assert_eq(inf_wait_synced(inf, 30000), KERR_OK);
    inf_stats(inf, &st);
    cr_assert_eq(st.list_errors, 1);
    cr_assert_eq(st.lists, 1);
    cr_assert_eq(st.relists, 0);
    cr_assert(st.last_backoff_ms >= 20 && st.last_backoff_ms < 40);
}

Test(informer, wait_synced_times_out_and_stop_ends_a_long_backoff)
{
    struct inf_opts o = { .backoff_initial_ms = 60000, .backoff_max_ms = 60000 };
    long long t0;

    mockapi_add(m, &(struct mockapi_spec){ .method = "GET",
                                           .target = LIST,
                                           .status = 503,
                                           .body = "{\"kind\":\"Status\",\"code\":503}",
                                           .times = -1 });
    start(&o);
    cr_assert_eq(inf_wait_synced(inf, 100), KERR_TIMEOUT);
    cr_assert_eq(mockapi_wait_requests(m, 1, 30000), 0);
    t0 = ktime_mono_ms();
    inf_stop(inf);
    /* half the 60 s backoff: a stop that waited for it would take all of it */
    cr_assert_lt(ktime_mono_ms() - t0, 30000, "stop interrupts the backoff");
    cr_assert_eq(inf_wait_synced(inf, 100), KERR_CANCELLED);
    cr_assert_not(inf_has_synced(inf));
}

Test(informer, resync_redelivers_updates)
{
    /* The server ends the first watch after a while, as at its timeoutSeconds. */
    static const char *const ev[] = { BOOKMARK("10"), NULL };
    struct inf_opts o = { .resync_ms = 300 };
    const struct mockapi_req *q;
    struct inf_stats st;
    int w1, w2;

    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("10", ITEM("a", "1")));
    w1 = mockapi_add(
        m, &(struct mockapi_spec){
               .method = "GET", .target = WATCH "10", .chunks = ev, .chunk_delay_ms = 500 });
    w2 = held(WATCH "10", NULL);
    start(&o);
    cr_assert_eq(mockapi_wait_served(m, w1, 1, 30000), 0);
    q = request_matching(BASE, "10");
    cr_assert_str_eq(mockapi_req_param(q, "timeoutSeconds"), "1",
                     "the watch is capped to end by the resync");
    linerec_await(&rec, "upd a@1>1", 30000);
    cr_assert_eq(mockapi_wait_served(m, w2, 1, 30000), 0, "the watch resumes after the resync");
    inf_stats(inf, &st);
    cr_assert_eq(st.resyncs, 1);
    cr_assert_eq(st.lists, 1);
}

Test(informer, projection_and_compact_store)
{
    static const char *const ev[] = { EVENT("ADDED", "c", "11"), NULL };
    struct inf_opts o = { .project = kobj_project_paths,
                          .project_ctx = (void *)KOBJ_META_PATHS,
                          .compact = 1 };
    cJSON *got = NULL;

    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("10", ITEM("a", "1")));
    held(WATCH "10", ev);
    make(&o);
    cr_assert_eq(store_add_index(inf_store(inf), "ns", kobj_index_namespace, NULL, NULL), KERR_OK);
    cr_assert_eq(inf_start(inf, &err), KERR_OK);
    cr_assert_eq(inf_add_handlers(inf, &(struct inf_handlers){ 0 }, NULL), KERR_INVAL);
    cr_assert_eq(inf_start(inf, NULL), KERR_INVAL);
    linerec_await(&rec, "add c@11", 30000);
    cr_assert_eq(store_get(inf_store(inf), "shoot/c", &got, NULL), KERR_OK);
    cr_assert_null(kjson_get(got, "spec"), "projected away");
    cr_assert_str_eq(kjson_get_str(got, "metadata.namespace"), "shoot");
    cJSON_Delete(got);
    cr_assert_eq(store_index_list(inf_store(inf), "ns", "shoot", &got, NULL), KERR_OK);
    cr_assert_eq(cJSON_GetArraySize(got), 2);
    cJSON_Delete(got);
}

Test(informer, new_rejects_missing_resource)
{
    struct inf_opts o = { 0 };
    struct inf *x = NULL;

    cr_assert_eq(inf_new(c, &o, &x, &err), KERR_INVAL);
    cr_assert_null(x);
    inf_free(NULL);
}

/* "<kind>/<ns>/<name>": the key function of a store shared by several kinds. */
static enum kerr kind_key(void *ctx, const cJSON *obj, char *out, size_t n, struct kerr_info *e)
{
    int len = snprintf(out, n, "%s/%s/%s", kjson_get_str(obj, "kind"),
                       kjson_get_str(obj, "metadata.namespace"), nm(obj));

    (void)ctx;
    return len > 0 && (size_t)len < n ? KERR_OK : kerr_set(e, KERR_TOOBIG, "long");
}

/* The informer's objects as kind Etcd. */
static enum kerr as_etcd(void *ctx, const cJSON *obj, cJSON **out)
{
    (void)ctx;
    *out = cJSON_Duplicate(obj, 1);
    return *out && cJSON_AddStringToObject(*out, "kind", "Etcd") ? KERR_OK : KERR_NOMEM;
}

static void put_other(struct store *s, const char *name)
{
    cJSON *o = cJSON_CreateObject();

    cr_assert_eq(kjson_set_str(o, "kind", "Other", NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.namespace", "shoot", NULL), KERR_OK);
    cr_assert_eq(kjson_set_str(o, "metadata.name", name, NULL), KERR_OK);
    cr_assert_eq(store_put(s, o, NULL, NULL, NULL), KERR_OK);
}

Test(informer, a_shared_store_keeps_other_scopes_through_deletes_and_relists)
{
    static const char *const ev[] = { EVENT("DELETED", "b", "13"),
                                      "{\"type\":\"ERROR\",\"object\":" STATUS_410 "}\n", NULL };
    struct store_opts so = { .compact = 1, .key = kind_key };
    struct inf_opts o = { .project = as_etcd, .compact = 1, .scope = "Etcd/" };
    struct store *s = NULL;
    cJSON *got = NULL;

    cr_assert_eq(store_new(&so, &s, NULL), KERR_OK);
    put_other(s, "a");
    put_other(s, "b");
    put_other(s, "d");
    o.store = s;
    mockapi_expect(m, "GET", LIST, 200,
                   LIST_BODY("10", ITEM("a", "1") "," ITEM("b", "2") "," ITEM("d", "4")));
    stream(WATCH "10", ev);
    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("40", ITEM("a", "12") "," ITEM("c", "3")));
    held(WATCH "40", NULL);
    start(&o);
    cr_assert_eq(inf_store(inf), s);
    linerec_await(&rec, "del b@2", 30000);
    linerec_await(&rec, "del d@4", 30000);
    linerec_await(&rec, "add c@3", 30000);
    linerec_await(&rec, "upd a@1>12", 30000);
    assert_rv("Etcd/shoot/a", "12");
    assert_rv("Etcd/shoot/c", "3");
    cr_assert_eq(store_get(s, "Etcd/shoot/b", &got, NULL), KERR_NOTFOUND, "the DELETED event");
    cr_assert_eq(store_get(s, "Etcd/shoot/d", &got, NULL), KERR_NOTFOUND, "gone at the relist");
    inf_free(inf);
    inf = NULL;
    read_inf = NULL;
    cr_assert_eq(store_count(s), 5,
                 "the other kind's a, b, d kept; the store outlives the informer");
    cr_assert_eq(store_get(s, "Other/shoot/b", &got, NULL), KERR_OK);
    cJSON_Delete(got);
    store_free(s);
}

/*
 * As expired_error_event_relists_and_reports_the_differences, with the controller's
 * settings: jarena installed, a projection and a compact store. The LIST pages and the
 * objects handed to the handlers are the thread's arena's; what the store and the handlers
 * see is the same, and nothing of the arena outlives the list.
 */
Test(informer, a_relist_through_the_arena_reports_the_differences)
{
    static const char *const ev[] = {
        EVENT("MODIFIED", "a", "11"),
        "{\"type\":\"ERROR\",\"object\":" STATUS_410 "}\n",
        NULL,
    };
    struct inf_opts o = { .project = kobj_project_paths,
                          .project_ctx = (void *)KOBJ_META_PATHS,
                          .compact = 1 };
    cJSON *got = NULL;

    cr_assert_eq(jarena_install(&err), KERR_OK, "%s", err.msg);
    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("10", ITEM("a", "1") "," ITEM("b", "2")));
    stream(WATCH "10", ev);
    mockapi_expect(m, "GET", LIST, 200, LIST_BODY("40", ITEM("a", "12") "," ITEM("c", "3")));
    held(WATCH "40", NULL);
    start(&o);
    linerec_await(&rec, "add a@1", 30000);
    linerec_await(&rec, "add b@2", 30000);
    linerec_await(&rec, "del b@2", 30000);
    linerec_await(&rec, "add c@3", 30000);
    linerec_await(&rec, "upd a@11>12", 30000);
    cr_assert_eq(store_count(inf_store(inf)), 2);
    assert_rv("shoot/a", "12");
    assert_rv("shoot/c", "3");
    cr_assert_eq(store_get(inf_store(inf), "shoot/c", &got, NULL), KERR_OK);
    cr_assert_null(kjson_get(got, "spec"), "projected away");
    cJSON_Delete(got);
    cr_assert_eq(mockapi_wait_served(m, 3, 1, 30000), 0, "watch resumed from the relist's RV");
    cr_assert_eq(mockapi_unexpected(m), 0);
}
