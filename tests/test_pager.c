/* Tests of common/pager: paged LISTs against scripted answers (tests/support/mockapi). */
#include "common/pager.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jarena.h"
#include "common/kjson.h"
#include "common/kobj.h"
#include "tests/support/jsonfix.h"
#include "tests/support/mockapi.h"
#include "tests/support/mockfix.h"

static const struct k8s_resource ETCD = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };

#define LIST "/apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds?!watch"
#define ITEM(name, rv)                                                                       \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"shoot\",\"resourceVersion\":\"" rv \
    "\"},\"spec\":{\"replicas\":3}}"
#define PAGE(rv, cont, items)                                                   \
    "{\"metadata\":{\"resourceVersion\":\"" rv "\",\"continue\":\"" cont "\"}," \
    "\"items\":[" items "]}"
#define STATUS_410                                                                       \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\"," \
    "\"message\":\"The provided continue parameter is too old\",\"reason\":\"Expired\"," \
    "\"code\":410}"

static struct mockapi *m;
static struct k8s_client *c;
static struct kerr_info err;

static void setup(void)
{
    mockfix_start(&m, &c, "t", NULL);
}

static void teardown(void)
{
    mockfix_stop(m, c);
}

TestSuite(pager, .init = setup, .fini = teardown, .timeout = 30);

Test(pager, follows_continue_tokens)
{
    struct pager_opts o = { .label_selector = "app=etcd", .limit = 2 };
    cJSON *items = NULL;
    char rv[16], got[64];

    mockapi_expect(m, "GET", LIST "&labelSelector=app%3Detcd&limit=2&!continue", 200,
                   PAGE("20", "tok1", ITEM("a", "1") "," ITEM("b", "2")));
    mockapi_expect(m, "GET", LIST "&limit=2&continue=tok1", 200,
                   PAGE("20", "tok2", ITEM("c", "3") "," ITEM("d", "4")));
    mockapi_expect(m, "GET", LIST "&limit=2&continue=tok2", 200, PAGE("20", "", ITEM("e", "5")));
    cr_assert_eq(pager_list(c, &ETCD, "shoot", &o, &items, rv, sizeof(rv), &err), KERR_OK, "%s",
                 err.msg);
    jsonfix_names(items, got, sizeof(got));
    cr_assert_str_eq(got, "a,b,c,d,e");
    cr_assert_str_eq(rv, "20");
    cr_assert_not_null(kjson_get(cJSON_GetArrayItem(items, 0), "spec"), "kept whole");
    cr_assert_eq(mockapi_request_count(m), 3);
    cr_assert_eq(mockapi_unexpected(m), 0);
    cJSON_Delete(items);
}

Test(pager, no_limit_is_one_request)
{
    struct pager_opts o = { .limit = -1 };
    cJSON *items = NULL;
    char rv[16], got[64];

    mockapi_expect(m, "GET", LIST "&!limit&!continue", 200,
                   "{\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[" ITEM("a", "1") "]}");
    cr_assert_eq(pager_list(c, &ETCD, "shoot", &o, &items, rv, sizeof(rv), &err), KERR_OK, "%s",
                 err.msg);
    jsonfix_names(items, got, sizeof(got));
    cr_assert_str_eq(got, "a");
    cr_assert_str_eq(rv, "9");
    cr_assert_eq(mockapi_unexpected(m), 0);
    cJSON_Delete(items);
}

Test(pager, expired_continue_token_restarts_in_one_piece)
{
    struct pager_opts o = { .limit = 1 };
    cJSON *items = NULL;
    char rv[16], got[64];

    mockapi_expect(m, "GET", LIST "&limit=1&!continue", 200, PAGE("20", "old", ITEM("a", "1")));
    mockapi_expect(m, "GET", LIST "&limit=1&continue=old", 410, STATUS_410);
    mockapi_expect(m, "GET", LIST "&!limit&!continue", 200,
                   PAGE("30", "", ITEM("a", "1") "," ITEM("b", "2")));
    cr_assert_eq(pager_list(c, &ETCD, "shoot", &o, &items, rv, sizeof(rv), &err), KERR_OK, "%s",
                 err.msg);
    jsonfix_names(items, got, sizeof(got));
    cr_assert_str_eq(got, "a,b", "the abandoned first page is dropped");
    cr_assert_str_eq(rv, "30");
    cr_assert_eq(mockapi_unexpected(m), 0);
    cJSON_Delete(items);
}

Test(pager, every_page_is_projected)
{
    struct pager_opts o = { .limit = 1,
                            .project = kobj_project_paths,
                            .project_ctx = (void *)KOBJ_META_PATHS };
    cJSON *items = NULL, *it;
    char rv[16];

    mockapi_expect(m, "GET", LIST "&!continue", 200, PAGE("20", "t", ITEM("a", "1")));
    mockapi_expect(m, "GET", LIST "&continue=t", 200, PAGE("20", "", ITEM("b", "2")));
    cr_assert_eq(pager_list(c, &ETCD, "shoot", &o, &items, rv, sizeof(rv), &err), KERR_OK, "%s",
                 err.msg);
    cr_assert_eq(cJSON_GetArraySize(items), 2);
    cJSON_ArrayForEach (it, items) {
        cr_assert_null(kjson_get(it, "spec"));
        cr_assert_not_null(kjson_get_str(it, "metadata.resourceVersion"));
    }
    cJSON_Delete(items);
}

static int stop_calls;

static int stop_now(void *arg)
{
    (void)arg;
    return ++stop_calls > 0;
}

Test(pager, stopped_cuts_the_list_between_pages)
{
    struct pager_opts o = { .limit = 1, .stopped = stop_now };
    cJSON *items = (cJSON *)1;
    char rv[16];

    mockapi_expect(m, "GET", LIST "&!continue", 200, PAGE("20", "t", ITEM("a", "1")));
    cr_assert_eq(pager_list(c, &ETCD, "shoot", &o, &items, rv, sizeof(rv), &err), KERR_CANCELLED);
    cr_assert_null(items);
    cr_assert_eq(stop_calls, 1);
    cr_assert_eq(mockapi_request_count(m), 1, "no request after the stop");
}

static enum kerr refuse(void *ctx, const cJSON *obj, cJSON **out)
{
    (void)ctx;
    (void)obj;
    *out = NULL;
    return KERR_INVAL;
}

Test(pager, errors_end_the_list)
{
    struct pager_opts o = { .limit = 1 };
    cJSON *items = (cJSON *)1;
    char rv[16];

    mockapi_expect(m, "GET", LIST "&!continue", 200, PAGE("20", "t", ITEM("a", "1")));
    mockapi_expect(m, "GET", LIST "&continue=t", 403,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                   "\"reason\":\"Forbidden\",\"message\":\"no\",\"code\":403}");
    cr_assert_eq(pager_list(c, &ETCD, "shoot", &o, &items, rv, sizeof(rv), &err), KERR_FORBIDDEN);
    cr_assert_null(items);

    o.project = refuse;
    mockapi_expect(m, "GET", LIST "&!continue", 200, PAGE("20", "", ITEM("a", "1")));
    cr_assert_eq(pager_list(c, &ETCD, "shoot", &o, &items, rv, sizeof(rv), &err), KERR_INVAL);
    cr_assert_not_null(strstr(err.msg, "list page"), "%s", err.msg);
    cr_assert_null(items);
}

Test(pager, list_object_keeps_the_envelope_with_the_last_version)
{
    struct pager_opts o = { .limit = 1,
                            .resource_version = "0",
                            .project = kobj_project_paths,
                            .project_ctx = (void *)KOBJ_META_PATHS };
    const struct mockapi_req *q;
    cJSON *list = NULL;
    char got[64];

    mockapi_expect(m, "GET", LIST "&resourceVersion=0&!continue", 200,
                   "{\"kind\":\"EtcdList\",\"apiVersion\":\"druid.gardener.cloud/v1alpha1\","
                   "\"metadata\":{\"resourceVersion\":\"20\",\"continue\":\"t\","
                   "\"remainingItemCount\":1},\"items\":[" ITEM("a", "1") "]}");
    mockapi_expect(m, "GET", LIST "&continue=t", 200, PAGE("21", "", ITEM("b", "2")));
    cr_assert_eq(pager_list_object(c, &ETCD, "shoot", &o, &list, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(kjson_get_str(list, "kind"), "EtcdList");
    cr_assert_str_eq(kjson_get_str(list, "metadata.resourceVersion"), "21");
    cr_assert_null(kjson_get(list, "metadata.continue"));
    cr_assert_null(kjson_get(list, "metadata.remainingItemCount"));
    jsonfix_names(kjson_get(list, "items"), got, sizeof(got));
    cr_assert_str_eq(got, "a,b");
    cr_assert_null(kjson_get(list, "items.0.spec"), "projected");
    q = mockapi_request(m, 1);
    cr_assert_null(mockapi_req_param(q, "resourceVersion"), "no resourceVersion with continue");
    cr_assert_eq(mockapi_unexpected(m), 0);
    cJSON_Delete(list);
}

Test(pager, a_continue_token_that_does_not_advance_fails)
{
    struct pager_opts o = { .limit = 1 };
    cJSON *items = (cJSON *)1;
    char rv[16];

    mockapi_expect(m, "GET", LIST "&!continue", 200, PAGE("20", "same", ITEM("a", "1")));
    mockapi_expect(m, "GET", LIST "&continue=same", 200, PAGE("20", "same", ITEM("b", "2")));
    cr_assert_eq(pager_list(c, &ETCD, "shoot", &o, &items, rv, sizeof(rv), &err), KERR_PARSE);
    cr_assert_null(items);
    cr_assert_not_null(strstr(err.msg, "does not advance"), "%s", err.msg);
    cr_assert_eq(mockapi_request_count(m), 2);
}

/* Parse another page into the thread's arena, over whatever a released tree left there. */
static void reuse_arena(void)
{
    static const char other[] = PAGE("99", "x", ITEM("zzzz", "9"));

    jarena_delete(jarena_parse(other, sizeof(other) - 1, NULL));
}

static size_t arena_used_in_projection; /* what the thread's arena held at the last call */

static enum kerr project_noting_arena(void *ctx, const cJSON *obj, cJSON **out)
{
    arena_used_in_projection = jarena_thread_used();
    return kobj_project_paths(ctx, obj, out);
}

Test(pager, pages_in_the_arena_leave_nothing_in_it)
{
    struct pager_opts o = { .limit = 1,
                            .project = project_noting_arena,
                            .project_ctx = (void *)KOBJ_META_PATHS,
                            .arena = 1 };
    cJSON *list = NULL;
    char got[64];

    cr_assert_eq(jarena_install(&err), KERR_OK, "%s", err.msg);
    cr_assert_eq(jarena_thread_reserve(1u << 20, &err), KERR_OK, "%s", err.msg);
    mockapi_expect(m, "GET", LIST "&!continue", 200,
                   "{\"kind\":\"EtcdList\",\"apiVersion\":\"druid.gardener.cloud/v1alpha1\","
                   "\"metadata\":{\"resourceVersion\":\"20\",\"continue\":\"t\"},"
                   "\"items\":[" ITEM("a", "1") "]}");
    mockapi_expect(m, "GET", LIST "&continue=t", 200, PAGE("21", "t2", ITEM("b", "2")));
    mockapi_expect(m, "GET", LIST "&continue=t2", 200, PAGE("22", "", ITEM("c", "3")));
    cr_assert_eq(pager_list_object(c, &ETCD, "shoot", &o, &list, &err), KERR_OK, "%s", err.msg);
    cr_expect_gt(arena_used_in_projection, 0, "the page was parsed into the arena");
    cr_expect_eq(jarena_thread_used(), 0, "no page, and no node of one, outlives the list");
    /* the List and its items are plain trees: the arena's next parse cannot touch them */
    reuse_arena();
    cr_assert_str_eq(kjson_get_str(list, "kind"), "EtcdList");
    cr_assert_str_eq(kjson_get_str(list, "metadata.resourceVersion"), "22");
    cr_assert_null(kjson_get(list, "metadata.continue"));
    jsonfix_names(kjson_get(list, "items"), got, sizeof(got));
    cr_assert_str_eq(got, "a,b,c");
    cr_assert_null(kjson_get(list, "items.0.spec"), "projected");
    cr_assert_eq(mockapi_unexpected(m), 0);
    cJSON_Delete(list);
    jarena_thread_release();
}

Test(pager, the_arena_is_not_used_without_a_projection)
{
    struct pager_opts o = { .limit = 1, .arena = 1 };
    cJSON *items = NULL;
    char rv[16], got[64];

    cr_assert_eq(jarena_install(&err), KERR_OK, "%s", err.msg);
    mockapi_expect(m, "GET", LIST "&!continue", 200, PAGE("20", "t", ITEM("a", "1")));
    mockapi_expect(m, "GET", LIST "&continue=t", 200, PAGE("20", "", ITEM("b", "2")));
    cr_assert_eq(pager_list(c, &ETCD, "shoot", &o, &items, rv, sizeof(rv), &err), KERR_OK, "%s",
                 err.msg);
    cr_expect_eq(jarena_thread_used(), 0, "the kept items are not the arena's");
    reuse_arena();
    jsonfix_names(items, got, sizeof(got));
    cr_assert_str_eq(got, "a,b");
    cr_assert_not_null(kjson_get(cJSON_GetArrayItem(items, 1), "spec"), "kept whole");
    cJSON_Delete(items);
    jarena_thread_release();
}
