/* The API client (common/k8s) against kube-sim, as it runs against kube-apiserver: errors
 * with their Status, selectors, paging, the four PATCH types, preconditions and propagation,
 * the status and scale subresources and a CRD. Retries and tokens: test_client_kubesim_auth.c. */
#include "common/k8s.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "common/ktime.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimcli.h"

static const struct k8s_resource CM = { "", "v1", "configmaps", 1 };
static const struct k8s_resource STS = { "apps", "v1", "statefulsets", 1 };
static const struct k8s_resource CRD = { "apiextensions.k8s.io", "v1", "customresourcedefinitions",
                                         0 };
static const struct k8s_resource ETCD = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 };

static const char sts_json[] =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\","
    "\"namespace\":\"default\",\"labels\":{\"app\":\"web\"}},\"spec\":{\"replicas\":2,"
    "\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{"
    "\"app\":\"web\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}}}";

static const char crd_json[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"etcds.druid.gardener.cloud\"},\"spec\":{\"group\":"
    "\"druid.gardener.cloud\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"etcds\","
    "\"singular\":\"etcd\",\"kind\":\"Etcd\",\"listKind\":\"EtcdList\"},\"versions\":[{\"name\":"
    "\"v1alpha1\",\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":"
    "\"object\",\"x-kubernetes-preserve-unknown-fields\":true}},\"subresources\":{\"status\":{},"
    "\"scale\":{\"specReplicasPath\":\".spec.replicas\",\"statusReplicasPath\":"
    "\".status.replicas\"}}}]}}";

/* call returned KERR_OK (else the client's message is printed). */
#define OK(call) KSIMCLI_OK(call, err)

/* call failed with code, HTTP status and Status reason. */
#define FAILS(call, code, status, why) KSIMCLI_FAILS(call, err, code, status, why)

static struct ksimcli fx;
static struct kerr_info err;

static void stop(void)
{
    ksimcli_release(&fx);
}

TestSuite(client_kubesim, .fini = stop, .timeout = 30);

/* The item names of a List, in the server's order (etcd key order), as "a,b,c". */
static const char *names(const cJSON *list)
{
    static char out[1024];

    return jsonfix_names(kjson_get_arr(list, "items"), out, sizeof(out));
}

static const char *select_names(const char *ns, const char *labels, const char *fields)
{
    struct k8s_list_opts lo = { .label_selector = labels, .field_selector = fields };
    cJSON *l = NULL;
    const char *s;

    OK(k8s_list(fx.c, &CM, ns, &lo, &l, &err));
    s = names(l);
    cJSON_Delete(l);
    return s;
}

/* Poll GET until it returns want, or number path equals value when path is set (5 s). */
static int await_get(const struct k8s_resource *res, const char *name, const char *sub,
                     enum kerr want, const char *path, int64_t value)
{
    long long end = ktime_mono_ms() + 5000;
    enum kerr rc;
    cJSON *o;
    int done;

    do {
        o = NULL;
        rc = k8s_get(fx.c, res, "default", name, sub, &o, NULL);
        done = rc == want && (!path || jsonfix_int(o, path) == value);
        cJSON_Delete(rc == KERR_OK ? o : NULL);
        if (done)
            return 1;
        nanosleep(&(struct timespec){ 0, 20000000L }, NULL);
    } while (ktime_mono_ms() < end);
    return 0;
}

Test(client_kubesim, errors_carry_the_apiserver_status)
{
    cJSON *o = NULL, *first = NULL, *now = NULL;

    ksimcli_init(&fx, NULL, NULL);
    FAILS(k8s_get(fx.c, &CM, "default", "nope", NULL, &o, &err), KERR_NOTFOUND, 404, "NotFound");
    cr_assert_str_eq(err.msg, "configmaps \"nope\" not found");
    FAILS(k8s_get(fx.c, &STS, "default", "nope", "scale", &o, &err), KERR_NOTFOUND, 404,
          "NotFound");
    cr_assert_str_eq(err.msg, "statefulsets.apps \"nope\" not found");
    cr_assert_null(o);
    ksimcli_create_cm(fx.c, "default", "x", NULL, &first);
    cr_assert_eq(strlen(jsonfix_str(first, "metadata.uid")), 36, "the server filled the uid");
    o = ksimcli_cm("x", NULL);
    FAILS(k8s_create(fx.c, &CM, "default", o, NULL, NULL, &err), KERR_EXISTS, 409, "AlreadyExists");
    cr_assert_str_eq(err.msg, "configmaps \"x\" already exists");
    cr_assert_str_eq(ksimcli_codes(&fx), "404,404,201,409", "neither 404 nor 409 is retried");
    OK(kjson_set_str(first, "data.k", "one", &err));
    OK(k8s_update(fx.c, &CM, NULL, NULL, first, NULL, NULL, &err));
    OK(kjson_set_str(first, "data.k", "two", &err));
    FAILS(k8s_update(fx.c, &CM, NULL, NULL, first, NULL, NULL, &err), KERR_CONFLICT, 409,
          "Conflict");
    cr_assert_not_null(strstr(err.msg, "Operation cannot be fulfilled on configmaps \"x\": the "
                                       "object has been modified"),
                       "%s", err.msg);
    OK(k8s_get(fx.c, &CM, "default", "x", NULL, &now, &err));
    cr_assert_str_eq(jsonfix_str(now, "data.k"), "one", "the stale write changed nothing");
    cJSON_Delete(o);
    cJSON_Delete(first);
    cJSON_Delete(now);
}

Test(client_kubesim, list_with_label_and_field_selectors)
{
    struct k8s_list_opts bad = { .label_selector = "env in (prod" };
    cJSON *l = NULL;

    ksimcli_init(&fx, NULL, NULL);
    ksimcli_create_ns(fx.c, "sel");
    ksimcli_create_cm(fx.c, "sel", "a", "env=prod,tier=web,example.com/role=primary", NULL);
    ksimcli_create_cm(fx.c, "sel", "b", "env=staging,tier=db", NULL);
    ksimcli_create_cm(fx.c, "sel", "c", "env=dev", NULL);
    ksimcli_create_cm(fx.c, "sel", "d", "example.com/role=replica.v1_x-y", NULL);
    ksimcli_create_cm(fx.c, "default", "a", "env=prod", NULL);
    cr_assert_str_eq(select_names("sel", "env=prod", NULL), "a");
    cr_assert_str_eq(select_names("sel", "env in (prod, staging)", NULL), "a,b");
    cr_assert_str_eq(select_names("sel", "env notin (prod,staging)", NULL), "c,d");
    cr_assert_str_eq(select_names("sel", "!tier", NULL), "c,d");
    cr_assert_str_eq(select_names("sel", "tier,env!=prod", NULL), "b");
    cr_assert_str_eq(select_names("sel", "example.com/role in (primary,replica.v1_x-y)", NULL),
                     "a,d");
    cr_assert_str_eq(select_names("sel", "example.com/role==replica.v1_x-y", NULL), "d");
    cr_assert_str_eq(select_names(NULL, "env=prod", NULL), "a,a", "all namespaces");
    cr_assert_str_eq(select_names("sel", NULL, "metadata.name=b"), "b");
    cr_assert_str_eq(select_names("sel", "env", "metadata.name!=b"), "a,c");
    cr_assert_str_eq(select_names(NULL, NULL, "metadata.namespace=default,metadata.name=a"), "a");
    FAILS(k8s_list(fx.c, &CM, "sel", &bad, &l, &err), KERR_API, 400, "BadRequest");
    bad.label_selector = NULL;
    bad.field_selector = "data.k=v";
    FAILS(k8s_list(fx.c, &CM, "sel", &bad, &l, &err), KERR_API, 400, "BadRequest");
    cr_assert_str_eq(err.msg, "field label not supported: data.k");
}

static void create_many(const char *ns, int n)
{
    char name[16];
    int i;

    ksimcli_create_ns(fx.c, ns);
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "p%02d", i);
        ksimcli_create_cm(fx.c, ns, name, NULL, NULL);
    }
}

Test(client_kubesim, limit_and_continue_pages_share_one_resource_version)
{
    struct k8s_list_opts lo = { .limit = 10 };
    char rv[32] = "", cont[512], seen[1024] = "";
    cJSON *page = NULL;
    int pages = 0;

    ksimcli_init(&fx, NULL, NULL);
    create_many("paged", 25);
    do {
        OK(k8s_list(fx.c, &CM, "paged", &lo, &page, &err));
        cr_assert_eq(cJSON_GetArraySize(kjson_get_arr(page, "items")), pages < 2 ? 10 : 5);
        if (!pages) {
            snprintf(rv, sizeof(rv), "%s", jsonfix_str(page, "metadata.resourceVersion"));
            cr_assert_eq(jsonfix_int(page, "metadata.remainingItemCount"), 15);
            ksimcli_create_cm(fx.c, "default", "between-pages", NULL, NULL);
        }
        cr_assert_str_eq(jsonfix_str(page, "metadata.resourceVersion"), rv, "page %d", pages);
        snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%s", pages ? "," : "",
                 names(page));
        snprintf(cont, sizeof(cont), "%s", jsonfix_str(page, "metadata.continue"));
        lo.continue_token = cont;
        pages++;
        cJSON_Delete(page);
    } while (cont[0] && pages < 5);
    cr_assert_eq(pages, 3);
    cr_assert_str_eq(seen, "p00,p01,p02,p03,p04,p05,p06,p07,p08,p09,p10,p11,p12,p13,p14,p15,"
                           "p16,p17,p18,p19,p20,p21,p22,p23,p24");
}

Test(client_kubesim, list_all_follows_continue_and_restarts_after_410)
{
    struct k8s_list_opts lo = { .limit = 10 };
    cJSON *l = NULL;

    ksimcli_init(&fx, NULL, NULL);
    create_many("paged", 25);
    ksimcli_codes(&fx);
    OK(k8s_list_all(fx.c, &CM, "paged", &lo, &l, &err));
    cr_assert_str_eq(ksimcli_codes(&fx), "200,200,200");
    cr_assert_eq(cJSON_GetArraySize(kjson_get_arr(l, "items")), 25);
    cr_assert_null(kjson_get(l, "metadata.continue"));
    cr_assert_neq(jsonfix_str(l, "metadata.resourceVersion")[0], '\0');
    cJSON_Delete(l);
    fx.expire_after_get = 1; /* the continue token of page 1 expires, as after compaction */
    OK(k8s_list_all(fx.c, &CM, "paged", &lo, &l, &err));
    cr_assert_str_eq(ksimcli_codes(&fx), "200,410,200", "one restart without a limit");
    cr_assert_eq(cJSON_GetArraySize(kjson_get_arr(l, "items")), 25);
    cr_assert_str_eq(jsonfix_str(l, "items.24.metadata.name"), "p24");
    cJSON_Delete(l);
}

Test(client_kubesim, merge_and_json_patches)
{
    cJSON *p, *o = NULL, *before = NULL, *after = NULL;

    ksimcli_init(&fx, NULL, NULL);
    ksimcli_create_cm(fx.c, "default", "m", NULL, NULL);
    p = jsonfix_parse(
        "{\"data\":{\"k\":null,\"x\":\"1\"},\"metadata\":{\"labels\":{\"l\":\"v\"}}}");
    OK(k8s_patch(fx.c, &CM, "default", "m", K8S_PATCH_MERGE, p, NULL, &o, &err));
    cr_assert_null(kjson_get(o, "data.k"), "null removes a key");
    cr_assert_str_eq(jsonfix_str(o, "data.x"), "1");
    cr_assert_str_eq(jsonfix_str(o, "metadata.labels.l"), "v");
    cJSON_Delete(p);
    p = jsonfix_parse(
        "[{\"op\":\"test\",\"path\":\"/data/x\",\"value\":\"1\"},"
        "{\"op\":\"replace\",\"path\":\"/data/x\",\"value\":\"2\"},"
        "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"a/b\":\"c\"}}]");
    OK(k8s_patch(fx.c, &CM, "default", "m", K8S_PATCH_JSON, p, NULL, &before, &err));
    cr_assert_str_eq(jsonfix_str(before, "data.x"), "2");
    cr_assert_str_eq(jsonfix_str(before, "metadata.annotations[a/b]"), "c");
    cJSON_Delete(p);
    cJSON_Delete(o);
    o = NULL;
    p = jsonfix_parse("[{\"op\":\"remove\",\"path\":\"/data/x\"},"
                      "{\"op\":\"test\",\"path\":\"/data/x\",\"value\":\"1\"}]");
    FAILS(k8s_patch(fx.c, &CM, "default", "m", K8S_PATCH_JSON, p, NULL, &o, &err), KERR_API, 422,
          "Invalid");
    cr_assert_null(o);
    OK(k8s_get(fx.c, &CM, "default", "m", NULL, &after, &err));
    cr_assert_str_eq(jsonfix_str(after, "data.x"), "2", "no operation of the failed patch applied");
    cr_assert_str_eq(jsonfix_str(after, "metadata.resourceVersion"),
                     jsonfix_str(before, "metadata.resourceVersion"));
    cJSON_Delete(p);
    cJSON_Delete(before);
    cJSON_Delete(after);
}

Test(client_kubesim, strategic_merge_merges_containers_by_name)
{
    cJSON *sts = jsonfix_parse(sts_json), *p, *o = NULL;
    const cJSON *ct;

    ksimcli_init(&fx, NULL, NULL);
    OK(k8s_create(fx.c, &STS, NULL, sts, NULL, NULL, &err));
    p = jsonfix_parse("{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"side\","
                      "\"image\":\"busybox\"},{\"name\":\"c\",\"env\":[{\"name\":\"E\",\"value\":"
                      "\"1\"}]}]}}}}");
    OK(k8s_patch(fx.c, &STS, "default", "web", K8S_PATCH_STRATEGIC, p, NULL, &o, &err));
    ct = kjson_get_arr(o, "spec.template.spec.containers");
    cr_assert_eq(cJSON_GetArraySize(ct), 2, "merged by name, not replaced");
    cr_assert_str_eq(jsonfix_str(ct, "0.name"), "c");
    cr_assert_str_eq(jsonfix_str(ct, "0.image"), "nginx", "fields of a merged container are kept");
    cr_assert_str_eq(jsonfix_str(ct, "0.env.0.value"), "1");
    cr_assert_str_eq(jsonfix_str(ct, "1.image"), "busybox");
    cr_assert_eq(jsonfix_int(o, "metadata.generation"), 2);
    cJSON_Delete(o);
    OK(k8s_patch(fx.c, &STS, "default", "web", K8S_PATCH_MERGE, p, NULL, &o, &err));
    ct = kjson_get_arr(o, "spec.template.spec.containers");
    cr_assert_str_eq(jsonfix_str(ct, "0.name"), "side", "a merge patch replaces the list");
    cr_assert_null(kjson_get(ct, "1.image"));
    cJSON_Delete(o);
    cJSON_Delete(p);
    cJSON_Delete(sts);
}

Test(client_kubesim, server_side_apply_needs_and_sends_a_field_manager)
{
    struct k8s_write_opts wo = { .field_manager = "etcd-warden", .force = 1 };
    cJSON *p = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                             "\"ssa\",\"namespace\":\"default\"},\"data\":{\"a\":\"1\"}}");
    cJSON *o = NULL, *q = jsonfix_parse("{\"data\":{\"b\":\"2\"}}");
    char *body = cJSON_PrintUnformatted(p);

    ksimcli_init(&fx, NULL, NULL);
    FAILS(k8s_request(fx.c, "PATCH", "/api/v1/namespaces/default/configmaps/ssa",
                      "application/apply-patch+yaml", body, strlen(body), NULL, &err),
          KERR_API, 422, "Invalid");
    cr_assert_not_null(strstr(err.msg, "fieldManager: Required value"), "%s", err.msg);
    ksimcli_codes(&fx);
    OK(k8s_patch(fx.c, &CM, "default", "ssa", K8S_PATCH_APPLY, p, &wo, &o, &err));
    cr_assert_str_eq(ksimcli_codes(&fx), "201", "apply of a missing object creates it");
    cr_assert_str_eq(jsonfix_str(o, "data.a"), "1");
    cJSON_Delete(o);
    wo.field_manager = "someone-else";
    OK(k8s_patch(fx.c, &CM, "default", "ssa", K8S_PATCH_MERGE, q, &wo, NULL, &err));
    OK(kjson_set_str(p, "data.a", "3", &err));
    wo.field_manager = "etcd-warden";
    OK(k8s_patch(fx.c, &CM, "default", "ssa", K8S_PATCH_APPLY, p, &wo, &o, &err));
    cr_assert_str_eq(jsonfix_str(o, "data.a"), "3");
    cr_assert_str_eq(jsonfix_str(o, "data.b"), "2",
                     "fields outside the applied configuration stay");
    cJSON_Delete(o);
    wo.field_manager = NULL;
    ksimcli_codes(&fx);
    cr_assert_eq(k8s_patch(fx.c, &CM, "default", "ssa", K8S_PATCH_APPLY, p, &wo, &o, &err),
                 KERR_INVAL);
    cr_assert_str_eq(ksimcli_codes(&fx), "", "refused before any request");
    cJSON_Delete(q);
    cJSON_Delete(p);
    free(body);
}

Test(client_kubesim, delete_preconditions)
{
    struct k8s_delete_opts d = { .precondition_uid = "0d1e3b5c-0000-4000-8000-000000000000" };
    cJSON *o = NULL, *ans = NULL;

    ksimcli_init(&fx, NULL, NULL);
    ksimcli_create_cm(fx.c, "default", "pre", NULL, &o);
    FAILS(k8s_delete(fx.c, &CM, "default", "pre", &d, NULL, &err), KERR_CONFLICT, 409, "Conflict");
    cr_assert_not_null(strstr(err.msg, "Precondition failed: UID in precondition: "
                                       "0d1e3b5c-0000-4000-8000-000000000000"),
                       "%s", err.msg);
    d.precondition_uid = jsonfix_str(o, "metadata.uid");
    d.precondition_resource_version = "1";
    FAILS(k8s_delete(fx.c, &CM, "default", "pre", &d, NULL, &err), KERR_CONFLICT, 409, "Conflict");
    cr_assert_not_null(strstr(err.msg, "ResourceVersion in precondition: 1"), "%s", err.msg);
    cr_assert(await_get(&CM, "pre", NULL, KERR_OK, NULL, 0), "a failed precondition deleted");
    d.precondition_resource_version = jsonfix_str(o, "metadata.resourceVersion");
    OK(k8s_delete(fx.c, &CM, "default", "pre", &d, &ans, &err));
    cr_assert_str_eq(jsonfix_str(ans, "kind"), "Status");
    cr_assert_str_eq(jsonfix_str(ans, "status"), "Success");
    cr_assert(await_get(&CM, "pre", NULL, KERR_NOTFOUND, NULL, 0));
    cJSON_Delete(ans);
    cJSON_Delete(o);
}

/* ConfigMap child, owned by ConfigMap parent (blockOwnerDeletion), then delete the parent with
 * policy: the answer carries finalizer (and a deletionTimestamp), or is a Success Status. */
static void delete_parent(const char *parent, const char *child, const char *policy,
                          const char *finalizer)
{
    struct k8s_delete_opts d = { .propagation_policy = policy };
    cJSON *p = NULL, *ch = ksimcli_cm(child, NULL),
          *ref = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":"
                               "\"ConfigMap\",\"blockOwnerDeletion\":"
                               "true}");

    ksimcli_create_cm(fx.c, "default", parent, NULL, &p);
    OK(kjson_set_str(ref, "name", parent, &err));
    OK(kjson_set_str(ref, "uid", jsonfix_str(p, "metadata.uid"), &err));
    OK(kjson_set(ch, "metadata.ownerReferences", cJSON_CreateArray(), &err));
    OK(kjson_set(ch, "metadata.ownerReferences.0", ref, &err));
    OK(k8s_create(fx.c, &CM, "default", ch, NULL, NULL, &err));
    cJSON_Delete(p);
    OK(k8s_delete(fx.c, &CM, "default", parent, &d, &p, &err));
    if (finalizer) {
        cr_assert_str_eq(jsonfix_str(p, "metadata.finalizers.0"), finalizer, "%s", policy);
        cr_assert_neq(jsonfix_str(p, "metadata.deletionTimestamp")[0], '\0');
    } else {
        cr_assert_str_eq(jsonfix_str(p, "status"), "Success");
    }
    cJSON_Delete(p);
    cJSON_Delete(ch);
}

Test(client_kubesim, delete_propagation_policies_reach_the_garbage_collector)
{
    struct ksim_harness_opts ho = { .gc_interval_ms = 20 };
    cJSON *o = NULL;

    ksimcli_init(&fx, &ho, NULL);
    delete_parent("orphan-parent", "orphan-child", "Orphan", "orphan");
    cr_assert(await_get(&CM, "orphan-parent", NULL, KERR_NOTFOUND, NULL, 0));
    OK(k8s_get(fx.c, &CM, "default", "orphan-child", NULL, &o, &err));
    cr_assert_null(kjson_get(o, "metadata.ownerReferences.0"), "orphaned, not deleted");
    cJSON_Delete(o);
    delete_parent("fg-parent", "fg-child", "Foreground", "foregroundDeletion");
    cr_assert(await_get(&CM, "fg-child", NULL, KERR_NOTFOUND, NULL, 0));
    cr_assert(await_get(&CM, "fg-parent", NULL, KERR_NOTFOUND, NULL, 0));
    delete_parent("bg-parent", "bg-child", "Background", NULL);
    cr_assert(await_get(&CM, "bg-child", NULL, KERR_NOTFOUND, NULL, 0));
}

Test(client_kubesim, crd_created_then_served_with_status_subresource)
{
    struct k8s_write_opts status = { .subresource = "status" };
    cJSON *crd = jsonfix_parse(crd_json), *etcd = NULL, *o = NULL,
          *p = jsonfix_parse("{\"spec\":{}}");

    ksimcli_init(&fx, NULL, NULL);
    FAILS(k8s_list(fx.c, &ETCD, "default", NULL, &o, &err), KERR_NOTFOUND, 404, "NotFound");
    OK(k8s_create(fx.c, &CRD, NULL, crd, NULL, NULL, &err));
    o = jsonfix_parse(
        "{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\",\"metadata\":"
        "{\"name\":\"main\"},\"spec\":{\"replicas\":3},\"status\":{\"ready\":true}}");
    OK(k8s_create(fx.c, &ETCD, "default", o, NULL, &etcd, &err));
    cr_assert_null(kjson_get(etcd, "status"), "create ignores status");
    OK(kjson_set_int(etcd, "spec.replicas", 4, &err));
    OK(kjson_set_bool(etcd, "status.ready", true, &err));
    cJSON_Delete(o);
    OK(k8s_update(fx.c, &ETCD, NULL, NULL, etcd, NULL, &o, &err));
    cr_assert_eq(jsonfix_int(o, "spec.replicas"), 4);
    cr_assert_null(kjson_get(o, "status"), "the main resource ignores status");
    cr_assert_eq(jsonfix_int(o, "metadata.generation"), 2);
    OK(kjson_set_int(o, "spec.replicas", 1, &err));
    OK(kjson_set_int(o, "status.replicas", 4, &err));
    cJSON_Delete(etcd);
    OK(k8s_update(fx.c, &ETCD, NULL, NULL, o, &status, &etcd, &err));
    cr_assert_eq(jsonfix_int(etcd, "spec.replicas"), 4, "/status ignores spec");
    cr_assert_eq(jsonfix_int(etcd, "status.replicas"), 4);
    cr_assert_eq(jsonfix_int(etcd, "metadata.generation"), 2, "a status write is not a generation");
    cr_assert(await_get(&ETCD, "main", "scale", KERR_OK, "status.replicas", 4), "Scale view");
    FAILS(k8s_patch(fx.c, &ETCD, "default", "main", K8S_PATCH_STRATEGIC, p, NULL, NULL, &err),
          KERR_API, 415, "UnsupportedMediaType");
    OK(k8s_delete(fx.c, &CRD, NULL, "etcds.druid.gardener.cloud", NULL, NULL, &err));
    cr_assert(await_get(&ETCD, "main", NULL, KERR_NOTFOUND, NULL, 0), "served no more");
    cJSON_Delete(etcd);
    cJSON_Delete(o);
    cJSON_Delete(p);
    cJSON_Delete(crd);
}

Test(client_kubesim, scale_subresource_of_a_statefulset)
{
    struct ksim_harness_opts ho = { .sts_delay_ms = -1 };
    struct k8s_write_opts sub = { .subresource = "scale" };
    cJSON *sts = jsonfix_parse(sts_json), *sc = NULL, *o = NULL, *stale;

    ksimcli_init(&fx, &ho, NULL);
    OK(k8s_create(fx.c, &STS, NULL, sts, NULL, NULL, &err));
    OK(k8s_get(fx.c, &STS, "default", "web", "scale", &sc, &err));
    cr_assert_str_eq(jsonfix_str(sc, "kind"), "Scale");
    cr_assert_str_eq(jsonfix_str(sc, "apiVersion"), "autoscaling/v1");
    cr_assert_str_eq(jsonfix_str(sc, "metadata.name"), "web");
    cr_assert_eq(jsonfix_int(sc, "spec.replicas"), 2);
    cr_assert_str_eq(jsonfix_str(sc, "status.selector"), "app=web");
    stale = cJSON_Duplicate(sc, 1);
    OK(kjson_set_int(sc, "spec.replicas", 5, &err));
    OK(k8s_update(fx.c, &STS, NULL, "web", sc, &sub, &o, &err));
    cr_assert_eq(jsonfix_int(o, "spec.replicas"), 5);
    cJSON_Delete(o);
    OK(kjson_set_int(stale, "spec.replicas", 1, &err));
    FAILS(k8s_update(fx.c, &STS, NULL, "web", stale, &sub, NULL, &err), KERR_CONFLICT, 409,
          "Conflict");
    cr_assert_not_null(strstr(err.msg, "the object has been modified"), "%s", err.msg);
    OK(k8s_get(fx.c, &STS, "default", "web", NULL, &o, &err));
    cr_assert_eq(jsonfix_int(o, "spec.replicas"), 5, "the scale write reached the StatefulSet");
    cr_assert_eq(jsonfix_int(o, "metadata.generation"), 2);
    cr_assert(await_get(&STS, "web", "scale", KERR_OK, "status.replicas", 5),
              "the status follows the scaled spec");
    cJSON_Delete(o);
    cJSON_Delete(sc);
    cJSON_Delete(stale);
    cJSON_Delete(sts);
}
