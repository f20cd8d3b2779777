/* kube-sim's own controllers: garbage collection, namespace deletion, StatefulSet status. */
#include "tests/kube-sim/harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/kjson.h"
#include "tests/support/jsonfix.h"
#include "tests/support/ksimfix.h"
#include "tests/kube-sim/ctrl.h"

static struct ksim_harness *h;

static void setup(void)
{
    struct ksim_harness_opts o = { .gc_interval_ms = 50, .sts_delay_ms = 300 };

    h = ksimfix_start(&o);
}

static void teardown(void)
{
    ksim_harness_stop(h);
}

TestSuite(kubesim_gc, .init = setup, .fini = teardown, .timeout = 60);

/* A ConfigMap, optionally owned by owner (a ConfigMap object) with blockOwnerDeletion. */
static cJSON *cm(const char *ns, const char *name, const cJSON *owner, int block,
                 const char *extra_meta)
{
    char body[2048], path[256], refs[1024] = "";
    long code;
    cJSON *j;

    if (owner)
        snprintf(refs, sizeof(refs),
                 ",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":"
                 "\"%s\",\"uid\":\"%s\"%s}]",
                 jsonfix_str(owner, "metadata.name"), jsonfix_str(owner, "metadata.uid"),
                 block ? ",\"blockOwnerDeletion\":true" : "");
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\"%s%s%s}}",
             name, refs, extra_meta ? "," : "", extra_meta ? extra_meta : "");
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
    j = ksimfix_call(h, "POST", path, NULL, body, &code);
    cr_assert_eq(code, 201, "%s: %s", name, jsonfix_str(j, "message"));
    return j;
}

Test(kubesim_gc, background_deletes_dependents)
{
    cJSON *owner = cm("default", "owner", NULL, 0, NULL);
    long code;

    cJSON_Delete(cm("default", "dep", owner, 0, NULL));
    cJSON_Delete(ksimfix_call(h, "DELETE", "/api/v1/namespaces/default/configmaps/owner", NULL,
                              NULL, &code));
    cr_assert_eq(code, 200);
    cr_assert(ksimfix_await_status(h, "/api/v1/namespaces/default/configmaps/dep", 404, 10000),
              "the dependent of a deleted owner is collected");
    cJSON_Delete(owner);
}

Test(kubesim_gc, dangling_references_are_resolved)
{
    char body[1024];
    cJSON *owner = cm("default", "live", NULL, 0, NULL), *dep;
    long code;
    int i;

    cJSON_Delete(
        ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL,
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                     "\"orphaned\",\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":"
                     "\"ConfigMap\",\"name\":\"gone\",\"uid\":\"6f5f0f5e-0000-4000-8000-"
                     "000000000000\"}]}}",
                     &code));
    snprintf(body, sizeof(body),
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"mixed\","
             "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":"
             "\"gone\",\"uid\":\"6f5f0f5e-0000-4000-8000-000000000000\"},{\"apiVersion\":\"v1\","
             "\"kind\":\"ConfigMap\",\"name\":\"live\",\"uid\":\"%s\"}]}}",
             jsonfix_str(owner, "metadata.uid"));
    cJSON_Delete(
        ksimfix_call(h, "POST", "/api/v1/namespaces/default/configmaps", NULL, body, &code));
    cr_assert(ksimfix_await_status(h, "/api/v1/namespaces/default/configmaps/orphaned", 404, 10000),
              "an object whose only owner does not exist is collected");
    for (i = 0; i < 1500; i++) {
        dep = ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps/mixed", NULL, NULL,
                           &code);
        cr_assert_eq(code, 200, "an object with a live owner stays");
        if (cJSON_GetArraySize(kjson_get(dep, "metadata.ownerReferences")) == 1) {
            cr_assert_str_eq(jsonfix_str(dep, "metadata.ownerReferences.0.name"), "live");
            cJSON_Delete(dep);
            break;
        }
        cJSON_Delete(dep);
        nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
    }
    cr_assert_lt(i, 1500, "the dangling reference was removed");
    cJSON_Delete(owner);
}

Test(kubesim_gc, foreground_waits_for_blocking_dependents)
{
    cJSON *owner = cm("default", "fg", NULL, 0, NULL), *o;
    long code;
    int i, deleting = 0;

    cJSON_Delete(cm("default", "blocker", owner, 1, "\"finalizers\":[\"test/hold\"]"));
    o = ksimfix_call(h, "DELETE",
                     "/api/v1/namespaces/default/configmaps/fg?propagationPolicy=Foreground", NULL,
                     NULL, &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(o, "metadata.finalizers.0"), "foregroundDeletion");
    cr_assert_neq(strlen(jsonfix_str(o, "metadata.deletionTimestamp")), 0);
    cJSON_Delete(o);
    for (i = 0; i < 600 && !deleting; i++) {
        o = ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps/blocker", NULL, NULL,
                         &code);
        cr_assert_eq(code, 200, "the finalizer keeps the dependent");
        deleting = strlen(jsonfix_str(o, "metadata.deletionTimestamp")) > 0;
        cJSON_Delete(o);
        if (!deleting)
            nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
    }
    cr_assert(deleting, "the dependent is deleted first");
    ksim_ctrl_sync(h->ctrl);
    ksim_ctrl_sync(h->ctrl);
    cr_assert_eq(ksimfix_status(h, "/api/v1/namespaces/default/configmaps/fg"), 200,
                 "the owner waits while a blocking dependent exists");
    cJSON_Delete(ksimfix_call(h, "PATCH", "/api/v1/namespaces/default/configmaps/blocker",
                              "application/merge-patch+json",
                              "{\"metadata\":{\"finalizers\":null}}", &code));
    cr_assert(ksimfix_await_status(h, "/api/v1/namespaces/default/configmaps/fg", 404, 10000));
    cJSON_Delete(owner);
}

Test(kubesim_gc, orphan_keeps_dependents)
{
    cJSON *owner = cm("default", "parent", NULL, 0, NULL), *dep;
    long code;
    int i;

    cJSON_Delete(cm("default", "child", owner, 0, NULL));
    cJSON_Delete(ksimfix_call(h, "DELETE", "/api/v1/namespaces/default/configmaps/parent", NULL,
                              "{\"propagationPolicy\":\"Orphan\"}", &code));
    cr_assert_eq(code, 200);
    cr_assert(ksimfix_await_status(h, "/api/v1/namespaces/default/configmaps/parent", 404, 10000));
    for (i = 0; i < 20; i++) {
        dep = ksimfix_call(h, "GET", "/api/v1/namespaces/default/configmaps/child", NULL, NULL,
                           &code);
        cr_assert_eq(code, 200, "an orphaned dependent stays");
        cr_assert_null(kjson_get(dep, "metadata.ownerReferences"));
        cJSON_Delete(dep);
    }
    cJSON_Delete(owner);
}

Test(kubesim_gc, namespace_deletion_empties_it)
{
    long code;
    cJSON *ns, *st;

    cJSON_Delete(
        ksimfix_call(h, "POST", "/api/v1/namespaces", NULL,
                     "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                     "\"tmp\"}}",
                     &code));
    cJSON_Delete(cm("tmp", "a", NULL, 0, NULL));
    cJSON_Delete(cm("tmp", "held", NULL, 0, "\"finalizers\":[\"test/hold\"]"));
    ns = ksimfix_call(h, "DELETE", "/api/v1/namespaces/tmp", NULL, NULL, &code);
    cr_assert_eq(code, 200);
    cr_assert_str_eq(jsonfix_str(ns, "status.phase"), "Terminating");
    cJSON_Delete(ns);
    cr_assert(ksimfix_await_status(h, "/api/v1/namespaces/tmp/configmaps/a", 404, 10000));
    st = ksimfix_call(
        h, "POST", "/api/v1/namespaces/tmp/configmaps", NULL,
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"late\"}}", &code);
    cr_assert_eq(code, 403);
    cr_assert_not_null(strstr(jsonfix_str(st, "message"), "because it is being terminated"));
    cJSON_Delete(st);
    cr_assert_eq(ksimfix_status(h, "/api/v1/namespaces/tmp"), 200, "a finalizer inside keeps it");
    cJSON_Delete(ksimfix_call(h, "PATCH", "/api/v1/namespaces/tmp/configmaps/held",
                              "application/merge-patch+json",
                              "{\"metadata\":{\"finalizers\":null}}", &code));
    cr_assert(ksimfix_await_status(h, "/api/v1/namespaces/tmp", 404, 10000));
}

Test(kubesim_gc, statefulset_status_follows_spec)
{
    const char *path = "/apis/apps/v1/namespaces/default/statefulsets/web";
    struct timespec t0, t1;
    long code, ms;
    cJSON *s = NULL;
    int i;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    cJSON_Delete(
        ksimfix_call(h, "POST", "/apis/apps/v1/namespaces/default/statefulsets", NULL,
                     "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":"
                     "\"web\"},\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"a\":"
                     "\"b\"}},\"template\":{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"spec\":{"
                     "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}}",
                     &code));
    for (i = 0; i < 1500; i++) {
        cJSON_Delete(s);
        s = ksimfix_call(h, "GET", path, NULL, NULL, &code);
        if (kjson_get(s, "status.readyReplicas") &&
            kjson_get(s, "status.readyReplicas")->valuedouble == 3)
            break;
        nanosleep(&(struct timespec){ 0, 20000000L }, NULL);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    cr_assert_lt(i, 1500, "status never followed spec");
    cr_assert_geq(ms, 250, "the status lags by the configured delay (%ld ms)", ms);
    cr_assert_eq(kjson_get(s, "status.replicas")->valuedouble, 3);
    cr_assert_eq(kjson_get(s, "status.availableReplicas")->valuedouble, 3);
    cr_assert_eq(kjson_get(s, "status.observedGeneration")->valuedouble, 1);
    /* every pod runs the template: one revision, current and update */
    cr_assert(kjson_get_str(s, "status.currentRevision") &&
              *kjson_get_str(s, "status.currentRevision"));
    cr_assert_str_eq(kjson_get_str(s, "status.currentRevision"),
                     kjson_get_str(s, "status.updateRevision"));
    cJSON_Delete(s);
    cJSON_Delete(ksimfix_call(h, "PATCH", "/apis/apps/v1/namespaces/default/statefulsets/web/scale",
                              "application/merge-patch+json", "{\"spec\":{\"replicas\":0}}",
                              &code));
    for (i = 0; i < 1500; i++) {
        s = ksimfix_call(h, "GET", path, NULL, NULL, &code);
        if (kjson_get(s, "status.replicas")->valuedouble == 0 &&
            kjson_get(s, "status.observedGeneration")->valuedouble == 2) {
            cr_assert_null(kjson_get(s, "status.readyReplicas"), "0 is left out, as in a cluster");
            cJSON_Delete(s);
            break;
        }
        cJSON_Delete(s);
        nanosleep(&(struct timespec){ 0, 20000000L }, NULL);
    }
    cr_assert_lt(i, 1500, "scaling to 0 settles");
}

Test(kubesim_gc, services_get_a_cluster_ip)
{
    long code;
    cJSON *svc, *upd;
    char *body;

    svc = ksimfix_call(h, "POST", "/api/v1/namespaces/default/services", NULL,
                       "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"},"
                       "\"spec\":{\"ports\":[{\"port\":80}]}}",
                       &code);
    cr_assert_eq(code, 201);
    cr_assert_eq(strncmp(jsonfix_str(svc, "spec.clusterIP"), "10.96.", 6), 0);
    cr_assert_str_eq(jsonfix_str(svc, "spec.clusterIPs.0"), jsonfix_str(svc, "spec.clusterIP"));
    cr_assert_eq(kjson_get(svc, "spec.ports.0.targetPort")->valuedouble, 80);
    kjson_delete(svc, "spec.clusterIP");
    kjson_delete(svc, "spec.clusterIPs");
    body = cJSON_PrintUnformatted(svc);
    upd = ksimfix_call(h, "PUT", "/api/v1/namespaces/default/services/s", NULL, body, &code);
    cr_assert_eq(code, 200);
    cr_assert_neq(strlen(jsonfix_str(upd, "spec.clusterIP")), 0, "an update keeps the clusterIP");
    free(body);
    cJSON_Delete(upd);
    cJSON_Delete(svc);
}
