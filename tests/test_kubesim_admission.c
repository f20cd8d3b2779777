/* kube-sim admission webhooks: matching, the AdmissionReview, denials, patches, failures. */
#include "tests/kube-sim/harness.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"

/* What the test webhook answers. */
struct script {
    pthread_mutex_t mu;
    int deny;
    int code;
    const char *message;
    const char *patch;
    const char *warning;
    long sleep_ms;
    int bad_uid; /* answer with another uid */
    int race;    /* once: merge-patch data.b of ConfigMap c1 before answering */
    cJSON *last; /* the last review received */
};

static struct ksim_harness *h;
static struct ksim_harness_hook *hk;
static struct script sc;
static char *ca_bundle;

static cJSON *answer(const cJSON *review, const char *path, void *arg)
{
    struct script *s = arg;
    struct timespec ts;
    long code = 0;
    int race;
    cJSON *a;

    (void)path;
    pthread_mutex_lock(&s->mu);
    cJSON_Delete(s->last);
    s->last = cJSON_Duplicate(review, 1);
    cJSON_AddStringToObject(s->last, "path", path);
    a = ksim_harness_review_answer(review, !s->deny, s->code, s->message, s->patch, s->warning);
    if (a && s->bad_uid)
        kjson_set_str(a, "response.uid", "not-the-request-uid", NULL);
    ts.tv_sec = s->sleep_ms / 1000;
    ts.tv_nsec = (s->sleep_ms % 1000) * 1000000L;
    race = s->race;
    s->race = 0;
    pthread_mutex_unlock(&s->mu);
    if (ts.tv_sec || ts.tv_nsec)
        nanosleep(&ts, NULL);
    if (race) {
        /* the stored object lacks the label the webhook selects: this write is not sent here */
        cJSON_Delete(ksimfix_call(h, "PATCH", "/api/v1/namespaces/default/configmaps/c1",
                                  "application/merge-patch+json", "{\"data\":{\"b\":\"2\"}}",
                                  &code));
        if (code != 200)
            fprintf(stderr, "the racing write answered %ld\n", code);
    }
    return a;
}

static void setup(void)
{
    struct ksim_harness_opts o;
    struct ksim_alias alias;
    struct kerr_info err;
    char host[] = "127.0.0.1", svc[] = "hook", ns[] = "hooks";

    memset(&sc, 0, sizeof(sc));
    pthread_mutex_init(&sc.mu, NULL);
    sc.code = 403;
    cr_assert_eq(ksim_harness_hook_start("hook.hooks.svc", answer, &sc, &hk, &err), KERR_OK, "%s",
                 err.msg);
    ca_bundle = ksim_harness_hook_ca_bundle(hk);
    alias.service = svc;
    alias.namespace = ns;
    alias.host = host;
    alias.port = ksim_harness_hook_port(hk);
    memset(&o, 0, sizeof(o));
    o.aliases = &alias;
    o.naliases = 1;
    o.gc_interval_ms = 50;
    o.token_csv = "robot-token,system:serviceaccount:apps:robot,uid-1,\n"
                  "alice-token,alice,uid-2,\"devs,admins\"\n";
    h = ksimfix_start(&o);
}

static void teardown(void)
{
    ksim_harness_stop(h);
    ksim_harness_hook_stop(hk);
    cJSON_Delete(sc.last);
    free(ca_bundle);
}

TestSuite(kubesim_admission, .init = setup, .fini = teardown, .timeout = 60);

/*
 * Register a webhook configuration. kind: "Validating" or "Mutating"; rules: the JSON of the
 * rules array; extra: more fields of the webhook ("" for none); client: clientConfig fields.
 */
static void hook_config(const char *kind, const char *rules, const char *extra, const char *client)
{
    char body[8192], path[256];
    long code;
    cJSON *j;

    snprintf(
        body, sizeof(body),
        "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":\"%sWebhookConfiguration\","
        "\"metadata\":{\"name\":\"cfg\"},\"webhooks\":[{\"name\":\"check.test.io\","
        "\"admissionReviewVersions\":[\"v1\"],\"sideEffects\":\"None\",\"clientConfig\":{%s,"
        "\"caBundle\":\"%s\"},\"rules\":%s%s}]}",
        kind,
        client ? client
               : "\"service\":{\"name\":\"hook\",\"namespace\":\"hooks\",\"path\":\"/check\"}",
        ca_bundle, rules, extra);
    snprintf(path, sizeof(path), "/apis/admissionregistration.k8s.io/v1/%swebhookconfigurations",
             kind[0] == 'V' ? "validating" : "mutating");
    j = ksimfix_call(h, "POST", path, NULL, body, &code);
    cr_assert_eq(code, 201, "%s", jsonfix_str(j, "message"));
    cJSON_Delete(j);
}

static const char cm_rules[] = "[{\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"operations\":["
                               "\"CREATE\",\"UPDATE\",\"DELETE\"],\"resources\":[\"configmaps\"]}]";

static const char cm1[] =
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c1\"}}";

static void set_script(int deny, int code, const char *message, const char *patch)
{
    pthread_mutex_lock(&sc.mu);
    sc.deny = deny;
    sc.code = code;
    sc.message = message;
    sc.patch = patch;
    pthread_mutex_unlock(&sc.mu);
}

static cJSON *last_review(void)
{
    cJSON *r;

    pthread_mutex_lock(&sc.mu);
    r = cJSON_Duplicate(sc.last, 1);
    pthread_mutex_unlock(&sc.mu);
    cr_assert_not_null(r, "the webhook was not called");
    return r;
}

Test(kubesim_admission, denial_carries_the_webhook_message_and_code)
{
    char warning[256];
    long code;
    cJSON *st;

    hook_config("Validating", cm_rules, "", NULL);
    set_script(1, 403, "configmaps are not welcome", NULL);
    sc.warning = "think twice";
    st = ksimfix_call_as(h, NULL, "POST", "/api/v1/namespaces/default/configmaps", NULL, cm1, &code,
                         warning, sizeof(warning));
    cr_assert_eq(code, 403);
    cr_assert_str_eq(jsonfix_str(st, "reason"), "Forbidden");
    cr_assert_str_eq(jsonfix_str(st, "message"),
                     "admission webhook \"check.test.io\" denied the request: "
                     "configmaps are not welcome");
    cr_assert_str_eq(warning, "299 - \"think twice\"");
    cJSON_Delete(st);
    set_script(1, 200, NULL, NULL);
    st = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, cm1, &code);
    cr_assert_eq(code, 400, "a denial below 400 becomes 400");
    cr_assert_str_eq(jsonfix_str(st, "message"),
                     "admission webhook \"check.test.io\" denied the request without explanation");
    cJSON_Delete(st);
}

/*
 * kube-sim keeps its webhook connections alive between reviews, as kube-apiserver's webhook
 * client does: three writes in a row are three reviews over one TLS connection, not three
 * handshakes.
 */
Test(kubesim_admission, reviews_reuse_the_webhook_connection)
{
    static const char *const names[] = { "k1", "k2", "k3" };
    char body[256];
    long code;
    size_t i;

    hook_config("Validating", cm_rules, "", NULL);
    set_script(0, 200, NULL, NULL);
    for (i = 0; i < 3; i++) {
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"}}",
                 names[i]);
        cJSON_Delete(
            ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, body, &code));
        cr_assert_eq(code, 201, "%s", names[i]);
    }
    cr_assert_eq(ksim_harness_hook_calls(hk), 3);
    cr_assert_eq(ksim_harness_hook_connections(hk), 1, "%d connections for 3 reviews",
                 ksim_harness_hook_connections(hk));
}

Test(kubesim_admission, review_describes_the_request)
{
    long code;
    cJSON *rv;

    hook_config("Validating", cm_rules, "", NULL);
    cJSON_Delete(ksimfix_call_as(h, "alice-token", "POST", "/api/v1/namespaces/default/configmaps",
                                 NULL, cm1, &code, NULL, 0));
    cr_assert_eq(code, 201);
    rv = last_review();
    cr_assert_str_eq(jsonfix_str(rv, "apiVersion"), "admission.k8s.io/v1");
    cr_assert_str_eq(jsonfix_str(rv, "path"), "/check?timeout=10s");
    cr_assert_eq(strlen(jsonfix_str(rv, "request.uid")), 36);
    cr_assert_str_eq(jsonfix_str(rv, "request.kind.kind"), "ConfigMap");
    cr_assert_str_eq(jsonfix_str(rv, "request.resource.resource"), "configmaps");
    cr_assert_str_eq(jsonfix_str(rv, "request.operation"), "CREATE");
    cr_assert_str_eq(jsonfix_str(rv, "request.name"), "c1");
    cr_assert_str_eq(jsonfix_str(rv, "request.namespace"), "default");
    cr_assert_str_eq(jsonfix_str(rv, "request.userInfo.username"), "alice");
    cr_assert_str_eq(jsonfix_str(rv, "request.userInfo.groups.1"), "admins");
    cr_assert_str_eq(jsonfix_str(rv, "request.userInfo.groups.2"), "system:authenticated");
    cr_assert_str_eq(jsonfix_str(rv, "request.object.metadata.name"), "c1");
    cr_assert(cJSON_IsNull(kjson_get(rv, "request.oldObject")));
    cr_assert_str_eq(jsonfix_str(rv, "request.options.kind"), "CreateOptions");
    cr_assert(cJSON_IsFalse(kjson_get(rv, "request.dryRun")));
    cJSON_Delete(rv);
    cJSON_Delete(ksimfix_call_as(h, "robot-token", "DELETE",
                                 "/api/v1/namespaces/default/configmaps/c1", NULL, NULL, &code,
                                 NULL, 0));
    cr_assert_eq(code, 200);
    rv = last_review();
    cr_assert_str_eq(jsonfix_str(rv, "request.operation"), "DELETE");
    cr_assert(cJSON_IsNull(kjson_get(rv, "request.object")));
    cr_assert_str_eq(jsonfix_str(rv, "request.oldObject.metadata.name"), "c1");
    cr_assert_str_eq(jsonfix_str(rv, "request.options.kind"), "DeleteOptions");
    cr_assert_str_eq(jsonfix_str(rv, "request.userInfo.username"),
                     "system:serviceaccount:apps:robot");
    cr_assert_str_eq(jsonfix_str(rv, "request.userInfo.groups.0"), "system:serviceaccounts");
    cr_assert_str_eq(jsonfix_str(rv, "request.userInfo.groups.1"), "system:serviceaccounts:apps");
    cJSON_Delete(rv);
}

Test(kubesim_admission, mutating_patch_is_applied)
{
    long code;
    cJSON *obj;

    hook_config("Mutating", cm_rules, "", NULL);
    set_script(0, 0, NULL, "[{\"op\":\"add\",\"path\":\"/data\",\"value\":{\"added\":\"yes\"}}]");
    obj = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, cm1, &code);
    cr_assert_eq(code, 201);
    cr_assert_str_eq(jsonfix_str(obj, "data.added"), "yes");
    cJSON_Delete(obj);
    obj = ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps/c1", NULL, NULL, &code);
    cr_assert_str_eq(jsonfix_str(obj, "data.added"), "yes", "the patched object is what is stored");
    cJSON_Delete(obj);
}

static const char sts_json[] =
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"web\","
    "\"labels\":{\"app\":\"web\"}},\"spec\":{\"replicas\":2,\"selector\":{\"matchLabels\":{"
    "\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{"
    "\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}}}";

Test(kubesim_admission, scale_subresource_rules)
{
    long code;
    cJSON *rv, *st;

    cJSON_Delete(ksimfix_call(h, "POST", "/apis/apps/v1/namespaces/default/statefulsets", NULL,
                              sts_json, &code));
    hook_config("Validating",
                "[{\"apiGroups\":[\"apps\"],\"apiVersions\":[\"v1\"],\"operations\":[\"UPDATE\"],"
                "\"resources\":[\"statefulsets/scale\"]}]",
                ",\"objectSelector\":{\"matchLabels\":{\"app\":\"web\"}}", NULL);
    set_script(1, 403, "no scaling", NULL);
    st = ksimfix_call(h, "PATCH", "/apis/apps/v1/namespaces/default/statefulsets/web",
                      "application/merge-patch+json", "{\"spec\":{\"replicas\":3}}", &code);
    cr_assert_eq(code, 200, "statefulsets/scale does not match the main resource");
    cJSON_Delete(st);
    cr_assert_eq(ksim_harness_hook_calls(hk), 0);
    st = ksimfix_call(h, "PATCH", "/apis/apps/v1/namespaces/default/statefulsets/web/scale",
                      "application/merge-patch+json", "{\"spec\":{\"replicas\":5}}", &code);
    cr_assert_eq(code, 200, "the Scale has no labels: the objectSelector does not match it");
    cJSON_Delete(st);
    cr_assert_eq(ksim_harness_hook_calls(hk), 0);
    cJSON_Delete(ksimfix_call(h, "DELETE",
                              "/apis/admissionregistration.k8s.io/v1/"
                              "validatingwebhookconfigurations/cfg",
                              NULL, NULL, &code));
    hook_config("Validating",
                "[{\"apiGroups\":[\"apps\"],\"apiVersions\":[\"v1\"],\"operations\":[\"UPDATE\"],"
                "\"resources\":[\"statefulsets/scale\"]}]",
                "", NULL);
    st = ksimfix_call(h, "PATCH", "/apis/apps/v1/namespaces/default/statefulsets/web/scale",
                      "application/merge-patch+json", "{\"spec\":{\"replicas\":7}}", &code);
    cr_assert_eq(code, 403);
    cJSON_Delete(st);
    rv = last_review();
    cr_assert_str_eq(jsonfix_str(rv, "request.kind.group"), "autoscaling");
    cr_assert_str_eq(jsonfix_str(rv, "request.kind.kind"), "Scale");
    cr_assert_str_eq(jsonfix_str(rv, "request.resource.resource"), "statefulsets");
    cr_assert_str_eq(jsonfix_str(rv, "request.subResource"), "scale");
    cr_assert_eq(kjson_get(rv, "request.object.spec.replicas")->valuedouble, 7);
    cr_assert_eq(kjson_get(rv, "request.oldObject.spec.replicas")->valuedouble, 5);
    cJSON_Delete(rv);
}

Test(kubesim_admission, failure_policy)
{
    long code;
    cJSON *st;

    hook_config("Validating", cm_rules, ",\"failurePolicy\":\"Fail\"",
                "\"service\":{\"name\":\"missing\",\"namespace\":\"hooks\"}");
    st = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, cm1, &code);
    cr_assert_eq(code, 500);
    cr_assert_str_eq(jsonfix_str(st, "reason"), "InternalError");
    cr_assert_not_null(strstr(jsonfix_str(st, "message"),
                              "Internal error occurred: failed calling webhook \"check.test.io\": "
                              "failed to call webhook: Post \"https://missing.hooks.svc:443/"
                              "?timeout=10s\""),
                       "%s", jsonfix_str(st, "message"));
    cJSON_Delete(st);
    cJSON_Delete(ksimfix_call(h, "DELETE",
                              "/apis/admissionregistration.k8s.io/v1/"
                              "validatingwebhookconfigurations/cfg",
                              NULL, NULL, &code));
    hook_config("Validating", cm_rules, ",\"failurePolicy\":\"Ignore\"",
                "\"service\":{\"name\":\"missing\",\"namespace\":\"hooks\"}");
    cJSON_Delete(
        ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, cm1, &code));
    cr_assert_eq(code, 201);
}

Test(kubesim_admission, timeout_fails_the_call)
{
    struct timespec t0, t1;
    long code;
    cJSON *st;

    hook_config("Validating", cm_rules, ",\"timeoutSeconds\":1", NULL);
    pthread_mutex_lock(&sc.mu);
    sc.sleep_ms = 6000;
    pthread_mutex_unlock(&sc.mu);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, cm1, &code);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_eq(code, 500);
    cr_assert_not_null(
        strstr(jsonfix_str(st, "message"), "?timeout=1s\": context deadline exceeded"), "%s",
        jsonfix_str(st, "message"));
    /* cut at the hook's 1 s, not after its 6 s answer */
    cr_assert_lt((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, 5000);
    cJSON_Delete(st);
}

Test(kubesim_admission, namespace_selector)
{
    long code;

    cJSON_Delete(
        ksimfix_call(h, "POST", "/api/v1/namespaces", NULL,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                     "\"guarded\",\"labels\":{\"guard\":\"on\"}}}",
                     &code));
    hook_config("Validating", cm_rules,
                ",\"namespaceSelector\":{\"matchLabels\":{\"guard\":\"on\"}}", NULL);
    set_script(1, 403, "guarded", NULL);
    cJSON_Delete(
        ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, cm1, &code));
    cr_assert_eq(code, 201);
    cr_assert_eq(ksim_harness_hook_calls(hk), 0);
    cJSON_Delete(
        ksimfix_call(h, "POST", "/api/v1/namespaces/guarded/configmaps", NULL, cm1, &code));
    cr_assert_eq(code, 403);
    cr_assert_eq(ksim_harness_hook_calls(hk), 1);
}

Test(kubesim_admission, dry_run_is_flagged)
{
    long code;
    cJSON *rv;

    hook_config("Validating", cm_rules, "", NULL);
    cJSON_Delete(ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All", NULL,
                              cm1, &code));
    cr_assert_eq(code, 201);
    rv = last_review();
    cr_assert(cJSON_IsTrue(kjson_get(rv, "request.dryRun")));
    cJSON_Delete(rv);
}

Test(kubesim_admission, url_client_config)
{
    char client[256];
    long code;

    snprintf(client, sizeof(client), "\"url\":\"https://127.0.0.1:%d/by-url\"",
             ksim_harness_hook_port(hk));
    hook_config("Validating", cm_rules, "", client);
    set_script(1, 403, "by url", NULL);
    cJSON_Delete(
        ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, cm1, &code));
    cr_assert_eq(code, 403);
}

Test(kubesim_admission, kubectl_shows_the_denial)
{
    char *out = NULL, file[512], args[600], want[1024];
    FILE *f;

    cJSON_Delete(ksimfix_call(h, "POST", "/apis/apps/v1/namespaces/default/statefulsets", NULL,
                              sts_json, &(long){ 0 }));
    hook_config("Validating",
                "[{\"apiGroups\":[\"\",\"apps\"],\"apiVersions\":[\"v1\"],\"operations\":["
                "\"CREATE\",\"UPDATE\",\"DELETE\"],\"resources\":[\"configmaps\","
                "\"statefulsets\",\"statefulsets/scale\"]}]",
                "", NULL);
    set_script(1, 403, "changes from service account are disallowed", NULL);
    cr_assert_neq(ksim_harness_kubectl(h, NULL, "create configmap c1 --from-literal=a=b", &out), 0);
    cr_assert_not_null(strstr(out, "error: failed to create configmap: admission webhook "
                                   "\"check.test.io\" denied the request: changes from service "
                                   "account are disallowed"),
                       "%s", out);
    free(out);
    snprintf(file, sizeof(file), "%s/cm.json", h->dir);
    f = fopen(file, "w");
    cr_assert_not_null(f);
    fputs(cm1, f);
    fclose(f);
    snprintf(args, sizeof(args), "apply -f %s", file);
    cr_assert_neq(ksim_harness_kubectl(h, NULL, args, &out), 0);
    snprintf(want, sizeof(want),
             "Error from server (Forbidden): error when creating \"%s\": admission webhook "
             "\"check.test.io\" denied the request: changes from service account are disallowed",
             file);
    cr_assert_not_null(strstr(out, want), "%s", out);
    free(out);
    cr_assert_neq(ksim_harness_kubectl(h, NULL, "scale statefulset web --replicas=1", &out), 0);
    cr_assert_not_null(strstr(out, "Error from server (Forbidden): admission webhook "
                                   "\"check.test.io\" denied the request: changes from service "
                                   "account are disallowed"),
                       "%s", out);
    free(out);
    cr_assert_neq(ksim_harness_kubectl(h, NULL, "delete statefulset web", &out), 0);
    cr_assert_not_null(strstr(out, "Error from server (Forbidden): admission webhook "
                                   "\"check.test.io\" denied the request"),
                       "%s", out);
    free(out);
}

Test(kubesim_admission, garbage_collector_goes_through_admission)
{
    char body[1024];
    long code;
    cJSON *owner, *rv;
    int i;

    owner = ksimfix_call(
        h, "POST", "/api/v1/namespaces/default/configmaps", NULL,
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"owner\"}}", &code);
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"dep\","
             "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":"
             "\"owner\",\"uid\":\"%s\"}]}}",
             jsonfix_str(owner, "metadata.uid"));
    cJSON_Delete(
        ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, body, &code));
    hook_config("Validating",
                "[{\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"operations\":[\"DELETE\"],"
                "\"resources\":[\"configmaps\"]}]",
                "", NULL);
    cJSON_Delete(ksimfix_call(h, "DELETE", "/api/v1/namespaces/default/configmaps/owner", NULL,
                              NULL, &code));
    for (i = 0; i < 600 && ksim_harness_hook_calls(hk) < 2; i++)
        nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
    rv = last_review();
    cr_assert_str_eq(jsonfix_str(rv, "request.name"), "dep");
    cr_assert_str_eq(jsonfix_str(rv, "request.userInfo.username"),
                     "system:serviceaccount:kube-system:generic-garbage-collector");
    cJSON_Delete(rv);
    cJSON_Delete(owner);
}

Test(kubesim_admission, answers_must_echo_the_uid)
{
    long code;
    cJSON *st;

    hook_config("Validating", cm_rules, "", NULL);
    pthread_mutex_lock(&sc.mu);
    sc.bad_uid = 1;
    pthread_mutex_unlock(&sc.mu);
    st = ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, cm1, &code);
    cr_assert_eq(code, 500);
    cr_assert_not_null(strstr(jsonfix_str(st, "message"),
                              "failed calling webhook \"check.test.io\": "
                              "received invalid webhook response: expected "
                              "response.uid="),
                       "%s", jsonfix_str(st, "message"));
    cJSON_Delete(st);
}

Test(kubesim_admission, kubectl_sees_the_mutation)
{
    char *out = NULL;

    hook_config("Mutating", cm_rules, "", NULL);
    set_script(0, 0, NULL,
               "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"mutated\":\"yes\"}}]");
    cr_assert_eq(ksim_harness_kubectl(h, NULL, "create configmap m1 --from-literal=a=b", &out), 0,
                 "%s", out);
    free(out);
    cr_assert_eq(ksim_harness_kubectl(h, NULL, "get configmap m1 --show-labels", &out), 0, "%s",
                 out);
    cr_assert_not_null(strstr(out, "mutated=yes"), "%s", out);
    free(out);
}

/*
 * A PATCH without a resourceVersion that loses a race (another write lands while its
 * admission call is out) is applied again to the new object, as kube-apiserver's
 * GuaranteedUpdate does: the client sees 200 and both changes, never a 409.
 */
Test(kubesim_admission, patch_that_loses_a_race_is_retried)
{
    long code;
    cJSON *j;

    hook_config("Validating", cm_rules, ",\"objectSelector\":{\"matchLabels\":{\"race\":\"yes\"}}",
                NULL);
    set_script(0, 0, NULL, NULL);
    cJSON_Delete(
        ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, cm1, &code));
    cr_assert_eq(code, 201);
    pthread_mutex_lock(&sc.mu);
    sc.race = 1;
    pthread_mutex_unlock(&sc.mu);
    j = ksimfix_call(
        h, "PATCH", "/api/v1/namespaces/default/configmaps/c1", "application/merge-patch+json",
        "{\"metadata\":{\"labels\":{\"race\":\"yes\"}},\"data\":{\"a\":\"1\"}}", &code);
    cr_assert_eq(code, 200, "%ld: %s", code, jsonfix_str(j, "message"));
    cJSON_Delete(j);
    pthread_mutex_lock(&sc.mu);
    cr_assert_eq(sc.race, 0, "the webhook was not called");
    pthread_mutex_unlock(&sc.mu);
    j = ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps/c1", NULL, NULL, &code);
    cr_assert_str_eq(jsonfix_str(j, "data.a"), "1");
    cr_assert_str_eq(jsonfix_str(j, "data.b"), "2");
    cr_assert_str_eq(jsonfix_str(j, "metadata.labels.race"), "yes");
    cJSON_Delete(j);
}
