#include "tests/support/ksimfix.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/testutil.h"

struct ksim_harness *ksimfix_start(const struct ksim_harness_opts *opts)
{
    struct ksim_harness_opts quiet = { .no_controllers = 1 };
    struct ksim_harness *h = NULL;
    struct kerr_info err;

    cr_assert_eq(ksim_harness_start(opts ? opts : &quiet, &h, &err), KERR_OK, "%s", err.msg);
    return h;
}

cJSON *ksimfix_call_as(struct ksim_harness *h, const char *token, const char *method,
                       const char *path, const char *ct, const char *body, long *code,
                       char *warning, size_t wsize)
{
    struct ksim_http r;
    cJSON *j;

    cr_assert_eq(ksim_harness_call(h, token, method, path, ct, body, 0, &r), 0, "%s %s", method,
                 path);
    *code = r.code;
    if (warning && ksim_http_header(&r, "Warning", warning, wsize) != 0)
        warning[0] = '\0';
    j = ksim_http_json(&r);
    ksim_http_release(&r);
    return j;
}

cJSON *ksimfix_call(struct ksim_harness *h, const char *method, const char *path, const char *ct,
                    const char *body, long *code)
{
    return ksimfix_call_as(h, NULL, method, path, ct, body, code, NULL, 0);
}

long ksimfix_status(struct ksim_harness *h, const char *path)
{
    long code;

    cJSON_Delete(ksimfix_call(h, "GET", path, NULL, NULL, &code));
    return code;
}

int ksimfix_await_status(struct ksim_harness *h, const char *path, long want, long timeout_ms)
{
    int64_t end = ktime_mono_ms() + timeout_ms;

    while (ksimfix_status(h, path) != want) {
        if (ktime_mono_ms() > end)
            return 0;
        testutil_pause_ms(50);
    }
    return 1;
}

char *ksimfix_raw(struct ksim_harness *h, const char *path)
{
    struct ksim_http r;
    char *s;

    cr_assert_eq(ksim_harness_call(h, NULL, "GET", path, NULL, NULL, 20000, &r), 0, "%s", path);
    cr_assert_eq(r.code, 200, "%s: %ld %s", path, r.code, buf_str(&r.body));
    s = buf_detach(&r.body, NULL);
    ksim_http_release(&r);
    return s;
}

void ksimfix_faults(struct ksim_harness *h, const char *json)
{
    struct ksim_http r;

    cr_assert_eq(ksim_harness_call(h, NULL, "POST", "/kube-sim/faults", NULL, json, 0, &r), 0);
    cr_assert_eq(r.code, 200, "%s: %s", json, buf_str(&r.body));
    ksim_http_release(&r);
}

void ksimfix_await_watchers(struct ksim_harness *h, size_t n)
{
    TESTUTIL_AWAIT(ksim_store_watch_count(h->api->store) >= n, 10000);
    cr_assert_geq(ksim_store_watch_count(h->api->store), n, "the watch never started");
}

static void *watch_thread(void *arg)
{
    struct ksimfix_watch *w = arg;
    struct ksim_http r;

    if (ksim_harness_call(w->h, NULL, "GET", w->path, NULL, NULL, w->timeout_ms, &r) == 0)
        w->body = buf_detach(&r.body, NULL);
    ksim_http_release(&r);
    return NULL;
}

void ksimfix_watch_start(struct ksimfix_watch *w, struct ksim_harness *h, const char *path,
                         long timeout_ms)
{
    memset(w, 0, sizeof(*w));
    w->h = h;
    w->timeout_ms = timeout_ms;
    cr_assert_lt((size_t)snprintf(w->path, sizeof(w->path), "%s", path), sizeof(w->path));
    cr_assert_eq(pthread_create(&w->thread, NULL, watch_thread, w), 0);
}

char *ksimfix_watch_join(struct ksimfix_watch *w)
{
    char *body;

    pthread_join(w->thread, NULL);
    body = w->body;
    w->body = NULL;
    return body;
}
