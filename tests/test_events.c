/* Tests of common/events: the Event body, series, rate limits, queue overflow, retries and
 * flushing, against scripted API answers (tests/support/mockapi). */
#include "common/events.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/k8s.h"
#include "common/kjson.h"
#include "common/ktime.h"
#include "common/log.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimcli.h"
#include "tests/support/ksimfix.h"
#include "tests/support/mockfix.h"
#include "tests/support/testutil.h"

#define EVENTS_PATH "/apis/events.k8s.io/v1/namespaces/ns/events"

static struct mockapi *m;
static struct k8s_client *c;
static struct kerr_info err;

static const struct ev_ref ETCD = { "druid.gardener.cloud/v1alpha1", "Etcd", "ns", "etcd-a",
                                    "0b5c-uid" };
static const struct ev_ref OTHER = { "druid.gardener.cloud/v1alpha1", "Etcd", "ns", "etcd-b",
                                     "1c6d-uid" };

/* Poll expr every 2 ms for up to 5 s. */
#define AWAIT(expr) TESTUTIL_AWAIT(expr, 30000)

static void start(void)
{
    struct k8s_client_opts o = { .request_timeout_ms = 3000, .max_retries = -1 };

    log_set_level(LOG_ERROR);
    mockfix_start(&m, &c, NULL, &o);
}

static void stop(void)
{
    mockfix_stop(m, c);
}

static struct ev_opts base_opts(void)
{
    struct ev_opts o = { .reporting_controller = "etcd-warden.io/controller",
                         .reporting_instance = "warden-controller-0",
                         .retry_interval_ms = 30,
                         .patch_interval_ms = 50,
                         .flush_timeout_ms = 1000 };

    return o;
}

static struct ev_recorder *new_rec(const struct ev_opts *o)
{
    struct ev_recorder *r = NULL;

    cr_assert_eq(ev_new(c, o, &r, &err), KERR_OK, "%s", err.msg);
    return r;
}

/* Answer every create and every patch with success. */
static void accept_all(void)
{
    mockapi_add(m, &(struct mockapi_spec){
                       .method = "POST", .target = EVENTS_PATH, .status = 201, .times = -1 });
    mockapi_add(m, &(struct mockapi_spec){
                       .method = "PATCH", .target = EVENTS_PATH "/*", .body = "{}", .times = -1 });
}

static struct ev_stats stats(struct ev_recorder *r)
{
    struct ev_stats s;

    ev_get_stats(r, &s);
    return s;
}

Test(events, created_event_has_every_required_field, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r = new_rec(&o);
    const char *name;
    cJSON *b;
    char *end;

    accept_all();
    cr_assert_eq(ev_emit(r, &ETCD, EV_WARNING, "SnapshotFailed", "Hibernate", "no space left"),
                 KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 1, 30000), 0);
    b = mockfix_body(m, 0, "POST", NULL);
    cr_assert_str_eq(mockapi_request(m, 0)->path, EVENTS_PATH);
    cr_assert_str_eq(kjson_get_str(b, "apiVersion"), "events.k8s.io/v1");
    cr_assert_str_eq(kjson_get_str(b, "kind"), "Event");
    name = kjson_get_str(b, "metadata.name");
    cr_assert_not_null(name);
    cr_assert_eq(strncmp(name, "etcd-a.", 7), 0, "%s", name);
    cr_assert(strtoull(name + 7, &end, 16) > 0 && *end == '\0', "hex timestamp: %s", name);
    cr_assert_str_eq(kjson_get_str(b, "metadata.namespace"), "ns");
    jsonfix_assert_microtime(kjson_get_str(b, "eventTime"));
    cr_assert_str_eq(kjson_get_str(b, "reportingController"), "etcd-warden.io/controller");
    cr_assert_str_eq(kjson_get_str(b, "reportingInstance"), "warden-controller-0");
    cr_assert_str_eq(kjson_get_str(b, "action"), "Hibernate");
    cr_assert_str_eq(kjson_get_str(b, "reason"), "SnapshotFailed");
    cr_assert_str_eq(kjson_get_str(b, "type"), "Warning");
    cr_assert_str_eq(kjson_get_str(b, "note"), "no space left");
    cr_assert_str_eq(kjson_get_str(b, "regarding.apiVersion"), "druid.gardener.cloud/v1alpha1");
    cr_assert_str_eq(kjson_get_str(b, "regarding.kind"), "Etcd");
    cr_assert_str_eq(kjson_get_str(b, "regarding.namespace"), "ns");
    cr_assert_str_eq(kjson_get_str(b, "regarding.name"), "etcd-a");
    cr_assert_str_eq(kjson_get_str(b, "regarding.uid"), "0b5c-uid");
    cr_assert_null(kjson_get(b, "series"), "a first occurrence has no series");
    AWAIT(stats(r).created == 1);
    cr_assert_eq(stats(r).created, 1);
    cJSON_Delete(b);
    ev_free(r);
}

Test(events, repeats_become_a_series, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r = new_rec(&o);
    char path[512];
    cJSON *created, *p;

    accept_all();
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Hibernated", "Hibernate", "scaled to 0"), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 1, 30000), 0);
    created = mockfix_body(m, 0, "POST", NULL);
    snprintf(path, sizeof(path), "%s/%s", EVENTS_PATH, kjson_get_str(created, "metadata.name"));
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Hibernated", "Hibernate", "scaled to 0"), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 2, 30000), 0);
    p = mockfix_body(m, 1, "PATCH", NULL);
    cr_assert_str_eq(mockapi_request(m, 1)->path, path);
    cr_assert_not_null(
        strstr(mockapi_req_header(mockapi_request(m, 1), "Content-Type"), "merge-patch+json"));
    cr_assert_eq(jsonfix_int_at(p, "series.count"), 2);
    jsonfix_assert_microtime(kjson_get_str(p, "series.lastObservedTime"));
    cJSON_Delete(p);
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Hibernated", "Hibernate", "scaled to 0"), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 3, 30000), 0);
    p = mockfix_body(m, 2, "PATCH", NULL);
    cr_assert_eq(jsonfix_int_at(p, "series.count"), 3);
    cJSON_Delete(p);
    /* another note is another event */
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Hibernated", "Hibernate", "scaled to 1"), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 4, 30000), 0);
    p = mockfix_body(m, 3, "POST", NULL);
    cJSON_Delete(p);
    AWAIT(stats(r).created == 2);
    cr_assert_eq(stats(r).created, 2);
    cr_assert_eq(stats(r).series_updates, 2);
    cr_assert_eq(stats(r).repeats, 2);
    cJSON_Delete(created);
    ev_free(r);
}

Test(events, repeats_within_the_patch_interval_are_coalesced, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r;
    cJSON *p;
    int i;

    o.patch_interval_ms = 400;
    r = new_rec(&o);
    accept_all();
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Synced", "Reconcile", NULL), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 1, 30000), 0);
    for (i = 0; i < 3; i++)
        cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Synced", "Reconcile", NULL), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 2, 30000), 0);
    p = mockfix_body(m, 1, "PATCH", NULL);
    cr_assert_eq(jsonfix_int_at(p, "series.count"), 4, "one patch for the three repeats");
    cJSON_Delete(p);
    cJSON_Delete(mockfix_body(m, 0, "POST", NULL));
    ev_free(r);
}

Test(events, a_repeat_after_the_window_starts_a_new_event, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r;
    cJSON *a, *b;

    o.series_window_ms = 100;
    r = new_rec(&o);
    accept_all();
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Synced", "Reconcile", "ok"), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 1, 30000), 0);
    testutil_pause_ms(150); /* the window under test */
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Synced", "Reconcile", "ok"), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 2, 30000), 0);
    a = mockfix_body(m, 0, "POST", NULL);
    b = mockfix_body(m, 1, "POST", NULL);
    cr_assert_str_neq(kjson_get_str(a, "metadata.name"), kjson_get_str(b, "metadata.name"));
    cr_assert_null(kjson_get(b, "series"));
    cJSON_Delete(a);
    cJSON_Delete(b);
    ev_free(r);
}

Test(events, emit_never_blocks_on_a_hanging_server, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r;
    long long t0, took;
    int i;

    o.flush_timeout_ms = 50;
    r = new_rec(&o);
    mockapi_add(m, &(struct mockapi_spec){
                       .method = "POST", .target = EVENTS_PATH, .delay_ms = 1000, .times = -1 });
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "First", "Reconcile", NULL), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 1, 30000), 0, "the sender is now waiting on the server");
    t0 = ktime_mono_ms();
    for (i = 0; i < 200; i++)
        cr_assert_eq(
            ev_emitf(r, i % 2 ? &ETCD : &OTHER, EV_NORMAL, "Step", "Reconcile", "step %d", i),
            KERR_OK);
    took = ktime_mono_ms() - t0;
    /* emits that waited for the server would take 200 s */
    cr_assert(took < 10000, "200 emits took %lld ms while the server hangs", took);
    cr_assert_eq(stats(r).emitted, 201);
    t0 = ktime_mono_ms();
    ev_free(r);
    took = ktime_mono_ms() - t0;
    /* sending the backlog would take 200 s */
    cr_assert(took < 20000, "stop must not send the backlog past its deadline: %lld ms", took);
}

Test(events, full_queue_drops_and_counts, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r;
    int i, ok = 0, full = 0;
    enum kerr rc;

    o.queue_size = 5;
    o.flush_timeout_ms = 50;
    r = new_rec(&o);
    mockapi_add(m, &(struct mockapi_spec){
                       .method = "POST", .target = EVENTS_PATH, .delay_ms = 400, .times = -1 });
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "First", "Reconcile", NULL), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 1, 30000), 0);
    for (i = 0; i < 20; i++) {
        rc = ev_emitf(r, &ETCD, EV_NORMAL, "Step", "Reconcile", "step %d", i);
        ok += rc == KERR_OK;
        full += rc == KERR_TOOMANY;
    }
    cr_assert_eq(ok, 5);
    cr_assert_eq(full, 15);
    cr_assert_eq(stats(r).dropped_full, 15);
    cr_assert_eq(stats(r).emitted, 6);
    ev_free(r);
}

Test(events, note_is_cut_at_1kb_on_a_character_boundary, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r = new_rec(&o);
    char *big = malloc(2001), *utf = malloc(1026);
    const char *n0, *n1;
    cJSON *a, *b;

    memset(big, 'x', 2000);
    big[2000] = '\0';
    memset(utf, 'y', 1023);
    memcpy(utf + 1023, "\xc3\xa9", 3); /* U+00E9 straddles byte 1024 */
    accept_all();
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Big", "Reconcile", big), KERR_OK);
    cr_assert_eq(ev_emitf(r, &OTHER, EV_NORMAL, "Utf", "Reconcile", "%s", utf), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 2, 30000), 0);
    a = mockfix_body(m, 0, "POST", NULL);
    b = mockfix_body(m, 1, "POST", NULL);
    n0 = kjson_get_str(a, "note");
    n1 = kjson_get_str(b, "note");
    cr_assert_eq(strlen(n0), EV_NOTE_MAX);
    cr_assert_eq(strlen(n1), 1023, "the two-byte character must not be split");
    cr_assert_eq(n1[1022], 'y');
    cJSON_Delete(a);
    cJSON_Delete(b);
    free(big);
    free(utf);
    ev_free(r);
}

Test(events, new_events_are_rate_limited_per_object, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r;
    char reason[32];
    int i;

    o.spam_burst = 3;
    o.spam_qps = 0.0001;
    r = new_rec(&o);
    accept_all();
    for (i = 0; i < 5; i++) {
        snprintf(reason, sizeof(reason), "Reason%d", i);
        cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, reason, "Reconcile", NULL), KERR_OK);
    }
    cr_assert_eq(ev_emit(r, &OTHER, EV_NORMAL, "Reason0", "Reconcile", NULL), KERR_OK);
    AWAIT(stats(r).created + stats(r).dropped_spam == 6);
    cr_assert_eq(stats(r).created, 4, "three for the first object, one for the other");
    cr_assert_eq(stats(r).dropped_spam, 2);
    cr_assert_eq(mockapi_request_count(m), 4);
    ev_free(r);
}

Test(events, failed_creates_are_retried, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r = new_rec(&o);

    mockapi_add(m, &(struct mockapi_spec){
                       .method = "POST", .target = EVENTS_PATH, .status = 503, .times = 2 });
    mockapi_expect(m, "POST", EVENTS_PATH, 201, "{}");
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Synced", "Reconcile", NULL), KERR_OK);
    AWAIT(stats(r).created == 1);
    cr_assert_eq(stats(r).created, 1);
    cr_assert_eq(stats(r).send_errors, 2);
    cr_assert_eq(mockapi_request_count(m), 3);
    ev_free(r);
}

Test(events, retries_are_bounded_and_client_errors_not_retried, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r;

    o.max_tries = 3;
    r = new_rec(&o);
    mockapi_add(m, &(struct mockapi_spec){
                       .method = "POST", .target = EVENTS_PATH, .status = 503, .times = 3 });
    mockapi_expect(m, "POST", EVENTS_PATH, 403, NULL);
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Synced", "Reconcile", NULL), KERR_OK);
    AWAIT(stats(r).dropped_failed == 1);
    cr_assert_eq(stats(r).dropped_failed, 1);
    cr_assert_eq(mockapi_request_count(m), 3, "three tries, then dropped");
    cr_assert_eq(ev_emit(r, &OTHER, EV_NORMAL, "Synced", "Reconcile", NULL), KERR_OK);
    AWAIT(stats(r).dropped_failed == 2);
    cr_assert_eq(stats(r).dropped_failed, 2);
    cr_assert_eq(mockapi_request_count(m), 4, "a 403 is not retried");
    cr_assert_eq(stats(r).created, 0);
    ev_free(r);
}

Test(events, stop_flushes_pending_series, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r;
    cJSON *p;

    o.patch_interval_ms = 60000;
    r = new_rec(&o);
    accept_all();
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Synced", "Reconcile", NULL), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 1, 30000), 0);
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Synced", "Reconcile", NULL), KERR_OK);
    AWAIT(stats(r).repeats == 1);
    cr_assert_eq(mockapi_request_count(m), 1, "the patch waits for its interval");
    ev_stop(r);
    cr_assert_eq(mockapi_request_count(m), 2);
    p = mockfix_body(m, 1, "PATCH", NULL);
    cr_assert_eq(jsonfix_int_at(p, "series.count"), 2);
    cJSON_Delete(p);
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Synced", "Reconcile", NULL), KERR_CLOSED);
    ev_free(r);
}

Test(events, options_and_arguments_are_checked, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r = NULL;
    struct ev_ref noname = { "v1", "Pod", "ns", NULL, NULL };
    char longer[EV_FIELD_MAX + 2];

    memset(longer, 'r', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    o.reporting_controller = NULL;
    cr_assert_eq(ev_new(c, &o, &r, &err), KERR_INVAL);
    cr_assert_null(r);
    o = base_opts();
    o.reporting_instance = longer;
    cr_assert_eq(ev_new(c, &o, &r, &err), KERR_INVAL);
    o = base_opts();
    o.retry_interval_ms = -1;
    cr_assert_eq(ev_new(c, &o, &r, &err), KERR_INVAL);
    o = base_opts();
    r = new_rec(&o);
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "", "Reconcile", NULL), KERR_INVAL);
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, "Reason", NULL, NULL), KERR_INVAL);
    cr_assert_eq(ev_emit(r, &ETCD, EV_NORMAL, longer, "Reconcile", NULL), KERR_INVAL);
    cr_assert_eq(ev_emit(r, &noname, EV_NORMAL, "Reason", "Reconcile", NULL), KERR_INVAL);
    cr_assert_eq(stats(r).emitted, 0);
    ev_free(r);
    ev_free(NULL);
}

Test(events, cluster_scoped_objects_get_default_namespace, .init = start, .fini = stop)
{
    static const char node[] =
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"uid\":\"u\"}}";
    struct ev_opts o = base_opts();
    struct ev_recorder *r = new_rec(&o);
    struct ev_ref ref;
    cJSON *obj = cJSON_Parse(node), *b;

    mockapi_add(
        m, &(struct mockapi_spec){ .method = "POST",
                                   .target = "/apis/events.k8s.io/v1/namespaces/default/events",
                                   .status = 201 });
    cr_assert_eq(ev_ref_from_object(obj, &ref), KERR_OK);
    cr_assert_str_eq(ref.kind, "Node");
    cr_assert_null(ref.namespace);
    cr_assert_eq(ev_emit(r, &ref, EV_NORMAL, "Seen", "Observe", NULL), KERR_OK);
    cr_assert_eq(mockapi_wait_requests(m, 1, 30000), 0);
    b = mockfix_body(m, 0, "POST", NULL);
    cr_assert_str_eq(kjson_get_str(b, "metadata.namespace"), "default");
    cr_assert_null(kjson_get(b, "regarding.namespace"));
    cr_assert_eq(mockapi_unexpected(m), 0);
    cJSON_Delete(b);
    cJSON_Delete(obj);
    ev_free(r);
}

/* Against kube-sim: the Event is accepted as built and its series is stored. */

static const struct k8s_resource EVENT_RES = { "events.k8s.io", "v1", "events", 1 };

/* series.count of the only Event in default, or -1. */
static int64_t stored_count(struct k8s_client *kc, char *name, size_t size)
{
    cJSON *list = NULL;
    const cJSON *items, *ev;
    int64_t n = -1;

    if (k8s_list(kc, &EVENT_RES, "default", NULL, &list, &err) != KERR_OK)
        return -1;
    items = kjson_get_arr(list, "items");
    if (items && cJSON_GetArraySize(items) == 1) {
        ev = cJSON_GetArrayItem(items, 0);
        snprintf(name, size, "%s", kjson_get_str(ev, "metadata.name"));
        if (kjson_get_int64(ev, "series.count", &n) != KERR_OK)
            n = 1;
    }
    cJSON_Delete(list);
    return n;
}

Test(events, series_is_stored_by_the_api_server, .timeout = 60)
{
    static const struct ev_ref pod = { "v1", "Pod", "default", "etcd-a-0", "u-1" };
    struct ksim_harness *h;
    struct ev_opts o = base_opts();
    struct k8s_client *kc;
    struct ev_recorder *r = NULL;
    char name[300] = "";

    log_set_level(LOG_ERROR);
    h = ksimfix_start(NULL);
    kc = ksimcli_admin(h);
    cr_assert_eq(ev_new(kc, &o, &r, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(ev_emit(r, &pod, EV_WARNING, "BackOff", "Restart", "restarting"), KERR_OK);
    AWAIT(stats(r).created == 1);
    cr_assert_eq(stats(r).created, 1, "create refused: %llu errors",
                 (unsigned long long)stats(r).send_errors);
    cr_assert_eq(stored_count(kc, name, sizeof(name)), 1);
    cr_assert_eq(strncmp(name, "etcd-a-0.", 9), 0, "%s", name);
    cr_assert_eq(ev_emit(r, &pod, EV_WARNING, "BackOff", "Restart", "restarting"), KERR_OK);
    cr_assert_eq(ev_emit(r, &pod, EV_WARNING, "BackOff", "Restart", "restarting"), KERR_OK);
    AWAIT(stored_count(kc, name, sizeof(name)) == 3);
    cr_assert_eq(stored_count(kc, name, sizeof(name)), 3);
    cr_assert_eq(stats(r).send_errors, 0);
    ev_free(r);
    k8s_client_free(kc);
    ksim_harness_stop(h);
}

/* ev_log_emitf: the note logged (namespace, name, reason; warn for a Warning) and recorded as an
 * Event about the object; without a recorder, logged only. */
Test(events, log_emitf_logs_and_records, .init = start, .fini = stop)
{
    struct ev_opts o = base_opts();
    struct ev_recorder *r = new_rec(&o);
    cJSON *etcd = jsonfix_parse("{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":"
                                "\"Etcd\",\"metadata\":{\"namespace\":\"ns\",\"name\":\"etcd-a\","
                                "\"uid\":\"0b5c-uid\"}}"),
          *b;
    char text[4096] = "";
    int fds[2];
    ssize_t n;

    cr_assert_eq(pipe(fds), 0);
    accept_all();
    log_set_level(LOG_INFO);
    log_set_fd(fds[1]);
    ev_log_emitf(r, etcd, EV_WARNING, "FinalSnapshotFailing", "Hibernation", "attempt %d failed",
                 2);
    ev_log_emitf(NULL, etcd, EV_NORMAL, "WokeUp", "Hibernation", "woke up");
    log_set_fd(-1);
    log_set_level(LOG_ERROR);
    cr_assert_eq(mockapi_wait_requests(m, 1, 30000), 0);
    b = mockfix_body(m, 0, "POST", NULL);
    cr_assert_str_eq(kjson_get_str(b, "note"), "attempt 2 failed");
    cr_assert_str_eq(kjson_get_str(b, "reason"), "FinalSnapshotFailing");
    cr_assert_str_eq(kjson_get_str(b, "action"), "Hibernation");
    cr_assert_str_eq(kjson_get_str(b, "type"), "Warning");
    cr_assert_str_eq(kjson_get_str(b, "regarding.name"), "etcd-a");
    cr_assert_str_eq(kjson_get_str(b, "regarding.uid"), "0b5c-uid");
    cJSON_Delete(b);
    ev_free(r);
    close(fds[1]);
    n = read(fds[0], text, sizeof(text) - 1);
    close(fds[0]);
    cr_assert_gt(n, 0);
    cr_assert(strstr(text, "\"level\":\"warn\",\"msg\":\"attempt 2 failed\",\"namespace\":\"ns\","
                           "\"name\":\"etcd-a\",\"reason\":\"FinalSnapshotFailing\""),
              "%s", text);
    cr_assert(strstr(text, "\"level\":\"info\",\"msg\":\"woke up\""), "%s", text);
    cr_assert_eq(mockapi_request_count(m), 1, "no recorder: no Event");
    cJSON_Delete(etcd);
}
