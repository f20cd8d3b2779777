/* kube-sim's apps/v1 ReplicaSets and DaemonSets (discovery, defaults, status, scale, selector
 * validation, cluster-wide paged lists) and its Pod volume validation, through its HTTPS API. */
#include "tests/kube-sim/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

static struct ksim_harness *h;

static void setup(void)
{
    h = ksimfix_start(NULL);
}

static void teardown(void)
{
    ksim_harness_stop(h);
}

TestSuite(kubesim_apps, .init = setup, .fini = teardown, .timeout = 60);

static const char *mp = "application/merge-patch+json";

/* A workload of kind in namespace ns: selector app=<name>, template labels app=<tlabel>. */
static cJSON *create(const char *plural, const char *kind, const char *ns, const char *name,
                     const char *tlabel, long *code)
{
    char path[256], body[1024];

    snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/%s", ns, plural);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"apps/v1\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"%s\"}},\"template\":{"
             "\"metadata\":{\"labels\":{\"app\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":"
             "\"c\",\"image\":\"busybox\"}]}}}}",
             kind, name, name, tlabel);
    return ksimfix_call(h, "POST", path, NULL, body, code);
}

static void create_ok(const char *plural, const char *kind, const char *ns, const char *name)
{
    long code;

    cJSON_Delete(create(plural, kind, ns, name, name, &code));
    cr_assert_eq(code, 201, "create %s %s/%s: %ld", kind, ns, name, code);
}

static const cJSON *resource(const cJSON *list, const char *name)
{
    const cJSON *r;

    cJSON_ArrayForEach (r, kjson_get(list, "resources")) {
        if (strcmp(jsonfix_str(r, "name"), name) == 0)
            return r;
    }
    return NULL;
}

Test(kubesim_apps, discovery)
{
    long code;
    cJSON *j = ksimfix_call(h, "GET", "/apis/apps/v1", NULL, NULL, &code);
    const cJSON *r;
    char names[256] = "";
    size_t n = 0;

    cr_assert_eq(code, 200);
    r = resource(j, "replicasets");
    cr_assert_not_null(r);
    cr_assert_str_eq(jsonfix_str(r, "kind"), "ReplicaSet");
    cr_assert_str_eq(jsonfix_str(r, "singularName"), "replicaset");
    cr_assert_str_eq(jsonfix_str(r, "shortNames.0"), "rs");
    cr_assert_str_eq(jsonfix_str(r, "categories.0"), "all");
    cr_assert(cJSON_IsTrue(kjson_get(r, "namespaced")));
    r = resource(j, "daemonsets");
    cr_assert_not_null(r);
    cr_assert_str_eq(jsonfix_str(r, "kind"), "DaemonSet");
    cr_assert_str_eq(jsonfix_str(r, "shortNames.0"), "ds");
    cr_assert_str_eq(jsonfix_str(r, "categories.0"), "all");
    cr_assert_not_null(resource(j, "replicasets/status"));
    cr_assert_not_null(resource(j, "replicasets/scale"));
    cr_assert_not_null(resource(j, "daemonsets/status"));
    cr_assert_null(resource(j, "daemonsets/scale"), "a DaemonSet has no scale subresource");
    /* kube-apiserver lists a group version's resources sorted by name */
    cJSON_ArrayForEach (r, kjson_get(j, "resources")) {
        if (!strchr(jsonfix_str(r, "name"), '/'))
            n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", n ? "," : "",
                                  jsonfix_str(r, "name"));
    }
    cr_assert_str_eq(names, "daemonsets,deployments,replicasets,statefulsets");
    cJSON_Delete(j);
}

Test(kubesim_apps, replicaset_defaults_status_and_scale)
{
    const char *path = "/apis/apps/v1/namespaces/default/replicasets/front";
    cJSON *j;
    long code;

    j = create("replicasets", "ReplicaSet", "default", "front", "front", &code);
    cr_assert_eq(code, 201);
    cr_assert_eq(jsonfix_int(j, "spec.replicas"), 1, "spec.replicas defaults to 1");
    cr_assert_eq(jsonfix_int(j, "metadata.generation"), 1);
    cr_assert_eq(jsonfix_int(j, "status.replicas"), 0);
    cr_assert_str_eq(jsonfix_str(j, "spec.template.spec.restartPolicy"), "Always");
    cJSON_Delete(j);

    j = ksimfix_call(h, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/front/status", mp,
                     "{\"spec\":{\"replicas\":9},\"status\":{\"replicas\":1,\"readyReplicas\":1}}",
                     &code);
    cr_assert_eq(code, 200);
    cr_assert_eq(jsonfix_int(j, "spec.replicas"), 1, "/status ignores the spec");
    cr_assert_eq(jsonfix_int(j, "status.readyReplicas"), 1);
    cr_assert_eq(jsonfix_int(j, "metadata.generation"), 1);
    cJSON_Delete(j);
    j = ksimfix_call(h, "PATCH", path, mp, "{\"status\":{\"readyReplicas\":0}}", &code);
    cr_assert_eq(code, 200);
    cr_assert_eq(jsonfix_int(j, "status.readyReplicas"), 1, "the main resource ignores status");
    cJSON_Delete(j);

    j = ksimfix_call(h, "PATCH", "/apis/apps/v1/namespaces/default/replicasets/front/scale", mp,
                     "{\"spec\":{\"replicas\":3}}", &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(j, "kind"), "Scale");
    cr_assert_str_eq(jsonfix_str(j, "status.selector"), "app=front");
    cJSON_Delete(j);
    j = ksimfix_call(h, "GET", path, NULL, NULL, &code);
    cr_assert_eq(jsonfix_int(j, "spec.replicas"), 3);
    cr_assert_eq(jsonfix_int(j, "metadata.generation"), 2);
    cJSON_Delete(j);
}

Test(kubesim_apps, daemonset_defaults_and_status)
{
    cJSON *j;
    long code;

    j = create("daemonsets", "DaemonSet", "default", "agent", "agent", &code);
    cr_assert_eq(code, 201);
    cr_assert_str_eq(jsonfix_str(j, "spec.updateStrategy.type"), "RollingUpdate");
    cr_assert_eq(jsonfix_int(j, "spec.updateStrategy.rollingUpdate.maxUnavailable"), 1);
    cr_assert_eq(jsonfix_int(j, "spec.updateStrategy.rollingUpdate.maxSurge"), 0);
    cr_assert_eq(jsonfix_int(j, "spec.revisionHistoryLimit"), 10);
    cr_assert_null(kjson_get(j, "spec.replicas"));
    cr_assert_eq(jsonfix_int(j, "status.desiredNumberScheduled"), 0);
    cr_assert_eq(jsonfix_int(j, "status.numberReady"), 0);
    cJSON_Delete(j);
    j = ksimfix_call(h, "PATCH", "/apis/apps/v1/namespaces/default/daemonsets/agent/status", mp,
                     "{\"status\":{\"desiredNumberScheduled\":2,\"numberReady\":2}}", &code);
    cr_assert_eq(code, 200);
    cr_assert_eq(jsonfix_int(j, "status.desiredNumberScheduled"), 2);
    cJSON_Delete(j);
    cr_assert_eq(ksimfix_status(h, "/apis/apps/v1/namespaces/default/daemonsets/agent/scale"), 404);
}

Test(kubesim_apps, selector_and_containers_are_required)
{
    cJSON *j;
    long code;

    j = create("replicasets", "ReplicaSet", "default", "front", "other", &code);
    cr_assert_eq(code, 422);
    cr_assert_str_eq(jsonfix_str(j, "details.causes.0.field"), "spec.template.metadata.labels");
    cr_assert(strstr(jsonfix_str(j, "message"), "ReplicaSet.apps \"front\" is invalid: "), "%s",
              jsonfix_str(j, "message"));
    cJSON_Delete(j);
    j = create("daemonsets", "DaemonSet", "default", "agent", "other", &code);
    cr_assert_eq(code, 422);
    cJSON_Delete(j);
    j = ksimfix_call(h, "POST", "/apis/apps/v1/namespaces/default/daemonsets", NULL,
                     "{\"apiVersion\":\"apps/v1\",\"kind\":\"DaemonSet\",\"metadata\":{\"name\":"
                     "\"agent\"},\"spec\":{\"template\":{\"metadata\":{\"labels\":{\"app\":"
                     "\"agent\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}}}",
                     &code);
    cr_assert_eq(code, 422);
    cr_assert_str_eq(jsonfix_str(j, "message"),
                     "DaemonSet.apps \"agent\" is invalid: spec.selector: Required value");
    cJSON_Delete(j);
    j = ksimfix_call(h, "POST", "/apis/apps/v1/namespaces/default/replicasets", NULL,
                     "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":"
                     "\"front\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"front\"}},"
                     "\"template\":{\"metadata\":{\"labels\":{\"app\":\"front\"}},\"spec\":{}}}}",
                     &code);
    cr_assert_eq(code, 422);
    cr_assert_str_eq(jsonfix_str(j, "message"), "ReplicaSet.apps \"front\" is invalid: "
                                                "spec.template.spec.containers: Required value");
    cJSON_Delete(j);
    cr_assert_eq(ksimfix_status(h, "/apis/apps/v1/namespaces/default/replicasets/front"), 404);
}

/* Page through path (limit 2) and return the names seen, "ns/name" joined by ','. */
static void list_all(const char *path, char *out, size_t size)
{
    char url[1024];
    const char *cont = "";
    const cJSON *it;
    cJSON *page = NULL;
    size_t n = 0;
    int pages = 0;

    out[0] = '\0';
    do {
        snprintf(url, sizeof(url), "%s?limit=2%s%s", path, *cont ? "&continue=" : "", cont);
        cJSON_Delete(page);
        page = ksimfix_call(h, "GET", url, NULL, NULL, &(long){ 0 });
        cr_assert_not_null(page);
        cr_assert_leq(cJSON_GetArraySize(kjson_get(page, "items")), 2);
        cJSON_ArrayForEach (it, kjson_get(page, "items")) {
            n += (size_t)snprintf(out + n, size - n, "%s%s/%s", n ? "," : "",
                                  jsonfix_str(it, "metadata.namespace"),
                                  jsonfix_str(it, "metadata.name"));
            cr_assert_lt(n, size);
        }
        cont = jsonfix_str(page, "metadata.continue");
        cr_assert_lt(++pages, 10, "the pages do not end");
    } while (*cont);
    cJSON_Delete(page);
}

Test(kubesim_apps, cluster_wide_paged_lists)
{
    char names[512];
    long code;

    cJSON_Delete(ksimfix_call(h, "POST", "/api/v1/namespaces", NULL,
                              "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{"
                              "\"name\":\"shoot\"}}",
                              &code));
    cr_assert_eq(code, 201);
    create_ok("replicasets", "ReplicaSet", "default", "a");
    create_ok("replicasets", "ReplicaSet", "shoot", "b");
    create_ok("replicasets", "ReplicaSet", "shoot", "c");
    create_ok("daemonsets", "DaemonSet", "default", "d");
    create_ok("daemonsets", "DaemonSet", "shoot", "e");
    create_ok("daemonsets", "DaemonSet", "shoot", "f");
    create_ok("daemonsets", "DaemonSet", "shoot", "g");
    list_all("/apis/apps/v1/replicasets", names, sizeof(names));
    cr_assert_str_eq(names, "default/a,shoot/b,shoot/c");
    list_all("/apis/apps/v1/daemonsets", names, sizeof(names));
    cr_assert_str_eq(names, "default/d,shoot/e,shoot/f,shoot/g");
    list_all("/apis/apps/v1/namespaces/shoot/daemonsets", names, sizeof(names));
    cr_assert_str_eq(names, "shoot/e,shoot/f,shoot/g");
}

/* POST a Pod named p with spec (JSON text); the answer, *code its status. */
static cJSON *create_pod(const char *spec, long *code)
{
    char body[2048];

    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":%s}",
             spec);
    return ksimfix_call(h, "POST", "/api/v1/namespaces/default/pods", NULL, body, code);
}

Test(kubesim_apps, pod_volumes_are_validated)
{
    cJSON *j;
    long code;

    j = create_pod("{\"volumes\":[{\"name\":\"x\",\"emptyDir\":{}},{\"name\":\"x\",\"emptyDir\":{}"
                   "}],\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"volumeMounts\":[{\"name\":"
                   "\"x\",\"mountPath\":\"/a\"}]}]}",
                   &code);
    cr_assert_eq(code, 422);
    cr_assert_str_eq(jsonfix_str(j, "reason"), "Invalid");
    cr_assert_str_eq(jsonfix_str(j, "message"),
                     "Pod \"p\" is invalid: spec.volumes[1].name: Duplicate value: \"x\"");
    cr_assert_str_eq(jsonfix_str(j, "details.causes.0.reason"), "FieldValueDuplicate");
    cr_assert_str_eq(jsonfix_str(j, "details.causes.0.field"), "spec.volumes[1].name");
    cJSON_Delete(j);

    j = create_pod("{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"volumeMounts\":[{\"name\":"
                   "\"x\",\"mountPath\":\"/a\"}]}]}",
                   &code);
    cr_assert_eq(code, 422);
    cr_assert_str_eq(jsonfix_str(j, "message"), "Pod \"p\" is invalid: spec.containers[0]."
                                                "volumeMounts[0].name: Not found: \"x\"");
    cr_assert_str_eq(jsonfix_str(j, "details.causes.0.reason"), "FieldValueNotFound");
    cJSON_Delete(j);

    j = create_pod("{\"volumes\":[{\"name\":\"x\",\"emptyDir\":{}},{\"name\":\"y\",\"emptyDir\":{}"
                   "}],\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"volumeMounts\":[{\"name\":"
                   "\"x\",\"mountPath\":\"/a\"},{\"name\":\"y\",\"mountPath\":\"/a\"}]}]}",
                   &code);
    cr_assert_eq(code, 422);
    cr_assert_str_eq(jsonfix_str(j, "message"),
                     "Pod \"p\" is invalid: spec.containers[0].volumeMounts[1].mountPath: Invalid "
                     "value: \"/a\": must be unique");
    cJSON_Delete(j);
    cr_assert_eq(ksimfix_status(h, "/api/v1/namespaces/default/pods/p"), 404);

    /* one path in two containers, one volume mounted twice: valid */
    j = create_pod("{\"volumes\":[{\"name\":\"x\",\"emptyDir\":{}}],\"containers\":[{\"name\":"
                   "\"c\",\"image\":\"i\",\"volumeMounts\":[{\"name\":\"x\",\"mountPath\":\"/a\"},"
                   "{\"name\":\"x\",\"mountPath\":\"/b\"}]},{\"name\":\"d\",\"image\":\"i\","
                   "\"volumeMounts\":[{\"name\":\"x\",\"mountPath\":\"/a\"}]}]}",
                   &code);
    cr_assert_eq(code, 201, "%s", jsonfix_str(j, "message"));
    cJSON_Delete(j);
}

Test(kubesim_apps, pod_templates_are_not_validated)
{
    const char *tmpl = "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{"
                       "\"name\":\"front\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":"
                       "\"front\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"front\"}},"
                       "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                       "\"volumeMounts\":[{\"name\":\"x\",\"mountPath\":\"/a\"}]}]}}}}";
    cJSON *j;
    long code;

    j = ksimfix_call(h, "POST", "/apis/apps/v1/namespaces/default/replicasets", NULL, tmpl, &code);
    cr_assert_eq(code, 201, "%s", jsonfix_str(j, "message"));
    cJSON_Delete(j);
}
