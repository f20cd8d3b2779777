/* kube-sim LIST and WATCH: selectors, pagination, resourceVersion semantics, bookmarks, 410. */
#include "tests/kube-sim/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/kjson.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

static struct ksim_harness *h;

static void start(size_t history, long bookmark_ms)
{
    struct ksim_harness_opts o = { .no_controllers = 1,
                                   .history = history,
                                   .bookmark_ms = bookmark_ms };

    h = ksimfix_start(&o);
}

static void setup(void)
{
    start(0, 0);
}

static void teardown(void)
{
    ksim_harness_stop(h);
}

TestSuite(kubesim_list, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(kubesim_watch, .fini = teardown, .timeout = 60);

static void cm(const char *ns, const char *name, const char *labels)
{
    char path[256], body[1024];
    long code;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{%s}}}",
             name, labels);
    cJSON_Delete(ksimfix_call(h, "POST", path, NULL, body, &code));
    cr_assert_eq(code, 201, "%s/%s", ns, name);
}

static void relabel(const char *name, const char *labels)
{
    char path[256], body[512];
    long code;

    snprintf(path, sizeof(path), "/api/v1/namespaces/default/configmaps/%s", name);
    snprintf(body, sizeof(body), "{\"metadata\":{\"labels\":%s}}", labels);
    cJSON_Delete(ksimfix_call(h, "PATCH", path, "application/merge-patch+json", body, &code));
    cr_assert_eq(code, 200);
}

static void expect_selected(const char *selector_query, const char *want)
{
    char path[512], got[512];
    long code;
    cJSON *list;

    snprintf(path, sizeof(path), "/api/v1/namespaces/default/configmaps?%s", selector_query);
    list = ksimfix_call(h, "GET", path, NULL, NULL, &code);
    cr_assert_eq(code, 200, "%s", selector_query);
    jsonfix_names(kjson_get(list, "items"), got, sizeof(got));
    cr_assert_str_eq(got, want, "%s", selector_query);
    cJSON_Delete(list);
}

Test(kubesim_list, label_selectors)
{
    cm("default", "a", "\"env\":\"prod\",\"tier\":\"web\"");
    cm("default", "b", "\"env\":\"dev\"");
    cm("default", "c", "");
    expect_selected("labelSelector=env%3Dprod", "a");
    expect_selected("labelSelector=env%3D%3Ddev", "b");
    expect_selected("labelSelector=env!%3Dprod", "b,c");
    expect_selected("labelSelector=env%20in%20(prod,dev)", "a,b");
    expect_selected("labelSelector=env+notin+(prod)", "b,c");
    expect_selected("labelSelector=tier", "a");
    expect_selected("labelSelector=!tier", "b,c");
    expect_selected("labelSelector=env,!tier", "b");
}

Test(kubesim_list, field_selectors)
{
    long code;
    cJSON *st;

    cm("default", "a", "");
    cm("default", "b", "");
    cm("kube-system", "a", "");
    expect_selected("fieldSelector=metadata.name%3Db", "b");
    expect_selected("fieldSelector=metadata.name!%3Db", "a");
    st = ksimfix_call(h, "GET", "/api/v1/configmaps?fieldSelector=metadata.namespace%3Dkube-system",
                      NULL, NULL, &code);
    cr_assert_eq(cJSON_GetArraySize(kjson_get(st, "items")), 1);
    cJSON_Delete(st);
    st = ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps?fieldSelector=data.x%3Dy",
                      NULL, NULL, &code);
    cr_assert_eq(code, 400);
    cr_assert_str_eq(kjson_get_str(st, "message"), "field label not supported: data.x");
    cJSON_Delete(st);
    st = ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps?labelSelector=a%20b", NULL,
                      NULL, &code);
    cr_assert_eq(code, 400, "a malformed label selector");
    cJSON_Delete(st);
}

Test(kubesim_list, pagination)
{
    char path[1024], got[512], name[8];
    struct buf all;
    const char *cont;
    cJSON *page;
    long code;
    int i, pages = 0;

    for (i = 0; i < 7; i++) {
        snprintf(name, sizeof(name), "m%d", i);
        cm("default", name, "");
    }
    buf_init(&all, 512);
    snprintf(path, sizeof(path), "/api/v1/namespaces/default/configmaps?limit=3");
    for (;;) {
        page = ksimfix_call(h, "GET", path, NULL, NULL, &code);
        cr_assert_eq(code, 200);
        jsonfix_names(kjson_get(page, "items"), got, sizeof(got));
        cr_assert_eq(buf_appendf(&all, "%s%s", all.len ? "," : "", got), KERR_OK);
        pages++;
        cont = kjson_get_str(page, "metadata.continue");
        if (pages == 1)
            cr_assert_eq(kjson_get(page, "metadata.remainingItemCount")->valuedouble, 4);
        if (!cont) {
            cJSON_Delete(page);
            break;
        }
        snprintf(path, sizeof(path), "/api/v1/namespaces/default/configmaps?limit=3&continue=%s",
                 cont);
        cJSON_Delete(page);
    }
    cr_assert_eq(pages, 3);
    cr_assert_str_eq(buf_str(&all), "m0,m1,m2,m3,m4,m5,m6");
    buf_release(&all);
}

Test(kubesim_list, continue_rejects_a_resource_version)
{
    long code;
    cJSON *page, *st;
    char path[1024];

    cm("default", "a", "");
    cm("default", "b", "");
    page =
        ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps?limit=1", NULL, NULL, &code);
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/default/configmaps?limit=1&resourceVersion=5&continue=%s",
             kjson_get_str(page, "metadata.continue"));
    st = ksimfix_call(h, "GET", path, NULL, NULL, &code);
    cr_assert_eq(code, 400);
    cJSON_Delete(st);
    cJSON_Delete(page);
}

Test(kubesim_list, kubectl_reads_tables)
{
    char *out = NULL;

    cm("default", "a", "\"tier\":\"web\"");
    cr_assert_eq(ksim_harness_kubectl(h, NULL, "get configmaps -l tier=web", &out), 0, "%s", out);
    cr_assert_not_null(strstr(out, "NAME"), "%s", out);
    cr_assert_not_null(strstr(out, "DATA"), "server-side columns: %s", out);
    cr_assert_not_null(strstr(out, "AGE"), "%s", out);
    cr_assert_not_null(strstr(out, "\na "), "%s", out);
    free(out);
    cr_assert_eq(ksim_harness_kubectl(h, NULL, "get configmaps -l tier=db", &out), 0, "%s", out);
    cr_assert_not_null(strstr(out, "No resources found"), "%s", out);
    free(out);
}

/* ---- watch ---- */

static int count_lines(const char *s, const char *needle)
{
    int n = 0;

    while ((s = strstr(s, needle))) {
        n++;
        s += strlen(needle);
    }
    return n;
}

static char *rv_of_list(const char *path)
{
    long code;
    cJSON *l = ksimfix_call(h, "GET", path, NULL, NULL, &code);
    char *rv = strdup(kjson_get_str(l, "metadata.resourceVersion"));

    cJSON_Delete(l);
    return rv;
}

Test(kubesim_watch, replays_history_in_order)
{
    char path[512], *rv, *body, *a, *m, *d;
    long code;

    start(0, 0);
    rv = rv_of_list("/api/v1/namespaces/default/configmaps");
    cm("default", "w", "");
    relabel("w", "{\"x\":\"1\"}");
    cJSON_Delete(
        ksimfix_call(h, "DELETE", "/api/v1/namespaces/default/configmaps/w", NULL, NULL, &code));
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%s&timeoutSeconds=1",
             rv);
    body = ksimfix_raw(h, path);
    a = strstr(body, "{\"type\":\"ADDED\"");
    m = strstr(body, "{\"type\":\"MODIFIED\"");
    d = strstr(body, "{\"type\":\"DELETED\"");
    cr_assert(a && m && d && a < m && m < d, "%s", body);
    cr_assert_eq(count_lines(body, "\n"), 3);
    free(body);
    free(rv);
}

Test(kubesim_watch, without_resource_version_starts_with_the_state)
{
    char *body;

    start(0, 0);
    cm("default", "x", "");
    cm("default", "y", "");
    body = ksimfix_raw(h, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1");
    cr_assert_eq(count_lines(body, "\"type\":\"ADDED\""), 2, "%s", body);
    free(body);
}

Test(kubesim_watch, expired_resource_version_is_410)
{
    char path[512], *rv, *body, name[8];
    cJSON *ev;
    int i;

    start(4, 0);
    rv = rv_of_list("/api/v1/namespaces/default/configmaps");
    for (i = 0; i < 8; i++) {
        snprintf(name, sizeof(name), "e%d", i);
        cm("default", name, "");
    }
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%s&timeoutSeconds=5",
             rv);
    body = ksimfix_raw(h, path);
    cr_assert_eq(count_lines(body, "\n"), 1, "exactly one ERROR event: %s", body);
    cr_assert_eq(kjson_parse(body, strlen(body), NULL, &ev, NULL, NULL), KERR_OK);
    cr_assert_str_eq(kjson_get_str(ev, "type"), "ERROR");
    cr_assert_eq(kjson_get(ev, "object.code")->valuedouble, 410);
    cr_assert_str_eq(kjson_get_str(ev, "object.reason"), "Expired");
    cr_assert_not_null(strstr(kjson_get_str(ev, "object.message"), "too old resource version"));
    cJSON_Delete(ev);
    free(body);
    free(rv);
}

Test(kubesim_watch, bookmarks_only_when_allowed)
{
    char *with, *without;

    start(0, 200);
    with = ksimfix_raw(h, "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&"
                          "timeoutSeconds=1");
    cr_assert_geq(count_lines(with, "\"type\":\"BOOKMARK\""), 2,
                  "periodic bookmarks plus one at the timeout: %s", with);
    cr_assert_not_null(strstr(with, "\"resourceVersion\""));
    without = ksimfix_raw(h, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1");
    cr_assert_eq(count_lines(without, "BOOKMARK"), 0);
    free(with);
    free(without);
}

Test(kubesim_watch, a_caught_up_watch_bookmarks_the_store_revision)
{
    struct ksimfix_watch w;
    char path[512], *rv, *body, *last, *p;
    long code;

    start(0, 200);
    cm("default", "seen", "");
    rv = rv_of_list("/api/v1/namespaces/default/configmaps");
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&"
             "resourceVersion=%s&timeoutSeconds=5",
             rv);
    free(rv);
    ksimfix_watch_start(&w, h, path, 20000);
    cm("kube-system", "elsewhere", ""); /* written while it watches (5 s), none of it the watch's */
    cJSON_Delete(ksimfix_call(h, "POST", "/api/v1/namespaces", NULL,
                              "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
                              "\"metadata\":{\"name\":\"later\"}}",
                              &code));
    cr_assert_eq(code, 201);
    rv = rv_of_list("/api/v1/namespaces");
    body = ksimfix_watch_join(&w);
    cr_assert_not_null(body);
    last = NULL; /* the last bookmark's resourceVersion */
    for (p = strstr(body, "\"type\":\"BOOKMARK\""); p; p = strstr(p + 1, "\"type\":\"BOOKMARK\""))
        last = strstr(p, "\"resourceVersion\":\"");
    cr_assert_not_null(last, "%s", body);
    cr_assert_eq(strtoull(last + strlen("\"resourceVersion\":\""), NULL, 10),
                 strtoull(rv, NULL, 10),
                 "a watch with nothing left to send is at the store's revision %s (a cache's fence "
                 "for what was written anywhere): %s",
                 rv, body);
    free(body);
    free(rv);
}

Test(kubesim_watch, selectors_turn_updates_into_added_and_deleted)
{
    char path[512], *rv, *body, *a, *d;

    start(0, 0);
    rv = rv_of_list("/api/v1/namespaces/default/configmaps");
    cm("default", "s", "\"app\":\"other\"");
    relabel("s", "{\"app\":\"x\"}");
    relabel("s", "{\"app\":\"x\",\"more\":\"1\"}");
    relabel("s", "{\"app\":\"gone\"}");
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/default/configmaps?watch=1&labelSelector=app%%3Dx&"
             "resourceVersion=%s&timeoutSeconds=1",
             rv);
    body = ksimfix_raw(h, path);
    a = strstr(body, "\"type\":\"ADDED\"");
    d = strstr(body, "\"type\":\"DELETED\"");
    cr_assert(a && d && a < d, "%s", body);
    cr_assert_eq(count_lines(body, "\n"), 3, "ADDED, MODIFIED, DELETED: %s", body);
    free(body);
    free(rv);
}

Test(kubesim_watch, initial_events_end_with_a_bookmark)
{
    char *body;

    start(0, 0);
    cm("default", "i", "");
    body = ksimfix_raw(
        h, "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&"
           "resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1");
    cr_assert_not_null(strstr(body, "\"k8s.io/initial-events-end\":\"true\""), "%s", body);
    cr_assert_lt(strstr(body, "ADDED") - body, strstr(body, "initial-events-end") - body);
    free(body);
}

Test(kubesim_watch, live_events_and_timeout)
{
    struct ksimfix_watch w;
    struct timespec t0, t1;
    char path[512], *rv, *body;

    start(0, 0);
    rv = rv_of_list("/api/v1/namespaces/default/configmaps");
    snprintf(path, sizeof(path),
             "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=%s&timeoutSeconds=2",
             rv);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ksimfix_watch_start(&w, h, path, 20000);
    cm("default", "live", "");
    body = ksimfix_watch_join(&w);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_not_null(body);
    cr_assert_not_null(strstr(body, "\"name\":\"live\""), "%s", body);
    cr_assert_lt(t1.tv_sec - t0.tv_sec, 15, "timeoutSeconds ends the stream (joined at 20 s)");
    free(body);
    free(rv);
}

Test(kubesim_watch, one_object_by_name)
{
    char *body;

    start(0, 0);
    cm("default", "one", "");
    cm("default", "two", "");
    body = ksimfix_raw(
        h, "/api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Dtwo&"
           "timeoutSeconds=1");
    cr_assert_eq(count_lines(body, "\n"), 1, "%s", body);
    cr_assert_not_null(strstr(body, "\"name\":\"two\""));
    free(body);
}

Test(kubesim_watch, ends_when_the_client_goes)
{
    struct ksim_http r;
    int i;

    start(0, 0);
    /* The client gives up after half a second; the server's timeout is a minute away. */
    cr_assert_neq(ksim_harness_call(h, NULL, "GET",
                                    "/api/v1/namespaces/default/configmaps?watch=1&"
                                    "timeoutSeconds=60",
                                    NULL, NULL, 500, &r),
                  0, "the transfer times out on the client side");
    ksim_http_release(&r);
    for (i = 0; i < 1500 && ksim_store_watch_count(h->api->store) > 0; i++)
        nanosleep(&(struct timespec){ 0, 20000000L }, NULL);
    cr_assert_eq(ksim_store_watch_count(h->api->store), 0,
                 "kube-sim noticed the closed connection and dropped the watch");
}
