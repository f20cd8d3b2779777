/*
 * Tests of the transport of common/k8s against tests/support/mockapi: token
 * re-read on 401, Retry-After, timeouts, body cap, keep-alive, concurrency,
 * the rate limit, the request hook, and watch streams with their cancellation.
 */
#include "common/k8s.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cfg.h"
#include "tests/support/mockapi.h"

static const struct k8s_resource PODS = { "", "v1", "pods", 1 };

#define POD_PATH "/api/v1/namespaces/default/pods/p"
#define POD_BODY "{\"kind\":\"Pod\"}"
#define STATUS_BODY(code, reason) \
    "{\"kind\":\"Status\",\"code\":" #code ",\"reason\":\"" reason "\",\"message\":\"m\"}"

static struct mockapi *m;
static struct k8s_client *c;
static struct kerr_info err;
static char token_path[64];

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_token(const char *tok)
{
    FILE *f = fopen(token_path, "w");

    cr_assert_not_null(f);
    fputs(tok, f);
    fclose(f);
}

static void start_with(const struct k8s_client_opts *o)
{
    struct cfg_rest rest;
    int fd;

    cr_assert_eq(mockapi_new(&m, &err), KERR_OK, "%s", err.msg);
    snprintf(token_path, sizeof(token_path), "/tmp/k8s-token-XXXXXX");
    fd = mkstemp(token_path);
    cr_assert_geq(fd, 0);
    close(fd);
    write_token("old-token\n");
    cfg_rest_init(&rest);
    rest.server = strdup(mockapi_url(m));
    rest.token_file = strdup(token_path);
    cr_assert_eq(k8s_client_new(&rest, o, &c, &err), KERR_OK, "%s", err.msg);
    cfg_rest_release(&rest);
}

static void start(void)
{
    start_with(NULL);
}

static void stop(void)
{
    k8s_client_free(c);
    mockapi_free(m);
    unlink(token_path);
}

static enum kerr get_pod(void)
{
    cJSON *obj = NULL;
    enum kerr rc = k8s_get(c, &PODS, "default", "p", NULL, &obj, &err);

    cJSON_Delete(obj);
    return rc;
}

Test(k8s_transport, unauthorized_rereads_the_token_once, .init = start, .fini = stop)
{
    mockapi_expect(m, "GET", POD_PATH, 200, POD_BODY);
    mockapi_expect(m, "GET", POD_PATH, 401, STATUS_BODY(401, "Unauthorized"));
    mockapi_expect(m, "GET", POD_PATH, 200, POD_BODY);
    cr_assert_eq(get_pod(), KERR_OK, "%s", err.msg);
    write_token("new-token\n"); /* rotated; the client still caches the old one */
    cr_assert_eq(get_pod(), KERR_OK, "%s", err.msg);
    cr_assert_eq(mockapi_request_count(m), 3);
    cr_assert_str_eq(mockapi_req_header(mockapi_request(m, 1), "Authorization"),
                     "Bearer old-token");
    cr_assert_str_eq(mockapi_req_header(mockapi_request(m, 2), "Authorization"),
                     "Bearer new-token");
}

Test(k8s_transport, unauthorized_twice_is_an_error, .init = start, .fini = stop)
{
    mockapi_add(m, &(struct mockapi_spec){ .method = "GET",
                                           .target = POD_PATH,
                                           .status = 401,
                                           .body = STATUS_BODY(401, "Unauthorized"),
                                           .times = -1 });
    cr_assert_eq(get_pod(), KERR_UNAUTHORIZED);
    cr_assert_eq(err.http_status, 401);
    cr_assert_eq(mockapi_request_count(m), 2, "exactly one retry");
}

Test(k8s_transport, too_many_requests_waits_retry_after, .init = start, .fini = stop)
{
    double t0 = now();

    mockapi_add(m, &(struct mockapi_spec){ .method = "GET",
                                           .target = POD_PATH,
                                           .status = 429,
                                           .headers = "Retry-After: 1",
                                           .body = STATUS_BODY(429, "TooManyRequests") });
    mockapi_expect(m, "GET", POD_PATH, 200, POD_BODY);
    cr_assert_eq(get_pod(), KERR_OK, "%s", err.msg);
    cr_assert_eq(mockapi_request_count(m), 2);
    cr_assert_geq(now() - t0, 0.95, "slept the Retry-After second");
    cr_assert_lt(now() - t0, 30.0, "a second, not a unit larger");
}

static void start_two_retries(void)
{
    struct k8s_client_opts o = { .max_retries = 2, .max_retry_delay_ms = 100 };

    start_with(&o);
}

Test(k8s_transport, too_many_requests_gives_up_after_max_retries, .init = start_two_retries,
     .fini = stop)
{
    double t0 = now();

    mockapi_add(m, &(struct mockapi_spec){ .method = "GET",
                                           .target = POD_PATH,
                                           .status = 429,
                                           .headers = "Retry-After: 30",
                                           .body = STATUS_BODY(429, "TooManyRequests"),
                                           .times = -1 });
    cr_assert_eq(get_pod(), KERR_TOOMANY);
    cr_assert_eq(err.http_status, 429);
    cr_assert_eq(mockapi_request_count(m), 3, "one try and two retries");
    cr_assert_lt(now() - t0, 30.0, "Retry-After: 30 was capped at 100 ms (uncapped: 60 s)");
}

Test(k8s_transport, unavailable_with_retry_after_is_retried_for_idempotent_verbs,
     .init = start_two_retries, .fini = stop)
{
    cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"p\"}}");
    struct mockapi_spec busy = { .target = POD_PATH,
                                 .status = 503,
                                 .headers = "Retry-After: 0",
                                 .body = STATUS_BODY(503, "ServiceUnavailable") };

    busy.method = "GET";
    mockapi_add(m, &busy);
    mockapi_expect(m, "GET", POD_PATH, 200, POD_BODY);
    cr_assert_eq(get_pod(), KERR_OK, "%s", err.msg);
    cr_assert_eq(mockapi_request_count(m), 2);

    busy.method = "PATCH"; /* not idempotent: no retry */
    mockapi_add(m, &busy);
    cr_assert_eq(k8s_patch(c, &PODS, "default", "p", K8S_PATCH_MERGE, obj, NULL, NULL, &err),
                 KERR_API);
    cr_assert_eq(err.http_status, 503);
    cr_assert_str_eq(err.reason, "ServiceUnavailable");
    cr_assert_eq(mockapi_request_count(m), 3);

    mockapi_expect(m, "GET", POD_PATH, 503, STATUS_BODY(503, "ServiceUnavailable"));
    cr_assert_eq(get_pod(), KERR_API, "no Retry-After: no retry");
    cr_assert_eq(mockapi_request_count(m), 4);
    cJSON_Delete(obj);
}

static void start_short_timeout(void)
{
    struct k8s_client_opts o = { .request_timeout_ms = 300 };

    start_with(&o);
}

Test(k8s_transport, slow_answer_times_out, .init = start_short_timeout, .fini = stop)
{
    double t0 = now();

    mockapi_add(m, &(struct mockapi_spec){
                       .method = "GET", .target = POD_PATH, .body = POD_BODY, .delay_ms = 20000 });
    cr_assert_eq(get_pod(), KERR_TIMEOUT);
    cr_assert_lt(now() - t0, 15.0, "cut at 300 ms, not after the 20 s answer");
    cr_assert(strstr(err.msg, POD_PATH) != NULL, "%s", err.msg);
}

Test(k8s_transport, connection_refused_is_a_transport_error)
{
    struct cfg_rest rest;
    struct k8s_client *cl = NULL;
    struct mockapi *gone = NULL;
    cJSON *obj = NULL;

    cr_assert_eq(mockapi_new(&gone, NULL), KERR_OK);
    cfg_rest_init(&rest);
    rest.server = strdup(mockapi_url(gone));
    mockapi_free(gone); /* nothing listens there any more */
    cr_assert_eq(k8s_client_new(&rest, NULL, &cl, &err), KERR_OK);
    cr_assert_eq(k8s_get(cl, &PODS, "default", "p", NULL, &obj, &err), KERR_HTTP);
    cr_assert_eq(err.http_status, 0);
    k8s_client_free(cl);
    cfg_rest_release(&rest);
}

static void start_small_body(void)
{
    struct k8s_client_opts o = { .max_body = 1024 };

    start_with(&o);
}

Test(k8s_transport, body_over_the_cap_is_refused, .init = start_small_body, .fini = stop)
{
    char big[4096];

    memset(big, ' ', sizeof(big) - 3);
    big[0] = '{';
    big[sizeof(big) - 2] = '}';
    big[sizeof(big) - 1] = '\0';
    mockapi_expect(m, "GET", POD_PATH, 200, big);
    cr_assert_eq(get_pod(), KERR_TOOBIG);
}

Test(k8s_transport, requests_reuse_one_connection, .init = start, .fini = stop)
{
    int i;

    mockapi_add(m, &(struct mockapi_spec){
                       .method = "GET", .target = POD_PATH, .body = POD_BODY, .times = 5 });
    mockapi_expect(m, "GET", "/api/v1/namespaces/default/pods/missing", 404,
                   STATUS_BODY(404, "NotFound"));
    for (i = 0; i < 5; i++)
        cr_assert_eq(get_pod(), KERR_OK, "%s", err.msg);
    cr_assert_eq(mockapi_connections(m), 1);
    cr_assert_eq(k8s_get(c, &PODS, "default", "missing", NULL, &(cJSON *){ NULL }, &err),
                 KERR_NOTFOUND);
    cr_assert_eq(mockapi_connections(m), 1, "an error answer keeps the connection");
    cr_assert_eq(mockapi_last(m)->conn, 1);
}

static void *get_many(void *arg)
{
    long ok = 0;
    int i;

    (void)arg;
    for (i = 0; i < 10; i++) {
        cJSON *obj = NULL;

        ok += k8s_get(c, &PODS, "default", "p", NULL, &obj, NULL) == KERR_OK;
        cJSON_Delete(obj);
    }
    return (void *)ok;
}

Test(k8s_transport, concurrent_requests_from_several_threads, .init = start, .fini = stop)
{
    pthread_t th[4];
    void *ok;
    long total = 0;
    int i;

    mockapi_add(m, &(struct mockapi_spec){
                       .method = "GET", .target = POD_PATH, .body = POD_BODY, .times = -1 });
    for (i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, get_many, NULL), 0);
    for (i = 0; i < 4; i++) {
        pthread_join(th[i], &ok);
        total += (long)ok;
    }
    cr_assert_eq(total, 40);
    cr_assert_eq(mockapi_request_count(m), 40);
    cr_assert_leq(mockapi_connections(m), 4, "connections are pooled and reused");
}

struct done_log {
    pthread_mutex_t mu;
    int codes[8];
    int n;
};

static struct done_log done_log = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void on_done(void *arg, const char *method, int code, double seconds)
{
    struct done_log *l = arg;

    cr_assert_str_eq(method, "GET");
    cr_assert_geq(seconds, 0.0);
    pthread_mutex_lock(&l->mu);
    if (l->n < 8)
        l->codes[l->n++] = code;
    pthread_mutex_unlock(&l->mu);
}

static void start_hooked(void)
{
    struct k8s_client_opts o = {
        .on_done = on_done, .on_done_arg = &done_log, .qps = 5, .burst = 1
    };

    start_with(&o);
}

Test(k8s_transport, done_hook_and_rate_limit, .init = start_hooked, .fini = stop)
{
    double t0;

    mockapi_add(m, &(struct mockapi_spec){ .method = "GET",
                                           .target = POD_PATH,
                                           .status = 429,
                                           .headers = "Retry-After: 0",
                                           .body = STATUS_BODY(429, "TooManyRequests") });
    mockapi_add(m, &(struct mockapi_spec){
                       .method = "GET", .target = POD_PATH, .body = POD_BODY, .times = -1 });
    t0 = now();
    cr_assert_eq(get_pod(), KERR_OK, "%s", err.msg);
    cr_assert_eq(get_pod(), KERR_OK, "%s", err.msg);
    /* 3 attempts at 5 qps with a burst of 1: at least 2 waits of 200 ms */
    cr_assert_geq(now() - t0, 0.35);
    cr_assert_eq(done_log.n, 3);
    cr_assert_eq(done_log.codes[0], 429);
    cr_assert_eq(done_log.codes[1], 200);
    cr_assert_eq(done_log.codes[2], 200);
}
