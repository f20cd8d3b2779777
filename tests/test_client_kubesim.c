/* The API client (common/k8s) against kube-sim, as it runs against kube-apiserver: errors
 * with their Status, selectors, paging, the four PATCH types, preconditions and propagation,
 * the status and scale subresources, a CRD, Retry-After, and bearer tokens from a file. */
#include "common/k8s.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cfg.h"
#include "common/kjson.h"
#include "common/log.h"
#include "tests/kube-sim/fault.h"
#include "tests/kube-sim/harness.h"

static const struct k8s_resource CM = { "", "v1", "configmaps", 1 };
static const struct k8s_resource NS = { "", "v1", "namespaces", 0 };
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
#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

/* call failed with code, HTTP status and Status reason. */
#define FAILS(call, code, status, why)                          \
    do {                                                        \
        cr_assert_eq((call), (code), "%s: %s", #call, err.msg); \
        cr_assert_eq(err.http_status, (status), "%s", err.msg); \
        cr_assert_str_eq(err.reason, (why), "%s", err.msg);     \
    } while (0)

/* The HTTP status of every attempt the client made (its done hook), and one-shot actions. */
struct attempts {
    pthread_mutex_t mu;
    int code[64];
    int n;
    int reset_on_429;     /* clear kube-sim's faults after the first 429 */
    int expire_after_get; /* expire kube-sim's history after the first GET answered 200 */
};

static struct ksim_harness *h;
static struct k8s_client *c;
static struct kerr_info err;
static struct attempts att = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void on_done(void *arg, const char *method, int code, double seconds)
{
    struct attempts *a = arg;
    cJSON *reset;

    (void)seconds;
    pthread_mutex_lock(&a->mu);
    if (a->n < 64)
        a->code[a->n++] = code;
    if (code == 429 && a->reset_on_429) {
        a->reset_on_429 = 0;
        reset = cJSON_CreateObject();
        cr_assert_not_null(cJSON_AddTrueToObject(reset, "reset"));
        OK(ksim_fault_configure(h->api->fault, h->api->store, reset, NULL, &err));
        cJSON_Delete(reset);
    }
    if (code == 200 && a->expire_after_get && strcmp(method, "GET") == 0) {
        a->expire_after_get = 0;
        ksim_store_expire_history(h->api->store);
    }
    pthread_mutex_unlock(&a->mu);
}

/* The codes recorded since the last call, as "429,200". */
static const char *codes(void)
{
    static char out[256];
    size_t off = 0;
    int i;

    pthread_mutex_lock(&att.mu);
    out[0] = '\0';
    for (i = 0; i < att.n && off < sizeof(out) - 8; i++)
        off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%d", i ? "," : "", att.code[i]);
    att.n = 0;
    pthread_mutex_unlock(&att.mu);
    return out;
}

/* The harness's admin.kubeconfig, loaded as a user would. */
static void load_rest(struct cfg_rest *rest)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/admin.kubeconfig", h->dir);
    OK(cfg_load_kubeconfig(path, NULL, rest, &err));
    cr_assert_str_eq(rest->server, h->url);
    cr_assert_not_null(rest->ca_pem, "the kubeconfig carries kube-sim's CA");
}

static struct k8s_client *client_for(const struct cfg_rest *rest, const struct k8s_client_opts *co)
{
    struct k8s_client_opts o = { .request_timeout_ms = 10000 };
    struct k8s_client *k = NULL;

    if (co)
        o = *co;
    o.on_done = on_done;
    o.on_done_arg = &att;
    OK(k8s_client_new(rest, &o, &k, &err));
    return k;
}

static void start(const struct ksim_harness_opts *ho, const struct k8s_client_opts *co)
{
    struct ksim_harness_opts quiet = { .no_controllers = 1 };
    struct cfg_rest rest;

    log_set_level(LOG_ERROR);
    OK(ksim_harness_start(ho ? ho : &quiet, &h, &err));
    load_rest(&rest);
    c = client_for(&rest, co);
    cfg_rest_release(&rest);
}

static void stop(void)
{
    k8s_client_free(c);
    c = NULL;
    ksim_harness_stop(h);
    h = NULL;
}

TestSuite(client_kubesim, .fini = stop, .timeout = 30);

static void faults(const char *json)
{
    struct ksim_http r;

    cr_assert_eq(ksim_harness_call(h, NULL, "POST", "/kube-sim/faults", NULL, json, 0, &r), 0);
    cr_assert_eq(r.code, 200, "%s", buf_str(&r.body));
    ksim_http_release(&r);
}

static cJSON *parse(const char *text)
{
    cJSON *j = NULL;

    OK(kjson_parse(text, strlen(text), NULL, &j, NULL, &err));
    return j;
}

static const char *str(const cJSON *j, const char *path)
{
    const char *s = kjson_get_str(j, path);

    return s ? s : "";
}

static int64_t num(const cJSON *j, const char *path)
{
    int64_t v = -1;

    (void)kjson_get_int64(j, path, &v);
    return v;
}

/* A ConfigMap with data {k: v} and labels "a=1,b=2" (NULL: none). OWNED by the caller. */
static cJSON *cm(const char *name, const char *labels)
{
    cJSON *o = parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"data\":{\"k\":\"v\"}}");
    char path[160], val[64];
    size_t n, k;

    OK(kjson_set_str(o, "metadata.name", name, &err));
    for (; labels && *labels; labels += n + (labels[n] == ',')) {
        n = strcspn(labels, ",");
        k = strcspn(labels, "=");
        cr_assert_lt(k, n, "%s", labels);
        snprintf(path, sizeof(path), "metadata.labels[%.*s]", (int)k, labels);
        snprintf(val, sizeof(val), "%.*s", (int)(n - k - 1), labels + k + 1);
        OK(kjson_set_str(o, path, val, &err));
    }
    return o;
}

/* Create ConfigMap name in ns through the client; *out (optional) the stored object. */
static void create_cm(const char *ns, const char *name, const char *labels, cJSON **out)
{
    cJSON *o = cm(name, labels);

    OK(k8s_create(c, &CM, ns, o, NULL, out, &err));
    cJSON_Delete(o);
}

static void create_ns(const char *name)
{
    cJSON *o = parse("{\"metadata\":{}}");

    OK(kjson_set_str(o, "metadata.name", name, &err));
    OK(k8s_create(c, &NS, NULL, o, NULL, NULL, &err));
    cJSON_Delete(o);
}

/* The item names of a List, in the server's order (etcd key order), as "a,b,c". */
static const char *names(const cJSON *list)
{
    static char out[1024];
    const cJSON *it;
    size_t off = 0;

    out[0] = '\0';
    cJSON_ArrayForEach (it, kjson_get_arr(list, "items")) {
        off += (size_t)snprintf(out + off, sizeof(out) - off, "%s%s", off ? "," : "",
                                str(it, "metadata.name"));
        cr_assert_lt(off, sizeof(out));
    }
    return out;
}

static const char *select_names(const char *ns, const char *labels, const char *fields)
{
    struct k8s_list_opts lo = { .label_selector = labels, .field_selector = fields };
    cJSON *l = NULL;
    const char *s;

    OK(k8s_list(c, &CM, ns, &lo, &l, &err));
    s = names(l);
    cJSON_Delete(l);
    return s;
}

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Poll GET until it returns want, or number path equals value when path is set (5 s). */
static int await_get(const struct k8s_resource *res, const char *name, const char *sub,
                     enum kerr want, const char *path, int64_t value)
{
    long long end = now_ms() + 5000;
    enum kerr rc;
    cJSON *o;
    int done;

    do {
        o = NULL;
        rc = k8s_get(c, res, "default", name, sub, &o, NULL);
        done = rc == want && (!path || num(o, path) == value);
        cJSON_Delete(rc == KERR_OK ? o : NULL);
        if (done)
            return 1;
        nanosleep(&(struct timespec){ 0, 20000000L }, NULL);
    } while (now_ms() < end);
    return 0;
}

Test(client_kubesim, errors_carry_the_apiserver_status)
{
    cJSON *o = NULL, *first = NULL, *now = NULL;

    start(NULL, NULL);
    FAILS(k8s_get(c, &CM, "default", "nope", NULL, &o, &err), KERR_NOTFOUND, 404, "NotFound");
    cr_assert_str_eq(err.msg, "configmaps \"nope\" not found");
    FAILS(k8s_get(c, &STS, "default", "nope", "scale", &o, &err), KERR_NOTFOUND, 404, "NotFound");
    cr_assert_str_eq(err.msg, "statefulsets.apps \"nope\" not found");
    cr_assert_null(o);
    create_cm("default", "x", NULL, &first);
    cr_assert_eq(strlen(str(first, "metadata.uid")), 36, "the server filled the uid");
    o = cm("x", NULL);
    FAILS(k8s_create(c, &CM, "default", o, NULL, NULL, &err), KERR_EXISTS, 409, "AlreadyExists");
    cr_assert_str_eq(err.msg, "configmaps \"x\" already exists");
    cr_assert_str_eq(codes(), "404,404,201,409", "neither 404 nor 409 is retried");
    OK(kjson_set_str(first, "data.k", "one", &err));
    OK(k8s_update(c, &CM, NULL, NULL, first, NULL, NULL, &err));
    OK(kjson_set_str(first, "data.k", "two", &err));
    FAILS(k8s_update(c, &CM, NULL, NULL, first, NULL, NULL, &err), KERR_CONFLICT, 409, "Conflict");
    cr_assert_not_null(strstr(err.msg, "Operation cannot be fulfilled on configmaps \"x\": the "
                                       "object has been modified"),
                       "%s", err.msg);
    OK(k8s_get(c, &CM, "default", "x", NULL, &now, &err));
    cr_assert_str_eq(str(now, "data.k"), "one", "the stale write changed nothing");
    cJSON_Delete(o);
    cJSON_Delete(first);
    cJSON_Delete(now);
}

Test(client_kubesim, list_with_label_and_field_selectors)
{
    struct k8s_list_opts bad = { .label_selector = "env in (prod" };
    cJSON *l = NULL;

    start(NULL, NULL);
    create_ns("sel");
    create_cm("sel", "a", "env=prod,tier=web,example.com/role=primary", NULL);
    create_cm("sel", "b", "env=staging,tier=db", NULL);
    create_cm("sel", "c", "env=dev", NULL);
    create_cm("sel", "d", "example.com/role=replica.v1_x-y", NULL);
    create_cm("default", "a", "env=prod", NULL);
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
    FAILS(k8s_list(c, &CM, "sel", &bad, &l, &err), KERR_API, 400, "BadRequest");
    bad.label_selector = NULL;
    bad.field_selector = "data.k=v";
    FAILS(k8s_list(c, &CM, "sel", &bad, &l, &err), KERR_API, 400, "BadRequest");
    cr_assert_str_eq(err.msg, "field label not supported: data.k");
}

static void create_many(const char *ns, int n)
{
    char name[16];
    int i;

    create_ns(ns);
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "p%02d", i);
        create_cm(ns, name, NULL, NULL);
    }
}

Test(client_kubesim, limit_and_continue_pages_share_one_resource_version)
{
    struct k8s_list_opts lo = { .limit = 10 };
    char rv[32] = "", cont[512], seen[1024] = "";
    cJSON *page = NULL;
    int pages = 0;

    start(NULL, NULL);
    create_many("paged", 25);
    do {
        OK(k8s_list(c, &CM, "paged", &lo, &page, &err));
        cr_assert_eq(cJSON_GetArraySize(kjson_get_arr(page, "items")), pages < 2 ? 10 : 5);
        if (!pages) {
            snprintf(rv, sizeof(rv), "%s", str(page, "metadata.resourceVersion"));
            cr_assert_eq(num(page, "metadata.remainingItemCount"), 15);
            create_cm("default", "between-pages", NULL, NULL);
        }
        cr_assert_str_eq(str(page, "metadata.resourceVersion"), rv, "page %d", pages);
        snprintf(seen + strlen(seen), sizeof(seen) - strlen(seen), "%s%s", pages ? "," : "",
                 names(page));
        snprintf(cont, sizeof(cont), "%s", str(page, "metadata.continue"));
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

    start(NULL, NULL);
    create_many("paged", 25);
    codes();
    OK(k8s_list_all(c, &CM, "paged", &lo, &l, &err));
    cr_assert_str_eq(codes(), "200,200,200");
    cr_assert_eq(cJSON_GetArraySize(kjson_get_arr(l, "items")), 25);
    cr_assert_null(kjson_get(l, "metadata.continue"));
    cr_assert_neq(str(l, "metadata.resourceVersion")[0], '\0');
    cJSON_Delete(l);
    att.expire_after_get = 1; /* the continue token of page 1 expires, as after compaction */
    OK(k8s_list_all(c, &CM, "paged", &lo, &l, &err));
    cr_assert_str_eq(codes(), "200,410,200", "one restart without a limit");
    cr_assert_eq(cJSON_GetArraySize(kjson_get_arr(l, "items")), 25);
    cr_assert_str_eq(str(l, "items.24.metadata.name"), "p24");
    cJSON_Delete(l);
}

Test(client_kubesim, merge_and_json_patches)
{
    cJSON *p, *o = NULL, *before = NULL, *after = NULL;

    start(NULL, NULL);
    create_cm("default", "m", NULL, NULL);
    p = parse("{\"data\":{\"k\":null,\"x\":\"1\"},\"metadata\":{\"labels\":{\"l\":\"v\"}}}");
    OK(k8s_patch(c, &CM, "default", "m", K8S_PATCH_MERGE, p, NULL, &o, &err));
    cr_assert_null(kjson_get(o, "data.k"), "null removes a key");
    cr_assert_str_eq(str(o, "data.x"), "1");
    cr_assert_str_eq(str(o, "metadata.labels.l"), "v");
    cJSON_Delete(p);
    p = parse("[{\"op\":\"test\",\"path\":\"/data/x\",\"value\":\"1\"},"
              "{\"op\":\"replace\",\"path\":\"/data/x\",\"value\":\"2\"},"
              "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"a/b\":\"c\"}}]");
    OK(k8s_patch(c, &CM, "default", "m", K8S_PATCH_JSON, p, NULL, &before, &err));
    cr_assert_str_eq(str(before, "data.x"), "2");
    cr_assert_str_eq(str(before, "metadata.annotations[a/b]"), "c");
    cJSON_Delete(p);
    cJSON_Delete(o);
    o = NULL;
    p = parse("[{\"op\":\"remove\",\"path\":\"/data/x\"},"
              "{\"op\":\"test\",\"path\":\"/data/x\",\"value\":\"1\"}]");
    FAILS(k8s_patch(c, &CM, "default", "m", K8S_PATCH_JSON, p, NULL, &o, &err), KERR_API, 422,
          "Invalid");
    cr_assert_null(o);
    OK(k8s_get(c, &CM, "default", "m", NULL, &after, &err));
    cr_assert_str_eq(str(after, "data.x"), "2", "no operation of the failed patch applied");
    cr_assert_str_eq(str(after, "metadata.resourceVersion"),
                     str(before, "metadata.resourceVersion"));
    cJSON_Delete(p);
    cJSON_Delete(before);
    cJSON_Delete(after);
}

Test(client_kubesim, strategic_merge_merges_containers_by_name)
{
    cJSON *sts = parse(sts_json), *p, *o = NULL;
    const cJSON *ct;

    start(NULL, NULL);
    OK(k8s_create(c, &STS, NULL, sts, NULL, NULL, &err));
    p = parse("{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"side\","
              "\"image\":\"busybox\"},{\"name\":\"c\",\"env\":[{\"name\":\"E\",\"value\":"
              "\"1\"}]}]}}}}");
    OK(k8s_patch(c, &STS, "default", "web", K8S_PATCH_STRATEGIC, p, NULL, &o, &err));
    ct = kjson_get_arr(o, "spec.template.spec.containers");
    cr_assert_eq(cJSON_GetArraySize(ct), 2, "merged by name, not replaced");
    cr_assert_str_eq(str(ct, "0.name"), "c");
    cr_assert_str_eq(str(ct, "0.image"), "nginx", "fields of a merged container are kept");
    cr_assert_str_eq(str(ct, "0.env.0.value"), "1");
    cr_assert_str_eq(str(ct, "1.image"), "busybox");
    cr_assert_eq(num(o, "metadata.generation"), 2);
    cJSON_Delete(o);
    OK(k8s_patch(c, &STS, "default", "web", K8S_PATCH_MERGE, p, NULL, &o, &err));
    ct = kjson_get_arr(o, "spec.template.spec.containers");
    cr_assert_str_eq(str(ct, "0.name"), "side", "a merge patch replaces the list");
    cr_assert_null(kjson_get(ct, "1.image"));
    cJSON_Delete(o);
    cJSON_Delete(p);
    cJSON_Delete(sts);
}

Test(client_kubesim, server_side_apply_needs_and_sends_a_field_manager)
{
    struct k8s_write_opts wo = { .field_manager = "etcd-warden", .force = 1 };
    cJSON *p = parse("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                     "\"ssa\",\"namespace\":\"default\"},\"data\":{\"a\":\"1\"}}");
    cJSON *o = NULL, *q = parse("{\"data\":{\"b\":\"2\"}}");
    char *body = cJSON_PrintUnformatted(p);

    start(NULL, NULL);
    FAILS(k8s_request(c, "PATCH", "/api/v1/namespaces/default/configmaps/ssa",
                      "application/apply-patch+yaml", body, strlen(body), NULL, &err),
          KERR_API, 422, "Invalid");
    cr_assert_not_null(strstr(err.msg, "fieldManager: Required value"), "%s", err.msg);
    codes();
    OK(k8s_patch(c, &CM, "default", "ssa", K8S_PATCH_APPLY, p, &wo, &o, &err));
    cr_assert_str_eq(codes(), "201", "apply of a missing object creates it");
    cr_assert_str_eq(str(o, "data.a"), "1");
    cJSON_Delete(o);
    wo.field_manager = "someone-else";
    OK(k8s_patch(c, &CM, "default", "ssa", K8S_PATCH_MERGE, q, &wo, NULL, &err));
    OK(kjson_set_str(p, "data.a", "3", &err));
    wo.field_manager = "etcd-warden";
    OK(k8s_patch(c, &CM, "default", "ssa", K8S_PATCH_APPLY, p, &wo, &o, &err));
    cr_assert_str_eq(str(o, "data.a"), "3");
    cr_assert_str_eq(str(o, "data.b"), "2", "fields outside the applied configuration stay");
    cJSON_Delete(o);
    wo.field_manager = NULL;
    codes();
    cr_assert_eq(k8s_patch(c, &CM, "default", "ssa", K8S_PATCH_APPLY, p, &wo, &o, &err),
                 KERR_INVAL);
    cr_assert_str_eq(codes(), "", "refused before any request");
    cJSON_Delete(q);
    cJSON_Delete(p);
    free(body);
}

Test(client_kubesim, delete_preconditions)
{
    struct k8s_delete_opts d = { .precondition_uid = "0d1e3b5c-0000-4000-8000-000000000000" };
    cJSON *o = NULL, *ans = NULL;

    start(NULL, NULL);
    create_cm("default", "pre", NULL, &o);
    FAILS(k8s_delete(c, &CM, "default", "pre", &d, NULL, &err), KERR_CONFLICT, 409, "Conflict");
    cr_assert_not_null(strstr(err.msg, "Precondition failed: UID in precondition: "
                                       "0d1e3b5c-0000-4000-8000-000000000000"),
                       "%s", err.msg);
    d.precondition_uid = str(o, "metadata.uid");
    d.precondition_resource_version = "1";
    FAILS(k8s_delete(c, &CM, "default", "pre", &d, NULL, &err), KERR_CONFLICT, 409, "Conflict");
    cr_assert_not_null(strstr(err.msg, "ResourceVersion in precondition: 1"), "%s", err.msg);
    cr_assert(await_get(&CM, "pre", NULL, KERR_OK, NULL, 0), "a failed precondition deleted");
    d.precondition_resource_version = str(o, "metadata.resourceVersion");
    OK(k8s_delete(c, &CM, "default", "pre", &d, &ans, &err));
    cr_assert_str_eq(str(ans, "kind"), "Status");
    cr_assert_str_eq(str(ans, "status"), "Success");
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
    cJSON *p = NULL, *ch = cm(child, NULL),
          *ref = parse("{\"apiVersion\":\"v1\",\"kind\":"
                       "\"ConfigMap\",\"blockOwnerDeletion\":"
                       "true}");

    create_cm("default", parent, NULL, &p);
    OK(kjson_set_str(ref, "name", parent, &err));
    OK(kjson_set_str(ref, "uid", str(p, "metadata.uid"), &err));
    OK(kjson_set(ch, "metadata.ownerReferences", cJSON_CreateArray(), &err));
    OK(kjson_set(ch, "metadata.ownerReferences.0", ref, &err));
    OK(k8s_create(c, &CM, "default", ch, NULL, NULL, &err));
    cJSON_Delete(p);
    OK(k8s_delete(c, &CM, "default", parent, &d, &p, &err));
    if (finalizer) {
        cr_assert_str_eq(str(p, "metadata.finalizers.0"), finalizer, "%s", policy);
        cr_assert_neq(str(p, "metadata.deletionTimestamp")[0], '\0');
    } else {
        cr_assert_str_eq(str(p, "status"), "Success");
    }
    cJSON_Delete(p);
    cJSON_Delete(ch);
}

Test(client_kubesim, delete_propagation_policies_reach_the_garbage_collector)
{
    struct ksim_harness_opts ho = { .gc_interval_ms = 20 };
    cJSON *o = NULL;

    start(&ho, NULL);
    delete_parent("orphan-parent", "orphan-child", "Orphan", "orphan");
    cr_assert(await_get(&CM, "orphan-parent", NULL, KERR_NOTFOUND, NULL, 0));
    OK(k8s_get(c, &CM, "default", "orphan-child", NULL, &o, &err));
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
    cJSON *crd = parse(crd_json), *etcd = NULL, *o = NULL, *p = parse("{\"spec\":{}}");

    start(NULL, NULL);
    FAILS(k8s_list(c, &ETCD, "default", NULL, &o, &err), KERR_NOTFOUND, 404, "NotFound");
    OK(k8s_create(c, &CRD, NULL, crd, NULL, NULL, &err));
    o = parse("{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":\"Etcd\",\"metadata\":"
              "{\"name\":\"main\"},\"spec\":{\"replicas\":3},\"status\":{\"ready\":true}}");
    OK(k8s_create(c, &ETCD, "default", o, NULL, &etcd, &err));
    cr_assert_null(kjson_get(etcd, "status"), "create ignores status");
    OK(kjson_set_int(etcd, "spec.replicas", 4, &err));
    OK(kjson_set_bool(etcd, "status.ready", true, &err));
    cJSON_Delete(o);
    OK(k8s_update(c, &ETCD, NULL, NULL, etcd, NULL, &o, &err));
    cr_assert_eq(num(o, "spec.replicas"), 4);
    cr_assert_null(kjson_get(o, "status"), "the main resource ignores status");
    cr_assert_eq(num(o, "metadata.generation"), 2);
    OK(kjson_set_int(o, "spec.replicas", 1, &err));
    OK(kjson_set_int(o, "status.replicas", 4, &err));
    cJSON_Delete(etcd);
    OK(k8s_update(c, &ETCD, NULL, NULL, o, &status, &etcd, &err));
    cr_assert_eq(num(etcd, "spec.replicas"), 4, "/status ignores spec");
    cr_assert_eq(num(etcd, "status.replicas"), 4);
    cr_assert_eq(num(etcd, "metadata.generation"), 2, "a status write is not a generation");
    cr_assert(await_get(&ETCD, "main", "scale", KERR_OK, "status.replicas", 4), "Scale view");
    FAILS(k8s_patch(c, &ETCD, "default", "main", K8S_PATCH_STRATEGIC, p, NULL, NULL, &err),
          KERR_API, 415, "UnsupportedMediaType");
    OK(k8s_delete(c, &CRD, NULL, "etcds.druid.gardener.cloud", NULL, NULL, &err));
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
    cJSON *sts = parse(sts_json), *sc = NULL, *o = NULL, *stale;

    start(&ho, NULL);
    OK(k8s_create(c, &STS, NULL, sts, NULL, NULL, &err));
    OK(k8s_get(c, &STS, "default", "web", "scale", &sc, &err));
    cr_assert_str_eq(str(sc, "kind"), "Scale");
    cr_assert_str_eq(str(sc, "apiVersion"), "autoscaling/v1");
    cr_assert_str_eq(str(sc, "metadata.name"), "web");
    cr_assert_eq(num(sc, "spec.replicas"), 2);
    cr_assert_str_eq(str(sc, "status.selector"), "app=web");
    stale = cJSON_Duplicate(sc, 1);
    OK(kjson_set_int(sc, "spec.replicas", 5, &err));
    OK(k8s_update(c, &STS, NULL, "web", sc, &sub, &o, &err));
    cr_assert_eq(num(o, "spec.replicas"), 5);
    cJSON_Delete(o);
    OK(kjson_set_int(stale, "spec.replicas", 1, &err));
    FAILS(k8s_update(c, &STS, NULL, "web", stale, &sub, NULL, &err), KERR_CONFLICT, 409,
          "Conflict");
    cr_assert_not_null(strstr(err.msg, "the object has been modified"), "%s", err.msg);
    OK(k8s_get(c, &STS, "default", "web", NULL, &o, &err));
    cr_assert_eq(num(o, "spec.replicas"), 5, "the scale write reached the StatefulSet");
    cr_assert_eq(num(o, "metadata.generation"), 2);
    cr_assert(await_get(&STS, "web", "scale", KERR_OK, "status.replicas", 5),
              "the status follows the scaled spec");
    cJSON_Delete(o);
    cJSON_Delete(sc);
    cJSON_Delete(stale);
    cJSON_Delete(sts);
}

Test(client_kubesim, throttling_is_retried_after_retry_after)
{
    struct k8s_client_opts co = { .max_retries = 2, .max_retry_delay_ms = 10 };
    struct cfg_rest rest;
    struct k8s_client *impatient;
    long long t0;
    cJSON *o = NULL;

    start(NULL, NULL);
    create_cm("default", "t", NULL, NULL);
    faults("{\"throttleRate\":1}");
    codes();
    att.reset_on_429 = 1;
    t0 = now_ms();
    OK(k8s_get(c, &CM, "default", "t", NULL, &o, &err));
    cr_assert_geq(now_ms() - t0, 950, "kube-sim asks for Retry-After: 1");
    cr_assert_str_eq(codes(), "429,200");
    cJSON_Delete(o);
    faults("{\"throttleRate\":1}");
    load_rest(&rest);
    impatient = client_for(&rest, &co);
    cfg_rest_release(&rest);
    FAILS(k8s_get(impatient, &CM, "default", "t", NULL, &o, &err), KERR_TOOMANY, 429,
          "TooManyRequests");
    cr_assert_str_eq(codes(), "429,429,429", "max_retries 2, each sleep capped at 10 ms");
    k8s_client_free(impatient);
}

Test(client_kubesim, internal_error_without_retry_after_is_final)
{
    cJSON *o = NULL;

    start(NULL, NULL);
    faults("{\"errorRate\":1,\"match\":\"GET /api/v1/namespaces/default/configmaps\"}");
    FAILS(k8s_get(c, &CM, "default", "t", NULL, &o, &err), KERR_API, 500, "InternalError");
    cr_assert_str_eq(codes(), "500", "no Retry-After, no retry (as client-go)");
    OK(k8s_get(c, &NS, NULL, "default", NULL, &o, &err));
    cJSON_Delete(o);
}

Test(client_kubesim, no_token_is_unauthorized)
{
    struct cfg_rest rest;
    struct k8s_client *anon;
    cJSON *o = NULL;

    start(NULL, NULL);
    load_rest(&rest);
    free(rest.token);
    rest.token = strdup("");
    anon = client_for(&rest, NULL);
    cfg_rest_release(&rest);
    FAILS(k8s_get(anon, &NS, NULL, "default", NULL, &o, &err), KERR_UNAUTHORIZED, 401,
          "Unauthorized");
    cr_assert_str_eq(codes(), "401,401", "one retry after re-reading the token");
    k8s_client_free(anon);
}

/* Replace the token file by a rename, as kubelet swaps a projected token. */
static void write_token(const char *path, const char *token)
{
    char tmp[600];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.new", path);
    f = fopen(tmp, "w");
    cr_assert_not_null(f);
    cr_assert_geq(fprintf(f, "%s\n", token), 0);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(rename(tmp, path), 0);
}

static struct k8s_client *token_file_client(const char *path, const char *token)
{
    struct cfg_rest rest;
    struct k8s_client *k;

    write_token(path, token);
    load_rest(&rest);
    free(rest.token);
    rest.token = NULL;
    rest.token_file = strdup(path);
    k = client_for(&rest, NULL);
    cfg_rest_release(&rest);
    return k;
}

Test(client_kubesim, rotated_token_file_is_reread_after_a_401)
{
    struct ksim_harness_opts ho = { .no_controllers = 1,
                                    .token_csv = "alice-token,alice,uid-a,\n"
                                                 "root-token,root,uid-r,system:masters\n" };
    struct k8s_client *alice, *root;
    char path[300], root_path[300];
    const char *reset = "{\"reset\":true}";
    cJSON *o = NULL;

    start(&ho, NULL);
    snprintf(path, sizeof(path), "%s/token", h->dir);
    snprintf(root_path, sizeof(root_path), "%s/root-token", h->dir);
    alice = token_file_client(path, "expired-token");
    root = token_file_client(root_path, "root-token");
    cr_assert_eq(k8s_get(alice, &NS, NULL, "default", NULL, &o, &err), KERR_UNAUTHORIZED);
    cr_assert_str_eq(codes(), "401,401");
    write_token(path, "alice-token");
    OK(k8s_get(alice, &NS, NULL, "default", NULL, &o, &err));
    cr_assert_str_eq(codes(), "401,200", "the cached token failed, the rotated one worked");
    cJSON_Delete(o);
    OK(k8s_get(alice, &NS, NULL, "default", NULL, &o, &err));
    cr_assert_str_eq(codes(), "200", "the new token is kept");
    cJSON_Delete(o);
    cr_assert_eq(k8s_request(alice, "POST", "/kube-sim/faults", "application/json", reset,
                             strlen(reset), NULL, &err),
                 KERR_FORBIDDEN, "alice is no system:master");
    OK(k8s_request(root, "POST", "/kube-sim/faults", "application/json", reset, strlen(reset), NULL,
                   &err));
    k8s_client_free(root);
    k8s_client_free(alice);
}
