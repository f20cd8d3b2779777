/* Tests of k8s_watch (common/k8s) against tests/support/mockapi streams. */
#include "common/k8s.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/support/mockapi.h"
#include "tests/support/mockfix.h"

static const struct k8s_resource ETCD = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };

#define WATCH_PATH "/apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds"

static struct mockapi *m;
static struct k8s_client *c;
static struct kerr_info err;

/* What the data callback saw. */
struct seen {
    struct buf data;
    int calls;
    int stop_after; /* return non-zero after this many calls; 0 = never */
};

static struct seen seen;

static int on_data(void *arg, const char *data, size_t len)
{
    struct seen *s = arg;

    cr_assert_eq(buf_append(&s->data, data, len), KERR_OK);
    s->calls++;
    return s->stop_after && s->calls >= s->stop_after;
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void start_with(long idle_s)
{
    struct k8s_client_opts o = { .watch_idle_s = idle_s };

    mockfix_start(&m, &c, "t", &o);
    buf_init(&seen.data, 1 << 20);
    seen.calls = 0;
    seen.stop_after = 0;
}

static void start(void)
{
    start_with(0);
}

static void stop(void)
{
    mockfix_stop(m, c);
    buf_release(&seen.data);
}

static enum kerr watch(const atomic_int *cancel)
{
    struct k8s_watch_opts o = { .resource_version = "5",
                                .timeout_seconds = 300,
                                .label_selector = "app=etcd",
                                .cancel = cancel,
                                .on_data = on_data,
                                .arg = &seen };

    return k8s_watch(c, &ETCD, "shoot", &o, &err);
}

static int add_held(void)
{
    static const char *const first[] = { "{\"type\":\"ADDED\",\"object\":{}}\n", NULL };

    return mockapi_add(
        m, &(struct mockapi_spec){
               .method = "GET", .target = WATCH_PATH "?watch=1", .chunks = first, .hold = 1 });
}

Test(k8s_watch, chunks_reach_the_callback_as_they_arrive, .init = start, .fini = stop)
{
    static const char *const chunks[] = {
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"6\"}}}\n{\"type\":"
        "\"MOD",
        "IFIED\",\"object\":{\"metadata\":{\"resourceVersion\":\"7\"}}}\n",
        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n", NULL
    };
    const struct mockapi_req *q;

    mockapi_add(m, &(struct mockapi_spec){ .method = "GET",
                                           .target = WATCH_PATH "?watch=1&resourceVersion=5",
                                           .chunks = chunks,
                                           .chunk_delay_ms = 100 });
    cr_assert_eq(watch(NULL), KERR_OK, "%s", err.msg);
    cr_assert_geq(seen.calls, 3, "one call per chunk at least");
    cr_assert_eq(seen.data.len, strlen(chunks[0]) + strlen(chunks[1]) + strlen(chunks[2]));
    cr_assert(strstr(buf_str(&seen.data), "MODIFIED") != NULL);
    q = mockapi_last(m);
    cr_assert_str_eq(mockapi_req_param(q, "allowWatchBookmarks"), "true");
    cr_assert_str_eq(mockapi_req_param(q, "timeoutSeconds"), "300");
    cr_assert_str_eq(mockapi_req_param(q, "labelSelector"), "app=etcd");
    cr_assert_str_eq(mockapi_req_header(q, "Authorization"), "Bearer t");
}

Test(k8s_watch, callback_stops_the_watch, .init = start, .fini = stop)
{
    double t0 = now();

    add_held();
    seen.stop_after = 1;
    cr_assert_eq(watch(NULL), KERR_CANCELLED);
    cr_assert_eq(seen.calls, 1);
    cr_assert_lt(now() - t0, 30.0, "the held stream never ends by itself");
}

struct poke {
    int reply;
    atomic_int *flag;
    int mode; /* 0 set flag, 1 k8s_client_stop, 2 push then drop, 3 push then clean end */
};

static void *poker(void *arg)
{
    struct poke *p = arg;

    if (mockapi_wait_served(m, p->reply, 1, 30000) != 0)
        return NULL;
    if (p->mode == 0)
        atomic_store(p->flag, 1);
    else if (p->mode == 1)
        k8s_client_stop(c);
    else {
        mockapi_push(m, p->reply, "{\"type\":\"DELETED\",\"object\":{}}\n", 0);
        mockapi_end(m, p->reply, p->mode == 2);
    }
    return NULL;
}

static enum kerr watch_poked(int mode, atomic_int *flag)
{
    struct poke p = { add_held(), flag, mode };
    pthread_t th;
    enum kerr rc;

    cr_assert_eq(pthread_create(&th, NULL, poker, &p), 0);
    rc = watch(flag);
    pthread_join(th, NULL);
    return rc;
}

Test(k8s_watch, cancel_flag_from_another_thread, .init = start, .fini = stop)
{
    atomic_int flag = 0;
    double t0 = now();

    cr_assert_eq(watch_poked(0, &flag), KERR_CANCELLED);
    cr_assert_lt(now() - t0, 30.0, "the held stream never ends by itself");
    cr_assert_leq(seen.calls, 1, "the flag may beat the first chunk");
}

Test(k8s_watch, client_stop_ends_watches_and_refuses_requests, .init = start, .fini = stop)
{
    cJSON *obj = NULL;
    size_t n;

    cr_assert_eq(watch_poked(1, NULL), KERR_CANCELLED);
    n = mockapi_request_count(m);
    cr_assert_eq(k8s_get(c, &ETCD, "shoot", "main", NULL, &obj, &err), KERR_CANCELLED);
    cr_assert_eq(mockapi_request_count(m), n, "nothing sent after stop");
}

Test(k8s_watch, dropped_stream_is_a_transport_error, .init = start, .fini = stop)
{
    cr_assert_eq(watch_poked(2, NULL), KERR_HTTP);
    cr_assert(strstr(buf_str(&seen.data), "DELETED") != NULL, "pushed data arrived first");
}

Test(k8s_watch, clean_end_and_connection_reuse, .init = start, .fini = stop)
{
    cJSON *obj = NULL;

    cr_assert_eq(watch_poked(3, NULL), KERR_OK, "%s", err.msg);
    cr_assert(strstr(buf_str(&seen.data), "DELETED") != NULL);
    mockapi_expect(m, "GET", WATCH_PATH "/main", 200, "{}");
    cr_assert_eq(k8s_get(c, &ETCD, "shoot", "main", NULL, &obj, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(mockapi_connections(m), 1);
    cJSON_Delete(obj);
}

Test(k8s_watch, error_answer_is_returned_not_streamed, .init = start, .fini = stop)
{
    mockapi_expect(m, "GET", WATCH_PATH "?watch=1", 410,
                   "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\","
                   "\"message\":\"too old resource version: 5 (80)\"}");
    cr_assert_eq(watch(NULL), KERR_GONE);
    cr_assert_eq(seen.calls, 0);
    cr_assert_str_eq(err.reason, "Expired");
    cr_assert_str_eq(err.msg, "too old resource version: 5 (80)");
}

static void start_idle(void)
{
    start_with(1);
}

Test(k8s_watch, silent_stream_times_out, .init = start_idle, .fini = stop)
{
    double t0 = now();

    mockapi_add(
        m, &(struct mockapi_spec){ .method = "GET", .target = WATCH_PATH "?watch=1", .hold = 1 });
    cr_assert_eq(watch(NULL), KERR_TIMEOUT);
    cr_assert_eq(seen.calls, 0);
    cr_assert_geq(now() - t0, 0.9);
    cr_assert_lt(now() - t0, 30.0, "the held stream never ends by itself");
}

Test(k8s_watch, needs_a_callback, .init = start, .fini = stop)
{
    struct k8s_watch_opts o = { 0 };

    cr_assert_eq(k8s_watch(c, &ETCD, "shoot", &o, &err), KERR_INVAL);
    cr_assert_eq(k8s_watch(c, &ETCD, "shoot", NULL, &err), KERR_INVAL);
    cr_assert_eq(mockapi_request_count(m), 0);
}
